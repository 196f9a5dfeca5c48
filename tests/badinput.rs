//! The bad-input matrix: what rebind does with input that is not a tidy
//! YAML file, and what happens when the disk changes under a running apply.

mod common;

use common::*;
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

/// Starts an apply that stops between plan and write; returns it and the pause path.
fn paused_apply(dir: &Path) -> (std::process::Child, std::path::PathBuf) {
    let pause = dir.join("pause");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebind"))
        .args(apply_args())
        .current_dir(dir.join("repo"))
        .env("REBIND_TEST_PAUSE_BEFORE_WRITE", &pause)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = pause.with_extension("ready");
    for _ in 0..3000 {
        if ready.exists() {
            return (child, pause);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("apply never reached the write step");
}

fn repo_copy() -> tempfile::TempDir {
    let outer = tempfile::tempdir().unwrap();
    let fixture = temp_fixture();
    std::fs::rename(fixture.path(), outer.path().join("repo")).unwrap();
    outer
}

#[test]
fn file_changed_or_vanished_between_plan_and_write_is_detected() {
    for what in ["changed", "vanished"] {
        let outer = repo_copy();
        let repo = outer.path().join("repo");
        let before = tree(&repo);
        let (child, pause) = paused_apply(outer.path());
        let keda = repo.join("apps/keda.yaml");
        if what == "changed" {
            let mut b = std::fs::read(&keda).unwrap();
            b.extend_from_slice(b"# edited meanwhile\n");
            std::fs::write(&keda, b).unwrap();
        } else {
            std::fs::remove_file(&keda).unwrap();
        }
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
        std::fs::write(pause.with_extension("go"), b"").unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("apps/keda.yaml"), "{what}: {err}");
        assert_eq!(tree(&repo), expected, "{what}: nothing else written");
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
#[test]
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

/// Kills applies at random moments (every file written slowly) and checks that
/// every file is wholly old or wholly new each time.
#[test]
fn killed_mid_apply_every_file_is_old_or_new() {
    let dir = tempfile::tempdir().unwrap();
    let old_text = |i: usize| {
        format!("# 파일 {i}\nkind: Application\nmetadata: {{name: app-{i}}}\nspec:\n  destination:\n    server: '{OLD}'\n")
    };
    let new_text = |i: usize| old_text(i).replace(OLD, NEW);
    let n = 60;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..5 {
        for i in 0..n {
            std::fs::write(dir.path().join(format!("app-{i:03}.yaml")), old_text(i)).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_rebind"))
            .args(apply_args())
            .current_dir(dir.path())
            .env("REBIND_TEST_SLOW_WRITE_MS", "5")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 300));
        let _ = child.kill();
        let _ = child.wait();
        let (mut olds, mut news) = (0, 0);
        for i in 0..n {
            let got = std::fs::read_to_string(dir.path().join(format!("app-{i:03}.yaml"))).unwrap();
            if got == old_text(i) {
                olds += 1;
            } else if got == new_text(i) {
                news += 1;
            } else {
                panic!("round {round}: app-{i:03}.yaml is neither old nor new:\n{got}");
            }
        }
        println!("round {round}: killed with {news} files new and {olds} old");
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                std::fs::remove_file(dir.path().join(name)).unwrap();
            }
        }
    }
}
