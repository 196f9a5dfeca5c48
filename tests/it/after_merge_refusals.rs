//! What ArgoCD refuses to sync, or cannot see, whatever the revision, on
//! repositories built here: an AppProject's resource kind lists and the
//! namespaces of what a sync applies (argo-cd `controller/sync.go`
//! `validateSyncPermissions`), the repository's `argocd-cm` diffing
//! settings (`util/settings/settings.go`), the in-cluster destination as
//! ArgoCD names it (`util/db/cluster.go`), manifests the API server
//! refuses (an apiVersion ArgoCD does not serve, a name that is no
//! DNS-1123 subdomain, a quoted boolean), and a revision ArgoCD resolves
//! as a semantic-version constraint against tags first
//! (`util/git/client.go` `lsRemote`). Each is "not proven", naming the
//! rule; the same repository without the fault deploys.

use crate::after_merge_fences::{judged, not_proven, refused};
use crate::common::*;
use crate::feeders::{child, feeders, repo, row, REPO_HTTPS};

const AUTO: &str = "  syncPolicy:\n    automated: {}\n";

/// `root` (project `project`, destination `dest` on the hub) reading
/// `apps` of this repository, automated.
fn root(project: &str, dest: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  project: {project}\n  source:\n    repoURL: {REPO_HTTPS}\n    path: apps\n  destination:\n{dest}{AUTO}"
    )
}

const HUB: &str = "    server: https://kubernetes.default.svc\n    namespace: argocd\n";

fn project(spec: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: platform\n  namespace: argocd\nspec:\n  sourceRepos: ['*']\n{spec}"
    )
}

const OPEN_DEST: &str = "  destinations:\n    - {server: '*', namespace: '*'}\n";

/// `root` in project `platform` whose spec adds `spec`; `apps/a.yaml`
/// holds the child and `extra` documents.
fn fx(spec: &str, extra: &str) -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root("platform", HUB)),
            ("apps/a.yaml", format!("{}{extra}", child("a", 0, true))),
            ("projects/platform.yaml", project(spec)),
        ],
    )
}

fn deploys(dir: &std::path::Path, file: &str) {
    let (r, line, _) = judged(dir, file);
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    assert!(line.contains("deploys on merge"), "{line}");
}

/// `IsGroupKindNamePermitted`: the project of the Application that syncs
/// a file must permit the kind of each object in it, the child
/// Application included; a cluster-scoped kind needs a
/// `clusterResourceWhitelist` entry; a namespaced whitelist set but
/// empty means deny-all in current argo-cd and allow-all in older ones.
#[test]
fn the_projects_kind_lists_decide_what_a_sync_applies() {
    let cm = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: b}\n";
    // Permitted: deploys.
    let d = fx(
        &format!("{OPEN_DEST}  namespaceResourceWhitelist:\n    - {{group: argoproj.io, kind: Application}}\n    - {{group: '', kind: ConfigMap}}\n"),
        cm,
    );
    deploys(d.path(), "apps/a.yaml");
    for (spec, extra, words) in [
        (
            format!("{OPEN_DEST}  namespaceResourceBlacklist:\n    - {{group: argoproj.io, kind: Application}}\n"),
            "",
            vec!["argoproj.io/Application/a", "`namespaceResourceBlacklist` (projects/platform.yaml:10) lists it", "validateSyncPermissions"],
        ),
        (
            format!("{OPEN_DEST}  namespaceResourceWhitelist:\n    - {{group: '', kind: ConfigMap}}\n"),
            "",
            vec!["argoproj.io/Application/a", "`namespaceResourceWhitelist` (projects/platform.yaml:10) does not list it"],
        ),
        // The other objects of the changed file count too.
        (
            format!("{OPEN_DEST}  namespaceResourceWhitelist:\n    - {{group: 'argoproj.*', kind: '*'}}\n"),
            cm,
            vec!["/ConfigMap/settings (apps/a.yaml:", "does not list it"],
        ),
        (
            format!("{OPEN_DEST}  namespaceResourceWhitelist: []\n"),
            "",
            vec!["`namespaceResourceWhitelist` (projects/platform.yaml:10) is set but empty"],
        ),
        (
            OPEN_DEST.to_string(),
            "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
            vec!["/Namespace/team", "sets no clusterResourceWhitelist"],
        ),
    ] {
        let d = fx(&spec, extra);
        not_proven(d.path(), "apps/a.yaml", &words);
        refused(d.path(), "apps/a.yaml", "AppProject platform");
    }
    // A kind whose scope is not known is judged under both: a namespaced
    // whitelist that lists it with no cluster whitelist differs.
    let d = fx(
        &format!("{OPEN_DEST}  namespaceResourceWhitelist:\n    - {{group: '*', kind: '*'}}\n"),
        "---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["example.com/Widget/w", "under one reading only"],
    );
}

/// Each namespaced object a sync applies is checked in its own namespace
/// against the project's destinations (`validateSyncPermissions`:
/// "namespace ... is not permitted in project"): the child Application's
/// `metadata.namespace`, and any other object's, else the parent's
/// destination namespace.
#[test]
fn each_object_lands_in_a_namespace_the_project_permits() {
    let only =
        "  destinations:\n    - {server: https://kubernetes.default.svc, namespace: argocd}\n";
    deploys(fx(only, "").path(), "apps/a.yaml");
    let d = fx(
        only,
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team\n",
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "/ConfigMap/settings",
            "its namespace is not permitted",
            "namespace `team` on server https://kubernetes.default.svc",
        ],
    );
    // The child names its own namespace, outside what the project permits
    // (the parent's destination namespace is permitted).
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root("platform", "    server: https://kubernetes.default.svc\n    namespace: bootstrap\n")),
            ("apps/a.yaml", child("a", 0, true).replace("  name: a\n", "  name: a\n  namespace: argocd\n")),
            ("projects/platform.yaml", project("  destinations:\n    - {server: https://kubernetes.default.svc, namespace: bootstrap}\n")),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["argoproj.io/Application/a", "namespace `argocd`"],
    );
    refused(d.path(), "apps/a.yaml", "not permitted");
}

fn argocd_cm(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n{data}")
}

/// System-level diffing of the repository's `argocd-cm`
/// (docs/user-guide/diffing.md): an ignoreDifferences override of the
/// changed kind (split key or `.all`, or the `resource.customizations`
/// block), compare options the review does not model, and exclusions:
/// not proven. An override of another kind does not matter. With no
/// `argocd-cm` in the repository, the settings are taken as unset, and
/// the row says so.
#[test]
fn argocd_cm_diffing_settings_that_touch_the_change_are_not_proven() {
    let with = |data: &str| {
        repo(
            REPO_HTTPS,
            &[
                ("root.yaml", root("default", HUB)),
                ("apps/a.yaml", child("a", 0, true)),
                ("argocd/argocd-cm.yaml", argocd_cm(data)),
            ],
        )
    };
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root("default", HUB)),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    let (r, _, _) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    assert!(
        r["assumptions"]
            .to_string()
            .contains("no argocd-cm in the repository"),
        "{r}"
    );
    let d = with("  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointers: [/spec/replicas]\n");
    let (r, _, _) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    assert!(!r["assumptions"].to_string().contains("argocd-cm"), "{r}");
    for (data, words) in [
        (
            "  resource.customizations.ignoreDifferences.argoproj.io_Application: |\n    jsonPointers: [/spec/destination]\n",
            vec!["`resource.customizations.ignoreDifferences.argoproj.io_Application` (argocd/argocd-cm.yaml:7)", "ignores differences of argoproj.io/Application/a"],
        ),
        (
            "  resource.customizations.ignoreDifferences.all: |\n    managedFieldsManagers: [kube-controller-manager]\n",
            vec!["ignoreDifferences.all", "System-Level Configuration"],
        ),
        (
            "  resource.customizations: |\n    argoproj.io/*:\n      ignoreDifferences: |\n        jsonPointers: [/spec]\n",
            vec!["`resource.customizations`", "its `ignoreDifferences`"],
        ),
        (
            "  resource.exclusions: |\n    - apiGroups: [argoproj.io]\n      kinds: [Application]\n",
            vec!["`resource.exclusions`", "excludes"],
        ),
        (
            "  resource.compareoptions: |\n    somethingNew: true\n",
            vec!["`resource.compareoptions`", "`somethingNew`, not modelled"],
        ),
    ] {
        let d = with(data);
        not_proven(d.path(), "apps/a.yaml", &words);
        refused(d.path(), "apps/a.yaml", "argocd-cm");
    }
}

/// ArgoCD's settings given where the review does not read them are
/// unknown: a source of the argo-cd chart with value files (here a
/// multi-source `$values` file), a local chart depending on `argo-cd`, an
/// `argocd-cm` made by a kustomize `configMapGenerator`. The inline values
/// of a multi-source Application's argo-cd source are read.
#[test]
fn argocd_settings_given_where_they_are_not_read_are_not_proven() {
    let exclusions = "- apiGroups: [argoproj.io]\n  kinds: [Application]\n";
    let with = |files: Vec<(&str, String)>| {
        let mut all = vec![
            ("root.yaml", root("default", HUB)),
            ("apps/a.yaml", child("a", 0, true)),
        ];
        all.extend(files);
        repo(REPO_HTTPS, &all)
    };
    let chart_app = |helm: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  project: default\n  sources:\n  - repoURL: https://argoproj.github.io/argo-helm\n    chart: argo-cd\n    targetRevision: 7.7.0\n{helm}  - repoURL: {REPO_HTTPS}\n    targetRevision: main\n    ref: values\n  destination:\n{HUB}"
        )
    };
    let values = "configs:\n  cm:\n    resource.exclusions: |\n      - apiGroups: [argoproj.io]\n        kinds: [Application]\n".to_string();
    for (files, words) in [
        (
            vec![
                ("argocd/app.yaml", chart_app("    helm: {valueFiles: [$values/argocd/values.yaml]}\n")),
                ("argocd/values.yaml", values.clone()),
            ],
            vec!["ArgoCD's settings are not read", "`argocd/app.yaml:9` deploys the argo-cd chart with value files"],
        ),
        (
            vec![(
                "argocd/app.yaml",
                chart_app("    helm:\n      valuesObject:\n        configs:\n          cm:\n            resource.exclusions: |\n              - apiGroups: [argoproj.io]\n                kinds: [Application]\n"),
            )],
            vec!["`resource.exclusions` (argocd/app.yaml:", "excludes"],
        ),
        (
            vec![
                ("platform/argocd/Chart.yaml", "apiVersion: v2\nname: argocd\nversion: 1.0.0\ndependencies:\n- name: argo-cd\n  version: 7.7.0\n  repository: https://argoproj.github.io/argo-helm\n".to_string()),
                ("platform/argocd/values.yaml", format!("argo-cd:\n  {}", values.replace('\n', "\n  "))),
            ],
            vec!["`platform/argocd/Chart.yaml:5` is a chart depending on the argo-cd chart"],
        ),
        (
            vec![
                ("argocd/kustomization.yaml", "resources:\n- install.yaml\nconfigMapGenerator:\n- name: argocd-cm\n  behavior: merge\n  files:\n  - resource.exclusions=exclusions.yaml\n".to_string()),
                ("argocd/exclusions.yaml", exclusions.to_string()),
            ],
            vec!["`argocd/kustomization.yaml:4` makes ArgoCD's settings with a kustomize configMapGenerator"],
        ),
        (
            vec![(
                "argocd/set.yaml",
                format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  generators:\n  - list:\n      elements:\n      - {{name: hub}}\n  template:\n    metadata:\n      name: 'argocd-{{{{name}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://argoproj.github.io/argo-helm\n        chart: argo-cd\n        targetRevision: 7.7.0\n        helm:\n          valuesObject:\n            configs:\n              cm:\n                resource.exclusions: '[{{apiGroups: [argoproj.io], kinds: [Application]}}]'\n      destination:\n{HUB}"),
            )],
            vec!["`argocd/set.yaml:17` deploys the argo-cd chart from an ApplicationSet's template"],
        ),
    ] {
        let d = with(files);
        not_proven(d.path(), "apps/a.yaml", &words);
    }
}

/// Only `https://kubernetes.default.svc` exactly, or the name
/// `in-cluster`, is the cluster ArgoCD runs in (argo-cd
/// `util/db/cluster.go` compares exactly); both set is refused
/// (`util/argo/argo.go`).
#[test]
fn only_the_exact_in_cluster_spelling_is_the_hub() {
    for dest in ["    name: in-cluster\n    namespace: argocd\n", HUB] {
        let d = repo(
            REPO_HTTPS,
            &[
                ("root.yaml", root("default", dest)),
                ("apps/a.yaml", child("a", 0, true)),
            ],
        );
        deploys(d.path(), "apps/a.yaml");
    }
    for (server, word) in [
        (
            "    server: https://kubernetes.default.svc/\n",
            "not to the cluster ArgoCD runs in",
        ),
        (
            "    server: https://kubernetes.default.svc:443\n",
            "not to the cluster ArgoCD runs in",
        ),
        (
            "    server: HTTPS://KUBERNETES.DEFAULT.SVC\n",
            "not to the cluster ArgoCD runs in",
        ),
        (
            "    name: In-Cluster\n",
            "not to the cluster ArgoCD runs in",
        ),
        (
            "    name: in-cluster\n    server: https://kubernetes.default.svc\n",
            "sets both destination.server and destination.name",
        ),
    ] {
        let d = repo(
            REPO_HTTPS,
            &[
                (
                    "root.yaml",
                    root("default", &format!("{server}    namespace: argocd\n")),
                ),
                ("apps/a.yaml", child("a", 0, true)),
            ],
        );
        not_proven(d.path(), "apps/a.yaml", &[word]);
        refused(d.path(), "apps/a.yaml", word);
    }
}

/// Manifests the API server refuses: an ArgoCD kind with an apiVersion
/// other than argoproj.io/v1alpha1 (the parent, or the changed child), a
/// name that is no DNS-1123 subdomain, an ApplicationSet template name
/// whose literal text is not allowed in one, `goTemplate: "true"`.
#[test]
fn what_the_api_server_refuses_is_not_proven() {
    let set = |go: &str, name: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\n  namespace: argocd\nspec:\n  goTemplate: {go}\n  generators:\n    - list:\n        elements: [{{name: x}}]\n  template:\n    metadata:\n      name: '{name}'\n    spec:\n      project: default\n      source: {{repoURL: https://charts.example.com, chart: x, targetRevision: 1.0.0}}\n      destination: {{server: {OLD}, namespace: x}}\n")
    };
    for (root_text, child_text, words) in [
        (
            root("default", HUB).replace("argoproj.io/v1alpha1", "argoproj.io/v1beta1"),
            child("a", 0, true),
            vec!["Application/root (root.yaml) has apiVersion `argoproj.io/v1beta1`, not argoproj.io/v1alpha1"],
        ),
        (
            root("default", HUB),
            child("a", 0, true).replace("argoproj.io/v1alpha1", "argoproj.io.example/v1alpha1"),
            vec!["Application/a (apps/a.yaml) has apiVersion `argoproj.io.example/v1alpha1`"],
        ),
        (
            root("default", HUB),
            child("Child", 0, true),
            vec!["metadata.name `Child` is no DNS-1123 subdomain"],
        ),
        (
            root("default", HUB),
            set("\"true\"", "fleet-{{.name}}"),
            vec!["`spec.goTemplate: \"true\"", "wants a boolean"],
        ),
        (
            root("default", HUB),
            set("true", "Fleet-{{.name}}"),
            vec!["names its Applications `Fleet-{{.name}}`", "no DNS-1123 subdomain"],
        ),
    ] {
        let d = repo(REPO_HTTPS, &[("root.yaml", root_text), ("apps/a.yaml", child_text)]);
        not_proven(d.path(), "apps/a.yaml", &words);
    }
    // The same ApplicationSet, valid: deploys.
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root("default", HUB)),
            ("apps/a.yaml", set("true", "fleet-{{.name}}")),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
}

/// argo-cd `lsRemote` runs `versions.MaxVersion` against the tags before
/// it looks for a branch: a revision that is a semantic-version
/// constraint (`1.x`) resolves to the highest tag it matches, even when
/// the base branch has that name: pinned, not deployed by the merge.
#[test]
fn a_semver_constraint_branch_reads_a_tag() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root("default", HUB).replace(
                    "    path: apps\n",
                    "    path: apps\n    targetRevision: 1.x\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    git(d.path(), &["branch", "1.x"]);
    git(d.path(), &["update-ref", "refs/remotes/origin/1.x", "HEAD"]);
    git(d.path(), &["tag", "1.4.0"]);
    let (rows, _) = feeders(d.path(), &["--base", "1.x"]);
    let r = row(&rows, "apps/a.yaml");
    assert_eq!(r["verdict"], "pinned", "{r}");
    assert_eq!(r["proven"], false, "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("semver range 1.x"),
        "{r}"
    );
    // Whatever the base branch: ArgoCD reads the tag.
    let (rows, _) = feeders(d.path(), &["--base", "main"]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "pinned");
}
