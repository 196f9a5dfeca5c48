//! Every road into a cluster position that ArgoCD and Helm take inside the
//! repository: each road has a positive fixture (the value is found at its
//! position, `scan` names the road in `via`, a rebind rewrites it byte for
//! byte) and a negative one (a value no alias, template or generator puts
//! at a cluster position is not a position).

use crate::common::{rebind, stderr, stdout};
use serde_json::Value;
use std::path::Path;

const OLD: &str = "https://old-api.example.org:6443";
const NEW: &str = "https://new-api.example.org:6443";
const EKS: &str = "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

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

/// `(path, line, column, kind, position, via)` of every occurrence of `endpoint`.
fn found(scan: &Value, endpoint: &str) -> Vec<(String, u64, u64, String, String, String)> {
    scan["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["endpoint"] == endpoint)
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
                o["kind"].as_str().unwrap().to_string(),
                o["position"].as_str().unwrap_or("").to_string(),
                o["via"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// `apply --no-commit` from OLD to NEW; returns the exit code and what it said.
fn apply(root: &Path) -> (Option<i32>, String) {
    apply_from(root, OLD)
}

/// `apply --no-commit` to NEW without `--from`: the one workload endpoint
/// the positions hold is the old one.
fn apply_found(root: &Path) -> (Option<i32>, String) {
    let out = rebind(root, &["apply", "--no-commit", "--yes", "--to", NEW]);
    (
        out.status.code(),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

fn apply_from(root: &Path, from: &str) -> (Option<i32>, String) {
    let out = rebind(
        root,
        &["apply", "--no-commit", "--yes", "--from", from, "--to", NEW],
    );
    (
        out.status.code(),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

fn app(name: &str, body: &str) -> String {
    format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\n{body}")
}

/// YAML 1.2 section 3.2.2.2: an alias node is the node its anchor names, so
/// an alias at `destination.server` puts the anchor's value there. The
/// occurrence is the anchor's value (the only bytes to rewrite), and `via`
/// names the alias and where it lands.
#[test]
fn an_alias_at_a_cluster_position_makes_the_anchor_a_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let body = format!(
        "x-api: &api {OLD}\nspec:\n  project: default\n  destination:\n    server: *api\n    namespace: x\n"
    );
    write(root, "apps/a.yaml", &app("a", &body));
    // Negative: an anchor whose aliases land nowhere that names a cluster.
    let other = format!("x-url: &u {OLD}\nspec:\n  source:\n    repoURL: *u\n");
    write(root, "apps/b.yaml", &app("b", &other));
    let s = scan(root, &[]);
    assert_eq!(
        found(&s, OLD),
        vec![(
            "apps/a.yaml".into(),
            6,
            13,
            "value".into(),
            "destination server".into(),
            "alias *api at 10:13 -> spec.destination.server".into()
        )]
    );
    let text = stdout(&rebind(root, &["scan", "apps/a.yaml"]));
    assert!(
        text.contains("x-api  via alias *api at 10:13 -> spec.destination.server"),
        "{text}"
    );
    // Rewritten once, at the anchor; the alias is left as written.
    let (code, out) = apply(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("apps/a.yaml")).unwrap();
    assert_eq!(after, app("a", &body.replace(OLD, NEW)));
}

/// The merge key `<<` (YAML 1.1's merge type, applied by the go-yaml
/// decoder Kubernetes and ArgoCD use) brings the anchored mapping's entries
/// into the mapping; a key the mapping writes itself wins over a merged one.
#[test]
fn a_merge_key_at_a_destination_makes_the_merged_server_a_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let merged = format!(
        "x-dest: &dest\n  server: {OLD}\n  namespace: y\nspec:\n  destination:\n    <<: *dest\n    namespace: x\n"
    );
    write(root, "apps/a.yaml", &app("a", &merged));
    // Negative: the destination writes its own server, which overrides.
    let overridden = format!(
        "x-dest: &dest\n  server: {OLD}\nspec:\n  destination:\n    <<: [*dest]\n    server: https://kubernetes.default.svc\n"
    );
    write(root, "apps/b.yaml", &app("b", &overridden));
    let s = scan(root, &[]);
    assert_eq!(
        found(&s, OLD),
        vec![(
            "apps/a.yaml".into(),
            7,
            11,
            "value".into(),
            "destination server".into(),
            "merge key <<: *dest at 11:9 -> spec.destination.server".into()
        )]
    );
    // With `--from`, only the landed anchor counts as a cluster position.
    let s = scan(root, &["--from", OLD]);
    let positions: Vec<_> = found(&s, OLD).into_iter().map(|o| (o.0, o.4)).collect();
    assert_eq!(
        positions,
        vec![
            ("apps/a.yaml".into(), "destination server".into()),
            ("apps/b.yaml".into(), String::new()),
        ]
    );
}

/// RFC 6901: `-` in a JSON Pointer is the (nonexistent) element after the
/// last, where a JSON Patch `add` appends (RFC 6902 section 4.1): the
/// standard way a kustomize patch adds an AppProject destination. `~1`
/// and `~0` are `/` and `~`.
#[test]
fn a_json6902_op_appending_a_project_destination_is_a_patch_op_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let k = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n  - target: {{kind: AppProject, name: p}}\n    patch: |-\n      - op: add\n        path: /spec/destinations/-\n        value:\n          server: {OLD}\n          namespace: '*'\n      - op: add\n        path: /spec/sourceRepos/-\n        value: {OLD}\n"
    );
    write(root, "k/kustomization.yaml", &k);
    let s = scan(root, &["--from", OLD]);
    let got: Vec<_> = found(&s, OLD)
        .into_iter()
        .map(|o| (o.1, o.3, o.4))
        .collect();
    assert_eq!(
        got,
        vec![
            (9, "value".into(), "kustomize patch op".into()),
            // Negative: a source repository appended is no cluster.
            (13, "value".into(), String::new()),
        ]
    );
    let all = scan(root, &[]);
    let yaml_paths: Vec<_> = all["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["yaml_path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        yaml_paths,
        vec!["patches[0].patch > [0].value.server".to_string()]
    );
}

/// A comment of a document held in a string (Helm `values: |`, a kustomize
/// `patch: |`, a `stringData` kubeconfig) is a comment, as it is in
/// base64-decoded data: never a value, never rewritten, with or without
/// `--from`; the value beside it is.
#[test]
fn a_comment_in_a_document_held_in_a_string_is_a_comment() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let helm = app(
        "h",
        &format!("spec:\n  destination: {{server: https://kubernetes.default.svc}}\n  source:\n    helm:\n      values: |\n        # was {EKS}\n        settings:\n          clusterEndpoint: {EKS} # {EKS}\n"),
    );
    write(root, "apps/h.yaml", &helm);
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kc\nstringData:\n  config: |\n    apiVersion: v1\n    kind: Config\n    clusters:\n    - name: c\n      cluster:\n        # old: {EKS}\n        server: {EKS}\n"
    );
    write(root, "secrets/kc.yaml", &kubeconfig);
    let patch = format!(
        "kind: Kustomization\npatches:\n  - patch: |\n      kind: Application\n      metadata: {{name: x}}\n      spec:\n        destination:\n          # {EKS}\n          server: {EKS}\n"
    );
    write(root, "k/kustomization.yaml", &patch);
    for from in [&[][..], &["--from", EKS][..]] {
        let s = scan(root, from);
        let got: Vec<_> = found(&s, EKS)
            .into_iter()
            .map(|o| (o.0, o.1, o.3))
            .collect();
        let want: Vec<(String, u64, String)> = vec![
            ("apps/h.yaml".into(), 11, "comment".into()),
            ("apps/h.yaml".into(), 13, "value".into()),
            ("apps/h.yaml".into(), 13, "comment".into()),
            ("k/kustomization.yaml".into(), 8, "comment".into()),
            ("k/kustomization.yaml".into(), 9, "value".into()),
            ("secrets/kc.yaml".into(), 12, "comment".into()),
            ("secrets/kc.yaml".into(), 13, "value".into()),
        ];
        assert_eq!(got, want, "{from:?}");
        let workload = s["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"] == EKS)
            .unwrap();
        assert_eq!(workload["value_count"], 3);
        assert_eq!(workload["comment_count"], 4);
    }
    let (code, out) = apply_from(root, EKS);
    assert_eq!(code, Some(0), "{out}");
    let h = std::fs::read_to_string(root.join("apps/h.yaml")).unwrap();
    assert!(h.contains(&format!("# was {EKS}\n")), "{h}");
    assert!(
        h.contains(&format!("clusterEndpoint: {NEW} # {EKS}\n")),
        "{h}"
    );
    let kc = std::fs::read_to_string(root.join("secrets/kc.yaml")).unwrap();
    assert!(
        kc.contains(&format!("# old: {EKS}\n        server: {NEW}\n")),
        "{kc}"
    );
}

/// A file the YAML parser refuses whose endpoint is only behind base64 (a
/// double-quoted value continued by an escaped line break with too little
/// indentation: YAML 1.2 section 7.3.1 wants the continuation indented
/// beyond the mapping) is named with its line and column by every reader:
/// scan, diff and apply alike, never passed over as "no endpoint".
#[test]
fn an_unparsable_file_with_a_base64_endpoint_is_named_by_every_reader() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    // base64("https://old-api.example.org:6443"), cut in two.
    let b64 = crate::common::base64(OLD);
    let (a, b) = b64.split_at(20);
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\ndata:\n  server: \"{a}\\\n  {b}\"\n"
    );
    write(root, "s.yaml", &text);
    let out = rebind(root, &["scan", "--from", OLD]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("s.yaml:6:11"), "{said}");
    for cmd in [&["diff"][..], &["apply", "--no-commit", "--yes"][..]] {
        let mut args = cmd.to_vec();
        args.extend(["--from", OLD, "--to", NEW]);
        let out = rebind(root, &args);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {said}");
        assert!(said.contains("s.yaml:6:11"), "{cmd:?}: {said}");
    }
    assert_eq!(std::fs::read_to_string(root.join("s.yaml")).unwrap(), text);
}

/// A chart in the repository whose template renders `.Values.target.url`
/// into `destination.server`, and the Applications that use it.
fn chart_repo(root: &Path, apps: &[(&str, &str)]) {
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
    for (rel, text) in apps {
        write(root, rel, text);
    }
}

/// Value files named the way ArgoCD resolves them (argo-cd
/// `reposerver/repository/repository.go`, `getResolvedValueFiles`, and
/// `util/io/path/resolved.go`, `ResolveValueFilePathOrUrl`): from the
/// repository root when the name starts with `/`, and through the `ref`
/// source of a multi-source Application (`$values/...`). A values file no
/// Application names is no position.
#[test]
fn value_files_from_the_root_and_through_a_ref_source_are_chart_values() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let repo = "https://git.example.com/gitops.git";
    let prod = app(
        "prod",
        &format!("spec:\n  project: default\n  source:\n    repoURL: {repo}\n    path: charts/apps\n    helm:\n      valueFiles: [/envs/prod.yaml]\n  destination: {{server: https://kubernetes.default.svc}}\n"),
    );
    let multi = app(
        "multi",
        &format!("spec:\n  project: default\n  sources:\n    - repoURL: {repo}\n      path: charts/apps\n      helm:\n        valueFiles: [$values/envs/refd.yaml]\n    - repoURL: {repo}\n      ref: values\n  destination: {{server: https://kubernetes.default.svc}}\n"),
    );
    chart_repo(
        root,
        &[("apps/prod.yaml", &prod), ("apps/multi.yaml", &multi)],
    );
    for f in ["envs/prod.yaml", "envs/refd.yaml", "envs/unused.yaml"] {
        write(root, f, &format!("target:\n  url: {OLD}\n"));
    }
    let s = scan(root, &[]);
    let road = "chart template charts/apps/templates/app.yaml:11 renders .Values.target.url (destination server)";
    assert_eq!(
        found(&s, OLD),
        vec![
            (
                "envs/prod.yaml".into(),
                2,
                8,
                "value".into(),
                "chart value in a cluster position".into(),
                road.into()
            ),
            (
                "envs/refd.yaml".into(),
                2,
                8,
                "value".into(),
                "chart value in a cluster position".into(),
                road.into()
            ),
        ]
    );
}

/// A git files generator makes parameters of each matching file's keys
/// (argo-cd `applicationset/generators/git.go`, `generateParamsFromGitFile`:
/// nested keys flattened, `cluster.api`): where the template's
/// `destination.server` is `{{.cluster.api}}`, that key of every matching
/// file is a cluster position. Another key, or a file the glob does not
/// match, is not.
#[test]
fn a_git_files_generator_parameter_in_destination_server_is_a_position() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "appsets/clusters.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: clusters\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        repoURL: https://git.example.com/gitops.git\n        revision: HEAD\n        files:\n          - path: clusters/*/config.json\n  template:\n    metadata:\n      name: '{{.cluster.name}}-app'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: app\n      destination:\n        server: '{{.cluster.api}}'\n        namespace: app\n",
    );
    let config = format!(
        "{{\n  \"cluster\": {{\n    \"name\": \"prod\",\n    \"api\": \"{OLD}\",\n    \"docs\": \"{OLD}\"\n  }}\n}}\n"
    );
    write(root, "clusters/prod/config.json", &config);
    // Negative: the same file where the glob does not reach.
    write(root, "other/prod/config.json", &config);
    let s = scan(root, &[]);
    assert_eq!(
        found(&s, OLD),
        vec![(
            "clusters/prod/config.json".into(),
            4,
            13,
            "value".into(),
            "chart value in a cluster position".into(),
            "git files generator of ApplicationSet/clusters (appsets/clusters.yaml:22) puts parameter cluster.api in destination server".into()
        )]
    );
    // `init` and `check` see it: the endpoint is a workload cluster.
    let endpoints: Vec<_> = s["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["endpoint"].as_str().unwrap(), e["value_count"].as_u64()))
        .collect();
    assert!(endpoints.contains(&(OLD, Some(1))), "{endpoints:?}");
    let (code, out) = apply(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("clusters/prod/config.json")).unwrap();
    assert_eq!(after, config.replace(OLD, NEW));
}

/// Sprig functions that pass a value through to a cluster position
/// (masterminds.github.io/sprig: `ternary`, `get`, `pluck`, `first`;
/// `coalesce` and `default` already were): every value they may pass is a
/// position of the chart's values file; a value none of them reads is not.
#[test]
fn sprig_functions_that_pass_a_value_through_are_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "c/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    let dest = |n: &str, server: &str| {
        format!("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {n}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: m\n  destination:\n    server: {server}\n    namespace: x\n")
    };
    let t = [
        dest(
            "a",
            "{{ ternary .Values.blue.url .Values.green.url .Values.useBlue }}",
        ),
        dest("b", "{{ get .Values.target \"url\" }}"),
        dest(
            "c",
            "{{ .Values.useBlue | ternary .Values.cyan .Values.teal }}",
        ),
        dest("d", "{{ first .Values.servers }}"),
        dest("e", "{{ tpl .Values.tmpl . }}"),
    ]
    .concat();
    write(root, "c/templates/apps.yaml", &t);
    let values = format!(
        "useBlue: true\nblue:\n  url: {OLD}\ngreen:\n  url: {OLD}\ntarget:\n  url: {OLD}\ncyan: {OLD}\nteal: {OLD}\nservers:\n  - {OLD}\nunused:\n  url: {OLD}\n"
    );
    write(root, "c/values.yaml", &values);
    let s = scan(root, &[]);
    let lines: Vec<u64> = found(&s, OLD).iter().map(|o| o.1).collect();
    // Every line but `unused.url` (line 13).
    assert_eq!(lines, vec![3, 5, 7, 8, 9, 11]);
    assert!(found(&s, OLD)
        .iter()
        .all(|o| o.4 == "chart value in a cluster position"
            && o.5.starts_with("chart template c/templates/apps.yaml:")));
    // What it does not evaluate at a cluster position is named, with its line.
    let named = s["notes"].as_array().unwrap().iter().any(|n| {
        n["path"] == "c/templates/apps.yaml"
            && n["line"] == 64
            && n["message"]
                .as_str()
                .unwrap()
                .contains("`tpl` of .Values.tmpl: the chart's values.yaml holds no string there")
    });
    assert!(named, "{}", s["notes"]);
}

/// Helm values given inline in an Application (`helm.valuesObject`) are
/// the values of the chart at its source path when that chart is in the
/// repository: a key its templates render into a cluster position is a
/// position of the Application. Another key, or the same values for a
/// chart elsewhere, is not.
#[test]
fn inline_values_of_an_application_of_a_chart_in_the_repository_are_chart_values() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let repo = "https://git.example.com/gitops.git";
    let inline = |name: &str, path: &str| {
        app(
            name,
            &format!("spec:\n  project: default\n  source:\n    repoURL: {repo}\n    path: {path}\n    helm:\n      valuesObject:\n        target:\n          url: {OLD}\n        other:\n          url: {OLD}\n  destination: {{server: https://kubernetes.default.svc}}\n"),
        )
    };
    chart_repo(
        root,
        &[
            ("apps/prod.yaml", &inline("prod", "charts/apps")),
            ("apps/elsewhere.yaml", &inline("elsewhere", "charts/none")),
        ],
    );
    let s = scan(root, &[]);
    assert_eq!(
        found(&s, OLD),
        vec![(
            "apps/prod.yaml".into(),
            14,
            16,
            "value".into(),
            "chart value in a cluster position".into(),
            "chart template charts/apps/templates/app.yaml:11 renders this Application's inline values (destination server)".into()
        )]
    );
}

/// `init` and `check` see a position found by a road as they see a literal
/// one: `init` declares the endpoint an alias lands in `destination.server`;
/// `check` fails on an undeclared one that a merge key lands there, naming
/// the anchor's place.
#[test]
fn init_and_check_see_the_positions_roads_lead_to() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let body =
        format!("x-api: &api {OLD}\nspec:\n  project: default\n  destination:\n    server: *api\n");
    write(root, "apps/a.yaml", &app("a", &body));
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    assert!(config.contains(OLD), "{config}");
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let other = "https://other-api.example.org:6443";
    let merged =
        format!("x-dest: &dest\n  server: {other}\nspec:\n  destination:\n    <<: *dest\n");
    write(root, "apps/b.yaml", &app("b", &merged));
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("apps/b.yaml:7:11"),
        "{}",
        stdout(&out)
    );
}

/// A value file name templated by a list generator's parameters is each
/// element's file (the parameters are known in the repository); a file no
/// element names is no values file.
#[test]
fn value_file_names_templated_by_list_generator_parameters_are_resolved() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: envs\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n          - env: prod\n          - env: stage\n  template:\n    metadata:\n      name: 'app-{{.env}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: charts/apps\n        helm:\n          valueFiles: ['/envs/{{.env}}.yaml']\n      destination:\n        server: https://kubernetes.default.svc\n";
    chart_repo(root, &[("appsets/envs.yaml", set)]);
    for f in ["envs/prod.yaml", "envs/stage.yaml", "envs/dev.yaml"] {
        write(root, f, &format!("target:\n  url: {OLD}\n"));
    }
    let s = scan(root, &[]);
    let files: Vec<String> = found(&s, OLD).into_iter().map(|o| o.0).collect();
    assert_eq!(files, vec!["envs/prod.yaml", "envs/stage.yaml"]);
}

/// Helm values given inline as a string (`helm.values: |`, a YAML document)
/// and as `helm.parameters` (each `name` in Helm's `--set` syntax:
/// `pkg/strvals`) are the values of the chart at the source path when that
/// chart is in the repository, YAML and JSON alike. ArgoCD's precedence
/// (docs "Helm" user guide: `parameters` over `valuesObject` over `values`
/// over `valueFiles`) decides which copy renders today; every copy is a
/// position, since a shadowed one wins as soon as the one above it goes.
/// Another key, another parameter, or the same values for a chart elsewhere
/// (in another file or another document of the same file) are not
/// positions.
#[test]
fn inline_values_strings_and_parameters_of_a_chart_in_the_repository_are_chart_values() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let repo = "https://git.example.com/gitops.git";
    let all = |name: &str, path: &str| {
        app(
            name,
            &format!("spec:\n  project: default\n  source:\n    repoURL: {repo}\n    path: {path}\n    helm:\n      parameters:\n        - name: target.url\n          value: {OLD}\n        - name: other.url\n          value: {OLD}\n      valuesObject:\n        target: {{url: {OLD}}}\n      values: |\n        target:\n          url: {OLD}\n        other:\n          url: {OLD}\n  destination: {{server: https://kubernetes.default.svc}}\n"),
        )
    };
    let json = format!(
        "{{\n  \"apiVersion\": \"argoproj.io/v1alpha1\",\n  \"kind\": \"Application\",\n  \"metadata\": {{\"name\": \"j\"}},\n  \"spec\": {{\n    \"source\": {{\n      \"repoURL\": \"{repo}\",\n      \"path\": \"charts/apps\",\n      \"helm\": {{\n        \"values\": \"other:\\n  url: {OLD}\\ntarget:\\n  url: {OLD}\\n\",\n        \"parameters\": [{{\"value\": \"{OLD}\", \"name\": \"target.url\"}}]\n      }}\n    }},\n    \"destination\": {{\"server\": \"https://kubernetes.default.svc\"}}\n  }}\n}}\n"
    );
    // The same values in a second document, for a chart elsewhere: not
    // positions, though the file holds an Application of the chart.
    let prod = format!(
        "{}---\n{}",
        all("prod", "charts/apps"),
        all("other", "charts/none")
    );
    chart_repo(
        root,
        &[
            ("apps/prod.yaml", &prod),
            ("apps/elsewhere.yaml", &all("elsewhere", "charts/none")),
            ("apps/j.json", &json),
        ],
    );
    let s = scan(root, &[]);
    let road = |from: &str| {
        format!("chart template charts/apps/templates/app.yaml:11 renders .Values.target.url from this Application's {from} (destination server)")
    };
    let object = "chart template charts/apps/templates/app.yaml:11 renders this Application's inline values (destination server)";
    let at: Vec<_> = found(&s, OLD)
        .into_iter()
        .map(|o| (o.0, o.1, o.2, o.4, o.5))
        .collect();
    let pos = "chart value in a cluster position".to_string();
    assert_eq!(
        at,
        vec![
            (
                "apps/j.json".into(),
                10,
                85,
                pos.clone(),
                road("helm.values")
            ),
            (
                "apps/j.json".into(),
                11,
                35,
                pos.clone(),
                road("helm.parameters")
            ),
            (
                "apps/prod.yaml".into(),
                14,
                18,
                pos.clone(),
                road("helm.parameters")
            ),
            ("apps/prod.yaml".into(), 18, 23, pos.clone(), object.into()),
            (
                "apps/prod.yaml".into(),
                21,
                16,
                pos.clone(),
                road("helm.values")
            ),
        ]
    );
    // The text report names the road too.
    let text = stdout(&rebind(root, &["scan"]));
    assert!(
        text.contains("apps/prod.yaml:14:18: value    https://old-api.example.org:6443  spec.source.helm.parameters[0].value  via chart template charts/apps/templates/app.yaml:11 renders .Values.target.url from this Application's helm.parameters")
            && text.contains("apps/prod.yaml:21:16: value    https://old-api.example.org:6443  spec.source.helm.values > target.url  via chart template")
            // The tier table says where the templated destination's values are.
            && text.contains("from values target.url in apps/j.json (helm.values), apps/j.json (helm.parameters), apps/prod.yaml (helm.valuesObject), apps/prod.yaml (helm.values), apps/prod.yaml (helm.parameters)"),
        "{text}"
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    for (f, before) in [("apps/prod.yaml", &prod), ("apps/j.json", &json)] {
        let after = std::fs::read_to_string(root.join(f)).unwrap();
        assert_eq!(&after, &before.replace(OLD, NEW), "{f}");
    }
}

/// A value file name templated by a git generator's parameters names one
/// file per parameter set the repository holds (argo-cd
/// `applicationset/generators/git.go`): a files generator's parameters are
/// each matching file's keys (`{{.cluster.name}}` of a JSON file), a
/// directories generator's the matching folder's path
/// (`{{.path.basename}}`, an `exclude` entry drops folders). A values file
/// no parameter set names is no values file.
#[test]
fn value_file_names_templated_by_git_generator_parameters_are_resolved() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let set = |name: &str, generator: &str, file: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        repoURL: https://git.example.com/gitops.git\n        revision: HEAD\n{generator}  template:\n    metadata:\n      name: 'app-{{{{.path.basename}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: charts/apps\n        helm:\n          valueFiles: ['{file}']\n      destination:\n        server: https://kubernetes.default.svc\n")
    };
    let files = set(
        "byfile",
        "        files:\n          - path: clusters/*/config.json\n",
        "/generated_values/{{.cluster.name}}.yaml",
    );
    let dirs = set(
        "bydir",
        "        directories:\n          - path: envs/*\n          - path: envs/skip\n            exclude: true\n",
        "/values/{{.path.basename}}.yaml",
    );
    chart_repo(
        root,
        &[("appsets/files.yaml", &files), ("appsets/dirs.yaml", &dirs)],
    );
    write(
        root,
        "clusters/prod/config.json",
        "{\"cluster\": {\"name\": \"prod\"}}\n",
    );
    write(root, "envs/stage/kustomization.yaml", "resources: []\n");
    write(root, "envs/skip/kustomization.yaml", "resources: []\n");
    let values = format!("target:\n  url: {OLD}\n");
    for f in [
        "generated_values/prod.yaml",
        "generated_values/dev.yaml",
        "values/stage.yaml",
        "values/skip.yaml",
    ] {
        write(root, f, &values);
    }
    let s = scan(root, &[]);
    let files: Vec<(String, String)> = found(&s, OLD).into_iter().map(|o| (o.0, o.5)).collect();
    let road = "chart template charts/apps/templates/app.yaml:11 renders .Values.target.url (destination server)";
    assert_eq!(
        files,
        vec![
            ("generated_values/prod.yaml".into(), road.into()),
            ("values/stage.yaml".into(), road.into())
        ]
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("values/stage.yaml")).unwrap();
    assert_eq!(after, values.replace(OLD, NEW));
    // `init` declares the endpoint the positions hold (now NEW).
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    assert!(config.contains(NEW), "{config}");
}

/// A chart that builds an ApplicationSet's list generator from
/// `.Values.clusters`, its template's `destination.server` a named template
/// rendering the generator placeholder (``{{ `{{.url}}` }}``, the escape the
/// ArgoCD docs give for templating an ApplicationSet with Helm): each
/// element's `url` is the placeholder's parameter, so `clusters[].url` of
/// the chart's values is a position. `name` is not, nor is `url` in a chart
/// whose named template renders a literal server.
#[test]
fn a_list_generator_built_from_values_with_a_placeholder_from_a_named_template() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n        {{- range .Values.clusters }}\n          - name: {{ .name }}\n            url: {{ .url | quote }}\n        {{- end }}\n  template:\n    metadata:\n      name: 'app-{{`{{.name}}`}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: app\n      destination:\n        server: '{{ include \"fleet.server\" . }}'\n";
    let values = format!("clusters:\n  - name: {OLD}\n    url: {OLD}\n");
    for (chart, helper) in [
        ("fleet", "{{`{{.url}}`}}"),
        ("local", "{{ \"https://kubernetes.default.svc\" }}"),
    ] {
        write(
            root,
            &format!("{chart}/Chart.yaml"),
            &format!("apiVersion: v2\nname: {chart}\nversion: 0.1.0\n"),
        );
        write(root, &format!("{chart}/templates/appset.yaml"), set);
        write(
            root,
            &format!("{chart}/templates/_helpers.tpl"),
            &format!("{{{{- define \"fleet.server\" -}}}}\n{helper}\n{{{{- end }}}}\n"),
        );
        write(root, &format!("{chart}/values.yaml"), &values);
    }
    let s = scan(root, &[]);
    let at: Vec<_> = found(&s, OLD)
        .into_iter()
        .map(|o| (o.0, o.1, o.2, o.5))
        .collect();
    assert_eq!(
        at,
        vec![(
            "fleet/values.yaml".into(),
            3,
            10,
            "chart template fleet/templates/appset.yaml:12 renders .Values.clusters[].url (list-generator element)".into()
        )]
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("fleet/values.yaml")).unwrap();
    assert_eq!(after, values.replace(OLD, NEW));
}

/// Helm's `tpl` renders a string of the chart's `values.yaml` as a
/// template (Helm docs, "Template Functions and Pipelines": `tpl`), and
/// Sprig's `dict` builds the argument of a named template: the values path
/// they lead to is a position; a values path only a `tpl` string of
/// several parts names (`host`) is not, and that action is named.
#[test]
fn tpl_of_a_values_string_and_a_dict_argument_are_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "c/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    write(
        root,
        "c/templates/_helpers.tpl",
        "{{- define \"c.server\" -}}\n{{ .cluster.url }}\n{{- end }}\n",
    );
    let dest = |n: &str, server: &str| {
        format!("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {n}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: m\n  destination:\n    server: {server}\n    namespace: x\n")
    };
    let t = [
        dest("a", "{{ tpl .Values.serverTemplate . }}"),
        dest(
            "b",
            "{{ include \"c.server\" (dict \"cluster\" .Values.spoke) }}",
        ),
        dest("c", "{{ tpl .Values.built . }}"),
    ]
    .concat();
    write(root, "c/templates/apps.yaml", &t);
    let values = format!(
        "serverTemplate: '{{{{ .Values.hub.url }}}}'\nbuilt: 'https://{{{{ .Values.host }}}}:6443'\nhub:\n  url: {OLD}\nspoke:\n  url: {OLD}\nhost: {OLD}\n"
    );
    write(root, "c/values.yaml", &values);
    let s = scan(root, &[]);
    let at: Vec<(u64, String)> = found(&s, OLD).into_iter().map(|o| (o.1, o.5)).collect();
    assert_eq!(
        at,
        vec![
            (4, "chart template c/templates/apps.yaml:12 renders .Values.hub.url (destination server)".into()),
            (6, "chart template c/templates/apps.yaml:25 renders .Values.spoke.url (destination server)".into()),
        ]
    );
    let named = s["notes"].as_array().unwrap().iter().any(|n| {
        n["path"] == "c/templates/apps.yaml"
            && n["line"] == 38
            && n["message"].as_str().unwrap().contains("several parts")
    });
    assert!(named, "{}", s["notes"]);
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("c/values.yaml")).unwrap();
    assert_eq!(after, values.replace(OLD, NEW));
}

/// `init` and `check` see the positions the inline-values roads lead to:
/// `init` declares the endpoint; an undeclared endpoint then given through
/// a parameter or a `helm.values` string fails `check`, which names each
/// place.
#[test]
fn init_and_check_see_the_inline_values_roads() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let repo = "https://git.example.com/gitops.git";
    let helm = |name: &str, body: &str| {
        app(
            name,
            &format!("spec:\n  project: default\n  source:\n    repoURL: {repo}\n    path: charts/apps\n    helm:\n{body}  destination: {{server: https://kubernetes.default.svc}}\n"),
        )
    };
    let param = |name: &str, url: &str| {
        helm(
            name,
            &format!("      parameters:\n        - name: target.url\n          value: {url}\n"),
        )
    };
    let string = |name: &str, url: &str| {
        helm(
            name,
            &format!("      values: |\n        target:\n          url: {url}\n"),
        )
    };
    chart_repo(
        root,
        &[
            ("apps/p.yaml", &param("p", OLD)),
            ("apps/s.yaml", &string("s", OLD)),
        ],
    );
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    assert!(config.contains(OLD), "{config}");
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let other = "https://other-api.example.org:6443";
    write(root, "apps/p2.yaml", &param("p2", other));
    write(root, "apps/s2.yaml", &string("s2", other));
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    for place in ["apps/p2.yaml:14:18", "apps/s2.yaml:14:16"] {
        assert!(stdout(&out).contains(place), "{place}: {}", stdout(&out));
    }
}

/// Helm's `tpl` of a string literal written in the chart's template (Go's
/// `text/template/parse/lex.go`: a `}}` inside a quoted or raw string does
/// not end the action): the literal's one `{{ .Values.path }}` is followed,
/// quoted with escapes or raw; a literal of several parts is named with its
/// line, and a values key no literal reads is not a position.
#[test]
fn tpl_of_a_string_literal_in_a_template_is_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "c/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    let dest = |n: &str, server: &str| {
        format!("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {n}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: m\n  destination:\n    server: {server}\n    namespace: x\n")
    };
    let t = [
        dest(
            "a",
            r#"{{ tpl "{{ .Values.hub.url | default \"}}\" }}" . }}"#,
        ),
        dest("b", "{{ tpl `{{ .Values.raw.url }}` . }}"),
        dest("c", r#"{{ tpl "{{ .Values.h }}:{{ .Values.p }}" . }}"#),
    ]
    .concat();
    write(root, "c/templates/apps.yaml", &t);
    let values = format!("hub:\n  url: {OLD}\nraw:\n  url: {OLD}\nunused:\n  url: {OLD}\n");
    write(root, "c/values.yaml", &values);
    let s = scan(root, &[]);
    let at: Vec<(u64, String)> = found(&s, OLD).into_iter().map(|o| (o.1, o.5)).collect();
    assert_eq!(
        at,
        vec![
            (2, "chart template c/templates/apps.yaml:12 renders .Values.hub.url (destination server)".into()),
            (4, "chart template c/templates/apps.yaml:25 renders .Values.raw.url (destination server)".into()),
        ]
    );
    let named = s["notes"].as_array().unwrap().iter().any(|n| {
        n["path"] == "c/templates/apps.yaml"
            && n["line"] == 38
            && n["message"].as_str().unwrap().contains("several parts")
    });
    assert!(named, "{}", s["notes"]);
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("c/values.yaml")).unwrap();
    // Once found, the old endpoint is rewritten wherever it is written.
    assert_eq!(after, values.replace(OLD, NEW));
}

/// An ApplicationSet whose template gives a chart in the repository its
/// values inline, a value written as one generator parameter
/// (`url: '{{.url}}'` in `valuesObject`, `{{ .url }}` in a `values: |`
/// string, `'{{.cluster.api}}'` as a parameter's value) at a values path
/// the chart renders into `destination.server`: the parameter is followed
/// to its generator (argo-cd `applicationset/generators/list.go`: each
/// element's keys; `git.go`, `generateParamsFromGitFile`: each matching
/// file's keys flattened), so that list element key and that git file key
/// are positions. An element key or file key that feeds a values path no
/// template renders is not; a parameter no generator in the repository
/// gives (a cluster generator's `{{.server}}`) is named with its line; a
/// chart elsewhere gives nothing to follow.
#[test]
fn generator_parameters_in_an_applicationset_s_inline_helm_values_are_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let set = |name: &str, generators: &str, path: &str, helm: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\nspec:\n  goTemplate: true\n  generators:\n{generators}  template:\n    metadata:\n      name: 'app-{{{{.name}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: {path}\n        helm:\n{helm}      destination:\n        server: https://kubernetes.default.svc\n")
    };
    let list = format!("    - list:\n        elements:\n          - name: prod\n            url: {OLD}\n            other: {OLD}\n");
    let object = "          valuesObject:\n            target:\n              url: '{{.url}}'\n            unused:\n              url: '{{.other}}'\n";
    let string = "          values: |\n            target:\n              url: {{ .url }}\n";
    let git = "    - git:\n        repoURL: https://git.example.com/gitops.git\n        revision: HEAD\n        files:\n          - path: clusters/*/config.json\n";
    let param =
        "          parameters:\n            - name: target.url\n              value: '{{.cluster.api}}'\n";
    let clusters = "    - clusters: {}\n";
    let cluster_obj =
        "          valuesObject:\n            target:\n              url: '{{.server}}'\n";
    let built =
        "          values: |\n            target:\n              url: https://{{.host}}:6443\n";
    chart_repo(
        root,
        &[
            (
                "appsets/object.yaml",
                &set("object", &list, "charts/apps", object),
            ),
            (
                "appsets/string.yaml",
                &set("string", &list, "charts/apps", string),
            ),
            ("appsets/git.yaml", &set("git", git, "charts/apps", param)),
            (
                "appsets/hub.yaml",
                &set("hub", clusters, "charts/apps", cluster_obj),
            ),
            (
                "appsets/built.yaml",
                &set("built", &list, "charts/apps", built),
            ),
            (
                "appsets/elsewhere.yaml",
                &set("elsewhere", &list, "charts/none", object),
            ),
        ],
    );
    write(
        root,
        "clusters/prod/config.json",
        &format!("{{\"cluster\": {{\"api\": \"{OLD}\", \"other\": \"{OLD}\"}}}}\n"),
    );
    let s = scan(root, &[]);
    let at: Vec<_> = found(&s, OLD)
        .into_iter()
        .map(|o| (o.0, o.1, o.2, o.4, o.5))
        .collect();
    let pos = "chart value in a cluster position".to_string();
    let element = |set: &str, how: &str| {
        format!("list generator of ApplicationSet/{set} gives parameter url to {how} target.url and chart template charts/apps/templates/app.yaml:11 rendering .Values.target.url (destination server)")
    };
    assert_eq!(
        at,
        vec![
            ("appsets/object.yaml".into(), 11, 18, pos.clone(), element("object", "helm.valuesObject")),
            ("appsets/string.yaml".into(), 11, 18, pos.clone(), element("string", "helm.values")),
            (
                "clusters/prod/config.json".into(),
                1,
                22,
                pos.clone(),
                "git files generator of ApplicationSet/git, through helm.parameters target.url and chart template charts/apps/templates/app.yaml:11 rendering .Values.target.url, puts parameter cluster.api in destination server".into()
            ),
        ]
    );
    // The cluster generator's parameter and the value built from a
    // parameter are named, with their lines; nothing else is (the chart
    // elsewhere gives nothing to follow).
    let notes: Vec<(String, u64, String)> = s["notes"]
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
        .collect();
    let places: Vec<(&str, u64)> = notes.iter().map(|n| (n.0.as_str(), n.1)).collect();
    assert_eq!(
        places,
        vec![("appsets/built.yaml", 24), ("appsets/hub.yaml", 20)],
        "{notes:?}"
    );
    assert!(
        notes[0].2.contains(r#""https://{{.host}}:6443" of ApplicationSet/built reaches destination server through helm.values target.url"#)
            && notes[0].2.contains("it is no one generator parameter"),
        "{notes:?}"
    );
    assert!(
        notes[1].2.contains(
            "generator parameter server of ApplicationSet/hub reaches destination server"
        ) && notes[1]
            .2
            .contains("no list element or git file in the repository gives it"),
        "{notes:?}"
    );
    // The text report names the road.
    let text = stdout(&rebind(root, &["scan"]));
    assert!(
        text.contains(&format!("appsets/object.yaml:11:18: value    {OLD}  spec.generators[0].list.elements[0].url  via {}", element("object", "helm.valuesObject"))),
        "{text}"
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("clusters/prod/config.json")).unwrap();
    assert_eq!(
        after,
        format!("{{\"cluster\": {{\"api\": \"{NEW}\", \"other\": \"{NEW}\"}}}}\n")
    );
}

/// A `helm.parameters` entry whose `name` is not one plain path in Helm's
/// `--set` syntax (Helm `pkg/strvals`: `{a,b}` is a list value, `a,b`
/// two settings, `a=b` a value) cannot be compared with the values paths
/// a chart renders: for a chart in the repository that renders a value at
/// a cluster position it is named with its line, never passed over. The
/// same name for a chart that renders nothing at a cluster position, or a
/// chart elsewhere, is not named; a plain name is still followed.
#[test]
fn a_helm_parameter_name_that_is_no_plain_path_is_named() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let repo = "https://git.example.com/gitops.git";
    let params = |name: &str, path: &str| {
        app(
            name,
            &format!("spec:\n  project: default\n  source:\n    repoURL: {repo}\n    path: {path}\n    helm:\n      parameters:\n        - name: '{{target.url,other}}'\n          value: {OLD}\n        - name: target.url,other.url\n          value: x\n        - name: target.url\n          value: {OLD}\n  destination: {{server: https://kubernetes.default.svc}}\n"),
        )
    };
    chart_repo(
        root,
        &[
            ("apps/a.yaml", &params("a", "charts/apps")),
            ("apps/plain.yaml", &params("plain", "charts/plain")),
            ("apps/elsewhere.yaml", &params("elsewhere", "charts/none")),
        ],
    );
    write(
        root,
        "charts/plain/Chart.yaml",
        "apiVersion: v2\nname: plain\nversion: 0.1.0\n",
    );
    write(
        root,
        "charts/plain/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  url: {{ .Values.target.url }}\n",
    );
    let s = scan(root, &[]);
    let notes: Vec<(String, u64, String)> = s["notes"]
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
        .collect();
    let lines: Vec<(&str, u64)> = notes.iter().map(|n| (n.0.as_str(), n.1)).collect();
    assert_eq!(
        lines,
        vec![("apps/a.yaml", 13), ("apps/a.yaml", 15)],
        "{notes:?}"
    );
    assert!(
        notes[0].2.contains(
            "helm.parameters name \"{target.url,other}\" of Application/a is not one values path"
        ) && notes[0]
            .2
            .contains("charts/apps/templates/app.yaml:11, .Values.target.url"),
        "{notes:?}"
    );
    // The plain name beside them is followed as before.
    let at: Vec<(String, u64)> = found(&s, OLD).into_iter().map(|o| (o.0, o.1)).collect();
    assert_eq!(at, vec![("apps/a.yaml".into(), 18)]);
}

/// One resolution of generator parameters for discovery and the
/// after-merge review (`find::resolve::sets`): a value file name templated
/// by the cluster generator's parameters (`{{name}}` of each registration
/// the repository holds that the selector matches:
/// docs/operator-manual/applicationset/Generators-Cluster.md, argo-cd
/// `applicationset/generators/cluster.go`) and by a matrix of a git
/// directories generator and a list generator (every pair of their sets:
/// Generators-Matrix.md) is the file each set names, in `scan` and in the
/// review alike; a file of a cluster the selector does not match, or that
/// no set names, is no values file.
#[test]
fn value_file_names_templated_by_cluster_and_matrix_generators_are_resolved_as_the_review_does() {
    use crate::feeders::{repo, REPO_HTTPS};
    let registration = |name: &str, env: &str| {
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    env: {env}\nstringData:\n  name: {name}\n  server: https://{name}.hub.example.org:6443\n")
    };
    let appset = |name: &str, generators: &str, file: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  goTemplate: true\n  generators:\n{generators}  template:\n    metadata:\n      name: '{name}-{{{{.name}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: charts/apps\n        helm:\n          valueFiles: ['{file}']\n      destination:\n        server: https://kubernetes.default.svc\n      syncPolicy:\n        automated: {{}}\n")
    };
    let fleet = appset(
        "fleet",
        "    - clusters:\n        selector:\n          matchLabels: {env: prod}\n",
        "/envs/values-{{.name}}.yaml",
    );
    let mixed = appset(
        "mixed",
        &format!("    - matrix:\n        generators:\n          - git:\n              repoURL: {REPO_HTTPS}\n              revision: main\n              directories: [{{path: 'regions/*'}}]\n          - list:\n              elements: [{{env: live, name: eu}}]\n"),
        "/envs/{{.path.basename}}-{{.env}}.yaml",
    );
    let values = format!("target:\n  url: {OLD}\n");
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "charts/apps/Chart.yaml",
                "apiVersion: v2\nname: apps\nversion: 0.1.0\n".into(),
            ),
            (
                "charts/apps/templates/app.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: child\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: manifests\n  destination:\n    server: {{ .Values.target.url }}\n    namespace: x\n".into(),
            ),
            ("registrations/prod.yaml", registration("prod", "prod")),
            ("registrations/stage.yaml", registration("stage", "stage")),
            ("appsets/fleet.yaml", fleet),
            ("appsets/mixed.yaml", mixed),
            ("regions/eu/kustomization.yaml", "resources: []\n".into()),
            ("envs/values-prod.yaml", values.clone()),
            ("envs/values-stage.yaml", values.clone()),
            ("envs/values-other.yaml", values.clone()),
            ("envs/eu-live.yaml", values.clone()),
            ("envs/eu-test.yaml", values.clone()),
        ],
    );
    let root = d.path();
    let s = scan(root, &[]);
    let road = "chart template charts/apps/templates/app.yaml:11 renders .Values.target.url (destination server)";
    let files: Vec<(String, String)> = found(&s, OLD).into_iter().map(|o| (o.0, o.5)).collect();
    assert_eq!(
        files,
        vec![
            ("envs/eu-live.yaml".into(), road.into()),
            ("envs/values-prod.yaml".into(), road.into()),
        ]
    );
    // `feeders` (the files holding positions, each with what carries it
    // after the merge) names the same two files, each deployed by the
    // ApplicationSet whose parameter set names it.
    let rows = |args: &[&str]| -> Vec<(String, String, String)> {
        let out = rebind(root, args);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["feeders"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["file"].as_str().unwrap().starts_with("envs/"))
            .map(|r| {
                (
                    r["file"].as_str().unwrap().to_string(),
                    r["feeder"].as_str().unwrap_or("").to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let row =
        |f: &str, by: &str, verdict: &str| (f.to_string(), by.to_string(), verdict.to_string());
    let deployed = vec![
        row(
            "envs/eu-live.yaml",
            "ApplicationSet/mixed",
            "deploys_on_merge",
        ),
        row(
            "envs/values-prod.yaml",
            "ApplicationSet/fleet",
            "deploys_on_merge",
        ),
    ];
    assert_eq!(rows(&["feeders", "--format", "json"]), deployed);
    // The review of a rebind of the endpoint wherever it is written (every
    // file) agrees: the same two deploy; a file of a cluster the selector
    // does not match, or that no registration names, is not proven (the
    // hub may register clusters the repository does not hold); a file no
    // pair of the matrix names has no feeder (the git and list sets are
    // all known).
    assert_eq!(
        rows(&["diff", "--from", OLD, "--to", NEW, "--format", "json"]),
        vec![
            deployed[0].clone(),
            row("envs/eu-test.yaml", "", "no_feeder"),
            row(
                "envs/values-other.yaml",
                "ApplicationSet/fleet",
                "not_proven"
            ),
            deployed[1].clone(),
            row(
                "envs/values-stage.yaml",
                "ApplicationSet/fleet",
                "not_proven"
            ),
        ]
    );
}

/// A git files generator's glob reads files as ArgoCD lists them (argo-cd
/// `util/git/client.go`, `LsFiles`; Generators-Git-File-Globbing.md): by
/// default `*` crosses `/` (`clusters/*/config.json` reads
/// `clusters/eu/stage/config.json` too), and the review's reading is the
/// same function (`find::resolve::git::files_match`). A file no glob reads
/// names no value file.
#[test]
fn a_git_files_generator_s_default_glob_crosses_folders_in_discovery_too() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: byfile\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        repoURL: https://git.example.com/gitops.git\n        revision: HEAD\n        files:\n          - path: clusters/*/config.json\n  template:\n    metadata:\n      name: 'app-{{.name}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: charts/apps\n        helm:\n          valueFiles: ['/values/{{.name}}.yaml']\n      destination:\n        server: https://kubernetes.default.svc\n";
    chart_repo(root, &[("appsets/byfile.yaml", set)]);
    write(root, "clusters/prod/config.json", "{\"name\": \"prod\"}\n");
    write(
        root,
        "clusters/eu/stage/config.json",
        "{\"name\": \"stage\"}\n",
    );
    write(root, "other/dev/config.json", "{\"name\": \"dev\"}\n");
    for f in ["values/prod.yaml", "values/stage.yaml", "values/dev.yaml"] {
        write(root, f, &format!("target:\n  url: {OLD}\n"));
    }
    let s = scan(root, &[]);
    let files: Vec<String> = found(&s, OLD).into_iter().map(|o| o.0).collect();
    assert_eq!(files, vec!["values/prod.yaml", "values/stage.yaml"]);
}
