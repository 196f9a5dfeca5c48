//! Kubernetes API endpoints: parsing `--from`/`--to`, recognising managed-cluster
//! host shapes, and finding endpoint text (URLs and bare hosts) in raw bytes.
//!
//! Everything here works on text only; where a match sits in YAML is `locate`'s job.
//!
//! URLs are read by the RFC 3986 authority rules: `https://[userinfo@]host[:port]`,
//! where `host` is a DNS name or an IPv4 address or a bracketed IPv6 literal, and a
//! port is 1-65535 followed by `/`, `?`, `#` or the end of the URL. Text that starts
//! like a URL but breaks those rules is one bad token: it is skipped and the search
//! goes on right after its `https://`, so it never hides a real endpoint after it.
//!
//! One rule for an endpoint's extent, whoever reads the text (plain values,
//! JSON, embedded documents, every escape form: they all search the decoded
//! value with [`find_all`]): a DNS name's trailing dot before a port or a path
//! is an absolute name's, part of the extent but not of the name
//! (`host_name_end`); `host:` followed by anything but a port or an end is
//! no URL; a path runs to the first byte that ends a URL in YAML, JSON or
//! prose, or the first Unicode white space (`url_end`); the same for a bare
//! host. The host in a URL of another scheme is found only to be reported
//! ([`Found::rewritable`]).

use anyhow::{bail, Result};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

/// Host of the in-cluster API server as ArgoCD writes it.
pub const IN_CLUSTER_HOST: &str = "kubernetes.default.svc";

/// Rancher's cluster proxy path prefix: `https://<rancher>/k8s/clusters/<id>`.
pub const RANCHER_PREFIX: &str = "/k8s/clusters/";

/// An endpoint given on the command line (`--from`, `--to`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host as written (an IPv6 literal keeps its brackets).
    pub host: String,
    /// Explicit port, if any (`:443` is kept here but ignored by [`Endpoint::key`]).
    pub port: Option<u16>,
    /// Rancher cluster proxy path (`/k8s/clusters/c-xxxxx`), part of the identity;
    /// empty for every other endpoint.
    pub path: String,
    /// Written as an absolute DNS name, with a trailing dot (`https://h.:6443`):
    /// the same name as without it (not part of [`Endpoint::key`]); a `--to`
    /// written so is written so.
    pub absolute: bool,
}

impl Endpoint {
    /// Parses an absolute `https://host[:port][/]` URL, or a Rancher cluster proxy
    /// URL `https://host[:port]/k8s/clusters/<id>[/]`.
    ///
    /// Any other path, a query, or user info is refused: rebind swaps the scheme and
    /// authority and keeps whatever follows the host as written, and credentials do
    /// not belong in URLs.
    pub fn parse(flag: &str, s: &str) -> Result<Endpoint> {
        let example = "for example https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";
        if !has_https_prefix(s) {
            bail!("{flag} {s:?}: must be an absolute https:// URL, {example}");
        }
        let b = s.as_bytes();
        if userinfo_len(b, 8).is_some() {
            let shown = redact(s);
            bail!("{flag} {shown:?}: user info (user:password@) is not allowed: credentials do not belong in URLs; give https://host[:port]");
        }
        let Some(a) = parse_authority(b, 8) else {
            if b.get(8) == Some(&b'[') {
                bail!("{flag} {s:?}: the host is not a valid IPv6 literal in brackets, for example https://[fd00::1]:6443");
            }
            bail!("{flag} {s:?}: the URL has no valid host[:port] (a port is 1-65535), {example}");
        };
        let mut tail = &s[a.proxy_end..];
        // On the command line a final dot is the absolute name's, never a sentence's.
        let mut absolute = a.absolute;
        if !absolute && a.port.is_none() && a.proxy_end == a.end && tail.starts_with('.') {
            absolute = true;
            tail = &tail[1..];
        }
        if !(tail.is_empty() || tail == "/") {
            bail!("{flag} {s:?}: only scheme and host[:port] are allowed (or a Rancher cluster proxy path /k8s/clusters/<id>), found {tail:?} after the host");
        }
        let port_text = s[a.host.end..a.end].trim_start_matches('.');
        if port_text.len() > 2 && port_text.as_bytes()[1] == b'0' {
            let p = a.port.unwrap_or(0);
            bail!("{flag} {s:?}: the port {port_text:?} has a leading zero; write it as :{p} (ArgoCD matches cluster URLs as text: rebind would have to write either a URL that names no registered cluster or another spelling than the one given)");
        }
        let host = &s[a.host.clone()];
        // What a rebind writes must be a name DNS can hold (or an IP address).
        if matches!(flag, "--to" | "--server") && !host.starts_with('[') {
            if let Err(why) = crate::text::dns::check_dns_name(host) {
                bail!("{flag} {s:?}: {host:?} is not a valid DNS name or IP address: {why}");
            }
        }
        Ok(Endpoint {
            host: host.to_string(),
            port: a.port,
            path: s[a.end..a.proxy_end].to_string(),
            absolute,
        })
    }

    /// Identity used for matching: lower-case host, port only when not 443, and
    /// the Rancher proxy path if any.
    pub fn key(&self) -> String {
        let mut k = key_of(&self.host, self.port);
        k.push_str(&self.path.to_ascii_lowercase());
        k
    }

    /// `https://host[:port][/k8s/clusters/<id>]` as the replacement text of a URL occurrence.
    pub fn url(&self) -> String {
        format!("https://{}{}", self.authority(), self.path)
    }

    /// `host[:port]` as written (an absolute name keeps its trailing dot).
    pub fn authority(&self) -> String {
        let dot = if self.absolute { "." } else { "" };
        match self.port {
            Some(p) => format!("{}{dot}:{p}", self.host),
            None => format!("{}{dot}", self.host),
        }
    }

    /// The host as a bare host is written (`host`, or `host.` for an absolute name).
    fn bare_host(&self) -> String {
        if self.absolute {
            format!("{}.", self.host)
        } else {
            self.host.clone()
        }
    }

    /// True for `https://kubernetes.default.svc` and its longer in-cluster forms.
    pub fn is_in_cluster(&self) -> bool {
        is_in_cluster_host(&self.host)
    }

    /// What kind of API server this endpoint names.
    pub fn shape(&self) -> Shape {
        shape_at(&self.host, self.port, &self.path)
    }
}

/// Whether `s` starts with `https://` (any case).
fn has_https_prefix(s: &str) -> bool {
    s.as_bytes()
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"https://"))
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
    /// Azure AKS (`*.hcp.<region>.azmk8s.io`, `*.privatelink.<region>.azmk8s.io`, ...).
    Aks,
    /// Google GKE DNS endpoint (`*.gke.goog`).
    Gke,
    /// OpenShift API server: `https://api.<cluster>.<domain>:6443`.
    OpenShift,
    /// Rancher cluster proxy: `https://<rancher>/k8s/clusters/<id>`.
    Rancher,
    /// `kubernetes.default.svc`: the cluster ArgoCD runs in.
    InCluster,
    /// Any other host: an endpoint only at a cluster position or when named by `--from`.
    Other,
}

impl Shape {
    /// Lower-case name used in reports (`eks`, `aks`, `gke`, `openshift`,
    /// `rancher`, `in-cluster`, `other`).
    pub fn name(self) -> &'static str {
        match self {
            Shape::Eks => "eks",
            Shape::Aks => "aks",
            Shape::Gke => "gke",
            Shape::OpenShift => "openshift",
            Shape::Rancher => "rancher",
            Shape::InCluster => "in-cluster",
            Shape::Other => "other",
        }
    }
}

const EKS_SUFFIXES: [&str; 4] = [
    ".eks.amazonaws.com",
    ".eks.amazonaws.com.cn",
    ".amazonwebservices.com.cn",
    ".api.aws",
];
const AKS_SUFFIX: &str = ".azmk8s.io";
const GKE_SUFFIX: &str = ".gke.goog";

/// A managed Kubernetes service's API host, recognised by its name alone:
/// one of its suffixes (any case), at least `min_labels` labels, and a
/// first label that `first` accepts.
struct HostShape {
    shape: Shape,
    suffixes: &'static [&'static str],
    min_labels: usize,
    first: fn(&str) -> bool,
}

/// The host shapes, tried in order (a new managed service is a row; test it
/// in `tests/it/endpoint_props.rs`). OpenShift and Rancher need the port or
/// the path: [`shape_at`].
const HOST_SHAPES: [HostShape; 3] = [
    // `<32 hex>.<cell>.<region>.eks.amazonaws.com`, the China and dual-stack forms.
    HostShape {
        shape: Shape::Eks,
        suffixes: &EKS_SUFFIXES,
        min_labels: 5,
        first: is_eks_id,
    },
    // `<name>-<hash>.hcp.<region>.azmk8s.io`, `<name>.privatelink.<region>.azmk8s.io`, ...
    HostShape {
        shape: Shape::Aks,
        suffixes: &[AKS_SUFFIX],
        min_labels: 4,
        first: |_| true,
    },
    // `<anything>.gke.goog`.
    HostShape {
        shape: Shape::Gke,
        suffixes: &[GKE_SUFFIX],
        min_labels: 3,
        first: |l| !l.is_empty(),
    },
];

/// Suffixes whose bare-host occurrences are found without `--from`.
static MANAGED_SUFFIXES: [Needle; 6] = [
    Needle::new(".eks.amazonaws.com"),
    Needle::new(".eks.amazonaws.com.cn"),
    Needle::new(".amazonwebservices.com.cn"),
    Needle::new(".api.aws"),
    Needle::new(AKS_SUFFIX),
    Needle::new(GKE_SUFFIX),
];

/// Lower-case needles: text without any of them (or a `--from` host) holds no endpoint.
static PREFILTER: [Needle; 7] = [
    Needle::new("https://"), // must stay first: see may_hold_named
    Needle::new(".amazonaws.com"),
    Needle::new(".amazonwebservices.com.cn"),
    Needle::new(".api.aws"),
    Needle::new(".azmk8s.io"),
    Needle::new(".gke.goog"),
    Needle::new("kubernetes.default"),
];

/// A fixed needle with its SIMD finder built once: the per-scalar checks
/// pay for the search, not for setting it up.
pub(crate) struct Needle {
    text: &'static str,
    finder: std::sync::OnceLock<memchr::memmem::Finder<'static>>,
}

impl Needle {
    pub(crate) const fn new(text: &'static str) -> Needle {
        Needle {
            text,
            finder: std::sync::OnceLock::new(),
        }
    }

    fn finder(&self) -> &memchr::memmem::Finder<'static> {
        self.finder
            .get_or_init(|| memchr::memmem::Finder::new(self.text.as_bytes()))
    }

    /// Whether the needle occurs in `hay`.
    pub(crate) fn is_in(&self, hay: &str) -> bool {
        self.is_in_bytes(hay.as_bytes())
    }

    /// [`Needle::is_in`] for bytes that may not be text.
    pub(crate) fn is_in_bytes(&self, hay: &[u8]) -> bool {
        self.finder().find(hay).is_some()
    }

    /// Byte offsets of its non-overlapping occurrences in `hay`.
    pub(crate) fn find_iter<'h>(&'static self, hay: &'h str) -> impl Iterator<Item = usize> + 'h {
        self.finder().find_iter(hay.as_bytes())
    }
}

/// `https://`, the start of every URL rebind reads.
pub(crate) static HTTPS: &Needle = &PREFILTER[0];

/// Whether `needle` occurs in `hay` (a needle known only at run time, such
/// as a `--from` host).
pub(crate) fn contains(hay: &str, needle: &str) -> bool {
    memchr::memmem::find(hay.as_bytes(), needle.as_bytes()).is_some()
}

/// Whether the lower-case `hay` can hold the (lower-case) `host`: an IPv6
/// literal is looked for without its brackets, as a bare address is written.
pub(crate) fn contains_host(hay: &str, host: &str) -> bool {
    contains(hay, strip_brackets(host))
}

fn strip_brackets(h: &str) -> &str {
    h.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(h)
}

/// Byte offsets of the non-overlapping occurrences of `needle` in `hay`.
pub(crate) fn find_iter<'h>(hay: &'h str, needle: &'h str) -> impl Iterator<Item = usize> + 'h {
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes())
}

/// Cheap test on a lower-cased scalar: can it hold an endpoint recognised
/// wherever it is (managed-cluster and in-cluster hosts, and `hosts`)? Any
/// other URL is an endpoint only at a cluster position.
pub fn may_hold_named(lower: &str, hosts: &[String]) -> bool {
    PREFILTER[1..].iter().any(|n| n.is_in(lower)) || hosts.iter().any(|h| contains_host(lower, h))
}

/// The first look at a whole file, ignoring ASCII case: can it hold an
/// endpoint, and does it name a `destination` (an Application for the tier
/// table)? A file that fails both is not parsed. The [`Needle`]s (and the
/// `--from` hosts' finders, built once) search a lower-case copy kept in a
/// per-thread buffer.
#[derive(Debug)]
pub struct Prefilter {
    /// The lower-case `--from` hosts.
    hosts: Vec<memchr::memmem::Finder<'static>>,
    /// Only the hosts (and base64 `https://`) count, as a rebind needs; no
    /// `destination` is looked for.
    only: bool,
}

/// "https://" in base64 (`aHR0cHM6Ly`), lower-cased: a `data.server` value.
static BASE64_HTTPS: Needle = Needle::new("ahr0chm6ly");
static DESTINATION: Needle = Needle::new("destination");

impl Prefilter {
    /// With `only`, just `hosts` (and base64 `https://`) count as endpoint
    /// text; otherwise every [`PREFILTER`] needle too.
    pub fn new(hosts: &[String], only: bool) -> Prefilter {
        let hosts = hosts
            .iter()
            .filter(|h| !h.is_empty())
            .map(|h| {
                let h = h.to_ascii_lowercase();
                memchr::memmem::Finder::new(strip_brackets(&h).as_bytes()).into_owned()
            })
            .collect();
        Prefilter { hosts, only }
    }

    /// Whether `bytes` hold endpoint text, and whether they hold `destination`.
    pub fn scan(&self, bytes: &[u8]) -> (bool, bool) {
        thread_local! {
            static LOWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        LOWER.with_borrow_mut(|lower| {
            lower.clear();
            lower.extend_from_slice(bytes);
            lower.make_ascii_lowercase();
            let endpoint = BASE64_HTTPS.is_in_bytes(lower)
                || self.hosts.iter().any(|f| f.find(lower).is_some())
                || (!self.only && PREFILTER.iter().any(|n| n.is_in_bytes(lower)));
            let destination = !self.only && DESTINATION.is_in_bytes(lower);
            // A big file's copy is not kept for the rest of the run.
            if lower.capacity() > 1 << 20 {
                *lower = Vec::new();
            }
            (endpoint, destination)
        })
    }
}

/// An EKS endpoint's cluster id: the first label of its host, 32 hex digits
/// (`https://<ID>.gr7.<region>.eks.amazonaws.com`). The one place that rule lives.
pub fn is_eks_id(label: &str) -> bool {
    label.len() == 32 && label.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Classifies a host (case-insensitive) by its name alone; see [`shape_at`] for
/// the shapes that also need the port or the path (OpenShift, Rancher).
pub fn shape(host: &str) -> Shape {
    // Case-insensitive without a lower-case copy: this runs per occurrence.
    if is_in_cluster_host(host) {
        return Shape::InCluster;
    }
    let labels = host.split('.').count();
    let first = host.split('.').next().unwrap_or("");
    HOST_SHAPES
        .iter()
        .find(|h| {
            labels >= h.min_labels
                && (h.first)(first)
                && h.suffixes.iter().any(|s| ends_with_ci(host, s))
        })
        .map_or(Shape::Other, |h| h.shape)
}

/// `s` ends with the lower-case `suffix`, ignoring ASCII case.
fn ends_with_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Classifies an endpoint by host, explicit port and path:
/// everything [`shape`] knows, plus OpenShift API servers (first label `api`,
/// at least three labels, an alphabetic top-level label, port 6443) and Rancher cluster proxies (path
/// `/k8s/clusters/<id>`).
pub fn shape_at(host: &str, port: Option<u16>, path: &str) -> Shape {
    if rancher_id_len(path.as_bytes(), 0).is_some_and(|n| n == path.trim_end_matches('/').len()) {
        return Shape::Rancher;
    }
    let s = shape(host);
    if s != Shape::Other {
        return s;
    }
    if port == Some(6443)
        && host.split('.').count() >= 3
        && host
            .split('.')
            .next()
            .is_some_and(|l| l.eq_ignore_ascii_case("api"))
        && host.split('.').all(|l| !l.is_empty())
        && host
            .rsplit('.')
            .next()
            .is_some_and(|l| l.bytes().all(|c| c.is_ascii_alphabetic()))
    {
        return Shape::OpenShift;
    }
    Shape::Other
}

fn is_in_cluster_host(host: &str) -> bool {
    [
        IN_CLUSTER_HOST,
        "kubernetes.default.svc.cluster.local",
        "kubernetes.default",
    ]
    .iter()
    .any(|h| host.eq_ignore_ascii_case(h))
}

/// True for an IPv4 address or an IPv6 address (with or without brackets).
pub fn is_ip(host: &str) -> bool {
    let inner = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    inner.parse::<Ipv4Addr>().is_ok() || inner.parse::<Ipv6Addr>().is_ok()
}

/// One piece of endpoint text found in raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range of the whole endpoint as written (URL with user info,
    /// path and query, or bare host with its port).
    pub start: usize,
    pub end: usize,
    /// End of the byte range `start..replace_end` that a rewrite replaces:
    /// `https://[userinfo@]host[:port][/k8s/clusters/<id>]`, or the bare
    /// `host[:port]`; `start` for a host in a URL of another scheme, which is
    /// never rewritten (see [`Found::rewritable`]).
    pub replace_end: usize,
    /// Host as written (without user info; an IPv6 literal keeps its brackets
    /// when it had them).
    pub host: String,
    /// Explicit port as written (of a URL, or `host:port` of a bare host).
    pub port: Option<u16>,
    /// A bare host (no `https://`), e.g. `tlsClientConfig.serverName`.
    pub bare: bool,
    /// `user[:password]` of a URL written `https://user:password@host`. Such a URL
    /// is the endpoint `https://host`; a rewrite keeps the user info as written
    /// (the credentials belong to whoever wrote them, not to rebind).
    pub userinfo: Option<String>,
    /// Rancher cluster proxy path (`/k8s/clusters/<id>`), part of the identity
    /// and of the replaced range; empty for every other endpoint.
    pub path: String,
    /// How a URL's slashes are written when they are escaped in the text it
    /// was found in (`\/` for `https:\/\/host`, JSON's escaped slash; `\\/`
    /// for the same JSON held in a double-quoted string): a rewrite writes
    /// the new URL's slashes the same way. `None` for plain slashes.
    pub slash: Option<String>,
}

impl Found {
    /// Matching identity (see [`Endpoint::key`]).
    pub fn key(&self) -> String {
        if !self.rewritable() {
            return key_of(&self.host, None); // a mention of the host, whatever its port
        }
        let mut k = key_of(&self.host, self.port);
        k.push_str(&self.path.to_ascii_lowercase());
        k
    }

    /// Whether this text is the endpoint `from`.
    ///
    /// A URL matches by [`Found::key`]. A bare host matches when its host is
    /// `from`'s host and it has no explicit port or the same port (443 when
    /// none): `10.0.0.1:9100` is not `https://10.0.0.1:6443`.
    pub fn matches(&self, from: &Endpoint) -> bool {
        if !self.rewritable() {
            return same_host(&self.host, &from.host) && from.path.is_empty();
        }
        if !self.bare {
            return self.key() == from.key();
        }
        let host_eq = self.host.eq_ignore_ascii_case(&from.host)
            || (!self.host.starts_with('[')
                && from.host.starts_with('[')
                && from.host[1..from.host.len() - 1].eq_ignore_ascii_case(&self.host));
        host_eq && from.path.is_empty() && self.port.is_none_or(|p| p == from.port.unwrap_or(443))
    }

    /// Whether a rewrite may replace it. Not the host in a URL of another
    /// scheme (`http://`, `wss://`, `grpc://`): that is found, as the whole
    /// URL with an empty replaced range, only to be reported. It is no
    /// Kubernetes API endpoint (the API server speaks https), and whether
    /// the service it names moves with the cluster is for a person to say.
    /// It is the old endpoint's mention whatever its port.
    pub fn rewritable(&self) -> bool {
        self.replace_end > self.start
    }

    /// A bare IPv4 or IPv6 address (no scheme): an endpoint only at a position
    /// that names the API server (e.g. `tlsClientConfig.serverName`); anywhere
    /// else it is a mention.
    pub fn is_bare_ip(&self) -> bool {
        self.bare && is_ip(&self.host)
    }

    /// What kind of API server this text names (host, port and path).
    pub fn shape(&self) -> Shape {
        shape_at(&self.host, self.port, &self.path)
    }

    /// Replacement text for the `start..replace_end` range when rebinding to `to`.
    ///
    /// A URL keeps its user info; a bare `host:port` gets `to`'s host and port
    /// (443 when `to` has none); an unbracketed bare IPv6 address stays unbracketed.
    pub fn replacement(&self, to: &Endpoint) -> String {
        if self.bare {
            // An IPv6 literal takes its brackets off only alone: before a
            // port (`host:6443`, or `https:\/\/host:6443` read bare) they stay.
            let host =
                if self.port.is_none() && !self.host.starts_with('[') && to.host.starts_with('[') {
                    to.host[1..to.host.len() - 1].to_string()
                } else {
                    to.bare_host()
                };
            match self.port {
                Some(_) => format!("{host}:{}", to.port.unwrap_or(443)),
                None => host,
            }
        } else {
            let url = match &self.userinfo {
                Some(u) => format!("https://{u}@{}{}", to.authority(), to.path),
                None => to.url(),
            };
            match &self.slash {
                Some(s) => url.replace('/', s),
                None => url,
            }
        }
    }
}

/// Whether the bare text at `range` of `text` (raw or decoded) stands alone
/// as a value: on its line, only white space, quotes, escapes' backslashes
/// and a key (`serverName:`), a flow item's start (`[`, `{`, `,`) or a
/// block sequence's `-` come before it, and only the same, a flow item's end
/// or a comment after it. A bare IP address that does not (prose: "the old
/// one was 10.0.0.1") never names an API server, whatever key it sits under.
pub fn stands_alone(text: &str, range: Range<usize>) -> bool {
    let (Some(before), Some(after)) = (text.get(..range.start), text.get(range.end..)) else {
        return false;
    };
    let before = before.rsplit(['\n', '\r']).next().unwrap_or(before);
    let after = after.split(['\n', '\r']).next().unwrap_or(after);
    let quote = |c: char| c == '"' || c == '\'' || c == '\\' || c.is_whitespace();
    let b = before.trim_end_matches(quote);
    let a = after.trim_start_matches(quote);
    let ok_before = b.is_empty()
        || b.ends_with([':', '[', '{', ','])
        || b == "-"
        || b.ends_with(" -")
        || b.ends_with("\t-");
    let ok_after = a.is_empty() || a.starts_with([',', ']', '}', '#']);
    ok_before && ok_after
}

/// Whether two hosts are the same, ignoring ASCII case and the brackets of
/// an IPv6 literal (`[fd00::1]` in a URL is `fd00::1` bare).
pub fn same_host(a: &str, b: &str) -> bool {
    fn strip(h: &str) -> &str {
        h.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(h)
    }
    strip(a).eq_ignore_ascii_case(strip(b))
}

/// Bare hosts (with an optional `:port`) written as the value of one of
/// `keys`, in YAML or JSON (also JSON inside a string, with escaped quotes):
/// `serverName: "kind-dev-control-plane"`, `tls-server-name: host:6443`,
/// `{\"serverName\":\"kwok\"}`. In the order of `keys`, then of the text.
pub fn hosts_after_keys(text: &str, keys: &[&str]) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for key in keys {
        for pos in find_iter(text, key) {
            if pos > 0 && (b[pos - 1].is_ascii_alphanumeric() || matches!(b[pos - 1], b'-' | b'_'))
            {
                continue;
            }
            let mut i = pos + key.len();
            while i < b.len() && matches!(b[i], b'"' | b'\'' | b'\\') {
                i += 1;
            }
            while i < b.len() && matches!(b[i], b' ' | b'\t') {
                i += 1;
            }
            if b.get(i) != Some(&b':') {
                continue;
            }
            i += 1;
            while i < b.len() && matches!(b[i], b' ' | b'\t' | b'"' | b'\'' | b'\\') {
                i += 1;
            }
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'.' | b'-' | b'_'))
            {
                i += 1;
            }
            if i == start || !b[start].is_ascii_alphanumeric() {
                continue;
            }
            let host_end = i;
            let mut port = None;
            if b.get(i) == Some(&b':') {
                let d = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if d > 0 {
                    port = text[i + 1..i + 1 + d]
                        .parse::<u16>()
                        .ok()
                        .filter(|&p| p > 0);
                    if port.is_none() {
                        continue;
                    }
                    i += 1 + d;
                }
            }
            if b.get(i).is_some_and(|&c| {
                !matches!(
                    c,
                    b'"' | b'\'' | b'\\' | b' ' | b'\t' | b'\r' | b'\n' | b',' | b'}' | b']' | b'#'
                )
            }) {
                continue;
            }
            out.push(Found {
                start,
                end: i,
                replace_end: i,
                host: text[start..host_end].to_string(),
                port,
                bare: true,
                userinfo: None,
                path: String::new(),
                slash: None,
            });
        }
    }
    out
}

/// `text` with the password of any `https://user:password@` replaced by `***`,
/// for printing an endpoint found in a file.
pub fn redact(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for pos in HTTPS.find_iter(&lower) {
        let at = pos + 8;
        let Some(n) = userinfo_len(b, at) else {
            continue;
        };
        if let Some(colon) = text[at..at + n].find(':') {
            out.push_str(&text[last..at + colon + 1]);
            out.push_str("***");
            last = at + n;
        }
    }
    out.push_str(&text[last..]);
    out
}

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_'
}

/// Bytes allowed in the user info of a URL as rebind reads it (RFC 3986
/// unreserved, percent-encoded and most sub-delims, and `:`); quotes, commas and
/// brackets are left out so a user info never runs across YAML or prose.
fn is_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'%'
                | b'!'
                | b'$'
                | b'&'
                | b'*'
                | b'+'
                | b';'
                | b'='
                | b':'
        )
}

/// Length of `userinfo` when `b[at..]` starts with `userinfo@`.
fn userinfo_len(b: &[u8], at: usize) -> Option<usize> {
    let n = b
        .get(at..)?
        .iter()
        .take_while(|&&c| is_userinfo_byte(c))
        .count();
    (n > 0 && b.get(at + n) == Some(&b'@')).then_some(n)
}

/// Bytes that end the path/query part of a URL written in YAML, JSON or prose.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\'' | b',' | b']' | b'}' | b')' | b'<' | b'>' | b'`' | b'\\'
        )
}

/// Whether the authority (or a Rancher id) may end before `b[i]`: the end of the
/// text, `/`, `?`, `#`, a byte that ends a URL in YAML/JSON/prose, a non-ASCII
/// byte, the `{{` that opens a template action (the locator decides what an
/// action right after a port means), or a run of punctuation (`.`, `,`, `;`,
/// `:`, `!`) followed by one of those (a sentence dot, the colon of a YAML
/// key, both).
fn url_boundary(b: &[u8], i: usize) -> bool {
    let end = |c: u8| ends_url(c) || c >= 0x80;
    match b.get(i) {
        None => true,
        Some(&c) if matches!(c, b'/' | b'?' | b'#') || end(c) => true,
        Some(b'{') => b.get(i + 1) == Some(&b'{'),
        // A run of them: `https://h:6443.: x` is a URL ending a sentence
        // used as a YAML key.
        Some(b'.' | b',' | b';' | b':' | b'!') => {
            let run = b[i..]
                .iter()
                .take_while(|c| matches!(c, b'.' | b',' | b';' | b':' | b'!'))
                .count();
            b.get(i + run).is_none_or(|&d| end(d))
        }
        _ => false,
    }
}

/// The parts of `https://` + authority, as byte ranges into the text.
struct Authority {
    userinfo: Option<Range<usize>>,
    /// The host's name (an IPv6 literal with its brackets; an absolute DNS
    /// name without its trailing dot).
    host: Range<usize>,
    /// The host is written with the trailing dot of an absolute DNS name.
    absolute: bool,
    port: Option<u16>,
    /// End of `host[:port]`.
    end: usize,
    /// End of the Rancher proxy path after it, or `end`.
    proxy_end: usize,
}

/// Length of `/k8s/clusters/<id>` at `b[i..]` (id: letters, digits, `-`),
/// followed by a URL boundary.
fn rancher_id_len(b: &[u8], i: usize) -> Option<usize> {
    let rest = b.get(i..)?;
    if !rest.starts_with(RANCHER_PREFIX.as_bytes()) {
        return None;
    }
    let p = RANCHER_PREFIX.len();
    let id = rest[p..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
        .count();
    (id > 0 && url_boundary(b, i + p + id)).then_some(p + id)
}

/// Parses `[userinfo@]host[:port][/k8s/clusters/<id>]` at `b[at..]` (just after
/// `https://`). `None` for a malformed authority: no host, an unterminated or
/// invalid IPv6 literal, an empty DNS label, a port outside 1-65535 or not
/// followed by the end of the authority.
fn parse_authority(b: &[u8], at: usize) -> Option<Authority> {
    let (userinfo, h) = match userinfo_len(b, at) {
        Some(n) => (Some(at..at + n), at + n + 1),
        None => (None, at),
    };
    let mut i = h;
    let host_end;
    let mut is_absolute = false;
    if b.get(h) == Some(&b'[') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_hexdigit() || b[i] == b':' || b[i] == b'.') {
            i += 1;
        }
        if b.get(i) != Some(&b']') {
            return None;
        }
        let inner = std::str::from_utf8(&b[h + 1..i]).ok()?;
        inner.parse::<Ipv6Addr>().ok()?;
        i += 1;
        host_end = i;
    } else {
        while i < b.len() && is_host_byte(b[i]) {
            i += 1;
        }
        let (name_end, absolute) = host_name_end(b, h, i)?;
        host_end = name_end;
        i = name_end + usize::from(absolute);
        is_absolute = absolute;
    }
    let host = h..host_end;
    let mut port = None;
    if b.get(i) == Some(&b':') && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        // `host:x`: another (invalid) port, never the host without one. A
        // colon that ends the text (`https://h: x`, a YAML key) or an empty
        // port before a path (`h:/x`) is fine.
        if !url_boundary(b, i) && b.get(i + 1) != Some(&b'/') {
            return None;
        }
    } else if b.get(i) == Some(&b':') {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let n = std::str::from_utf8(&b[i + 1..i + 1 + digits])
            .ok()?
            .parse::<u16>()
            .ok()
            .filter(|&n| n > 0)?;
        i += 1 + digits;
        if !url_boundary(b, i) {
            return None; // `host:443:443y`, `host:6443x`: not a port
        }
        port = Some(n);
    }
    let proxy_end = i + rancher_id_len(b, i).unwrap_or(0);
    Some(Authority {
        userinfo,
        host,
        absolute: is_absolute,
        port,
        end: i,
        proxy_end,
    })
}

/// Where the name of a DNS host that starts at `b[h]` and whose host bytes
/// run to `b[scanned]` ends, and whether a trailing dot there belongs to it.
///
/// One rule for every reader: the dots at the end of the run are
/// punctuation (a sentence's full stop, `https://h.`) unless a port or a
/// path follows them (`h.:6443`, `h./x`, `h.?q`, `h.#f`): then one dot is
/// the trailing dot of an absolute DNS name, the same name as without it,
/// and part of the endpoint's extent; more than one is no host at all.
/// `None` for no host (empty, a leading dot, an empty label).
fn host_name_end(b: &[u8], h: usize, scanned: usize) -> Option<(usize, bool)> {
    let mut end = scanned;
    while end > h && b[end - 1] == b'.' {
        end -= 1;
    }
    if end == h || b[h] == b'.' || b[h..end].windows(2).any(|w| w == b"..") {
        return None;
    }
    Some((end, trailing_dots(b, end, scanned)?))
}

/// Whether the dots `b[end..scanned]` after a host's name hold the trailing
/// dot of an absolute name (see [`host_name_end`]); `None` when they make it
/// no host.
fn trailing_dots(b: &[u8], end: usize, scanned: usize) -> Option<bool> {
    let port_or_path = match b.get(scanned) {
        Some(b':') => b.get(scanned + 1).is_some_and(u8::is_ascii_digit),
        Some(b'/' | b'?' | b'#') => true,
        _ => false,
    };
    match (scanned - end, port_or_path) {
        (0, _) | (_, false) => Some(false),
        (1, true) => Some(true),
        _ => None,
    }
}

/// Parses a bare `:port` at `b[i..]` after a bare host: `Ok(None)` when there is
/// none, `Err(())` when it is malformed (not 1-65535, or not followed by a boundary).
#[allow(clippy::result_unit_err)]
fn bare_port(b: &[u8], i: usize) -> Result<Option<(u16, usize)>, ()> {
    if b.get(i) != Some(&b':') || !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return Ok(None);
    }
    let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let n = std::str::from_utf8(&b[i + 1..i + 1 + digits])
        .ok()
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|&n| n > 0)
        .ok_or(())?;
    let end = i + 1 + digits;
    if !url_boundary(b, end) {
        return Err(());
    }
    Ok(Some((n, end)))
}

/// Finds endpoint text in `text`: every `https://` URL, plus bare occurrences of
/// managed-cluster hosts and of the `extra_hosts` (lower-case) given by `--from`.
///
/// `lower` must be `text` with ASCII letters lower-cased (same byte offsets).
/// Results are sorted by `start` and never overlap. A malformed URL is skipped
/// as one token; the search resumes right after its `https://`.
pub fn find_all(text: &str, lower: &str, extra_hosts: &[String]) -> Vec<Found> {
    let mut out = find_urls(text, lower);
    out.extend(find_bare(text, lower, extra_hosts));
    without_overlaps(out)
}

/// Every `https://` URL in `text` (`lower`: see [`find_all`]).
fn find_urls(text: &str, lower: &str) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for pos in HTTPS.find_iter(lower) {
        if pos > 0 && is_host_byte(bytes[pos - 1]) {
            continue; // e.g. "xhttps://": not a URL start
        }
        let Some(a) = parse_authority(bytes, pos + "https://".len()) else {
            continue;
        };
        if continues_after(bytes, a.end) {
            continue; // a fragment: the host goes on after an escaped line break
        }
        let replace_end = a.proxy_end;
        let end = url_end(text, replace_end);
        out.push(Found {
            start: pos,
            end,
            replace_end,
            host: text[a.host].to_string(),
            port: a.port,
            bare: false,
            userinfo: a.userinfo.map(|r| text[r].to_string()),
            path: text[a.end..a.proxy_end].to_string(),
            slash: None,
        });
    }
    out
}

/// Every bare occurrence of a managed-cluster host suffix and of the
/// `extra_hosts` in `text` (`lower`: see [`find_all`]).
fn find_bare(text: &str, lower: &str, extra_hosts: &[String]) -> Vec<Found> {
    let mut bare = Vec::new();
    let needles = MANAGED_SUFFIXES
        .iter()
        .map(|n| (n.text, Some(n)))
        .chain(extra_hosts.iter().map(|h| (h.as_str(), None)));
    for (needle, prebuilt) in needles {
        // A host given as an absolute name (`h.`) is searched as its name.
        let needle = if prebuilt.is_none() {
            needle.strip_suffix('.').unwrap_or(needle)
        } else {
            needle
        };
        if needle.is_empty() {
            continue;
        }
        if let Some(v6) = needle.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
            find_bare_v6(text, lower, v6, &mut bare);
        }
        let hits: Vec<usize> = match prebuilt {
            Some(n) => n.find_iter(lower).collect(),
            None => find_iter(lower, needle).collect(),
        };
        bare.extend(
            hits.into_iter()
                .filter_map(|pos| bare_at(text, pos, needle)),
        );
    }
    bare
}

/// The endpoint that the host `needle` (a whole host, or a suffix starting
/// with `.`) found at `pos` is part of: a bare host with its `:port`, or a
/// URL of a scheme other than https. `None` when it is no host of its own:
/// part of a longer host or name, an e-mail address, an https URL's host
/// (the URL pass finds those), a fragment split by an escaped line break,
/// or followed by a malformed port.
fn bare_at(text: &str, pos: usize, needle: &str) -> Option<Found> {
    let bytes = text.as_bytes();
    let (mut end, sentence_dot) = bare_host_end(bytes, pos + needle.len())?;
    let mut start = pos;
    while start > 0 && is_host_byte(bytes[start - 1]) {
        start -= 1;
    }
    if !needle.starts_with('.') && start != pos {
        return None; // a longer host that merely ends with the --from host
    }
    let host = &text[start..pos + needle.len()];
    if host.starts_with('.') || (start == pos && needle.starts_with('.')) {
        return None;
    }
    let lead = lead(bytes, start)?;
    if start > 0 && matches!(bytes[start - 1], b'@' | b'.') {
        return None; // user@host (an e-mail address), or part of a longer name
    }
    if continues_before(bytes, start) || continues_after(bytes, end) {
        return None; // a fragment of a host split by an escaped line break
    }
    let mut port = None;
    if !sentence_dot {
        if let Some((p, e)) = bare_port(bytes, end).ok()? {
            port = Some(p);
            end = e;
        }
    }
    let found = Found {
        start,
        end,
        replace_end: end,
        host: host.to_string(),
        port,
        bare: true,
        userinfo: None,
        path: String::new(),
        slash: None,
    };
    Some(match lead {
        Lead::Bare => found,
        Lead::OtherScheme(s) => Found {
            start: s,
            end: url_end(text, end),
            replace_end: s,
            bare: false,
            ..found
        },
        Lead::EscapedHttps(s, slash) => {
            let proxy_end = end + rancher_id_len_escaped(bytes, end, &slash).unwrap_or(0);
            Found {
                start: s,
                end: url_end_escaped(text, proxy_end, &slash),
                replace_end: proxy_end,
                bare: false,
                path: text[end..proxy_end].replace(&slash, "/"),
                slash: Some(slash),
                ..found
            }
        }
    })
}

/// Where a bare host whose name ends at `end` ends, and whether a dot
/// after it is a sentence's: the host must end exactly there; one trailing
/// dot before a port or a path is an absolute name's (see
/// [`host_name_end`]). `None` for a longer host.
fn bare_host_end(b: &[u8], end: usize) -> Option<(usize, bool)> {
    if end >= b.len() || !is_host_byte(b[end]) {
        return Some((end, false));
    }
    let run = b[end..].iter().take_while(|c| is_host_byte(**c)).count();
    if b[end..end + run].iter().any(|&c| c != b'.') {
        return None; // a longer host
    }
    let absolute = trailing_dots(b, end, end + run)?;
    Some((end + usize::from(absolute), !absolute))
}

/// What comes before a bare host.
enum Lead {
    /// No `scheme://`: the host stands alone.
    Bare,
    /// The `scheme://` of a URL of another scheme (`http://`, `wss://`,
    /// `grpc://`), starting here: reported as that URL, never rewritten.
    OtherScheme(usize),
    /// `https:` and two slashes written with the same escape (`https:\/\/`,
    /// JSON's escaped slash; `https:\\/\\/` once more escaped inside a
    /// double-quoted string), starting here, and that escaped slash: an https
    /// URL, whose extent (port, path) and matching are a URL's.
    EscapedHttps(usize, String),
}

/// The escaped slash (`\/`, `\\/`, ...) that ends `b[..end]`, if any.
fn escaped_slash_before(b: &[u8], end: usize) -> Option<usize> {
    if end < 2 || b[end - 1] != b'/' || b[end - 2] != b'\\' {
        return None;
    }
    // A run of backslashes before `/`: one escape (`\/`), or the escaped
    // escape of a document held in a string (`\\/`, which reads `\/` once
    // decoded), at any depth.
    let n = b[..end - 1]
        .iter()
        .rev()
        .take_while(|&&c| c == b'\\')
        .count();
    Some(n + 1)
}

/// What `scheme:` and two escaped slashes right before `start` lead:
/// `None` when they are not there (a path's `x\/host` is a bare host as
/// before); `Some(None)` when the scheme itself is written with escapes
/// (`\u0068ttps:\/\/host`: the host is no bare host of its own, and the
/// decoded document's search reports that URL); else the `https:` or
/// other scheme.
fn escaped_scheme_lead(b: &[u8], start: usize) -> Option<Option<Lead>> {
    let n = escaped_slash_before(b, start)?;
    let first = start - n;
    if escaped_slash_before(b, first) != Some(n) {
        return None;
    }
    // Where the first of the two escaped slashes starts.
    let slashes = first - n;
    let Some(colon) = slashes.checked_sub(1).filter(|&c| b[c] == b':') else {
        // An escaped colon (`https\u003a\/\/host`) is an escaped scheme;
        // `\/\/host` alone (no scheme) stays a bare host.
        let near = &b[slashes.saturating_sub(12)..slashes];
        return near.contains(&b'\\').then_some(None);
    };
    let s = colon
        - b[..colon]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
            .count();
    let scheme = &b[s..colon];
    if s > 0 && b[s - 1] == b'\\' {
        return Some(None);
    }
    if scheme.is_empty() || !scheme[0].is_ascii_alphabetic() {
        return None;
    }
    let slash = String::from_utf8_lossy(&b[first..start]).into_owned();
    Some(Some(if scheme.eq_ignore_ascii_case(b"https") {
        Lead::EscapedHttps(s, slash)
    } else {
        Lead::OtherScheme(s)
    }))
}

/// [`rancher_id_len`] with the proxy path's slashes written as `slash`.
fn rancher_id_len_escaped(b: &[u8], i: usize, slash: &str) -> Option<usize> {
    let prefix = RANCHER_PREFIX.replace('/', slash);
    let rest = b.get(i..)?;
    if !rest.starts_with(prefix.as_bytes()) {
        return None;
    }
    let p = prefix.len();
    let id = rest[p..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
        .count();
    let after = i + p + id;
    let boundary = url_boundary(b, after) || b.get(after) == Some(&b'\\');
    (id > 0 && boundary).then_some(p + id)
}

/// [`url_end`] for a URL whose slashes are written as `slash`: its path runs
/// on over escaped slashes.
fn url_end_escaped(text: &str, from: usize, slash: &str) -> usize {
    let b = text.as_bytes();
    let mut end = from;
    loop {
        if text[end..].starts_with(slash) {
            end += slash.len();
            while end < b.len() && !ends_url(b[end]) && b[end] < 0x80 {
                end += 1;
            }
        } else if matches!(b.get(end), Some(b'/' | b'?' | b'#')) {
            end = url_end(text, end);
        } else {
            return end;
        }
    }
}

/// What comes before a bare host starting at `start`; `None` after
/// `https://` (an https URL's host is the URL pass's) or after a `://`
/// with no scheme.
fn lead(b: &[u8], start: usize) -> Option<Lead> {
    if let Some(lead) = escaped_scheme_lead(b, start) {
        return lead;
    }
    if start < 3 || &b[start - 3..start] != b"://" {
        return Some(Lead::Bare);
    }
    let s = start
        - 3
        - b[..start - 3]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
            .count();
    let scheme = &b[s..start - 3];
    if scheme.is_empty()
        || !scheme[0].is_ascii_alphabetic()
        || scheme.eq_ignore_ascii_case(b"https")
    {
        return None;
    }
    Some(Lead::OtherScheme(s))
}

/// The endpoints sorted by start, the longest first, each that overlaps
/// one kept before it dropped.
fn without_overlaps(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut kept: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        if kept.last().is_some_and(|l| f.start < l.end) {
            continue;
        }
        kept.push(f);
    }
    kept
}

/// Where a URL whose authority ends at `from` ends: after its path, query
/// and fragment, if any. They run to the first byte that ends a URL in
/// YAML, JSON or prose ([`ends_url`]) or the first Unicode white space
/// (U+0085, U+00A0, U+2028, U+3000, ...: any `White_Space` character), and
/// give back trailing `.`, `:` and `;` (a sentence's punctuation). Other
/// non-ASCII characters (an IRI's path) are part of it.
fn url_end(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = from;
    if end < bytes.len() && matches!(bytes[end], b'/' | b'?' | b'#') {
        while end < bytes.len() && !ends_url(bytes[end]) {
            if bytes[end] >= 0x80 {
                let c = text[end..].chars().next().expect("a char boundary");
                if c.is_whitespace() {
                    break;
                }
                end += c.len_utf8();
            } else {
                end += 1;
            }
        }
        while end > from + 1 && matches!(bytes[end - 1], b'.' | b':' | b';') {
            end -= 1;
        }
    }
    end
}

/// Whether the text at `i` is `\` + line break (after any dots): what a
/// double-quoted YAML scalar (or a shell line) uses to continue a word on the
/// next line. A host that ends there is a fragment, never an endpoint: its
/// decoded value is found by the decoder instead ([`escape_map`]).
fn continues_after(b: &[u8], mut i: usize) -> bool {
    while b.get(i) == Some(&b'.') {
        i += 1;
    }
    b.get(i) == Some(&b'\\') && line_break_len(b, i + 1) > 0
}

/// Whether the text before `start` is `\` + line break + indentation: the
/// host at `start` is the second half of a split word.
fn continues_before(b: &[u8], start: usize) -> bool {
    let mut i = start;
    while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    let br = match (
        i.checked_sub(1).map(|k| b[k]),
        i.checked_sub(2).map(|k| b[k]),
    ) {
        (Some(b'\n'), Some(b'\r')) => 2,
        (Some(b'\n' | b'\r'), _) => 1,
        _ => return false,
    };
    i > br && b[i - br - 1] == b'\\'
}

/// Bare occurrences of an IPv6 address written without brackets
/// (`serverName: fd00::1`), delimited by bytes that cannot extend it.
fn find_bare_v6(text: &str, lower: &str, v6: &str, out: &mut Vec<Found>) {
    let b = text.as_bytes();
    let extends = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b':' | b'.' | b'_' | b'-');
    for pos in find_iter(lower, v6) {
        let end = pos + v6.len();
        if (pos > 0 && (extends(b[pos - 1]) || b[pos - 1] == b'/' || b[pos - 1] == b'@'))
            || b.get(end).is_some_and(|&c| extends(c))
        {
            continue;
        }
        // The literal of a URL (`https://[fd00::1]:99999`, `user@[fd00::1]`)
        // is that URL's, valid or not: never a bare address of its own.
        if pos >= 2 && b[pos - 1] == b'[' && (b[pos - 2] == b'/' || b[pos - 2] == b'@') {
            continue;
        }
        out.push(Found {
            start: pos,
            end,
            replace_end: end,
            host: text[pos..end].to_string(),
            port: None,
            bare: true,
            userinfo: None,
            path: String::new(),
            slash: None,
        });
    }
}

/// [`find_all`] on a decoded scalar value: ranges are byte offsets in `value`.
pub fn find_in_decoded(value: &str, extra_hosts: &[String]) -> Vec<Found> {
    find_all(value, &value.to_ascii_lowercase(), extra_hosts)
}

/// Rewrites every occurrence of `from` in a decoded scalar value, the same way the
/// byte splice does; used to compute what a rewritten scalar must read back as.
pub fn rewrite_value(value: &str, from: &Endpoint, to: &Endpoint) -> String {
    let from_host = from.host.to_ascii_lowercase();
    let mut out = String::with_capacity(value.len());
    let mut last = 0;
    for f in find_in_decoded(value, std::slice::from_ref(&from_host)) {
        if f.rewritable() && f.matches(from) {
            out.push_str(&value[last..f.start]);
            out.push_str(&f.replacement(to));
            last = f.replace_end;
        }
    }
    out.push_str(&value[last..]);
    out
}

/// The lenient matching key of an endpoint written as text (a URL or a bare host).
fn key_of_text(s: &str) -> String {
    let t = s.trim();
    if has_https_prefix(t) {
        if let Some(a) = parse_authority(t.as_bytes(), 8) {
            let mut k = key_of(&t[a.host.clone()], a.port);
            k.push_str(&t[a.end..a.proxy_end].to_ascii_lowercase());
            return k;
        }
        return t[8..].trim_end_matches('/').to_ascii_lowercase();
    }
    t.trim_end_matches('/').to_ascii_lowercase()
}

/// Levenshtein distance between two byte strings.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The "did you mean" for a `--from` that matches nothing: the candidate
/// (endpoints as written, URL or bare host) closest to `wanted`.
///
/// Keys are compared lower-case ([`Endpoint::key`]); a candidate is close when
/// its edit distance is at most `max(3, len / 8)` of the wanted key's length,
/// or when one host is the other's leading labels (`https://<cluster id>` for
/// `https://<cluster id>.gr7.<region>.eks.amazonaws.com`). Ties go to the
/// first candidate.
pub fn closest<'a>(wanted: &Endpoint, candidates: &'a [String]) -> Option<&'a str> {
    let w = wanted.key();
    let limit = 3.max(w.len() / 8);
    let prefix =
        |a: &str, b: &str| a.len() > b.len() && a.starts_with(b) && a.as_bytes()[b.len()] == b'.';
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let k = key_of_text(c);
        if k.is_empty() {
            continue;
        }
        let d = if prefix(&k, &w) || prefix(&w, &k) {
            1
        } else {
            edit_distance(w.as_bytes(), k.as_bytes())
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c.as_str()));
        }
    }
    best.map(|(_, c)| c)
}

/// The body of a double-quoted YAML scalar, decoded, with where each piece of
/// the decoded text comes from in the raw body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The scalar's value as any YAML reader sees it.
    pub text: String,
    /// `(raw, decoded)` byte ranges, in order, contiguous on both sides and
    /// covering all of the raw body and all of `text`. Each is one literal
    /// character, one escape (`\x2e` → `.`), or one line break with the white
    /// space folded around it (decoded to ` `, to `\n`s, or, for an escaped
    /// line break, to nothing).
    pub spans: Vec<(Range<usize>, Range<usize>)>,
}

fn line_break_len(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'\n') => 1,
        Some(b'\r') if b.get(i + 1) == Some(&b'\n') => 2,
        Some(b'\r') => 1,
        _ => 0,
    }
}

/// After a line break at `b[i..]` (already consumed), skips empty lines and the
/// next line's leading white space; returns the new index and the number of
/// empty lines.
fn fold_rest(b: &[u8], mut i: usize) -> (usize, usize) {
    let mut empty = 0;
    loop {
        let ws = b[i..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let br = line_break_len(b, i + ws);
        if br == 0 {
            return (i + ws, empty);
        }
        empty += 1;
        i += ws + br;
    }
}

fn hex_char(b: &[u8], at: usize, digits: usize) -> Option<char> {
    let h = std::str::from_utf8(b.get(at..at + digits)?).ok()?;
    if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    char::from_u32(u32::from_str_radix(h, 16).ok()?)
}

/// Decodes the body of a double-quoted YAML scalar (the bytes between the
/// quotes): the escapes `\0 \a \b \t \<TAB> \n \v \f \r \e \<SPACE> \" \/ \\ \N
/// \_ \L \P \xXX \uXXXX \UXXXXXXXX`, escaped line breaks (`\` + break: the break
/// and the next line's indentation vanish), and line folding (a single break
/// with the white space around it reads as one space; `n` empty lines read as
/// `n` line feeds). Line breaks are `\n`, `\r\n` and a lone `\r`.
///
/// `None` when the body is not valid: an unknown or truncated escape, an escape
/// naming no character (a surrogate), or an unescaped `"`.
pub fn escape_map(raw_inner: &str) -> Option<Decoded> {
    let b = raw_inner.as_bytes();
    let mut text = String::with_capacity(raw_inner.len());
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let d0 = text.len();
        match b[i] {
            b'"' => return None,
            b'\\' => {
                let e = *b.get(i + 1)?;
                let br = line_break_len(b, i + 1);
                if br > 0 {
                    let (next, empty) = fold_rest(b, i + 1 + br);
                    text.extend(std::iter::repeat_n('\n', empty));
                    i = next;
                } else {
                    let (c, len) = match e {
                        b'0' => ('\0', 2),
                        b'a' => ('\x07', 2),
                        b'b' => ('\x08', 2),
                        b't' | b'\t' => ('\t', 2),
                        b'n' => ('\n', 2),
                        b'v' => ('\x0b', 2),
                        b'f' => ('\x0c', 2),
                        b'r' => ('\r', 2),
                        b'e' => ('\x1b', 2),
                        b' ' => (' ', 2),
                        b'"' => ('"', 2),
                        b'/' => ('/', 2),
                        b'\\' => ('\\', 2),
                        b'N' => ('\u{85}', 2),
                        b'_' => ('\u{a0}', 2),
                        b'L' => ('\u{2028}', 2),
                        b'P' => ('\u{2029}', 2),
                        b'x' => (hex_char(b, i + 2, 2)?, 4),
                        b'u' => (hex_char(b, i + 2, 4)?, 6),
                        b'U' => (hex_char(b, i + 2, 8)?, 10),
                        _ => return None,
                    };
                    text.push(c);
                    i += len;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                let ws = b[i..]
                    .iter()
                    .take_while(|&&c| c == b' ' || c == b'\t')
                    .count();
                let br = line_break_len(b, i + ws);
                if br == 0 {
                    text.push(b[i] as char);
                    i += 1;
                } else {
                    let (next, empty) = fold_rest(b, i + ws + br);
                    if empty == 0 {
                        text.push(' ');
                    } else {
                        text.extend(std::iter::repeat_n('\n', empty));
                    }
                    i = next;
                }
            }
            _ => {
                let c = raw_inner[i..].chars().next()?;
                text.push(c);
                i += c.len_utf8();
            }
        }
        spans.push((start..i, d0..text.len()));
    }
    Some(Decoded { text, spans })
}

/// Replaces, in the body of a double-quoted YAML scalar, the raw bytes that
/// decode to exactly `decoded_range` of its value with `replacement` (written
/// literally, escaped only where it must be), and keeps every other raw byte.
///
/// The matched raw bytes may hold escapes (`\u0068ttps://`, `\x2e`): they are
/// replaced as a whole. `None` when this cannot be done byte-exactly: the body
/// does not decode, the range is empty or does not fall on the boundaries of
/// escapes, or it covers a line break (folded or escaped) whose removal would
/// change the lines of the file; the caller refuses with a clear error then.
/// The result is checked by decoding it again.
pub fn splice_decoded(
    raw_inner: &str,
    decoded_range: Range<usize>,
    replacement: &str,
) -> Option<String> {
    splice_with(
        raw_inner,
        decoded_range,
        replacement,
        escape_map,
        escape_body,
    )
}

/// `s` written as the body of a double-quoted string, valid in JSON and in
/// YAML alike: the one escaper ([`crate::text::quote::escape_into`]).
pub fn escape_body(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    crate::text::quote::escape_into(&mut out, s);
    out
}

pub fn splice_with(
    raw_inner: &str,
    decoded_range: Range<usize>,
    replacement: &str,
    decode: fn(&str) -> Option<Decoded>,
    escape: fn(&str) -> String,
) -> Option<String> {
    let d = decode(raw_inner)?;
    let r = decoded_range;
    if r.start >= r.end || r.end > d.text.len() {
        return None;
    }
    let first = d
        .spans
        .iter()
        .position(|(_, dr)| dr.start == r.start && !dr.is_empty())?;
    let last = d
        .spans
        .iter()
        .rposition(|(_, dr)| dr.end == r.end && !dr.is_empty())?;
    if first > last {
        return None;
    }
    let covered = &d.spans[first..=last];
    if covered.iter().any(|(raw, _)| {
        raw_inner.as_bytes()[raw.clone()]
            .iter()
            .any(|&c| c == b'\n' || c == b'\r')
    }) {
        return None;
    }
    let raw = d.spans[first].0.start..d.spans[last].0.end;
    let mut out = String::with_capacity(raw_inner.len() + replacement.len());
    out.push_str(&raw_inner[..raw.start]);
    // Slashes stay as written (`https:\/\/host`, `https:\u002F\u002Fhost`):
    // the new endpoint's k-th slash is spelt as the old one's k-th; one
    // the old endpoint has not, as its first escaped slash (else plain).
    let slashes: Vec<&str> = covered
        .iter()
        .filter(|(_, dr)| &d.text[dr.clone()] == "/")
        .map(|(raw, _)| &raw_inner[raw.clone()])
        .collect();
    let other = slashes.iter().copied().find(|s| *s != "/").unwrap_or("/");
    let mut k = 0;
    for c in escape(replacement).chars() {
        if c == '/' {
            out.push_str(slashes.get(k).copied().unwrap_or(other));
            k += 1;
        } else {
            out.push(c);
        }
    }
    out.push_str(&raw_inner[raw.end..]);
    let mut want = d.text.clone();
    want.replace_range(r, replacement);
    (decode(&out)?.text == want).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_shape_has_a_positive_and_a_negative_example() {
        let id = "0123456789ABCDEF0123456789ABCDEF";
        let examples = [
            (
                Shape::Eks,
                format!("{id}.gr7.ap-northeast-2.eks.amazonaws.com"),
                format!("{id}x.gr7.ap-northeast-2.eks.amazonaws.com"),
            ),
            (
                Shape::Aks,
                "prod-ab12cd34.hcp.westeurope.azmk8s.io".to_string(),
                "hcp.azmk8s.io".to_string(),
            ),
            (
                Shape::Gke,
                "cluster-1.gke.goog".to_string(),
                ".gke.goog".to_string(),
            ),
        ];
        assert_eq!(examples.len(), HOST_SHAPES.len(), "a row without examples");
        for (want, yes, no) in examples {
            assert_eq!(shape(&yes), want, "{yes}");
            assert_eq!(shape(&yes.to_ascii_uppercase()), want, "{yes}, upper case");
            assert_eq!(shape(&no), Shape::Other, "{no}");
        }
    }

    /// Every managed-cluster suffix, written as a bare host (no URL in the
    /// file), lets the file through the first look, in any case; a file
    /// with none of them (nor a URL) does not get through.
    #[test]
    fn the_file_prefilter_passes_every_managed_suffix() {
        let pre = Prefilter::new(&[], false);
        for n in &MANAGED_SUFFIXES {
            let host = format!("0123456789abcdef0123456789abcdef.gr7.region{}", n.text);
            for text in [host.clone(), host.to_ascii_uppercase()] {
                let file = format!("clusters:\n- cluster:\n    tls-server-name: {text}\n");
                assert!(pre.scan(file.as_bytes()).0, "{file}");
            }
        }
        assert!(!pre.scan(b"tls-server-name: cp.internal.example\n").0);
        // A rebind looks for its own hosts only.
        let only = Prefilter::new(&["cp.internal.example".into()], true);
        assert!(only.scan(b"tls-server-name: CP.Internal.Example\n").0);
        assert!(!only.scan(b"server: https://kubernetes.default.svc\n").0);
    }

    const EKS: &str = "0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

    fn find(t: &str) -> Vec<Found> {
        find_all(t, &t.to_ascii_lowercase(), &[])
    }

    fn texts(t: &str, extra: &[&str]) -> Vec<String> {
        let extra: Vec<String> = extra.iter().map(|s| s.to_ascii_lowercase()).collect();
        find_all(t, &t.to_ascii_lowercase(), &extra)
            .iter()
            .map(|f| t[f.start..f.end].to_string())
            .collect()
    }

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse("--from", s).unwrap()
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
            "https://a.b:0",
            "https://a.b:443:443",
            "https://user@a.b",
            "https://a..b",
            "https://[",
            "https://[not an ip]",
            "https://[fd00::1",
            "https://[fd00::zz]",
            "https://a.b/k8s/clusters/",
            "https:/é",
            "",
        ] {
            assert!(Endpoint::parse("--to", bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn parse_refuses_userinfo_naming_credentials() {
        let e = Endpoint::parse("--from", "https://user:pw@a.example.com").unwrap_err();
        assert!(e.to_string().contains("credentials"), "{e}");
        assert!(!e.to_string().contains("pw"), "{e}");
        let e = Endpoint::parse("--to", "https://[fd00::1").unwrap_err();
        assert!(e.to_string().contains("IPv6"), "{e}");
    }

    #[test]
    fn parse_accepts_ipv6_literals_and_rancher_paths() {
        let e = Endpoint::parse("--to", "https://[::1]:6443").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("[::1]", Some(6443)));
        assert_eq!(e.url(), "https://[::1]:6443");
        let r = Endpoint::parse(
            "--to",
            "https://rancher.example.com/k8s/clusters/c-m-4x7kq2/",
        )
        .unwrap();
        assert_eq!(r.path, "/k8s/clusters/c-m-4x7kq2");
        assert_eq!(r.key(), "rancher.example.com/k8s/clusters/c-m-4x7kq2");
        assert_eq!(
            r.url(),
            "https://rancher.example.com/k8s/clusters/c-m-4x7kq2"
        );
        assert_eq!(r.shape(), Shape::Rancher);
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
        assert_eq!(
            shape("prod-aks-5f2c1e.privatelink.japaneast.azmk8s.io"),
            Shape::Aks
        );
        assert_eq!(shape("gke-1-p.us-central1.gke.goog"), Shape::Gke);
        assert_eq!(shape("Kubernetes.Default.Svc"), Shape::InCluster);
        assert_eq!(shape("github.com"), Shape::Other);
    }

    /// The shape of the one URL in `url`, as the inventory sees it.
    fn url_shape(url: &str) -> Shape {
        let f = find(url);
        assert_eq!(f.len(), 1, "{url}");
        f[0].shape()
    }

    #[test]
    fn shapes_that_need_port_or_path() {
        assert_eq!(
            url_shape("https://api.ocp-prod.example.co.jp:6443"),
            Shape::OpenShift
        );
        assert_eq!(
            url_shape("https://API.ocp4.corp.example.com:6443/"),
            Shape::OpenShift
        );
        assert_eq!(
            url_shape("https://rancher.example.com/k8s/clusters/c-abc12"),
            Shape::Rancher
        );
        assert_eq!(
            url_shape("https://rancher.example.com:8443/k8s/clusters/local"),
            Shape::Rancher
        );
        let f = &find("server: https://rancher.example.com/k8s/clusters/c-abc12/api?x=1")[0];
        assert_eq!(f.path, "/k8s/clusters/c-abc12");
        assert_eq!(f.key(), "rancher.example.com/k8s/clusters/c-abc12");
        assert!(f.matches(&ep("https://rancher.example.com/k8s/clusters/c-abc12")));
        assert!(!f.matches(&ep("https://rancher.example.com/k8s/clusters/c-xyz99")));
        assert!(!f.matches(&ep("https://rancher.example.com")));
    }

    #[test]
    fn host_shapes_never_make_charts_git_oidc_registries_webhooks_or_ingresses_clusters() {
        for url in [
            "https://charts.bitnami.com/bitnami",
            "https://prometheus-community.github.io/helm-charts",
            "https://github.com/org/repo.git",
            "https://gitlab.example.com/platform/gitops.git",
            "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF",
            "https://koreacentral.oic.prod-aks.azure.com/00000000-0000-0000-0000-000000000000/",
            "https://container.googleapis.com/v1/projects/p/locations/us-central1/clusters/c",
            "https://123456789012.dkr.ecr.us-east-1.amazonaws.com",
            "https://ghcr.io/org/image",
            "https://hooks.slack.com/services/T000/B000/XXXX",
            "https://api.example.com",
            "https://api.example.com/v1/webhook",
            "https://api.example.com:8443",
            "https://argocd.apps.ocp-prod.example.com",
            "https://grafana.example.com/k8s/dashboards/c-abc12",
            "https://api.6443.example.com",
            "https://api.10.0.0.1:6443",
        ] {
            assert_eq!(url_shape(url), Shape::Other, "{url}");
        }
        // Bare hosts of the same services are not found without --from at all.
        let t = "a: oidc.eks.us-east-1.amazonaws.com\nb: 123456789012.dkr.ecr.us-east-1.amazonaws.com\n";
        assert!(find(t).is_empty());
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
            format!("https://{EKS}:65536"),
            format!("https://{EKS}:443:443y"),
            format!("https://{EKS}:6443x"),
        ] {
            assert!(find(&t).is_empty(), "{t}");
        }
        let from = Endpoint::parse("--from", &format!("https://{EKS}")).unwrap();
        let to = Endpoint::parse("--to", "https://new.example.com").unwrap();
        for v in [
            format!("a: https://{EKS}:99999"),
            format!("a: https://{EKS}:443:443y"),
        ] {
            assert_eq!(rewrite_value(&v, &from, &to), v);
        }
    }

    #[test]
    fn a_port_may_end_the_url_at_punctuation_or_path() {
        for (t, port) in [
            ("https://h.example.com:6443: x", 6443),
            ("https://h.example.com:6443.", 6443),
            ("https://h.example.com:6443#frag", 6443),
            ("https://h.example.com:6443/api", 6443),
            ("https://h.example.com:6443?q", 6443),
            ("\"https://h.example.com:6443\"", 6443),
            ("https://h.example.com:6443에서", 6443),
            ("https://h.example.com:65535", 65535),
            // A sentence's dot before a YAML key's colon (found by the
            // structured oracle: the raw text and the decoded key disagreed).
            ("https://h.example.com:6443.: x", 6443),
            ("https://[fd00::1]:6443.: x", 6443),
            ("https://h.example.com:6443.", 6443),
        ] {
            let f = find(t);
            assert_eq!(f.len(), 1, "{t}");
            assert_eq!(f[0].port, Some(port), "{t}");
        }
    }

    #[test]
    fn a_malformed_url_never_hides_the_endpoints_after_it() {
        for bad in [
            "# example: https://[fd00::1 (IPv6 clusters need brackets)",
            "note: \"see https://[cluster-endpoint for the format\"",
            "x: https://[not an ip] and https://[",
            "y: https://:6443 https://host:443:443y https://a..b https://.x",
        ] {
            let t = format!("{bad}\ndestination:\n  server: https://{EKS}\n");
            assert_eq!(texts(&t, &[]), vec![format!("https://{EKS}")], "{bad}");
            // Also on the same line, right after the bad token.
            let t = format!("{bad} https://{EKS}\n");
            assert_eq!(texts(&t, &[]), vec![format!("https://{EKS}")], "{bad}");
        }
    }

    #[test]
    fn ipv6_literals_are_validated() {
        let t = "a: https://[fd00::1]:6443/x\nb: https://[FD00::ZZ]:6443\nc: https://[::ffff:10.0.0.1]\n";
        let f = find(t);
        let got: Vec<_> = f.iter().map(|f| (f.host.as_str(), f.port)).collect();
        assert_eq!(
            got,
            vec![("[fd00::1]", Some(6443)), ("[::ffff:10.0.0.1]", None)]
        );
        assert!(f[0].matches(&ep("https://[FD00::1]:6443")));
    }

    #[test]
    fn userinfo_is_found_reported_and_kept_by_a_rewrite() {
        let t = format!("server: https://deploy:s3cret@{EKS}:443/x\n");
        let f = find(&t);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].host, EKS);
        assert_eq!(f[0].userinfo.as_deref(), Some("deploy:s3cret"));
        assert_eq!(
            &t[f[0].start..f[0].end],
            format!("https://deploy:s3cret@{EKS}:443/x")
        );
        assert!(f[0].matches(&ep(&format!("https://{EKS}"))));
        let to = ep("https://new.example.com:6443");
        assert_eq!(
            f[0].replacement(&to),
            "https://deploy:s3cret@new.example.com:6443"
        );
        let from = ep(&format!("https://{EKS}"));
        assert_eq!(
            rewrite_value(&t, &from, &to),
            "server: https://deploy:s3cret@new.example.com:6443/x\n"
        );
        // Never `https://user` as an endpoint.
        assert!(find("a: https://user@host.example.com")
            .iter()
            .all(|f| f.host == "host.example.com"));
        assert_eq!(
            redact(&format!("https://deploy:s3cret@{EKS} https://u@x.io")),
            format!("https://deploy:***@{EKS} https://u@x.io")
        );
    }

    #[test]
    fn a_host_split_by_an_escaped_line_break_yields_no_fragments() {
        for br in ["\n", "\r\n", "\r"] {
            let t = format!(
                "server: \"https://0123456789ABCDEF0123456789ABCDEF.gr7.\\{br}  ap-northeast-2.eks.amazonaws.com\"{br}"
            );
            assert!(find(&t).is_empty(), "{t:?}: {:?}", find(&t));
            let raw = &t[9..t.len() - 1 - br.len()];
            let d = escape_map(raw).unwrap();
            let f = find_in_decoded(&d.text, &[]);
            assert_eq!(f.len(), 1);
            assert_eq!(f[0].shape(), Shape::Eks);
        }
        // A shell continuation after a space is not a split host.
        let t = format!("curl https://{EKS} \\\n  -k\n");
        assert_eq!(find(&t).len(), 1);
    }

    #[test]
    fn finds_bare_hosts_but_not_longer_hosts() {
        let t = format!("serverName: {EKS}\nother: {EKS}.evil.com\nmail: a@{EKS}\n");
        let f = find(&t);
        assert_eq!(f.len(), 1);
        assert!(f[0].bare);
        assert!(!f[0].is_bare_ip());
        assert_eq!(f[0].host, EKS);
    }

    #[test]
    fn extra_hosts_match_whole_hosts_only() {
        let t = "a: 10.0.0.1\nb: 10.0.0.10\nc: https://10.0.0.1:6443\nd: 110.0.0.1\ne: 10.0.0.1.5\nf: [10.0.0.1, x]\n";
        assert_eq!(
            texts(t, &["10.0.0.1"]),
            vec!["10.0.0.1", "https://10.0.0.1:6443", "10.0.0.1"]
        );
    }

    #[test]
    fn a_bare_host_with_another_port_is_another_endpoint() {
        let from = ep("https://10.0.0.1:6443");
        let to = ep("https://10.0.0.2:6443");
        let t = "nodeExporter: 10.0.0.1:9100\nserverName: 10.0.0.1\napi: 10.0.0.1:6443\nother: https://10.0.0.1:8443\n";
        let f = find_all(t, t, &["10.0.0.1".into()]);
        let got: Vec<_> = f
            .iter()
            .map(|f| (&t[f.start..f.end], f.port, f.matches(&from), f.is_bare_ip()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("10.0.0.1:9100", Some(9100), false, true),
                ("10.0.0.1", None, true, true),
                ("10.0.0.1:6443", Some(6443), true, true),
                ("https://10.0.0.1:8443", Some(8443), false, false),
            ]
        );
        assert_eq!(
            rewrite_value(t, &from, &to),
            "nodeExporter: 10.0.0.1:9100\nserverName: 10.0.0.2\napi: 10.0.0.2:6443\nother: https://10.0.0.1:8443\n"
        );
        // A bare host with port 443 is the endpoint without a port.
        let f = &find_all(
            "h.example.com:443",
            "h.example.com:443",
            &["h.example.com".into()],
        )[0];
        assert!(f.matches(&ep("https://h.example.com")));
        assert!(!f.matches(&ep("https://h.example.com:6443")));
        // A malformed port makes it no endpoint at all.
        assert!(find_all(
            "a: 10.0.0.1:99999",
            "a: 10.0.0.1:99999",
            &["10.0.0.1".into()]
        )
        .is_empty());
    }

    #[test]
    fn bare_ipv6_addresses_with_and_without_brackets() {
        let from = ep("https://[fd00::1]:6443");
        let to = ep("https://[fd00::2]:6443");
        let t = "serverName: fd00::1\nb: [fd00::1]\nc: fd00::10\nd: 2fd00::1\n";
        let f = find_all(t, t, &["[fd00::1]".into()]);
        let got: Vec<_> = f
            .iter()
            .map(|f| (&t[f.start..f.end], f.is_bare_ip()))
            .collect();
        assert_eq!(got, vec![("fd00::1", true), ("[fd00::1]", true)]);
        assert!(f.iter().all(|f| f.matches(&from)));
        assert_eq!(f[0].replacement(&to), "fd00::2");
        assert_eq!(f[1].replacement(&to), "[fd00::2]");
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

    #[test]
    fn rancher_proxy_paths_are_rebound_as_part_of_the_endpoint() {
        let from = ep("https://rancher.example.com/k8s/clusters/c-1");
        let to = ep("https://rancher.example.com/k8s/clusters/c-2");
        let v = "a https://rancher.example.com/k8s/clusters/c-1/ b https://rancher.example.com/k8s/clusters/c-11 c https://rancher.example.com/dashboard d rancher.example.com";
        assert_eq!(
            rewrite_value(v, &from, &to),
            "a https://rancher.example.com/k8s/clusters/c-2/ b https://rancher.example.com/k8s/clusters/c-11 c https://rancher.example.com/dashboard d rancher.example.com"
        );
        let eks = ep(&format!("https://{EKS}"));
        assert_eq!(
            rewrite_value(&format!("server: https://{EKS}/"), &eks, &to),
            "server: https://rancher.example.com/k8s/clusters/c-2/"
        );
        assert_eq!(
            rewrite_value(
                "server: https://rancher.example.com/k8s/clusters/c-1",
                &from,
                &eks
            ),
            format!("server: https://{EKS}")
        );
    }

    #[test]
    fn closest_suggests_near_misses() {
        let prod = format!("https://{EKS}");
        let other =
            "https://ABCDEF0123456789ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com".to_string();
        let cands = vec![other.clone(), prod.clone()];
        let one_digit = EKS.replacen('7', "8", 1);
        assert_eq!(
            closest(&ep(&format!("https://{one_digit}")), &cands),
            Some(prod.as_str())
        );
        let co = format!("https://{}", EKS.trim_end_matches('m'));
        assert_eq!(closest(&ep(&co), &cands), Some(prod.as_str()));
        assert_eq!(
            closest(&ep("https://0123456789ABCDEF0123456789ABCDEF"), &cands),
            Some(prod.as_str())
        );
        assert_eq!(
            closest(&ep("https://totally.different.example.org"), &cands),
            None
        );
        assert_eq!(closest(&ep("https://a.b"), &[]), None);
        assert_eq!(closest(&ep("https://a.b"), &["https:/é".into()]), None);
        // Ports count: a different port is a near miss of one or more edits.
        let c = vec!["https://api.ocp.example.com:6443".to_string()];
        assert_eq!(
            closest(&ep("https://api.ocp.example.com:6444"), &c),
            Some(c[0].as_str())
        );
    }

    // ---- the extent of a URL ----

    /// Each found piece as `(text, host, port)`.
    fn extents(t: &str, extra: &[&str]) -> Vec<(String, String, Option<u16>)> {
        let extra: Vec<String> = extra.iter().map(|s| s.to_ascii_lowercase()).collect();
        find_all(t, &t.to_ascii_lowercase(), &extra)
            .iter()
            .map(|f| (t[f.start..f.end].to_string(), f.host.clone(), f.port))
            .collect()
    }

    #[test]
    fn a_trailing_dot_before_a_port_or_path_is_the_absolute_names() {
        let h = "api.example.com";
        let one = |t: &str| extents(t, &[h]);
        for (t, whole, port) in [
            (
                "https://api.example.com.:6443",
                "https://api.example.com.:6443",
                Some(6443),
            ),
            (
                "https://API.example.com.:6443/x",
                "https://API.example.com.:6443/x",
                Some(6443),
            ),
            (
                "https://api.example.com./x?y",
                "https://api.example.com./x?y",
                None,
            ),
            (
                "https://api.example.com.?q",
                "https://api.example.com.?q",
                None,
            ),
            (
                "https://api.example.com.#f",
                "https://api.example.com.#f",
                None,
            ),
            (
                "https://u:p@api.example.com.:443",
                "https://u:p@api.example.com.:443",
                Some(443),
            ),
            ("api.example.com.:6443", "api.example.com.:6443", Some(6443)),
            // A final dot is a sentence's: outside the endpoint.
            (
                "see https://api.example.com.",
                "https://api.example.com",
                None,
            ),
            ("see api.example.com. Then", "api.example.com", None),
        ] {
            let f = one(t);
            assert_eq!(f.len(), 1, "{t}: {f:?}");
            assert_eq!(f[0].0, whole, "{t}");
            assert!(
                f[0].1.eq_ignore_ascii_case(h),
                "{t}: the name has no dot: {f:?}"
            );
            assert_eq!(f[0].2, port, "{t}");
        }
    }

    /// Two dots are no host; neither is a dot before an invalid port.
    #[test]
    fn two_dots_or_a_dot_before_a_bad_port_are_no_host() {
        for t in [
            "https://api.example.com..:6443",
            "https://api.example.com..:6443/x",
            "https://api.example.com.:99999",
            "https://api.example.com.:6443x",
            "api.example.com..:6443",
            "api.example.com.:0",
        ] {
            assert_eq!(extents(t, &["api.example.com"]), vec![], "{t}");
        }
    }

    /// The port counts: `H.:6443` is `https://H:6443`, never `https://H`;
    /// `--to` written as an absolute name is written so.
    #[test]
    fn an_absolute_names_port_counts() {
        let t = "a: https://api.example.com.:6443\nb: api.example.com.:6443\n";
        let f = find_all(t, t, &["api.example.com".into()]);
        assert_eq!(f.len(), 2);
        for f in &f {
            assert!(f.matches(&ep("https://api.example.com:6443")), "{f:?}");
            assert!(f.matches(&ep("https://API.example.com.:6443/")), "{f:?}");
            assert!(!f.matches(&ep("https://api.example.com")), "{f:?}");
        }
        assert_eq!(
            rewrite_value(
                t,
                &ep("https://api.example.com:6443"),
                &ep("https://new.example.com:7443")
            ),
            "a: https://new.example.com:7443\nb: new.example.com:7443\n"
        );
        assert_eq!(
            rewrite_value(
                t,
                &ep("https://api.example.com:6443"),
                &ep("https://new.example.com.:7443")
            ),
            "a: https://new.example.com.:7443\nb: new.example.com.:7443\n"
        );
        assert_eq!(
            rewrite_value(
                t,
                &ep("https://api.example.com"),
                &ep("https://new.example.com")
            ),
            t
        );
    }

    /// Managed-cluster hosts found by shape follow the same rule.
    #[test]
    fn managed_hosts_found_by_shape_may_be_absolute_names() {
        let t = format!("a: https://{EKS}.:443/x b: {EKS}.:443 c: {EKS}.:6443");
        let f = find(&t);
        let got: Vec<_> = f
            .iter()
            .map(|f| (&t[f.start..f.end], f.port, f.host == EKS))
            .collect();
        assert_eq!(
            got,
            vec![
                (&*format!("https://{EKS}.:443/x"), Some(443), true),
                (&*format!("{EKS}.:443"), Some(443), true),
                (&*format!("{EKS}.:6443"), Some(6443), true),
            ]
        );
        assert_eq!(f[0].shape(), Shape::Eks);
    }

    #[test]
    fn from_and_to_may_be_absolute_names() {
        let e = ep("https://API.example.com.:6443");
        assert_eq!(
            (e.host.as_str(), e.port, e.absolute),
            ("API.example.com", Some(6443), true)
        );
        assert_eq!(e.key(), "api.example.com:6443");
        assert_eq!(e.url(), "https://API.example.com.:6443");
        for s in ["https://api.example.com.", "https://api.example.com./"] {
            let e = ep(s);
            assert_eq!(
                (e.host.as_str(), e.absolute, e.key().as_str()),
                ("api.example.com", true, "api.example.com"),
                "{s}"
            );
            assert_eq!(e.url(), "https://api.example.com.");
        }
        for bad in [
            "https://api.example.com..",
            "https://api.example.com..:6443",
            "https://.:6443",
        ] {
            assert!(Endpoint::parse("--from", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unicode_white_space_ends_a_url() {
        for ws in [
            '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{2009}', '\u{200a}', '\u{2028}',
            '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
        ] {
            assert!(ws.is_whitespace());
            let t = format!(
                "https://docs.example.com/x{ws}https://{EKS}/y{ws}{EKS}:443{ws}https://{EKS}"
            );
            let f = find(&t);
            let got: Vec<&str> = f.iter().map(|f| &t[f.start..f.end]).collect();
            assert_eq!(
                got,
                vec![
                    "https://docs.example.com/x",
                    &*format!("https://{EKS}/y"),
                    &*format!("{EKS}:443"),
                    &*format!("https://{EKS}"),
                ],
                "U+{:04X}",
                ws as u32
            );
        }
        // Other non-ASCII text is part of a path (an IRI), and a path's
        // last punctuation is a sentence's.
        let t = "https://wiki.example.com/문서/클러스터; next";
        assert_eq!(
            extents(t, &[]),
            vec![(
                "https://wiki.example.com/문서/클러스터".to_string(),
                "wiki.example.com".to_string(),
                None
            )]
        );
    }

    #[test]
    fn a_url_with_another_or_an_invalid_port_is_never_the_host_without_one() {
        let from = ep("https://[fd00::1]:6443");
        let v6 = ["[fd00::1]".to_string()];
        for t in [
            "https://[fd00::1]:99999",
            "https://[fd00::1]:6443x",
            "https://[fd00::1]:0",
            "https://[fd00::1]:x",
            "https://u@[fd00::1]:99999",
            "https://[fd00::1]:6443:6443",
        ] {
            let f = find_all(t, t, &v6);
            assert!(f.is_empty(), "{t}: {f:?}");
        }
        let t = "https://[fd00::1]:7443";
        let f = find_all(t, t, &v6);
        assert_eq!(f.len(), 1);
        assert!(!f[0].matches(&from));
        for t in [
            "https://h.example.com:x",
            "https://h.example.com:6443x",
            "https://h.example.com:abc/",
        ] {
            assert!(find_all(t, t, &["h.example.com".into()]).is_empty(), "{t}");
        }
        // A colon that ends the text, or an empty port before a path, is fine.
        for t in [
            "https://h.example.com: x",
            "https://h.example.com:",
            "https://h.example.com:/x",
        ] {
            let f = find_all(t, t, &["h.example.com".into()]);
            assert_eq!(f.len(), 1, "{t}");
            assert_eq!(f[0].port, None, "{t}");
        }
    }

    #[test]
    fn to_must_be_a_dns_name_or_an_ip_and_a_port_is_written_as_given() {
        let long_label = "a".repeat(64);
        let long_name = format!("{}.com", ["abcdefghi"; 25].join("."));
        for bad in [
            "https://-bad.example.com",
            "https://bad-.example.com",
            "https://a_b.example.com",
            &*format!("https://{long_label}.example.com"),
            &*long_name,
            "https://999.0.0.1",
            "https://10.0.0.256:6443",
        ] {
            let e = Endpoint::parse("--to", bad);
            assert!(e.is_err(), "{bad} accepted");
            // `--from` names what the files hold, whatever it is.
            if !bad.ends_with(".com") || bad.contains('_') || bad.contains('-') {
                let _ = Endpoint::parse("--from", bad);
            }
        }
        assert!(Endpoint::parse("--from", "https://a_b.example.com").is_ok());
        let e = Endpoint::parse("--to", &format!("https://{}.com", "a".repeat(63))).unwrap();
        assert_eq!(e.host.len(), 67);
        for good in [
            "https://10.0.0.2:6443",
            "https://[fd00::2]:6443",
            "https://x1.example.com",
            "https://0abc.gr7.example.com.",
        ] {
            assert!(Endpoint::parse("--to", good).is_ok(), "{good}");
        }
        // A leading zero is refused (never written as another spelling).
        for bad in [
            "https://h.example.com:0443",
            "https://h.example.com.:06443",
            "https://[fd00::2]:00443",
        ] {
            let e = Endpoint::parse("--to", bad).unwrap_err().to_string();
            assert!(
                e.contains("leading zero") && e.contains("write it as :"),
                "{e}"
            );
        }
        assert_eq!(
            ep("https://h.example.com:443").url(),
            "https://h.example.com:443"
        );
        assert_eq!(
            ep("https://h.example.com:8443").url(),
            "https://h.example.com:8443"
        );
    }

    #[test]
    fn a_host_in_a_url_of_another_scheme_is_found_as_that_url_never_rewritable() {
        let t = "a http://H.example.com:8080/x b wss://h.example.com c grpc+tls://h.example.com.:9/ d https://h.example.com e xhttps://h.example.com f http://h.example.com.evil g 1http://h.example.com";
        let f = find_all(t, &t.to_ascii_lowercase(), &["h.example.com".into()]);
        let got: Vec<_> = f
            .iter()
            .map(|f| (&t[f.start..f.end], f.port, f.rewritable()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("http://H.example.com:8080/x", Some(8080), false),
                ("wss://h.example.com", None, false),
                ("grpc+tls://h.example.com.:9/", Some(9), false),
                ("https://h.example.com", None, true),
                ("xhttps://h.example.com", None, false),
            ]
        );
        let from = ep("https://h.example.com:6443");
        assert!(f
            .iter()
            .filter(|f| !f.rewritable())
            .all(|f| f.matches(&from)));
        assert!(f
            .iter()
            .filter(|f| !f.rewritable())
            .all(|f| f.key() == "h.example.com"));
        assert!(!f[3].matches(&from));
        // A rewrite never touches them.
        assert_eq!(
            rewrite_value(
                t,
                &ep("https://h.example.com"),
                &ep("https://n.example.com")
            ),
            t.replace(" d https://h.", " d https://n.")
        );
    }

    #[test]
    fn a_bare_value_stands_alone_or_is_prose() {
        let at = |t: &str| {
            let s = t.find("10.0.0.1").unwrap();
            stands_alone(t, s..s + 8)
        };
        for t in [
            "10.0.0.1",
            "serverName: 10.0.0.1",
            "  clusterEndpoint: \"10.0.0.1\" # API",
            "{\"serverName\":\"10.0.0.1\"}",
            "{\\\"serverName\\\":\\\"10.0.0.1\\\"}",
            "a: [x, 10.0.0.1]",
            "- 10.0.0.1",
            "a\n  10.0.0.1  \nb",
        ] {
            assert!(at(t), "{t}");
        }
        for t in [
            "the old one was 10.0.0.1 and stays",
            "was 10.0.0.1",
            "10.0.0.1 is old",
            "clusterEndpoint: 10.0.0.1 or 10.0.0.9",
            "x-10.0.0.1",
        ] {
            assert!(!at(t), "{t}");
        }
    }

    // ---- double-quoted scalars ----

    fn dec(raw: &str) -> String {
        escape_map(raw).unwrap().text
    }

    #[test]
    fn escape_map_decodes_escapes() {
        assert_eq!(dec(r"\u0068ttps:\/\/a\x2eb"), "https://a.b");
        assert_eq!(
            dec(r#"\0\a\b\t\n\v\f\r\e\ \"\/\\"#),
            "\0\x07\x08\t\n\x0b\x0c\r\x1b \"/\\"
        );
        assert_eq!(dec(r"\N\_\L\P\U0001F600"), "\u{85}\u{a0}\u{2028}\u{2029}😀");
        assert_eq!(dec("a\\\tb"), "a\tb");
        for bad in [r"\q", r"\x4", r"\ud83d", "a\"b", "\\", r"\U0011FFFF"] {
            assert!(escape_map(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn escape_map_folds_lines() {
        assert_eq!(dec("a  \n   b"), "a b");
        assert_eq!(dec("a\r\n\r\n  b"), "a\nb");
        assert_eq!(dec("a\r  b"), "a b");
        assert_eq!(dec("a\\\n   b"), "ab");
        assert_eq!(dec("a \\\n  \n   b"), "a \nb");
        assert_eq!(dec("a\t\\\n \\ \tb"), "a\t \tb");
    }

    #[test]
    fn escape_map_spans_cover_both_sides() {
        let raw = "x \\u0068ttps://a\\\n   b\x20\n c";
        let d = escape_map(raw).unwrap();
        let mut r = 0;
        let mut t = 0;
        for (raw_r, dec_r) in &d.spans {
            assert_eq!((raw_r.start, dec_r.start), (r, t));
            r = raw_r.end;
            t = dec_r.end;
        }
        assert_eq!((r, t), (raw.len(), d.text.len()));
        assert_eq!(d.text, "x https://ab c");
    }

    /// What a YAML reader makes of a double-quoted scalar document.
    fn yaml_reads(raw_inner: &str) -> Option<String> {
        let docs = yaml_rust2::YamlLoader::load_from_str(&format!("\"{raw_inner}\"")).ok()?;
        docs.first()?.as_str().map(str::to_string)
    }

    #[test]
    fn escape_map_agrees_with_the_yaml_reader() {
        for raw in [
            r"\u0068ttps://a\x2eb:6443",
            "https://id.gr7.\\\n  ap-northeast-2.eks.amazonaws.com",
            "one\n two\n\n three",
            "tab\t\n\tend",
            "a \\\n\n  b",
            "crlf\r\n  next",
            "lone\r  cr",
            r"esc \/ \\ \t \N",
        ] {
            assert_eq!(escape_map(raw).map(|d| d.text), yaml_reads(raw), "{raw:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn escape_map_matches_yaml_rust2(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("a".to_string()),
            proptest::strategy::Just("é".to_string()),
            proptest::strategy::Just(" ".to_string()),
            proptest::strategy::Just("\t".to_string()),
            proptest::strategy::Just("\n".to_string()),
            proptest::strategy::Just("\r\n".to_string()),
            proptest::strategy::Just("\r".to_string()),
            proptest::strategy::Just("\\\n".to_string()),
            proptest::strategy::Just("\\ ".to_string()),
            proptest::strategy::Just("\\x2e".to_string()),
            proptest::strategy::Just("\\u0068".to_string()),
            proptest::strategy::Just("\\\\".to_string()),
            proptest::strategy::Just("\\\"".to_string()),
            proptest::strategy::Just("\\n".to_string()),
        ], 0..12)) {
            let raw: String = parts.concat();
            if let Some(want) = yaml_reads(&raw) {
                proptest::prop_assert_eq!(escape_map(&raw).map(|d| d.text), Some(want));
            }
        }
    }

    /// A host after `scheme:` and two escaped slashes is that URL's (an
    /// https one keeps its port and path, and is rewritten with the same
    /// escaped slash); after an escaped scheme or colon it is nobody's in the
    /// raw text (the decoded document reports it); after one escaped slash
    /// it is a bare host as ever.
    #[test]
    fn escaped_slashes_lead_to_the_url_they_belong_to() {
        let host = EKS.to_ascii_lowercase();
        let find = |t: &str| find_all(t, &t.to_ascii_lowercase(), std::slice::from_ref(&host));
        let to = Endpoint::parse("--to", "https://new.example.com:7443").unwrap();
        let f = find(&format!("\"https:\\/\\/{EKS}:6443\\/x\""));
        assert_eq!(f.len(), 1);
        assert!(!f[0].bare && f[0].port == Some(6443) && f[0].rewritable());
        assert_eq!(f[0].replacement(&to), "https:\\/\\/new.example.com:7443");
        let f = find(&format!("\"https:\\\\/\\\\/{EKS}\""));
        assert_eq!(
            f[0].replacement(&to),
            "https:\\\\/\\\\/new.example.com:7443"
        );
        assert!(f[0].port.is_none() && !f[0].bare);
        for escaped in ["\\u0068ttps:", "https\\u003a"] {
            assert!(
                find(&format!("{escaped}\\/\\/{EKS}")).is_empty(),
                "{escaped}"
            );
        }
        let f = find(&format!("http:\\/\\/{EKS}:6443"));
        assert!(f.len() == 1 && !f[0].rewritable());
        let f = find(&format!("x\\/{EKS}"));
        assert!(f.len() == 1 && f[0].bare);
    }

    #[test]
    fn splice_replaces_literal_and_escaped_endpoints() {
        let to = "https://new.example.com";
        let raw = format!("see https://{EKS}/x");
        let d = escape_map(&raw).unwrap();
        let f = &find_in_decoded(&d.text, &[])[0];
        assert_eq!(
            splice_decoded(&raw, f.start..f.replace_end, to).unwrap(),
            "see https://new.example.com/x"
        );
        // \u0068ttps:// and \x2e inside the host.
        let host = EKS.replacen('.', "\\x2e", 1);
        let raw = format!("\\u0068ttps:\\/\\/{host}:443\\/api");
        let d = escape_map(&raw).unwrap();
        assert_eq!(d.text, format!("https://{EKS}:443/api"));
        let f = &find_in_decoded(&d.text, &[])[0];
        assert_eq!(
            splice_decoded(&raw, f.start..f.replace_end, to).unwrap(),
            // Escaped slashes stay escaped; the rest is written plainly.
            "https:\\/\\/new.example.com\\/api"
        );
        // A replacement that needs escapes gets them.
        assert_eq!(
            splice_decoded("ab", 0..1, "\"\\\n").unwrap(),
            "\\\"\\\\\\nb"
        );
    }

    /// Each slash of the new endpoint is spelt as the old endpoint's slash
    /// at the same place (`\/`, `\u002F`, `\u002f`, `\x2f`, or plain); one
    /// the old endpoint has not, as its first escaped slash.
    #[test]
    fn slashes_keep_the_way_they_are_written() {
        let to = "https://new.example.com:6443";
        for (raw, want) in [
            (
                "https:\\u002F\\u002Fold.example.com:6443",
                "https:\\u002F\\u002Fnew.example.com:6443",
            ),
            (
                "https:\\u002f/old.example.com:6443",
                "https:\\u002f/new.example.com:6443",
            ),
            (
                "https:\\x2f\\/old.example.com:6443",
                "https:\\x2f\\/new.example.com:6443",
            ),
            (
                "https://old.example.com:6443",
                "https://new.example.com:6443",
            ),
        ] {
            let d = escape_map(raw).unwrap();
            let f = &find_in_decoded(&d.text, &["old.example.com".into()])[0];
            assert_eq!(
                splice_decoded(raw, f.start..f.replace_end, to).as_deref(),
                Some(want),
                "{raw}"
            );
        }
        // A new endpoint with more slashes (a Rancher proxy path).
        let raw = "https:\\u002F\\u002Fold.example.com";
        let d = escape_map(raw).unwrap();
        let f = &find_in_decoded(&d.text, &["old.example.com".into()])[0];
        assert_eq!(
            splice_decoded(
                raw,
                f.start..f.replace_end,
                "https://r.example.com/k8s/clusters/c-1"
            )
            .as_deref(),
            Some("https:\\u002F\\u002Fr.example.com\\u002Fk8s\\u002Fclusters\\u002Fc-1")
        );
    }

    /// `s` with each character written literally or as one of the escapes a
    /// YAML writer may choose, by `how` (cycled).
    fn encode(s: &str, how: &[u8]) -> String {
        s.chars()
            .zip(how.iter().cycle())
            .map(|(c, h)| match (h % 5, c) {
                (1, c) => format!("\\x{:02x}", c as u32),
                (2, c) => format!("\\u{:04X}", c as u32),
                (3, '/') => "\\/".to_string(),
                (4, c) => format!("\\U{:08x}", c as u32),
                (_, c) => c.to_string(),
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn an_escaped_endpoint_is_found_and_spliced(
            how in proptest::collection::vec(0u8..5, 1..20),
            before in "([a-z]{0,5} )?",
            after in "(/[a-z]{0,4})?",
        ) {
            let url = format!("https://{EKS}");
            let raw = format!("{before}{}{after}", encode(&url, &how));
            let d = escape_map(&raw).unwrap();
            proptest::prop_assert_eq!(yaml_reads(&raw), Some(d.text.clone()));
            let f = find_in_decoded(&d.text, &[]);
            proptest::prop_assert_eq!(f.len(), 1);
            let (s, e) = (f[0].start, f[0].replace_end);
            let new = splice_decoded(&raw, s..e, "https://new.example.com:6443").unwrap();
            let want = format!("{before}https://new.example.com:6443{after}");
            proptest::prop_assert_eq!(yaml_reads(&new), Some(want));
            // Bytes outside the endpoint are kept as written.
            proptest::prop_assert!(new.starts_with(&before));
            proptest::prop_assert!(new.ends_with(&after));
        }
    }

    #[test]
    fn splice_refuses_what_it_cannot_do_byte_exactly() {
        let raw = "https://0123.gr7.\\\n  ap-northeast-2.eks.amazonaws.com";
        let d = escape_map(raw).unwrap();
        assert_eq!(d.text, "https://0123.gr7.ap-northeast-2.eks.amazonaws.com");
        assert_eq!(splice_decoded(raw, 0..d.text.len(), "https://x.io"), None);
        // A folded break inside the range.
        assert_eq!(splice_decoded("a\n b", 0..3, "xyz"), None);
        // Edges next to an escaped break are fine: the break stays.
        assert_eq!(
            splice_decoded("ab\\\n  cd", 2..4, "XY").unwrap(),
            "ab\\\n  XY"
        );
        assert_eq!(
            splice_decoded("ab\\\n  cd", 0..2, "XY").unwrap(),
            "XY\\\n  cd"
        );
        // Inside a multi-byte character, empty or out of range.
        assert_eq!(splice_decoded("é", 1..2, "x"), None);
        assert_eq!(splice_decoded("ab", 1..1, "x"), None);
        assert_eq!(splice_decoded("ab", 1..3, "x"), None);
        // Trailing white space the fold would eat is caught by re-decoding.
        assert_eq!(splice_decoded("a\n b", 0..1, "a "), None);
        assert_eq!(splice_decoded("bad \\q", 0..1, "x"), None);
    }
}
