//! Discovering the files to look at: walks each PATH (gitignore-aware, `.git`
//! skipped, symlinks never followed), sorts files into YAML (parsed, may be
//! rewritten) and other text (reported only), and reads them, naming every
//! file that is skipped and why.

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// Globs of the files parsed as YAML when no `--include` is given.
pub const DEFAULT_INCLUDE: [&str; 3] = ["**/*.yaml", "**/*.yml", "**/*.json"];

/// How a discovered file is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Matches `--include`: parsed as YAML, may be rewritten.
    Yaml,
    /// Any other file: endpoints in it are reported as `text`, never rewritten.
    Text,
}

/// A file to read.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Path to open.
    pub path: PathBuf,
    /// Path shown to the user: relative to the walked root, `/`-separated.
    pub rel: String,
    pub role: Role,
}

/// A file that was not read or not rewritten, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub rel: String,
    pub reason: String,
}

/// The outcome of discovery.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
}

fn globset(globs: &[String], flag: &str) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).with_context(|| format!("{flag} {g:?}: invalid glob"))?);
    }
    b.build().with_context(|| format!("{flag}: invalid globs"))
}

/// Walks `paths`. A directory is walked honouring `.gitignore` (also outside a
/// git repository), `.ignore` and the global git excludes; a file is taken as
/// given. `exclude` globs drop files entirely; `include` globs (default
/// [`DEFAULT_INCLUDE`]) pick the YAML files.
pub fn discover(paths: &[PathBuf], include: &[String], exclude: &[String]) -> Result<Walk> {
    let include = if include.is_empty() {
        DEFAULT_INCLUDE.iter().map(|s| s.to_string()).collect()
    } else {
        include.to_vec()
    };
    let include = globset(&include, "--include")?;
    let exclude = globset(exclude, "--exclude")?;
    let mut walk = Walk::default();
    for root in paths {
        let meta = std::fs::symlink_metadata(root)
            .with_context(|| format!("{}: cannot read", root.display()))?;
        if meta.is_file() || meta.file_type().is_symlink() && !root.is_dir() {
            if is_config(root) {
                continue;
            }
            let rel = root.to_string_lossy().replace('\\', "/");
            if meta.file_type().is_symlink() {
                walk.skipped.push(Skipped {
                    rel,
                    reason: "symbolic link, not followed".into(),
                });
                continue;
            }
            let role = if include.is_match(file_name(root)) {
                Role::Yaml
            } else {
                role_of(&include, &rel)
            };
            walk.entries.push(Entry {
                path: root.clone(),
                rel,
                role,
            });
            continue;
        }
        walk_dir(root, &include, &exclude, &mut walk);
    }
    walk.entries.sort_by(|a, b| a.rel.cmp(&b.rel));
    walk.entries.dedup_by(|a, b| a.path == b.path);
    walk.skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(walk)
}

/// rebind's own config holds endpoints by design; it is read by `config`, never scanned.
fn is_config(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == crate::config::FILE_NAME)
}

fn role_of(include: &GlobSet, rel: &str) -> Role {
    if include.is_match(rel) {
        Role::Yaml
    } else {
        Role::Text
    }
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|s| s.to_str()).unwrap_or("")
}

fn walk_dir(root: &Path, include: &GlobSet, exclude: &GlobSet, walk: &mut Walk) {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .parents(true)
        .filter_entry(|e| e.file_name() != ".git");
    for result in builder.build() {
        let entry = match result {
            Ok(e) => e,
            Err(err) => {
                walk.skipped.push(Skipped {
                    rel: root.display().to_string(),
                    reason: format!("cannot walk: {err}"),
                });
                continue;
            }
        };
        let Some(ft) = entry.file_type() else {
            continue;
        };
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if rel.is_empty() || exclude.is_match(&rel) || is_config(entry.path()) {
            continue;
        }
        if ft.is_symlink() {
            walk.skipped.push(Skipped {
                rel,
                reason: "symbolic link, not followed".into(),
            });
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        walk.entries.push(Entry {
            path: entry.into_path(),
            role: role_of(include, &rel),
            rel,
        });
    }
}

/// What reading a file produced.
pub enum Content {
    Text(String),
    /// Holds a NUL byte in its first 8 KiB.
    Binary(Vec<u8>),
    /// Not valid UTF-8; `line` is where the first bad byte sits.
    NotUtf8 {
        bytes: Vec<u8>,
        line: usize,
    },
}

/// Reads a file whole and classifies it.
pub fn read(entry: &Entry) -> Result<Content> {
    let bytes =
        std::fs::read(&entry.path).with_context(|| format!("{}: cannot read", entry.rel))?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Ok(Content::Binary(bytes));
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok(Content::Text(s)),
        Err(e) => {
            let upto = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = bytes[..upto].iter().filter(|&&b| b == b'\n').count() + 1;
            Ok(Content::NotUtf8 { bytes, line })
        }
    }
}
