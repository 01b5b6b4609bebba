//! A measured table's declared n-ary rule: NumPy's `np.result_type` (its DType-sequence
//! promotion) against what NumPy 2.4.6 + ml_dtypes 0.6.0 returned, measured by
//! `scripts/dump_table.py numpy-result-type` (every pair and triple of 34 dtypes and four
//! Python scalars) and `scripts/oracle_numpy_result_type.py` (20,000 random argument lists
//! mixing dtype objects, arrays and Python scalars).

use typejoin::{Arg, CheckConfig, Engine, Input, Refusal};

use crate::{load, root};

const TABLE: &str = "observed/numpy_result_type.json";

fn node(input: &Input, name: &str) -> usize {
    input
        .table()
        .index_of(name)
        .unwrap_or_else(|| panic!("{name} is not in {TABLE}"))
}

/// The cases of a measured `.jsonl` file (its first line records the versions), each with
/// its line.
fn measured(rel: &str) -> Vec<(String, serde_json::Value)> {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| (l.to_string(), serde_json::from_str(l).unwrap()))
        .collect()
}

#[test]
fn numpy_rule_gives_every_measured_triple() {
    let input = load(TABLE);
    let checked = typejoin::check(
        &input,
        CheckConfig {
            engine: Engine::Exhaustive,
            ..CheckConfig::default()
        },
    )
    .unwrap();
    let rule = checked.rule.as_ref().expect("the table declares `numpy`");
    assert_eq!(
        (rule.rule, rule.multisets, rule.mismatches),
        ("numpy", 54_872, 0)
    );
    // NumPy is not a lattice, and its n-ary rule is not the fold of its pairs: check says so.
    let fold = checked.nary.as_ref().expect("measured triples");
    assert_eq!((fold.multisets, fold.mismatches), (54_872, 7_191));
    assert!(checked.failed());
}

#[test]
fn numpy_rule_answers_random_argument_lists_as_measured() {
    let input = load(TABLE);
    let text =
        std::fs::read_to_string(root().join("tests/data/numpy/result_type_cases.jsonl")).unwrap();
    let mut cases = 0;
    let mut differ = Vec::new();
    for line in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let args: Vec<Arg> = v["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let i = node(&input, a[1].as_str().unwrap());
                match a[0].as_str().unwrap() {
                    "dtype" => Arg::DType(i),
                    _ => Arg::Value(i),
                }
            })
            .collect();
        let want = v["result"].as_str().map(|r| node(&input, r));
        let got = input.nary_rule(&args).unwrap().ok();
        cases += 1;
        if got != want {
            differ.push(line);
        }
    }
    assert_eq!(cases, 20_000);
    assert!(
        differ.is_empty(),
        "{} differ, e.g. {:?}",
        differ.len(),
        &differ[..differ.len().min(5)]
    );
}

#[test]
fn numpy_rule_orders_dtype_arguments_first_and_refuses_as_numpy_does() {
    let input = load(TABLE);
    let n = |s: &str| node(&input, s);
    let rt = |args: &[Arg]| input.nary_rule(args).unwrap();
    // The witnesses: not the fold of the pairs.
    let dtypes = |names: &[&str]| {
        names
            .iter()
            .map(|s| Arg::of(input.table(), n(s)))
            .collect::<Vec<_>>()
    };
    assert_eq!(rt(&dtypes(&["uint8", "int8", "float16"])), Ok(n("float16")));
    assert_eq!(rt(&dtypes(&["i*", "i*", "int16"])), Ok(n("int16")));
    // np.result_type(False, bfloat16, 0): every pair promotes, the three do not. NumPy reduces
    // to the Python int, promotes bool (int64) and bfloat16 by it, and "the DTypes Int64DType
    // and bfloat16 do not have a common DType".
    assert_eq!(
        rt(&dtypes(&["b*", "bfloat16", "i*"])),
        Err(Refusal::new(n("bfloat16"), n("int64")))
    );
    // A dtype argument goes before the values, an array keeps its place:
    // np.result_type(np.dtype(uint1), 0, np.dtype(bool)) is int64,
    // np.result_type(np.zeros(1, uint1), 0, np.zeros(1, bool)) uint8.
    assert_eq!(rt(&dtypes(&["uint1", "i*", "bool"])), Ok(n("int64")));
    let values = [n("uint1"), n("i*"), n("bool")].map(Arg::Value);
    assert_eq!(rt(&values), Ok(n("uint8")));
    // One operand is its dtype; Python scalars alone their default.
    assert_eq!(rt(&dtypes(&["f*"])), Ok(n("float64")));
    assert_eq!(rt(&dtypes(&["i*", "f*", "c*"])), Ok(n("complex128")));
}

#[test]
fn a_bad_nary_declaration_names_the_key() {
    let text = std::fs::read_to_string(root().join(TABLE)).unwrap();
    let bad = text.replacen("\"rule\": \"numpy\"", "\"rule\": \"numpi\"", 1);
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(e.contains("unknown n-ary rule `numpi`"), "{e}");
    assert!(e.contains("t.json:"), "{e}");
    let bad = text.replacen("\"user\": 256", "\"user\": 25", 1);
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(
        e.contains("`bfloat16`: user type number 25 is below 256"),
        "{e}"
    );
}

#[test]
fn result_type_on_the_numpy_table_runs_numpys_rule() {
    let run = |ops: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .current_dir(root())
            .args(["result-type", TABLE])
            .args(ops)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap() + &String::from_utf8(o.stderr).unwrap(),
        )
    };
    assert_eq!(
        run(&["uint8", "int8", "float16"]),
        (Some(0), "uint8 ∨ int8 ∨ float16 = float16\n".into())
    );
    assert_eq!(
        run(&["i*", "i*", "int16"]),
        (Some(0), "i* ∨ i* ∨ int16 = int16\n".into())
    );
    let (code, out) = run(&["b*", "bfloat16", "i*"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("its `numpy` n-ary rule finds no common dtype of int64 and bfloat16"),
        "{out}"
    );
}

#[test]
fn a_triple_the_rule_does_not_give_fails_check_with_its_witness() {
    let text = std::fs::read_to_string(root().join(TABLE)).unwrap();
    let bad = text.replacen(
        "\"uint8|int8|float16\": \"float16\"",
        "\"uint8|int8|float16\": \"float32\"",
        1,
    );
    assert_ne!(bad, text);
    let input = Input::parse(TABLE, &bad).unwrap();
    let checked = typejoin::check(&input, CheckConfig::with(Engine::Exhaustive)).unwrap();
    let rule = checked.rule.as_ref().unwrap();
    assert_eq!(rule.mismatches, 1);
    let human = typejoin::render::human(
        &checked,
        typejoin::render::ReportOptions {
            witnesses: 3,
            verbose: false,
            color: false,
        },
    );
    assert!(
        human.contains(
            "error[nary-rule]: the `numpy` n-ary rule differs from 1 of 54872 measured triples\n      {uint8, int8, float16}: the rule gives float16, measured float32\n"
        ),
        "{human}"
    );
}

const TORCH: &str = "observed/torch_categories.json";

#[test]
fn torch_rule_gives_every_measured_triple_over_the_whole_catalogue() {
    // The table's own triples (the lattice core in both categories and the Python scalars).
    let input = load(TORCH);
    let rule = input.verify_rule().expect("the table declares `torch`");
    assert_eq!(
        (rule.rule, rule.multisets, rule.mismatches),
        ("torch", 32_768, 0)
    );
    // 30,000 random triples of tensors over all 47 torch dtypes, measured on the CPU by
    // scripts/oracle_torch_result_type.py (torch.addcmul's common dtype): 21,525 raise.
    let (mut cases, mut raised, mut differ) = (0, 0, Vec::new());
    for (line, v) in measured("tests/data/torch/result_type_cases.jsonl") {
        let ops: Vec<Arg> = v["operands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| Arg::Value(node(&input, o.as_str().unwrap())))
            .collect();
        let want = v["result"].as_str().map(|r| node(&input, r));
        let got = input.nary_rule(&ops).unwrap().ok();
        cases += 1;
        raised += usize::from(want.is_none());
        if got != want {
            differ.push(line);
        }
    }
    assert_eq!((cases, raised), (30_000, 21_525));
    assert!(
        differ.is_empty(),
        "{} differ, e.g. {:?}",
        differ.len(),
        &differ[..differ.len().min(5)]
    );
}

#[test]
fn torch_rule_folds_each_category_then_combines() {
    let input = load(TORCH);
    let n = |s: &str| node(&input, s);
    let rt = |names: &[&str]| {
        let args: Vec<Arg> = names.iter().map(|s| Arg::Value(n(s))).collect();
        input.nary_rule(&args).unwrap()
    };
    // A zero-dim float over dimensioned uint16: the float (every pair promotes).
    assert_eq!(rt(&["uint16", "float32@0d"]), Ok(n("float32")));
    // Two dimensioned operands promote first: uint16 ∨ uint8 raises whatever follows.
    assert_eq!(
        rt(&["uint16", "uint8", "float32"]),
        Err(Refusal::new(n("uint8"), n("uint16")))
    );
    // The same dtypes with uint8 zero-dim: the categories never promote it with uint16.
    assert_eq!(rt(&["uint16", "uint8@0d", "float32"]), Ok(n("float32")));
    // A complex Python number over a float8 tensor: toComplexType(Float8_e4m3fn) raises.
    assert!(rt(&["float8_e4m3fn", "c*"]).is_err());
    assert_eq!(rt(&["float16", "int64@0d", "c*"]), Ok(n("complex32")));
}

/// A bad `"kernels"` entry is a located error that says what to write, never a panic.
#[test]
fn a_bad_kernels_declaration_names_the_key_and_its_line() {
    let text = std::fs::read_to_string(root().join(TABLE)).unwrap();
    let line_of = |needle: &str| text[..text.find(needle).unwrap()].lines().count();
    let bad = text.replacen(
        "\"zero_ties\": \"operand\"",
        "\"zero_ties\": \"sideways\"",
        1,
    );
    let e = Input::parse("t.json", &bad).unwrap_err();
    let d = &e.diagnostics[0];
    assert_eq!(d.line, line_of("\"zero_ties\": \"operand\""));
    assert!(
        d.message.contains("`zero_ties` cannot be \"sideways\""),
        "{}",
        d.message
    );
    assert!(
        e.to_string().contains("its values are second, operand"),
        "{e}"
    );
    let bad = text.replacen("\"loops\": {", "\"loops\": {\"matmul\": {},", 1);
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(e.contains("`matmul` is not an op of the kernels"), "{e}");
    let bad = text.replacen(
        "\"conventions\": {",
        "\"extends\": \"torch\", \"conventions\": {",
        1,
    );
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(e.contains("`extends` and `dtypes` go together"), "{e}");
    let bad = text.replacen(
        "\"conventions\": {",
        "\"conventions\": {\"rounding\": \"up\",",
        1,
    );
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(e.contains("unknown convention `rounding`"), "{e}");
    assert!(e.contains("t.json:"), "{e}");
    // The loop search: its ops are ternary, its loops the table's dtypes, and it needs
    // NumPy's n-ary rule.
    let bad = text.replacen("\"ops\": {\n    \"clip\"", "\"ops\": {\n    \"add\"", 1);
    let e = Input::parse("t.json", &bad).unwrap_err();
    assert_eq!(e.diagnostics[0].line, line_of("\"search\"") + 2);
    assert!(
        e.to_string()
            .contains("`add` is not a ternary op of the kernels"),
        "{e}"
    );
    let bad = text.replacen(
        "\"bfloat16\": [\n     \"float32\"",
        "\"bfloat16\": [\n     \"float31\"",
        1,
    );
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(
        e.contains("`kernels.search.safe.bfloat16` must be a list of the table's dtypes"),
        "{e}"
    );
    let bad = text.replacen("\"nary\": {", "\"nary_\": {", 1);
    let e = Input::parse("t.json", &bad).unwrap_err().to_string();
    assert!(e.contains("`search` needs NumPy's n-ary rule"), "{e}");
    // TensorFlow's safe table names its policy and its weak nodes' dtypes.
    let safe = std::fs::read_to_string(root().join("observed/tensorflow_safe.json")).unwrap();
    let line_of = |needle: &str| safe[..safe.find(needle).unwrap()].lines().count();
    let bad = safe.replacen("\"tensorflow-safe\"", "\"TensorFlow Safe\"", 1);
    let e = Input::parse("s.json", &bad).unwrap_err();
    assert_eq!(e.diagnostics[0].line, line_of("\"policy\""));
    assert!(
        e.to_string().contains(
            "`policy` must be a policy name (lowercase letters, digits and `-`), not \"TensorFlow Safe\""
        ),
        "{e}"
    );
    let weak = "\"weak\": {\n   \"i*\": \"int32\"";
    let bad = safe.replacen(weak, "\"weak\": {\n   \"i*\": \"int33\"", 1);
    let e = Input::parse("s.json", &bad).unwrap_err();
    assert_eq!(e.diagnostics[0].line, line_of(weak) + 1);
    assert!(
        e.to_string()
            .contains("weak node `i*` and its dtype (\"int33\") must be dtypes of `dtypes`"),
        "{e}"
    );
}

/// `np.clip` with an ml_dtypes operand runs NumPy's legacy loop search (`kernels.search`): the
/// first of clip's loops every operand casts to safely, measured on NumPy 2.4.6 with ml_dtypes
/// 0.6.0 (`scripts/dump_table.py numpy-result-type` checks the search on every triple). Where
/// no operand is an ml_dtypes type, the n-ary rule stands.
#[test]
fn numpy_clip_of_ml_dtypes_operands_takes_the_first_loop_all_cast_to() {
    use typejoin::op::OpId;
    use typejoin::{DType, Operand, ScalarKind};
    let numpy = typejoin::policy("numpy").unwrap();
    let d = |n: &str| Operand::Array(DType::named(n).unwrap());
    let clip = |ops: &[Operand]| numpy.nary_op_type(OpId::CLIP, ops).map(|t| t.name());
    let bf16 = d("bfloat16");
    assert_eq!(clip(&[bf16, bf16, bf16]), Ok("float32"));
    assert_eq!(clip(&[d("bool"), d("bool"), d("uint1")]), Ok("int8"));
    assert_eq!(clip(&[d("int4"), d("uint64"), d("int8")]), Ok("float64"));
    let (b, i, c) = (
        Operand::Scalar(ScalarKind::Bool),
        Operand::Scalar(ScalarKind::Int),
        Operand::Scalar(ScalarKind::Complex),
    );
    // np.result_type refuses these operands; np.clip's loop search does not.
    assert!(numpy.nary_type(&[bf16, b, i]).is_err());
    assert_eq!(clip(&[bf16, b, i]), Ok("float32"));
    assert_eq!(clip(&[d("uint4"), i, i]), Ok("int8"));
    assert_eq!(clip(&[d("float8_e4m3fn"), c, i]), Ok("complex64"));
    assert_eq!(clip(&[d("complex32"), i, i]), Ok("complex64"));
    // NumPy's own dtypes keep the n-ary rule: uint8, int8, float16 is float16.
    assert_eq!(clip(&[d("uint8"), d("int8"), d("float16")]), Ok("float16"));
}
