//! Values that become a cluster address through a template in the same
//! repository: Helm charts whose templates render a values path into a
//! cluster position, and ApplicationSet list generators whose template
//! puts an element key of any name into `destination.server`.
//! The corpus is `testdata/discovery/helm-charts` and `appset-keys`.

use crate::common::{rebind, stderr, stdout, tree};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn corpus(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/discovery")
        .join(dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn scan_json(cwd: &Path, path: &str) -> Value {
    let out = rebind(cwd, &["scan", "--json", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `(path, line, column, endpoint, position)` of every value occurrence.
fn values(scan: &Value) -> Vec<(String, u64, u64, String, String)> {
    scan["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "value")
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
                o["endpoint"].as_str().unwrap().to_string(),
                o["position"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

const CHART_VALUE: &str = "chart value in a cluster position";

/// Each way a values path reaches a cluster position makes it one in the
/// chart's values files and in the value files Applications name for it.
#[test]
fn chart_values_rendered_into_cluster_positions_are_positions() {
    let root = corpus("");
    let scan = scan_json(&root, "helm-charts");
    let got = values(&scan);
    let at = |path: &str, line: u64, column: u64, endpoint: &str| {
        let want = (
            format!("helm-charts/{path}"),
            line,
            column,
            endpoint.to_string(),
            CHART_VALUE.to_string(),
        );
        assert!(got.contains(&want), "{want:?} not in {got:#?}");
    };
    // AppProject: range .Values.environments, `.server | quote`.
    at(
        "charts/env-projects/values.yaml",
        7,
        13,
        "https://k8s-retail-dev.corp.example.net:6443",
    );
    at(
        "charts/env-projects/values-dr.yaml",
        3,
        13,
        "https://10.72.4.10:6443",
    );
    // range $name, $dest := (a map), $dest.url
    at(
        "charts/env-projects/values-dr.yaml",
        7,
        10,
        "https://k8s-retail-batch.dr.example.net:6443",
    );
    // a value file named by an Application's helm.valueFiles (outside the chart)
    at(
        "envs/prod/env-projects.yaml",
        7,
        13,
        "https://k8s-retail-prod.eu.corp.example.net:6443",
    );
    // a helper renders the list generator's elements; the template uses {{url}}
    at(
        "charts/fleet-addons/values.yaml",
        6,
        10,
        "https://k8s-fleet-osaka.example.jp:6443",
    );
    // include "fleet-addons.obsServer" .Values.observability, `.cluster.apiServer`
    at(
        "charts/fleet-addons/values.yaml",
        10,
        16,
        "https://k8s-obs.example.jp",
    );
    // Rendered elsewhere (sourceRepos, source.repoURL): not clusters.
    for (path, _, _, endpoint, _) in &got {
        assert!(
            !endpoint.contains("charts.") && !endpoint.contains("github.com"),
            "{path}: {endpoint}"
        );
    }
}

/// What cannot be followed is named with file:line, in text and JSON,
/// and nothing is guessed from it.
#[test]
fn expressions_that_cannot_be_followed_are_noted() {
    let root = corpus("");
    let scan = scan_json(&root, "helm-charts");
    let notes: Vec<(String, u64, String)> = scan["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .map(|n| {
            (
                n["path"].as_str().unwrap().to_string(),
                n["line"].as_u64().unwrap(),
                n["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let secrets = "helm-charts/charts/cluster-registry/templates/secrets.yaml";
    assert_eq!(notes.len(), 2, "{notes:#?}");
    assert_eq!((notes[0].0.as_str(), notes[0].1), (secrets, 12));
    assert!(notes[0].2.starts_with("templated, not followed: "));
    assert!(
        notes[0].2.contains("`index` with a computed key"),
        "{notes:?}"
    );
    assert_eq!((notes[1].0.as_str(), notes[1].1), (secrets, 24));
    assert!(notes[1].2.contains("`tpl`"), "{notes:?}");
    // The values behind them are listed only where their host says so (EKS).
    let spark = values(&scan)
        .into_iter()
        .filter(|v| v.0.contains("cluster-registry"))
        .map(|v| v.4)
        .collect::<Vec<_>>();
    assert_eq!(spark, ["", ""], "no position is guessed for them");

    let out = rebind(&root, &["scan", "helm-charts"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "  {secrets}:12: templated, not followed: `{{{{ (index .Values.clusters .Values.environment).server }}}}`"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("  {secrets}:24: templated, not followed:")),
        "{text}"
    );
}

/// Destinations that are parameters are not hard-coded endpoints: they are
/// their own tier, with where their values come from.
#[test]
fn templated_destinations_are_their_own_tier() {
    let root = corpus("");
    let scan = scan_json(&root, "helm-charts");
    let tiers = &scan["tiers"];
    assert_eq!(tiers["hub_push"], serde_json::json!([]), "{tiers}");
    let templated = tiers["templated"].as_array().unwrap();
    let from = |resource: &str| {
        templated
            .iter()
            .find(|t| t["resource"] == resource)
            .unwrap_or_else(|| panic!("{resource} not templated: {tiers}"))["from"]
            .clone()
    };
    assert_eq!(
        from("Application/observability"),
        "values observability.cluster.apiServer in helm-charts/charts/fleet-addons/values.yaml"
    );
    assert_eq!(
        from("ApplicationSet/{{template}}"),
        "values clusters[].url in helm-charts/charts/fleet-addons/values.yaml"
    );
    assert_eq!(templated.len(), 2, "{tiers}");

    let scan = scan_json(&root, "appset-keys");
    let tiers = &scan["tiers"];
    assert_eq!(tiers["hub_push"], serde_json::json!([]), "{tiers}");
    let logging = tiers["templated"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["resource"] == "ApplicationSet/logging")
        .cloned();
    assert_eq!(
        logging.map(|t| t["from"].clone()),
        Some(
            "list generator elements[].kube-api in appset-keys/applicationsets/logging.yaml".into()
        )
    );
    let out = rebind(&root, &["scan", "appset-keys"]);
    let text = stdout(&out);
    assert!(
        text.contains("  templated          from generator/values    3 apps\n"),
        "{text}"
    );
}

/// `init` on a copy of one corpus folder, then `apply --cluster NAME --to
/// NEW`: every file is byte-for-byte what it was except the old endpoint's
/// bytes in `changed` (and the config `apply` updates); templates untouched.
fn init_then_apply_changes_only(
    folder: &str,
    cluster: &str,
    old: &str,
    new: &str,
    changed: &[&str],
) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus(folder), dir.path());
    let init = rebind(dir.path(), &["init", "."]);
    assert_eq!(init.status.code(), Some(0), "{}", stderr(&init));
    let config = std::fs::read_to_string(dir.path().join(".rebind.yaml")).unwrap();
    assert!(
        config.contains(&format!("  {cluster}:\n    endpoint: {old}\n")),
        "{config}"
    );
    let before = tree(dir.path());
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--cluster",
            cluster,
            "--to",
            new,
            "--no-commit",
            "--yes",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let after = tree(dir.path());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (rel, old_bytes) in &before {
        let new_bytes = &after[rel];
        if rel == ".rebind.yaml" {
            continue;
        }
        if changed.contains(&rel.as_str()) {
            let text = String::from_utf8(old_bytes.clone()).unwrap();
            assert_eq!(text.matches(old).count(), 1, "{rel}");
            let want = text.replace(old, new);
            assert_eq!(
                String::from_utf8(new_bytes.clone()).unwrap(),
                want,
                "{rel}: only the endpoint may change"
            );
        } else {
            assert_eq!(old_bytes, new_bytes, "{rel} must not change");
        }
    }
}

#[test]
fn apply_rebinds_an_appproject_charts_value_files_byte_exactly() {
    init_then_apply_changes_only(
        "helm-charts",
        "retail-prod",
        "https://k8s-retail-prod.corp.example.net:6443",
        "https://k8s-retail-prod-green.corp.example.net:6443",
        &["envs/prod/env-projects.yaml"],
    );
    init_then_apply_changes_only(
        "helm-charts",
        "retail-stage",
        "https://k8s-retail-stage.corp.example.net:6443",
        "https://k8s-retail-stage-green.corp.example.net:6443",
        &["charts/env-projects/values.yaml"],
    );
}

#[test]
fn apply_rebinds_values_fed_to_a_list_generator_by_a_helper_byte_exactly() {
    init_then_apply_changes_only(
        "helm-charts",
        "fleet-tokyo",
        "https://k8s-fleet-tokyo.example.jp:6443",
        "https://k8s-fleet-tokyo-2.example.jp:6443",
        &["charts/fleet-addons/values.yaml"],
    );
}

#[test]
fn apply_rebinds_list_elements_under_unusual_keys_byte_exactly() {
    init_then_apply_changes_only(
        "appset-keys",
        "sit",
        "https://192.168.90.20:6443",
        "https://192.168.91.20:6443",
        &["applicationsets/logging.yaml"],
    );
    init_then_apply_changes_only(
        "appset-keys",
        "ord",
        "https://k8s-ord.dc.example.com",
        "https://k8s-ord-2.dc.example.com",
        &["applicationsets/backup.yaml"],
    );
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A chart's positions belong to its own values files: another chart's
/// values with the same path, or a file that is no values file of the
/// chart, stay what they were. With one workload endpoint, `apply` needs
/// no `--from`.
#[test]
fn positions_stay_with_their_chart_and_apply_finds_the_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "a/Chart.yaml",
        "apiVersion: v2\nname: a\nversion: 0.1.0\n",
    );
    write(
        root,
        "a/templates/project.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: a\nspec:\n  destinations:\n  {{- range .Values.envs }}\n    - server: {{ .api }}\n      namespace: '*'\n  {{- end }}\n",
    );
    write(
        root,
        "a/values.yaml",
        "envs:\n  - name: lab\n    api: https://k8s-lab.example.org:6443 # the lab\n",
    );
    // Not a values file of chart a (no `values` prefix, no valueFiles).
    write(
        root,
        "a/ci/lint.yaml",
        "envs:\n  - name: lint\n    api: https://k8s-lint.example.org:6443\n",
    );
    write(
        root,
        "b/Chart.yaml",
        "apiVersion: v2\nname: b\nversion: 0.1.0\n",
    );
    write(
        root,
        "b/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  api: {{ (first .Values.envs).api }}\n",
    );
    write(
        root,
        "b/values.yaml",
        "envs:\n  - name: docs\n    api: https://docs.example.org\n",
    );
    let scan = scan_json(root, ".");
    let got: Vec<(String, String)> = values(&scan).into_iter().map(|v| (v.0, v.3)).collect();
    assert_eq!(
        got,
        [(
            "a/values.yaml".to_string(),
            "https://k8s-lab.example.org:6443".to_string()
        )]
    );
    let before = tree(root);
    let out = rebind(
        root,
        &[
            "apply",
            "--to",
            "https://k8s-lab-2.example.org:6443",
            "--no-commit",
            "--yes",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let after = tree(root);
    for (rel, old) in &before {
        if rel == "a/values.yaml" {
            assert_eq!(
                after[rel],
                b"envs:\n  - name: lab\n    api: https://k8s-lab-2.example.org:6443 # the lab\n"
            );
        } else {
            assert_eq!(&after[rel], old, "{rel}");
        }
    }
}

/// Named templates of a library subchart are the parent's too (one
/// namespace, as in Helm); a subchart's templates read its own values and
/// the parent's under the subchart's name (`spoke.api`), never the parent's
/// top level.
#[test]
fn subchart_helpers_are_followed_and_subchart_templates_stay_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "hub/Chart.yaml",
        "apiVersion: v2\nname: hub\nversion: 0.1.0\n",
    );
    write(
        root,
        "hub/templates/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: hub\nspec:\n  destination:\n    server: {{ include \"common.server\" .Values.target }}\n",
    );
    write(
        root,
        "hub/values.yaml",
        "target:\n  api: https://k8s-target.example.org:6443\nspoke:\n  api: https://k8s-spoke.example.org:6443\napi: https://k8s-top.example.org:6443\n",
    );
    write(
        root,
        "hub/charts/common/Chart.yaml",
        "apiVersion: v2\nname: common\ntype: library\nversion: 1.0.0\n",
    );
    write(
        root,
        "hub/charts/common/templates/_helpers.tpl",
        "{{- define \"common.server\" -}}\n{{ .api }}\n{{- end }}\n",
    );
    write(
        root,
        "hub/charts/spoke/Chart.yaml",
        "apiVersion: v2\nname: spoke\nversion: 1.0.0\n",
    );
    write(
        root,
        "hub/charts/spoke/templates/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: spoke\nspec:\n  destination:\n    server: {{ .Values.api }}\n",
    );
    write(
        root,
        "hub/charts/spoke/values.yaml",
        "api: https://k8s-spoke-default.example.org:6443\n",
    );
    let scan = scan_json(root, ".");
    let got: Vec<(String, String, String)> =
        values(&scan).into_iter().map(|v| (v.0, v.3, v.4)).collect();
    let want = [
        (
            "hub/charts/spoke/values.yaml",
            "https://k8s-spoke-default.example.org:6443",
        ),
        ("hub/values.yaml", "https://k8s-target.example.org:6443"),
        ("hub/values.yaml", "https://k8s-spoke.example.org:6443"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(p, e)| (p.to_string(), e.to_string(), CHART_VALUE.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(scan["notes"], serde_json::json!([]));
}

/// A template value after a complex key (`? [x]`) or an alias used as a
/// key is not at the key read before it (`destination.server` here): the
/// values paths it names are no cluster positions, and `scan` does not
/// take their URLs for workload endpoints.
#[test]
fn a_value_after_a_complex_or_alias_key_is_no_chart_position() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/apps.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: &k a\nspec:\n  destination:\n    server: {{ .Values.hub }}\n    ? [x]\n    : {{ .Values.complex }}\n    *k : {{ .Values.aliased }}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        "hub: https://hub.example.com:6443\ncomplex: https://hub.example.com:6443\naliased: https://hub.example.com:6443\n",
    )
    .unwrap();
    let got: Vec<(u64, String)> = values(&scan_json(dir.path(), "chart"))
        .into_iter()
        .filter(|v| v.0 == "chart/values.yaml")
        .map(|v| (v.1, v.4))
        .collect();
    assert_eq!(got, [(1, CHART_VALUE.to_string())]);
}
