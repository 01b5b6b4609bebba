//! The `check` command: laws and lints of every file, in every output format.

use std::io::Write;
use std::path::PathBuf;

use typejoin::{Diagnostic, Input, LoadError, Style};

use super::*;

pub(crate) fn check(
    paths: &[PathBuf],
    format: CheckFormat,
    o: ReportOptions,
    (engine, prove_lints): (Engine, bool),
    timeout: u32,
    errors: Style,
) -> Result<u8, LoadError> {
    let opts = typejoin::CheckConfig {
        timeout_ms: timeout,
        lints: if prove_lints {
            typejoin::SafetyEngine::Z3
        } else {
            typejoin::SafetyEngine::Search
        },
        witnesses: o.witnesses,
        // What the renderers show: every conversion with --verbose, else the witnesses.
        lint_examples: if o.verbose {
            usize::MAX
        } else {
            o.witnesses.max(1)
        },
        ..typejoin::CheckConfig::with(engine)
    };
    opts.available().map_err(|e| {
        LoadError::one(
            Diagnostic::file("typejoin", e.to_string())
                .with_help("use `--engine exhaustive` (without `--prove-lints`)"),
        )
    })?;
    let files = expand(paths)?;
    if files.is_empty() {
        return Err(LoadError::one(
            Diagnostic::file(&paths[0].to_string_lossy(), "no .toml or .json files found")
                .with_help(
                    "point `check` at policy files, observed tables, or directories holding them",
                ),
        ));
    }
    // Files are checked in parallel (z3's queries on one small policy leave a core idle) and
    // reported in order, so the output is the same as a serial run's; one file is checked on
    // this thread (its own work goes parallel where it is large enough to pay for the pool).
    enum Outcome {
        Unreadable(LoadError),
        Failed(String),
        Checked(Box<(Input, String, typejoin::Checked)>),
    }
    use rayon::prelude::*;
    let outcome = |f: &std::path::PathBuf| {
        let loaded = read(f)
            .and_then(|text| Input::parse(&f.to_string_lossy(), &text).map(|input| (input, text)));
        match loaded {
            Err(e) => Outcome::Unreadable(e),
            Ok((input, text)) => match typejoin::check(&input, opts) {
                Ok(checked) => Outcome::Checked(Box::new((input, text, checked))),
                Err(message) => Outcome::Failed(message.to_string()),
            },
        }
    };
    let outcomes: Vec<Outcome> = if files.len() == 1 {
        files.iter().map(outcome).collect()
    } else {
        files.par_iter().map(outcome).collect()
    };
    let mut reports = Vec::new();
    let mut failed: Vec<LoadError> = Vec::new();
    let mut internal = false;
    let mut stdout = anstream::AutoStream::never(std::io::stdout().lock());
    let mut annotations = Vec::new();
    for outcome in outcomes {
        let (input, text, report) = match outcome {
            Outcome::Unreadable(e) => {
                eprint!("{}", e.render_with(errors));
                annotations.extend(
                    e.diagnostics
                        .iter()
                        .map(typejoin::render::gate::input_error),
                );
                failed.push(e);
                continue;
            }
            Outcome::Failed(message) => {
                eprintln!("{message}");
                internal = true;
                continue;
            }
            Outcome::Checked(checked) => *checked,
        };
        for w in &report.warnings {
            eprintln!("{w}");
        }
        if let CheckFormat::Human = format {
            let _ = write!(stdout, "{}", typejoin::render::human(&report, o));
        }
        annotations.extend(typejoin::render::gate::annotations(
            &input,
            &text,
            &report,
            o.witnesses,
        ));
        reports.push(report);
    }
    if let CheckFormat::Json = format {
        let _ = write!(
            stdout,
            "{}",
            typejoin::render::json_doc(&reports, &failed, o)
        );
    }
    match format {
        CheckFormat::Github => {
            let _ = write!(stdout, "{}", typejoin::render::gate::github(&annotations));
        }
        CheckFormat::Sarif => {
            let _ = write!(stdout, "{}", typejoin::render::gate::sarif(&annotations));
        }
        CheckFormat::Human | CheckFormat::Json => {}
    }
    let _ = stdout.flush();
    Ok(typejoin::exit_code(
        &reports,
        !failed.is_empty() || internal,
    ))
}
