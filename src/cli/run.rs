//! The `run` command: the conformance runner, one answer line per case.

use std::io::Write;
use std::path::Path;

use typejoin::policy::diag::{Diagnostic, LoadError};

/// The generated policy of a name, or an error listing the names.
/// Answers every case of a JSON-lines file (or stdin), streaming.
pub(crate) fn run_cases(cases: &Path, policy: &str) -> Result<u8, LoadError> {
    use std::io::BufRead;
    let policy = typejoin::kernels::policy(policy)?;
    let shown = cases.to_string_lossy();
    let reader: Box<dyn BufRead> = if shown == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(cases).map_err(|e| {
                LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}")))
            })?,
        ))
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| {
            LoadError::one(Diagnostic::file(
                &shown,
                format!("line {}: cannot read: {e}", n + 1),
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        if writeln!(
            out,
            "{}",
            typejoin::kernels::conformance::run_line(policy, &line)
        )
        .is_err()
        {
            return Ok(0); // the reader went away (a closed pipe)
        }
    }
    let _ = out.flush();
    Ok(0)
}
