//! `sum`: integer sums wrap in the accumulator; float sums are exact (Shewchuk's partials) and
//! rounded once, or added in NumPy's order (`sum_order = "numpy"`).

use super::accept::{accepts, accepts_operands, canonical_array};
use super::astype::astype;
use super::complex::complex_at;
use super::lanes::{int_lane, raw, value_of};
use super::shape::check_result_size;
use super::vocab::{DEFAULT_MAX_ELEMENTS, ErrorKind, OpError, err, promotion};
use crate::kernels::array::Array;
use crate::numeric::dtype::DType;
use crate::numeric::format::FloatFormat;
use crate::numeric::format::Value;
use crate::numeric::op::OpId;
use crate::numeric::op::SumOrder;
use crate::promote::Generated;
use crate::promote::Operand;

/// Exact floating-point summation (Shewchuk's partials, as Python's `math.fsum`): returns the
/// sum rounded once to float64 and the sign of what that rounding left out.
pub(super) fn fsum(values: impl Iterator<Item = f64>) -> (f64, i8) {
    let mut partials: Vec<f64> = Vec::new();
    let (mut special, mut inf_sum) = (false, 0.0f64);
    for mut x in values {
        if !x.is_finite() {
            special = true;
            inf_sum += x; // +inf + -inf = NaN, NaN stays NaN
            continue;
        }
        let mut i = 0;
        for k in 0..partials.len() {
            let mut y = partials[k];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    if special {
        return (inf_sum, 0);
    }
    let Some(mut hi) = partials.pop() else {
        return (0.0, 0);
    };
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    // Half-way case: the rest of the partials decide the direction.
    let mut residual = lo;
    if let Some(&next) = partials.last()
        && ((lo < 0.0 && next < 0.0) || (lo > 0.0 && next > 0.0))
    {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
            residual = -lo;
        }
    }
    let sign = if residual > 0.0 {
        1
    } else if residual < 0.0 {
        -1
    } else if let Some(&next) = partials.last() {
        if lo == 0.0 { 0 } else { next.signum() as i8 }
    } else {
        0
    };
    (hi, sign)
}

/// The exact sum of float values (as f64s) rounded once into `f`.
pub(super) fn round_sum(f: &FloatFormat, values: impl Iterator<Item = f64>) -> u64 {
    let (hi, sign) = fsum(values);
    let mut v = Value::from_f64(hi);
    // A value strictly between `hi` and its float64 neighbour rounds like the exact sum.
    if let (Value::Finite { neg, mant, exp }, true) = (v, sign != 0 && hi != 0.0) {
        let away = (sign > 0) != neg;
        v = Value::Finite {
            neg,
            mant: if away { mant * 4 + 1 } else { mant * 4 - 1 },
            exp: exp - 2,
        };
    }
    if hi.is_nan() {
        return f.encode(Value::Nan { neg: false });
    }
    f.encode(v)
}

/// `sum` over every element (`axis: None`, result of shape `[]`) or along one axis, in the
/// policy's accumulator dtype: integers wrap, floats are summed exactly and rounded once. The
/// result holds at most [`DEFAULT_MAX_ELEMENTS`] (`apply` takes another limit).
pub fn sum(policy: &Generated, a: &Array, axis: Option<usize>) -> Result<Array, OpError> {
    sum_within(policy, a, axis, DEFAULT_MAX_ELEMENTS)
}

/// [`sum`] with a result of at most `max_elements`.
pub(super) fn sum_within(
    policy: &Generated,
    a: &Array,
    axis: Option<usize>,
    max_elements: usize,
) -> Result<Array, OpError> {
    let a = canonical_array(policy, a);
    let a = a.as_ref();
    accepts_operands(policy, OpId::SUM, &[Operand::Array(a.dtype)])?;
    let acc = policy.sum_type(a.dtype).map_err(promotion)?;
    accepts(policy, OpId::SUM, acc)?;
    let (outer, len, inner, shape) = match axis {
        None => (1, a.len(), 1, vec![]),
        Some(k) if k < a.shape.len() => {
            let mut shape = a.shape.clone();
            shape.remove(k);
            // An empty array can name a huge result (`[0, 2^32, 3]` summed over axis 0).
            check_result_size(&shape, max_elements, || {
                format!("sum over axis {k} of {:?}", a.shape)
            })?;
            let outer: usize = a.shape[..k].iter().product();
            let inner: usize = a.shape[k + 1..].iter().product();
            (outer, a.shape[k], inner, shape)
        }
        Some(k) => {
            return err(
                ErrorKind::Input,
                format!(
                    "axis {k} is out of bounds for an array of {} dimensions",
                    a.shape.len()
                ),
            );
        }
    };
    let conv = astype(a, acc);
    if policy.semantics.sum_order == SumOrder::NumPy
        && let Some(bits) = numpy_order::sum(&conv, outer, len, inner)
    {
        return Ok(Array::from_bits(acc, shape, &bits).expect("shape"));
    }
    let mut bits = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let idx = (0..len).map(|k| (o * len + k) * inner + i);
            bits.push(match acc {
                DType::Bool => [idx.map(|j| raw(&conv.data, j)).fold(0, |x, y| x | y), 0],
                DType::Int { bits: w, .. } => {
                    let mask = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
                    let s = idx.fold(0i64, |s, j| {
                        s.wrapping_add(int_lane(acc, raw(&conv.data, j)))
                    });
                    [s as u64 & mask, 0]
                }
                DType::Complex64 | DType::Complex128 | DType::Complex32 | DType::BComplex32 => {
                    let f = acc.float_format().expect("parts");
                    let parts: Vec<(f64, f64)> = idx.map(|j| complex_at(&conv, j, acc)).collect();
                    [
                        round_sum(&f, parts.iter().map(|p| p.0)),
                        round_sum(&f, parts.iter().map(|p| p.1)),
                    ]
                }
                _ => {
                    let f = acc.float_format().expect("float");
                    [
                        round_sum(&f, idx.map(|j| value_of(acc, raw(&conv.data, j)).to_f64())),
                        0,
                    ]
                }
            });
        }
    }
    Ok(Array::from_bits(acc, shape, &bits).expect("shape"))
}

/// Float and complex sums in NumPy's order (`SumOrder::NumPy`): `pairwise_sum` of
/// numpy/_core/src/umath/loops_utils.h.src along adjacent elements, the rows one by one along
/// any other axis, ml_dtypes' dtypes one by one in float32.
mod numpy_order {
    use crate::kernels::array::Array;
    use crate::kernels::ops::complex::complex_at;
    use crate::kernels::ops::lanes::{raw, value_of};
    use crate::numeric::dtype::DType;
    use crate::numeric::format::{FloatFormat, Value};
    use std::ops::Add;

    /// The float types NumPy's loops add in.
    pub(super) trait Float: Copy + Add<Output = Self> {
        const NEG_ZERO: Self;
    }
    impl Float for f32 {
        const NEG_ZERO: f32 = -0.0;
    }
    impl Float for f64 {
        const NEG_ZERO: f64 = -0.0;
    }

    /// NumPy's `pairwise_sum` of one line: fewer than 8 values one by one from −0.0, up to 128
    /// in 8 interleaved accumulators, more split in two at half rounded down to a multiple of 8.
    pub(super) fn pairwise<T: Float>(v: &[T]) -> T {
        let n = v.len();
        if n < 8 {
            return v.iter().fold(T::NEG_ZERO, |s, &x| s + x);
        }
        if n <= 128 {
            let mut r: [T; 8] = std::array::from_fn(|j| v[j]);
            let whole = n - n % 8;
            for block in v[8..whole].chunks_exact(8) {
                for (r, &x) in r.iter_mut().zip(block) {
                    *r = *r + x;
                }
            }
            let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            return v[whole..].iter().fold(res, |s, &x| s + x);
        }
        let half = n / 2 - (n / 2) % 8;
        pairwise(&v[..half]) + pairwise(&v[half..])
    }

    /// NumPy's complex `pairwise_sum` (counting both parts, as NumPy does): fewer than 4
    /// elements one by one from −0.0, up to 64 in 4 interleaved accumulators a part, more split
    /// at the element NumPy's float count halves at.
    pub(super) fn pairwise_complex<T: Float>(re: &[T], im: &[T]) -> (T, T) {
        let m = re.len();
        if m < 4 {
            let fold = |v: &[T]| v.iter().fold(T::NEG_ZERO, |s, &x| s + x);
            return (fold(re), fold(im));
        }
        if m <= 64 {
            let whole = m - m % 4;
            let part = |v: &[T]| {
                let mut r: [T; 4] = std::array::from_fn(|j| v[j]);
                for block in v[4..whole].chunks_exact(4) {
                    for (r, &x) in r.iter_mut().zip(block) {
                        *r = *r + x;
                    }
                }
                let res = (r[0] + r[1]) + (r[2] + r[3]);
                v[whole..].iter().fold(res, |s, &x| s + x)
            };
            return (part(re), part(im));
        }
        let half = (m - m % 8) / 2;
        let (r1, i1) = pairwise_complex(&re[..half], &im[..half]);
        let (r2, i2) = pairwise_complex(&re[half..], &im[half..]);
        (r1 + r2, i1 + i2)
    }

    /// `x` in format `f`, rounded to nearest; a NaN the positive quiet one, as the exact sum's.
    fn encode(f: &FloatFormat, x: f64) -> u64 {
        f.encode(if x.is_nan() {
            Value::Nan { neg: false }
        } else {
            Value::from_f64(x)
        })
    }

    /// A float32 sum rounded to an ml_dtypes or float16 `d`, read back as float32 (exact).
    fn round_to(d: DType, x: f32) -> f32 {
        let f = d.float_format().expect("a small float");
        value_of(d, encode(&f, x as f64)).to_f64() as f32
    }

    /// The sums of `a` (already in the accumulator dtype, shape `[outer, len, inner]`) in
    /// NumPy's order; `None` for a dtype NumPy does not sum in floats.
    pub(super) fn sum(a: &Array, outer: usize, len: usize, inner: usize) -> Option<Vec<[u64; 2]>> {
        let d = a.dtype;
        let at = |o: usize, k: usize, i: usize| (o * len + k) * inner + i;
        // Adjacent elements: NumPy's iterator drops the dimensions of size 1 and coalesces the
        // rest, so the reduction's inner loop is the line itself.
        let lines = inner == 1;
        let mut out = Vec::with_capacity(outer * inner);
        match d {
            DType::Float64 | DType::Float32 | DType::FLOAT16 => {
                let f = d.float_format().expect("float");
                let wide = |j: usize| value_of(d, raw(&a.data, j)).to_f64();
                for o in 0..outer {
                    for i in 0..inner {
                        let s: f64 = match (d, lines) {
                            (DType::Float64, true) => {
                                let v: Vec<f64> = (0..len).map(|k| wide(at(o, k, i))).collect();
                                0.0 + pairwise(&v)
                            }
                            (DType::Float64, false) => {
                                (0..len).fold(0.0, |s, k| s + wide(at(o, k, i)))
                            }
                            // float16's loop sums in float32 and rounds once.
                            (_, true) => {
                                let v: Vec<f32> =
                                    (0..len).map(|k| wide(at(o, k, i)) as f32).collect();
                                (0.0 + pairwise(&v)) as f64
                            }
                            (DType::Float32, false) => {
                                (0..len).fold(0.0f32, |s, k| s + wide(at(o, k, i)) as f32) as f64
                            }
                            (_, false) => (0..len)
                                .fold(0.0f32, |s, k| round_to(d, s + wide(at(o, k, i)) as f32))
                                as f64,
                        };
                        out.push([encode(&f, s), 0]);
                    }
                }
            }
            DType::Complex64 | DType::Complex128 => {
                let f = d.float_format().expect("parts");
                let c64 = d == DType::Complex64;
                for o in 0..outer {
                    for i in 0..inner {
                        let parts = (0..len).map(|k| complex_at(a, at(o, k, i), d));
                        let (re, im) = match (c64, lines) {
                            (false, true) => {
                                let (re, im): (Vec<f64>, Vec<f64>) = parts.unzip();
                                let (r, i) = pairwise_complex(&re, &im);
                                (0.0 + r, 0.0 + i)
                            }
                            (false, false) => parts.fold((0.0, 0.0), |s, p| (s.0 + p.0, s.1 + p.1)),
                            (true, true) => {
                                let (re, im): (Vec<f32>, Vec<f32>) =
                                    parts.map(|p| (p.0 as f32, p.1 as f32)).unzip();
                                let (r, i) = pairwise_complex(&re, &im);
                                ((0.0 + r) as f64, (0.0 + i) as f64)
                            }
                            (true, false) => {
                                let (r, i) = parts.fold((0.0f32, 0.0f32), |s, p| {
                                    (s.0 + p.0 as f32, s.1 + p.1 as f32)
                                });
                                (r as f64, i as f64)
                            }
                        };
                        out.push([encode(&f, re), encode(&f, im)]);
                    }
                }
            }
            // ml_dtypes' binary loop: float32 sums, each rounded to the dtype.
            DType::Small(_) => {
                let f = d.float_format().expect("float");
                for o in 0..outer {
                    for i in 0..inner {
                        let s = (0..len).fold(0.0f32, |s, k| {
                            round_to(
                                d,
                                s + value_of(d, raw(&a.data, at(o, k, i))).to_f64() as f32,
                            )
                        });
                        out.push([encode(&f, s as f64), 0]);
                    }
                }
            }
            _ => return None,
        }
        Some(out)
    }
}
