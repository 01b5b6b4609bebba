//! Operand categories: PyTorch's policies derived from its rule, held to the live library's
//! pairs and triples (observed/torch_categories*.json, measured with torch 2.15.0), the full
//! live table's witnesses, a wrong hand-written order caught by the n-ary check, and the
//! category syntax's errors.

use std::process::Command;

use typejoin::{CheckConfig, Engine, Input, Law};

use crate::{load, root};

fn checked(path: &str) -> typejoin::Checked {
    typejoin::check(&load(path), CheckConfig::with(Engine::Exhaustive)).unwrap()
}

fn result(path: &str, operands: &[&str]) -> (Option<String>, Option<String>) {
    let ops: Vec<String> = operands.iter().map(|s| s.to_string()).collect();
    let r = typejoin::result_type(&load(path), &ops).unwrap();
    (r.node, r.dtype)
}

#[test]
fn torch_is_derived_into_thirty_nodes_and_is_a_lattice_whose_join_is_the_rule() {
    let Input::Policy { policy, .. } = load("lattices/torch.toml") else {
        panic!()
    };
    assert_eq!(policy.dtypes().len(), 30);
    assert_eq!(
        &policy.dtypes()[14..],
        [
            "uint8@0d",
            "int8@0d",
            "int16@0d",
            "int32@0d",
            "int64@0d",
            "float16@0d",
            "bfloat16@0d",
            "float32@0d",
            "float64@0d",
            "complex32@0d",
            "bcomplex32@0d",
            "complex64@0d",
            "complex128@0d",
            "i*",
            "f*",
            "c*"
        ]
    );
    let cats = policy.categories().unwrap();
    assert_eq!(
        cats.aliases,
        vec![("bool@0d".to_string(), 0), ("b*".to_string(), 0)]
    );
    let c = checked("lattices/torch.toml");
    assert!(c.report.ok(), "{:?}", c.report.violated().next());
    let n = c.nary.unwrap();
    assert_eq!((n.multisets, n.mismatches), (58_904, 0));
}

/// The examples: `x` an int8 tensor.
#[test]
fn the_n_ary_result_is_pytorchs() {
    let t = "lattices/torch.toml";
    let dtype = |ops: &[&str]| result(t, ops).1.unwrap();
    assert_eq!(dtype(&["int8", "float64@0d"]), "float64");
    assert_eq!(dtype(&["int8", "int64@0d"]), "int8");
    assert_eq!(dtype(&["int8", "f*"]), "float32");
    assert_eq!(dtype(&["int8", "i*"]), "int8");
    // torch.clamp(int8, float16@0d, float64@0d) is float64; the fold of binary result_type
    // would give float16.
    assert_eq!(
        result(t, &["int8", "float16@0d", "float64@0d"]),
        (Some("float64@0d".into()), Some("float64".into()))
    );
    assert_eq!(dtype(&["float16", "c*"]), "complex32");
    assert_eq!(dtype(&["bfloat16", "c*"]), "bcomplex32");
    // Aliases and short codes.
    assert_eq!(dtype(&["bool@0d", "u8"]), "uint8");
    assert_eq!(dtype(&["b*", "bool"]), "bool");
    assert_eq!(dtype(&["i8@0d", "u8@0d"]), "int16");
    let t64 = "lattices/torch-float64.toml";
    assert_eq!(result(t64, &["int8", "f*"]).1.unwrap(), "float64");
    assert_eq!(result(t64, &["int8", "c*"]).1.unwrap(), "complex128");
}

#[test]
fn torch_policies_equal_the_live_library_on_every_pair_and_triple() {
    for (policy, table) in [
        ("lattices/torch.toml", "observed/torch_categories.json"),
        (
            "lattices/torch-float64.toml",
            "observed/torch_categories_float64.json",
        ),
    ] {
        let d = typejoin::diff(&load(policy), &load(table), true);
        assert_eq!(d.common.len(), 32, "{policy}");
        assert_eq!(d.compared, 528);
        assert_eq!(d.entries, vec![], "{policy}");
        assert_eq!(d.triples_compared, 32_768);
        assert_eq!(d.triples, vec![], "{policy}");
        assert_eq!((d.edges_only_in_a.len(), d.edges_only_in_b.len()), (0, 0));
        assert!(d.only_in_a.is_empty());
        // Everything the policy leaves out: the unsigned ints above 8 bits, sub-byte ints,
        // float8, the opaque types, each in both categories.
        assert_eq!(d.only_in_b.len(), 66);
    }
}

#[test]
fn the_full_live_table_is_not_a_lattice_and_says_where() {
    let c = checked("observed/torch_categories.json");
    let r = &c.report;
    // Lifted to nodes by the measured triples, the pairs are associative wherever defined ...
    assert!(r.law(Law::Associativity).unwrap().count == 0);
    // ... but uint16 joins float16 and not uint8.
    let da = r.law(Law::DefinednessAssociativity).unwrap();
    assert_eq!(
        da.witnesses[0].detail,
        "(bool ∨ uint8@0d) ∨ uint16 = uint8@0d ∨ uint16 = uint16, but bool ∨ (uint8@0d ∨ uint16) = bool ∨ uint16 is undefined"
    );
    assert_eq!(da.count, 171_736);
    // Its pairs give every measured triple.
    let n = c.nary.unwrap();
    assert_eq!((n.multisets, n.mismatches), (32_768, 0));
    let t = load("observed/torch_categories.json");
    let rt = |a: &str, b: &str| {
        let (x, y) = (t.resolve(a).unwrap(), t.resolve(b).unwrap());
        t.table().get(x, y).map(|r| t.table().name(r).to_string())
    };
    assert_eq!(rt("uint16", "uint8"), None);
    assert_eq!(rt("uint16", "float16").as_deref(), Some("float16"));
    assert_eq!(rt("float8_e4m3fn", "float16"), None);
    assert_eq!(rt("float8_e4m3fn", "f*").as_deref(), Some("float8_e4m3fn"));
    assert_eq!(rt("int4", "int8"), None);
}

#[test]
fn a_wrong_hand_written_order_is_caught_with_its_smallest_multiset() {
    let c = checked("tests/data/not-lattice/torch-binary-transcription.toml");
    assert!(c.report.ok(), "every law holds on the order itself");
    assert!(c.failed());
    let n = c.nary.as_ref().unwrap();
    assert_eq!((n.multisets, n.mismatches), (209, 15));
    let w = &n.witnesses[0];
    assert_eq!(w.operands, ["int8", "float64@0d"]);
    assert_eq!(
        (w.rule.as_deref(), w.order.as_deref()),
        (Some("float64"), Some("float16"))
    );
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args([
            "check",
            "--engine",
            "exhaustive",
            "tests/data/not-lattice/torch-binary-transcription.toml",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(
            "  error[nary]: on 15 of 209 multisets of up to 4 operands the order's join is not the `by-kind` rule\n      {int8, float64@0d}: the rule gives float64, the order's join is float16\n"
        ),
        "{out}"
    );
}

#[test]
fn result_type_command_prints_the_node_and_the_dtype() {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    assert_eq!(
        run(&[
            "result-type",
            "lattices/torch.toml",
            "i8",
            "f16@0d",
            "f64@0d"
        ]),
        (
            Some(0),
            "int8 ∨ float16@0d ∨ float64@0d = float64@0d (returned as float64)\n".into(),
            String::new()
        )
    );
    assert_eq!(
        run(&["result-type", "lattices/jax.toml", "int4", "int8"]),
        (
            Some(1),
            "int4 ∨ int8: no common upper bound: the library raises\n".into(),
            String::new()
        )
    );
    let (code, out, _) = run(&[
        "result-type",
        "lattices/torch.toml",
        "int8",
        "f*",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap(),
        serde_json::json!({"operands": ["int8", "f*"], "promoted_as": ["int8", "f*"], "node": "f*", "dtype": "float32", "error": null})
    );
    // JAX without x64 converts a 64-bit input to its 32-bit type before promoting.
    assert_eq!(
        run(&["result-type", "lattices/jax-x32.toml", "u64", "int8"]),
        (
            Some(0),
            "uint64 ∨ int8 (promoted as uint32 ∨ int8) = int32\n".into(),
            String::new()
        )
    );
    let (code, _, err) = run(&["result-type", "lattices/torch.toml", "int8", "uint16"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("`uint16` is not an operand of `torch`"),
        "{err}"
    );
}

fn parse_error(text: &str) -> String {
    match Input::parse("p.toml", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn category_syntax_errors_are_located_with_a_fix() {
    let base = "name = \"p\"\ndtypes = [\"int8\", \"int8@\"]\n";
    let e = parse_error(base);
    assert!(e.contains("p.toml:2:19"), "{e}");
    assert!(e.contains("`int8@` has an invalid category"), "{e}");

    let e = parse_error("name = \"p\"\ndtypes = [\"int16@0d\"]\n");
    assert!(
        e.contains("`int16@0d` is a category node of `int16`, which is not declared in `dtypes`"),
        "{e}"
    );
    assert!(e.contains("add \"int16\" to `dtypes`"), "{e}");

    let e = parse_error("name = \"p\"\ndtypes = [\"int8\"]\n[categories]\nrule = \"by-kinds\"\n");
    assert!(e.contains("p.toml:4:8"), "{e}");
    assert!(e.contains("unknown category rule `by-kinds`"), "{e}");
    assert!(e.contains("did you mean `by-kind`?"), "{e}");

    let e = parse_error(
        "name = \"p\"\ndtypes = [\"int8\", \"int8@0d\"]\n[categories]\nrule = \"by-kind\"\nlower = [\"zero\"]\n",
    );
    assert!(
        e.contains("category `0d` is not listed in `[categories] lower`"),
        "{e}"
    );

    let e = parse_error(
        "name = \"p\"\ndtypes = [\"int8\"]\n[categories]\nrule = \"by-kind\"\nscalars = { int8 = \"int8\", \"f*\" = \"float32\" }\n",
    );
    assert!(e.contains("`int8` is not a scalar type"), "{e}");
    assert!(
        e.contains("scalar `f*` is wrapped as `float32`, which is not a declared dtype"),
        "{e}"
    );

    let e = parse_error("name = \"p\"\ndtypes = [\"qint8\", \"qint8@0d\"]\n");
    assert!(e.contains("`qint8` cannot have a category"), "{e}");
}

/// TensorFlow's flexible dtypes (TF 2.21): weak tensors as hand-declared category nodes.
#[test]
fn tensorflow_all_is_the_live_table_and_safe_is_not_a_lattice() {
    let d = typejoin::diff(
        &load("lattices/tensorflow.toml"),
        &load("observed/tensorflow_all.json"),
        false,
    );
    assert!(d.same(), "{:?}", d.entries);
    assert_eq!((d.compared, d.triples_compared), (210, 8000));
    let c = checked("observed/tensorflow_all.json");
    assert!(c.ok());
    assert_eq!(c.nary.unwrap().multisets, 8000);
    let t = "lattices/tensorflow.toml";
    assert_eq!(
        result(t, &["int8", "f*"]),
        (Some("float64@weak".into()), Some("float64".into()))
    );
    assert_eq!(result(t, &["int8", "i*"]).0.as_deref(), Some("int8"));
    assert_eq!(
        result(t, &["uint64", "int64"]).0.as_deref(),
        Some("float64@weak")
    );

    let safe = checked("observed/tensorflow_safe.json");
    let da = safe.report.law(Law::DefinednessAssociativity).unwrap();
    assert_eq!(da.count, 548);
    assert_eq!(
        da.witnesses[0].detail,
        "(uint8 ∨ int8) ∨ int16 is undefined (uint8 ∨ int8 is), but uint8 ∨ (int8 ∨ int16) = uint8 ∨ int16 = int16"
    );
}

/// Placing a dtype in PyTorch's policy places its zero-dim variant too, and keeps only the
/// placements whose derived order still is a lattice whose join is the rule.
#[test]
fn suggest_places_the_category_variants_and_keeps_the_rule() {
    let Input::Policy { policy, .. } = load("lattices/torch.toml") else {
        panic!()
    };
    let opts = typejoin::suggest::Options {
        max_degree: 2,
        top: 5,
    };
    let s = typejoin::suggest::suggest(&policy, "bfloat16", None, opts).unwrap();
    // Only its own place survives: anywhere else, bfloat16 ∨ c* (bcomplex32 by the rule)
    // or an existing join breaks.
    assert_eq!(s.placements.len(), 1);
    let p = &s.placements[0];
    assert!(p.current);
    assert_eq!(
        (p.below.clone(), p.above.clone()),
        (
            vec!["int64".to_string()],
            vec!["float32".to_string(), "bcomplex32".to_string()]
        )
    );
    let c = s.categories.unwrap();
    assert_eq!(c.variants, ["bfloat16@0d"]);
    assert_eq!((s.valid, c.dropped), (96, 95));
    // float8 has no complex of its precision and raises with every other dtype in PyTorch:
    // no placement keeps the rule in a policy that is not partial.
    let f8 = typejoin::suggest::suggest(&policy, "float8_e4m3fn", None, opts).unwrap();
    assert!(f8.placements.is_empty());
    assert_eq!(f8.categories.unwrap().dropped, f8.valid);
}

/// `[formats]` declares integer and complex formats too; the category rule finds a declared
/// complex of a declared float.
#[test]
fn declared_int_and_complex_formats_take_part() {
    let c = checked("tests/data/custom-int-complex.toml");
    assert!(c.ok(), "{:?}", c.nary);
    assert_eq!(c.nary.as_ref().unwrap().multisets, 3875);
    let Input::Policy { policy, .. } = load("tests/data/custom-int-complex.toml") else {
        panic!()
    };
    use typejoin::Numeric;
    let of = |n: &str| Numeric::of(&policy, policy.node(n).unwrap());
    assert_eq!(
        of("int12"),
        Some(Numeric::Int {
            bits: 12,
            signed: true
        })
    );
    assert!(
        matches!(of("cfloat8_e4m3x"), Some(Numeric::Complex(f)) if f.exponent_bits == 4 && f.mantissa_bits == 3)
    );
    assert!(matches!(
        of("int12@0d"),
        Some(Numeric::Int { bits: 12, .. })
    ));
    // The rule's complex of float8_e4m3x is the declared cfloat8_e4m3x.
    let t = "tests/data/custom-int-complex.toml";
    assert_eq!(
        result(t, &["float8_e4m3x", "c*"]).1.as_deref(),
        Some("cfloat8_e4m3x")
    );

    let head = "name = \"p\"\ndtypes = [\"x\"]\n[formats.x]\n";
    let e = parse_error(&format!("{head}kind = \"int\"\n"));
    assert!(e.contains("integer format `x` needs `bits`"), "{e}");
    let e = parse_error(&format!("{head}kind = \"int\"\nbits = 65\n"));
    assert!(e.contains("bits = 65 is out of range"), "{e}");
    let e = parse_error(&format!("{head}kind = \"complex\"\nof = \"float17\"\n"));
    assert!(e.contains("`float17` is not a float format"), "{e}");
    let e = parse_error(&format!(
        "{head}kind = \"int\"\nbits = 8\nmantissa_bits = 3\n"
    ));
    assert!(
        e.contains("`mantissa_bits` does not apply to kind = \"int\""),
        "{e}"
    );
    let e = parse_error(&format!("{head}kind = \"float\"\nexponent_bits = 4\n"));
    assert!(
        e.contains("float format `x` needs `exponent_bits` and `mantissa_bits`"),
        "{e}"
    );
    let e = parse_error(&format!("{head}kind = \"posit\"\n"));
    assert!(
        e.contains("use kind = \"float\", \"int\" or \"complex\""),
        "{e}"
    );
}

mod beyond_four {
    use proptest::prelude::*;
    use typejoin::Input;

    proptest! {
        #![proptest_config(crate::props::config("categories"))]

        /// `check` compares the order's join with the rule on every multiset of up to four
        /// operands; on PyTorch's policies the two agree on larger ones too.
        #[test]
        fn the_join_is_the_rule_on_five_to_eight_operands(
            which in 0..2usize,
            picks in proptest::collection::vec(0..32usize, 5..=8),
        ) {
            let path = ["lattices/torch.toml", "lattices/torch-float64.toml"][which];
            let Input::Policy { policy, lattice, .. } = crate::load(path) else { panic!() };
            let mut names: Vec<String> = policy.dtypes().to_vec();
            for (a, _) in &policy.categories().unwrap().aliases {
                names.push(a.clone());
            }
            prop_assert_eq!(names.len(), 32);
            let ops: Vec<&str> = picks.iter().map(|&i| names[i].as_str()).collect();
            let rule = typejoin::rule_result(&policy, &lattice, &ops)
                .expect("every name is an operand");
            let idx: Vec<usize> = ops.iter().map(|n| policy.node(n).unwrap()).collect();
            let order = lattice
                .result_type(&idx)
                .and_then(|j| j.unique())
                .and_then(|j| policy.materialise(j));
            prop_assert_eq!(rule, order, "{:?}", ops);
        }
    }
}

/// Deriving costs the fourth power of the node count: more than 96 derived nodes is a located
/// error, not a minute of work.
#[test]
fn too_many_derived_nodes_are_refused_where_the_categories_are_declared() {
    let lower: Vec<String> = (0..8).map(|i| format!("\"c{i}\"")).collect();
    let text = format!(
        "name = \"big\"\ndtypes = [\"bool\", \"int8\", \"int16\", \"int32\", \"int64\", \"float16\", \"float32\", \"float64\", \"complex64\", \"complex128\", \"uint8\"]\n[categories]\nrule = \"by-kind\"\nlower = [{}]\n",
        lower.join(", ")
    );
    let e = parse_error(&text);
    assert!(e.contains("p.toml:3:1"), "{e}");
    assert!(
        e.contains("the categories would derive 99 nodes, more than the 96 typejoin derives"),
        "{e}"
    );
}
