//! The `result-type` command: the n-ary result of operands under a policy or table.

use std::io::Write;
use std::path::Path;

use typejoin::{Diagnostic, LoadError};

use super::*;

pub(crate) fn result_type(
    file: &Path,
    operands: &[String],
    format: ResultFormat,
) -> Result<u8, LoadError> {
    let input = load(file)?;
    let r = typejoin::result_type(&input, operands).map_err(|e| {
        let help = e.suggestion.map_or_else(
            || format!("its operands are: {}", input.table().names.join(", ")),
            |s| format!("did you mean `{s}`?"),
        );
        LoadError::one(
            Diagnostic::file(
                &file.to_string_lossy(),
                format!("`{}` is not an operand of `{}`", e.operand, input.name()),
            )
            .with_help(help),
        )
    })?;
    let text = match format {
        ResultFormat::Text => typejoin::render::result_type::text(&r),
        ResultFormat::Json => typejoin::render::result_type::json(&r),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(if r.node.is_some() { 0 } else { 1 })
}
