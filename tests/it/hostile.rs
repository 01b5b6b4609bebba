//! Hostile input (issue 18): the corpus under tests/data/hostile replayed through the binary,
//! each case's exit code and output held exactly, plus the reproducers too large to commit
//! (a 10,000-dtype policy, a broadcast of 2^32 elements), generated here.
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

/// 10,000 unknown dtypes on one line: every error is found, 50 are shown with a snippet of
/// at most 120 characters, the rest counted; the report stays far under a megabyte.
#[test]
fn ten_thousand_errors_report_in_kilobytes() {
    let dir = std::env::temp_dir().join(format!("typejoin-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.toml");
    let names: Vec<String> = (0..10_000).map(|i| format!("\"bogus{i}\"")).collect();
    std::fs::write(
        &path,
        format!("name = \"big\"\ndtypes = [{}]\n", names.join(", ")),
    )
    .unwrap();
    let o = typejoin(&["check", path.to_str().unwrap()], None);
    not_a_crash(&o, "10,000 unknown dtypes (the most a policy may name)");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.len() < 64 << 10, "{} bytes of errors", err.len());
    assert_eq!(err.matches("error: unknown dtype").count(), 50);
    assert!(
        err.contains("… and 9950 more errors in "),
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
    assert_eq!(all.matches("error: unknown dtype").count(), 10_000);
    assert!(all.contains("error: unknown dtype `bogus9999`"));
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
    assert!(narrow.contains("… and 9999 more errors in "), "{narrow}");
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

/// The binary run with `args` and `stdin` in an address space of `bytes` (`setrlimit
/// RLIMIT_AS`, what `ulimit -v` sets), its input written from another thread.
#[cfg(target_os = "linux")]
fn run_in_address_space(bytes: u64, args: &[&str], stdin: String) -> Output {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_typejoin"));
    child
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        child.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = child.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || input.write_all(stdin.as_bytes()));
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    o
}

/// `typejoin run` in a 4 GiB address space (`ulimit -v 4194304`, as a CI container imposes):
/// results too large for it are `memory` errors, answers too long for `--max-output-bytes`
/// are `input` errors, a 66 MB complex64 line within the line limit is read without a JSON
/// tree, and every line is answered in order (issue 43, item 1).
#[cfg(target_os = "linux")]
#[test]
fn the_runner_answers_every_line_in_a_4_gib_address_space() {
    let column = |dtype: &str, zero: &str, rows: bool| {
        let bits = vec![zero; 16384].join(",");
        let shape = if rows { "[16384,1]" } else { "[1,16384]" };
        format!(r#"{{"dtype":"{dtype}","shape":{shape},"bits":[{bits}]}}"#)
    };
    let small = |id: u32| {
        format!(
            r#"{{"id":{id},"op":"add","args":[{{"dtype":"int8","shape":[2],"bits":[1,2]}},{{"scalar":"int","value":3}}]}}"#
        )
    };
    let n = 11_000_000;
    let complex_line = format!(
        r#"{{"id":7,"op":"add","args":[{{"dtype":"complex64","shape":[{n}],"bits":[{}]}},{{"scalar":"int","value":1}}]}}"#,
        vec!["[0,0]"; n].join(",")
    );
    assert!(complex_line.len() > 66_000_000 && complex_line.len() < 64 << 20);
    let lines = [
        small(1),
        // 2^28 uint8 elements: computed (256 MiB), its answer over --max-output-bytes.
        format!(
            r#"{{"id":2,"op":"add","args":[{},{}]}}"#,
            column("uint8", "1", true),
            column("uint8", "2", false)
        ),
        // 2^28 complex128 elements: 4 GiB, more than the address space.
        format!(
            r#"{{"id":3,"op":"add","args":[{},{}]}}"#,
            column("complex128", "[0,0]", true),
            column("complex128", "[0,0]", false)
        ),
        // A sum over an empty axis whose result is 2^28 complex128 zeros.
        r#"{"id":4,"op":"sum","axis":0,"args":[{"dtype":"complex128","shape":[0,268435456],"bits":[]}]}"#.into(),
        // An empty cast of a huge shape: nothing to allocate.
        r#"{"id":5,"op":"astype","dtype":"complex128","args":[{"dtype":"float64","shape":[0,134217728],"bits":[]}]}"#.into(),
        small(6),
        complex_line,
        small(8),
        // NumPy 2 compares int64 with uint64 by value: the 256 MiB result fits, the operands
        // broadcast to 2 GiB each do not.
        format!(
            r#"{{"id":9,"op":"less","args":[{},{}]}}"#,
            column("int64", "1", true),
            column("uint64", "2", false)
        ),
    ];
    let text = lines.join("\n") + "\n";
    let o = run_in_address_space(
        4 << 30,
        &["run", "--max-output-bytes", "1000000", "-"],
        text,
    );
    not_a_crash(&o, "the runner under a 4 GiB address space");
    let out = String::from_utf8(o.stdout).unwrap();
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(u64, String)> = answers
        .iter()
        .map(|a| {
            let kind = a["kind"].as_str().map_or("ok".to_string(), str::to_string);
            (a["id"].as_u64().unwrap(), kind)
        })
        .collect();
    let expected: Vec<(u64, String)> = [
        (1, "ok"),
        (2, "input"),
        (3, "memory"),
        (4, "memory"),
        (5, "ok"),
        (6, "ok"),
        (7, "input"),
        (8, "ok"),
        (9, "memory"),
    ]
    .into_iter()
    .map(|(i, k)| (i, k.to_string()))
    .collect();
    assert_eq!(summary, expected, "{out}");
    assert_eq!(
        answers[1]["error"],
        "the answer would take 536870968 bytes, over the limit of 1000000 (raise it with --max-output-bytes)"
    );
    assert_eq!(
        answers[2]["error"],
        "an array of shape [16384, 16384] needs 4294967296 bytes, more than this process could allocate"
    );
    assert_eq!(
        answers[4],
        serde_json::json!({"id": 5, "dtype": "complex128", "shape": [0, 134217728], "bits": []})
    );
    assert_eq!(answers[7]["bits"], serde_json::json!([4, 5]));
    assert_eq!(
        answers[8]["error"],
        "an array of shape [16384, 16384] needs 2147483648 bytes, more than this process could allocate"
    );
}

/// A line whose `bits` the allocator refuses (30 million patterns, 480 MB, in a 512 MiB
/// address space) is a `memory` answer, and the next line runs.
#[cfg(target_os = "linux")]
#[test]
fn bits_past_the_address_space_are_a_memory_answer() {
    let n = 30_000_000;
    let big = format!(
        r#"{{"id":1,"op":"negative","args":[{{"dtype":"int8","shape":[{n}],"bits":[{}]}}]}}"#,
        vec!["0"; n].join(",")
    );
    let small = r#"{"id":2,"op":"add","args":[{"dtype":"int8","shape":[2],"bits":[1,2]},{"scalar":"int","value":3}]}"#;
    let text = format!("{big}\n{small}\n");
    let o = run_in_address_space(512 << 20, &["run", "-"], text);
    not_a_crash(&o, "bits past the address space");
    let out = String::from_utf8(o.stdout).unwrap();
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{out}");
    assert_eq!(answers[0]["kind"], "memory", "{out}");
    assert!(
        answers[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("argument 0: its "),
        "{out}"
    );
    assert_eq!(answers[1]["bits"], serde_json::json!([4, 5]));
}

/// `bench`'s sizes are checked before anything is allocated: an -n past memory (or past
/// `usize`) and a --runs past the limit exit 2 with the flag to change (issue 43, item 2).
#[test]
fn bench_sizes_are_checked_before_allocating() {
    for (args, message) in [
        (
            vec!["-n", "18446744073709551615"],
            "error: -n 18446744073709551615 needs about",
        ),
        (
            vec!["-n", "10", "--runs", "18446744073709551615"],
            "error: --runs 18446744073709551615 is more than 1000000 timed runs",
        ),
    ] {
        let mut all = vec![
            "bench", "--op", "add", "--lhs", "float32", "--rhs", "float32",
        ];
        all.extend(args);
        let o = typejoin(&all, None);
        not_a_crash(&o, "bench");
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.starts_with(message), "{err}");
    }
}

/// A table naming more dtypes than typejoin reads is refused at the first one past the limit,
/// in seconds (it used to run until killed); a command whose work grows faster than `check`'s
/// refuses a policy past its own limit, naming it (issue 43, items 3 and 5).
#[test]
fn inputs_past_the_size_limits_are_refused_before_the_work() {
    let dir = std::env::temp_dir().join(format!("typejoin-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let names: Vec<String> = (0..100_000).map(|i| format!("\"d{i}\"")).collect();
    let table = dir.join("wide.json");
    std::fs::write(
        &table,
        format!(
            r#"{{"name": "wide", "library": "x", "version": "1", "dtypes": [{}], "result": {{}}}}"#,
            names.join(", ")
        ),
    )
    .unwrap();
    let o = typejoin(&["check", table.to_str().unwrap()], None);
    not_a_crash(&o, "a 100,000-dtype table");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("error: 100000 dtypes: typejoin reads tables of at most 10000\n"),
        "{err}"
    );
    // A chain of 2,049 declared 8-bit integers.
    let n = 2049;
    let mut policy = format!(
        "name = \"chain\"\ndtypes = [{}]\n[promotes]\n",
        (0..n)
            .map(|i| format!("\"d{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for i in 0..n - 1 {
        policy += &format!("d{i} = [\"d{}\"]\n", i + 1);
    }
    for i in 0..n {
        policy += &format!("[formats.d{i}]\nkind = \"int\"\nbits = 8\n");
    }
    let path = dir.join("chain.toml");
    std::fs::write(&path, policy).unwrap();
    let p = path.to_str().unwrap();
    for (args, command, max) in [
        (vec!["safety", p], "safety", 2048),
        (vec!["table", p], "table", 2048),
        (vec!["dot", p], "dot", 2048),
        (
            vec!["prove", p, "--out", dir.to_str().unwrap()],
            "prove",
            1024,
        ),
    ] {
        let o = typejoin(&args, None);
        not_a_crash(&o, command);
        assert_eq!(o.status.code(), Some(2), "{command}");
        let err = String::from_utf8(o.stderr).unwrap();
        let want = format!("error: 2049 dtypes: `typejoin {command}` takes at most {max} (");
        assert!(err.starts_with(&want), "{err}");
    }
    // `check` takes it.
    let o = typejoin(&["check", p], None);
    assert_eq!(o.status.code(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-o` writes through a FIFO or a device instead of replacing it, follows a symlink to its
/// file (refusing a dangling one, as `cp` does), and takes a 250-byte file name (issue 43,
/// item 6).
#[cfg(unix)]
#[test]
fn output_paths_are_written_as_cp_writes_them() {
    let dir = std::env::temp_dir().join(format!("typejoin-paths-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = |out: &std::path::Path| {
        typejoin(
            &["table", "lattices/jax.toml", "-o", out.to_str().unwrap()],
            None,
        )
    };
    let want = typejoin(&["table", "lattices/jax.toml"], None).stdout;
    // A FIFO: read by another thread, still a FIFO afterwards.
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    assert_eq!(table(&fifo).status.code(), Some(0));
    assert_eq!(reader.join().unwrap(), want);
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A symlink: the file it names is written, the link stays.
    let real = dir.join("real.md");
    std::fs::write(&real, "OLD").unwrap();
    let link = dir.join("link.md");
    std::os::unix::fs::symlink("real.md", &link).unwrap();
    assert_eq!(table(&link).status.code(), Some(0));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&real).unwrap(), want);
    // A dangling symlink is refused, and left as it was.
    let dangling = dir.join("dangling.md");
    std::os::unix::fs::symlink("nowhere.md", &dangling).unwrap();
    let o = table(&dangling);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .contains("not writing through the dangling symlink")
    );
    assert!(!dir.join("nowhere.md").exists());
    // A 250-byte name: its temp name would pass 255 bytes, so a short one is used.
    let long = dir.join("a".repeat(250));
    assert_eq!(table(&long).status.code(), Some(0));
    assert_eq!(std::fs::read(&long).unwrap(), want);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert_eq!(left, Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}
