//! `typejoin repair`: the fewest join cells to change so that a table is a lattice (or a
//! partial lattice), found by z3's optimiser and proved minimal (docs/repair.md).
//!
//! The unit is a pair `{a, b}`: it is kept when the repaired join is the table's `a ∨ b` and
//! `b ∨ a`, and changed otherwise (one change, whatever the two cells held). A pair the table
//! answers two ways (`a ∨ b ≠ b ∨ a`), a dtype with `a ∨ a ≠ a`, and (unless `partial`) a pair
//! that raises are changed in every repair: *forced*. Each other pair is a soft constraint of
//! weight 1, "the order's join of a and b is the table's" ([`Encoding::lub`]), or
//! `lossy_cost` when the repaired join loses values of an operand that the table's did not.
//! z3 minimises the total over the partial orders of the dtypes ([`Encoding::solve`]); the
//! repair is the join table of the optimum, written as a policy and checked by the same laws
//! as every input. Optimality is then proved by MaxSAT resolution ([`lower_bound`]): a
//! sequence of cores, each a set of soft constants that cannot all hold (z3 answers `unsat`),
//! each raising the lower bound by one, until it meets the cost (the script is
//! [`Repair::proof`], re-checked by the `z3` binary in the tests). A single query "no repair
//! costs one less" is the same claim, but z3 does not decide it in minutes even on
//! TensorFlow's 20 dtypes; the cores take seconds.

use crate::design::order_search::{Ask, Encoding, Order, Solved, policy_body, toml_string};
use crate::laws::CheckOptions;
use crate::order::input::Input;
use crate::order::lattice::JoinTable;
use crate::policy::table::Table;
use crate::safety::{Class, Engine, Numeric, classify};

/// What `repair` may change and how it weighs it.
#[derive(Clone, Debug)]
pub struct Options {
    /// The repaired table may leave pairs without a join (a partial lattice): exactly those
    /// with no common upper bound.
    pub partial: bool,
    /// Pairs that must keep the table's join (`--keep`).
    pub keep: Vec<(usize, usize)>,
    /// The cost of a change whose new join loses values of an operand (precision, overflow,
    /// sign, a component); 1 weighs every change alike.
    pub lossy_cost: u64,
    /// Wall-clock limit of the search and of the proof, each, in milliseconds.
    pub timeout_ms: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            partial: false,
            keep: Vec::new(),
            lossy_cost: 1,
            timeout_ms: 120_000,
        }
    }
}

/// One changed pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub a: usize,
    pub b: usize,
    /// The table's `a ∨ b` and `b ∨ a`.
    pub from: [Option<usize>; 2],
    /// The repaired join (`None`: no upper bound).
    pub to: Option<usize>,
    /// Why it is forced, when every repair changes it.
    pub forced: Option<&'static str>,
    /// What `a → to` and `b → to` do to values.
    pub safety: Vec<Loss>,
    /// What it costs.
    pub cost: u64,
}

/// What converting an operand to its new join does to values: the most severe class, and its
/// smallest witness (a value, what it becomes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    pub from: usize,
    pub class: Class,
    pub witness: Option<(String, String)>,
}

/// How sure the repair is that nothing cheaper exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Optimality {
    /// Proved: every change is forced, or `cores` steps of MaxSAT resolution, each a core z3
    /// answers `unsat`, account for every unforced change ([`Repair::proof`] re-runs them).
    Proved { cores: usize },
    /// The optimum of z3's optimiser (its lower bound met its upper bound), not certified by
    /// cores here: a weighted cost, or a proof out of time (the reason).
    Optimiser(String),
    /// Every partial order of the dtypes was tried.
    Exhaustive,
}

/// A repaired table.
#[derive(Clone, Debug)]
pub struct Repair {
    pub path: String,
    pub name: String,
    pub partial: bool,
    pub lossy_cost: u64,
    /// The input's table.
    pub original: Table,
    /// The repaired join table.
    pub table: Table,
    /// The order's covering pairs (the repaired policy's edges).
    pub edges: Vec<(usize, usize)>,
    pub changes: Vec<Change>,
    pub cost: u64,
    pub optimality: Optimality,
    /// Search rounds (each a z3 query; docs/repair.md).
    pub rounds: usize,
    /// The certificate of [`Optimality::Proved`]: an SMT-LIB script of the search's
    /// constraints with one `(check-sat-assuming …)` per core, each answered `unsat` (`None`
    /// when every change is forced or the optimality is not proved this way).
    pub proof: Option<String>,
    /// The repaired policy, as a `.toml` file that `typejoin check` passes (`None` when the
    /// table names dtypes outside the catalogue, whose formats a policy would declare).
    pub policy: Option<String>,
}

/// Why a repair cannot be given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepairError {
    /// A pinned pair has no one join to keep.
    CannotKeep(String),
    /// The pinned pairs (or the dtypes) admit no lattice.
    Infeasible(String),
    /// z3 is not available, or gave up before it found a repair.
    Undecided(String),
    /// More dtypes than a search takes (`order_search::MAX_DTYPES`).
    TooLarge(String),
    /// The repaired policy did not pass the laws: a bug in typejoin.
    Internal(String),
}

impl std::fmt::Display for RepairError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepairError::CannotKeep(m) | RepairError::Infeasible(m) | RepairError::TooLarge(m) => {
                f.write_str(m)
            }
            RepairError::Undecided(m) => write!(f, "no repair found: {m}"),
            RepairError::Internal(m) => write!(
                f,
                "internal error: {m}. This is a bug in typejoin; please report it with this file."
            ),
        }
    }
}

/// The cost model: the table, what is forced, what loses values.
struct Costs<'a> {
    t: &'a Table,
    partial: bool,
    lossy_cost: u64,
    /// `lossy[x * n + c]`: `x → c` loses values (only when `lossy_cost > 1`).
    lossy: Vec<bool>,
}

impl Costs<'_> {
    /// The cost model of `t` under `opts` (what loses values is classified only when it costs
    /// more).
    fn new<'a>(t: &'a Table, opts: &Options) -> Costs<'a> {
        let n = t.n();
        let lossy = if opts.lossy_cost > 1 {
            (0..n * n)
                .map(|i| i / n != i % n && Numeric::loses_values(t.name(i / n), t.name(i % n)))
                .collect()
        } else {
            Vec::new()
        };
        Costs {
            t,
            partial: opts.partial,
            lossy_cost: opts.lossy_cost.max(1),
            lossy,
        }
    }

    fn n(&self) -> usize {
        self.t.n()
    }

    /// Why every repair changes the pair (`a < b`) or the dtype (`a == b`).
    fn forced(&self, a: usize, b: usize) -> Option<&'static str> {
        let (x, y) = (self.t.get(a, b), self.t.get(b, a));
        if a == b {
            (x != Some(a)).then_some("a ∨ a must be a")
        } else if x != y {
            Some("the table answers a ∨ b and b ∨ a differently")
        } else if x.is_none() && !self.partial {
            Some("the pair raises, and the repair is not partial (--partial)")
        } else {
            None
        }
    }

    /// Whether `c` as the join of `a` and `b` loses values the table's join did not.
    fn lossy(&self, a: usize, b: usize, c: Option<usize>) -> bool {
        let n = self.n();
        let Some(c) = c else { return false };
        self.lossy_cost > 1
            && Some(c) != self.t.get(a, b)
            && Some(c) != self.t.get(b, a)
            && (self.lossy[a * n + c] || self.lossy[b * n + c])
    }

    /// The cost of the join `c` for the pair (`a ≤ b`).
    fn cost(&self, a: usize, b: usize, c: Option<usize>) -> u64 {
        let kept = c == self.t.get(a, b) && c == self.t.get(b, a);
        if kept {
            0
        } else if self.lossy(a, b, c) {
            self.lossy_cost
        } else {
            1
        }
    }

    /// The cost of a whole join table, and its changes.
    fn changes(&self, j: &Table) -> Vec<(usize, usize, Option<usize>, u64)> {
        let n = self.n();
        let mut out = Vec::new();
        for a in 0..n {
            for b in a..n {
                let c = j.get(a, b);
                let cost = self.cost(a, b, c);
                if cost > 0 {
                    out.push((a, b, c, cost));
                }
            }
        }
        out
    }
}

/// The fewest changes that make `input`'s join table a lattice (a partial one with
/// `opts.partial`), proved minimal.
pub fn repair(input: &Input, opts: &Options) -> Result<Repair, RepairError> {
    let t = input.table();
    let n = t.n();
    if let Some(why) = crate::design::order_search::too_many(n) {
        return Err(RepairError::TooLarge(why));
    }
    let costs = Costs::new(t, opts);
    for &(a, b) in &opts.keep {
        if let Some(why) = costs.forced(a.min(b), a.max(b)) {
            return Err(RepairError::CannotKeep(format!(
                "cannot keep {} ∨ {}: {}",
                t.name(a),
                t.name(b),
                why.replace("a ∨ b", &format!("{} ∨ {}", t.name(a), t.name(b)))
            )));
        }
    }
    let Searched {
        order,
        joins,
        rounds,
        enc,
        softs,
    } = search(&costs, &opts.keep, opts.timeout_ms)?;
    finish(
        input,
        &costs,
        opts,
        &order,
        &joins,
        rounds,
        Some((&enc, &softs)),
    )
}

/// The exhaustive search: every partial order of at most five dtypes, the cheapest kept (the
/// first in enumeration order among equals). What the tests hold the z3 search to.
pub fn exhaustive(input: &Input, opts: &Options) -> Result<Repair, RepairError> {
    let t = input.table();
    let n = t.n();
    if n > 5 {
        return Err(RepairError::Undecided(format!(
            "the exhaustive search takes at most 5 dtypes, not {n}"
        )));
    }
    let costs = Costs::new(t, opts);
    let mut best: Option<(u64, Order, JoinTable)> = None;
    for order in crate::design::order_search::every_order(n) {
        let joins = order.lattice(&t.names, opts.partial).join_table();
        let ok = joins.ambiguous.is_empty()
            && (opts.partial || joins.table.undefined_cells() == 0)
            && opts.keep.iter().all(|&(a, b)| {
                let c = joins.table.get(a, b);
                c == t.get(a, b) && c == t.get(b, a)
            });
        if !ok {
            continue;
        }
        let cost: u64 = costs.changes(&joins.table).iter().map(|c| c.3).sum();
        if best.as_ref().is_none_or(|b| cost < b.0) {
            best = Some((cost, order, joins));
        }
    }
    let Some((_, order, joins)) = best else {
        return Err(RepairError::Infeasible(
            "no lattice keeps the pinned pairs".into(),
        ));
    };
    finish(input, &costs, opts, &order, &joins, 0, None)
}

/// What the z3 search ends with.
struct Searched {
    order: Order,
    joins: Box<JoinTable>,
    rounds: usize,
    /// The encoding at the last round, and its soft pairs' constants (for the proof).
    enc: Encoding,
    softs: Vec<String>,
}

/// The z3 search.
fn search(
    costs: &Costs,
    keep: &[(usize, usize)],
    timeout_ms: u32,
) -> Result<Searched, RepairError> {
    let t = costs.t;
    let n = t.n();
    let mut enc = Encoding::new(n, costs.partial);
    let mut softs = Vec::new();
    let weighted = costs.lossy_cost > 1;
    // What a candidate join costs beyond the 1 its pair's soft constraint already counts.
    let extra = |a: usize, b: usize, c: Option<usize>| {
        if costs.lossy(a, b, c) {
            costs.lossy_cost - 1
        } else {
            0
        }
    };
    for a in 0..n {
        for b in a + 1..n {
            if costs.forced(a, b).is_some() {
                if weighted {
                    enc.expand(a, b, |c| extra(a, b, c));
                }
                continue;
            }
            let lit = format!("k{a}_{b}");
            enc.declare(&lit);
            match t.get(a, b) {
                Some(c) => enc.lub(&lit, a, b, c),
                None => enc.no_upper_bound(&lit, a, b),
            }
            if keep.contains(&(a, b)) || keep.contains(&(b, a)) {
                enc.assert(&lit);
            } else {
                enc.soft(&lit, 1, "cost");
                softs.push(lit);
            }
        }
    }
    let names = t.names.clone();
    // Weighted, a changed pair's cost is exact only once its candidates carry their weights:
    // expand every changed pair the answer shows, until the answer changes no new pair.
    let more = |joins: &JoinTable| {
        if !weighted {
            return Vec::new();
        }
        costs
            .changes(&joins.table)
            .into_iter()
            .filter(|&(a, b, _, _)| a != b)
            .map(|(a, b, _, _)| (a, b))
            .collect()
    };
    match enc.solve(&names, Ask::Optimize, &[], timeout_ms, more, extra) {
        Solved::Found {
            order,
            joins,
            rounds,
        } => Ok(Searched {
            order,
            joins,
            rounds,
            enc,
            softs,
        }),
        Solved::Unsat { .. } => Err(RepairError::Infeasible(
            "no lattice keeps the pinned pairs (--keep)".into(),
        )),
        Solved::Unknown(why) => Err(RepairError::Undecided(why)),
    }
}

/// The repair of an order: its changes, its policy checked by the laws, and (with the
/// search's encoding) the proof that nothing cheaper exists.
fn finish(
    input: &Input,
    costs: &Costs,
    opts: &Options,
    order: &Order,
    joins: &JoinTable,
    rounds: usize,
    enc: Option<(&Encoding, &[String])>,
) -> Result<Repair, RepairError> {
    let t = costs.t;
    let edges = order.hasse();
    // The laws are checked on the repaired table itself, as `check` reads it back.
    let name = format!("{}-repaired", input.name());
    let back = Input::parse(&format!("{name}.json"), &joins.table.to_json(&name, "", ""))
        .map_err(|e| RepairError::Internal(format!("the repaired table does not load: {e}")))?;
    if !back.check(CheckOptions::default()).ok() {
        return Err(RepairError::Internal(
            "the repaired table breaks a law".into(),
        ));
    }
    // A policy names catalogue dtypes (or declares their formats, which a table does not
    // give): a table of other names has no policy.
    let named = t
        .names()
        .all(|d| crate::numeric::dtype::kind(d) != crate::numeric::dtype::Kind::Other);
    let policy = if named {
        let text = policy_text(input, &edges, opts);
        let repaired = Input::parse(&format!("{name}.toml"), &text).map_err(|e| {
            RepairError::Internal(format!("the repaired policy does not load: {e}"))
        })?;
        if !repaired.check(CheckOptions::default()).ok() || repaired.table() != &joins.table {
            return Err(RepairError::Internal(
                "the repaired policy breaks a law".into(),
            ));
        }
        Some(text)
    } else {
        None
    };
    let changes: Vec<Change> = costs
        .changes(&joins.table)
        .into_iter()
        .map(|(a, b, to, cost)| Change {
            a,
            b,
            from: [t.get(a, b), t.get(b, a)],
            to,
            forced: costs.forced(a, b),
            safety: to.map_or_else(Vec::new, |c| {
                let mut ops = vec![a];
                if b != a {
                    ops.push(b);
                }
                ops.into_iter()
                    .filter(|&x| x != c)
                    .filter_map(|x| {
                        let (f, to) = (Numeric::named(t.name(x))?, Numeric::named(t.name(c))?);
                        let (class, all, _) = classify(&f, &to, Engine::Search);
                        let w = all
                            .iter()
                            .find(|(k, _)| *k == class)
                            .map(|(_, w)| (w.value.clone(), w.becomes.clone()));
                        Some(Loss {
                            from: x,
                            class,
                            witness: w,
                        })
                    })
                    .collect()
            }),
            cost,
        })
        .collect();
    let cost: u64 = changes.iter().map(|c| c.cost).sum();
    // Every forced change costs at least 1 in any repair: a cost of one each is the least.
    let forced = changes.iter().filter(|c| c.forced.is_some()).count() as u64;
    let (optimality, proof) = match enc {
        None => (Optimality::Exhaustive, None),
        Some(_) if cost == forced => (Optimality::Proved { cores: 0 }, None),
        Some(_) if costs.lossy_cost > 1 => (
            Optimality::Optimiser("a weighted cost is not certified by cores".into()),
            None,
        ),
        Some((enc, softs)) => match lower_bound(enc, softs, cost - forced, opts.timeout_ms) {
            Ok(steps) => {
                let script = proof_script(input, enc, &steps, opts);
                (Optimality::Proved { cores: steps.len() }, Some(script))
            }
            Err(why) => (Optimality::Optimiser(why), None),
        },
    };
    Ok(Repair {
        path: input.path().to_string(),
        name: input.name().to_string(),
        partial: opts.partial,
        lossy_cost: costs.lossy_cost,
        original: t.clone(),
        table: joins.table.clone(),
        edges,
        changes,
        cost,
        optimality,
        rounds,
        proof,
        policy,
    })
}

/// One step of the lower-bound proof: a core (soft constants that cannot all hold), then the
/// definitions of the soft constants that replace it.
#[derive(Clone, Debug)]
struct Step {
    core: Vec<String>,
    defs: String,
}

/// A proof that at least `need` soft pairs change in every repair: core-guided MaxSAT
/// resolution (MaxRes, Narodytska and Bacchus 2014) over the search's constraints. Each step
/// finds a core of the current soft constants (z3: unsat under them), shrinks it by deletion,
/// and replaces its constants `c1..ck` by `r_i = c_i ∨ (c_{i+1} ∧ … ∧ c_k)` (i < k): every
/// assignment then costs exactly one more on the old constants than on the new, so after
/// `need` steps every repair costs at least `need`. `Err` when the soft constants left are
/// satisfiable first (the bound is lower: z3's optimiser was not at the optimum) or time.
fn lower_bound(
    enc: &Encoding,
    softs: &[String],
    need: u64,
    timeout_ms: u32,
) -> Result<Vec<Step>, String> {
    #[cfg(not(feature = "z3"))]
    {
        let _ = (enc, softs, need, timeout_ms);
        Err("this typejoin was built without z3".into())
    }
    #[cfg(feature = "z3")]
    {
        use crate::smt::solve::{Answer, session};
        let softs = softs.to_vec();
        session(enc.hard(), timeout_ms, move |check| {
            let mut soft: Vec<String> = softs;
            let mut steps: Vec<Step> = Vec::new();
            let mut pending = String::new();
            let unsat_alone = || "the constraints alone are unsatisfiable".to_string();
            while (steps.len() as u64) < need {
                let mut core: Vec<String> = match check(&pending, &soft) {
                    Answer::Unsat(core) if !core.is_empty() => {
                        core.iter().map(|&i| soft[i].clone()).collect()
                    }
                    Answer::Unsat(_) => return Err(unsat_alone()),
                    Answer::Sat(_) => {
                        return Err(format!(
                            "the cores prove {} of the {need} unforced changes",
                            steps.len()
                        ));
                    }
                    Answer::Unknown(why) => return Err(why),
                };
                pending.clear();
                // Deletion: a constant whose removal leaves the rest unsatisfiable is not
                // needed (z3's smaller core, when it gives one, is taken whole).
                let mut i = 0;
                while i < core.len() {
                    let mut without = core.clone();
                    without.remove(i);
                    match check("", &without) {
                        Answer::Unsat(sub) if !sub.is_empty() => {
                            core = sub.iter().map(|&k| without[k].clone()).collect();
                            i = 0;
                        }
                        Answer::Unsat(_) => return Err(unsat_alone()),
                        Answer::Sat(_) => i += 1,
                        Answer::Unknown(why) => return Err(why),
                    }
                }
                soft.retain(|x| !core.contains(x));
                let step = steps.len();
                let mut defs = String::new();
                // d_i = c_{i+1} ∧ … ∧ c_k, built from the end; r_i = c_i ∨ d_i.
                let k = core.len();
                for i in (0..k.saturating_sub(1)).rev() {
                    let d = format!("d{step}_{i}");
                    let tail = if i + 2 < k {
                        format!("(and {} d{step}_{})", core[i + 1], i + 1)
                    } else {
                        core[i + 1].clone()
                    };
                    let r = format!("r{step}_{i}");
                    defs += &format!(
                        "(declare-const {d} Bool)\n(assert (= {d} {tail}))\n\
                         (declare-const {r} Bool)\n(assert (= {r} (or {} {d})))\n",
                        core[i]
                    );
                    soft.push(r);
                }
                // Each text the solver reads is parsed on its own: the constants it names from
                // earlier texts are declared again (the same constants, by name and sort).
                pending = core
                    .iter()
                    .map(|c| format!("(declare-const {c} Bool)\n"))
                    .collect::<String>()
                    + &defs;
                steps.push(Step { core, defs });
            }
            Ok(steps)
        })?
    }
}

/// The certificate: the search's hard constraints, then each step's core (a
/// `(check-sat-assuming …)`, expected `unsat`) and the definitions that replace it.
fn proof_script(input: &Input, enc: &Encoding, steps: &[Step], opts: &Options) -> String {
    let mut out = format!(
        "; typejoin repair {}{}: every {}lattice differs from table `{}` in at least {} of its\n\
         ; unforced pairs. Expected: `unsat` for every (check-sat-assuming); each answers for one\n\
         ; step of MaxSAT resolution (docs/repair.md). k{{a}}_{{b}}: dtypes a and b keep their\n\
         ; join; l{{a}}_{{b}}: a ≤ b; j{{a}}_{{b}}_{{c}}: a ∨ b = c; r, d: a step's new soft constants.\n",
        input.path(),
        if opts.partial { " --partial" } else { "" },
        if opts.partial { "partial " } else { "" },
        input.name(),
        steps.len(),
    );
    out += enc.hard();
    for s in steps {
        out += &format!("(check-sat-assuming ({}))\n", s.core.join(" "));
        out += &s.defs;
    }
    out
}

/// The repaired policy: the input's dtypes, the order's covering pairs as `[promotes]`.
fn policy_text(input: &Input, edges: &[(usize, usize)], opts: &Options) -> String {
    let t = input.table();
    let mut out = format!(
        "# Generated by `typejoin repair {}{}`: the nearest {}lattice to `{}`.\n",
        input.path(),
        if opts.partial { " --partial" } else { "" },
        if opts.partial { "partial " } else { "" },
        input.name()
    );
    out += &format!(
        "name = {}\n",
        toml_string(&format!("{}-repaired", input.name()))
    );
    out += &format!(
        "summary = {}\n",
        toml_string(&format!(
            "{} with the fewest joins changed to make it a {}lattice",
            input.name(),
            if opts.partial { "partial " } else { "" }
        ))
    );
    out += &format!(
        "source = {}\n",
        toml_string(&format!("typejoin repair {}", input.path()))
    );
    out + &policy_body(&t.names, opts.partial, edges)
}
