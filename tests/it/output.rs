//! The output layer through the binary: `--format`, `--color`, `-q`,
//! `schema_version` on every command, stdout/stderr that fail or close, and
//! the positions table's list-element rule.

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;

fn json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(o)))
}

#[test]
fn every_command_has_format_json_with_schema_version() {
    let dir = temp_fixture();
    let d = dir.path();
    let out_file = tempfile::tempdir().unwrap();
    let secret_out = out_file.path().join("s.yaml");
    let runs: Vec<(Vec<&str>, i32)> = vec![
        (vec!["scan", "--format", "json"], 0),
        (vec!["scan", "--json"], 0),
        (
            vec!["diff", "--from", OLD, "--to", NEW, "--format", "json"],
            1,
        ),
        (
            vec![
                "apply",
                "--from",
                OLD,
                "--to",
                NEW,
                "--no-commit",
                "--yes",
                "--format",
                "json",
            ],
            0,
        ),
        (
            vec![
                "secret",
                "--name",
                "prod",
                "--server",
                NEW,
                "--format",
                "json",
                "--out",
                secret_out.to_str().unwrap(),
            ],
            0,
        ),
        (vec!["init", "--format", "json"], 0),
        (vec!["check", "--format", "json"], 0),
    ];
    for (args, code) in runs {
        let o = rebind(d, &args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["schema_version"], 1, "{args:?}");
        assert_eq!(v["command"], args[0], "{args:?}");
    }
}

/// A format a command does not write is a usage error (exit 2) that names
/// the formats it does write, and nothing is written to stdout.
#[test]
fn a_format_the_command_does_not_write_is_refused_by_name() {
    let dir = temp_fixture();
    let d = dir.path();
    for (args, names) in [
        (
            &[
                "apply",
                "--from",
                OLD,
                "--to",
                NEW,
                "--no-commit",
                "--format",
                "sarif",
            ][..],
            "text, json",
        ),
        (&["init", "--format", "github"][..], "text, json"),
        (
            &[
                "secret", "--name", "p", "--server", NEW, "--format", "sarif",
            ][..],
            "text, json",
        ),
        (
            &["scan", "--format", "yaml"][..],
            "text, json, sarif, github",
        ),
    ] {
        let out = rebind(d, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("[possible values: {names}]")),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn plan_reports_always_have_the_same_fields() {
    let dir = temp_fixture();
    let d = dir.path();
    let diff = json(&rebind(d, &["diff", "--from", OLD, "--to", NEW, "--json"]));
    let applied = json(&rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--no-commit",
            "--yes",
            "--json",
        ],
    ));
    // Rebinding again: the tree is already rebound, a no-op that says so.
    let noop = json(&rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--no-commit",
            "--yes",
            "--json",
        ],
    ));
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&diff), keys(&applied));
    assert_eq!(keys(&diff), keys(&noop));
    assert_eq!(diff["status"], "pending");
    assert_eq!(diff["written"], false);
    assert_eq!(diff["branch"], Value::Null);
    assert_eq!(applied["status"], "applied");
    assert_eq!(applied["written"], true);
    assert_eq!(noop["status"], "nothing_to_change");
    assert_eq!(noop["written"], false);
    // A count is a number; a list is a list.
    assert_eq!(diff["change_count"], 19);
    assert_eq!(diff["file_count"], 8);
    let files = diff["files"].as_array().unwrap();
    assert_eq!(files.len(), 8);
    let per_file: u64 = files
        .iter()
        .map(|f| f["change_count"].as_u64().unwrap())
        .sum();
    assert_eq!(per_file, 19);
    assert!(files.iter().all(|f| f["changes"].is_array()));
}

#[test]
fn color_is_chosen_by_flag_and_environment() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = crate::common::command();
        c.args(args)
            .current_dir(fixture())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let diff = ["diff", "--from", OLD, "--to", NEW];
    let esc = "\x1b[";
    // Not a terminal: no colour unless asked for.
    assert!(!run(&diff, &[]).contains(esc));
    assert!(run(&[&diff[..], &["--color", "always"]].concat(), &[]).contains(esc));
    assert!(run(&diff, &[("CLICOLOR_FORCE", "1")]).contains(esc));
    assert!(!run(
        &[&diff[..], &["--color", "never"]].concat(),
        &[("CLICOLOR_FORCE", "1")]
    )
    .contains(esc));
    assert!(
        !run(&diff, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains(esc),
        "NO_COLOR wins over CLICOLOR_FORCE"
    );
}

#[test]
fn quiet_prints_only_errors() {
    let o = rebind(&fixture(), &["-q", "diff", "--from", OLD, "--to", NEW]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "");
    let o = rebind(
        &fixture(),
        &["-q", "diff", "--from", OLD, "--to", "http://x"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error:"), "{}", stderr(&o));
}

/// Runs `rebind ARGS` with stdout and stderr opened on `out` and `err`.
fn run_into(args: &[&str], out: Stdio, err: Stdio) -> Option<i32> {
    crate::common::command()
        .args(args)
        .current_dir(fixture())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .unwrap()
        .code()
}

fn dev_full() -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .ok()
}

#[test]
fn stderr_closed_or_full_never_panics() {
    let commands: [&[&str]; 3] = [
        &["scan", "."],
        &["diff", "--from", OLD, "--to", NEW],
        &["diff", "--from", OLD, "--to", "not-a-url"],
    ];
    for args in commands {
        // stderr's reader is gone (`2>&1 | head -1` once head has exited).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let code = run_into(args, Stdio::null(), Stdio::from(writer));
        assert_ne!(code, Some(101), "{args:?} panicked");
        assert!(matches!(code, Some(0..=2)), "{args:?}: {code:?}");
        // stdout and stderr both closed.
        let (r1, w1) = std::io::pipe().unwrap();
        let (r2, w2) = std::io::pipe().unwrap();
        drop((r1, r2));
        let code = run_into(args, Stdio::from(w1), Stdio::from(w2));
        assert!(matches!(code, Some(0..=2)), "{args:?}: {code:?}");
        if let Some(full) = dev_full() {
            // `2>/dev/full`: warnings and errors cannot be written.
            let code = run_into(args, Stdio::null(), Stdio::from(full));
            assert!(matches!(code, Some(0..=2)), "{args:?}: {code:?}");
        }
    }
}

#[test]
fn a_full_disk_on_stdout_fails_the_run() {
    let Some(full) = dev_full() else {
        skip(
            "output::a_full_disk_on_stdout_fails_the_run",
            "no /dev/full here",
        );
        return;
    };
    let code = run_into(&["scan", "."], Stdio::from(full), Stdio::null());
    assert_eq!(code, Some(2), "the report never reached its reader");
}

#[test]
fn json_apply_without_yes_keeps_text_off_stdout() {
    // No terminal: refused, and stdout holds nothing but the JSON error report.
    let dir = temp_fixture();
    let o = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--no-commit", "--json"],
    );
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!(v["command"], "apply");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v}");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("stdin is not a terminal"));
}

const CHART: &str = "https://charts.example.com/stable";

/// An ApplicationSet whose list elements carry a cluster URL the template
/// uses, and a Helm chart repository it uses as `repoURL`.
fn appset(server_template: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: addons\nspec:\n  generators:\n    - list:\n        elements:\n          - cluster: prod\n            url: https://10.1.2.3:6443\n            repoURL: {CHART}\n  template:\n    metadata:\n      name: 'addons-{{{{cluster}}}}'\n    spec:\n      source:\n        repoURL: '{{{{repoURL}}}}'\n        chart: addons\n      destination:\n        server: {server_template}\n"
    )
}

#[test]
fn list_elements_are_clusters_only_where_the_template_puts_them() {
    for template in ["'{{url}}'", "'{{.url}}'", "'{{ .url }}'"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("set.yaml"), appset(template)).unwrap();
        let v = json(&rebind(dir.path(), &["scan", "--json"]));
        let listed: Vec<&str> = v["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["role"] == "workload")
            .map(|e| e["endpoint"].as_str().unwrap())
            .collect();
        assert_eq!(listed, vec!["https://10.1.2.3:6443"], "{template}");
        // init declares the cluster, named by its element, and not the chart.
        let o = rebind(dir.path(), &["init"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let cfg = std::fs::read_to_string(dir.path().join(".rebind.yaml")).unwrap();
        assert!(!cfg.contains(CHART), "{cfg}");
        assert!(cfg.contains("prod:"), "{cfg}");
        let o = rebind(dir.path(), &["check"]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    }
}

#[test]
fn check_text_ends_with_a_count_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join(".rebind.yaml"),
        format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("app.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let o = rebind(d, &["check"]);
    assert_eq!(o.status.code(), Some(1));
    check(
        "output__check_text_ends_with_a_count_and_the_fix",
        &normalise(&stdout(&o), d),
    );
    let o = rebind(d, &["check", "--format", "github"]);
    assert_eq!(o.status.code(), Some(1));
    check(
        "output__check_text_ends_with_a_count_and_the_fix__github",
        &normalise(&stdout(&o), d),
    );
}
