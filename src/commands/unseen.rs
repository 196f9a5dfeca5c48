//! Files holding an endpoint that the walk of the work tree does not read:
//! those the exclude globs leave out ([`excluded_holding`]), and tracked
//! files whose committed content holds it while the work tree does not
//! (deleted or edited without a commit, [`uncommitted_holding`]): ArgoCD
//! deploys the commit, not the work tree.

use crate::discover::walk::{self, Walk};
use anyhow::Result;
use std::path::PathBuf;

/// How many times `bytes` hold `host` (already lowercase), as text, any case.
fn count(bytes: &[u8], host: &str) -> usize {
    let finder = memchr::memmem::Finder::new(host.as_bytes());
    let buf = bytes.to_ascii_lowercase();
    finder.find_iter(&buf).count()
}

/// The files the exclude globs leave out that still hold one of `hosts`
/// (lowercase; as text, any case), with how many times: named as skipped,
/// never read further nor rewritten, so that a run that leaves a deployed
/// file holding the old endpoint says so.
pub fn excluded_counts(walk: &Walk, hosts: &[String]) -> Vec<(walk::Entry, usize)> {
    let mut out = Vec::new();
    for e in walk.excluded() {
        let buf = match walk::read(&e) {
            walk::Content::Text(t) | walk::Content::Decoded { text: t, .. } => t.into_bytes(),
            walk::Content::Binary(b) | walk::Content::NotUtf8 { bytes: b, .. } => b,
            walk::Content::Unreadable(_) => continue,
        };
        let n: usize = hosts.iter().map(|h| count(&buf, h)).sum();
        if n > 0 {
            out.push((e, n));
        }
    }
    out
}

/// [`excluded_counts`] of the old endpoint's `host`, as skipped files.
pub fn excluded_holding(walk: &Walk, host: &str) -> Vec<walk::Skipped> {
    excluded_counts(walk, &[host.to_string()])
        .into_iter()
        .map(|(e, n)| walk::Skipped {
            rel: e.rel,
            reason: format!(
                "left out by the exclude globs (--exclude or the config's `exclude`), but holds the old endpoint's host ({}): not rewritten",
                crate::text::words::count(n, "time")
            ),
            may_hold: false,
        })
        .collect()
}

/// A tracked file whose committed content (HEAD, or the index when
/// staged) holds a host the work tree's copy does not hold.
#[derive(Debug, Clone)]
pub struct Uncommitted {
    /// Relative to the work tree.
    pub rel: String,
    /// "deleted", "modified" or "type changed".
    pub state: &'static str,
    /// The host the committed content holds.
    pub host: String,
}

/// Which committed content [`uncommitted_holding`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// HEAD and the index (a rebind: the branch deployed now, and what a
    /// commit of it would hold).
    HeadAndIndex,
    /// The index only (`check`: what the commit being made holds; a staged
    /// deletion or fix is what it commits).
    Index,
}

/// The tracked files below `paths` whose committed content (`which`)
/// holds one of `hosts` (lowercase; as text, any case) while the work
/// tree's copy does not (deleted, edited, type changed, without a commit):
/// a walk of the work tree does not see what a commit of the branch
/// deploys. Empty outside a git repository.
pub fn uncommitted_holding(
    paths: &[PathBuf],
    hosts: &[String],
    which: Committed,
) -> Result<Vec<Uncommitted>> {
    let mut out = Vec::new();
    for u in crate::repo::git::uncommitted_below(paths)? {
        let now = std::fs::symlink_metadata(&u.path)
            .ok()
            .filter(|m| m.is_file())
            .and_then(|_| std::fs::read(&u.path).ok())
            .unwrap_or_default();
        let held = hosts.iter().find(|h| {
            let head = which == Committed::HeadAndIndex
                && u.head.as_ref().is_some_and(|c| count(c, h) > 0);
            let index = u.index.as_ref().is_some_and(|c| count(c, h) > 0);
            (head || index) && count(&now, h) == 0
        });
        if let Some(h) = held {
            out.push(Uncommitted {
                rel: u.rel,
                state: u.state,
                host: h.clone(),
            });
        }
    }
    Ok(out)
}

/// Refuses a rebind while a tracked file's committed content holds the old
/// endpoint's `host` and its work-tree copy does not: the cutover commit
/// would still hold it, and what was read would not prove the branch clean.
pub fn refuse_uncommitted(paths: &[PathBuf], host: &str) -> Result<()> {
    let found = uncommitted_holding(paths, &[host.to_ascii_lowercase()], Committed::HeadAndIndex)?;
    if found.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = found
        .iter()
        .map(|u| format!("  {}: {} in the work tree", u.rel, u.state))
        .collect();
    let message = listed(&list, |files| {
        format!("{files}: the committed content holds the endpoint, the working tree does not: commit or restore it first; nothing written")
    });
    message.map_or(Ok(()), |m| {
        Err(crate::sys::coded::err("uncommitted-endpoint", m))
    })
}

/// The message of a refusal that names each line of `list` below what
/// `what` says of their count (`N files`); `None` when it is empty.
pub fn listed(list: &[String], what: impl FnOnce(&str) -> String) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let files = crate::text::words::count(list.len(), "file");
    Some(format!("{}:\n{}", what(&files), list.join("\n")))
}
