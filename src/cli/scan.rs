//! `rebind scan`: its flags as the library's [`rebind::commands::scan::ScanOptions`].

use super::args::ScanArgs;
use rebind::commands::scan::{self, ScanOptions};
use rebind::output::{Outcome, Sink};

pub fn run(a: ScanArgs, sink: &mut Sink) -> Outcome {
    scan::run(
        &ScanOptions {
            from: a.from,
            scope: a.walk.request(),
            format: a.format.get(),
        },
        sink,
    )
}
