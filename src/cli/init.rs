//! `rebind init`: its flags as the library's [`rebind::commands::init::InitOptions`].

use super::args::InitArgs;
use rebind::commands::init::{self, InitOptions};
use rebind::output::Done;

pub fn run(a: InitArgs) -> Done {
    init::run(&InitOptions { path: a.path })
}
