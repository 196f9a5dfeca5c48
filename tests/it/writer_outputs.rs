//! The one writer for every file rebind creates besides the manifests
//! (`--review-out`, `--secret-out`, `init`'s config), and the rule that no
//! output may land on a file the same run rewrites: same path however spelt,
//! resolved path, symbolic link, hard link, or the other output. Each case
//! runs in the git flow and with `--no-commit`, and must leave the tree (and
//! the repository) exactly as it was.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::Path;

fn app(server: &str) -> String {
    format!("kind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {server}\n  project: default\n")
}

/// A directory holding `app.yaml` (and `other.yaml`), committed when `git`.
fn tree_with_app(git_flow: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.yaml"), app(OLD)).unwrap();
    std::fs::write(dir.path().join("other.yaml"), app(OLD)).unwrap();
    if git_flow {
        git_init_commit(dir.path());
    }
    dir
}

/// The work tree's files (without `.git`) and, in a repository, HEAD and
/// every ref.
type State = (BTreeMap<String, Vec<u8>>, Option<(String, String)>);

fn state(d: &Path) -> State {
    let mut files = tree(d);
    files.retain(|k, _| !k.starts_with(".git/"));
    let repo = d
        .join(".git")
        .exists()
        .then(|| (git(d, &["rev-parse", "HEAD"]), git(d, &["for-each-ref"])));
    (files, repo)
}

fn apply(d: &Path, git_flow: bool, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["apply", "--from", OLD, "--to", NEW, "--yes"];
    if !git_flow {
        args.push("--no-commit");
    }
    args.extend_from_slice(extra);
    rebind(d, &args)
}

/// `apply` with `extra` exits 2, names every needle, and writes nothing.
fn refused(d: &Path, git_flow: bool, extra: &[&str], needles: &[&str]) {
    let before = state(d);
    let out = apply(d, git_flow, extra);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{extra:?}: wanted {n:?} in: {err}");
    }
    assert!(err.contains("nothing written"), "{err}");
    assert_eq!(state(d), before, "{extra:?}: nothing may change");
}

#[test]
fn review_out_naming_a_rewritten_manifest_is_refused_however_spelt() {
    for git_flow in [false, true] {
        let dir = tree_with_app(git_flow);
        let d = dir.path();
        let abs = d.join("app.yaml");
        let abs = abs.to_str().unwrap();
        let dotted = d.join("./sub/../app.yaml");
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/keep"), "").unwrap();
        for spelling in ["app.yaml", "./app.yaml", abs, dotted.to_str().unwrap()] {
            for flag in ["--review-out", "--secret-out"] {
                let mut extra = vec![flag, spelling];
                if flag == "--secret-out" {
                    extra.extend(["--cluster-name", "prod"]);
                }
                refused(
                    d,
                    git_flow,
                    &extra,
                    &[flag, spelling, "a manifest this run rewrites, app.yaml"],
                );
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn an_output_linked_to_a_rewritten_manifest_is_refused_naming_both() {
    for git_flow in [false, true] {
        let dir = tree_with_app(git_flow);
        let d = dir.path();
        // A symbolic link, a link to the directory, and a hard link.
        std::os::unix::fs::symlink("app.yaml", d.join("review.md")).unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d, out_dir.path().join("here")).unwrap();
        let through_dir = out_dir.path().join("here/app.yaml");
        let through_dir = through_dir.to_str().unwrap();
        let hard = out_dir.path().join("hard.md");
        std::fs::hard_link(d.join("other.yaml"), &hard).unwrap();
        let hard = hard.to_str().unwrap();
        for (flag, path, how) in [
            ("--review-out", "review.md", "through a symbolic link"),
            ("--review-out", through_dir, "the same path"),
            ("--secret-out", "review.md", "through a symbolic link"),
            ("--review-out", hard, "a hard link to it"),
            ("--secret-out", hard, "a hard link to it"),
        ] {
            let mut extra = vec![flag, path];
            if flag == "--secret-out" {
                extra.extend(["--cluster-name", "prod"]);
            }
            let manifest = if path == hard {
                "other.yaml"
            } else {
                "app.yaml"
            };
            refused(
                d,
                git_flow,
                &extra,
                &[flag, path, "a manifest this run rewrites", manifest, how],
            );
        }
    }
}

#[test]
fn review_out_and_secret_out_naming_one_file_are_refused() {
    for git_flow in [false, true] {
        let dir = tree_with_app(git_flow);
        let d = dir.path();
        let out_dir = tempfile::tempdir().unwrap();
        let review = out_dir.path().join("out.md");
        let review = review.to_str().unwrap();
        let respelt = out_dir.path().join(".").join("out.md");
        let respelt = respelt.to_str().unwrap();
        for (a, b) in [(review, review), (review, respelt)] {
            refused(
                d,
                git_flow,
                &[
                    "--review-out",
                    a,
                    "--secret-out",
                    b,
                    "--cluster-name",
                    "prod",
                ],
                &["--secret-out", "--review-out", "are the same file"],
            );
        }
        assert!(!Path::new(review).exists());
        // An existing file linked under two names is one file too.
        #[cfg(unix)]
        {
            std::fs::write(review, "old review\n").unwrap();
            let other = out_dir.path().join("secret.yaml");
            std::os::unix::fs::symlink(review, &other).unwrap();
            refused(
                d,
                git_flow,
                &[
                    "--review-out",
                    review,
                    "--secret-out",
                    other.to_str().unwrap(),
                    "--cluster-name",
                    "prod",
                ],
                &["are the same file", "through a symbolic link"],
            );
            assert_eq!(std::fs::read_to_string(review).unwrap(), "old review\n");
        }
    }
}

#[test]
fn review_out_naming_the_config_the_run_rebinds_is_refused() {
    for git_flow in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("app.yaml"), app(OLD)).unwrap();
        std::fs::write(
            d.join(".rebind.yaml"),
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n"),
        )
        .unwrap();
        if git_flow {
            git_init_commit(d);
        }
        refused(
            d,
            git_flow,
            &["--review-out", ".rebind.yaml"],
            &["--review-out .rebind.yaml", "the config this run rewrites"],
        );
    }
}

/// The review is written by the checked writer: never through a symbolic
/// link, never into a hard-linked file, and replaced whole.
#[cfg(unix)]
#[test]
fn review_out_never_follows_a_link_and_is_replaced_whole() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    for git_flow in [false, true] {
        let dir = tree_with_app(git_flow);
        let d = dir.path();
        let out_dir = tempfile::tempdir().unwrap();
        let o = out_dir.path();
        let victim = o.join("victim.txt");
        std::fs::write(&victim, "keep me\n").unwrap();
        std::os::unix::fs::symlink(&victim, o.join("link.md")).unwrap();
        let link = o.join("link.md");
        refused(
            d,
            git_flow,
            &["--review-out", link.to_str().unwrap()],
            &["--review-out", "is a symbolic link"],
        );
        std::fs::hard_link(&victim, o.join("hard.md")).unwrap();
        let hard = o.join("hard.md");
        refused(
            d,
            git_flow,
            &["--review-out", hard.to_str().unwrap()],
            &["--review-out", "hard links"],
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

        // An existing review is replaced by a new file that keeps its mode.
        let review = o.join("review.md");
        std::fs::write(&review, "an old review that is longer than nothing\n").unwrap();
        std::fs::set_permissions(&review, std::fs::Permissions::from_mode(0o640)).unwrap();
        let ino = std::fs::metadata(&review).unwrap().ino();
        let out = apply(d, git_flow, &["--review-out", review.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let meta = std::fs::metadata(&review).unwrap();
        assert_ne!(meta.ino(), ino, "a new file, renamed into place");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
        let text = std::fs::read_to_string(&review).unwrap();
        assert!(text.contains(NEW_HOST), "{text}");
        assert!(!text.contains("an old review"), "{text}");
        let left: Vec<_> = std::fs::read_dir(o)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".rebind-"))
            .collect();
        assert!(left.is_empty(), "no temporary file left: {left:?}");
    }
}

/// `init` goes through the writer too: a `.rebind.yaml` that is a dangling
/// symbolic link is refused, not followed to create the file it names.
#[cfg(unix)]
#[test]
fn init_never_writes_through_a_dangling_link() {
    let dir = tree_with_app(false);
    let d = dir.path();
    let out_dir = tempfile::tempdir().unwrap();
    let elsewhere = out_dir.path().join("planted.yaml");
    std::os::unix::fs::symlink(&elsewhere, d.join(".rebind.yaml")).unwrap();
    let out = rebind(d, &["init"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(".rebind.yaml: is a symbolic link"), "{err}");
    assert!(!elsewhere.exists(), "nothing created through the link");
    assert!(std::fs::symlink_metadata(d.join(".rebind.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());

    // Without the link, the config is created and reads back.
    std::fs::remove_file(d.join(".rebind.yaml")).unwrap();
    let out = rebind(d, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(d.join(".rebind.yaml")).unwrap();
    assert!(text.contains(OLD), "{text}");
}

/// A `.rebind.yaml` that is a symbolic link is read, but never written
/// through: the run stops before the first write, saying so.
#[cfg(unix)]
#[test]
fn a_config_that_is_a_symbolic_link_is_not_written_through() {
    for git_flow in [false, true] {
        let dir = tree_with_app(false);
        let d = dir.path();
        std::fs::create_dir(d.join("conf")).unwrap();
        std::fs::write(
            d.join("conf/rebind.yaml"),
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n"),
        )
        .unwrap();
        std::os::unix::fs::symlink("conf/rebind.yaml", d.join(".rebind.yaml")).unwrap();
        if git_flow {
            git_init_commit(d);
        }
        let before = state(d);
        let out = apply(d, git_flow, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(".rebind.yaml: is a symbolic link"), "{err}");
        assert_eq!(state(d), before);
    }
}

/// A read-only file is never replaced by an output, as a read-only manifest
/// is never rewritten (mode bits, so the same for root).
#[cfg(unix)]
#[test]
fn a_read_only_output_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let out_dir = tempfile::tempdir().unwrap();
    let o = out_dir.path();
    let ro = o.join("ro.yaml");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let ro = ro.to_str().unwrap();
    for git_flow in [false, true] {
        let dir = tree_with_app(git_flow);
        let d = dir.path();
        refused(
            d,
            git_flow,
            &["--review-out", ro],
            &["--review-out", "is read-only"],
        );
        refused(
            d,
            git_flow,
            &["--secret-out", ro, "--cluster-name", "prod"],
            &["--secret-out", "is read-only"],
        );
    }
    let out = rebind(
        o,
        &["secret", "--name", "prod", "--server", NEW, "--out", ro],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is read-only"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(ro).unwrap(), "keep\n");
}
