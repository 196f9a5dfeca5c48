//! Helpers shared by the integration tests: temporary copies of the fixture
//! repo and running the built binary.
#![allow(dead_code)]

pub mod libyaml;
pub mod oracle;
pub mod patch;
pub mod snap;

pub use snap::{check, normalise};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const OLD: &str =
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
pub const OLD_HOST: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
pub const NEW: &str =
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
pub const NEW_HOST: &str = "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
pub const STAGE: &str =
    "https://A1B2C3D4E5F60718293A4B5C6D7E8F90.yl4.ap-northeast-2.eks.amazonaws.com";

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/app-of-apps")
}

/// Copies the tree `from` into `to` (created), files and directories only.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Copies the shipped example into `to` as a working tree holds it: with
/// the gitignored, untracked `build/` a build leaves there
/// (`testdata/worktree-only`).
pub fn copy_fixture(to: &Path) {
    copy_dir(&fixture(), to);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/worktree-only/build"),
        &to.join("build"),
    );
}

/// A temporary copy of `testdata/app-of-apps` ([`copy_fixture`]); the
/// directory is `dir.path()`.
pub fn temp_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    dir
}

/// The `rebind` binary under test (for a `PATH` or a script that runs it).
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_rebind"))
}

/// The one way a test starts the `rebind` binary: no colour (`NO_COLOR=1`)
/// and no stdin, which a test may override (`env_remove`, `stdin`) before
/// adding its arguments, directory and pipes.
pub fn command() -> Command {
    let mut c = Command::new(binary());
    c.env("NO_COLOR", "1").stdin(Stdio::null());
    c
}

/// Runs `rebind ARGS` in `cwd` with no stdin and no colour.
pub fn rebind(cwd: &Path, args: &[&str]) -> Output {
    command()
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Every file under `root` with its bytes, keyed by `/`-separated relative path.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                go(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    go(root, root, &mut out);
    out
}

/// Compares two versions of a file and returns how many endpoint swaps turn
/// `old` into `new`, or a description of the first other difference.
/// A swap is `https://OLD_HOST[:443]` -> `https://NEW_HOST`, or a bare
/// `OLD_HOST` -> `NEW_HOST` (host compared case-insensitively).
pub fn endpoint_swaps(old: &[u8], new: &[u8]) -> Result<usize, String> {
    let (mut i, mut j, mut swaps) = (0, 0, 0);
    let lower_old = old.to_ascii_lowercase();
    let old_host = OLD_HOST.to_ascii_lowercase();
    while i < old.len() || j < new.len() {
        let url = format!("https://{old_host}");
        let at_old_url = lower_old[i..].starts_with(url.as_bytes());
        let at_old_bare = lower_old[i..].starts_with(old_host.as_bytes());
        let new_url = format!("https://{NEW_HOST}");
        if at_old_url && new[j..].starts_with(new_url.as_bytes()) {
            i += url.len();
            if old[i..].starts_with(b":443") {
                i += 4;
            }
            j += new_url.len();
            swaps += 1;
        } else if at_old_bare && new[j..].starts_with(NEW_HOST.as_bytes()) {
            i += old_host.len();
            j += NEW_HOST.len();
            swaps += 1;
        } else if i < old.len() && j < new.len() && old[i] == new[j] {
            i += 1;
            j += 1;
        } else {
            return Err(format!("bytes differ at old offset {i}, new offset {j}"));
        }
    }
    Ok(swaps)
}

/// Runs git in `dir` and returns its stdout; fails the test on an error.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Makes `dir` a git repository on `main` with everything committed, and a
/// local identity for the commits rebind makes there.
pub fn git_init_commit(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Rebind Test"]);
    git(dir, &["config", "user.email", "test@rebind.invalid"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
}

/// Marks the calling test as not run in this environment, visibly: the
/// reason goes to stderr and is appended to `skipped.txt` in Cargo's
/// temporary directory for tests, which `.ci/run` counts and prints. A test
/// calls it and returns; it never passes silently.
pub fn skip(test: &str, reason: &str) {
    use std::io::Write;
    eprintln!("skipped: {test}: {reason}");
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "{test}: {reason}");
    }
}

/// Standard base64 (with padding), written here so the tests do not check
/// rebind's codec with itself.
pub fn base64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                A[((n >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// Writes an executable script (a stub client, a hook).
#[cfg(unix)]
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Where `tool` is on the test's own PATH.
pub fn which(tool: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Every call a stub client logged in `log` (numbered from 1: `N.args`,
/// NUL-separated, and `N.stdin`): its program and arguments, and what it
/// read on standard input.
pub fn stub_calls(log: &Path) -> Vec<(Vec<String>, String)> {
    let n: usize = std::fs::read_to_string(log.join("count"))
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(0);
    (1..=n)
        .map(|i| {
            let raw = std::fs::read(log.join(format!("{i}.args"))).unwrap();
            let args = String::from_utf8(raw)
                .unwrap()
                .split_terminator('\0')
                .map(str::to_string)
                .collect();
            let stdin = std::fs::read_to_string(log.join(format!("{i}.stdin"))).unwrap();
            (args, stdin)
        })
        .collect()
}
