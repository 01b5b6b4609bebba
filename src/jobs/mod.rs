//! The front ends' jobs on the kernels, each parsing its own input at the edge: the conformance
//! runner's line protocol ([`conformance`]: `typejoin run`), `typejoin bench`'s measurement
//! ([`bench`]), and the `cast` command's table of the codec's answers ([`cast`]). The kernels
//! know nothing of them.

pub mod bench;
pub mod cast;
pub mod conformance;
