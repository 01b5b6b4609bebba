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

use crate::numeric::dtype;
use crate::order::bits::{BitMatrix, first_common, meet_subset, ones, subset};
use crate::order::input::Input;
use crate::order::lattice::{Join, JoinTable, Lattice};
use crate::policy::table::Table;

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
    /// The solver gave up (timeout or resource limit): neither a pass nor a failure.
    Unknown,
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
    /// Whether `count` is every instance (false when a solver enumerated only some).
    pub exact: bool,
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
    /// Which verifiers produced (and agree on) this report: `exhaustive`, `z3`.
    pub engines: Vec<&'static str>,
}

impl Report {
    /// Every law holds (or is partial by declaration) and no law is undecided. A policy's
    /// lints are not laws: `check::Checked::ok` adds them.
    pub fn ok(&self) -> bool {
        self.laws
            .iter()
            .all(|l| !matches!(l.status, Status::Violated | Status::Unknown))
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
    /// How many of the kept witnesses, simplest first, the report describes (`LawResult::
    /// witnesses`); the rest are ranked and counted only. `check` describes what it shows:
    /// PyTorch's operand categories keep 10,000 witnesses and show 3.
    pub described: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_witnesses: 100_000,
            described: usize::MAX,
        }
    }
}

impl Input {
    /// The exhaustive law check of a policy's lattice or an observed table.
    pub fn check(&self, opts: CheckOptions) -> Report {
        match self {
            Input::Policy {
                policy,
                lattice,
                joins,
            } => check_lattice(&policy.path, &policy.name, lattice, joins, opts),
            Input::Observed(o) => check_table(&o.path, &o.name, &o.table, opts),
        }
    }
}

/// One concrete check behind a law: what a witness is and how it is explained.
/// Several checks can make up one law (`InducedOrder` has three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// `(a, b)`, `a < b`: several incomparable minimal upper bounds.
    Uniqueness,
    /// `(a, b)`, `a < b`: no common upper bound (and the policy is not partial).
    Existence,
    /// `(a, b)`, `a < b`: `a ∨ b ≠ b ∨ a`.
    Commutativity,
    /// `(a)`: `a ∨ a ≠ a`.
    Idempotence,
    /// `(a, b, c)`: both association orders defined and different.
    Associativity,
    /// `(a, b, c)`: exactly one association order defined.
    DefinednessAssociativity,
    /// `(a, b, c)`, `a ≤ b ≤ c`: the six left folds do not all agree.
    NaryFold,
    /// `(a, b)`, `a < b`: `a ∨ b = b` and `b ∨ a = a`.
    Antisymmetry,
    /// `(a, b, c)`: `a ≤ b ≤ c` in the induced order but not `a ≤ c`.
    Transitivity,
    /// `(a, b)`: the cell is not a least upper bound of the induced order, or is undefined
    /// although upper bounds exist.
    NotLeast,
}

impl Check {
    pub fn law(self) -> Law {
        match self {
            Check::Uniqueness => Law::Uniqueness,
            Check::Existence => Law::Existence,
            Check::Commutativity => Law::Commutativity,
            Check::Idempotence => Law::Idempotence,
            Check::Associativity => Law::Associativity,
            Check::DefinednessAssociativity => Law::DefinednessAssociativity,
            Check::NaryFold => Law::NaryFold,
            Check::Antisymmetry | Check::Transitivity | Check::NotLeast => Law::InducedOrder,
        }
    }

    /// How many dtypes a witness names.
    pub fn arity(self) -> usize {
        match self {
            Check::Idempotence => 1,
            Check::Associativity
            | Check::DefinednessAssociativity
            | Check::NaryFold
            | Check::Transitivity => 3,
            _ => 2,
        }
    }

    /// The checks making up each law, for a lattice (with `partial`) or a table.
    pub fn for_input(kind: InputKind, partial: bool) -> Vec<Check> {
        let mut v = match kind {
            InputKind::Lattice if partial => vec![Check::Uniqueness],
            InputKind::Lattice => vec![Check::Uniqueness, Check::Existence],
            InputKind::Table => vec![],
        };
        v.extend([
            Check::Commutativity,
            Check::Idempotence,
            Check::Associativity,
            Check::DefinednessAssociativity,
            Check::NaryFold,
        ]);
        if kind == InputKind::Table {
            v.extend([Check::Antisymmetry, Check::Transitivity, Check::NotLeast]);
        }
        v
    }
}

/// What `describe` needs: the table, and for a lattice its ambiguous joins.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub table: &'a Table,
    pub joins: Option<&'a JoinTable>,
}

type Described = (Option<usize>, Option<usize>, String);

/// Re-evaluates `check` at `idx` on the table: `Some((left, right, explanation))` when it is a
/// violation, `None` when it is not. Every witness, from either engine, goes through here.
pub fn describe(check: Check, ctx: Ctx, idx: &[usize]) -> Option<Described> {
    let t = ctx.table;
    let n = t.n();
    if idx.len() != check.arity() || idx.iter().any(|&i| i >= n) {
        return None;
    }
    let show = |x: Option<usize>| x.map_or("undefined".to_string(), |v| t.name(v).to_string());
    let le = |a: usize, b: usize| t.get(a, b) == Some(b);
    match check {
        Check::Uniqueness | Check::Existence => {
            let (a, b) = (idx[0], idx[1]);
            if a >= b {
                return None;
            }
            let joins = ctx.joins?;
            match (check, joins.get(a, b)) {
                (Check::Uniqueness, Join::Ambiguous(c)) => {
                    let names: Vec<&str> = c.iter().map(|&x| t.name(x)).collect();
                    Some((
                        Some(c[0]),
                        c.get(1).copied(),
                        format!(
                            "{} ∨ {} is ambiguous: its minimal upper bounds {} are incomparable",
                            t.name(a),
                            t.name(b),
                            names.join(", ")
                        ),
                    ))
                }
                (Check::Existence, Join::NoUpperBound) => Some((
                    None,
                    None,
                    format!("{} and {} have no common upper bound", t.name(a), t.name(b)),
                )),
                _ => None,
            }
        }
        Check::Commutativity => {
            let (a, b) = (idx[0], idx[1]);
            let (l, r) = (t.get(a, b), t.get(b, a));
            (a < b && l != r).then(|| {
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
            })
        }
        Check::Idempotence => {
            let a = idx[0];
            let l = t.get(a, a);
            (l != Some(a)).then(|| {
                (
                    l,
                    Some(a),
                    format!("{a} ∨ {a} = {}, not {a}", show(l), a = t.name(a)),
                )
            })
        }
        Check::Associativity | Check::DefinednessAssociativity => {
            let (a, b, c) = (idx[0], idx[1], idx[2]);
            let l = t.get(a, b).and_then(|x| t.get(x, c));
            let r = t.get(b, c).and_then(|y| t.get(a, y));
            let hit = match check {
                Check::Associativity => l.is_some() && r.is_some() && l != r,
                _ => l.is_some() != r.is_some(),
            };
            hit.then(|| {
                (
                    l,
                    r,
                    format!("{}, but {}", left_side(t, a, b, c), right_side(t, a, b, c)),
                )
            })
        }
        Check::NaryFold => {
            let (a, b, c) = (idx[0], idx[1], idx[2]);
            if !(a <= b && b <= c) {
                return None;
            }
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
            let other = *perms[1..].iter().find(|&&p| fold(p) != first)?;
            let names = |p: [usize; 3]| p.iter().map(|&i| t.name(i)).collect::<Vec<_>>().join(", ");
            Some((
                first,
                fold(other),
                format!(
                    "result_type depends on operand order: the left fold over ({}) is {}, over ({}) it is {}",
                    names(perms[0]),
                    show(first),
                    names(other),
                    show(fold(other))
                ),
            ))
        }
        Check::Antisymmetry => {
            let (a, b) = (idx[0], idx[1]);
            (a < b && le(a, b) && le(b, a)).then(|| {
                (
                    Some(b),
                    Some(a),
                    format!(
                        "not antisymmetric: {a} ∨ {b} = {b} and {b} ∨ {a} = {a}",
                        a = t.name(a),
                        b = t.name(b)
                    ),
                )
            })
        }
        Check::Transitivity => {
            let (a, b, c) = (idx[0], idx[1], idx[2]);
            (le(a, b) && le(b, c) && !le(a, c)).then(|| {
                (
                    t.get(a, c),
                    Some(c),
                    format!(
                        "not transitive: {a} ≤ {b} and {b} ≤ {c}, but {a} ∨ {c} = {}",
                        show(t.get(a, c)),
                        a = t.name(a),
                        b = t.name(b),
                        c = t.name(c)
                    ),
                )
            })
        }
        Check::NotLeast => {
            let (a, b) = (idx[0], idx[1]);
            let common: Vec<usize> = (0..n).filter(|&x| le(a, x) && le(b, x)).collect();
            let is_least = |m: usize| le(a, m) && le(b, m) && common.iter().all(|&x| le(m, x));
            let least = common.iter().copied().find(|&m| is_least(m));
            let cell = t.get(a, b);
            let ok = match cell {
                Some(m) => is_least(m),
                None => common.is_empty(),
            };
            if ok {
                return None;
            }
            let what = match least {
                Some(l) => format!(
                    "the least upper bound of the induced order is {}",
                    t.name(l)
                ),
                None if !common.is_empty() => {
                    "their upper bounds in the induced order have no least element".into()
                }
                None => "they have no upper bound in the induced order".into(),
            };
            Some((
                cell,
                least,
                format!("{} ∨ {} = {}, but {what}", t.name(a), t.name(b), show(cell)),
            ))
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
    let ctx = Ctx {
        table: t,
        joins: Some(joins),
    };
    let mut laws = vec![LawResult {
        law: Law::Acyclic,
        status: Status::Holds,
        count: 0,
        exact: true,
        witnesses: vec![],
        note: "no cycle in the promotion graph".into(),
    }];

    let mut uniq = Collector::new(Check::Uniqueness, opts);
    for (a, b) in joins.ambiguous.pairs() {
        uniq.push(&[a, b]);
    }
    laws.push(uniq.finish(ctx, "every pair with an upper bound has a least one"));

    let mut exist = Collector::new(Check::Existence, opts);
    for a in 0..n {
        for b in a + 1..n {
            if t.get(a, b).is_none() && !joins.ambiguous.contains(a, b) {
                exist.push(&[a, b]);
            }
        }
    }
    let missing = exist.count;
    let total = (n * n.saturating_sub(1) / 2) as u64;
    if lattice.partial() && missing > 0 {
        laws.push(LawResult {
            law: Law::Existence,
            status: Status::Partial,
            count: missing,
            exact: true,
            witnesses: vec![],
            note: format!("{missing} of {total} pairs have no join (declared `partial = true`)"),
        });
    } else {
        let mut r = exist.finish(ctx, "every pair has a join");
        if r.status == Status::Violated {
            r.note = "set `partial = true` if these errors are intended, or add edges".into();
        }
        laws.push(r);
    }

    let structural = joins.ambiguous.is_empty();
    laws.extend(table_laws(ctx, structural, opts));
    Report {
        path: path.to_string(),
        name: name.to_string(),
        kind: InputKind::Lattice,
        dtypes: n,
        edges: Some(lattice.edge_count()),
        undefined_pairs: missing + joins.ambiguous.len() as u64,
        laws,
        engines: vec!["exhaustive"],
    }
}

/// Checks an observed table's laws, including whether it is the join of the order it induces.
pub fn check_table(path: &str, name: &str, t: &Table, opts: CheckOptions) -> Report {
    let n = t.n();
    let ctx = Ctx {
        table: t,
        joins: None,
    };
    let order = induced_order(t, opts);
    let structural = order.law.status == Status::Holds;
    let undefined = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .filter(|&(a, b)| t.get(a, b).is_none() && t.get(b, a).is_none())
        .count() as u64;
    let total = (n * n.saturating_sub(1) / 2) as u64;
    let mut laws = vec![LawResult {
        law: Law::Existence,
        status: if undefined > 0 {
            Status::Partial
        } else {
            Status::Holds
        },
        count: undefined,
        exact: true,
        witnesses: vec![],
        note: if undefined > 0 {
            format!("{undefined} of {total} pairs raise in the library")
        } else {
            "every pair has a result".into()
        },
    }];
    laws.extend(table_laws(ctx, structural, opts));
    laws.push(order.law);
    Report {
        path: path.to_string(),
        name: name.to_string(),
        kind: InputKind::Table,
        dtypes: n,
        edges: None,
        undefined_pairs: undefined,
        laws,
        engines: vec!["exhaustive"],
    }
}

/// Commutativity and idempotence (always exhaustive), then associativity,
/// definedness-associativity and the n-ary fold: proved when `structural` (and the first two
/// hold), brute force otherwise. A policy's join table whose only defect is ambiguous pairs
/// still has every defined cell a least upper bound, so its associativity is proved (the
/// corollary in docs/math.md) and only the other two laws are swept.
fn table_laws(ctx: Ctx, structural: bool, opts: CheckOptions) -> Vec<LawResult> {
    let t = ctx.table;
    let n = t.n();
    let mut comm = Collector::new(Check::Commutativity, opts);
    for a in 0..n {
        for b in a + 1..n {
            if t.get(a, b) != t.get(b, a) {
                comm.push(&[a, b]);
            }
        }
    }
    let mut idem = Collector::new(Check::Idempotence, opts);
    for a in 0..n {
        if t.get(a, a) != Some(a) {
            idem.push(&[a]);
        }
    }
    let comm = comm.finish(ctx, "a ∨ b = b ∨ a for every pair");
    let idem = idem.finish(ctx, "a ∨ a = a for every dtype");
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
                exact: true,
                witnesses: vec![],
                note: why.into(),
            });
        }
    } else {
        let lub_cells = ctx.joins.is_some() && out.iter().all(|l| l.status == Status::Holds);
        out.extend(brute_force_ctx(ctx, opts, lub_cells));
    }
    out
}

/// Associativity, definedness-associativity and the n-ary fold over all n³ triples.
pub fn brute_force(t: &Table, opts: CheckOptions) -> [LawResult; 3] {
    brute_force_ctx(
        Ctx {
            table: t,
            joins: None,
        },
        opts,
        false,
    )
}

/// Triples up to which the brute force counts every violation (a table of 500 dtypes, about
/// a second). Beyond, a law's sweep stops once it has as many witnesses as it keeps, and its
/// count is a lower bound (`exact: false`, reported as "at least"): a 3,000-dtype table that
/// is not a lattice is rejected in seconds instead of counting 10^10 triples. A law that holds
/// is still swept in full, and `max_witnesses = usize::MAX` (`--all-witnesses`) counts all.
pub const EXACT_TRIPLES: usize = 500 * 500 * 500;

/// Tables of fewer dtypes sweep their triples on the calling thread (see `brute_force_ctx`).
const PARALLEL_ROWS: usize = 128;

/// With `lub_cells` (every defined cell is the least upper bound of its operands in a partial
/// order), associativity is proved rather than swept: both sides, when defined, are the least
/// upper bound of `{a, b, c}` (docs/math.md, the corollary). Only definedness is then swept,
/// and a sweep that finds its witnesses can stop early.
fn brute_force_ctx(ctx: Ctx, opts: CheckOptions, lub_cells: bool) -> [LawResult; 3] {
    use rayon::prelude::*;
    let t = ctx.table;
    let n = t.n();
    let exact = n.saturating_pow(3) <= EXACT_TRIPLES
        || opts.max_witnesses == usize::MAX
        || opts.max_witnesses == 0;
    // Rows (the first operand `a`) are swept in parallel, a batch at a time, each row into its
    // own collectors, merged in row order: the witnesses kept and the counts are those of the
    // serial sweep. Without `exact`, a row stops once its collectors are full, and the sweep
    // after the first batch that fills the merged ones. A batch is a fixed 8 rows, so a
    // stopped sweep's "at least" count is the same on every machine; each row may keep as many
    // witnesses as the merged collectors have room for, so the batch also bounds the memory
    // (and a row of n² pairs is work enough to share out).
    // Below `PARALLEL_ROWS` dtypes the whole sweep is microseconds, less than waking rayon's
    // pool, and the rows run on the calling thread.
    let batch = 8;
    let sweep = |collectors: &mut [Collector], row: &(dyn Fn(usize, &mut [Collector]) + Sync)| {
        for start in (0..n).step_by(batch) {
            let run = |a: usize| {
                // A row can add no more witnesses than the merged collector has room for.
                let mut local: Vec<Collector> = collectors
                    .iter()
                    .map(|c| Collector {
                        max: c.max - c.raw.len(),
                        ..Collector::new(c.check, opts)
                    })
                    .collect();
                row(a, &mut local);
                local
            };
            let rows = start..n.min(start + batch);
            let parts: Vec<Vec<Collector>> = if n < PARALLEL_ROWS {
                rows.map(run).collect()
            } else {
                rows.into_par_iter().map(run).collect()
            };
            for part in parts {
                for (c, p) in collectors.iter_mut().zip(part) {
                    c.absorb(p);
                }
            }
            if !exact && collectors.iter().all(Collector::full) {
                for c in collectors.iter_mut() {
                    c.exact = false;
                }
                return;
            }
        }
    };
    // Collectors: [definedness] when associativity is proved, else [associativity, definedness].
    let mut triples: Vec<Collector> = [Check::Associativity, Check::DefinednessAssociativity]
        .into_iter()
        .skip(usize::from(lub_cells))
        .map(|check| Collector::new(check, opts))
        .collect();
    sweep(&mut triples, &|a, local| {
        for b in 0..n {
            if !exact && local.iter().all(Collector::full) {
                local.iter_mut().for_each(|c| c.exact = false);
                return;
            }
            let ab = t.get(a, b);
            for c in 0..n {
                let l = ab.and_then(|x| t.get(x, c));
                let r = t.get(b, c).and_then(|y| t.get(a, y));
                if l != r {
                    let both = l.is_some() && r.is_some();
                    debug_assert!(!(both && lub_cells), "least upper bounds are associative");
                    let k = if both { 0 } else { local.len() - 1 };
                    local[k].push(&[a, b, c]);
                }
            }
        }
    });
    let mut nary = [Collector::new(Check::NaryFold, opts)];
    sweep(&mut nary, &|a, local| {
        for b in a..n {
            if !exact && local[0].full() {
                local[0].exact = false;
                return;
            }
            for c in b..n {
                let fold = |p: [usize; 3]| t.get(p[0], p[1]).and_then(|x| t.get(x, p[2]));
                let first = fold([a, b, c]);
                if [[a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]]
                    .iter()
                    .any(|&p| fold(p) != first)
                {
                    local[0].push(&[a, b, c]);
                }
            }
        }
    });
    let defn = triples.pop().expect("the definedness collector");
    let assoc = match triples.pop() {
        Some(assoc) => assoc.finish(ctx, "(a ∨ b) ∨ c = a ∨ (b ∨ c) wherever both are defined"),
        None => LawResult {
            law: Law::Associativity,
            status: Status::Proved,
            count: 0,
            exact: true,
            witnesses: vec![],
            note: "proved: every defined join is a least upper bound (docs/math.md)".into(),
        },
    };
    let [nary] = nary;
    [
        assoc,
        defn.finish(ctx, "(a ∨ b) ∨ c is defined exactly when a ∨ (b ∨ c) is"),
        nary.finish(ctx, "every order of operands folds to the same result"),
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
    let ctx = Ctx {
        table: t,
        joins: None,
    };
    let mut le = BitMatrix::new(n);
    for a in 0..n {
        for b in 0..n {
            if t.get(a, b) == Some(b) {
                le.set(a, b);
            }
        }
    }
    let mut col = Collector::new(Check::Antisymmetry, opts);
    let mut counts = InducedCounts::default();
    for a in 0..n {
        for b in a + 1..n {
            if le.get(a, b) && le.get(b, a) {
                counts.antisymmetry += 1;
                col.push_as(Check::Antisymmetry, &[a, b]);
            }
        }
    }
    for a in 0..n {
        for b in ones(le.row(a)).collect::<Vec<_>>() {
            if subset(le.row(b), le.row(a)) {
                continue;
            }
            for c in ones(le.row(b)) {
                if !le.get(a, c) {
                    counts.transitivity += 1;
                    col.push_as(Check::Transitivity, &[a, b, c]);
                }
            }
        }
    }
    for a in 0..n {
        for b in 0..n {
            let (ra, rb) = (le.row(a), le.row(b));
            let bounded = first_common(ra, rb).is_some();
            // A cell is right when it is a least common upper bound, or undefined with none.
            let ok = match t.get(a, b) {
                Some(m) => le.get(a, m) && le.get(b, m) && meet_subset(ra, rb, le.row(m)),
                None => !bounded,
            };
            if !ok {
                let has_least = bounded && least_exists(&le, ra, rb);
                if t.get(a, b).is_some() || has_least {
                    counts.not_least += 1;
                } else {
                    counts.undefined_but_bounded += 1;
                }
                col.push_as(Check::NotLeast, &[a, b]);
            }
        }
    }
    let mut law = col.finish(
        ctx,
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
    let opts = CheckOptions {
        max_witnesses: 0,
        ..CheckOptions::default()
    };
    induced_order(t, opts).counts
}

/// Whether `up(a) ∩ up(b)` has a least element under `le` (rows are upper sets).
fn least_exists(le: &BitMatrix, ra: &[u64], rb: &[u64]) -> bool {
    let common: Vec<u64> = ra.iter().zip(rb).map(|(x, y)| x & y).collect();
    ones(&common).any(|m| meet_subset(ra, rb, le.row(m)))
}

/// Counts violations and keeps the first `max` witnesses (as indices), then ranks them
/// simplest first and explains each through [`describe`].
pub(crate) struct Collector {
    check: Check,
    max: usize,
    described: usize,
    pub(crate) count: u64,
    /// Whether `count` is every instance (false when a sweep stopped early).
    pub(crate) exact: bool,
    raw: Vec<(Check, [usize; 3], usize)>,
}

impl Collector {
    pub(crate) fn new(check: Check, opts: CheckOptions) -> Collector {
        Collector {
            check,
            max: opts.max_witnesses,
            described: opts.described,
            count: 0,
            exact: true,
            raw: Vec::new(),
        }
    }

    /// Adds a later part of the same sweep: its count, and its witnesses while room is left.
    pub(crate) fn absorb(&mut self, part: Collector) {
        self.count += part.count;
        self.exact &= part.exact;
        let room = self.max.saturating_sub(self.raw.len());
        self.raw.extend(part.raw.into_iter().take(room));
    }

    /// Whether it keeps no more witnesses (and has found at least one).
    pub(crate) fn full(&self) -> bool {
        self.count > 0 && self.raw.len() >= self.max
    }

    pub(crate) fn push(&mut self, idx: &[usize]) {
        self.push_as(self.check, idx);
    }

    /// For laws made of several checks: record a witness of one of them.
    pub(crate) fn push_as(&mut self, check: Check, idx: &[usize]) {
        self.count += 1;
        if self.raw.len() < self.max {
            let mut a = [0; 3];
            a[..idx.len()].copy_from_slice(idx);
            self.raw.push((check, a, idx.len()));
        }
    }

    pub(crate) fn finish(mut self, ctx: Ctx, holds_note: &str) -> LawResult {
        let t = ctx.table;
        let rank = dtype::Simplicity::of(t.names());
        self.raw
            .sort_by_cached_key(|(_, idx, len)| rank.key(&idx[..*len]));
        let law = self.check.law();
        let witnesses = self
            .raw
            .into_iter()
            .take(self.described)
            .map(|(check, idx, len)| {
                let (left, right, detail) = describe(check, ctx, &idx[..len])
                    .expect("a recorded witness violates its check");
                Violation {
                    law,
                    dtypes: idx[..len].iter().map(|&i| t.name(i).to_string()).collect(),
                    left: left.map(|v| t.name(v).to_string()),
                    right: right.map(|v| t.name(v).to_string()),
                    detail,
                }
            })
            .collect();
        LawResult {
            law,
            status: if self.count == 0 {
                Status::Holds
            } else {
                Status::Violated
            },
            count: self.count,
            exact: self.exact,
            witnesses,
            note: if self.count == 0 {
                holds_note.to_string()
            } else {
                String::new()
            },
        }
    }
}
