//! `rebind scan`: its flags as the library's [`rebind::scan::ScanOptions`].

use super::ScanArgs;
use rebind::output::{Outcome, Sink};
use rebind::scan::{self, ScanOptions};

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
