//! The `safety` command: what every edge and join does to values.

use std::path::Path;

use typejoin::{Diagnostic, Input, LoadError, render};

use super::*;

pub(crate) fn safety(
    file: &Path,
    format: SafetyFormat,
    engine: SafetyEngine,
) -> Result<u8, LoadError> {
    if engine == SafetyEngine::Z3 {
        typejoin::smt::z3_available().map_err(|e| {
            LoadError::one(Diagnostic::file("typejoin", e).with_help("use `--engine search`"))
        })?;
    }
    let input = load_within(file, typejoin::SizeLimit::SAFETY)?;
    let Input::Policy { policy, joins, .. } = &input else {
        return Err(LoadError::one(
            Diagnostic::file(
                &file.to_string_lossy(),
                "safety analysis needs a policy (.toml)",
            )
            .with_help("an observed table has no formats or edges; check it with `typejoin check`"),
        ));
    };
    let conversions = typejoin::analyse(policy, &joins.table, engine);
    let text = match format {
        SafetyFormat::Json => render::safety::json(policy.name(), &conversions),
        SafetyFormat::Markdown => render::safety::markdown(&conversions),
        SafetyFormat::Text => render::safety::text(&conversions),
    };
    print!("{text}");
    Ok(0)
}
