//! The git flow of `apply`: checks that the repository can take the change
//! (a branch checked out, target files clean, an identity, a free branch
//! name), commits only the rewritten files on a new branch made from HEAD,
//! switches the working tree to it like `git switch -c`, and optionally pushes.
//!
//! The commit object is built from HEAD's tree plus the new blobs, so the
//! index and every other file of the working tree are left as they were.

use crate::rewrite::FilePlan;
use anyhow::{anyhow, bail, Context, Result};
use git2::{BranchType, ErrorCode, Oid, Repository, Signature, Status};
use std::path::{Path, PathBuf};

/// An open repository and its work tree (canonical path).
pub struct Repo {
    repo: Repository,
    workdir: PathBuf,
}

/// What the checks before writing established.
pub struct Prepared {
    pub branch: String,
    /// Each plan's path relative to the work tree, `/`-separated.
    rel_paths: Vec<String>,
    head: Oid,
    /// The branch exists and already holds exactly this change.
    pub already_done: Option<Oid>,
}

/// The outcome of committing.
pub struct Committed {
    pub branch: String,
    pub commit: String,
    pub pushed_to: Option<String>,
}

/// Opens the repository holding `path`, or `None` when it is in none.
pub fn open(path: &Path) -> Result<Option<Repo>> {
    let repo = match Repository::discover(path) {
        Ok(r) => r,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => {
            return Err(
                anyhow!(e).context(format!("{}: cannot open git repository", path.display()))
            )
        }
    };
    let Some(workdir) = repo.workdir() else {
        bail!(
            "{}: is in a bare git repository; nothing to rewrite",
            path.display()
        );
    };
    let workdir = workdir.canonicalize()?;
    Ok(Some(Repo { repo, workdir }))
}

/// Default branch name: `rebind/<first label of the new host, lower-case>`.
pub fn default_branch(new_host: &str) -> String {
    let label = new_host.split('.').next().unwrap_or(new_host);
    format!("rebind/{}", label.to_ascii_lowercase())
}

fn env_or(var: &str, fallback: Option<String>) -> Option<String> {
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .or(fallback)
}

impl Repo {
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    fn rel(&self, path: &Path) -> Result<String> {
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
        Ok(rel.to_string_lossy().replace('\\', "/"))
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

    /// Every check that can fail before a byte is written.
    pub fn prepare(
        &self,
        plans: &[FilePlan],
        branch: Option<&str>,
        default: &str,
    ) -> Result<Prepared> {
        let head = match self.repo.head() {
            Ok(h) => h,
            Err(e) if e.code() == ErrorCode::UnbornBranch => {
                bail!("the git repository has no commits yet; commit first or pass --no-commit; nothing written")
            }
            Err(e) => return Err(anyhow!(e).context("cannot read HEAD")),
        };
        if self.repo.head_detached()? && branch.is_none() {
            bail!("HEAD is detached; pass --branch NAME to say which branch to create, or --no-commit; nothing written");
        }
        let head = head.peel_to_commit()?.id();
        let branch = branch.unwrap_or(default).to_string();
        if !git2::Branch::name_is_valid(&branch)? {
            bail!("--branch {branch:?}: not a valid branch name");
        }
        let rel_paths = plans
            .iter()
            .map(|p| self.rel(&p.path))
            .collect::<Result<Vec<_>>>()?;
        let mut dirty = Vec::new();
        for rel in &rel_paths {
            let st = self.repo.status_file(Path::new(rel))?;
            if st.intersects(Status::WT_NEW) {
                dirty.push(format!("  {rel} (not tracked by git)"));
            } else if !st.is_empty() && st != Status::CURRENT {
                dirty.push(format!("  {rel} (has uncommitted changes)"));
            }
        }
        if !dirty.is_empty() {
            bail!(
                "refusing to commit: files to rewrite differ from HEAD; commit or stash them first (or use --no-commit); nothing written:\n{}",
                dirty.join("\n")
            );
        }
        self.identities()?;
        let mut already_done = None;
        if let Ok(existing) = self.repo.find_branch(&branch, BranchType::Local) {
            let tip = existing.get().peel_to_commit()?;
            let want = self.tree_for(plans, &rel_paths, head)?;
            let same = tip.tree_id() == want && tip.parent_ids().any(|p| p == head);
            if !same {
                bail!("branch {branch} already exists and holds something else; pass --branch NAME or delete it; nothing written");
            }
            already_done = Some(tip.id());
        }
        Ok(Prepared {
            branch,
            rel_paths,
            head,
            already_done,
        })
    }

    /// HEAD's tree with the planned files replaced by their new bytes.
    fn tree_for(&self, plans: &[FilePlan], rel_paths: &[String], head: Oid) -> Result<Oid> {
        let head_tree = self.repo.find_commit(head)?.tree()?;
        let mut index = git2::Index::new()?;
        index.read_tree(&head_tree)?;
        for (plan, rel) in plans.iter().zip(rel_paths) {
            let mut entry = index
                .get_path(Path::new(rel), 0)
                .ok_or_else(|| anyhow!("{rel}: not in HEAD"))?;
            entry.id = self.repo.blob(plan.new.as_bytes())?;
            entry.file_size = plan.new.len() as u32;
            index.add(&entry)?;
        }
        Ok(index.write_tree_to(&self.repo)?)
    }

    /// Creates the commit object (no ref moves yet).
    pub fn commit(&self, prep: &Prepared, plans: &[FilePlan], message: &str) -> Result<Oid> {
        let tree = self
            .repo
            .find_tree(self.tree_for(plans, &prep.rel_paths, prep.head)?)?;
        let parent = self.repo.find_commit(prep.head)?;
        let (author, committer) = self.identities()?;
        Ok(self
            .repo
            .commit(None, &author, &committer, message, &tree, &[&parent])?)
    }

    /// After the files are written: creates the branch at `commit`, checks it
    /// out (HEAD and the index entries of the rewritten files).
    pub fn switch(&self, prep: &Prepared, commit: Oid) -> Result<()> {
        let c = self.repo.find_commit(commit)?;
        self.repo.branch(&prep.branch, &c, false)?;
        self.repo.set_head(&format!("refs/heads/{}", prep.branch))?;
        let mut index = self.repo.index()?;
        for rel in &prep.rel_paths {
            index.add_path(Path::new(rel))?;
        }
        index.write()?;
        Ok(())
    }

    /// Pushes the branch to `remote` (no credentials: local and anonymous remotes).
    pub fn push(&self, remote: &str, branch: &str) -> Result<()> {
        let mut r = self
            .repo
            .find_remote(remote)
            .with_context(|| format!("--push {remote}: no such remote"))?;
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        r.push(&[spec.as_str()], None).with_context(|| {
            format!("pushing {branch} to {remote} failed; the commit is on the local branch")
        })?;
        Ok(())
    }
}

/// Commits `plans` on a new branch and switches to it, writing the files in
/// between (all or nothing). Returns the branch and commit.
pub fn commit_flow(
    repo: &Repo,
    prep: &Prepared,
    plans: &[FilePlan],
    message: &str,
    push: Option<&str>,
) -> Result<Committed> {
    let commit = repo.commit(prep, plans, message)?;
    crate::write::write_all(plans)?;
    if let Err(e) = repo.switch(prep, commit) {
        let restored =
            crate::write::write_all(&plans.iter().map(FilePlan::reversed).collect::<Vec<_>>());
        return Err(e.context(match restored {
            Ok(()) => "switching to the new branch failed; the files were restored".to_string(),
            Err(r) => format!(
                "switching to the new branch failed, and restoring the files failed too: {r:#}"
            ),
        }));
    }
    if let Some(remote) = push {
        repo.push(remote, &prep.branch)?;
    }
    Ok(Committed {
        branch: prep.branch.clone(),
        commit: commit.to_string(),
        pushed_to: push.map(str::to_string),
    })
}
