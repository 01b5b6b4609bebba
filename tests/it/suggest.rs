//! `typejoin suggest`: placements of a new dtype that keep every law, ranked by safety.
//! Removing bfloat16 or float16 from JAX's lattice and asking where it goes must give JAX's
//! own answer (above f*, below float32).

use std::process::Command;

use serde_json::Value;
use typejoin::{
    Input,
    suggest::{self, Options},
};

use crate::{load, root};

fn policy(path: &str) -> typejoin::Policy {
    match load(path) {
        Input::Policy { policy, .. } => *policy,
        Input::Observed(_) => panic!("{path} is a table"),
    }
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .arg("suggest")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// JAX's lattice with `dtype` taken out of the file's text: the list, its row, its edges.
fn jax_without(dtype: &str) -> typejoin::Policy {
    let text = std::fs::read_to_string(root().join("lattices/jax.toml")).unwrap();
    let quoted = format!("\"{dtype}\", ");
    let row = format!("\n{dtype} = [\"float32\"]\n");
    assert!(text.contains(&quoted) && text.contains(&row));
    let edited = text.replacen(&quoted, "", 2).replace(&row, "\n");
    match Input::parse("lattices/jax.toml", &edited).unwrap_or_else(|e| panic!("{e}")) {
        Input::Policy { policy, .. } => {
            assert!(!policy.dtypes().iter().any(|d| d == dtype));
            *policy
        }
        Input::Observed(_) => unreachable!(),
    }
}

#[test]
fn jax_without_bfloat16_or_float16_gets_its_own_placement_first() {
    for dtype in ["bfloat16", "float16"] {
        let s = suggest::suggest(&jax_without(dtype), dtype, None, Options::default()).unwrap();
        assert_eq!(s.replaced, None);
        let best = &s.placements[0];
        assert_eq!(
            (best.below.as_slice(), best.above.as_slice()),
            (&["f*".to_string()][..], &["float32".to_string()][..]),
            "{dtype}"
        );
        assert!(best.changes.is_empty());
        // Its new row is JAX's row for the dtype, entry for entry.
        let jax = load("lattices/jax.toml");
        let t = jax.table();
        let x = t.index_of(dtype).unwrap();
        let row: Vec<(String, Option<String>)> = (0..t.n())
            .filter(|&y| y != x)
            .map(|y| {
                (
                    t.name(y).to_string(),
                    t.get(x, y).map(|r| t.name(r).to_string()),
                )
            })
            .collect();
        let mut got = best.joins.clone();
        got.sort();
        let mut want = row;
        want.sort();
        assert_eq!(got, want, "{dtype}");
        // The same answer when the dtype is left in the file and re-placed.
        let again = suggest::suggest(
            &policy("lattices/jax.toml"),
            dtype,
            None,
            Options::default(),
        )
        .unwrap();
        assert_eq!(again.placements, {
            let mut p = s.placements.clone();
            p[0].current = true;
            p
        });
        assert_eq!(
            again.replaced,
            Some((vec!["f*".to_string()], vec!["float32".to_string()]))
        );
    }
}

#[test]
fn suggest_json_snapshots() {
    for dtype in ["bfloat16", "float16"] {
        let (code, out, err) = run(&[
            "lattices/jax.toml",
            "--add",
            dtype,
            "--format",
            "json",
            "--top",
            "3",
        ]);
        assert_eq!(code, Some(0), "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["dtype"], dtype);
        assert_eq!(v["placements"][0]["below"], serde_json::json!(["f*"]));
        assert_eq!(v["placements"][0]["above"], serde_json::json!(["float32"]));
        assert_eq!(v["placements"][0]["current"], true);
        insta::assert_snapshot!(format!("suggest_jax_{dtype}"), out);
    }
}

#[test]
fn suggest_text_of_the_best_bfloat16_placement() {
    let (code, out, _) = run(&["lattices/jax.toml", "--add", "bf16", "--top", "1"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().take(7).collect();
    assert_eq!(
        lines,
        [
            "bfloat16 in jax (lattices/jax.toml): 922 of 1132 placements keep every law (at most 2 dtypes below and 2 above)",
            "bfloat16 is already in jax, above f* and below float32: placed as if removed",
            "",
            "1. above f*, below float32  (its place in the policy)",
            "   score: 0 lossy edges, 0 weak types widened, 0 changed joins, 17 new undefined joins, joins 560 bits wide in all, 1 lossy edges from weak types",
            "   edges: f* → bfloat16 overflow (3.39617752923046e38 becomes inf); bfloat16 → float32 exact",
            "   lossy joins: uint16 → bfloat16 precision-loss (257 becomes 256); uint32 → bfloat16 precision-loss (257 becomes 256); uint64 → bfloat16 precision-loss (257 becomes 256); int16 → bfloat16 precision-loss (257 becomes 256); int32 → bfloat16 precision-loss (257 becomes 256); int64 → bfloat16 precision-loss (257 becomes 256); i* → bfloat16 precision-loss (257 becomes 256); c* → complex64 overflow (3.4028235677973366e38 becomes inf)",
        ]
    );
}

#[test]
fn the_search_agrees_with_the_law_checker_on_every_candidate() {
    // Unpruned, every candidate decided twice: by set algebra and by the law checker.
    let mut results = Vec::new();
    for (path, dtype, k, accepted, refused) in [
        ("lattices/python.toml", "float16", 2, 11, 4),
        ("lattices/array-api.toml", "bfloat16", 2, 215, 103),
        (
            "lattices/studies/ints-below-weak-float.toml",
            "bfloat16",
            2,
            137,
            218,
        ),
        ("lattices/jax-x32.toml", "float16", 2, 980, 3349),
        ("tests/data/lints-deny.toml", "float16", 2, 33, 7),
    ] {
        let got = suggest::cross_check(&policy(path), dtype, k).unwrap();
        results.push((path, got, (accepted, refused)));
    }
    for (path, got, want) in results {
        assert_eq!(got, want, "{path}");
    }
}

#[test]
fn a_declared_format_and_bad_requests() {
    let (code, out, err) = run(&[
        "lattices/array-api.toml",
        "--add",
        "float8_e4m3x",
        "--format-of",
        "exponent_bits=4,mantissa_bits=3,infinities=false,nan=all-ones",
        "--top",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\n1. above f*, below float32\n"), "{out}");
    assert!(
        out.contains("f* → float8_e4m3x overflow (464.00000000000006 becomes nan)"),
        "{out}"
    );

    let (code, _, err) = run(&["lattices/jax.toml", "--add", "int24"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("`int24` is not a catalogue dtype; give its format with --format-of"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "lattices/jax.toml",
        "--add",
        "x",
        "--format-of",
        "exponent_bits=4,mantissa_bits=3,nan=bogus",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown NaN encoding `bogus`"), "{err}");
    let (code, _, err) = run(&["lattices/jax.toml", "--add", "f*"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`f*` is a weak (Python scalar) type"), "{err}");
    let (code, _, err) = run(&["observed/numpy.json", "--add", "bfloat16"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("an observed table has no edges to place a dtype between"),
        "{err}"
    );
    let (code, _, err) = run(&["tests/data/not-lattice/numpy-dag.toml", "--add", "bfloat16"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("fails its laws; fix them first"), "{err}");
}
