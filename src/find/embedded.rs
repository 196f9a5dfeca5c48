//! Documents inside documents: YAML or JSON held in a string (a kustomize
//! `patches[].patch: |-` block, a `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, a cluster Secret's `config`), JSON 6902 patch op lists (the
//! rule is [`positions::patch_op`]), bare hosts named by key (`serverName`,
//! `tls-server-name`: scanned by `endpoint::hosts_after_keys`), and base64
//! values (a Secret's `data`: `server`, a `config` JSON, a kubeconfig),
//! decoded and then located like any value whose text is the decoded one.
//!
//! An embedded document is parsed as what it is and an endpoint in it is
//! located by the inner document's own kind and path, through the positions
//! table: nothing here decides what a cluster position is. Rewrites stay byte
//! splices of the endpoint text in the outer file (the endpoint is written
//! verbatim inside the string), verified like every rewrite; a base64 value
//! is the one whole-value rewrite: re-encoded in its own layout (line width,
//! line breaks and indentation, padding), verified by decoding, and shown
//! decoded in `diff` ([`decoded_changes`]).

use crate::model::positions::{self, Context, Position, Seg, YamlPath};
use crate::syntax::yaml::{Aliases, Events, Landing, Stack};
use crate::text::endpoint::Found;
use crate::text::splice::{self, Op};
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

/// Whether `text` parses as a document whose root is a mapping or a list
/// (not prose: a plain string has no comments of its own).
pub fn is_collection(text: &str) -> bool {
    parse(text).is_some_and(|Parsed(w)| {
        w.docs.iter().any(|d| d.root_seq) || w.scalars.iter().any(|s| s.is_key)
    })
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
    /// Where aliases and merge keys put a scalar (by its index), as the
    /// locator resolves them ([`Aliases`]): read at each of these paths too.
    landed: HashMap<usize, Vec<Landing>>,
}

fn walk(text: &str) -> Option<Walk> {
    // Each mapping keeps its naming scalars and its `path` (a patch op's).
    let mut stack: Stack<Vec<(String, String)>> = Stack::new();
    let mut w = Walk {
        scalars: Vec::new(),
        frames: HashMap::new(),
        docs: vec![Doc::default()],
        landed: HashMap::new(),
    };
    let mut aliases: Aliases<usize> = Aliases::new();
    let mut started = false;
    for (i, item) in Events::new(text).enumerate() {
        let (ev, off) = item.ok()?;
        if stack.depth() >= crate::syntax::yaml::MAX_DEPTH {
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
            Event::MappingStart(aid, _) | Event::SequenceStart(aid, _) => {
                let is_map = matches!(ev, Event::MappingStart(..));
                if stack.is_empty() {
                    w.docs.last_mut()?.root_seq = !is_map;
                }
                stack.open(is_map, i, Vec::new());
                aliases.open(aid, stack.depth());
            }
            Event::MappingEnd | Event::SequenceEnd => {
                aliases.close(stack.depth());
                if let Some(done) = stack.close() {
                    if done.is_map {
                        w.frames.insert(done.id, done.data);
                    }
                }
            }
            Event::Alias(aid) => {
                if !stack.at_key() && !stack.in_key() {
                    for (si, l) in aliases.land(aid, off, &stack) {
                        w.landed.entry(si).or_default().push(l);
                    }
                }
                stack.alias();
            }
            Event::Scalar(value, _, aid, _) => {
                let is_key = stack.at_key();
                if is_key {
                    if let Some(f) = stack.top() {
                        aliases.key(f.id, &value);
                    }
                }
                if !is_key
                    && stack.depth() == 1
                    && stack.only_keys()
                    && positions::fact(&stack.keys()) == Some(positions::Fact::Kind)
                {
                    w.docs.last_mut()?.kind = Some(value.clone());
                }
                let doc = w.docs.len() - 1;
                let path = stack.path_of(&value).0;
                if !is_key && !stack.in_key() && aliases.anchoring(aid) {
                    aliases.record(aid, &path, w.scalars.len());
                }
                w.scalars.push(Scalar {
                    off,
                    path,
                    is_key,
                    frame: stack.top().filter(|f| f.is_map).map(|f| f.id),
                    op_frame: stack.frames().get(1).filter(|f| f.is_map).map(|f| f.id),
                    doc,
                    value: value.clone(),
                });
                if let Some(f) = stack.top_mut() {
                    if f.is_map && !f.expect_key {
                        if let Some(k) = &f.key {
                            if positions::is_name_key(k) || k == positions::PATCH_OP_PATH {
                                f.data.push((k.clone(), value.clone()));
                            }
                        }
                    }
                }
                stack.scalar(&value);
            }
            _ => {}
        }
    }
    for l in w.landed.values_mut() {
        l.retain(|l| !aliases.overridden(l));
    }
    Some(w)
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
    /// The path of the value scalar holding the endpoint text `lit` found
    /// at byte `at`, in a text of one document (a comment after it is
    /// told apart by the caller).
    pub fn path_at(&self, at: usize, lit: &str) -> Option<YamlPath> {
        let w = &self.0;
        let i = w.scalars.partition_point(|s| s.off <= at).checked_sub(1)?;
        let s = &w.scalars[i];
        (!s.is_key && w.docs.len() == 1 && s.value.contains(lit)).then(|| YamlPath(s.path.clone()))
    }

    /// Where aliases and merge keys put the value scalar holding `lit` at
    /// byte `at` (the scalar [`Parsed::path_at`] names): each landing's path
    /// and the alias's offset in the text.
    pub fn landings_at(&self, at: usize, lit: &str) -> &[Landing] {
        let w = &self.0;
        let Some(i) = w.scalars.partition_point(|s| s.off <= at).checked_sub(1) else {
            return &[];
        };
        let s = &w.scalars[i];
        if s.is_key || w.docs.len() != 1 || !s.value.contains(lit) {
            return &[];
        }
        w.landed.get(&i).map_or(&[], Vec::as_slice)
    }

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
        // A JSON 6902 op list: the op's `path` says where its `value` lands.
        let pointer = s
            .op_frame
            .and_then(|f| w.frames.get(&f))
            .and_then(|v| v.iter().find(|(k, _)| k == positions::PATCH_OP_PATH))
            .map(|(_, p)| p.as_str());
        if let Some(position) = positions::patch_op(&s.path, pointer, managed_host) {
            return Some(Inner {
                position,
                path: path.to_string(),
                siblings,
            });
        }
    }
    if doc.kind.is_some() {
        let sibling_name = siblings
            .iter()
            .find(|(k, _)| k == positions::NAME_KEY)
            .map(|(_, v)| v.as_str());
        let cx = Context {
            kind: doc.kind.as_deref(),
            sibling_name,
            managed_host,
            ..Context::default()
        };
        // Its own path, or where an alias or merge key puts it.
        let landed = w.landed.get(&i).into_iter().flatten().map(|l| &l.path);
        for p in std::iter::once(&path).chain(landed) {
            if let Some(position) = positions::classify(p, &cx) {
                return Some(Inner {
                    position,
                    path: path.to_string(),
                    siblings,
                });
            }
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

/// Endpoints inside an embedded document (YAML or JSON held in the string
/// `value`) written with the inner document's own escapes (`\u0068ttps:`,
/// `\u002e`, `\u002f`, `\x2e`): not in the raw text, so no raw search sees
/// them. Each inner scalar's decoded value is searched (an endpoint that
/// `hosts` names or that has a managed cluster's shape), and each endpoint
/// not written plainly there is matched to its spelling in `raw` (the file
/// from the outer scalar on): its byte range in `raw` (`None` when the
/// spelling is not found there, as inside an outer double-quoted string,
/// which escapes the escapes), and the endpoint as decoded. rebind does not
/// rewrite such a spelling in place: they are reported.
pub fn escaped_endpoints(
    raw: &str,
    value: &str,
    hosts: &[String],
) -> Vec<(Option<std::ops::Range<usize>>, String, Found)> {
    if !value.contains('\\') || !looks_embedded(value) {
        return Vec::new();
    }
    let Some(Parsed(w)) = parse(value) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The spellings come in the order of the inner scalars.
    let mut cursor = 0;
    for (k, s) in w.scalars.iter().enumerate() {
        let end = w.scalars.get(k + 1).map_or(value.len(), |n| n.off);
        let Some(span) = value.get(s.off..end.max(s.off)) else {
            continue;
        };
        let lower = s.value.to_ascii_lowercase();
        for f in crate::text::endpoint::find_all(&s.value, &lower, hosts) {
            let wanted = f.shape() != crate::text::endpoint::Shape::Other
                || hosts
                    .iter()
                    .any(|h| crate::text::endpoint::same_host(h, &f.host));
            let text = &s.value[f.start..f.end];
            // Written plainly (and nowhere escaped: `\u0035F2C...` holds
            // `5F2C...` as a substring), the raw search finds it.
            if !wanted || !f.rewritable() {
                continue;
            }
            let spelling = escaped_spelling(span, text);
            if spelling.is_none() && span.to_ascii_lowercase().contains(&lower[f.start..f.end]) {
                continue;
            }
            // Escaped slashes alone (`https:\/\/host:6443\/x`): the raw
            // search reads that spelling as the URL, at every layer.
            if spelling
                .as_ref()
                .is_some_and(|r| !span[r.clone()].replace("\\/", "/").contains('\\'))
            {
                continue;
            }
            let range = spelling.and_then(|r| {
                let spelling = &span[r];
                let at = cursor + raw.get(cursor..)?.find(spelling)?;
                Some(at..at + spelling.len())
            });
            if let Some(r) = &range {
                cursor = r.end;
            }
            out.push((range, text.to_string(), f));
        }
    }
    out
}

/// Where `decoded` is written in `raw` with at least one escape of a YAML or
/// JSON double-quoted string: the first such byte range.
fn escaped_spelling(raw: &str, decoded: &str) -> Option<std::ops::Range<usize>> {
    let want: Vec<char> = decoded.chars().collect();
    let first = *want.first()?;
    raw.char_indices()
        .filter(|&(_, c)| c == '\\' || c.eq_ignore_ascii_case(&first))
        .find_map(|(start, _)| {
            let (end, escapes) = spelled_at(raw, start, &want)?;
            (escapes > 0).then_some(start..end)
        })
}

/// Whether `raw` from `start` spells `want` (escapes decoded, letters in
/// any case): where the spelling ends, and how many escapes it used.
fn spelled_at(raw: &str, start: usize, want: &[char]) -> Option<(usize, usize)> {
    let (mut i, mut escapes) = (start, 0);
    for w in want {
        let rest = raw.get(i..)?;
        let (c, len) = match rest.strip_prefix('\\') {
            Some(esc) => {
                escapes += 1;
                unescape(esc)?
            }
            None => {
                let c = rest.chars().next()?;
                (c, c.len_utf8())
            }
        };
        if !c.eq_ignore_ascii_case(w) {
            return None;
        }
        i += len;
    }
    Some((i, escapes))
}

/// One escape after its backslash: the character and the bytes it takes,
/// backslash included.
fn unescape(esc: &str) -> Option<(char, usize)> {
    let hex = |n: usize| {
        let c = u32::from_str_radix(esc.get(1..1 + n)?, 16).ok()?;
        char::from_u32(c).map(|c| (c, 2 + n))
    };
    match esc.chars().next()? {
        'u' => hex(4),
        'x' => hex(2),
        'U' => hex(8),
        c @ ('/' | '\\' | '"') => Some((c, 2)),
        _ => None,
    }
}

/// Bare hosts given as the value of a [`positions::BARE_HOST_KEYS`] key, in
/// YAML or JSON (also JSON inside a string, with escaped quotes):
/// `serverName: "kind-dev-control-plane"`, `tls-server-name: host:6443`.
/// Whether one is an endpoint is the table's answer for where it sits; what
/// a host is, [`endpoint::hosts_after_keys`](crate::text::endpoint::hosts_after_keys)'s.
pub fn bare_hosts(text: &str) -> Vec<Found> {
    crate::text::endpoint::hosts_after_keys(text, &positions::BARE_HOST_KEYS)
}

/// Standard base64 of a text, and its strict decoding ([`crate::text::base64`]).
pub use crate::text::base64::{decode_text as base64_decode, encode_text as base64_encode};

/// Decodes a `data` value to text: strictly (canonical, on one line or
/// wrapped regularly) when it can be, else laxly, so that base64 a rebind
/// refuses to re-encode is still found; `None` when it is no base64 of text
/// at all (a certificate's DER, random bytes).
pub fn decode_data(value: &str) -> Option<String> {
    match crate::text::base64::decode_wrapped(value) {
        Some((bytes, _)) => String::from_utf8(bytes).ok(),
        None => String::from_utf8(crate::text::base64::decode_lenient(value)?).ok(),
    }
}

/// The first look at a file whose endpoints may all be base64: one that
/// names the kind whose `data` is base64 ([`positions::BASE64_DATA`]) and
/// holds a run of base64 that decodes to bytes `holds` accepts.
pub fn holds_encoded(text: &str, holds: impl Fn(&[u8]) -> bool) -> bool {
    let kind = positions::BASE64_DATA.0.as_bytes();
    memchr::memmem::find(text.as_bytes(), kind).is_some()
        && crate::text::base64::any_run(text, holds)
}

/// The byte range, in `text`, of the base64 characters of the scalar whose
/// event starts at `off` and whose value is `value`: from its first
/// character to its last, the line breaks and indentation between its lines
/// included (plain, quoted or block scalar). `None` when the text does not
/// read as the value that way (escapes in a double-quoted scalar).
pub fn encoded_body(text: &str, off: usize, value: &str) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut i = match b.get(off)? {
        b'"' | b'\'' => off + 1,
        // A block scalar's text starts on the line after its header.
        b'|' | b'>' => off + text[off..].find('\n')? + 1,
        _ => off,
    };
    let mut start = None;
    for chunk in value.split_ascii_whitespace() {
        let gap = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
        let broke = b[i..i + gap].iter().any(|&c| c == b'\n' || c == b'\r');
        if start.is_some() && !broke && gap == 0 {
            return None;
        }
        i += gap;
        if !text[i..].starts_with(chunk) {
            return None;
        }
        start.get_or_insert(i);
        i += chunk.len();
    }
    Some(start?..i)
}

/// The white space between the first two lines of a raw base64 body (a
/// line break and indentation), or `None` for a body on one line.
fn raw_separator(body: &str) -> Option<&str> {
    let at = body.find(|c: char| c.is_ascii_whitespace())?;
    let len = body[at..]
        .bytes()
        .take_while(u8::is_ascii_whitespace)
        .count();
    Some(&body[at..at + len])
}

/// Why a raw base64 body cannot be re-encoded exactly.
pub const NOT_REENCODABLE: &str = "is not canonical base64 on one line or wrapped in lines of one width (as `base64` writes it), or is written with escapes: rebind cannot re-encode it exactly; re-encode it by hand (`base64 -w 0`, or `base64` for 76 columns) and run rebind again; nothing written";

/// The raw base64 body `body` (see [`encoded_body`]) with its decoded text
/// edited (`edits`: decoded byte ranges and their new text) and encoded
/// again in the same layout: the same line width and the same line break
/// and indentation between lines, padding as the standard writes it.
/// `Err` when the body is not canonical base64 in a regular layout.
pub fn rebind_base64(
    body: &str,
    edits: &[(std::ops::Range<usize>, String)],
) -> Result<String, &'static str> {
    let chunks: Vec<&str> = body.split_ascii_whitespace().collect();
    let (bytes, wrap) =
        crate::text::base64::decode_wrapped(&chunks.join("\n")).ok_or(NOT_REENCODABLE)?;
    let decoded = String::from_utf8(bytes).map_err(|_| NOT_REENCODABLE)?;
    let ops: Vec<Op> = edits
        .iter()
        .map(|(r, new)| Op::replace(r.clone(), new.as_str()))
        .collect();
    let decoded = splice::apply(&decoded, &ops).map_err(|_| NOT_REENCODABLE)?;
    let sep = raw_separator(body).unwrap_or("\n");
    Ok(wrap.apply(&base64_encode(&decoded), sep))
}

/// What a base64 scalar value `value` must read after a rewrite: its decoded
/// text turned into `expected(decoded)`, encoded again in the same layout,
/// with the same trailing line break. `None` when it does not decode.
pub fn reencoded(value: &str, expected: impl FnOnce(&str) -> String) -> Option<String> {
    let (bytes, wrap) = crate::text::base64::decode_wrapped(value)?;
    let decoded = String::from_utf8(bytes).ok()?;
    let body_len = value.trim_end_matches([' ', '\t', '\n', '\r']).len();
    let new = wrap.apply(&base64_encode(&expected(&decoded)), wrap.sep);
    Some(new + &value[body_len..])
}

/// The decoded text of a base64 scalar value (strictly read), for checks
/// that compare documents inside it.
pub fn decoded_value(value: &str) -> Option<String> {
    let (bytes, _) = crate::text::base64::decode_wrapped(value)?;
    String::from_utf8(bytes).ok()
}

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
    fn an_encoded_body_spans_its_lines_in_every_style() {
        for (text, value) in [
            ("k: abcd\n", "abcd"),
            ("k: 'abcd'\n", "abcd"),
            ("k: \"abcd\"\n", "abcd"),
            ("k: |\n  abcd\n  ef==\nn: 1\n", "abcd\nef==\n"),
            ("k: >- # c\n  abcd\n  ef==\n", "abcd ef=="),
            ("k: abcd\n   ef==\n", "abcd ef=="),
            ("k: \"abcd\r\n  ef==\"\n", "abcd ef=="),
        ] {
            let off = 3;
            let r = encoded_body(text, off, value).unwrap();
            let raw: Vec<&str> = text[r].split_ascii_whitespace().collect();
            assert_eq!(
                raw,
                value.split_ascii_whitespace().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
        // Escapes: the text does not read as the value.
        assert_eq!(encoded_body("k: \"ab\\\n  cd\"\n", 3, "abcd"), None);
    }

    #[test]
    fn base64_is_rebound_in_its_own_layout() {
        let text = "https://old.example.com:6443/a/long/path/making/more/than/one/line";
        let enc = base64_encode(text);
        let w = crate::text::base64::Wrap {
            width: Some(20),
            sep: "\n",
        };
        let body = w.apply(&enc, "\n      ");
        let edits = [(8..28, "new.example.com".to_string())];
        let new = rebind_base64(&body, &edits).unwrap();
        let want_text = text.replacen("old.example.com:6443", "new.example.com", 1);
        assert_eq!(new, w.apply(&base64_encode(&want_text), "\n      "));
        // The scalar's value, as YAML reads it, with its final line break.
        let value = format!("{}\n", w.apply(&enc, "\n"));
        assert_eq!(
            reencoded(&value, |d| d.replacen(
                "old.example.com:6443",
                "new.example.com",
                1
            )),
            Some(format!("{}\n", w.apply(&base64_encode(&want_text), "\n")))
        );
        assert_eq!(rebind_base64("not base64!", &edits), Err(NOT_REENCODABLE));
        let padded = base64_encode("https://xy");
        assert!(padded.ends_with("=="));
        assert_eq!(rebind_base64(&padded, &[]), Ok(padded.clone()));
        let unpadded = padded.trim_end_matches('=');
        assert_eq!(rebind_base64(unpadded, &[]), Err(NOT_REENCODABLE));
    }

    #[test]
    fn only_a_file_naming_a_secret_is_decoded_at_the_first_look() {
        let holds = |b: &[u8]| memchr::memmem::find(b, b"https://").is_some();
        let data = format!("data:\n  server: {}\n", base64_encode("https://h.example"));
        assert!(holds_encoded(&format!("kind: Secret\n{data}"), holds));
        assert!(!holds_encoded(&format!("kind: ConfigMap\n{data}"), holds));
        assert!(!holds_encoded(
            "kind: Secret\ndata:\n  a: cHJvZA==\n",
            holds
        ));
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
