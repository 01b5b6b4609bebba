//! Numeric formats and one format-driven codec: decode any format's bit pattern to an exact
//! value, and encode an exact value into any format with round-to-nearest-even and that
//! format's overflow, NaN and signed-zero rules, as ml_dtypes / NumPy have them.
//!
//! Values are exact binary rationals (`mant × 2^exp`, `mant < 2^128`), so every conversion
//! rounds once, from the exact source value: no double rounding through float32.

/// How a float format encodes NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NanEncoding {
    /// IEEE: all-ones exponent with a non-zero mantissa.
    Ieee,
    /// `fn` formats: only the all-ones pattern (per sign) is NaN.
    AllOnes,
    /// `fnuz` formats: the negative-zero code is the one NaN.
    NegativeZero,
    /// No NaN at all (float4/float6).
    None,
}

/// The float formats NumPy and ml_dtypes convert natively (in hardware, or bfloat16 by a bit
/// shift): their casts keep NaN payloads as the library does, and the fast kernels have
/// dedicated paths for them. A format's identity is this tag, set by the catalogue
/// (`dtype::float_format`), never its name: a declared format of the same layout is not native.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Native {
    Float16,
    BFloat16,
    Float32,
    Float64,
}

/// A binary floating-point format.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    pub name: String,
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    pub infinities: bool,
    pub nan: NanEncoding,
    /// Has a sign bit (false for float8_e8m0fnu).
    pub signed: bool,
    /// Exponent field 0 encodes subnormals (false for float8_e8m0fnu, where it is 2^-bias).
    pub subnormals: bool,
    /// Storage unit in bytes (sub-byte formats take one byte each, as in ml_dtypes).
    pub storage_bytes: u32,
    /// Which native format this is, if any (the catalogue's float16, bfloat16, float32,
    /// float64).
    pub native: Option<Native>,
}

impl FloatFormat {
    /// A signed format with subnormals (the catalogue's constructor, `dtype::float_format`).
    pub(crate) fn new(
        name: &str,
        e: u32,
        m: u32,
        bias: i32,
        inf: bool,
        nan: NanEncoding,
        storage: u32,
    ) -> FloatFormat {
        FloatFormat {
            name: name.to_string(),
            exponent_bits: e,
            mantissa_bits: m,
            bias,
            infinities: inf,
            nan,
            signed: true,
            subnormals: true,
            storage_bytes: storage,
            native: None,
        }
    }

    /// Significant bits in a pattern.
    pub fn width(&self) -> u32 {
        self.signed as u32 + self.exponent_bits + self.mantissa_bits
    }

    /// Whether the format has a zero (float8_e8m0fnu, powers of two only, has none: a result
    /// that underflows must round to its smallest value, 2^-127, never become zero).
    pub fn has_zero(&self) -> bool {
        matches!(self.decode(0), Value::Finite { mant: 0, .. })
    }

    fn exp_all_ones(&self) -> u64 {
        (1 << self.exponent_bits) - 1
    }

    fn man_all_ones(&self) -> u64 {
        (1u64 << self.mantissa_bits) - 1
    }

    fn sign_bit(&self) -> u64 {
        if self.signed {
            1 << (self.width() - 1)
        } else {
            0
        }
    }

    /// The largest finite pattern's exponent and mantissa fields.
    fn max_fields(&self) -> (u64, u64) {
        match self.nan {
            NanEncoding::Ieee => (self.exp_all_ones() - 1, self.man_all_ones()),
            // All-ones NaN without mantissa bits (float8_e8m0fnu): the NaN takes the top code.
            NanEncoding::AllOnes if self.mantissa_bits == 0 => (self.exp_all_ones() - 1, 0),
            NanEncoding::AllOnes => (self.exp_all_ones(), self.man_all_ones() - 1),
            NanEncoding::NegativeZero | NanEncoding::None => {
                (self.exp_all_ones(), self.man_all_ones())
            }
        }
    }

    /// The NaN a conversion produces (sign kept where the format can hold it); for formats
    /// without NaN, ml_dtypes' zero with the sign bit inverted.
    pub fn canonical_nan(&self, neg: bool) -> u64 {
        let sign = if neg { self.sign_bit() } else { 0 };
        match self.nan {
            NanEncoding::Ieee => {
                let quiet = if self.mantissa_bits > 0 {
                    1 << (self.mantissa_bits - 1)
                } else {
                    0
                };
                sign | self.exp_all_ones() << self.mantissa_bits | quiet
            }
            NanEncoding::AllOnes => {
                sign | self.exp_all_ones() << self.mantissa_bits | self.man_all_ones()
            }
            NanEncoding::NegativeZero => self.sign_bit(),
            NanEncoding::None => {
                if neg {
                    0
                } else {
                    self.sign_bit()
                }
            }
        }
    }

    pub fn max_finite(&self) -> Value {
        let (e, m) = self.max_fields();
        self.decode(e << self.mantissa_bits | m)
    }
}

/// An exact value: NaN, ±∞, or `(-1)^neg × mant × 2^exp` (zero when `mant == 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Nan { neg: bool },
    Inf { neg: bool },
    Finite { neg: bool, mant: u128, exp: i32 },
}

impl Value {
    pub fn zero(neg: bool) -> Value {
        Value::Finite {
            neg,
            mant: 0,
            exp: 0,
        }
    }

    /// The value as an f64 when exactly representable (every value of a format up to float64
    /// is), for display.
    pub fn to_f64(self) -> f64 {
        match self {
            Value::Nan { neg } => {
                if neg {
                    -f64::NAN
                } else {
                    f64::NAN
                }
            }
            Value::Inf { neg } => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Value::Finite { neg, mant, exp } => {
                // Two exact steps, so float64 subnormals (2^-1074) do not underflow.
                let v = mant as f64 * 2f64.powi(exp / 2) * 2f64.powi(exp - exp / 2);
                if neg { -v } else { v }
            }
        }
    }

    /// Exact value of an f64.
    pub fn from_f64(x: f64) -> Value {
        FloatFormat::float64().decode(x.to_bits())
    }

    /// Shortest text that reads back as this value (values of formats up to float64).
    pub fn display(self) -> String {
        match self {
            Value::Nan { neg: false } => "nan".into(),
            Value::Nan { neg: true } => "-nan".into(),
            Value::Inf { neg: false } => "inf".into(),
            Value::Inf { neg: true } => "-inf".into(),
            Value::Finite { neg, mant, exp }
                if exp >= 0 && mant != 0 && mant.leading_zeros() > exp as u32 =>
            {
                // An integer: exact decimal (an f64 would round integers above 2^53).
                format!("{}{}", if neg { "-" } else { "" }, mant << exp)
            }
            v => {
                let x = v.to_f64();
                if x == 0.0 && x.is_sign_negative() {
                    "-0".into()
                } else if x != 0.0 && !(1e-5..1e16).contains(&x.abs()) {
                    format!("{x:e}")
                } else {
                    format!("{x}")
                }
            }
        }
    }
}

impl FloatFormat {
    pub fn float64() -> FloatFormat {
        FloatFormat {
            native: Some(Native::Float64),
            ..FloatFormat::new("float64", 11, 52, 1023, true, NanEncoding::Ieee, 8)
        }
    }

    pub fn float32() -> FloatFormat {
        FloatFormat {
            native: Some(Native::Float32),
            ..FloatFormat::new("float32", 8, 23, 127, true, NanEncoding::Ieee, 4)
        }
    }

    /// Decodes a bit pattern (upper bits beyond the format's width are ignored).
    pub fn decode(&self, bits: u64) -> Value {
        let w = self.width();
        let bits = if w >= 64 { bits } else { bits & ((1 << w) - 1) };
        let neg = self.signed && bits & self.sign_bit() != 0;
        let e = (bits >> self.mantissa_bits) & self.exp_all_ones();
        let m = bits & self.man_all_ones();
        match self.nan {
            NanEncoding::Ieee if e == self.exp_all_ones() => {
                return if m == 0 && self.infinities {
                    Value::Inf { neg }
                } else {
                    Value::Nan { neg }
                };
            }
            NanEncoding::AllOnes if e == self.exp_all_ones() && m == self.man_all_ones() => {
                return Value::Nan { neg };
            }
            NanEncoding::NegativeZero if neg && e == 0 && m == 0 => return Value::Nan { neg },
            _ => {}
        }
        let p = self.mantissa_bits as i32;
        if e == 0 && self.subnormals {
            Value::Finite {
                neg,
                mant: m as u128,
                exp: 1 - self.bias - p,
            }
        } else {
            Value::Finite {
                neg,
                mant: ((1u128 << p) | m as u128),
                exp: e as i32 - self.bias - p,
            }
        }
    }

    /// Encodes an exact value, rounding to nearest, ties to even (float8_e8m0fnu: ties up, as
    /// ml_dtypes), with this format's overflow, NaN and zero rules.
    pub fn encode(&self, v: Value) -> u64 {
        let sign = |neg: bool| if neg { self.sign_bit() } else { 0 };
        match v {
            Value::Nan { neg } => self.canonical_nan(neg),
            Value::Inf { neg } => self.overflow(neg),
            Value::Finite { neg, mant: 0, .. } => {
                if !self.subnormals {
                    self.canonical_nan(neg) // e8m0 has no zero
                } else if self.nan == NanEncoding::NegativeZero {
                    0 // fnuz: a single, unsigned zero
                } else {
                    sign(neg)
                }
            }
            Value::Finite { neg, .. } if neg && !self.signed => self.canonical_nan(true),
            Value::Finite { neg, mant, exp } => {
                if !self.subnormals {
                    return self.encode_e8m0(mant, exp);
                }
                let p = self.mantissa_bits as i32;
                let msb = 127 - mant.leading_zeros() as i32;
                let e_unbiased = msb + exp;
                let emin = 1 - self.bias;
                // Quantum (exponent of one unit in the last place) of the result.
                let q = if e_unbiased < emin {
                    emin - p
                } else {
                    e_unbiased - p
                };
                let mut r = round_shift(mant, q - exp);
                let mut q = q;
                if r >> (p + 1) != 0 {
                    r >>= 1;
                    q += 1;
                }
                if r == 0 {
                    return self.encode(Value::zero(neg));
                }
                let (e_field, m_field) = if r >> p != 0 {
                    ((q + p + self.bias) as i64, (r - (1u128 << p)) as u64)
                } else {
                    (0, r as u64)
                };
                let (emax, mmax) = self.max_fields();
                if e_field > emax as i64 || (e_field == emax as i64 && m_field > mmax) {
                    return self.overflow(neg);
                }
                sign(neg) | (e_field as u64) << self.mantissa_bits | m_field
            }
        }
    }

    /// What a too-large value becomes: ±∞, NaN (`fn`/`fnuz`), or ±max (float4/float6).
    fn overflow(&self, neg: bool) -> u64 {
        if self.infinities {
            let sign = if neg { self.sign_bit() } else { 0 };
            sign | self.exp_all_ones() << self.mantissa_bits
        } else if self.nan == NanEncoding::None {
            let (e, m) = self.max_fields();
            let sign = if neg { self.sign_bit() } else { 0 };
            sign | e << self.mantissa_bits | m
        } else {
            self.canonical_nan(neg)
        }
    }

    /// float8_e8m0fnu: powers of two 2^-127 … 2^127. Ties round up; every value between 2^-127
    /// and 2^-126 becomes 2^-126, and smaller ones 2^-127 (ml_dtypes' float32 rule).
    fn encode_e8m0(&self, mant: u128, exp: i32) -> u64 {
        let msb = 127 - mant.leading_zeros() as i32;
        let k = msb + exp; // 2^k ≤ v < 2^(k+1)
        let exact = mant.count_ones() == 1;
        let emin = -self.bias;
        let e = if k < emin {
            emin
        } else if k == emin {
            if exact { emin } else { emin + 1 }
        } else {
            // Round up when the fraction is at least one half.
            let half = msb >= 1 && (mant >> (msb - 1)) & 1 == 1;
            if half { k + 1 } else { k }
        };
        let field = e + self.bias;
        if field > self.max_fields().0 as i32 {
            self.canonical_nan(false)
        } else {
            field as u64
        }
    }
}

/// `mant × 2^-shift`, rounded to nearest, ties to even (exact when `shift ≤ 0`).
fn round_shift(mant: u128, shift: i32) -> u128 {
    if shift <= 0 {
        return mant << (-shift).min(127);
    }
    if shift >= 128 {
        return 0; // far below half an ulp (mant < 2^128 ≤ 2^(shift-1) × 2)
    }
    let s = shift as u32;
    let kept = mant >> s;
    let rem = mant & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if rem > half || (rem == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

/// Any source format of a cast: a float format, or a two's-complement / unsigned integer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Float(FloatFormat),
    Int { bits: u32, signed: bool },
}

impl Source {
    /// Significant bits of a pattern.
    pub fn width(&self) -> u32 {
        match self {
            Source::Float(f) => f.width(),
            Source::Int { bits, .. } => *bits,
        }
    }

    /// Storage unit in bytes (sub-byte types take one byte, as in ml_dtypes).
    pub fn storage_bytes(&self) -> u32 {
        match self {
            Source::Float(f) => f.storage_bytes,
            Source::Int { bits, .. } => bits.div_ceil(8).next_power_of_two(),
        }
    }

    /// The exact value of a bit pattern (bits above the width are ignored).
    pub fn decode(&self, bits: u64) -> Value {
        match self {
            Source::Float(f) => f.decode(bits),
            Source::Int { bits: w, signed } => {
                let w = *w;
                let raw = if w >= 64 { bits } else { bits & ((1 << w) - 1) };
                let neg = *signed && w > 0 && raw >> (w - 1) & 1 == 1;
                let mag = if neg {
                    // Two's complement magnitude, in 128 bits so i64::MIN is fine.
                    (1u128 << w) - raw as u128
                } else {
                    raw as u128
                };
                Value::Finite {
                    neg,
                    mant: mag,
                    exp: 0,
                }
            }
        }
    }
}

/// An integer or bool destination of a cast. Sub-byte integers are stored in the low bits of
/// one byte each, as ml_dtypes stores them (int4 -1 is `0x0f`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTarget {
    Bool,
    Int { bits: u32, signed: bool },
}

impl IntTarget {
    pub fn storage_bytes(self) -> u32 {
        match self {
            IntTarget::Bool => 1,
            IntTarget::Int { bits, .. } => bits.div_ceil(8).next_power_of_two(),
        }
    }

    /// The value of a stored pattern.
    pub fn decode(self, bits: u64) -> Value {
        match self {
            IntTarget::Bool => Source::Int {
                bits: 1,
                signed: false,
            }
            .decode(bits),
            IntTarget::Int { bits: w, signed } => Source::Int { bits: w, signed }.decode(bits),
        }
    }

    /// Converts one pattern of `src`. bool is `value != 0` (NaN is true). Integers wrap
    /// modulo 2^bits, as NumPy's and ml_dtypes' integer casts do. Floats truncate toward zero;
    /// a result outside the destination's range saturates and NaN becomes 0, as JAX (XLA) and
    /// Rust's `as` define it. NumPy leaves those cases to the C cast, whose result depends on
    /// the source type and the platform (docs/numeric-formats.md); for every in-range value all agree.
    pub fn convert(self, src: &Source, bits: u64) -> u64 {
        self.convert_value(src.decode(bits), matches!(src, Source::Float(_)))
    }

    /// [`IntTarget::convert`] of a value, `from_float` when it is of a float type (which
    /// truncates and saturates) rather than an integer type (which wraps).
    pub fn convert_value(self, v: Value, from_float: bool) -> u64 {
        let (w, signed) = match self {
            IntTarget::Bool => {
                return match v {
                    Value::Finite { mant: 0, .. } => 0,
                    _ => 1,
                };
            }
            IntTarget::Int { bits, signed } => (bits, signed),
        };
        let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let (lo, hi): (i128, i128) = if signed {
            (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
        } else {
            (0, (1i128 << w) - 1)
        };
        let int = match (v, from_float) {
            (Value::Nan { .. }, _) => 0,
            (Value::Inf { neg }, _) => {
                if neg {
                    lo
                } else {
                    hi
                }
            }
            (Value::Finite { neg, mant, exp }, false) => {
                // Wrap: the low bits of the two's complement.
                let m = (mant << exp.max(0)) as i128;
                return (if neg { -m } else { m }) as u64 & mask;
            }
            (Value::Finite { neg, mant, exp }, true) => {
                let whole: u128 = if exp >= 0 {
                    if exp >= 100 || mant.leading_zeros() < exp as u32 + 2 {
                        u128::MAX >> 2 // saturates below
                    } else {
                        mant << exp
                    }
                } else if -exp >= 128 {
                    0
                } else {
                    mant >> -exp
                };
                let whole = whole.min(u128::MAX >> 2) as i128;
                (if neg { -whole } else { whole }).clamp(lo, hi)
            }
        };
        int as u64 & mask
    }
}

/// Converts one bit pattern from `src` to `dst`, as NumPy's `astype` does for finite values
/// (but correctly rounded), and with NumPy's NaN conventions: a cast to the same format copies
/// the bits; NumPy's own casts between float16, float32 and float64 keep the NaN payload
/// (the float32 ↔ float64 hardware conversions also set the quiet bit; narrowing to float16
/// keeps the top payload bits, and a payload that would vanish becomes 1); ml_dtypes widens
/// bfloat16 to float32 by a shift (payload kept) and to float64 through float32; every other
/// cast (ml_dtypes') produces the destination's canonical NaN.
pub fn cast_bits(src: &FloatFormat, dst: &FloatFormat, bits: u64) -> u64 {
    if src == dst {
        return bits;
    }
    let v = src.decode(bits);
    if let Value::Nan { neg } = v
        && let Some(y) = native_nan(src, dst, bits, neg)
    {
        return y;
    }
    dst.encode(v)
}

/// NaN payload propagation of NumPy's native float16/float32/float64 casts, and of
/// ml_dtypes' bfloat16 → float32 (a bit shift) and bfloat16 → float64 (through float32).
fn native_nan(src: &FloatFormat, dst: &FloatFormat, bits: u64, neg: bool) -> Option<u64> {
    use Native::*;
    let (Some(s), Some(d)) = (src.native, dst.native) else {
        return None;
    };
    if s == BFloat16 && matches!(d, Float32 | Float64) {
        let f32f = FloatFormat::float32();
        let widened = bits << 16;
        return if d == Float32 {
            Some(widened)
        } else {
            native_nan(&f32f, dst, widened, neg)
        };
    }
    if s == BFloat16 || d == BFloat16 {
        return None;
    }
    let payload = bits & src.man_all_ones();
    let (sm, dm) = (src.mantissa_bits, dst.mantissa_bits);
    let hardware = s != Float16 && d != Float16;
    let mut m = if sm > dm {
        payload >> (sm - dm)
    } else {
        payload << (dm - sm)
    };
    if hardware {
        m |= 1 << (dm - 1);
    } else if m == 0 {
        m = 1;
    }
    let sign = if neg { dst.sign_bit() } else { 0 };
    Some(sign | dst.exp_all_ones() << dm | m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::dtype::{SMALL_FLOATS, float_format};

    fn fmt(n: &str) -> FloatFormat {
        float_format(n).unwrap()
    }

    fn enc(n: &str, x: f64) -> u64 {
        fmt(n).encode(Value::from_f64(x))
    }

    /// A format's NaN rules follow its identity (`native`), not its name or layout: float32's
    /// NaN with payload 0x12345 keeps its top payload bits into the catalogue's float16
    /// (NumPy), but becomes the canonical NaN in a declared format of float16's layout, and a
    /// declared format called "float16" is not NumPy's either.
    #[test]
    fn nan_rules_follow_the_native_tag_not_the_name() {
        let nan = 0x7f81_2345;
        let f32f = FloatFormat::float32();
        assert_eq!(cast_bits(&f32f, &fmt("float16"), nan), 0x7c09);
        let half = FloatFormat {
            name: "half".into(),
            native: None,
            ..fmt("float16")
        };
        assert_eq!(cast_bits(&f32f, &half, nan), 0x7e00);
        let named = FloatFormat {
            native: None,
            ..fmt("float16")
        };
        assert_eq!(cast_bits(&f32f, &named, nan), 0x7e00);
        assert_eq!(fmt("bfloat16").native, Some(Native::BFloat16));
    }

    #[test]
    fn anchors_of_ml_dtypes() {
        // ANCHORS.md §6, LOCAL confirmations.
        assert_eq!(enc("float8_e4m3fn", 464.0), 0x7e); // 448, tie to even
        assert_eq!(enc("float8_e4m3fn", 465.0), 0x7f); // NaN
        assert_eq!(enc("float8_e4m3fn", f64::INFINITY), 0x7f);
        assert_eq!(
            fmt("float8_e5m2")
                .decode(enc("float8_e5m2", 61439.0))
                .to_f64(),
            57344.0
        );
        assert_eq!(enc("float8_e5m2", 61440.0), 0x7c); // inf
        assert_eq!(enc("float8_e4m3fnuz", -0.0), 0x00);
        assert_eq!(enc("float8_e4m3fnuz", 255.0), 0x80);
        assert_eq!(
            fmt("float4_e2m1fn")
                .decode(enc("float4_e2m1fn", 1000.0))
                .to_f64(),
            6.0
        );
        assert_eq!(enc("float4_e2m1fn", f64::NAN), 0x8);
        assert_eq!(enc("float8_e8m0fnu", -1.0), 0xff);
        assert_eq!(enc("float8_e8m0fnu", 0.0), 0xff);
        assert_eq!(
            fmt("float8_e8m0fnu")
                .decode(enc("float8_e8m0fnu", 0.1))
                .to_f64(),
            0.125
        );
        assert_eq!(
            fmt("float8_e8m0fnu")
                .decode(enc("float8_e8m0fnu", 449.0))
                .to_f64(),
            512.0
        );
        assert_eq!(
            fmt("float8_e8m0fnu")
                .decode(enc("float8_e8m0fnu", 1.5))
                .to_f64(),
            2.0
        );
        assert_eq!(
            fmt("float8_e4m3fn")
                .decode(enc("float8_e4m3fn", 255.0))
                .to_f64(),
            256.0
        );
        // Correct rounding from the exact value, not through float32 (ml_dtypes rounds twice):
        assert_eq!(
            fmt("float8_e4m3fn")
                .decode(enc("float8_e4m3fn", 1.0625 + 2f64.powi(-30)))
                .to_f64(),
            1.125
        );
        assert_eq!(
            fmt("bfloat16")
                .decode(enc("bfloat16", 1.0 + 2f64.powi(-8) + 2f64.powi(-30)))
                .to_f64(),
            1.0078125
        );
    }

    #[test]
    fn round_trips_every_pattern_of_every_small_format() {
        for name in SMALL_FLOATS {
            let f = fmt(name);
            for bits in 0..(1u64 << f.width()) {
                let v = f.decode(bits);
                let back = f.encode(v);
                match v {
                    Value::Nan { .. } => assert_eq!(
                        f.decode(back),
                        f.decode(f.canonical_nan(matches!(v, Value::Nan { neg: true })))
                    ),
                    _ => assert_eq!(back, bits, "{name} {bits:#x}"),
                }
            }
        }
    }

    #[test]
    fn f32_and_f64_agree_with_hardware() {
        let f32f = fmt("float32");
        for x in [
            1.0f64,
            -2.5,
            1e-45,
            3.4028235e38,
            1e-310,
            0.1,
            f64::MAX,
            5e-324,
        ] {
            assert_eq!(
                f32f.encode(Value::from_f64(x)),
                (x as f32).to_bits() as u64,
                "{x}"
            );
            assert_eq!(FloatFormat::float64().decode(x.to_bits()).to_f64(), x);
        }
    }
}
