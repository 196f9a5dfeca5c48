//! Escapes inside embedded documents (a Helm `values: |` text, a cluster
//! Secret's `stringData.config` JSON, kustomize patches): an endpoint written
//! `https:\/\/host:port/path` (JSON's escaped slash) is rewritten with its
//! port and path kept, and an IPv6 `--to` gives a valid URL (brackets before
//! the port); one written with `\u0068`, `\u002e` or `\u002f` escapes is
//! rewritten, or reported with file:line:column and why, never missed in
//! silence.

use crate::common::*;
use std::path::Path;

const FROM: &str =
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com:6443";
const TO: &str = "https://new.example.com:7443";
const TO_V6: &str = "https://[fd00::2]:6443";

/// The three kinds of embedded document, each holding `inner` (a JSON
/// string body, `H` for the old host) where the endpoint goes.
fn files(inner: &str) -> Vec<(&'static str, String)> {
    let inner = inner.replace('H', OLD_HOST);
    vec![
        (
            "helm.yaml",
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n  source:\n    helm:\n      values: |\n        cluster:\n          api: \"{inner}\"\n"
            ),
        ),
        (
            "secret.yaml",
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-a\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: a\n  config: |\n    {{\"execProviderConfig\": {{\"args\": [\"{inner}\"]}}}}\n"
            ),
        ),
        (
            "kustomization.yaml",
            format!(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n  - target: {{kind: Application}}\n    patch: |-\n      [{{\"op\": \"replace\", \"path\": \"/spec/destination/server\", \"value\": \"{inner}\"}}]\n"
            ),
        ),
    ]
}

fn write(dir: &Path, inner: &str) {
    for (name, text) in files(inner) {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn apply(dir: &Path, to: &str) -> std::process::Output {
    rebind(
        dir,
        &["apply", "--from", FROM, "--to", to, "--yes", "--no-commit"],
    )
}

/// Writes the three files with `inner`, applies `--to to`, and requires
/// each to read as written with `want` in place of `inner`.
fn rewritten(inner: &str, to: &str, want: &str) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), inner);
    let out = apply(dir.path(), to);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for (name, text) in files(want) {
        let got = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(got, text, "{name}");
    }
}

#[test]
fn an_escaped_slash_keeps_the_port_and_path() {
    rewritten(
        "https:\\/\\/H:6443\\/api/v1?x=1",
        TO,
        "https:\\/\\/new.example.com:7443\\/api/v1?x=1",
    );
}

#[test]
fn an_ipv6_to_keeps_its_brackets_before_the_port() {
    rewritten(
        "https:\\/\\/H:6443/x",
        TO_V6,
        "https:\\/\\/[fd00::2]:6443/x",
    );
    // The same rule for a bare `host:port` read by its key (quoted: a
    // plain value cannot start with `[`).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kubeconfig.yaml"),
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster:\n    server: {FROM}\n    tls-server-name: \"{OLD_HOST}:6443\"\n"),
    )
    .unwrap();
    let out = apply(dir.path(), TO_V6);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = std::fs::read_to_string(dir.path().join("kubeconfig.yaml")).unwrap();
    assert!(
        got.contains("tls-server-name: \"[fd00::2]:6443\"\n"),
        "{got}"
    );
    assert!(!got.contains("fd00::2:6443"), "{got}");
}

/// Each escape spelling of the endpoint in each embedded kind: either
/// rewritten (the decoded inner value then names the new endpoint) or named
/// with file:line:column and why; never left in silence.
#[test]
fn unicode_escapes_are_never_silent() {
    for inner in [
        "\\u0068ttps://H:6443/y",
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F\\u002egr7.ap-northeast-2.eks.amazonaws.com:6443",
        "https:\\u002f\\u002fH:6443/q",
        "\\u0068ttps:\\/\\/H:6443",
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), inner);
        let before = tree(dir.path());
        let out = apply(dir.path(), TO);
        let (o, e) = (stdout(&out), stderr(&out));
        let after = tree(dir.path());
        for (name, _) in files(inner) {
            if before[name] != after[name] {
                // Rewritten: the new endpoint is there, the old host gone.
                let got = String::from_utf8(after[name].clone()).unwrap();
                assert!(
                    !got.contains(OLD_HOST) && got.contains("new.example.com:7443"),
                    "{inner}: {name}\n{got}"
                );
                continue;
            }
            // Not rewritten: named where it is written, with why.
            let line = files(inner)
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| {
                    t.lines()
                        .position(|l| l.contains(&inner.replace('H', OLD_HOST)))
                        .unwrap()
                        + 1
                })
                .unwrap();
            let at = format!("{name}:{line}:");
            let said = o.lines().chain(e.lines()).find(|l| l.contains(&at));
            assert!(
                said.is_some_and(|l| l.contains("escapes")),
                "{inner}: {name} neither rewritten nor named at {at} with why:\n{o}{e}"
            );
        }
        // Named only, nothing rewritten: a failing code for a gate.
        if before == after {
            assert_eq!(out.status.code(), Some(2), "{inner}\n{o}{e}");
        }
    }
}

/// `scan` lists them too, at their line.
#[test]
fn scan_lists_an_endpoint_behind_inner_escapes() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F\\u002egr7.ap-northeast-2.eks.amazonaws.com",
    );
    let out = rebind(dir.path(), &["scan"]);
    let s = stdout(&out);
    for at in ["helm.yaml:12:", "secret.yaml:10:", "kustomization.yaml:6:"] {
        assert!(s.contains(at), "{at} missing:\n{s}{}", stderr(&out));
    }
}

/// The same inside a Secret's base64 `data` (its decoded JSON) and where an
/// escape's last hex digit is the character it stands for (`\u0035` is
/// `5`, which a plain search reads as the host's first character): found,
/// and reported beside the values rewritten, never missed in silence.
#[test]
fn escapes_in_decoded_data_and_look_alike_escapes_are_reported() {
    let host = OLD_HOST;
    let dotted = host.replacen('.', "\\u002e", 1);
    let five = host.replacen('5', "\\u0035", 1);
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n  config: {}\n  extra: {}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: other\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: {FROM}\n  config: |\n    {{\"tlsClientConfig\": {{\"serverName\": \"{five}\"}}}}\n",
        base64(FROM),
        base64(&format!("{{\"tlsClientConfig\":{{\"serverName\":\"{dotted}\"}}}}")),
        base64(&format!("{{\"backup\":\"https:\\u002f\\u002f{host}:6443\"}}")),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), &text).unwrap();
    let out = apply(dir.path(), TO);
    let said = stdout(&out) + &stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    // Two values rewritten (data.server, stringData.server); three reported.
    let reported = said
        .lines()
        .filter(|l| l.contains("written with escapes inside a document"))
        .count();
    assert_eq!(reported, 3, "{said}");
    for at in [
        "s.yaml:9:11: text",
        "s.yaml:10:10: text",
        "s.yaml:21:41: text",
    ] {
        assert!(said.contains(at), "{at}: {said}");
    }
}
