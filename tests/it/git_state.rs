//! The git flow and the repository's state: git mid-operation, `GIT_DIR` /
//! `GIT_WORK_TREE`, retries after a failed push (from any branch), and two
//! runs at once.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BRANCH: &str = "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a";

/// git in `dir`, allowed to fail (a merge that stops on a conflict).
fn git_may_fail(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn rebind_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = crate::common::command();
    c.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Work tree (without `.git`), HEAD, refs.
fn snapshot(d: &Path) -> (BTreeMap<String, Vec<u8>>, String, String) {
    let mut files = tree(d);
    files.retain(|k, _| !k.starts_with(".git/"));
    (
        files,
        git(d, &["rev-parse", "HEAD"]),
        git(d, &["for-each-ref"]),
    )
}

/// The fixture on main, plus `notes.txt` that main and branch `other`
/// change differently (a conflict that touches no file rebind rewrites).
fn conflicted_repo() -> tempfile::TempDir {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::write(d.join("notes.txt"), "base\n").unwrap();
    git_init_commit(d);
    git(d, &["switch", "-q", "-c", "other"]);
    std::fs::write(d.join("notes.txt"), "theirs\n").unwrap();
    git(d, &["commit", "-q", "-am", "theirs"]);
    git(d, &["switch", "-q", "main"]);
    std::fs::write(d.join("notes.txt"), "ours\n").unwrap();
    git(d, &["commit", "-q", "-am", "ours"]);
    dir
}

const APPLY: [&str; 8] = [
    "apply", "--from", OLD, "--to", NEW, "--yes", "--branch", "rebind/x",
];

#[test]
fn apply_refuses_while_git_is_mid_operation() {
    type Start = fn(&Path);
    let cases: [(&str, &str, Start); 8] = [
        ("a merge", "git merge --abort", |d| {
            assert!(!git_may_fail(d, &["merge", "other"]).status.success());
        }),
        ("a merge", "git merge --abort", |d| {
            // Stopped before its commit, without a conflict.
            git(d, &["switch", "-q", "-c", "side", "other~1"]);
            std::fs::write(d.join("side.txt"), "side\n").unwrap();
            git(d, &["add", "side.txt"]);
            git(d, &["commit", "-q", "-m", "side"]);
            git(d, &["switch", "-q", "main"]);
            git(d, &["merge", "--no-commit", "--no-ff", "side"]);
        }),
        ("a rebase", "git rebase --abort", |d| {
            // Interactive (merge backend), stopped to edit: HEAD detached.
            let o = Command::new("git")
                .args(["rebase", "-i", "HEAD~1"])
                .current_dir(d)
                .env("GIT_SEQUENCE_EDITOR", "sed -i -e s/^pick/edit/")
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }),
        ("a rebase", "git rebase --abort", |d| {
            // The apply backend, stopped on a conflict.
            assert!(!git_may_fail(d, &["rebase", "--apply", "other"])
                .status
                .success());
        }),
        ("`git am`", "git am --abort", |d| {
            let patch = git(d, &["format-patch", "-1", "--stdout", "other"]);
            std::fs::write(d.join("../x.patch"), patch).unwrap();
            assert!(!git_may_fail(d, &["am", "../x.patch"]).status.success());
        }),
        ("a cherry-pick", "git cherry-pick --abort", |d| {
            assert!(!git_may_fail(d, &["cherry-pick", "other"]).status.success());
        }),
        ("a revert", "git revert --abort", |d| {
            git(d, &["commit", "-q", "--allow-empty", "-m", "later"]);
            std::fs::write(d.join("notes.txt"), "later\n").unwrap();
            git(d, &["commit", "-q", "-am", "later"]);
            assert!(!git_may_fail(d, &["revert", "--no-edit", "HEAD~2"])
                .status
                .success());
        }),
        ("a bisect", "git bisect reset", |d| {
            git(d, &["bisect", "start"]);
        }),
    ];
    for (n, (what, finish, start)) in cases.into_iter().enumerate() {
        // Each in its own directory, so the am patch stays outside the tree.
        let outer = tempfile::tempdir().unwrap();
        let dir = conflicted_repo();
        let d = outer.path().join("repo");
        std::fs::rename(dir.path(), &d).unwrap();
        start(&d);
        let before = snapshot(&d);
        let o = rebind(&d, &APPLY);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "case {n} ({what}): {err}");
        assert!(
            err.contains(&format!("in the middle of {what}"))
                && err.contains(finish)
                && err.contains("nothing written"),
            "case {n} ({what}): {err}"
        );
        assert_eq!(snapshot(&d), before, "case {n} ({what})");
    }
}

#[test]
fn apply_refuses_unmerged_index_entries_without_an_operation() {
    let dir = conflicted_repo();
    let d = dir.path();
    // A stash that conflicts on pop: unmerged entries, no operation in progress.
    std::fs::write(d.join("notes.txt"), "stashed\n").unwrap();
    git(d, &["stash", "-q"]);
    std::fs::write(d.join("notes.txt"), "committed\n").unwrap();
    git(d, &["commit", "-q", "-am", "committed"]);
    assert!(!git_may_fail(d, &["stash", "pop"]).status.success());
    assert!(git(d, &["ls-files", "-u"]).contains("notes.txt"));
    let before = snapshot(d);
    let o = rebind(d, &APPLY);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unmerged entries") && err.contains("notes.txt"),
        "{err}"
    );
    assert_eq!(snapshot(d), before);
}

#[test]
fn git_dir_and_work_tree_are_honoured_like_git_does() {
    // The repository kept apart from its work tree.
    let dir = temp_fixture();
    let outer = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_init_commit(d);
    let store = outer.path().join("store.git");
    std::fs::rename(d.join(".git"), &store).unwrap();
    let o = rebind(d, &["apply", "--from", OLD, "--to", NEW, "--yes"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "without GIT_DIR: not a repository"
    );

    // GIT_DIR and GIT_WORK_TREE, run from a subdirectory.
    let o = rebind_env(
        &d.join("apps"),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "."],
        &[("GIT_DIR", &store), ("GIT_WORK_TREE", d)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let on = |args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(d)
            .env("GIT_DIR", &store)
            .env("GIT_WORK_TREE", d)
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(on(&["branch", "--show-current"]).trim(), BRANCH);
    assert_eq!(
        on(&["status", "--porcelain"]),
        "",
        "index and work tree agree"
    );
    assert!(on(&["diff", "--name-only", "main"]).contains("apps/"));

    // GIT_DIR alone: the current directory is the work tree's top.
    on(&["switch", "-q", "main"]);
    on(&["branch", "-q", "-D", BRANCH]);
    let o = rebind_env(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes"],
        &[("GIT_DIR", &store)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(on(&["branch", "--show-current"]).trim(), BRANCH);
    assert_eq!(on(&["status", "--porcelain"]), "");

    // A path outside GIT_WORK_TREE is refused, naming it.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = rebind_env(
        elsewhere.path(),
        &[
            "apply",
            "--from",
            NEW,
            "--to",
            OLD,
            "--yes",
            d.to_str().unwrap(),
        ],
        &[("GIT_DIR", &store), ("GIT_WORK_TREE", &d.join("apps"))],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("outside the git work tree"),
        "{}",
        stderr(&o)
    );
}

// --- retries ----------------------------------------------------------------

/// The fixture on main with a bare remote `origin` whose pre-receive hook
/// rejects every push until [`unblock`] removes it.
fn blocked_remote() -> (tempfile::TempDir, PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    let d = outer.path().join("repo");
    let fx = temp_fixture();
    std::fs::rename(fx.path(), &d).unwrap();
    git_init_commit(&d);
    git(outer.path(), &["init", "-q", "--bare", "remote.git"]);
    git(&d, &["remote", "add", "origin", "../remote.git"]);
    let hook = outer.path().join("remote.git/hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho rejected by policy >&2\nexit 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (outer, d)
}

fn unblock(d: &Path) {
    std::fs::remove_file(d.join("../remote.git/hooks/pre-receive")).unwrap();
}

fn remote_tip(d: &Path) -> Option<String> {
    let o = git_may_fail(
        &d.join("../remote.git"),
        &["rev-parse", "--verify", "-q", BRANCH],
    );
    o.status
        .success()
        .then(|| String::from_utf8(o.stdout).unwrap().trim().to_string())
}

const PUSH_JSON: [&str; 9] = [
    "apply",
    "--from",
    OLD,
    "--to",
    NEW,
    "--yes",
    "--push",
    "origin",
    "--format=json",
];

fn report(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)))
}

#[test]
fn a_retry_after_a_failed_push_pushes_from_either_branch() {
    for from_original in [true, false] {
        let (_outer, d) = blocked_remote();
        let o = rebind(&d, &PUSH_JSON);
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        let commit = git(&d, &["rev-parse", BRANCH]).trim().to_string();
        assert_eq!(remote_tip(&d), None);
        if from_original {
            git(&d, &["switch", "-q", "main"]);
        }
        // Still rejected: the retry says so with exit 3, again.
        let o = rebind(&d, &PUSH_JSON);
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("git push --set-upstream origin {BRANCH}")));
        unblock(&d);
        let head = git(&d, &["rev-parse", "HEAD"]);
        let o = rebind(&d, &PUSH_JSON);
        assert_eq!(
            o.status.code(),
            Some(0),
            "original {from_original}: {}",
            stderr(&o)
        );
        let r = report(&o);
        assert_eq!(r["status"], "already_done", "{r}");
        assert_eq!(r["branch"], BRANCH, "{r}");
        assert_eq!(r["commit"], commit.as_str(), "{r}");
        assert_eq!(r["pushed_to"], "origin", "{r}");
        assert_eq!(remote_tip(&d).as_deref(), Some(commit.as_str()));
        assert_eq!(git(&d, &["rev-parse", "HEAD"]), head, "no new commit");
    }
}

#[test]
fn an_already_done_branch_reports_its_commit() {
    let (_outer, d) = blocked_remote();
    let o = rebind(&d, &["apply", "--from", OLD, "--to", NEW, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let commit = git(&d, &["rev-parse", "HEAD"]).trim().to_string();
    git(&d, &["switch", "-q", "main"]);
    let o2 = rebind(
        &d,
        &[
            "apply", "--from", OLD, "--to", NEW, "--yes", "--format", "json",
        ],
    );
    assert_eq!(o2.status.code(), Some(0), "{}", stderr(&o2));
    let r = report(&o2);
    assert_eq!(r["status"], "already_done");
    assert_eq!(r["commit"], commit.as_str(), "{r}");
    assert_eq!(r["pushed_to"], serde_json::Value::Null);
    // In text, the commit is named too.
    let o = rebind(&d, &["apply", "--from", OLD, "--to", NEW, "--yes"]);
    assert!(stdout(&o).contains(&commit[..12]), "{}", stdout(&o));
    // On a tree whose HEAD is not a rebind commit (merged since), nothing to do.
    git(&d, &["merge", "-q", "--no-ff", "-m", "merge", BRANCH]);
    let o = rebind(
        &d,
        &[
            "apply", "--from", OLD, "--to", NEW, "--yes", "--format", "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(report(&o)["status"], "nothing_to_change");
}

#[test]
fn a_retry_from_a_branch_that_moved_says_what_the_old_branch_holds() {
    let (_outer, d) = blocked_remote();
    let o = rebind(&d, &PUSH_JSON);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let tip = git(&d, &["rev-parse", BRANCH]).trim().to_string();
    git(&d, &["switch", "-q", "main"]);
    git(&d, &["commit", "-q", "--allow-empty", "-m", "moved on"]);
    let before = snapshot(&d);
    let o = rebind(&d, &PUSH_JSON);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&tip)
            && err.contains(&format!("git push --set-upstream origin {BRANCH}"))
            && err.contains(
                "rebind: 5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F -> 0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A"
            ),
        "{err}"
    );
    assert_eq!(snapshot(&d), before);
}

// --- concurrency ------------------------------------------------------------

/// Many files holding OLD, so two runs overlap.
fn many(d: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(
            d.join(format!("app-{i:03}.yaml")),
            format!("kind: Application\nmetadata: {{name: app-{i}}}\nspec:\n  destination:\n    server: {OLD}\n"),
        )
        .unwrap();
    }
}

fn spawn_apply(d: &Path, to: &str) -> std::process::Child {
    crate::common::command()
        .args(["apply", "--no-commit", "--yes", "--from", OLD, "--to", to])
        .current_dir(d)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Which endpoint every file holds: `Some(url)` when all hold the same.
fn one_endpoint(d: &Path, n: usize, tos: &[&str]) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..n {
        let t = std::fs::read_to_string(d.join(format!("app-{i:03}.yaml"))).unwrap();
        let holds: Vec<&&str> = tos.iter().filter(|u| t.contains(**u)).collect();
        assert_eq!(holds.len(), 1, "app-{i:03}.yaml: {t}");
        seen.insert(holds[0].to_string());
    }
    (seen.len() == 1).then(|| seen.into_iter().next().unwrap())
}

#[test]
fn two_concurrent_no_commit_runs_never_split_the_tree() {
    const A: &str = "https://a.example.com:6443";
    const B: &str = "https://b.example.com:6443";
    const N: usize = 150;
    for in_repo in [false, true] {
        for round in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            many(d, N);
            if in_repo {
                git_init_commit(d);
            }
            let (a, b) = (spawn_apply(d, A), spawn_apply(d, B));
            let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
            let codes = (a.status.code(), b.status.code());
            let won = one_endpoint(d, N, &[OLD, A, B]).unwrap_or_else(|| {
                panic!(
                    "repo {in_repo} round {round}: the tree is split; exits {codes:?}\n{}\n{}",
                    String::from_utf8_lossy(&a.stderr),
                    String::from_utf8_lossy(&b.stderr)
                )
            });
            // One wins; the other refused (exit 2) or, planning after the
            // first had finished, found nothing to change (exit 0).
            let expect = match codes {
                (Some(0), Some(2)) => A,
                (Some(2), Some(0)) => B,
                (Some(0), Some(0)) => won.as_str(),
                other => panic!("repo {in_repo} round {round}: exits {other:?}"),
            };
            assert_eq!(won, expect, "repo {in_repo} round {round}: {codes:?}");
            assert!(!d.join(".git/index.lock").exists() && !d.join(".rebind.lock").exists());
        }
    }
}

#[test]
fn a_no_commit_run_refuses_while_another_holds_the_lock() {
    for in_repo in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        many(d, 3);
        if in_repo {
            git_init_commit(d);
        }
        let lock = if in_repo {
            d.join(".git/index.lock")
        } else {
            d.join(".rebind.lock")
        };
        let before = tree(d);
        std::fs::write(&lock, "").unwrap();
        let o = rebind(
            d,
            &["apply", "--no-commit", "--yes", "--from", OLD, "--to", NEW],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&lock.display().to_string())
                && stderr(&o).contains("nothing written"),
            "{}",
            stderr(&o)
        );
        std::fs::remove_file(&lock).unwrap();
        assert_eq!(tree(d), before, "in repo {in_repo}");
        let o = rebind(
            d,
            &["apply", "--no-commit", "--yes", "--from", OLD, "--to", NEW],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!lock.exists(), "released");
    }
}

/// A re-run on the cutover branch itself checks `--push`'s remote before
/// anything is written, as the first run and a re-run from the original
/// branch do: exit 2, nothing written, never a push that fails after.
#[test]
fn a_rerun_on_the_branch_refuses_an_unknown_remote_before_writing() {
    let (_outer, d) = blocked_remote();
    let o = rebind(&d, &["apply", "--from", OLD, "--to", NEW, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let outs = tempfile::tempdir().unwrap();
    let review = outs.path().join("review.md");
    let o = rebind(
        &d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--push",
            "nope",
            "--review-out",
            review.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--push nope: no such remote"),
        "{}",
        stderr(&o)
    );
    assert!(!review.exists());
}
