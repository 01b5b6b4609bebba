//! Fused fast paths: loops specialised by computation dtype and operand shape (same-dtype floats,
//! small floats through float32, F16C, AVX-512 VBMI lookup kernels, integer pairs), each falling
//! back to the general path by returning false.

use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::kernels::cast::Caster;
use crate::kernels::parallel::{PAIR_MIN_BYTES, Split, for_each_chunk, split_for};
use crate::kernels::stream::Isa;
use crate::kernels::stream::Store;
use crate::kernels::stream::parallel_min_bytes;
use crate::numeric::dtype::DType;
use crate::numeric::format::FloatFormat;
use crate::numeric::format::Value;
use crate::numeric::format::cast_bits;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

use super::general::run_chunked;
use super::input::Input;
use super::lanes::{canon32, canon64, canonical_nan_codes, f32_lanes_round_correctly, holds};
use super::vocab::{CHUNK, Op};

/// `f` over equal-length chunks of the output and the two inputs, split across threads from
/// 256 KiB (the caller and one helper, `parallel::Split::Pair`; the rayon pool from
/// `parallel_min_bytes` with more than two threads or a streamed output); `f` is told whether the whole output is large enough to bypass the cache. An input
/// of one element against a longer output (a broadcast scalar) is read as a tile of up to
/// [`TILE`] copies of it, made here: `f` then runs on tile-sized pieces, each reading the tile
/// from its start. (`fused_go` reads such an input as its value and never gets here with one.)
#[inline(always)]
pub(super) fn zip_chunks<A: Copy + Sync, B: Copy + Sync, O: Send>(
    a: &[A],
    b: &[B],
    out: &mut [O],
    f: impl Fn(&[A], &[B], &mut [O], Store) + Sync,
) {
    let n = out.len();
    fn repeated<T: Copy>(v: &[T], n: usize) -> std::borrow::Cow<'_, [T]> {
        match v {
            [x] if n > 1 => std::borrow::Cow::Owned(vec![*x; n.min(TILE)]),
            _ => std::borrow::Cow::Borrowed(v),
        }
    }
    let (a, b) = (repeated(a, n), repeated(b, n));
    let (a, b) = (&a[..], &b[..]);
    // The bytes the pass reads: both operands, or one when `astype` passes its input twice.
    let same = std::ptr::eq(a.as_ptr().cast::<u8>(), b.as_ptr().cast::<u8>())
        && size_of_val(a) == size_of_val(b);
    let read = size_of_val(a) + if same { 0 } else { size_of_val(b) };
    let store = Store::for_pass(read, size_of_val(out));
    let tile = tile_of(a.len(), b.len(), n);
    fn part<T>(v: &[T], n: usize, at: usize, len: usize) -> &[T] {
        if v.len() == n {
            &v[at..at + len]
        } else {
            &v[..len]
        }
    }
    let run = |s: usize, o: &mut [O]| match tile {
        None => f(&a[s..s + o.len()], &b[s..s + o.len()], o, store),
        Some(t) => {
            for (k, o) in o.chunks_mut(t).enumerate() {
                let (at, len) = (s + k * t, o.len());
                f(part(a, n, at, len), part(b, n, at, len), o, store)
            }
        }
    };
    split_pass(out, read, store, run);
}

/// The shorter of two input lengths that are shorter than the output's `n` (a tile), if any.
/// Apart from `zip_chunks` so that it is compiled once, not once per kernel.
#[inline]
fn tile_of(a: usize, b: usize, n: usize) -> Option<usize> {
    [a, b].into_iter().filter(|&l| l < n).min()
}

/// `run(start, piece)` over `out` cut into pieces, on the threads an elementwise pass that
/// reads `read` bytes and writes `out` with `store` warrants (one piece, the whole of `out`,
/// on this thread for a small pass): the executor choice of every fused pass.
pub(super) fn split_pass<O: Send>(
    out: &mut [O],
    read: usize,
    store: Store,
    run: impl Fn(usize, &mut [O]) + Sync,
) {
    match plan_pass(out.len(), read + size_of_val(out), store) {
        Some((split, chunk)) => for_each_chunk(out, chunk, split, run),
        None => run(0, out),
    }
}

/// The executor and piece length for a pass over `n` elements that reads and writes `bytes`
/// with `store`, or `None` for one piece on this thread: `split_pass`'s choice, apart from it
/// so that it is compiled once, not once per kernel. `#[inline]`, as `tile_of`: without it the
/// wheel's build (16 codegen units) called both across units, and int32 `negative` at 1e3 into
/// `out=` took 330–350 ns from Python, was 280–300 (NumPy's 310–330), the same with it.
#[inline]
fn plan_pass(n: usize, bytes: usize, store: Store) -> Option<(Split, usize)> {
    // Threads only for a pass that fills a good part of a core's L2 (`PAIR_MIN_BYTES`; asking
    // rayon costs a lookup of its registry): the rayon pool when its data would not sit in one
    // core's L2 (`parallel_min_bytes`) and either the pool has more than two threads or the
    // output is streamed; else this thread and the spinning helper, two threads that start
    // sooner than the pool's two.
    let threads = match n >= 4 * PAIR_ALIGN && bytes >= PAIR_MIN_BYTES {
        true => rayon::current_num_threads(),
        false => 1,
    };
    let large = n >= 4 * CHUNK && bytes >= parallel_min_bytes();
    let split = split_for(threads, large, store == Store::Streamed)?;
    let chunk = match (split, store) {
        // Two pieces, one each, for a pass that fits in L2: each claim (an atomic on a line
        // both cores write) costs ~0.15 µs, a tenth of such a piece's time. Four for a larger
        // pass, so that a helper that starts late still takes a share.
        (Split::Pair, _) => {
            let pieces = if bytes < parallel_min_bytes() { 2 } else { 4 };
            n.div_ceil(pieces).next_multiple_of(PAIR_ALIGN)
        }
        (Split::Pool, Store::Cached) => CHUNK * 4,
        // Streamed chunks are few and large: each ends with a store fence, which waits for its
        // non-temporal stores to drain (with 16K-element chunks two threads measured no faster
        // than one).
        (Split::Pool, Store::Streamed) => n.div_ceil(4 * threads).next_multiple_of(CHUNK),
    };
    Some((split, chunk))
}

/// Elements a pair's piece is a multiple of: 64, so that every piece's output starts a whole
/// number of cache lines after the array's start, whatever the element size.
const PAIR_ALIGN: usize = 64;

/// Elements of a tile: 64K, so a piece of a streamed pass is long enough that its closing
/// store fence costs nothing, and the tile stays in L2.
const TILE: usize = 1 << 16;

/// One fused pass for the common case: both operands full arrays whose elements convert to a
/// float32/float64 lane by `as` (or are the lane type), arithmetic ops, a float32/float64
/// result. Returns `false` (doing nothing) for anything else, which takes the chunked path.
pub(super) fn fused_float(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    if !matches!(c, DType::Float32 | DType::Float64) {
        return false;
    }
    macro_rules! arith {
        ($same:expr, $a:expr, $b:expr, $o:expr, $fa:expr, $fb:expr, $enc:expr, $raw:expr, $L:ty) => {{
            #[inline(always)]
            fn go<A: Copy + Sync, B: Copy + Sync, O: Copy + Default + Send>(
                (op, same_format): (Op, bool),
                a: &[A],
                b: &[B],
                o: &mut [O],
                fa: impl Fn(A) -> $L + Copy + Sync,
                fb: impl Fn(B) -> $L + Copy + Sync,
                (enc, raw): (
                    impl Fn($L) -> O + Copy + Sync,
                    impl Fn($L) -> O + Copy + Sync,
                ),
            ) -> bool {
                // Operands of the result's own format lose nothing without AVX-512.
                let isa = match same_format {
                    true => Isa::detect().for_lines(a, b, o),
                    false => Isa::detect(),
                };
                macro_rules! each {
                    ($f:expr) => {
                        fused_go_on(isa, a, b, o, fa, fb, $f, enc)
                    };
                }
                // Max/min keep AVX-512 whatever the inputs' offsets: a compare and a select
                // per vector outweigh the straddled loads (float32 at 1e5 elements, inputs
                // off the output's line offset: 0.85–0.91 of `np.maximum` on AVX2, 0.97–1.00
                // on AVX-512).
                macro_rules! pick {
                    ($cmp:tt) => {
                        fused_go_on(Isa::detect(), a, b, o, fa, fb, |x: $L, y: $L| {
                            match x.is_nan() || y.is_nan() {
                                true => <$L>::NAN,
                                false if x $cmp y => x,
                                false => y,
                            }
                        }, raw)
                    };
                }
                match op {
                    Op::Add => each!(|x: $L, y: $L| x + y),
                    Op::Subtract => each!(|x: $L, y: $L| x - y),
                    Op::Multiply => each!(|x: $L, y: $L| x * y),
                    // The divider bounds a division loop: AVX2's is the faster here, for
                    // operands that need no AVX-512 conversion.
                    Op::TrueDivide if same_format => fused_go_on(
                        Isa::detect().for_division(),
                        a,
                        b,
                        o,
                        fa,
                        fb,
                        |x: $L, y: $L| x / y,
                        enc,
                    ),
                    Op::TrueDivide => each!(|x: $L, y: $L| x / y),
                    // A NaN operand makes the canonical NaN (what `enc` makes of either), one
                    // unordered compare of the two, and the select `maxps`/`minps` is: the
                    // second operand unless the first is greater (less), so a tie of zeros
                    // gives the second.
                    Op::Maximum => pick!(>),
                    Op::Minimum => pick!(<),
                    _ => return false,
                }
                true
            }
            go((op, $same), $a, $b, $o, $fa, $fb, ($enc, $raw))
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
    let same_format = x.array.dtype == c && y.array.dtype == c;
    match (c, out) {
        (DType::Float32, Data::U32(o)) => {
            if x.array.dtype == DType::Float64 || y.array.dtype == DType::Float64 {
                return false;
            }
            operand!(x, f32, |sa, fa| operand!(y, f32, |sb, fb| arith!(
                same_format,
                sa,
                sb,
                &mut o[..],
                fa,
                fb,
                canon32,
                f32::to_bits,
                f32
            )))
        }
        (DType::Float64, Data::U64(o)) => {
            operand!(x, f64, |sa, fa| operand!(y, f64, |sb, fb| arith!(
                same_format,
                sa,
                sb,
                &mut o[..],
                fa,
                fb,
                canon64,
                f64::to_bits,
                f64
            )))
        }
        _ => false,
    }
}

/// `enc(f(fa(a[i]), fb(b[i])))` into `o`, one pass, in parallel chunks for large arrays. An
/// input shorter than the output (one element: a broadcast scalar) is read as its value, so
/// the pass streams one input, not two.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn fused_go<
    A: Copy + Sync,
    B: Copy + Sync,
    O: Copy + Default + Send,
    L: Copy + Send + Sync,
    R,
>(
    a: &[A],
    b: &[B],
    o: &mut [O],
    fa: impl Fn(A) -> L + Copy + Sync,
    fb: impl Fn(B) -> L + Copy + Sync,
    f: impl Fn(L, L) -> R + Copy + Sync,
    enc: impl Fn(R) -> O + Copy + Sync,
) {
    fused_go_on(Isa::detect(), a, b, o, fa, fb, f, enc)
}

/// [`fused_go`] with its loops compiled for `isa`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn fused_go_on<
    A: Copy + Sync,
    B: Copy + Sync,
    O: Copy + Default + Send,
    L: Copy + Send + Sync,
    R,
>(
    isa: Isa,
    a: &[A],
    b: &[B],
    o: &mut [O],
    fa: impl Fn(A) -> L + Copy + Sync,
    fb: impl Fn(B) -> L + Copy + Sync,
    f: impl Fn(L, L) -> R + Copy + Sync,
    enc: impl Fn(R) -> O + Copy + Sync,
) {
    let n = o.len();
    if n > 0 && b.len() < n {
        let y = fb(b[0]);
        return zip_chunks(a, a, o, |a, _, o, store| {
            isa.map2(store, a, a, o, |x, _| enc(f(fa(x), y)))
        });
    }
    if n > 0 && a.len() < n {
        let x = fa(a[0]);
        return zip_chunks(b, b, o, |b, _, o, store| {
            isa.map2(store, b, b, o, |_, y| enc(f(x, fb(y))))
        });
    }
    zip_chunks(a, b, o, |a, b, o, store| {
        isa.map2(store, a, b, o, |x, y| enc(f(fa(x), fb(y))))
    })
}

/// A fused pass for bfloat16 or float16 arithmetic on operands of that format: widening
/// (bfloat16 by a shift), float32 arithmetic, one rounding by the branch-free kernel, NaN made
/// canonical; float16 + − × ÷ with F16C where the CPU has it. (The 8-bit formats take
/// `fused_pairs`.)
pub(super) fn fused_small(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let DType::Small(_) = c else { return false };
    if x.array.dtype != c || y.array.dtype != c {
        return false;
    }
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
        (Data::U16(a), Data::U16(b), Data::U16(o)) if c == DType::BFLOAT16 => {
            let load = |v: u16| f32::from_bits((v as u32) << 16);
            let enc = |v: f32| crate::kernels::cast::f32_to_bf16(canon32(v));
            with_op!(|f| fused_go(a, b, o, load, load, f, enc));
        }
        (Data::U16(a), Data::U16(b), Data::U16(o)) if c == DType::FLOAT16 => {
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
pub(super) mod f16c {
    use std::arch::x86_64::*;

    use crate::kernels::ops::lanes::canon32;
    use crate::kernels::ops::vocab::Op;
    use crate::kernels::stream::Store;

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
            crate::kernels::cast::f32_to_f16(canon32(r))
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
pub(super) fn fused_halves(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let (Data::U32(o), DType::Float32) = (&mut *out, c) else {
        return false;
    };
    let half = |d: DType| match d {
        DType::BFLOAT16 => Some(true),
        DType::FLOAT16 => Some(false),
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
pub(super) fn kernel8(d: DType) -> Option<Arc<crate::kernels::avx512::Kernel8>> {
    type Cache = Mutex<HashMap<DType, Option<Arc<crate::kernels::avx512::Kernel8>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    // The kernel computes in float32: not for formats float32 cannot (`f32_lanes_round_correctly`).
    let fmt = d
        .float_format()
        .filter(|f| f.width() <= 8 && !d.is_complex() && f32_lanes_round_correctly(d))?;
    if !crate::kernels::avx512::Kernel8::available() {
        return None;
    }
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(d)
        .or_insert_with(|| {
            let f32f = FloatFormat::float32();
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
pub(super) fn fused_pairs(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    type PairCache = Mutex<HashMap<(Op, DType), Arc<Vec<u8>>>>;
    static CACHE: OnceLock<PairCache> = OnceLock::new();
    let (Data::U8(a), Data::U8(b), Data::U8(o)) = (&x.array.data, &y.array.data, &mut *out) else {
        return false;
    };
    if x.array.dtype != c || y.array.dtype != c || !c.is_float() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(k) = kernel8(c).filter(|k| k.computes(op)) {
        zip_chunks(a, b, o, |a, b, o, store| k.binary(op, store, a, b, o));
        return true;
    }
    if o.len() < 1 << 16 {
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
        let t = Arc::new(t.into_vec());
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

/// A fused pass for a comparison into bool of two operands of the compute dtype itself
/// (float32, float64, or an integer of 8 to 64 bits), or of one operand of float32/float64 `c`
/// and one whose every value `c` holds ([`compares_exactly`]: an int8 against a float32): each
/// element read by its own width and widened by `as` (no lane buffers, no rounding), compared
/// as the general path compares its lanes (IEEE: a NaN is unordered and unequal to
/// everything).
pub(super) fn fused_compare(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    if !op.is_comparison() {
        return false;
    }
    let Data::U8(o) = out else { return false };
    let (dx, dy) = (x.array.dtype, y.array.dtype);
    let (xd, yd) = (&x.array.data, &y.array.data);
    if dx == c && dy == c {
        compare_same(op, c, xd, yd, o)
    } else if dx == c && compares_exactly(c, dy) {
        compare_mixed(op, c, xd, (dy, yd), o)
    } else if dy == c && compares_exactly(c, dx) {
        compare_mixed(op.swapped(), c, yd, (dx, xd), o)
    } else {
        false
    }
}

/// Whether [`fused_compare`] compares an operand of `d` against one of the float32/float64
/// `c` in one pass: `d` converts into `c` exactly, by `as`.
pub(super) fn compares_exactly(c: DType, d: DType) -> bool {
    matches!(
        (c, d),
        (
            DType::Float32,
            DType::Bool | DType::Int { bits: 8 | 16, .. }
        ) | (
            DType::Float64,
            DType::Bool
                | DType::Float32
                | DType::Int {
                    bits: 8 | 16 | 32,
                    ..
                }
        )
    )
}

/// `op` on `a[i]` and `b[i]` read by `fa` and `fb`, into 0 or 1.
macro_rules! compare_op {
    ($op:expr, $a:expr, $b:expr, $o:expr, $fa:expr, $fb:expr) => {{
        let (fa, fb) = ($fa, $fb);
        let to_u8 = |r: bool| r as u8;
        match $op {
            Op::Equal => fused_go($a, $b, $o, fa, fb, |x, y| x == y, to_u8),
            Op::NotEqual => fused_go($a, $b, $o, fa, fb, |x, y| x != y, to_u8),
            Op::Less => fused_go($a, $b, $o, fa, fb, |x, y| x < y, to_u8),
            Op::LessEqual => fused_go($a, $b, $o, fa, fb, |x, y| x <= y, to_u8),
            Op::Greater => fused_go($a, $b, $o, fa, fb, |x, y| x > y, to_u8),
            _ => fused_go($a, $b, $o, fa, fb, |x, y| x >= y, to_u8),
        }
    }};
}

/// [`fused_compare`] of two operands of `c`.
fn compare_same(op: Op, c: DType, x: &Data, y: &Data, o: &mut [u8]) -> bool {
    macro_rules! with {
        ($a:expr, $b:expr, $read:expr) => {
            compare_op!(op, $a, $b, o, $read, $read)
        };
    }
    match (c, x, y) {
        (DType::Float32, Data::U32(a), Data::U32(b)) => with!(a, b, f32::from_bits),
        (DType::Float64, Data::U64(a), Data::U64(b)) => with!(a, b, f64::from_bits),
        (DType::Int { bits: 8, signed }, Data::U8(a), Data::U8(b)) => match signed {
            true => with!(a, b, |v: u8| v as i8),
            false => with!(a, b, |v: u8| v),
        },
        (DType::Int { bits: 16, signed }, Data::U16(a), Data::U16(b)) => match signed {
            true => with!(a, b, |v: u16| v as i16),
            false => with!(a, b, |v: u16| v),
        },
        (DType::Int { bits: 32, signed }, Data::U32(a), Data::U32(b)) => match signed {
            true => with!(a, b, |v: u32| v as i32),
            false => with!(a, b, |v: u32| v),
        },
        (DType::Int { bits: 64, signed }, Data::U64(a), Data::U64(b)) => match signed {
            true => with!(a, b, |v: u64| v as i64),
            false => with!(a, b, |v: u64| v),
        },
        _ => return false,
    }
    true
}

/// [`fused_compare`] of an operand `x` of the float `c` against `y` of `d`
/// ([`compares_exactly`]), in that order.
fn compare_mixed(op: Op, c: DType, x: &Data, (d, y): (DType, &Data), o: &mut [u8]) -> bool {
    // The operands of 8 and 16 bits either float takes, then `$wide`.
    macro_rules! against {
        ($a:expr, $fa:expr, $L:ty, $wide:expr) => {
            match (d, y) {
                (
                    DType::Int {
                        bits: 8,
                        signed: true,
                    },
                    Data::U8(b),
                ) => {
                    compare_op!(op, $a, b, o, $fa, |v: u8| v as i8 as $L)
                }
                (DType::Bool | DType::Int { bits: 8, .. }, Data::U8(b)) => {
                    compare_op!(op, $a, b, o, $fa, |v: u8| v as $L)
                }
                (
                    DType::Int {
                        bits: 16,
                        signed: true,
                    },
                    Data::U16(b),
                ) => {
                    compare_op!(op, $a, b, o, $fa, |v: u16| v as i16 as $L)
                }
                (DType::Int { bits: 16, .. }, Data::U16(b)) => {
                    compare_op!(op, $a, b, o, $fa, |v: u16| v as $L)
                }
                _ => $wide,
            }
        };
    }
    match (c, x) {
        (DType::Float32, Data::U32(a)) => against!(a, f32::from_bits, f32, return false),
        (DType::Float64, Data::U64(a)) => against!(
            a,
            f64::from_bits,
            f64,
            match (d, y) {
                (DType::Float32, Data::U32(b)) => {
                    compare_op!(op, a, b, o, f64::from_bits, |v: u32| f32::from_bits(v)
                        as f64)
                }
                (
                    DType::Int {
                        bits: 32,
                        signed: true,
                    },
                    Data::U32(b),
                ) => {
                    compare_op!(op, a, b, o, f64::from_bits, |v: u32| v as i32 as f64)
                }
                (DType::Int { bits: 32, .. }, Data::U32(b)) => {
                    compare_op!(op, a, b, o, f64::from_bits, |v: u32| v as f64)
                }
                _ => return false,
            }
        ),
        _ => return false,
    }
    true
}

/// A fused pass for integer arithmetic: operands of at most 64 bits read by `as`, wrapping
/// i64 arithmetic, the result truncated into a byte-multiple integer dtype.
pub(super) fn fused_int(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    let DType::Int { bits, signed } = c else {
        return false;
    };
    if bits < 8 || !holds(c, x.array.dtype) || !holds(c, y.array.dtype) {
        return false;
    }
    if fused_modular(op, c, x, y, out) {
        return true;
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
    // Both operands stored in bytes (or both in 16-bit words) and a wider result: loaders
    // whose signedness is in their type, which vectorise (the run-time shifts below do not
    // where the output is cached: uint8 + int8 was slower than NumPy up to 1e6 elements).
    let signed_of = |d: DType| matches!(d, DType::Int { signed: true, .. });
    let (sx, sy) = (signed_of(x.array.dtype), signed_of(y.array.dtype));
    macro_rules! typed {
        ($a:expr, $b:expr, $o:expr, $t:ty, $s:ty, $out:ty) => {{
            macro_rules! pair {
                ($fa:expr, $fb:expr) => {
                    with_op!(i32, |f| fused_go($a, $b, $o, $fa, $fb, f, |v: i32| v
                        as $out))
                };
            }
            match (sx, sy) {
                (true, true) => pair!(|v: $t| v as $s as i32, |v: $t| v as $s as i32),
                (true, false) => pair!(|v: $t| v as $s as i32, |v: $t| v as i32),
                (false, true) => pair!(|v: $t| v as i32, |v: $t| v as $s as i32),
                (false, false) => pair!(|v: $t| v as i32, |v: $t| v as i32),
            }
            return true;
        }};
    }
    match (&x.array.data, &y.array.data, &mut *out) {
        (Data::U8(a), Data::U8(b), Data::U16(o)) => typed!(a, b, o, u8, i8, u16),
        (Data::U16(a), Data::U16(b), Data::U32(o)) => typed!(a, b, o, u16, i16, u32),
        _ => {}
    }
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
    // Only results at least as wide as the operands' storage (`holds` above rules the rest
    // out), and not the pairs `typed!` took: no arm that cannot run is compiled (each is eight
    // kernels, each for three instruction sets).
    match (&x.array.data, &y.array.data, out) {
        (Data::U8(a), Data::U8(b), Data::U8(o)) => arm!(o, a, b, u8, i32, la32, lb32, u8),
        (Data::U8(a), Data::U8(b), Data::U32(o)) => arm!(o, a, b, u8, i64, la, lb, u32),
        (Data::U8(a), Data::U8(b), Data::U64(o)) => arm!(o, a, b, u8, i64, la, lb, u64),
        (Data::U16(a), Data::U16(b), Data::U16(o)) => arm!(o, a, b, u16, i32, la32, lb32, u16),
        (Data::U16(a), Data::U16(b), Data::U64(o)) => arm!(o, a, b, u16, i64, la, lb, u64),
        (Data::U32(a), Data::U32(b), Data::U32(o)) => arm!(o, a, b, u32, i64, la, lb, u32),
        (Data::U32(a), Data::U32(b), Data::U64(o)) => arm!(o, a, b, u32, i64, la, lb, u64),
        (Data::U64(a), Data::U64(b), Data::U64(o)) => arm!(o, a, b, u64, i64, la, lb, u64),
        _ => return false,
    }
    true
}

/// Wrapping `+ − ×`, bitwise ops, `maximum` and `minimum` whose operands are stored as the
/// result is (integers of the result's width, or bool): arithmetic modulo 2^bits on the
/// storage words themselves, which is the result truncated (32 int8 lanes per AVX2 vector, not
/// 8 widened ones), and the words read by the result's signedness to order them.
pub(super) fn fused_modular(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) -> bool {
    // Storage words wrap modulo 2^8 and more: int4 and narrower are not theirs.
    let DType::Int { bits, signed } = c else {
        return false;
    };
    if bits < 8 {
        return false;
    }
    let same = |d: DType| match d {
        DType::Bool => true,
        DType::Int { bits: b, .. } => b == bits,
        _ => false,
    };
    if !same(x.array.dtype) || !same(y.array.dtype) {
        return false;
    }
    macro_rules! with_op {
        ($a:expr, $b:expr, $o:expr, $t:ty, $s:ty) => {{
            // AVX2 for a pass in L2 (`Isa::for_lines`).
            let isa = Isa::detect().for_lines(&$a[..], &$b[..], &$o[..]);
            let id = |v: $t| v;
            let (sa, st) = (|v: $t| v as $s, |v: $s| v as $t);
            match op {
                Op::Add => fused_go_on(isa, $a, $b, $o, id, id, <$t>::wrapping_add, id),
                Op::Subtract => fused_go_on(isa, $a, $b, $o, id, id, <$t>::wrapping_sub, id),
                Op::Multiply => fused_go_on(isa, $a, $b, $o, id, id, <$t>::wrapping_mul, id),
                Op::BitwiseAnd => fused_go_on(isa, $a, $b, $o, id, id, |p: $t, q: $t| p & q, id),
                Op::BitwiseOr => fused_go_on(isa, $a, $b, $o, id, id, |p: $t, q: $t| p | q, id),
                Op::BitwiseXor => fused_go_on(isa, $a, $b, $o, id, id, |p: $t, q: $t| p ^ q, id),
                Op::Maximum if signed => fused_go_on(isa, $a, $b, $o, sa, sa, <$s>::max, st),
                Op::Minimum if signed => fused_go_on(isa, $a, $b, $o, sa, sa, <$s>::min, st),
                Op::Maximum => fused_go_on(isa, $a, $b, $o, id, id, <$t>::max, id),
                Op::Minimum => fused_go_on(isa, $a, $b, $o, id, id, <$t>::min, id),
                _ => return false,
            }
        }};
    }
    match (&x.array.data, &y.array.data, out) {
        (Data::U8(a), Data::U8(b), Data::U8(o)) => with_op!(a, b, o, u8, i8),
        (Data::U16(a), Data::U16(b), Data::U16(o)) => with_op!(a, b, o, u16, i16),
        (Data::U32(a), Data::U32(b), Data::U32(o)) => with_op!(a, b, o, u32, i32),
        (Data::U64(a), Data::U64(b), Data::U64(o)) => with_op!(a, b, o, u64, i64),
        _ => return false,
    }
    true
}
