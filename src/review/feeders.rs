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

use crate::model::application::{app_of, s, text, App, Manifest, Source, V};
use crate::repo::remote::{repo_identity, RepoFacts};
use crate::syntax::yaml::{self, Node, Value};
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
    if is_semver_range(rev) {
        return Revision::Pinned(rev.to_string(), "semver range");
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

fn is_semver_range(rev: &str) -> bool {
    rev.contains(['*', '^', '~', '>', '<', '='])
        || rev.contains(" - ")
        || rev.contains("||")
        || rev.split('.').skip(1).any(|p| p.eq_ignore_ascii_case("x"))
}

/// Glob matching as ArgoCD's directory `include`/`exclude` use it: `{a,b}`
/// alternatives, `*` (any run of characters, `/` included), `?`, `[...]`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    alternatives(pattern)
        .iter()
        .any(|p| glob_one(p.as_bytes(), text.as_bytes()))
}

fn alternatives(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let Some(close) = pattern[open..].find('}').map(|c| open + c) else {
        return vec![pattern.to_string()];
    };
    let (head, body, tail) = (
        &pattern[..open],
        &pattern[open + 1..close],
        &pattern[close + 1..],
    );
    body.split(',')
        .flat_map(|alt| alternatives(&format!("{head}{alt}{tail}")))
        .collect()
}

fn glob_one(p: &[u8], t: &[u8]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some(b'*') => (0..=t.len()).any(|i| glob_one(&p[1..], &t[i..])),
        Some(b'?') => !t.is_empty() && glob_one(&p[1..], &t[1..]),
        Some(b'[') => {
            let Some(end) = p.iter().skip(1).position(|&b| b == b']').map(|e| e + 1) else {
                return t.first() == Some(&b'[') && glob_one(&p[1..], &t[1..]);
            };
            let Some(&c) = t.first() else { return false };
            let class = &p[1..end];
            let (neg, class) = match class.first() {
                Some(b'!') | Some(b'^') => (true, &class[1..]),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == b'-' {
                    hit |= class[i] <= c && c <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit != neg && glob_one(&p[end + 1..], &t[1..])
        }
        Some(&b) => t.first() == Some(&b) && glob_one(&p[1..], &t[1..]),
    }
}

/// Whether a source covers a file, and if not, why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cover {
    Yes,
    No(String),
}

/// What the tree offers the coverage rules: kustomizations and chart
/// markers, read from the repository root on demand.
pub trait Tree {
    fn exists(&self, rel: &str) -> bool;
    /// The decoded kustomization in a directory, if there is one.
    fn kustomization(&self, dir: &str) -> Option<Node>;
}

/// The tree on disk below `root`.
pub struct DiskTree {
    pub root: PathBuf,
    /// What was looked up already: every parent is asked about every
    /// rewritten file, and the answers are the same each time.
    exists: std::cell::RefCell<std::collections::HashMap<String, bool>>,
    kustomizations: std::cell::RefCell<std::collections::HashMap<String, Option<Node>>>,
}

impl DiskTree {
    pub fn new(root: PathBuf) -> DiskTree {
        DiskTree {
            root,
            exists: Default::default(),
            kustomizations: Default::default(),
        }
    }
}

const KUSTOMIZATION_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

impl Tree for DiskTree {
    fn exists(&self, rel: &str) -> bool {
        *self
            .exists
            .borrow_mut()
            .entry(rel.to_string())
            .or_insert_with(|| self.root.join(rel).exists())
    }

    fn kustomization(&self, dir: &str) -> Option<Node> {
        self.kustomizations
            .borrow_mut()
            .entry(dir.to_string())
            .or_insert_with(|| {
                KUSTOMIZATION_NAMES.iter().find_map(|n| {
                    let text = std::fs::read_to_string(self.root.join(join(dir, n))).ok()?;
                    yaml::read_yaml_or_json(&text).ok()?.into_iter().next()
                })
            })
            .clone()
    }
}

fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn under<'a>(file: &'a str, dir: &str) -> Option<&'a str> {
    let dir = join(dir, "");
    if dir.is_empty() {
        return Some(file);
    }
    file.strip_prefix(&dir)?.strip_prefix('/')
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
    for key in [
        "resources",
        "bases",
        "components",
        "patchesStrategicMerge",
        "crds",
    ] {
        listed.extend(s(k, key).as_vec().into_iter().flatten().filter_map(text));
    }
    for key in ["patches", "patchesJson6902"] {
        for p in s(k, key).as_vec().into_iter().flatten() {
            listed.extend(text(s(p, "path")));
        }
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for g in s(k, key).as_vec().into_iter().flatten() {
            for f in s(g, "files")
                .as_vec()
                .into_iter()
                .flatten()
                .filter_map(text)
            {
                listed.push(f.rsplit('=').next().unwrap_or(&f).to_string());
            }
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

/// Whether `source` (of this repository) covers `file`.
pub fn covers(source: &Source, file: &str, tree: &dyn Tree) -> Cover {
    let path = source.path.clone().unwrap_or_default();
    let dir = join(&path, "");
    // A kustomization and a chart's valueFiles may reach outside the
    // source's path (`../common`, `../../envs/prod.yaml`).
    let is_kustomize = tree.kustomization(&dir).is_some();
    let is_chart = !is_kustomize && tree.exists(&join(&dir, "Chart.yaml"));
    if is_chart && source.value_files.iter().any(|v| join(&dir, v) == file) {
        return Cover::Yes;
    }
    let rel = under(file, &path);
    if rel.is_none() && !is_kustomize {
        return Cover::No(format!("not under the source path `{path}`"));
    }
    let rel = rel.unwrap_or(file);
    if is_kustomize {
        let mut files = BTreeSet::new();
        kustomize_files(tree, &dir, &mut files, 0);
        return if files.contains(file) {
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
    if tree.exists(&join(&dir, "Chart.yaml")) {
        if rel.starts_with("templates/") {
            return Cover::Yes;
        }
        let named = source.value_files.iter().any(|v| join(&dir, v) == file);
        return if rel == "values.yaml" || named {
            Cover::Yes
        } else {
            Cover::No(format!(
                "the chart in `{dir}` neither renders it (not under templates/) nor uses it as a values file"
            ))
        };
    }
    let lower = rel.to_ascii_lowercase();
    if ![".yaml", ".yml", ".json"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return Cover::No("a directory source reads only .yaml, .yml and .json files".into());
    }
    if rel.contains('/') && !source.directory.recurse {
        return Cover::No(format!(
            "directory.recurse is off and the file is in a subdirectory of `{path}`"
        ));
    }
    if let Some(inc) = &source.directory.include {
        if !glob_match(inc, rel) {
            return Cover::No(format!("directory.include `{inc}` leaves it out"));
        }
    }
    if let Some(exc) = &source.directory.exclude {
        if glob_match(exc, rel) {
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
    TracksBranch(String),
    Pinned(String, &'static str),
    UnknownRevision(String),
    NotIncluded(String),
    NoFeeder,
}

impl Verdict {
    /// Whether merging the cutover branch reaches the hub (possibly after a
    /// manual sync).
    pub fn deploys_on_merge(&self) -> bool {
        matches!(self, Verdict::Deploys | Verdict::ManualSync)
    }

    pub fn key(&self) -> &'static str {
        match self {
            Verdict::Deploys => "deploys_on_merge",
            Verdict::ManualSync => "manual_sync",
            Verdict::TracksBranch(_) => "tracks_other_branch",
            Verdict::Pinned(..) => "pinned",
            Verdict::UnknownRevision(_) => "unknown_revision",
            Verdict::NotIncluded(_) => "not_included",
            Verdict::NoFeeder => "no_feeder",
        }
    }

    /// A sentence a person acts on.
    pub fn sentence(&self, parent: Option<&str>) -> String {
        let p = parent.unwrap_or("the parent");
        match self {
            Verdict::Deploys => "deploys on merge (automated sync)".into(),
            Verdict::ManualSync => format!("deploys on merge after a manual sync of {p}"),
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
                "no Application or ApplicationSet in this repository feeds it (a root created by hand or kept elsewhere: declare it under `feeders:` in .rebind.yaml)".into()
            }
        }
    }
}

/// See [`Model::lookups`]. A source is `(app, source, its folder holds a
/// kustomization)`, by index.
#[derive(Default)]
struct Lookups<'m> {
    /// The sources of this repository that reach only below their path,
    /// by the folder the path names.
    by_dir: std::collections::HashMap<String, Vec<(usize, usize, bool)>>,
    /// The sources of this repository that may reach any file.
    anywhere: Vec<(usize, usize, bool)>,
    /// Per app with one, its git generators: whether each reads this
    /// repository.
    generators: std::collections::HashMap<usize, Vec<bool>>,
    /// The Applications each file holds.
    by_file: std::collections::HashMap<&'m str, Vec<&'m App>>,
}

/// A parent of a file, and how it reaches it.
struct Parent<'a> {
    app: &'a App,
    cover: Cover,
    /// The revision that decides: the source's (or the `ref` source's)
    /// `targetRevision`, or the git generator's `revision`.
    revision: String,
    automated: bool,
}

/// One row of the after-merge table.
#[derive(Debug, Clone)]
pub struct Row {
    pub file: String,
    /// `Kind/name` of each resource in the file that the rebind touches.
    pub resources: Vec<String>,
    /// The parent (`Kind/name`) and its file.
    pub feeder: Option<(String, String)>,
    pub revision: Option<String>,
    pub revision_kind: Option<&'static str>,
    pub tracks_base: bool,
    pub hop1_automated: Option<bool>,
    /// Each child Application's own automated sync (hop 2).
    pub hop2_automated: Option<bool>,
    pub wave: i64,
    pub verdict: Verdict,
}

/// Every Application and ApplicationSet, and the facts about the repository.
pub struct Model {
    pub apps: Vec<App>,
    pub facts: RepoFacts,
    /// Whether a source's repoURL was matched by a git remote (`false`: no
    /// remote names any source, so sources whose path exists in the tree
    /// were taken as this repository, and the report says so).
    pub identity_from_remotes: bool,
    /// Whether an `argocd-cm` in the tree makes Applications report health
    /// (so sync waves between child Applications wait for health).
    pub app_health: bool,
}

impl Model {
    /// Whether a source reads from this repository (and is not a Helm chart
    /// repository).
    pub fn is_this_repo(&self, src: &Source, tree: &dyn Tree) -> bool {
        src.chart.is_none() && self.is_this_repo_url(src, tree)
    }

    /// Whether a source's repoURL is this repository (a chart source's
    /// included: its `ref` may still point here).
    fn is_this_repo_url(&self, src: &Source, tree: &dyn Tree) -> bool {
        if src.this_repo {
            return true;
        }
        match repo_identity(&src.repo_url) {
            Some(id) if self.identity_from_remotes => self.facts.identities.contains(&id),
            Some(_) => match src.path.as_deref() {
                Some(p) => !p.contains("{{") && tree.exists(&join(p, "")),
                // A `ref` source has no path: it is this repository when
                // another source of the tree's Applications names it.
                None => src.ref_name.is_some(),
            },
            None => false,
        }
    }

    /// What [`Model::parents`] asks of every app whatever the file, asked
    /// once per report instead of once per rewritten file.
    fn lookups(&self, tree: &dyn Tree) -> Lookups<'_> {
        let mut lk = Lookups::default();
        for (i, app) in self.apps.iter().enumerate() {
            lk.by_file.entry(app.file.as_str()).or_default().push(app);
            for (j, src) in app.sources.iter().enumerate() {
                if !self.is_this_repo_url(src, tree) {
                    continue;
                }
                let path = src.path.as_deref().unwrap_or("");
                let kustomize =
                    src.chart.is_none() && tree.kustomization(&join(path, "")).is_some();
                // Only a `ref`, a kustomization or a chart's value file
                // reaches a file outside the source's path ([`covers`]).
                if src.ref_name.is_some() || kustomize || !src.value_files.is_empty() {
                    lk.anywhere.push((i, j, kustomize));
                } else if src.chart.is_none() {
                    lk.by_dir
                        .entry(join(path, ""))
                        .or_default()
                        .push((i, j, false));
                }
            }
            let generators: Vec<bool> = app
                .git_generators
                .iter()
                .map(|g| {
                    repo_identity(&g.repo_url).is_some_and(|id| {
                        !self.identity_from_remotes || self.facts.identities.contains(&id)
                    })
                })
                .collect();
            if generators.iter().any(|t| *t) {
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
            let src = &app.sources[j];
            if let Some(r) = &src.ref_name {
                let wanted = format!("${r}/{file}");
                if app.sources.iter().any(|o| o.value_files.contains(&wanted)) {
                    out.push(Parent {
                        app,
                        cover: Cover::Yes,
                        revision: src.target_revision.clone(),
                        automated: app.automated,
                    });
                }
                if src.path.is_none() {
                    continue;
                }
            }
            if src.chart.is_some() {
                continue;
            }
            let path = src.path.as_deref().unwrap_or("");
            let outside = under(file, path).is_none();
            if outside && !kustomize && !src.value_files.iter().any(|v| join(path, v) == file) {
                continue;
            }
            let cover = covers(src, file, tree);
            if cover == Cover::Yes || !outside {
                out.push(Parent {
                    app,
                    cover,
                    revision: src.target_revision.clone(),
                    automated: app.automated,
                });
            }
        }
        out
    }

    /// The git generators of `app` that read `file` (`this`: which read
    /// this repository).
    fn generator_parents<'m>(
        &self,
        app: &'m App,
        file: &str,
        this: &[bool],
        out: &mut Vec<Parent<'m>>,
    ) {
        for (g, this) in app.git_generators.iter().zip(this) {
            if *this && g.files.iter().any(|glob| glob_match(glob, file)) {
                // The ApplicationSet controller reads the generator's
                // files by itself (it polls); its Applications then
                // sync under the template's policy.
                out.push(Parent {
                    app,
                    cover: Cover::Yes,
                    revision: g.revision.clone(),
                    automated: true,
                });
            }
        }
    }

    /// The after-merge rows for the rewritten files.
    pub fn rows(&self, rewritten: &[(String, Vec<String>)], tree: &dyn Tree) -> Vec<Row> {
        let mut rows = Vec::new();
        if rewritten.is_empty() {
            return rows;
        }
        let lk = self.lookups(tree);
        for (file, resources) in rewritten {
            let children: &[&App] = lk.by_file.get(file.as_str()).map_or(&[], Vec::as_slice);
            let hop2 = if children.is_empty() {
                None
            } else {
                Some(children.iter().all(|c| c.automated))
            };
            let wave = children.iter().map(|c| c.wave).min().unwrap_or(0);
            let parents = self.parents(file, tree, &lk);
            if parents.is_empty() {
                rows.push(Row {
                    file: file.clone(),
                    resources: resources.clone(),
                    feeder: None,
                    revision: None,
                    revision_kind: None,
                    tracks_base: false,
                    hop1_automated: None,
                    hop2_automated: hop2,
                    wave,
                    verdict: Verdict::NoFeeder,
                });
                continue;
            }
            for Parent {
                app,
                cover,
                revision: rev,
                automated,
            } in parents
            {
                let revision = classify(&rev, &self.facts);
                let verdict = match (&cover, &revision) {
                    (Cover::No(why), _) => Verdict::NotIncluded(why.clone()),
                    (_, Revision::Branch(b)) => Verdict::TracksBranch(b.clone()),
                    (_, Revision::Pinned(r, k)) => Verdict::Pinned(r.clone(), k),
                    (_, Revision::Unknown(r)) => Verdict::UnknownRevision(r.clone()),
                    _ if automated => Verdict::Deploys,
                    _ => Verdict::ManualSync,
                };
                rows.push(Row {
                    file: file.clone(),
                    resources: resources.clone(),
                    feeder: Some((app.id(), app.file.clone())),
                    revision: Some(if rev.is_empty() { "HEAD".into() } else { rev }),
                    revision_kind: Some(revision.kind()),
                    tracks_base: revision.tracks_base(),
                    hop1_automated: Some(automated),
                    hop2_automated: hop2,
                    wave,
                    verdict,
                });
            }
        }
        rows
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
            steps.push(Step {
                what: p,
                wave: None,
                automated: auto,
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
            steps.push(Step {
                what: id,
                wave: Some(w),
                automated: auto,
            });
        }
        steps
    }

    /// Whether sync waves between the child Applications cannot gate on
    /// health: more than one wave among them and no Application health
    /// customisation in an `argocd-cm` of the repository.
    pub fn waves_without_health(&self, steps: &[Step]) -> bool {
        let waves: BTreeSet<i64> = steps.iter().filter_map(|s| s.wave).collect();
        waves.len() > 1 && !self.app_health
    }
}

/// One step of the after-merge order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// `Kind/name`.
    pub what: String,
    /// The child's sync wave (`None` for a parent).
    pub wave: Option<i64>,
    pub automated: bool,
}

/// Whether an `argocd-cm` (as a ConfigMap, or as Helm values `configs.cm` of
/// an Application installing ArgoCD) declares an Application health check.
pub fn declares_app_health(doc: &Node) -> bool {
    const KEY: &str = "resource.customizations.health.argoproj.io_Application";
    let doc = V(Some(doc));
    let cm_data = |data: V| -> bool {
        !s(data, KEY).is_badvalue()
            || text(s(data, "resource.customizations"))
                .is_some_and(|t| t.contains("argoproj.io/Application") && t.contains("health"))
    };
    let is_cm = text(s(doc, "kind")).as_deref() == Some("ConfigMap")
        && text(s(s(doc, "metadata"), "name")).as_deref() == Some("argocd-cm");
    if is_cm && cm_data(s(doc, "data")) {
        return true;
    }
    let helm = s(s(s(doc, "spec"), "source"), "helm");
    if cm_data(s(s(s(helm, "valuesObject"), "configs"), "cm")) {
        return true;
    }
    text(s(helm, "values")).is_some_and(|v| v.contains(KEY))
}

/// Whether a manifest may be the parent of one of `targets` (paths relative
/// to the repository root), judged from its text without parsing it: one of
/// its `path` values is the root or a folder above a target, it names a
/// target (a `$ref/...` value file), it has generators (their files are
/// globs), or it is ArgoCD's own configuration. What cannot be one is not
/// parsed: a rebind of a large tree reads its Applications, but parses only
/// the few that matter.
fn may_feed(raw: &str, targets: &Targets) -> bool {
    if always_feeds(raw) {
        return true;
    }
    // A `$ref/...` value file names a target whole.
    if raw.contains('$') && targets.files.iter().any(|t| raw.contains(t.as_str())) {
        return true;
    }
    path_values(raw).any(|value| {
        let dir = join(value, "");
        // A path that climbs (`../common`) is judged by parsing.
        dir.is_empty() || targets.dirs.contains(&dir) || value.contains("..")
    })
}

/// What makes any manifest a possible parent, whatever the targets.
fn always_feeds(raw: &str) -> bool {
    raw.contains("argocd-cm")
        || raw.contains("resource.customizations")
        || raw.contains("generators")
}

/// The values of the `path` keys in a manifest's text, read without parsing
/// it (as [`may_feed`] judges them): quotes and a trailing comment dropped.
fn path_values(raw: &str) -> impl Iterator<Item = &str> + '_ {
    let b = raw.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = raw[from..].find("path").map(|i| i + from) {
            from = i + 4;
            let mut j = from;
            if b.get(j) == Some(&b'"') || b.get(j) == Some(&b'\'') {
                j += 1;
            }
            while b.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
                j += 1;
            }
            if b.get(j) != Some(&b':') {
                continue;
            }
            let end = raw[j + 1..]
                .find(['\n', '\r', ',', '}'])
                .map_or(raw.len(), |e| j + 1 + e);
            let value = raw[j + 1..end]
                .split(" #")
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\'']);
            return Some(value);
        }
        None
    })
}

/// What a rebind's walk keeps of a file that may hold an Application, an
/// ApplicationSet or `argocd-cm`, so that the after-merge review neither
/// walks nor reads the tree again: its name and what [`may_feed`] asks of
/// its text, never the text. Once the rewritten files are known, only the
/// candidates that may feed one are read again and parsed.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `/`-separated, relative to the walked directory.
    rel: Box<str>,
    /// A possible parent whatever the targets: ArgoCD's configuration,
    /// generators, a `$` (a `$ref/...` value file), a `path` that is the
    /// root or climbs.
    always: bool,
    /// The folders its other `path` values name.
    dirs: Box<[Box<str>]>,
}

impl Candidate {
    /// The candidate a file's text `raw` is (named by `rel`, asked only
    /// then), or `None` when the after-merge review would not parse it (no
    /// Application, ApplicationSet or `argocd-cm` in it).
    pub fn of(raw: &str, rel: impl FnOnce() -> Option<String>) -> Option<Candidate> {
        if !(raw.contains("argoproj.io") || raw.contains("argocd-cm")) {
            return None;
        }
        let rel = rel()?;
        let mut always = always_feeds(raw) || raw.contains('$');
        let mut dirs = Vec::new();
        for value in path_values(raw) {
            let dir = join(value, "");
            always |= dir.is_empty() || value.contains("..");
            dirs.push(dir.into_boxed_str());
        }
        Some(Candidate {
            rel: rel.into_boxed_str(),
            always,
            dirs: dirs.into_boxed_slice(),
        })
    }
}

/// Whether [`may_feed`] may hold for a candidate's text: never `false`
/// where it holds (the text is read again and judged exactly).
fn may_feed_kept<'a>(
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
    files: Vec<String>,
    set: std::collections::HashSet<String>,
    dirs: std::collections::HashSet<String>,
}

impl Targets {
    fn new(files: &[String]) -> Targets {
        let mut dirs = std::collections::HashSet::new();
        for f in files {
            let mut d = f.as_str();
            while let Some(i) = d.rfind('/') {
                d = &d[..i];
                dirs.insert(d.to_string());
            }
        }
        Targets {
            files: files.to_vec(),
            set: files.iter().cloned().collect(),
            dirs,
        }
    }
}

/// Every Application, ApplicationSet and `argocd-cm` below `root` that
/// may feed one of `only_for` (all of them for `None`): from the candidates
/// a walk of `root` kept, or by walking it.
fn apps_below(
    root: &Path,
    only_for: Option<&[String]>,
    known: Option<&Candidates>,
) -> (Vec<App>, bool) {
    match (known, only_for) {
        (Some(known), Some(targets)) if known.root == root => {
            let lookup = Targets::new(targets);
            let files: Vec<String> = known
                .each()
                .filter(|(rel, always, dirs)| may_feed_kept(rel, *always, dirs.clone(), &lookup))
                .map(|(rel, _, _)| rel.to_string())
                .collect();
            read_apps(root, &files, only_for)
        }
        _ => read_apps(root, &yaml_files(root), only_for),
    }
}

/// Reads every Application, ApplicationSet and `argocd-cm` below `root`
/// from the given files (`/`-separated paths relative to `root`).
pub fn read_apps(root: &Path, files: &[String], only_for: Option<&[String]>) -> (Vec<App>, bool) {
    let mut apps = Vec::new();
    let mut health = false;
    let lookup = only_for.map(Targets::new);
    for rel in files {
        let Ok(raw) = std::fs::read_to_string(root.join(rel)) else {
            continue;
        };
        if !(raw.contains("argoproj.io") || raw.contains("argocd-cm")) {
            continue;
        }
        // A rewritten file's own Applications are the children (hop 2).
        if let Some(lookup) = &lookup {
            if !lookup.set.contains(rel) && !may_feed(&raw, lookup) {
                continue;
            }
        }
        let text = match yaml::mask_templates(&raw) {
            Some((masked, _)) => masked,
            None => raw,
        };
        let Ok(docs) = yaml::read_yaml_or_json(&text) else {
            continue;
        };
        for doc in &docs {
            health |= declares_app_health(doc);
            let m = Manifest { file: rel, doc };
            if let Some(app) = app_of(&m) {
                apps.push(app);
            }
        }
    }
    (apps, health)
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
    /// The rows that would not deploy on merge (what `--require-deploys`
    /// refuses).
    /// A file another parent deploys is not blocked by one that leaves it
    /// out (a root directory app beside the app that owns the folder).
    pub fn blocking(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| {
            !r.verdict.deploys_on_merge()
                && !self
                    .rows
                    .iter()
                    .any(|o| o.file == r.file && o.verdict.deploys_on_merge())
        })
    }
}

/// The report for the `rewritten` files (`/`-separated, relative to the
/// model's root, each with the resources the rebind touches in it).
pub fn report(model: &Model, root: &Path, rewritten: &[(String, Vec<String>)]) -> Report {
    let tree = DiskTree::new(root.to_path_buf());
    let rows = model.rows(rewritten, &tree);
    let order = model.order(&rows);
    let mut notes = Vec::new();
    let mut base_unknown = false;
    if let Some((b, "--base")) = &model.facts.base {
        if !model.facts.branches.is_empty() && !model.facts.branches.contains(b) {
            base_unknown = true;
            notes.push(format!(
                "--base {b} is no branch of this clone (local or remote-tracking): check its spelling; revisions are compared with it as given"
            ));
        }
    }
    if model.facts.base.is_none() {
        notes.push(
            "the base branch is unknown (no --base, no remote HEAD, no upstream): `HEAD` is taken as the branch the cutover merges into".to_string(),
        );
    }
    if !model.identity_from_remotes && rows.iter().any(|r| r.feeder.is_some()) {
        notes.push(
            "no git remote names a source's repoURL: a source was taken as this repository because its path exists in the tree".to_string(),
        );
    }
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
/// (sources, revisions, sync policy, wave) is returned as a finding. A live
/// Application the repository does not hold (a root created by hand) joins
/// the model as a parent, its file shown as `(live)`.
pub fn apply_live(model: &mut Model, text: &str, origin: &str) -> Result<Vec<String>, String> {
    let docs = yaml::read_yaml_or_json(text)
        .map_err(|(line, col, why)| format!("{origin}:{line}:{col}: not JSON or YAML: {why}"))?;
    let mut findings = Vec::new();
    let mut seen = 0usize;
    for doc in &docs {
        let items: Vec<&Node> = match &doc.get("items").map(|n| &n.value) {
            Some(Value::Seq(items)) => items.iter().collect(),
            _ => vec![doc],
        };
        for item in items {
            let Some(live) = app_of(&Manifest {
                file: "(live)",
                doc: item,
            }) else {
                continue;
            };
            seen += 1;
            match model
                .apps
                .iter_mut()
                .find(|a| a.kind == live.kind && a.name == live.name)
            {
                Some(git) => {
                    findings.extend(differences(git, &live));
                    let file = std::mem::take(&mut git.file);
                    *git = App { file, ..live };
                }
                None => {
                    findings.push(format!(
                        "{} is live but not in this repository (created by hand or kept elsewhere); its live spec is used",
                        live.id()
                    ));
                    model.apps.push(live);
                }
            }
        }
    }
    if seen == 0 {
        return Err(format!(
            "{origin}: holds no Application or ApplicationSet (expected `kubectl get applications.argoproj.io -A -o json`)"
        ));
    }
    Ok(findings)
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

/// Adds the root Applications that `.rebind.yaml` declares under
/// `feeders:` (they live outside the repository, so nothing in the tree
/// says what syncs its paths). One the repository also holds, by name, is
/// left to the repository's own spec.
pub fn declare(model: &mut Model, declared: &[crate::model::config::DeclaredFeeder]) {
    for d in declared {
        if model
            .apps
            .iter()
            .any(|a| a.kind == "Application" && a.name == d.name)
        {
            continue;
        }
        model.apps.push(App {
            file: format!("{} (feeders:)", crate::model::config::FILE_NAME),
            kind: "Application",
            name: d.name.clone(),
            sources: vec![Source {
                path: Some(d.path.clone()),
                target_revision: d.revision.clone(),
                this_repo: true,
                ..Source::default()
            }],
            automated: d.automated,
            wave: 0,
            git_generators: Vec::new(),
        });
    }
}

/// The report for a planned rebind: the rewritten manifests (the repo
/// config is not one) with the resources each change sits in.
pub fn for_plans(
    plans: &[crate::edit::rewrite::FilePlan],
    path: &Path,
    base: Option<&str>,
    cutover: Option<&str>,
    live: Option<&Path>,
    declared: &[crate::model::config::DeclaredFeeder],
    known: Option<&Candidates>,
) -> anyhow::Result<Report> {
    let targets: Vec<PathBuf> = plans
        .iter()
        .filter(|p| !p.is_config)
        .map(|p| p.path.canonicalize().unwrap_or_else(|_| p.path.clone()))
        .collect();
    let (root, mut model) = build_for(path, base, cutover, Some(&targets), known);
    declare(&mut model, declared);
    let live_findings = read_live(&mut model, live)?;
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

/// The model for the tree at `path`: the repository root ArgoCD resolves
/// source paths against, and every Application and ApplicationSet in it.
///
/// The root is the git work tree when one of its remotes is the repository
/// some Application's source names; the model then reads the whole work
/// tree (a root Application may live outside `path`). Otherwise (no git
/// repository, or no remote named by any source) the root is `path` itself
/// and a source counts as this repository when its path exists in the tree;
/// [`Model::identity_from_remotes`] says which.
pub fn build(path: &Path, base: Option<&str>, cutover: Option<&str>) -> (PathBuf, Model) {
    build_for(path, base, cutover, None, None)
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
) -> (PathBuf, Model) {
    let tree_root = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let tree_root = if tree_root.is_file() {
        tree_root
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(tree_root)
    } else {
        tree_root
    };
    let git = crate::repo::git::repo_facts(&tree_root, base, cutover);
    let rels_under = |root: &Path| -> Option<Vec<String>> {
        targets.map(|t| {
            t.iter()
                .filter_map(|p| p.strip_prefix(root).ok())
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .collect()
        })
    };
    let named = |apps: &[App], facts: &RepoFacts| {
        apps.iter()
            .flat_map(|a| &a.sources)
            .any(|s| repo_identity(&s.repo_url).is_some_and(|id| facts.identities.contains(&id)))
    };
    // A folder inside a repository: the repository's Applications decide
    // (a root Application usually lives outside the folder rebound).
    if let Some((workdir, facts)) = &git {
        if *workdir != tree_root {
            let wt = rels_under(workdir);
            let (apps, app_health) = apps_below(workdir, wt.as_deref(), known);
            if named(&apps, facts) {
                let model = Model {
                    apps,
                    facts: facts.clone(),
                    identity_from_remotes: true,
                    app_health,
                };
                return (workdir.clone(), model);
            }
        }
    }
    let local_targets = rels_under(&tree_root);
    let (local, local_health) = apps_below(&tree_root, local_targets.as_deref(), known);
    match git {
        Some((workdir, facts)) if named(&local, &facts) => {
            let (apps, app_health) = if workdir == tree_root {
                (local, local_health)
            } else {
                let targets = rels_under(&workdir);
                apps_below(&workdir, targets.as_deref(), known)
            };
            let model = Model {
                apps,
                facts,
                identity_from_remotes: true,
                app_health,
            };
            (workdir, model)
        }
        git => {
            // A tree that is a repository of its own keeps its branches (no
            // Application in it names the repository, but it is this one);
            // a folder inside another repository does not: that
            // repository's branches say nothing about the Applications'.
            let facts = match git {
                Some((workdir, facts)) if workdir == tree_root => facts,
                _ => RepoFacts {
                    base: base.map(|b| (b.to_string(), "--base")),
                    ..RepoFacts::default()
                },
            };
            let model = Model {
                apps: local,
                facts,
                identity_from_remotes: false,
                app_health: local_health,
            };
            (tree_root, model)
        }
    }
}

/// The YAML and JSON files below `root` (gitignore-aware, default globs),
/// `/`-separated and relative to it.
fn yaml_files(root: &Path) -> Vec<String> {
    let req = crate::discover::walk::WalkRequest::for_paths(&[root.to_path_buf()]);
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
    use crate::model::application::{Directory, GitGenerator};

    /// What the rebind's walk keeps of a manifest never says "cannot feed"
    /// where its text says "may feed": the review then reads it again and
    /// judges it exactly, so reusing the walk changes nothing.
    #[test]
    fn a_candidate_may_feed_wherever_its_text_may() {
        use proptest::prelude::*;
        let piece = prop::sample::select(vec![
            "apiVersion: argoproj.io/v1alpha1\n",
            "kind: ConfigMap\nmetadata: {name: argocd-cm}\n",
            "  path: apps/prod\n",
            "  path: 'apps/prod/'\n",
            "  \"path\" : apps # comment\n",
            "  path: ./apps/stage\n",
            "  path: .\n",
            "  path: ''\n",
            "  path: ../common\n",
            "  source: {path: apps/prod, repoURL: x}\n",
            "  valueFiles: [$values/apps/prod/values.yaml]\n",
            "  helm: {valueFiles: [apps/prod/values.yaml]}\n",
            "  generators:\n  - git: {}\n",
            "  resource.customizations: x\n",
            "  pathPrefix: apps\n",
            "  path:\n",
            "  path: other/dir\n",
        ]);
        let target = prop::sample::select(vec![
            "apps/prod/values.yaml",
            "apps/stage/a.yaml",
            "other/dir/x.yaml",
            "root.yaml",
            "common/b.yaml",
        ]);
        let cases = (
            prop::collection::vec(piece, 0..8),
            prop::collection::vec(target, 1..3),
            prop::sample::select(vec!["apps/prod/values.yaml", "x/app.yaml"]),
        );
        proptest!(ProptestConfig::with_cases(2000), |((pieces, targets, rel) in cases)| {
            let raw: String = pieces.concat();
            let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
            let lookup = Targets::new(&targets);
            let exact = lookup.set.contains(rel) || may_feed(&raw, &lookup);
            let read = raw.contains("argoproj.io") || raw.contains("argocd-cm");
            let kept = Candidate::of(&raw, || Some(rel.to_string()));
            prop_assert_eq!(kept.is_some(), read, "{}", raw);
            if let (Some(c), true) = (kept, exact) {
                let mut all = Candidates::default();
                all.push(c);
                let (rel, always, dirs) = all.each().next().unwrap();
                prop_assert!(may_feed_kept(rel, always, dirs, &lookup), "{:?} {:?}", raw, targets);
            }
        });
    }

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
        assert!(glob_match("*.yaml", "a.yaml"));
        assert!(glob_match("*.yaml", "sub/a.yaml"));
        assert!(glob_match("{*.yml,*.yaml}", "a.yml"));
        assert!(!glob_match("{*.yml,*.yaml}", "a.json"));
        assert!(glob_match("some-directory/*", "some-directory/x.yaml"));
        assert!(!glob_match("some-directory/*", "other/x.yaml"));
        assert!(glob_match("{config.json,env-usw2/*}", "env-usw2/a.yaml"));
        assert!(glob_match("app-[0-9].yaml", "app-7.yaml"));
        assert!(!glob_match("app-[!0-9].yaml", "app-7.yaml"));
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
                    "resources: [a.yaml, nested]\npatches: [{path: p.yaml}]\n",
                ),
                ("apps/nested", "resources: [c.yaml]\n"),
            ],
        };
        let src = dir_source("apps", false);
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
