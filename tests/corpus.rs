//! Runs every case of the YAML test suite (`../shared/corpus/yaml-test-suite`)
//! through the locator and the rewrite planner: no panic on any input, and a
//! valid case that holds no endpoint comes out of a planned rebind byte-identical.

use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};
use std::path::{Path, PathBuf};

/// An inventory of one suite case's text, as the pipeline would build it.
fn one_file(
    case: &Path,
    name: &str,
    text: &str,
    located: Result<locate::Located, locate::ParseError>,
) -> Inventory {
    Inventory {
        sources: vec![Source {
            entry: Entry {
                path: case.join("in.yaml"),
                rel: name.to_string(),
                role: Role::Yaml,
            },
            text: text.into(),
            located,
        }],
        skipped: vec![],
    }
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/yaml-test-suite");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else if e.file_name() == "in.yaml" {
                out.push(dir.clone());
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 300,
        "yaml-test-suite not found under {}",
        root.display()
    );
    out
}

#[test]
fn every_suite_case_locates_without_panic_and_plans_no_change() {
    let from = Endpoint::parse(
        "--from",
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com",
    )
    .unwrap();
    let to = Endpoint::parse(
        "--to",
        "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com",
    )
    .unwrap();
    let hosts = vec![from.host.to_ascii_lowercase()];
    let (mut valid, mut invalid, mut rejected_valid, mut accepted_invalid) =
        (0, 0, Vec::new(), Vec::new());
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(case.join("in.yaml")) else {
            continue;
        };
        let is_error = case.join("error").exists();
        let located = std::panic::catch_unwind(|| locate::locate_yaml(&text, &hosts, false))
            .unwrap_or_else(|_| panic!("{name}: locate panicked"));
        match (&located, is_error) {
            (Ok(_), false) => valid += 1,
            (Err(_), true) => invalid += 1,
            (Err(e), false) => {
                rejected_valid.push(format!("{name}: {}:{}: {}", e.line, e.column, e.message))
            }
            (Ok(_), true) => accepted_invalid.push(name.clone()),
        }
        let inv = one_file(&case, &name, &text, located);
        let plan = std::panic::catch_unwind(|| rewrite::plan(&inv, &from, &to))
            .unwrap_or_else(|_| panic!("{name}: plan panicked"));
        assert!(
            plan.files.is_empty() && plan.errors.is_empty(),
            "{name}: a case without the endpoint was planned for change"
        );
    }
    println!(
        "yaml-test-suite: {valid} valid cases parsed, {invalid} invalid cases rejected cleanly, {} valid cases the parser rejects, {} invalid cases the parser accepts",
        rejected_valid.len(),
        accepted_invalid.len()
    );
    for r in &rejected_valid {
        println!("  parser rejects valid case {r}");
    }
    assert!(valid > 250, "only {valid} valid cases parsed");
}

/// Scalars of a case with their byte offset in the source: (value, style, offset).
fn scalars(text: &str) -> Option<Vec<(String, yaml_rust2::scanner::TScalarStyle, usize)>> {
    use yaml_rust2::parser::{Event, Parser};
    let index = locate::LineIndex::new(text);
    let mut p = Parser::new_from_str(text);
    let mut out = Vec::new();
    loop {
        let (ev, m) = p.next_token().ok()?;
        match ev {
            Event::StreamEnd => return Some(out),
            Event::Scalar(v, style, ..) => {
                out.push((v, style, index.offset(text, m.line(), m.col())?));
            }
            _ => {}
        }
    }
}

/// For every valid case, puts the old endpoint in place of up to three
/// one-word scalars (any style), then rebinds it: the plan must find exactly
/// those, and the result must equal the variant with only the endpoint swapped.
#[test]
fn endpoints_injected_into_suite_cases_are_rebound_byte_exact() {
    use yaml_rust2::scanner::TScalarStyle;
    let old = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
    let new = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
    let from = Endpoint::parse("--from", old).unwrap();
    let to = Endpoint::parse("--to", new).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase()];
    let (mut variants, mut failures) = (0, Vec::new());
    for case in cases() {
        if case.join("error").exists() {
            continue;
        }
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(case.join("in.yaml")) else {
            continue;
        };
        if text.starts_with('\u{feff}') {
            continue;
        }
        let Some(sc) = scalars(&text) else { continue };
        // One-word scalars whose bytes sit literally at the marker (after a quote).
        let mut picks = Vec::new();
        for (v, style, off) in &sc {
            let word = v.trim_end_matches('\n');
            if word.is_empty() || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
                continue;
            }
            let at = match style {
                TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted => off + 1,
                _ => *off,
            };
            if text.get(at..at + word.len()) == Some(word)
                && !text
                    .as_bytes()
                    .get(at + word.len())
                    .is_some_and(|b| b.is_ascii_alphanumeric())
            {
                picks.push((at, word.len()));
            }
        }
        picks.dedup_by_key(|p| p.0);
        if picks.is_empty() {
            continue;
        }
        // Variant: the first, middle and last pick.
        let chosen: Vec<_> = [0, picks.len() / 2, picks.len() - 1]
            .into_iter()
            .map(|i| picks[i])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut variant = text.clone();
        for (at, len) in chosen.iter().rev() {
            variant.replace_range(*at..*at + *len, old);
        }
        // The variant must still be valid YAML with the endpoint as those scalars.
        let Some(vsc) = scalars(&variant) else {
            continue;
        };
        let injected = vsc
            .iter()
            .filter(|(v, ..)| v.trim_end_matches('\n') == old)
            .count();
        if injected != chosen.len() {
            continue;
        }
        variants += 1;
        let located = std::panic::catch_unwind(|| locate::locate_yaml(&variant, &hosts, true))
            .unwrap_or_else(|_| panic!("{name}: locate panicked on the variant"));
        let inv = one_file(&case, &name, &variant, located);
        let plan = rewrite::plan(&inv, &from, &to);
        let expected = variant.replace(old, new);
        match (plan.errors.first(), plan.files.first()) {
            (Some(e), _) => failures.push(format!("{name}: {e}")),
            (None, None) => failures.push(format!("{name}: nothing planned")),
            (None, Some(f)) => {
                if f.changes.len() != chosen.len() || *f.new != *expected {
                    failures.push(format!(
                        "{name}: planned {} of {} or wrong bytes",
                        f.changes.len(),
                        chosen.len()
                    ));
                }
            }
        }
    }
    println!(
        "yaml-test-suite variants: {variants} valid cases with endpoints injected, {} failures",
        failures.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    assert!(variants > 150, "only {variants} variants");
    assert!(failures.is_empty(), "{} failures", failures.len());
}
