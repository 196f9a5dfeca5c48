//! Locating endpoints in a file that is valid JSON but that the
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
//! [`crate::text::endpoint::splice_decoded_json`] (or refused by position);
//! the rewrite is verified by the edit layer's one verification.

use crate::find::locate::{self, Located, Want};
use crate::syntax::json;

/// Locates every endpoint occurrence in `text`, a JSON text; with `only`, just
/// the occurrences of `extra_hosts` (lower-case), as `locate::locate_yaml`
/// does, cluster names included. `Err` when `text` is not valid JSON.
pub fn locate(text: &str, extra_hosts: &[String], only: bool) -> Result<Located, json::Error> {
    locate_for(text, extra_hosts, Want::named(only))
}

/// [`locate()`], locating what `want` says: the YAML locator's own core
/// ([`locate::locate_json_for`]), so a file gets the same inventory whichever
/// parser reads it.
pub fn locate_for(text: &str, extra_hosts: &[String], want: Want) -> Result<Located, json::Error> {
    locate::locate_json_for(text, extra_hosts, want)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";
    const OTHER: &str = "fedcba9876543210fedcba9876543210.gr7.ap-northeast-2.eks.amazonaws.com";

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
        assert!(l.json);
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
