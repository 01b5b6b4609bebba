//! The docs' examples are real: the format examples parse and say what the text says, and the
//! sample output in README is what the binary prints.

use std::process::Command;

use typejoin::{CheckOptions, Input, Law};

use crate::root;

fn block<'a>(text: &'a str, lang: &str) -> &'a str {
    let open = format!("```{lang}\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no {lang} block"))
        + open.len();
    let end = start + text[start..].find("```").unwrap();
    &text[start..end]
}

#[test]
fn format_examples_parse() {
    let doc = std::fs::read_to_string(root().join("docs/file-formats.md")).unwrap();
    let policy =
        Input::parse("example.toml", block(&doc, "toml")).unwrap_or_else(|e| panic!("{e}"));
    let r = policy.check(CheckOptions::default());
    assert!(r.ok());
    let Input::Policy { policy, .. } = &policy else {
        panic!()
    };
    assert_eq!(policy.formats().len(), 1);
    assert_eq!(policy.ops().len(), 4);
    assert_eq!(policy.canonical_rules().len(), 1);
    assert!(policy.ops().iter().any(|r| r.bool_result.is_some()));
    assert!(policy.ops().iter().any(|r| r.lowest_unsigned.is_some()));
    let table = Input::parse("example.json", block(&doc, "json")).unwrap_or_else(|e| panic!("{e}"));
    let r = table.check(CheckOptions::default());
    let a = r.law(Law::Associativity).unwrap();
    assert!(
        a.witnesses
            .iter()
            .any(|w| w.dtypes == ["int8", "uint8", "float16"]
                && w.left.as_deref() == Some("float32")
                && w.right.as_deref() == Some("float16"))
    );
}

#[test]
fn readme_sample_output_is_real() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let console = block(&readme, "console");
    let mut out = String::new();
    for args in [
        &["check", "lattices"][..],
        &["check", "observed/numpy_promote_types.json"],
        &["explain", "lattices/jax.toml", "i8", "u8"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        out += &String::from_utf8(o.stdout).unwrap();
    }
    let mut checked = 0;
    for line in console.lines() {
        if line.starts_with('$') || line.trim() == "…" || line.ends_with('…') {
            continue;
        }
        assert!(
            out.lines().any(|l| l == line),
            "README line not in the output:\n{line}"
        );
        checked += 1;
    }
    assert!(checked >= 10);
}

/// Every repository path a doc names (README.md, docs/, the Python package's docs, and the doc
/// comments of src/ and python/src/) exists: `src/kernels/ops/plan.rs` in backquotes or a
/// Markdown link to a sibling page. A path with a placeholder (`NAME`, `<command>`, `*`) names a
/// pattern, not a file, and is skipped; so are paths under `target/` (build output).
#[test]
fn docs_name_only_files_that_exist() {
    const TOPS: [&str; 10] = [
        "src/",
        "docs/",
        "tests/",
        "scripts/",
        "lattices/",
        "observed/",
        "proofs/",
        "python/",
        "benches/",
        ".ci/",
    ];
    let mut docs: Vec<String> = vec!["README.md".into()];
    docs.extend(crate::files("docs", "md"));
    docs.extend(crate::files("src", "rs"));
    docs.extend(crate::files("python/src", "rs"));
    docs.extend(crate::files("python/typejoin", "py"));
    docs.extend(crate::files("python/typejoin", "pyi"));
    docs.extend(crate::files("scripts", "py"));
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut missing = Vec::new();
    let mut named = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        let dir = std::path::Path::new(doc).parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            // Repository paths, wherever they stand in the line.
            for top in TOPS {
                let mut rest = line;
                while let Some(i) = rest.find(top) {
                    let before = rest[..i].chars().next_back();
                    let tail = &rest[i..];
                    rest = &tail[top.len()..];
                    if before.is_some_and(|c| is_path_char(c) || c == '/') {
                        continue; // a path inside a longer one (`python/src/`, `../docs/`)
                    }
                    let end = tail.find(|c: char| !is_path_char(c)).unwrap_or(tail.len());
                    let path = tail[..end].trim_end_matches(['.', ',']);
                    let next = tail[end..].chars().next();
                    if next.is_some_and(|c| "<*{$".contains(c))
                        || path.chars().any(|c| c.is_ascii_uppercase())
                        || path.contains("..")
                    {
                        continue; // a pattern (`NAME`, `<command>.rs`, `*.toml`)
                    }
                    named += 1;
                    if !root().join(path).exists() && !root().join(dir).join(path).exists() {
                        missing.push(format!("{doc}:{}: {path}", n + 1));
                    }
                }
            }
            // Relative links between pages: `[x](kernels.md#anchor)`.
            if doc.ends_with(".md") {
                let mut rest = line;
                while let Some(i) = rest.find("](") {
                    rest = &rest[i + 2..];
                    let end = rest.find([')', '#']).unwrap_or(rest.len());
                    let target = &rest[..end];
                    if target.is_empty() || target.contains("://") || target.starts_with('/') {
                        continue;
                    }
                    named += 1;
                    if !root().join(dir).join(target).exists() {
                        missing.push(format!("{doc}:{}: {target}", n + 1));
                    }
                }
            }
        }
    }
    assert!(named > 300, "only {named} paths found: the scan is broken");
    assert!(
        missing.is_empty(),
        "docs name files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// A Rust file a page names by its bare name (`plan.rs`, `kernels/cast.rs`) is one of the
/// repository's.
#[test]
fn docs_name_only_rust_files_that_exist() {
    let mut sources = crate::files("src", "rs");
    sources.extend(crate::files("tests", "rs"));
    sources.extend(crate::files("python/src", "rs"));
    sources.extend(crate::files("benches", "rs"));
    sources.push("build.rs".into());
    let mut pages = vec!["README.md".to_string()];
    pages.extend(crate::files("docs", "md"));
    let mut missing = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (i, token) in line.split('`').enumerate() {
                let is_name = i % 2 == 1
                    && token.ends_with(".rs")
                    && token
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_./".contains(c));
                if is_name
                    && !sources
                        .iter()
                        .any(|s| s == token || s.ends_with(&format!("/{token}")))
                {
                    missing.push(format!("{page}:{}: {token}", n + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "pages name Rust files that do not exist:\n{}",
        missing.join("\n")
    );
}
