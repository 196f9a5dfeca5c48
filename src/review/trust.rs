//! The safe identity change: add trust for the new cluster's OIDC issuer
//! next to each statement that trusts the old one (`--trust add`), and later
//! remove the statements that trust only a retired issuer (`--trust
//! remove-retired`), format-preserving and verified like every rewrite.
//!
//! During a blue/green overlap both clusters run: replacing the old issuer
//! by the new one would cut the old cluster off and break rollback. So a
//! statement is never rewritten in place; a copy that names the new issuer
//! is inserted after it, byte for byte the same otherwise (its `Sid`, if
//! any, gets a suffix: IAM wants `Sid`s unique). After the teardown the old
//! statements are removed.
//!
//! Where statements are edited: JSON arrays (a JSON trust-policy file, or a
//! JSON policy inside a YAML block scalar, whose indentation is JSON
//! whitespace), YAML flow sequences and YAML block sequences
//! (CloudFormation). Anything else (a single statement object, JSON inside
//! quoted YAML strings, Terraform) is refused or reported, never edited. The decoded data after an edit must equal the
//! data before plus (or minus) exactly those statements, or nothing is
//! written.

use crate::review::oidc;
use crate::text::issuer::Issuer;
use yaml_rust2::Yaml;

/// An element of a statement list, by byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// Skips a JSON string starting at `i` (a `"`); returns the index after it.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    // YAML flow collections also quote with `'` (a quote doubled inside).
    let quote = b[i];
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            c if c == quote && quote == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The elements of the JSON array whose `[` is at `open`, and the index of
/// its `]`.
fn json_elements(b: &[u8], open: usize) -> Option<(Vec<Span>, usize)> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut i = open + 1;
    let mut start: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                start.get_or_insert(i);
                i = skip_string(b, i)?;
                continue;
            }
            b'{' | b'[' => {
                start.get_or_insert(i);
                depth += 1;
            }
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    if let Some(s) = start.take() {
                        spans.push(Span {
                            start: s,
                            end: i + 1,
                        });
                    }
                }
            }
            b']' => return Some((spans, i)),
            b',' if depth == 0 => {
                if let Some(s) = start.take() {
                    spans.push(Span {
                        start: s,
                        end: trim_end(b, i),
                    });
                }
            }
            c if !c.is_ascii_whitespace() => {
                start.get_or_insert(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn trim_end(b: &[u8], mut end: usize) -> usize {
    while end > 0 && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// Every `"Statement": [` array in `text` (JSON, or JSON inside a YAML
/// block scalar): its elements.
fn json_statement_lists(text: &str) -> Vec<(Vec<Span>, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // JSON's `"Statement": [`, and a YAML flow sequence `Statement: [`.
    for key in ["\"Statement\"", "Statement"] {
        let mut from = 0;
        while let Some(k) = text[from..].find(key).map(|k| k + from) {
            from = k + 1;
            if key == "Statement"
                && (b.get(k + key.len()) != Some(&b':') || (k > 0 && b[k - 1] == b'"'))
            {
                continue;
            }
            if let Some(list) = statement_list_at(b, k + key.len()) {
                out.push(list);
            }
        }
    }
    out
}

/// The elements of a `[...]` list after a `Statement` key ending at `i`.
fn statement_list_at(b: &[u8], mut i: usize) -> Option<(Vec<Span>, usize)> {
    {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) != Some(&b'[') {
            return None;
        }
        json_elements(b, i)
    }
}

/// Every YAML block sequence under a `Statement:` key: its items, each from
/// the start of its `- ` line to the start of the next item (or the end of
/// the sequence).
fn yaml_statement_lists(text: &str) -> Vec<(Vec<Span>, usize)> {
    let mut out = Vec::new();
    let lines: Vec<(usize, &str)> = {
        let mut v = Vec::new();
        let mut pos = 0;
        for l in text.split_inclusive('\n') {
            v.push((pos, l));
            pos += l.len();
        }
        v
    };
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    for (n, (_, l)) in lines.iter().enumerate() {
        let t = l.trim_end();
        if t.trim_start() != "Statement:" {
            continue;
        }
        let key_indent = indent(t);
        let mut items: Vec<Span> = Vec::new();
        let mut item_indent: Option<usize> = None;
        let mut end = text.len();
        for (pos, l) in &lines[n + 1..] {
            let body = l.trim_end();
            if body.trim().is_empty() || body.trim_start().starts_with('#') {
                continue;
            }
            let ind = indent(body);
            let is_item = body[ind..].starts_with("- ") || &body[ind..] == "-";
            if ind < key_indent || (ind == key_indent && !is_item) {
                end = *pos;
                break;
            }
            match item_indent {
                None if is_item => item_indent = Some(ind),
                None => {
                    end = *pos;
                    break;
                }
                _ => {}
            }
            if is_item && Some(ind) == item_indent {
                if let Some(last) = items.last_mut() {
                    last.end = *pos;
                }
                items.push(Span {
                    start: *pos,
                    end: text.len(),
                });
            } else if ind < item_indent.unwrap_or(0) {
                end = *pos;
                break;
            }
        }
        if let Some(last) = items.last_mut() {
            last.end = last.end.min(end);
        }
        // Blank and comment lines after an item belong to what follows it.
        for item in &mut items {
            item.end = trim_trailing_comments(text, item.start, item.end);
        }
        if !items.is_empty() {
            out.push((items, end));
        }
    }
    out
}

/// `end` moved back over the whole lines before it that are blank or hold
/// only a comment (never before `start`'s line).
fn trim_trailing_comments(text: &str, start: usize, mut end: usize) -> usize {
    while end > start {
        let body = &text[..end];
        let body = body.strip_suffix('\n').unwrap_or(body);
        let body = body.strip_suffix('\r').unwrap_or(body);
        let line_start = body.rfind('\n').map_or(0, |i| i + 1);
        if line_start <= start {
            break;
        }
        let line = body[line_start..].trim();
        if line.is_empty() || line.starts_with('#') {
            end = line_start;
        } else {
            break;
        }
    }
    end
}

/// `text` with every spelling of `old`'s host path replaced by `new`'s.
fn swap_issuer(text: &str, old: &Issuer, new: &Issuer) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for f in crate::text::issuer::find(text) {
        if !f.issuer.same(old) {
            continue;
        }
        let host = text[f.start..f.end]
            .to_ascii_lowercase()
            .find("oidc.eks.")
            .map(|h| f.start + h)
            .unwrap_or(f.start);
        let host_end = host + old.host_path().len();
        out.push_str(&text[last..host]);
        out.push_str(&new.host_path());
        last = host_end;
    }
    out.push_str(&text[last..]);
    out
}

/// Whether a statement's principal federates through `issuer` (a provider
/// ARN, or the host path inside one whose account is not literal); a
/// condition key alone does not make a trust.
fn trusts(text: &str, issuer: &Issuer) -> bool {
    crate::text::issuer::find(text).iter().any(|f| {
        f.issuer.same(issuer)
            && matches!(
                f.form,
                crate::text::issuer::Form::ProviderArn { .. }
                    | crate::text::issuer::Form::HostPath { key: None }
                    | crate::text::issuer::Form::Url
            )
    })
}

/// A `Sid` made unique for the copy (IAM wants `Sid`s unique in a policy).
fn new_sid(copy: &str, new: &Issuer) -> String {
    let suffix: String = new.id.chars().take(8).collect();
    match sid_range(copy) {
        Some((a, b)) => format!("{}{}{suffix}{}", &copy[..a], &copy[a..b], &copy[b..]),
        None => copy.to_string(),
    }
}

/// The byte range of a statement's `Sid` value (inside its quotes, without
/// a trailing comment), in JSON (`"Sid": "x"`) or YAML (`Sid: x`, `'x'`,
/// `"x"`).
fn sid_range(text: &str) -> Option<(usize, usize)> {
    if let Some(k) = text.find("\"Sid\"") {
        let after = k + "\"Sid\"".len();
        let q = after + text[after..].find('"')?;
        let end = q + 1 + text[q + 1..].find('"')?;
        return Some((q + 1, end));
    }
    let k = text.find("Sid:")?;
    let after = k + "Sid:".len();
    let line_end = text[after..]
        .find(['\n', '\r'])
        .map_or(text.len(), |e| after + e);
    let rest = &text[after..line_end];
    let lead = rest.len() - rest.trim_start().len();
    let start = after + lead;
    let body = &text[start..line_end];
    match body.chars().next()? {
        q @ ('"' | '\'') => {
            let end = body[1..].find(q)? + 1;
            Some((start + 1, start + end))
        }
        _ => {
            let v = body.split(" #").next().unwrap_or("").trim_end();
            (!v.is_empty()).then_some((start, start + v.len()))
        }
    }
}

/// The `Sid` of a statement's text, if it has one.
fn sid_of(text: &str) -> Option<&str> {
    sid_range(text).map(|(a, b)| &text[a..b])
}

/// Condition keys of `statement` (JSON or YAML text) for `issuer`:
/// `host/id/ID:sub` and the like, lower-cased.
fn condition_keys(statement: &str, issuer: &Issuer) -> Vec<String> {
    crate::text::issuer::find(statement)
        .into_iter()
        .filter(|f| f.issuer.same(issuer))
        .filter_map(|f| match f.form {
            crate::text::issuer::Form::HostPath { key: Some(k) } => Some(k),
            _ => None,
        })
        .collect()
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

/// Adds, after each statement of `text` that trusts `old`, a copy that
/// trusts `new` (unless its list already trusts `new`). Returns the new text
/// (or `None` when nothing is to add) and the edits. Errors name what
/// cannot be done (a colliding condition key, a statement list rebind does
/// not edit) and nothing is changed then.
pub fn add(text: &str, old: &Issuer, new: &Issuer) -> Result<Edited, String> {
    let index = crate::syntax::yaml::LineIndex::new(text);
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut edits = Vec::new();
    for (items, is_json) in &statement_lists(text) {
        if items.iter().any(|s| trusts(&text[s.start..s.end], new)) {
            continue;
        }
        for (n, s) in items.iter().enumerate() {
            let st = &text[s.start..s.end];
            if !trusts(st, old) || !st.contains("Federated") {
                continue;
            }
            let copy = copy_for(text, &index, items, *s, old, new)?;
            let insert = if *is_json {
                format!("{}{copy}", json_separator(text, items, n))
            } else {
                yaml_item(text, copy)
            };
            inserts.push((s.end, insert));
            edits.push(Edit {
                line: index.position(text, s.start).0,
                what: "trust for the new issuer added after this statement".into(),
            });
        }
    }
    if inserts.is_empty() {
        return Ok(None);
    }
    let out = insert_all(text, inserts);
    verify(text, &out, old, new, Change::Added)?;
    Ok(Some((out, edits)))
}

/// Every statement list of a policy text, JSON then YAML, each with
/// whether it is JSON.
fn statement_lists(text: &str) -> Vec<(Vec<Span>, bool)> {
    json_statement_lists(text)
        .into_iter()
        .map(|(s, _)| (s, true))
        .chain(
            yaml_statement_lists(text)
                .into_iter()
                .map(|(s, _)| (s, false)),
        )
        .collect()
}

/// The copy of the statement `s` (of the list `items`) that trusts `new`
/// instead of `old`, under a Sid of its own. Refused when a condition key
/// for `new` is already in the statement (the copy would duplicate it) or
/// the copy's Sid is already one of the list's.
fn copy_for(
    text: &str,
    index: &crate::syntax::yaml::LineIndex,
    items: &[Span],
    s: Span,
    old: &Issuer,
    new: &Issuer,
) -> Result<String, String> {
    let st = &text[s.start..s.end];
    let (line, col) = index.position(text, s.start);
    let old_keys = condition_keys(st, old);
    if let Some(k) = condition_keys(st, new)
        .into_iter()
        .find(|k| old_keys.contains(k))
    {
        return Err(format!(
            "{line}:{col}: the statement already has the condition key {}:{k}; the copy for the new issuer would collide with it",
            new.host_path()
        ));
    }
    let copy = new_sid(&swap_issuer(st, old, new), new);
    if let Some(sid) = sid_of(&copy) {
        if items
            .iter()
            .any(|o| sid_of(&text[o.start..o.end]) == Some(sid))
        {
            return Err(format!(
                "{line}:{col}: the copy's Sid {sid} is already a Sid of this policy (IAM wants Sids unique); rename one"
            ));
        }
    }
    Ok(copy)
}

/// What goes between the JSON statement `items[n]` and a copy inserted
/// after it: the separator the list already uses between elements, else a
/// line break and the element's own indentation.
fn json_separator(text: &str, items: &[Span], n: usize) -> String {
    let s = items[n];
    if n + 1 < items.len() {
        return text[s.end..items[n + 1].start].to_string();
    }
    if n > 0 {
        return text[items[n - 1].end..s.start].to_string();
    }
    let line_start = text[..s.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let lead = &text[line_start..s.start];
    if lead.trim().is_empty() && line_start > 0 {
        let eol = if text[..line_start].ends_with("\r\n") {
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

/// `text` with each `(at, what)` of `inserts` inserted at its byte offset.
fn insert_all(text: &str, mut inserts: Vec<(usize, String)>) -> String {
    inserts.sort_by_key(|(at, _)| *at);
    let mut out =
        String::with_capacity(text.len() + inserts.iter().map(|i| i.1.len()).sum::<usize>());
    let mut last = 0;
    for (at, s) in &inserts {
        out.push_str(&text[last..*at]);
        out.push_str(s);
        last = *at;
    }
    out.push_str(&text[last..]);
    out
}

/// Removes each statement of `text` that trusts `retired` and no other
/// issuer, with its separator. Returns the new text and the edits.
pub fn remove_retired(text: &str, retired: &Issuer) -> Result<Edited, String> {
    let index = crate::syntax::yaml::LineIndex::new(text);
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut edits = Vec::new();
    for (items, is_json) in &statement_lists(text) {
        let mut remove: Vec<usize> = Vec::new();
        for (n, s) in items.iter().enumerate() {
            match principals(&text[s.start..s.end], retired) {
                Principals::OnlyRetired => remove.push(n),
                Principals::Mixed => {
                    let (line, col) = index.position(text, s.start);
                    return Err(format!(
                        "{line}:{col}: this statement trusts the retired issuer together with other principals; removing it would take their access too: edit it by hand"
                    ));
                }
                Principals::Other => {}
            }
        }
        if remove.len() == items.len() {
            let (line, col) = index.position(text, items[0].start);
            return Err(format!(
                "{line}:{col}: every statement of this policy trusts only the retired issuer; removing them would leave an empty policy: delete the role instead"
            ));
        }
        for &n in &remove {
            let s = items[n];
            let cut = if *is_json {
                // The element and the separator before it (after it, for
                // the first element).
                if n > 0 {
                    (items[n - 1].end, s.end)
                } else {
                    (s.start, items[n + 1].start)
                }
            } else {
                (s.start, s.end)
            };
            cuts.push(cut);
            edits.push(Edit {
                line: index.position(text, s.start).0,
                what: "statement trusting only the retired issuer removed".into(),
            });
        }
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    cuts.sort();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b) in &cuts {
        out.push_str(&text[last..(*a).max(last)]);
        last = last.max(*b);
    }
    out.push_str(&text[last..]);
    verify(text, &out, retired, retired, Change::Removed)?;
    Ok(Some((out, edits)))
}

/// What a statement's principal is, for removal.
enum Principals {
    /// Only `Federated` providers, every one the retired issuer.
    OnlyRetired,
    /// The retired issuer and something else (another provider, an AWS
    /// principal, a service).
    Mixed,
    /// No trust in the retired issuer.
    Other,
}

/// Reads a statement's text (a JSON object, or a YAML sequence item) and
/// says what its principal is.
fn principals(statement: &str, retired: &Issuer) -> Principals {
    let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(statement) else {
        return Principals::Other;
    };
    let Some(doc) = docs.first().map(|d| d.data()) else {
        return Principals::Other;
    };
    let st = match &doc {
        Yaml::Array(a) if a.len() == 1 => a[0].clone(),
        other => other.clone(),
    };
    let Yaml::Hash(principal) = &st["Principal"] else {
        return Principals::Other;
    };
    let mut retired_seen = false;
    let mut other = false;
    for (k, v) in principal {
        let values: Vec<&Yaml> = match v {
            Yaml::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for v in values {
            let is_retired = k.as_str() == Some("Federated")
                && v.as_str().is_some_and(|t| {
                    let f = crate::text::issuer::find(t);
                    !f.is_empty() && f.iter().all(|f| f.issuer.same(retired))
                });
            if is_retired {
                retired_seen = true;
            } else {
                other = true;
            }
        }
    }
    match (retired_seen, other) {
        (true, false) => Principals::OnlyRetired,
        (true, true) => Principals::Mixed,
        _ => Principals::Other,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Removed,
}

/// The decoded documents, with JSON policies inside strings decoded too.
fn decode(text: &str) -> Result<Vec<Yaml>, String> {
    let docs = crate::syntax::yaml::read_yaml_or_json(text)
        .map_err(|(line, col, why)| format!("{line}:{col}: {why}"))?;
    Ok(docs.iter().map(|d| expand(d.data())).collect())
}

fn expand(y: Yaml) -> Yaml {
    match y {
        Yaml::String(s) if s.contains("Statement") && s.trim_start().starts_with('{') => {
            match crate::syntax::yaml::read_yaml_or_json(&s) {
                Ok(d) if d.len() == 1 => expand(d[0].data()),
                _ => Yaml::String(s),
            }
        }
        Yaml::Array(a) => Yaml::Array(a.into_iter().map(expand).collect()),
        Yaml::Hash(h) => Yaml::Hash(h.into_iter().map(|(k, v)| (k, expand(v))).collect()),
        other => other,
    }
}

/// Drops from `after` every statement that `before`'s same list lacks,
/// returning them; the rest of the tree is kept as is.
fn split_statements(before: &Yaml, after: &Yaml, extra: &mut Vec<Yaml>) -> Yaml {
    match (before, after) {
        (Yaml::Hash(b), Yaml::Hash(a)) => Yaml::Hash(
            a.iter()
                .map(|(k, v)| {
                    let v = match (k, b.get(k)) {
                        (Yaml::String(key), Some(bv)) if key == "Statement" => match (bv, v) {
                            (Yaml::Array(bs), Yaml::Array(as_)) => {
                                let mut kept = Vec::new();
                                let mut bi = 0;
                                for item in as_ {
                                    if bi < bs.len() && &bs[bi] == item {
                                        kept.push(item.clone());
                                        bi += 1;
                                    } else {
                                        extra.push(item.clone());
                                    }
                                }
                                Yaml::Array(kept)
                            }
                            _ => v.clone(),
                        },
                        (_, Some(bv)) => split_statements(bv, v, extra),
                        _ => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        (Yaml::Array(b), Yaml::Array(a)) if b.len() == a.len() => Yaml::Array(
            b.iter()
                .zip(a)
                .map(|(bv, av)| split_statements(bv, av, extra))
                .collect(),
        ),
        _ => after.clone(),
    }
}

/// The decoded data after the edit must equal the data before plus (or
/// minus) exactly the statements edited: each added one trusting the new
/// issuer where its original trusted the old; each removed one trusting
/// only the retired issuer.
fn verify(
    before: &str,
    after: &str,
    old: &Issuer,
    new: &Issuer,
    change: Change,
) -> Result<(), String> {
    let b = decode(before).map_err(|e| format!("before the edit: {e}"))?;
    let a = decode(after)
        .map_err(|e| format!("verification failed: the edited text does not parse: {e}"))?;
    if a.len() != b.len() {
        return Err("verification failed: the number of documents changed".into());
    }
    for ad in &a {
        duplicate_sids(ad)?;
    }
    for (bd, ad) in b.iter().zip(&a) {
        let mut extra = Vec::new();
        let (small, large) = match change {
            Change::Added => (bd, ad),
            Change::Removed => (ad, bd),
        };
        let rest = split_statements(small, large, &mut extra);
        if &rest != small {
            return Err(
                "verification failed: something besides the trust statements changed".into(),
            );
        }
        for st in &extra {
            let mut texts = Vec::new();
            yaml_strings(st, &mut texts);
            let found: Vec<Issuer> = texts
                .iter()
                .flat_map(|t| crate::text::issuer::find(t))
                .map(|f| f.issuer)
                .collect();
            let ok = match change {
                Change::Added => found.iter().all(|i| i.same(new)) && !found.is_empty(),
                Change::Removed => found.iter().all(|i| i.same(old)) && !found.is_empty(),
            };
            if !ok {
                return Err("verification failed: an edited statement names another issuer".into());
            }
        }
    }
    Ok(())
}

/// Refuses a policy whose statements share a `Sid` (IAM rejects it).
fn duplicate_sids(y: &Yaml) -> Result<(), String> {
    match y {
        Yaml::Hash(h) => {
            for (k, v) in h {
                if k.as_str() == Some("Statement") {
                    if let Yaml::Array(sts) = v {
                        let mut seen = std::collections::HashSet::new();
                        for st in sts {
                            if let Some(sid) = st["Sid"].as_str() {
                                if !seen.insert(sid.to_string()) {
                                    return Err(format!(
                                        "the edit would leave two statements with Sid {sid} (IAM wants Sids unique); rename one"
                                    ));
                                }
                            }
                        }
                    }
                }
                duplicate_sids(v)?;
            }
            Ok(())
        }
        Yaml::Array(a) => a.iter().try_for_each(duplicate_sids),
        _ => Ok(()),
    }
}

fn yaml_strings(y: &Yaml, out: &mut Vec<String>) {
    match y {
        Yaml::String(s) => out.push(s.clone()),
        Yaml::Array(a) => a.iter().for_each(|v| yaml_strings(v, out)),
        Yaml::Hash(h) => {
            for (k, v) in h {
                yaml_strings(k, out);
                yaml_strings(v, out);
            }
        }
        _ => {}
    }
}

/// The text after `action`, and its edits; each retired issuer's removal
/// edits what the previous one left.
fn edit(text: &str, action: &Action) -> Result<(String, Vec<Edit>), String> {
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

/// Refuses when a trust the change is for is still there after it: a role
/// that trusts only the old issuer (`add`), or a statement that trusts only
/// a retired one (`remove-retired`), in a form rebind does not edit (a flow
/// sequence, a single statement object, JSON inside a quoted string or with
/// escaped slashes). Nothing is then written: the report said the role
/// needed the change, so "nothing to change" would be a lie.
fn left_undone(
    rel: &str,
    path: &std::path::Path,
    text: &str,
    action: &Action,
) -> anyhow::Result<()> {
    let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(text) else {
        return Ok(());
    };
    let mut inv = oidc::Inventory::default();
    for d in &docs {
        for doc in oidc::trust_docs(&d.data()) {
            inv.trusts.push(oidc::FileTrust {
                rel: rel.to_string(),
                path: path.to_path_buf(),
                doc,
            });
        }
    }
    for role in oidc::roles(&inv) {
        let undone = match action {
            Action::Add { old, new } => role.coverage(old, new) == oidc::Coverage::OldOnly,
            Action::RemoveRetired(retired) => retired
                .iter()
                .any(|r| !role.issuers.is_empty() && role.issuers.iter().all(|i| i.same(r))),
        };
        if undone {
            anyhow::bail!(
                "{rel}: {} ({}): rebind cannot make this change in place (the statement list is not a JSON array or a YAML sequence it edits: a single statement object, JSON inside a quoted string or with escaped characters); change it by hand; nothing written",
                role.at,
                role.statements.join(", ")
            );
        }
    }
    Ok(())
}

/// What `--trust` asks for.
#[derive(Debug, Clone)]
pub enum Action {
    /// Add trust for `new` beside every statement that trusts `old`.
    Add { old: Issuer, new: Issuer },
    /// Remove the statements that trust only one of these retired issuers.
    RemoveRetired(Vec<Issuer>),
}

/// Plans the edit on every file holding a trust document: the file plans
/// (written like every rewrite, all or nothing) and each edit, by file.
/// Any refusal names `path:line:column` and plans nothing.
pub fn plan(files: &[(std::path::PathBuf, String)], action: &Action) -> anyhow::Result<Planned> {
    let mut plans = Vec::new();
    let mut edits = Vec::new();
    for (path, rel) in files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{rel}: cannot read: {e}"))?;
        let (current, file_edits) =
            edit(&text, action).map_err(|e| anyhow::anyhow!("{rel}:{e}; nothing written"))?;
        left_undone(rel, path, &current, action)?;
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
    fn a_colliding_condition_key_is_refused() {
        let (old, new) = (issuer(OLD), issuer(NEW));
        let text = policy(&[OLD]).replace(
            "\"system:serviceaccount:a:b\"}",
            &format!("\"system:serviceaccount:a:b\", \"oidc.eks.eu-west-1.amazonaws.com/id/{NEW}:sub\": \"x\"}}"),
        );
        let err = add(&text, &old, &new).unwrap_err();
        assert!(err.contains(":sub"), "{err}");
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
        assert!(err.contains("delete the role"), "{err}");
    }
}
