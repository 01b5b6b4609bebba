//! The CPU reference kernels: elementwise ops, casts and sums over `Array`s, with the result
//! dtype read from a generated promotion table (`promote::Generated`); kernels never compute a
//! join.
//!
//! Semantics (docs/kernels.md): each operand is converted to the computation
//! dtype with one correct rounding; integers wrap; floats are IEEE round-to-nearest-even in the
//! result dtype: float32/float64 natively, formats of at most 16 bits computed in float32 and
//! rounded once (exact for + − × ÷, since float32 carries more than 2p + 2 bits of each); NaN
//! results are the positive quiet NaN; maximum/minimum propagate NaN and return the second
//! operand on ties (+0 vs −0); a weak Python int that does not fit is an `overflow` error.
//!
//! Execution: dtypes are dispatched once per chunk of `CHUNK` elements; each chunk is loaded
//! (converting) into lane buffers, computed, and stored (rounding), every stage a monomorphic
//! loop over L1-resident buffers; chunks run on rayon threads above `PARALLEL_MIN` elements
//! (a fused pass: above `stream::parallel_min_bytes` of data, a core's L2).

mod accept;
mod apply;
mod astype;
mod binary;
mod cmath;
mod complex;
mod dispatch;
mod flush;
mod fused;
mod general;
mod input;
mod lanes;
mod nary;
mod plan;
mod reduce;
mod scalar;
mod shape;
mod sleef;
mod sum_order;
mod unary;
pub(crate) mod vocab;
mod xla;

pub use self::apply::{
    ArrayPlan, Elementwise, Options, apply, apply_with, astype_bool_bytes, parse_op,
};
pub use self::astype::{astype, astype_into};
pub use self::binary::{binary, binary_into};
pub use self::nary::{clip, select};
pub use self::reduce::sum;
pub use self::shape::broadcast;
pub use self::unary::unary;
pub use self::vocab::{
    Arg, CHUNK, DEFAULT_MAX_ELEMENTS, ErrorKind, Op, OpError, PARALLEL_MIN, Scalar, UnaryOp,
};

#[cfg(test)]
mod tests {
    use super::astype::astype_general;
    use super::complex::run_complex;
    use super::dispatch::{run_binary, run_opmath};
    use super::general::{general_opmath, run_chunked};
    use super::input::Input;
    use super::lanes::F32_NAN;
    use super::plan::plan;
    use super::*;
    use crate::kernels::array::{Array, Data};
    use crate::numeric::dtype::DType;
    use crate::numeric::format::cast_bits;
    use crate::numeric::op::{OpId, ScalarPrecision, ZeroTies};
    use crate::promote::Generated;

    /// The one-pass clips and selects this thread has begun (`nary::ONE_PASSES`).
    fn one_passes() -> usize {
        super::nary::ONE_PASSES.with(|c| c.get())
    }

    fn jax() -> &'static Generated {
        crate::kernels::policy("jax").unwrap()
    }

    fn f32s(v: &[f32]) -> Array {
        let bits: Vec<[u64; 2]> = v.iter().map(|x| [x.to_bits() as u64, 0]).collect();
        Array::from_bits(DType::Float32, vec![v.len()], &bits).unwrap()
    }

    /// Float sums are exact, then rounded once: 1 + 2^-24 + 2^-60 lies just above a float32
    /// midpoint, so it rounds up to 1 + 2^-23 (summing in float32, or in float64 and rounding
    /// again, gives 1).
    #[test]
    fn float_sums_round_once_from_the_exact_sum() {
        // The array-api policy sums exactly (`sum_order = "exact"`, the default).
        let exact = crate::kernels::policy("array-api").unwrap();
        let a = f32s(&[1.0, 2f32.powi(-24), 2f32.powi(-60)]);
        let s = sum(exact, &a, None).unwrap();
        assert_eq!(s.dtype, DType::Float32);
        assert_eq!(
            s.bits(),
            vec![[(1.0f32 + 2f32.powi(-23)).to_bits() as u64, 0]]
        );
        // Without the tiny term it is a tie, to even: 1.
        let s = sum(exact, &f32s(&[1.0, 2f32.powi(-24)]), None).unwrap();
        assert_eq!(s.bits(), vec![[1.0f32.to_bits() as u64, 0]]);
        let big = [1e16f64, 1.0, -1e16];
        let bits: Vec<[u64; 2]> = big.iter().map(|x| [x.to_bits(), 0]).collect();
        let a = Array::from_bits(DType::Float64, vec![3], &bits).unwrap();
        assert_eq!(
            sum(exact, &a, None).unwrap().bits(),
            vec![[1.0f64.to_bits(), 0]]
        );
        let inf = f32s(&[f32::INFINITY, 1.0, f32::NEG_INFINITY]);
        assert_eq!(
            sum(exact, &inf, None).unwrap().bits(),
            vec![[F32_NAN as u64, 0]]
        );
    }

    /// PyTorch's `s / t` is `t.reciprocal() * s`: two roundings, and the product's dtype and
    /// errors, through each entry point (`binary`, `binary_into`, `apply`); NumPy's (the jax
    /// policy's) is the quotient.
    #[test]
    fn a_python_number_over_an_array_is_the_reciprocal_times_it_for_torch() {
        let torch = crate::kernels::policy("torch").unwrap();
        let (three, seven) = (Arg::Scalar(Scalar::Float(3.0)), Arg::Array(f32s(&[7.0])));
        let quotient = binary(jax(), Op::TrueDivide, &three, &seven).unwrap();
        assert_eq!(quotient.bits(), vec![[0x3edb_6db7, 0]]); // 0.42857143
        let product = binary(torch, Op::TrueDivide, &three, &seven).unwrap();
        assert_eq!(product.bits(), vec![[0x3edb_6db8, 0]]); // 0.42857146
        let mut out = Array::zeroed(DType::Float32, vec![1]);
        binary_into(torch, Op::TrueDivide, &three, &seven, &mut out).unwrap();
        assert_eq!(out, product);
        let args = [three.clone(), seven.clone()];
        let applied = apply(torch, Op::TrueDivide.id(), &args, Options::default()).unwrap();
        assert_eq!(applied, product);
        // The array first divides.
        let seven_over = binary(torch, Op::TrueDivide, &seven, &three).unwrap();
        assert_eq!(
            seven_over.bits(),
            vec![[(7.0f32 / 3.0).to_bits() as u64, 0]]
        );
        // 2**63 / bool: the reciprocal is float32, so the product is; the quotient would pair
        // bool with uint64, which PyTorch does not promote.
        let bools = Array::from_bits(DType::Bool, vec![2], &[[1, 0], [0, 0]]).unwrap();
        let big = Arg::Scalar(Scalar::Int(1 << 63));
        let r = binary(torch, Op::TrueDivide, &big, &Arg::Array(bools)).unwrap();
        assert_eq!(r.dtype, DType::Float32);
        assert_eq!(
            r.bits(),
            vec![
                [2f32.powi(63).to_bits() as u64, 0],
                [f32::INFINITY.to_bits() as u64, 0]
            ]
        );
        // An error of the product says what was computed.
        let int8 = Array::from_bits(DType::named("int8").unwrap(), vec![1], &[[1, 0]]).unwrap();
        let huge = Arg::Scalar(Scalar::Int(1 << 64));
        let e = binary(torch, Op::TrueDivide, &huge, &Arg::Array(int8)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Overflow);
        assert!(
            e.message.starts_with(
                "the torch policy's library computes `s / t` as `t.reciprocal() * s`: "
            ),
            "{}",
            e.message
        );
    }

    /// A lower bound above the upper: NumPy's `clip` (the jax policy) gives the upper,
    /// TensorFlow's `clip_by_value`, which bounds the top first, the lower; NaN stays NaN.
    #[test]
    fn crossed_clip_bounds_follow_the_policys_order() {
        let tf = crate::kernels::policy("tensorflow").unwrap();
        let x = Arg::Array(f32s(&[-5.0, 4.0, 10.0, f32::NAN]));
        let (lo, hi) = (
            Arg::Scalar(Scalar::Float(5.0)),
            Arg::Scalar(Scalar::Float(3.0)),
        );
        let bits = |v: [f32; 4]| v.map(|x| [x.to_bits() as u64, 0]).to_vec();
        let numpy = clip(jax(), &x, &lo, &hi).unwrap();
        assert_eq!(numpy.bits(), bits([3.0, 3.0, 3.0, f32::NAN]));
        let tensorflow = clip(tf, &x, &lo, &hi).unwrap();
        assert_eq!(tensorflow.bits(), bits([5.0, 5.0, 5.0, f32::NAN]));
        // Ordered bounds: the same either way.
        let ordered = |p| clip(p, &x, &hi, &lo).unwrap().bits();
        assert_eq!(ordered(jax()), bits([3.0, 4.0, 5.0, f32::NAN]));
        assert_eq!(ordered(tf), ordered(jax()));
        // TensorFlow's two steps promote their own pairs: -3 wraps into uint32 with the
        // operand (2³² − 3 bounds nothing here), then 0.5 makes the result float64.
        let u32s = Array::from_bits(DType::named("uint32").unwrap(), vec![2], &[[0, 0], [7, 0]]);
        let (x, lo, hi) = (
            Arg::Array(u32s.unwrap()),
            Arg::Scalar(Scalar::Float(0.5)),
            Arg::Scalar(Scalar::Int(-3)),
        );
        let r = clip(tf, &x, &lo, &hi).unwrap();
        assert_eq!(r.dtype, DType::Float64);
        assert_eq!(r.bits(), vec![[0.5f64.to_bits(), 0], [7f64.to_bits(), 0]]);
        // And the result keeps the operand's shape.
        let wide = Arg::Array(f32s(&[0.0, 1.0]));
        let one = Arg::Array(f32s(&[2.0]));
        let e = clip(tf, &one, &wide, &hi).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        assert_eq!(clip(jax(), &one, &wide, &hi).unwrap().shape[..], [2]);
    }

    #[test]
    fn sums_along_an_axis_use_the_accumulator() {
        let bits: Vec<[u64; 2]> = [1u64, 2, 3, 0x80, 0xff, 7]
            .iter()
            .map(|&b| [b, 0])
            .collect();
        let a = Array::from_bits(DType::named("int8").unwrap(), vec![2, 3], &bits).unwrap();
        let s = sum(jax(), &a, Some(0)).unwrap();
        assert_eq!(s.dtype, DType::named("int64").unwrap());
        assert_eq!(s.shape[..], [3]);
        // [1 + -128, 2 + -1, 3 + 7] = [-127, 1, 10]
        assert_eq!(
            s.bits().iter().map(|b| b[0] as i64).collect::<Vec<_>>(),
            vec![-127, 1, 10]
        );
        let s = sum(jax(), &a, Some(1)).unwrap();
        assert_eq!(
            s.bits().iter().map(|b| b[0] as i64).collect::<Vec<_>>(),
            vec![6, -122]
        );
        assert_eq!(sum(jax(), &a, Some(2)).unwrap_err().kind, ErrorKind::Input);
    }

    /// Integer sums are taken from the operand's storage, wrapping: in int64 from int8 (with
    /// signs), in uint64 from uint64 (wrapping past 2^64: 2^64 − 1 + 2 + 2^64 − 2 is 2^64 − 1), along either axis and over an empty
    /// one; the sums NumPy gives (`np.sum`).
    #[test]
    fn integer_sums_wrap_in_the_accumulator_from_the_storage() {
        let numpy = crate::kernels::policy("numpy").unwrap();
        let int = |name: &str, shape: Vec<usize>, v: &[u64]| {
            let bits: Vec<[u64; 2]> = v.iter().map(|&b| [b, 0]).collect();
            Array::from_bits(DType::named(name).unwrap(), shape, &bits).unwrap()
        };
        let sums = |a: &Array, axis| {
            let s = sum(numpy, a, axis).unwrap();
            (
                s.dtype.name(),
                s.shape.to_vec(),
                s.bits().iter().map(|b| b[0]).collect::<Vec<_>>(),
            )
        };
        // [[-128, -128, 127], [-1, 5, 0]] in int8.
        let a = int("int8", vec![2, 3], &[0x80, 0x80, 0x7f, 0xff, 5, 0]);
        assert_eq!(sums(&a, None), ("int64", vec![], vec![(-125i64) as u64]));
        let by_column = [-129i64, -123, 127].map(|x| x as u64).to_vec();
        assert_eq!(sums(&a, Some(0)), ("int64", vec![3], by_column));
        let by_row = [-129i64, 4].map(|x| x as u64).to_vec();
        assert_eq!(sums(&a, Some(1)), ("int64", vec![2], by_row));
        let big = int("uint64", vec![3], &[u64::MAX, 2, u64::MAX - 1]);
        assert_eq!(sums(&big, None), ("uint64", vec![], vec![u64::MAX]));
        // A bool array counts its true elements, in int64.
        let b = int("bool", vec![4], &[1, 0, 1, 1]);
        assert_eq!(sums(&b, None), ("int64", vec![], vec![3]));
        let empty = int("int16", vec![2, 0], &[]);
        assert_eq!(sums(&empty, Some(1)), ("int64", vec![2], vec![0, 0]));
        assert_eq!(sums(&empty, Some(0)), ("int64", vec![0], vec![]));
    }

    /// `negative` and `absolute` of the dtypes computed in one pass into the caller's storage:
    /// integers wrap (int8's −128 is its own negation and absolute value; uint8's negation is
    /// 256 − x), floats flip or clear the sign (±0, ±∞) and a NaN is the canonical one.
    #[test]
    fn unary_ops_wrap_integers_and_flip_float_signs() {
        let numpy = crate::kernels::policy("numpy").unwrap();
        let run = |op, name: &str, v: &[u64]| {
            let bits: Vec<[u64; 2]> = v.iter().map(|&b| [b, 0]).collect();
            let a = Array::from_bits(DType::named(name).unwrap(), vec![v.len()], &bits).unwrap();
            let r = unary(numpy, op, &a).unwrap();
            assert_eq!(r.dtype.name(), name);
            r.bits().iter().map(|b| b[0]).collect::<Vec<_>>()
        };
        let i8s = [0x80, 0xff, 0, 0x7f, 0x81];
        assert_eq!(
            run(UnaryOp::Negative, "int8", &i8s),
            [0x80, 1, 0, 0x81, 0x7f]
        );
        assert_eq!(
            run(UnaryOp::Absolute, "int8", &i8s),
            [0x80, 1, 0, 0x7f, 0x7f]
        );
        assert_eq!(run(UnaryOp::Negative, "uint8", &[0, 1, 255]), [0, 255, 1]);
        assert_eq!(
            run(UnaryOp::Absolute, "uint16", &[0, 1, 65535]),
            [0, 1, 65535]
        );
        let min64 = 1u64 << 63;
        assert_eq!(
            run(UnaryOp::Absolute, "int64", &[min64, u64::MAX]),
            [min64, 1]
        );
        let f = [0.0f32, -0.0, 1.5, f32::NEG_INFINITY, -f32::NAN].map(|x| u64::from(x.to_bits()));
        let neg = [-0.0f32, 0.0, -1.5, f32::INFINITY].map(|x| u64::from(x.to_bits()));
        assert_eq!(run(UnaryOp::Negative, "float32", &f)[..4], neg);
        assert_eq!(run(UnaryOp::Negative, "float32", &f)[4], u64::from(F32_NAN));
        let abs = [0.0f32, 0.0, 1.5, f32::INFINITY].map(|x| u64::from(x.to_bits()));
        assert_eq!(run(UnaryOp::Absolute, "float32", &f)[..4], abs);
        let d = [-2.5f64, -0.0, -f64::NAN].map(f64::to_bits);
        let r = run(UnaryOp::Absolute, "float64", &d);
        assert_eq!(r[..2], [2.5f64.to_bits(), 0]);
        assert!(f64::from_bits(r[2]).is_nan() && r[2] >> 63 == 0);
    }

    /// `clip` of an array of the result dtype by two zero-dim bounds (`nary::clip_pass`, one
    /// pass) is `minimum(maximum(x, lo), hi)` computed by the two binary steps, bit for bit,
    /// under the tie rule each policy's clip applies (`First` for NumPy's and PyTorch's loops
    /// with scalar bounds, `Second` for the Array API's): random patterns (NaN of any sign and
    /// payload, ±0, ±∞, the bounds themselves), bounds crossed, NaN and zeros of both signs, on
    /// an array long enough to split over threads.
    #[test]
    fn clip_in_one_pass_is_maximum_then_minimum() {
        let mut rng = crate::synth::Rng::new(42);
        let n = (1 << 17) + 33;
        let dtypes = [
            "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
            "uint64",
        ];
        for (name, ties) in [
            ("numpy", ZeroTies::First),
            ("torch", ZeroTies::First),
            ("array-api", ZeroTies::Second),
        ] {
            let policy = crate::kernels::policy(name).unwrap();
            let steps = crate::promote::Generated {
                semantics: crate::numeric::op::Semantics {
                    zero_ties: ties,
                    ..policy.semantics
                },
                ..*policy
            };
            for d in dtypes.map(|t| DType::named(t).unwrap()) {
                let w = d.pattern_bits();
                let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                let float = |x: f64| match d {
                    DType::Float32 => u64::from((x as f32).to_bits()),
                    _ => x.to_bits(),
                };
                let special: Vec<u64> = if d.is_float() {
                    [
                        0.0,
                        -0.0,
                        1.0,
                        -1.0,
                        f64::INFINITY,
                        -f64::INFINITY,
                        f64::NAN,
                        -f64::NAN,
                    ]
                    .map(float)
                    .to_vec()
                } else {
                    vec![0, 1, mask, mask >> 1, (mask >> 1) + 1]
                };
                // Zeros of both signs crossed, and (floats) a NaN bound.
                let mut pairs: Vec<[u64; 2]> =
                    vec![[special[0], special[1]], [special[2], special[0]]];
                if d.is_float() {
                    pairs.push([special[7], special[2]]);
                }
                for _ in 0..6 {
                    let pick = |rng: &mut crate::synth::Rng| match rng.below(2) {
                        0 => special[rng.below(special.len())],
                        _ => rng.next_u64() & mask,
                    };
                    pairs.push([pick(&mut rng), pick(&mut rng)]);
                }
                for [lo, hi] in pairs {
                    let bits: Vec<[u64; 2]> = (0..n)
                        .map(|_| match rng.below(4) {
                            0 => [special[rng.below(special.len())], 0],
                            1 => [[lo, hi][rng.below(2)], 0],
                            _ => [rng.next_u64() & mask, 0],
                        })
                        .collect();
                    let x = Arg::Array(Array::from_bits(d, vec![n], &bits).unwrap());
                    let bound =
                        |b: u64| Arg::Array(Array::from_bits(d, vec![], &[[b, 0]]).unwrap());
                    let (l, h) = (bound(lo), bound(hi));
                    let passes = one_passes();
                    let once = clip(policy, &x, &l, &h).unwrap();
                    assert_eq!(
                        one_passes(),
                        passes + 1,
                        "{name} clip {} in one pass",
                        d.name()
                    );
                    let floor = binary(&steps, Op::Maximum, &x, &l).unwrap();
                    let twice = binary(&steps, Op::Minimum, &Arg::Array(floor), &h).unwrap();
                    assert_eq!(once.dtype, d);
                    let (ob, tb) = (once.bits(), twice.bits());
                    if let Some(i) = (0..n).find(|&i| ob[i] != tb[i]) {
                        panic!(
                            "{name} clip {} by {lo:x}, {hi:x}: element {i} {:x?}: one pass \
                             {:x?}, two steps {:x?}",
                            d.name(),
                            bits[i],
                            ob[i],
                            tb[i]
                        );
                    }
                }
            }
        }
    }

    /// `where` of a bool condition and values of the result's dtype and shape or zero-dim
    /// (`nary::select_pass`, one pass into the result) chooses what the general path chooses
    /// for the same truths given as uint8 (converted to bool) and each zero-dim value as a
    /// one-element array (broadcast): over dtypes of every storage (complex too), a Python
    /// number, and a length that splits over threads.
    #[test]
    fn where_in_one_pass_is_the_general_select() {
        let mut rng = crate::synth::Rng::new(7);
        let numpy = crate::kernels::policy("numpy").unwrap();
        for n in [0, 1, 1000, (1 << 18) + 5] {
            for name in [
                "bool",
                "int8",
                "float16",
                "float32",
                "int64",
                "complex64",
                "complex128",
            ] {
                let d = DType::named(name).unwrap();
                let w = d.pattern_bits();
                let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                let mut random = |len: usize, shape: Vec<usize>| {
                    let bits: Vec<[u64; 2]> = (0..len)
                        .map(|_| {
                            [
                                rng.next_u64() & mask,
                                (rng.next_u64() & mask) * u64::from(d.is_complex()),
                            ]
                        })
                        .collect();
                    Array::from_bits(d, shape, &bits).unwrap()
                };
                let (x, y) = (random(n, vec![n]), random(n, vec![n]));
                let (x0, y0) = (random(1, vec![]), random(1, vec![]));
                let truths: Vec<[u64; 2]> = (0..n).map(|_| [rng.next_u64() & 1, 0]).collect();
                let cond = Arg::Array(Array::from_bits(DType::Bool, vec![n], &truths).unwrap());
                let bytes = Arg::Array(
                    Array::from_bits(DType::named("uint8").unwrap(), vec![n], &truths).unwrap(),
                );
                let one = |a: &Array| Arg::Array(Array::new(d, vec![1], a.data.clone()).unwrap());
                let cases = [
                    (
                        Arg::Array(x.clone()),
                        Arg::Array(y.clone()),
                        Arg::Array(x.clone()),
                        Arg::Array(y.clone()),
                    ),
                    (
                        Arg::Array(x.clone()),
                        Arg::Array(y0.clone()),
                        Arg::Array(x.clone()),
                        one(&y0),
                    ),
                    (
                        Arg::Array(x0.clone()),
                        Arg::Array(y.clone()),
                        one(&x0),
                        Arg::Array(y.clone()),
                    ),
                    (
                        Arg::Array(x0.clone()),
                        Arg::Array(y0.clone()),
                        one(&x0),
                        one(&y0),
                    ),
                ];
                for (a, b, ga, gb) in cases {
                    let passes = one_passes();
                    let once = select(numpy, &cond, &a, &b).unwrap();
                    assert_eq!(one_passes(), passes + 1, "{name}: one pass");
                    let general = select(numpy, &bytes, &ga, &gb).unwrap();
                    assert_eq!(one_passes(), passes + 1, "{name}: the general path");
                    assert_eq!(once, general, "{name}, {n} elements");
                }
                // A Python number beside an array of its result dtype (float: NumPy's weak
                // scalar takes the array's dtype).
                if d.is_float() {
                    let half = Arg::Scalar(Scalar::Float(0.5));
                    let passes = one_passes();
                    let once = select(numpy, &cond, &Arg::Array(x.clone()), &half).unwrap();
                    let general = select(numpy, &bytes, &Arg::Array(x.clone()), &half).unwrap();
                    assert_eq!(one_passes(), passes + 1, "{name} and 0.5: one pass, once");
                    assert_eq!(once.dtype, d);
                    assert_eq!(once, general, "{name} and 0.5, {n} elements");
                }
            }
        }
    }

    /// Every fused fast path gives the general chunked path's bits, on arrays large enough for
    /// each (pair tables start at 65536 elements), over random patterns (NaN, ±∞, subnormals).
    #[test]
    fn fast_paths_equal_the_general_path() {
        let pairs = [
            ("float32", "float32"),
            ("int8", "float32"),
            ("int32", "float32"),
            ("float32", "float64"),
            ("int64", "float64"),
            ("uint8", "int8"),
            ("int8", "uint8"),
            ("uint16", "int16"),
            ("int16", "int16"),
            ("uint32", "uint32"),
            ("int64", "uint8"),
            ("bfloat16", "bfloat16"),
            ("float16", "float16"),
            ("bfloat16", "float16"),
            ("float16", "bfloat16"),
            ("float8_e4m3fn", "float8_e4m3fn"),
            ("float8_e5m2fnuz", "float8_e5m2fnuz"),
            ("float8_e5m2", "float8_e5m2"),
            ("float8_e4m3b11fnuz", "float8_e4m3b11fnuz"),
            ("float8_e3m4", "float8_e3m4"),
            ("float8_e8m0fnu", "float8_e8m0fnu"),
            ("float6_e3m2fn", "float6_e3m2fn"),
            ("float4_e2m1fn", "float4_e2m1fn"),
            ("complex64", "float32"),
            ("complex64", "complex64"),
            // Comparisons of one dtype (`fused_compare`).
            ("float64", "float64"),
            ("int8", "int8"),
            ("int64", "int64"),
            ("uint64", "uint64"),
            // A float against a dtype it holds, either side (`fused_compare`'s mixed loads).
            ("bool", "float32"),
            ("float32", "uint16"),
            ("int16", "float32"),
            ("float64", "int32"),
            ("uint32", "float64"),
            ("uint8", "float64"),
            ("float64", "int16"),
            ("float64", "bool"),
        ];
        let comparisons = [
            Op::Equal,
            Op::NotEqual,
            Op::Less,
            Op::LessEqual,
            Op::Greater,
            Op::GreaterEqual,
        ];
        let ops = [&ARITHMETIC[..], &[Op::BitwiseXor], &comparisons[..]].concat();
        fast_equals_general(&pairs, &ops, (1 << 16) + 77, 3);
        // Again without the AVX-512 kernels and loops, which stand in for the AVX2 ones
        // where the CPU has them.
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::stream::set_avx512_enabled(false);
            fast_equals_general(&pairs, &ops, (1 << 16) + 77, 4);
            crate::kernels::stream::set_avx512_enabled(true);
        }
    }

    /// The binary ops every float fast path computes.
    const ARITHMETIC: [Op; 6] = [
        Op::Add,
        Op::Subtract,
        Op::Multiply,
        Op::TrueDivide,
        Op::Maximum,
        Op::Minimum,
    ];

    /// The policy's accepted kinds (the catalogue's, or its `[ops.X] kinds`) are what the
    /// kernels do: an op on two arrays of one dtype is refused as unsupported exactly when the
    /// policy does not accept the dtype's kind (true_divide: the kind of the float it computes in; floor_divide of bools: of the
    /// policy's `bool_result`).
    #[test]
    fn accepted_kinds_are_the_kernels() {
        let mut refused = 0;
        for info in crate::numeric::dtype::CATALOGUE {
            let Some(d) = DType::named(info.name) else {
                continue;
            };
            if !jax().dtypes.contains(&d.name()) {
                continue;
            }
            let a = Array::zeros(d, vec![1]).unwrap();
            for (name, op) in Op::ALL {
                let o = crate::promote::Operand::Array(d);
                let compute = if op == Op::TrueDivide {
                    jax().true_divide_type(o, o).unwrap()
                } else {
                    jax().op_type(op.id(), o, o).unwrap()
                };
                let got = binary(jax(), op, &Arg::Array(a.clone()), &Arg::Array(a.clone()));
                let unsupported = matches!(&got, Err(e) if e.kind == ErrorKind::Unsupported);
                assert_eq!(
                    unsupported,
                    !jax().kinds(op.id()).accepts(compute.kind()),
                    "{name} on {d:?}: {:?}",
                    got.err()
                );
                refused += usize::from(unsupported);
            }
            for (name, op) in UnaryOp::ALL {
                let got = unary(jax(), op, &a);
                let unsupported = matches!(&got, Err(e) if e.kind == ErrorKind::Unsupported);
                assert_eq!(
                    unsupported,
                    !jax().kinds(op.id()).accepts(d.kind()),
                    "{name} on {d:?}"
                );
                refused += usize::from(unsupported);
            }
        }
        assert!(
            refused > 20,
            "only {refused} refusals: the test reached too little"
        );
    }

    /// The kernels' binary and unary ops are the catalogue's kernel ops, in its order.
    #[test]
    fn ops_are_the_catalogues() {
        use crate::numeric::op::{Arity, CATALOGUE};
        let binary: Vec<&str> = CATALOGUE
            .iter()
            .filter(|o| o.kernel && o.arity == Arity::Binary)
            .map(|o| o.name)
            .collect();
        let kernels: Vec<&str> = Op::ALL.iter().map(|(n, _)| *n).collect();
        assert_eq!(binary, kernels);
        let unary: Vec<&str> = CATALOGUE
            .iter()
            .filter(|o| o.arity == Arity::Unary)
            .map(|o| o.name)
            .collect();
        let kernels: Vec<&str> = UnaryOp::ALL.iter().map(|(n, _)| *n).collect();
        assert_eq!(unary, kernels);
        for (name, op) in UnaryOp::ALL {
            assert_eq!(op.id().name(), name);
        }
        for (name, op) in Op::ALL {
            assert_eq!(
                op.id(),
                OpId::named(name).unwrap(),
                "{name}: Op's order is the catalogue's"
            );
            assert_eq!(op.id().name(), name);
            let rule = crate::numeric::op::info(name).unwrap().rule;
            assert_eq!(
                op.is_comparison(),
                rule == crate::numeric::op::Rule::Compare,
                "{name}"
            );
        }
    }

    /// Every pair of codes of every format of at most 8 bits, every arithmetic op: the portable
    /// fast path (the pair table, the widening table) gives the general path's bits; and
    /// widening every code to float32 gives the codec's.
    #[test]
    fn every_pair_of_small_float_codes_equals_the_general_path() {
        #[cfg(target_arch = "x86_64")]
        crate::kernels::stream::set_avx512_enabled(false);
        every_small_float_pair();
        #[cfg(target_arch = "x86_64")]
        crate::kernels::stream::set_avx512_enabled(true);
    }

    /// The same with the AVX-512 VBMI kernels that replace the tables where the CPU has them.
    #[test]
    #[cfg(target_arch = "x86_64")]
    #[cfg_attr(
        not(typejoin_avx512vbmi),
        ignore = "this CPU lacks AVX-512 VBMI: its kernels cannot run here"
    )]
    fn every_pair_of_small_float_codes_equals_the_general_path_with_avx512_vbmi() {
        assert!(
            crate::kernels::avx512::Kernel8::available(),
            "built on a CPU with AVX-512 VBMI, but the kernels are not available"
        );
        every_small_float_pair();
    }

    fn every_small_float_pair() {
        let n = (1 << 16) + 13;
        let mut formats = Vec::new();
        for d in (0..crate::numeric::dtype::SMALL_FLOATS.len()).map(|i| DType::Small(i as u8)) {
            let w = d.pattern_bits();
            if w > 8 {
                continue;
            }
            formats.push(d.name());
            let mask = (1u64 << w) - 1;
            let a: Vec<[u64; 2]> = (0..n as u64).map(|k| [(k >> 8) & mask, 0]).collect();
            let b: Vec<[u64; 2]> = (0..n as u64).map(|k| [k & mask, 0]).collect();
            let (x, y) = (
                Arg::Array(Array::from_bits(d, vec![n], &a).unwrap()),
                Arg::Array(Array::from_bits(d, vec![n], &b).unwrap()),
            );
            for op in ARITHMETIC {
                assert!(
                    fast_equals_general_on(op, &x, &y),
                    "{} has no plan",
                    op.name()
                );
            }
            let Arg::Array(x) = &x else { unreachable!() };
            let wide = astype(x, DType::Float32);
            let (f, f32f) = (
                d.float_format().unwrap(),
                crate::numeric::dtype::float_format("float32").unwrap(),
            );
            for (i, (got, code)) in wide.bits().iter().zip(&a).enumerate() {
                let want = cast_bits(&f, &f32f, code[0]);
                assert_eq!(
                    got[0],
                    want,
                    "{} code {:#x} (element {i})",
                    d.name(),
                    code[0]
                );
            }
        }
    }

    /// Passes that move at least `stream_min_bytes` are written with non-temporal stores: the
    /// same bits as the general path on every fused loop that streams.
    #[test]
    fn streamed_fast_paths_equal_the_general_path() {
        // Elements enough for a pass of `bytes` per element (inputs and output) to stream.
        let streams = |bytes: usize| crate::kernels::stream::stream_min_bytes() / bytes + 77;
        let pairs = [
            ("float32", "float32"),
            ("int8", "float32"),
            ("bfloat16", "float16"),
            ("complex64", "float32"),
        ];
        fast_equals_general(&pairs, &[Op::Add, Op::TrueDivide], streams(8), 4);
        fast_equals_general(&[("float32", "float64")], &[Op::Multiply], streams(20), 5);
        fast_equals_general(
            &[("float16", "float16"), ("bfloat16", "bfloat16")],
            &[Op::Add],
            streams(6),
            6,
        );
        // uint8 + int8 is int16: four bytes an element in all.
        fast_equals_general(&[("uint8", "int8")], &[Op::Add], streams(4), 7);
        // astype float8 → float32 against the codec (five bytes an element): the AVX-512
        // widening where the CPU has it, then (switched off) the streamed table loop.
        let four = streams(5);
        let f8 = DType::named("float8_e4m3fn").unwrap();
        let codes: Vec<[u64; 2]> = (0..four as u64).map(|i| [(i * 37) & 0xff, 0]).collect();
        let a = Array::from_bits(f8, vec![four], &codes).unwrap();
        let f = |n: &str| crate::numeric::dtype::float_format(n).unwrap();
        let check = || {
            let bits = astype(&a, DType::Float32).bits();
            for (i, c) in codes.iter().enumerate() {
                let want =
                    crate::numeric::format::cast_bits(&f("float8_e4m3fn"), &f("float32"), c[0]);
                assert_eq!(bits[i][0], want, "element {i}");
            }
        };
        check();
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::stream::set_avx512_enabled(false);
            check();
            crate::kernels::stream::set_avx512_enabled(true);
        }
    }

    /// A zero-dim operand on either side of an array longer than a tile (so the tile
    /// repeats), on one and on two threads: the fused passes reading the scalar as a tile give
    /// the general path's bits.
    #[test]
    fn scalar_operands_take_the_fast_paths_exactly() {
        let pairs = [
            ("float32", "float32"),
            ("int32", "float32"),
            ("int8", "int8"),
            ("uint8", "int16"),
            ("bfloat16", "bfloat16"),
            ("float16", "float16"),
            ("float8_e4m3fn", "float8_e4m3fn"),
            ("float64", "int64"),
        ];
        let ops = [&ARITHMETIC[..], &[Op::BitwiseXor, Op::Less]].concat();
        let n = (1 << 17) + 777;
        let mut rng = crate::synth::Rng::new(11);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for &(l, r) in &pairs {
                let (dl, dr) = (DType::named(l).unwrap(), DType::named(r).unwrap());
                let w = dl.pattern_bits().min(63);
                let bits: Vec<[u64; 2]> = (0..n).map(|_| [rng.next_u64() >> (64 - w), 0]).collect();
                let array = Arg::Array(Array::from_bits(dl, vec![n], &bits).unwrap());
                // A finite, normal scalar: 3 in every dtype.
                let three =
                    Array::from_bits(DType::Float64, vec![], &[[3f64.to_bits(), 0]]).unwrap();
                let scalar = Arg::Array(astype(&three, dr));
                for &op in &ops {
                    pool.install(|| {
                        fast_equals_general_on(op, &array, &scalar);
                        fast_equals_general_on(op, &scalar, &array);
                    });
                }
            }
        }
    }

    /// PyTorch's 16-bit float × scalar at float32 precision: the fused pass gives the general
    /// path's bits over every float16 and bfloat16 pattern and scalars that round differently.
    #[test]
    fn opmath_fast_path_equals_the_general_path() {
        let torch = crate::kernels::policy("torch").unwrap();
        for name in ["float16", "bfloat16"] {
            let d = DType::named(name).unwrap();
            let bits: Vec<[u64; 2]> = (0..1u64 << 16).map(|k| [k, 0]).collect();
            let x = Input {
                array: std::borrow::Cow::Owned(Array::from_bits(d, vec![1 << 16], &bits).unwrap()),
                splat: false,
            };
            for s in [0.1f32, 65520.0, -3.0e-8, f32::INFINITY, f32::NAN, 1.0 / 3.0] {
                for op in [Op::Multiply, Op::TrueDivide] {
                    let (mut fast, mut slow) = (
                        Array::zeroed(d, vec![1 << 16]),
                        Array::zeroed(d, vec![1 << 16]),
                    );
                    assert!(torch.semantics.reduced_float_scalars == ScalarPrecision::Float32);
                    run_opmath(op, d, &x, s, &mut fast.data);
                    general_opmath(op, d, &x, s, &mut slow.data);
                    assert_eq!(fast, slow, "{name} {} {s}", op.name());
                }
            }
        }
    }

    /// Every op on random arrays of every pair: the fused fast path (`run_binary`) gives the
    /// general chunked path's bits, or the first difference is reported.
    fn fast_equals_general(pairs: &[(&str, &str)], ops: &[Op], n: usize, seed: u64) {
        let mut rng = crate::synth::Rng::new(seed);
        let random = |d: DType, rng: &mut crate::synth::Rng| {
            let w = d.pattern_bits();
            let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            let bits: Vec<[u64; 2]> = (0..n)
                .map(|_| {
                    let im = if d.is_complex() {
                        rng.next_u64() & mask
                    } else {
                        0
                    };
                    [rng.next_u64() & mask, im]
                })
                .collect();
            Array::from_bits(d, vec![n], &bits).unwrap()
        };
        for &(l, r) in pairs {
            let (a, b) = (
                Arg::Array(random(DType::named(l).unwrap(), &mut rng)),
                Arg::Array(random(DType::named(r).unwrap(), &mut rng)),
            );
            for &op in ops {
                fast_equals_general_on(op, &a, &b); // an op the pair has no plan for is skipped
            }
        }
    }

    /// `op` on two arrays through the fused fast path (`run_binary`) and the general chunked
    /// path (`run_complex` for complex results): the same bits, or a panic naming the first element that differs. `false` when
    /// the policy has no result for the pair (nothing to compare).
    fn fast_equals_general_on(op: Op, a: &Arg, b: &Arg) -> bool {
        let Ok((out_dtype, shape, x, y, c)) = plan(jax(), op, a, b, DEFAULT_MAX_ELEMENTS) else {
            return false;
        };
        let mut fast = Array::zeroed(out_dtype, shape.clone());
        run_binary(op, c, &x, &y, &mut fast.data);
        let mut slow = Array::zeroed(out_dtype, shape);
        if c.is_complex() {
            run_complex(op, c, &x, &y, &mut slow.data);
        } else {
            run_chunked(op, c, &x, &y, &mut slow.data);
        }
        if fast != slow {
            let (fb, sb) = (fast.bits(), slow.bits());
            let i = (0..fb.len())
                .find(|&i| fb[i] != sb[i])
                .expect("arrays differ");
            let (Arg::Array(aa), Arg::Array(bb)) = (a, b) else {
                panic!("array operands")
            };
            panic!(
                "{} {} {}: element {i}: {:x?} {:x?} -> fast {:x?} general {:x?}",
                aa.dtype.name(),
                op.name(),
                bb.dtype.name(),
                aa.bits()[i.min(aa.len() - 1)],
                bb.bits()[i.min(bb.len() - 1)],
                fb[i],
                sb[i]
            );
        }
        true
    }

    /// `astype_bool_bytes` reads every byte as NumPy reads a bool (nonzero true: NumPy's
    /// `frombuffer(bytes(range(256)), bool).astype(t)` is 0 then 255 ones) and equals
    /// `apply_with` on the checked bool array of those truths, under every shipped policy and
    /// for every plain destination; other destinations are `None`, with `alloc` not called.
    #[test]
    fn bool_bytes_convert_as_numpy_reads_them() {
        let bytes: Vec<u8> = (0..=255).collect();
        let truths: Vec<[u64; 2]> = bytes.iter().map(|&b| [u64::from(b != 0), 0]).collect();
        let checked = Array::from_bits(DType::Bool, vec![256], &truths).unwrap();
        for name in [
            "numpy",
            "torch",
            "torch-float64",
            "jax",
            "jax-x32",
            "tensorflow",
            "array-api",
        ] {
            let policy = crate::kernels::policy(name).unwrap();
            for to in ["int8", "uint16", "int32", "uint64", "float32", "float64"] {
                let to = DType::named(to).unwrap();
                let options = Options {
                    dtype: Some(to),
                    ..Options::default()
                };
                let zeros = |t: DType, s: &[usize]| Ok(Array::zeros(t, s.to_vec())?);
                let fast = astype_bool_bytes(policy, &bytes, &[256], options, zeros).unwrap();
                let args = [Arg::Array(checked.clone())];
                let general = apply(policy, OpId::ASTYPE, &args, options).unwrap();
                assert_eq!(fast, Some(general), "{name} bool -> {}", to.name());
            }
            for to in [
                "bool",
                "float16",
                "bfloat16",
                "int4",
                "complex64",
                "float8_e4m3fn",
            ] {
                let options = Options {
                    dtype: DType::named(to),
                    ..Options::default()
                };
                let never = |_: DType, _: &[usize]| -> Result<Array, OpError> {
                    panic!("alloc called for bool -> {to}")
                };
                let r = astype_bool_bytes(policy, &bytes, &[256], options, never);
                assert_eq!(r, Ok(None), "{name} bool -> {to}");
            }
        }
        let options = Options {
            dtype: Some(DType::Float32),
            ..Options::default()
        };
        let zeros = |t: DType, s: &[usize]| Ok(Array::zeros(t, s.to_vec())?);
        let policy = crate::kernels::policy("numpy").unwrap();
        let short = astype_bool_bytes(policy, &bytes, &[255], options, zeros);
        assert_eq!(short.unwrap_err().kind, ErrorKind::Input);
    }

    /// Every fast astype (the caster's kernels, `as` conversions, pattern tables) gives the
    /// codec's bits, for every pair of real dtypes in the catalogue, on every pattern of
    /// sources of at most 16 bits and on boundary, special and random patterns of wider ones;
    /// again with the AVX-512 loops switched off.
    #[test]
    fn astype_fast_paths_equal_the_general_path() {
        let names = [
            "bool",
            "int1",
            "int2",
            "int4",
            "uint1",
            "uint2",
            "uint4",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float16",
            "bfloat16",
            "float32",
            "float64",
            "float8_e4m3fn",
            "float8_e5m2fnuz",
            "float4_e2m1fn",
        ];
        let dtypes: Vec<DType> = names.iter().map(|n| DType::named(n).unwrap()).collect();
        let mut rng = crate::synth::Rng::new(11);
        let wide = |d: DType, rng: &mut crate::synth::Rng| -> Vec<u64> {
            let mut v: Vec<u64> = Vec::new();
            let w = d.pattern_bits();
            if w <= 16 {
                return (0..1u64 << w).collect();
            }
            let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            // Integers near every power of two and its negation.
            for k in 0..64 {
                for delta in [-1i64, 0, 1] {
                    let x = (1u64 << k).wrapping_add(delta as u64);
                    v.extend([x & mask, x.wrapping_neg() & mask]);
                }
            }
            // Floats at and around every integer range's bounds, halves, specials.
            let mut fs: Vec<f64> = vec![0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1e30, -1e30];
            for k in [1, 2, 4, 7, 8, 15, 16, 24, 31, 32, 63, 64] {
                let p = 2f64.powi(k);
                fs.extend([
                    p,
                    -p,
                    p - 1.0,
                    -p - 1.0,
                    p - 0.5,
                    -p - 0.5,
                    p + 0.5,
                    p * 1.5,
                ]);
            }
            fs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN]);
            match d {
                DType::Float32 => {
                    v.extend(fs.iter().map(|&f| (f as f32).to_bits() as u64));
                    v.extend([0x7f80_0001, 0xffc0_1234, 0x0000_0001, 0x8000_0001]);
                    // Either side of ±2^31 (int32's saturation in float32 lanes).
                    v.extend([
                        0x4eff_ffff,
                        0x4f00_0000,
                        0xcf00_0000,
                        0xcf00_0001,
                        0xceff_ffff,
                    ]);
                }
                DType::Float64 => {
                    v.extend(fs.iter().map(|&f| f.to_bits()));
                    v.extend([
                        0x7ff0_0000_0000_0001,
                        0xfff8_0000_dead_beef,
                        1,
                        0x3ff0_0000_1000_0001,
                    ]);
                }
                _ => {}
            }
            v.extend((0..5000).map(|_| rng.next_u64() & mask));
            v
        };
        let check = |rng: &mut crate::synth::Rng| {
            for &from in &dtypes {
                let bits: Vec<[u64; 2]> = wide(from, rng).into_iter().map(|b| [b, 0]).collect();
                let a = Array::from_bits(from, vec![bits.len()], &bits).unwrap();
                for &to in &dtypes {
                    let fast = astype(&a, to);
                    let general = astype_general(&a, to);
                    if fast != general {
                        let (f, g) = (fast.bits(), general.bits());
                        let k = (0..f.len()).find(|&k| f[k] != g[k]).unwrap();
                        panic!(
                            "{} {:#x} -> {}: fast {:#x}, codec {:#x}",
                            from.name(),
                            bits[k][0],
                            to.name(),
                            f[k][0],
                            g[k][0]
                        );
                    }
                }
            }
        };
        check(&mut rng);
        #[cfg(target_arch = "x86_64")]
        {
            crate::kernels::stream::set_avx512_enabled(false);
            check(&mut rng);
            crate::kernels::stream::set_avx512_enabled(true);
        }
    }

    #[test]
    fn mid_size_arrays_run_on_the_pair_with_the_same_bits() {
        // Between `PAIR_MIN_BYTES` and the least `parallel_min_bytes` (512 KiB): a float32 and
        // an int8 pair, a comparison of mixed dtypes and a broadcast scalar; random bits.
        let n = 40_000;
        let mut rng = crate::synth::Rng::new(42);
        let mut random = |d: &str, n: usize| {
            let d = DType::named(d).unwrap();
            let mask = (1u64 << d.pattern_bits()) - 1;
            let bits: Vec<[u64; 2]> = (0..n).map(|_| [rng.next_u64() & mask, 0]).collect();
            Arg::Array(Array::from_bits(d, vec![n], &bits).unwrap())
        };
        let (f, g) = (random("float32", n), random("float32", n));
        let (i, j, k) = (
            random("int8", 2 * n),
            random("int8", 2 * n),
            random("int8", n),
        );
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let tenth = Arg::Scalar(Scalar::Float(0.1));
        for (op, a, b) in [
            (Op::Add, &f, &g),
            (Op::Maximum, &f, &g),
            (Op::Multiply, &i, &j),
            (Op::Less, &k, &f),
            (Op::Add, &f, &tenth),
        ] {
            for _ in 0..20 {
                let pair = two.install(|| binary(jax(), op, a, b)).unwrap();
                let seq = one.install(|| binary(jax(), op, a, b)).unwrap();
                assert_eq!(pair, seq, "{op:?}");
            }
        }
    }

    #[test]
    fn large_arrays_run_in_parallel_chunks_with_the_same_bits() {
        // Long enough for the pool, and more bytes than one core's L2 keeps (a float32 read,
        // one written).
        let n = PARALLEL_MIN.max(crate::kernels::stream::parallel_min_bytes() / 8) + 12345;
        let v: Vec<f32> = (0..n).map(|i| (i as f32).sin() * 1000.0).collect();
        let a = Arg::Array(f32s(&v));
        let b = Arg::Scalar(Scalar::Float(0.1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let par = pool
            .install(|| binary(jax(), Op::Multiply, &a, &b))
            .unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let seq = one.install(|| binary(jax(), Op::Multiply, &a, &b)).unwrap();
        assert_eq!(par, seq);
        let Arg::Array(arr) = &a else { unreachable!() };
        let to = DType::named("float8_e4m3fn").unwrap();
        let cast_par = pool.install(|| astype(arr, to));
        let cast_seq = one.install(|| astype(arr, to));
        assert_eq!(cast_par, cast_seq);
        // float32 array × Python float: float32 (the scalar is weak), the scalar rounded to
        // float32 first.
        assert_eq!(par.dtype, DType::Float32);
        let Data::U32(out) = &par.data else { panic!() };
        assert_eq!(out[12345], (v[12345] * 0.1f64 as f32).to_bits());
    }
}
