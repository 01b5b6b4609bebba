//! Tools for a policy designer: why a join is what it is ([`explain`]), where two policies or
//! tables disagree ([`diff`]), where a new dtype can go ([`suggest`]), and the n-ary result of
//! any operands ([`result_type`]); the fewest changes that make a table a lattice
//! ([`repair`]) and a lattice from requirements ([`synthesis`]), over the order search they
//! share ([`order_search`]).

pub mod diff;
pub mod explain;
pub mod order_search;
pub mod repair;
pub mod result_type;
pub mod suggest;
pub mod synthesis;
