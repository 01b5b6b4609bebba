//! The `run` command: the conformance runner, one answer line per case.

use std::path::Path;

use typejoin::{
    Diagnostic, LoadError,
    conformance::{Limits, run_stream},
};

/// Answers every case of a JSON-lines file (or stdin), streaming.
pub(crate) fn run_cases(cases: &Path, policy: &str, limits: Limits) -> Result<u8, LoadError> {
    let policy = typejoin::policy(policy)?;
    let shown = cases.to_string_lossy();
    let reader: Box<dyn std::io::BufRead> = if shown == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(cases).map_err(|e| {
                LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}")))
            })?,
        ))
    };
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    run_stream(policy, reader, out, limits)
        .map_err(|e| LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}"))))?;
    Ok(0)
}
