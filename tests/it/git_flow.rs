//! The git flow on repositories configured the way real GitOps repositories
//! are: line-ending rules, clean/smudge filters, hidden index flags, stale
//! locks, signing, remotes behind `insteadOf`. Each test runs the built binary
//! and inspects the result with the git command line.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A repository on `main` holding `files`, all committed.
fn small_repo(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    git_init_commit(dir.path());
    dir
}

fn apply(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["apply", "--from", OLD, "--to", NEW, "--yes"];
    args.extend_from_slice(extra);
    rebind(dir, &args)
}

const BRANCH: &str = "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a";

fn app(server: &str) -> String {
    format!("kind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {server}\n  project: default\n")
}

/// Everything a failed run must leave as it was: the work tree's files, HEAD,
/// every ref, the index bytes.
fn state(d: &Path) -> (BTreeMap<String, Vec<u8>>, String, String, Vec<u8>) {
    let mut files = tree(d);
    files.retain(|k, _| !k.starts_with(".git/"));
    (
        files,
        std::fs::read_to_string(d.join(".git/HEAD")).unwrap(),
        git(d, &["for-each-ref"]),
        std::fs::read(d.join(".git/index")).unwrap(),
    )
}

fn assert_nothing_written(d: &Path, before: &(BTreeMap<String, Vec<u8>>, String, String, Vec<u8>)) {
    let after = state(d);
    assert_eq!(after.0, before.0, "work tree unchanged");
    assert_eq!(after.1, before.1, "HEAD unchanged");
    assert_eq!(after.2, before.2, "refs unchanged");
    assert!(after.3 == before.3, "index unchanged");
}

fn refused(d: &Path, extra: &[&str], needle: &str) {
    let before = state(d);
    let out = apply(d, extra);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "wanted {needle:?} in: {err}");
    assert!(err.contains("nothing written"), "{err}");
    assert_nothing_written(d, &before);
    assert!(!d.join(".git/index.lock").exists(), "lock released");
}

/// Finding 1: `core.autocrlf=true` and `text eol=crlf`: the commit holds
/// the normalised (LF) blob, one changed line, and the file shows clean.
#[test]
fn line_ending_rules_commit_what_git_add_would() {
    let crlf = app(OLD).replace('\n', "\r\n");
    for how in ["autocrlf", "attributes"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["config", "user.name", "Rebind Test"]);
        git(d, &["config", "user.email", "test@rebind.invalid"]);
        if how == "autocrlf" {
            git(d, &["config", "core.autocrlf", "true"]);
        } else {
            std::fs::write(d.join(".gitattributes"), "*.yaml text eol=crlf\n").unwrap();
        }
        std::fs::write(d.join("app.yaml"), &crlf).unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "initial"]);
        assert_eq!(
            git(d, &["show", "HEAD:app.yaml"]),
            app(OLD),
            "{how}: stored LF"
        );
        let out = apply(d, &[]);
        assert_eq!(out.status.code(), Some(0), "{how}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(d.join("app.yaml")).unwrap(),
            app(NEW).replace('\n', "\r\n"),
            "{how}: work tree keeps CRLF"
        );
        assert_eq!(
            git(d, &["show", "HEAD:app.yaml"]),
            app(NEW),
            "{how}: stored LF"
        );
        assert_eq!(
            git(d, &["diff", "--numstat", "HEAD~1", "HEAD"]),
            "1\t1\tapp.yaml\n",
            "{how}: one line changed"
        );
        assert_eq!(git(d, &["status", "--porcelain"]), "", "{how}: clean");
    }
}

/// `ident`: the committed blob has `$Id$` collapsed, as `git add` stores it.
#[test]
fn ident_attribute_is_applied() {
    let dir = small_repo(&[
        (".gitattributes", b"*.yaml ident\n"),
        ("app.yaml", format!("# $Id$\n{}", app(OLD)).as_bytes()),
    ]);
    let d = dir.path();
    // Check out again so the work tree holds the expanded `$Id: <sha> $`.
    std::fs::remove_file(d.join("app.yaml")).unwrap();
    git(d, &["checkout", "--", "app.yaml"]);
    assert!(std::fs::read_to_string(d.join("app.yaml"))
        .unwrap()
        .starts_with("# $Id: "));
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(d, &["show", "HEAD:app.yaml"]),
        format!("# $Id$\n{}", app(NEW))
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}

fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            _ => c,
        })
        .collect()
}

/// Finding 1: a clean/smudge filter (the way git-crypt and sops filters
/// work): the commit stores what the clean filter makes, never the
/// plaintext, and `%f` is the file's path.
#[test]
fn external_clean_filter_runs_like_git() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["config", "user.name", "Rebind Test"]);
    git(d, &["config", "user.email", "test@rebind.invalid"]);
    git(
        d,
        &[
            "config",
            "filter.crypt.clean",
            "tr A-Za-z N-ZA-Mn-za-m && echo %f >> .git/cleaned",
        ],
    );
    git(
        d,
        &["config", "filter.crypt.smudge", "tr A-Za-z N-ZA-Mn-za-m"],
    );
    git(d, &["config", "filter.crypt.required", "true"]);
    std::fs::write(d.join(".gitattributes"), "secret/*.yaml filter=crypt\n").unwrap();
    std::fs::create_dir(d.join("secret")).unwrap();
    std::fs::write(d.join("secret/my app.yaml"), app(OLD)).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "initial"]);
    let stored = |rev: &str| {
        let out = Command::new("git")
            .args(["cat-file", "blob", &format!("{rev}:secret/my app.yaml")])
            .current_dir(d)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(stored("HEAD"), rot13(&app(OLD)), "set up encrypted");
    std::fs::remove_file(d.join(".git/cleaned")).unwrap();
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("secret/my app.yaml")).unwrap(),
        app(NEW)
    );
    assert_eq!(
        stored("HEAD"),
        rot13(&app(NEW)),
        "stored through the clean filter"
    );
    assert!(!stored("HEAD").contains(NEW_HOST));
    assert_eq!(
        std::fs::read_to_string(d.join(".git/cleaned"))
            .unwrap()
            .lines()
            .next(),
        Some("secret/my app.yaml"),
        "%f is the path"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}

/// A filter driver rebind cannot run (process-only, like a bare `git lfs`
/// setup) or a failing clean command: refused before anything is written,
/// naming the file and the attribute.
#[test]
fn filters_that_cannot_run_are_refused_before_writing() {
    let dir = small_repo(&[
        (".gitattributes", b"*.yaml filter=lfs\n"),
        ("app.yaml", app(OLD).as_bytes()),
    ]);
    let d = dir.path();
    git(
        d,
        &["config", "filter.lfs.process", "git-lfs filter-process"],
    );
    git(d, &["config", "filter.lfs.required", "true"]);
    refused(d, &[], "app.yaml: has the git attribute filter=lfs");
    git(d, &["config", "--unset", "filter.lfs.process"]);
    git(
        d,
        &["config", "filter.lfs.clean", "echo broken >&2; exit 3"],
    );
    refused(
        d,
        &[],
        "app.yaml: the clean filter of its git attribute filter=lfs",
    );
}

/// Finding 2: a stale index.lock is refused before anything is written, and
/// the lock (not ours) stays.
#[test]
fn stale_index_lock_is_refused_before_writing() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    std::fs::write(d.join(".git/index.lock"), b"").unwrap();
    let before = state(d);
    let out = apply(d, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("index.lock: exists"), "{err}");
    assert_nothing_written(d, &before);
    assert!(
        d.join(".git/index.lock").exists(),
        "someone else's lock is kept"
    );
    std::fs::remove_file(d.join(".git/index.lock")).unwrap();
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}

/// Finding 3: hidden local edits (skip-worktree, assume-unchanged) are
/// refused, each with its own message.
#[test]
fn hidden_index_flags_are_refused() {
    for (flag, needle) in [
        ("--skip-worktree", "is marked skip-worktree"),
        ("--assume-unchanged", "is marked assume-unchanged"),
    ] {
        let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
        let d = dir.path();
        git(d, &["update-index", flag, "app.yaml"]);
        std::fs::write(d.join("app.yaml"), app(OLD) + "local: edit\n").unwrap();
        assert_eq!(git(d, &["status", "--porcelain"]), "", "git hides it");
        refused(d, &[], &format!("app.yaml: {needle}"));
    }
}

/// Finding 4: output paths and the push remote are checked before anything
/// is written (exit 2 keeps meaning nothing written).
#[test]
fn bad_outputs_and_remotes_are_refused_before_writing() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let missing = d.join("no/such/dir/review.md");
    refused(
        d,
        &["--review-out", missing.to_str().unwrap()],
        "--review-out",
    );
    refused(
        d,
        &[
            "--secret-out",
            d.join("no/secret.yaml").to_str().unwrap(),
            "--cluster-name",
            "prod",
        ],
        "--secret-out",
    );
    std::fs::create_dir(d.join("outdir")).unwrap();
    refused(
        d,
        &[
            "--secret-out",
            d.join("outdir").to_str().unwrap(),
            "--cluster-name",
            "prod",
        ],
        "outdir: exists and is not a regular file",
    );
    std::fs::remove_dir(d.join("outdir")).unwrap();
    refused(
        d,
        &["--push", "upstream"],
        "--push upstream: no such remote",
    );
    // --no-commit checks its outputs too.
    refused(
        d,
        &["--no-commit", "--review-out", missing.to_str().unwrap()],
        "--review-out",
    );
}

/// Branch names: one next to an existing branch `a` of `a/b` is refused
/// before writing.
#[test]
fn branch_name_clash_is_refused_before_writing() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    git(d, &["branch", "rebind"]);
    refused(
        d,
        &[],
        "cannot be created next to the existing branch rebind",
    );
}

/// An IPv6 `--to` makes a valid default branch name.
#[test]
fn default_branch_of_an_ipv6_endpoint_is_valid() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            "https://[::1]:6443",
            "--yes",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "rebind/1"
    );
}

/// Writes an executable script.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Finding 5: `commit.gpgsign` with openpgp: gpg.program is called the way
/// git calls it and the commit carries the signature; a failing signer
/// leaves everything as it was (exit 2).
#[test]
fn gpgsign_openpgp_signs_through_gpg_program() {
    let tools = tempfile::tempdir().unwrap();
    let fake = tools.path().join("fake-gpg");
    let args = tools.path().join("args");
    script(
        &fake,
        &format!(
            "#!/bin/sh\necho \"$@\" > '{}'\ncat > /dev/null\necho '[GNUPG:] KEY_CONSIDERED ABC 0' >&2\necho '[GNUPG:] SIG_CREATED D 22 8 00 1 ABC' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'\n",
            args.display()
        ),
    );
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    git(d, &["config", "commit.gpgsign", "true"]);
    git(d, &["config", "gpg.program", fake.to_str().unwrap()]);
    git(d, &["config", "user.signingkey", "ABC123"]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        "--status-fd=2 -bsau ABC123\n"
    );
    let raw = git(d, &["cat-file", "commit", "HEAD"]);
    assert!(
        raw.contains(
            "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n ZmFrZQ==\n -----END PGP SIGNATURE-----\n"
        ),
        "{raw}"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");

    // A signer that fails.
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let broken = tools.path().join("broken-gpg");
    script(
        &broken,
        "#!/bin/sh\necho 'gpg: no secret key' >&2\nexit 2\n",
    );
    git(d, &["config", "commit.gpgsign", "true"]);
    git(d, &["config", "gpg.program", broken.to_str().unwrap()]);
    refused(d, &[], "signing the commit failed");
}

/// Finding 5, ssh format: signed with `ssh-keygen -Y sign` and verified by
/// `git verify-commit` (skipped where ssh-keygen is not installed).
#[test]
fn gpgsign_ssh_signs_with_ssh_keygen() {
    let tools = tempfile::tempdir().unwrap();
    let key = tools.path().join("key");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f"])
        .arg(&key)
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        _ => {
            skip(
                "git_flow::gpgsign_ssh_signs_with_ssh_keygen",
                "ssh-keygen is not installed or cannot make a key",
            );
            return;
        }
    }
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    git(d, &["config", "commit.gpgsign", "true"]);
    git(d, &["config", "gpg.format", "ssh"]);
    git(d, &["config", "user.signingkey", key.to_str().unwrap()]);
    let out = apply(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let signers = tools.path().join("allowed");
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    std::fs::write(
        &signers,
        format!("test@rebind.invalid namespaces=\"git\" {public}"),
    )
    .unwrap();
    let verify = Command::new("git")
        .args([
            "-c",
            &format!("gpg.ssh.allowedSignersFile={}", signers.display()),
        ])
        .args(["verify-commit", "HEAD"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

/// Finding 6: the push runs the system git, so `insteadOf` applies, and it
/// sets the upstream.
#[test]
fn push_goes_through_insteadof_and_sets_upstream() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let remotes = tempfile::tempdir().unwrap();
    let bare = remotes.path().join("gitops.git");
    git(remotes.path(), &["init", "-q", "--bare", "gitops.git"]);
    let base = format!("file://{}/", remotes.path().display());
    git(d, &["config", &format!("url.{base}.insteadOf"), "corp:"]);
    git(d, &["remote", "add", "origin", "corp:gitops.git"]);
    // The index is no longer locked when the push (and its hooks) run.
    script(
        &d.join(".git/hooks/pre-push"),
        "#!/bin/sh
test ! -e .git/index.lock
",
    );
    let out = apply(d, &["--push", "origin"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        git(&bare, &["rev-parse", BRANCH]),
        git(d, &["rev-parse", "HEAD"])
    );
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "@{upstream}"]).trim(),
        format!("origin/{BRANCH}")
    );
}

/// A push that fails after the commit: exit 3, and the message says what
/// exists and how to finish.
#[test]
fn failed_push_after_commit_exits_3_with_the_retry_command() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let gone = d.join("../no-such-remote.git");
    git(d, &["remote", "add", "origin", gone.to_str().unwrap()]);
    let outs = tempfile::tempdir().unwrap();
    let review = outs.path().join("review.md");
    let out = apply(
        d,
        &["--push", "origin", "--review-out", review.to_str().unwrap()],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        std::fs::read_to_string(&review).unwrap().contains(BRANCH),
        "outputs are written before the push"
    );
    let head = git(d, &["rev-parse", "HEAD"]);
    assert!(err.contains(head.trim()), "{err}");
    assert!(
        err.contains(&format!("git push --set-upstream origin {BRANCH}")),
        "{err}"
    );
    assert_eq!(
        git(d, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        BRANCH
    );
    assert_eq!(
        std::fs::read_to_string(d.join("app.yaml")).unwrap(),
        app(NEW)
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}

/// Finding 7: a gitignored untracked target has its own message.
#[test]
fn ignored_untracked_target_has_its_own_message() {
    let dir = small_repo(&[
        (".gitignore", b"local.yaml\n"),
        ("app.yaml", app(OLD).as_bytes()),
    ]);
    let d = dir.path();
    std::fs::write(d.join("local.yaml"), app(OLD)).unwrap();
    let mut args = vec!["apply", "--from", OLD, "--to", NEW, "--yes"];
    args.push("local.yaml");
    let before = state(d);
    let out = rebind(d, &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("local.yaml: is not tracked by git and is ignored"),
        "{err}"
    );
    assert_nothing_written(d, &before);
}

/// Finding 7: a target inside a submodule.
#[test]
fn target_in_a_submodule_is_refused_by_name() {
    let sub = small_repo(&[("inner.yaml", app(OLD).as_bytes())]);
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    git(
        d,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.path().to_str().unwrap(),
            "vendor/sub",
        ],
    );
    git(d, &["commit", "-q", "-m", "submodule"]);
    let before = state(d);
    let out = apply(d, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("inner.yaml") && err.contains("submodule"),
        "{err}"
    );
    assert!(!err.contains("class="), "no raw libgit2 error: {err}");
    assert_nothing_written(d, &before);
}

/// Finding 7: a split index gets a clear message.
#[test]
fn split_index_has_a_clear_message() {
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    git(d, &["update-index", "--split-index"]);
    refused(d, &[], "git update-index --no-split-index");
}

/// Finding 7: a non-UTF-8 file name is committed under its own name.
#[cfg(target_os = "linux")]
#[test]
fn non_utf8_file_name_is_committed() {
    use std::os::unix::ffi::OsStrExt;
    let dir = small_repo(&[("app.yaml", app(OLD).as_bytes())]);
    let d = dir.path();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.yaml");
    std::fs::write(d.join(name), app(OLD)).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "latin-1 name"]);
    let out = apply(d, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(d.join(name)).unwrap(), app(NEW).as_bytes());
    let show = Command::new("git")
        .args(["cat-file", "blob"])
        .arg(std::ffi::OsStr::from_bytes(b"HEAD:caf\xe9.yaml"))
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(show.stdout, app(NEW).as_bytes());
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}
