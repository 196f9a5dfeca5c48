//! SIGINT, SIGTERM and SIGHUP sent to a real `rebind apply` at each step:
//! at the prompt, while planning, with the lock held, while writing, staging
//! and committing, before the push. Each time the repository is exactly as
//! it was (HEAD, refs, index, work tree, no lock or temporary file), or,
//! once the commit is complete, exactly as a finished run leaves it; the exit
//! code is 128 + the signal.
//!
//! The child pauses at a named step through `REBIND_TEST_PAUSE_AT` (see
//! `rebind::sys::signals::pause_point`) and says so by creating a file.

use crate::common::*;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SIGINT: i32 = libc::SIGINT;
const SIGTERM: i32 = libc::SIGTERM;
const SIGHUP: i32 = libc::SIGHUP;

/// Work tree files (not `.git`), HEAD, refs, index bytes, `.git` entries
/// other than objects and logs.
#[derive(Debug, PartialEq)]
struct State {
    files: BTreeMap<String, Vec<u8>>,
    head: String,
    refs: String,
    index: Vec<u8>,
    git_dir: Vec<String>,
}

fn state(d: &Path) -> State {
    let mut files = tree(d);
    files.retain(|k, _| !k.starts_with(".git/"));
    let mut git_dir: Vec<String> = std::fs::read_dir(d.join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    git_dir.sort();
    State {
        files,
        head: std::fs::read_to_string(d.join(".git/HEAD")).unwrap(),
        refs: git(d, &["for-each-ref", "--format=%(refname)"]),
        index: std::fs::read(d.join(".git/index")).unwrap(),
        git_dir,
    }
}

/// The fixture committed on main, with staged and unstaged work elsewhere
/// (which must survive a restore), and a bare remote `origin`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("repo");
    copy_fixture(&d);
    git_init_commit(&d);
    let stage = d.join("stage/keda.yaml");
    let mut b = std::fs::read(&stage).unwrap();
    b.extend_from_slice(b"# staged\n");
    std::fs::write(&stage, &b).unwrap();
    git(&d, &["add", "stage/keda.yaml"]);
    b.extend_from_slice(b"# unstaged\n");
    std::fs::write(&stage, &b).unwrap();
    git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
    git(&d, &["remote", "add", "origin", "../remote.git"]);
    (dir, d)
}

fn command(d: &Path, args: &[&str]) -> Command {
    let mut c = crate::common::command();
    c.args(args)
        .current_dir(d)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("REBIND_TEST_PAUSE_AT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Whether the binary under test has the pause hook: only debug builds read
/// it (a `cargo test --release` run says it skips these tests).
fn pause_hook(test: &str) -> bool {
    if !cfg!(debug_assertions) {
        skip(
            test,
            "a release build has no pause hook (REBIND_TEST_PAUSE_AT)",
        );
    }
    cfg!(debug_assertions)
}

/// Starts `rebind ARGS` paused at `step`; returns once it is there.
fn paused_at(d: &Path, args: &[&str], step: &str) -> Child {
    let marker = d.parent().unwrap().join(format!("paused-{step}"));
    let _ = std::fs::remove_file(&marker);
    let mut child = command(d, args)
        .env("REBIND_TEST_PAUSE_AT", step)
        .env("REBIND_TEST_PAUSE_FILE", &marker)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !marker.exists() {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("{step}: rebind ended ({st}) before pausing there: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{step}: never paused"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

fn kill(child: &Child, signal: i32) {
    // SAFETY: signals our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Waits for the child; returns its exit code and stderr.
fn finish(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const APPLY: [&str; 6] = ["apply", "--from", OLD, "--to", NEW, "--yes"];

#[test]
fn a_signal_before_the_commit_is_complete_leaves_the_start_state() {
    if !pause_hook("git_signals::a_signal_before_the_commit_is_complete_leaves_the_start_state") {
        return;
    }
    // (step, signal): every step of the git flow, each signal more than once.
    let steps = [
        ("planned", SIGINT),
        ("locked", SIGTERM),
        ("writing", SIGINT),
        ("write", SIGHUP),
        ("stage", SIGTERM),
        ("branch", SIGINT),
        ("head", SIGHUP),
        ("index", SIGTERM),
    ];
    for (step, signal) in steps {
        let (_dir, d) = repo();
        let before = state(&d);
        let status = git(&d, &["status", "--porcelain"]);
        let child = paused_at(&d, &APPLY, step);
        if step == "locked" {
            assert!(
                d.join(".git/index.lock").exists(),
                "{step}: the lock is held"
            );
        }
        kill(&child, signal);
        let (code, err) = finish(child);
        assert_eq!(code, Some(128 + signal), "{step}: {err}");
        assert!(err.contains("interrupted by SIG"), "{step}: {err}");
        assert!(err.contains("nothing written"), "{step}: {err}");
        let after = state(&d);
        assert_eq!(after.files, before.files, "{step}: work tree");
        assert_eq!(after.head, before.head, "{step}: HEAD");
        assert_eq!(after.refs, before.refs, "{step}: refs");
        assert!(after.index == before.index, "{step}: index bytes");
        assert_eq!(
            after.git_dir, before.git_dir,
            "{step}: no lock or temporary file left in .git"
        );
        assert_eq!(git(&d, &["status", "--porcelain"]), status, "{step}");
    }
}

#[test]
fn a_signal_after_the_commit_leaves_the_finished_commit_and_says_what_is_left() {
    if !pause_hook(
        "git_signals::a_signal_after_the_commit_leaves_the_finished_commit_and_says_what_is_left",
    ) {
        return;
    }
    // The finished state, from a run nobody stops.
    let (_ref_dir, r) = repo();
    let o = command(&r, &APPLY).stdin(Stdio::null()).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let finished = state(&r);

    let (_dir, d) = repo();
    let mut args = APPLY.to_vec();
    args.extend(["--push", "origin"]);
    let child = paused_at(&d, &args, "push");
    kill(&child, SIGTERM);
    let (code, err) = finish(child);
    assert_eq!(code, Some(143), "{err}");
    let after = state(&d);
    assert_eq!(after.files, finished.files, "work tree as finished");
    assert_eq!(after.head, finished.head, "HEAD on the new branch");
    assert_eq!(after.refs, finished.refs, "the branch exists");
    assert_eq!(after.git_dir, finished.git_dir, "no lock or temporary file");
    assert_eq!(
        git(&d, &["status", "--porcelain"]),
        git(&r, &["status", "--porcelain"])
    );
    // What is left is said: the push, with its command.
    assert!(
        err.contains("not pushed to origin")
            && err
                .contains("git push --set-upstream origin rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"),
        "{err}"
    );
    assert_eq!(git(&d.join("../remote.git"), &["branch", "--list"]), "");
}

#[test]
fn a_signal_during_a_no_commit_write_puts_every_file_back() {
    if !pause_hook("git_signals::a_signal_during_a_no_commit_write_puts_every_file_back") {
        return;
    }
    for (step, signal) in [("locked", SIGINT), ("writing", SIGTERM)] {
        let (_dir, d) = repo();
        let before = state(&d);
        let mut args = APPLY.to_vec();
        args.push("--no-commit");
        let child = paused_at(&d, &args, step);
        assert!(
            d.join(".git/index.lock").exists(),
            "{step}: --no-commit holds the repository's lock"
        );
        kill(&child, signal);
        let (code, err) = finish(child);
        assert_eq!(code, Some(128 + signal), "{step}: {err}");
        assert!(err.contains("nothing written"), "{step}: {err}");
        assert_eq!(state(&d), before, "{step}");
    }
}

/// A pseudo-terminal: (master, slave) as files.
fn pty() -> (std::fs::File, std::fs::File) {
    use std::os::unix::io::FromRawFd;
    // SAFETY: plain libc calls on descriptors this function owns.
    unsafe {
        // Close-on-exec: the child gets the slave as stdin only.
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let name = libc::ptsname(master);
        assert!(!name.is_null());
        let slave = libc::open(name, libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(slave >= 0, "open the pty slave");
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    }
}

/// Starts `rebind apply` (no --yes) on a terminal; returns once it asks.
fn at_the_prompt(
    d: &Path,
    extra: &[&str],
) -> (Child, std::fs::File, std::sync::mpsc::Receiver<String>) {
    let (master, slave) = pty();
    let mut args = vec!["apply", "--from", OLD, "--to", NEW];
    args.extend(extra);
    let mut child = command(d, &args).stdin(slave).spawn().unwrap();
    // stderr is read on a thread; each chunk is sent here.
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0
                || tx
                    .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                    .is_err()
            {
                break;
            }
        }
    });
    let mut seen = String::new();
    while !seen.contains("[y/N]") {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(s) => seen.push_str(&s),
            Err(_) => panic!("no prompt: {seen}"),
        }
    }
    (child, master, rx)
}

fn rest(child: Child, rx: std::sync::mpsc::Receiver<String>) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    let err: String = rx.iter().collect();
    (out.status.code(), err)
}

#[test]
fn the_prompt_holds_no_lock_and_a_signal_there_writes_nothing() {
    for signal in [SIGINT, SIGHUP, SIGTERM] {
        let (_dir, d) = repo();
        let before = state(&d);
        let (child, _master, rx) = at_the_prompt(&d, &[]);
        assert!(
            !d.join(".git/index.lock").exists(),
            "the git index is not locked while the prompt waits"
        );
        // Other git commands work meanwhile.
        git(&d, &["update-index", "-q", "--refresh"]);
        let before = State {
            index: std::fs::read(d.join(".git/index")).unwrap(),
            ..before
        };
        kill(&child, signal);
        let (code, err) = rest(child, rx);
        assert_eq!(code, Some(128 + signal), "{err}");
        assert_eq!(state(&d), before, "signal {signal}");
    }
}

#[test]
fn after_the_answer_a_change_made_during_the_prompt_is_refused() {
    // A file rewritten meanwhile, then HEAD moved meanwhile.
    type Meddle = fn(&Path);
    let meddles: [(&str, Meddle); 2] = [
        ("changed on disk", |d| {
            let p = d.join("apps/keda.yaml");
            let mut b = std::fs::read(&p).unwrap();
            b.extend_from_slice(b"# edited meanwhile\n");
            std::fs::write(p, b).unwrap();
        }),
        ("HEAD moved", |d| {
            git(d, &["commit", "-q", "--allow-empty", "-m", "meanwhile"]);
        }),
    ];
    for (want, meddle) in meddles {
        let (_dir, d) = repo();
        let (child, mut master, rx) = at_the_prompt(&d, &[]);
        meddle(&d);
        let before = state(&d);
        master.write_all(b"y\n").unwrap();
        let (code, err) = rest(child, rx);
        assert_eq!(code, Some(2), "{want}: {err}");
        assert!(
            err.contains(want) && err.contains("nothing written"),
            "{want}: {err}"
        );
        assert_eq!(state(&d), before, "{want}");
    }
}

#[test]
fn answered_yes_the_prompt_run_commits() {
    let (_dir, d) = repo();
    let (child, mut master, rx) = at_the_prompt(&d, &[]);
    master.write_all(b"y\n").unwrap();
    let (code, err) = rest(child, rx);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        git(&d, &["branch", "--show-current"]).trim(),
        "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"
    );
    assert!(!d.join(".git/index.lock").exists());
}

#[test]
fn a_hangup_with_stderr_closed_still_ends_the_run() {
    if !pause_hook("git_signals::a_hangup_with_stderr_closed_still_ends_the_run") {
        return;
    }
    // The terminal is gone: writing the message fails, the exit must not.
    let (_dir, d) = repo();
    let before = state(&d);
    let mut child = paused_at(&d, &APPLY, "locked");
    drop(child.stderr.take());
    kill(&child, SIGHUP);
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("rebind did not end after SIGHUP");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.code(), Some(129));
    assert_eq!(state(&d), before);
}
