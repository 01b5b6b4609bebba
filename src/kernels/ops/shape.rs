//! Shapes: NumPy broadcasting, an operand expanded to the result's shape, a caller's output
//! checked, and the result-size limit every kernel asks before it allocates.

use super::vocab::{ErrorKind, OpError, err};
use crate::kernels::array::Array;
use crate::kernels::array::Data;
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
pub fn broadcast(a: &[usize], b: &[usize], max_elements: usize) -> Result<Vec<usize>, OpError> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
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

/// `a` repeated to `shape` (which it broadcasts to), contiguous.
pub(super) fn expand(a: &Array, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let offset = shape.len() - a.shape.len();
    // Strides of `a` in the output's index space (0 on broadcast dimensions).
    let mut strides = vec![0usize; shape.len()];
    let mut s = 1;
    for d in (0..a.shape.len()).rev() {
        strides[d + offset] = if a.shape[d] == 1 { 0 } else { s };
        s *= a.shape[d];
    }
    let mut idx = Vec::with_capacity(n);
    let mut counter = vec![0usize; shape.len()];
    for _ in 0..n {
        idx.push(
            counter
                .iter()
                .zip(&strides)
                .map(|(c, s)| c * s)
                .sum::<usize>(),
        );
        for d in (0..shape.len()).rev() {
            counter[d] += 1;
            if counter[d] < shape[d] {
                break;
            }
            counter[d] = 0;
        }
    }
    let data = match &a.data {
        Data::U8(v) => Data::U8(idx.iter().map(|&i| v[i]).collect()),
        Data::U16(v) => Data::U16(idx.iter().map(|&i| v[i]).collect()),
        Data::U32(v) => Data::U32(idx.iter().map(|&i| v[i]).collect()),
        Data::U64(v) => Data::U64(idx.iter().map(|&i| v[i]).collect()),
        Data::C32(v) => Data::C32(idx.iter().map(|&i| v[i]).collect()),
        Data::C64(v) => Data::C64(idx.iter().map(|&i| v[i]).collect()),
        Data::C128(v) => Data::C128(idx.iter().map(|&i| v[i]).collect()),
    };
    Array {
        dtype: a.dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// `Err` unless a caller's output array has the result's dtype and shape.
pub(super) fn check_out(out: &Array, dtype: DType, shape: &[usize]) -> Result<(), OpError> {
    if out.dtype == dtype && out.shape == shape {
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
