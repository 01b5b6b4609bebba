//! An operand ready to load (`Input`: its array, full length or one element to splat) and the
//! loop over the output's chunks, on the rayon pool for large arrays.

use super::lanes::OutChunk;
use super::vocab::{CHUNK, PARALLEL_MIN};
use crate::kernels::array::Array;
use crate::kernels::array::Data;

/// Runs `f(start, chunk)` over the output storage in `CHUNK`s, on the rayon pool for large
/// arrays. Each call gets its own disjoint slice of the storage.
pub(super) fn for_chunks(out: &mut Data, f: impl Fn(usize, OutChunk) + Sync) {
    pub(super) fn split<T: Send>(
        v: &mut [T],
        wrap: fn(&mut [T]) -> OutChunk,
        f: &(impl Fn(usize, OutChunk) + Sync),
    ) {
        if v.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
            crate::kernels::parallel::for_each_chunk(
                v,
                CHUNK,
                crate::kernels::parallel::Split::Pool,
                |start, s| f(start, wrap(s)),
            );
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
        Data::C32(v) => split(v, |s| OutChunk::C32(s), &f),
        Data::C64(v) => split(v, |s| OutChunk::C64(s), &f),
        Data::C128(v) => split(v, |s| OutChunk::C128(s), &f),
    }
}

// ---------------------------------------------------------------------------------------------
// Binary ops

/// An operand ready to load: its array (full length, or one element to splat).
pub(super) struct Input<'a> {
    pub(super) array: std::borrow::Cow<'a, Array>,
    pub(super) splat: bool,
}
