//! Runs every case of the YAML test suite (`../shared/corpus/yaml-test-suite`)
//! through the locator and the rewrite planner: no panic on any input, and a
//! valid case that holds no endpoint comes out of a planned rebind byte-identical.

use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};
use std::path::{Path, PathBuf};

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
        let located = std::panic::catch_unwind(|| locate::locate_yaml(&text, &hosts))
            .unwrap_or_else(|_| panic!("{name}: locate panicked"));
        match (&located, is_error) {
            (Ok(_), false) => valid += 1,
            (Err(_), true) => invalid += 1,
            (Err(e), false) => {
                rejected_valid.push(format!("{name}: {}:{}: {}", e.line, e.column, e.message))
            }
            (Ok(_), true) => accepted_invalid.push(name.clone()),
        }
        let inv = Inventory {
            sources: vec![Source {
                entry: Entry {
                    path: case.join("in.yaml"),
                    rel: name.clone(),
                    role: Role::Yaml,
                },
                text: text.clone(),
                located,
            }],
            skipped: vec![],
        };
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
