//! Every error and warning of every `--format json` report carries a stable
//! `code` of the one table (`src/output/codes.rs`, docs/errors.md): every
//! element of every `errors`/`skipped`/`notes`/`findings`/`warnings` array
//! is an object with a known `code`, and each list of plain strings kept
//! for compatibility (`notes`, `after_merge_notes`, `live_differences`,
//! `existing`) is mirrored, entry for entry and in order, in the `warnings`
//! of the same object. Asserts codes, never wording.

use crate::common::*;
use rebind::output::codes::ALL;
use serde_json::Value;

/// Arrays whose elements are errors or warnings.
const CODED: [&str; 5] = ["errors", "skipped", "notes", "findings", "warnings"];
/// Lists of plain strings kept as they were: mirrored in `warnings`.
const MIRRORED: [&str; 4] = ["notes", "after_merge_notes", "live_differences", "existing"];

/// Walks `v`, checking each coded array; returns how many entries it checked.
fn walk(v: &Value, at: &str) -> usize {
    let mut n = 0;
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let here = format!("{at}.{k}");
                if let Some(items) = child.as_array() {
                    let strings = !items.is_empty() && items.iter().all(Value::is_string);
                    if strings && MIRRORED.contains(&k.as_str()) {
                        let mirror: Vec<&Value> = m["warnings"]
                            .as_array()
                            .unwrap_or_else(|| panic!("{here}: strings with no `warnings`"))
                            .iter()
                            .filter(|w| w["field"] == k.as_str())
                            .collect();
                        let messages: Vec<&Value> = mirror.iter().map(|w| &w["message"]).collect();
                        assert_eq!(messages, items.iter().collect::<Vec<_>>(), "{here}");
                        n += items.len();
                    } else if CODED.contains(&k.as_str()) || MIRRORED.contains(&k.as_str()) {
                        for (i, e) in items.iter().enumerate() {
                            let code = e["code"]
                                .as_str()
                                .unwrap_or_else(|| panic!("{here}[{i}] has no code: {e}"));
                            assert!(
                                ALL.iter().any(|c| c.id == code),
                                "{here}[{i}]: code {code:?} is not in the table"
                            );
                            n += 1;
                        }
                    }
                }
                n += walk(child, &here);
            }
        }
        Value::Array(items) => {
            for (i, e) in items.iter().enumerate() {
                n += walk(e, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
    n
}

fn report(cwd: &std::path::Path, args: &[&str]) -> (Option<i32>, Value, usize) {
    let out = rebind(cwd, args);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}\n{}", stdout(&out), stderr(&out)));
    let n = walk(&v, "$");
    (out.status.code(), v, n)
}

#[test]
fn every_warning_and_error_of_every_json_report_on_the_example_has_a_code() {
    let dir = temp_fixture();
    let d = dir.path();
    let mut checked = 0;
    for args in [
        vec!["scan", "--format", "json"],
        vec!["diff", "--format", "json", "--from", OLD, "--to", NEW],
        vec!["feeders", "--format", "json"],
        vec!["identity", "--format", "json"],
        vec![
            "secret", "--name", "prod", "--server", NEW, "--format", "json",
        ],
        vec![
            "secret", "--name", "prod", "--server", OLD, "--format", "json",
        ],
    ] {
        let (code, _, n) = report(d, &args);
        assert!(code.is_some_and(|c| c <= 1), "{args:?}: exit {code:?}");
        checked += n;
    }
    // The plan report's notes and after-merge notes are coded, each kind
    // with its own code.
    let (_, v, _) = report(d, &["diff", "--format", "json", "--from", OLD, "--to", NEW]);
    let codes: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"review-note"), "{codes:?}");
    assert!(
        codes.contains(&"cluster-secret-needed") || codes.contains(&"registration-credentials"),
        "{codes:?}"
    );
    let (code, _, n) = report(
        d,
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--format",
            "json",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    );
    assert_eq!(code, Some(0));
    checked += n;
    let (code, _, n) = report(d, &["init", "--format", "json"]);
    assert!(code.is_some_and(|c| c <= 1), "init: exit {code:?}");
    checked += n;
    // `check` reads the config `init` wrote.
    let (code, _, n) = report(d, &["check", "--format", "json"]);
    assert!(code.is_some_and(|c| c <= 1), "check: exit {code:?}");
    checked += n;
    assert!(checked > 10, "only {checked} entries checked");
}

#[test]
fn every_error_of_a_refusal_in_json_has_a_code() {
    let dir = temp_fixture();
    let d = dir.path();
    // Unknown --from, a usage error, an unreadable --live dump, a bad describe file.
    let other = "https://FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF.gr7.ap-northeast-2.eks.amazonaws.com";
    std::fs::write(d.join("bad.json"), "{not json").unwrap();
    for args in [
        vec!["diff", "--format", "json", "--from", other, "--to", NEW],
        vec![
            "apply",
            "--yes",
            "--no-commit",
            "--format",
            "json",
            "--from",
            "not a url",
            "--to",
            NEW,
        ],
        vec![
            "diff",
            "--format",
            "json",
            "--from",
            OLD,
            "--to",
            NEW,
            "--live",
            "missing.json",
        ],
        vec!["identity", "--format", "json", "--describe-to", "bad.json"],
    ] {
        let (code, v, n) = report(d, &args);
        assert_eq!(code, Some(2), "{args:?}: {v}");
        assert!(
            v["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{args:?}: {v}"
        );
        assert!(n > 0, "{args:?}");
    }
}
