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
/// and, as rebind cannot rewrite them in place, the run is refused naming
/// each (rewriting only the rest would leave them on the old endpoint: a
/// half cutover, with `serverName` at a cluster position).
#[test]
fn escapes_in_decoded_data_and_look_alike_escapes_are_refused() {
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
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.yaml")).unwrap(),
        text
    );
    let refused = said
        .lines()
        .filter(|l| l.contains("is written with escapes inside a document held in a string"))
        .count();
    assert_eq!(refused, 3, "{said}");
    for at in ["s.yaml:9:11: ", "s.yaml:10:10: ", "s.yaml:21:41: "] {
        assert!(said.contains(at), "{at}: {said}");
    }
}

/// One layer an endpoint can be written in: the file's name and its text
/// with `v` (the endpoint as a JSON string body writes it) in place.
type Layer = (&'static str, fn(&str) -> String);

/// Every layer: a plain double-quoted YAML value, a JSON file, a JSON
/// document held in a YAML block string, the same JSON held in a YAML
/// double-quoted string (its escapes escaped once more), a kubeconfig in a
/// Secret's `stringData`, the same kubeconfig base64 in `data`, a kustomize
/// JSON patch.
const LAYERS: [Layer; 7] = [
    ("secret.yaml", |v| {
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: \"{v}\"\n")
    }),
    ("kubeconfig.json", |v| {
        format!("{{\"kind\": \"Config\", \"clusters\": [{{\"name\": \"a\", \"cluster\": {{\"server\": \"{v}\"}}}}]}}\n")
    }),
    ("app.yaml", |v| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n  source:\n    helm:\n      values: |\n        {{\"clusters\": [{{\"server\": \"{v}\"}}]}}\n")
    }),
    ("quoted.yaml", |v| {
        let v = v.replace('\\', "\\\\");
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: c2\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: other\n  server: https://other.example.com\n  config: \"{{\\\"bearerToken\\\": \\\"t\\\", \\\"backup\\\": \\\"{v}\\\"}}\"\n")
    }),
    ("kc.yaml", |v| {
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: kc\nstringData:\n  kubeconfig: |\n    apiVersion: v1\n    kind: Config\n    clusters:\n    - name: a\n      cluster:\n        server: \"{v}\"\n")
    }),
    ("kcb.yaml", |v| {
        let kc = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster:\n    server: \"{v}\"\n"
        );
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kcb\ndata:\n  kubeconfig: {}\n",
            base64(&kc)
        )
    }),
    ("kustomization.yaml", |v| {
        format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n  - target: {{kind: Application}}\n    patch: |-\n      [{{\"op\": \"replace\", \"path\": \"/spec/destination/server\", \"value\": \"{v}\"}}]\n")
    }),
];

/// An endpoint written `https:\/\/host[:port][\/path]` (JSON's escaped
/// slash) in every layer, with and without a port and a path, `--from`
/// with and without a port, `--to` with and without one: when `--from` is
/// that endpoint (`:443` is no port, RFC 3986 §6.2.3), every layer is
/// rewritten to the new URL with the port and path kept and the slashes
/// still escaped; when it is not, nothing is written (exit 2). Never the
/// new host without the new port (`https:\/\/new` for `--to new:7443`).
#[test]
fn escaped_slashes_are_rewritten_whole_in_every_layer() {
    for port in ["", ":6443", ":443"] {
        for path in ["", "\\/api"] {
            for from_port in ["", ":6443"] {
                for to in ["https://new.example.com", "https://new.example.com:7443"] {
                    let from = format!("https://{OLD_HOST}{from_port}");
                    let old = format!("https:\\/\\/{OLD_HOST}{port}{path}");
                    let dir = tempfile::tempdir().unwrap();
                    for (name, build) in LAYERS {
                        std::fs::write(dir.path().join(name), build(&old)).unwrap();
                    }
                    let before = tree(dir.path());
                    let out = rebind(
                        dir.path(),
                        &["apply", "--from", &from, "--to", to, "--yes", "--no-commit"],
                    );
                    let said = stdout(&out) + &stderr(&out);
                    let case = format!("{old} --from {from} --to {to}");
                    let same = port.trim_start_matches(':').parse().unwrap_or(443)
                        == from_port.trim_start_matches(':').parse().unwrap_or(443);
                    if !same {
                        assert_eq!(out.status.code(), Some(2), "{case}\n{said}");
                        assert_eq!(tree(dir.path()), before, "{case}");
                        continue;
                    }
                    assert_eq!(out.status.code(), Some(0), "{case}\n{said}");
                    let new = format!("{}{path}", to.replace('/', "\\/"));
                    for (name, build) in LAYERS {
                        let got = std::fs::read_to_string(dir.path().join(name)).unwrap();
                        assert_eq!(got, build(&new), "{case}: {name}\n{said}");
                    }
                    assert!(!said.contains("Not rewritten"), "{case}\n{said}");
                }
            }
        }
    }
}

/// Escapes other than a slash's (`\u0068ttps:`, `\u002e` in the host): in
/// a plain double-quoted value or a JSON file the string is spliced (the
/// replaced part written plainly, escaped slashes kept); inside a document
/// held in a string, base64 included, rebind cannot rewrite it in place,
/// so the run is refused (exit 2, nothing written) naming `path:line:column`
/// — never a mention beside an exit 0 (a half cutover).
#[test]
fn other_escapes_are_rewritten_in_plain_layers_and_refused_inside_documents() {
    let dotted = OLD_HOST.replacen('.', "\\u002e", 1);
    for (old, plain_new) in [
        (
            format!("\\u0068ttps:\\/\\/{OLD_HOST}:6443\\/x"),
            "https:\\/\\/new.example.com:7443\\/x".to_string(),
        ),
        (
            format!("https://{dotted}:6443/x"),
            "https://new.example.com:7443/x".to_string(),
        ),
    ] {
        for (name, build) in LAYERS {
            let dir = tempfile::tempdir().unwrap();
            let text = build(&old);
            std::fs::write(dir.path().join(name), &text).unwrap();
            let out = apply(dir.path(), TO);
            let said = stdout(&out) + &stderr(&out);
            let got = std::fs::read_to_string(dir.path().join(name)).unwrap();
            if matches!(name, "secret.yaml" | "kubeconfig.json") {
                assert_eq!(out.status.code(), Some(0), "{old}: {name}\n{said}");
                assert_eq!(got, build(&plain_new), "{old}: {name}");
                continue;
            }
            assert_eq!(out.status.code(), Some(2), "{old}: {name}\n{said}");
            assert_eq!(got, text, "{old}: {name}");
            let line = if name == "kcb.yaml" {
                text.lines()
                    .position(|l| l.contains("kubeconfig:"))
                    .unwrap()
                    + 1
            } else {
                text.lines()
                    .position(|l| l.contains(&OLD_HOST[..32]))
                    .unwrap()
                    + 1
            };
            let at = format!("{name}:{line}:");
            assert!(
                said.lines()
                    .any(|l| l.starts_with(&at) && l.contains("written with escapes")),
                "{old}: {name}: {at}\n{said}"
            );
        }
    }
}
