//! The one parallel loop every kernel shares.
//!
//! Each fused kernel is its own monomorphised function (about 1,700 of them: op × operand
//! dtypes × loader × operand shape). Handing each one to rayon's `par_chunks_mut` gave each
//! its own copy of rayon's splitting, job and join machinery: about 10 MiB of the release
//! binary's 23 MiB of code (measured with `cargo bloat`, docs/binary-size.md). Here rayon is
//! instantiated once, over a range of piece indices with a `dyn` callback; the kernel's loop
//! is called through that pointer once per piece (thousands of elements), never per element.

use rayon::prelude::*;

/// Runs `f(start, piece)` over `out` cut into `chunk`-element pieces (the last may be
/// shorter) on the rayon pool. The pieces are disjoint, so each call owns its slice.
pub(crate) fn for_each_chunk<O: Send>(
    out: &mut [O],
    chunk: usize,
    f: impl Fn(usize, &mut [O]) + Sync,
) {
    /// The base of `out`, shared by the pieces: each forms a slice of a range no other covers.
    struct Base<O>(*mut O);
    // SAFETY: the pointer is only turned into slices of disjoint ranges of a `&mut [O]` that
    // outlives the loop, and `O: Send`, so each piece may be written on another thread.
    unsafe impl<O: Send> Sync for Base<O> {}
    let (n, base) = (out.len(), Base(out.as_mut_ptr()));
    let chunk = chunk.max(1);
    pieces(n, chunk, &|start, len| {
        let base = &base;
        // SAFETY: `start + len <= n`, and `pieces` calls each `start` once, with ranges that do
        // not overlap; `out` is borrowed mutably for the whole loop, so nothing else reads it.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), len) };
        f(start, piece)
    });
}

/// `f(start, len)` for each piece of `0..n` in steps of `chunk`, in parallel: the only place
/// rayon's machinery is instantiated for the kernels.
fn pieces(n: usize, chunk: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    (0..n.div_ceil(chunk)).into_par_iter().for_each(|c| {
        let start = c * chunk;
        f(start, chunk.min(n - start))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_written_once_by_the_piece_that_covers_it() {
        for (n, chunk) in [(0, 4), (1, 4), (10, 4), (12, 4), (10_000, 333), (5, 0)] {
            let mut out = vec![0usize; n];
            for_each_chunk(&mut out, chunk, |start, piece| {
                for (k, o) in piece.iter_mut().enumerate() {
                    *o += start + k + 1;
                }
            });
            assert_eq!(out, (1..=n).collect::<Vec<_>>(), "n = {n}, chunk = {chunk}");
        }
    }

    #[test]
    fn pieces_are_chunk_long_but_the_last() {
        let mut out = vec![0u8; 10];
        let lens = std::sync::Mutex::new(Vec::new());
        for_each_chunk(&mut out, 4, |start, piece| {
            lens.lock().unwrap().push((start, piece.len()))
        });
        let mut lens = lens.into_inner().unwrap();
        lens.sort();
        assert_eq!(lens, [(0, 4), (4, 4), (8, 2)]);
    }
}
