//! A kept plan computes what the dispatcher computes: `ops::ArrayPlan::apply_with` equals
//! `ops::apply` bit for bit (and error for error) for every generated policy and binary op, on
//! random dtype pairs, shapes (dimensioned, zero-dim, one-element, broadcast) and bit
//! patterns, the plan made once and applied to fresh values, as the Python binding reuses it.

use typejoin::op::{Arity, CATALOGUE};
use typejoin::ops::{self, Arg, ArrayPlan};
use typejoin::{Array, DType, Data, GENERATED, Rng};

/// An array of `dtype` and `shape` with random valid bit patterns (a third of them zero).
fn random(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Array {
    let width = |d: DType| d.pattern_bits();
    let mask = |w: u32| if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    let (re, im) = if dtype.is_complex() {
        (mask(width(dtype.part())), mask(width(dtype.part())))
    } else {
        (mask(width(dtype)), 0)
    };
    let n = shape.iter().product::<usize>();
    let mut draw = |m: u64| match rng.below(3) {
        0 => 0,
        _ => rng.next_u64() & m,
    };
    let bits: Vec<[u64; 2]> = (0..n).map(|_| [draw(re), draw(im)]).collect();
    Array::from_bits(dtype, shape.to_vec(), &bits).expect("valid patterns")
}

#[test]
fn a_kept_plan_computes_what_apply_computes() {
    const SHAPES: [(&[usize], &[usize]); 5] = [
        (&[5], &[5]),
        (&[], &[4]),
        (&[2, 3], &[3]),
        (&[1], &[6]),
        (&[3], &[]),
    ];
    let dtypes: Vec<DType> = DType::all().collect();
    let binary: Vec<_> = CATALOGUE
        .iter()
        .filter(|o| o.kernel && o.arity == Arity::Binary)
        .map(|o| ops::parse_op(o.name).expect("a kernel op"))
        .collect();
    let mut rng = Rng::new(41);
    let (mut planned, mut compared) = (0, 0);
    for policy in GENERATED {
        for &op in &binary {
            for _ in 0..48 {
                let a = dtypes[rng.below(dtypes.len())];
                let b = if rng.below(3) == 0 {
                    a
                } else {
                    dtypes[rng.below(dtypes.len())]
                };
                let (sa, sb) = SHAPES[rng.below(SHAPES.len())];
                let pair = |rng: &mut Rng| {
                    [
                        Arg::Array(random(rng, a, sa)),
                        Arg::Array(random(rng, b, sb)),
                    ]
                };
                let first = pair(&mut rng);
                let Some(plan) = ArrayPlan::new(policy, op, &first) else {
                    continue;
                };
                planned += 1;
                for args in [first, pair(&mut rng), pair(&mut rng)] {
                    let want = ops::apply(policy, op, &args, ops::Options::default());
                    let got = plan.apply_with(&args, ops::Options::default(), |t, shape| {
                        Ok(Array::zeros(t, shape.to_vec())?)
                    });
                    assert_eq!(
                        got,
                        want,
                        "{} {} on {} {sa:?} and {} {sb:?}",
                        policy.name,
                        op.name(),
                        a.name(),
                        b.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    // Most pairs have a plan; the rest (a dtype the policy lacks, a refused pair) take
    // `ops::apply` in the binding and need none.
    assert!(planned > 1_000, "{planned} plans");
    assert_eq!(compared, 3 * planned);
}

#[test]
fn scalars_and_refused_pairs_have_no_plan() {
    let numpy = typejoin::policy("numpy").expect("generated");
    let add = ops::parse_op("add").expect("a kernel op");
    let x = || Arg::Array(Array::zeros(DType::Float32, vec![2]).expect("small"));
    let one = Arg::Scalar(ops::Scalar::Int(1));
    assert!(ArrayPlan::new(numpy, add, &[x(), one]).is_none());
    let plan = ArrayPlan::new(numpy, add, &[x(), x()]).expect("float32 + float32");
    assert_eq!(
        plan.operands(),
        (
            typejoin::Operand::Array(DType::Float32),
            typejoin::Operand::Array(DType::Float32)
        )
    );
    // NumPy has no bool subtraction: the dispatcher says why, so no plan is kept.
    let subtract = ops::parse_op("subtract").expect("a kernel op");
    let t = || Arg::Array(Array::zeros(DType::Bool, vec![2]).expect("small"));
    assert!(ArrayPlan::new(numpy, subtract, &[t(), t()]).is_none());
    assert!(ops::apply(numpy, subtract, &[t(), t()], ops::Options::default()).is_err());
    // A plan applied to other operands than its own runs the whole dispatcher.
    let int8 = Arg::Array(
        Array::zeros(
            DType::Int {
                bits: 8,
                signed: true,
            },
            vec![2],
        )
        .unwrap(),
    );
    let got = plan.apply_with(&[x(), int8.clone()], ops::Options::default(), |t, s| {
        Ok(Array::zeros(t, s.to_vec())?)
    });
    assert_eq!(
        got,
        ops::apply(numpy, add, &[x(), int8], ops::Options::default())
    );
}

/// `ArrayPlan::elementwise` is offered exactly for the ops and dtypes its doc lists (`+ − × ÷`,
/// `maximum`, `minimum` and the comparisons of two float32 or two float64 arrays under a
/// policy that keeps subnormals, `maximum`/`minimum` only where zero ties go to an operand by
/// place, and the comparisons of such a float against a dtype it holds; `+ − ×`, bitwise ops,
/// `maximum`, `minimum` and comparisons of two arrays of an integer dtype), and its one pass
/// writes what `ops::apply` returns, bit for bit (NaN payloads, subnormals, infinities, zeros
/// of both signs against each other, equal values of two dtypes), at lengths that reach the
/// vector loop's aligned body and its head and tail.
#[test]
fn an_elementwise_plan_computes_what_apply_computes() {
    const SHAPES: [&[usize]; 5] = [&[1], &[7], &[2, 3], &[67], &[3, 50]];
    let dtypes: Vec<DType> = DType::all().collect();
    let binary: Vec<_> = CATALOGUE
        .iter()
        .filter(|o| o.kernel && o.arity == Arity::Binary)
        .map(|o| ops::parse_op(o.name).expect("a kernel op"))
        .collect();
    let mut rng = Rng::new(42);
    for policy in GENERATED {
        let mut offered = Vec::new();
        for &op in &binary {
            for &a in &dtypes {
                for &b in &dtypes {
                    let zeros = |t: DType| Arg::Array(Array::zeros(t, vec![2]).expect("small"));
                    let Some(plan) = ArrayPlan::new(policy, op, &[zeros(a), zeros(b)]) else {
                        continue;
                    };
                    let Some(pass) = plan.elementwise() else {
                        continue;
                    };
                    assert_eq!(pass.operand_dtypes(), [a, b]);
                    assert!(pass.dtype() == a || pass.dtype() == b);
                    offered.push(format!("{} {} {}", op.name(), a.name(), b.name()));
                    let mut cases: Vec<(Array, Array)> = SHAPES
                        .iter()
                        .map(|shape| (random(&mut rng, a, shape), random(&mut rng, b, shape)))
                        .collect();
                    if a != b {
                        // The same values in both dtypes (each the other's cast).
                        let x = random(&mut rng, a, &[67]);
                        cases.push((x.clone(), ops::astype(&x, b)));
                        let y = random(&mut rng, b, &[67]);
                        cases.push((ops::astype(&y, a), y));
                    } else if let DType::Float32 | DType::Float64 = a {
                        // ±0 against ∓0 and each other, a quiet NaN against a zero.
                        let sign = 1u64 << (a.pattern_bits() - 1);
                        let nan = match a {
                            DType::Float32 => 0x7fc0_0000,
                            _ => 0x7ff8 << 48,
                        };
                        let bits = |v: [u64; 4]| {
                            let v: Vec<[u64; 2]> = v.iter().map(|&b| [b, 0]).collect();
                            Array::from_bits(a, vec![4], &v).expect("valid patterns")
                        };
                        cases.push((bits([0, sign, sign, nan]), bits([sign, 0, sign, 0])));
                    }
                    for (x, y) in cases {
                        let shape = x.shape().to_vec();
                        let args = [Arg::Array(x.clone()), Arg::Array(y.clone())];
                        let want = ops::apply(policy, op, &args, ops::Options::default())
                            .expect("two arrays of one dtype");
                        let mut got = Array::zeros(pass.out_dtype(), shape.clone()).expect("small");
                        pass.apply(&x, &y, &mut got)
                            .expect("three arrays of one shape");
                        assert_eq!(got, want, "{} {} {x:?} {y:?}", policy.name, op.name());
                        // The same pass on the storage alone (the Python binding's buffers).
                        let (t, n) = (pass.out_dtype(), x.len());
                        let mut raw = Data::zeros(t.unit(), n);
                        pass.run(x.data().clone(), y.data().clone(), &mut raw)
                            .expect("storage of one length");
                        let raw = Array::new(t, shape.clone(), raw).expect("a result");
                        assert_eq!(raw, want, "{} {} {x:?} {y:?}", policy.name, op.name());
                    }
                    // Arrays of another shape or dtype are refused, nothing written.
                    let (x, y) = (random(&mut rng, a, &[3]), random(&mut rng, b, &[3]));
                    let mut out = Array::zeros(pass.out_dtype(), vec![4]).expect("small");
                    assert!(pass.apply(&x, &y, &mut out).is_err());
                    assert_eq!(out, Array::zeros(pass.out_dtype(), vec![4]).expect("small"));
                    if a != b {
                        let mut out = Array::zeros(pass.out_dtype(), vec![3]).expect("small");
                        assert!(pass.apply(&y, &x, &mut out).is_err());
                    }
                    let mut raw = Data::zeros(pass.out_dtype().unit(), 4);
                    assert!(
                        pass.run(x.data().clone(), y.data().clone(), &mut raw)
                            .is_err()
                    );
                    assert_eq!(raw, Data::zeros(pass.out_dtype().unit(), 4));
                }
            }
        }
        // Offered wherever the policy computes the op on two arrays of a dtype of its own in it (a
        // comparison: into bool, by no mixed loop) and keeps subnormals, for floats; JAX's and
        // TensorFlow's policies flush them (no float pass), and only NumPy's, the array-api's
        // and python's send zero ties of float32/float64 to an operand by place.
        let s = &policy.semantics;
        let flush = s.subnormals == typejoin::op::Subnormals::Flush;
        let by_place = matches!(
            s.zero_ties,
            typejoin::op::ZeroTies::Second | typejoin::op::ZeroTies::Operand
        );
        let arithmetic = ["add", "subtract", "multiply"];
        let order = ["maximum", "minimum"];
        let compare = [
            "equal",
            "not_equal",
            "less",
            "less_equal",
            "greater",
            "greater_equal",
        ];
        let bitwise = ["bitwise_and", "bitwise_or", "bitwise_xor"];
        let mut want = Vec::new();
        for t in &dtypes {
            let t = *t;
            let ops: Vec<&str> = match t {
                DType::Float32 | DType::Float64 if !flush => {
                    let mut v = arithmetic.to_vec();
                    v.push("true_divide");
                    v.extend(compare);
                    if by_place {
                        v.extend(order);
                    }
                    v
                }
                DType::Int { .. } => [&arithmetic[..], &order, &compare, &bitwise].concat(),
                _ => continue,
            };
            for op in ops {
                let x = || Arg::Array(Array::zeros(t, vec![2]).expect("small"));
                let op_id = ops::parse_op(op).expect("a kernel op");
                let to = if compare.contains(&op) {
                    DType::Bool
                } else {
                    t
                };
                let computed = ops::apply(policy, op_id, &[x(), x()], ops::Options::default());
                let (oa, mixed) = (
                    x().operand(),
                    policy.mixed_loop(op_id, x().operand(), x().operand()),
                );
                // (NumPy's measured loops compare two int4 arrays in int8, not in int4.)
                let in_t = policy.op_type(op_id, oa, oa) == Ok(t);
                // (jax-x32's int64 is int32 to it before any op: no plan is kept.)
                let canonical = policy.canonical_dtype(t) == t;
                if computed.is_ok_and(|r| r.dtype() == to) && !mixed && canonical && in_t {
                    want.push(format!("{op} {} {}", t.name(), t.name()));
                }
            }
            // A float32/float64 compared against a dtype it holds, either side, computed in
            // the float (no mixed loop, each dtype the policy's own).
            let held: &[&str] = match t {
                DType::Float32 if !flush => &["bool", "int8", "uint8", "int16", "uint16"],
                DType::Float64 if !flush => &[
                    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float32",
                ],
                _ => &[],
            };
            for d in held.iter().map(|d| DType::named(d).expect("a dtype")) {
                for op in compare {
                    let op_id = ops::parse_op(op).expect("a kernel op");
                    for (a, b) in [(t, d), (d, t)] {
                        let (oa, ob) = (
                            Arg::Array(Array::zeros(a, vec![2]).expect("small")).operand(),
                            Arg::Array(Array::zeros(b, vec![2]).expect("small")).operand(),
                        );
                        let canonical = [a, b].iter().all(|&u| policy.canonical_dtype(u) == u);
                        if policy.op_type(op_id, oa, ob) == Ok(t)
                            && !policy.mixed_loop(op_id, oa, ob)
                            && canonical
                        {
                            want.push(format!("{op} {} {}", a.name(), b.name()));
                        }
                    }
                }
            }
        }
        offered.sort();
        want.sort();
        assert_eq!(offered, want, "{}", policy.name);
        if policy.name == "numpy" {
            // The pair benches/compare_python.py --ops times: NumPy compares it in float32.
            assert!(offered.contains(&"less int8 float32".to_string()));
            assert!(offered.contains(&"greater_equal float64 uint32".to_string()));
        }
    }
}
