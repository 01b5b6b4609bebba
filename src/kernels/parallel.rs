//! The parallel loops every kernel shares.
//!
//! Each fused kernel is its own monomorphised function (about 1,700 of them: op × operand
//! dtypes × loader × operand shape). Handing each one to rayon's `par_chunks_mut` gave each
//! its own copy of rayon's splitting, job and join machinery: about 10 MiB of the release
//! binary's 23 MiB of code (measured with `cargo bloat`, docs/binary-size.md). Here rayon is
//! instantiated once, over a range of piece indices with a `dyn` callback; the kernel's loop
//! is called through that pointer once per piece (thousands of elements), never per element.
//!
//! Two executors run the pieces ([`Split`]): rayon's pool, for passes larger than a core's L2,
//! and a pair ([`Split::Pair`]): the calling thread and one helper thread that spins for a
//! while after each pass ([`SPIN`]), for passes that fit in L2. Rayon hands a piece to a
//! sleeping worker in about 10 µs on this project's machine, longer than a whole pass of
//! 100,000 float32 elements on one core (16 µs, 1.2 MB in L2); the spinning helper takes a
//! posted pass in well under a microsecond, so the two cores halve it.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the pieces of a parallel loop run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// On the rayon pool (its threads; the caller waits).
    Pool,
    /// On the calling thread and the one spinning helper thread, which claim pieces from
    /// opposite ends (`Pair::run`): the caller does them all when the helper is late.
    Pair,
}

/// The executor for a pass on `threads` threads (rayon's count): none on one; the pair on two
/// unless the pass is `large` (its data would not sit in one core's L2) and `streamed`; the
/// rayon pool on more for a `large` pass. The pair starts in well under a microsecond and the
/// pool in about 10 µs, so the pool pays only where the pair cannot use the other threads or a
/// streamed pass wants its large pieces spread (`ops::fused::split_pass`, `sum_order`).
pub(crate) fn split_for(threads: usize, large: bool, streamed: bool) -> Option<Split> {
    match threads {
        0 | 1 => None,
        _ if large && (threads > 2 || streamed) => Some(Split::Pool),
        _ => Some(Split::Pair),
    }
}

/// Runs `f(start, piece)` over `out` cut into `chunk`-element pieces (the last may be
/// shorter) on the threads `split` names. The pieces are disjoint, so each call owns its slice.
pub(crate) fn for_each_chunk<O: Send>(
    out: &mut [O],
    chunk: usize,
    split: Split,
    f: impl Fn(usize, &mut [O]) + Sync,
) {
    /// The base of `out`, shared by the pieces: each forms a slice of a range no other covers.
    struct Base<O>(*mut O);
    // SAFETY: the pointer is only turned into slices of disjoint ranges of a `&mut [O]` that
    // outlives the loop, and `O: Send`, so each piece may be written on another thread.
    unsafe impl<O: Send> Sync for Base<O> {}
    let (n, base) = (out.len(), Base(out.as_mut_ptr()));
    let chunk = chunk.max(1);
    // Tests switch AVX-512 off per thread (`stream::set_avx512_enabled`): the pieces run with
    // the caller's switch, whichever thread takes them.
    #[cfg(test)]
    let avx512 = crate::kernels::stream::avx512_enabled();
    let piece = |c: usize| {
        #[cfg(test)]
        crate::kernels::stream::set_avx512_enabled(avx512);
        let base = &base;
        let start = c * chunk;
        let len = chunk.min(n - start);
        // SAFETY: `start + len <= n`, and each executor calls each `c < n.div_ceil(chunk)`
        // once, so the ranges do not overlap; `out` is borrowed mutably for the whole loop,
        // so nothing else reads it.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), len) };
        f(start, piece)
    };
    run_pieces(n.div_ceil(chunk), split, &piece);
}

/// `f(c)` for each piece `c` of `0..count` on the executor `split` names. Not generic: the
/// executors' code is compiled once, not once per kernel (`for_each_chunk` is instantiated
/// for each of them).
fn run_pieces(count: usize, split: Split, f: &(dyn Fn(usize) + Sync)) {
    match split {
        Split::Pool => pieces(count, f),
        Split::Pair => match Pair::get() {
            Some(pair) => pair.run(count, f),
            None => (0..count).for_each(f),
        },
    }
}

/// `f(c)` for each piece `c` of `0..count`, in parallel: the only place rayon's machinery is
/// instantiated for the kernels.
fn pieces(count: usize, f: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    (0..count).into_par_iter().for_each(f);
}

/// A fused pass whose inputs and output take at least this many bytes together runs on two
/// threads, the pair or the rayon pool (`ops::fused::zip_chunks` chooses). Called from Python on this project's machine,
/// against one thread: float32 `maximum` over 15,000 elements (180 KB) 0.8 as fast, over 22,000
/// (264 KB) 1.13 times, over 100,000 (1.2 MB) 1.5 times; int8 `add` over 45,000 (135 KB) 0.9,
/// over 90,000 (270 KB) 1.1 times, over 150,000 1.4 times (median of 4 placements of the arrays).
pub(crate) const PAIR_MIN_BYTES: usize = 256 << 10;

/// How long the helper spins for the next pass after finishing one before it sleeps: long
/// enough to span the Python and NumPy work between the calls of a loop, short enough that an
/// idle program gives its core back at once. A pass posted while it sleeps wakes it (one
/// futex call, about 1 µs) and the caller starts alone.
pub(crate) const SPIN: Duration = Duration::from_millis(1);

/// A pass posted to the helper: pieces `0..count`, the caller taking them from the front and the
/// helper from the back, and whether the helper is done with it.
struct Job<'a> {
    /// The next piece from the front (low 32 bits) and one past the last piece left
    /// (high 32 bits); a claim moves one end, and the pass is shared out when they meet.
    ends: AtomicU64,
    /// Set (release) by the helper when it has claimed its last piece and finished it: after
    /// that it never touches the job again.
    done: AtomicBool,
    /// Whether a piece panicked on the helper (the caller panics in turn).
    panicked: AtomicBool,
    f: &'a (dyn Fn(usize) + Sync),
}

impl Job<'_> {
    /// The next piece from the front (`back == false`) or the back, if any is left.
    fn claim(&self, back: bool) -> Option<usize> {
        let mut v = self.ends.load(Ordering::Relaxed);
        loop {
            let (front, end) = (v as u32, (v >> 32) as u32);
            if front >= end {
                return None;
            }
            let (next, piece) = if back {
                (v - (1 << 32), end - 1)
            } else {
                (v + 1, front)
            };
            match self
                .ends
                .compare_exchange_weak(v, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Some(piece as usize),
                Err(now) => v = now,
            }
        }
    }
}

/// The helper thread and the one slot through which a caller posts it a pass.
struct Pair {
    /// The posted pass, null when none: the helper takes it by swapping in null, the caller
    /// withdraws it the same way; whoever swaps it out decides who may touch it.
    slot: AtomicPtr<Job<'static>>,
    /// Whether the helper is asleep (or about to be): a caller that posts a pass wakes it.
    sleeping: AtomicBool,
    thread: std::thread::Thread,
}

impl Pair {
    /// The process's pair, started on first use; `None` when the helper thread cannot be
    /// spawned (the caller then runs every piece).
    fn get() -> Option<&'static Pair> {
        static PAIR: std::sync::OnceLock<Option<&'static Pair>> = std::sync::OnceLock::new();
        *PAIR.get_or_init(|| {
            // The helper needs the `Pair` and the `Pair` its thread: the helper waits for the
            // leaked `Pair` on a channel before its first look at the slot.
            let (tx, rx) = std::sync::mpsc::channel::<&'static Pair>();
            let handle = std::thread::Builder::new()
                .name("typejoin-pair".into())
                .spawn(move || {
                    if let Ok(pair) = rx.recv() {
                        pair.serve()
                    }
                })
                .ok()?;
            let pair: &'static Pair = Box::leak(Box::new(Pair {
                slot: AtomicPtr::new(std::ptr::null_mut()),
                sleeping: AtomicBool::new(false),
                thread: handle.thread().clone(),
            }));
            tx.send(pair).ok()?;
            Some(pair)
        })
    }

    /// `f(c)` for each `c` in `0..count`, each exactly once, on this thread and the helper;
    /// returns when every piece is done (and the helper no longer holds `f`).
    fn run(&self, count: usize, f: &(dyn Fn(usize) + Sync)) {
        let Ok(count32) = u32::try_from(count) else {
            return (0..count).for_each(f);
        };
        let job = Job {
            ends: AtomicU64::new(u64::from(count32) << 32),
            done: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            f,
        };
        let posted = (&raw const job).cast_mut().cast::<Job<'static>>();
        // Another thread's pass in the slot: this one runs alone.
        if self
            .slot
            .compare_exchange(
                std::ptr::null_mut(),
                posted,
                Ordering::SeqCst,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return (0..count).for_each(f);
        }
        if self.sleeping.swap(false, Ordering::SeqCst) {
            self.thread.unpark();
        }
        /// Withdraws the pass, or waits for the helper to finish with it, even when a piece on
        /// this thread panics: `job` lives on this stack frame.
        struct Withdraw<'p, 'j>(&'p Pair, *mut Job<'static>, &'j Job<'j>);
        impl Drop for Withdraw<'_, '_> {
            fn drop(&mut self) {
                let taken = self
                    .0
                    .slot
                    .compare_exchange(
                        self.1,
                        std::ptr::null_mut(),
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    )
                    .is_err();
                if taken {
                    while !self.2.done.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        let withdraw = Withdraw(self, posted, &job);
        while let Some(c) = job.claim(false) {
            f(c);
        }
        drop(withdraw);
        if job.panicked.load(Ordering::Relaxed) {
            panic!("a kernel piece panicked on the helper thread");
        }
    }

    /// The helper's loop: take a posted pass, claim pieces from its back until the ends meet,
    /// mark it done; spin for [`SPIN`] after each, then sleep until a caller wakes it.
    fn serve(&self) -> ! {
        loop {
            let idle = Instant::now();
            let mut spins = 0u32;
            loop {
                let p = self.slot.load(Ordering::Acquire);
                if !p.is_null()
                    && self
                        .slot
                        .compare_exchange(
                            p,
                            std::ptr::null_mut(),
                            Ordering::SeqCst,
                            Ordering::Relaxed,
                        )
                        .is_ok()
                {
                    // SAFETY: the caller that posted `p` waits, before its frame (and the
                    // `Job`) goes, until `done` is set, because its withdrawal failed: this
                    // thread swapped the pointer out first.
                    let job = unsafe { &*p };
                    self.work(job);
                    break;
                }
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(256) && idle.elapsed() >= SPIN {
                    self.sleeping.store(true, Ordering::SeqCst);
                    // A pass posted before the flag was seen: take it instead of sleeping.
                    while self.sleeping.load(Ordering::SeqCst)
                        && self.slot.load(Ordering::SeqCst).is_null()
                    {
                        std::thread::park();
                    }
                    self.sleeping.store(false, Ordering::SeqCst);
                    break;
                }
                std::hint::spin_loop();
            }
        }
    }

    /// The helper's share of `job`; sets `done` last.
    fn work(&self, job: &Job<'_>) {
        while let Some(c) = job.claim(true) {
            let f = job.f;
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(c))).is_err() {
                job.panicked.store(true, Ordering::Relaxed);
                break;
            }
        }
        job.done.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_written_once_by_the_piece_that_covers_it() {
        for (n, chunk) in [(0, 4), (1, 4), (10, 4), (12, 4), (10_000, 333), (5, 0)] {
            let mut out = vec![0usize; n];
            for_each_chunk(&mut out, chunk, Split::Pool, |start, piece| {
                for (k, o) in piece.iter_mut().enumerate() {
                    *o += start + k + 1;
                }
            });
            assert_eq!(out, (1..=n).collect::<Vec<_>>(), "n = {n}, chunk = {chunk}");
        }
    }

    #[test]
    fn the_pair_runs_every_piece_once_and_the_helper_takes_a_share() {
        for (n, chunk) in [(0, 4), (1, 4), (10, 4), (12, 4), (10_000, 333), (5, 0)] {
            let mut out = vec![0usize; n];
            for_each_chunk(&mut out, chunk, Split::Pair, |start, piece| {
                for (k, o) in piece.iter_mut().enumerate() {
                    *o += start + k + 1;
                }
            });
            assert_eq!(out, (1..=n).collect::<Vec<_>>(), "n = {n}, chunk = {chunk}");
        }
        // Pieces slow enough that the helper, woken or spinning, arrives before the caller
        // has finished them all.
        let caller = std::thread::current().id();
        let mut out = vec![None; 40];
        for_each_chunk(&mut out, 1, Split::Pair, |_, piece| {
            std::thread::sleep(Duration::from_millis(2));
            piece[0] = Some(std::thread::current().id());
        });
        let helper = out.iter().flatten().filter(|&&t| t != caller).count();
        assert!(out.iter().all(Option::is_some));
        assert!(
            helper > 0 && helper < 40,
            "the helper ran {helper} of 40 pieces"
        );
    }

    #[test]
    fn pair_callers_on_several_threads_each_get_their_own_pieces_back() {
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || {
                    for round in 0..200 {
                        let n = 1000 + 37 * t + round;
                        let mut out = vec![0usize; n];
                        for_each_chunk(&mut out, 64, Split::Pair, |start, piece| {
                            for (k, o) in piece.iter_mut().enumerate() {
                                *o = (start + k) * t;
                            }
                        });
                        assert!(out.iter().enumerate().all(|(i, &o)| o == i * t));
                    }
                });
            }
        });
    }

    #[test]
    fn a_panic_in_a_pair_piece_reaches_the_caller_and_the_pair_goes_on() {
        let hit = std::panic::catch_unwind(|| {
            let mut out = vec![0u8; 64];
            for_each_chunk(&mut out, 1, Split::Pair, |start, _| {
                std::thread::sleep(Duration::from_micros(200));
                assert!(start != 40 && start != 10, "piece {start}");
            });
        });
        assert!(hit.is_err());
        let mut out = vec![0u8; 100];
        for_each_chunk(&mut out, 7, Split::Pair, |_, piece| piece.fill(1));
        assert_eq!(out, [1; 100]);
    }

    #[test]
    fn pieces_are_chunk_long_but_the_last() {
        let mut out = vec![0u8; 10];
        let lens = std::sync::Mutex::new(Vec::new());
        for_each_chunk(&mut out, 4, Split::Pool, |start, piece| {
            lens.lock().unwrap().push((start, piece.len()))
        });
        let mut lens = lens.into_inner().unwrap();
        lens.sort();
        assert_eq!(lens, [(0, 4), (4, 4), (8, 2)]);
    }
}
