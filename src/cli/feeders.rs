//! `rebind feeders`: its flags as the library's
//! [`rebind::feeders::command::FeedersOptions`].

use super::FeedersArgs;
use rebind::feeders::command::{self, FeedersOptions};
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
