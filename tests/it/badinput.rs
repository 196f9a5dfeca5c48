//! The bad-input matrix: what rebind does with input that is not a tidy
//! YAML file, and what happens when the disk changes under a running apply.

use crate::common::*;
use rebind::edit::rewrite::FilePlan;
use rebind::edit::write;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn apply_args() -> Vec<&'static str> {
    vec!["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"]
}

#[test]
fn to_equal_to_from_is_nothing_to_do() {
    let dir = temp_fixture();
    let before = tree(dir.path());
    let same = OLD.to_ascii_lowercase() + ":443/";
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            &same,
            "--yes",
            "--no-commit",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Nothing to change."));
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn host_matching_rules() {
    let dir = tempfile::tempdir().unwrap();
    let lower = OLD.to_ascii_lowercase();
    let text = format!(
        "kind: Application\nspec:\n  destination:\n    server: {lower}:443/\n  a: {OLD}.evil.example.com\n  b: https://x{OLD_HOST}\n  c: {OLD}/?__uid=1\n  d: {OLD}:6443\n  e: [\"{OLD}\"]\n  f: {OLD_HOST}\n"
    );
    std::fs::write(dir.path().join("a.yaml"), &text).unwrap();
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = format!(
        "kind: Application\nspec:\n  destination:\n    server: {NEW}/\n  a: {OLD}.evil.example.com\n  b: https://x{OLD_HOST}\n  c: {NEW}/?__uid=1\n  d: {OLD}:6443\n  e: [\"{NEW}\"]\n  f: {NEW_HOST}\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        want
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let flow = format!("{}{OLD}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let block: String = (0..10_000)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect::<String>()
        + &format!("{}server: {OLD}\n", " ".repeat(10_000));
    std::fs::write(dir.path().join("flow.yaml"), &flow).unwrap();
    std::fs::write(dir.path().join("block.yaml"), &block).unwrap();
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("flow.yaml:1:") && err.contains("recursion limit"),
        "{err}"
    );
    assert!(
        err.contains("block.yaml:1000:") && err.contains("nested deeper than 1000 levels"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("flow.yaml")).unwrap(),
        flow
    );
}

#[cfg(unix)]
#[test]
fn read_only_target_fails_the_run_with_nothing_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_fixture();
    let keda = dir.path().join("apps/keda.yaml");
    std::fs::set_permissions(&keda, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = tree(dir.path());
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("apps/keda.yaml: is read-only"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree(dir.path()), before);
    assert_eq!(
        std::fs::metadata(&keda).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

/// A plan that swaps `OLD` for `NEW` in the file at `root/rel`, built
/// directly (the tests drive the library write path, not the binary).
fn swap_plan(root: &Path, rel: &str) -> FilePlan {
    let old = std::fs::read_to_string(root.join(rel)).unwrap();
    assert!(old.contains(OLD), "{rel}");
    let new = old.replace(OLD, NEW);
    FilePlan {
        path: root.join(rel),
        rel: rel.to_string(),
        old: old.into(),
        new: new.into(),
        changes: Vec::new(),
        is_config: false,
    }
}

#[test]
fn file_changed_or_vanished_between_plan_and_write_is_detected() {
    for what in ["changed", "vanished"] {
        let dir = temp_fixture();
        let repo = dir.path();
        let plans: Vec<FilePlan> = ["apps/argocd.yaml", "apps/keda.yaml", "apps/istio.yaml"]
            .iter()
            .map(|r| swap_plan(repo, r))
            .collect();
        let before = tree(repo);
        let keda = repo.join("apps/keda.yaml");
        // Runs once the plans are made, right before the write starts.
        let meddle = || {
            if what == "changed" {
                let mut b = std::fs::read(&keda).unwrap();
                b.extend_from_slice(b"# edited meanwhile\n");
                std::fs::write(&keda, b).unwrap();
            } else {
                std::fs::remove_file(&keda).unwrap();
            }
        };
        let hooks = write::Hooks {
            before_write: Some(&meddle),
            ..Default::default()
        };
        let err = write::write_all_with(&plans, &hooks).unwrap_err();
        let err = format!("{err:#}");
        assert!(err.contains("apps/keda.yaml"), "{what}: {err}");
        let mut expected = before.clone();
        match what {
            "changed" => {
                expected
                    .get_mut("apps/keda.yaml")
                    .unwrap()
                    .extend_from_slice(b"# edited meanwhile\n");
            }
            _ => {
                expected.remove("apps/keda.yaml");
            }
        }
        assert_eq!(tree(repo), expected, "{what}: nothing else written");
    }
}

/// Peak resident memory of finished children, in bytes.
fn children_max_rss() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

/// 100 MB of YAML (about 3 400 documents of 30 KB, 1 in 50 with the endpoint):
/// the rebind works and peak memory stays under 6x the file. (The peak is the
/// largest of this binary's children; the others here are far smaller.)
/// Out of the everyday suite (it writes and reads 200 MB): `.ci/run` runs it
/// on its own with `--ignored`.
#[test]
#[ignore = "100 MB of I/O; .ci/run runs it on its own"]
fn a_100_mb_file_works_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    let mut text = String::with_capacity(105 << 20);
    let mut docs: usize = 0;
    while text.len() < 100 << 20 {
        let server = if docs.is_multiple_of(50) {
            OLD
        } else {
            "https://kubernetes.default.svc"
        };
        text.push_str(&format!(
            "---\n# 앱 {docs}\nkind: Application\nmetadata:\n  name: app-{docs}\nspec:\n  destination:\n    server: {server}\n  source:\n    helm:\n      values: |\n"
        ));
        for i in 0..1000 {
            text.push_str(&format!("        key{i}: value-{i}-{docs}\n"));
        }
        docs += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let size = text.len() as u64;
    drop(text);
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rss = children_max_rss();
    println!(
        "100 MB file: {} documents, peak RSS {} MB ({:.1}x the file)",
        docs,
        rss >> 20,
        rss as f64 / size as f64
    );
    assert!(rss < 6 * size, "peak RSS {rss} for a {size}-byte file");
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after.matches(NEW).count(), docs.div_ceil(50));
    assert!(!after.contains(OLD));
}

/// Environment of the child half of [`killed_mid_apply_every_file_is_old_or_new`]:
/// the directory whose files it rewrites (set only by that test).
const CHILD_DIR: &str = "REBIND_BADINPUT_CHILD_DIR";

const KILL_FILES: usize = 60;

fn kill_old_text(i: usize) -> String {
    format!("# 파일 {i}\nkind: Application\nmetadata: {{name: app-{i}}}\nspec:\n  destination:\n    server: '{OLD}'\n")
}

/// The child process of the kill test (run by it through the test binary
/// itself): rewrites every file of the directory, slowly, and appends a line
/// to `progress` after each rename. Does nothing when run as a plain test.
#[test]
#[ignore = "the child process of the kill test, which runs it"]
fn kill_test_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let dir = Path::new(&dir);
    let plans: Vec<FilePlan> = (0..KILL_FILES)
        .map(|i| swap_plan(dir, &format!("app-{i:03}.yaml")))
        .collect();
    let progress = dir.join("progress");
    let after = |n: usize| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&progress)
            .unwrap();
        writeln!(f, "{n}").unwrap();
        std::thread::sleep(Duration::from_millis(5));
    };
    let hooks = write::Hooks {
        after_rename: Some(&after),
        ..Default::default()
    };
    write::write_all_with(&plans, &hooks).unwrap();
}

/// Kills applies at random moments while files are renamed (slowly, by a
/// hook) and checks that every file is wholly old or wholly new each time,
/// and that the kills did land between the first and the last rename.
#[test]
fn killed_mid_apply_every_file_is_old_or_new() {
    let dir = tempfile::tempdir().unwrap();
    let new_text = |i: usize| kill_old_text(i).replace(OLD, NEW);
    let n = KILL_FILES;
    let progress = dir.path().join("progress");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut landed = 0;
    for round in 0..5 {
        for i in 0..n {
            std::fs::write(
                dir.path().join(format!("app-{i:03}.yaml")),
                kill_old_text(i),
            )
            .unwrap();
        }
        let _ = std::fs::remove_file(&progress);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "badinput::kill_test_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the first rename, then kill a little later.
        let renamed = || {
            std::fs::read_to_string(&progress)
                .map(|s| s.lines().count())
                .unwrap_or(0)
        };
        while renamed() == 0 {
            if child.try_wait().unwrap().is_some() {
                panic!("round {round}: the child ended before its first rename");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(seed % 150));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let reported = renamed();
        let (mut olds, mut news) = (0, 0);
        for i in 0..n {
            let got = std::fs::read_to_string(dir.path().join(format!("app-{i:03}.yaml"))).unwrap();
            if got == kill_old_text(i) {
                olds += 1;
            } else if got == new_text(i) {
                news += 1;
            } else {
                panic!("round {round}: app-{i:03}.yaml is neither old nor new:\n{got}");
            }
        }
        println!("round {round}: killed ({status}) with {news} files new and {olds} old, {reported} renames reported");
        // Renames happen in order and are reported right after: the files
        // new are the ones reported, plus at most one renamed meanwhile.
        assert!(
            news == reported || news == reported + 1,
            "round {round}: {news} new, {reported} reported"
        );
        if news < n {
            landed += 1;
        }
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                std::fs::remove_file(dir.path().join(name)).unwrap();
            }
        }
    }
    assert!(landed > 0, "no kill landed while files were being renamed");
}

/// A file whose name is 240 bytes long: the temporary file beside it would
/// pass the file system's 255-byte limit unless its name is cut short.
#[test]
fn long_file_names_are_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}.yaml", "a".repeat(235));
    assert_eq!(name.len(), 240);
    let text = format!("server: {OLD}\n");
    std::fs::write(dir.path().join(&name), &text).unwrap();
    // And a multi-byte name cut on a character boundary.
    let wide = format!("{}.yaml", "파".repeat(80));
    std::fs::write(dir.path().join(&wide), &text).unwrap();
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = format!("server: {NEW}\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(&name)).unwrap(),
        want
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(&wide)).unwrap(),
        want
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file left"
    );
}

/// A target with another hard link is refused by name before anything is
/// written: replacing it would split it from its other link.
#[cfg(unix)]
#[test]
fn hard_linked_target_is_refused() {
    let dir = temp_fixture();
    let keda = dir.path().join("apps/keda.yaml");
    std::fs::hard_link(&keda, dir.path().join("keda-link.txt")).unwrap();
    let before = tree(dir.path());
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("apps/keda.yaml: has 2 hard links"), "{err}");
    assert_eq!(tree(dir.path()), before);
}

/// A rewritten file keeps its owner and group (and mode). Changing the owner
/// needs root; otherwise the group is changed to another group of ours, if
/// there is one.
#[cfg(unix)]
#[test]
fn replaced_files_keep_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = temp_fixture();
    let keda = dir.path().join("apps/keda.yaml");
    // SAFETY: plain libc calls without pointers.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (want_uid, want_gid) = if uid == 0 {
        (4321, 4321)
    } else {
        let mut groups = vec![0 as libc::gid_t; 64];
        // SAFETY: the buffer holds 64 entries.
        let n = unsafe { libc::getgroups(64, groups.as_mut_ptr()) };
        match groups[..n.max(0) as usize].iter().find(|g| **g != gid) {
            Some(g) => (uid, *g),
            None => {
                skip(
                    "badinput::replaced_files_keep_owner_group_and_mode",
                    "not root and in no second group, so no owner or group to keep",
                );
                return;
            }
        }
    };
    std::os::unix::fs::chown(&keda, Some(want_uid), Some(want_gid)).unwrap();
    std::fs::set_permissions(&keda, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = rebind(dir.path(), &apply_args());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = std::fs::metadata(&keda).unwrap();
    assert!(std::fs::read_to_string(&keda).unwrap().contains(NEW));
    assert_eq!((meta.uid(), meta.gid()), (want_uid, want_gid));
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
}
