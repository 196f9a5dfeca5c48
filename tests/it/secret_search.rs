//! The duplicate-server search of `rebind secret` (and `apply --secret-out`):
//! it walks the enclosing git work tree (or `--repo`), skips ignored files,
//! passes over files that vanish, and warns once, only for a real duplicate,
//! naming what to delete.

use crate::common::*;
use std::path::Path;
use std::process::Stdio;

fn secret(cwd: &Path, args: &[&str]) -> std::process::Output {
    crate::common::command()
        .arg("secret")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn snap(name: &str, body: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, body);
    });
}

fn cluster_secret(name: &str, server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: {name}\n  server: {server}\n"
    )
}

#[test]
fn walks_the_enclosing_work_tree_and_warns_once_naming_what_to_delete() {
    let repo = temp_fixture();
    git_init_commit(repo.path());
    // From a subdirectory that holds no Secret: the search still covers the
    // whole work tree, and the Secret and the ExternalSecret rendering it are
    // one registration, reported in one warning.
    let out = secret(
        &repo.path().join("in-cluster"),
        &["--name", "finance-prod-green", "--server", OLD],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    let root = repo.path().canonicalize().unwrap();
    let err = err.replace(&root.display().to_string(), "<repo>");
    snap("secret_duplicate_warning", &err);
}

#[test]
fn the_same_secret_is_an_update_not_a_duplicate() {
    let repo = temp_fixture();
    git_init_commit(repo.path());
    // cluster-finance-prod-blue in argocd is the Secret the repo declares:
    // applying this manifest replaces it, so there is nothing to warn about.
    let out = secret(
        repo.path(),
        &["--name", "finance-prod-blue", "--server", OLD],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    // Another namespace is another Secret.
    let out = secret(
        repo.path(),
        &[
            "--name",
            "finance-prod-blue",
            "--server",
            OLD,
            "--namespace",
            "argo",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("warning:").count(), 1);
}

#[test]
fn ignored_files_and_non_cluster_secrets_are_not_registrations() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join("build/rendered.yaml"), cluster_secret("old", NEW)).unwrap();
    // No secret-type label: not an ArgoCD cluster.
    std::fs::write(
        root.join("plain.yaml"),
        cluster_secret("plain", NEW).replace("argocd.argoproj.io/secret-type: cluster", "app: x"),
    )
    .unwrap();
    std::fs::write(root.join("README.md"), format!("server: {NEW}\n")).unwrap();
    git_init_commit(root);
    let out = secret(root, &["--name", "finance-prod-green", "--server", NEW]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    // A real duplicate in a tracked file is found, also base64 in `data`.
    std::fs::write(
        root.join("dup.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: legacy\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: aHR0cHM6Ly8wZDFlMmYzYTRiNWM2ZDdlOGY5YTBiMWMyZDNlNGY1YS5ncjcuYXAtbm9ydGhlYXN0LTIuZWtzLmFtYXpvbmF3cy5jb20=\n",
    )
    .unwrap();
    let out = secret(root, &["--name", "finance-prod-green", "--server", NEW]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("  Secret argocd/legacy, declared at\n    dup.yaml:"),
        "{err}"
    );
    assert!(err.contains("delete that declaration"), "{err}");
}

#[test]
fn repo_flag_outside_git_and_no_search_outside_any_work_tree() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("m")).unwrap();
    std::fs::write(dir.path().join("m/s.yaml"), cluster_secret("old", NEW)).unwrap();
    let out = secret(dir.path(), &["--name", "c", "--server", NEW, "--repo", "m"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("    s.yaml:10:11: Secret/old\n"),
        "{}",
        stderr(&out)
    );
    // Outside any work tree and without --repo, nothing is walked, and it says so.
    let out = secret(dir.path(), &["--name", "c", "--server", NEW]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("warning:"), "{err}");
    assert!(err.contains("pass --repo PATH"), "{err}");
    // A --repo that does not exist is an input error.
    let out = secret(
        dir.path(),
        &["--name", "c", "--server", NEW, "--repo", "missing"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--repo missing"), "{}", stderr(&out));
}

#[test]
fn a_file_that_vanishes_during_the_walk_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.yaml"), cluster_secret("a", NEW)).unwrap();
    std::fs::write(root.join("b.yaml"), cluster_secret("b", NEW)).unwrap();
    // The reader deletes b.yaml just before reading it, as a concurrent
    // `git checkout` would.
    let read = |p: &Path| {
        if p.ends_with("b.yaml") {
            std::fs::remove_file(p)?;
        }
        std::fs::read(p)
    };
    let found = rebind::review::secret::find_registrations_with(root, NEW, &read).unwrap();
    let names: Vec<&str> = found
        .registrations
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, vec!["a"]);
    assert!(found.unchecked.is_empty());
}
