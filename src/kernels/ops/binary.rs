//! The public binary ops (`binary`, `binary_into`) and the policy's conventions applied around
//! a planned op: a scalar at float32 precision, a complex `add` with α, a zero remainder's
//! sign, float floor division as the floor of the quotient, PyTorch's `s / t` rewritten.

use super::accept::{accepts_operands, canonical_arg};
use super::astype::{astype, c10_into};
use super::cmath;
use super::complex::{complex_alpha, schoolbook_vectors, smith_fused_into};
use super::dispatch::{run_binary, run_opmath};
use super::flush;
use super::input::Input;
use super::lanes::int_value;
use super::plan::{exact_comparison, plan};
use super::shape::{check_out, expand, whole};
use super::sleef;
use super::vocab::{Arg, DEFAULT_MAX_ELEMENTS, Op, OpError, Scalar};
use super::xla::{self, Step};
use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::numeric::c10::Float8;
use crate::numeric::dtype::DType;
use crate::numeric::op::ComplexAdd;
use crate::numeric::op::ComplexDivide;
use crate::numeric::op::ComplexMultiply;
use crate::numeric::op::ComplexPower;
use crate::numeric::op::Float8Conversion;
use crate::numeric::op::FloatFloorDivide;
use crate::numeric::op::PowerExponent;
use crate::numeric::op::ScalarOverArray;
use crate::numeric::op::ScalarPrecision;
use crate::numeric::op::Subnormals;
use crate::numeric::op::ZeroSign;
use crate::numeric::op::ZeroTies;
use crate::promote::Generated;

/// `true_divide(s, t)` of a Python number and an array as the policy's library computes it:
/// under `ScalarOverArray::ReciprocalTimes` (PyTorch's `s / t`) the operands of
/// `multiply(1 / t, s)`, the reciprocal computed here; `None` where the op is as written. The
/// product's dtype and errors are then the op's: `2**63 / bool` is float32, where the quotient
/// would have no dtype (bool with uint64).
pub(super) fn rewrite(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
    max_elements: usize,
) -> Result<Option<[Arg; 2]>, OpError> {
    let (Op::TrueDivide, Arg::Scalar(s), Arg::Array(_), ScalarOverArray::ReciprocalTimes) =
        (op, a, b, policy.semantics.scalar_over_array)
    else {
        return Ok(None);
    };
    // The op as written takes these operands before it becomes two others.
    accepts_operands(policy, op.id(), &[a.operand(), b.operand()])?;
    let one = Arg::Scalar(Scalar::Int(1));
    let (to, shape, x, y, compute) = plan(policy, Op::TrueDivide, &one, b, max_elements)?;
    let mut r = Array::zeros(to, shape)?;
    compute_binary(policy, Op::TrueDivide, compute, (&one, &x), (b, &y), &mut r)?;
    Ok(Some([Arg::Array(r), Arg::Scalar(*s)]))
}

/// An error of a rewritten op (see [`rewrite`]) that says what was computed.
pub(super) fn as_rewritten(policy: &Generated) -> impl Fn(OpError) -> OpError + '_ {
    move |e| OpError {
        kind: e.kind,
        message: format!(
            "the {} policy's library computes `s / t` as `t.reciprocal() * s`: {}",
            policy.name, e.message
        ),
    }
}

/// `op(a, b)` under `policy`: result dtype from the generated table, NumPy broadcasting, a
/// result of at most [`DEFAULT_MAX_ELEMENTS`] (`apply` takes another limit).
pub fn binary(policy: &Generated, op: Op, a: &Arg, b: &Arg) -> Result<Array, OpError> {
    binary_within(policy, op, a, b, DEFAULT_MAX_ELEMENTS)
}

/// [`binary`] with a result of at most `max_elements`.
pub(super) fn binary_within(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
    max_elements: usize,
) -> Result<Array, OpError> {
    let (a, b) = (canonical_arg(policy, a), canonical_arg(policy, b));
    let (a, b) = (a.as_ref(), b.as_ref());
    if let Some([r, s]) = rewrite(policy, op, a, b, max_elements)? {
        return binary_within(policy, Op::Multiply, &r, &s, max_elements)
            .map_err(as_rewritten(policy));
    }
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b, max_elements)?;
    let mut out = Array::zeros(out_dtype, shape)?;
    compute_binary(policy, op, compute, (a, &x), (b, &y), &mut out)?;
    Ok(out)
}

/// Runs a planned op into `out` with the policy's conventions: a scalar second operand of a
/// 16-bit float op at float32 precision (`ScalarPrecision::Float32`), the sign of a zero
/// float remainder (`ZeroSign::Dividend`), float floor division as the floor of the rounded
/// quotient (`FloatFloorDivide::FloorOfQuotient`), and XLA's where the policy declares them
/// (`xla::compute` decides the whole op, `xla::amend` corrects what the IEEE path wrote).
/// A `memory` error when a broadcast operand the convention reads whole cannot be allocated.
pub(super) fn compute_binary(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) -> Result<(), OpError> {
    if xla::compute(policy, op, compute, (a, b), (x, y), out) {
        return Ok(());
    }
    compute_ieee(policy, op, compute, (a, x), (b, y), out)?;
    // A tiny result is written as a zero of its sign (`Subnormals::Flush`; its operands were
    // read so by `plan`).
    if policy.semantics.subnormals == Subnormals::Flush {
        flush::write(out);
    }
    xla::amend(policy, op, compute, (a, b), (x, y), out)
}

/// [`compute_binary`] before the result's flush.
fn compute_ieee(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) -> Result<(), OpError> {
    if let (Arg::Array(p), Arg::Array(q)) = (a, b)
        && op.is_comparison()
        && policy.mixed_loop(op.id(), a.operand(), b.operand())
    {
        return compare_exactly(op, Exact::Array(p), Exact::Array(q), out);
    }
    match (exact_comparison(policy, op, a, b), a, b) {
        (Some(0), Arg::Scalar(Scalar::Int(s)), Arg::Array(q)) => {
            return compare_exactly(op, Exact::Int(*s), Exact::Array(q), out);
        }
        (Some(_), Arg::Array(p), Arg::Scalar(Scalar::Int(s))) => {
            return compare_exactly(op, Exact::Array(p), Exact::Int(*s), out);
        }
        _ => {}
    }
    if op == Op::Power && compute.is_complex() {
        return complex_power(policy, compute, (a, x), (b, y), out);
    }
    if op == Op::Power
        && policy.semantics.power_exponent == PowerExponent::Numpy
        && numpy_scalar_power(compute, (a, x), (b, y), out)
    {
        return Ok(());
    }
    let formulas = match (op, policy.semantics.complex_multiply) {
        (Op::TrueDivide, _) if policy.semantics.complex_divide == ComplexDivide::Eigen => {
            Some(cmath::Formulas::Eigen)
        }
        (Op::Multiply, ComplexMultiply::Eigen) => Some(cmath::Formulas::Eigen),
        (Op::Multiply, ComplexMultiply::Xla) => {
            fn shape(a: &Arg) -> Option<&[usize]> {
                match a {
                    Arg::Array(p) => Some(&p.shape),
                    Arg::Scalar(_) => None,
                }
            }
            // complex64 converted to a complex128 product, a Python complex to complex64.
            let converted = match b {
                Arg::Array(q) => q.dtype.is_complex() && q.dtype != compute,
                Arg::Scalar(s) => matches!(s, Scalar::Complex(..)) && compute == DType::Complex64,
            };
            let commuted = cmath::xla_commutes(shape(a), shape(b), &out.shape, converted);
            Some(cmath::Formulas::Xla { commuted })
        }
        _ => None,
    };
    if matches!(compute, DType::Complex64 | DType::Complex128)
        && out.dtype == compute
        && let Some(formulas) = formulas
    {
        let flush = policy.semantics.subnormals == Subnormals::Flush;
        let r = cmath::as_computed(formulas, op, compute, x, y, &out.shape.clone(), flush);
        out.data.assign(r.data);
        return Ok(());
    }
    if op == Op::TrueDivide
        && matches!(compute, DType::Complex64 | DType::Complex128)
        && out.dtype == compute
        && policy.semantics.complex_divide == ComplexDivide::SmithFused
    {
        smith_fused_into(x, y, out);
        return Ok(());
    }
    // PyTorch computes a float8 result in float32 (its operands, already float8, widen
    // exactly) and converts it by c10 (`Float8Conversion::C10`).
    if policy.semantics.float8_conversion == Float8Conversion::C10
        && out.dtype == compute
        && Float8::of(compute).is_some()
    {
        let mut wide = Array::zeroed(DType::Float32, out.shape.clone());
        compute_ieee(policy, op, DType::Float32, (a, x), (b, y), &mut wide)?;
        c10_into(&wide, out).expect("same shape");
        return Ok(());
    }
    // The float dtypes every library computes in (the conventions below are theirs).
    let common_float = matches!(
        compute,
        DType::FLOAT16 | DType::BFLOAT16 | DType::Float32 | DType::Float64
    );
    // `floor(a / b)`: the quotient as true_divide rounds it, then its floor in place (exact).
    let floor_of_quotient = op == Op::FloorDivide
        && common_float
        && out.dtype == compute
        && policy.semantics.float_floor_divide == FloatFloorDivide::FloorOfQuotient;
    let op = if floor_of_quotient {
        Op::TrueDivide
    } else {
        op
    };
    // `2.5 * t` is `t * 2.5` to Python: a Python scalar first multiplies as a second one.
    let swapped = op == Op::Multiply && matches!(a, Arg::Scalar(_));
    let scalar = if swapped {
        opmath_scalar(policy, op, compute, a)
    } else {
        opmath_scalar(policy, op, compute, b)
    };
    let alpha = matches!(op, Op::Add | Op::Subtract)
        && compute.is_complex()
        && policy.semantics.complex_add == ComplexAdd::Alpha;
    match scalar {
        Some(s) if swapped => run_opmath(op, compute, y, s, &mut out.data),
        Some(s) => run_opmath(op, compute, x, s, &mut out.data),
        // `2 + t` is `t + 2` to Python: the scalar is the one multiplied by α.
        None if alpha && op == Op::Add && matches!(a, Arg::Scalar(_)) => out
            .data
            .assign(complex_alpha(op, compute, y, x, out.shape.clone()).data),
        None if alpha => out
            .data
            .assign(complex_alpha(op, compute, x, y, out.shape.clone()).data),
        None => run_binary(op, compute, x, y, &mut out.data),
    }
    if op == Op::Remainder
        && policy.semantics.remainder_zero_sign == ZeroSign::Dividend
        && common_float
    {
        zero_takes_dividends_sign(a, x, compute, out);
    }
    if matches!(op, Op::Remainder | Op::FloorDivide)
        && common_float
        && out.dtype == compute
        && policy.semantics.float_floor_divide == FloatFloorDivide::Vectors
    {
        vector_division(policy, op, compute, (a, x), (b, y), out);
    }
    if floor_of_quotient {
        // The quotient is a result the library writes: a tiny one is already a zero of its
        // sign (`Subnormals::Flush`) when its floor is taken, so `-2 // 1.8e308` is -0.0 in
        // TensorFlow, not -1.0.
        if policy.semantics.subnormals == Subnormals::Flush {
            flush::write(out);
        }
        floor_in_place(compute, &mut out.data);
    }
    if matches!(op, Op::Maximum | Op::Minimum) && out.dtype == compute {
        settle_zero_ties(op, policy.semantics.zero_ties, (a, x), (b, y), out);
    }
    if op == Op::Multiply
        && matches!(compute, DType::Complex64 | DType::Complex128)
        && out.dtype == compute
    {
        match policy.semantics.complex_multiply {
            ComplexMultiply::Fused => {}
            ComplexMultiply::Vectors => {
                // PyTorch's CPU loops, on AVX-512: 64-byte vectors (4 complex128, 8 complex64).
                let row = inner_row(&out.shape, [a.shape(), b.shape()]);
                let vector = if compute == DType::Complex64 { 8 } else { 4 };
                // An operand of one element along the row (a zero-dim one, a Python number, a
                // broadcast column) is read with stride zero: PyTorch's scalar tail differs.
                let stride0 = row > 1
                    && [a.shape(), b.shape()]
                        .iter()
                        .any(|s| inner_extent(s, &out.shape, row) == 1);
                schoolbook_vectors(x, y, (row, stride0), vector, out);
            }
            ComplexMultiply::Eigen | ComplexMultiply::Xla => unreachable!("computed above"),
        }
    }
    Ok(())
}

/// `power` in complex64 or complex128 by the policy's `complex_power`: NumPy's `npy_cpow`, or
/// PyTorch's `pow`, whose Python-number exponents 0, 1, 2, 3, −1, −2, 0.5 and −0.5 are the
/// policy's own products, quotients and `csqrt` (`pow_tensor_scalar`), every other pair glibc's
/// `cpow`.
fn complex_power(
    policy: &Generated,
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) -> Result<(), OpError> {
    let rule = policy.semantics.complex_power;
    let special = match b {
        Arg::Scalar(s) if rule == ComplexPower::Torch => match s.as_complex() {
            (re, 0.0) => [0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5]
                .into_iter()
                .find(|&e| e == re),
            _ => None,
        },
        _ => None,
    };
    let shape = out.shape.clone();
    let Some(e) = special else {
        let flush = policy.semantics.subnormals == Subnormals::Flush;
        out.data
            .assign(cmath::power(rule, compute, x, y, &shape, flush).data);
        return Ok(());
    };
    // `1` in the result dtype, the dividend of PyTorch's reciprocals.
    let one = Array::from_bits(DType::Float64, vec![], &[[1.0f64.to_bits(), 0]]);
    let one = astype(&one.expect("a scalar"), compute);
    let one_in = Input {
        array: std::borrow::Cow::Borrowed(&one),
        splat: true,
    };
    let one_arg = Arg::Array(one.clone());
    let run = |op: Op, (p, xp): (&Arg, &Input), (q, yq): (&Arg, &Input)| {
        let mut r = Array::zeros(compute, shape.clone())?;
        compute_ieee(policy, op, compute, (p, xp), (q, yq), &mut r)?;
        Ok::<_, OpError>(Arg::Array(r))
    };
    fn as_input(r: &Arg) -> Input<'_> {
        let Arg::Array(r) = r else {
            unreachable!("an array")
        };
        Input {
            array: std::borrow::Cow::Borrowed(r),
            splat: false,
        }
    }
    let square = || run(Op::Multiply, (a, x), (a, x));
    let result = match e {
        0.0 => Arg::Array(expand(&one, &shape)?),
        1.0 => Arg::Array(cmath::convert(compute, x, &shape)),
        2.0 => square()?,
        3.0 => {
            let sq = square()?;
            run(Op::Multiply, (&sq, &as_input(&sq)), (a, x))?
        }
        -1.0 => run(Op::TrueDivide, (&one_arg, &one_in), (a, x))?,
        -2.0 => {
            let sq = square()?;
            run(Op::TrueDivide, (&one_arg, &one_in), (&sq, &as_input(&sq)))?
        }
        0.5 => Arg::Array(cmath::sqrt(compute, x, &shape)),
        _ => {
            let root = Arg::Array(cmath::sqrt(compute, x, &shape));
            run(
                Op::TrueDivide,
                (&one_arg, &one_in),
                (&root, &as_input(&root)),
            )?
        }
    };
    let Arg::Array(r) = result else {
        unreachable!("an array")
    };
    out.data.assign(r.data);
    Ok(())
}

/// NumPy's float32 and float64 `power` loops given an exponent of stride zero
/// (`PowerExponent::Numpy`): an exponent of −1, 0, 0.5, 1 or 2 is `1 / x`, 1, `sqrt(x)`, `x`
/// or `x · x` for every element. False, with nothing written, for any other exponent, dtype or
/// shape: libm's `pow` then computes the result. Operands load as the general path loads them
/// (`lanes`), so a float16 or int8 base widens as it would for `pow`.
fn numpy_scalar_power(
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) -> bool {
    use super::lanes::{canon32, canon64, f32_lane, f32_loader, f64_lane, f64_loader, load_into};
    // The exponent's stride is zero where it is zero-dim (a Python number too), or where
    // NumPy's iterator broadcasts it: the base is not zero-dim and of another shape. Operands
    // of one shape (zero-dim ones aside) take the trivial loop, the exponent's stride its size.
    let one = y.array.len() == 1;
    let stride_zero = b.shape().is_empty() || (!a.shape().is_empty() && a.shape() != b.shape());
    if !(one && stride_zero) || out.dtype != compute {
        return false;
    }
    macro_rules! special {
        ($unit:ident, $t:ty, $load:expr, $lane:path, $canon:path) => {{
            let Data::$unit(o) = &mut out.data else {
                return false;
            };
            let mut e = [0.0 as $t];
            load_into(&$load(y.array.dtype), &y.array.data, 0, true, &mut e, $lane);
            let e = e[0];
            let f: fn($t) -> $t = if e == -1.0 {
                |v| 1.0 / v
            } else if e == 0.0 {
                |_| 1.0
            } else if e == 0.5 {
                <$t>::sqrt
            } else if e == 1.0 {
                |v| v
            } else if e == 2.0 {
                |v| v * v
            } else {
                return false;
            };
            let load = $load(x.array.dtype);
            let mut lanes = [0.0 as $t; super::vocab::CHUNK];
            for (k, o) in o.chunks_mut(super::vocab::CHUNK).enumerate() {
                let v = &mut lanes[..o.len()];
                let start = k * super::vocab::CHUNK;
                load_into(&load, &x.array.data, start, x.splat, v, $lane);
                for (o, &v) in o.iter_mut().zip(v.iter()) {
                    *o = $canon(f(v));
                }
            }
            true
        }};
    }
    match compute {
        DType::Float32 => special!(
            U32,
            f32,
            |d| f32_loader(d, DType::Float32),
            f32_lane,
            canon32
        ),
        DType::Float64 => special!(U64, f64, f64_loader, f64_lane, canon64),
        _ => false,
    }
}

/// An operand compared by its value.
enum Exact<'a> {
    Array(&'a Array),
    Int(i128),
}

/// A comparison by value: in a mixed loop (NumPy 2's int64 against uint64), each integer
/// operand read as its own value, so `int64(-1) < uint64(2**64 - 1)` and `int64(2**62) ==
/// uint64(2**62)` hold where the join, float64, would round; and an integer array against a
/// Python int outside its dtype (`IntComparison::Exact`: NumPy 2's `uint8 < -1` is False). The
/// cases are few and the loop plain.
fn compare_exactly<'a>(op: Op, a: Exact<'a>, b: Exact<'a>, out: &mut Array) -> Result<(), OpError> {
    /// An operand as the loop reads it: an array whole, broadcast to the result's shape, or
    /// an int as itself.
    enum Read<'a> {
        Whole(std::borrow::Cow<'a, Array>),
        Int(i128),
    }
    impl Read<'_> {
        fn value(&self, i: usize) -> i128 {
            match self {
                Read::Whole(w) => int_value(w.dtype, w.bits_at(i)[0]),
                Read::Int(s) => *s,
            }
        }
    }
    let read = |e: Exact<'a>| match e {
        Exact::Array(a) => whole(a, &out.shape).map(Read::Whole),
        Exact::Int(s) => Ok(Read::Int(s)),
    };
    let (x, y) = (read(a)?, read(b)?);
    for i in 0..out.len() {
        let (p, q) = (x.value(i), y.value(i));
        let r = match op {
            Op::Equal => p == q,
            Op::NotEqual => p != q,
            Op::Less => p < q,
            Op::LessEqual => p <= q,
            Op::Greater => p > q,
            _ => p >= q,
        };
        out.set_bits(i, [r as u64, 0]);
    }
    Ok(())
}

/// Which operand a tie of zeros takes where the kernels' choice is not the policy's
/// ([`ZeroTies`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TieWinner {
    First,
    Second,
    /// +0 for `maximum`, −0 for `minimum`.
    BySign,
    /// The flattened result as rows of `row` elements, each run by a loop of `vector`-element
    /// vectors that take the second operand, its tail by a scalar loop that takes the first.
    Vectors {
        row: usize,
        vector: usize,
    },
}

/// Extent `k` of `s` counted from its last dimension (1 past its first).
fn extent(s: &[usize], k: usize) -> usize {
    if k < s.len() { s[s.len() - 1 - k] } else { 1 }
}

/// The length of the rows a library's loop runs over: the trailing dimensions of the result
/// over which every operand is either whole (those extents its own) or constant (extent 1),
/// as PyTorch's TensorIterator coalesces them (`(3, 5)` with `(3, 5)` is one row of 15,
/// `(2, 40)` with `(40,)` two of 40, `(40, 2)` with `(40, 1)` forty of 2).
fn inner_row(out: &[usize], operands: [&[usize]; 2]) -> usize {
    let mut row = 1;
    for k in 0..out.len() {
        let fits = |s: &[usize]| {
            (0..=k).all(|j| extent(s, j) == extent(out, j)) || (0..=k).all(|j| extent(s, j) == 1)
        };
        if k > 0 && !operands.iter().all(|s| fits(s)) {
            break;
        }
        row *= extent(out, k);
    }
    row.max(1)
}

/// How many elements of `operand` (broadcast to `out`) one row of `row` elements spans: the
/// product of its extents over `out`'s trailing dimensions that make up the row.
fn inner_extent(operand: &[usize], out: &[usize], row: usize) -> usize {
    let (mut spanned, mut own) = (1, 1);
    for k in 0..out.len() {
        if spanned >= row {
            break;
        }
        spanned *= extent(out, k);
        own *= extent(operand, k);
    }
    own
}

/// `maximum`/`minimum` where the operands are zeros of opposite signs (complex: equal values
/// whose parts differ only in a zero's sign), settled as the policy's library settles them.
/// The kernels give the second operand in a real dtype and the first in a complex one; only
/// elements whose result has a zero part are looked at, so a result without zeros costs one
/// read.
fn settle_zero_ties(
    op: Op,
    rule: ZeroTies,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) {
    let d = out.dtype;
    let bytes = d.unit().bytes();
    let winner = match (rule, d.is_complex()) {
        _ if !d.is_float() && !d.is_complex() => return,
        (ZeroTies::Operand, false) if d == DType::FLOAT16 => TieWinner::First,
        (ZeroTies::Second | ZeroTies::Operand, _) => return,
        (ZeroTies::First | ZeroTies::Vectors | ZeroTies::Packets, true) => return,
        (ZeroTies::First, false) => TieWinner::First,
        // PyTorch's CPU loops, on AVX-512: 64-byte vectors.
        (ZeroTies::Vectors, false) => TieWinner::Vectors {
            row: inner_row(&out.shape, [a.shape(), b.shape()]),
            vector: 64 / bytes,
        },
        // TensorFlow's Eigen kernels, built for AVX2: 32-byte packets of float32 and float64.
        (ZeroTies::Packets, false) if bytes >= 4 => TieWinner::Vectors {
            row: out.len().max(1),
            vector: 32 / bytes,
        },
        (ZeroTies::Packets, false) => TieWinner::First,
        (ZeroTies::Ordered, false) => TieWinner::BySign,
        (ZeroTies::Ordered, true) => TieWinner::Second,
    };
    let sign = 1u64 << (d.pattern_bits() - 1);
    let at = out.zero_part_indices();
    if at.is_empty() {
        return;
    }
    // The candidates' operands in the result dtype, and their values exactly in the widest.
    let take = |i: &Input| astype(&i.array.gather(&at, i.splat), d);
    let (xs, ys) = (take(x), take(y));
    let wide = if d.is_complex() {
        DType::Complex128
    } else {
        DType::Float64
    };
    let (xv, yv) = (astype(&xs, wide).bits(), astype(&ys, wide).bits());
    let (xs, ys) = (xs.bits(), ys.bits());
    let value = |b: [u64; 2]| (f64::from_bits(b[0]), f64::from_bits(b[1]));
    for (k, &i) in at.iter().enumerate() {
        if xs[k] == ys[k] || value(xv[k]) != value(yv[k]) {
            continue; // not a tie of zeros: one value, or two that compare unequal (or NaN)
        }
        let bits = match winner {
            TieWinner::First => xs[k],
            TieWinner::Second => ys[k],
            TieWinner::Vectors { row, vector } if i % row < row - row % vector => ys[k],
            TieWinner::Vectors { .. } => xs[k],
            TieWinner::BySign => [if op == Op::Minimum { sign } else { 0 }, 0],
        };
        out.set_bits(i, bits);
    }
}

/// `remainder` and `floor_divide` as PyTorch's loops compute them
/// (`FloatFloorDivide::Vectors`) where `divmod` (already in `out`) is not their value. In
/// the first `row − row % vector` elements of each row, the vector loop: the scalar loop's
/// formulas with Sleef's `fmod` ([`sleef`]). A float16 or bfloat16 `floor_divide` rounds each
/// step to the dtype in both loops, but by a divisor of one element (`iter.is_scalar(2)`):
/// then it computes in float32 with the divisor as [`opmath_scalar`] reads it, rounded once.
fn vector_division(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) {
    let row = inner_row(&out.shape, [a.shape(), b.shape()]);
    let vector = 64 / compute.unit().bytes();
    let narrow = op == Op::FloorDivide && matches!(compute, DType::FLOAT16 | DType::BFLOAT16);
    let scalar = if narrow {
        opmath_scalar(policy, op, compute, b)
    } else {
        None
    };
    // Every element where each step rounds to the dtype; else only the vectors' elements.
    let every = narrow && scalar.is_none();
    if row < vector && !every {
        return;
    }
    let result = Step::unflushed(compute);
    let step = match scalar {
        Some(_) => Step::unflushed(DType::Float32),
        None => result,
    };
    let read = |i: &Input| astype(&i.array, compute).bits();
    let (xs, ys) = (read(x), read(y));
    let at = |i: &Input, k: usize| if i.splat { 0 } else { k };
    for k in 0..out.len() {
        let in_vector = row >= vector && k % row < row - row % vector;
        if !in_vector && !every {
            continue;
        }
        let p = result.value(xs[at(x, k)][0]);
        let q = scalar.map_or_else(|| result.value(ys[at(y, k)][0]), f64::from);
        let r = match op {
            Op::Remainder => {
                // `blendv(mod, mod + b, mod != 0 & (b < 0 ^ mod < 0))`: a NaN `mod` is not 0.
                let m = sleef_fmod(compute, p, q);
                if m != 0.0 && ((q < 0.0) != (m < 0.0)) {
                    step.round(m + q)
                } else {
                    m
                }
            }
            _ => torch_floor_divide(step, in_vector, p, q),
        };
        out.set_bits(k, [result.bits(result.round(r)), 0]);
    }
}

/// Sleef's `fmod` in `compute`'s vectors (float32 for float16 and bfloat16).
fn sleef_fmod(compute: DType, a: f64, b: f64) -> f64 {
    match compute {
        DType::Float64 => sleef::fmod(a, b),
        _ => sleef::fmodf(a as f32, b as f32) as f64,
    }
}

/// PyTorch's `div_floor_floating` (its scalar loop) or, `in_vector`, `div_floor_floating_vec`,
/// each operation rounded as `s` says (float16 and bfloat16 through float32). The vector
/// loop's `fmod` is Sleef's, and where `a / b` overflows (and `a` is finite) it divides the
/// dividend itself, the fix-up PyTorch makes for Sleef's `fmod` there.
fn torch_floor_divide(s: Step, in_vector: bool, a: f64, b: f64) -> f64 {
    let basic = s.round(a / b);
    if b == 0.0 {
        return basic;
    }
    let m = match in_vector {
        true => s.round(sleef_fmod(s.dtype(), a, b)),
        false => a % b,
    };
    let floor = if in_vector && basic.is_infinite() && !a.is_infinite() {
        a
    } else {
        s.round(a - m)
    };
    let mut div = s.round(floor / b);
    // A NaN `m` is not zero here, as in the vector compare.
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div = s.round(div - 1.0);
    }
    if div == 0.0 {
        return 0.0f64.copysign(basic);
    }
    let mut q = div.floor();
    if s.round(div - q) > 0.5 {
        q = s.round(q + 1.0);
    }
    q
}

/// Every element of a float16, bfloat16, float32 or float64 array replaced by its floor, which
/// is a value of the same format (no rounding); NaN and ±inf stay.
fn floor_in_place(d: DType, data: &mut Data) {
    use crate::kernels::cast::{f16_to_f32, f32_to_f16};
    match data {
        Data::U64(v) => v
            .iter_mut()
            .for_each(|b| *b = f64::from_bits(*b).floor().to_bits()),
        Data::U32(v) => v
            .iter_mut()
            .for_each(|b| *b = f32::from_bits(*b).floor().to_bits()),
        Data::U16(v) if d == DType::BFLOAT16 => v
            .iter_mut()
            .for_each(|b| *b = (f32::from_bits((*b as u32) << 16).floor().to_bits() >> 16) as u16),
        Data::U16(v) => v
            .iter_mut()
            .for_each(|b| *b = f32_to_f16(f32::from_bits(f16_to_f32(*b)).floor().to_bits())),
        _ => unreachable!("the storage of float16, bfloat16, float32 or float64"),
    }
}

/// The float32 value of `b` when it enters `op` at float32 precision: PyTorch computes
/// `multiply`, `true_divide` and `floor_divide` of float16/bfloat16 with a second operand that
/// is a scalar (a Python number or a zero-dim array) in float32, the scalar rounded to
/// float32 from its own value.
fn opmath_scalar(policy: &Generated, op: Op, compute: DType, b: &Arg) -> Option<f32> {
    if policy.semantics.reduced_float_scalars != ScalarPrecision::Float32
        || !matches!(op, Op::Multiply | Op::TrueDivide | Op::FloorDivide)
        || !matches!(compute, DType::FLOAT16 | DType::BFLOAT16)
    {
        return None;
    }
    match b {
        Arg::Scalar(Scalar::Bool(v)) => Some(*v as u8 as f32),
        Arg::Scalar(Scalar::Int(v)) => Some(*v as f32),
        Arg::Scalar(Scalar::Float(v)) => Some(*v as f32),
        Arg::Scalar(Scalar::Complex(..)) => None,
        // `iter.is_scalar(2)`: floor division reads a divisor of one element so, whatever
        // its dimensions (`float16[5] // float16[1]`).
        Arg::Array(arr)
            if (arr.shape.is_empty() || (op == Op::FloorDivide && arr.len() == 1))
                && !arr.dtype.is_complex() =>
        {
            let Data::U32(v) = astype(arr, DType::Float32).data else {
                unreachable!("float32 storage")
            };
            Some(f32::from_bits(v[0]))
        }
        Arg::Array(_) => None,
    }
}

/// A zero result of a float `remainder` takes the dividend's sign (C's `fmod`), not the
/// divisor's.
fn zero_takes_dividends_sign(a: &Arg, x: &Input, compute: DType, out: &mut Array) {
    let w = compute.pattern_bits();
    let sign = 1u64 << (w - 1);
    let dividend = match a {
        Arg::Scalar(_) => x.array.clone().into_owned(),
        Arg::Array(_) => astype(&x.array, compute),
    };
    let signs: Vec<u64> = dividend.bits().iter().map(|b| b[0] & sign).collect();
    let bits: Vec<[u64; 2]> = out
        .bits()
        .into_iter()
        .enumerate()
        .map(|(i, [r, _])| {
            let s = signs[if signs.len() == 1 { 0 } else { i }];
            [if r & !sign == 0 { s } else { r }, 0]
        })
        .collect();
    let r = Array::from_bits(out.dtype, out.shape.clone(), &bits).expect("same shape");
    out.data.assign(r.data);
}

/// `binary` into a preallocated output of the result's dtype and shape, under
/// [`DEFAULT_MAX_ELEMENTS`] like [`binary`] (a result that is not `out`'s shape is refused).
pub fn binary_into(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
    out: &mut Array,
) -> Result<(), OpError> {
    let (a, b) = (canonical_arg(policy, a), canonical_arg(policy, b));
    let (a, b) = (a.as_ref(), b.as_ref());
    if let Some([r, s]) = rewrite(policy, op, a, b, DEFAULT_MAX_ELEMENTS)? {
        return binary_into(policy, Op::Multiply, &r, &s, out).map_err(as_rewritten(policy));
    }
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b, DEFAULT_MAX_ELEMENTS)?;
    check_out(out, out_dtype, &shape)?;
    compute_binary(policy, op, compute, (a, &x), (b, &y), out)
}
