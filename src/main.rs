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
        /// Which verifier decides: the exhaustive checker, z3, or both (cross-checked).
        #[arg(long, value_enum, default_value_t = Engine::default())]
        engine: Engine,
        /// z3's time limit per query, in milliseconds; a timeout is reported as unknown.
        #[arg(long, default_value_t = 10_000)]
        timeout: u32,
    },
    /// Write SMT-LIB proof obligations of a policy or table (`--out DIR`), or re-run every
    /// obligation under a directory with z3 and compare with its expected answer (`--check DIR`).
    Prove {
        #[arg(required_unless_present = "check")]
        file: Option<PathBuf>,
        /// Directory for the obligations, one `.smt2` file per law.
        #[arg(long, required_unless_present = "check", conflicts_with = "check")]
        out: Option<PathBuf>,
        /// Re-check every `.smt2` under this directory in-process.
        #[arg(long)]
        check: Option<PathBuf>,
        /// z3's time limit per obligation, in milliseconds.
        #[arg(long, default_value_t = 60_000)]
        timeout: u32,
    },
    /// Generate the Rust promotion module of each policy (refused when its laws fail), and
    /// the directory's `mod.rs`.
    Codegen {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output directory (the crate's is `src/generated`).
        #[arg(long)]
        out: PathBuf,
    },
    /// Run conformance cases (JSON lines, `-` for stdin) on the reference kernels: one answer
    /// line per case, in order; a bad line fails alone.
    Run {
        cases: PathBuf,
        /// A generated policy: jax, jax-x32, jax-strict, array-api, python.
        #[arg(long, default_value = "jax")]
        policy: String,
    },
    /// Time one kernel on random inputs, output preallocated; prints one JSON line.
    Bench {
        /// An elementwise op (add, multiply, …) or `astype` (with --to).
        #[arg(long)]
        op: String,
        #[arg(long)]
        lhs: String,
        /// The second operand's dtype (binary ops).
        #[arg(long)]
        rhs: Option<String>,
        /// The destination dtype of `astype`.
        #[arg(long)]
        to: Option<String>,
        /// Elements.
        #[arg(short, default_value_t = 10_000_000)]
        n: usize,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long, default_value = "jax")]
        policy: String,
        /// Timed runs (after one warm-up).
        #[arg(long, default_value_t = 15)]
        runs: usize,
    },
    /// The Hasse diagram of a policy, edges styled by safety class: DOT text, or SVG/PNG by
    /// the `dot` binary (chosen by the output's extension).
    Dot {
        file: PathBuf,
        /// `out.dot`, `out.svg` or `out.png` (written atomically); DOT on stdout without it.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Mark the join path of two dtypes, e.g. `int8,uint8`.
        #[arg(long)]
        highlight: Option<String>,
    },
    /// Write the generated documentation of every shipped policy: a page each (source,
    /// diagram, join table, laws, safety), an index, and the comparison page.
    Docs {
        /// Output directory (the project's is docs/lattices).
        #[arg(long)]
        out: PathBuf,
    },
    /// What every value of one format becomes in another (bit-exact, correctly rounded).
    Cast {
        /// Source dtype: any float format, or an integer / bool (names or short codes).
        src: String,
        /// Destination float format.
        dst: String,
        /// Every bit pattern of SRC (formats of at most 16 bits).
        #[arg(long, conflicts_with = "bits")]
        all: bool,
        /// Raw little-endian SRC storage units, one per element (as NumPy's `tofile`).
        #[arg(long)]
        bits: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: CastFormat,
        /// Write to this file (atomically) instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// What every edge and every join of a policy does to values: exact, precision-loss,
    /// overflow, sign-loss or drops-component, with the smallest witness.
    Safety {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: SafetyFormat,
        /// How sources wider than 16 bits are decided: a boundary-value search, or the search
        /// followed by z3's proof (the default when built with z3).
        #[arg(long, value_enum, default_value_t = SafetyEngine::default())]
        engine: SafetyEngine,
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
    /// Where two policies or observed tables disagree: join entries (A's result → B's),
    /// counted by change and by operand kinds, and the edges of their orders. Exit 1 when
    /// they differ, so CI can pin a policy to a library.
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: DiffFormat,
        /// Compare a policy's weak results (`int8 ∨ f* = f*`) as the dtype they materialise as
        /// (`float64`), as a library's table records them.
        #[arg(long)]
        materialise_weak: bool,
    },
    /// Where a new dtype can go so every law still holds: its immediate predecessors and
    /// successors, ranked by safety, each with the joins it creates and changes. A dtype the
    /// policy already has is placed as if removed, its own place marked.
    Suggest {
        file: PathBuf,
        /// The new dtype (a catalogue name, or any name with --format-of).
        #[arg(long)]
        add: String,
        /// Its float format: a catalogue float (`float8_e4m3fn`) or
        /// `exponent_bits=E,mantissa_bits=M[,bias=B][,infinities=BOOL][,nan=ENCODING]`.
        #[arg(long)]
        format_of: Option<String>,
        /// Most immediate predecessors, and successors, a placement may have (1 to 6).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=6))]
        max_degree: u8,
        /// Placements shown (best first).
        #[arg(long, default_value_t = 5)]
        top: usize,
        #[arg(long, value_enum, default_value = "text")]
        format: SuggestFormat,
    },
    /// Explain why `A ∨ B` is what it is; with three dtypes, both association orders.
    Explain {
        file: PathBuf,
        /// Two or three dtypes (names or short codes such as i8, bf16).
        #[arg(num_args = 2..=3, required = true)]
        dtypes: Vec<String>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    Exhaustive,
    Z3,
    Both,
}

impl Default for Engine {
    fn default() -> Self {
        if cfg!(feature = "z3") {
            Engine::Both
        } else {
            Engine::Exhaustive
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Human,
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`), one per finding.
    Github,
    /// A SARIF 2.1.0 log (GitHub code scanning, IDEs).
    Sarif,
}

#[derive(Clone, Copy, ValueEnum)]
enum SuggestFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum SafetyFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum CastFormat {
    /// One line per element: source bits and value, destination bits and value.
    Text,
    Json,
    /// Raw little-endian destination storage units, one per element.
    Bin,
}

#[derive(Clone, Copy, ValueEnum)]
enum TableFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

fn main() -> ExitCode {
    // Die quietly when stdout is a closed pipe (`typejoin table … | head`), like other Unix
    // tools, instead of panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: called before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
            engine,
            timeout,
        } => check(
            &paths,
            format,
            ReportOptions {
                witnesses: if all_witnesses { usize::MAX } else { witnesses },
                verbose,
                color,
            },
            engine,
            timeout,
            err_color,
        ),
        Cmd::Codegen { files, out } => codegen(&files, &out, err_color),
        Cmd::Run { cases, policy } => run_cases(&cases, &policy),
        Cmd::Docs { out } => docs(&out),
        Cmd::Dot {
            file,
            output,
            highlight,
        } => dot(&file, output.as_deref(), highlight.as_deref()),
        Cmd::Bench {
            op,
            lhs,
            rhs,
            to,
            n,
            threads,
            policy,
            runs,
        } => bench(
            &op,
            &lhs,
            rhs.as_deref(),
            to.as_deref(),
            n,
            threads,
            &policy,
            runs,
        ),
        Cmd::Prove {
            file,
            out,
            check,
            timeout,
        } => match (file, out, check) {
            (Some(file), Some(out), None) => prove(&file, &out),
            (None, None, Some(dir)) => prove_check(&dir, timeout),
            _ => Err(LoadError::one(
                Diagnostic::file(
                    "typejoin",
                    "use `prove FILE --out DIR` or `prove --check DIR`",
                )
                .with_help("see `typejoin prove --help`"),
            )),
        },
        Cmd::Table {
            file,
            format,
            output,
        } => table(&file, format, output.as_deref()),
        Cmd::Safety {
            file,
            format,
            engine,
        } => safety(&file, format, engine),
        Cmd::Cast {
            src,
            dst,
            all,
            bits,
            format,
            output,
        } => cast(&src, &dst, all, bits.as_deref(), format, output.as_deref()),
        Cmd::Explain { file, dtypes } => explain(&file, &dtypes),
        Cmd::Suggest {
            file,
            add,
            format_of,
            max_degree,
            top,
            format,
        } => suggest(&file, &add, format_of.as_deref(), max_degree, top, format),
        Cmd::Diff {
            a,
            b,
            format,
            materialise_weak,
        } => diff(&a, &b, format, materialise_weak),
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
    Input::parse(&path.to_string_lossy(), &read(path)?)
}

fn read(path: &Path) -> Result<String, LoadError> {
    let shown = path.to_string_lossy();
    std::fs::read_to_string(path).map_err(|e| {
        LoadError::one(
            Diagnostic::file(&shown, format!("cannot read `{shown}`: {e}"))
                .with_help("check the path; `typejoin check` also takes directories"),
        )
    })
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
                annotations.extend(e.diagnostics.iter().map(typejoin::gate::input_error));
                failed.push(e);
                continue;
            }
        };
        let report = match verify(&input, engine, o, timeout) {
            Ok(mut r) => {
                if let Input::Policy { policy, joins, .. } = &input {
                    let by = match engine {
                        Engine::Exhaustive => typejoin::safety::Engine::Search,
                        Engine::Z3 | Engine::Both => typejoin::safety::Engine::Z3,
                    };
                    r.lints = typejoin::safety::lint(policy, &joins.table, by);
                }
                r
            }
            Err(message) => {
                eprintln!("{message}");
                internal = true;
                continue;
            }
        };
        if let CheckFormat::Human = format {
            let _ = write!(stdout, "{}", render::human(&report, o));
        }
        annotations.extend(typejoin::gate::annotations(
            &input,
            &text,
            &report,
            o.witnesses,
        ));
        reports.push(report);
    }
    if let CheckFormat::Json = format {
        let mut files: Vec<serde_json::Value> =
            reports.iter().map(|r| render::json_file(r, o)).collect();
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
            let _ = write!(stdout, "{}", typejoin::gate::github(&annotations));
        }
        CheckFormat::Sarif => {
            let _ = write!(stdout, "{}", typejoin::gate::sarif(&annotations));
        }
        CheckFormat::Human | CheckFormat::Json => {}
    }
    let _ = stdout.flush();
    let violated = reports
        .iter()
        .any(|r| r.violated().next().is_some() || r.denied());
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

/// The report of one input by the chosen engine(s); `Err` is an internal disagreement.
#[cfg(feature = "z3")]
fn verify(
    input: &Input,
    engine: Engine,
    o: ReportOptions,
    timeout: u32,
) -> Result<typejoin::Report, String> {
    use typejoin::smt::solve::{self, Z3Options};
    let all = o.witnesses == usize::MAX;
    match engine {
        Engine::Exhaustive => Ok(input.check(CheckOptions::default())),
        Engine::Z3 => {
            let z3o = Z3Options {
                timeout_ms: timeout,
                // One more than shown, so a count that fits is known to be exact.
                limit: if all {
                    usize::MAX
                } else {
                    o.witnesses.max(1).saturating_add(1)
                },
            };
            Ok(solve::report(
                input,
                &solve::verify(input, z3o),
                o.witnesses,
            ))
        }
        Engine::Both => {
            let mut report = input.check(CheckOptions::default());
            let z3o = Z3Options {
                timeout_ms: timeout,
                limit: if all { usize::MAX } else { 1 },
            };
            let verdicts = solve::verify(input, z3o);
            solve::cross_check(input, &report, &verdicts).map_err(|d| d.to_string())?;
            report.engines.push("z3");
            for (check, v) in &verdicts {
                if let solve::Verdict::Unknown(reason) = v {
                    eprintln!(
                        "warning: z3 could not decide `{}` for {} ({reason}); the exhaustive verdict stands. Raise --timeout to cross-check it.",
                        check.law().key(),
                        input.path()
                    );
                }
            }
            Ok(report)
        }
    }
}

#[cfg(not(feature = "z3"))]
fn verify(
    input: &Input,
    _engine: Engine,
    _o: ReportOptions,
    _timeout: u32,
) -> Result<typejoin::Report, String> {
    Ok(input.check(CheckOptions::default()))
}

/// Writes one SMT-LIB obligation per law into `out`, replacing the ones already there.
fn prove(file: &Path, out: &Path) -> Result<u8, LoadError> {
    let input = load(file)?;
    let shown = file.to_string_lossy().replace('\\', "/");
    let text = std::fs::read_to_string(file)
        .map_err(|e| LoadError::one(Diagnostic::file(&shown, e.to_string())))?;
    let command = format!(
        "typejoin prove {shown} --out {}",
        out.to_string_lossy().replace('\\', "/")
    );
    let prov = typejoin::smt::Provenance {
        path: &shown,
        text: &text,
        command: &command,
    };
    let obligations = typejoin::smt::obligations(&input, &prov);
    let io = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(
            &out.to_string_lossy(),
            format!("cannot write: {e}"),
        ))
    };
    std::fs::create_dir_all(out).map_err(io)?;
    let keep: Vec<String> = obligations
        .iter()
        .map(|ob| format!("{}.smt2", ob.stem))
        .collect();
    for ob in &obligations {
        write_atomic(&out.join(format!("{}.smt2", ob.stem)), &ob.text)?;
        println!(
            "{}/{}.smt2: {} (expect {})",
            out.to_string_lossy(),
            ob.stem,
            ob.check.statement(),
            if ob.expect_unsat { "unsat" } else { "sat" }
        );
    }
    for entry in std::fs::read_dir(out).map_err(io)? {
        let p = entry.map_err(io)?.path();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".smt2") && !keep.contains(&name) {
            std::fs::remove_file(&p).map_err(io)?;
        }
    }
    Ok(0)
}

/// Writes one Rust module per verified policy into `out`, and `out/mod.rs`; a policy whose
/// laws fail is refused (exit 1, its report) and nothing is written.
fn codegen(files: &[PathBuf], out: &Path, err_color: bool) -> Result<u8, LoadError> {
    let shown = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let command = format!(
        "typejoin codegen {} --out {}",
        files.iter().map(|f| shown(f)).collect::<Vec<_>>().join(" "),
        shown(out)
    );
    let mut modules: Vec<(String, String)> = Vec::new();
    let mut refused = false;
    for f in files {
        let input = load(f)?;
        let Input::Policy { policy, joins, .. } = &input else {
            return Err(LoadError::one(
                Diagnostic::file(&shown(f), "codegen needs a policy (.toml)")
                    .with_help("an observed table has no lattice to generate from"),
            ));
        };
        if let Some(why) = typejoin::codegen::unsupported(policy) {
            return Err(LoadError::one(Diagnostic::file(&shown(f), why).with_help(
                "the kernels cover the catalogue dtypes; remove the dtype or leave this policy out",
            )));
        }
        let report = input.check(CheckOptions::default());
        if !report.ok() {
            eprintln!(
                "{}: refused: the laws do not hold; nothing was written",
                shown(f)
            );
            let _ = err_color;
            print!("{}", render::human(&report, ReportOptions::default()));
            refused = true;
            continue;
        }
        let text = std::fs::read_to_string(f)
            .map_err(|e| LoadError::one(Diagnostic::file(&shown(f), e.to_string())))?;
        let prov = typejoin::codegen::Provenance {
            path: &shown(f),
            text: &text,
            command: &command,
        };
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = typejoin::codegen::module_name(&stem);
        if modules.iter().any(|(m, _)| *m == name) {
            return Err(LoadError::one(
                Diagnostic::file(&shown(f), format!("a second policy named `{name}`"))
                    .with_help("module names come from file stems; rename one file"),
            ));
        }
        modules.push((name, typejoin::codegen::module(policy, joins, &prov)));
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
        &typejoin::codegen::index(&names, &command),
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

/// The generated policy of a name, or an error listing the names.
fn generated_policy(name: &str) -> Result<&'static typejoin::promote::Generated, LoadError> {
    typejoin::promote::Generated::named(name).ok_or_else(|| {
        let names: Vec<&str> = typejoin::generated::ALL.iter().map(|p| p.name).collect();
        let help = did_you_mean(name, names.iter().copied()).map_or_else(
            || format!("generated policies: {}", names.join(", ")),
            |s| format!("did you mean `{s}`?"),
        );
        LoadError::one(
            Diagnostic::file("--policy", format!("no generated policy `{name}`")).with_help(help),
        )
    })
}

/// Times a kernel: random bit patterns in, preallocated output, one warm-up, `runs` runs.
#[allow(clippy::too_many_arguments)]
fn bench(
    op: &str,
    lhs: &str,
    rhs: Option<&str>,
    to: Option<&str>,
    n: usize,
    threads: usize,
    policy: &str,
    runs: usize,
) -> Result<u8, LoadError> {
    use typejoin::array::{Array, DType};
    use typejoin::ops::{self, Arg};
    let usage = |msg: String, help: &str| {
        LoadError::one(Diagnostic::file("typejoin bench", msg).with_help(help))
    };
    let policy = generated_policy(policy)?;
    let dtype = |name: &str| {
        typejoin::dtype::canonical(name)
            .and_then(DType::named)
            .ok_or_else(|| usage(format!("unknown dtype `{name}`"), "use a catalogue name"))
    };
    let mut rng = typejoin::synth::Rng::new(7);
    let random = |d: DType, rng: &mut typejoin::synth::Rng| {
        let w = d.pattern_bits();
        let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let bits: Vec<[u64; 2]> = (0..n)
            .map(|_| {
                [
                    rng.next_u64() & mask,
                    if d.is_complex() {
                        rng.next_u64() & mask
                    } else {
                        0
                    },
                ]
            })
            .collect();
        Array::from_bits(d, vec![n], &bits).expect("fits")
    };
    let a = random(dtype(lhs)?, &mut rng);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| usage(format!("cannot start {threads} threads: {e}"), "use fewer"))?;
    type Kernel<'a> = Box<dyn FnMut() -> Result<(), typejoin::ops::OpError> + Send + 'a>;
    let (out_name, rhs_name, bytes, mut kernel): (String, Option<String>, usize, Kernel) = if op
        == "astype"
    {
        let to = dtype(to.ok_or_else(|| usage("astype needs --to".into(), "e.g. --to float32"))?)?;
        let mut out = Array::zeros(to, vec![n]);
        let bytes = n * (unit_bytes(a.dtype) + unit_bytes(to));
        (
            to.name().to_string(),
            None,
            bytes,
            Box::new(move || ops::astype_into(&a, &mut out)),
        )
    } else {
        let o = ops::Op::named(op).ok_or_else(|| {
            usage(
                format!("unknown op `{op}`"),
                "elementwise binary ops, or astype",
            )
        })?;
        let rhs = dtype(
            rhs.ok_or_else(|| usage("a binary op needs --rhs".into(), "e.g. --rhs float32"))?,
        )?;
        let b = random(rhs, &mut rng);
        let (x, y) = (Arg::Array(a), Arg::Array(b));
        let probe = ops::binary(policy, o, &x, &y)
            .map_err(|e| usage(e.message, "pick dtypes the policy promotes"))?;
        let bytes = n * (unit_bytes(x_dtype(&x)) + unit_bytes(rhs) + unit_bytes(probe.dtype));
        let name = probe.dtype.name().to_string();
        let mut out = probe;
        (
            name,
            Some(rhs.name().to_string()),
            bytes,
            Box::new(move || ops::binary_into(policy, o, &x, &y, &mut out)),
        )
    };
    let mut times = Vec::with_capacity(runs);
    pool.install(|| -> Result<(), LoadError> {
        let fail =
            |e: typejoin::ops::OpError| usage(e.message, "see `typejoin run` for the op's rules");
        kernel().map_err(fail)?;
        for _ in 0..runs.max(1) {
            let t = std::time::Instant::now();
            kernel().map_err(fail)?;
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(())
    })?;
    times.sort_by(f64::total_cmp);
    let best = times[0];
    let median = times[times.len() / 2];
    let line = serde_json::json!({
        "op": op, "lhs": dtype(lhs)?.name(), "rhs": rhs_name, "out": out_name, "n": n,
        "threads": threads.max(1),
        "ns_per_element_best": best * 1e9 / n as f64,
        "ns_per_element_median": median * 1e9 / n as f64,
        "gb_per_s_best": bytes as f64 / best / 1e9,
    });
    println!("{line}");
    Ok(0)
}

fn x_dtype(a: &typejoin::ops::Arg) -> typejoin::array::DType {
    match a {
        typejoin::ops::Arg::Array(a) => a.dtype,
        typejoin::ops::Arg::Scalar(_) => unreachable!("bench operands are arrays"),
    }
}

/// Bytes of one storage unit.
fn unit_bytes(d: typejoin::array::DType) -> usize {
    use typejoin::array::Unit;
    match d.unit() {
        Unit::U8 => 1,
        Unit::U16 => 2,
        Unit::U32 => 4,
        Unit::U64 | Unit::C64 => 8,
        Unit::C128 => 16,
    }
}

/// Writes a policy's diagram as DOT (stdout or `.dot`) or renders it (`.svg`, `.png`).
fn dot(file: &Path, output: Option<&Path>, highlight: Option<&str>) -> Result<u8, LoadError> {
    let input = load(file)?;
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
        let text = typejoin::dot::to_dot(&typejoin::dot::table_diagram(&o.name, &o.table, &report));
        return write_diagram(&shown, &text, output);
    };
    let pair = match highlight {
        None => None,
        Some(h) => {
            let names: Vec<&str> = h.split(',').map(str::trim).collect();
            let find = |n: &str| -> Result<usize, LoadError> {
                let c = typejoin::dtype::canonical(n).unwrap_or(n);
                policy.dtypes.iter().position(|d| d == c).ok_or_else(|| {
                    let help = did_you_mean(n, policy.dtypes.iter().map(String::as_str))
                        .map_or("name two dtypes of the policy".into(), |s| {
                            format!("did you mean `{s}`?")
                        });
                    LoadError::one(
                        Diagnostic::file(
                            "--highlight",
                            format!("`{n}` is not a dtype of {}", policy.name),
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
    let g = typejoin::dot::diagram(policy, lattice, pair, typejoin::safety::Engine::best());
    write_diagram(&shown, &typejoin::dot::to_dot(&g), output)
}

/// DOT on stdout, or a `.dot`/`.svg`/`.png` file by its extension.
fn write_diagram(shown: &str, text: &str, output: Option<&Path>) -> Result<u8, LoadError> {
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
        "dot" | "gv" => typejoin::dot::with_header(&text, &shown.replace('\\', "/")).into_bytes(),
        "svg" | "png" => typejoin::dot::render(&text, &ext)
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

/// Writes docs/lattices: a page and a diagram (DOT, and SVG when graphviz is installed) per
/// shipped policy (`lattices/*.toml`), the index, and the comparison with `observed/` tables.
fn docs(out: &Path) -> Result<u8, LoadError> {
    let shown = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let io = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(&shown(out), format!("cannot write: {e}")))
    };
    let list = |dir: &str, ext: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.retain(|p| p.extension().is_some_and(|x| x == ext));
        v.sort();
        v
    };
    std::fs::create_dir_all(out).map_err(io)?;
    let read = |dir: &str, ext: &str| -> Result<Vec<(String, String)>, LoadError> {
        list(dir, ext)
            .iter()
            .map(|f| {
                std::fs::read_to_string(f)
                    .map(|t| (shown(f), t))
                    .map_err(|e| LoadError::one(Diagnostic::file(&shown(f), e.to_string())))
            })
            .collect()
    };
    let files = typejoin::pages::generate(&read("lattices", "toml")?, &read("observed", "json")?)?;
    for (name, text) in &files {
        write_atomic(&out.join(name), text)?;
        println!("{}/{name}", shown(out));
        if let Some(stem) = name.strip_suffix(".dot") {
            match typejoin::dot::render(text, "svg") {
                Ok(svg) => write_atomic_bytes(&out.join(format!("{stem}.svg")), &svg)?,
                Err(m) => eprintln!("warning: {stem}.svg not written: {m}"),
            }
        }
    }
    Ok(0)
}

/// Answers every case of a JSON-lines file (or stdin), streaming.
fn run_cases(cases: &Path, policy: &str) -> Result<u8, LoadError> {
    use std::io::BufRead;
    let policy = generated_policy(policy)?;
    let shown = cases.to_string_lossy();
    let reader: Box<dyn BufRead> = if shown == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(cases).map_err(|e| {
                LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}")))
            })?,
        ))
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| {
            LoadError::one(Diagnostic::file(
                &shown,
                format!("line {}: cannot read: {e}", n + 1),
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        if writeln!(out, "{}", typejoin::conformance::run_line(policy, &line)).is_err() {
            return Ok(0); // the reader went away (a closed pipe)
        }
    }
    let _ = out.flush();
    Ok(0)
}

/// Every `.smt2` file under `dir`, sorted.
fn smt2_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            if e.is_dir() {
                walk(&e, out)?;
            } else if e.extension().is_some_and(|x| x == "smt2") {
                out.push(e);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| {
        LoadError::one(Diagnostic::file(
            &dir.to_string_lossy(),
            format!("cannot read: {e}"),
        ))
    })?;
    if files.is_empty() {
        return Err(LoadError::one(Diagnostic::file(
            &dir.to_string_lossy(),
            "no .smt2 files found",
        )));
    }
    Ok(files)
}

/// Re-runs every obligation under `dir` with z3 in-process and compares with `; expect:`.
#[cfg(feature = "z3")]
fn prove_check(dir: &Path, timeout: u32) -> Result<u8, LoadError> {
    use typejoin::smt::{expected, solve};
    let files = smt2_files(dir)?;
    let (mut bad, mut unknown) = (0, 0);
    for f in &files {
        let shown = f.to_string_lossy();
        let text = std::fs::read_to_string(f)
            .map_err(|e| LoadError::one(Diagnostic::file(&shown, e.to_string())))?;
        let Some(expect_unsat) = expected(&text) else {
            return Err(LoadError::one(
                Diagnostic::file(&shown, "no `; expect: sat|unsat` line in the header")
                    .with_help("regenerate it with `typejoin prove FILE --out DIR`"),
            ));
        };
        let opts = solve::Z3Options {
            timeout_ms: timeout,
            limit: 1,
        };
        let word = |u: bool| if u { "unsat" } else { "sat" };
        match solve::solve(&text, &[], 4, opts) {
            solve::Verdict::Unknown(r) => {
                println!("? {shown}: unknown ({r})");
                unknown += 1;
            }
            v => {
                let got = v == solve::Verdict::Holds;
                if got == expect_unsat {
                    println!("✓ {shown}: {}", word(got));
                } else {
                    println!(
                        "✗ {shown}: z3 says {}, the file expects {}",
                        word(got),
                        word(expect_unsat)
                    );
                    bad += 1;
                }
            }
        }
    }
    println!(
        "{} obligations: {} as expected, {bad} not, {unknown} unknown",
        files.len(),
        files.len() - bad - unknown
    );
    Ok(if bad > 0 {
        1
    } else if unknown > 0 {
        2
    } else {
        0
    })
}

#[cfg(not(feature = "z3"))]
fn prove_check(dir: &Path, _timeout: u32) -> Result<u8, LoadError> {
    smt2_files(dir)?;
    Err(LoadError::one(
        Diagnostic::file("typejoin", "this typejoin was built without z3").with_help(
            "rebuild with the default `z3` feature, or run the files with the `z3` binary",
        ),
    ))
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

fn cast(
    src: &str,
    dst: &str,
    all: bool,
    bits: Option<&Path>,
    format: CastFormat,
    output: Option<&Path>,
) -> Result<u8, LoadError> {
    use typejoin::format::{IntTarget, Source, cast_bits, float_format};
    let usage = |msg: String, help: &str| {
        Err(LoadError::one(
            Diagnostic::file("typejoin cast", msg).with_help(help),
        ))
    };
    let names: Vec<&str> = typejoin::dtype::CATALOGUE.iter().map(|d| d.name).collect();
    let resolve = |n: &str| -> Result<&'static str, LoadError> {
        typejoin::dtype::canonical(n).ok_or_else(|| {
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
        Float(typejoin::format::FloatFormat),
        Int(typejoin::format::IntTarget),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SafetyEngine {
    Search,
    Z3,
}

impl Default for SafetyEngine {
    fn default() -> Self {
        match typejoin::safety::Engine::best() {
            typejoin::safety::Engine::Z3 => SafetyEngine::Z3,
            typejoin::safety::Engine::Search => SafetyEngine::Search,
        }
    }
}

fn safety(file: &Path, format: SafetyFormat, engine: SafetyEngine) -> Result<u8, LoadError> {
    if engine == SafetyEngine::Z3 && !cfg!(feature = "z3") {
        return Err(LoadError::one(
            Diagnostic::file("typejoin", "this typejoin was built without z3")
                .with_help("use `--engine search`, or rebuild with the default `z3` feature"),
        ));
    }
    let engine = match engine {
        SafetyEngine::Search => typejoin::safety::Engine::Search,
        SafetyEngine::Z3 => typejoin::safety::Engine::Z3,
    };
    let input = load(file)?;
    let Input::Policy { policy, joins, .. } = &input else {
        return Err(LoadError::one(
            Diagnostic::file(
                &file.to_string_lossy(),
                "safety analysis needs a policy (.toml)",
            )
            .with_help("an observed table has no formats or edges; check it with `typejoin check`"),
        ));
    };
    let conversions = typejoin::safety::analyse(policy, &joins.table, engine);
    let text = match format {
        SafetyFormat::Json => {
            let list: Vec<serde_json::Value> = conversions
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "from": c.from, "to": c.to, "via": c.via, "class": c.class.key(),
                        "witness": c.witness,
                        "decided_by": c.decided_by.key(),
                        "all": c.all.iter().map(|(k, w)| serde_json::json!({"class": k.key(), "value": w.value, "becomes": w.becomes})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let doc = serde_json::json!({"policy": policy.name, "conversions": list});
            let mut t = serde_json::to_string_pretty(&doc).expect("JSON serialises");
            t.push('\n');
            t
        }
        SafetyFormat::Markdown => typejoin::safety::markdown(&conversions),
        SafetyFormat::Text => {
            let mut t = String::new();
            for c in &conversions {
                let w = c.witness.as_ref().map_or(String::new(), |w| {
                    format!(": {} becomes {}", w.value, w.becomes)
                });
                t += &format!(
                    "{:<18} → {:<18} {:<4}  {:<11}  {}{w}\n",
                    c.from,
                    c.to,
                    c.via,
                    c.decided_by.key(),
                    c.class.key()
                );
            }
            t
        }
    };
    print!("{text}");
    Ok(0)
}

fn write_atomic(path: &Path, contents: &str) -> Result<(), LoadError> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`, so a
/// failure never leaves a half-written file.
fn write_atomic_bytes(path: &Path, contents: &[u8]) -> Result<(), LoadError> {
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

fn diff(a: &Path, b: &Path, format: DiffFormat, materialise: bool) -> Result<u8, LoadError> {
    let (a, b) = (load(a)?, load(b)?);
    let d = typejoin::diff::diff(&a, &b, materialise);
    let text = match format {
        DiffFormat::Text => typejoin::diff::text(&d),
        DiffFormat::Markdown => typejoin::diff::markdown(&d),
        DiffFormat::Json => typejoin::diff::json(&d),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(if d.same() { 0 } else { 1 })
}

fn suggest(
    file: &Path,
    add: &str,
    format_of: Option<&str>,
    max_degree: u8,
    top: usize,
    format: SuggestFormat,
) -> Result<u8, LoadError> {
    let shown = file.to_string_lossy();
    let Input::Policy { policy, .. } = load(file)? else {
        return Err(LoadError::one(
            Diagnostic::file(
                &shown,
                "an observed table has no edges to place a dtype between",
            )
            .with_help("suggest works on a policy (.toml); `typejoin check` tests a table"),
        ));
    };
    let usage = |m: String, help: &str| {
        LoadError::one(Diagnostic::file("typejoin suggest", m).with_help(help))
    };
    let name = typejoin::dtype::canonical(add).unwrap_or(add);
    let decl = format_of
        .map(|f| {
            typejoin::suggest::parse_format(f).map_err(|e| {
                usage(
                    format!("--format-of `{f}`: {e}"),
                    "see docs/format.md, [formats]",
                )
            })
        })
        .transpose()?;
    let options = typejoin::suggest::Options {
        max_degree: max_degree.into(),
        top,
    };
    let s = typejoin::suggest::suggest(&policy, name, decl.as_ref(), options)
        .map_err(|e| usage(e, "see `typejoin suggest --help`"))?;
    let text = match format {
        SuggestFormat::Json => typejoin::suggest::json(&s),
        SuggestFormat::Text => typejoin::suggest::text(&s),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    Ok(0)
}
