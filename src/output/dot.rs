//! DOT diagrams of policies (`typejoin dot`): the Hasse diagram (transitive reduction) of the
//! promotion order, dtypes grouped by kind, weak types drawn distinctly, each edge styled by
//! what the conversion does to values (its safety class), a legend, and optionally the join
//! path of two dtypes highlighted. The only module that names graphviz-rust. Rendering is
//! deterministic: nodes and edges in the policy's order, no timestamps, no paths.

use graphviz_rust::dot_structures::{
    Attribute, Edge, EdgeTy, Graph, GraphAttributes, Id, Node, NodeId, Stmt, Subgraph, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::numeric::dtype::Kind;
use crate::order::lattice::Lattice;
use crate::policy::spec::Policy;
use crate::safety::{Class, Engine, Numeric, classify};

fn quoted(s: &str) -> Id {
    Id::Escaped(format!(
        "\"{}\"",
        s.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

fn attr(k: &str, v: &str) -> Attribute {
    Attribute(Id::Plain(k.to_string()), quoted(v))
}

fn node_id(name: &str) -> NodeId {
    NodeId(quoted(name), None)
}

/// The kinds present among `names`, in the catalogue's kind order: one cluster each.
fn kinds_of(names: &[String]) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = names
        .iter()
        .map(|d| crate::numeric::dtype::kind(d))
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// The clusters of a policy's nodes: one per kind and operand category (`signed`, `signed
/// @0d`), kinds in catalogue order, the plain category first.
fn groups_of(names: &[String]) -> Vec<(Kind, Option<String>)> {
    let mut groups: Vec<(Kind, Option<String>)> = names
        .iter()
        .map(|d| {
            (
                crate::numeric::dtype::kind(d),
                crate::numeric::dtype::split_category(d)
                    .1
                    .map(str::to_string),
            )
        })
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// The attributes every kind cluster has: its label and a dashed light frame.
fn cluster_style(k: Kind) -> Vec<Stmt> {
    cluster_style_labelled(kind_label(k))
}

fn cluster_style_labelled(label: &str) -> Vec<Stmt> {
    vec![
        Stmt::Attribute(attr("label", label)),
        Stmt::Attribute(attr("style", "dashed")),
        Stmt::Attribute(attr("color", "#cbd5e1")),
    ]
}

/// The covering pairs `a < b` (no `c` strictly between), in the policy's order.
pub fn hasse(lattice: &Lattice) -> Vec<(usize, usize)> {
    let n = lattice.n();
    let lt = |a: usize, b: usize| a != b && lattice.leq(a, b);
    let mut out = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if lt(a, b) && !(0..n).any(|c| lt(a, c) && lt(c, b)) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Edge style of a safety class: (colour, style, label in the legend).
fn style(class: Class) -> (&'static str, &'static str, &'static str) {
    match class {
        Class::Exact => ("#333333", "solid", "exact"),
        Class::PrecisionLoss => ("#d97706", "dashed", "precision loss"),
        Class::Overflow => ("#dc2626", "bold", "overflow"),
        Class::SignLoss => ("#7c3aed", "dotted", "sign loss"),
        Class::DropsComponent => ("#6b7280", "dashed", "drops a component"),
        Class::Unknown => ("#9ca3af", "dotted", "undecided"),
    }
}

fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "bool",
        Kind::Unsigned => "unsigned",
        Kind::Signed => "signed",
        Kind::Weak => "weak (Python scalars)",
        Kind::Float => "floats",
        Kind::SmallFloat => "small floats",
        Kind::Complex => "complex",
        Kind::Opaque => "opaque (no values)",
        Kind::Other => "declared formats",
    }
}

/// The diagram of a policy; `highlight` marks the join path of two dtypes (indices).
pub fn diagram(
    policy: &Policy,
    lattice: &Lattice,
    highlight: Option<(usize, usize)>,
    engine: Engine,
) -> Graph {
    let n = lattice.n();
    let join = highlight.and_then(|(a, b)| match lattice.join(a, b) {
        crate::order::lattice::Join::Unique(j) => Some((a, b, j)),
        _ => None,
    });
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![
            attr("rankdir", "LR"),
            attr(
                "label",
                &format!("{} — promotion lattice (Hasse diagram)", policy.name),
            ),
            attr("labelloc", "t"),
            attr("fontname", "Helvetica"),
            attr("nodesep", "0.25"),
            attr("ranksep", "0.6"),
        ])),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("shape", "box"),
            attr("style", "rounded,filled"),
            attr("fillcolor", "#f8fafc"),
            attr("fontname", "Helvetica"),
        ])),
        Stmt::GAttribute(GraphAttributes::Edge(vec![attr("arrowsize", "0.6")])),
    ];
    // One cluster per kind (and operand category), in the catalogue's kind order.
    for (k, cat) in groups_of(&policy.dtypes) {
        let mut members = match &cat {
            None => cluster_style(k),
            Some(c) => cluster_style_labelled(&format!("{} @{c}", kind_label(k))),
        };
        members.push(Stmt::Attribute(attr("fontcolor", "#64748b")));
        let in_group = |i: usize| {
            let d = &policy.dtypes[i];
            crate::numeric::dtype::kind(d) == k
                && crate::numeric::dtype::split_category(d).1 == cat.as_deref()
        };
        for i in (0..n).filter(|&i| in_group(i)) {
            let name = &policy.dtypes[i];
            let mut attrs = vec![attr("label", name)];
            if k == Kind::Weak {
                attrs.push(attr("style", "rounded,dashed,filled"));
                attrs.push(attr("fillcolor", "#fefce8"));
                attrs.push(attr("fontname", "Helvetica-Oblique"));
            }
            if let Some((a, b, j)) = join
                && (i == a || i == b || i == j)
            {
                attrs.push(attr("color", "#2563eb"));
                attrs.push(attr("penwidth", "2.5"));
                if i == j {
                    attrs.push(attr("fillcolor", "#dbeafe"));
                }
            }
            members.push(Stmt::Node(Node::new(node_id(name), attrs)));
        }
        let id = match &cat {
            None => format!("cluster_{}", format!("{k:?}").to_lowercase()),
            Some(c) => format!("cluster_{}_{c}", format!("{k:?}").to_lowercase()),
        };
        stmts.push(Stmt::Subgraph(Subgraph {
            id: Id::Plain(id),
            stmts: members,
        }));
    }
    let mut used = Vec::new();
    for (a, b) in hasse(lattice) {
        let class = match (Numeric::of(policy, a), Numeric::of(policy, b)) {
            (Some(fa), Some(fb)) => classify(&fa, &fb, engine).0,
            _ => Class::Unknown,
        };
        if !used.contains(&class) {
            used.push(class);
        }
        let (color, line, _) = style(class);
        let mut attrs = vec![attr("color", color), attr("style", line)];
        if let Some((x, y, j)) = join {
            let on_path = (lattice.leq(x, a) || lattice.leq(y, a)) && lattice.leq(b, j);
            if on_path {
                attrs = vec![attr("color", "#2563eb"), attr("penwidth", "3")];
            }
        }
        stmts.push(Stmt::Edge(Edge {
            ty: EdgeTy::Pair(
                Vertex::N(node_id(&policy.dtypes[a])),
                Vertex::N(node_id(&policy.dtypes[b])),
            ),
            attributes: attrs,
        }));
    }
    // The legend: one sample edge per class that occurs, and the highlight.
    used.sort();
    let mut legend = vec![
        Stmt::Attribute(attr("label", "edges: what the promotion does to values")),
        Stmt::Attribute(attr("style", "solid")),
        Stmt::Attribute(attr("color", "#94a3b8")),
        Stmt::Attribute(attr("fontcolor", "#334155")),
    ];
    let mut rows: Vec<(String, Vec<Attribute>)> = used
        .iter()
        .map(|c| {
            let (color, line, label) = style(*c);
            (
                label.to_string(),
                vec![attr("color", color), attr("style", line)],
            )
        })
        .collect();
    if let Some((a, b, j)) = join {
        rows.push((
            format!(
                "{} ∨ {} = {}",
                policy.dtypes[a], policy.dtypes[b], policy.dtypes[j]
            ),
            vec![attr("color", "#2563eb"), attr("penwidth", "3")],
        ));
    }
    for (k, (label, attrs)) in rows.into_iter().enumerate() {
        let (from, to) = (format!("legend {k} from"), format!("legend {k} to"));
        for id in [&from, &to] {
            legend.push(Stmt::Node(Node::new(
                node_id(id),
                vec![
                    attr("shape", "point"),
                    attr("style", "invis"),
                    attr("label", ""),
                ],
            )));
        }
        let mut attrs = attrs;
        attrs.push(attr("label", &label));
        attrs.push(attr("fontsize", "10"));
        legend.push(Stmt::Edge(Edge {
            ty: EdgeTy::Pair(Vertex::N(node_id(&from)), Vertex::N(node_id(&to))),
            attributes: attrs,
        }));
    }
    stmts.push(Stmt::Subgraph(Subgraph {
        id: Id::Plain("cluster_legend".into()),
        stmts: legend,
    }));
    Graph::DiGraph {
        id: quoted(&policy.name),
        strict: false,
        stmts,
    }
}

/// The DOT text of a diagram.
pub fn to_dot(g: &Graph) -> String {
    let mut s = g.print(&mut PrinterContext::default());
    s.push('\n');
    s
}

/// The diagram of an observed table: the order it induces (x ≤ y ⇔ x ∨ y = y), reduced to
/// its covering pairs, dtypes grouped by kind; when the table is not a lattice, the dtypes of
/// its first violations are marked red and the violations are listed in the legend.
pub fn table_diagram(name: &str, table: &crate::Table, report: &crate::Report) -> Graph {
    let n = table.n();
    let le = |x: usize, y: usize| x != y && table.get(x, y) == Some(y);
    let violations: Vec<&crate::laws::Violation> = report
        .laws
        .iter()
        .flat_map(|l| l.witnesses.iter())
        .take(4)
        .collect();
    let marked: Vec<&str> = violations
        .iter()
        .flat_map(|v| v.dtypes.iter().map(String::as_str))
        .collect();
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![
            attr("rankdir", "LR"),
            attr(
                "label",
                &format!("{name} — order induced by the table (x ≤ y ⇔ x ∨ y = y)"),
            ),
            attr("labelloc", "t"),
            attr("fontname", "Helvetica"),
        ])),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("shape", "box"),
            attr("style", "rounded,filled"),
            attr("fillcolor", "#f8fafc"),
            attr("fontname", "Helvetica"),
        ])),
    ];
    for k in kinds_of(&table.names) {
        let mut members = cluster_style(k);
        for d in table
            .names
            .iter()
            .filter(|d| crate::numeric::dtype::kind(d) == k)
        {
            let mut attrs = vec![attr("label", d)];
            if marked.contains(&d.as_str()) {
                attrs.push(attr("color", "#dc2626"));
                attrs.push(attr("penwidth", "2.5"));
            }
            members.push(Stmt::Node(Node::new(node_id(d), attrs)));
        }
        stmts.push(Stmt::Subgraph(Subgraph {
            id: Id::Plain(format!("cluster_{}", format!("{k:?}").to_lowercase())),
            stmts: members,
        }));
    }
    for x in 0..n {
        for y in 0..n {
            if le(x, y) && !(0..n).any(|z| le(x, z) && le(z, y)) {
                stmts.push(Stmt::Edge(Edge {
                    ty: EdgeTy::Pair(
                        Vertex::N(node_id(&table.names[x])),
                        Vertex::N(node_id(&table.names[y])),
                    ),
                    attributes: vec![attr("color", "#333333")],
                }));
            }
        }
    }
    if !violations.is_empty() {
        let text: Vec<String> = violations
            .iter()
            .map(|v| format!("{}: {}", v.law.key(), v.detail))
            .collect();
        stmts.push(Stmt::Node(Node::new(
            node_id("not a lattice"),
            vec![
                attr("shape", "note"),
                attr("color", "#dc2626"),
                attr("fillcolor", "#fef2f2"),
                attr("label", &format!("not a lattice\n{}", text.join("\n"))),
            ],
        )));
    }
    Graph::DiGraph {
        id: quoted(name),
        strict: false,
        stmts,
    }
}

/// DOT text with a provenance header, for committed diagrams.
pub fn with_header(dot_text: &str, source: &str) -> String {
    format!(
        "// @generated by typejoin {} — do not edit; regenerate with `typejoin dot {source} -o FILE.dot`\n{dot_text}",
        env!("CARGO_PKG_VERSION")
    )
}

/// Renders DOT text with the `dot` binary (`svg` or `png`); the error says how to install it.
pub fn render(dot_text: &str, format: &str) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut child = std::process::Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot run graphviz's `dot` ({e}); install graphviz (Debian/Ubuntu: \
                 `apt-get install graphviz`, macOS: `brew install graphviz`), or write DOT \
                 text with `-o FILE.dot`, which needs nothing"
            )
        })?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(dot_text.as_bytes())
        .map_err(|e| format!("writing to `dot`: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for `dot`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`dot -T{format}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}
