//! One integration-test binary, data-driven over `lattices/`, `observed/` and `tests/data/`.

mod architecture;
mod casts;
mod categories;
mod cli;
mod codegen;
mod conformance;
mod diff;
mod docs;
mod dot;
mod errors;
mod fuzz;
mod gate;
mod hostile;
mod kernels;
mod laws;
mod oracle;
mod props;
mod safety;
#[cfg(feature = "z3")]
mod smt;
mod snapshots;
mod soundness;
mod suggest;

use std::path::{Path, PathBuf};

use typejoin::Input;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Loads a project file by its path relative to the crate root (as the CLI would show it).
pub fn load(rel: &str) -> Input {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Input::parse(rel, &text).unwrap_or_else(|e| panic!("{e}"))
}

/// Files under a project directory with an extension, sorted, as paths relative to the root.
pub fn files(dir: &str, ext: &str) -> Vec<String> {
    fn walk(p: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, ext, out);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), ext, &mut out);
    out.sort();
    out.iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}
