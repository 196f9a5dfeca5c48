//! Nothing silent: endpoints behind escapes are found, rewritten in place or
//! refused by position; files that may hold the endpoint but cannot be read
//! stop a rebind and fail `check`.

use crate::common::*;
use std::path::Path;

fn app(name: &str, server_line: &str) -> String {
    format!("kind: Application\nmetadata: {{name: {name}}}\nspec:\n  destination:\n    server: {server_line}\n")
}

fn write(d: &Path, rel: &str, text: &str) {
    std::fs::write(d.join(rel), text).unwrap();
}

#[test]
fn escaped_endpoints_are_found_and_rewritten_in_the_same_quoting() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `\u0068ttps`, `\x2e` in the host: every YAML reader sees OLD.
    write(
        d,
        "a.yaml",
        &app("a", &format!("\"\\u0068ttps://{OLD_HOST}\"")),
    );
    let dotted = OLD_HOST.replacen('.', "\\x2e", 1);
    write(d, "b.yaml", &app("b", &format!("\"https://{dotted}\"")));
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["change_count"], 2);
    let out = rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for f in ["a.yaml", "b.yaml"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap();
        assert!(
            text.contains(&format!("server: \"{NEW}\"\n")),
            "{f}: {text}"
        );
    }
}

#[test]
fn an_endpoint_split_by_an_escaped_line_break_is_refused_by_position() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (head, tail) = OLD_HOST.split_at(OLD_HOST.find(".ap-").unwrap() + 1);
    write(
        d,
        "c.yaml",
        &app("c", &format!("\"https://{head}\\\n      {tail}\"")),
    );
    let before = tree(d);
    // scan sees the endpoint whole, never fragments.
    let v: serde_json::Value =
        serde_json::from_slice(&rebind(d, &["scan", "--json"]).stdout).unwrap();
    let listed: Vec<&str> = v["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec![OLD]);
    let out = rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(2));
    check(
        "nothing_silent__an_endpoint_split_by_an_escaped_line_break_is_refused_by_position__apply",
        &normalise(&stderr(&out), d),
    );
    assert_eq!(tree(d), before, "nothing written");
    // check sees a retired endpoint written this way.
    write(
        d,
        ".rebind.yaml",
        &format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n"),
    );
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    check(
        "nothing_silent__an_endpoint_split_by_an_escaped_line_break_is_refused_by_position__check",
        &normalise(&stdout(&out), d),
    );
}

#[test]
fn yaml_in_another_encoding_holding_the_endpoint_stops_a_rebind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ok.yaml", &app("ok", OLD));
    // UTF-16LE with a byte order mark.
    let text = app("wide", OLD);
    let mut utf16 = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        utf16.extend(u.to_le_bytes());
    }
    std::fs::write(d.join("wide.yaml"), utf16).unwrap();
    // Latin-1: an `é` in a comment.
    let mut latin = b"# caf\xe9\n".to_vec();
    latin.extend(app("latin", OLD).as_bytes());
    std::fs::write(d.join("latin.yaml"), latin).unwrap();
    let before = tree(d);
    for cmd in ["diff", "apply"] {
        let mut args = vec![cmd, "--from", OLD, "--to", NEW];
        if cmd == "apply" {
            args.extend(["--yes", "--no-commit"]);
        }
        let out = rebind(d, &args);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{cmd}");
        check(
            &format!(
                "nothing_silent__yaml_in_another_encoding_holding_the_endpoint_stops_a_rebind__{cmd}"
            ),
            &normalise(&stderr(&out), d),
        );
    }
    assert_eq!(tree(d), before);
    // Left out with --exclude: the rebind goes on.
    let out = rebind(
        d,
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "--exclude",
            "wide.yaml",
            "--exclude",
            "latin.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // ... and names what it left out that still holds the endpoint,
    // decoded or not.
    for f in ["latin.yaml", "wide.yaml"] {
        assert!(
            stderr(&out).contains(&format!(
                "warning: {f}: skipped: left out by the exclude globs"
            )),
            "{f}: {}",
            stderr(&out)
        );
    }
    // check: each is a finding.
    write(
        d,
        ".rebind.yaml",
        &format!("clusters:\n  prod:\n    endpoint: {OLD}\n"),
    );
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    check(
        "nothing_silent__yaml_in_another_encoding_holding_the_endpoint_stops_a_rebind__check",
        &normalise(&stdout(&out), d),
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_named_by_scan_and_stops_a_rebind() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ok.yaml", &app("ok", OLD));
    write(d, "locked.yaml", &app("locked", OLD));
    std::fs::set_permissions(
        d.join("locked.yaml"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    if std::fs::read(d.join("locked.yaml")).is_ok() {
        skip(
            "nothing_silent::an_unreadable_file_is_named_by_scan_and_stops_a_rebind",
            "running with the power to read any file (root)",
        );
        return;
    }
    let out = rebind(d, &["scan"]);
    assert_eq!(out.status.code(), Some(0), "scan goes on: {}", stderr(&out));
    assert!(stderr(&out).contains("locked.yaml"), "{}", stderr(&out));
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("locked.yaml"), "{}", stderr(&out));
}

#[test]
fn an_endpoint_is_rewritten_where_it_is_not_where_its_text_first_appears() {
    // The old URL's text also begins a longer URL earlier in the same value
    // (another host, `.cn`), or sits inside a host with no separator: only
    // the endpoint itself moves, in one-line, multi-line and block scalars.
    let (old, new) = (
        "https://api.corp.example.com",
        "https://api2.corp.example.com",
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = [
        (
            "plain.yaml",
            format!("note: mirror {old}.cn/x, then {old}\n"),
        ),
        ("quoted.yaml", format!("note: \"{old}.cn/x {old}\"\n")),
        (
            "folded.yaml",
            format!("note: mirror {old}.cn/x\n  then {old}\n"),
        ),
        (
            "block.yaml",
            format!("values: |\n  mirror: {old}.cn\n  server: {old}\n"),
        ),
        ("glued.yaml", format!("note: {old}https://x.io {old}\n")),
    ];
    for (name, text) in &files {
        write(d, name, text);
    }
    let out = rebind(d, &["diff", "--from", old, "--to", new, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["change_count"], 5, "{v}");
    let out = rebind(
        d,
        &["apply", "--from", old, "--to", new, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for (name, text) in &files {
        // The last occurrence of the old URL is the endpoint.
        let at = text.rfind(old).unwrap();
        let want = format!("{}{new}{}", &text[..at], &text[at + old.len()..]);
        assert_eq!(
            std::fs::read_to_string(d.join(name)).unwrap(),
            want,
            "{name}"
        );
    }
}
