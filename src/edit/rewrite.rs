//! Planning a rebind: which bytes of which files change from the old endpoint
//! to the new one, the spliced text of each file, and the proof that the
//! spliced file parses to the same events except for the planned scalars.
//!
//! Nothing here touches the disk; `write` does that once every file is verified.

use crate::edit::verify::{self, Collision, Expect, Mismatch};
use crate::find::embedded;
use crate::find::locate::bare_ip_names_server;
use crate::find::locate::{self, Encoding, Kind, Occurrence};
use crate::model::config::{self, Config, Planned};
use crate::syntax::yaml::{read_documents, read_maybe_masked, template_actions, Value};
use crate::text::endpoint::{self, Endpoint};
use crate::text::splice::{self, Op};
use std::collections::BTreeMap;
use std::fmt;

use std::path::PathBuf;
use std::sync::Arc;

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

/// The config with cluster `name` moved to `to` ([`config::rebound`]),
/// verified: read again, it differs by exactly the planned changes.
pub fn config_plan(cfg: &Config, name: &str, to: &Endpoint) -> anyhow::Result<FilePlan> {
    let update = config::rebound(cfg, name, to)?;
    let p = cfg.path.display();
    let new = splice::apply(&cfg.text, &update.ops).map_err(|e| anyhow::anyhow!("{p}: {e}"))?;
    verify::verify(&cfg.text, &new, &config_expect(update.planned)).map_err(|m| {
        anyhow::anyhow!(
            "{p}: the updated config does not read back as planned ({m}); edit it by hand"
        )
    })?;
    Ok(FilePlan {
        path: cfg.path.clone(),
        rel: crate::discover::walk::display_path(&cfg.path),
        old: cfg.text.as_str().into(),
        new: new.into(),
        changes: Vec::new(),
        is_config: true,
    })
}

/// A config update's planned changes as the verification's expectations.
fn config_expect(planned: Vec<Planned>) -> Vec<Expect<'static>> {
    let constant = |v: String| -> verify::ScalarRule { Box::new(move |_| Ok(v.clone())) };
    (planned.into_iter())
        .map(|c| match c {
            Planned::Scalar { at, value } => Expect::Scalar {
                at,
                rule: constant(value),
            },
            Planned::Remove { at } => Expect::Remove { at },
            Planned::Insert { after, item } => Expect::Insert {
                after,
                rule: Box::new(move |_| item.clone()),
            },
            Planned::Entry { after, key, value } => Expect::Entry { after, key, value },
        })
        .collect()
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
    let new = match splice(&src.text, &changes, to, located.json) {
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
    let outcome = match verify_inner(&src.text, &new, &changes, from, to) {
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
    let mut ops = Vec::with_capacity(changes.len());
    let mut i = 0;
    while i < changes.len() {
        let o = &changes[i];
        let Some(esc) = &o.escaped else {
            let f = &o.found;
            ops.push(Op::replace(f.start..f.replace_end, f.replacement(to)));
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
        ops.push(Op::replace(esc.inner.clone(), body));
        i += n;
    }
    splice::apply(text, &ops).map_err(|e| {
        let o = &changes[0];
        (o.line, o.column, format!("{e}; nothing written"))
    })
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
    v: &str,
    planned: &[&Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<String, String> {
    embedded::reencoded(v, |d| expected_value(d, planned, from, to))
        .ok_or_else(|| "the base64 value does not decode".into())
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

/// Why a rewrite is refused.
enum Refusal {
    Message(String),
    /// At a change's line and column.
    At(usize, usize, String),
    Keys(Collision),
}

impl Refusal {
    /// The refusal as a plan error in `rel` (a bare message is placed at
    /// the first change).
    fn error(self, rel: &str, changes: &[Occurrence]) -> PlanError {
        let (line, column, message) = match self {
            Refusal::Message(m) => (changes[0].line, changes[0].column, m),
            Refusal::At(line, column, m) => (line, column, m),
            Refusal::Keys(c) => return collision_error(&c, rel),
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

/// Two keys of one mapping that a rewrite makes equal, located at the
/// first key, naming both as `path:line:column`.
fn collision_error(c: &Collision, rel: &str) -> PlanError {
    let (a, al, ac) = &c.first;
    let (b, bl, bc) = &c.second;
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
            c.both
        ),
        code: "key-collision",
    }
}

/// When a rewrite no longer parses at line `line`: the change that wrote an
/// IPv6 `to` (its brackets, or a bare address's colons) into a plain
/// scalar of `old_text`, on that line if one did, which is the likely cause
/// (in a flow collection, `[`, `]` and `, ` end a plain scalar).
fn bracket_in_plain<'c>(
    old_text: &str,
    changes: &'c [Occurrence],
    to: &Endpoint,
    line: usize,
) -> Option<&'c Occurrence> {
    if !to.host.starts_with('[') {
        return None;
    }
    let (docs, _) = read_maybe_masked(old_text).ok()?;
    let scalars = verify::scalars(&docs);
    let plain = |o: &&Occurrence| {
        verify::holding(&scalars, expect_at(o)).is_some_and(|n| {
            matches!(
                n.value,
                Value::Scalar(_, yaml_rust2::scanner::TScalarStyle::Plain)
            )
        })
    };
    let mut candidates = changes.iter().filter(plain);
    let first = candidates.clone().next();
    candidates.find(|o| o.line == line).or(first)
}

/// The rewrite as operations of the edit engine, checked by its one
/// verification: every planned scalar reads as its old value rebound (a
/// base64 one decodes so), nothing else changed; template actions are the
/// same; a planned string that is a document of its own still parses and
/// keeps its keys apart.
fn verify_inner(
    old_text: &str,
    new_text: &str,
    changes: &[Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), Refusal> {
    same_actions(old_text, new_text)?;
    // One expectation per planned scalar, with every change of it.
    let mut scalars: BTreeMap<usize, Vec<&Occurrence>> = BTreeMap::new();
    for o in changes {
        let at = expect_at(o);
        scalars.entry(o.event.unwrap_or(at)).or_default().push(o);
    }
    let expect: Vec<Expect> = scalars
        .values()
        .map(|ranges| {
            let o = ranges[0];
            let rule: verify::ScalarRule = if o.encoding == Some(Encoding::Base64) {
                Box::new(move |v| expected_base64(v, ranges, from, to))
            } else {
                Box::new(move |v| Ok(expected_value(v, ranges, from, to)))
            };
            Expect::Scalar {
                at: expect_at(o),
                rule,
            }
        })
        .collect();
    let changed = verify::verify(old_text, new_text, &expect).map_err(|m| match m {
        Mismatch::Unparsable(f) => unparsable(old_text, changes, to, f),
        Mismatch::Keys(c) => Refusal::Keys(c),
        Mismatch::At(line, column, m) => Refusal::At(
            line,
            column,
            format!("verification failed: {m}; nothing written"),
        ),
    })?;
    for ranges in scalars.values() {
        let (o, at) = (ranges[0], expect_at(ranges[0]));
        let i = changed.partition_point(|c| c.start <= at);
        if let Some(c) = i.checked_sub(1).map(|i| &changed[i]) {
            inner_document(&c.old, &c.new, o, to)?;
        }
    }
    Ok(())
}

/// Where a change's scalar is looked up: its body, for one read through escapes.
fn expect_at(o: &Occurrence) -> usize {
    o.escaped.as_ref().map_or(o.found.start, |e| e.inner.start)
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

/// Why a rewritten file that no longer parses is refused.
fn unparsable(
    old_text: &str,
    changes: &[Occurrence],
    to: &Endpoint,
    (l, c, m): crate::syntax::yaml::ParseFailure,
) -> Refusal {
    let e = format!("{l}:{c}: {m}");
    match bracket_in_plain(old_text, changes, to, l) {
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

/// A planned string that is a document of its own (Helm `values: |`, a
/// Secret's `config` or decoded `data.kubeconfig`, a kustomize patch),
/// decoded first when it is base64, and read once before and once after:
/// if it parsed before, it must parse after into the same shape (an IPv6
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
    let Ok(before) = read_documents(old) else {
        return Ok(());
    };
    let why = match read_documents(new).map(|after| verify::collision(&before, &after)) {
        Ok(Ok(None)) => return Ok(()),
        Ok(Ok(Some(c))) => return Err(Refusal::Keys(shifted(c, old, o))),
        Ok(Err(verify::ShapeChanged)) => "its structure changed".to_string(),
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

/// A collision of keys inside the string `old`, each key placed in the
/// file by the string's own lines and columns, shifted to where the
/// occurrence `o` sits (exact for a block scalar and a one-line string).
fn shifted(mut c: Collision, old: &str, o: &Occurrence) -> Collision {
    let at = o.value_range.as_ref().map_or(0, |r| r.start).min(old.len());
    let oline = old[..at].matches('\n').count() + 1;
    let ocol = old[..at]
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count())
        + 1;
    let shift = |file: usize, inner: usize, at: usize| (file + inner).saturating_sub(at).max(1);
    for k in [&mut c.first, &mut c.second] {
        (k.1, k.2) = (shift(o.line, k.1, oline), shift(o.column, k.2, ocol));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "https://0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";
    const B: &str = "https://fedcba9876543210fedcba9876543210.gr7.ap-northeast-2.eks.amazonaws.com";

    fn config(text: &str) -> Config {
        config::parse(std::path::Path::new(".rebind.yaml"), text).unwrap()
    }

    /// Every shape of config update (a `retired` list in flow or block
    /// style, empty, ending in `--to`, holding it in the middle, or no list
    /// at all) verifies, and reads back as planned: `prod` at B, A last of
    /// its `retired`, B no longer there, `stage` as it was.
    #[test]
    fn config_updates_of_every_shape_verify() {
        let x = "https://x.example.com";
        let stage = "  stage:\n    endpoint: https://y.example.com\n";
        let cases = [
            format!("clusters:\n  prod:\n    endpoint: {A}  # now\n    retired: []\n{stage}"),
            format!("clusters:\n  prod:\n    endpoint: \"{A}\"\n    retired: [{x}]\n{stage}"),
            format!("clusters:\r\n  prod:\r\n    endpoint: {A}\r\n    retired:\r\n      - {x}\r\n    expect: {{files: 1}}\r\n"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n    expect: {{files: 1}}\n{stage}"),
            format!("clusters:\n  prod: {{expect: {{files: 1}}, endpoint: {A}}}\n{stage}"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, '{B}', https://y.example.com]  # history\n"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n    retired:\n      - {B}  # first\n      - {x}\n"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, \"{B}\"]\n"),
        ];
        let to = Endpoint::parse("--to", B).unwrap();
        for before in cases {
            let c = config(&before);
            let plan = config_plan(&c, "prod", &to).unwrap_or_else(|e| panic!("{before}: {e:#}"));
            let after = config(&plan.new);
            let (old, new) = (&c.clusters[0], &after.clusters[0]);
            assert_eq!(new.endpoint.url(), B, "{}", plan.new);
            let mut want: Vec<_> = old.retired.iter().filter(|e| e.url() != B).collect();
            want.push(&old.endpoint);
            assert_eq!(new.retired.iter().collect::<Vec<_>>(), want, "{}", plan.new);
            assert_eq!(
                after.clusters.get(1).map(|c| &c.endpoint),
                c.clusters.get(1).map(|c| &c.endpoint)
            );
        }
    }

    /// A config update that changes anything besides its plan is refused:
    /// a neighbouring key, a scalar beside a comment, the new `retired`
    /// entry under another key, with another value or twice, the old
    /// endpoint appended elsewhere, the rollback's removal left out.
    #[test]
    fn a_config_update_that_changes_anything_else_is_refused() {
        let to = Endpoint::parse("--to", B).unwrap();
        let check = |before: &str, tamper: &dyn Fn(&str) -> String| {
            let c = config(before);
            let update = config::rebound(&c, "prod", &to).unwrap();
            let right = splice::apply(&c.text, &update.ops).unwrap();
            let expect = || config_expect(update.planned.clone());
            verify::verify(&c.text, &right, &expect()).unwrap();
            let wrong = tamper(&right);
            assert_ne!(wrong, right);
            assert!(
                verify::verify(&c.text, &wrong, &expect()).is_err(),
                "{wrong}"
            );
        };
        let block = format!("clusters:\n  prod:\n    endpoint: {A}  # now\n    expect: {{files: 1}}\n  stage:\n    endpoint: https://y.example.com\n");
        let tampers: [&dyn Fn(&str) -> String; 7] = [
            &|t| t.replace("y.example.com", "z.example.com"),
            &|t| t.replace("files: 1", "files: 2"),
            &|t| t.replace("  # now", "# now"),
            &|t| t.replace("retired:", "retire:"),
            &|t| t.replace(&format!("[{A}]"), "[https://x.example.com]"),
            &|t| t.replace(&format!("[{A}]"), &format!("[{A}, {A}]")),
            &|t| t.replace("  stage:", &format!("    retired: [{A}]\n  stage:")),
        ];
        for tamper in tampers {
            check(&block, tamper);
        }
        let x = "https://x.example.com";
        let flow = format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, {B}, https://y.example.com]  # history\n");
        check(&flow, &|t| {
            t.replace(&format!("[{x}, "), &format!("[{A}, {x}, "))
                .replace(&format!(", {A}]"), "]")
        });
        check(&flow, &|t| {
            t.replace(&format!("[{x}, "), &format!("[{x}, {B}, "))
        });
        check(&flow, &|t| t.replace("  # history", "# history"));
        let empty = format!("clusters:\n  prod: {{endpoint: {A}, retired: []}}\n");
        check(&empty, &|t| {
            t.replace(&format!("[{A}]"), &format!("[{A}, {A}]"))
        });
        check(&empty, &|t| {
            t.replace(&format!("[{A}]"), &format!("['{B}']"))
        });
    }

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
        assert!(located.masked);
        let changes: Vec<Occurrence> = located
            .occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .cloned()
            .collect();
        assert_eq!(changes.len(), 1);
        let right = splice(&old, &changes, &to, false).unwrap();
        assert!(verify_inner(&old, &right, &changes, &from, &to).is_ok());
        let wrong = right.replace(OLD, "https://new.example.com");
        let Err(Refusal::At(_, _, refused)) = verify_inner(&old, &wrong, &changes, &from, &to)
        else {
            panic!("not refused at a place");
        };
        assert!(refused.contains("changed a template action"), "{refused}");
    }

    /// A file that reads only as JSON (a surrogate pair) is held to the
    /// plan by the same verification: its escaped endpoint rewritten as
    /// planned passes; a neighbouring string changed, or the endpoint left
    /// as it was, is refused.
    #[test]
    fn a_json_only_rewrite_is_held_to_the_plan() {
        let from = Endpoint::parse("--from", OLD).unwrap();
        let to = Endpoint::parse("--to", "https://new.example.com").unwrap();
        let old = "{\"kind\": \"Application\", \"metadata\": {\"name\": \"\\ud83d\\ude00\"},\n \"spec\": {\"destination\": {\"server\": \"\\u0068ttps:\\/\\/old.example.com\", \"namespace\": \"x\"}}}\n";
        let located =
            crate::find::jsonfile::locate(old, &["old.example.com".into()], true).unwrap();
        assert!(located.json);
        let changes: Vec<Occurrence> = located
            .occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .cloned()
            .collect();
        assert_eq!(changes.len(), 1);
        let right = splice(old, &changes, &to, true).unwrap();
        assert!(right.contains("\\/\\/new.example.com\""), "{right}");
        assert!(verify_inner(old, &right, &changes, &from, &to).is_ok());
        let bad = right.replace("\"x\"", "\"y\"");
        let Err(Refusal::At(line, _, m)) = verify_inner(old, &bad, &changes, &from, &to) else {
            panic!("a neighbour's change not refused at its place");
        };
        assert_eq!(line, 2);
        assert!(
            m.contains("expected \"x\" after the edit, found \"y\""),
            "{m}"
        );
        assert!(verify_inner(old, old, &changes, &from, &to).is_err());
    }

    /// A base64 value re-encoded by the engine is verified by decoding:
    /// the rewrite as planned passes; the same value encoding anything else
    /// (another host, the old one kept), or a neighbouring value changed
    /// too, is refused.
    #[test]
    fn a_base64_rewrite_is_held_to_the_plan() {
        use crate::text::base64::encode_text;
        let from = Endpoint::parse("--from", OLD).unwrap();
        let to = Endpoint::parse("--to", "https://new.example.com").unwrap();
        let secret = |server: &str| {
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  name: {}\n  server: {}\n",
                encode_text("prod"),
                encode_text(server)
            )
        };
        let old = secret(OLD);
        let located = locate::locate_yaml(&old, &["old.example.com".into()], true).unwrap();
        let changes: Vec<Occurrence> = located
            .occurrences
            .iter()
            .filter(|o| o.kind == Kind::Value)
            .cloned()
            .collect();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].encoding, Some(Encoding::Base64));
        let right = splice(&old, &changes, &to, false).unwrap();
        assert_eq!(right, secret("https://new.example.com"));
        assert!(verify_inner(&old, &right, &changes, &from, &to).is_ok());
        for wrong in [
            secret("https://other.example.com"),
            old.clone(),
            right.replace(&encode_text("prod"), &encode_text("prud")),
        ] {
            assert!(verify_inner(&old, &wrong, &changes, &from, &to).is_err());
        }
    }
}
