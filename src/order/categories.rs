//! Operand categories (docs/categories.md): a policy's `[categories]` rule evaluated on any
//! multiset of operands, the order it induces (derived nodes `dtype@category` and their edges),
//! and the check that the order's n-ary join is the rule.
//!
//! The order is *derived*, not transcribed: `a ≤ b` exactly when adding `a` to any operands
//! holding `b` never changes the rule's result (`R({a, b} ∪ S) = R({b} ∪ S)` for every context
//! `S` of up to [`CONTEXT`] operands), which is what `a ∨ b = b` means for an n-ary join. Nodes
//! the rule cannot tell apart (`bool@0d` and `bool` in PyTorch) are one node, the later an
//! alias of the earlier. [`verify`] then compares the derived (or hand-declared) order's join
//! with the rule on every multiset of up to [`MAX_OPERANDS`] operands: where they part, the
//! rule is not the join of any order, and the smallest such multiset is the witness.

use std::ops::Range;

use serde::Serialize;

use crate::numeric::dtype::{self, Kind};
use crate::order::lattice::Lattice;
use crate::policy::spec::{Categories, CategoryRule, Edge, OtherKind, Policy, WeakRule};

/// Contexts of up to this many operands decide `a ≤ b` in the derivation.
pub const CONTEXT: usize = 2;
/// [`verify`] checks every multiset of up to this many operands.
pub const MAX_OPERANDS: usize = 4;

/// The kind classes the by-kind rule compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Bool,
    Integer,
    Float,
    Complex,
    /// No values (opaque types): joins only itself.
    Opaque,
}

/// One operand: a dtype (index of a plain node) in a category (0 = plain, then the policy's
/// `lower` categories, then the scalars).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Operand {
    dtype: usize,
    category: usize,
}

/// A policy's category rule, ready to evaluate on node indices of the policy it was built from.
struct Rule {
    rule: CategoryRule,
    class: Vec<Class>,
    /// Promotion of two plain dtypes (their join, materialised), row-major; `None` is an error.
    promote: Vec<Option<usize>>,
    /// The complex dtype of a float dtype's precision.
    complex: Vec<Option<usize>>,
    n: usize,
    /// Plain, the lower categories, scalars.
    categories: usize,
}

impl Rule {
    fn new(policy: &Policy, lattice: &Lattice, cats: &Categories) -> Rule {
        let n = policy.dtypes.len();
        let class = policy
            .dtypes
            .iter()
            .enumerate()
            .map(|(i, name)| match dtype::kind(name) {
                Kind::Bool => Class::Bool,
                Kind::Signed | Kind::Unsigned => Class::Integer,
                Kind::Float | Kind::SmallFloat => Class::Float,
                Kind::Complex => Class::Complex,
                Kind::Other if policy.formats.iter().any(|f| f.dtype == i) => Class::Float,
                Kind::Other => match policy.other_formats.iter().find(|f| f.dtype == i) {
                    Some(f) => match f.kind {
                        OtherKind::Int { .. } => Class::Integer,
                        OtherKind::Complex { .. } => Class::Complex,
                    },
                    None => Class::Opaque,
                },
                Kind::Weak | Kind::Opaque => Class::Opaque,
            })
            .collect();
        let mut promote = vec![None; n * n];
        for a in 0..n {
            for b in 0..n {
                promote[a * n + b] = lattice
                    .join(a, b)
                    .unique()
                    .and_then(|j| policy.materialise(j));
            }
        }
        // The complex of each float: the catalogue's (float16 → complex32), or a declared
        // `kind = "complex"` format of it.
        let complex = policy
            .dtypes
            .iter()
            .map(|d| {
                dtype::complex_of(d)
                    .and_then(|c| policy.dtypes.iter().position(|x| x == c))
                    .or_else(|| {
                        policy.other_formats.iter().find_map(|f| match &f.kind {
                            OtherKind::Complex { of } if of == d => Some(f.dtype),
                            _ => None,
                        })
                    })
            })
            .collect();
        Rule {
            rule: cats.rule,
            class,
            promote,
            complex,
            n,
            categories: cats.lower.len() + 2,
        }
    }

    fn promote(&self, a: usize, b: usize) -> Option<usize> {
        self.promote[a * self.n + b]
    }

    /// PyTorch's `combine_categories(higher, lower)`; `Err` when the pair has no result.
    fn combine(&self, higher: Option<usize>, lower: Option<usize>) -> Result<Option<usize>, ()> {
        let (h, l) = match (higher, lower) {
            (None, l) => return Ok(l),
            (h, None) => return Ok(h),
            (Some(h), Some(l)) => (h, l),
        };
        match self.rule {
            CategoryRule::ByKind => {
                let (ch, cl) = (self.class[h], self.class[l]);
                Ok(Some(if ch == Class::Opaque || cl == Class::Opaque {
                    self.promote(h, l).ok_or(())?
                } else if ch == Class::Complex {
                    h
                } else if cl == Class::Complex {
                    if ch == Class::Float {
                        self.complex[h].ok_or(())?
                    } else {
                        l
                    }
                } else if ch == Class::Float {
                    h
                } else if ch == Class::Bool || cl == Class::Float {
                    self.promote(h, l).ok_or(())?
                } else {
                    h
                }))
            }
        }
    }

    /// The dtype the rule gives a multiset of operands; `None` when the library raises.
    fn eval(&self, operands: &[Operand]) -> Option<usize> {
        let mut state = vec![None; self.categories];
        for o in operands {
            let s = &mut state[o.category];
            *s = match *s {
                None => Some(o.dtype),
                Some(d) => Some(self.promote(d, o.dtype)?),
            };
        }
        let mut acc = None;
        for &s in state.iter().rev() {
            acc = self.combine(s, acc).ok()?;
        }
        acc
    }
}

/// The operand a node name denotes in a policy with these categories: `int8` plain, `int8@0d`
/// in a lower category, a scalar node wrapped as its dtype.
fn operand(policy: &Policy, cats: &Categories, name: &str) -> Option<Operand> {
    if let Some(&(_, d)) = cats.scalars.iter().find(|(s, _)| s == name) {
        return Some(Operand {
            dtype: d,
            category: cats.lower.len() + 1,
        });
    }
    let (base, cat) = dtype::split_category(name);
    let d = policy.dtypes.iter().position(|x| x == base)?;
    let category = match cat {
        None => 0,
        Some(c) => 1 + cats.lower.iter().position(|l| l == c)?,
    };
    Some(Operand { dtype: d, category })
}

/// Expands a policy whose `[categories]` are to be derived into the policy of its nodes:
/// the plain dtypes first (indices unchanged), then `dtype@category` for every lower category,
/// then the scalars; edges are the Hasse diagram of the derived order. A policy without
/// derived categories is returned as it is.
pub fn derive(policy: Policy) -> Policy {
    let Some(cats) = policy
        .categories
        .clone()
        .filter(|c| c.derived && c.base.is_none())
    else {
        return policy;
    };
    let written = Box::new(policy.clone());
    let base = Lattice::from_policy(&policy);
    let rule = Rule::new(&policy, &base, &cats);
    let plain = policy.dtypes.len();

    // Candidate nodes, in the order that decides which of two equal nodes is kept.
    let mut names: Vec<String> = policy.dtypes.clone();
    let mut ops: Vec<Operand> = (0..plain)
        .map(|d| Operand {
            dtype: d,
            category: 0,
        })
        .collect();
    for (c, cat) in cats.lower.iter().enumerate() {
        for d in 0..plain {
            if rule.class[d] != Class::Opaque {
                names.push(format!("{}@{cat}", policy.dtypes[d]));
                ops.push(Operand {
                    dtype: d,
                    category: c + 1,
                });
            }
        }
    }
    let mut scalars = cats.scalars.clone();
    scalars.sort_by_key(|(s, _)| dtype::CATALOGUE.iter().position(|d| d.name == s));
    for (s, d) in &scalars {
        names.push(s.clone());
        ops.push(Operand {
            dtype: *d,
            category: cats.lower.len() + 1,
        });
    }
    let m = names.len();

    // a ≤ b: no context of up to CONTEXT operands tells {a, b} ∪ S from {b} ∪ S.
    let contexts = multisets(m, CONTEXT, true);
    let mut leq = vec![false; m * m];
    let mut buf: Vec<Operand> = Vec::with_capacity(CONTEXT + 2);
    for a in 0..m {
        for b in 0..m {
            leq[a * m + b] = a == b
                || contexts.iter().all(|s| {
                    buf.clear();
                    buf.extend(s.iter().map(|&i| ops[i]));
                    buf.push(ops[b]);
                    let without = rule.eval(&buf);
                    buf.push(ops[a]);
                    rule.eval(&buf) == without
                });
        }
    }
    // Close transitively (contexts are bounded), then merge nodes below each other.
    for k in 0..m {
        for a in 0..m {
            if leq[a * m + k] {
                for b in 0..m {
                    if leq[k * m + b] {
                        leq[a * m + b] = true;
                    }
                }
            }
        }
    }
    let rep: Vec<usize> = (0..m)
        .map(|i| {
            (0..i)
                .find(|&j| leq[i * m + j] && leq[j * m + i])
                .unwrap_or(i)
        })
        .collect();
    let kept: Vec<usize> = (0..m).filter(|&i| rep[i] == i).collect();
    let new_index = |old: usize| kept.binary_search(&rep[old]).expect("a representative");

    let mut out = policy;
    let span = cats.span.clone();
    let old_edges = std::mem::take(&mut out.edges);
    let mut dtype_spans = Vec::with_capacity(kept.len());
    for &k in &kept {
        dtype_spans.push(if k < plain {
            out.dtype_spans[k].clone()
        } else {
            span.clone()
        });
    }
    let lt = |a: usize, b: usize| leq[a * m + b] && !leq[b * m + a];
    let mut edges = Vec::new();
    for &a in &kept {
        for &b in &kept {
            if lt(a, b) && !kept.iter().any(|&c| lt(a, c) && lt(c, b)) {
                let declared: Option<Range<usize>> = old_edges
                    .iter()
                    .find(|e| e.from == a && e.to == b)
                    .map(|e| e.span.clone());
                edges.push(Edge {
                    from: new_index(a),
                    to: new_index(b),
                    span: declared.unwrap_or_else(|| span.clone()),
                });
            }
        }
    }
    edges.sort_by_key(|e| (e.span.start, e.from, e.to));
    let weak: Vec<WeakRule> = scalars
        .iter()
        .enumerate()
        .map(|(i, (_, d))| (m - scalars.len() + i, *d))
        .filter(|&(node, _)| rep[node] == node)
        .map(|(node, d)| WeakRule {
            weak: new_index(node),
            materialises: new_index(d),
        })
        .collect();
    let aliases = (0..m)
        .filter(|&i| rep[i] != i)
        .map(|i| (names[i].clone(), new_index(i)))
        .collect();
    for f in &mut out.formats {
        f.dtype = new_index(f.dtype);
    }
    for f in &mut out.other_formats {
        f.dtype = new_index(f.dtype);
    }
    for o in &mut out.ops {
        for x in [&mut o.integer_result, &mut o.lowest].into_iter().flatten() {
            *x = new_index(*x);
        }
        for (a, b) in &mut o.integer_result_of {
            *a = new_index(*a);
            *b = new_index(*b);
        }
    }
    out.dtypes = kept.iter().map(|&k| names[k].clone()).collect();
    out.dtype_spans = dtype_spans;
    out.edges = edges;
    out.weak = weak;
    out.categories = Some(Categories {
        aliases,
        base: Some(written),
        scalars: scalars
            .iter()
            .map(|(s, d)| (s.clone(), new_index(*d)))
            .collect(),
        ..cats
    });
    out
}

/// Every multiset of `0..n` with at most `max` elements (sorted index lists), the empty one
/// included when `empty`, smallest first.
fn multisets(n: usize, max: usize, empty: bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut level: Vec<Vec<usize>> = vec![Vec::new()];
    if empty {
        out.push(Vec::new());
    }
    for _ in 0..max {
        let mut next = Vec::new();
        for s in &level {
            let from = s.last().copied().unwrap_or(0);
            for i in from..n {
                let mut t = s.clone();
                t.push(i);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        level = next;
    }
    out
}

/// Where the order's n-ary join and the category rule part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleMismatch {
    /// The operands, smallest multiset first.
    pub operands: Vec<String>,
    /// What the rule gives (`None`: an error).
    pub rule: Option<String>,
    /// The order's join, materialised (`None`: no unique join).
    pub order: Option<String>,
    /// The order's join as a node.
    pub node: Option<String>,
}

/// The n-ary check of a policy with categories: its order's join against its rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleCheck {
    pub rule: &'static str,
    /// Whether the nodes and edges were derived from the rule.
    pub derived: bool,
    /// Nodes the rule makes equal to another (`bool@0d` = `bool`).
    pub aliases: Vec<(String, String)>,
    pub max_operands: usize,
    /// Multisets checked.
    pub multisets: u64,
    /// Multisets where the order and the rule part (exact).
    pub mismatches: u64,
    /// The smallest such multisets, at most three.
    pub witnesses: Vec<RuleMismatch>,
}

impl RuleCheck {
    pub fn holds(&self) -> bool {
        self.mismatches == 0
    }

    /// Whether this compares measured triples (else a policy's category rule).
    pub fn measured(&self) -> bool {
        self.rule == MEASURED
    }

    /// What the n-ary results are compared with, for messages: "the `by-kind` rule", "the
    /// measured triples".
    pub fn what(&self) -> String {
        if self.measured() {
            "the measured triples".into()
        } else {
            format!("the `{}` rule", self.rule)
        }
    }
}

/// [`RuleCheck::rule`] of a table's measured triples.
pub const MEASURED: &str = "measured triples";

/// Compares the n-ary join of `policy`'s order with its category rule on every multiset of up
/// to [`MAX_OPERANDS`] operands (every node and alias); `None` without `[categories]`.
pub fn verify(policy: &Policy, lattice: &Lattice) -> Option<RuleCheck> {
    let cats = policy.categories.as_ref()?;
    let rule = Rule::new(policy, lattice, cats);
    let mut names: Vec<&str> = policy.dtypes.iter().map(String::as_str).collect();
    let mut nodes: Vec<usize> = (0..names.len()).collect();
    for (a, i) in &cats.aliases {
        names.push(a);
        nodes.push(*i);
    }
    let ops: Vec<Option<Operand>> = names.iter().map(|n| operand(policy, cats, n)).collect();
    let usable: Vec<usize> = (0..names.len()).filter(|&i| ops[i].is_some()).collect();
    let mut multisets_checked = 0u64;
    let mut mismatches = 0u64;
    let mut witnesses = Vec::new();
    let name_of = |i: Option<usize>| i.map(|i| policy.dtypes[i].clone());
    for m in multisets(usable.len(), MAX_OPERANDS, false) {
        multisets_checked += 1;
        let operands: Vec<Operand> = m.iter().map(|&i| ops[usable[i]].expect("usable")).collect();
        let want = rule.eval(&operands);
        let idx: Vec<usize> = m.iter().map(|&i| nodes[usable[i]]).collect();
        let node = lattice.result_type(&idx).and_then(|j| j.unique());
        let have = node.and_then(|j| policy.materialise(j));
        if want != have {
            mismatches += 1;
            if witnesses.len() < 3 {
                witnesses.push(RuleMismatch {
                    operands: m.iter().map(|&i| names[usable[i]].to_string()).collect(),
                    rule: name_of(want),
                    order: name_of(have),
                    node: name_of(node),
                });
            }
        }
    }
    Some(RuleCheck {
        rule: cats.rule.name(),
        derived: cats.derived,
        aliases: cats
            .aliases
            .iter()
            .map(|(a, i)| (a.clone(), policy.dtypes[*i].clone()))
            .collect(),
        max_operands: MAX_OPERANDS,
        multisets: multisets_checked,
        mismatches,
        witnesses,
    })
}

/// Compares an observed table's measured triples with the n-ary result its pairs give (the
/// left fold of the lifted table, materialised); `None` without triples.
pub fn verify_triples(o: &crate::policy::observed::Observed) -> Option<RuleCheck> {
    if o.triples.is_empty() {
        return None;
    }
    let t = &o.table;
    let mat = |r: usize| o.materialised.as_ref().map_or(Some(r), |m| m[r]);
    let mut mismatches = 0u64;
    let mut witnesses = Vec::new();
    let mut sorted: Vec<&crate::policy::observed::Triple> = o.triples.iter().collect();
    // Simplest first: familiar dtypes, then narrow ones, then table order.
    let rank = dtype::Simplicity::of(t.names());
    sorted.sort_by_cached_key(|x| rank.key(&x.operands));
    for x in sorted {
        let [a, b, c] = x.operands;
        let node = t.get(a, b).and_then(|ab| t.get(ab, c));
        let have = node.and_then(mat);
        if have != x.result {
            mismatches += 1;
            if witnesses.len() < 3 {
                let name = |i: Option<usize>| i.map(|i| t.name(i).to_string());
                witnesses.push(RuleMismatch {
                    operands: x.operands.iter().map(|&i| t.name(i).to_string()).collect(),
                    rule: name(x.result),
                    order: name(have),
                    node: name(node),
                });
            }
        }
    }
    Some(RuleCheck {
        rule: MEASURED,
        derived: false,
        aliases: Vec::new(),
        max_operands: 3,
        multisets: o.triples.len() as u64,
        mismatches,
        witnesses,
    })
}

/// The dtype `policy`'s category rule gives `operands` (node or alias names): `None` when the
/// policy has no `[categories]` or a name is not an operand, `Some(None)` where the library
/// raises.
pub fn rule_result(policy: &Policy, lattice: &Lattice, operands: &[&str]) -> Option<Option<usize>> {
    let cats = policy.categories.as_ref()?;
    let ops = operands
        .iter()
        .map(|n| operand(policy, cats, n))
        .collect::<Option<Vec<Operand>>>()?;
    Some(Rule::new(policy, lattice, cats).eval(&ops))
}
