//! A token never reaches a work tree: `--out` is created fresh with mode
//! 0600 after resolving every directory; a symbolic link or a hard-linked
//! file is refused, and so is any path that resolves into a git work tree.
//! `--require-env` makes the placeholder-and-envsubst recipe fail loudly.
#![cfg(unix)]

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

const TOKEN: &str = "s3cr3t-token-value";

fn secret(cwd: &Path, args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut c = crate::common::command();
    c.arg("secret")
        .args(["--name", "finance-prod-green", "--server", NEW])
        .args(args)
        .current_dir(cwd)
        .env_remove("ARGOCD_CLUSTER_TOKEN")
        .env_remove("ARGOCD_CLUSTER_CA")
        .stdin(Stdio::null());
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn with_token(cwd: &Path, out: &Path) -> std::process::Output {
    secret(
        cwd,
        &["--token-env", "TOK", "--out", out.to_str().unwrap()],
        &[("TOK", TOKEN)],
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A git repository with one tracked file, `tracked.yaml`.
fn repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("tracked.yaml"), "a: 1\n").unwrap();
    git_init_commit(repo.path());
    repo
}

fn assert_no_token(root: &Path) {
    for (path, bytes) in tree(root) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "{path} holds the token"
        );
    }
}

#[test]
fn a_symlink_into_a_repository_is_refused() {
    let repo = repo();
    let outside = tempfile::tempdir().unwrap();
    // A dangling link to a new file in the repo, and a link to a tracked file.
    let dangling = outside.path().join("l.yaml");
    std::os::unix::fs::symlink(repo.path().join("leak.yaml"), &dangling).unwrap();
    let tracked = outside.path().join("t.yaml");
    std::os::unix::fs::symlink(repo.path().join("tracked.yaml"), &tracked).unwrap();
    for link in [&dangling, &tracked] {
        let out = with_token(outside.path(), link);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        assert!(std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert!(!repo.path().join("leak.yaml").exists());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("tracked.yaml")).unwrap(),
        "a: 1\n"
    );
    // A directory link resolves into the repository: refused as such.
    let dir_link = outside.path().join("d");
    std::os::unix::fs::symlink(repo.path(), &dir_link).unwrap();
    let out = with_token(outside.path(), &dir_link.join("s.yaml"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("git work tree"), "{}", stderr(&out));
    // So does `..` out of a directory outside it.
    std::fs::create_dir(outside.path().join("sub")).unwrap();
    let up = outside.path().join("sub/../d/x.yaml");
    let out = with_token(outside.path(), &up);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_no_token(repo.path());
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
}

#[test]
fn a_hard_link_to_a_tracked_file_is_refused() {
    let repo = repo();
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("h.yaml");
    if std::fs::hard_link(repo.path().join("tracked.yaml"), &link).is_err() {
        skip(
            "secret_tokens::a_hard_link_to_a_tracked_file_is_refused",
            "a hard link cannot be made here (another file system)",
        );
        return;
    }
    let out = with_token(outside.path(), &link);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("hard links"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("tracked.yaml")).unwrap(),
        "a: 1\n"
    );
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
    // Without a token too: writing would change the other name.
    let out = secret(outside.path(), &["--out", "h.yaml"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "a: 1\n");
}

#[test]
fn an_existing_file_is_replaced_with_mode_0600() {
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("secret.yaml");
    std::fs::write(&file, "old\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = with_token(outside.path(), &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&file), 0o600);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(TOKEN), "{text}");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["secret.yaml"]);
    // The placeholder form, written over a world-readable file, is 0600 too.
    let file = outside.path().join("placeholder.yaml");
    std::fs::write(&file, "old\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = secret(outside.path(), &["--out", "placeholder.yaml"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&file), 0o600);
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("${ARGOCD_CLUSTER_TOKEN}"));
}

#[test]
fn a_token_is_never_written_inside_a_work_tree() {
    let repo = repo();
    std::fs::create_dir(repo.path().join("deep")).unwrap();
    for out in ["s.yaml", "deep/s.yaml", ".git/s.yaml"] {
        let o = with_token(repo.path(), Path::new(out));
        assert_eq!(o.status.code(), Some(2), "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains("git work tree"), "{}", stderr(&o));
    }
    assert_no_token(repo.path());
    // The placeholder form may go into the repository (to be committed).
    let o = secret(repo.path(), &["--out", "deep/s.yaml"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A token with a trailing newline is refused before anything is written.
    let outside = tempfile::tempdir().unwrap();
    let o = secret(
        outside.path(),
        &["--token-env", "TOK", "--out", "s.yaml"],
        &[("TOK", "abc\n")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("trailing newline"), "{}", stderr(&o));
    assert!(!outside.path().join("s.yaml").exists());
}

#[test]
fn require_env_refuses_what_envsubst_would_blank() {
    let dir = tempfile::tempdir().unwrap();
    // Unset: exit 2, nothing on stdout for `envsubst | kubectl apply` to take.
    let out = secret(dir.path(), &["--require-env"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("ARGOCD_CLUSTER_TOKEN and ARGOCD_CLUSTER_CA not set or empty"),
        "{err}"
    );
    let out = secret(
        dir.path(),
        &["--require-env"],
        &[("ARGOCD_CLUSTER_TOKEN", "t"), ("ARGOCD_CLUSTER_CA", "")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("ARGOCD_CLUSTER_CA not set"),
        "{}",
        stderr(&out)
    );
    let out = secret(
        dir.path(),
        &["--require-env"],
        &[("ARGOCD_CLUSTER_TOKEN", "t"), ("ARGOCD_CLUSTER_CA", "====")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not base64"), "{}", stderr(&out));
    // Both set: the manifest, still with its placeholders, for envsubst.
    let out = secret(
        dir.path(),
        &["--require-env"],
        &[("ARGOCD_CLUSTER_TOKEN", "t"), ("ARGOCD_CLUSTER_CA", "Zm9v")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"bearerToken\": \"${ARGOCD_CLUSTER_TOKEN}\""));
    // With the CA embedded only the token variable is needed.
    let out = secret(
        dir.path(),
        &["--require-env", "--ca-data", "Zm9v"],
        &[("ARGOCD_CLUSTER_TOKEN", "t")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
