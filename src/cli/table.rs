//! The `table` command: the join table in every format.

use std::path::Path;

use typejoin::{Input, LoadError};

use super::*;

pub(crate) fn table(
    file: &Path,
    format: TableFormat,
    output: Option<&Path>,
    materialise: bool,
) -> Result<u8, LoadError> {
    let input = load_within(file, typejoin::SizeLimit::TABLE)?;
    let materialised = materialise.then(|| input.materialised_table());
    let t = materialised.as_ref().unwrap_or_else(|| input.table());
    // A materialised table keeps its n-ary results, so that reading it back lifts every cell
    // to the node it was (docs/categories.md).
    let triples = if materialise && matches!(format, TableFormat::Json) {
        input.materialised_triples()
    } else {
        Vec::new()
    };
    let text = match format {
        TableFormat::Text => typejoin::render::table::text(t),
        TableFormat::Markdown => typejoin::render::table::markdown(t),
        TableFormat::Csv => typejoin::render::table::csv(t),
        TableFormat::Json => match &input {
            Input::Observed(o) => t.to_json_with(
                &o.name,
                o.library.as_deref().unwrap_or(&o.name),
                o.version.as_deref().unwrap_or("unknown"),
                materialise,
                &triples,
            ),
            Input::Policy { policy, .. } => t.to_json_with(
                policy.name(),
                &format!("typejoin policy {}", policy.path()),
                env!("CARGO_PKG_VERSION"),
                materialise,
                &triples,
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
