//! Value-level safety of every promotion: for each edge `a → b` and each join `a ∨ b = j`, what
//! the conversion `a → j` does to `a`'s values: exact, precision loss, overflow, sign loss, or a
//! dropped imaginary part, each with a concrete witness (the smallest in magnitude).
//!
//! Sources of at most 16 bits (a complex one: components of at most 16 bits) are decided by
//! enumerating every value, in bit order, with early stops where the conversion is monotone
//! in the magnitude (see `scan`). Wider sources (int32, int64, float32, float64, complex64,
//! complex128) are first searched on targeted boundary values (powers of two and their
//! neighbours, the destination's rounding and overflow thresholds, extremes), then decided by
//! z3 (`safety::smt`): for each class, z3 proves that no value shows it below the search's
//! witness (so the witness is the smallest), or that none shows it at all, or
//! finds a smaller one, which is then minimised by bisection on the magnitude. Every z3
//! witness is re-checked by the codec. Without z3 (`Engine::Search`, or a build without the
//! feature), a wide conversion is `exact` only when the formats' parameters prove it, and
//! `unknown` when neither a witness nor a proof exists.

// The SMT encoding of a conversion: only z3 reads it.
#[cfg(feature = "z3")]
mod smt;

use serde::Serialize;

use crate::numeric::dtype::float_format;
use crate::numeric::format::{FloatFormat, Source, Value};
use crate::policy::spec::Policy;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Exact,
    PrecisionLoss,
    Overflow,
    SignLoss,
    DropsComponent,
    /// No witness found, and the formats do not prove exactness (wide sources only).
    Unknown,
}

impl Class {
    pub fn key(self) -> &'static str {
        match self {
            Class::Exact => "exact",
            Class::PrecisionLoss => "precision-loss",
            Class::Overflow => "overflow",
            Class::SignLoss => "sign-loss",
            Class::DropsComponent => "drops-component",
            Class::Unknown => "unknown",
        }
    }
}

/// A value and what the conversion makes of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Witness {
    pub value: String,
    pub becomes: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conversion {
    pub from: String,
    pub to: String,
    /// `edge` (a declared promotion) or `join` (a ∨ b = to, with `from` = a).
    pub via: &'static str,
    /// The most severe class found.
    pub class: Class,
    pub witness: Option<Witness>,
    /// Every class found, each with its smallest witness.
    pub all: Vec<(Class, Witness)>,
    /// How the classes were decided.
    pub decided_by: Method,
}

/// How a conversion's classes were decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Every source value was converted, or passed over by a monotone scan's early stops
    /// (sources of at most 16 bits; a complex one's components converted independently).
    Enumeration,
    /// z3 proved each class absent or its witness the smallest.
    Z3,
    /// Exact by the formats' parameters: the destination holds the source's range and
    /// precision (identical formats, int32 → float64, float32 → complex128, …).
    Formats,
    /// Boundary-value search; `exact` only by the formats' parameters.
    Search,
}

impl Method {
    pub fn key(self) -> &'static str {
        match self {
            Method::Enumeration => "enumeration",
            Method::Z3 => "z3",
            Method::Formats => "formats",
            Method::Search => "search",
        }
    }
}

/// Which engine decides conversions of sources wider than 16 bits (a component wider than
/// 16 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Boundary-value search only.
    Search,
    /// Search, then z3 (falls back to the search's answer, marked `search`, when z3 cannot
    /// encode the conversion or gives up).
    Z3,
}

impl Default for Engine {
    /// z3 when this build has it.
    fn default() -> Engine {
        Engine::best()
    }
}

impl Engine {
    /// z3 when this build has it.
    pub fn best() -> Engine {
        if cfg!(feature = "z3") {
            Engine::Z3
        } else {
            Engine::Search
        }
    }
}

/// A dtype's numeric format for value analysis.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Numeric {
    Int { bits: u32, signed: bool },
    Float(FloatFormat),
    Complex(FloatFormat),
}

impl Numeric {
    /// The format of a dtype of `policy`: the catalogue, the policy's `[formats]`, or for a
    /// weak type its `[weak]` materialisation.
    pub fn of(policy: &Policy, i: usize) -> Option<Numeric> {
        let name = policy.dtypes[i].as_str();
        if crate::numeric::dtype::is_weak(name) || name.contains('@') {
            // A weak type by its `[weak]` rule, a category node (`int8@0d`) as its dtype.
            let m = policy.materialise(i)?;
            return if m == i { None } else { Numeric::of(policy, m) };
        }
        if let Some(o) = policy.other_formats.iter().find(|f| f.dtype == i) {
            return match &o.kind {
                crate::policy::spec::OtherKind::Int { bits, signed } => Some(Numeric::Int {
                    bits: *bits,
                    signed: *signed,
                }),
                crate::policy::spec::OtherKind::Complex { of } => {
                    let c = policy.dtypes.iter().position(|d| d == of);
                    match c.and_then(|c| Numeric::of(policy, c)) {
                        Some(Numeric::Float(f)) => Some(Numeric::Complex(f)),
                        _ => float_format(of).map(Numeric::Complex),
                    }
                }
            };
        }
        if let Some(decl) = policy.formats.iter().find(|f| f.dtype == i) {
            return Some(Numeric::Float(FloatFormat {
                name: name.to_string(),
                exponent_bits: decl.exponent_bits,
                mantissa_bits: decl.mantissa_bits,
                bias: decl.bias,
                infinities: decl.infinities,
                nan: decl.nan,
                signed: true,
                subnormals: true,
                storage_bytes: (1 + decl.exponent_bits + decl.mantissa_bits)
                    .div_ceil(8)
                    .next_power_of_two(),
                // A declared format never takes a catalogue name (the loader refuses it).
                native: None,
            }));
        }
        Numeric::named(name)
    }

    /// The format of a catalogue dtype by name (a category node, `int8@0d`, as its dtype);
    /// `None` for a weak type, an opaque one or a name the catalogue does not know.
    pub fn named(name: &str) -> Option<Numeric> {
        let name = crate::numeric::dtype::split_category(name).0;
        if crate::numeric::dtype::is_weak(name) {
            return None;
        }
        match name {
            "complex32" => return Some(Numeric::Complex(float_format("float16")?)),
            "bcomplex32" => return Some(Numeric::Complex(float_format("bfloat16")?)),
            "complex64" => return Some(Numeric::Complex(float_format("float32")?)),
            "complex128" => return Some(Numeric::Complex(float_format("float64")?)),
            _ => {}
        }
        match Source::named(name)? {
            Source::Float(f) => Some(Numeric::Float(f)),
            Source::Int { bits, signed } => Some(Numeric::Int { bits, signed }),
        }
    }

    /// The classes of what converting a dtype named `from` to one named `to` does to values
    /// (every class found, [`classify`]'s search); `None` when either has no format (a weak or
    /// opaque type, a name outside the catalogue).
    pub fn classes_between(from: &str, to: &str) -> Option<Vec<Class>> {
        let (f, t) = (Numeric::named(from)?, Numeric::named(to)?);
        let (class, all, _) = classify(&f, &t, Engine::Search);
        let mut out: Vec<Class> = all.iter().map(|(c, _)| *c).collect();
        if out.is_empty() {
            out.push(class);
        }
        Some(out)
    }

    /// Whether converting `from` to `to` (catalogue names) loses values: some class found is
    /// neither exact nor unknown. A dtype without a format loses nothing it can be shown to.
    pub fn loses_values(from: &str, to: &str) -> bool {
        Numeric::classes_between(from, to).is_some_and(|c| {
            c.iter()
                .any(|c| !matches!(c, Class::Exact | Class::Unknown))
        })
    }

    /// The width in bits (a complex number's two parts together).
    pub fn width(&self) -> u32 {
        match self {
            Numeric::Int { bits, .. } => *bits,
            Numeric::Float(f) => f.width(),
            Numeric::Complex(f) => 2 * f.width(),
        }
    }
}

/// Exact rational `num / 2^k` comparisons are done on `Value`s converted to (sign, mant, exp).
fn to_parts(v: Value) -> Option<(bool, u128, i32)> {
    match v {
        Value::Finite { neg, mant, exp } => Some((neg, mant, exp)),
        _ => None,
    }
}

/// `|a| < |b|` for finite values.
fn mag_lt(a: Value, b: Value) -> bool {
    match (to_parts(a), to_parts(b)) {
        (Some((_, ma, ea)), Some((_, mb, eb))) => {
            if ma == 0 || mb == 0 {
                return ma == 0 && mb != 0;
            }
            // Position of the top bit decides, unless equal; then aligning the operand with
            // the larger exponent cannot overflow (it ends with the other's bit length).
            let top = |m: u128, e: i32| (128 - m.leading_zeros()) as i64 + e as i64;
            let (ta, tb) = (top(ma, ea), top(mb, eb));
            if ta != tb {
                return ta < tb;
            }
            if ea >= eb {
                (ma << (ea - eb)) < mb
            } else {
                ma < (mb << (eb - ea))
            }
        }
        _ => false,
    }
}

fn same_value(a: Value, b: Value) -> bool {
    match (to_parts(a), to_parts(b)) {
        (Some((na, ma, _)), Some((nb, mb, _))) => {
            if ma == 0 && mb == 0 {
                return true;
            }
            if na != nb || ma == 0 || mb == 0 {
                return false;
            }
            !mag_lt(a, b) && !mag_lt(b, a)
        }
        _ => a == b,
    }
}

/// What one finite source value becomes, and the class of that change.
pub fn classify_value(v: Value, from: &Numeric, to: &Numeric) -> (Class, Value) {
    let neg = matches!(v, Value::Finite { neg: true, mant, .. } if mant != 0);
    match to {
        Numeric::Int { bits, signed } => {
            // The codec's integer casts (`IntTarget::convert`, docs/numeric-formats.md): an integer
            // wraps (two's complement, as NumPy's astype); a float truncates toward zero and,
            // outside the type's range, saturates (as JAX and Rust's `as`). The class is the
            // truncated value's: in the range, exact or (a fraction dropped) rounded; outside
            // it, the sign lost (a negative into an unsigned type) or an overflow.
            let (_, mant, exp) = to_parts(v).expect("finite");
            // The truncated magnitude, unless it is 2^128 or more (out of every range).
            let huge = exp >= 0 && (exp >= 128 || mant.leading_zeros() < exp as u32);
            let mag = if exp >= 0 {
                if huge { 0 } else { mant << exp }
            } else if -exp >= 128 {
                0
            } else {
                mant >> (-exp)
            };
            let target = crate::numeric::format::IntTarget::Int {
                bits: *bits,
                signed: *signed,
            };
            let float = matches!(from, Numeric::Float(_) | Numeric::Complex(_));
            let back = target.decode(target.convert_value(v, float));
            let half = 1u128 << (bits - 1);
            let fits = !huge
                && match (neg, signed) {
                    (false, true) => mag < half,
                    (false, false) => mag < 1u128 << bits,
                    (true, true) => mag <= half,
                    (true, false) => mag == 0,
                };
            let class = if fits {
                let fraction = match -exp {
                    k if k <= 0 => 0,
                    k if k >= 128 => mant,
                    k => mant & ((1u128 << k) - 1),
                };
                if fraction != 0 {
                    Class::PrecisionLoss
                } else {
                    Class::Exact
                }
            } else if neg && !signed {
                Class::SignLoss
            } else {
                Class::Overflow
            };
            (class, back)
        }
        Numeric::Float(f) | Numeric::Complex(f) => {
            let back = f.decode(f.encode(v));
            let class = match back {
                _ if same_value(v, back) => Class::Exact,
                Value::Nan { .. } if neg && !f.signed => Class::SignLoss,
                Value::Nan { .. } | Value::Inf { .. } => Class::Overflow,
                // Clamped (float4/float6 saturate): it would have rounded beyond the maximum
                // (or, far beyond it, out of the wider format's range altogether).
                Value::Finite { .. }
                    if f.nan == crate::numeric::format::NanEncoding::None
                        && match unbounded(f, v) {
                            u @ Value::Finite { .. } => mag_lt(f.max_finite(), u),
                            _ => true,
                        } =>
                {
                    Class::Overflow
                }
                Value::Finite { .. } => Class::PrecisionLoss,
            };
            (class, back)
        }
    }
}

/// `v` rounded to `f`'s precision with an unbounded exponent range above (one more exponent
/// bit, same bias, so the same subnormals).
fn unbounded(f: &FloatFormat, v: Value) -> Value {
    let wide = FloatFormat {
        exponent_bits: f.exponent_bits + 1,
        native: None,
        infinities: true,
        nan: crate::numeric::format::NanEncoding::Ieee,
        ..f.clone()
    };
    wide.decode(wide.encode(v))
}

/// The real format of a complex one's components; others unchanged.
fn component(n: &Numeric) -> Numeric {
    match n {
        Numeric::Complex(f) => Numeric::Float(f.clone()),
        other => other.clone(),
    }
}

/// The values of a source a classification reads, in the source's bit order: positions
/// `0..positives` hold the values without a sign bit, in increasing magnitude, and the rest
/// the negative ones (a float's in increasing magnitude from -0, a two's-complement integer's
/// from the most negative up to -1). Positions may hold infinities and NaNs (at the top of the
/// positives, or the first negative of a `fnuz` format), which are skipped.
enum Values<'a> {
    /// Every pattern of a format of at most 16 bits.
    Every(&'a Numeric),
    /// Some patterns of a format (a wide source's boundary values), ascending when a scan is
    /// sorted.
    Patterns(&'a Numeric, &'a [u64]),
    /// A wide float's boundary values, each pattern computed when read (see [`Boundary`]).
    FloatBoundary(&'a Numeric, FloatBoundary),
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Every(n) => 1 << n.width(),
            Values::Patterns(_, p) => p.len(),
            Values::FloatBoundary(_, b) => b.len(),
        }
    }

    /// The format the values are of.
    fn source(&self) -> &Numeric {
        match self {
            Values::Every(n) | Values::Patterns(n, _) | Values::FloatBoundary(n, _) => n,
        }
    }

    fn positives(&self) -> usize {
        match self {
            Values::Every(n) => first_negative(n) as usize,
            Values::Patterns(n, p) => {
                let first = first_negative(n);
                p.partition_point(|&b| u128::from(b) < first)
            }
            Values::FloatBoundary(_, b) => b.positives(),
        }
    }

    fn get(&self, i: usize) -> Value {
        match self {
            Values::Every(n) => decode(n, i as u64),
            Values::Patterns(n, p) => decode(n, p[i]),
            Values::FloatBoundary(n, b) => decode(n, b.pattern(i)),
        }
    }
}

/// The first pattern of a real format with its sign bit set (past the last pattern when it
/// has none).
fn first_negative(n: &Numeric) -> u128 {
    match n {
        &Numeric::Int { bits, signed } => 1u128 << (bits - u32::from(signed)),
        Numeric::Float(f) => 1u128 << (f.width() - u32::from(f.signed)),
        Numeric::Complex(_) => unreachable!("components are real"),
    }
}

/// The value of a pattern of a real format.
fn decode(n: &Numeric, bits: u64) -> Value {
    match n {
        &Numeric::Int { bits: w, signed } => Source::Int { bits: w, signed }.decode(bits),
        Numeric::Float(f) => f.decode(bits),
        Numeric::Complex(_) => unreachable!("components are real"),
    }
}

/// A wide source's boundary values, ascending in the source's bit order: an integer's powers
/// of two and their neighbours, either sign (listed once per process); a float's smallest,
/// largest, middle and next-to-middle significands at every exponent, either sign (computed
/// from their position when read: float64 has 24,576 of them, and a sorted scan reads a few).
enum Boundary {
    Int(std::sync::Arc<Vec<u64>>),
    Float(FloatBoundary),
}

impl Boundary {
    fn of(src: &Numeric) -> Boundary {
        match src {
            &Numeric::Int { bits, signed } => Boundary::Int(int_boundary_patterns(bits, signed)),
            Numeric::Float(f) => Boundary::Float(FloatBoundary::of(f)),
            Numeric::Complex(_) => unreachable!("components are real"),
        }
    }

    fn values<'a>(&'a self, src: &'a Numeric) -> Values<'a> {
        match self {
            Boundary::Int(p) => Values::Patterns(src, p),
            Boundary::Float(b) => Values::FloatBoundary(src, *b),
        }
    }
}

/// The boundary patterns of a float format, by position: sign, then exponent field, then
/// significand (bit order).
#[derive(Clone, Copy, Debug)]
struct FloatBoundary {
    /// The significands read at every exponent, ascending (the first `count` entries).
    significands: [u64; 6],
    count: usize,
    mantissa_bits: u32,
    exponents: usize,
    /// The sign bit, or none for an unsigned format.
    sign: Option<u64>,
}

impl FloatBoundary {
    fn of(f: &FloatFormat) -> FloatBoundary {
        let p = f.mantissa_bits;
        let mut significands = [0u64; 6];
        let mut count = 1;
        if p > 0 {
            let mut all = [0, 1, 2, (1 << p) - 1, 1 << (p - 1), (1 << (p - 1)) + 1];
            all.sort_unstable();
            count = 0;
            for m in all {
                if m >> p == 0 && (count == 0 || significands[count - 1] != m) {
                    significands[count] = m;
                    count += 1;
                }
            }
        }
        FloatBoundary {
            significands,
            count,
            mantissa_bits: p,
            exponents: 1 << f.exponent_bits,
            sign: f.signed.then(|| 1 << (f.width() - 1)),
        }
    }

    fn positives(&self) -> usize {
        self.exponents * self.count
    }

    fn len(&self) -> usize {
        self.positives() * if self.sign.is_some() { 2 } else { 1 }
    }

    fn pattern(&self, i: usize) -> u64 {
        let (negative, i) = (i >= self.positives(), i % self.positives());
        let sign = if negative { self.sign.unwrap_or(0) } else { 0 };
        let (e_field, m) = (i / self.count, self.significands[i % self.count]);
        sign | (e_field as u64) << self.mantissa_bits | m
    }
}

/// A wide integer type's boundary patterns, ascending, computed once per process.
fn int_boundary_patterns(w: u32, signed: bool) -> std::sync::Arc<Vec<u64>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Cache = Mutex<HashMap<(u32, bool), Arc<Vec<u64>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(w, signed))
    {
        return hit.clone();
    }
    let mut mags: Vec<u128> = vec![0, 1, 2, 3];
    for k in 1..=w - u32::from(signed) {
        let p = 1u128 << k;
        mags.extend([p - 2, p - 1, p, p + 1, p + 2]);
    }
    let mut bits = int_patterns(w, signed, mags);
    bits.sort_unstable();
    bits.dedup();
    let bits = Arc::new(bits);
    let mut known = cache.lock().unwrap_or_else(|e| e.into_inner());
    known.entry((w, signed)).or_insert(bits).clone()
}

/// The patterns of the integers ±m of a `w`-bit integer type, for each magnitude m it holds.
fn int_patterns(w: u32, signed: bool, mags: impl IntoIterator<Item = u128>) -> Vec<u64> {
    let max = (1u128 << (w - u32::from(signed))) - 1;
    let mut bits = Vec::new();
    for m in mags {
        if m <= max {
            bits.push(m as u64);
        }
        if signed && (1..=max + 1).contains(&m) {
            // Two's complement of -m.
            bits.push(((1u128 << w) - m) as u64);
        }
    }
    bits
}

/// The patterns of a wide source next to `to`'s thresholds (where rounding and overflow
/// start): the integers at and on either side of them, or a float source's nearest values.
fn threshold_patterns(src: &Numeric, to: &Numeric) -> Vec<u64> {
    match src {
        &Numeric::Int { bits, signed } => {
            let mut mags: Vec<u128> = Vec::new();
            for t in thresholds(to) {
                if let Value::Finite { mant, exp, .. } = t {
                    if exp >= 0 && mant.leading_zeros() > exp as u32 {
                        // A tie may round either way: try both neighbours.
                        let t = mant << exp;
                        mags.extend([t - 1, t, t + 1]);
                    } else if exp < 0 && -exp < 128 {
                        let whole = mant >> -exp;
                        mags.extend([whole, whole + 1]);
                    }
                }
            }
            int_patterns(bits, signed, mags)
        }
        // Thresholds snapped to the source: the nearest source value and its neighbours.
        Numeric::Float(f) => thresholds(to)
            .into_iter()
            .flat_map(|t| {
                let near = f.encode(t);
                [near.wrapping_sub(1), near, near + 1]
            })
            .filter(|b| b >> (f.width() - 1) == 0)
            .collect(),
        Numeric::Complex(_) => unreachable!("components are real"),
    }
}

/// Values where a conversion into `to` starts to lose: the first inexact integer `2^p + 1`
/// and the overflow threshold `max + ulp/2` of a float; the range ends of an integer.
fn thresholds(to: &Numeric) -> Vec<Value> {
    let int = |m: u128| Value::Finite {
        neg: false,
        mant: m,
        exp: 0,
    };
    match to {
        Numeric::Float(f) | Numeric::Complex(f) => {
            let mut t = Vec::new();
            if f.mantissa_bits < 120 {
                let p = 1u128 << (f.mantissa_bits + 1);
                t.extend([int(p + 1), int(p + 3)]);
            }
            if let Value::Finite { mant, exp, .. } = f.max_finite() {
                // max + ulp/2 = (2·mant + 1) · 2^(exp-1)
                t.push(Value::Finite {
                    neg: false,
                    mant: 2 * mant + 1,
                    exp: exp - 1,
                });
                t.push(f.max_finite());
            }
            t
        }
        Numeric::Int { bits, .. } => {
            let b = (*bits).min(126);
            vec![
                int((1u128 << b) - 1),
                int(1u128 << b),
                int((1u128 << b) + 1),
            ]
        }
    }
}

/// Whether the formats alone prove `from → to` exact (used for wide sources).
fn provably_exact(from: &Numeric, to: &Numeric) -> bool {
    match (from, to) {
        (
            Numeric::Int { bits, signed },
            Numeric::Int {
                bits: b2,
                signed: s2,
            },
        ) => (signed == s2 && bits <= b2) || (!signed && *s2 && bits < b2),
        (Numeric::Int { bits, signed }, Numeric::Float(f) | Numeric::Complex(f)) => {
            let mag_bits = bits - *signed as u32; // |v| < 2^mag_bits (≤ for the signed minimum)
            mag_bits <= f.mantissa_bits + 1 && (mag_bits as i32) <= max_exponent(f)
        }
        (Numeric::Float(a) | Numeric::Complex(a), Numeric::Float(b) | Numeric::Complex(b)) => {
            if matches!((from, to), (Numeric::Complex(_), Numeric::Float(_))) {
                return false;
            }
            b.mantissa_bits >= a.mantissa_bits
                && max_exponent(b) >= max_exponent(a)
                && min_exponent(b) <= min_exponent(a)
                && (b.infinities || !a.infinities)
        }
        _ => false,
    }
}

/// Exponent of the largest finite value's top bit.
fn max_exponent(f: &FloatFormat) -> i32 {
    match f.max_finite() {
        Value::Finite { mant, exp, .. } => 127 - mant.leading_zeros() as i32 + exp,
        _ => i32::MIN,
    }
}

/// Exponent of the smallest positive value.
fn min_exponent(f: &FloatFormat) -> i32 {
    match f.decode(1) {
        Value::Finite { exp, .. } => exp,
        _ => i32::MAX,
    }
}

/// The values a target represents exactly, as a test cheaper than the codec's round trip
/// (most of an enumeration's values convert exactly). A float format with a sign and
/// subnormals (where that grid is the whole story): at most `precision` significant bits, none
/// below the smallest subnormal, no magnitude above the largest finite value. An integer
/// type: whole numbers in its range.
enum Grid {
    Float {
        precision: u32,
        lsb: i32,
        max: Value,
    },
    Int {
        bits: u32,
        signed: bool,
    },
}

impl Grid {
    fn of(to: &Numeric) -> Option<Grid> {
        match to {
            Numeric::Float(f) | Numeric::Complex(f) if f.signed && f.subnormals => {
                Some(Grid::Float {
                    precision: f.mantissa_bits + 1,
                    lsb: min_exponent(f),
                    max: f.max_finite(),
                })
            }
            &Numeric::Int { bits, signed } if bits < 128 => Some(Grid::Int { bits, signed }),
            _ => None,
        }
    }

    /// `v` is finite and exactly representable (so [`classify_value`] calls it exact).
    fn holds(&self, v: Value) -> bool {
        let Value::Finite { neg, mant, exp } = v else {
            return false;
        };
        if mant == 0 {
            return true;
        }
        let tz = mant.trailing_zeros();
        let (top, low) = (128 - mant.leading_zeros() as i32 + exp, tz as i32 + exp);
        match *self {
            Grid::Float {
                precision,
                lsb,
                max,
            } => (top - low) as u32 <= precision && low >= lsb && !mag_lt(max, v),
            Grid::Int { bits, signed } => {
                // A whole number (no bit below 2^0) below 2^bits, then the range.
                if low < 0 || top > bits as i32 {
                    return false;
                }
                let mag = if exp >= 0 { mant << exp } else { mant >> -exp };
                let limit = 1u128 << (bits - u32::from(signed));
                match (signed, neg) {
                    (false, true) => false,
                    (false, false) => true,
                    (true, false) => mag < limit,
                    (true, true) => mag <= limit,
                }
            }
        }
    }
}

/// Each class found, with its smallest witness and what it becomes.
pub type Found = std::collections::BTreeMap<Class, (Value, Value)>;

/// Classifies the conversion of every value of `from` into `to`.
pub fn classify(
    from: &Numeric,
    to: &Numeric,
    engine: Engine,
) -> (Class, Vec<(Class, Witness)>, Method) {
    let (mut best, exhaustive) = search(from, to, true);
    let mut method = if exhaustive {
        Method::Enumeration
    } else {
        Method::Search
    };
    if !exhaustive && best.is_empty() && provably_exact(from, to) {
        method = Method::Formats;
    } else if !exhaustive
        && engine == Engine::Z3
        && let Some(proved) = prove_cached(from, to, &best)
    {
        best = proved;
        method = Method::Z3;
    }
    if let (Numeric::Complex(_), Numeric::Int { .. } | Numeric::Float(_)) = (from, to) {
        let one = Value::Finite {
            neg: false,
            mant: 1,
            exp: 0,
        };
        best.insert(Class::DropsComponent, (one, Value::zero(false)));
    }
    let all: Vec<(Class, Witness)> = best
        .iter()
        .map(|(c, (v, b))| {
            let value = if *c == Class::DropsComponent {
                "1j".to_string()
            } else {
                v.display()
            };
            let becomes = if *c == Class::DropsComponent {
                "0".to_string()
            } else {
                b.display()
            };
            (*c, Witness { value, becomes })
        })
        .collect();
    let class = match all.iter().map(|(c, _)| *c).max() {
        Some(c) => c,
        None if method != Method::Search => Class::Exact,
        None => Class::Unknown,
    };
    (class, all, method)
}

/// The smallest witness of each class among the values of `from` (a complex one's components)
/// converted into `to`: every value of a source of at most 16 bits (then `true`), boundary
/// values of a wider one. With `shortcuts`, a scan in the source's bit order reads a handful
/// of them where the conversion is monotone (see [`scan`]); without, every one.
fn search(from: &Numeric, to: &Numeric, shortcuts: bool) -> (Found, bool) {
    let src = component(from);
    let sorted = shortcuts.then(|| Sorted::of(&src, to)).flatten();
    if src.width() <= 16 {
        return (scan(&Values::Every(&src), to, sorted), true);
    }
    let base = Boundary::of(&src);
    let mut best = scan(&base.values(&src), to, sorted);
    let extra = threshold_patterns(&src, to);
    let more = scan(&Values::Patterns(&src, &extra), to, None);
    for (class, (v, back)) in more {
        if best.get(&class).is_none_or(|(w, _)| mag_lt(v, *w)) {
            best.insert(class, (v, back));
        }
    }
    (best, false)
}

/// When a scan in a source's bit order may stop early (see [`scan`]).
#[derive(Clone, Copy, Debug)]
struct Sorted {
    /// Read the values below the first overflow until the first inexact one (not needed
    /// when none can be inexact: an integer into an integer type, or formats that prove the
    /// conversion exact).
    linear: bool,
    /// Find the first negative that loses its sign by bisection (a float into an unsigned
    /// integer type: a negative truncated to zero only loses its fraction, one of magnitude
    /// 1 or more saturates to 0).
    sign_threshold: bool,
}

impl Sorted {
    /// Into a float format (signed or not), from an integer into an integer type, or from a
    /// float into an integer type: there a value's class follows from its magnitude
    /// monotonically (see [`scan`]).
    fn of(src: &Numeric, to: &Numeric) -> Option<Sorted> {
        let sorted = |linear, sign_threshold| {
            Some(Sorted {
                linear,
                sign_threshold,
            })
        };
        match (src, component(to)) {
            (_, Numeric::Float(_)) => sorted(!provably_exact(src, to), false),
            (Numeric::Int { .. }, Numeric::Int { .. }) => sorted(false, false),
            (Numeric::Float(_), Numeric::Int { signed, .. }) => sorted(true, !signed),
            _ => None,
        }
    }
}

/// The smallest witness of each class among `values` converted into `to`.
///
/// With `sorted`, the scan reads a handful of values. Positive values convert monotonically in
/// their magnitude into a float format (rounding is monotone) and into an integer type (an
/// integer wraps, a float truncates and saturates): exact, or rounded, up to a first overflow
/// above which every value overflows. So past zero (which may be special: `float8_e8m0fnu`
/// has none) the first overflow is found by bisection and the smallest rounded value is the
/// first inexact one below it. A negative value converts as its magnitude does into a signed
/// format (rounding and truncation are symmetric; an integer type holds one more negative), so
/// only the first negative can have a magnitude no positive value has (-2^(b-1) of an integer,
/// -0 of a float); into an unsigned float format, or from an integer into an unsigned integer
/// type, every nonzero negative loses its sign, so the one of smallest magnitude is the
/// witness (the last of an integer's, the second of a float's). So the first two and the last
/// negatives are read. A float into an unsigned integer type loses the sign from magnitude 1
/// up (below it, truncation leaves 0 and drops a fraction): that first negative is found by
/// bisection. `tests::the_shortcuts_of_a_scan_change_no_witness` holds it to the whole scan on
/// every pair of catalogue formats and declarable layouts.
fn scan(values: &Values, to: &Numeric, sorted: Option<Sorted>) -> Found {
    let mut best: Found = Default::default();
    let grid = Grid::of(to);
    let mut record = |v: Value| {
        if !matches!(v, Value::Finite { .. }) {
            return None;
        }
        if grid.as_ref().is_some_and(|g| g.holds(v)) {
            return Some(Class::Exact);
        }
        let (class, back) = classify_value(v, values.source(), to);
        if class != Class::Exact && best.get(&class).is_none_or(|(w, _)| mag_lt(v, *w)) {
            best.insert(class, (v, back));
        }
        Some(class)
    };
    let len = values.len();
    let Some(Sorted {
        linear,
        sign_threshold,
    }) = sorted
    else {
        for i in 0..len {
            record(values.get(i));
        }
        return best;
    };
    let positives = values.positives();
    if positives > 0 {
        record(values.get(0));
    }
    // The first position past zero that overflows (or holds an infinity or NaN).
    let fits = |v: Value| match v {
        Value::Finite { .. } => {
            grid.as_ref().is_some_and(|g| g.holds(v))
                || classify_value(v, values.source(), to).0 != Class::Overflow
        }
        _ => false,
    };
    let below = first_not(1.min(positives), positives, |i| fits(values.get(i)));
    if linear {
        for i in 1..below {
            if record(values.get(i)) == Some(Class::PrecisionLoss) {
                break;
            }
        }
    }
    if below < positives {
        record(values.get(below));
    }
    let mut negatives = [positives, positives + 1, len.saturating_sub(1)];
    negatives.sort_unstable();
    let mut last = None;
    for i in negatives {
        if i >= positives && i < len && last != Some(i) {
            record(values.get(i));
            last = Some(i);
        }
    }
    if sign_threshold {
        // Past -0 (or a `fnuz` format's NaN there): the first negative that loses its sign.
        let keeps_sign = |v: Value| {
            matches!(v, Value::Finite { .. })
                && classify_value(v, values.source(), to).0 != Class::SignLoss
        };
        let first = first_not((positives + 1).min(len), len, |i| keeps_sign(values.get(i)));
        if first < len {
            record(values.get(first));
        }
    }
    best
}

/// The first position of `lo..hi` where `holds` fails, by bisection (`hi` when it holds
/// throughout): `holds` must hold on a prefix of the range and fail on the rest.
fn first_not(mut lo: usize, mut hi: usize, holds: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// z3's answer for a wide conversion, remembered per process: policies share most of them.
fn prove_cached(from: &Numeric, to: &Numeric, found: &Found) -> Option<Found> {
    #[cfg(feature = "z3")]
    {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        type Cache = Mutex<HashMap<(Numeric, Numeric), Option<Found>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = (component(from), component(to));
        if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return hit.clone();
        }
        let answer = prove(from, to, found).ok();
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, answer.clone());
        answer
    }
    #[cfg(not(feature = "z3"))]
    {
        let _ = (from, to, found);
        None
    }
}

/// Decides every class of a wide conversion with z3, starting from the search's witnesses:
/// each is proved the smallest, or replaced by a smaller one z3 finds; a class the search
/// missed is proved absent or found. `Err` when z3 cannot encode the conversion, gives up, or
/// a witness disagrees with the codec.
#[cfg(feature = "z3")]
pub fn prove(from: &Numeric, to: &Numeric, found: &Found) -> Result<Found, String> {
    use crate::smt::solve::{Verdict, Z3Options, solve};
    let (from, to) = (component(from), component(to));
    let enc = crate::safety::smt::Encoding::new(&from, &to)
        .ok_or_else(|| "z3 cannot encode this conversion".to_string())?;
    if let Some(c) = found.keys().find(|c| !enc.classes().contains(c)) {
        return Err(format!(
            "the search found {} the encoding rules out",
            c.key()
        ));
    }
    // A model's witness, re-checked by the codec.
    let model = |class: Class, below: Option<u128>| -> Result<Option<(Value, Value)>, String> {
        match solve(
            &enc.script(class, below),
            &["x"],
            enc.width,
            Z3Options::default(),
        ) {
            Verdict::Holds => Ok(None),
            Verdict::Violated { witnesses, .. } => {
                let v = enc.decode(witnesses[0][0] as u64);
                let (c, back) = classify_value(v, &from, &to);
                if c != class {
                    return Err(format!(
                        "z3's {} witness {} is {} by the codec",
                        class.key(),
                        v.display(),
                        c.key()
                    ));
                }
                Ok(Some((v, back)))
            }
            Verdict::Unknown(reason) => Err(reason),
        }
    };
    let mut out = Found::new();
    for class in enc.classes() {
        let known = found.get(&class).copied();
        let bound = known.map(|(v, _)| enc.magnitude(v));
        let Some(mut best) = model(class, bound)?.or(known) else {
            continue; // proved absent
        };
        if known.is_none_or(|k| k.0 != best.0) {
            // z3 found a witness the search did not: bisect on the magnitude.
            let (mut lo, mut hi) = (0u128, enc.magnitude(best.0));
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match model(class, Some(mid + 1))? {
                    Some(w) => {
                        hi = enc.magnitude(w.0);
                        best = w;
                    }
                    None => lo = mid + 1,
                }
            }
        }
        // Of the two signs at the smallest magnitude, prefer the positive value.
        let in_range = |mant: u128| match from {
            Numeric::Int { bits, signed: true } => mant < 1u128 << (bits - 1),
            _ => true,
        };
        if let Value::Finite {
            neg: true,
            mant,
            exp,
        } = best.0
            && in_range(mant)
        {
            let pos = Value::Finite {
                neg: false,
                mant,
                exp,
            };
            let (c, back) = classify_value(pos, &from, &to);
            if c == class {
                best = (pos, back);
            }
        }
        out.insert(class, best);
    }
    Ok(out)
}

/// What [`classify`] returns.
type Classified = (Class, Vec<(Class, Witness)>, Method);

/// The cache key of a format: its structure. A policy's own `[formats]` differ by name only
/// (`t3`, `t4`, … may share a layout), and only catalogue names change a conversion's result
/// (NumPy's NaN payload rules for float16/float32/float64 and bfloat16), so other names are
/// blanked: a thousand declared dtypes of a dozen layouts are a dozen formats.
fn structural(n: &Numeric) -> Numeric {
    let blank = |f: &FloatFormat| {
        if float_format(&f.name).is_some() {
            f.clone()
        } else {
            FloatFormat {
                name: String::new(),
                ..f.clone()
            }
        }
    };
    match n {
        Numeric::Int { .. } => n.clone(),
        Numeric::Float(f) => Numeric::Float(blank(f)),
        Numeric::Complex(f) => Numeric::Complex(blank(f)),
    }
}

/// [`classify`] of every pair of `pairs` (indices into `formats`), each distinct
/// (source format, target format, engine) classified once per process: a policy's pairs share
/// few formats, and the policies and files of one run (`check lattices`, `docs`, `suggest`'s
/// candidates) share most of them. The misses run on rayon's pool: they are independent, and
/// z3's each get a context.
/// Fewer searches than this run on the calling thread (see [`classify_all`]).
const PARALLEL_SEARCHES: usize = 1024;

fn classify_all(
    formats: &[Numeric],
    pairs: &[(usize, usize)],
    engine: Engine,
) -> Vec<std::sync::Arc<Classified>> {
    use rayon::prelude::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Key = (Numeric, Numeric, Engine);
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Classified>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = |&(f, t): &(usize, usize)| (formats[f].clone(), formats[t].clone(), engine);
    let missing: Vec<Key> = {
        let known = cache.lock().unwrap_or_else(|e| e.into_inner());
        pairs
            .iter()
            .map(key)
            .filter(|k| !known.contains_key(k))
            .collect()
    };
    let classified = |k: Key| {
        let c = classify(&k.0, &k.1, engine);
        (k, Arc::new(c))
    };
    // A search takes a few microseconds: a policy's few hundred cost less than waking rayon's
    // pool (threads spawned on first use), which z3's proofs and thousands of searches repay.
    let found: Vec<(Key, Arc<Classified>)> =
        if engine == Engine::Search && missing.len() < PARALLEL_SEARCHES {
            missing.into_iter().map(classified).collect()
        } else {
            missing.into_par_iter().map(classified).collect()
        };
    let mut known = cache.lock().unwrap_or_else(|e| e.into_inner());
    known.extend(found);
    pairs.iter().map(|p| known[&key(p)].clone()).collect()
}

/// Every conversion of a policy, each (a, a ∨ b) pair once, in declaration order (edges
/// first, then joins row by row), given to `f` as (a, j, via, classification); the
/// classifications are computed per distinct pair of formats before the first call, and the
/// pairs are streamed, not collected: a 10,000-node chain has 50 million of them.
fn each_conversion(
    policy: &Policy,
    table: &crate::Table,
    engine: Engine,
    mut f: impl FnMut(usize, usize, &'static str, &Classified),
) {
    use std::collections::HashMap;
    // Each node's format, as an index into the distinct (structural) formats.
    let mut formats: Vec<Numeric> = Vec::new();
    let mut index: HashMap<Numeric, usize> = HashMap::new();
    let of: Vec<Option<usize>> = (0..policy.dtypes.len())
        .map(|i| {
            // A weak type without a materialisation has no values to analyse.
            let n = structural(&Numeric::of(policy, i)?);
            Some(*index.entry(n.clone()).or_insert_with(|| {
                formats.push(n);
                formats.len() - 1
            }))
        })
        .collect();
    let n = table.n();
    // Walks the pairs in order, each once (a bit per (a, j)), calling `visit` with the
    // pair's format indices.
    let walk = |visit: &mut dyn FnMut(usize, usize, &'static str, (usize, usize))| {
        let mut seen = vec![0u64; (n * n).div_ceil(64)];
        let mut push = |a: usize, j: usize, via: &'static str| {
            let bit = a * n + j;
            if a == j || seen[bit / 64] >> (bit % 64) & 1 == 1 {
                return;
            }
            seen[bit / 64] |= 1 << (bit % 64);
            if let (Some(fa), Some(fj)) = (of[a], of[j]) {
                visit(a, j, via, (fa, fj));
            }
        };
        for e in &policy.edges {
            push(e.from, e.to, "edge");
        }
        for a in 0..n {
            for b in 0..n {
                if let Some(j) = table.get(a, b) {
                    push(a, j, "join");
                }
            }
        }
    };
    // Pass 1: the distinct format pairs (a handful), classified.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut pair_of_formats = vec![usize::MAX; formats.len() * formats.len()];
    walk(&mut |_, _, _, (fa, fj)| {
        let k = fa * formats.len() + fj;
        if pair_of_formats[k] == usize::MAX {
            pair_of_formats[k] = pairs.len();
            pairs.push((fa, fj));
        }
    });
    let classified = classify_all(&formats, &pairs, engine);
    // Pass 2: the conversions, in order.
    walk(&mut |a, j, via, (fa, fj)| {
        let c = &classified[pair_of_formats[fa * formats.len() + fj]];
        f(a, j, via, c);
    });
}

fn conversion(
    policy: &Policy,
    a: usize,
    j: usize,
    via: &'static str,
    c: &Classified,
) -> Conversion {
    let (class, all, decided_by) = c;
    Conversion {
        from: policy.dtypes[a].clone(),
        to: policy.dtypes[j].clone(),
        via,
        class: *class,
        witness: all.iter().find(|(c, _)| c == class).map(|(_, w)| w.clone()),
        all: all.clone(),
        decided_by: *decided_by,
    }
}

/// The safety of every edge and every join of a policy, in declaration order.
pub fn analyse(policy: &Policy, table: &crate::Table, engine: Engine) -> Vec<Conversion> {
    let mut out = Vec::new();
    each_conversion(policy, table, engine, |a, j, via, c| {
        out.push(conversion(policy, a, j, via, c))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(name: &str) -> Numeric {
        match name {
            "complex64" => Numeric::Complex(float_format("float32").unwrap()),
            _ => match Source::named(name).unwrap() {
                Source::Float(f) => Numeric::Float(f),
                Source::Int { bits, signed } => Numeric::Int { bits, signed },
            },
        }
    }

    fn check(from: &str, to: &str) -> (Class, Option<(String, String)>) {
        let (c, all, _) = classify(&num(from), &num(to), Engine::best());
        let w = all
            .iter()
            .find(|(k, _)| *k == c)
            .map(|(_, w)| (w.value.clone(), w.becomes.clone()));
        (c, w)
    }

    #[test]
    fn issue_examples() {
        assert_eq!(
            check("int64", "float16"),
            (Class::Overflow, Some(("65520".into(), "inf".into())))
        );
        assert_eq!(
            check("int32", "float32"),
            (
                Class::PrecisionLoss,
                Some(("16777217".into(), "16777216".into()))
            )
        );
        assert_eq!(check("bfloat16", "float32").0, Class::Exact);
        assert_eq!(
            check("uint8", "float8_e4m3fn"),
            (Class::PrecisionLoss, Some(("17".into(), "16".into())))
        );
        assert_eq!(
            check("int8", "uint8"),
            (Class::SignLoss, Some(("-1".into(), "255".into())))
        );
        assert_eq!(
            check("uint8", "int8"),
            (Class::Overflow, Some(("128".into(), "-128".into())))
        );
        assert_eq!(
            check("complex64", "float32"),
            (Class::DropsComponent, Some(("1j".into(), "0".into())))
        );
        assert_eq!(check("float32", "float64").0, Class::Exact);
        assert_eq!(check("int16", "float32").0, Class::Exact);
        assert_eq!(check("float16", "float8_e4m3fn").0, Class::Overflow);
        // A saturating format clamps what lies far beyond its maximum too: 62 becomes 7.5 in
        // float6_e2m3fn, an overflow (it was called a precision loss once it also lay beyond
        // the range of the one-bit-wider format used to decide).
        let e2m3 = num("float6_e2m3fn");
        let v = |mant| Value::Finite {
            neg: false,
            mant,
            exp: 0,
        };
        let int16 = num("int16");
        assert_eq!(classify_value(v(62), &int16, &e2m3).0, Class::Overflow);
        assert_eq!(classify_value(v(8), &int16, &e2m3).0, Class::Overflow);
        assert_eq!(
            check("int16", "float6_e2m3fn"),
            (Class::Overflow, Some(("8".into(), "7.5".into())))
        );
        assert_eq!(
            check("int64", "float64"),
            (
                Class::PrecisionLoss,
                Some(("9007199254740993".into(), "9007199254740992".into()))
            )
        );
    }

    /// A wide float's boundary values, read by position, are the patterns listed in bit
    /// order: the chosen significands at every exponent field, positive then negative.
    #[test]
    fn float_boundary_positions_are_the_patterns_in_bit_order() {
        for name in ["float32", "float64", "float16"] {
            let Numeric::Float(f) = num(name) else {
                unreachable!()
            };
            let p = f.mantissa_bits;
            let mut significands = vec![0, 1, 2, (1 << p) - 1, 1 << (p - 1), (1 << (p - 1)) + 1];
            significands.sort_unstable();
            significands.dedup();
            let mut listed = Vec::new();
            for sign in [0, 1u64 << (f.width() - 1)] {
                for e_field in 0..1u64 << f.exponent_bits {
                    listed.extend(significands.iter().map(|&m| sign | e_field << p | m));
                }
            }
            let b = FloatBoundary::of(&f);
            let read: Vec<u64> = (0..b.len()).map(|i| b.pattern(i)).collect();
            assert_eq!(read, listed, "{name}");
            assert_eq!(b.positives(), listed.len() / 2, "{name}");
        }
        // Every pattern of a format whose significands are all boundary ones, in bit order.
        for (name, patterns) in [("float4_e2m1fn", 16), ("float8_e8m0fnu", 256)] {
            let b = FloatBoundary::of(&float_format(name).unwrap());
            let read: Vec<u64> = (0..b.len()).map(|i| b.pattern(i)).collect();
            assert_eq!(read, (0..patterns).collect::<Vec<u64>>(), "{name}");
        }
    }

    /// The grid test holds for exactly the values the codec's round trip calls exact, for
    /// every source of up to 16 bits and every integer type and signed float format of the
    /// catalogue; the early stops of a scan in bit order change no witness, for every pair of
    /// catalogue formats and of layouts a policy may declare.
    #[test]
    fn the_shortcuts_of_a_scan_change_no_witness() {
        use crate::numeric::format::NanEncoding;
        let named: Vec<Numeric> = crate::numeric::dtype::CATALOGUE
            .iter()
            .filter_map(|d| Source::named(d.name))
            .map(|s| match s {
                Source::Float(f) => Numeric::Float(f),
                Source::Int { bits, signed } => Numeric::Int { bits, signed },
            })
            .collect();
        let every = |n: &Numeric| {
            let all = Values::Every(n);
            (0..all.len())
                .map(|i| all.get(i))
                .filter(|v| matches!(v, Value::Finite { .. }))
                .collect::<Vec<_>>()
        };
        let mut skipped = 0;
        for to in &named {
            let Some(grid) = Grid::of(to) else { continue };
            for from in named.iter().filter(|f| f.width() <= 16) {
                for v in every(from) {
                    // Tight both ways: exactly the values the round trip calls exact.
                    let exact = classify_value(v, from, to).0 == Class::Exact;
                    assert_eq!(grid.holds(v), exact, "{v:?} into {to:?}");
                    skipped += usize::from(exact);
                }
            }
        }
        assert!(skipped > 500_000, "{skipped}");
        let grid = Grid::of(&num("float32")).unwrap();
        assert!(every(&num("bfloat16")).iter().all(|v| grid.holds(*v)));
        let grid = Grid::of(&num("int32")).unwrap();
        assert!(every(&num("uint16")).iter().all(|v| grid.holds(*v)));

        // Layouts a policy may declare (`[formats]`: signed, with subnormals; IEEE with or
        // without infinities, `fn`, `fnuz`, saturating), beside the catalogue's.
        let declared = [(2, 1), (3, 3), (5, 6), (6, 9), (4, 11)]
            .into_iter()
            .flat_map(|(e, m)| {
                [
                    (true, NanEncoding::Ieee),
                    (false, NanEncoding::Ieee),
                    (false, NanEncoding::AllOnes),
                    (false, NanEncoding::NegativeZero),
                    (false, NanEncoding::None),
                ]
                .map(|(infinities, nan)| {
                    Numeric::Float(FloatFormat {
                        name: String::new(),
                        exponent_bits: e,
                        mantissa_bits: m,
                        bias: (1 << (e - 1)) - 1,
                        infinities,
                        nan,
                        signed: true,
                        subnormals: true,
                        storage_bytes: 2,
                        native: None,
                    })
                })
            });
        let formats: Vec<Numeric> = named.iter().cloned().chain(declared).collect();
        let mut stopped_early = 0;
        for from in &formats {
            for to in &formats {
                let (fast, exhaustive) = search(from, to, true);
                assert_eq!(exhaustive, from.width() <= 16);
                assert_eq!(fast, search(from, to, false).0, "{from:?} into {to:?}");
                stopped_early += usize::from(Sorted::of(from, to).is_some());
            }
        }
        assert!(stopped_early > 1_000, "{stopped_early}");
        // Complex sources are searched through their components.
        let c64 = Numeric::Complex(float_format("float32").unwrap());
        assert_eq!(
            search(&c64, &num("float16"), true),
            search(&num("float32"), &num("float16"), true)
        );
    }
}

/// One lintable safety class of a policy: its level, how many conversions show it, and the
/// first of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LintResult {
    pub class: Class,
    pub level: crate::policy::spec::Level,
    /// How many conversions are of this class.
    pub count: usize,
    /// The first `examples` conversions of this class (edges first, then joins, in
    /// declaration order).
    pub conversions: Vec<Conversion>,
}

/// The policy's lints: for each lossy class that occurs and is not allowed, its count and
/// first `examples` conversions (`usize::MAX`: all of them).
pub fn lint(
    policy: &Policy,
    table: &crate::Table,
    engine: Engine,
    examples: usize,
) -> Vec<LintResult> {
    use crate::policy::spec::Level;
    const LINTS: [Class; 4] = [
        Class::PrecisionLoss,
        Class::Overflow,
        Class::SignLoss,
        Class::DropsComponent,
    ];
    let mut results: Vec<LintResult> = LINTS
        .into_iter()
        .map(|class| LintResult {
            class,
            level: policy.lint_level(class.key()),
            count: 0,
            conversions: Vec::new(),
        })
        .filter(|r| r.level != Level::Allow)
        .collect();
    // Nothing to report: no conversion is classified.
    if results.is_empty() {
        return results;
    }
    each_conversion(policy, table, engine, |a, j, via, c| {
        if let Some(r) = results.iter_mut().find(|r| r.class == c.0) {
            r.count += 1;
            if r.conversions.len() < examples {
                r.conversions.push(conversion(policy, a, j, via, c));
            }
        }
    });
    results.retain(|r| r.count > 0);
    results
}
