//! Locating endpoint occurrences in one file: where each one is (byte range,
//! line, column), what it is (a YAML value, a comment, plain text, a Helm
//! template action), which YAML path and resource it sits at, and whether that
//! position holds a cluster by ArgoCD semantics.
//!
//! YAML is read as [`yaml`](crate::yaml)'s event stream by a [`Locator`],
//! one method per event kind; which paths hold a cluster is
//! [`positions`](crate::positions)' answer. With `only`, the locator also
//! feeds a [`Proof`] so that `rewrite::verify` can check a rewrite without
//! parsing the old text twice; locating itself never checks rewrites.

use crate::endpoint::{self, Found, Shape};
use crate::positions::{self, Fact, Position, Seg, YamlPath};
use crate::rewrite::Proof;
pub use crate::yaml::{mask_templates, LineIndex, MAX_DEPTH};
use crate::yaml::{Events, ParseFailure};
use std::collections::{BTreeSet, HashMap, HashSet};
use yaml_rust2::parser::Event;

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
    /// The YAML path, as shown (`spec.destination.server`).
    pub yaml_path: Option<String>,
    /// The cluster position it sits at, if any (see [`positions`]).
    pub position: Option<Position>,
    /// `Kind/name` of the document it sits in.
    pub resource: Option<String>,
    /// The position holds a cluster by ArgoCD semantics (`destination.server`, ...).
    pub cluster_position: bool,
    /// The cluster's name where the manifest says it next to the endpoint
    /// (ApplicationSet element `cluster`, cluster Secret `name`, karpenter `clusterName`).
    pub cluster_hint: Option<String>,
    /// Index of the parser event of the scalar holding it (kind `value`).
    pub event: Option<usize>,
    /// Found in the scalar's decoded value, not in its raw bytes (a
    /// double-quoted scalar with escapes): see [`Escaped`].
    pub escaped: Option<Escaped>,
}

/// An occurrence read through a double-quoted scalar's escapes
/// (`"\u0068ttps://..."`, `\x2e`, an escaped line break): `found` holds
/// offsets into the decoded value; `inner` is the raw body's byte range in
/// the file (between the quotes). A rewrite splices the body through
/// `endpoint::splice_decoded`, or is refused.
#[derive(Debug, Clone)]
pub struct Escaped {
    pub inner: std::ops::Range<usize>,
    pub found: Found,
}

impl Occurrence {
    /// `https://[userinfo@]host[:port]` as written (as decoded, for an
    /// occurrence read through escapes): the part a rebind replaces.
    pub fn endpoint_url(&self) -> &str {
        let f = self.escaped.as_ref().map_or(&self.found, |e| &e.found);
        self.endpoint
            .get(..f.replace_end - f.start)
            .unwrap_or(&self.endpoint)
    }

    pub fn shape(&self) -> Shape {
        self.found.shape()
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
    pub destinations: Vec<Destination>,
    /// What a rewrite is verified against (YAML files located with `only`).
    pub proof: Proof,
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

/// One open collection on the way down to the current node.
struct Frame {
    is_map: bool,
    expect_key: bool,
    key: Option<String>,
    index: usize,
    /// Scalar values of this mapping that may name a cluster, by key.
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
    path: YamlPath,
    /// The scalar is (inside) a complex mapping key.
    in_key: bool,
    sibling_name: Option<String>,
    /// The mapping holding the scalar, if any (see [`Frame::id`]).
    frame: Option<usize>,
    doc: usize,
    value: String,
    /// A double-quoted scalar whose body has escapes: its raw body's range.
    escaped_body: Option<std::ops::Range<usize>>,
}

#[derive(Default)]
struct Doc {
    kind: Option<String>,
    name: Option<String>,
    dest_server: Option<String>,
    dest_name: Option<String>,
    /// `destination.server` as written, template actions included.
    template_server: Option<String>,
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

/// Keeps only the text that is an endpoint: a managed-cluster or in-cluster
/// host, a host named by `--from`, or any URL at a cluster position.
pub(crate) fn is_endpoint(f: &Found, extra_hosts: &[String], at_position: bool) -> bool {
    at_position
        || f.shape() != Shape::Other
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
        position: None,
        resource: None,
        cluster_position: false,
        event: None,
        cluster_hint: None,
        escaped: None,
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

/// Parses `text` as YAML (JSON included), masking Helm template actions if the
/// file does not parse as it is, and locates every endpoint occurrence; with
/// `only`, just the occurrences of `extra_hosts` (what a rebind needs).
pub fn locate_yaml(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, ParseError> {
    let index = LineIndex::new(text);
    let mut found = endpoint::find_all(text, &text.to_ascii_lowercase(), extra_hosts);
    if only {
        found.retain(|f| extra_hosts.iter().any(|h| h.eq_ignore_ascii_case(&f.host)));
    }
    let input = Input {
        text,
        index: &index,
        found: &found,
        hosts: extra_hosts,
        only,
        escapes: text.contains('\\'),
    };
    let first = match Locator::new(input, &[]).run(Events::new(text)) {
        Ok(l) => return Ok(l),
        Err(e) => e,
    };
    if let Some((masked, ranges)) = mask_templates(text) {
        if let Ok(l) = Locator::new(input, &ranges).run(Events::new(&masked)) {
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
    (line, column, message): ParseFailure,
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

/// What a locator reads: the file, its line index, the endpoint text found in
/// it, and what it is looking for.
#[derive(Clone, Copy)]
struct Input<'a> {
    text: &'a str,
    index: &'a LineIndex,
    /// Endpoint-looking text in the raw file, in order.
    found: &'a [Found],
    hosts: &'a [String],
    only: bool,
    /// The text has a backslash: a double-quoted scalar may hide an endpoint
    /// behind escapes, so raw finds are not the only way in.
    escapes: bool,
}

/// Walks one file's parser events and ties each piece of endpoint text to
/// the scalar (or comment, or template action) that holds it.
struct Locator<'a> {
    input: Input<'a>,
    /// Byte ranges of masked template actions (empty when unmasked).
    masked: &'a [(usize, usize)],
    stack: Vec<Frame>,
    docs: Vec<Doc>,
    candidates: Vec<Candidate>,
    /// Candidates whose span end is not known yet (the next scalar's start).
    pending_spans: Vec<usize>,
    /// The current document holds endpoint text (it must keep its slot).
    doc_needed: bool,
    /// Where each kept document starts, so comments can name their resource.
    doc_starts: Vec<(usize, usize)>,
    doc_start: usize,
    found_cursor: usize,
    /// Cluster-naming scalars of completed mappings that hold a candidate.
    siblings: HashMap<usize, Vec<(String, String)>>,
    wanted: HashSet<usize>,
    events: usize,
    proof: Proof,
}

impl<'a> Locator<'a> {
    fn new(input: Input<'a>, masked: &'a [(usize, usize)]) -> Locator<'a> {
        Locator {
            input,
            masked,
            stack: Vec::new(),
            docs: vec![Doc::default()],
            candidates: Vec::new(),
            pending_spans: Vec::new(),
            doc_needed: false,
            doc_starts: Vec::new(),
            doc_start: 0,
            found_cursor: 0,
            siblings: HashMap::new(),
            wanted: HashSet::new(),
            events: 0,
            proof: Proof::new(!masked.is_empty()),
        }
    }

    fn run(
        mut self,
        events: impl Iterator<Item = Result<(Event, usize), ParseFailure>>,
    ) -> Result<Located, ParseFailure> {
        for item in events {
            let (ev, off) = item?;
            self.event(ev, off)?;
        }
        Ok(self.finish())
    }

    fn event(&mut self, ev: Event, off: usize) -> Result<(), ParseFailure> {
        let ev_index = self.events;
        self.events += 1;
        if self.stack.len() >= MAX_DEPTH {
            let (line, column) = self.input.index.position(self.input.text, off);
            return Err((
                line,
                column,
                format!("collections nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let mut hold = false;
        match &ev {
            Event::DocumentStart | Event::DocumentEnd => self.document(off),
            Event::MappingStart(..) => self.open(true, ev_index),
            Event::SequenceStart(..) => self.open(false, ev_index),
            Event::MappingEnd | Event::SequenceEnd => self.close(),
            Event::Scalar(value, style, ..) => {
                let quoted = *style == yaml_rust2::scanner::TScalarStyle::DoubleQuoted;
                hold = self.scalar(value, quoted, ev_index, off)
            }
            Event::Alias(..) => self.alias(),
            _ => {}
        }
        if self.input.only {
            self.proof.observe(ev_index, ev, hold);
        }
        Ok(())
    }

    /// A document boundary: the finished document keeps its slot only when
    /// something refers to it.
    fn document(&mut self, off: usize) {
        let found = self.input.found;
        while found.get(self.found_cursor).is_some_and(|f| f.start < off) {
            self.found_cursor += 1;
            self.doc_needed = true;
        }
        let last = self.docs.last_mut().expect("docs is never empty");
        let used = last.kind.is_some() || last.name.is_some();
        if used || !self.stack.is_empty() {
            if self.doc_needed || last.dest_server.is_some() || last.dest_name.is_some() {
                self.doc_starts.push((self.doc_start, self.docs.len() - 1));
                self.docs.push(Doc::default());
            } else {
                *last = Doc::default(); // nothing refers to it: reuse the slot
            }
            self.doc_needed = false;
            self.doc_start = off;
        }
        self.stack.clear();
    }

    fn open(&mut self, is_map: bool, id: usize) {
        let in_key = self
            .stack
            .last()
            .is_some_and(|f| (f.is_map && f.expect_key) || f.in_key);
        self.stack.push(Frame {
            is_map,
            expect_key: true,
            key: None,
            index: 0,
            scalars: Vec::new(),
            in_key,
            id,
        });
    }

    fn close(&mut self) {
        if let Some(done) = self.stack.pop() {
            // Kept only where an endpoint may need its cluster name.
            if done.is_map && self.wanted.contains(&done.id) {
                self.siblings.insert(done.id, done.scalars);
            }
        }
        if let Some(parent) = self.stack.last_mut() {
            if parent.is_map && parent.expect_key {
                parent.key = Some("?".into());
            }
            parent.advance();
        }
    }

    fn alias(&mut self) {
        if let Some(f) = self.stack.last_mut() {
            if f.is_map && f.expect_key {
                f.key = Some("*".into());
            }
            f.advance();
        }
    }

    /// The keys from the root down to the scalar (its own key last).
    fn keys<'s>(&'s self, own_key: Option<&'s str>) -> Vec<&'s str> {
        let depth = self.stack.len();
        self.stack
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_map)
            .map(|(i, f)| match own_key {
                Some(k) if i + 1 == depth => k,
                _ => f.key.as_deref().unwrap_or("?"),
            })
            .collect()
    }

    /// Whether a scalar is worth recording: it names a recognised host or a
    /// `--from` host, or holds a URL where a cluster can be (any other URL,
    /// such as a repoURL, can never be an endpoint).
    fn may_hold(&self, v: &str, is_key: bool) -> bool {
        let Input {
            found, hosts, only, ..
        } = self.input;
        if (found.is_empty() && !self.input.escapes) || !v.bytes().any(|b| b == b'.' || b == b':') {
            return false;
        }
        let lower = v.to_ascii_lowercase();
        if only {
            return hosts.iter().any(|h| lower.contains(h.as_str()));
        }
        if endpoint::may_hold_named(&lower, hosts) {
            return true;
        }
        if !lower.contains("https://") {
            return false;
        }
        if self.stack.len() == 1 && !is_key {
            return true;
        }
        let keys = self.keys(None);
        let keys = if is_key {
            &keys[..keys.len().saturating_sub(1)]
        } else {
            &keys[..]
        };
        positions::may_hold(keys, &lower)
    }

    /// Returns whether the scalar is held whole for verification.
    fn scalar(&mut self, value: &str, quoted: bool, ev_index: usize, off: usize) -> bool {
        let text = self.input.text;
        let candidates = &mut self.candidates;
        self.pending_spans.retain(|&ci| {
            let c = &mut candidates[ci];
            if off > c.start {
                c.span_end = off;
                false
            } else {
                true
            }
        });
        let is_key = self.stack.last().is_some_and(|f| f.is_map && f.expect_key);
        let in_key = self.stack.iter().any(|f| f.in_key);
        let mut hold = false;
        if self.may_hold(value, is_key) {
            let depth = self.stack.len();
            let segs = self
                .stack
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if i + 1 == depth && is_key {
                        Seg::Key(value.to_string())
                    } else {
                        f.seg()
                    }
                })
                .collect();
            let top = self.stack.last().filter(|f| f.is_map);
            self.candidates.push(Candidate {
                event: ev_index,
                start: off,
                span_end: text.len(),
                path: YamlPath(segs),
                in_key,
                sibling_name: top.and_then(|f| {
                    f.scalars
                        .iter()
                        .find(|(k, _)| k == "name")
                        .map(|(_, v)| v.clone())
                }),
                frame: top.map(|f| f.id),
                doc: self.docs.len() - 1,
                value: value.to_string(),
                escaped_body: if quoted {
                    escaped_body(text, off)
                } else {
                    None
                },
            });
            if let Some(f) = top {
                self.wanted.insert(f.id);
            }
            self.pending_spans.push(self.candidates.len() - 1);
            self.doc_needed = true;
            hold = true;
        }
        if !in_key && !is_key && self.stack.len() <= positions::FACT_DEPTH {
            self.record_fact(value, off);
        }
        if let Some(f) = self.stack.last_mut() {
            if f.is_map && f.expect_key {
                f.key = Some(value.to_string());
            } else if f.is_map {
                // Only the siblings that can name a cluster are kept.
                if let Some(k) = f.key.as_deref().filter(|k| positions::is_name_key(k)) {
                    f.scalars.push((k.to_string(), value.to_string()));
                }
            }
            f.advance();
        }
        hold
    }

    /// Remembers the document's kind, name and destination as its scalars go by.
    fn record_fact(&mut self, value: &str, off: usize) {
        let keys = self.keys(None);
        if keys.len() != self.stack.len() {
            return; // a sequence on the way: no fact lives there
        }
        let Some(fact) = positions::fact(&keys) else {
            return;
        };
        let templated = in_ranges_overlap(self.masked, off, value.len().max(1));
        let written = if templated {
            let rest = &self.input.text[off..];
            rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())].to_string()
        } else {
            value.to_string()
        };
        let value = if templated { "{{template}}" } else { value };
        let doc = self.docs.last_mut().expect("docs is never empty");
        match fact {
            Fact::Kind => doc.kind = Some(value.to_string()),
            Fact::Name => doc.name = Some(value.to_string()),
            Fact::DestinationServer => {
                doc.dest_server = Some(value.to_string());
                doc.template_server = Some(written);
            }
            Fact::DestinationName => doc.dest_name = Some(value.to_string()),
        }
    }

    /// Ties each piece of endpoint text to the scalar whose source span holds
    /// it, classifies it, and gives up what is not needed any more.
    fn finish(self) -> Located {
        let Input {
            text,
            index,
            found,
            hosts,
            only,
            ..
        } = self.input;
        let mut assigned: Vec<Option<(usize, usize)>> = vec![None; found.len()]; // (candidate, value offset)
                                                                                 // Scalars read through escapes: their occurrences come from the
                                                                                 // decoded value, and raw text inside their body is theirs.
        let mut items: Vec<(Found, usize, usize, Option<Escaped>)> = Vec::new();
        for (ci, c) in self.candidates.iter().enumerate() {
            let Some(body) = &c.escaped_body else {
                continue;
            };
            for (fi, f) in found.iter().enumerate() {
                if f.start >= body.start && f.start < body.end {
                    assigned[fi] = Some((ci, usize::MAX));
                }
            }
            items.extend(
                decoded_finds(text, body.clone(), &c.value, hosts, only).map(|(raw, esc)| {
                    let voff = esc.found.start;
                    (raw, ci, voff, Some(esc))
                }),
            );
        }
        for (ci, c) in self.candidates.iter().enumerate() {
            if c.escaped_body.is_some() {
                continue;
            }
            let first = found.partition_point(|f| f.start < c.start);
            let mut cursor = 0;
            for (fi, f) in found.iter().enumerate().skip(first) {
                if f.start >= c.span_end {
                    break;
                }
                if assigned[fi].is_some() || in_ranges(self.masked, f.start) {
                    continue;
                }
                let lit = &text[f.start..f.end];
                if let Some(p) = c.value.get(cursor..).and_then(|v| v.find(lit)) {
                    assigned[fi] = Some((ci, cursor + p));
                    cursor += p + lit.len();
                }
            }
        }

        let mut occurrences = Vec::new();
        for (fi, f) in found.iter().cloned().enumerate() {
            let Some((ci, voff)) = assigned[fi] else {
                if !is_endpoint(&f, hosts, false) {
                    continue;
                }
                let kind = if in_ranges(self.masked, f.start) {
                    Kind::Template
                } else {
                    Kind::Comment
                };
                let doc_idx = self
                    .doc_starts
                    .iter()
                    .rev()
                    .find(|(start, _)| *start <= f.start)
                    .map(|(_, d)| *d);
                let mut o = occurrence(text, index, f, kind);
                o.resource = doc_idx.and_then(|d| self.docs[d].resource());
                occurrences.push(o);
                continue;
            };
            if voff != usize::MAX {
                items.push((f, ci, voff, None));
            }
        }
        for (f, ci, voff, escaped) in items {
            let c = &self.candidates[ci];
            let doc = &self.docs[c.doc];
            let line_start = c.value[..voff].rfind('\n').map_or(0, |p| p + 1);
            let position = if c.in_key {
                None
            } else {
                positions::classify(
                    &c.path,
                    &positions::Context {
                        kind: doc.kind.as_deref(),
                        sibling_name: c.sibling_name.as_deref(),
                        line_prefix: &c.value[line_start..voff],
                        template_server: doc.template_server.as_deref(),
                        managed_host: f.shape() != Shape::Other,
                    },
                )
            };
            if !is_endpoint(&f, hosts, position.is_some()) {
                continue;
            }
            let siblings = c.frame.and_then(|id| self.siblings.get(&id));
            let mut o = occurrence(text, index, f, Kind::Value);
            if let Some(e) = &escaped {
                // Shown as any YAML reader sees it.
                o.endpoint = c.value[e.found.start..e.found.end].to_string();
            }
            o.escaped = escaped;
            o.yaml_path = Some(if c.in_key {
                format!("{}(key)", c.path)
            } else {
                c.path.to_string()
            });
            o.resource = doc.resource();
            o.position = position;
            o.cluster_position = position.is_some();
            o.event = Some(c.event);
            if let Some(p) = position {
                o.cluster_hint = cluster_hint(p, &c.value, siblings);
            }
            occurrences.push(o);
        }
        occurrences.sort_by_key(|o| o.found.start);

        let destinations = self
            .docs
            .iter()
            .filter(|d| d.dest_server.is_some() || d.dest_name.is_some())
            .map(|d| Destination {
                resource: d.resource().unwrap_or_default(),
                server: d.dest_server.clone(),
                name: d.dest_name.clone(),
            })
            .collect();

        // Only the scalars that hold a value occurrence are needed to verify a rewrite.
        let mut proof = self.proof;
        if only {
            let used: BTreeSet<usize> = occurrences.iter().filter_map(|o| o.event).collect();
            proof.release_except(&used);
        }
        occurrences.shrink_to_fit();
        Located {
            occurrences,
            destinations,
            proof,
        }
    }
}

/// The cluster's name as the manifest gives it next to an endpoint: a sibling
/// `cluster`, `clusterName` or `name` key, or a `clusterName:` line in the same
/// block string (karpenter values).
pub(crate) fn cluster_hint(
    position: Position,
    value: &str,
    siblings: Option<&Vec<(String, String)>>,
) -> Option<String> {
    let sib = |key: &str| {
        siblings
            .and_then(|s| s.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty() && !v.contains("{{"))
    };
    // `name` names the cluster only where the table says so (in Helm
    // `parameters` it names the parameter).
    let name = || {
        if position.sibling_name_is_cluster() {
            sib("name")
        } else {
            None
        }
    };
    if let Some(v) = sib("cluster").or_else(|| sib("clusterName")).or_else(name) {
        return Some(v);
    }
    value.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("clusterName:")?;
        let v = rest.split('#').next()?.trim().trim_matches(['"', '\'']);
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// The raw body (between the quotes) of the double-quoted scalar starting at
/// `start`, when it holds an escape; `None` otherwise.
fn escaped_body(text: &str, start: usize) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    if b.get(start) != Some(&b'"') {
        return None;
    }
    let mut i = start + 1;
    let mut escapes = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                escapes = true;
                i += 2;
            }
            b'"' => return escapes.then_some(start + 1..i),
            _ => i += 1,
        }
    }
    None
}

/// The endpoints in a double-quoted scalar's decoded `value`, each with its
/// raw byte range in the file (covering the escapes it is written with) and
/// its decoded form. A body the decoder does not read exactly as the parser
/// did yields nothing.
fn decoded_finds<'v>(
    text: &str,
    body: std::ops::Range<usize>,
    value: &'v str,
    hosts: &[String],
    only: bool,
) -> impl Iterator<Item = (Found, Escaped)> + 'v {
    let decoded = endpoint::escape_map(&text[body.clone()]).filter(|d| d.text == value);
    let mut finds = match &decoded {
        Some(_) => endpoint::find_in_decoded(value, hosts),
        None => Vec::new(),
    };
    if only {
        finds.retain(|f| hosts.iter().any(|h| h.eq_ignore_ascii_case(&f.host)));
    }
    let spans = decoded.map(|d| d.spans).unwrap_or_default();
    let raw_at = move |d: usize, end: bool| -> usize {
        let hit = if end {
            spans.iter().find(|(_, dr)| dr.end >= d && dr.start < d)
        } else {
            spans.iter().find(|(_, dr)| dr.end > d)
        };
        body.start
            + hit.map_or(
                body.end - body.start,
                |(r, _)| {
                    if end {
                        r.end
                    } else {
                        r.start
                    }
                },
            )
    };
    finds.into_iter().map(move |f| {
        let mut raw = f.clone();
        raw.start = raw_at(f.start, false);
        raw.end = raw_at(f.end, true);
        raw.replace_end = raw_at(f.replace_end, true);
        let inner = body.clone();
        (raw, Escaped { inner, found: f })
    })
}

fn in_ranges(ranges: &[(usize, usize)], at: usize) -> bool {
    ranges.iter().any(|&(s, e)| at >= s && at < e)
}

fn in_ranges_overlap(ranges: &[(usize, usize)], at: usize, len: usize) -> bool {
    ranges.iter().any(|&(s, e)| s < at + len && e > at)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROD: &str =
        "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

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
        assert!(l.proof.masked);
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
