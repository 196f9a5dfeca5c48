//! Kubernetes API endpoints: parsing `--from`/`--to`, recognising managed-cluster
//! host shapes, and finding endpoint text (URLs and bare hosts) in raw bytes.
//!
//! Everything here works on text only; where a match sits in YAML is `locate`'s job.

use anyhow::{bail, Result};

/// Host of the in-cluster API server as ArgoCD writes it.
pub const IN_CLUSTER_HOST: &str = "kubernetes.default.svc";

/// An endpoint given on the command line (`--from`, `--to`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host as written.
    pub host: String,
    /// Explicit port, if any (`:443` is kept here but ignored by [`Endpoint::key`]).
    pub port: Option<u16>,
}

impl Endpoint {
    /// Parses an absolute `https://host[:port][/]` URL.
    ///
    /// A path other than `/`, a query or user info is refused: rebind swaps the
    /// scheme and authority and keeps whatever follows the host as written.
    pub fn parse(flag: &str, s: &str) -> Result<Endpoint> {
        let lower = s.to_ascii_lowercase();
        let Some(rest) = lower.strip_prefix("https://") else {
            bail!("{flag} {s:?}: must be an absolute https:// URL, for example https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com");
        };
        let rest = &s[s.len() - rest.len()..];
        let auth_len = authority_len(rest.as_bytes());
        let (auth, tail) = rest.split_at(auth_len);
        if !(tail.is_empty() || tail == "/") {
            bail!("{flag} {s:?}: only scheme and host[:port] are allowed, found {tail:?} after the host");
        }
        let (host, port) = split_port(auth);
        if host.is_empty() || host.starts_with('.') || host.ends_with('.') || host.contains("..") {
            bail!("{flag} {s:?}: the URL has no valid host");
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => bail!("{flag} {s:?}: invalid port {p:?}"),
            },
        };
        Ok(Endpoint {
            host: host.to_string(),
            port,
        })
    }

    /// Identity used for matching: lower-case host, port only when not 443.
    pub fn key(&self) -> String {
        key_of(&self.host, self.port)
    }

    /// `https://host[:port]` as the replacement text of a URL occurrence.
    pub fn url(&self) -> String {
        match self.port {
            Some(p) => format!("https://{}:{p}", self.host),
            None => format!("https://{}", self.host),
        }
    }

    /// True for `https://kubernetes.default.svc` and its longer in-cluster forms.
    pub fn is_in_cluster(&self) -> bool {
        is_in_cluster_host(&self.host)
    }
}

/// Matching identity of a host and optional port.
pub fn key_of(host: &str, port: Option<u16>) -> String {
    match port {
        Some(p) if p != 443 => format!("{}:{p}", host.to_ascii_lowercase()),
        _ => host.to_ascii_lowercase(),
    }
}

/// What kind of API server a host names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Amazon EKS (`<32 hex>.<cell>.<region>.eks.amazonaws.com` and the China and dual-stack forms).
    Eks,
    /// Azure AKS (`*.azmk8s.io`).
    Aks,
    /// Google GKE DNS endpoint (`*.gke.goog`).
    Gke,
    /// `kubernetes.default.svc`: the cluster ArgoCD runs in.
    InCluster,
    /// Any other host: an endpoint only at a cluster position or when named by `--from`.
    Other,
}

const EKS_SUFFIXES: [&str; 4] = [
    ".eks.amazonaws.com",
    ".eks.amazonaws.com.cn",
    ".amazonwebservices.com.cn",
    ".api.aws",
];
const AKS_SUFFIX: &str = ".azmk8s.io";
const GKE_SUFFIX: &str = ".gke.goog";

/// Suffixes whose bare-host occurrences are found without `--from`.
const MANAGED_SUFFIXES: [&str; 6] = [
    ".eks.amazonaws.com",
    ".eks.amazonaws.com.cn",
    ".amazonwebservices.com.cn",
    ".api.aws",
    AKS_SUFFIX,
    GKE_SUFFIX,
];

/// Lower-case needles: text without any of them (or a `--from` host) holds no endpoint.
const PREFILTER: [&str; 6] = [
    "https://", // must stay first: see may_hold_named
    ".amazonaws.com",
    ".api.aws",
    ".azmk8s.io",
    ".gke.goog",
    "kubernetes.default",
];

/// Cheap test on lower-cased text: can it hold an endpoint (or one of `hosts`)?
pub fn may_hold(lower: &str, hosts: &[String]) -> bool {
    lower.contains("https://") || may_hold_named(lower, hosts)
}

/// Like [`may_hold`], but only for endpoints recognised wherever they are:
/// managed-cluster and in-cluster hosts, and `hosts`. Any other URL is an
/// endpoint only at a cluster position.
pub fn may_hold_named(lower: &str, hosts: &[String]) -> bool {
    PREFILTER[1..].iter().any(|n| lower.contains(n))
        || hosts.iter().any(|h| lower.contains(h.as_str()))
}

/// Classifies a host (case-insensitive).
pub fn shape(host: &str) -> Shape {
    let h = host.to_ascii_lowercase();
    if is_in_cluster_host(&h) {
        return Shape::InCluster;
    }
    let first = h.split('.').next().unwrap_or("");
    let eks_id = first.len() == 32 && first.bytes().all(|b| b.is_ascii_hexdigit());
    if eks_id && h.split('.').count() >= 5 && EKS_SUFFIXES.iter().any(|s| h.ends_with(s)) {
        return Shape::Eks;
    }
    if h.ends_with(AKS_SUFFIX) && h.len() > AKS_SUFFIX.len() {
        return Shape::Aks;
    }
    if h.ends_with(GKE_SUFFIX) && h.len() > GKE_SUFFIX.len() {
        return Shape::Gke;
    }
    Shape::Other
}

fn is_in_cluster_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    h == IN_CLUSTER_HOST || h == "kubernetes.default.svc.cluster.local" || h == "kubernetes.default"
}

/// One piece of endpoint text found in raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range of the whole endpoint as written (URL with path/query, or bare host).
    pub start: usize,
    pub end: usize,
    /// Byte range that a rewrite replaces: `https://host[:port]`, or the bare host.
    pub replace_end: usize,
    /// Host as written.
    pub host: String,
    pub port: Option<u16>,
    /// A bare host (no `https://`), e.g. `tlsClientConfig.serverName`.
    pub bare: bool,
}

impl Found {
    /// Matching identity (see [`key_of`]).
    pub fn key(&self) -> String {
        key_of(&self.host, self.port)
    }

    /// Replacement text for the `start..replace_end` range when rebinding to `to`.
    pub fn replacement(&self, to: &Endpoint) -> String {
        if self.bare {
            to.host.clone()
        } else {
            to.url()
        }
    }
}

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_'
}

/// Length of `host[:port]` at the start of `s` (an IPv6 literal in brackets counts as host).
fn authority_len(s: &[u8]) -> usize {
    let mut i = 0;
    if s.first() == Some(&b'[') {
        while i < s.len() && s[i] != b']' {
            i += 1;
        }
        if i < s.len() {
            i += 1;
        }
    } else {
        while i < s.len() && is_host_byte(s[i]) {
            i += 1;
        }
        // A sentence-ending dot is not part of the host.
        while i > 0 && s[i - 1] == b'.' {
            i -= 1;
        }
    }
    if i < s.len() && s[i] == b':' {
        let digits = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 {
            i += 1 + digits;
        }
    }
    i
}

fn split_port(auth: &str) -> (&str, Option<&str>) {
    let colon = if auth.starts_with('[') {
        auth.find(']')
            .and_then(|e| auth[e..].find(':').map(|c| c + e))
    } else {
        auth.rfind(':')
    };
    match colon {
        Some(c) => (&auth[..c], Some(&auth[c + 1..])),
        None => (auth, None),
    }
}

/// Bytes that end the path/query part of a URL written in YAML, JSON or prose.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\'' | b',' | b']' | b'}' | b')' | b'<' | b'>' | b'`' | b'\\'
        )
}

/// Finds endpoint text in `text`: every `https://` URL, plus bare occurrences of
/// managed-cluster hosts and of the `extra_hosts` (lower-case) given by `--from`.
///
/// `lower` must be `text` with ASCII letters lower-cased (same byte offsets).
/// Results are sorted by `start` and never overlap.
pub fn find_all(text: &str, lower: &str, extra_hosts: &[String]) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (pos, _) in lower.match_indices("https://") {
        if pos > 0 && is_host_byte(bytes[pos - 1]) {
            continue; // e.g. "xhttps://": not a URL start
        }
        let auth_start = pos + "https://".len();
        let alen = authority_len(&bytes[auth_start..]);
        if alen == 0 {
            continue;
        }
        let auth = &text[auth_start..auth_start + alen];
        let (host, port) = split_port(auth);
        if host.is_empty() {
            continue;
        }
        // A port that is not 1-65535 makes this no URL at all (never "no port").
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => continue,
            },
        };
        let replace_end = auth_start + alen;
        let mut end = replace_end;
        if end < bytes.len() && matches!(bytes[end], b'/' | b'?') {
            while end < bytes.len() && !ends_url(bytes[end]) {
                end += 1;
            }
            while end > replace_end + 1 && matches!(bytes[end - 1], b'.' | b':' | b';') {
                end -= 1;
            }
        }
        out.push(Found {
            start: pos,
            end,
            replace_end,
            host: host.to_string(),
            port,
            bare: false,
        });
    }
    let mut bare = Vec::new();
    let needles = MANAGED_SUFFIXES
        .iter()
        .map(|s| s.to_string())
        .chain(extra_hosts.iter().cloned());
    for needle in needles {
        if needle.is_empty() {
            continue;
        }
        for (pos, _) in lower.match_indices(needle.as_str()) {
            let end = pos + needle.len();
            // The host must end exactly here (a trailing sentence dot is fine).
            if end < bytes.len() && is_host_byte(bytes[end]) {
                let dot_then_end =
                    bytes[end] == b'.' && bytes.get(end + 1).is_none_or(|b| !is_host_byte(*b));
                if !dot_then_end {
                    continue;
                }
            }
            let mut start = pos;
            while start > 0 && is_host_byte(bytes[start - 1]) {
                start -= 1;
            }
            if !needle.starts_with('.') && start != pos {
                continue; // a longer host that merely ends with the --from host
            }
            let host = &text[start..end];
            if host.starts_with('.') || (start == pos && needle.starts_with('.')) {
                continue;
            }
            if start >= 3 && &bytes[start - 3..start] == b"://" {
                continue; // part of a URL found above
            }
            if start > 0 && bytes[start - 1] == b'@' {
                continue; // user@host: an e-mail address, not a server
            }
            if start > 0 && bytes[start - 1] == b'.' {
                continue;
            }
            bare.push(Found {
                start,
                end,
                replace_end: end,
                host: host.to_string(),
                port: None,
                bare: true,
            });
        }
    }
    out.extend(bare);
    out.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut merged: Vec<Found> = Vec::with_capacity(out.len());
    for f in out {
        if merged.last().is_some_and(|l| f.start < l.end) {
            continue;
        }
        merged.push(f);
    }
    merged
}

/// Rewrites every occurrence of `from` in a decoded scalar value, the same way the
/// byte splice does; used to compute what a rewritten scalar must read back as.
pub fn rewrite_value(value: &str, from: &Endpoint, to: &Endpoint) -> String {
    let lower = value.to_ascii_lowercase();
    let from_key = from.key();
    let mut out = String::with_capacity(value.len());
    let mut last = 0;
    for f in find_all(
        value,
        &lower,
        std::slice::from_ref(&from.host.to_ascii_lowercase()),
    ) {
        if f.key() == from_key || (f.bare && f.host.eq_ignore_ascii_case(&from.host)) {
            out.push_str(&value[last..f.start]);
            out.push_str(&f.replacement(to));
            last = f.replace_end;
        }
    }
    out.push_str(&value[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const EKS: &str = "0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

    fn find(t: &str) -> Vec<Found> {
        find_all(t, &t.to_ascii_lowercase(), &[])
    }

    #[test]
    fn parse_accepts_https_with_port_and_slash() {
        let e = Endpoint::parse("--to", "https://Example.com:6443/").unwrap();
        assert_eq!(e.host, "Example.com");
        assert_eq!(e.port, Some(6443));
        assert_eq!(e.key(), "example.com:6443");
        assert_eq!(
            Endpoint::parse("--to", "https://a.b:443").unwrap().key(),
            "a.b"
        );
    }

    #[test]
    fn parse_refuses_bad_urls() {
        for bad in [
            "http://a.b",
            "a.b",
            "https://",
            "https:///x",
            "https://a.b/path",
            "https://a.b?x=1",
            "https://a.b:99999",
            "https://user@a.b",
            "",
        ] {
            assert!(Endpoint::parse("--to", bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(shape(EKS), Shape::Eks);
        assert_eq!(
            shape("0123456789abcdef0123456789abcdef.yl4.cn-north-1.eks.amazonaws.com.cn"),
            Shape::Eks
        );
        assert_eq!(shape("abc.gr7.us-east-1.eks.amazonaws.com"), Shape::Other);
        assert_eq!(shape("x-1234.hcp.koreacentral.azmk8s.io"), Shape::Aks);
        assert_eq!(shape("gke-1-p.us-central1.gke.goog"), Shape::Gke);
        assert_eq!(shape("Kubernetes.Default.Svc"), Shape::InCluster);
        assert_eq!(shape("github.com"), Shape::Other);
    }

    #[test]
    fn finds_urls_with_path_query_and_port() {
        let t = format!("server: https://{EKS}:443/?__uid=1 # see https://{EKS}.\n");
        let f = find(&t);
        assert_eq!(f.len(), 2);
        assert_eq!(
            &t[f[0].start..f[0].end],
            format!("https://{EKS}:443/?__uid=1")
        );
        assert_eq!(
            &t[f[0].start..f[0].replace_end],
            format!("https://{EKS}:443")
        );
        assert_eq!(f[0].port, Some(443));
        assert_eq!(&t[f[1].start..f[1].end], format!("https://{EKS}"));
    }

    #[test]
    fn an_invalid_port_is_not_a_url() {
        // Found by fuzzing: an overflowing port used to read as "no port".
        for t in [
            format!("https://{EKS}:1111111111111111111111"),
            format!("https://{EKS}:0/"),
        ] {
            assert!(find(&t).is_empty(), "{t}");
        }
        let from = Endpoint::parse("--from", &format!("https://{EKS}")).unwrap();
        let to = Endpoint::parse("--to", "https://new.example.com").unwrap();
        let v = format!("a: https://{EKS}:99999");
        assert_eq!(rewrite_value(&v, &from, &to), v);
    }

    #[test]
    fn finds_bare_hosts_but_not_longer_hosts() {
        let t = format!("serverName: {EKS}\nother: {EKS}.evil.com\nmail: a@{EKS}\n");
        let f = find(&t);
        assert_eq!(f.len(), 1);
        assert!(f[0].bare);
        assert_eq!(f[0].host, EKS);
    }

    #[test]
    fn extra_hosts_match_whole_hosts_only() {
        let t = "a: 10.0.0.1\nb: 10.0.0.10\nc: https://10.0.0.1:6443\n";
        let f = find_all(t, t, &["10.0.0.1".into()]);
        let hosts: Vec<_> = f.iter().map(|f| (&t[f.start..f.end], f.bare)).collect();
        assert_eq!(
            hosts,
            vec![("10.0.0.1", true), ("https://10.0.0.1:6443", false)]
        );
    }

    #[test]
    fn rewrite_value_keeps_path_and_skips_longer_host() {
        let from = Endpoint::parse("--from", "https://old.example.com").unwrap();
        let to = Endpoint::parse("--to", "https://NEW.example.com").unwrap();
        let v =
            "a https://OLD.example.com:443/x?y b https://old.example.com.evil c old.example.com";
        assert_eq!(
            rewrite_value(v, &from, &to),
            "a https://NEW.example.com/x?y b https://old.example.com.evil c NEW.example.com"
        );
    }
}
