//! Numbers, knowing nothing of policies: the dtype catalogue (names, short codes, kinds) and the
//! one concrete [`DType`](dtype::DType) the kernels compute with, and the exact codec of every
//! numeric format ([`format`]), the op catalogue ([`op`]) and the kernel conventions a policy
//! declares ([`conventions`]), and PyTorch's own float8 conversions ([`c10`]). Everything else reads values through here.

pub mod c10;
pub(crate) mod conventions;
pub mod dtype;
pub mod format;
pub mod op;
