//! A synthesised lattice or a conflict ([`crate::design::synthesis::Synthesis`]): text and JSON.

use crate::design::synthesis::Synthesis;

/// The text rendering: the lattice's summary and its edges, or the conflicting requirements
/// with their lines.
pub fn text(s: &Synthesis) -> String {
    match s {
        Synthesis::Found(f) => {
            let mut out = format!(
                "{} ({}): a lattice of {} dtypes and {} edges meets all {} requirements; {} lossy \
                 promotion{}, {} order relations (each the fewest possible, in that order)\n",
                f.name,
                f.path,
                f.dtypes.len(),
                f.edges.len(),
                f.requirements,
                f.lossy,
                if f.lossy == 1 { "" } else { "s" },
                f.relations,
            );
            for (a, name) in f.dtypes.iter().enumerate() {
                let up: Vec<&str> = f
                    .edges
                    .iter()
                    .filter(|e| e.0 == a)
                    .map(|e| f.dtypes[e.1].as_str())
                    .collect();
                if !up.is_empty() {
                    out += &format!("  {name} → {}\n", up.join(", "));
                }
            }
            out
        }
        Synthesis::Conflict(c) => {
            let mut out = format!(
                "{} ({}): no lattice meets all {} requirements; these {} cannot hold together \
                 (without any one of them, the rest can):\n",
                c.name,
                c.path,
                c.requirements,
                c.core.len()
            );
            for r in &c.core {
                out += &format!("  {}:{}: {}\n", c.path, r.line, r.text);
            }
            out
        }
    }
}

/// The JSON rendering: `{"name", "path", "found": true, "edges", "lossy", "relations"}` or
/// `{"name", "path", "found": false, "conflict": [{"line", "requirement"}]}`.
pub fn json(s: &Synthesis) -> String {
    let v = match s {
        Synthesis::Found(f) => serde_json::json!({
            "name": f.name,
            "path": f.path,
            "found": true,
            "requirements": f.requirements,
            "lossy": f.lossy,
            "relations": f.relations,
            "rounds": f.rounds,
            "edges": f.edges.iter().map(|&(a, b)| [&f.dtypes[a], &f.dtypes[b]]).collect::<Vec<_>>(),
        }),
        Synthesis::Conflict(c) => serde_json::json!({
            "name": c.name,
            "path": c.path,
            "found": false,
            "requirements": c.requirements,
            "conflict": c.core.iter().map(|r| serde_json::json!({
                "line": r.line,
                "requirement": r.text,
            })).collect::<Vec<_>>(),
        }),
    };
    let mut out = serde_json::to_string_pretty(&v).expect("JSON serialises");
    out.push('\n');
    out
}
