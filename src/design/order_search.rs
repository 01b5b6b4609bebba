//! Searching the partial orders of a set of dtypes with z3: the encoding that `repair` and
//! `synth` share (docs/repair.md).
//!
//! An order on `n` dtypes is `n(n-1)` Boolean constants `l{a}_{b}` ("a ≤ b", `a ≠ b`), with
//! antisymmetry and transitivity asserted. A join is a set of clauses over them:
//! [`Encoding::lub`] says "`lit` → c is the least upper bound of a and b",
//! [`Encoding::no_upper_bound`] "`lit` → a and b have no common upper bound".
//!
//! That every pair has a join (a lattice), or has one or no upper bound at all (a partial
//! lattice), takes n⁴ clauses to say outright. The search says it lazily ([`Encoding::solve`]):
//! it solves without it, reads the order z3 answers with, and for each pair whose join is
//! missing or ambiguous asserts that the pair has one (a constant per candidate, `j{a}_{b}_{c}`),
//! then solves again. What it adds is implied by being a (partial) lattice, so every query is a
//! relaxation of the whole problem: its optimum is a lower bound, its unsat core a core of
//! the whole problem, and an answer whose order is a lattice is an answer to the whole problem.

// Without z3 the search answers `Unknown` before it reads a model.
#![cfg_attr(not(feature = "z3"), allow(dead_code))]

use std::fmt::Write as _;

use crate::order::lattice::{JoinTable, Lattice};
#[cfg(feature = "z3")]
use crate::smt::solve::{self, Answer};

/// The most dtypes a search takes: its transitivity axioms are n³ clauses (160 dtypes: 4
/// million, about 150 MB of SMT-LIB), asked of z3 again each round. Refused above, before any
/// allocation.
pub const MAX_DTYPES: usize = 160;

/// Why a search of `n` dtypes is refused, if it is.
pub fn too_many(n: usize) -> Option<String> {
    (n > MAX_DTYPES).then(|| {
        format!(
            "{n} dtypes: repair and synth search at most {MAX_DTYPES} (the order's axioms are n³ \
             clauses)"
        )
    })
}

/// The SMT-LIB text of a search over the partial orders of `n` dtypes: its hard part (the
/// order's axioms, the caller's clauses, the joins asserted lazily) and its soft part.
#[derive(Clone, Debug)]
pub struct Encoding {
    n: usize,
    partial: bool,
    hard: String,
    soft: String,
    /// Bit `a * n + b` (`a < b`): the pair's join constants are declared.
    expanded: Vec<bool>,
}

/// The constant (or `true`) that says `a ≤ b`.
pub fn le(a: usize, b: usize) -> String {
    if a == b {
        "true".into()
    } else {
        format!("l{a}_{b}")
    }
}

impl Encoding {
    /// The order's constants and axioms over `n` dtypes; `partial`: a pair may have no common
    /// upper bound.
    pub fn new(n: usize, partial: bool) -> Encoding {
        let mut hard = String::with_capacity(n * n * n * 24);
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    let _ = writeln!(hard, "(declare-const l{a}_{b} Bool)");
                }
            }
        }
        for a in 0..n {
            for b in a + 1..n {
                let _ = writeln!(hard, "(assert (or (not l{a}_{b}) (not l{b}_{a})))");
            }
        }
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    if a != b && b != c && a != c {
                        let _ =
                            writeln!(hard, "(assert (or (not l{a}_{b}) (not l{b}_{c}) l{a}_{c}))");
                    }
                }
            }
        }
        Encoding {
            n,
            partial,
            hard,
            soft: String::new(),
            expanded: vec![false; n * n],
        }
    }

    /// Declares a Boolean constant.
    pub fn declare(&mut self, name: &str) {
        let _ = writeln!(self.hard, "(declare-const {name} Bool)");
    }

    /// Asserts a term.
    pub fn assert(&mut self, term: &str) {
        let _ = writeln!(self.hard, "(assert {term})");
    }

    /// A soft constraint: `term` should hold, and costs `weight` in objective `id` when it
    /// does not.
    pub fn soft(&mut self, term: &str, weight: u64, id: &str) {
        let _ = writeln!(self.soft, "(assert-soft {term} :weight {weight} :id {id})");
    }

    /// `lit` → `c` is the least upper bound of `a` and `b`.
    pub fn lub(&mut self, lit: &str, a: usize, b: usize, c: usize) {
        let (a, b) = (a.min(b), a.max(b));
        if c == a || c == b {
            // The join is one of the two exactly when the other is below it.
            let other = if c == a { b } else { a };
            self.assert(&format!("(=> {lit} {})", le(other, c)));
            return;
        }
        self.assert(&format!("(=> {lit} (and {} {}))", le(a, c), le(b, c)));
        for d in 0..self.n {
            if d != c {
                let (ad, bd, cd) = (le(a, d), le(b, d), le(c, d));
                self.assert(&format!("(or (not {lit}) (not {ad}) (not {bd}) {cd})"));
            }
        }
    }

    /// `lit` → `a` and `b` have no common upper bound.
    pub fn no_upper_bound(&mut self, lit: &str, a: usize, b: usize) {
        for d in 0..self.n {
            let (ad, bd) = (le(a, d), le(b, d));
            self.assert(&format!("(or (not {lit}) (not {ad}) (not {bd}))"));
        }
    }

    /// Asserts that `a ∨ b` exists (or, when the search is partial, that the pair has no
    /// upper bound at all), declaring a constant per candidate; `weight(c)` is the soft cost of
    /// the candidate `c` (`None`: no upper bound), 0 for none. False when already asserted.
    pub fn expand(&mut self, a: usize, b: usize, weight: impl Fn(Option<usize>) -> u64) -> bool {
        let (a, b) = (a.min(b), a.max(b));
        if a == b || self.expanded[a * self.n + b] {
            return false;
        }
        self.expanded[a * self.n + b] = true;
        let mut any = String::from("(or");
        for c in 0..=self.n {
            let cand = (c < self.n).then_some(c);
            if cand.is_none() && !self.partial {
                break;
            }
            let name = match cand {
                Some(c) => format!("j{a}_{b}_{c}"),
                None => format!("j{a}_{b}_n"),
            };
            self.declare(&name);
            match cand {
                Some(c) => self.lub(&name, a, b, c),
                None => self.no_upper_bound(&name, a, b),
            }
            let w = weight(cand);
            if w > 0 {
                self.soft(&format!("(not {name})"), w, "cost");
            }
            let _ = write!(any, " {name}");
        }
        any.push(')');
        self.assert(&any);
        true
    }

    /// The order's constants, in the order [`Encoding::order_of`] reads them.
    pub fn order_vars(&self) -> Vec<String> {
        let n = self.n;
        (0..n)
            .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| le(a, b)))
            .collect()
    }

    /// The script: the hard part, then the soft part.
    pub fn script(&self) -> String {
        format!("{}{}", self.hard, self.soft)
    }

    /// The hard part alone.
    pub fn hard(&self) -> &str {
        &self.hard
    }

    /// The order a model of [`Encoding::order_vars`] gives.
    pub fn order_of(&self, values: &[bool]) -> Order {
        let n = self.n;
        let mut rel = vec![false; n * n];
        let mut it = values.iter();
        for a in 0..n {
            for b in 0..n {
                rel[a * n + b] = a == b || (*it.next().unwrap_or(&false));
            }
        }
        Order { n, rel }
    }

    /// The pairs whose join is not as the search requires: ambiguous, or (not partial) with no
    /// upper bound.
    pub fn failing(&self, joins: &JoinTable) -> Vec<(usize, usize)> {
        let n = self.n;
        let mut out: Vec<(usize, usize)> = joins.ambiguous.pairs().collect();
        if !self.partial {
            for a in 0..n {
                for b in a + 1..n {
                    if joins.table.get(a, b).is_none() && !joins.ambiguous.contains(a, b) {
                        out.push((a, b));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }
}

/// A partial order on `0..n`, reflexive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    n: usize,
    rel: Vec<bool>,
}

impl Order {
    /// The order `leq` says, over `n` dtypes.
    pub fn from_fn(n: usize, leq: impl Fn(usize, usize) -> bool) -> Order {
        let mut rel = vec![false; n * n];
        for a in 0..n {
            for b in 0..n {
                rel[a * n + b] = a == b || leq(a, b);
            }
        }
        Order { n, rel }
    }

    pub fn leq(&self, a: usize, b: usize) -> bool {
        self.rel[a * self.n + b]
    }

    /// The covering pairs `a → b` (`a < b`, nothing strictly between): the Hasse diagram, in
    /// index order.
    pub fn hasse(&self) -> Vec<(usize, usize)> {
        let n = self.n;
        let mut out = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b
                    && self.leq(a, b)
                    && !(0..n).any(|c| c != a && c != b && self.leq(a, c) && self.leq(c, b))
                {
                    out.push((a, b));
                }
            }
        }
        out
    }

    /// The order's closure as a [`Lattice`] over `names`.
    pub fn lattice(&self, names: &[String], partial: bool) -> Lattice {
        Lattice::new(names.to_vec(), &self.hasse(), partial)
            .expect("a partial order's covering pairs have no cycle")
    }
}

/// TOML's basic string of `s` (a JSON string is one).
pub fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A policy's `partial`, `dtypes` and `[promotes]` for an order's covering pairs (the text after
/// its `name`, `summary` and `source`).
pub fn policy_body(names: &[String], partial: bool, edges: &[(usize, usize)]) -> String {
    let mut out = String::new();
    if partial {
        out += "partial = true\n";
    }
    out += "dtypes = [\n";
    for name in names {
        out += &format!("  {},\n", toml_string(name));
    }
    out += "]\n\n[promotes]\n";
    for (a, name) in names.iter().enumerate() {
        let up: Vec<String> = edges
            .iter()
            .filter(|e| e.0 == a)
            .map(|e| toml_string(&names[e.1]))
            .collect();
        if !up.is_empty() {
            out += &format!("{} = [{}]\n", toml_string(name), up.join(", "));
        }
    }
    out
}

/// How [`Encoding::solve`] asks z3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Minimise the soft constraints.
    Optimize,
    /// Satisfy the hard constraints under assumptions.
    Satisfy,
}

/// The answer of [`Encoding::solve`].
#[derive(Clone, Debug)]
pub enum Solved {
    /// An order whose joins are as the search requires, with its join table.
    Found {
        order: Order,
        joins: Box<JoinTable>,
        rounds: usize,
    },
    /// No order: the indices of the assumptions in z3's core.
    Unsat { core: Vec<usize> },
    /// z3 gave up (the reason), or z3 is not built in.
    Unknown(String),
}

impl Encoding {
    /// Solves until the answer's order is a (partial) lattice: each round asks z3, reads the
    /// order, and expands (asserts the join of) every failing pair and every pair `more`
    /// names (with the soft cost `weight` gives its candidates); a round that expands nothing
    /// is the answer. `deadline_ms` bounds every round together.
    pub fn solve(
        &mut self,
        names: &[String],
        ask: Ask,
        assumptions: &[String],
        deadline_ms: u32,
        mut more: impl FnMut(&JoinTable) -> Vec<(usize, usize)>,
        weight: impl Fn(usize, usize, Option<usize>) -> u64,
    ) -> Solved {
        #[cfg(not(feature = "z3"))]
        {
            let _ = (names, ask, assumptions, deadline_ms, &mut more, &weight);
            Solved::Unknown(crate::smt::z3_available().err().unwrap_or_default())
        }
        #[cfg(feature = "z3")]
        {
            if let Err(e) = crate::smt::z3_available() {
                return Solved::Unknown(e);
            }
            let start = std::time::Instant::now();
            let vars = self.order_vars();
            for rounds in 1.. {
                let left = (deadline_ms as u128).saturating_sub(start.elapsed().as_millis());
                if left == 0 {
                    return Solved::Unknown(format!("timeout after {deadline_ms} ms"));
                }
                let left = left as u32;
                let answer = match ask {
                    Ask::Optimize => solve::optimize(&self.script(), &vars, left),
                    Ask::Satisfy => solve::satisfy(&self.hard, &vars, assumptions, left),
                };
                let values = match answer {
                    Answer::Sat(v) => v,
                    Answer::Unsat(core) => return Solved::Unsat { core },
                    Answer::Unknown(why) => {
                        return Solved::Unknown(if why.starts_with("timeout") {
                            format!("timeout after {deadline_ms} ms")
                        } else {
                            why
                        });
                    }
                };
                let order = self.order_of(&values);
                let joins = order.lattice(names, self.partial).join_table();
                let mut grew = false;
                for (a, b) in self.failing(&joins).into_iter().chain(more(&joins)) {
                    grew |= self.expand(a, b, |c| weight(a, b, c));
                }
                if !grew {
                    return Solved::Found {
                        order,
                        joins: Box::new(joins),
                        rounds,
                    };
                }
            }
            unreachable!("the loop returns")
        }
    }
}

/// Every partial order on `n ≤ 5` elements, each once: the exhaustive search tests hold the
/// z3 search to (4,231 orders on five elements).
pub fn every_order(n: usize) -> Vec<Order> {
    assert!(n <= 5, "every_order enumerates at most five elements");
    // Bit `index[a][b]` of a mask says a ≤ b (a ≠ b).
    let mut index = [[0u32; 5]; 5];
    let mut bits = 0;
    for (a, row) in index.iter_mut().enumerate().take(n) {
        for (b, cell) in row.iter_mut().enumerate().take(n) {
            if a != b {
                *cell = bits;
                bits += 1;
            }
        }
    }
    let leq = |mask: u32, a: usize, b: usize| a == b || mask >> index[a][b] & 1 == 1;
    let mut out = Vec::new();
    'masks: for mask in 0u32..1 << bits {
        for a in 0..n {
            for b in 0..n {
                if a == b || !leq(mask, a, b) {
                    continue;
                }
                if leq(mask, b, a) {
                    continue 'masks;
                }
                for c in 0..n {
                    if leq(mask, b, c) && !leq(mask, a, c) {
                        continue 'masks;
                    }
                }
            }
        }
        out.push(Order::from_fn(n, |a, b| leq(mask, a, b)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_on_small_sets_are_counted_as_oeis_a001035() {
        // Labelled posets: 1, 3, 19, 219, 4231 (OEIS A001035).
        let counts: Vec<usize> = (1..=5).map(|n| every_order(n).len()).collect();
        assert_eq!(counts, [1, 3, 19, 219, 4231]);
    }

    #[test]
    fn hasse_drops_implied_pairs() {
        // 0 < 1 < 2 and 0 < 2: only the two covering pairs.
        let o = Order::from_fn(3, |a, b| a < b);
        assert_eq!(o.hasse(), [(0, 1), (1, 2)]);
    }
}
