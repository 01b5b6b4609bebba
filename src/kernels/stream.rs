//! Elementwise loops whose output may bypass the cache.
//!
//! An ordinary store to a line that is not in cache first reads the line (a read for ownership),
//! so `o[i] = a[i] + b[i]` over arrays larger than the cache moves four streams, not three.
//! Non-temporal stores (`movntdq`) write whole 64-byte lines without reading them, so an add
//! moves three streams instead of four. They are a loss when the data would have stayed in
//! cache for the next pass (or the next call on the same arrays): a cached store then costs
//! nothing extra, and a streamed line must come back from memory. So a pass streams only when
//! what it reads and writes together would not fit in the last-level cache
//! (`Store::for_pass`, [`stream_min_bytes`]): on this project's machine (32 MiB of L3)
//! float32 → float64 over 1e6 elements (12 MB) is more than twice as fast cached as streamed,
//! and float32 + float32 over 3e6 (36 MB) faster streamed (docs/kernels.md; the figures are in
//! docs/performance.md).
//!
//! The loops here compute a block of whole lines (at least 16 elements) into a local array,
//! which the compiler keeps in registers, and store it with aligned 16-byte non-temporal stores
//! (SSE2, so every x86-64 has them); the unaligned head and the tail use ordinary stores. On
//! other architectures they are plain loops. [`Isa`] runs them compiled for the widest vector
//! instructions the CPU has.

/// The last-level cache when it cannot be read (or outside Linux): a common L3 size, this
/// project's machine's.
const DEFAULT_LAST_LEVEL_CACHE: usize = 32 << 20;

/// A pass whose inputs and output take at least this many bytes together streams its output:
/// the CPU's last-level cache as Linux reports it (`/sys/devices/system/cpu/cpu0/cache`, the
/// highest level's size), clamped to 8–64 MiB, read once per process; 32 MiB when unknown.
pub fn stream_min_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        last_level_cache()
            .unwrap_or(DEFAULT_LAST_LEVEL_CACHE)
            .clamp(8 << 20, 64 << 20)
    })
}

/// A core's second-level cache when it cannot be read: this project's machine's.
const DEFAULT_L2_CACHE: usize = 2 << 20;

/// A fused elementwise pass runs on the rayon pool when its inputs and output take at least
/// this many bytes together (and it has a few chunks) and the pool has more than two threads
/// or the output is streamed; with two threads (and from `PAIR_MIN_BYTES`, 256 KiB) the
/// calling thread and one helper take it (`parallel::Split::Pair`). A core's L2 (sysfs),
/// clamped to 512 KiB–4 MiB, read once per process. Below it the data sits in the calling core's L2, and
/// a worker would first fetch its half from there: on this project's machine (2 MiB of L2) an
/// int8 add of 140,000 elements took 17.4 µs on two threads, `np.add` 7.2 µs on one, and the
/// same add on one thread 4.9 µs; an int64 add of 100,000 elements (2.4 MB) took 28 µs on two
/// threads against `np.add`'s 64–98 µs.
pub fn parallel_min_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        cache_size(|level| level == 2)
            .unwrap_or(DEFAULT_L2_CACHE)
            .clamp(512 << 10, 4 << 20)
    })
}

/// The size of the highest cache level of CPU 0, from sysfs (`32768K`).
fn last_level_cache() -> Option<usize> {
    cache_size(|_| true)
}

/// The size of the highest cache level of CPU 0 that `levels` takes, from sysfs.
fn cache_size(levels: impl Fn(u32) -> bool) -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, usize)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim())) else {
            continue;
        };
        if levels(level) && best.is_none_or(|(l, _)| level > l) {
            best = Some((level, size));
        }
    }
    best.map(|(_, size)| size)
}

/// A sysfs cache size: bytes, or a count of `K`/`M` (binary units).
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

#[cfg(test)]
thread_local! {
    static ENABLED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Switches the AVX-512 kernels (`avx512`) and the loops compiled for AVX-512 off (or back on) for the calling
/// thread, so that tests can hold the AVX2 and portable paths they replace to the same results
/// on a CPU that has AVX-512. A split pass's pieces run with their caller's switch
/// (`parallel::for_each_chunk`).
#[cfg(test)]
pub(crate) fn set_avx512_enabled(on: bool) {
    ENABLED.with(|e| e.set(on));
}

/// Whether code compiled for AVX-512 may run on this thread: always, but in tests that switch
/// it off (`set_avx512_enabled`). The generic loops built for AVX-512 (`ops::fused_go`) check it too.
pub(crate) fn avx512_enabled() -> bool {
    #[cfg(test)]
    if !ENABLED.with(|e| e.get()) {
        return false;
    }
    true
}

/// How a loop writes its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Ordinary stores: the output stays in cache for whatever reads it next.
    Cached,
    /// Non-temporal stores for whole aligned lines (x86-64; elsewhere the same as `Cached`).
    Streamed,
}

impl Store {
    /// `Streamed` for a pass that reads `read` bytes and writes `written`, together at least
    /// [`stream_min_bytes`]: its data would not stay in the last-level cache anyway.
    pub fn for_pass(read: usize, written: usize) -> Store {
        if read.saturating_add(written) >= stream_min_bytes() {
            Store::Streamed
        } else {
            Store::Cached
        }
    }
}

/// `o[i] = f(a[i], b[i])` for every `i` (the three slices have one length).
#[inline(always)]
pub fn map2<A: Copy, B: Copy, O: Copy + Default>(
    store: Store,
    a: &[A],
    b: &[B],
    o: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    debug_assert!(a.len() == o.len() && b.len() == o.len());
    #[cfg(target_arch = "x86_64")]
    if store == Store::Streamed && streamable::<O>(o) {
        return streamed(a, b, o, f);
    }
    let _ = store;
    // The first elements one by one, until the output starts a cache line: a wide store that
    // straddles two lines costs two (NumPy's buffers start 16 or 32 bytes into a line; with
    // 64-byte vectors every store of a float32 add would split, measured 5% of its time).
    // An output narrower than the first input (a comparison into bool) is written a quarter
    // or an eighth of the bytes that input is read: that input's loads start the lines then.
    let (a, b) = (&a[..o.len()], &b[..o.len()]);
    let head = match size_of::<A>() > size_of::<O>() {
        true => aligned_head(a, 64),
        false => aligned_head(o, 64),
    };
    let (oh, ob) = o.split_at_mut(head);
    for ((o, &x), &y) in oh.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
    for ((o, &x), &y) in ob.iter_mut().zip(&a[head..]).zip(&b[head..]) {
        *o = f(x, y);
    }
}

/// `o[i] = f(a[i])` for every `i`.
#[inline(always)]
pub fn map1<A: Copy, O: Copy + Default>(store: Store, a: &[A], o: &mut [O], f: impl Fn(A) -> O) {
    map2(store, a, a, o, |x, _| f(x))
}

/// How many leading elements of `out` to write one by one so that the rest starts on a
/// multiple of `align` bytes (all of them if it never does).
pub(crate) fn aligned_head<T>(out: &[T], align: usize) -> usize {
    ((align - out.as_ptr() as usize % align) % align / size_of::<T>()).min(out.len())
}

/// Whether `o` can be written in aligned lines: the element size divides 64 and the slice
/// starts on a multiple of it (true of every `Vec` of a primitive type).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn streamable<O>(o: &[O]) -> bool {
    let size = size_of::<O>();
    size > 0 && 64 % size == 0 && (o.as_ptr() as usize).is_multiple_of(size)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn streamed<A: Copy, B: Copy, O: Copy + Default>(
    a: &[A],
    b: &[B],
    o: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let size = size_of::<O>();
    // Elements computed into registers (or the stack) before they are streamed out: whole
    // lines, and at least 16 elements so that wide elements (complex) still fill vectors.
    let block = (16 * size).max(64);
    let per = block / size;
    let n = o.len();
    let head = aligned_head(o, 64);
    let body = head + (n - head) / per * per;
    for i in 0..head {
        o[i] = f(a[i], b[i]);
    }
    let lines = o[head..body].chunks_exact_mut(per);
    for ((o, a), b) in lines
        .zip(a[head..body].chunks_exact(per))
        .zip(b[head..body].chunks_exact(per))
    {
        let mut line = [O::default(); 64];
        for ((t, &x), &y) in line[..per].iter_mut().zip(a).zip(b) {
            *t = f(x, y);
        }
        let src = line.as_ptr().cast::<__m128i>();
        let dst = o.as_mut_ptr().cast::<__m128i>();
        // SAFETY: `line` and `o` hold `block` bytes (`per` elements of `size`); `o` starts on a
        // multiple of 64 (the head brought it there and every block is a multiple of 64 bytes),
        // so the 16-byte stores are aligned and in bounds.
        unsafe {
            for k in 0..block / 16 {
                _mm_stream_si128(dst.add(k), _mm_loadu_si128(src.add(k)));
            }
        }
    }
    for i in body..n {
        o[i] = f(a[i], b[i]);
    }
    // Order the non-temporal stores before anything that follows (another thread may read
    // the output once this call returns).
    // SAFETY: SSE2 is part of x86-64.
    unsafe { _mm_sfence() };
}

/// `$body` (an expression of the listed arguments, whose loops are `#[inline(always)]` down to
/// the element) compiled for the instruction set `$isa` ([`Isa`]): a function of the listed
/// generics and arguments is defined once per target-feature set, and `$isa` picks one. The
/// one place the kernels name the feature sets their generic loops are built for.
///
/// Only in optimised builds without debug assertions (`release`, `wheel`, `profiling`, and
/// `cargo test --release`). The dev and test profiles (opt-level 1, where LLVM vectorises no
/// loop: rustc asks for loop vectorisation from opt-level 2) would get three scalar copies of
/// each of the ~800 loops, which test nothing the one copy does not; there `$body` is compiled
/// once, whatever `$isa` says (with the fused passes' executor choice made non-generic, the
/// crate's test build went from about 8½ minutes to 4¾; the two were not measured apart). The
/// hand-written AVX2/AVX-512 kernels (`kernels::avx512`, F16C) are compiled in every profile.
#[cfg(all(target_arch = "x86_64", not(debug_assertions)))]
macro_rules! compiled_for {
    ($isa:expr, [$($generics:tt)*] ($($arg:ident: $ty:ty),* $(,)?) => $body:expr) => {{
        #[target_feature(enable = "avx2")]
        fn avx2<$($generics)*>($($arg: $ty),*) {
            $body
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
        fn avx512<$($generics)*>($($arg: $ty),*) {
            $body
        }
        match $isa {
            // SAFETY: `Isa::detect` found AVX-512 F, BW, VL and DQ, and AVX2.
            $crate::kernels::stream::Isa::Avx512 => unsafe { avx512($($arg),*) },
            // SAFETY: `Isa::detect` found AVX2.
            $crate::kernels::stream::Isa::Avx2 => unsafe { avx2($($arg),*) },
            $crate::kernels::stream::Isa::Baseline => $body,
        }
    }};
}
/// `$body` compiled once (a debug build, or not x86-64): see the x86-64 release definition.
#[cfg(not(all(target_arch = "x86_64", not(debug_assertions))))]
macro_rules! compiled_for {
    ($isa:expr, [$($generics:tt)*] ($($arg:ident: $ty:ty),* $(,)?) => $body:expr) => {{
        let _: $crate::kernels::stream::Isa = $isa;
        $body
    }};
}
pub(crate) use compiled_for;

/// The widest vector instructions the elementwise loops use: the same loop is compiled for
/// AVX-512 (F, BW, VL, DQ: twice AVX2's lanes, mask registers for the selects, 64-bit integer
/// ↔ float conversions), for AVX2, and for the baseline. `detect` reads the test switch of the
/// thread it runs on (`set_avx512_enabled`), which `parallel::for_each_chunk` passes on to the
/// threads that run a split pass's pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The least data, in bytes, a pass reads and writes (its distinct inputs and its output) for
/// which [`Isa::for_lines`] trades AVX-512 for AVX2: below it the data stay in a 48 KiB L1.
pub(crate) const LINES_MIN_BYTES: usize = 48 << 10;

impl Isa {
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if avx512_enabled()
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }

    /// AVX2 in place of AVX-512 for a pass of one element size whose inputs and output take at
    /// least [`LINES_MIN_BYTES`] together (its data then live in L2, not L1); `a` and `b` one slice
    /// (a unary map) count once. Only for loops that lose nothing without AVX-512 (plain
    /// arithmetic, bitwise ops, equal-width maps; not 64-bit integer ↔ float conversions). First
    /// taken where an input's offset within a 64-byte line differs from the output's ([`map2`]
    /// aligns the stores, so each of that input's 64-byte loads straddles two lines): float32 `add`
    /// at 1e5 from Python against NumPy's AVX2 loop, 0.87–0.90 before, 0.99–1.10 after. Then
    /// measured for inputs on the output's offset too (from Python, `out=`, best of 15, two runs
    /// each, AVX-512 → AVX2): float32 `add` at 1e4 1.47–1.52 µs → 1.38–1.39 µs, at 1e5 6.54–6.80 µs
    /// → 6.12–6.15 µs; int32 `add` at 1e4 1.39–1.47 µs → 1.33 µs; float64 `add` at 1e4 2.51–2.60 µs
    /// → 2.38–2.39 µs; int8 `negative` at 1e5 new 2.64–2.65 µs → 2.63–2.64 µs. Slower beyond the
    /// runs' spread: only float32 `multiply` at 1e5 into a new result, 7.65–7.70 µs → 7.80–7.91 µs.
    /// At 1e3, in L1, AVX2 measured 0.95 of NumPy's `add` against AVX-512's 1.03, hence the
    /// threshold; a unary map's two arrays fill L1 from 24 KiB of output (int8 `absolute` into
    /// `out=` with AVX2 from 16 KiB: 400 ns at 16,383 elements, 611 ns at 20,000, NumPy 435 and 549
    /// ns).
    pub(crate) fn for_lines<A, B, O>(self, a: &[A], b: &[B], o: &[O]) -> Isa {
        #[cfg(target_arch = "x86_64")]
        if self == Isa::Avx512
            && size_of::<A>() == size_of::<O>()
            && size_of::<B>() == size_of::<O>()
        {
            let one_input = std::ptr::addr_eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len();
            let inputs = size_of_val(a) + if one_input { 0 } else { size_of_val(b) };
            if inputs + size_of_val(o) >= LINES_MIN_BYTES {
                return Isa::Avx2;
            }
        }
        let _ = (a, b, o);
        self
    }

    /// AVX2 in place of AVX-512 for a loop of float divisions: 256-bit `vdivps`/`vdivpd`
    /// ran a 1,000-element division loop (in L1) faster than 512-bit ones on this project's
    /// AVX-512 Xeon, float64 501–527 ns against 557 ns, float32 158–166 ns against 169–174 ns
    /// (the divider, not the vector width, bounds both). NumPy's float divide loop is AVX2 too.
    pub(crate) fn for_division(self) -> Isa {
        #[cfg(target_arch = "x86_64")]
        if self == Isa::Avx512 {
            return Isa::Avx2;
        }
        self
    }

    /// [`map2`] compiled for this instruction set.
    #[inline(always)]
    pub(crate) fn map2<A: Copy, B: Copy, O: Copy + Default>(
        self,
        store: Store,
        a: &[A],
        b: &[B],
        o: &mut [O],
        f: impl Fn(A, B) -> O,
    ) {
        compiled_for!(self, [A: Copy, B: Copy, O: Copy + Default, F: Fn(A, B) -> O]
            (store: Store, a: &[A], b: &[B], o: &mut [O], f: F) => map2(store, a, b, o, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every head length, body and tail: the streamed loop writes what the plain loop writes.
    #[test]
    fn streamed_equals_cached_at_every_offset_and_length() {
        let a: Vec<u32> = (0..700u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let b: Vec<u32> = (0..700).map(|i| i ^ 0x5555).collect();
        for start in 0..20 {
            for len in [0, 1, 15, 16, 17, 63, 64, 65, 200, 680 - start] {
                let (a, b) = (&a[start..start + len], &b[start..start + len]);
                let mut want = vec![0u32; len + 3];
                let mut got = vec![0u32; len + 3];
                map2(Store::Cached, a, b, &mut want[1..=len], |x, y| {
                    x.wrapping_add(y)
                });
                map2(Store::Streamed, a, b, &mut got[1..=len], |x, y| {
                    x.wrapping_add(y)
                });
                assert_eq!(got, want, "start {start}, len {len}");
                let mut bytes = vec![0u8; len + 1];
                map1(Store::Streamed, a, &mut bytes[1..], |x| x as u8);
                let want: Vec<u8> = std::iter::once(0)
                    .chain(a.iter().map(|&x| x as u8))
                    .collect();
                assert_eq!(bytes, want);
            }
        }
    }

    /// AVX2 from the threshold for loops of one element size, whatever the offsets; AVX-512
    /// below it and where the element sizes differ; a unary map's one input counted once;
    /// AVX2 and the baseline stay.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn passes_in_l2_of_one_element_size_take_avx2() {
        // Three arrays of n u32s fill the threshold.
        let n = LINES_MIN_BYTES / 12;
        let buf = vec![0u32; 2 * n + 64];
        let at = |k: usize, len: usize| &buf[k..k + len];
        let o = at(16, n);
        let avx512 = Isa::Avx512;
        // Below the threshold AVX-512 stays whatever the offsets.
        assert_eq!(
            avx512.for_lines(at(8, n - 1), at(8, n - 1), at(16, n - 1)),
            Isa::Avx512
        );
        assert_eq!(avx512.for_lines(at(0, n), at(32, n), o), Isa::Avx2);
        assert_eq!(avx512.for_lines(at(8, n), at(32, n), o), Isa::Avx2);
        // One input twice (a unary map) counts once: two arrays of 1.5 n u32s fill it.
        assert_eq!(avx512.for_lines(at(0, n), at(0, n), o), Isa::Avx512);
        let (x, y) = (at(0, 3 * n / 2), at(8, 3 * n / 2));
        assert_eq!(avx512.for_lines(x, x, y), Isa::Avx2);
        assert_eq!(avx512.for_lines(at(0, n), at(5, 1), o), Isa::Avx512);
        assert_eq!(avx512.for_lines(at(0, 2 * n), at(5, 1), o), Isa::Avx2);
        let bytes = vec![0u8; 3 * n];
        assert_eq!(avx512.for_lines(&bytes, &bytes[..1], o), Isa::Avx512);
        assert_eq!(avx512.for_lines(at(0, n), &bytes, o), Isa::Avx512);
        assert_eq!(Isa::Avx2.for_lines(at(8, n), at(8, n), o), Isa::Avx2);
        assert_eq!(
            Isa::Baseline.for_lines(at(8, n), at(8, n), o),
            Isa::Baseline
        );
    }

    #[test]
    fn only_passes_larger_than_the_last_level_cache_stream() {
        let min = stream_min_bytes();
        assert!((8 << 20..=64 << 20).contains(&min), "{min}");
        assert_eq!(Store::for_pass(min / 3, min - min / 3), Store::Streamed);
        assert_eq!(Store::for_pass(min / 3, min - min / 3 - 1), Store::Cached);
        assert_eq!(Store::for_pass(usize::MAX, 1), Store::Streamed);
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x1K"), None);
    }
}
