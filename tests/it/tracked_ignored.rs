//! A file git tracks is in the commit ArgoCD checks out, whatever ignore
//! rule matches it: every command that walks a repository reads it (named,
//! rewritten, checked), while an untracked ignored file stays out and other
//! tools' ignore files (`.ignore`) hide nothing.

use crate::common::{git, git_init_commit, rebind, stdout};
use std::path::Path;

const OLD: &str = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW: &str = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

fn app(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/example/workloads.git\n    path: x\n    targetRevision: main\n  destination:\n    server: {OLD}\n    namespace: x\n"
    )
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository where `apps/generated-b.yaml` and `build/c.yaml` are
/// tracked though `.gitignore` matches them, `apps/team/d.yaml` sits under
/// a `.ignore`, and `apps/scratch.yaml` is ignored and untracked.
fn repo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    for f in [
        "apps/a.yaml",
        "apps/generated-b.yaml",
        "build/c.yaml",
        "apps/team/d.yaml",
    ] {
        write(
            root,
            f,
            &app(f.rsplit('/').next().unwrap().trim_end_matches(".yaml")),
        );
    }
    write(
        root,
        ".gitignore",
        "generated-*.yaml\nbuild/\nscratch.yaml\n",
    );
    write(root, "apps/team/.ignore", "*\n");
    git_init_commit(root);
    git(
        root,
        &["add", "-f", "apps/generated-b.yaml", "build/c.yaml"],
    );
    git(root, &["commit", "-q", "-m", "tracked though ignored"]);
    write(root, "apps/scratch.yaml", &app("scratch"));
    t
}

fn listed(out: &str) -> Vec<&str> {
    let mut files: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(OLD) && !l.starts_with(' '))
        .filter_map(|l| l.split(':').next())
        .collect();
    files.dedup();
    files
}

#[test]
fn scan_names_every_tracked_file_and_no_ignored_untracked_one() {
    let t = repo();
    let out = rebind(t.path(), &["scan", "--from", OLD]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        listed(&stdout(&out)),
        [
            "apps/a.yaml",
            "apps/generated-b.yaml",
            "apps/team/d.yaml",
            "build/c.yaml"
        ],
        "{}",
        stdout(&out)
    );
}

#[test]
fn apply_rewrites_the_tracked_ignored_files_and_leaves_the_untracked_one() {
    let t = repo();
    let out = rebind(
        t.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "apps/a.yaml",
        "apps/generated-b.yaml",
        "build/c.yaml",
        "apps/team/d.yaml",
    ] {
        let text = std::fs::read_to_string(t.path().join(f)).unwrap();
        assert!(text.contains(NEW) && !text.contains(OLD), "{f}: {text}");
    }
    let scratch = std::fs::read_to_string(t.path().join("apps/scratch.yaml")).unwrap();
    assert!(
        scratch.contains(OLD),
        "an untracked ignored file is no part of the commit"
    );
}

#[test]
fn init_counts_and_check_fails_on_the_tracked_ignored_files() {
    let t = repo();
    let out = rebind(t.path(), &["init"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The config counts the four tracked files, so the rebind it guards
    // finds what it expects.
    let out = rebind(
        t.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let changed = git(t.path(), &["diff", "--name-only"]);
    assert!(
        changed.contains("apps/generated-b.yaml") && changed.contains("build/c.yaml"),
        "{changed}"
    );
    // The retired endpoint back in a tracked ignored file: the pre-commit
    // check fails on it.
    write(t.path(), "apps/generated-b.yaml", &app("generated-b"));
    let out = rebind(t.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("apps/generated-b.yaml"),
        "{}",
        stdout(&out)
    );
}
