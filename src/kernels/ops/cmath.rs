//! Complex `power` as the libraries compute it, in the parts' precision (f32 for complex64):
//! C99's `cpow`, `clog`, `cexp` and `csqrt` as glibc writes them (`math/s_*_template.c`), C's
//! Annex G product, and NumPy's `npy_cpow`. PyTorch's `std::pow` of two complex numbers is
//! glibc's `cpow` (0 of 40,000 random pairs differ, torch 2.15); NumPy's is `cpow` behind its own
//! answers for zero bases and integer exponents of magnitude below 100.
//!
//! The real functions (`exp`, `log`, `log1p`, `hypot`, `atan2`, `sin`, `cos`, `sqrt`) are the
//! platform's libm, which Rust's float methods call on Linux: the same glibc functions the
//! libraries' own `cpow` calls, so the values agree bit for bit where the libm does.

use super::complex::{Float, complex_at, npy_cdiv};
use super::input::Input;
use super::lanes::{canon32, canon64};
use super::vocab::Op;
use crate::kernels::array::Array;
use crate::numeric::dtype::DType;
use crate::numeric::op::ComplexPower;

/// The real functions and constants glibc's complex functions use.
pub(super) trait Libm: Float + std::ops::Neg<Output = Self> {
    const MAX: Self;
    /// The smallest normal number (C's `FLT_MIN`/`DBL_MIN`).
    const MIN: Self;
    const EPSILON: Self;
    const MANT_DIG: i32;
    const LN2: Self;
    const PI: Self;
    const HALF: Self;
    const INFINITY: Self;
    const NAN: Self;
    /// `(int)((MAX_EXP - 1) · ln 2)`: the largest `t` with `exp(t)` finite, as glibc's `cexp`
    /// computes it.
    const EXP_LIMIT: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn hypot(self, y: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn sqrt(self) -> Self;
    fn copysign(self, sign: Self) -> Self;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn from_i32(n: i32) -> Self;
    /// `self · 2^k` (C's `scalbn`; exact or correctly rounded as one product).
    fn scale(self, k: i32) -> Self;
    /// `x² + y² − 1` without cancellation, given `1 > x ≥ y` and `x² + y² ≥ 0.5` (glibc's
    /// `__x2y2m1` and `__x2y2m1f`).
    fn x2y2m1(x: Self, y: Self) -> Self;
}

macro_rules! libm {
    ($t:ident, $mant:expr, $limit:expr) => {
        impl Libm for $t {
            const MAX: $t = $t::MAX;
            const MIN: $t = $t::MIN_POSITIVE;
            const EPSILON: $t = $t::EPSILON;
            const MANT_DIG: i32 = $mant;
            const LN2: $t = std::$t::consts::LN_2;
            const PI: $t = std::$t::consts::PI;
            const HALF: $t = 0.5;
            const INFINITY: $t = $t::INFINITY;
            const NAN: $t = $t::NAN;
            const EXP_LIMIT: $t = $limit;
            fn exp(self) -> $t {
                $t::exp(self)
            }
            fn ln(self) -> $t {
                $t::ln(self)
            }
            fn ln_1p(self) -> $t {
                $t::ln_1p(self)
            }
            fn hypot(self, y: $t) -> $t {
                $t::hypot(self, y)
            }
            fn atan2(self, x: $t) -> $t {
                $t::atan2(self, x)
            }
            fn sin(self) -> $t {
                $t::sin(self)
            }
            fn cos(self) -> $t {
                $t::cos(self)
            }
            fn sqrt(self) -> $t {
                $t::sqrt(self)
            }
            fn copysign(self, sign: $t) -> $t {
                $t::copysign(self, sign)
            }
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            fn from_i32(n: i32) -> $t {
                n as $t
            }
            fn scale(self, k: i32) -> $t {
                self * (2.0 as $t).powi(k)
            }
            fn x2y2m1(x: $t, y: $t) -> $t {
                x2y2m1!($t, x, y)
            }
        }
    };
}

macro_rules! x2y2m1 {
    (f32, $x:expr, $y:expr) => {{
        // glibc's `__x2y2m1f`: in double, rounded once.
        let (dx, dy) = ($x as f64, $y as f64);
        ((dx - 1.0) * (dx + 1.0) + dy * dy) as f32
    }};
    (f64, $x:expr, $y:expr) => {
        x2y2m1_f64($x, $y)
    };
}

libm!(f32, 24, 88.0);
libm!(f64, 53, 709.0);

/// glibc's `__x2y2m1`: the exact products `x²`, `y²` split in two parts each, and −1, summed
/// smallest first with Dekker's exact additions, re-sorted by magnitude after each.
fn x2y2m1_f64(x: f64, y: f64) -> f64 {
    let split = |a: f64, b: f64| {
        let hi = a * b;
        (hi, a.mul_add(b, -hi))
    };
    let mut v = [0.0f64; 5];
    (v[1], v[0]) = split(x, x);
    (v[3], v[2]) = split(y, y);
    v[4] = -1.0;
    let by_magnitude = |v: &mut [f64]| v.sort_by(|p, q| p.abs().total_cmp(&q.abs()));
    by_magnitude(&mut v);
    for i in 0..=3 {
        let (a, b) = (v[i + 1], v[i]);
        let hi = a + b;
        v[i] = (a - hi) + b;
        v[i + 1] = hi;
        by_magnitude(&mut v[i + 1..]);
    }
    v[4] + v[3] + v[2] + v[1] + v[0]
}

/// A float computed as x86's SSE units compute it with denormals-are-zero and flush-to-zero on
/// (TensorFlow's threads, `subnormals = "flush"`): every operand and result of an operation, and
/// of a libm function, that is subnormal is read or written as a zero of its sign. (A libm
/// function under those modes could still round an internal subnormal step otherwise; its
/// inputs and result are flushed here.)
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(super) struct Flushed<F>(F);

impl<F: Libm> Flushed<F> {
    pub(super) fn new(v: F) -> Self {
        let tiny = v != F::ZERO && v.abs() < F::MIN;
        Flushed(if tiny { F::ZERO.copysign(v) } else { v })
    }

    pub(super) fn get(self) -> F {
        self.0
    }
}

macro_rules! flushed_ops {
    ($($Op:ident $op:ident),*) => {$(
        impl<F: Libm> std::ops::$Op for Flushed<F> {
            type Output = Self;
            fn $op(self, o: Self) -> Self {
                Flushed::new(std::ops::$Op::$op(self.0, o.0))
            }
        }
    )*};
}
flushed_ops!(Add add, Sub sub, Mul mul, Div div);

impl<F: Libm> std::ops::Neg for Flushed<F> {
    type Output = Self;
    fn neg(self) -> Self {
        Flushed(-self.0)
    }
}

impl<F: Libm> Float for Flushed<F> {
    const ZERO: Self = Flushed(F::ZERO);
    const ONE: Self = Flushed(F::ONE);
    fn abs(self) -> Self {
        Flushed(self.0.abs())
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        Flushed::new(self.0.mul_add(a.0, b.0))
    }
    fn neg(self) -> Self {
        Flushed(-self.0)
    }
    fn is_nan(self) -> bool {
        self.0.is_nan()
    }
    fn f64(self) -> f64 {
        self.0.f64()
    }
}

impl<F: Libm> Libm for Flushed<F> {
    const MAX: Self = Flushed(F::MAX);
    const MIN: Self = Flushed(F::MIN);
    const EPSILON: Self = Flushed(F::EPSILON);
    const MANT_DIG: i32 = F::MANT_DIG;
    const LN2: Self = Flushed(F::LN2);
    const PI: Self = Flushed(F::PI);
    const HALF: Self = Flushed(F::HALF);
    const INFINITY: Self = Flushed(F::INFINITY);
    const NAN: Self = Flushed(F::NAN);
    const EXP_LIMIT: Self = Flushed(F::EXP_LIMIT);
    fn exp(self) -> Self {
        Flushed::new(self.0.exp())
    }
    fn ln(self) -> Self {
        Flushed::new(self.0.ln())
    }
    fn ln_1p(self) -> Self {
        Flushed::new(self.0.ln_1p())
    }
    fn hypot(self, y: Self) -> Self {
        Flushed::new(self.0.hypot(y.0))
    }
    fn atan2(self, x: Self) -> Self {
        Flushed::new(self.0.atan2(x.0))
    }
    fn sin(self) -> Self {
        Flushed::new(self.0.sin())
    }
    fn cos(self) -> Self {
        Flushed::new(self.0.cos())
    }
    fn sqrt(self) -> Self {
        Flushed::new(self.0.sqrt())
    }
    fn copysign(self, sign: Self) -> Self {
        Flushed(self.0.copysign(sign.0))
    }
    fn is_infinite(self) -> bool {
        self.0.is_infinite()
    }
    fn is_sign_negative(self) -> bool {
        self.0.is_sign_negative()
    }
    fn from_i32(n: i32) -> Self {
        Flushed(F::from_i32(n))
    }
    fn scale(self, k: i32) -> Self {
        Flushed::new(self.0.scale(k))
    }
    fn x2y2m1(x: Self, y: Self) -> Self {
        Flushed::new(F::x2y2m1(x.0, y.0))
    }
}

/// A complex number as its parts.
pub(super) type C<F> = (F, F);

/// `a · b` by C's Annex G (`__muldc3`): the four products, and where both parts come out NaN,
/// infinities recovered (an infinite factor boxed to ±1/±0, NaNs in the other zeroed).
pub(super) fn mul_annex_g<F: Libm>((mut a, mut b): C<F>, (mut c, mut d): C<F>) -> C<F> {
    let (ac, bd, ad, bc) = (a * c, b * d, a * d, b * c);
    let (x, y) = (ac - bd, ad + bc);
    if !(x.is_nan() && y.is_nan()) {
        return (x, y);
    }
    let box_inf = |v: F| (if v.is_infinite() { F::ONE } else { F::ZERO }).copysign(v);
    let zero_nan = |v: F| if v.is_nan() { F::ZERO.copysign(v) } else { v };
    let mut recalc = false;
    if a.is_infinite() || b.is_infinite() {
        (a, b) = (box_inf(a), box_inf(b));
        (c, d) = (zero_nan(c), zero_nan(d));
        recalc = true;
    }
    if c.is_infinite() || d.is_infinite() {
        (c, d) = (box_inf(c), box_inf(d));
        (a, b) = (zero_nan(a), zero_nan(b));
        recalc = true;
    }
    if !recalc && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite()) {
        (a, b, c, d) = (zero_nan(a), zero_nan(b), zero_nan(c), zero_nan(d));
        recalc = true;
    }
    if recalc {
        (F::INFINITY * (a * c - b * d), F::INFINITY * (a * d + b * c))
    } else {
        (x, y)
    }
}

/// glibc's `clog`.
pub(super) fn clog<F: Libm>((re, im): C<F>) -> C<F> {
    if re == F::ZERO && im == F::ZERO {
        let arg = if re.is_sign_negative() {
            F::PI
        } else {
            F::ZERO
        };
        return (-F::ONE / re.abs(), arg.copysign(im));
    }
    if re.is_nan() || im.is_nan() {
        let real = if re.is_infinite() || im.is_infinite() {
            F::INFINITY
        } else {
            F::NAN
        };
        return (real, F::NAN);
    }
    let (mut absx, mut absy) = (re.abs(), im.abs());
    if absx < absy {
        (absx, absy) = (absy, absx);
    }
    let mut scale = 0;
    if absx > F::MAX * F::HALF {
        scale = -1;
        absx = absx.scale(-1);
        absy = if absy >= F::MIN + F::MIN {
            absy.scale(-1)
        } else {
            F::ZERO
        };
    } else if absx < F::MIN && absy < F::MIN {
        scale = F::MANT_DIG;
        absx = absx.scale(scale);
        absy = absy.scale(scale);
    }
    let (one, half) = (F::ONE, F::HALF);
    let two = one + one;
    let real = if absx == one && scale == 0 {
        (absy * absy).ln_1p() / two
    } else if absx > one && absx < two && absy < one && scale == 0 {
        let mut d2m1 = (absx - one) * (absx + one);
        if absy >= F::EPSILON {
            d2m1 = d2m1 + absy * absy;
        }
        d2m1.ln_1p() / two
    } else if absx < one && absx >= half && absy < F::EPSILON * half && scale == 0 {
        ((absx - one) * (absx + one)).ln_1p() / two
    } else if absx < one && absx >= half && scale == 0 && absx * absx + absy * absy >= half {
        F::x2y2m1(absx, absy).ln_1p() / two
    } else {
        absx.hypot(absy).ln() - F::from_i32(scale) * F::LN2
    };
    (real, im.atan2(re))
}

/// glibc's `sincos` for `cexp`: a tiny (or zero) angle's sine is itself, its cosine one.
fn sincos<F: Libm>(t: F) -> (F, F) {
    if t.abs() > F::MIN {
        (t.sin(), t.cos())
    } else {
        (t, F::ONE)
    }
}

/// glibc's `cexp`.
pub(super) fn cexp<F: Libm>((mut re, im): C<F>) -> C<F> {
    let finite = |v: F| !v.is_nan() && !v.is_infinite();
    if finite(re) {
        if !finite(im) {
            return (F::NAN, F::NAN);
        }
        let (mut s, mut c) = sincos(im);
        let t = F::EXP_LIMIT;
        if re > t {
            let exp_t = t.exp();
            re = re - t;
            s = s * exp_t;
            c = c * exp_t;
            if re > t {
                re = re - t;
                s = s * exp_t;
                c = c * exp_t;
            }
        }
        if re > t {
            (F::MAX * c, F::MAX * s)
        } else {
            let e = re.exp();
            (e * c, e * s)
        }
    } else if re.is_infinite() {
        if finite(im) {
            let value = if re.is_sign_negative() {
                F::ZERO
            } else {
                F::INFINITY
            };
            if im == F::ZERO {
                (value, im)
            } else {
                let (s, c) = sincos(im);
                (value.copysign(c), value.copysign(s))
            }
        } else if !re.is_sign_negative() {
            (F::INFINITY, F::NAN) // glibc: `im − im`, NaN for an infinite or NaN `im`
        } else {
            (F::ZERO, F::ZERO.copysign(im))
        }
    } else if im == F::ZERO {
        (F::NAN, im)
    } else {
        (F::NAN, F::NAN)
    }
}

/// glibc's `cpow`: `cexp(y · clog(x))`, the product by Annex G.
pub(super) fn cpow<F: Libm>(x: C<F>, y: C<F>) -> C<F> {
    cexp(mul_annex_g(y, clog(x)))
}

/// glibc's `csqrt`.
pub(super) fn csqrt<F: Libm>((mut re, mut im): C<F>) -> C<F> {
    let (zero, half) = (F::ZERO, F::HALF);
    let (re_inf, im_inf) = (re.is_infinite(), im.is_infinite());
    if re.is_nan() || im.is_nan() || re_inf || im_inf {
        return if im_inf {
            (F::INFINITY, im)
        } else if re_inf && re < zero {
            let real = if im.is_nan() { F::NAN } else { zero };
            (real, F::INFINITY.copysign(im))
        } else if re_inf {
            (
                re,
                if im.is_nan() {
                    F::NAN
                } else {
                    zero.copysign(im)
                },
            )
        } else {
            (F::NAN, F::NAN)
        };
    }
    let two = F::ONE + F::ONE;
    if im == zero {
        return if re < zero {
            (zero, (-re).sqrt().copysign(im))
        } else {
            (re.sqrt().abs(), zero.copysign(im))
        };
    }
    if re == zero {
        let r = if im.abs() >= two * F::MIN {
            (half * im.abs()).sqrt()
        } else {
            half * (two * im.abs()).sqrt()
        };
        return (r, r.copysign(im));
    }
    let four = two + two;
    let mut scale = 0;
    if re.abs() > F::MAX / four {
        scale = 1;
        re = re.scale(-2);
        im = im.scale(-2);
    } else if im.abs() > F::MAX / four {
        scale = 1;
        re = if re.abs() >= four * F::MIN {
            re.scale(-2)
        } else {
            zero
        };
        im = im.scale(-2);
    } else if re.abs() < two * F::MIN && im.abs() < two * F::MIN {
        scale = -((F::MANT_DIG + 1) / 2);
        re = re.scale(-2 * scale);
        im = im.scale(-2 * scale);
    }
    let d = re.hypot(im);
    let (mut r, mut s);
    if re > zero {
        r = (half * (d + re)).sqrt();
        if scale == 1 && im.abs() < F::ONE {
            s = im / r;
            r = r.scale(scale);
            scale = 0;
        } else {
            s = half * (im / r);
        }
    } else {
        s = (half * (d - re)).sqrt();
        if scale == 1 && im.abs() < F::ONE {
            r = (im / s).abs();
            s = s.scale(scale);
            scale = 0;
        } else {
            r = (half * (im / s)).abs();
        }
    }
    if scale != 0 {
        r = r.scale(scale);
        s = s.scale(scale);
    }
    (r, s.copysign(im))
}

/// NumPy's `cmul` (`npy_math_complex.c.src`): the schoolbook product, no fused multiply-adds.
fn npy_cmul<F: Libm>((ar, ai): C<F>, (br, bi): C<F>) -> C<F> {
    (ar * br - ai * bi, ar * bi + ai * br)
}

/// NumPy's `npy_cpow`: `x⁰` is 1; a zero base gives 0 for an exponent of positive real part,
/// else NaN; an integer exponent `n` with `|n| < 100` multiplies (`x`, `x²`, `x³` unrolled,
/// repeated squaring above, `1 / xⁿ` for negative `n`); every other pair is `cpow`.
pub(super) fn npy_cpow<F: Libm>(a: C<F>, b: C<F>) -> C<F> {
    let ((ar, ai), (br, bi)) = (a, b);
    let (zero, one) = (F::ZERO, F::ONE);
    if br == zero && bi == zero {
        return (one, zero);
    }
    if ar == zero && ai == zero {
        return if br > zero {
            (zero, zero)
        } else {
            (F::NAN, F::NAN)
        };
    }
    let hundred = F::from_i32(100);
    if bi == zero && br > -hundred && br < hundred {
        // In (−100, 100): exact as an i32, and an integer where it converts back equal.
        let n = integral(br);
        if let Some(n) = n {
            return match n {
                1 => a,
                2 => npy_cmul(a, a),
                3 => npy_cmul(a, npy_cmul(a, a)),
                _ => {
                    let m = n.unsigned_abs();
                    let (mut aa, mut p) = ((one, zero), a);
                    let mut mask = 1u32;
                    loop {
                        if m & mask != 0 {
                            aa = npy_cmul(aa, p);
                        }
                        mask <<= 1;
                        if m < mask {
                            break;
                        }
                        p = npy_cmul(p, p);
                    }
                    if br < zero {
                        npy_cdiv((one, zero), aa)
                    } else {
                        aa
                    }
                }
            };
        }
    }
    cpow(a, b)
}

/// `power(x, y)` in complex64 or complex128 (`x` and `y` full length or splat), each pair by
/// `rule`'s function: NumPy's `npy_cpow` or glibc's `cpow` (PyTorch's Python-number exponents
/// with their own kernels are `binary::complex_power`'s), under `flush` in [`Flushed`] numbers.
pub(super) fn power(
    rule: ComplexPower,
    c: DType,
    x: &Input,
    y: &Input,
    shape: &[usize],
    flush: bool,
) -> Array {
    fn go<F: Libm>(rule: ComplexPower) -> impl Fn([C<F>; 2]) -> C<F> {
        move |[a, b]| match rule {
            ComplexPower::Numpy => npy_cpow(a, b),
            ComplexPower::Torch | ComplexPower::Cpow => cpow(a, b),
        }
    }
    /// `go` computed in `Flushed<F>`.
    fn flushed<F: Libm>(rule: ComplexPower) -> impl Fn([C<F>; 2]) -> C<F> {
        move |args| {
            let (re, im) =
                go::<Flushed<F>>(rule)(args.map(|(p, q)| (Flushed::new(p), Flushed::new(q))));
            (re.get(), im.get())
        }
    }
    if flush {
        elementwise(c, [x, y], shape, flushed::<f32>(rule), flushed::<f64>(rule))
    } else {
        elementwise(c, [x, y], shape, go::<f32>(rule), go::<f64>(rule))
    }
}

/// `csqrt(x)` in complex64 or complex128 (glibc's).
pub(super) fn sqrt(c: DType, x: &Input, shape: &[usize]) -> Array {
    elementwise(c, [x], shape, |[a]| csqrt(a), |[a]| csqrt(a))
}

/// `x` converted to complex64 or complex128, broadcast to `shape`.
pub(super) fn convert(c: DType, x: &Input, shape: &[usize]) -> Array {
    elementwise(c, [x], shape, |[a]| a, |[a]| a)
}

/// `f` of each element of `inputs` in complex dtype `c` (complex64 or complex128), computed in
/// the parts' precision: `narrow` for complex64, `wide` for complex128.
fn elementwise<const N: usize>(
    c: DType,
    inputs: [&Input; N],
    shape: &[usize],
    narrow: impl Fn([C<f32>; N]) -> C<f32>,
    wide: impl Fn([C<f64>; N]) -> C<f64>,
) -> Array {
    let n: usize = shape.iter().product();
    let at = |k: usize| inputs.map(|i| complex_at(&i.array, if i.splat { 0 } else { k }, c));
    let bits: Vec<[u64; 2]> = if c == DType::Complex64 {
        (0..n)
            .map(|k| {
                let (re, im) = narrow(at(k).map(|(re, im)| (re as f32, im as f32)));
                [canon32(re) as u64, canon32(im) as u64]
            })
            .collect()
    } else {
        (0..n)
            .map(|k| {
                let (re, im) = wide(at(k));
                [canon64(re), canon64(im)]
            })
            .collect()
    };
    Array::from_bits(c, shape.to_vec(), &bits).expect("the result's shape")
}

/// `x / y` as Eigen's packet division computes it (`pdiv_complex`, TensorFlow's vector loop):
/// the divisor scaled by the larger magnitude of its parts (lane by lane, as `pmax` takes it:
/// a NaN part makes the two lanes' scales differ), `x · conj(y')` by schoolbook products, each
/// part divided by `c'² + d'²` and then by the scale.
pub(super) fn eigen_divide<F: Libm>((a, b): C<F>, (c, d): C<F>) -> C<F> {
    let (ac, ad) = (c.abs(), d.abs());
    let m_re = if ad > ac { ad } else { ac };
    let m_im = if ac > ad { ac } else { ad };
    let (cs, ds) = (c / m_re, d / m_im);
    let (den_re, den_im) = (cs * cs + ds * ds, ds * ds + cs * cs);
    let nds = -ds;
    let (re, im) = (a * cs - b * nds, a * nds + b * cs);
    ((re / den_re) / m_re, (im / den_im) / m_im)
}

/// `x / y` by Smith's algorithm as C's `__divsc3`/`__divdc3` computed it before GCC 12 (the
/// ratio of the divisor's smaller part to its larger, each part divided by `c + d·(d/c)`), and
/// where both parts come out NaN, Annex G's limits: a nonzero over zero is `copysign(inf, c)`
/// times each part, an infinite over a finite and a finite over an infinite their limits
/// (TensorFlow's scalar loop: `(8 − i) / 0` is `inf − inf·i`).
pub(super) fn smith_divide<F: Libm>((a, b): C<F>, (c, d): C<F>) -> C<F> {
    let (x, y) = if c.abs() < d.abs() {
        let ratio = c / d;
        let denom = c * ratio + d;
        ((a * ratio + b) / denom, (b * ratio - a) / denom)
    } else {
        let ratio = d / c;
        let denom = d * ratio + c;
        ((b * ratio + a) / denom, (b - a * ratio) / denom)
    };
    if !(x.is_nan() && y.is_nan()) {
        return (x, y);
    }
    let finite = |v: F| !v.is_nan() && !v.is_infinite();
    let unit = |v: F| (if v.is_infinite() { F::ONE } else { F::ZERO }).copysign(v);
    if c == F::ZERO && d == F::ZERO && (!a.is_nan() || !b.is_nan()) {
        let inf = F::INFINITY.copysign(c);
        (inf * a, inf * b)
    } else if (a.is_infinite() || b.is_infinite()) && finite(c) && finite(d) {
        let (a, b) = (unit(a), unit(b));
        (F::INFINITY * (a * c + b * d), F::INFINITY * (b * c - a * d))
    } else if (c.is_infinite() || d.is_infinite()) && finite(a) && finite(b) {
        let (c, d) = (unit(c), unit(d));
        (F::ZERO * (a * c + b * d), F::ZERO * (b * c - a * d))
    } else {
        (x, y)
    }
}

/// Whose formulas [`as_computed`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Formulas {
    /// TensorFlow's Eigen kernels (`complex_multiply = "eigen"`, `complex_divide = "eigen"`).
    Eigen,
    /// XLA's CPU backend (`complex_multiply = "xla"`): `multiply` only. `commuted`: computed as
    /// `y · x` (see [`xla_commutes`]).
    Xla { commuted: bool },
}

/// Whether XLA's CPU backend computes `x · y` as `y · x`: when `x` is not constant along the
/// result's innermost dimension longer than one and either `y` is (`y` a scalar, a `()` or
/// `(n, 1)` operand beside an `(n, m)` one) or `y_converted` has the result's shape exactly (not
/// broadcast, not of lower rank); with no dimension longer than one, when `y_converted` has the
/// result's shape. `y_converted`: complex64 converted to a complex128 product, or a Python
/// complex (`None`, shape `()` here) to complex64. The product's value is the same up to which of
/// the imaginary part's two products is fused: `fma(b, c, a·d)` or `fma(a, d, b·c)`. Measured on
/// JAX 0.10.2 (CPU): for complex64 and complex128 operands of one dtype over 14 × 14 shapes and
/// 400 random pairs of shapes up to four dimensions; complex128 · complex64 (the second
/// converted) and complex64 · complex128 over 350 and 200 random pairs of shapes up to three
/// dimensions (`(5,)·(5,)` is `y · x` when `y` is the converted one, `x · y` when `x` is); a
/// complex64 `()` times a Python complex is `y · x`, a complex128 `()` or complex64 `(1,)` times
/// one `x · y`. The rule held for each; a flushed product's zero sign and the last bit of an
/// inexact imaginary part follow it (`(−DBL_MAX + DBL_MIN·i) · (−0.001 − 1.1e−308·i)` has
/// imaginary part −0 at shapes `(1,)·(1,)`, +0 at `(2,)·(1,)`). A float operand converted to
/// complex (its imaginary part zero) can change only a zero's sign, and which product XLA fuses
/// then is not modelled.
pub(super) fn xla_commutes(
    x: Option<&[usize]>,
    y: Option<&[usize]>,
    out: &[usize],
    y_converted: bool,
) -> bool {
    let exact = y_converted && y.unwrap_or(&[]) == out;
    let Some(k) = out.iter().rposition(|&n| n > 1) else {
        return exact;
    };
    // `None` is a Python number: constant everywhere.
    let constant = |s: Option<&[usize]>| {
        s.is_none_or(|s| {
            (k + s.len())
                .checked_sub(out.len())
                .is_none_or(|j| s[j] == 1)
        })
    };
    !constant(x) && (constant(y) || exact)
}

/// `multiply` or `true_divide` in complex64 or complex128 as a library's kernels compute them,
/// under `flush` in [`Flushed`] numbers. Eigen's: over the whole 32-byte packets of the
/// flattened result (4 complex64, 2 complex128 elements) the packet's formula (the schoolbook
/// product; [`eigen_divide`]), over the rest C's (`std::complex`'s operators as GCC compiles
/// them: [`mul_annex_g`], [`smith_divide`]); measured on TensorFlow 2.21: `(FLT_MAX − 0.001i) ·
/// (−2.5 + NaN·i)` is NaN + NaN·i in a packet and −inf + inf·i past the last one, at every
/// length from 1 to 12. XLA's: `fma(a, c, −b·d) + fma(b, c, a·d)·i` at every element, or with the
/// operands commuted ([`xla_commutes`]).
pub(super) fn as_computed(
    formulas: Formulas,
    op: Op,
    c: DType,
    x: &Input,
    y: &Input,
    shape: &[usize],
    flush: bool,
) -> Array {
    fn apply<F: Libm>(f: Formulas, op: Op, vector: bool, (a, b): C<F>, (p, q): C<F>) -> C<F> {
        match (f, op, vector) {
            (Formulas::Xla { commuted: false }, _, _) => {
                (a.mul_add(p, -(b * q)), b.mul_add(p, a * q))
            }
            (Formulas::Xla { commuted: true }, _, _) => {
                (p.mul_add(a, -(q * b)), q.mul_add(a, p * b))
            }
            (_, Op::Multiply, true) => (a * p - b * q, a * q + b * p),
            (_, Op::Multiply, false) => mul_annex_g((a, b), (p, q)),
            (_, _, true) => eigen_divide((a, b), (p, q)),
            (_, _, false) => smith_divide((a, b), (p, q)),
        }
    }
    fn go<F: Libm>(f: Formulas, op: Op, vector: bool, p: C<F>, q: C<F>, flush: bool) -> C<F> {
        if !flush {
            return apply(f, op, vector, p, q);
        }
        let w = |(re, im): C<F>| (Flushed::new(re), Flushed::new(im));
        let (re, im) = apply(f, op, vector, w(p), w(q));
        (re.get(), im.get())
    }
    debug_assert!(matches!(op, Op::Multiply | Op::TrueDivide));
    debug_assert!(formulas == Formulas::Eigen || op == Op::Multiply);
    let n: usize = shape.iter().product();
    let packets = n - n % if c == DType::Complex64 { 4 } else { 2 };
    let at = |i: &Input, k: usize| complex_at(&i.array, if i.splat { 0 } else { k }, c);
    let bits: Vec<[u64; 2]> = (0..n)
        .map(|k| {
            let (p, q, vector) = (at(x, k), at(y, k), k < packets);
            if c == DType::Complex64 {
                let f = |(re, im): C<f64>| (re as f32, im as f32);
                let (re, im) = go(formulas, op, vector, f(p), f(q), flush);
                [canon32(re) as u64, canon32(im) as u64]
            } else {
                let (re, im) = go(formulas, op, vector, p, q, flush);
                [canon64(re), canon64(im)]
            }
        })
        .collect();
    Array::from_bits(c, shape.to_vec(), &bits).expect("the result's shape")
}

/// `v` as an integer where it is one (`v` in (−100, 100)).
fn integral<F: Libm>(v: F) -> Option<i32> {
    let n = v.f64() as i32; // truncates toward zero, as C's conversion
    (F::from_i32(n) == v).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits64((r, i): C<f64>) -> (u64, u64) {
        (r.to_bits(), i.to_bits())
    }

    #[test]
    fn xla_commutes_where_y_is_constant_along_the_innermost_dimension() {
        let c =
            |x: &[usize], y: &[usize], out: &[usize]| xla_commutes(Some(x), Some(y), out, false);
        // Measured on JAX 0.10.2 (scripts/oracle_jax_complex_multiply.py).
        assert!(c(&[40, 2], &[40, 1], &[40, 2]));
        assert!(c(&[2], &[1], &[2]));
        assert!(c(&[2, 1], &[3, 1, 1], &[3, 2, 1]));
        assert!(c(&[1, 1, 4], &[3, 1, 1], &[3, 1, 4]));
        assert!(xla_commutes(Some(&[5]), None, &[5], false));
        assert!(!xla_commutes(None, Some(&[5]), &[5], false));
        assert!(!c(&[1], &[1], &[1]));
        assert!(!c(&[40, 1], &[40, 2], &[40, 2]));
        assert!(!c(&[2, 3], &[3], &[2, 3]));
        assert!(!c(&[3, 2, 4], &[3, 1, 4], &[3, 2, 4]));
        assert!(!c(&[3, 2, 1], &[2, 1], &[3, 2, 1]));
        assert!(!c(&[3, 1, 1], &[2, 1], &[3, 2, 1]));
    }

    #[test]
    fn xla_commutes_a_converted_y_of_the_results_shape() {
        // complex128 · complex64, measured on JAX 0.10.2 (fuzz seed 200203, case 297: (DBL_MIN −
        // DBL_MAX·i) · (−5.9e−39 − 0.001·i), a subnormal complex64 part: imaginary part −0).
        let w = |x: &[usize], y: &[usize], out: &[usize]| xla_commutes(Some(x), Some(y), out, true);
        assert!(w(&[2, 20], &[2, 20], &[2, 20]));
        assert!(w(&[1, 10], &[30, 10], &[30, 10]));
        assert!(w(&[8, 1], &[8, 1], &[8, 1]));
        assert!(w(&[], &[], &[]));
        assert!(w(&[], &[1], &[1]));
        assert!(w(&[30, 10], &[30, 1], &[30, 10]));
        // Broadcast or of lower rank: as for one dtype.
        assert!(!w(&[1], &[], &[1]));
        assert!(!w(&[1, 8], &[8], &[1, 8]));
        assert!(!w(&[30, 10], &[1, 10], &[30, 10]));
        // `x` constant along the innermost dimension.
        assert!(!w(&[1], &[300], &[300]));
        assert!(!w(&[30, 1], &[30, 10], &[30, 10]));
        assert!(!xla_commutes(None, Some(&[5]), &[5], true));
        // A Python complex converted to complex64 (`None`): shape `()`.
        assert!(xla_commutes(Some(&[]), None, &[], true));
        assert!(!xla_commutes(Some(&[]), None, &[], false));
        assert!(!xla_commutes(Some(&[1]), None, &[1], true));
        assert!(xla_commutes(Some(&[3]), None, &[3], true));
    }

    #[test]
    fn xla_commuted_product_fuses_the_other_imaginary_product() {
        // (−DBL_MAX + DBL_MIN·i) · (−0.001 − 1.1e−308·i), subnormals flushed: JAX's imaginary
        // part is −0 at shapes (1,)·(1,), +0 at (2,)·(1,) (fuzz seed 200127, case 957).
        let x = Input {
            array: std::borrow::Cow::Owned(
                Array::from_bits(
                    DType::Complex128,
                    vec![1],
                    &[[(-f64::MAX).to_bits(), f64::MIN_POSITIVE.to_bits()]],
                )
                .unwrap(),
            ),
            splat: true,
        };
        let y = Input {
            array: std::borrow::Cow::Owned(
                Array::from_bits(
                    DType::Complex128,
                    vec![1],
                    &[[(-0.001f64).to_bits(), (-f64::MIN_POSITIVE / 2.0).to_bits()]],
                )
                .unwrap(),
            ),
            splat: true,
        };
        let imaginary = |commuted| {
            let f = Formulas::Xla { commuted };
            let r = as_computed(f, Op::Multiply, DType::Complex128, &x, &y, &[2], true);
            r.bits()[0][1]
        };
        assert_eq!(imaginary(false), (-0.0f64).to_bits());
        assert_eq!(imaginary(true), 0.0f64.to_bits());
    }

    #[test]
    fn annex_g_recovers_infinities() {
        // (inf + NaN·i) · 2: the schoolbook product is NaN + NaN·i, Annex G inf + NaN·i.
        let (re, im) = mul_annex_g((2.0f64, 0.0), (f64::INFINITY, f64::NAN));
        assert_eq!(re, f64::INFINITY);
        assert!(im.is_nan());
        // (1e308 + 1e308·i)²: both parts overflow to inf − inf; recovered as −inf·0 … = NaN
        // only where a factor is NaN, so here (NaN, inf) is left as computed.
        let (re, im) = mul_annex_g((1e308f64, 1e308), (1e308, 1e308));
        assert!(re.is_nan());
        assert_eq!(im, f64::INFINITY);
    }

    #[test]
    fn cpow_matches_glibc_on_simple_values() {
        // Measured with glibc 2.36's cpow (C: cpow(CMPLX(1, 2), CMPLX(0.5, 0))).
        assert_eq!(
            bits64(cpow((1.0, 2.0), (0.5, 0.0))),
            (0x3ff45a3146a88456, 0x3fe92826ef258d1b)
        );
        let (re, im) = cpow((1.0f32, 2.0), (0.5, 0.0));
        assert_eq!((re.to_bits(), im.to_bits()), (0x3fa2d18a, 0x3f494139));
    }

    #[test]
    fn npy_cpow_answers_zero_bases_and_small_integer_powers() {
        assert_eq!(npy_cpow((0.0f64, 0.0), (0.5, 1.0)), (0.0, 0.0));
        let (re, im) = npy_cpow((-0.0f64, 0.0), (-1.0, 5.0));
        assert!(re.is_nan() && im.is_nan());
        assert_eq!(npy_cpow((f64::NAN, 1.0), (0.0, 0.0)), (1.0, 0.0));
        // (1 + 2i)³ = −11 − 2i, exactly, by two products.
        assert_eq!(npy_cpow((1.0f64, 2.0), (3.0, 0.0)), (-11.0, -2.0));
        // (1 + i)⁻⁴ = −1/4, by squaring and one division.
        assert_eq!(npy_cpow((1.0f64, 1.0), (-4.0, 0.0)), (-0.25, 0.0));
    }

    #[test]
    fn x2y2m1_is_exact_where_rounding_once_is_not() {
        // x² + y² − 1 for x = 1 − 2⁻²⁷, y = 2⁻¹⁴: the exact value is −2⁻²⁶ + 2⁻⁵⁴ + 2⁻²⁸.
        let x = 1.0 - 2f64.powi(-27);
        let y = 2f64.powi(-14);
        let exact = -(2f64.powi(-26)) + 2f64.powi(-28) + 2f64.powi(-54);
        assert_eq!(f64::x2y2m1(x, y), exact);
    }

    #[test]
    fn csqrt_special_values() {
        assert_eq!(csqrt((-4.0f64, 0.0)), (0.0, 2.0));
        assert_eq!(csqrt((-4.0f64, -0.0)), (0.0, -2.0));
        assert_eq!(csqrt((f64::NEG_INFINITY, 1.0)), (0.0, f64::INFINITY));
        assert_eq!(csqrt((0.0f64, 8.0)), (2.0, 2.0));
        assert_eq!(csqrt((3.0f64, 4.0)), (2.0, 1.0));
    }
}
