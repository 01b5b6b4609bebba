//! AVX-512 VBMI kernels for the formats of at most 8 bits, chosen at run time where the CPU has
//! `avx512f`, `avx512bw` and `avx512vbmi` (`Kernel8::available`).
//!
//! The portable fast paths for these formats are table lookups, one element at a time (for
//! float8 + float8 a 64 KB table of operand pairs), far from the memory bound. VBMI's
//! `vpermi2b` looks up 64 bytes at once in a 128-byte table held in two registers, so:
//!
//! - **widening** 64 codes to float32 (astype) looks up the two high byte planes of the codec's
//!   256-entry table (each two `vpermi2b` and a blend on the code's top bit; the low two bytes
//!   of a float32 widened from at most 8 bits are zero), interleaved back into 32-bit lanes by
//!   two rounds of unpacks. The unpacks work within 128-bit lanes, so the codes are first put in
//!   the order that makes the interleaved result come out in element order (`SCRAMBLE`);
//! - **arithmetic** on two arrays of one format widens both without caring for the order
//!   (`widen64_split`: one unpack per plane pair, then shifts and masks), runs the general
//!   path's float32 operation on values scaled by `2^(bias - 127)` (for sums and comparisons
//!   the tables hold them scaled; products and quotients are scaled after), makes NaN
//!   canonical, and narrows with one round-to-nearest-even shift (`narrow16`: the scaling
//!   makes float32's exponent field the format's and its subnormals the format's, so the
//!   subnormal step of [`Narrow::run`] and its rebiasing drop out). It packs the codes back
//!   with the inverse of that interleave (`pack64`), so no permutation is needed either side
//!   (and codes look up only their low seven bits where that is enough, `LOW7` and `SIGNED`);
//!   NaN codes then go through the canonical map, a byte lookup, unless the narrowing can only
//!   make the canonical one (fn and fnuz formats).
//!
//! On this project's machine these passes are two to four times faster than the pair table
//! and the 256-entry widening table they replace; docs/kernels.md has the series of variants
//! tried, docs/performance.md the figures.
//!
//! Every kernel is held to the general path on every pair of codes (`tests` below and
//! `ops::tests`), so it is exact by the same argument as the tables it replaces.

use std::arch::x86_64::*;

use crate::kernels::cast::Narrow;
use crate::kernels::ops::vocab::Op;
use crate::kernels::stream::Store;

/// The byte order that makes `widen64`'s unpacks produce elements in order: position `p` of the
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

/// The high two bytes of a 256-entry table of 32-bit values (whose low two bytes are zero), as
/// two byte planes of four 64-byte registers each.
struct Planes([[__m512i; 4]; 2]);

/// A 256-entry byte table as four 64-byte registers.
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

/// Widening and narrowing constants for one format of at most 8 bits, and the canonical-NaN map.
pub(crate) struct Kernel8 {
    /// The code → float32 bits table (the codec's cast), and as byte planes.
    table: Box<[u32; 256]>,
    widen: Planes,
    /// The same values times [`Narrow::scale`] (arithmetic's operands where that is exact);
    /// `widen` again for formats without `Narrow`.
    scaled: Planes,
    /// float32 → code: `None` for formats without `Narrow` (unsigned or without subnormals).
    narrow: Option<Narrow>,
    /// The narrowing's NaN and overflow results are NaN codes and the positive overflow code
    /// is the canonical NaN: NaN needs no float32 canonicalisation, no select of its own (it
    /// lands on the overflow code) and no canonical map (fn and fnuz formats).
    specials_are_nan: bool,
    /// How arithmetic looks codes up (`widen64_split`).
    mode: u8,
    /// Each code, NaN codes replaced by the positive canonical NaN.
    canonical: Bytes,
}

impl Kernel8 {
    /// Whether these kernels run: the CPU has them, and (in tests) they are not switched off
    /// on this thread (`stream::set_avx512_enabled`).
    pub(crate) fn available() -> bool {
        crate::kernels::stream::avx512_enabled() && Kernel8::cpu_has()
    }

    /// Whether this CPU has AVX-512 F, BW and VBMI (detected once; cached by std).
    fn cpu_has() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }

    /// `widen[c]`: float32 bits of code `c` (of `width` bits); `narrow`: the rounding into the
    /// format, if it has one; `canonical[c]`: `c`, or the canonical NaN code if `c` is a NaN;
    /// `is_nan(c)`: whether code `c` is a NaN. `None` when the CPU lacks AVX-512 VBMI, or a
    /// table value has low bits (no format of at most 8 bits has them).
    pub(crate) fn new(
        width: u32,
        widen: &[u32; 256],
        narrow: Option<Narrow>,
        canonical: &[u8; 256],
        is_nan: impl Fn(u32) -> bool,
    ) -> Option<Kernel8> {
        if !Kernel8::cpu_has() {
            return None;
        }
        // Scaling by a power of two is exact for the values of a format of at most 8 bits
        // (their scaled subnormals are float32 subnormals `code << drop`), and NaN stays NaN.
        let scale = narrow.as_ref().map_or(1.0, Narrow::scale);
        let scaled: [u32; 256] = std::array::from_fn(|c| {
            let w = f32::from_bits(widen[c]);
            if w.is_nan() {
                widen[c]
            } else {
                (w * scale).to_bits()
            }
        });
        let exact = widen.iter().zip(&scaled).all(|(&w, &s)| {
            let w = f32::from_bits(w);
            w.is_nan() || f32::from_bits(s) / scale == w
        });
        if !exact || widen.iter().chain(&scaled).any(|w| w & 0xffff != 0) {
            return None;
        }
        let planes = |t: &[u32; 256]| {
            let plane = |k: usize| {
                let mut p = [0u8; 256];
                for (b, w) in p.iter_mut().zip(t) {
                    *b = (w >> (8 * k)) as u8;
                }
                Bytes::new(&p).0
            };
            Planes([plane(2), plane(3)])
        };
        let specials_are_nan = narrow.as_ref().is_some_and(|n| {
            n.nan.iter().chain(&n.over).all(|&c| is_nan(c))
                && canonical[n.over[0] as usize] as u32 == n.over[0]
        });
        // Each code with its top bit set widens to its low seven bits' value with the sign
        // flipped, or both are NaN (fnuz formats fail: 0x80 is NaN, 0x00 zero).
        let signed = (0..128).all(|c| {
            let (pos, neg) = (widen[c as usize], widen[c as usize | 0x80]);
            neg == pos ^ 1 << 31 || (is_nan(c) && is_nan(c | 0x80))
        });
        let mode = match width {
            ..=7 => LOW7,
            _ if signed => SIGNED,
            _ => FULL,
        };
        Some(Kernel8 {
            mode,
            table: Box::new(*widen),
            widen: planes(widen),
            scaled: planes(&scaled),
            narrow,
            specials_are_nan,
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
        unsafe { widen_all(self, store, input, out) }
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
        let zero = n.zero != [0, 1 << n.sign_shift];
        // `SCALED`: the operands are widened straight to scaled values, which is exact for
        // the ops that only add or compare (`narrow16`); a product or quotient is computed on
        // the values and scaled after, as it may not be exact.
        macro_rules! run {
            ($scaled:literal, |$x:ident, $y:ident| $f:expr) => {{
                let f = |$x, $y| {
                    // SAFETY: the intrinsics in `f` run only inside `binary_all`, on a CPU with
                    // AVX-512 F, BW and VBMI, as every call below.
                    unsafe { $f }
                };
                // SAFETY: a `Kernel8` exists only where the CPU has AVX-512 F, BW and VBMI.
                unsafe {
                    match (self.specials_are_nan, zero, self.mode) {
                        (true, false, SIGNED) => {
                            binary_all::<true, false, SIGNED, $scaled>(self, n, store, a, b, out, f)
                        }
                        (true, true, FULL) => {
                            binary_all::<true, true, FULL, $scaled>(self, n, store, a, b, out, f)
                        }
                        (false, false, SIGNED) => binary_all::<false, false, SIGNED, $scaled>(
                            self, n, store, a, b, out, f,
                        ),
                        (false, false, LOW7) => {
                            binary_all::<false, false, LOW7, $scaled>(self, n, store, a, b, out, f)
                        }
                        // Every other format (none shipped): the general variant, correct for
                        // any (a zero select and the NaN steps are no-ops where not needed).
                        _ => binary_all::<false, true, FULL, $scaled>(self, n, store, a, b, out, f),
                    }
                }
            }};
        }
        match op {
            Op::Add => run!(true, |x, y| _mm512_add_ps(x, y)),
            Op::Subtract => run!(true, |x, y| _mm512_sub_ps(x, y)),
            Op::Multiply => run!(false, |x, y| _mm512_mul_ps(x, y)),
            Op::TrueDivide => run!(false, |x, y| _mm512_div_ps(x, y)),
            // NumPy: a NaN operand wins (the first if both), else the larger (smaller).
            Op::Maximum => run!(true, |x, y| {
                let first = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, y)
                    | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                _mm512_mask_blend_ps(first, y, x)
            }),
            _ => run!(true, |x, y| {
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

/// 64 codes → 64 32-bit table values, in element order, as four registers of 16.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn widen64(t: &[[__m512i; 4]; 2], order: __m512i, codes: __m512i) -> [__m512i; 4] {
    let idx = _mm512_permutexvar_epi8(order, codes);
    let top = _mm512_movepi8_mask(idx);
    let (b2, b3) = (lookup(&t[0], idx, top), lookup(&t[1], idx, top));
    let (l23, h23) = (_mm512_unpacklo_epi8(b2, b3), _mm512_unpackhi_epi8(b2, b3));
    let zero = _mm512_setzero_si512();
    [
        _mm512_unpacklo_epi16(zero, l23),
        _mm512_unpackhi_epi16(zero, l23),
        _mm512_unpacklo_epi16(zero, h23),
        _mm512_unpackhi_epi16(zero, h23),
    ]
}

/// 64 codes → 64 32-bit table values in the order `pack64` undoes, with two shuffles: the two
/// planes interleave into the table's high halves (`unpack{lo,hi}_epi8`, elements `16k + i`
/// and `16k + 8 + i` of 128-bit lane `k`), and each 32-bit lane of those holds two elements,
/// shifted (even) or masked (odd) into place.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn widen64_split<const MODE: u8>(t: &[[__m512i; 4]; 2], codes: __m512i) -> [__m512i; 4] {
    let (b2, b3) = match MODE {
        // Codes below 128: one `vpermi2b` per plane (it reads the low seven bits only).
        LOW7 => (
            _mm512_permutex2var_epi8(t[0][0], codes, t[0][1]),
            _mm512_permutex2var_epi8(t[1][0], codes, t[1][1]),
        ),
        // The code's top bit is the float32's sign bit: look the low seven bits up, then copy
        // the code's top bit into the high plane (0xF8: A | B & C).
        SIGNED => (
            _mm512_permutex2var_epi8(t[0][0], codes, t[0][1]),
            _mm512_ternarylogic_epi32::<0xF8>(
                _mm512_permutex2var_epi8(t[1][0], codes, t[1][1]),
                codes,
                _mm512_set1_epi8(0x80u8 as i8),
            ),
        ),
        _ => {
            let top = _mm512_movepi8_mask(codes);
            (lookup(&t[0], codes, top), lookup(&t[1], codes, top))
        }
    };
    let (lo, hi) = (_mm512_unpacklo_epi8(b2, b3), _mm512_unpackhi_epi8(b2, b3));
    let high = _mm512_set1_epi32(0xffff_0000u32 as i32);
    [
        _mm512_slli_epi32::<16>(lo),
        _mm512_and_si512(lo, high),
        _mm512_slli_epi32::<16>(hi),
        _mm512_and_si512(hi, high),
    ]
}

// How `widen64_split` looks codes up (`Kernel8::mode`).
/// Codes of at most 7 bits: the low half of the table only.
const LOW7: u8 = 0;
/// Eight-bit codes whose top bit is the sign of the value they widen to, NaN codes aside when
/// both halves are NaN (a NaN operand makes a NaN result whatever its sign, which the kernel
/// then makes canonical).
const SIGNED: u8 = 1;
/// Any table: both halves, the code's top bit choosing.
const FULL: u8 = 2;

/// Codes below 256 in the 32-bit lanes `widen64_split` made → 64 bytes in element order: the
/// even and odd elements back into 16-bit lanes, then one unsigned-saturating pack, the
/// inverse of the interleave.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn pack64(c: [__m512i; 4]) -> __m512i {
    let lo = _mm512_or_si512(c[0], _mm512_slli_epi32::<16>(c[1]));
    let hi = _mm512_or_si512(c[2], _mm512_slli_epi32::<16>(c[3]));
    _mm512_packus_epi16(lo, hi)
}

/// The number of leading elements to handle one by one so that `out` is 64-byte aligned after
/// them, when streaming; none otherwise.
fn head<T>(store: Store, out: &[T]) -> usize {
    match store {
        Store::Streamed => crate::kernels::stream::aligned_head(out, 64),
        Store::Cached => 0,
    }
}

/// Stores 64 bytes at `p`: non-temporal when streaming (then `p` is 64-byte aligned).
///
/// # Safety
/// `p` must point to 64 writable bytes, 64-byte aligned when `store` is `Streamed`, and the
/// CPU must have AVX-512F (the callers are compiled for it and chosen only when it is there).
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
fn widen_all(k: &Kernel8, store: Store, input: &[u8], out: &mut [u32]) {
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
            let [w0, w1, w2, w3] = widen64(&t, order, codes);
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
    /// `2^(drop - 1) - 1`: rounding to nearest, ties to the even `lsb`.
    half: __m512i,
    one: __m512i,
    scale: __m512,
    max_code: __m512i,
    inf: __m512i,
    /// `1 << drop`: the bit that makes the rounded-to mantissa odd.
    lsb: __m512i,
    drop: __m128i,
    /// `31 - sign_shift`: brings float32's sign bit to the format's.
    sign_from: __m128i,
    sign_bit: __m512i,
    zero: [__m512i; 2],
    over: [__m512i; 2],
    nan: [__m512i; 2],
}

impl NarrowV {
    #[target_feature(enable = "avx512f")]
    fn new(n: &Narrow) -> NarrowV {
        let c = |v: u32| _mm512_set1_epi32(v as i32);
        let pair = |p: [u32; 2]| [c(p[0]), c(p[1])];
        NarrowV {
            abs: c(0x7fff_ffff),
            half: c((1 << (n.drop - 1)) - 1),
            one: c(1),
            scale: _mm512_set1_ps(n.scale()),
            max_code: c(n.max_code),
            inf: c(0x7f80_0000),
            lsb: c(1 << n.drop),
            drop: _mm_cvtsi32_si128(n.drop as i32),
            sign_from: _mm_cvtsi32_si128(31 - n.sign_shift as i32),
            sign_bit: c(1 << n.sign_shift),
            zero: pair(n.zero),
            over: pair(n.over),
            nan: pair(n.nan),
        }
    }
}

/// [`Narrow::run`] on 16 lanes of float32 values already multiplied by [`Narrow::scale`]
/// (`y`): the exponent field then is the format's, and a value in the format's subnormal range
/// is a float32 subnormal whose mantissa is the format's code shifted left by `drop`, so one
/// round-to-nearest-even shift makes the code of normal and subnormal results alike (where
/// `Narrow::run` rebiases the normal ones and rounds the subnormal ones with a float add).
///
/// Why this equals `Narrow::run` on the unscaled value:
///
/// - Sums, differences, maxima and minima are computed on scaled operands (`SCALED`). Scaling
///   by a power of two commutes with float32 rounding while the scaled value is normal; below
///   that, the result is below the format's smallest normal, where two of its values add
///   exactly (both are on its subnormal grid).
/// - Products and quotients are computed unscaled and then scaled, which rounds a second time
///   on float32's subnormal grid when the result is below the format's smallest normal. That
///   grid has `drop` (at least 16) bits below the format's last, so the second rounding could
///   change the narrowing only by moving a value onto a rounding midpoint, which needs a run
///   of at least 15 equal bits between the midpoint's bit and a last bit that differs. A
///   product of two values of at most 8 significant bits has at most 16 significant bits, too
///   few for that; a quotient's binary expansion repeats with a period set by a divisor below
///   2^8, too short for it.
///
/// `ops::tests` checks every pair of codes of every shipped format against `Narrow::run`.
///
/// `NAN`: the NaN and overflow results are NaN codes and the positive overflow code is the
/// canonical NaN (`Kernel8::specials_are_nan`), so a NaN takes the overflow select (its
/// shifted bits are above every finite code) and both give that code, without a sign.
/// `ZERO`: a zero result is not simply the sign over code 0 (fnuz formats).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn narrow16<const NAN: bool, const ZERO: bool>(n: &NarrowV, y: __m512i) -> __m512i {
    let neg = _mm512_cmplt_epi32_mask(y, _mm512_setzero_si512());
    let pick = |pair: [__m512i; 2]| _mm512_mask_blend_epi32(neg, pair[0], pair[1]);
    let abs = _mm512_and_si512(y, n.abs);
    // Round half to even: add 2^(drop-1) - 1, and one more where the kept part is odd.
    let odd = _mm512_test_epi32_mask(abs, n.lsb);
    let w = _mm512_add_epi32(abs, n.half);
    let code = _mm512_srl_epi32(_mm512_mask_add_epi32(w, odd, w, n.one), n.drop);
    // r = (y >> (31 - sign_shift) & sign_bit) | code, one ternary-logic op (0xEC: A & C | B).
    let shifted = _mm512_srl_epi32(y, n.sign_from);
    let mut r = _mm512_ternarylogic_epi32::<0xEC>(shifted, code, n.sign_bit);
    if ZERO {
        let zero = _mm512_cmpeq_epi32_mask(code, _mm512_setzero_si512());
        r = _mm512_mask_mov_epi32(r, zero, pick(n.zero));
    }
    let over = _mm512_cmpgt_epu32_mask(code, n.max_code);
    if NAN {
        _mm512_mask_mov_epi32(r, over, n.over[0])
    } else {
        r = _mm512_mask_mov_epi32(r, over, pick(n.over));
        _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(abs, n.inf), pick(n.nan))
    }
}

/// `out[i] = canonical(narrow(f(widen(a[i]), widen(b[i]))))`, 64 elements a step. `NAN` and
/// `ZERO` as [`narrow16`]; without `NAN`, a NaN result is first made the positive float32 NaN
/// (as the general path's `canon32`) and the codes go through the canonical map; with it, the
/// only NaN code the narrowing makes is the positive overflow code, already canonical.
/// `SCALED`: `f` gets the operands already multiplied by [`Narrow::scale`]; otherwise its
/// result is.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn binary_all<const NAN: bool, const ZERO: bool, const MODE: u8, const SCALED: bool>(
    k: &Kernel8,
    narrow: &Narrow,
    store: Store,
    a: &[u8],
    b: &[u8],
    out: &mut [u8],
    f: impl Fn(__m512, __m512) -> __m512,
) {
    // Everything the loop reads, in registers: the tables and the constants.
    let (t, canonical) = (if SCALED { k.scaled.0 } else { k.widen.0 }, k.canonical.0);
    let nv = NarrowV::new(narrow);
    let nan = _mm512_set1_ps(f32::from_bits(0x7fc0_0000));
    // 64 elements: widen both, compute, (canonical NaN,) narrow, pack, (canonical NaN code.) A
    // macro, not a closure, so that it inlines into the loop with the constants hoisted.
    macro_rules! block {
        ($x:expr, $y:expr) => {{
            let (wx, wy) = (widen64_split::<MODE>(&t, $x), widen64_split::<MODE>(&t, $y));
            let code = |q: usize| {
                let mut r = f(_mm512_castsi512_ps(wx[q]), _mm512_castsi512_ps(wy[q]));
                if !SCALED {
                    r = _mm512_mul_ps(r, nv.scale);
                }
                if !NAN {
                    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(r, r), nan);
                }
                narrow16::<NAN, ZERO>(&nv, _mm512_castps_si512(r))
            };
            let packed = pack64([code(0), code(1), code(2), code(3)]);
            if NAN {
                packed
            } else {
                lookup(&canonical, packed, _mm512_movepi8_mask(packed))
            }
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
    #[cfg_attr(
        not(typejoin_avx512vbmi),
        ignore = "this CPU lacks AVX-512 VBMI: its kernels cannot run here"
    )]
    fn widening_equals_the_table() {
        let table: [u32; 256] = std::array::from_fn(|c| (c as u32).wrapping_mul(0x9e37_0000));
        let k = Kernel8::new(8, &table, None, &std::array::from_fn(|c| c as u8), |_| {
            false
        })
        .expect("built on a CPU with AVX-512 VBMI, but the kernels are not available");
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
