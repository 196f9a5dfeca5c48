//! One report: a command returns its report (`rebind::output::Done`) and
//! one caller renders it (`output::report::rendered`, from the binary's
//! entry through `conclude`). So no file of `src/commands/` calls the
//! renderer of `output::report` (`report::render`, or a `render` imported
//! from it), and every command's entry point (`pub fn run`, `pub fn
//! diff`) returns `Done`. A command may still show progress while it runs
//! (`report::progress`); `scan` streams its report while it reads
//! (`report::scan`, the documented exception); `workspace` reads each
//! repository's `apply` report back (`report::rendered` into its own
//! sink). Comments and strings are blanked first, so a doc sentence about
//! `report::render` is not a call.

use super::structure::{mask, rust_files};
use std::path::Path;

/// The functions of `output::report` a command may call, and where.
const ALLOWED: &[(&str, &str, &str)] = &[
    ("progress", "", "progress shown while the run goes on"),
    (
        "scan",
        "src/commands/scan.rs",
        "scan's report is written while the files are read (flat memory)",
    ),
    (
        "rendered",
        "src/commands/workspace.rs",
        "workspace reads each repository's apply report back as JSON",
    ),
];

/// `code` (masked) with the whitespace around every `::` removed.
fn joined(code: &str) -> String {
    let mut out = String::new();
    for (i, part) in code.split("::").enumerate() {
        if i > 0 {
            out.truncate(out.trim_end().len());
            out.push_str("::");
            out.push_str(part.trim_start());
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Where `code` (masked) renders a report itself, as the calls it makes:
/// `report::NAME(` for a NAME not allowed in `file`, and a bare
/// `render(` / `render_parts(` (a renderer imported by name; a
/// `json::render(` that writes one document to a string is a path, and
/// `x.render(` a method, neither a bare call).
fn own_renders(file: &str, code: &str) -> Vec<String> {
    let code = joined(code);
    let mut found = Vec::new();
    for (i, _) in code.match_indices("report::") {
        // `report` as a whole word (not `myreport::`).
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + "report::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let called = rest[name.len()..].trim_start().starts_with('(');
        let allowed = ALLOWED
            .iter()
            .any(|(n, f, _)| *n == name && (f.is_empty() || *f == file));
        if called && !allowed {
            found.push(format!("report::{name}("));
        }
        // `use ...report::{render, ...}` brings the renderer in by name.
        if name.is_empty() && rest.starts_with('{') {
            let group = &rest[..rest.find('}').unwrap_or(rest.len())];
            for item in group.trim_start_matches('{').split(',') {
                let item = item.trim();
                if item == "render" || item == "render_parts" {
                    found.push(format!("use report::{{{item}}}"));
                }
            }
        }
    }
    for name in ["render", "render_parts"] {
        for (i, _) in code.match_indices(name) {
            let before = code[..i].chars().next_back();
            let after = &code[i + name.len()..];
            let bare = !before.is_some_and(|c| c.is_alphanumeric() || "_:.".contains(c));
            if bare && after.trim_start().starts_with('(') && !code[..i].ends_with("fn ") {
                found.push(format!("{name}("));
            }
        }
    }
    found
}

/// The command modules: every file of `src/commands/`, as `src/commands/x.rs`,
/// and its code (masked) up to its unit tests (a test may render what it
/// runs, as the entry would).
fn command_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/commands"), &mut files);
    assert!(files.len() > 5, "src/commands/ holds the commands");
    files
        .into_iter()
        .map(|f| {
            let shown = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut code: String = mask(&std::fs::read_to_string(&f).unwrap())
                .into_iter()
                .collect();
            if let Some(tests) = code.find("#[cfg(test)]") {
                code.truncate(tests);
            }
            (shown, code)
        })
        .collect()
}

#[test]
fn no_command_renders_its_own_report() {
    let mut found = Vec::new();
    for (file, code) in command_files() {
        for call in own_renders(&file, &code) {
            found.push(format!("{file}: {call}"));
        }
    }
    assert!(
        found.is_empty(),
        "a command renders its report itself; return it (output::Reported) for the entry to render:\n{}",
        found.join("\n")
    );
}

/// The return type of every `pub fn NAME(` in `code` (masked), for NAME
/// in `names`: the text between the parameters' `)` and the body's `{`.
fn entry_returns<'c>(code: &'c str, names: &[&str]) -> Vec<(String, &'c str)> {
    let mut out = Vec::new();
    for name in names {
        let head = format!("pub fn {name}(");
        for (i, _) in code.match_indices(&head) {
            let rest = &code[i + head.len()..];
            // The parameters close at the first `)` at depth 0.
            let mut depth = 1;
            let Some(close) = rest.char_indices().find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(j)
            }) else {
                continue;
            };
            let after = &rest[close + 1..];
            let sig = &after[..after.find('{').unwrap_or(after.len())];
            out.push((name.to_string(), sig.trim()));
        }
    }
    out
}

#[test]
fn every_command_entry_returns_its_report() {
    let mut entries = 0;
    let mut bad = Vec::new();
    for (file, code) in command_files() {
        for (name, returns) in entry_returns(&code, &["run", "diff"]) {
            entries += 1;
            if returns != "-> Done" {
                bad.push(format!("{file}: pub fn {name}(..) {returns}"));
            }
        }
    }
    // scan, diff, apply, secret, init, check, feeders, identity, workspace.
    assert!(entries >= 9, "only {entries} command entry points found");
    assert!(
        bad.is_empty(),
        "a command's entry point returns no report; return output::Done:\n{}",
        bad.join("\n")
    );
}

/// The readers themselves, on made-up code: what renders a report, what
/// only writes a document to a string, and what returns what.
#[test]
fn the_readers_find_own_renders_and_entry_returns() {
    let code = "report::render(sink, f, &r);\noutput::report :: render_parts(sink, f, t, j);\nuse crate::output::report::{self, render};\nrender(sink, f, &r);\nsink.out(&json::render(&r));\nsecret::render(&spec);\nreport::progress(sink, f, |s, a| {});\nreport::rendered(sink, f, done);\nfn render(x: u8) {}\npage.render(&mut buf);\nlet r = report::MACHINE;\n";
    assert_eq!(
        own_renders("src/commands/x.rs", code),
        [
            "report::render(",
            "report::render_parts(",
            "use report::{render}",
            "report::rendered(",
            "render("
        ]
    );
    assert_eq!(
        own_renders("src/commands/workspace.rs", "report::rendered(s, f, d);"),
        Vec::<String>::new()
    );
    let code = "pub fn run(a: &A, sink: &mut Sink) -> Outcome {\n}\npub fn diff(o: &(u8, u8)) -> Done {\n}\npub fn runner() -> u8 { 0 }\n";
    assert_eq!(
        entry_returns(code, &["run", "diff"]),
        [
            ("run".to_string(), "-> Outcome"),
            ("diff".to_string(), "-> Done")
        ]
    );
}
