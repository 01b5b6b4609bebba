//! The `run` command: the conformance runner, one answer line per case.

use std::path::Path;

use typejoin::{
    Diagnostic, Generated, Input, LoadError,
    conformance::{Limits, run_stream},
};

/// The policy `--policy` names: a generated one by its name, or a policy file (`.toml`) or
/// measured table with `kernels` (`.json`), built at run time as codegen would generate it.
fn policy_named(policy: &str) -> Result<&'static Generated, LoadError> {
    let shipped = typejoin::policy(policy);
    if shipped.is_ok() || !Path::new(policy).is_file() {
        return shipped;
    }
    let text = super::read(Path::new(policy))?;
    let input = Input::parse(policy, &text)?;
    typejoin::SizeLimit::CODEGEN.check(&input)?;
    typejoin::generate(&input)
}

/// Answers every case of a JSON-lines file (or stdin), streaming.
pub(crate) fn run_cases(cases: &Path, policy: &str, limits: Limits) -> Result<u8, LoadError> {
    let policy = policy_named(policy)?;
    let shown = cases.to_string_lossy();
    let reader: Box<dyn std::io::BufRead> = if shown == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(cases).map_err(|e| {
                LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}")))
            })?,
        ))
    };
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    run_stream(policy, reader, out, limits)
        .map_err(|e| LoadError::one(Diagnostic::file(&shown, format!("cannot read: {e}"))))?;
    Ok(0)
}
