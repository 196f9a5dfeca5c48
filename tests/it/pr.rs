//! `apply --push --pr`: the pull request is opened (or its body updated)
//! through stub `gh`/`glab` executables first on `PATH`, which record every
//! call's argv and standard input and answer like the real clients. The
//! remote reads as a GitHub or GitLab URL while `url.<bare>.insteadOf`
//! sends the push to a local bare repository.
#![cfg(unix)]

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BRANCH: &str = "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a";

/// A stand-in for gh and glab (the same script under both names).
const STUB: &str = r#"#!/bin/sh
log=__LOG__
n=$(($(cat "$log/count" 2>/dev/null || echo 0) + 1))
echo "$n" > "$log/count"
prog=${0##*/}
printf '%s\0' "$prog" "$@" > "$log/$n.args"
cat > "$log/$n.stdin"
if [ -e "$log/hang" ]; then
    echo "$$" > "$log/hanging"
    sleep 60
fi
if [ "$(cat "$log/fail" 2>/dev/null)" = "$2" ]; then
    echo "To get started with $prog, please run: $prog auth login" >&2
    exit 4
fi
case "$prog $1 $2" in
"gh pr list" | "glab mr list") cat "$log/list.json" 2>/dev/null || echo '[]' ;;
"gh pr create")
    echo "https://github.com/acme/gitops/pull/7"
    echo '[{"number":7,"url":"https://github.com/acme/gitops/pull/7","isCrossRepository":false}]' > "$log/list.json"
    ;;
"glab mr create")
    printf '\nCreating merge request for %s into main\n\n!7 rebind (%s)\n https://gitlab.com/acme/gitops/-/merge_requests/7\n\n' "$4" "$4"
    echo '[{"iid":7,"id":901,"web_url":"https://gitlab.com/acme/gitops/-/merge_requests/7","source_project_id":12,"target_project_id":12}]' > "$log/list.json"
    ;;
"gh pr edit") echo "https://github.com/acme/gitops/pull/$3" ;;
"glab mr update") echo "- Updating merge request !$3" ;;
*) echo "unknown command: $*" >&2; exit 1 ;;
esac
"#;

struct Setup {
    repo: tempfile::TempDir,
    remotes: tempfile::TempDir,
    /// The stubs' directory and their log (calls numbered from 1).
    stubs: tempfile::TempDir,
    /// `PATH`: the stubs, then a directory holding only git and cat.
    path: String,
}

impl Setup {
    fn dir(&self) -> &Path {
        self.repo.path()
    }

    fn log(&self) -> PathBuf {
        self.stubs.path().join("log")
    }

    fn bare(&self) -> PathBuf {
        self.remotes.path().join("gitops.git")
    }

    fn run(&self, extra: &[&str]) -> Output {
        self.command(extra).output().unwrap()
    }

    /// The `apply --push origin` command with `extra`, not yet started.
    fn command(&self, extra: &[&str]) -> Command {
        let mut args = vec![
            "apply", "--from", OLD, "--to", NEW, "--yes", "--push", "origin",
        ];
        args.extend_from_slice(extra);
        let mut cmd = crate::common::command();
        cmd.args(&args)
            .current_dir(self.dir())
            .env("NO_COLOR", "1")
            .env("PATH", &self.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null());
        cmd
    }

    /// Every call the stubs saw: the program and its arguments, and what
    /// it read on standard input.
    fn calls(&self) -> Vec<(Vec<String>, String)> {
        stub_calls(&self.log())
    }

    fn head(&self) -> String {
        git(self.dir(), &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// `origin` becomes `lab:acme/gitops.git`, a shortcut `insteadOf`
    /// expands to GitLab, and pushes to the bare repository (`pushurl`).
    fn lab_shortcut(&self) {
        let d = self.dir();
        git(d, &["config", "url.git@gitlab.com:.insteadOf", "lab:"]);
        git(d, &["remote", "set-url", "origin", "lab:acme/gitops.git"]);
        let bare = self.bare();
        git(
            d,
            &["config", "remote.origin.pushurl", bare.to_str().unwrap()],
        );
    }

    /// Where the run kept the pull request's body.
    fn body_file(&self) -> PathBuf {
        let head = self.head();
        self.dir().join(".git").join(format!("rebind-pr-{head}.md"))
    }

    fn subject(&self) -> String {
        git(self.dir(), &["log", "-1", "--format=%s", BRANCH])
            .trim()
            .to_string()
    }
}

fn app(server: &str) -> String {
    format!("kind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {server}\n  project: default\n")
}

/// A repository on `main` whose `origin` reads as `url` and pushes to a
/// local bare repository (which has `main`, the remote's HEAD), with
/// stubs for `clients` on PATH.
fn setup(url: &str, clients: &[&str]) -> Setup {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("app.yaml"), app(OLD)).unwrap();
    setup_in(repo, url, clients)
}

/// [`setup`] on the files already in `repo`.
fn setup_in(repo: tempfile::TempDir, url: &str, clients: &[&str]) -> Setup {
    let d = repo.path();
    git_init_commit(d);
    let remotes = tempfile::tempdir().unwrap();
    git(remotes.path(), &["init", "-q", "--bare", "gitops.git"]);
    let bare = remotes.path().join("gitops.git");
    git(
        d,
        &["config", &format!("url.{}.insteadOf", bare.display()), url],
    );
    git(d, &["remote", "add", "origin", url]);
    git(d, &["push", "-q", "origin", "main"]);
    git(d, &["remote", "set-head", "origin", "main"]);
    let stubs = tempfile::tempdir().unwrap();
    let log = stubs.path().join("log");
    std::fs::create_dir(&log).unwrap();
    let bin = stubs.path().join("bin");
    let tools = stubs.path().join("tools");
    std::fs::create_dir(&bin).unwrap();
    std::fs::create_dir(&tools).unwrap();
    for c in clients {
        script(
            &bin.join(c),
            &STUB.replace("__LOG__", &log.display().to_string()),
        );
    }
    for t in ["git", "cat", "sleep"] {
        std::os::unix::fs::symlink(which(t), tools.join(t)).unwrap();
    }
    let path = format!("{}:{}", bin.display(), tools.display());
    Setup {
        repo,
        remotes,
        stubs,
        path,
    }
}

/// The error's line to finish by hand is exactly `by_hand`.
fn finish_by_hand(err: &str, by_hand: &str) {
    assert!(
        err.lines().any(|l| l.trim() == by_hand),
        "{by_hand}\nin\n{err}"
    );
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The review Markdown `--review-out` writes in the same run.
fn review_file() -> (tempfile::TempDir, PathBuf) {
    let outs = tempfile::tempdir().unwrap();
    let review = outs.path().join("review.md");
    (outs, review)
}

fn gh_list(repo: &str) -> Vec<String> {
    strs(&[
        "gh",
        "pr",
        "list",
        "--repo",
        repo,
        "--head",
        BRANCH,
        "--state",
        "open",
        "--json",
        "number,url,isCrossRepository",
    ])
}

fn glab_list(repo: &str) -> Vec<String> {
    strs(&[
        "glab",
        "mr",
        "list",
        "--repo",
        repo,
        "--source-branch",
        BRANCH,
        "--output",
        "json",
    ])
}

/// Opens on GitHub from `url`: the stub sees the list, then the create with
/// the commit's subject, the remote's HEAD as base and the review on stdin.
fn opens_on_github(url: &str) {
    let s = setup(url, &["gh", "glab"]);
    let (_outs, review) = review_file();
    let out = s.run(&[
        "--pr",
        "--review-out",
        review.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = std::fs::read_to_string(&review).unwrap();
    assert!(body.starts_with("# rebind: "), "{body}");
    let calls = s.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, gh_list("github.com/acme/gitops"));
    assert_eq!(calls[0].1, "");
    let subject = s.subject();
    assert!(subject.starts_with("rebind: "), "{subject}");
    assert_eq!(
        calls[1].0,
        strs(&[
            "gh",
            "pr",
            "create",
            "--repo",
            "github.com/acme/gitops",
            "--head",
            BRANCH,
            "--base",
            "main",
            "--title",
            &subject,
            "--body-file",
            "-",
        ])
    );
    assert_eq!(
        calls[1].1, body,
        "the body is the review Markdown, on stdin"
    );
    // The push went to the bare repository behind the GitHub URL.
    assert_eq!(
        git(&s.bare(), &["rev-parse", BRANCH]).trim(),
        s.head().as_str()
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "applied");
    // A review that fits adds no file to the commit: it changes app.yaml only.
    assert_eq!(
        git(s.dir(), &["diff", "--name-only", "main", BRANCH]).trim(),
        "app.yaml"
    );
    assert_eq!(
        report["pull_request"],
        serde_json::json!({
            "url": "https://github.com/acme/gitops/pull/7",
            "number": 7,
            "client": "gh",
            "action": "opened",
        })
    );
}

#[test]
fn github_https_remote_opens_with_gh() {
    opens_on_github("https://github.com/acme/gitops.git");
}

#[test]
fn github_ssh_remote_opens_with_gh() {
    opens_on_github("git@github.com:acme/gitops.git");
}

/// Opens on GitLab from `url`: glab's list, then its create with the body
/// as the description argument and `--yes`; the text output names the URL.
fn opens_on_gitlab(url: &str, repo: &str) {
    let s = setup(url, &["gh", "glab"]);
    let (_outs, review) = review_file();
    let out = s.run(&["--pr", "--review-out", review.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = std::fs::read_to_string(&review).unwrap();
    let calls = s.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, glab_list(repo));
    assert_eq!(
        calls[1].0,
        strs(&[
            "glab",
            "mr",
            "create",
            "--repo",
            repo,
            "--source-branch",
            BRANCH,
            "--target-branch",
            "main",
            "--title",
            &s.subject(),
            "--description",
            &body,
            "--yes",
        ])
    );
    assert_eq!(calls[1].1, "");
    assert!(
        stdout(&out).contains(
            "Merge request !7 opened: https://gitlab.com/acme/gitops/-/merge_requests/7\n"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        git(&s.bare(), &["rev-parse", BRANCH]).trim(),
        s.head().as_str()
    );
}

#[test]
fn gitlab_https_remote_opens_with_glab() {
    opens_on_gitlab(
        "https://gitlab.com/acme/infra/gitops.git",
        "https://gitlab.com/acme/infra/gitops",
    );
}

#[test]
fn gitlab_ssh_remote_opens_with_glab() {
    opens_on_gitlab(
        "ssh://git@gitlab.example.com:2222/acme/gitops.git",
        "https://gitlab.example.com/acme/gitops",
    );
}

/// An open pull request for the branch is updated, never duplicated: on
/// the first run (found by the list), and on re-runs from the branch itself
/// and from the original branch.
#[test]
fn an_open_pull_request_is_updated_not_duplicated() {
    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    std::fs::write(
        s.log().join("list.json"),
        r#"[{"number":42,"url":"https://github.com/acme/gitops/pull/42","isCrossRepository":false}]"#,
    )
    .unwrap();
    let (_outs, review) = review_file();
    let review_s = review.to_str().unwrap();
    let out = s.run(&["--pr", "--review-out", review_s, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = std::fs::read_to_string(&review).unwrap();
    let edit = strs(&[
        "gh",
        "pr",
        "edit",
        "42",
        "--repo",
        "github.com/acme/gitops",
        "--body-file",
        "-",
    ]);
    let calls = s.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1], (edit.clone(), body.clone()));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["pull_request"]["action"], "updated");
    assert_eq!(report["pull_request"]["number"], 42);
    assert_eq!(
        report["pull_request"]["url"],
        "https://github.com/acme/gitops/pull/42"
    );

    // Again, from the branch the run checked out: the same body is sent.
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Pull request #42 updated: https://github.com/acme/gitops/pull/42"),
        "{}",
        stdout(&out)
    );
    // And from main, where the branch already holds the change.
    git(s.dir(), &["switch", "-q", "main"]);
    let out = s.run(&["--pr", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "already_done");
    assert_eq!(report["pull_request"]["action"], "updated");
    let calls = s.calls();
    assert_eq!(calls.len(), 6, "{calls:?}");
    for (i, call) in calls.iter().enumerate() {
        if i % 2 == 0 {
            assert_eq!(call.0, gh_list("github.com/acme/gitops"));
        } else {
            assert_eq!(call, &(edit.clone(), body.clone()), "call {i}");
        }
    }
}

/// The same command run twice opens one pull request: the second run finds
/// it and updates its body.
#[test]
fn a_rerun_after_opening_updates() {
    let s = setup("git@gitlab.com:acme/gitops.git", &["glab"]);
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.run(&["--pr", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "already_done");
    assert_eq!(report["pull_request"]["action"], "updated");
    assert_eq!(report["pull_request"]["client"], "glab");
    let calls = s.calls();
    let verbs: Vec<&str> = calls.iter().map(|c| c.0[2].as_str()).collect();
    assert_eq!(verbs, ["list", "create", "list", "update"]);
    let description = |c: &(Vec<String>, String)| {
        let at = c.0.iter().position(|a| a == "--description").unwrap();
        c.0[at + 1].clone()
    };
    assert_eq!(calls[3].0[3], "7");
    assert_eq!(description(&calls[3]), description(&calls[1]));
    assert!(description(&calls[1]).starts_with("# rebind: "));
}

/// A failing client (not logged in) is exit 3 after the push: the message
/// names the branch, the commit and the exact command to finish by hand,
/// whose body file holds the review; the same command again finishes.
#[test]
fn a_failing_client_exits_3_with_the_command_to_finish() {
    for failing in ["create", "list"] {
        let s = setup("https://github.com/acme/gitops.git", &["gh"]);
        std::fs::write(s.log().join("fail"), failing).unwrap();
        let (_outs, review) = review_file();
        let out = s.run(&["--pr", "--review-out", review.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        let head = s.head();
        assert!(err.contains(&head), "{err}");
        assert!(err.contains(BRANCH), "{err}");
        assert!(
            err.contains("gh auth login"),
            "the client's own words: {err}"
        );
        let body_file = s.body_file();
        finish_by_hand(
            &err,
            &format!(
                "gh pr create --repo github.com/acme/gitops --head {BRANCH} --base main --title '{}' --body-file {}",
                s.subject(),
                body_file.display()
            ),
        );
        assert_eq!(
            std::fs::read_to_string(&body_file).unwrap(),
            std::fs::read_to_string(&review).unwrap()
        );
        // The push is done.
        assert_eq!(git(&s.bare(), &["rev-parse", BRANCH]).trim(), head);
        // The same command again, logged in now, opens it.
        std::fs::remove_file(s.log().join("fail")).unwrap();
        let out = s.run(&["--pr"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains("Pull request #7 opened"));
        let calls = s.calls();
        let last = calls.last().unwrap();
        assert_eq!(last.0[2], "create");
        assert_eq!(last.1, std::fs::read_to_string(&review).unwrap());
    }
}

/// No client on PATH: exit 3 after the push, naming the branch, the commit
/// and the command.
#[test]
fn a_missing_client_exits_3_with_the_command_to_finish() {
    let s = setup("git@gitlab.com:acme/gitops.git", &["gh"]);
    let out = s.run(&["--pr"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let head = s.head();
    assert!(err.contains(&head) && err.contains(BRANCH), "{err}");
    assert!(err.contains("`glab mr list"), "the call that failed: {err}");
    finish_by_hand(
        &err,
        &format!(
            "glab mr create --repo https://gitlab.com/acme/gitops --source-branch {BRANCH} --target-branch main --title '{}' --description \"$(cat {})\" --yes",
            s.subject(),
            s.body_file().display()
        ),
    );
    assert_eq!(git(&s.bare(), &["rev-parse", BRANCH]).trim(), head);
    assert!(s.calls().is_empty());
}

/// Refusals before anything is written (exit 2): `--pr` without `--push`,
/// and a host that is neither GitHub's nor GitLab's without `--pr-client`.
#[test]
fn pr_refusals_write_nothing() {
    let s = setup("https://git.example.com/acme/gitops.git", &["gh", "glab"]);
    let d = s.dir();
    // `git status` refreshes the index: first, so that the tree (`.git`
    // included) is taken as rebind finds it.
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    let before = tree(d);
    let out = crate::common::command()
        .args(["apply", "--from", OLD, "--to", NEW, "--yes", "--pr"])
        .current_dir(d)
        .env("PATH", &s.path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--push"), "{}", stderr(&out));
    let out = s.run(&["--pr"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--pr-client"), "{err}");
    assert!(err.contains("git.example.com"), "{err}");
    let after = tree(d);
    let changed: Vec<&String> = after
        .keys()
        .chain(before.keys())
        .filter(|k| after.get(*k) != before.get(*k))
        .collect();
    assert!(
        changed.is_empty(),
        "nothing written, .git included: {changed:?}"
    );
    assert!(s.calls().is_empty());
    assert!(git(&s.bare(), &["branch", "--list", BRANCH]).is_empty());
    // Named, the client opens it on that host.
    let out = s.run(&["--pr", "--pr-client", "glab"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        s.calls()[0].0,
        glab_list("https://git.example.com/acme/gitops")
    );
}

/// `--pr-draft`, `--pr-label` and `--pr-reviewer` reach the create call
/// exactly, in order, for both clients.
#[test]
fn draft_labels_and_reviewers_are_passed_exactly() {
    let flags = [
        "--pr",
        "--pr-draft",
        "--pr-label",
        "cutover",
        "--pr-label",
        "needs review",
        "--pr-reviewer",
        "alice",
        "--pr-reviewer",
        "platform/oncall",
    ];
    let tail = strs(&[
        "--draft",
        "--label",
        "cutover",
        "--label",
        "needs review",
        "--reviewer",
        "alice",
        "--reviewer",
        "platform/oncall",
    ]);
    for (url, client) in [
        ("https://github.com/acme/gitops.git", "gh"),
        ("https://gitlab.com/acme/gitops.git", "glab"),
    ] {
        let s = setup(url, &[client]);
        let out = s.run(&flags);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let calls = s.calls();
        let create = &calls[1].0;
        let at = create.iter().position(|a| a == "--draft").unwrap();
        let mut want = tail.clone();
        if client == "glab" {
            want.push("--yes".into());
        }
        assert_eq!(create[at..], want[..], "{client}: {create:?}");
    }
}

/// Without a remote HEAD, an upstream or `--base`, no base is passed (the
/// host's default branch); `--base` is passed as given.
#[test]
fn the_base_is_the_reviews_base() {
    let base_of = |s: &Setup| {
        let create = &s.calls()[1].0;
        let at = create.iter().position(|a| a == "--base").expect("--base");
        create[at + 1].clone()
    };
    // No base known (no --base, no remote HEAD, no upstream): the review
    // takes the branch checked out as its base, and so does the pull
    // request, never the host's default branch.
    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    git(s.dir(), &["remote", "set-head", "origin", "--delete"]);
    git(s.dir(), &["switch", "-q", "-c", "release"]);
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(base_of(&s), "release");
    // A re-run from the cutover branch itself cannot tell: refused before
    // anything is written, asking for --base.
    let before = tree(s.dir());
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("pass --base BRANCH"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree(s.dir()), before);
    let out = s.run(&["--pr", "--base", "release"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    git(s.dir(), &["branch", "release"]);
    let out = s.run(&["--pr", "--base", "release"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(base_of(&s), "release");
}

/// Empty labels and reviewers name nothing: refused before the first write.
#[test]
fn an_empty_label_or_reviewer_is_refused_before_any_write() {
    for flag in ["--pr-label", "--pr-reviewer"] {
        let s = setup("https://github.com/acme/gitops.git", &["gh"]);
        let before = tree(s.dir());
        let out = s.run(&["--pr", flag, " "]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
        assert_eq!(tree(s.dir()), before);
        assert!(s.calls().is_empty());
    }
}

/// Runs `examples/cutover.sh OLD NEW finance-prod-green origin` in the
/// repository (once per setup), the stubs first on PATH, `PR` set to `pr`;
/// with the script's `TMPDIR` (its outputs), removed when dropped.
fn cutover(s: &Setup, pr: &str) -> (Output, tempfile::TempDir) {
    // The repository the example's Applications name is this one (the
    // push remote is named otherwise; another git remote would be another
    // repository, a fork's upstream): declared in `.rebind.yaml`, or
    // nothing is proven to deploy and the script's `--require-deploys`
    // refuses.
    std::fs::write(
        s.dir().join(".rebind.yaml"),
        "repository_urls:\n  - https://github.com/example/platform-gitops.git\n",
    )
    .unwrap();
    git(s.dir(), &["add", ".rebind.yaml"]);
    git(s.dir(), &["commit", "-q", "-m", "declare the repository"]);
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cutover.sh");
    let bin = s.stubs.path().join("bin");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .arg(script)
        .args([OLD, NEW, "finance-prod-green", "origin"])
        .current_dir(s.dir())
        .env("PATH", path)
        .env("REBIND", crate::common::binary())
        .env("TMPDIR", tmp.path())
        .env("PR", pr)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("BRANCH")
        .env_remove("ARGOCD_CLUSTER_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, tmp)
}

/// `examples/cutover.sh` opens the pull request when the remote is on
/// GitHub and gh is on PATH, and prints its URL from rebind's report; with
/// `PR=0` it does not.
#[test]
fn the_cutover_script_opens_the_pull_request() {
    for pr in ["", "0"] {
        let s = setup_in(
            temp_fixture(),
            "https://github.com/acme/gitops.git",
            &["gh"],
        );
        let (out, _tmp) = cutover(&s, pr);
        let said = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
        let url = "https://github.com/acme/gitops/pull/7";
        if pr == "0" {
            assert!(s.calls().is_empty());
            assert!(!said.contains(url), "{said}");
            assert!(said.contains("2. Open a pull request for"), "{said}");
            continue;
        }
        assert!(said.contains(&format!("\nPull request: {url}\n")), "{said}");
        assert!(
            said.contains(&format!("2. Review and merge the pull request {url}")),
            "{said}"
        );
        let calls = s.calls();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[1].0[..3], strs(&["gh", "pr", "create"])[..]);
        // The body is the review the script kept.
        let review = said
            .lines()
            .find_map(|l| l.split_once(". Review: ").map(|(_, r)| r.to_string()))
            .unwrap();
        assert_eq!(calls[1].1, std::fs::read_to_string(review).unwrap());
    }
}

/// The script chooses the client as rebind does: from the URL git pushes
/// to when it names the host (an `insteadOf` shortcut), and passes no
/// `--pr` when that client is not on PATH.
#[test]
fn the_cutover_script_reads_the_host_as_rebind_does() {
    for clients in [&["glab"][..], &["gh"][..]] {
        let s = setup_in(
            temp_fixture(),
            "https://github.com/acme/gitops.git",
            clients,
        );
        s.lab_shortcut();
        let (out, _tmp) = cutover(&s, "");
        let said = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
        if clients == ["gh"] {
            assert!(s.calls().is_empty(), "gh is not GitLab's client");
            assert!(said.contains("2. Open a pull request for"), "{said}");
            continue;
        }
        let url = "https://gitlab.com/acme/gitops/-/merge_requests/7";
        assert!(said.contains(&format!("\nPull request: {url}\n")), "{said}");
        assert_eq!(s.calls()[0].0, glab_list("https://gitlab.com/acme/gitops"));
    }
}

/// A first run without `--pr` kept no body: on the branch itself (where the
/// review cannot be rendered: the files are rebound) `--pr` is exit 3 and
/// says to run from the branch it was made from, which opens it.
#[test]
fn pr_added_on_a_rerun_from_the_branch_itself_needs_the_original_branch() {
    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    let out = s.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.run(&["--pr"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&s.head()) && err.contains(BRANCH), "{err}");
    assert!(
        err.contains(&format!(
            "the same rebind apply command, from the branch {BRANCH} was made from"
        )),
        "{err}"
    );
    assert!(s.calls().is_empty());
    git(s.dir(), &["switch", "-q", "main"]);
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let calls = s.calls();
    assert_eq!(calls[1].0[2], "create");
    assert!(calls[1].1.starts_with("# rebind: "), "{}", calls[1].1);
}

/// The host is read from the URL git connects to (a shortcut expanded by
/// `insteadOf`) when the configured one names none, and the push goes
/// where `pushurl` says.
#[test]
fn an_insteadof_shortcut_names_the_host() {
    let s = setup("https://github.com/acme/gitops.git", &["gh", "glab"]);
    s.lab_shortcut();
    let out = s.run(&["--pr"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.calls()[0].0, glab_list("https://gitlab.com/acme/gitops"));
    assert_eq!(git(&s.bare(), &["rev-parse", BRANCH]).trim(), s.head());
}

/// An open pull request from a fork whose branch has the same name is not
/// the cutover's: it is never edited, and the cutover's own is opened.
#[test]
fn a_forks_pull_request_of_the_same_branch_name_is_left_alone() {
    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    std::fs::write(
        s.log().join("list.json"),
        r#"[{"number":13,"url":"https://github.com/acme/gitops/pull/13","isCrossRepository":true}]"#,
    )
    .unwrap();
    let out = s.run(&["--pr", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let calls = s.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(&calls[1].0[..3], &strs(&["gh", "pr", "create"])[..]);
    assert!(!calls
        .iter()
        .any(|(argv, _)| argv.contains(&"edit".to_string())));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["pull_request"]["action"], "opened");
    assert_eq!(report["pull_request"]["number"], 7);
}

/// SIGTERM (a CI job cancelled, `timeout`) while the client runs: the
/// client is stopped, and the run ends at once with 128 + 15, naming the
/// pushed branch, its commit and the pull request left to open, never exit
/// 0 or "the client failed".
#[test]
fn a_signal_while_the_client_runs_stops_it_and_says_what_is_left() {
    let s = setup("https://github.com/acme/gitops.git", &["gh"]);
    std::fs::write(s.log().join("hang"), "").unwrap();
    let started = std::time::Instant::now();
    let child = s
        .command(&["--pr", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let hanging = s.log().join("hanging");
    while !hanging.exists() {
        assert!(started.elapsed().as_secs() < 60, "the client never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stub = std::fs::read_to_string(&hanging).unwrap();
    let kill = |sig: &str, pid: &str| {
        Command::new("kill")
            .args([sig, pid])
            .status()
            .unwrap()
            .success()
    };
    assert!(kill("-TERM", &child.id().to_string()));
    let out = child.wait_with_output().unwrap();
    // The stub sleeps 60 s: the run did not wait for it.
    assert!(started.elapsed().as_secs() < 50, "{:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(BRANCH), "{err}");
    assert!(err.contains("pull request is not opened"), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains(BRANCH));
    // The client was stopped, not left running.
    assert!(!kill("-0", stub.trim()), "the client still runs");
    // The branch is pushed; no second call was made.
    assert_eq!(s.calls().len(), 1);
    let pushed = Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{BRANCH}"),
        ])
        .current_dir(s.bare())
        .output()
        .unwrap();
    assert!(pushed.status.success());
}

/// A review longer than GitHub takes in a pull-request body (65 536
/// characters: GitHub's REST API refuses a longer `body`) still opens the
/// pull request: the body is the review cut at a section (a heading line),
/// then where the rest is: the full review, committed on the branch in the
/// same commit as the rewrite, byte for byte, named by its path and its
/// address on GitHub. A re-run adds nothing and updates the same body.
#[test]
fn a_review_longer_than_a_body_is_cut_at_a_section_and_still_opens() {
    let repo = tempfile::tempdir().unwrap();
    for i in 0..700 {
        let dir = repo
            .path()
            .join(format!("clusters/team-{i:03}/applications"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("application-with-a-long-name.yaml"), app(OLD)).unwrap();
    }
    let s = setup_in(repo, "https://github.com/acme/gitops.git", &["gh"]);
    let (_outs, review) = review_file();
    let out = s.run(&["--pr", "--review-out", review.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let full = std::fs::read_to_string(&review).unwrap();
    assert!(full.chars().count() > 65_536, "{}", full.len());
    let calls = s.calls();
    let body = calls[1].1.clone();
    assert!(body.chars().count() <= 65_536, "{}", body.chars().count());
    let (kept, note) = body
        .split_once("\n---\n\n**The review is cut here**")
        .unwrap();
    assert!(full.starts_with(kept), "the body is the review's beginning");
    assert!(
        full[kept.len()..].starts_with('#'),
        "cut at a heading: {:?}",
        &full[kept.len()..kept.len() + 40]
    );
    let path = format!(".rebind/reviews/{BRANCH}.md");
    assert!(
        note.contains(&format!("committed on branch `{BRANCH}` as `{path}`")),
        "{note}"
    );
    assert!(
        note.contains(&format!(
            "https://github.com/acme/gitops/blob/{BRANCH}/{path}"
        )),
        "{note}"
    );
    // The file on the branch, as pushed, is the whole review byte for
    // byte, in the rewrite's one commit; the working tree is clean.
    let shown = format!("{BRANCH}:{path}");
    assert_eq!(git(&s.bare(), &["show", &shown]), full);
    assert_eq!(std::fs::read_to_string(s.dir().join(&path)).unwrap(), full);
    assert_eq!(
        git(s.dir(), &["rev-list", "--count", "main..HEAD"]).trim(),
        "1"
    );
    assert_eq!(git(s.dir(), &["status", "--porcelain"]), "");
    let head = s.head();
    // Run again on the branch: nothing new is committed (the review is no
    // place to rebind), the same body replaces the open pull request's.
    let again = s.run(&["--pr"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(s.head(), head);
    let calls = s.calls();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[3].0[..3], strs(&["gh", "pr", "edit"]));
    assert_eq!(calls[3].1, body);
    // And from main: the branch holds exactly this change, review included.
    git(s.dir(), &["checkout", "-q", "main"]);
    assert!(!s.dir().join(&path).exists());
    let from_main = s.run(&["--pr"]);
    assert_eq!(from_main.status.code(), Some(0), "{}", stderr(&from_main));
    assert!(stdout(&from_main).contains("already holds exactly this change"));
    assert_eq!(git(s.dir(), &["rev-parse", BRANCH]).trim(), head);
    // The same body, less the sentence about the first run's --review-out.
    let (without_out, _) = body.split_once("; the full review was written to").unwrap();
    assert_eq!(s.calls()[5].1, format!("{without_out}.\n"));
}
