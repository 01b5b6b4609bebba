//! The `explain` command: why a join is what it is.

use std::path::Path;

use typejoin::{Diagnostic, LoadError, did_you_mean};

use super::*;

pub(crate) fn explain(file: &Path, dtypes: &[String]) -> Result<u8, LoadError> {
    let input = load(file)?;
    let t = input.table();
    let mut operands = Vec::new();
    for d in dtypes {
        match input.resolve(d) {
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
    print!("{}", typejoin::explain(&input, &operands));
    Ok(0)
}
