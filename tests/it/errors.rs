//! Every malformed input is an error with file:line:col and a fix; never a panic.

use typejoin::Input;

use crate::{files, root};

#[test]
fn malformed_inputs_are_located_diagnostics() {
    let mut seen = 0;
    for ext in ["toml", "json"] {
        for path in files("tests/data/bad", ext) {
            let text = std::fs::read_to_string(root().join(&path)).unwrap();
            let err = Input::parse(&path, &text).expect_err(&path);
            for d in &err.diagnostics {
                assert_eq!(d.path, path);
                assert!(d.line >= 1 && d.col >= 1);
            }
            let name = path.trim_start_matches("tests/data/bad/").replace('.', "_");
            insta::assert_snapshot!(format!("bad__{name}"), err.to_string());
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} fixtures");
}

#[test]
fn unknown_extension_is_an_error() {
    let e = Input::parse("policy.yaml", "name: x").unwrap_err();
    assert_eq!(
        e.diagnostics[0].message,
        "not a policy (.toml) or an observed table (.json)"
    );
}
