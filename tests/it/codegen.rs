//! Generated code: `src/generated/` is exactly what `typejoin codegen` writes for the shipped
//! lattices (regenerated in-process and compared, the rust-analyzer way), the tables agree
//! with the lattices they come from, and a policy whose laws fail is refused.

use std::process::Command;

use typejoin::{
    Input, Provenance,
    op::OpId,
    render::codegen::{index, module, module_name, table_module},
};

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
const LIBRARY_TABLES: &[&str] = &["observed/numpy_result_type.json"];

/// A policy's `[kernels]` conventions and `[ops.X] kinds` reach its generated table: PyTorch's
/// for `torch`, NumPy 2's (the default) for `jax`.
#[test]
fn kernel_conventions_are_generated() {
    use typejoin::op::{
        ClipBounds, ClipComposition, ClipMixedBounds, ComplexAdd, ComplexNegative, DivisionByZero,
        FloatFloorDivide, IntComparison, PythonInt, ScalarOverArray, ScalarPrecision, Semantics,
        WhereScalars, ZeroSign, ZeroTies,
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
            float_floor_divide: FloatFloorDivide::Divmod,
            scalar_over_array: ScalarOverArray::ReciprocalTimes,
            clip_composition: ClipComposition::Joined,
            where_scalars: WhereScalars::Checked,
            clip_mixed_bounds: ClipMixedBounds::Unsupported,
            zero_ties: ZeroTies::Vectors,
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
        torch
            .operand_kinds(OpId::of("subtract"))
            .unwrap()
            .describe(),
        "integer, float, complex"
    );
    assert_eq!(torch.operand_kinds(OpId::of("add")), None);
    let jax = typejoin::policy("jax").unwrap();
    assert_eq!(jax.semantics, Semantics::default());
    assert_eq!(jax.operand_kinds(OpId::of("subtract")), None);
    assert_eq!(
        jax.kinds(OpId::of("maximum")).describe(),
        "bool, integer, float, complex"
    );
}

#[test]
fn generated_modules_are_fresh() {
    let policies = shipped();
    let command = format!(
        "typejoin codegen {} {} --out {COMMAND_DIR}",
        policies.join(" "),
        LIBRARY_TABLES.join(" ")
    );
    let mut names = Vec::new();
    for path in &policies {
        let Input::Policy { policy, joins, .. } = load(path) else {
            panic!("{path}")
        };
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let stem = path.rsplit('/').next().unwrap().trim_end_matches(".toml");
        let name = module_name(stem);
        let want = module(
            &policy,
            &joins,
            &Provenance {
                path,
                text: &text,
                command: &command,
            },
        );
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
        let name = module_name(observed.library.as_deref().unwrap());
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
        assert_eq!(
            g.dtypes,
            policy
                .dtypes()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        let n = policy.dtypes().len();
        for a in 0..n {
            for b in 0..n {
                let want = joins.table.get(a, b).map_or(u8::MAX, |j| j as u8);
                assert_eq!(g.join[a * n + b], want, "{path}: {a} ∨ {b}");
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
    assert!(
        g.measures(OpId::of("add")) && !typejoin::policy("jax").unwrap().measures(OpId::of("add"))
    );
}
