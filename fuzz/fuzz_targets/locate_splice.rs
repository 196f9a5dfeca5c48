//! Arbitrary bytes through locate and splice: never a panic, and when a
//! rebind is planned, only the endpoint's bytes differ.
//!
//! `@@` in the input stands for the old endpoint and `##` for its bare host,
//! so the fuzzer can place endpoints without guessing a 70-byte URL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rebind::text::endpoint::Endpoint;
use rebind::discover::walk::{Entry, Role};
use rebind::find::inventory::{Inventory, Source};
use rebind::find::locate;

const OLD: &str = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const HOST: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW_HOST: &str = "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

/// Walks both texts: every difference must be the old host (after `https://`,
/// optionally with `:443`) becoming the new one.
fn only_endpoint_bytes_differ(old: &[u8], new: &[u8]) -> bool {
    let (host, new_host) = (HOST.to_ascii_lowercase(), NEW_HOST.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let at_host = old.len() >= i + host.len()
            && old[i..i + host.len()].eq_ignore_ascii_case(host.as_bytes());
        if at_host && new[j..].starts_with(new_host) {
            i += host.len();
            j += new_host.len();
            let after_url = old[..i - host.len()].ends_with(b"://");
            if after_url && old[i..].starts_with(b":443") && !new[j..].starts_with(b":443") {
                i += 4;
            }
        } else if i < old.len() && j < new.len() && old[i] == new[j] {
            i += 1;
            j += 1;
        } else {
            return false;
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let text = raw.replace("@@", OLD).replace("##", HOST);
    let from = Endpoint::parse("--from", OLD).unwrap();
    let to = Endpoint::parse("--to", &format!("https://{NEW_HOST}")).unwrap();
    let hosts = vec![HOST.to_ascii_lowercase()];
    let _ = locate::locate_text(&text, &hosts);
    for only in [false, true] {
        let located = locate::locate_yaml(&text, &hosts, only);
        let inv = Inventory {
            sources: vec![Source {
                entry: Entry {
                    path: "in.yaml".into(),
                    rel: "in.yaml".into(),
                    role: Role::Yaml,
                },
                text: text.as_str().into(),
                located,
            }],
            skipped: vec![],
            files: 1,
        };
        let plan = rebind::review::plan::plan(&inv, &from, &to);
        for f in &plan.files {
            assert!(
                only_endpoint_bytes_differ(f.old.as_bytes(), f.new.as_bytes()),
                "more than the endpoint changed:\n{}\n---\n{}",
                f.old,
                f.new
            );
            let _ = rebind::edit::diff::unified(f);
        }
    }
});
