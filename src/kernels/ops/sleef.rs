//! Sleef's vector `fmod`, as PyTorch's vector loops call it (`Vectorized<float>::fmod` is
//! `Sleef_fmodf8`, `Vectorized<double>::fmod` `Sleef_fmodd4`; float16 and bfloat16 vectors
//! widen to float32 and call the float one). Ported from Sleef's `xfmodf` (its
//! `sleefsimdsp.c`) and `xfmod` (`sleefsimddp.c`) with their double-float helpers (`df.h`,
//! `dd.h`) as built with FMA: a long division by `1 / |y|` rounded toward zero,
//! in at most 8 (float) or 21 (double) steps of a two-word remainder. Its value is C's `fmod`
//! but where a step's quotient overflows: `fmod(1e30, 1e-30)` is NaN in float32 (the exact
//! remainder 8.2e-31), `fmod(1, 2**-128)` is 0 (the quotient just fits after the rounding
//! toward zero, where `1 / 2**-128` would overflow).
//!
//! A lane's steps do not depend on its neighbours: the vector loop runs until every lane is
//! done, and a step of a finished lane changes nothing.

/// Sleef's float32 `fmod(x, y)`.
pub(super) fn fmodf(x: f32, y: f32) -> f32 {
    let (mut nu, mut de, mut s) = (x.abs(), y.abs(), 1.0f32);
    if de < f32::MIN_POSITIVE {
        let scale = (1u64 << 25) as f32;
        (nu, de, s) = (nu * scale, de * scale, 1.0 / scale);
    }
    let rde = toward0f(1.0 / de);
    let (mut rx, mut ry) = (nu, 0.0f32);
    for _ in 0..8 {
        let mut q = (toward0f(rx) * rde).trunc();
        if 3.0 * de > rx && rx >= de {
            q = 2.0;
        }
        if 2.0 * de > rx && rx >= de {
            q = 1.0;
        }
        // dfmul_vf2_vf_vf(q, -de), dfadd2_vf2_vf2_vf2, dfnormalize_vf2_vf2.
        let (px, py) = (q * -de, q.mul_add(-de, -(q * -de)));
        let sum = rx + px;
        let v = sum - rx;
        let t = (rx - (sum - v)) + (px - v);
        let (ax, ay) = (sum, t + (ry + py));
        rx = ax + ay;
        ry = (ax - rx) + ay;
        if rx < de {
            break;
        }
    }
    let mut ret = (rx + ry) * s;
    if rx + ry == de {
        ret = 0.0;
    }
    ret = f32::from_bits(ret.to_bits() ^ (x.to_bits() & 0x8000_0000));
    if nu < de {
        ret = x;
    }
    if de == 0.0 {
        ret = f32::NAN;
    }
    ret
}

/// Sleef's float64 `fmod(x, y)`.
pub(super) fn fmod(x: f64, y: f64) -> f64 {
    let (mut n, mut d, mut s) = (x.abs(), y.abs(), 1.0f64);
    if d < f64::MIN_POSITIVE {
        let scale = (1u64 << 54) as f64;
        (n, d, s) = (n * scale, d * scale, 1.0 / scale);
    }
    let (mut rx, mut ry) = (n, 0.0f64);
    let rd = toward0(1.0 / d);
    for _ in 0..21 {
        let mut q = (toward0(rx) * rd).trunc();
        if 3.0 * d > rx && rx >= d {
            q = 2.0;
        }
        if d + d > rx && rx >= d {
            q = 1.0;
        }
        // ddmul_vd2_vd_vd(q, -d), ddadd2_vd2_vd2_vd2, ddnormalize_vd2_vd2.
        let (px, py) = (q * -d, q.mul_add(-d, -(q * -d)));
        let sum = rx + px;
        let v = sum - rx;
        let t = (rx - (sum - v)) + (px - v);
        let (ax, ay) = (sum, t + (ry + py));
        rx = ax + ay;
        ry = (ax - rx) + ay;
        if rx < d {
            break;
        }
    }
    let mut ret = rx * s;
    if rx + ry == d {
        ret = 0.0;
    }
    ret = f64::from_bits(ret.to_bits() ^ (x.to_bits() & (1 << 63)));
    if n < d {
        ret = x;
    }
    if d == 0.0 {
        ret = f64::NAN;
    }
    ret
}

/// The next float toward zero of a non-negative `x` (its pattern less one), zero kept.
fn toward0f(x: f32) -> f32 {
    if x == 0.0 {
        0.0
    } else {
        f32::from_bits(x.to_bits().wrapping_sub(1))
    }
}

fn toward0(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        f64::from_bits(x.to_bits().wrapping_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmod_is_cs_but_where_a_step_overflows() {
        assert_eq!(fmodf(7.0, 3.0), 1.0);
        assert_eq!(fmodf(-7.0, 3.0).to_bits(), (-1.0f32).to_bits());
        assert_eq!(fmodf(-6.0, 3.0).to_bits(), (-0.0f32).to_bits());
        assert!(fmodf(1e30, 1e-30).is_nan());
        assert_eq!((1e30f32 % 1e-30).to_bits(), 0x0d84_83a0); // 8.166816e-31, C's fmod
        // 1 / 2**-128 overflows; Sleef's quotient, rounded toward zero first, does not.
        assert_eq!(fmodf(1.0, f32::from_bits(1 << 21)), 0.0);
        assert!(fmodf(5.0, 0.0).is_nan());
        assert_eq!(fmodf(2.5, f32::INFINITY), 2.5);
        assert_eq!(fmod(7.5, 2.0), 1.5);
        assert!(fmod(1e300, 1e-300).is_nan());
        assert_eq!(fmod(-1e-310, 3.0).to_bits(), (-1e-310f64).to_bits());
    }
}
