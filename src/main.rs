//! The `rebind` binary: parses arguments, runs the library, maps errors to exit code 2
//! (3 when the commit was made and what follows it failed).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rebind::cli::Cli::parse();
    match rebind::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.chain().any(|c| c.is::<rebind::git::AfterCommit>()) {
                ExitCode::from(rebind::git::EXIT_AFTER_COMMIT)
            } else {
                ExitCode::from(2)
            }
        }
    }
}
