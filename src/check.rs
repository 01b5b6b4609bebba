//! The check of one input, composed once for every caller (`check` in every output format,
//! `docs`, `codegen`): the lattice laws by the chosen [`Engine`] (exhaustive, z3, or both
//! cross-checked), then the policy's value-safety lints.
//!
//! "Not a lattice" is a [`Checked`] with violations; `Err` is only an internal disagreement
//! between the engines, which must never become a verdict.

use crate::laws::{CheckOptions, Law, LawResult, Report, Status};
use crate::order::categories::{self, RuleCheck};
use crate::order::input::Input;
use crate::policy::spec::Level;
use crate::safety::{self, LintResult};

/// Which verifier decides the laws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The exhaustive checker alone.
    Exhaustive,
    /// z3 alone (its witnesses confirmed on the table).
    Z3,
    /// Both, cross-checked witness for witness.
    Both,
}

impl Default for Engine {
    /// Both engines when built with z3, else the exhaustive checker.
    fn default() -> Self {
        if cfg!(feature = "z3") {
            Engine::Both
        } else {
            Engine::Exhaustive
        }
    }
}

/// How to check.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub engine: Engine,
    /// How the lints decide conversions of sources wider than 16 bits.
    pub lints: safety::Engine,
    /// z3's time limit per query, in milliseconds.
    pub timeout_ms: u32,
    /// Witnesses wanted per violated law (`usize::MAX` for all); z3 enumerates one more so
    /// that a count that fits is known to be exact.
    pub witnesses: usize,
    /// Conversions kept as examples per lint (`usize::MAX`: all; each lint's count is exact
    /// either way): a 10,000-node chain has 50 million conversions to count, not to keep.
    pub lint_examples: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options::with(Engine::default())
    }
}

impl Options {
    /// The options of `engine`, its lints decided by the boundary-value search: z3 proves
    /// them only when asked (`check --prove-lints`), as its proofs cost seconds per policy
    /// and have never changed a shipped policy's lints (a test holds the two to each other).
    pub fn with(engine: Engine) -> Options {
        Options {
            engine,
            lints: safety::Engine::Search,
            timeout_ms: 10_000,
            witnesses: 3,
            lint_examples: usize::MAX,
        }
    }
}

/// A checked input: its law report and, for a policy, the lints that fire.
#[derive(Clone, Debug)]
pub struct Checked {
    pub report: Report,
    /// The policy's value-safety lints that are not allowed and fire (empty for tables).
    pub lints: Vec<LintResult>,
    /// What the user should know about how the verdict was reached (a z3 query it could not
    /// decide, where the exhaustive verdict stands), one line each.
    pub warnings: Vec<String>,
    /// The n-ary check: a policy's order against its category rule, or a table's pairs
    /// against its measured triples (`None` when there is neither).
    pub nary: Option<RuleCheck>,
    /// A table's declared n-ary rule (`"nary"`) against its measured triples: the rule's
    /// result in `rule`, the library's in `order` (`None` without a rule or triples).
    pub rule: Option<RuleCheck>,
}

impl From<Report> for Checked {
    /// A law report with no lints.
    fn from(report: Report) -> Checked {
        Checked {
            report,
            lints: Vec::new(),
            warnings: Vec::new(),
            nary: None,
            rule: None,
        }
    }
}

impl Checked {
    /// Every law holds (or is partial by declaration), no law is undecided, and no denied
    /// lint fires.
    pub fn ok(&self) -> bool {
        self.report.ok()
            && !self.denied()
            && self.nary.as_ref().is_none_or(RuleCheck::holds)
            && self.rule.as_ref().is_none_or(RuleCheck::holds)
    }

    /// Whether a lint at level `deny` fires.
    pub fn denied(&self) -> bool {
        self.lints.iter().any(|l| l.level == Level::Deny)
    }

    /// A law is violated or a denied lint fires (exit 1).
    pub fn failed(&self) -> bool {
        self.report.violated().next().is_some()
            || self.denied()
            || self.nary.as_ref().is_some_and(|r| !r.holds())
            || self.rule.as_ref().is_some_and(|r| !r.holds())
    }

    pub fn law(&self, law: Law) -> Option<&LawResult> {
        self.report.law(law)
    }

    pub fn violated(&self) -> impl Iterator<Item = &LawResult> {
        self.report.violated()
    }

    /// Some law is undecided (z3 answered unknown).
    pub fn undecided(&self) -> bool {
        self.report.laws.iter().any(|l| l.status == Status::Unknown)
    }
}

/// Why an input could not be checked: z3 is not built in or cannot be loaded, or the engines
/// disagree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// An engine these options name needs z3, and z3 cannot answer here: why, and what to do
    /// ([`crate::smt::z3_available`]).
    #[error("{0}")]
    NoZ3(String),
    /// The engines disagree: a bug in one of them, never a verdict.
    #[error("{0}")]
    Disagreement(String),
}

impl Options {
    /// `Err(NoZ3)` when an engine these options name needs z3 and z3 is not built in or
    /// cannot be loaded; [`check`] says the same for each input, a caller checking many says
    /// it once, before reading any.
    pub fn available(&self) -> Result<(), CheckError> {
        let z3 = self.engine != Engine::Exhaustive || self.lints == safety::Engine::Z3;
        if z3 {
            crate::smt::z3_available().map_err(CheckError::NoZ3)?;
        }
        Ok(())
    }

    /// The exhaustive engine's options: every witness it keeps is ranked and counted, the
    /// ones shown are described.
    fn exhaustive(&self) -> CheckOptions {
        CheckOptions {
            described: self.witnesses,
            ..CheckOptions::default()
        }
    }
}

/// The exit code of a check run (docs/contracts.md): 2 when an input could not be read or checked,
/// else 1 when a law is violated or a denied lint fires, else 2 when a law is undecided,
/// else 0.
pub fn exit_code(checked: &[Checked], input_errors: bool) -> u8 {
    if input_errors {
        2
    } else if checked.iter().any(Checked::failed) {
        1
    } else if checked.iter().any(|c| !c.ok()) {
        2
    } else {
        0
    }
}

/// Checks `input`'s laws with `opts.engine`, then its lints with `opts.lints`.
pub fn check(input: &Input, opts: Options) -> Result<Checked, CheckError> {
    opts.available()?;
    let (report, warnings) = laws(input, opts)?;
    let rule = input.verify_rule();
    let (lints, nary) = match input {
        Input::Policy {
            policy,
            joins,
            lattice,
        } => (
            safety::lint(policy, &joins.table, opts.lints, opts.lint_examples),
            categories::verify(policy, lattice),
        ),
        Input::Observed(o) => (Vec::new(), categories::verify_triples(o)),
    };
    Ok(Checked {
        report,
        lints,
        warnings,
        nary,
        rule,
    })
}

/// The largest table the default engine (`both`) cross-checks with z3.
#[cfg(feature = "z3")]
pub const Z3_CROSS_CHECK_NODES: usize = 128;

/// The law report of one input by the chosen engine(s), with the engines' warnings.
#[cfg(feature = "z3")]
fn laws(input: &Input, opts: Options) -> Result<(Report, Vec<String>), CheckError> {
    use crate::smt::solve::{self, Z3Options};
    let all = opts.witnesses == usize::MAX;
    let exhaustive = opts.exhaustive();
    match opts.engine {
        Engine::Exhaustive => Ok((input.check(exhaustive), Vec::new())),
        Engine::Z3 => {
            let z3o = Z3Options {
                timeout_ms: opts.timeout_ms,
                // One more than shown, so a count that fits is known to be exact.
                limit: if all {
                    usize::MAX
                } else {
                    opts.witnesses.max(1).saturating_add(1)
                },
            };
            let report = solve::report(input, &solve::verify(input, z3o), opts.witnesses);
            Ok((report, Vec::new()))
        }
        Engine::Both if input.table().n() > Z3_CROSS_CHECK_NODES => {
            // z3 cannot decide the three-variable laws of a table this size in any useful time
            // (docs/performance.md: minutes at 100 nodes, gigabytes of ground equations at
            // 1,000), so the default cross-check stops here and says so.
            let report = input.check(exhaustive);
            let warning = format!(
                "warning: {} has {} dtypes: z3's cross-check is skipped above {Z3_CROSS_CHECK_NODES} (it would not finish); the exhaustive verdict stands. `--engine z3` runs it anyway.",
                input.path(),
                input.table().n()
            );
            Ok((report, vec![warning]))
        }
        Engine::Both => {
            let mut report = input.check(exhaustive);
            let z3o = Z3Options {
                timeout_ms: opts.timeout_ms,
                limit: if all { usize::MAX } else { 1 },
            };
            let verdicts = solve::verify(input, z3o);
            solve::cross_check(input, &report, &verdicts)
                .map_err(|d| CheckError::Disagreement(d.to_string()))?;
            report.engines.push("z3");
            let warnings = verdicts
                .iter()
                .filter_map(|(check, v)| match v {
                    solve::Verdict::Unknown(reason) => Some(format!(
                        "warning: z3 could not decide `{}` for {} ({reason}); the exhaustive verdict stands. Raise --timeout to cross-check it.",
                        check.law().key(),
                        input.path()
                    )),
                    _ => None,
                })
                .collect();
            Ok((report, warnings))
        }
    }
}

#[cfg(not(feature = "z3"))]
fn laws(input: &Input, opts: Options) -> Result<(Report, Vec<String>), CheckError> {
    match opts.engine {
        Engine::Exhaustive => Ok((input.check(opts.exhaustive()), Vec::new())),
        Engine::Z3 | Engine::Both => Err(CheckError::NoZ3(
            crate::smt::z3_available().expect_err("a build without z3"),
        )),
    }
}
