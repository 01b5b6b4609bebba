//! Renderings of law reports: human (optionally coloured) and JSON (the `check --format json`
//! contract of docs/contracts.md).

use serde_json::{Value, json};

use crate::check::Checked;
use crate::laws::Status;

/// What to print, not how: shared by every output format.
#[derive(Clone, Copy, Debug)]
pub struct ReportOptions {
    /// Witnesses shown per violated law (`usize::MAX` for all).
    pub witnesses: usize,
    /// Print every law's status, not only the violated ones.
    pub verbose: bool,
    pub color: bool,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            witnesses: 3,
            verbose: false,
            color: false,
        }
    }
}

struct Style {
    ok: &'static str,
    bad: &'static str,
    dim: &'static str,
    bold: &'static str,
    reset: &'static str,
}

impl Style {
    fn new(color: bool) -> Style {
        if color {
            Style {
                ok: "\x1b[1;32m",
                bad: "\x1b[1;31m",
                dim: "\x1b[2m",
                bold: "\x1b[1m",
                reset: "\x1b[0m",
            }
        } else {
            Style {
                ok: "",
                bad: "",
                dim: "",
                bold: "",
                reset: "",
            }
        }
    }
}

/// The headline of a violated law: how many instances, in the law's own words.
fn headline(l: &crate::laws::LawResult) -> String {
    use crate::Law::*;
    let n = l.count;
    let plural = |n: u64, word: &str| {
        if l.exact {
            plural(n, word)
        } else {
            format!("at least {}", plural(n, word))
        }
    };
    match l.law {
        Acyclic => "the promotion graph has a cycle".into(),
        Uniqueness => format!("{} with no unique least upper bound", plural(n, "pair")),
        Existence => format!("{} without a join", plural(n, "pair")),
        Commutativity => format!("{} where a ∨ b ≠ b ∨ a", plural(n, "pair")),
        Idempotence => format!("{} where a ∨ a ≠ a", plural(n, "dtype")),
        Associativity => format!("{} where (a ∨ b) ∨ c ≠ a ∨ (b ∨ c)", plural(n, "triple")),
        DefinednessAssociativity => format!(
            "{} where only one association order is defined",
            plural(n, "triple")
        ),
        NaryFold => format!(
            "{} whose result_type depends on the operand order",
            plural(n, "operand set")
        ),
        InducedOrder => format!(
            "the table is not the join of the order it induces (a ≤ b ⇔ a ∨ b = b): {}",
            l.note
        ),
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The human report of one file.
pub fn human(c: &Checked, o: ReportOptions) -> String {
    let r = &c.report;
    let s = Style::new(o.color);
    let kind = match r.kind {
        crate::laws::InputKind::Lattice => "lattice",
        crate::laws::InputKind::Table => "table",
    };
    let shape = match r.edges {
        Some(e) => format!("{} dtypes, {} edges", r.dtypes, e),
        None => format!("{} dtypes", r.dtypes),
    };
    let partial = r
        .laws
        .iter()
        .find(|l| l.status == Status::Partial)
        .map(|l| format!("; partial: {}", l.note))
        .unwrap_or_default();
    let violated: Vec<_> = r.violated().collect();
    let denied = c
        .lints
        .iter()
        .filter(|l| l.level == crate::policy::spec::Level::Deny)
        .count();
    let engines = format!(" [{}]", r.engines.join(" + "));
    let unknown: Vec<_> = r
        .laws
        .iter()
        .filter(|l| l.status == Status::Unknown)
        .collect();
    let (mark, colour, verdict) = if !violated.is_empty() {
        (
            "✗",
            s.bad,
            format!("{} violated", plural(violated.len() as u64, "law")),
        )
    } else if !unknown.is_empty() {
        (
            "?",
            s.bad,
            format!("{} undecided", plural(unknown.len() as u64, "law")),
        )
    } else if denied > 0 {
        (
            "✗",
            s.bad,
            format!("all laws hold, {} denied", plural(denied as u64, "lint")),
        )
    } else if let Some(r) = c.rule.as_ref().filter(|r| !r.holds()) {
        (
            "✗",
            s.bad,
            format!(
                "all laws hold, its `{}` n-ary rule differs from {} of {} measured triples",
                r.rule, r.mismatches, r.multisets
            ),
        )
    } else if let Some(n) = c.nary.as_ref().filter(|n| !n.holds()) {
        (
            "✗",
            s.bad,
            if n.measured() {
                format!(
                    "all laws hold, {} of {} measured triples differ",
                    n.mismatches, n.multisets
                )
            } else {
                format!("all laws hold, the n-ary join is not {}", n.what())
            },
        )
    } else {
        ("✓", s.ok, "all laws hold".to_string())
    };
    let nary = match &c.nary {
        Some(n) if n.holds() && n.measured() => {
            format!("; its pairs give all {} measured triples", n.multisets)
        }
        Some(n) if n.holds() => format!(
            "; n-ary join = {} on all {} of up to {} operands",
            n.what(),
            plural(n.multisets, "multiset"),
            n.max_operands
        ),
        _ => String::new(),
    };
    let nary = match &c.rule {
        Some(r) if r.holds() => format!(
            "{nary}; its `{}` n-ary rule gives all {} measured triples",
            r.rule, r.multisets
        ),
        _ => nary,
    };
    let mut out = format!(
        "{colour}{mark}{} {}{}{} — {kind} `{}`: {shape}; {verdict}{partial}{nary}{}{engines}{}\n",
        s.reset, s.bold, r.path, s.reset, r.name, s.dim, s.reset
    );
    for l in &unknown {
        out += &format!(
            "  {}unknown[{}]{}: {}\n",
            s.bad,
            l.law.key(),
            s.reset,
            l.note
        );
    }
    if o.verbose {
        for l in &r.laws {
            let (mark, word) = match l.status {
                Status::Holds => (s.ok, "holds"),
                Status::Proved => (s.ok, "proved"),
                Status::Partial => (s.dim, "partial"),
                Status::Violated => (s.bad, "violated"),
                Status::Unknown => (s.bad, "unknown"),
            };
            let note = if l.status == Status::Violated {
                headline(l)
            } else {
                l.note.clone()
            };
            out += &format!(
                "    {:<24} {mark}{word:<8}{} {}{note}{}\n",
                l.law.title(),
                s.reset,
                s.dim,
                s.reset
            );
        }
    }
    for l in violated {
        out += &format!(
            "  {}error[{}]{}: {}\n",
            s.bad,
            l.law.key(),
            s.reset,
            headline(l)
        );
        for w in l.witnesses.iter().take(o.witnesses) {
            out += &format!("      {}\n", w.detail);
        }
        let shown = l.witnesses.len().min(o.witnesses) as u64;
        if l.count > shown {
            out += &format!(
                "      {}… and {} more (--all-witnesses lists every one){}\n",
                s.dim,
                l.count - shown,
                s.reset
            );
        }
        if !l.note.is_empty() && l.law != crate::Law::InducedOrder {
            out += &format!("      {}help{}: {}\n", s.bold, s.reset, l.note);
        }
    }
    if let Some(n) = c.nary.as_ref().filter(|n| !n.holds()) {
        let measured = n.measured();
        out += &format!(
            "  {}error[nary]{}: {}\n",
            s.bad,
            s.reset,
            if measured {
                format!(
                    "{} of {} measured triples differ from the fold of the table's pairs",
                    n.mismatches, n.multisets
                )
            } else {
                format!(
                    "on {} of {} of up to {} operands the order's join is not {}",
                    n.mismatches,
                    plural(n.multisets, "multiset"),
                    n.max_operands,
                    n.what()
                )
            }
        );
        for w in n.witnesses.iter().take(o.witnesses) {
            let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "an error".into());
            out += &format!(
                "      {{{}}}: {} {}, {} {}{}\n",
                w.operands.join(", "),
                if measured {
                    "measured"
                } else {
                    "the rule gives"
                },
                show(&w.rule),
                if measured {
                    "the pairs give"
                } else {
                    "the order's join is"
                },
                show(&w.order),
                match (&w.node, &w.order) {
                    (Some(node), Some(m)) if node != m => format!(" (node {node})"),
                    _ => String::new(),
                }
            );
        }
        let shown = n.witnesses.len().min(o.witnesses) as u64;
        if n.mismatches > shown {
            out += &format!(
                "      {}… and {} more{}\n",
                s.dim,
                n.mismatches - shown,
                s.reset
            );
        }
    }
    if let Some(r) = c.rule.as_ref().filter(|r| !r.holds()) {
        out += &format!(
            "  {}error[nary-rule]{}: the `{}` n-ary rule differs from {} of {} measured triples\n",
            s.bad, s.reset, r.rule, r.mismatches, r.multisets
        );
        for w in r.witnesses.iter().take(o.witnesses) {
            let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "an error".into());
            out += &format!(
                "      {{{}}}: the rule gives {}, measured {}\n",
                w.operands.join(", "),
                show(&w.rule),
                show(&w.order)
            );
        }
    }
    for l in &c.lints {
        let (mark, word) = match l.level {
            crate::policy::spec::Level::Deny => (s.bad, "error"),
            _ => ("\x1b[1;33m", "warning"),
        };
        let mark = if o.color { mark } else { "" };
        let n = l.count as u64;
        out += &format!(
            "  {mark}{word}[{}]{}: {} {}",
            l.class.key(),
            s.reset,
            plural(n, "promotion"),
            match l.class {
                crate::safety::Class::PrecisionLoss => "lose precision",
                crate::safety::Class::Overflow => "overflow",
                crate::safety::Class::SignLoss => "lose the sign",
                _ => "drop a component",
            }
        );
        let shown: Vec<String> = l
            .conversions
            .iter()
            .take(if o.verbose { usize::MAX } else { 1 })
            .map(|c| {
                let w = c.witness.as_ref().map_or(String::new(), |w| {
                    format!(": {} becomes {}", w.value, w.becomes)
                });
                format!("{} → {} ({}){w}", c.from, c.to, c.via)
            })
            .collect();
        if o.verbose {
            out.push('\n');
            for line in shown {
                out += &format!("      {line}\n");
            }
        } else {
            out += &format!(
                ", e.g. {} (`typejoin safety` lists them; set the level under [lints])\n",
                shown.join("")
            );
        }
    }
    out
}

/// The `check --format json` document: one entry per checked file, then one per file that
/// could not be read or parsed (`ok: false`, its error, no violations).
pub fn json_doc(
    checked: &[Checked],
    failed: &[crate::policy::diag::LoadError],
    o: ReportOptions,
) -> String {
    let mut files: Vec<Value> = checked.iter().map(|c| json_file(c, o)).collect();
    for e in failed {
        let path = e.diagnostics.first().map_or("", |d| d.path.as_str());
        files.push(json!({
            "path": path, "ok": false, "error": e.to_string(),
            "violations": [],
        }));
    }
    let mut out =
        serde_json::to_string_pretty(&json!({ "files": files })).expect("JSON serialises");
    out.push('\n');
    out
}

/// One file's entry of the `check --format json` document.
pub fn json_file(c: &Checked, o: ReportOptions) -> Value {
    let r = &c.report;
    let violations: Vec<Value> = r
        .violated()
        .flat_map(|l| l.witnesses.iter().take(o.witnesses))
        .map(|w| {
            json!({
                "law": w.law.key(),
                "dtypes": w.dtypes,
                "left": w.left,
                "right": w.right,
                "detail": w.detail,
            })
        })
        .collect();
    let laws: Vec<Value> = r
        .laws
        .iter()
        .map(|l| {
            json!({
                "law": l.law.key(),
                "status": l.status,
                "count": l.count,
                "exact": l.exact,
                "note": l.note,
            })
        })
        .collect();
    let mut doc = json!({
        "path": r.path,
        "name": r.name,
        "kind": r.kind,
        "ok": c.ok(),
        "dtypes": r.dtypes,
        "undefined_pairs": r.undefined_pairs,
        "engines": r.engines,
        "laws": laws,
        "violations": violations,
        "lints": c.lints.iter().map(|l| json!({
            "class": l.class.key(),
            "level": l.level,
            "count": l.count,
            "conversions": l.conversions.iter().take(o.witnesses).map(|c| json!({
                "from": c.from, "to": c.to, "via": c.via, "witness": c.witness,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    if let Some(n) = &c.nary {
        doc["nary"] = json!(n);
    }
    if let Some(r) = &c.rule {
        doc["nary_rule"] = json!(r);
    }
    doc
}

/// The whole `check --format json` document.
pub fn json(reports: &[Checked], o: ReportOptions) -> String {
    let files: Vec<Value> = reports.iter().map(|r| json_file(r, o)).collect();
    let mut s = serde_json::to_string_pretty(&json!({ "files": files })).expect("JSON serialises");
    s.push('\n');
    s
}
