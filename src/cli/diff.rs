//! The `diff` command: where two policies or tables disagree.

use std::io::Write;
use std::path::Path;

use typejoin::policy::diag::LoadError;

use super::*;

pub(crate) fn diff(
    a: &Path,
    b: &Path,
    format: DiffFormat,
    materialise: bool,
) -> Result<u8, LoadError> {
    let (a, b) = (load(a)?, load(b)?);
    let d = typejoin::design::diff::diff(&a, &b, materialise);
    let text = match format {
        DiffFormat::Text => typejoin::output::diff::text(&d),
        DiffFormat::Markdown => typejoin::output::diff::markdown(&d),
        DiffFormat::Json => typejoin::output::diff::json(&d),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(if d.same() { 0 } else { 1 })
}
