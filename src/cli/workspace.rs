//! `rebind workspace`: its subcommand and flags as the library's
//! [`rebind::commands::workspace`] options; the run itself is
//! [`rebind::commands::workspace::run`].

use super::args::{WorkspaceArgs, WorkspaceCommand};
use rebind::commands::workspace::{self, Action, WorkspaceOptions};
use rebind::output::{Done, Sink};

pub fn run(a: WorkspaceArgs, sink: &mut Sink) -> Done {
    let (action, flags) = match a.command {
        WorkspaceCommand::Plan(f) => (Action::Plan, f),
        WorkspaceCommand::Apply(f) => (Action::Apply, f),
        WorkspaceCommand::Status(f) => (Action::Status, f),
        WorkspaceCommand::Rollback(f) => (Action::Rollback, f),
    };
    let options = WorkspaceOptions {
        action,
        format: flags.format.get(),
        file: flags.file,
        dry_run: flags.dry_run,
        yes: flags.yes,
    };
    workspace::run(&options, sink, &mut super::apply::Terminal)
}
