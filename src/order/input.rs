//! A loaded input file: a policy with its lattice and join table, or an observed table.

use crate::order::categories::{RuleCheck, RuleMismatch};
use crate::order::dtype_sequence::{Arg, DTypeSequence, Refusal};
use crate::order::lattice::{JoinTable, Lattice};
use crate::order::result_type_state::ResultTypeState;
use crate::policy::diag::{Diagnostic, LoadError};
use crate::policy::nary::NaryRule;
use crate::policy::observed::{self, Observed};
use crate::policy::spec::{self, Policy};
use crate::policy::table::Table;

/// The most dtypes (nodes) one command takes, and why (docs/limits.md). Every file is read
/// under [`crate::policy::table::MAX_DTYPES`] (10,000: what `check`, `explain` and
/// `result-type` take); the commands whose work or output grows faster refuse a larger input
/// right after reading it, before that work, with an error that names the command and its
/// limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeLimit {
    pub command: &'static str,
    pub max: usize,
    /// What grows past the limit (said in the error).
    pub why: &'static str,
}

impl SizeLimit {
    /// `table`: n² cells (a 2,048-dtype table is 25 MB of text, 97 MB as JSON).
    pub const TABLE: SizeLimit = SizeLimit {
        command: "table",
        max: 2048,
        why: "its output has a cell for every pair",
    };
    /// `codegen`: the generated module holds every pair's join.
    pub const CODEGEN: SizeLimit = SizeLimit {
        command: "codegen",
        max: 2048,
        why: "the generated module holds every pair's join",
    };
    /// `safety`: a line for every edge and every pair's join (140 MB at 2,048 dtypes).
    pub const SAFETY: SizeLimit = SizeLimit {
        command: "safety",
        max: 2048,
        why: "its report classifies every edge and every pair's join",
    };
    /// `dot`: the Hasse diagram's transitive reduction grows as n³ (2 s at 2,048 dtypes).
    pub const DOT: SizeLimit = SizeLimit {
        command: "dot",
        max: 2048,
        why: "the diagram's transitive reduction grows as the cube of the dtypes",
    };
    /// `diff`: every pair of both inputs, with each pair's kinds (4 s at 2,048 dtypes).
    pub const DIFF: SizeLimit = SizeLimit {
        command: "diff",
        max: 2048,
        why: "it compares every pair's join",
    };
    /// `suggest`: every placement of the new dtype re-checks the laws.
    pub const SUGGEST: SizeLimit = SizeLimit {
        command: "suggest",
        max: 2048,
        why: "every placement it ranks re-checks the laws",
    };
    /// `prove`: the obligations' text grows as n² per law (1,024 dtypes write 267 MB in 25 s).
    pub const PROVE: SizeLimit = SizeLimit {
        command: "prove",
        max: 1024,
        why: "each law's obligation spells out every pair's join",
    };

    /// `Err` (naming the file, the command and the limit) when `input` has more dtypes.
    pub fn check(&self, input: &Input) -> Result<(), LoadError> {
        let n = input.table().names.len();
        if n <= self.max {
            return Ok(());
        }
        Err(LoadError::one(
            Diagnostic::file(
                input.path(),
                format!(
                    "{n} dtypes: `typejoin {}` takes at most {} ({})",
                    self.command, self.max, self.why
                ),
            )
            .with_help(format!(
                "run it on a part of the policy; `typejoin check` takes up to {}",
                crate::policy::table::MAX_DTYPES
            )),
        ))
    }
}

/// A loaded input file: a policy (with its lattice and joins) or an observed table.
#[derive(Debug, Clone)]
pub enum Input {
    Policy {
        policy: Box<Policy>,
        lattice: Lattice,
        joins: JoinTable,
    },
    Observed(Observed),
}

impl Input {
    /// Parses `text` by the file's extension: `.toml` is a policy, `.json` an observed table.
    pub fn parse(path: &str, text: &str) -> Result<Input, LoadError> {
        if path.ends_with(".toml") {
            let policy = crate::order::categories::derive(spec::parse_policy(path, text)?);
            let lattice = Lattice::from_policy(&policy);
            let joins = lattice.join_table();
            Ok(Input::Policy {
                policy: Box::new(policy),
                lattice,
                joins,
            })
        } else if path.ends_with(".json") {
            Ok(Input::Observed(observed::parse_table(path, text)?))
        } else {
            Err(LoadError::one(Diagnostic::file(
                path,
                "not a policy (.toml) or an observed table (.json)",
            )))
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Input::Policy { policy, .. } => &policy.name,
            Input::Observed(o) => &o.name,
        }
    }

    pub fn path(&self) -> &str {
        match self {
            Input::Policy { policy, .. } => &policy.path,
            Input::Observed(o) => &o.path,
        }
    }

    /// The join table (undefined where there is no unique join).
    pub fn table(&self) -> &Table {
        match self {
            Input::Policy { joins, .. } => &joins.table,
            Input::Observed(o) => &o.table,
        }
    }

    /// The node a name or short code denotes (`i8@0d`; a policy's aliases: `bool@0d` is
    /// `bool` in PyTorch's).
    pub fn resolve(&self, name: &str) -> Option<usize> {
        self.table().resolve(name).or_else(|| match self {
            Input::Policy { policy, .. } => policy
                .node(name)
                .or_else(|| policy.node(&crate::numeric::dtype::canonical_node(name)?)),
            Input::Observed(_) => None,
        })
    }

    /// The node an array operand of node `i` is promoted as: a policy's `[canonical]` dtype
    /// (JAX without x64 reads int64 as int32), else `i`.
    pub fn canonical(&self, i: usize) -> usize {
        match self {
            Input::Policy { policy, .. } => policy.canonical(i),
            Input::Observed(_) => i,
        }
    }

    /// What node `r` is returned as by the library: a policy's weak or category node as its
    /// dtype, a lifted table's node as the dtype it was measured as; else its own name.
    pub fn materialise(&self, r: usize) -> &str {
        let m = match self {
            Input::Policy { policy, .. } => policy.materialise(r),
            // A table's weak node is returned as the dtype its `kernels.weak` gives
            // (TensorFlow's weak complex128 `c*` is a complex128 tensor).
            Input::Observed(o) => match &o.materialised {
                Some(m) => m[r],
                None => Some(
                    o.kernels
                        .as_ref()
                        .and_then(|k| k.weak_dtype(r))
                        .unwrap_or(r),
                ),
            },
        };
        self.table().name(m.unwrap_or(r))
    }

    /// The table of what the library returns: operands canonicalised, every cell materialised
    /// (`int8 ∨ f*` is `float32` in PyTorch's policy, not `f*`; `uint64 ∨ int8` is int32 in
    /// JAX's without x64); rows and columns stay the operands.
    pub fn materialised_table(&self) -> Table {
        let t = self.table();
        let mut out = Table::new(t.names.clone());
        for a in 0..t.n() {
            for b in 0..t.n() {
                let cell = t
                    .get(self.canonical(a), self.canonical(b))
                    .and_then(|r| t.index_of(self.materialise(r)));
                out.set(a, b, cell);
            }
        }
        out
    }

    /// A policy's n-ary result of every triple of operands, as the dtype the library returns
    /// (what a measured table's `"triples"` hold); empty for a table.
    pub fn materialised_triples(&self) -> Vec<([usize; 3], Option<usize>)> {
        let Input::Policy { lattice, .. } = self else {
            return Vec::new();
        };
        let t = self.table();
        let n = t.n();
        let mut out = Vec::with_capacity(n * n * n);
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    let r = lattice
                        .result_type(&[a, b, c].map(|i| self.canonical(i)))
                        .and_then(|j| j.unique())
                        .and_then(|j| t.index_of(self.materialise(j)));
                    out.push(([a, b, c], r));
                }
            }
        }
        out
    }

    /// The n-ary result of `operands` (indices) as a node: a policy's join; a table's own
    /// n-ary rule where it declares one (`"nary"`: NumPy's, with each dtype operand a dtype
    /// argument of `np.result_type` and each Python scalar a value; PyTorch's by category),
    /// else its left fold.
    /// `None` where there is none (undefined, ambiguous, or the library raises).
    pub fn result_type(&self, operands: &[usize]) -> Option<usize> {
        match self {
            Input::Policy { lattice, .. } => lattice.result_type(operands)?.unique(),
            Input::Observed(o) => match &o.nary {
                Some(_) if operands.is_empty() => None,
                Some(_) => {
                    let args: Vec<Arg> = operands.iter().map(|&i| Arg::of(&o.table, i)).collect();
                    self.nary_rule(&args)?.ok()
                }
                None => {
                    let (&first, rest) = operands.split_first()?;
                    rest.iter().try_fold(first, |acc, &x| o.table.get(acc, x))
                }
            },
        }
    }

    /// A table's declared n-ary rule over `args` (at least one): the node of the dtype the
    /// library returns, or why it raises. `None` for a policy or a table without a rule.
    pub fn nary_rule(&self, args: &[Arg]) -> Option<Result<usize, Refusal>> {
        let Input::Observed(o) = self else {
            return None;
        };
        match o.nary.as_ref()? {
            NaryRule::Numpy(classes) => Some(
                DTypeSequence {
                    table: &o.table,
                    classes,
                }
                .result_type(args),
            ),
            NaryRule::Torch(kinds) => {
                let nodes: Vec<usize> = args
                    .iter()
                    .map(|a| match *a {
                        Arg::DType(i) | Arg::Value(i) => i,
                    })
                    .collect();
                Some(
                    ResultTypeState {
                        table: &o.table,
                        materialised: o.materialised.as_deref(),
                        kinds,
                    }
                    .result_type(&nodes),
                )
            }
        }
    }

    /// A table's declared n-ary rule against its measured triples (each operand read by
    /// [`Arg::of`]): `None` without a rule or triples. A mismatch's `rule` is what the rule
    /// gives, `order` and `node` what the library returned.
    pub fn verify_rule(&self) -> Option<RuleCheck> {
        let Input::Observed(o) = self else {
            return None;
        };
        let rule = o.nary.as_ref()?;
        if o.triples.is_empty() {
            return None;
        }
        let t = &o.table;
        let mut sorted: Vec<&crate::policy::observed::Triple> = o.triples.iter().collect();
        let rank = crate::numeric::dtype::Simplicity::of(t.names());
        sorted.sort_by_cached_key(|x| rank.key(&x.operands));
        let (mut mismatches, mut witnesses) = (0u64, Vec::new());
        for x in sorted {
            let got = self
                .nary_rule(&x.operands.map(|i| Arg::of(t, i)))
                .and_then(Result::ok);
            if got != x.result {
                mismatches += 1;
                if witnesses.len() < 3 {
                    let name = |i: Option<usize>| i.map(|i| t.name(i).to_string());
                    witnesses.push(RuleMismatch {
                        operands: x.operands.iter().map(|&i| t.name(i).to_string()).collect(),
                        rule: name(got),
                        order: name(x.result),
                        node: name(x.result),
                    });
                }
            }
        }
        Some(RuleCheck {
            rule: rule.name(),
            derived: false,
            aliases: Vec::new(),
            max_operands: 3,
            multisets: o.triples.len() as u64,
            mismatches,
            witnesses,
        })
    }
}
