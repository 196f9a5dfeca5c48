//! `rebind feeders`: its flags as the library's
//! [`rebind::commands::feeders::FeedersOptions`].

use super::args::FeedersArgs;
use rebind::commands::feeders::{self as command, FeedersOptions};
use rebind::output::Done;

pub fn run(a: FeedersArgs) -> Done {
    command::run(&FeedersOptions {
        path: a.path,
        base: a.base,
        live: a.live,
    })
}
