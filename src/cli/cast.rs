//! The `cast` command: what every value of one format becomes in another.

use std::io::Write;
use std::path::Path;

use typejoin::{
    Diagnostic, LoadError,
    cast::{self, Values},
    render,
};

use super::*;

pub(crate) fn cast(
    src: &str,
    dst: &str,
    all: bool,
    bits: Option<&Path>,
    format: CastFormat,
    output: Option<&Path>,
) -> Result<u8, LoadError> {
    let cast = cast::Cast::new(src, dst)?;
    let shown = bits.map(|p| p.to_string_lossy().into_owned());
    let raw = match bits {
        Some(path) => Some(std::fs::read(path).map_err(|e| {
            LoadError::one(Diagnostic::file(
                shown.as_deref().unwrap_or_default(),
                format!("cannot read: {e}"),
            ))
        })?),
        None => None,
    };
    let values = match (all, &raw, &shown) {
        (true, _, _) => Values::All,
        (false, Some(bytes), Some(path)) => Values::Storage { path, bytes },
        _ => {
            return Err(LoadError::one(
                Diagnostic::file("typejoin cast", "say which values: --all or --bits FILE")
                    .with_help("see `typejoin cast --help`"),
            ));
        }
    };
    let table = cast.table(values)?;
    let bytes = match format {
        CastFormat::Bin => render::cast::bin(&table),
        CastFormat::Text => render::cast::text(&table).into_bytes(),
        CastFormat::Json => render::cast::json(&table).into_bytes(),
    };
    match output {
        Some(path) => write_atomic_bytes(path, &bytes)?,
        None => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&bytes);
            let _ = out.flush();
        }
    }
    Ok(0)
}
