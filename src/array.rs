//! Typed n-dimensional arrays over every dtype of the shipped policies: a dtype, a shape and
//! contiguous row-major storage of raw bit patterns, one storage unit per element (sub-byte
//! types take one byte each, in the low bits, as ml_dtypes stores them).

use crate::format::{FloatFormat, SMALL_FLOATS, float_format};

/// A concrete (non-weak) dtype the kernels compute with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    Int {
        bits: u32,
        signed: bool,
    },
    Float32,
    Float64,
    /// A float format of at most 16 bits: an index into `format::SMALL_FLOATS`.
    Small(u8),
    Complex64,
    Complex128,
}

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

/// Which storage a dtype uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    U8,
    U16,
    U32,
    U64,
    C64,
    C128,
}

impl DType {
    /// The dtype of a canonical name (weak names and names outside the catalogue have none).
    pub fn named(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            _ => {
                if let Some(i) = SMALL_FLOATS.iter().position(|s| *s == name) {
                    return Some(DType::Small(i as u8));
                }
                let d = crate::dtype::info(name)?;
                match d.kind {
                    crate::dtype::Kind::Signed => DType::Int {
                        bits: d.bits,
                        signed: true,
                    },
                    crate::dtype::Kind::Unsigned => DType::Int {
                        bits: d.bits,
                        signed: false,
                    },
                    _ => return None,
                }
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Small(i) => SMALL_FLOATS[i as usize],
            DType::Int { bits, signed } => {
                let names: [&str; 7] = if signed {
                    ["int1", "int2", "int4", "int8", "int16", "int32", "int64"]
                } else {
                    [
                        "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
                    ]
                };
                names[bits.trailing_zeros() as usize]
            }
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            DType::Bool => Unit::U8,
            DType::Int { bits, .. } if bits <= 8 => Unit::U8,
            DType::Int { bits: 16, .. } => Unit::U16,
            DType::Int { bits: 32, .. } => Unit::U32,
            DType::Int { .. } => Unit::U64,
            DType::Float32 => Unit::U32,
            DType::Float64 => Unit::U64,
            DType::Small(i)
                if SMALL_FLOATS[i as usize].starts_with("float8")
                    || SMALL_FLOATS[i as usize].starts_with("float6")
                    || SMALL_FLOATS[i as usize].starts_with("float4") =>
            {
                Unit::U8
            }
            DType::Small(_) => Unit::U16,
            DType::Complex64 => Unit::C64,
            DType::Complex128 => Unit::C128,
        }
    }

    /// The float format of a real float dtype (of each component for complex).
    pub fn float_format(self) -> Option<FloatFormat> {
        match self {
            DType::Float32 | DType::Complex64 => float_format("float32"),
            DType::Float64 | DType::Complex128 => float_format("float64"),
            DType::Small(i) => float_format(SMALL_FLOATS[i as usize]),
            _ => None,
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::Int { .. })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float64 | DType::Small(_))
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// Significant bits of a storage unit's pattern (the rest must be zero).
    pub fn pattern_bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            DType::Int { bits, .. } => bits,
            DType::Float32 | DType::Complex64 => 32,
            DType::Float64 | DType::Complex128 => 64,
            DType::Small(_) => self.float_format().expect("small float").width(),
        }
    }
}

impl Data {
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: Data,
}

impl Array {
    /// An array from bit patterns (complex: `[re, im]` per element). `Err` names what is wrong:
    /// a length that does not match the shape, or a pattern wider than the dtype.
    pub fn from_bits(dtype: DType, shape: Vec<usize>, bits: &[[u64; 2]]) -> Result<Array, String> {
        let n = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| format!("shape {shape:?} has more elements than memory can hold"))?;
        if bits.len() != n {
            return Err(format!(
                "shape {shape:?} holds {n} elements but {} bit patterns were given",
                bits.len()
            ));
        }
        let w = dtype.pattern_bits();
        let limit = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        if let Some(bad) = bits.iter().find(|b| b[0] > limit || b[1] > limit) {
            return Err(format!(
                "bit pattern {} does not fit {} ({w} bits)",
                if bad[0] > limit { bad[0] } else { bad[1] },
                dtype.name()
            ));
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

    /// A zero-filled array.
    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Array {
        let n = shape.iter().product();
        Array {
            dtype,
            data: Data::zeros(dtype.unit(), n),
            shape,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_units() {
        for d in crate::dtype::CATALOGUE {
            if let Some(t) = DType::named(d.name) {
                assert_eq!(t.name(), d.name);
            } else {
                assert_eq!(d.kind, crate::dtype::Kind::Weak, "{}", d.name);
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
            Array::from_bits(t, vec![2], &[[16, 0], [0, 0]]).unwrap_err(),
            "bit pattern 16 does not fit int4 (4 bits)"
        );
        assert_eq!(
            Array::from_bits(t, vec![3], &[[1, 0]]).unwrap_err(),
            "shape [3] holds 3 elements but 1 bit patterns were given"
        );
    }
}
