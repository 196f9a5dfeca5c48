//! A cutover moves the whole cluster, not only its URL: with both
//! clusters' `aws eks describe-cluster` files, one `apply` rewrites every
//! endpoint and every name position (`src/model/names.rs`) byte-exactly,
//! lists every other occurrence of the old name as a mention, and reports
//! the Terraform registry; a name position it cannot rewrite in place stops
//! the whole rebind.

use crate::common::{self, rebind, stderr, stdout};
use std::path::{Path, PathBuf};

fn fixture(part: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/eks-cutover")
        .join(part)
}

fn describe_args(dir: &Path) -> Vec<String> {
    let _ = dir;
    vec![
        "--describe-from".into(),
        fixture("old.json").display().to_string(),
        "--describe-to".into(),
        fixture("new.json").display().to_string(),
    ]
}

fn run(dir: &Path, cmd: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    args.extend(describe_args(dir));
    args.push(".".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    rebind(dir, &refs)
}

fn repo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture("repo"), dir.path());
    dir
}

/// The text's count line says what the JSON says: 8 endpoint changes in
/// 6 files and 21 name changes, 9 files in all (3 hold only names); a
/// name-only file is never counted as the endpoint's.
#[test]
fn the_text_counts_endpoint_and_name_changes_apart() {
    let dir = repo_copy();
    let out = run(dir.path(), &["diff"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\n8 endpoint changes and 21 name changes in 9 files: https://"),
        "{text}"
    );
}

#[test]
fn one_apply_moves_every_endpoint_and_name_position_byte_exactly() {
    let dir = repo_copy();
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let got = common::tree(dir.path());
    let want = common::tree(&fixture("expected"));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &want {
        assert!(
            got[path] == *bytes,
            "{path} differs:\n{}",
            String::from_utf8_lossy(&got[path])
        );
    }
    // The CRLF Application kept its line ends.
    assert!(String::from_utf8_lossy(&got["apps/karpenter-params.yaml"])
        .contains("value: prod-blue\r\n"));
    // Run again: nothing left of the old name at a position, and the
    // endpoint is already rebound.
    let again = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["names"]["change_count"], 0, "{v}");
    assert_eq!(v["file_count"], 0, "{v}");
    // What is left of `prod` is mentions (`prod-blue` is no mention of it).
    let left = v["names"]["mentions"].as_array().unwrap();
    assert!(
        left.iter()
            .all(|m| !m["context"].as_str().unwrap().contains("prod-blue")),
        "{left:?}"
    );
}

#[test]
fn the_json_audit_shows_name_changes_beside_endpoint_changes() {
    let dir = repo_copy();
    let out = run(dir.path(), &["diff", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = &v["names"];
    assert_eq!(names["from"], "prod");
    assert_eq!(names["to"], "prod-blue");
    assert_eq!(names["change_count"], 21, "{names}");
    // 8 endpoint changes in 6 files; the 21 name changes are counted on
    // their own (`--expect-*` and the config's `expect` are the endpoint's).
    assert_eq!(v["change_count"], 8);
    assert_eq!(v["file_count"], 6);
    assert_eq!(v["files"].as_array().unwrap().len(), 9);
    let changes = names["changes"].as_array().unwrap();
    assert!(changes.iter().all(|c| c["kind"] == "name"));
    let at = |path: &str, position: &str| {
        changes
            .iter()
            .filter(|c| c["path"] == path && c["position"] == position)
            .count()
    };
    assert_eq!(
        at(
            "clusters/prod.yaml",
            "registration awsAuthConfig.clusterName"
        ),
        1
    );
    assert_eq!(
        at("clusters/prod.yaml", "registration tlsClientConfig.caData"),
        1
    );
    assert_eq!(
        at(
            "karpenter/ec2nodeclass.yaml",
            "karpenter.sh/discovery selector"
        ),
        3
    );
    assert_eq!(
        at(
            "apps/karpenter-params.yaml",
            "karpenter settings.interruptionQueue"
        ),
        1
    );
    assert_eq!(
        at("capability/prod-by-arn.yaml", "registration server ARN"),
        1
    );
    assert_eq!(at("capability/prod-by-arn.yaml", "cluster ARN"), 1);
    assert_eq!(at("kubeconfig/hub.yaml", "kubeconfig exec argument"), 1);
    // A file with both: its name changes sit beside its endpoint changes.
    let file = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "apps/karpenter.yaml")
        .unwrap();
    assert_eq!(file["changes"].as_array().unwrap().len(), 2);
    assert_eq!(file["name_changes"].as_array().unwrap().len(), 2);
    assert_eq!(file["change_count"], 2);
    // Prose and unrelated fields are mentions, never rewritten.
    let mentions = names["mentions"].as_array().unwrap();
    let mentioned = |path: &str, line: u64| {
        mentions
            .iter()
            .any(|m| m["path"] == path && m["line"] == line)
    };
    assert!(mentioned("README.md", 3));
    assert!(mentioned("apps/aws-load-balancer-controller.yaml", 16)); // ingressClass
    assert!(mentioned("karpenter/ec2nodeclass.yaml", 6)); // role
    assert!(mentioned("apps/external-dns-values.yaml", 4)); // a domain
    assert!(mentioned("clusters/prod.yaml", 4)); // the Secret's own name
                                                 // The Terraform registry: where the old name is, what to add.
    let registry = names["registry"].as_array().unwrap();
    let lines: Vec<(u64, &str)> = registry
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["add"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            (3, "prod-blue = {"),
            (12, "argocd_managed_clusters = [\"stage\", \"prod-blue\"]")
        ]
    );
}

#[test]
fn a_name_position_that_cannot_be_rewritten_in_place_stops_everything() {
    let dir = repo_copy();
    // A folded scalar at a name position: no verified byte splice exists.
    std::fs::write(
        dir.path().join("apps/external-dns-values.yaml"),
        "txtOwnerId: >-\n  prod\n",
    )
    .unwrap();
    let before = common::tree(dir.path());
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("apps/external-dns-values.yaml:2:3:")
            && err.contains("external-dns txtOwnerId"),
        "{err}"
    );
    assert_eq!(common::tree(dir.path()), before, "nothing written");
}

#[test]
fn without_the_new_arn_an_arn_registration_is_refused_not_left_behind() {
    let dir = repo_copy();
    let new = std::fs::read_to_string(fixture("new.json")).unwrap();
    let no_arn: String = new
        .lines()
        .filter(|l| !l.contains("\"arn\""))
        .collect::<Vec<_>>()
        .join("\n");
    let described = dir.path().join("../new-no-arn.json");
    std::fs::write(&described, no_arn).unwrap();
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--describe-from",
            &fixture("old.json").display().to_string(),
            "--describe-to",
            &described.display().to_string(),
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("capability/prod-by-arn.yaml:11:11:"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_file(described);
}

#[test]
fn scan_finds_clusters_registered_by_arn() {
    let dir = repo_copy();
    let out = rebind(dir.path(), &["scan", "--format", "json", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let arns = v["arn_clusters"].as_array().unwrap();
    let got: Vec<(&str, u64, bool, &str)> = arns
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap(),
                a["line"].as_u64().unwrap(),
                a["registration"].as_bool().unwrap(),
                a["cluster_name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("capability/prod-by-arn.yaml", 11, true, "prod"),
            ("capability/prod-by-arn.yaml", 26, false, "prod")
        ]
    );
    let text = stdout(&rebind(dir.path(), &["scan", "."]));
    assert!(
        text.contains("capability/prod-by-arn.yaml:11:11: arn:aws:eks:ap-northeast-2:111122223333:cluster/prod (registration server in Secret/prod-arn)"),
        "{text}"
    );
}

/// Keeps a copy of an emitted manifest for `.ci/validate-manifests.py`.
fn keep(name: &str, manifest: &str) {
    if let Some(dir) = std::env::var_os("REBIND_MANIFEST_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.yaml")), manifest).unwrap();
    }
}

fn secret_out(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = rebind(dir.path(), &[&["secret"][..], args].concat());
    (out.status.code().unwrap(), stdout(&out), stderr(&out))
}

fn config_of(manifest: &str, at: &[&str]) -> serde_json::Value {
    let doc: serde_json::Value = serde_yaml_like(manifest);
    let mut v = &doc;
    for k in at {
        v = &v[*k];
    }
    serde_json::from_str(v["config"].as_str().unwrap()).unwrap()
}

/// A one-document manifest as JSON (through the YAML test reader).
fn serde_yaml_like(manifest: &str) -> serde_json::Value {
    fn conv(y: &yaml_rust2::Yaml) -> serde_json::Value {
        use yaml_rust2::Yaml;
        match y {
            Yaml::String(s) => s.clone().into(),
            Yaml::Integer(i) => (*i).into(),
            Yaml::Boolean(b) => (*b).into(),
            Yaml::Array(a) => a.iter().map(conv).collect(),
            Yaml::Hash(h) => h
                .iter()
                .map(|(k, v)| (k.as_str().unwrap().to_string(), conv(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
            _ => serde_json::Value::Null,
        }
    }
    conv(&yaml_rust2::YamlLoader::load_from_str(manifest).unwrap()[0])
}

#[test]
fn the_new_registration_comes_from_the_describe_file() {
    let new = fixture("new.json").display().to_string();
    // Name, server, caData and awsAuthConfig.clusterName from the file; no
    // roleARN unless given (a single-role Pod Identity setup has none).
    let (code, y, err) = secret_out(&["--describe", &new]);
    assert_eq!(code, 0, "{err}");
    keep("names-describe-secret", &y);
    let doc = serde_yaml_like(&y);
    assert_eq!(doc["metadata"]["name"], "cluster-prod-blue");
    assert_eq!(doc["stringData"]["name"], "prod-blue");
    assert_eq!(doc["stringData"]["server"], common::NEW);
    let c = config_of(&y, &["stringData"]);
    assert_eq!(c["awsAuthConfig"]["clusterName"], "prod-blue");
    assert!(c["awsAuthConfig"].get("roleARN").is_none(), "{c}");
    assert_eq!(c["tlsClientConfig"]["caData"], "TkVXQ0E=");
    // By ARN, with a role.
    let (code, y, err) = secret_out(&[
        "--describe",
        &new,
        "--server-arn",
        "--aws-role-arn",
        "arn:aws:iam::111122223333:role/argocd-manager",
    ]);
    assert_eq!(code, 0, "{err}");
    keep("names-describe-secret-arn", &y);
    let doc = serde_yaml_like(&y);
    assert_eq!(
        doc["stringData"]["server"],
        "arn:aws:eks:ap-northeast-2:111122223333:cluster/prod-blue"
    );
    let c = config_of(&y, &["stringData"]);
    assert_eq!(
        c["awsAuthConfig"]["roleARN"],
        "arn:aws:iam::111122223333:role/argocd-manager"
    );
    // The ExternalSecret: v1 by default, v1beta1 behind the flag.
    let es = [
        "--describe",
        new.as_str(),
        "--external-secret",
        "--store",
        "aws-secrets-manager",
        "--key",
        "argocd/prod-blue",
    ];
    let (code, y, err) = secret_out(&es);
    assert_eq!(code, 0, "{err}");
    keep("names-describe-external-v1", &y);
    assert_eq!(serde_yaml_like(&y)["apiVersion"], "external-secrets.io/v1");
    let c = config_of(&y, &["spec", "target", "template", "data"]);
    assert_eq!(c["tlsClientConfig"]["caData"], "TkVXQ0E=");
    let (code, y, err) = secret_out(&[&es[..], &["--external-secrets-v1beta1"]].concat());
    assert_eq!(code, 0, "{err}");
    keep("names-describe-external-v1beta1", &y);
    assert_eq!(
        serde_yaml_like(&y)["apiVersion"],
        "external-secrets.io/v1beta1"
    );
    // Without a describe file, the name and server are still required.
    let (code, _, err) = secret_out(&["--server", common::NEW]);
    assert_eq!(code, 2);
    assert!(err.contains("--name"), "{err}");
}

#[test]
fn apply_adds_the_new_registration_beside_the_old_one() {
    let dir = repo_copy();
    // The repository holds no registration of its own here (the old one is
    // kept elsewhere, the rollback target), and sends an Application by ARN.
    std::fs::remove_file(dir.path().join("clusters/prod.yaml")).unwrap();
    let arn_app = std::fs::read_to_string(dir.path().join("capability/prod-by-arn.yaml")).unwrap();
    let app = arn_app.split("---\n").nth(1).unwrap().to_string();
    std::fs::write(dir.path().join("capability/prod-by-arn.yaml"), app).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let path = out_dir.path().join("prod-blue.yaml");
    let out = run(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--secret-out",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let y = std::fs::read_to_string(&path).unwrap();
    keep("names-apply-secret-out", &y);
    let doc = serde_yaml_like(&y);
    // Its own name: the old registration stays the rollback target.
    assert_eq!(doc["metadata"]["name"], "cluster-prod-blue");
    // The repository registers the cluster by ARN too: the new one is
    // registered by its ARN.
    assert_eq!(
        doc["stringData"]["server"],
        "arn:aws:eks:ap-northeast-2:111122223333:cluster/prod-blue"
    );
    let c = config_of(&y, &["stringData"]);
    assert_eq!(c["awsAuthConfig"]["clusterName"], "prod-blue");
    assert_eq!(c["tlsClientConfig"]["caData"], "TkVXQ0E=");
}

#[test]
fn no_second_registration_when_the_repository_rebinds_its_own_by_arn() {
    let dir = repo_copy();
    // Only the ARN registration is the repository's own.
    std::fs::remove_file(dir.path().join("clusters/prod.yaml")).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let path = out_dir.path().join("prod-blue.yaml");
    let out = run(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--secret-out",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!path.exists());
    assert!(
        stderr(&out).contains("adds the new cluster's registration Secret/prod-blue-arn (capability/prod-by-arn.yaml:14:1) beside the old cluster's, Secret/prod-arn (capability/prod-by-arn.yaml:2:1), which it keeps"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_review_says_which_applications_move_from_which_registration_to_which() {
    let dir = repo_copy();
    let out = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let moves = v["names"]["moves"].as_array().unwrap();
    let guestbook = moves
        .iter()
        .find(|m| m["resource"] == "Application/guestbook")
        .unwrap();
    // The old registration stays (the rollback target); the new one is
    // added beside it, and each Application is said to move between them.
    assert_eq!(
        guestbook["from_registration"],
        "Secret/prod-arn (capability/prod-by-arn.yaml:2:1), registering arn:aws:eks:ap-northeast-2:111122223333:cluster/prod (kept: the rollback target)"
    );
    assert_eq!(
        guestbook["to_registration"],
        "Secret/prod-blue-arn (capability/prod-by-arn.yaml:14:1), added beside it, registering arn:aws:eks:ap-northeast-2:111122223333:cluster/prod-blue"
    );
    let karpenter = moves
        .iter()
        .find(|m| m["resource"] == "Application/karpenter-prod")
        .unwrap();
    assert!(
        karpenter["from_registration"]
            .as_str()
            .unwrap()
            .starts_with("Secret/prod (clusters/prod.yaml:1:1), registering https://"),
        "{karpenter}"
    );
    assert!(
        karpenter["to_registration"].as_str().unwrap().starts_with(
            "Secret/prod-blue (clusters/prod.yaml:23:1), added beside it, registering https://0D1E"
        ),
        "{karpenter}"
    );
    // Six Applications are sent to the old cluster: each one is listed.
    assert_eq!(moves.len(), 6, "{moves:?}");
    let text = stdout(&run(dir.path(), &["diff"]));
    assert!(
        text.contains("Applications moving from the old cluster's registration to the new one's:"),
        "{text}"
    );
}

#[test]
fn the_names_may_be_given_as_flags() {
    let dir = repo_copy();
    std::fs::remove_dir_all(dir.path().join("capability")).unwrap();
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--format",
            "json",
            "--from",
            common::OLD,
            "--to",
            common::NEW,
            "--eks-name-from",
            "prod",
            "--eks-name-to",
            "prod-green",
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["names"]["to"], "prod-green");
    // Without the describe files the CA is not known: no caData change.
    let changes = v["names"]["changes"].as_array().unwrap();
    assert!(changes.iter().all(|c| c["new"] != "TkVXQ0E="));
    assert_eq!(changes.len(), 17, "{changes:?}");
    let bad = rebind(
        dir.path(),
        &[
            "diff",
            "--from",
            common::OLD,
            "--to",
            common::NEW,
            "--eks-name-from",
            "prod",
            "--eks-name-to",
            "prod.blue",
            ".",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--eks-name-to \"prod.blue\": not an EKS cluster name"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn the_config_declares_the_old_cluster_and_init_declares_every_field_it_can() {
    // init: a describe-cluster output in the tree gives name, ARN and CA.
    let dir = repo_copy();
    std::fs::copy(fixture("old.json"), dir.path().join("old-cluster.json")).unwrap();
    let out = rebind(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cfg = std::fs::read_to_string(dir.path().join(".rebind.yaml")).unwrap();
    for line in [
        "    name: prod\n",
        "    arn: arn:aws:eks:ap-northeast-2:111122223333:cluster/prod\n",
        "    ca_data: \"T0xEQ0E=\"\n",
    ] {
        assert!(cfg.contains(line), "{line:?} in\n{cfg}");
    }
    // (the describe file held the endpoint too: out of the tree, out of the counts)
    std::fs::remove_file(dir.path().join("old-cluster.json")).unwrap();
    assert!(cfg.contains("expect: {files: 7, occurrences: 9}"), "{cfg}");
    let cfg = cfg.replace(
        "expect: {files: 7, occurrences: 9}",
        "expect: {files: 6, occurrences: 8}",
    );
    std::fs::write(dir.path().join(".rebind.yaml"), &cfg).unwrap();
    // The declared cluster is the old side of the name rebind.
    let label = cfg
        .lines()
        .find(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .unwrap()
        .trim()
        .trim_end_matches(':')
        .to_string();
    let new = fixture("new.json").display().to_string();
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--cluster",
            &label,
            "--describe-to",
            &new,
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["names"]["change_count"], 21, "{}", v["names"]);
    // Strict: an ARN of another cluster than the name is refused, by line.
    let bad = cfg.replace("cluster/prod\n", "cluster/stage\n");
    std::fs::write(dir.path().join(".rebind.yaml"), bad).unwrap();
    let out = rebind(
        dir.path(),
        &["diff", "--cluster", &label, "--describe-to", &new, "."],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("names cluster stage, name is prod"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_describe_cluster_output_in_the_tree_is_never_rebound() {
    let dir = repo_copy();
    std::fs::copy(fixture("old.json"), dir.path().join("old.json")).unwrap();
    let out = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = v["names"]["changes"].as_array().unwrap();
    assert!(
        changes.iter().all(|c| c["path"] != "old.json"),
        "{changes:?}"
    );
    assert_eq!(v["names"]["change_count"], 21);
}

#[test]
fn the_old_ca_moves_in_a_file_that_does_not_name_the_cluster() {
    let dir = repo_copy();
    std::fs::write(
        dir.path().join("kubeconfig/other.yaml"),
        "apiVersion: v1\nkind: Config\nclusters:\n  - name: hub-view\n    cluster:\n      certificate-authority-data: T0xEQ0E=\n",
    )
    .unwrap();
    let out = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = v["names"]["changes"].as_array().unwrap();
    assert!(
        changes.iter().any(|c| c["path"] == "kubeconfig/other.yaml"
            && c["position"] == "kubeconfig certificate-authority-data"
            && c["new"] == "TkVXQ0E="),
        "{changes:?}"
    );
}

#[test]
fn names_move_after_the_endpoint_was_rebound_alone() {
    let dir = repo_copy();
    let first = rebind(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            common::OLD,
            "--to",
            common::NEW,
            ".",
        ],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // The endpoint is rebound; the names are still the old cluster's.
    let pending = run(dir.path(), &["diff", "--format", "json"]);
    assert_eq!(pending.status.code(), Some(1), "{}", stderr(&pending));
    let v: serde_json::Value = serde_json::from_slice(&pending.stdout).unwrap();
    assert_eq!(v["change_count"], 0);
    assert_eq!(v["names"]["change_count"], 21);
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The endpoint-only rebind had no name for a second registration, so
    // it rewrote the old one in place; the names then move there too. The
    // ARN registration, still the old cluster's, is kept and the new one
    // added beside it, as in one run.
    let mut got = common::tree(dir.path());
    let mut want = common::tree(&fixture("expected"));
    let prod = String::from_utf8(got.remove("clusters/prod.yaml").unwrap()).unwrap();
    let expected = String::from_utf8(want.remove("clusters/prod.yaml").unwrap()).unwrap();
    let (_, added) = expected.split_once("---\n").unwrap();
    assert_eq!(prod, added.replacen("name: prod-blue\n", "name: prod\n", 1));
    assert_eq!(got, want);
}

#[test]
fn a_yaml_file_that_holds_the_name_but_is_not_utf8_stops_the_rebind() {
    let dir = repo_copy();
    let bytes = b"# caf\xe9\nsettings:\n  clusterName: prod\n".to_vec();
    std::fs::write(dir.path().join("apps/latin1-values.yaml"), bytes).unwrap();
    let before = common::tree(dir.path());
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("apps/latin1-values.yaml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(common::tree(dir.path()), before, "nothing written");
}

/// Helm gives a dependency its values under its `alias`, else its `name`,
/// in the parent chart's values ("Subcharts and Global Values",
/// helm.sh/docs/chart_template_guide/subcharts_and_globals; `alias` in
/// helm.sh/docs/topics/charts, "Alias field in dependencies"). An umbrella
/// chart installing karpenter, the Load Balancer Controller,
/// cluster-autoscaler and external-dns holds their name positions there:
/// recognised by the dependency's chart `name`, in its values files and in
/// an Application's Helm values for it; the same keys for another chart,
/// in a chart with no such dependency or in a file of no chart stay mentions.
#[test]
fn an_umbrella_charts_values_for_its_dependencies_move() {
    const OLD_EP: &str =
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
    let dir = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "charts/karp/Chart.yaml",
            "apiVersion: v2\nname: karp\nversion: 0.1.0\ndependencies:\n  - name: karpenter\n    version: 1.0.0\n    repository: oci://public.ecr.aws/karpenter\n  - name: aws-load-balancer-controller\n    alias: lbc\n    version: 1.8.0\n    repository: https://aws.github.io/eks-charts\n  - {name: cluster-autoscaler, version: 9.37.0, repository: https://kubernetes.github.io/autoscaler}\n  - {name: external-dns, version: 1.14.0, repository: https://kubernetes-sigs.github.io/external-dns}\n  - {name: common, alias: infra, version: 1.0.0, repository: https://charts.example.com}\n",
        ),
        (
            "charts/karp/values.yaml",
            &format!("karpenter:\n  settings:\n    clusterName: prod\n    interruptionQueue: \"Karpenter-prod\"\n    clusterEndpoint: {OLD_EP}\nlbc:\n  clusterName: 'prod'\ncluster-autoscaler:\n  autoDiscovery: {{clusterName: prod}}\nexternal-dns:\n  txtOwnerId: prod\ninfra:\n  settings: {{clusterName: prod}}\n  clusterName: prod\naws-load-balancer-controller:\n  clusterName: prod\n"),
        ),
        (
            "charts/legacy/Chart.yaml",
            "apiVersion: v1\nname: legacy\nversion: 0.1.0\n",
        ),
        (
            "charts/legacy/requirements.yaml",
            "dependencies:\n  - name: karpenter\n    alias: karp\n    version: 0.37.0\n    repository: oci://public.ecr.aws/karpenter\n",
        ),
        (
            "charts/legacy/values-prod.yaml",
            "karp:\n  settings:\n    aws: {clusterName: prod, interruptionQueueName: prod}\nkarpenter:\n  settings: {clusterName: prod}\n",
        ),
        (
            "charts/plain/Chart.yaml",
            "apiVersion: v2\nname: plain\nversion: 0.1.0\n",
        ),
        (
            "charts/plain/values.yaml",
            "karpenter:\n  settings: {clusterName: prod}\n",
        ),
        (
            "notes/values.yaml",
            "karpenter:\n  settings: {clusterName: prod}\nsettings: {clusterName: prod}\n",
        ),
        (
            "apps/umbrella.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: umbrella, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform.git\n    path: charts/karp\n    helm:\n      valuesObject:\n        karpenter: {settings: {clusterName: prod}}\n        infra: {clusterName: prod}\n      values: |\n        lbc:\n          clusterName: prod\n      parameters:\n        - name: cluster-autoscaler.autoDiscovery.clusterName\n          value: prod\n        - name: infra.autoDiscovery.clusterName\n          value: prod\n  destination: {server: https://kubernetes.default.svc, namespace: kube-system}\n",
        ),
        (
            "apps/plain.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: plain, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform.git\n    path: charts/plain\n    helm:\n      valuesObject:\n        karpenter: {settings: {clusterName: prod}}\n  destination: {server: https://kubernetes.default.svc, namespace: kube-system}\n",
        ),
    ];
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", stdout(&out), stderr(&out));
    });
    let changes: Vec<(String, i64, String, String)> = v["names"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["kind"], "name", "{c}");
            (
                c["path"].as_str().unwrap().to_string(),
                c["line"].as_i64().unwrap(),
                c["yaml_path"].as_str().unwrap().to_string(),
                c["position"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        (
            "apps/umbrella.yaml",
            11,
            "karpenter.settings.clusterName",
            "karpenter settings.clusterName",
        ),
        (
            "apps/umbrella.yaml",
            15,
            "lbc.clusterName",
            "aws-load-balancer-controller clusterName",
        ),
        (
            "apps/umbrella.yaml",
            18,
            "cluster-autoscaler.autoDiscovery.clusterName",
            "cluster-autoscaler autoDiscovery.clusterName",
        ),
        (
            "charts/karp/values.yaml",
            3,
            "karpenter.settings.clusterName",
            "karpenter settings.clusterName",
        ),
        (
            "charts/karp/values.yaml",
            4,
            "karpenter.settings.interruptionQueue",
            "karpenter settings.interruptionQueue",
        ),
        (
            "charts/karp/values.yaml",
            7,
            "lbc.clusterName",
            "aws-load-balancer-controller clusterName",
        ),
        (
            "charts/karp/values.yaml",
            9,
            "cluster-autoscaler.autoDiscovery.clusterName",
            "cluster-autoscaler autoDiscovery.clusterName",
        ),
        (
            "charts/karp/values.yaml",
            11,
            "external-dns.txtOwnerId",
            "external-dns txtOwnerId",
        ),
        (
            "charts/legacy/values-prod.yaml",
            3,
            "karp.settings.aws.clusterName",
            "karpenter settings.clusterName",
        ),
        (
            "charts/legacy/values-prod.yaml",
            3,
            "karp.settings.aws.interruptionQueueName",
            "karpenter settings.interruptionQueue",
        ),
        // A values document's own top-level keys are read as any values
        // file's (a document with no `kind`), as before.
        (
            "notes/values.yaml",
            3,
            "settings.clusterName",
            "karpenter settings.clusterName",
        ),
    ];
    let want: Vec<(String, i64, String, String)> = want
        .iter()
        .map(|(p, l, y, pos)| (p.to_string(), *l, y.to_string(), pos.to_string()))
        .collect();
    assert_eq!(changes, want);
    // The rest stays: another chart's keys (`infra`, the dependency on
    // `common`), the LBC's name where its dependency is aliased `lbc`, a
    // key for no dependency, a chart without dependencies, no chart.
    let mentions: Vec<(String, i64)> = v["names"]["mentions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_i64().unwrap(),
            )
        })
        .collect();
    for at in [
        ("apps/plain.yaml", 11),
        ("apps/umbrella.yaml", 12),
        ("apps/umbrella.yaml", 20),
        ("charts/karp/values.yaml", 13),
        ("charts/karp/values.yaml", 14),
        ("charts/karp/values.yaml", 16),
        ("charts/legacy/values-prod.yaml", 5),
        ("charts/plain/values.yaml", 2),
        ("notes/values.yaml", 2),
    ] {
        assert!(
            mentions.contains(&(at.0.to_string(), at.1)),
            "{at:?} not a mention: {mentions:?}"
        );
    }
    // Apply moves them byte-exactly, the endpoint under the umbrella key too.
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let read = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).unwrap();
    let new_ep = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
    assert_eq!(
        read("charts/karp/values.yaml"),
        format!("karpenter:\n  settings:\n    clusterName: prod-blue\n    interruptionQueue: \"Karpenter-prod-blue\"\n    clusterEndpoint: {new_ep}\nlbc:\n  clusterName: 'prod-blue'\ncluster-autoscaler:\n  autoDiscovery: {{clusterName: prod-blue}}\nexternal-dns:\n  txtOwnerId: prod-blue\ninfra:\n  settings: {{clusterName: prod}}\n  clusterName: prod\naws-load-balancer-controller:\n  clusterName: prod\n")
    );
    assert_eq!(
        read("charts/legacy/values-prod.yaml"),
        "karp:\n  settings:\n    aws: {clusterName: prod-blue, interruptionQueueName: prod-blue}\nkarpenter:\n  settings: {clusterName: prod}\n"
    );
    assert_eq!(
        read("apps/umbrella.yaml"),
        files[8]
            .1
            .replacen(
                "karpenter: {settings: {clusterName: prod}}",
                "karpenter: {settings: {clusterName: prod-blue}}",
                1
            )
            .replacen(
                "    clusterName: prod\n      parameters",
                "    clusterName: prod-blue\n      parameters",
                1
            )
            .replacen(
                "clusterName\n          value: prod\n",
                "clusterName\n          value: prod-blue\n",
                1
            )
    );
    for rel in [
        "charts/plain/values.yaml",
        "apps/plain.yaml",
        "charts/karp/Chart.yaml",
    ] {
        let orig = files.iter().find(|(r, _)| *r == rel).unwrap().1;
        assert_eq!(read(rel), orig, "{rel}");
    }
}
