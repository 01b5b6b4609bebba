//! PyTorch's n-ary promotion: `at::native::result_type` (aten/src/ATen/native/
//! TypeProperties.cpp), which TensorIterator runs over every operand of an op. Each operand
//! category keeps its own running result, folded with `promoteTypes` in operand order
//! (`update_result_type_state`): dimensioned tensors, zero-dim tensors, wrapped Python numbers
//! (a Python float as the default dtype). Then `combine_categories(dim, combine_categories(zero,
//! wrapped))`: a lower category counts where its kind is higher.
//!
//! Over the lattice core this is the join (`[categories] rule = "by-kind"`, docs/categories.md);
//! over the whole catalogue `promoteTypes` raises for uint16–64 with another integer or bool,
//! for a float8 with another float, for the bit and quantized types, and the fold is no longer
//! a join of anything. The pairwise values come from the measured table (its cells returned as
//! dtypes), the kinds from the table's declaration: a measured table's (`check`, `result-type`)
//! or the generated one the kernels read (`promote::Generated`, `Nary::Torch`).

use crate::order::dtype_sequence::{Pairs, Refusal};
use crate::policy::nary::TorchKind;
use crate::policy::table::Table;

/// The rule over one table of nodes by category.
pub struct ResultTypeState<'a, P: Pairs + ?Sized = Table> {
    pub table: &'a P,
    /// The dtype node each node is returned as (`int8@0d` as `int8`, `f*` as `float32`);
    /// `None` for a table of dtypes only.
    pub materialised: Option<&'a [Option<usize>]>,
    pub kinds: &'a [TorchKind],
}

impl<P: Pairs + ?Sized> ResultTypeState<'_, P> {
    /// The dtype node `i` computes as (`None`: `i ∨ i` raised).
    fn dtype(&self, i: usize) -> Option<usize> {
        self.materialised.map_or(Some(i), |m| m[i])
    }

    /// `promoteTypes(a, b)` on dtype nodes, `promote_skip_undefined`'s way.
    fn promote(&self, a: Option<usize>, b: Option<usize>) -> Result<Option<usize>, Refusal> {
        match (a, b) {
            (None, x) | (x, None) => Ok(x),
            (Some(a), Some(b)) => self
                .table
                .pair(a, b)
                .and_then(|c| self.dtype(c))
                .map(Some)
                .ok_or(Refusal::new(b, a)),
        }
    }

    fn kind(&self, x: Option<usize>) -> Option<TorchKind> {
        x.map(|x| self.kinds[x])
    }

    /// `combine_categories(higher, lower)`.
    fn combine(
        &self,
        higher: Option<usize>,
        lower: Option<usize>,
    ) -> Result<Option<usize>, Refusal> {
        let (h, l) = (self.kind(higher), self.kind(lower));
        if h == Some(TorchKind::Complex) {
            return Ok(higher);
        }
        if l == Some(TorchKind::Complex) {
            return match (h, higher) {
                // toComplexType(higher): what the table gives a floating tensor and a Python
                // complex (float16 ∨ c* is complex32); it raises for a float8.
                (Some(TorchKind::Floating), Some(x)) => {
                    let c = self.table.node_index("c*");
                    c.and_then(|c| self.table.pair(x, c))
                        .and_then(|r| self.dtype(r))
                        .map(Some)
                        .ok_or(Refusal {
                            dtype: lower.unwrap_or(x),
                            by: x,
                            no_complex: true,
                        })
                }
                _ => Ok(lower),
            };
        }
        if h == Some(TorchKind::Floating) {
            return Ok(higher);
        }
        if h == Some(TorchKind::Bool) || l == Some(TorchKind::Floating) {
            return self.promote(higher, lower);
        }
        Ok(higher.or(lower))
    }

    /// `at::native::result_type` of `operands` (nodes): the dtype node, or the pair whose
    /// promotion raised.
    pub fn result_type(&self, operands: &[usize]) -> Result<usize, Refusal> {
        let (mut dim, mut zero, mut wrapped) = (None, None, None);
        for &o in operands {
            let name = self.table.node_name(o);
            let current = self.dtype(o).ok_or(Refusal::new(o, o))?;
            let state = if crate::numeric::dtype::is_weak(name) {
                &mut wrapped
            } else if name.contains('@') {
                &mut zero
            } else {
                &mut dim
            };
            *state = self.promote(*state, Some(current))?;
        }
        let lower = self.combine(zero, wrapped)?;
        self.combine(dim, lower)?.ok_or(Refusal::new(0, 0))
    }
}
