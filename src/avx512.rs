//! AVX-512 VBMI kernels for the formats of at most 8 bits, chosen at run time where the CPU has
//! `avx512f`, `avx512bw` and `avx512vbmi` (`Kernel8::available`).
//!
//! The scalar fast paths for these formats are table lookups, one element at a time: about
//! 0.35 ns per element for float8 → float32 and 0.65 ns for float8 + float8 (a 64 KB table of
//! operand pairs), far from the memory bound. VBMI's `vpermi2b` looks up 64 bytes at once in a
//! 128-byte table held in two registers, so:
//!
//! - **widening** 64 codes to float32 is four byte planes of the codec's 256-entry table (each
//!   two `vpermi2b` and a blend on the code's top bit), interleaved back into 32-bit lanes by
//!   two rounds of unpacks. The unpacks work within 128-bit lanes, so the codes are first put in
//!   the order that makes the interleaved result come out in element order (`SCRAMBLE`);
//! - **arithmetic** on two arrays of one format widens both, runs the general path's float32
//!   operation, makes NaN canonical and narrows with [`Narrow`]'s branch-free rounding (the
//!   same integer and float steps, on 16 lanes), then maps NaN codes to the canonical one with
//!   a byte lookup.
//!
//! Every kernel is held to the general path on every pair of codes (`tests` below and
//! `ops::tests`), so it is exact by the same argument as the tables it replaces.

use std::arch::x86_64::*;

use crate::kernel::Narrow;
use crate::ops::Op;
use crate::stream::Store;

/// The byte order that makes `widen`'s unpacks produce elements in order: position `p` of the
/// permuted codes (128-bit lane `k = p / 16`, unpack round `m = p / 4 % 4`, dword `j = p % 4`)
/// holds element `16m + 4k + j`, the one that lane `k`, dword `j` of result `m` must hold.
const SCRAMBLE: [u8; 64] = {
    let mut s = [0u8; 64];
    let mut p = 0;
    while p < 64 {
        let (k, m, j) = (p / 16, p / 4 % 4, p % 4);
        s[p] = (16 * m + 4 * k + j) as u8;
        p += 1;
    }
    s
};

/// A 256-entry table of 32-bit values as four byte planes, each four 64-byte registers.
#[derive(Clone)]
struct Planes([[__m512i; 4]; 4]);

/// A 256-entry byte table as four 64-byte registers.
#[derive(Clone)]
struct Bytes([__m512i; 4]);

impl Bytes {
    fn new(t: &[u8; 256]) -> Bytes {
        let quarter = |q: usize| -> __m512i {
            let bytes: [u8; 64] = t[64 * q..64 * (q + 1)].try_into().expect("64 bytes");
            // SAFETY: `__m512i` is 64 plain bytes, like `[u8; 64]`.
            unsafe { std::mem::transmute::<[u8; 64], __m512i>(bytes) }
        };
        Bytes([quarter(0), quarter(1), quarter(2), quarter(3)])
    }
}

static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Switches these kernels off (or back on), so that tests can hold the portable fast paths
/// they replace to the same results on a CPU that has AVX-512 VBMI. Every path computes the
/// same bits, so switching while other threads run changes only their speed.
#[cfg(test)]
pub(crate) fn set_enabled(on: bool) {
    ENABLED.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Widening and narrowing constants for one format of at most 8 bits, and the canonical-NaN map.
#[derive(Clone)]
pub(crate) struct Kernel8 {
    /// The code → float32 bits table (the codec's cast), and as byte planes.
    table: Box<[u32; 256]>,
    widen: Planes,
    /// Every table value has zero low 16 bits: two planes are enough (`widen64::<true>`).
    high: bool,
    /// float32 → code: `None` for formats without `Narrow` (unsigned or without subnormals).
    narrow: Option<Narrow>,
    /// Each code, NaN codes replaced by the positive canonical NaN.
    canonical: Bytes,
}

impl Kernel8 {
    /// Whether this CPU runs these kernels (checked once per call; cached by std), and they
    /// are not switched off (`set_enabled`).
    pub(crate) fn available() -> bool {
        ENABLED.load(std::sync::atomic::Ordering::Relaxed)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }

    /// `widen[c]`: float32 bits of code `c`; `narrow`: the rounding into the format, if it has
    /// one; `canonical[c]`: `c`, or the canonical NaN code if `c` is a NaN. `None` when the CPU
    /// lacks AVX-512 VBMI.
    pub(crate) fn new(
        widen: &[u32; 256],
        narrow: Option<Narrow>,
        canonical: &[u8; 256],
    ) -> Option<Kernel8> {
        if !Kernel8::available() {
            return None;
        }
        let plane = |k: usize| {
            let mut t = [0u8; 256];
            for (b, w) in t.iter_mut().zip(widen) {
                *b = (w >> (8 * k)) as u8;
            }
            Bytes::new(&t).0
        };
        Some(Kernel8 {
            table: Box::new(*widen),
            widen: Planes([plane(0), plane(1), plane(2), plane(3)]),
            high: widen.iter().all(|w| w & 0xffff == 0),
            narrow,
            canonical: Bytes::new(canonical),
        })
    }

    /// Whether `binary` computes `op` for this format.
    pub(crate) fn computes(&self, op: Op) -> bool {
        self.narrow.is_some()
            && matches!(
                op,
                Op::Add | Op::Subtract | Op::Multiply | Op::TrueDivide | Op::Maximum | Op::Minimum
            )
    }

    /// `out[i] = widen[input[i]]`.
    pub(crate) fn widen(&self, store: Store, input: &[u8], out: &mut [u32]) {
        assert_eq!(input.len(), out.len(), "input and output lengths differ");
        // SAFETY: a `Kernel8` exists only where the CPU has AVX-512 F, BW and VBMI.
        unsafe {
            match self.high {
                true => widen_all::<true>(self, store, input, out),
                false => widen_all::<false>(self, store, input, out),
            }
        }
    }

    /// `out[i] = a[i] op b[i]` in the format, rounded once from float32 and NaN canonical.
    /// `op` must be one `computes` accepts.
    pub(crate) fn binary(&self, op: Op, store: Store, a: &[u8], b: &[u8], out: &mut [u8]) {
        assert!(self.computes(op), "{} is not an arithmetic op", op.name());
        assert!(
            a.len() == out.len() && b.len() == out.len(),
            "lengths differ"
        );
        let n = self.narrow.as_ref().expect("checked by computes");
        macro_rules! run {
            (|$x:ident, $y:ident| $f:expr) => {
                // SAFETY: a `Kernel8` exists only where the CPU has AVX-512 F, BW and VBMI.
                unsafe {
                    match self.high {
                        true => binary_all::<true>(self, n, store, a, b, out, |$x, $y| $f),
                        false => binary_all::<false>(self, n, store, a, b, out, |$x, $y| $f),
                    }
                }
            };
        }
        match op {
            Op::Add => run!(|x, y| _mm512_add_ps(x, y)),
            Op::Subtract => run!(|x, y| _mm512_sub_ps(x, y)),
            Op::Multiply => run!(|x, y| _mm512_mul_ps(x, y)),
            Op::TrueDivide => run!(|x, y| _mm512_div_ps(x, y)),
            // NumPy: a NaN operand wins (the first if both), else the larger (smaller).
            Op::Maximum => run!(|x, y| {
                let first = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, y)
                    | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                _mm512_mask_blend_ps(first, y, x)
            }),
            _ => run!(|x, y| {
                let first = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, y)
                    | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                _mm512_mask_blend_ps(first, y, x)
            }),
        }
    }
}

/// 64 byte lookups in a 256-entry byte table: `vpermi2b` on the low seven bits in each half,
/// the code's top bit choosing the half.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn lookup(t: &[__m512i; 4], idx: __m512i, top: __mmask64) -> __m512i {
    let low = _mm512_permutex2var_epi8(t[0], idx, t[1]);
    let high = _mm512_permutex2var_epi8(t[2], idx, t[3]);
    _mm512_mask_blend_epi8(top, low, high)
}

/// 64 codes → 64 32-bit table values, in element order, as four registers of 16. `HIGH`: the
/// table's low two bytes are all zero (true of every format of at most 8 bits widened to
/// float32), so only the two high planes are looked up.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn widen64<const HIGH: bool>(
    t: &[[__m512i; 4]; 4],
    order: __m512i,
    codes: __m512i,
) -> [__m512i; 4] {
    let idx = _mm512_permutexvar_epi8(order, codes);
    let top = _mm512_movepi8_mask(idx);
    let (b2, b3) = (lookup(&t[2], idx, top), lookup(&t[3], idx, top));
    let (l23, h23) = (_mm512_unpacklo_epi8(b2, b3), _mm512_unpackhi_epi8(b2, b3));
    let (l01, h01) = if HIGH {
        (_mm512_setzero_si512(), _mm512_setzero_si512())
    } else {
        let (b0, b1) = (lookup(&t[0], idx, top), lookup(&t[1], idx, top));
        (_mm512_unpacklo_epi8(b0, b1), _mm512_unpackhi_epi8(b0, b1))
    };
    [
        _mm512_unpacklo_epi16(l01, l23),
        _mm512_unpackhi_epi16(l01, l23),
        _mm512_unpacklo_epi16(h01, h23),
        _mm512_unpackhi_epi16(h01, h23),
    ]
}

/// The number of leading elements to handle one by one so that `out` is 64-byte aligned after
/// them, when streaming; none otherwise.
fn head<T>(store: Store, out: &[T]) -> usize {
    match store {
        Store::Streamed => ((64 - out.as_ptr() as usize % 64) % 64 / size_of::<T>()).min(out.len()),
        Store::Cached => 0,
    }
}

/// Stores 64 bytes at `p`: non-temporal when streaming (then `p` is 64-byte aligned).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn store64(store: Store, p: *mut u8, v: __m512i) {
    // SAFETY: the caller gives 64 writable bytes at `p`, aligned when streaming.
    unsafe {
        match store {
            Store::Streamed => _mm512_stream_si512(p.cast(), v),
            Store::Cached => _mm512_storeu_si512(p.cast(), v),
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn widen_all<const HIGH: bool>(k: &Kernel8, store: Store, input: &[u8], out: &mut [u32]) {
    let (t, table) = (k.widen.0, &k.table);
    // SAFETY: SCRAMBLE is 64 bytes.
    let order = unsafe { _mm512_loadu_si512(SCRAMBLE.as_ptr().cast()) };
    let n = out.len();
    let h = head(store, out);
    for (o, &c) in out[..h].iter_mut().zip(input) {
        *o = table[c as usize];
    }
    let mut i = h;
    while i + 64 <= n {
        // SAFETY: i + 64 <= n: 64 input bytes and 256 output bytes in bounds; when streaming,
        // `out[i..]` is 64-byte aligned (the head, then steps of 256 bytes).
        unsafe {
            let codes = _mm512_loadu_si512(input.as_ptr().add(i).cast());
            let [w0, w1, w2, w3] = widen64::<HIGH>(&t, order, codes);
            let o = out.as_mut_ptr().add(i).cast::<u8>();
            store64(store, o, w0);
            store64(store, o.add(64), w1);
            store64(store, o.add(128), w2);
            store64(store, o.add(192), w3);
        }
        i += 64;
    }
    for (o, &c) in out[i..].iter_mut().zip(&input[i..]) {
        *o = table[c as usize];
    }
    if store == Store::Streamed {
        _mm_sfence();
    }
}

/// [`Narrow`]'s constants as vectors, made once per call.
struct NarrowV {
    abs: __m512i,
    rebias: __m512i,
    /// `2^(drop - 1) - 1`: rounding to nearest, ties to the even `lsb`.
    half: __m512i,
    one: __m512i,
    magic: __m512,
    min_normal: __m512i,
    max_code: __m512i,
    inf: __m512i,
    drop: __m128i,
    sign_shift: __m128i,
    zero: [__m512i; 2],
    over: [__m512i; 2],
    nan: [__m512i; 2],
    /// Whether zero needs its own select: not when a zero result is already the sign bit
    /// over code 0 (formats with a signed zero).
    zero_select: bool,
}

impl NarrowV {
    #[target_feature(enable = "avx512f")]
    fn new(n: &Narrow) -> NarrowV {
        let c = |v: u32| _mm512_set1_epi32(v as i32);
        let pair = |p: [u32; 2]| [c(p[0]), c(p[1])];
        NarrowV {
            abs: c(0x7fff_ffff),
            rebias: c(n.rebias),
            half: c((1 << (n.drop - 1)) - 1),
            one: c(1),
            magic: _mm512_set1_ps(n.magic),
            min_normal: c(n.min_normal),
            max_code: c(n.max_code),
            inf: c(0x7f80_0000),
            drop: _mm_cvtsi32_si128(n.drop as i32),
            sign_shift: _mm_cvtsi32_si128(n.sign_shift as i32),
            zero: pair(n.zero),
            over: pair(n.over),
            nan: pair(n.nan),
            zero_select: n.zero != [0, 1 << n.sign_shift],
        }
    }
}

/// [`Narrow::run`] on 16 lanes: the same integer and float steps, masks for the selects.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn narrow16(n: &NarrowV, x: __m512i) -> __m512i {
    let neg = _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512());
    let pick = |pair: [__m512i; 2]| _mm512_mask_blend_epi32(neg, pair[0], pair[1]);
    let abs = _mm512_and_si512(x, n.abs);
    let v = _mm512_add_epi32(abs, n.rebias);
    let lsb = _mm512_and_si512(_mm512_srl_epi32(v, n.drop), n.one);
    let normal = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(v, n.half), lsb), n.drop);
    let sub = _mm512_sub_epi32(
        _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(abs), n.magic)),
        _mm512_castps_si512(n.magic),
    );
    let code = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(abs, n.min_normal), normal, sub);
    let sign = _mm512_sll_epi32(_mm512_srli_epi32::<31>(x), n.sign_shift);
    let mut r = _mm512_or_si512(sign, code);
    if n.zero_select {
        let zero = _mm512_cmpeq_epi32_mask(code, _mm512_setzero_si512());
        r = _mm512_mask_mov_epi32(r, zero, pick(n.zero));
    }
    r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(code, n.max_code), pick(n.over));
    _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(abs, n.inf), pick(n.nan))
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn binary_all<const HIGH: bool>(
    k: &Kernel8,
    narrow: &Narrow,
    store: Store,
    a: &[u8],
    b: &[u8],
    out: &mut [u8],
    f: impl Fn(__m512, __m512) -> __m512,
) {
    // Everything the loop reads, in registers: the tables, the permutation, the constants.
    let (t, canonical) = (k.widen.0, k.canonical.0);
    // SAFETY: SCRAMBLE is 64 bytes.
    let order = unsafe { _mm512_loadu_si512(SCRAMBLE.as_ptr().cast()) };
    let nv = NarrowV::new(narrow);
    let nan = _mm512_set1_ps(f32::from_bits(0x7fc0_0000));
    // 64 elements: widen both, compute, canonical NaN, narrow, pack, canonical NaN code. A
    // macro, not a closure, so that it inlines into the loop with the constants hoisted.
    macro_rules! block {
        ($x:expr, $y:expr) => {{
            let (wx, wy) = (
                widen64::<HIGH>(&t, order, $x),
                widen64::<HIGH>(&t, order, $y),
            );
            let code = |q: usize| {
                let r = f(_mm512_castsi512_ps(wx[q]), _mm512_castsi512_ps(wy[q]));
                let r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(r, r), nan);
                _mm512_cvtepi32_epi8(narrow16(&nv, _mm512_castps_si512(r)))
            };
            let lo = _mm256_set_m128i(code(1), code(0));
            let hi = _mm256_set_m128i(code(3), code(2));
            let packed = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi);
            lookup(&canonical, packed, _mm512_movepi8_mask(packed))
        }};
    }
    // Ragged ends go through one zero-padded block.
    let partial = |a: &[u8], b: &[u8], out: &mut [u8]| {
        let (mut x, mut y, mut o) = ([0u8; 64], [0u8; 64], [0u8; 64]);
        x[..a.len()].copy_from_slice(a);
        y[..b.len()].copy_from_slice(b);
        // SAFETY: 64-byte arrays.
        unsafe {
            let r = block!(
                _mm512_loadu_si512(x.as_ptr().cast()),
                _mm512_loadu_si512(y.as_ptr().cast())
            );
            _mm512_storeu_si512(o.as_mut_ptr().cast(), r);
        }
        out.copy_from_slice(&o[..out.len()]);
    };
    let n = out.len();
    let h = head(store, out);
    if h > 0 {
        partial(&a[..h], &b[..h], &mut out[..h]);
    }
    let mut i = h;
    while i + 64 <= n {
        // SAFETY: i + 64 <= n: 64 bytes of each slice in bounds; when streaming, `out[i..]` is
        // 64-byte aligned (the head, then steps of 64).
        unsafe {
            let x = _mm512_loadu_si512(a.as_ptr().add(i).cast());
            let y = _mm512_loadu_si512(b.as_ptr().add(i).cast());
            store64(store, out.as_mut_ptr().add(i), block!(x, y));
        }
        i += 64;
    }
    if i < n {
        partial(&a[i..], &b[i..], &mut out[i..]);
    }
    if store == Store::Streamed {
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_is_a_permutation() {
        let mut seen = [false; 64];
        for &e in &SCRAMBLE {
            assert!(!seen[e as usize]);
            seen[e as usize] = true;
        }
        assert_eq!(&SCRAMBLE[..8], &[0, 1, 2, 3, 16, 17, 18, 19]);
    }

    /// Widening every code at every alignment and length equals the table.
    #[test]
    fn widening_equals_the_table() {
        let table: [u32; 256] = std::array::from_fn(|c| (c as u32).wrapping_mul(0x9e37_79b9));
        let Some(k) = Kernel8::new(&table, None, &std::array::from_fn(|c| c as u8)) else {
            return; // no AVX-512 VBMI here; ops::tests still covers the scalar paths
        };
        let codes: Vec<u8> = (0..700u32).map(|i| (i * 7 + i / 256) as u8).collect();
        for start in [0, 1, 5, 17] {
            for len in [0, 1, 63, 64, 65, 130, 600] {
                let input = &codes[start..start + len];
                for store in [Store::Cached, Store::Streamed] {
                    let mut out = vec![0u32; len + 1];
                    k.widen(store, input, &mut out[1..]);
                    let want: Vec<u32> = std::iter::once(0)
                        .chain(input.iter().map(|&c| table[c as usize]))
                        .collect();
                    assert_eq!(out, want, "start {start} len {len} {store:?}");
                }
            }
        }
    }
}
