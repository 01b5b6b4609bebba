//! z3 as the second verifier: runs the same scripts as `proofs/`, turns models into the
//! witnesses the exhaustive checker reports, and cross-checks the two engines.

use z3::ast::{BV, Bool};
use z3::{SatResult, Solver};

use super::{checks, ctx_of, table_prefix, width};
use crate::Input;
use crate::laws::{Check, Ctx, InputKind, Law, LawResult, Report, Status, Violation, describe};

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
    /// Wall-clock limit of one check (parsing, every query, every model), in milliseconds.
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
/// `width` bits), each blocked before the next query.
///
/// `opts.timeout_ms` is a wall-clock limit on the whole call (parsing the script, every query
/// and every model), and it always returns: a watchdog thread interrupts the context at the
/// deadline and again every 50 ms until z3 lets go (libz3 can miss a single interrupt; z3's own
/// `timeout` parameter is not used, as a search that reads the clock answers with witnesses
/// that depend on the machine's load). Out of time with no model is `Unknown("timeout")`;
/// with some models, a `Violated` that is not complete.
///
/// Each call gets a fresh z3 context, so its models depend only on the script (a complete set
/// is sorted): a context reused across queries on a worker thread would answer with whatever
/// the thread solved before, and the output would vary from run to run.
pub fn solve(script: &str, vars: &[&str], width: u32, opts: Z3Options) -> Verdict {
    let (script, vars): (String, Vec<String>) =
        (script.into(), vars.iter().map(|v| v.to_string()).collect());
    let start = std::time::Instant::now();
    // Every witness found so far, kept where the caller can read it: an enumeration that runs
    // out of time is still a violation, its count a lower bound.
    let found = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = found.clone();
    let timeout = || {
        let mut so_far = found.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if so_far.is_empty() {
            Verdict::Unknown(format!("timeout after {} ms", start.elapsed().as_millis()))
        } else {
            so_far.sort_unstable();
            Verdict::Violated {
                witnesses: so_far,
                complete: false,
            }
        }
    };
    match on_z3_thread(opts.timeout_ms, move |deadline| {
        let vars: Vec<&str> = vars.iter().map(String::as_str).collect();
        solve_until(&script, &vars, width, opts.limit, deadline, &record)
    }) {
        Ok(Verdict::Unknown(r)) if r == "timeout" => timeout(),
        Ok(v) => v,
        Err(Stopped::Timeout) => timeout(),
        Err(Stopped::Failed(why)) => Verdict::Unknown(why),
    }
}

/// Why [`on_z3_thread`] has no answer.
enum Stopped {
    Timeout,
    Failed(String),
}

/// Runs `work` in a fresh z3 context on a thread of its own, with a watchdog that interrupts
/// the context at the deadline (`timeout_ms` from now, handed to `work`) and again every 50 ms
/// until z3 lets go (libz3 can miss a single interrupt; z3's own `timeout` parameter is not
/// used, as a search that reads the clock answers with results that depend on the machine's
/// load).
///
/// Some phases of libz3 (preprocessing a large script) do not poll the interrupt flag, so at
/// the deadline (plus a grace for the interrupt to land) the caller gets `Stopped::Timeout`
/// and the thread, still being interrupted, is left to finish or to end with the process.
///
/// Each call gets a fresh context, so its answers depend only on what `work` asks: a context
/// reused across queries on a worker thread would answer with whatever the thread solved
/// before, and the output would vary from run to run.
fn on_z3_thread<T: Send + Sync + 'static>(
    timeout_ms: u32,
    work: impl FnOnce(std::time::Instant) -> T + Send + Sync + 'static,
) -> Result<T, Stopped> {
    use std::sync::{Condvar, Mutex};
    use std::time::{Duration, Instant};
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("z3".into())
        .spawn(move || {
            let v = z3::with_z3_config(&z3::Config::new(), || {
                let deadline = Instant::now() + Duration::from_millis(timeout_ms as u64);
                let ctx = z3::Context::thread_local();
                let handle = ctx.handle();
                // Whether the work is finished; the watchdog waits on it until the deadline,
                // then interrupts until it is set.
                let done: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        let mut finished = done.0.lock().unwrap_or_else(|e| e.into_inner());
                        while !*finished {
                            let now = Instant::now();
                            let wait = if now >= deadline {
                                handle.interrupt();
                                Duration::from_millis(50)
                            } else {
                                deadline - now
                            };
                            finished = done
                                .1
                                .wait_timeout(finished, wait)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    });
                    let answer = work(deadline);
                    *done.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
                    done.1.notify_all();
                    answer
                })
            });
            let _ = tx.send(v);
        });
    if let Err(e) = spawned {
        return Err(Stopped::Failed(format!("cannot start a z3 thread: {e}")));
    }
    let grace = Duration::from_millis(timeout_ms as u64 / 10 + 250);
    match rx.recv_timeout(Duration::from_millis(timeout_ms as u64) + grace) {
        Ok(v) => Ok(v),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Stopped::Timeout),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(Stopped::Failed("z3 stopped without an answer".into()))
        }
    }
}

/// What z3 says about a script over Boolean constants: [`optimize`] and [`satisfy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Satisfiable (for [`optimize`]: at an optimum): the value of each asked constant.
    Sat(Vec<bool>),
    /// Unsatisfiable: the indices of the assumptions in z3's unsat core (for [`optimize`] and
    /// a [`satisfy`] without assumptions, empty).
    Unsat(Vec<usize>),
    /// The solver gave up: the reason (`timeout after N ms`, or z3's own).
    Unknown(String),
}

/// Minimises the script's soft constraints (its `assert-soft` lines; objectives by `:id` in
/// the order they are declared, each before the next) with z3's optimiser, and reads the
/// Boolean constants `vars` from the optimum.
pub fn optimize(script: &str, vars: &[String], timeout_ms: u32) -> Answer {
    let (script, vars) = (script.to_string(), vars.to_vec());
    bool_answer(
        timeout_ms,
        on_z3_thread(timeout_ms, move |_| {
            let opt = z3::Optimize::new();
            opt.from_string(script);
            match opt.check(&[]) {
                SatResult::Sat => read_bools(opt.get_model(), &vars),
                SatResult::Unsat => Answer::Unsat(Vec::new()),
                SatResult::Unknown => Answer::Unknown(unknown_reason(opt.get_reason_unknown())),
            }
        }),
    )
}

/// Whether the script is satisfiable with every constant of `assumptions` true: a model of
/// `vars`, or the indices of the assumptions in z3's unsat core (not necessarily minimal).
pub fn satisfy(script: &str, vars: &[String], assumptions: &[String], timeout_ms: u32) -> Answer {
    let (script, vars, assumptions) = (script.to_string(), vars.to_vec(), assumptions.to_vec());
    bool_answer(
        timeout_ms,
        on_z3_thread(timeout_ms, move |_| {
            let solver = Solver::new();
            solver.from_string(script);
            check_under(&solver, &assumptions, Some(&vars))
        }),
    )
}

/// One solver, loaded with `script` once, asked again and again: `work` gets a function that
/// first adds `more` (SMT-LIB declarations and assertions, often empty) to the solver, then
/// checks it under `assumptions` (Boolean constants assumed true) and answers as [`satisfy`]
/// does (without a model), all within `timeout_ms`. `Err` when z3 could not start or the time
/// ran out before `work` returned.
pub fn session<T: Send + Sync + 'static>(
    script: &str,
    timeout_ms: u32,
    work: impl FnOnce(&mut dyn FnMut(&str, &[String]) -> Answer) -> T + Send + Sync + 'static,
) -> Result<T, String> {
    let script = script.to_string();
    let got = on_z3_thread(timeout_ms, move |deadline| {
        let solver = Solver::new();
        solver.from_string(script);
        let mut check = |more: &str, assumptions: &[String]| {
            if !more.is_empty() {
                solver.from_string(more);
            }
            if std::time::Instant::now() >= deadline {
                return Answer::Unknown("timeout".into());
            }
            check_under(&solver, assumptions, None)
        };
        work(&mut check)
    });
    match got {
        Ok(v) => Ok(v),
        Err(Stopped::Timeout) => Err(format!("timeout after {timeout_ms} ms")),
        Err(Stopped::Failed(why)) => Err(why),
    }
}

/// Checks `solver` under `assumptions` (Boolean constants assumed true): the values of `vars`
/// in a model (none asked: an empty model), or the indices of the assumptions in the core.
fn check_under(solver: &Solver, assumptions: &[String], vars: Option<&[String]>) -> Answer {
    let lits: Vec<Bool> = assumptions
        .iter()
        .map(|a| Bool::new_const(a.as_str()))
        .collect();
    match solver.check_assumptions(&lits) {
        SatResult::Sat => match vars {
            Some(vars) => read_bools(solver.get_model(), vars),
            None => Answer::Sat(Vec::new()),
        },
        SatResult::Unsat => {
            let core: std::collections::HashSet<String> = solver
                .get_unsat_core()
                .iter()
                .map(|b| b.to_string())
                .collect();
            Answer::Unsat(
                (0..assumptions.len())
                    .filter(|&i| core.contains(&assumptions[i]))
                    .collect(),
            )
        }
        SatResult::Unknown => Answer::Unknown(unknown_reason(solver.get_reason_unknown())),
    }
}

fn bool_answer(timeout_ms: u32, got: Result<Answer, Stopped>) -> Answer {
    match got {
        Ok(Answer::Unknown(r)) if r == "timeout" => {
            Answer::Unknown(format!("timeout after {timeout_ms} ms"))
        }
        Ok(a) => a,
        Err(Stopped::Timeout) => Answer::Unknown(format!("timeout after {timeout_ms} ms")),
        Err(Stopped::Failed(why)) => Answer::Unknown(why),
    }
}

/// z3's reason for `unknown`, with its ways of saying it was interrupted (`canceled`,
/// `sat.canceled`, `interrupted`) read as the watchdog's timeout.
fn unknown_reason(reason: Option<String>) -> String {
    match reason.as_deref() {
        Some(r) if !r.contains("canceled") && !r.contains("interrupted") => r.to_string(),
        _ => "timeout".into(),
    }
}

/// The value of each Boolean constant `vars` in `model` (completed: a constant the script
/// leaves free reads as false).
fn read_bools(model: Option<z3::Model>, vars: &[String]) -> Answer {
    let Some(model) = model else {
        return Answer::Unknown("z3 answered sat without a model".into());
    };
    let values: Option<Vec<bool>> = vars
        .iter()
        .map(|v| {
            model
                .eval(&Bool::new_const(v.as_str()), true)
                .and_then(|b| b.as_bool())
        })
        .collect();
    values.map_or_else(
        || Answer::Unknown("z3's model has no value for a constant".into()),
        Answer::Sat,
    )
}

/// The work of [`solve`], under its watchdog: parse, then enumerate until `deadline`.
fn solve_until(
    script: &str,
    vars: &[&str],
    width: u32,
    limit: usize,
    deadline: std::time::Instant,
    record: &std::sync::Mutex<Vec<Vec<usize>>>,
) -> Verdict {
    let left_ms = || {
        deadline
            .saturating_duration_since(std::time::Instant::now())
            .as_millis()
            .min(u32::MAX as u128) as u32
    };
    // The logic the script declares picks z3's non-incremental strategy for it, which is
    // markedly faster here than the default incremental solver; enumerating many models
    // re-solves after every blocking clause, where the incremental solver keeps what it learnt.
    let logic = script.lines().find_map(|l| {
        l.strip_prefix("(set-logic ")
            .and_then(|r| r.strip_suffix(')'))
    });
    // z3's redundant equality axioms for bit-vectors cost more than they save on these
    // table lookups: without them the three-variable laws of JAX's table take half the time
    // (the same answers: the axioms are redundant, and the tests hold every witness).
    static EQ_AXIOMS_OFF: std::sync::Once = std::sync::Once::new();
    EQ_AXIOMS_OFF.call_once(|| z3::set_global_param("smt.bv.eq_axioms", "false"));
    let for_logic = || logic.and_then(Solver::new_for_logic).unwrap_or_default();
    if limit > 1 {
        // Most queries are laws that hold: one "unsat", which the logic's strategy gives
        // fastest (JAX's five laws by `--engine z3`: half the CPU). Only a satisfiable (or
        // undecided) query goes on to the incremental solver, which enumerates its models.
        let first = for_logic();
        first.from_string(script);
        if left_ms() > 0 && first.check() == SatResult::Unsat {
            return Verdict::Holds;
        }
    }
    let solver = if limit > 1 {
        Solver::new()
    } else {
        for_logic()
    };
    solver.from_string(script);
    if left_ms() == 0 {
        return Verdict::Unknown("timeout".into());
    }
    let consts: Vec<BV> = vars.iter().map(|v| BV::new_const(*v, width)).collect();
    // z3's own `timeout` parameter is not set: z3 reads its timer while it searches, and a
    // search that looked at the clock answers with witnesses that depend on the machine's load
    // (measured: the order of a complete enumeration changed under a parallel test run). The
    // watchdog's interrupt holds the deadline instead.
    let check = || {
        if left_ms() == 0 {
            return SatResult::Unknown;
        }
        solver.check()
    };
    match enumerate(&solver, &consts, width, limit, check, record) {
        // z3 says "canceled" when interrupted; our own check says nothing.
        Verdict::Unknown(r)
            if left_ms() == 0 && (r == "unknown" || r == "canceled" || r == "interrupted") =>
        {
            Verdict::Unknown("timeout".into())
        }
        v => v,
    }
}

fn enumerate(
    solver: &Solver,
    consts: &[BV],
    width: u32,
    limit: usize,
    mut check: impl FnMut() -> SatResult,
    record: &std::sync::Mutex<Vec<Vec<usize>>>,
) -> Verdict {
    let mut found: Vec<Vec<usize>> = Vec::new();
    loop {
        match check() {
            SatResult::Unsat if found.is_empty() => return Verdict::Holds,
            SatResult::Unsat => {
                // The order z3 finds models in is not a function of the script alone (measured:
                // it changed with the load of a parallel test run); a complete set is shown in
                // sorted order, so the output is the same on every run.
                found.sort_unstable();
                return Verdict::Violated {
                    witnesses: found,
                    complete: true,
                };
            }
            SatResult::Unknown => {
                let reason = solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "unknown".into());
                let reason = if reason == "canceled" || reason == "interrupted" {
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
                // `sat` is a counterexample's existence, model or not: the law is violated,
                // and the witnesses found so far (maybe none) are a lower bound.
                let Some(model) = solver.get_model() else {
                    return Verdict::Violated {
                        witnesses: found,
                        complete: false,
                    };
                };
                let values: Option<Vec<u64>> = consts
                    .iter()
                    .map(|c| model.eval(c, true).and_then(|v| v.as_u64()))
                    .collect();
                // Still `sat`: violated, this witness not known.
                let Some(values) = values else {
                    return Verdict::Violated {
                        witnesses: found,
                        complete: false,
                    };
                };
                found.push(values.iter().map(|&v| v as usize).collect());
                record
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(found[found.len() - 1].clone());
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
/// parallel threads, each in a context of its own; the result is in check order.
pub fn verify(input: &Input, opts: Z3Options) -> Vec<(Check, Verdict)> {
    let t = input.table();
    let prefix = table_prefix(t);
    let w = width(t.n());
    let checks = checks(input);
    let next = std::sync::atomic::AtomicUsize::new(0);
    // One worker per check: each `solve` returns by its own deadline, so the whole
    // verification takes one timeout of wall-clock time, however many checks time out.
    let workers = checks.len();
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
        let z3_violated = mine
            .iter()
            .any(|(_, v)| matches!(v, Verdict::Violated { .. }));
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
                    // `sat` without a model: violated by at least one case, none known.
                    count += (ws.len() as u64).max(1);
                    found.extend(ws.iter().map(|w| (*check, w)));
                }
            }
        }
        let rank = crate::numeric::dtype::Simplicity::of(t.names());
        found.sort_by_cached_key(|(_, w)| rank.key(w));
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
        // A check z3 could not decide beside one it found violated: the count is a lower bound.
        let exact = exact && (count == 0 || unknown.is_none());
        let (status, note) = match (count, unknown) {
            (0, Some(r)) => (
                Status::Unknown,
                format!("z3 could not decide ({r}); raise --timeout"),
            ),
            (0, None) => (Status::Holds, "z3: unsat, no counterexample".to_string()),
            _ if found.is_empty() => (
                Status::Violated,
                "z3 answered sat without a (complete) model: violated, its witnesses unknown"
                    .to_string(),
            ),
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
