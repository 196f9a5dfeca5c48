//! Locating endpoint occurrences in one file: where each one is (byte range,
//! line, column), what it is (a YAML value, a comment, plain text, a Helm
//! template action), which YAML path and resource it sits at, and whether that
//! position holds a cluster by ArgoCD semantics.
//!
//! YAML is read with yaml-rust2's event parser. Its markers give line and
//! column (in characters); byte offsets are derived from our own line index,
//! never from `Marker::index()`, which counts characters, not bytes.

use crate::endpoint::{self, Found, Shape};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

/// What sort of text an occurrence is found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A YAML/JSON scalar: the only kind rebind rewrites.
    Value,
    /// A YAML comment: reported, never rewritten.
    Comment,
    /// A file that is not YAML (README, runbook): reported, never rewritten.
    Text,
    /// Inside a Helm/Go template action (`{{ ... }}`): reported, never rewritten.
    Template,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Value => "value",
            Kind::Comment => "comment",
            Kind::Text => "text",
            Kind::Template => "template",
        }
    }
}

/// One endpoint occurrence in a file.
#[derive(Debug, Clone)]
pub struct Occurrence {
    pub found: Found,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// The endpoint as written (URL with any path/query, or bare host).
    pub endpoint: String,
    pub kind: Kind,
    pub yaml_path: Option<String>,
    /// `Kind/name` of the document it sits in.
    pub resource: Option<String>,
    /// The position holds a cluster by ArgoCD semantics (`destination.server`, ...).
    pub cluster_position: bool,
    /// The cluster's name where the manifest says it next to the endpoint
    /// (ApplicationSet element `cluster`, cluster Secret `name`, karpenter `clusterName`).
    pub cluster_hint: Option<String>,
    /// Index of the parser event of the scalar holding it (kind `value`).
    pub event: Option<usize>,
}

impl Occurrence {
    pub fn shape(&self) -> Shape {
        endpoint::shape(&self.found.host)
    }
}

/// An Application's destination, for the tier table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub resource: String,
    pub server: Option<String>,
    pub name: Option<String>,
}

/// Everything located in one file.
#[derive(Debug, Default)]
pub struct Located {
    pub occurrences: Vec<Occurrence>,
    /// Number of parser events (0 for text files).
    pub event_count: usize,
    /// Digest of every event except those in `held`: with `event_count` it
    /// proves that a rewrite changed nothing but the planned scalars.
    pub digest: u64,
    /// The scalars that may hold endpoints, whole, by event index.
    pub held: BTreeMap<usize, Event>,
    pub destinations: Vec<Destination>,
    /// Helm template actions had to be masked for the file to parse.
    pub masked: bool,
}

/// A YAML file that could not be parsed.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// Endpoint-looking text in the file (so callers can tell whether it matters).
    pub occurrences: Vec<Occurrence>,
}

/// Byte offsets of line starts, and conversion from the parser's (line, char column).
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Line breaks as YAML counts them: `\n`, `\r\n`, and a lone `\r`.
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if b.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// Byte offset of a 1-based line and 0-based character column, if it exists.
    pub fn offset(&self, text: &str, line: usize, col: usize) -> Option<usize> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let rest = text.get(start..)?;
        if col == 0 {
            return Some(start);
        }
        // Most lines are ASCII up to the column: then characters are bytes.
        if rest.len() >= col && rest.as_bytes()[..col].is_ascii() {
            return Some(start + col);
        }
        rest.char_indices()
            .nth(col)
            .map(|(i, _)| start + i)
            .or_else(|| (rest.chars().count() == col).then_some(text.len()))
    }

    /// 1-based line and 1-based character column of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let col = text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, col + 1)
    }
}

/// Replaces each `{{ ... }}` action with same-length filler so a Helm template
/// parses and byte offsets hold: spaces when the action is alone on its line,
/// `x` otherwise; line breaks inside an action are kept. Returns the masked text
/// and the masked byte ranges, or `None` when there is no action.
pub fn mask_templates(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut i = 0;
    while let Some(rel) = text.get(i..).and_then(|s| s.find("{{")) {
        let start = i + rel;
        let Some(close) = text[start + 2..].find("}}") else {
            ranges.push((start, b.len()));
            break;
        };
        let end = start + 2 + close + 2;
        ranges.push((start, end));
        i = end;
    }
    if ranges.is_empty() {
        return None;
    }
    let mut out = b.to_vec();
    for &(s, e) in &ranges {
        let line_start = b[..s]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line_end = b[e..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| e + p);
        let alone = b[line_start..s].iter().all(|c| c.is_ascii_whitespace())
            && b[e..line_end].iter().all(|c| c.is_ascii_whitespace());
        let fill = if alone { b' ' } else { b'x' };
        for c in &mut out[s..e] {
            if *c != b'\n' && *c != b'\r' {
                *c = fill;
            }
        }
    }
    // Only ASCII bytes were written over whole actions, so this stays UTF-8.
    String::from_utf8(out).ok().map(|s| (s, ranges))
}

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn format_path(segs: &[Seg]) -> String {
    let mut out = String::new();
    for s in segs {
        match s {
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Seg::Key(k) => {
                let plain = !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !plain {
                    let _ = write!(out, "[{k:?}]");
                } else {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
            }
        }
    }
    out
}

struct Frame {
    is_map: bool,
    expect_key: bool,
    key: Option<String>,
    index: usize,
    /// Scalar values of this mapping seen so far, by key (for sibling lookups).
    scalars: Vec<(String, String)>,
    /// This collection is itself a (complex) mapping key.
    in_key: bool,
    /// Identifies the mapping, so its scalars can be found once it is complete.
    id: usize,
}

impl Frame {
    fn seg(&self) -> Seg {
        if self.is_map {
            Seg::Key(self.key.clone().unwrap_or_else(|| "?".into()))
        } else {
            Seg::Index(self.index)
        }
    }

    /// A child node has been completed.
    fn advance(&mut self) {
        if self.is_map {
            self.expect_key = !self.expect_key;
        } else {
            self.index += 1;
        }
    }
}

/// A scalar that holds endpoint text, with the context needed to classify it.
struct Candidate {
    event: usize,
    start: usize,
    /// Where the next scalar starts: the candidate's text lies before it.
    span_end: usize,
    path: String,
    last_key: Option<String>,
    sibling_name: Option<String>,
    /// The mapping holding the scalar, if any (see [`Frame::id`]).
    frame: Option<usize>,
    doc: usize,
}

#[derive(Default)]
struct Doc {
    kind: Option<String>,
    name: Option<String>,
    dest_server: Option<String>,
    dest_name: Option<String>,
}

impl Doc {
    fn resource(&self) -> Option<String> {
        match (&self.kind, &self.name) {
            (Some(k), Some(n)) => Some(format!("{k}/{n}")),
            (Some(k), None) => Some(k.clone()),
            _ => None,
        }
    }
}

/// Whether a scalar at `path` in a document of `kind` holds a cluster.
fn cluster_position(kind: Option<&str>, c: &Candidate, line_prefix: &str) -> bool {
    let path = c.path.as_str();
    let last = c.last_key.as_deref();
    if last == Some("clusterEndpoint") {
        return true;
    }
    if last == Some("value")
        && c.sibling_name
            .as_deref()
            .is_some_and(|n| n.ends_with("clusterEndpoint"))
    {
        return true;
    }
    let prefix = line_prefix.trim_end().trim_end_matches(['"', '\'']);
    if prefix.ends_with("clusterEndpoint:") || prefix.ends_with("server:") {
        return true;
    }
    match kind {
        Some("Application") => path == "spec.destination.server",
        Some("ApplicationSet") => {
            path == "spec.template.spec.destination.server" || path.contains("list.elements[")
        }
        Some("AppProject") => path.starts_with("spec.destinations[") && path.ends_with(".server"),
        Some("Secret") => path == "stringData.server",
        Some("ExternalSecret") => path == "spec.target.template.data.server",
        Some("ConfigMap") => {
            path.starts_with("data[\"resource.exclusions\"]")
                || path.starts_with("data[\"resource.inclusions\"]")
        }
        None => last == Some("server"),
        Some(_) => false,
    }
}

/// Keeps only the text that is an endpoint: a managed-cluster or in-cluster
/// host, a host named by `--from`, or any URL at a cluster position.
fn is_endpoint(f: &Found, extra_hosts: &[String], cluster_position: bool) -> bool {
    cluster_position
        || endpoint::shape(&f.host) != Shape::Other
        || extra_hosts.iter().any(|h| h.eq_ignore_ascii_case(&f.host))
}

fn occurrence(text: &str, index: &LineIndex, f: Found, kind: Kind) -> Occurrence {
    let (line, column) = index.position(text, f.start);
    Occurrence {
        endpoint: text[f.start..f.end].to_string(),
        found: f,
        line,
        column,
        kind,
        yaml_path: None,
        resource: None,
        cluster_position: false,
        event: None,
        cluster_hint: None,
    }
}

/// Locates endpoints in a non-YAML text file: every one is kind `text`.
pub fn locate_text(text: &str, extra_hosts: &[String]) -> Located {
    let index = LineIndex::new(text);
    let lower = text.to_ascii_lowercase();
    let occurrences = endpoint::find_all(text, &lower, extra_hosts)
        .into_iter()
        .filter(|f| is_endpoint(f, extra_hosts, false))
        .map(|f| occurrence(text, &index, f, Kind::Text))
        .collect();
    Located {
        occurrences,
        ..Located::default()
    }
}

/// Deepest nesting of collections accepted; deeper input is an error, not a
/// risk to the stack of whoever reads the file next.
pub const MAX_DEPTH: usize = 1000;

/// A parse failure: 1-based line and column, and the parser's message.
type ParseFailure = (usize, usize, String);

/// Streams the parser's events with their byte offsets. `text` may be a
/// BOM-stripped slice; `base` is added to every offset.
struct Events<'a> {
    parser: Parser<std::str::Chars<'a>>,
    text: &'a str,
    /// Line index of `text` (a masked text has the same line starts).
    index: &'a LineIndex,
    base: usize,
    done: bool,
}

impl<'a> Events<'a> {
    fn new(text: &'a str, base: usize, index: &'a LineIndex) -> Events<'a> {
        Events {
            parser: Parser::new_from_str(text),
            text,
            index,
            base,
            done: false,
        }
    }
}

impl Iterator for Events<'_> {
    type Item = Result<(Event, usize), ParseFailure>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.parser.next_token() {
            Ok((ev, mark)) => {
                self.done = ev == Event::StreamEnd;
                let off = marker_offset(self.text, self.index, &mark);
                Some(Ok((ev, self.base + off)))
            }
            Err(e) => {
                self.done = true;
                let m = e.marker();
                Some(Err((m.line().max(1), m.col() + 1, e.info().to_string())))
            }
        }
    }
}

/// A stable hash of one event (value, style, anchor, tag, kind) at position
/// `index` in the stream. Digests add these up, so events can join in any order.
fn fingerprint(index: usize, ev: &Event) -> u64 {
    let mut h = Fx(0);
    index.hash(&mut h);
    match ev {
        Event::Scalar(v, style, anchor, tag) => {
            (1u8, v, *style as u8, anchor).hash(&mut h);
            tag.as_ref().map(|t| (&t.handle, &t.suffix)).hash(&mut h);
        }
        Event::Alias(a) => (2u8, a).hash(&mut h),
        Event::MappingStart(a, tag) | Event::SequenceStart(a, tag) => {
            (matches!(ev, Event::MappingStart(..)), 3u8, a).hash(&mut h);
            tag.as_ref().map(|t| (&t.handle, &t.suffix)).hash(&mut h);
        }
        Event::Nothing => 4u8.hash(&mut h),
        Event::StreamStart => 5u8.hash(&mut h),
        Event::StreamEnd => 6u8.hash(&mut h),
        Event::DocumentStart => 7u8.hash(&mut h),
        Event::DocumentEnd => 8u8.hash(&mut h),
        Event::MappingEnd => 9u8.hash(&mut h),
        Event::SequenceEnd => 10u8.hash(&mut h),
    }
    // Spread the bits: digests add fingerprints up.
    let x = h.0 ^ (h.0 >> 33);
    x.wrapping_mul(0xff51_afd7_ed55_8ccd) ^ (x >> 29)
}

/// A small fast hasher (the multiply-rotate scheme of rustc's FxHasher):
/// fingerprints guard against accidents, not adversaries.
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

fn marker_offset(text: &str, index: &LineIndex, m: &Marker) -> usize {
    index
        .offset(text, m.line(), m.col())
        .unwrap_or(text.len())
        .min(text.len())
}

/// Parses `text` as YAML (JSON included), masking Helm template actions if the
/// file does not parse as it is, and locates every endpoint occurrence; with
/// `only`, just the occurrences of `extra_hosts` (what a rebind needs).
pub fn locate_yaml(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, ParseError> {
    let index = LineIndex::new(text);
    let mut found = endpoint::find_all(text, &text.to_ascii_lowercase(), extra_hosts);
    if only {
        found.retain(|f| extra_hosts.iter().any(|h| h.eq_ignore_ascii_case(&f.host)));
    }
    // A UTF-8 BOM is not content: the parser would fold it into the first key.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body_index = (bom > 0).then(|| LineIndex::new(&text[bom..]));
    let body_index = body_index.as_ref().unwrap_or(&index);

    let first = match walk_events(
        text,
        &index,
        &found,
        extra_hosts,
        Events::new(&text[bom..], bom, body_index),
        &[],
        only,
    ) {
        Ok(l) => return Ok(l),
        Err(e) => e,
    };
    if let Some((masked, ranges)) = mask_templates(text) {
        if let Ok(l) = walk_events(
            text,
            &index,
            &found,
            extra_hosts,
            Events::new(&masked[bom..], bom, body_index),
            &ranges,
            only,
        ) {
            return Ok(l);
        }
    }
    Err(parse_error(text, &index, found, extra_hosts, first))
}

fn parse_error(
    text: &str,
    index: &LineIndex,
    found: Vec<Found>,
    extra_hosts: &[String],
    (line, column, message): (usize, usize, String),
) -> ParseError {
    let occurrences = found
        .into_iter()
        .filter(|f| is_endpoint(f, extra_hosts, false))
        .map(|f| occurrence(text, index, f, Kind::Text))
        .collect();
    ParseError {
        line,
        column,
        message,
        occurrences,
    }
}

fn walk_events(
    text: &str,
    index: &LineIndex,
    found: &[Found],
    extra_hosts: &[String],
    events: impl Iterator<Item = Result<(Event, usize), ParseFailure>>,
    masked_ranges: &[(usize, usize)],
    only: bool,
) -> Result<Located, ParseFailure> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut docs: Vec<Doc> = vec![Doc::default()];
    let mut candidates: Vec<Candidate> = Vec::new();
    // Candidates whose span end is not known yet (the next scalar's start).
    let mut pending_spans: Vec<usize> = Vec::new();
    let mut doc_needed = false;
    // Where each kept document starts, so comments can name their resource.
    let mut doc_starts: Vec<(usize, usize)> = Vec::new();
    let mut doc_start = 0;
    let mut found_cursor = 0;
    let mut event_count = 0;
    let mut digest = 0u64;
    let mut siblings: HashMap<usize, Vec<(String, String)>> = HashMap::new();
    let mut wanted: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut held = BTreeMap::new();
    // Whether a scalar at `last_key`/`path` is worth recording: it names a
    // recognised host, or holds a URL where a cluster can be (any other URL,
    // such as a repoURL, can never be an endpoint).
    let may_hold = |v: &str, stack: &[Frame], is_key: bool| {
        if found.is_empty() || !v.bytes().any(|b| b == b'.' || b == b':') {
            return false;
        }
        let lower = v.to_ascii_lowercase();
        if only {
            return extra_hosts.iter().any(|h| lower.contains(h.as_str()));
        }
        if endpoint::may_hold_named(&lower, extra_hosts) {
            return true;
        }
        if !lower.contains("https://") {
            return false;
        }
        let last = stack.last().and_then(|f| {
            if f.is_map && !is_key {
                f.key.as_deref()
            } else {
                None
            }
        });
        matches!(last, Some("server" | "clusterEndpoint" | "value"))
            || lower.contains("server:")
            || lower.contains("clusterendpoint:")
            || stack.iter().any(|f| {
                matches!(
                    f.key.as_deref(),
                    Some("elements" | "resource.exclusions" | "resource.inclusions")
                )
            })
            || (stack.len() == 1 && !is_key)
    };

    for item in events {
        let (ev, off) = item?;
        let ev_index = event_count;
        event_count += 1;
        if stack.len() >= MAX_DEPTH {
            let (line, column) = index.position(text, off);
            return Err((
                line,
                column,
                format!("collections nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        match &ev {
            Event::DocumentStart | Event::DocumentEnd => {
                // Endpoint text anywhere in the document (comments too) keeps it.
                while found.get(found_cursor).is_some_and(|f| f.start < off) {
                    found_cursor += 1;
                    doc_needed = true;
                }
                let last = docs.last_mut().expect("docs is never empty");
                let used = last.kind.is_some() || last.name.is_some();
                if used || !stack.is_empty() {
                    if doc_needed || last.dest_server.is_some() || last.dest_name.is_some() {
                        doc_starts.push((doc_start, docs.len() - 1));
                        docs.push(Doc::default());
                    } else {
                        *last = Doc::default(); // nothing refers to it: reuse the slot
                    }
                    doc_needed = false;
                    doc_start = off;
                }
                stack.clear();
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let in_key = stack
                    .last()
                    .is_some_and(|f| (f.is_map && f.expect_key) || f.in_key);
                stack.push(Frame {
                    is_map: matches!(ev, Event::MappingStart(..)),
                    expect_key: true,
                    key: None,
                    index: 0,
                    scalars: Vec::new(),
                    in_key,
                    id: ev_index,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(done) = stack.pop() {
                    // Kept only where an endpoint may need its cluster name.
                    if done.is_map && wanted.contains(&done.id) {
                        siblings.insert(done.id, done.scalars);
                    }
                }
                if let Some(parent) = stack.last_mut() {
                    if parent.is_map && parent.expect_key {
                        parent.key = Some("?".into());
                    }
                    parent.advance();
                }
            }
            Event::Scalar(..) | Event::Alias(..) => {
                let value = match &ev {
                    Event::Scalar(v, ..) => v.as_str(),
                    _ => "",
                };
                let is_scalar = matches!(ev, Event::Scalar(..));
                if is_scalar {
                    pending_spans.retain(|&ci| {
                        let c: &mut Candidate = &mut candidates[ci];
                        if off > c.start {
                            c.span_end = off;
                            false
                        } else {
                            true
                        }
                    });
                }
                let is_key = stack.last().is_some_and(|f| f.is_map && f.expect_key);
                let in_key = stack.iter().any(|f| f.in_key);
                if is_scalar && may_hold(value, &stack, is_key) {
                    let mut segs: Vec<Seg> = Vec::with_capacity(stack.len() + 1);
                    let depth = stack.len();
                    for (i, f) in stack.iter().enumerate() {
                        if i + 1 == depth && is_key {
                            segs.push(Seg::Key(value.to_string()));
                        } else {
                            segs.push(f.seg());
                        }
                    }
                    let top = stack.last();
                    candidates.push(Candidate {
                        event: ev_index,
                        start: off,
                        span_end: text.len(),
                        path: if in_key {
                            format!("{}(key)", format_path(&segs))
                        } else {
                            format_path(&segs)
                        },
                        last_key: top.and_then(|f| f.is_map.then(|| f.key.clone()).flatten()),
                        sibling_name: top.and_then(|f| {
                            f.scalars
                                .iter()
                                .find(|(k, _)| k == "name")
                                .map(|(_, v)| v.clone())
                        }),
                        frame: top.filter(|f| f.is_map).map(|f| f.id),
                        doc: docs.len() - 1,
                    });
                    if let Some(f) = top.filter(|f| f.is_map) {
                        wanted.insert(f.id);
                    }
                    pending_spans.push(candidates.len() - 1);
                    doc_needed = true;
                }
                if is_scalar && !in_key {
                    let templated = masked_ranges
                        .iter()
                        .any(|&(s, e)| s < off + value.len().max(1) && e > off);
                    let value = if templated { "{{template}}" } else { value };
                    record_doc_fact(
                        docs.last_mut().expect("docs is never empty"),
                        &stack,
                        is_key,
                        value,
                    );
                }
                if let Some(f) = stack.last_mut() {
                    if f.is_map && f.expect_key {
                        f.key = Some(if is_scalar {
                            value.to_string()
                        } else {
                            "*".into()
                        });
                    } else if f.is_map && is_scalar {
                        // Only the siblings that can name a cluster are kept.
                        if let Some(k @ ("name" | "cluster" | "clusterName")) = f.key.as_deref() {
                            f.scalars.push((k.to_string(), value.to_string()));
                        }
                    }
                    f.advance();
                }
            }
            _ => {}
        }
        if candidates.last().is_some_and(|c| c.event == ev_index) {
            held.insert(ev_index, ev);
        } else {
            digest = digest.wrapping_add(fingerprint(ev_index, &ev));
        }
    }

    // Map each textual find to the scalar whose source span holds it, in order.
    let value_of = |c: &Candidate| match held.get(&c.event) {
        Some(Event::Scalar(v, ..)) => v.as_str(),
        _ => "",
    };
    let mut assigned: Vec<Option<(usize, usize)>> = vec![None; found.len()]; // (candidate, value offset)
    let masked = !masked_ranges.is_empty();
    for (ci, c) in candidates.iter().enumerate() {
        let (span_end, value) = (c.span_end, value_of(c));
        let first = found.partition_point(|f| f.start < c.start);
        let mut cursor = 0;
        for (fi, f) in found.iter().enumerate().skip(first) {
            if f.start >= span_end {
                break;
            }
            if assigned[fi].is_some() || in_ranges(masked_ranges, f.start) {
                continue;
            }
            let lit = &text[f.start..f.end];
            if let Some(p) = value.get(cursor..).and_then(|v| v.find(lit)) {
                assigned[fi] = Some((ci, cursor + p));
                cursor += p + lit.len();
            }
        }
    }

    let mut occurrences = Vec::new();
    for (fi, f) in found.iter().cloned().enumerate() {
        match assigned[fi] {
            Some((ci, voff)) => {
                let c = &candidates[ci];
                let doc = &docs[c.doc];
                let value = value_of(c);
                let line_start = value[..voff].rfind('\n').map_or(0, |p| p + 1);
                let cp = cluster_position(doc.kind.as_deref(), c, &value[line_start..voff]);
                if !is_endpoint(&f, extra_hosts, cp) {
                    continue;
                }
                let mut o = occurrence(text, index, f, Kind::Value);
                o.yaml_path = Some(c.path.clone());
                o.resource = doc.resource();
                o.cluster_position = cp;
                o.event = Some(c.event);
                if cp {
                    o.cluster_hint =
                        cluster_hint(c, value, siblings.get(&c.frame.unwrap_or(usize::MAX)));
                }
                occurrences.push(o);
            }
            None => {
                if !is_endpoint(&f, extra_hosts, false) {
                    continue;
                }
                let kind = if in_ranges(masked_ranges, f.start) {
                    Kind::Template
                } else {
                    Kind::Comment
                };
                let doc_idx = doc_starts
                    .iter()
                    .rev()
                    .find(|(start, _)| *start <= f.start)
                    .map(|(_, d)| *d);
                let mut o = occurrence(text, index, f, kind);
                o.resource = doc_idx.and_then(|d| docs[d].resource());
                occurrences.push(o);
            }
        }
    }

    let destinations = docs
        .iter()
        .filter(|d| d.dest_server.is_some() || d.dest_name.is_some())
        .map(|d| Destination {
            resource: d.resource().unwrap_or_default(),
            server: d.dest_server.clone(),
            name: d.dest_name.clone(),
        })
        .collect();

    // Only the scalars that hold a value occurrence are needed to verify a rewrite.
    let used: BTreeSet<usize> = occurrences.iter().filter_map(|o| o.event).collect();
    // A scan (not `only`) never verifies a rewrite: it keeps no events at all.
    held.retain(|k, ev| {
        let keep = only && used.contains(k);
        if !keep {
            digest = digest.wrapping_add(fingerprint(*k, ev));
        }
        keep
    });
    if held.is_empty() {
        held = BTreeMap::new(); // an emptied map still holds a node; many files add up
    }
    occurrences.shrink_to_fit();
    Ok(Located {
        occurrences,
        event_count,
        digest,
        held,
        destinations,
        masked,
    })
}

/// The cluster's name as the manifest gives it next to an endpoint: a sibling
/// `cluster`, `clusterName` or `name` key, or a `clusterName:` line in the same
/// block string (karpenter values).
fn cluster_hint(
    c: &Candidate,
    value: &str,
    siblings: Option<&Vec<(String, String)>>,
) -> Option<String> {
    let sib = |key: &str| {
        siblings
            .and_then(|s| s.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty() && !v.contains("{{"))
    };
    // `name` names the cluster only in a cluster Secret or a generator element
    // (in Helm `parameters` it names the parameter).
    let name_is_cluster = c.path == "stringData.server"
        || c.path == "spec.target.template.data.server"
        || c.path.contains("list.elements[");
    let name = || if name_is_cluster { sib("name") } else { None };
    if let Some(v) = sib("cluster").or_else(|| sib("clusterName")).or_else(name) {
        return Some(v);
    }
    value.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("clusterName:")?;
        let v = rest.split('#').next()?.trim().trim_matches(['"', '\'']);
        (!v.is_empty()).then(|| v.to_string())
    })
}

fn in_ranges(ranges: &[(usize, usize)], at: usize) -> bool {
    ranges.iter().any(|&(s, e)| at >= s && at < e)
}

/// Remembers the document's kind, name and destination as its scalars go by.
fn record_doc_fact(doc: &mut Doc, stack: &[Frame], is_key: bool, value: &str) {
    if is_key || stack.len() > 5 {
        return;
    }
    let keys: Vec<&str> = stack
        .iter()
        .map(|f| {
            if f.is_map {
                f.key.as_deref().unwrap_or("?")
            } else {
                "[]"
            }
        })
        .collect();
    match keys.as_slice() {
        ["kind"] => doc.kind = Some(value.to_string()),
        ["metadata", "name"] => doc.name = Some(value.to_string()),
        ["spec", "destination", "server"]
        | ["spec", "template", "spec", "destination", "server"] => {
            doc.dest_server = Some(value.to_string())
        }
        ["spec", "destination", "name"] | ["spec", "template", "spec", "destination", "name"] => {
            doc.dest_name = Some(value.to_string())
        }
        _ => {}
    }
}

/// What [`locate_yaml`] records of `text` for verification (parsed masked if
/// `masked`): the event count, the digest of every event not in `keep`, and
/// the events in `keep` whole.
pub fn digest_of(
    text: &str,
    masked: bool,
    keep: &BTreeSet<usize>,
) -> Result<(usize, u64, BTreeMap<usize, Event>), String> {
    let owned;
    let src = match mask_templates(text).filter(|_| masked) {
        Some((m, _)) => {
            owned = m;
            owned.as_str()
        }
        None => text,
    };
    let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let index = LineIndex::new(&src[bom..]);
    let mut digest = 0u64;
    let mut held = BTreeMap::new();
    let mut count = 0;
    for item in Events::new(&src[bom..], bom, &index) {
        let (ev, _) = item.map_err(|(l, c, m)| format!("{l}:{c}: {m}"))?;
        if keep.contains(&count) {
            held.insert(count, ev);
        } else {
            digest = digest.wrapping_add(fingerprint(count, &ev));
        }
        count += 1;
    }
    Ok((count, digest, held))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROD: &str =
        "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

    #[test]
    fn line_index_handles_crlf_and_multibyte() {
        let t = "# 한국어\r\nkey: v\rz: 1\n";
        let ix = LineIndex::new(t);
        let key = t.find("key").unwrap();
        assert_eq!(ix.offset(t, 2, 0), Some(key));
        assert_eq!(ix.position(t, key + 5), (2, 6));
        assert_eq!(ix.offset(t, 3, 0), Some(t.find('z').unwrap()));
        assert_eq!(ix.position(t, t.find('어').unwrap()), (1, 5));
    }

    #[test]
    fn mask_keeps_length_and_lines() {
        let t = "{{- if .Values.x }}\nname: app-{{ .Values.env }}\n{{- end }}\n";
        let (m, r) = mask_templates(t).unwrap();
        assert_eq!(m.len(), t.len());
        assert_eq!(r.len(), 3);
        assert_eq!(
            m,
            "                   \nname: app-xxxxxxxxxxxxxxxxx\n          \n"
        );
    }

    #[test]
    fn value_comment_and_path() {
        let t = format!(
            "# 주석 {PROD}\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: keda\nspec:\n  destination:\n    server: '{PROD}' # old {PROD}\n"
        );
        let l = locate_yaml(&t, &[], false).unwrap();
        let kinds: Vec<_> = l.occurrences.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![Kind::Comment, Kind::Value, Kind::Comment]);
        let v = &l.occurrences[1];
        assert_eq!(v.yaml_path.as_deref(), Some("spec.destination.server"));
        assert_eq!(v.resource.as_deref(), Some("Application/keda"));
        assert!(v.cluster_position);
        assert_eq!((v.line, v.column), (8, 14));
        assert_eq!(&t[v.found.start..v.found.end], PROD);
    }

    #[test]
    fn block_scalar_and_parameters() {
        let t = format!(
            "kind: Application\nmetadata: {{name: karpenter}}\nspec:\n  source:\n    helm:\n      values: |\n        settings:\n          clusterEndpoint: {PROD}\n      parameters:\n        - name: settings.clusterEndpoint\n          value: \"https://10.0.0.1:6443\"\n        - name: other\n          value: https://example.com\n"
        );
        let l = locate_yaml(&t, &[], false).unwrap();
        let got: Vec<_> = l
            .occurrences
            .iter()
            .map(|o| {
                (
                    o.endpoint.as_str(),
                    o.yaml_path.clone().unwrap(),
                    o.cluster_position,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (PROD, "spec.source.helm.values".to_string(), true),
                (
                    "https://10.0.0.1:6443",
                    "spec.source.helm.parameters[0].value".to_string(),
                    true
                ),
            ]
        );
    }

    #[test]
    fn template_actions_are_masked() {
        let t = format!(
            "{{{{- if .Values.on }}}}\nkind: Application\nspec:\n  destination:\n    server: {PROD}\n    name: {{{{ default \"{PROD}\" .x }}}}\n{{{{- end }}}}\n"
        );
        let l = locate_yaml(&t, &[], false).unwrap();
        assert!(l.masked);
        let kinds: Vec<_> = l.occurrences.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![Kind::Value, Kind::Template]);
    }

    #[test]
    fn parse_error_reports_position_and_endpoints() {
        let t = format!("a: [\nserver: {PROD}\n  - x: : y\n");
        let e = locate_yaml(&t, &[], false).unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        assert_eq!(e.occurrences.len(), 1);
    }
}
