//! Diagrams: a DOT snapshot of every shipped policy, each accepted by graphviz's `dot -Tsvg`
//! (required in CI, where scripts/setup installs graphviz), the Hasse reduction, the highlight
//! of a join path, and the committed JAX diagram kept fresh.

use std::process::Command;

use typejoin::{Input, SafetyEngine};

use crate::{files, load, root};

fn dot_of(path: &str, highlight: Option<(&str, &str)>) -> String {
    let Input::Policy {
        policy, lattice, ..
    } = load(path)
    else {
        panic!("{path}")
    };
    let pair = highlight.map(|(a, b)| {
        let i = |n: &str| policy.dtypes().iter().position(|d| d == n).unwrap();
        (i(a), i(b))
    });
    typejoin::render::dot::to_dot(&typejoin::render::dot::diagram(
        &policy,
        &lattice,
        pair,
        SafetyEngine::best(),
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
            let svg = typejoin::render::dot::render(&text, "svg")
                .unwrap_or_else(|e| panic!("{path}: {e}"));
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
    let want =
        typejoin::render::dot::with_header(&dot_of("lattices/jax.toml", None), "lattices/jax.toml");
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
        typejoin::render::pages::generate(&read("lattices", "toml"), &read("observed", "json"))
            .unwrap();
    // A page and a DOT per shipped policy (studies excluded), the index, comparison, ops,
    // conventions.
    assert_eq!(generated.len(), 8 * 2 + 4);
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
    let text = typejoin::render::dot::to_dot(&typejoin::render::dot::table_diagram(
        &o.name, &o.table, &report,
    ));
    assert!(
        text.contains("\"uint8\"[label=\"uint8\" color=\"#dc2626\" penwidth=\"2.5\"]"),
        "{text}"
    );
    assert!(text.contains("\"float16\"[label=\"float16\" color=\"#dc2626\""));
    assert!(text.contains("associativity: (uint8 ∨ int8) ∨ float16 = int16 ∨ float16 = float32"));
    assert!(text.contains("\"int8\" -> \"int16\""));
    if Command::new("dot").arg("-V").output().is_ok() {
        typejoin::render::dot::render(&text, "svg").unwrap();
    }
}

/// The graph, cluster, node and edge names of a DOT text, as graphviz writes them into the
/// `<title>` elements of its SVG.
fn dot_titles(dot: &str) -> std::collections::BTreeSet<String> {
    let mut titles = std::collections::BTreeSet::new();
    let quoted = |s: &str| -> Vec<String> {
        s.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    for line in dot.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("digraph ") {
            titles.insert(quoted(rest)[0].clone());
        } else if let Some(rest) = line.strip_prefix("subgraph ") {
            titles.insert(rest.trim_end_matches(" {").to_string());
        } else if line.starts_with('"') {
            let head = line.split('[').next().unwrap();
            let names = quoted(head);
            if head.contains("->") {
                titles.insert(format!("{}->{}", names[0], names[1]));
            } else if !line.contains("style=\"invis\"") {
                // graphviz writes no element for an invisible node.
                titles.extend(names);
            }
        }
    }
    titles
}

fn svg_titles(svg: &str) -> std::collections::BTreeSet<String> {
    svg.split("<title>")
        .skip(1)
        .map(|t| {
            t.split("</title>")
                .next()
                .unwrap()
                .replace("&#45;", "-")
                .replace("&gt;", ">")
                .replace("&lt;", "<")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        })
        .collect()
}

/// SVG bytes depend on the graphviz version, so the committed SVGs are not compared byte for
/// byte; instead each must draw exactly the graph of its fresh DOT (every cluster, node and
/// edge, nothing else), and the JAX PNG must be the size of the JAX SVG at 96 dpi.
#[test]
fn committed_svgs_draw_their_fresh_dot() {
    for dot_path in crate::files("docs/lattices", "dot") {
        let dot = std::fs::read_to_string(root().join(&dot_path)).unwrap();
        let svg_path = dot_path.replace(".dot", ".svg");
        let svg = std::fs::read_to_string(root().join(&svg_path))
            .unwrap_or_else(|e| panic!("{svg_path}: {e}"));
        assert_eq!(
            svg_titles(&svg),
            dot_titles(&dot),
            "{svg_path} does not draw {dot_path}: run `cargo run --release -- docs --out docs/lattices`"
        );
    }
    let svg = std::fs::read_to_string(root().join("docs/lattices/jax.svg")).unwrap();
    let pt = |key: &str| -> f64 {
        let at = svg.find(&format!("{key}=\"")).unwrap() + key.len() + 2;
        svg[at..].split("pt").next().unwrap().parse().unwrap()
    };
    let png = std::fs::read(root().join("docs/lattices/jax.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as f64;
    assert!((dim(16) - pt("width") * 96.0 / 72.0).abs() <= 1.0);
    assert!((dim(20) - pt("height") * 96.0 / 72.0).abs() <= 1.0);
}
