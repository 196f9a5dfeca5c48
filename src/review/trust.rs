//! The safe identity change: add trust for the new cluster's OIDC issuer
//! next to each statement that gives a grant of the old one with no twin
//! (`--trust add`), and later remove the statements that trust only a
//! retired issuer (`--trust remove-retired`), format-preserving and
//! verified like every rewrite.
//!
//! During a blue/green overlap both clusters run: replacing the old issuer
//! by the new one would cut the old cluster off and break rollback. So a
//! statement is never rewritten in place; a copy that names the new issuer
//! is inserted after it, byte for byte the same otherwise (its `Sid`, if
//! any, gets a suffix: IAM wants `Sid`s unique). After the teardown the old
//! statements are removed.
//!
//! Statements are chosen from the policy as the shared reader decodes it
//! (the same reading `identity` reports from: [`crate::model::iam`]), and
//! edited by their byte spans: JSON arrays (a JSON trust-policy file, or a
//! JSON policy inside a YAML literal block scalar, whose lines map one to
//! one), YAML flow sequences and YAML block sequences (CloudFormation).
//! Anything else (a single statement object, JSON inside a quoted YAML
//! string) is refused when it needs the change, never edited. After every
//! edit the text is read again: `add` must leave no grant of the old
//! issuer without its twin, `remove-retired` no grant of the retired
//! issuer, and the decoded data must equal the data before plus (or minus)
//! exactly those statements; else nothing is written.

use crate::edit::verify::{self, Expect};
use crate::model::iam;
use crate::review::oidc::codes;
use crate::syntax::yaml::{Node, Value};
use crate::text::issuer::Issuer;
use crate::text::splice::{self, Op};
use yaml_rust2::Yaml;

/// An element of a statement list, by byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// A refusal: a stable code and the message (`line:column: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

/// Maps offsets of a decoded string (a literal block scalar's content) to
/// offsets of the file: each decoded line starts at a known file offset.
#[derive(Debug, Clone)]
struct OffsetMap {
    /// (decoded line start, file offset of it), in order.
    lines: Vec<(usize, usize)>,
}

impl OffsetMap {
    fn identity() -> OffsetMap {
        OffsetMap {
            lines: vec![(0, 0)],
        }
    }

    fn raw(&self, o: usize) -> usize {
        let i = self.lines.partition_point(|(d, _)| *d <= o) - 1;
        let (d, r) = self.lines[i];
        r + (o - d)
    }

    /// The map of a literal block scalar whose content `decoded` starts at
    /// file offset `start` (its first content byte): `None` unless every
    /// decoded line is its file line less the same indentation.
    fn block(text: &str, start: usize, decoded: &str) -> Option<OffsetMap> {
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let indent = start - line_start;
        if !text[line_start..start].bytes().all(|b| b == b' ') {
            return None;
        }
        let mut lines = Vec::new();
        let mut raw = line_start;
        let mut d = 0;
        for dl in decoded.split_inclusive('\n') {
            let body = dl.trim_end_matches('\n').trim_end_matches('\r');
            let raw_end = text[raw..].find('\n').map_or(text.len(), |e| raw + e);
            let raw_line = text[raw..raw_end].trim_end_matches('\r');
            if body.is_empty() {
                if !raw_line.trim().is_empty() {
                    return None;
                }
                lines.push((d, raw + raw_line.len().min(indent)));
            } else {
                if raw_line.len() < indent
                    || !raw_line[..indent].bytes().all(|b| b == b' ')
                    || &raw_line[indent..] != body
                {
                    return None;
                }
                lines.push((d, raw + indent));
            }
            d += dl.len();
            raw = (raw_end + 1).min(text.len());
        }
        Some(OffsetMap { lines })
    }
}

/// A statement list of a file, as read.
#[derive(Debug, Clone)]
struct List {
    /// 1-based line of the list.
    line: usize,
    /// Each statement's span in the file (`None` when the list is fixed).
    items: Vec<Span>,
    statements: Vec<iam::Statement>,
    /// The file range of each statement's `Sid` value (inside its quotes).
    sids: Vec<Option<Span>>,
    /// Each statement's span holds a chart's template action.
    templated: Vec<bool>,
    /// Elements separated by commas (JSON, a YAML flow sequence).
    flow: bool,
    /// Why rebind does not edit it in place, if it does not.
    fixed: Option<&'static str>,
    /// Where each statement's node starts in its document, and where the
    /// strings holding that document start (outermost first; empty in the
    /// file itself): how the verification finds them.
    nodes: Vec<usize>,
    holders: Vec<usize>,
}

impl List {
    fn grants(&self) -> Vec<iam::Grant> {
        self.statements
            .iter()
            .flat_map(|s| s.grants.iter().cloned())
            .collect()
    }
}

/// The offset of the `-` that opens the block sequence item at `start`.
fn dash_before(text: &str, start: usize) -> Option<usize> {
    let before = text[..start].trim_end();
    before.ends_with('-').then(|| before.len() - 1)
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// `end` moved back over the whole lines before it that are blank or hold
/// only a comment (never before `start`'s line).
fn trim_trailing_comments(text: &str, start: usize, mut end: usize) -> usize {
    while end > start {
        let body = &text[..end];
        let body = body.strip_suffix('\n').unwrap_or(body);
        let body = body.strip_suffix('\r').unwrap_or(body);
        let ls = body.rfind('\n').map_or(0, |i| i + 1);
        if ls <= start {
            break;
        }
        let line = body[ls..].trim();
        if line.is_empty() || line.starts_with('#') {
            end = ls;
        } else {
            break;
        }
    }
    end
}

/// The file range of a `Sid` value (inside its quotes), when its bytes are
/// its decoded value.
fn sid_span(text: &str, node: &Node, map: &OffsetMap) -> Option<Span> {
    let Value::Scalar(value, style) = &node.value else {
        return None;
    };
    let start = map.raw(node.start);
    let inner = match style {
        yaml_rust2::scanner::TScalarStyle::Plain => start,
        yaml_rust2::scanner::TScalarStyle::SingleQuoted
        | yaml_rust2::scanner::TScalarStyle::DoubleQuoted => start + 1,
        _ => return None,
    };
    text.get(inner..inner + value.len())
        .filter(|raw| raw == value)
        .map(|_| Span {
            start: inner,
            end: inner + value.len(),
        })
}

struct Reader<'a> {
    text: &'a str,
    masked: Vec<(usize, usize)>,
    out: Vec<List>,
}

impl Reader<'_> {
    fn walk(
        &mut self,
        n: &Node,
        root: &Node,
        map: &OffsetMap,
        fixed: Option<&'static str>,
        holders: &[usize],
    ) {
        match &n.value {
            Value::Map(pairs) => {
                if iam::is_policy(n) {
                    self.policy(n, root, map, fixed, holders);
                    return;
                }
                for (_, v) in pairs {
                    self.walk(v, root, map, fixed, holders);
                }
            }
            Value::Seq(items) => items
                .iter()
                .for_each(|v| self.walk(v, root, map, fixed, holders)),
            Value::Scalar(s, style) if iam::may_hold_policy(s) => {
                let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(s) else {
                    return;
                };
                let inner = match style {
                    yaml_rust2::scanner::TScalarStyle::Literal if fixed.is_none() => {
                        OffsetMap::block(self.text, map.raw(n.start), s)
                    }
                    _ => None,
                };
                let why = fixed.or(match inner {
                    Some(_) => None,
                    None => Some("JSON inside a quoted or folded YAML string"),
                });
                let inner = inner.unwrap_or_else(OffsetMap::identity);
                let holders = [holders, &[n.start]].concat();
                for d in &docs {
                    self.walk(d, d, &inner, why, &holders);
                }
            }
            _ => {}
        }
    }

    fn policy(
        &mut self,
        n: &Node,
        root: &Node,
        map: &OffsetMap,
        fixed: Option<&'static str>,
        holders: &[usize],
    ) {
        let Some((items, is_list)) = iam::statements(n) else {
            return;
        };
        let masked: &[(usize, usize)] = if fixed.is_none() && map.lines.len() == 1 {
            &self.masked
        } else {
            &[]
        };
        let statements: Vec<iam::Statement> = items
            .iter()
            .enumerate()
            .map(|(i, st)| iam::read_statement(st, i, Some(root), masked))
            .collect();
        let list_node = n.get(iam::STATEMENT).unwrap_or(n);
        let line = list_node.line;
        let mut fixed = fixed.or((!is_list).then_some("a single statement object, not a list"));
        let text = self.text;
        let flow = text.as_bytes().get(map.raw(list_node.start)) == Some(&b'[');
        let mut spans = Vec::new();
        let mut sids = Vec::new();
        if fixed.is_none() {
            for (i, item) in items.iter().enumerate() {
                let start = map.raw(item.start);
                let is_flow_map = text.as_bytes().get(start) == Some(&b'{');
                let span = if flow {
                    is_flow_map.then(|| Span {
                        start,
                        end: map.raw(item.end) + 1,
                    })
                } else {
                    dash_before(text, start).map(|dash| {
                        let s = line_start(text, dash);
                        let end = match items.get(i + 1) {
                            Some(next) => dash_before(text, map.raw(next.start))
                                .map_or(map.raw(next.start), |d| line_start(text, d)),
                            None => {
                                let e = map.raw(list_node.end).min(text.len());
                                let ls = line_start(text, e);
                                let e = if text[ls..e].trim().is_empty() && e < text.len() {
                                    ls
                                } else {
                                    e
                                };
                                trim_trailing_comments(text, s, e)
                            }
                        };
                        Span { start: s, end }
                    })
                };
                match span {
                    Some(sp) => spans.push(sp),
                    None => {
                        fixed = Some("a statement list rebind does not edit in place");
                        break;
                    }
                }
                sids.push(item.get(iam::SID).and_then(|sid| sid_span(text, sid, map)));
            }
        }
        if fixed.is_some() {
            spans.clear();
            sids.clear();
        }
        let templated = spans
            .iter()
            .map(|s: &Span| self.masked.iter().any(|&(a, b)| a < s.end && s.start < b))
            .collect();
        self.out.push(List {
            line,
            items: spans,
            statements,
            sids,
            templated,
            flow,
            fixed,
            nodes: items.iter().map(|i| i.start).collect(),
            holders: holders.to_vec(),
        });
    }
}

/// Every statement list of a file, read through the shared reader (a
/// chart's template actions masked).
fn lists(text: &str) -> Result<Vec<List>, Refusal> {
    let masked = crate::syntax::yaml::mask_templates(text);
    let (body, ranges) = match &masked {
        Some((m, r)) => (m.as_str(), r.clone()),
        None => (text, Vec::new()),
    };
    let docs = crate::syntax::yaml::read_yaml_or_json(body).map_err(|(line, col, why)| {
        Refusal::new(codes::EDIT_REFUSED, format!("{line}:{col}: {why}"))
    })?;
    let mut r = Reader {
        text: body,
        masked: ranges,
        out: Vec::new(),
    };
    for d in &docs {
        r.walk(d, d, &OffsetMap::identity(), None, &[]);
    }
    Ok(r.out)
}

/// The spellings of an issuer's host path in a file: as is, and with `/`
/// escaped as JSON allows.
fn spellings(i: &Issuer) -> [String; 2] {
    let h = i.host_path();
    let escaped = h.replace('/', "\\/");
    [h, escaped]
}

/// `text` with every spelling of `old`'s host path replaced by `new`'s
/// (the id compared case-insensitively).
fn swap_issuer(text: &str, old: &Issuer, new: &Issuer) -> String {
    let mut out = text.to_string();
    for (o, n) in spellings(old).iter().zip(spellings(new)) {
        let lower = out.to_ascii_lowercase();
        let needle = o.to_ascii_lowercase();
        let mut next = String::with_capacity(out.len());
        let mut last = 0;
        let mut from = 0;
        while let Some(i) = lower[from..].find(&needle).map(|i| i + from) {
            // Only a whole id: no hex digit glued on.
            let after = lower.as_bytes().get(i + needle.len());
            if after.is_some_and(|b| b.is_ascii_alphanumeric()) {
                from = i + 1;
                continue;
            }
            next.push_str(&out[last..i]);
            next.push_str(&n);
            last = i + needle.len();
            from = last;
        }
        next.push_str(&out[last..]);
        out = next;
    }
    out
}

/// An edited text and what was edited, or `None` when nothing is to edit.
pub type Edited = Option<(String, Vec<Edit>)>;

/// The file plans of a `--trust` change and each edit, by file.
pub type Planned = (Vec<crate::edit::rewrite::FilePlan>, Vec<(String, Edit)>);

/// What an edit did, for the review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// 1-based line of the statement copied (or removed).
    pub line: usize,
    pub what: String,
}

/// What goes between the flow statement `items[n]` and a copy inserted
/// after it: the separator the list already uses between elements, else a
/// line break and the element's own indentation.
fn flow_separator(text: &str, items: &[Span], n: usize) -> String {
    let s = items[n];
    let between = |a: Span, b: Span| {
        let sep = &text[a.end..b.start];
        // A comment after the comma stays with the element it follows.
        match sep.find(',') {
            Some(c) => sep[c..].to_string(),
            None => sep.to_string(),
        }
    };
    if n + 1 < items.len() {
        return between(s, items[n + 1]);
    }
    if n > 0 {
        return between(items[n - 1], s);
    }
    let ls = line_start(text, s.start);
    let lead = &text[ls..s.start];
    if lead.trim().is_empty() && ls > 0 {
        let eol = if text[..ls].ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        format!(",{eol}{lead}")
    } else {
        ", ".to_string()
    }
}

/// A copied YAML statement as inserted after the item it copies: on a
/// line of its own.
fn yaml_item(text: &str, copy: String) -> String {
    if copy.ends_with('\n') {
        return copy;
    }
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    format!("{eol}{copy}")
}

/// Refuses a list with a statement whose principal or condition keys are
/// not literal (rendered by a chart, an unresolved reference): what it
/// grants is not known, so neither "added" nor "nothing to change" holds.
fn not_literal(list: &List) -> Result<(), Refusal> {
    match list.statements.iter().find(|s| s.unresolved) {
        Some(st) => Err(Refusal::new(
            codes::NOT_PROVEN,
            format!(
                "{}: statement {} of this policy has a principal or condition key that is not literal (rendered by a chart from values, or an unresolved reference): change it where it is rendered from",
                list.line,
                st.sid.clone().unwrap_or_else(|| format!("{}", st.index + 1))
            ),
        )),
        None => Ok(()),
    }
}

/// The refusal of a statement a chart's template renders.
fn rendered(index: &crate::syntax::yaml::LineIndex, text: &str, s: Span) -> Refusal {
    let (line, col) = index.position(text, s.start);
    Refusal::new(
        codes::NOT_PROVEN,
        format!("{line}:{col}: this statement is rendered by a chart's template; change it in the chart or its values by hand"),
    )
}

fn describe_missing(m: &[&iam::Grant]) -> String {
    m.iter()
        .map(|g| g.describe())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Adds, after each statement of `text` that gives a grant of `old` with
/// no twin for `new`, a copy that gives it for `new`. Returns the new text
/// (or `None` when no grant is missing) and the edits. Refusals name what
/// cannot be done (a statement list rebind does not edit, a `Sid` taken,
/// a statement not proven) and nothing is changed then.
pub fn add(text: &str, old: &Issuer, new: &Issuer) -> Result<Edited, Refusal> {
    let index = crate::syntax::yaml::LineIndex::new(text);
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut planned: Vec<(Vec<usize>, Expect)> = Vec::new();
    let mut edits = Vec::new();
    for list in lists(text)? {
        not_literal(&list)?;
        let grants = list.grants();
        let missing = iam::missing(&grants, old, new);
        if missing.is_empty() {
            continue;
        }
        if let Some(why) = list.fixed {
            return Err(Refusal::new(
                codes::EDIT_REFUSED,
                format!(
                    "{}: this policy lacks the new issuer's grants ({}) but rebind cannot make this change in place ({why}); change it by hand",
                    list.line,
                    describe_missing(&missing)
                ),
            ));
        }
        let taken: Vec<&str> = list
            .statements
            .iter()
            .filter_map(|s| s.sid.as_deref())
            .collect();
        for (n, st) in list.statements.iter().enumerate() {
            if !st.grants.iter().any(|g| missing.contains(&g)) {
                continue;
            }
            let s = list.items[n];
            if list.templated[n] {
                return Err(rendered(&index, text, s));
            }
            let mut copy = text[s.start..s.end].to_string();
            let mut new_sid = None;
            if let (Some(sid), Some(value)) = (list.sids[n], st.sid.as_deref()) {
                let renamed = format!("{value}{}", new.id.chars().take(8).collect::<String>());
                if taken.contains(&renamed.as_str()) {
                    let (line, col) = index.position(text, s.start);
                    return Err(Refusal::new(
                        codes::EDIT_REFUSED,
                        format!("{line}:{col}: the copy's Sid {renamed} is already a Sid of this policy (IAM wants Sids unique); rename one"),
                    ));
                }
                copy.replace_range(sid.start - s.start..sid.end - s.start, &renamed);
                new_sid = Some(renamed);
            } else if st.sid.is_some() {
                let (line, col) = index.position(text, s.start);
                return Err(Refusal::new(
                    codes::EDIT_REFUSED,
                    format!("{line}:{col}: the statement's Sid is written with escapes; rebind cannot give its copy a Sid of its own: change it by hand"),
                ));
            }
            let copy = swap_issuer(&copy, old, new);
            let insert = if list.flow {
                format!("{}{copy}", flow_separator(text, &list.items, n))
            } else {
                yaml_item(text, copy)
            };
            inserts.push((s.end, insert));
            let rule = Box::new(move |y: &Yaml| copy_of(y, new_sid.as_deref(), old, new));
            let after = list.nodes[n];
            planned.push((list.holders.clone(), Expect::Insert { after, rule }));
            edits.push(Edit {
                line: index.position(text, s.start).0,
                what: "trust for the new issuer added after this statement".into(),
            });
        }
    }
    if inserts.is_empty() {
        return Ok(None);
    }
    let ops: Vec<Op> = inserts
        .into_iter()
        .map(|(at, s)| Op::insert(at, s))
        .collect();
    let out =
        splice::apply(text, &ops).map_err(|e| Refusal::new(codes::EDIT_REFUSED, e.to_string()))?;
    check(text, &out, planned)?;
    // Read again, grant by grant: every grant of the old issuer has its twin.
    for list in lists(&out)? {
        unique_sids(&list)?;
        let grants = list.grants();
        let missing = iam::missing(&grants, old, new);
        if !missing.is_empty() {
            return Err(Refusal::new(
                codes::EDIT_REFUSED,
                format!(
                    "verification failed: after the edit the policy at line {} still lacks the new issuer's grants ({}); a principal built from a reference (a `Ref` to a parameter, a `Fn::Sub` of one) is not changed by a copy: give the new provider its own parameter by hand",
                    list.line,
                    describe_missing(&missing)
                ),
            ));
        }
    }
    Ok(Some((out, edits)))
}

/// Whether a statement's principal is that retired issuer's provider alone
/// (`Some(true)`), names it with other principals (`Some(false)`), or does
/// not name it (`None`).
fn only_retired(st: &iam::Statement, retired: &Issuer) -> Option<bool> {
    if !st.principals.iter().any(|(i, _)| i.same(retired)) {
        return None;
    }
    Some(!st.others && !st.unresolved && st.principals.iter().all(|(i, _)| i.same(retired)))
}

/// Removes each statement of `text` whose principal is only `retired`'s
/// provider, with its separator. Returns the new text and the edits.
pub fn remove_retired(text: &str, retired: &Issuer) -> Result<Edited, Refusal> {
    let index = crate::syntax::yaml::LineIndex::new(text);
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut planned: Vec<(Vec<usize>, Expect)> = Vec::new();
    let mut edits = Vec::new();
    for list in lists(text)? {
        not_literal(&list)?;
        let mut remove = vec![false; list.statements.len()];
        for (n, st) in list.statements.iter().enumerate() {
            match only_retired(st, retired) {
                Some(true) if list.templated.get(n) == Some(&true) => {
                    return Err(rendered(&index, text, list.items[n]));
                }
                Some(true) => remove[n] = true,
                Some(false) => {
                    let at = list
                        .items
                        .get(n)
                        .map_or(list.line, |s| index.position(text, s.start).0);
                    return Err(Refusal::new(
                        codes::EDIT_REFUSED,
                        format!("{at}: this statement trusts the retired issuer together with other principals; removing it would take their access too: edit it by hand"),
                    ));
                }
                None => {}
            }
        }
        if !remove.contains(&true) {
            continue;
        }
        if let Some(why) = list.fixed {
            return Err(Refusal::new(
                codes::EDIT_REFUSED,
                format!("{}: this policy trusts the retired issuer but rebind cannot make this change in place ({why}); change it by hand", list.line),
            ));
        }
        if remove.iter().all(|r| *r) {
            return Err(Refusal::new(
                codes::EDIT_REFUSED,
                format!("{}: every statement of this policy trusts only the retired issuer; removing them would leave an empty policy: delete the role instead", list.line),
            ));
        }
        let items = &list.items;
        let mut n = 0;
        while n < items.len() {
            if !remove[n] {
                n += 1;
                continue;
            }
            let first = n;
            while n < items.len() && remove[n] {
                let at = list.nodes[n];
                planned.push((list.holders.clone(), Expect::Remove { at }));
                edits.push(Edit {
                    line: index.position(text, items[n].start).0,
                    what: "statement trusting only the retired issuer removed".into(),
                });
                n += 1;
            }
            let last = n - 1;
            let cut = if !list.flow {
                (items[first].start, items[last].end)
            } else if n < items.len() {
                // A run before a kept element: up to that element.
                (items[first].start, items[n].start)
            } else {
                // A run at the end: from the kept element before it.
                (items[first - 1].end, items[last].end)
            };
            cuts.push(cut);
        }
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    let ops: Vec<Op> = cuts.into_iter().map(|(a, b)| Op::remove(a..b)).collect();
    let out =
        splice::apply(text, &ops).map_err(|e| Refusal::new(codes::EDIT_REFUSED, e.to_string()))?;
    check(text, &out, planned)?;
    for list in lists(&out)? {
        if let Some(g) = list.grants().iter().find(|g| g.issuer.same(retired)) {
            return Err(Refusal::new(
                codes::EDIT_REFUSED,
                format!(
                    "verification failed: after the edit the policy at line {} still grants the retired issuer ({})",
                    list.line,
                    g.describe()
                ),
            ));
        }
    }
    Ok(Some((out, edits)))
}

/// The one verification (`edit::verify`): the edited text, read again,
/// differs from `text` by exactly the `planned` statements (each given
/// with the strings holding its document).
fn check(text: &str, out: &str, planned: Vec<(Vec<usize>, Expect)>) -> Result<(), Refusal> {
    let refused =
        |m: String| Refusal::new(codes::EDIT_REFUSED, format!("verification failed: {m}"));
    let masked = crate::syntax::yaml::mask_templates(text).is_some();
    let body = crate::syntax::yaml::parsed_text(text, true);
    let before = crate::syntax::yaml::read_yaml_or_json(&body)
        .map_err(|(l, c, m)| refused(format!("{l}:{c}: {m}")))?;
    verify::verify_read(&before, masked, out, &nested(planned))
        .map(|_| ())
        .map_err(|m| refused(m.to_string()))
}

/// Operations given with the strings holding their documents, as the
/// verification's expectations of the file: those inside a string under
/// an [`Expect::Document`] of it.
fn nested(planned: Vec<(Vec<usize>, Expect)>) -> Vec<Expect> {
    let mut here = Vec::new();
    let mut inner: std::collections::BTreeMap<usize, Vec<(Vec<usize>, Expect)>> =
        Default::default();
    for (holders, e) in planned {
        match holders.split_first() {
            None => here.push(e),
            Some((at, rest)) => inner.entry(*at).or_default().push((rest.to_vec(), e)),
        }
    }
    let docs = inner.into_iter().map(|(at, p)| Expect::Document {
        at,
        inner: nested(p),
    });
    here.extend(docs);
    here
}

/// What the copy of statement `y` reads: its `Sid` renamed (when it has
/// one), the old issuer swapped for the new one in every string.
fn copy_of(y: &Yaml, sid: Option<&str>, old: &Issuer, new: &Issuer) -> Yaml {
    let swapped = |y: &Yaml| swapped(y, old, new);
    match (y, sid) {
        (Yaml::Hash(h), Some(sid)) => Yaml::Hash(
            h.iter()
                .map(|(k, v)| match k.as_str() == Some(iam::SID) {
                    true => (swapped(k), swapped(&Yaml::String(sid.to_string()))),
                    false => (swapped(k), swapped(v)),
                })
                .collect(),
        ),
        _ => swapped(y),
    }
}

fn swapped(y: &Yaml, old: &Issuer, new: &Issuer) -> Yaml {
    match y {
        Yaml::String(s) => Yaml::String(swap_issuer(s, old, new)),
        Yaml::Array(a) => Yaml::Array(a.iter().map(|v| swapped(v, old, new)).collect()),
        Yaml::Hash(h) => Yaml::Hash(
            h.iter()
                .map(|(k, v)| (swapped(k, old, new), swapped(v, old, new)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Refuses a policy whose statements share a `Sid` (IAM rejects it).
fn unique_sids(list: &List) -> Result<(), Refusal> {
    let mut seen = std::collections::HashSet::new();
    match list
        .statements
        .iter()
        .filter_map(|st| st.sid.as_deref())
        .find(|sid| !seen.insert(*sid))
    {
        Some(sid) => Err(Refusal::new(
            codes::EDIT_REFUSED,
            format!("verification failed: the edit would leave two statements with Sid {sid} (IAM wants Sids unique); rename one"),
        )),
        None => Ok(()),
    }
}

/// The text after `action`, and its edits; each retired issuer's removal
/// edits what the previous one left.
fn edit(text: &str, action: &Action) -> Result<(String, Vec<Edit>), Refusal> {
    let mut current = text.to_string();
    let mut edits = Vec::new();
    let mut take = |edited: Edited, current: &mut String| {
        if let Some((t, e)) = edited {
            *current = t;
            edits.extend(e);
        }
    };
    match action {
        Action::Add { old, new } => {
            let edited = add(&current, old, new)?;
            take(edited, &mut current);
        }
        Action::RemoveRetired(retired) => {
            for r in retired {
                let edited = remove_retired(&current, r)?;
                take(edited, &mut current);
            }
        }
    }
    Ok((current, edits))
}

/// What `--trust` asks for.
#[derive(Debug, Clone)]
pub enum Action {
    /// Add trust for `new` beside every statement that gives a grant of
    /// `old` with no twin.
    Add { old: Issuer, new: Issuer },
    /// Remove the statements that trust only one of these retired issuers.
    RemoveRetired(Vec<Issuer>),
}

/// Plans the edit on every file holding a trust document: the file plans
/// (written like every rewrite, all or nothing) and each edit, by file.
/// Any refusal names `path:line` and its code, and plans nothing.
pub fn plan(files: &[(std::path::PathBuf, String)], action: &Action) -> Result<Planned, Refusal> {
    let mut plans = Vec::new();
    let mut edits = Vec::new();
    for (path, rel) in files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Refusal::new(codes::EDIT_REFUSED, format!("{rel}: cannot read: {e}")))?;
        let (current, file_edits) = edit(&text, action).map_err(|e| Refusal {
            code: e.code,
            message: format!("{rel}:{}; nothing written", e.message),
        })?;
        if current != text {
            edits.extend(file_edits.into_iter().map(|e| (rel.clone(), e)));
            plans.push(crate::edit::rewrite::FilePlan {
                path: path.clone(),
                rel: rel.clone(),
                old: text.into(),
                new: current.into(),
                changes: Vec::new(),
                is_config: false,
            });
        }
    }
    Ok((plans, edits))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";
    const NEW: &str = "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A";

    fn issuer(id: &str) -> Issuer {
        Issuer::parse(&format!("https://oidc.eks.eu-west-1.amazonaws.com/id/{id}")).unwrap()
    }

    fn policy(ids: &[&str]) -> String {
        let sts: Vec<String> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| {
                format!(
                    "    {{\n      \"Sid\": \"S{n}\",\n      \"Effect\": \"Allow\",\n      \"Principal\": {{\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{id}\"}},\n      \"Condition\": {{\"StringEquals\": {{\"oidc.eks.eu-west-1.amazonaws.com/id/{id}:sub\": \"system:serviceaccount:a:b\"}}}}\n    }}"
                )
            })
            .collect();
        format!(
            "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n{}\n  ]\n}}\n",
            sts.join(",\n")
        )
    }

    #[test]
    fn add_then_remove_round_trips_to_the_new_issuer_only() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        let before = policy(&[OLD]);
        let (added, edits) = add(&before, &old, &new).unwrap().unwrap();
        assert_eq!(edits.len(), 1);
        assert!(
            added.starts_with(&before[..before.find("\n  ]").unwrap()]),
            "{added}"
        );
        assert!(
            added.contains(&format!("\"Sid\": \"S0{}\"", &NEW[..8])),
            "{added}"
        );
        // Adding again is nothing to do.
        assert_eq!(add(&added, &old, &new).unwrap(), None);
        let (removed, _) = remove_retired(&added, &old).unwrap().unwrap();
        let want = policy(&[NEW]).replace("\"S0\"", &format!("\"S0{}\"", &NEW[..8]));
        assert_eq!(removed, want);
    }

    #[test]
    fn a_statement_whose_keys_name_two_issuers_grants_nobody_and_is_not_copied() {
        // IAM ANDs the keys of a condition block and a token carries only
        // its issuer's keys: this statement matches no token of either.
        let (old, new) = (issuer(OLD), issuer(NEW));
        let text = policy(&[OLD]).replace(
            "\"system:serviceaccount:a:b\"}",
            &format!("\"system:serviceaccount:a:b\", \"oidc.eks.eu-west-1.amazonaws.com/id/{NEW}:sub\": \"x\"}}"),
        );
        assert_eq!(add(&text, &old, &new).unwrap(), None);
    }

    #[test]
    fn only_the_missing_grants_are_added_and_adjacent_removals_stay_json() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        // Two service accounts on the old issuer, the copy of one on the new.
        let two = policy(&[OLD, OLD, NEW]).replacen(
            "system:serviceaccount:a:b",
            "system:serviceaccount:c:d",
            1,
        );
        let (added, edits) = add(&two, &old, &new).unwrap().unwrap();
        assert_eq!(edits.len(), 1, "{added}");
        assert_eq!(
            edits[0].line, 4,
            "the first statement, c:d, is the one missing"
        );
        assert!(added.contains(&format!("\"S0{}\"", &NEW[..8])), "{added}");
        assert_eq!(add(&added, &old, &new).unwrap(), None);
        // The two old statements lead the list: both go, the JSON stays valid.
        let (removed, edits) = remove_retired(&added, &old).unwrap().unwrap();
        assert_eq!(edits.len(), 2);
        assert!(
            serde_json::from_str::<serde_json::Value>(&removed).is_ok(),
            "{removed}"
        );
        assert!(!removed.contains(OLD), "{removed}");
    }

    #[test]
    fn yaml_block_sequences_get_the_copy_after_the_item() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        let text = format!(
            "Resources:\n  Role:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - Effect: Allow  # IRSA\n            Principal:\n              Federated: arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{OLD}\n            Condition:\n              StringLike:\n                oidc.eks.eu-west-1.amazonaws.com/id/{OLD}:sub: system:serviceaccount:kube-system:*\n      RoleName: r\n"
        );
        let (added, _) = add(&text, &old, &new).unwrap().unwrap();
        let item =
            &text[text.find("          - Effect").unwrap()..text.find("      RoleName").unwrap()];
        assert_eq!(
            added,
            text.replace(item, &format!("{item}{}", item.replace(OLD, NEW)))
        );
        let (back, _) = remove_retired(&added, &old).unwrap().unwrap();
        assert_eq!(back, text.replace(OLD, NEW));
    }

    #[test]
    fn a_policy_that_would_be_emptied_is_refused() {
        let err = remove_retired(&policy(&[OLD]), &issuer(OLD)).unwrap_err();
        assert!(err.message.contains("delete the role"), "{err}");
    }

    /// Every order and adjacency of retired and kept statements, in a JSON
    /// array, a YAML flow sequence and a YAML block sequence: what is left
    /// is exactly the kept statements, in order.
    #[test]
    fn remove_retired_works_for_any_order_and_adjacency() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        let arn = |id: &str| {
            format!(
                "arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{id}"
            )
        };
        for mask in 1u32..15 {
            let ids: Vec<&str> = (0..4)
                .map(|i| if mask & (1 << i) != 0 { NEW } else { OLD })
                .collect();
            let kept: Vec<usize> = (0..4).filter(|i| ids[*i] == NEW).collect();
            let forms: [(&str, &str, &str, &str); 3] = [
                (
                    "{\"Statement\": [\n",
                    ",\n",
                    "\n]}\n",
                    "  {\"Sid\": \"S#\", \"Principal\": {\"Federated\": \"@\"}}",
                ),
                (
                    "Statement: [",
                    ", ",
                    "]\n",
                    "{Sid: S#, Principal: {Federated: '@'}}",
                ),
                (
                    "Statement:  # trust\n",
                    "",
                    "Other: 1\n",
                    "  - Sid: S#  # c\n    Principal:\n      Federated: '@'\n",
                ),
            ];
            for (head, sep, tail, item) in forms {
                let make = |which: &[usize]| {
                    let items: Vec<String> = which
                        .iter()
                        .map(|i| {
                            item.replace('#', &i.to_string())
                                .replace('@', &arn(ids[*i]))
                        })
                        .collect();
                    format!("{head}{}{tail}", items.join(sep))
                };
                let text = make(&[0, 1, 2, 3]);
                let (out, edits) = remove_retired(&text, &old).unwrap().unwrap();
                assert_eq!(edits.len(), 4 - kept.len(), "{text}");
                assert_eq!(out, make(&kept), "{mask:b}\n{text}");
                // And adding back: every old grant of the new issuer's
                // copies would be nothing to do here (no old left).
                assert_eq!(add(&out, &old, &new).unwrap(), None);
            }
        }
    }

    /// Old statements for three service accounts, the new issuer's copies
    /// of any subset: `add` copies exactly the missing ones, in each form,
    /// and the result is ready grant by grant.
    #[test]
    fn add_copies_exactly_the_missing_grants_in_every_form() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        let host = |id: &str| format!("oidc.eks.eu-west-1.amazonaws.com/id/{id}");
        let forms: [(&str, &str, &str, &str); 3] = [
            ("{\"Statement\": [\n", ",\n", "\n]}\n", "  {\"Sid\": \"S#\", \"Principal\": {\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/@\"}, \"Condition\": {\"StringEquals\": {\"@:sub\": \"system:serviceaccount:n:#\"}}}"),
            ("Statement: [", ", ", "]\n", "{Sid: S#, Principal: {Federated: 'arn:aws:iam::111122223333:oidc-provider/@'}, Condition: {StringEquals: {'@:sub': 'system:serviceaccount:n:#'}}}"),
            ("Statement: # c\n", "", "Other: 1\n", "  - Sid: S#\n    Principal: {Federated: 'arn:aws:iam::111122223333:oidc-provider/@'}\n    Condition:\n      StringEquals:\n        '@:sub': system:serviceaccount:n:#\n"),
        ];
        for mask in 0u32..8 {
            for (head, sep, tail, item) in forms {
                let mut items: Vec<String> = (0..3)
                    .map(|i| item.replace('#', &i.to_string()).replace('@', &host(OLD)))
                    .collect();
                for i in (0..3).filter(|i| mask & (1 << i) != 0) {
                    items.push(
                        item.replace('#', &i.to_string())
                            .replace('@', &host(NEW))
                            .replace(&format!("S{i}"), &format!("N{i}")),
                    );
                }
                let text = format!("{head}{}{tail}", items.join(sep));
                let missing = 3 - mask.count_ones() as usize;
                match add(&text, &old, &new).unwrap() {
                    None => assert_eq!(missing, 0, "{text}"),
                    Some((out, edits)) => {
                        assert_eq!(edits.len(), missing, "{text}\n{out}");
                        for l in lists(&out).unwrap() {
                            assert!(iam::missing(&l.grants(), &old, &new).is_empty(), "{out}");
                        }
                        assert_eq!(add(&out, &old, &new).unwrap(), None, "{out}");
                    }
                }
            }
        }
    }

    /// Trust edits are verified by the edit engine: a copy added or a
    /// statement removed verifies only as planned; a neighbouring statement
    /// changed too, a copy naming another issuer, or another statement
    /// removed is refused. In a JSON file and in the same policy held in a
    /// YAML literal block.
    #[test]
    fn trust_edits_verify_only_as_planned() {
        const THIRD: &str = "1111111111111111111111111111AAAA";
        let (old, new) = (issuer(OLD), issuer(NEW));
        let json = policy(&[OLD, THIRD]);
        let lines: String = json.lines().map(|l| format!("    {l}\n")).collect();
        let block = format!("kind: ConfigMap\ndata:\n  policy: |\n{lines}");
        let sid = format!("S0{}", &NEW[..8]);
        for text in [json, block] {
            let list = &lists(&text).unwrap()[0];
            let (at, holders) = (list.nodes[0], list.holders.clone());
            let copy = || {
                let rule = Box::new(|y: &Yaml| copy_of(y, Some(&sid), &old, &new));
                vec![(holders.clone(), Expect::Insert { after: at, rule })]
            };
            let (added, _) = add(&text, &old, &new).unwrap().unwrap();
            check(&text, &added, copy()).unwrap();
            assert!(check(&text, &added.replace("\"S1\"", "\"S9\""), copy()).is_err());
            assert!(check(&text, &added.replacen(NEW, THIRD, 1), copy()).is_err());
            let cut = || vec![(holders.clone(), Expect::Remove { at })];
            let (removed, _) = remove_retired(&text, &old).unwrap().unwrap();
            check(&text, &removed, cut()).unwrap();
            assert!(check(&text, &removed.replace("\"S1\"", "\"S9\""), cut()).is_err());
            let (other, _) = remove_retired(&text, &issuer(THIRD)).unwrap().unwrap();
            assert!(check(&text, &other, cut()).is_err());
        }
    }
}
