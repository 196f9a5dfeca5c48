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
    if let Err(e) = rebind::signals::install() {
        sink.error(&format!("cannot catch SIGINT/SIGTERM/SIGHUP: {e}"));
        return ExitCode::from(Exit::Error.code());
    }
    let exit = match cli::run(cli, &mut sink) {
        Ok(exit) => exit,
        Err(e) => {
            sink.error(&format!("{e:#}"));
            // A signal stopped the run: 128 + its number, as shells expect.
            if let Some(i) = e
                .chain()
                .find_map(|c| c.downcast_ref::<rebind::signals::Interrupted>())
            {
                let _ = sink.finish();
                return ExitCode::from(i.exit_code());
            }
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
