//! `rebind feeders`: its flags as the library's
//! [`rebind::commands::feeders::FeedersOptions`].

use super::args::FeedersArgs;
use rebind::commands::feeders::{self as command, FeedersOptions};
use rebind::output::{Outcome, Sink};

pub fn run(a: FeedersArgs, sink: &mut Sink) -> Outcome {
    command::run(
        &FeedersOptions {
            path: a.path,
            base: a.base,
            live: a.live,
            format: a.format.get(),
        },
        sink,
    )
}
