//! ApplicationSet generator roads into `destination.server`: a git files
//! generator's file that is a list, a parameter with a `default`, a list
//! generator's `elementsYaml`, a cluster generator's `values`, a
//! `templatePatch` setting the server. Each road has a positive fixture
//! (`scan` lists the value with the road in `via`, `init` declares the
//! endpoint, `apply --to` without `--from` rewrites it byte for byte) and
//! a negative one (a value no template reads is not a position); a
//! templated server that is not one parameter is named with its file:line.

use crate::common::{rebind, stderr, stdout};
use serde_json::Value;
use std::path::Path;

const OLD: &str = "https://old-api.example.org:6443";
const NEW: &str = "https://new-api.example.org:6443";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn scan(root: &Path) -> Value {
    let out = rebind(root, &["scan", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `(path, line, column, via)` of every occurrence of OLD.
fn found(scan: &Value) -> Vec<(String, u64, u64, String)> {
    scan["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["endpoint"] == OLD)
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

/// `(path, line, message)` of every note.
fn notes(scan: &Value) -> Vec<(String, u64, String)> {
    scan["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["path"].as_str().unwrap().to_string(),
                n["line"].as_u64().unwrap(),
                n["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `init` declares OLD and `check` passes; `apply --to NEW` (no `--from`:
/// the endpoint the positions hold) makes `file` exactly `after` (a rebind
/// rewrites every copy of the endpoint in the tree; `scan` above decides
/// which are positions).
fn init_and_apply(root: &Path, file: &str, after: &str) {
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    assert!(config.contains(OLD), "{config}");
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    std::fs::remove_file(root.join(".rebind.yaml")).unwrap();
    let out = rebind(root, &["apply", "--no-commit", "--yes", "--to", NEW]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(root.join(file)).unwrap(), after);
}

/// An ApplicationSet `name` whose generators are `generators` (YAML at
/// the list's indentation) and whose template's `destination` is `dest`.
fn appset(name: &str, generators: &str, dest: &str, rest: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\nspec:\n  goTemplate: true\n  generators:\n{generators}  template:\n    metadata:\n      name: 'x'\n    spec:\n      project: default\n      source: {{repoURL: https://git.example.com/gitops.git, path: app}}\n      destination:\n{dest}        namespace: app\n{rest}"
    )
}

fn git_files(glob: &str) -> String {
    format!("    - git:\n        repoURL: https://git.example.com/gitops.git\n        revision: HEAD\n        files:\n          - path: \"{glob}\"\n")
}

/// argo-cd `applicationset/generators/git.go`, `generateParamsFromGitFile`:
/// a file is first read as an array, each element one parameter set (its
/// keys flattened, `cluster.api`). Each element's scalar at the key the
/// template's server reads is a position; another key (`docs`) is not,
/// nor is a list file the glob does not read.
#[test]
fn a_git_files_generator_file_that_is_a_list_gives_each_element() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "as/lst.yaml",
        &appset(
            "lst",
            &git_files("lst/*.yaml"),
            "        server: '{{.cluster.api}}'\n",
            "",
        ),
    );
    let list = format!("- cluster:\n    name: a\n    api: {OLD}\n- cluster:\n    name: b\n    api: \"{OLD}\"\n    docs: {OLD}\n");
    write(root, "lst/all.yaml", &list);
    write(root, "other/all.yaml", &list);
    let via = "git files generator of ApplicationSet/lst (as/lst.yaml:20) puts parameter cluster.api in destination server";
    let s = scan(root);
    assert_eq!(
        found(&s),
        vec![
            ("lst/all.yaml".into(), 3, 10, via.into()),
            ("lst/all.yaml".into(), 6, 11, via.into()),
        ]
    );
    assert!(notes(&s).is_empty(), "{:?}", notes(&s));
    init_and_apply(root, "lst/all.yaml", &list.replace(OLD, NEW));
}

/// A git files generator whose template's server is its parameter with a
/// sprig `default` (`{{ .cluster.api | default "..." }}`, as list elements
/// already are): the parameter is followed. An `index` into a list
/// parameter (`{{ (index .clusters 0).api }}`) is not followed: named at
/// the template's file:line, its files' values are no positions.
#[test]
fn a_git_files_parameter_with_a_default_is_followed_and_an_index_is_named() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "as/g4.yaml",
        &appset(
            "g4",
            &git_files("g4/*.yaml"),
            "        server: '{{ .cluster.api | default \"https://kubernetes.default.svc\" }}'\n",
            "",
        ),
    );
    let file = format!("cluster:\n  api: {OLD}\n");
    write(root, "g4/prod.yaml", &file);
    write(
        root,
        "as/g5.yaml",
        &appset(
            "g5",
            &git_files("g5/*.yaml"),
            "        server: '{{ (index .clusters 0).api }}'\n",
            "",
        ),
    );
    write(
        root,
        "g5/prod.yaml",
        &format!("clusters:\n  - api: {OLD}\n"),
    );
    let s = scan(root);
    assert_eq!(
        found(&s),
        vec![(
            "g4/prod.yaml".into(),
            2,
            8,
            "git files generator of ApplicationSet/g4 (as/g4.yaml:20) puts parameter cluster.api in destination server".into()
        )]
    );
    assert_eq!(
        notes(&s),
        vec![(
            "as/g5.yaml".into(),
            20,
            "templated, not followed: ApplicationSet/g5's template destination server `{{ (index .clusters 0).api }}` reads no one parameter".into()
        )]
    );
    let out = rebind(root, &["scan"]);
    assert!(
        stdout(&out).contains("as/g5.yaml:20: templated, not followed"),
        "{}",
        stdout(&out)
    );
}

/// argo-cd `ListGenerator.ElementsYaml` (applicationset/generators/list.go:
/// the string unmarshalled into the elements): each element's key the
/// template reads is a position inside the string, rewritten there byte for
/// byte; another key of the elements (`docs`) is not.
#[test]
fn list_elements_yaml_are_positions_inside_the_string() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let text = appset(
        "l6",
        &format!("    - list:\n        elementsYaml: |\n          - name: prod\n            api: {OLD}\n          - name: stage\n            docs: {OLD}\n"),
        "        server: '{{.api}}'\n",
        "",
    );
    write(root, "as/l6.yaml", &text);
    let s = scan(root);
    assert_eq!(
        found(&s),
        vec![(
            "as/l6.yaml".into(),
            11,
            18,
            "list generator elementsYaml of ApplicationSet/l6 (as/l6.yaml:21) puts parameter api in destination server".into()
        )]
    );
    init_and_apply(root, "as/l6.yaml", &text.replace(OLD, NEW));
}

/// argo-cd `applicationset/generators/cluster.go`: the cluster generator's
/// `values` are parameters `values.<key>`; the one the template's server
/// reads (`{{.values.hubApi}}`) is a position, another (`docs`) is not.
#[test]
fn a_cluster_generator_value_the_server_reads_is_a_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let text = appset(
        "cg",
        &format!("    - clusters:\n        selector:\n          matchLabels: {{env: prod}}\n        values:\n          hubApi: {OLD}\n          docs: {OLD}\n"),
        "        server: '{{.values.hubApi}}'\n",
        "",
    );
    write(root, "as.yaml", &text);
    let s = scan(root);
    assert_eq!(
        found(&s),
        vec![(
            "as.yaml".into(),
            12,
            19,
            "cluster generator values of ApplicationSet/cg (as.yaml:21) puts parameter values.hubApi in destination server".into()
        )]
    );
    init_and_apply(root, "as.yaml", &text.replace(OLD, NEW));
}

/// argo-cd `applicationset/utils/utils.go` (the `templatePatch` rendered
/// with the same parameters and merged over the template): a list element's
/// key that reaches `destination.server` only through the patch is a
/// position; an element key the patch does not read is not.
#[test]
fn a_template_patch_server_makes_the_element_key_a_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let text = format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: tp\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n          - name: prod\n            hubEndpoint: {OLD}\n            docs: {OLD}\n  template:\n    metadata:\n      name: '{{{{.name}}}}'\n    spec:\n      project: default\n      source: {{repoURL: https://git.example.com/gitops.git, path: app}}\n      destination:\n        namespace: app\n  templatePatch: |\n    spec:\n      destination:\n        server: '{{{{ .hubEndpoint }}}}'\n");
    write(root, "as.yaml", &text);
    let s = scan(root);
    assert_eq!(
        found(&s),
        vec![(
            "as.yaml".into(),
            11,
            26,
            "list generator element of ApplicationSet/tp (as.yaml:24) puts parameter hubEndpoint in destination server".into()
        )]
    );
    init_and_apply(root, "as.yaml", &text.replace(OLD, NEW));
}

/// A template's server built from parts (`https://{{ .host }}:6443`) is
/// not followed: named at its file:line, never silent; the element's
/// `host` is no position. A server that is one parameter is not named.
#[test]
fn a_server_built_from_parts_is_named() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let elements = "    - list:\n        elements:\n          - name: prod\n            host: old-api.example.org\n";
    write(
        root,
        "as/l8.yaml",
        &appset(
            "l8",
            elements,
            "        server: 'https://{{ .host }}:6443'\n",
            "",
        ),
    );
    write(
        root,
        "as/l9.yaml",
        &appset("l9", elements, "        server: '{{ .host }}'\n", ""),
    );
    let s = scan(root);
    assert_eq!(
        notes(&s),
        vec![(
            "as/l8.yaml".into(),
            19,
            "templated, not followed: ApplicationSet/l8's template destination server `https://{{ .host }}:6443` is built from parts".into()
        )]
    );
    assert_eq!(found(&s), vec![]);
}

/// argo-cd `reposerver/repository/repository.go` (value files are read
/// from the source's own repository, `$ref/...` from the `ref` source's;
/// docs `user-guide/multiple_sources.md`): a value file of a source whose
/// repoURL, or whose `ref` source's repoURL, is another repository than the
/// clone's remotes is no value file of the local chart at the same path,
/// so its keys are no positions. A source of this repository (its URL in
/// another spelling) still gives its value files. With no remote, which
/// repository a URL names is not known: every source is taken by its path.
#[test]
fn value_files_of_another_repository_are_not_the_local_chart_s() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
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
    write(
        root,
        "charts/apps/values.yaml",
        "target: {url: https://kubernetes.default.svc}\n",
    );
    let app = |name: &str, spec: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  project: default\n{spec}  destination:\n    server: https://kubernetes.default.svc\n")
    };
    write(
        root,
        "apps/m.yaml",
        &app("m", "  sources:\n    - repoURL: https://git.example.com/gitops.git\n      path: charts/apps\n      helm:\n        valueFiles: [$values/envs/prod.yaml]\n    - repoURL: https://git.example.com/some-other-config-repo.git\n      ref: values\n"),
    );
    write(
        root,
        "apps/n.yaml",
        &app("n", "  source:\n    repoURL: https://github.com/someone-else/charts.git\n    path: charts/apps\n    helm:\n      valueFiles: [/envs/other.yaml]\n"),
    );
    write(
        root,
        "apps/o.yaml",
        &app("o", "  source:\n    repoURL: git@git.example.com:gitops\n    path: charts/apps\n    helm:\n      valueFiles: [/envs/ours.yaml]\n"),
    );
    let values = format!("target:\n  url: {OLD}\n");
    for f in ["envs/prod.yaml", "envs/other.yaml", "envs/ours.yaml"] {
        write(root, f, &values);
    }
    crate::common::git_init_commit(root);
    let files = |s: &Value| -> Vec<String> { found(s).into_iter().map(|o| o.0).collect() };
    // No remote: by path, as before.
    assert_eq!(
        files(&scan(root)),
        ["envs/other.yaml", "envs/ours.yaml", "envs/prod.yaml"]
    );
    crate::common::git(
        root,
        &[
            "remote",
            "add",
            "origin",
            "https://git.example.com/gitops.git",
        ],
    );
    let s = scan(root);
    assert_eq!(files(&s), ["envs/ours.yaml"]);
    assert_eq!(
        found(&s)[0].3,
        "chart template charts/apps/templates/app.yaml:11 renders .Values.target.url (destination server)"
    );
}
