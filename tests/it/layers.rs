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
/// (the library, from the binary), `child::f` (a module declared in the
/// file), `use` trees expanded. `super`/`self` count inline `mod x { }`s.
fn named_paths(code: &str, from: &Module) -> Vec<(Vec<String>, bool)> {
    named_paths_with(code, from, &BTreeMap::new())
}

/// [`named_paths`], with `roots`: names a `use` brought into the file
/// (`use crate::find;`, `use super::*;`, `use x as y;`) and the module each
/// names, so that `find::embedded::Inner` counts as the path it is.
fn named_paths_with(
    code: &str,
    from: &Module,
    roots: &BTreeMap<String, (Vec<String>, bool)>,
) -> Vec<(Vec<String>, bool)> {
    let chars: Vec<char> = join_paths(code).chars().collect();
    let children = declared_mods(&chars);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        let prev = |k: usize| i.checked_sub(k).and_then(|j| chars.get(j)).copied();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let word_start = ident(Some(chars[i]))
            && !ident(prev(1))
            && prev(1) != Some(':')
            && prev(1) != Some('$')
            || prev(1) == Some('$') && starts(&chars, i, "crate::");
        // `::rebind::` (the extern-prelude spelling) counts too.
        let global = ident(Some(chars[i]))
            && prev(1) == Some(':')
            && prev(2) == Some(':')
            && !ident(prev(3))
            && prev(3) != Some('>');
        let here: Vec<String> = from
            .path
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        if word_start && starts(&chars, i, "mod ") {
            let (name, after) = word_at(&chars, i + 4);
            if chars.get(after) == Some(&'{') {
                inline.push((name, depth));
            }
        }
        if word_start || global {
            let (word, after) = word_at(&chars, i);
            if starts(&chars, after, "::") {
                let in_bin = from.bin && word != "rebind";
                let base: Option<(Vec<String>, bool)> = match word.as_str() {
                    _ if global && word != "rebind" => None,
                    // `rebind::` from the binary is the library; from the
                    // library it is the library too (`extern crate self`).
                    "crate" | "rebind" => Some((Vec::new(), in_bin)),
                    "super" => Some((here[..here.len().saturating_sub(1)].to_vec(), in_bin)),
                    "self" => Some((here.clone(), in_bin)),
                    w if children.contains(w) => {
                        let mut b = here.clone();
                        b.push(w.to_string());
                        Some((b, in_bin))
                    }
                    w if roots.contains_key(w) => Some(roots[w].clone()),
                    _ => None,
                };
                if let Some((base, in_bin)) = base {
                    let mut found = Vec::new();
                    tree(&chars, after + 2, base, &mut found);
                    out.extend(found.into_iter().map(|p| (p, in_bin)));
                }
            }
        }
        i += 1;
    }
    out
}

/// `code` with the whitespace around every `::` removed, so that
/// `crate :: a` and a path split across lines read as one.
fn join_paths(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            let mut j = i;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            if out.ends_with("::") || starts(&chars, j, "::") {
                i = j;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// The identifier at `i` (after any whitespace) and the index after it
/// (and after any whitespace following it).
fn word_at(chars: &[char], mut i: usize) -> (String, usize) {
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    let start = i;
    while chars
        .get(i)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    {
        i += 1;
    }
    let word = chars[start..i].iter().collect();
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    (word, i)
}

/// The names of the modules declared in a file (`mod x;`, `mod x { }`).
fn declared_mods(chars: &[char]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for i in 0..chars.len() {
        let at_word = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if at_word && starts(chars, i, "mod ") {
            out.insert(word_at(chars, i + 4).0);
        }
    }
    out
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
            if chars.get(i) == Some(&'*') {
                prefix.push("*".into()); // a glob: what it brings in is read later
                i += 1;
            }
            push_alias(chars, &mut i, prefix, out);
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
            push_alias(chars, &mut i, prefix, out);
            return i;
        }
    }
}

/// The tokens of masked code: identifiers and single punctuation marks.
fn tokens(code: &[char]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while code
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            out.push(code[start..i].iter().collect());
            continue;
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
        i += 1;
    }
    out
}

/// Pushes `path`, marked with the `as` name that follows it, if any.
fn push_alias(chars: &[char], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
    let (word, after) = word_at(chars, *i);
    if word == "as" {
        let (name, end) = word_at(chars, after);
        path.push(format!("as:{name}"));
        *i = end;
    }
    out.push(path);
}

/// The names the `use`s of a file bring in that name modules of the crate.
fn roots_of(
    paths: &[(Vec<String>, bool)],
    mods: &[Module],
) -> BTreeMap<String, (Vec<String>, bool)> {
    let mut roots = BTreeMap::new();
    for (p, bin) in paths {
        let is_mod = |q: &[String]| mods.iter().any(|m| m.bin == *bin && m.path == q);
        match p.last().map(String::as_str) {
            Some("*") => {
                let base = &p[..p.len() - 1];
                for m in mods.iter().filter(|m| {
                    m.bin == *bin && m.path.len() == base.len() + 1 && m.path.starts_with(base)
                }) {
                    roots.insert(m.path.last().unwrap().clone(), (m.path.clone(), *bin));
                }
            }
            Some(l) if l.starts_with("as:") && is_mod(&p[..p.len() - 1]) => {
                roots.insert(l[3..].to_string(), (p[..p.len() - 1].to_vec(), *bin));
            }
            Some(l) if l.starts_with("as:") => {}
            Some(l) if is_mod(p) => {
                roots.insert(l.to_string(), (p.clone(), *bin));
            }
            _ => {}
        }
    }
    roots
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
        let first = named_paths(&code, m);
        let roots = roots_of(&first, &mods);
        for (path, bin) in named_paths_with(&code, m, &roots) {
            if let Some(to) = resolve(&path, bin, &mods) {
                // Naming a crate root itself (`crate::{self as c}`, `use
                // crate::*`) or an item at it (a `#[macro_export]` macro,
                // an item of `main.rs`) is an edge to the root: it hides the
                // file that really defines what is used.
                if to.file != m.file {
                    set.insert(to.file.clone());
                }
            }
        }
        // A doc comment's link (`[`crate::a::b`]`) names a module too: it
        // ties the reader of one to the other as an import does.
        for path in doc_links(&text) {
            if let Some(to) = resolve(&path, m.bin, &mods) {
                if to.file != m.file && !to.path.is_empty() {
                    set.insert(to.file.clone());
                }
            }
        }
    }
    edges
}

/// The `crate::…` paths named in the doc comments (`///`, `//!`) of `text`.
fn doc_links(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim_start) {
        if !(line.starts_with("///") || line.starts_with("//!")) {
            continue;
        }
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let path: Vec<String> = rest
                .split("::")
                .map(|seg| {
                    seg.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .scan(true, |go, seg| {
                    let keep = *go && !seg.is_empty();
                    *go = keep;
                    keep.then_some(seg)
                })
                .collect();
            out.push(path);
        }
    }
    out
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
            if to == "lib.rs" {
                bad.push(format!(
                    "src/{from} names the library root itself or an item at it, which hides the file it uses"
                ));
                continue;
            }
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

/// What the reader of paths cannot follow: a module loaded from elsewhere,
/// code included from a file, macros visible by name across modules, the
/// crate under another name, paths in attribute strings.
#[test]
fn no_import_the_reader_of_paths_cannot_follow() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let toks = tokens(&mask(&text));
        let raw: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let shown = f.strip_prefix(src()).unwrap().display().to_string();
        let has = |seq: &[&str]| toks.windows(seq.len()).any(|w| w == seq);
        for (hit, what) in [
            (has(&["#", "[", "path"]), "#[path]"),
            (has(&["include", "!"]), "include!"),
            (has(&["#", "[", "macro_export"]), "#[macro_export]"),
            (has(&["#", "[", "macro_use"]), "#[macro_use]"),
            (has(&["extern", "crate"]), "extern crate"),
            (has(&["crate", "as"]), "the crate renamed (`use crate as`)"),
            (has(&["super", "as"]), "a parent renamed (`use super as`)"),
            (
                ["\"crate::", "\"super::", "\"self::", "\"rebind::"]
                    .iter()
                    .any(|p| raw.contains(p)),
                "a crate path in a string (an attribute's path)",
            ),
        ] {
            if hit {
                bad.push(format!("src/{shown}: {what}"));
            }
        }
    }
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
    let code = "use crate::{text::endpoint::{self, Found}, syntax::yaml};\nuse super::embedded::Inner;\nlet x = crate::edit::rewrite::splice(a);";
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
            "find::embedded::Inner",
            "edit::rewrite::splice"
        ]
    );
}
