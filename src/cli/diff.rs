//! The `diff` command: where two policies or tables disagree.

use std::io::Write;
use std::path::Path;

use typejoin::LoadError;

use super::*;

pub(crate) fn diff(
    a: &Path,
    b: &Path,
    format: DiffFormat,
    materialise: bool,
) -> Result<u8, LoadError> {
    let limit = typejoin::SizeLimit::DIFF;
    let (a, b) = (load_within(a, limit)?, load_within(b, limit)?);
    let d = typejoin::diff(&a, &b, materialise);
    let text = match format {
        DiffFormat::Text => typejoin::render::diff::text(&d),
        DiffFormat::Markdown => typejoin::render::diff::markdown(&d),
        DiffFormat::Json => typejoin::render::diff::json(&d),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(if d.same() { 0 } else { 1 })
}
