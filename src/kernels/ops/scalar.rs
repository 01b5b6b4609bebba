//! Weak scalars: a Python int checked against the policy's library, a Python number
//! materialised as a one-element array of the computation dtype, and how scalar operands reach
//! that dtype (`Conversion`: through float32, through the integer join, into a float8 as
//! PyTorch converts).

use super::astype::{astype, c10_astype, intn_wrap_astype, through_float32};
use super::flush;
use super::vocab::{Arg, ErrorKind, OpError, Scalar, err};
use crate::kernels::array::Array;
use crate::numeric::c10::Float8;
use crate::numeric::dtype::DType;
use crate::numeric::format::Value;
use crate::numeric::op::Float8Conversion;
use crate::numeric::op::IntnConversion;
use crate::numeric::op::Narrowing;
use crate::numeric::op::PythonInt;
use crate::numeric::op::ScalarPrecision;
use crate::numeric::op::Subnormals;
use crate::promote::Generated;

/// The values an integer dtype of `bits` holds, as a closed range.
pub(super) fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    } else {
        (0, (1 << bits) - 1)
    }
}

/// A Python int is first parsed as the policy's Python-int type (`i*`'s materialisation), as
/// JAX and TensorFlow do: outside its range it is an `overflow` error whatever the result
/// dtype (`float16 + 2**63` raises OverflowError under JAX's x64, `float32 + 2**31` under x32
/// and TensorFlow), except under `PythonInt::Wrap` (PyTorch's wider range).
fn python_int_fits(policy: &Generated, x: i128) -> Result<(), OpError> {
    if policy.semantics.python_int == PythonInt::Wrap {
        // PyTorch takes a Python int as int64, or as uint64 from 2^63 on: only beyond raise.
        if (-(1i128 << 63)..(1i128 << 64)).contains(&x) {
            return Ok(());
        }
        return err(
            ErrorKind::Overflow,
            format!(
                "Python integer {x} is outside [-2**63, 2**64) (PyTorch raises OverflowError); \
                 use an array of the dtype wanted"
            ),
        );
    }
    let Some(DType::Int { bits, signed }) = policy.python_int_type() else {
        return Ok(());
    };
    let (lo, hi) = int_range(bits, signed);
    if (lo..=hi).contains(&x) {
        return Ok(());
    }
    let int = DType::Int { bits, signed }.name();
    err(
        ErrorKind::Overflow,
        format!(
            "Python integer {x} does not fit {int}, the {} policy's Python-int type (its \
             library raises OverflowError whatever the other operand); use an array of the \
             dtype wanted",
            policy.name
        ),
    )
}

/// A scalar as a one-element array of dtype `to` (the policy's result dtype): an int that
/// does not fit an integer `to` is an `overflow` error, or wraps under `PythonInt::Wrap` and
/// `PythonInt::Cast` (save a negative one into uint64 under `Cast`: an `overflow` error).
pub(super) fn materialise(s: Scalar, to: DType, python_int: PythonInt) -> Result<Array, OpError> {
    let one = |bits: [u64; 2]| Array::from_bits(to, vec![], &[bits]).expect("fits");
    let real = |v: Value| -> Result<u64, OpError> {
        match to {
            DType::Bool | DType::Int { .. } => {
                let Value::Finite { neg, mant, .. } = v else {
                    unreachable!("integer scalars")
                };
                let (lo, hi) = match to {
                    DType::Int { bits, signed } => int_range(bits, signed),
                    _ => (0, 1),
                };
                let x = if neg { -(mant as i128) } else { mant as i128 };
                // TensorFlow converts a Python int to uint64 through an unsigned 64-bit C
                // integer, which a negative one does not fit (OverflowError); into uint8 to
                // uint32 it wraps.
                let unsigned64 = matches!(
                    to,
                    DType::Int {
                        bits: 64,
                        signed: false
                    }
                );
                if python_int == PythonInt::Cast && unsigned64 && x < 0 {
                    return err(
                        ErrorKind::Overflow,
                        format!(
                            "Python integer {x} cannot be cast to uint64 (its library raises \
                             OverflowError for a negative one); use an array of a signed dtype"
                        ),
                    );
                }
                if python_int != PythonInt::Fit && !matches!(to, DType::Bool) {
                    let w = to.pattern_bits();
                    return Ok((x as u64) & if w >= 64 { u64::MAX } else { (1 << w) - 1 });
                }
                if x < lo || x > hi {
                    return err(
                        ErrorKind::Overflow,
                        format!(
                            "Python integer {x} out of bounds for {} (NumPy 2 raises OverflowError); \
                             use an array of a wider dtype",
                            to.name()
                        ),
                    );
                }
                let w = to.pattern_bits();
                Ok((x as u64) & if w >= 64 { u64::MAX } else { (1 << w) - 1 })
            }
            _ => Ok(to.float_format().expect("float").encode(v)),
        }
    };
    let int_value = |x: i128| Value::Finite {
        neg: x < 0,
        mant: x.unsigned_abs(),
        exp: 0,
    };
    let (re, im) = match s {
        Scalar::Bool(b) => (int_value(b as i128), None),
        Scalar::Int(x) => (int_value(x), None),
        Scalar::Float(x) => (Value::from_f64(x), None),
        Scalar::Complex(r, i) => (Value::from_f64(r), Some(Value::from_f64(i))),
    };
    if to.is_complex() {
        let f = to.float_format().expect("complex parts");
        let im = im.unwrap_or(Value::zero(false));
        return Ok(one([f.encode(re), f.encode(im)]));
    }
    if im.is_some() {
        return err(
            ErrorKind::Unsupported,
            format!("a complex scalar cannot combine into {}", to.name()),
        );
    }
    if matches!(s, Scalar::Float(_)) && !to.is_float() {
        return err(
            ErrorKind::Unsupported,
            format!("a float scalar cannot combine into {}", to.name()),
        );
    }
    Ok(one([real(re)?, 0]))
}

/// How scalar operands (Python numbers, zero-dim arrays) reach the computation dtype.
#[derive(Clone, Copy, Debug)]
pub(super) struct Conversion {
    python_int: PythonInt,
    /// Through float32 first (PyTorch's `c10::Half(float)`, `c10::BFloat16(float)`;
    /// TensorFlow's float32 tensor of a Python number): a Python float or a zero-dim float64
    /// into float16/bfloat16 is rounded twice, and so are a Python complex or a zero-dim
    /// complex128 into complex32/bcomplex32 (`c10::complex<Half>` of a `complex<float>`).
    via_float32: bool,
    /// Every array operand narrows into float16/bfloat16 through float32
    /// (`Narrowing::ViaFloat32`, `astype::through_float32`); so do the scalars (`via_float32`).
    narrow: bool,
    /// Under `PythonInt::Cast`, the integer join a Python int is cast to before it reaches a
    /// computation dtype the op rule chose (TensorFlow: `uint8 / -129` divides by 127.0).
    int_join: Option<DType>,
    /// The policy converts to and from PyTorch's float8 dtypes as PyTorch does
    /// (`Float8Conversion::C10`, `astype::c10_into`).
    c10: bool,
    /// Subnormal operands read as zeros (`Subnormals::Flush`, where the computation dtype
    /// flushes: `flush::read`).
    flush: bool,
    /// A real float converts to a sub-byte integer as ml_dtypes does (`IntnConversion::Wrap`).
    wrap_intn: bool,
    /// The computation dtype is an ml_dtypes float or complex type (a user-defined DType of
    /// NumPy's), which reads a Python int as a C `long`: one outside int64 raises TypeError.
    long_ints: bool,
}

impl Conversion {
    pub(super) fn of(policy: &Generated, compute: DType) -> Conversion {
        let narrow = policy.semantics.narrowing == Narrowing::ViaFloat32;
        Conversion {
            python_int: policy.semantics.python_int,
            via_float32: (policy.semantics.reduced_float_scalars != ScalarPrecision::Result
                || narrow)
                && matches!(compute.part(), DType::FLOAT16 | DType::BFLOAT16),
            narrow,
            int_join: None,
            c10: policy.semantics.float8_conversion == Float8Conversion::C10,
            flush: policy.semantics.subnormals == Subnormals::Flush && flush::flushes(compute),
            wrap_intn: policy.semantics.intn_conversion == IntnConversion::Wrap,
            long_ints: policy.user_dtype(compute) && (compute.is_float() || compute.is_complex()),
        }
    }

    /// The same, reading subnormal operands as they are (`where` chooses without arithmetic;
    /// the software `fmod` of `remainder`).
    pub(super) fn keeping_subnormals(self) -> Conversion {
        Conversion {
            flush: false,
            ..self
        }
    }

    /// The same, with `join` the operands' join where an op rule made the computation dtype
    /// something else (`true_divide` of integers): a Python int is cast to an integer join
    /// first under `PythonInt::Cast`.
    pub(super) fn through(self, join: DType) -> Conversion {
        let cast = self.python_int == PythonInt::Cast && matches!(join, DType::Int { .. });
        Conversion {
            int_join: cast.then_some(join),
            ..self
        }
    }

    /// A scalar operand as a one-element array of `compute` (read as the library's arithmetic
    /// reads it: a subnormal is a zero under `flush`).
    pub(super) fn scalar(self, s: Scalar, compute: DType) -> Result<Array, OpError> {
        let one = self.unflushed_scalar(s, compute)?;
        Ok(match self.flush {
            true => flush::read(&one).unwrap_or(one),
            false => one,
        })
    }

    fn unflushed_scalar(self, s: Scalar, compute: DType) -> Result<Array, OpError> {
        if let Scalar::Int(x) = s
            && self.long_ints
            && i64::try_from(x).is_err()
        {
            return err(
                ErrorKind::Unsupported,
                format!(
                    "Python integer {x} is outside int64, which ml_dtypes' {} reads a Python int \
                     as (it raises TypeError: \"expected number, got int\"); pass it as a float",
                    compute.name()
                ),
            );
        }
        if let (Scalar::Int(_), Some(join)) = (s, self.int_join) {
            return Ok(astype(&materialise(s, join, self.python_int)?, compute));
        }
        if self.c10 && Float8::of(compute).is_some() {
            return Ok(c10_astype(
                &materialise(s, DType::Float32, self.python_int)?,
                compute,
            ));
        }
        let s = match s {
            Scalar::Float(v) if self.via_float32 => Scalar::Float(v as f32 as f64),
            Scalar::Int(v) if self.via_float32 => Scalar::Float(v as f32 as f64),
            Scalar::Complex(r, i) if self.via_float32 => {
                Scalar::Complex(r as f32 as f64, i as f32 as f64)
            }
            s => s,
        };
        materialise(s, compute, self.python_int)
    }

    /// A float array (a complex one's real part) converted to a sub-byte integer `to` as
    /// ml_dtypes converts it, where the policy's library does (`IntnConversion::Wrap`; `None`
    /// otherwise).
    pub(super) fn intn(self, a: &Array, to: DType) -> Option<Array> {
        let sub_byte = matches!(to, DType::Int { bits, .. } if bits < 8);
        let real = a.dtype.is_float() || a.dtype.is_complex();
        (self.wrap_intn && sub_byte && real).then(|| intn_wrap_astype(a, to))
    }

    /// An array operand converted to `compute` where the policy's library converts it
    /// otherwise than once to nearest (else `None`: the loaders convert it once): into a
    /// float8 or out of one as PyTorch converts under `Float8Conversion::C10`, a zero-dim
    /// array through float32 under `via_float32`.
    pub(super) fn array(self, a: &Array, compute: DType) -> Option<Array> {
        if self.flush
            && let Some(read) = flush::read(a)
        {
            return Some(
                self.keeping_subnormals()
                    .array(&read, compute)
                    .unwrap_or(read),
            );
        }
        if let Some(wrapped) = self.intn(a, compute) {
            return Some(wrapped);
        }
        let float8 = |d| Float8::of(d).is_some();
        if self.c10 && a.dtype != compute && (float8(a.dtype) || float8(compute)) {
            return Some(c10_astype(a, compute));
        }
        if self.narrow
            && let Some(wide) = through_float32(a, compute)
        {
            return Some(astype(&wide, compute));
        }
        let float32 = if a.dtype.is_complex() {
            DType::Complex64
        } else {
            DType::Float32
        };
        (self.via_float32 && a.shape.is_empty() && a.dtype != compute)
            .then(|| astype(&astype(a, float32), compute))
    }
}

/// Every Python int operand is in the range the policy's library reads (`python_int_fits`),
/// whatever it meets: PyTorch's `clamp` takes a bound from 2^63 on as a number, converted to
/// the result dtype, not as the uint64 its binary ops make of it.
pub(super) fn python_ints_in_range(policy: &Generated, args: &[&Arg]) -> Result<(), OpError> {
    for arg in args {
        if let Arg::Scalar(Scalar::Int(x)) = arg {
            python_int_fits(policy, *x)?;
        }
    }
    Ok(())
}

/// Every Python int operand is one the policy's library reads: `python_int_fits`, and under
/// `PythonInt::Wrap` an int from 2^63 on (a uint64 to PyTorch) does not combine with a bool
/// array or with another Python bool, int or complex ("Promotion for uint16, uint32, uint64
/// types is not supported": PyTorch promotes uint64 only with a float, and a dimensioned or
/// zero-dim integer, float or complex array outranks the Python number).
pub(super) fn python_ints_fit(policy: &Generated, args: &[&Arg]) -> Result<(), OpError> {
    python_ints_in_range(policy, args)?;
    for (k, arg) in args.iter().enumerate() {
        let Arg::Scalar(Scalar::Int(x)) = arg else {
            continue;
        };
        let clash = args.iter().enumerate().find_map(|(j, o)| match o {
            _ if j == k => None,
            Arg::Array(a) if a.dtype == DType::Bool => Some("a bool array"),
            Arg::Scalar(Scalar::Bool(_)) => Some("a Python bool"),
            Arg::Scalar(Scalar::Int(y)) if *y < 1 << 63 => Some("a Python int (int64)"),
            Arg::Scalar(Scalar::Complex(..)) => Some("a Python complex"),
            _ => None,
        });
        if let (PythonInt::Wrap, true, Some(other)) =
            (policy.semantics.python_int, *x >= 1 << 63, clash)
        {
            return err(
                ErrorKind::Promotion,
                format!(
                    "Python integer {x} is a uint64 to the {} policy's library, which does not \
                     promote uint64 with {other}; use an int64 array",
                    policy.name
                ),
            );
        }
    }
    Ok(())
}
