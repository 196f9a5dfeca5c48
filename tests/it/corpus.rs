//! Runs every case of the YAML test suite (vendored in `testdata/yaml-test-suite`:
//! each case's `in.yaml` and `error` marker, MIT, see its `License`)
//! through the locator and the rewrite planner: no panic on any input, and a
//! valid case that holds no endpoint comes out of a planned rebind byte-identical.

use rebind::discover::walk::{Entry, Role};
use rebind::find::inventory::{Inventory, Source};
use rebind::find::locate;
use rebind::text::endpoint::Endpoint;
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
        files: 1,
    }
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/yaml-test-suite");
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
        let plan = std::panic::catch_unwind(|| rebind::review::plan::plan(&inv, &from, &to))
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

const OLD: &str = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW: &str = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

/// Rebinds a variant that holds `expected` endpoint scalars. It must plan
/// exactly those, and the result must be the variant with only the endpoint
/// swapped (the planner has already re-parsed it and compared every event).
fn rebind_variant(case: &Path, name: &str, variant: &str, expected: usize) -> Result<(), String> {
    let from = Endpoint::parse("--from", OLD).unwrap();
    let to = Endpoint::parse("--to", NEW).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase()];
    let located = std::panic::catch_unwind(|| locate::locate_yaml(variant, &hosts, true))
        .map_err(|_| format!("{name}: locate panicked"))?;
    let inv = one_file(case, name, variant, located);
    let plan = std::panic::catch_unwind(|| rebind::review::plan::plan(&inv, &from, &to))
        .map_err(|_| format!("{name}: plan panicked"))?;
    match (plan.errors.first(), plan.files.first()) {
        (Some(e), _) => Err(format!("{name}: {e}")),
        (None, None) => Err(format!("{name}: nothing planned")),
        (None, Some(f)) if f.changes.len() != expected => {
            Err(format!("{name}: planned {} of {expected}", f.changes.len()))
        }
        (None, Some(f)) if *f.new != *variant.replace(OLD, NEW) => {
            Err(format!("{name}: wrong bytes"))
        }
        _ => Ok(()),
    }
}

/// Counts of one run over the suite.
#[derive(Default)]
struct Tally {
    cases: usize,
    variants: usize,
    by_style: std::collections::BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn run(&mut self, style: &'static str, case: &Path, name: &str, variant: &str) {
        // Only variants that are still valid YAML with the endpoint where we put it count.
        let Some(sc) = scalars(variant) else { return };
        let expected = sc
            .iter()
            .filter(|(v, ..)| v.trim_end_matches('\n') == OLD)
            .count();
        if expected == 0 || variant.matches(OLD).count() != expected {
            return;
        }
        self.variants += 1;
        *self.by_style.entry(style).or_default() += 1;
        if let Err(e) = rebind_variant(case, &format!("{name} ({style})"), variant, expected) {
            self.failures.push(e);
        }
    }
}

/// For every valid case, puts the old endpoint into the document where YAML
/// allows a scalar, in every style: in place of up to three one-word scalars
/// as they are written (keys too), as single- and double-quoted scalars, and
/// in an added document as literal, folded and flow scalars. Every variant must
/// be rebound exactly, changing only the endpoint's bytes.
#[test]
fn endpoints_injected_into_suite_cases_are_rebound_byte_exact() {
    use yaml_rust2::scanner::TScalarStyle;
    let mut t = Tally::default();
    for case in cases() {
        if case.join("error").exists() {
            continue;
        }
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(case.join("in.yaml")) else {
            continue;
        };
        let Some(sc) = scalars(&text) else { continue };
        t.cases += 1;
        // One-word scalars whose bytes sit literally at the marker (after a quote).
        let mut picks = Vec::new();
        for (v, style, off) in &sc {
            let word = v.trim_end_matches('\n');
            if word.is_empty() || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
                continue;
            }
            let quoted = matches!(
                style,
                TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted
            );
            let at = off + usize::from(quoted);
            let after = text.as_bytes().get(at + word.len());
            if text.get(at..at + word.len()) == Some(word)
                && !after.is_some_and(|b| b.is_ascii_alphanumeric())
            {
                picks.push((at, word.len(), *style == TScalarStyle::Plain));
            }
        }
        picks.dedup_by_key(|p| p.0);
        if !picks.is_empty() {
            let chosen: std::collections::BTreeSet<_> = [0, picks.len() / 2, picks.len() - 1]
                .into_iter()
                .map(|i| picks[i])
                .collect();
            let mut variant = text.clone();
            for (at, len, _) in chosen.iter().rev() {
                variant.replace_range(*at..*at + *len, OLD);
            }
            t.run("as written", &case, &name, &variant);
            if let Some(&(at, len, _)) = picks.iter().find(|p| p.2) {
                for (style, q) in [("single-quoted", '\''), ("double-quoted", '"')] {
                    let mut v = text.clone();
                    v.replace_range(at..at + len, &format!("{q}{OLD}{q}"));
                    t.run(style, &case, &name, &v);
                }
            }
        }
        let tail = format!(
            "\n---\nliteral: |\n  {OLD}\nfolded: >-\n  {OLD}\nflow: [{OLD}, {{k: '{OLD}'}}]\n"
        );
        let sep = if text.ends_with('\n') || text.is_empty() {
            ""
        } else {
            "\n"
        };
        t.run(
            "literal, folded, flow",
            &case,
            &name,
            &format!("{text}{sep}{tail}"),
        );
    }
    println!(
        "yaml-test-suite variants: {} valid cases, {} variants with endpoints injected, {} failures",
        t.cases,
        t.variants,
        t.failures.len()
    );
    for (style, n) in &t.by_style {
        println!("  {n:>4} variants {style}");
    }
    for f in &t.failures {
        println!("  FAILED {f}");
    }
    assert!(t.variants > 500, "only {} variants", t.variants);
    assert!(t.failures.is_empty(), "{} failures", t.failures.len());
}

/// Invalid cases with the endpoint added: a clean error naming the file, never
/// a panic, never a planned write.
#[test]
fn invalid_cases_holding_the_endpoint_are_refused() {
    let from = Endpoint::parse("--from", OLD).unwrap();
    let to = Endpoint::parse("--to", NEW).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase()];
    let (mut refused, mut now_valid) = (0, 0);
    for case in cases() {
        if !case.join("error").exists() {
            continue;
        }
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(case.join("in.yaml")) else {
            continue;
        };
        let variant = format!("{text}\nserver: {OLD}\n");
        let located = std::panic::catch_unwind(|| locate::locate_yaml(&variant, &hosts, true))
            .unwrap_or_else(|_| panic!("{name}: locate panicked"));
        if located.is_ok() {
            now_valid += 1; // the appended line repaired it: not an invalid input any more
            continue;
        }
        let inv = one_file(&case, &name, &variant, located);
        let plan = rebind::review::plan::plan(&inv, &from, &to);
        assert!(
            plan.files.is_empty(),
            "{name}: a write was planned for invalid YAML"
        );
        assert_eq!(
            plan.errors.len(),
            1,
            "{name}: the file is not named as an error"
        );
        assert_eq!(plan.errors[0].rel, name);
        refused += 1;
    }
    println!("yaml-test-suite invalid cases with the endpoint: {refused} refused cleanly, {now_valid} became valid");
    assert!(refused > 80);
}
