//! Documents inside documents: YAML or JSON held in a string (a kustomize
//! `patches[].patch: |-` block, a `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, a cluster Secret's `config`), JSON 6902 patch op lists, bare
//! hosts named by key (`serverName`, `tls-server-name`), and base64 values
//! (`data.server` of a cluster Secret).
//!
//! An embedded document is parsed as what it is and an endpoint in it is
//! located by the inner document's own kind and path, through the positions
//! table: nothing here decides what a cluster position is. Rewrites stay byte
//! splices of the endpoint text in the outer file (the endpoint is written
//! verbatim inside the string), verified like every rewrite; a base64 value
//! is the one whole-value rewrite (re-encoded, verified by decoding).

use crate::endpoint::Found;
use crate::positions::{self, Context, Position, Seg, YamlPath};
use crate::yaml::Events;
use std::collections::HashMap;
use yaml_rust2::parser::Event;

/// How deep strings inside strings are followed (a Secret's `config` JSON in
/// the last-applied JSON of an exported Secret is two levels).
const MAX_NESTING: usize = 3;

/// Larger strings are not parsed as documents.
const MAX_EMBEDDED: usize = 1 << 20;

/// Where an endpoint sits inside an embedded document.
#[derive(Debug, Clone)]
pub struct Inner {
    pub position: Position,
    /// The path inside the embedded document(s), as shown (`spec.destination.server`,
    /// `[0].value` for a patch op).
    pub path: String,
    /// Cluster-naming scalars (`name`, `cluster`, `clusterName`) beside it.
    pub siblings: Vec<(String, String)>,
}

/// Whether a string value may be a document worth parsing.
pub fn looks_embedded(value: &str) -> bool {
    value.len() <= MAX_EMBEDDED
        && (value.contains('\n') || value.trim_start().starts_with(['{', '[']))
}

struct Frame {
    is_map: bool,
    expect_key: bool,
    key: Option<String>,
    index: usize,
    id: usize,
    scalars: Vec<(String, String)>,
}

struct Scalar {
    off: usize,
    path: Vec<Seg>,
    is_key: bool,
    /// The mapping holding it, and the mapping at depth 1 (a patch op).
    frame: Option<usize>,
    op_frame: Option<usize>,
    doc: usize,
    value: String,
}

#[derive(Default)]
struct Doc {
    kind: Option<String>,
    root_seq: bool,
}

/// Parsed just enough: every scalar with its path and offset, each mapping's
/// scalars, each document's kind.
struct Walk {
    scalars: Vec<Scalar>,
    frames: HashMap<usize, Vec<(String, String)>>,
    docs: Vec<Doc>,
}

fn walk(text: &str) -> Option<Walk> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut w = Walk {
        scalars: Vec::new(),
        frames: HashMap::new(),
        docs: vec![Doc::default()],
    };
    let mut started = false;
    for (i, item) in Events::new(text).enumerate() {
        let (ev, off) = item.ok()?;
        if stack.len() >= crate::yaml::MAX_DEPTH {
            return None;
        }
        match ev {
            Event::DocumentStart => {
                if started {
                    w.docs.push(Doc::default());
                }
                started = true;
                stack.clear();
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_map = matches!(ev, Event::MappingStart(..));
                if stack.is_empty() {
                    w.docs.last_mut()?.root_seq = !is_map;
                }
                stack.push(Frame {
                    is_map,
                    expect_key: true,
                    key: None,
                    index: 0,
                    id: i,
                    scalars: Vec::new(),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(done) = stack.pop() {
                    if done.is_map {
                        w.frames.insert(done.id, done.scalars);
                    }
                }
                advance(&mut stack, "?");
            }
            Event::Alias(..) => advance(&mut stack, "*"),
            Event::Scalar(value, ..) => {
                let is_key = stack.last().is_some_and(|f| f.is_map && f.expect_key);
                let depth = stack.len();
                let path = stack
                    .iter()
                    .enumerate()
                    .map(|(d, f)| {
                        if f.is_map {
                            let k = if d + 1 == depth && is_key {
                                value.clone()
                            } else {
                                f.key.clone().unwrap_or_else(|| "?".into())
                            };
                            Seg::Key(k)
                        } else {
                            Seg::Index(f.index)
                        }
                    })
                    .collect();
                if !is_key
                    && depth == 1
                    && stack[0].is_map
                    && stack[0].key.as_deref().map(|k| positions::fact(&[k]))
                        == Some(Some(positions::Fact::Kind))
                {
                    w.docs.last_mut()?.kind = Some(value.clone());
                }
                let doc = w.docs.len() - 1;
                w.scalars.push(Scalar {
                    off,
                    path,
                    is_key,
                    frame: stack.last().filter(|f| f.is_map).map(|f| f.id),
                    op_frame: stack.get(1).filter(|f| f.is_map).map(|f| f.id),
                    doc,
                    value: value.clone(),
                });
                if let Some(f) = stack.last_mut() {
                    if f.is_map && f.expect_key {
                        f.key = Some(value);
                    } else if f.is_map {
                        if let Some(k) = &f.key {
                            if positions::is_name_key(k) || k == "path" {
                                f.scalars.push((k.clone(), value));
                            }
                        }
                    }
                }
                advance(&mut stack, "");
            }
            _ => {}
        }
    }
    Some(w)
}

fn advance(stack: &mut [Frame], key_if_complex: &str) {
    if let Some(f) = stack.last_mut() {
        if f.is_map {
            if f.expect_key && !key_if_complex.is_empty() {
                f.key = Some(key_if_complex.into());
            }
            f.expect_key = !f.expect_key;
        } else {
            f.index += 1;
        }
    }
}

/// A JSON pointer (`/spec/destination/server`, RFC 6901) as path steps;
/// numeric steps are list indexes.
pub fn pointer_path(pointer: &str) -> Option<Vec<Seg>> {
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| {
                let s = s.replace("~1", "/").replace("~0", "~");
                match s.parse::<usize>() {
                    Ok(i) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                        Seg::Index(i)
                    }
                    _ => Seg::Key(s),
                }
            })
            .collect(),
    )
}

/// The cluster position a JSON 6902 op's value lands on: the op's `path`
/// pointer plus the path inside its `value`, tried against every kind a patch
/// may target ([`positions::PATCH_KINDS`]).
pub fn op_position(pointer: &str, inside_value: &[Seg], managed_host: bool) -> Option<Position> {
    let mut segs = pointer_path(pointer)?;
    segs.extend_from_slice(inside_value);
    let path = YamlPath(segs);
    positions::PATCH_KINDS.iter().find_map(|k| {
        positions::classify(
            &path,
            &Context {
                kind: Some(k),
                managed_host,
                ..Context::default()
            },
        )
    })
}

/// Locates the endpoint text `lit` found at byte `at` of `text` (a whole
/// file that is a patch op list, or a string value holding a document) by
/// the document's own structure. `None` when `text` does not parse or the
/// endpoint is at no cluster position there.
pub fn locate_inner(text: &str, at: usize, lit: &str, managed_host: bool) -> Option<Inner> {
    parse(text)?.locate(at, lit, managed_host)
}

/// A document parsed once, to locate any number of endpoints in it.
pub struct Parsed(Walk);

/// Parses `text` (YAML or JSON) for [`Parsed::locate`]; `None` when it does
/// not parse or is too large to be an embedded document.
pub fn parse(text: &str) -> Option<Parsed> {
    if text.len() > MAX_EMBEDDED {
        return None;
    }
    walk(text).map(Parsed)
}

impl Parsed {
    /// [`locate_inner`] on the parsed text.
    pub fn locate(&self, at: usize, lit: &str, managed_host: bool) -> Option<Inner> {
        locate_in(&self.0, at, lit, managed_host, 0)
    }
}

fn locate_at(text: &str, at: usize, lit: &str, managed_host: bool, depth: usize) -> Option<Inner> {
    if depth >= MAX_NESTING || text.len() > MAX_EMBEDDED {
        return None;
    }
    locate_in(&walk(text)?, at, lit, managed_host, depth)
}

fn locate_in(w: &Walk, at: usize, lit: &str, managed_host: bool, depth: usize) -> Option<Inner> {
    // Scalars are in text order: the one holding `at` starts last before it.
    let i = w.scalars.partition_point(|s| s.off <= at).checked_sub(1)?;
    let s = &w.scalars[i];
    if s.is_key {
        return None;
    }
    let doc = &w.docs[s.doc];
    let siblings: Vec<(String, String)> = s
        .frame
        .and_then(|f| w.frames.get(&f))
        .map(|v| {
            v.iter()
                .filter(|(k, _)| positions::is_name_key(k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let path = YamlPath(s.path.clone());
    if doc.root_seq {
        if let [Seg::Index(_), Seg::Key(v), rest @ ..] = &s.path[..] {
            let pointer = s
                .op_frame
                .and_then(|f| w.frames.get(&f))
                .and_then(|v| v.iter().find(|(k, _)| k == "path"))
                .map(|(_, p)| p.as_str());
            let lands = pointer.and_then(|p| op_position(p, rest, managed_host));
            if v == "value" && lands.is_some() {
                return Some(Inner {
                    position: Position::PatchOp,
                    path: path.to_string(),
                    siblings,
                });
            }
        }
    }
    if doc.kind.is_some() {
        let sibling_name = siblings
            .iter()
            .find(|(k, _)| k == "name")
            .map(|(_, v)| v.as_str());
        let cx = Context {
            kind: doc.kind.as_deref(),
            sibling_name,
            managed_host,
            ..Context::default()
        };
        if let Some(position) = positions::classify(&path, &cx) {
            return Some(Inner {
                position,
                path: path.to_string(),
                siblings,
            });
        }
    }
    if looks_embedded(&s.value) {
        let inner_at = s.value.find(lit)?;
        let mut inner = locate_at(&s.value, inner_at, lit, managed_host, depth + 1)?;
        inner.path = format!("{path} > {}", inner.path);
        return Some(inner);
    }
    None
}

/// Bare hosts given as the value of a [`positions::BARE_HOST_KEYS`] key, in
/// YAML or JSON (also JSON inside a string, with escaped quotes):
/// `serverName: "kind-dev-control-plane"`, `tls-server-name: host:6443`.
/// Whether one is an endpoint is the table's answer for where it sits.
pub fn bare_hosts(text: &str) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for key in positions::BARE_HOST_KEYS {
        for pos in crate::endpoint::find_iter(text, key) {
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
            });
        }
    }
    out
}

/// Standard base64 of a text, and its strict decoding ([`crate::base64`]).
pub use crate::base64::{decode_text as base64_decode, encode_text as base64_encode};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in ["", "f", "fo", "foo", "https://10.8.0.21:6443", "한국"] {
            let e = base64_encode(s);
            if !s.is_empty() {
                assert_eq!(base64_decode(&e).as_deref(), Some(s));
            }
        }
        assert_eq!(
            base64_encode("https://10.8.0.21:6443"),
            "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw=="
        );
        assert_eq!(base64_decode("aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw"), None);
        assert_eq!(base64_decode("a b="), None);
    }

    #[test]
    fn a_6902_op_lands_on_a_position() {
        let t = "- op: replace\n  path: /spec/destination/server\n  value: https://a.example:6443\n- op: replace\n  path: /spec/source/repoURL\n  value: https://git.example/x.git\n";
        let at = t.find("https://a").unwrap();
        let i = locate_inner(t, at, "https://a.example:6443", false).unwrap();
        assert_eq!(i.position, Position::PatchOp);
        assert_eq!(i.path, "[0].value");
        let at = t.find("https://git").unwrap();
        assert!(locate_inner(t, at, "https://git.example/x.git", false).is_none());
        let t = r#"[{"op":"add","path":"/spec/destination","value":{"server":"https://b.example:6443"}}]"#;
        let at = t.find("https://").unwrap();
        assert_eq!(
            locate_inner(t, at, "https://b.example:6443", false).map(|i| i.position),
            Some(Position::PatchOp)
        );
    }

    #[test]
    fn strategic_merge_and_nested_json_strings() {
        let t = "kind: Application\nspec:\n  destination:\n    server: https://c.example:6443\n  source:\n    repoURL: https://git.example/y\n";
        let at = t.find("https://c").unwrap();
        assert_eq!(
            locate_inner(t, at, "https://c.example:6443", false).map(|i| i.position),
            Some(Position::DestinationServer)
        );
        assert!(locate_inner(
            t,
            t.find("https://git").unwrap(),
            "https://git.example/y",
            false
        )
        .is_none());
        let t = r#"{"kind":"Secret","stringData":{"config":"{\"tlsClientConfig\":{\"serverName\":\"cp.internal\"}}","server":"https://d.example"}}"#;
        let at = t.find("cp.internal").unwrap();
        let i = locate_inner(t, at, "cp.internal", false).unwrap();
        assert_eq!(i.position, Position::RegistrationConfig);
        let at = t.find("https://d").unwrap();
        assert_eq!(
            locate_inner(t, at, "https://d.example", false).map(|i| i.position),
            Some(Position::Registration)
        );
    }

    #[test]
    fn bare_hosts_by_key() {
        let t = "a:\n  serverName: \"kind-dev-control-plane\"\n  tls-server-name: k.example:6443\n  x: '{\\\"serverName\\\":\\\"kwok\\\"}'\n  serverNames: no\n  serverName: ${X}\n";
        let got: Vec<&str> = bare_hosts(t).iter().map(|f| &t[f.start..f.end]).collect();
        assert_eq!(
            got,
            vec!["kind-dev-control-plane", "kwok", "k.example:6443"]
        );
    }
}
