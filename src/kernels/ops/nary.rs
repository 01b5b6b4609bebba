//! The n-ary ops `clip` and `where`: the result dtype is the n-ary join of the operands, each
//! converted to it once, with each library's conventions for scalar bounds and mixed operands.

use super::accept::{accepts, accepts_operands, canonical_arg};
use super::astype::{astype, map_chunks};
use super::binary::binary_within;
use super::flush;
use super::fused::split_pass;
use super::lanes::{canon32, canon64};
use super::scalar::{Conversion, int_range, materialise, python_ints_fit, python_ints_in_range};
use super::shape::{allocated, broadcast, expand, moved_into};
use super::vocab::{Arg, DEFAULT_MAX_ELEMENTS, ErrorKind, Op, OpError, Scalar, err, promotion};
use std::borrow::Cow;

use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::kernels::stream::{Isa, Store};
use crate::numeric::dtype::DType;
use crate::numeric::op::ClipBounds;
use crate::numeric::op::ClipComposition;
use crate::numeric::op::ClipMixedBounds;
use crate::numeric::op::OpId;
use crate::numeric::op::PythonInt;
use crate::numeric::op::Subnormals;
use crate::numeric::op::WhereScalars;
use crate::numeric::op::ZeroTies;
use crate::promote::Generated;

/// An operand of an n-ary op converted once to its computation dtype: an array by `astype`
/// (a zero-dim one through float32 where the policy's library rounds it so), a Python scalar by
/// the policy's scalar rules, except that under `PythonInt::Wrap` an int must be one the
/// integer result can take (`int_fits_nary`).
fn in_dtype(policy: &Generated, a: &Arg, compute: DType, strict: bool) -> Result<Array, OpError> {
    in_dtype_by(policy, Conversion::of(policy, compute), a, compute, strict)
}

/// A `where` operand in the result dtype: chosen, not computed with, so a library that flushes
/// subnormals (`Subnormals::Flush`) flushes only what its conversion to the result dtype does
/// (`flush::converted`: `where(c, float32, float64)` widens with DAZ; a Python float stays).
fn chosen(policy: &Generated, a: &Arg, compute: DType) -> Result<Array, OpError> {
    let conv = Conversion::of(policy, compute).keeping_subnormals();
    if let Arg::Array(arr) = a
        && let Some(read) = flush::converted_by(policy, arr, compute)
    {
        return in_dtype_by(policy, conv, &Arg::Array(read), compute, false);
    }
    in_dtype_by(policy, conv, a, compute, false)
}

fn in_dtype_by(
    policy: &Generated,
    conv: Conversion,
    a: &Arg,
    compute: DType,
    strict: bool,
) -> Result<Array, OpError> {
    match a {
        Arg::Array(arr) => Ok(conv
            .array(arr, compute)
            .unwrap_or_else(|| astype(arr, compute))),
        Arg::Scalar(s) => {
            if let (Scalar::Int(v), PythonInt::Wrap) = (s, policy.semantics.python_int) {
                int_fits_nary(policy, *v, compute, strict)?;
            }
            conv.scalar(*s, compute)
        }
    }
}

/// A Python int entering an n-ary op under `PythonInt::Wrap` (PyTorch): arithmetic wraps it,
/// but `where` converts it checked (a negative value may wrap into an unsigned dtype by two's
/// complement: `where(c, uint8, -1)` is 255, `where(c, int8, 300)` raises) and, `strict`,
/// `clamp` with `ClipBounds::Checked` wants it in the dtype's range once `saturated_int_bounds`
/// has taken a bound that bounds nothing to the dtype's limit.
fn int_fits_nary(policy: &Generated, v: i128, compute: DType, strict: bool) -> Result<(), OpError> {
    let DType::Int { bits, signed } = compute else {
        return Ok(());
    };
    let (lo, hi) = int_range(bits, signed);
    let fits = (lo..=hi).contains(&v) || (!signed && !strict && v < 0 && -v <= hi);
    if fits {
        return Ok(());
    }
    err(
        ErrorKind::Overflow,
        format!(
            "Python integer {v} does not fit {} (the {} policy's library raises for a scalar of \
             clamp or where it cannot convert); use an array or a value in range",
            compute.name(),
            policy.name
        ),
    )
}

/// `clip(x, lo, hi)` under `policy` (`np.clip`, `jnp.clip`, `torch.clamp`,
/// `tf.clip_by_value`): the result dtype is the n-ary join of all three operands (not a chain
/// of binary joins), every operand is converted to it once, then `minimum(maximum(x, lo), hi)`
/// with NumPy's NaN propagation; the three shapes broadcast together. Under
/// `ClipComposition::Pairwise` it is `maximum(minimum(x, hi), lo)`, each a binary op on the
/// operands as given, and the result keeps `x`'s shape. The result holds at most
/// [`DEFAULT_MAX_ELEMENTS`] (`apply` takes another limit).
pub fn clip(policy: &Generated, x: &Arg, lo: &Arg, hi: &Arg) -> Result<Array, OpError> {
    clip_with(policy, [x, lo, hi], DEFAULT_MAX_ELEMENTS, |dtype, shape| {
        Ok(Array::zeros(dtype, shape.to_vec())?)
    })
}

/// [`clip`] with a result of at most `max_elements`, into the storage `alloc` gives (called
/// once, with the result's dtype and shape, after the operands are checked): an array of the
/// result dtype clipped by two zero-dim bounds is one pass straight into it ([`clip_pass`]);
/// any other clip is computed, then copied into it.
pub(super) fn clip_with(
    policy: &Generated,
    [x, lo, hi]: [&Arg; 3],
    max_elements: usize,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    match clipped(policy, x, lo, hi, max_elements)? {
        Clipped::Computed(r) => moved_into(r, alloc),
        Clipped::Pass { x, bounds, ties } => {
            let mut out = allocated(alloc, x.dtype, &x.shape)?;
            clip_pass(x, bounds, ties, &mut out);
            Ok(out)
        }
    }
}

#[cfg(test)]
thread_local! {
    /// How many [`clip_pass`]es and [`select_pass`]es this thread began: tests check that a
    /// call took the one pass (or did not).
    pub(super) static ONE_PASSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What [`clipped`] decides: the computed result, or the one pass [`clip_pass`] makes of `x`.
enum Clipped<'a> {
    Computed(Array),
    Pass {
        x: &'a Array,
        /// The two bounds' bits in `x`'s dtype.
        bounds: [u64; 2],
        /// Which operand a tie of zeros gives (`ZeroTies::First` or `Second`).
        ties: ZeroTies,
    },
}

/// [`clip_with`] before its result is stored.
fn clipped<'a>(
    policy: &Generated,
    given: &'a Arg,
    lo: &Arg,
    hi: &Arg,
    max_elements: usize,
) -> Result<Clipped<'a>, OpError> {
    let computed = |r: Result<Array, OpError>| r.map(Clipped::Computed);
    let x = given;
    let (x, lo, hi) = (
        canonical_arg(policy, x),
        canonical_arg(policy, lo),
        canonical_arg(policy, hi),
    );
    let (x, lo, hi) = (x.as_ref(), lo.as_ref(), hi.as_ref());
    let dropped = dropped_int_bounds(policy, x, lo, hi);
    // One bound dropped: `_clip` calls `np.maximum(x, lo)` or `np.minimum(x, hi)`, whose
    // promotion and values the other bound alone decides (`clip(uint32, inf, 2**63 - 1)` is
    // inf); both dropped: the dtype's limits, which bound nothing (`np.positive(x)`).
    match &dropped {
        Some((Some(_), None)) => {
            return computed(binary_within(policy, Op::Minimum, x, hi, max_elements));
        }
        Some((None, Some(_))) => {
            return computed(binary_within(policy, Op::Maximum, x, lo, max_elements));
        }
        _ => {}
    }
    let (lo, hi) = match &dropped {
        Some((Some(l), Some(h))) => (l, h),
        _ => (lo, hi),
    };
    if policy.semantics.clip_mixed_bounds == ClipMixedBounds::Unsupported {
        let dimensioned = |a: &Arg| matches!(a, Arg::Array(arr) if !arr.shape.is_empty());
        let number = |a: &Arg| matches!(a, Arg::Scalar(_));
        if dimensioned(lo) && number(hi) || number(lo) && dimensioned(hi) {
            return err(
                ErrorKind::Unsupported,
                format!(
                    "clip with one bound a Python number and the other an array: the {} \
                     policy's library takes both bounds as numbers or both as arrays (PyTorch's \
                     clamp raises TypeError); pass both the same way",
                    policy.name
                ),
            );
        }
    }
    // Pairwise, clip is two binary ops, each promoting its own pair: no n-ary type
    // (TensorFlow's safe mode clips uint16 by int8 and float64 bounds, whose n-ary join it
    // refuses, as minimum(uint16, float64) then maximum(float64, int8)). Each step checks its
    // own operands, in that order: `minimum(x, hi)` converts `hi` and refuses a complex `x`
    // before `lo` is read.
    if policy.semantics.clip_composition == ClipComposition::Pairwise {
        // Each step keeps `x`'s shape, checked after it computes (`tf.clip_by_value`:
        // `values.shape.merge_with(t_min.shape)`): a promotion error of the first step comes
        // before a shape error.
        let keeps_shape = |r: Array| {
            if r.shape[..] == *x.shape() {
                return Ok(r);
            }
            err(
                ErrorKind::Input,
                format!(
                    "bounds of shapes {:?} and {:?} broadcast the clipped operand's {:?} to \
                     {:?}; the {} policy's library keeps its shape (TensorFlow raises \
                     ValueError): broadcast the operand first",
                    lo.shape(),
                    hi.shape(),
                    x.shape(),
                    r.shape,
                    policy.name
                ),
            )
        };
        let below = keeps_shape(binary_within(policy, Op::Minimum, x, hi, max_elements)?)?;
        return computed(keeps_shape(binary_within(
            policy,
            Op::Maximum,
            &Arg::Array(below),
            lo,
            max_elements,
        )?));
    }
    if policy.semantics.clip_bounds == ClipBounds::Checked {
        // PyTorch's clamp promotes no float tensor with its bounds (below), so an int from
        // 2^63 on is a number to convert there; beside any other tensor the bounds' own types
        // are promoted together first, where its uint64 meets another Python int, bool or
        // complex bound ("Promotion for uint16, uint32, uint64 types is not supported"), but
        // not the tensor: `clamp(bool, 2**63, 1.5)` is float32.
        // (That promotion comes after a complex tensor is refused, below.)
        python_ints_in_range(policy, &[x, lo, hi])?;
    } else {
        python_ints_fit(policy, &[x, lo, hi])?;
    }
    accepts_operands(
        policy,
        OpId::CLIP,
        &[x.operand(), lo.operand(), hi.operand()],
    )?;
    // PyTorch's `clamp(Tensor, Scalar?, Scalar?)` promotes only an integer or bool tensor with
    // its Python-number bounds: a float tensor keeps its dtype, and a Python complex bound is
    // converted to a real number, checked ("value cannot be converted to type double without
    // overflow" where its imaginary part is not zero; its real part otherwise).
    let real_bounds;
    let (lo, hi) = if policy.semantics.clip_bounds == ClipBounds::Checked
        && matches!(x, Arg::Array(a) if a.dtype.is_float() && !a.dtype.is_complex())
        && matches!((lo, hi), (Arg::Scalar(_), Arg::Scalar(_)))
    {
        let real = |b: &Arg| match b {
            Arg::Scalar(Scalar::Complex(re, im)) if *im != 0.0 => err(
                ErrorKind::Overflow,
                format!(
                    "clamp converts a Python complex bound to a real number beside a float \
                     array in the {} policy's library, which raises for {} (a nonzero \
                     imaginary part); pass a real bound",
                    policy.name,
                    shown(Scalar::Complex(*re, *im))
                ),
            ),
            Arg::Scalar(Scalar::Complex(re, _)) => Ok(Arg::Scalar(Scalar::Float(*re))),
            b => Ok(b.clone()),
        };
        real_bounds = (real(lo)?, real(hi)?);
        (&real_bounds.0, &real_bounds.1)
    } else {
        (lo, hi)
    };
    // A complex array computes in a complex dtype whatever its bounds: a library that
    // declares clip's kinds (`[ops.clip] kinds`, PyTorch's) refuses it before it promotes
    // (`torch.clamp(complex128, False, uint32)` is "not supported for complex", not a
    // promotion error).
    if let Arg::Array(a) = x
        && a.dtype.is_complex()
        && policy.op_kinds.iter().any(|(o, _)| *o == OpId::CLIP)
    {
        accepts(policy, OpId::CLIP, a.dtype)?;
    }
    if policy.semantics.clip_bounds == ClipBounds::Checked
        && !matches!(x, Arg::Array(a) if a.dtype.is_float() && !a.dtype.is_complex())
    {
        // A bool tensor ranks below the bounds' uint64, which would be the result's dtype,
        // unless a Python float bound makes it float32 (`clamp(bool, 2**63, 2**63)` raises).
        let float_bound = [lo, hi]
            .iter()
            .any(|b| matches!(b, Arg::Scalar(Scalar::Float(_))));
        if matches!(x, Arg::Array(a) if a.dtype == DType::Bool) && !float_bound {
            python_ints_fit(policy, &[x, lo, hi])?;
        } else {
            python_ints_fit(policy, &[lo, hi])?;
        }
    }
    let compute = policy
        .nary_op_type(OpId::CLIP, &[x.operand(), lo.operand(), hi.operand()])
        .map_err(promotion)?;
    let strict = policy.semantics.clip_bounds == ClipBounds::Checked;
    // PyTorch's `clamp` with two Python-number bounds, one of them NaN, fills the result with
    // NaN before any kernel or bound check (`clamp(float8_e4m3fn, nan, 2.5)` is all NaN,
    // although torch has no float8 clamp).
    let nan = |b: &Arg| matches!(b, Arg::Scalar(Scalar::Float(v)) if v.is_nan());
    if strict
        && matches!((lo, hi), (Arg::Scalar(_), Arg::Scalar(_)))
        && (nan(lo) || nan(hi))
        && compute.is_float()
        && !compute.is_complex()
    {
        let fill = in_dtype(
            policy,
            &Arg::Scalar(Scalar::Float(f64::NAN)),
            compute,
            strict,
        )?;
        return computed(expand(&fill, x.shape()));
    }
    accepts(policy, OpId::CLIP, compute)?;
    let cast = |a: &Arg| in_dtype(policy, a, compute, strict).map(Arg::Array);
    if policy.semantics.clip_composition == ClipComposition::Chained {
        // `jnp.clip`: `maximum(lo, x)` in its own pair's dtype, then `minimum(hi, ·)` with
        // both converted to the n-ary type (an int64 `x` bounded by a bfloat16 passes through
        // bfloat16 on its way to float32).
        let floor = binary_within(policy, Op::Maximum, lo, x, max_elements)?;
        return computed(binary_within(
            policy,
            Op::Minimum,
            &cast(hi)?,
            &cast(&Arg::Array(floor))?,
            max_elements,
        ));
    }
    let (lo, hi) = if strict {
        saturated_int_bounds(lo, hi, compute)?
    } else {
        (Cow::Borrowed(lo), Cow::Borrowed(hi))
    };
    let (lo, hi) = (lo.as_ref(), hi.as_ref());
    if strict {
        for bound in [lo, hi] {
            cast(bound)?; // a Python int out of the dtype's range first
            checked_scalar(bound, compute, "clamp")?;
        }
    }
    // NumPy's clip and PyTorch's clamp with two zero-dim bounds (Python numbers or zero-dim
    // arrays) run a loop of their own, which keeps `x` on a tie of zeros where `maximum` would
    // not.
    let scalar_bounds;
    let policy = if matches!(
        policy.semantics.zero_ties,
        ZeroTies::Operand | ZeroTies::Vectors
    ) && lo.shape().is_empty()
        && hi.shape().is_empty()
    {
        scalar_bounds = Generated {
            semantics: crate::numeric::op::Semantics {
                zero_ties: ZeroTies::First,
                ..policy.semantics
            },
            ..*policy
        };
        &scalar_bounds
    } else {
        policy
    };
    let (lo, hi) = (cast(lo)?, cast(hi)?);
    // An array already of the result dtype between two zero-dim bounds: one pass, where the
    // two steps below are one compare-and-select each (integers of 8 to 64 bits; float32 and
    // float64 where ties of zeros go to one side and nothing is flushed).
    let real = matches!(compute, DType::Float32 | DType::Float64)
        && matches!(
            policy.semantics.zero_ties,
            ZeroTies::First | ZeroTies::Second
        )
        && policy.semantics.subnormals != Subnormals::Flush;
    let int = matches!(
        compute,
        DType::Int {
            bits: 8 | 16 | 32 | 64,
            ..
        }
    );
    if let (Arg::Array(xa), Arg::Array(la), Arg::Array(ha)) = (given, &lo, &hi)
        && xa.dtype == compute
        && policy.canonical_dtype(compute) == compute
        && (real || int)
        && la.shape.is_empty()
        && ha.shape.is_empty()
    {
        let bound = |b: &Array| b.bits()[0][0];
        return Ok(Clipped::Pass {
            x: xa,
            bounds: [bound(la), bound(ha)],
            ties: policy.semantics.zero_ties,
        });
    }
    let x = cast(x)?;
    if let (Arg::Array(xa), Arg::Array(la), Arg::Array(ha)) = (&x, &lo, &hi)
        && matches!(compute, DType::Complex64 | DType::Complex128)
    {
        let shape = broadcast(
            &broadcast(&xa.shape, &la.shape, max_elements)?,
            &ha.shape,
            max_elements,
        )?;
        return Ok(Clipped::Computed(super::complex::clip_complex(
            xa, la, ha, &shape,
        )?));
    }
    let floor = binary_within(policy, Op::Maximum, &x, &lo, max_elements)?;
    computed(binary_within(
        policy,
        Op::Minimum,
        &Arg::Array(floor),
        &hi,
        max_elements,
    ))
}

/// `minimum(maximum(x, lo), hi)` of an array of integers of 8 to 64 bits, float32 or float64
/// and two bounds of its dtype (`bounds`, as bits), in one pass into `out` of its dtype and
/// length, element by element as the two binary steps compute it: integers compare by value;
/// a float NaN anywhere is the canonical NaN, and a tie of zeros of opposite signs gives the
/// step's first operand under `ZeroTies::First` (`x`, then the floor) and its second otherwise.
fn clip_pass(x: &Array, [lo, hi]: [u64; 2], ties: ZeroTies, out: &mut Array) {
    #[cfg(test)]
    ONE_PASSES.with(|c| c.set(c.get() + 1));
    let signed = matches!(x.dtype, DType::Int { signed: true, .. });
    let float = x.dtype.is_float();
    let first = ties == ZeroTies::First;
    macro_rules! ints {
        ($i:expr, $o:expr, $u:ty, $s:ty) => {
            if signed {
                let (lo, hi) = (lo as $u as $s, hi as $u as $s);
                map_chunks($i, $o, move |v: $u| (v as $s).max(lo).min(hi) as $u)
            } else {
                let (lo, hi) = (lo as $u, hi as $u);
                map_chunks($i, $o, move |v: $u| v.max(lo).min(hi))
            }
        };
    }
    // Written as the selects `maxps`/`minps` are (`a > b ? a : b`, the second operand on a
    // tie or a NaN), so that each step is one instruction.
    macro_rules! floats {
        ($i:expr, $o:expr, $f:ty, $canon:ident) => {{
            let (lo, hi) = (<$f>::from_bits(lo as _), <$f>::from_bits(hi as _));
            if lo.is_nan() || hi.is_nan() {
                // Either step then makes every element NaN.
                map_chunks($i, $o, move |_| $canon(<$f>::NAN))
            } else if first {
                // `maximum(x, lo)` keeping `x` on a tie is `lo > x ? lo : x`, and keeps a NaN
                // `x`; so does the second step.
                map_chunks($i, $o, move |v| {
                    let v = <$f>::from_bits(v);
                    let floor = if lo > v { lo } else { v };
                    $canon(if hi < floor { hi } else { floor })
                })
            } else {
                map_chunks($i, $o, move |v| {
                    let v = <$f>::from_bits(v);
                    let floor = if v > lo { v } else { lo };
                    let r = if floor < hi { floor } else { hi };
                    $canon(if v.is_nan() { v } else { r })
                })
            }
        }};
    }
    match (&x.data, &mut out.data) {
        (Data::U32(i), Data::U32(o)) if float => floats!(i, o, f32, canon32),
        (Data::U64(i), Data::U64(o)) if float => floats!(i, o, f64, canon64),
        (Data::U8(i), Data::U8(o)) => ints!(i, o, u8, i8),
        (Data::U16(i), Data::U16(o)) => ints!(i, o, u16, i16),
        (Data::U32(i), Data::U32(o)) => ints!(i, o, u32, i32),
        (Data::U64(i), Data::U64(o)) => ints!(i, o, u64, i64),
        _ => unreachable!("an integer of 8 to 64 bits, float32 or float64, kept by the result"),
    }
}

/// NumPy's `np.clip` of an integer array of its own with Python-int bounds (`ClipBounds::Drop`):
/// a lower bound at or below the dtype's minimum, or an upper bound at or above its maximum,
/// is dropped (`_clip` passes `None`); each dropped bound is given as that limit. `None` when
/// no bound is dropped.
fn dropped_int_bounds(
    policy: &Generated,
    x: &Arg,
    lo: &Arg,
    hi: &Arg,
) -> Option<(Option<Arg>, Option<Arg>)> {
    let Arg::Array(a) = x else { return None };
    let DType::Int { bits, signed } = a.dtype else {
        return None;
    };
    if policy.semantics.clip_bounds != ClipBounds::Drop || policy.user_dtype(a.dtype) {
        return None;
    }
    let (min, max) = int_range(bits, signed);
    let past = |b: &Arg, limit: i128, below: bool| match b {
        Arg::Scalar(Scalar::Int(v)) if (below && *v <= limit) || (!below && *v >= limit) => {
            Some(Arg::Scalar(Scalar::Int(limit)))
        }
        _ => None,
    };
    match (past(lo, min, true), past(hi, max, false)) {
        (None, None) => None,
        dropped => Some(dropped),
    }
}

/// PyTorch's `clamp` of an integer tensor with Python-int bounds (`ClipBounds::Checked`): a
/// lower bound above the dtype's range or an upper bound below it is an `overflow` error
/// ("Clamp min value 300 is outside the representable range of Byte", the lower bound checked
/// first); a bound beyond the other end bounds nothing and is taken at the dtype's limit
/// (`clamp(uint8, -129, 255)` leaves every element), measured on torch 2.15.
fn saturated_int_bounds<'a>(
    lo: &'a Arg,
    hi: &'a Arg,
    compute: DType,
) -> Result<(Cow<'a, Arg>, Cow<'a, Arg>), OpError> {
    let DType::Int { bits, signed } = compute else {
        return Ok((Cow::Borrowed(lo), Cow::Borrowed(hi)));
    };
    let (min, max) = int_range(bits, signed);
    let outside = |which: &str, v: i128| {
        err(
            ErrorKind::Overflow,
            format!(
                "clamp {which} value {v} is outside the range of {} (PyTorch raises \"Clamp \
                 {which} value is outside the representable range\"); pass a bound the dtype holds",
                compute.name()
            ),
        )
    };
    if let Arg::Scalar(Scalar::Int(v)) = lo
        && *v > max
    {
        return outside("min", *v);
    }
    if let Arg::Scalar(Scalar::Int(v)) = hi
        && *v < min
    {
        return outside("max", *v);
    }
    let saturate = |a: &'a Arg| match a {
        Arg::Scalar(Scalar::Int(v)) => Cow::Owned(Arg::Scalar(Scalar::Int((*v).clamp(min, max)))),
        other => Cow::Borrowed(other),
    };
    Ok((saturate(lo), saturate(hi)))
}

/// A Python number that `op` converts checked into `compute` (`ClipBounds::Checked`'s clip
/// bounds, `WhereScalars::Checked`'s where values): greater in magnitude than the dtype's
/// largest finite value, it is an `overflow` error.
fn checked_scalar(value: &Arg, compute: DType, op: &str) -> Result<(), OpError> {
    let Arg::Scalar(s) = value else {
        return Ok(());
    };
    if !past_finite_range(*s, compute) {
        return Ok(());
    }
    err(
        ErrorKind::Overflow,
        format!(
            "the Python number {} is past {}'s range (PyTorch's {op} raises: \"value cannot be \
             converted without overflow\"); pass a value the result dtype holds",
            shown(*s),
            compute.name()
        ),
    )
}

/// Whether a Python number has a finite value (or part) greater in magnitude than the largest
/// finite value of the float or complex dtype `compute` (never for other dtypes, nor for ±inf
/// and NaN, which every float format holds or represents).
fn past_finite_range(s: Scalar, compute: DType) -> bool {
    let Some(format) = compute.float_format() else {
        return false;
    };
    let max = format.max_finite().to_f64();
    let past = |v: f64| v.is_finite() && v.abs() > max;
    match s {
        Scalar::Bool(_) => false,
        Scalar::Int(v) => (v as f64).abs() > max,
        Scalar::Float(v) => past(v),
        Scalar::Complex(re, im) => past(re) || past(im),
    }
}

/// A Python number as an error message shows it.
fn shown(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(v) => v.to_string(),
        Scalar::Float(v) => format!("{v:e}"),
        Scalar::Complex(re, im) => format!("({re:e}, {im:e})"),
    }
}

/// Whether a Python scalar is true as a condition (nonzero; NaN is true, as in NumPy).
fn truthy(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(x) => x != 0,
        Scalar::Float(x) => x != 0.0,
        Scalar::Complex(r, i) => r != 0.0 || i != 0.0,
    }
}

/// `where(cond, x, y)` under `policy` (`np.where`, `jnp.where`, `torch.where`): the result
/// dtype is the join of the two values (their n-ary join, categories included; the condition
/// takes no part), each value converted to it once; an element is `x`'s where the condition
/// is nonzero (NaN counts as true, −0.0 as false), `y`'s elsewhere; the three shapes broadcast
/// together, into at most [`DEFAULT_MAX_ELEMENTS`] (`apply` takes another limit).
pub fn select(policy: &Generated, cond: &Arg, x: &Arg, y: &Arg) -> Result<Array, OpError> {
    select_with(
        policy,
        [cond, x, y],
        DEFAULT_MAX_ELEMENTS,
        |dtype, shape| Ok(Array::zeros(dtype, shape.to_vec())?),
    )
}

/// [`select`] with a result of at most `max_elements`.
/// [`select`] with a result of at most `max_elements`, into the storage `alloc` gives (called
/// once, with the result's dtype and shape, after the operands are checked): a bool condition
/// of the result's shape choosing between values each of the result's dtype and shape, or
/// zero-dim, is one pass straight into it ([`select_pass`]); any other `where` is computed,
/// then copied into it.
pub(super) fn select_with(
    policy: &Generated,
    [cond, x, y]: [&Arg; 3],
    max_elements: usize,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    let (cond, x, y) = (
        canonical_arg(policy, cond),
        canonical_arg(policy, x),
        canonical_arg(policy, y),
    );
    let (cond, x, y) = (cond.as_ref(), x.as_ref(), y.as_ref());
    let wrap = policy.semantics.where_scalars == WhereScalars::Wrap;
    if !wrap {
        python_ints_fit(policy, &[x, y])?;
    }
    for a in [x, y] {
        match a {
            Arg::Scalar(Scalar::Int(v)) if wrap && !(-(1i128 << 63)..1i128 << 64).contains(v) => {
                return err(
                    ErrorKind::Overflow,
                    format!(
                        "Python integer {v} is outside [-2**63, 2**64), which the {} policy's \
                         where converts (NumPy raises OverflowError); use an array",
                        policy.name
                    ),
                );
            }
            _ => {}
        }
    }
    accepts_operands(policy, OpId::WHERE, &[x.operand(), y.operand()])?;
    let compute = policy
        .nary_type(&[x.operand(), y.operand()])
        .map_err(promotion)?;
    // PyTorch reads a Python int from 2^63 on as a uint64 (beside any other Python int or bool
    // `python_ints_fit` refused it above): two such ints choose between uint64s
    // (`torch.where(c, 2**63, 2**64 - 1)` is uint64; found by `scripts/fuzz_libraries.py torch
    // --seed 200105`).
    let compute = match (x, y, policy.semantics.python_int) {
        (Arg::Scalar(Scalar::Int(p)), Arg::Scalar(Scalar::Int(q)), PythonInt::Wrap)
            if *p >= 1 << 63 && *q >= 1 << 63 =>
        {
            DType::Int {
                bits: 64,
                signed: false,
            }
        }
        _ => compute,
    };
    accepts(policy, OpId::WHERE, compute)?;
    // A float16 or bfloat16 result rounds the number (to ±inf) in PyTorch's where; a complex
    // one, complex32 too, raises.
    let wide = compute.is_complex() || matches!(compute, DType::Float32 | DType::Float64);
    if policy.semantics.where_scalars == WhereScalars::Checked && wide {
        checked_scalar(x, compute, "where")?;
        checked_scalar(y, compute, "where")?;
    }
    let shape = broadcast(
        &broadcast(cond.shape(), x.shape(), max_elements)?,
        y.shape(),
        max_elements,
    )?;
    // Under `WhereScalars::Wrap` a Python int wraps into an integer result (and converts to a
    // float or complex one by its value).
    let value = |a: &Arg| match a {
        Arg::Scalar(s @ Scalar::Int(_)) if wrap => materialise(*s, compute, PythonInt::Wrap),
        _ => chosen(policy, a, compute),
    };
    // A value of the result's dtype and shape is read in place (converting it to its own
    // dtype copies it, and flushes nothing); a zero-dim one is converted, one element.
    fn direct<'a>(
        a: &'a Arg,
        compute: DType,
        shape: &[usize],
        value: &dyn Fn(&Arg) -> Result<Array, OpError>,
    ) -> Option<Result<Cow<'a, Array>, OpError>> {
        match a {
            Arg::Array(v) if v.dtype == compute && v.shape[..] == *shape => {
                Some(Ok(Cow::Borrowed(v)))
            }
            a if a.shape().is_empty() => Some(value(a).map(Cow::Owned)),
            _ => None,
        }
    }
    if let Arg::Array(c) = cond
        && c.dtype == DType::Bool
        && c.shape[..] == shape[..]
        && let (Some(xv), Some(yv)) = (
            direct(x, compute, &shape, &value),
            direct(y, compute, &shape, &value),
        )
    {
        let (xv, yv) = (xv?, yv?);
        let mut out = allocated(alloc, compute, &shape)?;
        select_pass(&c.data, &xv.data, &yv.data, &mut out.data);
        return Ok(out);
    }
    let cond = match cond {
        Arg::Array(a) => {
            let read = flush::converted_by(policy, a, DType::Bool);
            astype(read.as_ref().unwrap_or(a), DType::Bool)
        }
        Arg::Scalar(s) => {
            Array::from_bits(DType::Bool, vec![], &[[truthy(*s) as u64, 0]]).expect("one element")
        }
    };
    let (x, y) = (value(x)?, value(y)?);
    let full = |a: Array| {
        if a.shape[..] == shape[..] {
            Ok(a)
        } else {
            expand(&a, &shape)
        }
    };
    let (c, x, y) = (full(cond)?, full(x)?, full(y)?);
    let Data::U8(c) = &c.data else {
        unreachable!("bool is stored in bytes")
    };
    fn pick<T: Copy>(c: &[u8], x: &[T], y: &[T]) -> Vec<T> {
        c.iter()
            .zip(x.iter().zip(y))
            .map(|(&c, (&x, &y))| if c != 0 { x } else { y })
            .collect()
    }
    let data = match (&x.data, &y.data) {
        (Data::U8(x), Data::U8(y)) => Data::U8(pick(c, x, y).into()),
        (Data::U16(x), Data::U16(y)) => Data::U16(pick(c, x, y).into()),
        (Data::U32(x), Data::U32(y)) => Data::U32(pick(c, x, y).into()),
        (Data::U64(x), Data::U64(y)) => Data::U64(pick(c, x, y).into()),
        (Data::C32(x), Data::C32(y)) => Data::C32(pick(c, x, y).into()),
        (Data::C64(x), Data::C64(y)) => Data::C64(pick(c, x, y).into()),
        (Data::C128(x), Data::C128(y)) => Data::C128(pick(c, x, y).into()),
        _ => unreachable!("both values are in the result dtype"),
    };
    moved_into(Array::new(compute, shape, data)?, alloc)
}

/// `out[i] = if cond[i] != 0 { x[i] } else { y[i] }` over storage of one type, where `x` and
/// `y` each hold `out`'s length of elements or one (a zero-dim value, read at every `i`);
/// `cond` (bool storage) holds `out`'s length. In pieces over threads as a fused pass.
fn select_pass(cond: &Data, x: &Data, y: &Data, out: &mut Data) {
    #[cfg(test)]
    ONE_PASSES.with(|c| c.set(c.get() + 1));
    let Data::U8(c) = cond else {
        unreachable!("bool is stored in bytes")
    };
    fn go<T: Copy + Send + Sync>(c: &[u8], x: &[T], y: &[T], out: &mut [T]) {
        let n = out.len();
        let read = n + [x, y].iter().map(|v| size_of_val(*v)).sum::<usize>();
        let isa = Isa::detect();
        split_pass(out, read, Store::Cached, |s, o| {
            fn part<T>(v: &[T], n: usize, at: usize, len: usize) -> &[T] {
                if v.len() == n {
                    &v[at..at + len]
                } else {
                    &v[..1]
                }
            }
            let len = o.len();
            choose_on(
                isa,
                &c[s..s + len],
                part(x, n, s, len),
                part(y, n, s, len),
                o,
            );
        });
    }
    match (x, y, out) {
        (Data::U8(x), Data::U8(y), Data::U8(o)) => go(c, x, y, o),
        (Data::U16(x), Data::U16(y), Data::U16(o)) => go(c, x, y, o),
        (Data::U32(x), Data::U32(y), Data::U32(o)) => go(c, x, y, o),
        (Data::U64(x), Data::U64(y), Data::U64(o)) => go(c, x, y, o),
        (Data::C32(x), Data::C32(y), Data::C32(o)) => go(c, x, y, o),
        (Data::C64(x), Data::C64(y), Data::C64(o)) => go(c, x, y, o),
        (Data::C128(x), Data::C128(y), Data::C128(o)) => go(c, x, y, o),
        _ => unreachable!("both values and the result are of one dtype"),
    }
}

/// [`select_pass`]'s loop over one piece, compiled for `isa` (the select vectorises as a
/// compare and a blend of the two loaded values).
fn choose_on<T: Copy>(isa: Isa, c: &[u8], x: &[T], y: &[T], o: &mut [T]) {
    #[inline(always)]
    fn choose<T: Copy>(c: &[u8], x: &[T], y: &[T], o: &mut [T]) {
        let n = o.len();
        // Both values loaded, then a blend: LLVM turns a plain `if` into a load from the
        // chosen address, a gather per vector (float64 at 1e3: 166 ns a pass on AVX-512, 444 ns
        // on AVX2, against 104 ns so, measured outside the crate).
        let pick = |c: u8, x: T, y: T| std::hint::select_unpredictable(c != 0, x, y);
        match (x.len() == n, y.len() == n) {
            (true, true) => {
                for ((o, &c), (&x, &y)) in o.iter_mut().zip(c).zip(x.iter().zip(y)) {
                    *o = pick(c, x, y);
                }
            }
            (true, false) => {
                let y = y[0];
                for ((o, &c), &x) in o.iter_mut().zip(c).zip(x) {
                    *o = pick(c, x, y);
                }
            }
            (false, true) => {
                let x = x[0];
                for ((o, &c), &y) in o.iter_mut().zip(c).zip(y) {
                    *o = pick(c, x, y);
                }
            }
            (false, false) => {
                let (x, y) = (x[0], y[0]);
                for (o, &c) in o.iter_mut().zip(c) {
                    *o = pick(c, x, y);
                }
            }
        }
    }
    crate::kernels::stream::compiled_for!(isa, [T: Copy]
        (c: &[u8], x: &[T], y: &[T], o: &mut [T]) => choose(c, x, y, o))
}
