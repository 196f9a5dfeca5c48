//! What a workspace run asks of each repository before and between its
//! steps, without changing it: the branch checked out and whether the tree
//! is clean, a branch's tip and its subject, whether a remote answers, and
//! whether a commit reached the base branch (merged). Also the clone of a
//! repository given by URL into the workspace's cache. The system git does
//! the network calls, so credentials, `insteadOf` and proxies work as for
//! `git push`.

use anyhow::{anyhow, bail, Context, Result};
use git2::{BranchType, Repository, StatusOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository's work tree as the preflight sees it.
#[derive(Debug, Clone)]
pub struct Checkout {
    pub workdir: PathBuf,
    /// The branch checked out (`None`: detached or unborn).
    pub branch: Option<String>,
    /// The commit HEAD is at.
    pub head: Option<String>,
    /// Changed, staged or untracked paths (not ignored ones), at most a few.
    pub dirty: Vec<String>,
}

fn open(path: &Path) -> Result<Repository> {
    Repository::discover(path)
        .map_err(|e| anyhow!("{}: not a git repository ({})", path.display(), e.message()))
}

/// The checkout at `path`.
pub fn checkout(path: &Path) -> Result<Checkout> {
    let repo = open(path)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| anyhow!("{}: a bare repository has no work tree", path.display()))?
        .to_path_buf();
    let branch = match repo.head_detached() {
        Ok(false) => repo
            .head()
            .ok()
            .and_then(|h| h.shorthand().ok().map(str::to_string)),
        _ => None,
    };
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .with_context(|| format!("{}: cannot read the git status", workdir.display()))?;
    let dirty = statuses
        .iter()
        .filter(|s| !s.status().is_ignored())
        .filter_map(|s| s.path().ok().map(str::to_string))
        .take(5)
        .collect();
    Ok(Checkout {
        workdir,
        branch,
        head,
        dirty,
    })
}

/// The tip of the local branch `name`, and its message.
pub fn branch_tip(path: &Path, name: &str) -> Result<Option<(String, String)>> {
    let repo = open(path)?;
    let Ok(b) = repo.find_branch(name, BranchType::Local) else {
        return Ok(None);
    };
    let c = b.get().peel_to_commit()?;
    let msg = String::from_utf8_lossy(c.message_raw_bytes()).into_owned();
    Ok(Some((c.id().to_string(), msg)))
}

/// Whether a commit message is the git flow's for rebinding `from` to `to`
/// (the subject starts `rebind: ` and the body names both endpoints, as
/// the flow writes it).
pub fn is_cutover_message(msg: &str, from: &str, to: &str) -> bool {
    msg.starts_with("rebind: ") && msg.contains(&format!("from\n  {from}\nto\n  {to}\n"))
}

/// Runs the system git in `dir`; its standard output, or an error naming
/// the command.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(dir);
    match crate::repo::git::run_process(cmd, b"", true) {
        Ok((out, _)) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(crate::repo::git::Ran::Interrupted(stop)) => Err(anyhow::Error::new(stop)),
        Err(crate::repo::git::Ran::Failed(e)) => bail!("`git {}` failed: {e}", args.join(" ")),
    }
}

/// Whether `remote` answers (`git ls-remote --heads`): the preflight's
/// "reachable for push", before any repository is written.
pub fn reachable(dir: &Path, remote: &str) -> Result<()> {
    git(dir, &["ls-remote", "--heads", remote]).map(|_| ())
}

/// Whether `commit` is on `base`: on the remote's `base` (fetched) when a
/// remote is given, else on the local branch. `Ok(false)` when it is not
/// (or the base is not there); an error when git cannot tell.
pub fn merged(dir: &Path, remote: Option<&str>, base: &str, commit: &str) -> Result<bool> {
    let tip = match remote {
        Some(r) => {
            let out = git(dir, &["ls-remote", r, &format!("refs/heads/{base}")])?;
            let Some(tip) = out.split_whitespace().next() else {
                return Ok(false);
            };
            if open(dir)?.find_commit(git2::Oid::from_str(tip)?).is_err() {
                git(dir, &["fetch", "--quiet", r, &format!("refs/heads/{base}")])?;
            }
            tip.to_string()
        }
        None => match branch_tip(dir, base)? {
            Some((tip, _)) => tip,
            None => return Ok(false),
        },
    };
    let repo = open(dir)?;
    let (tip, commit) = (git2::Oid::from_str(&tip)?, git2::Oid::from_str(commit)?);
    Ok(tip == commit || repo.graph_descendant_of(tip, commit).unwrap_or(false))
}

/// Clones `url` into `dir` (on `base`) unless `dir` already holds a clone.
pub fn clone_into(url: &str, dir: &Path, base: &str) -> Result<()> {
    if dir.join(".git").exists() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("{}: cannot create the cache", parent.display()))?;
    let target = dir
        .file_name()
        .map_or_else(|| dir.to_string_lossy(), |n| n.to_string_lossy())
        .into_owned();
    git(
        parent,
        &["clone", "--quiet", "--branch", base, "--", url, &target],
    )
    .map(|_| ())
}

/// Whether `remote`'s branch `branch` is at `commit` (`git ls-remote`):
/// what a push is recorded by. `false` when git cannot tell.
pub fn remote_has(dir: &Path, remote: &str, branch: &str, commit: &str) -> bool {
    git(dir, &["ls-remote", remote, &format!("refs/heads/{branch}")])
        .is_ok_and(|out| out.split_whitespace().next() == Some(commit))
}

/// Switches the clean work tree at `dir` to the local branch `branch`
/// (`git switch`): a workspace re-run goes back to the base before it runs
/// the single flow again, which then finds its branch holding the change.
pub fn switch(dir: &Path, branch: &str) -> Result<()> {
    git(dir, &["switch", "--quiet", branch]).map(|_| ())
}
