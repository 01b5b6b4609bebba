//! Generated code: `src/generated/` is exactly what `typejoin codegen` writes for the shipped
//! lattices (regenerated in-process and compared, the rust-analyzer way), the tables agree
//! with the lattices they come from, and a policy whose laws fail is refused.

use std::process::Command;

use typejoin::{
    DType, Input, Provenance,
    op::OpId,
    render::codegen::{extended_module, index, module, module_name, table_module},
};
use typejoin::{Failure, Operand, ScalarKind};

use crate::{files, load, root};

const COMMAND_DIR: &str = "src/generated";

/// The shipped policies, every one generated (a dtype without an array type, PyTorch's
/// complex32, is an `unsupported` answer of the kernels, not a refusal).
fn shipped() -> Vec<String> {
    files("lattices", "toml")
        .into_iter()
        .filter(|f| !f.contains("/studies/"))
        .collect()
}

/// The measured library tables generated beside the lattices: each says what its library
/// computes in (`"kernels"`), and runs as its library's policy (docs/policy-kinds.md).
const LIBRARY_TABLES: &[&str] = &[
    "observed/numpy_result_type.json",
    "observed/tensorflow_safe.json",
];
/// The measured tables that extend a lattice policy with the rest of its library's catalogue
/// (`"kernels": {"extends": …}`), in codegen's file order.
const EXTENSIONS: &[(&str, &str)] = &[
    ("torch", "observed/torch_categories.json"),
    ("torch-float64", "observed/torch_categories_float64.json"),
];

/// A policy's `[kernels]` conventions and `[ops.X] kinds` reach its generated table: PyTorch's
/// for `torch`, XLA's for `jax`, TensorFlow's flushed subnormals.
#[test]
fn kernel_conventions_are_generated() {
    use typejoin::op::{
        BoolMultiply, BroadcastDivisor, ClipBounds, ClipComposition, ClipMixedBounds, ComplexAdd,
        ComplexDivide, ComplexMultiply, ComplexNegative, ComplexOrder, ComplexPower, ComplexToBool,
        DivisionByZero, Float8Conversion, FloatFloorDivide, IntComparison, IntConversion,
        IntnConversion, Narrowing, PowerExponent, PythonInt, ScalarOverArray, ScalarPrecision,
        Semantics, Subnormals, SumOrder, WhereScalars, ZeroSign, ZeroTies,
    };
    let torch = typejoin::policy("torch").unwrap();
    assert_eq!(
        torch.semantics,
        Semantics {
            python_int: PythonInt::Wrap,
            python_int_comparison: IntComparison::Operand,
            integer_division_by_zero: DivisionByZero::Raise,
            reduced_float_scalars: ScalarPrecision::Float32,
            remainder_zero_sign: ZeroSign::Dividend,
            complex_negative: ComplexNegative::ZeroMinus,
            complex_add: ComplexAdd::Alpha,
            clip_bounds: ClipBounds::Checked,
            float_floor_divide: FloatFloorDivide::Vectors,
            scalar_over_array: ScalarOverArray::ReciprocalTimes,
            clip_composition: ClipComposition::Joined,
            where_scalars: WhereScalars::Checked,
            float8_conversion: Float8Conversion::C10,
            clip_mixed_bounds: ClipMixedBounds::Unsupported,
            intn_conversion: IntnConversion::Saturate,
            int_conversion: IntConversion::X86C10,
            sum_order: SumOrder::Torch,
            power_exponent: PowerExponent::Pow,
            complex_to_bool: ComplexToBool::Either,
            subnormals: Subnormals::Keep,
            zero_ties: ZeroTies::Vectors,
            complex_order: ComplexOrder::NumPy,
            complex_divide: ComplexDivide::SmithFused,
            complex_multiply: ComplexMultiply::Vectors,
            bool_multiply: BoolMultiply::Product,
            complex_power: ComplexPower::Torch,
            broadcast_divisor: BroadcastDivisor::Divide,
            narrowing: Narrowing::ViaFloat32,
        }
    );
    assert_eq!(
        torch.kinds(OpId::of("maximum")).describe(),
        "bool, integer, float"
    );
    assert_eq!(
        torch.kinds(OpId::of("absolute")).describe(),
        "integer, float, complex"
    );
    assert_eq!(
        torch.kinds(OpId::of("add")).describe(),
        "bool, integer, float, complex"
    );
    assert_eq!(
        torch.kinds(OpId::of("power")).describe(),
        "integer, float, complex"
    );
    let jax = typejoin::policy("jax").unwrap();
    assert_eq!(jax.kinds(OpId::of("power")).describe(), "integer, float");
    assert_eq!(
        torch
            .operand_kinds(OpId::of("subtract"))
            .unwrap()
            .describe(),
        "integer, float, complex"
    );
    assert_eq!(torch.operand_kinds(OpId::of("add")), None);
    let jax = typejoin::policy("jax").unwrap();
    assert_eq!(
        jax.semantics,
        Semantics {
            python_int: PythonInt::Convert,
            integer_division_by_zero: DivisionByZero::Xla,
            remainder_zero_sign: ZeroSign::Dividend,
            zero_ties: ZeroTies::Ordered,
            complex_add: ComplexAdd::Xla,
            float_floor_divide: FloatFloorDivide::Xla,
            subnormals: Subnormals::Flush,
            complex_order: ComplexOrder::Lexicographic,
            complex_divide: ComplexDivide::Xla,
            bool_multiply: BoolMultiply::Select,
            clip_composition: ClipComposition::Chained,
            broadcast_divisor: BroadcastDivisor::Reciprocal,
            sum_order: SumOrder::Xla,
            power_exponent: PowerExponent::Pow,
            narrowing: Narrowing::ViaFloat32,
            complex_multiply: ComplexMultiply::Xla,
            ..Semantics::default()
        }
    );
    assert_eq!(
        typejoin::policy("tensorflow").unwrap().semantics.subnormals,
        Subnormals::Flush
    );
    assert_eq!(jax.operand_kinds(OpId::of("subtract")), None);
    // TensorFlow's truediv refuses a bool join; its bitwise ops compute a Python-int join in
    // int64 (lattices/tensorflow.toml).
    let tensorflow = typejoin::policy("tensorflow").unwrap();
    assert_eq!(
        tensorflow
            .join_kinds(OpId::of("true_divide"))
            .unwrap()
            .describe(),
        "integer, float, complex"
    );
    assert_eq!(tensorflow.join_kinds(OpId::of("add")), None);
    assert_eq!(jax.join_kinds(OpId::of("true_divide")), None);
    let int64 = |op: &str| {
        let (_, node) = tensorflow
            .op_python_int_as
            .iter()
            .find(|(o, _)| *o == OpId::of(op))
            .unwrap();
        tensorflow.dtypes[*node as usize]
    };
    assert_eq!(
        ["bitwise_and", "bitwise_or", "bitwise_xor"].map(int64),
        ["int64"; 3]
    );
    assert!(jax.op_python_int_as.is_empty());
    assert_eq!(
        jax.kinds(OpId::of("maximum")).describe(),
        "bool, integer, float, complex"
    );
    // TensorFlow's safe mode changes which pairs promote, not how a kernel computes: its
    // measured table (python/typejoin/measure.py TENSORFLOW_CONVENTIONS) declares the
    // conventions lattices/tensorflow.toml does.
    assert_eq!(
        typejoin::policy("tensorflow-safe").unwrap().semantics,
        typejoin::policy("tensorflow").unwrap().semantics
    );
}

#[test]
fn generated_modules_are_fresh() {
    let policies = shipped();
    let command = format!(
        "typejoin codegen {} {} {} --out {COMMAND_DIR}",
        policies.join(" "),
        LIBRARY_TABLES.join(" "),
        EXTENSIONS
            .iter()
            .map(|(_, p)| *p)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut names = Vec::new();
    for path in &policies {
        let Input::Policy { policy, joins, .. } = load(path) else {
            panic!("{path}")
        };
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let stem = path.rsplit('/').next().unwrap().trim_end_matches(".toml");
        let name = module_name(stem);
        let prov = Provenance {
            path,
            text: &text,
            command: &command,
        };
        let want = match EXTENSIONS.iter().find(|(p, _)| *p == policy.name()) {
            None => module(&policy, &joins, &prov),
            Some((_, table)) => {
                let input = load(table);
                let Input::Observed(observed) = &input else {
                    panic!("{table}")
                };
                let table_text = std::fs::read_to_string(root().join(table)).unwrap();
                extended_module(
                    &policy,
                    &joins,
                    observed,
                    &input.check(Default::default()),
                    &prov,
                    &Provenance {
                        path: table,
                        text: &table_text,
                        command: &command,
                    },
                )
                .unwrap()
            }
        };
        let file = root().join(COMMAND_DIR).join(format!("{name}.rs"));
        let have = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            have == want,
            "{} is stale: run `cargo run -- {}`",
            file.display(),
            command.trim_start_matches("typejoin ")
        );
        names.push(name);
    }
    for path in LIBRARY_TABLES {
        let input = load(path);
        let Input::Observed(observed) = &input else {
            panic!("{path}")
        };
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let report = input.check(Default::default());
        let want = table_module(
            observed,
            &report,
            &Provenance {
                path,
                text: &text,
                command: &command,
            },
        )
        .expect("the table says what its library computes in");
        let name = module_name(observed.policy_name());
        let file = root().join(COMMAND_DIR).join(format!("{name}.rs"));
        let have = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            have == want,
            "{} is stale: run `cargo run -- {}`",
            file.display(),
            command.trim_start_matches("typejoin ")
        );
        names.push(name);
    }
    names.sort();
    let have = std::fs::read_to_string(root().join(COMMAND_DIR).join("mod.rs")).unwrap();
    assert_eq!(
        have,
        index(&names, &command),
        "src/generated/mod.rs is stale"
    );
    let on_disk = files(COMMAND_DIR, "rs").len();
    assert_eq!(on_disk, names.len() + 1, "orphan files in src/generated");
}

#[test]
fn generated_tables_equal_the_lattices() {
    for path in shipped() {
        let Input::Policy { policy, joins, .. } = load(&path) else {
            panic!()
        };
        let g = typejoin::policy(policy.name()).unwrap();
        // An extended policy (torch) has its lattice's nodes first, then the added ones.
        let n = policy.dtypes().len();
        assert_eq!(
            g.dtypes[..n],
            policy
                .dtypes()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        let m = g.dtypes.len();
        assert_eq!(
            m > n,
            EXTENSIONS.iter().any(|(p, _)| *p == policy.name()),
            "{path}"
        );
        for a in 0..n {
            for b in 0..n {
                let want = joins.table.get(a, b).map_or(u8::MAX, |j| j as u8);
                assert_eq!(g.join[a * m + b], want, "{path}: {a} ∨ {b}");
            }
        }
    }
}

#[test]
fn a_policy_that_fails_its_laws_is_refused() {
    let dir = std::env::temp_dir().join(format!("typejoin-codegen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args([
            "codegen",
            "tests/data/not-lattice/jep-ambiguous.toml",
            "--out",
        ])
        .arg(&dir)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("refused: the laws do not hold; nothing was written"),
        "{err}"
    );
    assert!(String::from_utf8(o.stdout).unwrap().contains("uniqueness"));
    assert!(!dir.exists());
}

/// A measured table generates its library's policy only when it says what the library
/// computes in (`kernels`); the module's header lists the laws the table breaks, so a library
/// is never passed off as a verified lattice.
#[test]
fn a_library_table_generates_as_measured_and_says_what_it_breaks() {
    let dir = std::env::temp_dir().join(format!("typejoin-codegen-table-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["codegen", "observed/numpy_promote_types.json", "--out"])
        .arg(&dir)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("codegen needs a policy (.toml) or a measured table that says what its library computes in (`kernels`)"), "{err}");
    assert!(!dir.exists());
    let numpy = std::fs::read_to_string(root().join("src/generated/numpy.rs")).unwrap();
    assert!(numpy.contains("//! The `numpy` promotion policy, generated from the library's measured table, which is not a lattice: not idempotent (4 pairs); not associative (1334 triples);"), "{}", &numpy[..600]);
    let g = typejoin::policy("numpy").unwrap();
    assert_eq!(g.source, "observed/numpy_result_type.json");
    let int8 = Operand::Array(DType::Int {
        bits: 8,
        signed: true,
    });
    let add = OpId::of("add");
    assert!(g.measures(add, int8, int8));
    assert!(!typejoin::policy("jax").unwrap().measures(add, int8, int8));
}

/// PyTorch's catalogue beyond its lattice (uint16–64, the float8 formats) extends the `torch`
/// policy from the measured table: the lattice's nodes and joins stay as checked; the added
/// pairs, refusals and accumulators are torch 2.15's.
#[test]
fn the_torch_catalogue_extends_its_lattice_as_measured() {
    let torch = std::fs::read_to_string(root().join("src/generated/torch.rs")).unwrap();
    assert!(torch.contains("// extended by: observed/torch_categories.json (git blob "));
    assert!(torch.contains("//! Extended by the measured table observed/torch_categories.json with 8 dtypes beyond the lattice (uint16, uint32, uint64, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu)"), "{}", &torch[..1500]);
    // The extension alone is refused: it has no lattice to extend.
    let dir = std::env::temp_dir().join(format!("typejoin-codegen-ext-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["codegen", "observed/torch_categories.json", "--out"])
        .arg(&dir)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("this table extends the `torch` policy, which was not passed"),
        "{err}"
    );
    assert!(!dir.exists());
    let g = typejoin::policy("torch").unwrap();
    let (u16, f8) = (
        DType::Int {
            bits: 16,
            signed: false,
        },
        DType::named("float8_e4m3fn").unwrap(),
    );
    let b = Operand::Array(DType::Bool);
    // A bool tensor does not promote with a float8 one; a Python bool and a zero-dim bool do.
    assert!(g.result_type(b, Operand::Array(f8)).is_err());
    assert_eq!(
        g.result_type(Operand::Scalar(ScalarKind::Bool), Operand::Array(f8)),
        Ok(f8)
    );
    assert_eq!(
        g.result_type(Operand::ZeroDim(DType::Bool), Operand::Array(f8)),
        Ok(f8)
    );
    assert_eq!(
        g.result_type(
            Operand::Array(u16),
            Operand::Array(DType::named("float16").unwrap())
        ),
        Ok(DType::named("float16").unwrap())
    );
    assert!(
        g.result_type(
            Operand::Array(u16),
            Operand::Array(DType::Int {
                bits: 8,
                signed: false
            })
        )
        .is_err()
    );
    // torch.mul computes float8 and uint16; torch.add has no kernel for either.
    let mul = OpId::of("multiply");
    assert_eq!(
        g.op_type(mul, Operand::Array(f8), Operand::Array(f8)),
        Ok(f8)
    );
    assert_eq!(
        g.op_type(mul, Operand::Array(u16), Operand::Array(u16)),
        Ok(u16)
    );
    for d in [u16, f8] {
        let e = g
            .op_type(OpId::of("add"), Operand::Array(d), Operand::Array(d))
            .unwrap_err();
        assert_eq!(e.1, Failure::Refused, "{e:?}");
    }
    assert_eq!(
        g.true_divide_type(Operand::Array(u16), Operand::Array(u16)),
        Ok(DType::Float32)
    );
    assert!(g.dtype_loop(OpId::of("negative"), u16).is_err());
    assert!(g.dtype_loop(OpId::of("absolute"), f8).is_ok());
    assert_eq!(
        g.sum_type(u16),
        Ok(DType::Int {
            bits: 64,
            signed: true
        })
    );
    assert_eq!(g.sum_type(f8).unwrap_err().1, Failure::Refused);
}

/// A policy built at run time (`typejoin::generate`: `run --policy FILE`, a Python `Policy` as
/// `policy=`) is, field for field, the module `codegen` writes for it: one plan, written or
/// built. Every shipped lattice and library table; a lattice that a measured table extends is
/// built alone (its own nodes only: the table's dtypes are generated only beside the table).
#[test]
fn a_policy_built_at_run_time_is_its_generated_module() {
    let extended: Vec<&str> = EXTENSIONS.iter().map(|(p, _)| *p).collect();
    let mut built = 0;
    for f in shipped()
        .iter()
        .map(String::as_str)
        .chain(LIBRARY_TABLES.iter().copied())
    {
        let input = load(f);
        let runtime = typejoin::generate(&input).unwrap_or_else(|e| panic!("{f}: {e}"));
        let shipped = typejoin::policy(runtime.name).unwrap_or_else(|e| panic!("{f}: {e}"));
        if extended.contains(&runtime.name) {
            assert_eq!(
                runtime.dtypes,
                &shipped.dtypes[..runtime.dtypes.len()],
                "{f}"
            );
            assert!(runtime.dtypes.len() < shipped.dtypes.len(), "{f}");
            continue;
        }
        assert_eq!(format!("{runtime:#?}"), format!("{shipped:#?}"), "{f}");
        built += 1;
    }
    assert_eq!(
        built,
        shipped().len() - EXTENSIONS.len() + LIBRARY_TABLES.len()
    );
    for (base, table) in EXTENSIONS {
        let e = typejoin::generate(&load(table)).expect_err("an extending table alone");
        assert!(
            e.to_string()
                .contains(&format!("this table extends the `{base}` policy")),
            "{e}"
        );
    }
    let e = typejoin::generate(&load("tests/data/not-lattice/jep-ambiguous.toml"))
        .expect_err("laws fail");
    assert!(
        e.to_string()
            .contains("the `jep-ambiguous` policy's laws do not hold"),
        "{e}"
    );
}

/// `run --policy FILE` answers as the policy generated from that file.
#[test]
fn run_takes_a_policy_file() {
    let run = |policy: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(["run", "tests/data/kernels/cases.jsonl", "--policy", policy])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let by_name = run("jax");
    assert_eq!(by_name.lines().count(), 390);
    assert_eq!(run("lattices/jax.toml"), by_name);
    assert_eq!(run("observed/numpy_result_type.json"), run("numpy"));
}
