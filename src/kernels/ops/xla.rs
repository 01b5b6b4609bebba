//! JAX's values where XLA computes them otherwise than the IEEE path (the `"xla"`,
//! `"lexicographic"`, `"reciprocal"` and `"select"` conventions): `jnp.floor_divide` and
//! `jnp.remainder` are made of XLA's `div` and `rem` with selects around them
//! (jax/_src/numpy/ufuncs.py), not NumPy's `npy_divmod`, each step rounded to the dtype; a
//! division by a broadcast divisor is a product by its reciprocal; complex numbers are ordered
//! part by part and selected, and divided by XLA's Smith's algorithm with fused multiply-adds;
//! `x · convert(bool)` is a select; LLVM folds `c − real`'s imaginary `x − 0.0`. Measured on
//! jax 0.10.2 (CPU): `floor_divide` and `remainder` on 20,000 random pairs per float dtype, the
//! complex order on 20,000 per complex dtype, the complex quotient on 40,000 per complex dtype
//! (subnormals, zeros, infinities and NaN among them), the reciprocal on 3,000 float16 and
//! bfloat16 quotients and the shapes docs/kernels.md lists: every bit equal.
//!
//! The loops here are per element: the ops are rare and their steps many.

use super::astype::astype;
use super::flush;
use super::input::Input;
use super::lanes::{canon32, canon64};
use super::shape::expand;
use super::vocab::{Arg, Op, OpError, Scalar};
use crate::kernels::array::Array;
use crate::kernels::cast::{f16_to_f32, f32_to_bf16, f32_to_f16};
use crate::numeric::dtype::DType;
use crate::numeric::op::{
    BoolMultiply, BroadcastDivisor, ComplexAdd, ComplexDivide, ComplexOrder, DivisionByZero,
    FloatFloorDivide, Subnormals,
};
use crate::promote::Generated;

/// Computes `op(a, b)` into `out` where one of the policy's XLA conventions decides the whole
/// op (`x`, `y`: the operands as `plan` prepared them for `compute`); `false` where the IEEE
/// path is to run.
pub(super) fn compute(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, b): (&Arg, &Arg),
    (x, y): (&Input, &Input),
    out: &mut Array,
) -> bool {
    let s = &policy.semantics;
    let flush = s.subnormals == Subnormals::Flush;
    let real = out.dtype == compute
        && matches!(
            compute,
            DType::FLOAT16 | DType::BFLOAT16 | DType::Float32 | DType::Float64
        );
    let broadcast = b.shape().iter().product::<usize>() < out.len();
    match op {
        // Each step rounds and flushes as XLA does; `remainder` may return `fmod` unflushed.
        Op::FloorDivide | Op::Remainder
            if real && s.float_floor_divide == FloatFloorDivide::Xla =>
        {
            // `_float_divmod`'s division by a broadcast divisor is rewritten too, but for a
            // zero-dim one or a Python number (measured: `float32[3] // float32[1]` is a
            // product by the reciprocal, `float32[3] // float32[]` the quotient).
            let reciprocal = broadcast
                && !b.shape().is_empty()
                && s.broadcast_divisor == BroadcastDivisor::Reciprocal;
            // A zero-dim divisor of a one-element result of one or more dimensions is tested
            // for zero as it is, unflushed (measured: `float32[1] // float32[] -5.9e-39` is
            // NaN, `float32[2] // float32[]` and `float32[] // float32[]` are −inf).
            let tested = match b {
                Arg::Array(d) if flush && d.shape.is_empty() && !a.shape().is_empty() => {
                    (out.len() == 1).then(|| astype(d, compute).bits()[0][0])
                }
                _ => None,
            };
            real_elementwise(compute, (x, y), flush, out, |step, a, b| match op {
                Op::FloorDivide => {
                    let zero = tested.map_or(b == 0.0, |t| step.value(t) == 0.0);
                    floor_divide(step, a, b, zero, reciprocal)
                }
                _ => remainder(step, a, b),
            });
        }
        Op::TrueDivide
            if real && broadcast && s.broadcast_divisor == BroadcastDivisor::Reciprocal =>
        {
            // `convert(b) · (1 / y)` of a bool dividend `b` is then a select too
            // (`bool_multiply = "select"`): `bool / False` is +0 where `b` is false, not NaN.
            let one = Arg::Scalar(Scalar::Float(1.0));
            let select = selects(policy, Op::Multiply, compute, (a, &one), &out.shape) == Some(0);
            real_elementwise(compute, (x, y), flush, out, |step, p, q| {
                match select && p == 0.0 {
                    true => 0.0,
                    false => reciprocal_times(step, p, q),
                }
            });
        }
        // The operand chosen keeps its subnormal parts (`plan` read them so).
        Op::Less | Op::LessEqual | Op::Greater | Op::GreaterEqual | Op::Maximum | Op::Minimum
            if matches!(compute, DType::Complex64 | DType::Complex128)
                && s.complex_order == ComplexOrder::Lexicographic =>
        {
            complex_order(op, compute, x, y, flush, out);
        }
        Op::Multiply => match selects(policy, op, compute, (a, b), &out.shape) {
            Some(0) => bool_select(a, compute, y, flush, out),
            Some(_) => bool_select(b, compute, x, flush, out),
            None => return false,
        },
        Op::TrueDivide
            if matches!(compute, DType::Complex64 | DType::Complex128)
                && out.dtype == compute
                && s.complex_divide == ComplexDivide::Xla =>
        {
            complex_divide(compute, x, y, flush, out);
            // `convert(b) / y` of a bool array `b` by a divisor of one element is `convert(b) ·
            // (1 / y)`, and that product a select: +0 where `b` is false, whatever `0 / y` gives
            // (measured: `bool[4] / complex128[] (-1.8e308 + 2.2e-308j)` is +0 + 0j there, the
            // quotient −0 − 0j by a divisor of the result's shape, and by a broadcast row or
            // column, `bool[3, 5] / complex64[5]`, found by JAX seed 200110; a real divisor is
            // a select for every broadcast, above).
            let one = Arg::Scalar(Scalar::Float(1.0));
            if broadcast
                && b.shape().iter().product::<usize>() == 1
                && s.broadcast_divisor == BroadcastDivisor::Reciprocal
                && selects(policy, Op::Multiply, compute, (a, &one), &out.shape) == Some(0)
                && let Arg::Array(mask) = a
            {
                for (i, [t, _]) in mask.bits().into_iter().enumerate() {
                    if t == 0 {
                        out.set_bits(i, [0, 0]);
                    }
                }
            }
        }
        _ => return false,
    }
    true
}

/// Which operand of a `multiply` XLA turns into a select's mask (`bool_multiply = "select"`):
/// a bool array of the result's `shape`, the result float16, float32, float64, complex64 or
/// complex128 (`plan` then reads the other operand with its subnormals).
pub(super) fn selects(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, b): (&Arg, &Arg),
    shape: &[usize],
) -> Option<usize> {
    if op != Op::Multiply
        || policy.semantics.bool_multiply != BoolMultiply::Select
        || !matches!(
            compute,
            DType::FLOAT16 | DType::Float32 | DType::Float64 | DType::Complex64 | DType::Complex128
        )
    {
        return None;
    }
    let mask = |arg: &Arg| matches!(arg, Arg::Array(p) if p.dtype == DType::Bool && p.shape[..] == shape[..]);
    [a, b].into_iter().position(mask)
}

/// `select(mask, other, 0)`: `other` as converted to `compute` (a converting cast flushed
/// under `flush`, a subnormal of `compute` itself kept) where the bool `mask` is true, +0
/// elsewhere.
fn bool_select(mask: &Arg, compute: DType, other: &Input, flush: bool, out: &mut Array) {
    let Arg::Array(mask) = mask else {
        return;
    };
    let values = in_compute(&other.array, compute, flush);
    let step = Step {
        dtype: compute.part(),
        flush,
    };
    let (mb, vb) = (mask.bits(), values.bits());
    for i in 0..out.len() {
        let r = if mb[i][0] != 0 {
            step.canonical(vb[at(other, i)])
        } else {
            [0, 0]
        };
        out.set_bits(i, r);
    }
}

/// What XLA leaves otherwise than the IEEE path (and its flush) just wrote into `out`: the
/// divisor-zero elements of an integer `floor_divide` or `remainder`
/// (`integer_division_by_zero = "xla"`), and the imaginary part of a complex `a − real`
/// (`complex_add = "xla"`, which a flush would otherwise have changed). A `memory` error when
/// the broadcast minuend cannot be allocated.
pub(super) fn amend(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, b): (&Arg, &Arg),
    (x, y): (&Input, &Input),
    out: &mut Array,
) -> Result<(), OpError> {
    let s = &policy.semantics;
    if matches!(op, Op::FloorDivide | Op::Remainder)
        && s.integer_division_by_zero == DivisionByZero::Xla
    {
        integer_division_by_zero(op, compute, x, y, out);
    }
    let real = match b {
        Arg::Array(q) => !q.dtype.is_complex(),
        Arg::Scalar(s) => !matches!(s, Scalar::Complex(..)),
    };
    if let (Op::Subtract, Arg::Array(p), true, Subnormals::Flush, ComplexAdd::Xla) =
        (op, a, real, s.subnormals, s.complex_add)
        && compute.is_complex()
    {
        minuend_imaginary(p, compute, true, out)?;
    }
    Ok(())
}

/// The divisor-zero elements of an integer `floor_divide` or `remainder` as XLA's integer
/// division leaves them once JAX has floored it: a signed `x // 0` is −2 for `x ≠ 0` and −1
/// for `0` (XLA's quotient −1, less one where the signs differ and the remainder, `x`, is not
/// zero), an unsigned one all ones; `x % 0` is 0 (JAX divides by one instead). The other
/// elements are the kernels' (`out` already holds them).
fn integer_division_by_zero(op: Op, compute: DType, x: &Input, y: &Input, out: &mut Array) {
    let DType::Int { bits, signed } = compute else {
        return;
    };
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let (xs, ys) = (x.array.bits(), y.array.bits());
    for i in 0..out.len() {
        if ys[at(y, i)][0] & mask != 0 {
            continue;
        }
        let r = match (op, signed) {
            (Op::Remainder, _) => 0,
            (_, false) => mask,
            (_, true) if xs[at(x, i)][0] & mask == 0 => mask, // −1
            (_, true) => mask - 1,                            // −2
        };
        out.set_bits(i, [r, 0]);
    }
}

/// `out[i] = f(step, a[i], b[i])` for a real float `compute` (float16, bfloat16, float32 or
/// float64), `a` and `b` the operands' values in it (as the plan read them — flushed but for
/// `remainder`, whose `fmod` reads its dividend as it is — and converted as XLA converts
/// them), `step` how XLA rounds and flushes there.
fn real_elementwise(
    compute: DType,
    (x, y): (&Input, &Input),
    flush: bool,
    out: &mut Array,
    f: impl Fn(Step, f64, f64) -> f64,
) {
    let step = Step {
        dtype: compute,
        flush,
    };
    let (xs, ys) = (
        in_compute(&x.array, compute, flush).bits(),
        in_compute(&y.array, compute, flush).bits(),
    );
    for i in 0..out.len() {
        let (a, b) = (step.value(xs[at(x, i)][0]), step.value(ys[at(y, i)][0]));
        out.set_bits(i, [step.bits(f(step, a, b)), 0]);
    }
}

/// `a / b` with `b` broadcast (`broadcast_divisor = "reciprocal"`): `a × (1 / b)`, the
/// reciprocal rounded to float16 for a float16 divisor and kept in float32 for a bfloat16 one
/// (XLA's CPU converts float16 at each op; bfloat16 ops are normalised to float32 with the
/// converts between them removed), each step flushed as `s` says.
fn reciprocal_times(s: Step, a: f64, b: f64) -> f64 {
    let reciprocal = match s.dtype {
        DType::Float64 => s.flushed(1.0 / b),
        DType::FLOAT16 => s.round(1.0 / b),
        _ => s.flushed((1.0 / b) as f32 as f64),
    };
    s.round(a * reciprocal)
}

/// A comparison (not `equal`/`not_equal`), `maximum` or `minimum` in complex64 or complex128
/// ordered as XLA orders complex numbers (`complex_order = "lexicographic"`): real parts
/// first, then imaginary, by IEEE comparisons of the parts read flushed under `flush`;
/// `maximum(a, b)` is `a` where `a > b`, else `b`, the chosen operand as converted (its
/// subnormal parts kept, a NaN part the kernels' NaN).
fn complex_order(op: Op, compute: DType, x: &Input, y: &Input, flush: bool, out: &mut Array) {
    let (xs, ys) = (
        in_compute(&x.array, compute, flush),
        in_compute(&y.array, compute, flush),
    );
    let step = Step {
        dtype: compute.part(),
        flush,
    };
    let read = |[re, im]: [u64; 2]| (step.flushed(step.value(re)), step.flushed(step.value(im)));
    let (xb, yb) = (xs.bits(), ys.bits());
    let less = |p: (f64, f64), q: (f64, f64)| p.0 < q.0 || (p.0 == q.0 && p.1 < q.1);
    for i in 0..out.len() {
        let (j, k) = (at(x, i), at(y, i));
        let (p, q) = (read(xb[j]), read(yb[k]));
        let equal = p.0 == q.0 && p.1 == q.1;
        let r = match op {
            Op::Less => [less(p, q) as u64, 0],
            Op::LessEqual => [(less(p, q) || equal) as u64, 0],
            Op::Greater => [less(q, p) as u64, 0],
            Op::GreaterEqual => [(less(q, p) || equal) as u64, 0],
            Op::Maximum if less(q, p) => step.canonical(xb[j]),
            Op::Minimum if less(p, q) => step.canonical(xb[j]),
            _ => step.canonical(yb[k]),
        };
        out.set_bits(i, r);
    }
}

/// `a / b` in complex64 or complex128 as XLA divides (`complex_divide = "xla"`), each part's
/// operands read flushed under `flush` (DAZ), every step's result flushed (FTZ).
fn complex_divide(compute: DType, x: &Input, y: &Input, flush: bool, out: &mut Array) {
    let (xs, ys) = (
        in_compute(&x.array, compute, flush),
        in_compute(&y.array, compute, flush),
    );
    let (xb, yb) = (xs.bits(), ys.bits());
    for i in 0..out.len() {
        let ([ar, ai], [br, bi]) = (xb[at(x, i)], yb[at(y, i)]);
        let r = if compute == DType::Complex64 {
            let f = |b: u64| f32::from_bits(b as u32);
            let (re, im) = xla_quotient_f32((f(ar), f(ai)), (f(br), f(bi)), flush);
            [canon32(re) as u64, canon32(im) as u64]
        } else {
            let f = f64::from_bits;
            let (re, im) = xla_quotient_f64((f(ar), f(ai)), (f(br), f(bi)), flush);
            [canon64(re), canon64(im)]
        };
        out.set_bits(i, r);
    }
}

/// XLA's complex quotient (`ElementalIrEmitter::EmitComplexDivide`) in one part type, as the
/// CPU computes it: Smith's algorithm with each part divided by the denominator and LLVM's
/// contraction of every `x·y ± z` into a fused multiply-add; where both parts are NaN, the
/// corner cases in XLA's order (a zero divisor with a numerator not all NaN, an infinite
/// numerator over a finite divisor, a finite numerator over an infinite divisor). Measured on
/// jax 0.10.2: 0 of 40,000 random quotients per complex dtype differ but for NaN payloads
/// (`tests/data/kernels/jax_complex_divide_*` holds 4,000 of them).
macro_rules! xla_quotient {
    ($name:ident, $F:ty) => {
        fn $name((ar, ai): ($F, $F), (br, bi): ($F, $F), flush: bool) -> ($F, $F) {
            let f = |v: $F| {
                if flush && v.abs() < <$F>::MIN_POSITIVE {
                    (0.0 as $F).copysign(v)
                } else {
                    v
                }
            };
            let (ar, ai, br, bi) = (f(ar), f(ai), f(br), f(bi));
            let (zero, one, inf) = (0.0 as $F, 1.0 as $F, <$F>::INFINITY);
            let (cr, ci) = if br.abs() < bi.abs() {
                let ratio = f(br / bi);
                let denom = f(ratio.mul_add(br, bi));
                (
                    f(f(ratio.mul_add(ar, ai)) / denom),
                    f(f(ratio.mul_add(ai, -ar)) / denom),
                )
            } else {
                let ratio = f(bi / br);
                let denom = f(ratio.mul_add(bi, br));
                (
                    f(f(ratio.mul_add(ai, ar)) / denom),
                    f(f((-ratio).mul_add(ar, ai)) / denom),
                )
            };
            if !(cr.is_nan() && ci.is_nan()) {
                return (cr, ci);
            }
            // `fabs(v) != inf` is an ordered comparison: a NaN part is neither.
            let finite = |v: $F| v.abs() < inf;
            let infinite = |v: $F| v.abs() == inf;
            let unit = |v: $F| (if infinite(v) { one } else { zero }).copysign(v);
            if br == zero && bi == zero && !(ar.is_nan() && ai.is_nan()) {
                let s = inf.copysign(br);
                (f(s * ar), f(s * ai))
            } else if (infinite(ar) || infinite(ai)) && finite(br) && finite(bi) {
                let (sr, si) = (unit(ar), unit(ai));
                (
                    f(inf * f(sr.mul_add(br, f(si * bi)))),
                    f(inf * f(si.mul_add(br, -f(sr * bi)))),
                )
            } else if (infinite(br) || infinite(bi)) && finite(ar) && finite(ai) {
                let (sr, si) = (unit(br), unit(bi));
                (
                    f(zero * f(ar.mul_add(sr, f(ai * si)))),
                    f(zero * f(ai.mul_add(sr, -f(ar * si)))),
                )
            } else {
                (cr, ci)
            }
        }
    };
}
xla_quotient!(xla_quotient_f32, f32);
xla_quotient!(xla_quotient_f64, f64);

/// `a − b` in complex `compute` with a real `b` (converted to `b + 0i`): LLVM folds the
/// imaginary part's `a.im − 0.0` to `a.im`, so that part is `a`'s as converted, unflushed
/// (`out` holds the rest, computed and flushed).
fn minuend_imaginary(
    a: &Array,
    compute: DType,
    flush: bool,
    out: &mut Array,
) -> Result<(), OpError> {
    let a = in_compute(a, compute, flush);
    let a = match a.len() == 1 || a.shape == out.shape {
        true => a,
        false => std::borrow::Cow::Owned(expand(&a, &out.shape)?),
    };
    let step = Step {
        dtype: compute.part(),
        flush,
    };
    let single = a.len() == 1;
    for i in 0..out.len() {
        let [re, _] = out.bits_at(i);
        let [_, im] = step.canonical(a.bits_at(if single { 0 } else { i }));
        out.set_bits(i, [re, im]);
    }
    Ok(())
}

/// `a` in `compute` as XLA converts it: the converting casts that flush under `flush`
/// (`flush::converted`), then exactly or correctly rounded.
fn in_compute(a: &Array, compute: DType, flush: bool) -> std::borrow::Cow<'_, Array> {
    if a.dtype == compute {
        return std::borrow::Cow::Borrowed(a);
    }
    let read = flush.then(|| flush::converted(a, compute)).flatten();
    std::borrow::Cow::Owned(astype(read.as_ref().unwrap_or(a), compute))
}

/// The element of an operand that output element `i` reads.
fn at(input: &Input, i: usize) -> usize {
    if input.splat { 0 } else { i }
}

/// `sign(x)` as `lax.sign`: −1, 0 (of either sign) or 1, NaN for NaN.
fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        x.signum()
    }
}

/// `(sign(b) != sign(m)) & (m != 0)`: where JAX adjusts the quotient and the remainder (a NaN
/// `m` compares unequal to everything, so a NaN adjusts).
fn adjusts(m: f64, b: f64) -> bool {
    m != 0.0 && sign(b) != sign(m)
}

/// `_float_divmod(a, b)[0]`: `m = rem(a, b)`, `q = (b == 0 ? a : a − m) / b`, less one where
/// [`adjusts`], rounded half away from zero; every step rounded (and flushed) as XLA does, the
/// division a product by the reciprocal where `reciprocal` (a broadcast divisor of one or more
/// dimensions: `float16 65504 // int16[1] 7` is 9352, 9360 by the quotient); `zero` is what
/// `b == 0` gave.
fn floor_divide(s: Step, a: f64, b: f64, zero: bool, reciprocal: bool) -> f64 {
    let m = s.round(a % b);
    let dividend = if zero { a } else { s.round(a - m) };
    let mut q = match reciprocal {
        true => reciprocal_times(s, dividend, b),
        false => s.round(dividend / b),
    };
    if adjusts(m, b) {
        q = s.round(q - 1.0);
    }
    round_half_away(q)
}

/// `jnp.remainder(a, b)`: `m = rem(a, b)` with the dividend as it is (XLA's `fmod` is
/// software), then `m + b` where the flushed `m` [`adjusts`] against the flushed `b`; an
/// unadjusted `m` is returned as `fmod` made it, subnormal or not.
fn remainder(s: Step, a: f64, b: f64) -> f64 {
    let b = s.flushed(b);
    let m = a % b; // exact in every dtype: fmod never rounds
    let read = s.flushed(m);
    if read != 0.0 && ((read < 0.0) != (b < 0.0)) {
        s.round(read + b)
    } else {
        m
    }
}

/// `lax.round`'s default: half away from zero, exact in every float dtype.
fn round_half_away(q: f64) -> f64 {
    if !q.is_finite() {
        return q;
    }
    let t = q.abs().floor();
    let r = if q.abs() - t >= 0.5 { t + 1.0 } else { t };
    r.copysign(q)
}

/// How one XLA step rounds in `dtype`: float32 for float16 and bfloat16 (then the dtype),
/// with the result flushed below the smallest normal of the type computed in under `flush`.
#[derive(Clone, Copy)]
pub(super) struct Step {
    dtype: DType,
    flush: bool,
}

impl Step {
    /// Steps in `dtype` (float16 and bfloat16 through float32) that flush nothing: IEEE
    /// arithmetic rounded to the dtype at each step, as PyTorch's vectors of them compute.
    pub(super) fn unflushed(dtype: DType) -> Step {
        Step {
            dtype,
            flush: false,
        }
    }

    /// The dtype each step rounds to.
    pub(super) fn dtype(self) -> DType {
        self.dtype
    }

    pub(super) fn value(self, bits: u64) -> f64 {
        match self.dtype {
            DType::Float64 => f64::from_bits(bits),
            DType::Float32 => f32::from_bits(bits as u32) as f64,
            DType::BFLOAT16 => f32::from_bits((bits as u32) << 16) as f64,
            _ => f32::from_bits(f16_to_f32(bits as u16)) as f64,
        }
    }

    /// `v`'s pattern in the dtype (exact: `v` is a value of it), a NaN the kernels' positive
    /// quiet NaN.
    pub(super) fn bits(self, v: f64) -> u64 {
        let v = if v.is_nan() { f64::NAN.abs() } else { v };
        match self.dtype {
            DType::Float64 => v.to_bits(),
            DType::Float32 => (v as f32).to_bits() as u64,
            DType::BFLOAT16 => f32_to_bf16((v as f32).to_bits()) as u64,
            _ => f32_to_f16((v as f32).to_bits()) as u64,
        }
    }

    /// A complex element's parts (patterns of this part dtype) with a NaN part the kernels'
    /// NaN.
    fn canonical(self, [re, im]: [u64; 2]) -> [u64; 2] {
        let one = |b: u64| {
            let v = self.value(b);
            if v.is_nan() { self.bits(v) } else { b }
        };
        [one(re), one(im)]
    }

    /// `v` as the arithmetic reads it: a subnormal of the type computed in is a zero of its
    /// sign under `flush` (float16's values are all normal in float32).
    fn flushed(self, v: f64) -> f64 {
        let smallest = match self.dtype {
            DType::Float64 => f64::MIN_POSITIVE,
            _ => f32::MIN_POSITIVE as f64,
        };
        if self.flush && v.abs() < smallest {
            0.0f64.copysign(v)
        } else {
            v
        }
    }

    /// The exact result `v` of one step (exact in float64 for float32 and smaller operands)
    /// rounded as XLA rounds it.
    pub(super) fn round(self, v: f64) -> f64 {
        match self.dtype {
            DType::Float64 => self.flushed(v),
            _ => {
                let wide = self.flushed(v as f32 as f64);
                self.value(self.bits(wide))
            }
        }
    }
}
