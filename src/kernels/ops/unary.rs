//! The unary ops (`negative`, `absolute`) over every dtype, in the policy's conventions
//! (complex negation as `0 - x` under `ComplexNegative::ZeroMinus`).

use super::accept::{accepts, accepts_operands, canonical_array};
use super::astype::map_chunks;
use super::complex::{complex_at, half_part};
use super::input::for_chunks;
use super::lanes::{
    F32Store, canon32, canon64, f32_lane, f32_loader, f64_lane, f64_loader, int_lane, int_loader,
    load_into, store_f64, store_int,
};
use super::shape::{allocated, moved_into};
use super::vocab::{CHUNK, OpError, UnaryOp};
use crate::kernels::array::{Array, Data};
use crate::numeric::dtype::DType;
use crate::numeric::op::ComplexNegative;
use crate::promote::Generated;
use crate::promote::Operand;

// ---------------------------------------------------------------------------------------------
// Complex

/// `negative` or `absolute` of an array (absolute of complex is the real magnitude).
/// `op(a)` under `policy`, whose `[ops.X] kinds` may refuse a kind the catalogue accepts.
pub fn unary(policy: &Generated, op: UnaryOp, a: &Array) -> Result<Array, OpError> {
    unary_with(policy, op, a, |dtype, shape| {
        Ok(Array::zeros(dtype, shape.to_vec())?)
    })
}

/// [`unary`] into the storage `alloc` gives (called once, with the result's dtype and shape,
/// after the operand is checked): integers of 8 to 64 bits, float32 and float64 are computed
/// straight into it, in one pass that vectorises (in parallel chunks for large arrays); the
/// other dtypes are computed, then copied into it.
pub(super) fn unary_with(
    policy: &Generated,
    op: UnaryOp,
    a: &Array,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    let a = canonical_array(policy, a);
    let a = a.as_ref();
    let d = a.dtype;
    accepts_operands(policy, op.id(), &[Operand::Array(d)])?;
    accepts(policy, op.id(), d)?;
    let out_dtype = match op {
        UnaryOp::Absolute => d.part(),
        UnaryOp::Negative => d,
    };
    let full_width = matches!(
        d,
        DType::Float32
            | DType::Float64
            | DType::Int {
                bits: 8 | 16 | 32 | 64,
                ..
            }
    );
    if full_width {
        let mut out = allocated(alloc, out_dtype, &a.shape)?;
        one_pass(op, a, &mut out);
        return Ok(out);
    }
    let mut out = Array::zeros(out_dtype, a.shape.clone())?;
    match d {
        DType::Bool => out.data.assign(a.data.clone()),
        DType::Int { bits, signed } => {
            let unsigned = !signed;
            let l = int_loader(d, d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0i64; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], int_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => x.wrapping_neg(),
                        UnaryOp::Absolute if unsigned => *x,
                        UnaryOp::Absolute => x.wrapping_abs(),
                    };
                }
                store_int(&v[..n], chunk, bits);
            });
        }
        DType::Float32 | DType::Small(_) => {
            let l = f32_loader(d, d);
            let store = F32Store::new(d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0f32; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], f32_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => -*x,
                        UnaryOp::Absolute => x.abs(),
                    };
                }
                let mut bits = [0u32; CHUNK];
                store.store(&v[..n], &mut bits, chunk);
            });
        }
        DType::Float64 => {
            let l = f64_loader(d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0f64; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], f64_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => -*x,
                        UnaryOp::Absolute => x.abs(),
                    };
                }
                store_f64(&v[..n], chunk);
            });
        }
        DType::Complex64 | DType::Complex128 | DType::Complex32 | DType::BComplex32 => {
            let n = a.len();
            let mut bits = Vec::with_capacity(n);
            let zero_minus = policy.semantics.complex_negative == ComplexNegative::ZeroMinus;
            for i in 0..n {
                let (re, im) = complex_at(a, i, d);
                // Under `ComplexNegative::ZeroMinus` negation is 0 − x, so ±0 becomes +0.
                let neg = |x: f64| if zero_minus { 0.0 - x } else { -x };
                bits.push(match (op, d) {
                    (UnaryOp::Negative, DType::Complex64) => [
                        canon32(neg(re) as f32) as u64,
                        canon32(neg(im) as f32) as u64,
                    ],
                    (UnaryOp::Negative, DType::Complex128) => [canon64(neg(re)), canon64(neg(im))],
                    // hypot of the float32 parts, computed in f64 and rounded once.
                    (UnaryOp::Absolute, DType::Complex64) => {
                        [canon32(re.hypot(im) as f32) as u64, 0]
                    }
                    (UnaryOp::Absolute, DType::Complex128) => [canon64(re.hypot(im)), 0],
                    // complex32: PyTorch's abs of the complex64 value (hypot rounded to
                    // float32), then rounded to the 16-bit part; its negation flips the signs
                    // (no `0 - x`: -(0+0j) is -0-0j, measured on torch 2.15).
                    (UnaryOp::Negative, _) => [
                        half_part(d, -re as f32) as u64,
                        half_part(d, -im as f32) as u64,
                    ],
                    (UnaryOp::Absolute, _) => [half_part(d, re.hypot(im) as f32) as u64, 0],
                });
            }
            out = Array::from_bits(out_dtype, a.shape.clone(), &bits).expect("shape kept");
        }
    }
    moved_into(out, alloc)
}

/// `negative` or `absolute` of an integer of 8 to 64 bits (wrapping: `-(-128)` is −128 in
/// int8, as NumPy and the other libraries compute it; `absolute` of an unsigned integer is
/// the integer), float32 or float64 (the sign flipped or cleared, a NaN the canonical one, as
/// the chunked loop stores it) into `out` of its dtype and length.
fn one_pass(op: UnaryOp, a: &Array, out: &mut Array) {
    let signed = matches!(a.dtype, DType::Int { signed: true, .. });
    let float = a.dtype.is_float();
    macro_rules! ints {
        ($i:expr, $o:expr, $u:ty, $s:ty) => {
            match (op, signed) {
                (UnaryOp::Negative, _) => map_chunks($i, $o, move |x: $u| x.wrapping_neg()),
                // `wrapping_abs` as a sign mask (`(x ^ m) - m`, m all ones for a negative `x`):
                // int8's `wrapping_abs` did not vectorise (0.56 of NumPy's at 1e3).
                (UnaryOp::Absolute, true) => map_chunks($i, $o, move |x: $u| {
                    let m = ((x as $s) >> (<$s>::BITS - 1)) as $u;
                    (x ^ m).wrapping_sub(m)
                }),
                (UnaryOp::Absolute, false) => map_chunks($i, $o, move |x: $u| x),
            }
        };
    }
    match (&a.data, &mut out.data) {
        (Data::U32(i), Data::U32(o)) if float => match op {
            UnaryOp::Negative => map_chunks(i, o, move |x| canon32(-f32::from_bits(x))),
            UnaryOp::Absolute => map_chunks(i, o, move |x| canon32(f32::from_bits(x).abs())),
        },
        (Data::U64(i), Data::U64(o)) if float => match op {
            UnaryOp::Negative => map_chunks(i, o, move |x| canon64(-f64::from_bits(x))),
            UnaryOp::Absolute => map_chunks(i, o, move |x| canon64(f64::from_bits(x).abs())),
        },
        (Data::U8(i), Data::U8(o)) => ints!(i, o, u8, i8),
        (Data::U16(i), Data::U16(o)) => ints!(i, o, u16, i16),
        (Data::U32(i), Data::U32(o)) => ints!(i, o, u32, i32),
        (Data::U64(i), Data::U64(o)) => ints!(i, o, u64, i64),
        _ => unreachable!("an integer of 8 to 64 bits, float32 or float64, kept by the op"),
    }
}
