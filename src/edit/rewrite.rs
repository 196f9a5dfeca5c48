//! Planning a rebind: which bytes of which files change from the old endpoint
//! to the new one, the spliced text of each file, and the proof that the
//! spliced file parses to the same events except for the planned scalars.
//!
//! Nothing here touches the disk; `write` does that once every file is verified.

use crate::find::embedded;
use crate::find::locate::bare_ip_names_server;
use crate::find::locate::{self, Encoding, Kind, Occurrence};
use crate::find::proof::Proof;
use crate::syntax::yaml::{parsed_text, template_actions, Events};
use crate::text::endpoint::{self, Endpoint};
use crate::text::splice::{self, Op};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use std::path::PathBuf;
use std::sync::Arc;
use yaml_rust2::parser::Event;

/// A verified rewrite of one file.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub path: PathBuf,
    pub rel: String,
    pub old: Arc<str>,
    pub new: Arc<str>,
    /// The occurrences that are rewritten, in file order.
    pub changes: Vec<Occurrence>,
    /// The repo config (`.rebind.yaml`) updated with the rebind, not a manifest.
    pub is_config: bool,
}

impl FilePlan {
    /// The same file planned back to its old bytes (to undo a write).
    pub fn reversed(&self) -> FilePlan {
        FilePlan {
            old: self.new.clone(),
            new: self.old.clone(),
            ..self.clone()
        }
    }
}

/// An occurrence of the old endpoint that is reported but not rewritten.
#[derive(Debug, Clone)]
pub struct Mention {
    pub rel: String,
    pub occurrence: Occurrence,
    /// Why it is not rewritten, where its kind does not say it.
    pub why: Option<&'static str>,
}

/// Why the old host in a URL of another scheme is not rewritten.
pub const OTHER_SCHEME: &str = "another scheme than https: not the API endpoint; change it by hand if that service moves with the cluster";

/// Why an endpoint behind an embedded document's own escapes is not rewritten.
pub const INNER_ESCAPES: &str = "written with escapes inside a document held in a string, which rebind does not rewrite in place; write it without escapes (or change it by hand)";

/// Why a bare IP address in a value is not rewritten.
pub const BARE_IP: &str = "a bare IP address names the API server only standing alone in a serverName, tls-server-name or clusterEndpoint value";

/// A file that holds the old endpoint but cannot be rewritten safely.
#[derive(Debug, Clone)]
pub struct PlanError {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// Its stable code (one of `output::codes::ALL`).
    pub code: &'static str,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.rel, self.line, self.column, self.message
        )
    }
}

/// Whether an occurrence is the endpoint `from` (see `endpoint::Found::matches`).
/// A template mention names `from` by its host alone: its port or path may
/// be what an action renders (`https://h{{ .x }}:6443`), and it is only
/// reported, never rewritten, so a port cannot make it unseen.
pub fn matches(o: &Occurrence, from: &Endpoint) -> bool {
    if o.kind == Kind::Template {
        return endpoint::same_host(&o.found.host, &from.host);
    }
    o.found.matches(from)
}

/// Whether `o` is a value that reads as the endpoint `e`: what a rebind to
/// `e` leaves behind. A bare IP address in any value counts (a bare DNS
/// host named by `--from` is rewritten in any value; rebound to an IP, it
/// is one the next run finds but does not rewrite), so the same rebind run
/// again is already done.
pub fn holds(o: &Occurrence, e: &Endpoint) -> bool {
    let value = o.kind == Kind::Value || (o.event.is_some() && o.found.is_bare_ip());
    value && o.found.rewritable() && matches(o, e)
}

/// One source's part of a plan: its mentions of `from`, and its file plan
/// or why it cannot be rewritten (`None`: no change in it).
pub fn plan_source(
    src: &crate::find::inventory::Source,
    from: &Endpoint,
    to: &Endpoint,
) -> (Vec<Mention>, Option<Result<FilePlan, PlanError>>) {
    let rel = &src.entry.rel;
    let located = match &src.located {
        Ok(l) => l,
        Err(e) => return unparsed_source(rel, e, from),
    };
    let (changes, mentions) = sort_occurrences(rel, located, &src.text, from);
    if changes.is_empty() {
        return (mentions, None);
    }
    if let Some(o) = changes.iter().find(|o| dot_after_no_name(o, &src.text, to)) {
        let error = PlanError {
            rel: rel.clone(),
            line: o.line,
            column: o.column,
            message: format!(
                "{:?} is followed by a dot (an absolute DNS name's, or a full stop), which after --to {} would follow an IP address or a port and name no host; remove the dot by hand (or end the sentence otherwise) and run rebind again; nothing written",
                o.endpoint,
                to.url()
            ),
            code: "dot-after-endpoint",
        };
        return (mentions, Some(Err(error)));
    }
    let new = match splice(&src.text, &changes, to, located.proof.json) {
        Ok(new) => new,
        Err((line, column, message)) => {
            let error = PlanError {
                rel: rel.clone(),
                line,
                column,
                message,
                code: "escapes-not-rewritable",
            };
            return (mentions, Some(Err(error)));
        }
    };
    let outcome = match verify_inner(located, &src.text, &new, &changes, from, to) {
        Ok(()) => Ok(FilePlan {
            path: src.entry.path.clone(),
            rel: rel.clone(),
            old: Arc::clone(&src.text),
            new: new.into(),
            changes,
            is_config: false,
        }),
        Err(r) => Err(r.error(rel, &changes)),
    };
    (mentions, Some(outcome))
}

/// A file that does not parse: its template mentions of `from` (template
/// text whatever the rest of the file is), and why it is not rewritten if
/// it holds `from` anywhere else.
fn unparsed_source(
    rel: &str,
    e: &locate::ParseError,
    from: &Endpoint,
) -> (Vec<Mention>, Option<Result<FilePlan, PlanError>>) {
    let (templated, other): (Vec<&Occurrence>, Vec<&Occurrence>) = e
        .occurrences
        .iter()
        .filter(|o| matches(o, from))
        .partition(|o| o.kind == Kind::Template);
    let mentions = templated
        .into_iter()
        .map(|o| Mention {
            rel: rel.to_string(),
            occurrence: o.clone(),
            why: None,
        })
        .collect();
    let n = other.len();
    let error = (n > 0).then(|| PlanError {
        rel: rel.to_string(),
        line: e.line,
        column: e.column,
        message: format!(
            "not valid YAML ({}); it holds {n} occurrence(s) of {}, so nothing is rewritten until it is fixed or excluded",
            e.message,
            from.url()
        ),
        code: "invalid-yaml",
    });
    (mentions, error.map(Err))
}

/// A located file's occurrences of `from`: the values to rewrite, and the
/// mentions reported but never rewritten (every reader: YAML, JSON, embedded).
fn sort_occurrences(
    rel: &str,
    located: &locate::Located,
    text: &str,
    from: &Endpoint,
) -> (Vec<Occurrence>, Vec<Mention>) {
    let mut changes = Vec::new();
    let mut mentions = Vec::new();
    for o in located.occurrences.iter().filter(|o| matches(o, from)) {
        let f = o.escaped.as_ref().map_or(&o.found, |e| &e.found);
        let why = if o.kind == Kind::Text && o.event.is_none() && o.yaml_path.is_some() {
            // Only `locate` gives a text occurrence a YAML path without an
            // event: an endpoint behind an embedded document's escapes (an
            // https URL or a bare host; where its spelling cannot be shown,
            // as inside base64, its range is empty).
            Some(INNER_ESCAPES)
        } else if !f.rewritable() || !o.found.rewritable() {
            Some(OTHER_SCHEME)
        } else if o.event.is_some() && !bare_ip_names_server(o, text) {
            Some(BARE_IP)
        } else {
            None
        };
        if o.kind == Kind::Value && why.is_none() {
            changes.push(o.clone());
            continue;
        }
        let mut o = o.clone();
        if o.kind == Kind::Value {
            o.kind = Kind::Text;
        }
        mentions.push(Mention {
            rel: rel.to_string(),
            occurrence: o,
            why,
        });
    }
    (changes, mentions)
}

/// Whether rewriting `o` to `to` would leave a dot after something that
/// is no host name: the old text ends with its host, a dot follows it
/// (`https://h.` at the end of a value reads as the absolute name `h.`),
/// and the new text ends with an IP address, or with a port where the old
/// ended with its host (`10.0.0.2.`, `h:6443.` name no host). A dot that
/// already followed a port stays after the new one.
fn dot_after_no_name(o: &Occurrence, text: &str, to: &Endpoint) -> bool {
    let f = &o.found;
    let old_ends_with_host = f.port.is_none() && f.path.is_empty();
    let (new_ends_with_host, new_ends_with_port) = if f.bare {
        (f.port.is_none(), f.port.is_some())
    } else {
        let tail = to.path.is_empty();
        (tail && to.port.is_none(), tail && to.port.is_some())
    };
    let no_name = (new_ends_with_host && endpoint::is_ip(&to.host))
        || (new_ends_with_port && old_ends_with_host);
    no_name
        && o.encoding.is_none()
        && o.escaped.is_none()
        && text
            .get(f.replace_end..)
            .is_some_and(|a| a.starts_with('.'))
}

/// Replaces each change's scheme-and-authority (or bare host) bytes. A
/// change read through a double-quoted scalar's escapes is rewritten in the
/// scalar's body, in the same quoting style (every change of that scalar at
/// once; by JSON's escape rules when `json`, the file being one that only
/// reads as JSON); where that cannot be done exactly, the change is refused
/// with why.
pub fn splice(
    text: &str,
    changes: &[Occurrence],
    to: &Endpoint,
    json: bool,
) -> Result<String, (usize, usize, String)> {
    let splice_decoded = if json {
        crate::syntax::json::splice_decoded_json
    } else {
        endpoint::splice_decoded
    };
    let mut out = String::with_capacity(text.len() + changes.len() * 8);
    let mut last = 0;
    let mut i = 0;
    while i < changes.len() {
        let o = &changes[i];
        let Some(esc) = &o.escaped else {
            out.push_str(&text[last..o.found.start]);
            out.push_str(&o.found.replacement(to));
            last = o.found.replace_end;
            i += 1;
            continue;
        };
        // Every change in this scalar's body, last first so that decoded
        // offsets stay valid.
        let n = changes[i..]
            .iter()
            .take_while(|c| c.escaped.as_ref().is_some_and(|e| e.inner == esc.inner))
            .count();
        let mut body = text[esc.inner.clone()].to_string();
        if o.encoding == Some(Encoding::Base64) {
            // A whole-value rewrite: the decoded value rebound, encoded again.
            let edits = base64_edits(&changes[i..i + n], to);
            body = embedded::rebind_base64(&body, &edits)
                .map_err(|why| (o.line, o.column, format!("the base64 value {why}")))?;
        }
        for c in changes[i..i + n]
            .iter()
            .filter(|c| c.encoding.is_none())
            .rev()
        {
            let f = &c.escaped.as_ref().expect("taken while escaped").found;
            body = splice_decoded(&body, f.start..f.replace_end, &f.replacement(to))
                .ok_or_else(|| {
                    (
                        c.line,
                        c.column,
                        format!(
                            "the endpoint is written with escapes (as {:?} in a double-quoted string) that cannot be rewritten in place exactly; rewrite that string by hand (or write it without escapes) and run rebind again; nothing written",
                            &text[c.found.start..c.found.end]
                        ),
                    )
                })?;
        }
        out.push_str(&text[last..esc.inner.start]);
        out.push_str(&body);
        last = esc.inner.end;
        i += n;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// The edits a base64 value's changes make to its decoded text.
fn base64_edits(changes: &[Occurrence], to: &Endpoint) -> Vec<(std::ops::Range<usize>, String)> {
    changes
        .iter()
        .filter_map(|c| c.escaped.as_ref())
        .map(|e| (e.found.start..e.found.replace_end, e.found.replacement(to)))
        .collect()
}

/// What a base64 scalar `v` must read after the rewrite: its decoded text
/// with exactly the `planned` ranges rebound, encoded again in the same layout.
fn expected_base64(
    o: &Occurrence,
    v: &str,
    planned: &[&Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<String, Refusal> {
    embedded::reencoded(v, |d| expected_value(d, planned, from, to)).ok_or_else(|| {
        Refusal::At(
            o.line,
            o.column,
            "verification failed: the base64 value does not decode; nothing written".into(),
        )
    })
}

/// What a planned scalar must read after the rewrite: its old value with
/// exactly the planned ranges rebound (an endpoint that locate reports as a
/// mention stays as it is); without ranges, every occurrence of `from`.
fn expected_value(value: &str, planned: &[&Occurrence], from: &Endpoint, to: &Endpoint) -> String {
    let mut ops = Vec::new();
    for o in planned {
        let f = o.escaped.as_ref().map_or(&o.found, |e| &e.found);
        match &o.value_range {
            Some(r) if value.get(r.clone()).is_some() => {
                ops.push(Op::replace(r.clone(), f.replacement(to)))
            }
            _ => return endpoint::rewrite_value(value, from, to),
        }
    }
    splice::apply(value, &ops).unwrap_or_else(|_| endpoint::rewrite_value(value, from, to))
}

/// Parses the spliced text again and checks that every planned scalar now
/// reads as the old value with `from` rebound to `to`, and that every other
/// event (scalars, styles, anchors, tags, structure) is unchanged. A file
/// that reads only as JSON is checked by `jsonfile::verify` against
/// `old_text` instead.
///
/// Whatever the reader, a rewrite that makes two keys of one mapping equal
/// (`https://H:6443` and `https://h:6443`; an old- and a new-keyed entry under
/// `--allow-merge`) is refused, naming both keys: a YAML or JSON reader
/// would keep only one of them.
pub fn verify(
    old: &locate::Located,
    old_text: &str,
    new_text: &str,
    changes: &[Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), String> {
    verify_inner(old, old_text, new_text, changes, from, to).map_err(|r| match r {
        Refusal::Message(m) | Refusal::At(_, _, m) => m,
        Refusal::Keys(c) => c.error("").to_string(),
    })
}

/// Why a rewrite is refused.
enum Refusal {
    Message(String),
    /// At a change's line and column.
    At(usize, usize, String),
    Keys(KeyCollision),
}

impl Refusal {
    /// The refusal as a plan error in `rel` (a bare message is placed at
    /// the first change).
    fn error(self, rel: &str, changes: &[Occurrence]) -> PlanError {
        let (line, column, message) = match self {
            Refusal::Message(m) => (changes[0].line, changes[0].column, m),
            Refusal::At(line, column, m) => (line, column, m),
            Refusal::Keys(c) => return c.error(rel),
        };
        PlanError {
            rel: rel.to_string(),
            line,
            column,
            message,
            code: "cannot-rewrite",
        }
    }
}

/// Two keys of one mapping that a rewrite makes equal.
struct KeyCollision {
    /// Each key as written before the rewrite, with its line and column.
    first: (String, usize, usize),
    second: (String, usize, usize),
    /// What both would read after it.
    both: String,
}

impl KeyCollision {
    /// Located at the first key, naming both as `path:line:column`.
    fn error(&self, rel: &str) -> PlanError {
        let (a, al, ac) = &self.first;
        let (b, bl, bc) = &self.second;
        let at = |l: &usize, c: &usize| {
            if rel.is_empty() {
                format!("{l}:{c}")
            } else {
                format!("{rel}:{l}:{c}")
            }
        };
        PlanError {
            rel: rel.to_string(),
            line: *al,
            column: *ac,
            message: format!(
                "the rewrite would make two keys of one mapping equal: {a:?} ({}) and {b:?} ({}) would both read {:?}, and a YAML or JSON reader keeps only one of them; merge or rename them by hand, then run rebind again; nothing written",
                at(al, ac),
                at(bl, bc),
                self.both
            ),
            code: "key-collision",
        }
    }
}

/// Two keys of one mapping that read the same after a rewrite: their
/// event indexes and the value both read.
type SameKeys = (usize, usize, String);

/// The keys of one mapping being read (see [`Keys`]).
struct KeyFrame {
    is_map: bool,
    expect_key: bool,
    /// Scalar keys: event index, value, byte offset.
    keys: Vec<(usize, String, usize)>,
    /// One of its keys is rewritten.
    touched: bool,
}

/// Follows the mappings of an event stream and finds two keys of one
/// mapping that read the same after a rewrite but did not before.
struct Keys<'a> {
    stack: Vec<KeyFrame>,
    /// The rewritten scalars' old events, by index.
    old: &'a BTreeMap<usize, Event>,
    planned: &'a BTreeSet<usize>,
    /// The first pair found.
    found: Option<SameKeys>,
}

impl<'a> Keys<'a> {
    fn new(old: &'a BTreeMap<usize, Event>, planned: &'a BTreeSet<usize>) -> Keys<'a> {
        Keys {
            stack: Vec::new(),
            old,
            planned,
            found: None,
        }
    }

    /// A node of the current collection is complete.
    fn node_done(&mut self) {
        if let Some(top) = self.stack.last_mut().filter(|f| f.is_map) {
            top.expect_key = !top.expect_key;
        }
    }

    fn event(&mut self, index: usize, ev: &Event, off: usize) {
        match ev {
            Event::MappingStart(..) | Event::SequenceStart(..) => self.stack.push(KeyFrame {
                is_map: matches!(ev, Event::MappingStart(..)),
                expect_key: true,
                keys: Vec::new(),
                touched: false,
            }),
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(f) = self.stack.pop() {
                    if f.touched && self.found.is_none() {
                        self.check(&f);
                    }
                }
                self.node_done();
            }
            Event::Scalar(v, ..) => {
                let planned = self.planned.contains(&index);
                if let Some(top) = self.stack.last_mut().filter(|f| f.is_map && f.expect_key) {
                    top.keys.push((index, v.clone(), off));
                    top.touched |= planned;
                }
                self.node_done();
            }
            Event::Alias(_) => self.node_done(),
            _ => {}
        }
    }

    /// The value key `index` read before the rewrite.
    fn old_value<'v>(&'v self, index: usize, new: &'v str) -> &'v str {
        match self.old.get(&index) {
            Some(Event::Scalar(v, ..)) if self.planned.contains(&index) => v,
            _ => new,
        }
    }

    fn check(&mut self, f: &KeyFrame) {
        let mut by_value: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, (_, v, _)) in f.keys.iter().enumerate() {
            by_value.entry(v.as_str()).or_default().push(k);
        }
        for (i, (ei, vi, _)) in f.keys.iter().enumerate() {
            let Some(same) = by_value.get(vi.as_str()) else {
                continue;
            };
            for &j in same.iter().filter(|&&j| j > i) {
                let (ej, vj, _) = &f.keys[j];
                let touched = self.planned.contains(ei) || self.planned.contains(ej);
                if touched && self.old_value(*ei, vi) != self.old_value(*ej, vj) {
                    self.found = Some((*ei, *ej, vi.clone()));
                    return;
                }
            }
        }
    }
}

/// When a rewrite no longer parses at line `line`: the change that wrote an
/// IPv6 `to` (its brackets, or a bare address's colons) into a plain
/// scalar, on that line if one did, which is the likely cause (in a flow
/// collection, `[`, `]` and `, ` end a plain scalar).
fn bracket_in_plain<'c>(
    old: &Proof,
    changes: &'c [Occurrence],
    to: &Endpoint,
    line: usize,
) -> Option<&'c Occurrence> {
    if !to.host.starts_with('[') {
        return None;
    }
    let plain = |o: &&Occurrence| {
        o.event.and_then(|e| old.held.get(&e)).is_some_and(|ev| {
            matches!(
                ev,
                Event::Scalar(_, yaml_rust2::scanner::TScalarStyle::Plain, ..)
            )
        })
    };
    let mut candidates = changes.iter().filter(plain);
    let first = candidates.clone().next();
    candidates.find(|o| o.line == line).or(first)
}

/// The collision of keys `a` and `b` (event indexes of the old text's
/// stream), located in the old text (parsed again: this is rare).
fn keys_collide(old_text: &str, masked: bool, a: usize, b: usize, both: String) -> KeyCollision {
    let index = crate::syntax::yaml::LineIndex::new(old_text);
    let src = parsed_text(old_text, masked);
    let mut found: HashMap<usize, (String, usize)> = HashMap::new();
    for (i, item) in Events::new(&src).enumerate().take(a.max(b) + 1) {
        if let (true, Ok((Event::Scalar(v, ..), off))) = (i == a || i == b, item) {
            found.insert(i, (v, off));
        }
    }
    let key = |i: usize| match found.get(&i) {
        Some((v, off)) => {
            let (l, c) = index.position(old_text, *off);
            (v.clone(), l, c)
        }
        None => (String::new(), 0, 0),
    };
    KeyCollision {
        first: key(a),
        second: key(b),
        both,
    }
}

/// [`Keys`] for a file that reads only as JSON: object members by their
/// object's path.
fn json_key_collision(old_text: &str, new_text: &str) -> Option<KeyCollision> {
    let old = crate::syntax::json::tokenize(old_text).ok()?;
    let new = crate::syntax::json::tokenize(new_text).ok()?;
    if old.tokens.len() != new.tokens.len() {
        return None; // the byte-for-byte check names what differs
    }
    let mut objects: HashMap<Vec<crate::syntax::json::Seg>, HashMap<&str, usize>> = HashMap::new();
    for (i, t) in new.tokens.iter().enumerate() {
        let (true, Some(v)) = (t.is_key(), t.str_value()) else {
            continue;
        };
        let mut path = new.path(t);
        path.pop();
        let seen = objects.entry(path).or_default();
        match seen.get(v) {
            Some(&j) if old.tokens[i].str_value() != old.tokens[j].str_value() => {
                let key = |k: usize| {
                    let t = &old.tokens[k];
                    let (l, c) = crate::syntax::json::position(old_text, t.range.start);
                    (t.str_value().unwrap_or_default().to_string(), l, c)
                };
                return Some(KeyCollision {
                    first: key(j),
                    second: key(i),
                    both: v.to_string(),
                });
            }
            Some(_) => {}
            None => {
                seen.insert(v, i);
            }
        }
    }
    None
}

fn verify_inner(
    old: &locate::Located,
    old_text: &str,
    new_text: &str,
    changes: &[Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), Refusal> {
    same_actions(old_text, new_text)?;
    if old.proof.json {
        if let Some(c) = json_key_collision(old_text, new_text) {
            return Err(Refusal::Keys(c));
        }
        return crate::find::jsonfile::verify(old_text, new_text, changes, from, to)
            .map_err(Refusal::Message);
    }
    let planned = Planned::of(changes);
    let old = &old.proof;
    let (new, collision) = reparse(old, new_text, changes, to, &planned)?;
    if new.event_count != old.event_count {
        return Err(Refusal::Message(format!(
            "the rewritten file has {} parser events instead of {}; nothing written",
            new.event_count, old.event_count
        )));
    }
    if let Some((a, b, both)) = collision {
        return Err(Refusal::Keys(keys_collide(
            old_text, old.masked, a, b, both,
        )));
    }
    if new.digest != old.digest {
        return Err(Refusal::Message(
            "verification failed: something besides the planned scalars changed; nothing written"
                .into(),
        ));
    }
    check_held(old, &new.held, &planned, from, to)
}

/// Checks that the rewrite left every template action as it was: the same
/// actions, by the one rule that finds them ([`template_actions`]), with the
/// same text. Endpoint text inside an action is a mention, never a change.
fn same_actions(old_text: &str, new_text: &str) -> Result<(), Refusal> {
    let (old, new) = (template_actions(old_text), template_actions(new_text));
    let text = |t: &'_ str, &(s, e): &(usize, usize)| t[s..e].to_string();
    let differs = old
        .iter()
        .zip(&new)
        .find(|(a, b)| old_text[a.0..a.1] != new_text[b.0..b.1]);
    if old.len() == new.len() && differs.is_none() {
        return Ok(());
    }
    let (at, what) = match differs {
        Some((a, b)) => (
            a.0,
            format!("{:?} became {:?}", text(old_text, a), text(new_text, b)),
        ),
        None => (
            old.get(new.len()).map_or(0, |a| a.0),
            format!("{} actions became {}", old.len(), new.len()),
        ),
    };
    let (line, column) = crate::syntax::yaml::LineIndex::new(old_text).position(old_text, at);
    Err(Refusal::At(
        line,
        column,
        format!("verification failed: the rewrite changed a template action ({what}); template actions are never rewritten; nothing written"),
    ))
}

/// A file's planned changes by the parser event of their scalar.
struct Planned<'c> {
    /// One change of each scalar (where it is reported).
    by_event: BTreeMap<usize, &'c Occurrence>,
    /// Every change of each scalar (the ranges rebound in its value).
    ranges: BTreeMap<usize, Vec<&'c Occurrence>>,
}

impl<'c> Planned<'c> {
    fn of(changes: &'c [Occurrence]) -> Planned<'c> {
        let by_event = changes
            .iter()
            .filter_map(|o| o.event.map(|e| (e, o)))
            .collect();
        let mut ranges: BTreeMap<usize, Vec<&Occurrence>> = BTreeMap::new();
        for o in changes {
            if let Some(e) = o.event {
                ranges.entry(e).or_default().push(o);
            }
        }
        Planned { by_event, ranges }
    }

    fn events(&self) -> BTreeSet<usize> {
        self.by_event.keys().copied().collect()
    }
}

/// The proof of the rewritten text, read as the old one was (masked when
/// it was), holding the same events; and the first two keys of one
/// mapping that the rewrite makes equal (event indexes, the value both read).
fn reparse(
    old: &Proof,
    new_text: &str,
    changes: &[Occurrence],
    to: &Endpoint,
    planned: &Planned,
) -> Result<(Proof, Option<SameKeys>), Refusal> {
    // Every scalar that may hold an endpoint is compared whole; the rest by
    // digest. The same pass follows each mapping's keys.
    let planned_set = planned.events();
    let mut keys = Keys::new(&old.held, &planned_set);
    let mut new = Proof::new(old.masked);
    let src = parsed_text(new_text, old.masked);
    for (i, item) in Events::new(&src).enumerate() {
        let (ev, off) = item.map_err(|failure| unparsable(old, changes, to, failure))?;
        keys.event(i, &ev, off);
        let hold = old.held.contains_key(&i);
        new.observe(i, ev, hold);
    }
    Ok((new, keys.found.take()))
}

/// Why a rewritten file that no longer parses is refused.
fn unparsable(
    old: &Proof,
    changes: &[Occurrence],
    to: &Endpoint,
    (l, c, m): crate::syntax::yaml::ParseFailure,
) -> Refusal {
    let e = format!("{l}:{c}: {m}");
    match bracket_in_plain(old, changes, to, l) {
        Some(o) => Refusal::At(o.line, o.column, format!(
            "the rewritten file would no longer parse ({e}): the new endpoint {} holds '[', ']' or ':': a plain (unquoted) value may not start with '[', and inside a flow collection ({{...}} or [...]) they end it; quote that value in the file (\"{}\") and run rebind again; nothing written",
            to.url(),
            o.endpoint
        )),
        None => Refusal::Message(format!(
            "the rewritten file no longer parses ({e}); nothing written"
        )),
    }
}

/// Checks each held scalar of the rewritten file: a planned one reads as
/// its old value rebound (a base64 one decodes so), any other is unchanged;
/// a planned string that is a document of its own keeps its keys apart.
fn check_held(
    old: &Proof,
    new_held: &BTreeMap<usize, Event>,
    planned: &Planned,
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), Refusal> {
    for (i, before) in &old.held {
        let o = planned.by_event.get(i).copied();
        let after = new_held.get(i);
        let ranges = planned.ranges.get(i).map_or(&[][..], |r| &r[..]);
        let expected = expected_event(before, o, ranges, from, to)?;
        if after != Some(&expected) {
            let at = o
                .map(|o| format!(" at {}:{}", o.line, o.column))
                .unwrap_or_default();
            return Err(Refusal::Message(format!(
                "verification failed{at}: expected {expected:?} after the rewrite, found {after:?}; nothing written"
            )));
        }
        if let (Some(o), Event::Scalar(v, ..), Some(Event::Scalar(nv, ..))) = (o, before, after) {
            inner_document(v, nv, o, to)?;
        }
    }
    Ok(())
}

/// A planned string that is a document of its own (Helm `values: |`, a
/// Secret's `config` or decoded `data.kubeconfig`, a kustomize patch),
/// decoded first when it is base64, and parsed once before and once after:
/// if it parsed before, it must parse after into as many events (an IPv6
/// `--to` in a plain value of its flow collection would break it as it
/// would break the file itself), and no two of its keys may become equal.
fn inner_document(v: &str, nv: &str, o: &Occurrence, to: &Endpoint) -> Result<(), Refusal> {
    let decoded;
    let (old, new) = match o.encoding {
        Some(Encoding::Base64) => {
            match (embedded::decoded_value(v), embedded::decoded_value(nv)) {
                (Some(a), Some(b)) => decoded = (a, b),
                _ => return Ok(()),
            }
            (decoded.0.as_str(), decoded.1.as_str())
        }
        None => (v, nv),
    };
    if !embedded::looks_embedded(old) {
        return Ok(());
    }
    let events = |t: &str| Events::new(t).collect::<Result<Vec<(Event, usize)>, _>>();
    let Ok(before) = events(old) else {
        return Ok(());
    };
    let why = match events(new) {
        Ok(after) if after.len() == before.len() => {
            return match inner_key_collision(old, &before, &after, o) {
                Some(c) => Err(Refusal::Keys(c)),
                None => Ok(()),
            };
        }
        Ok(after) => format!("{} parser events instead of {}", after.len(), before.len()),
        Err((l, c, m)) => format!("{l}:{c} of the document: {m}"),
    };
    let hint = if to.host.starts_with('[') {
        format!(
            ": the new endpoint {} holds '[', ']' or ':', which a plain (unquoted) value may not start with or, inside a flow collection, hold; quote that value in the document held in this string (\"{}\") and run rebind again",
            to.url(),
            o.endpoint
        )
    } else {
        String::new()
    };
    Err(Refusal::At(
        o.line,
        o.column,
        format!("the document held in this string would no longer parse after the rewrite ({why}){hint}; nothing written"),
    ))
}

/// What the held event `before` must read after the rewrite: rebound where
/// `o` plans a change (`ranges` are all of that scalar's changes),
/// unchanged elsewhere. A base64 value must decode to its old decoded text
/// with exactly the planned ranges rebound, encoded in the same layout.
fn expected_event(
    before: &Event,
    o: Option<&Occurrence>,
    ranges: &[&Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<Event, Refusal> {
    let (Some(o), Event::Scalar(v, style, anchor, tag)) = (o, before) else {
        return Ok(before.clone());
    };
    let value = if o.encoding == Some(Encoding::Base64) {
        expected_base64(o, v, ranges, from, to)?
    } else {
        expected_value(v, ranges, from, to)
    };
    Ok(Event::Scalar(value, *style, *anchor, tag.clone()))
}

/// Two keys of one mapping inside the string `old` (a YAML or JSON
/// document, parsed as `before`) that read the same `after` the rewrite
/// (as many events) but did not before. Each key is
/// placed in the file by the string's own lines and columns, shifted to
/// where the occurrence `o` sits (exact for a block scalar and a one-line
/// string).
fn inner_key_collision(
    old: &str,
    before: &[(Event, usize)],
    after: &[(Event, usize)],
    o: &Occurrence,
) -> Option<KeyCollision> {
    let mut old_scalars = BTreeMap::new();
    let mut changed = BTreeSet::new();
    for (i, ((b, _), (a, _))) in before.iter().zip(after).enumerate() {
        if let Event::Scalar(bv, ..) = b {
            old_scalars.insert(i, b.clone());
            if !matches!(a, Event::Scalar(av, ..) if av == bv) {
                changed.insert(i);
            }
        }
    }
    if changed.is_empty() {
        return None;
    }
    let mut keys = Keys::new(&old_scalars, &changed);
    for (i, (ev, off)) in after.iter().enumerate() {
        keys.event(i, ev, *off);
    }
    let (a, b, both) = keys.found?;
    // Where the occurrence sits in the string, and in the file.
    let at = o.value_range.as_ref().map_or(0, |r| r.start).min(old.len());
    let line_of = |off: usize| old[..off].matches('\n').count();
    let col_of = |off: usize| {
        old[..off]
            .rsplit('\n')
            .next()
            .map_or(0, |l| l.chars().count())
    };
    let (oline, ocol) = (line_of(at), col_of(at));
    let key = |i: usize| {
        let (Event::Scalar(v, ..), off) = &before[i] else {
            return (String::new(), o.line, o.column);
        };
        let off = (*off).min(old.len());
        let shift = |file: usize, inner: usize, at: usize| {
            (file as isize + inner as isize - at as isize).max(1) as usize
        };
        (
            v.clone(),
            shift(o.line, line_of(off), oline),
            shift(o.column, col_of(off), ocol),
        )
    };
    Some(KeyCollision {
        first: key(a),
        second: key(b),
        both,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "https://old.example.com";

    /// The verifier reads a file's template actions by the locator's rule
    /// and refuses a rewrite that touched one, even where the parser never
    /// sees it (the file parses only with its actions masked).
    #[test]
    fn a_rewritten_action_is_refused() {
        let from = Endpoint::parse("--from", OLD).unwrap();
        let to = Endpoint::parse("--to", "https://new.example.com").unwrap();
        let old = format!(
            "{{{{- if .Values.on }}}}\nkind: Application\nspec:\n  destination:\n    server: {OLD}\n    name: {{{{ default \"{OLD}\" .x }}}}\n{{{{- end }}}}\n"
        );
        let located = locate::locate_yaml(&old, &["old.example.com".into()], true).unwrap();
        assert!(located.proof.masked);
        let changes: Vec<Occurrence> = located
            .occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .cloned()
            .collect();
        assert_eq!(changes.len(), 1);
        let right = splice(&old, &changes, &to, false).unwrap();
        assert!(verify(&located, &old, &right, &changes, &from, &to).is_ok());
        let wrong = right.replace(OLD, "https://new.example.com");
        let refused = verify(&located, &old, &wrong, &changes, &from, &to).unwrap_err();
        assert!(refused.contains("changed a template action"), "{refused}");
    }
}
