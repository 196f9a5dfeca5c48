//! Discovering the files to look at, and reading them.
//!
//! [`discover`] takes a [`WalkRequest`]: the PATHs as given, the repository
//! root (the directory of the config, when there is one), the include and
//! exclude globs, and the config's own path.
//!
//! - A directory PATH is walked honouring git's ignore rules (`.gitignore`,
//!   also outside a git repository, `.git/info/exclude` and the global git
//!   excludes), but never hiding a file git tracks: the caller names those
//!   ([`WalkRequest::tracked_hidden`], from the repository's index through
//!   [`ignored_among`]) and the walk yields them in their place, as the
//!   commit (what ArgoCD checks out) holds them. Other tools' ignore files
//!   (`.ignore`, `.rgignore`) are not read: they are no rule of git's.
//!   `.git` is skipped and symbolic links are never followed (they are named
//!   as skipped). A file PATH is taken as given, even when `.gitignore`
//!   lists it.
//! - The config is never an entry, whatever its file name (it is compared by
//!   canonical path); a file named `.rebind.yaml` never is either. A
//!   directory named `.rebind` ([`REBIND_DIR`]: rebind's own, where `apply
//!   --pr` commits a review too long for a pull-request body) is not
//!   entered: the review quotes the old endpoint, and is no place to rebind.
//! - Globs have `.gitignore` semantics: a pattern without `/` (other than a
//!   trailing one) matches a name at any depth (`karpenter.yaml` matches
//!   `apps/karpenter.yaml`), a pattern with a `/` is anchored at the root,
//!   `*` does not cross `/`, `**` does, `dir/` matches a directory, and a
//!   pattern that matches a directory matches everything under it. They are
//!   matched against the path relative to `root` for walked files and files
//!   named on the command line alike, whatever the current directory and
//!   whichever PATH led to the file. Without a root (no config), or for a file
//!   outside it, the path is taken relative to the walked PATH (a file named
//!   on the command line: relative to the current directory when it lies
//!   there, else its file name).
//! - `exclude` drops files entirely (an excluded directory is not entered);
//!   `include` (default [`DEFAULT_INCLUDE`]) picks the files parsed as YAML;
//!   every other file is searched as text.
//! - Each file is listed once: paths are compared canonicalised, so
//!   `apps ./apps/a.yaml` yields `apps/a.yaml` once. The name shown
//!   ([`Entry::rel`]) is the PATH as typed (without `./`) joined with the path
//!   below it; a PATH that is absolute or climbs with `..` (the config's root
//!   seen from a subdirectory) is shown relative to the current directory
//!   (`../stage/a.yaml`, `a.yaml`), unless the two share only `/`.
//! - Files come in a fixed order: by canonical path, component by component
//!   (`apps/x.yaml` before `apps.yaml`), whatever the PATHs' spelling or
//!   order and whether one lies inside another. The walk is lazy:
//!   [`Walk::files`] reads directories as it is iterated, so memory does not
//!   grow with the number of files.
//! - A directory that cannot be read, and (through [`read`]) a file that cannot
//!   be read or vanished after it was listed, is named as [`Skipped`] with the
//!   reason; only a PATH that does not exist at all is an error.
//!
//! [`read`] classifies a file: UTF-8 text, UTF-16/UTF-32 text recognised by
//! its byte order mark (decoded), other non-UTF-8 bytes, binary, or unreadable.

use anyhow::{bail, Context, Result};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The file name of the config (`.rebind.yaml`), which the walk never yields.
pub const CONFIG_FILE: &str = ".rebind.yaml";

/// rebind's own directory in a repository, which the walk never enters.
pub const REBIND_DIR: &str = ".rebind";

/// The globs of the files parsed as YAML when the config names none.
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
    /// Path shown to the user: the PATH as typed joined with the path below
    /// it, `/`-separated, without `./`.
    pub rel: String,
    pub role: Role,
}

/// A file that was not read or not rewritten, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub rel: String,
    pub reason: String,
    /// It may hold an endpoint that was not read (unreadable, vanished, or a
    /// YAML file in an encoding rebind does not parse holding endpoint text):
    /// a rebind cannot promise it found everything, so it refuses.
    pub may_hold: bool,
}

/// One thing the walk found: a file to read, or one it will not read.
#[derive(Debug, Clone)]
pub enum Found {
    Entry(Entry),
    Skipped(Skipped),
}

/// A walk ready to run: the PATHs checked and the globs compiled.
///
/// [`Walk::files`] walks the file system as it is iterated, so a walk of any
/// size holds only the directories it is inside of, never the list of files.
/// The order is the same every time: by canonical path, component-wise
/// (PATHs sorted so, and below each one, names byte-wise directory by
/// directory). When PATHs overlap (`apps apps/a.yaml`), the files are listed
/// up front instead, each once, in that same order.
#[derive(Debug, Clone)]
pub struct Walk(std::sync::Arc<Plan>);

// Held once, behind an `Arc`: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Plan {
    Listed(Vec<Found>),
    Paths {
        filter: Filter,
        config: Option<PathBuf>,
        paths: Vec<Given>,
        /// [`WalkRequest::tracked_hidden`], sorted.
        hidden: Vec<PathBuf>,
    },
}

/// A PATH from the command line.
#[derive(Debug, Clone)]
struct Given {
    path: PathBuf,
    /// Its canonical path (the file's own name kept for a symbolic link).
    identity: Option<PathBuf>,
    /// How it is shown ([`display_base`]).
    shown: String,
    is_dir: bool,
}

impl Walk {
    /// A walk over exactly these entries, in this order (tests, and callers
    /// that already know their files).
    pub fn of_entries(entries: Vec<Entry>) -> Walk {
        Walk(std::sync::Arc::new(Plan::Listed(
            entries.into_iter().map(Found::Entry).collect(),
        )))
    }

    /// The first PATH given on the command line (`None` for a walk over
    /// listed entries): where the repository holding the walk is looked for.
    pub fn first_path(&self) -> Option<&Path> {
        match &*self.0 {
            Plan::Paths { paths, .. } => paths.first().map(|g| g.path.as_path()),
            Plan::Listed(_) => None,
        }
    }

    /// Walks the file system, yielding files and skipped paths in order.
    /// Each call walks anew.
    pub fn files(&self) -> Files<'_> {
        Files {
            plan: &self.0,
            next: 0,
            dir: None,
            keep: None,
        }
    }

    /// The entries of [`Walk::files`] whose path `keep` accepts, walked
    /// now. A file `keep` refuses costs a name test, not the work of an
    /// entry (its shown path, its role): what a pass that wants a few files
    /// of the tree (a chart's) pays for the rest.
    pub fn entries_where<'a>(
        &'a self,
        keep: &'a (dyn Fn(&Path) -> bool + Sync),
    ) -> impl Iterator<Item = Entry> + 'a {
        Files {
            keep: Some(keep),
            ..self.files()
        }
        .filter_map(move |f| match f {
            Found::Entry(e) if keep(&e.path) => Some(e),
            _ => None,
        })
    }

    /// The walk's one directory, when its YAML files are exactly the ones a
    /// walk of that directory with default globs yields (one directory PATH,
    /// the default `include`, no `exclude`), the config file aside: what
    /// lets a later step reuse what this walk read instead of walking again.
    pub fn sole_dir(&self) -> Option<SoleDir> {
        let Plan::Paths {
            filter,
            config,
            paths,
            ..
        } = &*self.0
        else {
            return None;
        };
        let [given] = paths.as_slice() else {
            return None;
        };
        if !given.is_dir || !filter.default_include || !filter.exclude.is_empty() {
            return None;
        }
        Some(SoleDir {
            given: given.path.clone(),
            canonical: given.identity.clone()?,
            config: config.clone(),
        })
    }

    /// The files the exclude globs leave out of this walk (`--exclude`, the
    /// config's `exclude`), walked now: what a run names when they still
    /// hold what it looks for. Empty when nothing is excluded.
    pub fn excluded(&self) -> Vec<Entry> {
        let Plan::Paths {
            filter,
            config,
            paths,
            hidden,
        } = &*self.0
        else {
            return Vec::new();
        };
        if filter.exclude.is_empty() {
            return Vec::new();
        }
        let everything = Walk(std::sync::Arc::new(Plan::Paths {
            filter: Filter {
                include: filter.include.clone(),
                default_include: filter.default_include,
                exclude: Gitignore::empty(),
                root: filter.root.clone(),
                cwd: filter.cwd.clone(),
            },
            config: config.clone(),
            paths: paths.clone(),
            hidden: hidden.clone(),
        }));
        let mut files = everything.files();
        let mut out = Vec::new();
        while let Some((id, found)) = files.next_with_identity() {
            let (Some(id), Found::Entry(e)) = (id, found) else {
                continue;
            };
            let fallback = Path::new(&e.rel);
            if filter.excluded(filter.anchor(&id, fallback), false) {
                out.push(e);
            }
        }
        out
    }

    /// Every entry, walked now (a convenience for small walks and tests).
    pub fn entries(&self) -> Vec<Entry> {
        self.files()
            .filter_map(|f| match f {
                Found::Entry(e) => Some(e),
                Found::Skipped(_) => None,
            })
            .collect()
    }
}

/// See [`Walk::sole_dir`].
#[derive(Debug, Clone)]
pub struct SoleDir {
    /// The directory as given: every entry's path starts with it.
    pub given: PathBuf,
    /// Its canonical path.
    pub canonical: PathBuf,
    /// The config in use (canonical), which the walk never yields.
    pub config: Option<PathBuf>,
}

impl SoleDir {
    /// `path` (an entry of the walk) relative to the directory,
    /// `/`-separated, as a walk of the canonical directory would name it.
    pub fn rel(&self, path: &Path) -> Option<String> {
        path.strip_prefix(&self.given)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
    }
}

/// The iterator of [`Walk::files`].
pub struct Files<'a> {
    plan: &'a Plan,
    /// The next PATH (or listed item) to start.
    next: usize,
    /// The directory PATH being walked.
    dir: Option<DirWalk>,
    /// Only files whose path this accepts matter ([`Walk::entries_where`]).
    keep: Option<&'a (dyn Fn(&Path) -> bool + Sync)>,
}

/// A directory PATH being walked.
struct DirWalk {
    given: usize,
    /// Its canonical path.
    base: PathBuf,
    walk: ignore::Walk,
    /// The tracked files below it that the ignore rules hide, in the
    /// walk's order, merged into it.
    hidden: std::iter::Peekable<std::vec::IntoIter<PathBuf>>,
    /// An item of `walk` held back while hidden files before it go first.
    pending: Option<(Option<PathBuf>, Found)>,
}

impl Iterator for Files<'_> {
    type Item = Found;

    fn next(&mut self) -> Option<Found> {
        self.next_with_identity().map(|(_, f)| f)
    }
}

impl Files<'_> {
    /// The next item and, for a file, its canonical path.
    fn next_with_identity(&mut self) -> Option<(Option<PathBuf>, Found)> {
        let (filter, config, paths, hidden) = match self.plan {
            Plan::Listed(items) => {
                let f = items.get(self.next)?.clone();
                self.next += 1;
                return Some((None, f));
            }
            Plan::Paths {
                filter,
                config,
                paths,
                hidden,
            } => (filter, config.as_deref(), paths, hidden),
        };
        loop {
            if let Some(d) = &mut self.dir {
                let given = &paths[d.given];
                let keep = self.keep;
                let wanted = |p: &Path| keep.is_none_or(|k| k(p));
                loop {
                    let next = match d.pending.take() {
                        Some(found) => Some(found),
                        None => d.walk.by_ref().find_map(|result| match &result {
                            Ok(e) if !wanted(e.path()) => None,
                            _ => dir_item(filter, config, given, &d.base, result),
                        }),
                    };
                    // A hidden tracked file that sorts before the next item
                    // (or every one left, at the end) goes first.
                    let first = match (&next, d.hidden.peek()) {
                        (Some((Some(id), _)), Some(h)) => h < id,
                        (None, Some(_)) => true,
                        _ => false,
                    };
                    if first {
                        d.pending = next;
                        let id = d.hidden.next()?;
                        let path = given.path.join(strip_path(&id, &d.base).unwrap_or(&id));
                        if !wanted(&path) {
                            continue;
                        }
                        match hidden_item(filter, config, given, &d.base, id) {
                            Some(found) => return Some(found),
                            None => continue,
                        }
                    }
                    match next {
                        Some(found) => return Some(found),
                        None => break,
                    }
                }
                self.dir = None;
            }
            let i = self.next;
            let given = paths.get(i)?;
            self.next += 1;
            if !given.is_dir {
                if let Some(found) = given_file(filter, config, given) {
                    return Some(found);
                }
                continue;
            }
            match given.path.canonicalize() {
                Ok(base) => {
                    let below: Vec<PathBuf> = hidden
                        .iter()
                        .filter(|h| h.starts_with(&base) && **h != base)
                        .cloned()
                        .collect();
                    self.dir = Some(DirWalk {
                        given: i,
                        walk: dir_walker(filter, given, &base),
                        base,
                        hidden: below.into_iter().peekable(),
                        pending: None,
                    })
                }
                Err(_) => {
                    return Some((
                        None,
                        Found::Skipped(Skipped {
                            rel: given.shown.clone(),
                            reason: "vanished during the walk".into(),
                            may_hold: true,
                        }),
                    ))
                }
            }
        }
    }
}

/// What to walk and how to filter it.
#[derive(Debug, Clone, Default)]
pub struct WalkRequest {
    /// Files and directories as given on the command line; empty means `.`.
    pub paths: Vec<PathBuf>,
    /// The repository root the globs are relative to: the directory of the
    /// config (`.rebind.yaml`). `None`: relative to each PATH.
    pub root: Option<PathBuf>,
    /// Globs of the files parsed as YAML; empty means [`DEFAULT_INCLUDE`].
    pub include: Vec<String>,
    /// Globs of the files left out entirely.
    pub exclude: Vec<String>,
    /// The config in use: never yielded as an entry.
    pub config_path: Option<PathBuf>,
    /// The files git tracks that the ignore rules would hide (canonical
    /// paths; see [`ignored_among`]): yielded all the same, in their place.
    pub tracked_hidden: Vec<PathBuf>,
}

impl WalkRequest {
    /// A request for `paths` with default globs, no root and no config.
    pub fn for_paths(paths: &[PathBuf]) -> WalkRequest {
        WalkRequest {
            paths: paths.to_vec(),
            ..WalkRequest::default()
        }
    }
}

/// Why `pattern` is not a valid glob, or `None` when it is. The config
/// reader uses it to name the line of a bad `include`/`exclude` entry.
pub fn glob_error(pattern: &str) -> Option<String> {
    let mut b = GitignoreBuilder::new(".");
    add_glob(&mut b, pattern).err()
}

fn add_glob(b: &mut GitignoreBuilder, pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("empty glob".into());
    }
    if pattern.starts_with('#') {
        return Err("a glob starting with `#` is a comment in .gitignore syntax; write `\\#` for a literal #".into());
    }
    b.allow_unclosed_class(false);
    b.add_line(None, pattern).map_err(|e| e.to_string())?;
    Ok(())
}

fn matcher(globs: &[String], flag: &str) -> Result<Gitignore> {
    let mut b = GitignoreBuilder::new(".");
    for g in globs {
        if let Err(e) = add_glob(&mut b, g) {
            bail!("{flag} {g:?}: invalid glob: {e}");
        }
    }
    b.build().with_context(|| format!("{flag}: invalid globs"))
}

/// The compiled include/exclude globs and where they are anchored.
#[derive(Debug)]
struct Filter {
    include: Gitignore,
    /// `include` is [`DEFAULT_INCLUDE`] (given or not).
    default_include: bool,
    exclude: Gitignore,
    /// Canonical repository root.
    root: Option<PathBuf>,
    /// Canonical current directory.
    cwd: Option<PathBuf>,
}

impl Filter {
    /// The path globs are matched against: relative to the root when the
    /// file lies under it, else `fallback` (relative to the walked PATH).
    fn anchor<'a>(&self, identity: &'a Path, fallback: &'a Path) -> &'a Path {
        match &self.root {
            Some(r) => strip_path(identity, r).unwrap_or(fallback),
            None => fallback,
        }
    }

    fn excluded(&self, rel: &Path, is_dir: bool) -> bool {
        !rel.as_os_str().is_empty()
            && !self.exclude.is_empty()
            && self
                .exclude
                .matched_path_or_any_parents(rel, is_dir)
                .is_ignore()
    }

    fn role(&self, rel: &Path) -> Role {
        if self
            .include
            .matched_path_or_any_parents(rel, false)
            .is_ignore()
        {
            Role::Yaml
        } else {
            Role::Text
        }
    }
}

/// Checks the request's paths and compiles its globs; see the module comment
/// for the rules. Only a PATH that does not exist is an error; the walk
/// itself runs as [`Walk::files`] is iterated.
pub fn discover(req: &WalkRequest) -> Result<Walk> {
    let include = if req.include.is_empty() {
        DEFAULT_INCLUDE.iter().map(|s| s.to_string()).collect()
    } else {
        req.include.clone()
    };
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    let mut sorted = include.clone();
    sorted.sort();
    sorted.dedup();
    let mut default = DEFAULT_INCLUDE.map(String::from);
    default.sort();
    let filter = Filter {
        default_include: sorted == default,
        include: matcher(&include, "--include")?,
        exclude: matcher(&req.exclude, "--exclude")?,
        root: req.root.as_ref().and_then(|r| r.canonicalize().ok()),
        cwd,
    };
    let config = req.config_path.as_ref().and_then(|c| c.canonicalize().ok());
    let given = if req.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        req.paths.clone()
    };
    let mut paths = Vec::new();
    for path in given {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("{}: no such file or directory", path.display())
            }
            Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
        };
        let identity = if meta.is_dir() {
            path.canonicalize().ok()
        } else {
            identity_of(&path)
        };
        paths.push(Given {
            shown: display_base(&path, filter.cwd.as_deref()),
            is_dir: meta.is_dir(),
            identity,
            path,
        });
    }
    // By canonical path, component-wise: the walk's order does not depend
    // on how PATHs are spelt, nor on whether one PATH lies inside another.
    paths.sort_by(|a, b| a.identity.cmp(&b.identity));
    // Sorted so, a PATH inside another comes right after it or after
    // something else inside it: neighbours tell (n log n, not n²).
    let overlap = paths
        .windows(2)
        .any(|w| match (&w[0].identity, &w[1].identity) {
            (Some(a), Some(b)) => b.starts_with(a),
            _ => false,
        });
    let mut hidden = req.tracked_hidden.clone();
    hidden.sort();
    hidden.dedup();
    let walk = Walk(std::sync::Arc::new(Plan::Paths {
        filter,
        config,
        paths,
        hidden,
    }));
    if !overlap {
        return Ok(walk);
    }
    // Overlapping PATHs: list up front, each file once, in the walk's order.
    let mut seen = HashSet::new();
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    let mut files = walk.files();
    while let Some((id, found)) = files.next_with_identity() {
        match found {
            Found::Entry(e) => {
                let id = id.unwrap_or_else(|| e.path.clone());
                if seen.insert(id.clone()) {
                    entries.push((id, e));
                }
            }
            Found::Skipped(s) => skipped.push(s),
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    skipped.dedup();
    let listed = skipped
        .into_iter()
        .map(Found::Skipped)
        .chain(entries.into_iter().map(|(_, e)| Found::Entry(e)))
        .collect();
    Ok(Walk(std::sync::Arc::new(Plan::Listed(listed))))
}

/// A file named on the command line: its entry, or why it is skipped;
/// `None` when it is the config or excluded.
fn given_file(
    filter: &Filter,
    config: Option<&Path>,
    given: &Given,
) -> Option<(Option<PathBuf>, Found)> {
    let skipped = |reason: &str, may_hold: bool| {
        Found::Skipped(Skipped {
            rel: given.shown.clone(),
            reason: reason.into(),
            may_hold,
        })
    };
    let Some(identity) = identity_of(&given.path) else {
        return Some((None, skipped("vanished during the walk", true)));
    };
    if is_config(&identity, config) {
        return None;
    }
    let fallback = match &filter.cwd {
        Some(c) => identity.strip_prefix(c).unwrap_or(file_name(&identity)),
        None => file_name(&identity),
    };
    let anchored = filter.anchor(&identity, fallback).to_path_buf();
    if filter.excluded(&anchored, false) {
        return None;
    }
    let Ok(meta) = std::fs::symlink_metadata(&given.path) else {
        return Some((None, skipped("vanished during the walk", true)));
    };
    if meta.file_type().is_symlink() {
        return Some((None, skipped("symbolic link, not followed", false)));
    }
    if !meta.is_file() {
        return Some((
            None,
            skipped(
                "not a regular file (a FIFO, socket or device); not read",
                false,
            ),
        ));
    }
    let entry = Entry {
        path: given.path.clone(),
        rel: given.shown.clone(),
        role: filter.role(&anchored),
    };
    Some((Some(identity), Found::Entry(entry)))
}

/// The canonical path of `p` without following `p` itself when it is a
/// symbolic link: its directory canonicalised, joined with its name.
fn identity_of(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let id = parent.canonicalize().ok()?.join(name);
    std::fs::symlink_metadata(&id).ok()?;
    Some(id)
}

/// A file that is rebind's config: the one in use, or any `.rebind.yaml`.
fn is_config(identity: &Path, config: Option<&Path>) -> bool {
    let name = identity.file_name();
    name.is_some_and(|n| n == CONFIG_FILE)
        // Names first: comparing whole paths is the slow part, per file.
        || config.is_some_and(|c| c.file_name() == name && c == identity)
}

fn file_name(p: &Path) -> &Path {
    p.file_name().map_or(p, Path::new)
}

/// `/`-joined path components.
fn slash(p: &Path) -> String {
    let s = p.to_string_lossy();
    if cfg!(windows) {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    }
}

/// How a PATH is shown: as typed without `.` components, `""` for `.`. A
/// PATH with `..` or an absolute one is shown relative to the current
/// directory (`ci/..` is `""`, `/repo/apps` is `apps`, and from `/repo/ci`,
/// `/repo/apps` is `../apps`), unless the two share only `/`.
fn display_base(given: &Path, cwd: Option<&Path>) -> String {
    let roundabout = given.is_absolute() || given.components().any(|c| c == Component::ParentDir);
    if let (true, Some(cwd)) = (roundabout, cwd) {
        let resolved = identity_of(given)
            .or_else(|| given.canonicalize().ok())
            .unwrap_or_else(|| given.to_path_buf());
        if let Some(r) = relative_to(&resolved, cwd) {
            return r;
        }
    }
    let mut out = PathBuf::new();
    for c in given.components() {
        if c != Component::CurDir {
            out.push(c);
        }
    }
    slash(&out)
}

/// `path` relative to the directory `base` (both absolute), with `..` steps;
/// `None` when they share nothing but the file system root.
fn relative_to(path: &Path, base: &Path) -> Option<String> {
    if !path.is_absolute() {
        return None;
    }
    let (p, b): (Vec<Component>, Vec<Component>) =
        (path.components().collect(), base.components().collect());
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common < b.len() && common < 2 {
        return None;
    }
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    out.extend(&p[common..]);
    Some(slash(&out))
}

/// A path as rebind shows it: relative to the current directory when that
/// reads better (see [`Entry::rel`]); for paths that are not entries, such as
/// the config.
pub fn display_path(p: &Path) -> String {
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    display_base(p, cwd.as_deref())
}

/// `p` without its leading `prefix`, as [`Path::strip_prefix`] gives it.
/// The walk's paths are its PATH joined with plain names, so a byte
/// comparison settles most of them without splitting both into components
/// (the slow part, per file); anything else is left to `strip_prefix`.
fn strip_path<'a>(p: &'a Path, prefix: &Path) -> Option<&'a Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let (pb, xb) = (p.as_os_str().as_bytes(), prefix.as_os_str().as_bytes());
        let rest = pb.strip_prefix(xb).and_then(|r| {
            if xb.ends_with(b"/") {
                Some(r)
            } else {
                r.strip_prefix(b"/")
            }
        });
        let plain =
            |r: &[u8]| !r.is_empty() && r.split(|&b| b == b'/').all(|c| !c.is_empty() && c != b".");
        if let Some(r) = rest.filter(|r| !xb.is_empty() && plain(r)) {
            return Some(Path::new(std::ffi::OsStr::from_bytes(r)));
        }
    }
    p.strip_prefix(prefix).ok()
}

fn join_rel(base: &str, sub: &str) -> String {
    match (base.is_empty(), sub.is_empty()) {
        (true, _) => sub.to_string(),
        (false, true) => base.to_string(),
        (false, false) => format!("{}/{sub}", base.trim_end_matches('/')),
    }
}

/// The path inside an `ignore` error, if it names one.
fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

/// Why an I/O operation failed, in words.
fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "vanished during the walk".into(),
        std::io::ErrorKind::PermissionDenied => "cannot read: permission denied".into(),
        _ => format!("cannot read: {err}"),
    }
}

/// The sorted, gitignore-aware walker of a directory PATH (`base`: its
/// canonical path); excluded directories are not entered.
fn dir_walker(filter: &Filter, given: &Given, base: &Path) -> ignore::Walk {
    let prune = Filter {
        include: filter.include.clone(),
        default_include: filter.default_include,
        exclude: filter.exclude.clone(),
        root: filter.root.clone(),
        cwd: None,
    };
    let (prune_given, prune_base) = (given.path.clone(), base.to_path_buf());
    let mut builder = ignore::WalkBuilder::new(&given.path);
    builder
        .hidden(false)
        // Only git's rules hide a file (and never a tracked one: see
        // `hidden_item`); `.ignore` is another tool's convention.
        .ignore(false)
        .follow_links(false)
        .require_git(false)
        .parents(true)
        // Entries of one directory share their parent's path exactly, so
        // comparing whole paths as bytes orders them by name, without
        // splitting each path into components on every comparison.
        .sort_by_file_path(|a, b| a.as_os_str().cmp(b.as_os_str()))
        .filter_entry(move |e| {
            if e.file_name() == ".git" {
                return false;
            }
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            if e.file_name() == REBIND_DIR && e.depth() > 0 {
                return false;
            }
            let sub = strip_path(e.path(), &prune_given).unwrap_or(e.path());
            let id = prune_base.join(sub);
            !prune.excluded(prune.anchor(&id, sub), true)
        });
    builder.build()
}

/// What one item of a directory walk is: an entry (with its canonical path),
/// a skipped path, or nothing (a directory, an excluded file, the config).
fn dir_item(
    filter: &Filter,
    config: Option<&Path>,
    given: &Given,
    base: &Path,
    result: Result<ignore::DirEntry, ignore::Error>,
) -> Option<(Option<PathBuf>, Found)> {
    let (path, shown) = (&given.path, given.shown.as_str());
    let entry = match result {
        Ok(e) => e,
        Err(err) => {
            let rel = match error_path(&err) {
                Some(p) => join_rel(shown, &slash(p.strip_prefix(path).unwrap_or(p))),
                None => shown.to_string(),
            };
            let reason = match err.io_error() {
                Some(io) => io_reason(io),
                None => format!("cannot walk: {err}"),
            };
            return Some((
                None,
                Found::Skipped(Skipped {
                    rel,
                    reason,
                    may_hold: true,
                }),
            ));
        }
    };
    let ft = entry.file_type()?;
    if ft.is_dir() {
        return None;
    }
    file_item(filter, config, given, base, entry.into_path(), ft)
}

/// A tracked file the ignore rules hid ([`WalkRequest::tracked_hidden`]),
/// below the directory PATH `given` (canonical `base`), as the walk would
/// have yielded it: the excluded, the config and rebind's own folder stay
/// out.
fn hidden_item(
    filter: &Filter,
    config: Option<&Path>,
    given: &Given,
    base: &Path,
    identity: PathBuf,
) -> Option<(Option<PathBuf>, Found)> {
    let sub = strip_path(&identity, base)?;
    if sub
        .components()
        .any(|c| c.as_os_str() == REBIND_DIR || c.as_os_str() == ".git")
    {
        return None;
    }
    let ft = std::fs::symlink_metadata(&identity).ok()?.file_type();
    let path = given.path.join(sub);
    file_item(filter, config, given, base, path, ft)
}

/// What a file of a directory walk is: an entry (with its canonical path),
/// a skipped path, or nothing (excluded, the config).
fn file_item(
    filter: &Filter,
    config: Option<&Path>,
    given: &Given,
    base: &Path,
    path_in_walk: PathBuf,
    ft: std::fs::FileType,
) -> Option<(Option<PathBuf>, Found)> {
    let (path, shown) = (&given.path, given.shown.as_str());
    let sub = strip_path(&path_in_walk, path).unwrap_or(&path_in_walk);
    if sub.as_os_str().is_empty() {
        return None;
    }
    let identity = base.join(sub);
    let anchored = filter.anchor(&identity, sub);
    if filter.excluded(anchored, false) || is_config(&identity, config) {
        return None;
    }
    // Below a PATH outside the current directory, `..` steps are resolved
    // against the file itself (`../apps/a.yaml` from `apps` is `a.yaml`).
    let outside = matches!(
        Path::new(shown).components().next(),
        Some(Component::ParentDir | Component::RootDir | Component::Prefix(_))
    );
    let rel = match (&filter.cwd, outside) {
        (Some(cwd), true) => relative_to(&identity, cwd),
        _ => None,
    }
    .unwrap_or_else(|| join_rel(shown, &slash(sub)));
    let skipped = |rel: String, reason: &str| {
        Some((
            None,
            Found::Skipped(Skipped {
                rel,
                reason: reason.into(),
                may_hold: false,
            }),
        ))
    };
    if ft.is_symlink() {
        return skipped(rel, "symbolic link, not followed");
    }
    if !ft.is_file() {
        return skipped(
            rel,
            "not a regular file (a FIFO, socket or device); not read",
        );
    }
    let role = filter.role(anchored);
    Some((
        Some(identity),
        Found::Entry(Entry {
            path: path_in_walk.clone(),
            role,
            rel,
        }),
    ))
}

/// What reading a file produced.
#[derive(Debug)]
pub enum Content {
    /// UTF-8 text (a UTF-8 byte order mark is kept).
    Text(String),
    /// UTF-16 or UTF-32 text recognised by its byte order mark, decoded (the
    /// mark dropped). Line numbers in `text` are the file's line numbers.
    Decoded {
        text: String,
        /// `UTF-16LE`, `UTF-16BE`, `UTF-32LE` or `UTF-32BE`.
        encoding: &'static str,
    },
    /// Holds a NUL byte in its first 8 KiB (and no UTF-16/32 byte order mark).
    Binary(Vec<u8>),
    /// Not valid UTF-8 (or a UTF-16/32 file with an invalid code unit);
    /// `line` is where the first bad byte sits.
    NotUtf8 { bytes: Vec<u8>, line: usize },
    /// Could not be read (permission denied, vanished since it was listed...):
    /// the reason, to be reported as a [`Skipped`] entry.
    Unreadable(String),
}

/// Reads a file whole and classifies it. Never fails: a file that cannot be
/// read is [`Content::Unreadable`].
pub fn read(entry: &Entry) -> Content {
    let mut bytes = Vec::new();
    match read_into(&entry.path, &mut bytes) {
        Ok(()) => classify(bytes),
        Err(reason) => Content::Unreadable(reason),
    }
}

/// Reads a file whole into `buf`, which is cleared first and keeps its
/// capacity from file to file (no allocation once it is big enough, and no
/// size query: two system calls fewer per file than [`std::fs::read`]).
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), String> {
    use std::io::Read;
    buf.clear();
    let file = std::fs::File::open(path).map_err(|e| io_reason(&e))?;
    // `take` hides the length, which std would otherwise ask the file for.
    file.take(u64::MAX)
        .read_to_end(buf)
        .map_err(|e| io_reason(&e))?;
    Ok(())
}

/// The bytes as text when [`classify`] would call them [`Content::Text`],
/// without copying them.
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    if wide_bom(bytes).is_some() || looks_binary(bytes) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Classifies the bytes of a file; see [`Content`].
pub fn classify(bytes: Vec<u8>) -> Content {
    if let Some(c) = decode_bom(&bytes) {
        return c;
    }
    if looks_binary(&bytes) {
        return Content::Binary(bytes);
    }
    match String::from_utf8(bytes) {
        Ok(s) => Content::Text(s),
        Err(e) => {
            let upto = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = bytes[..upto].iter().filter(|&&b| b == b'\n').count() + 1;
            Content::NotUtf8 { bytes, line }
        }
    }
}

/// Whether a file is prose by its name (`README`, `*.md`, `*.txt`,
/// `*.rst`, `*.adoc`, ...): a document people read, where an endpoint is a
/// mention. Any other text file (`.tf`, `.env`, `.sh`, a `.tpl`) may be
/// configuration something applies.
pub fn is_prose(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "md" | "markdown" | "mdx" | "txt" | "rst" | "adoc" | "asciidoc" | "org" | "html" | "htm"
    ) || ["readme", "changelog", "license", "notice", "authors"]
        .iter()
        .any(|p| lower == *p || lower.starts_with(&format!("{p}.")))
}

/// A NUL byte in the first 8 KiB (of a file with no UTF-16/32 byte order mark).
/// Whether a file's name says it is a kubeconfig although it has no YAML
/// extension: `kubeconfig` (a trailing `~` backup included), `*.kubeconfig`,
/// or `config` in a `.kube` folder. Such a file is read as YAML; any other
/// file is judged by its content ([`looks_like_kubeconfig`]).
pub fn kubeconfig_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let name = name.strip_suffix('~').unwrap_or(name);
    let in_dot_kube = || {
        path.parent()
            .and_then(|p| p.file_name())
            .is_some_and(|d| d == ".kube")
    };
    name.eq_ignore_ascii_case("kubeconfig")
        || (name.len() > ".kubeconfig".len() && name.to_ascii_lowercase().ends_with(".kubeconfig"))
        || (name == "config" && in_dot_kube())
}

/// Whether a text reads as a kubeconfig: top-level `apiVersion: v1` and
/// `kind: Config` lines (kubectl writes `kind` after `contexts`, so both are
/// looked for anywhere at the top level, not only at the start).
pub fn looks_like_kubeconfig(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let top = |key: &str, want: &str| {
        text.lines().any(|l| {
            l.strip_prefix(key).is_some_and(|rest| {
                let v = rest.split(" #").next().unwrap_or("").trim();
                v.trim_matches(|c| c == '"' || c == '\'') == want
            })
        })
    };
    memchr::memmem::find(text.as_bytes(), b"kind:").is_some()
        && top("kind:", "Config")
        && top("apiVersion:", "v1")
}

/// The kind of compressed archive `bytes` are, by their magic number: its
/// contents are not text, so it is named once and never searched (a match
/// in compressed bytes would be chance, not endpoint text).
pub fn archive_kind(bytes: &[u8]) -> Option<&'static str> {
    const MAGIC: [(&[u8], &str); 6] = [
        (b"\x1f\x8b", "gzip"),
        (b"PK\x03\x04", "zip"),
        (b"BZh", "bzip2"),
        (b"\xfd7zXZ\x00", "xz"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"7z\xbc\xaf\x27\x1c", "7z"),
    ];
    MAGIC
        .iter()
        .find(|(m, _)| bytes.starts_with(m))
        .map(|(_, k)| *k)
}

fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// The UTF-16/32 byte order mark `bytes` start with: encoding, code unit
/// width, big-endian.
fn wide_bom(bytes: &[u8]) -> Option<(&'static str, usize, bool)> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] => Some(("UTF-32LE", 4, false)),
        [0, 0, 0xFE, 0xFF, ..] => Some(("UTF-32BE", 4, true)),
        [0xFF, 0xFE, ..] => Some(("UTF-16LE", 2, false)),
        [0xFE, 0xFF, ..] => Some(("UTF-16BE", 2, true)),
        _ => None,
    }
}

/// Decodes a UTF-32 or UTF-16 file that starts with its byte order mark.
fn decode_bom(bytes: &[u8]) -> Option<Content> {
    let (encoding, width, big) = wide_bom(bytes)?;
    let body = &bytes[width..];
    let (whole, rest) = body.split_at(body.len() - body.len() % width);
    let mut text = String::with_capacity(whole.len() / width);
    let bad = |text: &str| Content::NotUtf8 {
        bytes: bytes.to_vec(),
        line: text.matches('\n').count() + 1,
    };
    if width == 4 {
        for u in whole.chunks_exact(4) {
            let u = [u[0], u[1], u[2], u[3]];
            let v = if big {
                u32::from_be_bytes(u)
            } else {
                u32::from_le_bytes(u)
            };
            match char::from_u32(v) {
                Some(c) => text.push(c),
                None => return Some(bad(&text)),
            }
        }
    } else {
        let units = whole.chunks_exact(2).map(|u| {
            if big {
                u16::from_be_bytes([u[0], u[1]])
            } else {
                u16::from_le_bytes([u[0], u[1]])
            }
        });
        for c in char::decode_utf16(units) {
            match c {
                Ok(c) => text.push(c),
                Err(_) => return Some(bad(&text)),
            }
        }
    }
    if !rest.is_empty() {
        return Some(bad(&text));
    }
    Some(Content::Decoded { text, encoding })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_strip_agrees_with_strip_prefix() {
        let prefixes = [
            "repo",
            "repo/",
            "./repo",
            ".",
            "./",
            "/",
            "/work/repo",
            "a/./b",
            "a//b",
            "a/.",
            "..",
            "../a",
            "",
            "repo/a",
        ];
        let rests = [
            "",
            "/",
            "x",
            "/x",
            "/x/y.yaml",
            "x/y",
            "/./x",
            "/x/./y",
            "//x",
            "/x/",
            "/x/.",
            "/../x",
            "c/x",
            "/.hidden/x",
        ];
        for prefix in prefixes {
            for rest in rests {
                let p = format!("{prefix}{rest}");
                let (p, prefix) = (Path::new(&p), Path::new(prefix));
                // Byte for byte (`Path` equality compares components).
                assert_eq!(
                    strip_path(p, prefix).map(Path::as_os_str),
                    p.strip_prefix(prefix).ok().map(Path::as_os_str),
                    "{p:?} without {prefix:?}"
                );
            }
        }
    }

    /// A tree with a config outside the root's top level and files at
    /// several depths; returns its directory.
    fn tree() -> tempfile::TempDir {
        files(&[
            "apps/a.yaml",
            "apps/karpenter.yaml",
            "apps/vendor/v.yaml",
            "apps/vendor/deep/w.yaml",
            "karpenter.yaml",
            "ci/rebind-prod.yaml",
            "docs/notes.md",
            "apps/.rebind.yaml",
        ])
    }

    /// A temporary directory holding `x: 1` in each of `rels`.
    fn files(rels: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in rels {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x: 1\n").unwrap();
        }
        d
    }

    fn rels(w: &Walk) -> Vec<String> {
        w.entries().into_iter().map(|e| e.rel).collect()
    }

    fn names(w: &Walk, root: &Path) -> Vec<String> {
        let root = root.canonicalize().unwrap();
        w.entries()
            .iter()
            .map(|e| {
                let id = identity_of(&e.path).unwrap();
                slash(id.strip_prefix(&root).unwrap())
            })
            .collect()
    }

    #[test]
    fn entries_where_are_the_walks_entries_that_pass() {
        let d = tree();
        let root = d.path();
        std::os::unix::fs::symlink(root.join("apps/a.yaml"), root.join("apps/link.yaml")).unwrap();
        let req = WalkRequest {
            paths: vec![root.to_path_buf(), root.join("apps/vendor/v.yaml")],
            root: Some(root.to_path_buf()),
            exclude: vec!["karpenter.yaml".into()],
            config_path: Some(root.join("ci/rebind-prod.yaml")),
            ..WalkRequest::default()
        };
        for req in [
            req.clone(),
            WalkRequest::for_paths(&[root.to_path_buf()]),
            WalkRequest::for_paths(&[root.join("apps"), root.join("apps/vendor")]),
        ] {
            let w = discover(&req).unwrap();
            let mut kept = 0;
            for keep in [
                &(|p: &Path| p.to_string_lossy().contains("vendor"))
                    as &(dyn Fn(&Path) -> bool + Sync),
                &|p: &Path| p.extension().is_some_and(|x| x == "md"),
                &|_: &Path| true,
            ] {
                let want: Vec<Entry> = w.entries().into_iter().filter(|e| keep(&e.path)).collect();
                let got: Vec<Entry> = w.entries_where(keep).collect();
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
                kept += got.len();
            }
            assert!(kept > w.entries().len(), "{kept}");
        }
    }

    /// rebind's own directory (the full reviews `apply --pr` commits) is
    /// not entered at any depth; a file or directory merely named like it
    /// elsewhere (`.rebind.md`, `x.rebind/`) is, and a `.rebind` directory
    /// given as the PATH itself is walked.
    #[test]
    fn rebinds_own_directory_is_not_entered() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for rel in [
            "a.yaml",
            ".rebind/reviews/rebind/new.md",
            "apps/.rebind/x.yaml",
            "docs/.rebind.md",
            "x.rebind/y.yaml",
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "server: x\n").unwrap();
        }
        let all = discover(&WalkRequest::for_paths(&[root.to_path_buf()])).unwrap();
        assert_eq!(
            names(&all, root),
            ["a.yaml", "docs/.rebind.md", "x.rebind/y.yaml"]
        );
        let own = discover(&WalkRequest::for_paths(&[root.join(".rebind")])).unwrap();
        assert_eq!(own.entries().len(), 1);
    }

    #[test]
    fn tracked_files_the_ignore_rules_hide_come_in_their_place() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for f in [
            "a/1.yaml",
            "a/gen.yaml",
            "b/2.yaml",
            "out/x.yaml",
            "out/y.yaml",
            "z.yaml",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "a: 1\n").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "gen.yaml\nout/\n").unwrap();
        std::fs::write(root.join("b/.ignore"), "*\n").unwrap();
        let walk = |hidden: &[&str], exclude: &[&str]| {
            let req = WalkRequest {
                paths: vec![root.clone()],
                exclude: exclude.iter().map(|s| s.to_string()).collect(),
                tracked_hidden: hidden.iter().map(|h| root.join(h)).collect(),
                ..WalkRequest::default()
            };
            let w = discover(&req).unwrap();
            let mut names = names(&w, &root);
            names.retain(|n| n.ends_with(".yaml"));
            names
        };
        // `.ignore` hides nothing; `.gitignore` hides what is not named.
        assert_eq!(walk(&[], &[]), ["a/1.yaml", "b/2.yaml", "z.yaml"]);
        // Named, they come in the walk's order, inside an ignored folder too;
        // the config's exclude still drops them.
        assert_eq!(
            walk(&["out/y.yaml", "a/gen.yaml"], &[]),
            ["a/1.yaml", "a/gen.yaml", "b/2.yaml", "out/y.yaml", "z.yaml"]
        );
        assert_eq!(
            walk(&["out/y.yaml"], &["out/"]),
            ["a/1.yaml", "b/2.yaml", "z.yaml"]
        );
    }

    #[test]
    fn globs_are_relative_to_the_root_whatever_the_path() {
        let d = tree();
        let root = d.path();
        let req = |paths: Vec<PathBuf>| WalkRequest {
            paths,
            root: Some(root.to_path_buf()),
            include: vec![],
            exclude: vec!["karpenter.yaml".into(), "apps/vendor/**".into()],
            config_path: Some(root.join("ci/rebind-prod.yaml")),
            ..WalkRequest::default()
        };
        let all = discover(&req(vec![root.to_path_buf()])).unwrap();
        assert_eq!(names(&all, root), ["apps/a.yaml", "docs/notes.md"]);
        let apps = discover(&req(vec![root.join("apps")])).unwrap();
        assert_eq!(names(&apps, root), ["apps/a.yaml"]);
        let vendor = discover(&req(vec![root.join("apps/vendor")])).unwrap();
        assert!(vendor.entries().is_empty(), "{:?}", rels(&vendor));
        // Files named on the command line are filtered the same way.
        let named = discover(&req(vec![
            root.join("apps/vendor/v.yaml"),
            root.join("apps/karpenter.yaml"),
            root.join("ci/rebind-prod.yaml"),
            root.join("apps/a.yaml"),
        ]))
        .unwrap();
        assert_eq!(names(&named, root), ["apps/a.yaml"]);
        // A directory pattern excludes what is under it; `*` stops at `/`.
        let mut r = req(vec![root.to_path_buf()]);
        r.exclude = vec!["vendor/".into(), "/*.yaml".into()];
        r.include = vec!["apps/*.yaml".into()];
        let w = discover(&r).unwrap();
        assert_eq!(
            names(&w, root),
            [
                "apps/a.yaml",
                "apps/karpenter.yaml",
                "ci/rebind-prod.yaml",
                "docs/notes.md"
            ]
            .into_iter()
            .filter(|n| *n != "ci/rebind-prod.yaml")
            .collect::<Vec<_>>()
        );
        let roles: Vec<Role> = w.entries().iter().map(|e| e.role).collect();
        assert_eq!(roles, [Role::Yaml, Role::Yaml, Role::Text]);
    }

    /// The walk is lazy (a file created after `discover` is found: nothing
    /// was listed up front) and in tree order, PATHs sorted by shown name.
    #[test]
    fn the_walk_is_lazy_and_in_tree_order() {
        let d = files(&[
            "b/z.yaml",
            "apps.yaml",
            "apps/x.yaml",
            "apps-2/y.yaml",
            "a.txt",
        ]);
        // Separate PATHs come sorted by how they are shown.
        let w = discover(&WalkRequest::for_paths(&[
            d.path().join("b"),
            d.path().join("apps"),
        ]))
        .unwrap();
        let shown: Vec<String> = w.entries().into_iter().map(|e| e.rel).collect();
        assert!(
            shown[0].ends_with("apps/x.yaml") && shown[1].ends_with("b/z.yaml"),
            "{shown:?}"
        );
        let w = discover(&WalkRequest::for_paths(&[d.path().to_path_buf()])).unwrap();
        std::fs::write(d.path().join("apps/late.yaml"), "x: 1\n").unwrap();
        let root = d.path().canonicalize().unwrap();
        let names: Vec<String> = w
            .entries()
            .iter()
            .map(|e| slash(identity_of(&e.path).unwrap().strip_prefix(&root).unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                "a.txt",
                "apps/late.yaml",
                "apps/x.yaml",
                "apps-2/y.yaml",
                "apps.yaml",
                "b/z.yaml"
            ]
        );
    }

    #[test]
    fn without_a_root_globs_are_relative_to_the_walked_path() {
        let d = tree();
        let root = d.path();
        let w = discover(&WalkRequest {
            paths: vec![root.join("apps")],
            exclude: vec!["vendor/**".into()],
            ..WalkRequest::default()
        })
        .unwrap();
        assert_eq!(names(&w, root), ["apps/a.yaml", "apps/karpenter.yaml"]);
        // Any file named .rebind.yaml is a config, never a manifest.
        assert!(!names(&w, root).iter().any(|n| n.ends_with(".rebind.yaml")));
    }

    #[test]
    fn overlapping_paths_yield_each_file_once() {
        let d = tree();
        let root = d.path();
        let w = discover(&WalkRequest::for_paths(&[
            root.join("apps"),
            root.join("apps/./a.yaml"),
            root.join("apps/vendor/../a.yaml"),
            root.join("apps/vendor"),
        ]))
        .unwrap();
        assert_eq!(
            names(&w, root),
            [
                "apps/a.yaml",
                "apps/karpenter.yaml",
                "apps/vendor/deep/w.yaml",
                "apps/vendor/v.yaml"
            ]
        );
    }

    #[test]
    fn shown_names_drop_dot_components() {
        assert_eq!(display_base(Path::new("./apps"), None), "apps");
        assert_eq!(display_base(Path::new("."), None), "");
        assert_eq!(display_base(Path::new("a/./b/"), None), "a/b");
        assert_eq!(display_base(Path::new("../x"), None), "../x");
        assert_eq!(
            display_base(Path::new("/r/apps/a.yaml"), Some(Path::new("/r"))),
            "apps/a.yaml"
        );
        assert_eq!(
            display_base(Path::new("/r/apps/a.yaml"), Some(Path::new("/r/ci"))),
            "../apps/a.yaml"
        );
        assert_eq!(
            display_base(Path::new("/r/apps/a.yaml"), Some(Path::new("/q"))),
            "/r/apps/a.yaml"
        );
        assert_eq!(join_rel("", "a.yaml"), "a.yaml");
        assert_eq!(join_rel("apps", "a.yaml"), "apps/a.yaml");
    }

    #[test]
    fn bad_globs_are_named() {
        assert!(glob_error("**/*.yaml").is_none());
        assert!(glob_error("karpenter.yaml").is_none());
        assert!(glob_error("apps/[x").is_some());
        assert!(glob_error("#vendor").is_some());
        assert!(glob_error(" ").is_some());
        let err = discover(&WalkRequest {
            exclude: vec!["a/{b".into()],
            ..WalkRequest::default()
        })
        .unwrap_err();
        assert!(format!("{err:#}").starts_with("--exclude \"a/{b\": invalid glob"));
    }

    fn utf16(s: &str, big: bool) -> Vec<u8> {
        let mut out = if big {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for u in s.encode_utf16() {
            out.extend(if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        out
    }

    fn utf32(s: &str, big: bool) -> Vec<u8> {
        let mut out = if big {
            vec![0, 0, 0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE, 0, 0]
        };
        for c in s.chars() {
            let u = c as u32;
            out.extend(if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        out
    }

    #[test]
    fn utf16_and_utf32_are_decoded_by_their_byte_order_mark() {
        let text = "server: https://h.example.com # 서울\r\nx: 😀\n";
        for (bytes, name) in [
            (utf16(text, false), "UTF-16LE"),
            (utf16(text, true), "UTF-16BE"),
            (utf32(text, false), "UTF-32LE"),
            (utf32(text, true), "UTF-32BE"),
        ] {
            match classify(bytes) {
                Content::Decoded { text: t, encoding } => {
                    assert_eq!((t.as_str(), encoding), (text, name));
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        let mut odd = utf16("a\nb", false);
        odd.push(0);
        assert!(matches!(classify(odd), Content::NotUtf8 { line: 2, .. }));
        // A lone surrogate.
        let mut lone = utf16("a\n", true);
        lone.extend([0xD8, 0x00, 0, b'x']);
        assert!(matches!(classify(lone), Content::NotUtf8 { line: 2, .. }));
        assert!(matches!(classify(b"a\0b".to_vec()), Content::Binary(_)));
        assert!(
            matches!(classify(b"\xEF\xBB\xBFa: 1\n".to_vec()), Content::Text(t) if t == "\u{feff}a: 1\n")
        );
        assert!(matches!(
            classify(b"a\n\xFF\n".to_vec()),
            Content::NotUtf8 { line: 2, .. }
        ));
    }

    #[test]
    fn a_file_that_vanished_is_unreadable_not_an_error() {
        let d = tempfile::tempdir().unwrap();
        let entry = Entry {
            path: d.path().join("gone.yaml"),
            rel: "gone.yaml".into(),
            role: Role::Yaml,
        };
        match read(&entry) {
            Content::Unreadable(r) => assert_eq!(r, "vanished during the walk"),
            other => panic!("{other:?}"),
        }
        let dir = Entry {
            path: d.path().to_path_buf(),
            rel: "d".into(),
            role: Role::Yaml,
        };
        assert!(matches!(read(&dir), Content::Unreadable(r) if r.starts_with("cannot read:")));
    }
}
