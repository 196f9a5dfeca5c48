//! One story for the cluster registration and the config through cutover
//! and rollback: the repository's own Secret is rebound (no second Secret),
//! the notes say which credentials must change, the config follows a plain
//! `--from`, a rollback keeps `check` clean, and `--to` another cluster's
//! endpoint is refused (or, without a config, needs `--allow-merge`).

use crate::common::*;
use std::path::Path;

fn init(d: &Path) {
    let out = rebind(d, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn check_clean(d: &Path, when: &str) {
    let out = rebind(d, &["check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{when}: check failed:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn the_repositorys_own_registration_is_rebound_and_no_second_secret_is_written() {
    let dir = temp_fixture();
    let d = dir.path();
    git_init_commit(d);
    let out_dir = tempfile::tempdir().unwrap();
    let secret_out = out_dir.path().join("cluster-secret.yaml");
    let review = out_dir.path().join("review.md");
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--cluster-name",
            "finance-prod-green",
            "--secret-out",
            secret_out.to_str().unwrap(),
            "--review-out",
            review.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!secret_out.exists(), "no second Secret for the same server");
    assert!(err.contains("not written"), "{err}");
    assert!(err.contains("Secret/cluster-finance-prod-blue"), "{err}");
    assert!(
        !err.contains("at random") || err.contains("would make ArgoCD pick"),
        "no duplicate warning for the Secret this change rebinds: {err}"
    );
    // The review and the commit say which credentials must now change.
    let md = std::fs::read_to_string(&review).unwrap();
    assert!(md.contains("Secret/cluster-finance-prod-blue"), "{md}");
    assert!(
        md.contains("ExternalSecret/cluster-finance-prod-blue"),
        "{md}"
    );
    assert!(
        md.contains("secret store `aws-secrets-manager`, keys `argocd/finance-prod-blue (token)`"),
        "{md}"
    );
    assert!(md.contains("NEW cluster's token and CA"), "{md}");
    assert!(
        !md.contains("a cluster Secret for the new server URL must be issued"),
        "{md}"
    );
    let msg = git(d, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("NEW cluster's token and CA"), "{msg}");
}

#[test]
fn without_a_registration_in_the_repo_secret_out_writes_one() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::remove_file(d.join("apps/cluster-bootstrap.yaml")).unwrap();
    std::fs::remove_file(d.join("apps/argocd-external-secrets.yaml")).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let secret_out = out_dir.path().join("s.yaml");
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--cluster-name",
            "finance-prod-green",
            "--secret-out",
            secret_out.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let secret = std::fs::read_to_string(&secret_out).unwrap();
    assert!(secret.contains(NEW), "{secret}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["registrations"], serde_json::json!([]));
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("must be issued")));
}

#[test]
fn the_config_follows_a_plain_from_and_a_rollback_keeps_check_clean() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    git_init_commit(d);
    // Cutover with --from (not --cluster): the config follows.
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Manifests and the config are counted apart.
    assert_eq!(v["file_count"], 8);
    assert_eq!(v["change_count"], 19);
    assert_eq!(v["also_written"], serde_json::json!([".rebind.yaml"]));
    let cfg = std::fs::read_to_string(d.join(".rebind.yaml")).unwrap();
    assert!(cfg.contains(&format!("endpoint: {NEW}")), "{cfg}");
    assert!(cfg.contains(&format!("retired: [{OLD}]")), "{cfg}");
    check_clean(d, "after the cutover");
    // Rollback: the same with the endpoints swapped.
    let out = rebind(
        d,
        &["apply", "--from", NEW, "--to", OLD, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cfg = std::fs::read_to_string(d.join(".rebind.yaml")).unwrap();
    assert!(cfg.contains(&format!("endpoint: {OLD}")), "{cfg}");
    assert!(cfg.contains(&format!("retired: [{NEW}]")), "{cfg}");
    check_clean(d, "after the rollback");
    // Every value is back on OLD (a swap writes OLD as given, so a host once
    // spelt in lower case or with `:443` comes back canonical: `git revert`
    // is the byte-exact rollback).
    let v: serde_json::Value =
        serde_json::from_slice(&rebind(d, &["scan", "--json"]).stdout).unwrap();
    let value_count = |url: &str| {
        v["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"].as_str().unwrap().eq_ignore_ascii_case(url))
            .map_or(0, |e| e["value_count"].as_u64().unwrap())
    };
    assert_eq!(value_count(OLD), 19);
    assert_eq!(value_count(NEW), 0);
}

#[test]
fn to_another_clusters_endpoint_is_refused_in_words() {
    let dir = temp_fixture();
    let d = dir.path();
    init(d);
    let before = tree(d);
    let out = rebind(d, &["diff", "--from", OLD, "--to", STAGE]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("finance-stage-blue"), "{err}");
    assert!(!err.contains("does not read back"), "{err}");
    assert_eq!(tree(d), before);
}

#[test]
fn without_a_config_merging_two_clusters_needs_allow_merge() {
    let dir = temp_fixture();
    let d = dir.path();
    let before = tree(d);
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
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allow-merge"), "{}", stderr(&out));
    assert_eq!(tree(d), before);
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
            "--allow-merge",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_mistyped_from_is_an_error_and_a_rebound_tree_is_not() {
    let dir = temp_fixture();
    let d = dir.path();
    let typo = OLD.replace("5F2C8A1E", "5F2C8A1F");
    for wrong in [
        typo.as_str(),
        &OLD[..OLD.len() - 1],
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
    ] {
        let out = rebind(
            d,
            &[
                "apply",
                "--from",
                wrong,
                "--to",
                NEW,
                "--yes",
                "--no-commit",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{wrong}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("is not in the"), "{err}");
        assert!(err.contains(OLD), "lists what is there: {err}");
    }
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            &typo,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
        ],
    );
    assert!(
        stderr(&out).contains(&format!("did you mean {OLD}")),
        "{}",
        stderr(&out)
    );
    // Rebound, then the same command again: exit 0, and it says so.
    let out = rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Already rebound"), "{}", stdout(&out));
}

#[test]
fn a_rerun_on_the_done_branch_writes_the_outputs_again() {
    // How a failed --review-out after the commit is finished (exit 3 says so).
    let dir = temp_fixture();
    let d = dir.path();
    git_init_commit(d);
    let out_dir = tempfile::tempdir().unwrap();
    let review = out_dir.path().join("review.md");
    let args = |r: &std::path::Path| {
        vec![
            "apply".to_string(),
            "--from".into(),
            OLD.into(),
            "--to".into(),
            NEW.into(),
            "--yes".into(),
            "--review-out".into(),
            r.to_str().unwrap().into(),
        ]
    };
    let first: Vec<String> = args(&review);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    assert_eq!(rebind(d, &first).status.code(), Some(0));
    let head = git(d, &["rev-parse", "HEAD"]);
    git(d, &["checkout", "-q", "-"]);
    let again = out_dir.path().join("again.md");
    let second: Vec<String> = args(&again);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let out = rebind(d, &second);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("already holds exactly this change"));
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&review).unwrap()
    );
    assert_eq!(
        git(d, &["rev-parse", "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"]),
        head
    );
}

/// A cluster Secret rebind emits never takes the name of another server's
/// registration: the same Secret name in the namespace (applying it would
/// replace that registration, the old cluster's being the rollback target)
/// or the same ArgoCD cluster name. Refused (exit 2, nothing written),
/// naming the registration; another name goes through. ArgoCD keys a
/// cluster by its Secret and reads its `name` as the cluster's name
/// (argo-cd util/db/cluster.go, secretToCluster).
#[test]
fn a_secret_taking_another_servers_registration_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    // The old cluster's registration, by hand in the repository: ArgoCD
    // name `prod`, Secret `cluster-prod`.
    std::fs::write(
        d.join("cluster.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: https://other.example.com\n",
    )
    .unwrap();
    git_init_commit(d);
    let out_dir = tempfile::tempdir().unwrap();
    let secret_out = out_dir.path().join("s.yaml");
    let before = tree(d);
    for (args, names) in [
        (
            vec!["--cluster-name", "prod"],
            "ArgoCD cluster name \"prod\"",
        ),
        (
            vec![
                "--cluster-name",
                "prod-green",
                "--secret-name",
                "cluster-prod",
            ],
            "Secret argocd/cluster-prod",
        ),
    ] {
        let mut all = vec![
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--secret-out",
            secret_out.to_str().unwrap(),
        ];
        all.extend(args);
        let out = rebind(d, &all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("cluster.yaml:"), "{err}");
        assert!(err.contains("https://other.example.com"), "{err}");
        assert!(err.contains(names), "{names}: {err}");
        assert_eq!(tree(d), before);
        assert!(!secret_out.exists());
    }
    // `rebind secret` refuses the same.
    let out = rebind(d, &["secret", "--name", "prod", "--server", NEW]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cluster.yaml:"), "{}", stderr(&out));
    // Another name is fine.
    let out = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--cluster-name",
            "prod-green",
            "--secret-out",
            secret_out.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(secret_out.exists());
}

/// The old cluster registered on the hub by hand (not in the repository):
/// the live dump given with `--live` shows it, and a Secret for the new
/// server under its name (applied before the merge, it would replace the
/// rollback target's registration) is refused, naming it in the dump.
#[test]
fn a_secret_taking_a_live_registrations_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\n  namespace: argocd\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    git_init_commit(d);
    let outs = tempfile::tempdir().unwrap();
    let live = outs.path().join("live.json");
    // `kubectl get applications.argoproj.io,secrets -n argocd -o json`.
    let server = base64(OLD);
    let name = base64("prod");
    std::fs::write(
        &live,
        format!(
            r#"{{"apiVersion": "v1", "kind": "List", "items": [
  {{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {{"name": "a", "namespace": "argocd"}},
   "spec": {{"destination": {{"server": "{OLD}"}}, "source": {{"repoURL": "https://example.com/x.git", "path": "."}}}}}},
  {{"apiVersion": "v1", "kind": "Secret", "metadata": {{"name": "cluster-prod", "namespace": "argocd",
   "labels": {{"argocd.argoproj.io/secret-type": "cluster"}}}}, "data": {{"name": "{name}", "server": "{server}"}}}}
]}}
"#
        ),
    )
    .unwrap();
    let secret_out = outs.path().join("s.yaml");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--no-commit",
            "--cluster-name",
            "prod",
            "--secret-out",
        ];
        a.push(secret_out.to_str().unwrap());
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let before = tree(d);
    let with_live = args(&["--live", live.to_str().unwrap()]);
    let with_live: Vec<&str> = with_live.iter().map(String::as_str).collect();
    let out = rebind(d, &with_live);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("(live) {}:", live.display())),
        "{err}"
    );
    assert!(err.contains(OLD), "{err}");
    assert_eq!(tree(d), before);
    assert!(!secret_out.exists());
    // Without the dump nothing shows the clash (the repository holds none).
    let plain = args(&[]);
    let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
    let out = rebind(d, &plain);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
