//! rebind reads the work tree; ArgoCD deploys the commit. A tracked file
//! whose committed content holds the old endpoint while its work-tree copy
//! does not (deleted or edited without a commit) stops `diff` and `apply`
//! (exit 2, `uncommitted-endpoint`, nothing written) and is an error of
//! `check` on the whole repository. And `check` names the files the
//! config's `exclude` leaves out that hold a retired endpoint: a warning,
//! an error when the file is named on the command line.

use crate::common::*;
use std::path::Path;

const REPO: &str = "https://github.com/example/gitops.git";

fn app(name: &str, server: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/example/workloads.git\n    path: x\n    targetRevision: main\n  destination:\n    server: {server}\n    namespace: x\n  syncPolicy:\n    automated: {{}}\n"
    )
}

/// A root Application (automated, `apps/` of main, recursive) and two
/// children holding the old endpoint, committed on main with `origin/main`.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("apps/vendor")).unwrap();
    std::fs::write(
        d.join("root.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {REPO}\n    path: apps\n    directory: {{recurse: true}}\n    targetRevision: main\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n  syncPolicy:\n    automated: {{}}\n"),
    )
    .unwrap();
    std::fs::write(d.join("apps/a.yaml"), app("a", OLD)).unwrap();
    std::fs::write(d.join("apps/b.yaml"), app("b", OLD)).unwrap();
    git_init_commit(d);
    git(d, &["remote", "add", "origin", REPO]);
    git(d, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    dir
}

/// `.rebind.yaml` declaring `OLD` retired, committed.
fn retire(d: &Path, exclude: &str) {
    std::fs::write(
        d.join(".rebind.yaml"),
        format!("clusters:\n  c:\n    endpoint: {NEW}\n    retired: [{OLD}]\ninclude: [\"**/*.yaml\"]\nexclude: [{exclude}]\n"),
    )
    .unwrap();
    git(d, &["add", "-f", ".rebind.yaml"]);
    git(d, &["commit", "-q", "-m", "config"]);
}

fn code(out: &std::process::Output) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)));
    v["errors"][0]["code"].as_str().map(str::to_string)
}

/// Deleted, edited by hand, or staged-edited in the work tree only: `diff`
/// (with --require-deploys) and `apply` refuse and write nothing.
#[test]
fn a_committed_endpoint_missing_from_the_work_tree_stops_diff_and_apply() {
    type Change = fn(&Path);
    let changes: [(&str, Change); 3] = [
        ("deleted", |d| {
            std::fs::remove_file(d.join("apps/b.yaml")).unwrap()
        }),
        ("modified", |d| {
            std::fs::write(
                d.join("apps/b.yaml"),
                app("b", "https://kubernetes.default.svc"),
            )
            .unwrap()
        }),
        ("modified", |d| {
            std::fs::write(
                d.join("apps/b.yaml"),
                app("b", "https://kubernetes.default.svc"),
            )
            .unwrap();
            git(d, &["add", "apps/b.yaml"]);
        }),
    ];
    for (state, change) in changes {
        let dir = repo();
        let d = dir.path();
        change(d);
        let before = git(d, &["for-each-ref"]);
        let out = rebind(
            d,
            &[
                "diff",
                "--from",
                OLD,
                "--to",
                NEW,
                "--base",
                "main",
                "--require-deploys",
                ".",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{state}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let err = stderr(&out);
        assert!(
            err.contains("apps/b.yaml: ") && err.contains(state),
            "{err}"
        );
        assert!(err.contains("the working tree does not"), "{err}");
        let out = rebind(d, &["apply", "--from", OLD, "--to", NEW, "--yes", "."]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{state}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert_eq!(git(d, &["for-each-ref"]), before, "{state}: no branch made");
        assert!(std::fs::read_to_string(d.join("apps/a.yaml"))
            .unwrap()
            .contains(OLD));
        let out = rebind(
            d,
            &["diff", "--from", OLD, "--to", NEW, "--format", "json", "."],
        );
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            code(&out).as_deref(),
            Some("uncommitted-endpoint"),
            "{}",
            stdout(&out)
        );
    }
}

/// A work-tree change that keeps the endpoint (rebind reads and rewrites
/// it), or one to a file whose commit never held it, does not stop a
/// rebind.
#[test]
fn a_dirty_file_the_walk_still_reads_or_that_never_held_the_endpoint_is_fine() {
    let dir = repo();
    let d = dir.path();
    let mut text = app("b", OLD);
    text.push_str("# edited\n");
    std::fs::write(d.join("apps/b.yaml"), text).unwrap();
    std::fs::remove_file(d.join("root.yaml")).unwrap();
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// `check` on the whole repository names a tracked file deleted or edited
/// in the work tree whose staged content holds a retired endpoint.
#[test]
fn check_names_a_committed_retired_endpoint_the_work_tree_lost() {
    let dir = repo();
    let d = dir.path();
    retire(d, "");
    // Rebound and staged (what the commit being made holds): clean.
    std::fs::write(d.join("apps/a.yaml"), app("a", NEW)).unwrap();
    git(d, &["add", "apps/a.yaml"]);
    std::fs::remove_file(d.join("apps/b.yaml")).unwrap();
    let out = rebind(d, &["check", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(
            "apps/b.yaml".to_string(),
            "uncommitted-endpoint".to_string(),
            "error".to_string()
        )]
    );
    // Edited and not staged: a warning (what was read is what `git add`
    // commits); staged, nothing.
    git(d, &["restore", "apps/b.yaml"]);
    std::fs::write(d.join("apps/b.yaml"), app("b", NEW)).unwrap();
    let out = rebind(d, &["check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("apps/b.yaml:1:1: warning: modified in the work tree"),
        "{}",
        stdout(&out)
    );
    git(d, &["rm", "-q", "-f", "apps/b.yaml"]);
    // Once the deletion is committed, nothing is left.
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "rm"]);
    let out = rebind(d, &["check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// The findings of `check ARGS --format json`: (path, rule, severity), and
/// the exit code.
fn check_json(d: &Path, args: &[&str]) -> (Option<i32>, Vec<(String, String, String)>) {
    let mut a = vec!["check", "--format", "json"];
    a.extend(args);
    let out = rebind(d, &a);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code(), found)
}

/// A file the config's `exclude` leaves out that holds a retired endpoint:
/// a warning on the whole repository (leaving it out is the user's choice),
/// an error when it is named on the command line; not named at all when
/// another file is checked, nor once it no longer holds the endpoint.
#[test]
fn check_names_an_excluded_file_holding_a_retired_endpoint() {
    let dir = repo();
    let d = dir.path();
    std::fs::write(d.join("apps/vendor/b.yaml"), app("vb", OLD)).unwrap();
    std::fs::write(d.join("apps/a.yaml"), app("a", NEW)).unwrap();
    std::fs::write(d.join("apps/b.yaml"), app("b", NEW)).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "cut over"]);
    retire(d, "\"apps/vendor/**\"");
    let warned = (
        "apps/vendor/b.yaml".to_string(),
        "retired-endpoint".to_string(),
        "warning".to_string(),
    );
    assert_eq!(check_json(d, &[]), (Some(0), vec![warned]));
    let (code, found) = check_json(d, &["apps/vendor/b.yaml", "apps/a.yaml"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        found,
        [(
            "apps/vendor/b.yaml".to_string(),
            "retired-endpoint".to_string(),
            "error".to_string()
        )]
    );
    assert_eq!(check_json(d, &["apps/a.yaml"]), (Some(0), vec![]));
    let out = rebind(d, &["check"]);
    assert!(
        stdout(&out).contains("apps/vendor/b.yaml:1:1: warning: left out by the config's `exclude`, but holds a retired endpoint's host (1 time)"),
        "{}",
        stdout(&out)
    );
    std::fs::write(d.join("apps/vendor/b.yaml"), app("vb", NEW)).unwrap();
    git(d, &["commit", "-q", "-am", "vendor"]);
    assert_eq!(check_json(d, &[]), (Some(0), vec![]));
}
