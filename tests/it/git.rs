//! The git flow of `apply` on temporary repositories made from
//! `testdata/app-of-apps`, inspected with the git command line.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const BRANCH: &str = "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a";

/// A fixture copy committed on `main` with a local identity.
fn repo() -> tempfile::TempDir {
    let dir = temp_fixture();
    git_init_commit(dir.path());
    dir
}

fn apply(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["apply", "--from", OLD, "--to", NEW, "--yes"];
    args.extend_from_slice(extra);
    rebind(dir, &args)
}

#[test]
fn apply_commits_on_a_new_branch_and_checks_it_out() {
    let dir = repo();
    let d = dir.path();
    let main_before = git(d, &["rev-parse", "main"]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        BRANCH
    );
    assert_eq!(
        git(d, &["rev-parse", "main"]),
        main_before,
        "original branch unmoved"
    );
    assert_eq!(
        git(d, &["rev-parse", "HEAD^"]),
        main_before,
        "branch made from HEAD"
    );
    let changed = git(d, &["diff", "--name-only", "main", "HEAD"]);
    assert_eq!(
        changed.lines().collect::<Vec<_>>(),
        vec![
            "apps/app-root.yaml",
            "apps/argocd-external-secrets.yaml",
            "apps/argocd.yaml",
            "apps/cluster-bootstrap.yaml",
            "apps/istio.yaml",
            "apps/karpenter.yaml",
            "apps/keda.yaml",
            "apps/node-local-dns.json",
        ]
    );
    let mut swaps = 0;
    for f in changed.lines() {
        let old = Command::new("git")
            .args(["show", &format!("main:{f}")])
            .current_dir(d)
            .output()
            .unwrap()
            .stdout;
        let new = Command::new("git")
            .args(["show", &format!("HEAD:{f}")])
            .current_dir(d)
            .output()
            .unwrap()
            .stdout;
        assert_eq!(
            new,
            std::fs::read(d.join(f)).unwrap(),
            "{f}: committed bytes are the working tree's"
        );
        swaps += endpoint_swaps(&old, &new).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    assert_eq!(swaps, 19);
    assert_eq!(
        git(d, &["status", "--porcelain"]),
        "",
        "clean after the switch"
    );
    assert!(stdout(&out).contains(&format!("on branch {BRANCH}")));

    // Running it again changes nothing, and names the commit that holds it.
    let head = git(d, &["rev-parse", "HEAD"]);
    let again = apply(d, &[]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        stdout(&again).contains(&format!(
            "Branch {BRANCH} already holds exactly this change (commit {}); nothing to do.",
            &head[..12]
        )),
        "{}",
        stdout(&again)
    );
    assert_eq!(git(d, &["rev-parse", "HEAD"]), head);
}

#[test]
fn commit_message_and_review_snapshot() {
    let dir = repo();
    let d = dir.path();
    let review = d.join("../review.md");
    let out = apply(d, &["--review-out", review.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let msg = git(d, &["log", "-1", "--format=%B"]);
    assert_eq!(
        git(d, &["log", "-1", "--format=%an <%ae>"]).trim(),
        "Rebind Test <test@rebind.invalid>"
    );
    let md = std::fs::read_to_string(&review).unwrap();
    std::fs::remove_file(&review).unwrap();
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("commit_message", msg);
        insta::assert_snapshot!("review_markdown", md.replace('\r', "<CR>"));
    });
}

#[test]
fn unrelated_uncommitted_edits_survive() {
    let dir = repo();
    let d = dir.path();
    let stage = d.join("stage/keda.yaml");
    let edited = format!(
        "{}# work in progress\n",
        std::fs::read_to_string(&stage).unwrap()
    );
    std::fs::write(&stage, &edited).unwrap();
    std::fs::write(d.join("notes.txt"), "scratch\n").unwrap();
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&stage).unwrap(), edited);
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "scratch\n"
    );
    let status = git(d, &["status", "--porcelain"]);
    assert_eq!(status, " M stage/keda.yaml\n?? notes.txt\n");
    assert!(!git(d, &["show", "--name-only", "--format=", "HEAD"]).contains("stage/keda.yaml"));
}

#[test]
fn dirty_target_file_makes_apply_refuse() {
    let dir = repo();
    let d = dir.path();
    let keda = d.join("apps/keda.yaml");
    let mut bytes = std::fs::read(&keda).unwrap();
    bytes.extend_from_slice(b"# unfinished edit\n");
    std::fs::write(&keda, &bytes).unwrap();
    let staged = d.join("apps/istio.yaml");
    let istio = format!(
        "{}# staged edit\n",
        std::fs::read_to_string(&staged).unwrap()
    );
    std::fs::write(&staged, &istio).unwrap();
    git(d, &["add", "apps/istio.yaml"]);
    let before = tree(d);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("apps/keda.yaml") && err.contains("apps/istio.yaml"),
        "{err}"
    );
    assert_eq!(tree(d), before, "nothing written");
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(git(d, &["branch", "--list", "rebind/*"]), "");
}

#[test]
fn push_lands_the_branch_in_a_bare_repository() {
    let dir = repo();
    let d = dir.path();
    let bare = tempfile::tempdir().unwrap();
    git(bare.path(), &["init", "-q", "--bare"]);
    git(
        d,
        &["remote", "add", "origin", bare.path().to_str().unwrap()],
    );
    let out = apply(d, &["--push", "origin", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let head = git(d, &["rev-parse", "HEAD"]);
    assert_eq!(v["branch"], BRANCH);
    assert_eq!(v["commit"].as_str().unwrap(), head.trim());
    assert_eq!(v["pushed_to"], "origin");
    assert_eq!(
        (v["change_count"].as_u64(), v["file_count"].as_u64()),
        (Some(19), Some(8))
    );
    assert_eq!(git(bare.path(), &["rev-parse", BRANCH]), head);
}

#[test]
fn missing_identity_is_a_clear_error() {
    let dir = temp_fixture();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(d)
            .env("HOME", home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Setup")
            .env("GIT_AUTHOR_EMAIL", "setup@rebind.invalid")
            .env("GIT_COMMITTER_NAME", "Setup")
            .env("GIT_COMMITTER_EMAIL", "setup@rebind.invalid")
            .output()
            .unwrap()
    };
    run(&["init", "-q", "-b", "main"]);
    run(&["add", "-A"]);
    assert!(run(&["commit", "-q", "-m", "initial"]).status.success());
    let before = tree(d);
    let out = crate::common::command()
        .args(["apply", "--from", OLD, "--to", NEW, "--yes"])
        .current_dir(d)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("git config user.name"), "{err}");
    assert_eq!(tree(d), before);
}

#[test]
fn existing_branch_is_an_error_unless_it_holds_this_change() {
    let dir = repo();
    let d = dir.path();
    git(d, &["branch", BRANCH]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("branch {BRANCH} already exists")));
    git(d, &["branch", "-D", BRANCH]);
    // Make the change, go back to main: the branch now holds exactly it.
    assert_eq!(apply(d, &[]).status.code(), Some(0));
    let tip = git(d, &["rev-parse", BRANCH]);
    git(d, &["checkout", "-q", "main"]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("already holds exactly this change"));
    assert_eq!(git(d, &["rev-parse", BRANCH]), tip);
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
}

#[test]
fn unborn_detached_and_outside_are_clear_errors() {
    // Outside any repository: only --no-commit rewrites.
    let dir = temp_fixture();
    let out = apply(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--no-commit"), "{}", stderr(&out));
    // Unborn repository.
    git(dir.path(), &["init", "-q", "-b", "main"]);
    let before = tree(dir.path());
    let out = apply(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no commits yet"), "{}", stderr(&out));
    assert_eq!(tree(dir.path()), before);
    // Detached HEAD: refused without --branch, allowed with it.
    let dir = repo();
    let d = dir.path();
    git(d, &["checkout", "-q", "--detach"]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("detached"));
    let out = apply(d, &["--branch", "cutover/prod-green"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "cutover/prod-green"
    );
}

#[test]
fn no_commit_rewrites_in_place_inside_a_repository() {
    let dir = repo();
    let d = dir.path();
    let out = apply(d, &["--no-commit"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(git(d, &["status", "--porcelain"]).lines().count(), 8);
}
