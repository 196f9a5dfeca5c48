//! Locating endpoint occurrences in one file: where each one is (byte range,
//! line, column), what it is (a YAML value, a comment, plain text, a Helm
//! template action), which YAML path and resource it sits at, and whether that
//! position holds a cluster by ArgoCD semantics.
//!
//! YAML is read as [`yaml`]'s event stream by a `Locator`,
//! one method per event kind, on the shared [`yaml::Stack`]; JSON the YAML
//! parser refuses is read by the same `Locator` from the JSON reader's events
//! ([`locate_json_for`]), so both give the same occurrences. Which paths hold
//! a cluster is [`positions`]' answer. Each result says how the file was
//! read (masked, JSON-only); locating itself never checks rewrites.

use crate::find::embedded::{self, Inner};
use crate::find::templates;
use crate::model::application::Destination;
use crate::model::positions::{self, Fact, Position, Seg, YamlPath};
use crate::syntax::yaml::{self, Events, ParseFailure};
use crate::text::endpoint::{self, Found, Needle, Shape};

/// The open collections, each with its scalars that may name a cluster, by key.
type Stack = yaml::Stack<Vec<(String, String)>>;
pub use crate::syntax::yaml::{mask_templates, LineIndex, MAX_DEPTH};
use std::collections::{HashMap, HashSet};
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

/// How the endpoint text is written in the file, when not as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The value is standard base64 (a Secret's `data`: `server`, a
    /// `config` JSON, a kubeconfig): the endpoint is found in the decoded
    /// text (`escaped` holds the base64 text's range and the find in the
    /// decoded text), and a rewrite re-encodes the whole value.
    Base64,
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
    /// The position holds a cluster by ArgoCD semantics (`destination.server`, ...);
    /// false for a bare TLS name there (it follows its cluster's URL).
    pub cluster_position: bool,
    /// The cluster's name where the manifest says it next to the endpoint
    /// (ApplicationSet element `cluster`, cluster Secret `name`, karpenter
    /// `clusterName`, ...), and how it was found (see [`HintSource`]).
    pub cluster_hint: Option<String>,
    pub hint_source: HintSource,
    /// Index of the parser event of the scalar holding it (kind `value`).
    pub event: Option<usize>,
    /// Set when the file holds the endpoint encoded (`found` is then the
    /// range of the encoded text, `endpoint` the decoded endpoint, and
    /// `escaped` where it sits in the decoded text).
    pub encoding: Option<Encoding>,
    /// Found in the scalar's decoded value, not in its raw bytes (a
    /// double-quoted scalar with escapes): see [`Escaped`].
    pub escaped: Option<Escaped>,
    /// The part a rewrite replaces, as a byte range of the scalar's decoded
    /// value: what the verification expects rebound, and nothing else.
    pub value_range: Option<std::ops::Range<usize>>,
    /// The road by which the value reaches its cluster position when it is
    /// not written at the position's key itself (an alias or merge key that
    /// lands the anchor's value there, a chart template, a generator):
    /// shown by `scan` beside the path.
    pub via: Option<String>,
}

/// An occurrence read through a double-quoted scalar's escapes
/// (`"\u0068ttps://..."`, `\x2e`, an escaped line break) or through base64
/// (a Secret's `data`, [`Encoding::Base64`]): `found` holds offsets into the
/// decoded value; `inner` is the raw body's byte range in the file (between
/// the quotes; for base64, the base64 text with the line breaks between its
/// lines). A rewrite splices the body through `endpoint::splice_decoded`, or
/// re-encodes it whole (`embedded::rebind_base64`), or is refused.
#[derive(Debug, Clone)]
pub struct Escaped {
    pub inner: std::ops::Range<usize>,
    pub found: Found,
}

impl Occurrence {
    pub fn shape(&self) -> Shape {
        self.found.shape()
    }

    /// The part of the endpoint text a rewrite replaces, as written
    /// (`https://[userinfo@]host[:port][/k8s/clusters/<id>]`, or the bare host).
    pub fn replaced_text(&self) -> &str {
        // Read through escapes or base64: `endpoint` is the decoded text.
        let f = self.escaped.as_ref().map_or(&self.found, |e| &e.found);
        self.endpoint
            .get(..f.replace_end - f.start)
            .unwrap_or(&self.endpoint)
    }

    /// [`Occurrence::replaced_text`] without its user info: what names the
    /// cluster (user info names none, and may hold a password).
    pub fn cluster_text(&self) -> String {
        let f = self.escaped.as_ref().map_or(&self.found, |e| &e.found);
        let text = self.replaced_text();
        match &f.userinfo {
            Some(u) => text.replacen(&format!("{u}@"), "", 1),
            None => text.to_string(),
        }
    }
}

/// Where a cluster name hint comes from, best first: `init` names a cluster
/// by its best source, then by the name given most often.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HintSource {
    /// Said beside the endpoint: a list-generator element's `cluster`,
    /// `clusterName`, `name`, `env` or `environment`; a cluster Secret's
    /// `name` (base64 in `data`); a kubeconfig cluster's `name`; a `name` or
    /// `clusterName` beside `server` in a values or inventory file; the key
    /// of a ConfigMap `data` entry.
    Manifest,
    /// The kustomize overlay folder holding the file (`overlays/<name>/`).
    Overlay,
    /// An Application aimed at the endpoint: `<project>-<overlay>` when its
    /// source path ends in `overlays/<overlay>`, else its name without the
    /// leading words that name what it deploys (`istio-base-gke-tokyo`
    /// with chart `base` from `istio-release`: `gke-tokyo`).
    Application,
    /// The host itself: the `<cluster>` of an OpenShift `api.<cluster>.<domain>`,
    /// or a first DNS label without `k8s`/`api`/`cp` affixes.
    Host,
}

/// Everything located in one file.
#[derive(Debug, Default)]
pub struct Located {
    pub occurrences: Vec<Occurrence>,
    pub destinations: Vec<Destination>,
    /// Helm template actions had to be masked for the file to parse.
    pub masked: bool,
    /// The file reads only as JSON (see `jsonfile`): a rewrite is spliced by
    /// JSON's escape rules.
    pub json: bool,
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
    /// The mapping holding the scalar, if any (see [`Frame::id`]), and the
    /// mapping holding that one (a kubeconfig `clusters[]` entry).
    frame: Option<usize>,
    parent_frame: Option<usize>,
    doc: usize,
    value: String,
    /// A double-quoted scalar whose body has escapes: its raw body's range.
    escaped_body: Option<std::ops::Range<usize>>,
    /// A base64 value (`value` is then its decoded text): the base64 text's
    /// range in the file.
    encoded: Option<std::ops::Range<usize>>,
    /// The finds that stand in a comment of the document the value holds
    /// (decoded from base64, or a string holding YAML), as offsets in
    /// `value`: comments, never values. Read once.
    decoded_comments: Vec<usize>,
    /// Where aliases of this anchored scalar (or of a collection holding
    /// it) land: the scalar is read at each of these paths too.
    landed: Vec<yaml::Landing>,
}

#[derive(Default)]
struct Doc {
    kind: Option<String>,
    name: Option<String>,
    dest_server: Option<String>,
    dest_name: Option<String>,
    /// `destination.server` as written, template actions included.
    template_server: Option<String>,
    /// The `kind` of each item of a `kind: List` (an exported backup).
    item_kinds: HashMap<usize, String>,
    item_names: HashMap<usize, String>,
    project: Option<String>,
    source_path: Option<String>,
    /// `spec.source` path, chart and repoURL, space-separated.
    source_words: String,
}

impl Doc {
    /// The kind and path a table lookup uses: those of the item for a path
    /// inside a `kind: List` item (and `true`), else the document's.
    fn kind_and_path(&self, path: &YamlPath) -> (Option<&str>, YamlPath, bool) {
        if let (Some("List"), [Seg::Key(k), Seg::Index(i), rest @ ..]) =
            (self.kind.as_deref(), path.0.as_slice())
        {
            if k == positions::LIST_ITEMS {
                let kind = self.item_kinds.get(i).map(String::as_str);
                return (kind, YamlPath(rest.to_vec()), true);
            }
        }
        (self.kind.as_deref(), path.clone(), false)
    }

    /// `Kind/name` of the item a path is in, for a `kind: List`; else of the document.
    fn resource_at(&self, path: &YamlPath) -> Option<String> {
        if let (Some("List"), [Seg::Key(k), Seg::Index(i), ..]) =
            (self.kind.as_deref(), path.0.as_slice())
        {
            if k == positions::LIST_ITEMS {
                if let Some(kind) = self.item_kinds.get(i) {
                    return Some(match self.item_names.get(i) {
                        Some(n) => format!("{kind}/{n}"),
                        None => kind.clone(),
                    });
                }
            }
        }
        self.resource()
    }

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
        || extra_hosts.iter().any(|h| endpoint::same_host(h, &f.host))
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
        value_range: None,
        hint_source: HintSource::Manifest,
        encoding: None,
        via: None,
    }
}

/// Adds the endpoints found behind an embedded document's escapes. A raw
/// find inside such a spelling that is rewritten stands (`https:\/\/host`
/// reads raw as its host, and is rewritten); any other gives way (raw,
/// `\u0068ttps://host` is no URL of another scheme).
fn merge_inner_escaped(occurrences: &mut Vec<Occurrence>, inner: &[Occurrence]) {
    let overlaps = |o: &Occurrence, r: &Occurrence| {
        o.found.start < r.found.end.max(r.found.start + 1) && r.found.start < o.found.end
    };
    for e in inner {
        if occurrences
            .iter()
            .any(|o| o.kind == Kind::Value && overlaps(o, e))
        {
            continue;
        }
        occurrences.retain(|o| !overlaps(o, e));
        occurrences.push(e.clone());
    }
    occurrences.sort_by_key(|o| o.found.start);
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

/// What a caller needs located.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Want {
    /// Just the occurrences of the given hosts (what a rebind needs).
    pub only: bool,
    /// The cluster name the manifests give beside each value
    /// ([`Occurrence::cluster_hint`]): `init` and the scan's JSON report need
    /// it; nothing else reads it, and it is the dearest part of locating.
    pub names: bool,
    /// The EKS cluster ARNs each YAML file names ([`crate::find::names::cluster_arns`]),
    /// read while the file is in hand: `scan` lists the clusters named so.
    pub arns: bool,
}

impl Want {
    /// The occurrences (with `only`, of the given hosts alone) and the
    /// cluster names beside them.
    pub fn named(only: bool) -> Want {
        Want {
            only,
            names: true,
            arns: false,
        }
    }
}

/// Parses `text` as YAML (JSON included), masking Helm template actions if the
/// file does not parse as it is, and locates every endpoint occurrence; with
/// `only`, just the occurrences of `extra_hosts` (what a rebind needs).
/// Cluster names are included; see [`locate_yaml_for`].
pub fn locate_yaml(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, ParseError> {
    locate_yaml_for(text, extra_hosts, Want::named(only))
}

/// [`locate_yaml`], locating what `want` says.
pub fn locate_yaml_for(
    text: &str,
    extra_hosts: &[String],
    want: Want,
) -> Result<Located, ParseError> {
    locate_yaml_following(text, extra_hosts, want, &[])
}

/// [`locate_yaml_for`] with the values paths that chart templates render
/// into a cluster position (`templates::Followed::of` this file): extra
/// positions, nothing else.
pub fn locate_yaml_following(
    text: &str,
    extra_hosts: &[String],
    want: Want,
    followed: &[templates::Flow],
) -> Result<Located, ParseError> {
    let index = LineIndex::new(text);
    let actions = yaml::template_actions(text);
    // YAML allows no NUL character; the parser would take it as a line break
    // and every position after it would be wrong.
    if let Some(at) = text.find('\0') {
        let found = endpoint::find_all(text, &text.to_ascii_lowercase(), extra_hosts);
        let (line, column) = index.position(text, at);
        let mut input = Input::new(text, &index, &found, extra_hosts, want, Grammar::Yaml);
        input.actions = &actions;
        return Err(parse_error(
            input,
            (line, column, "a NUL byte, which YAML does not allow".into()),
        ));
    }
    let found = clip_at_actions(raw_finds(text, extra_hosts, want.only), &actions);
    let mut input = Input::new(text, &index, &found, extra_hosts, want, Grammar::Yaml);
    input.followed = followed;
    input.actions = &actions;
    // The parser's lines are the file's: one line index serves both (a
    // BOM shifts the first line's columns, so then the events index their own).
    let events = |t| {
        if yaml::bom_len(text) == 0 {
            Events::with_index(t, &index)
        } else {
            Events::new(t)
        }
    };
    let first = match Locator::new(input, &[]).run(events(text)) {
        Ok(l) => return Ok(l),
        Err(e) => e,
    };
    if !actions.is_empty() {
        let masked = yaml::mask(text, &actions);
        let reading = Input {
            parsed: &masked,
            ..input
        };
        if let Ok(l) = Locator::new(reading, &actions).run(events(&masked)) {
            return Ok(l);
        }
    }
    Err(parse_error(input, first))
}

/// Locates every endpoint occurrence in `text`, a JSON text the YAML parser
/// may refuse (a surrogate-pair escape, as Python's `json.dump` writes), by
/// the same `Locator` as YAML: the JSON reader gives it the same events
/// (paths, decoded values, byte offsets), and strings with escapes are read
/// by JSON's escape rules. `Err` when `text` is not valid JSON.
pub fn locate_json_for(
    text: &str,
    extra_hosts: &[String],
    want: Want,
) -> Result<Located, crate::syntax::json::Error> {
    let doc = crate::syntax::json::tokenize(text)?;
    let index = LineIndex::new(text);
    let actions = yaml::template_actions(text);
    let found = clip_at_actions(raw_finds(text, extra_hosts, want.only), &actions);
    let mut input = Input::new(text, &index, &found, extra_hosts, want, Grammar::Json);
    input.actions = &actions;
    let mut located = Locator::new(input, &[])
        .run(doc.events(text).map(Ok))
        .map_err(|(line, column, message)| crate::syntax::json::Error {
            offset: index.offset(text, line, column - 1).unwrap_or(0),
            line,
            column,
            message,
        })?;
    located.json = true;
    Ok(located)
}

/// Where, in a string that holds a document (Helm `values: |`, a kustomize
/// `patch: |`, a `stringData` kubeconfig, a JSON string with `\n`
/// escapes), the endpoints that stand in a comment of that document start:
/// a comment is a comment however the document is held, never a value.
/// Prose (a string that is no mapping or list) has no comments.
fn embedded_comments(value: &str, hosts: &[String]) -> Vec<usize> {
    if !value.contains('#') || !embedded::looks_embedded(value) || !embedded::is_collection(value) {
        return Vec::new();
    }
    comments_of(value, hosts)
}

/// Where, in a base64 value's `decoded` text, the endpoints that stand in
/// a comment of the YAML document that text is start, as this module reads
/// it (none without a `#`).
fn decoded_comments(decoded: &str, hosts: &[String]) -> Vec<usize> {
    if !decoded.contains('#') {
        return Vec::new();
    }
    comments_of(decoded, hosts)
}

/// The starts of the endpoints located as comments in the document `text`.
/// Whether text is a comment is the document's structure, whatever host it
/// names: every endpoint-looking text of the document is read as the
/// document's own (a host of no managed shape too, which the document alone
/// would not report), so a comment is one for a plain scan as for `--from`.
fn comments_of(text: &str, hosts: &[String]) -> Vec<usize> {
    let mut all = hosts.to_vec();
    for f in raw_finds(text, hosts, false) {
        if !all.iter().any(|h| endpoint::same_host(h, &f.host)) {
            all.push(f.host.to_ascii_lowercase());
        }
    }
    locate_yaml(text, &all, false).map_or_else(
        |_| Vec::new(),
        |l| {
            l.occurrences
                .iter()
                .filter(|o| o.kind == Kind::Comment)
                .map(|o| o.found.start)
                .collect()
        },
    )
}

/// The endpoint-looking text in a file's raw bytes, in order: just the
/// given hosts with `only`, else every endpoint and the bare hosts named by key.
fn raw_finds(text: &str, hosts: &[String], only: bool) -> Vec<Found> {
    let mut found = endpoint::find_all(text, &text.to_ascii_lowercase(), hosts);
    if only {
        found.retain(|f| hosts.iter().any(|h| endpoint::same_host(h, &f.host)));
        found
    } else {
        with_bare_hosts(found, embedded::bare_hosts(text))
    }
}

/// Ends each piece of endpoint text where a template action starts inside
/// its path (`https://h/{{ .Values.path }}`): what the action renders is
/// not written in the file.
fn clip_at_actions(mut found: Vec<Found>, actions: &[(usize, usize)]) -> Vec<Found> {
    if actions.is_empty() {
        return found;
    }
    for f in &mut found {
        let next = actions.partition_point(|&(s, _)| s < f.replace_end);
        if let Some(&(s, _)) = actions.get(next).filter(|&&(s, _)| s < f.end) {
            f.end = s;
        }
    }
    found
}

/// Adds the bare hosts found by key to `found` (sorted, never overlapping).
fn with_bare_hosts(found: Vec<Found>, bare: Vec<Found>) -> Vec<Found> {
    if bare.is_empty() {
        return found;
    }
    let mut all = found;
    all.extend(bare);
    all.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut merged: Vec<Found> = Vec::with_capacity(all.len());
    for f in all {
        if merged.last().is_some_and(|l| f.start < l.end) {
            continue;
        }
        merged.push(f);
    }
    merged
}

/// A file that does not parse: its endpoint text is plain text, or a
/// template mention inside a template action (which no parse decides).
/// Where a value sits cannot be read, so whether a URL of no managed
/// shape is at a cluster position cannot be told: one that names just an
/// API server (`https://host:6443`, no path) counts, and the file is named,
/// never passed over as holding no endpoint.
fn parse_error(input: Input, (line, column, message): ParseFailure) -> ParseError {
    let mut occurrences: Vec<Occurrence> = input
        .found
        .iter()
        .filter(|f| is_endpoint(f, input.hosts, false) || names_just_a_server(f, input.text))
        .cloned()
        .map(|f| {
            let kind = if input.in_action(&f) {
                Kind::Template
            } else {
                Kind::Text
            };
            occurrence(input.text, input.index, f, kind)
        })
        .collect();
    if occurrences.is_empty() {
        occurrences = encoded_text(input);
    }
    ParseError {
        line,
        column,
        message,
        occurrences,
    }
}

/// Whether `f` is a URL of the API server's form: `https://` and an
/// authority (a Rancher proxy path included), with nothing after it but
/// one `/` (`https://git.example.com/gitops.git` names a repository).
fn names_just_a_server(f: &Found, text: &str) -> bool {
    !f.bare && f.rewritable() && matches!(text.get(f.replace_end..f.end), Some("" | "/"))
}

/// The endpoints of a file that does not parse that are all behind base64
/// (a Secret's `data` whose value the parser refuses): text at the start of
/// the base64 run, with the decoded endpoint, so that every reader names
/// the file where it fails instead of finding nothing.
fn encoded_text(input: Input) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let mut hit_end = usize::MAX;
    crate::text::base64::each_run(input.text, |run, decoded| {
        let Ok(decoded) = std::str::from_utf8(decoded) else {
            return false;
        };
        if run.end == hit_end {
            return false; // another alignment of a run already read
        }
        for d in raw_finds(decoded, input.hosts, input.only) {
            if !is_endpoint(&d, input.hosts, false) {
                continue;
            }
            let f = Found {
                start: run.start,
                end: run.end,
                replace_end: run.end,
                ..d.clone()
            };
            let mut o = occurrence(input.text, input.index, f, Kind::Text);
            o.endpoint = decoded[d.start..d.end].to_string();
            out.push(o);
            hit_end = run.end;
        }
        false
    });
    out
}

/// Which escapes a double-quoted scalar is written with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    Yaml,
    Json,
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
    /// Cluster names are wanted ([`Want::names`]).
    names: bool,
    /// The text has a backslash: a double-quoted scalar may hide an endpoint
    /// behind escapes, so raw finds are not the only way in.
    escapes: bool,
    grammar: Grammar,
    /// Template-followed positions of this file (see `templates`).
    followed: &'a [templates::Flow],
    /// The file's template actions ([`yaml::template_actions`]): endpoint
    /// text in them is a template mention, whether or not the file parses
    /// as it is.
    actions: &'a [(usize, usize)],
    /// The text the parser reads: `text`, or its masked copy (same length,
    /// same bytes outside the actions).
    parsed: &'a str,
    /// The text may hold merge keys (`<<`).
    merges: bool,
}

impl<'a> Input<'a> {
    fn new(
        text: &'a str,
        index: &'a LineIndex,
        found: &'a [Found],
        hosts: &'a [String],
        want: Want,
        grammar: Grammar,
    ) -> Input<'a> {
        Input {
            text,
            index,
            found,
            hosts,
            only: want.only,
            names: want.names,
            escapes: text.contains('\\'),
            grammar,
            followed: &[],
            actions: &[],
            parsed: text,
            merges: text.contains("<<"),
        }
    }

    /// Whether the endpoint text `f` is template text: inside an action, or
    /// with its host or port continued by an action that writes text
    /// (`https://h{{ .x }}`, `https://h.{{ .domain }}`, a bare host after
    /// `{{ .x }}.`): the file then renders another endpoint. Text that merely
    /// shares a line or a scalar with an action (`https://h/{{ .path }}`,
    /// `https://h # {{ x }}`, `{{ if .on }}https://h{{ end }}`) is not.
    fn in_action(&self, f: &Found) -> bool {
        let actions = self.actions;
        if actions.is_empty() {
            return false;
        }
        if in_ranges(actions, f.start) {
            return true;
        }
        let b = self.text.as_bytes();
        let authority = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b':');
        let after = f.replace_end
            + b.get(f.replace_end..)
                .map_or(0, |rest| rest.iter().take_while(|c| authority(c)).count());
        let renders = |k: usize| {
            let (s, e) = actions[k];
            crate::syntax::gotemplate::action_renders(&self.text[s..e])
        };
        if let Ok(k) = actions.binary_search_by_key(&after, |&(s, _)| s) {
            if renders(k) {
                return true;
            }
        }
        let host = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-');
        let before = f.start - b[..f.start].iter().rev().take_while(|c| host(c)).count();
        f.bare
            && actions
                .binary_search_by_key(&before, |&(_, e)| e)
                .is_ok_and(renders)
    }
}

/// Walks one file's parser events and ties each piece of endpoint text to
/// the scalar (or comment, or template action) that holds it.
struct Locator<'a> {
    input: Input<'a>,
    /// Byte ranges of masked template actions (empty when unmasked).
    masked: &'a [(usize, usize)],
    stack: Stack,
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
    /// Endpoints behind an embedded document's own escapes: reported.
    inner_escaped: Vec<Occurrence>,
    /// Anchored candidates (by index) and where their aliases land them.
    aliases: yaml::Aliases<usize>,
    /// The anchor of the scalar being read (0: none).
    anchor_now: usize,
}

impl<'a> Locator<'a> {
    fn new(input: Input<'a>, masked: &'a [(usize, usize)]) -> Locator<'a> {
        Locator {
            input,
            masked,
            stack: Stack::new(),
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
            inner_escaped: Vec::new(),
            aliases: yaml::Aliases::new(),
            anchor_now: 0,
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
        // (The JSON reader has already refused anything deeper than its own limit.)
        if self.stack.depth() >= MAX_DEPTH && self.input.grammar == Grammar::Yaml {
            let (line, column) = self.input.index.position(self.input.text, off);
            return Err((
                line,
                column,
                format!("collections nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        match &ev {
            Event::DocumentStart | Event::DocumentEnd => self.document(off),
            Event::MappingStart(aid, _) => self.open(true, ev_index, *aid),
            Event::SequenceStart(aid, _) => self.open(false, ev_index, *aid),
            Event::MappingEnd | Event::SequenceEnd => self.close(),
            Event::Scalar(value, style, aid, _) => {
                let quoted = *style == yaml_rust2::scanner::TScalarStyle::DoubleQuoted;
                self.anchor_now = *aid;
                let before = self.candidates.len();
                self.scalar(value, quoted, ev_index, off);
                if self.candidates.len() > before {
                    self.anchor_scalar(*aid);
                }
            }
            Event::Alias(aid) => self.alias(*aid, off),
            _ => {}
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

    fn open(&mut self, is_map: bool, id: usize, anchor: usize) {
        self.stack.open(is_map, id, Vec::new());
        self.aliases.open(anchor, self.stack.depth());
    }

    fn close(&mut self) {
        self.aliases.close(self.stack.depth());
        if let Some(done) = self.stack.close() {
            // Kept only where an endpoint may need its cluster name.
            if done.is_map && self.wanted.contains(&done.id) {
                self.siblings.insert(done.id, done.data);
            }
        }
    }

    /// An alias: the anchored node is read where the alias stands (each
    /// candidate scalar of it lands at this path, or, through a merge key
    /// `<<`, in the mapping holding it).
    fn alias(&mut self, anchor: usize, off: usize) {
        if !self.stack.at_key() && !self.stack.in_key() {
            self.land(anchor, off);
        }
        self.stack.alias();
    }

    fn land(&mut self, anchor: usize, off: usize) {
        for (ci, l) in self.aliases.land(anchor, off, &self.stack) {
            self.candidates[ci].landed.push(l);
            self.doc_needed = true;
        }
    }

    /// Records the candidate just made when its scalar is anchored, or
    /// inside an anchored collection, for the aliases of that anchor.
    fn anchor_scalar(&mut self, anchor: usize) {
        if !self.aliases.anchoring(anchor) {
            return;
        }
        let ci = self.candidates.len() - 1;
        let path = self.candidates[ci].path.0.clone();
        self.aliases.record(anchor, &path, ci);
    }

    /// Whether a scalar is worth recording: it names a recognised host or a
    /// `--from` host, or holds a URL where a cluster can be (any other URL,
    /// such as a repoURL, can never be an endpoint).
    fn may_hold(&self, v: &str, is_key: bool) -> bool {
        let Input {
            found, hosts, only, ..
        } = self.input;
        if found.is_empty() && !self.input.escapes {
            return false;
        }
        let bare_key = !is_key
            && self
                .stack
                .value_key()
                .is_some_and(|k| positions::BARE_HOST_KEYS.contains(&k));
        if !bare_key && !v.bytes().any(|b| b == b'.' || b == b':') {
            return false;
        }
        // Most scalars are lower case already: no copy for them.
        let lower: std::borrow::Cow<str> = if v.bytes().any(|b| b.is_ascii_uppercase()) {
            v.to_ascii_lowercase().into()
        } else {
            v.into()
        };
        if only {
            return hosts.iter().any(|h| endpoint::contains_host(&lower, h));
        }
        if bare_key || endpoint::may_hold_named(&lower, hosts) {
            return true;
        }
        // An anchored value may land at a position through an alias.
        let anchored = self.aliases.anchoring(self.anchor_now);
        if anchored && !is_key && endpoint::HTTPS.is_in(&lower) {
            return true;
        }
        if !endpoint::HTTPS.is_in(&lower) {
            // A bare host by key inside a string (`"serverName": "cp"`).
            return positions::may_hold_bare_in_string(self.stack.last_key(), &lower);
        }
        // OpenShift API servers and Rancher proxies are endpoints by shape.
        if OPENSHIFT_PORT.is_in(&lower) || RANCHER.is_in(&lower) {
            return true;
        }
        let depth = self.stack.depth();
        if positions::top_level_url(depth, is_key) {
            return true;
        }
        let keys = self.stack.keys();
        let keys = if is_key {
            &keys[..keys.len().saturating_sub(1)]
        } else {
            &keys[..]
        };
        positions::may_hold_url(depth, is_key, keys, &lower)
            // Hook: values that a chart template renders into a cluster position.
            || templates::may_hold(keys, self.input.followed)
    }

    /// Returns whether the scalar is recorded as a candidate.
    fn scalar(&mut self, value: &str, quoted: bool, ev_index: usize, off: usize) -> bool {
        let text = self.input.text;
        let candidates = &mut self.candidates;
        if !self.pending_spans.is_empty() {
            self.pending_spans.retain(|&ci| {
                let c = &mut candidates[ci];
                if off > c.start {
                    c.span_end = off;
                    false
                } else {
                    true
                }
            });
        }
        let is_key = self.stack.at_key();
        let in_key = self.stack.in_key();
        if is_key && self.input.merges {
            if let Some(f) = self.stack.top() {
                self.aliases.key(f.id, value);
            }
        }
        let mut hold = false;
        if !is_key && !in_key {
            self.record_item_kind(value);
            hold = self.encoded(value, ev_index, off);
            self.inner_escapes(value, off);
        }
        if !hold && self.may_hold(value, is_key) {
            let top = self.stack.top().filter(|f| f.is_map);
            let parent = self.stack.parent().filter(|f| f.is_map).map(|f| f.id);
            self.candidates.push(Candidate {
                event: ev_index,
                start: off,
                span_end: text.len(),
                path: self.stack.path_of(value),
                in_key,
                sibling_name: top.and_then(|f| {
                    f.data
                        .iter()
                        .find(|(k, _)| k == positions::NAME_KEY)
                        .map(|(_, v)| v.clone())
                }),
                frame: top.map(|f| f.id),
                parent_frame: parent,
                doc: self.docs.len() - 1,
                value: value.to_string(),
                escaped_body: if quoted {
                    escaped_body(self.input.parsed, off)
                } else {
                    None
                },
                encoded: None,
                decoded_comments: embedded_comments(value, self.input.hosts),
                landed: Vec::new(),
            });
            if let Some(f) = top {
                self.wanted.insert(f.id);
            }
            if let Some(id) = parent {
                self.wanted.insert(id);
            }
            self.pending_spans.push(self.candidates.len() - 1);
            self.doc_needed = true;
            hold = true;
        }
        if !in_key && !is_key && self.stack.depth() <= positions::FACT_DEPTH {
            self.record_fact(value, off);
        }
        if let Some(f) = self.stack.top_mut() {
            // Only the siblings that can name a cluster are kept.
            if f.is_map && !f.expect_key {
                if let Some(k) = f.key.as_deref().filter(|k| positions::is_name_key(k)) {
                    f.data.push((k.to_string(), value.to_string()));
                }
            }
        }
        self.stack.scalar(value);
        hold
    }

    /// Endpoints an embedded document in `value` (the scalar at `off`) writes
    /// with its own escapes ([`embedded::escaped_endpoints`]): reported as
    /// text where they are written (at the scalar when the spelling is not
    /// found), never rewritten.
    fn inner_escapes(&mut self, value: &str, off: usize) {
        if !value.contains('\\') {
            return;
        }
        let text = self.input.text;
        let path = self.stack.path_of(value).to_string();
        for (range, endpoint, f) in
            embedded::escaped_endpoints(&text[off..], value, self.input.hosts)
        {
            let range = range.map_or(off..off, |r| off + r.start..off + r.end);
            self.push_inner_escaped(range, endpoint, f, path.clone());
        }
    }

    /// The same inside a base64 value's decoded text (`data.config`'s JSON
    /// with `\u002e` in its `serverName`): reported at the scalar, as its
    /// spelling cannot be pointed at inside the base64.
    fn decoded_escapes(&mut self, decoded: &str, value: &str, off: usize) {
        if !decoded.contains('\\') {
            return;
        }
        let path = format!("{} (base64, decoded)", self.stack.path_of(value));
        for (_, endpoint, f) in embedded::escaped_endpoints(decoded, decoded, self.input.hosts) {
            self.push_inner_escaped(off..off, endpoint, f, path.clone());
        }
    }

    /// Records an endpoint behind an inner document's escapes, at `range`
    /// of the file (empty: at its start, with the decoded `endpoint`).
    fn push_inner_escaped(
        &mut self,
        range: std::ops::Range<usize>,
        endpoint: String,
        f: Found,
        path: String,
    ) {
        let found = Found {
            start: range.start,
            end: range.end,
            replace_end: range.end,
            ..f
        };
        let mut o = occurrence(self.input.text, self.input.index, found, Kind::Text);
        if range.is_empty() {
            o.endpoint = endpoint;
        }
        o.yaml_path = Some(path);
        o.resource = self.docs.last().and_then(Doc::resource);
        self.inner_escaped.push(o);
    }

    /// `items[N].kind` of a `kind: List`.
    fn record_item_kind(&mut self, value: &str) {
        let s = self.stack.frames();
        let in_item = s.len() >= 3
            && s[0].is_map
            && s[0].key.as_deref() == Some(positions::LIST_ITEMS)
            && !s[1].is_map
            && s[2..].iter().all(|f| f.is_map);
        if !in_item {
            return;
        }
        let i = s[1].index;
        let keys: Vec<&str> = s[2..]
            .iter()
            .map(|f| f.key.as_deref().unwrap_or("?"))
            .collect();
        let fact = positions::fact(&keys);
        let doc = self.docs.last_mut().expect("docs is never empty");
        match fact {
            Some(Fact::Kind) => {
                doc.item_kinds.insert(i, value.to_string());
            }
            Some(Fact::Name) => {
                doc.item_names.insert(i, value.to_string());
            }
            _ => {}
        }
    }

    /// A Secret `data` value is base64: decoded, it is located like any
    /// value whose text is the decoded one (a `config` JSON, a kubeconfig, a
    /// `server` URL), through the same classifier and embedded-document
    /// reader. Recorded as a candidate when the decoded text holds endpoint
    /// text (returns whether it is).
    fn encoded(&mut self, value: &str, ev_index: usize, off: usize) -> bool {
        // Cheap first: `data.KEY` is two levels deep, four in a List's item.
        if !matches!(self.stack.depth(), 2 | 4) {
            return false;
        }
        let keys = self.stack.keys();
        // Keys only: an item of a List adds one sequence level.
        let levels = keys.len() + usize::from(keys.first() == Some(&positions::LIST_ITEMS));
        if !positions::base64_data(&keys) || self.stack.depth() != levels {
            return false;
        }
        let Some(decoded) = embedded::decode_data(value) else {
            return false;
        };
        self.decoded_escapes(&decoded, value, off);
        let finds = raw_finds(&decoded, self.input.hosts, self.input.only);
        if finds.is_empty() {
            return false;
        }
        // Where the text cannot be told exactly (escapes), the scalar's first
        // character stands for it: found and reported, and a rebind refuses
        // to re-encode it, as it refuses base64 that is not canonical.
        let text = self.input.text;
        let first = text[off..].chars().next().map_or(0, char::len_utf8);
        let body = embedded::encoded_body(text, off, value).unwrap_or(off..off + first);
        let top = self.stack.top().filter(|f| f.is_map);
        let frame = top.map(|f| f.id);
        if let Some(id) = frame {
            self.wanted.insert(id);
        }
        let decoded_comments = decoded_comments(&decoded, self.input.hosts);
        self.candidates.push(Candidate {
            event: ev_index,
            start: off,
            span_end: off,
            path: self.stack.path(),
            in_key: false,
            sibling_name: None,
            frame,
            parent_frame: None,
            doc: self.docs.len() - 1,
            value: decoded,
            escaped_body: None,
            encoded: Some(body),
            decoded_comments,
            landed: Vec::new(),
        });
        self.doc_needed = true;
        true
    }

    /// Remembers the document's kind, name and destination as its scalars go by.
    fn record_fact(&mut self, value: &str, off: usize) {
        // Cheap first: every fact's own key is one of these.
        if !self.stack.value_key().is_some_and(positions::may_be_fact) {
            return;
        }
        let keys = self.stack.keys();
        if !self.stack.only_keys() {
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
            Fact::Project => doc.project = Some(value.to_string()),
            Fact::SourcePath => {
                doc.source_path = Some(value.to_string());
                doc.source_words.push_str(value);
                doc.source_words.push(' ');
            }
            Fact::SourceWords => {
                doc.source_words.push_str(value);
                doc.source_words.push(' ');
            }
        }
    }

    /// Ties each piece of endpoint text to the scalar whose source span holds
    /// it, classifies it, and gives up what is not needed any more.
    fn finish(self) -> Located {
        let found = self.input.found;
        let (assigned, mut items) = self.assign();
        let mut occurrences = Vec::new();
        for (fi, f) in found.iter().cloned().enumerate() {
            match assigned[fi] {
                None => occurrences.extend(self.mention(f)),
                Some((ci, voff)) if voff != usize::MAX => items.push(Item {
                    f,
                    ci,
                    voff,
                    escaped: None,
                }),
                Some(_) => {} // read through the scalar's escapes
            }
        }
        let mut parsed = ParsedDocs::new();
        for item in items {
            // Read through a scalar's escapes, and inside a template action:
            // a mention, once (raw text found in it is one already, as
            // when the file is read masked).
            if self.input.in_action(&item.f) {
                let next = found.partition_point(|f| f.end <= item.f.start);
                if found.get(next).is_none_or(|f| f.start >= item.f.end) {
                    occurrences.extend(self.mention(item.f));
                }
                continue;
            }
            let o = if self.candidates[item.ci].encoded.is_some() {
                self.encoded_occurrence(item, &mut parsed)
            } else {
                self.value_occurrence(item, &mut parsed)
            };
            occurrences.extend(o);
        }
        occurrences.sort_by_key(|o| o.found.start);
        if !self.inner_escaped.is_empty() {
            merge_inner_escaped(&mut occurrences, &self.inner_escaped);
        }
        let destinations = self.destinations();
        occurrences.shrink_to_fit();
        Located {
            occurrences,
            destinations,
            masked: !self.masked.is_empty(),
            json: false,
        }
    }

    /// Ties the raw endpoint text to the candidate scalars: for each raw
    /// find, its candidate and offset in the value (`usize::MAX` when it lies
    /// in a body read through escapes); and the finds in those decoded values.
    fn assign(&self) -> (Vec<Option<(usize, usize)>>, Vec<Item>) {
        let Input { found, hosts, .. } = self.input;
        // Scalars are compared with the text the parser read (masked or not):
        // endpoint text outside actions reads the same in both.
        let text = self.input.parsed;
        let mut assigned: Vec<Option<(usize, usize)>> = vec![None; found.len()];
        // Scalars read through escapes: their occurrences come from the
        // decoded value, and raw text inside their body is theirs.
        let mut items = Vec::new();
        for (ci, c) in self.candidates.iter().enumerate() {
            if let Some(body) = &c.encoded {
                items.extend(self.encoded_items(ci, c, body, &mut assigned));
                continue;
            }
            let Some(body) = &c.escaped_body else {
                continue;
            };
            for (fi, f) in found.iter().enumerate() {
                // (Text inside an action is a mention, not the scalar's.)
                if f.start >= body.start && f.start < body.end && !self.input.in_action(f) {
                    assigned[fi] = Some((ci, usize::MAX));
                }
            }
            let decoded = decoded_finds(text, body.clone(), &c.value, self.input, self.input.only);
            items.extend(decoded.map(|(f, esc)| Item {
                f,
                ci,
                voff: esc.found.start,
                escaped: Some(esc),
            }));
        }
        for (ci, c) in self.candidates.iter().enumerate() {
            if c.escaped_body.is_some() || c.encoded.is_some() {
                continue;
            }
            let first = found.partition_point(|f| f.start < c.start);
            let mut cursor = 0;
            let mut in_value = None;
            for (fi, f) in found.iter().enumerate().skip(first) {
                if f.start >= c.span_end {
                    break;
                }
                if assigned[fi].is_some() || self.input.in_action(f) {
                    continue;
                }
                if let Some(p) = value_offset(text, c, f, cursor, hosts, &mut in_value) {
                    assigned[fi] = Some((ci, p));
                    cursor = p + (f.end - f.start);
                }
            }
        }
        (assigned, items)
    }

    /// Endpoint text in no scalar: a comment, or a template action.
    fn mention(&self, f: Found) -> Option<Occurrence> {
        if !is_endpoint(&f, self.input.hosts, false) {
            return None;
        }
        let kind = if self.input.in_action(&f) {
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
        let mut o = occurrence(self.input.text, self.input.index, f, kind);
        o.resource = doc_idx.and_then(|d| self.docs[d].resource());
        Some(o)
    }

    /// The position of a candidate at `path` by the table, or by a road into
    /// it (`via`): a chart template rendering it, an alias landing it.
    fn direct(
        &self,
        c: &Candidate,
        path: &YamlPath,
        cx: &positions::Context,
        via: &mut Option<String>,
    ) -> Option<Position> {
        positions::classify(path, cx)
            // Hook: values that a chart template renders into a cluster position.
            .or_else(|| {
                let name = c.sibling_name.as_deref().or_else(|| {
                    let s = c.frame.and_then(|id| self.siblings.get(&id))?;
                    s.iter()
                        .find(|(k, _)| k == positions::NAME_KEY)
                        .map(|(_, v)| v.as_str())
                });
                let resource = self.docs[c.doc].resource_at(&c.path);
                let (p, road) =
                    templates::landing(path, resource.as_deref(), name, self.input.followed)?;
                *via = Some(road);
                Some(p)
            })
            // Hook: an anchored value that an alias or merge key lands there.
            .or_else(|| {
                let (p, road) = self.landing(c, cx.managed_host)?;
                *via = Some(road);
                Some(p)
            })
    }

    /// The cluster position of an item, and where it sits inside an embedded
    /// document when that document decides.
    fn position(
        &self,
        item: &Item,
        managed_host: bool,
        parsed: &mut ParsedDocs,
        via: &mut Option<String>,
    ) -> (Option<Position>, Option<Inner>) {
        let Item { f, ci, voff, .. } = item;
        let (ci, voff) = (*ci, *voff);
        let c = &self.candidates[ci];
        if c.in_key {
            return (None, None);
        }
        let doc = &self.docs[c.doc];
        let line_prefix = &c.value[c.value[..voff].rfind('\n').map_or(0, |p| p + 1)..voff];
        // An exported `kind: List`: each item is located by its own kind.
        let (kind, path, in_item) = doc.kind_and_path(&c.path);
        let template_server = if in_item {
            None
        } else {
            doc.template_server.as_deref()
        };
        let cx = positions::Context {
            kind,
            sibling_name: c.sibling_name.as_deref(),
            line_prefix,
            template_server,
            managed_host,
        };
        // A `server:` line of a string that is a document of its own
        // (a strategic-merge patch) is located by that document.
        let direct = self
            .direct(c, &path, &cx, via)
            .filter(|p| *p != Position::InStringKey || !embedded::looks_embedded(&c.value));
        // The endpoint as the value reads it (through escapes or base64).
        let lit = match &item.escaped {
            Some(e) => c.value.get(e.found.start..e.found.end).unwrap_or(""),
            None => &self.input.text[f.start..f.end],
        };
        // Where the table says the value's own document decides (a
        // registration's `config`), a URL is located by that document; a
        // bare host, or a document that does not parse, stays at the row.
        let document_decides =
            positions::rule(&path, &cx).is_some_and(|(_, w)| w == positions::Within::Document);
        if document_decides && !f.bare && embedded::looks_embedded(&c.value) {
            let doc = parsed
                .entry(ci)
                .or_insert_with(|| embedded::parse(&c.value));
            if let Some(p) = doc.as_ref() {
                *via = None; // the document decides, not a road
                return match p.locate(voff, lit, managed_host) {
                    Some(i) => (Some(i.position), Some(i)),
                    None => (None, None),
                };
            }
        }
        if direct.is_some() {
            return (direct, None);
        }
        // Each document is parsed once, however many endpoints it holds.
        let inner = if matches!(c.path.0.first(), Some(Seg::Index(_))) {
            // A file that is a JSON 6902 op list (`patchesJson6902`).
            let text = self.input.text;
            let whole = parsed.entry(usize::MAX).or_insert_with(|| {
                self.masked
                    .is_empty()
                    .then(|| embedded::parse(text))
                    .flatten()
            });
            // Located in the file itself: its path is the file's own
            // (`[1].value.server`), nothing inside a string to add.
            whole
                .as_ref()
                .and_then(|p| p.locate(f.start, lit, managed_host))
                .map(|i| Inner {
                    path: String::new(),
                    ..i
                })
        } else if embedded::looks_embedded(&c.value) {
            let doc = parsed
                .entry(ci)
                .or_insert_with(|| embedded::parse(&c.value));
            doc.as_ref().and_then(|p| p.locate(voff, lit, managed_host))
        } else {
            None
        };
        if let Some(i) = inner {
            return (Some(i.position), Some(i));
        }
        // Hook: an Application's `helm.values` string whose key a chart
        // template renders into a cluster position.
        if let Some((p, inner)) = self.inline_values(ci, &path, voff, lit, parsed, via) {
            return (Some(p), Some(inner));
        }
        (
            self.in_string_key(ci, line_prefix, voff, lit, parsed, via),
            None,
        )
    }

    /// A `server:` line of any other string (Helm `values: |`), or the line
    /// of an alias or merge key of the string's document that puts the
    /// value at `voff` there (the road goes to `via`).
    fn in_string_key(
        &self,
        ci: usize,
        line_prefix: &str,
        voff: usize,
        lit: &str,
        parsed: &ParsedDocs,
        via: &mut Option<String>,
    ) -> Option<Position> {
        let c = &self.candidates[ci];
        let in_string = |line_prefix: &str| {
            let cx = positions::Context {
                line_prefix,
                ..positions::Context::default()
            };
            positions::classify(&YamlPath::default(), &cx).filter(|p| *p == Position::InStringKey)
        };
        if let Some(p) = in_string(line_prefix) {
            return Some(p);
        }
        let landings = match parsed.get(&ci) {
            Some(Some(doc)) => doc.landings_at(voff, lit),
            _ => &[],
        };
        for l in landings {
            let v = &c.value;
            let prefix = &v[v[..l.at].rfind('\n').map_or(0, |p| p + 1)..l.at];
            if let Some(p) = in_string(prefix) {
                *via = Some(self.string_alias_road(c, l, None));
                return Some(p);
            }
        }
        None
    }

    /// The road of an alias or merge key `l` of the document candidate
    /// `c`'s string holds: the alias where the file writes it (a block
    /// string's lines are the file's, one for one; else its line and column
    /// in the string), the path it lands at, and what renders that path.
    fn string_alias_road(&self, c: &Candidate, l: &yaml::Landing, road: Option<&str>) -> String {
        let v = &c.value;
        let name_len = v[l.at..]
            .find(|ch: char| ch.is_whitespace() || matches!(ch, ',' | ']' | '}'))
            .unwrap_or(v.len() - l.at);
        let line_start = v[..l.at].rfind('\n').map_or(0, |p| p + 1);
        let line_end = v[l.at..].find('\n').map_or(v.len(), |p| l.at + p);
        let value_line = &v[line_start..line_end];
        let k = v[..line_start].matches('\n').count();
        let (text, index) = (self.input.text, self.input.index);
        let (first, _) = index.position(text, c.start);
        // (The scalar starts at its indicator's line or at its first line.)
        let in_file = [first + 1 + k, first + k].into_iter().find_map(|line| {
            let off = index.offset(text, line, 0)?;
            let end = text[off..].find('\n').map_or(text.len(), |p| off + p);
            let raw = text[off..end].trim_end_matches('\r');
            raw.ends_with(value_line).then(|| {
                index.position(
                    text,
                    off + raw.len() - value_line.len() + (l.at - line_start),
                )
            })
        });
        let place = match in_file {
            Some((line, column)) => format!("{line}:{column}"),
            None => {
                let column = v[line_start..l.at].chars().count() + 1;
                format!("{}:{column} of the string", k + 1)
            }
        };
        let how = if l.merged.is_some() {
            "merge key <<: "
        } else {
            "alias "
        };
        format!(
            "{how}{} at {place} -> {}{}",
            &v[l.at..l.at + name_len],
            l.path,
            road.map(|r| format!(" ({r})")).unwrap_or_default()
        )
    }

    /// The position of the endpoint `lit` at `voff` of candidate `ci`'s
    /// string when that string is an Application's `helm.values` and a
    /// chart template renders the key holding it (the road goes to `via`).
    fn inline_values(
        &self,
        ci: usize,
        path: &YamlPath,
        voff: usize,
        lit: &str,
        parsed: &mut ParsedDocs,
        via: &mut Option<String>,
    ) -> Option<(Position, Inner)> {
        let c = &self.candidates[ci];
        if self.input.followed.is_empty() || !embedded::looks_embedded(&c.value) {
            return None;
        }
        let doc = parsed
            .entry(ci)
            .or_insert_with(|| embedded::parse(&c.value));
        let doc = doc.as_ref()?;
        let inner = doc.path_at(voff, lit)?;
        let resource = self.docs[c.doc].resource_at(&c.path);
        let flows = self.input.followed;
        let (p, road) = match templates::in_string(path, resource.as_deref(), &inner, flows) {
            Some(hit) => hit,
            // Where an alias or merge key of the string's document puts it.
            None => {
                let mut found = None;
                let mut roads = Vec::new();
                for l in doc.landings_at(voff, lit) {
                    let res = resource.as_deref();
                    if let Some((p, road)) = templates::in_string(path, res, &l.path, flows) {
                        found.get_or_insert(p);
                        roads.push(self.string_alias_road(c, l, Some(&road)));
                    }
                }
                (found?, roads.join("; "))
            }
        };
        *via = Some(road);
        let inner = Inner {
            position: p,
            path: inner.to_string(),
            siblings: Vec::new(),
        };
        Some((p, inner))
    }

    /// The cluster position an anchored candidate's aliases land it on, and
    /// the road (`alias *srv at 8:13 -> spec.destination.server`). A merged
    /// entry that its mapping writes itself is overridden, not landed.
    fn landing(&self, c: &Candidate, managed_host: bool) -> Option<(Position, String)> {
        if c.landed.is_empty() || c.in_key {
            return None;
        }
        let doc = &self.docs[c.doc];
        let mut found = None;
        let mut roads = Vec::new();
        for l in &c.landed {
            if self.aliases.overridden(l) {
                continue;
            }
            let (kind, path, in_item) = doc.kind_and_path(&l.path);
            let cx = positions::Context {
                kind,
                template_server: (!in_item)
                    .then_some(doc.template_server.as_deref())
                    .flatten(),
                managed_host,
                ..positions::Context::default()
            };
            // By the table, or by a chart template (or generator) that
            // renders the landed path: the same hooks as a written value's.
            let (p, road) = match positions::classify(&path, &cx) {
                Some(p) => (p, None),
                None => {
                    let resource = doc.resource_at(&l.path);
                    let Some((p, road)) =
                        templates::landing(&l.path, resource.as_deref(), None, self.input.followed)
                    else {
                        continue;
                    };
                    (p, Some(road))
                }
            };
            found.get_or_insert(p);
            let text = self.input.text;
            let name_len = text[l.at..]
                .find(|ch: char| ch.is_whitespace() || matches!(ch, ',' | ']' | '}'))
                .unwrap_or(text.len() - l.at);
            let (line, column) = self.input.index.position(text, l.at);
            let how = if l.merged.is_some() {
                "merge key <<: "
            } else {
                "alias "
            };
            roads.push(format!(
                "{how}{} at {line}:{column} -> {}{}",
                &text[l.at..l.at + name_len],
                l.path,
                road.map(|r| format!(" ({r})")).unwrap_or_default()
            ));
        }
        found.map(|p| (p, roads.join("; ")))
    }

    /// The occurrence an item makes, if it is an endpoint.
    fn value_occurrence(&self, item: Item, parsed: &mut ParsedDocs) -> Option<Occurrence> {
        let managed_host = item.f.shape() != Shape::Other;
        let mut via = None;
        let (position, inner) = self.position(&item, managed_host, parsed, &mut via);
        let Item {
            f,
            ci,
            voff,
            escaped,
        } = item;
        let c = &self.candidates[ci];
        let doc = &self.docs[c.doc];
        // A bare host is an endpoint by shape, or where the API server's
        // name is given without a scheme.
        let position = position.filter(|p| !f.bare || managed_host || p.accepts_bare_host());
        if !is_endpoint(&f, self.input.hosts, position.is_some()) {
            return None;
        }
        // A bare IP address names the API server only where a bare host
        // does (`serverName`); anywhere else (`apiServerAddress:
        // 127.0.0.1`, a DNS server, an IP in a longer string) it is a
        // mention, never rewritten: the verification expects exactly the
        // planned ranges rebound (`value_range`).
        let other_scheme =
            !f.rewritable() || escaped.as_ref().is_some_and(|e| !e.found.rewritable());
        let kind = if (f.is_bare_ip() && position.is_none()) || other_scheme {
            Kind::Text
        } else {
            Kind::Value
        };
        let value_range = match &escaped {
            Some(e) => e.found.start..e.found.replace_end,
            None => voff..voff + (f.replace_end - f.start),
        };
        let mut o = occurrence(self.input.text, self.input.index, f, kind);
        o.value_range = Some(value_range);
        if let Some(e) = &escaped {
            // Shown as any YAML reader sees it.
            o.endpoint = c.value[e.found.start..e.found.end].to_string();
        }
        o.escaped = escaped;
        o.yaml_path = Some(match (&inner, c.in_key) {
            (_, true) => format!("{}(key)", c.path),
            (Some(i), false) if !i.path.is_empty() => format!("{} > {}", c.path, i.path),
            (_, false) => c.path.to_string(),
        });
        o.resource = doc.resource_at(&c.path);
        o.position = position;
        o.via = via;
        if o.kind == Kind::Value && !bare_ip_names_server(&o, self.input.text) {
            o.kind = Kind::Text; // a bare IP in prose, or where no bare host names the server
        }
        // A bare TLS name (`serverName`, `tls-server-name`) follows its
        // cluster's URL in a rebind; it is no cluster of its own.
        o.cluster_position = position.is_some() && (!o.found.bare || managed_host);
        // A comment of the document the string holds is a comment.
        if o.kind == Kind::Value && c.encoded.is_none() && c.decoded_comments.contains(&voff) {
            o.kind = Kind::Comment;
            o.position = None;
            o.cluster_position = false;
            o.via = None;
        }
        o.event = Some(c.event);
        if self.input.names {
            let decoded_siblings;
            let siblings = match &inner {
                Some(i) => Some(&i.siblings),
                None if c.encoded.is_some() => {
                    decoded_siblings = self.decoded_siblings(c);
                    decoded_siblings.as_ref()
                }
                None => c.frame.and_then(|id| self.siblings.get(&id)),
            };
            let hint = Hints {
                position,
                kind: doc.kind.as_deref(),
                value: &c.value,
                siblings,
                parent: c.parent_frame.and_then(|id| self.siblings.get(&id)),
                own_key: positions::data_entry_key(doc.kind.as_deref(), &c.path),
            };
            let app =
                (position == Some(Position::DestinationServer) && inner.is_none()).then_some(doc);
            if let Some((h, from)) = best_hint(&hint, app, &o.found) {
                o.cluster_hint = Some(h);
                o.hint_source = from;
            }
        }
        Some(o)
    }

    /// The items of a base64 candidate: each endpoint in its decoded text,
    /// read through the encoding (`escaped`: the base64 text's range and the
    /// find in the decoded text; the raw find spans the whole base64 text).
    /// Raw text inside the base64 text is the candidate's.
    fn encoded_items(
        &self,
        ci: usize,
        c: &Candidate,
        body: &std::ops::Range<usize>,
        assigned: &mut [Option<(usize, usize)>],
    ) -> Vec<Item> {
        for (fi, f) in self.input.found.iter().enumerate() {
            if f.start >= body.start && f.start < body.end.max(body.start + 1) {
                assigned[fi] = Some((ci, usize::MAX));
            }
        }
        raw_finds(&c.value, self.input.hosts, self.input.only)
            .into_iter()
            .map(|d| {
                let raw = Found {
                    start: body.start,
                    end: body.end,
                    replace_end: body.end,
                    ..d.clone()
                };
                Item {
                    f: raw,
                    ci,
                    voff: d.start,
                    escaped: Some(Escaped {
                        inner: body.clone(),
                        found: d,
                    }),
                }
            })
            .collect()
    }

    /// The occurrence an item of a base64 value makes: a value occurrence of
    /// the decoded text, in a Secret only (elsewhere `data` is no base64),
    /// marked as re-encoded whole; a bare IP address by the one rule, read
    /// in the decoded text.
    fn encoded_occurrence(&self, item: Item, parsed: &mut ParsedDocs) -> Option<Occurrence> {
        let c = &self.candidates[item.ci];
        let (kind, _, _) = self.docs[c.doc].kind_and_path(&c.path);
        if !positions::is_base64_kind(kind) {
            return None;
        }
        let decoded = item.escaped.as_ref()?.found.clone();
        let mut o = self.value_occurrence(item, parsed)?;
        o.encoding = Some(Encoding::Base64);
        // Marked wherever paths are shown: the whole value is re-encoded
        // (or, not canonical, refused).
        let body = &self.input.text[o.escaped.as_ref()?.inner.clone()];
        let how = if embedded::rebind_base64(body, &[]).is_ok() {
            "whole value"
        } else {
            "not canonical: a rebind refuses it"
        };
        let shown = format!("{} (base64, {how})", c.path);
        o.yaml_path = o
            .yaml_path
            .map(|p| p.replacen(&c.path.to_string(), &shown, 1));
        let names_server = o.position.is_some_and(|p| p.accepts_bare_host())
            && endpoint::stands_alone(&c.value, decoded.start..decoded.end);
        if o.kind == Kind::Value && decoded.is_bare_ip() && !names_server {
            o.kind = Kind::Text;
        }
        // A comment of the decoded document is a comment: never rewritten
        // (the value is re-encoded with it as it was), read by this reader.
        if o.kind == Kind::Value && c.decoded_comments.contains(&decoded.start) {
            o.kind = Kind::Comment;
        }
        Some(o)
    }

    /// The cluster-naming siblings of a base64 candidate, decoded (a
    /// Secret's `data.name`).
    fn decoded_siblings(&self, c: &Candidate) -> Option<Vec<(String, String)>> {
        let s = c.frame.and_then(|id| self.siblings.get(&id))?;
        Some(
            s.iter()
                .map(|(k, v)| {
                    let v = embedded::base64_decode(v).unwrap_or_else(|| v.clone());
                    (k.clone(), v)
                })
                .collect(),
        )
    }

    /// Each document's destination, for the tier table.
    fn destinations(&self) -> Vec<Destination> {
        self.docs
            .iter()
            .filter(|d| d.dest_server.is_some() || d.dest_name.is_some())
            .map(|d| Destination {
                resource: d.resource().unwrap_or_default(),
                server: d.dest_server.clone(),
                name: d.dest_name.clone(),
                from: None,
            })
            .collect()
    }
}

/// A piece of endpoint text tied to a candidate scalar: the raw find (its
/// bytes in the file), the candidate, where it sits in the scalar's value,
/// and how it reads through escapes.
struct Item {
    f: Found,
    ci: usize,
    voff: usize,
    escaped: Option<Escaped>,
}

/// Embedded documents parsed so far, by candidate (`usize::MAX`: the file).
type ParsedDocs = HashMap<usize, Option<embedded::Parsed>>;

/// Where the endpoint text `f` (raw, inside candidate `c`'s source span)
/// sits in the scalar's value, at or after `cursor`; `None` when it is not
/// in the value (a comment after the scalar). The same text can sit in the
/// value where it is no endpoint (`https://h.comhttps://h.com`: only the
/// second is one), so a plain search is the last resort:
/// 1. where the raw offset says, when the value reads as the raw text up to
///    it (a one-line plain or quoted scalar);
/// 2. else the first endpoint found in the value itself, by the same rules
///    as in the raw text, that reads the same, no longer and no shorter, and
///    is as bare (`in_value` caches them);
/// 3. else the first match of the text.
fn value_offset(
    text: &str,
    c: &Candidate,
    f: &Found,
    cursor: usize,
    hosts: &[String],
    in_value: &mut Option<Vec<Found>>,
) -> Option<usize> {
    let lit = &text[f.start..f.end];
    let at = |p: usize| p >= cursor && c.value.get(p..p + lit.len()) == Some(lit);
    // Exact only where the value reads as the raw text up to the endpoint
    // (no line folded, no quote doubled, no escape on the way).
    let quoted = matches!(text.as_bytes().get(c.start), Some(b'"' | b'\''));
    let content = c.start + usize::from(quoted);
    if let Some(p) = f.start.checked_sub(content) {
        if c.value.get(..p) == text.get(content..f.start) && at(p) {
            return Some(p);
        }
    }
    let finds = in_value.get_or_insert_with(|| endpoint::find_in_decoded(&c.value, hosts));
    let same = |v: &&Found| v.bare == f.bare && v.end - v.start == lit.len() && at(v.start);
    if let Some(v) = finds.iter().find(same) {
        return Some(v.start);
    }
    // Only where the value holds that host's endpoint there: raw text that
    // reads as one but is none in the value (a comment after a scalar
    // holding `https://hhttps://...`, a longer host) is not the scalar's.
    // A bare host given by key (`"serverName": "cp"`) is found by its key.
    c.value
        .get(cursor..)
        .and_then(|v| v.find(lit))
        .map(|p| cursor + p)
        .filter(|&p| {
            let here = |v: &Found| v.start == p && endpoint::same_host(&v.host, &f.host);
            finds.iter().any(here) || (f.bare && embedded::bare_hosts(&c.value).iter().any(here))
        })
}

static OPENSHIFT_PORT: Needle = Needle::new(":6443");
static RANCHER: Needle = Needle::new(endpoint::RANCHER_PREFIX);

/// What the manifest says around an endpoint, for naming its cluster.
struct Hints<'a> {
    position: Option<Position>,
    kind: Option<&'a str>,
    /// The scalar holding the endpoint (a block string may say `clusterName:`).
    value: &'a str,
    /// Naming scalars of the mapping holding it, and of the mapping above.
    siblings: Option<&'a Vec<(String, String)>>,
    parent: Option<&'a Vec<(String, String)>>,
    /// The key of a ConfigMap `data` entry holding it.
    own_key: Option<&'a str>,
}

/// `name` as a cluster name, unless it holds a URL, a host, a port, a path
/// or a template (`api-ocp4-dev-lab-example-com:6443`, `{{.name}}`). An EKS
/// ARN gives the name after `cluster/`.
fn usable_name(name: &str) -> Option<String> {
    let n = name.trim();
    let n = match n.strip_prefix("arn:") {
        Some(_) => n.rsplit_once(":cluster/").map_or(n, |(_, c)| c),
        None => n,
    };
    let ok = !n.is_empty()
        && n.len() <= 253
        && !n.contains("{{")
        && !n.contains([':', '/', '.', '\n', '\r'])
        && n.chars().any(char::is_alphanumeric);
    ok.then(|| n.to_string())
}

/// The best name for the cluster of an occurrence (see [`HintSource`]);
/// `app` is the Application document when the endpoint is its destination.
fn best_hint(h: &Hints, app: Option<&Doc>, found: &Found) -> Option<(String, HintSource)> {
    manifest_hint(h)
        .map(|n| (n, HintSource::Manifest))
        .or_else(|| {
            app.and_then(application_hint)
                .map(|n| (n, HintSource::Application))
        })
        .or_else(|| host_hint(found).map(|n| (n, HintSource::Host)))
}

fn manifest_hint(h: &Hints) -> Option<String> {
    let sib = |set: Option<&Vec<(String, String)>>, key: &str| {
        set.and_then(|s| s.iter().find(|(k, _)| k == key))
            .and_then(|(_, v)| usable_name(v))
    };
    let s = h.siblings;
    // `name` names the cluster only where the table says so (in Helm
    // `parameters` it names the parameter), or in a file with no `kind`
    // (an inventory: `{name: eks-tokyo, server: https://...}`).
    let name_ok = h
        .position
        .map_or(h.kind.is_none(), |p| p.sibling_name_is_cluster());
    let env_ok = h.position.is_some_and(|p| p.sibling_env_is_cluster());
    let [cluster, cluster_name] = positions::CLUSTER_NAME_KEYS;
    let [env, environment] = positions::ENV_KEYS;
    if let Some(v) = sib(s, cluster)
        .or_else(|| sib(s, cluster_name))
        .or_else(|| {
            if name_ok {
                sib(s, positions::NAME_KEY)
            } else {
                None
            }
        })
        .or_else(|| {
            if env_ok {
                sib(s, env).or_else(|| sib(s, environment))
            } else {
                None
            }
        })
    {
        return Some(v);
    }
    if h.position == Some(Position::Kubeconfig) {
        if let Some(v) = sib(h.parent, positions::NAME_KEY) {
            return Some(v);
        }
    }
    if let Some(v) = h.value.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(positions::NAME_LINE_KEY)?;
        usable_name(rest.split('#').next()?.trim().trim_matches(['"', '\'']))
    }) {
        return Some(v);
    }
    // A ConfigMap registry: `downstream-prod: https://...`.
    h.own_key
        .filter(|k| {
            let l = k.to_ascii_lowercase();
            !positions::GENERIC_ENDPOINT_KEY_WORDS
                .iter()
                .any(|g| l.contains(g))
        })
        .and_then(usable_name)
}

/// An Application's name for its destination cluster (see [`HintSource::Application`]).
fn application_hint(doc: &Doc) -> Option<String> {
    if let Some(path) = &doc.source_path {
        let mut parts = path.trim_end_matches('/').rsplit('/');
        if let (Some(env), Some("overlays")) = (parts.next(), parts.next()) {
            let name = match doc.project.as_deref() {
                Some(p) if p != "default" && !env.starts_with(p) => format!("{p}-{env}"),
                _ => env.to_string(),
            };
            return usable_name(&name);
        }
    }
    let name = doc.name.as_deref()?;
    let words: Vec<String> = doc
        .source_words
        .split(|c: char| !c.is_ascii_alphanumeric())
        .chain(doc.project.as_deref())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let tokens: Vec<&str> = name.split('-').collect();
    let skip = tokens
        .iter()
        .take_while(|t| words.iter().any(|w| w == &t.to_ascii_lowercase()))
        .count();
    if skip == 0 || skip == tokens.len() {
        return None;
    }
    usable_name(&tokens[skip..].join("-"))
}

/// A name read off the host (see [`HintSource::Host`]).
fn host_hint(found: &Found) -> Option<String> {
    if endpoint::is_ip(&found.host) {
        return None;
    }
    let host = found.host.to_ascii_lowercase();
    let labels: Vec<&str> = host.split('.').collect();
    if found.shape() == Shape::OpenShift {
        return usable_name(labels.get(1)?);
    }
    if found.shape() != Shape::Other || labels.len() < 2 {
        return None;
    }
    let mut first = labels[0];
    for p in ["k8s-", "kube-", "api-"] {
        first = first.strip_prefix(p).unwrap_or(first);
    }
    for suffix in ["-k8s", "-cp", "-api", "-apiserver", "-control-plane"] {
        first = first.strip_suffix(suffix).unwrap_or(first);
    }
    if matches!(first, "k8s" | "kube" | "api" | "kubernetes" | "cp") {
        return None;
    }
    usable_name(first)
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
    input: Input,
    only: bool,
) -> impl Iterator<Item = (Found, Escaped)> + 'v {
    let hosts = input.hosts;
    let decode = match input.grammar {
        Grammar::Yaml => endpoint::escape_map,
        Grammar::Json => crate::syntax::json::escape_map,
    };
    let decoded = decode(&text[body.clone()]).filter(|d| d.text == value);
    let mut finds = match &decoded {
        Some(_) => endpoint::find_in_decoded(value, hosts),
        None => Vec::new(),
    };
    if only {
        finds.retain(|f| hosts.iter().any(|h| endpoint::same_host(h, &f.host)));
    } else if decoded.is_some() {
        // Bare hosts by key, as in the raw text (`{\"serverName\":\"cp\"}`).
        finds = with_bare_hosts(finds, embedded::bare_hosts(value));
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

/// Whether `at` lies in one of `ranges` (sorted, apart).
fn in_ranges(ranges: &[(usize, usize)], at: usize) -> bool {
    in_ranges_overlap(ranges, at, 1)
}

/// Whether `at..at + len` overlaps one of `ranges` (sorted, apart).
fn in_ranges_overlap(ranges: &[(usize, usize)], at: usize, len: usize) -> bool {
    let first = ranges.partition_point(|&(_, e)| e <= at);
    ranges.get(first).is_some_and(|&(s, _)| s < at + len)
}

/// The one rule for a bare IP address (no scheme) in a value: it names the
/// API server, and is rewritten, only where a bare host does
/// (`tlsClientConfig.serverName`, `tls-server-name`, karpenter's
/// `clusterEndpoint`) and only standing alone there
/// ([`endpoint::stands_alone`]); anywhere else, prose inside such a value
/// included, it is a mention. Anything else passes.
pub fn bare_ip_names_server(o: &Occurrence, text: &str) -> bool {
    let f = o.escaped.as_ref().map_or(&o.found, |e| &e.found);
    if !f.is_bare_ip() || o.encoding.is_some() {
        return true;
    }
    o.position.is_some_and(|p| p.accepts_bare_host())
        && endpoint::stands_alone(text, o.found.start..o.found.end)
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
        assert!(l.masked);
        let kinds: Vec<_> = l.occurrences.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![Kind::Value, Kind::Template]);
    }

    fn values(l: &Located) -> Vec<(String, Option<Position>, Option<String>)> {
        l.occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .map(|o| (o.endpoint.clone(), o.position, o.cluster_hint.clone()))
            .collect()
    }

    #[test]
    fn kustomize_patch_strings_are_located_by_their_own_structure() {
        let t = "kind: Kustomization\npatches:\n  - target: {kind: Application, name: app}\n    patch: |-\n      - op: replace\n        path: /spec/destination/server\n        value: https://10.1.2.3:6443\n      - op: replace\n        path: /spec/source/repoURL\n        value: https://git.example.com/a.git\n  - patch: |\r\n      kind: Application\r\n      spec:\r\n        destination:\r\n          server: https://k8s.example.org:6443\r\n";
        let l = locate_yaml(t, &[], false).unwrap();
        let got = values(&l);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, "https://10.1.2.3:6443");
        assert_eq!(got[0].1, Some(Position::PatchOp));
        assert_eq!(got[1].1, Some(Position::DestinationServer));
        let o = &l.occurrences[0];
        assert_eq!((o.line, o.column), (7, 16));
        assert_eq!(o.yaml_path.as_deref(), Some("patches[0].patch > [0].value"));
    }

    /// A patch file that is a JSON 6902 op list is located in the file
    /// itself: its label is the op's path once (`[1].value.server`), not
    /// the file's path and the same path again.
    #[test]
    fn a_patch_file_of_ops_is_labelled_once() {
        let t = "- op: replace\n  path: /spec/destinations/0/server\n  value: https://10.1.2.3:6443\n- op: add\n  path: /spec/destinations/-\n  value:\n    server: https://k8s.example.org:6443\n";
        let l = locate_yaml(t, &[], false).unwrap();
        let got: Vec<(&str, Option<&str>)> = l
            .occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .map(|o| (o.endpoint.as_str(), o.yaml_path.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("https://10.1.2.3:6443", Some("[0].value")),
                ("https://k8s.example.org:6443", Some("[1].value.server")),
            ]
        );
        assert!(l.occurrences.iter().all(|o| o.position.is_some()));
    }

    #[test]
    fn base64_server_bare_hosts_and_kubeconfig_names() {
        // https://10.8.0.21:6443, name "search-onprem"
        let t = "apiVersion: v1\ndata:\n  name: c2VhcmNoLW9ucHJlbQ==\n  server: \"aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw==\"\nkind: Secret\n";
        let l = locate_yaml(t, &[], false).unwrap();
        let o = &l.occurrences[0];
        assert_eq!(o.encoding, Some(Encoding::Base64));
        assert_eq!(o.endpoint, "https://10.8.0.21:6443");
        assert_eq!((o.line, o.column), (4, 12));
        assert_eq!(o.cluster_hint.as_deref(), Some("search-onprem"));
        assert_eq!(
            &t[o.found.start..o.found.end],
            "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw=="
        );
        let t = "kind: List\nitems:\n- kind: Secret\n  metadata: {name: s}\n  data:\n    server: aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw==\n";
        let l = locate_yaml(t, &[], false).unwrap();
        let o = &l.occurrences[0];
        assert_eq!(o.position, Some(Position::Registration));
        assert_eq!(o.resource.as_deref(), Some("Secret/s"));

        let t = "kind: Config\nclusters:\n- cluster:\n    server: https://127.0.0.1:41337\n    tls-server-name: kind-e2e-control-plane\n    proxy-url: https://proxy.example.com:3128\n  name: kind-e2e\n---\nkind: Cluster\nnetworking:\n  apiServerAddress: 127.0.0.1\n";
        let l = locate_yaml(t, &["127.0.0.1".into()], false).unwrap();
        let got = values(&l);
        let kube = Some(Position::Kubeconfig);
        let name = Some("kind-e2e".to_string());
        assert_eq!(
            got,
            vec![
                ("https://127.0.0.1:41337".into(), kube, name.clone()),
                ("kind-e2e-control-plane".into(), kube, name),
            ]
        );
        let ip = l.occurrences.last().unwrap();
        assert_eq!((ip.endpoint.as_str(), ip.kind), ("127.0.0.1", Kind::Text));
    }

    #[test]
    fn exported_lists_and_last_applied_annotations() {
        let t = "kind: List\nitems:\n- kind: Application\n  metadata:\n    name: api\n    annotations:\n      kubectl.kubernetes.io/last-applied-configuration: |\n        {\"kind\":\"Application\",\"spec\":{\"destination\":{\"server\":\"https://k.example.com:6443\"}}}\n  status:\n    sync:\n      comparedTo:\n        destination:\n          server: https://k.example.com:6443\n";
        let l = locate_yaml(t, &[], false).unwrap();
        let got: Vec<_> = l
            .occurrences
            .iter()
            .map(|o| (o.position, o.resource.clone().unwrap()))
            .collect();
        let r = "Application/api".to_string();
        assert_eq!(
            got,
            vec![
                (Some(Position::DestinationServer), r.clone()),
                (Some(Position::StatusCopy), r)
            ]
        );
    }

    #[test]
    fn parse_error_reports_position_and_endpoints() {
        let t = format!("a: [\nserver: {PROD}\n  - x: : y\n");
        let e = locate_yaml(&t, &[], false).unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        assert_eq!(e.occurrences.len(), 1);
    }
}
