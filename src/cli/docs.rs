//! The `docs` command: the generated documentation of the shipped policies.

use std::path::{Path, PathBuf};

use typejoin::policy::diag::{Diagnostic, LoadError};

use super::*;

/// Writes docs/lattices: a page and a diagram (DOT, and SVG when graphviz is installed) per
/// shipped policy (`lattices/*.toml`), the index, and the comparison with `observed/` tables.
pub(crate) fn docs(out: &Path) -> Result<u8, LoadError> {
    let shown = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let io = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(&shown(out), format!("cannot write: {e}")))
    };
    let list = |dir: &str, ext: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.retain(|p| p.extension().is_some_and(|x| x == ext));
        v.sort();
        v
    };
    std::fs::create_dir_all(out).map_err(io)?;
    let read = |dir: &str, ext: &str| -> Result<Vec<(String, String)>, LoadError> {
        list(dir, ext)
            .iter()
            .map(|f| {
                std::fs::read_to_string(f)
                    .map(|t| (shown(f), t))
                    .map_err(|e| LoadError::one(Diagnostic::file(&shown(f), e.to_string())))
            })
            .collect()
    };
    let files =
        typejoin::output::pages::generate(&read("lattices", "toml")?, &read("observed", "json")?)?;
    for (name, text) in &files {
        write_atomic(&out.join(name), text)?;
        println!("{}/{name}", shown(out));
        if let Some(stem) = name.strip_suffix(".dot") {
            match typejoin::output::dot::render(text, "svg") {
                Ok(svg) => write_atomic_bytes(&out.join(format!("{stem}.svg")), &svg)?,
                Err(m) => eprintln!("warning: {stem}.svg not written: {m}"),
            }
        }
    }
    Ok(0)
}
