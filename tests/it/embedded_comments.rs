//! A comment of a document held in a string is a comment, however the
//! document is held (Helm `values: |` or a double-quoted `values` string
//! with `\n` escapes, a kustomize `patch: |-`, a `stringData` kubeconfig, a
//! base64 `data` kubeconfig) and whatever host
//! it names (a managed cluster's shape or a generic `https://host:6443`),
//! after a value on its line or on a line of its own. Every reader reads it
//! the same way: `scan` lists the same value and comment with and without
//! `--from`, `init` counts the value only, and `diff`/`apply --cluster`
//! find exactly what `init` counted and leave the comment as written.

use crate::common::{base64, rebind, stderr, stdout};
use serde_json::Value;
use std::path::Path;

const GENERIC: &str = "https://old-api.example.org:6443";
const EKS: &str = "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW: &str = "https://new-api.example.org:6443";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[derive(Clone, Copy, Debug)]
enum Comment {
    /// `server: OLD # was OLD`
    Trailing,
    /// `# old: OLD` on a line of its own, before the value's line.
    OwnLine,
}

/// The document held in a string, indented by `pad`: the value at its
/// cluster key (`key: url`, under `lead`) and the comment.
fn inner(lead: &str, key: &str, url: &str, comment: Comment, pad: &str) -> String {
    let mut lines: Vec<String> = lead.lines().map(str::to_string).collect();
    let indent = " ".repeat(lines.last().map_or(0, |l| l.len() - l.trim_start().len()) + 2);
    match comment {
        Comment::Trailing => lines.push(format!("{indent}{key}: {url} # was {url}")),
        Comment::OwnLine => {
            lines.push(format!("{indent}# old: {url}"));
            lines.push(format!("{indent}{key}: {url}"));
        }
    }
    lines
        .iter()
        .map(|l| format!("{pad}{l}\n"))
        .collect::<String>()
}

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:";

/// Writes one holder into `root`; returns the file holding the endpoint.
fn holder(root: &Path, which: &str, url: &str, comment: Comment) -> &'static str {
    match which {
        // The Helm chart in the repository renders `.Values.target.url`
        // into `destination.server` (the Helm user guide of ArgoCD: inline
        // `helm.values` are the chart's values).
        "helm-values" => {
            write(
                root,
                "charts/apps/Chart.yaml",
                "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
            );
            write(
                root,
                "charts/apps/templates/app.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: child\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: manifests\n  destination:\n    server: {{ .Values.target.url }}\n    namespace: x\n",
            );
            let values = inner("target:", "url", url, comment, "        ");
            write(
                root,
                "apps/p.yaml",
                &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: p\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/apps\n    helm:\n      values: |\n{values}  destination:\n    server: https://kubernetes.default.svc\n"),
            );
            "apps/p.yaml"
        }
        // The same values as a double-quoted string with `\n` escapes (a
        // JSON-style string: the document is its decoded value).
        "quoted-helm-values" => {
            holder(root, "helm-values", url, comment);
            let values = inner("target:", "url", url, comment, "").replace('\n', "\\n");
            write(
                root,
                "apps/p.yaml",
                &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: p\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/apps\n    helm:\n      values: \"{values}\"\n  destination:\n    server: https://kubernetes.default.svc\n"),
            );
            "apps/p.yaml"
        }
        // A JSON 6902 op appending an AppProject destination (kustomize
        // `patches[].patch`, RFC 6902 section 4.1).
        "kustomize-patch" => {
            let ops = inner(
                "- op: add\n  path: /spec/destinations/-\n  value:",
                "server",
                url,
                comment,
                "      ",
            );
            write(
                root,
                "k/kustomization.yaml",
                &format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [proj.yaml]\npatches:\n  - target: {{kind: AppProject, name: p}}\n    patch: |-\n{ops}"),
            );
            write(
                root,
                "k/proj.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: p\nspec:\n  destinations: []\n",
            );
            "k/kustomization.yaml"
        }
        "stringdata-kubeconfig" => {
            let kc = inner(KUBECONFIG, "server", url, comment, "    ");
            write(
                root,
                "s/kc.yaml",
                &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: kc\nstringData:\n  config: |\n{kc}"),
            );
            "s/kc.yaml"
        }
        "base64-kubeconfig" => {
            let kc = inner(KUBECONFIG, "server", url, comment, "");
            write(
                root,
                "s/kc.yaml",
                &format!(
                    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kc\ndata:\n  config: {}\n",
                    base64(&kc)
                ),
            );
            "s/kc.yaml"
        }
        _ => unreachable!(),
    }
}

fn scan(root: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["scan", "--json"];
    args.extend_from_slice(extra);
    let out = rebind(root, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `(path, line, column, kind)` of each occurrence of `url`, sorted.
fn listed(scan: &Value, url: &str) -> Vec<(String, u64, u64, String)> {
    let mut v: Vec<_> = scan["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["endpoint"].as_str() == Some(url))
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
                o["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The first cluster name `.rebind.yaml` declares.
fn cluster_name(root: &Path) -> String {
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    let mut lines = config.lines().skip_while(|l| *l != "clusters:");
    lines.next();
    let name = lines.next().expect("one cluster").trim();
    name.trim_end_matches(':').to_string()
}

#[test]
fn a_comment_in_any_string_held_document_is_a_comment_for_every_host_and_reader() {
    let holders = [
        "helm-values",
        "quoted-helm-values",
        "kustomize-patch",
        "stringdata-kubeconfig",
        "base64-kubeconfig",
    ];
    for which in holders {
        for url in [GENERIC, EKS] {
            for comment in [Comment::Trailing, Comment::OwnLine] {
                let case = format!("{which} {url} {comment:?}");
                let d = tempfile::tempdir().unwrap();
                let root = d.path();
                let rel = holder(root, which, url, comment);
                let before = std::fs::read_to_string(root.join(rel)).unwrap();
                let plain = listed(&scan(root, &[]), url);
                let from = listed(&scan(root, &["--from", url]), url);
                assert_eq!(plain, from, "{case}");
                let kinds: Vec<&str> = plain.iter().map(|o| o.3.as_str()).collect();
                let mut sorted = kinds.clone();
                sorted.sort();
                assert_eq!(sorted, ["comment", "value"], "{case}: {plain:?}");

                let out = rebind(root, &["init"]);
                assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
                let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
                assert!(
                    config.contains("expect: {files: 1, occurrences: 1}"),
                    "{case}: {config}"
                );
                let out = rebind(root, &["check"]);
                assert_eq!(out.status.code(), Some(0), "{case}: {}", stdout(&out));
                let name = cluster_name(root);
                let out = rebind(root, &["diff", "--cluster", &name, "--to", NEW]);
                let said = format!("{}{}", stdout(&out), stderr(&out));
                assert_ne!(out.status.code(), Some(2), "{case}: {said}");
                assert!(said.contains("1 change in 1 file"), "{case}: {said}");
                let out = rebind(
                    root,
                    &[
                        "apply",
                        "--no-commit",
                        "--yes",
                        "--cluster",
                        &name,
                        "--to",
                        NEW,
                    ],
                );
                let said = format!("{}{}", stdout(&out), stderr(&out));
                assert_eq!(out.status.code(), Some(0), "{case}: {said}");
                let after = std::fs::read_to_string(root.join(rel)).unwrap();
                let expected = if which == "base64-kubeconfig" {
                    // Re-encoded whole: the decoded document changes the
                    // value only, its comment kept as written.
                    let kc = inner(KUBECONFIG, "server", url, comment, "");
                    let kc_new = match comment {
                        Comment::Trailing => {
                            kc.replacen(&format!("server: {url}"), &format!("server: {NEW}"), 1)
                        }
                        Comment::OwnLine => {
                            kc.replacen(&format!("server: {url}\n"), &format!("server: {NEW}\n"), 1)
                        }
                    };
                    before.replace(&base64(&kc), &base64(&kc_new))
                } else if which == "quoted-helm-values" {
                    // The comment's line comes first, or the comment after.
                    before.replacen(&format!("url: {url}"), &format!("url: {NEW}"), 1)
                } else {
                    let key = if which == "helm-values" {
                        "url"
                    } else {
                        "server"
                    };
                    match comment {
                        Comment::Trailing => before.replacen(
                            &format!("{key}: {url} #"),
                            &format!("{key}: {NEW} #"),
                            1,
                        ),
                        Comment::OwnLine => before.replacen(
                            &format!("{key}: {url}\n"),
                            &format!("{key}: {NEW}\n"),
                            1,
                        ),
                    }
                };
                assert_ne!(expected, before, "{case}");
                assert_eq!(after, expected, "{case}");
            }
        }
    }
}
