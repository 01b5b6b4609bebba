//! The unary ops (`negative`, `absolute`) over every dtype, in the policy's conventions
//! (complex negation as `0 - x` under `ComplexNegative::ZeroMinus`).

use super::accept::{accepts, accepts_operands, canonical_array};
use super::complex::{complex_at, half_part};
use super::input::for_chunks;
use super::lanes::{
    F32Store, canon32, canon64, f32_lane, f32_loader, f64_lane, f64_loader, int_lane, int_loader,
    load_into, store_f64, store_int,
};
use super::vocab::{CHUNK, OpError, UnaryOp};
use crate::kernels::array::Array;
use crate::numeric::dtype::DType;
use crate::numeric::op::ComplexNegative;
use crate::promote::Generated;
use crate::promote::Operand;

// ---------------------------------------------------------------------------------------------
// Complex

/// `negative` or `absolute` of an array (absolute of complex is the real magnitude).
/// `op(a)` under `policy`, whose `[ops.X] kinds` may refuse a kind the catalogue accepts.
pub fn unary(policy: &Generated, op: UnaryOp, a: &Array) -> Result<Array, OpError> {
    let a = canonical_array(policy, a);
    let a = a.as_ref();
    let d = a.dtype;
    accepts_operands(policy, op.id(), &[Operand::Array(d)])?;
    accepts(policy, op.id(), d)?;
    let out_dtype = match op {
        UnaryOp::Absolute => d.part(),
        UnaryOp::Negative => d,
    };
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
    Ok(out)
}
