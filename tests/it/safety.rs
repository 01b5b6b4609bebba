//! Value-level safety: the examples on JAX's policy, a user-declared format analysed
//! like the built-in one with the same parameters, the JSON shape, and a snapshot.

use std::process::Command;

use serde_json::Value;
use typejoin::{self, Class, Input};

use crate::{load, root};

fn conversions(path: &str) -> Vec<typejoin::Conversion> {
    let input = load(path);
    let Input::Policy { policy, joins, .. } = &input else {
        panic!()
    };
    typejoin::analyse(policy, &joins.table, typejoin::SafetyEngine::best())
}

fn find<'a>(cs: &'a [typejoin::Conversion], from: &str, to: &str) -> &'a typejoin::Conversion {
    cs.iter()
        .find(|c| c.from == from && c.to == to)
        .unwrap_or_else(|| panic!("{from} → {to}"))
}

fn witness(c: &typejoin::Conversion) -> (String, String) {
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

/// z3 decides every wide conversion of the shipped policies, and proves every witness of the
/// boundary search the smallest.
#[cfg(feature = "z3")]
#[test]
fn z3_decides_every_wide_conversion() {
    for path in [
        "lattices/jax.toml",
        "lattices/array-api.toml",
        "lattices/python.toml",
    ] {
        let input = load(path);
        let Input::Policy { policy, joins, .. } = &input else {
            panic!()
        };
        let proved = typejoin::analyse(policy, &joins.table, typejoin::SafetyEngine::Z3);
        let searched = typejoin::analyse(policy, &joins.table, typejoin::SafetyEngine::Search);
        for (z, s) in proved.iter().zip(&searched) {
            let wide = !matches!(
                z.decided_by,
                typejoin::Method::Enumeration | typejoin::Method::Formats
            );
            assert!(
                !wide || z.decided_by == typejoin::Method::Z3,
                "{path}: {} → {} decided by {:?}",
                z.from,
                z.to,
                z.decided_by
            );
            assert_eq!(
                (&z.from, &z.to, z.class, &z.all),
                (&s.from, &s.to, s.class, &s.all)
            );
        }
    }
}

/// Given a witness that is not the smallest, z3 finds the smallest by bisection:
/// int32 → float8_e4m3fn overflows first at 465 (464 ties to 448; 465 rounds to 480, which is
/// e4m3fn's NaN code), not at 510; and it finds a class the search did not report at all.
#[cfg(feature = "z3")]
#[test]
fn z3_minimises_a_witness() {
    use typejoin::{Source, Value};
    let num = |n: &str| match Source::named(n).unwrap() {
        Source::Float(f) => typejoin::Numeric::Float(f),
        Source::Int { bits, signed } => typejoin::Numeric::Int { bits, signed },
    };
    let int = |m: u128| Value::Finite {
        neg: false,
        mant: m,
        exp: 0,
    };
    let (from, to) = (num("int32"), num("float8_e4m3fn"));
    let nan = Value::Nan { neg: false };
    let given: typejoin::Found = [(Class::Overflow, (int(510), nan))].into();
    let proved = typejoin::prove(&from, &to, &given).unwrap();
    assert_eq!(proved[&Class::Overflow].0, int(465));
    assert_eq!(proved[&Class::PrecisionLoss].0, int(17));
    assert_eq!(proved.len(), 2);
    let (class, all, _) = typejoin::classify(&from, &to, typejoin::SafetyEngine::Z3);
    assert_eq!(class, Class::Overflow);
    assert_eq!(
        (all[1].1.value.as_str(), all[1].1.becomes.as_str()),
        ("465", "nan")
    );
}

/// The `formats` method (exact because the destination holds the source's range and
/// precision) agrees with z3 on every such pair of wide catalogue formats.
#[cfg(feature = "z3")]
#[test]
fn format_containment_agrees_with_z3() {
    use typejoin::Source;
    let names = [
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float32",
        "float64",
        "int8",
        "float16",
        "bfloat16",
        "float8_e4m3fn",
        "float8_e8m0fnu",
        "uint8",
    ];
    let num = |n: &str| match Source::named(n).unwrap() {
        Source::Float(f) => typejoin::Numeric::Float(f),
        Source::Int { bits, signed } => typejoin::Numeric::Int { bits, signed },
    };
    let mut contained = Vec::new();
    for from in &names[..6] {
        for to in &names {
            let (a, b) = (num(from), num(to));
            let (class, all, method) = typejoin::classify(&a, &b, typejoin::SafetyEngine::Search);
            if method != typejoin::Method::Formats {
                continue;
            }
            assert_eq!((class, all.len()), (Class::Exact, 0));
            let proved = typejoin::prove(&a, &b, &Default::default());
            assert_eq!(proved, Ok(Default::default()), "{from} → {to}");
            contained.push(format!("{from} → {to}"));
        }
    }
    assert_eq!(
        contained,
        [
            "int32 → int32",
            "int32 → int64",
            "int32 → float64",
            "uint32 → uint32",
            "uint32 → int64",
            "uint32 → uint64",
            "uint32 → float64",
            "int64 → int64",
            "uint64 → uint64",
            "float32 → float32",
            "float32 → float64",
            "float64 → float64",
        ]
    );
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

/// A chain of `n` declared float dtypes cycling through 7 × 11 layouts (named `t0` …).
fn declared_chain(n: usize) -> Input {
    let mut toml = String::from("name = \"declared-chain\"\ndtypes = [");
    toml += &(0..n)
        .map(|i| format!("\"t{i}\""))
        .collect::<Vec<_>>()
        .join(", ");
    toml += "]\n[promotes]\n";
    for i in 0..n - 1 {
        toml += &format!("t{i} = [\"t{}\"]\n", i + 1);
    }
    for i in 0..n {
        toml += &format!(
            "[formats.t{i}]\nkind = \"float\"\nexponent_bits = {}\nmantissa_bits = {}\n",
            2 + i % 7,
            1 + (i * 3) % 11
        );
    }
    Input::parse("declared-chain.toml", &toml).unwrap()
}

#[test]
fn lints_count_every_conversion_and_keep_only_the_examples_asked_for() {
    // 300 dtypes, 44,850 conversions, 77 layouts: classified per layout pair, not per pair
    // (by name they would be 44,850 classifications of up to 2^16 values each).
    let input = declared_chain(300);
    let Input::Policy { policy, joins, .. } = &input else {
        panic!()
    };
    let all = typejoin::analyse(policy, &joins.table, typejoin::SafetyEngine::Search);
    assert_eq!(all.len(), 300 * 299 / 2);
    let lints = typejoin::lint(policy, &joins.table, typejoin::SafetyEngine::Search, 2);
    for l in &lints {
        let of_class: Vec<&typejoin::Conversion> =
            all.iter().filter(|c| c.class == l.class).collect();
        assert_eq!(l.count, of_class.len(), "{:?}", l.class);
        assert_eq!(l.conversions.len(), 2);
        assert_eq!(
            &l.conversions.iter().collect::<Vec<_>>()[..],
            &of_class[..2]
        );
    }
    let counts: Vec<(Class, usize)> = lints.iter().map(|l| (l.class, l.count)).collect();
    assert_eq!(
        counts,
        [(Class::PrecisionLoss, 8_875), (Class::Overflow, 22_085)]
    );
    // The same layouts under other names classify alike: t80 → t81 has t3 → t4's layouts,
    // and its cached classification is what classifying t3 → t4 afresh, by name, gives.
    let find = |a: &str, b: &str| all.iter().find(|c| c.from == a && c.to == b).unwrap();
    let (t3, t4) = (
        typejoin::Numeric::of(policy, 3).unwrap(),
        typejoin::Numeric::of(policy, 4).unwrap(),
    );
    let (class, every, _) = typejoin::classify(&t3, &t4, typejoin::SafetyEngine::Search);
    assert_eq!(
        (find("t80", "t81").class, &find("t80", "t81").all),
        (class, &every)
    );
    assert_eq!(class, Class::PrecisionLoss);
}

#[cfg(feature = "z3")]
#[test]
fn the_default_check_skips_z3_above_its_size_and_says_so() {
    let input = declared_chain(typejoin::Z3_CROSS_CHECK_NODES + 1);
    let opts = typejoin::CheckConfig::with(typejoin::Engine::Both);
    let checked = typejoin::check(&input, opts).unwrap();
    assert_eq!(
        checked.warnings,
        [
            "warning: declared-chain.toml has 129 dtypes: z3's cross-check is skipped above 128 \
          (it would not finish); the exhaustive verdict stands. `--engine z3` runs it anyway."
        ]
    );
    assert_eq!(checked.report.engines, ["exhaustive"]);
    assert!(checked.report.ok());
}

/// A float converted into an integer type truncates toward zero and, outside the type's
/// range, saturates: the codec's cast (`typejoin cast`, docs/numeric-formats.md: JAX's and Rust's
/// definition; NumPy leaves it to the C cast). The class is the truncated value's: a fraction
/// dropped inside the range is precision loss (it had been called an overflow, and the
/// analysis had wrapped where the cast saturates), a negative into an unsigned type sign
/// loss, anything else outside the range an overflow.
#[test]
fn a_float_into_an_integer_type_truncates_then_saturates() {
    use typejoin::Source;
    let num = |n: &str| match Source::named(n).unwrap() {
        Source::Float(f) => typejoin::Numeric::Float(f),
        Source::Int { bits, signed } => typejoin::Numeric::Int { bits, signed },
    };
    let witnesses = |from: &str, to: &str| {
        let (class, all, _) =
            typejoin::classify(&num(from), &num(to), typejoin::SafetyEngine::Search);
        let all: Vec<(Class, String, String)> = all
            .into_iter()
            .map(|(c, w)| (c, w.value, w.becomes))
            .collect();
        (class, all)
    };
    let w = |c, v: &str, b: &str| (c, v.to_string(), b.to_string());
    let tiny = "5.960464477539063e-8";
    assert_eq!(
        witnesses("float16", "int32"),
        (
            Class::PrecisionLoss,
            vec![w(Class::PrecisionLoss, tiny, "0")]
        )
    );
    assert_eq!(
        witnesses("float16", "uint8"),
        (
            Class::SignLoss,
            vec![
                w(Class::PrecisionLoss, tiny, "0"),
                w(Class::Overflow, "256", "255"),
                w(Class::SignLoss, "-1", "0"),
            ]
        )
    );
    // The same values as the codec's cast (float16 256, -1, 128: 0x5c00, 0xbc00, 0x5800).
    use typejoin::IntTarget;
    let f16 = Source::named("float16").unwrap();
    let cast = |bits: u32, signed: bool, p: u64| {
        let t = IntTarget::Int { bits, signed };
        t.decode(t.convert(&f16, p)).display()
    };
    assert_eq!(
        [
            cast(8, false, 0x5c00),
            cast(8, false, 0xbc00),
            cast(8, true, 0x5800)
        ],
        ["255", "0", "127"]
    );
    assert_eq!(
        witnesses("float16", "int8"),
        (
            Class::Overflow,
            vec![
                w(Class::PrecisionLoss, tiny, "0"),
                w(Class::Overflow, "128", "127"),
            ]
        )
    );
}
