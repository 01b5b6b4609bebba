//! CI gate formats of `check`: GitHub workflow commands and SARIF 2.1.0.
//!
//! Both are renderings of one list of [`Annotation`]s, each a finding placed on a line of the
//! file that causes it:
//! - a violated law of a **policy** points at an edge: for an ambiguous join, the edge into the
//!   second minimal upper bound (the first is a related location); for a missing join, the
//!   declaration of the first dtype;
//! - a violated law of an **observed table** points at the table entry `result[a][b]` of the
//!   witness's first pair; the other entries its equation reads are related locations;
//! - a lint (a lossy promotion class) points at the edge that performs the conversion, or for a
//!   join at the first edge out of the source on a path to the result;
//! - a file that cannot be read points where the parser stopped.
//!
//! The output is deterministic: files in the order given, findings in law order, no timestamps.

use std::ops::Range;

use serde_json::{Value, json};

use crate::check::Checked;
use crate::laws::{Law, Violation};
use crate::policy::diag::{Diagnostic, Source};
use crate::policy::spec::Level;
use crate::{Input, Policy};

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn key(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A 1-based position and the width (in characters) of what it marks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub col: usize,
    pub width: usize,
}

/// One finding, placed on a line.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub path: String,
    /// `None` for a problem with the whole file (it could not be opened).
    pub at: Option<Position>,
    pub severity: Severity,
    /// A [`Rule`] id: a law key, `lint/<class>`, or `input`.
    pub rule: String,
    pub message: String,
    /// Other places the finding reads, each with what is there.
    pub related: Vec<(Position, String)>,
    /// Structured facts (dtypes, both sides, witness values) for SARIF's `properties`.
    pub properties: Value,
}

/// A rule of the SARIF run: every law, every lint class, and unreadable input.
pub struct Rule {
    pub id: String,
    pub name: &'static str,
    pub description: &'static str,
    pub severity: Severity,
}

/// Every rule `check` can report, in a fixed order (SARIF `ruleIndex` refers to it).
pub fn rules() -> Vec<Rule> {
    let mut rules: Vec<Rule> = Law::ALL
        .iter()
        .map(|&law| Rule {
            id: law.key().to_string(),
            name: law_name(law),
            description: law_description(law),
            severity: Severity::Error,
        })
        .collect();
    for (class, name, description) in [
        (
            "precision-loss",
            "PrecisionLoss",
            "An implicit promotion rounds some values of its source (e.g. int64 → float64).",
        ),
        (
            "overflow",
            "Overflow",
            "An implicit promotion cannot represent some values of its source: they wrap, saturate or become infinite.",
        ),
        (
            "sign-loss",
            "SignLoss",
            "An implicit promotion turns negative values of its source into unsigned ones.",
        ),
        (
            "drops-component",
            "DropsComponent",
            "An implicit promotion drops the imaginary part of a complex source.",
        ),
    ] {
        rules.push(Rule {
            id: format!("lint/{class}"),
            name,
            description,
            severity: Severity::Warning,
        });
    }
    rules.push(Rule {
        id: "input".into(),
        name: "UnreadableInput",
        description: "A policy or table file could not be read: a syntax error, an unknown dtype, a cycle, a malformed table.",
        severity: Severity::Error,
    });
    rules.push(Rule {
        id: "nary".into(),
        name: "NaryResult",
        description: "The order's n-ary join is not the policy's category rule, or a measured triple is not what the table's pairs give.",
        severity: Severity::Error,
    });
    rules
}

fn law_name(law: Law) -> &'static str {
    match law {
        Law::Acyclic => "Acyclic",
        Law::Uniqueness => "UniqueJoins",
        Law::Existence => "JoinsExist",
        Law::Commutativity => "Commutative",
        Law::Idempotence => "Idempotent",
        Law::Associativity => "Associative",
        Law::DefinednessAssociativity => "DefinednessAssociative",
        Law::NaryFold => "NaryFoldOrderFree",
        Law::InducedOrder => "JoinOfInducedOrder",
    }
}

fn law_description(law: Law) -> &'static str {
    match law {
        Law::Acyclic => "The promotion graph has no cycle.",
        Law::Uniqueness => {
            "Every pair of dtypes has at most one minimal common upper bound (no ambiguous join)."
        }
        Law::Existence => {
            "Every pair of dtypes has a join, unless the policy declares `partial = true`."
        }
        Law::Commutativity => "a ∨ b = b ∨ a for every pair.",
        Law::Idempotence => "a ∨ a = a for every dtype.",
        Law::Associativity => "(a ∨ b) ∨ c = a ∨ (b ∨ c) wherever both sides are defined.",
        Law::DefinednessAssociativity => "(a ∨ b) ∨ c is defined exactly when a ∨ (b ∨ c) is.",
        Law::NaryFold => "result_type of several operands does not depend on their order.",
        Law::InducedOrder => {
            "The table is the join of the order it induces (a ≤ b exactly when a ∨ b = b)."
        }
    }
}

fn position(src: &Source, span: Range<usize>) -> Position {
    let d = src.error(span, "");
    Position {
        line: d.line,
        col: d.col,
        width: d.width,
    }
}

/// The findings of one checked file: its violated laws (at most `witnesses` per law) and its
/// lints. `text` is the file's contents, for line numbers.
pub fn annotations(
    input: &Input,
    text: &str,
    checked: &Checked,
    witnesses: usize,
) -> Vec<Annotation> {
    let src = Source::new(input.path(), text);
    let mut out = Vec::new();
    for law in checked.violated() {
        for v in law.witnesses.iter().take(witnesses) {
            let (primary, related) = locate(input, v);
            let message = if law.count > 1 {
                let more = if law.exact { "" } else { "at least " };
                format!(
                    "{} ({more}{} instances of `{}` are violated)",
                    v.detail,
                    law.count,
                    law.law.key()
                )
            } else {
                v.detail.clone()
            };
            out.push(Annotation {
                path: input.path().to_string(),
                at: Some(position(&src, primary)),
                severity: Severity::Error,
                rule: law.law.key().to_string(),
                message,
                related: related
                    .into_iter()
                    .map(|(span, what)| (position(&src, span), what))
                    .collect(),
                properties: json!({
                    "dtypes": v.dtypes, "left": v.left, "right": v.right,
                }),
            });
        }
    }
    if let Input::Policy {
        policy, lattice, ..
    } = input
    {
        for lint in &checked.lints {
            let severity = match lint.level {
                Level::Deny => Severity::Error,
                Level::Warn | Level::Allow => Severity::Warning,
            };
            for c in lint.conversions.iter().take(witnesses) {
                let (Some(from), Some(to)) = (
                    policy.dtypes.iter().position(|d| *d == c.from),
                    policy.dtypes.iter().position(|d| *d == c.to),
                ) else {
                    continue;
                };
                let span = conversion_edge(policy, lattice, from, to)
                    .unwrap_or_else(|| policy.dtype_spans[from].clone());
                let shown = match &c.witness {
                    Some(w) => format!(": {} becomes {}", w.value, w.becomes),
                    None => String::new(),
                };
                let via = if c.via == "edge" {
                    "the promotion"
                } else {
                    "the join promotion"
                };
                let class = lint.class.key();
                // Say what the level is and how to change it (a class not listed is `warn`).
                let level = if lint.level == Level::Deny {
                    format!("denied by `[lints] {class} = \"deny\"`")
                } else {
                    format!("`[lints] {class} = \"deny\"` makes it an error, \"allow\" silences it")
                };
                out.push(Annotation {
                    path: input.path().to_string(),
                    at: Some(position(&src, span)),
                    severity,
                    rule: format!("lint/{}", lint.class.key()),
                    message: format!(
                        "{class} in {via} {} → {}{shown} ({} such promotions; {level})",
                        c.from, c.to, lint.count,
                    ),
                    related: Vec::new(),
                    properties: json!({
                        "from": c.from, "to": c.to, "via": c.via, "class": c.class.key(),
                        "witness": c.witness, "decided_by": c.decided_by.key(),
                    }),
                });
            }
        }
    }
    if let Some(n) = checked.nary.as_ref().filter(|n| !n.holds()) {
        for w in n.witnesses.iter().take(witnesses) {
            let span = match input {
                Input::Policy { policy, .. } => {
                    policy.categories.as_ref().map_or(0..0, |c| c.span.clone())
                }
                Input::Observed(o) => triple_span(o, &w.operands),
            };
            let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "an error".into());
            out.push(Annotation {
                path: input.path().to_string(),
                at: Some(position(&src, span)),
                severity: Severity::Error,
                rule: "nary".into(),
                message: format!(
                    "{{{}}}: {} gives {}, the order's join {} ({} of {} differ)",
                    w.operands.join(", "),
                    n.what(),
                    show(&w.rule),
                    show(&w.order),
                    n.mismatches,
                    n.multisets
                ),
                related: Vec::new(),
                properties: json!({
                    "operands": w.operands, "rule": w.rule, "order": w.order, "node": w.node,
                }),
            });
        }
    }
    if let (Some(r), Input::Observed(o)) = (checked.rule.as_ref().filter(|r| !r.holds()), input) {
        for w in r.witnesses.iter().take(witnesses) {
            let span = triple_span(o, &w.operands);
            let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "an error".into());
            out.push(Annotation {
                path: input.path().to_string(),
                at: Some(position(&src, span)),
                severity: Severity::Error,
                rule: "nary-rule".into(),
                message: format!(
                    "{{{}}}: the `{}` n-ary rule gives {}, measured {} ({} of {} differ)",
                    w.operands.join(", "),
                    r.rule,
                    show(&w.rule),
                    show(&w.order),
                    r.mismatches,
                    r.multisets
                ),
                related: Vec::new(),
                properties: json!({
                    "operands": w.operands, "rule": w.rule, "measured": w.order,
                }),
            });
        }
    }
    out
}

/// Where a measured triple of `operands` (names) is written in a table's file.
fn triple_span(o: &crate::Observed, operands: &[String]) -> std::ops::Range<usize> {
    o.triples
        .iter()
        .find(|t| {
            t.operands
                .iter()
                .map(|&i| o.table.name(i))
                .eq(operands.iter().map(String::as_str))
        })
        .map_or(0..0, |t| t.span.clone())
}

/// The finding of a file that could not be read.
pub fn input_error(d: &Diagnostic) -> Annotation {
    let message = match &d.help {
        Some(h) => format!("{} (help: {h})", d.message),
        None => d.message.clone(),
    };
    Annotation {
        path: d.path.clone(),
        at: (d.line > 0).then_some(Position {
            line: d.line,
            col: d.col,
            width: d.width,
        }),
        severity: Severity::Error,
        rule: "input".into(),
        message,
        related: Vec::new(),
        properties: json!({}),
    }
}

/// The edge that performs `from → to`: the declared edge itself, else the first edge out of
/// `from` whose target lies below `to`.
fn conversion_edge(
    policy: &Policy,
    lattice: &crate::Lattice,
    from: usize,
    to: usize,
) -> Option<Range<usize>> {
    policy
        .edges
        .iter()
        .find(|e| e.from == from && e.to == to)
        .or_else(|| {
            policy
                .edges
                .iter()
                .find(|e| e.from == from && lattice.leq(e.to, to))
        })
        .map(|e| e.span.clone())
}

/// The primary span of a violation and the related spans with what each shows.
fn locate(input: &Input, v: &Violation) -> (Range<usize>, Vec<(Range<usize>, String)>) {
    match input {
        Input::Observed(o) => {
            let t = &o.table;
            let idx: Vec<usize> = v.dtypes.iter().filter_map(|d| t.index_of(d)).collect();
            let cell = |a: usize, b: usize| {
                let shown = t.get(a, b).map_or("undefined", |r| t.name(r));
                (
                    o.cell_span(a, b),
                    format!("{} ∨ {} = {shown}", t.name(a), t.name(b)),
                )
            };
            // The entries the broken equation reads, in the order it reads them.
            let mut cells: Vec<(usize, usize)> = match (v.law, idx.as_slice()) {
                (_, [a]) => vec![(*a, *a)],
                (Law::Commutativity, [a, b]) => vec![(*a, *b), (*b, *a)],
                (_, [a, b]) => vec![(*a, *b)],
                (_, [a, b, c]) => {
                    let mut cells = vec![(*a, *b)];
                    if let Some(ab) = t.get(*a, *b) {
                        cells.push((ab, *c));
                    }
                    cells.push((*b, *c));
                    if let Some(bc) = t.get(*b, *c) {
                        cells.push((*a, bc));
                    }
                    cells
                }
                _ => Vec::new(),
            };
            cells.dedup();
            let Some(&(a, b)) = cells.first() else {
                return (0..1, Vec::new());
            };
            let related = cells[1..].iter().map(|&(x, y)| cell(x, y)).collect();
            (o.cell_span(a, b), related)
        }
        Input::Policy {
            policy,
            lattice,
            joins,
        } => {
            let idx: Vec<usize> = v
                .dtypes
                .iter()
                .filter_map(|d| policy.dtypes.iter().position(|x| x == d))
                .collect();
            // An ambiguous pair among the witness's dtypes is what breaks every law a policy
            // can break besides existence: point at the edges into its minimal upper bounds.
            let pairs = idx
                .iter()
                .enumerate()
                .flat_map(|(i, &a)| idx[i + 1..].iter().map(move |&b| (a.min(b), a.max(b))));
            for (a, b) in pairs {
                if let Some(bounds) = joins.ambiguous.candidates(a, b) {
                    let into = |u: usize| {
                        policy
                            .edges
                            .iter()
                            .find(|e| {
                                e.to == u && (lattice.leq(a, e.from) || lattice.leq(b, e.from))
                            })
                            .map(|e| e.span.clone())
                    };
                    let mut spans: Vec<(Range<usize>, String)> = bounds
                        .iter()
                        .filter_map(|&u| {
                            into(u).map(|s| {
                                (
                                    s,
                                    format!(
                                        "{} is a minimal upper bound of {} and {}",
                                        policy.dtypes[u], policy.dtypes[a], policy.dtypes[b]
                                    ),
                                )
                            })
                        })
                        .collect();
                    if let Some(last) = spans.pop() {
                        return (last.0, spans);
                    }
                }
            }
            let first = idx.first().copied().unwrap_or(0);
            let related = idx
                .iter()
                .skip(1)
                .map(|&d| {
                    (
                        policy.dtype_spans[d].clone(),
                        format!("{} is declared here", policy.dtypes[d]),
                    )
                })
                .collect();
            (policy.dtype_spans[first].clone(), related)
        }
    }
}

/// Escapes the data of a workflow command.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions workflow commands, one line per finding:
/// `::error file=F,line=L,col=C,endColumn=E,title=T::message`.
pub fn github(annotations: &[Annotation]) -> String {
    let mut out = String::new();
    for a in annotations {
        let mut props = vec![format!("file={}", escape_property(&a.path))];
        if let Some(p) = &a.at {
            props.push(format!("line={}", p.line));
            props.push(format!("col={}", p.col));
            props.push(format!("endColumn={}", p.col + p.width));
        }
        props.push(format!(
            "title={}",
            escape_property(&format!("typejoin: {}", a.rule))
        ));
        out += &format!(
            "::{} {}::{}\n",
            a.severity.key(),
            props.join(","),
            escape_data(&a.message)
        );
    }
    out
}

fn region(p: &Position) -> Value {
    json!({ "startLine": p.line, "startColumn": p.col, "endColumn": p.col + p.width })
}

/// A SARIF 2.1.0 log of one run: every rule, then the findings with physical locations.
pub fn sarif(annotations: &[Annotation]) -> String {
    let rules = rules();
    let rule_values: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.name,
                "shortDescription": { "text": r.description },
                "defaultConfiguration": { "level": r.severity.key() },
            })
        })
        .collect();
    let results: Vec<Value> = annotations
        .iter()
        .map(|a| {
            let index = rules.iter().position(|r| r.id == a.rule);
            let mut physical = json!({ "artifactLocation": { "uri": uri(&a.path) } });
            if let Some(p) = &a.at {
                physical["region"] = region(p);
            }
            let mut result = json!({
                "ruleId": a.rule,
                "level": a.severity.key(),
                "message": { "text": a.message },
                "locations": [{ "physicalLocation": physical }],
            });
            if let Some(i) = index {
                result["ruleIndex"] = json!(i);
            }
            if !a.related.is_empty() {
                result["relatedLocations"] = a
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, (p, what))| {
                        json!({
                            "id": i + 1,
                            "physicalLocation": {
                                "artifactLocation": { "uri": uri(&a.path) },
                                "region": region(p),
                            },
                            "message": { "text": what },
                        })
                    })
                    .collect();
            }
            if a.properties.as_object().is_some_and(|o| !o.is_empty()) {
                result["properties"] = a.properties.clone();
            }
            result
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "typejoin",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rule_values,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).expect("JSON serialises");
    s.push('\n');
    s
}

/// A relative path as a URI reference: forward slashes, spaces and `%` escaped.
fn uri(path: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path).replace('\\', "/");
    let mut out = String::new();
    for c in path.chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '.' | '_' | '~' | '/' => out.push(c),
            _ => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out += &format!("%{b:02X}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("x:y,z"), "x%3Ay%2Cz");
        assert_eq!(uri("./a b/c*.json"), "a%20b/c%2A.json");
    }
}
