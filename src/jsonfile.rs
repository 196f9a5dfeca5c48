//! Locating and verifying endpoints in a file that is valid JSON but that the
//! YAML parser refuses: surrogate-pair escapes such as `"\ud83d\ude00"` (what
//! Python's `json.dump` writes by default), or anything else RFC 8259 allows
//! and `yaml-rust2` does not. Valid JSON never blocks a rebind.
//!
//! [`locate`] reads the file with [`json::tokenize`](crate::json::tokenize):
//! every string (object keys included) is searched in its decoded value, as
//! any JSON reader sees it, and each endpoint is tied back to the raw bytes
//! that write it. A string written without escapes is spliced byte for byte;
//! one with escapes carries an [`Escaped`] and is rewritten through
//! [`endpoint::splice_decoded_json`] (or refused by position). Paths are
//! classified by [`positions`], with the top-level `kind` as the document's
//! kind, exactly as the YAML locator does for the same data.
//!
//! [`verify`] is what `rewrite::verify` runs for such a file: every byte
//! outside the planned strings is unchanged, and each planned string decodes
//! to its old value with the endpoint rebound
//! ([`json::verify_same_except`](crate::json::verify_same_except)).

use crate::endpoint::{self, Endpoint, Found};
use crate::json::{self, Document, Token};
use crate::locate::{self, Destination, Escaped, Kind, LineIndex, Located, Occurrence};
use crate::positions::{self, Fact, Seg, YamlPath};
use crate::rewrite::Proof;
use std::collections::HashMap;
use std::ops::Range;

/// The document facts the tier table and [`positions::classify`] need.
#[derive(Default)]
struct Facts {
    kind: Option<String>,
    name: Option<String>,
    dest_server: Option<String>,
    dest_name: Option<String>,
}

impl Facts {
    fn resource(&self) -> Option<String> {
        match (&self.kind, &self.name) {
            (Some(k), Some(n)) => Some(format!("{k}/{n}")),
            (Some(k), None) => Some(k.clone()),
            _ => None,
        }
    }
}

fn yaml_path(path: &[json::Seg]) -> YamlPath {
    YamlPath(
        path.iter()
            .map(|s| match s {
                json::Seg::Key(k) => Seg::Key(k.clone()),
                json::Seg::Index(i) => Seg::Index(*i),
            })
            .collect(),
    )
}

/// The mapping keys of `path`, in order (array steps left out).
fn keys(path: &[json::Seg]) -> Vec<&str> {
    path.iter()
        .filter_map(|s| match s {
            json::Seg::Key(k) => Some(k.as_str()),
            json::Seg::Index(_) => None,
        })
        .collect()
}

/// The last step of a token's path, when it is an object member.
fn member_key(t: &Token) -> Option<&str> {
    match &t.seg {
        Some(json::Seg::Key(k)) => Some(k),
        _ => None,
    }
}

/// Locates every endpoint occurrence in `text`, a JSON text; with `only`, just
/// the occurrences of `extra_hosts` (lower-case), as `locate::locate_yaml`
/// does. Every occurrence is of kind `value` (JSON has no comments). `Err`
/// when `text` is not valid JSON.
pub fn locate(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, json::Error> {
    let doc = json::tokenize(text)?;
    let index = LineIndex::new(text);
    let (facts, names) = facts(&doc);
    let mut occurrences = Vec::new();
    for (ti, t) in doc.tokens.iter().enumerate() {
        let Some(value) = t.str_value() else {
            continue;
        };
        let mut path = None;
        if !may_hold(&doc, t, value, extra_hosts, only, &mut path) {
            continue;
        }
        let path = path.unwrap_or_else(|| doc.path(t));
        let finds = string_finds(text, t.range.clone(), value, extra_hosts, only);
        if finds.is_empty() {
            continue;
        }
        let parent = &path[..path.len().saturating_sub(1)];
        let siblings = names.get(parent);
        let sibling_name = siblings.and_then(|s| s.iter().find(|(k, _)| k == "name"));
        let ypath = yaml_path(&path);
        for (raw, decoded, escaped) in finds {
            let line_start = value[..decoded.start].rfind('\n').map_or(0, |p| p + 1);
            let position = positions::classify(
                &ypath,
                &positions::Context {
                    kind: facts.kind.as_deref(),
                    sibling_name: sibling_name.map(|(_, v)| v.as_str()),
                    line_prefix: &value[line_start..decoded.start],
                    template_server: facts.dest_server.as_deref(),
                    managed_host: decoded.shape() != endpoint::Shape::Other,
                },
            );
            if !locate::is_endpoint(&decoded, extra_hosts, position.is_some()) {
                continue;
            }
            let (line, column) = index.position(text, raw.start);
            let hint = position.and_then(|p| {
                locate::hint_beside(Some(p), facts.kind.as_deref(), value, siblings, &decoded)
            });
            occurrences.push(Occurrence {
                endpoint: value[decoded.start..decoded.end].to_string(),
                line,
                column,
                kind: if decoded.rewritable() {
                    Kind::Value
                } else {
                    Kind::Text
                },
                yaml_path: Some(ypath.to_string()),
                position,
                resource: facts.resource(),
                cluster_position: position.is_some(),
                hint_source: hint
                    .as_ref()
                    .map_or(locate::HintSource::Manifest, |(_, s)| *s),
                cluster_hint: hint.map(|(h, _)| h),
                encoding: None,
                value_range: Some(decoded.start..decoded.replace_end),
                event: Some(ti),
                escaped,
                found: raw,
            });
        }
    }
    for o in occurrences.iter_mut().filter(|o| o.kind == Kind::Value) {
        if !crate::rewrite::bare_ip_names_server(o, text) {
            o.kind = Kind::Text; // the one rule for bare IPs (see `rewrite`)
        }
    }
    let destinations = if facts.dest_server.is_some() || facts.dest_name.is_some() {
        vec![Destination {
            resource: facts.resource().unwrap_or_default(),
            server: facts.dest_server.clone(),
            name: facts.dest_name.clone(),
        }]
    } else {
        Vec::new()
    };
    Ok(Located {
        occurrences,
        destinations,
        proof: Proof {
            json: true,
            ..Proof::default()
        },
    })
}

/// The cluster-naming members of objects, by the object's path.
type Names = HashMap<Vec<json::Seg>, Vec<(String, String)>>;

/// The document's facts (`kind`, `metadata.name`, the destination), and the
/// cluster-naming members (`name`, `cluster`, `clusterName`) of every
/// object, keyed by the object's path.
fn facts(doc: &Document) -> (Facts, Names) {
    let mut facts = Facts::default();
    let mut names = Names::new();
    for t in &doc.tokens {
        let (Some(value), Some(key)) = (t.str_value(), member_key(t)) else {
            continue;
        };
        if t.is_key() {
            continue;
        }
        let is_name = positions::is_name_key(key);
        if !is_name && !positions::may_be_fact(key) {
            continue;
        }
        let mut path = doc.path(t);
        if path.len() <= positions::FACT_DEPTH {
            let keys = keys(&path);
            // A fact never lives below an array.
            let fact = (keys.len() == path.len())
                .then(|| positions::fact(&keys))
                .flatten();
            let slot = match fact {
                Some(Fact::Kind) => Some(&mut facts.kind),
                Some(Fact::Name) => Some(&mut facts.name),
                Some(Fact::DestinationServer) => Some(&mut facts.dest_server),
                Some(Fact::DestinationName) => Some(&mut facts.dest_name),
                _ => None,
            };
            if let Some(slot) = slot {
                *slot = Some(value.to_string());
            }
        }
        if is_name {
            path.pop();
            names
                .entry(path)
                .or_default()
                .push((key.to_string(), value.to_string()));
        }
    }
    (facts, names)
}

/// Whether a string is worth searching: the same test the YAML locator makes
/// of a scalar (it names a recognised or `--from` host, or holds a URL where
/// a cluster can be). Computes the token's path into `path` when it needs it.
fn may_hold(
    doc: &Document,
    t: &Token,
    value: &str,
    hosts: &[String],
    only: bool,
    path: &mut Option<Vec<json::Seg>>,
) -> bool {
    if !value.bytes().any(|b| b == b'.' || b == b':') {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if only {
        return hosts.iter().any(|h| endpoint::contains_host(&lower, h));
    }
    if endpoint::may_hold_named(&lower, hosts) {
        return true;
    }
    if !lower.contains("https://") {
        return false;
    }
    let p = path.get_or_insert_with(|| doc.path(t));
    if p.len() == 1 && !t.is_key() {
        return true;
    }
    let mut keys = keys(p);
    if t.is_key() {
        keys.pop();
    }
    positions::may_hold(&keys, &lower)
}

/// The endpoints in the string token at `range` (quotes included) whose
/// decoded value is `value`: each as its raw bytes in `text`, as found in the
/// decoded value, and, when the string is written with escapes, the
/// [`Escaped`] a rewrite needs.
fn string_finds(
    text: &str,
    range: Range<usize>,
    value: &str,
    hosts: &[String],
    only: bool,
) -> Vec<(Found, Found, Option<Escaped>)> {
    let body = range.start + 1..range.end - 1;
    let raw_body = &text[body.clone()];
    let mut finds = endpoint::find_in_decoded(value, hosts);
    if only {
        finds.retain(|f| hosts.iter().any(|h| endpoint::same_host(h, &f.host)));
    }
    if !raw_body.contains('\\') {
        // Raw and decoded are the same bytes.
        return finds
            .into_iter()
            .map(|f| {
                let mut raw = f.clone();
                raw.start += body.start;
                raw.end += body.start;
                raw.replace_end += body.start;
                (raw, f, None)
            })
            .collect();
    }
    // The tokenizer and the escape map read JSON escapes the same way; a
    // string they disagree on is not searched (the rewrite could not be
    // verified against it).
    let Some(decoded) = endpoint::json_escape_map(raw_body).filter(|d| d.text == value) else {
        return Vec::new();
    };
    let spans = decoded.spans;
    let raw_at = |d: usize, end: bool| -> usize {
        let hit = if end {
            spans.iter().find(|(_, dr)| dr.end >= d && dr.start < d)
        } else {
            spans.iter().find(|(_, dr)| dr.end > d)
        };
        body.start + hit.map_or(raw_body.len(), |(r, _)| if end { r.end } else { r.start })
    };
    finds
        .into_iter()
        .map(|f| {
            let mut raw = f.clone();
            raw.start = raw_at(f.start, false);
            raw.end = raw_at(f.end, true);
            raw.replace_end = raw_at(f.replace_end, true);
            let esc = Escaped {
                inner: body.clone(),
                found: f.clone(),
            };
            (raw, f, Some(esc))
        })
        .collect()
}

/// Checks a rewrite of a JSON file located by [`locate`]: `new_text` must be
/// `old_text` with only the strings holding `changes` changed, each to its old
/// decoded value with `from` rebound to `to` (every occurrence of `from` in
/// it, as `endpoint::rewrite_value` says), and every other byte the same.
pub fn verify(
    old_text: &str,
    new_text: &str,
    changes: &[Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), String> {
    let doc = json::tokenize(old_text)
        .map_err(|e| format!("the file no longer reads as JSON ({e}); nothing written"))?;
    let mut planned: Vec<json::Change> = Vec::new();
    for o in changes {
        let at = o.found.start;
        let i = doc.tokens.partition_point(|t| t.range.start <= at);
        let token = i
            .checked_sub(1)
            .map(|i| &doc.tokens[i])
            .filter(|t| t.range.end > at);
        let Some((t, value)) = token.and_then(|t| Some((t, t.str_value()?))) else {
            return Err(format!(
                "verification failed at {}:{}: the change is not inside a JSON string; nothing written",
                o.line, o.column
            ));
        };
        if planned.last().is_some_and(|c| c.range == t.range) {
            continue;
        }
        planned.push(json::Change {
            range: t.range.clone(),
            value: endpoint::rewrite_value(value, from, to),
        });
    }
    json::verify_same_except(old_text, new_text, &planned)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "verification failed at {}:{} of the rewritten file: {}; nothing written",
                e.line, e.column, e.message
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";
    const OTHER: &str = "fedcba9876543210fedcba9876543210.gr7.ap-northeast-2.eks.amazonaws.com";

    fn ep(host: &str) -> Endpoint {
        Endpoint::parse("--from", &format!("https://{host}")).unwrap()
    }

    /// An Application as Python's `json.dump` writes it: an emoji as a
    /// surrogate pair, which the YAML parser refuses.
    fn app(server: &str) -> String {
        format!(
            "{{\"apiVersion\": \"argoproj.io/v1alpha1\", \"kind\": \"Application\", \"metadata\": {{\"name\": \"\\ud83d\\ude00 app\"}},\n \"spec\": {{\"destination\": {{\"server\": \"{server}\", \"namespace\": \"x\"}}}}}}\n"
        )
    }

    #[test]
    fn surrogate_pairs_do_not_hide_the_destination() {
        let text = app(&format!("https://{HOST}"));
        assert!(locate::locate_yaml(&text, &[], false).is_err());
        let l = locate(&text, &[], false).unwrap();
        assert_eq!(l.occurrences.len(), 1);
        let o = &l.occurrences[0];
        assert_eq!(o.yaml_path.as_deref(), Some("spec.destination.server"));
        assert_eq!(o.resource.as_deref(), Some("Application/😀 app"));
        assert!(o.cluster_position);
        assert!(o.escaped.is_none());
        assert_eq!(&text[o.found.start..o.found.end], format!("https://{HOST}"));
        assert_eq!(o.line, 2);
        assert!(l.proof.json);
        assert_eq!(l.destinations.len(), 1);
        assert_eq!(
            l.destinations[0].server.as_deref(),
            Some(&*format!("https://{HOST}"))
        );
    }

    #[test]
    fn an_escaped_endpoint_maps_to_its_raw_bytes_and_splices_as_json() {
        let raw = format!("\\u0068ttps:\\/\\/{HOST}");
        let text = app(&raw);
        let hosts = [HOST.to_string()];
        let l = locate(&text, &hosts, true).unwrap();
        let o = &l.occurrences[0];
        assert_eq!(&text[o.found.start..o.found.end], raw);
        assert_eq!(o.endpoint, format!("https://{HOST}"));
        let esc = o.escaped.as_ref().unwrap();
        assert_eq!(&text[esc.inner.clone()], raw);
        let (from, to) = (ep(HOST), ep(OTHER));
        let new = crate::rewrite::splice(&text, &l.occurrences, &to, true).unwrap();
        assert_eq!(new, app(&format!("https://{OTHER}")));
        verify(&text, &new, &l.occurrences, &from, &to).unwrap();
        // Anything else changed is refused.
        let bad = new.replace("\"x\"", "\"y\"");
        let e = verify(&text, &bad, &l.occurrences, &from, &to).unwrap_err();
        assert!(e.contains("differs"), "{e}");
        // The string not rewritten as planned is refused.
        let e = verify(&text, &text, &l.occurrences, &from, &to).unwrap_err();
        assert!(e.contains("the plan says"), "{e}");
    }

    #[test]
    fn keys_and_list_elements_are_classified_like_yaml() {
        let text = format!(
            "{{\"kind\": \"ApplicationSet\", \"x\": \"\\ud83d\\ude00\", \"spec\": {{\"generators\": [{{\"list\": {{\"elements\": [{{\"cluster\": \"prod\", \"url\": \"https://{HOST}\"}}]}}}}],\n \"template\": {{\"spec\": {{\"destination\": {{\"server\": \"{{{{url}}}}\"}}}}}}}}, \"https://{HOST}\": 1}}"
        );
        let yaml_view = text.replace("\\ud83d\\ude00", "smile");
        let via_yaml = locate::locate_yaml(&yaml_view, &[], false).unwrap();
        let l = locate(&text, &[], false).unwrap();
        let view = |l: &Located| {
            l.occurrences
                .iter()
                .map(|o| {
                    (
                        o.yaml_path.clone(),
                        o.position,
                        o.cluster_hint.clone(),
                        o.resource.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(view(&l), view(&via_yaml));
        assert_eq!(l.occurrences.len(), 2);
        assert_eq!(l.occurrences[0].cluster_hint.as_deref(), Some("prod"));
    }

    /// What a consumer sees of an occurrence (the event index differs by design).
    fn seen(l: &Located) -> Vec<String> {
        let mut out: Vec<String> = l
            .occurrences
            .iter()
            .map(|o| {
                format!(
                    "{:?} {}:{} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?}",
                    o.found,
                    o.line,
                    o.column,
                    o.endpoint,
                    o.kind,
                    o.yaml_path,
                    o.position,
                    o.resource,
                    o.cluster_position,
                    o.cluster_hint,
                    o.escaped.as_ref().map(|e| (&e.inner, &e.found)),
                )
            })
            .collect();
        out.extend(l.destinations.iter().map(|d| format!("{d:?}")));
        out
    }

    #[test]
    fn json_the_yaml_parser_reads_is_located_the_same_either_way() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut texts: Vec<String> = [
            "app-of-apps/apps/node-local-dns.json",
            "discovery/platforms/managed/clusters.json",
        ]
        .iter()
        .map(|p| std::fs::read_to_string(root.join(p)).unwrap())
        .collect();
        // Escapes, a block string with a `server:` line, a Secret's config,
        // a BOM and CRLF. (Embedded documents — JSON 6902 op lists, the
        // last-applied annotation — are read by the YAML locator only: a file
        // that falls back to this module does not get them.)
        texts.push(format!(
            "\u{feff}{{\"kind\": \"Secret\", \"metadata\": {{\"name\": \"prod\"}},\r\n \"stringData\": {{\"name\": \"prod\", \"server\": \"\\u0068ttps:\\/\\/{HOST}\",\r\n \"config\": \"{{\\\"tlsClientConfig\\\": {{\\\"serverName\\\": \\\"{HOST}\\\"}}}}\"}},\r\n \"values\": \"a: 1\\nserver: https://{HOST}:443\\n\", \"list\": [\"https://{OTHER}\", \"https://example.com\"]}}\r\n"
        ));
        for text in &texts {
            let via_yaml = locate::locate_yaml(text, &[], false).unwrap();
            let via_json = locate(text, &[], false).unwrap();
            assert_eq!(seen(&via_json), seen(&via_yaml), "{text}");
            assert!(!seen(&via_yaml).is_empty(), "{text}");
            let hosts: Vec<String> = via_yaml
                .occurrences
                .iter()
                .map(|o| o.found.host.to_ascii_lowercase())
                .collect();
            let via_yaml = locate::locate_yaml(text, &hosts, true).unwrap();
            let via_json = locate(text, &hosts, true).unwrap();
            assert_eq!(seen(&via_json), seen(&via_yaml), "{text}");
        }
    }

    #[test]
    fn invalid_json_is_an_error_with_its_position() {
        let e = locate("{\"a\": [1,]}", &[], false).unwrap_err();
        assert_eq!((e.line, e.column), (1, 10));
    }
}
