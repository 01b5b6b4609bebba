//! The `suggest` command: where a new dtype can go.

use std::io::Write;
use std::path::Path;

use typejoin::{Diagnostic, Input, LoadError};

use super::*;

pub(crate) fn suggest(
    file: &Path,
    add: &str,
    format_of: Option<&str>,
    max_degree: u8,
    top: usize,
    format: SuggestFormat,
) -> Result<u8, LoadError> {
    let shown = file.to_string_lossy();
    let Input::Policy { policy, .. } = load_within(file, typejoin::SizeLimit::SUGGEST)? else {
        return Err(LoadError::one(
            Diagnostic::file(
                &shown,
                "an observed table has no edges to place a dtype between",
            )
            .with_help("suggest works on a policy (.toml); `typejoin check` tests a table"),
        ));
    };
    let usage = |m: String, help: &str| {
        LoadError::one(Diagnostic::file("typejoin suggest", m).with_help(help))
    };
    let name = typejoin::canonical(add).unwrap_or(add);
    let decl = format_of
        .map(|f| {
            typejoin::suggest::parse_format(f).map_err(|e| {
                usage(
                    format!("--format-of `{f}`: {e}"),
                    "see docs/file-formats.md, [formats]",
                )
            })
        })
        .transpose()?;
    let options = typejoin::suggest::Options {
        max_degree: max_degree.into(),
        top,
    };
    let s = typejoin::suggest::suggest(&policy, name, decl.as_ref(), options)
        .map_err(|e| usage(e.to_string(), "see `typejoin suggest --help`"))?;
    let text = match format {
        SuggestFormat::Json => typejoin::render::suggest::json(&s),
        SuggestFormat::Text => typejoin::render::suggest::text(&s),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(0)
}
