//! Diagrams: a DOT snapshot of every shipped policy, each accepted by graphviz's `dot -Tsvg`
//! (required in CI, where scripts/setup installs graphviz), the Hasse reduction, the highlight
//! of a join path, and the committed JAX diagram kept fresh.

use std::process::Command;

use typejoin::Input;
use typejoin::safety::Engine;

use crate::{files, load, root};

fn dot_of(path: &str, highlight: Option<(&str, &str)>) -> String {
    let Input::Policy {
        policy, lattice, ..
    } = load(path)
    else {
        panic!("{path}")
    };
    let pair = highlight.map(|(a, b)| {
        let i = |n: &str| policy.dtypes.iter().position(|d| d == n).unwrap();
        (i(a), i(b))
    });
    typejoin::dot::to_dot(&typejoin::dot::diagram(
        &policy,
        &lattice,
        pair,
        Engine::best(),
    ))
}

#[test]
fn every_shipped_policy_renders() {
    let have_dot = Command::new("dot").arg("-V").output().is_ok();
    assert!(
        have_dot || std::env::var_os("CI").is_none(),
        "CI needs graphviz's `dot` (scripts/setup installs it)"
    );
    for path in files("lattices", "toml") {
        let text = dot_of(&path, None);
        let name = path
            .trim_start_matches("lattices/")
            .replace(['/', '.'], "_");
        insta::assert_snapshot!(format!("dot__{name}"), text);
        if have_dot {
            let svg = typejoin::dot::render(&text, "svg").unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(String::from_utf8_lossy(&svg).contains("</svg>"), "{path}");
        }
    }
}

#[test]
fn edges_are_the_hasse_reduction_and_the_highlight_follows_the_join() {
    let text = dot_of("lattices/jax.toml", Some(("int8", "uint8")));
    // int8 → int16 is a covering edge; int8 → int32 is implied and not drawn.
    assert!(
        text.contains("\"int8\" -> \"int16\" [color=\"#2563eb\" penwidth=\"3\"]"),
        "{text}"
    );
    assert!(text.contains("\"uint8\" -> \"int16\" [color=\"#2563eb\" penwidth=\"3\"]"));
    assert!(!text.contains("\"int8\" -> \"int32\""));
    assert!(text.contains("label=\"int8 ∨ uint8 = int16\""));
    // Edges are styled by safety class: bfloat16 → float32 is exact, i* → int8 overflows.
    assert!(text.contains("\"bfloat16\" -> \"float32\" [color=\"#333333\" style=\"solid\"]"));
    assert!(text.contains("\"i*\" -> \"int8\" [color=\"#dc2626\" style=\"bold\"]"));
}

#[test]
fn the_committed_jax_diagram_is_fresh() {
    let want = typejoin::dot::with_header(&dot_of("lattices/jax.toml", None), "lattices/jax.toml");
    let have = std::fs::read_to_string(root().join("docs/lattices/jax.dot")).unwrap_or_default();
    assert!(
        have == want,
        "docs/lattices/jax.dot is stale: run `cargo run --release -- docs --out docs/lattices`"
    );
}

/// docs/lattices (every page, DOT diagram, the index and the comparison) is what
/// `typejoin docs --out docs/lattices` writes, and the comparison names the example.
#[test]
fn generated_docs_are_fresh() {
    let read = |dir: &str, ext: &str| -> Vec<(String, String)> {
        files(dir, ext)
            .into_iter()
            .filter(|f| f.matches('/').count() == 1)
            .map(|f| {
                let t = std::fs::read_to_string(root().join(&f)).unwrap();
                (f, t)
            })
            .collect()
    };
    let generated =
        typejoin::pages::generate(&read("lattices", "toml"), &read("observed", "json")).unwrap();
    assert_eq!(generated.len(), 5 * 2 + 2);
    for (name, want) in &generated {
        let have =
            std::fs::read_to_string(root().join("docs/lattices").join(name)).unwrap_or_default();
        assert!(
            have == *want,
            "docs/lattices/{name} is stale: run `cargo run --release -- docs --out docs/lattices`"
        );
    }
    let comparison = &generated
        .iter()
        .find(|(n, _)| n == "comparison.md")
        .unwrap()
        .1;
    let header = comparison
        .lines()
        .find(|l| l.starts_with("| a ∨ b |"))
        .unwrap();
    let cols: Vec<&str> = header.split('|').map(str::trim).collect();
    let row = comparison
        .lines()
        .find(|l| l.starts_with("| int32 ∨ float32 |"))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let at = |col: &str| cells[cols.iter().position(|c| *c == col).unwrap()];
    assert_eq!(at("jax"), "float32");
    assert_eq!(at("numpy_promote_types (measured)"), "float64");
}

/// An observed table that is not a lattice: its induced order is drawn, and NumPy's
/// int8/uint8/float16 counterexample is marked and listed.
#[test]
fn an_observed_table_draws_its_induced_order_and_violations() {
    let Input::Observed(o) = load("observed/numpy_promote_types.json") else {
        panic!()
    };
    let report = load("observed/numpy_promote_types.json").check(Default::default());
    let text = typejoin::dot::to_dot(&typejoin::dot::table_diagram(&o.name, &o.table, &report));
    assert!(
        text.contains("\"uint8\"[label=\"uint8\" color=\"#dc2626\" penwidth=\"2.5\"]"),
        "{text}"
    );
    assert!(text.contains("\"float16\"[label=\"float16\" color=\"#dc2626\""));
    assert!(text.contains("associativity: (uint8 ∨ int8) ∨ float16 = int16 ∨ float16 = float32"));
    assert!(text.contains("\"int8\" -> \"int16\""));
    if Command::new("dot").arg("-V").output().is_ok() {
        typejoin::dot::render(&text, "svg").unwrap();
    }
}
