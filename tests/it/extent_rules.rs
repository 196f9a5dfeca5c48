//! One rule for a URL's extent, end to end: a trailing-dot host keeps its
//! port, Unicode white space ends a URL, a URL with another (even invalid)
//! port is not the endpoint, and `--to` is a name DNS can hold, written as
//! given.

use crate::common::*;
use std::fs;
use std::path::Path;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn app(body: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\nspec:\n{body}"
    )
}

/// Runs `apply --no-commit --yes`; returns the exit code, the file after, and stderr.
fn apply(text: &str, from: &str, to: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.yaml", text);
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            from,
            "--to",
            to,
            "app.yaml",
        ],
    );
    let after = fs::read_to_string(dir.path().join("app.yaml")).unwrap();
    (out.status.code(), after, stderr(&out) + &stdout(&out))
}

#[test]
fn a_trailing_dot_host_keeps_its_port_in_every_spelling() {
    let text = app(
        "  destination:\n    server: https://api.ocp.example.com.:6443\n  source:\n    helm:\n      values: |\n        server: \"https://API.ocp.example.com.:6443/x\"\n  info:\n    tlsClientConfig:\n      serverName: api.ocp.example.com.:6443\n",
    );
    // `--from` without the port is another endpoint: nothing holds it.
    let (code, after, out) = apply(
        &text,
        "https://api.ocp.example.com",
        "https://api.new.example.com:6443",
    );
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(after, text, "{out}");
    assert!(!after.contains(":6443.:6443"));
    // With the port, in any spelling of the name, every place is rewritten.
    for from in [
        "https://api.ocp.example.com:6443",
        "https://API.ocp.example.com.:6443/",
    ] {
        let (code, after, out) = apply(&text, from, "https://api.new.example.com:6443");
        assert_eq!(code, Some(0), "{from}: {out}");
        assert_eq!(
            after,
            text.replace(
                "https://api.ocp.example.com.:6443",
                "https://api.new.example.com:6443"
            )
            .replace(
                "https://API.ocp.example.com.:6443",
                "https://api.new.example.com:6443"
            )
            .replace("api.ocp.example.com.:6443", "api.new.example.com:6443"),
            "{from}"
        );
    }
    // `--to` written as an absolute name is written so.
    let (code, after, out) = apply(
        &text,
        "https://api.ocp.example.com:6443",
        "https://api.new.example.com.:7443",
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        after.contains("server: https://api.new.example.com.:7443\n"),
        "{after}"
    );
    assert!(
        after.contains("serverName: api.new.example.com.:7443\n"),
        "{after}"
    );
}

#[test]
fn unicode_white_space_ends_a_url_and_the_next_endpoint_is_found() {
    for ws in ['\u{a0}', '\u{2028}', '\u{3000}', '\u{2009}', '\u{85}'] {
        let text = app(&format!(
            "  destination:\n    server: {OLD}\n  info: \"https://docs.example.com/runbook{ws}{OLD}/api{ws}{OLD}\"\n"
        ));
        let (code, after, out) = apply(&text, OLD, NEW);
        assert_eq!(code, Some(0), "U+{:04X}: {out}", ws as u32);
        assert_eq!(after, text.replace(OLD, NEW), "U+{:04X}", ws as u32);
    }
}

#[test]
fn an_ipv6_url_with_another_or_an_invalid_port_is_not_the_endpoint() {
    let text = app(
        "  destination:\n    server: https://[fd00::1]:6443\n  source:\n    helm:\n      valuesObject:\n        clusterEndpoint: https://[fd00::1]:99999\n        other:\n          clusterEndpoint: https://[fd00::1]:6443x\n        third:\n          clusterEndpoint: https://[fd00::1]:7443\n",
    );
    let (code, after, out) = apply(&text, "https://[fd00::1]:6443", "https://[fd00::2]:6443");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        after,
        text.replacen("https://[fd00::1]:6443\n", "https://[fd00::2]:6443\n", 1),
        "{out}"
    );
    // The same for a DNS host with a port that is no port.
    let text = app(
        "  destination:\n    server: https://api.ocp.example.com:6443\n  x:\n    clusterEndpoint: https://api.ocp.example.com:6443x\n  y:\n    clusterEndpoint: https://api.ocp.example.com:abc\n",
    );
    let (code, after, out) = apply(
        &text,
        "https://api.ocp.example.com",
        "https://api.new.example.com",
    );
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(after, text);
}

#[test]
fn to_must_be_a_dns_name_and_a_leading_zero_port_is_refused() {
    let text = app("  destination:\n    server: https://old.example.com\n");
    let long = format!("https://{}.example.com", "a".repeat(64));
    for (to, says) in [
        ("https://-bad.example.com", "starts or ends with '-'"),
        ("https://a_b.example.com", "holds '_'"),
        (long.as_str(), "DNS allows 1-63"),
        ("https://h.example.com:0443", "leading zero"),
    ] {
        let (code, after, out) = apply(&text, "https://old.example.com", to);
        assert_eq!(code, Some(2), "{to}: {out}");
        assert_eq!(after, text, "{to}");
        assert!(out.contains(says), "{to}: {out}");
    }
    // A port is written as given, 443 included.
    let (code, after, out) = apply(
        &text,
        "https://old.example.com",
        "https://h.example.com:443",
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        after.contains("server: https://h.example.com:443\n"),
        "{after}"
    );
}

#[test]
fn a_bare_ip_is_rewritten_only_standing_alone_where_a_bare_host_names_the_server() {
    let from = "https://10.0.0.1:6443";
    let to = "https://10.0.0.2:6443";
    // Standing alone at a bare-host position: rewritten (YAML, JSON in a
    // string, a karpenter clusterEndpoint, a kubeconfig).
    let yes = app(
        "  destination:\n    server: https://10.0.0.1:6443\n  source:\n    helm:\n      valuesObject:\n        settings:\n          clusterEndpoint: 10.0.0.1:6443 # the API server\n",
    );
    let (code, after, out) = apply(&yes, from, to);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(after, yes.replace("10.0.0.1", "10.0.0.2"), "{out}");
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: https://10.0.0.1:6443\n  config: '{\"tlsClientConfig\": {\"serverName\": \"10.0.0.1\"}}'\n";
    let (code, after, out) = apply(secret, from, to);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(after, secret.replace("10.0.0.1", "10.0.0.2"), "{out}");
    // In prose inside such a value, or anywhere else: a mention, never rewritten.
    let no = app(
        "  destination:\n    server: https://10.0.0.1:6443\n  source:\n    helm:\n      valuesObject:\n        settings:\n          clusterEndpoint: \"the old one was 10.0.0.1 and stays\"\n          note: 10.0.0.1\n",
    );
    let (code, after, out) = apply(&no, from, to);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        after,
        no.replace("server: https://10.0.0.1", "server: https://10.0.0.2"),
        "{out}"
    );
    for at in [
        "app.yaml:12:45: text 10.0.0.1",
        "app.yaml:13:17: text 10.0.0.1",
    ] {
        let line = format!("{at} (a bare IP address names the API server only standing alone");
        assert!(out.contains(&line), "{line}\n{out}");
    }
    // scan says the same of them.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.yaml", &no);
    let s = stdout(&rebind(dir.path(), &["scan", "--from", from]));
    assert!(s.contains("app.yaml:12:45: text     10.0.0.1  spec.source.helm.valuesObject.settings.clusterEndpoint"), "{s}");
    assert!(
        s.contains(
            "app.yaml:13:17: text     10.0.0.1  spec.source.helm.valuesObject.settings.note"
        ),
        "{s}"
    );
    // The same in a JSON file that only reads as JSON (a surrogate pair).
    let json = "{\"kind\": \"Application\", \"metadata\": {\"name\": \"x\\ud83d\\ude00\"}, \"spec\": {\"destination\": {\"server\": \"https://10.0.0.1:6443\"}, \"x\": \"10.0.0.1\", \"y\": \"see 10.0.0.1:6443 here\"}}\n";
    let (code, after, out) = apply(json, from, to);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        after,
        json.replace("\"https://10.0.0.1", "\"https://10.0.0.2"),
        "{out}"
    );
    assert!(out.contains("text 10.0.0.1:6443"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.json", json);
    let s = stdout(&rebind(dir.path(), &["scan", "--from", from]));
    assert!(
        s.contains("app.json:1:131: text     10.0.0.1  spec.x"),
        "{s}"
    );
    assert!(
        s.contains("app.json:1:100: value    https://10.0.0.1:6443"),
        "{s}"
    );
}

#[test]
fn the_old_host_in_a_url_of_another_scheme_is_reported_never_rewritten() {
    let from = "https://old.example.com";
    let text = app(
        "  destination:\n    server: https://old.example.com\n  info:\n    dashboard: http://old.example.com:8080/ui\n    ws: \"wss://OLD.example.com/stream and grpc://old.example.com:9090\"\n    tls:\n      serverName: old.example.com\n    other: http://old.example.com.evil.com/\n# grafana: http://old.example.com:3000\n",
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.yaml", &text);
    let out = rebind(
        dir.path(),
        &["diff", "--from", from, "--to", "https://new.example.com"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let d = stdout(&out);
    assert!(d.contains("2 changes in 1 file"), "{d}");
    for (at, url) in [
        ("app.yaml:9:16: text", "http://old.example.com:8080/ui"),
        ("app.yaml:10:10: text", "wss://OLD.example.com/stream"),
        ("app.yaml:10:43: text", "grpc://old.example.com:9090"),
        ("app.yaml:14:12: comment", "http://old.example.com:3000"),
    ] {
        let line = format!("{at} {url} (another scheme than https: not the API endpoint;");
        assert!(d.contains(&line), "{line}\n{d}");
    }
    let listed = d.split("Not rewritten").nth(1).unwrap_or_default();
    assert!(listed.contains("4 mentions"), "{d}");
    assert!(!listed.contains("evil"), "{d}");
    let out = rebind(dir.path(), &["scan", "--from", from]);
    let s = stdout(&out);
    assert!(
        s.contains("app.yaml:9:16: text     http://old.example.com:8080/ui"),
        "{s}"
    );
    assert!(
        s.contains("(+ 1 comment, 3 text mentions, not rewritable)"),
        "{s}"
    );
    let (code, after, out) = apply(&text, from, "https://new.example.com");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        after,
        text.replace("server: https://old", "server: https://new")
            .replace("serverName: old", "serverName: new"),
    );
}

#[test]
fn a_bare_ipv6_server_name_follows_its_cluster() {
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: https://[fd00::1]:6443\n  config: |\n    {\"tlsClientConfig\": {\"serverName\": \"fd00::1\"}}\n";
    let (code, after, out) = apply(secret, "https://[fd00::1]:6443", "https://[fd00::2]:6443");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(after, secret.replace("fd00::1", "fd00::2"), "{out}");
}
