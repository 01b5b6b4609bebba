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
mod nary_rule;
mod oracle;
mod plans;
mod props;
#[cfg(feature = "z3")]
mod repair;
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

/// `observed/FILE` over the dtypes the shared oracle analysed (`tests/data/oracle/
/// properties.json`): a table measured with more operands than the oracle's (NumPy's
/// `np.result_type` with the Python bool `b*`, which the oracle left out as a bool array)
/// is compared on the oracle's operands only.
pub fn load_as_oracle(file: &str) -> Input {
    let path = format!("observed/{file}");
    let input = load(&path);
    let props: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/oracle/properties.json")).unwrap(),
    )
    .unwrap();
    let want: Vec<String> = props["tables"][file]["dtypes_analysed"]
        .as_array()
        .unwrap_or_else(|| panic!("{file} is not in properties.json"))
        .iter()
        .map(|d| d.as_str().unwrap().to_string())
        .collect();
    if input.table().names == want {
        return input;
    }
    let t = input.table();
    let mut sub = typejoin::Table::new(want.clone());
    for (a, x) in want.iter().enumerate() {
        for (b, y) in want.iter().enumerate() {
            let cell = t.get(t.index_of(x).unwrap(), t.index_of(y).unwrap());
            sub.set(a, b, cell.and_then(|r| sub.index_of(t.name(r))));
        }
    }
    let text = sub.to_json(input.name(), "numpy", "oracle operands");
    Input::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"))
}
