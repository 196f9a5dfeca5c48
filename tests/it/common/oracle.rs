//! The decoded-data oracle shared by the fuzz targets `decoded_oracle` and
//! `libyaml_oracle` and by tests/it/fuzz_regressions.rs: the input grammar
//! (tokens expanded into endpoints), one planned rebind, which refusals are
//! by design, and whether a document's decoded data after a rebind is the old
//! data with the endpoint swapped in every string, and nothing else changed.
//! The loader is a parameter: yaml-rust2 here, libyaml in `libyaml.rs`.
//!
//! Tokens: the first byte `6` picks the IPv6 pair (`https://[fd00::1]:6443`
//! to `https://[fd00::2]:6443`), anything else the EKS pair. Then `@@` is the
//! old URL, `##` its bare host, `@u` the URL with its `h` written `\u0068`,
//! `@x` the URL with the first `.` or `:` of its host written `\x2e`/`\x3a`,
//! and `@/` the URL written `https:\/\/...` (escapes mean something only in
//! double-quoted scalars, which is the point). `%i`, `%a` and `%k` are the
//! old cluster's OIDC issuer (sharing the endpoint's id) as a URL, a provider
//! ARN and a condition key: never endpoints, so never changed.
#![allow(dead_code)] // each includer uses a part

use rebind::discover::walk::{Entry, Role};
use rebind::find::inventory::{Inventory, Source};
use rebind::find::locate;
use rebind::review::plan::Plan;
use rebind::text::endpoint::{find_all, Endpoint};
use yaml_rust2::{Yaml, YamlLoader};

pub const EKS: (&str, &str) = (
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com",
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com",
);
pub const IPV6: (&str, &str) = ("https://[fd00::1]:6443", "https://[fd00::2]:6443");
/// The EKS pair's old cluster's issuer (host path), with its endpoint's id.
pub const ISSUER: &str =
    "oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";

/// One generated input: the text with its tokens expanded, and the pair.
pub struct Case {
    pub text: String,
    pub from: Endpoint,
    pub to: Endpoint,
}

/// The input grammar: `raw` with its tokens expanded (see the module doc).
pub fn expand(raw: &str) -> Case {
    let ((old, new), raw) = match raw.strip_prefix('6') {
        Some(rest) => (IPV6, rest),
        None => (EKS, raw),
    };
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
    let text = raw
        .replace("@@", old)
        .replace("##", host)
        .replace("@u", &format!("\\u0068ttps://{rest}"))
        .replace("@x", &x)
        .replace("@/", &format!("https:\\/\\/{rest}"))
        // The old cluster's OIDC issuer shares its endpoint's id: as a URL,
        // a provider ARN and a condition key it is no endpoint, and a rebind
        // leaves it as it is.
        .replace("%i", &format!("https://{ISSUER}"))
        .replace(
            "%a",
            &format!("arn:aws:iam::111122223333:oidc-provider/{ISSUER}"),
        )
        .replace("%k", &format!("{ISSUER}:sub"));
    Case {
        text,
        from: Endpoint::parse("--from", old).unwrap(),
        to: Endpoint::parse("--to", new).unwrap(),
    }
}

/// A one-file inventory of `text` as `in.yaml`.
pub fn inventory(text: &str, hosts: &[String], only: bool) -> Inventory {
    Inventory {
        sources: vec![Source {
            entry: Entry {
                path: "in.yaml".into(),
                rel: "in.yaml".into(),
                role: Role::Yaml,
            },
            text: text.into(),
            located: locate::locate_yaml(text, hosts, only),
        }],
        skipped: vec![],
        files: 1,
    }
}

/// The rebind of a case planned (and diffed); `None` when rebind does not
/// read the file as YAML (a NUL byte, nesting past its limits): the oracle
/// needs a document rebind reads as it is.
pub fn plan(case: &Case) -> Option<Plan> {
    let hosts = vec![
        case.from.host.to_ascii_lowercase(),
        case.to.host.to_ascii_lowercase(),
    ];
    let inv = inventory(&case.text, &hosts, true);
    let parsed = inv.sources[0].located.is_ok();
    let plan = rebind::review::plan::plan(&inv, &case.from, &case.to);
    for f in &plan.files {
        let _ = rebind::edit::diff::unified(f);
    }
    parsed.then_some(plan)
}

/// The refusals rebind makes by design: an endpoint behind escapes that
/// cannot be rewritten in place, a rewrite that would make two keys equal,
/// leave a dot after an IP address or port, or break a plain flow value.
/// Any other (a failed verification) means locate, splice and verify
/// disagree.
const BY_DESIGN: [&str; 4] = [
    "escapes",
    "two keys of one mapping equal",
    "is followed by a dot",
    "quote that value",
];

/// What the oracle says of one case: `Ok` when rebind's result decodes to
/// the old data with the endpoint swapped (or it refused by design, or the
/// input is not a document both rebind and the loader read), `Err` saying
/// what went wrong otherwise. `load` decodes a text into documents (`None`
/// when it does not load); `same` compares two decoded documents.
pub fn check<D: std::fmt::Debug>(
    case: &Case,
    load: impl Fn(&str) -> Option<Vec<D>>,
    same: impl Fn(&D, &D, &Endpoint, &Endpoint) -> bool,
) -> Result<(), String> {
    let text = &case.text;
    let Some(plan) = plan(case) else {
        return Ok(());
    };
    let Some(old_docs) = load(text) else {
        return Ok(());
    };
    if let Some(e) = plan
        .errors
        .iter()
        .find(|e| !BY_DESIGN.iter().any(|d| e.message.contains(d)))
    {
        return Err(format!("refused: {e}\n--- input\n{text}"));
    }
    if !plan.errors.is_empty() {
        return Ok(());
    }
    let new_text = plan.files.first().map_or(text.as_str(), |f| &f.new);
    let Some(new_docs) = load(new_text) else {
        return Err(format!(
            "the rewritten text does not load:\n--- old\n{text}\n--- new\n{new_text}"
        ));
    };
    let (from, to) = (&case.from, &case.to);
    if old_docs.len() == new_docs.len()
        && old_docs
            .iter()
            .zip(&new_docs)
            .all(|(a, b)| same(a, b, from, to))
    {
        return Ok(());
    }
    Err(format!(
        "decoded data differs beyond the endpoint swap ({} planned):\n--- old\n{text}\n--- new\n{new_text}\n--- old data\n{old_docs:?}\n--- new data\n{new_docs:?}",
        plan.change_count()
    ))
}

/// The documents yaml-rust2's `YamlLoader` reads in `text` (a byte order
/// mark skipped).
pub fn load_yaml_rust2(text: &str) -> Option<Vec<Yaml>> {
    YamlLoader::load_from_str(text.strip_prefix('\u{feff}').unwrap_or(text)).ok()
}

/// The decoded-data oracle with yaml-rust2 as the loader.
pub fn decoded_oracle(raw: &str) -> Result<(), String> {
    check(&expand(raw), load_yaml_rust2, same_but_swapped)
}

/// Byte ranges of `{{ ... }}` template actions in `s`.
fn templates(s: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = s[at..].find("{{") {
        let start = at + i;
        let end = s[start..].find("}}").map_or(s.len(), |j| start + j + 2);
        out.push(start..end);
        at = end.max(start + 2);
        if at >= s.len() {
            break;
        }
    }
    out
}

/// Whether `new` is `old` with every occurrence of `from` swapped for `to`
/// (an optional one, in a template action or a bare IP, may also stay; the
/// host in a URL of another scheme is never an occurrence to swap).
/// With `missed`, also says whether an occurrence that must be swapped is there.
pub fn swapped(old: &str, new: &str, from: &Endpoint, to: &Endpoint) -> bool {
    let hosts = [from.host.to_ascii_lowercase()];
    let found: Vec<_> = find_all(old, &old.to_ascii_lowercase(), &hosts)
        .into_iter()
        .filter(|f| f.rewritable() && f.matches(from))
        .collect();
    let tpl = templates(old);
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut k = 0;
    while i < o.len() || j < n.len() {
        if let Some(f) = found.get(k).filter(|f| f.start == i) {
            k += 1;
            let rep = f.replacement(to);
            let optional =
                f.is_bare_ip() || tpl.iter().any(|t| t.start <= f.start && f.start < t.end);
            if n[j..].starts_with(rep.as_bytes()) {
                i = f.replace_end;
                j += rep.len();
                continue;
            }
            if !optional {
                return false;
            }
        }
        if i < o.len() && j < n.len() && o[i] == n[j] {
            i += 1;
            j += 1;
        } else {
            return false;
        }
    }
    true
}

/// Whether the decoded documents `new` are `old` with the endpoint swapped.
pub fn same_but_swapped(old: &Yaml, new: &Yaml, from: &Endpoint, to: &Endpoint) -> bool {
    match (old, new) {
        (Yaml::String(a), Yaml::String(b)) => swapped(a, b, from, to),
        (Yaml::Array(a), Yaml::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| same_but_swapped(x, y, from, to))
        }
        (Yaml::Hash(a), Yaml::Hash(b)) => {
            a.len() == b.len()
                && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| {
                    same_but_swapped(ka, kb, from, to) && same_but_swapped(va, vb, from, to)
                })
        }
        (a, b) => a == b,
    }
}
