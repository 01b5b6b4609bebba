//! The CPU reference kernels: typed arrays ([`array`]), elementwise ops, casts, reductions
//! ([`ops`], [`cast`]), the SIMD loops they run on ([`stream`], `avx512`) and the one parallel
//! loop they share (`parallel`), the allocator that gives large arrays huge pages ([`alloc`]).
//! The jobs of the front ends that run them (the conformance runner, `bench`, the `cast` table)
//! are [`crate::jobs`]'. Result dtypes come from the generated promotion tables
//! ([`crate::generated`]); kernels never compute a join.

pub mod alloc;
pub mod array;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub mod cast;
pub mod ops;
pub(crate) mod parallel;
pub mod stream;

use crate::policy::diag::{Diagnostic, LoadError, did_you_mean};
use crate::promote::Generated;

/// The generated policy of a name (`jax`, `jax-x32`, `array-api`, …), or an error that lists
/// them.
pub fn policy(name: &str) -> Result<&'static Generated, LoadError> {
    let all = crate::generated::ALL;
    all.iter().copied().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|p| p.name).collect();
        let help = did_you_mean(name, names.iter().copied()).map_or_else(
            || format!("generated policies: {}", names.join(", ")),
            |s| format!("did you mean `{s}`?"),
        );
        LoadError::one(
            Diagnostic::file("--policy", format!("no generated policy `{name}`")).with_help(help),
        )
    })
}
