//! PyTorch's own conversions from float32 into its float8 formats (c10's
//! `fp8*_from_fp32_value`, torch 2.15's `torch/headeronly/util/Float8_*.h`), ported bit for bit.
//!
//! PyTorch converts every value into a float8 dtype through float32 (a float64 is rounded to
//! float32 first, an integer converted to float32), then by these functions. They are not the
//! codec's correctly rounded encoding ([`format`](crate::numeric::format)), which ml_dtypes
//! and NumPy follow:
//! - `float8_e4m3fn` saturates: every finite value past ±448 and ±inf becomes ±448 (the codec:
//!   NaN from 464 on);
//! - `float8_e8m0fnu` takes the float32 exponent, rounded up when the guard bit is set and the
//!   round or sticky bit, or the implied bit, is (a normal value from 1.5·2ᵉ up becomes 2ᵉ⁺¹),
//!   ignoring the sign (−3 is 4, ±0 is 2⁻¹²⁷); ±inf and NaN are its NaN (the codec: a negative
//!   value or zero is NaN);
//! - a NaN keeps its sign in `float8_e4m3fn` and `float8_e5m2` (`0xff` for a negative NaN).
//!
//! `e5m2`, `e4m3fnuz` and `e5m2fnuz` otherwise round to nearest even as the codec does
//! (verified on every float32 by `scripts/oracle_torch_float8.py`).

use crate::numeric::dtype::{DType, SMALL_FLOATS};

/// A float8 format PyTorch has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Float8 {
    E4m3fn,
    E4m3fnuz,
    E5m2,
    E5m2fnuz,
    E8m0fnu,
}

impl Float8 {
    /// Every format, in the order of torch's names.
    pub const ALL: [Float8; 5] = [
        Float8::E4m3fn,
        Float8::E4m3fnuz,
        Float8::E5m2,
        Float8::E5m2fnuz,
        Float8::E8m0fnu,
    ];

    /// The format of `d`, if it is one of PyTorch's float8 dtypes.
    pub fn of(d: DType) -> Option<Float8> {
        let DType::Small(i) = d else { return None };
        Some(match SMALL_FLOATS[i as usize] {
            "float8_e4m3fn" => Float8::E4m3fn,
            "float8_e4m3fnuz" => Float8::E4m3fnuz,
            "float8_e5m2" => Float8::E5m2,
            "float8_e5m2fnuz" => Float8::E5m2fnuz,
            "float8_e8m0fnu" => Float8::E8m0fnu,
            _ => return None,
        })
    }

    /// The dtype's name.
    pub fn name(self) -> &'static str {
        match self {
            Float8::E4m3fn => "float8_e4m3fn",
            Float8::E4m3fnuz => "float8_e4m3fnuz",
            Float8::E5m2 => "float8_e5m2",
            Float8::E5m2fnuz => "float8_e5m2fnuz",
            Float8::E8m0fnu => "float8_e8m0fnu",
        }
    }

    /// The code of the float32 `x` (given by its bits), as c10 converts it.
    pub fn from_f32_bits(self, x: u32) -> u8 {
        match self {
            Float8::E4m3fn => e4m3fn(x),
            Float8::E4m3fnuz => fnuz(x, 0x87 << 23, 0x8c << 23, 0x78 << 23, 8, 20),
            Float8::E5m2 => e5m2(x),
            Float8::E5m2fnuz => fnuz(x, 0x8f << 23, 0x85 << 23, 0x70 << 23, 16, 21),
            Float8::E8m0fnu => e8m0fnu(x),
        }
    }
}

/// `f + magic` in float32 arithmetic (round to nearest even), as bits: the subnormal step of
/// the conversions below.
fn add_bits(f: u32, magic: u32) -> u32 {
    (f32::from_bits(f) + f32::from_bits(magic)).to_bits()
}

/// The normal-range step the four conversions share: the float32 magnitude `f` rebiased to
/// `bias`, rounded to nearest even by adding half an ulp less one (and the odd bit), with the
/// `drop` low mantissa bits dropped; truncated to 8 bits as c10's `static_cast<uint8_t>`.
fn round_normal(f: u32, bias: u32, drop: u32) -> u8 {
    let odd = (f >> drop) & 1;
    ((f.wrapping_add((bias.wrapping_sub(127) << 23) + (1 << (drop - 1)) - 1) + odd) >> drop) as u8
}

/// `fp8e4m3fn_from_fp32_value`.
fn e4m3fn(x: u32) -> u8 {
    const MAX: u32 = 1087 << 20; // 480.0, the first value past the range
    const DENORM: u32 = 141 << 23;
    let sign = x & 0x8000_0000;
    let f = x ^ sign;
    let r = if f >= MAX {
        if f > 0x7f80_0000 { 0x7f } else { 0x7e }
    } else if f < 121 << 23 {
        add_bits(f, DENORM).wrapping_sub(DENORM) as u8
    } else {
        // A carry into the NaN pattern saturates.
        match round_normal(f, 7, 20) {
            0x7f => 0x7e,
            r => r,
        }
    };
    r | (sign >> 24) as u8
}

/// `fp8e5m2_from_fp32_value`.
fn e5m2(x: u32) -> u8 {
    const MAX: u32 = 143 << 23; // 65536.0
    const DENORM: u32 = 134 << 23;
    let sign = x & 0x8000_0000;
    let f = x ^ sign;
    let r = if f >= MAX {
        if f > 0x7f80_0000 { 0x7f } else { 0x7c }
    } else if f < 113 << 23 {
        add_bits(f, DENORM).wrapping_sub(DENORM) as u8
    } else {
        round_normal(f, 15, 21)
    };
    r | (sign >> 24) as u8
}

/// `fp8e4m3fnuz_from_fp32_value` and `fp8e5m2fnuz_from_fp32_value`: `max` is the first
/// float32 past the range (NaN, `0x80`), `denorm` the subnormal magic, `normal` the smallest
/// normal, `bias` the format's bias and `drop` the float32 mantissa bits dropped.
fn fnuz(x: u32, max: u32, denorm: u32, normal: u32, bias: u32, drop: u32) -> u8 {
    let sign = x & 0x8000_0000;
    let f = x ^ sign;
    if f >= max {
        return 0x80;
    }
    let r = if f < normal {
        let r = add_bits(f, denorm).wrapping_sub(denorm) as u8;
        if r == 0 {
            return 0; // no negative zero
        }
        r
    } else {
        round_normal(f, bias, drop)
    };
    r | (sign >> 24) as u8
}

/// `fp8e8m0fnu_from_fp32_value`: the exponent, rounded by the guard, round and sticky bits.
fn e8m0fnu(x: u32) -> u8 {
    let exponent = (x >> 23) & 0xff;
    if exponent == 0xff {
        return 0xff;
    }
    let g = x & 0x40_0000 != 0;
    let r = x & 0x20_0000 != 0;
    let s = x & 0x1f_ffff != 0;
    let lsb = exponent > 0;
    let up = g && (r || s || lsb);
    (exponent + up as u32) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(f: Float8, x: f32) -> u8 {
        f.from_f32_bits(x.to_bits())
    }

    #[test]
    fn e4m3fn_saturates_where_the_codec_makes_nan() {
        // torch 2.15: tensor([448, 464, 480, 65504, inf, -inf, nan, 1e-9]).to(float8_e4m3fn)
        let xs = [
            448.0,
            464.0,
            480.0,
            65504.0,
            f32::INFINITY,
            -f32::INFINITY,
            f32::NAN,
            1e-9,
        ];
        let codes: Vec<u8> = xs.iter().map(|&x| code(Float8::E4m3fn, x)).collect();
        assert_eq!(codes, [126, 126, 126, 126, 126, 254, 127, 0]);
    }

    #[test]
    fn e8m0fnu_rounds_the_exponent_and_ignores_the_sign() {
        // torch 2.15: the same values .to(float8_e8m0fnu), and [300, 2, -300, 1, 3, 0].
        let xs = [
            448.0,
            464.0,
            480.0,
            65504.0,
            f32::INFINITY,
            -f32::INFINITY,
            f32::NAN,
            1e-9,
        ];
        let codes: Vec<u8> = xs.iter().map(|&x| code(Float8::E8m0fnu, x)).collect();
        assert_eq!(codes, [136, 136, 136, 143, 255, 255, 255, 97]);
        let xs = [300.0, 2.0, -300.0, 1.0, 3.0, 0.0];
        let codes: Vec<u8> = xs.iter().map(|&x| code(Float8::E8m0fnu, x)).collect();
        assert_eq!(codes, [135, 128, 135, 127, 129, 0]);
    }

    #[test]
    fn e5m2_and_fnuz_overflow() {
        // torch 2.15: 448 → 95, 464 → 95, 480 → 96, 65504 → 124 (inf) in float8_e5m2; 300 is
        // NaN (0x80) in float8_e4m3fnuz, 97 in float8_e5m2fnuz.
        let xs = [448.0, 464.0, 480.0, 65504.0];
        let codes: Vec<u8> = xs.iter().map(|&x| code(Float8::E5m2, x)).collect();
        assert_eq!(codes, [95, 95, 96, 124]);
        assert_eq!(code(Float8::E4m3fnuz, 300.0), 0x80);
        assert_eq!(code(Float8::E5m2fnuz, 300.0), 97);
        assert_eq!(code(Float8::E5m2fnuz, -300.0), 225);
        assert_eq!(code(Float8::E4m3fnuz, -1e-30), 0);
    }
}
