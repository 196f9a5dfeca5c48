//! End-to-end endpoint rules: malformed URLs never hide real endpoints, ports
//! and user info are read per RFC 3986, bare hosts with another port are other
//! endpoints, and `--from`/`--to` refuse what cannot be an endpoint.

use crate::common::*;
use std::fs;
use std::path::Path;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn app(server: &str, before: &str) -> String {
    format!(
        "{before}\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\nspec:\n  destination:\n    server: {server}\n    namespace: default\n"
    )
}

#[test]
fn a_malformed_url_above_the_endpoint_does_not_hide_it() {
    let mut diffs = String::new();
    for before in [
        "# example: https://[fd00::1 (IPv6 clusters need brackets)",
        "# note: \"see https://[cluster-endpoint for the format\"",
        "# https://[not an ip] https://host:443:443y https://[",
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "apps/app.yaml", &app(OLD, before));
        let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
        assert_eq!(out.status.code(), Some(1), "{before}\n{}", stderr(&out));
        diffs += &format!("## {before}\n{}", normalise(&stdout(&out), dir.path()));
        let out = rebind(dir.path(), &["scan", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let found: Vec<&str> = v["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "value")
            .map(|o| o["endpoint"].as_str().unwrap())
            .collect();
        assert_eq!(found, vec![OLD], "{before}");
    }
    check(
        "endpoint_cli__a_malformed_url_above_the_endpoint_does_not_hide_it",
        &diffs,
    );
}

#[test]
fn a_port_that_does_not_end_the_authority_is_not_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let text = app(OLD, &format!("# mirror: {OLD}:443:443y"));
    write(dir.path(), "apps/app.yaml", &text);
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Only `server:` changes; the comment's `:443:443y` URL is not the endpoint.
    check(
        "endpoint_cli__a_port_that_does_not_end_the_authority_is_not_the_endpoint",
        &normalise(&stdout(&out), dir.path()),
    );
}

#[test]
fn a_bare_host_with_another_port_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = app(
        "https://10.0.0.1:6443",
        "# metrics\n# nodeExporter: 10.0.0.1:9100\n",
    )
    .replace(
        "    namespace: default\n",
        "    namespace: default\n  info:\n    - name: exporter\n      value: 10.0.0.1:9100\n",
    );
    write(dir.path(), "apps/app.yaml", &text);
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--from",
            "https://10.0.0.1:6443",
            "--to",
            "https://10.0.0.2:6443",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Only `server:` changes; `10.0.0.1:9100` is another endpoint.
    check(
        "endpoint_cli__a_bare_host_with_another_port_is_left_alone",
        &normalise(&stdout(&out), dir.path()),
    );
}

#[test]
fn user_info_in_a_file_is_found_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let with_user = OLD.replacen("https://", "https://deploy@", 1);
    write(dir.path(), "apps/app.yaml", &app(&with_user, "# app"));
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    check(
        "endpoint_cli__user_info_in_a_file_is_found_and_kept",
        &normalise(&stdout(&out), dir.path()),
    );
    let out = rebind(dir.path(), &["scan", "--json"]);
    assert!(
        !stdout(&out).contains("\"https://deploy\""),
        "{}",
        stdout(&out)
    );
}

#[test]
fn command_line_endpoints_follow_rfc_3986() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "apps/app.yaml", &app(OLD, "# app"));
    let mut said = String::new();
    for bad in [
        "https://user:pw@new.example.com",
        "https://[",
        "https://[fd00::1",
        "https://[not an ip]",
    ] {
        let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(stdout(&out), "", "{bad}");
        said += &format!("--to {bad}\n{}\n", stderr(&out));
    }
    let out = rebind(
        dir.path(),
        &["diff", "--from", OLD, "--to", "https://[fd00::1]:6443"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    said += &format!("--to https://[fd00::1]:6443\n{}", stdout(&out));
    check(
        "endpoint_cli__command_line_endpoints_follow_rfc_3986",
        &normalise(&said, dir.path()),
    );
}
