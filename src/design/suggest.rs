//! `typejoin suggest FILE --add NAME`: where a new dtype can go so every law still holds,
//! ranked by safety.
//!
//! A placement is the new dtype's immediate predecessors `below` (an antichain P) and
//! immediate successors `above` (an antichain S). The search is exhaustive over antichains of
//! at most `max_degree` elements each, with pruning, and decides each candidate by set algebra
//! on the order's bitsets rather than z3: the question is finite and small (a few hundred
//! thousand candidates for JAX's 35 dtypes), every candidate must be scored anyway (a solver
//! would have to enumerate all models), and a bitset check costs nanoseconds where a solver
//! call costs milliseconds. Every placement reported is then re-checked by the law checker
//! on the policy it produces.
//!
//! The search keeps the order among the existing dtypes (every element of P is below every
//! element of S already): a placement never makes two existing dtypes comparable. The new
//! dtype x then has the down-set D = ↓P ∪ {x} and the up-set U = ↑S ∪ {x}, and
//! - x ∨ y is x for y ∈ D, else the least element of U ∩ ↑y (undefined when that is empty,
//!   allowed only in a `partial` policy; no least element: the placement is refused);
//! - an existing pair a, b ∈ D gains x as an upper bound: its join is kept when it is in D,
//!   becomes x when it is above x (or was undefined), and the placement is refused when it is
//!   incomparable with x.
//!
//! A join table built this way is the least-upper-bound operation of a partial order, defined
//! wherever an upper bound exists, so the other laws follow (docs/math.md).
//!
//! Ranking, best first:
//! 1. fewest lossy new edges from concrete dtypes (what the promotion does to values);
//! 2. fewest weak (Python scalar) types of x's kind or below that x does not absorb: a scalar
//!    never sets the precision (`f* ∨ bfloat16 = bfloat16`, NEP 50 and JAX alike);
//! 3. fewest changed existing joins (a placement should not move existing entries);
//! 4. fewest new undefined pairs;
//! 5. narrowest joins: the sum of the bits of every x ∨ y, a weak result counted as the dtype
//!    it materialises as (after 4, because an undefined join has no width);
//! 6. fewest lossy edges from weak types of x's kind or below (a scalar adapting to x loses
//!    values by design; a Python complex dropping its imaginary part counts under 1);
//! 7. fewest edges; then declaration order.

use std::collections::HashMap;
use std::rc::Rc;

use serde::Serialize;

use crate::laws::CheckOptions;
use crate::order::lattice::Lattice;
use crate::policy::spec::{FormatDecl, Policy};
use crate::safety::{self, Class, Engine, Numeric, Witness};

/// More candidates (plus their escaping pairs) than this are refused: memory and time grow
/// with them (JAX's lattice has 104,000 candidates at `--max-degree 6`, the CLI's largest).
const MAX_CANDIDATES: usize = 2_000_000;

/// How far to search.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Largest number of immediate predecessors, and of successors, of a placement.
    pub max_degree: usize,
    /// Placements to describe in full (the count covers all of them).
    pub top: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_degree: 2,
            top: 5,
        }
    }
}

/// Why no placements could be searched for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SuggestError {
    #[error("`{0}` is a weak (Python scalar) type; suggest places concrete dtypes")]
    Weak(String),
    /// A dtype the policy already has and names elsewhere cannot be taken out and re-placed
    /// (`EditError::Pinned`), or a placement the policy refuses.
    #[error(transparent)]
    Edit(#[from] crate::policy::spec::EditError),
    #[error("`{0}` fails its laws; fix them first (`typejoin check`)")]
    LawsFail(String),
    #[error("`{0}` is not a catalogue dtype; give its format with --format-of")]
    NoFormat(String),
    #[error(
        "more than {MAX_CANDIDATES} placements with up to {max_degree} dtypes below and above; lower --max-degree"
    )]
    TooMany { max_degree: usize },
    /// A `--format-of` text that is not a format.
    #[error("{0}")]
    BadFormat(String),
    /// The search and the law checker disagree: a bug in typejoin.
    #[error("internal error: {0}; please report it")]
    Internal(String),
}

/// The ranking key of a placement (lexicographic, smaller is better).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Score {
    pub lossy_edges: u32,
    /// Weak (Python scalar) types of the new dtype's kind or below that it does not absorb:
    /// `f* ∨ bfloat16` should be bfloat16, as a scalar never sets the precision (NEP 50, JAX).
    pub weak_widening: u32,
    pub changed_joins: u32,
    pub new_undefined: u32,
    pub join_bits: u32,
    pub lossy_weak_edges: u32,
    pub edges: u32,
}

/// An existing join that the placement changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub a: String,
    pub b: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What one promotion of the placement does to values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Safety {
    pub from: String,
    pub to: String,
    /// `edge` (a new edge) or `join` (x ∨ y = to, from one of the operands).
    pub via: &'static str,
    pub class: Class,
    pub witness: Option<Witness>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub below: Vec<String>,
    pub above: Vec<String>,
    pub score: Score,
    /// Whether this is where the dtype already sits in the policy.
    pub current: bool,
    /// Existing entries whose join changes.
    pub changes: Vec<Change>,
    /// The new dtype's row: x ∨ y for every existing y (`None`: undefined).
    pub joins: Vec<(String, Option<String>)>,
    pub safety: Vec<Safety>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    pub dtype: String,
    pub policy: String,
    pub path: String,
    /// Where the dtype sat when it was already in the policy (it is placed as if removed).
    pub replaced: Option<(Vec<String>, Vec<String>)>,
    pub max_degree: usize,
    /// Placements examined, and those that keep every law.
    pub searched: u64,
    pub valid: u64,
    pub placements: Vec<Placement>,
    /// For a policy whose category nodes are derived (PyTorch's): the new dtype's category
    /// variants (`bfloat8@0d`) placed by the rule with each placement, and how many of the
    /// best placements were dropped because the derived order broke a law or its n-ary join
    /// stopped being the rule. The placements, searched among the written dtypes, are those
    /// that keep both.
    pub categories: Option<CategoryPlacement>,
}

/// How placing a dtype in a policy with derived categories went (see [`Suggestion`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CategoryPlacement {
    pub variants: Vec<String>,
    pub dropped: u64,
}

/// A word-parallel set of dtype indices.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Set(Vec<u64>);

impl Set {
    fn empty(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64).max(1)])
    }
    fn has(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn union_with(&mut self, o: &Set) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn and(&self, o: &Set) -> Set {
        Set(self.0.iter().zip(&o.0).map(|(a, b)| a & b).collect())
    }
    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    fn subset_of(&self, o: &Set) -> bool {
        self.0.iter().zip(&o.0).all(|(a, b)| a & !b == 0)
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        crate::order::bits::ones(&self.0)
    }
}

/// The order of a verified policy as up- and down-sets.
struct Order {
    n: usize,
    up: Vec<Set>,
    down: Vec<Set>,
    join: Vec<Option<usize>>,
}

impl Order {
    fn new(lattice: &Lattice) -> Order {
        let n = lattice.n();
        let set = |f: &dyn Fn(usize) -> bool| {
            let mut s = Set::empty(n);
            (0..n).filter(|&i| f(i)).for_each(|i| s.insert(i));
            s
        };
        let up = (0..n).map(|a| set(&|b| lattice.leq(a, b))).collect();
        let down = (0..n).map(|b| set(&|a| lattice.leq(a, b))).collect();
        let join = (0..n * n)
            .map(|i| lattice.join(i / n, i % n).unique())
            .collect();
        Order { n, up, down, join }
    }

    fn leq(&self, a: usize, b: usize) -> bool {
        self.up[a].has(b)
    }

    /// The least element of `set` in this order, if it has one.
    fn least(&self, set: &Set) -> Option<usize> {
        set.ones().find(|&m| set.subset_of(&self.up[m]))
    }

    /// Antichains of at most `k` elements drawn from `pool` (ascending), the empty one first.
    fn antichains(
        &self,
        pool: &[usize],
        k: usize,
        keep: impl Fn(&[usize]) -> bool,
    ) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        // Each chain with the pool position its next element starts from.
        let mut frontier: Vec<(Vec<usize>, usize)> = vec![(Vec::new(), 0)];
        for _ in 0..k {
            let mut next = Vec::new();
            for (chain, start) in &frontier {
                for (i, &c) in pool.iter().enumerate().skip(*start) {
                    if chain.iter().all(|&e| !self.leq(e, c) && !self.leq(c, e)) {
                        let mut grown = chain.clone();
                        grown.push(c);
                        if keep(&grown) {
                            next.push((grown, i + 1));
                        }
                    }
                }
            }
            out.extend(next.iter().map(|(chain, _)| chain.clone()));
            frontier = next;
        }
        out
    }
}

/// The outcome of one candidate: its new row and changed entries, or refused.
struct Evaluated {
    row: Vec<Option<Target>>,
    changed: Vec<(usize, usize, Option<usize>)>,
}

/// A join result in the extended order: an existing dtype or the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Old(usize),
    New,
}

fn evaluate(
    o: &Order,
    partial: bool,
    p: &[usize],
    s: &[usize],
    escaping: &[(usize, usize)],
) -> Option<Evaluated> {
    let n = o.n;
    let mut d = Set::empty(n);
    for &x in p {
        d.union_with(&o.down[x]);
    }
    let mut u = Set::empty(n);
    for &x in s {
        u.union_with(&o.up[x]);
    }
    let mut row = Vec::with_capacity(n);
    for y in 0..n {
        if d.has(y) {
            row.push(Some(Target::New));
            continue;
        }
        let bounds = u.and(&o.up[y]);
        if bounds.is_empty() {
            if !partial {
                return None;
            }
            row.push(None);
        } else {
            row.push(Some(Target::Old(o.least(&bounds)?)));
        }
    }
    let mut changed = Vec::new();
    for &(a, b) in escaping {
        match o.join[a * n + b] {
            Some(j) if u.has(j) => changed.push((a, b, Some(j))),
            None => changed.push((a, b, None)),
            Some(_) => return None,
        }
    }
    Some(Evaluated { row, changed })
}

/// A candidate placement: predecessors, successors, and the existing pairs below x whose
/// join is not below x (they must end above x, or the placement is refused).
/// The predecessor set and its escaping pairs are shared by all its successor sets.
type Candidate = (Rc<(Vec<usize>, Vec<(usize, usize)>)>, Vec<usize>);

/// Every placement with at most `k` predecessors and `k` successors that keeps the order of
/// the existing dtypes; with `prune`, without the successor sets that make some x ∨ y
/// ambiguous for a y below two successors but not below x.
fn candidates(o: &Order, k: usize, prune: bool) -> Result<Vec<Candidate>, SuggestError> {
    let n = o.n;
    let all: Vec<usize> = (0..n).collect();
    let mut out = Vec::new();
    // Candidates and escaping pairs held: bounded, so a wide lattice fails fast, not slowly.
    let (mut held, mut escaping_held) = (0usize, 0usize);
    let too_many = || SuggestError::TooMany { max_degree: k };
    let ps = o.antichains(&all, k, |_| true);
    if ps.len() > MAX_CANDIDATES {
        return Err(too_many());
    }
    for p in ps {
        let mut d = Set::empty(n);
        for &x in &p {
            d.union_with(&o.down[x]);
        }
        let inside: Vec<usize> = d.ones().collect();
        let mut escaping = Vec::new();
        for (i, &a) in inside.iter().enumerate() {
            for &b in &inside[i + 1..] {
                if o.join[a * n + b].is_none_or(|j| !d.has(j)) {
                    escaping.push((a, b));
                }
            }
        }
        let pool: Vec<usize> = (0..n)
            .filter(|&s| !d.has(s) && p.iter().all(|&q| o.leq(q, s)))
            .collect();
        let ss = o.antichains(&pool, k, |chain| {
            let Some((&last, rest)) = chain.split_last() else {
                return true;
            };
            !prune
                || rest
                    .iter()
                    .all(|&e| o.down[e].and(&o.down[last]).subset_of(&d))
        });
        held += ss.len();
        escaping_held += escaping.len();
        if held > MAX_CANDIDATES || escaping_held > 10 * MAX_CANDIDATES {
            return Err(too_many());
        }
        let shared = Rc::new((p, escaping));
        for s in ss {
            out.push((Rc::clone(&shared), s));
        }
    }
    Ok(out)
}

/// Holds the search to the law checker: every placement of `name` with at most `k`
/// predecessors and successors, unpruned, is decided both ways; returns (accepted, refused)
/// counts, or the first disagreement. For tests. The placed node is a new one even when the
/// policy already has a dtype `name` (the search never looks at names): it is then labelled
/// `name′`.
pub fn cross_check(policy: &Policy, name: &str, k: usize) -> Result<(usize, usize), SuggestError> {
    let label = match policy.node(name) {
        Some(_) => format!("{name}′"),
        None => name.to_string(),
    };
    let lattice = Lattice::from_policy(policy);
    let o = Order::new(&lattice);
    let pruned: std::collections::HashSet<(Vec<usize>, Vec<usize>)> = candidates(&o, k, true)?
        .into_iter()
        .map(|(shared, s)| (shared.0.clone(), s))
        .collect();
    let (mut accepted, mut refused) = (0, 0);
    for (shared, s) in candidates(&o, k, false)? {
        let (p, escaping) = &*shared;
        let fast = pruned.contains(&(p.clone(), s.clone()))
            && evaluate(&o, policy.partial, p, &s, escaping).is_some();
        // A placement the policy refuses (a cycle) breaks the laws as surely.
        let laws_hold = policy
            .with_dtype(&label, None, p, &s)
            .is_ok_and(|placed| laws_hold(&placed));
        if fast != laws_hold {
            return Err(SuggestError::Internal(format!(
                "below {:?} above {:?}: the search says {fast}, the laws say {laws_hold}",
                p.iter().map(|&i| &policy.dtypes[i]).collect::<Vec<_>>(),
                s.iter().map(|&i| &policy.dtypes[i]).collect::<Vec<_>>()
            )));
        }
        if fast {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    Ok((accepted, refused))
}

/// Bits of a dtype for the narrowness score: a weak type counts as what it materialises as.
fn bits_of(policy: &Policy, i: usize) -> u32 {
    let name = &policy.dtypes[i];
    if crate::numeric::dtype::is_weak(name)
        && let Some(w) = policy.weak.iter().find(|w| w.weak == i)
    {
        return bits_of(policy, w.materialises);
    }
    match crate::numeric::dtype::info(name) {
        Some(d) => d.bits,
        None => match crate::safety::Numeric::of(policy, i) {
            Some(crate::safety::Numeric::Int { bits, .. }) => bits,
            Some(crate::safety::Numeric::Float(f)) => f.width(),
            Some(crate::safety::Numeric::Complex(f)) => 2 * f.width(),
            None => 64,
        },
    }
}

/// Whether the policy keeps every law, by the law checker.
fn laws_hold(policy: &Policy) -> bool {
    let lattice = Lattice::from_policy(policy);
    let report = crate::laws::check_lattice(
        &policy.path,
        &policy.name,
        &lattice,
        &lattice.join_table(),
        CheckOptions::default(),
    );
    report.violated().next().is_none()
}

/// The immediate predecessors (`below`) or successors of `x` in a policy's order.
fn neighbours(lattice: &Lattice, x: usize, below: bool) -> Vec<usize> {
    let n = lattice.n();
    // `lt(a, b)`: a strictly below b, in the direction asked for.
    let lt = |a: usize, b: usize| {
        a != b
            && if below {
                lattice.leq(a, b)
            } else {
                lattice.leq(b, a)
            }
    };
    (0..n)
        .filter(|&p| lt(p, x) && !(0..n).any(|m| lt(p, m) && lt(m, x)))
        .collect()
}

/// Searches the placements of `name` in `policy` (which must keep every law). When the policy
/// already has `name`, it is removed first and its current placement is marked.
pub fn suggest(
    policy: &Policy,
    name: &str,
    format: Option<&FormatDecl>,
    opts: Options,
) -> Result<Suggestion, SuggestError> {
    match policy.categories.as_ref().and_then(|c| c.base.as_deref()) {
        Some(written) => suggest_with_categories(policy, written, name, format, opts),
        None => suggest_plain(policy, name, format, opts),
    }
}

/// A policy whose category nodes are derived: the dtype is placed among the written (plain)
/// dtypes, and each placement, best first, is re-derived (its category variants placed by the
/// rule) and kept only when the derived order keeps every law and its n-ary join is the rule.
fn suggest_with_categories(
    policy: &Policy,
    written: &Policy,
    name: &str,
    format: Option<&FormatDecl>,
    opts: Options,
) -> Result<Suggestion, SuggestError> {
    let wide = Options {
        top: usize::MAX,
        ..opts
    };
    let mut s = suggest_plain(written, name, format, wide)?;
    let stripped = match written.dtypes.iter().position(|d| d == name) {
        Some(x) => written.without_dtype(x)?,
        None => written.clone(),
    };
    let index = |names: &[String]| -> Vec<usize> {
        names
            .iter()
            .filter_map(|n| stripped.dtypes.iter().position(|d| d == n))
            .collect()
    };
    let format = format.cloned().or_else(|| {
        let x = written.dtypes.iter().position(|d| d == name)?;
        written.formats.iter().find(|f| f.dtype == x).cloned()
    });
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut variants = Vec::new();
    for p in std::mem::take(&mut s.placements) {
        if kept.len() == opts.top {
            break;
        }
        let placed =
            stripped.with_dtype(name, format.as_ref(), &index(&p.below), &index(&p.above))?;
        let derived = crate::order::categories::derive(placed);
        let lattice = Lattice::from_policy(&derived);
        let rule = crate::order::categories::verify(&derived, &lattice);
        if laws_hold(&derived) && rule.is_none_or(|r| r.holds()) {
            if variants.is_empty() {
                variants = derived
                    .dtypes
                    .iter()
                    .filter(|d| {
                        crate::numeric::dtype::split_category(d).0 == name && d.contains('@')
                    })
                    .cloned()
                    .collect();
            }
            kept.push(p);
        } else {
            dropped += 1;
        }
    }
    s.placements = kept;
    s.policy = policy.name.clone();
    s.path = policy.path.clone();
    s.categories = Some(CategoryPlacement { variants, dropped });
    Ok(s)
}

fn suggest_plain(
    policy: &Policy,
    name: &str,
    format: Option<&FormatDecl>,
    opts: Options,
) -> Result<Suggestion, SuggestError> {
    if crate::numeric::dtype::is_weak(name) {
        return Err(SuggestError::Weak(name.to_string()));
    }
    let mut format = format.cloned();
    let (base, replaced) = match policy.dtypes.iter().position(|d| d == name) {
        Some(x) => {
            let lattice = Lattice::from_policy(policy);
            let below = neighbours(&lattice, x, true);
            let above = neighbours(&lattice, x, false);
            if format.is_none() {
                format = policy.formats.iter().find(|f| f.dtype == x).cloned();
            }
            let names = |v: &[usize]| {
                v.iter()
                    .map(|&i| policy.dtypes[i].clone())
                    .collect::<Vec<_>>()
            };
            (
                policy.without_dtype(x)?,
                Some((names(&below), names(&above))),
            )
        }
        None => (policy.clone(), None),
    };
    if !laws_hold(&base) {
        return Err(SuggestError::LawsFail(base.path.clone()));
    }
    let lattice = Lattice::from_policy(&base);
    let probe = base.with_dtype(name, format.as_ref(), &[], &[])?;
    let x_numeric = Numeric::of(&probe, base.dtypes.len())
        .ok_or_else(|| SuggestError::NoFormat(name.to_string()))?;
    let o = Order::new(&lattice);
    let n = o.n;
    let k = opts.max_degree;

    let candidates = candidates(&o, k, true)?;

    // Classify the new edges once each.
    let mut class_cache: HashMap<(usize, bool), Class> = HashMap::new();
    let x = n;
    let mut edge_class = |y: usize, into_x: bool| -> Class {
        *class_cache.entry((y, into_x)).or_insert_with(|| {
            let Some(ny) = Numeric::of(&probe, y) else {
                return Class::Exact;
            };
            let (from, to) = if into_x {
                (&ny, &x_numeric)
            } else {
                (&x_numeric, &ny)
            };
            safety::classify(from, to, Engine::Search).0
        })
    };
    let weak = |i: usize| crate::numeric::dtype::is_weak(&base.dtypes[i]);
    let x_bits = bits_of(&probe, x);
    let kind_rank = |n: &Numeric| match n {
        Numeric::Int { .. } => 1,
        Numeric::Float(_) => 2,
        Numeric::Complex(_) => 3,
    };
    let x_rank = kind_rank(&x_numeric);
    let weak_kinds: Vec<(usize, u32)> = (0..n)
        .filter(|&w| weak(w))
        .filter_map(|w| Some((w, kind_rank(&Numeric::of(&base, w)?))))
        .collect();
    let mut scored: Vec<(Score, usize)> = Vec::new();
    let searched = candidates.len() as u64;
    for (ci, (shared, s)) in candidates.iter().enumerate() {
        let (p, escaping) = &**shared;
        let Some(ev) = evaluate(&o, base.partial, p, s, escaping) else {
            continue;
        };
        let mut lossy = 0;
        let mut lossy_weak = 0;
        for &q in p {
            if edge_class(q, true) != Class::Exact {
                // A scalar adapting to x loses values by design, unless it is of a higher
                // kind (a Python complex dropping its imaginary part into a real dtype).
                let by_design = weak_kinds.iter().any(|&(w, rank)| w == q && rank <= x_rank);
                if by_design {
                    lossy_weak += 1
                } else {
                    lossy += 1
                }
            }
        }
        for &q in s {
            if edge_class(q, false) != Class::Exact {
                lossy += 1;
            }
        }
        let join_bits = ev
            .row
            .iter()
            .map(|t| match t {
                Some(Target::New) => x_bits,
                Some(Target::Old(j)) => bits_of(&base, *j),
                None => 0,
            })
            .sum();
        let weak_widening = weak_kinds
            .iter()
            .filter(|&&(w, rank)| rank <= x_rank && ev.row[w] != Some(Target::New))
            .count() as u32;
        let score = Score {
            lossy_edges: lossy,
            weak_widening,
            changed_joins: ev.changed.len() as u32,
            new_undefined: ev.row.iter().filter(|t| t.is_none()).count() as u32,
            join_bits,
            lossy_weak_edges: lossy_weak,
            edges: (p.len() + s.len()) as u32,
        };
        scored.push((score, ci));
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let valid = scored.len() as u64;

    let name_of = |i: usize| base.dtypes[i].clone();
    let current = replaced.clone();
    let mut placements = Vec::new();
    let mut classify_cache: HashMap<(usize, usize), (Class, Option<Witness>)> = HashMap::new();
    for (score, ci) in scored.into_iter().take(opts.top) {
        let (shared, s) = &candidates[ci];
        let (p, escaping) = &**shared;
        let ev = evaluate(&o, base.partial, p, s, escaping).expect("scored, so accepted");
        let applied = base.with_dtype(name, format.as_ref(), p, s)?;
        // Re-check with the law checker: the set algebra above must agree with it.
        if !laws_hold(&applied) {
            return Err(SuggestError::Internal(format!(
                "the placement above {:?} below {:?} breaks a law the search accepted",
                p.iter().map(|&i| name_of(i)).collect::<Vec<_>>(),
                s.iter().map(|&i| name_of(i)).collect::<Vec<_>>()
            )));
        }
        let mut conv = |from: usize, to: usize| {
            classify_cache
                .entry((from, to))
                .or_insert_with(
                    || match (Numeric::of(&applied, from), Numeric::of(&applied, to)) {
                        (Some(a), Some(b)) => {
                            let (class, all, _) = safety::classify(&a, &b, Engine::Search);
                            let w = all
                                .iter()
                                .find(|(c, _)| *c == class)
                                .map(|(_, w)| w.clone());
                            (class, w)
                        }
                        _ => (Class::Unknown, None),
                    },
                )
                .clone()
        };
        let mut safety_rows = Vec::new();
        for &q in p {
            let (class, witness) = conv(q, x);
            safety_rows.push(Safety {
                from: name_of(q),
                to: name.to_string(),
                via: "edge",
                class,
                witness,
            });
        }
        for &q in s {
            let (class, witness) = conv(x, q);
            safety_rows.push(Safety {
                from: name.to_string(),
                to: name_of(q),
                via: "edge",
                class,
                witness,
            });
        }
        let mut seen: Vec<(usize, usize)> = p
            .iter()
            .map(|&q| (q, x))
            .chain(s.iter().map(|&q| (x, q)))
            .collect();
        for (y, t) in ev.row.iter().enumerate() {
            let j = match t {
                Some(Target::Old(j)) => *j,
                // y ≤ x: the join converts y to x.
                Some(Target::New) => {
                    if !seen.contains(&(y, x)) {
                        seen.push((y, x));
                        let (class, witness) = conv(y, x);
                        safety_rows.push(Safety {
                            from: name_of(y),
                            to: name.to_string(),
                            via: "join",
                            class,
                            witness,
                        });
                    }
                    continue;
                }
                None => continue,
            };
            let j = &j;
            for from in [x, y] {
                if from != *j && !seen.contains(&(from, *j)) {
                    seen.push((from, *j));
                    let (class, witness) = conv(from, *j);
                    let shown = if from == x {
                        name.to_string()
                    } else {
                        name_of(from)
                    };
                    safety_rows.push(Safety {
                        from: shown,
                        to: name_of(*j),
                        via: "join",
                        class,
                        witness,
                    });
                }
            }
        }
        let shown = |t: &Option<Target>| match t {
            Some(Target::New) => Some(name.to_string()),
            Some(Target::Old(j)) => Some(name_of(*j)),
            None => None,
        };
        let below: Vec<String> = p.iter().map(|&i| name_of(i)).collect();
        let above: Vec<String> = s.iter().map(|&i| name_of(i)).collect();
        placements.push(Placement {
            current: current.as_ref().is_some_and(|(b, a)| {
                let sorted = |v: &[String]| {
                    let mut v = v.to_vec();
                    v.sort();
                    v
                };
                sorted(b) == sorted(&below) && sorted(a) == sorted(&above)
            }),
            below,
            above,
            score,
            changes: ev
                .changed
                .iter()
                .map(|&(a, b, before)| Change {
                    a: name_of(a),
                    b: name_of(b),
                    before: before.map(name_of),
                    after: Some(name.to_string()),
                })
                .collect(),
            joins: ev
                .row
                .iter()
                .enumerate()
                .map(|(y, t)| (name_of(y), shown(t)))
                .collect(),
            safety: safety_rows,
        });
    }
    Ok(Suggestion {
        dtype: name.to_string(),
        policy: base.name.clone(),
        path: base.path.clone(),
        replaced,
        max_degree: k,
        searched,
        valid,
        placements,
        categories: None,
    })
}

/// Parses `--format-of`: a catalogue float's name (`float8_e4m3fn`, `bf16`), or the fields
/// of a `[formats]` table, `exponent_bits=4,mantissa_bits=3[,bias=7][,infinities=false][,nan=all-ones]`
/// (validated as in a policy file).
pub fn parse_format(text: &str) -> Result<FormatDecl, SuggestError> {
    if let Some(name) = crate::numeric::dtype::canonical(text)
        && let Some(f) = crate::numeric::dtype::float_format(name)
    {
        return Ok(FormatDecl {
            dtype: 0,
            exponent_bits: f.exponent_bits,
            mantissa_bits: f.mantissa_bits,
            bias: f.bias,
            infinities: f.infinities,
            nan: f.nan,
        });
    }
    // The fields become a `[formats]` table, validated by the policy parser itself.
    let mut fields = vec!["kind = \"float\"".to_string()];
    for kv in text.split(',') {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            SuggestError::BadFormat(format!(
                "`{kv}` is not key=value, and `{text}` is not a float dtype"
            ))
        })?;
        let (k, v) = (k.trim(), v.trim());
        if !k.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            return Err(SuggestError::BadFormat(format!(
                "`{k}` is not a format field"
            )));
        }
        let raw = v.parse::<i64>().is_ok() || v == "true" || v == "false";
        fields.push(if raw {
            format!("{k} = {v}")
        } else {
            format!("{k} = {}", toml_string(v))
        });
    }
    let policy = format!(
        "name = \"format-of\"\ndtypes = [\"x\"]\n[formats.x]\n{}\n",
        fields.join("\n")
    );
    match crate::policy::spec::parse_policy("--format-of", &policy) {
        Ok(p) => p
            .formats
            .into_iter()
            .next()
            .ok_or_else(|| SuggestError::BadFormat("no format given".into())),
        Err(e) => Err(SuggestError::BadFormat(match e.diagnostics.first() {
            Some(d) => match &d.help {
                Some(h) => format!("{} ({h})", d.message),
                None => d.message.clone(),
            },
            None => e.to_string(),
        })),
    }
}

fn toml_string(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
