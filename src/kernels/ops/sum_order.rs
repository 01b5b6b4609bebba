//! Float and complex sums in a library's order (`sum_order`), each step rounded as the library
//! rounds it: NumPy's `pairwise_sum` (numpy/_core/src/umath/loops_utils.h.src), PyTorch's
//! `cascade_sum` (aten/src/ATen/native/cpu/SumKernel.cpp), Eigen's tensor reductions
//! (unsupported/Eigen/CXX11/src/Tensor/TensorReduction.h, as TensorFlow runs them), XLA's CPU
//! reductions after its `TreeReductionRewriter` (xla/hlo/transforms/simplifiers). Both take the operand already in the
//! accumulator dtype as `[outer, len, inner]` (the summed axis in the middle) and give each
//! result element's bits, or `None` for a dtype they do not sum in floats.

use super::complex::complex_at;
use super::lanes::{raw, value_of};
use crate::kernels::array::{Array, Data};
use crate::kernels::parallel::{Split, for_each_chunk, split_for};
use crate::numeric::dtype::DType;
use crate::numeric::format::{FloatFormat, Value};
use std::ops::Add;

/// The float types NumPy's loops add in, and their bits.
trait Float: Copy + Add<Output = Self> + Send {
    type Bits: Copy + Sync;
    const NEG_ZERO: Self;
    fn from_bits(b: Self::Bits) -> Self;
}
impl Float for f32 {
    type Bits = u32;
    const NEG_ZERO: f32 = -0.0;
    #[inline(always)]
    fn from_bits(b: u32) -> f32 {
        f32::from_bits(b)
    }
}
impl Float for f64 {
    type Bits = u64;
    const NEG_ZERO: f64 = -0.0;
    #[inline(always)]
    fn from_bits(b: u64) -> f64 {
        f64::from_bits(b)
    }
}

/// Lines at least this long sum their parts on two threads or more: each part is summed as it
/// would be on one, and the parts added as NumPy adds them, so the result is the same.
const PARALLEL_PAIRWISE: usize = 1 << 17;

/// NumPy's `pairwise_sum` of one line (given as its bits): fewer than 8 values one by one from
/// −0.0, up to 128 in 8 interleaved accumulators, more split in two at half rounded down to a
/// multiple of 8.
fn pairwise<T: Float>(v: &[T::Bits]) -> T {
    split_pairwise::<T>(v, true)
}

/// [`pairwise`], the halves of a long line on other threads where `parallel`: with two
/// threads, the four quarters of NumPy's first two splits on this thread and the spinning
/// helper (`parallel::Split::Pair`, which the elementwise passes use on such a machine; on
/// rayon's pool, a float32 sum of 1e6 elements just after a pass on the pair measured
/// 160–240 µs against 120–140 µs otherwise, as the pool's workers and the helper met on the
/// two cores); with more, the halves by `rayon::join`, recursively.
fn split_pairwise<T: Float>(v: &[T::Bits], parallel: bool) -> T {
    let n = v.len();
    let at = |j: usize| T::from_bits(v[j]);
    if n < 8 {
        return v.iter().fold(T::NEG_ZERO, |s, &x| s + T::from_bits(x));
    }
    if n <= 128 {
        let mut r: [T; 8] = std::array::from_fn(at);
        let whole = n - n % 8;
        for block in v[8..whole].chunks_exact(8) {
            for (r, &x) in r.iter_mut().zip(block) {
                *r = *r + T::from_bits(x);
            }
        }
        let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return v[whole..].iter().fold(res, |s, &x| s + T::from_bits(x));
    }
    // NumPy's split: at half, rounded down to a multiple of 8.
    fn halves<B>(w: &[B]) -> (&[B], &[B]) {
        w.split_at(w.len() / 2 - (w.len() / 2) % 8)
    }
    let (lo, hi) = halves(v);
    if parallel && n >= PARALLEL_PAIRWISE {
        // A line this long counts as large: the pool when there are more than two threads.
        match split_for(rayon::current_num_threads(), true, false) {
            None => {}
            Some(Split::Pair) => {
                // Each half has more than 128 elements, so NumPy splits it in turn.
                let ((q0, q1), (q2, q3)) = (halves(lo), halves(hi));
                let quarters = [q0, q1, q2, q3];
                let mut sums = [T::NEG_ZERO; 4];
                for_each_chunk(&mut sums, 1, Split::Pair, |k, s| {
                    s[0] = split_pairwise::<T>(quarters[k], false)
                });
                return (sums[0] + sums[1]) + (sums[2] + sums[3]);
            }
            Some(Split::Pool) => {
                let (a, b) = rayon::join(
                    || split_pairwise::<T>(lo, true),
                    || split_pairwise::<T>(hi, true),
                );
                return a + b;
            }
        }
    }
    split_pairwise::<T>(lo, parallel) + split_pairwise::<T>(hi, parallel)
}

/// NumPy's complex `pairwise_sum` (counting both parts, as NumPy does): fewer than 4
/// elements one by one from −0.0, up to 64 in 4 interleaved accumulators a part, more split
/// at the element NumPy's float count halves at.
fn pairwise_complex<T: Float>(re: &[T], im: &[T]) -> (T, T) {
    let m = re.len();
    if m < 4 {
        let fold = |v: &[T]| v.iter().fold(T::NEG_ZERO, |s, &x| s + x);
        return (fold(re), fold(im));
    }
    if m <= 64 {
        let whole = m - m % 4;
        let part = |v: &[T]| {
            let mut r: [T; 4] = std::array::from_fn(|j| v[j]);
            for block in v[4..whole].chunks_exact(4) {
                for (r, &x) in r.iter_mut().zip(block) {
                    *r = *r + x;
                }
            }
            let res = (r[0] + r[1]) + (r[2] + r[3]);
            v[whole..].iter().fold(res, |s, &x| s + x)
        };
        return (part(re), part(im));
    }
    let half = (m - m % 8) / 2;
    let (r1, i1) = pairwise_complex(&re[..half], &im[..half]);
    let (r2, i2) = pairwise_complex(&re[half..], &im[half..]);
    (r1 + r2, i1 + i2)
}

/// `x` in format `f`, rounded to nearest; a NaN the positive quiet one, as the exact sum's.
fn encode(f: &FloatFormat, x: f64) -> u64 {
    f.encode(if x.is_nan() {
        Value::Nan { neg: false }
    } else {
        Value::from_f64(x)
    })
}

/// A float32 sum rounded to an ml_dtypes or float16 `d`, read back as float32 (exact).
fn round_to(d: DType, x: f32) -> f32 {
    let f = d.float_format().expect("a small float");
    value_of(d, encode(&f, x as f64)).to_f64() as f32
}

/// The sums of `a` (already in the accumulator dtype, shape `[outer, len, inner]`) in
/// NumPy's order; `None` for a dtype NumPy does not sum in floats.
pub(super) fn numpy(a: &Array, outer: usize, len: usize, inner: usize) -> Option<Vec<[u64; 2]>> {
    let d = a.dtype;
    let at = |o: usize, k: usize, i: usize| (o * len + k) * inner + i;
    // Adjacent elements: NumPy's iterator drops the dimensions of size 1 and coalesces the
    // rest, so the reduction's inner loop is the line itself.
    let lines = inner == 1;
    let mut out = Vec::with_capacity(outer * inner);
    match d {
        DType::Float64 | DType::Float32 | DType::FLOAT16 => {
            let f = d.float_format().expect("float");
            let nan = encode(&f, f64::NAN);
            let wide = |j: usize| match (d, &a.data) {
                (DType::Float64, Data::U64(b)) => f64::from_bits(b[j]),
                (DType::Float32, Data::U32(b)) => f32::from_bits(b[j]) as f64,
                _ => value_of(d, raw(&a.data, j)).to_f64(),
            };
            // A line of float32 or float64 read straight from its bits (one pass that
            // vectorises; `wide` decodes an element at a time).
            let line = |o: usize| o * len..(o + 1) * len;
            for o in 0..outer {
                for i in 0..inner {
                    let s: f64 = match (d, lines, &a.data) {
                        (DType::Float64, true, Data::U64(b)) => 0.0 + pairwise::<f64>(&b[line(o)]),
                        (DType::Float32, true, Data::U32(b)) => {
                            (0.0 + pairwise::<f32>(&b[line(o)])) as f64
                        }
                        (DType::Float64, true, _) => {
                            let v: Vec<u64> =
                                (0..len).map(|k| wide(at(o, k, i)).to_bits()).collect();
                            0.0 + pairwise::<f64>(&v)
                        }
                        (DType::Float64, false, _) => {
                            (0..len).fold(0.0, |s, k| s + wide(at(o, k, i)))
                        }
                        // float16's loop sums in float32 and rounds once.
                        (_, true, _) => {
                            let v: Vec<u32> = (0..len)
                                .map(|k| (wide(at(o, k, i)) as f32).to_bits())
                                .collect();
                            (0.0 + pairwise::<f32>(&v)) as f64
                        }
                        (DType::Float32, false, _) => {
                            (0..len).fold(0.0f32, |s, k| s + wide(at(o, k, i)) as f32) as f64
                        }
                        (_, false, _) => (0..len)
                            .fold(0.0f32, |s, k| round_to(d, s + wide(at(o, k, i)) as f32))
                            as f64,
                    };
                    // float32's and float64's own bits (a float32 sum is exact in f64), not
                    // the codec's rounding, whose cost per line dominates short lines.
                    let bits = match d {
                        _ if s.is_nan() => nan,
                        DType::Float64 => s.to_bits(),
                        DType::Float32 => u64::from((s as f32).to_bits()),
                        _ => encode(&f, s),
                    };
                    out.push([bits, 0]);
                }
            }
        }
        DType::Complex64 | DType::Complex128 => {
            let f = d.float_format().expect("parts");
            let c64 = d == DType::Complex64;
            for o in 0..outer {
                for i in 0..inner {
                    let parts = (0..len).map(|k| complex_at(a, at(o, k, i), d));
                    let (re, im) = match (c64, lines) {
                        (false, true) => {
                            let (re, im): (Vec<f64>, Vec<f64>) = parts.unzip();
                            let (r, i) = pairwise_complex(&re, &im);
                            (0.0 + r, 0.0 + i)
                        }
                        (false, false) => parts.fold((0.0, 0.0), |s, p| (s.0 + p.0, s.1 + p.1)),
                        (true, true) => {
                            let (re, im): (Vec<f32>, Vec<f32>) =
                                parts.map(|p| (p.0 as f32, p.1 as f32)).unzip();
                            let (r, i) = pairwise_complex(&re, &im);
                            ((0.0 + r) as f64, (0.0 + i) as f64)
                        }
                        (true, false) => {
                            let (r, i) = parts.fold((0.0f32, 0.0f32), |s, p| {
                                (s.0 + p.0 as f32, s.1 + p.1 as f32)
                            });
                            (r as f64, i as f64)
                        }
                    };
                    out.push([encode(&f, re), encode(&f, im)]);
                }
            }
        }
        // ml_dtypes' binary loop: float32 sums, each rounded to the dtype.
        DType::Small(_) => {
            let f = d.float_format().expect("float");
            for o in 0..outer {
                for i in 0..inner {
                    let s = (0..len).fold(0.0f32, |s, k| {
                        round_to(
                            d,
                            s + value_of(d, raw(&a.data, at(o, k, i))).to_f64() as f32,
                        )
                    });
                    out.push([encode(&f, s as f64), 0]);
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

/// PyTorch's accumulators: a float, a complex number as its two parts, or the lanes of a
/// 32-byte vector of either (`Vectorized<acc_t>`: the CPU sum kernel has no AVX-512 build).
trait Acc: Copy {
    /// Bytes of one accumulator and how many real parts it holds (XLA's vector widths).
    const BYTES: usize;
    const PARTS: usize;
    fn zero() -> Self;
    fn add(self, other: Self) -> Self;
}
impl Acc for f32 {
    const BYTES: usize = 4;
    const PARTS: usize = 1;
    fn zero() -> f32 {
        0.0
    }
    fn add(self, o: f32) -> f32 {
        self + o
    }
}
impl Acc for f64 {
    const BYTES: usize = 8;
    const PARTS: usize = 1;
    fn zero() -> f64 {
        0.0
    }
    fn add(self, o: f64) -> f64 {
        self + o
    }
}
impl<T: Acc> Acc for (T, T) {
    const BYTES: usize = 2 * T::BYTES;
    const PARTS: usize = 2 * T::PARTS;
    fn zero() -> Self {
        (T::zero(), T::zero())
    }
    fn add(self, o: Self) -> Self {
        (self.0.add(o.0), self.1.add(o.1))
    }
}
impl<T: Acc, const L: usize> Acc for [T; L] {
    const BYTES: usize = L * T::BYTES;
    const PARTS: usize = L * T::PARTS;
    fn zero() -> Self {
        [T::zero(); L]
    }
    fn add(self, o: Self) -> Self {
        std::array::from_fn(|k| self[k].add(o[k]))
    }
}

/// `multi_row_sum`: `N` sums at once of `size` rows (`load(i, k)`: row `i`'s `k`-th value), in
/// chunks of `2^max(4, ⌈log2 size⌉ / 4)` rows, the chunks' sums summed in chunks on 4 levels.
fn multi_row_sum<T: Acc, const N: usize>(size: usize, load: impl Fn(usize, usize) -> T) -> [T; N] {
    const LEVELS: usize = 4;
    let ceil_log2 = if size <= 2 {
        1
    } else {
        usize::BITS - (size - 1).leading_zeros()
    };
    let power = (ceil_log2 as usize / LEVELS).max(4);
    let (step, mask) = (1usize << power, (1usize << power) - 1);
    let mut acc = [[T::zero(); N]; LEVELS];
    let mut i = 0;
    while i + step <= size {
        for _ in 0..step {
            for (k, a) in acc[0].iter_mut().enumerate() {
                *a = a.add(load(i, k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            let (lower, upper) = acc.split_at_mut(j);
            for (a, below) in upper[0].iter_mut().zip(lower[j - 1].iter_mut()) {
                *a = a.add(*below);
                *below = T::zero();
            }
            if i & (mask << (j * power)) != 0 {
                break;
            }
        }
    }
    for i in i..size {
        for (k, a) in acc[0].iter_mut().enumerate() {
            *a = a.add(load(i, k));
        }
    }
    let mut sums = acc[0];
    for level in &acc[1..] {
        for (s, &a) in sums.iter_mut().zip(level) {
            *s = s.add(a);
        }
    }
    sums
}

/// `row_sum`: the row as 4 interleaved sums (`multi_row_sum` of `size / 4` rows of 4), the rest
/// added to the first, then the others to it in order.
fn row_sum<T: Acc>(size: usize, load: impl Fn(usize) -> T) -> T {
    let rows = size / 4;
    let mut p: [T; 4] = multi_row_sum(rows, |i, k| load(i * 4 + k));
    for i in rows * 4..size {
        p[0] = p[0].add(load(i));
    }
    p[1..].iter().fold(p[0], |s, &x| s.add(x))
}

/// `cascade_sum` of `v` (each element in the accumulator type), `[outer, len, inner]`, as
/// TensorIterator hands it the loops: `vec` elements of the source dtype to a 32-byte vector,
/// `L` accumulator lanes (fewer for float16 and bfloat16, whose vector of 16 becomes 8 float32
/// lanes `v[i] + v[i + 8]`).
fn cascade<T: Acc, const L: usize>(
    v: &[T],
    (outer, len, inner): (usize, usize, usize),
    vec: usize,
) -> Vec<T> {
    let lanes = |at: &dyn Fn(usize) -> T| -> [T; L] {
        std::array::from_fn(|k| {
            if vec == L {
                at(k)
            } else {
                at(k).add(at(k + L))
            }
        })
    };
    let mut out = vec![T::zero(); outer * inner];
    for o in 0..outer {
        let base = o * len * inner;
        if len <= 1 || inner == 1 {
            // The summed elements are adjacent: `vectorized_inner_sum` from a whole vector on,
            // else `row_sum` (a copy where only one element is summed).
            let row = &v[base..base + len];
            out[o * inner] = if len >= vec && inner == 1 {
                let vectors = len / vec;
                let acc: [T; L] = row_sum(vectors, |i| lanes(&|k| row[i * vec + k]));
                let tail = row[vectors * vec..]
                    .iter()
                    .fold(T::zero(), |s, &x| s.add(x));
                acc.iter().fold(tail, |s, &x| s.add(x))
            } else if inner == 1 {
                row_sum(len, |i| row[i])
            } else {
                T::zero()
            };
            if len == 1 {
                for i in 0..inner {
                    out[o * inner + i] = v[base + i];
                }
            }
            continue;
        }
        let at = |i: usize, j: usize| v[base + i * inner + j];
        let mut j = 0;
        if inner >= vec {
            // `vectorized_outer_sum`: 4 vectors of columns at once, then one, then each column.
            while j + 4 * L <= inner {
                let sums: [[T; L]; 4] =
                    multi_row_sum(len, |i, k| std::array::from_fn(|l| at(i, j + k * L + l)));
                for (k, s) in sums.iter().enumerate() {
                    out[o * inner + j + k * L..][..L].copy_from_slice(s);
                }
                j += 4 * L;
            }
            while j + L <= inner {
                let s: [T; L] = row_sum(len, |i| std::array::from_fn(|l| at(i, j + l)));
                out[o * inner + j..][..L].copy_from_slice(&s);
                j += L;
            }
        } else {
            // `scalar_outer_sum`: 4 columns at once.
            while j + 4 <= inner {
                let s: [T; 4] = multi_row_sum(len, |i, k| at(i, j + k));
                out[o * inner + j..][..4].copy_from_slice(&s);
                j += 4;
            }
        }
        for j in j..inner {
            out[o * inner + j] = row_sum(len, |i| at(i, j));
        }
    }
    out
}

/// The sums of `a` in PyTorch 2's CPU order (`SumOrder::Torch`), each stored into a result of
/// zeros as `0 + sum` in the dtype; `None` for a dtype PyTorch does not sum in floats.
pub(super) fn torch(a: &Array, outer: usize, len: usize, inner: usize) -> Option<Vec<[u64; 2]>> {
    let d = a.dtype;
    let f = d.float_format()?;
    let n = outer * len * inner;
    let real = |j: usize| value_of(d, raw(&a.data, j)).to_f64();
    let dims = (outer, len, inner);
    let bits: Vec<[u64; 2]> = match d {
        DType::Float64 => {
            let v: Vec<f64> = (0..n).map(real).collect();
            let s = cascade::<f64, 4>(&v, dims, 4);
            s.iter().map(|&x| [encode(&f, 0.0 + x), 0]).collect()
        }
        DType::Float32 | DType::FLOAT16 | DType::BFLOAT16 => {
            let v: Vec<f32> = (0..n).map(|j| real(j) as f32).collect();
            let s = if d == DType::Float32 {
                cascade::<f32, 8>(&v, dims, 8)
            } else {
                cascade::<f32, 8>(&v, dims, 16)
            };
            s.iter()
                .map(|&x| [encode(&f, (0.0 + x) as f64), 0])
                .collect()
        }
        DType::Complex64 => {
            let v: Vec<(f32, f32)> = (0..n)
                .map(|j| {
                    let (re, im) = complex_at(a, j, d);
                    (re as f32, im as f32)
                })
                .collect();
            let s = cascade::<(f32, f32), 4>(&v, dims, 4);
            s.iter()
                .map(|&(re, im)| [encode(&f, (0.0 + re) as f64), encode(&f, (0.0 + im) as f64)])
                .collect()
        }
        DType::Complex128 => {
            let v: Vec<(f64, f64)> = (0..n).map(|j| complex_at(a, j, d)).collect();
            let s = cascade::<(f64, f64), 2>(&v, dims, 2);
            s.iter()
                .map(|&(re, im)| [encode(&f, 0.0 + re), encode(&f, 0.0 + im)])
                .collect()
        }
        _ => return None,
    };
    Some(bits)
}

/// A float32 or float64 step of a CPU that sets the DAZ and FTZ bits when `FLUSH`
/// (`Subnormals::Flush`): a subnormal operand reads as a zero of its sign and a subnormal
/// result is written as one.
#[derive(Clone, Copy)]
struct Step<T, const FLUSH: bool>(T);

macro_rules! step {
    ($t:ty) => {
        impl<const FLUSH: bool> Step<$t, FLUSH> {
            fn of(x: $t) -> Self {
                Step(if FLUSH && x.is_subnormal() {
                    (0.0 as $t).copysign(x)
                } else {
                    x
                })
            }
        }
        impl<const FLUSH: bool> Acc for Step<$t, FLUSH> {
            const BYTES: usize = size_of::<$t>();
            const PARTS: usize = 1;
            fn zero() -> Self {
                Step(0.0)
            }
            fn add(self, o: Self) -> Self {
                Self::of(self.0 + o.0)
            }
        }
    };
}
step!(f32);
step!(f64);

/// An `Eigen::half` accumulator, held as its float32 value: each sum is computed in float32 and
/// rounded to float16 (the AVX `padd` of `Packet8h` and the scalar `operator+` alike). Halves
/// convert to normal float32s, so no step meets the flush bits.
#[derive(Clone, Copy)]
struct Half(f32);

impl Acc for Half {
    const BYTES: usize = 4; // its float32 value
    const PARTS: usize = 1;
    fn zero() -> Half {
        Half(0.0)
    }
    fn add(self, o: Half) -> Half {
        Half(round_to(DType::FLOAT16, self.0 + o.0))
    }
}

/// Eigen's `predux` of a packet: its halves added lane by lane until one lane is left (AVX's
/// `Packet8f`: lanes `i + 4`, then `i + 2`, then `i + 1`).
fn tree<T: Acc, const P: usize>(p: [T; P]) -> T {
    let mut v = p.to_vec();
    while v.len() > 1 {
        let h = v.len() / 2;
        v = (0..h).map(|i| v[i].add(v[i + h])).collect();
    }
    v[0]
}

/// `predux` of a `Packet8h`: the lanes in float32, rounded once to float16.
fn half_tree(p: [Half; 8]) -> Half {
    let t = tree(p.map(|h| Step::<f32, false>(h.0)));
    Half(round_to(DType::FLOAT16, t.0))
}

/// Eigen's `InnerMostDimReducer` over one line of `P`-lane packets: lines longer than `P · leaf`
/// split in two at a packet boundary past half, each half reduced alone and added to zero in
/// order; shorter ones 4 packet accumulators over whole blocks of `4P` (added as `((p0 + p1) +
/// p2) + p3`), then the remaining whole packets into the first, the tail one by one from zero,
/// and the tail plus the packet's `predux`.
fn eigen_line<T: Acc, const P: usize>(v: &[T], leaf: usize, predux: fn([T; P]) -> T) -> T {
    let n = v.len();
    if n > P * leaf {
        let left = (P * n.div_ceil(2).div_ceil(P)).min(n);
        let acc = T::zero().add(eigen_line(&v[..left], leaf, predux));
        return if left < n {
            acc.add(eigen_line(&v[left..], leaf, predux))
        } else {
            acc
        };
    }
    let packet = |j: usize| -> [T; P] { std::array::from_fn(|k| v[j + k]) };
    let mut p = <[T; P]>::zero();
    let mut start = 0;
    if n >= 4 * P {
        let whole = n / (4 * P) * (4 * P);
        let mut acc = [<[T; P]>::zero(); 4];
        for j in (0..whole).step_by(4 * P) {
            for (a, acc) in acc.iter_mut().enumerate() {
                *acc = acc.add(packet(j + a * P));
            }
        }
        p = acc[0].add(acc[1]).add(acc[2]).add(acc[3]);
        start = whole;
    }
    let vectorised = n / P * P;
    for j in (start..vectorised).step_by(P) {
        p = p.add(packet(j));
    }
    let tail = v[vectorised..].iter().fold(T::zero(), |s, &x| s.add(x));
    tail.add(predux(p))
}

/// Eigen's sums of `v` (each element in the accumulator type) as `[outer, len, inner]`: a line
/// of adjacent elements by [`eigen_line`]; along any other axis each result element from zero
/// row after row, save where it lies in a whole output packet of `P` within one row of the
/// output's last dimension and `len ≥ 16` (`InnerMostDimPreserver`): then 4 accumulators over
/// the rows by `j mod 4`, added in order, and the last `len mod 4` rows onto them. A single
fn eigen<T: Acc, const P: usize>(
    v: &[T],
    (outer, len, inner): (usize, usize, usize),
    leaf: usize,
    predux: fn([T; P]) -> T,
) -> Vec<T> {
    let outputs = outer * inner;
    let packets_end = outputs - outputs % P;
    let mut out = Vec::with_capacity(outputs);
    for o in 0..outer {
        let base = o * len * inner;
        for i in 0..inner {
            if inner == 1 {
                out.push(eigen_line(&v[base..base + len], leaf, predux));
                continue;
            }
            let row = |k: usize| v[base + k * inner + i];
            let e = o * inner + i;
            let first = e - e % P;
            let in_packet = first < packets_end && first % inner + P <= inner;
            let s = if in_packet && len >= 16 {
                let whole = len / 4 * 4;
                let mut acc = [T::zero(); 4];
                for k in 0..whole {
                    acc[k % 4] = acc[k % 4].add(row(k));
                }
                let s = acc[0].add(acc[1]).add(acc[2]).add(acc[3]);
                (whole..len).fold(s, |s, k| s.add(row(k)))
            } else {
                (0..len).fold(T::zero(), |s, k| s.add(row(k)))
            };
            out.push(s);
        }
    }
    out
}

/// The sums of `a` in TensorFlow's CPU order (`SumOrder::Eigen`: Eigen's reductions on one
/// thread, AVX packets of 8 float32, 4 float64 or complex64, 2 complex128 and 8 float16;
/// bfloat16 summed as float32 and rounded once), under the DAZ and FTZ bits when `flush`;
/// `None` for a dtype TensorFlow does not sum in floats.
pub(super) fn eigen_sums(
    a: &Array,
    outer: usize,
    len: usize,
    inner: usize,
    flush: bool,
) -> Option<Vec<[u64; 2]>> {
    // A single summed element is copied, subnormal or −0.0 as it is: TensorFlow drops a
    // dimension of size 1 before it reduces, and reduces nothing then.
    if len == 1 && a.dtype.float_format().is_some() {
        return Some(a.bits());
    }
    let order = Eigen((outer, len, inner));
    if flush {
        in_floats::<_, true>(a, &order)
    } else {
        in_floats::<_, false>(a, &order)
    }
}

/// A library's order of summing, over any accumulator: the dtype dispatch of [`in_floats`]
/// is the orders' one.
trait Order {
    /// float16 sums as `Eigen::half` does, each step rounded to float16, rather than in
    /// float32 rounded once.
    const HALF_STEPS: bool;
    /// The sums of `v`, each element in the accumulator type, with `P`-lane packets of
    /// `predux` where the order has packets and lines split past `P · leaf` elements.
    fn sums<T: Acc, const P: usize>(&self, v: &[T], leaf: usize, predux: fn([T; P]) -> T)
    -> Vec<T>;
}

/// Eigen's order over `[outer, len, inner]` ([`eigen`]).
struct Eigen((usize, usize, usize));

impl Order for Eigen {
    const HALF_STEPS: bool = true;
    fn sums<T: Acc, const P: usize>(
        &self,
        v: &[T],
        leaf: usize,
        predux: fn([T; P]) -> T,
    ) -> Vec<T> {
        eigen(v, self.0, leaf, predux)
    }
}

/// The sums of `a` (in its accumulator dtype) in `order`, each element read as the order's
/// accumulator (under the DAZ and FTZ bits when `FLUSH`) and each sum rounded into the dtype:
/// the packets AVX holds (8 float32 or float16, 4 float64 or complex64, 2 complex128),
/// bfloat16 in float32; `None` for a dtype without float sums.
fn in_floats<O: Order, const FLUSH: bool>(a: &Array, order: &O) -> Option<Vec<[u64; 2]>> {
    let d = a.dtype;
    let f = d.float_format()?;
    let n = a.len();
    let real = |j: usize| value_of(d, raw(&a.data, j)).to_f64();
    const LEAF: usize = 1024;
    let bits = match d {
        DType::Float64 => {
            let v: Vec<Step<f64, FLUSH>> =
                (0..n).map(|j| Step::<f64, FLUSH>::of(real(j))).collect();
            let s = order.sums::<_, 4>(&v, LEAF, tree);
            s.iter().map(|x| [encode(&f, x.0), 0]).collect()
        }
        // `LeafSize<half>` is 200.
        DType::FLOAT16 if O::HALF_STEPS => {
            let v: Vec<Half> = (0..n).map(|j| Half(real(j) as f32)).collect();
            let s = order.sums::<_, 8>(&v, 200, half_tree);
            s.iter().map(|x| [encode(&f, x.0 as f64), 0]).collect()
        }
        DType::Float32 | DType::BFLOAT16 | DType::FLOAT16 => {
            let v: Vec<Step<f32, FLUSH>> = (0..n)
                .map(|j| Step::<f32, FLUSH>::of(real(j) as f32))
                .collect();
            let s = order.sums::<_, 8>(&v, LEAF, tree);
            s.iter().map(|x| [encode(&f, x.0 as f64), 0]).collect()
        }
        DType::Complex64 => {
            let v: Vec<(Step<f32, FLUSH>, Step<f32, FLUSH>)> = (0..n)
                .map(|j| {
                    let (re, im) = complex_at(a, j, d);
                    (
                        Step::<f32, FLUSH>::of(re as f32),
                        Step::<f32, FLUSH>::of(im as f32),
                    )
                })
                .collect();
            let s = order.sums::<_, 4>(&v, LEAF, tree);
            s.iter()
                .map(|(re, im)| [encode(&f, re.0 as f64), encode(&f, im.0 as f64)])
                .collect()
        }
        DType::Complex128 => {
            let v: Vec<(Step<f64, FLUSH>, Step<f64, FLUSH>)> = (0..n)
                .map(|j| {
                    let (re, im) = complex_at(a, j, d);
                    (Step::<f64, FLUSH>::of(re), Step::<f64, FLUSH>::of(im))
                })
                .collect();
            let s = order.sums::<_, 2>(&v, LEAF, tree);
            s.iter()
                .map(|(re, im)| [encode(&f, re.0), encode(&f, im.0)])
                .collect()
        }
        _ => return None,
    };
    Some(bits)
}

/// XLA's `TreeReductionRewriter` window (`reduce_window_size` on CPU).
const XLA_WINDOW: usize = 32;

/// XLA's sum over an array of `dims` (row-major, each element in the accumulator type), every
/// dimension reduced: where every dimension holds at most 32 elements, its loops add them in
/// row-major order from zero; else `TreeReductionRewriter` first sums windows of
/// `min(d, 32)` elements along each dimension (padded `SAME`, the lower half of the padding
/// first), each window in row-major order from zero, and reduces the windows' sums again.
fn xla_reduce<T: Acc>(v: &[T], dims: &[usize]) -> T {
    if dims.iter().all(|&d| d <= XLA_WINDOW) {
        return v.iter().fold(T::zero(), |s, &x| s.add(x));
    }
    let window: Vec<usize> = dims.iter().map(|&d| d.min(XLA_WINDOW)).collect();
    let windows: Vec<usize> = dims
        .iter()
        .zip(&window)
        .map(|(&d, &w)| d.div_ceil(w))
        .collect();
    let low: Vec<usize> = dims
        .iter()
        .zip(&window)
        .zip(&windows)
        .map(|((&d, &w), &k)| (k * w - d) / 2)
        .collect();
    let count: usize = windows.iter().product();
    let mut sums = Vec::with_capacity(count);
    let mut at = vec![0usize; dims.len()];
    for _ in 0..count {
        // The window's elements in row-major order, the padding's zeros skipped.
        let mut s = T::zero();
        let mut k = vec![0usize; dims.len()];
        'elements: loop {
            let mut flat = 0;
            let mut inside = true;
            for d in 0..dims.len() {
                let i = (at[d] * window[d] + k[d]).wrapping_sub(low[d]);
                inside &= i < dims[d];
                flat = flat * dims[d] + i.min(dims[d].saturating_sub(1));
            }
            if inside {
                s = s.add(v[flat]);
            }
            for d in (0..dims.len()).rev() {
                k[d] += 1;
                if k[d] < window[d] {
                    continue 'elements;
                }
                k[d] = 0;
            }
            break;
        }
        sums.push(s);
        for d in (0..dims.len()).rev() {
            at[d] += 1;
            if at[d] < windows[d] {
                break;
            }
            at[d] = 0;
        }
    }
    xla_reduce(&sums, &windows)
}

/// The sums of `a` (already in the accumulator dtype, `[outer, len, inner]`, or every element
/// of `full`'s dimensions) in XLA's CPU order (`SumOrder::Xla`): [`xla_reduce`] over each
/// line, or over the whole array's dimensions of more than one element; under the DAZ and FTZ
/// bits when `flush`. float16 and bfloat16 sum in float32, rounded once (`jnp.sum` upcasts
/// them); a single summed element is copied (XLA drops a dimension of size 1). `None` for a
/// dtype XLA does not sum in floats.
pub(super) fn xla_sums(
    a: &Array,
    (outer, len, inner): (usize, usize, usize),
    full: Option<&[usize]>,
    (cpu, flush): (XlaCpu, bool),
) -> Option<Vec<[u64; 2]>> {
    if len == 1 && a.dtype.float_format().is_some() {
        return Some(a.bits());
    }
    let dims: Vec<usize> = match full {
        Some(shape) => shape.iter().copied().filter(|&d| d != 1).collect(),
        None => vec![len],
    };
    let order = Xla {
        lines: (outer, len, inner),
        dims: &dims,
        cpu,
    };
    if flush {
        in_floats::<_, true>(a, &order)
    } else {
        in_floats::<_, false>(a, &order)
    }
}

/// XLA's order over `[outer, len, inner]`, each line (or the whole array) reduced over `dims`
/// ([`xla_reduce`]); it has no packets.
struct Xla<'a> {
    lines: (usize, usize, usize),
    dims: &'a [usize],
    cpu: XlaCpu,
}

/// The CPU XLA compiled its loops for: LLVM's cost model vectorises a whole sum's rows
/// differently on each ([`xla_row_lanes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum XlaCpu {
    /// With AVX-512F (`sum_order = "xla-avx512"`).
    Avx512,
    /// With AVX2 and no AVX-512 (`sum_order = "xla-avx2"`).
    Avx2,
}

impl XlaCpu {
    /// This machine's, as XLA's code generator sees it.
    pub(super) fn host() -> XlaCpu {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            return XlaCpu::Avx512;
        }
        XlaCpu::Avx2
    }
}

impl Order for Xla<'_> {
    const HALF_STEPS: bool = false;
    fn sums<T: Acc, const P: usize>(&self, v: &[T], _: usize, _: fn([T; P]) -> T) -> Vec<T> {
        let (outer, len, inner) = self.lines;
        let mut out = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            for i in 0..inner {
                let line: Vec<T> = (0..len).map(|k| v[(o * len + k) * inner + i]).collect();
                let lanes = match *self.dims {
                    [rows, cols] => xla_row_lanes::<T>(self.cpu, rows, cols),
                    _ => None,
                };
                out.push(match lanes {
                    Some(lanes) => in_row_lanes(&line, cols_of(self.dims), lanes),
                    None => xla_reduce(&line, self.dims),
                });
            }
        }
        out
    }
}

fn cols_of(dims: &[usize]) -> usize {
    dims.last().copied().unwrap_or(1)
}

/// How XLA's CPU code adds the rows of a whole sum of a `rows × cols` array (every dimension
/// at most 32 and of more than one element): `(v, n)`, the first `n` rows in `v` vector lanes
/// ([`in_row_lanes`]), the rest one by one after them; `None`, every row one by one. LLVM
/// vectorises the loop over the rows in lanes of 32 bytes of real numbers or 64 of complex ones
/// (8 float32 or complex64, 4 float64 or complex128), and its cost model, which depends on the
/// CPU, chooses how many and where:
///
/// - AVX-512 (measured on jax 0.10.2 for float32, float64, complex64 and complex128 on 13 row
///   counts from 2 to 32 and 10 row lengths from 2 to 20, 25 random arrays each): rows of at
///   most 8 real parts only, fewer lanes for fewer rows, only where the lanes divide the rows,
///   halved while the lanes' rows hold more than 192 bytes. Of the others (row-major), those of
///   20 and 28 rows of float32 or complex64 add otherwise (not modelled).
/// - AVX2 (an AMD EPYC of family 23; 1,040 arrays of those shapes and 600 of random shapes up to
///   32 × 32): under 16 rows the most lanes that fit in the rows, only where they divide them;
///   from 16 rows all the lanes, or 4 of 8 where the rows leave 4 to 7 over and a row is not 32
///   bytes, over the rows they divide.
fn xla_row_lanes<T: Acc>(cpu: XlaCpu, rows: usize, cols: usize) -> Option<(usize, usize)> {
    if rows > XLA_WINDOW || cols > XLA_WINDOW {
        return None;
    }
    let most = 32 * T::PARTS / T::BYTES;
    let mut vf = most;
    while vf > rows {
        vf /= 2;
    }
    match cpu {
        XlaCpu::Avx512 => {
            if cols * T::PARTS > 8 || vf < 2 || !rows.is_multiple_of(vf) {
                return None;
            }
            while vf > 1 && vf * cols * T::BYTES > 192 {
                vf /= 2;
            }
            (vf >= 2).then_some((vf, rows))
        }
        XlaCpu::Avx2 if rows < 16 => (vf >= 2 && rows.is_multiple_of(vf)).then_some((vf, rows)),
        XlaCpu::Avx2 => {
            if most == 8 && rows % 8 >= 4 && cols * T::BYTES != 32 {
                vf = 4;
            }
            Some((vf, rows - rows % vf))
        }
    }
}

/// A whole `rows × cols` sum (`v` row-major) with its first `n` rows in `vf` lanes
/// ([`xla_row_lanes`]): lane `k` adds rows `k`, `k + vf`, … from zero, each row in order; then
/// the lanes are added half onto half (`l[i] + l[i + vf / 2]`) until one is left, and the rows
/// from `n` on are added to it one by one.
fn in_row_lanes<T: Acc>(v: &[T], cols: usize, (vf, n): (usize, usize)) -> T {
    let mut lanes = vec![T::zero(); vf];
    let (head, tail) = v.split_at(n * cols);
    for (r, row) in head.chunks(cols).enumerate() {
        let lane = &mut lanes[r % vf];
        for &x in row {
            *lane = lane.add(x);
        }
    }
    while lanes.len() > 1 {
        let half = lanes.len() / 2;
        let (low, high) = lanes.split_at(half);
        lanes = low.iter().zip(high).map(|(&a, &b)| a.add(b)).collect();
    }
    tail.iter().fold(lanes[0], |s, &x| s.add(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Array {
        let bits: Vec<[u64; 2]> = v.iter().map(|x| [x.to_bits() as u64, 0]).collect();
        Array::from_bits(DType::Float32, vec![v.len()], &bits).unwrap()
    }

    /// A line long enough to be split over threads sums to the bits one thread gives (the
    /// parts are NumPy's either way: quarters on the pair, halves on a larger pool), on values
    /// whose float32 sum depends on the order.
    #[test]
    fn pairwise_on_more_threads_is_pairwise_on_one() {
        let n = 3 * PARALLEL_PAIRWISE + 77;
        // A linear congruential sequence: magnitudes from 2^-20 to 2^20, both signs.
        let mut state = 0x2545_f491u64;
        let v: Vec<u32> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let e = (state >> 33) % 41;
                let x =
                    ((state >> 40) as f32 / (1u64 << 24) as f32 + 1.0) * 2f32.powi(e as i32 - 20);
                if state >> 63 == 1 { -x } else { x }.to_bits()
            })
            .collect();
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        let one = pool(1).install(|| pairwise::<f32>(&v));
        // Two threads: the quarters on this thread and the pair's helper; three: the halves
        // by `rayon::join`.
        let two = pool(2).install(|| pairwise::<f32>(&v));
        let three = pool(3).install(|| pairwise::<f32>(&v));
        assert_eq!(one.to_bits(), two.to_bits());
        assert_eq!(one.to_bits(), three.to_bits());
        // And it is NumPy's order, not another: the sequential sum differs on these values.
        let sequential = v.iter().fold(-0.0f32, |s, &x| s + f32::from_bits(x));
        assert_ne!(one.to_bits(), sequential.to_bits());
        // The NumPy sum of the line (`np.sum` of a float32 array) goes through the same path.
        let a = Array::from_bits(
            DType::Float32,
            vec![n],
            &v.iter().map(|&b| [u64::from(b), 0]).collect::<Vec<_>>(),
        )
        .unwrap();
        let s = numpy(&a, 1, n, 1).unwrap();
        assert_eq!(s, vec![[u64::from((0.0 + one).to_bits()), 0]]);
    }

    fn eigen_f32(v: &[f32], flush: bool) -> u32 {
        let s = eigen_sums(&f32s(v), 1, v.len(), 1, flush).unwrap();
        s[0][0] as u32
    }

    /// Measured on TensorFlow 2.21 (`tf.reduce_sum`, one thread): Eigen's accumulators start
    /// at +0.0, a single element is copied, and the DAZ and FTZ bits flush every step.
    #[test]
    fn eigen_starts_from_positive_zero_and_copies_one_element() {
        assert_eq!(eigen_f32(&[-0.0; 3], true), 0);
        assert_eq!(eigen_f32(&[-0.0], true), 0x8000_0000);
        assert_eq!(eigen_f32(&[1e-40], true), 1e-40f32.to_bits());
        assert_eq!(eigen_f32(&[1e-40, 1e-40], true), 0);
        assert_eq!(
            eigen_f32(&[1e-40, 1e-40], false),
            (2.0 * 1e-40f32).to_bits()
        );
    }

    /// 33 float32 elements: 2^24 at 4 and ones at 20 and 28 (lane 4 of the first, third and
    /// fourth packet accumulators). TensorFlow gives 2^24 (measured): the accumulators add in
    /// order, so each one meets 2^24 alone and rounds away; `(p0 + p1) + (p2 + p3)` would give
    /// 2^24 + 2.
    #[test]
    fn eigen_adds_its_four_packet_accumulators_in_order() {
        let mut v = [0.0f32; 33];
        v[4] = 16_777_216.0;
        v[20] = 1.0;
        v[28] = 1.0;
        assert_eq!(eigen_f32(&v, true), 16_777_216f32.to_bits());
        // 2^24 at 14 (the second accumulator), ones at 22 and 30 (the third and fourth).
        let mut v = [0.0f32; 33];
        v[14] = 16_777_216.0;
        v[22] = 1.0;
        v[30] = 1.0;
        assert_eq!(eigen_f32(&v, true), 16_777_216f32.to_bits());
    }

    /// The row lanes measured on jax 0.10.2 (`scripts/oracle_jax_row_sums.py`, and shapes up to
    /// 32 × 32 on the AVX2 CPU).
    #[test]
    fn xla_row_lanes_follow_each_cpus_cost_model() {
        use XlaCpu::{Avx2, Avx512};
        type C64 = (f32, f32);
        assert_eq!(xla_row_lanes::<f32>(Avx512, 16, 2), Some((8, 16)));
        assert_eq!(xla_row_lanes::<f32>(Avx512, 16, 9), None);
        assert_eq!(xla_row_lanes::<f32>(Avx512, 20, 2), None);
        assert_eq!(xla_row_lanes::<f64>(Avx512, 8, 8), Some((2, 8)));
        assert_eq!(xla_row_lanes::<f32>(Avx2, 2, 20), Some((2, 2)));
        assert_eq!(xla_row_lanes::<f32>(Avx2, 12, 5), None);
        assert_eq!(xla_row_lanes::<f64>(Avx2, 12, 5), Some((4, 12)));
        assert_eq!(xla_row_lanes::<f64>(Avx2, 6, 5), None);
        assert_eq!(xla_row_lanes::<f32>(Avx2, 19, 20), Some((8, 16)));
        assert_eq!(xla_row_lanes::<f32>(Avx2, 21, 7), Some((4, 20)));
        assert_eq!(xla_row_lanes::<f32>(Avx2, 21, 8), Some((8, 16)));
        assert_eq!(xla_row_lanes::<C64>(Avx2, 30, 4), Some((8, 24)));
        assert_eq!(xla_row_lanes::<C64>(Avx2, 30, 5), Some((4, 28)));
        assert_eq!(xla_row_lanes::<f64>(Avx2, 31, 32), Some((4, 28)));
        assert_eq!(xla_row_lanes::<f32>(Avx2, 33, 2), None);
    }

    /// 100 float32 elements summed by jax 0.10.2: 2^24 at 0 and ones at 32 and at 18 or 49 give
    /// 2^24 + 2, at 32 and 17 or 50 give 2^24 (measured): XLA's windows of 32 are padded by 14
    /// on each side, so elements 18 to 49 share a window, 17 is in the first, with 2^24, and
    /// 50 in the third.
    #[test]
    fn xla_sums_in_windows_of_32_padded_evenly() {
        let sum = |ones: [usize; 2]| {
            let mut v = vec![Step::<f32, true>(0.0); 100];
            v[0] = Step(16_777_216.0);
            for i in ones {
                v[i] = Step(1.0);
            }
            xla_reduce(&v, &[100]).0
        };
        assert_eq!(sum([32, 18]), 16_777_218.0);
        assert_eq!(sum([32, 17]), 16_777_216.0);
        assert_eq!(sum([32, 49]), 16_777_218.0);
        assert_eq!(sum([32, 50]), 16_777_216.0);
    }
}
