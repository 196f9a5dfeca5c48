//! `.rebind.yaml`: which endpoint each cluster has now, which it had before,
//! the expected counts, the include/exclude globs and, optionally, the
//! repository `root` (default: the config's directory). Reading it (every
//! error names its line, and column where it points at a node), finding it
//! (walking up from PATH), writing a new one (`init`), and planning its update
//! after a rebind (rollbacks included): byte operations and the changes they
//! make as read, which the edit layer applies and verifies.
//!
//! The reader is strict, because the config decides what `check` lets through:
//! a key written twice in any mapping (a cluster declared twice included), a
//! second YAML document, anchors and aliases, a cluster listing its own
//! endpoint (or one endpoint twice) as retired, one endpoint under two
//! clusters, and an invalid glob are all refused.

use crate::text::endpoint::Endpoint;
use crate::text::quote::scalar;
use crate::text::splice::Op;
use anyhow::{anyhow, bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use yaml_rust2::parser::Event;
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::Yaml;

/// Name of the config file at the repository root.
pub const FILE_NAME: &str = crate::discover::walk::CONFIG_FILE;

pub use crate::syntax::yaml::{Node, Value};

/// Parses `text` into a positioned tree. The config is strict: more than one
/// document, an anchor or an alias is an error. Errors carry the 1-based line
/// and column and the whole message.
pub fn parse_tree(text: &str) -> Result<Option<Node>, (usize, usize, String)> {
    let bom = crate::syntax::yaml::bom_len(text);
    let body = &text[bom..];
    // An anchored node's position is after its `&name`: point at the `&`
    // when it is on the same line.
    let anchored = |at: &crate::syntax::yaml::At| {
        let off = at.offset - bom;
        let ls = body[..off].rfind('\n').map_or(0, |p| p + 1);
        let col = match body[ls..off].rfind(['&', '*']) {
            Some(p) => body[ls..ls + p].chars().count() + 1,
            None => at.col,
        };
        Err((
            at.line,
            col,
            "anchors and aliases are not allowed in the config; write the value out".to_string(),
        ))
    };
    let mut tree = crate::syntax::yaml::TreeBuilder::default();
    let mut documents = 0;
    for item in crate::syntax::yaml::Events::new(text).positioned() {
        let (ev, at) = item.map_err(|(l, c, m)| (l, c, format!("not valid YAML: {m}")))?;
        match ev {
            Event::Alias(_) => return anchored(&at),
            Event::Scalar(_, _, aid, _)
            | Event::MappingStart(aid, _)
            | Event::SequenceStart(aid, _)
                if aid > 0 =>
            {
                return anchored(&at)
            }
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err((
                        at.line,
                        at.col,
                        "a second YAML document starts here; the config is a single document"
                            .to_string(),
                    ));
                }
            }
            _ => {}
        }
        tree.event(ev, at);
    }
    Ok(tree.finish().into_iter().next())
}

/// Expected counts for a cluster's endpoint; either may be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expect {
    /// How many files must hold the old endpoint.
    pub files: Option<usize>,
    /// How many occurrences must be rewritten.
    pub occurrences: Option<usize>,
}

impl Expect {
    /// Whether no count is set.
    pub fn is_empty(&self) -> bool {
        self.files.is_none() && self.occurrences.is_none()
    }

    /// `None` when the counts found satisfy every count set; otherwise what
    /// was expected, as `expected 19 occurrences in 8 files`,
    /// `expected 8 files` or `expected 19 occurrences`.
    pub fn mismatch(&self, files: usize, occurrences: usize) -> Option<String> {
        let ok = self.files.is_none_or(|f| f == files)
            && self.occurrences.is_none_or(|o| o == occurrences);
        if ok {
            return None;
        }
        Some(match (self.files, self.occurrences) {
            (Some(f), Some(o)) => format!("expected {o} occurrences in {f} files"),
            (Some(f), None) => format!("expected {f} files"),
            (None, Some(o)) => format!("expected {o} occurrences"),
            (None, None) => unreachable!("an empty expectation always holds"),
        })
    }
}

/// One cluster of the config.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: String,
    pub endpoint: Endpoint,
    /// The endpoint as written, and its node.
    pub endpoint_text: String,
    endpoint_node: Node,
    pub retired: Vec<Endpoint>,
    retired_node: Option<Node>,
    /// The retired endpoints whose clusters are torn down (`torn_down`,
    /// each one of `retired`): a registration of one is no longer a
    /// rollback target, and `check` fails on it.
    pub torn_down: Vec<Endpoint>,
    map_node: Node,
    pub expect: Option<Expect>,
    pub line: usize,
    /// The cluster's EKS OIDC issuer (`oidc_issuer`).
    pub oidc_issuer: Option<crate::text::issuer::Issuer>,
    /// Issuers of the cluster's earlier incarnations (`retired_oidc`): no
    /// trust may name them once their cluster is torn down.
    pub retired_oidc: Vec<crate::text::issuer::Issuer>,
    /// The cluster's EKS `name`, `arn` and `ca_data` (given, or read from
    /// its `describe` file): the old side of a name rebind.
    pub identity: crate::model::cluster::Declared,
}

/// A root Application that lives outside the repository (created by hand,
/// or kept in another repository), declared under `feeders:` so the
/// after-merge model knows what syncs this repository's paths; or a path
/// applied outside ArgoCD (`applied_by`: by hand, by Terraform, by a
/// pipeline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredFeeder {
    /// The Application's name (for `applied_by`: who applies it).
    pub name: String,
    /// The path in this repository it syncs (a folder, or for `applied_by`
    /// a folder or one file), relative to the config's root.
    pub path: String,
    /// Its `targetRevision` (empty: `HEAD`).
    pub revision: String,
    pub automated: bool,
    /// `directory.recurse`, `include`, `exclude` as an Application says them.
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    /// Who applies the path outside ArgoCD.
    pub applied_by: Option<String>,
}

/// A loaded `.rebind.yaml`.
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub text: String,
    pub clusters: Vec<Cluster>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// The `root:` setting (relative to the config's directory) and its node.
    root_setting: Option<(String, Node)>,
    /// Root Applications outside the repository (`feeders:`).
    pub feeders: Vec<DeclaredFeeder>,
    /// The URLs this repository is known by (`repository_urls:`), for a
    /// clone without remotes: a source whose repoURL is one of them reads
    /// this repository.
    pub repository_urls: Vec<String>,
}

impl Config {
    /// The repository root: the directory holding the config, or the
    /// directory its `root:` key names (relative to the config's directory).
    /// Walks start here, and `include`/`exclude` are relative to it.
    pub fn root(&self) -> PathBuf {
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match &self.root_setting {
            Some((r, _)) => dir.join(r),
            None => dir,
        }
    }

    pub fn cluster(&self, name: &str) -> Result<&Cluster> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.clusters.iter().map(|c| c.name.as_str()).collect();
                anyhow!(
                    "--cluster {name}: no such cluster in {} (it has: {})",
                    self.path.display(),
                    names.join(", ")
                )
            })
    }
}

/// The cluster whose current endpoint is `url`: `apply --from URL` updates
/// it exactly as `--cluster NAME` would.
pub fn cluster_for_endpoint<'a>(cfg: &'a Config, url: &Endpoint) -> Option<&'a Cluster> {
    cfg.clusters.iter().find(|c| c.endpoint.key() == url.key())
}

/// The cluster that declares `url`, as its current endpoint or as a retired one.
pub fn owner_of<'a>(cfg: &'a Config, url: &Endpoint) -> Option<&'a Cluster> {
    cluster_for_endpoint(cfg, url).or_else(|| {
        cfg.clusters
            .iter()
            .find(|c| c.retired.iter().any(|r| r.key() == url.key()))
    })
}

/// The refusal for a `--to` that another declared cluster owns: `moving` is
/// the cluster being rebound (`None`: manifests with no declared cluster).
pub fn foreign_target(
    cfg: &Config,
    moving: Option<&str>,
    owner: &Cluster,
    to: &Endpoint,
) -> anyhow::Error {
    let what = match moving {
        Some(m) => format!("cluster {m}"),
        None => "these manifests".to_string(),
    };
    let p = cfg.path.display();
    if owner.endpoint.key() == to.key() {
        anyhow!(
            "--to {} is the endpoint of cluster {} ({p}:{}); pointing {what} at it would deploy its applications onto {}'s cluster. Nothing written. Pass the new endpoint of {what}; if {} itself moved, rebind it first.",
            to.url(),
            owner.name,
            owner.line,
            owner.name,
            owner.name
        )
    } else {
        anyhow!(
            "--to {} is a retired endpoint of cluster {} ({p}:{}); an endpoint that belonged to one cluster is not reused for another. Nothing written. If it really is the new endpoint of {what}, remove it from {}'s `retired` first.",
            to.url(),
            owner.name,
            owner.line,
            owner.name
        )
    }
}

/// Refuses a `--to` that a cluster other than `moving` declares (now or
/// retired), with [`foreign_target`]'s sentence.
pub fn check_target(cfg: &Config, moving: Option<&str>, to: &Endpoint) -> Result<()> {
    match owner_of(cfg, to) {
        Some(owner) if Some(owner.name.as_str()) != moving => {
            Err(foreign_target(cfg, moving, owner, to))
        }
        // A rollback to a cluster declared torn down: it no longer exists.
        Some(owner) if owner.torn_down.iter().any(|t| t.key() == to.key()) => Err(anyhow!(
            "--to {} is a retired endpoint of cluster {} that {}:{} declares torn down (`torn_down`): its cluster no longer exists, so nothing can roll back to it. Nothing written. If it does exist, remove it from `torn_down` first.",
            to.url(),
            owner.name,
            cfg.path.display(),
            owner.line
        )),
        _ => Ok(()),
    }
}

/// Walks up from `start` to find `.rebind.yaml`. A `start` that does not
/// exist (a file named by mistake) is looked up from its nearest existing
/// directory, so the caller reports the missing file, not a missing config.
pub fn find(start: &Path) -> Option<PathBuf> {
    let mut existing = std::env::current_dir().ok()?.join(start);
    while std::fs::symlink_metadata(&existing).is_err() {
        if !existing.pop() {
            return None;
        }
    }
    let abs = existing.canonicalize().ok()?;
    let mut dir = if abs.is_file() {
        abs.parent()?.to_path_buf()
    } else {
        abs
    };
    loop {
        let cand = dir.join(FILE_NAME);
        if cand.is_file() {
            return Some(cand);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// The items of a list of strings, with their nodes.
fn string_items<'a>(node: &'a Node, what: &str, path: &Path) -> Result<Vec<(String, &'a Node)>> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .map(|i| {
                i.as_str().map(|s| (s.to_string(), i)).ok_or_else(|| {
                    anyhow!(
                        "{}:{}: {what}: expected a list of strings",
                        path.display(),
                        i.line
                    )
                })
            })
            .collect(),
        _ => bail!(
            "{}:{}: {what}: expected a list of strings",
            path.display(),
            node.line
        ),
    }
}

/// A list of globs, each checked with `.gitignore` syntax.
fn globs(node: &Node, what: &str, path: &Path) -> Result<Vec<String>> {
    let items = string_items(node, what, path)?;
    for (g, n) in &items {
        if let Some(e) = crate::discover::walk::glob_error(g) {
            bail!(
                "{}:{}:{}: {what} {g:?}: invalid glob: {e}",
                path.display(),
                n.line,
                n.col
            );
        }
    }
    Ok(items.into_iter().map(|(g, _)| g).collect())
}

fn keys_known(node: &Node, known: &[&str], what: &str, path: &Path) -> Result<()> {
    let Value::Map(pairs) = &node.value else {
        bail!(
            "{}:{}: {what}: expected a mapping",
            path.display(),
            node.line
        );
    };
    for (k, _) in pairs {
        let key = k.as_str().unwrap_or("?");
        if !known.contains(&key) {
            bail!(
                "{}:{}: unknown key {key:?} in {what} (known: {})",
                path.display(),
                k.line,
                known.join(", ")
            );
        }
    }
    Ok(())
}

/// Refuses a key written twice in any mapping (YAML readers disagree on
/// which one wins); in `clusters`, a cluster declared twice.
fn no_duplicates(node: &Node, path: &Path, top: bool, clusters: bool) -> Result<()> {
    match &node.value {
        Value::Map(pairs) => {
            for (i, (k, v)) in pairs.iter().enumerate() {
                if let Some(key) = k.as_str() {
                    if let Some((first, _)) =
                        pairs[..i].iter().find(|(f, _)| f.as_str() == Some(key))
                    {
                        let p = path.display();
                        if clusters {
                            bail!(
                                "{p}:{}:{}: cluster {key} is declared twice (first at line {}); keep one",
                                k.line,
                                k.col,
                                first.line
                            );
                        }
                        bail!(
                            "{p}:{}:{}: duplicate key {key:?} (first at line {}); YAML readers disagree on which one counts, keep one",
                            k.line,
                            k.col,
                            first.line
                        );
                    }
                }
                let inner = top && k.as_str() == Some("clusters");
                no_duplicates(v, path, false, inner)?;
            }
            Ok(())
        }
        Value::Seq(items) => items
            .iter()
            .try_for_each(|i| no_duplicates(i, path, false, false)),
        Value::Scalar(..) | Value::Alias(_) => Ok(()),
    }
}

/// Parses config text; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Config> {
    let p = path.display();
    let root = parse_tree(text).map_err(|(l, c, m)| anyhow!("{p}:{l}:{c}: {m}"))?;
    let Some(root) = root else {
        bail!("{p}:1: empty config; expected `clusters:`");
    };
    keys_known(
        &root,
        &[
            "clusters",
            "include",
            "exclude",
            "root",
            "feeders",
            "repository_urls",
        ],
        "the config",
        path,
    )?;
    no_duplicates(&root, path, true, false)?;
    let list = |key: &str| -> Result<Vec<String>> {
        Ok(root
            .get(key)
            .map(|n| globs(n, key, path))
            .transpose()?
            .unwrap_or_default())
    };
    let (include, exclude) = (list("include")?, list("exclude")?);
    let root_setting = root_setting(&root, path)?;
    let mut clusters = Vec::new();
    if let Some(cs) = root.get("clusters").filter(|cs| !cs.is_null()) {
        let Value::Map(pairs) = &cs.value else {
            bail!(
                "{p}:{}: clusters: expected a mapping of cluster names",
                cs.line
            );
        };
        for (k, v) in pairs {
            clusters.push(cluster(k, v, path)?);
        }
    }
    endpoints_distinct(&clusters, path)?;
    issuers_distinct(&clusters, path)?;
    let feeders = match root.get("feeders").filter(|f| !f.is_null()) {
        Some(f) => declared_feeders(f, path)?,
        None => Vec::new(),
    };
    let repository_urls = match root.get("repository_urls").filter(|f| !f.is_null()) {
        Some(n) => repository_urls(n, path)?,
        None => Vec::new(),
    };
    Ok(Config {
        path: path.to_path_buf(),
        text: text.to_string(),
        clusters,
        include,
        exclude,
        root_setting,
        feeders,
        repository_urls,
    })
}

/// `repository_urls:`: a list of the URLs this repository is known by,
/// each naming a repository on a host (`https://host/org/repo`,
/// `git@host:org/repo`, `ssh://...`).
fn repository_urls(n: &Node, path: &Path) -> Result<Vec<String>> {
    let p = path.display();
    let Value::Seq(items) = &n.value else {
        bail!(
            "{p}:{}:{}: repository_urls: expected a list of repository URLs",
            n.line,
            n.col
        );
    };
    let mut out = Vec::new();
    for item in items {
        let url = item.as_str().filter(|_| !item.is_null()).ok_or_else(|| {
            anyhow!(
                "{p}:{}:{}: repository_urls: expected a URL (a string)",
                item.line,
                item.col
            )
        })?;
        if crate::text::repo_url::repo_identity(url).is_none() {
            bail!(
                "{p}:{}:{}: repository_urls: `{url}` names no repository on a host (expected https://host/org/repo, git@host:org/repo or ssh://git@host/org/repo)",
                item.line,
                item.col
            );
        }
        out.push(url.to_string());
    }
    Ok(out)
}

/// `feeders:`: a list of root Applications `{name, path, revision,
/// automated, recurse, include, exclude}` (name and path required;
/// `automated` and `recurse` are `true` or `false`), or of paths applied
/// outside ArgoCD `{path, applied_by}` (nothing else).
fn declared_feeders(f: &Node, path: &Path) -> Result<Vec<DeclaredFeeder>> {
    let p = path.display();
    let Value::Seq(items) = &f.value else {
        bail!("{p}:{}:{}: feeders: expected a list of root Applications ({{name, path, revision, automated}}) or of paths applied outside ArgoCD ({{path, applied_by}})", f.line, f.col);
    };
    let mut out: Vec<DeclaredFeeder> = Vec::new();
    for item in items {
        let applied = item.get("applied_by").is_some();
        let keys: &[&str] = if applied {
            &["path", "applied_by"]
        } else {
            &[
                "name",
                "path",
                "revision",
                "automated",
                "recurse",
                "include",
                "exclude",
            ]
        };
        let what = if applied {
            "a path applied outside ArgoCD (only path and applied_by)"
        } else {
            "a feeder"
        };
        keys_known(item, keys, what, path)?;
        no_duplicates(item, path, false, false)?;
        let text = |key: &str| -> Result<Option<String>> {
            match item.get(key) {
                None => Ok(None),
                Some(n) => n
                    .as_str()
                    .filter(|_| !n.is_null())
                    .map(|s| Some(s.to_string()))
                    .ok_or_else(|| {
                        anyhow!(
                            "{p}:{}:{}: feeders: {key}: expected a string",
                            n.line,
                            n.col
                        )
                    }),
            }
        };
        let applied_by = text("applied_by")?;
        if applied && applied_by.as_deref().is_none_or(|a| a.trim().is_empty()) {
            bail!(
                "{p}:{}:{}: feeders: applied_by: expected who applies the path (by hand, terraform, a pipeline...)",
                item.line,
                item.col
            );
        }
        let name = match (text("name")?, &applied_by) {
            (Some(n), _) => n,
            (None, Some(who)) => who.clone(),
            (None, None) => bail!(
                "{p}:{}:{}: a feeder needs a name (the Application's name)",
                item.line,
                item.col
            ),
        };
        let Some(fpath) = text("path")? else {
            bail!(
                "{p}:{}:{}: feeder {name} needs a path (the path in this repository it syncs)",
                item.line,
                item.col
            );
        };
        let automated = feeder_flag(item, "automated", &name, path)?;
        let recurse = feeder_flag(item, "recurse", &name, path)?;
        if !applied && out.iter().any(|d| d.applied_by.is_none() && d.name == name) {
            bail!(
                "{p}:{}:{}: feeder {name} is declared twice",
                item.line,
                item.col
            );
        }
        out.push(DeclaredFeeder {
            name,
            path: fpath,
            revision: text("revision")?.unwrap_or_default(),
            automated,
            recurse,
            include: text("include")?.filter(|s| !s.is_empty()),
            exclude: text("exclude")?.filter(|s| !s.is_empty()),
            applied_by,
        });
    }
    Ok(out)
}

/// A feeder's `true`/`false` key (absent: `false`).
fn feeder_flag(item: &Node, key: &str, name: &str, path: &Path) -> Result<bool> {
    match item.get(key) {
        None => Ok(false),
        Some(n) => match n.as_str() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => bail!(
                "{}:{}:{}: feeder {name}: {key}: expected true or false",
                path.display(),
                n.line,
                n.col
            ),
        },
    }
}

/// No issuer is declared by two clusters, or current and retired at once.
fn issuers_distinct(clusters: &[Cluster], path: &Path) -> Result<()> {
    let p = path.display();
    for (i, a) in clusters.iter().enumerate() {
        let mine: Vec<&crate::text::issuer::Issuer> =
            a.oidc_issuer.iter().chain(&a.retired_oidc).collect();
        for b in &clusters[..i] {
            let theirs: Vec<&crate::text::issuer::Issuer> =
                b.oidc_issuer.iter().chain(&b.retired_oidc).collect();
            if let Some(x) = mine.iter().find(|x| theirs.iter().any(|y| y.same(x))) {
                bail!(
                    "{p}:{}: OIDC issuer {} of cluster {} is already declared by cluster {} (line {})",
                    a.line,
                    x.url(),
                    a.name,
                    b.name,
                    b.line
                );
            }
        }
    }
    Ok(())
}

/// A cluster's `oidc_issuer` and `retired_oidc`.
fn issuers(
    v: &Node,
    name: &str,
    path: &Path,
) -> Result<(
    Option<crate::text::issuer::Issuer>,
    Vec<crate::text::issuer::Issuer>,
)> {
    let p = path.display();
    let parse = |s: &str, n: &Node, key: &str| {
        crate::text::issuer::Issuer::parse(s).ok_or_else(|| {
            anyhow!(
                "{p}:{}:{}: cluster {name}: {key}: {s} is not an EKS OIDC issuer (https://oidc.eks.<region>.amazonaws.com/id/<ID>)",
                n.line,
                n.col
            )
        })
    };
    let current = match v.get("oidc_issuer") {
        None => None,
        Some(n) => {
            let Some(s) = n.as_str() else {
                bail!(
                    "{p}:{}: cluster {name}: oidc_issuer: expected a URL",
                    n.line
                );
            };
            Some(parse(s, n, "oidc_issuer")?)
        }
    };
    let mut retired: Vec<crate::text::issuer::Issuer> = Vec::new();
    if let Some(r) = v.get("retired_oidc") {
        for (s, n) in string_items(r, "retired_oidc", path)? {
            let i = parse(&s, n, "retired_oidc")?;
            if retired.iter().any(|x| x.same(&i)) {
                bail!(
                    "{p}:{}:{}: cluster {name} lists retired issuer {} twice; keep one",
                    n.line,
                    n.col,
                    i.url()
                );
            }
            if current.as_ref().is_some_and(|c| c.same(&i)) {
                bail!("{p}:{}:{}: cluster {name} lists its current issuer {} as retired; an issuer is current or retired, not both", n.line, n.col, i.url());
            }
            retired.push(i);
        }
    }
    Ok((current, retired))
}

/// A cluster's `name`, `arn`, `ca_data` and `describe` (a path relative
/// to the config's directory): each checked, and the describe file's
/// endpoint must be the cluster's.
fn identity(
    v: &Node,
    name: &str,
    endpoint: &Endpoint,
    path: &Path,
) -> Result<crate::model::cluster::Declared> {
    use crate::model::cluster::{self as eks, Declared};
    let p = path.display();
    let text = |key: &str| -> Result<Option<(String, &Node)>> {
        match v.get(key) {
            None => Ok(None),
            Some(n) => match n.as_str() {
                Some(s) if !s.is_empty() => Ok(Some((s.to_string(), n))),
                _ => bail!(
                    "{p}:{}:{}: cluster {name}: {key}: expected a string",
                    n.line,
                    n.col
                ),
            },
        }
    };
    let mut d = Declared::default();
    if let Some((f, n)) = text("describe")? {
        let file = path.parent().unwrap_or(Path::new(".")).join(&f);
        let described = eks::read_describe("describe", &file)
            .map_err(|e| anyhow!("{p}:{}:{}: cluster {name}: {e:#}", n.line, n.col))?;
        let same = Endpoint::parse("describe", &described.endpoint)
            .is_ok_and(|e| e.key() == endpoint.key());
        if !same {
            bail!(
                "{p}:{}:{}: cluster {name}: describe: {f} is the cluster at {}, not {}",
                n.line,
                n.col,
                described.endpoint,
                endpoint.url()
            );
        }
        d = Declared::of(&described);
    }
    if let Some((s, n)) = text("name")? {
        if !eks::is_cluster_name(&s) {
            bail!("{p}:{}:{}: cluster {name}: name: {s:?} is not an EKS cluster name (1 to 100 letters, digits, '-' and '_', starting with a letter or digit)", n.line, n.col);
        }
        d.name = Some(s);
    }
    if let Some((s, n)) = text("arn")? {
        let Some(arn) = eks::parse_arn(&s) else {
            bail!("{p}:{}:{}: cluster {name}: arn: {s} is not an EKS cluster ARN (arn:aws:eks:REGION:ACCOUNT:cluster/NAME)", n.line, n.col);
        };
        if d.name.as_deref().is_some_and(|x| x != arn.name) {
            bail!(
                "{p}:{}:{}: cluster {name}: arn: {s} names cluster {}, name is {}",
                n.line,
                n.col,
                arn.name,
                d.name.unwrap_or_default()
            );
        }
        d.name.get_or_insert_with(|| arn.name.to_string());
        d.arn = Some(s);
    }
    if let Some((s, n)) = text("ca_data")? {
        if crate::text::base64::decode_wrapped(&s).is_none() {
            bail!(
                "{p}:{}:{}: cluster {name}: ca_data: not base64",
                n.line,
                n.col
            );
        }
        d.ca_data = Some(s);
    }
    Ok(d)
}

/// The `root:` setting, with its node (for errors about it later).
fn root_setting(root: &Node, path: &Path) -> Result<Option<(String, Node)>> {
    let Some(n) = root.get("root") else {
        return Ok(None);
    };
    match n.as_str() {
        Some(r) if !r.is_empty() => Ok(Some((r.to_string(), n.clone()))),
        _ => bail!(
            "{}:{}:{}: root: expected a directory, relative to the config's directory",
            path.display(),
            n.line,
            n.col
        ),
    }
}

/// One entry of `clusters`: the name `k` and its mapping `v`.
fn cluster(k: &Node, v: &Node, path: &Path) -> Result<Cluster> {
    let p = path.display();
    let name = k.as_str().unwrap_or("").to_string();
    if name.is_empty() {
        bail!("{p}:{}: a cluster needs a name", k.line);
    }
    keys_known(
        v,
        &[
            "endpoint",
            "retired",
            "torn_down",
            "expect",
            "oidc_issuer",
            "retired_oidc",
            "name",
            "arn",
            "ca_data",
            "describe",
        ],
        &format!("cluster {name}"),
        path,
    )?;
    let Some(en) = v.get("endpoint") else {
        bail!("{p}:{}: cluster {name} has no endpoint", k.line);
    };
    let Some(endpoint_text) = en.as_str().map(str::to_string) else {
        bail!("{p}:{}: cluster {name}: endpoint: expected a URL", en.line);
    };
    let endpoint = Endpoint::parse("endpoint", &endpoint_text)
        .map_err(|e| anyhow!("{p}:{}: cluster {name}: {e:#}", en.line))?;
    let retired_node = v.get("retired").cloned();
    let retired = match &retired_node {
        Some(r) => retired(r, &name, &endpoint, path)?,
        None => Vec::new(),
    };
    let torn_down = match v.get("torn_down") {
        Some(t) => torn_down(t, &name, &retired, path)?,
        None => Vec::new(),
    };
    let expect = v
        .get("expect")
        .map(|e| expect(e, &name, path))
        .transpose()?;
    let (oidc_issuer, retired_oidc) = issuers(v, &name, path)?;
    let identity = identity(v, &name, &endpoint, path)?;
    Ok(Cluster {
        identity,
        oidc_issuer,
        retired_oidc,
        name,
        endpoint,
        endpoint_text,
        endpoint_node: en.clone(),
        retired,
        retired_node,
        torn_down,
        map_node: v.clone(),
        expect,
        line: k.line,
    })
}

/// A cluster's `retired` list: endpoints, each once, none its current one.
fn retired(r: &Node, name: &str, endpoint: &Endpoint, path: &Path) -> Result<Vec<Endpoint>> {
    let p = path.display();
    let mut retired: Vec<Endpoint> = Vec::new();
    for (s, n) in string_items(r, "retired", path)? {
        let e = Endpoint::parse("retired", &s)
            .map_err(|e| anyhow!("{p}:{}: cluster {name}: {e:#}", n.line))?;
        if let Some(first) = retired.iter().position(|r| r.key() == e.key()) {
            bail!(
                "{p}:{}:{}: cluster {name} lists retired endpoint {} twice (first as item {} of the list); keep one",
                n.line,
                n.col,
                e.url(),
                first + 1
            );
        }
        if e.key() == endpoint.key() {
            bail!(
                "{p}:{}:{}: cluster {name} lists its current endpoint {} as retired; an endpoint is current or retired, not both (after a rollback it leaves `retired`): remove it from the list",
                n.line,
                n.col,
                endpoint.url()
            );
        }
        retired.push(e);
    }
    Ok(retired)
}

/// A cluster's `torn_down` list: retired endpoints (each listed in
/// `retired`, each once) whose clusters no longer exist.
fn torn_down(t: &Node, name: &str, retired: &[Endpoint], path: &Path) -> Result<Vec<Endpoint>> {
    let p = path.display();
    let mut out: Vec<Endpoint> = Vec::new();
    for (s, n) in string_items(t, "torn_down", path)? {
        let e = Endpoint::parse("torn_down", &s)
            .map_err(|e| anyhow!("{p}:{}: cluster {name}: {e:#}", n.line))?;
        if out.iter().any(|x| x.key() == e.key()) {
            bail!(
                "{p}:{}:{}: cluster {name} lists torn-down endpoint {} twice; keep one",
                n.line,
                n.col,
                e.url()
            );
        }
        if !retired.iter().any(|r| r.key() == e.key()) {
            bail!(
                "{p}:{}:{}: cluster {name} lists {} as torn down, but it is not one of its `retired` endpoints; only a retired endpoint's cluster can be torn down",
                n.line,
                n.col,
                e.url()
            );
        }
        out.push(e);
    }
    Ok(out)
}

/// A cluster's `expect`: `files`, `occurrences` or both, as numbers.
fn expect(e: &Node, name: &str, path: &Path) -> Result<Expect> {
    let p = path.display();
    keys_known(
        e,
        &["files", "occurrences"],
        &format!("{name}.expect"),
        path,
    )?;
    let num = |key: &str| -> Result<Option<usize>> {
        let Some(n) = e.get(key) else {
            return Ok(None);
        };
        n.as_str()
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| anyhow!("{p}:{}: {name}.expect.{key}: expected a number", n.line))
    };
    let expect = Expect {
        files: num("files")?,
        occurrences: num("occurrences")?,
    };
    if expect.is_empty() {
        bail!(
            "{p}:{}: {name}.expect needs files, occurrences or both",
            e.line
        );
    }
    Ok(expect)
}

/// No endpoint is declared by two clusters (current or retired).
fn endpoints_distinct(clusters: &[Cluster], path: &Path) -> Result<()> {
    let p = path.display();
    for (i, a) in clusters.iter().enumerate() {
        for b in &clusters[..i] {
            let clash = b.endpoint.key() == a.endpoint.key()
                || b.retired.iter().any(|r| r.key() == a.endpoint.key());
            if clash {
                bail!(
                    "{p}:{}: endpoint {} of cluster {} is already declared by cluster {} (line {})",
                    a.endpoint_node.line,
                    a.endpoint.url(),
                    a.name,
                    b.name,
                    b.line
                );
            }
            if a.retired.iter().any(|r| r.key() == b.endpoint.key()) {
                bail!(
                    "{p}:{}: cluster {} lists as retired the current endpoint {} of cluster {}",
                    a.line,
                    a.name,
                    b.endpoint.url(),
                    b.name
                );
            }
        }
    }
    Ok(())
}

/// Reads and parses a config file; a `root:` that is not a directory is an error.
pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let cfg = parse(path, &text)?;
    if let Some((r, n)) = &cfg.root_setting {
        if !cfg.root().is_dir() {
            bail!(
                "{}:{}:{}: root {r:?}: {} is not a directory",
                path.display(),
                n.line,
                n.col,
                cfg.root().display()
            );
        }
    }
    Ok(cfg)
}

/// One cluster for `init`.
pub struct InitCluster {
    pub name: String,
    pub endpoint: String,
    pub expect: Expect,
    /// The cluster's OIDC issuer, where the tree shows both (an `aws eks
    /// describe-cluster` output naming this endpoint); never guessed.
    pub oidc_issuer: Option<String>,
    /// The EKS name, ARN and CA, from the same describe-cluster output.
    pub identity: crate::model::cluster::Declared,
}

/// The text `init` writes. Cluster names and endpoints are quoted when a
/// YAML reader could take them as anything but the string (`prod #blue`,
/// `- prod`, `yes`, `0b101`, `12:30`; [`crate::text::quote`]). With no cluster, the file is a valid
/// config declaring none, with a comment saying so.
pub fn render_init(clusters: &[InitCluster]) -> String {
    let mut s = String::from(
        "# rebind: the endpoint each workload cluster has now (endpoint), the ones it had\n# before (retired: `rebind check` fails on them), and the counts a rebind must find.\n",
    );
    if clusters.is_empty() {
        s.push_str("# No workload endpoint was found when this file was written; declare each\n# cluster as `NAME: {endpoint: https://...}`.\nclusters: {}\n");
    } else {
        s.push_str("clusters:\n");
    }
    for c in clusters {
        let _ = write!(
            s,
            "  {}:\n    endpoint: {}\n    retired: []\n",
            scalar(&c.name),
            scalar(&c.endpoint)
        );
        let counts: Vec<String> = [
            ("files", c.expect.files),
            ("occurrences", c.expect.occurrences),
        ]
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}: {v}")))
        .collect();
        if !counts.is_empty() {
            let _ = writeln!(s, "    expect: {{{}}}", counts.join(", "));
        }
        if let Some(i) = &c.oidc_issuer {
            let _ = writeln!(s, "    oidc_issuer: {}\n    retired_oidc: []", scalar(i));
        }
        let id = &c.identity;
        for (key, v) in [
            ("name", &id.name),
            ("arn", &id.arn),
            ("ca_data", &id.ca_data),
        ] {
            if let Some(v) = v {
                let _ = writeln!(s, "    {key}: {}", scalar(v));
            }
        }
    }
    let include: Vec<String> = crate::discover::walk::DEFAULT_INCLUDE
        .iter()
        .map(|g| format!("{g:?}"))
        .collect();
    let _ = writeln!(s, "include: [{}]\nexclude: []", include.join(", "));
    s
}

fn line_ending(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |p| p + 1)
}

fn line_end(text: &str, at: usize) -> usize {
    text[at..].find(['\r', '\n']).map_or(text.len(), |p| at + p)
}

/// Where the line holding `at` ends, its line break included.
fn after_line(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |p| at + p + 1)
}

/// Byte offset just past the scalar starting at `start` (quotes included,
/// trailing blanks and comments excluded). In a flow list a plain scalar
/// also ends at `,`, `]` or `}`.
fn scalar_end(text: &str, start: usize, flow: bool) -> usize {
    let b = text.as_bytes();
    let mut i = start + 1;
    match b.get(start) {
        Some(b'\'') => {
            while i < b.len() {
                if b[i] == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            b.len()
        }
        Some(b'"') => {
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            b.len()
        }
        _ => {
            i = start;
            while i < b.len() {
                let c = b[i];
                if c == b'\n' || c == b'\r' || flow && matches!(c, b',' | b']' | b'}') {
                    break;
                }
                if c == b'#' && i > start && matches!(b[i - 1], b' ' | b'\t') {
                    break;
                }
                i += 1;
            }
            while i > start && matches!(b[i - 1], b' ' | b'\t') {
                i -= 1;
            }
            i
        }
    }
}

/// The update of the config after cluster `name` moved to `to` (nothing
/// when it is there already): its endpoint replaced in place, `to` removed
/// from `retired` when it is there (a rollback), and the endpoint it had
/// appended to `retired`; every other byte kept. A `to` that another
/// cluster declares is refused ([`check_target`]). The caller applies the
/// operations and verifies the text read again against [`Update::planned`].
pub fn rebound(cfg: &Config, name: &str, to: &Endpoint) -> Result<Update> {
    let c = cfg.cluster(name)?;
    check_target(cfg, Some(name), to)?;
    let mut u = Update::default();
    if c.endpoint.key() == to.key() {
        return Ok(u);
    }
    u.ops.push(endpoint_edit(cfg, c, to)?);
    u.planned.push(Planned::Scalar {
        at: c.endpoint_node.start,
        value: to.url(),
    });
    let old = c.endpoint_text.trim_end_matches('/');
    match &c.retired_node {
        Some(list) => retired_edits(&cfg.text, c, list, to, old, &mut u),
        None => new_retired(&cfg.text, c, old, &mut u),
    }
    Ok(u)
}

/// A config update: byte operations on the config's text, and what they
/// change as the reader sees it (offsets in the old text).
#[derive(Debug, Default)]
pub struct Update {
    pub ops: Vec<Op>,
    pub planned: Vec<Planned>,
}

/// One change of an [`Update`], as the reader sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// The scalar starting at `at` reads `value`.
    Scalar { at: usize, value: String },
    /// The sequence item starting at `at` is gone.
    Remove { at: usize },
    /// After the sequence item starting at `after` (in the empty sequence
    /// starting there: as its one item), an item reading `item`.
    Insert { after: usize, item: Yaml },
    /// After the mapping entry whose key starts at `after`, `key: value`.
    Entry {
        after: usize,
        key: Yaml,
        value: Yaml,
    },
}

/// The edit of cluster `c`'s endpoint to `to`, in place (inside its quotes).
fn endpoint_edit(cfg: &Config, c: &Cluster, to: &Endpoint) -> Result<Op> {
    let en = &c.endpoint_node;
    let quoted = matches!(
        &en.value,
        Value::Scalar(_, TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted)
    );
    let at = en.start + usize::from(quoted);
    let end = at + c.endpoint_text.len();
    if cfg.text.get(at..end) != Some(c.endpoint_text.as_str()) {
        bail!(
            "{}:{}: cannot update the endpoint of {} in place (escaped text); edit it by hand",
            cfg.path.display(),
            en.line,
            c.name
        );
    }
    Ok(Op::replace(at..end, to.url()))
}

/// The edits of cluster `c`'s `retired` list (`list`, block or flow): `to`
/// removed when it is there, and the `old` endpoint appended (the last
/// item, or the only one, when it is `to`, becomes `old`).
fn retired_edits(text: &str, c: &Cluster, list: &Node, to: &Endpoint, old: &str, u: &mut Update) {
    let Value::Seq(items) = &list.value else {
        unreachable!("retired is a list")
    };
    let flow = text.as_bytes().get(list.start) == Some(&b'[');
    let spans: Vec<(usize, usize)> = items
        .iter()
        .map(|i| (i.start, scalar_end(text, i.start, flow)))
        .collect();
    let hit = c.retired.iter().position(|e| e.key() == to.key());
    let last = items.len().wrapping_sub(1);
    let item = Yaml::String(old.to_string());
    let after = items.get(last).map_or(list.start, |i| i.start);
    u.planned
        .extend(hit.map(|k| Planned::Remove { at: spans[k].0 }));
    u.planned.push(Planned::Insert { after, item });
    // The old endpoint as a new last item of a block list.
    let append_line = || {
        let prefix = &text[line_start(text, spans[last].0)..spans[last].0];
        let end = line_end(text, spans[last].1);
        Op::insert(end, format!("{}{prefix}{old}", line_ending(text)))
    };
    let ops = match hit {
        Some(k) if k == last => vec![Op::replace(spans[k].0..spans[k].1, old)],
        Some(k) if flow => {
            let gone = if k == 0 {
                spans[0].0..spans[1].0
            } else {
                spans[k - 1].1..spans[k].1
            };
            vec![
                Op::remove(gone),
                Op::insert(spans[last].1, format!(", {old}")),
            ]
        }
        Some(k) => {
            let gone = line_start(text, spans[k].0)..after_line(text, spans[k].1);
            vec![Op::remove(gone), append_line()]
        }
        None if flow && items.is_empty() => vec![Op::insert(list.end, old)],
        None if flow => vec![Op::insert(spans[last].1, format!(", {old}"))],
        None => vec![append_line()],
    };
    u.ops.extend(ops);
}

/// The edit that gives cluster `c`, which has no `retired` list, one
/// holding the `old` endpoint: after its endpoint's line, or at the end of
/// a flow mapping.
fn new_retired(text: &str, c: &Cluster, old: &str, u: &mut Update) {
    let Value::Map(entries) = &c.map_node.value else {
        unreachable!("a cluster is a mapping")
    };
    let flow = text.as_bytes().get(c.map_node.start) == Some(&b'{');
    // The entry it follows: the last one, or the endpoint's.
    let at = |(k, v): &(Node, Node)| (flow || v.start == c.endpoint_node.start).then_some(k.start);
    let after = entries
        .iter()
        .rev()
        .find_map(at)
        .unwrap_or(c.endpoint_node.start);
    u.planned.push(Planned::Entry {
        after,
        key: Yaml::String("retired".into()),
        value: Yaml::Array(vec![Yaml::String(old.to_string())]),
    });
    if flow {
        let end = c.map_node.end;
        return u.ops.push(Op::insert(end, format!(", retired: [{old}]")));
    }
    let start = c.endpoint_node.start;
    let key_line = &text[line_start(text, start)..start];
    let indent: String = key_line.chars().take_while(|c| *c == ' ').collect();
    let end = line_end(text, start);
    let nl = line_ending(text);
    u.ops
        .push(Op::insert(end, format!("{nl}{indent}retired: [{old}]")));
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "https://0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";
    const B: &str = "https://fedcba9876543210fedcba9876543210.gr7.ap-northeast-2.eks.amazonaws.com";

    fn cfg(text: &str) -> Result<Config> {
        parse(Path::new(".rebind.yaml"), text)
    }

    /// The config's text with [`rebound`]'s operations applied.
    fn rebound(cfg: &Config, name: &str, to: &Endpoint) -> Result<String> {
        let u = super::rebound(cfg, name, to)?;
        crate::text::splice::apply(&cfg.text, &u.ops).map_err(|e| anyhow!("{e}"))
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            (format!("clusters:\n  a:\n    endpoint: {A}\n    colour: red\n"), ".rebind.yaml:4: unknown key \"colour\""),
            ("clusters:\n  a:\n    retired: []\n".to_string(), ".rebind.yaml:2: cluster a has no endpoint"),
            ("clusters:\n  a:\n    endpoint: http://x.example.com\n".to_string(), ".rebind.yaml:3: cluster a: endpoint"),
            (format!("clusters:\n  a:\n    endpoint: {A}\n  b:\n    endpoint: {A}/\n"), ".rebind.yaml:5: endpoint"),
            (format!("clusterz: {{}}\nclusters:\n  a: {{endpoint: {A}}}\n"), ".rebind.yaml:1: unknown key \"clusterz\""),
            (format!("clusters:\n  a:\n    endpoint: {A}\n    expect: {{files: x, occurrences: 1}}\n"), "expect.files: expected a number"),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", cfg(&text).unwrap_err());
            assert!(err.contains(want), "{err} does not contain {want}");
        }
    }

    #[test]
    fn parses_clusters() {
        let c = cfg(&format!("# c\nclusters:\n  prod:\n    endpoint: {A}\n    retired: ['{B}']\n    expect: {{files: 8, occurrences: 19}}\ninclude: [\"**/*.yaml\"]\n")).unwrap();
        assert_eq!(c.clusters.len(), 1);
        assert_eq!(c.clusters[0].retired[0].url(), B);
        assert_eq!(
            c.clusters[0].expect,
            Some(Expect {
                files: Some(8),
                occurrences: Some(19)
            })
        );
        assert_eq!(c.include, vec!["**/*.yaml"]);
    }

    #[test]
    fn rebound_preserves_bytes_in_every_retired_style() {
        let to = Endpoint::parse("--to", B).unwrap();
        let cases = [
            (
                format!("clusters:\n  prod:\n    endpoint: {A}  # now\n    retired: []\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}  # now\n    retired: [{A}]\n"),
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: \"{A}\"\n    retired: [https://x.example.com]\n"),
                format!("clusters:\n  prod:\n    endpoint: \"{B}\"\n    retired: [https://x.example.com, {A}]\n"),
            ),
            (
                format!("clusters:\r\n  prod:\r\n    endpoint: {A}\r\n    retired:\r\n      - https://x.example.com\r\n    expect: {{files: 1, occurrences: 1}}\r\n"),
                format!("clusters:\r\n  prod:\r\n    endpoint: {B}\r\n    retired:\r\n      - https://x.example.com\r\n      - {A}\r\n    expect: {{files: 1, occurrences: 1}}\r\n"),
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n  stage:\n    endpoint: https://y.example.com\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}\n    retired: [{A}]\n  stage:\n    endpoint: https://y.example.com\n"),
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\n"),
                format!("clusters:\n  prod: {{endpoint: {B}, retired: [{A}]}}\n"),
            ),
        ];
        for (before, after) in cases {
            let c = cfg(&before).unwrap();
            assert_eq!(rebound(&c, "prod", &to).unwrap(), after);
        }
    }

    #[test]
    fn strictness_names_line_and_column() {
        let cases = [
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n  prod:\n    endpoint: {B}\n"),
                ".rebind.yaml:4:3: cluster prod is declared twice (first at line 2)",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    endpoint: {B}\n"),
                ".rebind.yaml:4:5: duplicate key \"endpoint\" (first at line 3)",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\nexclude: []\nexclude: [\"x\"]\n"),
                ".rebind.yaml:4:1: duplicate key \"exclude\" (first at line 3)",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    expect: {{files: 1, files: 2}}\n"),
                ".rebind.yaml:4:24: duplicate key \"files\"",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n---\nclusters: {{}}\n"),
                ".rebind.yaml:4:1: a second YAML document",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: &e {A}\n  stage:\n    endpoint: *e\n"),
                ".rebind.yaml:3:15: anchors and aliases are not allowed",
            ),
            (
                format!("x: &e {A}\nclusters:\n  prod:\n    endpoint: *e\n"),
                ".rebind.yaml:1:4: anchors and aliases are not allowed",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired:\n      - {B}\n      - {A}/\n"),
                ".rebind.yaml:6:9: cluster prod lists its current endpoint",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\ninclude:\n  - \"**/*.yaml\"\n  - \"apps/[x\"\n"),
                ".rebind.yaml:5:5: include \"apps/[x\": invalid glob",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\nexclude: [\"#vendor\"]\n"),
                ".rebind.yaml:3:11: exclude \"#vendor\": invalid glob",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{B}, '{B}/']\n"),
                ".rebind.yaml:4:94: cluster prod lists retired endpoint",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    expect: {{}}\n"),
                ".rebind.yaml:4: prod.expect needs files, occurrences or both",
            ),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", cfg(&text).unwrap_err());
            assert!(err.contains(want), "{err} does not contain {want}");
        }
    }

    #[test]
    fn expect_counts_are_each_optional() {
        let c = cfg(&format!(
            "clusters:\n  a:\n    endpoint: {A}\n    expect: {{files: 8}}\n  b:\n    endpoint: {B}\n    expect: {{occurrences: 3}}\n"
        ))
        .unwrap();
        let (a, b) = (c.clusters[0].expect.unwrap(), c.clusters[1].expect.unwrap());
        assert_eq!((a.files, a.occurrences), (Some(8), None));
        assert_eq!((b.files, b.occurrences), (None, Some(3)));
        assert_eq!(a.mismatch(8, 100), None);
        assert_eq!(a.mismatch(9, 100).as_deref(), Some("expected 8 files"));
        assert_eq!(b.mismatch(1, 3), None);
        assert_eq!(b.mismatch(3, 4).as_deref(), Some("expected 3 occurrences"));
        let both = Expect {
            files: Some(8),
            occurrences: Some(19),
        };
        assert_eq!(
            both.mismatch(8, 20).as_deref(),
            Some("expected 19 occurrences in 8 files")
        );
        assert_eq!(both.mismatch(8, 19), None);
    }

    #[test]
    fn rollback_moves_the_target_out_of_retired() {
        let new = Endpoint::parse("--to", B).unwrap();
        let old = Endpoint::parse("--to", A).unwrap();
        let x = "https://x.example.com";
        let cases = [
            format!("clusters:\n  prod:\n    endpoint: {A}  # now\n    retired: []\n"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n"),
            format!("clusters:\n  prod: {{endpoint: {A}}}\n"),
            format!("clusters:\r\n  prod:\r\n    endpoint: '{A}'\r\n    retired:\r\n      - {x}\r\n"),
            format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, 'https://y.example.com']\n"),
        ];
        for before in cases {
            let c0 = cfg(&before).unwrap();
            let cut = rebound(&c0, "prod", &new).unwrap();
            let c1 = cfg(&cut).unwrap();
            assert_eq!(c1.clusters[0].endpoint, new, "{cut}");
            assert_eq!(c1.clusters[0].retired.last(), Some(&old), "{cut}");
            let back = rebound(&c1, "prod", &old).unwrap();
            let c2 = cfg(&back).unwrap();
            let p = &c2.clusters[0];
            assert_eq!(p.endpoint, old, "{back}");
            let mut want: Vec<String> = c0.clusters[0].retired.iter().map(Endpoint::url).collect();
            want.push(B.to_string());
            assert_eq!(
                p.retired.iter().map(Endpoint::url).collect::<Vec<_>>(),
                want,
                "{back}"
            );
        }
        let c0 = cfg(&format!(
            "clusters:\n  prod:\n    endpoint: {A}  # now\n    retired: []\n"
        ))
        .unwrap();
        let c1 = cfg(&rebound(&c0, "prod", &new).unwrap()).unwrap();
        assert_eq!(
            rebound(&c1, "prod", &old).unwrap(),
            format!("clusters:\n  prod:\n    endpoint: {A}  # now\n    retired: [{B}]\n")
        );
    }

    #[test]
    fn rollback_from_the_middle_of_retired_keeps_every_other_byte() {
        let to = Endpoint::parse("--to", B).unwrap();
        let x = "https://x.example.com";
        let cases = [
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, {B}, https://y.example.com]  # history\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}\n    retired: [{x}, https://y.example.com, {A}]  # history\n"),
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: ['{B}', {x}]\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}\n    retired: [{x}, {A}]\n"),
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired:\n      - {B}  # first\n      - {x}\n    expect: {{files: 1}}\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}\n    retired:\n      - {x}\n      - {A}\n    expect: {{files: 1}}\n"),
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: [{x}, \"{B}\"]\n"),
                format!("clusters:\n  prod:\n    endpoint: {B}\n    retired: [{x}, {A}]\n"),
            ),
        ];
        for (before, after) in cases {
            assert_eq!(rebound(&cfg(&before).unwrap(), "prod", &to).unwrap(), after);
        }
    }

    #[test]
    fn another_clusters_endpoint_is_refused_with_a_sentence() {
        let c = cfg(&format!(
            "clusters:\n  prod:\n    endpoint: {A}\n  stage:\n    endpoint: {B}\n    retired: [https://x.example.com]\n"
        ))
        .unwrap();
        let stage = Endpoint::parse("--to", B).unwrap();
        let x = Endpoint::parse("--to", "https://X.example.com:443").unwrap();
        let a = Endpoint::parse("--from", &format!("{A}/")).unwrap();
        assert_eq!(
            cluster_for_endpoint(&c, &a).map(|c| c.name.as_str()),
            Some("prod")
        );
        assert_eq!(cluster_for_endpoint(&c, &x).map(|c| c.name.as_str()), None);
        assert_eq!(owner_of(&c, &x).map(|c| c.name.as_str()), Some("stage"));
        let err = format!("{:#}", rebound(&c, "prod", &stage).unwrap_err());
        assert!(
            err.starts_with(&format!("--to {B} is the endpoint of cluster stage (.rebind.yaml:4); pointing cluster prod at it would deploy its applications onto stage's cluster.")),
            "{err}"
        );
        assert!(!err.contains("read back"), "{err}");
        let err = format!("{:#}", rebound(&c, "prod", &x).unwrap_err());
        assert!(
            err.contains("is a retired endpoint of cluster stage"),
            "{err}"
        );
        assert!(check_target(&c, Some("stage"), &x).is_ok());
        assert!(check_target(&c, None, &stage).is_err());
        assert_eq!(rebound(&c, "prod", &a).unwrap(), c.text, "already there");
    }

    #[test]
    fn init_output_reads_back_whatever_the_names() {
        let names = [
            "prod #blue",
            "- prod",
            "yes",
            "No",
            "0b101",
            "12:30",
            "1_000",
            "2024-01-01",
            "~",
            "null",
            "prod: blue",
            "'q'",
            "\"dq\"",
            "back\\slash",
            "tab\there",
            "[x]",
            "{y}",
            "*star",
            "&amp",
            "!tag",
            "%pct",
            "@at",
            "`tick",
            "? q",
            "prod-blue.v2",
            "ünï",
            "line\nbreak",
            ".inf",
            "-1",
            "+1",
            "e3",
        ];
        let clusters: Vec<InitCluster> = names
            .iter()
            .enumerate()
            .map(|(i, n)| InitCluster {
                name: n.to_string(),
                endpoint: format!("https://c{i}.example.com"),
                expect: Expect {
                    files: Some(i),
                    occurrences: (i % 2 == 0).then_some(i * 2),
                },
                oidc_issuer: None,
                identity: Default::default(),
            })
            .collect();
        let text = render_init(&clusters);
        let c = cfg(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
        let got: Vec<&str> = c.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, names);
        for (i, k) in c.clusters.iter().enumerate() {
            assert_eq!(k.expect, Some(clusters[i].expect));
        }
        // Names any YAML 1.1 reader could take as non-strings are quoted.
        for n in [
            "yes",
            "No",
            "0b101",
            "12:30",
            "1_000",
            "2024-01-01",
            "null",
            "e3",
        ] {
            assert!(
                text.contains(&format!("  \"{n}\":\n")) || n == "e3" && text.contains("  e3:\n"),
                "{n}: {text}"
            );
        }
        assert!(text.contains("  prod-blue.v2:\n"));
    }

    #[test]
    fn init_with_no_cluster_is_a_valid_empty_config() {
        let text = render_init(&[]);
        let c = cfg(&text).unwrap();
        assert!(c.clusters.is_empty());
        assert!(text.contains("No workload endpoint was found"), "{text}");
        assert!(cfg("clusters:\n").unwrap().clusters.is_empty());
    }

    #[test]
    fn root_key_is_relative_to_the_config() {
        let c = parse(
            Path::new("ci/rebind-prod.yaml"),
            &format!("root: ..\nclusters:\n  prod: {{endpoint: {A}}}\n"),
        )
        .unwrap();
        assert_eq!(c.root(), Path::new("ci/.."));
        let c = parse(Path::new("ci/x.yaml"), "clusters: {}\n").unwrap();
        assert_eq!(c.root(), Path::new("ci"));
        let err = format!("{:#}", cfg("root: []\nclusters: {}\n").unwrap_err());
        assert!(
            err.contains(".rebind.yaml:1:7: root: expected a directory"),
            "{err}"
        );
    }

    #[test]
    fn init_escapes_what_yaml_readers_refuse_raw() {
        // C1 controls and the non-characters are not printable YAML: raw,
        // libyaml-based readers (PyYAML, for one) refuse the whole file.
        let names = [
            "c1\u{80}x",
            "c1\u{9f}x",
            "nc\u{fffe}x",
            "nc\u{ffff}x",
            "nel\u{85}x",
        ];
        let clusters: Vec<InitCluster> = names
            .iter()
            .enumerate()
            .map(|(i, n)| InitCluster {
                name: n.to_string(),
                endpoint: format!("https://c{i}.example.com"),
                expect: Expect::default(),
                oidc_issuer: None,
                identity: Default::default(),
            })
            .collect();
        let text = render_init(&clusters);
        let raw =
            |c: char| c.is_control() && !matches!(c, '\n') || matches!(c, '\u{fffe}' | '\u{ffff}');
        assert!(!text.contains(raw), "{text:?}");
        for escaped in ["\\u0080", "\\u009f", "\\ufffe", "\\uffff", "\\u0085"] {
            assert!(text.contains(escaped), "{escaped}: {text}");
        }
        let c = cfg(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
        let got: Vec<&str> = c.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, names);
    }

    #[test]
    fn every_parse_error_keeps_its_message() {
        let dup = format!(
            ".rebind.yaml:5: endpoint {A} of cluster b is already declared by cluster a (line 2)"
        );
        let ret = format!(
            ".rebind.yaml:4: cluster b lists as retired the current endpoint {A} of cluster a"
        );
        let cases = [
            (String::new(), ".rebind.yaml:1: empty config; expected `clusters:`"),
            (
                "clusters: [a]\n".to_string(),
                ".rebind.yaml:1: clusters: expected a mapping of cluster names",
            ),
            (
                format!("clusters:\n  \"\": {{endpoint: {A}}}\n"),
                ".rebind.yaml:2: a cluster needs a name",
            ),
            (
                "clusters:\n  prod: {retired: []}\n".to_string(),
                ".rebind.yaml:2: cluster prod has no endpoint",
            ),
            (
                "clusters:\n  prod:\n    endpoint: [x]\n".to_string(),
                ".rebind.yaml:3: cluster prod: endpoint: expected a URL",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    retired: x\n"),
                ".rebind.yaml:4: retired: expected a list of strings",
            ),
            (
                format!("clusters:\n  prod:\n    endpoint: {A}\n    expect: {{files: many}}\n"),
                ".rebind.yaml:4: prod.expect.files: expected a number",
            ),
            (
                format!("clusters:\n  a:\n    endpoint: {A}\n  b:\n    endpoint: {A}\n"),
                dup.as_str(),
            ),
            (
                format!("clusters:\n  a:\n    endpoint: {A}\n  b:\n    endpoint: {B}\n    retired: [{A}]\n"),
                ret.as_str(),
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\nroot: \"\"\n"),
                ".rebind.yaml:3:7: root: expected a directory, relative to the config's directory",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}}}\ninclude: x\n"),
                ".rebind.yaml:3: include: expected a list of strings",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}, color: blue}}\n"),
                ".rebind.yaml:2: unknown key \"color\" in cluster prod (known: endpoint, retired, torn_down, expect, oidc_issuer, retired_oidc, name, arn, ca_data, describe)",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}, name: prod.blue}}\n"),
                ".rebind.yaml:2:105: cluster prod: name: \"prod.blue\" is not an EKS cluster name",
            ),
            (
                format!("clusters:\n  prod: {{endpoint: {A}, ca_data: \"not base64!\"}}\n"),
                "cluster prod: ca_data: not base64",
            ),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", cfg(&text).unwrap_err());
            assert!(err.contains(want), "{err} does not contain {want}");
        }
    }
}
