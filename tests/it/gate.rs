//! `check --format github|sarif`: the CI gate formats. SARIF validates against the OASIS
//! 2.1.0 schema (tests/data/sarif/), workflow commands parse and point at the right line.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use crate::root;

fn check(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .arg("check")
        .args(args)
        // The formats do not depend on the engine; z3's cross-check is tested elsewhere.
        .args(["--engine", "exhaustive"])
        .current_dir(root())
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

fn schema() -> jsonschema::Validator {
    let text =
        std::fs::read_to_string(root().join("tests/data/sarif/sarif-schema-2.1.0.json")).unwrap();
    jsonschema::draft4::new(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(log: &Value) {
    let errors: Vec<String> = schema()
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// 1-based line and column of the key `"b"` inside the row `"a": {` of an observed table,
/// found by reading the text (independently of the parser's spans).
fn table_key(text: &str, a: &str, b: &str) -> (usize, usize) {
    let row = text.find(&format!("\n  \"{a}\": {{")).unwrap();
    let key = row + text[row..].find(&format!("\"{b}\":")).unwrap();
    let line = text[..key].matches('\n').count() + 1;
    let col = key - text[..key].rfind('\n').unwrap();
    (line, col)
}

#[test]
fn sarif_of_the_numpy_table_validates_and_points_at_the_entry() {
    let (code, out) = check(&["observed/numpy.json", "--format", "sarif"]);
    assert_eq!(code, Some(1));
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&log);
    let run = &log["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "acyclic",
            "uniqueness",
            "existence",
            "commutativity",
            "idempotence",
            "associativity",
            "definedness-associativity",
            "nary-fold",
            "induced-order",
            "lint/precision-loss",
            "lint/overflow",
            "lint/sign-loss",
            "lint/drops-component",
            "input",
            "nary"
        ]
    );
    let results = run["results"].as_array().unwrap();
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for r in results {
        *per_rule.entry(r["ruleId"].as_str().unwrap()).or_default() += 1;
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i], r["ruleId"]);
    }
    // Three witnesses per violated law (the default of --witnesses).
    assert_eq!(
        per_rule,
        BTreeMap::from([
            ("associativity", 3),
            ("commutativity", 3),
            ("idempotence", 3),
            ("induced-order", 3),
            ("nary-fold", 3),
        ])
    );
    // The int8/uint8/float16 triple, on the entry `result["uint8"]["int8"]`.
    let text = std::fs::read_to_string(root().join("observed/numpy.json")).unwrap();
    let assoc = results
        .iter()
        .find(|r| r["ruleId"] == "associativity")
        .unwrap();
    assert_eq!(
        assoc["message"]["text"],
        "(uint8 ∨ int8) ∨ float16 = int16 ∨ float16 = float32, but uint8 ∨ (int8 ∨ float16) = uint8 ∨ float16 = float16 (4224 instances of `associativity` are violated)"
    );
    assert_eq!(
        assoc["properties"]["dtypes"],
        serde_json::json!(["uint8", "int8", "float16"])
    );
    let region = &assoc["locations"][0]["physicalLocation"]["region"];
    let (line, col) = table_key(&text, "uint8", "int8");
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(line as u64), Some(col as u64))
    );
    assert_eq!(
        assoc["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "observed/numpy.json"
    );
    let related: Vec<(&str, u64)> = assoc["relatedLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["message"]["text"].as_str().unwrap(),
                l["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
            )
        })
        .collect();
    let line_of = |a, b| table_key(&text, a, b).0 as u64;
    assert_eq!(
        related,
        [
            ("int16 ∨ float16 = float32", line_of("int16", "float16")),
            ("int8 ∨ float16 = float16", line_of("int8", "float16")),
            ("uint8 ∨ float16 = float16", line_of("uint8", "float16")),
        ]
    );
}

#[test]
fn sarif_validation_can_fail() {
    // The schema check is real: a level SARIF does not know is rejected.
    let (_, out) = check(&["observed/numpy.json", "--format", "sarif"]);
    let mut log: Value = serde_json::from_str(&out).unwrap();
    log["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!schema().is_valid(&log));
}

#[test]
fn sarif_of_clean_lint_and_unreadable_files_validates() {
    let (code, out) = check(&[
        "lattices",
        "tests/data/lints-deny.toml",
        "tests/data/bad/unknown-dtype.toml",
        "--format",
        "sarif",
    ]);
    assert_eq!(code, Some(2), "an unreadable file is exit 2");
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let input = results.iter().find(|r| r["ruleId"] == "input").unwrap();
    assert_eq!(input["level"], "error");
    assert_eq!(
        input["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 3, "startColumn": 19, "endColumn": 28})
    );
    let denied: Vec<&Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "lint/precision-loss" && r["level"] == "error")
        .collect();
    assert_eq!(
        denied.len(),
        2,
        "both denied conversions of lints-deny.toml"
    );
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "lint/overflow" && r["level"] == "warning"),
        "the shipped policies warn"
    );
}

/// A parsed workflow command: command, properties (unescaped), message (unescaped).
fn parse_command(line: &str) -> (String, BTreeMap<String, String>, String) {
    let unescape = |s: &str| {
        s.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let rest = line.strip_prefix("::").expect("starts with ::");
    let (head, message) = rest.split_once("::").expect("has a message");
    let (command, props) = head.split_once(' ').expect("has properties");
    let props = props
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("key=value");
            (k.to_string(), unescape(v))
        })
        .collect();
    (command.to_string(), props, unescape(message))
}

#[test]
fn github_commands_parse_and_point_at_the_offending_line() {
    let (code, out) = check(&[
        "tests/data/not-lattice/numpy-dag.toml",
        "observed/numpy.json",
        "tests/data/bad/cycle.toml",
        "--format",
        "github",
        "--witnesses",
        "1",
    ]);
    assert_eq!(code, Some(2));
    let commands: Vec<_> = out.lines().map(parse_command).collect();
    for (command, props, _) in &commands {
        assert!(command == "error" || command == "warning");
        let text = std::fs::read_to_string(root().join(&props["file"])).unwrap();
        let line: usize = props["line"].parse().unwrap();
        assert!(line >= 1 && line <= text.lines().count());
        assert!(props["title"].starts_with("typejoin: "));
    }
    let find = |file: &str, rule: &str| {
        commands
            .iter()
            .find(|(_, p, _)| p["file"] == file && p["title"] == format!("typejoin: {rule}"))
            .unwrap_or_else(|| panic!("{file} {rule}:\n{out}"))
    };
    let source_at = |file: &str, props: &BTreeMap<String, String>| {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let line = text
            .lines()
            .nth(props["line"].parse::<usize>().unwrap() - 1);
        let col: usize = props["col"].parse().unwrap();
        let end: usize = props["endColumn"].parse().unwrap();
        line.unwrap()
            .chars()
            .skip(col - 1)
            .take(end - col)
            .collect::<String>()
    };
    // The ambiguous join of the NumPy DAG: the edge int8 → float16.
    let (_, p, message) = find("tests/data/not-lattice/numpy-dag.toml", "uniqueness");
    assert_eq!(
        message,
        "int8 ∨ uint8 is ambiguous: its minimal upper bounds int16, float16 are incomparable"
    );
    assert_eq!(p["line"], "9");
    assert_eq!(
        source_at("tests/data/not-lattice/numpy-dag.toml", p),
        "\"float16\""
    );
    // The observed table: the entry result["uint8"]["int8"].
    let (_, p, _) = find("observed/numpy.json", "associativity");
    let text = std::fs::read_to_string(root().join("observed/numpy.json")).unwrap();
    assert_eq!(p["line"], table_key(&text, "uint8", "int8").0.to_string());
    assert_eq!(source_at("observed/numpy.json", p), "\"int8\"");
    // An unreadable file: where the parser stopped (same place as the human diagnostic).
    let (_, p, message) = find("tests/data/bad/cycle.toml", "input");
    assert_eq!((p["line"].as_str(), p["col"].as_str()), ("8", "21"));
    assert!(
        message.starts_with("cycle in the promotion graph: int8 → int16 → int32 → int8"),
        "{message}"
    );
}

#[test]
fn github_output_of_a_clean_policy_is_its_warnings_only() {
    let (code, out) = check(&["lattices/python.toml", "--format", "github"]);
    assert_eq!(code, Some(0));
    assert_eq!(out, "");
    let (code, out) = check(&["tests/data/lints-deny.toml", "--format", "github"]);
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "::error file=tests/data/lints-deny.toml,line=10,col=9,endColumn=23,title=typejoin%3A lint/precision-loss::precision-loss in the promotion int8 → float8_e4m3x: 17 becomes 16 (2 such promotions; denied by `[lints] precision-loss = \"deny\"`)",
            "::error file=tests/data/lints-deny.toml,line=11,col=10,endColumn=24,title=typejoin%3A lint/precision-loss::precision-loss in the promotion uint8 → float8_e4m3x: 17 becomes 16 (2 such promotions; denied by `[lints] precision-loss = \"deny\"`)",
        ]
    );
}

/// The `run` block of the step with `id: check` in action.yml, dedented.
fn action_check_script() -> String {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let mut lines = text.lines().skip_while(|l| l.trim() != "id: check");
    lines
        .find(|l| l.trim() == "run: |")
        .expect("the check step runs a script");
    lines
        .take_while(|l| l.is_empty() || l.starts_with("        "))
        .map(|l| l.get(8..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_action(format: &str, paths: &str, out: &std::path::Path) -> (Option<i32>, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_typejoin"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["-e", "-c", &action_check_script()])
        .current_dir(root())
        .env("PATH", path)
        .env("TYPEJOIN_PATHS", paths)
        .env("TYPEJOIN_FORMAT", format)
        .env("TYPEJOIN_SARIF", out.join("typejoin.sarif"))
        .env("TYPEJOIN_ARGS", "--witnesses 1 --engine exhaustive")
        .env("GITHUB_OUTPUT", out.join("github_output"))
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

#[test]
fn the_github_action_check_step_annotates_and_writes_sarif() {
    let out = std::env::temp_dir().join(format!("typejoin-action-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    // Clean policies: exit 0, nothing but the shipped policies' lint warnings.
    let (code, stdout) = run_action("github", "lattices/python.toml lattices/jax.toml", &out);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout
            .lines()
            .all(|l| l.starts_with("::warning file=lattices/jax.toml,")),
        "{stdout}"
    );
    // A broken table fails the step with an annotation on its entry.
    let (code, stdout) = run_action("github", "observed/numpy.json", &out);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("::error file=observed/numpy.json,line=223,col=4,endColumn=10,title=typejoin%3A associativity::"), "{stdout}");
    // SARIF: the log is written where the output says, and validates.
    let (code, _) = run_action("sarif", "observed/numpy.json", &out);
    assert_eq!(code, Some(1));
    let output = std::fs::read_to_string(out.join("github_output")).unwrap();
    assert_eq!(
        output,
        format!("sarif-file={}\n", out.join("typejoin.sarif").display())
    );
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("typejoin.sarif")).unwrap())
            .unwrap();
    assert_valid(&log);
    let (code, stdout) = run_action("yaml", "lattices", &out);
    assert_eq!(code, Some(2));
    assert!(stdout.starts_with("::error title=typejoin::format must be github or sarif"));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_pre_commit_hooks_run_typejoin_check() {
    let text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    let entries: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("entry: "))
        .collect();
    assert_eq!(entries, ["typejoin check", "typejoin check"]);
    // pre-commit appends the changed files that match `files:`.
    let files: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("files: "))
        .collect();
    assert_eq!(files, [r"^(lattices|observed)/.*\.(toml|json)$"; 2]);
    let (code, _) = check(&["lattices/jax.toml", "lattices/python.toml"]);
    assert_eq!(code, Some(0));
    let (code, _) = check(&["observed/numpy.json"]);
    assert_eq!(code, Some(1));
}
