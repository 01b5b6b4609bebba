//! The lattice laws, checked exhaustively over a join table, with witnesses.
//!
//! Two paths, same answers:
//! - **structural**: when the table is commutative, idempotent, and exactly the least-upper-bound
//!   operation of a partial order (undefined only where there is no upper bound at all),
//!   associativity, definedness-associativity and the n-ary fold follow by theorem
//!   (docs/math.md); this is O(n²·n/64) and is what makes 1,000-node lattices cheap;
//! - **brute force** over all n³ triples otherwise, which counts every violation and keeps the
//!   witnesses. [`brute_force`] is public so tests can hold the structural path to it.

use serde::Serialize;

use crate::bits::{BitMatrix, first_common, meet_subset, ones, subset};
use crate::dtype;
use crate::lattice::{Join, JoinTable, Lattice};
use crate::table::Table;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Law {
    Acyclic,
    Uniqueness,
    Existence,
    Commutativity,
    Idempotence,
    Associativity,
    DefinednessAssociativity,
    NaryFold,
    InducedOrder,
}

impl Law {
    pub const ALL: [Law; 9] = [
        Law::Acyclic,
        Law::Uniqueness,
        Law::Existence,
        Law::Commutativity,
        Law::Idempotence,
        Law::Associativity,
        Law::DefinednessAssociativity,
        Law::NaryFold,
        Law::InducedOrder,
    ];

    /// The stable identifier used in JSON, SARIF and `--law` filters.
    pub fn key(self) -> &'static str {
        match self {
            Law::Acyclic => "acyclic",
            Law::Uniqueness => "uniqueness",
            Law::Existence => "existence",
            Law::Commutativity => "commutativity",
            Law::Idempotence => "idempotence",
            Law::Associativity => "associativity",
            Law::DefinednessAssociativity => "definedness-associativity",
            Law::NaryFold => "nary-fold",
            Law::InducedOrder => "induced-order",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Law::Acyclic => "acyclic",
            Law::Uniqueness => "joins unique",
            Law::Existence => "joins exist",
            Law::Commutativity => "commutative",
            Law::Idempotence => "idempotent",
            Law::Associativity => "associative",
            Law::DefinednessAssociativity => "definedness associative",
            Law::NaryFold => "n-ary = left fold",
            Law::InducedOrder => "join of its order",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Checked exhaustively, no violation.
    Holds,
    /// Follows from the laws above it (see docs/math.md, "The structural path").
    Proved,
    /// Undefined joins, declared intended (`partial = true`, or a table's raising cells).
    Partial,
    Violated,
}

/// One broken instance of a law: the dtypes and both sides of the broken equation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub law: Law,
    pub dtypes: Vec<String>,
    pub left: Option<String>,
    pub right: Option<String>,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LawResult {
    pub law: Law,
    pub status: Status,
    /// Number of violating instances (pairs or triples); for `Partial`, undefined pairs.
    pub count: u64,
    /// Witnesses, simplest first (familiar dtypes, then narrow ones), at most
    /// `CheckOptions::max_witnesses`.
    pub witnesses: Vec<Violation>,
    pub note: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Lattice,
    Table,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub path: String,
    pub name: String,
    pub kind: InputKind,
    pub dtypes: usize,
    pub edges: Option<usize>,
    /// Unordered pairs `{a, b}`, `a ≠ b`, without a join.
    pub undefined_pairs: u64,
    pub laws: Vec<LawResult>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.laws.iter().all(|l| l.status != Status::Violated)
    }

    pub fn law(&self, law: Law) -> Option<&LawResult> {
        self.laws.iter().find(|l| l.law == law)
    }

    pub fn violated(&self) -> impl Iterator<Item = &LawResult> {
        self.laws.iter().filter(|l| l.status == Status::Violated)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// How many witnesses each law keeps (all are counted).
    pub max_witnesses: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_witnesses: 100_000,
        }
    }
}

/// Checks a lattice's laws from its join table.
pub fn check_lattice(
    path: &str,
    name: &str,
    lattice: &Lattice,
    joins: &JoinTable,
    opts: CheckOptions,
) -> Report {
    let t = &joins.table;
    let n = t.n();
    let mut laws = vec![LawResult {
        law: Law::Acyclic,
        status: Status::Holds,
        count: 0,
        witnesses: vec![],
        note: "no cycle in the promotion graph".into(),
    }];

    let mut uniq = Collector::new(Law::Uniqueness, opts);
    for (&(a, b), cands) in &joins.ambiguous {
        uniq.push([a, b, 0], 2, || {
            let names: Vec<&str> = cands.iter().map(|&c| t.name(c)).collect();
            (
                Some(cands[0]),
                cands.get(1).copied(),
                format!(
                    "{} ∨ {} is ambiguous: its minimal upper bounds {} are incomparable",
                    t.name(a),
                    t.name(b),
                    names.join(", ")
                ),
            )
        });
    }
    laws.push(uniq.finish(t, "every pair with an upper bound has a least one"));

    let mut missing = 0u64;
    let mut exist = Collector::new(Law::Existence, opts);
    for a in 0..n {
        for b in a + 1..n {
            if joins.get(a, b) == Join::NoUpperBound {
                missing += 1;
                if !lattice.partial() {
                    exist.push([a, b, 0], 2, || {
                        (
                            None,
                            None,
                            format!("{} and {} have no common upper bound", t.name(a), t.name(b)),
                        )
                    });
                }
            }
        }
    }
    let total = (n * n.saturating_sub(1) / 2) as u64;
    if lattice.partial() && missing > 0 {
        laws.push(LawResult {
            law: Law::Existence,
            status: Status::Partial,
            count: missing,
            witnesses: vec![],
            note: format!("{missing} of {total} pairs have no join (declared `partial = true`)"),
        });
    } else {
        let mut r = exist.finish(t, "every pair has a join");
        if r.status == Status::Violated {
            r.note = "set `partial = true` if these errors are intended, or add edges".into();
        }
        laws.push(r);
    }

    let structural = joins.ambiguous.is_empty();
    laws.extend(table_laws(t, structural, opts));
    Report {
        path: path.to_string(),
        name: name.to_string(),
        kind: InputKind::Lattice,
        dtypes: n,
        edges: Some(lattice.edge_count()),
        undefined_pairs: missing + joins.ambiguous.len() as u64,
        laws,
    }
}

/// Checks an observed table's laws, including whether it is the join of the order it induces.
pub fn check_table(path: &str, name: &str, t: &Table, opts: CheckOptions) -> Report {
    let n = t.n();
    let order = induced_order(t, opts);
    let structural = order.law.status == Status::Holds;
    let mut laws = Vec::new();
    let undefined = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .filter(|&(a, b)| t.get(a, b).is_none() && t.get(b, a).is_none())
        .count() as u64;
    let total = (n * n.saturating_sub(1) / 2) as u64;
    laws.push(LawResult {
        law: Law::Existence,
        status: if undefined > 0 {
            Status::Partial
        } else {
            Status::Holds
        },
        count: undefined,
        witnesses: vec![],
        note: if undefined > 0 {
            format!("{undefined} of {total} pairs raise in the library")
        } else {
            "every pair has a result".into()
        },
    });
    let mut rest = table_laws(t, structural, opts);
    rest.push(order.law);
    laws.extend(rest);
    Report {
        path: path.to_string(),
        name: name.to_string(),
        kind: InputKind::Table,
        dtypes: n,
        edges: None,
        undefined_pairs: undefined,
        laws,
    }
}

/// Commutativity and idempotence (always exhaustive), then associativity,
/// definedness-associativity and the n-ary fold: proved when `structural` (and the first two
/// hold), brute force otherwise.
fn table_laws(t: &Table, structural: bool, opts: CheckOptions) -> Vec<LawResult> {
    let n = t.n();
    let show = |x: Option<usize>| x.map_or("undefined".to_string(), |v| t.name(v).to_string());
    let mut comm = Collector::new(Law::Commutativity, opts);
    for a in 0..n {
        for b in a + 1..n {
            let (l, r) = (t.get(a, b), t.get(b, a));
            if l != r {
                comm.push([a, b, 0], 2, || {
                    (
                        l,
                        r,
                        format!(
                            "{a} ∨ {b} = {}, but {b} ∨ {a} = {}",
                            show(l),
                            show(r),
                            a = t.name(a),
                            b = t.name(b)
                        ),
                    )
                });
            }
        }
    }
    let mut idem = Collector::new(Law::Idempotence, opts);
    for a in 0..n {
        let l = t.get(a, a);
        if l != Some(a) {
            idem.push([a, 0, 0], 1, || {
                (
                    l,
                    Some(a),
                    format!("{a} ∨ {a} = {}, not {a}", show(l), a = t.name(a)),
                )
            });
        }
    }
    let comm = comm.finish(t, "a ∨ b = b ∨ a for every pair");
    let idem = idem.finish(t, "a ∨ a = a for every dtype");
    let mut out = vec![comm, idem];
    if structural && out.iter().all(|l| l.status == Status::Holds) {
        let why = "proved: the table is the join of a partial order (docs/math.md)";
        for law in [
            Law::Associativity,
            Law::DefinednessAssociativity,
            Law::NaryFold,
        ] {
            out.push(LawResult {
                law,
                status: Status::Proved,
                count: 0,
                witnesses: vec![],
                note: why.into(),
            });
        }
    } else {
        out.extend(brute_force(t, opts));
    }
    out
}

/// Associativity, definedness-associativity and the n-ary fold over all n³ triples.
pub fn brute_force(t: &Table, opts: CheckOptions) -> [LawResult; 3] {
    let n = t.n();
    let mut assoc = Collector::new(Law::Associativity, opts);
    let mut defn = Collector::new(Law::DefinednessAssociativity, opts);
    for a in 0..n {
        for b in 0..n {
            let ab = t.get(a, b);
            for c in 0..n {
                let bc = t.get(b, c);
                let l = ab.and_then(|x| t.get(x, c));
                let r = bc.and_then(|y| t.get(a, y));
                if l == r {
                    continue;
                }
                let collector = if l.is_some() && r.is_some() {
                    &mut assoc
                } else {
                    &mut defn
                };
                collector.push([a, b, c], 3, || {
                    (
                        l,
                        r,
                        format!("{}, but {}", left_side(t, a, b, c), right_side(t, a, b, c)),
                    )
                });
            }
        }
    }
    let mut nary = Collector::new(Law::NaryFold, opts);
    for a in 0..n {
        for b in a..n {
            for c in b..n {
                let perms = [
                    [a, b, c],
                    [a, c, b],
                    [b, a, c],
                    [b, c, a],
                    [c, a, b],
                    [c, b, a],
                ];
                let fold = |p: [usize; 3]| t.get(p[0], p[1]).and_then(|x| t.get(x, p[2]));
                let first = fold(perms[0]);
                if let Some(other) = perms[1..].iter().find(|&&p| fold(p) != first) {
                    let other = *other;
                    nary.push([a, b, c], 3, || {
                        let s = |x: Option<usize>| x.map_or("undefined".into(), |v| t.name(v).to_string());
                        let names = |p: [usize; 3]| {
                            p.iter().map(|&i| t.name(i)).collect::<Vec<_>>().join(", ")
                        };
                        (
                            first,
                            fold(other),
                            format!(
                                "result_type depends on operand order: the left fold over ({}) is {}, over ({}) it is {}",
                                names(perms[0]),
                                s(first),
                                names(other),
                                s(fold(other))
                            ),
                        )
                    });
                }
            }
        }
    }
    [
        assoc.finish(t, "(a ∨ b) ∨ c = a ∨ (b ∨ c) wherever both are defined"),
        defn.finish(t, "(a ∨ b) ∨ c is defined exactly when a ∨ (b ∨ c) is"),
        nary.finish(t, "every order of operands folds to the same result"),
    ]
}

fn left_side(t: &Table, a: usize, b: usize, c: usize) -> String {
    let (an, bn, cn) = (t.name(a), t.name(b), t.name(c));
    match t.get(a, b) {
        None => format!("({an} ∨ {bn}) ∨ {cn} is undefined ({an} ∨ {bn} is)"),
        Some(ab) => match t.get(ab, c) {
            None => format!("({an} ∨ {bn}) ∨ {cn} = {} ∨ {cn} is undefined", t.name(ab)),
            Some(l) => format!(
                "({an} ∨ {bn}) ∨ {cn} = {} ∨ {cn} = {}",
                t.name(ab),
                t.name(l)
            ),
        },
    }
}

fn right_side(t: &Table, a: usize, b: usize, c: usize) -> String {
    let (an, bn, cn) = (t.name(a), t.name(b), t.name(c));
    match t.get(b, c) {
        None => format!("{an} ∨ ({bn} ∨ {cn}) is undefined ({bn} ∨ {cn} is)"),
        Some(bc) => match t.get(a, bc) {
            None => format!("{an} ∨ ({bn} ∨ {cn}) = {an} ∨ {} is undefined", t.name(bc)),
            Some(r) => format!(
                "{an} ∨ ({bn} ∨ {cn}) = {an} ∨ {} = {}",
                t.name(bc),
                t.name(r)
            ),
        },
    }
}

struct InducedOrder {
    law: LawResult,
    counts: InducedCounts,
}

/// The order a table induces (`a ≤ b` iff `a ∨ b = b`), whether it is a partial order, and
/// whether the table is exactly its least-upper-bound operation, undefined only where no upper
/// bound exists. All of that holding (with commutativity and idempotence) is the structural
/// path's precondition.
fn induced_order(t: &Table, opts: CheckOptions) -> InducedOrder {
    let n = t.n();
    let mut le = BitMatrix::new(n);
    for a in 0..n {
        for b in 0..n {
            if t.get(a, b) == Some(b) {
                le.set(a, b);
            }
        }
    }
    let mut col = Collector::new(Law::InducedOrder, opts);
    let mut counts = InducedCounts::default();
    // Antisymmetry.
    for a in 0..n {
        for b in a + 1..n {
            if le.get(a, b) && le.get(b, a) {
                counts.antisymmetry += 1;
                col.push([a, b, 0], 2, || {
                    (
                        Some(b),
                        Some(a),
                        format!(
                            "not antisymmetric: {a} ∨ {b} = {b} and {b} ∨ {a} = {a}",
                            a = t.name(a),
                            b = t.name(b)
                        ),
                    )
                });
            }
        }
    }
    // Transitivity: a ≤ b and b ≤ c imply a ≤ c.
    for a in 0..n {
        for b in ones(le.row(a)).collect::<Vec<_>>() {
            if b == a || subset(le.row(b), le.row(a)) {
                continue;
            }
            for c in ones(le.row(b)) {
                if !le.get(a, c) {
                    counts.transitivity += 1;
                    col.push([a, b, c], 3, || {
                        let ac = t
                            .get(a, c)
                            .map_or("undefined".into(), |x| t.name(x).to_string());
                        (
                            t.get(a, c),
                            Some(c),
                            format!(
                                "not transitive: {a} ≤ {b} and {b} ≤ {c}, but {a} ∨ {c} = {ac}",
                                a = t.name(a),
                                b = t.name(b),
                                c = t.name(c)
                            ),
                        )
                    });
                }
            }
        }
    }
    // The table is the least upper bound of the induced order, undefined only without bounds.
    for a in 0..n {
        for b in 0..n {
            let (ra, rb) = (le.row(a), le.row(b));
            let lub = first_least(&le, ra, rb);
            let cell = t.get(a, b);
            let bounded = first_common(ra, rb).is_some();
            if cell != lub || (cell.is_none() && bounded) {
                if cell != lub {
                    counts.not_least += 1;
                } else {
                    counts.undefined_but_bounded += 1;
                }
                col.push([a, b, 0], 2, || {
                    let s =
                        |x: Option<usize>| x.map_or("undefined".into(), |v| t.name(v).to_string());
                    let what = match lub {
                        Some(l) => format!(
                            "the least upper bound of the induced order is {}",
                            t.name(l)
                        ),
                        None if bounded => {
                            "their upper bounds in the induced order have no least element".into()
                        }
                        None => "they have no upper bound in the induced order".into(),
                    };
                    (
                        cell,
                        lub,
                        format!("{} ∨ {} = {}, but {what}", t.name(a), t.name(b), s(cell)),
                    )
                });
            }
        }
    }
    let mut law = col.finish(
        t,
        "the table is exactly the join of the order a ≤ b ⇔ a ∨ b = b",
    );
    if law.status == Status::Violated {
        let mut parts = Vec::new();
        if counts.antisymmetry > 0 {
            parts.push(format!("{} antisymmetry failures", counts.antisymmetry));
        }
        if counts.transitivity > 0 {
            parts.push(format!("{} transitivity failures", counts.transitivity));
        }
        if counts.not_least > 0 {
            parts.push(format!(
                "{} cells that are not the least upper bound",
                counts.not_least
            ));
        }
        if counts.undefined_but_bounded > 0 {
            parts.push(format!(
                "{} undefined cells whose operands have upper bounds but no least one",
                counts.undefined_but_bounded
            ));
        }
        law.note = parts.join(", ");
    }
    InducedOrder { law, counts }
}

/// The parts of the induced-order law, counted separately.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InducedCounts {
    /// Unordered pairs `a ≠ b` with `a ∨ b = b` and `b ∨ a = a`.
    pub antisymmetry: u64,
    /// Ordered triples with `a ≤ b`, `b ≤ c`, but not `a ≤ c`.
    pub transitivity: u64,
    /// Ordered pairs whose cell differs from the least upper bound of the induced order
    /// (undefined where there is none).
    pub not_least: u64,
    /// Ordered pairs whose cell is undefined, and whose upper bounds exist but have no least
    /// element (a join made undefined by ambiguity, not by absence).
    pub undefined_but_bounded: u64,
}

/// Counts of the induced-order law's parts for a table.
pub fn induced_counts(t: &Table) -> InducedCounts {
    induced_order(t, CheckOptions { max_witnesses: 0 }).counts
}

/// The least element of `up(a) ∩ up(b)` under `le` (rows are upper sets), by scanning members.
fn first_least(le: &BitMatrix, ra: &[u64], rb: &[u64]) -> Option<usize> {
    let common: Vec<u64> = ra.iter().zip(rb).map(|(x, y)| x & y).collect();
    ones(&common).find(|&m| meet_subset(ra, rb, le.row(m)))
}

/// Counts violations and keeps the first `max` witnesses, then ranks them simplest first.
struct Collector {
    law: Law,
    max: usize,
    count: u64,
    raw: Vec<RawWitness>,
}

/// A witness before ranking: up to three dtype indices, both sides, and the explanation.
struct RawWitness {
    idx: [usize; 3],
    len: usize,
    left: Option<usize>,
    right: Option<usize>,
    detail: String,
}

impl Collector {
    fn new(law: Law, opts: CheckOptions) -> Collector {
        Collector {
            law,
            max: opts.max_witnesses,
            count: 0,
            raw: Vec::new(),
        }
    }

    fn push(
        &mut self,
        idx: [usize; 3],
        len: usize,
        describe: impl FnOnce() -> (Option<usize>, Option<usize>, String),
    ) {
        self.count += 1;
        if self.raw.len() < self.max {
            let (left, right, detail) = describe();
            self.raw.push(RawWitness {
                idx,
                len,
                left,
                right,
                detail,
            });
        }
    }

    fn finish(mut self, t: &Table, holds_note: &str) -> LawResult {
        let key = |idx: &[usize]| {
            let rarity: u32 = idx.iter().map(|&i| dtype::rarity(t.name(i))).sum();
            let bits: u32 = idx.iter().map(|&i| dtype::rank_bits(t.name(i))).sum();
            (rarity, bits, idx.to_vec())
        };
        self.raw.sort_by_cached_key(|w| key(&w.idx[..w.len]));
        let witnesses = self
            .raw
            .into_iter()
            .map(|w| Violation {
                law: self.law,
                dtypes: w.idx[..w.len]
                    .iter()
                    .map(|&i| t.name(i).to_string())
                    .collect(),
                left: w.left.map(|v| t.name(v).to_string()),
                right: w.right.map(|v| t.name(v).to_string()),
                detail: w.detail,
            })
            .collect();
        LawResult {
            law: self.law,
            status: if self.count == 0 {
                Status::Holds
            } else {
                Status::Violated
            },
            count: self.count,
            witnesses,
            note: if self.count == 0 {
                holds_note.to_string()
            } else {
                String::new()
            },
        }
    }
}
