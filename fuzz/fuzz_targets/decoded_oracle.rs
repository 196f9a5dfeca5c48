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
//! Tokens: the first byte `6` picks the IPv6 pair (`https://[fd00::1]:6443`
//! to `https://[fd00::2]:6443`), anything else the EKS pair. Then `@@` is the
//! old URL, `##` its bare host, `@u` the URL with its `h` written `\u0068`,
//! `@x` the URL with the first `.` or `:` of its host written `\x2e`/`\x3a`,
//! and `@/` the URL written `https:\/\/...` (escapes mean something only in
//! double-quoted scalars, which is the point). `%i`, `%a` and `%k` are the
//! old cluster's OIDC issuer (sharing the endpoint's id) as a URL, a provider
//! ARN and a condition key: never endpoints, so never changed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};
use yaml_rust2::YamlLoader;

#[path = "../../tests/it/common/oracle.rs"]
mod oracle;
use oracle::same_but_swapped;

const EKS: (&str, &str) = (
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com",
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com",
);
const IPV6: (&str, &str) = ("https://[fd00::1]:6443", "https://[fd00::2]:6443");
/// The EKS pair's old cluster's issuer (host path), with its endpoint's id.
const ISSUER: &str = "oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";

fn expand(raw: &str, old: &str) -> String {
    let rest = &old["https://".len()..];
    let host_end = if rest.starts_with('[') {
        rest.find(']').map_or(rest.len(), |i| i + 1)
    } else {
        rest.find(':').unwrap_or(rest.len())
    };
    let host = &rest[..host_end];
    let x = match rest.find(['.', ':']) {
        Some(i) if rest.as_bytes()[i] == b'.' => {
            format!("https://{}\\x2e{}", &rest[..i], &rest[i + 1..])
        }
        Some(i) => format!("https://{}\\x3a{}", &rest[..i], &rest[i + 1..]),
        None => old.to_string(),
    };
    raw.replace("@@", old)
        .replace("##", host)
        .replace("@u", &format!("\\u0068ttps://{rest}"))
        .replace("@x", &x)
        .replace("@/", &format!("https:\\/\\/{rest}"))
        // The old cluster's OIDC issuer shares its endpoint's id: as a URL,
        // a provider ARN and a condition key it is no endpoint, and a rebind
        // leaves it as it is.
        .replace("%i", &format!("https://{ISSUER}"))
        .replace("%a", &format!("arn:aws:iam::111122223333:oidc-provider/{ISSUER}"))
        .replace("%k", &format!("{ISSUER}:sub"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if raw.len() > 16 * 1024 {
        return;
    }
    let (pair, raw) = match raw.strip_prefix('6') {
        Some(rest) => (IPV6, rest),
        None => (EKS, raw),
    };
    let text = expand(raw, pair.0);
    let from = Endpoint::parse("--from", pair.0).unwrap();
    let to = Endpoint::parse("--to", pair.1).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase(), to.host.to_ascii_lowercase()];
    let located = locate::locate_yaml(&text, &hosts, true);
    let parsed = located.is_ok();
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
    let plan = rewrite::plan(&inv, &from, &to);
    for f in &plan.files {
        let _ = rebind::diff::unified(f);
    }
    // The oracle needs a document both rebind and the loader read as it is
    // (not through masked template actions), nested within rebind's limits.
    // (A NUL byte makes rebind refuse the file as YAML: not parsed.)
    if !parsed {
        return;
    }
    let Ok(old_docs) = YamlLoader::load_from_str(&text) else {
        return;
    };
    // A refusal is fine where the endpoint sits behind escapes that cannot be
    // rewritten in place, or where the rewrite would make two keys equal,
    // leave a dot after an IP address or port, or break a plain flow value
    // (each said so by design); any other (a failed verification) means
    // locate, splice and verify disagree.
    let by_design = [
        "escapes",
        "two keys of one mapping equal",
        "is followed by a dot",
        "quote that value",
    ];
    if let Some(e) = plan
        .errors
        .iter()
        .find(|e| !by_design.iter().any(|d| e.message.contains(d)))
    {
        panic!("refused: {e}\n--- input\n{text}");
    }
    if !plan.errors.is_empty() {
        return;
    }
    let new_text = plan.files.first().map_or(text.as_str(), |f| &f.new);
    let new_docs = YamlLoader::load_from_str(new_text)
        .unwrap_or_else(|e| panic!("the rewritten text does not load: {e}\n{new_text}"));
    assert!(
        old_docs.len() == new_docs.len()
            && old_docs.iter().zip(&new_docs).all(|(a, b)| same_but_swapped(a, b, &from, &to)),
        "decoded data differs beyond the endpoint swap ({} planned):\n--- old\n{text}\n--- new\n{new_text}\n--- old data\n{old_docs:?}\n--- new data\n{new_docs:?}",
        plan.change_count()
    );
});
