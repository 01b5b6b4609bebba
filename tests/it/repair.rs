//! `repair` and `synth`: the z3 search held to an exhaustive one on small tables, the measured
//! libraries' tables repaired with their proofs re-run, and the JEP 9407 studies re-derived from
//! their requirements.

use std::process::Command;

use typejoin::repair::{Optimality, Options, Repair, exhaustive, repair};
use typejoin::synthesis::{Synthesis, synthesize};
use typejoin::{Input, Rng, Table};

use crate::{load, root};

/// A random table over `n` catalogue dtypes: each cell a dtype or (one in `undef`) undefined,
/// mostly commutative and idempotent, as measured tables are.
fn random_table(rng: &mut Rng, n: usize, undef: usize) -> Input {
    const NAMES: [&str; 5] = ["int8", "uint8", "int16", "float16", "float32"];
    let names: Vec<String> = NAMES[..n].iter().map(|s| s.to_string()).collect();
    let mut t = Table::new(names);
    for a in 0..n {
        t.set(
            a,
            a,
            Some(if rng.below(12) == 0 { rng.below(n) } else { a }),
        );
        for b in a + 1..n {
            let cell = |rng: &mut Rng| (rng.below(undef) != 0).then(|| rng.below(n));
            let x = cell(rng);
            let y = if rng.below(10) == 0 { cell(rng) } else { x };
            t.set(a, b, x);
            t.set(b, a, y);
        }
    }
    Input::parse("random.json", &t.to_json("random", "test", "0")).unwrap()
}

fn opts(partial: bool, lossy_cost: u64) -> Options {
    Options {
        partial,
        lossy_cost,
        ..Options::default()
    }
}

/// The repaired table passes the laws, and its cost is what its changes add up to.
fn sound(r: &Repair) {
    let back = Input::parse("repaired.json", &r.table.to_json("r", "", "")).unwrap();
    let report = back.check(typejoin::CheckOptions::default());
    assert!(report.ok(), "{report:?}");
    let policy = Input::parse("repaired.toml", r.policy.as_deref().unwrap()).unwrap();
    assert!(policy.check(typejoin::CheckOptions::default()).ok());
    assert_eq!(policy.table(), &r.table);
    assert_eq!(r.cost, r.changes.iter().map(|c| c.cost).sum::<u64>());
}

#[test]
fn z3_repairs_cost_what_the_exhaustive_search_finds() {
    // 120 random tables of 3 to 5 dtypes, total and partial, weighing a lossy change 1 or 3:
    // the z3 search's optimum is the exhaustive search's over every partial order.
    let mut rng = Rng::new(44);
    let mut proved = 0;
    for case in 0..120 {
        let n = 3 + case % 3;
        let input = random_table(&mut rng, n, 3 + case % 4);
        let o = opts(case % 2 == 1, if case % 4 >= 2 { 3 } else { 1 });
        let want = exhaustive(&input, &o).unwrap();
        let got = repair(&input, &o).unwrap();
        assert_eq!(
            got.cost,
            want.cost,
            "case {case}: {}\nz3: {:?}\nexhaustive: {:?}",
            input.table().to_json("t", "", ""),
            got.changes,
            want.changes
        );
        sound(&got);
        sound(&want);
        assert_eq!(want.optimality, Optimality::Exhaustive);
        if let Optimality::Proved { .. } = got.optimality {
            proved += 1;
        } else {
            assert!(
                o.lossy_cost > 1,
                "case {case}: unweighted costs are proved: {:?}",
                got.optimality
            );
        }
    }
    // Every unweighted case (60) and the weighted ones whose changes are all forced.
    assert_eq!(proved, 71);
}

#[test]
fn kept_pairs_keep_their_joins() {
    // NumPy's triple: keeping int8 ∨ uint8 = int16 and int16 ∨ float16 = float32 leaves
    // int8 ∨ float16 or uint8 ∨ float16 to change.
    let input = load("observed/numpy_promote_types.json");
    let t = input.table();
    let ix = |n: &str| t.index_of(n).unwrap();
    let mut o = opts(true, 1);
    o.keep = vec![
        (ix("int8"), ix("uint8")),
        (ix("int16"), ix("float16")),
        (ix("uint8"), ix("float16")),
        (ix("int8"), ix("float16")),
    ];
    let e = repair(&input, &o).unwrap_err();
    assert_eq!(e.to_string(), "no lattice keeps the pinned pairs (--keep)");
    o.keep.pop();
    let r = repair(&input, &o).unwrap();
    sound(&r);
    for &(a, b) in &o.keep {
        assert_eq!(r.table.get(a, b), t.get(a, b));
    }
    assert_eq!(
        r.table.get(ix("int8"), ix("float16")),
        t.get(ix("int8"), ix("float32"))
    );
}

/// Runs a proof script through the `z3` binary (installed by scripts/setup), if there is one:
/// the number of `unsat` answers, and whether every answer was.
fn z3_binary(script: &str) -> Option<(usize, bool)> {
    let dir = std::env::temp_dir().join(format!("typejoin-proof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.smt2", script.len()));
    std::fs::write(&path, script).unwrap();
    let out = Command::new("z3").arg(&path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let answers: Vec<&str> = text.lines().collect();
    Some((
        answers.iter().filter(|l| **l == "unsat").count(),
        answers.iter().all(|l| *l == "unsat"),
    ))
}

#[test]
fn the_measured_libraries_tables_are_repaired_with_proofs() {
    // (file, partial, cost, forced, cores): measured on this commit, each proof re-run.
    let cases = [
        ("observed/tensorflow_safe.json", true, 25, 0, 25),
        ("observed/tensorflow_safe.json", false, 51, 51, 0),
        ("observed/numpy_promote_types.json", true, 87, 0, 87),
        ("observed/numpy_promote_types.json", false, 205, 202, 3),
        ("observed/torch.json", true, 52, 3, 49),
    ];
    for (file, partial, cost, forced, cores) in cases {
        let input = load(file);
        let r = repair(&input, &opts(partial, 1)).unwrap();
        sound(&r);
        let got_forced = r.changes.iter().filter(|c| c.forced.is_some()).count();
        assert_eq!(
            (r.cost, got_forced, &r.optimality),
            (cost, forced, &Optimality::Proved { cores }),
            "{file} partial={partial}"
        );
        if let Some(script) = &r.proof
            && let Some((unsat, all)) = z3_binary(script)
        {
            assert_eq!(
                (unsat, all),
                (cores, true),
                "{file}: the proof re-run by z3"
            );
        }
    }
}

#[test]
fn repair_renders_the_changes_and_their_safety() {
    let input = load("observed/tensorflow_safe.json");
    let r = repair(&input, &opts(true, 1)).unwrap();
    let text = typejoin::render::repair::text(&r);
    let head: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(
        head,
        [
            "tensorflow_safe (observed/tensorflow_safe.json): 25 changes make it a partial lattice (cost 25); proved minimal (25 cores, z3)",
            "  185 of 210 pairs (and dtypes with themselves) kept; 0 changes forced",
            "  uint8 ∨ int8: raises → int8  [uint8 → int8 overflow: 128 becomes -128]",
            "  uint8 ∨ f*: raises → float64@weak  [exact]",
        ]
    );
    let json: serde_json::Value =
        serde_json::from_str(&typejoin::render::repair::json(&r)).unwrap();
    assert_eq!(json["cost"], 25);
    assert_eq!(json["optimality"], "proved");
    assert_eq!(json["changes"][0]["a"], "uint8");
    assert_eq!(json["changes"][0]["to"], "int8");
    assert_eq!(json["changes"][0]["safety"][0]["class"], "overflow");
}

#[test]
fn a_lossy_change_can_cost_more() {
    // TensorFlow safe with a lossy change costing 5: 8 of the 25 cheapest changes lose values
    // (25 + 8 × 4 = 57 weighted); the weighted optimum changes 31 pairs and none loses values.
    let input = load("observed/tensorflow_safe.json");
    let plain = repair(&input, &opts(true, 1)).unwrap();
    let weighted = repair(&input, &opts(true, 5)).unwrap();
    sound(&weighted);
    let lossy = |r: &Repair| r.changes.iter().filter(|c| c.cost > 1).count();
    let loses = |r: &Repair| {
        r.changes
            .iter()
            .filter(|c| c.safety.iter().any(|s| s.class.key() != "exact"))
            .count()
    };
    assert_eq!((plain.cost, loses(&plain)), (25, 8));
    assert_eq!(
        (
            weighted.cost,
            weighted.changes.len(),
            lossy(&weighted),
            loses(&weighted)
        ),
        (31, 31, 0, 0)
    );
}

fn requirements(file: &str) -> typejoin::Requirements {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    typejoin::parse_requirements(file, &text).unwrap()
}

#[test]
fn synth_rederives_the_jep_9407_studies() {
    for study in [
        "no-precision-loss",
        "float64-for-all-ints",
        "ints-below-weak-float",
    ] {
        let req = requirements(&format!("requirements/{study}.toml"));
        let Synthesis::Found(f) = synthesize(&req, 120_000).unwrap() else {
            panic!("{study}: no lattice");
        };
        let got = Input::parse(&format!("{study}.toml"), &f.policy).unwrap();
        let want = load(&format!("lattices/studies/{study}.toml"));
        let d = typejoin::diff(&got, &want, false);
        assert!(d.same(), "{study}: {}", typejoin::render::diff::text(&d));
    }
}

#[test]
fn synth_names_numpys_conflict_by_line() {
    let req = requirements("requirements/numpy-triple.toml");
    let Synthesis::Conflict(c) = synthesize(&req, 120_000).unwrap() else {
        panic!("NumPy's joins are not a lattice");
    };
    let core: Vec<(usize, &str)> = c.core.iter().map(|r| (r.line, r.text.as_str())).collect();
    assert_eq!(
        core,
        [
            (10, "int8 ∨ uint8 = int16"),
            (11, "int8 ∨ float16 = float16"),
            (12, "uint8 ∨ float16 = float16"),
            (13, "int16 ∨ float16 = float32"),
        ]
    );
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn the_commands_exit_as_documented() {
    // repair: 0 nothing to change, 1 changes, 2 a bad --keep; synth: 0 found, 1 conflict.
    let o = run(&["repair", "lattices/jax.toml", "--partial"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("already a partial lattice"));
    let dir = std::env::temp_dir().join(format!("typejoin-repair-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (table, policy) = (dir.join("t.json"), dir.join("p.toml"));
    let o = run(&[
        "repair",
        "observed/tensorflow_safe.json",
        "--partial",
        "--table",
        table.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["check", table.to_str().unwrap(), policy.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&[
        "repair",
        "observed/tensorflow_safe.json",
        "--keep",
        "int8,int61",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("`int61` is not a dtype of observed/tensorflow_safe.json"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["synth", "requirements/numpy-triple.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let out = dir.join("s.toml");
    let o = run(&[
        "synth",
        "requirements/no-precision-loss.toml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[
        "diff",
        out.to_str().unwrap(),
        "lattices/studies/no-precision-loss.toml",
    ]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn the_repair_page_is_fresh() {
    let read = |dir: &str, ext: &str| -> Vec<(String, String)> {
        crate::files(dir, ext)
            .into_iter()
            .filter(|f| f.matches('/').count() == dir.matches('/').count() + 1)
            .map(|f| {
                let t = std::fs::read_to_string(root().join(&f)).unwrap();
                (f, t)
            })
            .collect()
    };
    let page = typejoin::render::pages::repair_page(
        &read("observed", "json"),
        &read("requirements", "toml"),
        &read("lattices/studies", "toml"),
    )
    .unwrap();
    let have = std::fs::read_to_string(root().join("docs/lattices/repair.md")).unwrap_or_default();
    assert!(
        have == page,
        "docs/lattices/repair.md is stale: run `cargo run --release -- docs --out docs/lattices`"
    );
    for study in [
        "no-precision-loss",
        "float64-for-all-ints",
        "ints-below-weak-float",
    ] {
        assert!(
            page.contains(&format!(
                "The same lattice as `lattices/studies/{study}.toml`, join for join and edge for edge."
            )),
            "{study}"
        );
    }
}

#[test]
fn a_table_of_other_names_is_repaired_without_a_policy() {
    // A 3 × 3 product of chains (names t0..t8, outside the catalogue) with t0 ∨ t8 changed to
    // t4 and t2 ∨ t6 made to raise: two changes restore it, and no policy is written (it would
    // need the dtypes' formats).
    let (names, edges) = typejoin::grid(3, 3);
    let lattice = typejoin::Lattice::new(names.clone(), &edges, false).unwrap();
    let mut t = lattice.join_table().table;
    t.set(0, 8, Some(4));
    t.set(8, 0, Some(4));
    t.set(2, 6, None);
    t.set(6, 2, None);
    let input = Input::parse("grid.json", &t.to_json("grid", "", "")).unwrap();
    let r = repair(&input, &opts(false, 1)).unwrap();
    assert_eq!((r.cost, r.policy.is_none()), (2, true));
    assert_eq!(r.table, lattice.join_table().table);
}

#[test]
fn a_table_past_the_search_limit_is_refused_before_any_work() {
    let names: Vec<String> = (0..161).map(|i| format!("t{i}")).collect();
    let mut t = Table::new(names);
    for a in 0..161 {
        t.set(a, a, Some(a));
    }
    let input = Input::parse("big.json", &t.to_json("big", "", "")).unwrap();
    let e = repair(&input, &opts(true, 1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "161 dtypes: repair and synth search at most 160 (the order's axioms are n³ clauses)"
    );
}
