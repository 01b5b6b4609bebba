//! SMT encoding of the lattice laws: one self-contained SMT-LIB 2 script per check, shared by
//! the committed proof obligations (`proofs/`) and the in-process z3 verdict, so the two can
//! never drift apart. The only module that names z3 (in `solve`, behind the `z3` feature; on
//! Linux `libz3` loads the library when z3 is first asked, see [`z3_available`]).
//!
//! Encoding (docs/smt.md): dtype `i` is the bit-vector constant `i`, and the constant `n` is
//! "undefined"; the join table is an uninterpreted function `join` pinned by one ground
//! equation per cell, with undefined absorbing. Each script asserts the domain of the witness
//! variables and the *negation* of one law, so `unsat` means the law holds and a model is a
//! counterexample.

#[cfg(all(feature = "z3", target_os = "linux"))]
mod libz3;
#[cfg(feature = "z3")]
pub mod solve;

/// `Ok` when z3 can answer in this process; else why not and what to do: this typejoin was
/// built without the `z3` feature, or libz3, which the binary loads when z3 is first asked
/// (Linux; elsewhere it is linked), cannot be loaded. Ask before the first query: a query
/// without the library aborts the process.
pub fn z3_available() -> Result<(), String> {
    #[cfg(all(feature = "z3", target_os = "linux"))]
    return libz3::load();
    #[cfg(all(feature = "z3", not(target_os = "linux")))]
    return Ok(());
    #[cfg(not(feature = "z3"))]
    Err("this typejoin was built without z3 (the default `z3` feature)".into())
}

use crate::Input;
use crate::laws::{Check, Ctx, InputKind, describe};
use crate::policy::provenance::sha256_hex;
use crate::policy::table::Table;

/// One proof obligation: an SMT-LIB script for one check of one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obligation {
    pub check: Check,
    /// File stem under `proofs/NAME/`, e.g. `associativity`.
    pub stem: &'static str,
    /// The witness variables, in order (`a`, `b`, `c`), as the check's dtypes.
    pub vars: &'static [&'static str],
    /// `true` when the exhaustive checker says the law holds (the script is `unsat`).
    pub expect_unsat: bool,
    pub text: String,
}

impl Check {
    /// The obligation's file stem.
    pub fn stem(self) -> &'static str {
        match self {
            Check::Uniqueness => "uniqueness",
            Check::Existence => "existence",
            Check::Commutativity => "commutativity",
            Check::Idempotence => "idempotence",
            Check::Associativity => "associativity",
            Check::DefinednessAssociativity => "definedness-associativity",
            Check::NaryFold => "nary-fold",
            Check::Antisymmetry => "induced-order-antisymmetry",
            Check::Transitivity => "induced-order-transitivity",
            Check::NotLeast => "induced-order-least",
        }
    }

    /// What the obligation proves, in words.
    pub fn statement(self) -> &'static str {
        match self {
            Check::Uniqueness => {
                "joins are unique: no pair is undefined while it has a common upper bound"
            }
            Check::Existence => "joins exist: every pair has a join",
            Check::Commutativity => "commutativity: a ∨ b = b ∨ a",
            Check::Idempotence => "idempotence: a ∨ a = a",
            Check::Associativity => {
                "associativity: (a ∨ b) ∨ c = a ∨ (b ∨ c) wherever both sides are defined"
            }
            Check::DefinednessAssociativity => {
                "definedness-associativity: (a ∨ b) ∨ c is defined exactly when a ∨ (b ∨ c) is"
            }
            Check::NaryFold => {
                "n-ary result_type = left fold: all six operand orders of {a, b, c} fold alike"
            }
            Check::Antisymmetry => "the induced order (x ≤ y ⇔ x ∨ y = y) is antisymmetric",
            Check::Transitivity => "the induced order (x ≤ y ⇔ x ∨ y = y) is transitive",
            Check::NotLeast => {
                "every cell is a least upper bound of the induced order, and undefined only without upper bounds"
            }
        }
    }

    pub fn vars(self) -> &'static [&'static str] {
        match self.arity() {
            1 => &["a"],
            2 => &["a", "b"],
            _ => &["a", "b", "c"],
        }
    }

    /// The negated law over `a`, `b`, `c` (and `x`, existential, where declared).
    fn violation(self) -> &'static str {
        match self {
            Check::Uniqueness => "(and (bvult a b) (= (join a b) undef) (le a x) (le b x))",
            Check::Existence => {
                "(and (bvult a b) (= (join a b) undef)\n     (forall ((y D)) (=> (dom y) (not (and (le a y) (le b y))))))"
            }
            Check::Commutativity => "(and (bvult a b) (distinct (join a b) (join b a)))",
            Check::Idempotence => "(distinct (join a a) a)",
            Check::Associativity => {
                "(let ((l (join (join a b) c)) (r (join a (join b c))))\n  (and (distinct l undef) (distinct r undef) (distinct l r)))"
            }
            Check::DefinednessAssociativity => {
                "(let ((l (join (join a b) c)) (r (join a (join b c))))\n  (distinct (= l undef) (= r undef)))"
            }
            Check::NaryFold => {
                "(and (bvule a b) (bvule b c)\n  (let ((f1 (join (join a b) c)) (f2 (join (join a c) b)) (f3 (join (join b a) c))\n        (f4 (join (join b c) a)) (f5 (join (join c a) b)) (f6 (join (join c b) a)))\n    (not (and (= f1 f2) (= f1 f3) (= f1 f4) (= f1 f5) (= f1 f6)))))"
            }
            Check::Antisymmetry => "(and (bvult a b) (le a b) (le b a))",
            Check::Transitivity => "(and (le a b) (le b c) (not (le a c)))",
            Check::NotLeast => {
                "(let ((m (join a b)))\n  (or (and (distinct m undef)\n           (or (not (le a m)) (not (le b m)) (and (le a x) (le b x) (not (le m x)))))\n      (and (= m undef) (le a x) (le b x))))"
            }
        }
    }

    /// Whether the script uses the auxiliary existential `x`.
    fn uses_x(self) -> bool {
        matches!(self, Check::Uniqueness | Check::NotLeast)
    }
}

/// Bit-vector width for `n` dtypes plus "undefined", in whole hex digits.
pub fn width(n: usize) -> u32 {
    let bits = usize::BITS - n.leading_zeros();
    bits.div_ceil(4).max(1) * 4
}

fn hex(v: usize, width: u32) -> String {
    format!("#x{:0w$x}", v, w = (width / 4) as usize)
}

/// The checks that make obligations for an input (existence only where it is a law).
pub fn checks(input: &Input) -> Vec<Check> {
    match input {
        Input::Policy { lattice, .. } => Check::for_input(InputKind::Lattice, lattice.partial()),
        Input::Observed(_) => Check::for_input(InputKind::Table, false),
    }
}

/// The first violation of `check` in index order, found exhaustively.
pub fn first_violation(check: Check, ctx: Ctx) -> Option<Vec<usize>> {
    let n = ctx.table.n();
    let mut idx = vec![0; check.arity()];
    if n == 0 {
        return None;
    }
    loop {
        if describe(check, ctx, &idx).is_some() {
            return Some(idx);
        }
        // Odometer increment, last position fastest.
        let mut k = idx.len();
        loop {
            if k == 0 {
                return None;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < n {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Every proof obligation of an input, with the expected answers from the exhaustive checker.
/// Each header names `source` (the input's path as shown to users) and the `command` that
/// regenerates it; nothing else of the source goes in (see `script`).
pub fn obligations(input: &Input, source: &str, command: &str) -> Vec<Obligation> {
    let t = input.table();
    let ctx = ctx_of(input);
    let prefix = table_prefix(t);
    checks(input)
        .into_iter()
        .map(|check| {
            let witness = first_violation(check, ctx);
            let text = script(
                check,
                t,
                &prefix,
                (source, command),
                witness.as_deref(),
                ctx,
            );
            Obligation {
                check,
                stem: check.stem(),
                vars: check.vars(),
                expect_unsat: witness.is_none(),
                text,
            }
        })
        .collect()
}

/// The describe-context of an input.
pub fn ctx_of(input: &Input) -> Ctx<'_> {
    match input {
        Input::Policy { joins, .. } => Ctx {
            table: &joins.table,
            joins: Some(joins),
        },
        Input::Observed(o) => Ctx {
            table: &o.table,
            joins: None,
        },
    }
}

/// Declarations and the table: everything but the law, shared by all of an input's scripts.
pub fn table_prefix(t: &Table) -> String {
    let n = t.n();
    let w = width(n);
    let mut s = String::with_capacity(n * n * 40 + 512);
    s += &format!("(define-sort D () (_ BitVec {w}))\n");
    s += "(declare-fun join (D D) D)\n";
    s += &format!("(define-fun undef () D {})\n", hex(n, w));
    s += "(define-fun dom ((v D)) Bool (bvult v undef))\n";
    s += "(define-fun le ((p D) (q D)) Bool (= (join p q) q))\n";
    s += "; the table, one cell per line; undefined is absorbing\n";
    for a in 0..n {
        for b in 0..n {
            let v = t.get(a, b).unwrap_or(n);
            s += &format!(
                "(assert (= (join {} {}) {}))\n",
                hex(a, w),
                hex(b, w),
                hex(v, w)
            );
        }
    }
    for x in 0..=n {
        s += &format!(
            "(assert (= (join undef {x}) undef))\n(assert (= (join {x} undef) undef))\n",
            x = hex(x, w)
        );
    }
    s
}

/// One obligation's text: the header, then [`body`]. The header names the source by path only
/// and hashes what the proof depends on (the dtype names and the body: the table and the law),
/// never the source's whole text, so a comment or a lint edit in the policy leaves the file
/// byte-identical.
fn script(
    check: Check,
    t: &Table,
    prefix: &str,
    (source, command): (&str, &str),
    witness: Option<&[usize]>,
    ctx: Ctx,
) -> String {
    let n = t.n();
    let w = width(n);
    let body = body(check, prefix);
    let sha = {
        let mut names = t.names.join("\n");
        names.push('\n');
        sha256_hex(&(names + &body))
    };
    let mut s = String::with_capacity(prefix.len() + 2048);
    s += &format!(
        "; @generated by typejoin {} — do not edit; regenerate with `{}`\n",
        env!("CARGO_PKG_VERSION"),
        command
    );
    s += &format!("; proves: {}\n", check.statement());
    s += &format!(
        "; source: {}, its join table of {n} dtypes (sha256 of the names and the script below: {sha})\n",
        source
    );
    match witness {
        None => {
            s += "; expect: unsat\n";
            s += ";         no counterexample exists: the law holds\n";
        }
        Some(idx) => {
            s += "; expect: sat\n";
            let names: Vec<String> = check
                .vars()
                .iter()
                .zip(idx)
                .map(|(v, &i)| format!("{v} = {}", t.name(i)))
                .collect();
            let detail = describe(check, ctx, idx).map(|d| d.2).unwrap_or_default();
            s += &format!(
                ";         the law fails; first witness {}: {detail}\n",
                names.join(", ")
            );
        }
    }
    s += &format!(
        "; encoding: dtype i is the {w}-bit vector i, {} is \"undefined\"; (join x y) is the table (docs/smt.md)\n",
        hex(n, w)
    );
    s += ";";
    for (i, name) in t.names.iter().enumerate() {
        let item = format!(" {}={name}", hex(i, w));
        s += &item;
        if i % 6 == 5 && i + 1 < n {
            s += "\n;";
        }
    }
    s += "\n";
    let status = if witness.is_none() { "unsat" } else { "sat" };
    s += &format!("(set-info :status {status})\n");
    s += &body;
    s
}

/// Everything after the header: logic, table, witness variables, the negated law, check-sat.
/// Proof files and the in-process verdict run exactly this text.
pub fn body(check: Check, prefix: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + 1024);
    s += if check == Check::Existence {
        "(set-logic UFBV)\n"
    } else {
        "(set-logic QF_UFBV)\n"
    };
    s += prefix;
    s += "; the witness: dtypes of the table\n";
    for v in check.vars() {
        s += &format!("(declare-const {v} D)\n(assert (dom {v}))\n");
    }
    if check.uses_x() {
        s += "(declare-const x D)\n(assert (dom x))\n";
    }
    s += "; the negated law: a model is a counterexample\n";
    s += &format!("(assert {})\n", check.violation());
    s += "(check-sat)\n";
    s
}

/// The expected answer recorded in an obligation's header (`; expect: sat|unsat`).
pub fn expected(text: &str) -> Option<bool> {
    text.lines()
        .take_while(|l| l.starts_with(';'))
        .find_map(|l| l.strip_prefix("; expect: "))
        .and_then(|v| match v.trim() {
            "unsat" => Some(true),
            "sat" => Some(false),
            _ => None,
        })
}

/// Git's object id of a file with this content (`git hash-object`).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width(3), 4);
        assert_eq!(width(15), 4);
        assert_eq!(width(16), 8);
        assert_eq!(width(35), 8);
        assert_eq!(width(300), 12);
        assert_eq!(hex(35, 8), "#x23");
    }
}
