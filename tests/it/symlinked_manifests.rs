//! A tree whose only manifests are symbolic links: rebind never follows
//! them, and every command names them (scan warns; diff and apply say so in
//! the error that the endpoint is not there).
#![cfg(unix)]

use crate::common::*;

#[test]
fn diff_names_the_symbolic_links_it_did_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(
        real.join("app.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../real/app.yaml", tree.join("app.yaml")).unwrap();
    // With --from, and without it (the one workload endpoint is looked for).
    for (cmd, from) in [("diff", true), ("apply", true), ("diff", false)] {
        let mut args = vec![cmd, "--to", NEW, "tree"];
        if from {
            args.extend(["--from", OLD]);
        }
        if cmd == "apply" {
            args.extend(["--yes", "--no-commit"]);
        }
        let out = rebind(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("tree/app.yaml") && err.contains("symbolic link"),
            "{cmd} does not name the link:\n{err}"
        );
    }
    // Nothing followed, nothing written.
    assert!(std::fs::read_to_string(real.join("app.yaml"))
        .unwrap()
        .contains(OLD));
}
