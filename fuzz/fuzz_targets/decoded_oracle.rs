//! Differential target whose oracle is the decoded data, not rebind's own
//! reading of the bytes: the input is parsed with yaml-rust2's `YamlLoader`
//! before and after a planned rebind, and
//!
//! - when a rewrite is planned, the new text must load, and every decoded
//!   string must be the old one with each endpoint swapped (endpoints inside
//!   `{{ ... }}` template actions and bare IP addresses may stay: they are
//!   reported, not rewritten, outside a cluster position); nothing else in
//!   the data may change;
//! - when nothing is planned and nothing refused, no decoded string may hold
//!   the old endpoint outside those exceptions (it would have been missed in
//!   silence);
//! - a refusal is only for an endpoint behind escapes that cannot be
//!   rewritten in place, or one of the refusals by design (two keys made
//!   equal, a dot left after an IP address or port, an IPv6 URL in a plain
//!   flow value); a failed verification is a disagreement between locate,
//!   splice and verify.
//!
//! "The endpoint" in a decoded string is what `endpoint::find_all` reads in
//! that string alone, so the file-level machinery (escapes, comments,
//! malformed URLs elsewhere in the file, splicing) is what is tested.
//!
//! The input grammar (tokens for the endpoint, its escapes, the IPv6 pair)
//! and the checks are shared with `libyaml_oracle` and the replay in
//! tests/it/fuzz_regressions.rs: `tests/it/common/oracle.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/common/oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if raw.len() > 16 * 1024 {
        return;
    }
    if let Err(e) = oracle::decoded_oracle(raw) {
        panic!("{e}");
    }
});
