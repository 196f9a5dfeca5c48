//! `rebind secret` validates its input against Kubernetes', ArgoCD's and
//! AWS's own rules (exit 2, nothing printed), and quotes every emitted string
//! a YAML 1.1 reader could take for something else.

use crate::common::*;
use std::path::Path;
use std::process::Stdio;
use yaml_rust2::YamlLoader;

fn secret(cwd: &Path, args: &[&str]) -> std::process::Output {
    crate::common::command()
        .arg("secret")
        .args(args)
        .current_dir(cwd)
        .env("TOK", "t0ken")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn bad_input_is_refused_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let arn = "arn:aws:iam::123456789012:role/argocd-manager";
    let long = "a".repeat(64);
    let cases: &[(&[&str], &str)] = &[
        (
            &["--name", "Finance Prod"],
            "the Secret would be named \"cluster-Finance Prod\"",
        ),
        (
            &["--name", "c", "--secret-name", "Cluster_A"],
            "--secret-name \"Cluster_A\": must be a DNS-1123 subdomain",
        ),
        (
            &["--name", "c", "--secret-name", "a..b"],
            "DNS-1123 subdomain",
        ),
        (&["--name", " c"], "white space"),
        (
            &["--name", "c", "--namespace", ""],
            "--namespace \"\": must be a DNS-1123 label",
        ),
        (&["--name", "c", "--namespace", "Argo"], "DNS-1123 label"),
        (&["--name", "c", "--namespace", &long], "DNS-1123 label"),
        (
            &[
                "--name",
                "c",
                "--aws-cluster-name",
                "c",
                "--aws-role-arn",
                "not-an-arn",
            ],
            "not an IAM role ARN",
        ),
        (
            &[
                "--name",
                "c",
                "--aws-cluster-name",
                "c",
                "--aws-role-arn",
                "arn:aws:iam::1234:role/x",
            ],
            "not an IAM role ARN",
        ),
        (
            &["--name", "c", "--aws-role-arn", arn],
            "needs --aws-cluster-name",
        ),
        (
            &[
                "--name",
                "c",
                "--aws-cluster-name",
                "bad name",
                "--aws-role-arn",
                arn,
            ],
            "not an EKS cluster name",
        ),
        (
            &[
                "--name",
                "c",
                "--aws-role-arn",
                arn,
                "--external-secret",
                "--store",
                "s",
                "--key",
                "k",
            ],
            "--aws-role-arn and --external-secret choose different ways",
        ),
        (
            &[
                "--name",
                "c",
                "--token-env",
                "TOK",
                "--external-secret",
                "--store",
                "s",
                "--key",
                "k",
            ],
            "choose different ways",
        ),
        (
            &["--name", "c", "--store", "s", "--key", "k"],
            "add --external-secret",
        ),
        (
            &["--name", "c", "--external-secret", "--store", "s"],
            "needs --store NAME and --key KEY",
        ),
        (
            &[
                "--name",
                "c",
                "--external-secret",
                "--store",
                "s",
                "--key",
                "k",
                "--store-kind",
                "Vault",
            ],
            "ClusterSecretStore or SecretStore",
        ),
        (&["--name", "c", "--ca-data", "===="], "not base64"),
        (&["--name", "c", "--ca-data", "Zh=="], "not base64"),
        (&["--name", "c", "--ca-data", "Zm9v\nYmFy"], "not base64"),
        (
            &["--name", "c", "--label", "Example.com/env=prod"],
            "not a valid label key",
        ),
        (
            &["--name", "c", "--label", "a/b/c=v"],
            "not a valid label key",
        ),
        (
            &["--name", "c", "--label", &format!("k={long}")],
            "not a valid label value",
        ),
        (
            &["--name", "c", "--label", "env=a", "--label", "env=b"],
            "given twice",
        ),
        (
            &[
                "--name",
                "c",
                "--label",
                "argocd.argoproj.io/secret-type=repository",
            ],
            "always \"cluster\"",
        ),
        (
            &["--name", "c", "--annotation", "bad key=v"],
            "not a valid annotation key",
        ),
        (
            &["--name", "c", "--project", "Platform Team"],
            "not a valid AppProject name",
        ),
        (
            &["--name", "c", "--namespaces", "keda, karpenter"],
            "\" karpenter\" is not a namespace name",
        ),
        (
            &["--name", "c", "--server-name", "api internal"],
            "not a host name",
        ),
    ];
    for (args, msg) in cases {
        let mut all = args.to_vec();
        all.extend(["--server", NEW]);
        let out = secret(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert_eq!(stdout(&out), "", "{args:?}");
        assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn strings_a_yaml_1_1_reader_would_misread_are_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let tricky = [
        "0b101",
        "1_000",
        "2024-01-01",
        "12:30",
        "190:20:30",
        "yes",
        "on",
        "Off",
        "y",
        "~",
        "null",
        ".inf",
        "-.inf",
        ".nan",
        "0o17",
        "017",
        "0x1f",
        "+12",
        "1e3",
        "1.5",
        "=",
        "<<",
        "true",
    ];
    for v in tricky {
        let mut args = vec![
            format!("--name={v}"),
            "--secret-name".into(),
            "c".into(),
            "--server".into(),
            NEW.into(),
            "--annotation".into(),
            format!("note={v}"),
            "--aws-cluster-name".into(),
            "c".into(),
            "--aws-role-arn".into(),
            "arn:aws:iam::123456789012:role/r".into(),
            format!("--aws-profile={v}"),
        ];
        let label_ok = v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            && v.as_bytes()[0].is_ascii_alphanumeric()
            && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric();
        if label_ok {
            args.extend(["--label".into(), format!("tier={v}")]);
        }
        let out = secret(
            dir.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(out.status.code(), Some(0), "{v}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains(&format!("\n  name: \"{v}\"\n")),
            "{v}:\n{text}"
        );
        assert!(
            text.contains(&format!("\n    note: \"{v}\"\n")),
            "{v}:\n{text}"
        );
        if label_ok {
            assert!(
                text.contains(&format!("\n    tier: \"{v}\"\n")),
                "{v}:\n{text}"
            );
        }
        let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
        assert_eq!(doc["stringData"]["name"].as_str(), Some(v), "{v}");
        assert_eq!(
            doc["metadata"]["annotations"]["note"].as_str(),
            Some(v),
            "{v}"
        );
        let config: serde_json::Value =
            serde_json::from_str(doc["stringData"]["config"].as_str().unwrap()).unwrap();
        assert_eq!(config["awsAuthConfig"]["profile"], v, "{v}");
    }
    // Ordinary names stay plain.
    let out = secret(
        dir.path(),
        &["--name", "finance-prod-green", "--server", NEW],
    );
    assert!(stdout(&out).contains("\n  name: finance-prod-green\n"));
}

#[test]
fn line_separators_and_control_characters_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let v = "a\u{2028}b\u{85}c\"d\\e";
    let out = secret(
        dir.path(),
        &[
            "--name",
            "c",
            "--server",
            NEW,
            "--annotation",
            &format!("note={v}"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("note: \"a\\u2028b\\u0085c\\\"d\\\\e\"\n"),
        "{text}"
    );
    let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
    assert_eq!(doc["metadata"]["annotations"]["note"].as_str(), Some(v));
}
