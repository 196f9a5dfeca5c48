//! Which tracked files git's ignore rules would hide: a `.gitignore` (or
//! `.git/info/exclude`, or the global excludes file) can match a file that
//! git tracks all the same (`git add -f`, or a rule added after the file),
//! and the commit ArgoCD checks out holds it. The walk honours the ignore
//! rules to stay out of build output and caches, so it is told these files
//! by name ([`super::walk::WalkRequest::tracked_hidden`]).
//!
//! The rules are read as git reads them: a path is hidden when it or any
//! folder above it is ignored; for each, the deepest `.gitignore` with a
//! matching pattern decides (its last matching pattern, `!` re-including),
//! then `info/exclude`, then the global file. Each folder's decision is
//! made once.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The paths of `tracked` (`/`-separated, relative to the work tree
/// `workdir`) that git's ignore rules match, themselves or through a folder
/// above them. `info_exclude`: the repository's `info/exclude` file.
pub fn ignored_among<'a>(
    workdir: &Path,
    tracked: impl IntoIterator<Item = &'a str>,
    info_exclude: Option<&Path>,
) -> Vec<String> {
    let mut rules = Rules::new(workdir, info_exclude);
    tracked
        .into_iter()
        .filter(|rel| rules.hidden(rel))
        .map(str::to_string)
        .collect()
}

struct Rules<'w> {
    workdir: &'w Path,
    /// Each folder's own `.gitignore` (`""` is the work tree's).
    own: HashMap<String, Option<Gitignore>>,
    /// `info/exclude`, then the global excludes file.
    base: Vec<Gitignore>,
    /// Whether a folder is hidden, itself or through a folder above it.
    folders: HashMap<String, bool>,
}

impl<'w> Rules<'w> {
    fn new(workdir: &'w Path, info_exclude: Option<&Path>) -> Rules<'w> {
        let mut base = Vec::new();
        if let Some(file) = info_exclude {
            let mut b = GitignoreBuilder::new(workdir);
            if b.add(file).is_none() {
                base.extend(b.build().ok());
            }
        }
        base.push(GitignoreBuilder::new(workdir).build_global().0);
        Rules {
            workdir,
            own: HashMap::new(),
            base,
            folders: HashMap::new(),
        }
    }

    /// Whether the file `rel` is hidden.
    fn hidden(&mut self, rel: &str) -> bool {
        let parent = rel.rfind('/').map_or("", |i| &rel[..i]);
        (!parent.is_empty() && self.folder_hidden(parent)) || self.decides(rel, false)
    }

    fn folder_hidden(&mut self, dir: &str) -> bool {
        if let Some(&h) = self.folders.get(dir) {
            return h;
        }
        let parent = dir.rfind('/').map_or("", |i| &dir[..i]);
        let h = (!parent.is_empty() && self.folder_hidden(parent)) || self.decides(dir, true);
        self.folders.insert(dir.to_string(), h);
        h
    }

    /// Whether the rules ignore `rel` itself: the deepest `.gitignore`
    /// above it that matches decides, then the repository's and the global
    /// excludes.
    fn decides(&mut self, rel: &str, is_dir: bool) -> bool {
        let path = self.workdir.join(rel);
        let mut dir = rel.rfind('/').map_or("", |i| &rel[..i]);
        loop {
            if let Some(g) = self.own_rules(dir) {
                match g.matched(&path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            if dir.is_empty() {
                break;
            }
            dir = dir.rfind('/').map_or("", |i| &dir[..i]);
        }
        for g in &self.base {
            match g.matched(&path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    fn own_rules(&mut self, dir: &str) -> Option<&Gitignore> {
        let workdir = self.workdir;
        self.own
            .entry(dir.to_string())
            .or_insert_with(|| {
                let folder: PathBuf = workdir.join(dir);
                let file = folder.join(".gitignore");
                if !file.is_file() {
                    return None;
                }
                let mut b = GitignoreBuilder::new(&folder);
                b.add(&file);
                b.build().ok().filter(|g| !g.is_empty())
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = t.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        t
    }

    fn hidden(t: &tempfile::TempDir, tracked: &[&str]) -> Vec<String> {
        ignored_among(t.path(), tracked.iter().copied(), None)
    }

    #[test]
    fn a_file_is_hidden_by_its_own_pattern_or_a_folder_above_it() {
        let t = tree(&[
            (".gitignore", "generated-*.yaml\nbuild/\n"),
            ("apps/.gitignore", "!generated-keep.yaml\nlocal.yaml\n"),
        ]);
        let tracked = [
            "apps/a.yaml",
            "apps/generated-b.yaml",
            "apps/generated-keep.yaml",
            "apps/local.yaml",
            "build/apps/c.yaml",
            "other/local.yaml",
        ];
        assert_eq!(
            hidden(&t, &tracked),
            [
                "apps/generated-b.yaml",
                "apps/local.yaml",
                "build/apps/c.yaml"
            ]
        );
    }

    #[test]
    fn a_file_under_an_ignored_folder_stays_hidden_whatever_re_includes_it() {
        // git does not look into an ignored folder: `!` below it is moot.
        let t = tree(&[(".gitignore", "out/\n"), ("out/.gitignore", "!*.yaml\n")]);
        assert_eq!(hidden(&t, &["out/a.yaml"]), ["out/a.yaml"]);
    }

    #[test]
    fn info_exclude_applies_below_every_gitignore() {
        let t = tree(&[("exclude", "*.yaml\n"), ("apps/.gitignore", "!a.yaml\n")]);
        let exclude = t.path().join("exclude");
        let got = ignored_among(t.path(), ["apps/a.yaml", "apps/b.yaml"], Some(&exclude));
        assert_eq!(got, ["apps/b.yaml"]);
    }

    #[test]
    fn nothing_is_hidden_without_rules() {
        let t = tree(&[("apps/a.yaml", "")]);
        assert!(hidden(&t, &["apps/a.yaml", ".ignore"]).is_empty());
    }
}
