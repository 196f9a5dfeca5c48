//! The order in which `diff`, `apply` and `check` list files, the walk's
//! de-duplication of overlapping PATHs and the first look at each file,
//! through the binary.

use crate::common::*;
use std::path::Path;

fn app(name: &str, server: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  destination:\n    server: {server}\n"
    )
}

/// A tree whose names sort differently byte-wise (`apps-2/`, `apps.yaml`,
/// `apps/`: `-` and `.` sort below `/`) and component by component
/// (`apps/` first), each file holding `OLD` as a destination.
fn tree_with_names_below_slash() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, name) in [
        ("apps/a.yaml", "a"),
        ("apps-2/c.yaml", "c"),
        ("apps.yaml", "apps"),
        ("stage/d.yaml", "d"),
    ] {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, app(name, OLD)).unwrap();
    }
    dir
}

/// The paths named by `--- a/PATH` diff headers, in order.
fn diff_headers(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("--- a/"))
        .map(str::to_string)
        .collect()
}

/// The file names at the start of `PATH:LINE:COL: ...` lines, in order.
fn located_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(p, _)| p.to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect()
}

fn byte_sorted(v: &[String]) -> Vec<String> {
    let mut s = v.to_vec();
    s.sort();
    s
}

/// `diff`, `apply` and `check` list files sorted byte-wise by the name
/// shown, as `git diff` lists the same change (`apps-2/c.yaml`, `apps.yaml`,
/// `apps/a.yaml`), whatever order the walk found them in.
#[test]
fn diff_and_check_list_files_by_shown_name_as_before() {
    let dir = tree_with_names_below_slash();
    let d = dir.path();
    let expected = ["apps-2/c.yaml", "apps.yaml", "apps/a.yaml", "stage/d.yaml"];

    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let headers = diff_headers(&text);
    assert_eq!(byte_sorted(&headers), expected, "{text}");
    assert_eq!(headers, expected, "diff headers in byte order:\n{text}");

    // `check` on a retired endpoint names the files in the same order.
    std::fs::write(
        d.join(".rebind.yaml"),
        format!(
            "clusters:\n  prod:\n    endpoint: https://cp.new.example.com\n    retired: [{OLD}]\n"
        ),
    )
    .unwrap();
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let listed = located_lines(&text);
    assert_eq!(byte_sorted(&listed), expected, "{text}");
    assert_eq!(listed, expected, "check findings in byte order:\n{text}");
}

/// Overlapping PATHs in every order and spelling name each file once, and
/// the same PATHs give the same output however they are ordered.
#[test]
fn overlapping_paths_in_any_order_name_each_file_once() {
    let dir = tree_with_names_below_slash();
    let d = dir.path();
    let abs = d.canonicalize().unwrap();
    let abs_apps = abs.join("apps").display().to_string();
    let sets: Vec<Vec<String>> = vec![
        vec![".".into(), "apps".into()],
        vec!["apps".into(), ".".into()],
        vec!["apps/a.yaml".into(), "apps".into(), "apps/a.yaml".into()],
        vec!["./apps/".into(), abs_apps.clone(), "apps/../apps".into()],
        vec![
            abs.display().to_string(),
            "stage".into(),
            "apps.yaml".into(),
        ],
    ];
    let files = |args: &[String]| -> (Vec<String>, String) {
        let mut all = vec!["scan".to_string()];
        all.extend(args.iter().cloned());
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = rebind(d, &refs);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        (located_lines(&text), text)
    };
    for set in &sets {
        let (listed, text) = files(set);
        let mut once = listed.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), listed.len(), "{set:?}: a file twice:\n{text}");
        let mut reversed = set.clone();
        reversed.reverse();
        let (again, _) = files(&reversed);
        assert_eq!(listed, again, "{set:?} and its reverse differ");
    }
}

/// Upper-case hosts, a UTF-8 BOM, CRLF, escapes in double-quoted scalars
/// (`\x2e`, `\u002e`, `\U0000002E`, `\/`) and a base64 `data.server` all
/// reach the parser: each is rewritten by `diff`.
#[test]
fn endpoints_in_unusual_spellings_pass_the_first_look() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let esc = |with: &str| format!("\"{}\"", OLD.replace('.', with));
    let b64 = rebind::find::embedded::base64_encode(OLD);
    let files: Vec<(&str, String)> = vec![
        ("upper.yaml", app("u", &OLD.to_ascii_uppercase())),
        ("lower.yaml", app("l", &OLD.to_ascii_lowercase())),
        ("bom.yaml", format!("\u{feff}{}", app("b", OLD))),
        ("crlf.yaml", app("c", OLD).replace('\n', "\r\n")),
        ("esc_x.yaml", app("x", &esc("\\x2e"))),
        ("esc_u.yaml", app("u4", &esc("\\u002E"))),
        ("esc_U.yaml", app("u8", &esc("\\U0000002E"))),
        (
            "esc_slash.yaml",
            app("s", &format!("\"{}\"", OLD.replace('/', "\\/"))),
        ),
        (
            "secret.yaml",
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  name: cHJvZA==\n  server: {b64}\n"
            ),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(d.join(name), text).unwrap();
    }
    std::fs::write(d.join("empty.yaml"), "").unwrap();
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    for (name, _) in &files {
        assert!(
            diff_headers(&text).iter().any(|h| h == name),
            "{name} not rewritten:\n{text}"
        );
    }
    assert!(!text.contains("empty.yaml"), "{text}");
}

/// The output of a scan over a big file followed by many small ones is the
/// same run after run, and lists the big file first.
#[test]
fn a_big_file_first_keeps_the_order_of_the_small_ones_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut big = String::from("items:\n");
    for i in 0..40_000 {
        big.push_str(&format!("- name: item{i}\n  value: 'text {i}'\n"));
    }
    big.push_str(&format!("- server: {OLD}\n"));
    std::fs::create_dir(d.join("a")).unwrap();
    std::fs::write(d.join("a/000-big.yaml"), big).unwrap();
    for i in 0..300 {
        let sub = d.join(format!("a/d{}", i % 5));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("f{i:03}.yaml")),
            app(&format!("n{i}"), OLD),
        )
        .unwrap();
    }
    let run = |p: &Path| {
        let out = rebind(p, &["scan", "."]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        located_lines(&stdout(&out))
    };
    let first = run(d);
    assert_eq!(first.len(), 301);
    assert_eq!(first[0], "a/000-big.yaml");
    let mut sorted = first[1..].to_vec();
    sorted.sort();
    assert_eq!(first[1..], sorted[..]);
    assert_eq!(run(d), first);
}

/// The walk has one order (by canonical path) whether the PATHs overlap
/// (listed up front) or not (walked lazily): from a subdirectory, `scan ..`
/// and `scan .. .`, the same files, list them in the same order.
#[test]
fn a_redundant_overlapping_path_does_not_reorder_a_scan() {
    let dir = tree_with_names_below_slash();
    let apps = dir.path().join("apps");
    let scan = |args: &[&str]| {
        let out = rebind(&apps, args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        located_lines(&stdout(&out))
    };
    let alone = scan(&["scan", ".."]);
    let with_dot = scan(&["scan", "..", "."]);
    assert_eq!(alone.len(), 4, "{alone:?}");
    assert_eq!(alone, with_dot);
}
