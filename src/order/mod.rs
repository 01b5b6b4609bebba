//! The promotion order: a policy's DAG closed into a [`Lattice`](lattice::Lattice) (closure
//! bitsets, joins, n-ary results), and [`Input`](input::Input), a loaded policy or observed
//! table with its join table.

pub(crate) mod bits;
pub mod categories;
pub mod dtype_sequence;
pub(crate) mod input;
pub(crate) mod lattice;
pub mod result_type_state;
