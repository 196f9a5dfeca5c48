//! The command line only maps flags: `src/cli/*.rs` reaches the library
//! through each command's options type and entry point (`run`, `diff`),
//! never through the modules that do the work (git, the writer, the walk,
//! the config, the planner...). A cli module that grows a domain decision
//! needs one of those, and fails here: put the decision in the command's
//! library module instead.

use std::path::Path;

/// The library modules the command line may name: each command's module
/// (its options and its entry point), and the modules whose types the
/// options are made of.
const MODULES: &[&str] = &[
    "commands::apply",
    "commands::check",
    "commands::cutover",
    "commands::feeders",
    "commands::identity",
    "commands::init",
    "commands::scan",
    "commands::secret",
    "commands::workspace",
    "output",
    "repo::pr",
    "review::secret",
];

/// The functions it may call: the commands' entry points, and the colour
/// choice `Cli::resolve` settles.
const FUNCTIONS: &[&str] = &["run", "diff", "output::color_enabled"];

/// Every `rebind::` path in `code`, `use` groups expanded
/// (`rebind::a::{self, B}` gives `a::self` and `a::B`).
fn library_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("rebind::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "rebind::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || "_:{}, \n*".contains(c)))
            .unwrap_or(rest.len());
        expand("", &rest[..end], &mut out);
    }
    out
}

/// `prefix` joined to each path of a `use` tree (or a plain path).
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim().trim_end_matches([',', ' ', '\n']);
    let join = |p: &str| {
        if prefix.is_empty() {
            p.to_string()
        } else {
            format!("{prefix}::{p}")
        }
    };
    // A group follows `::` (or opens the tree); any other brace is code.
    match tree
        .find('{')
        .filter(|&o| o == 0 || tree[..o].ends_with("::"))
    {
        Some(open) => {
            let head = join(tree[..open].trim_end_matches(':'));
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            // Split the group at its top-level commas.
            let (mut depth, mut from) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&head, &inner[from..i], out);
                        from = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&head, &inner[from..], out);
        }
        None if tree.is_empty() => {}
        None => {
            // A plain path ends at its first space or brace (`rebind::x::Y
            // as Z`, a struct literal, a path in an expression).
            let path = tree
                .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
                .next()
                .unwrap_or_default();
            out.push(join(path.trim_end_matches(':')));
        }
    }
}

/// Why `path` (below `rebind::`) may not be named in `src/cli/`, if so.
fn refused(path: &str) -> Option<String> {
    // A type ends the path that is checked: `x::Type::Variant` is `Type` of `x`.
    let segments: Vec<&str> = path.split("::").collect();
    let last = segments
        .iter()
        .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
        .unwrap_or(segments.len() - 1);
    let module = segments[..last].join("::");
    let item = segments[last];
    let path = format!("{module}::{item}");
    let module = module.as_str();
    if module.is_empty() {
        return Some(
            "a module or function of the crate root: reach it through a command's entry point"
                .into(),
        );
    }
    if !MODULES.contains(&module) {
        return Some(format!(
            "module {module} does the work: reach it through a command's entry point"
        ));
    }
    let is_type = item.starts_with(|c: char| c.is_ascii_uppercase());
    if is_type || item == "self" || FUNCTIONS.contains(&item) || FUNCTIONS.contains(&path.as_str())
    {
        return None;
    }
    Some(format!("{item} is not an entry point (`run`, `diff`)"))
}

/// The code of a Rust file: line comments (doc comments too) removed.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // `://` is a URL in a string, not a comment.
            Some(i) if !l[..i].ends_with(':') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_command_line_reaches_the_library_only_through_entry_points() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut found = Vec::new();
    let mut named = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for path in library_paths(&code(&text)) {
            named += 1;
            if let Some(why) = refused(&path) {
                let file = p.file_name().unwrap().to_string_lossy();
                found.push(format!("src/cli/{file}: rebind::{path}: {why}"));
            }
        }
        for word in ["std::fs", "std::process", "git2::"] {
            if code(&text).contains(word) {
                let file = p.file_name().unwrap().to_string_lossy();
                found.push(format!(
                    "src/cli/{file}: {word}: the command line reads and runs nothing itself"
                ));
            }
        }
    }
    assert!(named > 10, "the cli's library paths were found ({named})");
    assert!(
        found.is_empty(),
        "domain logic in src/cli/ (move it into the command's library module):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_rule_finds_a_call_into_the_working_modules() {
    let text = "use rebind::commands::apply::{self, ApplyOptions, Prompt};\nuse rebind::{repo::git, output::{Exit, Sink}};\nfn f() { let r = rebind::repo::git::open(p); rebind::edit::write::write_all(&x); }\n// rebind::discover::walk::discover in a comment\n";
    let paths = library_paths(&code(text));
    assert_eq!(
        paths,
        [
            "commands::apply::self",
            "commands::apply::ApplyOptions",
            "commands::apply::Prompt",
            "repo::git",
            "output::Exit",
            "output::Sink",
            "repo::git::open",
            "edit::write::write_all",
        ]
    );
    let refused: Vec<&str> = paths
        .iter()
        .filter(|p| refused(p).is_some())
        .map(String::as_str)
        .collect();
    assert_eq!(
        refused,
        ["repo::git", "repo::git::open", "edit::write::write_all"]
    );
    assert!(refused_path_is_named("review::secret::spec"));
    assert!(!refused_path_is_named("review::secret::SecretOptions"));
    assert!(!refused_path_is_named("commands::scan::run"));
    assert!(!refused_path_is_named("repo::pr::Client::Gh"));
    assert!(refused_path_is_named("edit::write::Mode::Keep"));
    assert!(refused_path_is_named("output::text::plan_text"));
    // A struct literal is a path, not a `use` group.
    let literal = library_paths(&code(
        "let r = rebind::commands::cutover::Request {\n    cluster: None,\n};",
    ));
    assert_eq!(literal, ["commands::cutover::Request"]);
}

fn refused_path_is_named(path: &str) -> bool {
    refused(path).is_some()
}
