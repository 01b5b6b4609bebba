//! What every edge and join does to values ([`crate::safety::analyse`]): one line each as text,
//! a Markdown table, or JSON.

use crate::safety::Conversion;

/// One line per conversion: from, to, via, how decided, class, and the witness.
pub fn text(conversions: &[Conversion]) -> String {
    let mut t = String::new();
    for c in conversions {
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

/// A Markdown table: from, to, via, class, witness, decided by.
pub fn markdown(conversions: &[Conversion]) -> String {
    let mut t = String::from(
        "| from | to | via | class | witness | decided by |\n|---|---|---|---|---|---|\n",
    );
    for c in conversions {
        let w = c
            .witness
            .as_ref()
            .map_or(String::new(), |w| format!("{} → {}", w.value, w.becomes));
        t += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            c.from.replace('*', "\\*"),
            c.to.replace('*', "\\*"),
            c.via,
            c.class.key(),
            w,
            c.decided_by.key()
        );
    }
    t
}

/// `{"policy", "conversions": [{"from", "to", "via", "class", "witness", "decided_by", "all"}]}`.
pub fn json(policy: &str, conversions: &[Conversion]) -> String {
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
    let doc = serde_json::json!({"policy": policy, "conversions": list});
    let mut t = serde_json::to_string_pretty(&doc).expect("JSON serialises");
    t.push('\n');
    t
}
