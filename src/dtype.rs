//! The built-in dtype catalogue: canonical names (NumPy / ml_dtypes), short codes, kinds.
//!
//! Policies may declare dtypes outside the catalogue through `[formats]`; observed tables may
//! name anything a library prints. The catalogue is what lets the CLI accept `i8` for `int8`, lay
//! diagrams out by kind, and rank witnesses from the familiar to the exotic.

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
    d("uint4", "u4", Kind::Unsigned, 4),
    d("uint8", "u8", Kind::Unsigned, 8),
    d("uint16", "u16", Kind::Unsigned, 16),
    d("uint32", "u32", Kind::Unsigned, 32),
    d("uint64", "u64", Kind::Unsigned, 64),
    d("int1", "i1", Kind::Signed, 1),
    d("int2", "i2", Kind::Signed, 2),
    d("int4", "i4", Kind::Signed, 4),
    d("int8", "i8", Kind::Signed, 8),
    d("int16", "i16", Kind::Signed, 16),
    d("int32", "i32", Kind::Signed, 32),
    d("int64", "i64", Kind::Signed, 64),
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
    d("complex64", "c64", Kind::Complex, 64),
    d("complex128", "c128", Kind::Complex, 128),
];

/// The catalogue entry of a canonical name.
pub fn info(name: &str) -> Option<&'static DtypeInfo> {
    CATALOGUE.iter().find(|d| d.name == name)
}

/// Resolves a canonical name or a short code (`i8`, `bf16`, `c128`) to the canonical name.
pub fn canonical(name_or_code: &str) -> Option<&'static str> {
    CATALOGUE
        .iter()
        .find(|d| d.name == name_or_code || d.code == name_or_code)
        .map(|d| d.name)
}

/// The kind of any name; `Other` outside the catalogue.
pub fn kind(name: &str) -> Kind {
    info(name).map_or(Kind::Other, |d| d.kind)
}

/// The short code of a name, or the name itself outside the catalogue.
pub fn short_code(name: &str) -> &str {
    info(name).map_or(name, |d| d.code)
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
            Kind::Bool | Kind::Float | Kind::Complex => 0,
            Kind::Unsigned | Kind::Signed if d.bits >= 8 => 0,
            Kind::Weak => 1,
            Kind::Unsigned | Kind::Signed | Kind::SmallFloat => 2,
            Kind::Other => 3,
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

#[cfg(test)]
mod tests {
    use super::*;

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
