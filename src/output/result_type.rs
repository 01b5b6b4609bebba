//! A [`ResultType`] as one line of text or a JSON object.

use crate::design::result_type::ResultType;

/// `int8 ∨ float16@0d ∨ float64@0d = float64@0d (returned as float64)`; operands a policy
/// converts first are said: `uint64 ∨ int8 (promoted as uint32 ∨ int8) = int32`.
pub fn text(r: &ResultType) -> String {
    let mut lhs = r.operands.join(" ∨ ");
    if r.promoted_as != r.operands {
        lhs = format!("{lhs} (promoted as {})", r.promoted_as.join(" ∨ "));
    }
    match (&r.node, &r.dtype) {
        (Some(node), Some(dtype)) if node != dtype => {
            format!("{lhs} = {node} (returned as {dtype})\n")
        }
        (Some(node), _) => format!("{lhs} = {node}\n"),
        _ => format!("{lhs}: {}\n", r.error.as_deref().unwrap_or("no result")),
    }
}

/// The JSON object: operands, promoted_as, node, dtype, error.
pub fn json(r: &ResultType) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("JSON serialises");
    s.push('\n');
    s
}
