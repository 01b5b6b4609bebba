//! The `typejoin` command line. The only place that does I/O.
//!
//! Exit codes: 0 all good, 1 checked and found violations, 2 input could not be read.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use typejoin::diag::{Diagnostic, LoadError, did_you_mean};
use typejoin::render::{self, ReportOptions};
use typejoin::{CheckOptions, Input};

#[derive(Parser)]
#[command(
    name = "typejoin",
    version,
    about = "Dtype promotion policies as verified data"
)]
struct Cli {
    /// Colour: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    color: ColorChoice,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check the lattice laws of policies (.toml) and observed tables (.json); directories recurse.
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "human")]
        format: CheckFormat,
        /// List every witness of every violated law, not only the first few.
        #[arg(long)]
        all_witnesses: bool,
        /// Witnesses shown per violated law.
        #[arg(long, default_value_t = 3)]
        witnesses: usize,
        /// Show every law's status, not only violations.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Print the join table of a policy or observed table.
    Table {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: TableFormat,
        /// Write to this file (atomically) instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Explain why `A ∨ B` is what it is; with three dtypes, both association orders.
    Explain {
        file: PathBuf,
        /// Two or three dtypes (names or short codes such as i8, bf16).
        #[arg(num_args = 2..=3, required = true)]
        dtypes: Vec<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum TableFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let err_color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let result = match cli.cmd {
        Cmd::Check {
            paths,
            format,
            all_witnesses,
            witnesses,
            verbose,
        } => check(
            &paths,
            format,
            ReportOptions {
                witnesses: if all_witnesses { usize::MAX } else { witnesses },
                verbose,
                color,
            },
            err_color,
        ),
        Cmd::Table {
            file,
            format,
            output,
        } => table(&file, format, output.as_deref()),
        Cmd::Explain { file, dtypes } => explain(&file, &dtypes),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprint!("{}", e.render(err_color));
            ExitCode::from(2)
        }
    }
}

fn load(path: &Path) -> Result<Input, LoadError> {
    let shown = path.to_string_lossy();
    let text = std::fs::read_to_string(path).map_err(|e| {
        LoadError::one(
            Diagnostic::file(&shown, format!("cannot read `{shown}`: {e}"))
                .with_help("check the path; `typejoin check` also takes directories"),
        )
    })?;
    Input::parse(&shown, &text)
}

/// Files named on the command line, with directories expanded to their `.toml` and `.json`
/// files (recursively, sorted, hidden entries skipped).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for p in entries {
            if p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "toml" || e == "json") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out).map_err(|e| {
                LoadError::one(Diagnostic::file(
                    &p.to_string_lossy(),
                    format!("cannot read directory: {e}"),
                ))
            })?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn check(
    paths: &[PathBuf],
    format: CheckFormat,
    o: ReportOptions,
    err_color: bool,
) -> Result<u8, LoadError> {
    let files = expand(paths)?;
    let mut reports = Vec::new();
    let mut failed: Vec<LoadError> = Vec::new();
    let opts = CheckOptions::default();
    let mut stdout = anstream::AutoStream::never(std::io::stdout().lock());
    for f in &files {
        match load(f) {
            Ok(input) => {
                let report = input.check(opts);
                if let CheckFormat::Human = format {
                    let _ = write!(stdout, "{}", render::human(&report, o));
                }
                reports.push(report);
            }
            Err(e) => {
                eprint!("{}", e.render(err_color));
                failed.push(e);
            }
        }
    }
    if files.is_empty() {
        return Err(LoadError::one(
            Diagnostic::file(&paths[0].to_string_lossy(), "no .toml or .json files found")
                .with_help(
                    "point `check` at policy files, observed tables, or directories holding them",
                ),
        ));
    }
    if let CheckFormat::Json = format {
        let mut doc: serde_json::Value =
            serde_json::from_str(&render::json(&reports, o)).expect("own JSON parses");
        if let Some(files) = doc["files"].as_array_mut() {
            for e in &failed {
                let d = &e.diagnostics[0];
                files.push(serde_json::json!({
                    "path": d.path, "ok": false, "error": e.to_string(),
                    "violations": [],
                }));
            }
        }
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON serialises")
        );
    }
    let _ = stdout.flush();
    Ok(if !failed.is_empty() {
        2
    } else if reports.iter().all(|r| r.ok()) {
        0
    } else {
        1
    })
}

fn table(file: &Path, format: TableFormat, output: Option<&Path>) -> Result<u8, LoadError> {
    let input = load(file)?;
    let t = input.table();
    let text = match format {
        TableFormat::Text => t.to_text(),
        TableFormat::Markdown => t.to_markdown(),
        TableFormat::Csv => t.to_csv(),
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

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`, so a
/// failure never leaves a half-written file.
fn write_atomic(path: &Path, contents: &str) -> Result<(), LoadError> {
    let shown = path.to_string_lossy().into_owned();
    let fail = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(
            &shown,
            format!("cannot write `{shown}`: {e}"),
        ))
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, contents).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

fn explain(file: &Path, dtypes: &[String]) -> Result<u8, LoadError> {
    let input = load(file)?;
    let t = input.table();
    let mut operands = Vec::new();
    for d in dtypes {
        match t.resolve(d) {
            Some(i) => operands.push(i),
            None => {
                let help = did_you_mean(d, t.names.iter().map(String::as_str)).map_or_else(
                    || format!("its dtypes are: {}", t.names.join(", ")),
                    |s| format!("did you mean `{s}`?"),
                );
                return Err(LoadError::one(
                    Diagnostic::file(
                        &file.to_string_lossy(),
                        format!("`{d}` is not a dtype of `{}`", input.name()),
                    )
                    .with_help(help),
                ));
            }
        }
    }
    print!("{}", typejoin::explain::explain(&input, &operands));
    Ok(0)
}
