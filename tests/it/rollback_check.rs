//! `check` (the pre-commit hook, the CI job) on the committed cutover: the
//! old cluster's registration the cutover keeps beside the new one (the
//! rollback target) still registers the retired endpoint. It is reported as
//! its own finding, `rollback-registration`, a warning that does not fail
//! the hook, until `.rebind.yaml` declares the endpoint's cluster torn down
//! (`torn_down`); then it fails. Every other occurrence of the retired
//! endpoint still fails as `retired-endpoint`.

use crate::common::{self, rebind, stderr, stdout};
use std::path::{Path, PathBuf};

fn fixture(part: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/eks-cutover")
        .join(part)
}

/// The old cluster's endpoint in `testdata/eks-cutover`.
const RETIRED: &str =
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";

/// The example repository, `init`ed and cut over to the new cluster with
/// both describe files (so the old registration is kept and the new one
/// added beside it).
fn cut_over() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture("repo"), dir.path());
    let out = rebind(dir.path(), &["init", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (from, to) = (
        fixture("old.json").display().to_string(),
        fixture("new.json").display().to_string(),
    );
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--cluster",
            "prod",
            "--describe-from",
            &from,
            "--describe-to",
            &to,
            "--no-commit",
            "--yes",
            ".",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let reg = std::fs::read_to_string(dir.path().join("clusters/prod.yaml")).unwrap();
    // The kept registration still registers the retired endpoint (line 11),
    // the added one the new endpoint.
    assert_eq!(reg.lines().nth(10), Some(&*format!("  server: {RETIRED}")));
    assert!(reg.contains("name: prod-blue\n"), "{reg}");
    dir
}

/// `check ARGS --format json`: its exit code and findings.
fn check(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut a = vec!["check", "--format", "json"];
    a.extend(args);
    let out = rebind(dir, &a);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (out.status.code(), v["findings"].as_array().unwrap().clone())
}

fn rules(findings: &[serde_json::Value]) -> Vec<(String, u64, String, String)> {
    findings
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn declare_torn_down(dir: &Path) {
    let cfg = dir.join(".rebind.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replacen(
        "    expect:",
        &format!("    torn_down: [{RETIRED}]\n    expect:"),
        1,
    );
    std::fs::write(&cfg, text).unwrap();
}

#[test]
fn the_cutover_result_passes_the_hook_with_the_rollback_registration_as_a_warning() {
    let dir = cut_over();
    let want = vec![(
        "clusters/prod.yaml".to_string(),
        11,
        "rollback-registration".to_string(),
        "warning".to_string(),
    )];
    // The whole repository (the CI job) and the changed files (the hook).
    for args in [
        &[][..],
        &["clusters/prod.yaml", "apps/karpenter.yaml", ".rebind.yaml"][..],
    ] {
        let (code, found) = check(dir.path(), args);
        assert_eq!(code, Some(0), "{args:?}: {found:?}");
        assert_eq!(rules(&found), want, "{args:?}");
        let message = found[0]["message"].as_str().unwrap();
        assert!(message.contains("Secret/prod"), "{message}");
        assert!(message.contains("delete it at teardown"), "{message}");
    }
    // The text the hook prints says the same, and exits 0.
    let out = rebind(dir.path(), &["check", "clusters/prod.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("clusters/prod.yaml:11:11: warning: rollback registration Secret/prod of retired endpoint"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_stray_retired_endpoint_still_fails_beside_the_rollback_registration() {
    let app = format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: stray\nspec:\n  destination:\n    server: {RETIRED}\n    namespace: web\n");
    // A Secret holding the endpoint at `stringData.server` but not labelled
    // as a cluster registration is no registration.
    let unlabelled = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: not-a-registration\nstringData:\n  server: {RETIRED}\n");
    for (file, text, line) in [
        ("apps/stray.yaml", app.as_str(), 7),
        ("apps/unlabelled.yaml", unlabelled.as_str(), 6),
    ] {
        let dir = cut_over();
        std::fs::write(dir.path().join(file), text).unwrap();
        let (code, found) = check(dir.path(), &[file]);
        assert_eq!(code, Some(1), "{file}: {found:?}");
        assert_eq!(
            rules(&found),
            vec![(
                file.to_string(),
                line,
                "retired-endpoint".to_string(),
                "error".to_string()
            )],
            "{file}"
        );
        let (code, found) = check(dir.path(), &[]);
        assert_eq!(code, Some(1));
        let r = rules(&found);
        assert!(r.iter().any(|f| f.0 == file && f.2 == "retired-endpoint"));
        assert!(r
            .iter()
            .any(|f| f.2 == "rollback-registration" && f.3 == "warning"));
    }
}

#[test]
fn once_the_teardown_is_declared_the_kept_registration_fails() {
    let dir = cut_over();
    declare_torn_down(dir.path());
    let (code, found) = check(dir.path(), &["clusters/prod.yaml"]);
    assert_eq!(code, Some(1), "{found:?}");
    assert_eq!(
        rules(&found),
        vec![(
            "clusters/prod.yaml".to_string(),
            11,
            "rollback-registration".to_string(),
            "error".to_string()
        )]
    );
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("declares torn down"), "{message}");
    // Deleting the kept registration (the first document) makes it clean.
    let path = dir.path().join("clusters/prod.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let (_, rest) = text.split_once("---\n").unwrap();
    std::fs::write(&path, rest).unwrap();
    let (code, found) = check(dir.path(), &[]);
    assert_eq!(code, Some(0), "{found:?}");
    // A rollback to the torn-down cluster is refused, nothing written.
    let before = common::tree(dir.path());
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--cluster",
            "prod",
            "--to",
            RETIRED,
            "--no-commit",
            "--yes",
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("torn down"), "{}", stderr(&out));
    assert!(common::tree(dir.path()) == before);
}

#[test]
fn torn_down_must_name_a_retired_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let other = "https://A1B2C3D4E5F60718293A4B5C6D7E8F90.yl4.ap-northeast-2.eks.amazonaws.com";
    let cfg = format!("clusters:\n  prod:\n    endpoint: {other}\n    torn_down: [{RETIRED}]\n");
    std::fs::write(dir.path().join(".rebind.yaml"), cfg).unwrap();
    let out = rebind(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(".rebind.yaml:4:")
            && stderr(&out).contains("not one of its `retired`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_spelling_of_a_whole_registration_is_a_rollback_registration_and_nothing_else_is() {
    let dir = tempfile::tempdir().unwrap();
    let new = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
    let cfg = format!("clusters:\n  prod:\n    endpoint: {new}\n    retired: [{RETIRED}]\n");
    std::fs::write(dir.path().join(".rebind.yaml"), &cfg).unwrap();
    let label = "argocd.argoproj.io/secret-type: cluster";
    let files = [
        // base64 `data`
        (
            "data.yaml",
            format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  labels:\n    {label}\ndata:\n  name: cHJvZA==\n  server: {}\n", common::base64(RETIRED)),
        ),
        // an ExternalSecret whose template is a registration
        (
            "es.yaml",
            format!("apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: cluster-prod\nspec:\n  target:\n    name: cluster-prod\n    template:\n      metadata:\n        labels:\n          {label}\n      data:\n        name: prod\n        server: {RETIRED}\n"),
        ),
        // the server reached through an alias: not written at the key
        (
            "alias.yaml",
            format!("x: &s {RETIRED}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  labels:\n    {label}\nstringData:\n  name: prod\n  server: *s\n"),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let (code, found) = check(dir.path(), &[]);
    assert_eq!(code, Some(1), "{found:?}");
    let mut got = rules(&found);
    got.sort();
    let f = |p: &str, l, r: &str, s: &str| (p.to_string(), l, r.to_string(), s.to_string());
    assert_eq!(
        got,
        vec![
            f("alias.yaml", 1, "retired-endpoint", "error"),
            f("data.yaml", 9, "rollback-registration", "warning"),
            f("es.yaml", 14, "rollback-registration", "warning"),
        ]
    );
}
