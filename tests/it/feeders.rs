//! The after-merge model on repositories made here, each with a remote
//! whose `HEAD` is set, in the families a person who knows ArgoCD would
//! check: which parent feeds each file, from which revision, and whether
//! merging into the base branch deploys it.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

pub(crate) const REPO_HTTPS: &str = "https://git.example.com/platform/gitops.git";
pub(crate) const REPO_SSH: &str = "git@git.example.com:platform/gitops.git";

pub(crate) fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository with `files` committed on `main`, a remote `origin` at
/// `remote_url` whose `HEAD` is `main`, a remote branch `release` and a tag
/// `v1.4.0`.
pub(crate) fn repo(remote_url: &str, files: &[(&str, String)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        write(d.path(), rel, text);
    }
    git_init_commit(d.path());
    git(d.path(), &["remote", "add", "origin", remote_url]);
    git(
        d.path(),
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
    );
    git(
        d.path(),
        &["update-ref", "refs/remotes/origin/release", "HEAD"],
    );
    git(
        d.path(),
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    git(d.path(), &["tag", "v1.4.0"]);
    d
}

pub(crate) fn root_app(name: &str, repo_url: &str, path: &str, extra: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {repo_url}\n    path: {path}\n{extra}  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n"
    )
}

pub(crate) fn child(name: &str, wave: i64, automated: bool) -> String {
    let policy = if automated {
        "  syncPolicy:\n    automated: {prune: true}\n"
    } else {
        ""
    };
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\nspec:\n  source:\n    repoURL: https://charts.example.com\n    chart: {name}\n    targetRevision: 1.0.0\n  destination:\n    server: {OLD}\n    namespace: {name}\n{policy}"
    )
}

/// `rebind feeders --format json` in `dir`: the rows by file.
pub(crate) fn feeders(dir: &Path, extra: &[&str]) -> (Vec<Value>, Value) {
    let mut args = vec!["feeders", "--format", "json"];
    args.extend_from_slice(extra);
    let o = rebind(dir, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["feeders"].as_array().unwrap().clone(), v)
}

pub(crate) fn row<'a>(rows: &'a [Value], file: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["file"] == file)
        .unwrap_or_else(|| panic!("no row for {file}: {rows:#?}"))
}

pub(crate) fn fx_recurse_and_kustomize() -> tempfile::TempDir {
    repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/team/b.yaml", child("b", 0, true)),
            (
                "kust-root.yaml",
                root_app(
                    "kroot",
                    REPO_HTTPS,
                    "kapps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            (
                "kapps/kustomization.yaml",
                "resources:\n- listed.yaml\n".into(),
            ),
            ("kapps/listed.yaml", child("listed", 0, true)),
            ("kapps/forgotten.yaml", child("forgotten", 0, true)),
        ],
    )
}

pub(crate) fn fx_generator_revision() -> tempfile::TempDir {
    let appset = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: clusters\nspec:\n  generators:\n  - git:\n      repoURL: {REPO_HTTPS}\n      revision: release\n      files:\n      - path: clusters/*.json\n  template:\n    metadata: {{name: '{{{{name}}}}'}}\n    spec:\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: workloads\n      destination:\n        server: '{{{{server}}}}'\n      syncPolicy:\n        automated: {{}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            ("appsets/clusters.yaml", appset),
            (
                "clusters/prod.json",
                format!("{{\"name\": \"prod\", \"server\": \"{OLD}\"}}\n"),
            ),
            ("workloads/w.yaml", child("w", 0, true)),
        ],
    )
}

pub(crate) fn fx_multi_source_ref() -> tempfile::TempDir {
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: karpenter\nspec:\n  sources:\n  - repoURL: https://charts.karpenter.sh\n    chart: karpenter\n    targetRevision: 1.0.6\n    helm:\n      valueFiles:\n      - $values/values/karpenter-prod.yaml\n  - repoURL: {REPO_HTTPS}\n    targetRevision: v1.4.0\n    ref: values\n  destination:\n    server: {OLD}\n    namespace: karpenter\n  syncPolicy:\n    automated: {{}}\n"
    );
    repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/karpenter.yaml", app),
            (
                "values/karpenter-prod.yaml",
                format!("settings:\n  clusterEndpoint: {OLD}\n"),
            ),
        ],
    )
}

pub(crate) fn fx_root_at(rev: &str) -> tempfile::TempDir {
    let extra = format!("    targetRevision: {rev:?}\n  syncPolicy:\n    automated: {{}}\n");
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", &extra)),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    )
}

#[test]
fn a_root_on_head_without_automated_sync_needs_a_manual_sync() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "bootstrap/root.yaml",
                root_app("root", REPO_HTTPS, "apps", ""),
            ),
            ("apps/karpenter.yaml", child("karpenter", 1, true)),
            ("apps/keda.yaml", child("keda", -1, false)),
        ],
    );
    let (rows, v) = feeders(d.path(), &[]);
    assert_eq!(v["base"], "main");
    let r = row(&rows, "apps/karpenter.yaml");
    assert_eq!(r["feeder"], "Application/root");
    assert_eq!(r["revision"], "HEAD");
    assert_eq!(r["revision_kind"], "base");
    assert_eq!(r["tracks_base"], true);
    assert_eq!(r["hop1_automated"], false);
    assert_eq!(r["hop2_automated"], true);
    assert_eq!(r["verdict"], "manual_sync");
    assert_eq!(r["wave"], 1);
    // Parents first, then the children by ascending wave.
    let order: Vec<(&str, Option<i64>)> = v["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["resource"].as_str().unwrap(), s["wave"].as_i64()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("Application/root", None),
            ("Application/keda", Some(-1)),
            ("Application/karpenter", Some(1)),
        ]
    );
    // Two waves among child Applications and no health customisation.
    let notes = v["notes"].to_string();
    assert!(notes.contains("do not wait for their health"), "{notes}");
}

#[test]
fn pinned_and_other_branch_roots_do_not_deploy_on_merge() {
    for (rev, kind, verdict) in [
        ("v1.4.0", "tag", "pinned"),
        ("release", "branch", "tracks_other_branch"),
        (
            "0123456789abcdef0123456789abcdef01234567",
            "commit",
            "pinned",
        ),
        ("1.*", "semver range", "pinned"),
        ("main", "base", "deploys_on_merge"),
    ] {
        let d = fx_root_at(rev);
        let (rows, _) = feeders(d.path(), &[]);
        let r = row(&rows, "apps/a.yaml");
        assert_eq!(r["revision_kind"], kind, "{rev}: {r}");
        assert_eq!(r["verdict"], verdict, "{rev}: {r}");
    }
}

#[test]
fn ssh_and_https_spellings_name_the_same_repository() {
    for (remote, app_url) in [
        (REPO_SSH, REPO_HTTPS),
        (REPO_HTTPS, "ssh://git@git.example.com/Platform/GitOps"),
        ("https://git.example.com/platform/gitops", REPO_SSH),
    ] {
        let d = repo(
            remote,
            &[
                ("root.yaml", root_app("root", app_url, "apps", "")),
                ("apps/a.yaml", child("a", 0, true)),
            ],
        );
        let (rows, v) = feeders(d.path(), &[]);
        assert_eq!(
            row(&rows, "apps/a.yaml")["feeder"],
            "Application/root",
            "{remote} {app_url}"
        );
        assert!(
            !v["notes"].to_string().contains("no git remote names"),
            "{remote} {app_url}: {v}"
        );
    }
    // Another repository on the same host feeds nothing here.
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    "https://git.example.com/platform/gitops-old.git",
                    "apps",
                    "",
                ),
            ),
            ("other.yaml", root_app("other", REPO_HTTPS, "elsewhere", "")),
            ("apps/a.yaml", child("a", 0, true)),
            ("elsewhere/x.yaml", child("x", 0, true)),
        ],
    );
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "no_feeder");
}

#[test]
fn directory_recurse_off_and_kustomizations_leave_files_out() {
    let d = fx_recurse_and_kustomize();
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "deploys_on_merge");
    let b = row(&rows, "apps/team/b.yaml");
    assert_eq!(b["verdict"], "not_included");
    assert!(
        b["reason"].as_str().unwrap().contains("recurse is off"),
        "{b}"
    );
    assert_eq!(
        row(&rows, "kapps/listed.yaml")["verdict"],
        "deploys_on_merge"
    );
    let f = row(&rows, "kapps/forgotten.yaml");
    assert_eq!(f["verdict"], "not_included");
    assert!(
        f["reason"].as_str().unwrap().contains("does not list it"),
        "{f}"
    );
}

#[test]
fn an_applicationset_generator_revision_decides_for_the_files_it_reads() {
    let d = fx_generator_revision();
    let (rows, _) = feeders(d.path(), &[]);
    let c = row(&rows, "clusters/prod.json");
    assert_eq!(c["feeder"], "ApplicationSet/clusters", "{c}");
    assert_eq!(c["revision"], "release");
    assert_eq!(c["verdict"], "tracks_other_branch");
    let w = row(&rows, "workloads/w.yaml");
    assert_eq!(w["revision"], "main");
    // The generated Application applies the child Application `w` to the
    // cluster of the parameter set (`server: '{{server}}'`), not to the
    // cluster ArgoCD runs in: the hub's controller never sees it.
    assert_eq!(w["verdict"], "not_proven", "{w}");
    assert!(
        w["reason"]
            .as_str()
            .unwrap()
            .contains("not to the cluster ArgoCD runs in"),
        "{w}"
    );
}

#[test]
fn a_multi_source_ref_revision_decides_for_values_files() {
    let d = fx_multi_source_ref();
    let (rows, _) = feeders(d.path(), &[]);
    let v = row(&rows, "values/karpenter-prod.yaml");
    assert_eq!(v["feeder"], "Application/karpenter", "{v}");
    assert_eq!(v["revision"], "v1.4.0");
    assert_eq!(v["verdict"], "pinned");
    assert_eq!(
        row(&rows, "apps/karpenter.yaml")["verdict"],
        "deploys_on_merge"
    );
}

#[test]
fn an_application_health_customisation_lets_waves_gate() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n  resource.customizations.health.argoproj.io_Application: |\n    hs = {}\n    hs.status = \"Progressing\"\n    return hs\n";
    for (with_cm, gated) in [(true, true), (false, false)] {
        let mut files = vec![
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", "")),
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/b.yaml", child("b", 5, true)),
        ];
        if with_cm {
            files.push(("argocd/argocd-cm.yaml", cm.to_string()));
        }
        let d = repo(REPO_HTTPS, &files);
        let (_, v) = feeders(d.path(), &[]);
        let notes = v["notes"].to_string();
        assert_eq!(
            !notes.contains("do not wait for their health"),
            gated,
            "{notes}"
        );
    }
}

#[test]
fn base_is_the_flag_then_the_remote_head() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app("root", REPO_HTTPS, "apps", "    targetRevision: release\n"),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    let (rows, v) = feeders(d.path(), &[]);
    assert_eq!(v["base_from"], "the remote's HEAD");
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "tracks_other_branch");
    let (rows, v) = feeders(d.path(), &["--base", "release"]);
    assert_eq!(v["base"], "release");
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "manual_sync");
}

/// The shipped example as its own repository: committed on `main`, with
/// the remote its Applications name (`app-root`'s repoURL).
pub(crate) fn shipped_repo() -> tempfile::TempDir {
    let d = temp_fixture();
    git_init_commit(d.path());
    git(
        d.path(),
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/example/platform-gitops.git",
        ],
    );
    // The remote's default branch is known (as after a clone): `HEAD`
    // revisions are then proven to be the base.
    git(
        d.path(),
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
    );
    git(
        d.path(),
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    d
}

#[test]
fn the_shipped_example_waits_for_a_manual_sync_of_app_root() {
    // In place, the example is a folder of another repository (this one)
    // whose remotes, if any, are not the repository its Applications name:
    // nothing is proven to deploy.
    let (rows, _) = feeders(&fixture(), &[]);
    assert!(rows.iter().all(|r| r["proven"] == false), "{rows:#?}");
    // As its own repository, with the remote `app-root` names.
    let d = shipped_repo();
    let (rows, v) = feeders(d.path(), &[]);
    for f in [
        "apps/karpenter.yaml",
        "apps/keda.yaml",
        "apps/node-local-dns.json",
    ] {
        let r = row(&rows, f);
        assert_eq!(r["feeder"], "Application/app-root", "{r}");
        assert_eq!(r["verdict"], "manual_sync", "{r}");
    }
    assert_eq!(v["order"][0]["resource"], "Application/app-root");
    assert_eq!(v["order"][0]["automated"], false);
}

#[test]
fn a_live_dump_wins_over_git_and_every_difference_is_reported() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("tenants/t.yaml", child("t", 0, true)),
        ],
    );
    let live = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": {"name": "root", "namespace": "argocd"},
                "spec": {
                    "source": {"repoURL": REPO_HTTPS, "path": "apps", "targetRevision": "release"},
                    "destination": {"server": "https://kubernetes.default.svc", "namespace": "argocd"},
                    "syncPolicy": {"automated": {"prune": true}}
                }
            },
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": {"name": "tenants-root", "namespace": "argocd"},
                "spec": {"source": {"repoURL": REPO_SSH, "path": "tenants"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "argocd"}}
            }
        ]
    });
    let dump = d.path().join("live.json");
    std::fs::write(&dump, live.to_string()).unwrap();
    let (rows, v) = feeders(d.path(), &["--live", dump.to_str().unwrap()]);
    let a = row(&rows, "apps/a.yaml");
    assert_eq!(a["revision"], "release", "{a}");
    assert_eq!(a["verdict"], "tracks_other_branch");
    let t = row(&rows, "tenants/t.yaml");
    assert_eq!(t["feeder"], "Application/tenants-root", "{t}");
    assert_eq!(t["feeder_file"], "(live)");
    assert_eq!(t["verdict"], "manual_sync");
    let diffs = v["live_differences"].to_string();
    assert!(
        diffs.contains("live targetRevision release differs from git's HEAD"),
        "{diffs}"
    );
    assert!(
        diffs.contains("tenants-root is live but not in this repository"),
        "{diffs}"
    );

    std::fs::write(&dump, "{\"kind\": \"List\", \"items\": []}").unwrap();
    let o = rebind(d.path(), &["feeders", "--live", dump.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds no Application"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn require_deploys_refuses_exactly_the_rows_that_would_not_deploy() {
    let pinned = "    targetRevision: v1.4.0\n  syncPolicy:\n    automated: {}\n";
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            (
                "pinned-root.yaml",
                root_app("pinned", REPO_HTTPS, "frozen", pinned),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("frozen/b.yaml", child("b", 0, true)),
        ],
    );
    let before = tree(d.path());
    // Without the flag: the audit shows both rows, pending (exit 1).
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["feeders"].as_array().unwrap();
    assert_eq!(row(rows, "apps/a.yaml")["verdict"], "deploys_on_merge");
    assert_eq!(row(rows, "frozen/b.yaml")["verdict"], "pinned");
    // With it: refused, naming the pinned file and only it; nothing written.
    for cmd in [
        vec!["diff", "--require-deploys", "--from", OLD, "--to", NEW],
        vec![
            "apply",
            "--require-deploys",
            "--yes",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
        vec![
            "apply",
            "--require-deploys",
            "--yes",
            "--no-commit",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    ] {
        let o = rebind(d.path(), &cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("frozen/b.yaml"), "{err}");
        assert!(err.contains("pinned to tag v1.4.0"), "{err}");
        assert!(!err.contains("apps/a.yaml"), "{err}");
        assert_eq!(tree(d.path()), before, "{cmd:?} wrote something");
    }
    // Once the pinned root tracks the base branch, the same apply runs.
    write(
        d.path(),
        "pinned-root.yaml",
        &root_app(
            "pinned",
            REPO_HTTPS,
            "frozen",
            "    targetRevision: main\n  syncPolicy:\n    automated: {}\n",
        ),
    );
    git(d.path(), &["commit", "-qam", "track main"]);
    let o = rebind(
        d.path(),
        &[
            "apply",
            "--require-deploys",
            "--yes",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn the_review_json_of_the_shipped_example() {
    let d = shipped_repo();
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let part = serde_json::json!({
        "feeders": v["feeders"],
        "sync_order": v["sync_order"],
        "after_merge_notes": v["after_merge_notes"],
    });
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("feeders_json", serde_json::to_string_pretty(&part).unwrap());
    });
}

#[test]
fn a_root_outside_the_repository_is_declared_in_the_config() {
    let d = repo(
        REPO_HTTPS,
        &[
            ("apps/a.yaml", child("a", 0, true)),
            (
                ".rebind.yaml",
                "clusters: {}\nfeeders:\n  - {name: platform-root, path: apps, revision: main, automated: true}\n".into(),
            ),
        ],
    );
    let (rows, _) = feeders(d.path(), &[]);
    let a = row(&rows, "apps/a.yaml");
    assert_eq!(a["feeder"], "Application/platform-root", "{a}");
    assert_eq!(a["feeder_file"], ".rebind.yaml (feeders:)");
    assert_eq!(a["verdict"], "deploys_on_merge");
    // The section is read strictly, naming line and column.
    for (bad, why) in [
        ("  - {name: r}\n", "needs a path"),
        (
            "  - {name: r, path: apps, automated: yes}\n",
            "automated: expected true or false",
        ),
        ("  - {name: r, path: apps, branch: main}\n", "branch"),
        ("  {name: r}\n", "expected a list"),
    ] {
        config_refused(d.path(), &format!("feeders:\n{bad}"), why);
    }
}

/// `rebind feeders` with `.rebind.yaml` holding `clusters: {}` and `body`:
/// exit 2, naming `why` and the config's line and column.
pub(crate) fn config_refused(dir: &Path, body: &str, why: &str) {
    std::fs::write(dir.join(".rebind.yaml"), format!("clusters: {{}}\n{body}")).unwrap();
    let o = rebind(dir, &["feeders"]);
    assert_eq!(o.status.code(), Some(2), "{body}");
    assert!(stderr(&o).contains(why), "{body}: {}", stderr(&o));
    assert!(stderr(&o).contains(".rebind.yaml:"), "{}", stderr(&o));
}

#[test]
fn review_findings_on_parents_paths_and_revisions() {
    // A root directory app on `.` (not recursive) beside the app that owns
    // `apps/`: the file deploys, and --require-deploys does not refuse.
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    ".",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            (
                "p1.yaml",
                root_app(
                    "p1",
                    REPO_HTTPS,
                    "apps",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/child.yaml", child("child", 0, true)),
        ],
    );
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // From a folder inside the repository: the repository's Applications
    // and branches still decide.
    let (rows, v) = feeders(&d.path().join("apps"), &[]);
    let c = row(&rows, "apps/child.yaml");
    assert_eq!(c["verdict"], "deploys_on_merge", "{c}");
    assert_eq!(v["base"], "main");
    // `origin/main` is no ref of the remote: unknown, never the base.
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "    targetRevision: origin/main\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "unknown_revision");
    // A --base that is no branch: noted, and --require-deploys refuses.
    let (_, v) = feeders(d.path(), &["--base", "mian"]);
    assert!(
        v["notes"].to_string().contains("--base mian is no branch"),
        "{v}"
    );
    let o = rebind(
        d.path(),
        &[
            "diff",
            "--require-deploys",
            "--base",
            "mian",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn kustomizations_and_value_files_reach_outside_the_source_path() {
    let chart_app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: web}}\nspec:\n  source:\n    repoURL: {REPO_HTTPS}\n    path: charts/web\n    helm:\n      valueFiles: [../../envs/prod.yaml]\n  destination: {{server: {OLD}}}\n  syncPolicy: {{automated: {{}}}}\n"
    );
    let d = repo(
        REPO_HTTPS,
        &[
            ("apps/web.yaml", chart_app),
            (
                "charts/web/Chart.yaml",
                "apiVersion: v2\nname: web\nversion: 1.0.0\n".into(),
            ),
            ("envs/prod.yaml", format!("destination:\n  server: {OLD}\n")),
            (
                "kroot.yaml",
                root_app(
                    "kroot",
                    REPO_HTTPS,
                    "overlays/prod",
                    "  syncPolicy:\n    automated: {}\n",
                ),
            ),
            (
                "overlays/prod/kustomization.yaml",
                "resources:\n- ../../common\n".into(),
            ),
            (
                "common/kustomization.yaml",
                "resources:\n- sh.yaml\n".into(),
            ),
            ("common/sh.yaml", child("sh", 0, true)),
        ],
    );
    let (rows, _) = feeders(d.path(), &[]);
    let v = row(&rows, "envs/prod.yaml");
    assert_eq!(v["feeder"], "Application/web", "{v}");
    assert_eq!(v["verdict"], "deploys_on_merge", "{v}");
    let sh = row(&rows, "common/sh.yaml");
    assert_eq!(sh["feeder"], "Application/kroot", "{sh}");
    assert_eq!(sh["verdict"], "deploys_on_merge", "{sh}");
    // `diff` of only the reached folders says the same: the review reads
    // every Application whose path holds a kustomization or that names
    // value files, wherever its path is.
    for (path, file, feeder) in [
        ("common", "common/sh.yaml", "Application/kroot"),
        ("envs", "envs/prod.yaml", "Application/web"),
    ] {
        let o = rebind(
            d.path(),
            &["diff", "--from", OLD, "--to", NEW, "--format", "json", path],
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = row(v["feeders"].as_array().unwrap(), file);
        assert_eq!(r["feeder"], feeder, "{path}: {r}");
        assert_eq!(r["verdict"], "deploys_on_merge", "{path}: {r}");
    }
}

/// After a merge only committed content is on the branch: an Application
/// git does not track (written, never added) feeds nothing, so the file it
/// alone would feed is not "deploys"; the review names it as not
/// committed. Once git tracks it, it is read again.
#[test]
fn an_untracked_application_feeds_nothing_after_the_merge() {
    let d = repo(REPO_HTTPS, &[("apps/a.yaml", child("a", 0, true))]);
    write(
        d.path(),
        "root.yaml",
        &root_app(
            "root",
            REPO_HTTPS,
            "apps",
            "  syncPolicy:\n    automated: {}\n",
        ),
    );
    let (rows, v) = feeders(d.path(), &[]);
    let r = row(&rows, "apps/a.yaml");
    assert_ne!(r["verdict"], "deploys_on_merge", "{r:#}");
    assert_ne!(r["feeder"], "Application/root", "{r:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("root.yaml: not committed: not part of the merge"),
        "{notes}"
    );
    // The rebind's review says the same, and --require-deploys refuses.
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = row(v["feeders"].as_array().unwrap(), "apps/a.yaml");
    assert_ne!(r["verdict"], "deploys_on_merge", "{r:#}");
    assert!(
        v["after_merge_notes"]
            .to_string()
            .contains("root.yaml: not committed"),
        "{v:#}"
    );
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Tracked, the same Application is the parent that deploys it.
    git(d.path(), &["add", "root.yaml"]);
    let (rows, v) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "deploys_on_merge");
    assert!(!v["notes"].to_string().contains("not committed"), "{v:#}");
}

/// A changed file git does not track is in no commit: whatever feeds its
/// folder, its row is not "deploys" (`feeders` and the rebind's review),
/// and --require-deploys refuses. Once added, it deploys.
#[test]
fn an_untracked_changed_file_is_not_proven_to_deploy() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "    targetRevision: main\n  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    write(d.path(), "apps/u.yaml", &child("u", 0, true));
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/a.yaml")["verdict"], "deploys_on_merge");
    let r = row(&rows, "apps/u.yaml");
    assert_eq!(r["verdict"], "not_proven", "{r:#}");
    assert!(r.to_string().contains("not committed"), "{r:#}");
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = row(v["feeders"].as_array().unwrap(), "apps/u.yaml");
    assert_eq!(r["verdict"], "not_proven", "{r:#}");
    let r = row(v["feeders"].as_array().unwrap(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r:#}");
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    git(d.path(), &["add", "apps/u.yaml"]);
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(row(&rows, "apps/u.yaml")["verdict"], "deploys_on_merge");
}

/// A value file the chart's Application names that git does not track is
/// not in the merge: the chart's files are not proven to deploy.
#[test]
fn an_untracked_value_file_is_not_in_the_merge() {
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: hub\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {REPO_HTTPS}\n    path: charts/hub\n    helm:\n      valueFiles: [values-prod.yaml]\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n  syncPolicy:\n    automated: {{}}\n"
    );
    let d = repo(
        REPO_HTTPS,
        &[
            ("hub.yaml", app),
            ("charts/hub/Chart.yaml", "apiVersion: v2\nname: hub\nversion: 0.1.0\n".into()),
            ("charts/hub/values.yaml", format!("server: {OLD}\n")),
            (
                "charts/hub/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {server: '{{ .Values.server }}'}\n".into(),
            ),
        ],
    );
    write(d.path(), "charts/hub/values-prod.yaml", "x: 1\n");
    let (rows, _) = feeders(d.path(), &[]);
    let r = row(&rows, "charts/hub/values.yaml");
    assert_ne!(r["verdict"], "deploys_on_merge", "{r:#}");
    git(d.path(), &["add", "charts/hub/values-prod.yaml"]);
    let (rows, _) = feeders(d.path(), &[]);
    assert_eq!(
        row(&rows, "charts/hub/values.yaml")["verdict"],
        "deploys_on_merge"
    );
}

/// `--base` is resolved as git resolves a name: a remote-tracking branch
/// (`origin/main`, `upstream/main` as `refs/remotes/...`) is that remote's
/// branch, the base and no "no branch" note; a name nothing resolves stays
/// "no branch of this clone", and a tag names no branch: both refused.
#[test]
fn base_names_a_remote_tracking_branch_as_git_resolves_it() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "root.yaml",
                root_app(
                    "root",
                    REPO_HTTPS,
                    "apps",
                    "    targetRevision: main\n  syncPolicy:\n    automated: {}\n",
                ),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    // A fork's second remote naming the same repository.
    git(d.path(), &["remote", "add", "upstream", REPO_SSH]);
    git(
        d.path(),
        &["update-ref", "refs/remotes/upstream/main", "HEAD"],
    );
    // No local `main`: only the remote-tracking branches name it.
    git(d.path(), &["checkout", "-q", "--detach"]);
    git(d.path(), &["branch", "-q", "-D", "main"]);
    for base in ["upstream/main", "origin/main", "remotes/origin/main"] {
        let (rows, v) = feeders(d.path(), &["--base", base]);
        assert!(!v["notes"].to_string().contains("no branch"), "{base}: {v}");
        assert_eq!(v["base"], "main", "{base}: {v}");
        assert_eq!(
            row(&rows, "apps/a.yaml")["verdict"],
            "deploys_on_merge",
            "{base}"
        );
        let o = rebind(
            d.path(),
            &[
                "diff",
                "--require-deploys",
                "--base",
                base,
                "--from",
                OLD,
                "--to",
                NEW,
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{base}: {}", stderr(&o));
    }
    for (base, says) in [
        (
            "upstream/mian",
            "--base upstream/mian is no branch of this clone",
        ),
        ("v1.4.0", "--base v1.4.0 names refs/tags/v1.4.0, no branch"),
    ] {
        let (_, v) = feeders(d.path(), &["--base", base]);
        assert!(v["notes"].to_string().contains(says), "{base}: {v}");
        let o = rebind(
            d.path(),
            &[
                "diff",
                "--require-deploys",
                "--base",
                base,
                "--from",
                OLD,
                "--to",
                NEW,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{base}: {}", stderr(&o));
    }
}
