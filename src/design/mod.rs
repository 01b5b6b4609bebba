//! Tools for a policy designer: why a join is what it is ([`explain`]), where two policies or
//! tables disagree ([`diff`]), where a new dtype can go ([`suggest`]), and the n-ary result of
//! any operands ([`result_type`]).

pub mod diff;
pub mod explain;
pub mod result_type;
pub mod suggest;
