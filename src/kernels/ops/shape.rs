//! Shapes: NumPy broadcasting, an operand expanded to the result's shape, a caller's output
//! checked, and the result-size limit every kernel asks before it allocates.

use super::vocab::{ErrorKind, OpError, err};
use crate::kernels::array::Data;
use crate::kernels::array::{Array, Shape};
use crate::numeric::dtype::DType;

/// `Err` when a result of `shape` would hold more than `max` elements (or overflows).
pub(super) fn check_result_size(
    shape: &[usize],
    max: usize,
    what: impl FnOnce() -> String,
) -> Result<(), OpError> {
    match shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) {
        Some(n) if n <= max => Ok(()),
        _ => err(
            ErrorKind::Input,
            format!(
                "{} gives shape {shape:?}, over the limit of {max} elements (raise it with --max-elements)",
                what()
            ),
        ),
    }
}

/// NumPy broadcasting of two shapes, whose result may hold at most `max_elements`.
pub fn broadcast(a: &[usize], b: &[usize], max_elements: usize) -> Result<Shape, OpError> {
    let n = a.len().max(b.len());
    let mut out: Shape = smallvec::smallvec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let y = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return err(
                ErrorKind::Input,
                format!("shapes {a:?} and {b:?} do not broadcast"),
            );
        };
    }
    // Inputs are real arrays, but their broadcast product can be out of reach.
    check_result_size(&out, max_elements, || {
        format!("broadcasting {a:?} with {b:?}")
    })?;
    Ok(out)
}

/// `a` as an array of `shape` (which it broadcasts to): itself where it has that shape, else
/// [`expand`]ed; a `memory` error when the expansion cannot be allocated.
pub(super) fn whole<'a>(
    a: &'a Array,
    shape: &[usize],
) -> Result<std::borrow::Cow<'a, Array>, OpError> {
    Ok(match a.shape[..] == shape[..] {
        true => std::borrow::Cow::Borrowed(a),
        false => std::borrow::Cow::Owned(expand(a, shape)?),
    })
}

/// `a` repeated to `shape` (which it broadcasts to), contiguous.
pub(super) fn expand(a: &Array, shape: &[usize]) -> Result<Array, OpError> {
    let offset = shape.len() - a.shape.len();
    // Strides of `a` in the output's index space (0 on broadcast dimensions).
    let mut strides = vec![0usize; shape.len()];
    let mut s = 1;
    for d in (0..a.shape.len()).rev() {
        strides[d + offset] = if a.shape[d] == 1 { 0 } else { s };
        s *= a.shape[d];
    }
    let mut out = Array::zeros(a.dtype, shape.to_vec())?;
    match (&a.data, &mut out.data) {
        (Data::U8(v), Data::U8(o)) => expand_rows(v, &strides, shape, o),
        (Data::U16(v), Data::U16(o)) => expand_rows(v, &strides, shape, o),
        (Data::U32(v), Data::U32(o)) => expand_rows(v, &strides, shape, o),
        (Data::U64(v), Data::U64(o)) => expand_rows(v, &strides, shape, o),
        (Data::C32(v), Data::C32(o)) => expand_rows(v, &strides, shape, o),
        (Data::C64(v), Data::C64(o)) => expand_rows(v, &strides, shape, o),
        (Data::C128(v), Data::C128(o)) => expand_rows(v, &strides, shape, o),
        _ => unreachable!("zeros of the same dtype"),
    }
    Ok(out)
}

/// Fills `out` (row-major, of `shape`) from `src` read at `strides`, a row at a time: the last
/// dimension is either copied (stride 1) or one element repeated (stride 0). No index is
/// stored, so the only memory an expansion takes is its result.
fn expand_rows<T: Copy>(src: &[T], strides: &[usize], shape: &[usize], out: &mut [T]) {
    let Some((&row, outer)) = shape.split_last() else {
        out[0] = src[0];
        return;
    };
    if row == 0 || out.is_empty() {
        return;
    }
    let step = strides[shape.len() - 1];
    let mut counter = vec![0usize; outer.len()];
    for chunk in out.chunks_exact_mut(row) {
        let base: usize = counter.iter().zip(strides).map(|(c, s)| c * s).sum();
        if step == 0 {
            chunk.fill(src[base]);
        } else {
            chunk.copy_from_slice(&src[base..base + row]);
        }
        for d in (0..outer.len()).rev() {
            counter[d] += 1;
            if counter[d] < outer[d] {
                break;
            }
            counter[d] = 0;
        }
    }
}

/// The storage `alloc` gives for a result of `dtype` and `shape` (a new array, or the caller's
/// output), `Err` unless it is of that dtype and shape: every `*_with` kernel's one call of its
/// `alloc`.
pub(super) fn allocated(
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
    dtype: DType,
    shape: &[usize],
) -> Result<Array, OpError> {
    let out = alloc(dtype, shape)?;
    check_out(&out, dtype, shape)?;
    Ok(out)
}

/// A computed result moved into the storage `alloc` gives for it ([`allocated`]).
pub(super) fn moved_into(
    r: Array,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    let mut out = allocated(alloc, r.dtype, &r.shape)?;
    out.data.assign(r.data);
    Ok(out)
}

/// `Err` unless a caller's output array has the result's dtype and shape.
pub(super) fn check_out(out: &Array, dtype: DType, shape: &[usize]) -> Result<(), OpError> {
    if out.dtype == dtype && out.shape[..] == shape[..] {
        return Ok(());
    }
    err(
        ErrorKind::Input,
        format!(
            "the output is {} {:?}, the result {} {shape:?}",
            out.dtype.name(),
            out.shape,
            dtype.name()
        ),
    )
}
