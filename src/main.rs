//! The `typejoin` command line (docs/architecture.md): `cli` parses the arguments, calls one
//! library function per command and renders what it gets.
//!
//! Exit codes: 0 all good, 1 checked and found violations, 2 input could not be read.

#![deny(clippy::undocumented_unsafe_blocks)]

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// Large arrays on transparent huge pages, as NumPy's are (`typejoin bench`, `run`).
#[global_allocator]
static ALLOC: typejoin::HugePages = typejoin::HugePages;

fn main() -> ExitCode {
    // Die quietly when stdout is a closed pipe (`typejoin table … | head`), like other Unix
    // tools, instead of panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: called before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cli::run(cli::Cli::parse())
}
