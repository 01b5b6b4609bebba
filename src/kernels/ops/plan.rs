//! Planning a binary op: the operands' kinds checked, the computation dtype read from the
//! policy, the shapes broadcast, each operand prepared in the computation dtype (a weak scalar
//! materialised, a broadcast operand expanded), and the divisors and exponents the policy's
//! library checks before it computes.

use super::accept::{accepts, accepts_operands};
use super::input::Input;
use super::lanes::{int_lane, int_loader, load_into};
use super::scalar::{Conversion, python_ints_fit};
use super::shape::{broadcast, expand};
use super::vocab::{Arg, ErrorKind, Op, OpError, err, promotion};
use crate::numeric::dtype::DType;
use crate::numeric::op::DivisionByZero;
use crate::promote::Generated;

pub(super) fn prepare<'a>(
    arg: &'a Arg,
    compute: DType,
    shape: &[usize],
    conv: Conversion,
) -> Result<Input<'a>, OpError> {
    let array = match arg {
        Arg::Array(a) => match conv.zero_dim(a, compute) {
            Some(r) => std::borrow::Cow::Owned(r),
            None => std::borrow::Cow::Borrowed(a),
        },
        Arg::Scalar(s) => std::borrow::Cow::Owned(conv.scalar(*s, compute)?),
    };
    if array.len() == 1 {
        return Ok(Input { array, splat: true });
    }
    if array.shape != shape {
        let expanded = expand(&array, shape);
        return Ok(Input {
            array: std::borrow::Cow::Owned(expanded),
            splat: false,
        });
    }
    Ok(Input {
        array,
        splat: false,
    })
}

/// The result dtype, shape and prepared operands of `op(a, b)`, whose result may hold at most
/// `max_elements`.
pub(super) fn plan<'a>(
    policy: &Generated,
    op: Op,
    a: &'a Arg,
    b: &'a Arg,
    max_elements: usize,
) -> Result<Prepared<'a>, OpError> {
    // A Python int is read before anything else (PyTorch wraps it as a tensor, JAX parses it).
    python_ints_fit(policy, &[a, b])?;
    let (oa, ob) = (a.operand(), b.operand());
    accepts_operands(policy, op.id(), &[oa, ob])?;
    let compute = if op == Op::TrueDivide {
        policy.true_divide_type(oa, ob)
    } else {
        policy.op_type(op.id(), oa, ob)
    }
    .map_err(promotion)?;
    accepts(policy, op.id(), compute)?;
    let shape = broadcast(a.shape(), b.shape(), max_elements)?;
    let mut conv = Conversion::of(policy, compute);
    if op == Op::TrueDivide {
        conv = conv.through(policy.result_type(oa, ob).map_err(promotion)?);
    }
    let (x, y) = (
        prepare(a, compute, &shape, conv)?,
        prepare(b, compute, &shape, conv)?,
    );
    // The libraries check divisors and exponents as they compute: an empty result divides by
    // nothing (`torch.remainder(int8[0], 0)` and `np.power(int8[0], -1)` are empty).
    let computes = shape.iter().product::<usize>() > 0;
    if matches!(op, Op::FloorDivide | Op::Remainder)
        && matches!(compute, DType::Int { .. })
        && policy.semantics.integer_division_by_zero == DivisionByZero::Raise
        && computes
    {
        let t = int_loader(y.array.dtype, compute);
        let n = y.array.len();
        let mut buf = vec![0i64; n];
        load_into(&t, &y.array.data, 0, false, &mut buf, int_lane);
        if buf.contains(&0) {
            return err(
                ErrorKind::ZeroDivision,
                format!(
                    "integer {} by zero (the {} policy's library raises ZeroDivisionError)",
                    op.name(),
                    policy.name
                ),
            );
        }
    }
    if op == Op::Power && matches!(compute, DType::Int { signed: true, .. }) && computes {
        let t = int_loader(y.array.dtype, compute);
        let n = y.array.len();
        let mut buf = vec![0i64; n];
        load_into(&t, &y.array.data, 0, false, &mut buf, int_lane);
        if buf.iter().any(|&e| e < 0) {
            return err(
                ErrorKind::Input,
                "integers to negative integer powers are not allowed (NumPy raises ValueError)",
            );
        }
    }
    let out_dtype = if op.is_comparison() {
        DType::Bool
    } else {
        compute
    };
    Ok((out_dtype, shape, x, y, compute))
}

pub(super) type Prepared<'a> = (DType, Vec<usize>, Input<'a>, Input<'a>, DType);
