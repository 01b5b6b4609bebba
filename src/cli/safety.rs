//! The `safety` command: what every edge and join does to values.

use std::path::Path;

use typejoin::Input;
use typejoin::policy::diag::{Diagnostic, LoadError};

use super::*;

pub(crate) fn safety(
    file: &Path,
    format: SafetyFormat,
    engine: SafetyEngine,
) -> Result<u8, LoadError> {
    if engine == SafetyEngine::Z3 && !cfg!(feature = "z3") {
        return Err(LoadError::one(
            Diagnostic::file("typejoin", "this typejoin was built without z3")
                .with_help("use `--engine search`, or rebuild with the default `z3` feature"),
        ));
    }
    let input = load(file)?;
    let Input::Policy { policy, joins, .. } = &input else {
        return Err(LoadError::one(
            Diagnostic::file(
                &file.to_string_lossy(),
                "safety analysis needs a policy (.toml)",
            )
            .with_help("an observed table has no formats or edges; check it with `typejoin check`"),
        ));
    };
    let conversions = typejoin::safety::analyse(policy, &joins.table, engine);
    let text = match format {
        SafetyFormat::Json => {
            let list: Vec<serde_json::Value> = conversions
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "from": c.from, "to": c.to, "via": c.via, "class": c.class.key(),
                        "witness": c.witness,
                        "decided_by": c.decided_by.key(),
                        "all": c.all.iter().map(|(k, w)| serde_json::json!({"class": k.key(), "value": w.value, "becomes": w.becomes})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let doc = serde_json::json!({"policy": policy.name, "conversions": list});
            let mut t = serde_json::to_string_pretty(&doc).expect("JSON serialises");
            t.push('\n');
            t
        }
        SafetyFormat::Markdown => typejoin::safety::markdown(&conversions),
        SafetyFormat::Text => {
            let mut t = String::new();
            for c in &conversions {
                let w = c.witness.as_ref().map_or(String::new(), |w| {
                    format!(": {} becomes {}", w.value, w.becomes)
                });
                t += &format!(
                    "{:<18} → {:<18} {:<4}  {:<11}  {}{w}\n",
                    c.from,
                    c.to,
                    c.via,
                    c.decided_by.key(),
                    c.class.key()
                );
            }
            t
        }
    };
    print!("{text}");
    Ok(0)
}
