//! The `cast` command's table: text (one line per element), JSON, or raw destination storage.

use crate::jobs::cast::Table;

/// One line per element: source bits and value, destination bits and value.
pub fn text(t: &Table) -> String {
    let sw = (t.src_bytes * 2) as usize + 2;
    let dw = (t.dst_bytes * 2) as usize + 2;
    let mut out = String::new();
    for r in &t.rows {
        out += &format!(
            "{:#0sw$x} {:>24} -> {:#0dw$x} {}\n",
            r.bits,
            r.value.display(),
            r.to_bits,
            r.to_value.display(),
        );
    }
    out
}

/// `{"src", "dst", "n", "results": [{"bits", "value", "to_bits", "to_value"}]}`, pretty.
pub fn json(t: &Table) -> String {
    let results: Vec<serde_json::Value> = t
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({"bits": r.bits, "value": r.value.display(), "to_bits": r.to_bits, "to_value": r.to_value.display()})
        })
        .collect();
    let doc =
        serde_json::json!({"src": t.src, "dst": t.dst, "n": t.rows.len(), "results": results});
    let mut out = serde_json::to_string_pretty(&doc).expect("JSON serialises");
    out.push('\n');
    out
}

/// Raw little-endian destination storage units, one per element (as NumPy's `tofile`).
pub fn bin(t: &Table) -> Vec<u8> {
    t.rows
        .iter()
        .flat_map(|r| {
            r.to_bits
                .to_le_bytes()
                .into_iter()
                .take(t.dst_bytes as usize)
        })
        .collect()
}
