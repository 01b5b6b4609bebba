//! What the policy's library accepts and how it reads an operand: the kinds an op takes
//! (`[ops.X] kinds`, `operand_kinds` and `join_kinds`, else the op catalogue's), each refusal with a message
//! that says what to do, and an array converted to its `[canonical]` dtype.

use super::astype::astype;
use super::vocab::{Arg, ErrorKind, OpError, err};
use crate::kernels::array::Array;
use crate::numeric::dtype::DType;
use crate::numeric::op::OpId;
use crate::promote::Generated;
use crate::promote::Operand;
use crate::promote::ScalarKind;

/// `Err(unsupported)` when an operand is of a kind op `name` refuses in `policy`, whatever the
/// computation dtype (its `[ops.X] operand_kinds`: PyTorch's `int8 - True` raises though the
/// result would be int8), or is a Python bool beside an array of a dtype the op refuses one
/// with (`[ops.X] python_bool_refused_with`: TensorFlow's `tf.add(int8, True)`). A Python
/// number is of its own kind; a Python int is an integer.
pub(super) fn accepts_operands(
    policy: &Generated,
    op: OpId,
    operands: &[Operand],
) -> Result<(), OpError> {
    let name = op.name();
    let refused = policy.python_bool_refused_with(op);
    if operands.contains(&Operand::Scalar(ScalarKind::Bool))
        && let Some(d) = operands.iter().find_map(|o| match *o {
            Operand::Array(d) | Operand::ZeroDim(d) if refused.contains(&d) => Some(d),
            _ => None,
        })
    {
        return err(
            ErrorKind::Unsupported,
            format!(
                "{name} refuses a Python bool beside an array of {} in the {} policy's \
                 library; pass the bool as a Python int or an array",
                d.name(),
                policy.name
            ),
        );
    }
    let Some(kinds) = policy.operand_kinds(op) else {
        return Ok(());
    };
    for o in operands {
        let (ok, what) = match *o {
            Operand::Array(d) | Operand::ZeroDim(d) => (kinds.accepts(d.kind()), d.name()),
            Operand::Scalar(ScalarKind::Bool) => (kinds.bool, "Python bool"),
            Operand::Scalar(ScalarKind::Int) => (kinds.signed || kinds.unsigned, "Python int"),
            Operand::Scalar(ScalarKind::Float) => (kinds.float, "Python float"),
            Operand::Scalar(ScalarKind::Complex) => (kinds.complex, "Python complex"),
        };
        if !ok {
            return err(
                ErrorKind::Unsupported,
                format!(
                    "{name} is not defined with an operand of {what} in the {} policy's library, \
                     whatever the result dtype; its operands are {}",
                    policy.name,
                    kinds.describe()
                ),
            );
        }
    }
    Ok(())
}

/// `Err(unsupported)` when the operands' join is of a kind op `op` refuses in `policy` before
/// its rule replaces the join (`[ops.X] join_kinds`: TensorFlow's `truediv(bool, bool)` raises
/// though `truediv(bool, int8)` is float32). No join is left to the promotion error.
pub(super) fn accepts_join(
    policy: &Generated,
    op: OpId,
    (a, b): (Operand, Operand),
) -> Result<(), OpError> {
    let Some(kinds) = policy.join_kinds(op) else {
        return Ok(());
    };
    match policy.result_type(a, b) {
        Ok(join) if !kinds.accepts(join.kind()) => err(
            ErrorKind::Unsupported,
            format!(
                "{} is not defined where its operands promote to {} in the {} policy's \
                 library; their join must be {}: cast an operand first",
                op.name(),
                join.name(),
                policy.name,
                kinds.describe()
            ),
        ),
        _ => Ok(()),
    }
}

/// `Err(unsupported)` unless op `name` is defined on computation dtype `c` in `policy` (its
/// `[ops.X] kinds`, else the catalogue's: `numeric::op`); the message says what to do instead.
/// Every op's kernel asks here, binary, unary and n-ary alike.
pub(super) fn accepts(policy: &Generated, op: OpId, c: DType) -> Result<(), OpError> {
    const BITWISE: [OpId; 3] = [
        OpId::of("bitwise_and"),
        OpId::of("bitwise_or"),
        OpId::of("bitwise_xor"),
    ];
    const INTEGRAL: [OpId; 3] = [
        OpId::of("floor_divide"),
        OpId::of("remainder"),
        OpId::of("power"),
    ];
    let info = op.info();
    let kinds = policy.kinds(op);
    if kinds.accepts(c.kind()) {
        // A measured library may still have no kernel for the dtype (PyTorch's uint16 `neg`).
        return policy.dtype_loop(op, c).map_err(super::vocab::promotion);
    }
    let (name, d) = (op.name(), c.name());
    let why = if kinds != info.kinds {
        format!(
            "{name} is not defined for {d} in the {} policy's library; it takes {}",
            policy.name,
            kinds.describe()
        )
    } else if BITWISE.contains(&op) {
        format!("{name} is not defined for {d}; bitwise ops take integers and bool")
    } else if op == OpId::of("subtract") && c == DType::Bool {
        "subtract is not defined for bool (NumPy: use bitwise_xor or logical_xor)".into()
    } else if op == OpId::of("negative") && c == DType::Bool {
        "negative is not defined for bool (NumPy: use logical_not)".into()
    } else if INTEGRAL.contains(&op) && c == DType::Bool {
        format!("{name} is not defined for bool; cast to an integer dtype first")
    } else if op == OpId::of("true_divide") && matches!(c, DType::Bool | DType::Int { .. }) {
        format!(
            "true_divide of {d} needs a float result and the policy has no [ops.true_divide] rule"
        )
    } else if INTEGRAL.contains(&op) && c.is_complex() {
        format!("{name} is not implemented for {d} in the reference kernels")
    } else {
        format!(
            "{name} is not defined for {d}; it takes {}",
            kinds.describe()
        )
    };
    err(ErrorKind::Unsupported, why)
}

/// An array as the policy's library reads it: converted to its `[canonical]` dtype when it
/// has one (JAX without x64 wraps an int64 input to int32 and rounds a float64 one to float32
/// before it promotes anything), else borrowed.
pub(super) fn canonical_array<'a>(policy: &Generated, a: &'a Array) -> std::borrow::Cow<'a, Array> {
    match policy.canonical_dtype(a.dtype) {
        d if d == a.dtype => std::borrow::Cow::Borrowed(a),
        d => std::borrow::Cow::Owned(astype(a, d)),
    }
}

/// [`canonical_array`] of an operand; a Python scalar is read as it is.
pub(super) fn canonical_arg<'a>(policy: &Generated, a: &'a Arg) -> std::borrow::Cow<'a, Arg> {
    match a {
        Arg::Array(x) => match canonical_array(policy, x) {
            std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(a),
            std::borrow::Cow::Owned(c) => std::borrow::Cow::Owned(Arg::Array(c)),
        },
        Arg::Scalar(_) => std::borrow::Cow::Borrowed(a),
    }
}
