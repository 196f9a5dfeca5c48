//! The `rebind` binary: parses arguments, runs the command through the
//! library, and maps the outcome to an exit code (see [`rebind::output::Exit`]).

mod cli;

use clap::Parser;
use rebind::output::{ColorChoice, Exit, Sink};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let color = ColorChoice::from(cli.color).enabled();
    let mut sink = Sink::stdio(color, cli.quiet);
    let exit = match cli::run(cli, &mut sink) {
        Ok(exit) => exit,
        Err(e) => {
            sink.error(&format!("{e:#}"));
            if e.chain()
                .any(|c| c.is::<rebind::git::AfterCommit>() || c.is::<rebind::output::Partial>())
            {
                Exit::AfterCommit
            } else {
                Exit::Error
            }
        }
    };
    let exit = match sink.finish() {
        Some(msg) => {
            sink.error(&msg);
            Exit::Error
        }
        None => exit,
    };
    ExitCode::from(exit.code())
}
