//! `.rebind.yaml`: which endpoint each cluster has now, which it had before,
//! the expected counts, and the include/exclude globs. Reading it (every
//! error names its line), finding it (walking up from PATH), writing a new one
//! (`init`), and updating it after a rebind byte-for-byte like any other file.

use crate::endpoint::Endpoint;
use crate::locate::LineIndex;
use anyhow::{anyhow, bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// Name of the config file at the repository root.
pub const FILE_NAME: &str = ".rebind.yaml";

/// A YAML node with its position: enough to report lines and splice updates.
#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    /// 1-based line of the node's first byte.
    pub line: usize,
    /// Byte offset where the node starts (a quote or bracket included).
    pub start: usize,
    /// Byte offset of the closing bracket of a flow collection, or where the
    /// parser ended a block collection.
    pub end: usize,
}

#[derive(Debug, Clone)]
pub enum Value {
    Scalar(String, TScalarStyle),
    Map(Vec<(Node, Node)>),
    Seq(Vec<Node>),
    Alias,
}

impl Node {
    fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s, _) => Some(s),
            _ => None,
        }
    }

    fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Parses `text` into a positioned tree (first document only).
pub fn parse_tree(text: &str) -> Result<Option<Node>, (usize, usize, String)> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    let index = LineIndex::new(body);
    let mut parser = Parser::new_from_str(body);
    let mut stack: Vec<Node> = Vec::new();
    let mut pending_keys: Vec<Option<Node>> = Vec::new();
    let mut root = None;
    loop {
        let (ev, m) = parser.next_token().map_err(|e| {
            (
                e.marker().line(),
                e.marker().col() + 1,
                e.info().to_string(),
            )
        })?;
        let at = bom + index.offset(body, m.line(), m.col()).unwrap_or(body.len());
        let node = |value| Node {
            value,
            line: m.line(),
            start: at,
            end: at,
        };
        let done = match ev {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::Scalar(v, style, ..) => Some(node(Value::Scalar(v, style))),
            Event::Alias(_) => Some(node(Value::Alias)),
            Event::MappingStart(..) => {
                stack.push(node(Value::Map(Vec::new())));
                pending_keys.push(None);
                None
            }
            Event::SequenceStart(..) => {
                stack.push(node(Value::Seq(Vec::new())));
                pending_keys.push(None);
                None
            }
            Event::MappingEnd | Event::SequenceEnd => {
                pending_keys.pop();
                stack.pop().map(|mut n| {
                    n.end = at;
                    n
                })
            }
            _ => None,
        };
        let Some(done) = done else { continue };
        match stack.last_mut() {
            None => {
                root = Some(done);
                break;
            }
            Some(parent) => match &mut parent.value {
                Value::Seq(items) => items.push(done),
                Value::Map(pairs) => {
                    let slot = pending_keys.last_mut().expect("one per open collection");
                    match slot.take() {
                        None => *slot = Some(done),
                        Some(k) => pairs.push((k, done)),
                    }
                }
                _ => {}
            },
        }
    }
    Ok(root)
}

/// Expected counts for a cluster's endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    pub files: usize,
    pub occurrences: usize,
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
    map_node: Node,
    pub expect: Option<Expect>,
    pub line: usize,
}

/// A loaded `.rebind.yaml`.
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub text: String,
    pub clusters: Vec<Cluster>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Config {
    /// The directory holding the config: the repository root.
    pub fn root(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
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

/// Walks up from `start` to find `.rebind.yaml`.
pub fn find(start: &Path) -> Option<PathBuf> {
    let abs = start.canonicalize().ok()?;
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

fn strings(node: &Node, what: &str, path: &Path) -> Result<Vec<String>> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_string).ok_or_else(|| {
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

/// Parses config text; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Config> {
    let p = path.display();
    let root = parse_tree(text).map_err(|(l, c, m)| anyhow!("{p}:{l}:{c}: not valid YAML: {m}"))?;
    let Some(root) = root else {
        bail!("{p}:1: empty config; expected `clusters:`");
    };
    keys_known(
        &root,
        &["clusters", "include", "exclude"],
        "the config",
        path,
    )?;
    let include = root
        .get("include")
        .map(|n| strings(n, "include", path))
        .transpose()?
        .unwrap_or_default();
    let exclude = root
        .get("exclude")
        .map(|n| strings(n, "exclude", path))
        .transpose()?
        .unwrap_or_default();
    let mut clusters = Vec::new();
    if let Some(cs) = root.get("clusters") {
        let Value::Map(pairs) = &cs.value else {
            bail!(
                "{p}:{}: clusters: expected a mapping of cluster names",
                cs.line
            );
        };
        for (k, v) in pairs {
            let name = k.as_str().unwrap_or("").to_string();
            if name.is_empty() {
                bail!("{p}:{}: a cluster needs a name", k.line);
            }
            keys_known(
                v,
                &["endpoint", "retired", "expect"],
                &format!("cluster {name}"),
                path,
            )?;
            let Some(en) = v.get("endpoint") else {
                bail!("{p}:{}: cluster {name} has no endpoint", k.line);
            };
            let endpoint_text = en.as_str().unwrap_or("").to_string();
            let endpoint = Endpoint::parse("endpoint", &endpoint_text)
                .map_err(|e| anyhow!("{p}:{}: cluster {name}: {e:#}", en.line))?;
            if endpoint.is_in_cluster() {
                bail!(
                    "{p}:{}: cluster {name}: the in-cluster endpoint is not a workload cluster",
                    en.line
                );
            }
            let retired_node = v.get("retired").cloned();
            let retired = match &retired_node {
                None => Vec::new(),
                Some(r) => strings(r, "retired", path)?
                    .iter()
                    .map(|s| {
                        Endpoint::parse("retired", s)
                            .map_err(|e| anyhow!("{p}:{}: cluster {name}: {e:#}", r.line))
                    })
                    .collect::<Result<_>>()?,
            };
            let expect = match v.get("expect") {
                None => None,
                Some(e) => {
                    keys_known(
                        e,
                        &["files", "occurrences"],
                        &format!("{name}.expect"),
                        path,
                    )?;
                    let num = |key: &str| -> Result<usize> {
                        let n = e
                            .get(key)
                            .ok_or_else(|| anyhow!("{p}:{}: {name}.expect needs {key}", e.line))?;
                        n.as_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
                            anyhow!("{p}:{}: {name}.expect.{key}: expected a number", n.line)
                        })
                    };
                    Some(Expect {
                        files: num("files")?,
                        occurrences: num("occurrences")?,
                    })
                }
            };
            clusters.push(Cluster {
                name,
                endpoint,
                endpoint_text,
                endpoint_node: en.clone(),
                retired,
                retired_node,
                map_node: v.clone(),
                expect,
                line: k.line,
            });
        }
    }
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
    Ok(Config {
        path: path.to_path_buf(),
        text: text.to_string(),
        clusters,
        include,
        exclude,
    })
}

/// Reads and parses a config file.
pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    parse(path, &text)
}

/// One cluster for `init`.
pub struct InitCluster {
    pub name: String,
    pub endpoint: String,
    pub expect: Expect,
}

/// The text `init` writes.
pub fn render_init(clusters: &[InitCluster]) -> String {
    let mut s = String::from(
        "# rebind: the endpoint each workload cluster has now (endpoint), the ones it had\n# before (retired: `rebind check` fails on them), and the counts a rebind must find.\nclusters:\n",
    );
    for c in clusters {
        let _ = write!(
            s,
            "  {}:\n    endpoint: {}\n    retired: []\n    expect: {{files: {}, occurrences: {}}}\n",
            c.name, c.endpoint, c.expect.files, c.expect.occurrences
        );
    }
    s.push_str("include: [\"**/*.yaml\", \"**/*.yml\", \"**/*.json\"]\nexclude: []\n");
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

/// The config text after cluster `name` moved to `to`: its endpoint replaced in
/// place, the old one appended to `retired`; every other byte kept.
pub fn rebound(cfg: &Config, name: &str, to: &Endpoint) -> Result<String> {
    let c = cfg.cluster(name)?;
    let text = &cfg.text;
    let p = cfg.path.display();
    let en = &c.endpoint_node;
    let quoted = matches!(
        &en.value,
        Value::Scalar(_, TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted)
    );
    let at = en.start + usize::from(quoted);
    if text.get(at..at + c.endpoint_text.len()) != Some(c.endpoint_text.as_str()) {
        bail!(
            "{p}:{}: cannot update the endpoint of {name} in place (escaped text); edit it by hand",
            en.line
        );
    }
    let old = c.endpoint_text.trim_end_matches('/').to_string();
    let mut edits: Vec<(usize, usize, String)> = vec![(at, at + c.endpoint_text.len(), to.url())];
    let nl = line_ending(text);
    match &c.retired_node {
        Some(r) if text.as_bytes().get(r.start) == Some(&b'[') => {
            let Value::Seq(items) = &r.value else {
                unreachable!("retired is a list")
            };
            let ins = if items.is_empty() {
                old.clone()
            } else {
                format!(", {old}")
            };
            edits.push((r.end, r.end, ins));
        }
        Some(r) => {
            let Value::Seq(items) = &r.value else {
                unreachable!("retired is a list")
            };
            let last = items.last().expect("a block sequence has an item");
            let ls = line_start(text, last.start);
            let prefix = &text[ls..last.start];
            let end = line_end(text, last.start);
            edits.push((end, end, format!("{nl}{prefix}{old}")));
        }
        None => {
            if text.as_bytes().get(c.map_node.start) == Some(&b'{') {
                edits.push((
                    c.map_node.end,
                    c.map_node.end,
                    format!(", retired: [{old}]"),
                ));
            } else {
                let ls = line_start(text, en.start);
                let key_line = &text[ls..en.start];
                let indent: String = key_line.chars().take_while(|c| *c == ' ').collect();
                let end = line_end(text, en.start);
                edits.push((end, end, format!("{nl}{indent}retired: [{old}]")));
            }
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(text.len() + 128);
    let mut last = 0;
    for (s, e, new) in edits {
        out.push_str(&text[last..s]);
        out.push_str(&new);
        last = e;
    }
    out.push_str(&text[last..]);
    // Verify: it parses, and says what we meant.
    let check = parse(&cfg.path, &out)
        .with_context(|| format!("{p}: the updated config does not read back"))?;
    let nc = check.cluster(name)?;
    let ok = nc.endpoint.key() == to.key()
        && nc.retired.last().map(Endpoint::key) == Some(c.endpoint.key())
        && nc.retired.len() == c.retired.len() + 1
        && check.clusters.len() == cfg.clusters.len();
    if !ok {
        bail!("{p}: the updated config does not read back as planned; edit it by hand");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "https://0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";
    const B: &str = "https://fedcba9876543210fedcba9876543210.gr7.ap-northeast-2.eks.amazonaws.com";

    fn cfg(text: &str) -> Result<Config> {
        parse(Path::new(".rebind.yaml"), text)
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
                files: 8,
                occurrences: 19
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
}
