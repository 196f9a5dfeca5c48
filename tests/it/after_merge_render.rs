//! Where ArgoCD's repo server fails to generate a parent's manifests, or
//! renders nothing from the rewritten file, on repositories built here.
//! The rules are argo-cd's `reposerver/repository/repository.go`
//! (`mergeSourceParameters`, `GetAppSourceType`, `findManifests`,
//! `getPotentiallyValidManifestFile`, `getObjsFromYAMLOrJSON`),
//! `util/app/path/path.go` (`Path`), `util/app/discovery/discovery.go`
//! (`Discover`), docs/user-guide/directory.md, docs/user-guide/kustomize.md
//! and docs/user-guide/helm.md. A failed render deploys nothing: the row
//! is not proven, naming the file and the rule; a file the render applies
//! nothing of is not included. The plain case of each family still
//! deploys; `diff --require-deploys` refuses exactly the others, and the
//! text says what the JSON says.

use crate::common::*;
use crate::feeders::{child, feeders, repo, row, REPO_HTTPS};
use serde_json::Value;
use std::path::Path;

/// An automated Application `root` reading `path` of this repository,
/// with `extra` lines inside its source.
fn root(path: &str, extra: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {REPO_HTTPS}\n    targetRevision: main\n    path: {path}\n{extra}  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n  syncPolicy:\n    automated: {{prune: true, selfHeal: true}}\n"
    )
}

/// `root.yaml` reading `path` (with `extra` in its source) and `files`.
fn fx(path: &str, extra: &str, files: &[(&str, String)]) -> tempfile::TempDir {
    let mut all = vec![("root.yaml", root(path, extra))];
    all.extend(files.iter().map(|(f, t)| (*f, t.clone())));
    repo(REPO_HTTPS, &all)
}

/// The JSON row of `file` and the text line for it.
fn judged(dir: &Path, file: &str) -> (Value, String) {
    let (rows, _) = feeders(dir, &[]);
    let r = row(&rows, file).clone();
    let o = rebind(dir, &["feeders"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(file))
        .unwrap_or_else(|| panic!("no line for {file}: {text}"))
        .to_string();
    (r, line)
}

/// The row of `file` deploys on merge, `diff --require-deploys` accepts
/// it (exit 1: changes found).
fn deploys(dir: &Path, file: &str) {
    let (r, line) = judged(dir, file);
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    assert!(line.contains("deploys on merge"), "{line}");
    let o = rebind(
        dir,
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// The row of `file` has `verdict`, its reason holds each of `words`,
/// the text line says the same, and `diff --require-deploys` refuses
/// (exit 2) naming the file.
fn refused(dir: &Path, file: &str, verdict: &str, words: &[&str]) {
    let (r, line) = judged(dir, file);
    assert_eq!(r["verdict"], verdict, "{r}");
    assert_eq!(r["proven"], false, "{r}");
    let reason = r["reason"].as_str().unwrap();
    for w in words {
        assert!(reason.contains(w), "{w:?} not in {reason}");
    }
    assert!(line.contains(reason), "text {line:?} != JSON {reason:?}");
    let o = rebind(
        dir,
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(file) && err.contains(words[0]), "{err}");
}

fn not_proven(dir: &Path, file: &str, words: &[&str]) {
    refused(dir, file, "not_proven", words);
}

fn not_included(dir: &Path, file: &str, words: &[&str]) {
    refused(dir, file, "not_included", words);
}

/// A child Application whose text starts with `head`.
fn child_after(head: &str) -> String {
    format!("{head}{}", child("a", 0, true))
}

/// reposerver/repository/repository.go `getPotentiallyValidManifestFile`
/// skips a file holding `+argocd:skip-file-rendering` (ArgoCD v3.1+,
/// docs/user-guide/directory.md "Skipping File Rendering"): the parent
/// applies nothing of it.
#[test]
fn a_file_holding_the_skip_marker_is_not_included() {
    let d = fx("apps", "", &[("apps/a.yaml", child("a", 0, true))]);
    deploys(d.path(), "apps/a.yaml");
    let d = fx(
        "apps",
        "",
        &[(
            "apps/a.yaml",
            child_after("# +argocd:skip-file-rendering\n"),
        )],
    );
    not_included(d.path(), "apps/a.yaml", &["+argocd:skip-file-rendering"]);
}

/// repository.go `mergeSourceParameters`: `.argocd-source.yaml` and
/// `.argocd-source-<appName>.yaml` in the source's folder override its
/// parameters (directory, helm, kustomize options); one named for another
/// Application is not read.
#[test]
fn a_source_override_file_in_the_parents_folder_is_not_followed() {
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            (
                "apps/.argocd-source-other.yaml",
                "directory: {exclude: a.yaml}\n".into(),
            ),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
    for name in [".argocd-source.yaml", ".argocd-source-root.yaml"] {
        let override_file = format!("apps/{name}");
        let d = fx(
            "apps",
            "",
            &[
                ("apps/a.yaml", child("a", 0, true)),
                (&override_file, "directory: {exclude: a.yaml}\n".into()),
            ],
        );
        not_proven(
            d.path(),
            "apps/a.yaml",
            &[
                &override_file,
                "overrides Application/root's source parameters",
            ],
        );
    }
}

/// util/app/discovery/discovery.go `Discover`:
/// `strings.HasSuffix(base, "Chart.yaml")` makes the folder a Helm chart;
/// `helm template` then fails without a `Chart.yaml`.
#[test]
fn a_file_name_ending_in_chart_yaml_makes_a_chart() {
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/Chart-notes.yaml", "foo: bar\n".into()),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/myChart.yaml", "foo: bar\n".into()),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/myChart.yaml", "Helm chart", "without a Chart.yaml"],
    );
}

/// util/app/path/path.go `Path`: "app path is absolute".
#[test]
fn an_absolute_source_path_fails() {
    let d = fx("/apps", "", &[("apps/a.yaml", child("a", 0, true))]);
    not_proven(d.path(), "apps/a.yaml", &["/apps", "app path is absolute"]);
}

/// repository.go `findManifests` / `getObjsFromYAMLOrJSON`: a YAML file
/// the source reads that does not parse and looks like a resource, a
/// `.json` file that is not one object, fail the whole Application; a
/// YAML file that neither parses as objects nor looks like a resource is
/// ignored, and a file the source does not read (excluded, skip marker,
/// another extension) changes nothing.
#[test]
fn a_file_the_directory_source_cannot_parse_fails_every_row() {
    let broken = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: [unclosed\n";
    // Harmless siblings.
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/notes.yaml", "foo: bar\n".into()),
            (
                "apps/c.json",
                "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"c\"}}\n"
                    .into(),
            ),
            ("apps/broken.txt", broken.into()),
            (
                "apps/skipped.yaml",
                format!("# +argocd:skip-file-rendering\n{broken}"),
            ),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
    let d = fx(
        "apps",
        "    directory:\n      exclude: broken.yaml\n",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/broken.yaml", broken.into()),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
    // A broken YAML sibling, named by file:line:column.
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/broken.yaml", broken.into()),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/broken.yaml:", "does not parse", "Failed to unmarshal"],
    );
    // A document without `kind` after an object.
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            (
                "apps/two.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\nfoo: bar\n".into(),
            ),
        ],
    );
    not_proven(d.path(), "apps/a.yaml", &["apps/two.yaml:6:1", "no `kind`"]);
    // A JSON array beside it.
    let d = fx(
        "apps",
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            (
                "apps/b.json",
                "[{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}]\n"
                    .into(),
            ),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/b.json:1:1", "not a single JSON object"],
    );
}

/// `directory.disableExtensionFilter` (repository.go
/// `getPotentiallyValidManifestFile`, docs/user-guide/directory.md): every
/// file is read, so a broken `.txt` file fails the render.
#[test]
fn disable_extension_filter_reads_every_file() {
    let broken = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: [unclosed\n";
    let d = fx(
        "apps",
        "    directory:\n      disableExtensionFilter: true\n",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/broken.txt", broken.into()),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/broken.txt:", "does not parse"],
    );
    let d = fx(
        "apps",
        "    directory:\n      disableExtensionFilter: true\n",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/README", "read me\n".into()),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
}

/// `feeders` lists the files a rebind reads, as `diff` does: with the
/// config's `include` reading `*.YAML`, a child in `apps/a.YAML` gets its
/// row (not included: the directory source's extension filter is
/// case-sensitive, docs/user-guide/directory.md), and `diff` refuses it
/// the same way; without the config neither reads it.
#[test]
fn feeders_reads_the_files_the_config_includes() {
    let files = |config: bool| {
        let mut f = vec![("apps/a.YAML", child("a", 0, true))];
        if config {
            f.push((
                ".rebind.yaml",
                "include: [\"**/*.yaml\", \"**/*.YAML\"]\n".into(),
            ));
        }
        f
    };
    let d = fx("apps", "", &files(true));
    let (r, line) = judged(d.path(), "apps/a.YAML");
    assert_eq!(r["verdict"], "not_included", "{r}");
    assert!(line.contains("case-sensitive"), "{line}");
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("apps/a.YAML"), "{}", stderr(&o));
    let d = fx("apps", "", &files(false));
    let (rows, _) = feeders(d.path(), &[]);
    assert!(rows.iter().all(|r| r["file"] != "apps/a.YAML"), "{rows:?}");
}

const KUST: &str = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";

/// kustomize build failures (docs/user-guide/kustomize.md; kustomize's
/// default load restrictor `LoadRestrictionsRootOnly`, "Found multiple
/// kustomization files", "already registered id", a listed folder without
/// a kustomization, `helmCharts` without `--enable-helm` in the argocd-cm's
/// `kustomize.buildOptions`, "Kustomizing Helm charts").
#[test]
fn a_kustomize_build_that_fails_deploys_nothing() {
    // A folder with its own kustomization outside is a root of its own.
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - ../common\n"),
            ),
            (
                "common/kustomization.yaml",
                format!("{KUST}resources:\n  - a.yaml\n"),
            ),
            ("common/a.yaml", child("a", 0, true)),
        ],
    );
    deploys(d.path(), "common/a.yaml");
    // A file outside the kustomization's folder.
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - ../loose/a.yaml\n"),
            ),
            ("loose/a.yaml", child("a", 0, true)),
        ],
    );
    not_proven(
        d.path(),
        "loose/a.yaml",
        &[
            "apps/kustomization.yaml:4",
            "../loose/a.yaml",
            "load restrictor",
        ],
    );
    // A listed folder without a kustomization: not "no feeder".
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - ../loose\n"),
            ),
            ("loose/a.yaml", child("a", 0, true)),
        ],
    );
    not_proven(
        d.path(),
        "loose/a.yaml",
        &["`loose`", "holds no kustomization"],
    );
    // Two kustomization files in one folder.
    for second in ["kustomization.yml", "Kustomization"] {
        let other = format!("apps/{second}");
        let d = fx(
            "apps",
            "",
            &[
                (
                    "apps/kustomization.yaml",
                    format!("{KUST}resources:\n  - a.yaml\n"),
                ),
                (&other, format!("{KUST}resources:\n  - a.yaml\n")),
                ("apps/a.yaml", child("a", 0, true)),
            ],
        );
        not_proven(
            d.path(),
            "apps/a.yaml",
            &[&other, "multiple kustomization files"],
        );
    }
    // One resource listed twice.
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - a.yaml\n  - a.yaml\n"),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/kustomization.yaml:5", "twice"],
    );
    // Another resource that does not parse.
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - a.yaml\n  - b.yaml\n"),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/b.yaml", "kind: ConfigMap\ndata: [unclosed\n".into()),
        ],
    );
    not_proven(d.path(), "apps/a.yaml", &["apps/b.yaml:", "does not parse"]);
}

/// `helmCharts` inflate only with `--enable-helm` in the argocd-cm's
/// `kustomize.buildOptions` (docs/user-guide/kustomize.md "Kustomizing
/// Helm charts"): with it, deploys; without it, or with no argocd-cm in
/// the repository (the flag is not known), not proven.
#[test]
fn kustomize_helm_charts_need_enable_helm() {
    let kust = format!(
        "{KUST}resources:\n  - a.yaml\nhelmCharts:\n  - name: redis\n    repo: https://charts.example.com\n    version: 1.0.0\n"
    );
    let cm = |opts: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n  kustomize.buildOptions: \"{opts}\"\n"
        )
    };
    let files = |cm_text: Option<String>| {
        let mut f = vec![
            ("apps/kustomization.yaml", kust.clone()),
            ("apps/a.yaml", child("a", 0, true)),
        ];
        if let Some(t) = cm_text {
            f.push(("argocd/argocd-cm.yaml", t));
        }
        f
    };
    let d = fx("apps", "", &files(Some(cm("--enable-helm"))));
    deploys(d.path(), "apps/a.yaml");
    let d = fx(
        "apps",
        "",
        &files(Some(cm("--load-restrictor LoadRestrictionsNone"))),
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "apps/kustomization.yaml:5",
            "argocd/argocd-cm.yaml:7",
            "lacks --enable-helm",
        ],
    );
    let d = fx("apps", "", &files(None));
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["apps/kustomization.yaml:5", "the flag is not known"],
    );
}

/// A file a kustomization reaches only as `configMapGenerator` or
/// `secretGenerator` data becomes a ConfigMap's or Secret's data; the
/// Application it holds is not applied (kustomize generators,
/// docs/user-guide/kustomize.md).
#[test]
fn a_file_held_as_generator_data_is_not_applied() {
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!(
                    "{KUST}configMapGenerator:\n  - name: backup\n    files:\n      - a.yaml\n"
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    not_included(
        d.path(),
        "apps/a.yaml",
        &["held as generator data", "configMapGenerator"],
    );
    let (rows, v) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "not_included");
    assert!(
        !v["order"].to_string().contains("Application/a"),
        "{}",
        v["order"]
    );
    // Listed as a resource as well: applied.
    let d = fx(
        "apps",
        "",
        &[
            (
                "apps/kustomization.yaml",
                format!("{KUST}resources:\n  - a.yaml\nsecretGenerator:\n  - name: backup\n    files:\n      - a.yaml\n"),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
}

const CHART: &str = "apiVersion: v2\nname: c\nversion: 0.1.0\n";

/// Helm (docs/user-guide/helm.md; Helm's engine renders no template whose
/// name starts with `_`, its loader drops what `.helmignore` lists, a
/// library chart is "not installable"; repository.go
/// `getResolvedValueFiles` fails on a missing value file unless
/// `ignoreMissingValueFiles`).
#[test]
fn helm_renders_nothing_or_fails() {
    let d = fx(
        "chart",
        "",
        &[
            ("chart/Chart.yaml", CHART.into()),
            ("chart/templates/a.yaml", child("a", 0, true)),
            ("chart/.helmignore", "*.md\n".into()),
        ],
    );
    deploys(d.path(), "chart/templates/a.yaml");
    let d = fx(
        "chart",
        "",
        &[
            ("chart/Chart.yaml", CHART.into()),
            ("chart/templates/_a.yaml", child("a", 0, true)),
        ],
    );
    not_included(
        d.path(),
        "chart/templates/_a.yaml",
        &["`_a.yaml` starts with `_`"],
    );
    let d = fx(
        "chart",
        "",
        &[
            ("chart/Chart.yaml", CHART.into()),
            ("chart/templates/a.yaml", child("a", 0, true)),
            ("chart/.helmignore", "# comment\ntemplates/a.yaml\n".into()),
        ],
    );
    not_included(d.path(), "chart/templates/a.yaml", &["chart/.helmignore:2"]);
    // A rule that is not followed (a negation) leaves it not proven.
    let d = fx(
        "chart",
        "",
        &[
            ("chart/Chart.yaml", CHART.into()),
            ("chart/templates/a.yaml", child("a", 0, true)),
            (
                "chart/.helmignore",
                "templates/*\n!templates/a.yaml\n".into(),
            ),
        ],
    );
    not_proven(d.path(), "chart/templates/a.yaml", &["chart/.helmignore:2"]);
    let d = fx(
        "chart",
        "",
        &[
            ("chart/Chart.yaml", format!("{CHART}type: library\n")),
            ("chart/templates/a.yaml", child("a", 0, true)),
        ],
    );
    not_proven(
        d.path(),
        "chart/templates/a.yaml",
        &["chart/Chart.yaml:4", "type: library"],
    );
    let missing = |ignore: &str| {
        fx(
            "chart",
            &format!("    helm:\n      valueFiles: [values-prod.yaml]\n{ignore}"),
            &[
                ("chart/Chart.yaml", CHART.into()),
                ("chart/templates/a.yaml", child("a", 0, true)),
            ],
        )
    };
    let d = missing("");
    not_proven(
        d.path(),
        "chart/templates/a.yaml",
        &["values-prod.yaml", "ignoreMissingValueFiles"],
    );
    let d = missing("      ignoreMissingValueFiles: true\n");
    deploys(d.path(), "chart/templates/a.yaml");
}

/// A rewritten child that is not valid YAML cannot be rewritten; the text
/// review and the JSON `feeders` agree on it: both list it, not proven
/// (its parent cannot render it), never leaving it out silently.
#[test]
fn an_invalid_child_is_judged_alike_in_text_and_json() {
    let d = fx(
        "apps",
        "",
        &[("apps/a.yaml", format!("{}  bad: [\n", child("a", 0, true)))],
    );
    let (rows, _) = feeders(d.path(), &[]);
    let o = rebind(d.path(), &["feeders"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let in_json = rows.iter().any(|r| r["file"] == "apps/a.yaml");
    let in_text = text
        .lines()
        .any(|l| l.trim_start().starts_with("apps/a.yaml"));
    assert!(in_json && in_text, "{text}");
    let r = rows.iter().find(|r| r["file"] == "apps/a.yaml").unwrap();
    assert_eq!(r["verdict"], "not_proven", "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("`apps/a.yaml:18:1` does not parse"), "{r}");
    assert!(!text.contains("deploys on merge"), "{text}");
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("apps/a.yaml:"), "{}", stderr(&o));
}

/// `apps/kustomization.yaml` listing `apps/a.yaml` (a child Application
/// without a namespace) with `extra` lines, and `more` files.
fn kustomized(extra: &str, more: &[(&str, String)]) -> tempfile::TempDir {
    let mut files = vec![
        ("apps/a.yaml", child("a", 0, true)),
        (
            "apps/kustomization.yaml",
            format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n{extra}"),
        ),
    ];
    files.extend(more.iter().cloned());
    fx("apps", "", &files)
}

/// Kustomize's transformers run over every resource a kustomization (or a
/// component it lists) reaches: `namespace` moves the child Application
/// (a namespaced kind to kustomize) out of the control-plane namespace,
/// `namePrefix`/`nameSuffix` rename it, a patch may change its spec,
/// `commonAnnotations` may make it a hook; none is applied by the review,
/// so the row is not proven, naming the field. Labels, images and a
/// patch of another kind change nothing the review reads.
#[test]
fn kustomize_transformers_over_a_child_are_not_proven() {
    for harmless in [
        "",
        "commonLabels: {team: a}\nimages: [{name: nginx, newTag: '1.2'}]\n",
        "patches:\n  - target: {kind: Deployment}\n    patch: '[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]'\n",
        "commonAnnotations: {team: a}\n",
    ] {
        let d = kustomized(harmless, &[]);
        deploys(d.path(), "apps/a.yaml");
    }
    for (extra, word) in [
        ("namespace: apps\n", "`namespace` of `apps/kustomization.yaml:4`"),
        ("namePrefix: x-\n", "`namePrefix`"),
        ("nameSuffix: -x\n", "`nameSuffix`"),
        (
            "patches:\n  - target: {kind: Application}\n    patch: '[{\"op\": \"remove\", \"path\": \"/spec/syncPolicy\"}]'\n",
            "`patches`",
        ),
        (
            "patches:\n  - target: {name: a}\n    patch: '[]'\n",
            "`patches`",
        ),
        ("replacements: []\n", "`replacements`"),
        ("transformers: [t.yaml]\n", "`transformers`"),
        (
            "commonAnnotations: {argocd.argoproj.io/hook: PreSync}\n",
            "`commonAnnotations`",
        ),
    ] {
        let d = kustomized(extra, &[]);
        not_proven(d.path(), "apps/a.yaml", &[word, "Application/root"]);
    }
    // A strategic-merge patch file naming the kind, and a component's
    // namespace (it acts on the listing kustomization's resources).
    let d = kustomized(
        "patchesStrategicMerge: [p.yaml]\n",
        &[(
            "apps/p.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {syncPolicy: null}\n".into(),
        )],
    );
    not_proven(d.path(), "apps/a.yaml", &["`patchesStrategicMerge`"]);
    let d = kustomized(
        "components: [../comp]\n",
        &[(
            "comp/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamespace: apps\n"
                .into(),
        )],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["`namespace` of `comp/kustomization.yaml:3`"],
    );
}

/// An ApplicationSet in `apps/` (read by `root`) with a git directories
/// generator over `clusters/*`, `go` as its `goTemplate` line, the
/// template's `name` and source `path`; children in `clusters/prod` and
/// `clusters/stage`.
fn appset(go: &str, name: &str, path: &str) -> tempfile::TempDir {
    let set = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\n  namespace: argocd\nspec:\n{go}  generators:\n    - git:\n        repoURL: {REPO_HTTPS}\n        revision: main\n        directories:\n          - path: clusters/*\n  template:\n    metadata:\n      name: '{name}'\n    spec:\n      project: default\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: '{path}'\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: argocd\n      syncPolicy:\n        automated: {{}}\n"
    );
    fx(
        "apps",
        "",
        &[
            ("apps/appset.yaml", set),
            ("clusters/prod/a.yaml", child("a", 0, true)),
            ("clusters/stage/b.yaml", child("b", 0, true)),
        ],
    )
}

/// argo-cd `applicationset/utils/utils.go` `Render.Replace`: without
/// `goTemplate: true`, fasttemplate fills only `{{name}}` tags and leaves
/// `{{.path.path}}` as written; with it, Go's template reads `{{path}}` as
/// a call of an undefined function and the ApplicationSet makes nothing.
/// A `goTemplate` that is no boolean is refused by the CRD's schema.
#[test]
fn appset_template_syntax_must_match_go_template() {
    let go = "  goTemplate: true\n";
    let d = appset("", "fleet-{{path.basename}}", "{{path}}");
    deploys(d.path(), "clusters/prod/a.yaml");
    let d = appset(go, "fleet-{{.path.basename}}", "{{.path.path}}");
    deploys(d.path(), "clusters/prod/a.yaml");
    let d = appset("", "fleet-{{path.basename}}", "{{.path.path}}");
    not_proven(
        d.path(),
        "clusters/prod/a.yaml",
        &["`{{.path.path}}`", "fasttemplate"],
    );
    let d = appset(
        "  goTemplate: false\n",
        "fleet-{{ .path.basename | lower }}",
        "{{path}}",
    );
    not_proven(
        d.path(),
        "clusters/prod/a.yaml",
        &["`{{.path.basename | lower}}`"],
    );
    let d = appset(go, "fleet-{{.path.basename}}", "{{path}}");
    not_proven(
        d.path(),
        "clusters/prod/a.yaml",
        &["`{{path}}`", "function that is not defined"],
    );
    let d = appset(go, "fleet-{{path.basename}}", "{{.path.path}}");
    not_proven(d.path(), "clusters/prod/a.yaml", &["`{{path.basename}}`"]);
    let d = appset(
        "  goTemplate: \"true\"\n",
        "fleet-{{.path.basename}}",
        "{{.path.path}}",
    );
    not_proven(
        d.path(),
        "clusters/prod/a.yaml",
        &["`spec.goTemplate: \"true\""],
    );
}

/// argo-cd `applicationset_controller.go` `validateGeneratedApplications`:
/// two generated Applications of one name ("contains applications with
/// duplicate name") are both left out; a name the API server refuses (no
/// DNS subdomain) makes no Application either.
#[test]
fn appset_names_must_be_unique_and_valid() {
    let d = appset("", "fleet", "{{path}}");
    for f in ["clusters/prod/a.yaml", "clusters/stage/b.yaml"] {
        not_proven(
            d.path(),
            f,
            &["more than one Application named `fleet`", "duplicate name"],
        );
    }
    for bad in ["Fleet-{{path.basename}}", "fleet_{{path.basename}}"] {
        let d = appset("", bad, "{{path}}");
        not_proven(d.path(), "clusters/prod/a.yaml", &["no DNS-1123 subdomain"]);
    }
    // A name made through a function or a pipeline is not rendered: its
    // names (`f-PROD`, `prod_x`, `fleet` twice) are not followed.
    let go = "  goTemplate: true\n";
    for through in [
        "f-{{ .path.basename | upper }}",
        "{{ printf \"%s_x\" .path.basename }}",
        "{{ \"fleet\" }}",
    ] {
        let d = appset(go, through, "{{.path.path}}");
        for f in ["clusters/prod/a.yaml", "clusters/stage/b.yaml"] {
            not_proven(
                d.path(),
                f,
                &[
                    &format!("template's name `{through}`"),
                    "the generated names are not followed: uniqueness and validity not proven",
                ],
            );
        }
    }
    for plain in ["f-{{ .path.basename }}", "f-{{- .path.basename -}}"] {
        let d = appset(go, plain, "{{.path.path}}");
        deploys(d.path(), "clusters/prod/a.yaml");
    }
}

/// gitops-engine `pkg/sync/hook` `IsHook`: a `helm.sh/hook` annotation
/// makes a resource a hook for every source type (a `pre-delete` one is
/// created on deletion only, a `test-*` one never), not a synced
/// resource, like `argocd.argoproj.io/hook`.
#[test]
fn a_helm_hook_child_is_not_proven() {
    for hook in ["pre-delete", "test-success", "post-install"] {
        let text = child("a", 0, true).replace(
            "  annotations:\n",
            &format!("  annotations:\n    helm.sh/hook: {hook}\n"),
        );
        let d = fx("apps", "", &[("apps/a.yaml", text)]);
        not_proven(
            d.path(),
            "apps/a.yaml",
            &[&format!("`helm.sh/hook: {hook}`"), "hook"],
        );
    }
    // `crd-install` is the one value `helm.IsHook` does not take.
    let text = child("a", 0, true).replace(
        "  annotations:\n",
        "  annotations:\n    helm.sh/hook: crd-install\n",
    );
    let d = fx("apps", "", &[("apps/a.yaml", text)]);
    deploys(d.path(), "apps/a.yaml");
}

/// The same holds for the changed file's own objects, whatever their
/// kind: a ConfigMap that is a Helm or an ArgoCD hook (`Skip` included,
/// never applied) is no resource the sync applies.
#[test]
fn a_changed_object_that_is_a_hook_is_not_proven() {
    let cm = |ann: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: argocd\n{ann}data:\n  server: {OLD}\n")
    };
    // The diff's own rows (a ConfigMap is no file `feeders` lists).
    let verdict = |ann: &str| -> (String, String) {
        let d = fx("apps", "", &[("apps/cm.yaml", cm(ann))]);
        let o = rebind(
            d.path(),
            &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = row(v["feeders"].as_array().unwrap(), "apps/cm.yaml").clone();
        let strict = rebind(
            d.path(),
            &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
        );
        let want = if r["verdict"] == "deploys_on_merge" {
            1
        } else {
            2
        };
        assert_eq!(strict.status.code(), Some(want), "{}", stderr(&strict));
        (
            r["verdict"].as_str().unwrap().to_string(),
            r["reason"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(verdict("").0, "deploys_on_merge");
    for hook in [
        "helm.sh/hook: pre-delete",
        "helm.sh/hook: test",
        "argocd.argoproj.io/hook: Skip",
        "argocd.argoproj.io/hook: PostDelete",
    ] {
        let (v, why) = verdict(&format!("  annotations:\n    {hook}\n"));
        assert_eq!(v, "not_proven", "{hook}: {why}");
        assert!(
            why.contains(&format!("`{hook}`")) && why.contains("hook"),
            "{why}"
        );
    }
}

/// reposerver/repository/repository.go `findManifests` evaluates every
/// `.jsonnet` file a directory source reads and fails the whole source
/// on an error ("Failed to evaluate jsonnet"); the review evaluates no
/// jsonnet. A `.libsonnet` file is only imported, and one the source does
/// not read (recurse off) changes nothing.
#[test]
fn a_jsonnet_file_in_a_directory_source_is_not_proven() {
    let a = ("apps/a.yaml", child("a", 0, true));
    for quiet in [
        ("apps/lib.libsonnet", "{}\n".to_string()),
        ("apps/sub/x.jsonnet", "{\n".to_string()),
    ] {
        let d = fx("apps", "", &[a.clone(), quiet]);
        deploys(d.path(), "apps/a.yaml");
    }
    let d = fx(
        "apps",
        "",
        &[
            a.clone(),
            (
                "apps/gen.jsonnet",
                "local x = import 'missing.libsonnet';\n{ a: x }\n".into(),
            ),
        ],
    );
    not_proven(d.path(), "apps/a.yaml", &["`apps/gen.jsonnet`", "jsonnet"]);
}

/// What a directory source reads is handed to the sync as resources: a
/// kustomization beside the manifests (`kustomize.config.k8s.io`, a kind
/// no cluster serves) or an object without `apiVersion` fails the sync's
/// dry run for the whole Application. A YAML file without `kind` (a
/// values file) is ignored by the repo server, as before.
#[test]
fn an_object_no_cluster_serves_in_a_directory_source_is_not_proven() {
    let a = ("apps/a.yaml", child("a", 0, true));
    let recurse = "    directory: {recurse: true}\n";
    let d = fx(
        "apps",
        recurse,
        &[
            a.clone(),
            ("apps/values.yaml", "replicas: 2\nimage: {tag: x}\n".into()),
        ],
    );
    deploys(d.path(), "apps/a.yaml");
    let d = fx(
        "apps",
        recurse,
        &[
            a.clone(),
            (
                "apps/extras/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n".into(),
            ),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["`apps/extras/kustomization.yaml:1:1`", "no cluster serves"],
    );
    let d = fx(
        "apps",
        "",
        &[
            a,
            (
                "apps/cm.yaml",
                "kind: ConfigMap\nmetadata: {name: x}\n".into(),
            ),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["`apps/cm.yaml:1:1`", "without `apiVersion`"],
    );
}

/// `helm template` fails for the whole chart, whatever file is asked
/// (Helm's `chart.Metadata.Validate`, its template parser, `fail`,
/// `required`, `helm dependency build`), or checks what is not followed
/// (`kubeVersion`, `values.schema.json`): every row through the chart is
/// not proven, naming the file and the rule.
#[test]
fn a_helm_chart_that_fails_to_render_is_not_proven() {
    let app = child("a", 0, true);
    let base = |more: &[(&str, &str)]| {
        let mut files: Vec<(&str, String)> = vec![
            ("chart/Chart.yaml", CHART.into()),
            ("chart/values.yaml", "x: 1\n".into()),
            ("chart/templates/a.yaml", app.clone()),
        ];
        for (f, t) in more {
            files.retain(|(g, _)| g != f);
            files.push((f, t.to_string()));
        }
        fx("chart", "", &files)
    };
    let d = base(&[(
        "chart/templates/ok.yaml",
        "{{- if .Values.x }}\ny: {{ required \"x\" .Values.x }}\n{{- end }}\n{{- range .Values.l }}\nz: {{ required \"a\" .a }}\n{{- end }}\n",
    )]);
    deploys(d.path(), "chart/templates/a.yaml");
    for (more, words) in [
        (("chart/Chart.yaml", "apiVersion: v2\nname: c\n"), &["`chart/Chart.yaml` sets no `version`"][..]),
        (("chart/Chart.yaml", "name: c\nversion: 0.1.0\n"), &["no `apiVersion`"]),
        (("chart/Chart.yaml", "apiVersion: v9\nname: c\nversion: 0.1.0\n"), &["`apiVersion: v9`"]),
        (("chart/templates/b.yaml", "{{ if .Values.x }}\nfoo: bar\n"), &["`chart/templates/b.yaml:1`", "no `end` closes"]),
        (("chart/templates/b.yaml", "foo: bar\n{{ end }}\n"), &["`chart/templates/b.yaml:2`", "closes nothing"]),
        (("chart/templates/_h.tpl", "{{ define \"x\" }}{{ .Values.x \n"), &["`chart/templates/_h.tpl:1`", "opens no action"]),
        (("chart/templates/b.yaml", "{{ fail \"not yet\" }}\n"), &["calls `fail`"]),
        (("chart/templates/b.yaml", "y: {{ required \"need y\" .Values.y }}\n"), &["`required`"]),
        (("chart/values.schema.json", "{}"), &["values.schema.json"]),
        (("chart/values.yaml", "x: 1\n  bad: [\n"), &["`chart/values.yaml:2"]),
        (
            ("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n  - {name: sub, version: 1.0.0, repository: file://../sub}\n"),
            &["`file://../sub`", "helm dependency build"],
        ),
    ] {
        let d = base(&[more]);
        not_proven(d.path(), "chart/templates/a.yaml", words);
    }
}
