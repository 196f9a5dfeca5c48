//! `rebind secret` and `apply --secret-out`: every form parsed back, snapshots,
//! validation, the token rule and the duplicate-server warning.

use crate::common::*;
use std::path::Path;
use std::process::Stdio;
use yaml_rust2::{Yaml, YamlLoader};

const SERVER: &str =
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

fn secret(cwd: &Path, args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut c = crate::common::command();
    c.arg("secret")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null());
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Parses the manifest and the `config` JSON inside it.
fn parse(text: &str) -> (Yaml, serde_json::Value) {
    let docs = YamlLoader::load_from_str(text).expect("valid YAML");
    assert_eq!(docs.len(), 1);
    let doc = docs[0].clone();
    let data = if doc["kind"].as_str() == Some("ExternalSecret") {
        &doc["spec"]["target"]["template"]["data"]
    } else {
        &doc["stringData"]
    };
    let config =
        serde_json::from_str(data["config"].as_str().expect("config")).expect("config is JSON");
    (doc, config)
}

fn snap(name: &str, body: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, body);
    });
}

#[test]
fn default_form() {
    let dir = tempfile::tempdir().unwrap();
    let out = secret(
        dir.path(),
        &[
            "--name",
            "finance-prod-green",
            "--server",
            SERVER,
            "--label",
            "env=prod",
            "--label",
            "example.com/tier=hub-push",
            "--annotation",
            "owner=platform team",
            "--project",
            "platform",
            "--namespaces",
            "keda,karpenter",
            "--cluster-resources",
            "false",
            "--server-name",
            "api.internal.example",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (y, c) = parse(&text);
    assert_eq!(y["apiVersion"].as_str(), Some("v1"));
    assert_eq!(y["kind"].as_str(), Some("Secret"));
    assert_eq!(y["type"].as_str(), Some("Opaque"));
    assert_eq!(
        y["metadata"]["name"].as_str(),
        Some("cluster-finance-prod-green")
    );
    assert_eq!(y["metadata"]["namespace"].as_str(), Some("argocd"));
    let labels = &y["metadata"]["labels"];
    assert_eq!(
        labels["argocd.argoproj.io/secret-type"].as_str(),
        Some("cluster")
    );
    assert_eq!(labels["env"].as_str(), Some("prod"));
    assert_eq!(labels["example.com/tier"].as_str(), Some("hub-push"));
    assert_eq!(
        y["metadata"]["annotations"]["owner"].as_str(),
        Some("platform team")
    );
    let sd = &y["stringData"];
    assert_eq!(sd["name"].as_str(), Some("finance-prod-green"));
    assert_eq!(sd["server"].as_str(), Some(SERVER));
    assert_eq!(sd["project"].as_str(), Some("platform"));
    assert_eq!(sd["namespaces"].as_str(), Some("keda,karpenter"));
    assert_eq!(sd["clusterResources"].as_str(), Some("false"));
    assert_eq!(c["bearerToken"], "${ARGOCD_CLUSTER_TOKEN}");
    assert_eq!(c["tlsClientConfig"]["insecure"], false);
    assert_eq!(c["tlsClientConfig"]["caData"], "${ARGOCD_CLUSTER_CA}");
    assert_eq!(c["tlsClientConfig"]["serverName"], "api.internal.example");
    snap("secret_default", &text);
}

#[test]
fn aws_form_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let out = secret(
        dir.path(),
        &[
            "--name",
            "finance-prod-green",
            "--server",
            SERVER,
            "--aws-cluster-name",
            "finance-prod-green",
            "--aws-role-arn",
            "arn:aws:iam::123456789012:role/argocd-manager",
            "--aws-profile",
            "hub",
            "--ca-data",
            "Zm9vYmFy",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (y, c) = parse(&text);
    assert_eq!(y["stringData"]["server"].as_str(), Some(SERVER));
    assert_eq!(c["awsAuthConfig"]["clusterName"], "finance-prod-green");
    assert_eq!(
        c["awsAuthConfig"]["roleARN"],
        "arn:aws:iam::123456789012:role/argocd-manager"
    );
    assert_eq!(c["awsAuthConfig"]["profile"], "hub");
    assert_eq!(c["tlsClientConfig"]["caData"], "Zm9vYmFy");
    assert!(c.get("bearerToken").is_none());
    assert!(!text.contains("TOKEN"));
    snap("secret_aws", &text);
}

#[test]
fn external_secret_form() {
    let dir = tempfile::tempdir().unwrap();
    let out = secret(
        dir.path(),
        &[
            "--name",
            "finance-prod-green",
            "--server",
            SERVER,
            "--external-secret",
            "--store",
            "aws-secrets-manager",
            "--key",
            "argocd/finance-prod-green",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (y, c) = parse(&text);
    assert_eq!(y["apiVersion"].as_str(), Some("external-secrets.io/v1"));
    assert_eq!(y["kind"].as_str(), Some("ExternalSecret"));
    let spec = &y["spec"];
    assert_eq!(
        spec["secretStoreRef"]["kind"].as_str(),
        Some("ClusterSecretStore")
    );
    assert_eq!(
        spec["secretStoreRef"]["name"].as_str(),
        Some("aws-secrets-manager")
    );
    assert_eq!(
        spec["target"]["name"].as_str(),
        Some("cluster-finance-prod-green")
    );
    let tmpl = &spec["target"]["template"];
    assert_eq!(
        tmpl["metadata"]["labels"]["argocd.argoproj.io/secret-type"].as_str(),
        Some("cluster")
    );
    assert_eq!(tmpl["data"]["server"].as_str(), Some(SERVER));
    assert_eq!(c["bearerToken"], "{{ .token }}");
    assert_eq!(c["tlsClientConfig"]["caData"], "{{ .caData }}");
    let keys: Vec<_> = spec["data"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|d| d["secretKey"].as_str().unwrap())
        .collect();
    assert_eq!(keys, vec!["token", "caData"]);
    assert_eq!(
        spec["data"][0]["remoteRef"]["key"].as_str(),
        Some("argocd/finance-prod-green")
    );
    snap("secret_external", &text);
}

#[test]
fn ca_file_is_base64_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let pem = "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n";
    std::fs::write(dir.path().join("ca.pem"), pem).unwrap();
    let out = secret(
        dir.path(),
        &["--name", "c", "--server", SERVER, "--ca-file", "ca.pem"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (_, c) = parse(&stdout(&out));
    // base64 of the PEM above, computed independently of rebind's encoder.
    assert_eq!(
        c["tlsClientConfig"]["caData"],
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ0ZXN0Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
    );
}

#[test]
fn validation_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("not.pem"), "hello\n").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--name", "c", "--server", "http://a.example.com"],
            "https://",
        ),
        (&["--name", "c", "--server", "a.example.com"], "https://"),
        (
            &["--name", "c", "--server", "https://kubernetes.default.svc"],
            "in-cluster",
        ),
        (&["--name", "", "--server", SERVER], "must not be empty"),
        (
            &["--name", "c", "--server", SERVER, "--label", "bad label"],
            "--label",
        ),
        (
            &["--name", "c", "--server", SERVER, "--label", "k=v w"],
            "not a valid label value",
        ),
        (
            &[
                "--name",
                "c",
                "--server",
                SERVER,
                "--ca-file",
                "missing.pem",
            ],
            "cannot read",
        ),
        (
            &["--name", "c", "--server", SERVER, "--ca-file", "not.pem"],
            "not a PEM",
        ),
        (
            &[
                "--name",
                "c",
                "--server",
                SERVER,
                "--ca-data",
                "not base64!",
            ],
            "not base64",
        ),
        (
            &[
                "--name",
                "c",
                "--server",
                SERVER,
                "--token-env",
                "REBIND_TEST_UNSET_VAR",
            ],
            "not set",
        ),
    ];
    for (args, msg) in cases {
        let out = secret(dir.path(), args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn token_never_lands_in_a_git_work_tree() {
    let token = "s3cr3t-token-value";
    let repo = temp_fixture();
    // Without the repository's own registration, so that `apply --secret-out`
    // below writes one (with it, no second Secret is written at all).
    std::fs::remove_file(repo.path().join("apps/cluster-bootstrap.yaml")).unwrap();
    std::fs::remove_file(repo.path().join("apps/argocd-external-secrets.yaml")).unwrap();
    git_init_commit(repo.path());
    // Refused inside the work tree, nothing written.
    let out = secret(
        repo.path(),
        &[
            "--name",
            "c",
            "--server",
            SERVER,
            "--token-env",
            "TOK",
            "--out",
            "secret.yaml",
        ],
        &[("TOK", token)],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("git work tree"), "{}", stderr(&out));
    assert!(!repo.path().join("secret.yaml").exists());
    // Allowed to stdout and outside any repository.
    let out = secret(
        repo.path(),
        &["--name", "c", "--server", SERVER, "--token-env", "TOK"],
        &[("TOK", token)],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(parse(&stdout(&out)).1["bearerToken"], token);
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("secret.yaml");
    let out = secret(
        repo.path(),
        &[
            "--name",
            "c",
            "--server",
            SERVER,
            "--token-env",
            "TOK",
            "--out",
            file.to_str().unwrap(),
        ],
        &[("TOK", token)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file).unwrap().contains(token));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // apply --secret-out writes the placeholder; no file in the work tree holds the token.
    let out = crate::common::command()
        .args([
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--cluster-name",
            "finance-prod-green",
            "--secret-out",
            "cluster-secret.yaml",
        ])
        .current_dir(repo.path())
        .env("TOK", token)
        .env("ARGOCD_CLUSTER_TOKEN", token)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(repo.path().join("cluster-secret.yaml")).unwrap();
    let (y, c) = parse(&written);
    assert_eq!(y["stringData"]["server"].as_str(), Some(NEW));
    assert_eq!(c["bearerToken"], "${ARGOCD_CLUSTER_TOKEN}");
    for (path, bytes) in tree(repo.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "{path} holds the token"
        );
    }
}

#[test]
fn warns_about_secrets_already_declaring_the_server() {
    let repo = temp_fixture();
    git_init_commit(repo.path());
    let out = secret(
        repo.path(),
        &[
            "--name",
            "c",
            "--server",
            &format!("{}/", OLD.to_ascii_lowercase()),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("    apps/cluster-bootstrap.yaml:12:12: Secret/cluster-finance-prod-blue\n"),
        "{err}"
    );
    assert!(
        err.contains(
            "    apps/argocd-external-secrets.yaml:31:11: ExternalSecret/cluster-finance-prod-blue\n"
        ),
        "{err}"
    );
    let out = secret(repo.path(), &["--name", "c", "--server", SERVER], &[]);
    assert_eq!(stderr(&out), "", "no warning for a server nobody declares");
}
