//! `astype`: conversions between every pair of dtypes, through the fast casters where they apply
//! and the codec elsewhere.

use super::complex::complex_at;
use super::fused::{kernel8, zip_chunks};
use super::lanes::{F32_NAN, canonical_nan_codes, convert_bits, raw};
use super::vocab::{ErrorKind, OpError, err};
use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::kernels::cast::{Caster, Unit};
use crate::kernels::stream::Isa;
use crate::kernels::stream::Store;
use crate::numeric::c10::Float8;
use crate::numeric::dtype::DType;
use crate::numeric::format::{NanEncoding, Value};
use crate::numeric::op::IntConversion;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

/// `astype` into a preallocated output of dtype `out.dtype` and `a`'s shape.
pub fn astype_into(a: &Array, out: &mut Array) -> Result<(), OpError> {
    if out.shape != a.shape {
        return err(ErrorKind::Input, "astype keeps the shape");
    }
    // A real dtype to itself: its patterns copied, a `memcpy` per piece (the caster's copy ran
    // the baseline loop: float64 at 1e3 from Python was 0.92 of NumPy's `astype`).
    if a.dtype == out.dtype && !a.dtype.is_complex() {
        macro_rules! copy {
            ($($v:ident),*) => {
                match (&a.data, &mut out.data) {
                    $((Data::$v(i), Data::$v(o)) => {
                        zip_chunks(i, i, o, |i, _, o, _| o.copy_from_slice(i))
                    })*
                    _ => unreachable!("one real dtype, one storage"),
                }
            };
        }
        copy!(U8, U16, U32, U64);
        return Ok(());
    }
    if let Some(caster) = float_caster(a.dtype, out.dtype) {
        #[cfg(target_arch = "x86_64")]
        if let (Data::U8(i), Data::U32(o), DType::Float32) = (&a.data, &mut out.data, out.dtype)
            && let Some(k) = kernel8(a.dtype)
        {
            // 8-bit → 32-bit: the AVX-512 VBMI byte-plane widening of the codec's table.
            zip_chunks(i, i, o, |i, _, o, store| k.widen(store, i, o));
            return Ok(());
        }
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
        let r = astype_general(a, out.dtype);
        out.data.assign(r.data);
    }
    Ok(())
}

/// The caster from one real float dtype to another (`None` unless both are), built once per
/// pair: building one reads both formats by name and clones them (allocations), and a source
/// of at most 16 bits looks its table up under a lock. Under `perf`, a 1,000-element `astype`
/// from Python spent 1.7 % of its samples in `Caster::new`, and about 1 % more in the
/// allocations and frees around it (~100 of ~9,000 samples in all).
fn float_caster(from: DType, to: DType) -> Option<&'static Caster> {
    const PAIRS: usize = DType::COUNT * DType::COUNT;
    static CASTERS: [OnceLock<Option<Caster>>; PAIRS] = [const { OnceLock::new() }; PAIRS];
    CASTERS[from.id() * DType::COUNT + to.id()]
        .get_or_init(|| {
            let real = |d: DType| d.float_format().filter(|_| !d.is_complex());
            Some(Caster::new(&real(from)?, &real(to)?))
        })
        .as_ref()
}

/// `astype` of bool bytes (`ops::astype_bool_bytes`) into `out` of an integer of 8 to 64
/// bits, float32 or float64: each byte nonzero → one, else zero, in one pass that
/// vectorises (a select per lane).
pub(super) fn bool_bytes_into(bytes: &[u8], out: &mut Array) {
    let one = match out.dtype {
        DType::Float32 => u64::from(1f32.to_bits()),
        DType::Float64 => 1f64.to_bits(),
        _ => 1,
    };
    match &mut out.data {
        Data::U8(o) => map_chunks(bytes, o, |x| u8::from(x != 0)),
        Data::U16(o) => map_chunks(bytes, o, |x| u16::from(x != 0)),
        // The select in 32 bits (in u64 the compiler widened every lane to 64 bits).
        Data::U32(o) => {
            let one = one as u32;
            map_chunks(bytes, o, move |x| u32::from(x != 0) * one)
        }
        Data::U64(o) => map_chunks(bytes, o, move |x| if x != 0 { one } else { 0 }),
        _ => unreachable!("the storage of an integer, float32 or float64"),
    }
}

/// Sign extension of a stored integer pattern of the storage type's full width.
pub(super) trait Extend: crate::kernels::cast::Unit {
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
pub(super) fn astype_ints(a: &Array, out: &mut Array) -> bool {
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
    let (table, mask) = (&table[..], table.len() as u64 - 1);
    macro_rules! go {
        ($i:expr, $o:expr) => {
            map_chunks($i, $o, move |x| {
                Unit::from_bits(table[(x as u64 & mask) as usize])
            })
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

/// `o[k] = f(i[k])` over storage units, in parallel chunks for large arrays; `f` gives the
/// destination's unit itself, so a map between two narrow types stays in their lanes (through
/// `u64`, int8 `negative` widened each vector to 64-bit lanes and back: 0.85–0.91 of NumPy's
/// at 1e5). The chunk loop is monomorphic; the parallel split takes it as `dyn`, so that the
/// split is compiled once per pair of storage types, not once per map.
///
/// `f` is copied into the loop, so it should be a `move` closure of values: one that reads a
/// captured local through a reference reloads it at every element (the compiler cannot tell
/// the output's stores from it), and does not vectorise. int8 → int16 `astype` with its mask
/// captured by reference ran a scalar loop at 0.09 of NumPy's cast at 1e5.
pub(super) fn map_chunks<S: Unit, D: Unit>(i: &[S], o: &mut [D], f: impl Fn(S) -> D + Sync + Copy) {
    map_chunks_on(i, o, f, true)
}

/// [`map_chunks`], where `lines` lets [`Isa::for_lines`] trade AVX-512 for AVX2 on data in L2;
/// without it, a loop that loses by AVX2 (a float → 64-bit integer conversion: `vcvttpd2qq`
/// is AVX-512DQ's, AVX2 converts one element at a time) keeps AVX-512 at every size.
pub(super) fn map_chunks_on<S: Unit, D: Unit>(
    i: &[S],
    o: &mut [D],
    f: impl Fn(S) -> D + Sync + Copy,
    lines: bool,
) {
    let isa = Isa::detect();
    let body = move |i: &[S], _: &[S], o: &mut [D], store: Store| {
        let isa = if lines { isa.for_lines(i, i, o) } else { isa };
        isa.map2(store, i, i, o, move |x, _| f(x))
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
pub(super) fn as_conversions(a: &Array, out: &mut Array) {
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
    let (mask16, mask32) = (mask as u16, mask as u32);
    let signed_from = matches!(from, DType::Int { signed: true, .. });
    // `$conv` maps a source element `x` (of its storage type) to the destination's bits, for
    // each listed source and destination storage.
    macro_rules! go {
        ($i:expr, $o:expr, |$x:ident| $conv:expr) => {
            map_chunks($i, $o, move |$x| Unit::from_bits($conv as u64))
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
        // Between integers of at most 16 bits, in 16-bit lanes: one sign- or zero-extending
        // load and one store a vector (through 32-bit lanes int8 → int16 narrowed every
        // vector back with `vpmovdw`: 0.71 of NumPy's cast at 1e5).
        (DType::Int { bits: 8 | 16, .. }, DType::Int { .. }) if signed_from && w <= 16 => {
            conv!([U8, U16] -> [U8, U16], |x| (x.sext() as u16 & mask16) as u64)
        }
        (DType::Int { bits: 8 | 16, .. } | DType::Bool, DType::Int { .. }) if w <= 16 => {
            conv!([U8, U16] -> [U8, U16], |x| (x.bits() as u16 & mask16) as u64)
        }
        // Between integers of at most 32 bits, in 32-bit lanes (the compiler widens a u64
        // intermediate to 64-bit lanes: int8 → int16 ran so at 0.59 of NumPy's cast).
        (
            DType::Int {
                bits: 8 | 16 | 32, ..
            },
            DType::Int { .. },
        ) if signed_from && w <= 32 => {
            conv!([U8, U16, U32] -> [U8, U16, U32], |x| (x.sext() as u32 & mask32) as u64)
        }
        (DType::Int { .. }, DType::Int { .. }) if signed_from => {
            conv!([U8, U16, U32, U64] -> [U8, U16, U32, U64], |x| x.sext() as u64 & mask)
        }
        (
            DType::Int {
                bits: 8 | 16 | 32, ..
            }
            | DType::Bool,
            DType::Int { .. },
        ) if w <= 32 => {
            conv!([U8, U16, U32] -> [U8, U16, U32], |x| (x.bits() as u32 & mask32) as u64)
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
        // float32 → int32 in float32 lanes (twice the lanes of float64): −2^31 is exact, every
        // float32 below 2^31 truncates into range, and from 2^31 up the result is i32::MAX.
        (DType::Float32, _) if w == 32 && signed_to => conv!([U32] -> [U32], |x| {
            let x = f32::from_bits(x);
            let c = if x.is_nan() { 0.0 } else { x };
            let c = if c < -2147483648.0 { -2147483648.0 } else { c };
            let big = c >= 2147483648.0;
            let c = if big { 0.0 } else { c };
            // SAFETY: `c` is finite and within [−2^31, 2^31), inside i32's range.
            let r = unsafe { c.to_int_unchecked::<i32>() };
            (if big { i32::MAX } else { r }) as u32
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
/// part, as NumPy does with a ComplexWarning; complex → bool is true where either part is
/// nonzero).
pub fn astype(a: &Array, to: DType) -> Array {
    try_astype(a, to).expect("memory for the converted array")
}

/// [`astype`], or a `memory` error when the converted array cannot be allocated.
pub(super) fn try_astype(a: &Array, to: DType) -> Result<Array, OpError> {
    if a.dtype == to {
        return Ok(a.clone());
    }
    if a.dtype.is_complex() || to.is_complex() {
        return Ok(astype_general(a, to));
    }
    let mut out = Array::zeros(to, a.shape.clone())?;
    astype_into(a, &mut out).expect("same shape");
    Ok(out)
}

/// `a` rounded to float32 (complex64 for a complex `to`) on its way to `to`, where a library
/// that narrows through float32 (`Narrowing::ViaFloat32`) rounds twice: a float64, complex128
/// or 32- or 64-bit integer array into float16, bfloat16 or their complex types (`None` for
/// every other pair, which converts directly).
pub(super) fn through_float32(a: &Array, to: DType) -> Option<Array> {
    let narrow = matches!(to.part(), DType::FLOAT16 | DType::BFLOAT16);
    let wide = matches!(
        a.dtype,
        DType::Float64 | DType::Complex128 | DType::Int { bits: 32 | 64, .. }
    );
    let float32 = match to.is_complex() {
        true => DType::Complex64,
        false => DType::Float32,
    };
    (narrow && wide).then(|| astype(a, float32))
}

/// `a.astype(to)` for a float `a` (a complex one's real part) and a sub-byte integer `to` as
/// ml_dtypes converts it (`IntnConversion::Wrap`): truncated toward zero in int32, then the low
/// bits; from a 16-bit or wider float, a value past int32's range, ±inf and NaN give 0 (x86-64's
/// `cvttss2si` answers INT_MIN), from a float8, float6 or float4 +inf gives all ones and −inf
/// and NaN 0.
pub(super) fn intn_wrap_astype(a: &Array, to: DType) -> Array {
    let DType::Int { bits: w, .. } = to else {
        unreachable!("a sub-byte integer")
    };
    let small = a.dtype.part().pattern_bits() <= 8;
    let wide = astype(a, DType::Float64);
    let Data::U64(v) = &wide.data else {
        unreachable!("float64 storage")
    };
    let mask = (1u64 << w) - 1;
    let bits: Vec<[u64; 2]> = v
        .iter()
        .map(|&x| {
            let x = f64::from_bits(x);
            let int = match x {
                _ if x.is_nan() => 0,
                f64::INFINITY if small => -1,
                _ if small => x as i64, // finite, within ±2^31 in these formats
                _ if x.trunc() >= -2147483648.0 && x.trunc() < 2147483648.0 => x as i64,
                _ => 0,
            };
            [int as u64 & mask, 0]
        })
        .collect();
    Array::from_bits(to, a.shape.clone(), &bits).expect("shape kept")
}

/// `a.astype(to)` for a real float or complex `a` and an integer `to` of 8 to 64 bits as the
/// library's C cast runs on x86-64 (`IntConversion` other than `Saturate`; `None` for any other
/// pair or convention): a complex number's real part, truncated toward zero through the width
/// the library's compiler converts in (`cvttsd2si`: past that width, ±inf and NaN give its least
/// value), then the low bits of `to`. Every value of these formats is exact in float64.
pub(super) fn c_int_astype(a: &Array, to: DType, conv: IntConversion) -> Option<Array> {
    let DType::Int { bits: w, signed } = to else {
        return None;
    };
    if conv == IntConversion::Saturate || w < 8 || !(a.dtype.is_float() || a.dtype.is_complex()) {
        return None;
    }
    let part = a.dtype.part();
    let format = part.float_format();
    let nan = format.as_ref().map(|f| f.nan);
    // ml_dtypes' floats of 8 bits or fewer: NaN 0, ±inf saturated; c10's NaN of the fnuz
    // formats and of float8_e8m0fnu: 0.
    let ml_small = conv == IntConversion::X86 && part.pattern_bits() <= 8;
    let nan_zero = ml_small
        || (conv == IntConversion::X86C10
            && (nan == Some(NanEncoding::NegativeZero) || !format.is_some_and(|f| f.signed)));
    let wide = astype(a, DType::Float64);
    let Data::U64(v) = &wide.data else {
        unreachable!("float64 storage")
    };
    let (cvtt, mask) = (Cvtt::of(w, signed, conv), to_mask(w));
    let bits: Vec<[u64; 2]> = v
        .iter()
        .map(|&x| {
            let x = f64::from_bits(x);
            let int = match x {
                _ if x.is_nan() && nan_zero => 0,
                _ if x.is_infinite() && ml_small => match (x > 0.0, signed) {
                    (true, true) => (mask >> 1) as i64,
                    (true, false) => mask as i64,
                    (false, true) => i64::MIN >> (64 - w),
                    (false, false) => 0,
                },
                _ => cvtt.apply(x),
            };
            [int as u64 & mask, 0]
        })
        .collect();
    Some(Array::from_bits(to, a.shape.clone(), &bits).expect("shape kept"))
}

/// The low `w` bits.
fn to_mask(w: u32) -> u64 {
    if w == 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// How a library's C cast (`IntConversion` other than `Saturate`) converts a float64 to an
/// integer of `w` bits before keeping its low bits ([`c_int_astype`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cvtt {
    /// `cvttsd2si` into 32 bits: truncated where it fits, else `i32::MIN`.
    W32,
    /// Into 64 bits: truncated where it fits, else `i64::MIN`.
    W64,
    /// GCC's split at 2^63 for an unsigned 64-bit result (NumPy, PyTorch): past 2^64 and +inf
    /// give 0.
    GccU64,
    /// Clang's branchless split (TensorFlow): past 2^64 and +inf give 2^63.
    EigenU64,
}

impl Cvtt {
    fn of(w: u32, signed: bool, conv: IntConversion) -> Cvtt {
        match (w, signed) {
            (8, false) if conv == IntConversion::X86C10 => Cvtt::W64,
            (8 | 16, _) | (32, true) => Cvtt::W32,
            (64, false) if conv == IntConversion::X86Eigen => Cvtt::EigenU64,
            (64, false) => Cvtt::GccU64,
            _ => Cvtt::W64,
        }
    }

    #[inline(always)]
    fn apply(self, x: f64) -> i64 {
        const TWO63: f64 = 9_223_372_036_854_775_808.0;
        /// `cvttsd2si` into 32 bits: `x` truncated where that fits, else `i32::MIN`. The
        /// truncation fits exactly where −2^31 − 1 < x < 2^31 (both bounds exact in f64; NaN
        /// fails both), so no `trunc` is needed to test it (SSE2 has none: it is a call).
        #[inline(always)]
        fn w32(x: f64) -> i64 {
            if (x > -2_147_483_649.0) & (x < 2_147_483_648.0) {
                // SAFETY: `x` truncated lies in i32's range (tested just above).
                i64::from(unsafe { x.to_int_unchecked::<i32>() })
            } else {
                i64::from(i32::MIN)
            }
        }
        /// Into 64 bits: truncated where that fits (−2^63 ≤ x < 2^63: no float64 lies
        /// strictly between −2^63 − 1 and −2^63), else `i64::MIN`.
        #[inline(always)]
        // Both compares then `&`, as measured: no short-circuit branch in the loops.
        #[allow(clippy::manual_range_contains)]
        fn w64(x: f64) -> i64 {
            if (x >= -TWO63) & (x < TWO63) {
                // SAFETY: `x` truncated lies in i64's range (tested just above).
                unsafe { x.to_int_unchecked::<i64>() }
            } else {
                i64::MIN
            }
        }
        match self {
            Cvtt::W32 => w32(x),
            Cvtt::W64 => w64(x),
            Cvtt::GccU64 if x >= TWO63 => w64(x - TWO63) ^ i64::MIN,
            Cvtt::GccU64 => w64(x),
            Cvtt::EigenU64 => {
                let low = w64(x);
                low | (w64(x - TWO63) & (low >> 63))
            }
        }
    }
}

/// `a.astype(out.dtype)` into `out` where the policy's C convention decides it
/// ([`c_int_astype`]; a float32 or float64 in one pass, [`c_int_into`]); `false`, nothing
/// written, where it does not.
///
/// Never inlined, and `apply_with` calls nothing else of it: the 32 loops of `c_int_into`
/// inside `apply_with`, or a second call there, slowed every unary op at 1e3 elements by up to
/// a tenth in the wheel build (float32 `negative` 1.16 → 1.08 of NumPy, `less` 1.15 → 1.07).
#[inline(never)]
pub(super) fn c_int_cast(a: &Array, out: &mut Array, conv: IntConversion) -> bool {
    if c_int_into(a, out, conv) {
        return true;
    }
    match c_int_astype(a, out.dtype, conv) {
        Some(cast) => {
            out.data.assign(cast.data);
            true
        }
        None => false,
    }
}

/// [`c_int_astype`] of a float32 or float64 `a` into `out` (an integer of 8 to 64 bits, of
/// `a`'s shape) in one pass over the storage: no float64 copy, no array of results copied in
/// after. `false` (nothing written) for any other pair or convention. NumPy's `astype` of
/// float64 to int64 at 1e5 took 29 µs against typejoin's 1.2 ms through `c_int_astype`.
///
fn c_int_into(a: &Array, out: &mut Array, conv: IntConversion) -> bool {
    let DType::Int { bits: w, signed } = out.dtype else {
        return false;
    };
    if conv == IntConversion::Saturate
        || !matches!(w, 8 | 16 | 32 | 64)
        || !matches!(a.dtype, DType::Float32 | DType::Float64)
        || a.shape != out.shape
    {
        return false;
    }
    let cvtt = Cvtt::of(w, signed, conv);
    // Every loop here keeps AVX-512 on data in L2 (`map_chunks_on(.., false)`): float64 →
    // int64 at 1e4 took 5.1 µs with AVX2 against NumPy's 3.0 µs. (A conversion into 32 bits on
    // AVX-512 takes `w32_avx512_into` below, so no loop here trades it for AVX2 either.)
    // One loop per conversion and destination width it can have (`Cvtt::of`), so that no
    // branch on either is left inside (the loops vectorise) and no loop is compiled for a pair
    // that never occurs; the low bits of the destination's storage are the low `w` bits (`as`
    // truncates).
    macro_rules! into {
        ($i:expr, $f:expr, [$($unit:ident: $t:ty),*]) => {{
            match &mut out.data {
                $(Data::$unit(o) => map_chunks_on($i, o, move |x| $f(x) as $t, false),)*
                _ => return false,
            }
        }};
    }
    macro_rules! wide {
        ($i:expr, $read:expr, $k:expr) => {
            match $k {
                Cvtt::W64 => into!(
                    $i,
                    move |x| Cvtt::W64.apply($read(x)),
                    [U8: u8, U32: u32, U64: u64]
                ),
                Cvtt::GccU64 => into!($i, move |x| Cvtt::GccU64.apply($read(x)), [U64: u64]),
                Cvtt::EigenU64 => into!($i, move |x| Cvtt::EigenU64.apply($read(x)), [U64: u64]),
                Cvtt::W32 => return false,
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    if cvtt == Cvtt::W32 && Isa::detect() == Isa::Avx512 && w32_avx512_into(&a.data, &mut out.data)
    {
        return true;
    }
    match (&a.data, cvtt) {
        // A float32 into 32 bits needs no float64 (`cvttps2dq`: twice the lanes of a vector).
        // Its truncation fits where −2^31 ≤ x < 2^31: no float32 lies strictly between
        // −2^31 − 1 and −2^31.
        #[allow(clippy::manual_range_contains)] // both compares then `&`, as in `Cvtt::apply`
        (Data::U32(i), Cvtt::W32) => into!(
            i,
            |x: u32| {
                let x = f32::from_bits(x);
                if (x >= -2_147_483_648.0) & (x < 2_147_483_648.0) {
                    // SAFETY: `x` truncated lies in i32's range (tested just above).
                    unsafe { x.to_int_unchecked::<i32>() }
                } else {
                    i32::MIN
                }
            },
            [U8: u8, U16: u16, U32: u32]
        ),
        (Data::U64(i), Cvtt::W32) => into!(
            i,
            |x: u64| Cvtt::W32.apply(f64::from_bits(x)),
            [U8: u8, U16: u16, U32: u32]
        ),
        (Data::U32(i), k) => wide!(i, |x: u32| f64::from(f32::from_bits(x)), k),
        (Data::U64(i), k) => wide!(i, f64::from_bits, k),
        _ => return false,
    }
    true
}

/// [`Cvtt::W32`] with AVX-512's own conversions: `vcvttpd2dq`/`vcvttps2dq` write `i32::MIN`
/// (the "integer indefinite") for NaN and every value whose truncation does not fit, which is
/// `W32`'s answer, so no range test and select is needed; `vpmovdb`/`vpmovdw` keep the low 8 or
/// 16 bits, as `as` does. The generic loop's compares, masks and shuffles around the same
/// conversions made float64 → int8 0.83 of NumPy's `astype` at 1e4 (and 0.87 at 1e3, 0.78 at
/// 1e5).
///
/// Of float32 (`U32`) or float64 (`U64`) storage into 8-, 16- or 32-bit storage of the same
/// length; `false` (nothing written) for any other pair. Only where `Isa::detect()` is
/// `Avx512`.
#[cfg(target_arch = "x86_64")]
fn w32_avx512_into(a: &Data, o: &mut Data) -> bool {
    macro_rules! go {
        ($i:expr, $o:expr, $scalar:expr) => {
            zip_chunks($i, $i, $o, |i, _, o, store| match store {
                // SAFETY: the caller found AVX-512 F, BW, VL and DQ (`Isa::Avx512`).
                Store::Cached => unsafe { w32_loop(i, o, $scalar) },
                // Past the last-level cache the generic loop streams its output.
                Store::Streamed => Isa::Avx512.map2(store, i, i, o, |x, _| $scalar(x)),
            })
        };
    }
    let f64s = |x: u64| Cvtt::W32.apply(f64::from_bits(x));
    let f32s = |x: u32| Cvtt::W32.apply(f64::from(f32::from_bits(x)));
    match (a, o) {
        (Data::U64(i), Data::U8(o)) => go!(i, o, |x| f64s(x) as u8),
        (Data::U64(i), Data::U16(o)) => go!(i, o, |x| f64s(x) as u16),
        (Data::U64(i), Data::U32(o)) => go!(i, o, |x| f64s(x) as u32),
        (Data::U32(i), Data::U8(o)) => go!(i, o, |x| f32s(x) as u8),
        (Data::U32(i), Data::U16(o)) => go!(i, o, |x| f32s(x) as u16),
        (Data::U32(i), Data::U32(o)) => go!(i, o, |x| f32s(x) as u32),
        _ => return false,
    }
    true
}

/// 16 elements at a time: `i` float32 or float64 bits (`S` of 4 or 8 bytes), `o` the low
/// bytes of each `W32` result (`D` of 1, 2 or 4 bytes); the last few by `scalar`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
unsafe fn w32_loop<S: Copy, D: Copy>(i: &[S], o: &mut [D], scalar: impl Fn(S) -> D) {
    use std::arch::x86_64::*;
    let n = i.len().min(o.len());
    let body = n - n % 16;
    let (src, dst) = (i.as_ptr().cast::<u8>(), o.as_mut_ptr().cast::<u8>());
    for k in (0..body).step_by(16) {
        // SAFETY: `k + 16 <= n`: 16 elements of `S` are read from `i` at `k` and 16 of `D`
        // written to `o` at `k`, all unaligned loads and stores.
        unsafe {
            let p = src.add(k * size_of::<S>());
            let v = if size_of::<S>() == 8 {
                let lo = _mm512_cvttpd_epi32(_mm512_loadu_pd(p.cast()));
                let hi = _mm512_cvttpd_epi32(_mm512_loadu_pd(p.add(64).cast()));
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
            } else {
                _mm512_cvttps_epi32(_mm512_loadu_ps(p.cast()))
            };
            let q = dst.add(k * size_of::<D>());
            match size_of::<D>() {
                1 => _mm_storeu_si128(q.cast(), _mm512_cvtepi32_epi8(v)),
                2 => _mm256_storeu_si256(q.cast(), _mm512_cvtepi32_epi16(v)),
                _ => _mm512_storeu_si512(q.cast(), v),
            }
        }
    }
    for k in body..n {
        o[k] = scalar(i[k]);
    }
}

/// `a.astype(out.dtype)` as PyTorch converts to and from its float8 dtypes
/// (`Float8Conversion::C10`):
/// - into a float8, through float32 (`astype`: a float64 or an integer rounded to nearest
///   even, a complex number's real part), then `numeric::c10`; the same dtype is copied;
/// - out of a float8, its value in float32 (exact), a NaN the positive quiet one (c10 reads
///   the fnuz formats' NaN, `0x80`, as a positive NaN; ml_dtypes as a negative one), then
///   `astype`;
/// - anything else by `astype`.
///
/// A NaN result is the format's positive quiet NaN, as every kernel writes it.
pub(super) fn c10_into(a: &Array, out: &mut Array) -> Result<(), OpError> {
    if a.dtype == out.dtype {
        out.data.assign(a.data.clone());
        return Ok(());
    }
    let Some(f8) = Float8::of(out.dtype) else {
        if Float8::of(a.dtype).is_none() {
            return astype_into(a, out);
        }
        let mut wide = astype(a, DType::Float32);
        let Data::U32(v) = &mut wide.data else {
            unreachable!("float32 storage")
        };
        for x in v.iter_mut() {
            if f32::from_bits(*x).is_nan() {
                *x = F32_NAN;
            }
        }
        return astype_into(&wide, out);
    };
    let f = if a.dtype == DType::Float32 {
        std::borrow::Cow::Borrowed(a)
    } else {
        std::borrow::Cow::Owned(astype(a, DType::Float32))
    };
    let canonical = canonical_nan_codes(&out.dtype.float_format().expect("float8"));
    let (Data::U32(i), Data::U8(o)) = (&f.data, &mut out.data) else {
        unreachable!("float32 into float8 storage")
    };
    for (o, &x) in o.iter_mut().zip(i.iter()) {
        *o = canonical[f8.from_f32_bits(x) as usize];
    }
    Ok(())
}

/// [`c10_into`] into a new array.
pub(super) fn c10_astype(a: &Array, to: DType) -> Array {
    let mut out = Array::zeroed(to, a.shape.clone());
    c10_into(a, &mut out).expect("same shape");
    out
}

/// `astype` element by element through `convert_bits` (the codec): what the fast paths of
/// `astype_into` are held to, and the path of the pairs they leave (complex dtypes, 32- and
/// 64-bit integers to the small float formats).
pub(super) fn astype_general(a: &Array, to: DType) -> Array {
    let n = a.len();
    let bits: Vec<[u64; 2]> = (0..n)
        .map(|i| {
            if to.is_complex() {
                let (re, im) = complex_at(a, i, to);
                let f = to.float_format().expect("parts");
                // A NaN part is the format's positive quiet NaN (a float8 fnuz NaN has the
                // sign bit set).
                let enc = |x: f64| {
                    if x.is_nan() {
                        f.canonical_nan(false)
                    } else {
                        f.encode(Value::from_f64(x))
                    }
                };
                [enc(re), enc(im)]
            } else if a.dtype.is_complex() {
                let part = a.dtype.part();
                let (re, im) = match &a.data {
                    Data::C32(v) => (v[i][0] as u64, v[i][1] as u64),
                    Data::C64(v) => (v[i][0] as u64, v[i][1] as u64),
                    Data::C128(v) => (v[i][0], v[i][1]),
                    _ => unreachable!(),
                };
                if to == DType::Bool {
                    // Nonzero in either part (NumPy and PyTorch alike).
                    let nonzero = |b| convert_bits(part, DType::Bool, b);
                    return [nonzero(re) | nonzero(im), 0];
                }
                [convert_bits(part, to, re), 0]
            } else {
                [convert_bits(a.dtype, to, raw(&a.data, i)), 0]
            }
        })
        .collect();
    Array::from_bits(to, a.shape.clone(), &bits).expect("shape kept")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass float → integer conversion writes what `c_int_astype` computes, for every
    /// C convention, destination width and signedness, float32 and float64 sources, on the
    /// edges (±0, halves, each width's bounds and one past, 2^63, 2^64, ±inf, NaNs) and
    /// pseudo-random patterns, at lengths around the vector widths.
    #[test]
    fn c_int_into_is_c_int_astype() {
        // With AVX-512 (the hardware conversions of `w32_avx512_into` where the CPU has it) and
        // without (the generic loops every other CPU runs).
        for avx512 in [true, false] {
            crate::kernels::stream::set_avx512_enabled(avx512);
            c_int_into_answers_as_c_int_astype();
        }
        crate::kernels::stream::set_avx512_enabled(true);
    }

    fn c_int_into_answers_as_c_int_astype() {
        for (src, a) in probe_arrays() {
            for conv in [
                IntConversion::X86,
                IntConversion::X86C10,
                IntConversion::X86Eigen,
            ] {
                for bits in [8, 16, 32, 64] {
                    for signed in [true, false] {
                        let to = DType::Int { bits, signed };
                        let want = c_int_astype(&a, to, conv).expect("a C convention");
                        let mut got = Array::zeros(to, a.shape.clone()).expect("small");
                        assert!(c_int_into(&a, &mut got, conv));
                        assert_eq!(got.bits(), want.bits(), "{src:?} → {to:?} under {conv:?}");
                    }
                }
            }
        }
    }

    /// `Cvtt` as the C casts define it: the value truncated (`trunc`), kept where it fits the
    /// width, else the width's least value; the unsigned 64-bit splits at 2^63 on top.
    #[test]
    fn cvtt_is_the_truncation_where_it_fits() {
        fn cvtt(x: f64, bits: u32) -> i64 {
            let limit = 2f64.powi(bits as i32 - 1);
            match x.trunc() {
                t if t >= -limit && t < limit => t as i64,
                _ => i64::MIN >> (64 - bits),
            }
        }
        let two63 = 2f64.powi(63);
        for (_, a) in probe_arrays() {
            let values: Vec<f64> = match &a.data {
                Data::U32(v) => v.iter().map(|&b| f64::from(f32::from_bits(b))).collect(),
                Data::U64(v) => v.iter().map(|&b| f64::from_bits(b)).collect(),
                _ => unreachable!("float storage"),
            };
            for x in values {
                let gcc = if x >= two63 {
                    cvtt(x - two63, 64) ^ i64::MIN
                } else {
                    cvtt(x, 64)
                };
                let low = cvtt(x, 64);
                let eigen = low | (cvtt(x - two63, 64) & (low >> 63));
                for (k, want) in [
                    (Cvtt::W32, cvtt(x, 32)),
                    (Cvtt::W64, cvtt(x, 64)),
                    (Cvtt::GccU64, gcc),
                    (Cvtt::EigenU64, eigen),
                ] {
                    assert_eq!(k.apply(x), want, "{k:?} of {x:e} ({:#x})", x.to_bits());
                }
            }
        }
    }

    /// Float32 and float64 arrays of edge values (every width's bounds, ±0, ±inf, NaNs) and
    /// random ones (any bit pattern, integers scaled by powers of two).
    fn probe_arrays() -> Vec<(DType, Array)> {
        let edges: Vec<f64> = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            127.9,
            128.0,
            -128.9,
            -129.0,
            255.5,
            256.0,
            32767.9,
            32768.0,
            -32769.0,
            65535.9,
            65536.0,
            2147483647.5,
            2147483648.0,
            -2147483649.0,
            4294967296.0,
            9007199254740992.0,
            9223372036854774784.0,
            9223372036854775808.0,
            -9223372036854775808.0,
            -9223372036854779904.0,
            18446744073709551616.0,
            1e300,
            -1e300,
            5e-324,
            3e38,
            -3e38,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ]
        .to_vec();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::new();
        for n in [1, 15, 37, 300] {
            let mut values = edges.clone();
            values.extend((0..n).map(|_| f64::from_bits(random())));
            values.extend(
                (0..n).map(|_| (random() as i64 as f64) / 2f64.powi((random() % 70) as i32)),
            );
            for src in [DType::Float32, DType::Float64] {
                let bits: Vec<[u64; 2]> = values
                    .iter()
                    .map(|&v| match src {
                        DType::Float32 => [u64::from((v as f32).to_bits()), 0],
                        _ => [v.to_bits(), 0],
                    })
                    .collect();
                let a =
                    Array::from_bits(src, vec![bits.len()], &bits).expect("patterns of the dtype");
                out.push((src, a));
            }
        }
        out
    }
}
