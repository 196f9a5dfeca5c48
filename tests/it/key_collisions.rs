//! A rewrite that makes two keys of one mapping equal is refused, naming
//! both keys as `path:line:column`, whatever reads the file (YAML, or JSON
//! only); nothing is written.

use crate::common::*;
use std::fs;

const FROM: &str = "https://old.example.com:6443";
const TO: &str = "https://new.example.com:6443";

/// Runs `args` on a tree holding `app.yaml` (a destination on `FROM`) and
/// `name` with `text`; returns the exit code, stdout + stderr, and whether
/// every file is as it was.
fn run(name: &str, text: &str, args: &[&str]) -> (Option<i32>, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {FROM}\n"
    );
    fs::write(dir.path().join("app.yaml"), &app).unwrap();
    fs::write(dir.path().join(name), text).unwrap();
    let before = tree(dir.path());
    let mut all = vec!["apply", "--no-commit", "--yes", "--from", FROM, "--to", TO];
    all.extend_from_slice(args);
    let out = rebind(dir.path(), &all);
    let same = tree(dir.path()) == before;
    (out.status.code(), stdout(&out) + &stderr(&out), same)
}

fn refused_naming(name: &str, text: &str, args: &[&str], keys: [(&str, &str); 2]) {
    let (code, out, same) = run(name, text, args);
    assert_eq!(code, Some(2), "{text}\n{out}");
    assert!(same, "{text}: something was written\n{out}");
    assert!(out.contains("two keys of one mapping equal"), "{out}");
    for (key, at) in keys {
        assert!(
            out.contains(&format!("{key:?} ({name}:{at})")),
            "{text}: {key} at {at}\n{out}"
        );
    }
}

#[test]
fn keys_that_differ_only_in_case_are_refused_in_yaml() {
    let text = "kind: ConfigMap\nmetadata: {name: m}\ndata:\n  https://OLD.example.com:6443: a\n  https://old.example.com:6443: b\n";
    refused_naming(
        "m.yaml",
        text,
        &[],
        [
            ("https://OLD.example.com:6443", "4:3"),
            ("https://old.example.com:6443", "5:3"),
        ],
    );
    // In a flow mapping on one line, columns are the old text's.
    let text = "kind: ConfigMap\nmetadata: {name: m}\ndata: {\"https://OLD.example.com:6443\": a, https://old.example.com.:6443: b}\n";
    refused_naming(
        "m.yaml",
        text,
        &[],
        [
            ("https://OLD.example.com:6443", "3:8"),
            ("https://old.example.com.:6443", "3:43"),
        ],
    );
}

#[test]
fn an_old_and_a_new_keyed_entry_under_allow_merge_are_refused() {
    let text = "kind: ConfigMap\nmetadata: {name: m}\ndata:\n  https://old.example.com:6443: a\n  # the new cluster\n  https://new.example.com:6443: b\n";
    refused_naming(
        "m.yaml",
        text,
        &["--allow-merge"],
        [
            ("https://old.example.com:6443", "4:3"),
            ("https://new.example.com:6443", "6:3"),
        ],
    );
}

#[test]
fn the_json_fallback_refuses_the_same_way() {
    // A surrogate pair: only the JSON reader reads it.
    let text = "{\"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"\\ud83d\\ude00\"},\n \"data\": {\"https://OLD.example.com:6443\": \"a\",\n  \"https://old.example.com:6443\": \"b\"}}\n";
    refused_naming(
        "m.json",
        text,
        &[],
        [
            ("https://OLD.example.com:6443", "2:11"),
            ("https://old.example.com:6443", "3:3"),
        ],
    );
}

#[test]
fn keys_in_different_mappings_or_already_equal_are_fine() {
    // Equal keys in two mappings are no collision.
    let text = "kind: ConfigMap\nmetadata: {name: m}\na:\n  https://OLD.example.com:6443: a\nb:\n  https://new.example.com:6443: b\n";
    let (code, out, same) = run("m.yaml", text, &["--allow-merge"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!same);
    // A value equal to a key is no collision either.
    let text = "kind: ConfigMap\nmetadata: {name: m}\ndata:\n  https://old.example.com:6443: https://new.example.com:6443\n";
    let (code, out, _) = run("m.yaml", text, &["--allow-merge"]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn keys_inside_an_embedded_document_are_refused_the_same_way() {
    // Helm values in a block scalar: file lines and columns of each key.
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: h}\nspec:\n  source:\n    helm:\n      values: |\n        endpoints:\n          https://old.example.com:6443: a\n          https://OLD.example.com:6443: b\n";
    refused_naming(
        "h.yaml",
        text,
        &[],
        [
            ("https://old.example.com:6443", "9:11"),
            ("https://OLD.example.com:6443", "10:11"),
        ],
    );
    // A JSON document in a one-line string, old and new keys.
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  config: '{\"https://old.example.com:6443\": 1, \"https://new.example.com:6443\": 2}'\n";
    refused_naming(
        "c.yaml",
        text,
        &["--allow-merge"],
        [
            ("https://old.example.com:6443", "5:13"),
            ("https://new.example.com:6443", "5:48"),
        ],
    );
}

#[test]
fn keys_written_with_escapes_collide_by_their_decoded_value() {
    let text = "kind: ConfigMap\nmetadata: {name: m}\ndata:\n  \"https://old\\x2eexample.com:6443\": a\n  https://OLD.example.com:6443: b\n";
    refused_naming(
        "m.yaml",
        text,
        &[],
        [
            ("https://old.example.com:6443", "4:3"),
            ("https://OLD.example.com:6443", "5:3"),
        ],
    );
}
