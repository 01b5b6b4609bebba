//! The `table` command: the join table in every format.

use std::path::Path;

use typejoin::Input;
use typejoin::policy::diag::LoadError;

use super::*;

pub(crate) fn table(
    file: &Path,
    format: TableFormat,
    output: Option<&Path>,
) -> Result<u8, LoadError> {
    let input = load(file)?;
    let t = input.table();
    let text = match format {
        TableFormat::Text => typejoin::output::table::text(t),
        TableFormat::Markdown => typejoin::output::table::markdown(t),
        TableFormat::Csv => typejoin::output::table::csv(t),
        TableFormat::Json => match &input {
            Input::Observed(o) => t.to_json(
                &o.name,
                o.library.as_deref().unwrap_or(&o.name),
                o.version.as_deref().unwrap_or("unknown"),
            ),
            Input::Policy { policy, .. } => t.to_json(
                &policy.name,
                &format!("typejoin policy {}", policy.path),
                env!("CARGO_PKG_VERSION"),
            ),
        },
    };
    match output {
        None => {
            print!("{text}");
            Ok(0)
        }
        Some(out) => write_atomic(out, &text).map(|()| 0),
    }
}
