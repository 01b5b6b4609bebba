//! Fast cast kernels over slices, bit-exact with the reference codec (`format::cast_bits`).
//!
//! - a source of at most 16 bits converts through a lookup table of every pattern, built once
//!   by the codec (so it is exact by construction); bfloat16 → float32 is a shift;
//! - float32 → bfloat16, float16 and every small format with subnormals use integer
//!   round-to-nearest-even on the bits (the special codes come from the codec);
//! - anything else calls the codec per element.
//!
//! The loops are monomorphic in the storage types and branch-light, so they auto-vectorise or
//! at least stay memory-bound; `tests/it/kernels.rs` holds every kernel to the codec.

use crate::format::{FloatFormat, cast_bits};

/// A storage unit: u8, u16, u32 or u64, little-endian bit patterns.
pub trait Unit: Copy + Default + Send + Sync {
    fn bits(self) -> u64;
    fn from_bits(v: u64) -> Self;
}

macro_rules! unit {
    ($($t:ty),*) => {$(
        impl Unit for $t {
            #[inline(always)]
            fn bits(self) -> u64 { self as u64 }
            #[inline(always)]
            fn from_bits(v: u64) -> Self { v as $t }
        }
    )*};
}
unit!(u8, u16, u32, u64);

#[derive(Clone, Debug)]
enum How {
    Table(Vec<u64>),
    /// bfloat16 → float32 is a 16-bit shift for every pattern, NaN payloads included.
    Bf16ToF32,
    F32ToBf16,
    F32ToF16,
    /// float32 → a signed format of at most 16 bits with subnormals (every float8 but e8m0,
    /// float6, float4): integer round-to-nearest-even, special codes from the codec.
    F32ToSmall(Narrow),
    Codec,
}

/// Constants of a float32 → small-format narrowing, all taken from the codec.
#[derive(Clone, Debug)]
struct Narrow {
    mant_bits: u32,
    bias: i32,
    sign_shift: u32,
    /// Largest finite code without sign (exponent and mantissa fields).
    max_code: u32,
    /// `[+, -]` results for zero, NaN and overflow (±∞ or too large).
    zero: [u32; 2],
    nan: [u32; 2],
    over: [u32; 2],
}

impl Narrow {
    fn new(d: &FloatFormat) -> Narrow {
        use crate::format::Value;
        let both = |f: &dyn Fn(bool) -> u64| [f(false) as u32, f(true) as u32];
        let max = d.encode(d.max_finite()) as u32;
        Narrow {
            mant_bits: d.mantissa_bits,
            bias: d.bias,
            sign_shift: d.width() - 1,
            max_code: max,
            zero: both(&|neg| d.encode(Value::zero(neg))),
            nan: both(&|neg| d.encode(Value::Nan { neg })),
            over: both(&|neg| d.encode(Value::Inf { neg })),
        }
    }

    #[inline(always)]
    fn run(&self, x: u32) -> u32 {
        let neg = (x >> 31) as usize;
        let abs = x & 0x7fff_ffff;
        if abs >= 0x7f80_0000 {
            return if abs == 0x7f80_0000 {
                self.over[neg]
            } else {
                self.nan[neg]
            };
        }
        let e = (abs >> 23) as i32;
        if e == 0 {
            return self.zero[neg]; // float32 subnormals are far below any small format's half-ulp
        }
        let sig = (abs & 0x007f_ffff) | 0x0080_0000; // value = sig · 2^(e - 150)
        let m = self.mant_bits as i32;
        let unbiased = e - 127;
        let emin = 1 - self.bias;
        let q = if unbiased < emin {
            emin - m
        } else {
            unbiased - m
        };
        let shift = q - (e - 150);
        let mut q = q;
        let mut r = if shift <= 0 {
            sig << (-shift) as u32
        } else if shift >= 26 {
            0
        } else {
            let kept = sig >> shift as u32;
            let rem = sig & ((1 << shift as u32) - 1);
            let half = 1u32 << (shift as u32 - 1);
            kept + u32::from(rem > half || (rem == half && kept & 1 == 1))
        };
        if r >> (m + 1) != 0 {
            r >>= 1;
            q += 1;
        }
        if r == 0 {
            return self.zero[neg];
        }
        let code = if r >> m != 0 {
            let e_field = q + m + self.bias;
            ((e_field as u32) << m) | (r - (1 << m))
        } else {
            r
        };
        if code > self.max_code {
            return self.over[neg];
        }
        (neg as u32) << self.sign_shift | code
    }
}

/// A prepared conversion from one float format to another.
#[derive(Clone, Debug)]
pub struct Caster {
    src: FloatFormat,
    dst: FloatFormat,
    how: How,
}

impl Caster {
    pub fn new(src: &FloatFormat, dst: &FloatFormat) -> Caster {
        let how = if src.name == "bfloat16" && dst.name == "float32" {
            How::Bf16ToF32
        } else if src.width() <= 16 {
            How::Table(
                (0..1u64 << src.width())
                    .map(|b| cast_bits(src, dst, b))
                    .collect(),
            )
        } else if src.name == "float32" && dst.name == "bfloat16" {
            How::F32ToBf16
        } else if src.name == "float32" && dst.name == "float16" {
            How::F32ToF16
        } else if src.name == "float32" && dst.width() <= 16 && dst.signed && dst.subnormals {
            How::F32ToSmall(Narrow::new(dst))
        } else {
            How::Codec
        };
        Caster {
            src: src.clone(),
            dst: dst.clone(),
            how,
        }
    }

    /// Which kernel runs: `table`, `f32-bf16`, `f32-f16` or `codec`.
    pub fn kernel(&self) -> &'static str {
        match self.how {
            How::Table(_) => "table",
            How::Bf16ToF32 => "bf16-f32",
            How::F32ToBf16 => "f32-bf16",
            How::F32ToF16 => "f32-f16",
            How::F32ToSmall(_) => "f32-small",
            How::Codec => "codec",
        }
    }

    /// Converts `input` into `out` (same length).
    pub fn run<S: Unit, D: Unit>(&self, input: &[S], out: &mut [D]) {
        assert_eq!(input.len(), out.len(), "input and output lengths differ");
        match &self.how {
            How::Table(t) => {
                let mask = t.len() as u64 - 1;
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits(t[(i.bits() & mask) as usize]);
                }
            }
            How::Bf16ToF32 => {
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits((i.bits() & 0xffff) << 16);
                }
            }
            How::F32ToBf16 => {
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits(f32_to_bf16(i.bits() as u32) as u64);
                }
            }
            How::F32ToF16 => {
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits(f32_to_f16(i.bits() as u32) as u64);
                }
            }
            How::F32ToSmall(n) => {
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits(n.run(i.bits() as u32) as u64);
                }
            }
            How::Codec => {
                for (o, &i) in out.iter_mut().zip(input) {
                    *o = D::from_bits(cast_bits(&self.src, &self.dst, i.bits()));
                }
            }
        }
    }
}

/// float32 → bfloat16, round to nearest even; NaN → the canonical quiet NaN with its sign
/// (ml_dtypes' cast).
#[inline(always)]
pub fn f32_to_bf16(x: u32) -> u16 {
    // Branch-free (a mask select) so the loop vectorises.
    let nan = ((x >> 16) & 0x8000) | 0x7fc0;
    let rounded = x.wrapping_add(0x7fff + ((x >> 16) & 1)) >> 16;
    let mask = ((x & 0x7fff_ffff > 0x7f80_0000) as u32).wrapping_neg();
    ((nan & mask) | (rounded & !mask)) as u16
}

/// float32 → float16, round to nearest even, gradual underflow, overflow to ±∞; NaN keeps its
/// top payload bits and stays NaN (NumPy's `npy_floatbits_to_halfbits`).
#[inline(always)]
pub fn f32_to_f16(x: u32) -> u16 {
    let sign = ((x >> 16) & 0x8000) as u16;
    let abs = x & 0x7fff_ffff;
    if abs >= 0x7f80_0000 {
        if abs == 0x7f80_0000 {
            return sign | 0x7c00;
        }
        let payload = ((abs & 0x007f_ffff) >> 13) as u16;
        return sign | 0x7c00 | if payload == 0 { 1 } else { payload };
    }
    if abs >= 0x477f_f000 {
        // ≥ 65520 = max + ulp/2 rounds to infinity.
        return sign | 0x7c00;
    }
    if abs >= 0x3880_0000 {
        // Normal result: rebias the exponent (127 → 15) and round 13 bits away.
        let v = abs - 0x3800_0000;
        let rounding = 0x0fff + ((v >> 13) & 1);
        return sign | ((v + rounding) >> 13) as u16;
    }
    // Subnormal result (or zero): the value is m × 2^-24 for m < 1024 after rounding.
    let e = abs >> 23;
    if e < 102 {
        return sign; // below half the smallest subnormal (2^-25): rounds to zero
    }
    let mant = (abs & 0x007f_ffff) | 0x0080_0000;
    let shift = 126 - e; // 14 ..= 24
    let kept = mant >> shift;
    let rem = mant & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let r = if rem > half || (rem == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    sign | r as u16
}
