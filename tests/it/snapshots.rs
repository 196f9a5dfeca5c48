//! Snapshots of the CLI's output on `testdata/app-of-apps` (files in `snapshots/`).

use crate::common::*;

#[test]
fn scan_text() {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["scan"]);
    assert_eq!(out.status.code(), Some(0));
    check("scan_text", &stdout(&out));
}

#[test]
fn scan_json() {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["scan", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    // The report is streamed compactly; pretty-printed here to be reviewable.
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    check("scan_json", &serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn diff_text() {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1));
    // CRLF lines of the fixture are shown as they are; make them visible here.
    check("diff_text", &normalise(&stdout(&out), dir.path()));
}

#[test]
fn diff_json_lists_files_and_changes() {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["diff", "--json", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["change_count"], 19);
    assert_eq!(v["file_count"], 8);
    assert_eq!(v["from"], OLD);
    assert_eq!(v["to"], NEW);
    let not = v["mentions"].as_array().unwrap();
    let kinds: Vec<&str> = not.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["text", "comment"]);
}
