//! The module layering of docs/architecture.md, enforced: the top-level modules of `src/` are
//! declared in `lib.rs` in pipeline order, and a module may only name modules declared before
//! it. A reference that points back (a cycle in the making) fails with the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules in the order `lib.rs` declares them (`mod x;`, `pub mod x;`).
fn layers(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// `lib.rs`'s top-level `pub use` statements, each on one line (rustfmt may wrap a group).
fn reexport_statements(lib: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for l in lib.lines() {
        match open.as_mut() {
            Some(s) => s.push_str(l.trim()),
            None if l.starts_with("pub use ") => open = Some(l.to_string()),
            None => continue,
        }
        if l.trim_end().ends_with(';') {
            out.extend(open.take());
        }
    }
    out
}

/// `lib.rs`'s re-exports: a name at the crate root and the top-level module it comes from
/// (`pub use a::b::{C, D as E}` gives `C` and `E`, both from `a`).
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for s in reexport_statements(lib) {
        let rest = s["pub use ".len()..].trim_end_matches(';');
        let module = rest.split("::").next().unwrap().to_string();
        let names = match rest.split_once('{') {
            Some((_, names)) => names.trim_end_matches('}').to_string(),
            None => rest.rsplit("::").next().unwrap().to_string(),
        };
        for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = n.rsplit(" as ").next().unwrap();
            map.insert(name.to_string(), module.clone());
        }
    }
    map
}

/// The top-level module a file of `src/` belongs to (`None` for lib.rs, main.rs and cli/).
fn owner(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    if rel.components().count() == 1 {
        let stem = first.trim_end_matches(".rs").to_string();
        return (stem != "lib" && stem != "main").then_some(stem);
    }
    (first != "cli").then(|| first.to_string())
}

/// Every `crate::NAME` a line names, including `use crate::{A, B::c}`.
fn crate_refs(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                if !head.is_empty() {
                    out.push(head.to_string());
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
        rest = after;
    }
    out
}

#[test]
fn top_level_modules_depend_only_on_earlier_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let order = layers(&lib);
    assert!(order.len() >= 10, "lib.rs declares {order:?}");
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let roots = reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    let mut backwards = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let Some(from) = owner(rel) else { continue };
        assert!(
            rank.contains_key(from.as_str()),
            "{} is not under a module lib.rs declares",
            rel.display()
        );
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for name in crate_refs(code) {
                // A module's name is the module (`crate::policy::x`), though a function
                // of the same name is re-exported (`typejoin::policy`, the kernels').
                let to = match roots.get(&name) {
                    _ if rank.contains_key(name.as_str()) => name,
                    Some(m) => m.clone(),
                    None => continue,
                };
                if to == from {
                    continue;
                }
                if rank[to.as_str()] > rank[from.as_str()] {
                    backwards.push(format!(
                        "src/{}:{}: `{from}` names `{to}`, which lib.rs declares after it",
                        rel.display(),
                        i + 1
                    ));
                }
                edges.insert((from.clone(), to));
            }
        }
    }
    assert!(
        backwards.is_empty(),
        "dependencies must point down the pipeline (docs/architecture.md):\n{}",
        backwards.join("\n")
    );
    // The check must see the real graph: these edges are the pipeline's spine.
    for (a, b) in [
        ("policy", "numeric"),
        ("order", "policy"),
        ("laws", "order"),
        ("smt", "laws"),
        ("safety", "smt"),
        ("check", "safety"),
        ("kernels", "promote"),
        ("output", "check"),
        ("design", "laws"),
    ] {
        assert!(
            edges.contains(&(a.to_string(), b.to_string())),
            "expected `{a}` to use `{b}`: {edges:?}"
        );
    }
}

#[test]
fn architecture_doc_lists_the_layers_in_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.starts_with("Layers, lowest first:"))
        .expect("docs/architecture.md has a `Layers, lowest first:` line");
    let listed: Vec<String> = line["Layers, lowest first:".len()..]
        .split('→')
        .map(|m| m.trim().trim_matches('`').trim_end_matches('.').to_string())
        .collect();
    assert_eq!(listed, layers(&lib));
}

#[test]
fn the_checker_sees_use_groups_and_paths() {
    assert_eq!(
        crate_refs("use crate::{Input, policy::spec::Policy};"),
        ["Input", "policy"]
    );
    assert_eq!(
        crate_refs("let x = crate::safety::lint(crate::laws::X);"),
        ["safety", "laws"]
    );
    assert_eq!(
        owner(Path::new("kernels/ops.rs")).as_deref(),
        Some("kernels")
    );
    assert_eq!(owner(Path::new("check.rs")).as_deref(), Some("check"));
    assert_eq!(owner(Path::new("cli/check.rs")), None);
}

/// The module path of a file under `src/` (`kernels/ops/plan.rs` is `kernels::ops::plan`,
/// `kernels/ops/mod.rs` is `kernels::ops`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The module paths a line of `from` names: `crate::a::b`, `super::x`, `self::x` and their
/// `{…}` groups, resolved to absolute paths (not yet to files).
fn path_refs(line: &str, from: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let parent = from[..from.len().saturating_sub(1)].to_vec();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", parent),
        ("self::", from.to_vec()),
    ] {
        let mut rest = line;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().next_back();
            let after = &rest[i + prefix.len()..];
            rest = after;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // `super::super::x` is read from its first `super::`
            }
            let path_of = |s: &str| -> Vec<String> {
                s.split("::")
                    .map(|p| {
                        p.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect::<String>()
                    })
                    .take_while(|p| !p.is_empty())
                    .collect()
            };
            let (head, group) = match after.find('{') {
                Some(j)
                    if after[..j]
                        .chars()
                        .all(|c| c.is_alphanumeric() || "_:".contains(c)) =>
                {
                    let end = after[j..].find('}').map_or(after.len(), |k| j + k);
                    (&after[..j], Some(&after[j + 1..end]))
                }
                _ => (after, None),
            };
            let mut base = base.clone();
            base.extend(path_of(head));
            match group {
                Some(g) => {
                    for item in g.split(',') {
                        let mut p = base.clone();
                        p.extend(path_of(item.trim()));
                        out.push(p);
                    }
                }
                None => out.push(base),
            }
        }
    }
    out
}

/// The strongly connected groups (more than one file) of the file-level import graph under
/// `src/DIR`: a file depends on the files whose modules it names (test modules and comments
/// aside; `use super::*` names the parent's file).
fn file_cycles(dir: &str) -> Vec<Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join(dir), &mut files);
    let rels: Vec<PathBuf> = files
        .iter()
        .map(|f| f.strip_prefix(&src).unwrap().to_path_buf())
        .collect();
    let paths: Vec<Vec<String>> = rels.iter().map(|r| module_path(r)).collect();
    let n = files.len();
    let mut reach = vec![vec![false; n]; n];
    for (a, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for p in path_refs(line, &paths[a]) {
                // The longest module of the directory the path starts with.
                let target = (0..n)
                    .filter(|&b| p.starts_with(&paths[b]))
                    .max_by_key(|&b| paths[b].len());
                if let Some(b) = target
                    && b != a
                {
                    reach[a][b] = true;
                }
            }
        }
    }
    // Warshall's transitive closure.
    for k in 0..n {
        let via = reach[k].clone();
        for row in reach.iter_mut() {
            if row[k] {
                for (r, &v) in row.iter_mut().zip(&via) {
                    *r |= v;
                }
            }
        }
    }
    let mut seen = vec![false; n];
    let mut groups = Vec::new();
    for i in 0..n {
        if seen[i] {
            continue;
        }
        let group: Vec<usize> = (0..n)
            .filter(|&j| j == i || (reach[i][j] && reach[j][i]))
            .collect();
        for &j in &group {
            seen[j] = true;
        }
        if group.len() > 1 {
            groups.push(
                group
                    .iter()
                    .map(|&j| rels[j].display().to_string())
                    .collect(),
            );
        }
    }
    groups
}

#[test]
fn numeric_files_import_each_other_without_cycles() {
    assert_eq!(file_cycles("numeric"), Vec::<Vec<String>>::new());
}

/// The kernels' files import one way, `ops/` included: `ops/vocab.rs` at the bottom (the ops,
/// operands, errors and sizes), the loops above it (`lanes`, `input`, `general`, `fused`,
/// `complex`, `dispatch`), the planning above those, and `ops/mod.rs` only re-exports.
#[test]
fn kernels_files_import_each_other_without_cycles() {
    assert_eq!(file_cycles("kernels"), Vec::<Vec<String>>::new());
}

#[test]
fn the_file_graph_sees_super_self_and_groups() {
    let from: Vec<String> = ["kernels", "ops", "plan"].map(String::from).to_vec();
    assert_eq!(
        path_refs("use super::*;", &from),
        [vec!["kernels".to_string(), "ops".to_string()]]
    );
    let ops: Vec<String> = ["kernels", "ops"].map(String::from).to_vec();
    assert_eq!(
        path_refs("use self::{complex::*, plan::x};", &ops),
        [
            ["kernels", "ops", "complex"].map(String::from).to_vec(),
            ["kernels", "ops", "plan", "x"].map(String::from).to_vec()
        ]
    );
    assert_eq!(
        path_refs("use crate::kernels::stream::{Store, map1};", &from),
        [
            ["kernels", "stream", "Store"].map(String::from).to_vec(),
            ["kernels", "stream", "map1"].map(String::from).to_vec()
        ]
    );
    assert!(!file_cycles("jobs").iter().any(|c| c.len() > 1));
}

/// The library is not the command line: only `main.rs` and `cli/` name clap (the library's
/// option enums have their clap mirrors in `cli/mod.rs`).
#[test]
fn only_the_binary_names_clap() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut named = Vec::new();
    let mut seen_in_cli = false;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        let uses = text.contains("clap::") || text.contains("use clap");
        if rel.starts_with("cli") || rel == Path::new("main.rs") {
            seen_in_cli |= uses;
        } else if uses {
            named.push(rel.display().to_string());
        }
    }
    assert!(seen_in_cli, "the scan must see the binary's use of clap");
    assert!(named.is_empty(), "library files name clap: {named:?}");
}

/// The library surface is one block: every stage module but `smt` is private, and
/// docs/architecture.md § "The library surface" names every item `lib.rs` re-exports (and
/// `lib.rs`'s own namespaces), so the map cannot fall behind the code.
#[test]
fn the_library_surface_is_the_documented_reexport_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').trim_end_matches(" {"))
        .collect();
    assert_eq!(public, ["smt", "render"], "lib.rs's public modules");
    let names = reexports(&lib);
    for n in [
        "DType",
        "DTYPES",
        "SafetyEngine",
        "CheckConfig",
        "ops",
        "GENERATED",
    ] {
        assert!(
            names.contains_key(n),
            "the parser must see `{n}`: {names:?}"
        );
    }
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let section = doc
        .split("\n## The library surface\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/architecture.md has a section `## The library surface`");
    let missing: Vec<&str> = names
        .keys()
        .map(String::as_str)
        .chain(public)
        .filter(|n| !section.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "lib.rs re-exports these, docs/architecture.md § The library surface does not name them: {missing:?}"
    );
}
