//! Errors a script can read: every error in JSON carries a stable `code`
//! from the one table (`src/output/codes.rs`), each documented in
//! docs/errors.md; exit 3 carries `branch`, `commit`, `pushed`,
//! `pull_request` and the exact `retry` command as fields; a refused
//! mentions-only `--from` lists `mentions[]`. These tests assert codes and
//! fields, never wording.

use crate::common::*;
use rebind::output::codes::ALL;
use serde_json::Value;
use std::path::Path;

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

#[test]
fn every_code_is_documented_once() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/errors.md"))
            .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for c in ALL {
        assert!(seen.insert(c.id), "{} twice in the table", c.id);
        assert!(
            docs.contains(&format!("| `{}` |", c.id)),
            "docs/errors.md does not list {}",
            c.id
        );
        assert!(!c.meaning.is_empty() && !c.action.is_empty(), "{}", c.id);
    }
}

/// Every code a source file sets (`code: "..."`, `coded::err("...")`) is in
/// the table: a new code cannot be used without being documented.
#[test]
fn the_sources_use_only_codes_of_the_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src];
    let mut used = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for marker in ["code: \"", "coded::err(\"", "coded::err(\n"] {
                for (at, _) in text.match_indices(marker) {
                    let rest = text[at + marker.len()..]
                        .trim_start()
                        .trim_start_matches('"');
                    let id: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                        .collect();
                    used.push((p.display().to_string(), id));
                }
            }
        }
    }
    assert!(used.len() > 10, "{used:?}");
    for (file, id) in used {
        assert!(
            ALL.iter().any(|c| c.id == id),
            "{file}: code {id:?} is not in the table"
        );
    }
}

#[test]
fn an_endpoint_behind_escapes_in_a_document_is_refused_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n  source:\n    helm:\n      values: |\n        {{\"server\": \"\\u0068ttps://{OLD_HOST}\"}}\n"
    );
    std::fs::write(dir.path().join("a.yaml"), &text).unwrap();
    for cmd in ["diff", "apply"] {
        let mut args = vec![cmd, "--from", OLD, "--to", NEW, "--format", "json"];
        if cmd == "apply" {
            args.extend(["--yes", "--no-commit"]);
        }
        let out = rebind(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        let v = json(&out);
        let e = &v["errors"][0];
        assert_eq!(e["code"], "escaped-in-document", "{v}");
        assert_eq!(e["path"], "a.yaml", "{v}");
        assert_eq!(e["line"], 11, "{v}");
        assert_eq!(e["column"], 21, "{v}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            text
        );
    }
}

#[test]
fn a_mentions_only_from_lists_its_mentions_as_fields() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        format!("kind: ConfigMap\nmetadata: {{name: a}}\n# was {OLD}\ndata:\n  b: http://{OLD_HOST}:80\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), format!("see {OLD}\n")).unwrap();
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["errors"][0]["code"], "only-mentioned", "{v}");
    let m = v["mentions"].as_array().unwrap();
    let got: Vec<(String, u64, u64, String)> = m
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
                m["column"].as_u64().unwrap(),
                m["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("a.yaml".to_string(), 3, 7, "comment".to_string()),
            ("a.yaml".to_string(), 5, 6, "text".to_string()),
            ("notes.txt".to_string(), 1, 5, "text".to_string()),
        ],
        "{v}"
    );
    // Other refusals have no mentions, and the fields are there all the same.
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--from",
            "https://nowhere.example.com",
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(v["errors"][0]["code"], "endpoint-not-found", "{v}");
    assert_eq!(v["mentions"], serde_json::json!([]), "{v}");
    assert!(v["retry"].is_null() && v["branch"].is_null(), "{v}");
}

/// A push the remote rejects: exit 3, and the JSON names the branch, the
/// commit, that it is not pushed, no pull request, and the command that
/// finishes; that command, run as given once the remote accepts, pushes
/// the commit and exits 0.
#[test]
fn exit_3_carries_the_branch_commit_and_the_retry_that_finishes() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let repo = root.join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    git_init_commit(&repo);
    git(root, &["init", "-q", "--bare", "remote.git"]);
    git(&repo, &["remote", "add", "origin", "../remote.git"]);
    let hook = root.join("remote.git/hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho rejected >&2\nexit 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // An audit first, as the cutover script does: the retry drops it.
    let audit = root.join("audit.json");
    let a = rebind(
        &repo,
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    std::fs::write(&audit, &a.stdout).unwrap();
    let out = rebind(
        &repo,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--push",
            "origin",
            "--format",
            "json",
            "--expect-from-audit",
            audit.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let v = json(&out);
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    let commit = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(v["errors"][0]["code"], "push-failed", "{v}");
    assert_eq!(v["branch"], branch.as_str(), "{v}");
    assert_eq!(v["commit"], commit.as_str(), "{v}");
    assert_eq!(v["pushed"], false, "{v}");
    assert!(v["pull_request"].is_null(), "{v}");
    let retry = v["retry"].as_str().unwrap().to_string();
    assert!(
        retry.contains("apply") && !retry.contains("--expect-from-audit"),
        "{retry}"
    );
    std::fs::remove_file(&hook).unwrap();
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(&retry)
        .current_dir(&repo)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{retry}\n{}", stderr(&again));
    let v = json(&again);
    assert_eq!(v["status"], "already_done", "{v}");
    assert_eq!(v["pushed_to"], "origin", "{v}");
    let remote = git(root, &["--git-dir", "remote.git", "rev-parse", &branch]);
    assert_eq!(remote.trim(), commit);
}

/// A Secret that would take another server's registration name: its code.
#[test]
fn a_registration_name_taken_has_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("cluster.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: https://other.example.com\n",
    )
    .unwrap();
    git_init_commit(d);
    let out = rebind(
        d,
        &[
            "secret", "--name", "prod", "--server", NEW, "--format", "json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(json(&out)["errors"][0]["code"], "registration-name-taken");
}

/// `check`'s "To fix" commands work on the input it checked: run as given,
/// from the directory `check` ran in (a subdirectory of the repository
/// here), each does what it says, and `check` is clean after them.
#[test]
fn checks_fix_hints_are_commands_that_fix_what_they_name() {
    let dir = temp_fixture();
    let d = dir.path();
    let o = rebind(d, &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    git_init_commit(d);
    // The cutover, then a file added later with the retired endpoint.
    let o = rebind(
        d,
        &[
            "apply",
            "--cluster",
            "finance-prod-blue",
            "--to",
            NEW,
            "--yes",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::create_dir_all(d.join("late/sub")).unwrap();
    std::fs::write(
        d.join("late/app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: late\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "late"]);
    let cwd = d.join("late/sub");
    let o = rebind(&cwd, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let fixes: Vec<&str> = out
        .split("To fix:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no To fix: {out}"))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert!(!fixes.is_empty(), "{out}");
    let bin = crate::common::binary().parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for fix in &fixes {
        assert!(fix.starts_with("rebind "), "not a command: {fix}\n{out}");
        let ran = std::process::Command::new("sh")
            .arg("-c")
            .arg(fix)
            .current_dir(&cwd)
            .env("PATH", &path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            ran.status.code(),
            Some(0),
            "{fix}\n{}{}",
            stdout(&ran),
            stderr(&ran)
        );
    }
    let o = rebind(&cwd, &["check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "after {fixes:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
    let late = std::fs::read_to_string(d.join("late/app.yaml")).unwrap();
    assert!(late.contains(NEW) && !late.contains(OLD), "{late}");
}
