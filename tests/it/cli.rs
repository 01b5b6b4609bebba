//! The binary's contracts: exit codes 0/1/2, the `check --format json` shape, table round trip.

use std::process::{Command, Output};

use serde_json::Value;

use crate::root;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn check_shipped_lattices_exits_0() {
    let o = run(&["check", "lattices"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("✓ lattices/jax.toml — lattice `jax`: 35 dtypes, 41 edges; all laws hold"),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "no colour when piped");
}

#[test]
fn check_numpy_tables_exits_1_with_the_witness() {
    let o = run(&[
        "check",
        "observed/numpy.json",
        "observed/numpy_promote_types.json",
        "observed/numpy_result_type.json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains(
        "(int8 ∨ uint8) ∨ float16 = int16 ∨ float16 = float32, but int8 ∨ (uint8 ∨ float16) = int8 ∨ float16 = float16"
    ));
    assert!(out.contains("error[associativity]: 4224 triples where (a ∨ b) ∨ c ≠ a ∨ (b ∨ c)"));
}

#[test]
fn unreadable_input_exits_2_with_location() {
    let o = run(&["--color", "never", "check", "tests/data/bad/cycle.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("--> tests/data/bad/cycle.toml:8:21"), "{err}");
    let o = run(&["check", "no/such/file.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["check", "lattices", "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2), "a usage error is exit 2");
}

#[test]
fn check_json_shape() {
    let o = run(&[
        "check",
        "--format",
        "json",
        "lattices/jax.toml",
        "observed/seed_numpy.json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["path"], "lattices/jax.toml");
    assert_eq!(files[0]["kind"], "lattice");
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[0]["violations"].as_array().unwrap().len(), 0);
    assert_eq!(files[1]["kind"], "table");
    assert_eq!(files[1]["ok"], false);
    let first_assoc = files[1]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["law"] == "associativity")
        .unwrap();
    assert_eq!(
        first_assoc["dtypes"],
        serde_json::json!(["uint8", "int8", "float16"])
    );
    assert_eq!(first_assoc["left"], "float32");
    assert_eq!(first_assoc["right"], "float16");
    assert!(
        first_assoc["detail"]
            .as_str()
            .unwrap()
            .starts_with("(uint8 ∨ int8) ∨ float16")
    );
}

#[test]
fn table_json_round_trips() {
    let dir = std::env::temp_dir().join(format!("typejoin-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("jax.json");
    let o = run(&[
        "table",
        "lattices/jax.toml",
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    let back = typejoin::Input::parse("jax.json", &text).unwrap();
    let orig = crate::load("lattices/jax.toml");
    assert_eq!(back.table(), orig.table());
    assert!(back.check(typejoin::CheckOptions::default()).ok());
    // And again: table → json → table is a fixed point.
    let o2 = run(&["table", out.to_str().unwrap(), "--format", "json"]);
    let again = typejoin::Input::parse("again.json", &stdout(&o2)).unwrap();
    assert_eq!(again.table(), orig.table());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn table_text_uses_short_codes() {
    let o = run(&["table", "lattices/python.toml"]);
    assert_eq!(
        stdout(&o),
        "    b i* f* c*\nb   b i* f* c*\ni* i* i* f* c*\nf* f* f* f* c*\nc* c* c* c* c*\n"
    );
    let o = run(&["table", "lattices/python.toml", "--format", "csv"]);
    assert_eq!(
        stdout(&o),
        "join,bool,i*,f*,c*\nbool,bool,i*,f*,c*\ni*,i*,i*,f*,c*\nf*,f*,f*,f*,c*\nc*,c*,c*,c*,c*\n"
    );
}

#[test]
fn explain_pair_and_triple() {
    let o = run(&["explain", "lattices/jax.toml", "i8", "u8"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("int8 ∨ uint8 = int16\n"), "{out}");
    assert!(
        out.contains("  path: int8 → int16\n  path: uint8 → int16\n"),
        "{out}"
    );
    let o = run(&[
        "explain",
        "observed/numpy_promote_types.json",
        "int8",
        "uint8",
        "float16",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("(int8 ∨ uint8) ∨ float16 = int16 ∨ float16 = float32\n"),
        "{out}"
    );
    assert!(
        out.contains("int8 ∨ (uint8 ∨ float16) = int8 ∨ float16 = float16\n"),
        "{out}"
    );
    assert!(out.contains("the association orders disagree"), "{out}");
    let o = run(&["explain", "lattices/jax.toml", "int4", "int8"]);
    assert!(
        stdout(&o)
            .contains("no common upper bound: an intended promotion error (the policy is partial)")
    );
    let o = run(&[
        "--color",
        "never",
        "explain",
        "lattices/jax.toml",
        "flaot16",
        "int8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("did you mean `float16`?")
    );
}

#[cfg(unix)]
#[test]
fn closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    // The reading end is closed before the child has written anything.
    let mut child = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["table", "observed/numpy.json", "--format", "json"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn cast_text_bin_and_errors() {
    let o = run(&["cast", "float8_e4m3fn", "float32", "--all"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 256);
    assert!(
        out.contains("0x7e                      448 -> 0x43e00000 448\n"),
        "{out}"
    );
    assert!(out.contains("0x7f                      nan -> 0x7fc00000 nan\n"));
    assert!(out.contains("0x80                       -0 -> 0x80000000 -0\n"));
    // The raw output hashes like the oracle's dump (tests/data/oracle/casts_index.json).
    let o = run(&["cast", "f8e4m3fn", "bf16", "--all", "--format", "bin"]);
    use sha2::Digest;
    let got: String = sha2::Sha256::digest(&o.stdout)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        got,
        "f45890c7e74be01c5519ba41376c42f8fc1f9cc6f5fd75947b65b7716ba4f00f"
    );
    // Integer sources through --bits, correctly rounded where ml_dtypes is not.
    let dir = std::env::temp_dir().join(format!("typejoin-cast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ints = dir.join("ints.bin");
    std::fs::write(&ints, 24051711i64.to_le_bytes()).unwrap();
    let o = run(&[
        "cast",
        "int64",
        "bfloat16",
        "--bits",
        ints.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["results"][0]["to_bits"], 0x4bb7);
    assert_eq!(v["results"][0]["to_value"], "23986176"); // just below the midpoint 24051712
    std::fs::write(&ints, [1u8, 2, 3]).unwrap();
    let o = run(&[
        "--color",
        "never",
        "cast",
        "float16",
        "bfloat16",
        "--bits",
        ints.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("3 bytes is not a whole number of 2-byte `float16` elements")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let o = run(&["--color", "never", "cast", "float32", "bfloat16", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        "error: `float32` has 32 bits: too many patterns for --all\n --> typejoin cast\n = help: pass the values with --bits FILE\n"
    );
    let o = run(&["--color", "never", "cast", "flaot16", "bfloat16", "--all"]);
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("did you mean `float16`?")
    );
    // Integer destinations: the text shows both sides' bits and values.
    let o = run(&["cast", "float4_e2m1fn", "int4", "--all"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 16);
    assert_eq!(lines[7], "0x07                        6 -> 0x06 6");
    assert_eq!(lines[15], "0x0f                       -6 -> 0x0a -6");
    assert_eq!(lines[3], "0x03                      1.5 -> 0x01 1");
    let o = run(&["--color", "never", "cast", "float32", "complex64", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("casts to `complex64` are not supported")
    );
}

#[test]
fn bench_prints_one_json_line() {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args([
            "bench", "--op", "add", "--lhs", "int8", "--rhs", "float32", "-n", "1000",
        ])
        .args(["--runs", "2", "--threads", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "op",
            "lhs",
            "rhs",
            "out",
            "n",
            "threads",
            "ns_per_element_best",
            "ns_per_element_median",
            "gb_per_s_best"
        ]
    );
    assert_eq!(
        (v["out"].as_str(), v["n"].as_u64(), v["threads"].as_u64()),
        (Some("float32"), Some(1000), Some(2))
    );
    assert!(v["ns_per_element_best"].as_f64().unwrap() > 0.0);
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args([
            "--color",
            "never",
            "bench",
            "--op",
            "add",
            "--lhs",
            "float8_e4m3fn",
        ])
        .args(["--rhs", "float32", "-n", "10"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("no promotion for float8_e4m3fn and float32")
    );
}

/// The lints are decided by the boundary-value search unless `--prove-lints` asks z3 to prove
/// them too; on a shipped policy both give the same report, in every output format.
#[cfg(feature = "z3")]
#[test]
fn prove_lints_gives_the_searched_lints() {
    for format in ["human", "json"] {
        let searched = run(&["check", "--format", format, "lattices/array-api.toml"]);
        let proved = run(&[
            "check",
            "--prove-lints",
            "--format",
            format,
            "lattices/array-api.toml",
        ]);
        assert_eq!(searched.status.code(), Some(0));
        assert_eq!(proved.status.code(), Some(0));
        assert_eq!(stdout(&searched), stdout(&proved));
        assert!(stdout(&searched).contains("precision-loss"));
    }
}

/// libz3 is loaded when z3 is first asked (src/smt/libz3.rs), not at start-up: the loader's
/// own list of what the binary needs (`LD_TRACE_LOADED_OBJECTS`, what `ldd` prints) has no
/// libz3. A libz3 function the binary calls without a forwarder there makes the linker
/// record libz3 again, and this fails.
#[cfg(all(feature = "z3", target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_does_not_load_libz3_at_start_up() {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let needed = stdout(&o);
    assert!(
        needed.contains("libc.so"),
        "not the loader's list: {needed}"
    );
    assert!(
        !needed.contains("libz3"),
        "libz3 loads at start-up: a Z3_ function is missing from src/smt/libz3.rs \
         (`nm -D --undefined-only` on the binary names it):\n{needed}"
    );
}

/// Without a loadable libz3 (`TYPEJOIN_LIBZ3` names a file that is not there) an engine that
/// needs z3 is exit 2 with what was tried and what to do, before any input is read; the
/// engines without z3 run as before.
#[cfg(all(feature = "z3", target_os = "linux"))]
#[test]
fn without_libz3_the_z3_engines_say_so_and_the_others_run() {
    let run_without = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(args)
            .current_dir(root())
            .env("TYPEJOIN_LIBZ3", "/nonexistent/libz3.so")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let expected = "error: z3 is not available (/nonexistent/libz3.so: cannot open shared \
                    object file: No such file or directory): install z3's library (Debian and \
                    Ubuntu: `apt-get install libz3-4`) or set TYPEJOIN_LIBZ3 to the path of a \
                    libz3.so\n";
    for (args, help) in [
        (
            &["check", "lattices/jax.toml"][..],
            "use `--engine exhaustive` (without `--prove-lints`)",
        ),
        (
            &[
                "check",
                "--engine",
                "exhaustive",
                "--prove-lints",
                "missing.toml",
            ][..],
            "use `--engine exhaustive` (without `--prove-lints`)",
        ),
        (
            &["safety", "--engine", "z3", "lattices/jax.toml"][..],
            "use `--engine search`",
        ),
        (
            &["prove", "--check", "proofs/"][..],
            "run the files with the `z3` binary",
        ),
    ] {
        let o = run_without(args);
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(expected), "{args:?}: {err}");
        assert!(err.contains(help), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let without = run_without(&["check", "--engine", "exhaustive", "lattices/jax.toml"]);
    let with = run(&["check", "--engine", "exhaustive", "lattices/jax.toml"]);
    assert_eq!(without.status.code(), Some(0));
    assert_eq!(without.stdout, with.stdout);
}

/// `bench --rhs i*|f*|c*|b*` times an array with a weak (Python scalar) operand: the result is
/// the policy's (bfloat16 + f* stays bfloat16 in JAX; int8 + c* is complex128).
#[test]
fn bench_takes_a_weak_scalar_operand() {
    for (lhs, rhs, out) in [
        ("bfloat16", "f*", "bfloat16"),
        ("int8", "i*", "int8"),
        ("int8", "c*", "complex128"),
        ("uint16", "b*", "uint16"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args([
                "bench", "--op", "add", "--lhs", lhs, "--rhs", rhs, "-n", "1000",
            ])
            .args(["--runs", "1"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{lhs} + {rhs}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            (v["rhs"].as_str(), v["out"].as_str()),
            (Some(rhs), Some(out)),
            "{lhs} + {rhs}"
        );
    }
}

/// `bench --rhs DTYPE@0d` times an array with a zero-dim operand, a category of its own under
/// PyTorch's policy (int8 with a zero-dim int64 stays int8 there, `x * tensor(1, int64)`; with
/// a zero-dim float64 it is float64); `--data bits` and `--data normal` both run.
#[test]
fn bench_takes_a_zero_dim_operand_and_a_data_kind() {
    for (policy, lhs, rhs, out, data) in [
        ("torch", "int8", "float64@0d", "float64", "normal"),
        ("torch", "int8", "int64@0d", "int8", "bits"),
        ("jax", "int8", "float64@0d", "float64", "bits"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args([
                "bench", "--policy", policy, "--op", "multiply", "--lhs", lhs,
            ])
            .args(["--rhs", rhs, "-n", "1000", "--runs", "1", "--data", data])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{policy}: {lhs} × {rhs}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            (v["rhs"].as_str(), v["out"].as_str()),
            (Some(rhs), Some(out)),
            "{policy}: {lhs} × {rhs}"
        );
    }
}

#[test]
fn policy_flags_list_every_generated_policy() {
    let names: Vec<&str> = typejoin::GENERATED.iter().map(|p| p.name).collect();
    let listed = format!("[possible values: {}]", names.join(", "));
    let bench = ["bench", "--op", "add", "--lhs", "int8", "--policy", "mxnet"];
    for args in [&["run", "-", "--policy", "mxnet"][..], &bench[..]] {
        let cmd = args[0];
        let help = stdout(&run(&[cmd, "--help"]));
        // Help wraps at the terminal's width: compare words.
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains(&listed), "{cmd} --help: {help}");
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "a usage error is exit 2");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("invalid value 'mxnet' for '--policy <POLICY>'"),
            "{err}"
        );
        assert!(err.contains(&listed), "{err}");
    }
}
