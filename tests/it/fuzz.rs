//! Fuzz targets on stable Rust (issue 18): proptest harnesses over the five readers of
//! untrusted bytes (the policy parser, the observed-table parser, the requirements parser, the
//! runner's line reader and the cast bit reader), fed mutations of real inputs as well as
//! arbitrary bytes.
//!
//! `cargo test` runs each target for proptest's default 256 cases (seconds); `scripts/fuzz`
//! runs them for as many cases as asked (`PROPTEST_CASES`). A failing case is shrunk and its
//! seed saved under `proptest-regressions/`, which is committed and replayed first on every
//! later run.

use proptest::prelude::*;
use serde_json::Value;
use typejoin::{
    CheckOptions, DTYPES, Input,
    cast::{Cast, Values},
    conformance::{Limits, run_stream},
    decode,
};

use crate::root;

/// Every policy and table the project ships or tests with: the seeds of the parser targets.
fn parser_seeds() -> &'static [(String, Vec<u8>)] {
    static SEEDS: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut paths = crate::files("lattices", "toml");
        paths.extend(crate::files("lattices/studies", "toml"));
        paths.extend(crate::files("observed", "json"));
        paths.extend(crate::files("tests/data", "toml"));
        paths
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(root().join(&p)).unwrap();
                (p, bytes)
            })
            .collect()
    })
}

/// The shipped requirements files: the seeds of the requirements target.
fn requirement_seeds() -> &'static [(String, Vec<u8>)] {
    static SEEDS: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        crate::files("requirements", "toml")
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(root().join(&p)).unwrap();
                (p, bytes)
            })
            .collect()
    })
}

/// The oracle's runner lines (every op, every dtype the kernels take), each array cut to its
/// first 3 elements so that edits land on structure, not deep in long data: the seeds of the
/// runner target.
fn runner_seeds() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds: Vec<String> = [
            "tests/data/kernels/cases.jsonl",
            "tests/data/kernels/extra_cases.jsonl",
        ]
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(root().join(f))
                .unwrap()
                .lines()
                .map(|l| {
                    let mut case: Value = serde_json::from_str(l).unwrap();
                    for arg in case["args"].as_array_mut().into_iter().flatten() {
                        let vector = arg["shape"].as_array().is_some_and(|s| s.len() == 1);
                        if let (true, Some(bits)) = (vector, arg["bits"].as_array_mut()) {
                            bits.truncate(3);
                            let n = bits.len();
                            arg["shape"] = serde_json::json!([n]);
                        }
                    }
                    case.to_string()
                })
                .collect::<Vec<_>>()
        })
        .collect();
        seeds.sort();
        seeds.dedup();
        seeds
    })
}

/// One edit of a byte string: delete `len` bytes at `at`, insert `insert` there.
#[derive(Clone, Debug)]
struct Edit {
    at: prop::sample::Index,
    len: usize,
    insert: Vec<u8>,
}

/// Bytes that make parsers change state: delimiters, signs, huge and negative numbers, escapes,
/// a multi-byte character, bytes that are never UTF-8, and the newline.
fn edit() -> impl Strategy<Value = Edit> {
    let token = prop::sample::select(vec![
        &b"["[..],
        b"]",
        b"{",
        b"}",
        b"\"",
        b",",
        b"=",
        b":",
        b"-",
        b"e",
        b".",
        b"\\",
        b"\n",
        b"0",
        b"1",
        b"255",
        b"-1",
        b"4294967296",
        b"18446744073709551616",
        b"1e999",
        b"null",
        b"[]",
        b"[[]]",
        b"\"shape\":[0,4294967296,3]",
        b"\"dtype\":\"complex64\"",
        b"\"dtype\":\"int4\"",
        b"*",
        b"@",
        "\u{e9}".as_bytes(),
        b"\xff",
        b"\xc3",
    ]);
    (
        any::<prop::sample::Index>(),
        0usize..8,
        prop::collection::vec(token, 0..4),
    )
        .prop_map(|(at, len, tokens)| Edit {
            at,
            len,
            insert: tokens.concat(),
        })
}

/// One structural edit of a JSON case: the value at a node (picked among all nodes, in
/// document order) replaced by a hostile one, or removed from its parent.
#[derive(Clone, Debug)]
struct Swap {
    node: prop::sample::Index,
    with: Option<Value>,
}

fn swap() -> impl Strategy<Value = Swap> {
    use serde_json::json;
    let hostile = prop::sample::select(vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(255),
        json!(256),
        json!(4294967296u64),
        json!(u64::MAX),
        json!(1.5),
        json!(-1e308),
        json!("x"),
        json!(""),
        json!("add"),
        json!("sum"),
        json!("astype"),
        json!("bool"),
        json!("int4"),
        json!("uint64"),
        json!("bfloat16"),
        json!("float8_e4m3fn"),
        json!("complex64"),
        json!("complex128"),
        json!("f*"),
        json!([]),
        json!([[]]),
        json!([1]),
        json!([1, 2]),
        json!([[1]]),
        json!([[1, 2]]),
        json!([[1, 2, 3]]),
        json!([0, 4294967296u64, 3]),
        json!([65536, 1]),
        json!([3, 0]),
        json!({}),
    ]);
    (
        any::<prop::sample::Index>(),
        prop::option::weighted(0.9, hostile),
    )
        .prop_map(|(node, with)| Swap { node, with })
}

/// `case` with `swap` applied.
fn apply_swap(case: &mut Value, swap: &Swap) {
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    pointers(x, format!("{at}/{i}"), out);
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    pointers(x, format!("{at}/{k}"), out);
                }
            }
            _ => {}
        }
        out.push(at);
    }
    let mut all = Vec::new();
    pointers(case, String::new(), &mut all);
    let at = &all[swap.node.index(all.len())];
    match (&swap.with, at.rsplit_once('/')) {
        (Some(with), _) => *case.pointer_mut(at).unwrap() = with.clone(),
        (None, Some((parent, key))) => match case.pointer_mut(parent).unwrap() {
            Value::Array(a) => {
                a.remove(key.parse::<usize>().unwrap());
            }
            Value::Object(o) => {
                o.remove(key);
            }
            _ => unreachable!("a parent is a container"),
        },
        (None, None) => *case = Value::Null,
    }
}

fn apply(bytes: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for e in edits {
        let start = e.at.index(out.len() + 1);
        let end = (start + e.len).min(out.len());
        out.splice(start..end, e.insert.iter().copied());
    }
    out
}

/// A file as the CLI reads it: decoded (a non-UTF-8 file is an error located at its first bad
/// byte), then parsed. Every error must be located inside the file and render, at most
/// `typejoin::MAX_ERRORS` of them, in bounded space.
fn parse_like_the_cli(path: &str, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let len = bytes.len();
    let lines = bytes.split(|&b| b == b'\n').count();
    let result = decode(path, bytes).and_then(|text| Input::parse(path, &text));
    match result {
        Ok(input) => {
            // A policy that parses is checked: the law engine is a reader of its output.
            let _ = input.check(CheckOptions::default());
        }
        Err(e) => {
            prop_assert!(!e.diagnostics.is_empty());
            for d in &e.diagnostics {
                prop_assert!(d.line >= 1 && d.line <= lines + 1, "{}", d);
                prop_assert!(d.col >= 1, "{}", d);
            }
            let shown = e.render_with(typejoin::Style {
                max_errors: typejoin::MAX_ERRORS,
                ..typejoin::Style::default()
            });
            // Each shown error quotes at most a window of its line, never the whole file.
            prop_assert!(
                shown.len()
                    <= typejoin::MAX_ERRORS * (4 * typejoin::SNIPPET_CHARS + 600) + len.min(600),
                "{} bytes of errors for a {len}-byte file",
                shown.len()
            );
        }
    }
    Ok(())
}

/// Whether `run_stream` owes an answer for this raw line.
fn answered(line: &[u8], max: usize) -> bool {
    line.len() > max || std::str::from_utf8(line).map_or(true, |t| !t.trim().is_empty())
}

proptest! {
    #![proptest_config(crate::props::config("fuzz"))]

    /// Policies and tables, mutated: a located error or a parsed input, never a panic.
    #[test]
    fn fuzz_policy_and_table_parsers(seed in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..5)) {
        let seeds = parser_seeds();
        let (path, bytes) = &seeds[seed.index(seeds.len())];
        parse_like_the_cli(path, apply(bytes, &edits))?;
    }

    /// Requirements files (`typejoin synth`), mutated: parsed requirements, each on a line of
    /// the file, or errors located inside it; never a panic.
    #[test]
    fn fuzz_requirements_parser(seed in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..5)) {
        let seeds = requirement_seeds();
        let (path, bytes) = &seeds[seed.index(seeds.len())];
        let bytes = apply(bytes, &edits);
        let lines = bytes.split(|&b| b == b'\n').count();
        match decode(path, bytes).and_then(|t| typejoin::parse_requirements(path, &t)) {
            Ok(r) => prop_assert!(r.items.iter().all(|i| (1..=lines).contains(&i.line))),
            Err(e) => {
                prop_assert!(!e.diagnostics.is_empty());
                for d in &e.diagnostics {
                    prop_assert!(d.line >= 1 && d.line <= lines + 1 && d.col >= 1, "{}", d);
                }
            }
        }
    }

    /// Arbitrary bytes under either extension.
    #[test]
    fn fuzz_parsers_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300), json in any::<bool>()) {
        parse_like_the_cli(if json { "x.json" } else { "x.toml" }, bytes)?;
    }

    /// The runner: a stream of mutated and arbitrary lines under a random line limit gets one
    /// answer per line owed, in order, each a JSON object with the line's `id` when the line
    /// had one, and no kernel panics (`internal`).
    #[test]
    fn fuzz_runner_lines(
        picks in prop::collection::vec(
            (any::<prop::sample::Index>(), prop::collection::vec(swap(), 0..4), prop::collection::vec(edit(), 0..2)),
            1..6,
        ),
        noise in prop::collection::vec(any::<u8>(), 0..80),
        max in prop::sample::select(vec![200usize, 1 << 20, 1 << 20, 1 << 20]),
        policy in 0usize..typejoin::GENERATED.len(),
    ) {
        let seeds = runner_seeds();
        let mut lines: Vec<Vec<u8>> = picks
            .iter()
            .map(|(i, swaps, edits)| {
                let mut case: Value = serde_json::from_str(&seeds[i.index(seeds.len())]).unwrap();
                for s in swaps {
                    apply_swap(&mut case, s);
                }
                apply(case.to_string().as_bytes(), edits)
            })
            .collect();
        lines.push(noise);
        let input: Vec<u8> = lines.join(&b'\n');
        // The raw lines as the reader splits them (an edit may have inserted a newline).
        let raw: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        let owed: Vec<&[u8]> = raw.iter().copied().filter(|l| answered(l, max)).collect();
        let mut out = Vec::new();
        let generated = typejoin::GENERATED[policy];
        run_stream(generated, &input[..], &mut out, Limits {
                max_line_bytes: max,
                ..Limits::default()
            }).unwrap();
        let text = String::from_utf8(out).unwrap();
        let answers: Vec<&str> = text.lines().collect();
        prop_assert_eq!(answers.len(), owed.len(), "{}", text);
        for (line, answer) in owed.iter().zip(&answers) {
            let a: Value = serde_json::from_str(answer).unwrap();
            prop_assert!(a.is_object(), "{}", answer);
            prop_assert!(a["kind"] != "internal", "a kernel panicked on {}", String::from_utf8_lossy(line));
            // The id of a line that is a JSON object, read alone (docs/contracts.md): a field
            // the runner cannot read (`1e999`, past f64's range) leaves the id to echo.
            let id = (line.len() <= max)
                .then(|| std::str::from_utf8(line).ok())
                .flatten()
                .and_then(|t| {
                    serde_json::from_str::<std::collections::BTreeMap<String, &serde_json::value::RawValue>>(t).ok()
                })
                .and_then(|fields| serde_json::from_str::<Value>(fields.get("id")?.get()).ok())
                .unwrap_or(Value::Null);
            prop_assert_eq!(&a["id"], &id, "{}", answer);
        }
    }

    /// The cast bit reader: any bytes as any source: a table with one row per storage unit,
    /// each row the unit read little-endian, or an error; never a panic, never a masked unit.
    #[test]
    fn fuzz_cast_bit_reader(src in 0usize..DTYPES.len(), dst in 0usize..DTYPES.len(), bytes in prop::collection::vec(any::<u8>(), 0..40)) {
        let Ok(cast) = Cast::new(DTYPES[src].name, DTYPES[dst].name) else { return Ok(()) };
        if let Ok(table) = cast.table(Values::Storage { path: "x.bin", bytes: &bytes }) {
            let w = table.src_bytes as usize;
            prop_assert_eq!(table.rows.len() * w, bytes.len());
            for (row, unit) in table.rows.iter().zip(bytes.chunks_exact(w)) {
                let read = unit.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64);
                prop_assert_eq!(row.bits, read);
            }
        }
    }
}
