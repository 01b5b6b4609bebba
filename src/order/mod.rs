//! The promotion order: a policy's DAG closed into a [`Lattice`](lattice::Lattice) (closure
//! bitsets, joins, n-ary results), and [`Input`](input::Input), a loaded policy or observed
//! table with its join table.

pub mod bits;
pub mod categories;
pub mod input;
pub mod lattice;
