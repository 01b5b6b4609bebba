//! A repaired table ([`crate::design::repair::Repair`]): text and JSON.

use crate::design::repair::{Change, Optimality, Repair};
use crate::safety::Class;

fn cell(r: &Repair, c: Option<usize>) -> String {
    c.map_or_else(|| "raises".to_string(), |c| r.original.name(c).to_string())
}

/// What the table had: one result, or both where they differ.
fn was(r: &Repair, c: &Change) -> String {
    if c.from[0] == c.from[1] {
        cell(r, c.from[0])
    } else {
        format!("{} | {}", cell(r, c.from[0]), cell(r, c.from[1]))
    }
}

fn to(r: &Repair, c: &Change) -> String {
    c.to.map_or_else(|| "no join".to_string(), |j| r.table.name(j).to_string())
}

fn optimality(o: &Optimality) -> String {
    match o {
        Optimality::Proved { cores: 0 } => "minimal: every change is forced".into(),
        Optimality::Proved { cores } => {
            format!("proved minimal ({cores} cores, z3)")
        }
        Optimality::Optimiser(why) => {
            format!("minimal by z3's optimiser (not certified by cores: {why})")
        }
        Optimality::Exhaustive => "minimal: every partial order was tried".into(),
    }
}

/// The text rendering: a summary line, then one line per change (forced first).
pub fn text(r: &Repair) -> String {
    let n = r.original.n();
    let pairs = n * (n + 1) / 2;
    let what = if r.partial {
        "a partial lattice"
    } else {
        "a lattice"
    };
    let mut out = if r.changes.is_empty() {
        format!(
            "{} ({}): already {what}; nothing to change\n",
            r.name, r.path
        )
    } else {
        format!(
            "{} ({}): {} change{} make{} it {what} (cost {}); {}\n",
            r.name,
            r.path,
            r.changes.len(),
            if r.changes.len() == 1 { "" } else { "s" },
            if r.changes.len() == 1 { "s" } else { "" },
            r.cost,
            optimality(&r.optimality),
        )
    };
    let forced = r.changes.iter().filter(|c| c.forced.is_some()).count();
    if !r.changes.is_empty() {
        out += &format!(
            "  {} of {pairs} pairs (and dtypes with themselves) kept; {forced} change{} forced{}\n",
            pairs - r.changes.len(),
            if forced == 1 { "" } else { "s" },
            if r.lossy_cost > 1 {
                format!("; a change that loses values costs {}", r.lossy_cost)
            } else {
                String::new()
            }
        );
    }
    let mut ordered: Vec<&Change> = r.changes.iter().collect();
    ordered.sort_by_key(|c| c.forced.is_none());
    for c in ordered {
        let (a, b) = (r.original.name(c.a), r.original.name(c.b));
        out += &format!("  {a} ∨ {b}: {} → {}", was(r, c), to(r, c));
        let lossy: Vec<String> = c
            .safety
            .iter()
            .filter(|s| s.class != Class::Exact)
            .map(|s| {
                let w = s
                    .witness
                    .as_ref()
                    .map(|(v, b)| format!(": {v} becomes {b}"))
                    .unwrap_or_default();
                format!(
                    "{} → {} {}{w}",
                    r.original.name(s.from),
                    to(r, c),
                    s.class.key()
                )
            })
            .collect();
        if !lossy.is_empty() {
            out += &format!("  [{}]", lossy.join("; "));
        } else if c.to.is_some() && !c.safety.is_empty() {
            out += "  [exact]";
        }
        if let Some(why) = c.forced {
            out += &format!(
                "  (forced: {})",
                why.replace("a ∨ a", &format!("{a} ∨ {a}"))
            );
        }
        out.push('\n');
    }
    out
}

/// The JSON rendering: `{"name", "path", "partial", "cost", "optimality", "changes": [...],
/// "edges": [[a, b], ...]}` (docs/repair.md).
pub fn json(r: &Repair) -> String {
    let name = |i: usize| r.original.name(i).to_string();
    let changes: Vec<serde_json::Value> = r
        .changes
        .iter()
        .map(|c| {
            serde_json::json!({
                "a": name(c.a),
                "b": name(c.b),
                "from": c.from.map(|x| x.map(name)),
                "to": c.to.map(name),
                "forced": c.forced,
                "cost": c.cost,
                "safety": c.safety.iter().map(|s| serde_json::json!({
                    "from": name(s.from),
                    "class": s.class.key(),
                    "witness": s.witness.as_ref().map(|(v, b)| serde_json::json!({"value": v, "becomes": b})),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let (optimality, cores, why) = match &r.optimality {
        Optimality::Proved { cores } => ("proved", Some(*cores), None),
        Optimality::Optimiser(why) => ("optimiser", None, Some(why.clone())),
        Optimality::Exhaustive => ("exhaustive", None, None),
    };
    let v = serde_json::json!({
        "name": r.name,
        "path": r.path,
        "partial": r.partial,
        "lossy_cost": r.lossy_cost,
        "cost": r.cost,
        "optimality": optimality,
        "cores": cores,
        "not_certified_because": why,
        "rounds": r.rounds,
        "changes": changes,
        "edges": r.edges.iter().map(|&(a, b)| [name(a), name(b)]).collect::<Vec<_>>(),
    });
    let mut out = serde_json::to_string_pretty(&v).expect("JSON serialises");
    out.push('\n');
    out
}
