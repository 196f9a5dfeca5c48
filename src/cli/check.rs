//! `rebind check`: its flags as the library's [`rebind::commands::check::CheckOptions`].

use super::args::CheckArgs;
use rebind::commands::check::{self, CheckOptions};
use rebind::output::Done;

pub fn run(a: CheckArgs) -> Done {
    check::run(&CheckOptions {
        files: a.files,
        config: a.config,
        allow_unknown: a.allow_unknown,
    })
}
