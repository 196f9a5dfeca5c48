//! `rebind secret`: its flags as the library's
//! [`rebind::commands::secret::SecretCommand`], and the flags that shape the
//! cluster Secret (shared with `apply --secret-out`).

use super::args::SecretArgs;
use rebind::commands::secret::{self as command, SecretCommand};
use rebind::output::{Done, Sink};

pub fn run(a: SecretArgs, sink: &mut Sink) -> Done {
    command::run(
        &SecretCommand {
            options: a.opts.options(),
            name: a.name.unwrap_or_default(),
            server: a.server.unwrap_or_default(),
            out: a.out,
            repo: a.repo,
        },
        sink,
    )
}
