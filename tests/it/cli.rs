//! End-to-end behaviour of the `rebind` binary on temporary copies of
//! `testdata/app-of-apps`.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn scan_json(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["scan", "--json"];
    args.extend_from_slice(extra);
    let out = rebind(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn scan_finds_19_places_in_8_files() {
    let dir = temp_fixture();
    let v = scan_json(dir.path(), &[]);
    let occ = v["occurrences"].as_array().unwrap();
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    for o in occ {
        let e = o["endpoint"].as_str().unwrap().to_ascii_lowercase();
        if o["kind"] == "value" && e.contains(&OLD_HOST.to_ascii_lowercase()) {
            *per_file
                .entry(o["path"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    let expected: BTreeMap<String, usize> = [
        ("apps/karpenter.yaml", 5),
        ("apps/app-root.yaml", 1),
        ("apps/cluster-bootstrap.yaml", 2),
        ("apps/keda.yaml", 2),
        ("apps/argocd.yaml", 2),
        ("apps/argocd-external-secrets.yaml", 2),
        ("apps/istio.yaml", 3),
        ("apps/node-local-dns.json", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(per_file, expected);
    // Every item carries the documented fields.
    let karp = occ
        .iter()
        .find(|o| {
            o["path"] == "apps/karpenter.yaml"
                && o["yaml_path"] == "spec.source.helm.parameters[0].value"
        })
        .expect("karpenter parameter");
    assert_eq!(karp["resource"], "Application/karpenter");
    assert_eq!(karp["line"], 29);
    assert_eq!(karp["column"], 19);
    assert_eq!(karp["kind"], "value");
    assert_eq!(karp["endpoint"], OLD);
    // The comment and README mentions are reported with their kinds.
    assert!(occ
        .iter()
        .any(|o| o["path"] == "apps/karpenter.yaml" && o["kind"] == "comment"));
    assert!(occ
        .iter()
        .any(|o| o["path"] == "README.md" && o["kind"] == "text"));
    // The gitignored build/ directory is not scanned.
    assert!(occ
        .iter()
        .all(|o| !o["path"].as_str().unwrap().starts_with("build/")));
    // The summary counts per endpoint.
    let prod = v["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == OLD)
        .unwrap();
    assert_eq!(
        (prod["file_count"].as_u64(), prod["value_count"].as_u64()),
        (Some(8), Some(19))
    );
    assert_eq!(v["tiers"]["in_cluster"].as_array().unwrap().len(), 9);
    assert_eq!(
        v["tiers"]["by_name"],
        serde_json::json!(["Application/metrics-server"])
    );
}

#[test]
fn scan_from_lists_only_that_endpoint() {
    let dir = temp_fixture();
    let v = scan_json(dir.path(), &["--from", STAGE]);
    let occ = v["occurrences"].as_array().unwrap();
    assert!(!occ.is_empty());
    assert!(occ.iter().all(|o| o["endpoint"]
        .as_str()
        .unwrap()
        .contains("A1B2C3D4E5F60718293A4B5C6D7E8F90")));
}

#[test]
fn diff_writes_nothing_and_exits_1() {
    let dir = temp_fixture();
    let before = tree(dir.path());
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(tree(dir.path()), before);
    // The same output as `snapshots::diff_text` (no colour when not a
    // terminal): the same snapshot.
    check("diff_text", &normalise(&stdout(&out), dir.path()));
}

#[test]
fn apply_changes_only_endpoint_bytes_and_is_idempotent() {
    let dir = temp_fixture();
    let before = tree(dir.path());
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = tree(dir.path());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut swaps = 0;
    let mut changed = Vec::new();
    for (path, old) in &before {
        let new = &after[path];
        let n = endpoint_swaps(old, new).unwrap_or_else(|e| panic!("{path}: {e}"));
        if n > 0 {
            changed.push(path.as_str());
        }
        swaps += n;
    }
    assert_eq!(swaps, 19);
    assert_eq!(changed.len(), 8, "{changed:?}");
    // Traps hold: BOM, CRLF, no final newline, comment and README untouched.
    assert!(after["apps/keda.yaml"].starts_with(b"\xef\xbb\xbf"));
    let crlf = |b: &[u8]| b.windows(2).filter(|w| w == b"\r\n").count();
    assert_eq!(
        crlf(&after["apps/cluster-bootstrap.yaml"]),
        crlf(&before["apps/cluster-bootstrap.yaml"])
    );
    assert!(!after["apps/argocd.yaml"].ends_with(b"\n"));
    assert_eq!(after["README.md"], before["README.md"]);
    assert_eq!(after["build/rendered.yaml"], before["build/rendered.yaml"]);
    assert_eq!(after["stage/keda.yaml"], before["stage/keda.yaml"]);
    let karp = String::from_utf8(after["apps/karpenter.yaml"].clone()).unwrap();
    assert!(karp.lines().nth(1).unwrap().contains(OLD), "comment kept");
    assert!(karp.contains("*prodEndpoint"), "alias kept");
    let argocd = String::from_utf8(after["apps/argocd.yaml"].clone()).unwrap();
    assert!(
        argocd.contains(&format!("server: {NEW}/\n")),
        ":443 dropped, slash kept"
    );

    // A second run has nothing to do.
    let again = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let again = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout(&again).contains("Nothing to change."));
    assert_eq!(tree(dir.path()), after);
}

#[test]
fn invalid_yaml_holding_the_endpoint_fails_apply_with_nothing_written() {
    let dir = temp_fixture();
    std::fs::write(
        dir.path().join("apps/broken.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n   bad: [\n"),
    )
    .unwrap();
    let before = tree(dir.path());
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(tree(dir.path()), before);
    check(
        "cli__invalid_yaml_holding_the_endpoint_fails_apply_with_nothing_written",
        &normalise(&stderr(&out), dir.path()),
    );
    // diff reports the same error and exits 2.
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_to_exits_2() {
    let dir = temp_fixture();
    let mut said = String::new();
    for bad in [
        "http://a.example.com",
        "a.example.com",
        "https://",
        "https://a.example.com/path",
        "https://kubernetes.default.svc",
    ] {
        let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", bad]);
        assert_eq!(out.status.code(), Some(2), "--to {bad}");
        assert_eq!(stdout(&out), "", "--to {bad}");
        said += &format!("--to {bad}\n{}\n", stderr(&out));
    }
    check("cli__bad_to_exits_2", &normalise(&said, dir.path()));
    let out = rebind(dir.path(), &["diff", "--from", OLD]);
    assert_eq!(out.status.code(), Some(2), "missing --to is a usage error");
}

#[test]
fn omitted_from_needs_exactly_one_workload_endpoint() {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["diff", "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
    check(
        "cli__omitted_from_needs_exactly_one_workload_endpoint__two",
        &normalise(&stderr(&out), dir.path()),
    );
    // Without the stage endpoint the prod one is taken.
    for f in ["stage/keda.yaml", "charts/cluster-apps/values.yaml"] {
        std::fs::remove_file(dir.path().join(f)).unwrap();
    }
    let istio = dir.path().join("apps/istio.yaml");
    let text = std::fs::read_to_string(&istio)
        .unwrap()
        .replace(STAGE, "https://10.1.2.3:6443");
    std::fs::write(&istio, text).unwrap();
    // An IP at a cluster position is a workload endpoint.
    let out = rebind(dir.path(), &["diff", "--to", NEW]);
    assert_eq!(out.status.code(), Some(2));
    check(
        "cli__omitted_from_needs_exactly_one_workload_endpoint__ip",
        &normalise(&stderr(&out), dir.path()),
    );
    let text = std::fs::read_to_string(&istio)
        .unwrap()
        .replace("https://10.1.2.3:6443", OLD);
    std::fs::write(&istio, text).unwrap();
    let out = rebind(dir.path(), &["diff", "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("20 changes in 8 files: {OLD} -> {NEW}")));
}

#[test]
fn apply_without_yes_and_without_terminal_refuses() {
    let dir = temp_fixture();
    let before = tree(dir.path());
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--yes"));
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn closed_pipe_ends_quietly_with_the_runs_own_exit_code() {
    let dir = temp_fixture();
    // A reader that hung up (`rebind scan | head -0`) is no error of the
    // run: the exit code is the one the run has with a reader (scan 0,
    // diff 1 for pending changes), and nothing is said on stderr.
    for (args, code) in [
        (&["scan", "."][..], 0),
        (&["scan", "--json"], 0),
        (&["diff", "--from", OLD, "--to", NEW], 1),
    ] {
        assert_eq!(
            rebind(dir.path(), args).status.code(),
            Some(code),
            "{args:?}"
        );
        // The read end is closed before rebind starts: every write gets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = crate::common::command()
            .args(args)
            .current_dir(dir.path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn explicit_file_paths_are_taken_as_given() {
    let dir = temp_fixture();
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "apps/keda.yaml",
            "build/rendered.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("--- a/apps/keda.yaml"));
    assert!(
        text.contains("--- a/build/rendered.yaml"),
        "a file named on the command line is taken even if ignored"
    );
    assert!(text.contains("3 changes in 2 files"), "{text}");
}

#[test]
fn non_utf8_and_binary_files_are_named_not_rewritten() {
    let dir = temp_fixture();
    let mut bad = format!("server: {OLD}\n# ").into_bytes();
    bad.extend_from_slice(&[0xff, 0xfe, b'\n']);
    std::fs::write(dir.path().join("apps/latin1.yaml"), &bad).unwrap();
    let mut bin = vec![0u8, 1, 2];
    bin.extend_from_slice(OLD.as_bytes());
    std::fs::write(dir.path().join("apps/blob.bin"), &bin).unwrap();
    // A YAML file that is not UTF-8 but holds the endpoint stops the rebind:
    // it cannot promise it found everything (nothing written).
    let before = tree(dir.path());
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    check(
        "cli__non_utf8_and_binary_files_are_named_not_rewritten__refused",
        &normalise(&stderr(&out), dir.path()),
    );
    assert_eq!(tree(dir.path()), before);
    // Left out on purpose, the rebind goes on; the binary file is named.
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--exclude",
            "apps/latin1.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    check(
        "cli__non_utf8_and_binary_files_are_named_not_rewritten__excluded",
        &normalise(&stderr(&out), dir.path()),
    );
    assert_eq!(
        std::fs::read(dir.path().join("apps/latin1.yaml")).unwrap(),
        bad
    );
    assert_eq!(
        std::fs::read(dir.path().join("apps/blob.bin")).unwrap(),
        bin
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() {
    let dir = temp_fixture();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("outside.yaml");
    std::fs::write(&target, format!("server: {OLD}\n")).unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("apps/link.yaml")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("loop"), dir.path().join("loop")).unwrap();
    let out = rebind(
        dir.path(),
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("apps/link.yaml: skipped: symbolic link, not followed"));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        format!("server: {OLD}\n")
    );
    assert!(std::fs::symlink_metadata(dir.path().join("apps/link.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn helm_template_files_are_parsed_with_actions_masked() {
    let dir = temp_fixture();
    let v = scan_json(dir.path(), &[]);
    let occ: Vec<&Value> = v["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["path"] == "charts/cluster-apps/templates/application.yaml")
        .collect();
    assert_eq!(occ.len(), 1);
    assert_eq!(occ[0]["kind"], "template");
    assert_eq!(occ[0]["line"], 14);
}
