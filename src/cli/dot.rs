//! The `dot` command: a Hasse diagram as DOT, SVG or PNG.

use std::path::Path;

use typejoin::{CheckOptions, Diagnostic, Input, LoadError, did_you_mean};

use super::*;

/// Writes a policy's diagram as DOT (stdout or `.dot`) or renders it (`.svg`, `.png`).
pub(crate) fn dot(
    file: &Path,
    output: Option<&Path>,
    highlight: Option<&str>,
) -> Result<u8, LoadError> {
    let input = load_within(file, typejoin::SizeLimit::DOT)?;
    let shown = file.to_string_lossy();
    let Input::Policy {
        policy, lattice, ..
    } = &input
    else {
        let Input::Observed(o) = &input else {
            unreachable!("two kinds of input")
        };
        if highlight.is_some() {
            return Err(LoadError::one(
                Diagnostic::file("--highlight", "join paths are drawn for policies")
                    .with_help("drop --highlight for an observed table"),
            ));
        }
        let report = input.check(CheckOptions::default());
        let text = typejoin::render::dot::to_dot(&typejoin::render::dot::table_diagram(
            &o.name, &o.table, &report,
        ));
        return write_diagram(&shown, &text, output);
    };
    let pair = match highlight {
        None => None,
        Some(h) => {
            let names: Vec<&str> = h.split(',').map(str::trim).collect();
            let find = |n: &str| -> Result<usize, LoadError> {
                let c = typejoin::canonical(n).unwrap_or(n);
                policy.dtypes().iter().position(|d| d == c).ok_or_else(|| {
                    let help = did_you_mean(n, policy.dtypes().iter().map(String::as_str))
                        .map_or("name two dtypes of the policy".into(), |s| {
                            format!("did you mean `{s}`?")
                        });
                    LoadError::one(
                        Diagnostic::file(
                            "--highlight",
                            format!("`{n}` is not a dtype of {}", policy.name()),
                        )
                        .with_help(help),
                    )
                })
            };
            match names.as_slice() {
                [a, b] => Some((find(a)?, find(b)?)),
                _ => {
                    return Err(LoadError::one(
                        Diagnostic::file("--highlight", format!("`{h}` is not two dtypes"))
                            .with_help("write them as A,B, e.g. --highlight int8,uint8"),
                    ));
                }
            }
        }
    };
    let g = typejoin::render::dot::diagram(policy, lattice, pair, typejoin::SafetyEngine::best());
    write_diagram(&shown, &typejoin::render::dot::to_dot(&g), output)
}

/// DOT on stdout, or a `.dot`/`.svg`/`.png` file by its extension.
pub(crate) fn write_diagram(
    shown: &str,
    text: &str,
    output: Option<&Path>,
) -> Result<u8, LoadError> {
    let text = text.to_string();
    let Some(out) = output else {
        print!("{text}");
        return Ok(0);
    };
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let bytes = match ext.as_str() {
        "dot" | "gv" => {
            typejoin::render::dot::with_header(&text, &shown.replace('\\', "/")).into_bytes()
        }
        "svg" | "png" => typejoin::render::dot::render(&text, &ext)
            .map_err(|m| LoadError::one(Diagnostic::file(&out.to_string_lossy(), m)))?,
        _ => {
            return Err(LoadError::one(
                Diagnostic::file(&out.to_string_lossy(), "unknown output format")
                    .with_help("name the output .dot, .svg or .png"),
            ));
        }
    };
    write_atomic_bytes(out, &bytes)?;
    Ok(0)
}
