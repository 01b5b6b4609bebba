//! Tools for a policy designer: why a join is what it is ([`explain`]), where two policies or
//! tables disagree ([`diff`]), and where a new dtype can go ([`suggest`]).

pub mod diff;
pub mod explain;
pub mod suggest;
