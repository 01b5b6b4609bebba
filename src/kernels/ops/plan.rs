//! Planning a binary op: the operands' kinds checked, the computation dtype read from the
//! policy, the shapes broadcast, each operand prepared in the computation dtype (a weak scalar
//! materialised, a broadcast operand expanded), and the divisors and exponents the policy's
//! library checks before it computes.

use super::accept::{accepts, accepts_join, accepts_operands};
use super::input::Input;
use super::lanes::{int_lane, int_loader, load_into};
use super::scalar::{Conversion, int_range, python_ints_fit, python_ints_in_range};
use super::shape::{broadcast, expand};
use super::vocab::{Arg, ErrorKind, Op, OpError, Scalar, err, promotion};
use crate::numeric::c10::Float8;
use crate::numeric::dtype::DType;
use crate::numeric::op::{ComplexOrder, DivisionByZero, IntComparison, ScalarPrecision};
use crate::promote::Generated;

pub(super) fn prepare<'a>(
    arg: &'a Arg,
    compute: DType,
    shape: &[usize],
    conv: Conversion,
) -> Result<Input<'a>, OpError> {
    let array = match arg {
        Arg::Array(a) => match conv.array(a, compute) {
            Some(r) => std::borrow::Cow::Owned(r),
            None => std::borrow::Cow::Borrowed(a),
        },
        Arg::Scalar(s) => std::borrow::Cow::Owned(conv.scalar(*s, compute)?),
    };
    if array.len() == 1 {
        return Ok(Input { array, splat: true });
    }
    if array.shape[..] != shape[..] {
        let expanded = expand(&array, shape)?;
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
    let decided = decide(policy, op, a, b)?;
    planned(policy, op, &decided, a, b, max_elements)
}

/// What [`plan`] decides before it sees a shape or an array's value: for two array operands a
/// function of the policy, the op and the operands' [`Operand`]s alone, which
/// [`super::ArrayPlan`] keeps.
///
/// [`Operand`]: crate::promote::Operand
#[derive(Clone, Debug)]
pub(super) struct Decided {
    pub(super) compute: DType,
    /// The operands' conversion into `compute`, before the shape-dependent choice of
    /// [`super::xla::selects`].
    conv: Conversion,
    /// The comparison operand a Python int compared by value stands in (`exact_comparison`).
    exact: Option<usize>,
    /// A promotion error the op raises after broadcasting (the join a Python number reaches
    /// `compute` through does not exist).
    through: Result<(), OpError>,
}

impl Decided {
    /// Whether the op goes on to compute (no error is pending).
    pub(super) fn computes(&self) -> bool {
        self.through.is_ok()
    }
}

/// The dtype-level half of [`plan`]: the operands' kinds checked, the computation dtype read
/// from the policy, the conversion into it chosen.
pub(super) fn decide(policy: &Generated, op: Op, a: &Arg, b: &Arg) -> Result<Decided, OpError> {
    // A Python int is read before anything else (PyTorch wraps it as a tensor, JAX parses it);
    // the operands an op refuses whatever the result dtype are refused before a uint64 of
    // PyTorch's fails to promote (`bool[12] - 2**63` is torch's bool-subtraction error).
    python_ints_in_range(policy, &[a, b])?;
    let (oa, ob) = (a.operand(), b.operand());
    accepts_operands(policy, op.id(), &[oa, ob])?;
    python_ints_fit(policy, &[a, b])?;
    // NumPy 2 compares an integer array with a Python int outside its dtype by value: the int
    // is prepared as 0 here and `compute_binary` compares its value (`exact_comparison`).
    let exact = exact_comparison(policy, op, a, b);
    accepts_join(policy, op.id(), (oa, ob))?;
    let compute = if op == Op::TrueDivide {
        policy.true_divide_type(oa, ob)
    } else {
        policy.op_type(op.id(), oa, ob)
    }
    .map_err(promotion)?;
    accepts(policy, op.id(), compute)?;
    let mut conv = Conversion::of(policy, compute);
    // A library that flushes subnormals still computes `remainder`'s `fmod` in software, on
    // the operands as they are (`Subnormals::Flush`).
    // XLA's complex `maximum` and `minimum` select the operand itself
    // (`ComplexOrder::Lexicographic`), its subnormal parts kept.
    if op == Op::Remainder
        || (matches!(op, Op::Maximum | Op::Minimum)
            && compute.is_complex()
            && policy.semantics.complex_order == ComplexOrder::Lexicographic)
    {
        conv = conv.keeping_subnormals();
    }
    // Where an op rule or a measured loop computes elsewhere than the join, a Python int
    // reaches the computation dtype through the join under `PythonInt::Cast` (TensorFlow:
    // `uint8 / -129` divides by 127.0). A measured loop may exist without a join (NumPy's
    // `np.add(int8, bfloat16)` is a float32 loop): the scalar then converts directly.
    let measured = policy.measures(op.id(), oa, ob);
    let mut through = Ok(());
    if op == Op::TrueDivide || measured {
        match policy.result_type(oa, ob) {
            Ok(join) => conv = conv.through(join),
            Err(e) if !measured => through = Err(promotion(e)),
            Err(_) => {}
        }
    }
    Ok(Decided {
        compute,
        conv,
        exact,
        through,
    })
}

/// The shape- and value-dependent half of [`plan`], after [`decide`].
pub(super) fn planned<'a>(
    policy: &Generated,
    op: Op,
    decided: &Decided,
    a: &'a Arg,
    b: &'a Arg,
    max_elements: usize,
) -> Result<Prepared<'a>, OpError> {
    let Decided {
        compute,
        mut conv,
        exact,
        ..
    } = *decided;
    // PyTorch multiplies by a second operand of one element in its CPU scalar path
    // (`ScalarPrecision::Float32`), which computes only float16 and bfloat16 of the reduced
    // floats: a float8 raises ("mul_cpu_reduced_float" not implemented).
    if op == Op::Multiply
        && policy.semantics.reduced_float_scalars == ScalarPrecision::Float32
        && Float8::of(compute).is_some()
        && matches!(b, Arg::Array(y) if y.len() == 1)
    {
        return err(
            ErrorKind::Unsupported,
            format!(
                "multiply by a one-element {} array takes the {} policy's library's scalar \
                 path, which has no {} kernel; multiply arrays of the result's shape or in float32",
                compute.name(),
                policy.name,
                compute.name()
            ),
        );
    }
    let shape = broadcast(a.shape(), b.shape(), max_elements)?;
    // XLA's `x · convert(bool)` is a select of `x` as converted (`BoolMultiply::Select`).
    if super::xla::selects(policy, op, compute, (a, b), &shape).is_some() {
        conv = conv.keeping_subnormals();
    }
    decided.through.clone()?;
    let operand = |arg: &'a Arg, k: usize| {
        if exact == Some(k) {
            let zero = conv.scalar(Scalar::Int(0), compute)?;
            return Ok(Input {
                array: std::borrow::Cow::Owned(zero),
                splat: true,
            });
        }
        prepare(arg, compute, &shape, conv)
    };
    let (x, y) = (operand(a, 0)?, operand(b, 1)?);
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
    if op == Op::Power && matches!(compute, DType::Complex32 | DType::BComplex32) {
        return err(
            ErrorKind::Unsupported,
            format!(
                "power is not defined for {} (PyTorch: \"pow\" not implemented for 'ComplexHalf')",
                compute.name()
            ),
        );
    }
    let out_dtype = if op.is_comparison() {
        DType::Bool
    } else {
        compute
    };
    Ok((out_dtype, shape, x, y, compute))
}

/// Which operand of a comparison is a Python int that the policy compares by value
/// (`IntComparison::Exact`) because it lies outside the other operand's integer dtype: one of
/// NumPy's own, of a byte or more (ml_dtypes' int4 against 300 raises OverflowError).
pub(super) fn exact_comparison(policy: &Generated, op: Op, a: &Arg, b: &Arg) -> Option<usize> {
    if !op.is_comparison() || policy.semantics.python_int_comparison != IntComparison::Exact {
        return None;
    }
    let outside = |s: &Arg, t: &Arg| match (s, t) {
        (Arg::Scalar(Scalar::Int(x)), Arg::Array(t)) => match t.dtype {
            DType::Int { bits, signed } if bits >= 8 => {
                let (lo, hi) = int_range(bits, signed);
                !(lo..=hi).contains(x)
            }
            _ => false,
        },
        _ => false,
    };
    if outside(a, b) {
        Some(0)
    } else if outside(b, a) {
        Some(1)
    } else {
        None
    }
}

pub(super) type Prepared<'a> = (
    DType,
    crate::kernels::array::Shape,
    Input<'a>,
    Input<'a>,
    DType,
);
