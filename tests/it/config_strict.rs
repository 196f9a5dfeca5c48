//! The config through the binary: what the reader refuses (naming
//! file:line:column), cutover then rollback with `check` clean after each step,
//! `--to` another cluster's endpoint, `init` output that always reads back,
//! and each `--expect-*` flag alone.

use crate::common::*;
use std::path::Path;

const CONFIG: &str = ".rebind.yaml";

fn init(d: &Path) {
    let out = rebind(d, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn apply_no_commit(d: &Path, cluster: &str, to: &str) {
    let out = rebind(
        d,
        &[
            "apply",
            "--cluster",
            cluster,
            "--to",
            to,
            "--yes",
            "--no-commit",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn the_reader_refuses_ambiguous_configs_naming_line_and_column() {
    let dir = temp_fixture();
    let d = dir.path();
    let cases = [
        (
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n  prod:\n    endpoint: {NEW}\n"),
            ".rebind.yaml:4:3: cluster prod is declared twice (first at line 2)",
        ),
        (
            format!("clusters:\n  prod:\n    endpoint: {NEW}\n    endpoint: {OLD}\n"),
            ".rebind.yaml:4:5: duplicate key \"endpoint\" (first at line 3)",
        ),
        (
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n---\nclusters:\n  prod:\n    endpoint: {NEW}\n"),
            ".rebind.yaml:4:1: a second YAML document",
        ),
        (
            format!("clusters:\n  prod:\n    endpoint: &e {OLD}\n  copy:\n    endpoint: *e\n"),
            ".rebind.yaml:3:15: anchors and aliases are not allowed",
        ),
        (
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n    retired: [{NEW}, {OLD}]\n"),
            &*format!(".rebind.yaml:4:{}: cluster prod lists its current endpoint", 15 + NEW.len() + 2),
        ),
    ];
    for (text, want) in &cases {
        std::fs::write(d.join(CONFIG), text).unwrap();
        for args in [
            &["check"][..],
            &["diff", "--cluster", "prod", "--to", STAGE],
        ] {
            let out = rebind(d, args);
            assert_eq!(out.status.code(), Some(2), "{args:?} {text}");
            assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        }
    }
}

#[test]
fn an_invalid_glob_in_the_config_names_the_config_line() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\ninclude:\n  - \"**/*.yaml\"\n  - \"apps/[abc\"\n"),
    )
    .unwrap();
    for args in [&["check"][..], &["diff", "--cluster", "prod", "--to", NEW]] {
        let out = rebind(d, args);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(
            err.contains(".rebind.yaml:6:5: include \"apps/[abc\": invalid glob"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("--include"), "{err}");
    }
    // A flag keeps naming the flag.
    std::fs::remove_file(d.join(CONFIG)).unwrap();
    let out = rebind(d, &["scan", "--exclude", "a/[b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--exclude \"a/[b\": invalid glob"));
}

#[test]
fn check_on_a_missing_file_says_so() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    let out = rebind(d, &["check", "apps/nope.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("apps/nope.yaml: no such file or directory"),
        "{err}"
    );
    assert!(!err.contains("no .rebind.yaml found"), "{err}");
}

#[test]
fn cutover_then_rollback_keeps_check_clean() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    let before = tree(d);
    let cluster = "finance-prod-blue";
    apply_no_commit(d, cluster, NEW);
    let config = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    assert!(
        config.contains(&format!("    endpoint: {NEW}\n    retired: [{OLD}]\n")),
        "{config}"
    );
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Roll back.
    apply_no_commit(d, cluster, OLD);
    let config = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    assert!(
        config.contains(&format!("    endpoint: {OLD}\n    retired: [{NEW}]\n")),
        "{config}"
    );
    let out = rebind(d, &["check"]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), ""),
        "{}",
        stderr(&out)
    );
    // Every manifest is back on OLD; only the config remembers NEW.
    let after = tree(d);
    assert_eq!(after.len(), before.len());
    for (p, bytes) in &after {
        let lower = String::from_utf8_lossy(bytes).to_ascii_lowercase();
        let holds_new = lower.contains(&NEW_HOST.to_ascii_lowercase());
        assert_eq!(holds_new, p == CONFIG, "{p}");
    }
    // And forward again.
    apply_no_commit(d, cluster, NEW);
    let config = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    assert!(
        config.contains(&format!("    endpoint: {NEW}\n    retired: [{OLD}]\n")),
        "{config}"
    );
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn to_another_clusters_endpoint_is_refused_in_words() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    let before = tree(d);
    let out = rebind(
        d,
        &[
            "apply",
            "--cluster",
            "finance-prod-blue",
            "--to",
            STAGE,
            "--yes",
            "--no-commit",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "--to {STAGE} is the endpoint of cluster finance-stage-blue"
        )),
        "{err}"
    );
    assert!(!err.contains("read back"), "{err}");
    assert_eq!(tree(d), before);
}

/// After a cutover, a manifest merged with the retired endpoint is fixed by
/// `--from RETIRED --to CURRENT` of the same cluster: the move the config
/// records is finished, the config is left as it is, and `check` is clean.
/// (Any other cluster's endpoint as `--to` stays refused.)
#[test]
fn a_straggler_on_the_retired_endpoint_is_moved_to_its_clusters_current_one() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    apply_no_commit(d, "finance-prod-blue", NEW);
    let config = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    let late = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: late\nspec:\n  destination:\n    server: {OLD}  # merged after the cutover\n    namespace: late\n"
    );
    std::fs::write(d.join("late.yaml"), &late).unwrap();
    assert_eq!(rebind(d, &["check"]).status.code(), Some(1));
    let out = rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("late.yaml")).unwrap(),
        late.replace(OLD, NEW)
    );
    assert_eq!(std::fs::read_to_string(d.join(CONFIG)).unwrap(), config);
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // The retired endpoint may not be sent to another cluster.
    std::fs::write(d.join("late.yaml"), &late).unwrap();
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            STAGE,
            "--yes",
            "--no-commit",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("is the endpoint of cluster finance-stage-blue"));
}

/// An ApplicationSet whose list elements name clusters `names[i]` at `urls[i]`.
fn appset(names: &[&str], urls: &[&str]) -> String {
    let mut s = String::from(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: x\nspec:\n  generators:\n    - list:\n        elements:\n",
    );
    for (n, u) in names.iter().zip(urls) {
        s.push_str(&format!(
            "          - cluster: '{}'\n            url: {u}\n",
            n.replace('\'', "''")
        ));
    }
    s.push_str("  template:\n    spec:\n      destination:\n        server: '{{.url}}'\n");
    s
}

#[test]
fn init_quotes_names_so_its_output_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = ["prod #blue", "- stage", "yes"];
    std::fs::write(d.join("set.yaml"), appset(&names, &[OLD, STAGE, NEW])).unwrap();
    init(d);
    let text = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    for n in names {
        assert!(text.contains(&format!("  \"{n}\":\n")), "{n}: {text}");
    }
    let out = rebind(d, &["check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = rebind(
        d,
        &[
            "diff",
            "--cluster",
            "prod #blue",
            "--to",
            "https://new.example.com",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn init_with_no_workload_endpoint_writes_a_valid_empty_config() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("app.yaml"),
        "kind: Application\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n",
    )
    .unwrap();
    init(d);
    let text = std::fs::read_to_string(d.join(CONFIG)).unwrap();
    assert!(text.contains("No workload endpoint was found"), "{text}");
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn each_expect_flag_works_alone() {
    let dir = temp_fixture();
    let d = dir.path();
    let run = |flag: &str, n: &str| rebind(d, &["diff", "--from", OLD, "--to", NEW, flag, n]);
    assert_eq!(run("--expect-files", "8").status.code(), Some(1));
    assert_eq!(run("--expect-occurrences", "19").status.code(), Some(1));
    let out = run("--expect-files", "7");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected 7 files of"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("found 19 in 8"), "{}", stderr(&out));
    let out = run("--expect-occurrences", "20");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected 20 occurrences of"),
        "{}",
        stderr(&out)
    );
    // In the config too.
    std::fs::write(
        d.join(CONFIG),
        format!("clusters:\n  prod:\n    endpoint: {OLD}\n    expect: {{files: 9}}\n  stage:\n    endpoint: {STAGE}\n"),
    )
    .unwrap();
    let out = rebind(d, &["diff", "--cluster", "prod", "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected 9 files of"),
        "{}",
        stderr(&out)
    );
}

/// A manifest URL with user info: `init` declares the cluster by its
/// endpoint (user info names no cluster, and its password never reaches
/// the config), and the config reads back.
#[test]
fn init_declares_a_url_with_user_info_by_its_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    std::fs::write(
        dir.path().join("a.yaml"),
        format!(
            "kind: Application\nmetadata: {{name: a}}\nspec:\n  destination:\n    server: https://bob:pw@{OLD_HOST}\n"
        ),
    )
    .unwrap();
    let out = rebind(dir.path(), &["init", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cfg = std::fs::read_to_string(dir.path().join(".rebind.yaml")).unwrap();
    assert!(
        cfg.contains(&format!("endpoint: https://{OLD_HOST}\n")),
        "{cfg}"
    );
    assert!(!cfg.contains("pw"), "{cfg}");
    let out = rebind(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
