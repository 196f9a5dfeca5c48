//! The second decoded-data oracle: `decoded_oracle`'s input grammar and
//! checks, with the documents decoded by libyaml (`libyaml-safer`) instead of
//! yaml-rust2, the parser rebind itself uses, so the oracle is not rebind's
//! own reading of YAML. Inputs the two implementations read differently are
//! skipped (no verdict). See `tests/it/common/libyaml.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/common/oracle.rs"]
mod oracle;

#[path = "../../tests/it/common/libyaml.rs"]
mod libyaml;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if raw.len() > 16 * 1024 {
        return;
    }
    libyaml::QUIET_PORT_PANICS.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Err(e) = libyaml::libyaml_oracle(raw) {
        panic!("{e}");
    }
});
