//! `typejoin synth`: a lattice from requirements, or the smallest set of requirements that
//! cannot hold together (docs/repair.md).
//!
//! Each requirement of the file is a Boolean constant `r{i}` that implies its clauses over the
//! order ([`Encoding`]). z3 first checks them all as assumptions: unsatisfiable, its core is
//! shrunk by deletion (each requirement dropped in turn, kept out when the rest is still
//! unsatisfiable) to a minimal conflicting set, each named by its line. Satisfiable, they are
//! asserted and z3's optimiser picks, among the (partial) lattices that meet them, one with the
//! fewest lossy promotions (`a ≤ c` where `a → c` loses values), then the fewest order
//! relations. Joins are asserted lazily, as in repair ([`Encoding::solve`]).

use crate::design::order_search::{Ask, Encoding, Solved, le, policy_body, toml_string};
use crate::laws::CheckOptions;
use crate::order::input::Input;
use crate::order::lattice::JoinTable;
use crate::policy::requirements::{Requirement, Requirements, Rule};
use crate::safety::Numeric;

/// A synthesised lattice.
#[derive(Clone, Debug)]
pub struct Synthesized {
    pub path: String,
    pub name: String,
    pub dtypes: Vec<String>,
    /// The covering pairs (the policy's edges).
    pub edges: Vec<(usize, usize)>,
    /// Lossy promotions, and order relations, of the optimum.
    pub lossy: usize,
    pub relations: usize,
    pub requirements: usize,
    pub rounds: usize,
    /// The policy, as a `.toml` file that `typejoin check` passes.
    pub policy: String,
}

/// Requirements that cannot hold together.
#[derive(Clone, Debug)]
pub struct Conflict {
    pub path: String,
    pub name: String,
    /// A minimal unsatisfiable subset: without any one of them, the rest can hold.
    pub core: Vec<Requirement>,
    pub requirements: usize,
}

/// What `synth` answers.
#[derive(Clone, Debug)]
pub enum Synthesis {
    Found(Box<Synthesized>),
    Conflict(Conflict),
}

/// Why `synth` has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SynthError {
    /// z3 is not available, or gave up (the reason).
    Undecided(String),
    /// The lattice found breaks a law or a requirement: a bug in typejoin.
    Internal(String),
}

impl std::fmt::Display for SynthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SynthError::Undecided(m) => write!(f, "undecided: {m}"),
            SynthError::Internal(m) => write!(
                f,
                "internal error: {m}. This is a bug in typejoin; please report it with this file."
            ),
        }
    }
}

/// The dtypes of `names` a class set forbids promoting between: `(x, c)` pairs.
fn forbidden(names: &[String], rule: &Rule) -> Vec<(usize, usize)> {
    let Rule::Forbid { from, to, classes } = rule else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (x, xn) in names.iter().enumerate() {
        for (c, cn) in names.iter().enumerate() {
            if x == c || !from.contains(xn) || !to.contains(cn) {
                continue;
            }
            let found = Numeric::classes_between(xn, cn).unwrap_or_default();
            if found.iter().any(|k| classes.iter().any(|n| n == k.key())) {
                out.push((x, c));
            }
        }
    }
    out
}

fn width(name: &str) -> Option<u32> {
    Numeric::named(name).map(|n| n.width())
}

/// The pairs (`a ≤ b`, both of at most `operands` bits) a bound covers, and the joins it
/// allows them.
fn bounded(names: &[String], operands: u32, result: u32) -> (Vec<(usize, usize)>, Vec<usize>) {
    let narrow = |i: usize, w: u32| width(&names[i]).is_some_and(|x| x <= w);
    let n = names.len();
    let pairs = (0..n)
        .flat_map(|a| (a..n).map(move |b| (a, b)))
        .filter(|&(a, b)| narrow(a, operands) && narrow(b, operands))
        .collect();
    (pairs, (0..n).filter(|&c| narrow(c, result)).collect())
}

/// Asserts requirement `i`'s clauses, implied by its constant `r{i}`.
fn encode(enc: &mut Encoding, names: &[String], partial: bool, i: usize, rule: &Rule) {
    let r = format!("r{i}");
    enc.declare(&r);
    match *rule {
        Rule::Join { a, b, c: Some(c) } => enc.lub(&r, a, b, c),
        Rule::Join { a, b, c: None } => enc.no_upper_bound(&r, a, b),
        Rule::Below { a, b } => enc.assert(&format!("(=> {r} {})", le(a, b))),
        Rule::NotBelow { a, b } => enc.assert(&format!("(=> {r} (not {}))", le(a, b))),
        Rule::Forbid { .. } => {
            for (x, c) in forbidden(names, rule) {
                enc.assert(&format!("(=> {r} (not {}))", le(x, c)));
            }
        }
        Rule::Bound { operands, result } => {
            let (pairs, allowed) = bounded(names, operands, result);
            for (a, b) in pairs {
                if a == b {
                    if !allowed.contains(&a) {
                        enc.assert(&format!("(not {r})"));
                    }
                    continue;
                }
                let mut any = String::new();
                for &c in &allowed {
                    let q = format!("q{i}_{a}_{b}_{c}");
                    enc.declare(&q);
                    enc.lub(&q, a, b, c);
                    any += &format!(" {q}");
                }
                if partial {
                    let q = format!("q{i}_{a}_{b}_n");
                    enc.declare(&q);
                    enc.no_upper_bound(&q, a, b);
                    any += &format!(" {q}");
                }
                enc.assert(&format!("(=> {r} (or false{any}))"));
            }
        }
    }
}

/// Whether a requirement holds of a join table (`joins` over the requirements' dtypes).
pub fn holds(names: &[String], rule: &Rule, joins: &JoinTable) -> bool {
    let t = &joins.table;
    let leq = |a: usize, b: usize| t.get(a, b) == Some(b);
    match *rule {
        Rule::Join { a, b, c } => t.get(a, b) == c && !joins.ambiguous.contains(a, b),
        Rule::Below { a, b } => leq(a, b),
        Rule::NotBelow { a, b } => !leq(a, b),
        Rule::Forbid { .. } => forbidden(names, rule).iter().all(|&(x, c)| !leq(x, c)),
        Rule::Bound { operands, result } => {
            let (pairs, allowed) = bounded(names, operands, result);
            pairs
                .iter()
                .all(|&(a, b)| t.get(a, b).is_none_or(|c| allowed.contains(&c)))
        }
    }
}

/// A lattice meeting every requirement of `req` with the fewest lossy promotions, then the
/// fewest order relations; or a minimal set of requirements that conflict.
pub fn synthesize(req: &Requirements, timeout_ms: u32) -> Result<Synthesis, SynthError> {
    let names = &req.dtypes;
    let n = names.len();
    if let Some(why) = crate::design::order_search::too_many(n) {
        return Err(SynthError::Undecided(why));
    }
    let mut enc = Encoding::new(n, req.partial);
    for (i, item) in req.items.iter().enumerate() {
        encode(&mut enc, names, req.partial, i, &item.rule);
    }
    let start = std::time::Instant::now();
    let left = || (timeout_ms as u128).saturating_sub(start.elapsed().as_millis()) as u32;
    let all: Vec<usize> = (0..req.items.len()).collect();
    let assume = |ix: &[usize]| -> Vec<String> { ix.iter().map(|i| format!("r{i}")).collect() };
    let check = |enc: &mut Encoding, ix: &[usize]| {
        let ms = left();
        enc.solve(
            names,
            Ask::Satisfy,
            &assume(ix),
            ms,
            |_| Vec::new(),
            |_, _, _| 0,
        )
    };
    match check(&mut enc, &all) {
        Solved::Unknown(why) => return Err(SynthError::Undecided(why)),
        Solved::Unsat { core, .. } => {
            // Deletion: drop each requirement in turn; keep it out when the rest still conflict.
            let mut core: Vec<usize> = core.iter().map(|&k| all[k]).collect();
            let mut i = 0;
            while i < core.len() {
                let mut without = core.clone();
                without.remove(i);
                match check(&mut enc, &without) {
                    Solved::Unsat { core: sub, .. } => {
                        core = sub.iter().map(|&k| without[k]).collect();
                        i = 0;
                    }
                    Solved::Found { .. } => i += 1,
                    Solved::Unknown(why) => return Err(SynthError::Undecided(why)),
                }
            }
            return Ok(Synthesis::Conflict(Conflict {
                path: req.path.clone(),
                name: req.name.clone(),
                core: core.iter().map(|&i| req.items[i].clone()).collect(),
                requirements: req.items.len(),
            }));
        }
        Solved::Found { .. } => {}
    }
    for i in 0..req.items.len() {
        enc.assert(&format!("r{i}"));
    }
    let mut lossy = Vec::new();
    for a in 0..n {
        for c in 0..n {
            if a != c && Numeric::loses_values(&names[a], &names[c]) {
                enc.soft(&format!("(not {})", le(a, c)), 1, "lossy");
                lossy.push((a, c));
            }
        }
    }
    for a in 0..n {
        for c in 0..n {
            if a != c {
                enc.soft(&format!("(not {})", le(a, c)), 1, "relations");
            }
        }
    }
    let (order, joins, rounds) = match enc.solve(
        names,
        Ask::Optimize,
        &[],
        left(),
        |_| Vec::new(),
        |_, _, _| 0,
    ) {
        Solved::Found {
            order,
            joins,
            rounds,
            ..
        } => (order, joins, rounds),
        Solved::Unsat { .. } => {
            return Err(SynthError::Internal(
                "the requirements were satisfiable, then not".into(),
            ));
        }
        Solved::Unknown(why) => return Err(SynthError::Undecided(why)),
    };
    let edges = order.hasse();
    let policy = policy_text(req, &edges);
    let input = Input::parse(&format!("{}.toml", req.name), &policy)
        .map_err(|e| SynthError::Internal(format!("the policy does not load: {e:?}")))?;
    if !input.check(CheckOptions::default()).ok() || input.table() != &joins.table {
        return Err(SynthError::Internal(
            "the synthesised policy breaks a law".into(),
        ));
    }
    if let Some(item) = req.items.iter().find(|r| !holds(names, &r.rule, &joins)) {
        return Err(SynthError::Internal(format!(
            "the synthesised lattice breaks line {}: {}",
            item.line, item.text
        )));
    }
    let relations = (0..n)
        .flat_map(|a| (0..n).map(move |c| (a, c)))
        .filter(|&(a, c)| a != c && order.leq(a, c))
        .count();
    Ok(Synthesis::Found(Box::new(Synthesized {
        path: req.path.clone(),
        name: req.name.clone(),
        dtypes: names.clone(),
        edges,
        lossy: lossy.iter().filter(|&&(a, c)| order.leq(a, c)).count(),
        relations,
        requirements: req.items.len(),
        rounds,
        policy,
    })))
}

/// The synthesised policy: the requirements' name, summary and source, the order's covering
/// pairs as `[promotes]`.
fn policy_text(req: &Requirements, edges: &[(usize, usize)]) -> String {
    let mut out = format!(
        "# Generated by `typejoin synth {}`: the lattice with the fewest lossy promotions, then\n\
         # the fewest order relations, that meets its {} requirements.\n",
        req.path,
        req.items.len()
    );
    out += &format!("name = {}\n", toml_string(&req.name));
    if let Some(s) = &req.summary {
        out += &format!("summary = {}\n", toml_string(s));
    }
    if let Some(s) = &req.source {
        out += &format!("source = {}\n", toml_string(s));
    }
    out + &policy_body(&req.dtypes, req.partial, edges)
}
