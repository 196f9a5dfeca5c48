//! The shared YAML reader: every reader sees the same document the same way.

use std::fs;

const SERVER: &str =
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

/// A cluster Secret saved with a byte order mark and `kind` as its first
/// key: the BOM is not part of the key, so the registration is found (the
/// search used to hand the BOM to the parser, which read the first key as
/// `\u{feff}kind`).
#[test]
fn the_registration_search_skips_a_bom_like_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "\u{feff}kind: Secret\napiVersion: v1\nmetadata:\n  name: prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {SERVER}\n"
    );
    fs::write(dir.path().join("cluster.yaml"), text).unwrap();
    let found = rebind::review::secret::find_registrations(dir.path(), SERVER).unwrap();
    assert_eq!(found.registrations.len(), 1, "{found:?}");
    let d = &found.registrations[0].declared_at[0];
    assert_eq!((d.rel.as_str(), d.line, d.column), ("cluster.yaml", 10, 11));
    assert_eq!(d.resource, "Secret/prod");
}

/// The config reader reports positions from the same model: a BOM is not a
/// column of line 1.
#[test]
fn the_config_reader_counts_columns_after_a_bom() {
    let e = rebind::model::config::parse(
        std::path::Path::new(".rebind.yaml"),
        "\u{feff}clusters: {prod: &a {endpoint: https://a.example.com}}\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with(".rebind.yaml:1:18: anchors"), "{e}");
}

/// The search points at the registration's URL by the endpoint rules, not at
/// the first text that merely contains its host.
#[test]
fn the_registration_search_points_at_the_url_not_at_a_longer_host() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels: {argocd.argoproj.io/secret-type: cluster}\nstringData: {name: api-h.example.com, server: \"https://h.example.com\"}\n";
    fs::write(dir.path().join("c.yaml"), text).unwrap();
    let found =
        rebind::review::secret::find_registrations(dir.path(), "https://h.example.com").unwrap();
    let d = &found.registrations[0].declared_at[0];
    let col = text.lines().nth(5).unwrap().find("https://").unwrap() + 1;
    assert_eq!((d.line, d.column), (6, col));
}

/// A base64 `data.server` is compared with the asked-for host by the
/// endpoint rules (an IPv6 literal is the same host with or without brackets).
#[test]
fn a_base64_server_is_matched_by_the_endpoint_rules() {
    let t = "kind: Secret\ndata:\n  server: aHR0cHM6Ly9bZmQwMDo6MV06NjQ0Mw==\n";
    let all = rebind::find::locate::locate_yaml(t, &[], false).unwrap();
    let host = all.occurrences[0].found.host.to_ascii_lowercase();
    for h in [host.clone(), host.trim_matches(['[', ']']).to_string()] {
        let l = rebind::find::locate::locate_yaml(t, std::slice::from_ref(&h), true).unwrap();
        assert_eq!(l.occurrences.len(), 1, "{h}");
        assert_eq!(l.occurrences[0].endpoint, "https://[fd00::1]:6443");
    }
}

/// The registration search reads files the way every command does: a
/// UTF-16 manifest (byte order mark first) is decoded, not skipped.
#[test]
fn the_registration_search_reads_utf16_like_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "kind: Secret\nmetadata:\n  name: prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: {SERVER}\n"
    );
    let mut bytes = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        bytes.extend(u.to_le_bytes());
    }
    fs::write(dir.path().join("cluster.yaml"), bytes).unwrap();
    let found = rebind::review::secret::find_registrations(dir.path(), SERVER).unwrap();
    assert_eq!(found.registrations.len(), 1, "{found:?}");
    assert_eq!(found.registrations[0].declared_at[0].line, 7);
}
