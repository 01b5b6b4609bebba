//! Typed n-dimensional arrays over every dtype of the shipped policies: a dtype, a shape and
//! contiguous row-major storage of raw bit patterns, one storage unit per element (sub-byte
//! types take one byte each, in the low bits, as ml_dtypes stores them).

use crate::numeric::dtype::{DType, Unit};

/// Storage of an array: raw bit patterns, one unit per element (complex: `[re, im]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    C64(Vec<[u32; 2]>),
    C128(Vec<[u64; 2]>),
}

impl Data {
    /// The storage unit.
    pub fn unit(&self) -> Unit {
        match self {
            Data::U8(_) => Unit::U8,
            Data::U16(_) => Unit::U16,
            Data::U32(_) => Unit::U32,
            Data::U64(_) => Unit::U64,
            Data::C64(_) => Unit::C64,
            Data::C128(_) => Unit::C128,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Data::U8(v) => v.len(),
            Data::U16(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::C64(v) => v.len(),
            Data::C128(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Zeroed storage of `n` units.
    pub fn zeros(unit: Unit, n: usize) -> Data {
        match unit {
            Unit::U8 => Data::U8(vec![0; n]),
            Unit::U16 => Data::U16(vec![0; n]),
            Unit::U32 => Data::U32(vec![0; n]),
            Unit::U64 => Data::U64(vec![0; n]),
            Unit::C64 => Data::C64(vec![[0; 2]; n]),
            Unit::C128 => Data::C128(vec![[0; 2]; n]),
        }
    }
}

/// An n-dimensional array: dtype, shape, row-major storage.
///
/// **Invariant** (what makes the kernels' unchecked loops sound): the storage unit is the
/// dtype's ([`DType::unit`]), the element count is the product of the shape, and every
/// pattern fits the dtype's width ([`DType::pattern_bits`]: sub-byte and bool codes index
/// tables of `2^bits` entries). The fields are private to the kernels, and every constructor
/// outside them ([`Array::new`], [`Array::from_bits`], [`Array::zeros`]) checks the invariant
/// and returns an [`ArrayError`] otherwise, so safe code cannot build an array a kernel would
/// read out of bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub(in crate::kernels) dtype: DType,
    pub(in crate::kernels) shape: Vec<usize>,
    pub(in crate::kernels) data: Data,
}

/// Why an array cannot be built: its parts break [`Array`]'s invariant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("shape {shape:?} has more elements than memory can hold")]
    TooLarge { shape: Vec<usize> },
    #[error("shape {shape:?} holds {expected} elements but {given} bit patterns were given")]
    Length {
        shape: Vec<usize>,
        expected: usize,
        given: usize,
    },
    #[error("{dtype} is stored as {expected:?}, not {given:?}")]
    Storage {
        dtype: &'static str,
        expected: Unit,
        given: Unit,
    },
    #[error("bit pattern {pattern} does not fit {dtype} ({bits} bits)")]
    Pattern {
        pattern: u64,
        dtype: &'static str,
        bits: u32,
    },
}

/// The element count of a shape, or `None` when it overflows.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// `Ok` when `shape` holds exactly `given` elements.
fn check_length(shape: &[usize], given: usize) -> Result<(), ArrayError> {
    let expected = element_count(shape).ok_or_else(|| ArrayError::TooLarge {
        shape: shape.to_vec(),
    })?;
    if given != expected {
        return Err(ArrayError::Length {
            shape: shape.to_vec(),
            expected,
            given,
        });
    }
    Ok(())
}

impl Array {
    /// An array of `dtype` and `shape` over `data`, checked against the invariant.
    pub fn new(dtype: DType, shape: Vec<usize>, data: Data) -> Result<Array, ArrayError> {
        if data.unit() != dtype.unit() {
            return Err(ArrayError::Storage {
                dtype: dtype.name(),
                expected: dtype.unit(),
                given: data.unit(),
            });
        }
        check_length(&shape, data.len())?;
        let w = dtype.pattern_bits();
        let limit = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let bad = match &data {
            Data::U8(v) => v.iter().map(|&b| b as u64).find(|&b| b > limit),
            Data::U16(v) => v.iter().map(|&b| b as u64).find(|&b| b > limit),
            // Patterns of 32 and 64 bits fill their units.
            Data::U32(_) | Data::U64(_) | Data::C64(_) | Data::C128(_) => None,
        };
        if let Some(pattern) = bad {
            return Err(ArrayError::Pattern {
                pattern,
                dtype: dtype.name(),
                bits: w,
            });
        }
        Ok(Array { dtype, shape, data })
    }

    /// An array from bit patterns (complex: `[re, im]` per element). `Err` names what is wrong:
    /// a length that does not match the shape, or a pattern wider than the dtype.
    pub fn from_bits(
        dtype: DType,
        shape: Vec<usize>,
        bits: &[[u64; 2]],
    ) -> Result<Array, ArrayError> {
        check_length(&shape, bits.len())?;
        let w = dtype.pattern_bits();
        let limit = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        if let Some(bad) = bits.iter().find(|b| b[0] > limit || b[1] > limit) {
            return Err(ArrayError::Pattern {
                pattern: if bad[0] > limit { bad[0] } else { bad[1] },
                dtype: dtype.name(),
                bits: w,
            });
        }
        let re = bits.iter().map(|b| b[0]);
        let data = match dtype.unit() {
            Unit::U8 => Data::U8(re.map(|b| b as u8).collect()),
            Unit::U16 => Data::U16(re.map(|b| b as u16).collect()),
            Unit::U32 => Data::U32(re.map(|b| b as u32).collect()),
            Unit::U64 => Data::U64(re.collect()),
            Unit::C64 => Data::C64(bits.iter().map(|b| [b[0] as u32, b[1] as u32]).collect()),
            Unit::C128 => Data::C128(bits.to_vec()),
        };
        Ok(Array { dtype, shape, data })
    }

    /// Every element's bit patterns (`[re, 0]` for real dtypes).
    pub fn bits(&self) -> Vec<[u64; 2]> {
        match &self.data {
            Data::U8(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U16(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U32(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U64(v) => v.iter().map(|&b| [b, 0]).collect(),
            Data::C64(v) => v.iter().map(|&[r, i]| [r as u64, i as u64]).collect(),
            Data::C128(v) => v.clone(),
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A zero-filled array (`Err` when the shape's element count overflows).
    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Result<Array, ArrayError> {
        let n = element_count(&shape).ok_or_else(|| ArrayError::TooLarge {
            shape: shape.clone(),
        })?;
        Ok(Array {
            dtype,
            data: Data::zeros(dtype.unit(), n),
            shape,
        })
    }

    /// A zero-filled array whose shape is known to be countable: an existing array's, or a
    /// broadcast result already checked against `ops::max_elements()`.
    pub(in crate::kernels) fn zeroed(dtype: DType, shape: Vec<usize>) -> Array {
        Array::zeros(dtype, shape).expect("the shape of an existing array or a checked broadcast")
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The storage, row-major (read only: a kernel's input).
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// The storage, handing it over.
    pub fn into_data(self) -> Data {
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_units() {
        for d in crate::numeric::dtype::CATALOGUE {
            if let Some(t) = DType::named(d.name) {
                assert_eq!(t.name(), d.name);
            } else {
                // No array type: weak and opaque types, PyTorch's complex32/bcomplex32 and
                // its integers of 3, 5, 6 and 7 bits.
                use crate::numeric::dtype::Kind;
                let expected = matches!(d.kind, Kind::Weak | Kind::Opaque)
                    || (d.kind == Kind::Complex && d.bits == 32)
                    || (matches!(d.kind, Kind::Signed | Kind::Unsigned)
                        && [3, 5, 6, 7].contains(&d.bits));
                assert!(expected, "{}", d.name);
            }
        }
        assert_eq!(DType::named("float8_e4m3fn").unwrap().unit(), Unit::U8);
        assert_eq!(DType::named("bfloat16").unwrap().unit(), Unit::U16);
        assert_eq!(DType::named("int4").unwrap().unit(), Unit::U8);
        assert_eq!(DType::named("uint64").unwrap().unit(), Unit::U64);
    }

    #[test]
    fn from_bits_checks_shape_and_width() {
        let t = DType::named("int4").unwrap();
        assert!(Array::from_bits(t, vec![2], &[[15, 0], [0, 0]]).is_ok());
        assert_eq!(
            Array::from_bits(t, vec![2], &[[16, 0], [0, 0]])
                .unwrap_err()
                .to_string(),
            "bit pattern 16 does not fit int4 (4 bits)"
        );
        assert_eq!(
            Array::from_bits(t, vec![3], &[[1, 0]])
                .unwrap_err()
                .to_string(),
            "shape [3] holds 3 elements but 1 bit patterns were given"
        );
    }
}
