//! The command line: clap definitions, and one module per command that
//! only maps its flags to the library's options for that command (plain
//! data, no clap types) and calls the command's entry point
//! (`rebind::commands::apply::run`, `rebind::commands::scan::run`, ...), where the run is
//! resolved once and done. No domain decision lives here:
//! `tests/it/cli_layer.rs` fails when a module here names a library module
//! that does the work (git, the writer, the walk, the config...) instead of
//! an entry point.
//!
//! [`Cli::resolve`] settles everything about the run that is not the
//! command's own work (output format, colour, `-q`) before anything runs;
//! each command returns its report ([`Done`]) and `main` hands it to
//! [`rebind::output::report::conclude`], the one place that renders a
//! report, renders a failure and maps the exit code.
//!
//! To add a command: a variant of [`Command`] with its `Args`, its options
//! and `run(&Options) -> Done` (with `&mut Sink` if it shows progress) in a
//! library module, a module
//! here that maps the flags to the options, and a line in [`run`] and
//! [`Command::name`].

mod apply;
mod args;
mod check;
mod completions;
mod feeders;
mod help;
mod identity;
mod init;
mod scan;
mod secret;
mod secret_flags;
mod workspace;

pub use args::{Cli, Command};
use rebind::output::{Done, Sink};

/// The names of the commands, as typed.
pub fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Runs a resolved command, its progress going to `sink`; returns its
/// report for `main` to render.
pub fn run(command: Command, sink: &mut Sink) -> Done {
    match command {
        Command::Scan(a) => scan::run(a, sink),
        Command::Diff(a) => apply::diff(*a),
        Command::Apply(a) => apply::apply(*a, sink),
        Command::Secret(a) => secret::run(*a, sink),
        Command::Init(a) => init::run(a),
        Command::Check(a) => check::run(a),
        Command::Completions(a) => Ok(completions::completions(a)?),
        Command::Man(a) => Ok(completions::man(a)?),
        Command::Feeders(a) => feeders::run(a),
        Command::Identity(a) => identity::run(a),
        Command::Workspace(a) => workspace::run(a, sink),
    }
}
