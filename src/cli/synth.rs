//! The `synth` command: a lattice from requirements, or the requirements that conflict.

use std::io::Write;
use std::path::Path;

use typejoin::synthesis::Synthesis;
use typejoin::{Diagnostic, LoadError};

use super::*;

pub(crate) fn synth(
    file: &Path,
    output: Option<&Path>,
    format: ResultFormat,
    timeout: u32,
) -> Result<u8, LoadError> {
    let shown = file.to_string_lossy();
    let req = typejoin::parse_requirements(&shown, &read(file)?)?;
    let s = typejoin::synthesis::synthesize(&req, timeout).map_err(|e| {
        LoadError::one(
            Diagnostic::file(&shown, e.to_string())
                .with_help("raise --timeout, or drop requirements"),
        )
    })?;
    if let (Some(path), Synthesis::Found(f)) = (output, &s) {
        write_atomic(path, &f.policy)?;
    }
    let text = match format {
        ResultFormat::Text => typejoin::render::synthesis::text(&s),
        ResultFormat::Json => typejoin::render::synthesis::json(&s),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(match s {
        Synthesis::Found(_) => 0,
        Synthesis::Conflict(_) => 1,
    })
}
