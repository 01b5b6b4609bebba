//! Value-level safety of every promotion: for each edge `a → b` and each join `a ∨ b = j`, what
//! the conversion `a → j` does to `a`'s values: exact, precision loss, overflow, sign loss, or a
//! dropped imaginary part, each with a concrete witness (the smallest in magnitude).
//!
//! Sources of at most 16 bits are decided by enumerating every value. Wider sources (int32,
//! int64, float32, float64, complex) are searched on targeted boundary values (powers of two
//! and their neighbours, the destination's rounding and overflow thresholds, extremes), every
//! witness re-checked by the codec; such a conversion is reported `exact` only when the formats'
//! parameters prove it (range and precision contained), and `unknown` when neither a witness
//! nor a proof exists.

use serde::Serialize;

use crate::format::{FloatFormat, Source, Value, float_format};
use crate::spec::Policy;

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
}

/// A dtype's numeric format for value analysis.
#[derive(Clone, Debug, PartialEq)]
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
        if crate::dtype::is_weak(name) {
            let w = policy.weak.iter().find(|w| w.weak == i)?;
            return Numeric::of(policy, w.materialises);
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
            }));
        }
        match name {
            "complex64" => return Some(Numeric::Complex(float_format("float32")?)),
            "complex128" => return Some(Numeric::Complex(float_format("float64")?)),
            _ => {}
        }
        match Source::named(name)? {
            Source::Float(f) => Some(Numeric::Float(f)),
            Source::Int { bits, signed } => Some(Numeric::Int { bits, signed }),
        }
    }

    fn width(&self) -> u32 {
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
fn classify_value(v: Value, to: &Numeric) -> (Class, Value) {
    let neg = matches!(v, Value::Finite { neg: true, mant, .. } if mant != 0);
    match to {
        Numeric::Int { bits, signed } => {
            // NumPy astype: integers wrap (two's complement); finite floats truncate toward
            // zero first. Only integer-valued sources occur in promotion (ints, bool).
            let (_, mant, exp) = to_parts(v).expect("finite");
            let mag = if exp >= 0 {
                mant << exp
            } else {
                mant >> (-exp)
            };
            let modulus = 1u128 << bits;
            let raw = if neg {
                (modulus - mag % modulus) % modulus
            } else {
                mag % modulus
            };
            let back = Source::Int {
                bits: *bits,
                signed: *signed,
            }
            .decode(raw as u64);
            let class = if same_value(v, back) {
                if exp < 0 && mant & ((1u128 << (-exp)) - 1) != 0 {
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
                // Clamped (float4/float6 saturate): it would have rounded beyond the maximum.
                Value::Finite { .. }
                    if f.nan == crate::spec::NanEncoding::None
                        && mag_lt(f.max_finite(), unbounded(f, v)) =>
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
        infinities: true,
        nan: crate::spec::NanEncoding::Ieee,
        ..f.clone()
    };
    wide.decode(wide.encode(v))
}

/// Finite values of a source format to try: every value for ≤ 16 bits, boundary values above.
fn candidates(from: &Numeric, to: &Numeric) -> (Vec<Value>, bool) {
    let exhaustive = from.width() <= 16;
    let component = |n: &Numeric| match n {
        Numeric::Complex(f) => Numeric::Float(f.clone()),
        other => other.clone(),
    };
    let src = component(from);
    let mut out = Vec::new();
    match &src {
        Numeric::Int { bits, signed } => {
            let s = Source::Int {
                bits: *bits,
                signed: *signed,
            };
            if exhaustive {
                out.extend((0..1u64 << bits).map(|b| s.decode(b)));
            } else {
                let hi = if *signed { *bits - 1 } else { *bits };
                let mut mags: Vec<u128> = vec![0, 1, 2, 3];
                for k in 1..=hi {
                    let p = 1u128 << k;
                    mags.extend([p - 2, p - 1, p, p + 1, p + 2]);
                }
                for t in thresholds(to) {
                    // Integer thresholds, and the integers on either side of fractional ones.
                    if let Value::Finite { mant, exp, .. } = t {
                        if exp >= 0 && mant.leading_zeros() > exp as u32 {
                            mags.push(mant << exp);
                        } else if exp < 0 && -exp < 128 {
                            let whole = mant >> -exp;
                            mags.extend([whole, whole + 1]);
                        }
                    }
                }
                let max = (1u128 << hi) - 1;
                for m in mags {
                    if m <= max {
                        out.push(Value::Finite {
                            neg: false,
                            mant: m,
                            exp: 0,
                        });
                    }
                    if *signed && m <= max + 1 {
                        out.push(Value::Finite {
                            neg: true,
                            mant: m,
                            exp: 0,
                        });
                    }
                }
            }
        }
        Numeric::Float(f) => {
            if exhaustive {
                out.extend((0..1u64 << f.width()).map(|b| f.decode(b)));
            } else {
                let p = f.mantissa_bits;
                for e_field in 0..(1u64 << f.exponent_bits) {
                    for m in [0, 1, 2, (1 << p) - 1, 1 << (p - 1), (1 << (p - 1)) + 1] {
                        for neg in [false, true] {
                            let sign = if neg { 1u64 << (f.width() - 1) } else { 0 };
                            out.push(f.decode(sign | e_field << p | m));
                        }
                    }
                }
                // Thresholds snapped to the source: the nearest source value and its neighbours.
                for t in thresholds(to) {
                    let near = f.encode(t);
                    for b in [near.wrapping_sub(1), near, near + 1] {
                        if b >> (f.width() - 1) == 0 {
                            out.push(f.decode(b));
                        }
                    }
                }
            }
        }
        Numeric::Complex(_) => unreachable!("components are real"),
    }
    out.retain(|v| matches!(v, Value::Finite { .. }));
    (out, exhaustive)
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

/// Classifies the conversion of every value of `from` into `to`.
pub fn classify(from: &Numeric, to: &Numeric) -> (Class, Vec<(Class, Witness)>) {
    let mut best: std::collections::BTreeMap<Class, (Value, Value)> = Default::default();
    if let (Numeric::Complex(_), Numeric::Int { .. } | Numeric::Float(_)) = (from, to) {
        let one = Value::Finite {
            neg: false,
            mant: 1,
            exp: 0,
        };
        best.insert(Class::DropsComponent, (one, Value::zero(false)));
    }
    let (values, exhaustive) = candidates(from, to);
    for v in values {
        let (class, back) = classify_value(v, to);
        if class == Class::Exact {
            continue;
        }
        let better = match best.get(&class) {
            None => true,
            Some((w, _)) => mag_lt(v, *w),
        };
        if better {
            best.insert(class, (v, back));
        }
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
        None if exhaustive || provably_exact(from, to) => Class::Exact,
        None => Class::Unknown,
    };
    (class, all)
}

/// The safety of every edge and every join of a policy, in declaration order.
pub fn analyse(policy: &Policy, table: &crate::Table) -> Vec<Conversion> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |a: usize, j: usize, via: &'static str, out: &mut Vec<Conversion>| {
        if a == j || !seen.insert((a, j)) {
            return;
        }
        let (from, to) = (&policy.dtypes[a], &policy.dtypes[j]);
        let (Some(fa), Some(fj)) = (Numeric::of(policy, a), Numeric::of(policy, j)) else {
            return; // a weak type without a materialisation has no values to analyse
        };
        let (class, all) = classify(&fa, &fj);
        let witness = all
            .iter()
            .find(|(c, _)| *c == class)
            .map(|(_, w)| w.clone());
        out.push(Conversion {
            from: from.clone(),
            to: to.clone(),
            via,
            class,
            witness,
            all,
        });
    };
    for e in &policy.edges {
        push(e.from, e.to, "edge", &mut out);
    }
    let n = table.n();
    for a in 0..n {
        for b in 0..n {
            if let Some(j) = table.get(a, b) {
                push(a, j, "join", &mut out);
            }
        }
    }
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
        let (c, all) = classify(&num(from), &num(to));
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
        assert_eq!(
            check("int64", "float64"),
            (
                Class::PrecisionLoss,
                Some(("9007199254740993".into(), "9007199254740992".into()))
            )
        );
    }
}

/// One lintable safety class of a policy: its level and the conversions that show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LintResult {
    pub class: Class,
    pub level: crate::spec::Level,
    /// Conversions of this class (edges first, then joins, in declaration order).
    pub conversions: Vec<Conversion>,
}

/// The policy's lints: for each lossy class that occurs and is not allowed, the conversions.
pub fn lint(policy: &Policy, table: &crate::Table) -> Vec<LintResult> {
    let all = analyse(policy, table);
    [
        Class::PrecisionLoss,
        Class::Overflow,
        Class::SignLoss,
        Class::DropsComponent,
    ]
    .into_iter()
    .filter_map(|class| {
        let level = policy.lint_level(class.key());
        let conversions: Vec<Conversion> =
            all.iter().filter(|c| c.class == class).cloned().collect();
        (level != crate::spec::Level::Allow && !conversions.is_empty()).then_some(LintResult {
            class,
            level,
            conversions,
        })
    })
    .collect()
}
