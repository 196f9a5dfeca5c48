//! The decoded-data oracle shared by the `decoded_oracle` fuzz target and
//! tests/fuzz_regressions.rs: whether a document's decoded data after a
//! rebind is the old data with the endpoint swapped in every string, and
//! nothing else changed.

use rebind::endpoint::{find_all, Endpoint};
use yaml_rust2::Yaml;

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
