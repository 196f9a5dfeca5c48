//! The `rebind` binary: parses arguments, runs the library, maps errors to exit code 2.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rebind::cli::Cli::parse();
    match rebind::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
