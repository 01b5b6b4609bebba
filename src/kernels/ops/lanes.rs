//! Lane buffers: loading operands of any dtype into f32/f64/i64 lanes (through cached lookup tables
//! for narrow formats) and storing lanes back with one rounding; canonical NaNs.

use crate::kernels::array::Data;
use crate::kernels::cast::Caster;
use crate::numeric::dtype::DType;
use crate::numeric::format::FloatFormat;
use crate::numeric::format::IntTarget;
use crate::numeric::format::Source;
use crate::numeric::format::Value;
use crate::numeric::format::cast_bits;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

/// The exact value of an element of `d`.
pub(super) fn value_of(d: DType, bits: u64) -> Value {
    match d {
        DType::Bool => Source::Int {
            bits: 1,
            signed: false,
        }
        .decode(bits),
        DType::Int { bits: w, signed } => Source::Int { bits: w, signed }.decode(bits),
        _ => d.float_format().expect("real float").decode(bits),
    }
}

pub(super) fn source_of(d: DType) -> Source {
    match d {
        DType::Bool => Source::Int {
            bits: 1,
            signed: false,
        },
        DType::Int { bits, signed } => Source::Int { bits, signed },
        _ => Source::Float(d.float_format().expect("real")),
    }
}

/// One element of real dtype `from` converted to real dtype `to` (the `astype` rules of
/// `typejoin cast`: correctly rounded, NumPy's NaN conventions; integers wrap; floats to
/// integers truncate and saturate).
pub(super) fn convert_bits(from: DType, to: DType, bits: u64) -> u64 {
    match (to, from.float_format(), to.float_format()) {
        (DType::Bool, ..) => IntTarget::Bool.convert(&source_of(from), bits),
        (DType::Int { bits: w, signed }, ..) => {
            IntTarget::Int { bits: w, signed }.convert(&source_of(from), bits)
        }
        (_, Some(f), Some(t)) => cast_bits(&f, &t, bits),
        (_, None, Some(t)) => t.encode(value_of(from, bits)),
        _ => unreachable!("complex handled by the caller"),
    }
}

// ---------------------------------------------------------------------------------------------
// Lanes: the value types the op stage computes on.

/// A wide source's storage interpretation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wide {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

/// A lane value type and its conversions from wide sources (Rust's `as`: round to nearest
/// even, exact where the value fits).
pub(super) trait Lane: Copy {
    fn wide(kind: Wide, bits: u64) -> Self;
}

macro_rules! lane {
    ($t:ty, $f32:expr, $f64:expr) => {
        impl Lane for $t {
            #[inline(always)]
            fn wide(kind: Wide, b: u64) -> $t {
                match kind {
                    Wide::F32 => $f32(f32::from_bits(b as u32)),
                    Wide::F64 => $f64(f64::from_bits(b)),
                    Wide::I32 => b as u32 as i32 as $t,
                    Wide::U32 => b as u32 as $t,
                    Wide::I64 => b as i64 as $t,
                    Wide::U64 => b as $t,
                }
            }
        }
    };
}

lane!(f32, |x: f32| x, |x: f64| x as f32);

lane!(f64, |x: f32| x as f64, |x: f64| x);

lane!(i64, |x: f32| x as i64, |x: f64| x as i64);

/// How elements of one dtype load into a lane of a computation dtype.
#[derive(Clone)]
pub(super) enum Load<L> {
    /// A table of every pattern of a source of at most 16 bits.
    Table(Arc<Vec<L>>),
    /// A source wider than 16 bits, converted per element by `Lane`'s conversion.
    Wide(Wide),
    /// Per element through the codec (wide source into a small computation dtype).
    Codec { from: DType, to: DType },
}

pub(super) type TableCache =
    Mutex<HashMap<(DType, DType, &'static str), Arc<dyn std::any::Any + Send + Sync>>>;

/// A lane table of `from`'s patterns in computation dtype `to`, built once per process.
pub(super) fn table<L: Copy + Send + Sync + 'static>(
    from: DType,
    to: DType,
    lane: &'static str,
    f: impl Fn(u64) -> L,
) -> Arc<Vec<L>> {
    static CACHE: OnceLock<TableCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (from, to, lane);
    if let Some(t) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return t.clone().downcast::<Vec<L>>().expect("lane type");
    }
    let t: Arc<Vec<L>> = Arc::new((0..1u64 << from.pattern_bits()).map(f).collect());
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, t.clone());
    t
}

/// Storage bits of element `i`.
#[inline(always)]
pub(super) fn raw(data: &Data, i: usize) -> u64 {
    match data {
        Data::U8(v) => v[i] as u64,
        Data::U16(v) => v[i] as u64,
        Data::U32(v) => v[i] as u64,
        Data::U64(v) => v[i],
        _ => unreachable!("real storage"),
    }
}

/// Loads `out.len()` elements of `data` from `start` (or element 0 repeated, for a splat).
pub(super) fn load_into<L: Lane>(
    load: &Load<L>,
    data: &Data,
    start: usize,
    splat: bool,
    out: &mut [L],
    to_lane: fn(DType, u64) -> L,
) {
    if splat {
        let v = match load {
            Load::Table(t) => t[raw(data, 0) as usize],
            Load::Wide(k) => L::wide(*k, raw(data, 0)),
            Load::Codec { from, to } => to_lane(*to, convert_bits(*from, *to, raw(data, 0))),
        };
        out.fill(v);
        return;
    }
    let n = out.len();
    // Each arm is its own monomorphic loop (the conversion is known inside it).
    macro_rules! each {
        ($v:expr, $f:expr) => {{
            for (o, &x) in out.iter_mut().zip(&$v[start..start + n]) {
                *o = $f(x);
            }
        }};
    }
    match (load, data) {
        (Load::Table(t), Data::U8(v)) => each!(v, |x: u8| t[x as usize]),
        (Load::Table(t), Data::U16(v)) => each!(v, |x: u16| t[x as usize]),
        (Load::Wide(Wide::F32), Data::U32(v)) => each!(v, |x: u32| L::wide(Wide::F32, x as u64)),
        (Load::Wide(Wide::I32), Data::U32(v)) => each!(v, |x: u32| L::wide(Wide::I32, x as u64)),
        (Load::Wide(Wide::U32), Data::U32(v)) => each!(v, |x: u32| L::wide(Wide::U32, x as u64)),
        (Load::Wide(Wide::F64), Data::U64(v)) => each!(v, |x: u64| L::wide(Wide::F64, x)),
        (Load::Wide(Wide::I64), Data::U64(v)) => each!(v, |x: u64| L::wide(Wide::I64, x)),
        (Load::Wide(Wide::U64), Data::U64(v)) => each!(v, |x: u64| L::wide(Wide::U64, x)),
        (Load::Codec { from, to }, _) => {
            for (k, o) in out.iter_mut().enumerate() {
                *o = to_lane(*to, convert_bits(*from, *to, raw(data, start + k)));
            }
        }
        _ => unreachable!("loader matches storage"),
    }
}

/// The wide interpretation of a dtype wider than 16 bits.
pub(super) fn wide_kind(d: DType) -> Option<Wide> {
    Some(match d {
        DType::Float32 => Wide::F32,
        DType::Float64 => Wide::F64,
        DType::Int { bits: 32, signed } => {
            if signed {
                Wide::I32
            } else {
                Wide::U32
            }
        }
        DType::Int { bits: 64, signed } => {
            if signed {
                Wide::I64
            } else {
                Wide::U64
            }
        }
        _ => return None,
    })
}

pub(super) fn f32_lane(to: DType, bits: u64) -> f32 {
    match to {
        DType::Float32 => f32::from_bits(bits as u32),
        _ => value_of(to, bits).to_f64() as f32, // exact: every small format is in float32
    }
}

pub(super) fn f64_lane(to: DType, bits: u64) -> f64 {
    value_of(to, bits).to_f64()
}

/// Integer lane: the value as i64 (two's complement; uint64 reinterpreted).
pub(super) fn int_lane(to: DType, bits: u64) -> i64 {
    int_value(to, bits) as i64
}

/// The exact value of an integer (or bool) pattern of `d`, uint64 included.
pub(super) fn int_value(d: DType, bits: u64) -> i128 {
    match value_of(d, bits) {
        Value::Finite { neg, mant, .. } => {
            let m = mant as i128;
            if neg { -m } else { m }
        }
        _ => 0,
    }
}

pub(super) fn f32_loader(from: DType, to: DType) -> Load<f32> {
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "f32", |b| {
            f32_lane(
                to,
                if from == to {
                    b
                } else {
                    convert_bits(from, to, b)
                },
            )
        }));
    }
    // Into float32 by `as` (one rounding); into a smaller format only through the codec, so
    // the value is rounded once, from the exact source.
    match (wide_kind(from), to) {
        (Some(k), DType::Float32) if from != DType::Float64 => Load::Wide(k),
        _ => Load::Codec { from, to },
    }
}

/// Whether ops of computation dtype `c` may run in float32 lanes. Every format of at most 16
/// bits is exact in float32, and so is every sum, difference and product of two of its values
/// that stays in float32's range; a result outside it becomes 0 or inf, which rounds as the
/// exact result would for every format with a zero. float8_e8m0fnu has none: 2^-127 × 2^-127
/// underflows float32 to 0, which the format would read as NaN, where the exact 2^-254 rounds
/// to 2^-127. Such formats compute in float64 lanes, where their results are exact.
pub(super) fn f32_lanes_round_correctly(c: DType) -> bool {
    c.float_format().is_none_or(|f| f.has_zero())
}

/// Loads `from` into float64 lanes holding values of the small computation dtype `to`
/// (converted once, by the codec).
pub(super) fn f64_small_loader(from: DType, to: DType) -> Load<f64> {
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "f64", |b| {
            f64_lane(
                to,
                if from == to {
                    b
                } else {
                    convert_bits(from, to, b)
                },
            )
        }));
    }
    Load::Codec { from, to }
}

/// Rounds float64 lane values into a small float dtype's storage once (NaN → the positive
/// quiet NaN of the format).
pub(super) struct F64SmallStore {
    caster: Caster,
    canonical: Option<Box<[u8; 256]>>,
}

impl F64SmallStore {
    pub(super) fn new(to: DType) -> F64SmallStore {
        let f64f = FloatFormat::float64();
        let f = to.float_format().expect("small float");
        F64SmallStore {
            caster: Caster::new(&f64f, &f),
            canonical: (f.width() <= 8).then(|| canonical_nan_codes(&f)),
        }
    }

    pub(super) fn store(&self, lane: &[f64], bits: &mut [u64], out: OutChunk) {
        let n = lane.len();
        for (b, &x) in bits.iter_mut().zip(lane) {
            *b = canon64(x);
        }
        match out {
            OutChunk::U8(v) => {
                self.caster.run(&bits[..n], v);
                if let Some(map) = &self.canonical {
                    for x in v.iter_mut() {
                        *x = map[*x as usize];
                    }
                }
            }
            OutChunk::U16(v) => self.caster.run(&bits[..n], v),
            _ => unreachable!("small float storage"),
        }
    }
}

pub(super) fn f64_loader(from: DType) -> Load<f64> {
    let to = DType::Float64;
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "f64", |b| value_of(from, b).to_f64()));
    }
    match wide_kind(from) {
        Some(k) => Load::Wide(k),
        None => Load::Codec { from, to },
    }
}

pub(super) fn int_loader(from: DType, to: DType) -> Load<i64> {
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "i64", |b| {
            int_lane(to, convert_bits(from, to, b))
        }));
    }
    match (wide_kind(from), from) {
        (Some(k), DType::Int { .. }) if holds(to, from) => Load::Wide(k),
        // A wider operand (a zero-dim int64 under PyTorch's categories, in a uint8 op) wraps
        // into the computation dtype first: `uint8 < int64(-100)` compares with 156.
        _ => Load::Codec { from, to },
    }
}

/// Whether every value of integer (or bool) dtype `from` is a value of integer `to`.
pub(super) fn holds(to: DType, from: DType) -> bool {
    let range = |d: DType| -> Option<(i128, i128)> {
        match d {
            DType::Bool => Some((0, 1)),
            DType::Int { bits, signed: true } => {
                Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
            }
            DType::Int { bits, .. } => Some((0, (1i128 << bits) - 1)),
            _ => None,
        }
    };
    match (range(to), range(from)) {
        (Some((tl, th)), Some((fl, fh))) => tl <= fl && fh <= th,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Stores: lane buffers into one chunk of the result storage.

/// One chunk of an output array's storage.
pub(super) enum OutChunk<'a> {
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    U32(&'a mut [u32]),
    U64(&'a mut [u64]),
    C32(&'a mut [[u16; 2]]),
    C64(&'a mut [[u32; 2]]),
    C128(&'a mut [[u64; 2]]),
}

impl OutChunk<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            OutChunk::U8(v) => v.len(),
            OutChunk::U16(v) => v.len(),
            OutChunk::U32(v) => v.len(),
            OutChunk::U64(v) => v.len(),
            OutChunk::C32(v) => v.len(),
            OutChunk::C64(v) => v.len(),
            OutChunk::C128(v) => v.len(),
        }
    }
}

pub(super) const F32_NAN: u32 = 0x7fc0_0000;

pub(super) const F64_NAN: u64 = 0x7ff8_0000_0000_0000;

#[inline(always)]
pub(super) fn canon32(x: f32) -> u32 {
    if x.is_nan() { F32_NAN } else { x.to_bits() }
}

#[inline(always)]
pub(super) fn canon64(x: f64) -> u64 {
    if x.is_nan() { F64_NAN } else { x.to_bits() }
}

/// Every code of a format of at most 8 bits, with NaN codes replaced by the positive canonical
/// NaN (a rounding overflow into an fn/fnuz format makes a signed NaN).
pub(super) fn canonical_nan_codes(f: &FloatFormat) -> Box<[u8; 256]> {
    let nan = f.encode(Value::Nan { neg: false }) as u8;
    let mut map = Box::new([0u8; 256]);
    for (c, m) in map.iter_mut().enumerate() {
        *m = match f.decode(c as u64 & ((1 << f.width()) - 1)) {
            Value::Nan { .. } => nan,
            _ => c as u8,
        };
    }
    map
}

/// Rounds float32 lane values into a float dtype's storage (NaN → the positive quiet NaN).
pub(super) struct F32Store {
    pub(super) caster: Option<Caster>,
    /// For formats of at most 8 bits: every code, with NaN codes replaced by the positive
    /// canonical NaN (a rounding overflow into an fn/fnuz format makes a signed NaN).
    pub(super) canonical: Option<Box<[u8; 256]>>,
}

impl F32Store {
    pub(super) fn new(to: DType) -> F32Store {
        let f32f = FloatFormat::float32();
        let canonical = to
            .float_format()
            .filter(|f| f.width() <= 8)
            .map(|f| canonical_nan_codes(&f));
        F32Store {
            caster: match to {
                DType::Float32 | DType::Complex64 => None,
                _ => Some(Caster::new(&f32f, &to.float_format().expect("float"))),
            },
            canonical,
        }
    }

    pub(super) fn store(&self, lane: &[f32], bits: &mut [u32], out: OutChunk) {
        let n = lane.len();
        match (out, &self.caster) {
            (OutChunk::U32(v), None) => {
                for (o, &x) in v.iter_mut().zip(lane) {
                    *o = canon32(x);
                }
            }
            (out, Some(c)) => {
                for (b, &x) in bits.iter_mut().zip(lane) {
                    *b = canon32(x);
                }
                match out {
                    OutChunk::U8(v) => {
                        c.run(&bits[..n], v);
                        if let Some(map) = &self.canonical {
                            for x in v.iter_mut() {
                                *x = map[*x as usize];
                            }
                        }
                    }
                    OutChunk::U16(v) => c.run(&bits[..n], v),
                    _ => unreachable!("small float storage"),
                }
            }
            _ => unreachable!("float32 storage"),
        }
    }
}

pub(super) fn store_f64(lane: &[f64], out: OutChunk) {
    let OutChunk::U64(v) = out else {
        unreachable!("float64 storage")
    };
    for (o, &x) in v.iter_mut().zip(lane) {
        *o = canon64(x);
    }
}

pub(super) fn store_int(lane: &[i64], out: OutChunk, bits: u32) {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    macro_rules! put {
        ($v:expr, $t:ty) => {
            for (o, &x) in $v.iter_mut().zip(lane) {
                *o = (x as u64 & mask) as $t;
            }
        };
    }
    match out {
        OutChunk::U8(v) => put!(v, u8),
        OutChunk::U16(v) => put!(v, u16),
        OutChunk::U32(v) => put!(v, u32),
        OutChunk::U64(v) => put!(v, u64),
        _ => unreachable!("integer storage"),
    }
}
