//! The built-in dtype catalogue: canonical names (NumPy / ml_dtypes), short codes, kinds.
//!
//! Policies may declare dtypes outside the catalogue through `[formats]`; observed tables may
//! name anything a library prints. The catalogue is what lets the CLI accept `i8` for `int8`, lay
//! diagrams out by kind, and rank witnesses from the familiar to the exotic.

use crate::numeric::format::{FloatFormat, IntTarget, Native, Source};

/// What family a dtype belongs to. Drives layout, witness ranking and short codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Bool,
    Unsigned,
    Signed,
    /// A weak (Python scalar) type: `i*`, `f*`, `c*`.
    Weak,
    /// IEEE binary16/32/64 and bfloat16.
    Float,
    /// float8 / float6 / float4 formats of ml_dtypes.
    SmallFloat,
    Complex,
    /// A type with no values typejoin models (PyTorch's bit containers and quantized types,
    /// the packed `float4_e2m1fn_x2`): it joins only itself.
    Opaque,
    /// Not in the catalogue (a user-declared format, or a library-specific name).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DtypeInfo {
    pub name: &'static str,
    /// Bit-width short code as in the JAX design notes' tables (`i8` is int8).
    pub code: &'static str,
    pub kind: Kind,
    /// Logical width in bits (storage may be wider for sub-byte types); 0 for weak types.
    pub bits: u32,
}

const fn d(name: &'static str, code: &'static str, kind: Kind, bits: u32) -> DtypeInfo {
    DtypeInfo {
        name,
        code,
        kind,
        bits,
    }
}

/// Every dtype name typejoin knows, in a canonical order (kind, then width).
pub const CATALOGUE: &[DtypeInfo] = &[
    d("bool", "b", Kind::Bool, 1),
    d("uint1", "u1", Kind::Unsigned, 1),
    d("uint2", "u2", Kind::Unsigned, 2),
    d("uint3", "u3", Kind::Unsigned, 3),
    d("uint4", "u4", Kind::Unsigned, 4),
    d("uint5", "u5", Kind::Unsigned, 5),
    d("uint6", "u6", Kind::Unsigned, 6),
    d("uint7", "u7", Kind::Unsigned, 7),
    d("uint8", "u8", Kind::Unsigned, 8),
    d("uint16", "u16", Kind::Unsigned, 16),
    d("uint32", "u32", Kind::Unsigned, 32),
    d("uint64", "u64", Kind::Unsigned, 64),
    d("int1", "i1", Kind::Signed, 1),
    d("int2", "i2", Kind::Signed, 2),
    d("int3", "i3", Kind::Signed, 3),
    d("int4", "i4", Kind::Signed, 4),
    d("int5", "i5", Kind::Signed, 5),
    d("int6", "i6", Kind::Signed, 6),
    d("int7", "i7", Kind::Signed, 7),
    d("int8", "i8", Kind::Signed, 8),
    d("int16", "i16", Kind::Signed, 16),
    d("int32", "i32", Kind::Signed, 32),
    d("int64", "i64", Kind::Signed, 64),
    d("b*", "b*", Kind::Weak, 0),
    d("i*", "i*", Kind::Weak, 0),
    d("f*", "f*", Kind::Weak, 0),
    d("c*", "c*", Kind::Weak, 0),
    d("float4_e2m1fn", "f4e2m1fn", Kind::SmallFloat, 4),
    d("float6_e2m3fn", "f6e2m3fn", Kind::SmallFloat, 6),
    d("float6_e3m2fn", "f6e3m2fn", Kind::SmallFloat, 6),
    d("float8_e3m4", "f8e3m4", Kind::SmallFloat, 8),
    d("float8_e4m3", "f8e4m3", Kind::SmallFloat, 8),
    d("float8_e4m3fn", "f8e4m3fn", Kind::SmallFloat, 8),
    d("float8_e4m3fnuz", "f8e4m3fnuz", Kind::SmallFloat, 8),
    d("float8_e4m3b11fnuz", "f8e4m3b11fnuz", Kind::SmallFloat, 8),
    d("float8_e5m2", "f8e5m2", Kind::SmallFloat, 8),
    d("float8_e5m2fnuz", "f8e5m2fnuz", Kind::SmallFloat, 8),
    d("float8_e8m0fnu", "f8e8m0fnu", Kind::SmallFloat, 8),
    d("bfloat16", "bf16", Kind::Float, 16),
    d("float16", "f16", Kind::Float, 16),
    d("float32", "f32", Kind::Float, 32),
    d("float64", "f64", Kind::Float, 64),
    d("complex32", "c32", Kind::Complex, 32),
    d("bcomplex32", "bc32", Kind::Complex, 32),
    d("complex64", "c64", Kind::Complex, 64),
    d("complex128", "c128", Kind::Complex, 128),
    d("float4_e2m1fn_x2", "f4e2m1fnx2", Kind::Opaque, 8),
    d("bits1x8", "bits1x8", Kind::Opaque, 8),
    d("bits2x4", "bits2x4", Kind::Opaque, 8),
    d("bits4x2", "bits4x2", Kind::Opaque, 8),
    d("bits8", "bits8", Kind::Opaque, 8),
    d("bits16", "bits16", Kind::Opaque, 16),
    d("qint8", "qi8", Kind::Opaque, 8),
    d("quint8", "qu8", Kind::Opaque, 8),
    d("qint32", "qi32", Kind::Opaque, 32),
    d("quint4x2", "qu4x2", Kind::Opaque, 8),
    d("quint2x4", "qu2x4", Kind::Opaque, 8),
];

/// The complex dtype whose components are the float `name` (`float16` → `complex32`), as
/// PyTorch's `toComplexType`.
pub fn complex_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "float16" => "complex32",
        "bfloat16" => "bcomplex32",
        "float32" => "complex64",
        "float64" => "complex128",
        _ => return None,
    })
}

/// Splits a node name into its dtype and category: `int8@0d` is (`int8`, `Some("0d")`), a
/// plain dtype has no category.
pub fn split_category(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((base, cat)) => (base, Some(cat)),
        None => (name, None),
    }
}

/// The catalogue entry of a canonical name; a category node (`int8@0d`) has its dtype's.
pub fn info(name: &str) -> Option<&'static DtypeInfo> {
    let base = split_category(name).0;
    CATALOGUE.iter().find(|d| d.name == base)
}

/// Resolves a canonical name or a short code (`i8`, `bf16`, `c128`) to the canonical name.
pub fn canonical(name_or_code: &str) -> Option<&'static str> {
    CATALOGUE
        .iter()
        .find(|d| d.name == name_or_code || d.code == name_or_code)
        .map(|d| d.name)
}

/// [`canonical`] for a node name that may carry a category: `i8@0d` is `int8@0d`.
pub fn canonical_node(name_or_code: &str) -> Option<String> {
    match split_category(name_or_code) {
        (base, Some(cat)) if !cat.is_empty() => canonical(base).map(|b| format!("{b}@{cat}")),
        (_, Some(_)) => None,
        (base, None) => canonical(base).map(str::to_string),
    }
}

/// The kind of any name; `Other` outside the catalogue.
pub fn kind(name: &str) -> Kind {
    info(name).map_or(Kind::Other, |d| d.kind)
}

/// The short code of a name (`i8@0d` for `int8@0d`), or the name itself outside the
/// catalogue.
pub fn short_code(name: &str) -> String {
    match (info(name), split_category(name).1) {
        (Some(d), Some(cat)) => format!("{}@{cat}", d.code),
        (Some(d), None) => d.code.to_string(),
        (None, _) => name.to_string(),
    }
}

pub fn is_weak(name: &str) -> bool {
    kind(name) == Kind::Weak
}

/// How unfamiliar a dtype is, for ranking witnesses "simplest first": IEEE floats and
/// byte-multiple integers first, then bfloat16 and weak types, then sub-byte and small floats.
pub fn rarity(name: &str) -> u32 {
    match info(name) {
        Some(d) => match d.kind {
            Kind::Float if d.name == "bfloat16" => 1,
            // PyTorch's complex32 and bcomplex32 are as exotic as the small floats.
            Kind::Complex if d.bits == 32 => 2,
            Kind::Bool | Kind::Float | Kind::Complex => 0,
            Kind::Unsigned | Kind::Signed if d.bits >= 8 => 0,
            Kind::Weak => 1,
            Kind::Unsigned | Kind::Signed | Kind::SmallFloat => 2,
            Kind::Opaque | Kind::Other => 3,
        },
        None => 3,
    }
}

/// Width used for ranking (weak and unknown types rank as wide).
pub fn rank_bits(name: &str) -> u32 {
    match info(name) {
        Some(d) if d.kind != Kind::Weak => d.bits,
        _ => 128,
    }
}

/// The ranking key of witnesses (tuples of dtypes), simplest first: familiar dtypes (IEEE
/// floats, byte-multiple integers) before bfloat16 and weak types before sub-byte and small
/// floats (the sum of [`rarity`]); then narrow before wide (of [`rank_bits`]); then table
/// order. Both law engines, `diff` and the category rules rank with it. Each dtype is looked
/// up once: ranking the thousands of witnesses of a table far from a lattice (PyTorch's
/// operand categories) had spent most of its time finding names in the catalogue.
pub struct Simplicity(Vec<(u32, u32)>);

impl Simplicity {
    /// For a table whose dtypes are `names`, in index order.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Simplicity {
        Simplicity(
            names
                .into_iter()
                .map(|n| (rarity(n), rank_bits(n)))
                .collect(),
        )
    }

    /// The key of the witness `idx` (indices into the table).
    pub fn key(&self, idx: &[usize]) -> (u32, u32, Vec<usize>) {
        let (rarity, bits) = idx.iter().fold((0, 0), |(r, b), &i| {
            let (ri, bi) = self.0[i];
            (r + ri, b + bi)
        });
        (rarity, bits, idx.to_vec())
    }
}

/// Every float format of the built-in catalogue, by canonical name.
pub fn float_format(name: &str) -> Option<FloatFormat> {
    use crate::numeric::format::NanEncoding::*;
    let f = FloatFormat::new;
    Some(match name {
        "float64" => FloatFormat::float64(),
        "float32" => FloatFormat::float32(),
        "float16" => FloatFormat {
            native: Some(Native::Float16),
            ..f(name, 5, 10, 15, true, Ieee, 2)
        },
        "bfloat16" => FloatFormat {
            native: Some(Native::BFloat16),
            ..f(name, 8, 7, 127, true, Ieee, 2)
        },
        "float8_e3m4" => f(name, 3, 4, 3, true, Ieee, 1),
        "float8_e4m3" => f(name, 4, 3, 7, true, Ieee, 1),
        "float8_e5m2" => f(name, 5, 2, 15, true, Ieee, 1),
        "float8_e4m3fn" => f(name, 4, 3, 7, false, AllOnes, 1),
        "float8_e4m3fnuz" => f(name, 4, 3, 8, false, NegativeZero, 1),
        "float8_e4m3b11fnuz" => f(name, 4, 3, 11, false, NegativeZero, 1),
        "float8_e5m2fnuz" => f(name, 5, 2, 16, false, NegativeZero, 1),
        "float8_e8m0fnu" => FloatFormat {
            signed: false,
            subnormals: false,
            ..f(name, 8, 0, 127, false, AllOnes, 1)
        },
        "float6_e2m3fn" => f(name, 2, 3, 1, false, None, 1),
        "float6_e3m2fn" => f(name, 3, 2, 3, false, None, 1),
        "float4_e2m1fn" => f(name, 2, 1, 1, false, None, 1),
        _ => return Option::None,
    })
}

/// The float formats of the catalogue of at most 16 bits (what `cast --all` enumerates).
pub const SMALL_FLOATS: &[&str] = &[
    "bfloat16",
    "float16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
];

/// The storage unit of each of [`SMALL_FLOATS`]: a byte for the float8, float6 and float4
/// formats, 16 bits for the others (read from the names at compile time, so that
/// [`DType::unit`], called several times per kernel call, is a few compares and a load).
const SMALL_UNITS: [Unit; SMALL_FLOATS.len()] = {
    let mut units = [Unit::U16; SMALL_FLOATS.len()];
    let mut i = 0;
    while i < SMALL_FLOATS.len() {
        if let [b'f', b'l', b'o', b'a', b't', b'8' | b'6' | b'4', ..] = SMALL_FLOATS[i].as_bytes() {
            units[i] = Unit::U8;
        }
        i += 1;
    }
    units
};

// The catalogue's formats of a name, for the codec's two sides (defined here, beside the
// catalogue, so that `format` knows nothing of names).
impl Source {
    /// The catalogue format of a canonical name (bool is the 1-bit unsigned integer).
    pub fn named(name: &str) -> Option<Source> {
        if let Some(f) = float_format(name) {
            return Some(Source::Float(f));
        }
        let d = info(name)?;
        match d.kind {
            Kind::Bool => Some(Source::Int {
                bits: 1,
                signed: false,
            }),
            Kind::Signed => Some(Source::Int {
                bits: d.bits,
                signed: true,
            }),
            Kind::Unsigned => Some(Source::Int {
                bits: d.bits,
                signed: false,
            }),
            _ => None,
        }
    }
}

impl IntTarget {
    /// The integer or bool dtype of a canonical name.
    pub fn named(name: &str) -> Option<IntTarget> {
        if name == "bool" {
            return Some(IntTarget::Bool);
        }
        match Source::named(name)? {
            Source::Int { bits, signed } => Some(IntTarget::Int { bits, signed }),
            Source::Float(_) => None,
        }
    }
}

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
    /// A float format of at most 16 bits: an index into `dtype::SMALL_FLOATS`.
    Small(u8),
    Complex64,
    Complex128,
    /// PyTorch's `complex32` (float16 parts) and `bcomplex32` (bfloat16 parts).
    Complex32,
    BComplex32,
}

/// Which storage a dtype uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    U8,
    U16,
    U32,
    U64,
    /// Two 16-bit parts: complex32, bcomplex32.
    C32,
    C64,
    C128,
}

impl Unit {
    /// Bytes of one element's storage (a complex unit holds both parts).
    pub fn bytes(self) -> usize {
        match self {
            Unit::U8 => 1,
            Unit::U16 => 2,
            Unit::U32 | Unit::C32 => 4,
            Unit::U64 | Unit::C64 => 8,
            Unit::C128 => 16,
        }
    }
}

impl DType {
    /// How many concrete dtypes there are; every [`DType::id`] is below it.
    pub const COUNT: usize = 34;
    pub const BFLOAT16: DType = DType::Small(0);
    pub const FLOAT16: DType = DType::Small(1);

    /// A dense id, for tables indexed by dtype (the generated policies'): bool 0, the unsigned
    /// integers by width 1–7, the signed ones 8–14, float32 15, float64 16, the small floats
    /// 17–29 in [`SMALL_FLOATS`] order, complex64 30, complex128 31, complex32 32, bcomplex32
    /// 33.
    pub const fn id(self) -> usize {
        match self {
            DType::Bool => 0,
            DType::Int { bits, signed } => {
                (if signed { 8 } else { 1 }) + bits.trailing_zeros() as usize
            }
            DType::Float32 => 15,
            DType::Float64 => 16,
            DType::Small(i) => 17 + i as usize,
            DType::Complex64 => 30,
            DType::Complex128 => 31,
            DType::Complex32 => 32,
            DType::BComplex32 => 33,
        }
    }

    /// The dtype of an id ([`DType::id`]'s inverse); `None` at or past [`DType::COUNT`].
    pub const fn from_id(id: usize) -> Option<DType> {
        Some(match id {
            0 => DType::Bool,
            1..=7 => DType::Int {
                bits: 1 << (id - 1),
                signed: false,
            },
            8..=14 => DType::Int {
                bits: 1 << (id - 8),
                signed: true,
            },
            15 => DType::Float32,
            16 => DType::Float64,
            17..=29 => DType::Small((id - 17) as u8),
            30 => DType::Complex64,
            31 => DType::Complex128,
            32 => DType::Complex32,
            33 => DType::BComplex32,
            _ => return None,
        })
    }

    /// Every concrete dtype, in id order.
    pub fn all() -> impl Iterator<Item = DType> {
        (0..DType::COUNT).filter_map(DType::from_id)
    }

    /// The dtype of a canonical name (weak names and names outside the catalogue have none).
    pub fn named(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            "complex32" => DType::Complex32,
            "bcomplex32" => DType::BComplex32,
            _ => {
                if let Some(i) = SMALL_FLOATS.iter().position(|s| *s == name) {
                    return Some(DType::Small(i as u8));
                }
                let d = info(name)?;
                if name.contains('@') || !d.bits.is_power_of_two() {
                    // int3, uint5, …: no storage the kernels compute with (yet).
                    return None;
                }
                match d.kind {
                    Kind::Signed => DType::Int {
                        bits: d.bits,
                        signed: true,
                    },
                    Kind::Unsigned => DType::Int {
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
            DType::Complex32 => "complex32",
            DType::BComplex32 => "bcomplex32",
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
            DType::Small(i) => SMALL_UNITS[i as usize],
            DType::Complex64 => Unit::C64,
            DType::Complex128 => Unit::C128,
            DType::Complex32 | DType::BComplex32 => Unit::C32,
        }
    }

    /// The float format of a real float dtype (of each component for complex).
    pub fn float_format(self) -> Option<FloatFormat> {
        match self {
            DType::Float32 | DType::Complex64 => float_format("float32"),
            DType::Float64 | DType::Complex128 => float_format("float64"),
            DType::Small(i) => float_format(SMALL_FLOATS[i as usize]),
            DType::Complex32 => float_format("float16"),
            DType::BComplex32 => float_format("bfloat16"),
            _ => None,
        }
    }

    /// The real dtype of a complex dtype's parts (`complex32` → `float16`); a real dtype is
    /// its own.
    pub fn part(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            DType::Complex32 => DType::FLOAT16,
            DType::BComplex32 => DType::BFLOAT16,
            d => d,
        }
    }

    /// The catalogue's kind of the dtype (bool, signed, unsigned, float, small float, complex):
    /// read by name once per dtype, then from a table. Under `perf`, a 1,000-element `negative`
    /// from Python spent a few percent of its samples in the by-name chain this replaces
    /// (`info`, `split_category`, string compares; not summed separately).
    pub fn kind(self) -> Kind {
        static KINDS: std::sync::OnceLock<[Kind; DType::COUNT]> = std::sync::OnceLock::new();
        KINDS.get_or_init(|| {
            std::array::from_fn(|i| DType::from_id(i).map_or(Kind::Other, |d| kind(d.name())))
        })[self.id()]
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::Int { .. })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float64 | DType::Small(_))
    }

    pub fn is_complex(self) -> bool {
        matches!(
            self,
            DType::Complex64 | DType::Complex128 | DType::Complex32 | DType::BComplex32
        )
    }

    /// Significant bits of a storage unit's pattern (the rest must be zero).
    pub fn pattern_bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            DType::Int { bits, .. } => bits,
            DType::Float32 | DType::Complex64 => 32,
            DType::Float64 | DType::Complex128 => 64,
            DType::Small(_) | DType::Complex32 | DType::BComplex32 => {
                self.float_format().expect("small float").width()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each small float is stored in the least unit its format's width fits: a byte up to 8
    /// bits, 16 bits above (`SMALL_UNITS`, read from the names, agrees with the formats).
    #[test]
    fn small_floats_take_the_least_unit_their_width_fits() {
        for (i, name) in SMALL_FLOATS.iter().enumerate() {
            let d = DType::Small(i as u8);
            let want = if d.pattern_bits() <= 8 {
                Unit::U8
            } else {
                Unit::U16
            };
            assert_eq!(d.unit(), want, "{name}");
        }
    }

    /// Ids are dense and invertible, and every dtype's name names it back.
    #[test]
    fn dtype_ids_are_dense_and_name_their_dtype() {
        assert_eq!(SMALL_FLOATS.len(), 13);
        let all: Vec<DType> = DType::all().collect();
        assert_eq!(all.len(), DType::COUNT);
        for (i, d) in all.iter().enumerate() {
            assert_eq!(d.id(), i);
            assert_eq!(DType::named(d.name()), Some(*d), "{}", d.name());
        }
        assert_eq!(DType::from_id(DType::COUNT), None);
        assert_eq!(DType::BFLOAT16.name(), "bfloat16");
        assert_eq!(DType::FLOAT16.name(), "float16");
    }

    #[test]
    fn codes_are_unique_and_resolve() {
        for (i, a) in CATALOGUE.iter().enumerate() {
            for b in &CATALOGUE[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.code, b.code, "{} and {}", a.name, b.name);
            }
            assert_eq!(canonical(a.code), Some(a.name));
            assert_eq!(canonical(a.name), Some(a.name));
        }
        assert_eq!(canonical("i8"), Some("int8"));
        assert_eq!(canonical("bf16"), Some("bfloat16"));
        assert_eq!(canonical("int9"), None);
    }
}
