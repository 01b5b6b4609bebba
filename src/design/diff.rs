//! `typejoin diff A B`: where two policies or observed tables disagree.
//!
//! Compared over the dtypes both name: every join entry (`int32 ∨ float32: float32 → float64`,
//! A's result first), counted by what changed and by the kinds of the two operands, and the
//! edges of the order each induces (a ≤ b when a ∨ b = b, or the declared order of a policy),
//! reduced to covering edges among the common dtypes. Dtypes only one side names are listed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Input;
use crate::numeric::dtype::{self, Kind};

/// A's and B's result for one ordered pair.
type Verdict = (Option<String>, Option<String>);

/// How an entry differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Both define the join, differently.
    Changed,
    /// Only A defines it (B raises / has no join).
    OnlyA,
    /// Only B defines it.
    OnlyB,
}

impl Change {
    pub fn key(self) -> &'static str {
        match self {
            Change::Changed => "changed",
            Change::OnlyA => "only-a",
            Change::OnlyB => "only-b",
        }
    }
}

/// One disagreeing entry `a ∨ b` (also `b ∨ a`, unless a table is not commutative there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub a: String,
    pub b: String,
    /// A's result (`None`: undefined).
    pub left: Option<String>,
    /// B's result.
    pub right: Option<String>,
    pub change: Change,
    /// Whether only this operand order differs (a table that is not commutative).
    pub ordered: bool,
}

/// One side of a diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    pub name: String,
    pub path: String,
    pub dtypes: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub a: Side,
    pub b: Side,
    pub common: Vec<String>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// Disagreeing entries, simplest dtypes first.
    pub entries: Vec<Entry>,
    /// Entries compared (unordered pairs of common dtypes, the diagonal included).
    pub compared: usize,
    /// Covering edges among the common dtypes present in A's order and not B's.
    pub edges_only_in_a: Vec<(String, String)>,
    pub edges_only_in_b: Vec<(String, String)>,
    /// Measured triples (of a table with `triples`) compared with the other side's n-ary
    /// result, and those that differ, simplest first.
    pub triples_compared: usize,
    pub triples: Vec<TripleEntry>,
}

/// One n-ary result of three operands on which A and B disagree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TripleEntry {
    pub operands: Vec<String>,
    pub left: Option<String>,
    pub right: Option<String>,
}

impl Diff {
    pub fn same(&self) -> bool {
        self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.entries.is_empty()
            && self.edges_only_in_a.is_empty()
            && self.edges_only_in_b.is_empty()
            && self.triples.is_empty()
    }

    /// Disagreeing entries by kind of change.
    pub fn by_change(&self) -> BTreeMap<Change, usize> {
        let mut m = BTreeMap::new();
        for e in &self.entries {
            *m.entry(e.change).or_default() += 1;
        }
        m
    }

    /// Disagreeing entries by the kinds of their operands (`signed ∨ float`).
    pub fn by_kinds(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for e in &self.entries {
            let (ka, kb) = (dtype::kind(&e.a), dtype::kind(&e.b));
            let (lo, hi) = if ka <= kb { (ka, kb) } else { (kb, ka) };
            *m.entry(format!("{} ∨ {}", kind_label(lo), kind_label(hi)))
                .or_default() += 1;
        }
        m
    }
}

pub fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "bool",
        Kind::Unsigned => "unsigned",
        Kind::Signed => "signed",
        Kind::Weak => "weak",
        Kind::Float => "float",
        Kind::SmallFloat => "small float",
        Kind::Complex => "complex",
        Kind::Opaque => "opaque",
        Kind::Other => "other",
    }
}

/// `a ≤ b` in the order of an input: the declared order of a policy, the induced order
/// (`a ∨ b = b`) of a table.
fn leq(input: &Input, a: usize, b: usize) -> bool {
    match input {
        Input::Policy { lattice, .. } => lattice.leq(a, b),
        Input::Observed(o) => o.table.get(a, b) == Some(b),
    }
}

/// Covering edges of an input's order restricted to `common` (indices into its table).
fn covers(input: &Input, common: &[usize]) -> Vec<(usize, usize)> {
    let lt = |x: usize, y: usize| x != y && leq(input, x, y) && !leq(input, y, x);
    let mut out = Vec::new();
    for (i, &x) in common.iter().enumerate() {
        for (j, &y) in common.iter().enumerate() {
            if lt(x, y) && !common.iter().any(|&z| lt(x, z) && lt(z, y)) {
                out.push((i, j));
            }
        }
    }
    out
}

/// The name a result is shown as: with `materialise`, the dtype a library returns for it (a
/// policy's weak or category node as its dtype, a lifted table's node as measured).
fn result_name(input: &Input, r: usize, materialise: bool) -> String {
    if materialise {
        return input.materialise(r).to_string();
    }
    input.table().name(r).to_string()
}

/// The index of a name in an input: its own, or (for a policy) the node it is an alias of.
fn index_in(input: &Input, name: &str) -> Option<usize> {
    input.table().index_of(name).or_else(|| match input {
        Input::Policy { policy, .. } => policy.node(name),
        Input::Observed(_) => None,
    })
}

/// Compares `a` and `b`; with `materialise`, results compare as the dtype the library returns
/// (a policy's `int8 ∨ f* = f*` as `float64`, `int8@0d` as `int8`), as a library's table
/// records them. A name one side has as an alias (`bool@0d` in PyTorch's policy) is compared
/// through the node it denotes; measured triples are compared with the other side's n-ary
/// result.
pub fn diff(a: &Input, b: &Input, materialise: bool) -> Diff {
    let (ta, tb) = (a.table(), b.table());
    // Each common dtype with its index in A and in B, in A's order, then B's names that are
    // aliases in A.
    let (mut common, (mut ia, mut ib)): (Vec<String>, (Vec<usize>, Vec<usize>)) = ta
        .names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((n.clone(), (i, index_in(b, n)?))))
        .unzip();
    // Names that are aliases on one side take part in the entries, not in the edges.
    let canonical = common.len();
    for (j, n) in tb.names.iter().enumerate() {
        if ta.index_of(n).is_none()
            && let Some(i) = index_in(a, n)
        {
            common.push(n.clone());
            ia.push(i);
            ib.push(j);
        }
    }
    let only = |x: &Input, y: &Input| -> Vec<String> {
        x.table()
            .names
            .iter()
            .filter(|n| index_in(y, n).is_none())
            .cloned()
            .collect()
    };
    let result =
        |i: &Input, x: usize, y: usize| i.table().get(x, y).map(|r| result_name(i, r, materialise));
    let mut entries: Vec<(Vec<usize>, Entry)> = Vec::new();
    let mut compared = 0;
    for i in 0..common.len() {
        for j in i..common.len() {
            compared += 1;
            let verdict = |x: usize, y: usize| (result(a, ia[x], ia[y]), result(b, ib[x], ib[y]));
            let forward = verdict(i, j);
            let backward = verdict(j, i);
            // Both orders agree (always for a policy): one entry; else each order alone.
            let orders: Vec<((usize, usize), Verdict)> = if forward == backward {
                vec![((i, j), forward)]
            } else {
                vec![((i, j), forward), ((j, i), backward)]
            };
            let ordered = orders.len() == 2;
            for ((x, y), (l, r)) in orders {
                let change = match (&l, &r) {
                    _ if l == r => continue,
                    (Some(_), Some(_)) => Change::Changed,
                    (Some(_), None) => Change::OnlyA,
                    _ => Change::OnlyB,
                };
                entries.push((
                    vec![ia[x], ia[y]],
                    Entry {
                        a: common[x].clone(),
                        b: common[y].clone(),
                        left: l,
                        right: r,
                        change,
                        ordered,
                    },
                ));
            }
        }
    }
    let rank = crate::numeric::dtype::Simplicity::of(ta.names());
    entries.sort_by_cached_key(|(idx, _)| rank.key(idx));
    let name_edges = |input: &Input, idx: &[usize]| -> Vec<(String, String)> {
        covers(input, &idx[..canonical])
            .into_iter()
            .map(|(x, y)| (common[x].clone(), common[y].clone()))
            .collect()
    };
    let (ea, eb) = (name_edges(a, &ia), name_edges(b, &ib));
    let side = |i: &Input| Side {
        name: i.name().to_string(),
        path: i.path().to_string(),
        dtypes: i.table().n(),
    };
    let (triples_compared, triples) = triples(a, b);
    Diff {
        a: side(a),
        b: side(b),
        only_in_a: only(a, b),
        only_in_b: only(b, a),
        triples_compared,
        triples,
        entries: entries.into_iter().map(|(_, e)| e).collect(),
        compared,
        edges_only_in_a: ea.iter().filter(|e| !eb.contains(e)).cloned().collect(),
        edges_only_in_b: eb.iter().filter(|e| !ea.contains(e)).cloned().collect(),
        common,
    }
}

/// The measured triples of either side (a table's `triples`) against the other's n-ary result
/// over the operands both name.
fn triples(a: &Input, b: &Input) -> (usize, Vec<TripleEntry>) {
    let (measured, other, measured_is_a) = match (a, b) {
        (_, Input::Observed(o)) if !o.triples.is_empty() => (o, a, false),
        (Input::Observed(o), _) if !o.triples.is_empty() => (o, b, true),
        _ => return (0, Vec::new()),
    };
    let measured_input = if measured_is_a { a } else { b };
    let mut compared = 0;
    let mut out = Vec::new();
    for t in &measured.triples {
        let names: Vec<&str> = t.operands.iter().map(|&i| measured.table.name(i)).collect();
        let Some(idx) = names
            .iter()
            .map(|n| index_in(other, n))
            .collect::<Option<Vec<usize>>>()
        else {
            continue;
        };
        compared += 1;
        // A materialised table's triple is the dtype the library returned; another table's is
        // a node.
        let theirs = other
            .result_type(&idx)
            .map(|r| result_name(other, r, measured.materialised.is_some()));
        let ours = t.result.map(|r| measured_input.table().name(r).to_string());
        if theirs != ours {
            let (left, right) = if measured_is_a {
                (ours, theirs)
            } else {
                (theirs, ours)
            };
            out.push((
                t.operands,
                TripleEntry {
                    operands: names.iter().map(|n| n.to_string()).collect(),
                    left,
                    right,
                },
            ));
        }
    }
    let rank = crate::numeric::dtype::Simplicity::of(measured_input.table().names());
    out.sort_by_cached_key(|(idx, _)| rank.key(idx));
    (compared, out.into_iter().map(|(_, e)| e).collect())
}
