//! The general chunked path: per chunk, both operands loaded (converting) into f32/f64/i64
//! lane buffers, one per-op stage (float, integer, comparison), and the result stored with one
//! rounding. Every real dtype pair runs here when no fused path (`fused`) takes it.

use super::input::{Input, for_chunks};
use super::lanes::{
    F32Store, F64SmallStore, Lane, Load, OutChunk, f32_lane, f32_lanes_round_correctly, f32_loader,
    f64_lane, f64_loader, f64_small_loader, int_lane, int_loader, load_into, store_f64, store_int,
};
use super::vocab::{CHUNK, Op};
use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::numeric::dtype::DType;

/// NumPy's `npy_divmod` floor division for floats.
macro_rules! floor_div_fn {
    ($name:ident, $t:ty) => {
        #[inline(always)]
        pub(super) fn $name(a: $t, b: $t) -> $t {
            if b == 0.0 {
                return a / b;
            }
            let m = a % b;
            let mut div = (a - m) / b;
            if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                div -= 1.0;
            }
            if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 { f + 1.0 } else { f }
            } else {
                (0.0 as $t).copysign(a / b)
            }
        }
    };
}
floor_div_fn!(floor_div_f64, f64);
floor_div_fn!(floor_div_f32, f32);

/// NumPy's `npy_divmod` remainder for floats: `fmod`, moved into the divisor's sign; a zero
/// remainder takes the divisor's sign (`remainder(-0.0, 3) = 0.0`, `remainder(-1, inf) = inf`).
macro_rules! remainder_fn {
    ($name:ident, $t:ty) => {
        #[inline(always)]
        pub(super) fn $name(a: $t, b: $t) -> $t {
            let m = a % b;
            if b == 0.0 {
                return m;
            }
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) { m + b } else { m }
            } else {
                (0.0 as $t).copysign(b)
            }
        }
    };
}

remainder_fn!(remainder_f64, f64);

remainder_fn!(remainder_f32, f32);

macro_rules! float_stage {
    ($name:ident, $t:ty, $floor:ident, $rem:ident) => {
        fn $name(op: Op, a: &[$t], b: &[$t], out: &mut [$t]) {
            let it = out.iter_mut().zip(a.iter().zip(b));
            match op {
                Op::Add => it.for_each(|(o, (&x, &y))| *o = x + y),
                Op::Subtract => it.for_each(|(o, (&x, &y))| *o = x - y),
                Op::Multiply => it.for_each(|(o, (&x, &y))| *o = x * y),
                Op::TrueDivide => it.for_each(|(o, (&x, &y))| *o = x / y),
                Op::FloorDivide => it.for_each(|(o, (&x, &y))| *o = $floor(x, y)),
                Op::Remainder => it.for_each(|(o, (&x, &y))| *o = $rem(x, y)),
                // libm's `pow` and `powf` (glibc's): what NumPy, PyTorch's scalar loop and
                // XLA call (`pow` in float64 rounded to float32 differs from `powf` now and then).
                Op::Power => it.for_each(|(o, (&x, &y))| *o = x.powf(y)),
                // NaN propagates; ties (+0 vs -0) give the second operand.
                Op::Maximum => it.for_each(|(o, (&x, &y))| {
                    *o = if x.is_nan() || x > y {
                        x
                    } else if y.is_nan() {
                        y
                    } else {
                        y
                    }
                }),
                Op::Minimum => {
                    it.for_each(|(o, (&x, &y))| *o = if x.is_nan() || x < y { x } else { y })
                }
                _ => unreachable!("arithmetic"),
            }
        }
    };
}

float_stage!(stage_f32, f32, floor_div_f32, remainder_f32);

float_stage!(stage_f64, f64, floor_div_f64, remainder_f64);

pub(super) fn compare<T: PartialOrd + Copy>(op: Op, a: &[T], b: &[T], out: &mut [u8]) {
    let it = out.iter_mut().zip(a.iter().zip(b));
    match op {
        Op::Equal => it.for_each(|(o, (x, y))| *o = (x == y) as u8),
        Op::NotEqual => it.for_each(|(o, (x, y))| *o = (x != y) as u8),
        Op::Less => it.for_each(|(o, (x, y))| *o = (x < y) as u8),
        Op::LessEqual => it.for_each(|(o, (x, y))| *o = (x <= y) as u8),
        Op::Greater => it.for_each(|(o, (x, y))| *o = (x > y) as u8),
        Op::GreaterEqual => it.for_each(|(o, (x, y))| *o = (x >= y) as u8),
        _ => unreachable!("comparison"),
    }
}

/// Integer ops on i64 lanes holding values of a `bits`-bit integer (unsigned 64-bit values
/// reinterpreted): wrapping, then truncated by the store.
pub(super) fn stage_int(op: Op, signed: bool, bits: u32, a: &[i64], b: &[i64], out: &mut [i64]) {
    let it = out.iter_mut().zip(a.iter().zip(b));
    let unsigned64 = !signed && bits == 64;
    match op {
        Op::Add => it.for_each(|(o, (&x, &y))| *o = x.wrapping_add(y)),
        Op::Subtract => it.for_each(|(o, (&x, &y))| *o = x.wrapping_sub(y)),
        Op::Multiply => it.for_each(|(o, (&x, &y))| *o = x.wrapping_mul(y)),
        Op::FloorDivide if unsigned64 => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                ((x as u64) / (y as u64)) as i64
            }
        }),
        Op::FloorDivide => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                let q = x.wrapping_div(y);
                if (x.wrapping_rem(y) != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }),
        // NumPy: 0 for a zero divisor; else the sign of the divisor (INT_MIN % -1 is 0).
        Op::Remainder if unsigned64 => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                ((x as u64) % (y as u64)) as i64
            }
        }),
        Op::Remainder => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                let r = x.wrapping_rem(y);
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            }
        }),
        Op::Power => it.for_each(|(o, (&x, &y))| {
            let (mut base, mut e, mut r) = (x, y as u64, 1i64);
            while e > 0 {
                if e & 1 == 1 {
                    r = r.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            *o = r;
        }),
        Op::Maximum if unsigned64 => {
            it.for_each(|(o, (&x, &y))| *o = (x as u64).max(y as u64) as i64)
        }
        Op::Minimum if unsigned64 => {
            it.for_each(|(o, (&x, &y))| *o = (x as u64).min(y as u64) as i64)
        }
        Op::Maximum => it.for_each(|(o, (&x, &y))| *o = x.max(y)),
        Op::Minimum => it.for_each(|(o, (&x, &y))| *o = x.min(y)),
        Op::BitwiseAnd => it.for_each(|(o, (&x, &y))| *o = x & y),
        Op::BitwiseOr => it.for_each(|(o, (&x, &y))| *o = x | y),
        Op::BitwiseXor => it.for_each(|(o, (&x, &y))| *o = x ^ y),
        _ => unreachable!("integer op"),
    }
}

/// `run_opmath` by the general float32 lane path.
pub(super) fn general_opmath(op: Op, c: DType, x: &Input, s: f32, out: &mut Data) {
    let scalar =
        Array::from_bits(DType::Float32, vec![], &[[s.to_bits() as u64, 0]]).expect("one element");
    let y = Input {
        array: std::borrow::Cow::Owned(scalar),
        splat: true,
    };
    let store = F32Store::new(c);
    let (lx, ly) = (
        f32_loader(x.array.dtype, c),
        f32_loader(DType::Float32, DType::Float32),
    );
    float_lanes(
        op,
        (x, &lx),
        (&y, &ly),
        out,
        f32_lane,
        stage_f32,
        |r, chunk| store.store(r, &mut [0u32; CHUNK], chunk),
    );
}

/// The general path over float lanes `L`: per chunk, load both operands (converting), then
/// compare into bool storage or compute with `stage` and `store` into the result's.
fn float_lanes<L: Lane + Default + PartialOrd + Send + Sync>(
    op: Op,
    (x, lx): (&Input, &Load<L>),
    (y, ly): (&Input, &Load<L>),
    out: &mut Data,
    to_lane: fn(DType, u64) -> L,
    stage: fn(Op, &[L], &[L], &mut [L]),
    store: impl Fn(&[L], OutChunk) + Sync,
) {
    let (xd, yd) = (&x.array.data, &y.array.data);
    for_chunks(out, |start, chunk| {
        let n = chunk.len();
        let (mut a, mut b, mut r) = (
            [L::default(); CHUNK],
            [L::default(); CHUNK],
            [L::default(); CHUNK],
        );
        load_into(lx, xd, start, x.splat, &mut a[..n], to_lane);
        load_into(ly, yd, start, y.splat, &mut b[..n], to_lane);
        if op.is_comparison() {
            let OutChunk::U8(o) = chunk else {
                unreachable!("comparisons store bool")
            };
            compare(op, &a[..n], &b[..n], o);
        } else {
            stage(op, &a[..n], &b[..n], &mut r[..n]);
            store(&r[..n], chunk);
        }
    });
}

/// The general path for a real result dtype `c` (complex results: `complex::run_complex`): per
/// chunk, load (converting) into lane buffers, compute, store.
pub(super) fn run_chunked(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    let (xd, yd) = (&x.array.data, &y.array.data);
    let (xt, yt) = (x.array.dtype, y.array.dtype);
    match c {
        DType::Small(_) if !f32_lanes_round_correctly(c) => {
            let store = F64SmallStore::new(c);
            let (lx, ly) = (f64_small_loader(xt, c), f64_small_loader(yt, c));
            float_lanes(
                op,
                (x, &lx),
                (y, &ly),
                out,
                f64_lane,
                stage_f64,
                |r, chunk| store.store(r, &mut [0u64; CHUNK], chunk),
            );
        }
        DType::Float32 | DType::Small(_) => {
            let store = F32Store::new(c);
            let (lx, ly) = (f32_loader(xt, c), f32_loader(yt, c));
            float_lanes(
                op,
                (x, &lx),
                (y, &ly),
                out,
                f32_lane,
                stage_f32,
                |r, chunk| store.store(r, &mut [0u32; CHUNK], chunk),
            );
        }
        DType::Float64 => {
            let (lx, ly) = (f64_loader(xt), f64_loader(yt));
            float_lanes(op, (x, &lx), (y, &ly), out, f64_lane, stage_f64, store_f64);
        }
        DType::Bool | DType::Int { .. } => {
            let (bits, signed) = match c {
                DType::Int { bits, signed } => (bits, signed),
                _ => (1, false),
            };
            let op = match (c, op) {
                (DType::Bool, Op::Add) => Op::BitwiseOr,
                (DType::Bool, Op::Multiply) => Op::BitwiseAnd,
                _ => op,
            };
            let (lx, ly) = (int_loader(xt, c), int_loader(yt, c));
            for_chunks(out, |start, chunk| {
                let n = chunk.len();
                let (mut a, mut b, mut r) = ([0i64; CHUNK], [0i64; CHUNK], [0i64; CHUNK]);
                load_into(&lx, xd, start, x.splat, &mut a[..n], int_lane);
                load_into(&ly, yd, start, y.splat, &mut b[..n], int_lane);
                if op.is_comparison() {
                    let OutChunk::U8(o) = chunk else {
                        unreachable!()
                    };
                    if !signed && bits == 64 {
                        let (ua, ub): (Vec<u64>, Vec<u64>) = (
                            a[..n].iter().map(|&v| v as u64).collect(),
                            b[..n].iter().map(|&v| v as u64).collect(),
                        );
                        compare(op, &ua, &ub, o);
                    } else {
                        compare(op, &a[..n], &b[..n], o);
                    }
                } else {
                    stage_int(op, signed, bits, &a[..n], &b[..n], &mut r[..n]);
                    store_int(&r[..n], chunk, bits);
                }
            });
        }
        DType::Complex64 | DType::Complex128 | DType::Complex32 | DType::BComplex32 => {
            unreachable!("complex results run in `complex::run_complex` (`dispatch::run_binary`)")
        }
    }
}
