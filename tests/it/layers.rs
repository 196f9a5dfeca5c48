//! The layers of `src/`: every folder is a layer, and a module imports only
//! from its own layer or from a layer below it, with no import circle
//! anywhere (not even between two files of one layer).
//!
//! The test reads every `src/**/*.rs` (comments and strings blanked), finds
//! every path that names a module of the crate (`crate::…`, `super::…`,
//! `rebind::…` from the binary, `use` trees with braces expanded), resolves
//! each to the file that defines it, and checks the graph of files against
//! [`LAYERS`]. [`ALLOWED`] lists edges that may break the rule for now, with
//! the reason; it is empty and should stay so.

use super::structure::{mask, rust_files};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first: the top-level folder of `src/` (or the file,
/// for the crate roots) and what it owns. A file of layer N may import from
/// layers 0..=N only.
const LAYERS: &[(&str, &str)] = &[
    ("sys", "the process: signals, threads"),
    (
        "text",
        "text rules: URL and host shapes, issuers, escapes, quoting, base64, words",
    ),
    ("syntax", "the readers: YAML and JSON with spans"),
    ("discover", "which files: the walk"),
    (
        "model",
        "tables and configuration: positions, Applications, .rebind.yaml",
    ),
    ("find", "locating endpoints in each file"),
    ("edit", "splices, verification, diffs, the writer"),
    ("repo", "git, remotes, pull requests"),
    (
        "review",
        "the whole plan, after the merge, identity, registrations",
    ),
    ("output", "the report model and its renderings"),
    ("commands", "each command's entry point, the read pipeline"),
    ("lib.rs", "the library root: module declarations only"),
    ("cli", "the binary: flags to options"),
    ("main.rs", "the binary's entry point"),
];

/// Edges allowed against the rule: (from file, to file, why). Empty.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// A module of the crate: its path from `src/` (`find/locate.rs`), the
/// crate it belongs to, and its module path (`["find", "locate"]`).
struct Module {
    file: String,
    bin: bool,
    path: Vec<String>,
}

fn modules(src: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let bin = rel == "main.rs" || rel.starts_with("cli/");
            let mut path: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if path.last().is_some_and(|l| l == "mod") {
                path.pop();
            }
            if rel == "lib.rs" || rel == "main.rs" {
                path.clear();
            }
            Module {
                file: rel,
                bin,
                path,
            }
        })
        .collect()
}

/// The layer of a file: its top folder, or its own name at the top.
fn layer(file: &str) -> &str {
    file.split('/').next().unwrap()
}

fn rank(file: &str) -> Option<usize> {
    LAYERS.iter().position(|(l, _)| *l == layer(file))
}

/// Every module path named in `code` (already masked), as segments from the
/// crate root of `from`: `crate::a::b`, `super::c`, `self::d`, `rebind::e`
/// (the library, from the binary), `use` trees expanded.
fn named_paths(code: &str, from: &Module) -> Vec<(Vec<String>, bool)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        if word_start {
            for root in ["crate::", "super::", "self::", "rebind::"] {
                if starts(&chars, i, root) {
                    // `rebind::` is the library, named from the binary.
                    if root == "rebind::" && !from.bin {
                        continue;
                    }
                    let in_bin = from.bin && root != "rebind::";
                    let base: Vec<String> = match root {
                        "crate::" | "rebind::" => Vec::new(),
                        "super::" => parent(from),
                        _ => self_path(from),
                    };
                    let mut found = Vec::new();
                    tree(&chars, i + root.len(), base, &mut found);
                    out.extend(found.into_iter().map(|p| (p, in_bin)));
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

/// The module a file's `self::` names.
fn self_path(m: &Module) -> Vec<String> {
    m.path.clone()
}

/// The module a file's `super::` names: the parent of its own module.
fn parent(m: &Module) -> Vec<String> {
    let mut p = m.path.clone();
    p.pop();
    p
}

fn starts(chars: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

/// Reads a use tree at `i` (`a::b::{c, d::e}`), pushing each full path.
fn tree(
    chars: &[char],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                i = tree(chars, i, prefix.clone(), out);
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                if chars.get(i) == Some(&'}') || i >= chars.len() {
                    return i + 1;
                }
            }
        }
        let start = i;
        while chars
            .get(i)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if word.is_empty() || word == "self" {
            out.push(prefix);
            return i;
        }
        if word == "super" {
            prefix.pop();
        } else {
            prefix.push(word);
        }
        if starts(chars, i, "::") {
            i += 2;
        } else {
            out.push(prefix);
            return i;
        }
    }
}

/// The file that defines the longest prefix of `path` in the crate.
fn resolve<'m>(path: &[String], bin: bool, mods: &'m [Module]) -> Option<&'m Module> {
    (0..=path.len())
        .rev()
        .find_map(|n| mods.iter().find(|m| m.bin == bin && m.path == path[..n]))
}

/// The import graph of `src/`: file → files it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &mods {
        let text = std::fs::read_to_string(src.join(&m.file)).unwrap();
        let code: String = mask(&text).into_iter().collect();
        let set = edges.entry(m.file.clone()).or_default();
        for (path, bin) in named_paths(&code, m) {
            if let Some(to) = resolve(&path, bin, &mods) {
                // A crate root only declares its modules: naming one is no import.
                if to.file != m.file && !to.path.is_empty() {
                    set.insert(to.file.clone());
                }
            }
        }
    }
    edges
}

/// Every circle of the graph (strongly connected parts of more than one file).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = edges.keys().collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for t in edges.get(&n).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    stack.push(t.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in &nodes {
        if done.contains(*n) {
            continue;
        }
        let part: Vec<String> = nodes
            .iter()
            .filter(|m| *m == n || (reaches[*n].contains(**m) && reaches[*m].contains(*n)))
            .map(|m| (*m).clone())
            .collect();
        done.extend(part.iter().cloned());
        if part.len() > 1 {
            out.push(part);
        }
    }
    out
}

/// The edges against [`LAYERS`] (and files in no layer), as messages.
fn against_layers(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut bad = Vec::new();
    for (from, tos) in edges {
        let Some(rf) = rank(from) else {
            bad.push(format!(
                "src/{from}: in no layer of LAYERS (a new folder goes in the table)"
            ));
            continue;
        };
        for to in tos {
            let rt = rank(to).unwrap_or(usize::MAX);
            let allowed = ALLOWED.iter().any(|(f, t, _)| f == from && t == to);
            if rt > rf && !allowed {
                bad.push(format!(
                    "src/{from} ({}) imports src/{to} ({}), a higher layer",
                    layer(from),
                    layer(to)
                ));
            }
        }
    }
    bad
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_circle_in_src() {
    let edges = graph(&src());
    let found = circles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|part| {
            let inside: Vec<String> = part
                .iter()
                .flat_map(|f| {
                    edges[f]
                        .iter()
                        .filter(|t| part.contains(t))
                        .map(move |t| format!("  src/{f} -> src/{t}"))
                })
                .collect();
            format!("circle of {} files:\n{}", part.len(), inside.join("\n"))
        })
        .collect();
    assert!(found.is_empty(), "{}", shown.join("\n"));
}

#[test]
fn no_import_from_a_lower_layer_to_a_higher_one() {
    let bad = against_layers(&graph(&src()));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_allow_list_is_empty_and_every_layer_exists() {
    assert!(
        ALLOWED.is_empty(),
        "edges allowed against the layers: {ALLOWED:?}"
    );
    for (l, _) in LAYERS {
        assert!(
            src().join(l).exists(),
            "LAYERS names src/{l}, which does not exist"
        );
    }
}

#[test]
fn the_reader_of_paths_finds_circles_and_upward_edges() {
    // The checker itself, on a made-up graph: a circle of two and an edge
    // from `text` up to `find` are both reported.
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("find/a.rs".into())
        .or_default()
        .insert("find/b.rs".into());
    g.entry("find/b.rs".into())
        .or_default()
        .insert("find/a.rs".into());
    g.entry("text/c.rs".into())
        .or_default()
        .insert("find/a.rs".into());
    assert_eq!(
        circles(&g),
        vec![vec!["find/a.rs".to_string(), "find/b.rs".to_string()]]
    );
    assert_eq!(
        against_layers(&g),
        vec!["src/text/c.rs (text) imports src/find/a.rs (find), a higher layer".to_string()]
    );
    // Use trees: braces, `self`, `super`.
    let m = Module {
        file: "find/locate.rs".into(),
        bin: false,
        path: vec!["find".into(), "locate".into()],
    };
    let code = "use crate::{text::endpoint::{self, Found}, syntax::yaml};\nuse super::proof::Proof;\nlet x = crate::edit::rewrite::splice(a);";
    let paths: Vec<String> = named_paths(code, &m)
        .into_iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "text::endpoint",
            "text::endpoint::Found",
            "syntax::yaml",
            "find::proof::Proof",
            "edit::rewrite::splice"
        ]
    );
}
