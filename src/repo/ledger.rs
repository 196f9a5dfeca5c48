//! The workspace ledger: what `rebind workspace apply` (or `rollback`) did
//! in each repository, kept next to the workspace file, outside every
//! repository. One section per change (`from -> to`; a rollback is its own
//! section), one record per repository. A step is recorded only after the
//! repository shows it (the branch at the commit, the remote holding it,
//! the client's answer), so a re-run resumes where the last one stopped,
//! never repeats a done step and never claims one it did not do.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The ledger's format version.
pub const LEDGER_VERSION: u32 = 1;

/// A pull (merge) request a run opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub url: String,
    pub number: Option<u64>,
    /// `gh` or `glab`.
    pub client: String,
}

/// What was done in one repository for one change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The repository held nothing to change (its tree had no value of
    /// the old endpoint on its base).
    #[serde(default)]
    pub nothing_to_change: bool,
    /// The cutover branch and its commit, once committed.
    pub branch: Option<String>,
    pub commit: Option<String>,
    /// The remote the branch was pushed to.
    pub pushed_to: Option<String>,
    pub pull_request: Option<PullRequest>,
    /// The change is on the base branch (shown by git or by the client).
    #[serde(default)]
    pub merged: bool,
}

/// The ledger file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub schema_version: u32,
    /// `from -> to` to each repository's record.
    pub changes: BTreeMap<String, BTreeMap<String, Record>>,
}

/// The section key of a change.
pub fn key(from: &str, to: &str) -> String {
    format!("{from} -> {to}")
}

/// Where the ledger of `workspace` lives: beside it, named after it
/// (`rebind-workspace.yaml` → `rebind-workspace.ledger.json`).
pub fn path_for(workspace: &Path) -> PathBuf {
    let stem = workspace.file_stem().map_or_else(
        || "rebind-workspace".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    workspace.with_file_name(format!("{stem}.ledger.json"))
}

impl Ledger {
    /// Reads the ledger at `path`; an empty one when there is none yet. A
    /// ledger that does not read is an error, never "nothing done".
    pub fn load(path: &Path) -> Result<Ledger> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Ledger {
                    schema_version: LEDGER_VERSION,
                    ..Ledger::default()
                })
            }
            Err(e) => bail!("{}: cannot read the ledger: {e}", path.display()),
        };
        let ledger: Ledger = serde_json::from_str(&text).map_err(|e| {
            anyhow!(
                "{}:{}:{}: not a rebind workspace ledger: {e}; it records what earlier runs did, so rebind will not guess: fix or remove it",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if ledger.schema_version != LEDGER_VERSION {
            bail!(
                "{}: ledger schema_version {}; this rebind reads version {LEDGER_VERSION}",
                path.display(),
                ledger.schema_version
            );
        }
        Ok(ledger)
    }

    /// Writes the ledger atomically (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        crate::edit::write::write_file(
            path,
            text.as_bytes(),
            crate::edit::write::Mode::Keep,
            crate::edit::write::Existing::Replace,
            &|_| Ok(()),
        )
        .with_context(|| format!("{}: cannot write the ledger", path.display()))
    }

    /// The records of the change `key`.
    pub fn records(&self, key: &str) -> BTreeMap<String, Record> {
        self.changes.get(key).cloned().unwrap_or_default()
    }

    /// Sets the record of `repo` for the change `key`.
    pub fn set(&mut self, key: &str, repo: &str, record: Record) {
        self.changes
            .entry(key.to_string())
            .or_default()
            .insert(repo.to_string(), record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let p = path_for(&dir.path().join("rebind-workspace.yaml"));
        assert!(p.ends_with("rebind-workspace.ledger.json"));
        let mut l = Ledger::load(&p).unwrap();
        assert!(l.changes.is_empty());
        l.set(
            &key("https://a", "https://b"),
            "tf",
            Record {
                branch: Some("rebind/b".into()),
                commit: Some("c0ffee".into()),
                ..Record::default()
            },
        );
        l.save(&p).unwrap();
        assert_eq!(Ledger::load(&p).unwrap(), l);
        std::fs::write(&p, "{\"schema_version\": 1, \"changes\": [").unwrap();
        let e = format!("{:#}", Ledger::load(&p).unwrap_err());
        assert!(e.contains("not a rebind workspace ledger"), "{e}");
        std::fs::write(&p, "{\"schema_version\": 9, \"changes\": {}}").unwrap();
        assert!(Ledger::load(&p).is_err());
    }
}
