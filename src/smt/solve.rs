//! z3 as the second verifier: runs the same scripts as `proofs/`, turns models into the
//! witnesses the exhaustive checker reports, and cross-checks the two engines.

use z3::ast::{BV, Bool};
use z3::{SatResult, Solver};

use super::{checks, ctx_of, table_prefix, width};
use crate::Input;
use crate::laws::{
    Check, Ctx, InputKind, Law, LawResult, Report, Status, Violation, describe, simplicity,
};

/// What z3 says about one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `unsat`: no counterexample.
    Holds,
    /// `sat`: counterexamples (dtype indices), all of them when `complete`.
    Violated {
        witnesses: Vec<Vec<usize>>,
        complete: bool,
    },
    /// The solver gave up (timeout, resource limit); the reason z3 gives.
    Unknown(String),
}

#[derive(Clone, Copy, Debug)]
pub struct Z3Options {
    /// Per-query timeout in milliseconds.
    pub timeout_ms: u32,
    /// Counterexamples to enumerate per check (blocking clauses); `usize::MAX` for all.
    pub limit: usize,
}

impl Default for Z3Options {
    fn default() -> Self {
        Z3Options {
            timeout_ms: 10_000,
            limit: 1,
        }
    }
}

/// Runs one SMT-LIB script and enumerates up to `limit` models of `vars` (bit-vectors of
/// `width` bits), each blocked before the next query. Every `check` gets `opts.timeout_ms`.
///
/// The time limit is enforced by our own watchdog thread calling `Z3_interrupt`, not by z3's
/// `timeout` parameter: the libz3 4.8 timer can stall when several solvers run on parallel
/// threads, which is exactly how `verify` and the test harness use it.
///
/// Each call gets a fresh z3 context, so its models (and the witnesses shown) depend only on
/// the script: a context reused across queries on a worker thread would answer with whatever
/// the thread solved before, and the output would vary from run to run.
pub fn solve(script: &str, vars: &[&str], width: u32, opts: Z3Options) -> Verdict {
    z3::with_z3_config(&z3::Config::new(), || solve_here(script, vars, width, opts))
}

/// [`solve`] in the thread's current context.
fn solve_here(script: &str, vars: &[&str], width: u32, opts: Z3Options) -> Verdict {
    use std::sync::{Condvar, Mutex};
    use std::time::{Duration, Instant};
    // The logic the script declares picks z3's non-incremental strategy for it, which is
    // markedly faster here than the default incremental solver; enumerating many models
    // re-solves after every blocking clause, where the incremental solver keeps what it learnt.
    let logic = script.lines().find_map(|l| {
        l.strip_prefix("(set-logic ")
            .and_then(|r| r.strip_suffix(')'))
    });
    let solver = if opts.limit > 1 {
        Solver::new()
    } else {
        logic.and_then(Solver::new_for_logic).unwrap_or_default()
    };
    solver.from_string(script);
    let consts: Vec<BV> = vars.iter().map(|v| BV::new_const(*v, width)).collect();
    let ctx = z3::Context::thread_local();
    let handle = ctx.handle();
    // (deadline of the running check, finished)
    let state: (Mutex<(Option<Instant>, bool)>, Condvar) =
        (Mutex::new((None, false)), Condvar::new());
    let timeout = Duration::from_millis(opts.timeout_ms as u64);
    let set = |deadline: Option<Instant>, done: bool| {
        let mut g = state.0.lock().unwrap_or_else(|e| e.into_inner());
        *g = (deadline, done);
        state.1.notify_all();
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut g = state.0.lock().unwrap_or_else(|e| e.into_inner());
            while !g.1 {
                match g.0 {
                    None => g = state.1.wait(g).unwrap_or_else(|e| e.into_inner()),
                    Some(deadline) => {
                        let now = Instant::now();
                        if now >= deadline {
                            handle.interrupt();
                            g.0 = None;
                        } else {
                            g = state
                                .1
                                .wait_timeout(g, deadline - now)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    }
                }
            }
        });
        let check = || {
            set(Some(Instant::now() + timeout), false);
            let r = solver.check();
            set(None, false);
            r
        };
        let verdict = enumerate(&solver, &consts, width, opts.limit, check);
        set(None, true);
        verdict
    })
}

fn enumerate(
    solver: &Solver,
    consts: &[BV],
    width: u32,
    limit: usize,
    mut check: impl FnMut() -> SatResult,
) -> Verdict {
    let mut found: Vec<Vec<usize>> = Vec::new();
    loop {
        match check() {
            SatResult::Unsat if found.is_empty() => return Verdict::Holds,
            SatResult::Unsat => {
                return Verdict::Violated {
                    witnesses: found,
                    complete: true,
                };
            }
            SatResult::Unknown => {
                let reason = solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "unknown".into());
                let reason = if reason == "canceled" {
                    "timeout".to_string()
                } else {
                    reason
                };
                return if found.is_empty() {
                    Verdict::Unknown(reason)
                } else {
                    Verdict::Violated {
                        witnesses: found,
                        complete: false,
                    }
                };
            }
            SatResult::Sat => {
                let Some(model) = solver.get_model() else {
                    return Verdict::Unknown("z3 answered sat without a model".into());
                };
                let values: Option<Vec<u64>> = consts
                    .iter()
                    .map(|c| model.eval(c, true).and_then(|v| v.as_u64()))
                    .collect();
                let Some(values) = values else {
                    return Verdict::Unknown(
                        "z3's model has no value for a witness variable".into(),
                    );
                };
                found.push(values.iter().map(|&v| v as usize).collect());
                if found.len() >= limit {
                    return Verdict::Violated {
                        witnesses: found,
                        complete: false,
                    };
                }
                let same: Vec<Bool> = consts
                    .iter()
                    .zip(&values)
                    .map(|(c, &v)| c.eq(BV::from_u64(v, width)))
                    .collect();
                let refs: Vec<&Bool> = same.iter().collect();
                solver.assert(Bool::and(&refs).not());
            }
        }
    }
}

/// z3's verdict on every check of an input, with the encoding of `proofs/`. Checks run on
/// parallel threads (z3's context is per thread); the result is in check order.
pub fn verify(input: &Input, opts: Z3Options) -> Vec<(Check, Verdict)> {
    let t = input.table();
    let prefix = table_prefix(t);
    let w = width(t.n());
    let checks = checks(input);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(checks.len());
    let mut results: Vec<Option<Verdict>> = vec![None; checks.len()];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&check) = checks.get(i) else {
                            break done;
                        };
                        done.push((
                            i,
                            solve(&super::body(check, &prefix), check.vars(), w, opts),
                        ));
                    }
                })
            })
            .collect();
        for h in handles {
            for (i, v) in h.join().expect("a z3 worker thread panicked") {
                results[i] = Some(v);
            }
        }
    });
    checks
        .into_iter()
        .zip(results)
        .map(|(c, v)| (c, v.expect("every check was solved")))
        .collect()
}

/// The engines disagree: always a bug in typejoin (or z3), never a property of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub path: String,
    pub law: Law,
    pub detail: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error: the exhaustive checker and z3 disagree on `{}` for {}: {}. This is a bug in typejoin; please report it with this file.",
            self.law.key(),
            self.path,
            self.detail
        )
    }
}

/// Checks that z3's verdicts agree with the exhaustive report: the same laws violated, every
/// z3 witness a real violation, and (where z3 enumerated all) the same witness count.
pub fn cross_check(
    input: &Input,
    report: &Report,
    verdicts: &[(Check, Verdict)],
) -> Result<(), Disagreement> {
    let ctx = ctx_of(input);
    let fail = |law: Law, detail: String| Disagreement {
        path: report.path.clone(),
        law,
        detail,
    };
    let mut laws: Vec<Law> = verdicts.iter().map(|(c, _)| c.law()).collect();
    laws.dedup();
    for law in laws {
        let mine: Vec<&(Check, Verdict)> =
            verdicts.iter().filter(|(c, _)| c.law() == law).collect();
        if mine.iter().any(|(_, v)| matches!(v, Verdict::Unknown(_))) {
            continue;
        }
        let mut z3_count = 0u64;
        let mut complete = true;
        for (check, v) in &mine {
            if let Verdict::Violated {
                witnesses,
                complete: c,
            } = v
            {
                complete &= *c;
                z3_count += witnesses.len() as u64;
                for w in witnesses {
                    if describe(*check, ctx, w).is_none() {
                        return Err(fail(
                            law,
                            format!("z3's witness {} is not a violation", names(ctx, w)),
                        ));
                    }
                }
            }
        }
        let z3_violated = z3_count > 0;
        let Some(result) = report.law(law) else {
            return Err(fail(law, "the exhaustive report lacks this law".into()));
        };
        let ex_violated = result.status == Status::Violated;
        if z3_violated != ex_violated {
            return Err(fail(
                law,
                format!(
                    "exhaustive says {}, z3 says {}",
                    if ex_violated { "violated" } else { "holds" },
                    if z3_violated { "violated" } else { "holds" }
                ),
            ));
        }
        if complete && z3_violated && z3_count != result.count {
            return Err(fail(
                law,
                format!(
                    "exhaustive counts {} violations, z3 enumerates {z3_count}",
                    result.count
                ),
            ));
        }
    }
    Ok(())
}

fn names(ctx: Ctx, w: &[usize]) -> String {
    let v: Vec<&str> = w
        .iter()
        .map(|&i| {
            if i < ctx.table.n() {
                ctx.table.name(i)
            } else {
                "?"
            }
        })
        .collect();
    format!("({})", v.join(", "))
}

/// A report from z3's verdicts alone (`check --engine z3`), in the exhaustive report's shape.
pub fn report(input: &Input, verdicts: &[(Check, Verdict)], witness_limit: usize) -> Report {
    let ctx = ctx_of(input);
    let t = ctx.table;
    let n = t.n();
    let (kind, partial) = match input {
        Input::Policy { lattice, .. } => (InputKind::Lattice, lattice.partial()),
        Input::Observed(_) => (InputKind::Table, false),
    };
    let undefined = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .filter(|&(a, b)| t.get(a, b).is_none() && t.get(b, a).is_none())
        .count() as u64;
    let total = (n * n.saturating_sub(1) / 2) as u64;
    let mut laws = Vec::new();
    if kind == InputKind::Lattice {
        laws.push(simple(
            Law::Acyclic,
            Status::Holds,
            0,
            "no cycle in the promotion graph (validated when loading)",
        ));
    }
    let mut order: Vec<Law> = verdicts.iter().map(|(c, _)| c.law()).collect();
    order.dedup();
    let existence_checked = order.contains(&Law::Existence);
    for law in order {
        if law == Law::Commutativity && !existence_checked {
            let note = if kind == InputKind::Lattice && partial {
                format!("{undefined} of {total} pairs have no join (declared `partial = true`)")
            } else {
                format!("{undefined} of {total} pairs raise in the library")
            };
            let status = if undefined > 0 {
                Status::Partial
            } else {
                Status::Holds
            };
            laws.push(simple(Law::Existence, status, undefined, &note));
        }
        let mine: Vec<&(Check, Verdict)> =
            verdicts.iter().filter(|(c, _)| c.law() == law).collect();
        let mut found: Vec<(Check, &Vec<usize>)> = Vec::new();
        let (mut count, mut exact, mut unknown) = (0u64, true, None);
        for (check, v) in &mine {
            match v {
                Verdict::Holds => {}
                Verdict::Unknown(r) => unknown = Some(r.clone()),
                Verdict::Violated {
                    witnesses: ws,
                    complete,
                } => {
                    exact &= *complete;
                    count += ws.len() as u64;
                    found.extend(ws.iter().map(|w| (*check, w)));
                }
            }
        }
        found.sort_by_cached_key(|(_, w)| simplicity(t, w));
        let witnesses: Vec<Violation> = found
            .iter()
            .take(witness_limit.max(1))
            .filter_map(|&(check, w)| {
                let (l, r, detail) = describe(check, ctx, w)?;
                Some(Violation {
                    law,
                    dtypes: w.iter().map(|&i| t.name(i).to_string()).collect(),
                    left: l.map(|x| t.name(x).to_string()),
                    right: r.map(|x| t.name(x).to_string()),
                    detail,
                })
            })
            .collect();
        let (status, note) = match (count, unknown) {
            (0, Some(r)) => (
                Status::Unknown,
                format!("z3 could not decide ({r}); raise --timeout"),
            ),
            (0, None) => (Status::Holds, "z3: unsat, no counterexample".to_string()),
            _ => (Status::Violated, String::new()),
        };
        laws.push(LawResult {
            law,
            status,
            count,
            exact,
            witnesses,
            note,
        });
    }
    Report {
        path: input.path().to_string(),
        name: input.name().to_string(),
        kind,
        dtypes: n,
        edges: match input {
            Input::Policy { lattice, .. } => Some(lattice.edge_count()),
            Input::Observed(_) => None,
        },
        undefined_pairs: undefined,
        laws,
        engines: vec!["z3"],
    }
}

fn simple(law: Law, status: Status, count: u64, note: &str) -> LawResult {
    LawResult {
        law,
        status,
        count,
        exact: true,
        witnesses: vec![],
        note: note.to_string(),
    }
}
