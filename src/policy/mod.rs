//! Reading the inputs: policy files ([`spec`]), observed tables ([`observed`]) and requirements
//! files for synthesis ([`requirements`]) into validated
//! values with spans, the join [`Table`](table::Table) both kinds share, and the located
//! diagnostics ([`diag`]) every input error carries. Knows nothing of orders or laws.

pub mod diag;
pub mod kernels;
pub mod nary;
pub(crate) mod observed;
pub mod provenance;
pub mod requirements;
pub mod spec;
pub(crate) mod table;
