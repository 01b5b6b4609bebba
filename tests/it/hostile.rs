//! Hostile input (issue 18): the corpus under tests/data/hostile replayed through the binary,
//! each case's exit code and output held exactly, plus the reproducers too large to commit
//! (a 20,000-dtype policy, a broadcast of 2^32 elements), generated here.
//!
//! `TYPEJOIN_BLESS=1 cargo test hostile` rewrites tests/data/hostile/expected/ from the
//! binary's current output; review the diff before committing it.

use std::process::{Command, Output};

use crate::root;

fn typejoin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .args(["--color", "never"])
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn not_a_crash(o: &Output, what: &str) {
    let code = o.status.code();
    assert!(
        matches!(code, Some(0..=2)),
        "{what}: exit {code:?} (101 is a panic, 134 or a signal an abort)\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_hostile_corpus_answers_as_recorded() {
    let dir = root().join("tests/data/hostile");
    let manifest = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let cases: Vec<(&str, &str)> = manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_once('\t').expect("file<TAB>command"))
        .collect();
    // Every file of the corpus is replayed.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "cases.txt"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed: Vec<String> = cases.iter().map(|(f, _)| f.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed, "every corpus file needs a line in cases.txt");
    let bless = std::env::var_os("TYPEJOIN_BLESS").is_some();
    for (file, command) in cases {
        let path = format!("tests/data/hostile/{file}");
        let args: Vec<String> = command
            .split(' ')
            .map(|a| if a == "FILE" { path.clone() } else { a.into() })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = typejoin(&args, None);
        not_a_crash(&o, file);
        let got = format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let expected = dir.join("expected").join(format!("{file}.txt"));
        if bless {
            std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
            std::fs::write(&expected, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected)
            .unwrap_or_else(|e| panic!("{}: {e}", expected.display()));
        assert_eq!(got, want, "{file}: `typejoin {command}`");
    }
}

/// 20,000 unknown dtypes on one line: every error is found, 50 are shown with a snippet of
/// at most 120 characters, the rest counted; the report stays far under a megabyte.
#[test]
fn twenty_thousand_errors_report_in_kilobytes() {
    let dir = std::env::temp_dir().join(format!("typejoin-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.toml");
    let names: Vec<String> = (0..20_000).map(|i| format!("\"bogus{i}\"")).collect();
    std::fs::write(
        &path,
        format!("name = \"big\"\ndtypes = [{}]\n", names.join(", ")),
    )
    .unwrap();
    let o = typejoin(&["check", path.to_str().unwrap()], None);
    not_a_crash(&o, "20,000 unknown dtypes");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.len() < 64 << 10, "{} bytes of errors", err.len());
    assert_eq!(err.matches("error: unknown dtype").count(), 50);
    assert!(
        err.contains("… and 19950 more errors in "),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
    // The 50th error sits at column 11 + 10 × 10 + 39 × 11 (`"bogusN", ` is 10 characters
    // for one digit, 11 for two); its snippet is cut on both sides, the caret under it.
    assert!(
        err.contains("error: unknown dtype `bogus49`\n --> "),
        "{err}"
    );
    assert!(
        err.contains("big.toml:2:540\n  |\n2 | …gus46\", \"bogus47\", \"bogus48\", \"bogus49\", "),
        "{err}"
    );
    assert!(
        err.contains("\n  |                                ^^^^^^^^^\n"),
        "{err}"
    );
    let widest = err.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 120 + 8, "a line of {widest} characters");
    let all = typejoin(
        &["check", "--max-errors", "100000", path.to_str().unwrap()],
        None,
    );
    let all = String::from_utf8(all.stderr).unwrap();
    assert_eq!(all.matches("error: unknown dtype").count(), 20_000);
    assert!(all.contains("error: unknown dtype `bogus19999`"));
    // `--snippet-width` narrows the quoted window: a quarter of it before the span (none here,
    // the span starts at column 11), the rest after, `…` where the line was cut.
    let narrow = typejoin(
        &[
            "check",
            "--max-errors",
            "1",
            "--snippet-width",
            "40",
            path.to_str().unwrap(),
        ],
        None,
    );
    let narrow = String::from_utf8(narrow.stderr).unwrap();
    assert!(
        narrow.contains(
            "\n2 | dtypes = [\"bogus0\", \"bogus1\", \"bogus2\", …\n  |           ^^^^^^^^\n"
        ),
        "{narrow}"
    );
    assert!(narrow.contains("… and 19999 more errors in "), "{narrow}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `[65536, 1] + [1, 65536]` is 2^32 elements: refused with its id, and the stream goes on.
#[test]
fn a_broadcast_over_the_limit_is_answered_not_allocated() {
    let zeros = vec!["0"; 65536].join(",");
    let case = format!(
        r#"{{"id":7,"op":"add","args":[{{"dtype":"float64","shape":[65536,1],"bits":[{zeros}]}},{{"dtype":"float64","shape":[1,65536],"bits":[{zeros}]}}]}}"#
    );
    let good = r#"{"id":8,"op":"add","args":[{"dtype":"int8","shape":[1],"bits":[1]},{"scalar":"int","value":2}]}"#;
    let o = typejoin(&["run", "-"], Some(format!("{case}\n{good}\n").as_bytes()));
    not_a_crash(&o, "broadcast");
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        out,
        "{\"id\":7,\"error\":\"broadcasting [65536, 1] with [1, 65536] gives shape [65536, 65536], over the limit of 268435456 elements (raise it with --max-elements)\",\"kind\":\"input\"}\n\
         {\"id\":8,\"dtype\":\"int8\",\"shape\":[1],\"bits\":[3]}\n"
    );
    // The limit is the user's: a small one refuses a small broadcast.
    let small = r#"{"id":9,"op":"add","args":[{"dtype":"int8","shape":[3,1],"bits":[1,2,3]},{"dtype":"int8","shape":[1,3],"bits":[1,2,3]}]}"#;
    let o = typejoin(
        &["run", "--max-elements", "8", "-"],
        Some(format!("{small}\n").as_bytes()),
    );
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "{\"id\":9,\"error\":\"broadcasting [3, 1] with [1, 3] gives shape [3, 3], over the limit of 8 elements (raise it with --max-elements)\",\"kind\":\"input\"}\n"
    );
}

/// A line over `--max-line-bytes` is answered (no id: it was never read) and skipped without
/// being held; the lines after it run.
#[test]
fn an_overlong_line_is_answered_and_skipped() {
    let good = r#"{"id":1,"op":"add","args":[{"dtype":"int8","shape":[1],"bits":[1]},{"dtype":"int8","shape":[1],"bits":[2]}]}"#;
    let long = format!("{{\"id\":2,\"pad\":\"{}\"}}", "x".repeat(10_000));
    let o = typejoin(
        &["run", "--max-line-bytes", "1000", "-"],
        Some(format!("{good}\n{long}\n\n{good}").as_bytes()),
    );
    not_a_crash(&o, "long line");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "{\"id\":1,\"dtype\":\"int8\",\"shape\":[1],\"bits\":[3]}\n\
         {\"id\":null,\"error\":\"line 2 is longer than 1000 bytes (raise it with --max-line-bytes)\",\"kind\":\"input\"}\n\
         {\"id\":1,\"dtype\":\"int8\",\"shape\":[1],\"bits\":[3]}\n"
    );
}

/// A write that fails (a full disk, simulated by a file-size limit of 100 bytes with SIGXFSZ
/// ignored so the write returns EFBIG; then a target that is a directory, so the rename fails)
/// reports the path, exits 2, leaves the old contents as they were and no temp file behind.
#[cfg(unix)]
#[test]
fn a_failed_write_keeps_the_old_file_and_leaves_no_temp_file() {
    use std::os::unix::process::CommandExt;
    let dir = std::env::temp_dir().join(format!("typejoin-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("table.md");
    std::fs::write(&target, "OLD").unwrap();
    let leftovers = || -> Vec<String> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect()
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_typejoin"));
    cmd.args([
        "--color",
        "never",
        "table",
        "lattices/jax.toml",
        "--format",
        "markdown",
        "-o",
    ])
    .arg(&target)
    .current_dir(root());
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal) are made.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 100,
                rlim_max: 100,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    not_a_crash(&o, "full disk");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("cannot write `"), "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "OLD");
    assert_eq!(leftovers(), Vec::<String>::new());

    // The target is a non-empty directory: the temp file is written, the rename fails.
    let busy = dir.join("busy");
    std::fs::create_dir_all(busy.join("inside")).unwrap();
    let o = typejoin(
        &["table", "lattices/jax.toml", "-o", busy.to_str().unwrap()],
        None,
    );
    not_a_crash(&o, "rename over a directory");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("cannot write `")
    );
    assert!(busy.join("inside").is_dir());
    assert_eq!(leftovers(), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}
