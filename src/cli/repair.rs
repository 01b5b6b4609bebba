//! The `repair` command: the fewest changes that make a table a lattice.

use std::io::Write;
use std::path::Path;

use typejoin::repair::{Options, RepairError};
use typejoin::{Diagnostic, LoadError};

use super::*;

pub(crate) struct Args<'a> {
    pub partial: bool,
    pub keep: &'a [String],
    pub lossy_cost: u64,
    pub timeout: u32,
    pub format: ResultFormat,
    pub table: Option<&'a Path>,
    pub policy: Option<&'a Path>,
    pub proof: Option<&'a Path>,
}

pub(crate) fn repair(file: &Path, args: &Args) -> Result<u8, LoadError> {
    let input = load(file)?;
    let usage = |m: String, help: &str| {
        LoadError::one(Diagnostic::file("typejoin repair", m).with_help(help))
    };
    let mut keep = Vec::new();
    for k in args.keep {
        let pair = k.split_once(',').map(|(a, b)| (a.trim(), b.trim()));
        let Some((a, b)) = pair else {
            return Err(usage(
                format!("--keep `{k}`: not a pair"),
                "write the pair as A,B (e.g. --keep int8,uint8)",
            ));
        };
        let idx = |x: &str| {
            input.resolve(x).ok_or_else(|| {
                usage(
                    format!("--keep `{k}`: `{x}` is not a dtype of {}", input.path()),
                    "name a dtype of the table (a canonical name or a short code)",
                )
            })
        };
        keep.push((idx(a)?, idx(b)?));
    }
    let opts = Options {
        partial: args.partial,
        keep,
        lossy_cost: args.lossy_cost,
        timeout_ms: args.timeout,
    };
    let r = typejoin::repair::repair(&input, &opts).map_err(|e| {
        let help = match e {
            RepairError::Undecided(_) => "raise --timeout, or pin fewer pairs",
            RepairError::CannotKeep(_) | RepairError::Infeasible(_) => "pin fewer pairs (--keep)",
            RepairError::TooLarge(_) => "repair a part of the table (its dtypes of one kind, say)",
            RepairError::Internal(_) => "please report it",
        };
        usage(e.to_string(), help)
    })?;
    if let Some(path) = args.table {
        let (library, version) = match &input {
            typejoin::Input::Observed(o) => (
                o.library.clone().unwrap_or_default(),
                o.version.clone().unwrap_or_default(),
            ),
            typejoin::Input::Policy { .. } => (String::new(), String::new()),
        };
        let name = format!("{}-repaired", r.name);
        write_atomic(path, &r.table.to_json(&name, &library, &version))?;
    }
    if let Some(path) = args.policy {
        let Some(policy) = &r.policy else {
            return Err(usage(
                format!(
                    "{} names dtypes outside the catalogue: no policy to write",
                    r.path
                ),
                "write the repaired table with --table; a policy would declare their formats",
            ));
        };
        write_atomic(path, policy)?;
    }
    if let (Some(path), Some(proof)) = (args.proof, &r.proof) {
        write_atomic(path, proof)?;
    }
    let text = match args.format {
        ResultFormat::Text => typejoin::render::repair::text(&r),
        ResultFormat::Json => typejoin::render::repair::json(&r),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(if r.changes.is_empty() { 0 } else { 1 })
}
