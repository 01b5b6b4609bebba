//! The `prove` command: write SMT-LIB obligations, or re-check them with z3.

use std::path::{Path, PathBuf};

use typejoin::{Diagnostic, LoadError};

use super::*;

/// Writes one SMT-LIB obligation per law into `out`, replacing the ones already there.
pub(crate) fn prove(file: &Path, out: &Path) -> Result<u8, LoadError> {
    let text = read(file)?;
    let input = typejoin::Input::parse(&file.to_string_lossy(), &text)?;
    typejoin::SizeLimit::PROVE.check(&input)?;
    let shown = file.to_string_lossy().replace('\\', "/");
    let command = format!(
        "typejoin prove {shown} --out {}",
        out.to_string_lossy().replace('\\', "/")
    );
    let obligations = typejoin::smt::obligations(&input, &shown, &command);
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

/// Every `.smt2` file under `dir`, sorted.
pub(crate) fn smt2_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let files = files_in(dir, &["smt2"], true).map_err(|e| {
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
pub(crate) fn prove_check(dir: &Path, timeout: u32) -> Result<u8, LoadError> {
    use typejoin::smt::{expected, solve};
    let files = smt2_files(dir)?;
    z3_available()?;
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
pub(crate) fn prove_check(dir: &Path, _timeout: u32) -> Result<u8, LoadError> {
    smt2_files(dir)?;
    z3_available()?;
    unreachable!("a build without z3 has no z3 to run")
}

fn z3_available() -> Result<(), LoadError> {
    typejoin::smt::z3_available().map_err(|e| {
        LoadError::one(
            Diagnostic::file("typejoin", e).with_help("run the files with the `z3` binary"),
        )
    })
}
