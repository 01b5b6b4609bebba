//! The command line: argument types, one module per command, and the file I/O they share.
//! Each command parses its arguments, calls the library, and renders what it gets.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod bench;
mod cast;
mod check;
mod codegen;
mod diff;
mod docs;
mod dot;
mod explain;
mod prove;
mod repair;
mod result_type;
mod run;
mod safety;
mod suggest;
mod synth;
mod table;

use clap::{Parser, Subcommand, ValueEnum};
use typejoin::{Engine, SafetyEngine, bench::Values};

/// A library enum as a clap argument: the library knows nothing of clap, so each option enum
/// it takes has a mirror here, with the variants' help.
macro_rules! value_enum {
    ($(#[doc = $doc:literal])* $name:ident => $lib:ident { $($(#[doc = $d:literal])* $v:ident),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
        pub enum $name {
            $($(#[doc = $d])* $v),+
        }

        impl From<$name> for $lib {
            fn from(x: $name) -> $lib {
                match x {
                    $($name::$v => $lib::$v),+
                }
            }
        }

        impl From<$lib> for $name {
            fn from(x: $lib) -> $name {
                match x {
                    $($lib::$v => $name::$v),+
                }
            }
        }
    };
}

value_enum! {
    /// Which verifier decides the laws.
    EngineArg => Engine {
        /// The exhaustive checker alone.
        Exhaustive,
        /// z3 alone (its witnesses confirmed on the table).
        Z3,
        /// Both, cross-checked witness for witness.
        Both,
    }
}

value_enum! {
    /// Which engine decides conversions of sources wider than 16 bits.
    SafetyEngineArg => SafetyEngine {
        /// Boundary-value search only.
        Search,
        /// Search, then z3 (falls back to the search's answer, marked `search`, when z3 cannot
        /// encode the conversion or gives up).
        Z3,
    }
}

value_enum! {
    /// What `bench`'s operands hold.
    ValuesArg => Values {
        /// Floats (and complex parts) drawn from N(0, 1) and rounded to the dtype; integers and
        /// bool over their full range: what an array library's users compute on.
        Normal,
        /// Random bit patterns: every encoding as likely (NaN, ±∞, subnormals and huge values
        /// are common, which sends float arithmetic and casts down their slow paths).
        Bits,
    }
}

use typejoin::{Diagnostic, Input, LoadError, render::ReportOptions};

#[derive(Parser)]
#[command(
    name = "typejoin",
    version,
    about = "Dtype promotion policies as verified data",
    after_help = "Environment:\n  NO_COLOR        no colour under --color auto\n  TYPEJOIN_LIBZ3  the libz3 to load when z3 is first asked (a path or a library name; \
                  default libz3.so.4, then libz3.so)"
)]
pub struct Cli {
    /// Colour: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// Input errors shown per file; the rest are counted.
    #[arg(long, global = true, default_value_t = typejoin::MAX_ERRORS)]
    max_errors: usize,
    /// The widest part of a source line an error quotes, in characters (`…` marks a cut).
    #[arg(long, global = true, default_value_t = typejoin::SNIPPET_CHARS)]
    snippet_width: usize,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
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
        #[arg(long, value_enum, default_value_t = EngineArg::from(Engine::default()))]
        engine: EngineArg,
        /// z3's time limit per query, in milliseconds; a timeout is reported as unknown.
        #[arg(long, default_value_t = 10_000)]
        timeout: u32,
        /// Decide the safety lints with z3 too (wide conversions proved, not only searched);
        /// slower by seconds per policy.
        #[arg(long)]
        prove_lints: bool,
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
        /// The generated policy that gives result dtypes and kernel semantics, or a policy
        /// file (`.toml`, or a measured table with `kernels`) whose laws hold, built as
        /// `codegen` would generate it.
        #[arg(long, default_value = "jax", value_parser = PolicyOrFile)]
        policy: String,
        /// The longest line read, in bytes; a longer one is answered with an `input` error.
        #[arg(long, default_value_t = typejoin::conformance::DEFAULT_MAX_LINE_BYTES)]
        max_line_bytes: usize,
        /// The largest array a kernel creates (a broadcast or reduction result), in elements.
        #[arg(long, default_value_t = typejoin::ops::DEFAULT_MAX_ELEMENTS)]
        max_elements: usize,
        /// The longest answer line, in bytes; a longer answer is replaced by an `input` error.
        #[arg(long, default_value_t = typejoin::conformance::DEFAULT_MAX_OUTPUT_BYTES)]
        max_output_bytes: u64,
    },
    /// Time one kernel on random inputs, output preallocated; prints one JSON line.
    Bench {
        /// An elementwise op (add, multiply, …) or `astype` (with --to).
        #[arg(long)]
        op: String,
        #[arg(long)]
        lhs: String,
        /// The second operand's dtype (binary ops), or a Python scalar: `i*` (3), `f*` (1.5),
        /// `c*` (1.5-0.5j), `b*` (True); or a zero-dim array: `float32@0d` (1.5; integers 3).
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
        /// The generated policy that gives the result dtype.
        #[arg(long, default_value = "jax", value_parser = generated_policies())]
        policy: String,
        /// Timed runs (after one warm-up).
        #[arg(long, default_value_t = 15)]
        runs: usize,
        /// The operands' values: `normal` (floats from N(0, 1), integers over their range) or
        /// `bits` (random bit patterns: many NaN, ±inf, subnormals).
        #[arg(long, value_enum, default_value_t = ValuesArg::from(Values::default()))]
        data: ValuesArg,
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
        /// The policies to document (`*.toml`, not recursing).
        #[arg(long, default_value = "lattices")]
        lattices: PathBuf,
        /// The measured tables to compare them with (`*.json`, not recursing).
        #[arg(long, default_value = "observed")]
        observed: PathBuf,
        /// The requirements files to synthesise lattices from (`*.toml`, not recursing).
        #[arg(long, default_value = "requirements")]
        requirements: PathBuf,
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
        #[arg(long, value_enum, default_value_t = SafetyEngineArg::from(SafetyEngine::default()))]
        engine: SafetyEngineArg,
    },
    /// Print the join table of a policy or observed table.
    Table {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: TableFormat,
        /// Write to this file (atomically) instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Each result as the dtype the library returns (`int8 ∨ f*` is float32 in PyTorch's
        /// policy, `int8@0d` is int8); rows and columns stay the operands.
        #[arg(long)]
        materialise: bool,
    },
    /// Where two policies or observed tables disagree: join entries (A's result → B's),
    /// counted by change and by operand kinds, and the edges of their orders. Exit 1 when
    /// they differ, so CI can pin a policy to a library.
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: DiffFormat,
        /// Compare results as the dtype the library returns: a policy's weak and category
        /// nodes (`int8 ∨ f* = f*`, `int8@0d`) as their dtype (`float64`, `int8`), a
        /// measured table's as measured.
        #[arg(long, visible_alias = "materialise-weak")]
        materialise: bool,
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
    /// The fewest join cells to change so that a table (or a policy's join table) is a
    /// lattice, found by z3's optimiser and proved minimal, each change with what it does to
    /// values; the repaired table and policy pass `check`. Exit 0 when nothing needs to
    /// change, 1 when the changes shown are needed, 2 when the file cannot be read or z3
    /// could not decide (docs/repair.md).
    Repair {
        file: PathBuf,
        /// Repair into a partial lattice: a pair may have no join, exactly when it has no
        /// common upper bound (a table's raising pairs can stay raising).
        #[arg(long)]
        partial: bool,
        /// Keep a pair's join as the table has it (`A,B`; repeatable).
        #[arg(long, value_name = "A,B")]
        keep: Vec<String>,
        /// What a change costs whose new join loses values of an operand that the table's
        /// did not (precision, range, sign, a component); 1 weighs every change alike.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        lossy_cost: u64,
        /// Wall-clock limit of the search, and of the proof, in milliseconds.
        #[arg(long, default_value_t = 120_000)]
        timeout: u32,
        #[arg(long, value_enum, default_value = "text")]
        format: ResultFormat,
        /// Write the repaired join table here (the observed-table JSON format).
        #[arg(long, value_name = "FILE")]
        table: Option<PathBuf>,
        /// Write the repaired policy here (.toml).
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// Write the proof of minimality here (SMT-LIB; z3 answers unsat).
        #[arg(long, value_name = "FILE")]
        proof: Option<PathBuf>,
    },
    /// A lattice from a requirements file (dtypes; required joins and orders; forbidden
    /// safety classes by kind; width bounds): the one with the fewest lossy promotions, then
    /// the fewest order relations, written as a policy with -o; or, when none exists, a
    /// minimal set of requirements that conflict, each by its line. Exit 0 when found, 1 on a
    /// conflict, 2 when the file cannot be read or z3 could not decide (docs/repair.md).
    Synth {
        file: PathBuf,
        /// Write the synthesised policy (.toml) here.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: ResultFormat,
        /// Wall-clock limit of the whole search, in milliseconds.
        #[arg(long, default_value_t = 120_000)]
        timeout: u32,
    },
    /// The n-ary result of any operands: the join of their nodes under a policy (a table's
    /// left fold), and the dtype the library returns for it. Operands may carry a category
    /// (`int8@0d`) or be Python scalars (`i*`, `f*`). Exit 1 when there is none.
    ResultType {
        file: PathBuf,
        /// One or more operands (names or short codes such as i8, bf16@0d, f*).
        #[arg(num_args = 1.., required = true)]
        operands: Vec<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: ResultFormat,
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
pub(crate) enum CheckFormat {
    Human,
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`), one per finding.
    Github,
    /// A SARIF 2.1.0 log (GitHub code scanning, IDEs).
    Sarif,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ResultFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SuggestFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SafetyFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum CastFormat {
    /// One line per element: source bits and value, destination bits and value.
    Text,
    Json,
    /// Raw little-endian destination storage units, one per element.
    Bin,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum TableFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

/// `--policy`: the names of the generated policies (src/generated), listed by `--help` and
/// suggested by clap for a misspelt one.
fn generated_policies() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(typejoin::GENERATED.iter().map(|p| p.name))
}

/// `run --policy`: a generated policy's name (listed by `--help`, suggested when misspelt) or
/// the path of a file.
#[derive(Clone)]
struct PolicyOrFile;

impl clap::builder::TypedValueParser for PolicyOrFile {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        if Path::new(value).is_file() {
            return Ok(value.to_string_lossy().into_owned());
        }
        generated_policies().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            typejoin::GENERATED
                .iter()
                .map(|p| clap::builder::PossibleValue::new(p.name)),
        ))
    }
}

pub(crate) fn load(path: &Path) -> Result<Input, LoadError> {
    Input::parse(&path.to_string_lossy(), &read(path)?)
}

/// [`load`], refused past a command's size limit (docs/limits.md).
pub(crate) fn load_within(path: &Path, limit: typejoin::SizeLimit) -> Result<Input, LoadError> {
    let input = load(path)?;
    limit.check(&input)?;
    Ok(input)
}

pub(crate) fn read(path: &Path) -> Result<String, LoadError> {
    let shown = path.to_string_lossy();
    let bytes = std::fs::read(path).map_err(|e| {
        LoadError::one(
            Diagnostic::file(&shown, format!("cannot read `{shown}`: {e}"))
                .with_help("check the path; `typejoin check` also takes directories"),
        )
    })?;
    typejoin::decode(&shown, bytes)
}

/// The files under `dir` whose extension is one of `exts`, sorted, hidden entries skipped;
/// with `recurse`, in subdirectories too (each directory's entries sorted). The one directory
/// walk of the CLI.
pub(crate) fn files_in(dir: &Path, exts: &[&str], recurse: bool) -> std::io::Result<Vec<PathBuf>> {
    fn walk(
        dir: &Path,
        exts: &[&str],
        recurse: bool,
        out: &mut Vec<PathBuf>,
    ) -> std::io::Result<()> {
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
                if recurse {
                    walk(&p, exts, recurse, out)?;
                }
            } else if p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, exts, recurse, &mut out)?;
    Ok(out)
}

/// Files named on the command line, with directories expanded to their `.toml` and `.json`
/// files (recursively, sorted, hidden entries skipped).
pub(crate) fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            out.extend(files_in(p, &["toml", "json"], true).map_err(|e| {
                LoadError::one(Diagnostic::file(
                    &p.to_string_lossy(),
                    format!("cannot read directory: {e}"),
                ))
            })?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

pub(crate) fn write_atomic(path: &Path, contents: &str) -> Result<(), LoadError> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`, so a
/// failure never leaves a half-written file. A symlink is followed to the file it names (as
/// `cp` does; a dangling one is refused, as `cp` refuses it), and a path that is not a regular
/// file (a FIFO, a device such as `/dev/null`, a socket) is written through, never replaced.
pub(crate) fn write_atomic_bytes(path: &Path, contents: &[u8]) -> Result<(), LoadError> {
    let shown = path.to_string_lossy().into_owned();
    let fail = |e: std::io::Error| {
        LoadError::one(Diagnostic::file(
            &shown,
            format!("cannot write `{shown}`: {e}"),
        ))
    };
    let path = &resolve_links(path).map_err(|e| {
        LoadError::one(
            Diagnostic::file(&shown, e)
                .with_help("create the file the link names first, or write to another path"),
        )
    })?;
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        use std::io::Write;
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(contents))
            .map_err(fail);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let pid = std::process::id();
    // `.NAME.tmpPID`, unless that is past the 255 bytes a file name may take.
    let tmp = match format!(".{name}.tmp{pid}") {
        t if t.len() <= 255 => dir.join(t),
        _ => dir.join(format!(".typejoin.tmp{pid}")),
    };
    // On a full or read-only disk the partial temporary file is removed, never left behind.
    std::fs::write(&tmp, contents).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// The path a chain of symlinks ends at (the path itself when it is no link); `Err` for a
/// dangling link or a loop.
fn resolve_links(path: &Path) -> Result<PathBuf, String> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at).map_err(|e| e.to_string())?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            // Not a link, or nothing there yet: the file to write.
            Ok(_) => return Ok(at),
            Err(_) if at.as_path() == path => return Ok(at),
            Err(_) => {
                return Err(format!(
                    "not writing through the dangling symlink `{}` (it names `{}`, which does not exist)",
                    path.display(),
                    at.display()
                ));
            }
        }
    }
    Err(format!("`{}` is a loop of symlinks", path.display()))
}

/// Runs one parsed command line: the exit code, with any input error rendered on stderr.
pub fn run(cli: Cli) -> ExitCode {
    ExitCode::from(run_code(cli))
}

/// [`run`]'s exit code as a number: what the Python package's `typejoin` command exits with.
pub fn run_code(cli: Cli) -> u8 {
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
    let errors = typejoin::Style {
        color: err_color,
        max_errors: cli.max_errors,
        snippet_width: cli.snippet_width,
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
            prove_lints,
        } => check::check(
            &paths,
            format,
            ReportOptions {
                witnesses: if all_witnesses { usize::MAX } else { witnesses },
                verbose,
                color,
            },
            (engine.into(), prove_lints),
            timeout,
            errors,
        ),
        Cmd::Codegen { files, out } => codegen::codegen(&files, &out),
        Cmd::Run {
            cases,
            policy,
            max_line_bytes,
            max_elements,
            max_output_bytes,
        } => run::run_cases(
            &cases,
            &policy,
            typejoin::conformance::Limits {
                max_line_bytes,
                max_elements,
                max_output_bytes,
            },
        ),
        Cmd::Docs {
            out,
            lattices,
            observed,
            requirements,
        } => docs::docs(&out, &lattices, &observed, &requirements),
        Cmd::Dot {
            file,
            output,
            highlight,
        } => dot::dot(&file, output.as_deref(), highlight.as_deref()),
        Cmd::Bench {
            op,
            lhs,
            rhs,
            to,
            n,
            threads,
            policy,
            runs,
            data,
        } => bench::bench(&typejoin::bench::Spec {
            op: &op,
            lhs: &lhs,
            rhs: rhs.as_deref(),
            to: to.as_deref(),
            n,
            threads,
            policy: &policy,
            runs,
            data: data.into(),
        }),
        Cmd::Prove {
            file,
            out,
            check,
            timeout,
        } => match (file, out, check) {
            (Some(file), Some(out), None) => prove::prove(&file, &out),
            (None, None, Some(dir)) => prove::prove_check(&dir, timeout),
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
            materialise,
        } => table::table(&file, format, output.as_deref(), materialise),
        Cmd::Safety {
            file,
            format,
            engine,
        } => safety::safety(&file, format, engine.into()),
        Cmd::Cast {
            src,
            dst,
            all,
            bits,
            format,
            output,
        } => cast::cast(&src, &dst, all, bits.as_deref(), format, output.as_deref()),
        Cmd::Explain { file, dtypes } => explain::explain(&file, &dtypes),
        Cmd::ResultType {
            file,
            operands,
            format,
        } => result_type::result_type(&file, &operands, format),
        Cmd::Suggest {
            file,
            add,
            format_of,
            max_degree,
            top,
            format,
        } => suggest::suggest(&file, &add, format_of.as_deref(), max_degree, top, format),
        Cmd::Diff {
            a,
            b,
            format,
            materialise,
        } => diff::diff(&a, &b, format, materialise),
        Cmd::Synth {
            file,
            output,
            format,
            timeout,
        } => synth::synth(&file, output.as_deref(), format, timeout),
        Cmd::Repair {
            file,
            partial,
            keep,
            lossy_cost,
            timeout,
            format,
            table,
            policy,
            proof,
        } => repair::repair(
            &file,
            &repair::Args {
                partial,
                keep: &keep,
                lossy_cost,
                timeout,
                format,
                table: table.as_deref(),
                policy: policy.as_deref(),
                proof: proof.as_deref(),
            },
        ),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprint!("{}", e.render_with(errors));
            2
        }
    }
}
