//! `apply --secret-out` writes the cluster Secret in every form `rebind
//! secret` supports, from the same flags, byte for byte what `rebind secret`
//! prints; a bad flag or a forbidden output path stops the run before
//! anything is written.
//!
//! These need `apply` to flatten the secret flags (command-line glue).

use crate::common::*;
use std::path::Path;

const ARN: &str = "arn:aws:iam::123456789012:role/argocd-manager";

/// The fixture without the registration it declares for OLD (its Secret and
/// ExternalSecret), so the rebind leaves the Secret to `--secret-out`.
fn repo_without_registration() -> tempfile::TempDir {
    let repo = temp_fixture();
    std::fs::remove_file(repo.path().join("apps/cluster-bootstrap.yaml")).unwrap();
    std::fs::remove_file(repo.path().join("apps/argocd-external-secrets.yaml")).unwrap();
    git_init_commit(repo.path());
    repo
}

fn apply_with(repo: &Path, secret_flags: &[&str]) -> std::process::Output {
    let mut args = vec![
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
    ];
    args.extend(secret_flags);
    rebind(repo, &args)
}

fn secret_with(cwd: &Path, secret_flags: &[&str]) -> String {
    let mut args = vec!["secret", "--name", "finance-prod-green", "--server", NEW];
    args.extend(secret_flags);
    let out = rebind(cwd, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn secret_out_writes_every_form_rebind_secret_does() {
    let forms: &[&[&str]] = &[
        &[
            "--aws-cluster-name",
            "finance-prod-green",
            "--aws-role-arn",
            ARN,
            "--ca-data",
            "Zm9vYmFy",
            "--label",
            "env=prod",
        ],
        &[
            "--external-secret",
            "--store",
            "aws-secrets-manager",
            "--key",
            "argocd/finance-prod-green",
            "--namespace",
            "gitops",
        ],
        &[
            "--secret-name",
            "green",
            "--ca-data",
            "Zm9vYmFy",
            "--project",
            "platform",
        ],
    ];
    for flags in forms {
        let repo = repo_without_registration();
        let out = apply_with(repo.path(), flags);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
        let written = std::fs::read_to_string(repo.path().join("cluster-secret.yaml")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(written, secret_with(outside.path(), flags), "{flags:?}");
    }
}

#[test]
fn a_bad_secret_flag_stops_apply_before_anything_is_written() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--aws-cluster-name", "c", "--aws-role-arn", "not-an-arn"],
            "not an IAM role ARN",
        ),
        (
            &[
                "--aws-cluster-name",
                "c",
                "--aws-role-arn",
                ARN,
                "--external-secret",
            ],
            "choose different ways",
        ),
        (&["--namespace", ""], "DNS-1123 label"),
    ];
    for (flags, msg) in cases {
        let repo = repo_without_registration();
        let before = tree(repo.path());
        let out = apply_with(repo.path(), flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&out).contains(msg), "{flags:?}: {}", stderr(&out));
        assert_eq!(tree(repo.path()), before, "{flags:?}: nothing written");
        assert_eq!(git(repo.path(), &["branch", "--list"]), "* main\n");
    }
    // A real token may not go into the work tree: refused before the rewrite.
    let repo = repo_without_registration();
    let before = tree(repo.path());
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
            "--token-env",
            "TOK",
        ])
        .current_dir(repo.path())
        .env("TOK", "s3cr3t")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("git work tree"), "{}", stderr(&out));
    assert_eq!(tree(repo.path()), before);
    // Secret flags without --secret-out are a usage error, not ignored.
    let out = rebind(
        repo.path(),
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--yes",
            "--secret-name",
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--secret-out"), "{}", stderr(&out));
    assert_eq!(tree(repo.path()), before);
}
