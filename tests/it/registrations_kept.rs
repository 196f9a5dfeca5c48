//! Both registrations during the cutover: a rebind that moves the cluster's
//! name keeps the old cluster's registration byte for byte (the rollback
//! target) and adds the new one beside it, in the same file after `---`,
//! under its own Secret name, for every spelling of a registration (a
//! Secret with `stringData`, one with base64 `data`, an ExternalSecret
//! template, one registering by ARN). A Secret that is no cluster
//! registration is rewritten in place as before; a second run adds
//! nothing; a copy whose name is another server's registration is refused.
//! (ArgoCD: a cluster Secret is labelled
//! `argocd.argoproj.io/secret-type: cluster`; two Secrets with the same
//! `server` conflict, so the copy registers the new server only.)

use crate::common::{self, rebind, stderr, stdout, NEW, OLD};
use std::path::Path;

fn describe(part: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/eks-cutover")
        .join(part)
        .display()
        .to_string()
}

fn run(dir: &Path, cmd: &[&str]) -> std::process::Output {
    let (from, to) = (describe("old.json"), describe("new.json"));
    let mut args = cmd.to_vec();
    args.extend(["--describe-from", &from, "--describe-to", &to, "."]);
    rebind(dir, &args)
}

fn b64(s: &str) -> String {
    common::base64(s)
}

const APP: &str = "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination:\n    server: __S__\n    namespace: web\n";

/// `registration` (one document, ending in a newline) and an Application
/// sent to `server`, in `clusters/c.yaml`; applied; the file returned.
fn applied(registration: &str, server: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("clusters")).unwrap();
    let text = format!("{registration}{}", APP.replace("__S__", server));
    std::fs::write(dir.path().join("clusters/c.yaml"), &text).unwrap();
    // An Application sent to the old endpoint elsewhere: the rebind's own.
    std::fs::write(dir.path().join("a.yaml"), APP[4..].replace("__S__", OLD)).unwrap();
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let after = std::fs::read_to_string(dir.path().join("clusters/c.yaml")).unwrap();
    // The old registration, byte for byte, first.
    assert!(after.starts_with(registration), "{after}");
    // The added one, for `.ci/run` to validate against the Kubernetes and
    // external-secrets schemas.
    if let Some(out) = std::env::var_os("REBIND_MANIFEST_DIR") {
        let copy = added(&after, registration);
        let file = format!("registration-beside-{}.yaml", copy.len());
        std::fs::write(Path::new(&out).join(file), copy).unwrap();
    }
    // Run again: nothing left to do, no third registration.
    let again = run(dir.path(), &["diff", "--format", "json"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["status"], "nothing_to_change", "{v}");
    let again = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("clusters/c.yaml")).unwrap(),
        after
    );
    (dir, after)
}

/// The documents of `text` after the first: the added registration and
/// the Application.
fn added(text: &str, kept: &str) -> String {
    let rest = &text[kept.len()..];
    rest.strip_prefix("---\n")
        .or_else(|| rest.strip_prefix("---\r\n"))
        .unwrap()
        .split("---\n")
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_secret_with_string_data_is_kept_and_the_new_one_added_beside_it() {
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {OLD}\n  config: |\n    {{\"awsAuthConfig\": {{\"clusterName\": \"prod\"}}, \"tlsClientConfig\": {{\"caData\": \"T0xEQ0E=\"}}}}\n");
    let (_d, after) = applied(&reg, OLD);
    let copy = added(&after, &reg);
    assert_eq!(
        copy,
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod-blue\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod-blue\n  server: {NEW}\n  config: |\n    {{\"awsAuthConfig\": {{\"clusterName\": \"prod-blue\"}}, \"tlsClientConfig\": {{\"caData\": \"TkVXQ0E=\"}}}}\n")
    );
    assert!(after.ends_with(&APP.replace("__S__", NEW)), "{after}");
    // The rollback (the same rebind the other way) moves the Application
    // back to the kept registration and keeps both.
    let (old, new) = (describe("old.json"), describe("new.json"));
    let back = rebind(
        _d.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--describe-from",
            &new,
            "--describe-to",
            &old,
            ".",
        ],
    );
    assert_eq!(
        back.status.code(),
        Some(0),
        "{}{}",
        stdout(&back),
        stderr(&back)
    );
    assert_eq!(
        std::fs::read_to_string(_d.path().join("clusters/c.yaml")).unwrap(),
        after.replace(&APP.replace("__S__", NEW), &APP.replace("__S__", OLD))
    );
}

#[test]
fn a_secret_with_base64_data_is_kept_and_the_new_one_added_beside_it() {
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n", b64(OLD));
    let (_d, after) = applied(&reg, OLD);
    assert_eq!(
        added(&after, &reg),
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod-blue\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n", b64(NEW))
    );
}

#[test]
fn an_external_secret_template_is_kept_and_the_new_one_added_beside_it() {
    let reg = format!("apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: prod-cluster\n  namespace: argocd\nspec:\n  secretStoreRef:\n    kind: ClusterSecretStore\n    name: aws\n  target:\n    name: cluster-prod\n    template:\n      metadata:\n        labels:\n          argocd.argoproj.io/secret-type: cluster\n      data:\n        name: prod\n        server: \"{OLD}\"\n  data:\n    - secretKey: token\n      remoteRef:\n        key: argocd/prod\n");
    let (_d, after) = applied(&reg, OLD);
    let new = added(&after, &reg);
    assert!(new.contains("  name: prod-blue-cluster\n"), "{new}");
    assert!(new.contains("    name: cluster-prod-blue\n"), "{new}");
    assert!(
        new.contains(&format!("        server: \"{NEW}\"\n")),
        "{new}"
    );
    assert!(new.contains("        name: prod-blue\n"), "{new}");
}

#[test]
fn a_registration_by_arn_is_kept_and_the_new_one_added_beside_it() {
    let old_arn = "arn:aws:eks:ap-northeast-2:111122223333:cluster/prod";
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {old_arn}\n");
    let (_d, after) = applied(&reg, old_arn);
    assert_eq!(
        added(&after, &reg),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod-blue\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod-blue\n  server: arn:aws:eks:ap-northeast-2:111122223333:cluster/prod-blue\n"
    );
}

/// A Secret that is no cluster registration (no
/// `argocd.argoproj.io/secret-type: cluster` label) is rewritten in place,
/// as before: no copy.
#[test]
fn a_secret_that_is_no_registration_is_rewritten_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\nstringData:\n  server: {OLD}\n");
    std::fs::write(dir.path().join("s.yaml"), &text).unwrap();
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.yaml")).unwrap(),
        text.replace(OLD, NEW)
    );
}

/// The copy's Secret name is another server's registration: refused,
/// naming it, nothing written. And an ArgoCD name the names do not move
/// (not derived from the EKS name) would be the old one's: refused too.
#[test]
fn a_copy_that_would_take_another_registrations_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: {OLD}\n");
    let other = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod-blue\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: https://other.example.com\n";
    std::fs::write(dir.path().join("c.yaml"), &reg).unwrap();
    std::fs::write(dir.path().join("other.yaml"), other).unwrap();
    let out = run(
        dir.path(),
        &["apply", "--no-commit", "--yes", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["errors"][0];
    assert_eq!(e["code"], "registration-name-taken", "{v}");
    assert!(
        e["message"].as_str().unwrap().contains("other.yaml:"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.yaml")).unwrap(),
        reg
    );
    // An ArgoCD name that is not the EKS name and not derived from it.
    let kept = reg.replace("stringData:\n", "stringData:\n  name: hub-a\n");
    std::fs::remove_file(dir.path().join("other.yaml")).unwrap();
    std::fs::write(dir.path().join("c.yaml"), &kept).unwrap();
    let out = run(
        dir.path(),
        &["apply", "--no-commit", "--yes", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"][0]["code"], "registration-name-taken", "{v}");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("\"hub-a\""),
        "{v}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.yaml")).unwrap(),
        kept
    );
}

/// A registration of the old cluster that cannot be kept with a document
/// added beside it (an item of a `kind: List`, a JSON file) is refused
/// with its place, never rewritten in place: the rollback target would be
/// lost.
#[test]
fn a_registration_that_cannot_take_a_copy_beside_it_is_refused() {
    let item = format!("apiVersion: v1\n  kind: Secret\n  metadata:\n    name: cluster-prod\n    labels:\n      argocd.argoproj.io/secret-type: cluster\n  stringData:\n    server: {OLD}\n");
    let list = format!("apiVersion: v1\nkind: List\nitems:\n- {item}");
    let json = format!("{{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {{\"name\": \"cluster-prod\", \"labels\": {{\"argocd.argoproj.io/secret-type\": \"cluster\"}}}}, \"stringData\": {{\"server\": \"{OLD}\"}}}}\n");
    for (file, text, why) in [
        ("list.yaml", list, "is an item of a `kind: List`"),
        ("reg.json", json, "is in a JSON file"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), &text).unwrap();
        std::fs::write(dir.path().join("a.yaml"), APP[4..].replace("__S__", OLD)).unwrap();
        let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "{file}:1:1: the old cluster's registration here {why}"
            )),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(file)).unwrap(),
            text
        );
    }
}

/// A chart whose template renders a cluster registration with its server
/// from the values this rebind rewrites: the rendered registration would
/// move in place, so the rebind that moves the name is refused at the
/// template; an endpoint-only rebind is as before (pending).
#[test]
fn a_registration_a_chart_renders_from_rewritten_values_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("chart/templates")).unwrap();
    std::fs::write(
        d.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: reg\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("chart/templates/secret.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-{{ .Values.name }}\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: {{ .Values.name }}\n  server: {{ .Values.server }}\n",
    )
    .unwrap();
    let values = format!("name: prod\nserver: {OLD}\n");
    std::fs::write(d.join("chart/values.yaml"), &values).unwrap();
    std::fs::write(d.join("a.yaml"), APP[4..].replace("__S__", OLD)).unwrap();
    let out = run(d, &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "chart/templates/secret.yaml:9:11: a cluster registration this chart renders"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("chart/values.yaml")).unwrap(),
        values
    );
    let endpoint_only = rebind(d, &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(
        endpoint_only.status.code(),
        Some(1),
        "{}",
        stderr(&endpoint_only)
    );
}

/// The changes of the added registration are reported at the copy's own
/// lines and resource (the kept one's bytes are unchanged), and those of a
/// document after it at its lines in the file written, in text and JSON.
#[test]
fn the_added_registrations_changes_are_reported_at_its_own_lines() {
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {OLD}\n  config: |\n    {{\"awsAuthConfig\": {{\"clusterName\": \"prod\"}}, \"tlsClientConfig\": {{\"caData\": \"T0xEQ0E=\"}}}}\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("clusters")).unwrap();
    let text = format!("{reg}{}", APP.replace("__S__", OLD));
    std::fs::write(dir.path().join("clusters/c.yaml"), &text).unwrap();
    let out = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<(u64, u64, &str, &str)> = v["names"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["line"].as_u64().unwrap(),
                c["column"].as_u64().unwrap(),
                c["resource"].as_str().unwrap(),
                c["position"].as_str().unwrap(),
            )
        })
        .collect();
    // Kept: lines 1-12; `---` 13; the copy: lines 14-25; `---` 26; the
    // Application: lines 27-35.
    let copy = "Secret/cluster-prod-blue";
    assert_eq!(
        names,
        [
            (22, 9, copy, "registration name"),
            (25, 40, copy, "registration awsAuthConfig.clusterName"),
            (25, 79, copy, "registration tlsClientConfig.caData"),
        ],
        "{v}"
    );
    let files = v["files"].as_array().unwrap();
    let endpoints: Vec<(u64, u64, &str)> = files
        .iter()
        .flat_map(|f| f["changes"].as_array().unwrap())
        .map(|c| {
            (
                c["line"].as_u64().unwrap(),
                c["column"].as_u64().unwrap(),
                c["resource"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        endpoints,
        [(23, 11, copy), (33, 13, "Application/web")],
        "{v}"
    );
    let out = run(dir.path(), &["diff"]);
    let text = stdout(&out);
    assert!(
        text.contains("clusters/c.yaml:22:9: registration name (name in Secret/cluster-prod-blue)"),
        "{text}"
    );
    assert!(!text.contains("clusters/c.yaml:9:9"), "{text}");
    assert!(!text.contains("(name in Secret/cluster-prod)"), "{text}");
    // What was reported is what is written.
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = std::fs::read_to_string(dir.path().join("clusters/c.yaml")).unwrap();
    let line = |n: usize| after.lines().nth(n - 1).unwrap().to_string();
    assert_eq!(line(22), "  name: prod-blue");
    assert_eq!(&line(25)[39..48], "prod-blue");
    assert_eq!(line(23), format!("  server: {NEW}"));
    assert_eq!(line(33), format!("    server: {NEW}"));
}

/// The copy's Secret name taken, in its namespace, by a Secret that is no
/// registration: a plain Secret, an ExternalSecret whose target is named so
/// (`spec.target.name`, else its own name: external-secrets docs,
/// "ExternalSecret"), a SealedSecret (the Secret it unseals takes its
/// name: sealed-secrets README). Refused, naming it; the same names in
/// another namespace, or another name, are no clash.
#[test]
fn a_copy_that_would_take_a_plain_secrets_name_is_refused() {
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {OLD}\n");
    let taken = [
        ("Secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod-blue\n  namespace: __NS__\ntype: Opaque\nstringData:\n  password: x\n", "4:9"),
        ("ExternalSecret", "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: db\n  namespace: __NS__\nspec:\n  target:\n    name: cluster-prod-blue\n", "8:11"),
        ("ExternalSecret", "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: cluster-prod-blue\n  namespace: __NS__\nspec:\n  secretStoreRef:\n    name: vault\n", "4:9"),
        ("SealedSecret", "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: cluster-prod-blue\n  namespace: __NS__\nspec:\n  encryptedData:\n    password: AgB=\n", "4:9"),
    ];
    for (kind, other, at) in taken {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), &reg).unwrap();
        std::fs::write(
            dir.path().join("other.yaml"),
            other.replace("__NS__", "argocd"),
        )
        .unwrap();
        let before = common::tree(dir.path());
        let out = run(
            dir.path(),
            &["apply", "--no-commit", "--yes", "--format", "json"],
        );
        assert_eq!(out.status.code(), Some(2), "{kind}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let e = &v["errors"][0];
        assert_eq!(e["code"], "registration-name-taken", "{kind}: {v}");
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains(&format!("other.yaml:{at}: {kind}/")),
            "{kind}: {m}"
        );
        assert!(
            common::tree(dir.path()) == before,
            "{kind}: nothing written"
        );
        // In another namespace: no clash, the copy added.
        std::fs::write(
            dir.path().join("other.yaml"),
            other.replace("__NS__", "web"),
        )
        .unwrap();
        let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", stderr(&out));
        let after = std::fs::read_to_string(dir.path().join("c.yaml")).unwrap();
        assert!(after.contains("  name: cluster-prod-blue\n"), "{after}");
    }
}

/// A registration of the old cluster whose base64 `data` holds the old
/// name (in `config`'s `awsAuthConfig.clusterName` or `roleARN`, or as
/// `name`) or the old CA: rebind does not rewrite names inside base64, so
/// the copy beside it would keep the old cluster's identity. Refused, exit
/// 2, naming the value's line and column, nothing written; never copied
/// silently. Another server's registration written so is not this
/// rebind's: no such refusal.
#[test]
fn a_base64_registration_holding_the_old_name_or_ca_is_refused() {
    let config = |c: &str| {
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n  config: {}\n", b64(OLD), b64(c))
    };
    let cases = [
        (config(r#"{"awsAuthConfig":{"clusterName":"prod"}}"#), 10, "data.config holds the cluster name `prod`"),
        (config(r#"{"awsAuthConfig":{"roleARN":"arn:aws:iam::1:role/prod-argocd"}}"#), 10, "data.config holds the cluster name `prod`"),
        (config(r#"{"tlsClientConfig":{"caData":"T0xEQ0E="}}"#), 10, "data.config holds the old cluster's CA data"),
        (format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  name: {}\n  server: {}\n", b64("prod"), b64(OLD)), 9, "data.name holds the cluster name `prod`"),
    ];
    for (reg, line, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("clusters")).unwrap();
        std::fs::write(dir.path().join("clusters/c.yaml"), &reg).unwrap();
        std::fs::write(dir.path().join("a.yaml"), APP[4..].replace("__S__", OLD)).unwrap();
        let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
        assert_eq!(out.status.code(), Some(2), "{reg}\n{}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("clusters/c.yaml:{line}:")), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("clusters/c.yaml")).unwrap(),
            reg
        );
        assert!(std::fs::read_to_string(dir.path().join("a.yaml"))
            .unwrap()
            .contains(OLD));
    }
    // Another server's registration, its config naming a cluster `prod`
    // of its own: not refused for that, and left byte for byte.
    let other = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-other\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n  config: {}\n", b64("https://other.example.com"), b64(r#"{"awsAuthConfig":{"clusterName":"prod-eu"}}"#));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("other.yaml"), &other).unwrap();
    std::fs::write(dir.path().join("a.yaml"), APP[4..].replace("__S__", OLD)).unwrap();
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert!(!stderr(&out).contains("in base64"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("other.yaml")).unwrap(),
        other
    );
}

/// The copy may take no name an object of the repository holds: an
/// ExternalSecret copy named as another ExternalSecret (whose own target is
/// another Secret) would replace that object; a Secret written as an item
/// of a `kind: List` makes a Secret like any other. Both refused, naming
/// the place, nothing written; the same names in another namespace are no
/// clash.
#[test]
fn a_copy_that_would_take_an_objects_name_is_refused() {
    let es = format!("apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\nspec:\n  secretStoreRef:\n    kind: ClusterSecretStore\n    name: aws\n  target:\n    name: cluster-prod\n    template:\n      metadata:\n        labels:\n          argocd.argoproj.io/secret-type: cluster\n      data:\n        name: prod\n        server: \"{OLD}\"\n");
    let plain = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {OLD}\n");
    let cases = [
        (&es, "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: cluster-prod-blue\n  namespace: __NS__\nspec:\n  target:\n    name: unrelated\n", "other.yaml:4:9: ExternalSecret/cluster-prod-blue is an object of that kind and name"),
        (&plain, "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Secret\n    metadata:\n      name: cluster-prod-blue\n      namespace: __NS__\n    stringData:\n      password: x\n", "other.yaml:7:13: Secret/cluster-prod-blue makes a Secret of that name"),
    ];
    for (reg, other, says) in cases {
        for (ns, refused) in [("argocd", true), ("elsewhere", false)] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("c.yaml"), reg).unwrap();
            std::fs::write(dir.path().join("other.yaml"), other.replace("__NS__", ns)).unwrap();
            let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
            let err = stderr(&out);
            if refused {
                assert_eq!(out.status.code(), Some(2), "{err}");
                assert!(err.contains(says), "{err}");
                assert!(
                    err.contains("registration") && err.contains("already taken"),
                    "{err}"
                );
                assert_eq!(
                    std::fs::read_to_string(dir.path().join("c.yaml")).unwrap(),
                    *reg
                );
            } else {
                assert_eq!(out.status.code(), Some(0), "{ns}: {err}");
                let after = std::fs::read_to_string(dir.path().join("c.yaml")).unwrap();
                assert!(after.starts_with(reg.as_str()), "{after}");
            }
        }
    }
}

/// In a CRLF file, the added registration and the `---` before it end
/// their lines in CRLF too: no bare LF is written.
#[test]
fn a_copy_in_a_crlf_file_keeps_crlf() {
    let reg = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {OLD}\n").replace('\n', "\r\n");
    let (_d, after) = applied(&reg, OLD);
    assert!(after.starts_with(&reg), "{after:?}");
    assert!(after[reg.len()..].starts_with("---\r\n"), "{after:?}");
    let bare = after
        .match_indices('\n')
        .filter(|(i, _)| *i == 0 || &after[i - 1..*i] != "\r");
    // The Application the test appends is LF; the registration's part is not.
    let copy_end = after
        .find("---\napiVersion: argoproj.io")
        .unwrap_or(after.len());
    assert_eq!(bare.filter(|(i, _)| *i < copy_end).count(), 0, "{after:?}");
}
