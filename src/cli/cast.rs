//! The `cast` command: what every value of one format becomes in another.

use std::io::Write;
use std::path::Path;

use typejoin::policy::diag::{Diagnostic, LoadError, did_you_mean};

use super::*;

pub(crate) fn cast(
    src: &str,
    dst: &str,
    all: bool,
    bits: Option<&Path>,
    format: CastFormat,
    output: Option<&Path>,
) -> Result<u8, LoadError> {
    use typejoin::numeric::format::{IntTarget, Source, cast_bits, float_format};
    let usage = |msg: String, help: &str| {
        Err(LoadError::one(
            Diagnostic::file("typejoin cast", msg).with_help(help),
        ))
    };
    let names: Vec<&str> = typejoin::numeric::dtype::CATALOGUE
        .iter()
        .map(|d| d.name)
        .collect();
    let resolve = |n: &str| -> Result<&'static str, LoadError> {
        typejoin::numeric::dtype::canonical(n).ok_or_else(|| {
            let help = did_you_mean(n, names.iter().copied())
                .map_or("use a catalogue name (docs/format.md)".into(), |s| {
                    format!("did you mean `{s}`?")
                });
            LoadError::one(
                Diagnostic::file("typejoin cast", format!("unknown dtype `{n}`")).with_help(help),
            )
        })
    };
    let (src_name, dst_name) = (resolve(src)?, resolve(dst)?);
    let Some(s) = Source::named(src_name) else {
        return usage(
            format!("`{src_name}` cannot be a cast source"),
            "sources are float formats, integers and bool",
        );
    };
    enum Dst {
        Float(typejoin::numeric::format::FloatFormat),
        Int(typejoin::numeric::format::IntTarget),
    }
    let d = match (float_format(dst_name), IntTarget::named(dst_name)) {
        (Some(f), _) => Dst::Float(f),
        (None, Some(t)) => Dst::Int(t),
        (None, None) => {
            return usage(
                format!("casts to `{dst_name}` are not supported"),
                "destinations are float formats, integers and bool",
            );
        }
    };
    let inputs: Vec<u64> = match (all, bits) {
        (true, _) if s.width() > 16 => {
            return usage(
                format!(
                    "`{src_name}` has {} bits: too many patterns for --all",
                    s.width()
                ),
                "pass the values with --bits FILE",
            );
        }
        (true, _) => (0..1u64 << s.width()).collect(),
        (false, Some(path)) => {
            let shown = path.to_string_lossy();
            let raw = std::fs::read(path).map_err(|e| {
                LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}")))
            })?;
            let w = s.storage_bytes() as usize;
            if raw.len() % w != 0 {
                return Err(LoadError::one(
                    Diagnostic::file(
                        &shown,
                        format!(
                            "{} bytes is not a whole number of {w}-byte `{src_name}` elements",
                            raw.len()
                        ),
                    )
                    .with_help(
                        "the file must hold raw little-endian storage units, one per element",
                    ),
                ));
            }
            raw.chunks_exact(w)
                .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
                .collect()
        }
        (false, None) => {
            return usage(
                "say which values: --all or --bits FILE".into(),
                "see `typejoin cast --help`",
            );
        }
    };
    let src_float = match &s {
        Source::Float(f) => Some(f.clone()),
        Source::Int { .. } => None,
    };
    let convert = |x: u64| match (&src_float, &d) {
        (Some(f), Dst::Float(d)) => cast_bits(f, d, x),
        (None, Dst::Float(d)) => d.encode(s.decode(x)),
        (_, Dst::Int(t)) => t.convert(&s, x),
    };
    let d_bytes = match &d {
        Dst::Float(f) => f.storage_bytes,
        Dst::Int(t) => t.storage_bytes(),
    };
    let d_decode = |y: u64| match &d {
        Dst::Float(f) => f.decode(y),
        Dst::Int(t) => t.decode(y),
    };
    let sw = (s.storage_bytes() * 2) as usize;
    let dw = (d_bytes * 2) as usize;
    let bytes: Vec<u8> = match format {
        CastFormat::Bin => inputs
            .iter()
            .flat_map(|&x| convert(x).to_le_bytes().into_iter().take(d_bytes as usize))
            .collect(),
        CastFormat::Text => {
            let mut out = String::new();
            for &x in &inputs {
                let y = convert(x);
                out += &format!(
                    "{:#0sw$x} {:>24} -> {:#0dw$x} {}\n",
                    x,
                    s.decode(x).display(),
                    y,
                    d_decode(y).display(),
                    sw = sw + 2,
                    dw = dw + 2
                );
            }
            out.into_bytes()
        }
        CastFormat::Json => {
            let results: Vec<serde_json::Value> = inputs
                .iter()
                .map(|&x| {
                    let y = convert(x);
                    serde_json::json!({"bits": x, "value": s.decode(x).display(), "to_bits": y, "to_value": d_decode(y).display()})
                })
                .collect();
            let doc = serde_json::json!({"src": src_name, "dst": dst_name, "n": inputs.len(), "results": results});
            let mut t = serde_json::to_string_pretty(&doc).expect("JSON serialises");
            t.push('\n');
            t.into_bytes()
        }
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
