//! The join table as text (the short-code grid), Markdown and CSV. Its JSON is the observed
//! table format, written beside its parser (`Table::to_json`).

use crate::numeric::dtype;
use crate::policy::table::Table;

/// The short-code grid of the JAX design notes: row = first operand, `-` = undefined.
pub fn text(t: &Table) -> String {
    let codes: Vec<String> = t.names.iter().map(|n| dtype::short_code(n)).collect();
    let w = codes.iter().map(|c| c.len()).max().unwrap_or(1).max(1);
    let mut out = format!("{:w$}", "");
    for c in &codes {
        out += &format!(" {c:>w$}");
    }
    out.push('\n');
    for a in 0..t.n() {
        out += &format!("{:w$}", codes[a]);
        for b in 0..t.n() {
            let cell = t.get(a, b).map_or("-", |r| codes[r].as_str());
            out += &format!(" {cell:>w$}");
        }
        out.push('\n');
    }
    out
}

/// A Markdown table, `—` for an undefined join.
pub fn markdown(t: &Table) -> String {
    let esc = |s: &str| s.replace('*', "\\*");
    let mut out = String::from("| ∨ |");
    for n in &t.names {
        out += &format!(" {} |", esc(n));
    }
    out += "\n|---|";
    out += &"---|".repeat(t.n());
    out.push('\n');
    for a in 0..t.n() {
        out += &format!("| **{}** |", esc(&t.names[a]));
        for b in 0..t.n() {
            let cell = t.get(a, b).map_or("—".to_string(), |r| esc(&t.names[r]));
            out += &format!(" {cell} |");
        }
        out.push('\n');
    }
    out
}

/// CSV: a header row of names, a row per first operand, an empty cell when undefined.
pub fn csv(t: &Table) -> String {
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("join");
    for n in &t.names {
        out += &format!(",{}", q(n));
    }
    out.push('\n');
    for a in 0..t.n() {
        out += &q(&t.names[a]);
        for b in 0..t.n() {
            out.push(',');
            if let Some(r) = t.get(a, b) {
                out += &q(&t.names[r]);
            }
        }
        out.push('\n');
    }
    out
}
