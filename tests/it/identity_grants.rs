//! Identity coverage as IAM evaluates it, grant by grant, and the trust
//! edits chosen from the decoded policy. Each fixture repository is built
//! in the test.
//!
//! The rules cited: IAM evaluates a web-identity request against a
//! statement only when `Effect` is `Allow`, `Action` takes
//! `sts:AssumeRoleWithWebIdentity`, `Principal.Federated` names the token's
//! provider and every condition key is in the token's context (the keys of
//! one block are ANDed; an issuer's `<issuer>:sub`/`:aud` keys are only in
//! its own tokens' context) — IAM User Guide, "IAM JSON policy elements:
//! Condition operators" and "Available keys for AWS web identity
//! federation". An explicit `Deny` never grants ("Policy evaluation
//! logic").

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const A: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const B: &str = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

fn host(id: &str) -> String {
    format!("oidc.eks.us-east-1.amazonaws.com/id/{id}")
}

fn url(id: &str) -> String {
    format!("https://{}", host(id))
}

fn arn_in(account: &str, id: &str) -> String {
    format!("arn:aws:iam::{account}:oidc-provider/{}", host(id))
}

fn arn(id: &str) -> String {
    arn_in("111122223333", id)
}

/// A JSON statement: `Federated` (raw JSON), the id of its condition keys,
/// its operator and `sub` value (raw JSON), its effect and Sid.
fn st(sid: &str, federated: &str, key_id: &str, op: &str, sub: &str, effect: &str) -> String {
    format!(
        "    {{\"Sid\": \"{sid}\", \"Effect\": \"{effect}\", \"Action\": \"sts:AssumeRoleWithWebIdentity\", \"Principal\": {{\"Federated\": {federated}}}, \"Condition\": {{\"{op}\": {{\"{}:sub\": {sub}, \"{}:aud\": \"sts.amazonaws.com\"}}}}}}",
        host(key_id),
        host(key_id)
    )
}

fn policy(statements: &[String]) -> String {
    format!(
        "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n{}\n  ]\n}}\n",
        statements.join(",\n")
    )
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// `identity --format json --oidc-from A --oidc-to B` (plus `extra`).
fn identity(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let (a, b) = (url(A), url(B));
    let mut args = vec![
        "identity",
        "--format",
        "json",
        "--oidc-from",
        &a,
        "--oidc-to",
        &b,
    ];
    args.extend_from_slice(extra);
    let o = rebind(dir, &args);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), v, stderr(&o))
}

fn coverage(v: &Value) -> Vec<(String, String)> {
    v["trusts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["resource"]
                    .as_str()
                    .unwrap_or(t["path"].as_str().unwrap())
                    .to_string(),
                t["coverage"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn sa(name: &str) -> String {
    q(&format!("system:serviceaccount:{name}:{name}"))
}

#[test]
fn a_role_with_several_service_accounts_is_ready_only_when_each_has_its_twin() {
    let d = tempfile::tempdir().unwrap();
    // Two service accounts on the old issuer; the new issuer's copy of one.
    let text = policy(&[
        st(
            "Karpenter",
            &q(&arn(A)),
            A,
            "StringEquals",
            &sa("karpenter"),
            "Allow",
        ),
        st(
            "Velero",
            &q(&arn(A)),
            A,
            "StringEquals",
            &sa("velero"),
            "Allow",
        ),
        st(
            "KarpenterNew",
            &q(&arn(B)),
            B,
            "StringEquals",
            &sa("karpenter"),
            "Allow",
        ),
    ]);
    write(d.path(), &[("role.json", &text)]);
    let (code, v, err) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v} {err}");
    assert_eq!(v["ready"], false);
    assert_eq!(coverage(&v), vec![("role.json".into(), "partial".into())]);
    let missing = &v["trusts"][0]["missing_grants"];
    assert_eq!(missing.as_array().unwrap().len(), 1, "{missing}");
    assert_eq!(missing[0]["code"], "identity.grant_missing");
    assert_eq!(missing[0]["statement"], "Velero");
    assert_eq!(missing[0]["subject"], "system:serviceaccount:velero:velero");
    assert_eq!(missing[0]["audience"], "sts.amazonaws.com");
    assert_eq!(missing[0]["issuer"], url(A));

    // --trust add adds exactly the missing one: a copy of Velero.
    let (code, v, err) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(v["edits"].as_array().unwrap().len(), 1, "{v}");
    let after = std::fs::read_to_string(d.path().join("role.json")).unwrap();
    let velero_new = st(
        &format!("Velero{}", &B[..8]),
        &q(&arn(B)),
        B,
        "StringEquals",
        &sa("velero"),
        "Allow",
    );
    let velero_line = text.lines().find(|l| l.contains("\"Velero\"")).unwrap();
    assert_eq!(
        after,
        // (The line holds its comma.)
        text.replace(
            &format!("{velero_line}\n"),
            &format!("{velero_line}\n{velero_new},\n")
        ),
        "{after}"
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["ready"], true);
    // Nothing to change only now.
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--oidc-from",
            &url(A),
            "--oidc-to",
            &url(B),
            "--trust",
            "add",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Nothing to change."), "{}", stdout(&o));
}

#[test]
fn a_statement_whose_principal_and_keys_name_different_issuers_grants_nobody() {
    let d = tempfile::tempdir().unwrap();
    // The new provider as principal, the old issuer's keys: no token has
    // both, so the new cluster gets nothing from it.
    write(
        d.path(),
        &[(
            "role.json",
            &policy(&[
                st("Old", &q(&arn(A)), A, "StringEquals", &sa("app"), "Allow"),
                st("Half", &q(&arn(B)), A, "StringEquals", &sa("app"), "Allow"),
            ]),
        )],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(coverage(&v), vec![("role.json".into(), "old_only".into())]);
    let mm = &v["trusts"][0]["mismatched"];
    assert_eq!(mm[0]["code"], "identity.statement_mismatched");
    assert_eq!(mm[0]["statement"], "Half");
    // The add copies the real old grant.
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(0), "{v}");
    let (code, _, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(0));
}

#[test]
fn deny_never_counts_and_every_operator_and_value_shape_is_read() {
    let d = tempfile::tempdir().unwrap();
    let sub_list = format!("[{}, {}]", sa("a"), sa("b"));
    write(
        d.path(),
        &[
            // A Deny for the new issuer is no twin, and it would deny the
            // twin `--trust add` makes: not proven.
            (
                "deny.json",
                &policy(&[
                    st("Old", &q(&arn(A)), A, "StringEquals", &sa("a"), "Allow"),
                    st("New", &q(&arn(B)), B, "StringEquals", &sa("a"), "Deny"),
                ]),
            ),
            // StringLike with a list of values, the principal as a list,
            // and the twin under ForAnyValue:StringLike.
            (
                "like.json",
                &policy(&[
                    st(
                        "Old",
                        &format!("[{}]", q(&arn(A))),
                        A,
                        "StringLike",
                        &sub_list,
                        "Allow",
                    ),
                    st(
                        "New",
                        &q(&arn(B)),
                        B,
                        "ForAnyValue:StringLike",
                        &sub_list,
                        "Allow",
                    ),
                ]),
            ),
            // A list value whose twin lacks one member.
            (
                "short.json",
                &policy(&[
                    st("Old", &q(&arn(A)), A, "StringEquals", &sub_list, "Allow"),
                    st("New", &q(&arn(B)), B, "StringEquals", &sa("a"), "Allow"),
                ]),
            ),
            // `Statement` as one object.
            (
                "single.json",
                &format!(
                    "{{\"Statement\": {}}}\n",
                    st("One", &q(&arn(A)), A, "StringEquals", &sa("a"), "Allow").trim()
                ),
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        coverage(&v),
        vec![
            ("deny.json".into(), "not_proven".into()),
            ("like.json".into(), "old_and_new".into()),
            ("short.json".into(), "partial".into()),
            ("single.json".into(), "old_only".into()),
        ]
    );
    assert_eq!(v["trusts"][0]["denied"][0]["statement"], "New", "{v}");
    // A single statement object is not edited in place: refused, exit 2.
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(2), "{v}");
    assert_eq!(v["error"]["code"], "identity.edit_refused");
    assert_eq!(v["written"], false);
}

#[test]
fn a_literal_terraform_trust_of_each_spelling_keeps_identity_at_exit_1() {
    let jsonencode = |ids: &[&str]| {
        let sts: Vec<String> = ids
            .iter()
            .map(|id| {
                format!(
                    "      {{\n        Effect    = \"Allow\"\n        Action    = \"sts:AssumeRoleWithWebIdentity\"\n        Principal = {{ Federated = \"{}\" }}\n        Condition = {{\n          StringEquals = {{ \"{}:sub\" = \"system:serviceaccount:a:a\" }}\n        }}\n      }}",
                    arn(id),
                    host(id)
                )
            })
            .collect();
        format!(
            "resource \"aws_iam_role\" \"a\" {{\n  name = \"a\"\n  assume_role_policy = jsonencode({{\n    Version = \"2012-10-17\"\n    Statement = [\n{}\n    ]\n  }})\n}}\n",
            sts.join(",\n")
        )
    };
    let document = |ids: &[&str]| {
        let sts: Vec<String> = ids
            .iter()
            .map(|id| {
                format!(
                    "  statement {{\n    actions = [\"sts:AssumeRoleWithWebIdentity\"]\n    principals {{\n      type        = \"Federated\"\n      identifiers = [\"{}\"]\n    }}\n    condition {{\n      test     = \"StringEquals\"\n      variable = \"{}:sub\"\n      values   = [\"system:serviceaccount:b:b\"]\n    }}\n  }}\n",
                    arn(id),
                    host(id)
                )
            })
            .collect();
        format!(
            "data \"aws_iam_policy_document\" \"b\" {{\n{}}}\n",
            sts.join("")
        )
    };
    let heredoc = |ids: &[&str]| {
        let sts: Vec<String> = ids
            .iter()
            .map(|id| st("C", &q(&arn(id)), id, "StringEquals", &sa("c"), "Allow"))
            .collect();
        format!(
            "resource \"aws_iam_role\" \"c\" {{\n  assume_role_policy = <<-EOF\n{}  EOF\n}}\n",
            policy(&sts)
        )
    };
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("tf/jsonencode.tf", &jsonencode(&[A])),
            ("tf/document.tf", &document(&[A])),
            ("tf/heredoc.tf", &heredoc(&[A])),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    let mut places: Vec<(String, u64)> = v["terraform"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["code"], "identity.terraform_pending");
            assert!(t["message"]
                .as_str()
                .unwrap()
                .contains("before the cutover"));
            (
                t["path"].as_str().unwrap().to_string(),
                t["line"].as_u64().unwrap(),
            )
        })
        .collect();
    places.sort();
    places.dedup_by_key(|p| p.0.clone());
    assert_eq!(
        places,
        vec![
            ("tf/document.tf".to_string(), 6),
            ("tf/heredoc.tf".to_string(), 6),
            ("tf/jsonencode.tf".to_string(), 9),
        ]
    );
    // The text report names file:line and the sentence to act on.
    let o = rebind(
        d.path(),
        &["identity", "--oidc-from", &url(A), "--oidc-to", &url(B)],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("tf/document.tf:6:"), "{}", stdout(&o));
    // Each with its copy for the new issuer: covered.
    write(
        d.path(),
        &[
            ("tf/jsonencode.tf", &jsonencode(&[A, B])),
            ("tf/document.tf", &document(&[A, B])),
            ("tf/heredoc.tf", &heredoc(&[A, B])),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(v["terraform"], serde_json::json!([]), "{v}");
    assert_eq!(code, Some(0), "{v}");
    // A copy for another service account is no twin.
    write(
        d.path(),
        &[(
            "tf/document.tf",
            &document(&[A, B]).replacen(
                &format!(
                    "{}:sub\"\n      values   = [\"system:serviceaccount:b:b\"]",
                    host(B)
                ),
                &format!(
                    "{}:sub\"\n      values   = [\"system:serviceaccount:x:x\"]",
                    host(B)
                ),
                1,
            ),
        )],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
}

#[test]
fn a_trust_a_chart_renders_from_values_is_not_followed_and_not_proven() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("charts/irsa/Chart.yaml", "apiVersion: v2\nname: irsa\nversion: 0.1.0\n"),
            (
                "charts/irsa/values.yaml",
                &format!("oidcProvider: {}\naccount: \"111122223333\"\n", host(A)),
            ),
            (
                "charts/irsa/templates/role.yaml",
                "apiVersion: iam.aws.upbound.io/v1beta1\nkind: Role\nmetadata:\n  name: app\nspec:\n  forProvider:\n    assumeRolePolicy: |\n      {\n        \"Statement\": [{\n          \"Effect\": \"Allow\",\n          \"Action\": \"sts:AssumeRoleWithWebIdentity\",\n          \"Principal\": {\"Federated\": \"arn:aws:iam::{{ .Values.account }}:oidc-provider/{{ .Values.oidcProvider }}\"},\n          \"Condition\": {\"StringEquals\": {\"{{ .Values.oidcProvider }}:sub\": \"system:serviceaccount:app:app\"}}\n        }]\n      }\n",
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(coverage(&v), vec![("Role/app".into(), "not_proven".into())]);
    assert_eq!(v["not_proven_count"], 1);
    assert_eq!(
        v["trusts"][0]["not_proven"][0]["code"],
        "identity.not_proven"
    );
    // --trust add never says "Nothing to change" for it.
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(2), "{v}");
    assert_eq!(v["error"]["code"], "identity.not_proven");
}

#[test]
fn github_actions_and_a_page_about_it_are_never_cluster_trusts() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            (
                "tf/github.tf",
                "resource \"aws_iam_openid_connect_provider\" \"github\" {\n  url            = \"https://token.actions.githubusercontent.com\"\n  client_id_list = [\"sts.amazonaws.com\"]\n}\n\ndata \"aws_iam_policy_document\" \"ci\" {\n  statement {\n    principals {\n      type        = \"Federated\"\n      identifiers = [aws_iam_openid_connect_provider.github.arn]\n    }\n  }\n}\n",
            ),
            (
                "docs/ci.md",
                "| provider | resource |\n| --- | --- |\n| GitHub Actions | `aws_iam_openid_connect_provider.github` |\n| EKS | `module.eks.oidc_provider_arn` |\n",
            ),
            (
                "ci-role.json",
                "{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"sts:AssumeRoleWithWebIdentity\", \"Principal\": {\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/token.actions.githubusercontent.com\"}, \"Condition\": {\"StringLike\": {\"token.actions.githubusercontent.com:sub\": \"repo:o/r:*\"}}}]}\n",
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["dynamic"], serde_json::json!([]), "{v}");
    assert_eq!(v["trusts"], serde_json::json!([]), "{v}");
    assert_eq!(v["reference_count"], 0);
}

#[test]
fn the_new_provider_is_required_in_every_account_that_names_the_old_one() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            (
                "prod.json",
                &policy(&[st(
                    "P",
                    &q(&arn_in("111122223333", A)),
                    A,
                    "StringEquals",
                    &sa("a"),
                    "Allow",
                )]),
            ),
            (
                "shared.json",
                &policy(&[st(
                    "S",
                    &q(&arn_in("444455556666", A)),
                    A,
                    "StringEquals",
                    &sa("a"),
                    "Allow",
                )]),
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1));
    let providers = v["providers"].as_array().unwrap();
    let accounts: Vec<&str> = providers
        .iter()
        .map(|p| p["account"].as_str().unwrap())
        .collect();
    assert_eq!(accounts, ["111122223333", "444455556666"]);
    for p in providers {
        assert_eq!(p["code"], "identity.provider_required");
        assert_eq!(
            p["command"],
            format!(
                "aws iam create-open-id-connect-provider --url {} --client-id-list sts.amazonaws.com",
                url(B)
            )
        );
        assert_eq!(p["provider_arn"], arn_in(p["account"].as_str().unwrap(), B));
        let tf = p["terraform"].as_str().unwrap();
        assert!(
            tf.starts_with("resource \"aws_iam_openid_connect_provider\""),
            "{tf}"
        );
        assert!(
            tf.contains(&format!("url            = \"{}\"", url(B))),
            "{tf}"
        );
    }
    let o = rebind(
        d.path(),
        &["identity", "--oidc-from", &url(A), "--oidc-to", &url(B)],
    );
    let text = stdout(&o);
    assert!(text.contains("must exist in 2 accounts"), "{text}");
    assert!(text.contains("account 444455556666"), "{text}");
}

#[test]
fn remove_retired_refuses_a_current_issuer_and_cuts_adjacent_statements() {
    let d = tempfile::tempdir().unwrap();
    let text = policy(&[
        st("A1", &q(&arn(A)), A, "StringEquals", &sa("a"), "Allow"),
        st("A2", &q(&arn(A)), A, "StringEquals", &sa("b"), "Allow"),
        st("B1", &q(&arn(B)), B, "StringEquals", &sa("a"), "Allow"),
        st("B2", &q(&arn(B)), B, "StringEquals", &sa("b"), "Allow"),
    ]);
    write(
        d.path(),
        &[
            ("role.json", &text),
            (
                ".rebind.yaml",
                &format!(
                    "clusters:\n  prod:\n    endpoint: https://{B}.gr7.us-east-1.eks.amazonaws.com\n    oidc_issuer: {}\n    retired_oidc: [{}]\n",
                    url(B),
                    url(A)
                ),
            ),
        ],
    );
    // B is current for cluster prod: an easy swap of two ids, refused.
    let (a, b) = (url(A), url(B));
    for args in [
        // B is current for cluster prod: an easy swap of two ids.
        vec!["--oidc-retired", b.as_str()],
        // A is the new issuer of this very run.
        vec!["--oidc-retired", &a, "--oidc-from", &b, "--oidc-to", &a],
    ] {
        let mut all = vec![
            "identity",
            "--format",
            "json",
            "--trust",
            "remove-retired",
            "--yes",
        ];
        all.extend(args.iter().copied());
        let o = rebind(d.path(), &all);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["error"]["code"], "identity.retired_is_current", "{v}");
        assert_eq!(v["written"], false);
        assert_eq!(
            std::fs::read_to_string(d.path().join("role.json")).unwrap(),
            text
        );
    }
    // A, retired: the two adjacent statements at the head go, the JSON
    // stays valid and holds exactly B1 and B2.
    let o = rebind(
        d.path(),
        &["identity", "--trust", "remove-retired", "--yes"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read_to_string(d.path().join("role.json")).unwrap();
    assert_eq!(
        after,
        policy(&[
            st("B1", &q(&arn(B)), B, "StringEquals", &sa("a"), "Allow"),
            st("B2", &q(&arn(B)), B, "StringEquals", &sa("b"), "Allow"),
        ])
    );
}

#[test]
fn edits_read_yaml_as_identity_does_comments_flow_mappings_quoted_strings() {
    let d = tempfile::tempdir().unwrap();
    // A comment on the `Statement:` line, block items that are flow
    // mappings with a Sid.
    let cfn = format!(
        "Resources:\n  Role:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement: # IRSA, one per service account\n          - {{Sid: App, Effect: Allow, Action: 'sts:AssumeRoleWithWebIdentity', Principal: {{Federated: '{}'}}, Condition: {{StringEquals: {{'{}:sub': 'system:serviceaccount:app:app'}}}}}}\n          - {{Sid: Ec2, Effect: Allow, Action: 'sts:AssumeRole', Principal: {{Service: ec2.amazonaws.com}}}}\n",
        arn(A),
        host(A)
    );
    write(d.path(), &[("cfn.yaml", &cfn)]);
    let (code, v, err) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(0), "{v} {err}");
    let after = std::fs::read_to_string(d.path().join("cfn.yaml")).unwrap();
    let app = cfn.lines().find(|l| l.contains("Sid: App")).unwrap();
    let copy = app
        .replace(A, B)
        .replace("Sid: App", &format!("Sid: App{}", &B[..8]));
    assert_eq!(
        after,
        cfn.replace(&format!("{app}\n"), &format!("{app}\n{copy}\n"))
    );
    // Removal after the teardown gives back the file with B only.
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--trust",
            "remove-retired",
            "--oidc-retired",
            &url(A),
            "--yes",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("cfn.yaml")).unwrap(),
        cfn.replace(app, &copy)
    );

    // A policy in a quoted YAML string: read as identity reads it, and the
    // edit refused (never "Nothing to change"), nothing written.
    let d = tempfile::tempdir().unwrap();
    let inner = policy(&[st("Q", &q(&arn(A)), A, "StringEquals", &sa("q"), "Allow")]);
    let quoted = format!(
        "apiVersion: iam.services.k8s.aws/v1alpha1\nkind: Role\nmetadata:\n  name: quoted\nspec:\n  assumeRolePolicyDocument: {}\n",
        serde_json::to_string(&inner).unwrap()
    );
    write(d.path(), &[("ack.yaml", &quoted)]);
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        coverage(&v),
        vec![("Role/quoted".into(), "old_only".into())]
    );
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(2), "{v}");
    assert_eq!(v["error"]["code"], "identity.edit_refused");
    assert_eq!(
        std::fs::read_to_string(d.path().join("ack.yaml")).unwrap(),
        quoted
    );
}

#[test]
fn cloudformation_functions_build_principals_read_and_edited_alike() {
    let d = tempfile::tempdir().unwrap();
    let cond = |id: &str| {
        format!(
            "            Condition:\n              StringEquals:\n                {}:sub: system:serviceaccount:a:a\n",
            host(id)
        )
    };
    let role = |name: &str, federated: &str| {
        format!(
            "  {name}:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - Effect: Allow\n            Action: sts:AssumeRoleWithWebIdentity\n            Principal:\n              Federated: {federated}\n{}",
            cond(A)
        )
    };
    let template = format!(
        "Parameters:\n  OidcProviderArn:\n    Type: String\n    Default: {}\nResources:\n{}{}{}{}",
        arn(A),
        role(
            "SubLong",
            &format!("\n                Fn::Sub: arn:${{AWS::Partition}}:iam::${{AWS::AccountId}}:oidc-provider/{}", host(A))
        ),
        role(
            "JoinLong",
            &format!("\n                Fn::Join: ['', ['arn:aws:iam::', !Ref AWS::AccountId, ':oidc-provider/{}']]", host(A))
        ),
        role(
            "JoinShort",
            &format!("!Join ['', ['arn:aws:iam::', !Ref AWS::AccountId, ':oidc-provider/{}']]", host(A))
        ),
        role("RefParam", "!Ref OidcProviderArn"),
    );
    // `!Sub` with a parameter of its own: read through the default.
    let with_sub = template.replace(
        "Resources:\n",
        &format!(
            "  OidcProvider:\n    Type: String\n    Default: {}\nResources:\n",
            host(A)
        ),
    ) + &role(
        "SubParam",
        "!Sub 'arn:aws:iam::${AWS::AccountId}:oidc-provider/${OidcProvider}'",
    );
    write(d.path(), &[("cfn.yaml", &with_sub)]);
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(
        coverage(&v).last().unwrap(),
        &(
            "AWS::IAM::Role/SubParam".to_string(),
            "old_only".to_string()
        )
    );
    write(d.path(), &[("cfn.yaml", &template)]);
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    let want: Vec<(String, String)> = ["SubLong", "JoinLong", "JoinShort", "RefParam"]
        .iter()
        .map(|r| (format!("AWS::IAM::Role/{r}"), "old_only".to_string()))
        .collect();
    assert_eq!(coverage(&v), want);
    // The add: three copies (the Ref's copy would need a new parameter:
    // refused rather than left undone).
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(2), "{v}");
    assert_eq!(v["error"]["code"], "identity.edit_refused");
    // Without the Ref role, every role gets its copy and is ready.
    let no_ref = template[..template.find("  RefParam:").unwrap()].to_string();
    write(d.path(), &[("cfn.yaml", &no_ref)]);
    let (code, v, err) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(0), "{v} {err}");
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert!(coverage(&v).iter().all(|(_, c)| c == "old_and_new"), "{v}");
}

#[test]
fn issuers_of_every_partition_are_read_and_named_with_their_partition() {
    let d = tempfile::tempdir().unwrap();
    let cn = |id: &str| format!("oidc.eks.cn-northwest-1.amazonaws.com.cn/id/{id}");
    let gov = |id: &str| format!("oidc.eks.us-gov-west-1.amazonaws.com/id/{id}");
    let stmt = |partition: &str, h: &str| {
        format!(
            "{{\"Statement\": [{{\"Effect\": \"Allow\", \"Action\": \"sts:AssumeRoleWithWebIdentity\", \"Principal\": {{\"Federated\": \"arn:{partition}:iam::111122223333:oidc-provider/{h}\"}}, \"Condition\": {{\"StringEquals\": {{\"{h}:sub\": \"system:serviceaccount:a:a\"}}}}}}]}}\n"
        )
    };
    write(
        d.path(),
        &[
            ("cn.json", &stmt("aws-cn", &cn(A))),
            ("gov.json", &stmt("aws-us-gov", &gov(A))),
        ],
    );
    for (old, new, file, partition) in [
        (cn(A), cn(B), "cn.json", "aws-cn"),
        (gov(A), gov(B), "gov.json", "aws-us-gov"),
    ] {
        let o = rebind(
            d.path(),
            &[
                "identity",
                "--format",
                "json",
                "--oidc-from",
                &format!("https://{old}"),
                "--oidc-to",
                &format!("https://{new}"),
            ],
        );
        assert_eq!(o.status.code(), Some(1));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let cov: Vec<(String, String)> = coverage(&v)
            .into_iter()
            .filter(|(p, _)| p == file)
            .collect();
        assert_eq!(cov, vec![(file.to_string(), "old_only".to_string())]);
        assert_eq!(v["providers"][0]["partition"], partition);
        assert_eq!(
            v["providers"][0]["provider_arn"],
            format!("arn:{partition}:iam::111122223333:oidc-provider/{new}")
        );
    }
}

#[test]
fn a_chart_value_a_template_renders_into_a_trust_is_not_followed() {
    // The trust is built in a helper template from a value: rebind cannot
    // follow it, so the value is named and nothing is "ready".
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("charts/irsa/Chart.yaml", "apiVersion: v2\nname: irsa\nversion: 0.1.0\n"),
            (
                "charts/irsa/values.yaml",
                &format!("# the cluster's issuer\nirsa:\n  oidcProvider: {}\n", host(A)),
            ),
            (
                "charts/irsa/templates/_helpers.tpl",
                "{{- define \"trust\" -}}\n{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/{{ .Values.irsa.oidcProvider }}\"}}]}\n{{- end -}}\n",
            ),
            (
                "charts/irsa/templates/role.yaml",
                "apiVersion: iam.services.k8s.aws/v1alpha1\nkind: Role\nmetadata:\n  name: app\nspec:\n  assumeRolePolicyDocument: {{ include \"trust\" . | quote }}\n",
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["ready"], false);
    let nf = &v["not_followed"];
    assert_eq!(nf.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(nf[0]["code"], "identity.not_proven");
    assert_eq!(nf[0]["path"], "charts/irsa/values.yaml");
    assert_eq!(nf[0]["line"], 3);
    // --trust add has nothing it can edit, and says what is left: exit 1.
    let (code, v, _) = identity(d.path(), &["--trust", "add", "--yes"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["not_followed"][0]["path"], "charts/irsa/values.yaml");
    assert_eq!(v["written"], false);
}

/// `Old` (the old issuer, service account `app`), `New` (its twin) and
/// `extra`: the policy of one role.
fn twins_and(extra: &[String]) -> String {
    let mut sts = vec![
        st("Old", &q(&arn(A)), A, "StringEquals", &sa("app"), "Allow"),
        st("New", &q(&arn(B)), B, "StringEquals", &sa("app"), "Allow"),
    ];
    sts.extend_from_slice(extra);
    policy(&sts)
}

/// A statement for the new issuer's `app`, as `Deny`.
fn deny_new() -> String {
    st("Block", &q(&arn(B)), B, "StringEquals", &sa("app"), "Deny")
}

/// An explicit Deny overrides any Allow (IAM User Guide, "Policy evaluation
/// logic"): a Deny that may apply to `sts:AssumeRoleWithWebIdentity` for a
/// token of the old or the new issuer that a grant lets in (its conditions
/// not proven disjoint) keeps the role from "ready", and is named. A Deny
/// proven not to apply (another action, `NotAction` naming web identity,
/// another principal, another subject) leaves it ready.
#[test]
fn an_explicit_deny_that_may_apply_to_web_identity_keeps_a_role_from_ready() {
    let d = tempfile::tempdir().unwrap();
    let c = arn("CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC");
    let denies: Vec<(&str, String)> = vec![
        ("same-grant", deny_new()),
        (
            "star-principal",
            deny_new().replace(&format!("{{\"Federated\": {}}}", q(&arn(B))), "\"*\""),
        ),
        (
            "aws-star-principal",
            deny_new().replace(
                &format!("{{\"Federated\": {}}}", q(&arn(B))),
                "{\"AWS\": \"*\"}",
            ),
        ),
        (
            "not-principal",
            deny_new().replace(
                &format!("\"Principal\": {{\"Federated\": {}}}", q(&arn(B))),
                "\"NotPrincipal\": {\"AWS\": \"arn:aws:iam::111122223333:root\"}",
            ),
        ),
        (
            "action-star",
            deny_new().replace("sts:AssumeRoleWithWebIdentity", "*"),
        ),
        (
            "action-sts-star",
            deny_new().replace("sts:AssumeRoleWithWebIdentity", "sts:*"),
        ),
        (
            "action-glob",
            deny_new().replace("sts:AssumeRoleWithWebIdentity", "STS:assumerolewith*"),
        ),
        (
            "action-list",
            deny_new().replace(
                "\"sts:AssumeRoleWithWebIdentity\"",
                "[\"sts:TagSession\", \"sts:AssumeRoleWithWebIdentity\"]",
            ),
        ),
        (
            "not-action-other",
            deny_new().replace(
                "\"Action\": \"sts:AssumeRoleWithWebIdentity\"",
                "\"NotAction\": \"s3:*\"",
            ),
        ),
        (
            "sub-like",
            deny_new()
                .replace("StringEquals", "StringLike")
                .replace(&sa("app"), &q("system:serviceaccount:*")),
        ),
        (
            "unknown-condition",
            deny_new().replace("\"StringEquals\"", "\"StringNotEquals\""),
        ),
        (
            "no-condition",
            deny_new()
                .split(", \"Condition\"")
                .next()
                .unwrap()
                .to_string()
                + "}",
        ),
        // A Deny of the old issuer's grant.
        (
            "old-issuer",
            st("Block", &q(&arn(A)), A, "StringEquals", &sa("app"), "Deny"),
        ),
    ];
    let proven_apart: Vec<(&str, String)> = vec![
        (
            "other-subject",
            deny_new().replace(&sa("app"), &sa("other")),
        ),
        (
            "other-action",
            deny_new().replace("sts:AssumeRoleWithWebIdentity", "sts:TagSession"),
        ),
        (
            "not-action-web-identity",
            deny_new().replace("\"Action\"", "\"NotAction\""),
        ),
        (
            "aws-principal",
            deny_new().replace(
                &format!("{{\"Federated\": {}}}", q(&arn(B))),
                "{\"AWS\": \"arn:aws:iam::111122223333:root\"}",
            ),
        ),
        (
            "third-issuer",
            deny_new()
                .replace(&arn(B), &c)
                .replace(&host(B), &host("CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC")),
        ),
    ];
    let mut files = Vec::new();
    for (name, deny) in denies.iter().chain(&proven_apart) {
        files.push((
            format!("{name}.json"),
            twins_and(std::slice::from_ref(deny)),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    write(d.path(), &refs);
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["ready"], false);
    let cov = coverage(&v);
    for (name, _) in &denies {
        let file = format!("{name}.json");
        assert!(
            cov.contains(&(file.clone(), "not_proven".into())),
            "{name}: {cov:?}"
        );
        let t = v["trusts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"] == file.as_str())
            .unwrap();
        let denied = &t["denied"];
        assert_eq!(denied.as_array().unwrap().len(), 1, "{name}: {t}");
        assert_eq!(denied[0]["code"], "identity.denied");
        assert_eq!(denied[0]["statement"], "Block");
        assert_eq!(denied[0]["line"], 6, "{name}");
        assert!(
            denied[0]["reason"]
                .as_str()
                .unwrap()
                .contains("statement 3 "),
            "{name}: {denied}"
        );
    }
    for (name, _) in &proven_apart {
        let file = format!("{name}.json");
        assert!(
            cov.contains(&(file.clone(), "old_and_new".into())),
            "{name}: {cov:?}"
        );
    }
    // The text names the Deny.
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--oidc-from",
            &url(A),
            "--oidc-to",
            &url(B),
            "same-grant.json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains(
            "statement Block (line 6) denies: statement 3 of the policy is an explicit Deny"
        ),
        "{}",
        stdout(&o)
    );
}

/// A statement grants web identity only through an `Action` that names
/// `sts:AssumeRoleWithWebIdentity` (any case, or a wildcard matching it),
/// with every other element and condition read: `NotAction` naming web
/// identity grants nothing (IAM JSON reference, "NotAction"), and what the
/// model does not evaluate (`NotAction` of other actions, `NotPrincipal`,
/// `NotResource`, a wildcard principal, `Null`, an unknown operator or
/// key, a policy variable) is not proven, even where the old issuer's
/// statement says the same.
#[test]
fn only_an_action_naming_web_identity_grants_and_what_is_not_evaluated_is_not_proven() {
    let d = tempfile::tempdir().unwrap();
    let old = st("Old", &q(&arn(A)), A, "StringEquals", &sa("app"), "Allow");
    let new = st("New", &q(&arn(B)), B, "StringEquals", &sa("app"), "Allow");
    let both = |f: &dyn Fn(&str) -> String| policy(&[f(&old), f(&new)]);
    let new_as = |f: &dyn Fn(&str) -> String| policy(&[old.clone(), f(&new)]);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "not-action",
            new_as(&|s| s.replace("\"Action\"", "\"NotAction\"")),
            "old_only",
        ),
        (
            "other-action",
            new_as(&|s| s.replace("sts:AssumeRoleWithWebIdentity", "sts:AssumeRole")),
            "old_only",
        ),
        (
            "sts-star",
            new_as(&|s| s.replace("sts:AssumeRoleWithWebIdentity", "sts:*")),
            "old_and_new",
        ),
        (
            "any-case-list",
            new_as(&|s| {
                s.replace(
                    "\"sts:AssumeRoleWithWebIdentity\"",
                    "[\"sts:TagSession\", \"STS:assumeRoleWithWebIdentity\"]",
                )
            }),
            "old_and_new",
        ),
        (
            "not-action-other",
            new_as(&|s| {
                s.replace(
                    "\"Action\": \"sts:AssumeRoleWithWebIdentity\"",
                    "\"NotAction\": \"s3:*\"",
                )
            }),
            "not_proven",
        ),
        (
            "not-principal",
            new_as(&|s| s.replace("\"Principal\"", "\"NotPrincipal\"")),
            "not_proven",
        ),
        (
            "not-resource",
            new_as(&|s| s.replace("\"Principal\"", "\"NotResource\": \"*\", \"Principal\"")),
            "not_proven",
        ),
        (
            "star-principal",
            new_as(&|s| s.replace(&format!("{{\"Federated\": {}}}", q(&arn(B))), "\"*\"")),
            "not_proven",
        ),
        (
            "null-both",
            both(&|s| {
                let id = if s.contains(A) { A } else { B };
                s.replace(
                    "\"Condition\": {",
                    &format!(
                        "\"Condition\": {{\"Null\": {{\"{}:sub\": \"false\"}}, ",
                        host(id)
                    ),
                )
            }),
            "not_proven",
        ),
        (
            "ignore-case-both",
            both(&|s| s.replace("StringEquals", "StringEqualsIgnoreCase")),
            "not_proven",
        ),
        (
            "for-all-values-both",
            both(&|s| s.replace("StringEquals", "ForAllValues:StringEquals")),
            "not_proven",
        ),
        (
            "unknown-key-both",
            both(&|s| {
                s.replace(
                    "\"Condition\": {\"StringEquals\": {",
                    "\"Condition\": {\"StringEquals\": {\"aws:SourceAccount\": \"111122223333\", ",
                )
            }),
            "not_proven",
        ),
        (
            "policy-variable-both",
            both(&|s| {
                s.replace(
                    &sa("app"),
                    &q("system:serviceaccount:${aws:PrincipalTag/ns}:app"),
                )
            }),
            "not_proven",
        ),
    ];
    let refs: Vec<(String, &str)> = cases
        .iter()
        .map(|(n, t, _)| (format!("{n}.json"), t.as_str()))
        .collect();
    let refs: Vec<(&str, &str)> = refs.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    write(d.path(), &refs);
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    let cov = coverage(&v);
    for (name, _, want) in &cases {
        let file = format!("{name}.json");
        assert!(
            cov.contains(&(file.clone(), want.to_string())),
            "{name}: {cov:?}"
        );
        let t = v["trusts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"] == file.as_str())
            .unwrap();
        let np = t["not_proven"].as_array().unwrap();
        if *want == "not_proven" {
            assert!(!np.is_empty(), "{name}: {t}");
            assert!(
                np[0]["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("it may let web-identity tokens in through"),
                "{name}: {t}"
            );
        } else {
            assert!(np.is_empty(), "{name}: {t}");
        }
    }
    // The NotAction twin is no twin: the old grant is missing, named.
    let t = v["trusts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "not-action.json")
        .unwrap();
    assert_eq!(t["missing_grants"][0]["statement"], "Old", "{t}");
}

/// A role that names this cluster's issuers but grants neither (one
/// statement holding both issuers' keys: no token carries both) is not
/// proven, never "another cluster's role"; a role that names a third
/// issuer only is another cluster's.
#[test]
fn a_role_naming_this_clusters_issuers_that_grants_neither_is_not_proven() {
    const C: &str = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC";
    let d = tempfile::tempdir().unwrap();
    let both = format!(
        "    {{\"Sid\": \"Both\", \"Effect\": \"Allow\", \"Action\": \"sts:AssumeRoleWithWebIdentity\", \"Principal\": {{\"Federated\": [{}, {}]}}, \"Condition\": {{\"StringEquals\": {{\"{}:sub\": {}, \"{}:sub\": {}}}}}}}",
        q(&arn(A)),
        q(&arn(B)),
        host(A),
        sa("app"),
        host(B),
        sa("app")
    );
    write(
        d.path(),
        &[
            ("both.json", &policy(&[both])),
            (
                "other.json",
                &policy(&[st("C", &q(&arn(C)), C, "StringEquals", &sa("app"), "Allow")]),
            ),
        ],
    );
    let (code, v, _) = identity(d.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(
        coverage(&v),
        vec![
            ("both.json".into(), "not_proven".into()),
            ("other.json".into(), "neither".into())
        ]
    );
}
