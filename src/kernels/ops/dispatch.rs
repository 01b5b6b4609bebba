//! Which loop computes a planned binary op: the fused fast paths (`fused`) first, then complex
//! results (`complex`), then the general chunked path (`general`); and the float32-precision
//! path of a 16-bit float op with a scalar (PyTorch's `opmath_t`).

use super::complex::run_complex;
use super::fused::{
    fused_compare, fused_float, fused_go, fused_halves, fused_int, fused_modular, fused_pairs,
    fused_small,
};
use super::general::{general_opmath, run_chunked};
use super::input::Input;
use super::lanes::canon32;
use super::vocab::Op;
use crate::kernels::array::Data;
use crate::numeric::dtype::DType;

// ---------------------------------------------------------------------------------------------
// Driving: broadcasting, chunks, threads

pub(super) fn run_binary(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    // A scalar (one element) against an array takes the fused passes too: they read it as
    // its value, or as a tile made only once a pass is chosen (`zip_chunks`).
    if fused_float(op, c, x, y, out)
        || fused_compare(op, c, x, y, out)
        || fused_small(op, c, x, y, out)
        || fused_halves(op, c, x, y, out)
        || fused_pairs(op, c, x, y, out)
        || fused_int(op, c, x, y, out)
    {
        return;
    }
    if c.is_complex() {
        run_complex(op, c, x, y, out)
    } else {
        run_chunked(op, c, x, y, out)
    }
}

/// [`run_binary`] for two operands of the computation dtype `c` itself, or a comparison's pair
/// `fused_compare` widens (an `ArrayPlan::elementwise` pass): the one fused pass that takes
/// such a pair is tried first,
/// without asking the others (the result is the same: each of them declines the pair, which
/// `fast_paths_equal_the_general_path` and `tests/it/plans.rs` check).
pub(super) fn run_same(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    let done = match c {
        _ if op.is_comparison() => fused_compare(op, c, x, y, out),
        DType::Float32 | DType::Float64 => fused_float(op, c, x, y, out),
        DType::Int { .. } => fused_modular(op, c, x, y, out),
        _ => false,
    };
    if !done {
        run_binary(op, c, x, y, out)
    }
}

/// `op(x, s)` computed in float32 lanes with the scalar `s` at float32 precision, each result
/// rounded to the 16-bit float `c` (PyTorch's `opmath_t` for a scalar second operand).
pub(super) fn run_opmath(op: Op, c: DType, x: &Input, s: f32, out: &mut Data) {
    if !fused_opmath(op, c, x, s, out) {
        general_opmath(op, c, x, s, out)
    }
}

/// `run_opmath` in one fused pass for a full operand of the 16-bit float `c` itself and
/// multiply or true_divide: widen exactly, one float32 operation with `s`, one rounding.
fn fused_opmath(op: Op, c: DType, x: &Input, s: f32, out: &mut Data) -> bool {
    let (Data::U16(a), Data::U16(o)) = (&x.array.data, out) else {
        return false;
    };
    if x.splat || x.array.dtype != c || !matches!(op, Op::Multiply | Op::TrueDivide) {
        return false;
    }
    let tile = [s]; // read as its value (`fused_go`)
    let bf16 = c == DType::BFLOAT16;
    macro_rules! go {
        ($load:expr, $enc:expr) => {
            match op {
                Op::Multiply => fused_go(a, &tile, o, $load, |v: f32| v, |x, y| x * y, $enc),
                _ => fused_go(a, &tile, o, $load, |v: f32| v, |x, y| x / y, $enc),
            }
        };
    }
    if bf16 {
        go!(|v: u16| f32::from_bits((v as u32) << 16), |v: f32| {
            crate::kernels::cast::f32_to_bf16(canon32(v))
        });
    } else {
        go!(
            |v: u16| f32::from_bits(crate::kernels::cast::f16_to_f32(v)),
            |v: f32| crate::kernels::cast::f32_to_f16(canon32(v))
        );
    }
    true
}
