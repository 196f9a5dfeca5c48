//! Every Kubernetes manifest rebind emits, in each form: the cluster Secret
//! (bearer token placeholder, a real token from `--token-env`, a CA from a
//! file or base64, EKS IAM role, every optional field), the ExternalSecret
//! (with and without a CA, either store kind), as printed, written with
//! `--out` and written by `apply --secret-out`.
//!
//! With `REBIND_MANIFEST_DIR` set, each is also written there for `.ci/run`
//! to validate with real validators (`.ci/validate-manifests.py`:
//! `kubernetes-validate` for the Secret, the external-secrets CRD schema for
//! the ExternalSecret).

use crate::common::*;
use std::path::Path;
use std::process::Stdio;
use yaml_rust2::{Yaml, YamlLoader};

/// Keeps a copy of an emitted manifest for the validation in CI.
fn keep(name: &str, manifest: &str) {
    if let Some(dir) = std::env::var_os("REBIND_MANIFEST_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.yaml")), manifest).unwrap();
    }
}

/// `rebind secret ARGS` in an empty directory outside any repository, with
/// `env`; its stdout (exit 0 required).
fn secret(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = crate::common::command()
        .arg("secret")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The one document of `manifest`, its kind and the registered server.
fn kind_and_server(manifest: &str) -> (String, String) {
    let docs = YamlLoader::load_from_str(manifest).unwrap();
    assert_eq!(docs.len(), 1, "{manifest}");
    let d = &docs[0];
    let kind = d["kind"].as_str().unwrap().to_string();
    let data = if kind == "ExternalSecret" {
        &d["spec"]["target"]["template"]["data"]
    } else {
        &d["stringData"]
    };
    let server = match &data["server"] {
        Yaml::String(s) => s.clone(),
        other => panic!("no server in {manifest}: {other:?}"),
    };
    (kind, server)
}

const EKS_ROLE: &[&str] = &[
    "--aws-cluster-name",
    "finance-prod-green",
    "--aws-role-arn",
    "arn:aws:iam::123456789012:role/argocd-manager",
];
const EXTERNAL: &[&str] = &[
    "--external-secret",
    "--store",
    "aws-secrets-manager",
    "--key",
    "argocd/finance-prod-green",
];
const EVERY_FIELD: &[&str] = &[
    "--secret-name",
    "finance.green",
    "--namespace",
    "argo-cd",
    "--server-name",
    "api.internal.example",
    "--label",
    "env=prod",
    "--label",
    "team.example.com/owner=platform_team",
    "--annotation",
    "example.com/ticket=CHG-1 (cutover)",
    "--project",
    "finance",
    "--namespaces",
    "a,b",
    "--cluster-resources",
    "true",
];

/// A form's name, its flags beyond `--name` and `--server`, its environment.
type Form<'a> = (&'a str, Vec<&'a str>, &'a [(&'a str, &'a str)]);

#[test]
fn every_form_of_the_cluster_registration_is_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let ca = ca.to_str().unwrap();
    let base = ["--name", "finance-prod-green", "--server", NEW];
    let token = [("CUTOVER_TOKEN", "eyJhbGciOiJSUzI1NiJ9.e30.sig")];
    let forms: Vec<Form> = vec![
        ("secret-bearer-placeholder", vec![], &[]),
        ("secret-ca-file", vec!["--ca-file", ca], &[]),
        (
            "secret-token-env-ca-data",
            vec!["--token-env", "CUTOVER_TOKEN", "--ca-data", "Q0E="],
            &token,
        ),
        ("secret-eks-role", EKS_ROLE.to_vec(), &[]),
        (
            "secret-eks-role-profile-every-field",
            [EKS_ROLE, &["--aws-profile", "prod"], EVERY_FIELD].concat(),
            &[],
        ),
        ("secret-every-field", EVERY_FIELD.to_vec(), &[]),
        ("external-secret", EXTERNAL.to_vec(), &[]),
        (
            "external-secret-ca-secret-store-every-field",
            [
                EXTERNAL,
                &["--store-kind", "SecretStore", "--ca-data", "Q0E="],
                EVERY_FIELD,
            ]
            .concat(),
            &[],
        ),
        // An IPv6 server, written as a quoted-when-needed scalar.
        ("secret-ipv6-server", vec![], &[]),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (name, extra, env) in forms {
        let server = if name.contains("ipv6") {
            "https://[fd00::2]:6443"
        } else {
            NEW
        };
        let mut args = base.to_vec();
        args[3] = server;
        args.extend(&extra);
        let manifest = secret(dir.path(), &args, env);
        let (kind, got) = kind_and_server(&manifest);
        let want_kind = if name.starts_with("external") {
            "ExternalSecret"
        } else {
            "Secret"
        };
        assert_eq!((kind.as_str(), got.as_str()), (want_kind, server), "{name}");
        assert!(
            seen.insert(manifest.clone()),
            "{name}: same as another form"
        );
        keep(name, &manifest);
        // The same manifest written with --out.
        let out = dir.path().join(format!("{name}.yaml"));
        let mut with_out = args.clone();
        with_out.extend(["--out", out.to_str().unwrap()]);
        secret(dir.path(), &with_out, env);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), manifest, "{name}");
    }
}

/// `apply --cluster-name --secret-out` writes the registration for the new
/// endpoint (the tree declares none).
#[test]
fn apply_writes_the_registration_for_the_new_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(
        tree.join("app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let out_file = dir.path().join("registration.yaml");
    for (name, extra) in [
        ("apply-secret-out", vec![]),
        ("apply-secret-out-external", EXTERNAL.to_vec()),
    ] {
        let mut args = vec![
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
            out_file.to_str().unwrap(),
        ];
        args.extend(&extra);
        args.push("tree");
        let out = rebind(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let manifest = std::fs::read_to_string(&out_file).unwrap();
        let want = if extra.is_empty() {
            "Secret"
        } else {
            "ExternalSecret"
        };
        assert_eq!(
            kind_and_server(&manifest),
            (want.to_string(), NEW.to_string()),
            "{name}"
        );
        keep(name, &manifest);
        // Back to the old endpoint for the next form.
        std::fs::write(
            tree.join("app.yaml"),
            std::fs::read_to_string(tree.join("app.yaml"))
                .unwrap()
                .replace(NEW, OLD),
        )
        .unwrap();
        std::fs::remove_file(&out_file).unwrap();
    }
}
