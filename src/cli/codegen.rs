//! The `codegen` command: a Rust promotion module per verified policy.

use std::path::{Path, PathBuf};

use typejoin::{CheckOptions, Diagnostic, Input, LoadError};

use super::*;

/// Writes one Rust module per verified policy into `out`, and `out/mod.rs`; a policy whose
/// laws fail is refused (exit 1, its report) and nothing is written.
pub(crate) fn codegen(files: &[PathBuf], out: &Path) -> Result<u8, LoadError> {
    let shown = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let command = format!(
        "typejoin codegen {} --out {}",
        files.iter().map(|f| shown(f)).collect::<Vec<_>>().join(" "),
        shown(out)
    );
    let mut modules: Vec<(String, String)> = Vec::new();
    let mut refused = false;
    let mut inputs = Vec::new();
    for f in files {
        let text = read(f)?;
        let input = Input::parse(&f.to_string_lossy(), &text)?;
        typejoin::SizeLimit::CODEGEN.check(&input)?;
        inputs.push((f, text, input));
    }
    // A measured table that extends a lattice policy (`"kernels": {"extends": "torch"}`) is
    // generated inside that policy's module.
    let extends = |input: &Input| match input {
        Input::Observed(o) => o.kernels.as_ref().and_then(|k| k.extends.clone()),
        Input::Policy { .. } => None,
    };
    for (f, _, input) in &inputs {
        if let Some(name) = extends(input) {
            let found = inputs.iter().any(
                |(_, _, p)| matches!(p, Input::Policy { policy, .. } if policy.name() == name),
            );
            if !found {
                return Err(LoadError::one(
                    Diagnostic::file(
                        &shown(f),
                        format!("this table extends the `{name}` policy, which was not passed"),
                    )
                    .with_help(format!(
                        "pass the policy file beside it (lattices/{name}.toml)"
                    )),
                ));
            }
        }
    }
    for (f, text, input) in &inputs {
        if extends(input).is_some() {
            continue;
        }
        let prov = typejoin::Provenance {
            path: &shown(f),
            text,
            command: &command,
        };
        let report = input.check(CheckOptions::default());
        let module = match input {
            Input::Policy { policy, joins, .. } => {
                let checked = typejoin::Checked::from(report);
                if !checked.ok() {
                    eprintln!(
                        "{}: refused: the laws do not hold; nothing was written",
                        shown(f)
                    );
                    print!(
                        "{}",
                        typejoin::render::human(&checked, ReportOptions::default())
                    );
                    refused = true;
                    continue;
                }
                let extension = inputs.iter().find(|(_, _, x)| {
                    extends(x).as_deref() == Some(policy.name())
                });
                match extension {
                    None => typejoin::render::codegen::module(policy, joins, &prov),
                    Some((g, table_text, Input::Observed(observed))) => {
                        let table = typejoin::Provenance {
                            path: &shown(g),
                            text: table_text,
                            command: &command,
                        };
                        let table_report = inputs
                            .iter()
                            .find(|(h, _, _)| h == g)
                            .map(|(_, _, x)| x.check(CheckOptions::default()))
                            .expect("the extension is one of the inputs");
                        typejoin::render::codegen::extended_module(
                            policy,
                            joins,
                            observed,
                            &table_report,
                            &prov,
                            &table,
                        )
                        .map_err(|e| {
                            LoadError::one(Diagnostic::file(&shown(g), e).with_help(
                                "re-measure the table (scripts/dump_table.py) or correct the lattice",
                            ))
                        })?
                    }
                    Some(_) => unreachable!("only a measured table extends a policy"),
                }
            }
            Input::Observed(observed) => typejoin::render::codegen::table_module(
                observed, &report, &prov,
            )
            .ok_or_else(|| {
                LoadError::one(
                    Diagnostic::file(&shown(f), "codegen needs a policy (.toml) or a measured table that says what its library computes in (`kernels`)")
                        .with_help("a table without `kernels` has no loops to generate; scripts/dump_table.py numpy-result-type measures NumPy's (docs/policy-kinds.md)"),
                )
            })?,
        };
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A measured table's policy is its library's (`observed/numpy_result_type.json` runs
        // as `--policy numpy`).
        let stem = match input {
            Input::Observed(o) => o.policy_name().to_string(),
            Input::Policy { .. } => stem,
        };
        let name = typejoin::render::codegen::module_name(&stem);
        if modules.iter().any(|(m, _)| *m == name) {
            return Err(LoadError::one(
                Diagnostic::file(&shown(f), format!("a second policy named `{name}`"))
                    .with_help("module names come from policy file stems and measured tables' `library`; pass one of them"),
            ));
        }
        modules.push((name, module));
    }
    if refused {
        return Ok(1);
    }
    modules.sort();
    let io = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(&shown(out), format!("cannot write: {e}")))
    };
    std::fs::create_dir_all(out).map_err(io)?;
    let names: Vec<String> = modules.iter().map(|(m, _)| m.clone()).collect();
    for (m, text) in &modules {
        write_atomic(&out.join(format!("{m}.rs")), text)?;
        println!("{}/{m}.rs", shown(out));
    }
    write_atomic(
        &out.join("mod.rs"),
        &typejoin::render::codegen::index(&names, &command),
    )?;
    // Generated modules of policies no longer passed are removed; other files are kept.
    for entry in std::fs::read_dir(out).map_err(io)? {
        let p = entry.map_err(io)?.path();
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let generated =
            std::fs::read_to_string(&p).is_ok_and(|t| t.starts_with("// @generated by typejoin"));
        if p.extension().is_some_and(|x| x == "rs")
            && stem != "mod"
            && generated
            && !names.contains(&stem)
        {
            std::fs::remove_file(&p).map_err(io)?;
        }
    }
    Ok(0)
}
