//! The after-merge review fails closed: each family of ArgoCD rules on a
//! repository built here, with the verdict a person who knows ArgoCD would
//! give, and `--require-deploys` accepting exactly the proven rows. The
//! ArgoCD documentation page (or source) each rule comes from is named in
//! the test's comment.

use crate::common::*;
use crate::feeders::{
    child, config_refused, feeders, fx_generator_revision, fx_multi_source_ref,
    fx_recurse_and_kustomize, fx_root_at, repo, root_app, row, shipped_repo, write, REPO_HTTPS,
};
use serde_json::Value;
use std::path::Path;

const AUTO: &str = "  syncPolicy:\n    automated: {}\n";
const OTHER: &str = "https://git.example.com/platform/other.git";

/// `diff --require-deploys` on `paths`: its exit code (1: pending and
/// proven, 2: refused) and stderr.
fn require(dir: &Path, paths: &[&str], extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["diff", "--require-deploys", "--from", OLD, "--to", NEW];
    args.extend_from_slice(extra);
    args.extend_from_slice(paths);
    let o = rebind(dir, &args);
    (o.status.code(), stderr(&o))
}

/// `apply --require-deploys --yes --no-commit` on `path`.
fn apply_required(dir: &Path, path: &str) -> std::process::Output {
    apply_required_with(dir, path, &[])
}

/// [`apply_required`] with `extra` arguments (`--live FILE`).
fn apply_required_with(dir: &Path, path: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "apply",
        "--require-deploys",
        "--yes",
        "--no-commit",
        "--from",
        OLD,
        "--to",
        NEW,
    ];
    args.extend_from_slice(extra);
    args.push(path);
    rebind(dir, &args)
}

/// The verdict of `file` in `diff --format json` run on `path`.
fn diff_verdicts(dir: &Path, path: &str, file: &str) -> Vec<String> {
    let o = rebind(
        dir,
        &["diff", "--from", OLD, "--to", NEW, "--format", "json", path],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    verdicts(v["feeders"].as_array().unwrap(), file)
}

fn verdicts(rows: &[Value], file: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r["file"] == file)
        .map(|r| format!("{} {}", r["feeder"], r["verdict"]))
        .collect()
}

fn app_of(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n{spec}  destination:\n    server: https://kubernetes.default.svc\n"
    )
}

/// One model per repository: `feeders`, `diff` and `apply` give the same
/// verdict for the same file whether PATH is the repository, a folder in it
/// or the file itself (ArgoCD resolves `spec.source.path` against the
/// repository root: docs/user-guide/application-specification.md).
#[test]
fn the_same_verdict_whatever_path_is_given() {
    let d = fx_path_forms();
    for (file, want) in [
        ("apps/a.yaml", "\"Application/root\" \"deploys_on_merge\""),
        ("frozen/b.yaml", "\"Application/pinned\" \"pinned\""),
    ] {
        let folder = file.split('/').next().unwrap();
        for path in [".", folder, file] {
            let (rows, _) = feeders(d.path(), &[path]);
            assert_eq!(verdicts(&rows, file), vec![want], "feeders {path}");
            assert_eq!(
                diff_verdicts(d.path(), path, file),
                vec![want],
                "diff {path}"
            );
        }
    }
    // `--require-deploys` agrees in diff and apply with every PATH form
    // (`.` rewrites the pinned file too).
    for path in ["apps", "apps/a.yaml"] {
        assert_eq!(require(d.path(), &[path], &[]).0, Some(1), "diff {path}");
    }
    for path in [".", "frozen", "frozen/b.yaml"] {
        let before = tree(d.path());
        let (code, err) = require(d.path(), &[path], &[]);
        assert_eq!(code, Some(2), "diff {path}: {err}");
        assert!(err.contains("pinned to tag v1.4.0"), "{err}");
        let o = apply_required(d.path(), path);
        assert_eq!(o.status.code(), Some(2), "apply {path}: {}", stderr(&o));
        assert_eq!(tree(d.path()), before, "apply {path} wrote");
    }
    let o = apply_required(d.path(), "apps/a.yaml");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Without a remote, an Application of another repository with
    // `path: .` feeds nothing, whatever folder PATH names, and nothing is
    // proven.
    let d = fx_foreign_no_remote();
    for path in [".", "apps", "apps/a.yaml"] {
        let (rows, _) = feeders(d.path(), &[path]);
        assert_eq!(
            verdicts(&rows, "apps/a.yaml"),
            vec!["\"Application/foreign\" \"not_proven\""],
            "{path}"
        );
        assert_eq!(require(d.path(), &[path], &[]).0, Some(2), "{path}");
    }
}

/// A source is this repository only when its repoURL is one of the clone's
/// remotes (compared as argo-cd's util/git `NormalizeGitURL`/`SameURL`
/// do: case, `.git`); with no remote, nothing is proven by a path that
/// happens to exist, unless `.rebind.yaml` declares `repository_urls`.
#[test]
fn a_source_is_this_repository_only_by_its_url() {
    let d = fx_other_repo();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(verdicts(&rows, "apps/a.yaml"), vec!["null \"no_feeder\""]);
    // No remote at all: not proven, and said so.
    let d = fx_no_remote_root();
    let (rows, v) = feeders(d.path(), &[]);
    let a = row(&rows, "apps/a.yaml");
    assert_eq!(a["verdict"], "not_proven", "{a}");
    assert_eq!(a["proven"], false);
    assert!(
        a["reason"].as_str().unwrap().contains("no git remote"),
        "{a}"
    );
    assert!(v["notes"].to_string().contains("not known"), "{v}");
    assert_eq!(require(d.path(), &[], &[]).0, Some(2));
    // Declared: proven.
    write(
        d.path(),
        ".rebind.yaml",
        "clusters: {}\nrepository_urls:\n  - git@git.example.com:platform/gitops.git\n",
    );
    // Declared, but the root tracks `HEAD`, the remote's default branch,
    // which no remote tells here: not proven, and said so.
    let (rows, _) = feeders(d.path(), &[]);
    let a = row(&rows, "apps/a.yaml");
    assert_eq!(a["verdict"], "not_proven", "{a}");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("HEAD is the remote's default branch, which is unknown here"),
        "{a}"
    );
    // Declared, tracking the checked-out branch by name (the base): proven.
    write(
        d.path(),
        "root.yaml",
        &root_app(
            "root",
            REPO_HTTPS,
            "apps",
            &format!("    targetRevision: main\n{AUTO}"),
        ),
    );
    git(d.path(), &["commit", "-qam", "main"]);
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "deploys_on_merge");
    // Read strictly, naming line and column.
    for (bad, why) in [
        ("repository_urls: x\n", "expected a list"),
        ("repository_urls: [/srv/git/repo]\n", "names no repository"),
        ("repository_urls: [{a: b}]\n", "expected a URL"),
    ] {
        config_refused(d.path(), bad, why);
    }
}

/// `spec.sources` replaces `spec.source` when it lists any
/// (docs/user-guide/multiple_sources.md: "the `source` field is ignored";
/// `ApplicationSpec.HasMultipleSources`).
#[test]
fn sources_replaces_source() {
    let d = fx_sources_replaces_source();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(verdicts(&rows, "apps/a.yaml"), vec!["null \"no_feeder\""]);
}

/// An ApplicationSet's `syncPolicy.applicationsSync` `create-only` and
/// `create-delete` keep its controller from updating the Applications it
/// made; the controller's `applicationsetcontroller.policy` (in
/// `argocd-cmd-params-cm`) takes precedence unless
/// `applicationsetcontroller.enable.policy.override` is true
/// (docs/operator-manual/applicationset/Controlling-Resource-Modification.md).
#[test]
fn an_applicationset_that_does_not_update_its_applications_is_not_proven() {
    for (policy, cm, proven) in [
        ("", None, true),
        ("  syncPolicy:\n    applicationsSync: create-update\n", None, true),
        ("  syncPolicy:\n    applicationsSync: create-only\n", None, false),
        ("  syncPolicy:\n    applicationsSync: create-delete\n", None, false),
        // The controller's policy wins over the ApplicationSet's...
        (
            "  syncPolicy:\n    applicationsSync: sync\n",
            Some("  applicationsetcontroller.policy: create-only\n"),
            false,
        ),
        // ... unless the override is enabled.
        (
            "  syncPolicy:\n    applicationsSync: sync\n",
            Some("  applicationsetcontroller.policy: create-only\n  applicationsetcontroller.enable.policy.override: \"true\"\n"),
            true,
        ),
    ] {
        let d = fx_appset_policy(policy, cm);
        let (rows, _) = feeders(d.path(), &[]);
        let c = row(&rows, "clusters/prod.json");
        assert_eq!(c["proven"], proven, "{policy} {cm:?}: {c}");
        if !proven {
            assert_eq!(c["verdict"], "not_proven");
            assert!(
                c["reason"].as_str().unwrap().contains("create-only")
                    || c["reason"].as_str().unwrap().contains("create-delete"),
                "{c}"
            );
            assert_eq!(require(d.path(), &[], &[]).0, Some(2), "{policy}");
        } else {
            assert_eq!(require(d.path(), &[], &[]).0, Some(1), "{policy}");
        }
    }
}

/// The controller's policy given as the argo-cd chart's values
/// (`configs.params`): read inline in any source of a multi-source
/// Application; in a value file it is not read, so unknown.
#[test]
fn a_controller_policy_in_the_argo_cd_charts_values_is_read_or_unknown() {
    let app = |helm: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  project: default\n  sources:\n  - repoURL: https://argoproj.github.io/argo-helm\n    chart: argo-cd\n    targetRevision: 7.7.0\n    helm:\n{helm}  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n")
    };
    for (helm, words) in [
        (
            "      valuesObject:\n        configs:\n          params:\n            applicationsetcontroller.policy: create-only\n",
            "create-only",
        ),
        (
            "      valueFiles: [values.yaml]\n",
            "ArgoCD's settings are not read: `argocd/argocd.yaml:9` deploys the argo-cd chart with value files",
        ),
    ] {
        let d = fx_appset_policy("", Some(&app(helm)));
        let (rows, _) = feeders(d.path(), &[]);
        let c = row(&rows, "clusters/prod.json");
        assert_eq!(c["verdict"], "not_proven", "{helm}: {c}");
        assert!(c["reason"].as_str().unwrap().contains(words), "{c}");
    }
}

/// argo-cd `util/versions` `MaxVersion` with a source's `tagPrefix`: the
/// revision is a constraint over the tags that start with the prefix
/// (`release/` and `1.*` read the tag `release/1.4.0`); the field is not
/// modelled, so the row is not proven.
#[test]
fn a_source_tag_prefix_is_not_proven() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    &format!("    targetRevision: '1.*'\n    tagPrefix: release/\n{AUTO}"),
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    let (rows, _) = feeders(d.path(), &[]);
    let r = row(&rows, "apps/a.yaml");
    assert_eq!(r["verdict"], "not_proven", "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("`spec.source.tagPrefix`"),
        "{r}"
    );
}

/// Every parent of a file counts: a second Application that includes the
/// same file from a tag puts the old file back (with `selfHeal`, at once;
/// docs/user-guide/auto_sync.md), so the file is not proven to deploy and
/// that parent is named.
#[test]
fn a_pinned_second_parent_makes_the_file_not_proven() {
    let d = fx_pinned_parents();
    let (rows, _) = feeders(d.path(), &[]);
    let got = verdicts(&rows, "apps/a.yaml");
    assert_eq!(
        got,
        vec![
            "\"Application/old-root\" \"pinned\"",
            "\"Application/root\" \"not_proven\""
        ]
    );
    let r = rows
        .iter()
        .find(|r| r["feeder"] == "Application/root")
        .unwrap();
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("Application/old-root"),
        "{r}"
    );
    let (code, err) = require(d.path(), &[], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("old-root"), "{err}");
    // A parent that leaves the file out does not block.
    write(
        d.path(),
        "old-root.yaml",
        &root_app(
            "old-root",
            REPO_HTTPS,
            "elsewhere",
            "    targetRevision: v1.4.0\n",
        ),
    );
    std::fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    assert_eq!(require(d.path(), &[], &[]).0, Some(1));
}

/// `--live`: Applications are named by namespace and name (apps in any
/// namespace: docs/operator-manual/app-any-namespace.md); an Application
/// of the repository that the dump does not hold does not exist on the
/// hub, so it is no parent.
#[test]
fn live_applications_are_named_by_namespace_and_name() {
    let d = fx_live();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "b/y.yaml")["verdict"], "deploys_on_merge");
    let (rows, v) = feeders(d.path(), &["--live", LIVE_DUMP]);
    // team-a's root is the live one (its revision), not team-b's.
    assert_eq!(row(&rows, "a/x.yaml")["verdict"], "tracks_other_branch");
    // team-b's root is not live: no parent.
    assert_eq!(verdicts(&rows, "b/y.yaml"), vec!["null \"no_feeder\""]);
    let diffs = v["live_differences"].to_string();
    assert!(
        diffs.contains("Application/team-b/root") && diffs.contains("not in the live dump"),
        "{diffs}"
    );
}

/// With no `--base`, no remote HEAD and no upstream, the checked-out branch
/// is the base (what a cutover branch is made from), said in a note.
#[test]
fn with_the_base_unknown_the_checked_out_branch_is_the_base() {
    let d = fx_checked_out_base();
    let (rows, v) = feeders(d.path(), &[]);
    assert_eq!(v["base"], "trunk");
    assert_eq!(v["base_from"], "the checked-out branch");
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "manual_sync");
    assert!(
        v["notes"]
            .to_string()
            .contains("the checked-out branch trunk"),
        "{v}"
    );
    let o = rebind(d.path(), &["feeders"]);
    assert!(
        stdout(&o).contains("note: the base branch is unknown")
            || stderr(&o).contains("note: the base branch is unknown"),
        "{}",
        stdout(&o)
    );
}

/// A root declared under `feeders:` says what an Application says
/// (`recurse`, `include`, `exclude`, revision, automated:
/// docs/user-guide/directory.md); a path applied outside ArgoCD is declared
/// with `applied_by`, and the review says who applies it.
#[test]
fn declared_roots_and_paths_applied_outside_argocd() {
    let d = fx_declared();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/sub/a.yaml")["verdict"], "deploys_on_merge");
    let skip = row(&rows, "apps/skip.yaml");
    assert_eq!(skip["verdict"], "not_included", "{skip}");
    let s = row(&rows, "clusters/secret.yaml");
    assert_eq!(s["verdict"], "applied_outside_argocd", "{s}");
    assert_eq!(s["proven"], true);
    assert!(s["reason"].as_str().unwrap().contains("terraform"), "{s}");
    // The file left out by `exclude` blocks; the rest is accepted.
    let (code, err) = require(d.path(), &[], &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("apps/skip.yaml") && !err.contains("secret.yaml"),
        "{err}"
    );
    assert_eq!(require(d.path(), &["apps/sub", "clusters"], &[]).0, Some(1));
    // Strict: an applied path says only path and applied_by.
    for (bad, why) in [
        (
            "  - {path: x, applied_by: terraform, revision: main}\n",
            "revision",
        ),
        ("  - {path: x, applied_by: ''}\n", "applied_by"),
        (
            "  - {name: r, path: x, recurse: yes}\n",
            "recurse: expected true or false",
        ),
    ] {
        write(
            d.path(),
            ".rebind.yaml",
            &format!("clusters: {{}}\nfeeders:\n{bad}"),
        );
        let o = rebind(d.path(), &["feeders"]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains(why), "{bad}: {}", stderr(&o));
    }
}

/// Helm value files as ArgoCD resolves them (docs/user-guide/helm.md,
/// argo-cd `util/io/path.ResolveValueFilePathOrUrl`): relative to the
/// source path, `/...` from the repository root, `$ref/...` through a
/// `ref` source (docs/user-guide/multiple_sources.md); names templated by
/// list generator elements are followed, by other generators' parameters
/// not proven (never "no feeder"); subchart
/// templates render with their parent (Helm chart dependencies).
#[test]
fn value_files_and_charts_as_argocd_resolves_them() {
    let d = fx_value_files();
    // The rows `feeders` shows for files a rebind rewrites: ask diff.
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["feeders"].as_array().unwrap().clone();
    assert_eq!(
        verdicts(&rows, "envs/prod.yaml"),
        vec!["\"Application/abs\" \"deploys_on_merge\""]
    );
    assert_eq!(
        verdicts(&rows, "charts/web/charts/sub/templates/x.yaml"),
        vec!["\"Application/abs\" \"deploys_on_merge\""]
    );
    // The same when only the value file is rebound (the review reads every
    // Application that names value files, wherever its path is).
    for path in ["envs", "envs/prod.yaml"] {
        assert_eq!(
            diff_verdicts(d.path(), path, "envs/prod.yaml"),
            vec!["\"Application/abs\" \"deploys_on_merge\""],
            "{path}"
        );
    }
    // Each ApplicationSet's chart leaves out the other's value files.
    assert_eq!(
        verdicts(&rows, "charts/other/generated_values/prod.yaml"),
        vec![
            "\"ApplicationSet/gen\" \"deploys_on_merge\"",
            "\"ApplicationSet/per-cluster\" \"not_included\""
        ]
    );
    assert_eq!(
        verdicts(&rows, "charts/other/cluster_values/prod.yaml"),
        vec![
            "\"ApplicationSet/gen\" \"not_included\"",
            "\"ApplicationSet/per-cluster\" \"not_proven\""
        ]
    );
    let g = rows
        .iter()
        .find(|r| {
            r["feeder"] == "ApplicationSet/per-cluster"
                && r["file"] == "charts/other/cluster_values/prod.yaml"
        })
        .unwrap();
    assert!(
        g["reason"]
            .as_str()
            .unwrap()
            .contains("generator parameters"),
        "{g}"
    );
}

/// A git directories generator's `{{path}}` is each matching directory
/// (docs/operator-manual/applicationset/Generators-Git.md); other templated
/// paths are not followed, and say so instead of "no feeder". An
/// Application held in Helm values (`extraObjects`) exists only if its
/// chart renders it: not proven.
#[test]
fn generator_paths_and_applications_in_values() {
    for (path, proven) in [
        ("{{path}}", true),
        ("{{ .path.path }}", true),
        ("addons/{{path.basename}}-x", false),
    ] {
        let d = fx_generator_paths(path);
        let (rows, _) = feeders(d.path(), &[]);
        let a = row(&rows, "addons/keda/a.yaml");
        assert_eq!(a["proven"], proven, "{path}: {a}");
        assert_ne!(a["verdict"], "no_feeder", "{path}: {a}");
        if proven {
            assert_eq!(a["verdict"], "deploys_on_merge", "{path}: {a}");
            // The excluded directory is no Application's path.
            assert_eq!(
                verdicts(&rows, "addons/skipped/s.yaml"),
                vec!["null \"no_feeder\""],
                "{path}"
            );
        }
        let h = row(&rows, "hidden/h.yaml");
        assert_eq!(h["verdict"], "not_proven", "{h}");
        assert!(h["reason"].as_str().unwrap().contains("Helm values"), "{h}");
    }
}

/// An Application in a chart's `templates/` exists only as the chart
/// renders it, with the values of the Application that deploys the chart
/// (docs/operator-manual/cluster-bootstrapping.md, the Helm app-of-apps;
/// Helm merges the chart's values.yaml, then each value file in order,
/// docs/user-guide/helm.md; then the Application's inline values in
/// ArgoCD's precedence, docs/user-guide/helm.md "Helm Value Precedence":
/// `parameters > valuesObject > values > valueFiles`, and argo-cd
/// `ApplicationSourceHelm.ValuesYAML`: `valuesObject` replaces `values`).
/// Rendered when every action is followed and
/// one Application of the repository deploys the chart; else not proven,
/// naming the chart and the file:line (never "no feeder" by guess).
#[test]
fn an_application_rendered_by_a_chart_is_followed_or_not_proven() {
    // Nothing deploys the chart (installed by hand): its values are not known.
    let d = fx_rendered_by_chart();
    let (rows, _) = feeders(d.path(), &[]);
    let a = row(&rows, "apps/a.yaml");
    assert_eq!(a["verdict"], "not_proven", "{a}");
    assert_eq!(a["feeder"], "Application/rendered", "{a}");
    let why = a["reason"].as_str().unwrap();
    assert!(
        why.contains("rendered by the chart `bootstrap`")
            && why.contains("no Application of this repository deploys"),
        "{a}"
    );
    assert_eq!(require(d.path(), &[], &[]).0, Some(2));
    // Deployed by `root` with values: rendered, and proven.
    for (variant, file, want) in [
        (
            "values",
            "apps/a.yaml",
            "\"Application/rendered\" \"deploys_on_merge\"",
        ),
        // The value file the root names wins over values.yaml.
        (
            "value file",
            "apps/a.yaml",
            "\"Application/rendered\" \"pinned\"",
        ),
        // `enabled: false`: the chart renders no Application.
        ("disabled", "apps/a.yaml", "null \"no_feeder\""),
        (
            "include",
            "apps/a.yaml",
            "\"Application/rendered\" \"not_proven\"",
        ),
        // The root's inline values win over the value file and values.yaml.
        (
            "inline values",
            "apps/a.yaml",
            "\"Application/rendered\" \"pinned\"",
        ),
        // `valuesObject` replaces the `values` string.
        (
            "inline valuesObject",
            "apps/a.yaml",
            "\"Application/rendered\" \"deploys_on_merge\"",
        ),
        // `parameters` win over `valuesObject`.
        (
            "inline parameters",
            "apps/a.yaml",
            "\"Application/rendered\" \"pinned\"",
        ),
        // A file's content as a value is not followed.
        (
            "inline fileParameters",
            "apps/a.yaml",
            "\"Application/rendered\" \"not_proven\"",
        ),
        // A `range` over a list of the values renders one per element.
        (
            "range",
            "apps/a.yaml",
            "\"Application/rendered\" \"deploys_on_merge\"",
        ),
        (
            "range, function",
            "apps/a.yaml",
            "\"Application/{{ .name | upper }}\" \"not_proven\"",
        ),
        // An Application held in `extraObjects` of the chart's values,
        // rendered whole by a `range` and `toYaml`.
        (
            "extraObjects",
            "apps/a.yaml",
            "\"Application/held\" \"deploys_on_merge\"",
        ),
        (
            "extraObjects, nobody deploys it",
            "apps/a.yaml",
            "\"Application/held\" \"not_proven\"",
        ),
    ] {
        let d = fx_chart_app(variant);
        let (rows, _) = feeders(d.path(), &[]);
        assert_eq!(verdicts(&rows, file), vec![want], "{variant}");
        let r = row(&rows, file);
        let code = require(d.path(), &[file], &[]).0;
        assert_eq!(
            code,
            Some(if r["proven"] == true { 1 } else { 2 }),
            "{variant}"
        );
        let why = r["reason"].as_str().unwrap();
        match variant {
            "include" => assert!(
                why.contains("bootstrap/templates/rendered.yaml:10: `{{ include"),
                "{why}"
            ),
            "range, function" => assert!(
                why.contains("bootstrap/templates/rendered.yaml:5: `upper`"),
                "{why}"
            ),
            "extraObjects, nobody deploys it" => assert!(
                why.contains("is held in Helm values (`bootstrap/values.yaml:6`)")
                    && why.contains("no Application of this repository deploys `bootstrap`"),
                "{why}"
            ),
            "inline fileParameters" => assert!(
                why.contains("Application/root's inline values: `helm.fileParameters`"),
                "{why}"
            ),
            _ => {}
        }
    }
}

/// JSON says what the text says: each child Application's `hop2_automated`
/// is its own sync policy, the same the sync order gives it.
#[test]
fn hop2_and_the_sync_order_agree() {
    let d = fx_hop2();
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let order = v["sync_order"].as_array().unwrap();
    let rows = v["feeders"].as_array().unwrap();
    for id in ["Application/a", "Application/b"] {
        let step = order.iter().find(|s| s["resource"] == id).unwrap();
        let r = rows.iter().find(|r| r["resource"] == id).unwrap();
        assert_eq!(r["hop2_automated"], step["automated"], "{id}: {r} {step}");
    }
    let text = stdout(&rebind(d.path(), &["diff", "--from", OLD, "--to", NEW]));
    assert!(
        text.contains("wave 0: Application/a  (automated)"),
        "{text}"
    );
    assert!(
        text.contains("wave 1: Application/b  (manual: argocd app sync b)"),
        "{text}"
    );
}

/// A git files generator's `{{path}}` is the folder of each file its glob
/// matches (argo-cd `GitGenerator`: `params["path"] = path.Dir(filePath)`;
/// Generators-Git.md): the Application made for `clusters/prod` reads
/// that folder, not `clusters/dev` (which has no config file).
#[test]
fn a_git_files_generator_path_is_the_folder_of_each_file() {
    let d = fx_files_generator();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(
        verdicts(&rows, "clusters/prod/a.yaml"),
        vec!["\"ApplicationSet/per-env\" \"deploys_on_merge\""]
    );
    assert_eq!(
        verdicts(&rows, "clusters/dev/b.yaml"),
        vec!["null \"no_feeder\""]
    );
}

/// A git files generator's glob is greedy by default (`clusters/*.json`
/// reads `clusters/eu/prod.json` too); with the controller's
/// `applicationsetcontroller.enable.new.git.file.globbing` it is doublestar,
/// and `*` stays in one folder (Generators-Git-File-Globbing.md).
#[test]
fn the_files_generator_globbing_follows_the_controller_setting() {
    for (strict, want) in [
        (false, "\"ApplicationSet/clusters\" \"deploys_on_merge\""),
        (true, "null \"no_feeder\""),
    ] {
        let d = fx_globbing(strict);
        let (rows, _) = feeders(d.path(), &[]);
        assert_eq!(
            verdicts(&rows, "clusters/eu/prod.json"),
            vec![want],
            "{strict}"
        );
    }
}

/// An ApplicationSet's generators whose parameters the repository holds
/// are followed; the others are "not proven", named. The cluster generator
/// gives each registration `name`, `nameNormalized`, `server`,
/// `metadata.labels.<key>` and `metadata.annotations.<key>`, and the local
/// `in-cluster` when its selector is empty
/// (docs/operator-manual/applicationset/Generators-Cluster.md; argo-cd
/// `applicationset/generators/cluster.go`); a matrix is every pair of its
/// two generators' sets (Generators-Matrix.md); a merge updates the first
/// generator's sets by `mergeKeys` (Generators-Merge.md). The hub may
/// register clusters the repository does not hold, so a file no known
/// cluster names is not proven (never "not included" or "no feeder").
#[test]
fn cluster_matrix_and_merge_generators_over_registrations_in_the_repository() {
    let d = fx_cluster_generators();
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["feeders"].as_array().unwrap().clone();
    for (file, want) in [
        // Selected by `matchLabels: {env: prod}`, path from a label.
        (
            "workloads/prod/w.yaml",
            "\"ApplicationSet/by-label\" \"deploys_on_merge\"",
        ),
        // No registration in the repository is labelled env: stage.
        (
            "workloads/stage/s.yaml",
            "\"ApplicationSet/by-label\" \"not_proven\"",
        ),
        // Value files named by `{{name}}`: a registration (stringData) ...
        (
            "charts/app/values/prod.yaml",
            "\"ApplicationSet/values\" \"deploys_on_merge\"",
        ),
        // ... one whose fields are base64 in `data` ...
        (
            "charts/app/values/stage.yaml",
            "\"ApplicationSet/values\" \"deploys_on_merge\"",
        ),
        // ... the local cluster (empty selector) ...
        (
            "charts/app/values/in-cluster.yaml",
            "\"ApplicationSet/values\" \"deploys_on_merge\"",
        ),
        // ... and a name no registration in the repository gives.
        (
            "charts/app/values/dev.yaml",
            "\"ApplicationSet/values\" \"not_proven\"",
        ),
        // An SCM provider's parameters come from the provider.
        ("scm/r/x.yaml", "\"ApplicationSet/scm\" \"not_proven\""),
        (
            "matrix/prod/prod/m.yaml",
            "\"ApplicationSet/matrix\" \"deploys_on_merge\"",
        ),
        (
            "merge/gold/g.yaml",
            "\"ApplicationSet/merge\" \"deploys_on_merge\"",
        ),
        // A matrix of a git directories generator (Generators-Git.md) and
        // the cluster generator: each folder with each cluster.
        (
            "mixed/keda/k.yaml",
            "\"ApplicationSet/mixed\" \"deploys_on_merge\"",
        ),
        // ... but one whose git generator reads another branch: its
        // folders there are not read.
        (
            "pinned/x/p.yaml",
            "\"ApplicationSet/mixed-release\" \"not_proven\"",
        ),
        // A git files generator's parameters name value files.
        (
            "charts/cfg/cfg/prod.yaml",
            "\"ApplicationSet/per-file\" \"deploys_on_merge\"",
        ),
        (
            "charts/cfg/cfg/dev.yaml",
            "\"ApplicationSet/per-file\" \"not_included\"",
        ),
        (
            "charts/lst/cfg/eu.yaml",
            "\"ApplicationSet/per-item\" \"deploys_on_merge\"",
        ),
        (
            "charts/lst/cfg/asia.yaml",
            "\"ApplicationSet/per-item\" \"not_included\"",
        ),
    ] {
        assert_eq!(verdicts(&rows, file), vec![want], "{file}");
    }
    let reason = |file: &str| row(&rows, file)["reason"].as_str().unwrap().to_string();
    assert!(
        reason("scm/r/x.yaml").contains("`scmProvider` generator"),
        "{}",
        reason("scm/r/x.yaml")
    );
    assert!(
        reason("charts/app/values/dev.yaml").contains("clusters registered outside the repository")
    );
    assert!(reason("pinned/x/p.yaml").contains("reads revision `release`"));
    // The text says what the JSON says, row by row.
    let text = stdout(&rebind(d.path(), &["diff", "--from", OLD, "--to", NEW]));
    for r in &rows {
        let why = r["reason"].as_str().unwrap();
        assert!(text.contains(why), "{why}\n{text}");
    }
    // `--require-deploys` accepts the proven rows and refuses the others.
    for path in [
        "workloads/prod",
        "charts/app/values/prod.yaml",
        "matrix",
        "merge",
        "mixed",
        "charts/cfg/cfg/prod.yaml",
        "charts/lst/cfg/eu.yaml",
    ] {
        assert_eq!(require(d.path(), &[path], &[]).0, Some(1), "{path}");
    }
    for path in [
        "workloads/stage",
        "charts/app/values/dev.yaml",
        "scm",
        "pinned",
        "charts/cfg/cfg/dev.yaml",
    ] {
        let (code, err) = require(d.path(), &[path], &[]);
        assert_eq!(code, Some(2), "{path}: {err}");
    }
    // A cluster generator with a selector, and no registration in the
    // repository: nothing is known of its clusters.
    let d = fx_cluster_no_registrations();
    let (rows, _) = feeders(d.path(), &[]);
    let w = row(&rows, "workloads/prod/w.yaml");
    assert_eq!(w["verdict"], "not_proven", "{w}");
    assert!(
        w["reason"]
            .as_str()
            .unwrap()
            .contains("no cluster registration"),
        "{w}"
    );
    assert_eq!(require(d.path(), &[], &[]).0, Some(2));
}

// The fixture repositories of the tests above, one function each, so the
// agreement test below reads the same repositories.

/// Where [`fx_live`] keeps its `--live` dump: inside `.git`, so that the
/// dump is no manifest of the work tree (it holds an Application).
const LIVE_DUMP: &str = ".git/live.json";

/// Two Applications named `root` in two namespaces; the live dump holds
/// only team-a's, on another revision.
fn fx_live() -> tempfile::TempDir {
    let in_ns = |ns: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: {ns}\nspec:\n  source:\n    repoURL: {REPO_HTTPS}\n    path: {path}\n  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n  syncPolicy: {{automated: {{}}}}\n"
        )
    };
    let d = repo(
        REPO_HTTPS,
        &[
            ("team-a/root.yaml", in_ns("team-a", "a")),
            ("team-b/root.yaml", in_ns("team-b", "b")),
            // Applications outside the control-plane namespace sync only
            // when their project lists the namespace
            // (docs/operator-manual/app-any-namespace.md; argo-cd
            // `AppProject.IsAppNamespacePermitted`).
            (
                "argocd/default-project.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: default\n  namespace: argocd\nspec:\n  sourceRepos: ['*']\n  destinations: [{server: '*', namespace: '*'}]\n  sourceNamespaces: [team-a, team-b]\n".to_string(),
            ),
            // ... and the controller watches the namespace.
            (
                "argocd/cmd-params.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\ndata:\n  application.namespaces: team-a, team-b\n".to_string(),
            ),
            ("a/x.yaml", child("x", 0, true)),
            ("b/y.yaml", child("y", 0, true)),
        ],
    );
    let live = serde_json::json!({"kind": "List", "items": [{
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "root", "namespace": "team-a"},
        "spec": {"source": {"repoURL": REPO_HTTPS, "path": "a", "targetRevision": "release"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": "argocd"},
                 "syncPolicy": {"automated": {}}}
    }]});
    std::fs::write(d.path().join(LIVE_DUMP), live.to_string()).unwrap();
    d
}

/// An ApplicationSet named `name` with `generators` (YAML, indented for
/// `spec.generators`) and a template reading `source` (indented for
/// `spec.template.spec.source`), automated.
fn appset_of(name: &str, generators: &str, source: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\nspec:\n  generators:\n{generators}  template:\n    metadata: {{name: '{name}-{{{{name}}}}'}}\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n{source}      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
    )
}

fn fx_cluster_generators() -> tempfile::TempDir {
    let server = format!("server: {OLD}\n");
    let prod = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    env: prod\nstringData:\n  name: prod\n  server: {OLD}\n"
    );
    let stage = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stage\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    env: stage\ndata:\n  name: {}\n  server: {}\n",
        base64("stage"),
        base64(STAGE)
    );
    let prod_only = "      selector:\n        matchLabels: {env: prod}\n";
    let path = |p: &str| format!("        path: '{p}'\n");
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "registrations", AUTO)),
            ("registrations/prod.yaml", prod),
            ("registrations/stage.yaml", stage),
            (
                "appsets/by-label.yaml",
                appset_of(
                    "by-label",
                    &format!("  - clusters:\n{prod_only}"),
                    &path("workloads/{{metadata.labels.env}}"),
                ),
            ),
            (
                "appsets/values.yaml",
                appset_of(
                    "values",
                    "  - clusters: {}\n",
                    "        path: charts/app\n        helm:\n          valueFiles: ['values/{{name}}.yaml']\n",
                ),
            ),
            (
                "appsets/scm.yaml",
                appset_of(
                    "scm",
                    "  - scmProvider:\n      github: {organization: example}\n",
                    &path("scm/{{repository}}"),
                ),
            ),
            (
                "appsets/matrix.yaml",
                appset_of(
                    "matrix",
                    "  - matrix:\n      generators:\n      - list:\n          elements: [{env: prod}]\n      - clusters:\n          selector:\n            matchLabels: {env: prod}\n",
                    &path("matrix/{{env}}/{{ name }}"),
                ),
            ),
            (
                "appsets/merge.yaml",
                appset_of(
                    "merge",
                    "  - merge:\n      mergeKeys: [name]\n      generators:\n      - clusters:\n          selector:\n            matchLabels: {env: prod}\n      - list:\n          elements: [{name: prod, tier: gold}]\n",
                    &path("merge/{{tier}}"),
                ),
            ),
            (
                "appsets/mixed.yaml",
                appset_of(
                    "mixed",
                    &format!("  - matrix:\n      generators:\n      - git:\n          repoURL: {REPO_HTTPS}\n          revision: main\n          directories: [{{path: 'mixed/*'}}]\n      - clusters: {{}}\n"),
                    &path("{{path}}"),
                ),
            ),
            ("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n".into()),
            (
                "appsets/mixed-release.yaml",
                appset_of(
                    "mixed-release",
                    &format!("  - matrix:\n      generators:\n      - git:\n          repoURL: {REPO_HTTPS}\n          revision: release\n          directories: [{{path: 'pinned/*'}}]\n      - list:\n          elements: [{{env: a}}]\n"),
                    &path("{{path}}"),
                ),
            ),
            (
                "appsets/per-file.yaml",
                appset_of(
                    "per-file",
                    &format!("  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      files: [{{path: 'config/*.json'}}]\n"),
                    "        path: charts/cfg\n        helm:\n          valueFiles: ['cfg/{{name}}.yaml']\n",
                ),
            ),
            // A git files generator's file may be a list: each element is
            // one parameter set (argo-cd applicationset/generators/git.go,
            // `generateParamsFromGitFile` reads an array first).
            (
                "appsets/per-item.yaml",
                appset_of(
                    "per-item",
                    &format!("  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      files: [{{path: 'items/list.yaml'}}]\n"),
                    "        path: charts/lst\n        helm:\n          valueFiles: ['cfg/{{name}}.yaml']\n",
                ),
            ),
            ("items/list.yaml", "- name: eu\n- name: us\n".into()),
            ("charts/lst/Chart.yaml", "apiVersion: v2\nname: lst\nversion: 1.0.0\n".into()),
            ("charts/lst/cfg/eu.yaml", server.clone()),
            ("charts/lst/cfg/asia.yaml", server.clone()),
            ("config/prod.json", "{\"name\": \"prod\"}\n".into()),
            ("charts/cfg/Chart.yaml", "apiVersion: v2\nname: cfg\nversion: 1.0.0\n".into()),
            ("charts/cfg/cfg/prod.yaml", server.clone()),
            ("charts/cfg/cfg/dev.yaml", server.clone()),
            ("pinned/x/p.yaml", child("p", 0, true)),
            ("charts/app/values/prod.yaml", server.clone()),
            ("charts/app/values/stage.yaml", server.clone()),
            ("charts/app/values/in-cluster.yaml", server.clone()),
            ("charts/app/values/dev.yaml", server.clone()),
            ("workloads/prod/w.yaml", child("w", 0, true)),
            ("workloads/stage/s.yaml", child("s", 0, true)),
            ("scm/r/x.yaml", child("x", 0, true)),
            ("matrix/prod/prod/m.yaml", child("m", 0, true)),
            ("merge/gold/g.yaml", child("g", 0, true)),
            ("mixed/keda/k.yaml", child("k", 0, true)),
        ],
    )
}

fn fx_cluster_no_registrations() -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            (
                "appsets/by-label.yaml",
                appset_of(
                    "by-label",
                    "  - clusters:\n      selector:\n        matchLabels: {env: prod}\n",
                    "        path: 'workloads/{{name}}'\n",
                ),
            ),
            ("workloads/prod/w.yaml", child("w", 0, true)),
        ],
    )
}

fn fx_path_forms() -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            // Another repository's `path: .`: it feeds nothing here.
            ("foreign.yaml", root_app("foreign", OTHER, ".", AUTO)),
            (
                "pinned.yaml",
                root_app(
                    "pinned",
                    REPO_HTTPS,
                    "frozen",
                    "    targetRevision: v1.4.0\n  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("frozen/b.yaml", child("b", 0, true)),
        ],
    )
}

fn fx_foreign_no_remote() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "foreign.yaml",
        &root_app("foreign", OTHER, ".", AUTO),
    );
    write(d.path(), "apps/a.yaml", &child("a", 0, true));
    git_init_commit(d.path());
    d
}

fn fx_other_repo() -> tempfile::TempDir {
    // Remotes: another repository with the same folder feeds nothing.
    repo(
        REPO_HTTPS,
        &[
            ("other.yaml", root_app("other", OTHER, "apps", AUTO)),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    )
}

fn fx_no_remote_root() -> tempfile::TempDir {
    let d = fx_no_git();
    git_init_commit(d.path());
    d
}

fn fx_sources_replaces_source() -> tempfile::TempDir {
    let app = app_of(
        "both",
        &format!(
            "  source:\n    repoURL: {REPO_HTTPS}\n    path: apps\n  sources:\n  - repoURL: https://charts.example.com\n    chart: web\n    targetRevision: 1.0.0\n  syncPolicy:\n    automated: {{}}\n"
        ),
    );
    repo(
        REPO_HTTPS,
        &[("both.yaml", app), ("apps/a.yaml", child("a", 0, true))],
    )
}

fn fx_appset_policy(policy: &str, cm: Option<&str>) -> tempfile::TempDir {
    let appset = |policy: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: clusters\nspec:\n  generators:\n  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      files:\n      - path: clusters/*.json\n  template:\n    metadata: {{name: '{{{{name}}}}'}}\n    spec:\n      source: {{repoURL: {REPO_HTTPS}, path: workloads, targetRevision: main}}\n      destination: {{server: '{{{{server}}}}'}}\n      syncPolicy: {{automated: {{}}}}\n{policy}"
        )
    };
    let params = |data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\ndata:\n{data}")
    };
    let cluster = format!("{{\"name\": \"prod\", \"server\": \"{OLD}\"}}\n");
    let mut files = vec![
        ("appsets/clusters.yaml", appset(policy)),
        ("clusters/prod.json", cluster),
    ];
    if let Some(data) = cm {
        if data.starts_with("apiVersion") {
            files.push(("argocd/argocd.yaml", data.to_string()));
        } else {
            files.push(("argocd/params.yaml", params(data)));
        }
    }
    repo(REPO_HTTPS, &files)
}

fn fx_pinned_parents() -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            (
                "old-root.yaml",
                root_app(
                    "old-root",
                    REPO_HTTPS,
                    "apps",
                    "    targetRevision: v1.4.0\n  syncPolicy:\n    automated: {selfHeal: true}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    )
}

fn fx_checked_out_base() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "root.yaml",
        &root_app("root", REPO_HTTPS, "apps", "    targetRevision: trunk\n"),
    );
    write(d.path(), "apps/a.yaml", &child("a", 0, true));
    git_init_commit(d.path());
    git(d.path(), &["checkout", "-q", "-b", "trunk"]);
    git(d.path(), &["remote", "add", "origin", REPO_HTTPS]);
    d
}

fn fx_declared() -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            ("apps/sub/a.yaml", child("a", 0, true)),
            ("apps/skip.yaml", child("s", 0, true)),
            (
                "clusters/secret.yaml",
                format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels: {{argocd.argoproj.io/secret-type: cluster}}\nstringData:\n  server: {OLD}\n"),
            ),
            (
                ".rebind.yaml",
                "clusters: {}\nfeeders:\n  - {name: platform-root, path: apps, revision: main, automated: true, recurse: true, exclude: 'skip.yaml'}\n  - {path: clusters/secret.yaml, applied_by: terraform}\n".into(),
            ),
        ],
    )
}

fn fx_value_files() -> tempfile::TempDir {
    let chart_app = |name: &str, values: &str| {
        app_of(
            name,
            &format!(
                "  source:\n    repoURL: {REPO_HTTPS}\n    path: charts/web\n    helm:\n      valueFiles: [{values}]\n  syncPolicy:\n    automated: {{}}\n"
            ),
        )
    };
    let server = format!("server: {OLD}\n");
    let appset = |name: &str, generator: &str, values: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {name}\nspec:\n  generators:\n  - {generator}\n  template:\n    metadata: {{name: '{name}-{{{{name}}}}'}}\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        path: charts/other\n        targetRevision: main\n        helm:\n          valueFiles: ['{values}']\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
        )
    };
    // List elements are parameters known from the repository
    // (Generators-List.md); a cluster generator's are the hub's.
    let listed = appset(
        "gen",
        "list:\n      elements: [{name: prod}, {name: stage}]",
        "generated_values/{{name}}.yaml",
    );
    let clusters = appset(
        "per-cluster",
        "clusters: {}",
        "cluster_values/{{ name }}.yaml",
    );
    repo(
        REPO_HTTPS,
        &[
            ("apps/abs.yaml", chart_app("abs", "/envs/prod.yaml")),
            (
                "charts/web/Chart.yaml",
                "apiVersion: v2\nname: web\nversion: 1.0.0\n".into(),
            ),
            ("charts/web/charts/sub/templates/x.yaml", server.clone()),
            (
                "charts/other/Chart.yaml",
                "apiVersion: v2\nname: other\nversion: 1.0.0\n".into(),
            ),
            ("charts/other/generated_values/prod.yaml", server.clone()),
            ("charts/other/cluster_values/prod.yaml", server.clone()),
            ("envs/prod.yaml", server.clone()),
            ("appsets/gen.yaml", listed),
            ("appsets/per-cluster.yaml", clusters),
        ],
    )
}

fn fx_generator_paths(path: &str) -> tempfile::TempDir {
    let dirs = |path: &str| {
        // Go's syntax with `goTemplate: true`, fasttemplate's without.
        let (go, name) = if path.contains("{{ .") {
            ("  goTemplate: true\n", "{{.path.basename}}")
        } else {
            ("", "{{path.basename}}")
        };
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: addons\nspec:\n{go}  generators:\n  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      directories:\n      - path: addons/*\n      - path: addons/skipped\n        exclude: true\n  template:\n    metadata: {{name: '{name}'}}\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: '{path}'\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
        )
    };
    let values = format!(
        "extraObjects:\n  - apiVersion: argoproj.io/v1alpha1\n    kind: Application\n    metadata: {{name: hidden}}\n    spec:\n      source: {{repoURL: {REPO_HTTPS}, path: hidden}}\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            ("appsets/addons.yaml", dirs(path)),
            ("addons/keda/a.yaml", child("a", 0, true)),
            ("addons/skipped/s.yaml", child("s", 0, true)),
            ("argocd/values.yaml", values.clone()),
            ("hidden/h.yaml", child("h", 0, true)),
        ],
    )
}

fn fx_rendered_by_chart() -> tempfile::TempDir {
    let template = format!(
        "{{{{- if .Values.enabled }}}}\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: rendered\nspec:\n  source:\n    repoURL: {REPO_HTTPS}\n    path: apps\n    targetRevision: {{{{ .Values.revision }}}}\n  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n  syncPolicy: {{automated: {{}}}}\n{{{{- end }}}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            (
                "bootstrap/Chart.yaml",
                "apiVersion: v2\nname: bootstrap\nversion: 1.0.0\n".into(),
            ),
            ("bootstrap/templates/rendered.yaml", template),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    )
}

/// A chart `bootstrap` whose template renders an Application `rendered`
/// reading `apps`, deployed by `root` (with `envs/prod.yaml` as a value
/// file): each `variant` changes one thing (see the test above).
fn fx_chart_app(variant: &str) -> tempfile::TempDir {
    let revision = match variant {
        "include" => "{{ include \"bootstrap.revision\" . }}",
        // Inside a `range` the dot is the element: Helm reads the values
        // from the root, `$`.
        v if v.starts_with("range") => "{{ $.Values.revision | quote }}",
        _ => "{{ .Values.revision | quote }}",
    };
    let (open, name, close) = match variant {
        "range, function" => (
            "{{- range .Values.applications }}",
            "{{ .name | upper }}",
            "{{- end }}",
        ),
        "range" => (
            "{{- range .Values.applications }}",
            "{{ .name }}",
            "{{- end }}",
        ),
        _ => ("{{- if .Values.enabled }}", "rendered", "{{- end }}"),
    };
    let template = format!(
        "{open}\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  source:\n    repoURL: {REPO_HTTPS}\n    path: {{{{ $.Values.path }}}}\n    targetRevision: {revision}\n  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n  syncPolicy: {{automated: {{}}}}\n{close}\n"
    );
    let enabled = variant != "disabled";
    let mut values = format!(
        "enabled: {enabled}\npath: apps\nrevision: main\napplications: [{{name: rendered}}]\n"
    );
    let mut template = template;
    if variant.starts_with("extraObjects") {
        // An `extraObjects` list rendered whole (`toYaml` of each element).
        template = "{{- range .Values.extraObjects }}\n---\n{{ toYaml . }}\n{{- end }}\n".into();
        values.push_str(&format!(
            "extraObjects:\n  - apiVersion: argoproj.io/v1alpha1\n    kind: Application\n    metadata:\n      name: held\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        path: apps\n        targetRevision: main\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy:\n        automated: {{}}\n"
        ));
    }
    let helm = match variant {
        "value file" => "    helm:\n      valueFiles: [../envs/prod.yaml]\n",
        "inline values" => "    helm:\n      valueFiles: [../envs/main.yaml]\n      values: |\n        revision: v1.4.0\n",
        "inline valuesObject" => "    helm:\n      values: |\n        revision: v1.4.0\n      valuesObject:\n        revision: main\n",
        "inline parameters" => "    helm:\n      valuesObject:\n        revision: main\n      parameters:\n        - name: revision\n          value: v1.4.0\n",
        "inline fileParameters" => "    helm:\n      fileParameters:\n        - name: revision\n          path: rev.txt\n",
        _ => "",
    };
    let root = if variant.ends_with("nobody deploys it") {
        root_app("root", REPO_HTTPS, "elsewhere", AUTO)
    } else {
        root_app("root", REPO_HTTPS, "bootstrap", &format!("{helm}{AUTO}"))
    };
    repo(
        REPO_HTTPS,
        &[
            (
                "bootstrap/Chart.yaml",
                "apiVersion: v2\nname: bootstrap\nversion: 1.0.0\n".into(),
            ),
            ("bootstrap/values.yaml", values),
            ("bootstrap/templates/rendered.yaml", template),
            ("envs/prod.yaml", "revision: v1.4.0\n".into()),
            ("envs/main.yaml", "revision: main\n".into()),
            ("root.yaml", root),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    )
}

fn fx_hop2() -> tempfile::TempDir {
    let two = format!("{}---\n{}", child("a", 0, true), child("b", 1, false));
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            ("apps/ab.yaml", two),
        ],
    )
}

fn fx_files_generator() -> tempfile::TempDir {
    let appset = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: per-env\nspec:\n  generators:\n  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      files:\n      - path: clusters/*/config.json\n  template:\n    metadata: {{name: '{{{{path.basename}}}}'}}\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: '{{{{path}}}}'\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            ("appsets/per-env.yaml", appset),
            ("clusters/prod/config.json", "{\"env\": \"prod\"}\n".into()),
            ("clusters/prod/a.yaml", child("a", 0, true)),
            ("clusters/dev/b.yaml", child("b", 0, true)),
        ],
    )
}

fn fx_globbing(strict: bool) -> tempfile::TempDir {
    let appset = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: clusters\nspec:\n  generators:\n  - git:\n      repoURL: {REPO_HTTPS}\n      revision: main\n      files:\n      - path: clusters/*.json\n  template:\n    metadata: {{name: '{{{{name}}}}'}}\n    spec:\n      source: {{repoURL: {REPO_HTTPS}, path: workloads, targetRevision: main}}\n      destination: {{server: '{{{{server}}}}'}}\n      syncPolicy: {{automated: {{}}}}\n"
    );
    let cluster = format!("{{\"name\": \"prod\", \"server\": \"{OLD}\"}}\n");
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\ndata:\n  applicationsetcontroller.enable.new.git.file.globbing: \"true\"\n";
    let mut files = vec![
        ("appsets/clusters.yaml", appset),
        ("clusters/eu/prod.json", cluster),
    ];
    if strict {
        files.push(("argocd/params.yaml", cm.to_string()));
    }
    repo(REPO_HTTPS, &files)
}

/// [`fx_no_remote_root`]'s files with no git at all (and no
/// `.rebind.yaml`): the repository root is not known.
fn fx_no_git() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "root.yaml",
        &root_app("root", REPO_HTTPS, "apps", AUTO),
    );
    write(d.path(), "apps/a.yaml", &child("a", 0, true));
    d
}

/// The rows of `file` in a JSON report, as "feeder verdict proven", sorted.
fn file_rows(v: &Value, file: &str) -> Vec<String> {
    let mut rows: Vec<String> = v["feeders"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["file"] == file)
        .map(|r| format!("{} {} {}", r["feeder"], r["verdict"], r["proven"]))
        .collect();
    rows.sort();
    rows
}

/// `feeders` and `diff` on `file` with PATH `.`, its folder and the file
/// itself give the same rows; `apply --require-deploys` on a copy exits 0
/// exactly when no row of that PATH's diff blocks, else 2 with nothing
/// written. `extra` goes to every command (`--live FILE`). Returns the
/// verdict keys of `file`, sorted.
fn agreed_verdicts(dir: &Path, file: &str, extra: &[&str]) -> Vec<String> {
    let folder = file.rsplit_once('/').map_or(".", |(f, _)| f);
    let mut seen: Option<Vec<String>> = None;
    for path in [".", folder, file] {
        let o = rebind(
            dir,
            &[&["feeders", "--format", "json"], extra, &[path]].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "feeders {path}: {}", stderr(&o));
        let f: Value = serde_json::from_slice(&o.stdout).unwrap();
        let diff = ["diff", "--from", OLD, "--to", NEW, "--format", "json"];
        let o = rebind(dir, &[&diff[..], extra, &[path]].concat());
        assert_eq!(o.status.code(), Some(1), "diff {path}: {}", stderr(&o));
        let d: Value = serde_json::from_slice(&o.stdout).unwrap();
        let (from_feeders, from_diff) = (file_rows(&f, file), file_rows(&d, file));
        assert!(!from_diff.is_empty(), "diff {path}: no row for {file}: {d}");
        assert_eq!(
            from_feeders, from_diff,
            "{file}: feeders vs diff, PATH {path}"
        );
        let first = seen.get_or_insert_with(|| from_diff.clone());
        assert_eq!(*first, from_diff, "{file}: PATH . vs PATH {path}");
        // apply on a copy: 0 when no row of this PATH blocks, else 2 and
        // nothing written.
        let blocks = d["feeders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["blocks"] == true);
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir, copy.path());
        let before = tree(copy.path());
        let o = apply_required_with(copy.path(), path, extra);
        let want = if blocks { 2 } else { 0 };
        assert_eq!(
            o.status.code(),
            Some(want),
            "apply {path} ({file}): {}",
            stderr(&o)
        );
        if blocks {
            assert_eq!(tree(copy.path()), before, "apply {path} wrote");
        }
    }
    let mut keys: Vec<String> = seen
        .unwrap()
        .iter()
        .map(|r| r.rsplit(' ').nth(1).unwrap().trim_matches('"').to_string())
        .collect();
    keys.sort();
    keys
}

/// Every fixture of this module and of the shipped example: `feeders`,
/// The fields of a parent the review does not model, each with the
/// parent's text (`extra`: lines under `source`, then under `spec`) and
/// what a person who knows ArgoCD says: the change may not be applied.
const IGNORE_DIFFERENCES: &str = "  ignoreDifferences:\n  - group: argoproj.io\n    kind: Application\n    jsonPointers: [/spec/destination/server]\n";
const RESPECT: &str = "    syncOptions: [RespectIgnoreDifferences=true]\n";
const SKIP_RECONCILE: &str = "  annotations:\n    argocd.argoproj.io/skip-reconcile: \"true\"\n";

/// A root Application over `apps` (holding child `a`) with `extra` in
/// its spec (after `source.path`) and `annotations` in its metadata.
fn fx_parent_with(extra: &str, annotations: &str) -> tempfile::TempDir {
    let root = root_app("root", REPO_HTTPS, "apps", extra).replacen(
        "  namespace: argocd\nspec:",
        &format!("  namespace: argocd\n{annotations}spec:"),
        1,
    );
    repo(
        REPO_HTTPS,
        &[("root.yaml", root), ("apps/a.yaml", child("a", 0, true))],
    )
}

/// The parent of each case, by name: (extra, annotations).
fn parent_case(case: &str) -> (String, &'static str) {
    let auto_with = |more: &str| format!("  syncPolicy:\n    automated: {{}}\n{more}");
    match case {
        "plain" => (AUTO.to_string(), ""),
        // docs/user-guide/diffing.md: an ignored field is not compared,
        // so a change to it is never synced.
        "ignoreDifferences" => (format!("{AUTO}{IGNORE_DIFFERENCES}"), ""),
        // docs/user-guide/sync-options.md#respect-ignore-difference-configs
        "ignoreDifferences, respected" => (format!("{}{IGNORE_DIFFERENCES}", auto_with(RESPECT)), ""),
        // docs/user-guide/sync-options.md: syncOptions that only change
        // how a sync applies are harmless.
        "harmless syncOptions" => (auto_with("    syncOptions: [CreateNamespace=true, ServerSideApply=true]\n    retry: {limit: 2}\n"), ""),
        "FailOnSharedResource" => (auto_with("    syncOptions: [FailOnSharedResource=true]\n"), ""),
        // docs/user-guide/skip_reconcile.md
        "skip-reconcile" => (AUTO.to_string(), SKIP_RECONCILE),
        "skip-reconcile false" => (AUTO.to_string(), "  annotations:\n    argocd.argoproj.io/skip-reconcile: \"false\"\n"),
        // docs/user-guide/source-hydrator.md: it syncs hydrated manifests.
        "sourceHydrator" => (format!("{AUTO}  sourceHydrator:\n    drySource: {{repoURL: {REPO_HTTPS}, path: apps, targetRevision: main}}\n    syncSource: {{targetBranch: env/prod, path: apps}}\n"), ""),
        // argo-cd ApplicationSource.ExplicitType(): the given type is
        // rendered whatever the path holds; kustomize without a
        // kustomization fails, and two types are refused.
        "kustomize, no kustomization" => (format!("    kustomize:\n      namePrefix: x-\n{AUTO}"), ""),
        // argo-cd `ApplicationSource.ExplicitType()`: any `helm:` makes the
        // source a Helm chart, whatever it sets; `helm template` then needs
        // `Chart.yaml` (reposerver/repository/repository.go `helmTemplate`).
        "helm options, no chart" => (format!("    helm:\n      releaseName: apps\n{AUTO}"), ""),
        "helm value files, no chart" => (format!("    helm:\n      valueFiles: [a.yaml]\n{AUTO}"), ""),
        "helm valuesObject, no chart" => (format!("    helm:\n      valuesObject: {{x: 1}}\n{AUTO}"), ""),
        "helm values, no chart" => (format!("    helm:\n      values: |\n        x: 1\n{AUTO}"), ""),
        "helm parameters, no chart" => (format!("    helm:\n      parameters: [{{name: x, value: '1'}}]\n{AUTO}"), ""),
        "two source types" => (format!("    kustomize: {{}}\n    directory: {{recurse: true}}\n{AUTO}"), ""),
        "directory options" => (format!("    directory: {{recurse: true}}\n{AUTO}"), ""),
        other => panic!("no parent case {other}"),
    }
}

fn fx_parent(case: &str) -> tempfile::TempDir {
    let (extra, annotations) = parent_case(case);
    fx_parent_with(&extra, annotations)
}

/// A root over `apps`, where `apps/set.yaml` is an ApplicationSet naming
/// the old cluster, with `extra` in its spec: the changed child's own
/// fields count too (an `ignoreApplicationDifferences` on the destination
/// keeps its Applications where they are: docs
/// operator-manual/applicationset/Controlling-Resource-Modification.md).
fn fx_child_set(extra: &str) -> tempfile::TempDir {
    let set = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: childset\n  namespace: argocd\nspec:\n  generators:\n  - list:\n      elements:\n      - n: one\n{extra}  template:\n    metadata:\n      name: 'c-{{{{n}}}}'\n    spec:\n      project: default\n      source: {{repoURL: {REPO_HTTPS}, targetRevision: main, path: x}}\n      destination:\n        server: {OLD}\n        namespace: a\n      syncPolicy:\n        automated: {{}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            ("apps/set.yaml", set),
        ],
    )
}

/// `HEAD` (or no revision) is the remote's default branch
/// (docs/user-guide/tracking_strategies.md): proven only when the clone
/// knows it (`refs/remotes/origin/HEAD`).
fn fx_head(known: bool) -> tempfile::TempDir {
    let d = fx_parent_with(&format!("    targetRevision: HEAD\n{AUTO}"), "");
    if !known {
        git(
            d.path(),
            &["symbolic-ref", "--delete", "refs/remotes/origin/HEAD"],
        );
    }
    d
}

/// Every unmodeled field of a parent makes its rows "not proven", naming
/// the field and where it is set; `--require-deploys` refuses them; the
/// same parent without it deploys. Text and JSON say the same.
#[test]
fn a_parent_field_the_review_does_not_model_is_not_proven() {
    type Build = Box<dyn Fn() -> tempfile::TempDir>;
    let cases: Vec<(&str, Build, Option<&str>)> = vec![
        ("plain", Box::new(|| fx_parent("plain")), None),
        ("ignoreDifferences", Box::new(|| fx_parent("ignoreDifferences")), Some("Application/root sets `spec.ignoreDifferences` (root.yaml:")),
        ("respected", Box::new(|| fx_parent("ignoreDifferences, respected")), Some("`spec.ignoreDifferences`")),
        ("harmless", Box::new(|| fx_parent("harmless syncOptions")), None),
        ("shared", Box::new(|| fx_parent("FailOnSharedResource")), Some("`spec.syncPolicy.syncOptions: FailOnSharedResource=true`")),
        ("skip", Box::new(|| fx_parent("skip-reconcile")), Some("Application/root is annotated `argocd.argoproj.io/skip-reconcile: \"true\"` (root.yaml:7)")),
        ("skip false", Box::new(|| fx_parent("skip-reconcile false")), None),
        ("hydrator", Box::new(|| fx_parent("sourceHydrator")), Some("`spec.sourceHydrator`")),
        ("kustomize", Box::new(|| fx_parent("kustomize, no kustomization")), Some("gives `kustomize` options, but `apps` holds no kustomization")),
        ("two types", Box::new(|| fx_parent("two source types")), Some("`spec.source.{kustomize,directory}`")),
        ("directory", Box::new(|| fx_parent("directory options")), None),
        ("HEAD unknown", Box::new(|| fx_head(false)), Some("HEAD is the remote's default branch, which is unknown here")),
        ("HEAD known", Box::new(|| fx_head(true)), None),
        ("templatePatch", Box::new(|| fx_appset_policy(TEMPLATE_PATCH, None)), Some("ApplicationSet/clusters sets `spec.templatePatch` (appsets/clusters.yaml:")),
        ("ignoreApplicationDifferences", Box::new(|| fx_appset_policy(IGNORE_APP_DIFFERENCES, None)), Some("`spec.ignoreApplicationDifferences`")),
        (
            "helm",
            Box::new(|| fx_parent("helm options, no chart")),
            Some("gives `helm` options, but `apps` holds no Chart.yaml"),
        ),
        ("helm value files", Box::new(|| fx_parent("helm value files, no chart")), Some("gives `helm` options, but `apps` holds no Chart.yaml")),
        ("helm valuesObject", Box::new(|| fx_parent("helm valuesObject, no chart")), Some("gives `helm` options, but `apps` holds no Chart.yaml")),
        ("helm values", Box::new(|| fx_parent("helm values, no chart")), Some("gives `helm` options, but `apps` holds no Chart.yaml")),
        ("helm parameters", Box::new(|| fx_parent("helm parameters, no chart")), Some("gives `helm` options, but `apps` holds no Chart.yaml")),
        ("child set", Box::new(|| fx_child_set("")), None),
        ("child set, ignoreApplicationDifferences", Box::new(|| fx_child_set(IGNORE_APP_DIFFERENCES)), Some("ApplicationSet/childset sets `spec.ignoreApplicationDifferences` (apps/set.yaml:")),
    ];
    for (name, build, why) in cases {
        let d = build();
        let (rows, _) = feeders(d.path(), &[]);
        let file = if name.starts_with("child") {
            "apps/set.yaml"
        } else if name.contains("Patch") || name.contains("Application") {
            "clusters/prod.json"
        } else {
            "apps/a.yaml"
        };
        let r = row(&rows, file);
        let (code, err) = require(d.path(), &[file], &[]);
        match why {
            None => {
                assert_eq!(r["verdict"], "deploys_on_merge", "{name}: {r}");
                assert_eq!(code, Some(1), "{name}: {err}");
            }
            Some(why) => {
                assert_eq!(r["verdict"], "not_proven", "{name}: {r}");
                assert_eq!(r["proven"], false, "{name}");
                let reason = r["reason"].as_str().unwrap();
                assert!(reason.contains(why), "{name}: {reason}");
                assert_eq!(code, Some(2), "{name}: {err}");
                // The text names the same reason for the same file.
                assert!(err.contains(&format!("{file}: {reason}")), "{name}: {err}");
            }
        }
    }
}

/// docs operator-manual/applicationset/Template.md (templatePatch) and
/// Controlling-Resource-Modification.md (ignoreApplicationDifferences).
const TEMPLATE_PATCH: &str =
    "  templatePatch: |\n    spec:\n      source:\n        targetRevision: v1.0.0\n";
const IGNORE_APP_DIFFERENCES: &str =
    "  ignoreApplicationDifferences:\n  - jsonPointers: [/spec/destination]\n";

/// `diff` and `apply` agree on each rewritten file whatever PATH names it
/// (the model is rooted at the repository root; ArgoCD resolves
/// `spec.source.path` against it: docs/user-guide/application-specification.md),
/// and the verdict is the one the fixture's own test asserts.
#[test]
fn every_fixture_agrees_whatever_path_is_given() {
    type Build = Box<dyn Fn() -> tempfile::TempDir>;
    type Fixture<'a> = (&'a str, Build, Vec<(&'a str, &'a str)>);
    let policy = |p: &str| format!("  syncPolicy:\n    applicationsSync: {p}\n");
    let params = "  applicationsetcontroller.policy: create-only\n";
    let overridable = "  applicationsetcontroller.policy: create-only\n  applicationsetcontroller.enable.policy.override: \"true\"\n";
    let table: Vec<Fixture> = vec![
        (
            "path forms",
            Box::new(fx_path_forms),
            vec![
                ("apps/a.yaml", "deploys_on_merge"),
                ("frozen/b.yaml", "pinned"),
            ],
        ),
        (
            "foreign, no remote",
            Box::new(fx_foreign_no_remote),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "other repository",
            Box::new(fx_other_repo),
            vec![("apps/a.yaml", "no_feeder")],
        ),
        (
            "no remote",
            Box::new(fx_no_remote_root),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "sources",
            Box::new(fx_sources_replaces_source),
            vec![("apps/a.yaml", "no_feeder")],
        ),
        (
            "appset, no policy",
            Box::new(|| fx_appset_policy("", None)),
            vec![("clusters/prod.json", "deploys_on_merge")],
        ),
        (
            "appset create-only",
            Box::new(move || fx_appset_policy(&policy("create-only"), None)),
            vec![("clusters/prod.json", "not_proven")],
        ),
        (
            "appset create-update",
            Box::new(move || fx_appset_policy(&policy("create-update"), None)),
            vec![("clusters/prod.json", "deploys_on_merge")],
        ),
        (
            "appset create-delete",
            Box::new(move || fx_appset_policy(&policy("create-delete"), None)),
            vec![("clusters/prod.json", "not_proven")],
        ),
        (
            "appset sync, controller create-only",
            Box::new(move || fx_appset_policy(&policy("sync"), Some(params))),
            vec![("clusters/prod.json", "not_proven")],
        ),
        (
            "appset sync, controller create-only, override",
            Box::new(move || fx_appset_policy(&policy("sync"), Some(overridable))),
            vec![("clusters/prod.json", "deploys_on_merge")],
        ),
        (
            "cluster, matrix and merge generators",
            Box::new(fx_cluster_generators),
            vec![
                ("workloads/prod/w.yaml", "deploys_on_merge"),
                ("workloads/stage/s.yaml", "not_proven"),
                ("charts/app/values/prod.yaml", "deploys_on_merge"),
                ("charts/app/values/stage.yaml", "deploys_on_merge"),
                ("charts/app/values/dev.yaml", "not_proven"),
                ("scm/r/x.yaml", "not_proven"),
                ("matrix/prod/prod/m.yaml", "deploys_on_merge"),
                ("merge/gold/g.yaml", "deploys_on_merge"),
                ("mixed/keda/k.yaml", "deploys_on_merge"),
                ("pinned/x/p.yaml", "not_proven"),
                ("charts/cfg/cfg/prod.yaml", "deploys_on_merge"),
                ("charts/cfg/cfg/dev.yaml", "not_included"),
                ("registrations/prod.yaml", "deploys_on_merge"),
            ],
        ),
        (
            "cluster generator, no registration",
            Box::new(fx_cluster_no_registrations),
            vec![("workloads/prod/w.yaml", "not_proven")],
        ),
        (
            "chart renders, values",
            Box::new(|| fx_chart_app("values")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "chart renders, value file",
            Box::new(|| fx_chart_app("value file")),
            vec![("apps/a.yaml", "pinned")],
        ),
        (
            "chart renders nothing",
            Box::new(|| fx_chart_app("disabled")),
            vec![("apps/a.yaml", "no_feeder")],
        ),
        (
            "chart template, include",
            Box::new(|| fx_chart_app("include")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "chart template, range",
            Box::new(|| fx_chart_app("range")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "chart template, range, function",
            Box::new(|| fx_chart_app("range, function")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "extraObjects",
            Box::new(|| fx_chart_app("extraObjects")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "extraObjects, nobody deploys it",
            Box::new(|| fx_chart_app("extraObjects, nobody deploys it")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, plain",
            Box::new(|| fx_parent("plain")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "parent, ignoreDifferences",
            Box::new(|| fx_parent("ignoreDifferences")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, ignoreDifferences respected",
            Box::new(|| fx_parent("ignoreDifferences, respected")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, harmless syncOptions",
            Box::new(|| fx_parent("harmless syncOptions")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "parent, FailOnSharedResource",
            Box::new(|| fx_parent("FailOnSharedResource")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, skip-reconcile",
            Box::new(|| fx_parent("skip-reconcile")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, skip-reconcile false",
            Box::new(|| fx_parent("skip-reconcile false")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "parent, sourceHydrator",
            Box::new(|| fx_parent("sourceHydrator")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, kustomize options",
            Box::new(|| fx_parent("kustomize, no kustomization")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, two source types",
            Box::new(|| fx_parent("two source types")),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, directory options",
            Box::new(|| fx_parent("directory options")),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "parent, HEAD unknown",
            Box::new(|| fx_head(false)),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "parent, HEAD known",
            Box::new(|| fx_head(true)),
            vec![("apps/a.yaml", "deploys_on_merge")],
        ),
        (
            "child set",
            Box::new(|| fx_child_set("")),
            vec![("apps/set.yaml", "deploys_on_merge")],
        ),
        (
            "child set, ignoreApplicationDifferences",
            Box::new(|| fx_child_set(IGNORE_APP_DIFFERENCES)),
            vec![("apps/set.yaml", "not_proven")],
        ),
        (
            "appset templatePatch",
            Box::new(|| fx_appset_policy(TEMPLATE_PATCH, None)),
            vec![("clusters/prod.json", "not_proven")],
        ),
        (
            "appset ignoreApplicationDifferences",
            Box::new(|| fx_appset_policy(IGNORE_APP_DIFFERENCES, None)),
            vec![("clusters/prod.json", "not_proven")],
        ),
        (
            "live",
            Box::new(fx_live),
            vec![
                ("a/x.yaml", "tracks_other_branch"),
                ("b/y.yaml", "no_feeder"),
            ],
        ),
        (
            "pinned parent",
            Box::new(fx_pinned_parents),
            vec![("apps/a.yaml", "not_proven pinned")],
        ),
        (
            "checked-out base",
            Box::new(fx_checked_out_base),
            vec![("apps/a.yaml", "manual_sync")],
        ),
        (
            "declared",
            Box::new(fx_declared),
            vec![
                ("apps/sub/a.yaml", "deploys_on_merge"),
                ("apps/skip.yaml", "not_included"),
                ("clusters/secret.yaml", "applied_outside_argocd"),
            ],
        ),
        (
            "value files",
            Box::new(fx_value_files),
            vec![
                ("envs/prod.yaml", "deploys_on_merge"),
                ("charts/web/charts/sub/templates/x.yaml", "deploys_on_merge"),
                (
                    "charts/other/generated_values/prod.yaml",
                    "deploys_on_merge not_included",
                ),
                (
                    "charts/other/cluster_values/prod.yaml",
                    "not_included not_proven",
                ),
            ],
        ),
        (
            "git directories",
            Box::new(|| fx_generator_paths("{{path}}")),
            vec![
                ("addons/keda/a.yaml", "deploys_on_merge"),
                ("addons/skipped/s.yaml", "no_feeder"),
                ("hidden/h.yaml", "not_proven"),
            ],
        ),
        (
            "templated path",
            Box::new(|| fx_generator_paths("addons/{{path.basename}}-x")),
            vec![("addons/keda/a.yaml", "not_proven")],
        ),
        (
            "chart template",
            Box::new(fx_rendered_by_chart),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "two children",
            Box::new(fx_hop2),
            vec![("apps/ab.yaml", "deploys_on_merge deploys_on_merge")],
        ),
        (
            "git files",
            Box::new(fx_files_generator),
            vec![
                ("clusters/prod/a.yaml", "deploys_on_merge"),
                ("clusters/dev/b.yaml", "no_feeder"),
            ],
        ),
        (
            "greedy glob",
            Box::new(|| fx_globbing(false)),
            vec![("clusters/eu/prod.json", "deploys_on_merge")],
        ),
        (
            "doublestar glob",
            Box::new(|| fx_globbing(true)),
            vec![("clusters/eu/prod.json", "no_feeder")],
        ),
        (
            "no git",
            Box::new(fx_no_git),
            vec![("apps/a.yaml", "not_proven")],
        ),
        (
            "root on a tag",
            Box::new(|| fx_root_at("v1.4.0")),
            vec![("apps/a.yaml", "pinned")],
        ),
        (
            "root on another branch",
            Box::new(|| fx_root_at("release")),
            vec![("apps/a.yaml", "tracks_other_branch")],
        ),
        (
            "recurse off, kustomization",
            Box::new(fx_recurse_and_kustomize),
            vec![
                ("apps/a.yaml", "deploys_on_merge"),
                ("apps/team/b.yaml", "not_included"),
                ("kapps/listed.yaml", "deploys_on_merge"),
                ("kapps/forgotten.yaml", "not_included"),
            ],
        ),
        (
            "generator revision",
            Box::new(fx_generator_revision),
            vec![
                ("clusters/prod.json", "tracks_other_branch"),
                ("workloads/w.yaml", "not_proven"),
            ],
        ),
        (
            "multi-source ref",
            Box::new(fx_multi_source_ref),
            vec![
                ("values/karpenter-prod.yaml", "pinned"),
                ("apps/karpenter.yaml", "deploys_on_merge"),
            ],
        ),
        (
            "shipped example",
            Box::new(shipped_repo),
            vec![
                ("apps/keda.yaml", "manual_sync manual_sync"),
                ("apps/karpenter.yaml", "manual_sync"),
                ("apps/node-local-dns.json", "manual_sync"),
            ],
        ),
    ];
    let mut checked = 0;
    for (name, build, files) in &table {
        let d = build();
        for (file, want) in files {
            let extra: &[&str] = if *name == "live" {
                &["--live", LIVE_DUMP]
            } else {
                &[]
            };
            let got = agreed_verdicts(d.path(), file, extra).join(" ");
            assert_eq!(got, *want, "{name}: {file}");
            checked += 1;
        }
    }
    assert_eq!(checked, 86);
}

/// `diff` run on chosen files gives a file the verdict a full-tree diff
/// gives it: in the shipped example (a clone with the remote its
/// Applications name) `Application/app-root` feeds `apps/keda.yaml` whether
/// PATH is `.` or `apps/keda.yaml build/rendered.yaml`. Without git (no
/// work tree, no `.rebind.yaml`) the repository root is not known: every
/// row is "not proven" with its reason, never "no Application feeds it",
/// whichever files PATH names (an Application above the folder read may
/// feed them).
#[test]
fn chosen_files_get_the_full_tree_verdict_and_without_git_nothing_is_no_feeder() {
    let json = |dir: &Path, paths: &[&str]| -> Value {
        let mut args = vec!["diff", "--from", OLD, "--to", NEW, "--format", "json"];
        args.extend_from_slice(paths);
        let o = rebind(dir, &args);
        assert_eq!(o.status.code(), Some(1), "{paths:?}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let forms: [&[&str]; 4] = [
        &["."],
        &["apps/keda.yaml", "build/rendered.yaml"],
        &["build/rendered.yaml", "apps/keda.yaml"],
        &["apps"],
    ];
    let d = shipped_repo();
    let full = file_rows(&json(d.path(), &["."]), "apps/keda.yaml");
    assert!(
        !full.is_empty()
            && full
                .iter()
                .all(|r| r.starts_with("\"Application/app-root\" ")),
        "{full:?}"
    );
    for paths in forms {
        assert_eq!(
            file_rows(&json(d.path(), paths), "apps/keda.yaml"),
            full,
            "{paths:?}"
        );
    }
    let d = temp_fixture();
    assert!(!d.path().join(".rebind.yaml").exists());
    for paths in forms {
        let v = json(d.path(), paths);
        let rows = v["feeders"].as_array().unwrap();
        let keda: Vec<&Value> = rows
            .iter()
            .filter(|r| r["file"] == "apps/keda.yaml")
            .collect();
        assert!(!keda.is_empty(), "{paths:?}: {v}");
        for r in rows {
            assert_eq!(r["verdict"], "not_proven", "{paths:?}: {r}");
            assert_eq!(r["proven"], false, "{paths:?}: {r}");
            assert!(!r["reason"].as_str().unwrap().is_empty(), "{paths:?}: {r}");
        }
        let mut args = vec!["diff", "--from", OLD, "--to", NEW];
        args.extend_from_slice(paths);
        let text = stdout(&rebind(d.path(), &args));
        assert!(
            !text.contains("no Application or ApplicationSet in this repository feeds it"),
            "{paths:?}: {text}"
        );
        assert_eq!(require(d.path(), paths, &[]).0, Some(2), "{paths:?}");
    }
}

/// A subchart whose dependency has a `condition` (or `tags`) in the
/// parent's `requirements.yaml` (Helm v2's dependencies file, which Helm
/// 3 still reads) renders only when that holds, which is not followed: its
/// template is not proven to deploy, as with `Chart.yaml`'s dependencies.
#[test]
fn a_conditional_dependency_in_requirements_is_not_proven_to_render() {
    let d = fx_value_files();
    write(
        d.path(),
        "charts/web/requirements.yaml",
        "dependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n",
    );
    git(d.path(), &["add", "charts/web/requirements.yaml"]);
    git(d.path(), &["commit", "-qm", "conditional subchart"]);
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["feeders"].as_array().unwrap().clone();
    let file = "charts/web/charts/sub/templates/x.yaml";
    assert_eq!(
        verdicts(&rows, file),
        vec!["\"Application/abs\" \"not_proven\""]
    );
    let r = rows.iter().find(|r| r["file"] == file).unwrap();
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("charts/web/requirements.yaml"),
        "{r}"
    );
}
