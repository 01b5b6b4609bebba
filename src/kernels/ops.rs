//! The CPU reference kernels: elementwise ops, casts and sums over `Array`s, with the result
//! dtype read from a generated promotion table (`promote::Generated`); kernels never compute a
//! join.
//!
//! Semantics (DESIGN.md, "Kernel semantics"): each operand is converted to the computation
//! dtype with one correct rounding; integers wrap; floats are IEEE round-to-nearest-even in the
//! result dtype: float32/float64 natively, formats of at most 16 bits computed in float32 and
//! rounded once (exact for + − × ÷, since float32 carries more than 2p + 2 bits of each); NaN
//! results are the positive quiet NaN; maximum/minimum propagate NaN and return the second
//! operand on ties (+0 vs −0); a weak Python int that does not fit is an `overflow` error.
//!
//! Execution: dtypes are dispatched once per chunk of `CHUNK` elements; each chunk is loaded
//! (converting) into lane buffers, computed, and stored (rounding), every stage a monomorphic
//! loop over L1-resident buffers; chunks run on rayon threads above `PARALLEL_MIN` elements.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use crate::kernels::array::{Array, Data};
use crate::kernels::cast::Caster;
use crate::kernels::stream::{self, Isa, Store};
use crate::numeric::dtype::DType;
use crate::numeric::format::{FloatFormat, IntTarget, Source, Value, cast_bits};
use crate::promote::{Generated, Operand, ScalarKind};

/// Elements per chunk: lane buffers of this size stay in L1/L2.
pub const CHUNK: usize = 4096;
/// The largest result a broadcast may produce (elements), refused rather than allocated.
pub const MAX_ELEMENTS: usize = 1 << 32;
/// Arrays at least this long run their chunks on the rayon pool.
pub const PARALLEL_MIN: usize = 1 << 17;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Subtract,
    Multiply,
    TrueDivide,
    FloorDivide,
    Power,
    Maximum,
    Minimum,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Negative,
    Absolute,
}

impl UnaryOp {
    /// The unary ops of the catalogue (tested equal), as variants.
    pub const ALL: [(&'static str, UnaryOp); 2] = [
        ("negative", UnaryOp::Negative),
        ("absolute", UnaryOp::Absolute),
    ];

    pub fn named(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o)
    }

    pub fn name(self) -> &'static str {
        UnaryOp::ALL
            .iter()
            .find(|(_, o)| *o == self)
            .expect("listed")
            .0
    }

    /// The op's catalogue entry.
    pub fn info(self) -> &'static crate::numeric::op::OpInfo {
        crate::numeric::op::info(self.name()).expect("every kernel op is in the catalogue")
    }
}

impl Op {
    /// The binary ops of the catalogue (`numeric::op::CATALOGUE`, tested equal), as variants.
    pub const ALL: [(&'static str, Op); 17] = [
        ("add", Op::Add),
        ("subtract", Op::Subtract),
        ("multiply", Op::Multiply),
        ("true_divide", Op::TrueDivide),
        ("floor_divide", Op::FloorDivide),
        ("power", Op::Power),
        ("maximum", Op::Maximum),
        ("minimum", Op::Minimum),
        ("equal", Op::Equal),
        ("not_equal", Op::NotEqual),
        ("less", Op::Less),
        ("less_equal", Op::LessEqual),
        ("greater", Op::Greater),
        ("greater_equal", Op::GreaterEqual),
        ("bitwise_and", Op::BitwiseAnd),
        ("bitwise_or", Op::BitwiseOr),
        ("bitwise_xor", Op::BitwiseXor),
    ];

    pub fn named(name: &str) -> Option<Op> {
        Op::ALL.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
    }

    pub fn name(self) -> &'static str {
        Op::ALL.iter().find(|(_, o)| *o == self).expect("listed").0
    }

    /// The op's catalogue entry.
    pub fn info(self) -> &'static crate::numeric::op::OpInfo {
        crate::numeric::op::info(self.name()).expect("every kernel op is in the catalogue")
    }

    fn is_comparison(self) -> bool {
        matches!(
            self,
            Op::Equal | Op::NotEqual | Op::Less | Op::LessEqual | Op::Greater | Op::GreaterEqual
        )
    }

    fn is_bitwise(self) -> bool {
        matches!(self, Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseXor)
    }
}

/// A Python scalar operand (weak in the policy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

impl Scalar {
    fn kind(self) -> ScalarKind {
        match self {
            Scalar::Bool(_) => ScalarKind::Bool,
            Scalar::Int(_) => ScalarKind::Int,
            Scalar::Float(_) => ScalarKind::Float,
            Scalar::Complex(..) => ScalarKind::Complex,
        }
    }
}

/// An operand: an array or a weak scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Array(Array),
    Scalar(Scalar),
}

impl Arg {
    fn operand(&self) -> Operand {
        match self {
            Arg::Array(a) => Operand::Array(a.dtype),
            Arg::Scalar(s) => Operand::Scalar(s.kind()),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Arg::Array(a) => &a.shape,
            Arg::Scalar(_) => &[],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The operands' dtypes have no join in the policy.
    Promotion,
    /// A weak scalar does not fit the result dtype.
    Overflow,
    /// The op is not defined for the dtype (bitwise on floats, …).
    Unsupported,
    /// Malformed input (shapes that do not broadcast, a bad axis, …).
    Input,
}

impl ErrorKind {
    pub fn key(self) -> &'static str {
        match self {
            ErrorKind::Promotion => "promotion",
            ErrorKind::Overflow => "overflow",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Input => "input",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
}

fn err<T>(kind: ErrorKind, message: impl Into<String>) -> Result<T, OpError> {
    Err(OpError {
        kind,
        message: message.into(),
    })
}

fn promotion(e: crate::promote::PromotionError) -> OpError {
    OpError {
        kind: ErrorKind::Promotion,
        message: e.0,
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions of single values (scalars, tables)

/// The exact value of an element of `d`.
fn value_of(d: DType, bits: u64) -> Value {
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

fn source_of(d: DType) -> Source {
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
fn convert_bits(from: DType, to: DType, bits: u64) -> u64 {
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
enum Wide {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

/// A lane value type and its conversions from wide sources (Rust's `as`: round to nearest
/// even, exact where the value fits).
trait Lane: Copy {
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
enum Load<L> {
    /// A table of every pattern of a source of at most 16 bits.
    Table(Arc<Vec<L>>),
    /// A source wider than 16 bits, converted per element by `Lane`'s conversion.
    Wide(Wide),
    /// Per element through the codec (wide source into a small computation dtype).
    Codec { from: DType, to: DType },
}

type TableCache =
    Mutex<HashMap<(DType, DType, &'static str), Arc<dyn std::any::Any + Send + Sync>>>;

/// A lane table of `from`'s patterns in computation dtype `to`, built once per process.
fn table<L: Copy + Send + Sync + 'static>(
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
fn raw(data: &Data, i: usize) -> u64 {
    match data {
        Data::U8(v) => v[i] as u64,
        Data::U16(v) => v[i] as u64,
        Data::U32(v) => v[i] as u64,
        Data::U64(v) => v[i],
        _ => unreachable!("real storage"),
    }
}

/// Loads `out.len()` elements of `data` from `start` (or element 0 repeated, for a splat).
fn load_into<L: Lane>(
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
fn wide_kind(d: DType) -> Option<Wide> {
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

fn f32_lane(to: DType, bits: u64) -> f32 {
    match to {
        DType::Float32 => f32::from_bits(bits as u32),
        _ => value_of(to, bits).to_f64() as f32, // exact: every small format is in float32
    }
}

fn f64_lane(to: DType, bits: u64) -> f64 {
    value_of(to, bits).to_f64()
}

/// Integer lane: the value as i64 (two's complement; uint64 reinterpreted).
fn int_lane(to: DType, bits: u64) -> i64 {
    match value_of(to, bits) {
        Value::Finite { neg, mant, .. } => {
            let m = mant as i128;
            (if neg { -m } else { m }) as i64
        }
        _ => 0,
    }
}

fn f32_loader(from: DType, to: DType) -> Load<f32> {
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

fn f64_loader(from: DType) -> Load<f64> {
    let to = DType::Float64;
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "f64", |b| value_of(from, b).to_f64()));
    }
    match wide_kind(from) {
        Some(k) => Load::Wide(k),
        None => Load::Codec { from, to },
    }
}

fn int_loader(from: DType, to: DType) -> Load<i64> {
    if from.pattern_bits() <= 16 {
        return Load::Table(table(from, to, "i64", |b| {
            int_lane(to, convert_bits(from, to, b))
        }));
    }
    match (wide_kind(from), from) {
        (Some(k), DType::Int { .. }) => Load::Wide(k),
        _ => Load::Codec { from, to },
    }
}

// ---------------------------------------------------------------------------------------------
// Stores: lane buffers into one chunk of the result storage.

/// One chunk of an output array's storage.
enum OutChunk<'a> {
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    U32(&'a mut [u32]),
    U64(&'a mut [u64]),
    C64(&'a mut [[u32; 2]]),
    C128(&'a mut [[u64; 2]]),
}

impl OutChunk<'_> {
    fn len(&self) -> usize {
        match self {
            OutChunk::U8(v) => v.len(),
            OutChunk::U16(v) => v.len(),
            OutChunk::U32(v) => v.len(),
            OutChunk::U64(v) => v.len(),
            OutChunk::C64(v) => v.len(),
            OutChunk::C128(v) => v.len(),
        }
    }
}

const F32_NAN: u32 = 0x7fc0_0000;
const F64_NAN: u64 = 0x7ff8_0000_0000_0000;

#[inline(always)]
fn canon32(x: f32) -> u32 {
    if x.is_nan() { F32_NAN } else { x.to_bits() }
}

#[inline(always)]
fn canon64(x: f64) -> u64 {
    if x.is_nan() { F64_NAN } else { x.to_bits() }
}

/// Every code of a format of at most 8 bits, with NaN codes replaced by the positive canonical
/// NaN (a rounding overflow into an fn/fnuz format makes a signed NaN).
fn canonical_nan_codes(f: &FloatFormat) -> Box<[u8; 256]> {
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
struct F32Store {
    caster: Option<Caster>,
    /// For formats of at most 8 bits: every code, with NaN codes replaced by the positive
    /// canonical NaN (a rounding overflow into an fn/fnuz format makes a signed NaN).
    canonical: Option<Box<[u8; 256]>>,
}

impl F32Store {
    fn new(to: DType) -> F32Store {
        let f32f = crate::numeric::format::float_format("float32").expect("catalogue");
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

    fn store(&self, lane: &[f32], bits: &mut [u32], out: OutChunk) {
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

fn store_f64(lane: &[f64], out: OutChunk) {
    let OutChunk::U64(v) = out else {
        unreachable!("float64 storage")
    };
    for (o, &x) in v.iter_mut().zip(lane) {
        *o = canon64(x);
    }
}

fn store_int(lane: &[i64], out: OutChunk, bits: u32) {
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

// ---------------------------------------------------------------------------------------------
// Op stages

/// NumPy's `npy_divmod` floor division for floats.
#[inline(always)]
fn floor_div_f64(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        (0.0f64).copysign(a / b)
    }
}

#[inline(always)]
fn floor_div_f32(a: f32, b: f32) -> f32 {
    if b == 0.0 {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        (0.0f32).copysign(a / b)
    }
}

macro_rules! float_stage {
    ($name:ident, $t:ty, $floor:ident) => {
        fn $name(op: Op, a: &[$t], b: &[$t], out: &mut [$t]) {
            let it = out.iter_mut().zip(a.iter().zip(b));
            match op {
                Op::Add => it.for_each(|(o, (&x, &y))| *o = x + y),
                Op::Subtract => it.for_each(|(o, (&x, &y))| *o = x - y),
                Op::Multiply => it.for_each(|(o, (&x, &y))| *o = x * y),
                Op::TrueDivide => it.for_each(|(o, (&x, &y))| *o = x / y),
                Op::FloorDivide => it.for_each(|(o, (&x, &y))| *o = $floor(x, y)),
                Op::Power => it.for_each(|(o, (&x, &y))| *o = (x as f64).powf(y as f64) as $t),
                // NaN propagates; ties (+0 vs -0) give the second operand.
                Op::Maximum => it.for_each(|(o, (&x, &y))| {
                    *o = if x.is_nan() || x > y {
                        x
                    } else if y.is_nan() {
                        y
                    } else {
                        y
                    }
                }),
                Op::Minimum => {
                    it.for_each(|(o, (&x, &y))| *o = if x.is_nan() || x < y { x } else { y })
                }
                _ => unreachable!("arithmetic"),
            }
        }
    };
}
float_stage!(stage_f32, f32, floor_div_f32);
float_stage!(stage_f64, f64, floor_div_f64);

fn compare<T: PartialOrd + Copy>(op: Op, a: &[T], b: &[T], out: &mut [u8]) {
    let it = out.iter_mut().zip(a.iter().zip(b));
    match op {
        Op::Equal => it.for_each(|(o, (x, y))| *o = (x == y) as u8),
        Op::NotEqual => it.for_each(|(o, (x, y))| *o = (x != y) as u8),
        Op::Less => it.for_each(|(o, (x, y))| *o = (x < y) as u8),
        Op::LessEqual => it.for_each(|(o, (x, y))| *o = (x <= y) as u8),
        Op::Greater => it.for_each(|(o, (x, y))| *o = (x > y) as u8),
        Op::GreaterEqual => it.for_each(|(o, (x, y))| *o = (x >= y) as u8),
        _ => unreachable!("comparison"),
    }
}

/// Integer ops on i64 lanes holding values of a `bits`-bit integer (unsigned 64-bit values
/// reinterpreted): wrapping, then truncated by the store.
fn stage_int(op: Op, signed: bool, bits: u32, a: &[i64], b: &[i64], out: &mut [i64]) {
    let it = out.iter_mut().zip(a.iter().zip(b));
    let unsigned64 = !signed && bits == 64;
    match op {
        Op::Add => it.for_each(|(o, (&x, &y))| *o = x.wrapping_add(y)),
        Op::Subtract => it.for_each(|(o, (&x, &y))| *o = x.wrapping_sub(y)),
        Op::Multiply => it.for_each(|(o, (&x, &y))| *o = x.wrapping_mul(y)),
        Op::FloorDivide if unsigned64 => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                ((x as u64) / (y as u64)) as i64
            }
        }),
        Op::FloorDivide => it.for_each(|(o, (&x, &y))| {
            *o = if y == 0 {
                0
            } else {
                let q = x.wrapping_div(y);
                if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }),
        Op::Power => it.for_each(|(o, (&x, &y))| {
            let (mut base, mut e, mut r) = (x, y as u64, 1i64);
            while e > 0 {
                if e & 1 == 1 {
                    r = r.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            *o = r;
        }),
        Op::Maximum if unsigned64 => {
            it.for_each(|(o, (&x, &y))| *o = (x as u64).max(y as u64) as i64)
        }
        Op::Minimum if unsigned64 => {
            it.for_each(|(o, (&x, &y))| *o = (x as u64).min(y as u64) as i64)
        }
        Op::Maximum => it.for_each(|(o, (&x, &y))| *o = x.max(y)),
        Op::Minimum => it.for_each(|(o, (&x, &y))| *o = x.min(y)),
        Op::BitwiseAnd => it.for_each(|(o, (&x, &y))| *o = x & y),
        Op::BitwiseOr => it.for_each(|(o, (&x, &y))| *o = x | y),
        Op::BitwiseXor => it.for_each(|(o, (&x, &y))| *o = x ^ y),
        _ => unreachable!("integer op"),
    }
}

// ---------------------------------------------------------------------------------------------
// Driving: broadcasting, chunks, threads

/// NumPy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, OpError> {
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
    let n = out.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if n.is_none_or(|n| n > MAX_ELEMENTS) {
        return err(
            ErrorKind::Input,
            format!("broadcasting {a:?} with {b:?} gives {out:?}, over {MAX_ELEMENTS} elements"),
        );
    }
    Ok(out)
}

/// `a` repeated to `shape` (which it broadcasts to), contiguous.
fn expand(a: &Array, shape: &[usize]) -> Array {
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
        Data::C64(v) => Data::C64(idx.iter().map(|&i| v[i]).collect()),
        Data::C128(v) => Data::C128(idx.iter().map(|&i| v[i]).collect()),
    };
    Array {
        dtype: a.dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// A scalar as a one-element array of dtype `to` (the policy's result dtype).
fn materialise(s: Scalar, to: DType) -> Result<Array, OpError> {
    let one = |bits: [u64; 2]| Array::from_bits(to, vec![], &[bits]).expect("fits");
    let real = |v: Value| -> Result<u64, OpError> {
        match to {
            DType::Bool | DType::Int { .. } => {
                let Value::Finite { neg, mant, .. } = v else {
                    unreachable!("integer scalars")
                };
                let (lo, hi): (i128, i128) = match to {
                    DType::Bool => (0, 1),
                    DType::Int { bits, signed: true } => {
                        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                    }
                    DType::Int { bits, .. } => (0, (1 << bits) - 1),
                    _ => unreachable!(),
                };
                let x = if neg { -(mant as i128) } else { mant as i128 };
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

/// Runs `f(start, chunk)` over the output storage in `CHUNK`s, on the rayon pool for large
/// arrays. Each call gets its own disjoint slice of the storage.
fn for_chunks(out: &mut Data, f: impl Fn(usize, OutChunk) + Sync) {
    fn split<T: Send>(
        v: &mut [T],
        wrap: fn(&mut [T]) -> OutChunk,
        f: &(impl Fn(usize, OutChunk) + Sync),
    ) {
        if v.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
            v.par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, s)| f(c * CHUNK, wrap(s)));
        } else {
            for (c, s) in v.chunks_mut(CHUNK).enumerate() {
                f(c * CHUNK, wrap(s));
            }
        }
    }
    match out {
        Data::U8(v) => split(v, |s| OutChunk::U8(s), &f),
        Data::U16(v) => split(v, |s| OutChunk::U16(s), &f),
        Data::U32(v) => split(v, |s| OutChunk::U32(s), &f),
        Data::U64(v) => split(v, |s| OutChunk::U64(s), &f),
        Data::C64(v) => split(v, |s| OutChunk::C64(s), &f),
        Data::C128(v) => split(v, |s| OutChunk::C128(s), &f),
    }
}

// ---------------------------------------------------------------------------------------------
// Binary ops

/// An operand ready to load: its array (full length, or one element to splat).
struct Input<'a> {
    array: std::borrow::Cow<'a, Array>,
    splat: bool,
}

fn prepare<'a>(arg: &'a Arg, compute: DType, shape: &[usize]) -> Result<Input<'a>, OpError> {
    let array = match arg {
        Arg::Array(a) => std::borrow::Cow::Borrowed(a),
        Arg::Scalar(s) => std::borrow::Cow::Owned(materialise(*s, compute)?),
    };
    if array.len() == 1 {
        return Ok(Input { array, splat: true });
    }
    if array.shape != shape {
        let expanded = expand(&array, shape);
        return Ok(Input {
            array: std::borrow::Cow::Owned(expanded),
            splat: false,
        });
    }
    Ok(Input {
        array,
        splat: false,
    })
}

/// Why `op` is not defined on computation dtype `c`, if it is not: the catalogue's accepted
/// kinds (`numeric::op`) decide, the message says what to do instead.
fn unsupported(op: Op, c: DType) -> Option<String> {
    let kinds = op.info().kinds;
    if kinds.accepts(c.kind()) {
        return None;
    }
    let name = c.name();
    Some(match (op, c) {
        (o, _) if o.is_bitwise() => format!(
            "{} is not defined for {name}; bitwise ops take integers and bool",
            o.name()
        ),
        (Op::Subtract, DType::Bool) => {
            "subtract is not defined for bool (NumPy: use bitwise_xor or logical_xor)".into()
        }
        (Op::FloorDivide | Op::Power, DType::Bool) => format!(
            "{} is not defined for bool; cast to an integer dtype first",
            op.name()
        ),
        (Op::TrueDivide, DType::Bool | DType::Int { .. }) => format!(
            "true_divide of {name} needs a float result and the policy has no [ops.true_divide] rule"
        ),
        (Op::FloorDivide | Op::Power, DType::Complex64 | DType::Complex128) => format!(
            "{} is not implemented for {name} in the reference kernels",
            op.name()
        ),
        _ => format!(
            "{} is not defined for {name}; it takes {}",
            op.name(),
            kinds.describe()
        ),
    })
}

/// The result dtype, shape and prepared operands of `op(a, b)`.
fn plan<'a>(policy: &Generated, op: Op, a: &'a Arg, b: &'a Arg) -> Result<Prepared<'a>, OpError> {
    let (oa, ob) = (a.operand(), b.operand());
    let compute = if op == Op::TrueDivide {
        policy.true_divide_type(oa, ob)
    } else {
        policy.result_type(oa, ob)
    }
    .map_err(promotion)?;
    if let Some(why) = unsupported(op, compute) {
        return err(ErrorKind::Unsupported, why);
    }
    let shape = broadcast(a.shape(), b.shape())?;
    let (x, y) = (prepare(a, compute, &shape)?, prepare(b, compute, &shape)?);
    if op == Op::Power && matches!(compute, DType::Int { signed: true, .. }) {
        let t = int_loader(y.array.dtype, compute);
        let n = y.array.len();
        let mut buf = vec![0i64; n];
        load_into(&t, &y.array.data, 0, false, &mut buf, int_lane);
        if buf.iter().any(|&e| e < 0) {
            return err(
                ErrorKind::Input,
                "integers to negative integer powers are not allowed (NumPy raises ValueError)",
            );
        }
    }
    let out_dtype = if op.is_comparison() {
        DType::Bool
    } else {
        compute
    };
    Ok((out_dtype, shape, x, y, compute))
}

type Prepared<'a> = (DType, Vec<usize>, Input<'a>, Input<'a>, DType);

/// `op(a, b)` under `policy`: result dtype from the generated table, NumPy broadcasting.
pub fn binary(policy: &Generated, op: Op, a: &Arg, b: &Arg) -> Result<Array, OpError> {
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b)?;
    let mut out = Array::zeroed(out_dtype, shape);
    run_binary(op, compute, &x, &y, &mut out.data);
    Ok(out)
}

/// `binary` into a preallocated output of the result's dtype and shape.
pub fn binary_into(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
    out: &mut Array,
) -> Result<(), OpError> {
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b)?;
    if out.dtype != out_dtype || out.shape != shape {
        return err(
            ErrorKind::Input,
            format!(
                "the output is {} {:?}, the result {} {shape:?}",
                out.dtype.name(),
                out.shape,
                out_dtype.name()
            ),
        );
    }
    run_binary(op, compute, &x, &y, &mut out.data);
    Ok(())
}

/// `f` over equal-length chunks of the output and the two inputs, on the rayon pool for large
/// arrays; `f` is told whether the whole output is large enough to bypass the cache.
#[inline(always)]
fn zip_chunks<A: Sync, B: Sync, O: Send>(
    a: &[A],
    b: &[B],
    out: &mut [O],
    f: impl Fn(&[A], &[B], &mut [O], Store) + Sync,
) {
    let store = Store::for_output::<O>(out.len());
    let threads = rayon::current_num_threads();
    if out.len() >= PARALLEL_MIN && threads > 1 {
        // Streamed chunks are few and large: each ends with a store fence, which waits for
        // its non-temporal stores to drain (with 16K-element chunks two threads measured no
        // faster than one).
        let chunk = match store {
            Store::Cached => CHUNK * 4,
            Store::Streamed => out.len().div_ceil(4 * threads).next_multiple_of(CHUNK),
        };
        out.par_chunks_mut(chunk).enumerate().for_each(|(c, o)| {
            let s = c * chunk;
            f(&a[s..s + o.len()], &b[s..s + o.len()], o, store)
        });
    } else {
        f(a, b, out, store)
    }
}

/// One fused pass for the common case: both operands full arrays whose elements convert to a
/// float32/float64 lane by `as` (or are the lane type), arithmetic ops, a float32/float64
/// result. Returns `false` (doing nothing) for anything else, which takes the chunked path.
fn fused_float(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    if x.splat || y.splat || !matches!(c, DType::Float32 | DType::Float64) {
        return false;
    }
    macro_rules! arith {
        ($a:expr, $b:expr, $o:expr, $fa:expr, $fb:expr, $enc:expr, $L:ty) => {{
            #[inline(always)]
            fn go<A: Copy + Sync, B: Copy + Sync, O: Copy + Default + Send>(
                op: Op,
                a: &[A],
                b: &[B],
                o: &mut [O],
                fa: impl Fn(A) -> $L + Copy + Sync,
                fb: impl Fn(B) -> $L + Copy + Sync,
                enc: impl Fn($L) -> O + Copy + Sync,
            ) -> bool {
                macro_rules! each {
                    ($f:expr) => {
                        zip_chunks(a, b, o, |a, b, o, store| {
                            stream::map2(store, a, b, o, |x, y| enc($f(fa(x), fb(y))))
                        })
                    };
                }
                match op {
                    Op::Add => each!(|x: $L, y: $L| x + y),
                    Op::Subtract => each!(|x: $L, y: $L| x - y),
                    Op::Multiply => each!(|x: $L, y: $L| x * y),
                    Op::TrueDivide => each!(|x: $L, y: $L| x / y),
                    Op::Maximum => each!(|x: $L, y: $L| if x.is_nan() || x > y { x } else { y }),
                    Op::Minimum => each!(|x: $L, y: $L| if x.is_nan() || x < y { x } else { y }),
                    _ => return false,
                }
                true
            }
            go(op, $a, $b, $o, $fa, $fb, $enc)
        }};
    }
    // The operand loaders a fused pass takes: a float32/float64 array, or int8/int32/int64.
    macro_rules! operand {
        ($inp:expr, $L:ty, |$s:ident, $f:ident| $body:expr) => {
            match (&$inp.array.data, $inp.array.dtype) {
                (Data::U32(v), DType::Float32) => {
                    let $s = &v[..];
                    let $f = |x: u32| f32::from_bits(x) as $L;
                    $body
                }
                (Data::U64(v), DType::Float64) => {
                    let $s = &v[..];
                    let $f = |x: u64| f64::from_bits(x) as $L;
                    $body
                }
                (
                    Data::U8(v),
                    DType::Int {
                        bits: 8,
                        signed: true,
                    },
                ) => {
                    let $s = &v[..];
                    let $f = |x: u8| x as i8 as $L;
                    $body
                }
                (
                    Data::U32(v),
                    DType::Int {
                        bits: 32,
                        signed: true,
                    },
                ) => {
                    let $s = &v[..];
                    let $f = |x: u32| x as i32 as $L;
                    $body
                }
                (
                    Data::U64(v),
                    DType::Int {
                        bits: 64,
                        signed: true,
                    },
                ) => {
                    let $s = &v[..];
                    let $f = |x: u64| x as i64 as $L;
                    $body
                }
                _ => false,
            }
        };
    }
    match (c, out) {
        (DType::Float32, Data::U32(o)) => {
            if x.array.dtype == DType::Float64 || y.array.dtype == DType::Float64 {
                return false;
            }
            operand!(x, f32, |sa, fa| operand!(y, f32, |sb, fb| arith!(
                sa,
                sb,
                &mut o[..],
                fa,
                fb,
                canon32,
                f32
            )))
        }
        (DType::Float64, Data::U64(o)) => {
            operand!(x, f64, |sa, fa| operand!(y, f64, |sb, fb| arith!(
                sa,
                sb,
                &mut o[..],
                fa,
                fb,
                canon64,
                f64
            )))
        }
        _ => false,
    }
}

/// `enc(f(fa(a[i]), fb(b[i])))` into `o`, one pass, in parallel chunks for large arrays.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fused_go<A: Copy + Sync, B: Copy + Sync, O: Copy + Default + Send, L: Copy>(
    a: &[A],
    b: &[B],
    o: &mut [O],
    fa: impl Fn(A) -> L + Copy + Sync,
    fb: impl Fn(B) -> L + Copy + Sync,
    f: impl Fn(L, L) -> L + Copy + Sync,
    enc: impl Fn(L) -> O + Copy + Sync,
) {
    let isa = Isa::detect();
    zip_chunks(a, b, o, |a, b, o, store| {
        isa.map2(store, a, b, o, |x, y| enc(f(fa(x), fb(y))))
    })
}

/// A fused pass for bfloat16 or float16 arithmetic on operands of that format: widening
/// (bfloat16 by a shift), float32 arithmetic, one rounding by the branch-free kernel, NaN made
/// canonical; float16 + − × ÷ with F16C where the CPU has it. (The 8-bit formats take
/// `fused_pairs`.)
fn fused_small(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let DType::Small(_) = c else { return false };
    if x.splat || y.splat || x.array.dtype != c || y.array.dtype != c {
        return false;
    }
    let fmt = c.float_format().expect("small float");
    macro_rules! with_op {
        (|$f:ident| $body:expr) => {
            match op {
                Op::Add => {
                    let $f = |x: f32, y: f32| x + y;
                    $body
                }
                Op::Subtract => {
                    let $f = |x: f32, y: f32| x - y;
                    $body
                }
                Op::Multiply => {
                    let $f = |x: f32, y: f32| x * y;
                    $body
                }
                Op::TrueDivide => {
                    let $f = |x: f32, y: f32| x / y;
                    $body
                }
                Op::Maximum => {
                    let $f = |x: f32, y: f32| if x.is_nan() || x > y { x } else { y };
                    $body
                }
                Op::Minimum => {
                    let $f = |x: f32, y: f32| if x.is_nan() || x < y { x } else { y };
                    $body
                }
                _ => return false,
            }
        };
    }
    match (&x.array.data, &y.array.data, out) {
        (Data::U16(a), Data::U16(b), Data::U16(o)) if fmt.name == "bfloat16" => {
            let load = |v: u16| f32::from_bits((v as u32) << 16);
            let enc = |v: f32| crate::kernels::cast::f32_to_bf16(canon32(v));
            with_op!(|f| fused_go(a, b, o, load, load, f, enc));
        }
        (Data::U16(a), Data::U16(b), Data::U16(o)) if fmt.name == "float16" => {
            #[cfg(target_arch = "x86_64")]
            if matches!(op, Op::Add | Op::Subtract | Op::Multiply | Op::TrueDivide)
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                // SAFETY: the CPU has AVX2 and F16C, checked just above.
                zip_chunks(a, b, o, |a, b, o, store| unsafe {
                    f16c::binary(op, store, a, b, o)
                });
                return true;
            }
            let load = |v: u16| f32::from_bits(crate::kernels::cast::f16_to_f32(v));
            let enc = |v: f32| crate::kernels::cast::f32_to_f16(canon32(v));
            with_op!(|f| fused_go(a, b, o, load, load, f, enc));
        }
        _ => return false,
    }
    true
}

/// float16 arithmetic with the F16C conversion instructions: 8 halves widened exactly, one
/// AVX operation, NaN made canonical, one round-to-nearest-even narrowing (the same values as
/// the portable path; `fast_paths_equal_the_general_path` holds them together).
#[cfg(target_arch = "x86_64")]
mod f16c {
    use super::{Op, Store};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn binary(op: Op, store: Store, a: &[u16], b: &[u16], o: &mut [u16]) {
        let scalar = |k: usize| {
            let w = |v: u16| f32::from_bits(crate::kernels::cast::f16_to_f32(v));
            let r = match op {
                Op::Add => w(a[k]) + w(b[k]),
                Op::Subtract => w(a[k]) - w(b[k]),
                Op::Multiply => w(a[k]) * w(b[k]),
                _ => w(a[k]) / w(b[k]),
            };
            crate::kernels::cast::f32_to_f16(super::canon32(r))
        };
        let n = o.len();
        // Streamed: whole 16-byte blocks from an aligned start, with non-temporal stores.
        let nt = store == Store::Streamed;
        let head = if nt {
            crate::kernels::stream::aligned_head(o, 16)
        } else {
            0
        };
        for (k, o) in o[..head].iter_mut().enumerate() {
            *o = scalar(k);
        }
        macro_rules! run {
            ($f:ident) => {{
                let nan = _mm256_set1_ps(f32::from_bits(0x7fc0_0000));
                let mut i = head;
                while i + 8 <= n {
                    // SAFETY: i + 8 <= n = a.len() = b.len() = o.len(); unaligned loads, and
                    // a non-temporal store only at a 16-byte aligned `o` (the head put it there).
                    unsafe {
                        let x = _mm256_cvtph_ps(_mm_loadu_si128(a.as_ptr().add(i).cast()));
                        let y = _mm256_cvtph_ps(_mm_loadu_si128(b.as_ptr().add(i).cast()));
                        let r = $f(x, y);
                        let r = _mm256_blendv_ps(r, nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(r, r));
                        let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r);
                        if nt {
                            _mm_stream_si128(o.as_mut_ptr().add(i).cast(), h);
                        } else {
                            _mm_storeu_si128(o.as_mut_ptr().add(i).cast(), h);
                        }
                    }
                    i += 8;
                }
                for k in i..n {
                    o[k] = scalar(k);
                }
            }};
        }
        match op {
            Op::Add => run!(_mm256_add_ps),
            Op::Subtract => run!(_mm256_sub_ps),
            Op::Multiply => run!(_mm256_mul_ps),
            _ => run!(_mm256_div_ps),
        }
        if nt {
            _mm_sfence();
        }
    }
}

/// A fused pass for float32 arithmetic on bfloat16 and float16 operands (bfloat16 ∨ float16
/// is float32 in JAX): both widen exactly by bit manipulation.
fn fused_halves(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let (Data::U32(o), DType::Float32) = (&mut *out, c) else {
        return false;
    };
    if x.splat || y.splat {
        return false;
    }
    let half = |d: DType| match d.float_format().map(|f| f.name) {
        Some(n) if n == "bfloat16" => Some(true),
        Some(n) if n == "float16" => Some(false),
        _ => None,
    };
    let (Some(xb), Some(yb), Data::U16(a), Data::U16(b)) = (
        half(x.array.dtype),
        half(y.array.dtype),
        &x.array.data,
        &y.array.data,
    ) else {
        return false;
    };
    let bf = |v: u16| f32::from_bits((v as u32) << 16);
    let hf = |v: u16| f32::from_bits(crate::kernels::cast::f16_to_f32(v));
    macro_rules! with_op {
        ($fa:expr, $fb:expr) => {
            match op {
                Op::Add => fused_go(a, b, o, $fa, $fb, |x: f32, y: f32| x + y, canon32),
                Op::Subtract => fused_go(a, b, o, $fa, $fb, |x: f32, y: f32| x - y, canon32),
                Op::Multiply => fused_go(a, b, o, $fa, $fb, |x: f32, y: f32| x * y, canon32),
                Op::TrueDivide => fused_go(a, b, o, $fa, $fb, |x: f32, y: f32| x / y, canon32),
                _ => return false,
            }
        };
    }
    match (xb, yb) {
        (true, true) => with_op!(bf, bf),
        (true, false) => with_op!(bf, hf),
        (false, true) => with_op!(hf, bf),
        (false, false) => with_op!(hf, hf),
    }
    true
}

/// The AVX-512 VBMI kernels for a float format of at most 8 bits, built once per dtype from the
/// same codec tables as the general path; `None` without the CPU features or for wider dtypes.
#[cfg(target_arch = "x86_64")]
fn kernel8(d: DType) -> Option<Arc<crate::kernels::avx512::Kernel8>> {
    type Cache = Mutex<HashMap<DType, Option<Arc<crate::kernels::avx512::Kernel8>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let fmt = d
        .float_format()
        .filter(|f| f.width() <= 8 && !d.is_complex())?;
    if !crate::kernels::avx512::Kernel8::available() {
        return None;
    }
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(d)
        .or_insert_with(|| {
            let f32f = crate::numeric::format::float_format("float32").expect("catalogue");
            let mask = (1u64 << fmt.width()) - 1;
            let widen: [u32; 256] =
                std::array::from_fn(|c| cast_bits(&fmt, &f32f, c as u64 & mask) as u32);
            let narrow = Caster::new(&f32f, &fmt).narrow().cloned();
            let is_nan = |c: u32| matches!(fmt.decode(c as u64 & mask), Value::Nan { .. });
            let canonical = canonical_nan_codes(&fmt);
            crate::kernels::avx512::Kernel8::new(fmt.width(), &widen, narrow, &canonical, is_nan)
                .map(Arc::new)
        })
        .clone()
}

/// Binary ops on two arrays of one format of at most 8 bits. Arithmetic runs the AVX-512 VBMI
/// kernel where the CPU has it (`avx512`: byte-table widening, float32 arithmetic, vector
/// narrowing). Otherwise, and for comparisons: a table of all 65536 operand
/// pairs, built once per (op, dtype) by the chunked reference path, so it is exact by
/// construction; each element is then one lookup.
fn fused_pairs(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    type PairCache = Mutex<HashMap<(Op, DType), Arc<Vec<u8>>>>;
    static CACHE: OnceLock<PairCache> = OnceLock::new();
    let (Data::U8(a), Data::U8(b), Data::U8(o)) = (&x.array.data, &y.array.data, &mut *out) else {
        return false;
    };
    if x.splat || y.splat || x.array.dtype != c || y.array.dtype != c || !c.is_float() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(k) = kernel8(c).filter(|k| k.computes(op)) {
        zip_chunks(a, b, o, |a, b, o, store| k.binary(op, store, a, b, o));
        return true;
    }
    if a.len() < 1 << 16 {
        return false; // building the table would cost more than the op
    }
    let cache = CACHE.get_or_init(Default::default);
    let hit = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(op, c))
        .cloned();
    let table = hit.unwrap_or_else(|| {
        let all: Vec<[u64; 2]> = (0..1u64 << 16).map(|k| [k >> 8, 0]).collect();
        let all_b: Vec<[u64; 2]> = (0..1u64 << 16).map(|k| [k & 0xff, 0]).collect();
        let w = c.pattern_bits();
        let keep = |v: &[[u64; 2]]| -> Vec<[u64; 2]> {
            v.iter().map(|p| [p[0] & ((1 << w) - 1), 0]).collect()
        };
        let (pa, pb) = (
            Array::from_bits(c, vec![1 << 16], &keep(&all)).expect("fits"),
            Array::from_bits(c, vec![1 << 16], &keep(&all_b)).expect("fits"),
        );
        let (ia, ib) = (
            Input {
                array: std::borrow::Cow::Owned(pa),
                splat: false,
            },
            Input {
                array: std::borrow::Cow::Owned(pb),
                splat: false,
            },
        );
        let out_dtype = if op.is_comparison() { DType::Bool } else { c };
        let mut t = Array::zeroed(out_dtype, vec![1 << 16]);
        run_chunked(op, c, &ia, &ib, &mut t.data);
        let Data::U8(t) = t.data else {
            unreachable!("8-bit results")
        };
        let t = Arc::new(t);
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((op, c), t.clone());
        t
    });
    let t = &table[..];
    fused_go(
        a,
        b,
        o,
        |v: u8| v as usize,
        |v: u8| v as usize,
        |i, j| i << 8 | j,
        |k| t[k],
    );
    true
}

/// A fused pass for integer arithmetic: operands of at most 64 bits read by `as`, wrapping
/// i64 arithmetic, the result truncated into a byte-multiple integer dtype.
fn fused_int(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let DType::Int { bits, signed } = c else {
        return false;
    };
    if x.splat || y.splat || bits < 8 {
        return false;
    }
    let minmax_ok = signed || bits < 64;
    macro_rules! with_op {
        ($t:ty, |$f:ident| $body:expr) => {
            match op {
                Op::Add => {
                    let $f = |x: $t, y: $t| x.wrapping_add(y);
                    $body
                }
                Op::Subtract => {
                    let $f = |x: $t, y: $t| x.wrapping_sub(y);
                    $body
                }
                Op::Multiply => {
                    let $f = |x: $t, y: $t| x.wrapping_mul(y);
                    $body
                }
                Op::Maximum if minmax_ok => {
                    let $f = |x: $t, y: $t| x.max(y);
                    $body
                }
                Op::Minimum if minmax_ok => {
                    let $f = |x: $t, y: $t| x.min(y);
                    $body
                }
                Op::BitwiseAnd => {
                    let $f = |x: $t, y: $t| x & y;
                    $body
                }
                Op::BitwiseOr => {
                    let $f = |x: $t, y: $t| x | y;
                    $body
                }
                Op::BitwiseXor => {
                    let $f = |x: $t, y: $t| x ^ y;
                    $body
                }
                _ => return false,
            }
        };
    }
    // Operands of one storage unit, read as integers by sign- or zero-extension with
    // run-time shifts (so one loop serves int8 and uint8 alike).
    let ext = |d: DType| -> Option<(u32, bool)> {
        match d {
            DType::Bool => Some((64 - 1, false)),
            DType::Int { bits, signed } if bits >= 8 => Some((64 - bits, signed)),
            _ => None,
        }
    };
    let (Some((sa, xa)), Some((sb, xb))) = (ext(x.array.dtype), ext(y.array.dtype)) else {
        return false;
    };
    let load = move |shift: u32, signed: bool| {
        move |v: u64| {
            let v = (v << shift) as i64;
            if signed {
                v >> shift
            } else {
                ((v as u64) >> shift) as i64
            }
        }
    };
    let (la, lb) = (load(sa, xa), load(sb, xb));
    // Results of at most 16 bits compute in i32 lanes (twice as many per vector): every
    // operand value fits, and wrapping modulo 2^32 truncates alike.
    // (32-bit shifts: SSE2/AVX2 have no 64-bit arithmetic shift, so i64 sign extension
    // would not vectorise.)
    let load32 = move |shift: u32, signed: bool| {
        let shift = shift.saturating_sub(32);
        move |v: u64| {
            let v = ((v as u32) << shift) as i32;
            if signed {
                v >> shift
            } else {
                ((v as u32) >> shift) as i32
            }
        }
    };
    let (la32, lb32) = (load32(sa, xa), load32(sb, xb));
    // One arm per output storage: lane type, loaders, truncation.
    macro_rules! arm {
        ($o:expr, $a:expr, $b:expr, $t:ty, $lane:ty, $la:expr, $lb:expr, $out:ty) => {
            with_op!($lane, |f| fused_go(
                $a,
                $b,
                $o,
                |v: $t| $la(v as u64),
                |v: $t| $lb(v as u64),
                f,
                |v: $lane| v as $out
            ))
        };
    }
    macro_rules! go {
        ($a:expr, $b:expr, $t:ty) => {
            match out {
                Data::U8(o) => arm!(o, $a, $b, $t, i32, la32, lb32, u8),
                Data::U16(o) => arm!(o, $a, $b, $t, i32, la32, lb32, u16),
                Data::U32(o) => arm!(o, $a, $b, $t, i64, la, lb, u32),
                Data::U64(o) => arm!(o, $a, $b, $t, i64, la, lb, u64),
                _ => return false,
            }
        };
    }
    match (&x.array.data, &y.array.data) {
        (Data::U8(a), Data::U8(b)) => go!(a, b, u8),
        (Data::U16(a), Data::U16(b)) => go!(a, b, u16),
        (Data::U32(a), Data::U32(b)) => go!(a, b, u32),
        (Data::U64(a), Data::U64(b)) => go!(a, b, u64),
        _ => return false,
    }
    true
}

fn run_binary(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    if fused_float(op, c, x, y, out)
        || fused_small(op, c, x, y, out)
        || fused_halves(op, c, x, y, out)
        || fused_pairs(op, c, x, y, out)
        || fused_int(op, c, x, y, out)
    {
        return;
    }
    run_chunked(op, c, x, y, out)
}

/// The general path: per chunk, load (converting) into lane buffers, compute, store.
fn run_chunked(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    let (xd, yd) = (&x.array.data, &y.array.data);
    let (xt, yt) = (x.array.dtype, y.array.dtype);
    match c {
        DType::Float32 | DType::Small(_) => {
            let (lx, ly) = (f32_loader(xt, c), f32_loader(yt, c));
            let store = F32Store::new(c);
            for_chunks(out, |start, chunk| {
                let n = chunk.len();
                let (mut a, mut b, mut r) = ([0f32; CHUNK], [0f32; CHUNK], [0f32; CHUNK]);
                load_into(&lx, xd, start, x.splat, &mut a[..n], f32_lane);
                load_into(&ly, yd, start, y.splat, &mut b[..n], f32_lane);
                if op.is_comparison() {
                    let OutChunk::U8(o) = chunk else {
                        unreachable!()
                    };
                    compare(op, &a[..n], &b[..n], o);
                } else {
                    stage_f32(op, &a[..n], &b[..n], &mut r[..n]);
                    let mut bits = [0u32; CHUNK];
                    store.store(&r[..n], &mut bits, chunk);
                }
            });
        }
        DType::Float64 => {
            let (lx, ly) = (f64_loader(xt), f64_loader(yt));
            for_chunks(out, |start, chunk| {
                let n = chunk.len();
                let (mut a, mut b, mut r) = ([0f64; CHUNK], [0f64; CHUNK], [0f64; CHUNK]);
                load_into(&lx, xd, start, x.splat, &mut a[..n], f64_lane);
                load_into(&ly, yd, start, y.splat, &mut b[..n], f64_lane);
                if op.is_comparison() {
                    let OutChunk::U8(o) = chunk else {
                        unreachable!()
                    };
                    compare(op, &a[..n], &b[..n], o);
                } else {
                    stage_f64(op, &a[..n], &b[..n], &mut r[..n]);
                    store_f64(&r[..n], chunk);
                }
            });
        }
        DType::Bool | DType::Int { .. } => {
            let (bits, signed) = match c {
                DType::Int { bits, signed } => (bits, signed),
                _ => (1, false),
            };
            let op = match (c, op) {
                (DType::Bool, Op::Add) => Op::BitwiseOr,
                (DType::Bool, Op::Multiply) => Op::BitwiseAnd,
                _ => op,
            };
            let (lx, ly) = (int_loader(xt, c), int_loader(yt, c));
            for_chunks(out, |start, chunk| {
                let n = chunk.len();
                let (mut a, mut b, mut r) = ([0i64; CHUNK], [0i64; CHUNK], [0i64; CHUNK]);
                load_into(&lx, xd, start, x.splat, &mut a[..n], int_lane);
                load_into(&ly, yd, start, y.splat, &mut b[..n], int_lane);
                if op.is_comparison() {
                    let OutChunk::U8(o) = chunk else {
                        unreachable!()
                    };
                    if !signed && bits == 64 {
                        let (ua, ub): (Vec<u64>, Vec<u64>) = (
                            a[..n].iter().map(|&v| v as u64).collect(),
                            b[..n].iter().map(|&v| v as u64).collect(),
                        );
                        compare(op, &ua, &ub, o);
                    } else {
                        compare(op, &a[..n], &b[..n], o);
                    }
                } else {
                    stage_int(op, signed, bits, &a[..n], &b[..n], &mut r[..n]);
                    store_int(&r[..n], chunk, bits);
                }
            });
        }
        DType::Complex64 | DType::Complex128 => run_complex(op, c, x, y, out),
    }
}

// ---------------------------------------------------------------------------------------------
// Complex

/// The components of element `i` of any array as f64 (exact: complex64 parts are float32),
/// converted to complex dtype `c` first.
fn complex_at(a: &Array, i: usize, c: DType) -> (f64, f64) {
    let part = |bits: u64, d: DType| -> f64 {
        let f = c.float_format().expect("complex parts");
        let src = match d {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            other => other,
        };
        let b = if src.float_format() == Some(f.clone()) {
            bits
        } else {
            match src.float_format() {
                Some(sf) => cast_bits(&sf, &f, bits),
                None => f.encode(value_of(src, bits)),
            }
        };
        f.decode(b).to_f64()
    };
    match &a.data {
        Data::C64(v) => (part(v[i][0] as u64, a.dtype), part(v[i][1] as u64, a.dtype)),
        Data::C128(v) => (part(v[i][0], a.dtype), part(v[i][1], a.dtype)),
        d => (part(raw(d, i), a.dtype), 0.0),
    }
}

#[inline(always)]
fn cge(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr > yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi >= yi)
}

#[inline(always)]
fn cle(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr < yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi <= yi)
}

#[inline(always)]
fn clt(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr < yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi < yi)
}

/// NumPy's complex ops, computed in the component precision `F` (f32 for complex64).
fn complex_op<F: Float>(op: Op, (ar, ai): (F, F), (br, bi): (F, F)) -> Result<(F, F), bool> {
    Ok(match op {
        Op::Add => (ar + br, ai + bi),
        Op::Subtract => (ar - br, ai - bi),
        // As NumPy's SIMD loops: fused multiply-adds (measured bit for bit on complex64).
        Op::Multiply => (ar.mul_add(br, (ai * bi).neg()), ar.mul_add(bi, ai * br)),
        Op::TrueDivide => {
            // NumPy's (Smith's) algorithm.
            let (babs_r, babs_i) = (br.abs(), bi.abs());
            if babs_r >= babs_i {
                if babs_r == F::ZERO && babs_i == F::ZERO {
                    (ar / babs_r, ai / babs_r)
                } else {
                    let rat = bi / br;
                    let scl = F::ONE / (br + bi * rat);
                    ((ar + ai * rat) * scl, (ai - ar * rat) * scl)
                }
            } else {
                let rat = br / bi;
                let scl = F::ONE / (bi + br * rat);
                ((ar * rat + ai) * scl, (ai * rat - ar) * scl)
            }
        }
        Op::Maximum | Op::Minimum => {
            let (x, y) = ((ar.f64(), ai.f64()), (br.f64(), bi.f64()));
            let keep_first = ar.is_nan()
                || ai.is_nan()
                || if op == Op::Maximum {
                    cge(x.0, x.1, y.0, y.1)
                } else {
                    cle(x.0, x.1, y.0, y.1)
                };
            if keep_first { (ar, ai) } else { (br, bi) }
        }
        _ => {
            let (x, y) = ((ar.f64(), ai.f64()), (br.f64(), bi.f64()));
            return Err(match op {
                Op::Equal => x.0 == y.0 && x.1 == y.1,
                Op::NotEqual => !(x.0 == y.0 && x.1 == y.1),
                Op::Less => clt(x.0, x.1, y.0, y.1),
                Op::LessEqual => cle(x.0, x.1, y.0, y.1),
                Op::Greater => clt(y.0, y.1, x.0, x.1),
                Op::GreaterEqual => cle(y.0, y.1, x.0, x.1),
                _ => unreachable!("supported complex op"),
            });
        }
    })
}

/// The float arithmetic complex ops need, for f32 and f64.
pub trait Float:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn abs(self) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn neg(self) -> Self;
    fn is_nan(self) -> bool;
    fn f64(self) -> f64;
}

impl Float for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
    fn neg(self) -> f32 {
        -self
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Float for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
    fn neg(self) -> f64 {
        -self
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn f64(self) -> f64 {
        self
    }
}

/// Loads a chunk of an operand as complex components of lane type `L` (the parts' float type):
/// complex storage split into parts, a real operand through its lane loader with zero
/// imaginary parts.
fn load_complex<L: Lane + Default + From<f32>>(
    inp: &Input,
    start: usize,
    re: &mut [L],
    im: &mut [L],
    real: fn(DType) -> Load<L>,
    to_lane: fn(DType, u64) -> L,
) {
    let n = re.len();
    let idx = |k: usize| if inp.splat { 0 } else { start + k };
    match &inp.array.data {
        Data::C64(v) => {
            for k in 0..n {
                let [r, i] = v[idx(k)];
                re[k] = L::from(f32::from_bits(r));
                im[k] = L::from(f32::from_bits(i));
            }
        }
        Data::C128(v) => {
            for k in 0..n {
                let [r, i] = v[idx(k)];
                re[k] = L::wide(Wide::F64, r);
                im[k] = L::wide(Wide::F64, i);
            }
        }
        d => {
            load_into(&real(inp.array.dtype), d, start, inp.splat, re, to_lane);
            im.fill(L::default());
        }
    }
}

/// A fused pass for complex64 with complex64 or float32 operands and + − ×.
fn fused_complex64(op: Op, x: &Input, y: &Input, out: &mut Data) -> bool {
    let Data::C64(o) = out else { return false };
    if x.splat || y.splat || !matches!(op, Op::Add | Op::Subtract | Op::Multiply) {
        return false;
    }
    type C = (f32, f32);
    let cx = |v: [u32; 2]| (f32::from_bits(v[0]), f32::from_bits(v[1]));
    let re = |v: u32| (f32::from_bits(v), 0.0f32);
    let enc = |(r, i): C| [canon32(r), canon32(i)];
    macro_rules! with_op {
        (|$f:ident| $body:expr) => {
            match op {
                Op::Add => {
                    let $f = |a: C, b: C| (a.0 + b.0, a.1 + b.1);
                    $body
                }
                Op::Subtract => {
                    let $f = |a: C, b: C| (a.0 - b.0, a.1 - b.1);
                    $body
                }
                _ => {
                    let $f =
                        |a: C, b: C| (a.0.mul_add(b.0, -(a.1 * b.1)), a.0.mul_add(b.1, a.1 * b.0));
                    $body
                }
            }
        };
    }
    match (&x.array.data, x.array.dtype, &y.array.data, y.array.dtype) {
        (Data::C64(a), _, Data::C64(b), _) => with_op!(|f| fused_go(a, b, o, cx, cx, f, enc)),
        (Data::C64(a), _, Data::U32(b), DType::Float32) => {
            with_op!(|f| fused_go(a, b, o, cx, re, f, enc))
        }
        (Data::U32(a), DType::Float32, Data::C64(b), _) => {
            with_op!(|f| fused_go(a, b, o, re, cx, f, enc))
        }
        _ => return false,
    }
    true
}

fn run_complex(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    if c == DType::Complex64 && fused_complex64(op, x, y, out) {
        return;
    }
    macro_rules! chunked {
        ($L:ty, $real:expr, $to_lane:expr, $canon:expr) => {
            for_chunks(out, |start, chunk| {
                let n = chunk.len();
                let z = <$L>::default();
                let (mut ar, mut ai, mut br, mut bi) =
                    ([z; CHUNK], [z; CHUNK], [z; CHUNK], [z; CHUNK]);
                load_complex(x, start, &mut ar[..n], &mut ai[..n], $real, $to_lane);
                load_complex(y, start, &mut br[..n], &mut bi[..n], $real, $to_lane);
                match chunk {
                    OutChunk::U8(o) => {
                        for k in 0..n {
                            let r = complex_op::<$L>(op, (ar[k], ai[k]), (br[k], bi[k]));
                            o[k] = r.err().expect("comparison") as u8;
                        }
                    }
                    OutChunk::C64(o) => {
                        for k in 0..n {
                            let (re, im) = complex_op::<$L>(op, (ar[k], ai[k]), (br[k], bi[k]))
                                .expect("arithmetic");
                            o[k] = [$canon(re) as u32, $canon(im) as u32];
                        }
                    }
                    OutChunk::C128(o) => {
                        for k in 0..n {
                            let (re, im) = complex_op::<$L>(op, (ar[k], ai[k]), (br[k], bi[k]))
                                .expect("arithmetic");
                            o[k] = [$canon(re) as u64, $canon(im) as u64];
                        }
                    }
                    _ => unreachable!("complex or bool output"),
                }
            })
        };
    }
    if c == DType::Complex64 {
        chunked!(f32, |d| f32_loader(d, DType::Float32), f32_lane, canon32)
    } else {
        chunked!(f64, f64_loader, f64_lane, canon64)
    }
}

// ---------------------------------------------------------------------------------------------
// Unary ops, astype

/// `negative` or `absolute` of an array (absolute of complex is the real magnitude).
pub fn unary(op: UnaryOp, a: &Array) -> Result<Array, OpError> {
    let d = a.dtype;
    let kinds = op.info().kinds;
    if !kinds.accepts(d.kind()) {
        return err(
            ErrorKind::Unsupported,
            match (op, d) {
                (UnaryOp::Negative, DType::Bool) => {
                    "negative is not defined for bool (NumPy: use logical_not)".to_string()
                }
                _ => format!(
                    "{} is not defined for {}; it takes {}",
                    op.name(),
                    d.name(),
                    kinds.describe()
                ),
            },
        );
    }
    let out_dtype = match (op, d) {
        (UnaryOp::Absolute, DType::Complex64) => DType::Float32,
        (UnaryOp::Absolute, DType::Complex128) => DType::Float64,
        _ => d,
    };
    let mut out = Array::zeroed(out_dtype, a.shape.clone());
    match d {
        DType::Bool => out.data = a.data.clone(),
        DType::Int { bits, signed } => {
            let unsigned = !signed;
            let l = int_loader(d, d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0i64; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], int_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => x.wrapping_neg(),
                        UnaryOp::Absolute if unsigned => *x,
                        UnaryOp::Absolute => x.wrapping_abs(),
                    };
                }
                store_int(&v[..n], chunk, bits);
            });
        }
        DType::Float32 | DType::Small(_) => {
            let l = f32_loader(d, d);
            let store = F32Store::new(d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0f32; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], f32_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => -*x,
                        UnaryOp::Absolute => x.abs(),
                    };
                }
                let mut bits = [0u32; CHUNK];
                store.store(&v[..n], &mut bits, chunk);
            });
        }
        DType::Float64 => {
            let l = f64_loader(d);
            for_chunks(&mut out.data, |start, chunk| {
                let n = chunk.len();
                let mut v = [0f64; CHUNK];
                load_into(&l, &a.data, start, false, &mut v[..n], f64_lane);
                for x in &mut v[..n] {
                    *x = match op {
                        UnaryOp::Negative => -*x,
                        UnaryOp::Absolute => x.abs(),
                    };
                }
                store_f64(&v[..n], chunk);
            });
        }
        DType::Complex64 | DType::Complex128 => {
            let n = a.len();
            let mut bits = Vec::with_capacity(n);
            for i in 0..n {
                let (re, im) = complex_at(a, i, d);
                bits.push(match (op, d) {
                    (UnaryOp::Negative, DType::Complex64) => {
                        [canon32(-(re as f32)) as u64, canon32(-(im as f32)) as u64]
                    }
                    (UnaryOp::Negative, _) => [canon64(-re), canon64(-im)],
                    // hypot of the float32 parts, computed in f64 and rounded once.
                    (UnaryOp::Absolute, DType::Complex64) => {
                        [canon32(re.hypot(im) as f32) as u64, 0]
                    }
                    (UnaryOp::Absolute, _) => [canon64(re.hypot(im)), 0],
                });
            }
            out = Array::from_bits(out_dtype, a.shape.clone(), &bits).expect("shape kept");
        }
    }
    Ok(out)
}

/// `astype` into a preallocated output of dtype `out.dtype` and `a`'s shape.
pub fn astype_into(a: &Array, out: &mut Array) -> Result<(), OpError> {
    if out.shape != a.shape {
        return err(ErrorKind::Input, "astype keeps the shape");
    }
    let fast = |d: DType| d.float_format().filter(|_| !d.is_complex());
    if let (Some(f), Some(t)) = (fast(a.dtype), fast(out.dtype)) {
        #[cfg(target_arch = "x86_64")]
        if let (Data::U8(i), Data::U32(o), DType::Float32, Some(k)) =
            (&a.data, &mut out.data, out.dtype, kernel8(a.dtype))
        {
            // 8-bit → 32-bit: the AVX-512 VBMI byte-plane widening of the codec's table.
            zip_chunks(i, i, o, |i, _, o, store| k.widen(store, i, o));
            return Ok(());
        }
        let caster = Caster::new(&f, &t);
        // Large arrays convert in parallel chunks (the cast is elementwise).
        macro_rules! go {
            ($i:expr) => {
                match &mut out.data {
                    Data::U8(o) => zip_chunks($i, $i, o, |i, _, o, store| caster.run_to(store, i, o)),
                    Data::U16(o) => zip_chunks($i, $i, o, |i, _, o, store| caster.run_to(store, i, o)),
                    Data::U32(o) => zip_chunks($i, $i, o, |i, _, o, store| caster.run_to(store, i, o)),
                    Data::U64(o) => zip_chunks($i, $i, o, |i, _, o, store| caster.run_to(store, i, o)),
                    _ => unreachable!("real storage"),
                }
            };
        }
        match &a.data {
            Data::U8(i) => go!(i),
            Data::U16(i) => go!(i),
            Data::U32(i) => go!(i),
            Data::U64(i) => go!(i),
            _ => unreachable!("real storage"),
        }
        return Ok(());
    }
    if !astype_ints(a, out) {
        *out = astype_general(a, out.dtype);
    }
    Ok(())
}

/// Sign extension of a stored integer pattern of the storage type's full width.
trait Extend: crate::kernels::cast::Unit {
    fn sext(self) -> i64;
}

macro_rules! extend {
    ($($u:ty => $i:ty),*) => {$(
        impl Extend for $u {
            #[inline(always)]
            fn sext(self) -> i64 {
                self as $i as i64
            }
        }
    )*};
}
extend!(u8 => i8, u16 => i16, u32 => i32, u64 => i64);

/// `astype` between real dtypes where one side is an integer or bool, with `convert_bits`'s
/// semantics (integers wrap; floats truncate, saturate, NaN → 0; bool is `value != 0`;
/// integers to floats round to nearest even), which are those of Rust's `as`:
/// - from bool or an integer of 8, 16, 32 or 64 bits to bool, an integer, float32 or float64,
///   and from float32 or float64 to bool or an integer: one `as` conversion per element (the
///   saturating float → integer ones written as selects, which vectorise);
/// - from any other source of at most 16 bits (bool, int4, float16, float8, …): a table of
///   every source pattern, built by `convert_bits` once per pair of dtypes.
///
/// Returns `false` (doing nothing) for float to float (the caster's) and for 32- or 64-bit
/// integers to the small float formats (`astype_general`'s per-element codec).
fn astype_ints(a: &Array, out: &mut Array) -> bool {
    let (from, to) = (a.dtype, out.dtype);
    if from.is_complex() || to.is_complex() || (from.is_float() && to.is_float()) {
        return false;
    }
    let (standard, wide_float) = (
        |d: DType| {
            matches!(
                d,
                DType::Int {
                    bits: 8 | 16 | 32 | 64,
                    ..
                }
            )
        },
        |d: DType| matches!(d, DType::Float32 | DType::Float64),
    );
    let int_like = |d: DType| matches!(d, DType::Bool | DType::Int { .. });
    let as_source = standard(from) || from == DType::Bool;
    if (as_source && (int_like(to) || wide_float(to))) || (wide_float(from) && int_like(to)) {
        as_conversions(a, out);
        return true;
    }
    if from.pattern_bits() > 16 {
        return false;
    }
    type TableCache = Mutex<HashMap<(DType, DType), Arc<Vec<u64>>>>;
    static TABLES: OnceLock<TableCache> = OnceLock::new();
    let table = TABLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((from, to))
        .or_insert_with(|| {
            Arc::new(
                (0..1u64 << from.pattern_bits())
                    .map(|p| convert_bits(from, to, p))
                    .collect(),
            )
        })
        .clone();
    let mask = table.len() as u64 - 1;
    macro_rules! go {
        ($i:expr, $o:expr) => {
            convert_chunks($i, $o, |x| table[(x as u64 & mask) as usize])
        };
    }
    macro_rules! each_out {
        ($i:expr) => {
            match &mut out.data {
                Data::U8(o) => go!($i, o),
                Data::U16(o) => go!($i, o),
                Data::U32(o) => go!($i, o),
                Data::U64(o) => go!($i, o),
                _ => unreachable!("real storage"),
            }
        };
    }
    match &a.data {
        Data::U8(i) => each_out!(i),
        Data::U16(i) => each_out!(i),
        _ => unreachable!("at most 16 bits"),
    }
    true
}

/// `o[k] = f(i[k])` as bits, in parallel chunks for large arrays. The chunk loop is
/// monomorphic; the parallel split takes it as `dyn`, so that the split is compiled once per
/// pair of storage types, not once per conversion.
fn convert_chunks<S: crate::kernels::cast::Unit, D: crate::kernels::cast::Unit>(
    i: &[S],
    o: &mut [D],
    f: impl Fn(S) -> u64 + Sync,
) {
    let isa = Isa::detect();
    let body = |i: &[S], _: &[S], o: &mut [D], store: Store| {
        isa.map2(store, i, i, o, |x, _| D::from_bits(f(x)))
    };
    zip_chunks(
        i,
        i,
        o,
        &body as &(dyn Fn(&[S], &[S], &mut [D], Store) + Sync),
    )
}

/// The `as` conversions of `astype_ints`, one monomorphic loop per pair of storage types the
/// dtypes can have.
fn as_conversions(a: &Array, out: &mut Array) {
    use crate::kernels::cast::Unit;
    let (from, to) = (a.dtype, out.dtype);
    // The destination integer's width, mask and range (two's-complement patterns of `w` bits).
    let (w, signed_to) = match to {
        DType::Int { bits, signed } => (bits, signed),
        _ => (1, false),
    };
    let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    // The range of a destination that fits i32 lanes (every one but uint32 and the 64-bit
    // ones), as f32 where that is exact (at most 24 bits) and as f64.
    let fits_i32 = w < 32 || (w == 32 && signed_to);
    let (lo, hi) = match signed_to {
        true => ((1i64 << (w - 1)).wrapping_neg(), (mask >> 1) as i64),
        false => (0, mask as i64),
    };
    let (lo32, hi32, lo64, hi64) = (lo as f32, hi as f32, lo as f64, hi as f64);
    let mask32 = mask as u32;
    let signed_from = matches!(from, DType::Int { signed: true, .. });
    // `$conv` maps a source element `x` (of its storage type) to the destination's bits, for
    // each listed source and destination storage.
    macro_rules! go {
        ($i:expr, $o:expr, |$x:ident| $conv:expr) => {
            convert_chunks($i, $o, |$x| $conv as u64)
        };
    }
    // `$x` truncated toward zero and saturated to [lo, hi] (within i32), NaN → 0: what `as`
    // does, as selects the compiler vectorises.
    macro_rules! saturate {
        ($x:expr, $lo:expr, $hi:expr) => {{
            let x = $x;
            let c = if x.is_nan() { 0.0 } else { x };
            let c = if c < $lo { $lo } else { c };
            let c = if c > $hi { $hi } else { c };
            // SAFETY: `c` is finite and within [lo, hi], inside i32's range.
            unsafe { c.to_int_unchecked::<i32>() }
        }};
    }
    // The same for the 64-bit integer `$t`, whose largest value float64 cannot hold: from
    // `2^64` or `2^63` (`$top`) up the result is `$t::MAX`, below it truncation is exact.
    macro_rules! saturate64 {
        ($x:expr, $t:ty, $top:expr) => {{
            let x = $x;
            let c = if x.is_nan() { 0.0 } else { x };
            let c = if c < <$t>::MIN as f64 {
                <$t>::MIN as f64
            } else {
                c
            };
            let big = c >= $top;
            let c = if big { 0.0 } else { c };
            // SAFETY: `c` is finite and within [MIN, top), inside `$t`'s range.
            let r = unsafe { c.to_int_unchecked::<$t>() };
            if big { <$t>::MAX } else { r }
        }};
    }
    macro_rules! conv_out {
        ($i:ident, [$($vo:ident),*], |$x:ident| $conv:expr) => {
            match &mut out.data {
                $(Data::$vo(o) => go!($i, o, |$x| $conv),)*
                _ => unreachable!("the destination dtype's storage"),
            }
        };
    }
    macro_rules! conv {
        ([$($vi:ident),*] -> $outs:tt, |$x:ident| $conv:expr) => {
            match &a.data {
                $(Data::$vi(i) => conv_out!(i, $outs, |$x| $conv),)*
                _ => unreachable!("the source dtype's storage"),
            }
        };
    }
    match (from, to) {
        (DType::Int { .. } | DType::Bool, DType::Bool) => {
            conv!([U8, U16, U32, U64] -> [U8], |x| x != 0)
        }
        (DType::Int { .. }, DType::Int { .. }) if signed_from => {
            conv!([U8, U16, U32, U64] -> [U8, U16, U32, U64], |x| x.sext() as u64 & mask)
        }
        (DType::Int { .. } | DType::Bool, DType::Int { .. }) => {
            conv!([U8, U16, U32, U64] -> [U8, U16, U32, U64], |x| x.bits() & mask)
        }
        (DType::Int { .. }, DType::Float32) if signed_from => {
            conv!([U8, U16, U32, U64] -> [U32], |x| (x.sext() as f32).to_bits())
        }
        (DType::Int { .. } | DType::Bool, DType::Float32) => {
            conv!([U8, U16, U32, U64] -> [U32], |x| (x.bits() as f32).to_bits())
        }
        (DType::Int { .. }, DType::Float64) if signed_from => {
            conv!([U8, U16, U32, U64] -> [U64], |x| (x.sext() as f64).to_bits())
        }
        (DType::Int { .. } | DType::Bool, DType::Float64) => {
            conv!([U8, U16, U32, U64] -> [U64], |x| (x.bits() as f64).to_bits())
        }
        (DType::Float32, DType::Bool) => conv!([U32] -> [U8], |x| f32::from_bits(x) != 0.0),
        (DType::Float64, DType::Bool) => conv!([U64] -> [U8], |x| f64::from_bits(x) != 0.0),
        // Saturating float → integer conversions in i32 lanes where the range fits, clamped
        // in float first (`saturate!`), which vectorises where `as`'s saturation does not.
        (DType::Float32, _) if w <= 24 => conv!([U32] -> [U8, U16, U32], |x| {
            saturate!(f32::from_bits(x), lo32, hi32) as u32 & mask32
        }),
        (DType::Float32, _) if fits_i32 => conv!([U32] -> [U8, U16, U32], |x| {
            saturate!(f32::from_bits(x) as f64, lo64, hi64) as u32 & mask32
        }),
        (DType::Float64, _) if fits_i32 => conv!([U64] -> [U8, U16, U32], |x| {
            saturate!(f64::from_bits(x), lo64, hi64) as u32 & mask32
        }),
        (DType::Float32, _) if w == 32 => conv!([U32] -> [U32], |x| {
            saturate64!(f32::from_bits(x) as f64, i64, 2f64.powi(63)).clamp(0, hi)
        }),
        (DType::Float64, _) if w == 32 => conv!([U64] -> [U32], |x| {
            saturate64!(f64::from_bits(x), i64, 2f64.powi(63)).clamp(0, hi)
        }),
        (DType::Float32, _) if signed_to => {
            conv!([U32] -> [U64], |x| saturate64!(f32::from_bits(x) as f64, i64, 2f64.powi(63)))
        }
        (DType::Float32, _) => {
            conv!([U32] -> [U64], |x| saturate64!(f32::from_bits(x) as f64, u64, 2f64.powi(64)))
        }
        (DType::Float64, _) if signed_to => {
            conv!([U64] -> [U64], |x| saturate64!(f64::from_bits(x), i64, 2f64.powi(63)))
        }
        (DType::Float64, _) => {
            conv!([U64] -> [U64], |x| saturate64!(f64::from_bits(x), u64, 2f64.powi(64)))
        }
        _ => unreachable!("astype_ints chose these pairs"),
    }
}

/// `a.astype(to)`: `typejoin cast` semantics element by element (complex → real keeps the real
/// part, as NumPy does with a ComplexWarning).
pub fn astype(a: &Array, to: DType) -> Array {
    if a.dtype == to {
        return a.clone();
    }
    if a.dtype.is_complex() || to.is_complex() {
        return astype_general(a, to);
    }
    let mut out = Array::zeroed(to, a.shape.clone());
    astype_into(a, &mut out).expect("same shape");
    out
}

/// `astype` element by element through `convert_bits` (the codec): what the fast paths of
/// `astype_into` are held to, and the path of the pairs they leave (complex dtypes, 32- and
/// 64-bit integers to the small float formats).
fn astype_general(a: &Array, to: DType) -> Array {
    let n = a.len();
    let bits: Vec<[u64; 2]> = (0..n)
        .map(|i| {
            if to.is_complex() {
                let (re, im) = complex_at(a, i, to);
                let f = to.float_format().expect("parts");
                let enc = |x: f64| f.encode(Value::from_f64(x));
                [enc(re), enc(im)]
            } else if a.dtype.is_complex() {
                let part = match a.dtype {
                    DType::Complex64 => DType::Float32,
                    _ => DType::Float64,
                };
                let re = match &a.data {
                    Data::C64(v) => v[i][0] as u64,
                    Data::C128(v) => v[i][0],
                    _ => unreachable!(),
                };
                [convert_bits(part, to, re), 0]
            } else {
                [convert_bits(a.dtype, to, raw(&a.data, i)), 0]
            }
        })
        .collect();
    Array::from_bits(to, a.shape.clone(), &bits).expect("shape kept")
}

// ---------------------------------------------------------------------------------------------
// sum

/// Exact floating-point summation (Shewchuk's partials, as Python's `math.fsum`): returns the
/// sum rounded once to float64 and the sign of what that rounding left out.
fn fsum(values: impl Iterator<Item = f64>) -> (f64, i8) {
    let mut partials: Vec<f64> = Vec::new();
    let (mut special, mut inf_sum) = (false, 0.0f64);
    for mut x in values {
        if !x.is_finite() {
            special = true;
            inf_sum += x; // +inf + -inf = NaN, NaN stays NaN
            continue;
        }
        let mut i = 0;
        for k in 0..partials.len() {
            let mut y = partials[k];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    if special {
        return (inf_sum, 0);
    }
    let Some(mut hi) = partials.pop() else {
        return (0.0, 0);
    };
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    // Half-way case: the rest of the partials decide the direction.
    let mut residual = lo;
    if let Some(&next) = partials.last()
        && ((lo < 0.0 && next < 0.0) || (lo > 0.0 && next > 0.0))
    {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
            residual = -lo;
        }
    }
    let sign = if residual > 0.0 {
        1
    } else if residual < 0.0 {
        -1
    } else if let Some(&next) = partials.last() {
        if lo == 0.0 { 0 } else { next.signum() as i8 }
    } else {
        0
    };
    (hi, sign)
}

/// The exact sum of float values (as f64s) rounded once into `f`.
fn round_sum(f: &FloatFormat, values: impl Iterator<Item = f64>) -> u64 {
    let (hi, sign) = fsum(values);
    let mut v = Value::from_f64(hi);
    // A value strictly between `hi` and its float64 neighbour rounds like the exact sum.
    if let (Value::Finite { neg, mant, exp }, true) = (v, sign != 0 && hi != 0.0) {
        let away = (sign > 0) != neg;
        v = Value::Finite {
            neg,
            mant: if away { mant * 4 + 1 } else { mant * 4 - 1 },
            exp: exp - 2,
        };
    }
    if hi.is_nan() {
        return f.encode(Value::Nan { neg: false });
    }
    f.encode(v)
}

/// `sum` over every element (`axis: None`, result of shape `[]`) or along one axis, in the
/// policy's accumulator dtype: integers wrap, floats are summed exactly and rounded once.
pub fn sum(policy: &Generated, a: &Array, axis: Option<usize>) -> Result<Array, OpError> {
    let acc = policy.sum_type(a.dtype).map_err(promotion)?;
    let (outer, len, inner, shape) = match axis {
        None => (1, a.len(), 1, vec![]),
        Some(k) if k < a.shape.len() => {
            let outer: usize = a.shape[..k].iter().product();
            let inner: usize = a.shape[k + 1..].iter().product();
            let mut shape = a.shape.clone();
            shape.remove(k);
            (outer, a.shape[k], inner, shape)
        }
        Some(k) => {
            return err(
                ErrorKind::Input,
                format!(
                    "axis {k} is out of bounds for an array of {} dimensions",
                    a.shape.len()
                ),
            );
        }
    };
    let conv = astype(a, acc);
    let mut bits = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let idx = (0..len).map(|k| (o * len + k) * inner + i);
            bits.push(match acc {
                DType::Bool => [idx.map(|j| raw(&conv.data, j)).fold(0, |x, y| x | y), 0],
                DType::Int { bits: w, .. } => {
                    let mask = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
                    let s = idx.fold(0i64, |s, j| {
                        s.wrapping_add(int_lane(acc, raw(&conv.data, j)))
                    });
                    [s as u64 & mask, 0]
                }
                DType::Complex64 | DType::Complex128 => {
                    let f = acc.float_format().expect("parts");
                    let parts: Vec<(f64, f64)> = idx.map(|j| complex_at(&conv, j, acc)).collect();
                    [
                        round_sum(&f, parts.iter().map(|p| p.0)),
                        round_sum(&f, parts.iter().map(|p| p.1)),
                    ]
                }
                _ => {
                    let f = acc.float_format().expect("float");
                    [
                        round_sum(&f, idx.map(|j| value_of(acc, raw(&conv.data, j)).to_f64())),
                        0,
                    ]
                }
            });
        }
    }
    Ok(Array::from_bits(acc, shape, &bits).expect("shape"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jax() -> &'static Generated {
        crate::kernels::policy("jax").unwrap()
    }

    fn f32s(v: &[f32]) -> Array {
        let bits: Vec<[u64; 2]> = v.iter().map(|x| [x.to_bits() as u64, 0]).collect();
        Array::from_bits(DType::Float32, vec![v.len()], &bits).unwrap()
    }

    /// Float sums are exact, then rounded once: 1 + 2^-24 + 2^-60 lies just above a float32
    /// midpoint, so it rounds up to 1 + 2^-23 (summing in float32, or in float64 and rounding
    /// again, gives 1).
    #[test]
    fn float_sums_round_once_from_the_exact_sum() {
        let a = f32s(&[1.0, 2f32.powi(-24), 2f32.powi(-60)]);
        let s = sum(jax(), &a, None).unwrap();
        assert_eq!(s.dtype, DType::Float32);
        assert_eq!(
            s.bits(),
            vec![[(1.0f32 + 2f32.powi(-23)).to_bits() as u64, 0]]
        );
        // Without the tiny term it is a tie, to even: 1.
        let s = sum(jax(), &f32s(&[1.0, 2f32.powi(-24)]), None).unwrap();
        assert_eq!(s.bits(), vec![[1.0f32.to_bits() as u64, 0]]);
        let big = [1e16f64, 1.0, -1e16];
        let bits: Vec<[u64; 2]> = big.iter().map(|x| [x.to_bits(), 0]).collect();
        let a = Array::from_bits(DType::Float64, vec![3], &bits).unwrap();
        assert_eq!(
            sum(jax(), &a, None).unwrap().bits(),
            vec![[1.0f64.to_bits(), 0]]
        );
        let inf = f32s(&[f32::INFINITY, 1.0, f32::NEG_INFINITY]);
        assert_eq!(
            sum(jax(), &inf, None).unwrap().bits(),
            vec![[F32_NAN as u64, 0]]
        );
    }

    #[test]
    fn sums_along_an_axis_use_the_accumulator() {
        let bits: Vec<[u64; 2]> = [1u64, 2, 3, 0x80, 0xff, 7]
            .iter()
            .map(|&b| [b, 0])
            .collect();
        let a = Array::from_bits(DType::named("int8").unwrap(), vec![2, 3], &bits).unwrap();
        let s = sum(jax(), &a, Some(0)).unwrap();
        assert_eq!(s.dtype, DType::named("int64").unwrap());
        assert_eq!(s.shape, vec![3]);
        // [1 + -128, 2 + -1, 3 + 7] = [-127, 1, 10]
        assert_eq!(
            s.bits().iter().map(|b| b[0] as i64).collect::<Vec<_>>(),
            vec![-127, 1, 10]
        );
        let s = sum(jax(), &a, Some(1)).unwrap();
        assert_eq!(
            s.bits().iter().map(|b| b[0] as i64).collect::<Vec<_>>(),
            vec![6, -122]
        );
        assert_eq!(sum(jax(), &a, Some(2)).unwrap_err().kind, ErrorKind::Input);
    }

    /// Every fused fast path gives the general chunked path's bits, on arrays large enough for
    /// each (pair tables start at 65536 elements), over random patterns (NaN, ±∞, subnormals).
    #[test]
    fn fast_paths_equal_the_general_path() {
        let pairs = [
            ("float32", "float32"),
            ("int8", "float32"),
            ("int32", "float32"),
            ("float32", "float64"),
            ("int64", "float64"),
            ("uint8", "int8"),
            ("int16", "int16"),
            ("uint32", "uint32"),
            ("int64", "uint8"),
            ("bfloat16", "bfloat16"),
            ("float16", "float16"),
            ("bfloat16", "float16"),
            ("float16", "bfloat16"),
            ("float8_e4m3fn", "float8_e4m3fn"),
            ("float8_e5m2fnuz", "float8_e5m2fnuz"),
            ("float8_e5m2", "float8_e5m2"),
            ("float8_e4m3b11fnuz", "float8_e4m3b11fnuz"),
            ("float8_e3m4", "float8_e3m4"),
            ("float8_e8m0fnu", "float8_e8m0fnu"),
            ("float6_e3m2fn", "float6_e3m2fn"),
            ("float4_e2m1fn", "float4_e2m1fn"),
            ("complex64", "float32"),
            ("complex64", "complex64"),
        ];
        let ops = [&ARITHMETIC[..], &[Op::BitwiseXor, Op::Less]].concat();
        fast_equals_general(&pairs, &ops, (1 << 16) + 77, 3);
        // Again without the AVX-512 kernels and loops, which stand in for the AVX2 ones
        // where the CPU has them.
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::avx512::set_enabled(false);
            fast_equals_general(&pairs, &ops, (1 << 16) + 77, 4);
            crate::kernels::avx512::set_enabled(true);
        }
    }

    /// The binary ops every float fast path computes.
    const ARITHMETIC: [Op; 6] = [
        Op::Add,
        Op::Subtract,
        Op::Multiply,
        Op::TrueDivide,
        Op::Maximum,
        Op::Minimum,
    ];

    /// The catalogue's accepted kinds are what the kernels do: an op on two arrays of one
    /// dtype is refused as unsupported exactly when the catalogue does not accept the dtype's
    /// kind (true_divide: the kind of the float it computes in).
    #[test]
    fn accepted_kinds_are_the_kernels() {
        let mut refused = 0;
        for info in crate::numeric::dtype::CATALOGUE {
            let Some(d) = DType::named(info.name) else {
                continue;
            };
            if !jax().dtypes.contains(&d.name()) {
                continue;
            }
            let a = Array::zeros(d, vec![1]).unwrap();
            for (name, op) in Op::ALL {
                let compute = if op == Op::TrueDivide {
                    let o = crate::promote::Operand::Array(d);
                    jax().true_divide_type(o, o).unwrap()
                } else {
                    d
                };
                let got = binary(jax(), op, &Arg::Array(a.clone()), &Arg::Array(a.clone()));
                let unsupported = matches!(&got, Err(e) if e.kind == ErrorKind::Unsupported);
                assert_eq!(
                    unsupported,
                    !op.info().kinds.accepts(compute.kind()),
                    "{name} on {d:?}: {:?}",
                    got.err()
                );
                refused += usize::from(unsupported);
            }
            for (name, op) in UnaryOp::ALL {
                let got = unary(op, &a);
                let unsupported = matches!(&got, Err(e) if e.kind == ErrorKind::Unsupported);
                assert_eq!(
                    unsupported,
                    !op.info().kinds.accepts(d.kind()),
                    "{name} on {d:?}"
                );
                refused += usize::from(unsupported);
            }
        }
        assert!(
            refused > 20,
            "only {refused} refusals: the test reached too little"
        );
    }

    /// The kernels' binary and unary ops are the catalogue's kernel ops, in its order.
    #[test]
    fn ops_are_the_catalogues() {
        use crate::numeric::op::{Arity, CATALOGUE};
        let binary: Vec<&str> = CATALOGUE
            .iter()
            .filter(|o| o.kernel && o.arity == Arity::Binary)
            .map(|o| o.name)
            .collect();
        let kernels: Vec<&str> = Op::ALL.iter().map(|(n, _)| *n).collect();
        assert_eq!(binary, kernels);
        let unary: Vec<&str> = CATALOGUE
            .iter()
            .filter(|o| o.arity == Arity::Unary)
            .map(|o| o.name)
            .collect();
        let kernels: Vec<&str> = UnaryOp::ALL.iter().map(|(n, _)| *n).collect();
        assert_eq!(unary, kernels);
        for (name, op) in Op::ALL {
            let rule = crate::numeric::op::info(name).unwrap().rule;
            assert_eq!(
                op.is_comparison(),
                rule == crate::numeric::op::Rule::Compare,
                "{name}"
            );
        }
    }

    /// Every pair of codes of every format of at most 8 bits, every arithmetic op: the portable
    /// fast path (the pair table, the widening table) gives the general path's bits; and
    /// widening every code to float32 gives the codec's.
    #[test]
    fn every_pair_of_small_float_codes_equals_the_general_path() {
        #[cfg(target_arch = "x86_64")]
        crate::kernels::avx512::set_enabled(false);
        every_small_float_pair();
        #[cfg(target_arch = "x86_64")]
        crate::kernels::avx512::set_enabled(true);
    }

    /// The same with the AVX-512 VBMI kernels that replace the tables where the CPU has them.
    #[test]
    #[cfg(target_arch = "x86_64")]
    #[cfg_attr(
        not(typejoin_avx512vbmi),
        ignore = "this CPU lacks AVX-512 VBMI: its kernels cannot run here"
    )]
    fn every_pair_of_small_float_codes_equals_the_general_path_with_avx512_vbmi() {
        assert!(
            crate::kernels::avx512::Kernel8::available(),
            "built on a CPU with AVX-512 VBMI, but the kernels are not available"
        );
        every_small_float_pair();
    }

    fn every_small_float_pair() {
        let n = (1 << 16) + 13;
        let mut formats = Vec::new();
        for d in (0..crate::numeric::format::SMALL_FLOATS.len()).map(|i| DType::Small(i as u8)) {
            let w = d.pattern_bits();
            if w > 8 {
                continue;
            }
            formats.push(d.name());
            let mask = (1u64 << w) - 1;
            let a: Vec<[u64; 2]> = (0..n as u64).map(|k| [(k >> 8) & mask, 0]).collect();
            let b: Vec<[u64; 2]> = (0..n as u64).map(|k| [k & mask, 0]).collect();
            let (x, y) = (
                Arg::Array(Array::from_bits(d, vec![n], &a).unwrap()),
                Arg::Array(Array::from_bits(d, vec![n], &b).unwrap()),
            );
            for op in ARITHMETIC {
                assert!(
                    fast_equals_general_on(op, &x, &y),
                    "{} has no plan",
                    op.name()
                );
            }
            let Arg::Array(x) = &x else { unreachable!() };
            let wide = astype(x, DType::Float32);
            let (f, f32f) = (
                d.float_format().unwrap(),
                crate::numeric::format::float_format("float32").unwrap(),
            );
            for (i, (got, code)) in wide.bits().iter().zip(&a).enumerate() {
                let want = cast_bits(&f, &f32f, code[0]);
                assert_eq!(
                    got[0],
                    want,
                    "{} code {:#x} (element {i})",
                    d.name(),
                    code[0]
                );
            }
        }
    }

    /// Outputs of at least `STREAM_MIN_BYTES` are written with non-temporal stores: the same
    /// bits as the general path on every fused loop that streams.
    #[test]
    fn streamed_fast_paths_equal_the_general_path() {
        let four = crate::kernels::stream::STREAM_MIN_BYTES / 4 + 77;
        let pairs = [
            ("float32", "float32"),
            ("int8", "float32"),
            ("bfloat16", "float16"),
            ("complex64", "float32"),
        ];
        fast_equals_general(&pairs, &[Op::Add, Op::TrueDivide], four, 4);
        fast_equals_general(&[("float32", "float64")], &[Op::Multiply], four, 5);
        let two = crate::kernels::stream::STREAM_MIN_BYTES / 2 + 77;
        fast_equals_general(
            &[("float16", "float16"), ("bfloat16", "bfloat16")],
            &[Op::Add],
            two,
            6,
        );
        // uint8 + int8 is int16: two bytes an element too.
        fast_equals_general(&[("uint8", "int8")], &[Op::Add], two, 7);
        // astype float8 → float32 against the codec: the AVX-512 widening where the CPU has
        // it, then (switched off) the streamed table loop.
        let f8 = DType::named("float8_e4m3fn").unwrap();
        let codes: Vec<[u64; 2]> = (0..four as u64).map(|i| [(i * 37) & 0xff, 0]).collect();
        let a = Array::from_bits(f8, vec![four], &codes).unwrap();
        let f = |n: &str| crate::numeric::format::float_format(n).unwrap();
        let check = || {
            let bits = astype(&a, DType::Float32).bits();
            for (i, c) in codes.iter().enumerate() {
                let want =
                    crate::numeric::format::cast_bits(&f("float8_e4m3fn"), &f("float32"), c[0]);
                assert_eq!(bits[i][0], want, "element {i}");
            }
        };
        check();
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::avx512::set_enabled(false);
            check();
            crate::kernels::avx512::set_enabled(true);
        }
    }

    /// Every op on random arrays of every pair: the fused fast path (`run_binary`) gives the
    /// general chunked path's bits, or the first difference is reported.
    fn fast_equals_general(pairs: &[(&str, &str)], ops: &[Op], n: usize, seed: u64) {
        let mut rng = crate::synth::Rng::new(seed);
        let random = |d: DType, rng: &mut crate::synth::Rng| {
            let w = d.pattern_bits();
            let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            let bits: Vec<[u64; 2]> = (0..n)
                .map(|_| {
                    let im = if d.is_complex() {
                        rng.next_u64() & mask
                    } else {
                        0
                    };
                    [rng.next_u64() & mask, im]
                })
                .collect();
            Array::from_bits(d, vec![n], &bits).unwrap()
        };
        for &(l, r) in pairs {
            let (a, b) = (
                Arg::Array(random(DType::named(l).unwrap(), &mut rng)),
                Arg::Array(random(DType::named(r).unwrap(), &mut rng)),
            );
            for &op in ops {
                fast_equals_general_on(op, &a, &b); // an op the pair has no plan for is skipped
            }
        }
    }

    /// `op` on two arrays through the fused fast path (`run_binary`) and the general chunked
    /// path: the same bits, or a panic naming the first element that differs. `false` when
    /// the policy has no result for the pair (nothing to compare).
    fn fast_equals_general_on(op: Op, a: &Arg, b: &Arg) -> bool {
        let Ok((out_dtype, shape, x, y, c)) = plan(jax(), op, a, b) else {
            return false;
        };
        let mut fast = Array::zeroed(out_dtype, shape.clone());
        run_binary(op, c, &x, &y, &mut fast.data);
        let mut slow = Array::zeroed(out_dtype, shape);
        run_chunked(op, c, &x, &y, &mut slow.data);
        if fast != slow {
            let (fb, sb) = (fast.bits(), slow.bits());
            let i = (0..fb.len())
                .find(|&i| fb[i] != sb[i])
                .expect("arrays differ");
            let (Arg::Array(aa), Arg::Array(bb)) = (a, b) else {
                panic!("array operands")
            };
            panic!(
                "{} {} {}: element {i}: {:x?} {:x?} -> fast {:x?} general {:x?}",
                aa.dtype.name(),
                op.name(),
                bb.dtype.name(),
                aa.bits()[i],
                bb.bits()[i],
                fb[i],
                sb[i]
            );
        }
        true
    }

    /// Every fast astype (the caster's kernels, `as` conversions, pattern tables) gives the
    /// codec's bits, for every pair of real dtypes in the catalogue, on every pattern of
    /// sources of at most 16 bits and on boundary, special and random patterns of wider ones;
    /// again with the AVX-512 loops switched off.
    #[test]
    fn astype_fast_paths_equal_the_general_path() {
        let names = [
            "bool",
            "int1",
            "int2",
            "int4",
            "uint1",
            "uint2",
            "uint4",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float16",
            "bfloat16",
            "float32",
            "float64",
            "float8_e4m3fn",
            "float8_e5m2fnuz",
            "float4_e2m1fn",
        ];
        let dtypes: Vec<DType> = names.iter().map(|n| DType::named(n).unwrap()).collect();
        let mut rng = crate::synth::Rng::new(11);
        let wide = |d: DType, rng: &mut crate::synth::Rng| -> Vec<u64> {
            let mut v: Vec<u64> = Vec::new();
            let w = d.pattern_bits();
            if w <= 16 {
                return (0..1u64 << w).collect();
            }
            let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            // Integers near every power of two and its negation.
            for k in 0..64 {
                for delta in [-1i64, 0, 1] {
                    let x = (1u64 << k).wrapping_add(delta as u64);
                    v.extend([x & mask, x.wrapping_neg() & mask]);
                }
            }
            // Floats at and around every integer range's bounds, halves, specials.
            let mut fs: Vec<f64> = vec![0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1e30, -1e30];
            for k in [1, 2, 4, 7, 8, 15, 16, 24, 31, 32, 63, 64] {
                let p = 2f64.powi(k);
                fs.extend([
                    p,
                    -p,
                    p - 1.0,
                    -p - 1.0,
                    p - 0.5,
                    -p - 0.5,
                    p + 0.5,
                    p * 1.5,
                ]);
            }
            fs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN]);
            match d {
                DType::Float32 => {
                    v.extend(fs.iter().map(|&f| (f as f32).to_bits() as u64));
                    v.extend([0x7f80_0001, 0xffc0_1234, 0x0000_0001, 0x8000_0001]);
                }
                DType::Float64 => {
                    v.extend(fs.iter().map(|&f| f.to_bits()));
                    v.extend([
                        0x7ff0_0000_0000_0001,
                        0xfff8_0000_dead_beef,
                        1,
                        0x3ff0_0000_1000_0001,
                    ]);
                }
                _ => {}
            }
            v.extend((0..5000).map(|_| rng.next_u64() & mask));
            v
        };
        let check = |rng: &mut crate::synth::Rng| {
            for &from in &dtypes {
                let bits: Vec<[u64; 2]> = wide(from, rng).into_iter().map(|b| [b, 0]).collect();
                let a = Array::from_bits(from, vec![bits.len()], &bits).unwrap();
                for &to in &dtypes {
                    let fast = astype(&a, to);
                    let general = astype_general(&a, to);
                    if fast != general {
                        let (f, g) = (fast.bits(), general.bits());
                        let k = (0..f.len()).find(|&k| f[k] != g[k]).unwrap();
                        panic!(
                            "{} {:#x} -> {}: fast {:#x}, codec {:#x}",
                            from.name(),
                            bits[k][0],
                            to.name(),
                            f[k][0],
                            g[k][0]
                        );
                    }
                }
            }
        };
        check(&mut rng);
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::avx512::set_enabled(false);
            check(&mut rng);
            crate::kernels::avx512::set_enabled(true);
        }
    }

    #[test]
    fn large_arrays_run_in_parallel_chunks_with_the_same_bits() {
        let n = PARALLEL_MIN + 12345;
        let v: Vec<f32> = (0..n).map(|i| (i as f32).sin() * 1000.0).collect();
        let a = Arg::Array(f32s(&v));
        let b = Arg::Scalar(Scalar::Float(0.1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let par = pool
            .install(|| binary(jax(), Op::Multiply, &a, &b))
            .unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let seq = one.install(|| binary(jax(), Op::Multiply, &a, &b)).unwrap();
        assert_eq!(par, seq);
        let Arg::Array(arr) = &a else { unreachable!() };
        let to = DType::named("float8_e4m3fn").unwrap();
        let cast_par = pool.install(|| astype(arr, to));
        let cast_seq = one.install(|| astype(arr, to));
        assert_eq!(cast_par, cast_seq);
        // float32 array × Python float: float32 (the scalar is weak), the scalar rounded to
        // float32 first.
        assert_eq!(par.dtype, DType::Float32);
        let Data::U32(out) = &par.data else { panic!() };
        assert_eq!(out[12345], (v[12345] * 0.1f64 as f32).to_bits());
    }
}
