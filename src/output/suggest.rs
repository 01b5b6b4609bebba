//! Where a new dtype can go ([`crate::design::suggest::Suggestion`]): text and JSON.

use crate::design::suggest::{Safety, Suggestion};
use crate::safety::Class;

/// The JSON rendering: `{"dtype", "placements": [{"below", "above", "score", …}]}`, best first.
pub fn json(s: &Suggestion) -> String {
    let placements: Vec<serde_json::Value> = s
        .placements
        .iter()
        .map(|p| {
            let joins: serde_json::Map<String, serde_json::Value> = p
                .joins
                .iter()
                .map(|(y, r)| (y.clone(), serde_json::json!(r)))
                .collect();
            serde_json::json!({
                "below": p.below,
                "above": p.above,
                "score": p.score,
                "current": p.current,
                "changes": p.changes,
                "joins": joins,
                "safety": p.safety,
            })
        })
        .collect();
    let v = serde_json::json!({
        "dtype": s.dtype,
        "policy": s.policy,
        "path": s.path,
        "replaced": s.replaced.as_ref().map(|(b, a)| serde_json::json!({"below": b, "above": a})),
        "max_degree": s.max_degree,
        "searched": s.searched,
        "valid": s.valid,
        "placements": placements,
    });
    let mut out = serde_json::to_string_pretty(&v).expect("JSON serialises");
    out.push('\n');
    out
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(", ")
    }
}

/// The text rendering.
pub fn text(s: &Suggestion) -> String {
    let mut out = format!(
        "{} in {} ({}): {} of {} placements keep every law (at most {} dtypes below and {} above)\n",
        s.dtype, s.policy, s.path, s.valid, s.searched, s.max_degree, s.max_degree
    );
    if let Some(c) = &s.categories {
        out += &format!(
            "placed among the written dtypes; each placement shown is re-derived with {} and keeps every law and the category rule ({} dropped as breaking them)\n",
            if c.variants.is_empty() {
                "its category variants".to_string()
            } else {
                list(&c.variants)
            },
            c.dropped
        );
    }
    if let Some((b, a)) = &s.replaced {
        out += &format!(
            "{} is already in {}, above {} and below {}: placed as if removed\n",
            s.dtype,
            s.policy,
            list(b),
            list(a)
        );
    }
    for (i, p) in s.placements.iter().enumerate() {
        out += &format!(
            "\n{}. above {}, below {}{}\n",
            i + 1,
            list(&p.below),
            list(&p.above),
            if p.current {
                "  (its place in the policy)"
            } else {
                ""
            }
        );
        let sc = &p.score;
        out += &format!(
            "   score: {} lossy edges, {} weak types widened, {} changed joins, {} new undefined joins, joins {} bits wide in all, {} lossy edges from weak types\n",
            sc.lossy_edges,
            sc.weak_widening,
            sc.changed_joins,
            sc.new_undefined,
            sc.join_bits,
            sc.lossy_weak_edges
        );
        let edges: Vec<String> = p
            .safety
            .iter()
            .filter(|c| c.via == "edge")
            .map(safety_line)
            .collect();
        out += &format!("   edges: {}\n", edges.join("; "));
        let lossy_joins: Vec<String> = p
            .safety
            .iter()
            .filter(|c| c.via == "join" && c.class != Class::Exact)
            .map(safety_line)
            .collect();
        if !lossy_joins.is_empty() {
            out += &format!("   lossy joins: {}\n", lossy_joins.join("; "));
        }
        if p.changes.is_empty() {
            out += "   changes: none\n";
        } else {
            let changes: Vec<String> = p
                .changes
                .iter()
                .map(|c| {
                    format!(
                        "{} ∨ {}: {} → {}",
                        c.a,
                        c.b,
                        c.before.as_deref().unwrap_or("undefined"),
                        c.after.as_deref().unwrap_or("undefined")
                    )
                })
                .collect();
            out += &format!("   changes: {}\n", changes.join(", "));
        }
        let defined: Vec<String> = p
            .joins
            .iter()
            .filter_map(|(y, r)| r.as_ref().map(|r| format!("{y}→{r}")))
            .collect();
        let undefined: Vec<&str> = p
            .joins
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(y, _)| y.as_str())
            .collect();
        out += &format!("   {} ∨ y: {}\n", s.dtype, defined.join(", "));
        if !undefined.is_empty() {
            out += &format!("   undefined with: {}\n", undefined.join(", "));
        }
    }
    out
}

fn safety_line(c: &Safety) -> String {
    let witness = c
        .witness
        .as_ref()
        .map(|w| format!(" ({} becomes {})", w.value, w.becomes))
        .unwrap_or_default();
    format!("{} → {} {}{witness}", c.from, c.to, c.class.key())
}
