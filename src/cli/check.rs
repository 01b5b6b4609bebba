//! The `check` command: laws and lints of every file, in every output format.

use std::io::Write;
use std::path::PathBuf;

use typejoin::Input;
use typejoin::policy::diag::{Diagnostic, LoadError};

use super::*;

pub(crate) fn check(
    paths: &[PathBuf],
    format: CheckFormat,
    o: ReportOptions,
    engine: Engine,
    timeout: u32,
    err_color: bool,
) -> Result<u8, LoadError> {
    if engine != Engine::Exhaustive && !cfg!(feature = "z3") {
        return Err(LoadError::one(
            Diagnostic::file("typejoin", "this typejoin was built without z3")
                .with_help("use `--engine exhaustive`, or rebuild with the default `z3` feature"),
        ));
    }
    let files = expand(paths)?;
    if files.is_empty() {
        return Err(LoadError::one(
            Diagnostic::file(&paths[0].to_string_lossy(), "no .toml or .json files found")
                .with_help(
                    "point `check` at policy files, observed tables, or directories holding them",
                ),
        ));
    }
    let mut reports = Vec::new();
    let mut failed: Vec<LoadError> = Vec::new();
    let mut internal = false;
    let mut stdout = anstream::AutoStream::never(std::io::stdout().lock());
    let mut annotations = Vec::new();
    for f in &files {
        let loaded = read(f)
            .and_then(|text| Input::parse(&f.to_string_lossy(), &text).map(|input| (input, text)));
        let (input, text) = match loaded {
            Ok(loaded) => loaded,
            Err(e) => {
                eprint!("{}", e.render(err_color));
                annotations.extend(
                    e.diagnostics
                        .iter()
                        .map(typejoin::output::gate::input_error),
                );
                failed.push(e);
                continue;
            }
        };
        let opts = typejoin::check::Options {
            timeout_ms: timeout,
            witnesses: o.witnesses,
            ..typejoin::check::Options::with(engine)
        };
        let report = match typejoin::check::check(&input, opts) {
            Ok(checked) => {
                for w in &checked.warnings {
                    eprintln!("{w}");
                }
                checked
            }
            Err(message) => {
                eprintln!("{message}");
                internal = true;
                continue;
            }
        };
        if let CheckFormat::Human = format {
            let _ = write!(stdout, "{}", typejoin::output::render::human(&report, o));
        }
        annotations.extend(typejoin::output::gate::annotations(
            &input,
            &text,
            &report,
            o.witnesses,
        ));
        reports.push(report);
    }
    if let CheckFormat::Json = format {
        let mut files: Vec<serde_json::Value> = reports
            .iter()
            .map(|r| typejoin::output::render::json_file(r, o))
            .collect();
        for e in &failed {
            let d = &e.diagnostics[0];
            files.push(serde_json::json!({
                "path": d.path, "ok": false, "error": e.to_string(),
                "violations": [],
            }));
        }
        let doc = serde_json::json!({ "files": files });
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON serialises")
        );
    }
    match format {
        CheckFormat::Github => {
            let _ = write!(stdout, "{}", typejoin::output::gate::github(&annotations));
        }
        CheckFormat::Sarif => {
            let _ = write!(stdout, "{}", typejoin::output::gate::sarif(&annotations));
        }
        CheckFormat::Human | CheckFormat::Json => {}
    }
    let _ = stdout.flush();
    let violated = reports.iter().any(|r| r.failed());
    let undecided = reports.iter().any(|r| !r.ok());
    Ok(if !failed.is_empty() || internal {
        2
    } else if violated {
        1
    } else if undecided {
        2
    } else {
        0
    })
}
