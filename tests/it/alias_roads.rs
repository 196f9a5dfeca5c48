//! Aliases and merge keys on every road into a cluster position, not only
//! in manifests: a chart's values file, a file `helm.valueFiles` names, a
//! `helm.values: |` string (a chart of the repository, or karpenter's
//! `settings.clusterEndpoint` for a chart elsewhere), a git files
//! generator's file. YAML 1.2 section 3.2.2.2: an alias node is the node
//! its anchor names; the merge key `<<` (YAML 1.1's merge type) brings the
//! anchored mapping's entries, as go-yaml (which Helm, Kubernetes and
//! ArgoCD's generators decode with) applies it. The resolved node is the
//! position; the occurrence is the anchor's value: listed once, with the
//! alias's place in `via`, and rewritten once. An anchor whose aliases land
//! on no position is none.

use crate::common::{rebind, stderr, stdout};
use serde_json::Value;
use std::path::Path;

const OLD: &str = "https://old-api.example.org:6443";
const NEW: &str = "https://new-api.example.org:6443";
const REPO: &str = "https://git.example.com/gitops.git";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn scan(root: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["scan", "--json"];
    args.extend_from_slice(extra);
    let out = rebind(root, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `(path, line, column, via)` of every value of OLD at a cluster position.
fn positions(scan: &Value) -> Vec<(String, u64, u64, String)> {
    scan["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["endpoint"] == OLD && o["kind"] == "value" && o["cluster_position"] == true)
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
                o["via"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// A chart in the repository rendering `.Values.target.url` into
/// `destination.server` (Helm renders values into the template; the
/// Application it renders is ArgoCD's).
fn chart(root: &Path, values: &str) {
    write(
        root,
        "charts/apps/Chart.yaml",
        "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
    );
    write(
        root,
        "charts/apps/templates/app.yaml",
        &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: child\nspec:\n  project: default\n  source:\n    repoURL: {REPO}\n    path: manifests\n  destination:\n    server: {{{{ .Values.target.url }}}}\n    namespace: x\n"),
    );
    write(root, "charts/apps/values.yaml", values);
}

fn app(name: &str, source: &str) -> String {
    format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  project: default\n  source:\n{source}  destination:\n    server: https://kubernetes.default.svc\n")
}

/// Every file of `files` is written; `want` is what a plain scan lists as
/// positions of OLD (`via` checked by its start). With or without `--from`
/// the same; then `apply --to NEW` without `--from` (the positions name the
/// old endpoint) rewrites each anchor once and nothing else.
fn positive(files: &[(&str, String)], want: &[(&str, u64, u64, &str)]) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for (rel, text) in files {
        write(root, rel, text);
    }
    let got = positions(&scan(root, &[]));
    let case = format!("{files:?}");
    assert_eq!(got.len(), want.len(), "{case}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!((g.0.as_str(), g.1, g.2), (w.0, w.1, w.2), "{case}: {got:?}");
        assert!(g.3.starts_with(w.3), "{case}: {} !~ {}", g.3, w.3);
    }
    assert_eq!(positions(&scan(root, &["--from", OLD])), got, "{case}");
    let out = rebind(root, &["apply", "--no-commit", "--yes", "--to", NEW]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{case}: {said}");
    for (rel, text) in files {
        let after = std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(after, text.replace(OLD, NEW), "{case}: {rel}");
    }
}

/// The same files with the alias landing on no position: no position of OLD.
fn negative(files: &[(&str, String)]) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for (rel, text) in files {
        write(root, rel, text);
    }
    assert_eq!(positions(&scan(root, &[])), vec![], "{files:?}");
    assert_eq!(
        positions(&scan(root, &["--from", OLD])),
        vec![],
        "{files:?}"
    );
}

#[test]
fn an_alias_or_merge_key_in_a_chart_s_values_file_is_followed() {
    let root_files = |values: &str| {
        let d = tempfile::tempdir().unwrap();
        chart(d.path(), values);
        let files: Vec<(&str, String)> = [
            "charts/apps/Chart.yaml",
            "charts/apps/templates/app.yaml",
            "charts/apps/values.yaml",
        ]
        .iter()
        .map(|r| (*r, std::fs::read_to_string(d.path().join(r)).unwrap()))
        .collect();
        files
    };
    positive(
        &root_files(&format!("x-hub: &hub {OLD}\ntarget:\n  url: *hub\n")),
        &[(
            "charts/apps/values.yaml",
            1,
            13,
            "alias *hub at 3:8 -> target.url (chart template charts/apps/templates/app.yaml:11",
        )],
    );
    positive(
        &root_files(&format!("defaults: &d\n  url: {OLD}\ntarget:\n  <<: *d\n")),
        &[(
            "charts/apps/values.yaml",
            2,
            8,
            "merge key <<: *d at 4:7 -> target.url (chart template",
        )],
    );
    // Negative: the alias lands on a key no template renders; a merged
    // entry the mapping writes itself is overridden.
    negative(&root_files(&format!(
        "x-hub: &hub {OLD}\nother:\n  url: *hub\ntarget:\n  url: https://kubernetes.default.svc\n"
    )));
    negative(&root_files(&format!(
        "defaults: &d\n  url: {OLD}\ntarget:\n  <<: *d\n  url: https://kubernetes.default.svc\n"
    )));
}

/// A file `helm.valueFiles` names (argo-cd `reposerver/repository/repository.go`,
/// `getResolvedValueFiles`: relative to the source's `path`).
#[test]
fn an_alias_in_a_value_file_an_application_names_is_followed() {
    let files = |anchored: &str| {
        let d = tempfile::tempdir().unwrap();
        chart(d.path(), "target:\n  url: https://kubernetes.default.svc\n");
        let mut f: Vec<(&str, String)> = [
            "charts/apps/Chart.yaml",
            "charts/apps/templates/app.yaml",
            "charts/apps/values.yaml",
        ]
        .iter()
        .map(|r| (*r, std::fs::read_to_string(d.path().join(r)).unwrap()))
        .collect();
        f.push(("charts/apps/values-anchor.yaml", anchored.to_string()));
        f.push((
            "apps/a.yaml",
            app("a", &format!("    repoURL: {REPO}\n    path: charts/apps\n    helm:\n      valueFiles: [values-anchor.yaml]\n")),
        ));
        f
    };
    positive(
        &files(&format!("x: &u {OLD}\ntarget:\n  url: *u\n")),
        &[(
            "charts/apps/values-anchor.yaml",
            1,
            7,
            "alias *u at 3:8 -> target.url (chart template",
        )],
    );
    negative(&files(&format!("x: &u {OLD}\nelse:\n  url: *u\n")));
}

/// `helm.values: |` of an Application of a chart in the repository: the
/// string's own aliases and merge keys (the ArgoCD Helm user guide: inline
/// values are the chart's values, read by Helm's YAML decoder).
#[test]
fn an_alias_or_merge_key_inside_inline_helm_values_is_followed() {
    let files = |values: &str| {
        let d = tempfile::tempdir().unwrap();
        chart(d.path(), "target:\n  url: https://kubernetes.default.svc\n");
        let mut f: Vec<(&str, String)> = [
            "charts/apps/Chart.yaml",
            "charts/apps/templates/app.yaml",
            "charts/apps/values.yaml",
        ]
        .iter()
        .map(|r| (*r, std::fs::read_to_string(d.path().join(r)).unwrap()))
        .collect();
        let indented: String = values.lines().map(|l| format!("        {l}\n")).collect();
        f.push((
            "apps/p.yaml",
            app("p", &format!("    repoURL: {REPO}\n    path: charts/apps\n    helm:\n      values: |\n{indented}")),
        ));
        f
    };
    positive(
        &files(&format!("x: &h {OLD}\ntarget:\n  url: *h")),
        &[(
            "apps/p.yaml",
            12,
            15,
            "alias *h at 14:16 -> target.url (chart template charts/apps/templates/app.yaml:11",
        )],
    );
    positive(
        &files(&format!("base: &b\n  url: {OLD}\ntarget:\n  <<: *b")),
        &[(
            "apps/p.yaml",
            13,
            16,
            "merge key <<: *b at 15:15 -> target.url (chart template",
        )],
    );
    negative(&files(&format!("x: &h {OLD}\nelse:\n  url: *h")));
    negative(&files(&format!(
        "base: &b\n  url: {OLD}\ntarget:\n  <<: *b\n  url: https://kubernetes.default.svc"
    )));
}

/// karpenter's `settings.clusterEndpoint` in the inline values of its chart
/// (a chart elsewhere: the key decides), reached through an alias.
#[test]
fn an_alias_to_karpenter_s_cluster_endpoint_inside_inline_values_is_a_position() {
    let files = |values: &str| {
        let indented: String = values.lines().map(|l| format!("        {l}\n")).collect();
        vec![(
            "apps/k.yaml",
            app("k", &format!("    repoURL: public.ecr.aws/karpenter\n    chart: karpenter\n    targetRevision: 1.0.0\n    helm:\n      values: |\n{indented}")),
        )]
    };
    positive(
        &files(&format!("x: &e {OLD}\nsettings:\n  clusterEndpoint: *e")),
        &[(
            "apps/k.yaml",
            13,
            15,
            "alias *e at 15:28 -> settings.clusterEndpoint",
        )],
    );
    negative(&files(&format!("x: &e {OLD}\nsettings:\n  other: *e")));
}

/// A git files generator's file (argo-cd `applicationset/generators/git.go`,
/// `generateParamsFromGitFile`, decodes it with sigs.k8s.io/yaml over
/// go-yaml: aliases and merge keys applied) whose key the template puts in
/// `destination.server`.
#[test]
fn an_alias_or_merge_key_in_a_git_files_generator_file_is_followed() {
    let set = format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        repoURL: {REPO}\n        revision: HEAD\n        files:\n          - path: \"clusters/*.yaml\"\n  template:\n    metadata:\n      name: 'x'\n    spec:\n      project: default\n      source: {{repoURL: {REPO}, path: app}}\n      destination:\n        server: '{{{{.cluster.api}}}}'\n        namespace: app\n");
    let files = |prod: &str| {
        vec![
            ("as/s.yaml", set.clone()),
            ("clusters/prod.yaml", prod.to_string()),
        ]
    };
    positive(
        &files(&format!("x: &a {OLD}\ncluster:\n  api: *a\n")),
        &[(
            "clusters/prod.yaml",
            1,
            7,
            "alias *a at 3:8 -> cluster.api (git files generator of ApplicationSet/s",
        )],
    );
    positive(
        &files(&format!("base: &b\n  api: {OLD}\ncluster:\n  <<: *b\n")),
        &[(
            "clusters/prod.yaml",
            2,
            8,
            "merge key <<: *b at 4:7 -> cluster.api (git files generator",
        )],
    );
    negative(&files(&format!("x: &a {OLD}\ncluster:\n  other: *a\n")));
    negative(&files(&format!(
        "base: &b\n  api: {OLD}\ncluster:\n  <<: *b\n  api: https://kubernetes.default.svc\n"
    )));
}
