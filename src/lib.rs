//! typejoin: dtype promotion policies as verified data.
//!
//! The pipeline (docs/architecture.md): a policy file is parsed ([`spec`]) into a [`Policy`],
//! closed into a [`Lattice`] whose [`JoinTable`] is checked against the lattice laws ([`laws`]),
//! giving a [`Report`]. Observed tables ([`observed`]) go through the same laws. Library
//! functions take text and return values; only the binary does I/O.

pub mod array;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub mod bits;
pub mod codegen;
pub mod conformance;
pub mod diag;
pub mod diff;
pub mod dot;
pub mod dtype;
pub mod explain;
pub mod format;
pub mod gate;
pub mod generated;
pub mod kernel;
pub mod lattice;
pub mod laws;
pub mod observed;
pub mod ops;
pub mod pages;
pub mod promote;
pub mod render;
pub mod safety;
pub mod smt;
pub mod spec;
pub mod stream;
pub mod suggest;
pub mod synth;
pub mod table;

pub use diag::{Diagnostic, LoadError};
pub use lattice::{Join, JoinTable, Lattice};
pub use laws::{CheckOptions, Law, Report, Status};
pub use observed::Observed;
pub use spec::Policy;
pub use table::Table;

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
            let policy = spec::parse_policy(path, text)?;
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

    pub fn check(&self, opts: CheckOptions) -> Report {
        match self {
            Input::Policy {
                policy,
                lattice,
                joins,
            } => laws::check_lattice(&policy.path, &policy.name, lattice, joins, opts),
            Input::Observed(o) => laws::check_table(&o.path, &o.name, &o.table, opts),
        }
    }
}
