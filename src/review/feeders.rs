//! After the merge: which Application or ApplicationSet of this repository
//! carries each rewritten file to the hub, from which revision, under which
//! sync policy, and in which order a person must sync them.
//!
//! A rebind rewrites files *inside* Application manifests, so the change
//! travels in two hops: the file reaches the hub when its **parent** (the
//! Application or ApplicationSet whose source covers that file's path in this
//! repository) syncs it from the parent's `targetRevision`; then each child
//! reconciles to its new destination under its own sync policy. This module
//! answers, from the repository alone, whether merging the cutover branch
//! into the base branch deploys anything, and what a person must still do.
//!
//! It owns ArgoCD's source rules (repository URL identity, revision kinds,
//! directory `recurse`/`include`/`exclude`, kustomization `resources`, Helm
//! `valueFiles` and multi-source `ref`s), not the reading of YAML text: the
//! manifests arrive as decoded documents ([`Manifest`]).

use crate::find::resolve::git::{files_match, glob_match, hidden_folder, path_match};
use crate::find::resolve::sets::{self, Registered};
use crate::model::application::{self as table, at};
use crate::model::application::{
    app_of, project_of, resources_of, s, text, unmask, App, DiffSetting, GitGenerator, Manifest,
    Params, Project, Resource, Source, V,
};
use crate::model::config::Config;
use crate::model::positions;
use crate::repo::remote::RepoFacts;
use crate::syntax::yaml::{self, Node, Value};
use crate::text::repo_url::repo_identity;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a `targetRevision` (or a git generator's `revision`) names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// The base branch (directly, or as `HEAD` when the remote's default
    /// branch is the base branch): merging deploys.
    Base,
    /// `HEAD` or empty while the base branch is unknown: assumed to be the
    /// branch a merge lands on, and said so.
    HeadAssumed,
    /// Another branch: merging into the base does not deploy.
    Branch(String),
    /// A tag, a semantic-version range or a commit: pinned.
    Pinned(String, &'static str),
    /// Neither a branch nor a tag of this clone.
    Unknown(String),
}

impl Revision {
    /// Whether merging into the base branch reaches this revision.
    pub fn tracks_base(&self) -> bool {
        matches!(self, Revision::Base | Revision::HeadAssumed)
    }

    /// The short name of the kind, as JSON reports it.
    pub fn kind(&self) -> &'static str {
        match self {
            Revision::Base => "base",
            Revision::HeadAssumed => "head",
            Revision::Branch(_) => "branch",
            Revision::Pinned(_, kind) => kind,
            Revision::Unknown(_) => "unknown",
        }
    }
}

/// Why a source whose type is given (`helm:`, `kustomize:`,
/// `directory:`) cannot be rendered as the path's content: ArgoCD renders
/// the given type whatever the path holds (argo-cd
/// `ApplicationSource.ExplicitType()`, `reposerver/repository`
/// `GetAppSourceType`), so a Helm source without `Chart.yaml` or a
/// kustomize source without a kustomization fails to render, and a
/// directory source over a chart or kustomization applies the raw files.
fn explicit_type_mismatch(src: &Source, path: &str, tree: &dyn Tree) -> Option<String> {
    let chart = super::render_checks::is_chart(&Files(tree), &join(path, ""));
    let kustomization = tree.kustomization(path).is_some();
    let at = if path.is_empty() { "." } else { path };
    // Whatever the `helm` options hold (value files, inline values,
    // parameters), `helm template` needs a chart.
    if src.helm && !chart {
        return Some(format!(
            "gives `helm` options, but `{at}` holds no Chart.yaml: ArgoCD renders it as a Helm chart and fails"
        ));
    }
    if src.kustomize && !kustomization {
        return Some(format!(
            "gives `kustomize` options, but `{at}` holds no kustomization: ArgoCD runs kustomize on it and fails"
        ));
    }
    if src.directory_given && (chart || kustomization) {
        let what = if chart {
            "a Helm chart"
        } else {
            "a kustomization"
        };
        return Some(format!(
            "gives `directory` options, but `{at}` holds {what}: ArgoCD applies its files as plain manifests"
        ));
    }
    None
}

/// What a proven row takes as given when the repository holds no
/// `argocd-cm`.
pub const NO_ARGOCD_CM: &str = "no argocd-cm in the repository: ArgoCD's system-level diffing settings (resource.customizations.ignoreDifferences, resource.compareoptions, resource.exclusions and resource.inclusions) are taken as unset";

/// Why a parent tracking `HEAD` is not proven when the remote's default
/// branch is not known.
pub const HEAD_UNKNOWN: &str =
    "HEAD is the remote's default branch, which is unknown here (no refs/remotes/origin/HEAD; `git remote set-head origin --auto` records it)";

/// Classifies a git revision as ArgoCD resolves it: empty and `HEAD` are the
/// remote's default branch; a name is a branch or a tag of the remote; 40
/// hex digits are a commit; `*`, `^`, `~`, `>`, `<`, `=` or `x` parts make a
/// semantic-version range over tags.
pub fn classify(rev: &str, facts: &RepoFacts) -> Revision {
    let rev = rev.trim();
    let base = facts.base.as_ref().map(|(b, _)| b.as_str());
    if rev.is_empty() || rev == "HEAD" {
        return match (&facts.default_branch, base) {
            (Some(d), Some(b)) if d == b => Revision::Base,
            (Some(d), Some(_)) => Revision::Branch(format!("HEAD ({d})")),
            (_, _) => Revision::HeadAssumed,
        };
    }
    // argo-cd `util/git/client.go` `lsRemote`: a commit SHA as it is,
    // then `versions.MaxVersion` against the remote's tags: a revision
    // that is no version but a semantic-version constraint resolves to the
    // highest tag it matches, before any branch of that name (a branch
    // `1.x` with a tag `1.4.0` reads the tag). The clone's tags may not
    // be all of the remote's, so such a revision is pinned.
    if !(rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())) && is_semver_constraint(rev)
    {
        return Revision::Pinned(rev.to_string(), "semver range");
    }
    let name = rev.strip_prefix("refs/heads/").unwrap_or(rev);
    if Some(name) == base {
        return Revision::Base;
    }
    if let Some(tag) = rev.strip_prefix("refs/tags/") {
        return Revision::Pinned(tag.to_string(), "tag");
    }
    if facts.branches.contains(name) {
        return Revision::Branch(name.to_string());
    }
    if facts.tags.contains(rev) {
        return Revision::Pinned(rev.to_string(), "tag");
    }
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Revision::Pinned(rev.to_string(), "commit");
    }
    if looks_like_version(rev) {
        return Revision::Pinned(rev.to_string(), "tag");
    }
    if rev.len() >= 7 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Revision::Pinned(rev.to_string(), "commit");
    }
    Revision::Unknown(rev.to_string())
}

fn looks_like_version(rev: &str) -> bool {
    let v = rev.strip_prefix('v').unwrap_or(rev);
    let mut parts = v.split(['.', '-', '+']);
    parts
        .next()
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && v.contains('.')
}

/// Masterminds semver v3 `NewVersion` (as `versions.MaxVersion` tries it
/// first): `v?N(.N)?(.N)?(-pre)?(+build)?`.
fn is_semver_version(rev: &str) -> bool {
    version_part(rev.strip_prefix('v').unwrap_or(rev), false)
}

/// A version as Masterminds writes it in a constraint or as a version:
/// one to three dot-separated numbers (or `x`, `X`, `*` when `wild`),
/// then `-prerelease` and `+build` of `[0-9A-Za-z-]` dot-separated parts.
fn version_part(v: &str, wild: bool) -> bool {
    let (core, build) = match v.split_once('+') {
        Some((c, b)) => (c, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match core.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (core, None),
    };
    let ident = |t: &str| {
        t.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let nums: Vec<&str> = core.split('.').collect();
    (1..=3).contains(&nums.len())
        && nums.iter().all(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_digit() || (wild && matches!(b, b'x' | b'X' | b'*')))
        })
        && pre.is_none_or(ident)
        && build.is_none_or(ident)
}

/// Whether ArgoCD reads a revision as a semantic-version constraint
/// (argo-cd `util/versions` `IsConstraint`: no version, but a Masterminds
/// semver v3 constraint): `||`-separated groups of terms, each an
/// optional operator (`=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`,
/// `~>`, `^`) and a version whose parts may be `x`, `X` or `*`, separated
/// by spaces or commas, or a hyphen range `A - B`.
fn is_semver_constraint(rev: &str) -> bool {
    const OPS: [&str; 11] = ["!=", ">=", "=>", "<=", "=<", "~>", "=", ">", "<", "~", "^"];
    if is_semver_version(rev) {
        return false;
    }
    let term = |t: &str| {
        let t = t.trim();
        let rest = OPS
            .iter()
            .find_map(|op| t.strip_prefix(op))
            .unwrap_or(t)
            .trim_start();
        let rest = rest.strip_prefix('v').unwrap_or(rest);
        version_part(rest, true)
    };
    rev.split("||").all(|group| {
        let group = group.trim();
        if let Some((a, b)) = group.split_once(" - ") {
            return version_part(a.trim().trim_start_matches('v'), true)
                && version_part(b.trim().trim_start_matches('v'), true);
        }
        // An operator may stand apart from its version (`>= 1.2`).
        let mut words: Vec<String> = Vec::new();
        for w in group.split([' ', ',']).filter(|w| !w.is_empty()) {
            match words.last_mut() {
                Some(last) if OPS.contains(&last.as_str()) => last.push_str(w),
                _ => words.push(w.to_string()),
            }
        }
        !words.is_empty() && words.iter().all(|w| term(w))
    })
}

/// Whether a source covers a file, and if not, why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cover {
    Yes,
    No(String),
    /// The model cannot tell (a templated path, a plugin, ...): the reason.
    Unknown(String),
}

/// What the tree offers the coverage rules: kustomizations and chart
/// markers, read from the repository root on demand.
pub trait Tree {
    fn exists(&self, rel: &str) -> bool;
    /// The decoded kustomization in a directory, if there is one.
    fn kustomization(&self, dir: &str) -> Option<Node>;
    /// A file's text, if it can be read.
    fn read(&self, _rel: &str) -> Option<String> {
        None
    }
    /// The names of the files directly in a folder.
    fn list(&self, _dir: &str) -> Vec<String> {
        Vec::new()
    }
    /// The names of the folders directly in a folder (hidden ones aside).
    fn dirs(&self, _dir: &str) -> Vec<String> {
        Vec::new()
    }
}

/// What the merge carries, inside a git work tree: the files git tracks
/// (a commit of the branch holds nothing else, so neither does the
/// revision ArgoCD checks out after the merge) and the files the rebind
/// rewrites, with every folder above one. An untracked file is not read:
/// an Application, AppProject, kustomization or value file that exists
/// only in the working tree proves nothing about the merge.
#[derive(Debug, Default)]
pub struct Committed {
    files: std::collections::HashSet<String>,
    dirs: std::collections::HashSet<String>,
    /// The rewritten files git does not track: read after the rewrite, but
    /// in no commit (the git flow refuses to rewrite them; with
    /// `--no-commit` they stay untracked).
    untracked: std::collections::HashSet<String>,
}

impl Committed {
    /// The files git tracks below `root` and `extra` (the rewritten
    /// files, relative to `root`); `None` outside a git repository.
    pub fn below(root: &Path, extra: &[String]) -> Option<Committed> {
        let tracked = crate::repo::git::tracked_below(root)?;
        let mut c = Committed::default();
        let known: std::collections::HashSet<&str> = tracked.iter().map(String::as_str).collect();
        c.untracked = extra
            .iter()
            .filter(|f| !known.contains(join(f, "").as_str()))
            .map(|f| join(f, ""))
            .collect();
        for f in tracked.into_iter().chain(extra.iter().cloned()) {
            let mut d = f.as_str();
            while let Some(i) = d.rfind('/') {
                d = &d[..i];
                if !c.dirs.insert(d.to_string()) {
                    break;
                }
            }
            c.files.insert(f);
        }
        c.dirs.insert(String::new());
        Some(c)
    }

    /// Whether `rel` (a file, or a folder holding one) is in the merge.
    pub fn holds(&self, rel: &str) -> bool {
        let rel = join(rel, "");
        self.files.contains(&rel) || self.dirs.contains(&rel)
    }

    /// Whether `rel` is a file in the merge.
    pub fn holds_file(&self, rel: &str) -> bool {
        self.files.contains(&join(rel, ""))
    }

    /// Whether `rel` is a file git tracks (or that the merge carries
    /// otherwise): not an untracked file the rebind rewrites, nor one the
    /// merge does not hold at all.
    pub fn tracked(&self, rel: &str) -> bool {
        self.holds_file(rel) && !self.untracked.contains(&join(rel, ""))
    }
}

/// Why a changed file git does not track is not proven to deploy.
pub const UNTRACKED: &str =
    "not committed: git does not track it, so no commit of the branch holds it (commit it first)";

/// How the review names a file that exists only in the working tree.
pub const NOT_COMMITTED: &str = "not committed: not part of the merge";

/// The tree on disk below `root` (inside a git work tree, only what the
/// merge carries: [`Committed`]).
pub struct DiskTree {
    pub root: PathBuf,
    /// `None` outside git: every file on disk is read.
    committed: Option<std::sync::Arc<Committed>>,
    /// What was looked up already: every parent is asked about every
    /// rewritten file, and the answers are the same each time.
    exists: std::cell::RefCell<std::collections::HashMap<String, bool>>,
    kustomizations: std::cell::RefCell<std::collections::HashMap<String, Option<Node>>>,
}

impl DiskTree {
    pub fn new(root: PathBuf) -> DiskTree {
        DiskTree::of(root, None)
    }

    /// The tree below `root` as the merge carries it (`committed`).
    pub fn of(root: PathBuf, committed: Option<std::sync::Arc<Committed>>) -> DiskTree {
        DiskTree {
            root,
            committed,
            exists: Default::default(),
            kustomizations: Default::default(),
        }
    }

    /// Whether the merge carries `rel` (always, outside git).
    fn carried(&self, rel: &str) -> bool {
        self.committed.as_ref().is_none_or(|c| c.holds(rel))
    }

    fn carried_file(&self, rel: &str) -> bool {
        self.committed.as_ref().is_none_or(|c| c.holds_file(rel))
    }
}

use super::render_checks::{join, under, KUSTOMIZATION_NAMES};

impl Tree for DiskTree {
    fn exists(&self, rel: &str) -> bool {
        *self
            .exists
            .borrow_mut()
            .entry(rel.to_string())
            .or_insert_with(|| self.carried(rel) && self.root.join(rel).exists())
    }

    fn read(&self, rel: &str) -> Option<String> {
        if !self.carried_file(rel) {
            return None;
        }
        std::fs::read_to_string(self.root.join(rel)).ok()
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| self.carried_file(&join(dir, n)))
            .collect()
    }

    fn dirs(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !n.starts_with('.'))
            .filter(|n| self.carried(&join(dir, n)))
            .collect()
    }

    fn kustomization(&self, dir: &str) -> Option<Node> {
        self.kustomizations
            .borrow_mut()
            .entry(dir.to_string())
            .or_insert_with(|| {
                KUSTOMIZATION_NAMES.iter().find_map(|n| {
                    let text = self.read(&join(dir, n))?;
                    yaml::read_yaml_or_json(&text).ok()?.into_iter().next()
                })
            })
            .clone()
    }
}

/// The tree as [`super::render_checks`] reads it.
struct Files<'a>(&'a dyn Tree);

impl super::render_checks::Files for Files<'_> {
    fn exists(&self, rel: &str) -> bool {
        self.0.exists(rel)
    }
    fn read(&self, rel: &str) -> Option<String> {
        self.0.read(rel)
    }
    fn list(&self, dir: &str) -> Vec<String> {
        self.0.list(dir)
    }
    fn dirs(&self, dir: &str) -> Vec<String> {
        self.0.dirs(dir)
    }
    fn kustomization(&self, dir: &str) -> Option<Node> {
        self.0.kustomization(dir)
    }
}

/// The folders (`dirs`) or files below a glob's literal folder that it
/// may match, at most as deep as it reaches (8 folders for `**` or a
/// greedy `*`).
fn below(tree: &dyn Tree, glob: &str, dirs: bool) -> Vec<String> {
    let segs: Vec<&str> = glob.trim_start_matches('/').split('/').collect();
    let lit = segs
        .iter()
        .position(|g| g.contains(['*', '?', '[', '{']))
        .unwrap_or(segs.len());
    // A files glob's last part names files: a literal one (`items/list.yaml`)
    // is listed from its folder.
    let lit = if dirs { lit } else { lit.min(segs.len() - 1) };
    let start = segs[..lit].join("/");
    let depth = if glob.contains("**") || !dirs {
        8
    } else {
        segs.len() - lit
    };
    let mut out = Vec::new();
    let mut level = vec![start];
    for _ in 0..=depth {
        let mut next = Vec::new();
        for d in &level {
            if dirs {
                out.push(d.clone());
            } else {
                out.extend(tree.list(d).iter().map(|f| join(d, f)));
            }
            next.extend(tree.dirs(d).iter().map(|c| join(d, c)));
        }
        level = next;
        if level.is_empty() || out.len() > 10_000 {
            break;
        }
    }
    out
}

/// `covers` with `why` added to each reason a cover is not known.
fn because(covers: Vec<(Cover, String)>, why: &str) -> Vec<(Cover, String)> {
    covers
        .into_iter()
        .map(|(c, rev)| match c {
            Cover::Unknown(msg) => (Cover::Unknown(format!("{msg} ({why})")), rev),
            c => (c, rev),
        })
        .collect()
}

/// The folder above a templated path's first template (`apps/{{name}}`:
/// `apps`): every Application the template makes has its path below it.
fn literal_dir(path: &str) -> String {
    let head = path.split("{{").next().unwrap_or("");
    match head.rfind('/') {
        Some(k) => join(&head[..k], ""),
        None => String::new(),
    }
}

/// A value file's resolved name (`/`-separated from the repository root)
/// against `file`: `Yes` when it names it; when the name holds templates
/// (generator parameters), `Unknown` where it could name it.
fn value_file_match(resolved: &str, file: &str) -> Option<Cover> {
    if !resolved.contains("{{") {
        return (resolved == file).then_some(Cover::Yes);
    }
    let mut glob = String::new();
    let mut rest = resolved;
    while let Some(open) = rest.find("{{") {
        glob.push_str(&globset::escape(&rest[..open]));
        glob.push('*');
        rest = rest[open..]
            .find("}}")
            .map_or("", |c| &rest[open + c + 2..]);
    }
    glob.push_str(&globset::escape(rest));
    glob_match(&glob, file).then(|| {
        Cover::Unknown(format!(
            "the value file `{resolved}` is named through generator parameters that are not followed"
        ))
    })
}

/// Whether one of a source's Helm value files is `file`, resolved as
/// ArgoCD resolves them (argo-cd `util/io/path.ResolveValueFilePathOrUrl`):
/// relative to the source's path, or from the repository root when it
/// starts with `/`; a URL or a `$ref/...` file is not this source's.
fn value_file_cover(src: &Source, file: &str) -> Option<Cover> {
    let dir = src.path.as_deref().unwrap_or("");
    let mut found = None;
    for v in &src.value_files {
        if v.starts_with('$') || v.contains("://") {
            continue;
        }
        let resolved = match v.strip_prefix('/') {
            Some(abs) => join("", abs),
            None => join(dir, v),
        };
        match value_file_match(&resolved, file) {
            Some(Cover::Yes) => return Some(Cover::Yes),
            Some(c) => found = Some(c),
            None => {}
        }
    }
    found
}

/// Whether a `$ref/...` value file of one of `app`'s sources names `file`
/// through the `ref` source `r` (from the repository root of the ref
/// source's revision; Multiple-Sources docs).
fn ref_value_file(app: &App, r: &str, file: &str) -> Option<Cover> {
    let prefix = format!("${r}/");
    let mut found = None;
    for v in app.sources.iter().flat_map(|o| &o.value_files) {
        if let Some(rest) = v.strip_prefix(&prefix) {
            match value_file_match(&join("", rest), file) {
                Some(Cover::Yes) => return Some(Cover::Yes),
                Some(c) => found = Some(c),
                None => {}
            }
        }
    }
    found
}

/// Every file a kustomization directory pulls in (resources, patches,
/// components, generators' files), following listed directories that hold
/// their own kustomization. Depth-limited against cycles.
fn kustomize_files(tree: &dyn Tree, dir: &str, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Some(k) = tree.kustomization(dir) else {
        return;
    };
    let k = V(Some(&k));
    let mut listed: Vec<String> = Vec::new();
    let strings =
        |v: V| -> Vec<String> { v.as_vec().into_iter().flatten().filter_map(text).collect() };
    for key in [
        "resources",
        "bases",
        "components",
        "patchesStrategicMerge",
        "crds",
        "transformers",
        "generators",
        "validators",
        "configurations",
    ] {
        listed.extend(strings(s(k, key)));
    }
    for key in ["patches", "patchesJson6902", "replacements"] {
        for p in s(k, key).as_vec().into_iter().flatten() {
            listed.extend(text(s(p, "path")));
        }
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for g in s(k, key).as_vec().into_iter().flatten() {
            for f in strings(s(g, "files")) {
                listed.push(f.rsplit('=').next().unwrap_or(&f).to_string());
            }
            listed.extend(strings(s(g, "envs")));
            listed.extend(text(s(g, "env")));
        }
    }
    // `helmCharts`: the values files it names, and a chart kept in
    // `helmGlobals.chartHome` (default `charts/`) renders whole.
    let home = text(s(s(k, "helmGlobals"), "chartHome")).unwrap_or_else(|| "charts".into());
    for c in s(k, "helmCharts").as_vec().into_iter().flatten() {
        listed.extend(text(s(c, "valuesFile")));
        listed.extend(strings(s(c, "additionalValuesFiles")));
        if let Some(name) = text(s(c, "name")) {
            out.insert(format!("{}/", join(dir, &join(&home, &name))));
        }
    }
    for entry in listed {
        if entry.contains("://") || entry.starts_with("github.com/") {
            continue;
        }
        let rel = join(dir, &entry);
        if tree.kustomization(&rel).is_some() {
            kustomize_files(tree, &rel, out, depth + 1);
        } else {
            out.insert(rel);
        }
    }
    for n in KUSTOMIZATION_NAMES {
        out.insert(join(dir, n));
    }
}

/// A subchart's file (`charts/NAME/templates/...`, `charts/NAME/values.yaml`)
/// renders with its parent chart (Helm's chart dependencies), unless the
/// parent's `Chart.yaml`, or the `requirements.yaml` beside it (Helm v2's
/// dependencies file, which Helm 3 still reads), gives a dependency a
/// `condition` or `tags` (then whether it renders depends on values not
/// followed: a disabled subchart is never taken as rendered).
fn subchart_cover(tree: &dyn Tree, dir: &str, rel: &str) -> Option<Cover> {
    let rest = rel.strip_prefix("charts/")?;
    let (name, inner) = rest.split_once('/')?;
    if !(inner.starts_with("templates/") || inner == "values.yaml") {
        return None;
    }
    for file in ["Chart.yaml", crate::model::names::CHART_REQUIREMENTS] {
        let text = tree.read(&join(dir, file)).unwrap_or_default();
        if text.contains("condition:") || text.contains("tags:") {
            return Some(Cover::Unknown(format!(
                "the subchart `{name}` renders only when its dependency's condition or tags in `{}` hold, which is not followed",
                join(dir, file)
            )));
        }
    }
    Some(Cover::Yes)
}

/// Whether `source` (of this repository) covers `file`.
pub fn covers(source: &Source, file: &str, tree: &dyn Tree) -> Cover {
    let path = source.path.clone().unwrap_or_default();
    let dir = join(&path, "");
    // A kustomization and a chart's valueFiles may reach outside the
    // source's path (`../common`, `../../envs/prod.yaml`).
    let is_kustomize = tree.kustomization(&dir).is_some();
    let is_chart = !is_kustomize && super::render_checks::is_chart(&Files(tree), &dir);
    if is_chart {
        if let Some(c) = value_file_cover(source, file) {
            return c;
        }
    }
    let rel = under(file, &path);
    if rel.is_none() && !is_kustomize {
        return Cover::No(format!("not under the source path `{path}`"));
    }
    let rel = rel.unwrap_or(file);
    if is_kustomize {
        let mut files = BTreeSet::new();
        kustomize_files(tree, &dir, &mut files, 0);
        let in_chart = files
            .iter()
            .any(|f| f.ends_with('/') && file.starts_with(f.as_str()));
        return if files.contains(file) || in_chart {
            Cover::Yes
        } else {
            Cover::No(format!(
                "the kustomization in `{}` does not list it",
                if dir.is_empty() { "." } else { &dir }
            ))
        };
    }
    // The tree decides the source's type, as it decides what ArgoCD can
    // render: a chart where `Chart.yaml` is, a kustomization where one is,
    // else plain files (a `helm:` block on a directory of plain files
    // renders nothing more).
    if super::render_checks::is_chart(&Files(tree), &dir) {
        if rel.starts_with("templates/") {
            return Cover::Yes;
        }
        if let Some(c) = subchart_cover(tree, &dir, rel) {
            return c;
        }
        let named = value_file_cover(source, file) == Some(Cover::Yes);
        return if rel == "values.yaml" || named {
            Cover::Yes
        } else {
            Cover::No(format!(
                "the chart in `{dir}` neither renders it (not under templates/) nor uses it as a values file"
            ))
        };
    }
    // argo-cd reposerver `findManifests`: `manifestFile =
    // ^.*\.(yaml|yml|json|jsonnet)$`, case-sensitive (`A.YAML` is not read).
    // `directory.disableExtensionFilter` reads every file.
    if !source.directory.disable_extension_filter
        && ![".yaml", ".yml", ".json", ".jsonnet"]
            .iter()
            .any(|e| rel.ends_with(e))
    {
        return Cover::No(
            "a directory source reads only .yaml, .yml, .json and .jsonnet files (case-sensitive)"
                .into(),
        );
    }
    if rel.contains('/') && !source.directory.recurse {
        return Cover::No(format!(
            "directory.recurse is off and the file is in a subdirectory of `{path}`"
        ));
    }
    if let Some(inc) = &source.directory.include {
        if !crate::text::glob::gobwas(inc, rel) {
            return Cover::No(format!("directory.include `{inc}` leaves it out"));
        }
    }
    if let Some(exc) = &source.directory.exclude {
        if crate::text::glob::gobwas(exc, rel) {
            return Cover::No(format!("directory.exclude `{exc}` leaves it out"));
        }
    }
    Cover::Yes
}

/// The verdict for one rewritten file and one parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Merging deploys it, and hop 1 is automated.
    Deploys,
    /// Merging puts it on the revision the parent tracks, but the parent has
    /// no automated sync: someone must sync it.
    ManualSync,
    /// Declared under `feeders:` as applied outside ArgoCD: who applies it.
    AppliedOutside(String),
    TracksBranch(String),
    Pinned(String, &'static str),
    UnknownRevision(String),
    NotIncluded(String),
    NoFeeder,
    /// The model cannot prove what ArgoCD does with it: the reason.
    NotProven(String),
}

impl Verdict {
    /// Whether merging the cutover branch reaches the hub (possibly after a
    /// manual sync).
    pub fn deploys_on_merge(&self) -> bool {
        matches!(self, Verdict::Deploys | Verdict::ManualSync)
    }

    /// Whether the verdict is proven from what was read: it deploys on
    /// merge (possibly after a manual sync), or the repository declares who
    /// applies it outside ArgoCD. What `--require-deploys` accepts.
    pub fn proven(&self) -> bool {
        matches!(
            self,
            Verdict::Deploys | Verdict::ManualSync | Verdict::AppliedOutside(_)
        )
    }

    pub fn key(&self) -> &'static str {
        match self {
            Verdict::Deploys => "deploys_on_merge",
            Verdict::ManualSync => "manual_sync",
            Verdict::AppliedOutside(_) => "applied_outside_argocd",
            Verdict::TracksBranch(_) => "tracks_other_branch",
            Verdict::Pinned(..) => "pinned",
            Verdict::UnknownRevision(_) => "unknown_revision",
            Verdict::NotIncluded(_) => "not_included",
            Verdict::NoFeeder => "no_feeder",
            Verdict::NotProven(_) => "not_proven",
        }
    }

    /// A sentence a person acts on.
    pub fn sentence(&self, parent: Option<&str>) -> String {
        let p = parent.unwrap_or("the parent");
        match self {
            Verdict::Deploys => "deploys on merge (automated sync)".into(),
            Verdict::ManualSync => format!("deploys on merge after a manual sync of {p}"),
            Verdict::AppliedOutside(who) => format!(
                "applied outside ArgoCD by {who} (declared under `feeders:` in .rebind.yaml, or with --applied-by): the merge does not deploy it, {who} applies it"
            ),
            Verdict::TracksBranch(b) => {
                format!("{p} tracks {b}: merging into the base branch does not deploy")
            }
            Verdict::Pinned(r, k) => {
                format!("{p} is pinned to {k} {r}: merging does not deploy")
            }
            Verdict::UnknownRevision(r) => format!(
                "{p} tracks `{r}`, neither a branch nor a tag of this clone: merging may not deploy"
            ),
            Verdict::NotIncluded(why) => format!("not included by {p}: {why}"),
            Verdict::NoFeeder => {
                "no Application or ApplicationSet in this repository feeds it (a root created by hand or kept elsewhere: declare it under `feeders:` in .rebind.yaml, or declare who applies it with `applied_by`)".into()
            }
            Verdict::NotProven(why) => format!("not proven to deploy: {why}"),
        }
    }
}

/// Whether a source's repoURL names this repository.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ours {
    Yes,
    No,
    /// It may: nothing to compare its URL with (the reason).
    Unproven(String),
}

/// See [`Model::lookups`]. A source is `(app, source, its folder holds a
/// kustomization)`, by index.
#[derive(Default)]
struct Lookups<'m> {
    /// The sources of this repository that reach only below their path,
    /// by the folder the path names (a templated path by the folder before
    /// its first template).
    by_dir: std::collections::HashMap<String, Vec<(usize, usize, bool)>>,
    /// The sources of this repository that may reach any file.
    anywhere: Vec<(usize, usize, bool)>,
    /// The sources that may be this repository, with the reason it is not
    /// proven.
    unproven: std::collections::HashMap<(usize, usize), String>,
    /// Per app with one, its git generators: whether each reads this
    /// repository.
    generators: std::collections::HashMap<usize, Vec<Ours>>,
    /// The Applications each file holds.
    by_file: std::collections::HashMap<&'m str, Vec<&'m App>>,
    /// What rendering a source's folder takes ([`super::render_checks`]).
    render: super::render_checks::Cache,
}

/// A parent of a file, and how it reaches it.
struct Parent<'a> {
    app: &'a App,
    cover: Cover,
    /// The revision that decides: the source's (or the `ref` source's)
    /// `targetRevision`, or the git generator's `revision`.
    revision: String,
    automated: bool,
    /// Why it is not proven that the source is this repository.
    unproven: Option<String>,
    /// It reaches the file through a git generator (the ApplicationSet's
    /// controller must update the Applications it made).
    generator: bool,
}

/// One row of the after-merge table.
#[derive(Debug, Clone)]
pub struct Row {
    pub file: String,
    /// `Kind/name` of each resource in the file that the rebind touches.
    pub resources: Vec<String>,
    /// The parent (`Kind/name`) and its file.
    pub feeder: Option<(String, String)>,
    /// The parent's `metadata.namespace`, when it names one: two parents
    /// in different namespaces may share a name.
    pub feeder_namespace: Option<String>,
    pub revision: Option<String>,
    pub revision_kind: Option<&'static str>,
    pub tracks_base: bool,
    pub hop1_automated: Option<bool>,
    /// Each child Application's own automated sync (hop 2).
    pub hop2_automated: Option<bool>,
    /// Each Application and ApplicationSet the file holds (`Kind/name`),
    /// with its own automated sync: the same the sync order says.
    pub children: Vec<(String, bool)>,
    pub wave: i64,
    pub verdict: Verdict,
    /// The parent includes the file, or may (a parent that leaves it out
    /// does not fight another that deploys it).
    pub includes: bool,
    /// What a proven verdict takes as given, named (the built-in
    /// AppProject `default` when the repository holds none).
    pub assumptions: Vec<String>,
}

/// Every Application and ApplicationSet, and the facts about the repository.
pub struct Model {
    pub apps: Vec<App>,
    pub facts: RepoFacts,
    /// Where this repository's URLs come from (`git remotes`, or
    /// `.rebind.yaml`'s `repository_urls`); `None`: nothing to compare a
    /// source's repoURL with, so nothing is proven by path alone.
    pub identity_from: Option<&'static str>,
    /// Where the repository root comes from (the git work tree, or
    /// `.rebind.yaml`'s folder); `None`: not known (no git, no config), so
    /// an Application above the root may feed a file, and "no Application
    /// feeds it" is not proven.
    pub root_from: Option<&'static str>,
    /// Whether an `argocd-cm` in the tree makes Applications report health
    /// (so sync waves between child Applications wait for health).
    pub app_health: bool,
    /// The ApplicationSet controller's `applicationsetcontroller.policy`
    /// and `applicationsetcontroller.enable.policy.override`, when an
    /// `argocd-cmd-params-cm` in the repository sets them.
    pub controller_policy: ControllerPolicy,
    /// The cluster registrations the repository holds: what a cluster
    /// generator's parameters are known from.
    pub registrations: Vec<Registered>,
    /// The AppProjects the repository holds (as they are after the
    /// rewrite: [`Model::after_rewrite`]).
    pub projects: Vec<Project>,
    /// The symbolic links of the repository that point outside it
    /// ([`super::fences::out_of_bounds_symlinks`]): ArgoCD renders no
    /// Application of this repository while one is there.
    pub symlinks: Vec<String>,
    /// Inside a git work tree, what the merge carries ([`Committed`]);
    /// `None` outside git (every file on disk is read).
    pub committed: Option<std::sync::Arc<Committed>>,
    /// The files that may feed and that git does not track (not read).
    pub not_committed: Vec<String>,
    /// ArgoCD's system-level diffing settings in the repository's
    /// `argocd-cm` ([`super::fences::diff_settings_permit`]); `None`: no
    /// `argocd-cm` in the repository, taken as setting none (named).
    pub diff_settings: Option<Vec<DiffSetting>>,
    /// Where the repository gives ArgoCD's own settings (`argocd-cm`,
    /// `argocd-cmd-params-cm`) in a way not read: they are unknown, and
    /// nothing they could decide is proven.
    pub settings_unread: Option<String>,
}

/// The ApplicationSet controller's settings that decide whether it updates
/// the Applications it made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerPolicy {
    pub policy: Option<String>,
    pub allow_override: bool,
    /// `applicationsetcontroller.enable.new.git.file.globbing`: git files
    /// generators match with doublestar (`*` stays in one folder) instead
    /// of the default greedy globbing (Generators-Git-File-Globbing.md).
    pub new_file_globbing: bool,
    /// `application.namespaces` (docs/operator-manual/app-any-namespace.md):
    /// the namespaces besides its own whose Applications the controller
    /// reconciles. `None`: no `argocd-cmd-params-cm` of the repository says
    /// (then only the control-plane namespace is known to be watched).
    pub app_namespaces: Option<String>,
}

impl Model {
    /// The tree below `root` as the merge carries it.
    pub fn tree(&self, root: &Path) -> DiskTree {
        DiskTree::of(root.to_path_buf(), self.committed.clone())
    }

    /// The policy an ApplicationSet's controller applies to it: the
    /// controller's `--policy` takes precedence over `applicationsSync`
    /// unless policy override is enabled (ArgoCD's "Controlling if/when the
    /// ApplicationSet controller modifies Applications"); `sync` by default.
    pub fn applications_sync(&self, app: &App) -> String {
        let own = app.applications_sync.clone();
        match (
            &self.controller_policy.policy,
            self.controller_policy.allow_override,
        ) {
            (Some(p), false) => p.clone(),
            (Some(p), true) => own.unwrap_or_else(|| p.clone()),
            (None, _) => own.unwrap_or_else(|| "sync".to_string()),
        }
    }

    /// Whether an ApplicationSet's controller updates the Applications it
    /// already made (`sync` and `create-update` do; `create-only` and
    /// `create-delete` do not).
    pub fn updates_applications(&self, app: &App) -> bool {
        matches!(
            self.applications_sync(app).as_str(),
            "sync" | "create-update"
        )
    }

    /// Whether a git files generator's glob matches a file, under the
    /// controller's globbing setting ([`files_match`]).
    fn files_glob(&self, glob: &str, file: &str) -> bool {
        files_match(glob, file, self.controller_policy.new_file_globbing)
    }

    fn identity_known(&self) -> bool {
        self.identity_from.is_some() && !self.facts.identities.is_empty()
    }

    /// Whether a source reads from this repository (and is not a Helm chart
    /// repository).
    pub fn is_this_repo(&self, src: &Source, tree: &dyn Tree) -> bool {
        src.chart.is_none() && self.ours(src, tree) == Ours::Yes
    }

    /// Whether a source's repoURL is this repository (a chart source's
    /// included: its `ref` may still point here). With this repository's
    /// URLs known, only a match is; without them, a source whose path
    /// exists in the tree may be, and that is not proven.
    fn ours(&self, src: &Source, tree: &dyn Tree) -> Ours {
        if src.this_repo {
            return Ours::Yes;
        }
        match repo_identity(&src.repo_url) {
            Some(id) if self.identity_known() => {
                if self.facts.identities.contains(&id) {
                    Ours::Yes
                } else {
                    self.another_remote(&id, &src.repo_url)
                }
            }
            Some(_) => {
                let maybe = match src.path.as_deref() {
                    Some(p) => p.contains("{{") || tree.exists(&join(p, "")),
                    None => src.ref_name.is_some(),
                };
                if maybe {
                    Ours::Unproven(format!(
                        "no git remote (and no `repository_urls` in .rebind.yaml) to compare repoURL {} with, so that it is this repository is not proven",
                        src.repo_url
                    ))
                } else {
                    Ours::No
                }
            }
            None => Ours::No,
        }
    }

    /// A repoURL that is not this repository: another git remote of the
    /// clone (a fork's `upstream`) is named, as a merge into the base
    /// branch's remote does not reach it; any other is simply not ours.
    fn another_remote(&self, id: &str, repo_url: &str) -> Ours {
        match (self.facts.other_remotes.get(id), &self.facts.base_remote) {
            (Some(name), Some(base)) => Ours::Unproven(format!(
                "repoURL {repo_url} is the git remote `{name}`, another repository than `{base}`, which the base branch belongs to: a merge into {base}'s branch does not reach it"
            )),
            _ => Ours::No,
        }
    }

    /// Whether a git generator reads this repository.
    fn generator_ours(&self, repo_url: &str) -> Ours {
        match repo_identity(repo_url) {
            Some(id) if self.identity_known() => {
                if self.facts.identities.contains(&id) {
                    Ours::Yes
                } else {
                    self.another_remote(&id, repo_url)
                }
            }
            Some(_) => Ours::Unproven(format!(
                "no git remote (and no `repository_urls` in .rebind.yaml) to compare the generator's repoURL {repo_url} with"
            )),
            None => Ours::No,
        }
    }

    /// What [`Model::parents`] asks of every app whatever the file, asked
    /// once per report instead of once per rewritten file.
    fn lookups(&self, tree: &dyn Tree) -> Lookups<'_> {
        let mut lk = Lookups::default();
        for (i, app) in self.apps.iter().enumerate() {
            lk.by_file.entry(app.file.as_str()).or_default().push(app);
            if app.live_absent {
                continue;
            }
            for (j, src) in app.sources.iter().enumerate() {
                match self.ours(src, tree) {
                    Ours::No => continue,
                    Ours::Yes => {}
                    Ours::Unproven(why) => {
                        lk.unproven.insert((i, j), why);
                    }
                }
                let path = src.path.as_deref().unwrap_or("");
                let templated = path.contains("{{");
                let kustomize = src.chart.is_none()
                    && !templated
                    && tree.kustomization(&join(path, "")).is_some();
                // Only a `ref`, a kustomization, a chart's value file or a
                // path applied outside ArgoCD reaches a file outside the
                // source's path ([`covers`]).
                if src.ref_name.is_some()
                    || kustomize
                    || !src.value_files.is_empty()
                    || app.applied_by.is_some()
                {
                    lk.anywhere.push((i, j, kustomize));
                } else if src.chart.is_none() {
                    let dir = if templated {
                        literal_dir(path)
                    } else {
                        join(path, "")
                    };
                    lk.by_dir.entry(dir).or_default().push((i, j, false));
                }
            }
            let generators: Vec<Ours> = app
                .git_generators
                .iter()
                .map(|g| self.generator_ours(&g.repo_url))
                .collect();
            if generators.iter().any(|t| *t != Ours::No) {
                lk.generators.insert(i, generators);
            }
        }
        lk
    }

    /// The parents of `file`: each source of this repository whose path
    /// holds it (covering it or not, with the reason), each multi-source
    /// `ref` whose `$ref/...` value file it is, and each ApplicationSet git
    /// generator whose `files` glob reads it. Only the sources that can
    /// reach the file are asked (by the folders above it), in the apps'
    /// and sources' order.
    fn parents(&self, file: &str, tree: &dyn Tree, lk: &Lookups) -> Vec<Parent<'_>> {
        let mut asked: Vec<(usize, usize, bool)> = lk.anywhere.clone();
        let folders = std::iter::once("").chain(file.match_indices('/').map(|(k, _)| &file[..k]));
        for dir in folders {
            asked.extend(lk.by_dir.get(dir).into_iter().flatten());
        }
        asked.extend(lk.generators.keys().map(|&i| (i, usize::MAX, false)));
        asked.sort_unstable();
        asked.dedup();
        let mut out = Vec::new();
        for (i, j, kustomize) in asked {
            let app = &self.apps[i];
            if j == usize::MAX {
                self.generator_parents(app, file, &lk.generators[&i], &mut out);
                continue;
            }
            // An ApplicationSet whose parameters are known (list elements,
            // cluster registrations in the repository, matrix and merge of
            // them) is judged by the Applications it makes.
            let git = |g: &GitGenerator| self.git_sets(g, tree);
            let inputs = sets::Inputs {
                registrations: &self.registrations,
                git: &git,
            };
            let made = if app.sources[j].templated() {
                sets::made(app, &inputs)
            } else {
                None
            };
            let covers: Vec<(Cover, String)> = match made {
                Some(Ok((apps, complete))) => {
                    let all: Vec<(Cover, String)> = apps
                        .iter()
                        .flat_map(|one| self.source_covers(one, j, file, tree, lk, i, kustomize))
                        .collect();
                    // One Application that includes it is enough; when the
                    // hub may make more than the repository says, a file
                    // none of the known ones includes is not proven either
                    // way.
                    match all.iter().position(|(c, _)| *c == Cover::Yes) {
                        Some(k) => vec![all[k].clone()],
                        None if complete => all.into_iter().take(1).collect(),
                        None => because(
                            self.source_covers(app, j, file, tree, lk, i, kustomize),
                            "no parameter set the repository gives names it, and the hub may give others (clusters registered outside the repository)",
                        ),
                    }
                }
                Some(Err(why)) => because(
                    self.source_covers(app, j, file, tree, lk, i, kustomize),
                    &why,
                ),
                None => self.source_covers(app, j, file, tree, lk, i, kustomize),
            };
            for (cover, revision) in covers {
                out.push(Parent {
                    app,
                    cover,
                    revision,
                    automated: app.automated && app.applied_by.is_none(),
                    unproven: lk.unproven.get(&(i, j)).cloned(),
                    generator: false,
                });
            }
        }
        out
    }

    /// How source `j` of `app` (an Application, or one an ApplicationSet
    /// makes) reaches `file`: each cover with the revision that decides.
    #[allow(clippy::too_many_arguments)]
    fn source_covers(
        &self,
        app: &App,
        j: usize,
        file: &str,
        tree: &dyn Tree,
        lk: &Lookups,
        i: usize,
        kustomize: bool,
    ) -> Vec<(Cover, String)> {
        let src = &app.sources[j];
        let mut out = Vec::new();
        let rev = src.target_revision.clone();
        if let Some(r) = &src.ref_name {
            if let Some(cover) = ref_value_file(app, r, file) {
                out.push((cover, rev.clone()));
            }
            if src.path.is_none() {
                return out;
            }
        }
        if src.chart.is_some() {
            return out;
        }
        let path = src.path.as_deref().unwrap_or("");
        if app.applied_by.is_some() {
            if file == join(path, "") || under(file, path).is_some() {
                out.push((Cover::Yes, String::new()));
            }
            return out;
        }
        if path.contains("{{") {
            out.extend(
                self.templated_cover(app, src, file, tree, lk, i)
                    .map(|c| (c, rev)),
            );
            return out;
        }
        let outside = under(file, path).is_none();
        if src.plugin {
            if !outside {
                out.push((
                    Cover::Unknown(format!(
                        "a config management plugin renders `{path}` for {}; what it reads is not followed",
                        app.id()
                    )),
                    rev,
                ));
            }
            return out;
        }
        if let (false, Some(why)) = (outside, explicit_type_mismatch(src, path, tree)) {
            out.push((Cover::Unknown(format!("{} {why}", app.id())), rev));
            return out;
        }
        if outside && !kustomize && value_file_cover(src, file).is_none() {
            return out;
        }
        let cover = self.rendered_cover(app, src, file, tree, lk);
        if !matches!(cover, Cover::No(_)) || !outside {
            out.push((cover, rev));
        }
        out
    }

    /// [`covers`], then what the repo server does when it renders the
    /// source ([`super::render_checks::check`]).
    fn rendered_cover(
        &self,
        app: &App,
        src: &Source,
        file: &str,
        tree: &dyn Tree,
        lk: &Lookups,
    ) -> Cover {
        use super::render_checks::{check, Outcome};
        let cover = covers(src, file, tree);
        let included = match &cover {
            Cover::Yes => Some(true),
            Cover::No(_) => Some(false),
            Cover::Unknown(_) => None,
        };
        // The files the source reads as manifests, by the same rules.
        let reads = |f: &str| covers(src, f, tree) == Cover::Yes;
        let files = Files(tree);
        match check(app, src, file, included, &files, &reads, &lk.render) {
            None => cover,
            Some(Outcome::NotProven(why)) => Cover::Unknown(why),
            Some(Outcome::NotIncluded(why)) => Cover::No(why),
        }
    }

    /// How a source whose path is a template reaches `file`: exactly when
    /// the path is a git directories generator's `{{path}}` (each
    /// directory the generator matches is one Application's path), else
    /// "not proven" for every file below the path's literal folder.
    fn templated_cover(
        &self,
        app: &App,
        src: &Source,
        file: &str,
        tree: &dyn Tree,
        lk: &Lookups,
        i: usize,
    ) -> Option<Cover> {
        let path = src.path.as_deref().unwrap_or("");
        under(file, &literal_dir(path))?;
        let compact: String = path.chars().filter(|c| !c.is_whitespace()).collect();
        let dir_param = matches!(compact.as_str(), "{{path}}" | "{{.path.path}}");
        let ours = lk.generators.get(&i);
        let gens: Vec<&crate::model::application::GitGenerator> = app
            .git_generators
            .iter()
            .enumerate()
            .filter(|(k, _)| ours.is_some_and(|o| o[*k] != Ours::No))
            .map(|(_, g)| g)
            .collect();
        if dir_param && !gens.is_empty() {
            // Generators-Git.md: a directories generator's `path` is each
            // directory that `path.Match`es an entry and no `exclude: true`
            // entry (argo-cd `GitGenerator.filterApps`); a files
            // generator's is the folder of each file its glob matches
            // (`path.Dir`).
            let made = |d: &str| {
                gens.iter().find(|g| {
                    let dirs = &g.directories;
                    // argo-cd `GetGitDirectories` skips every folder whose
                    // name starts with `.` (and all below it) unless the
                    // repo server sets `reposerver.include.hidden.directories`,
                    // which is not in the repository.
                    let dir_hit = !hidden_folder(d)
                        && dirs.iter().any(|(p, ex)| !ex && path_match(p, d))
                        && !dirs.iter().any(|(p, ex)| *ex && path_match(p, d));
                    dir_hit
                        || g.files.iter().any(|glob| {
                            tree.list(d)
                                .iter()
                                .any(|f| self.files_glob(glob, &join(d, f)))
                        })
                })
            };
            let folders: Vec<&str> = file.match_indices('/').map(|(k, _)| &file[..k]).collect();
            for d in folders.iter().rev() {
                let Some(g) = made(d) else { continue };
                // The generator lists folders and files at its own
                // revision: the work tree says what is there only when
                // that is the base branch.
                if !classify(&g.revision, &self.facts).tracks_base() {
                    return Some(Cover::Unknown(format!(
                        "{}'s git generator reads revision `{}`, not the base branch: its folders and files there are not read",
                        app.id(),
                        g.revision
                    )));
                }
                if !app.other_generators.is_empty() {
                    // Combined with generators whose parameters are not
                    // followed (a matrix with a cluster generator...): the
                    // folder is the git generator's, whether an
                    // Application is made for it is not known.
                    return Some(Cover::Unknown(format!(
                        "{}'s source path `{path}` is a git generator's directory `{d}`, combined with {} generator parameters that are not followed",
                        app.id(),
                        app.other_generators.join(", ")
                    )));
                }
                let one = Source {
                    path: Some((*d).to_string()),
                    ..src.clone()
                };
                return Some(self.rendered_cover(app, &one, file, tree, lk));
            }
            return None;
        }
        Some(Cover::Unknown(format!(
            "{}'s source path `{path}` is templated by generator parameters that are not followed",
            app.id()
        )))
    }

    /// A git generator's parameter sets (Generators-Git.md; argo-cd
    /// `applicationset/generators/git.go`): each folder its `directories`
    /// match (`exclude` entries removed) and each file its `files` globs
    /// match, read from the work tree, so only when the generator reads
    /// this repository at the base branch.
    fn git_sets(&self, g: &GitGenerator, tree: &dyn Tree) -> Result<Vec<Params>, String> {
        match self.generator_ours(&g.repo_url) {
            Ours::Yes => {}
            Ours::No => {
                return Err(format!(
                    "its git generator reads another repository ({})",
                    g.repo_url
                ))
            }
            Ours::Unproven(why) => return Err(why),
        }
        if !classify(&g.revision, &self.facts).tracks_base() {
            return Err(format!(
                "its git generator reads revision `{}`, not the base branch: its folders and files there are not read",
                g.revision
            ));
        }
        let mut dirs: Vec<String> = Vec::new();
        for (glob, _) in g.directories.iter().filter(|(_, ex)| !ex) {
            dirs.extend(below(tree, glob, true));
        }
        let mut files: Vec<String> = Vec::new();
        for glob in &g.files {
            files.extend(below(tree, glob, false));
        }
        for list in [&mut dirs, &mut files] {
            list.sort();
            list.dedup();
        }
        // One mapping, or a list of mappings (each one parameter set), read
        // as go-yaml decodes it (aliases, merge keys), as argo-cd's
        // `generateParamsFromGitFile` reads it.
        let one_or_list = |d: &Node| match &d.value {
            Value::Map(_) => true,
            Value::Seq(items) => items.iter().all(|i| matches!(i.value, Value::Map(_))),
            _ => false,
        };
        let docs = |f: &str| {
            tree.read(f)
                .and_then(|t| yaml::read_resolved(&t).ok())
                .filter(|d| d.len() == 1 && one_or_list(&d[0]))
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "its git generator's file `{f}` is not one mapping or a list of mappings"
                    )
                })
        };
        let reads = |glob: &str, f: &str| self.files_glob(glob, f);
        crate::find::resolve::git::sets(g, &dirs, &files, &reads, &docs)
    }

    /// The git generators of `app` that read `file` (`this`: which read
    /// this repository).
    fn generator_parents<'m>(
        &self,
        app: &'m App,
        file: &str,
        this: &[Ours],
        out: &mut Vec<Parent<'m>>,
    ) {
        for (g, this) in app.git_generators.iter().zip(this) {
            if *this != Ours::No && g.files.iter().any(|glob| self.files_glob(glob, file)) {
                // The ApplicationSet controller reads the generator's
                // files by itself (it polls); its Applications then
                // sync under the template's policy.
                out.push(Parent {
                    app,
                    cover: Cover::Yes,
                    revision: g.revision.clone(),
                    automated: true,
                    unproven: match this {
                        Ours::Unproven(why) => Some(why.clone()),
                        _ => None,
                    },
                    generator: true,
                });
            }
        }
    }

    /// An ApplicationSet that makes two Applications of one name makes
    /// none: argo-cd `applicationset/controllers/applicationset_controller.go`
    /// (`validateGeneratedApplications`: "contains applications with
    /// duplicate name") refuses the second, and the first of a refused
    /// set is not updated either. The template's name is rendered with
    /// each parameter set the repository gives; two alike make every row
    /// through the ApplicationSet not proven.
    fn duplicate_names(&mut self, tree: &dyn Tree) {
        let mut found: Vec<(usize, String)> = Vec::new();
        for (i, app) in self.apps.iter().enumerate() {
            let Some(name) = app.template_name.as_deref() else {
                continue;
            };
            if app.unmodeled.is_some() || app.generators.is_empty() {
                continue;
            }
            let git = |g: &GitGenerator| self.git_sets(g, tree);
            let inputs = sets::Inputs {
                registrations: &self.registrations,
                git: &git,
            };
            let Ok(all) = sets::all(app, &inputs) else {
                continue;
            };
            let mut seen: Vec<String> = Vec::new();
            for params in &all {
                let Some(one) = sets::render(name, params) else {
                    // A function, a pipeline or a parameter the set does
                    // not give: the names it makes are not known.
                    found.push((
                        i,
                        format!(
                            "{} makes its Applications' names with its template's name `{name}` ({}), which the review does not render for every parameter set: the generated names are not followed: uniqueness and validity not proven",
                            app.id(),
                            app.file
                        ),
                    ));
                    break;
                };
                if !crate::text::dns::is_dns_subdomain(&one) {
                    found.push((
                        i,
                        format!(
                            "{} makes an Application named `{one}` (its template's name `{name}`, {}), which is no DNS-1123 subdomain (lower-case letters, digits, `-` and `.`, at most 253): the API server refuses it",
                            app.id(),
                            app.file
                        ),
                    ));
                    break;
                }
                if seen.contains(&one) {
                    found.push((
                        i,
                        format!(
                            "{} makes more than one Application named `{one}` (its template's name `{name}`, {}): the ApplicationSet controller refuses them (\"contains applications with duplicate name\", applicationset_controller.go) and creates or updates no Application of that name",
                            app.id(),
                            app.file
                        ),
                    ));
                    break;
                }
                seen.push(one);
            }
        }
        for (i, why) in found {
            self.apps[i].unmodeled = Some(why);
        }
    }

    /// The verdict of one parent of a file.
    fn verdict(&self, p: &Parent, revision: &Revision) -> Verdict {
        // Whether it includes the file says nothing until the source is
        // known to be this repository.
        if let Some(why) = &p.unproven {
            return Verdict::NotProven(why.clone());
        }
        if let Cover::No(why) = &p.cover {
            return Verdict::NotIncluded(why.clone());
        }
        // A rendered Application's fields may be template actions.
        if let Some(why) = &p.app.rendered {
            return Verdict::NotProven(format!("{} {why}", p.app.id()));
        }
        if let Some(why) = &p.app.unmodeled {
            return Verdict::NotProven(why.clone());
        }
        if let Cover::Unknown(why) = &p.cover {
            return Verdict::NotProven(why.clone());
        }
        if let Some(who) = &p.app.applied_by {
            return Verdict::AppliedOutside(who.clone());
        }
        match revision {
            Revision::Branch(b) => return Verdict::TracksBranch(b.clone()),
            Revision::Pinned(r, k) => return Verdict::Pinned(r.clone(), k),
            Revision::Unknown(r) => return Verdict::UnknownRevision(r.clone()),
            // ArgoCD resolves `HEAD` to the remote's default branch; with
            // no `refs/remotes/origin/HEAD` that branch is not known here.
            Revision::HeadAssumed => {
                return Verdict::NotProven(HEAD_UNKNOWN.to_string());
            }
            Revision::Base => {}
        }
        if p.generator && !self.updates_applications(p.app) {
            return Verdict::NotProven(format!(
                "{} reads it through a git generator, but its applicationsSync policy is {}: the controller does not update the Applications it already made",
                p.app.id(),
                self.applications_sync(p.app)
            ));
        }
        if p.automated {
            Verdict::Deploys
        } else {
            Verdict::ManualSync
        }
    }

    /// The after-merge rows for the rewritten files.
    pub fn rows(&self, rewritten: &[(String, Vec<String>)], tree: &dyn Tree) -> Vec<Row> {
        let mut rows = Vec::new();
        if rewritten.is_empty() {
            return rows;
        }
        let lk = self.lookups(tree);
        let mut above: Above = std::collections::HashMap::new();
        for (file, resources) in rewritten {
            let children: &[&App] = lk.by_file.get(file.as_str()).map_or(&[], Vec::as_slice);
            let hop2 = if children.is_empty() {
                None
            } else {
                Some(children.iter().all(|c| c.automated))
            };
            let kids: Vec<(String, bool)> =
                children.iter().map(|c| (c.id(), c.automated)).collect();
            let wave = children.iter().map(|c| c.wave).min().unwrap_or(0);
            let parents = self.parents(file, tree, &lk);
            let objects = file_resources(file, tree);
            // The child Applications and ApplicationSets the rebind changes.
            let changed: Vec<&App> = children
                .iter()
                .copied()
                .filter(|c| resources.is_empty() || resources.contains(&c.id()))
                .collect();
            let row = |feeder, revision, kind, tracks, hop1, verdict, includes| Row {
                assumptions: Vec::new(),
                file: file.clone(),
                resources: resources.clone(),
                feeder,
                feeder_namespace: None,
                revision,
                revision_kind: kind,
                tracks_base: tracks,
                hop1_automated: hop1,
                hop2_automated: hop2,
                children: kids.clone(),
                wave,
                verdict,
                includes,
            };
            if parents.is_empty() {
                let verdict = match self.root_from {
                    Some(_) => Verdict::NoFeeder,
                    None => Verdict::NotProven(ROOT_UNKNOWN.to_string()),
                };
                rows.push(row(None, None, None, false, None, verdict, false));
                continue;
            }
            let mut mine: Vec<(Row, bool)> = Vec::new();
            for p in &parents {
                let revision = classify(&p.revision, &self.facts);
                let verdict = self.verdict(p, &revision);
                let (verdict, assumptions) = self.beyond_the_parent(
                    p.app,
                    verdict,
                    (&changed, &objects, file),
                    tree,
                    &lk,
                    &mut above,
                );
                let rev = if p.revision.is_empty() {
                    "HEAD".to_string()
                } else {
                    p.revision.clone()
                };
                let maybe = matches!(p.cover, Cover::Unknown(_));
                let includes = !matches!(p.cover, Cover::No(_));
                let mut one = row(
                    Some((p.app.id(), p.app.file.clone())),
                    Some(rev),
                    Some(revision.kind()),
                    revision.tracks_base(),
                    Some(p.automated),
                    verdict,
                    includes,
                );
                one.assumptions = assumptions;
                one.feeder_namespace =
                    (!p.app.namespace.is_empty()).then(|| p.app.namespace.clone());
                mine.push((one, maybe && revision.tracks_base()));
            }
            rows.extend(settle(mine));
        }
        // Inside git, an untracked file is in no commit: whatever feeds
        // its folder, the merge does not carry it.
        if let Some(c) = &self.committed {
            for r in rows.iter_mut().filter(|r| !c.tracked(&r.file)) {
                r.verdict = Verdict::NotProven(UNTRACKED.to_string());
            }
        }
        rows
    }

    /// A proven verdict of `parent`, checked beyond it: a changed child
    /// whose fields the review does not model (an ApplicationSet's
    /// `ignoreApplicationDifferences`, an Application's `skip-reconcile`)
    /// may not act on the change; an ApplicationSet the rebind changes
    /// reaches its Applications only when its controller updates them;
    /// then [`Model::fenced`]. The verdict, and the assumptions it takes.
    fn beyond_the_parent(
        &self,
        parent: &App,
        verdict: Verdict,
        (changed, objects, file): (&[&App], &[Resource], &str),
        tree: &dyn Tree,
        lk: &Lookups,
        above: &mut Above,
    ) -> (Verdict, Vec<String>) {
        if !verdict.proven() || parent.applied_by.is_some() {
            return (verdict, Vec::new());
        }
        if let Some(why) = changed.iter().find_map(|c| c.unmodeled.as_ref()) {
            return (Verdict::NotProven(why.clone()), Vec::new());
        }
        let frozen = changed
            .iter()
            .find(|c| c.kind == "ApplicationSet" && !self.updates_applications(c));
        if let Some(set) = frozen {
            return (
                Verdict::NotProven(format!(
                    "{} is updated on the hub, but its applicationsSync policy is {}: the controller does not update the Applications it already made",
                    set.id(),
                    self.applications_sync(set)
                )),
                Vec::new(),
            );
        }
        match self.fenced(parent, (changed, objects, file), tree, lk, above) {
            Ok(assumed) => (verdict, assumed),
            Err(why) => (Verdict::NotProven(why), Vec::new()),
        }
    }

    /// Whether ArgoCD syncs what `parent` applies, whatever its revision:
    /// every Application above it in the app-of-apps chain sets only
    /// modelled fields; no symbolic link of the repository points outside
    /// it; the AppProject of the parent, of each Application above it and
    /// of each changed child permits its sources, destination and
    /// namespace. `Ok` with the assumptions taken (named), or `Err` with
    /// the reason it is not proven.
    fn fenced(
        &self,
        parent: &App,
        (changed, objects, file): (&[&App], &[Resource], &str),
        tree: &dyn Tree,
        lk: &Lookups,
        above: &mut Above,
    ) -> Result<Vec<String>, String> {
        let ancestors = self.ancestors(parent, tree, lk, above);
        for &i in &ancestors {
            let a = &self.apps[i];
            if let Some(why) = &a.unmodeled {
                return Err(format!(
                    "{why}; it is above {} in the app-of-apps chain",
                    parent.id()
                ));
            }
        }
        if !self.symlinks.is_empty() {
            return Err(format!(
                "the repository holds a symbolic link pointing outside it ({}): ArgoCD's repo server renders no Application of this repository while it is there (\"repository contains out-of-bounds symlinks\"), so {} deploys nothing",
                self.symlinks.join(", "),
                parent.id()
            ));
        }
        let mut assumed: Vec<String> = Vec::new();
        let chain = std::iter::once(parent)
            .chain(ancestors.iter().map(|&i| &self.apps[i]))
            .chain(changed.iter().copied());
        for app in chain {
            if app.applied_by.is_some() {
                continue;
            }
            if let Some(a) = super::fences::project_permits(
                app,
                &self.projects,
                &self.registrations,
                self.controller_policy.app_namespaces.as_deref(),
            )? {
                for one in a.split("; ") {
                    if !assumed.iter().any(|x| x == one) {
                        assumed.push(one.to_string());
                    }
                }
            }
        }
        // What the parent syncs of the changed file: each object's kind
        // and namespace under the parent's AppProject.
        for res in objects {
            if let Some(hook) = &res.hook {
                return Err(format!(
                    "{} ({}:{}) is annotated `{hook}`: ArgoCD takes it for a hook (gitops-engine pkg/sync/hook `IsHook`), created only around a sync, on deletion or never, not a resource the sync applies",
                    res.shown(),
                    res.file,
                    res.line
                ));
            }
            super::fences::resource_permitted(parent, res, &self.projects, &self.registrations)?;
        }
        if let Some(why) = &self.settings_unread {
            return Err(format!(
                "ArgoCD's settings are not read: {why}: whether its system-level diffing settings (argocd-cm) leave the change unsynced is not proven"
            ));
        }
        match &self.diff_settings {
            Some(settings) if objects.is_empty() => {
                // What the file renders into is not read: any kind.
                let any = Resource {
                    file: file.to_string(),
                    name: "(what it renders)".to_string(),
                    ..Resource::default()
                };
                super::fences::diff_settings_permit(settings, std::slice::from_ref(&any))?;
            }
            Some(settings) => super::fences::diff_settings_permit(settings, objects)?,
            None => {
                if !assumed.iter().any(|a| a == NO_ARGOCD_CM) {
                    assumed.push(NO_ARGOCD_CM.to_string());
                }
            }
        }
        for a in self.landing(parent, changed, &ancestors, tree, lk)? {
            if !assumed.contains(&a) {
                assumed.push(a);
            }
        }
        self.defined_once(changed, tree, lk)?;
        Ok(assumed)
    }

    /// [`super::fences::lands_in_control_plane`] for each Application of
    /// the chain: the changed children as `parent` applies them, `parent`
    /// and each Application above it as each that includes its file
    /// applies it. The assumptions taken, or why it is not proven.
    fn landing(
        &self,
        parent: &App,
        changed: &[&App],
        ancestors: &[usize],
        tree: &dyn Tree,
        lk: &Lookups,
    ) -> Result<Vec<String>, String> {
        let mut assumed = Vec::new();
        let mut pairs: Vec<(&App, &App)> = changed.iter().map(|c| (parent, *c)).collect();
        let chain = std::iter::once(parent).chain(ancestors.iter().map(|&i| &self.apps[i]));
        for x in chain {
            for q in self.parents(&x.file, tree, lk) {
                if q.cover == Cover::Yes && !std::ptr::eq(q.app, x) {
                    pairs.push((q.app, x));
                }
            }
        }
        for (applier, child) in pairs {
            let as_object = Resource {
                group: Some(table::ARGO_GROUP.to_string()),
                kind: Some(child.kind.to_string()),
                name: child.name.clone(),
                namespace: Some(child.namespace.clone()),
                line: 0,
                file: child.file.clone(),
                hook: None,
            };
            super::fences::resource_permitted(
                applier,
                &as_object,
                &self.projects,
                &self.registrations,
            )?;
            if let Some(a) = super::fences::lands_in_control_plane(applier, child, &self.projects)?
            {
                if !assumed.contains(&a) {
                    assumed.push(a);
                }
            }
        }
        Ok(assumed)
    }

    /// A changed child must be the one definition of its Application in
    /// what ArgoCD applies: argo-cd `controller/state.go` keeps only the
    /// last object of a duplicate within one parent's output, and two
    /// parents applying the same Application overwrite each other. Another
    /// definition of the same kind, name and namespace (an empty namespace
    /// may be any) that some parent may include makes it not proven,
    /// naming both places.
    fn defined_once(&self, changed: &[&App], tree: &dyn Tree, lk: &Lookups) -> Result<(), String> {
        for c in changed {
            for o in &self.apps {
                let same = o.kind == c.kind
                    && o.name == c.name
                    && !std::ptr::eq(o, *c)
                    && !o.live_absent
                    && o.rendered.is_none()
                    && (o.namespace == c.namespace
                        || o.namespace.is_empty()
                        || c.namespace.is_empty());
                if !same {
                    continue;
                }
                let applied = self
                    .parents(&o.file, tree, lk)
                    .iter()
                    .any(|q| !matches!(q.cover, Cover::No(_)));
                if applied {
                    let twice = if o.file == c.file {
                        format!("twice in {}", c.file)
                    } else {
                        format!("in {} and in {}", c.file, o.file)
                    };
                    return Err(format!(
                        "{} is defined {twice}, both in what ArgoCD applies: one parent keeps only the last of a duplicate object and two parents overwrite each other, so the rewritten definition is not proven to be the one synced",
                        c.id()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The Applications and ApplicationSets above `app` in the
    /// app-of-apps chain (by index): each whose source includes its file,
    /// and theirs in turn; `app` itself aside.
    fn ancestors(&self, app: &App, tree: &dyn Tree, lk: &Lookups, above: &mut Above) -> Vec<usize> {
        let key = (app.file.clone(), app.id());
        if let Some(found) = above.get(&key) {
            return found.clone();
        }
        let mut out: Vec<usize> = Vec::new();
        let mut files = vec![app.file.clone()];
        let mut seen: BTreeSet<String> = BTreeSet::new();
        seen.insert(app.file.clone());
        while let Some(file) = files.pop() {
            for q in self.parents(&file, tree, lk) {
                // One that may include it, or not, is no link of the
                // chain (as a parent that may include a file does not
                // fight one that deploys it).
                if q.cover != Cover::Yes || q.app.applied_by.is_some() {
                    continue;
                }
                let Some(i) = self.apps.iter().position(|a| std::ptr::eq(a, q.app)) else {
                    continue;
                };
                if self.apps[i].id() == app.id() && self.apps[i].file == app.file {
                    continue;
                }
                if !out.contains(&i) {
                    out.push(i);
                }
                if seen.insert(q.app.file.clone()) {
                    files.push(q.app.file.clone());
                }
            }
        }
        above.insert(key, out.clone());
        out
    }

    /// The model as it is after the rewrite: the AppProjects and the
    /// Applications' destinations of a rewritten file read from its new
    /// text (`rel` relative to the model's root). A rewrite changes only
    /// endpoint bytes, so the file holds the same documents in the same
    /// order.
    pub fn after_rewrite(&mut self, rel: &str, new: &str) {
        let Ok((docs, _)) = yaml::read_maybe_masked(new) else {
            return;
        };
        let mut projects = Vec::new();
        let mut apps = Vec::new();
        for doc in &docs {
            let m = Manifest { file: rel, doc };
            if let Some(p) = project_of(&m) {
                projects.push(p);
            } else if let Some(a) = app_of(&m) {
                apps.push(a);
            }
        }
        let old: Vec<&mut Project> = self.projects.iter_mut().filter(|p| p.file == rel).collect();
        if old.len() == projects.len() {
            for (o, mut n) in old.into_iter().zip(projects) {
                n.rendered = o.rendered.take();
                *o = n;
            }
        }
        for a in apps {
            if let Some(o) = self.apps.iter_mut().find(|o| {
                o.file == rel
                    && o.rendered.is_none()
                    && o.kind == a.kind
                    && o.name == a.name
                    && o.namespace == a.namespace
            }) {
                o.destination = a.destination;
            }
        }
    }

    /// The order a person follows after the merge: each parent that needs a
    /// manual sync (parents before children), then the child Applications
    /// by ascending wave. Each step says whether it is automatic.
    pub fn order(&self, rows: &[Row]) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut parents: BTreeMap<String, bool> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.verdict.deploys_on_merge()) {
            if let (Some((p, _)), Some(auto)) = (&r.feeder, r.hop1_automated) {
                parents.insert(p.clone(), auto);
            }
        }
        // Parents fed by other parents come after them.
        let depth = |id: &str| -> usize {
            let mut d = 0;
            let mut cur = self.apps.iter().find(|a| a.id() == id);
            let mut seen = BTreeSet::new();
            while let Some(app) = cur {
                if !seen.insert(app.id()) {
                    break;
                }
                let up = self.apps.iter().find(|p| {
                    p.id() != app.id()
                        && p.sources
                            .iter()
                            .any(|s| under(&app.file, s.path.as_deref().unwrap_or("-")).is_some())
                });
                if up.is_some() {
                    d += 1;
                }
                cur = up;
            }
            d
        };
        let mut ps: Vec<(usize, String, bool)> = parents
            .into_iter()
            .map(|(p, a)| (depth(&p), p, a))
            .collect();
        ps.sort();
        for (_, p, auto) in ps {
            let updates = self.updates_of(&p);
            steps.push(Step {
                what: p,
                wave: None,
                automated: auto,
                updates,
            });
        }
        let mut kids: Vec<(i64, String, bool)> = Vec::new();
        let parent_ids: BTreeSet<String> = steps.iter().map(|s| s.what.clone()).collect();
        for r in rows.iter().filter(|r| r.verdict.deploys_on_merge()) {
            for app in self.apps.iter().filter(|a| a.file == r.file) {
                let id = app.id();
                if !parent_ids.contains(&id) && !kids.iter().any(|(_, k, _)| *k == id) {
                    kids.push((app.wave, id, app.automated));
                }
            }
        }
        kids.sort();
        for (w, id, auto) in kids {
            let updates = self.updates_of(&id);
            steps.push(Step {
                what: id,
                wave: Some(w),
                automated: auto,
                updates,
            });
        }
        steps
    }

    /// For an ApplicationSet (`Kind/name`), whether its controller updates
    /// the Applications it made; `None` for an Application.
    fn updates_of(&self, id: &str) -> Option<bool> {
        self.apps
            .iter()
            .find(|a| a.kind == "ApplicationSet" && a.id() == id)
            .map(|a| self.updates_applications(a))
    }

    /// Whether sync waves between the child Applications cannot gate on
    /// health: more than one wave among them and no Application health
    /// customisation in an `argocd-cm` of the repository.
    pub fn waves_without_health(&self, steps: &[Step]) -> bool {
        let waves: BTreeSet<i64> = steps.iter().filter_map(|s| s.wave).collect();
        waves.len() > 1 && !self.app_health
    }
}

/// What is above each Application (by its file and `Kind/name`), asked
/// once per report ([`Model::ancestors`]).
type Above = std::collections::HashMap<(String, String), Vec<usize>>;

/// The rows of one file once every parent is counted. A parent that may
/// include the file from the base branch (`true` beside its row) changes
/// nothing when another parent proves it deploys. A parent that includes
/// it from another revision puts the old file back (with self-heal, at
/// once), so the row that would deploy is not proven, naming it.
fn settle(mut mine: Vec<(Row, bool)>) -> Vec<Row> {
    if mine.iter().any(|(r, _)| r.verdict.proven()) {
        mine.retain(|(_, harmless_maybe)| !harmless_maybe);
    }
    let mut mine: Vec<Row> = mine.into_iter().map(|(r, _)| r).collect();
    let fighting: Vec<String> = mine
        .iter()
        .filter(|r| r.includes && !r.verdict.proven())
        .map(|r| {
            // Named with its file: two parents may share a name (in
            // different namespaces).
            let p = r.feeder.as_ref().map(|f| f.0.as_str());
            let file = r.feeder.as_ref().map_or("-", |f| f.1.as_str());
            format!("{} in {file} ({})", p.unwrap_or("-"), r.verdict.sentence(p))
        })
        .collect();
    if !fighting.is_empty() {
        for r in mine.iter_mut().filter(|r| r.verdict.deploys_on_merge()) {
            r.verdict = Verdict::NotProven(format!(
                "another parent also includes it: {}; after the merge the parents disagree",
                fighting.join("; ")
            ));
        }
    }
    mine
}

/// One step of the after-merge order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// `Kind/name`.
    pub what: String,
    /// The child's sync wave (`None` for a parent).
    pub wave: Option<i64>,
    pub automated: bool,
    /// An ApplicationSet: whether its controller updates the Applications
    /// it made (its `applicationsSync` policy); `None` for an Application.
    pub updates: Option<bool>,
}

/// Whether an `argocd-cm` (as a ConfigMap, or as Helm values `configs.cm` of
/// an Application installing ArgoCD) declares an Application health check.
pub fn declares_app_health(doc: &Node) -> bool {
    const KEY: &str = table::APP_HEALTH_CHECK;
    let doc = V(Some(doc));
    let cm_data = |data: V| -> bool {
        !s(data, KEY).is_badvalue()
            || text(s(data, table::RESOURCE_CUSTOMIZATIONS))
                .is_some_and(|t| t.contains("argoproj.io/Application") && t.contains("health"))
    };
    let is_cm = text(at(doc, positions::KIND)).as_deref() == Some(table::CONFIG_MAP)
        && text(at(doc, positions::NAME)).as_deref() == Some(table::ARGOCD_CM);
    if is_cm && cm_data(s(doc, table::CONFIG_MAP_DATA)) {
        return true;
    }
    let helm = at(doc, table::APP_SOURCE_HELM);
    let values_object = s(helm, table::HELM_VALUES_OBJECT);
    if cm_data(at(values_object, table::CHART_CM_VALUES)) {
        return true;
    }
    text(s(helm, table::HELM_VALUES)).is_some_and(|v| v.contains(KEY))
}

/// A file's documents and the template actions masked to read them.
type DocsRead<'a> = (&'a [Node], &'a [(usize, usize)]);

/// Whether a file's documents may make it the parent of a rewritten file,
/// read through the Application table, whatever the targets (`true`:
/// ArgoCD's own settings, a cluster registration (a cluster generator's
/// parameters), an ApplicationSet (its generators' files are globs), a source with value files or a `ref` (a value file may name any
/// file), a source path that is the root, climbs or is templated; or a file
/// the reader cannot read, judged again when it is read), and the folders
/// its other sources' paths name. What cannot be a parent is not read
/// again: a rebind of a large tree keeps this of its Applications during
/// its one walk, and the review parses only the few that matter.
fn feed_facts(read: Option<DocsRead<'_>>, raw: &str) -> (bool, Vec<Box<str>>) {
    let Some((docs, masked)) = read else {
        return (true, Vec::new());
    };
    let mut always = false;
    let mut dirs = Vec::new();
    for doc in docs {
        // A cluster registration is a cluster generator's parameters.
        // An AppProject decides whether its Applications sync at all.
        always |= declares_app_health(doc)
            || table::diff_settings(doc, "").is_some()
            || table::settings_unread(doc, "").is_some()
            || controller_policy(doc).is_some()
            || sets::registration_of(doc, "").is_some()
            || project_of(&Manifest { file: "", doc }).is_some();
        let mut apps: Vec<App> = app_of(&Manifest { file: "", doc }).into_iter().collect();
        // A masked template action reads as written (`path: {{ .path }}`).
        for app in &mut apps {
            unmask(app, doc, raw, masked);
        }
        if apps.is_empty() {
            nested_apps(doc, "", 0, &mut apps);
        }
        for app in &apps {
            // Its identity, for [`defined_once`](Model::defined_once): a
            // mark no folder starts with.
            dirs.push(format!("{NAME_MARK}{}", app.id()).into_boxed_str());
            always |= app.kind == "ApplicationSet";
            for src in &app.sources {
                always |= !src.value_files.is_empty() || src.ref_name.is_some();
                let Some(path) = &src.path else { continue };
                let dir = join(path, "");
                always |= dir.is_empty() || path.contains("..") || path.contains("{{");
                dirs.push(dir.into_boxed_str());
            }
        }
    }
    (always, dirs)
}

/// What starts a candidate's Application identity among its folders.
const NAME_MARK: char = '\u{1}';

/// Whether an Application file may hold ArgoCD objects the review reads
/// (an `argoproj.io` API group, or `argocd-cm`): the others are not parsed.
fn may_hold_apps(raw: &str) -> bool {
    raw.contains("argoproj.io")
        || raw.contains(table::ARGOCD_CM)
        || raw.contains(table::ARGO_CD_CHART)
}

/// What a rebind's walk keeps of a file that may hold an Application, an
/// ApplicationSet or `argocd-cm`, so that the after-merge review neither
/// walks nor reads the tree again: its name and what [`may_feed`] asks of
/// its documents ([`feed_facts`]), never the text. Once the rewritten files are known, only the
/// candidates that may feed one are read again and parsed.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `/`-separated, relative to the walked directory.
    rel: Box<str>,
    /// A possible parent whatever the targets ([`feed_facts`]).
    always: bool,
    /// The folders its other sources' paths name.
    dirs: Box<[Box<str>]>,
}

impl Candidate {
    /// The candidate a file's text `raw` is (named by `rel`, asked only
    /// then), or `None` when the after-merge review would not parse it (no
    /// Application, ApplicationSet or `argocd-cm` in it).
    pub fn of(raw: &str, rel: impl FnOnce() -> Option<String>) -> Option<Candidate> {
        if !may_hold_apps(raw) {
            return None;
        }
        let rel = rel()?;
        let docs = yaml::read_maybe_masked(raw).ok();
        let (always, dirs) = feed_facts(docs.as_ref().map(|d| (&d.0[..], &d.1[..])), raw);
        Some(Candidate {
            rel: rel.into_boxed_str(),
            always,
            dirs: dirs.into_boxed_slice(),
        })
    }
}

/// Whether a file with these facts ([`feed_facts`]) may feed one of
/// `targets`: it is one, it may feed any, or a folder it names holds one.
fn may_feed<'a>(
    rel: &str,
    always: bool,
    mut dirs: impl Iterator<Item = &'a str>,
    targets: &Targets,
) -> bool {
    always || targets.set.contains(rel) || dirs.any(|d| targets.dirs.contains(d))
}

/// The candidates of one walk of `root` (canonical), in the walk's order:
/// every file below it that [`yaml_files`] would list and [`read_apps`]
/// would parse. Kept in one string (each name, then its folders, each
/// followed by a NUL, which no path holds): a tree of many Applications
/// costs about the length of their names and folders.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    pub root: PathBuf,
    text: String,
    /// Where each candidate starts in `text`, and its `always`.
    starts: Vec<(usize, bool)>,
}

impl Candidates {
    pub fn new(root: PathBuf) -> Candidates {
        Candidates {
            root,
            ..Candidates::default()
        }
    }

    pub fn push(&mut self, c: Candidate) {
        self.starts.push((self.text.len(), c.always));
        for part in std::iter::once(&c.rel).chain(c.dirs.iter()) {
            self.text.push_str(part);
            self.text.push('\0');
        }
    }

    /// Each candidate: its name, `always`, and its folders.
    fn each(&self) -> impl Iterator<Item = (&str, bool, std::str::Split<'_, char>)> {
        let ends = self.starts.iter().skip(1).map(|s| s.0);
        let ends = ends.chain(std::iter::once(self.text.len()));
        self.starts.iter().zip(ends).map(|(&(start, always), end)| {
            // The record ends with a NUL: drop it, then split.
            let mut parts = self.text[start..end - 1].split('\0');
            let rel = parts.next().unwrap_or("");
            (rel, always, parts)
        })
    }

    /// The candidates' names, in the walk's order.
    pub fn rels(&self) -> impl Iterator<Item = &str> {
        self.each().map(|(rel, _, _)| rel)
    }
}

/// The rewritten files, and every folder above one: what [`may_feed`]
/// looks up for each manifest, in constant time.
struct Targets {
    set: std::collections::HashSet<String>,
    dirs: std::collections::HashSet<String>,
}

impl Targets {
    fn new(files: &[String]) -> Targets {
        let mut dirs = std::collections::HashSet::new();
        for f in files {
            // An Application's identity ([`NAME_MARK`]) matches the
            // candidates that define it.
            if f.starts_with(NAME_MARK) {
                dirs.insert(f.clone());
                continue;
            }
            let mut d = f.as_str();
            while let Some(i) = d.rfind('/') {
                d = &d[..i];
                dirs.insert(d.to_string());
            }
        }
        Targets {
            set: files.iter().cloned().collect(),
            dirs,
        }
    }
}

/// Every Application, ApplicationSet and `argocd-cm` below `root` that
/// may feed one of `only_for` (all of them for `None`), or an Application
/// read so (each Application above a parent in the app-of-apps chain is
/// judged too): from the candidates a walk of `root` kept, or by walking
/// it.
/// Inside a git work tree only what the merge carries is read
/// (`committed`): an untracked file that may feed is named in
/// [`Read::not_committed`] instead.
fn apps_below(
    root: &Path,
    only_for: Option<&[String]>,
    known: Option<&Candidates>,
    committed: Option<&Committed>,
) -> Read {
    let carried = |rel: &str| committed.is_none_or(|c| c.holds_file(rel));
    let Some(targets) = only_for else {
        let (files, untracked): (Vec<String>, Vec<String>) =
            yaml_files(root).into_iter().partition(|f| carried(f));
        let mut read = read_apps(root, &files, None);
        read.not_committed = untracked
            .into_iter()
            .filter(|rel| {
                std::fs::read_to_string(root.join(rel))
                    .is_ok_and(|raw| Candidate::of(&raw, || Some(String::new())).is_some())
            })
            .collect();
        return read;
    };
    let walked;
    let known = match known {
        // The walk yields the tracked files `.gitignore` matches too
        // (`WalkRequest::tracked_hidden`): they are in the commit ArgoCD reads.
        Some(k) if k.root == root => k,
        _ => {
            let mut c = Candidates::new(root.to_path_buf());
            add_candidates(&mut c, root, yaml_files(root));
            walked = c;
            &walked
        }
    };
    let rewritten: Vec<String> = targets.to_vec();
    let mut targets: Vec<String> = targets.to_vec();
    let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
    // The identities of the Applications the rewritten files hold: every
    // other definition of one is read too (and what feeds it).
    let mut names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut out = Read::default();
    loop {
        let lookup = Targets::new(&targets);
        let (files, untracked): (Vec<String>, Vec<String>) = known
            .each()
            .filter(|(rel, always, dirs)| {
                !done.contains(*rel)
                    && (may_feed(rel, *always, dirs.clone(), &lookup)
                        || dirs.clone().any(|d| kustomized(root, d)))
            })
            .map(|(rel, _, _)| rel.to_string())
            .partition(|f| carried(f));
        done.extend(untracked.iter().cloned());
        out.not_committed.extend(untracked);
        if files.is_empty() {
            break;
        }
        done.extend(files.iter().cloned());
        let read = read_apps(root, &files, Some(&targets));
        let above: Vec<String> = read
            .apps
            .iter()
            .map(|a| a.file.clone())
            .filter(|f| !targets.contains(f))
            .collect();
        let before = names.len();
        names.extend(
            read.apps
                .iter()
                .filter(|a| rewritten.contains(&a.file))
                .map(|a| format!("{NAME_MARK}{}", a.id())),
        );
        let more_names = names.len() > before;
        out.merge(read);
        if above.is_empty() && !more_names {
            break;
        }
        targets.extend(names.iter().cloned());
        targets.extend(above);
        targets.sort();
        targets.dedup();
    }
    out
}

/// What [`read_apps`] finds: the Applications and ApplicationSets, and
/// ArgoCD's own settings the review needs.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub apps: Vec<App>,
    /// An `argocd-cm` declares Application health.
    pub health: bool,
    pub policy: ControllerPolicy,
    /// The cluster registrations (for cluster generators).
    pub registrations: Vec<Registered>,
    /// The AppProjects.
    pub projects: Vec<Project>,
    /// The files that may feed and that git does not track: not read
    /// ([`Committed`]), named.
    pub not_committed: Vec<String>,
    /// The diffing settings of the `argocd-cm`s read; `None` when none
    /// was found.
    pub diff: Option<Vec<DiffSetting>>,
    /// Where ArgoCD's own settings are given in a way not read
    /// ([`table::settings_unread`]).
    pub settings_unread: Vec<String>,
}

impl Read {
    /// What another reading of other files found, added.
    fn merge(&mut self, other: Read) {
        self.apps.extend(other.apps);
        self.health |= other.health;
        if other.policy != ControllerPolicy::default() {
            self.policy = other.policy;
        }
        self.registrations.extend(other.registrations);
        self.projects.extend(other.projects);
        self.not_committed.extend(other.not_committed);
        if let Some(d) = other.diff {
            self.diff.get_or_insert_with(Vec::new).extend(d);
        }
        self.settings_unread.extend(other.settings_unread);
    }
}

/// Whether folder `dir` below `root` holds a kustomization (its listing may
/// reach any file, `../../common`) or a chart (whose templates may hold
/// Applications rendered with the values the Application naming it
/// gives): an Application naming it is read whatever is rebound, and
/// `feeders` and `diff` agree.
///
/// Asked for the folders of every file read, so the answer is kept per
/// folder for the run (a rebind writes no kustomization and no chart).
fn kustomized(root: &Path, dir: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    let at = root.join(dir);
    let seen = SEEN.get_or_init(Default::default);
    if let Some(&known) = seen.lock().unwrap_or_else(|e| e.into_inner()).get(&at) {
        return known;
    }
    // One listing of the folder answers both (a link counts as what it
    // points at).
    let answer = std::fs::read_dir(&at).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let Some(name) = name.to_str() else {
                return false;
            };
            let marks =
                KUSTOMIZATION_NAMES.contains(&name) || super::render_checks::marks_chart(name);
            marks
                && e.file_type()
                    .is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file()))
        })
    });
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(at, answer);
    answer
}

/// Each of `files` (below `root`) that may feed, as a candidate.
fn add_candidates(c: &mut Candidates, root: &Path, files: Vec<String>) {
    for rel in files {
        let Ok(raw) = std::fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        if let Some(one) = Candidate::of(&raw, || Some(rel.clone())) {
            c.push(one);
        }
    }
}

/// Reads every Application, ApplicationSet and `argocd-cm` below `root`
/// from the given files (`/`-separated paths relative to `root`). A file
/// read only with its Helm template actions masked, or below a chart's
/// `templates/`, holds Applications the chart renders; an Application held
/// inside another document (Helm values such as `extraObjects`) exists only
/// if a chart renders it: both are kept, marked [`App::rendered`].
pub fn read_apps(root: &Path, files: &[String], only_for: Option<&[String]>) -> Read {
    let mut out = Read::default();
    let lookup = only_for.map(Targets::new);
    // Each file on every core; what they hold is added in the files' order.
    crate::sys::par::par_each(
        files.iter(),
        |rel| read_one(root, rel, lookup.as_ref()),
        |one| {
            if let Some(one) = one {
                out.merge(one);
            }
        },
    );
    out
}

/// What one file of [`read_apps`] holds (`None`: nothing to read, or not
/// a file that may feed the targets).
fn read_one(root: &Path, rel: &str, lookup: Option<&Targets>) -> Option<Read> {
    let mut out = Read::default();
    {
        let raw = std::fs::read_to_string(root.join(rel)).ok()?;
        if !may_hold_apps(&raw) {
            return None;
        }
        let (docs, masked) = yaml::read_maybe_masked(&raw).ok()?;
        // A rewritten file's own Applications are the children (hop 2).
        if let Some(lookup) = lookup {
            let (always, dirs) = feed_facts(Some((&docs, &masked)), &raw);
            let dirs = || dirs.iter().map(|d| &**d);
            if !may_feed(rel, always, dirs(), lookup) && !dirs().any(|d| kustomized(root, d)) {
                return None;
            }
        }
        let template = !masked.is_empty() || in_chart_templates(root, rel);
        for doc in &docs {
            out.health |= declares_app_health(doc);
            if let Some(d) = table::diff_settings(doc, rel) {
                out.diff.get_or_insert_with(Vec::new).extend(d);
            }
            if let Some(p) = controller_policy(doc) {
                out.policy = p;
            }
            out.settings_unread.extend(table::settings_unread(doc, rel));
            out.registrations.extend(sets::registration_of(doc, rel));
            let m = Manifest { file: rel, doc };
            if let Some(mut project) = project_of(&m) {
                if template {
                    project.rendered = Some(format!(
                        "is defined in a Helm chart template (`{rel}:{}`): its permissions as rendered are not followed",
                        doc.line
                    ));
                }
                out.projects.push(project);
            } else if let Some(mut app) = app_of(&m) {
                unmask(&mut app, doc, &raw, &masked);
                if template {
                    app.rendered = Some(format!(
                        "is defined in a Helm chart template (`{rel}:{}`): whether and how it renders is not followed",
                        doc.line
                    ));
                }
                out.apps.push(app);
            } else {
                nested_apps(doc, rel, 0, &mut out.apps);
            }
        }
    }
    Some(out)
}

/// The objects a file holds ([`resources_of`]), as a parent that reads
/// it as manifests syncs them: none when it is no YAML or JSON.
fn file_resources(file: &str, tree: &dyn Tree) -> Vec<Resource> {
    let Some(raw) = tree.read(file) else {
        return Vec::new();
    };
    match yaml::read_maybe_masked(&raw) {
        Ok((docs, masked)) => resources_of(&docs, &masked, file),
        Err(_) => Vec::new(),
    }
}

/// Whether `rel` is below the `templates/` folder of a chart (a folder
/// holding `Chart.yaml`).
fn in_chart_templates(root: &Path, rel: &str) -> bool {
    rel.match_indices("templates/")
        .filter(|(k, _)| *k == 0 || rel.as_bytes()[k - 1] == b'/')
        .any(|(k, _)| super::render_checks::is_chart_dir(&root.join(&rel[..k])))
}

/// Applications and ApplicationSets held inside a document that is not
/// one (Helm values: `extraObjects`, `applications:` maps...).
fn nested_apps(node: &Node, rel: &str, depth: usize, out: &mut Vec<App>) {
    if depth > 16 {
        return;
    }
    let children: Vec<&Node> = match &node.value {
        Value::Map(pairs) => pairs.iter().map(|(_, v)| v).collect(),
        Value::Seq(items) => items.iter().collect(),
        _ => return,
    };
    for child in children {
        let m = Manifest {
            file: rel,
            doc: child,
        };
        match app_of(&m) {
            Some(mut app) if child.at(table::APP_SPEC).is_some() => {
                app.rendered = Some(format!(
                    "{} (`{rel}:{}`): it exists only if a chart renders it",
                    super::rendered::HELD_IN_VALUES,
                    child.line
                ));
                out.push(app);
            }
            _ => nested_apps(child, rel, depth + 1, out),
        }
    }
}

/// The ApplicationSet controller's policy settings an
/// `argocd-cmd-params-cm` declares (as a ConfigMap, or as the argo-cd Helm
/// chart's `configs.params` values of an Application installing ArgoCD).
pub fn controller_policy(doc: &Node) -> Option<ControllerPolicy> {
    const POLICY: &str = table::APPSET_POLICY;
    const OVERRIDE: &str = table::APPSET_POLICY_OVERRIDE;
    let doc = V(Some(doc));
    const GLOBBING: &str = table::APPSET_NEW_GIT_FILE_GLOBBING;
    const NAMESPACES: &str = table::APPLICATION_NAMESPACES;
    // `cm`: the ConfigMap itself, whose data say every setting (a key it
    // does not hold is ArgoCD's default).
    let of = |data: V, cm: bool| -> Option<ControllerPolicy> {
        let policy = text(s(data, POLICY)).filter(|p| !p.is_empty());
        let allow_override = text(s(data, OVERRIDE)).as_deref() == Some("true");
        let new_file_globbing = text(s(data, GLOBBING)).as_deref() == Some("true");
        let app_namespaces = text(s(data, NAMESPACES)).or_else(|| cm.then(String::new));
        (cm || policy.is_some() || allow_override || new_file_globbing).then_some(
            ControllerPolicy {
                policy,
                allow_override,
                new_file_globbing,
                app_namespaces,
            },
        )
    };
    let is_cm = text(at(doc, positions::KIND)).as_deref() == Some(table::CONFIG_MAP)
        && text(at(doc, positions::NAME)).as_deref() == Some(table::CMD_PARAMS_CM);
    if is_cm {
        return of(s(doc, table::CONFIG_MAP_DATA), true);
    }
    // Each source's Helm settings (the one `source`, or each of `sources`).
    for src in table::source_nodes(at(doc, table::APP_SPEC)) {
        // In a `helm.values` string the settings are not read: a policy
        // named there is unknown, so nothing that depends on it is proven.
        let helm = s(src, table::HELM);
        let values = text(s(helm, table::HELM_VALUES));
        if values.is_some_and(|v| v.contains(POLICY)) {
            return Some(ControllerPolicy {
                policy: Some(format!(
                    "unknown (set in a helm.values string of `{POLICY}`)"
                )),
                allow_override: false,
                new_file_globbing: false,
                app_namespaces: None,
            });
        }
        let values_object = s(helm, table::HELM_VALUES_OBJECT);
        if let Some(p) = of(at(values_object, table::CHART_PARAMS_VALUES), false) {
            return Some(p);
        }
    }
    None
}

/// The after-merge answer for one rebind (or, without one, for every file
/// an Application in the tree feeds): the rows, the order, the notes.
#[derive(Debug, Clone)]
pub struct Report {
    pub base: Option<(String, &'static str)>,
    pub rows: Vec<Row>,
    pub order: Vec<Step>,
    pub notes: Vec<String>,
    /// Where the live state (`--live`) differs from git.
    pub live: Vec<String>,
    /// `--base` names no branch of the clone (a typo would make every
    /// revision look like "another branch", or the wrong one "the base").
    pub base_unknown: bool,
}

impl Report {
    /// The rows that are not proven (what `--require-deploys` refuses).
    /// A file another parent proves is not blocked by one that leaves it
    /// out (a root directory app beside the app that owns the folder); a
    /// parent that includes it (or may) and is not proven always blocks.
    pub fn blocking(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| {
            !r.verdict.proven()
                && (r.includes
                    || !self
                        .rows
                        .iter()
                        .any(|o| o.file == r.file && o.verdict.proven()))
        })
    }
}

/// The report for the `rewritten` files (`/`-separated, relative to the
/// model's root, each with the resources the rebind touches in it).
pub fn report(model: &Model, root: &Path, rewritten: &[(String, Vec<String>)]) -> Report {
    let tree = model.tree(root);
    let rows = model.rows(rewritten, &tree);
    let order = model.order(&rows);
    let mut notes = Vec::new();
    let mut base_unknown = false;
    if let Some(why) = &model.facts.base_refused {
        base_unknown = true;
        notes.push(why.clone());
    }
    match &model.facts.base {
        None => notes.push(
            "the base branch is unknown (no --base, no remote HEAD, no upstream, no checked-out branch): `HEAD` is taken as the branch the cutover merges into".to_string(),
        ),
        Some((b, from)) if *from == crate::repo::git::CHECKED_OUT => notes.push(format!(
            "the base branch is unknown (no --base, no remote HEAD, no upstream): the checked-out branch {b} is taken as the branch the cutover merges into; give --base BRANCH if it is another"
        )),
        Some(_) => {}
    }
    for f in &model.not_committed {
        notes.push(format!(
            "{f}: {NOT_COMMITTED} (git does not track it, so the merge does not carry it and it is not read: commit it for the review to count it)"
        ));
    }
    if model.identity_from.is_none() && rows.iter().any(|r| r.feeder.is_some()) {
        notes.push(
            "this repository's URL is not known (no git remote, no `repository_urls` in .rebind.yaml): no source is proven to read it, so nothing is proven to deploy; add the remote or declare the URLs".to_string(),
        );
    }
    // What the proven rows take as given, once each.
    let mut assumed: Vec<&str> = Vec::new();
    for a in rows
        .iter()
        .filter(|r| r.verdict.proven())
        .flat_map(|r| &r.assumptions)
    {
        if !assumed.contains(&a.as_str()) {
            assumed.push(a);
        }
    }
    notes.extend(assumed.into_iter().map(str::to_string));
    if model.waves_without_health(&order) {
        notes.push(
            "sync waves between child Applications do not wait for their health: no argocd-cm in this repository declares resource.customizations.health.argoproj.io_Application, so a later wave may start before an earlier one is healthy".to_string(),
        );
    }
    Report {
        base: model.facts.base.clone(),
        rows,
        order,
        notes,
        live: Vec::new(),
        base_unknown,
    }
}

/// Applies a live dump (`kubectl get applications.argoproj.io -A -o json`,
/// and the same for ApplicationSets; a `List` or a single object, JSON or
/// YAML) to the model: the live spec of an Application wins over the
/// committed one, and every difference that matters after the merge
/// (sources, revisions, sync policy, wave) is returned as a finding. An
/// Application is named by kind, namespace and name (with Applications in
/// any namespace, one name may be used in two namespaces); one the
/// manifest gives no namespace matches the only live one of its name. A
/// live Application the repository does not hold (a root created by hand)
/// joins the model as a parent, its file shown as `(live)`; one the
/// repository holds that is not in the dump does not exist on the hub, so
/// it is no parent (of a kind the dump holds at all).
pub fn apply_live(model: &mut Model, text: &str, origin: &str) -> Result<Vec<String>, String> {
    let docs = yaml::read_yaml_or_json(text)
        .map_err(|(line, col, why)| format!("{origin}:{line}:{col}: not JSON or YAML: {why}"))?;
    let mut lives: Vec<App> = Vec::new();
    for doc in &docs {
        let items: Vec<&Node> = match &doc.get("items").map(|n| &n.value) {
            Some(Value::Seq(items)) => items.iter().collect(),
            _ => vec![doc],
        };
        lives.extend(items.into_iter().filter_map(|item| {
            app_of(&Manifest {
                file: "(live)",
                doc: item,
            })
        }));
    }
    if lives.is_empty() {
        return Err(format!(
            "{origin}: holds no Application or ApplicationSet (expected `kubectl get applications.argoproj.io -A -o json`)"
        ));
    }
    let kinds: BTreeSet<&'static str> = lives.iter().map(|l| l.kind).collect();
    let mut findings = Vec::new();
    let mut matched = vec![false; model.apps.len()];
    for live in lives {
        let same = |a: &App| a.kind == live.kind && a.name == live.name;
        let exact = model
            .apps
            .iter()
            .position(|a| same(a) && a.namespace == live.namespace && a.rendered.is_none());
        let loose = || {
            let of_name: Vec<usize> = (0..model.apps.len())
                .filter(|&i| same(&model.apps[i]) && model.apps[i].namespace.is_empty())
                .collect();
            (of_name.len() == 1).then(|| of_name[0])
        };
        match exact.or_else(loose) {
            Some(i) if !matched[i] => {
                matched[i] = true;
                let git = &mut model.apps[i];
                findings.extend(differences(git, &live));
                let file = std::mem::take(&mut git.file);
                *git = App { file, ..live };
            }
            _ => {
                findings.push(format!(
                    "{} is live but not in this repository (created by hand or kept elsewhere); its live spec is used",
                    live_name(&live)
                ));
                model.apps.push(live);
            }
        }
    }
    for (i, app) in model.apps.iter_mut().enumerate() {
        let declared = app.file.ends_with("(feeders:)");
        if i < matched.len() && !matched[i] && kinds.contains(app.kind) && !declared {
            app.live_absent = true;
            findings.push(format!(
                "{} ({}) is in this repository but not in the live dump: it does not exist on the hub, so it is no parent",
                live_name(app),
                app.file
            ));
        }
    }
    Ok(findings)
}

/// The kind of a path declared as applied outside ArgoCD (`applied_by`).
pub const OUTSIDE_ARGOCD: &str = "AppliedOutsideArgoCD";

/// `Kind/namespace/name` (`Kind/name` without a namespace).
fn live_name(app: &App) -> String {
    if app.namespace.is_empty() {
        app.id()
    } else {
        format!("{}/{}/{}", app.kind, app.namespace, app.name)
    }
}

/// What differs between the committed and the live spec of one app.
fn differences(git: &App, live: &App) -> Vec<String> {
    let id = git.id();
    let mut out = Vec::new();
    let revs = |a: &App| -> Vec<String> {
        a.sources
            .iter()
            .map(|s| {
                if s.target_revision.is_empty() {
                    "HEAD".to_string()
                } else {
                    s.target_revision.clone()
                }
            })
            .collect()
    };
    if revs(git) != revs(live) {
        out.push(format!(
            "{id}: live targetRevision {} differs from git's {} ({}): the live value is what ArgoCD syncs",
            revs(live).join(", "),
            revs(git).join(", "),
            git.file
        ));
    }
    let paths = |a: &App| -> Vec<String> {
        a.sources
            .iter()
            .map(|s| format!("{} {}", s.repo_url, s.path.clone().unwrap_or_default()))
            .collect()
    };
    if paths(git) != paths(live) {
        out.push(format!(
            "{id}: live sources ({}) differ from git's ({})",
            paths(live).join("; "),
            paths(git).join("; ")
        ));
    }
    if git.automated != live.automated {
        let word = |b: bool| if b { "automated" } else { "manual" };
        out.push(format!(
            "{id}: live sync policy is {}, git says {}",
            word(live.automated),
            word(git.automated)
        ));
    }
    if git.wave != live.wave {
        out.push(format!(
            "{id}: live sync wave {} differs from git's {}",
            live.wave, git.wave
        ));
    }
    out
}

/// Adds what `.rebind.yaml` declares under `feeders:`: root Applications
/// that live outside the repository (nothing in the tree says what syncs
/// their paths), with everything an Application's directory source says,
/// and paths applied outside ArgoCD (`applied_by`). Declared paths are
/// relative to the config's root, which may be a folder of the repository
/// at `root`. A declared Application the repository also holds, by name,
/// is left to the repository's own spec.
pub fn declare(model: &mut Model, root: &Path, cfg: &Config) {
    let prefix = cfg
        .root()
        .canonicalize()
        .ok()
        .and_then(|r| {
            r.strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .unwrap_or_default();
    for d in &cfg.feeders {
        if d.applied_by.is_none()
            && model
                .apps
                .iter()
                .any(|a| a.kind == "Application" && a.name == d.name)
        {
            continue;
        }
        push_declared(
            model,
            &prefix,
            d,
            format!("{} (feeders:)", crate::model::config::FILE_NAME),
        );
    }
}

/// [`declare`] for every `.rebind.yaml` of the repository at `root` that
/// git tracks, each with paths relative to its own folder, and `cfg` (the
/// one found walking up from PATH): one model whatever PATH names, so
/// `feeders .`, `feeders apps` and `feeders apps/a.yaml` agree. A nested
/// config that does not load declares nothing here (the commands that
/// find it walking up from PATH report it).
pub fn declare_all(model: &mut Model, root: &Path, cfg: Option<&Config>) {
    let own = cfg.and_then(|c| c.path.canonicalize().ok());
    if let Some(cfg) = cfg {
        declare(model, root, cfg);
    }
    let found =
        crate::repo::git::tracked_named(root, crate::model::config::FILE_NAME).unwrap_or_default();
    for path in found {
        if own.as_ref() == path.canonicalize().ok().as_ref() {
            continue;
        }
        if let Ok(other) = crate::model::config::load(&path) {
            declare(model, root, &other);
        }
    }
}

/// Paths applied outside ArgoCD named on the command line (`--applied-by
/// PATH=WHO`, relative to the repository root): declared as `applied_by`
/// under `feeders:` declares them.
pub fn declare_applied(model: &mut Model, applied_by: &[(String, String)]) {
    for (path, who) in applied_by {
        let d = crate::model::config::DeclaredFeeder {
            name: who.clone(),
            path: path.clone(),
            revision: String::new(),
            automated: false,
            recurse: false,
            include: None,
            exclude: None,
            applied_by: Some(who.clone()),
        };
        push_declared(model, "", &d, "--applied-by".to_string());
    }
}

/// One declared feeder (or path applied outside ArgoCD) as an App of the
/// model; `file` says where it was declared.
fn push_declared(
    model: &mut Model,
    prefix: &str,
    d: &crate::model::config::DeclaredFeeder,
    file: String,
) {
    model.apps.push(App {
        file,
        kind: if d.applied_by.is_some() {
            OUTSIDE_ARGOCD
        } else {
            "Application"
        },
        name: d.name.clone(),
        namespace: String::new(),
        sources: vec![Source {
            path: Some(join(prefix, &d.path)),
            target_revision: d.revision.clone(),
            directory: crate::model::application::Directory {
                recurse: d.recurse,
                include: d.include.clone(),
                exclude: d.exclude.clone(),
                ..Default::default()
            },
            this_repo: true,
            ..Source::default()
        }],
        automated: d.automated,
        wave: 0,
        git_generators: Vec::new(),
        other_generators: Vec::new(),
        generators: Vec::new(),
        applications_sync: None,
        rendered: None,
        applied_by: d.applied_by.clone(),
        live_absent: false,
        unmodeled: None,
        project: None,
        destination: Default::default(),
        template_name: None,
    });
}

/// What declares feeders besides the tree: the config (`feeders:`) and
/// the paths applied outside ArgoCD named on the command line
/// (`--applied-by PATH=WHO`: path, who).
#[derive(Debug, Clone, Copy)]
pub struct Declared<'a> {
    pub cfg: Option<&'a Config>,
    pub applied_by: &'a [(String, String)],
}

/// The report for a planned rebind: the rewritten manifests (the repo
/// config is not one) with the resources each change sits in.
pub fn for_plans(
    plans: &[crate::edit::rewrite::FilePlan],
    path: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
    live: Option<&Path>,
    declared: Declared,
    known: Option<&Candidates>,
) -> anyhow::Result<Report> {
    let Declared { cfg, applied_by } = declared;
    let targets: Vec<PathBuf> = plans
        .iter()
        .filter(|p| !p.is_config)
        .map(|p| p.path.canonicalize().unwrap_or_else(|_| p.path.clone()))
        .collect();
    let (root, mut model) = build_for(path, base, cutover, Some(&targets), known, cfg);
    declare_all(&mut model, &root, cfg);
    declare_applied(&mut model, applied_by);
    let live_findings = read_live(&mut model, live)?;
    for p in plans.iter().filter(|p| !p.is_config) {
        let abs = p.path.canonicalize().unwrap_or_else(|_| p.path.clone());
        if let Ok(rel) = abs.strip_prefix(&root) {
            model.after_rewrite(&rel.to_string_lossy().replace('\\', "/"), &p.new);
        }
    }
    let rewritten: Vec<(String, Vec<String>)> = plans
        .iter()
        .filter(|p| !p.is_config)
        .map(|p| {
            let abs = p.path.canonicalize().unwrap_or_else(|_| p.path.clone());
            let rel = abs
                .strip_prefix(&root)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| p.rel.clone());
            let mut resources: Vec<String> = Vec::new();
            for c in &p.changes {
                if let Some(r) = &c.resource {
                    if !resources.contains(r) {
                        resources.push(r.clone());
                    }
                }
            }
            (rel, resources)
        })
        .collect();
    let mut r = report(&model, &root, &rewritten);
    r.live = live_findings;
    Ok(r)
}

/// Reads `--live FILE` (if given) into the model; see [`apply_live`].
pub fn read_live(model: &mut Model, live: Option<&Path>) -> anyhow::Result<Vec<String>> {
    let Some(path) = live else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read --live: {e}", path.display()))?;
    apply_live(model, &text, &path.display().to_string()).map_err(anyhow::Error::msg)
}

/// Why "no Application feeds it" is not proven outside a git work tree
/// with no `.rebind.yaml`.
pub const ROOT_UNKNOWN: &str = "no Application found below the folder read, but the repository root is not known (no git work tree, no .rebind.yaml): an Application above it may feed this file; run in the clone, or declare the root with a .rebind.yaml (and its `feeders:`)";

/// The model for the tree at `path`: the repository root ArgoCD resolves
/// source paths against, and every Application and ApplicationSet in it.
///
/// The root is the git work tree around `path` whatever `path` is (the
/// repository, a folder in it or one file): one model per repository, so
/// the same file gets the same verdict from `feeders`, `diff` and `apply`.
/// Outside a git repository it is the directory of `.rebind.yaml` (its
/// `root:`), else, not known, the current directory when `path` is relative
/// and lies in it (else `path`, a file's folder): then an Application above it may feed a
/// file, and "no feeder" is not proven ([`Model::root_from`]). This repository is named by its
/// git remotes and by `.rebind.yaml`'s `repository_urls`; with neither,
/// nothing is proven by a source's path alone ([`Model::identity_from`]).
pub fn build(
    path: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
    cfg: Option<&Config>,
) -> (PathBuf, Model) {
    build_for(path, base, cutover, None, None, cfg)
}

/// Where the repository of `start` is (`path` as given) and whose it is:
/// its root and what says so, the git facts (base branch, remotes), what
/// names this repository (git remotes, `.rebind.yaml`'s
/// `repository_urls`), and whether the root is a git work tree.
fn where_and_whose(
    path: &Path,
    start: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
    cfg: Option<&Config>,
) -> (
    PathBuf,
    Option<&'static str>,
    RepoFacts,
    Option<&'static str>,
    bool,
) {
    let git = crate::repo::git::repo_facts(start, base, cutover);
    let git_root = git.is_some();
    let (root, root_from, mut facts, mut from) = match git {
        Some((workdir, facts)) => {
            let from = (!facts.identities.is_empty()).then_some("git remotes");
            (workdir, Some("the git work tree"), facts, from)
        }
        None => {
            let declared = cfg
                .and_then(|c| c.root().canonicalize().ok())
                .filter(|r| start.starts_with(r));
            // Not known: the current directory when PATH is relative and
            // lies in it (so `.`, a folder and a file name the same files),
            // else PATH.
            let (root, root_from) = match declared {
                Some(r) => (r, Some(".rebind.yaml's folder")),
                None => {
                    let cwd = std::env::current_dir()
                        .ok()
                        .and_then(|c| c.canonicalize().ok())
                        .filter(|c| path.is_relative() && start.starts_with(c));
                    (cwd.unwrap_or_else(|| start.to_path_buf()), None)
                }
            };
            let facts = RepoFacts {
                base: base.map(|b| (b.to_string(), "--base")),
                ..RepoFacts::default()
            };
            (root, root_from, facts, None)
        }
    };
    let declared: Vec<String> = cfg
        .map(|c| c.repository_urls.clone())
        .unwrap_or_default()
        .iter()
        .filter_map(|u| repo_identity(u))
        .collect();
    if !declared.is_empty() {
        facts.identities.extend(declared);
        from = Some(match from {
            Some(_) => "git remotes and .rebind.yaml's repository_urls",
            None => ".rebind.yaml's repository_urls",
        });
    }
    (root, root_from, facts, from, git_root)
}

/// [`build`] for a rebind: only the manifests that may feed one of
/// `targets` (absolute paths) are parsed ([`may_feed`]); `known` is what
/// the rebind's walk kept ([`Candidates`]), read instead of walking its
/// directory again.
pub fn build_for(
    path: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
    targets: Option<&[PathBuf]>,
    known: Option<&Candidates>,
    cfg: Option<&Config>,
) -> (PathBuf, Model) {
    let start = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let start = if start.is_file() {
        start.parent().map(Path::to_path_buf).unwrap_or(start)
    } else {
        start
    };
    let (root, root_from, facts, from, git_root) =
        where_and_whose(path, &start, base, cutover, cfg);
    let rels: Option<Vec<String>> = targets.map(|t| {
        t.iter()
            .filter_map(|p| p.strip_prefix(&root).ok())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .collect()
    });
    // Inside git, what the merge carries: the tracked files and the
    // rewritten ones.
    let committed = git_root
        .then(|| Committed::below(&root, rels.as_deref().unwrap_or(&[])))
        .flatten()
        .map(std::sync::Arc::new);
    let read = apps_below(&root, rels.as_deref(), known, committed.as_deref());
    let mut not_committed = read.not_committed;
    not_committed.sort();
    not_committed.dedup();
    let mut model = Model {
        apps: Vec::new(),
        facts,
        identity_from: from,
        root_from,
        app_health: read.health,
        diff_settings: read.diff.clone(),
        controller_policy: ControllerPolicy {
            // Settings given where they are not read: the policy is unknown.
            policy: read.policy.policy.clone().or_else(|| {
                read.settings_unread
                    .first()
                    .map(|w| format!("unknown (ArgoCD's settings are not read: {w})"))
            }),
            ..read.policy.clone()
        },
        settings_unread: read.settings_unread.first().cloned(),
        registrations: read.registrations,
        projects: read.projects,
        symlinks: super::fences::out_of_bounds_symlinks(&root),
        committed,
        not_committed,
    };
    // An Application a chart template holds is what the chart renders.
    let mut apps = read.apps;
    let tree = model.tree(&root);
    let carried = super::rendered::Carried {
        root: &root,
        files: &Files(&tree),
    };
    super::rendered::follow(&mut apps, &carried, &|s| model.is_this_repo(s, &tree));
    super::rendered::follow_values(&mut apps, &carried, &|s| model.is_this_repo(s, &tree));
    model.apps = apps;
    model.duplicate_names(&tree);
    (root, model)
}

/// The YAML and JSON files below `root` (gitignore-aware but with every
/// tracked file, default globs), `/`-separated and relative to it.
fn yaml_files(root: &Path) -> Vec<String> {
    let req = crate::repo::git::walk_request(&[root.to_path_buf()]);
    let Ok(walk) = crate::discover::walk::discover(&req) else {
        return Vec::new();
    };
    walk.files()
        .filter_map(|f| match f {
            crate::discover::walk::Found::Entry(e)
                if e.role == crate::discover::walk::Role::Yaml =>
            {
                e.path
                    .strip_prefix(root)
                    .ok()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::resolve::sets::render;
    use crate::model::application::{Directory, GitGenerator};

    /// What the walk keeps of a file is read through the Application
    /// table: a source's path names its folder (`source`, or `sources`,
    /// which replaces it), value files, a `ref` source, an ApplicationSet,
    /// ArgoCD's settings, a path that is the root, climbs or is templated,
    /// and a file that does not parse make it a parent of anything; a
    /// `path` key that is no source's (a ConfigMap's, a comment's) names
    /// nothing.
    #[test]
    fn a_candidate_is_read_through_the_application_table() {
        let app = |spec: &str| {
            format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a}}\nspec:\n{spec}")
        };
        let facts = |raw: &str| {
            let c = Candidate::of(raw, || Some("x/app.yaml".into())).unwrap();
            (
                c.always,
                c.dirs
                    .iter()
                    .filter(|d| !d.starts_with(NAME_MARK))
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>(),
            )
        };
        let dirs = |d: &[&str]| d.iter().map(|d| d.to_string()).collect::<Vec<_>>();
        assert_eq!(
            facts(&app("  source: {path: apps/prod/, repoURL: x}\n")),
            (false, dirs(&["apps/prod"]))
        );
        assert_eq!(
            facts(&app("  source: {path: ignored, repoURL: x}\n  sources:\n  - {path: './apps/a', repoURL: x}\n  - {path: b, repoURL: y}\n")),
            (false, dirs(&["apps/a", "b"]))
        );
        assert_eq!(
            facts(&app(
                "  source: {repoURL: x, chart: c}\n  info: {path: apps/x}\n"
            )),
            (false, dirs(&[]))
        );
        for always in [
            "  source: {path: ., repoURL: x}\n",
            "  source: {path: '', repoURL: x}\n",
            "  source: {path: ../common, repoURL: x}\n",
            "  source: {path: 'apps/{{name}}', repoURL: x}\n",
            "  source: {path: a, repoURL: x, helm: {valueFiles: [v.yaml]}}\n",
            "  sources:\n  - {repoURL: x, ref: values}\n  - {path: a, repoURL: y}\n",
            "  source: {path: [x\n",
        ] {
            assert!(facts(&app(always)).0, "{always}");
        }
        let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators: [{list: {elements: []}}]\n  template: {spec: {source: {path: a, repoURL: x}}}\n";
        assert!(facts(set).0);
        let cm = "kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.customizations.health.argoproj.io_Application: x\n";
        assert!(facts(cm).0);
        let plain_cm = "kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata: {path: apps/prod}\n";
        // Any argocd-cm is read whatever is rebound (whether the
        // repository holds one decides if its diffing settings are
        // assumed unset); its data names no folder.
        assert_eq!(facts(plain_cm), (true, dirs(&[])));
        // Applications held in Helm values are read like any other.
        let values = "extraObjects:\n- apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata: {name: n}\n  spec: {source: {path: apps/n, repoURL: x}}\n";
        assert_eq!(facts(values), (false, dirs(&["apps/n"])));
        assert!(Candidate::of("kind: ConfigMap\n", || Some("c.yaml".into())).is_none());
    }

    /// argo-cd util/git `SameURL` compares `NormalizeGitURL` of each URL:
    /// lower-cased, trimmed, `git@host:org/repo` read as
    /// `ssh://git@host/org/repo`, `.git` removed; rebind also drops the
    /// transport (scheme, user, port), so SSH and HTTPS spellings of one
    /// repository are one.
    #[test]
    fn repository_urls_compare_as_argocd_places_them() {
        let same = [
            "https://github.com/Example/Platform-GitOps.git",
            "https://github.com/example/platform-gitops",
            "https://github.com/example/platform-gitops/",
            "git@github.com:example/platform-gitops.git",
            "ssh://git@github.com/example/platform-gitops.git",
            "ssh://git@github.com:22/example/platform-gitops",
            "https://user@github.com/example/platform-gitops.git",
        ];
        for u in same {
            assert_eq!(
                repo_identity(u).as_deref(),
                Some("github.com/example/platform-gitops"),
                "{u}"
            );
        }
        assert_ne!(
            repo_identity("https://github.com/example/platform-gitops-old"),
            repo_identity("https://github.com/example/platform-gitops")
        );
        assert_eq!(repo_identity("/srv/git/repo"), None);
        assert_eq!(repo_identity(""), None);
    }

    fn facts() -> RepoFacts {
        RepoFacts {
            base: Some(("main".into(), "--base")),
            default_branch: Some("main".into()),
            branches: ["main", "release", "rebind/x"].map(String::from).into(),
            tags: ["v1.2.0"].map(String::from).into(),
            ..RepoFacts::default()
        }
    }

    #[test]
    fn revisions_are_classified_like_argocd_resolves_them() {
        let f = facts();
        assert_eq!(classify("", &f), Revision::Base);
        assert_eq!(classify("HEAD", &f), Revision::Base);
        assert_eq!(classify("main", &f), Revision::Base);
        assert_eq!(classify("refs/heads/main", &f), Revision::Base);
        assert_eq!(classify("release", &f), Revision::Branch("release".into()));
        assert_eq!(
            classify("v1.2.0", &f),
            Revision::Pinned("v1.2.0".into(), "tag")
        );
        assert_eq!(
            classify("v9.9.9", &f),
            Revision::Pinned("v9.9.9".into(), "tag")
        );
        assert_eq!(
            classify("1.*", &f),
            Revision::Pinned("1.*".into(), "semver range")
        );
        assert_eq!(
            classify(">=1.2.0 <2", &f),
            Revision::Pinned(">=1.2.0 <2".into(), "semver range")
        );
        // A constraint resolves against the tags before any branch of
        // that name (argo-cd lsRemote: versions.MaxVersion first).
        for c in [
            "1.x",
            "1.*",
            "~1.2",
            ">=1.0",
            "^1.2.3",
            "1.2 - 1.4",
            "1.x || 2.x",
            "*",
        ] {
            assert!(is_semver_constraint(c), "{c}");
            let mut on = facts();
            on.base = Some((c.to_string(), "--base"));
            on.branches.insert(c.to_string());
            assert_eq!(
                classify(c, &on),
                Revision::Pinned(c.into(), "semver range"),
                "{c}"
            );
        }
        for v in [
            "main",
            "1.2.3",
            "v1.2",
            "1",
            "release-1.x",
            "feature-x",
            "HEAD",
            // A prefixed revision is no constraint (Masterminds
            // `NewConstraint` refuses it): without the source's
            // `tagPrefix`, `versions.MaxVersion` only compares it with the
            // tags, and `lsRemote` resolves it as a branch.
            "release/1.x",
            "release/v1",
            "prod/v1.0.*",
        ] {
            assert!(!is_semver_constraint(v), "{v}");
        }
        let sha = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(classify(sha, &f), Revision::Pinned(sha.into(), "commit"));
        assert_eq!(
            classify("feature-x", &f),
            Revision::Unknown("feature-x".into())
        );
        let mut other = facts();
        other.base = Some(("release".into(), "--base"));
        assert_eq!(
            classify("HEAD", &other),
            Revision::Branch("HEAD (main)".into())
        );
        let unknown = RepoFacts::default();
        assert_eq!(classify("", &unknown), Revision::HeadAssumed);
    }

    #[test]
    fn globs_follow_argocd_directory_patterns() {
        assert!(crate::text::glob::gobwas("*.yaml", "a.yaml"));
        assert!(crate::text::glob::gobwas("*.yaml", "sub/a.yaml"));
        assert!(crate::text::glob::gobwas("{*.yml,*.yaml}", "a.yml"));
        assert!(!crate::text::glob::gobwas("{*.yml,*.yaml}", "a.json"));
        assert!(crate::text::glob::gobwas(
            "some-directory/*",
            "some-directory/x.yaml"
        ));
        assert!(!crate::text::glob::gobwas(
            "some-directory/*",
            "other/x.yaml"
        ));
        assert!(crate::text::glob::gobwas(
            "{config.json,env-usw2/*}",
            "env-usw2/a.yaml"
        ));
        assert!(crate::text::glob::gobwas("app-[0-9].yaml", "app-7.yaml"));
        assert!(!crate::text::glob::gobwas("app-[!0-9].yaml", "app-7.yaml"));
        // argo-cd util/glob.Match compiles with no separators: `*` and `?`
        // cross `/`; it is case-sensitive; a pattern that does not compile
        // matches nothing.
        assert!(crate::text::glob::gobwas("a?b.yaml", "a/b.yaml"));
        assert!(!crate::text::glob::gobwas("*.yaml", "a.YAML"));
        assert!(!crate::text::glob::gobwas("APPS/*", "apps/x.yaml"));
        assert!(crate::text::glob::gobwas(
            "{prod,stage}/*.json",
            "stage/x.json"
        ));
        assert!(!crate::text::glob::gobwas(
            "{prod,stage}/*.json",
            "dev/x.json"
        ));
        assert!(!crate::text::glob::gobwas("[", "["));
        assert!(crate::text::glob::gobwas(
            "**/values.yaml",
            "a/b/values.yaml"
        ));
        // A directories generator matches as Go's path.Match.
        assert!(path_match("addons/*", "addons/keda"));
        assert!(!path_match("addons/*", "addons/keda/sub"));
        assert!(!path_match("{a,b}", "a"));
        assert!(path_match("app-[^0-9]", "app-x"));
    }

    #[test]
    fn the_directory_extension_filter_is_case_sensitive() {
        // argo-cd reposerver `findManifests`: `^.*\.(yaml|yml|json|jsonnet)$`.
        let t = Fake {
            files: vec!["apps/a.YAML", "apps/b.yml", "apps/c.jsonnet", "apps/d.Json"],
            kustomizations: vec![],
        };
        let src = dir_source("apps", false);
        assert!(matches!(covers(&src, "apps/a.YAML", &t), Cover::No(_)));
        assert!(matches!(covers(&src, "apps/d.Json", &t), Cover::No(_)));
        assert_eq!(covers(&src, "apps/b.yml", &t), Cover::Yes);
        assert_eq!(covers(&src, "apps/c.jsonnet", &t), Cover::Yes);
    }

    #[test]
    fn value_files_resolve_as_argocd_resolves_them() {
        let mut src = dir_source("charts/web", false);
        src.value_files = vec![
            "/envs/prod.yaml".into(),
            "../../common/v.yaml".into(),
            "env/{{name}}.yaml".into(),
            "$values/x.yaml".into(),
            "https://example.com/v.yaml".into(),
        ];
        assert_eq!(value_file_cover(&src, "envs/prod.yaml"), Some(Cover::Yes));
        assert_eq!(value_file_cover(&src, "common/v.yaml"), Some(Cover::Yes));
        assert!(matches!(
            value_file_cover(&src, "charts/web/env/prod.yaml"),
            Some(Cover::Unknown(_))
        ));
        assert_eq!(value_file_cover(&src, "x.yaml"), None);
        assert_eq!(value_file_cover(&src, "charts/web/envs/prod.yaml"), None);
        let params = vec![
            ("name".to_string(), "prod".to_string()),
            ("cluster.env".to_string(), "blue".to_string()),
        ];
        assert_eq!(
            render("v/{{name}}.yaml", &params).as_deref(),
            Some("v/prod.yaml")
        );
        assert_eq!(
            render("v/{{ .cluster.env }}-{{name}}", &params).as_deref(),
            Some("v/blue-prod")
        );
        assert_eq!(render("v/{{ .name | upper }}", &params), None);
        assert_eq!(render("v/{{server}}", &params), None);
        assert_eq!(literal_dir("apps/{{name}}"), "apps");
        assert_eq!(literal_dir("{{path}}"), "");
        assert_eq!(literal_dir("a/b/x-{{n}}/c"), "a/b");
    }

    struct Fake {
        files: Vec<&'static str>,
        kustomizations: Vec<(&'static str, &'static str)>,
    }

    impl Tree for Fake {
        fn exists(&self, rel: &str) -> bool {
            self.files
                .iter()
                .any(|f| *f == rel || f.starts_with(&format!("{rel}/")) || rel.is_empty())
        }
        fn kustomization(&self, dir: &str) -> Option<Node> {
            let (_, text) = self.kustomizations.iter().find(|(d, _)| *d == dir)?;
            crate::syntax::yaml::read_documents(text)
                .ok()?
                .into_iter()
                .next()
        }
    }

    fn dir_source(path: &str, recurse: bool) -> Source {
        Source {
            repo_url: "https://git.example.com/p.git".into(),
            path: Some(path.into()),
            directory: Directory {
                recurse,
                ..Directory::default()
            },
            ..Source::default()
        }
    }

    #[test]
    fn directory_sources_cover_by_recurse_include_and_exclude() {
        let t = Fake {
            files: vec!["apps/a.yaml", "apps/sub/b.yaml", "apps/README.md"],
            kustomizations: vec![],
        };
        assert_eq!(
            covers(&dir_source("apps", false), "apps/a.yaml", &t),
            Cover::Yes
        );
        assert!(matches!(
            covers(&dir_source("apps", false), "apps/sub/b.yaml", &t),
            Cover::No(why) if why.contains("recurse is off")
        ));
        assert_eq!(
            covers(&dir_source("apps", true), "apps/sub/b.yaml", &t),
            Cover::Yes
        );
        assert!(matches!(
            covers(&dir_source("apps", true), "apps/README.md", &t),
            Cover::No(_)
        ));
        let mut inc = dir_source("apps", true);
        inc.directory.include = Some("sub/*".into());
        assert!(matches!(covers(&inc, "apps/a.yaml", &t), Cover::No(w) if w.contains("include")));
        let mut exc = dir_source("apps", true);
        exc.directory.exclude = Some("{a.yaml}".into());
        assert!(matches!(covers(&exc, "apps/a.yaml", &t), Cover::No(w) if w.contains("exclude")));
        assert!(matches!(
            covers(&dir_source("other", true), "apps/a.yaml", &t),
            Cover::No(_)
        ));
        assert_eq!(covers(&dir_source(".", false), "top.yaml", &t), Cover::Yes);
    }

    #[test]
    fn kustomize_sources_cover_only_what_the_kustomization_lists() {
        let t = Fake {
            files: vec![
                "apps/kustomization.yaml",
                "apps/a.yaml",
                "apps/b.yaml",
                "apps/nested/c.yaml",
            ],
            kustomizations: vec![
                (
                    "apps",
                    "resources: [a.yaml, nested]\npatches: [{path: p.yaml}]\nconfigMapGenerator: [{name: e, envs: [e.env]}]\nhelmCharts: [{name: web, valuesFile: ../values/web.yaml}]\n",
                ),
                ("apps/nested", "resources: [c.yaml]\n"),
            ],
        };
        let src = dir_source("apps", false);
        // kustomize's helmCharts: the values file and the local chart.
        assert_eq!(covers(&src, "values/web.yaml", &t), Cover::Yes);
        assert_eq!(
            covers(&src, "apps/charts/web/templates/d.yaml", &t),
            Cover::Yes
        );
        assert_eq!(covers(&src, "apps/e.env", &t), Cover::Yes);
        assert_eq!(covers(&src, "apps/a.yaml", &t), Cover::Yes);
        assert_eq!(covers(&src, "apps/nested/c.yaml", &t), Cover::Yes);
        assert_eq!(covers(&src, "apps/p.yaml", &t), Cover::Yes);
        assert!(matches!(
            covers(&src, "apps/b.yaml", &t),
            Cover::No(w) if w.contains("does not list it")
        ));
    }

    fn load(text: &str) -> Vec<App> {
        crate::syntax::yaml::read_documents(text)
            .unwrap()
            .iter()
            .filter_map(|doc| {
                app_of(&Manifest {
                    file: "f.yaml",
                    doc,
                })
            })
            .collect()
    }

    #[test]
    fn applications_and_applicationsets_are_read_with_policy_and_wave() {
        let apps = load(
            "kind: Application\nmetadata: {name: a, annotations: {argocd.argoproj.io/sync-wave: \"-1\"}}\nspec:\n  source: {repoURL: r, path: p, targetRevision: v1.0.0, directory: {recurse: true}}\n  syncPolicy: {automated: {prune: true}}\n---\nkind: Application\nmetadata: {name: off}\nspec:\n  sources: [{repoURL: r, path: p}, {repoURL: r, ref: values}]\n  syncPolicy: {automated: {enabled: false}}\n---\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - matrix: {generators: [{git: {repoURL: r, revision: release}}, {list: {elements: []}}]}\n  template:\n    spec:\n      source: {repoURL: r, path: q}\n      syncPolicy: {automated: {}}\n",
        );
        assert_eq!(apps.len(), 3);
        assert_eq!((apps[0].wave, apps[0].automated), (-1, true));
        assert!(apps[0].sources[0].directory.recurse);
        assert_eq!(apps[0].sources[0].target_revision, "v1.0.0");
        assert!(!apps[1].automated);
        assert_eq!(apps[1].sources.len(), 2);
        assert_eq!(apps[1].sources[1].ref_name.as_deref(), Some("values"));
        assert!(apps[2].automated);
        assert_eq!(
            apps[2].git_generators,
            vec![GitGenerator {
                repo_url: "r".into(),
                revision: "release".into(),
                files: vec![],
                directories: vec![],
            }]
        );
    }

    #[test]
    fn application_health_customisation_is_recognised() {
        let yes = crate::syntax::yaml::read_documents(
            "kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.customizations.health.argoproj.io_Application: |\n    hs = {}\n",
        )
        .unwrap();
        assert!(declares_app_health(&yes[0]));
        let no = crate::syntax::yaml::read_documents(
            "kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata: {url: https://argocd.example.com}\n",
        )
        .unwrap();
        assert!(!declares_app_health(&no[0]));
    }
}
