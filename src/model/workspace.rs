//! The workspace file (`rebind-workspace.yaml`): one cluster change given
//! once (`change:`), the repositories it runs in (`repos:`, each a local
//! `path` or a `url` cloned into a cache, with its `base` branch, an
//! optional `role` and the repositories whose merge it waits for,
//! `after:`), and the order they run in. Read strictly, like
//! `.rebind.yaml`: an unknown or repeated key, a wrong type, a name given
//! twice, an `after:` naming no repository, and a cycle in `after:` are all
//! refused with file:line:column.

use crate::model::config::{parse_tree, Node, Value};
use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};
use yaml_rust2::scanner::TScalarStyle;

/// The file `rebind workspace` reads when none is named.
pub const FILE_NAME: &str = "rebind-workspace.yaml";

/// The keys of `change:`.
const CHANGE_KEYS: &[&str] = &[
    "from",
    "to",
    "describe_from",
    "describe_to",
    "cluster",
    "branch",
    "push",
    "pr",
    "pr_client",
    "pr_draft",
    "pr_labels",
    "pr_reviewers",
    "require_deploys",
];

/// The keys of one repository.
const REPO_KEYS: &[&str] = &["name", "path", "url", "base", "role", "after"];

/// The cluster change, as `change:` gives it (paths resolved against the
/// workspace file's folder).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub from: Option<String>,
    pub to: Option<String>,
    pub describe_from: Option<PathBuf>,
    pub describe_to: Option<PathBuf>,
    /// Take `from` from this cluster of each repository's `.rebind.yaml`.
    pub cluster: Option<String>,
    /// The branch to create in each repository (default:
    /// `rebind/<first label of the new host>`).
    pub branch: Option<String>,
    /// The remote to push each branch to.
    pub push: Option<String>,
    /// Open (or update) each repository's pull request.
    pub pr: bool,
    /// `gh` or `glab`, for hosts whose name says neither.
    pub pr_client: Option<String>,
    pub pr_draft: bool,
    pub pr_labels: Vec<String>,
    pub pr_reviewers: Vec<String>,
    /// Refuse when a rewritten file would not deploy on merge.
    pub require_deploys: bool,
}

/// Where a repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local clone (resolved against the workspace file's folder).
    Path(PathBuf),
    /// A URL, cloned with the system git into the workspace's cache.
    Url(String),
}

/// One repository of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub name: String,
    pub location: Location,
    /// The branch the cutover merges into; the tree must be on it.
    pub base: String,
    /// What it holds, as people say it (`terraform`, `app-of-apps`).
    pub role: Option<String>,
    /// The repositories whose change must be merged before this one's.
    pub after: Vec<String>,
    /// Where it is declared.
    pub line: usize,
}

/// A workspace file, read.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub path: PathBuf,
    pub change: Change,
    /// In the file's order.
    pub repos: Vec<Repo>,
}

impl Workspace {
    /// The folder the file is in (relative paths are read against it).
    pub fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// The repository named `name`.
    pub fn repo(&self, name: &str) -> Option<&Repo> {
        self.repos.iter().find(|r| r.name == name)
    }

    /// The order the repositories run in: each after every repository its
    /// `after:` names, otherwise in the file's order (indexes into
    /// [`Workspace::repos`]). The file was refused if `after:` has a cycle.
    pub fn order(&self) -> Vec<usize> {
        order(&self.repos).expect("a cycle is refused when the file is read")
    }

    /// The rollback's order: the forward order backwards.
    pub fn rollback_order(&self) -> Vec<usize> {
        let mut o = self.order();
        o.reverse();
        o
    }

    /// The repositories whose merge `name` waits for: its `after:` going
    /// forward; going back (the rollback), the repositories that named it.
    pub fn waits_for(&self, name: &str, rollback: bool) -> Vec<String> {
        if rollback {
            self.repos
                .iter()
                .filter(|r| r.after.iter().any(|a| a == name))
                .map(|r| r.name.clone())
                .collect()
        } else {
            self.repo(name).map(|r| r.after.clone()).unwrap_or_default()
        }
    }
}

/// The order of `repos` by their `after:` edges, the file's order breaking
/// ties; `Err` with the names of a cycle (`a -> b -> a`).
fn order(repos: &[Repo]) -> Result<Vec<usize>, Vec<String>> {
    let index = |n: &str| repos.iter().position(|r| r.name == n);
    let mut placed = vec![false; repos.len()];
    let mut out = Vec::new();
    while out.len() < repos.len() {
        let next = (0..repos.len()).find(|&i| {
            !placed[i]
                && repos[i]
                    .after
                    .iter()
                    .all(|a| index(a).is_some_and(|j| placed[j]))
        });
        match next {
            Some(i) => {
                placed[i] = true;
                out.push(i);
            }
            None => return Err(cycle(repos, &placed)),
        }
    }
    Ok(out)
}

/// A cycle among the repositories not yet placed: followed from the first
/// of them along unplaced `after:` edges until a name comes back.
fn cycle(repos: &[Repo], placed: &[bool]) -> Vec<String> {
    let index = |n: &str| repos.iter().position(|r| r.name == n);
    let mut path: Vec<usize> = Vec::new();
    let mut at = (0..repos.len()).find(|&i| !placed[i]).unwrap_or(0);
    loop {
        if let Some(start) = path.iter().position(|&p| p == at) {
            let mut names: Vec<String> = path[start..]
                .iter()
                .map(|&i| repos[i].name.clone())
                .collect();
            names.push(repos[at].name.clone());
            return names;
        }
        path.push(at);
        at = repos[at]
            .after
            .iter()
            .filter_map(|a| index(a))
            .find(|&j| !placed[j])
            .unwrap_or(at);
    }
}

/// Reads and parses a workspace file.
pub fn load(path: &Path) -> Result<Workspace> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow!(
            "{}: cannot read the workspace file ({e}); write one (see docs/workspace.md) or name it: rebind workspace plan FILE",
            path.display()
        )
    })?;
    parse(path, &text)
}

/// `file:line:column: message` for a node.
fn at(path: &Path, n: &Node, msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{}:{}:{}: {msg}", path.display(), n.line, n.col)
}

/// The pairs of a mapping whose keys are all `known` and none repeated.
fn mapping<'a>(n: &'a Node, known: &[&str], what: &str, path: &Path) -> Result<&'a [(Node, Node)]> {
    let Value::Map(pairs) = &n.value else {
        return Err(at(path, n, format!("{what}: expected a mapping")));
    };
    for (i, (k, _)) in pairs.iter().enumerate() {
        let key = k.as_str().unwrap_or("?");
        if !known.contains(&key) {
            return Err(at(
                path,
                k,
                format!(
                    "unknown key {key:?} in {what} (known: {})",
                    known.join(", ")
                ),
            ));
        }
        if let Some((first, _)) = pairs[..i].iter().find(|(f, _)| f.as_str() == Some(key)) {
            return Err(at(
                path,
                k,
                format!(
                    "duplicate key {key:?} in {what} (first at line {}); keep one",
                    first.line
                ),
            ));
        }
    }
    Ok(pairs)
}

/// A non-empty string scalar.
fn string(n: &Node, key: &str, path: &Path) -> Result<String> {
    match n.as_str() {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(at(path, n, format!("{key}: expected a non-empty string"))),
    }
}

/// `true` or `false`, unquoted.
fn boolean(n: &Node, key: &str, path: &Path) -> Result<bool> {
    match &n.value {
        Value::Scalar(s, TScalarStyle::Plain) if s == "true" => Ok(true),
        Value::Scalar(s, TScalarStyle::Plain) if s == "false" => Ok(false),
        _ => Err(at(path, n, format!("{key}: expected true or false"))),
    }
}

/// A list of non-empty strings.
fn strings(n: &Node, key: &str, path: &Path) -> Result<Vec<(String, Node)>> {
    let Value::Seq(items) = &n.value else {
        return Err(at(path, n, format!("{key}: expected a list of strings")));
    };
    items
        .iter()
        .map(|i| Ok((string(i, key, path)?, i.clone())))
        .collect()
}

/// Parses workspace text; `path` names it in errors and its folder is
/// where relative paths start.
pub fn parse(path: &Path, text: &str) -> Result<Workspace> {
    let p = path.display();
    let root = parse_tree(text).map_err(|(l, c, m)| anyhow!("{p}:{l}:{c}: {m}"))?;
    let Some(root) = root else {
        bail!("{p}:1:1: empty workspace file; expected `change:` and `repos:`");
    };
    let top = mapping(&root, &["change", "repos"], "the workspace file", path)?;
    let get = |key: &str| top.iter().find(|(k, _)| k.as_str() == Some(key));
    let Some((_, change)) = get("change") else {
        return Err(at(
            path,
            &root,
            "no `change:` (from/to, or describe_from/describe_to)",
        ));
    };
    let Some((_, repos)) = get("repos") else {
        return Err(at(path, &root, "no `repos:` (the repositories, in order)"));
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let change = parse_change(change, path, &dir)?;
    let repos = parse_repos(repos, path, &dir)?;
    if let Err(names) = order(&repos) {
        let first = repos
            .iter()
            .find(|r| r.name == names[0])
            .map_or(1, |r| r.line);
        bail!(
            "{p}:{first}: `after:` has a cycle: {}; no order runs every repository after the ones it names",
            names.join(" -> ")
        );
    }
    Ok(Workspace {
        path: path.to_path_buf(),
        change,
        repos,
    })
}

fn parse_change(n: &Node, path: &Path, dir: &Path) -> Result<Change> {
    let pairs = mapping(n, CHANGE_KEYS, "change", path)?;
    let mut c = Change::default();
    for (k, v) in pairs {
        let key = k.as_str().unwrap_or_default();
        let s = || string(v, key, path);
        let b = || boolean(v, key, path);
        let list = || -> Result<Vec<String>> {
            Ok(strings(v, key, path)?.into_iter().map(|(s, _)| s).collect())
        };
        match key {
            "from" => c.from = Some(s()?),
            "to" => c.to = Some(s()?),
            "describe_from" => c.describe_from = Some(dir.join(s()?)),
            "describe_to" => c.describe_to = Some(dir.join(s()?)),
            "cluster" => c.cluster = Some(s()?),
            "branch" => c.branch = Some(s()?),
            "push" => c.push = Some(s()?),
            "pr" => c.pr = b()?,
            "pr_client" => {
                let client = s()?;
                if client != "gh" && client != "glab" {
                    return Err(at(path, v, "pr_client: expected gh or glab"));
                }
                c.pr_client = Some(client);
            }
            "pr_draft" => c.pr_draft = b()?,
            "pr_labels" => c.pr_labels = list()?,
            "pr_reviewers" => c.pr_reviewers = list()?,
            _ => c.require_deploys = b()?,
        }
    }
    if c.to.is_none() && c.describe_to.is_none() {
        return Err(at(path, n, "change: give `to` (or `describe_to`)"));
    }
    if c.from.is_none() && c.describe_from.is_none() && c.cluster.is_none() {
        return Err(at(
            path,
            n,
            "change: give `from` (or `describe_from`, or `cluster`): a workspace never guesses the old endpoint",
        ));
    }
    if c.describe_from.is_some() != c.describe_to.is_some() {
        return Err(at(
            path,
            n,
            "change: `describe_from` and `describe_to` go together",
        ));
    }
    if c.pr && c.push.is_none() {
        return Err(at(path, n, "change: `pr: true` needs `push: REMOTE`"));
    }
    let pr_only = c.pr_client.is_some()
        || c.pr_draft
        || !c.pr_labels.is_empty()
        || !c.pr_reviewers.is_empty();
    if pr_only && !c.pr {
        return Err(at(
            path,
            n,
            "change: pr_client, pr_draft, pr_labels and pr_reviewers need `pr: true`",
        ));
    }
    Ok(c)
}

fn parse_repos(n: &Node, path: &Path, dir: &Path) -> Result<Vec<Repo>> {
    let Value::Seq(items) = &n.value else {
        return Err(at(path, n, "repos: expected a list of repositories"));
    };
    if items.is_empty() {
        return Err(at(path, n, "repos: the list is empty"));
    }
    let mut repos: Vec<Repo> = Vec::new();
    let mut after_nodes = Vec::new();
    for item in items {
        let pairs = mapping(item, REPO_KEYS, "a repository", path)?;
        let get = |key: &str| pairs.iter().find(|(k, _)| k.as_str() == Some(key));
        let need = |key: &str| {
            get(key)
                .map(|(_, v)| v)
                .ok_or_else(|| at(path, item, format!("a repository without `{key}:`")))
        };
        let name = string(need("name")?, "name", path)?;
        let name_ok = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !name_ok || name.starts_with('.') {
            return Err(at(
                path,
                need("name")?,
                format!("name {name:?}: letters, digits, `-`, `_` and `.` only (it names a folder of the cache)"),
            ));
        }
        if let Some(first) = repos.iter().find(|r| r.name == name) {
            return Err(at(
                path,
                need("name")?,
                format!(
                    "repository {name} is declared twice (first at line {})",
                    first.line
                ),
            ));
        }
        let location = match (get("path"), get("url")) {
            (Some((_, p)), None) => Location::Path(dir.join(string(p, "path", path)?)),
            (None, Some((_, u))) => Location::Url(string(u, "url", path)?),
            (Some(_), Some((k, _))) => {
                return Err(at(
                    path,
                    k,
                    format!("repository {name}: `path` or `url`, not both"),
                ))
            }
            (None, None) => {
                return Err(at(
                    path,
                    item,
                    format!("repository {name}: give `path` or `url`"),
                ))
            }
        };
        let base = string(need("base")?, "base", path)?;
        let role = get("role")
            .map(|(_, v)| string(v, "role", path))
            .transpose()?;
        let after = match get("after") {
            Some((_, v)) => strings(v, "after", path)?,
            None => Vec::new(),
        };
        after_nodes.push(after.clone());
        repos.push(Repo {
            name,
            location,
            base,
            role,
            after: after.into_iter().map(|(s, _)| s).collect(),
            line: item.line,
        });
    }
    for (r, after) in repos.iter().zip(&after_nodes) {
        for (a, node) in after {
            if !repos.iter().any(|o| &o.name == a) {
                return Err(at(
                    path,
                    node,
                    format!(
                        "repository {}: after {a:?}: no repository of that name",
                        r.name
                    ),
                ));
            }
        }
    }
    Ok(repos)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        "change:\n  from: https://old.example.com\n  to: https://new.example.com\nrepos:\n";

    fn ws(repos: &str) -> Result<Workspace> {
        parse(Path::new("w.yaml"), &format!("{HEAD}{repos}"))
    }

    fn err(text: &str) -> String {
        format!("{:#}", parse(Path::new("w.yaml"), text).unwrap_err())
    }

    #[test]
    fn order_follows_after_then_the_list() {
        let w = ws("  - {name: values, path: v, base: main, after: [gitops]}\n  - {name: tf, path: t, base: main}\n  - {name: gitops, path: g, base: main, after: [tf]}\n  - {name: docs, path: d, base: main}\n").unwrap();
        let names = |o: Vec<usize>| {
            o.into_iter()
                .map(|i| w.repos[i].name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(w.order()), ["tf", "gitops", "values", "docs"]);
        assert_eq!(
            names(w.rollback_order()),
            ["docs", "values", "gitops", "tf"]
        );
        assert_eq!(w.waits_for("gitops", false), ["tf"]);
        assert_eq!(w.waits_for("gitops", true), ["values"]);
        assert_eq!(w.repos[0].location, Location::Path(PathBuf::from("./v")));
    }

    #[test]
    fn a_cycle_is_refused_naming_it() {
        let e = format!(
            "{:#}",
            ws("  - {name: a, path: a, base: main, after: [c]}\n  - {name: b, path: b, base: main, after: [a]}\n  - {name: c, path: c, base: main, after: [b]}\n  - {name: d, path: d, base: main}\n").unwrap_err()
        );
        assert!(e.contains("cycle: a -> c -> b -> a"), "{e}");
        let e = format!(
            "{:#}",
            ws("  - {name: a, path: a, base: main, after: [a]}\n").unwrap_err()
        );
        assert!(e.contains("cycle: a -> a"), "{e}");
    }

    #[test]
    fn strict_with_line_and_column() {
        for (text, want) in [
            (format!("{HEAD}  - name: a\n    path: a\n    base: main\n    colour: red\n"), "w.yaml:8:5: unknown key \"colour\" in a repository"),
            (format!("{HEAD}  - {{name: a, path: a, base: main}}\nextra: 1\n"), "w.yaml:6:1: unknown key \"extra\" in the workspace file"),
            ("change:\n  from: https://o.example.com\n  to: https://n.example.com\n  push: origin\n  pr: yes\nrepos: []\n".to_string(), "w.yaml:5:7: pr: expected true or false"),
            ("change:\n  from: https://o.example.com\n  from: https://p.example.com\n  to: https://n.example.com\nrepos: []\n".to_string(), "w.yaml:3:3: duplicate key \"from\""),
            (format!("{HEAD}  - {{name: a, path: a, base: main}}\n  - {{name: a, path: b, base: main}}\n"), "w.yaml:6:12: repository a is declared twice"),
            (format!("{HEAD}  - {{name: a, path: a, base: main, after: [zz]}}\n"), "w.yaml:5:44: repository a: after \"zz\": no repository"),
            (format!("{HEAD}  - {{name: a, path: a, url: x, base: main}}\n"), "`path` or `url`, not both"),
            (format!("{HEAD}  - {{name: a, path: a}}\n"), "w.yaml:5:5: a repository without `base:`"),
            (format!("{HEAD}  - {{name: ../a, path: a, base: main}}\n"), "name \"../a\""),
            ("change:\n  to: https://n.example.com\nrepos: []\n".to_string(), "w.yaml:2:3: change: give `from`"),
            ("change:\n  from: https://o.example.com\n  to: https://n.example.com\n  pr: true\nrepos: []\n".to_string(), "needs `push: REMOTE`"),
            (format!("{HEAD}  - &x {{name: a, path: a, base: main}}\n"), "anchors and aliases are not allowed"),
        ] {
            let e = err(&text);
            assert!(e.contains(want), "{want}\n{e}");
        }
    }
}
