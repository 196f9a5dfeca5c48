//! Which files a command looks at, through the binary: the config is never a
//! manifest whatever its name, `include`/`exclude` are relative to the
//! config's directory with `.gitignore` semantics, overlapping PATHs count
//! once, UTF-16 files are read, and unreadable files are named, not fatal.

use crate::common::*;

const CONFIG: &str = ".rebind.yaml";

fn app(server: &str) -> String {
    format!(
        "kind: Application\nmetadata:\n  name: v\nspec:\n  destination:\n    server: {server}\n"
    )
}

/// Whether the diff has a file header naming a path that contains `part`.
fn diffs(text: &str, part: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("--- ") && l.contains(part))
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn a_config_with_another_name_is_never_a_manifest() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::create_dir(d.join("ci")).unwrap();
    std::fs::write(
        d.join("ci/rebind-prod.yaml"),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\n  stage:\n    endpoint: {STAGE}\n"),
    )
    .unwrap();
    let cfg = "ci/rebind-prod.yaml";
    let out = rebind(
        d,
        &["diff", "--config", cfg, "--from", OLD, "--to", NEW, "."],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // `--from` a declared cluster's endpoint: the config is updated as the
    // config (endpoint rebound, old one retired), never as a manifest.
    let text = stdout(&out);
    assert_eq!(count(&text, "--- a/ci/rebind-prod.yaml"), 1, "{text}");
    assert!(text.contains(&format!("+    retired: [{OLD}]")), "{text}");
    assert!(
        text.contains("19 changes in 8 files (and the repo config)"),
        "{text}"
    );
    let out = rebind(
        d,
        &[
            "diff",
            "--config",
            cfg,
            "--cluster",
            "prod",
            "--to",
            NEW,
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        count(&stdout(&out), "--- a/ci/rebind-prod.yaml"),
        1,
        "{}",
        stdout(&out)
    );
    // check walks the root the config names, and never flags the config.
    std::fs::write(
        d.join("ci/rebind-prod.yaml"),
        format!("root: ..\nclusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n  stage:\n    endpoint: {STAGE}\n"),
    )
    .unwrap();
    let out = rebind(d, &["check", "--config", cfg]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("apps/keda.yaml:"), "{text}");
    assert!(!text.contains("ci/"), "{text}");
    // Run from elsewhere: the same findings, shown relative to where we stand.
    let out = rebind(&d.join("ci"), &["check", "--config", "rebind-prod.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("../apps/keda.yaml:"),
        "{}",
        stdout(&out)
    );
}

/// The fixture with a vendored copy holding OLD and a config excluding it.
fn vendored() -> tempfile::TempDir {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::create_dir_all(d.join("apps/vendor")).unwrap();
    std::fs::write(d.join("apps/vendor/v.yaml"), app(OLD)).unwrap();
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\n  stage:\n    endpoint: {STAGE}\nexclude: [\"apps/vendor/**\"]\n"),
    )
    .unwrap();
    dir
}

#[test]
fn exclude_is_relative_to_the_config_whatever_the_path_or_directory() {
    let dir = vendored();
    let d = dir.path();
    let diff = ["diff", "--cluster", "prod", "--to", NEW];
    for (cwd, extra) in [
        (d.to_path_buf(), None),
        (d.to_path_buf(), Some("apps")),
        (d.join("apps"), None),
    ] {
        let mut args = diff.to_vec();
        args.extend(extra);
        let out = rebind(&cwd, &args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(diffs(&text, "keda.yaml"), "{args:?}: {text}");
        assert!(
            !diffs(&text, "vendor"),
            "{args:?} in {}: {text}",
            cwd.display()
        );
    }
    // check FILE, as pre-commit calls it, honours exclude too: the file is
    // not checked, but a named file that exclude leaves out and that holds
    // a retired endpoint is an error of its own (the user asked to check it).
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\nexclude: [\"apps/vendor/**\"]\n"),
    )
    .unwrap();
    std::fs::write(d.join("apps/stale.yaml"), app(OLD)).unwrap();
    let excluded = "v.yaml:1:1: left out by the config's `exclude`, but holds a retired endpoint's host (1 time): not checked\n";
    let out = rebind(d, &["check", "apps/vendor/v.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with(&format!("apps/vendor/{excluded}")),
        "{}",
        stdout(&out)
    );
    let out = rebind(&d.join("apps"), &["check", "vendor/v.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with(&format!("vendor/{excluded}")),
        "{}",
        stdout(&out)
    );
    let out = rebind(d, &["check", "apps/vendor/v.yaml", "apps/stale.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.starts_with("apps/stale.yaml:6:"), "{text}");
    assert_eq!(text.matches("apps/vendor/v.yaml:").count(), 1, "{text}");
    // A file that exclude leaves out and holds no retired endpoint: clean.
    std::fs::write(d.join("apps/vendor/v.yaml"), app(NEW)).unwrap();
    let out = rebind(d, &["check", "apps/vendor/v.yaml"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
}

#[test]
fn a_glob_without_a_slash_matches_at_any_depth() {
    let dir = temp_fixture();
    let d = dir.path();
    let out = rebind(
        d,
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "--exclude",
            "karpenter.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(diffs(&stdout(&out), "apps/keda.yaml"));
    assert!(!diffs(&stdout(&out), "karpenter"), "{}", stdout(&out));
    // In the config too, matched from the config's directory.
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\n  stage:\n    endpoint: {STAGE}\nexclude: [karpenter.yaml]\n"),
    )
    .unwrap();
    let out = rebind(&d.join("apps"), &["diff", "--cluster", "prod", "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(diffs(&stdout(&out), "keda.yaml"));
    assert!(!diffs(&stdout(&out), "karpenter"), "{}", stdout(&out));
}

#[test]
fn overlapping_paths_count_each_file_once() {
    let dir = temp_fixture();
    let d = dir.path();
    let out = rebind(
        d,
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "apps",
            "./apps/keda.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert_eq!(count(&text, "--- a/apps/keda.yaml\n"), 1, "{text}");
    assert!(!text.contains("a/./"), "{text}");
    // The expect guard sees the real counts.
    let out = rebind(
        d,
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "--expect-files",
            "8",
            "--expect-occurrences",
            "19",
            ".",
            "apps/keda.yaml",
            "./apps",
            "apps/../apps/keda.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

fn utf16le(s: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for u in s.encode_utf16() {
        out.extend(u.to_le_bytes());
    }
    out
}

#[test]
fn utf16_files_are_read_and_named() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::write(
        d.join("apps/runbook.txt"),
        utf16le(&format!("Cut over from {OLD}\r\n")),
    )
    .unwrap();
    std::fs::write(d.join("apps/wide.yaml"), utf16le(&app(OLD))).unwrap();
    let out = rebind(d, &["scan", "--json", "--from", OLD]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let runbook: Vec<&serde_json::Value> = v["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["path"] == "apps/runbook.txt")
        .collect();
    assert_eq!(runbook.len(), 1, "{v:#}");
    assert_eq!(
        (runbook[0]["line"].as_u64(), runbook[0]["column"].as_u64()),
        (Some(1), Some(15))
    );
    // YAML in UTF-16 holding the endpoint stops a rebind, naming it.
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("apps/wide.yaml: UTF-16LE"), "{err}");
    // Never rewritten.
    assert_eq!(
        std::fs::read(d.join("apps/wide.yaml")).unwrap(),
        utf16le(&app(OLD))
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_named_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_fixture();
    let d = dir.path();
    let locked = d.join("apps/locked.yaml");
    std::fs::write(&locked, app(OLD)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let locked_dir = d.join("apps/locked-dir");
    std::fs::create_dir(&locked_dir).unwrap();
    std::fs::write(locked_dir.join("x.yaml"), app(OLD)).unwrap();
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_ok() {
        // Running as root: permissions do not stop reading, nothing to test.
        std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        skip(
            "walk_paths::an_unreadable_file_is_named_not_fatal",
            "running with privileges that ignore file permissions (root)",
        );
        return;
    }
    let out = rebind(d, &["scan"]);
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("apps/locked.yaml: skipped: cannot read: permission denied"),
        "{err}"
    );
    assert!(
        err.contains("apps/locked-dir: skipped: cannot read: permission denied"),
        "{err}"
    );
    assert!(stdout(&out).contains("apps/keda.yaml"));
}

#[test]
fn names_are_shown_relative_to_where_you_stand() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n  stage:\n    endpoint: {STAGE}\n"),
    )
    .unwrap();
    std::fs::write(d.join("apps/stale.yaml"), app(OLD)).unwrap();
    std::fs::write(d.join("stage/stale.yaml"), app(OLD)).unwrap();
    let out = rebind(&d.join("apps"), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("stale.yaml")).collect();
    assert_eq!(
        lines
            .iter()
            .map(|l| l.split(':').next().unwrap())
            .collect::<Vec<_>>(),
        ["../stage/stale.yaml", "stale.yaml"],
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn special_files_are_named_not_opened() {
    let dir = temp_fixture();
    let d = dir.path();
    let fifo = d.join("apps/pipe.yaml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("apps/pipe.yaml: skipped: not a regular file"),
        "{}",
        stderr(&out)
    );
    let out = rebind(d, &["check", "--allow-unknown", "apps/pipe.yaml"]);
    assert_eq!(out.status.code(), Some(2), "no config: {}", stderr(&out));
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\n"),
    )
    .unwrap();
    let out = rebind(d, &["check", "--allow-unknown", "apps/pipe.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("apps/pipe.yaml: skipped: not a regular file"));
}
