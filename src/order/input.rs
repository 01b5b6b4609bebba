//! A loaded input file: a policy with its lattice and join table, or an observed table.

use crate::order::lattice::{JoinTable, Lattice};
use crate::policy::diag::{Diagnostic, LoadError};
use crate::policy::observed::{self, Observed};
use crate::policy::spec::{self, Policy};
use crate::policy::table::Table;

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
}
