//! typejoin: dtype promotion policies as verified data.
//!
//! The modules follow the pipeline, each depending only on those listed before it
//! (docs/architecture.md; `tests/it/architecture.rs` fails on an edge that points back). They
//! are private: what a front end may name is the re-export block below.
//!
//! - `synth`: synthetic DAGs and a seeded RNG for benchmarks and property tests;
//! - `numeric`: the dtype catalogue, the one concrete [`DType`], the exact codec of every
//!   numeric format;
//! - `policy`: policy files and observed tables parsed into validated values with spans;
//! - `order`: the DAG closed into a [`Lattice`], joins, and the loaded [`Input`];
//! - `laws`: the lattice laws, checked exhaustively, with ranked witnesses;
//! - [`smt`]: the same laws as SMT-LIB scripts, proof obligations, and z3;
//! - `safety`: what every promotion does to values, and the policy's lints;
//! - `check`: laws by the chosen engine plus lints, composed once;
//! - `promote` and `generated`: the promotion tables codegen writes for the kernels;
//! - `kernels`: typed arrays and the CPU reference kernels;
//! - `jobs`: the runner's line protocol, `bench`, the `cast` table: the front ends' jobs;
//! - `design`: explain, diff, suggest;
//! - `output`: renderers, one per output format, of every value above (reports, CI
//!   annotations, tables, casts, safety, diffs, suggestions, diagrams, pages, Rust code),
//!   re-exported as [`render`].
//!
//! Library functions take text and return values; only the binary reads and writes files.

// Every `unsafe` block says why it is sound; every `unsafe fn` says what its caller owes.
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod synth;

mod numeric;

mod policy;

mod order;

mod laws;

pub mod smt;

mod safety;

mod check;

mod promote;

mod generated;

mod kernels;

mod jobs;

mod design;

mod output;

// The library surface: the modules above are private, and what a front end (the CLI, the
// Python module, the tests, the benches) may name is this block, by stage. Items are flat
// where their names say what they are; a family whose names repeat others' (`text`, `json`,
// `Options`, `verify`) is a namespace: `ops`, `op`, `suggest`, `bench`, `cast`, `conformance`,
// `render` below, and `smt`, the one public module (z3's half: `smt::solve::verify`,
// `smt::obligations`). docs/architecture.md § "The library surface" lists it;
// `tests/it/architecture.rs` holds the two together.

// Synthetic DAGs for benchmarks and property tests.
pub use synth::{Rng, grid};

// The numeric catalogue: dtypes, formats and their codec, the op catalogue and conventions.
pub use numeric::c10::Float8 as TorchFloat8;
pub use numeric::dtype::{CATALOGUE as DTYPES, DType, SMALL_FLOATS, Unit, canonical, float_format};
pub use numeric::format::{FloatFormat, IntTarget, Source, Value, cast_bits};
pub use numeric::op;

// Policy files and observed tables, with located diagnostics.
pub use policy::diag::{
    Diagnostic, LoadError, MAX_ERRORS, SNIPPET_CHARS, Style, decode, did_you_mean,
};
pub use policy::nary::{NaryRule, NumpyClass, NumpyKind, TorchKind};
pub use policy::observed::Observed;
pub use policy::provenance::Provenance;
pub use policy::requirements::{Requirement, Requirements, parse_requirements};
pub use policy::spec::Policy;
pub use policy::table::Table;

// The order: the DAG closed into a lattice, joins, the loaded input.
pub use order::categories::rule_result;
pub use order::dtype_sequence::{Arg, Refusal};
pub use order::input::{Input, SizeLimit};
pub use order::lattice::{Join, JoinTable, Lattice};

// The lattice laws, checked exhaustively.
pub use laws::{
    Check, CheckOptions, Law, LawResult, Report, Status, brute_force, check_lattice, check_table,
    induced_counts,
};

// What every promotion does to values.
#[cfg(feature = "z3")]
pub use safety::prove;
pub use safety::{
    Class, Conversion, Engine as SafetyEngine, Found, Method, Numeric, analyse, classify, lint,
};

// Laws by the chosen engine plus lints, composed once.
#[cfg(feature = "z3")]
pub use check::Z3_CROSS_CHECK_NODES;
pub use check::{Checked, Engine, Options as CheckConfig, check, exit_code};

// The generated promotion tables the kernels read.
pub use generated::ALL as GENERATED;
pub use promote::{Failure, Generated, Operand, PromotionError, ScalarKind, runtime as generate};

// The reference kernels: arrays, casts, ops.
pub use kernels::alloc::HugePages;
pub use kernels::array::{Array, ArrayError, Buf, Data, Shape};
pub use kernels::cast::{Caster, Unit as Lane, f16_to_f32};
pub use kernels::ops;
pub use kernels::policy;

// The front ends' jobs: the conformance runner, `bench`, the `cast` table.
pub use jobs::{bench, cast, conformance};

// Design tools.
pub use design::diff::{Diff, diff};
pub use design::explain::explain;
pub use design::repair;
pub use design::result_type::{ResultType, result_type, result_type_with};
pub use design::suggest;
pub use design::synthesis;

/// The renderers, one module per output format, of every value above.
pub mod render {
    pub use crate::output::render::{ReportOptions, human, json, json_doc, json_file};
    pub use crate::output::{
        cast, codegen, diff, dot, gate, pages, repair, result_type, safety, suggest, synthesis,
        table,
    };
}
