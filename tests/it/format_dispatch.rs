//! One `match` on the output format: `src/output/report.rs` is the only
//! file of `src/` that names a `Format::` variant (a `match` arm, an
//! `if format == Format::Json`, a `matches!`), so a command asks its
//! report how to show itself instead of deciding per format. The command
//! line's `--format` flag is where a format is chosen, so its definition
//! (`src/cli/args.rs`) may name the variants it maps its values to.
//! Comments and strings are blanked first (the masking of
//! [`super::structure::mask`]), so a doc sentence about `Format::Json` is
//! not a use. (`format == x` does not compile: `Format` has no
//! `PartialEq`.)

use super::structure::{mask, rust_files};
use std::path::Path;

/// The files that may name a variant of the output format.
const DISPATCH: &[&str] = &["src/output/report.rs", "src/cli/args.rs"];

/// Where `code` (masked) names the format's variants or renames the type
/// (`Format as F` would hide the next `F::Json`): 1-based line numbers.
fn uses(code: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let words: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
        let named = words.match_indices("Format").any(|(i, _)| {
            let before = words[..i].chars().next_back();
            let after = &words[i + "Format".len()..];
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && (after.trim_start().starts_with("::") || after.starts_with(" as "))
        });
        if named {
            out.push(n + 1);
        }
    }
    out
}

#[test]
fn only_the_dispatch_names_a_format_variant() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let shown = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if DISPATCH.contains(&shown.as_str()) {
            continue;
        }
        let code: String = mask(&std::fs::read_to_string(&file).unwrap())
            .into_iter()
            .collect();
        found.extend(uses(&code).into_iter().map(|l| format!("{shown}:{l}")));
    }
    assert!(
        found.is_empty(),
        "the output format is told apart outside {}; ask the report (output::report) instead:\n{}",
        DISPATCH[0],
        found.join("\n")
    );
}

#[test]
fn every_dispatch_file_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in DISPATCH {
        assert!(root.join(f).is_file(), "{f} is gone: update DISPATCH");
    }
}

/// The reader of uses finds the forms a format is told apart by, and not
/// a longer name that ends in `Format` or the type named alone.
#[test]
fn the_reader_finds_variants_comparisons_and_renames() {
    let code = "match f {\n    Format::Json => 1,\n}\nif f == output::Format::Text {}\nuse crate::output::Format as F;\nlet x: Format = y;\nReportFormat::Sarif\nfn get(&self) -> Format {\nmatches!(f, Format :: Github)\n";
    assert_eq!(uses(code), [2, 4, 5, 9]);
}
