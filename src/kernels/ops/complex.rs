//! Complex kernels: NumPy's algorithms (FMA multiplication, Smith's division, lexicographic
//! comparisons) in f32 and f64; PyTorch's complex32 and bcomplex32 (16-bit parts) computed in
//! complex64 and each part rounded back, as its `c10::complex<Half>` ops do.

use super::fused::fused_go;
use super::input::{Input, for_chunks};
use super::lanes::{
    Lane, Load, OutChunk, Wide, canon32, canon64, f32_lane, f32_loader, f64_lane, f64_loader,
    load_into, raw, value_of,
};
use super::shape::whole;
use super::vocab::{CHUNK, Op, OpError};
use crate::kernels::array::Array;
use crate::kernels::array::Data;
use crate::numeric::dtype::DType;
use crate::numeric::format::{FloatFormat, cast_bits};

/// The components of element `i` of any array as f64 (exact: complex64 parts are float32),
/// converted to complex dtype `c` first.
pub(super) fn complex_at(a: &Array, i: usize, c: DType) -> (f64, f64) {
    let part = |bits: u64, d: DType| -> f64 {
        let f = c.float_format().expect("complex parts");
        let src = d.part();
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
        Data::C32(v) => (part(v[i][0] as u64, a.dtype), part(v[i][1] as u64, a.dtype)),
        Data::C64(v) => (part(v[i][0] as u64, a.dtype), part(v[i][1] as u64, a.dtype)),
        Data::C128(v) => (part(v[i][0], a.dtype), part(v[i][1], a.dtype)),
        d => (part(raw(d, i), a.dtype), 0.0),
    }
}

#[inline(always)]
pub(super) fn cge(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr > yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi >= yi)
}

#[inline(always)]
pub(super) fn cle(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr < yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi <= yi)
}

#[inline(always)]
pub(super) fn clt(xr: f64, xi: f64, yr: f64, yi: f64) -> bool {
    (xr < yr && !xi.is_nan() && !yi.is_nan()) || (xr == yr && xi < yi)
}

/// NumPy's complex ops, computed in the component precision `F` (f32 for complex64).
pub(super) fn complex_op<F: Float>(
    op: Op,
    (ar, ai): (F, F),
    (br, bi): (F, F),
) -> Result<(F, F), bool> {
    Ok(match op {
        Op::Add => (ar + br, ai + bi),
        Op::Subtract => (ar - br, ai - bi),
        // As NumPy's SIMD loops: fused multiply-adds (measured bit for bit on complex64).
        Op::Multiply => (ar.mul_add(br, (ai * bi).neg()), ar.mul_add(bi, ai * br)),
        Op::TrueDivide => npy_cdiv((ar, ai), (br, bi)),
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

/// NumPy's complex division (its loops and `npy_math`'s `cdiv`): Smith's algorithm, the ratio
/// of the divisor's smaller part to its larger, times the reciprocal of the denominator.
pub(super) fn npy_cdiv<F: Float>(a: (F, F), b: (F, F)) -> (F, F) {
    smith(a, b, false)
}

/// Smith's division, its products fused into multiply-adds where `fused` (as GCC contracts
/// PyTorch's `c10::complex` operator/, `ComplexDivide::SmithFused`).
fn smith<F: Float>((ar, ai): (F, F), (br, bi): (F, F), fused: bool) -> (F, F) {
    // x·y + z, rounded once where fused.
    let madd = |x: F, y: F, z: F| if fused { x.mul_add(y, z) } else { x * y + z };
    let (abs_br, abs_bi) = (br.abs(), bi.abs());
    if abs_br >= abs_bi {
        if abs_br == F::ZERO && abs_bi == F::ZERO {
            (ar / abs_br, ai / abs_bi)
        } else {
            let rat = bi / br;
            let scl = F::ONE / madd(bi, rat, br);
            (madd(ai, rat, ar) * scl, madd(ar.neg(), rat, ai) * scl)
        }
    } else {
        let rat = br / bi;
        let scl = F::ONE / madd(br, rat, bi);
        (madd(ar, rat, ai) * scl, madd(ai, rat, ar.neg()) * scl)
    }
}

/// `x / y` in complex64 or complex128 as PyTorch computes it (`ComplexDivide::SmithFused`):
/// Smith's algorithm in the parts' own precision with its products fused into multiply-adds.
pub(super) fn smith_fused_into(x: &Input, y: &Input, out: &mut Array) {
    let c = out.dtype;
    let at = |i: &Input, k: usize| complex_at(&i.array, if i.splat { 0 } else { k }, c);
    for k in 0..out.len() {
        let bits = if c == DType::Complex64 {
            // The parts are float32 values (read in `c`'s part format): exact as f32.
            let narrow = |(re, im): (f64, f64)| (re as f32, im as f32);
            let (re, im) = smith(narrow(at(x, k)), narrow(at(y, k)), true);
            [u64::from(canon32(re)), u64::from(canon32(im))]
        } else {
            let (re, im) = smith(at(x, k), at(y, k), true);
            [canon64(re), canon64(im)]
        };
        out.set_bits(k, bits);
    }
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
pub(super) fn load_complex<L: Lane + Default + From<f32>>(
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
        Data::C32(v) => {
            // float16/bfloat16 parts are exact in float32.
            let f = inp.array.dtype.float_format().expect("complex parts");
            let part = |b: u16| L::from(f.decode(b as u64).to_f64() as f32);
            for k in 0..n {
                let [r, i] = v[idx(k)];
                re[k] = part(r);
                im[k] = part(i);
            }
        }
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
pub(super) fn fused_complex64(op: Op, x: &Input, y: &Input, out: &mut Data) -> bool {
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

/// A complex32 or bcomplex32 part computed in float32, rounded to its 16-bit format (NaN: the
/// format's canonical one).
pub(super) fn half_part(c: DType, x: f32) -> u16 {
    let f = c.float_format().expect("complex parts");
    cast_bits(&FloatFormat::float32(), &f, canon32(x) as u64) as u16
}

/// `op` in complex32 or bcomplex32 as PyTorch computes it: both operands converted to the
/// result dtype (each part rounded to 16 bits), the op in complex64 (`c10::complex<float>`,
/// its opmath type: products of 16-bit parts are exact in float32, so fused or not they
/// round once), each part rounded back.
fn run_complex_half(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    let at = |i: &Input, k: usize| {
        let (re, im) = complex_at(&i.array, if i.splat { 0 } else { k }, c);
        (re as f32, im as f32)
    };
    match out {
        Data::U8(o) => {
            for (k, o) in o.iter_mut().enumerate() {
                *o = complex_op::<f32>(op, at(x, k), at(y, k)).expect_err("comparison") as u8;
            }
        }
        Data::C32(o) => {
            for (k, o) in o.iter_mut().enumerate() {
                let (re, im) = complex_op::<f32>(op, at(x, k), at(y, k)).expect("arithmetic");
                *o = [half_part(c, re), half_part(c, im)];
            }
        }
        _ => unreachable!("complex32 or bool output"),
    }
}

pub(super) fn run_complex(op: Op, c: DType, x: &Input, y: &Input, out: &mut Data) {
    if matches!(c, DType::Complex32 | DType::BComplex32) {
        return run_complex_half(op, c, x, y, out);
    }
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

/// `a ± b` in complex dtype `c` as `a + α·b`, α = ±1 + 0i, with the product's four real
/// multiplications (`ComplexAdd::Alpha`, PyTorch's `add(a, b, alpha)`): `0 · inf` makes a part
/// NaN where adding part by part would not.
pub(super) fn complex_alpha(
    op: Op,
    c: DType,
    x: &Input,
    y: &Input,
    shape: crate::kernels::array::Shape,
) -> Array {
    fn go<F: Float>(al: F, a: (F, F), b: (F, F)) -> (F, F) {
        let t = (al * b.0 - F::ZERO * b.1, al * b.1 + F::ZERO * b.0);
        (a.0 + t.0, a.1 + t.1)
    }
    let n: usize = shape.iter().product();
    let at = |i: &Input, k: usize| complex_at(&i.array, if i.splat { 0 } else { k }, c);
    let sign = if op == Op::Subtract { -1.0 } else { 1.0 };
    let bits: Vec<[u64; 2]> = (0..n)
        .map(|k| {
            let (a, b) = (at(x, k), at(y, k));
            let f = |p: (f64, f64)| (p.0 as f32, p.1 as f32);
            if c == DType::Complex64 {
                let (re, im) = go(sign as f32, f(a), f(b));
                [canon32(re) as u64, canon32(im) as u64]
            } else if matches!(c, DType::Complex32 | DType::BComplex32) {
                let (re, im) = go(sign as f32, f(a), f(b));
                [half_part(c, re) as u64, half_part(c, im) as u64]
            } else {
                let (re, im) = go(sign, a, b);
                [canon64(re), canon64(im)]
            }
        })
        .collect();
    Array::from_bits(c, shape, &bits).expect("the result's shape")
}

/// `x · y` in complex64 or complex128 rewritten as the schoolbook product `(a·c − b·d) +
/// (a·d + b·c)·i` where PyTorch's vector loop computes it (`ComplexMultiply::Vectors`): the
/// flattened result as rows of `row` elements, each run in vectors of `vector` elements, the
/// tail of each row left as the kernels computed it (fused, PyTorch's scalar loop). In
/// complex64 the scalar loop itself goes two elements at a time, so the last element of an odd
/// tail is schoolbook too (measured on torch 2.15: a row of 15 is 8 schoolbook, 6 fused, 1
/// schoolbook; a row of 1 is schoolbook). With an operand of stride zero along the row
/// (`stride0`: a zero-dim one, a Python number, a broadcast column) the complex64 tail goes
/// otherwise: its first element schoolbook, then fused in fours while four are left, the rest
/// schoolbook (measured on torch 2.15: tails of 5, 6 and 7 are `sffff`, `sffffs`, `sffffss`,
/// tails of 1 to 4 all schoolbook, whatever the row's place in memory; found by
/// `scripts/fuzz_libraries.py torch --seed 200105`). complex128 tails are fused either way.
pub(super) fn schoolbook_vectors(
    x: &Input,
    y: &Input,
    (row, stride0): (usize, bool),
    vector: usize,
    out: &mut Array,
) {
    let c = out.dtype;
    let at = |i: &Input, k: usize| complex_at(&i.array, if i.splat { 0 } else { k }, c);
    let tail = row % vector;
    let unpaired = c == DType::Complex64 && tail % 2 == 1;
    let fours = if tail > 0 { (tail - 1) / 4 * 4 } else { 0 };
    for k in 0..out.len() {
        let place = k % row;
        let schoolbook = match place.checked_sub(row - tail) {
            None => true,
            Some(j) if stride0 && c == DType::Complex64 => j == 0 || j > fours,
            Some(_) => unpaired && place == row - 1,
        };
        if !schoolbook {
            continue;
        }
        let ((a, b), (p, q)) = (at(x, k), at(y, k));
        let bits = if c == DType::Complex64 {
            let [a, b, p, q] = [a, b, p, q].map(|v| v as f32);
            [canon32(a * p - b * q) as u64, canon32(a * q + b * p) as u64]
        } else {
            [canon64(a * p - b * q), canon64(a * q + b * p)]
        };
        out.set_bits(k, bits);
    }
}

/// NumPy's complex `clip` (the generic loop of its `clip` ufunc, `_NPY_CLIP`):
/// `MIN(MAX(x, lo), hi)`, where `MAX(a, b)` is `a` when a part of `a` is NaN or `a > b`, else
/// `b`, and `MIN` likewise with `<`; `>` compares the real parts, or the imaginary ones where
/// the real parts are equal. So a tie gives the bound, a NaN operand stays, and a NaN bound is
/// taken wherever the comparison fails. `x`, `lo` and `hi` are in complex64 or complex128,
/// broadcast together into `shape`.
pub(super) fn clip_complex(
    x: &Array,
    lo: &Array,
    hi: &Array,
    shape: &[usize],
) -> Result<Array, OpError> {
    let c = x.dtype;
    let (x, lo, hi) = (whole(x, shape)?, whole(lo, shape)?, whole(hi, shape)?);
    let value = |a: &Array, i: usize| complex_at(a, i, c);
    let greater = |p: (f64, f64), q: (f64, f64)| if p.0 == q.0 { p.1 > q.1 } else { p.0 > q.0 };
    let nan = |p: (f64, f64)| p.0.is_nan() || p.1.is_nan();
    let canon = |b: u64| match c {
        DType::Complex64 => canon32(f32::from_bits(b as u32)) as u64,
        _ => canon64(f64::from_bits(b)),
    };
    let mut out = Array::zeros(c, shape.to_vec())?;
    for i in 0..out.len() {
        let (xp, lp, hp) = (x.bits_at(i), lo.bits_at(i), hi.bits_at(i));
        let (v, l, h) = (value(&x, i), value(&lo, i), value(&hi, i));
        let (floor, from) = match nan(v) || greater(v, l) {
            true => (v, xp),
            false => (l, lp),
        };
        let [re, im] = if nan(floor) || greater(h, floor) {
            from
        } else {
            hp
        };
        out.set_bits(i, [canon(re), canon(im)]);
    }
    Ok(out)
}
