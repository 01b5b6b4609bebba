//! The `bench` command: time one kernel, print one JSON line.

use typejoin::{
    LoadError,
    bench::{Spec, measure},
};

pub(crate) fn bench(spec: &Spec) -> Result<u8, LoadError> {
    let m = measure(spec)?;
    println!(
        "{}",
        serde_json::to_string(&m).expect("a measurement serialises")
    );
    Ok(0)
}
