//! Flush-to-zero (`subnormals = "flush"`): XLA's and TensorFlow's CPU kernels run with the x86
//! DAZ and FTZ bits set, so a subnormal operand reads as a zero of its sign and a tiny result is
//! written as one. The kernels compute IEEE values; under the convention their operands are
//! flushed as the library reads them (here, before the op) and their results as it writes them
//! (here, after). Measured on jax 0.10.2 and TensorFlow 2.21 (docs/kernels.md).
//!
//! Which dtypes flush: bfloat16, float32 and float64 and the parts of complex64 and complex128
//! (a bfloat16 widens to float32 exactly, subnormal included, and float32 arithmetic reads it);
//! float16 does not (its subnormals are normal in the float32 it computes in), nor does a
//! narrower float (their subnormals are normal in float32 too).

use crate::kernels::array::{Array, Data};
use crate::numeric::dtype::DType;
use crate::numeric::op::Subnormals;
use crate::promote::Generated;

/// Whether `d`'s values (its parts) are flushed: bfloat16, float32, float64 and their complex.
pub(super) fn flushes(d: DType) -> bool {
    matches!(d.part(), DType::BFLOAT16 | DType::Float32 | DType::Float64)
}

/// The sign bit and smallest normal pattern of a flushing dtype's part (bfloat16, float32,
/// float64), as u64.
fn part_masks(d: DType) -> (u64, u64) {
    match d.part() {
        DType::Float64 => (1 << 63, 1 << 52),
        DType::Float32 => (1 << 31, 1 << 23),
        _ => (1 << 15, 1 << 7),
    }
}

/// Whether `zap` (a pattern to its flushed pattern) changes any part of `data`.
fn changes(data: &Data, zap: impl Fn(u64) -> u64) -> bool {
    match data {
        Data::U16(v) => v.iter().any(|&x| zap(x as u64) != x as u64),
        Data::U32(v) => v.iter().any(|&x| zap(x as u64) != x as u64),
        Data::U64(v) => v.iter().any(|&x| zap(x) != x),
        Data::C32(v) => v.iter().flatten().any(|&x| zap(x as u64) != x as u64),
        Data::C64(v) => v.iter().flatten().any(|&x| zap(x as u64) != x as u64),
        Data::C128(v) => v.iter().flatten().any(|&x| zap(x) != x),
        Data::U8(_) => false,
    }
}

/// Applies `zap` to every part of `data`.
fn each_part(data: &mut Data, zap: impl Fn(u64) -> u64) {
    match data {
        Data::U16(v) => v.iter_mut().for_each(|x| *x = zap(*x as u64) as u16),
        Data::U32(v) => v.iter_mut().for_each(|x| *x = zap(*x as u64) as u32),
        Data::U64(v) => v.iter_mut().for_each(|x| *x = zap(*x)),
        Data::C32(v) => v
            .iter_mut()
            .flatten()
            .for_each(|x| *x = zap(*x as u64) as u16),
        Data::C64(v) => v
            .iter_mut()
            .flatten()
            .for_each(|x| *x = zap(*x as u64) as u32),
        Data::C128(v) => v.iter_mut().flatten().for_each(|x| *x = zap(*x)),
        Data::U8(_) => {}
    }
}

/// The flush of a part below `limit` in magnitude (a pattern of the part's dtype) to a zero of
/// its sign.
fn zap_below(sign: u64, limit: u64) -> impl Fn(u64) -> u64 + Copy {
    move |x| if x & !sign < limit { x & sign } else { x }
}

/// `a` with every part below `limit` in magnitude made a zero of its sign; `None` when no part
/// is (checked before anything is copied).
fn below(a: &Array, limit: u64) -> Option<Array> {
    if !flushes(a.dtype) {
        return None;
    }
    let zap = zap_below(part_masks(a.dtype).0, limit);
    if !changes(&a.data, zap) {
        return None;
    }
    let mut data = a.data.clone();
    each_part(&mut data, zap);
    Some(Array {
        dtype: a.dtype,
        shape: a.shape.clone(),
        data,
    })
}

/// `a` as the library reads it in arithmetic: subnormal parts as zeros of their sign (`None`:
/// nothing to flush, or a dtype that does not).
pub(super) fn read(a: &Array) -> Option<Array> {
    below(a, part_masks(a.dtype).1)
}

/// Writes `out`'s tiny parts (subnormal: the result rounded with IEEE gradual underflow) as
/// zeros of their sign.
pub(super) fn write(out: &mut Array) {
    if flushes(out.dtype) {
        let (sign, min) = part_masks(out.dtype);
        each_part(&mut out.data, zap_below(sign, min));
    }
}

/// `a` as the library's conversion to `to` reads it, where that flushes (`None` otherwise):
/// widening to float64 (`cvtss2sd`) and testing a float32 or float64 for bool read it with DAZ
/// (a bfloat16 is tested by its bits: a subnormal one is true); narrowing a float64
/// (`cvtsd2ss`, bfloat16 through float32) flushes what would be tiny in float32, every
/// magnitude below 2⁻¹²⁶ − 2⁻¹⁵¹ (the values that round to a 24-bit significand below
/// 2⁻¹²⁶). Moves that keep the bits (`float32 → bfloat16` rounds in software, `bfloat16 →
/// float32` widens by a shift, a float into a complex part, a part out) flush nothing.
pub(super) fn converted(a: &Array, to: DType) -> Option<Array> {
    let (from, part) = (a.dtype.part(), to.part());
    if a.dtype == to || !flushes(a.dtype) {
        return None;
    }
    if (to == DType::Bool && from != DType::BFLOAT16)
        || (part == DType::Float64 && from != DType::Float64)
    {
        return read(a);
    }
    if from == DType::Float64 && part != DType::Float64 && (to.is_float() || to.is_complex()) {
        // 2^-126 - 2^-151, the midpoint below float32's smallest normal.
        let limit = (2f64.powi(-126) - 2f64.powi(-151)).to_bits();
        return below(a, limit);
    }
    None
}

/// [`converted`] under `policy`: `None` unless it flushes subnormals (`Subnormals::Flush`).
pub(super) fn converted_by(policy: &Generated, a: &Array, to: DType) -> Option<Array> {
    if policy.semantics.subnormals == Subnormals::Flush {
        converted(a, to)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[u32]) -> Array {
        let bits: Vec<[u64; 2]> = v.iter().map(|&x| [x as u64, 0]).collect();
        Array::from_bits(DType::Float32, vec![v.len()], &bits).unwrap()
    }

    /// Subnormals read as zeros of their sign; zeros, normals, infinities and NaN stay.
    #[test]
    fn subnormal_operands_read_as_signed_zeros() {
        let a = f32s(&[
            1,
            0x8000_0001,
            0x007F_FFFF,
            0x0080_0000,
            0x8000_0000,
            0x7FC0_0000,
        ]);
        let r = read(&a).unwrap();
        let got: Vec<u64> = r.bits().iter().map(|b| b[0]).collect();
        assert_eq!(
            got,
            [0, 0x8000_0000, 0, 0x0080_0000, 0x8000_0000, 0x7FC0_0000]
        );
        assert!(read(&f32s(&[0x0080_0000, 0])).is_none());
    }

    /// A float64 narrowed to float32 flushes what rounds below 2^-126 with a 24-bit
    /// significand and keeps what rounds up to it (as jax 0.10.2 measured: `float64
    /// 2^-126·(1 − 2^-30)` is float32's smallest normal, `1.5·2^-127` is 0).
    #[test]
    fn narrowing_float64_flushes_what_float32_would_hold_as_tiny() {
        let v = [
            2f64.powi(-126) * (1.0 - 2f64.powi(-30)),
            -1.5 * 2f64.powi(-127),
            1e-40,
        ];
        let bits: Vec<[u64; 2]> = v.iter().map(|x| [x.to_bits(), 0]).collect();
        let a = Array::from_bits(DType::Float64, vec![3], &bits).unwrap();
        let r = converted(&a, DType::Float32).unwrap();
        let got: Vec<u64> = r.bits().iter().map(|b| b[0]).collect();
        assert_eq!(got, [v[0].to_bits(), (-0.0f64).to_bits(), 0]);
        assert!(converted(&a, DType::Complex128).is_none());
        assert!(converted(&f32s(&[1]), DType::BFLOAT16).is_none());
        assert!(converted(&f32s(&[1]), DType::Float64).is_some());
    }
}
