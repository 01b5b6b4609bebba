//! Where two policies or tables disagree ([`crate::design::diff::Diff`]): text, Markdown, JSON.

use std::collections::BTreeMap;

use crate::design::diff::{Change, Diff, Entry};

fn shown(r: &Option<String>) -> &str {
    r.as_deref().unwrap_or("undefined")
}

/// Marks an entry that differs in one operand order only (a table that is not commutative).
fn order_note(e: &Entry) -> &'static str {
    if e.ordered { " (this order only)" } else { "" }
}

fn counts_line(d: &Diff) -> String {
    let by = d.by_change();
    let get = |c| by.get(&c).copied().unwrap_or(0);
    format!(
        "{} changed, {} defined only in {}, {} defined only in {}",
        get(Change::Changed),
        get(Change::OnlyA),
        d.a.name,
        get(Change::OnlyB),
        d.b.name
    )
}

/// `530 of 630 joins differ over 35 common dtypes` (and the measured triples, if any).
fn headline(d: &Diff) -> String {
    let triples = if d.triples_compared > 0 {
        format!(
            ", {} of {} measured triples",
            d.triples.len(),
            d.triples_compared
        )
    } else {
        String::new()
    };
    format!(
        "{} of {} joins differ over {} common dtypes{triples}",
        d.entries.len(),
        d.compared,
        d.common.len()
    )
}

/// The differing triples, one line each (`a ∨ b ∨ c: A's → B's`).
fn triple_lines(d: &Diff) -> String {
    let mut out = String::new();
    if !d.triples.is_empty() {
        out += &format!("n-ary results ({} → {}):\n", d.a.name, d.b.name);
        for t in &d.triples {
            out += &format!(
                "  {}: {} → {}\n",
                t.operands.join(" ∨ "),
                shown(&t.left),
                shown(&t.right)
            );
        }
    }
    out
}

/// The plain-text rendering.
pub fn text(d: &Diff) -> String {
    let mut out = format!(
        "{} ({}) vs {} ({}): ",
        d.a.name, d.a.path, d.b.name, d.b.path
    );
    if d.same() {
        out += &format!("the same on all {} dtypes\n", d.common.len());
        return out;
    }
    out += &format!("{}\n", headline(d));
    if !d.only_in_a.is_empty() {
        out += &format!("only in {}: {}\n", d.a.name, d.only_in_a.join(", "));
    }
    if !d.only_in_b.is_empty() {
        out += &format!("only in {}: {}\n", d.b.name, d.only_in_b.join(", "));
    }
    if !d.entries.is_empty() {
        out += &format!("by change: {}\n", counts_line(d));
        let kinds: Vec<String> = d
            .by_kinds()
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        out += &format!("by kinds: {}\n", kinds.join(", "));
        out += &format!("joins ({} → {}):\n", d.a.name, d.b.name);
        for e in &d.entries {
            out += &format!(
                "  {} ∨ {}{}: {} → {}\n",
                e.a,
                e.b,
                order_note(e),
                shown(&e.left),
                shown(&e.right)
            );
        }
    }
    out += &triple_lines(d);
    for (name, edges) in [
        (&d.a.name, &d.edges_only_in_a),
        (&d.b.name, &d.edges_only_in_b),
    ] {
        if !edges.is_empty() {
            out += &format!("edges only in {name} ({}):\n", edges.len());
            for (x, y) in edges {
                out += &format!("  {x} → {y}\n");
            }
        }
    }
    out
}

/// The markdown rendering: a summary and a table of the disagreeing entries.
pub fn markdown(d: &Diff) -> String {
    let mut out = format!(
        "# `{}` vs `{}`\n\n`{}` vs `{}`: ",
        d.a.name, d.b.name, d.a.path, d.b.path
    );
    if d.same() {
        out += &format!("the same on all {} dtypes.\n", d.common.len());
        return out;
    }
    out += &format!("{} ({}).\n", headline(d), counts_line(d));
    let code = |v: &[String]| {
        v.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !d.only_in_a.is_empty() {
        out += &format!("\nOnly in `{}`: {}.\n", d.a.name, code(&d.only_in_a));
    }
    if !d.only_in_b.is_empty() {
        out += &format!("\nOnly in `{}`: {}.\n", d.b.name, code(&d.only_in_b));
    }
    if !d.entries.is_empty() {
        out += "\n| kinds | entries |\n|---|---:|\n";
        for (k, n) in d.by_kinds() {
            out += &format!("| {k} | {n} |\n");
        }
        out += &format!(
            "\n| join | `{}` | `{}` | change |\n|---|---|---|---|\n",
            d.a.name, d.b.name
        );
        for e in &d.entries {
            out += &format!(
                "| `{}` ∨ `{}`{} | {} | {} | {} |\n",
                e.a,
                e.b,
                order_note(e),
                shown(&e.left),
                shown(&e.right),
                e.change.key()
            );
        }
    }
    if !d.triples.is_empty() {
        out += &format!(
            "\n| operands | `{}` | `{}` |\n|---|---|---|\n",
            d.a.name, d.b.name
        );
        for t in &d.triples {
            out += &format!(
                "| {} | {} | {} |\n",
                t.operands
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(" ∨ "),
                shown(&t.left),
                shown(&t.right)
            );
        }
    }
    for (name, edges) in [
        (&d.a.name, &d.edges_only_in_a),
        (&d.b.name, &d.edges_only_in_b),
    ] {
        if !edges.is_empty() {
            out += &format!("\nEdges only in `{name}`: ");
            out += &edges
                .iter()
                .map(|(x, y)| format!("`{x}` → `{y}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out += ".\n";
        }
    }
    out
}

/// The JSON rendering.
pub fn json(d: &Diff) -> String {
    let by_change: BTreeMap<&str, usize> = d
        .by_change()
        .into_iter()
        .map(|(c, n)| (c.key(), n))
        .collect();
    let mut v = serde_json::json!({
        "a": d.a,
        "b": d.b,
        "same": d.same(),
        "common": d.common,
        "only_in_a": d.only_in_a,
        "only_in_b": d.only_in_b,
        "compared": d.compared,
        "counts": { "by_change": by_change, "by_kinds": d.by_kinds() },
        "entries": d.entries,
        "edges": { "only_in_a": d.edges_only_in_a, "only_in_b": d.edges_only_in_b },
    });
    if d.triples_compared > 0 {
        v["triples"] = serde_json::json!({ "compared": d.triples_compared, "differ": d.triples });
    }
    let mut s = serde_json::to_string_pretty(&v).expect("JSON serialises");
    s.push('\n');
    s
}
