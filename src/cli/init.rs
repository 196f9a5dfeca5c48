//! `rebind init`: its flags as the library's [`rebind::commands::init::InitOptions`].

use super::args::InitArgs;
use rebind::commands::init::{self, InitOptions};
use rebind::output::{Outcome, Sink};

pub fn run(a: InitArgs, sink: &mut Sink) -> Outcome {
    init::run(
        &InitOptions {
            path: a.path,
            format: a.format.get(),
        },
        sink,
    )
}
