//! The `rebind` binary: parses and resolves the command line, runs the
//! command through the library, and hands the report it returns to
//! [`rebind::output::report::conclude`], which renders it, renders a
//! failure and decides the exit code, signals included (see
//! [`rebind::output::Exit`]); a usage error's code is
//! [`rebind::output::usage_error`]'s.

mod cli;

use clap::Parser;
use rebind::output::report::conclude;
use rebind::output::{usage_error, Sink};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // clap's own usage error on stderr; asked for JSON, the JSON
            // error report on stdout too.
            let _ = e.print();
            let text = e.to_string();
            let head = text.split("\n\n").next().unwrap_or_default();
            let head = head.strip_prefix("error: ").unwrap_or(head);
            let message: Vec<&str> = head.lines().map(str::trim).collect();
            let message = message.join(" ");
            let args: Vec<String> = std::env::args().skip(1).collect();
            let mut sink = Sink::stdio(false, false);
            return ExitCode::from(usage_error(
                &mut sink,
                &cli::command_names(),
                &args,
                &message,
            ));
        }
    };
    let run = cli.resolve();
    let mut sink = Sink::stdio(run.color, run.quiet);
    let done = match rebind::sys::signals::install(say_on_signal) {
        Err(e) => Err(anyhow::anyhow!("cannot catch SIGINT/SIGTERM/SIGHUP: {e}").into()),
        Ok(()) => cli::run(run.command, &mut sink),
    };
    ExitCode::from(conclude(&mut sink, run.name, run.format, done))
}

/// What the signal thread says, on stderr; a closed or full stderr (the
/// terminal hung up) is ignored.
fn say_on_signal(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\nrebind: {message}");
}
