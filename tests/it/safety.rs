//! Value-level safety: the examples on JAX's policy, a user-declared format analysed
//! like the built-in one with the same parameters, the JSON shape, and a snapshot.

use std::process::Command;

use serde_json::Value;
use typejoin::Input;
use typejoin::safety::{self, Class};

use crate::{load, root};

fn conversions(path: &str) -> Vec<safety::Conversion> {
    let input = load(path);
    let Input::Policy { policy, joins, .. } = &input else {
        panic!()
    };
    safety::analyse(policy, &joins.table)
}

fn find<'a>(cs: &'a [safety::Conversion], from: &str, to: &str) -> &'a safety::Conversion {
    cs.iter()
        .find(|c| c.from == from && c.to == to)
        .unwrap_or_else(|| panic!("{from} → {to}"))
}

fn witness(c: &safety::Conversion) -> (String, String) {
    let w = c.witness.as_ref().unwrap();
    (w.value.clone(), w.becomes.clone())
}

#[test]
fn jax_examples() {
    let cs = conversions("lattices/jax.toml");
    let c = find(&cs, "int64", "float16");
    assert_eq!((c.class, c.via), (Class::Overflow, "join"));
    assert_eq!(witness(c), ("65520".into(), "inf".into()));
    let c = find(&cs, "int32", "float32");
    assert_eq!(c.class, Class::PrecisionLoss);
    assert_eq!(witness(c), ("16777217".into(), "16777216".into()));
    assert_eq!(find(&cs, "bfloat16", "float32").class, Class::Exact);
    assert_eq!(find(&cs, "bfloat16", "float32").via, "edge");
    // ml_dtypes registers uint8 → float8_e4m3fn as a "safe" cast; it is not: 17 → 16
    // (the smallest witness), and 255 → 256 as well.
    let c = find(&cs, "uint8", "float8_e4m3fn");
    assert_eq!(c.class, Class::PrecisionLoss);
    assert_eq!(witness(c), ("17".into(), "16".into()));
    // Weak types are analysed as what they materialise as (int64, float64, complex128).
    let c = find(&cs, "int64", "f*");
    assert_eq!(
        (c.class, witness(c)),
        (
            Class::PrecisionLoss,
            ("9007199254740993".into(), "9007199254740992".into())
        )
    );
    let c = find(&cs, "i*", "int8");
    assert_eq!(
        (c.class, witness(c)),
        (Class::Overflow, ("128".into(), "-128".into()))
    );
    let c = find(&cs, "f*", "float8_e4m3fn");
    assert_eq!(c.class, Class::Overflow);
    assert_eq!(find(&cs, "float32", "complex64").class, Class::Exact);
    assert!(cs.iter().all(|c| c.class != Class::Unknown));
}

#[test]
fn a_declared_format_is_analysed_like_the_builtin_one() {
    let custom = conversions("tests/data/custom-format.toml");
    let jax = conversions("lattices/jax.toml");
    for (from, to_custom, to_builtin) in [
        ("uint8", "float8_e4m3x", "float8_e4m3fn"),
        ("int8", "float8_e4m3x", "float8_e4m3fn"),
        ("bool", "float8_e4m3x", "float8_e4m3fn"),
    ] {
        let (a, b) = (find(&custom, from, to_custom), find(&jax, from, to_builtin));
        assert_eq!((a.class, &a.all), (b.class, &b.all), "{from}");
    }
    let c = find(&custom, "float8_e4m3x", "float32");
    assert_eq!((c.class, c.via), (Class::Exact, "edge"));
}

#[test]
fn json_shape_and_snapshot() {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["safety", "lattices/jax.toml", "--format", "json"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["policy"], "jax");
    let c = v["conversions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"] == "int64" && c["to"] == "float16")
        .unwrap();
    assert_eq!(c["via"], "join");
    assert_eq!(c["class"], "overflow");
    assert_eq!(
        c["witness"],
        serde_json::json!({"value": "65520", "becomes": "inf"})
    );
    let md = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["safety", "lattices/jax.toml", "--format", "markdown"])
        .current_dir(root())
        .output()
        .unwrap();
    insta::assert_snapshot!("safety__jax", String::from_utf8(md.stdout).unwrap());
}

#[test]
fn denied_lints_fail_the_check_and_allowed_ones_are_silent() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = run(&[
        "check",
        "--engine",
        "exhaustive",
        "tests/data/lints-deny.toml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("all laws hold, 1 lint denied"), "{out}");
    assert!(out.contains("error[precision-loss]: 2 promotions lose precision, e.g. int8 → float8_e4m3x (edge): 17 becomes 16"), "{out}");
    assert!(!out.contains("[overflow]"), "allowed: {out}");
    let o = run(&[
        "check",
        "--engine",
        "exhaustive",
        "--format",
        "json",
        "tests/data/lints-deny.toml",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["files"][0];
    assert_eq!(f["ok"], false);
    assert_eq!(f["lints"][0]["class"], "precision-loss");
    assert_eq!(f["lints"][0]["level"], "deny");
    assert_eq!(f["lints"][0]["count"], 2);
    assert_eq!(
        f["lints"][0]["conversions"][0]["witness"],
        serde_json::json!({"value": "17", "becomes": "16"})
    );
    // The same policy without [lints] only warns: exit 0.
    let o = run(&[
        "check",
        "--engine",
        "exhaustive",
        "tests/data/custom-format.toml",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .contains("warning[precision-loss]")
    );
}
