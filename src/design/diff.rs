//! `typejoin diff A B`: where two policies or observed tables disagree.
//!
//! Compared over the dtypes both name: every join entry (`int32 ∨ float32: float32 → float64`,
//! A's result first), counted by what changed and by the kinds of the two operands, and the
//! edges of the order each induces (a ≤ b when a ∨ b = b, or the declared order of a policy),
//! reduced to covering edges among the common dtypes. Dtypes only one side names are listed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Input;
use crate::laws::simplicity;
use crate::numeric::dtype::{self, Kind};
use crate::policy::table::Table;

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
}

impl Diff {
    pub fn same(&self) -> bool {
        self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.entries.is_empty()
            && self.edges_only_in_a.is_empty()
            && self.edges_only_in_b.is_empty()
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

/// The name a result is shown as: a policy's weak result as the dtype it materialises as
/// when `materialise` is set (a table's results are already concrete).
fn result_name(input: &Input, r: usize, materialise: bool) -> String {
    if materialise
        && let Input::Policy { policy, .. } = input
        && let Some(w) = policy.weak.iter().find(|w| w.weak == r)
    {
        return policy.dtypes[w.materialises].clone();
    }
    input.table().name(r).to_string()
}

/// Compares `a` and `b`; with `materialise`, a policy's weak results (`int8 ∨ f* = f*`)
/// compare as the dtype they materialise as (`float64`), as a library's table records them.
pub fn diff(a: &Input, b: &Input, materialise: bool) -> Diff {
    let (ta, tb) = (a.table(), b.table());
    // Each common dtype with its index in A and in B, in A's order.
    let (common, (ia, ib)): (Vec<String>, (Vec<usize>, Vec<usize>)) = ta
        .names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((n.clone(), (i, tb.index_of(n)?))))
        .unzip();
    let only = |x: &Table, y: &Table| -> Vec<String> {
        x.names
            .iter()
            .filter(|n| y.index_of(n).is_none())
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
    entries.sort_by_cached_key(|(idx, _)| simplicity(ta, idx));
    let name_edges = |input: &Input, idx: &[usize]| -> Vec<(String, String)> {
        covers(input, idx)
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
    Diff {
        a: side(a),
        b: side(b),
        only_in_a: only(ta, tb),
        only_in_b: only(tb, ta),
        entries: entries.into_iter().map(|(_, e)| e).collect(),
        compared,
        edges_only_in_a: ea.iter().filter(|e| !eb.contains(e)).cloned().collect(),
        edges_only_in_b: eb.iter().filter(|e| !ea.contains(e)).cloned().collect(),
        common,
    }
}
