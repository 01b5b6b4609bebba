//! The reference kernels against the oracle: all 390 cases of
//! tests/data/kernels/cases.jsonl (JAX's result dtypes, IEEE-correct values, canonical NaN),
//! through the same line protocol `typejoin run` speaks; and the protocol's error handling.

use std::process::{Command, Stdio};

use serde_json::Value;
use typejoin::Generated;
use typejoin::conformance::{Limits, run_line};

use crate::root;

/// `policy`'s table with the IEEE-value contract's conventions (NumPy's values where its loops
/// agree, docs/kernels.md), not its library's own: the shared oracle and the data computed with
/// NumPy for JAX's dtypes run under the jax policies' tables so.
fn ieee(policy: &Generated) -> Generated {
    use typejoin::op;
    Generated {
        semantics: op::Semantics {
            python_int: op::PythonInt::Fit,
            integer_division_by_zero: op::DivisionByZero::Zero,
            remainder_zero_sign: op::ZeroSign::Divisor,
            zero_ties: op::ZeroTies::Second,
            complex_add: op::ComplexAdd::Parts,
            float_floor_divide: op::FloatFloorDivide::Divmod,
            subnormals: op::Subnormals::Keep,
            complex_order: op::ComplexOrder::NumPy,
            complex_divide: op::ComplexDivide::Smith,
            complex_multiply: op::ComplexMultiply::Fused,
            bool_multiply: op::BoolMultiply::Product,
            clip_composition: op::ClipComposition::Joined,
            broadcast_divisor: op::BroadcastDivisor::Divide,
            narrowing: op::Narrowing::Once,
            ..policy.semantics
        },
        ..*policy
    }
}

fn lines(rel: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(rel))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_oracle_case_is_bit_exact() {
    let jax = &ieee(typejoin::policy("jax").unwrap());
    let cases = lines("tests/data/kernels/cases.jsonl");
    let expected = lines("tests/data/kernels/expected_jax_policy.jsonl");
    assert_eq!((cases.len(), expected.len()), (390, 390));
    let (mut values, mut errors) = (0, 0);
    for (case, want) in cases.iter().zip(&expected) {
        let got: Value = serde_json::from_str(&run_line(jax, case, Limits::default())).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(got["id"], want["id"]);
        if want.get("error").is_some() {
            assert_eq!(got["kind"], want["kind"], "case {}: {got}", want["id"]);
            errors += 1;
        } else {
            assert_eq!(got, want, "case {}", want["id"]);
            values += 1;
        }
    }
    assert_eq!((values, errors), (372, 18));
}

#[test]
fn a_bad_line_fails_alone_and_stdin_works() {
    let input = [
        r#"{"id": 1, "op": "add", "args": [{"dtype": "int8", "shape": [2], "bits": [1, 255]}, {"scalar": "int", "value": 300}]}"#,
        "not json",
        r#"{"id": 3, "op": "ad", "args": []}"#,
        r#"{"id": 4, "op": "add", "args": [{"dtype": "int8", "shape": [3], "bits": [1]}, {"scalar": "int", "value": 1}]}"#,
        r#"{"id": 5, "op": "add", "args": [{"dtype": "float8_e4m3fn", "shape": [1], "bits": [56]}, {"dtype": "float32", "shape": [1], "bits": [0]}]}"#,
        r#"{"id": 6, "op": "bitwise_and", "args": [{"dtype": "float32", "shape": [1], "bits": [0]}, {"dtype": "float32", "shape": [1], "bits": [0]}]}"#,
        r#"{"id": 7, "op": "add", "args": [{"dtype": "int8", "shape": [2], "bits": [1, 255]}, {"scalar": "int", "value": 2}]}"#,
        r#"{"id": 8, "op": "add", "args": [{"scalar": "float", "value": 1e999}, {"scalar": "int", "value": 2}]}"#,
    ]
    .join("\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["run", "-", "--policy", "jax"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 8);
    let kinds: Vec<&str> = out
        .iter()
        .map(|v| v["kind"].as_str().unwrap_or("ok"))
        .collect();
    assert_eq!(
        kinds,
        [
            "ok",
            "input",
            "unsupported",
            "input",
            "promotion",
            "unsupported",
            "ok",
            "input"
        ]
    );
    // JAX converts a Python int that fits int64 to the computation dtype: 300 wraps to 44.
    assert_eq!(
        out[0],
        serde_json::json!({"id": 1, "dtype": "int8", "shape": [2], "bits": [45, 43]})
    );
    assert_eq!(out[2]["error"], "unknown op `ad`; did you mean `add`?");
    assert_eq!(
        out[4]["error"],
        "no promotion for float8_e4m3fn and float32 in the jax policy (they have no unique least \
         upper bound); cast one operand explicitly, e.g. .astype(float32)"
    );
    assert_eq!(
        out[6],
        serde_json::json!({"id": 7, "dtype": "int8", "shape": [2], "bits": [3, 1]})
    );
    assert_eq!(out[1]["id"], Value::Null);
    // A number past float64's range is not read; the case's id still is.
    assert_eq!(out[7]["id"], 8);
    assert!(out[7]["error"].as_str().unwrap().starts_with("not JSON"));
}

/// Shapes whose element count overflows, or whose broadcast is too large to allocate, are
/// input errors, not panics or aborts.
#[test]
fn impossible_shapes_are_input_errors() {
    let jax = typejoin::policy("jax").unwrap();
    let zeros = vec!["0"; 100_000].join(",");
    let cases = [
        (
            r#"{"id": 1, "op": "add", "args": [{"dtype": "int8", "shape": [4294967296, 4294967296], "bits": []}, {"scalar": "int", "value": 1}]}"#.to_string(),
            "argument 0: shape [4294967296, 4294967296] has more elements than memory can hold",
        ),
        (
            format!(
                r#"{{"id": 2, "op": "add", "args": [{{"dtype": "int8", "shape": [100000], "bits": [{zeros}]}}, {{"dtype": "int8", "shape": [100000, 1], "bits": [{zeros}]}}]}}"#
            ),
            "broadcasting [100000] with [100000, 1] gives shape [100000, 100000], over the limit of 268435456 elements (raise it with --max-elements)",
        ),
    ];
    for (line, message) in cases {
        let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
        assert_eq!(
            (&got["kind"], &got["error"]),
            (&"input".into(), &message.into())
        );
    }
}

/// The result-size limit is a value each call carries, not process state: on two threads at
/// once, the same `where` (three operands broadcast to 3 × 3) and `sum` are refused under a
/// limit of 8 elements and answered under 9.
#[test]
fn the_element_limit_travels_with_each_call() {
    let jax = typejoin::policy("jax").unwrap();
    let select = r#"{"id": 1, "op": "where", "args": [{"dtype": "bool", "shape": [3, 1], "bits": [1, 0, 1]}, {"dtype": "int8", "shape": [1, 3], "bits": [1, 2, 3]}, {"scalar": "int", "value": 0}]}"#;
    let sum = r#"{"id": 2, "op": "sum", "axis": 0, "args": [{"dtype": "int8", "shape": [0, 3, 3], "bits": []}]}"#;
    let under = |max_elements| Limits {
        max_elements,
        ..Limits::default()
    };
    let answer = |line: &str, max| -> Value {
        serde_json::from_str(&run_line(jax, line, under(max))).unwrap()
    };
    std::thread::scope(|s| {
        let small = s.spawn(|| (answer(select, 8), answer(sum, 8)));
        let large = s.spawn(|| (answer(select, 9), answer(sum, 9)));
        let (small, large) = (small.join().unwrap(), large.join().unwrap());
        assert_eq!(
            small.0["error"],
            "broadcasting [3, 1] with [1, 3] gives shape [3, 3], over the limit of 8 elements (raise it with --max-elements)"
        );
        assert_eq!(
            small.1["error"],
            "sum over axis 0 of [0, 3, 3] gives shape [3, 3], over the limit of 8 elements (raise it with --max-elements)"
        );
        assert_eq!(
            large.0,
            serde_json::json!({"id": 1, "dtype": "int8", "shape": [3, 3], "bits": [1, 2, 3, 0, 0, 0, 1, 2, 3]})
        );
        assert_eq!(
            large.1,
            serde_json::json!({"id": 2, "dtype": "int64", "shape": [3, 3], "bits": [0, 0, 0, 0, 0, 0, 0, 0, 0]})
        );
    });
}

/// Cases the shared oracle does not cover, measured from NumPy + ml_dtypes by
/// scripts/oracle_kernels_extra.py where NumPy's result dtype is JAX's: floor_divide, power,
/// comparisons, bitwise ops, negative/absolute, maximum/minimum with NaN and ±0 over every
/// float8/6/4 format, sub-byte integers, bool, 2-D/3-D broadcasting, complex64 (NumPy's fused
/// multiply-adds), astype across kinds, and sums along each axis.
#[test]
fn every_extra_case_matches_numpy() {
    let jax = &ieee(typejoin::policy("jax").unwrap());
    let cases = lines("tests/data/kernels/extra_cases.jsonl");
    let expected = lines("tests/data/kernels/extra_expected.jsonl");
    assert_eq!(cases.len(), expected.len());
    assert!(cases.len() >= 350);
    let mut ops = std::collections::BTreeSet::new();
    for (case, want) in cases.iter().zip(&expected) {
        let c: Value = serde_json::from_str(case).unwrap();
        ops.insert(c["op"].as_str().unwrap().to_string());
        let got: Value = serde_json::from_str(&run_line(jax, case, Limits::default())).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        if want.get("error").is_some() {
            assert_eq!(got["kind"], want["kind"], "case {}: {got}", want["id"]);
        } else {
            assert_eq!(got, want, "case {}", want["id"]);
        }
    }
    assert_eq!(ops.len(), 24, "{ops:?}"); // every op of the catalogue, remainder, clip and where
}

/// Issue 17's first miss, measured from JAX 0.10.2: a Python int is parsed as the policy's
/// Python-int type before it combines, so outside int64 (x64) or int32 (x32) it raises
/// OverflowError whatever the other operand (`float16 + 2**63`, `uint64 + 2**63`), and just
/// inside it combines (`float16 + (2**63 - 1)` is inf). Integers beyond 64 bits arrive as JSON
/// floats (their side of every 64-bit range kept) or exactly as strings.
#[test]
fn a_python_int_outside_the_policys_int_type_overflows() {
    let jax = typejoin::policy("jax").unwrap();
    let x32 = typejoin::policy("jax-x32").unwrap();
    let case = |dtype: &str, bits: u64, value: &str| {
        format!(
            r#"{{"id":1,"op":"add","args":[{{"dtype":"{dtype}","shape":[1],"bits":[{bits}]}},{{"scalar":"int","value":{value}}}]}}"#
        )
    };
    let kind = |policy, line: &str| -> Value {
        let got: Value = serde_json::from_str(&run_line(policy, line, Limits::default())).unwrap();
        got.get("kind").cloned().unwrap_or(got["bits"].clone())
    };
    let one_f16 = 0x3c00;
    for (policy, dtype, bits, value, want) in [
        (
            jax,
            "float16",
            one_f16,
            "9223372036854775808",
            "overflow".into(),
        ),
        (
            jax,
            "float16",
            one_f16,
            "-9223372036854775809",
            "overflow".into(),
        ),
        (
            jax,
            "float16",
            one_f16,
            "18446744073709551616",
            "overflow".into(),
        ),
        (
            jax,
            "float16",
            one_f16,
            "\"-9223372036854775809\"",
            "overflow".into(),
        ),
        (jax, "uint64", 0, "9223372036854775808", "overflow".into()),
        (jax, "float32", 0, "9223372036854775808", "overflow".into()),
        (
            jax,
            "float16",
            one_f16,
            "9223372036854775807",
            serde_json::json!([0x7c00]),
        ),
        (
            jax,
            "float16",
            one_f16,
            "\"-9223372036854775808\"",
            serde_json::json!([0xfc00]),
        ),
        (x32, "float32", 0, "2147483648", "overflow".into()),
        (x32, "float16", one_f16, "-2147483649", "overflow".into()),
        (
            x32,
            "float32",
            0,
            "2147483647",
            serde_json::json!([0x4f00_0000]),
        ),
    ] {
        let line = case(dtype, bits, value);
        assert_eq!(kind(policy, &line), want, "{}: {line}", policy.name);
    }
}

/// Issue 17's second miss: float8_e8m0fnu (powers of two 2^-127 … 2^127, no zero) multiplied
/// or divided below 2^-127 rounds to its smallest value 2^-127 (0x00), not NaN (0xff), and
/// overflows to NaN above 2^127. ml_dtypes 0.6.0 computes through float32, where 2^-254
/// underflows to 0, and answers 0xff for both underflows here: typejoin is correctly rounded.
#[test]
fn float8_e8m0fnu_underflow_rounds_to_its_smallest_value() {
    let jax = typejoin::policy("jax").unwrap();
    let e8m0 = |op: &str, a: &[u8], b: &[u8]| -> Value {
        let line = serde_json::json!({"id": 1, "op": op, "args": [
            {"dtype": "float8_e8m0fnu", "shape": [a.len()], "bits": a},
            {"dtype": "float8_e8m0fnu", "shape": [b.len()], "bits": b},
        ]});
        let got: Value =
            serde_json::from_str(&run_line(jax, &line.to_string(), Limits::default())).unwrap();
        got["bits"].clone()
    };
    // 2^-127·2^-127, 2^-127·2^-1, 2^-126·2^-1, 2^0·2^-127, 2^127·2^127
    assert_eq!(
        e8m0("multiply", &[0, 0, 1, 127, 254], &[0, 126, 126, 0, 254]),
        serde_json::json!([0, 0, 0, 0, 255])
    );
    // 2^-127/2^127, 2^-127/2^0, 2^-126/2^1, 2^0/2^127, 2^127/2^-127
    assert_eq!(
        e8m0(
            "true_divide",
            &[0, 0, 1, 127, 254],
            &[254, 127, 128, 254, 0]
        ),
        serde_json::json!([0, 0, 0, 0, 255])
    );
    // 2^-127 + 2^-127 = 2^-126; 1 + 1/2 ties up to 2; 2^127 + 2^127 overflows.
    assert_eq!(
        e8m0("add", &[0, 127, 254], &[0, 126, 254]),
        serde_json::json!([1, 128, 255])
    );
    // 70,000 elements take the table path (`fused_pairs`), built by the same general path.
    let zeros = vec![0u8; 70_000];
    assert_eq!(e8m0("multiply", &zeros, &zeros), serde_json::json!(zeros));
}

/// clip's result dtype is the n-ary join, not a chain of binary results: under JAX,
/// int8 ∨ f* ∨ bfloat16 is bfloat16 (the Python float gives way to bfloat16), where folding
/// through int8 ∨ f* = float64 would give float64. Every operand is converted once.
#[test]
fn clip_computes_in_the_n_ary_join() {
    use typejoin::{
        Array, DType,
        ops::{Arg, Scalar, clip},
    };
    let jax = typejoin::policy("jax").unwrap();
    let i8 = DType::named("int8").unwrap();
    let bf16 = DType::named("bfloat16").unwrap();
    // int8 [-100, 5, 100], lo = 0.5 (a Python float), hi = bfloat16 [50.0] (0x4248)
    let x = Arg::Array(Array::from_bits(i8, vec![3], &[[156, 0], [5, 0], [100, 0]]).unwrap());
    let lo = Arg::Scalar(Scalar::Float(0.5));
    let hi = Arg::Array(Array::from_bits(bf16, vec![1], &[[0x4248, 0]]).unwrap());
    let r = clip(jax, &x, &lo, &hi).unwrap();
    assert_eq!(r.dtype(), bf16);
    // 0.5, 5.0, 50.0 as bfloat16
    assert_eq!(r.bits(), vec![[0x3f00, 0], [0x40a0, 0], [0x4248, 0]]);
}

/// `where`'s result dtype is the join of its two values only: a float32 condition does not
/// promote int8 values, and an int8 array with a Python float is the Python float's
/// materialisation (float64 under JAX with x64, float32 without).
#[test]
fn where_joins_its_two_values() {
    use typejoin::{
        Array, DType,
        ops::{Arg, Scalar, select},
    };
    let i8 = DType::named("int8").unwrap();
    let cond = Arg::Array(
        Array::from_bits(
            DType::Float32,
            vec![3],
            &[[0x8000_0000, 0], [0x7fc0_0000, 0], [0, 0]], // -0.0, NaN, 0.0
        )
        .unwrap(),
    );
    let x = Arg::Array(Array::from_bits(i8, vec![3], &[[1, 0], [2, 0], [3, 0]]).unwrap());
    let y = Arg::Array(Array::from_bits(i8, vec![1], &[[0xff, 0]]).unwrap());
    let jax = typejoin::policy("jax").unwrap();
    let r = select(jax, &cond, &x, &y).unwrap();
    assert_eq!(r.dtype(), i8);
    assert_eq!(r.bits(), vec![[0xff, 0], [2, 0], [0xff, 0]]);
    let half = Arg::Scalar(Scalar::Float(0.5));
    let r = select(jax, &cond, &x, &half).unwrap();
    assert_eq!(r.dtype(), DType::Float64);
    assert_eq!(r.bits()[1], [2.0f64.to_bits(), 0]);
    assert_eq!(r.bits()[0], [0.5f64.to_bits(), 0]);
    let x32 = typejoin::policy("jax-x32").unwrap();
    assert_eq!(
        select(x32, &cond, &x, &half).unwrap().dtype(),
        DType::Float32
    );
}

/// Every case of a library's measured data (`tests/data/kernels/<cases>.jsonl` with the
/// answers in `<expected>.jsonl`, written by a `scripts/oracle_*.py`) answered by
/// `typejoin run --policy <policy>` exactly as the library: dtype, shape and bits (NaN results written as the canonical quiet NaN), or an
/// error of the kind the library's exception maps to. Returns the ops the data covers and the
/// error kinds it holds.
fn library_cases_are_bit_exact(
    policy: &str,
    cases: &str,
    expected: &str,
) -> (
    std::collections::BTreeSet<String>,
    std::collections::BTreeMap<String, usize>,
) {
    library_cases_are_bit_exact_of(typejoin::policy(policy).unwrap(), cases, expected)
}

/// [`library_cases_are_bit_exact`] under a policy given as such.
fn library_cases_are_bit_exact_of(
    generated: &Generated,
    cases: &str,
    expected: &str,
) -> (
    std::collections::BTreeSet<String>,
    std::collections::BTreeMap<String, usize>,
) {
    let stem = expected;
    let cases = lines(&format!("tests/data/kernels/{cases}.jsonl"));
    let expected = lines(&format!("tests/data/kernels/{expected}.jsonl"));
    assert_eq!(cases.len(), expected.len());
    assert!(cases.len() >= 1500, "{}", cases.len());
    let mut ops = std::collections::BTreeSet::new();
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    let mut wrong = Vec::new();
    for (case, want) in cases.iter().zip(&expected) {
        let c: Value = serde_json::from_str(case).unwrap();
        ops.insert(c["op"].as_str().unwrap().to_string());
        let got: Value =
            serde_json::from_str(&run_line(generated, case, Limits::default())).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        let ok = match want.get("kind") {
            Some(kind) => {
                *kinds.entry(kind.as_str().unwrap().into()).or_default() += 1;
                got["kind"] == *kind
            }
            None => got == want,
        };
        if !ok && wrong.len() < 5 {
            wrong.push(format!("{case}\n  {stem}: {want}\n  typejoin: {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    (ops, kinds)
}

/// `torch.clamp` of an integer tensor with Python-int bounds, measured on torch 2.15: a lower
/// bound above the dtype's range or an upper bound below it raises ("Clamp min value 300 is
/// outside the representable range of Byte"), the lower checked first; a bound beyond the
/// other end bounds nothing.
#[test]
fn torch_clamps_integers_with_bounds_past_the_range_as_measured() {
    let torch = typejoin::policy("torch").unwrap();
    let clamp = |dtype: &str, x: &[i64], lo: i64, hi: i64| {
        let bits: Vec<u64> = x
            .iter()
            .map(|&v| {
                (v as u64)
                    & if dtype == "uint8" || dtype == "int8" {
                        0xff
                    } else {
                        u64::MAX
                    }
            })
            .collect();
        let line = serde_json::json!({"id": 0, "op": "clip", "args": [
            {"dtype": dtype, "shape": [x.len()], "bits": bits},
            {"scalar": "int", "value": lo}, {"scalar": "int", "value": hi}]});
        let got: Value =
            serde_json::from_str(&run_line(torch, &line.to_string(), Limits::default())).unwrap();
        match got.get("kind") {
            Some(kind) => Err(kind.as_str().unwrap().to_string()),
            None => Ok(got["bits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap())
                .collect::<Vec<u64>>()),
        }
    };
    let (u, i) = ([0, 5, 100, 250, 255], [-128, -5, 0, 5, 127]);
    let overflow = Err("overflow".to_string());
    assert_eq!(clamp("uint8", &u, -129, 255), Ok(vec![0, 5, 100, 250, 255]));
    assert_eq!(clamp("uint8", &u, -1, 300), Ok(vec![0, 5, 100, 250, 255]));
    assert_eq!(clamp("uint8", &u, -1, 3), Ok(vec![0, 3, 3, 3, 3]));
    assert_eq!(clamp("uint8", &u, 3, 256), Ok(vec![3, 5, 100, 250, 255]));
    assert_eq!(clamp("uint8", &u, 300, 400), overflow);
    assert_eq!(clamp("uint8", &u, -5, -1), overflow);
    assert_eq!(clamp("uint8", &u, 256, 3), overflow);
    assert_eq!(clamp("int8", &i, -200, 200), Ok(vec![128, 251, 0, 5, 127]));
    assert_eq!(clamp("int8", &i, -129, 0), Ok(vec![128, 251, 0, 0, 0]));
    assert_eq!(clamp("int8", &i, 5, 128), Ok(vec![5, 5, 5, 5, 127]));
    assert_eq!(clamp("int8", &i, 128, 200), overflow);
    assert_eq!(clamp("int8", &i, -300, -200), overflow);
    assert_eq!(clamp("int8", &i, 200, -200), overflow);
    assert_eq!(
        clamp("int64", &[-5, 0, 5, 1 << 62], -1, 3),
        Ok(vec![u64::MAX, 0, 3, 3])
    );
}

/// Issue 17's PyTorch data: 9,278 cases measured from torch 2.15 CPU by scripts/oracle_torch.py
/// (every op of the runner, dimensioned × zero-dim × Python-scalar operands, NaN, ±inf, −0.0,
/// subnormals, integer limits, overflowing Python ints, division by zero, a Python number over
/// a tensor as `t.reciprocal() * s`, subtract refusing any bool operand, Python numbers past a
/// float dtype's range in `clamp` and `where`, two Python ints from 2**63 on as uint64s).
#[test]
fn every_torch_case_is_bit_exact() {
    let (ops, kinds) = library_cases_are_bit_exact("torch", "torch_cases", "torch_expected");
    assert_eq!(ops.len(), 24, "{ops:?}");
    // Each of PyTorch's refusals is represented.
    for k in [
        "unsupported",
        "overflow",
        "zero-division",
        "promotion",
        "input",
    ] {
        assert!(kinds.contains_key(k), "no `{k}` case: {kinds:?}");
    }
}

/// complex32 and bcomplex32 as torch 2.15 computes them: 3,778 cases measured by
/// scripts/oracle_torch_complex32.py (every op with a complex32/bcomplex32 operand or result,
/// casts both ways, `negative`, `absolute`, `where`, `sum`). The parts are rounded to 16 bits
/// after each op computed in complex64, operands converted to the result dtype first (a Python
/// `1 + 2**-12` adds 1); what torch has no CPU kernel for (complex32 division, power, `sum`;
/// bcomplex32 arithmetic) is the measured refusal of observed/torch_categories.json. Every
/// case answers as torch does (the casts into float8_e4m3fn and float8_e8m0fnu too, by torch's
/// own float8 conversions: `float8_conversion = "c10"`).
#[test]
fn every_torch_complex32_case_is_bit_exact() {
    let differ = known_differences("torch", "torch_complex32", 3778, |_, _, _, _| "any");
    assert_eq!(differ, Default::default());
    assert_answer_kinds(
        "torch_complex32",
        &[
            ("computed", 892),
            ("overflow", 29),
            ("promotion", 464),
            ("unsupported", 2393),
        ],
    );
}

/// PyTorch's float8 dtypes as torch 2.15 converts into them and computes on them: 10,238
/// cases measured by scripts/oracle_torch_float8.py (every op with a float8 operand or result,
/// casts both ways, `negative`, `absolute`, `where`, `clip`, `multiply` by one element, and
/// `clamp` of every dtype with Python complex bounds, a NaN one filling the result; values
/// about each format's range and rounding midpoints, float64 values that float32 rounds onto a
/// midpoint). torch has `mul` (not by a one-element second operand), `eq`, `ne`, `abs` (not
/// float8_e8m0fnu), `where` and casts for them; every case
/// answers as torch does: `float8_e4m3fn` saturates at ±448, `float8_e8m0fnu` rounds the
/// float32 exponent and ignores the sign, every conversion goes through float32, and a
/// float8 beside a complex zero-dim or Python operand raises as torch's `toComplexType` does.
#[test]
fn every_torch_float8_case_is_bit_exact() {
    let differ = known_differences("torch", "torch_float8", 10238, |_, _, _, _| "any");
    assert_eq!(differ, Default::default());
    assert_answer_kinds(
        "torch_float8",
        &[
            ("computed", 1205),
            ("overflow", 81),
            ("promotion", 3810),
            ("unsupported", 5142),
        ],
    );
    // The same policy converting as ml_dtypes does (`float8_conversion = "nearest"`): the
    // cases where the convention decides, by the dtype that differs.
    let torch = typejoin::policy("torch").unwrap();
    let mut semantics = torch.semantics;
    assert!(semantics.set("float8_conversion", "nearest"));
    let nearest = Generated {
        semantics,
        ..*torch
    };
    let differ = known_differences_of(&nearest, "torch_float8", 10238, |c, _, want, _| {
        fn float8(v: &Value) -> Option<&str> {
            v.as_str().filter(|d| d.starts_with("float8"))
        }
        let args = c["args"].as_array().unwrap();
        match float8(&want["dtype"]).or_else(|| args.iter().find_map(|a| float8(&a["dtype"]))) {
            Some("float8_e4m3fn") => "float8_e4m3fn",
            Some("float8_e8m0fnu") => "float8_e8m0fnu",
            Some("float8_e4m3fnuz" | "float8_e5m2fnuz") => "fnuz",
            Some("float8_e5m2") => "float8_e5m2",
            _ => "other",
        }
    });
    // e4m3fn: saturation; e8m0fnu: the exponent rounding, negatives and zeros; e5m2: float64
    // values and Python floats rounded twice, through float32; fnuz: a NaN read as positive.
    let want: std::collections::BTreeMap<&str, usize> = [
        ("float8_e4m3fn", 85),
        ("float8_e5m2", 7),
        ("float8_e8m0fnu", 57),
        ("fnuz", 12),
    ]
    .into_iter()
    .collect();
    assert_eq!(differ, want);
}

/// TensorFlow 2.21's data (NumPy behaviour, `dtype_conversion_mode="all"`): 11,286 cases
/// measured by scripts/oracle_tensorflow.py (tensors dimensioned and zero-dim, Python
/// scalars on either side, NaN, ±inf, integer limits, Python ints outside int32, division by
/// zero). Its conventions: a Python int is an int32 cast to the join (`int8 + 300` adds 44,
/// `uint8 / -129` divides by 127), integer true division is float32 up to 16 bits and float64
/// from 32, a Python float reaches float16 through float32, integer // and % by zero raise,
/// float // is the floor of the rounded quotient (`1.0 // 0.1` is 10), clip is
/// `maximum(minimum(x, hi), lo)` pairwise (crossed bounds give the lower) keeping `x`'s shape,
/// no bool arithmetic.
#[test]
fn every_tensorflow_case_is_bit_exact() {
    let (ops, kinds) =
        library_cases_are_bit_exact("tensorflow", "tensorflow_cases", "tensorflow_expected");
    assert_eq!(ops.len(), 24, "{ops:?}");
    for k in ["unsupported", "overflow", "zero-division", "input"] {
        assert!(kinds.contains_key(k), "no `{k}` case: {kinds:?}");
    }
}

/// TensorFlow 2.21 with `dtype_conversion_mode="safe"` (`--policy tensorflow-safe`, the
/// measured table observed/tensorflow_safe.json with its kernels): 11,313 cases measured by
/// `scripts/oracle_tensorflow.py --safe`, the same draws as the "all" data. A lossy pair
/// raises (`int8 + uint8`, `int8 + 2.5`: 2,769 promotion errors), the kernels are
/// TensorFlow's (a Python int still wraps: `int8 + 300` adds 44), and the loops are the ones
/// measured (`tnp.bitwise_and(bool, 1)` computes in int64, `uint8 + 1j` in complex128).
#[test]
fn every_tensorflow_safe_case_is_bit_exact() {
    let (ops, kinds) = library_cases_are_bit_exact(
        "tensorflow-safe",
        "tensorflow_safe_cases",
        "tensorflow_safe_expected",
    );
    assert_eq!(ops.len(), 24, "{ops:?}");
    let kinds: Vec<(&str, usize)> = kinds.iter().map(|(k, &n)| (k.as_str(), n)).collect();
    assert_eq!(
        kinds,
        [
            ("input", 7),
            ("overflow", 462),
            ("promotion", 2769),
            ("unsupported", 2641),
            ("zero-division", 174),
        ]
    );
}

/// JAX 0.10.2 measured live by scripts/oracle_jax.py in its three modes, on the same 3,667
/// cases (15 dtypes, every ordered pair under nine binary ops, Python scalars on either side,
/// sum, astype, where): the result dtype or promotion error is JAX's, the values computed
/// with NumPy (the IEEE-value contract, [`ieee`], run on the jax policies' tables; JAX's own
/// values are `every_jax_fuzz_case_is_bit_exact`'s). Without x64 (`jax-x32`, JAX's default) a 64-bit input
/// is converted to its 32-bit type first (`[canonical]`: `uint64 + int8` is int32, not
/// float32; an int64 of 2^32 + 5 adds as 5); `sum` accumulates narrow unsigned integers in the
/// default unsigned type (`lowest_unsigned`); two bools floor-divide, take the remainder
/// and raise as int32 (`bool_result`); strict promotion keeps the op rules.
#[test]
fn every_jax_case_is_bit_exact() {
    for (policy, expected, errors) in [
        ("jax", "jax_x64_expected", [("overflow", 138)].as_slice()),
        ("jax-x32", "jax_x32_expected", &[("overflow", 306)]),
        (
            "jax-strict",
            "jax_strict_expected",
            &[("overflow", 138), ("promotion", 2414)],
        ),
    ] {
        let (ops, kinds) = library_cases_are_bit_exact_of(
            &ieee(typejoin::policy(policy).unwrap()),
            "jax_cases",
            expected,
        );
        assert_eq!(ops.len(), 12, "{policy}: {ops:?}");
        let errors: std::collections::BTreeMap<String, usize> =
            errors.iter().map(|&(k, n)| (k.to_string(), n)).collect();
        assert_eq!(kinds, errors, "{policy}");
    }
}

/// `maximum`, `minimum` and `clip` on ties of zeros (+0 against −0; complex values equal but
/// for a zero's sign), measured live by scripts/oracle_zero_ties.py from NumPy 2.4.6, JAX
/// 0.10.2, torch 2.15 and TensorFlow 2.21 on random arrays of 0–40 elements, mostly ±0,
/// broadcast shapes and Python floats: each library settles them its own way (the `[kernels]
/// zero_ties` convention). NumPy (`operand`): the second operand, the first in float16 and
/// complex and for `clip` with two zero-dim bounds; JAX's own values (`ordered`): maximum +0
/// and minimum −0, a complex tie the second; PyTorch (`vectors`): the second in the 64-byte
/// vectors of each inner row, the first in its tail, `clamp` with two zero-dim bounds its
/// operand; TensorFlow (`packets`): the second in whole 32-byte packets of the flattened
/// result, the first in the rest and in float16/bfloat16.
#[test]
fn every_library_settles_a_tie_of_zeros_as_measured() {
    // No shipped policy computes NumPy's float16 ties: its cases (same-dtype pairs and Python
    // floats, promoted as the jax policy does) run under the jax policy's table with NumPy's
    // value.
    let jax = &ieee(typejoin::policy("jax").unwrap());
    let with = |zero_ties| typejoin::Generated {
        semantics: typejoin::op::Semantics {
            zero_ties,
            ..jax.semantics
        },
        ..*jax
    };
    let numpy = with(typejoin::op::ZeroTies::Operand);
    for (policy, stem, n) in [
        (&numpy, "numpy", 2400),
        (typejoin::policy("jax").unwrap(), "jax", 3231),
        (typejoin::policy("torch").unwrap(), "torch", 1536),
        (typejoin::policy("tensorflow").unwrap(), "tensorflow", 2112),
    ] {
        let cases = lines(&format!("tests/data/kernels/zero_ties_{stem}_cases.jsonl"));
        let expected = lines(&format!(
            "tests/data/kernels/zero_ties_{stem}_expected.jsonl"
        ));
        assert_eq!((cases.len(), expected.len()), (n, n), "{stem}");
        let wrong: Vec<String> = cases
            .iter()
            .zip(&expected)
            .filter_map(|(case, want)| {
                let got: Value =
                    serde_json::from_str(&run_line(policy, case, Limits::default())).unwrap();
                let want: Value = serde_json::from_str(want).unwrap();
                (got != want).then(|| format!("{case}\n  {stem}: {want}\n  typejoin: {got}"))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} of {n} differ:\n{}",
            wrong.len(),
            wrong[..wrong.len().min(3)].join("\n")
        );
    }
}

/// Subnormal numbers as JAX 0.10.2 (XLA on the CPU) and TensorFlow 2.21 treat them, measured
/// live by scripts/oracle_subnormals.py (random arrays drawn mostly from each float dtype's
/// subnormals and the values next to its smallest normal; arithmetic, comparisons, `maximum`,
/// `minimum`, `astype`, `where`, `clip`): both run with the CPU's DAZ and FTZ bits set, the
/// `[kernels] subnormals = "flush"` convention, which the jax and tensorflow policies declare.
#[test]
fn every_library_flushes_subnormals_as_measured() {
    for (policy, stem, n, flushed) in [
        (typejoin::policy("jax").unwrap(), "jax", 414, 239),
        (
            typejoin::policy("tensorflow").unwrap(),
            "tensorflow",
            390,
            216,
        ),
    ] {
        let cases = lines(&format!("tests/data/kernels/subnormals_{stem}_cases.jsonl"));
        let expected = lines(&format!(
            "tests/data/kernels/subnormals_{stem}_expected.jsonl"
        ));
        assert_eq!((cases.len(), expected.len()), (n, n), "{stem}");
        let ieee = typejoin::Generated {
            semantics: typejoin::op::Semantics {
                subnormals: typejoin::op::Subnormals::Keep,
                ..policy.semantics
            },
            ..*policy
        };
        let mut wrong = Vec::new();
        let mut differ_in_ieee = 0;
        for (case, want) in cases.iter().zip(&expected) {
            let got: Value =
                serde_json::from_str(&run_line(policy, case, Limits::default())).unwrap();
            let want: Value = serde_json::from_str(want).unwrap();
            if got != want {
                wrong.push(format!("{case}\n  {stem}: {want}\n  typejoin: {got}"));
            }
            let kept: Value =
                serde_json::from_str(&run_line(&ieee, case, Limits::default())).unwrap();
            differ_in_ieee += usize::from(kept != want);
        }
        assert!(
            wrong.is_empty(),
            "{} of {n} differ:\n{}",
            wrong.len(),
            wrong[..wrong.len().min(3)].join("\n")
        );
        // The convention decides these cases: IEEE gradual underflow answers this many wrong.
        assert_eq!(differ_in_ieee, flushed, "{stem}");
    }
}

/// NumPy 2.4.6 with ml_dtypes 0.6.0, measured live by `scripts/fuzz_libraries.py numpy --seed
/// 40 --cases 3000 --record numpy`: random calls of every binary ufunc of the catalogue and
/// `np.clip` as a user's program makes them (15 dtypes with bfloat16, float8_e4m3fn,
/// float8_e5m2, int4 and uint4; arrays of 1–40 elements, broadcasting, zero-dim arrays, weak
/// Python numbers on either side with their edge values), run by the `numpy` policy generated
/// from observed/numpy_result_type.json. Every case answers as NumPy does (the dtype, every
/// bit, or the kind of error) except float `power`, glibc's `pow` in the kernels where NumPy
/// on this AVX-512 machine calls Intel's SVML (docs/kernels.md). Complex `clip` follows NumPy's loop, complex
/// `power` is `npy_cpow`, `clip` of ml_dtypes operands takes NumPy's legacy loop search
/// (`kernels.search`), ml_dtypes refuses a Python int past int64 and converts a float to uint4
/// as its C++ cast does (`intn_conversion = "wrap"`): 42, 34, 39, 5 and 2 cases that differed
/// before each was modelled.
#[test]
fn every_numpy_case_is_bit_exact_but_the_known_differences() {
    let differ = known_differences("numpy", "numpy", 3000, |c, _, want, got| {
        match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("power", None, None) => "float power (SVML in NumPy)",
            _ => "unclassified",
        }
    });
    let want: std::collections::BTreeMap<&str, usize> =
        [("float power (SVML in NumPy)", 14)].into_iter().collect();
    assert_eq!(differ, want);
}

/// NumPy 2.4.6 with ml_dtypes 0.6.0, measured live by `scripts/fuzz_libraries.py numpy --seed
/// 99991 --cases 2000 --record numpy_ops`: the fuzzer's cases with `where`, `sum` and `astype`
/// drawn besides the binary ops and `clip`. Every case answers as NumPy does but the classes
/// docs/kernels.md lists as not modelled: a NaN's sign in `astype` to float8_e4m3fn of an
/// integer past its range (ml_dtypes and typejoin both give the negative NaN 0xff; the recorder
/// wrote every NaN as the positive one) and float `power` (SVML in NumPy). (Its 13 other
/// `astype`s, floats past an integer's range and one complex64 → uint4, answer as NumPy does
/// since `int_conversion = "x86"` and complex sources of `intn_conversion = "wrap"`; its float
/// sum since `sum_order = "numpy"`.)
#[test]
fn every_numpy_ops_case_is_bit_exact_but_the_declared_classes() {
    let differ = known_differences("numpy", "numpy_ops", 2000, |c, _, want, got| {
        match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("astype", None, None) => "astype: a NaN's sign (recorded canonical)",
            ("power", None, None) => "float power (SVML in NumPy)",
            _ => "unclassified",
        }
    });
    let want: std::collections::BTreeMap<&str, usize> = [
        ("astype: a NaN's sign (recorded canonical)", 2),
        ("float power (SVML in NumPy)", 8),
    ]
    .into_iter()
    .collect();
    assert_eq!(differ, want);
}

/// torch 2.15, measured live by `scripts/fuzz_libraries.py torch --seed 99992 --cases 2000
/// --record torch_ops` (with `where`, `sum` and `astype`): every case answers as PyTorch does.
/// Its 9 `remainder`s in PyTorch's vector loop answer since `float_floor_divide = "vectors"`
/// (Sleef's `fmod` there: NaN where its quotient overflows). A zero's sign in a complex64 quotient answers since complex64 quotients
/// are Smith's with fused multiply-adds in float32, as complex128's are in float64; a Python
/// int past int64 beside a complex bound since `clamp` promotes its bounds as torch does. Its 16
/// `astype`s of a float or complex part past an integer's range answer as PyTorch does since
/// `int_conversion = "x86-c10"`, its 2 float sums since `sum_order = "torch"`.
#[test]
fn every_torch_ops_case_is_bit_exact_but_the_declared_classes() {
    let differ = known_differences("torch", "torch_ops", 2000, |c, _, want, got| {
        match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("remainder", None, None) => "remainder",
            _ => "unclassified",
        }
    });
    assert_eq!(differ, Default::default());
}

/// Float `remainder` and `floor_divide` measured live on torch 2.15 by
/// `scripts/oracle_torch_division.py` (888 cases: rows of 1 to 70 elements, broadcast rows and
/// columns, divisors of one element, Python floats; edge values and quotients that overflow):
/// every one answers as PyTorch does under `float_floor_divide = "vectors"` (Sleef's `fmod` in
/// the 64-byte vectors of each row, float16 and bfloat16 floor division rounded at each step
/// but by a divisor of one element). Under `divmod`, C's `fmod` everywhere and 16-bit floor
/// division rounded once, the counts below differ: the data has teeth.
#[test]
fn torch_division_follows_its_vector_and_scalar_loops() {
    let classify = |c: &Value, _: &str, _: &Value, _: &Value| -> &'static str {
        let dtype = |k: usize| c["args"][k]["dtype"].as_str().unwrap_or("python");
        match (c["op"].as_str().unwrap(), dtype(0), dtype(1)) {
            ("remainder", ..) => "remainder",
            ("floor_divide", "float16" | "bfloat16", _) => "16-bit floor_divide",
            ("floor_divide", "python", "float16" | "bfloat16") => "16-bit floor_divide",
            _ => "other floor_divide",
        }
    };
    let torch = typejoin::policy("torch").unwrap();
    let exact = known_differences_of(torch, "torch_division", 888, classify);
    assert_eq!(exact, Default::default());
    let divmod = typejoin::Generated {
        semantics: typejoin::op::Semantics {
            float_floor_divide: typejoin::op::FloatFloorDivide::Divmod,
            ..torch.semantics
        },
        ..*torch
    };
    let differ = known_differences_of(&divmod, "torch_division", 888, classify);
    let want: std::collections::BTreeMap<&str, usize> =
        [("16-bit floor_divide", 17), ("remainder", 152)]
            .into_iter()
            .collect();
    assert_eq!(differ, want);
}

/// `np.clip` drops a Python-int bound past its integer array's range before the ufunc runs
/// (`clip_bounds = "drop"`), measured on NumPy 2.4.6: the two cases `scripts/fuzz_libraries.py
/// numpy --seed 99952` found, and a lower bound above the range or an upper below it, which
/// still raise; ml_dtypes' int4 is not NumPy's own and keeps the ufunc's check.
#[test]
fn numpy_clip_drops_python_int_bounds_past_an_integer_arrays_range() {
    let numpy = typejoin::policy("numpy").unwrap();
    let answer = |case: &str| -> Value {
        serde_json::from_str(&run_line(numpy, case, Limits::default())).unwrap()
    };
    let measured = [
        (
            r#"{"id": 1932, "op": "clip", "args": [{"dtype": "uint8", "shape": [3], "bits": [1, 7, 1]}, {"scalar": "int", "value": -9223372036854775808}, {"scalar": "int", "value": 18446744073709551615}]}"#,
            r#"{"id": 1932, "dtype": "uint8", "shape": [3], "bits": [1, 7, 1]}"#,
        ),
        (
            r#"{"id": 4597, "op": "clip", "args": [{"dtype": "uint64", "shape": [40], "bits": [8679328039249456128, 16541543296164327424, 13709656371385864192, 0, 0, 13709656371385864192, 3, 13709656371385864192, 7, 100, 3, 0, 0, 0, 1, 16097166403876728832, 1, 1, 7, 1, 0, 100, 0, 3, 2, 3, 0, 0, 13709656371385864192, 7, 0, 16541543296164327424, 100, 100, 0, 2, 17993917932477904896, 0, 13709656371385864192, 13709656371385864192]}, {"scalar": "int", "value": -9223372036854775808}, {"scalar": "int", "value": 300}]}"#,
            r#"{"id": 4597, "dtype": "uint64", "shape": [40], "bits": [300, 300, 300, 0, 0, 300, 3, 300, 7, 100, 3, 0, 0, 0, 1, 300, 1, 1, 7, 1, 0, 100, 0, 3, 2, 3, 0, 0, 300, 7, 0, 300, 100, 100, 0, 2, 300, 0, 300, 300]}"#,
        ),
        (
            r#"{"id": 0, "op": "clip", "args": [{"dtype": "int8", "shape": [3], "bits": [1, 249, 100]}, {"scalar": "int", "value": 0}, {"scalar": "int", "value": 9223372036854775808}]}"#,
            r#"{"id": 0, "dtype": "int8", "shape": [3], "bits": [1, 0, 100]}"#,
        ),
        // One bound dropped: `np.maximum(x, lo)` or `np.minimum(x, hi)`, the other bound alone
        // (fresh seed 100021 found the first: the kernels clipped inf to 2**32 - 1).
        (
            r#"{"id": 0, "op": "clip", "args": [{"dtype": "uint32", "shape": [3], "bits": [969413556, 3316527756, 1]}, {"scalar": "float", "value": "inf"}, {"scalar": "int", "value": 9223372036854775807}]}"#,
            r#"{"id": 0, "dtype": "float64", "shape": [3], "bits": [9218868437227405312, 9218868437227405312, 9218868437227405312]}"#,
        ),
        (
            r#"{"id": 0, "op": "clip", "args": [{"dtype": "uint8", "shape": [3], "bits": [1, 2, 200]}, {"scalar": "float", "value": 5000000000.0}, {"scalar": "int", "value": 9223372036854775807}]}"#,
            r#"{"id": 0, "dtype": "float64", "shape": [3], "bits": [4752036887248502784, 4752036887248502784, 4752036887248502784]}"#,
        ),
        (
            r#"{"id": 0, "op": "clip", "args": [{"dtype": "int8", "shape": [3], "bits": [1, 249, 100]}, {"scalar": "int", "value": -200}, {"scalar": "float", "value": 1000.0}]}"#,
            r#"{"id": 0, "dtype": "float64", "shape": [3], "bits": [4607182418800017408, 13842939354630062080, 4636737291354636288]}"#,
        ),
        (
            r#"{"id": 0, "op": "clip", "args": [{"dtype": "int8", "shape": [3], "bits": [1, 249, 100]}, {"scalar": "int", "value": -200}, {"scalar": "float", "value": -3.5}]}"#,
            r#"{"id": 0, "dtype": "float64", "shape": [3], "bits": [13838435755002691584, 13842939354630062080, 13838435755002691584]}"#,
        ),
    ];
    for (case, want) in measured {
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(answer(case), want, "{case}");
    }
    let kind = |case: &str| answer(case)["kind"].as_str().map(str::to_string);
    let uint8 = r#"{"dtype": "uint8", "shape": [3], "bits": [1, 7, 200]}"#;
    let int4 = r#"{"dtype": "int4", "shape": [2], "bits": [1, 7]}"#;
    let clip = |x: &str, lo: i64, hi: i64| {
        format!(
            r#"{{"id": 0, "op": "clip", "args": [{x}, {{"scalar": "int", "value": {lo}}}, {{"scalar": "int", "value": {hi}}}]}}"#
        )
    };
    assert_eq!(
        answer(&clip(uint8, -1, 300))["bits"],
        serde_json::json!([1, 7, 200])
    );
    assert_eq!(kind(&clip(uint8, 300, 400)).as_deref(), Some("overflow"));
    assert_eq!(kind(&clip(uint8, -5, -1)).as_deref(), Some("overflow"));
    assert_eq!(kind(&clip(int4, -200, 300)).as_deref(), Some("overflow"));
}

/// `np.where` converts a Python int into the result dtype by an unsafe cast (`where_scalars =
/// "wrap"`): an integer result wraps it, a float one takes its value, and outside [-2**63,
/// 2**64) it raises OverflowError. Each case measured on NumPy 2.4.6 (fresh seed 100041 found
/// the first: typejoin raised `overflow`).
#[test]
fn numpy_where_wraps_a_python_int_into_an_integer_result() {
    let numpy = typejoin::policy("numpy").unwrap();
    let cond = r#"{"dtype": "bool", "shape": [2], "bits": [1, 0]}"#;
    let int = |v: &str| format!(r#"{{"scalar": "int", "value": {v}}}"#);
    let array =
        |d: &str, bits: &str| format!(r#"{{"dtype": "{d}", "shape": [2], "bits": {bits}}}"#);
    let measured = [
        (
            int("300"),
            array("int8", "[1, 2]"),
            r#""dtype":"int8","shape":[2],"bits":[44,2]"#,
        ),
        (
            int("-1"),
            array("uint8", "[1, 2]"),
            r#""dtype":"uint8","shape":[2],"bits":[255,2]"#,
        ),
        (
            int("18446744073709551615"),
            array("int8", "[1, 2]"),
            r#""dtype":"int8","shape":[2],"bits":[255,2]"#,
        ),
        (
            int("18446744073709551615"),
            int("255"),
            r#""dtype":"int64","shape":[2],"bits":[18446744073709551615,255]"#,
        ),
        (
            int("18446744073709551615"),
            array("uint64", "[1, 2]"),
            r#""dtype":"uint64","shape":[2],"bits":[18446744073709551615,2]"#,
        ),
        (
            int("9223372036854775808"),
            array("float16", "[15360, 16384]"),
            r#""dtype":"float16","shape":[2],"bits":[31744,16384]"#,
        ),
        (
            int("\"18446744073709551616\""),
            int("1"),
            r#""kind":"overflow""#,
        ),
    ];
    for (x, y, want) in measured {
        let case = format!(r#"{{"id": 0, "op": "where", "args": [{cond}, {x}, {y}]}}"#);
        let got = run_line(numpy, &case, Limits::default());
        assert!(got.contains(want), "{case}: {got}");
    }
    let overflow: Value = serde_json::from_str(&run_line(
        numpy,
        &format!(
            r#"{{"id": 0, "op": "where", "args": [{cond}, {}, {}]}}"#,
            int("-9223372036854775809"),
            int("1")
        ),
        Limits::default(),
    ))
    .unwrap();
    assert_eq!(kind(&overflow), Some("overflow"));
}

/// ml_dtypes 0.6.0's casts of floats to its sub-byte integers, measured live by
/// `scripts/oracle_intn_casts.py`: every pattern of the float8, float6 and float4 formats and
/// 2,067 values of bfloat16 and of float16 and 1,043 of float32 and of float64 (the edges where the
/// conversions part among them), to int1, int2, int4, uint1, uint2 and uint4. The `numpy`
/// policy (`intn_conversion = "wrap"`) gives every bit, and refuses the 8 casts ml_dtypes
/// registers none for; saturating, as JAX converts, differs on 81 of the 90 arrays.
#[test]
fn ml_dtypes_sub_byte_integer_casts_wrap_as_its_cpp_does() {
    let numpy = typejoin::policy("numpy").unwrap();
    let none = known_differences_of(numpy, "intn_casts", 90, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
    let refused = lines("tests/data/kernels/intn_casts_expected.jsonl")
        .iter()
        .filter(|l| l.contains("\"unsupported\""))
        .count();
    assert_eq!(refused, 8);
    let saturate = Generated {
        semantics: typejoin::op::Semantics {
            intn_conversion: typejoin::op::IntnConversion::Saturate,
            ..numpy.semantics
        },
        ..*numpy
    };
    let differ = known_differences_of(&saturate, "intn_casts", 90, |_, _, _, _| "differ");
    assert_eq!(differ, [("differ", 81)].into_iter().collect());
}

/// Floats and complex numbers cast to every integer of 8 to 64 bits as the scalar loops of
/// NumPy 2.4.6 (with ml_dtypes 0.6.0), PyTorch 2.15 and TensorFlow 2.21 cast them, measured live
/// by `scripts/oracle_float_int_casts.py LIB`: 128 values for each pair of a float, complex (or
/// float8) dtype and an integer, most past the integer's range, infinite or NaN. Each policy's
/// `int_conversion` (x86-64's C casts: `x86`, `x86-c10`, `x86-eigen`) gives every bit;
/// saturating, as JAX converts, differs on thousands of elements.
#[test]
fn floats_past_an_integers_range_cast_as_each_librarys_scalar_loop() {
    use typejoin::op::{IntConversion, Semantics};
    for (policy, cases, saturated) in [
        ("numpy", 64, 3440),
        ("torch", 88, 4990),
        ("tensorflow", 48, 3237),
    ] {
        let stem = format!("float_int_casts_{policy}");
        let measured = typejoin::policy(policy).unwrap();
        let none = known_differences_of(measured, &stem, cases, |_, _, _, _| "differ");
        assert_eq!(none, [].into_iter().collect(), "{policy}");
        let saturate = Generated {
            semantics: Semantics {
                int_conversion: IntConversion::Saturate,
                ..measured.semantics
            },
            ..*measured
        };
        assert_eq!(differing_elements(&saturate, &stem), saturated, "{policy}");
    }
}

/// `np.sum`, `torch.sum`, `tf.reduce_sum` and `jnp.sum` of 1,500 random C-contiguous float
/// and complex arrays each (NumPy: ml_dtypes' float8s too), whole or along an axis (shapes of 1
/// to 1,000 elements, dimensions of size 1 among them; TensorFlow's up to 9,000, JAX's 3,000),
/// measured live on NumPy 2.4.6, PyTorch 2.15, TensorFlow 2.21 and jax 0.10.2 by
/// `scripts/oracle_sums.py`: each library's order (`sum_order = "numpy"`: pairwise along
/// adjacent elements, rows one by one, ml_dtypes step by step; `"torch"`: cascade sums over
/// AVX2 vectors; `"eigen"`: Eigen's packet reductions; `"xla"`: XLA's 32-element windows, and
/// a whole two-dimensional sum's rows in vector lanes) gives every bit (JAX's 6 sums of a whole
/// (2, 3) array of float64 or complex, which XLA adds row by row, since the row lanes were
/// modelled); the exact sum rounded once differs on the cases counted.
#[test]
fn sums_add_in_each_librarys_order() {
    use typejoin::op::{Semantics, SumOrder};
    let several_dims = |c: &serde_json::Value| {
        c["axis"].is_null()
            && c["args"][0]["shape"]
                .as_array()
                .is_some_and(|s| s.len() > 1)
    };
    for (policy, own_differs, exact_differs) in [
        ("numpy", 0, 309),
        ("torch", 0, 300),
        ("tensorflow", 0, 332),
        ("jax", 0, 264),
    ] {
        let stem = format!("{policy}_sums");
        // JAX's were measured on a CPU with AVX-512.
        let avx512 = jax_on(SumOrder::XlaAvx512);
        let measured = match policy {
            "jax" => &avx512,
            _ => typejoin::policy(policy).unwrap(),
        };
        let own = known_differences_of(measured, &stem, 1500, |c, _, _, _| {
            if several_dims(c) {
                "a sum over several dimensions"
            } else {
                "differ"
            }
        });
        let want: std::collections::BTreeMap<&str, usize> =
            [("a sum over several dimensions", own_differs)]
                .into_iter()
                .filter(|&(_, n)| n > 0)
                .collect();
        assert_eq!(own, want, "{policy}");
        let exact = Generated {
            semantics: Semantics {
                sum_order: SumOrder::Exact,
                ..measured.semantics
            },
            ..*measured
        };
        let differ = known_differences_of(&exact, &stem, 1500, |_, _, _, _| "differ");
        assert_eq!(
            differ,
            [("differ", exact_differs)].into_iter().collect(),
            "{policy}"
        );
    }
}

/// TensorFlow 2.21's ops with a Python bool beside a tensor of every dtype, as the fuzzer calls
/// them (the bool first or second, True and False, a two-element and a zero-dim tensor;
/// `tf.pow`, `tf.clip_by_value` with a bool bound), measured live by
/// `scripts/oracle_tensorflow_python_bool.py`. The `tensorflow` policy's `[ops.X]
/// python_bool_refused_with` gives every answer and refusal; without it, 536 of TensorFlow's
/// refusals are answers or other errors.
#[test]
fn tensorflow_refuses_a_python_bool_beside_the_dtypes_it_declares() {
    let tensorflow = typejoin::policy("tensorflow").unwrap();
    let stem = "tensorflow_python_bool";
    let none = known_differences_of(tensorflow, stem, 2220, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
    let undeclared = Generated {
        op_python_bool_refused: &[],
        op_join_kinds: &[],
        op_python_int_as: &[],
        ..*tensorflow
    };
    let differ = known_differences_of(&undeclared, stem, 2220, |_, _, want, got| {
        match (kind(want), kind(got)) {
            (Some("unsupported"), None) => "TensorFlow refuses, typejoin answers",
            (Some("unsupported"), Some(_)) => "TensorFlow refuses, typejoin raises another error",
            _ => "other",
        }
    });
    let want = [
        ("TensorFlow refuses, typejoin answers", 494),
        // `floor_divide(int8, False)`: the refusal comes before the division by zero.
        ("TensorFlow refuses, typejoin raises another error", 42),
    ];
    assert_eq!(differ, want.into_iter().collect());
}

/// How many result elements of `tests/data/kernels/<stem>_*` differ under `policy` (every
/// expected answer a value).
fn differing_elements(policy: &Generated, stem: &str) -> usize {
    let cases = lines(&format!("tests/data/kernels/{stem}_cases.jsonl"));
    let expected = lines(&format!("tests/data/kernels/{stem}_expected.jsonl"));
    let mut differ = 0;
    for (case, want) in cases.iter().zip(&expected) {
        let got: Value = serde_json::from_str(&run_line(policy, case, Limits::default())).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        let (want, got) = (
            want["bits"].as_array().unwrap(),
            got["bits"].as_array().unwrap(),
        );
        differ += want.iter().zip(got).filter(|(w, g)| w != g).count();
    }
    differ
}

/// PyTorch 2.15's catalogue beyond its lattice, measured live by `scripts/fuzz_libraries.py
/// torch --catalogue --seed 92002 --cases 2000 --record torch_catalogue`: random calls as a
/// user makes them over the lattice's dtypes and uint16, uint32, uint64 and the five float8
/// formats, run by the `torch` policy that observed/torch_categories.json extends (its
/// measured pairs and the kernels torch has: `uint16 + uint16` and `float8 * 2` raise,
/// `uint16 * uint16` and `float8 * float8` compute). Every case answers as torch does except
/// none. (Its float16 floor_divide, found place-dependent, answers since float16 and bfloat16
/// floor divisions round each step to the dtype but by a divisor of one element
/// (`float_floor_divide = "vectors"`); a clip bound from 2^63 on and a complex128 quotient differed before `clamp`'s
/// bounds promoted as torch's and `complex_divide = "smith-fused"`; its one
/// complex32 case, unsupported before complex32 had kernels, its four `clip`s over zero-dim
/// added dtypes, promoted by a fold before `clip` followed torch's n-ary rule, and its two
/// float8_e8m0fnu values, converted as ml_dtypes does before `float8_conversion = "c10"`,
/// answer as torch does.)
#[test]
fn every_torch_catalogue_case_is_bit_exact_but_the_known_differences() {
    let differ = known_differences("torch", "torch_catalogue", 2000, |c, _, want, got| {
        match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("clip", Some("overflow"), _) => "clip: a bound past the result's range",
            ("true_divide", None, None) => "torch's complex division",
            ("floor_divide", None, None) => "floor_divide",
            _ => "unclassified",
        }
    });
    let catalogue = lines("tests/data/kernels/torch_catalogue_cases.jsonl")
        .iter()
        .filter(|case| {
            ["uint16", "uint32", "uint64", "float8"]
                .iter()
                .any(|d| case.contains(d))
        })
        .count();
    assert_eq!(differ, Default::default());
    assert_eq!(catalogue, 1198, "cases that reach the catalogue");
}

/// `STEM_expected.jsonl`'s answers counted by error kind (`computed`: a result) equal `want`,
/// in the kinds' order.
fn assert_answer_kinds(stem: &str, want: &[(&str, usize)]) {
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for line in lines(&format!("tests/data/kernels/{stem}_expected.jsonl")) {
        let v: Value = serde_json::from_str(&line).unwrap();
        *kinds
            .entry(kind(&v).unwrap_or("computed").to_string())
            .or_default() += 1;
    }
    let kinds: Vec<(&str, usize)> = kinds.iter().map(|(k, &n)| (k.as_str(), n)).collect();
    assert_eq!(kinds, want, "{stem}");
}

/// An answer's error kind, if it is one.
fn kind(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

/// Runs the recorded `STEM_cases.jsonl` (`n` of them) under `policy` against the library's
/// `STEM_expected.jsonl`: the differing cases counted by `classify(case, its text, want,
/// got)`. A case agrees when both raise the same kind of error or answer the same dtype,
/// shape and bits.
fn known_differences(
    policy: &str,
    stem: &str,
    n: usize,
    classify: impl Fn(&Value, &str, &Value, &Value) -> &'static str,
) -> std::collections::BTreeMap<&'static str, usize> {
    known_differences_of(typejoin::policy(policy).unwrap(), stem, n, classify)
}

/// The `jax` policy with XLA's sum order pinned to one CPU's (`sum_order = "xla"` follows the
/// machine the tests run on): for cases measured on that CPU.
fn jax_on(sum_order: typejoin::op::SumOrder) -> Generated {
    let jax = typejoin::policy("jax").unwrap();
    Generated {
        semantics: typejoin::op::Semantics {
            sum_order,
            ..jax.semantics
        },
        ..*jax
    }
}

/// [`known_differences`] under a policy given as such (one whose conventions a test changed).
fn known_differences_of(
    policy: &Generated,
    stem: &str,
    n: usize,
    classify: impl Fn(&Value, &str, &Value, &Value) -> &'static str,
) -> std::collections::BTreeMap<&'static str, usize> {
    let cases = lines(&format!("tests/data/kernels/{stem}_cases.jsonl"));
    let expected = lines(&format!("tests/data/kernels/{stem}_expected.jsonl"));
    assert_eq!((cases.len(), expected.len()), (n, n));
    let mut differ = std::collections::BTreeMap::new();
    for (case, want) in cases.iter().zip(&expected) {
        let c: Value = serde_json::from_str(case).unwrap();
        let got: Value = serde_json::from_str(&run_line(policy, case, Limits::default())).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        let agree = match (kind(&want), kind(&got)) {
            (Some(_), _) | (_, Some(_)) => kind(&want) == kind(&got),
            _ => got == want,
        };
        if !agree {
            *differ.entry(classify(&c, case, &want, &got)).or_default() += 1;
        }
    }
    differ
}

/// `jnp.divide` of complex64 and complex128 measured live on jax 0.10.2 (x64, CPU) by
/// `scripts/oracle_jax_complex_divide.py 4 2000`: 2,000 random quotients per dtype, a fifth of
/// their parts ±0, ±inf, NaN, subnormals or the largest finite values. XLA's Smith's algorithm
/// with fused multiply-adds and its corner cases (`complex_divide = "xla"`) gives every one
/// bit for bit; NumPy's formula (`smith`) does not.
#[test]
fn jax_complex_division_is_xlas() {
    let jax = typejoin::policy("jax").unwrap();
    let none = known_differences_of(jax, "jax_complex_divide", 2, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
    let smith = Generated {
        semantics: typejoin::op::Semantics {
            complex_divide: typejoin::op::ComplexDivide::Smith,
            ..jax.semantics
        },
        ..*jax
    };
    let both = known_differences_of(&smith, "jax_complex_divide", 2, |_, _, _, _| "differ");
    assert_eq!(both, [("differ", 2)].into_iter().collect());
}

/// `jnp.multiply` of complex64 and complex128 measured live on jax 0.10.2 (x64, CPU) by
/// `scripts/oracle_jax_complex_multiply.py 5 400`: random pairs of broadcastable shapes (Python
/// complex numbers among the operands), one dtype or complex128 with complex64 on either side.
/// XLA computes `x · y` as `y · x` when `y` is constant along the result's innermost dimension
/// longer than one and `x` is not, or when `y` is converted (complex64 to a complex128 product, a
/// Python complex to complex64) and has the result's shape; which product of the imaginary part
/// is fused changes: 32 of the 400
/// answers differ from those of the operands swapped. Every one answers as JAX does (found by
/// `fuzz_libraries.py jax --seed 200127`: an imaginary part +0 in JAX, −0 in typejoin; the
/// converted operand by `--seed 200203`: −0 in JAX, +0 in typejoin).
#[test]
fn jax_complex_products_fuse_as_xla_orders_them() {
    let none = known_differences("jax", "jax_complex_multiply", 400, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
}

/// JAX 0.10.2 (x64, CPU) measured live by `scripts/fuzz_libraries.py jax --seed 200062 --cases
/// 5000 --record jax_fuzz`: random calls of every op as a user's program makes them (`sum` and
/// `astype` among them), run by the `jax` policy with JAX's own values (XLA's `floor_divide`
/// and `remainder`, its integer division by zero, flushed subnormals, lexicographic complex
/// order, XLA's complex division, division by a broadcast divisor as a reciprocal, `bool · x`
/// as a select, `clip` as `jnp.clip` chains it, Python ints converted to the computation dtype,
/// sums in XLA's windows). Every case answers as JAX does, bit for bit.
#[test]
fn every_jax_fuzz_case_is_bit_exact() {
    let avx512 = jax_on(typejoin::op::SumOrder::XlaAvx512);
    let differ = known_differences_of(&avx512, "jax_fuzz", 5000, |_, _, _, _| "differ");
    assert_eq!(differ, [].into_iter().collect());
}

/// TensorFlow 2.21 (`dtype_conversion_mode="all"`) measured live by
/// `scripts/fuzz_libraries.py tensorflow --seed 200061 --cases 5000 --record tensorflow_fuzz`
/// (every call from cleared eager caches, `oracle_tensorflow.before_call`): fresh random calls
/// of every op, run by the `tensorflow` policy. Every case answers as TensorFlow does but 19
/// `astype`s of a float past an integer's range, where TensorFlow's vector loop converts
/// otherwise than its scalar one (the fuzzer found each place-dependent). On the seed recorded
/// before (200003), `sum`'s order, a uint64 array beside a negative Python int, `true_divide`
/// of two bools and a complex `clip`'s error order differed in 10, 4, 2 and 1 cases; each is
/// modelled now (`sum_order = "eigen"`, `python_int = "cast"`'s uint64 overflow, `[ops.
/// true_divide] join_kinds`, `clip`'s pairwise checks).
#[test]
fn every_tensorflow_fuzz_case_is_bit_exact_but_the_declared_classes() {
    let differ = known_differences(
        "tensorflow",
        "tensorflow_fuzz",
        5000,
        |c, _, want, got| match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("astype", None, None) => "astype: place-dependent",
            _ => "unclassified",
        },
    );
    let want: std::collections::BTreeMap<&str, usize> =
        [("astype: place-dependent", 19)].into_iter().collect();
    assert_eq!(differ, want);
}

/// torch 2.15 measured live by `scripts/fuzz_libraries.py torch --seed 200006 --cases 5000
/// --record torch_fuzz`: fresh random calls of every op, run by the `torch` policy. Every case
/// answers as PyTorch does. Its 12 `remainder`s the fuzzer found place-dependent answer since
/// the vector loop's are modelled (`float_floor_divide = "vectors"`: Sleef's `fmod`); its
/// complex64 quotient, found place-dependent then, answers since complex64 quotients are
/// Smith's with fused multiply-adds in float32; its complex64 product by a Python float since the
/// tail of a row with a factor of stride zero is modelled (`schoolbook_vectors`). `subtract` of
/// a Python int from 2^63 and a bool tensor is refused with PyTorch's error kind since the
/// operands an op refuses are checked before the uint64 promotes (`plan`).
#[test]
fn every_torch_fuzz_case_is_bit_exact_but_the_declared_classes() {
    let differ = known_differences("torch", "torch_fuzz", 5000, |c, _, want, got| {
        match (c["op"].as_str().unwrap(), kind(want), kind(got)) {
            ("remainder", None, None) => "remainder",
            _ => "unclassified",
        }
    });
    assert_eq!(differ, Default::default());
}

/// Complex `power` measured live on NumPy 2.4.6 by `scripts/oracle_complex.py numpy power 5`:
/// per complex dtype, 401 random pairs of arrays, 401 bases to integer exponents in
/// [−120, 120], 401 bases to each of 14 Python exponents and five short pairs (12,866 powers,
/// their parts ±0, ±inf, NaN, subnormals and the largest values among them).
/// `npy_cpow` then glibc's `cpow` (`complex_power = "numpy"`) gives every one bit for bit.
#[test]
fn numpy_complex_powers_are_npy_cpow() {
    let differ = known_differences("numpy", "numpy_complex_power", 42, |_, _, _, _| "differ");
    assert_eq!(differ, [].into_iter().collect());
}

/// The class of a recorded complex `power` case of torch by its exponent: a Python number
/// PyTorch divides by (−1, −2, −0.5), or any other.
fn torch_power_class(case: &Value) -> &'static str {
    match case["args"][1]["value"].as_f64() {
        Some(e) if [-1.0, -2.0, -0.5].contains(&e) => "divides",
        _ => "other",
    }
}

/// The same measured on torch 2.15 (`scripts/oracle_complex.py torch power 6`). glibc's `cpow`,
/// with PyTorch's own kernels for Python exponents 0, 1, 2, 3, 0.5 and the schoolbook products
/// of its vector loop (`complex_power = "torch"`, `complex_multiply = "vectors"`), gives every
/// case, the six whose exponent divides (−1, −2, −0.5 per dtype) too since quotients are
/// Smith's with fused multiply-adds in the parts' precision (`complex_divide = "smith-fused"`;
/// the three complex64 ones differed while complex64 quotients were modelled unfused). NumPy's
/// `npy_cpow`, or fused products everywhere, would miss more.
#[test]
fn torch_complex_powers_are_cpow_and_its_kernels() {
    let torch = typejoin::policy("torch").unwrap();
    let differ = known_differences_of(torch, "torch_complex_power", 42, |c, _, _, _| {
        torch_power_class(c)
    });
    assert_eq!(differ, [].into_iter().collect());
    let with = |semantics| Generated {
        semantics,
        ..*torch
    };
    let numpy = with(typejoin::op::Semantics {
        complex_power: typejoin::op::ComplexPower::Numpy,
        ..torch.semantics
    });
    let differ = known_differences_of(&numpy, "torch_complex_power", 42, |c, _, _, _| {
        torch_power_class(c)
    });
    assert_eq!(
        differ,
        [("divides", 6), ("other", 19)].into_iter().collect()
    );
    let fused = with(typejoin::op::Semantics {
        complex_multiply: typejoin::op::ComplexMultiply::Fused,
        ..torch.semantics
    });
    let differ = known_differences_of(&fused, "torch_complex_power", 42, |c, _, _, _| {
        torch_power_class(c)
    });
    assert_eq!(differ, [("divides", 2), ("other", 6)].into_iter().collect());
}

/// `torch.mul` of complex arrays of every length from 1 to 40 and of 47, 64, 65, 100 and 401
/// elements, and of 2 to 17, 21, 29 and 47 elements by a one-element array
/// (`scripts/oracle_complex.py torch multiply 10`): PyTorch's loop computes the schoolbook
/// product in the 64-byte vectors of each row and fused multiply-adds in its tail, and in
/// complex64 the tail goes in pairs, so the last element of an odd tail is schoolbook too, or,
/// by a factor of stride zero, a schoolbook first element and fused fours
/// (`complex_multiply = "vectors"`). Every element answers as PyTorch does; fused products
/// everywhere (NumPy's) miss 55 of the 128 arrays.
#[test]
fn torch_complex_products_are_schoolbook_in_vectors_and_unpaired_tails() {
    let torch = typejoin::policy("torch").unwrap();
    let none = known_differences_of(torch, "torch_complex_multiply", 128, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
    let fused = Generated {
        semantics: typejoin::op::Semantics {
            complex_multiply: typejoin::op::ComplexMultiply::Fused,
            ..torch.semantics
        },
        ..*torch
    };
    let differ = known_differences_of(&fused, "torch_complex_multiply", 128, |_, _, _, _| "differ");
    assert_eq!(differ, [("differ", 55)].into_iter().collect());
}

/// `torch.true_divide` of complex arrays (`scripts/oracle_complex.py torch true_divide 7`):
/// every quotient answers, complex64 and complex128 alike, as Smith's algorithm with fused
/// multiply-adds in the parts' precision (`complex_divide = "smith-fused"`; PyTorch's
/// `c10::complex` division contracted by GCC, in its vector loop and its scalar loop alike:
/// 20,000 random complex64 quotients of torch 2.15 each way, measured 2026-12-05). Unfused
/// (`"smith"`, NumPy's) the same pairs differ, complex64 ones included: the 401-element pair
/// once taken for a vector-loop class was that.
#[test]
fn torch_complex_quotients_are_smith_fused_in_both_precisions() {
    let torch = typejoin::policy("torch").unwrap();
    let none = known_differences_of(
        torch,
        "torch_complex_true_divide",
        42,
        |_, _, _, _| "differ",
    );
    assert_eq!(none, [].into_iter().collect());
    let unfused = Generated {
        semantics: typejoin::op::Semantics {
            complex_divide: typejoin::op::ComplexDivide::Smith,
            ..torch.semantics
        },
        ..*torch
    };
    let differ = known_differences_of(&unfused, "torch_complex_true_divide", 42, |_, _, w, _| {
        match w["dtype"].as_str() {
            Some("complex64") => "complex64",
            _ => "complex128",
        }
    });
    assert_eq!(
        differ,
        [("complex128", 1), ("complex64", 1)].into_iter().collect()
    );
}

/// Whether every element where `want` and `got` differ has a subnormal part in an operand of
/// `case` (complex64 or complex128 arrays, or a Python number second).
fn differs_only_at_subnormal_operands(case: &Value, want: &Value, got: &Value) -> bool {
    let wide = want["dtype"] == "complex128";
    let subnormal = |b: u64| match wide {
        true => b & 0x7ff0_0000_0000_0000 == 0 && b & 0x000f_ffff_ffff_ffff != 0,
        false => b & 0x7f80_0000 == 0 && b & 0x007f_ffff != 0,
    };
    let parts = |arg: &Value, i: usize| -> Vec<u64> {
        match arg["bits"].as_array() {
            Some(v) => v[if v.len() > 1 { i } else { 0 }]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_u64().unwrap())
                .collect(),
            None => vec![],
        }
    };
    let (w, g) = (want["bits"].as_array(), got["bits"].as_array());
    let (Some(w), Some(g)) = (w, g) else {
        return false;
    };
    w.iter().zip(g).enumerate().all(|(i, (p, q))| {
        p == q
            || [&case["args"][0], &case["args"][1]]
                .iter()
                .any(|arg| parts(arg, i).into_iter().any(subnormal))
    })
}

/// `tf.pow` of complex arrays on TensorFlow 2.21 (`scripts/oracle_complex.py tensorflow power
/// 8`): glibc's `cpow` under the DAZ and FTZ bits (`complex_power = "cpow"`, computed in numbers
/// flushed at every step) gives every element but those with a subnormal operand part: glibc's
/// functions read such a part's bits where the arithmetic reads it as zero; typejoin reads it as
/// zero throughout (78 of 12,465 elements, in 27 cases).
#[test]
fn tensorflow_complex_powers_are_cpow_but_at_subnormal_operands() {
    let differ = known_differences(
        "tensorflow",
        "tensorflow_complex_power",
        41,
        |c, _, w, g| match differs_only_at_subnormal_operands(c, w, g) {
            true => "a subnormal operand part",
            false => "other",
        },
    );
    assert_eq!(
        differ,
        [("a subnormal operand part", 27)].into_iter().collect()
    );
}

/// `tf.math.truediv` of complex arrays (`scripts/oracle_complex.py tensorflow true_divide 9`):
/// Eigen's `pdiv_complex` in the 32-byte packets of the flattened result, Smith's in the rest
/// (`complex_divide = "eigen"`) gives every quotient bit for bit; NumPy's Smith's does not.
#[test]
fn tensorflow_complex_quotients_are_eigens() {
    let tf = typejoin::policy("tensorflow").unwrap();
    let smith = typejoin::op::Semantics {
        complex_divide: typejoin::op::ComplexDivide::Smith,
        ..tf.semantics
    };
    let differ = exact_but_under(tf, "tensorflow_complex_true_divide", 41, smith);
    assert_eq!(differ, 26);
}

/// `tf.multiply` of complex arrays of every length from 1 to 40 and 47, 64, 65, 100, 401
/// (`scripts/oracle_complex.py tensorflow multiply`): the schoolbook product in the 32-byte
/// packets of the flattened result, C's Annex G product in the rest (`complex_multiply =
/// "eigen"`) gives every product bit for bit (90 cases); NumPy's fused formula differs in 49.
#[test]
fn tensorflow_complex_products_are_eigens() {
    let tf = typejoin::policy("tensorflow").unwrap();
    let fused = typejoin::op::Semantics {
        complex_multiply: typejoin::op::ComplexMultiply::Fused,
        ..tf.semantics
    };
    assert_eq!(
        exact_but_under(tf, "tensorflow_complex_multiply", 90, fused),
        49
    );
}

/// Asserts that every one of the `n` cases of `stem` answers under `policy` as its library
/// does, and returns in how many the answer differs under the `other` conventions.
fn exact_but_under(
    policy: &Generated,
    stem: &str,
    n: usize,
    other: typejoin::op::Semantics,
) -> usize {
    let none = known_differences_of(policy, stem, n, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect(), "{} on {stem}", policy.name);
    let other = Generated {
        semantics: other,
        ..*policy
    };
    known_differences_of(&other, stem, n, |_, _, _, _| "differ")
        .get("differ")
        .copied()
        .unwrap_or(0)
}

/// `scripts/oracle_narrowing.py torch|tensorflow|jax`: float64, complex128 and 32/64-bit
/// integers next to a float16 or bfloat16 midpoint, cast or met as operands (Python numbers,
/// integer arrays, a zero-dim float64). PyTorch 2.15, TensorFlow 2.21 and jax 0.10.2 all round
/// them through float32 (`narrowing = "via-float32"`), every case bit for bit; rounded once
/// (NumPy's way), the counted cases differ.
#[test]
fn every_library_narrows_through_float32_as_measured() {
    for (name, n, rounded_once) in [
        ("torch", 144, 46),
        ("tensorflow", 156, 60),
        ("jax", 156, 83),
    ] {
        let policy = typejoin::policy(name).unwrap();
        assert_eq!(
            policy.semantics.narrowing,
            typejoin::op::Narrowing::ViaFloat32
        );
        let once = typejoin::op::Semantics {
            narrowing: typejoin::op::Narrowing::Once,
            ..policy.semantics
        };
        let stem = format!("narrowing_{name}");
        assert_eq!(
            exact_but_under(policy, &stem, n, once),
            rounded_once,
            "{name}"
        );
    }
}

/// `scripts/oracle_power.py`: NumPy 2.4.6's `power` with a one-element exponent (−1, ±0, 0.5,
/// 1, 2, −0.5, 3) of every shape pair NumPy treats apart (zero-dim, `(1,)` and `(1, 1)`
/// exponents beside bases of one and more elements, Python floats, full arrays) and loops of
/// float64, float32 (from float16, bfloat16, float8 and int8 operands too), float16 and
/// bfloat16, measured with NumPy's AVX-512 dispatch off. Every case answers as NumPy does
/// under `power_exponent = "numpy"`; computed by `pow` for every element, the counted ones
/// differ (a −0.0 or −inf base to the power 0.5, where NumPy takes `sqrt`).
#[test]
fn numpy_power_takes_its_fast_path_for_a_one_element_exponent() {
    let numpy = typejoin::policy("numpy").unwrap();
    assert_eq!(
        numpy.semantics.power_exponent,
        typejoin::op::PowerExponent::Numpy
    );
    let pow = typejoin::op::Semantics {
        power_exponent: typejoin::op::PowerExponent::Pow,
        ..numpy.semantics
    };
    assert_eq!(exact_but_under(numpy, "numpy_power", 1185, pow), 24);
}

/// `scripts/oracle_jax_row_sums.py`: `jnp.sum` of 1,040 whole two-dimensional float32,
/// float64, complex64 and complex128 arrays of 2 to 32 rows of 2 to 20 elements, measured on
/// jax 0.10.2 on a CPU with AVX-512: XLA adds short rows in vector lanes (`sum_order =
/// "xla-avx512"`), and every sum answers as JAX's but those of 20 and 28 rows of float32 or
/// complex64, whose order (rows that 8 lanes do not divide) is not modelled. On an AVX2 CPU
/// (`"xla-avx2"`) 380 of them add otherwise.
#[test]
fn jax_sums_two_dimensional_arrays_in_row_lanes() {
    use typejoin::op::SumOrder;
    let avx512 = jax_on(SumOrder::XlaAvx512);
    let differ = known_differences_of(&avx512, "jax_row_sums", 1040, |c, _, _, _| {
        let x = &c["args"][0];
        let rows = x["shape"][0].as_u64().unwrap();
        match (x["dtype"].as_str().unwrap(), rows) {
            ("float32" | "complex64", 20 | 28) => "20 or 28 rows of float32 or complex64",
            _ => "unclassified",
        }
    });
    let want: std::collections::BTreeMap<&str, usize> =
        [("20 or 28 rows of float32 or complex64", 37)]
            .into_iter()
            .collect();
    assert_eq!(differ, want);
    let avx2 = jax_on(SumOrder::XlaAvx2);
    let other = known_differences_of(&avx2, "jax_row_sums", 1040, |_, _, _, _| "differ");
    assert_eq!(other, [("differ", 380)].into_iter().collect());
}

/// `scripts/oracle_jax_row_sums.py 9 2 jax_row_sums_avx2`: 1,040 fresh whole sums of the same
/// shapes measured on jax 0.10.2 on an AMD EPYC of family 23 (AVX2, no AVX-512), where LLVM
/// vectorises the rows otherwise (`sum_order = "xla-avx2"`: from 16 rows, lanes over the rows
/// they divide and the rest one by one). Every one answers as JAX's; the AVX-512 order differs
/// on the counted ones.
#[test]
fn jax_sums_rows_in_avx2_lanes_on_an_avx2_cpu() {
    use typejoin::op::SumOrder;
    let avx2 = jax_on(SumOrder::XlaAvx2);
    let none = known_differences_of(&avx2, "jax_row_sums_avx2", 1040, |_, _, _, _| "differ");
    assert_eq!(none, [].into_iter().collect());
    let avx512 = jax_on(SumOrder::XlaAvx512);
    let other = known_differences_of(&avx512, "jax_row_sums_avx2", 1040, |_, _, _, _| "differ");
    assert_eq!(other, [("differ", 402)].into_iter().collect());
}

/// `jnp.floor_divide` by a zero-dim float32 subnormal, measured on jax 0.10.2 (found by
/// `scripts/fuzz_libraries.py jax --seed 200072`): a one-element result of one or more
/// dimensions tests the divisor for zero unflushed (NaN: `a − fmod(a, b)` with the flushed
/// `fmod` NaN), every other shape flushed (−inf: `a / b` by a zero).
#[test]
fn jax_floor_divide_tests_a_zero_dim_divisor_of_one_element_unflushed() {
    let jax = typejoin::policy("jax").unwrap();
    let divisor = (-5.9e-39f32).to_bits();
    let three = 3f32.to_bits();
    for (shape, want) in [
        (vec![1], 0x7fc0_0000u32),
        (vec![1, 1], 0x7fc0_0000),
        (vec![2], 0xff80_0000),
        (vec![], 0xff80_0000),
    ] {
        let n: usize = shape.iter().product();
        let line = serde_json::json!({"id": 0, "op": "floor_divide", "args": [
            {"dtype": "float32", "shape": shape, "bits": vec![three; n]},
            {"dtype": "float32", "shape": [], "bits": [divisor]}]})
        .to_string();
        let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
        assert_eq!(got["bits"], serde_json::json!(vec![want; n]), "{shape:?}");
    }
    // A divisor of one element and one dimension is flushed: −inf.
    let line = serde_json::json!({"id": 0, "op": "floor_divide", "args": [
        {"dtype": "float32", "shape": [1], "bits": [three]},
        {"dtype": "float32", "shape": [1], "bits": [divisor]}]})
    .to_string();
    let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
    assert_eq!(got["bits"], serde_json::json!([0xff80_0000u32]));
}

/// `jnp.true_divide` of a false bool array by complex64 `-inf + 6j`, measured on jax 0.10.2
/// (x64, CPU; found by `scripts/fuzz_libraries.py jax --seed 200110`): a divisor of one element
/// (zero-dim, `(1,)`, `(1, 1)`) makes the quotient a select, +0 + 0j; a broadcast row or column
/// and a divisor of the result's shape give the quotient, −0 − 0j.
#[test]
fn jax_bool_over_a_complex_divisor_is_a_select_only_for_one_element() {
    let jax = typejoin::policy("jax").unwrap();
    let (inf, six) = (f32::NEG_INFINITY.to_bits(), 6f32.to_bits());
    let (select, quotient) = ([0u32, 0], [0x8000_0000u32, 0x8000_0000]);
    for (shape, divisor, want) in [
        (vec![4], vec![], select),
        (vec![4], vec![1], select),
        (vec![3, 5], vec![1, 1], select),
        (vec![3, 5], vec![5], quotient),
        (vec![3, 5], vec![3, 1], quotient),
        (vec![3, 5], vec![1, 5], quotient),
        (vec![3, 5], vec![3, 5], quotient),
    ] {
        let (n, m) = (
            shape.iter().product::<usize>(),
            divisor.iter().product::<usize>(),
        );
        let line = serde_json::json!({"id": 0, "op": "true_divide", "args": [
            {"dtype": "bool", "shape": shape, "bits": vec![0; n]},
            {"dtype": "complex64", "shape": divisor, "bits": vec![[inf, six]; m]}]})
        .to_string();
        let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
        assert_eq!(
            got["bits"],
            serde_json::json!(vec![want; n]),
            "{shape:?} / {divisor:?}"
        );
    }
}

/// `jnp.true_divide(b, False)` of a bool array `b` (16 elements, alternately true and false),
/// measured on jax 0.10.2 (x64, CPU; found by `scripts/fuzz_libraries.py jax --seed 99608`):
/// XLA divides by the broadcast zero as `convert(b) · (1 / 0)` and then makes that product a
/// select, so the quotient is inf where `b` is true and +0 where it is false, not NaN.
#[test]
fn jax_bool_over_a_broadcast_divisor_is_a_select() {
    let jax = typejoin::policy("jax").unwrap();
    let bits: Vec<u8> = (0..16).map(|i| (i % 2 == 0) as u8).collect();
    let line = serde_json::json!({"id": 0, "op": "true_divide", "args": [
        {"dtype": "bool", "shape": [16], "bits": bits},
        {"scalar": "bool", "value": false}]})
    .to_string();
    let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
    let want: Vec<u32> = (0..16)
        .map(|i| if i % 2 == 0 { 0x7f80_0000 } else { 0 })
        .collect();
    assert_eq!(got["dtype"], "float32");
    assert_eq!(got["bits"], serde_json::json!(want));
    // Without XLA's rewrites (the IEEE conventions), false / false is 0 / 0, NaN.
    let ieee = ieee(jax);
    let got: Value = serde_json::from_str(&run_line(&ieee, &line, Limits::default())).unwrap();
    assert_eq!(got["bits"][1], 0x7fc0_0000u32);
    // A complex divisor too (found by seed 200087): `[True, False] / complex128[]
    // (-1.8e308 + 2.2e-308j)` is `1 / y` (−0 − 0j, its parts flushed) where true and +0 + 0j
    // where false; by a divisor of the result's shape the false one is 0 / y, −0 − 0j.
    let y = [f64::MAX.to_bits() | 1 << 63, f64::MIN_POSITIVE.to_bits()];
    let (neg, pos) = (1u64 << 63, 0u64);
    for (shape, want) in [
        (vec![], [[neg, neg], [pos, pos]]),
        (vec![2], [[neg, neg], [neg, neg]]),
    ] {
        let n: usize = shape.iter().product();
        let line = serde_json::json!({"id": 0, "op": "true_divide", "args": [
            {"dtype": "bool", "shape": [2], "bits": [1, 0]},
            {"dtype": "complex128", "shape": shape, "bits": vec![y; n]}]})
        .to_string();
        let got: Value = serde_json::from_str(&run_line(jax, &line, Limits::default())).unwrap();
        assert_eq!(got["bits"], serde_json::json!(want), "{shape:?}");
    }
}
