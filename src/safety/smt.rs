//! SMT-LIB encoding of the value-level safety of one conversion `from → to` (docs/smt.md,
//! "Value safety"): the source pattern is a bit-vector `x`, decoded with z3's floating-point
//! sorts (or read as an integer), and each script asserts that `x` shows one class (overflow,
//! precision loss, sign loss), optionally with a magnitude below a bound, so `unsat` proves the
//! class absent (or the bound's witness minimal) and a model is a witness.
//!
//! All comparisons happen in one wide IEEE sort `W` that holds every value of both formats
//! exactly. A destination that z3's IEEE sorts describe (IEEE NaN and infinities, standard
//! bias, at least 2 exponent and 2 mantissa bits) is reached with `to_fp` and RNE; any other
//! (fn, fnuz, e8m0, float4/6, user formats) of at most 8 bits is described by its decoded
//! value set and its overflow threshold, both taken from the codec.

use crate::numeric::format::NanEncoding;
use crate::numeric::format::{FloatFormat, Value};
use crate::safety::{Class, Numeric};

/// The wide comparison sort: exponent bits and precision (significand bits incl. the hidden one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wide {
    e: u32,
    p: u32,
}

/// A conversion the encoding covers, with everything a script needs.
pub struct Encoding {
    src: Src,
    dst: Dst,
    wide: Wide,
    /// Width of the source pattern `x`.
    pub width: u32,
}

enum Src {
    Int {
        bits: u32,
        signed: bool,
    },
    /// An IEEE binary format (z3 sort `(_ FloatingPoint e p)`).
    Float {
        e: u32,
        p: u32,
    },
}

enum Dst {
    Int {
        bits: u32,
        signed: bool,
    },
    Ieee {
        e: u32,
        p: u32,
    },
    /// Finite values (exact), overflow threshold and whether it is inclusive, and whether
    /// negative values lose their sign (unsigned formats).
    Listed {
        values: Vec<Value>,
        threshold: Value,
        inclusive: bool,
        unsigned: bool,
        /// Zero becomes NaN (float8_e8m0fnu has no zero): an overflow by the codec's classes.
        zero_overflows: bool,
    },
}

fn is_z3_ieee(f: &FloatFormat) -> bool {
    f.nan == NanEncoding::Ieee
        && f.infinities
        && f.signed
        && f.subnormals
        && f.exponent_bits >= 2
        && f.mantissa_bits >= 2
        && f.bias == (1 << (f.exponent_bits - 1)) - 1
}

/// `(top bit exponent, bottom bit exponent)` of a finite nonzero value.
fn span(v: Value) -> Option<(i64, i64)> {
    match v {
        Value::Finite { mant, exp, .. } if mant != 0 => Some((
            127 - mant.leading_zeros() as i64 + exp as i64,
            mant.trailing_zeros() as i64 + exp as i64,
        )),
        _ => None,
    }
}

impl Encoding {
    /// The encoding of `from → to`, or `None` when z3 cannot describe it (a source that is
    /// not an IEEE format or an integer, a float to integer conversion, a large non-IEEE
    /// destination). Complex formats are encoded per component.
    pub fn new(from: &Numeric, to: &Numeric) -> Option<Encoding> {
        let (src, width, s_range) = match from {
            Numeric::Int { bits, signed } => (
                Src::Int {
                    bits: *bits,
                    signed: *signed,
                },
                *bits,
                (*bits as i64 + 1, 0i64, *bits + 1),
            ),
            Numeric::Float(f) | Numeric::Complex(f) => {
                if !is_z3_ieee(f) {
                    return None;
                }
                let (top, _) = span(f.max_finite())?;
                let (_, bottom) = span(f.decode(1))?;
                (
                    Src::Float {
                        e: f.exponent_bits,
                        p: f.mantissa_bits + 1,
                    },
                    f.width(),
                    (top, bottom, f.mantissa_bits + 1),
                )
            }
        };
        let (dst, d_range) = match to {
            Numeric::Int { bits, signed } => {
                if matches!(src, Src::Float { .. }) {
                    return None;
                }
                (
                    Dst::Int {
                        bits: *bits,
                        signed: *signed,
                    },
                    (*bits as i64 + 1, 0, *bits + 1),
                )
            }
            Numeric::Float(f) | Numeric::Complex(f) => {
                let (top, _) = span(f.max_finite())?;
                let (_, bottom) = span(f.decode(1))?;
                let range = (top + 1, bottom, f.mantissa_bits + 2);
                if is_z3_ieee(f) {
                    let dst = Dst::Ieee {
                        e: f.exponent_bits,
                        p: f.mantissa_bits + 1,
                    };
                    (dst, range)
                } else if f.width() <= 8 {
                    let mut values: Vec<Value> = (0..1u64 << f.width())
                        .map(|b| f.decode(b))
                        .filter(|v| matches!(v, Value::Finite { .. }))
                        .collect();
                    values.dedup();
                    // The overflow threshold: halfway between the maximum and the next value
                    // an unbounded exponent range would have; the codec says which side of
                    // it the tie falls.
                    let Value::Finite { mant, exp, .. } = f.max_finite() else {
                        return None;
                    };
                    let threshold = Value::Finite {
                        neg: false,
                        mant: 2 * mant + 1,
                        exp: exp - 1,
                    };
                    let overflows =
                        |v: Value| crate::safety::classify_value(v, from, to).0 == Class::Overflow;
                    let dst = Dst::Listed {
                        values,
                        threshold,
                        inclusive: overflows(threshold),
                        unsigned: !f.signed,
                        zero_overflows: overflows(Value::zero(false)),
                    };
                    (dst, range)
                } else {
                    return None;
                }
            }
        };
        // W: precision for both, exponent range for both (plus the threshold's extra bit).
        let p = s_range.2.max(d_range.2) + 1;
        let top = s_range.0.max(d_range.0) + 2;
        let bottom = s_range.1.min(d_range.1) - 2;
        let mut e = 3;
        // emax = 2^(e-1) - 1; smallest normal 2^(2 - 2^(e-1)); keep every value normal.
        while (1i64 << (e - 1)) - 1 < top || 2 - (1i64 << (e - 1)) > bottom - p as i64 {
            e += 1;
        }
        Some(Encoding {
            src,
            dst,
            wide: Wide { e, p },
            width,
        })
    }

    fn sort(&self) -> String {
        format!("(_ FloatingPoint {} {})", self.wide.e, self.wide.p)
    }

    /// A finite value of either format as a literal of `W`.
    fn literal(&self, v: Value) -> String {
        let Value::Finite { neg, mant, exp } = v else {
            unreachable!("only finite values are written as literals")
        };
        let Wide { e, p } = self.wide;
        let sign = if neg { "#b1" } else { "#b0" };
        if mant == 0 {
            return format!(
                "(fp {sign} #b{} #b{})",
                "0".repeat(e as usize),
                zeros(p - 1)
            );
        }
        let top = 127 - mant.leading_zeros() as i64;
        let biased = top + exp as i64 + (1i64 << (e - 1)) - 1;
        let frac = mant ^ (1u128 << top); // drop the hidden bit
        let shift = (p - 1) as i64 - top;
        let frac = if shift >= 0 {
            frac << shift
        } else {
            frac >> -shift
        };
        format!(
            "(fp {sign} #b{:0ew$b} #b{:0pw$b})",
            biased,
            frac,
            ew = e as usize,
            pw = (p - 1) as usize
        )
    }

    /// Magnitude of a finite source value as the unsigned `width + 1`-bit number the scripts
    /// order witnesses by: the pattern without its sign for floats, |x| for integers.
    pub fn magnitude(&self, v: Value) -> u128 {
        match (&self.src, v) {
            (Src::Int { .. }, Value::Finite { mant, exp, .. }) => mant << exp.max(0),
            (Src::Float { e, p }, _) => {
                let f = ieee(*e, *p);
                (f.encode(v) & ((1u64 << (f.width() - 1)) - 1)) as u128
            }
            _ => u128::MAX,
        }
    }

    /// The source value of a pattern from a model.
    pub fn decode(&self, bits: u64) -> Value {
        match self.src {
            Src::Int { bits: w, signed } => {
                crate::numeric::format::Source::Int { bits: w, signed }.decode(bits)
            }
            Src::Float { e, p } => ieee(e, p).decode(bits),
        }
    }

    /// The script asserting that `x` shows `class`, with `|x| < below` when given.
    pub fn script(&self, class: Class, below: Option<u128>) -> String {
        let w = self.width;
        let sort = self.sort();
        let mut s = String::new();
        s.push_str("(set-logic QF_BVFP)\n");
        s.push_str(&format!("(declare-const x (_ BitVec {w}))\n"));
        let xw = match self.src {
            Src::Int { signed: true, .. } => {
                format!("((_ to_fp {} {}) RNE x)", self.wide.e, self.wide.p)
            }
            Src::Int { signed: false, .. } => {
                format!("((_ to_fp_unsigned {} {}) RNE x)", self.wide.e, self.wide.p)
            }
            Src::Float { e, p } => {
                s.push_str(&format!(
                    "(define-fun xs () (_ FloatingPoint {e} {p}) ((_ to_fp {e} {p}) x))\n\
                     (assert (not (fp.isNaN xs)))\n(assert (not (fp.isInfinite xs)))\n"
                ));
                format!("((_ to_fp {} {}) RNE xs)", self.wide.e, self.wide.p)
            }
        };
        s.push_str(&format!("(define-fun xw () {sort} {xw})\n"));
        let mag = match self.src {
            Src::Int { signed: true, .. } => {
                "(ite (bvslt x (_ bv0 W)) (bvneg ((_ sign_extend 1) x)) ((_ sign_extend 1) x))"
                    .replace("W", &w.to_string())
            }
            Src::Int { signed: false, .. } => "((_ zero_extend 1) x)".to_string(),
            Src::Float { .. } => format!("((_ zero_extend 2) ((_ extract {} 0) x))", w - 2),
        };
        s.push_str(&format!("(define-fun mag () (_ BitVec {}) {mag})\n", w + 1));
        let claim = match &self.dst {
            Dst::Int { bits, signed } => {
                let (lo, hi): (i128, i128) = if *signed {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let int = |v: i128| {
                    self.literal(Value::Finite {
                        neg: v < 0,
                        mant: v.unsigned_abs(),
                        exp: 0,
                    })
                };
                let inside = format!("(and (fp.leq {} xw) (fp.leq xw {}))", int(lo), int(hi));
                let negative = "(fp.lt xw (_ +zero E P))"
                    .replace("E", &self.wide.e.to_string())
                    .replace("P", &self.wide.p.to_string());
                match class {
                    Class::SignLoss if !signed => negative,
                    Class::Overflow if !signed => format!("(and (not {inside}) (not {negative}))"),
                    Class::Overflow => format!("(not {inside})"),
                    _ => "false".to_string(),
                }
            }
            Dst::Ieee { e, p } => {
                s.push_str(&format!(
                    "(define-fun d () (_ FloatingPoint {e} {p}) ((_ to_fp {e} {p}) RNE xw))\n"
                ));
                match class {
                    Class::Overflow => "(fp.isInfinite d)".to_string(),
                    Class::PrecisionLoss => format!(
                        "(and (not (fp.isInfinite d)) (not (fp.eq ((_ to_fp {} {}) RNE d) xw)))",
                        self.wide.e, self.wide.p
                    ),
                    _ => "false".to_string(),
                }
            }
            Dst::Listed {
                values,
                threshold,
                inclusive,
                unsigned,
                zero_overflows,
            } => {
                let negative = if *unsigned {
                    "(and (fp.isNegative xw) (not (fp.isZero xw)))".to_string()
                } else {
                    "false".to_string()
                };
                let mut beyond = format!(
                    "({} (fp.abs xw) {})",
                    if *inclusive { "fp.geq" } else { "fp.gt" },
                    self.literal(*threshold)
                );
                if *zero_overflows {
                    beyond = format!("(or (fp.isZero xw) {beyond})");
                }
                match class {
                    Class::SignLoss => negative,
                    Class::Overflow => format!("(and (not {negative}) {beyond})"),
                    Class::PrecisionLoss => {
                        let mut c = format!("(and (not {negative}) (not {beyond})");
                        for v in values {
                            c.push_str(&format!("\n  (not (fp.eq xw {}))", self.literal(*v)));
                        }
                        c.push(')');
                        c
                    }
                    _ => "false".to_string(),
                }
            }
        };
        s.push_str(&format!("(assert {claim})\n"));
        if let Some(b) = below {
            s.push_str(&format!(
                "(assert (bvult mag (_ bv{b} {})))\n(check-sat)\n",
                w + 1
            ));
        } else {
            s.push_str("(check-sat)\n");
        }
        s
    }

    /// The classes this conversion can show at all.
    pub fn classes(&self) -> Vec<Class> {
        match &self.dst {
            Dst::Int { signed: true, .. } => vec![Class::Overflow],
            Dst::Int { signed: false, .. } => vec![Class::Overflow, Class::SignLoss],
            Dst::Ieee { .. } => vec![Class::PrecisionLoss, Class::Overflow],
            Dst::Listed { unsigned, .. } => {
                let mut c = vec![Class::PrecisionLoss, Class::Overflow];
                if *unsigned {
                    c.push(Class::SignLoss);
                }
                c
            }
        }
    }
}

fn zeros(n: u32) -> String {
    "0".repeat(n as usize)
}

/// The IEEE binary format with `e` exponent bits and precision `p`.
fn ieee(e: u32, p: u32) -> FloatFormat {
    FloatFormat {
        name: format!("binary{}", 1 + e + p - 1),
        exponent_bits: e,
        mantissa_bits: p - 1,
        bias: (1 << (e - 1)) - 1,
        infinities: true,
        nan: NanEncoding::Ieee,
        signed: true,
        subnormals: true,
        storage_bytes: (e + p).div_ceil(8).next_power_of_two(),
        native: None,
    }
}
