//! The documentation holds together: the README stays a short guide that
//! links every page in `docs/`, every relative link in the README and the
//! pages points at a file that exists, and every path the README's "Where to
//! change what" names exists (so a moved or renamed file fails here until
//! the guide follows it).

use std::path::{Component, Path, PathBuf};

/// The README must stay shorter than this many lines.
const README_MAX_LINES: usize = 300;

/// What a backticked string in "Where to change what" starts with when it
/// names a file or folder of this repository.
const REPO_PATH_PREFIXES: &[&str] = &[
    "src/",
    "tests/",
    "testdata/",
    "snapshots/",
    "docs/",
    "examples/",
    ".ci/",
    "fuzz/",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &Path) -> String {
    std::fs::read_to_string(root().join(rel))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", rel.display()))
}

/// `docs/*.md`, relative to the repository root, sorted.
fn docs_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("docs/ entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    pages.sort();
    pages
}

/// The README and every docs page, relative to the repository root.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    files.extend(docs_pages());
    files
}

/// The text outside fenced code blocks (```` ``` ```` or `~~~`); a fenced
/// line is left empty, so lines keep their numbers.
fn outside_fences(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match fence {
            Some(marker) if trimmed.starts_with(marker) => fence = None,
            Some(_) => {}
            None if trimmed.starts_with("```") => fence = Some("```"),
            None if trimmed.starts_with("~~~") => fence = Some("~~~"),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Splits text into what lies outside code spans and the spans' contents.
/// A span opens with a run of backticks and closes with a run of the same
/// length (across line breaks, as in Markdown); an unmatched run is text.
/// A span becomes a space and its line breaks, so lines keep their numbers.
fn code_spans(text: &str) -> (String, Vec<String>) {
    let bytes = text.as_bytes();
    let run_at = |i: usize| bytes[i..].iter().take_while(|&&b| b == b'`').count();
    let mut prose = String::new();
    let mut spans = Vec::new();
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = run_at(i);
        let body = i + run;
        let mut j = body;
        let close = loop {
            match bytes[j..].iter().position(|&b| b == b'`') {
                None => break None,
                Some(k) => {
                    let at = j + k;
                    let len = run_at(at);
                    if len == run {
                        break Some(at);
                    }
                    j = at + len;
                }
            }
        };
        match close {
            Some(end) => {
                prose.push_str(&text[copied..i]);
                prose.push(' ');
                prose.extend(text[body..end].matches('\n'));
                spans.push(text[body..end].trim().to_string());
                i = end + run;
                copied = i;
            }
            None => i = body,
        }
    }
    prose.push_str(&text[copied..]);
    (prose, spans)
}

/// Every link target in the Markdown text, with its line number: inline
/// `[text](target)` and reference definitions `[label]: target`, outside
/// code.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let (prose, _) = code_spans(&outside_fences(text));
    let mut targets = Vec::new();
    for (n, line) in prose.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find([')', ' ']).unwrap_or(rest.len());
            targets.push((n + 1, rest[..end].to_string()));
        }
        let line = line.trim_start();
        if let Some(close) = line.strip_prefix('[').and_then(|l| l.find("]:")) {
            let target = line[close + 3..].split_whitespace().next().unwrap_or("");
            targets.push((n + 1, target.to_string()));
        }
    }
    targets
        .into_iter()
        .map(|(n, t)| {
            (
                n,
                t.trim_start_matches('<').trim_end_matches('>').to_string(),
            )
        })
        .collect()
}

/// The file a link points at, relative to the repository root, or `None`
/// for a link that leaves the repository (a URL, an e-mail) or stays on the
/// page (`#anchor`). The anchor of a link to another file is not checked.
fn link_file(from: &Path, target: &str) -> Option<PathBuf> {
    if target.is_empty() || target.starts_with('#') || target.contains("://") {
        return None;
    }
    if target.starts_with("mailto:") {
        return None;
    }
    let file = target.split(['#', '?']).next().unwrap_or(target);
    let dir = from.parent().unwrap_or(Path::new(""));
    Some(normalize(&dir.join(file)))
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The README's "Where to change what" section: from its heading to the next
/// heading of the same or a higher level.
fn where_to_change_what(readme: &str) -> String {
    let mut section = String::new();
    let mut level = None;
    for line in outside_fences(readme).lines() {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let heading = hashes > 0 && line[hashes..].starts_with(' ');
        match level {
            None if heading && line[hashes..].trim() == "Where to change what" => {
                level = Some(hashes);
            }
            Some(l) if heading && hashes <= l => break,
            Some(_) => {
                section.push_str(line);
                section.push('\n');
            }
            None => {}
        }
    }
    assert!(
        level.is_some(),
        "README.md has no \"Where to change what\" heading"
    );
    section
}

/// The part of a named path that must exist: the path itself, without a
/// Rust item after it (`src/yaml.rs::template_actions`); for a glob
/// (`src/**/*.rs`), the folder before its first wildcard.
fn existing_part(named: &str) -> &str {
    let named = named.split("::").next().unwrap_or(named);
    match named.find(['*', '?', '[', '{']) {
        Some(wild) => &named[..named[..wild].rfind('/').map_or(0, |s| s + 1)],
        None => named,
    }
}

fn fail_on(problems: &[String], what: &str) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

#[test]
fn relative_links_point_to_files_that_exist() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        for (line, target) in link_targets(&read(&file)) {
            let Some(linked) = link_file(&file, &target) else {
                continue;
            };
            if !root().join(&linked).exists() {
                broken.push(format!(
                    "{}:{line}: link ({target}) points to {}, which does not exist",
                    file.display(),
                    linked.display()
                ));
            }
        }
    }
    fail_on(&broken, "broken relative links");
}

#[test]
fn where_to_change_what_names_paths_that_exist() {
    let section = where_to_change_what(&read(Path::new("README.md")));
    let (_, spans) = code_spans(&section);
    let named: Vec<&String> = spans
        .iter()
        .filter(|s| REPO_PATH_PREFIXES.iter().any(|p| s.starts_with(p)))
        .collect();
    assert!(
        named.len() >= 10,
        "README.md: \"Where to change what\" names only {} repository paths: {named:?}",
        named.len()
    );
    let missing: Vec<String> = named
        .iter()
        .filter(|n| !root().join(existing_part(n)).exists())
        .map(|n| format!("README.md: \"Where to change what\" names `{n}`, which does not exist"))
        .collect();
    fail_on(
        &missing,
        "paths named in README.md's \"Where to change what\"",
    );
}

#[test]
fn readme_is_under_300_lines() {
    let lines = read(Path::new("README.md")).lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines; it must stay under {README_MAX_LINES}: move reference material to a page in docs/"
    );
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let readme = Path::new("README.md");
    let linked: Vec<PathBuf> = link_targets(&read(readme))
        .iter()
        .filter_map(|(_, t)| link_file(readme, t))
        .collect();
    let unlinked: Vec<String> = docs_pages()
        .into_iter()
        .filter(|page| !linked.contains(page))
        .map(|page| format!("{} is not linked from README.md", page.display()))
        .collect();
    fail_on(&unlinked, "docs pages missing from README.md");
}

#[test]
fn the_checks_read_markdown_as_written() {
    let text = "See [a](docs/a.md#x), [b](../b.md) and [site](https://x.example).\n\
                `[not](a-link.md)` ``code with ` inside``\n\
                ```sh\n[fenced](nope.md)\n```\n\
                [ref]: docs/c.md \"title\"\n\
                `a\nspan` then [d](d.md)\n";
    let found = link_targets(text);
    let targets: Vec<(usize, &str)> = found.iter().map(|(n, t)| (*n, t.as_str())).collect();
    assert_eq!(
        targets,
        [
            (1, "docs/a.md#x"),
            (1, "../b.md"),
            (1, "https://x.example"),
            (6, "docs/c.md"),
            (8, "d.md")
        ]
    );
    let (_, spans) = code_spans("a `src/x.rs` b ``c ` d`` `e\nf` `unclosed");
    assert_eq!(spans, ["src/x.rs", "c ` d", "e\nf"]);
    assert_eq!(
        link_file(Path::new("docs/ci.md"), "../README.md#set-up"),
        Some(PathBuf::from("README.md"))
    );
    assert_eq!(link_file(Path::new("docs/ci.md"), "#gitlab-ci"), None);
    assert_eq!(
        existing_part("src/yaml.rs::template_actions"),
        "src/yaml.rs"
    );
    assert_eq!(existing_part("src/**/*.rs"), "src/");
    assert_eq!(existing_part("src/output/{text,json}.rs"), "src/output/");
}
