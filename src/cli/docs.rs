//! The `docs` command: the generated documentation of the shipped policies.

use std::path::Path;

use typejoin::{Diagnostic, LoadError};

use super::*;

/// Writes docs/lattices: a page and a diagram (DOT, and SVG when graphviz is installed) per
/// policy of `lattices` (`*.toml`, not recursing), the index, and the comparison with the
/// tables of `observed` (`*.json`); and `repair.md`, the repairs of the measured tables and the
/// lattices synthesised from `requirements` (`*.toml`).
pub(crate) fn docs(
    out: &Path,
    lattices: &Path,
    observed: &Path,
    requirements: &Path,
) -> Result<u8, LoadError> {
    let shown = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let io = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(&shown(out), format!("cannot write: {e}")))
    };
    std::fs::create_dir_all(out).map_err(io)?;
    // A missing directory has no files to document.
    let read_all = |dir: &Path, ext: &str| -> Result<Vec<(String, String)>, LoadError> {
        files_in(dir, &[ext], false)
            .unwrap_or_default()
            .iter()
            .map(|f| super::read(f).map(|t| (shown(f), t)))
            .collect()
    };
    let files = typejoin::render::pages::generate(
        &read_all(lattices, "toml")?,
        &read_all(observed, "json")?,
    )?;
    let repair = typejoin::render::pages::repair_page(
        &read_all(observed, "json")?,
        &read_all(requirements, "toml")?,
        &read_all(&lattices.join("studies"), "toml")?,
    )?;
    write_atomic(&out.join("repair.md"), &repair)?;
    println!("{}/repair.md", shown(out));
    for (name, text) in &files {
        write_atomic(&out.join(name), text)?;
        println!("{}/{name}", shown(out));
        if let Some(stem) = name.strip_suffix(".dot") {
            match typejoin::render::dot::render(text, "svg") {
                Ok(svg) => write_atomic_bytes(&out.join(format!("{stem}.svg")), &svg)?,
                Err(m) => eprintln!("warning: {stem}.svg not written: {m}"),
            }
        }
    }
    Ok(0)
}
