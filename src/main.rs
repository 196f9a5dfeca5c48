//! The `rebind` binary: parses and resolves the command line, runs the
//! command through the library, and hands its outcome to
//! [`rebind::output::conclude`], which renders a failure and maps the exit
//! code (see [`rebind::output::Exit`]).

mod cli;

use clap::Parser;
use rebind::output::{conclude, Sink};
use std::process::ExitCode;

fn main() -> ExitCode {
    let run = cli::Cli::parse().resolve();
    let mut sink = Sink::stdio(run.color, run.quiet);
    let outcome = cli::run(run.command, &mut sink);
    let exit = conclude(&mut sink, run.name, run.format, outcome);
    ExitCode::from(exit.code())
}
