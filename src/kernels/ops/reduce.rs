//! `sum`: integer sums wrap in the accumulator; float sums are exact (Shewchuk's partials) and
//! rounded once, or added in a library's order (`sum_order`, [`super::sum_order`]).

use super::accept::{accepts, accepts_operands, canonical_array};
use super::astype::try_astype;
use super::complex::complex_at;
use super::lanes::{int_lane, raw, value_of};
use super::shape::check_result_size;
use super::sum_order;
use super::vocab::{DEFAULT_MAX_ELEMENTS, ErrorKind, OpError, err, promotion, try_vec};
use crate::kernels::array::Array;
use crate::numeric::dtype::DType;
use crate::numeric::format::FloatFormat;
use crate::numeric::format::Value;
use crate::numeric::op::OpId;
use crate::numeric::op::{Subnormals, SumOrder};
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
        None => (1, a.len(), 1, crate::kernels::array::Shape::new()),
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
    if let Some(bits) = int_sums(a, acc, (outer, len, inner))? {
        return Ok(Array::from_bits(acc, shape, &bits).expect("shape"));
    }
    let conv = match a.dtype == acc {
        true => std::borrow::Cow::Borrowed(a),
        false => std::borrow::Cow::Owned(try_astype(a, acc)?),
    };
    let conv = conv.as_ref();
    if policy.semantics.sum_order != SumOrder::Exact {
        // A library's order holds at once each result in its accumulators and in bits, and
        // the operand in its accumulator type: what does not fit is a `memory` error here,
        // not an abort there (a sum over an empty axis can name 2^28 complex results).
        let held = (outer * inner).saturating_mul(2).saturating_add(a.len());
        drop(try_vec::<[u64; 2]>(held)?);
    }
    let ordered = match policy.semantics.sum_order {
        SumOrder::Exact => None,
        SumOrder::NumPy => sum_order::numpy(conv, outer, len, inner),
        SumOrder::Torch => sum_order::torch(conv, outer, len, inner),
        SumOrder::Eigen => {
            let flush = policy.semantics.subnormals == Subnormals::Flush;
            sum_order::eigen_sums(conv, outer, len, inner, flush)
        }
        SumOrder::Xla | SumOrder::XlaAvx512 | SumOrder::XlaAvx2 => {
            let cpu = match policy.semantics.sum_order {
                SumOrder::XlaAvx512 => sum_order::XlaCpu::Avx512,
                SumOrder::XlaAvx2 => sum_order::XlaCpu::Avx2,
                _ => sum_order::XlaCpu::host(),
            };
            let flush = policy.semantics.subnormals == Subnormals::Flush;
            let full = axis.is_none().then_some(&a.shape[..]);
            sum_order::xla_sums(conv, (outer, len, inner), full, (cpu, flush))
        }
    };
    if let Some(bits) = ordered {
        return Ok(Array::from_bits(acc, shape, &bits).expect("shape"));
    }
    let mut bits = try_vec(outer * inner)?;
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
                    let parts: Vec<(f64, f64)> = idx.map(|j| complex_at(conv, j, acc)).collect();
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

/// The sums of an integer (8 to 64 bits) or bool array `a` of shape `[outer, len, inner]` in an
/// integer accumulator `acc`, straight from `a`'s storage: each element's value (sign- or
/// zero-extended) added with wrapping in 64 bits, the sum then wrapped into `acc`'s width.
/// That is the sum of the elements converted to `acc` (a wrapping conversion) added with
/// wrapping in `acc`, in any order (addition modulo 2^w is associative and commutative, and
/// narrowing modulo 2^w keeps it). `None` for any other pair.
fn int_sums(
    a: &Array,
    acc: DType,
    (outer, len, inner): (usize, usize, usize),
) -> Result<Option<Vec<[u64; 2]>>, OpError> {
    use crate::kernels::array::Data;
    let DType::Int { bits: w, .. } = acc else {
        return Ok(None);
    };
    let signed = match a.dtype {
        DType::Bool => false,
        DType::Int {
            bits: 8 | 16 | 32 | 64,
            signed,
        } => signed,
        _ => return Ok(None),
    };
    let mask = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
    let mut bits = try_vec(outer * inner)?;
    let mut row = try_vec::<u64>(inner)?;
    macro_rules! go {
        ($v:expr, $s:ty) => {{
            let ext = |x| match signed {
                true => x as $s as i64 as u64,
                false => x as u64,
            };
            for line in $v.chunks_exact((len * inner).max(1)).take(outer) {
                if inner == 1 {
                    let s = line.iter().fold(0u64, |s, &x| s.wrapping_add(ext(x)));
                    bits.push([s & mask, 0]);
                    continue;
                }
                row.clear();
                row.resize(inner, 0);
                for k in line.chunks_exact(inner) {
                    for (s, &x) in row.iter_mut().zip(k) {
                        *s = s.wrapping_add(ext(x));
                    }
                }
                bits.extend(row.iter().map(|&s| [s & mask, 0]));
            }
        }};
    }
    match &a.data {
        Data::U8(v) => go!(v, i8),
        Data::U16(v) => go!(v, i16),
        Data::U32(v) => go!(v, i32),
        Data::U64(v) => go!(v, i64),
        _ => return Ok(None),
    }
    // An empty summed axis (`len` 0): every sum is zero.
    bits.resize(outer * inner, [0, 0]);
    Ok(Some(bits))
}
