//! A YAML file that does not parse and holds endpoint-looking text is named
//! with its file:line:column by every reader, whatever the host's shape (a
//! managed cluster's or a generic `https://host:6443`): where its values
//! sit cannot be read, so whether the text is at a cluster position cannot
//! be told, and no reader may pass over it as holding no endpoint.

use crate::common::{rebind, stderr, stdout};
use std::path::Path;

const GENERIC: &str = "https://old-api.example.org:6443";
const EKS: &str = "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A chart whose template renders `.Values.hub.url` into
/// `destination.server`, with a values file that does not parse.
fn values_file(root: &Path, url: &str) -> (&'static str, &'static str) {
    write(
        root,
        "charts/apps/Chart.yaml",
        "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
    );
    write(
        root,
        "charts/apps/templates/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: child\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: manifests\n  destination:\n    server: {{ .Values.hub.url }}\n    namespace: x\n",
    );
    write(
        root,
        "charts/apps/values.yaml",
        &format!("hub: {{url: {url}\n  bad: [\n"),
    );
    ("charts/apps/values.yaml", "charts/apps/values.yaml:2:6")
}

/// A kubeconfig whose flow sequence is never closed.
fn plain_manifest(root: &Path, url: &str) -> (&'static str, &'static str) {
    write(
        root,
        "bad-plain.yaml",
        &format!("apiVersion: v1\nkind: Config\nclusters: [\n  {{cluster: {{server: {url}}}}}\n"),
    );
    ("bad-plain.yaml", "bad-plain.yaml:5:1")
}

#[test]
fn an_unparsable_file_holding_an_endpoint_is_named_by_scan_init_and_check() {
    type Holder = fn(&Path, &str) -> (&'static str, &'static str);
    for (what, holder) in [
        ("values file", values_file as Holder),
        ("plain manifest", plain_manifest as Holder),
    ] {
        for url in [GENERIC, EKS] {
            let case = format!("{what} {url}");
            let d = tempfile::tempdir().unwrap();
            let root = d.path();
            let (rel, place) = holder(root, url);
            let before = std::fs::read_to_string(root.join(rel)).unwrap();
            for args in [&["scan"][..], &["scan", "--from", url][..]] {
                let out = rebind(root, args);
                let said = format!("{}{}", stdout(&out), stderr(&out));
                assert_eq!(out.status.code(), Some(2), "{case} {args:?}: {said}");
                assert!(
                    stderr(&out).contains(&format!("{place}: not valid YAML")),
                    "{case} {args:?}: {said}"
                );
            }
            // init writes nothing from counts it cannot know.
            let out = rebind(root, &["init"]);
            assert_eq!(out.status.code(), Some(2), "{case}: {}", stdout(&out));
            assert!(stderr(&out).contains(place), "{case}: {}", stderr(&out));
            assert!(!root.join(".rebind.yaml").exists(), "{case}");
            // check cannot show the file clean.
            write(root, ".rebind.yaml", "clusters: {}\n");
            let out = rebind(root, &["check"]);
            assert_eq!(out.status.code(), Some(1), "{case}: {}", stdout(&out));
            assert!(
                stdout(&out).contains(&format!("{place}: not valid YAML")),
                "{case}: {}",
                stdout(&out)
            );
            assert_eq!(
                std::fs::read_to_string(root.join(rel)).unwrap(),
                before,
                "{case}"
            );
        }
    }
}

/// The boundary: a URL with a path (`https://git.example.com/gitops.git`, a
/// repository) names no API server, so a broken file holding only that is
/// no endpoint's file.
#[test]
fn an_unparsable_file_holding_only_a_repository_url_is_not_an_endpoint_s() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "bad.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source: {repoURL: https://git.example.com/gitops.git\n  bad: [\n",
    );
    let out = rebind(root, &["scan"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
