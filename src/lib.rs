//! typejoin: dtype promotion policies as verified data.
//!
//! The modules follow the pipeline, each depending only on those listed before it
//! (docs/architecture.md; `tests/it/architecture.rs` fails on an edge that points back):
//!
//! - [`synth`]: synthetic DAGs and a seeded RNG for benchmarks and property tests;
//! - [`numeric`]: the dtype catalogue, the one concrete [`DType`], the exact codec of every
//!   numeric format;
//! - [`policy`]: policy files and observed tables parsed into validated values with spans;
//! - [`order`]: the DAG closed into a [`Lattice`], joins, and the loaded [`Input`];
//! - [`laws`]: the lattice laws, checked exhaustively, with ranked witnesses;
//! - [`smt`]: the same laws as SMT-LIB scripts, proof obligations, and z3;
//! - [`safety`]: what every promotion does to values, and the policy's lints;
//! - [`check`]: laws by the chosen engine plus lints, composed once;
//! - [`promote`] and [`generated`]: the promotion tables codegen writes for the kernels;
//! - [`kernels`]: typed arrays and the CPU reference kernels;
//! - [`jobs`]: the runner's line protocol, `bench`, the `cast` table: the front ends' jobs;
//! - [`design`]: explain, diff, suggest;
//! - [`output`]: renderers, one per output format, of every value above (reports, CI
//!   annotations, tables, casts, safety, diffs, suggestions, diagrams, pages, Rust code).
//!
//! Library functions take text and return values; only the binary reads and writes files.

// Every `unsafe` block says why it is sound; every `unsafe fn` says what its caller owes.
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod synth;

pub mod numeric;

pub mod policy;

pub mod order;

pub mod laws;

pub mod smt;

pub mod safety;

pub mod check;

pub mod promote;

pub mod generated;

pub mod kernels;

pub mod jobs;

pub mod design;

pub mod output;

pub use check::{Checked, Engine};
pub use laws::{CheckOptions, Law, Report, Status};
pub use numeric::dtype::DType;
pub use order::input::Input;
pub use order::lattice::{Join, JoinTable, Lattice};
pub use policy::diag::{Diagnostic, LoadError};
pub use policy::observed::Observed;
pub use policy::spec::Policy;
pub use policy::table::Table;
