//! The docs' examples are real: the format examples parse and say what the text says, and the
//! sample output in README is what the binary prints.

use std::process::Command;

use typejoin::{CheckOptions, Input, Law};

use crate::root;

fn block<'a>(text: &'a str, lang: &str) -> &'a str {
    let open = format!("```{lang}\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no {lang} block"))
        + open.len();
    let end = start + text[start..].find("```").unwrap();
    &text[start..end]
}

#[test]
fn format_examples_parse() {
    let doc = std::fs::read_to_string(root().join("docs/format.md")).unwrap();
    let policy =
        Input::parse("example.toml", block(&doc, "toml")).unwrap_or_else(|e| panic!("{e}"));
    let r = policy.check(CheckOptions::default());
    assert!(r.ok());
    let Input::Policy { policy, .. } = &policy else {
        panic!()
    };
    assert_eq!(policy.formats.len(), 1);
    assert_eq!(policy.ops.len(), 4);
    assert_eq!(policy.canonical.len(), 1);
    assert!(policy.ops.iter().any(|r| r.bool_result.is_some()));
    assert!(policy.ops.iter().any(|r| r.lowest_unsigned.is_some()));
    let table = Input::parse("example.json", block(&doc, "json")).unwrap_or_else(|e| panic!("{e}"));
    let r = table.check(CheckOptions::default());
    let a = r.law(Law::Associativity).unwrap();
    assert!(
        a.witnesses
            .iter()
            .any(|w| w.dtypes == ["int8", "uint8", "float16"]
                && w.left.as_deref() == Some("float32")
                && w.right.as_deref() == Some("float16"))
    );
}

#[test]
fn readme_sample_output_is_real() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let console = block(&readme, "console");
    let mut out = String::new();
    for args in [
        &["check", "lattices"][..],
        &["check", "observed/numpy_promote_types.json"],
        &["explain", "lattices/jax.toml", "i8", "u8"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        out += &String::from_utf8(o.stdout).unwrap();
    }
    let mut checked = 0;
    for line in console.lines() {
        if line.starts_with('$') || line.trim() == "…" || line.ends_with('…') {
            continue;
        }
        assert!(
            out.lines().any(|l| l == line),
            "README line not in the output:\n{line}"
        );
        checked += 1;
    }
    assert!(checked >= 10);
}
