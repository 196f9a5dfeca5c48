//! `rebind scan`: its flags as the library's [`rebind::commands::scan::ScanOptions`].

use super::args::ScanArgs;
use rebind::commands::scan::{self, ScanOptions};
use rebind::output::{Done, Sink};

pub fn run(a: ScanArgs, sink: &mut Sink) -> Done {
    scan::run(
        &ScanOptions {
            from: a.from,
            scope: a.walk.request(),
            format: a.format.get(),
        },
        sink,
    )
}
