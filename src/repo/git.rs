//! The git flow of `apply`: checks that the repository can take the change,
//! commits only the rewritten files on a new branch made from HEAD, switches
//! the working tree to it like `git switch -c`, and optionally pushes.
//!
//! Rules it keeps:
//! - Everything that can fail is checked before the first byte changes
//!   ([`Repo::prepare`]): a free index lock (then held until done), target
//!   files clean and plainly tracked (not skip-worktree, assume-unchanged,
//!   ignored, untracked or in a submodule), an identity, a valid free branch
//!   name, a push remote that exists, output paths that can be created, and
//!   the blobs and signed commit themselves.
//! - The committed blob of each file is what `git add` would store: libgit2's
//!   filters (`text`, `eol`, `core.autocrlf`, `ident`) run on the new bytes,
//!   and an external `filter=<driver>` runs its `filter.<driver>.clean`
//!   command as git does, or the run is refused.
//! - The commit is built from HEAD's tree plus the new blobs; the index keeps
//!   every other entry (staged work stays staged) and gets the new entries.
//!   One new file may be added beside the rewritten ones (the full review of
//!   a pull request whose body is cut, [`Repo::prepare_adding`]): it must not
//!   exist anywhere (HEAD, index, working tree), and is created and removed
//!   with the rest, all or nothing.
//! - A failure after the first write restores HEAD, branches, index and
//!   working tree; a failure after the commit is in place (the push) is an
//!   [`AfterCommit`] error, which the command reports with exit code 3.

use crate::edit::rewrite::FilePlan;
use anyhow::{anyhow, bail, Context, Result};
use git2::{AttrCheckFlags, AttrValue, BranchType, ErrorCode, Oid, Repository, Signature, Status};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A failure after the commit and branch were made: the working tree, HEAD,
/// branch and index hold the change; only what follows (the push) is missing.
#[derive(Debug, Clone)]
pub struct AfterCommit {
    pub branch: String,
    pub commit: String,
    /// The command that finishes the job.
    pub retry: String,
    /// What failed.
    pub cause: String,
    /// Whether the branch is pushed (only the pull request is left).
    pub pushed: bool,
    /// Its stable code (`push-failed`, `pull-request-failed`,
    /// `output-failed`: see `output::codes`).
    pub code: &'static str,
}

impl std::fmt::Display for AfterCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; the files are rewritten and committed as {} on branch {} (checked out); to finish, run:\n  {}",
            self.cause, self.commit, self.branch, self.retry
        )
    }
}

impl std::error::Error for AfterCommit {}

/// An open repository and its work tree (canonical path).
pub struct Repo {
    repo: Repository,
    workdir: PathBuf,
}

/// A file we created (`.git/index.lock`, a key file), removed when dropped
/// (and by a signal that ends the run before its first write).
pub struct RemoveOnDrop {
    path: PathBuf,
}

impl RemoveOnDrop {
    /// Creates `path` (it must not exist) with `bytes`.
    fn create_new(path: PathBuf, bytes: &[u8]) -> std::io::Result<RemoveOnDrop> {
        crate::sys::signals::create(&path, || {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?
                .write_all(bytes)
        })?;
        Ok(RemoveOnDrop { path })
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        crate::sys::signals::remove(&self.path);
    }
}

/// What the checks before writing established.
pub struct Prepared {
    pub branch: String,
    /// Each plan's path relative to the work tree.
    rel_paths: Vec<PathBuf>,
    /// What `git add` would store for each plan's new bytes.
    blobs: Vec<Oid>,
    head: Oid,
    /// The branch HEAD points at (`refs/heads/...`), `None` when detached.
    head_ref: Option<String>,
    /// The new file the commit adds, if any.
    added: Option<Added>,
    /// The branch exists and already holds exactly this change.
    pub already_done: Option<Oid>,
    /// Held from the checks until the new index is in place.
    lock: std::cell::RefCell<Option<RemoveOnDrop>>,
}

impl Prepared {
    /// Releases the index lock [`Repo::lock_and_recheck`] took, if held.
    pub fn release(&self) {
        self.lock.borrow_mut().take();
    }
}

/// A new file the commit adds beside the rewritten ones.
struct Added {
    /// Relative to the work tree.
    rel: PathBuf,
    bytes: String,
    blob: Oid,
}

/// The outcome of committing.
pub struct Committed {
    pub branch: String,
    pub commit: String,
    pub pushed_to: Option<String>,
}

/// The steps of [`commit_flow`] after the first write, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The rewritten files are in the working tree.
    Write,
    /// The new index is written beside the old one.
    Stage,
    /// The branch exists.
    Branch,
    /// HEAD points at the branch.
    Head,
    /// The new index replaced the old one.
    Index,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::Write,
        Step::Stage,
        Step::Branch,
        Step::Head,
        Step::Index,
    ];
}

/// Faults to inject into [`commit_flow_with`] (tests); the default injects none.
#[derive(Default, Clone, Copy)]
pub struct Faults {
    /// Fail right after this step completed.
    pub fail_after: Option<Step>,
}

/// Refusal for a lock file that exists.
fn lock_held(path: &Path) -> anyhow::Error {
    anyhow!(
        "{}: exists: another git or rebind process seems to be running in this repository, or one crashed; if none is running, remove that file and run rebind again; nothing written",
        path.display()
    )
}

/// Takes the lock file `path` (create, exclusive) guarding `what`.
pub fn lock_file(path: PathBuf, what: &str) -> Result<RemoveOnDrop> {
    match RemoveOnDrop::create_new(path.clone(), b"") {
        Ok(l) => Ok(l),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(lock_held(&path)),
        Err(e) => Err(anyhow!(e).context(format!(
            "{}: cannot lock {what}; nothing written",
            path.display()
        ))),
    }
}

/// The lock an `apply --no-commit` run holds while it writes: the git index
/// lock of the repository holding `start` (the one the git flow takes), else
/// `.rebind.lock` in `start` itself. Two runs on the same tree never write at
/// once; the second one refuses, or finds the files changed since it
/// planned them and refuses then.
pub fn lock_tree(start: &Path) -> Result<RemoveOnDrop> {
    match open(start) {
        Ok(Some(repo)) => repo.lock_index(),
        _ => {
            let dir = if start.as_os_str().is_empty() {
                Path::new(".")
            } else {
                start
            };
            let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            lock_file(dir.join(".rebind.lock"), "the tree")
        }
    }
}

/// A work-tree-relative path as git spells it: bytes, `/`-separated.
fn rel_key(rel: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        rel.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        rel.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where the repository holding `path` lives, as git finds it from `path`
/// alone (no `GIT_DIR`): its work tree, or its git directory when it is
/// bare. `None` outside any. For questions about a place (is a file inside
/// a repository?); [`open`] is for working in one.
pub fn enclosing(path: &Path) -> Option<PathBuf> {
    let repo = Repository::discover(path).ok()?;
    // Without the trailing `/` git2 gives it.
    Some(repo.workdir().unwrap_or(repo.path()).components().collect())
}

/// The work tree of the repository holding `path` (`None` outside any, or
/// for a bare repository).
pub fn enclosing_work_tree(path: &Path) -> Option<PathBuf> {
    let repo = Repository::discover(path).ok()?;
    repo.workdir().map(|w| w.components().collect())
}

/// Opens the repository holding `path`, or `None` when it is in none. Like
/// git, `GIT_DIR` names the repository (then the work tree is `GIT_WORK_TREE`,
/// else `core.worktree`, else the current directory) and `GIT_WORK_TREE`
/// names the work tree.
pub fn open(path: &Path) -> Result<Option<Repo>> {
    let cannot = |e: git2::Error| {
        anyhow!(e).context(format!("{}: cannot open git repository", path.display()))
    };
    let git_dir = env_path("GIT_DIR");
    let work_tree = env_path("GIT_WORK_TREE");
    let repo = match &git_dir {
        Some(dir) => Repository::open_ext(
            dir,
            git2::RepositoryOpenFlags::NO_SEARCH | git2::RepositoryOpenFlags::NO_DOTGIT,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map_err(|e| {
            anyhow!(e).context(format!(
                "GIT_DIR={}: cannot open git repository",
                dir.display()
            ))
        })?,
        None => match Repository::discover(path) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(cannot(e)),
        },
    };
    let set_workdir = |repo: &Repository, dir: &Path| -> Result<()> {
        repo.set_workdir(dir, false).map_err(|e| {
            anyhow!(e).context(format!("{}: cannot use it as the work tree", dir.display()))
        })
    };
    if let Some(wt) = &work_tree {
        set_workdir(&repo, wt)?;
    } else if git_dir.is_some()
        && repo
            .config()
            .ok()
            .and_then(|c| c.get_path("core.worktree").ok())
            .is_none()
    {
        set_workdir(&repo, &std::env::current_dir()?)?;
    }
    let Some(workdir) = repo.workdir() else {
        bail!(
            "{}: is in a bare git repository; nothing to rewrite",
            path.display()
        );
    };
    let workdir = workdir.canonicalize()?;
    if git_dir.is_some() || work_tree.is_some() {
        let inside = path.canonicalize().is_ok_and(|p| p.starts_with(&workdir));
        if !inside {
            bail!(
                "{}: lies outside the git work tree {} (GIT_DIR / GIT_WORK_TREE); nothing written",
                path.display(),
                workdir.display()
            );
        }
    }
    Ok(Some(Repo { repo, workdir }))
}

/// Default branch name: `rebind/<label>`, where the label is the first DNS
/// label of the new host, lower-case (an IP address is kept whole), cut down
/// to characters that are always valid in a branch name.
pub fn default_branch(new_host: &str) -> String {
    let host = new_host.trim_start_matches('[').trim_end_matches(']');
    let host = host.to_ascii_lowercase();
    let label = if host.parse::<std::net::IpAddr>().is_ok() {
        host.as_str()
    } else {
        host.split('.').next().unwrap_or(&host)
    };
    let mut clean = String::new();
    for c in label.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            c
        } else {
            '-'
        };
        if (c == '-' && clean.ends_with('-')) || (c == '.' && clean.ends_with('.')) {
            continue;
        }
        clean.push(c);
    }
    let clean = clean.trim_matches(|c| c == '-' || c == '.');
    let name = format!("rebind/{clean}");
    if clean.is_empty()
        || name.ends_with(".lock")
        || !git2::Branch::name_is_valid(&name).unwrap_or(false)
    {
        "rebind/endpoint".to_string()
    } else {
        name
    }
}

fn env_or(var: &str, fallback: Option<String>) -> Option<String> {
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .or(fallback)
}

/// `'s'` quoted for `sh`, as git quotes `%f`.
pub(crate) fn sq_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `cmd` with `input` on stdin; returns stdout, or what went wrong.
pub(crate) fn run_filter(
    cmd: Command,
    input: &[u8],
) -> std::result::Result<(Vec<u8>, Vec<u8>), String> {
    run_process(cmd, input, false).map_err(|e| match e {
        Ran::Failed(m) => m,
        Ran::Interrupted(i) => i.to_string(),
    })
}

/// Why a process run by [`run_process`] gave no output.
#[derive(Debug)]
pub(crate) enum Ran {
    /// It could not start, or exited unsuccessfully (its status and stderr).
    Failed(String),
    /// A signal asked the run to stop while it ran: it was killed.
    Interrupted(crate::sys::signals::Interrupted),
}

/// Runs `cmd` with `input` on its standard input; its standard output and
/// error. With `on_signal`, a SIGINT/SIGTERM/SIGHUP received while it runs
/// (or that ended it, as Ctrl-C ends a terminal's process group) kills it
/// and is the answer: a client that hangs never holds the run.
pub(crate) fn run_process(
    mut cmd: Command,
    input: &[u8],
    on_signal: bool,
) -> std::result::Result<(Vec<u8>, Vec<u8>), Ran> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Ran::Failed(format!("cannot start it: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut err = Vec::new();
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let _ = stderr.read_to_end(&mut err);
        err
    });
    let mut stdout = child.stdout.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).map(|_| out)
    });
    let stopped = || match crate::sys::signals::check() {
        Err(stop) if on_signal => Some(stop),
        _ => None,
    };
    let status = if on_signal {
        loop {
            if let Some(status) = child.try_wait().map_err(|e| Ran::Failed(e.to_string()))? {
                break status;
            }
            if let Some(stop) = stopped() {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Ran::Interrupted(stop));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    } else {
        child.wait().map_err(|e| Ran::Failed(e.to_string()))?
    };
    let _ = feeder.join();
    let err = reader.join().unwrap_or_default();
    let out = out_reader
        .join()
        .unwrap_or_else(|_| Ok(Vec::new()))
        .map_err(|e| Ran::Failed(e.to_string()))?;
    if let Some(stop) = stopped() {
        return Err(Ran::Interrupted(stop));
    }
    if !status.success() {
        let msg = String::from_utf8_lossy(&err).trim().to_string();
        return Err(Ran::Failed(format!(
            "{status}{}",
            if msg.is_empty() {
                String::new()
            } else {
                format!(": {msg}")
            }
        )));
    }
    Ok((out, err))
}

impl Repo {
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Whether a local branch `name` exists.
    pub fn has_branch(&self, name: &str) -> bool {
        self.repo.find_branch(name, BranchType::Local).is_ok()
    }

    /// The branch HEAD is on (`main`, not `refs/heads/main`); `None` when
    /// HEAD is detached or unborn.
    pub fn head_branch(&self) -> Option<String> {
        if self.repo.head_detached().unwrap_or(true) {
            return None;
        }
        let head = self.repo.head().ok()?;
        head.shorthand().ok().map(str::to_string)
    }

    /// The repository's git directory (`.git`, or a worktree's).
    pub fn git_dir(&self) -> &Path {
        self.repo.path()
    }

    /// The URLs that name where `remote` pushes, most telling first: the
    /// push URL and the URL with `pushInsteadOf`/`insteadOf` applied (what
    /// git connects to), then both as configured (the host the user named,
    /// when a rewrite points elsewhere, a mirror or a local path). No
    /// duplicates; empty when there is no such remote.
    pub fn push_urls(&self, remote: &str) -> Vec<String> {
        let mut urls = Vec::new();
        if let Ok(r) = self.repo.find_remote(remote) {
            urls.extend(r.pushurl().ok().flatten().map(str::to_string));
            urls.extend(r.url().ok().map(str::to_string));
        }
        for key in ["pushurl", "url"] {
            urls.extend(self.config_string(&format!("remote.{remote}.{key}")));
        }
        let mut seen = std::collections::HashSet::new();
        urls.retain(|u| !u.is_empty() && seen.insert(u.clone()));
        urls
    }

    fn rel(&self, path: &Path) -> Result<PathBuf> {
        let abs = path
            .canonicalize()
            .with_context(|| format!("{}: cannot resolve", path.display()))?;
        let rel = abs.strip_prefix(&self.workdir).map_err(|_| {
            anyhow!(
                "{}: lies outside the git work tree {}",
                path.display(),
                self.workdir.display()
            )
        })?;
        Ok(rel.to_path_buf())
    }

    /// The submodule (or nested repository) directory holding `rel`, if any.
    fn enclosing_submodule(&self, rel: &Path) -> Option<PathBuf> {
        let mut dir = rel.parent();
        while let Some(d) = dir {
            if d.as_os_str().is_empty() {
                break;
            }
            if self.workdir.join(d).join(".git").exists() {
                return Some(d.to_path_buf());
            }
            dir = d.parent();
        }
        None
    }

    /// Author and committer from `GIT_AUTHOR_*` / `GIT_COMMITTER_*`, else `user.name` / `user.email`.
    pub fn identities(&self) -> Result<(Signature<'static>, Signature<'static>)> {
        let cfg = self.repo.config().ok();
        let get = |k: &str| cfg.as_ref().and_then(|c| c.get_string(k).ok());
        let (name, email) = (get("user.name"), get("user.email"));
        let make = |who: &str| -> Result<Signature<'static>> {
            let n = env_or(&format!("GIT_{who}_NAME"), name.clone());
            let e = env_or(&format!("GIT_{who}_EMAIL"), email.clone());
            match (n, e) {
                (Some(n), Some(e)) => Ok(Signature::now(&n, &e)?),
                _ => bail!(
                    "no git identity to commit with: set it with\n  git config user.name \"Your Name\"\n  git config user.email you@example.com\nor set GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL and GIT_COMMITTER_NAME/GIT_COMMITTER_EMAIL; nothing written"
                ),
            }
        };
        Ok((make("AUTHOR")?, make("COMMITTER")?))
    }

    fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config()
            .ok()
            .and_then(|c| c.get_string(key).ok())
            .filter(|v| !v.is_empty())
    }

    fn config_bool(&self, key: &str) -> bool {
        self.repo
            .config()
            .ok()
            .and_then(|c| c.get_bool(key).ok())
            .unwrap_or(false)
    }

    /// Takes `.git/index.lock` the way git does (create, exclusive).
    pub fn lock_index(&self) -> Result<RemoveOnDrop> {
        lock_file(self.repo.path().join("index.lock"), "the git index")
    }

    /// Refuses early when another process holds `.git/index.lock` (the lock
    /// itself is taken after the prompt, by [`commit_flow`]).
    fn check_index_unlocked(&self) -> Result<()> {
        let path = self.repo.path().join("index.lock");
        if path.exists() {
            return Err(lock_held(&path));
        }
        Ok(())
    }

    fn index_error(&self, e: git2::Error) -> anyhow::Error {
        let split = self
            .repo
            .config()
            .ok()
            .and_then(|c| c.get_bool("core.splitIndex").ok())
            .unwrap_or(false);
        let msg = e.message().to_string();
        if split || msg.contains("'link'") {
            anyhow!(
                "the git index is split (core.splitIndex / `git update-index --split-index`), which rebind cannot read; run `git update-index --no-split-index` (and `git config core.splitIndex false`) first, or pass --no-commit; nothing written ({msg})"
            )
        } else if msg.contains("extension") {
            anyhow!(
                "the git index uses an extension rebind cannot read (a sparse index?); run `git sparse-checkout disable` or `git update-index --index-version 2`, or pass --no-commit; nothing written ({msg})"
            )
        } else {
            anyhow!(e).context("cannot read the git index; nothing written")
        }
    }

    /// Every check that can fail before a byte is written. `outputs` are the
    /// other files the run will write (`--review-out`, `--secret-out`), named
    /// by their flag; `push` the remote to push to.
    pub fn prepare(
        &self,
        plans: &[FilePlan],
        branch: Option<&str>,
        default: &str,
        push: Option<&str>,
        outputs: &[(&str, &Path)],
    ) -> Result<Prepared> {
        self.prepare_adding(plans, None, branch, default, push, outputs)
    }

    /// [`Repo::prepare`], with `added` (a path relative to the work tree
    /// and its bytes) a new file the commit adds: refused when that path
    /// exists in HEAD, the index or the working tree.
    pub fn prepare_adding(
        &self,
        plans: &[FilePlan],
        added: Option<(&Path, &str)>,
        branch: Option<&str>,
        default: &str,
        push: Option<&str>,
        outputs: &[(&str, &Path)],
    ) -> Result<Prepared> {
        self.check_no_operation()?;
        let (head, head_ref) = self.head_to_branch_from(branch.is_some())?;
        let branch = branch.unwrap_or(default).to_string();
        if !git2::Branch::name_is_valid(&branch)? {
            bail!("--branch {branch:?}: not a valid branch name; nothing written");
        }
        self.check_branch_names(&branch)?;
        let rel_paths = self.committable_paths(plans)?;
        self.check_index_unlocked()?;
        self.check_targets(&rel_paths)?;
        self.identities()?;
        let blobs = plans
            .iter()
            .zip(&rel_paths)
            .map(|(p, rel)| self.staged_blob(rel, p.new.as_bytes()))
            .collect::<Result<Vec<_>>>()?;
        if let Some(remote) = push {
            self.check_remote(remote)?;
        }
        for (flag, path) in outputs {
            crate::edit::write::check_creatable(flag, path)?;
        }
        let added = match added {
            Some((rel, bytes)) => Some(self.check_added(rel, bytes, head)?),
            None => None,
        };
        let already_done =
            self.already_done(&branch, &rel_paths, &blobs, added.as_ref(), head, push)?;
        Ok(Prepared {
            branch,
            rel_paths,
            blobs,
            head,
            head_ref,
            added,
            already_done,
            lock: std::cell::RefCell::new(None),
        })
    }

    /// The commit HEAD points at, and the name of its branch (`None` when
    /// detached, allowed only when the branch to create is `named`).
    fn head_to_branch_from(&self, named: bool) -> Result<(Oid, Option<String>)> {
        let head = match self.repo.head() {
            Ok(h) => h,
            Err(e) if e.code() == ErrorCode::UnbornBranch => {
                bail!("the git repository has no commits yet; commit first or pass --no-commit; nothing written")
            }
            Err(e) => return Err(anyhow!(e).context("cannot read HEAD")),
        };
        let detached = self.repo.head_detached()?;
        if detached && !named {
            bail!("HEAD is detached; pass --branch NAME to say which branch to create, or --no-commit; nothing written");
        }
        let head_ref = if detached {
            None
        } else {
            head.name().ok().map(str::to_string)
        };
        Ok((head.peel_to_commit()?.id(), head_ref))
    }

    /// The planned files' paths in the repository; refused when one is
    /// inside a submodule (or a nested repository), which a commit here
    /// cannot change.
    fn committable_paths(&self, plans: &[FilePlan]) -> Result<Vec<PathBuf>> {
        let rel_paths = plans
            .iter()
            .map(|p| self.rel(&p.path))
            .collect::<Result<Vec<_>>>()?;
        for rel in &rel_paths {
            if let Some(sub) = self.enclosing_submodule(rel) {
                bail!(
                    "{}: is inside the submodule (or nested repository) {}; a commit here cannot change it: run rebind in {} itself, or pass paths that leave it out; nothing written",
                    rel.display(),
                    sub.display(),
                    sub.display()
                );
            }
        }
        Ok(rel_paths)
    }

    /// The new file to add at `rel`, its blob stored; refused when `rel`
    /// is anything already (in HEAD, the index or the working tree), or in
    /// a submodule.
    fn check_added(&self, rel: &Path, bytes: &str, head: Oid) -> Result<Added> {
        let shown = rel.display();
        let in_head = self.repo.find_commit(head)?.tree()?.get_path(rel).is_ok();
        let in_index = self
            .repo
            .index()
            .map_err(|e| self.index_error(e))?
            .get_path(rel, 0)
            .is_some();
        let on_disk = std::fs::symlink_metadata(self.workdir.join(rel)).is_ok();
        if in_head || in_index || on_disk || self.enclosing_submodule(rel).is_some() {
            bail!("{shown}: already exists; rebind commits the full review of the pull request there and never replaces a file: remove it, or pass --branch NAME; nothing written");
        }
        let blob = self.staged_blob(rel, bytes.as_bytes())?;
        Ok(Added {
            rel: rel.to_path_buf(),
            bytes: bytes.to_string(),
            blob,
        })
    }

    /// Refuses a `--push` remote the repository does not have.
    pub fn check_remote(&self, remote: &str) -> Result<()> {
        if self.repo.find_remote(remote).is_ok() {
            return Ok(());
        }
        let known = self.repo.remotes()?;
        let known: Vec<&str> = known.iter().flatten().flatten().collect();
        bail!(
            "--push {remote}: no such remote (this repository has {}); nothing written",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        );
    }

    /// The tip of `branch`, the branch to create, when it already exists
    /// and holds exactly this change (`blobs` at `rel_paths`) made from
    /// `head` (an earlier run that stopped after its commit); refused when
    /// it holds something else.
    fn already_done(
        &self,
        branch: &str,
        rel_paths: &[PathBuf],
        blobs: &[Oid],
        added: Option<&Added>,
        head: Oid,
        push: Option<&str>,
    ) -> Result<Option<Oid>> {
        let Ok(existing) = self.repo.find_branch(branch, BranchType::Local) else {
            return Ok(None);
        };
        let tip = existing.get().peel_to_commit()?;
        let want = self.tree_for(rel_paths, blobs, added, head)?;
        // An earlier run that added no file (one without `--pr`) made the
        // same change too.
        let bare = match added {
            Some(_) => Some(self.tree_for(rel_paths, blobs, None, head)?),
            None => None,
        };
        let same = tip.tree_id() == want || Some(tip.tree_id()) == bare;
        if same && tip.parent_ids().any(|p| p == head) {
            return Ok(Some(tip.id()));
        }
        let subject = tip.summary().ok().flatten().unwrap_or("").to_string();
        let parent = tip
            .parent_ids()
            .next()
            .map_or("no parent".to_string(), |p| format!("made from {p}"));
        let push_hint = push
            .map(|r| format!(" push it with `{}`,", push_retry(r, branch)))
            .unwrap_or_default();
        bail!(
            "branch {branch} already exists and holds something else than this change made from HEAD {head}: its tip is {} (\"{subject}\", {parent}); if it is this change made by an earlier run from another commit,{push_hint} review it with `git log -p {branch}`, or switch to it and run rebind again; otherwise pass --branch NAME or delete it; nothing written",
            tip.id()
        );
    }

    /// Takes the index lock (held until the new index is in place) and checks
    /// again what may have changed since [`Repo::prepare`] (the prompt holds
    /// no lock): no git operation started, HEAD and its branch, the targets'
    /// status and bytes, the branch to create.
    pub fn lock_and_recheck(&self, prep: &Prepared, plans: &[FilePlan]) -> Result<()> {
        if prep.lock.borrow().is_some() {
            return Ok(());
        }
        let lock = self.lock_index()?;
        self.check_no_operation()?;
        let moved = || {
            anyhow!(
                "HEAD moved since rebind planned the change (it was {} on {}); run rebind again; nothing written",
                prep.head,
                prep.head_ref.as_deref().unwrap_or("a detached HEAD")
            )
        };
        let head = self.repo.head().map_err(|_| moved())?;
        let head_ref = if self.repo.head_detached()? {
            None
        } else {
            head.name().ok().map(str::to_string)
        };
        if head.peel_to_commit()?.id() != prep.head || head_ref != prep.head_ref {
            return Err(moved());
        }
        for p in plans {
            let same = std::fs::read(&p.path).is_ok_and(|b| b == p.old.as_bytes());
            if !same {
                bail!(
                    "{}: changed on disk since it was planned; run rebind again; nothing written",
                    p.rel
                );
            }
        }
        self.check_targets(&prep.rel_paths)?;
        if let Some(a) = &prep.added {
            if std::fs::symlink_metadata(self.workdir.join(&a.rel)).is_ok() {
                bail!(
                    "{}: was created since rebind planned the change; run rebind again; nothing written",
                    a.rel.display()
                );
            }
        }
        let exists = self
            .repo
            .find_branch(&prep.branch, BranchType::Local)
            .is_ok();
        if exists != prep.already_done.is_some() {
            bail!(
                "branch {} was created or deleted since rebind planned the change; run rebind again; nothing written",
                prep.branch
            );
        }
        *prep.lock.borrow_mut() = Some(lock);
        Ok(())
    }

    /// Refuses while git is in the middle of an operation (merge, rebase,
    /// cherry-pick, revert, bisect, am) or the index has unmerged entries: a
    /// branch switched to and a commit made then would land where the
    /// operation put HEAD (mid-rebase: on the branch being rebased).
    fn check_no_operation(&self) -> Result<()> {
        use git2::RepositoryState as S;
        let (what, finish) = match self.repo.state() {
            S::Clean => ("", ""),
            S::Merge => ("a merge", "`git merge --continue` (after resolving) or `git merge --abort`"),
            S::Revert | S::RevertSequence => ("a revert", "`git revert --continue` or `git revert --abort`"),
            S::CherryPick | S::CherryPickSequence => (
                "a cherry-pick",
                "`git cherry-pick --continue` or `git cherry-pick --abort`",
            ),
            S::Bisect => ("a bisect", "`git bisect reset`"),
            S::Rebase | S::RebaseInteractive | S::RebaseMerge => {
                ("a rebase", "`git rebase --continue` or `git rebase --abort`")
            }
            S::ApplyMailbox => ("`git am`", "`git am --continue` or `git am --abort`"),
            S::ApplyMailboxOrRebase => (
                "`git am` or a rebase",
                "`git am --continue` / `git am --abort`, or `git rebase --continue` / `git rebase --abort`",
            ),
        };
        if !what.is_empty() {
            bail!(
                "git is in the middle of {what} in {}; finish it with {finish} (`git status` shows where it stands), then run rebind again; nothing written",
                self.workdir.display()
            );
        }
        let index = self.repo.index().map_err(|e| self.index_error(e))?;
        if index.has_conflicts() {
            let mut paths: Vec<String> = index
                .conflicts()?
                .filter_map(|c| c.ok())
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            paths.dedup();
            bail!(
                "the git index has unmerged entries (a conflict not yet resolved): {}; resolve them and `git add` them (or `git reset --merge`), then run rebind again; nothing written",
                paths.join(", ")
            );
        }
        Ok(())
    }

    /// Checks that every target is plainly tracked and unchanged from HEAD:
    /// not skip-worktree, assume-unchanged, ignored, untracked or modified.
    /// One status pass for all targets.
    fn check_targets(&self, rel_paths: &[PathBuf]) -> Result<()> {
        let index = self.repo.index().map_err(|e| self.index_error(e))?;
        for rel in rel_paths {
            let shown = rel.display();
            if let Some(e) = index.get_path(rel, 0) {
                if e.flags_extended & (1 << 14) != 0 {
                    bail!("{shown}: is marked skip-worktree in the git index, so git ignores its working-tree bytes; undo that with `git update-index --no-skip-worktree {shown}` (or `git sparse-checkout` if it is sparse), or pass --no-commit; nothing written");
                }
                if e.flags & 0x8000 != 0 {
                    bail!("{shown}: is marked assume-unchanged in the git index, so a local edit to it would be committed unseen; undo that with `git update-index --no-assume-unchanged {shown}` and check `git status`, or pass --no-commit; nothing written");
                }
            }
        }
        let statuses = self.statuses_of(rel_paths)?;
        let mut dirty = Vec::new();
        for rel in rel_paths {
            let shown = rel.display();
            let st = statuses
                .get(&rel_key(rel))
                .copied()
                .unwrap_or(Status::CURRENT);
            if st.intersects(Status::IGNORED) {
                bail!("{shown}: is not tracked by git and is ignored (.gitignore); it cannot be committed without `git add -f`: track it first, or pass --no-commit; nothing written");
            } else if st.intersects(Status::WT_NEW) {
                dirty.push(format!("  {shown} (not tracked by git)"));
            } else if !st.is_empty() && st != Status::CURRENT {
                dirty.push(format!("  {shown} (has uncommitted changes)"));
            }
        }
        if !dirty.is_empty() {
            bail!(
                "refusing to commit: files to rewrite differ from HEAD; commit or stash them first (or use --no-commit); nothing written:\n{}",
                dirty.join("\n")
            );
        }
        Ok(())
    }

    /// The git status of each of `rel_paths` that is not current, from one
    /// status pass limited to exactly those paths.
    fn statuses_of(
        &self,
        rel_paths: &[PathBuf],
    ) -> Result<std::collections::HashMap<Vec<u8>, Status>> {
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(true)
            .recurse_untracked_dirs(true)
            .recurse_ignored_dirs(true)
            .disable_pathspec_match(true)
            .exclude_submodules(true);
        for rel in rel_paths {
            opts.pathspec(rel_key(rel));
        }
        let list = self.repo.statuses(Some(&mut opts)).map_err(|e| {
            anyhow!(e).context("cannot read the git status of the files to rewrite")
        })?;
        Ok(list
            .iter()
            .map(|e| (e.path_bytes().to_vec(), e.status()))
            .collect())
    }

    /// HEAD's branch (`None` when detached: then its commit) and commit,
    /// when HEAD is a commit the git flow made rebinding `from` to `to` (its
    /// message says so): a re-run on the branch an earlier run made.
    ///
    /// `from` is `None` when it is not known: a re-run with `--cluster` on
    /// the cutover branch, whose config already names the new endpoint, so
    /// the cluster's endpoint there is `to`. Then a rebind commit to `to`
    /// from any endpoint is that earlier run's, and its `from` is returned.
    pub fn head_cutover(&self, from: Option<&str>, to: &str) -> Option<(String, Oid, String)> {
        let head = self.repo.head().ok()?;
        let commit = head.peel_to_commit().ok()?;
        let msg = String::from_utf8_lossy(commit.message_raw_bytes()).into_owned();
        if !msg.starts_with("rebind: ") {
            return None;
        }
        let tail = format!("\nto\n  {to}\n");
        let at = msg.find(&tail)?;
        let said_from = msg[..at].rsplit_once("from\n  ")?.1;
        if said_from.contains('\n') || from.is_some_and(|f| f != said_from) {
            return None;
        }
        let said_from = said_from.to_string();
        let branch = if self.repo.head_detached().ok()? {
            commit.id().to_string()
        } else {
            head.shorthand().ok()?.to_string()
        };
        Some((branch, commit.id(), said_from))
    }

    /// Whether `commit`'s tree holds a file at `rel`.
    pub fn commit_holds(&self, commit: &str, rel: &Path) -> bool {
        Oid::from_str(commit)
            .and_then(|id| self.repo.find_commit(id))
            .and_then(|c| c.tree())
            .is_ok_and(|t| t.get_path(rel).is_ok())
    }

    /// A branch `a/b` cannot be made next to a branch `a` or `a/b/c`.
    fn check_branch_names(&self, branch: &str) -> Result<()> {
        for b in self.repo.branches(Some(BranchType::Local))? {
            let (b, _) = b?;
            let Some(name) = b.name()? else { continue };
            if branch.starts_with(&format!("{name}/")) || name.starts_with(&format!("{branch}/")) {
                bail!("branch {branch} cannot be created next to the existing branch {name}; pass --branch NAME; nothing written");
            }
        }
        Ok(())
    }

    /// The external filter driver of `rel` that git would run on `git add`:
    /// `Some((attribute value, clean command))`; refuses drivers it cannot run.
    fn clean_filter(&self, rel: &Path) -> Result<Option<(String, String)>> {
        let value = self
            .repo
            .get_attr(rel, "filter", AttrCheckFlags::FILE_THEN_INDEX)
            .with_context(|| format!("{}: cannot read its git attributes", rel.display()))?;
        let AttrValue::String(driver) = AttrValue::from_string(value) else {
            return Ok(None);
        };
        let driver = driver.to_string();
        if let Some(clean) = self.config_string(&format!("filter.{driver}.clean")) {
            return Ok(Some((driver, clean)));
        }
        if self
            .config_string(&format!("filter.{driver}.process"))
            .is_some()
        {
            bail!(
                "{}: has the git attribute filter={driver}, whose driver only runs as a long-running process (filter.{driver}.process), which rebind cannot run; without it the commit would store the wrong bytes. Rewrite with --no-commit and commit with git; nothing written",
                rel.display()
            );
        }
        if self.config_bool(&format!("filter.{driver}.required")) {
            bail!(
                "{}: has the git attribute filter={driver}, which is required, but filter.{driver}.clean is not configured (git add would fail too); nothing written",
                rel.display()
            );
        }
        Ok(None)
    }

    /// The blob `git add` would store for `bytes` at `rel`: the external clean
    /// filter (if any), then libgit2's own filters chosen by the path.
    fn staged_blob(&self, rel: &Path, bytes: &[u8]) -> Result<Oid> {
        let shown = rel.display();
        let cleaned;
        let bytes = match self.clean_filter(rel)? {
            Some((driver, cmd)) => {
                let path = rel.to_str().ok_or_else(|| {
                    anyhow!("{shown}: has the git attribute filter={driver}, and its name is not UTF-8, so it cannot be passed to the filter; nothing written")
                })?;
                let cmd = cmd.replace("%f", &sq_quote(path));
                let mut c = Command::new("sh");
                c.arg("-c").arg(&cmd).current_dir(&self.workdir);
                cleaned = run_filter(c, bytes).map_err(|e| {
                    anyhow!("{shown}: the clean filter of its git attribute filter={driver} (`{cmd}`) failed: {e}; nothing written")
                })?;
                &cleaned.0[..]
            }
            None => bytes,
        };
        let mut w = self
            .repo
            .blob_writer(Some(rel))
            .with_context(|| format!("{shown}: cannot store it in git"))?;
        w.write_all(bytes)
            .with_context(|| format!("{shown}: cannot store it in git"))?;
        w.commit().map_err(|e| {
            anyhow!(e).context(format!(
                "{shown}: git's line-ending or ident conversion refused it; nothing written"
            ))
        })
    }

    /// HEAD's tree with the planned files replaced by `blobs`, and the
    /// added file.
    fn tree_for(
        &self,
        rel_paths: &[PathBuf],
        blobs: &[Oid],
        added: Option<&Added>,
        head: Oid,
    ) -> Result<Oid> {
        let head_tree = self.repo.find_commit(head)?.tree()?;
        let mut index = git2::Index::new()?;
        index.read_tree(&head_tree)?;
        for (rel, blob) in rel_paths.iter().zip(blobs) {
            let mut entry = index
                .get_path(rel, 0)
                .ok_or_else(|| anyhow!("{}: not in HEAD", rel.display()))?;
            entry.id = *blob;
            index.add(&entry)?;
        }
        if let Some(a) = added {
            let zero = git2::IndexTime::new(0, 0);
            index.add(&git2::IndexEntry {
                ctime: zero,
                mtime: zero,
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: a.blob,
                flags: 0,
                flags_extended: 0,
                path: rel_key(&a.rel),
            })?;
        }
        Ok(index.write_tree_to(&self.repo)?)
    }

    /// Creates the commit object, signed when `commit.gpgsign` asks for it
    /// (no ref moves yet).
    pub fn commit(&self, prep: &Prepared, message: &str) -> Result<Oid> {
        let tree = self.repo.find_tree(self.tree_for(
            &prep.rel_paths,
            &prep.blobs,
            prep.added.as_ref(),
            prep.head,
        )?)?;
        let parent = self.repo.find_commit(prep.head)?;
        let (author, committer) = self.identities()?;
        if !self.config_bool("commit.gpgsign") {
            return Ok(self
                .repo
                .commit(None, &author, &committer, message, &tree, &[&parent])?);
        }
        let buf =
            self.repo
                .commit_create_buffer(&author, &committer, message, &tree, &[&parent])?;
        let content = std::str::from_utf8(&buf).context("the commit is not UTF-8")?;
        let sig = self.sign(content, &committer)?;
        Ok(self.repo.commit_signed(content, &sig, None)?)
    }

    /// Signs `content` the way git does for `gpg.format`.
    fn sign(&self, content: &str, committer: &Signature) -> Result<String> {
        let format = self
            .config_string("gpg.format")
            .unwrap_or_else(|| "openpgp".into());
        let fail = |prog: &str, e: String| {
            anyhow!("signing the commit failed (commit.gpgsign is set, gpg.format={format}): {prog}: {e}; nothing written")
        };
        match format.as_str() {
            "openpgp" | "x509" => {
                let default = if format == "x509" { "gpgsm" } else { "gpg" };
                let program = self
                    .config_string(&format!("gpg.{format}.program"))
                    .or_else(|| {
                        (format == "openpgp")
                            .then(|| self.config_string("gpg.program"))
                            .flatten()
                    })
                    .unwrap_or_else(|| default.into());
                let key = self.config_string("user.signingkey").unwrap_or_else(|| {
                    format!(
                        "{} <{}>",
                        committer.name().unwrap_or(""),
                        committer.email().unwrap_or("")
                    )
                });
                let mut c = Command::new(&program);
                c.args(["--status-fd=2", "-bsau", &key]);
                let (sig, status) =
                    run_filter(c, content.as_bytes()).map_err(|e| fail(&program, e))?;
                let status = String::from_utf8_lossy(&status);
                if !status
                    .lines()
                    .any(|l| l.starts_with("[GNUPG:] SIG_CREATED "))
                {
                    return Err(fail(&program, "it reported no SIG_CREATED".into()));
                }
                String::from_utf8(sig).map_err(|_| fail(&program, "signature is not text".into()))
            }
            "ssh" => {
                let program = self
                    .config_string("gpg.ssh.program")
                    .unwrap_or_else(|| "ssh-keygen".into());
                let Some(key) = self.config_string("user.signingkey") else {
                    bail!("signing the commit failed: commit.gpgsign is set with gpg.format=ssh, but user.signingkey is not; nothing written");
                };
                let mut c = Command::new(&program);
                c.args(["-Y", "sign", "-n", "git", "-f"]);
                let literal = key
                    .strip_prefix("key::")
                    .or_else(|| key.starts_with("ssh-").then_some(key.as_str()));
                let _temp;
                if let Some(pubkey) = literal {
                    let path = self
                        .repo
                        .path()
                        .join(format!("rebind-signingkey-{}.pub", std::process::id()));
                    let _ = std::fs::remove_file(&path);
                    _temp =
                        RemoveOnDrop::create_new(path.clone(), format!("{pubkey}\n").as_bytes())
                            .with_context(|| format!("{}: cannot write", path.display()))?;
                    c.arg(&path).arg("-U");
                } else {
                    let path = match (key.strip_prefix("~/"), std::env::var_os("HOME")) {
                        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
                        _ => PathBuf::from(&key),
                    };
                    c.arg(path);
                }
                let (sig, _) = run_filter(c, content.as_bytes()).map_err(|e| fail(&program, e))?;
                let sig = String::from_utf8(sig)
                    .map_err(|_| fail(&program, "signature is not text".into()))?;
                if !sig.contains("-----BEGIN SSH SIGNATURE-----") {
                    return Err(fail(&program, "it printed no SSH signature".into()));
                }
                Ok(sig)
            }
            other => {
                bail!("commit.gpgsign is set with gpg.format={other}, which rebind cannot sign with (openpgp, x509 and ssh work); nothing written")
            }
        }
    }

    /// Where [`Repo::stage`] writes the new index.
    fn temp_index(&self) -> PathBuf {
        self.repo
            .path()
            .join(format!("rebind-index-{}", std::process::id()))
    }

    /// Writes a copy of the index with the new entries of the written files
    /// to `temp`, beside the real one.
    fn stage(&self, prep: &Prepared, temp: &Path) -> Result<()> {
        let real = self.repo.path().join("index");
        let _ = std::fs::remove_file(temp);
        if real.exists() {
            std::fs::copy(&real, temp)
                .with_context(|| format!("{}: cannot copy", real.display()))?;
        }
        let mut index = git2::Index::open(temp)?;
        if !real.exists() {
            index.read_tree(&self.repo.find_commit(prep.head)?.tree()?)?;
        }
        self.repo.set_index(&mut index)?;
        for (rel, blob) in prep.rel_paths.iter().zip(&prep.blobs) {
            index
                .add_path(rel)
                .with_context(|| format!("{}: cannot stage it", rel.display()))?;
            // The blob committed: the same as add_path's unless an external
            // clean filter ran (libgit2 skips those).
            let mut entry = index
                .get_path(rel, 0)
                .ok_or_else(|| anyhow!("{}: vanished from the index", rel.display()))?;
            if entry.id != *blob {
                entry.id = *blob;
                index.add(&entry)?;
            }
        }
        if let Some(a) = &prep.added {
            index
                .add_path(&a.rel)
                .with_context(|| format!("{}: cannot stage it", a.rel.display()))?;
            let mut entry = index
                .get_path(&a.rel, 0)
                .ok_or_else(|| anyhow!("{}: vanished from the index", a.rel.display()))?;
            if entry.id != a.blob {
                entry.id = a.blob;
                index.add(&entry)?;
            }
        }
        index.write()?;
        Ok(())
    }
}

/// Commits `plans` on a new branch and switches to it, writing the files in
/// between (all or nothing), then pushes. Returns the branch and commit.
pub fn commit_flow(
    repo: &Repo,
    prep: &Prepared,
    plans: &[FilePlan],
    message: &str,
    push: Option<&str>,
) -> Result<Committed> {
    commit_flow_with(repo, prep, plans, message, push, Faults::default())
}

/// What to undo after a failed step.
#[derive(Default)]
struct Undo {
    wrote: bool,
    /// The added file and the directories made for it (outermost first).
    added: Option<(PathBuf, Vec<PathBuf>)>,
    branch: bool,
    head: bool,
    /// The index's bytes before it was replaced (`Some(None)`: there was none).
    index: Option<Option<Vec<u8>>>,
}

/// [`commit_flow`] with injected faults.
pub fn commit_flow_with(
    repo: &Repo,
    prep: &Prepared,
    plans: &[FilePlan],
    message: &str,
    push: Option<&str>,
    faults: Faults,
) -> Result<Committed> {
    repo.lock_and_recheck(prep, plans)?;
    crate::sys::signals::pause_point("locked");
    let commit = repo.commit(prep, message)?;
    // After each step: a test's pause, an injected fault, a signal's stop.
    let fault = |s: Step| -> Result<()> {
        crate::sys::signals::pause_point(&format!("{s:?}").to_ascii_lowercase());
        if faults.fail_after == Some(s) {
            bail!("injected fault after step {s:?}");
        }
        crate::sys::signals::check()?;
        Ok(())
    };
    let mut undo = Undo::default();
    let temp = repo.temp_index();
    crate::sys::signals::enter_critical();
    let mut run = || -> Result<()> {
        let paused = |n: usize| {
            if n == 0 {
                crate::sys::signals::pause_point("writing");
            }
        };
        let hooks = crate::edit::write::Hooks {
            after_rename: Some(&paused),
            ..Default::default()
        };
        // All or nothing: a failure inside leaves every file as it was.
        crate::edit::write::write_all_with(plans, &hooks)?;
        undo.wrote = true;
        if let Some(a) = &prep.added {
            undo.added = Some(write_added(repo, a)?);
        }
        fault(Step::Write)?;
        repo.stage(prep, &temp)?;
        fault(Step::Stage)?;
        let c = repo.repo.find_commit(commit)?;
        repo.repo
            .branch(&prep.branch, &c, false)
            .with_context(|| format!("cannot create branch {}", prep.branch))?;
        undo.branch = true;
        fault(Step::Branch)?;
        repo.repo
            .set_head(&format!("refs/heads/{}", prep.branch))
            .context("cannot switch HEAD to the new branch")?;
        undo.head = true;
        fault(Step::Head)?;
        let real = repo.repo.path().join("index");
        let before = match std::fs::read(&real) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(anyhow!(e).context(format!("{}: cannot read", real.display()))),
        };
        std::fs::rename(&temp, &real)
            .with_context(|| format!("{}: cannot replace it", real.display()))?;
        undo.index = Some(before);
        fault(Step::Index)?;
        Ok(())
    };
    let result = run();
    let _ = std::fs::remove_file(&temp);
    let _ = std::fs::remove_file(temp.with_extension("lock"));
    if let Err(e) = result {
        if !undo.wrote {
            return Err(e);
        }
        let what = match restore(repo, prep, plans, &undo) {
            Ok(()) => "HEAD, branches, index and files were restored as they were; nothing written"
                .to_string(),
            Err(r) => format!("restoring the prior state failed too: {r:#}"),
        };
        return Err(e.context(format!(
            "committing on branch {} failed; {what}",
            prep.branch
        )));
    }
    // Done with the index: release it before the push (its hooks may run git).
    prep.lock.borrow_mut().take();
    let mut committed = Committed {
        branch: prep.branch.clone(),
        commit: commit.to_string(),
        pushed_to: None,
    };
    if let Some(remote) = push {
        self::push(repo, remote, &mut committed)?;
    }
    Ok(committed)
}

/// Pushes a committed branch to `remote` and records it in `c.pushed_to`;
/// returns what git said, for the caller to print. A failure is an
/// [`AfterCommit`] error (the files are committed: exit code 3). A signal
/// received before the push stops the run here, saying what is left.
pub fn push(repo: &Repo, remote: &str, c: &mut Committed) -> Result<String> {
    crate::sys::signals::pause_point("push");
    if let Err(stop) = crate::sys::signals::check() {
        return Err(anyhow::Error::new(stop).context(AfterCommit {
            branch: c.branch.clone(),
            commit: c.commit.clone(),
            retry: push_retry(remote, &c.branch),
            cause: format!("not pushed to {remote}"),
            pushed: false,
            code: "push-failed",
        }));
    }
    let said = push_branch(repo, remote, &c.branch, &c.commit)?;
    c.pushed_to = Some(remote.to_string());
    Ok(said)
}

/// Creates the added file in the working tree (and the directories it
/// needs), never over an existing one; returns its path and the
/// directories made, for the undo.
fn write_added(repo: &Repo, a: &Added) -> Result<(PathBuf, Vec<PathBuf>)> {
    let path = repo.workdir.join(&a.rel);
    let mut made = Vec::new();
    let mut missing: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.exists())
        .collect();
    missing.reverse();
    for d in missing {
        std::fs::create_dir(d).with_context(|| format!("{}: cannot create it", d.display()))?;
        made.push(d.to_path_buf());
    }
    let written = crate::edit::write::write_file(
        &path,
        a.bytes.as_bytes(),
        crate::edit::write::Mode::Keep,
        crate::edit::write::Existing::Refuse,
        &|_| Ok(()),
    );
    if let Err(e) = written {
        for d in made.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        return Err(e.context(format!("{}: cannot create it", a.rel.display())));
    }
    Ok((path, made))
}

/// Undoes the steps recorded in `undo`, last first.
fn restore(repo: &Repo, prep: &Prepared, plans: &[FilePlan], undo: &Undo) -> Result<()> {
    let mut errors = Vec::new();
    if let Some(before) = &undo.index {
        let real = repo.repo.path().join("index");
        let r = match before {
            Some(bytes) => {
                let temp = repo
                    .repo
                    .path()
                    .join(format!("rebind-index-{}.old", std::process::id()));
                std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, &real))
            }
            None => std::fs::remove_file(&real),
        };
        if let Err(e) = r {
            errors.push(format!("{}: {e}", real.display()));
        }
    }
    if undo.head {
        let r = match &prep.head_ref {
            Some(name) => repo.repo.set_head(name),
            None => repo.repo.set_head_detached(prep.head),
        };
        if let Err(e) = r {
            errors.push(format!("HEAD: {e}"));
        }
    }
    if undo.branch {
        let name = format!("refs/heads/{}", prep.branch);
        if let Err(e) = repo.repo.find_reference(&name).and_then(|mut r| r.delete()) {
            errors.push(format!("{name}: {e}"));
        }
    }
    if undo.wrote {
        let back: Vec<FilePlan> = plans.iter().map(FilePlan::reversed).collect();
        if let Err(e) = crate::edit::write::write_all(&back) {
            errors.push(format!("{e:#}"));
        }
    }
    if let Some((path, dirs)) = &undo.added {
        if let Err(e) = std::fs::remove_file(path) {
            errors.push(format!("{}: cannot remove it: {e}", path.display()));
        }
        for d in dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        bail!("{}", errors.join("; "))
    }
}

/// `git push --set-upstream <remote> <branch>` with the system git, so the
/// user's credentials, `insteadOf` rules and proxies apply. Returns git's
/// output (stdout and stderr) for the caller to print; on failure it is
/// part of the error.
fn push_branch(repo: &Repo, remote: &str, branch: &str, commit: &str) -> Result<String> {
    let retry = push_retry(remote, branch);
    let after = |cause: String| AfterCommit {
        branch: branch.to_string(),
        commit: commit.to_string(),
        retry: retry.clone(),
        cause,
        pushed: false,
        code: "push-failed",
    };
    let out = Command::new("git")
        .args(["push", "--set-upstream", remote, branch])
        .current_dir(&repo.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| after(format!("pushing to {remote} failed: cannot run git: {e}")))?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let said = said.trim_end();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(":\n{said}")
        };
        return Err(after(format!(
            "pushing to {remote} failed (git push: {}){said}",
            out.status
        ))
        .into());
    }
    Ok(said)
}

/// The command that pushes `branch` to `remote` as rebind would.
fn push_retry(remote: &str, branch: &str) -> String {
    format!(
        "git push --set-upstream {} {}",
        sq_quote_if_needed(remote),
        sq_quote_if_needed(branch)
    )
}

pub fn sq_quote_if_needed(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,".contains(c))
    {
        s.to_string()
    } else {
        sq_quote(s)
    }
}

/// The files named `name` that git tracks below `root`, absolute; `None`
/// outside a git repository.
pub fn tracked_named(root: &Path, name: &str) -> Option<Vec<PathBuf>> {
    let below = root.canonicalize().ok()?;
    Some(
        tracked_below(root)?
            .into_iter()
            .filter(|rel| rel.rsplit('/').next() == Some(name))
            .map(|rel| below.join(rel))
            .collect(),
    )
}

/// The files git tracks below `root` (the index: what a commit of the
/// branch holds), each `/`-separated relative to `root`; `None` outside a
/// git repository (or when its index cannot be read).
pub fn tracked_below(root: &Path) -> Option<Vec<String>> {
    let Repo { repo, workdir } = open(root).ok()??;
    let index = repo.index().ok()?;
    let base = workdir.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let mut out = Vec::new();
    for e in index.iter() {
        let rel = String::from_utf8_lossy(&e.path).to_string();
        if let Ok(below) = base.join(&rel).strip_prefix(&root) {
            out.push(below.to_string_lossy().replace('\\', "/"));
        }
    }
    Some(out)
}

/// The walk of `paths` as git sees them: every tracked file, ignored or not
/// ([`tracked_hidden`]), default globs, no config.
pub fn walk_request(paths: &[PathBuf]) -> crate::discover::walk::WalkRequest {
    crate::discover::walk::WalkRequest {
        tracked_hidden: tracked_hidden(paths),
        ..crate::discover::walk::WalkRequest::for_paths(paths)
    }
}

/// The files git tracks below the directories of `paths` that git's ignore
/// rules match ([`crate::discover::ignored`]), as canonical paths: what a
/// walk of those directories must yield all the same
/// ([`crate::discover::walk::WalkRequest::tracked_hidden`]). Empty outside a repository and
/// for file PATHs (taken as given).
pub fn tracked_hidden(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in paths.iter().filter(|p| p.is_dir()) {
        if let Ok(dir) = dir.canonicalize() {
            out.extend(hidden_tracked(&dir));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// [`tracked_hidden`] of one canonical directory.
fn hidden_tracked(dir: &Path) -> Vec<PathBuf> {
    let Ok(Some(Repo { repo, workdir })) = open(dir) else {
        return Vec::new();
    };
    let (Ok(index), Ok(base)) = (repo.index(), workdir.canonicalize()) else {
        return Vec::new();
    };
    let Ok(below) = dir.strip_prefix(&base) else {
        return Vec::new();
    };
    let below = below.to_string_lossy().replace('\\', "/");
    let tracked: Vec<String> = index
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|rel| below.is_empty() || rel.starts_with(&format!("{below}/")))
        .collect();
    let exclude = repo.commondir().join("info/exclude");
    crate::discover::ignored::ignored_among(
        &base,
        tracked.iter().map(String::as_str),
        Some(&exclude),
    )
    .into_iter()
    .map(|rel| base.join(rel))
    .collect()
}

/// Where the base branch came from when nothing else names it: the branch
/// checked out (what a cutover branch is made from, and what `apply --pr`
/// targets when the remote names no default branch).
pub const CHECKED_OUT: &str = "the checked-out branch";

/// The identities ([`crate::text::repo_url::repo_identity`]) of the
/// remotes of the repository holding `path`; empty when it is no
/// repository or has no remote.
pub fn remote_identities(path: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let Ok(Some(Repo { repo, .. })) = open(path) else {
        return out;
    };
    let Ok(remotes) = repo.remotes() else {
        return out;
    };
    for name in (0..remotes.len()).filter_map(|i| remotes.get(i).ok().flatten()) {
        if let Ok(r) = repo.find_remote(name) {
            if let Some(id) = r.url().ok().and_then(crate::text::repo_url::repo_identity) {
                out.insert(id);
            }
        }
    }
    out
}

/// What the repository around `path` says about its remotes and branches,
/// for the after-merge review: every remote's identity,
/// the remote's default branch, the base branch (`base` as given, else the
/// remote's default branch, else the current branch's upstream; never
/// `cutover`), and the branch and tag names. `None` outside a repository.
pub fn repo_facts(
    path: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
) -> Option<(PathBuf, crate::repo::remote::RepoFacts)> {
    // The repository as the git flow opens it (`GIT_DIR`/`GIT_WORK_TREE`
    // honoured).
    let Repo { repo, workdir } = open(path).ok()??;
    let mut facts = crate::repo::remote::RepoFacts::default();
    let remotes = repo.remotes().ok()?;
    let names: Vec<String> = (0..remotes.len())
        .filter_map(|i| remotes.get(i).ok().flatten().map(str::to_string))
        .collect();
    let mut remote_ids: Vec<(String, String)> = Vec::new();
    for name in &names {
        if let Ok(r) = repo.find_remote(name) {
            if let Some(id) = r.url().ok().and_then(crate::text::repo_url::repo_identity) {
                remote_ids.push((name.clone(), id));
            }
        }
    }
    // `origin` first, then the others by name.
    let mut ordered = names.clone();
    ordered.sort_by_key(|n| (n != "origin", n.clone()));
    let mut default_remote = None;
    for name in &ordered {
        let head = format!("refs/remotes/{name}/HEAD");
        if let Ok(r) = repo.find_reference(&head) {
            if let Some(t) = r.symbolic_target().ok().flatten() {
                let prefix = format!("refs/remotes/{name}/");
                if let Some(b) = t.strip_prefix(&prefix) {
                    facts.default_branch = Some(b.to_string());
                    default_remote = Some(name.clone());
                    break;
                }
            }
        }
    }
    if let Ok(refs) = repo.references() {
        for r in refs.flatten() {
            let Ok(n) = r.name() else {
                continue;
            };
            if let Some(t) = n.strip_prefix("refs/tags/") {
                facts.tags.insert(t.to_string());
            } else if let Some(b) = n.strip_prefix("refs/heads/") {
                facts.branches.insert(b.to_string());
            } else if let Some(rest) = n.strip_prefix("refs/remotes/") {
                if let Some((_, b)) = rest.split_once('/') {
                    if b != "HEAD" {
                        facts.branches.insert(b.to_string());
                    }
                }
            }
        }
    }
    settle_base(
        &repo,
        base,
        &ordered,
        default_remote,
        &remote_ids,
        &mut facts,
    );
    if facts.base.as_ref().map(|(b, _)| b.as_str()) == cutover {
        facts.base = None;
    }
    Some((workdir, facts))
}

/// The branch `--base NAME` names, resolved as git resolves a name
/// (gitrevisions(7)): a local branch `refs/heads/NAME`; a remote-tracking
/// branch `refs/remotes/NAME` (`upstream/main`: the branch `main` of the
/// remote `upstream`, returned with it); the branch `NAME` of a remote
/// (`refs/remotes/<remote>/NAME`, the remote found by the caller); else a
/// revision git resolves to a branch (`refs/heads/main`,
/// `remotes/upstream/main`). `Err`: why it names no branch (nothing
/// resolves, or a tag or commit, which no merge lands on).
fn resolve_base(
    repo: &Repository,
    given: &str,
    remotes: &[String],
) -> std::result::Result<(String, Option<String>), String> {
    let is = |r: &str| repo.find_reference(r).is_ok();
    // A remote-tracking ref name as (branch, remote): the longest remote
    // name that prefixes it (a remote's name may hold a `/`).
    let tracking = |rest: &str| -> Option<(String, Option<String>)> {
        remotes
            .iter()
            .filter_map(|r| {
                let b = rest.strip_prefix(r.as_str())?.strip_prefix('/')?;
                (!b.is_empty() && b != "HEAD").then_some((r, b))
            })
            .max_by_key(|(r, _)| r.len())
            .map(|(r, b)| (b.to_string(), Some(r.clone())))
    };
    if is(&format!("refs/heads/{given}")) {
        return Ok((given.to_string(), None));
    }
    if is(&format!("refs/remotes/{given}")) {
        if let Some(found) = tracking(given) {
            return Ok(found);
        }
    }
    if remotes
        .iter()
        .any(|r| is(&format!("refs/remotes/{r}/{given}")))
    {
        return Ok((given.to_string(), None));
    }
    match repo.revparse_ext(given) {
        Ok((_, Some(r))) => {
            let name = r.name().unwrap_or("").to_string();
            if let Some(b) = name.strip_prefix("refs/heads/") {
                return Ok((b.to_string(), None));
            }
            if let Some(found) = name.strip_prefix("refs/remotes/").and_then(tracking) {
                return Ok(found);
            }
            Err(format!(
                "--base {given} names {name}, no branch: a merge lands on a branch; give the branch the cutover merges into"
            ))
        }
        Ok((_, None)) => Err(format!(
            "--base {given} names a commit, no branch: a merge lands on a branch; give the branch the cutover merges into"
        )),
        Err(_) => Err(format!(
            "--base {given} is no branch of this clone (local or remote-tracking): check its spelling; revisions are compared with it as given"
        )),
    }
}

/// The base branch of [`repo_facts`] and the remote it belongs to (the
/// one whose `HEAD` names it, the upstream's, or for `--base` the first
/// remote, `origin` first, that has it); this repository's identities are
/// that remote's, the other remotes' are other repositories (with no such
/// remote, every remote is this repository).
fn settle_base(
    repo: &Repository,
    base: Option<&str>,
    ordered: &[String],
    default_remote: Option<String>,
    remote_ids: &[(String, String)],
    facts: &mut crate::repo::remote::RepoFacts,
) {
    let checked_out = || -> Option<String> {
        let head = repo.head().ok()?;
        head.is_branch()
            .then(|| head.shorthand().ok().map(str::to_string))
            .flatten()
    };
    // The upstream as (remote, branch).
    let upstream = || -> Option<(String, String)> {
        let head = repo.head().ok()?;
        let name = head.shorthand().ok()?.to_string();
        let branch = repo.find_branch(&name, BranchType::Local).ok()?;
        let up = branch.upstream().ok()?;
        let up = up.name().ok()??.to_string();
        let (remote, b) = up.split_once('/')?;
        Some((remote.to_string(), b.to_string()))
    };
    // The remote the base branch belongs to: the one whose HEAD named it,
    // the upstream's, or for `--base` the first remote (origin first)
    // that has the branch.
    let (base_branch, base_remote) = match base {
        Some(given) => {
            let (b, r) = match resolve_base(repo, given, ordered) {
                Ok((b, Some(r))) => (b, Some(r)),
                Ok((b, None)) => {
                    let r = ordered
                        .iter()
                        .find(|r| {
                            repo.find_reference(&format!("refs/remotes/{r}/{b}"))
                                .is_ok()
                        })
                        .cloned();
                    (b, r)
                }
                Err(why) => {
                    facts.base_refused = Some(why);
                    (given.to_string(), None)
                }
            };
            (Some((b, "--base")), r)
        }
        None => match facts.default_branch.clone() {
            Some(b) => (Some((b, "the remote's HEAD")), default_remote),
            None => match upstream() {
                Some((r, b)) => (Some((b, "the current branch's upstream")), Some(r)),
                None => (checked_out().map(|b| (b, CHECKED_OUT)), None),
            },
        },
    };
    facts.base = base_branch;
    // This repository is the remote the base branch belongs to; another
    // remote (a fork's `upstream`) is another repository. With no such
    // remote, every remote is.
    let base_id = base_remote
        .as_ref()
        .and_then(|r| remote_ids.iter().find(|(n, _)| n == r))
        .map(|(_, id)| id.clone());
    for (name, id) in remote_ids {
        match &base_id {
            Some(b) if id != b => {
                facts.other_remotes.insert(id.clone(), name.clone());
            }
            _ => {
                facts.identities.insert(id.clone());
            }
        }
    }
    if base_id.is_some() {
        facts.base_remote = base_remote;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_branch_is_always_valid() {
        for (host, want) in [
            (
                "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com",
                "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a",
            ),
            ("[::1]", "rebind/1"),
            ("::1", "rebind/1"),
            ("[fe80::1:2]", "rebind/fe80-1-2"),
            ("10.0.0.1", "rebind/10.0.0.1"),
            ("my_host.example.com", "rebind/my_host"),
            ("a..b", "rebind/a"),
            ("x.lock", "rebind/x"),
            ("-", "rebind/endpoint"),
        ] {
            let got = default_branch(host);
            assert_eq!(got, want, "{host}");
            assert!(git2::Branch::name_is_valid(&got).unwrap(), "{got}");
        }
    }

    #[test]
    fn after_commit_says_what_exists_and_is_found_under_context() {
        let e = AfterCommit {
            branch: "rebind/x".into(),
            commit: "0123abcd".into(),
            retry: "git push --set-upstream origin rebind/x".into(),
            cause: "pushing to origin failed".into(),
            pushed: false,
            code: "push-failed",
        };
        let text = e.to_string();
        assert!(text.starts_with("pushing to origin failed; "), "{text}");
        assert!(text.contains("committed as 0123abcd on branch rebind/x"));
        assert!(text.ends_with("\n  git push --set-upstream origin rebind/x"));
        let wrapped = anyhow::Error::from(e).context("apply");
        assert!(wrapped.chain().any(|c| c.is::<AfterCommit>()));
    }

    #[test]
    fn quoting_for_sh() {
        assert_eq!(sq_quote("a b'c"), "'a b'\\''c'");
        assert_eq!(sq_quote_if_needed("origin"), "origin");
        assert_eq!(sq_quote_if_needed("a b"), "'a b'");
    }
}

/// A tracked file whose working-tree state differs from what is committed
/// (HEAD) or staged (the index): what a commit of the branch holds is not
/// what a walk of the work tree reads.
#[derive(Debug, Clone)]
pub struct Uncommitted {
    /// `/`-separated, relative to the work tree.
    pub rel: String,
    /// Its canonical path in the work tree (it may not exist).
    pub path: PathBuf,
    /// "deleted", "modified" or "type changed" (in the work tree or the
    /// index).
    pub state: &'static str,
    /// The HEAD blob (`None`: not in HEAD).
    pub head: Option<Vec<u8>>,
    /// The index blob: what the next commit holds (`None`: not in the
    /// index, a staged deletion).
    pub index: Option<Vec<u8>>,
}

/// The tracked files below `paths` (directories or files) whose work-tree
/// state differs from HEAD or the index (deleted, modified, type changed),
/// with their committed bytes; empty outside a git repository. Untracked
/// files are not listed (no commit holds them).
pub fn uncommitted_below(paths: &[PathBuf]) -> Result<Vec<Uncommitted>> {
    let Some(first) = paths.first() else {
        return Ok(Vec::new());
    };
    let Some(r) = open(first)? else {
        return Ok(Vec::new());
    };
    let (repo, base) = (
        &r.repo,
        r.workdir.canonicalize().unwrap_or(r.workdir.clone()),
    );
    let roots: Vec<PathBuf> = paths.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(false)
        .include_ignored(false)
        .renames_head_to_index(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| r.index_error(e))
        .with_context(|| format!("{}: cannot read the git status", base.display()))?;
    let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    let index = repo.index().ok();
    let mut out = Vec::new();
    for s in statuses.iter() {
        let st = s.status();
        let state = if st.intersects(git2::Status::WT_DELETED | git2::Status::INDEX_DELETED) {
            "deleted"
        } else if st.intersects(git2::Status::WT_TYPECHANGE | git2::Status::INDEX_TYPECHANGE) {
            "type changed"
        } else if st.intersects(git2::Status::WT_MODIFIED | git2::Status::INDEX_MODIFIED) {
            "modified"
        } else {
            continue;
        };
        let Some(rel) = s.path().ok().map(str::to_string) else {
            continue;
        };
        let path = base.join(&rel);
        if !roots.iter().any(|r| path.starts_with(r)) {
            continue;
        }
        let head_id = head
            .as_ref()
            .and_then(|t| t.get_path(Path::new(&rel)).ok())
            .map(|e| e.id());
        let index_id = index
            .as_ref()
            .and_then(|i| i.get_path(Path::new(&rel), 0))
            .map(|e| e.id);
        let blob = |id: Option<Oid>| {
            id.and_then(|i| repo.find_blob(i).ok())
                .map(|b| b.content().to_vec())
        };
        out.push(Uncommitted {
            rel,
            path,
            state,
            head: blob(head_id),
            index: blob(index_id),
        });
    }
    Ok(out)
}
