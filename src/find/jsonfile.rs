//! Locating and verifying endpoints in a file that is valid JSON but that the
//! YAML parser refuses: surrogate-pair escapes such as `"\ud83d\ude00"` (what
//! Python's `json.dump` writes by default), or anything else RFC 8259 allows
//! and `yaml-rust2` does not. Valid JSON never blocks a rebind.
//!
//! [`locate()`] reads the file with [`json::tokenize`]
//! and hands its events (the same stream of scalars, paths, decoded values
//! and byte offsets the YAML parser gives) to the YAML locator's own core
//! ([`locate::locate_json_for`]): one classifier decides positions, naming
//! hints, bare hosts and embedded documents for both. Strings with escapes
//! are read by JSON's escape rules and rewritten through
//! [`endpoint::splice_decoded_json`] (or refused by position).
//!
//! [`verify`] is what `rewrite::verify` runs for such a file: every byte
//! outside the planned strings is unchanged, and each planned string decodes
//! to its old value with the endpoint rebound
//! ([`json::verify_same_except`]).

use crate::find::locate::{self, Located, Occurrence, Want};
use crate::syntax::json;
use crate::text::endpoint::{self, Endpoint};

/// Locates every endpoint occurrence in `text`, a JSON text; with `only`, just
/// the occurrences of `extra_hosts` (lower-case), as `locate::locate_yaml`
/// does, cluster names included. `Err` when `text` is not valid JSON.
pub fn locate(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, json::Error> {
    locate_for(text, extra_hosts, Want { only, names: true })
}

/// [`locate()`], locating what `want` says: the YAML locator's own core
/// ([`locate::locate_json_for`]), so a file gets the same inventory whichever
/// parser reads it.
pub fn locate_for(text: &str, extra_hosts: &[String], want: Want) -> Result<Located, json::Error> {
    locate::locate_json_for(text, extra_hosts, want)
}

/// Checks a rewrite of a JSON file located by [`locate()`]: `new_text` must be
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
        let value = match o.encoding {
            // Base64 (a Secret's `data`): re-encoded with its text rebound.
            Some(locate::Encoding::Base64) => {
                crate::find::embedded::reencoded(value, |d| endpoint::rewrite_value(d, from, to))
                    .ok_or_else(|| {
                        format!(
                            "verification failed at {}:{}: the base64 value does not decode; nothing written",
                            o.line, o.column
                        )
                    })?
            }
            None => endpoint::rewrite_value(value, from, to),
        };
        planned.push(json::Change {
            range: t.range.clone(),
            value,
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
        // The splice itself is the edit layer's (tests/it/json_files.rs runs it
        // end to end); here, the rewrite it must produce passes the check.
        let new = app(&format!("https://{OTHER}"));
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
        // a BOM and CRLF. (`tests/reader_parity.rs` checks any document.)
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
