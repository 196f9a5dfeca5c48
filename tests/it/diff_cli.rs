//! `diff` end to end: lone-CR files get their hunk, odd file names are quoted
//! the way git quotes them.

use crate::common::*;
use std::fs;

fn app(br: &str) -> String {
    [
        "apiVersion: argoproj.io/v1alpha1",
        "kind: Application",
        "metadata:",
        "  name: guestbook",
        "spec:",
        "  destination:",
        &format!("    server: {OLD}"),
        "    namespace: default",
        "",
    ]
    .join(br)
}

#[test]
fn a_lone_cr_file_change_shows_a_hunk() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("apps")).unwrap();
    fs::write(dir.path().join("apps/cr.yaml"), app("\r")).unwrap();
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Lone CRs are shown as `<CR>`: the hunk's lines end with them.
    check(
        "diff_cli__a_lone_cr_file_change_shows_a_hunk",
        &normalise(&stdout(&out), dir.path()),
    );
}

#[cfg(unix)]
#[test]
fn a_file_name_with_a_newline_is_quoted_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("apps")).unwrap();
    fs::write(dir.path().join("apps/na\nme.yaml"), app("\n")).unwrap();
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let d = stdout(&out);
    assert!(
        d.contains("--- \"a/apps/na\\nme.yaml\"\n+++ \"b/apps/na\\nme.yaml\"\n@@ "),
        "{d:?}"
    );
}

/// A name that is not UTF-8 is written with octal escapes, as git writes
/// it, so `git apply` finds the file the diff names.
#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_quoted_so_git_applies_the_diff() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("apps")).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"apps/bad\xffname.yaml");
    fs::write(dir.path().join(name), app("\n")).unwrap();
    git_init_commit(dir.path());
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let d = stdout(&out);
    assert!(
        d.starts_with("--- \"a/apps/bad\\377name.yaml\"\n+++ \"b/apps/bad\\377name.yaml\"\n@@ "),
        "{d:?}"
    );
    let patch = dir.path().join("rebind.patch");
    fs::write(&patch, &d).unwrap();
    git(dir.path(), &["apply", patch.to_str().unwrap()]);
    let text = fs::read_to_string(dir.path().join(name)).unwrap();
    assert!(text.contains(NEW) && !text.contains(OLD), "{text}");
}
