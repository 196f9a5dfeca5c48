//! The identity inventory on `testdata/identity/`: every EKS OIDC issuer
//! reference and no false one, and per role what a person would say about
//! the new cluster's pods.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/identity")
}

fn identity(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["identity", "--format", "json"];
    all.extend_from_slice(args);
    let o = rebind(&dir(), &all);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

/// Every reference in the fixture, by (file, line, form), as written there.
/// Never found: the Crossplane role trusting GitHub Actions' token issuer,
/// the ServiceAccount's role ARN, the EKS endpoints.
const REFERENCES: [(&str, usize, &str); 18] = [
    ("README.md", 3, "issuer URL"),
    ("ack/external-dns-role.yaml", 16, "provider ARN"),
    ("ack/external-dns-role.yaml", 18, "condition key"),
    ("ack/external-dns-role.yaml", 23, "provider ARN"),
    ("ack/external-dns-role.yaml", 25, "condition key"),
    // `!Sub arn:aws:iam::${AWS::AccountId}:oidc-provider/...`: the account
    // is no literal, so it is the issuer's host path that is found.
    ("cloudformation/irsa-roles.yaml", 13, "issuer host path"),
    ("cloudformation/irsa-roles.yaml", 17, "condition key"),
    ("cloudformation/irsa-roles.yaml", 18, "condition key"),
    ("cloudformation/irsa-roles.yaml", 26, "provider ARN"),
    ("describe/mismatch.json", 6, "issuer URL"),
    ("describe/new.json", 7, "issuer URL"),
    ("describe/old.json", 7, "issuer URL"),
    ("iam/karpenter-trust.json", 8, "provider ARN"),
    ("iam/karpenter-trust.json", 13, "condition key"),
    ("iam/karpenter-trust.json", 14, "condition key"),
    ("terraform/irsa.tf", 7, "provider ARN"),
    ("terraform/irsa.tf", 11, "condition key"),
    ("terraform/prod.tfvars", 3, "provider ARN"),
];

#[test]
fn the_inventory_finds_every_reference_and_no_false_one() {
    let (code, v) = identity(&[]);
    assert_eq!(code, Some(0), "{v}");
    let found: Vec<(String, usize, String)> = v["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap() as usize,
                r["form"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut want: Vec<(String, usize, String)> = REFERENCES
        .iter()
        .map(|(p, l, f)| (p.to_string(), *l, f.to_string()))
        .collect();
    want.sort();
    let mut got = found.clone();
    got.sort();
    assert_eq!(got, want);
    // Each reported place starts the reference in the file, read here.
    for r in v["references"].as_array().unwrap() {
        let text = std::fs::read_to_string(dir().join(r["path"].as_str().unwrap())).unwrap();
        let line = text
            .lines()
            .nth(r["line"].as_u64().unwrap() as usize - 1)
            .unwrap();
        let at: String = line
            .chars()
            .skip(r["column"].as_u64().unwrap() as usize - 1)
            .collect();
        let prefix = match r["form"].as_str().unwrap() {
            "issuer URL" => "https://oidc.eks.",
            "provider ARN" => "arn:aws:iam::111122223333:oidc-provider/oidc.eks.",
            _ => "oidc.eks.",
        };
        assert!(at.starts_with(prefix), "{r}: {at}");
    }
    // Terraform is report-only: its references are text mentions.
    for r in v["references"].as_array().unwrap() {
        let in_tf = r["path"].as_str().unwrap().starts_with("terraform/");
        assert_eq!(
            r["kind"] == "text",
            in_tf || r["path"] == "README.md",
            "{r}"
        );
    }
    let dynamic: Vec<u64> = v["dynamic"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["line"].as_u64().unwrap())
        .collect();
    assert_eq!(dynamic, vec![22, 26]);
}

fn coverage(v: &Value) -> Vec<(String, Option<String>, String)> {
    v["trusts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["path"].as_str().unwrap().to_string(),
                t["resource"].as_str().map(str::to_string),
                t["coverage"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

#[test]
fn coverage_says_per_role_what_the_new_cluster_lacks() {
    let (code, v) = identity(&[
        "--describe-from",
        "describe/old.json",
        "--describe-to",
        "describe/new.json",
    ]);
    assert_eq!(code, Some(1), "old-only roles are pending work: {v}");
    let s = |x: &str| x.to_string();
    assert_eq!(
        coverage(&v),
        vec![
            (
                s("ack/external-dns-role.yaml"),
                Some(s("Role/external-dns")),
                s("old_and_new")
            ),
            (
                s("cloudformation/irsa-roles.yaml"),
                Some(s("AWS::IAM::Role/AlbControllerRole")),
                s("old_only")
            ),
            (
                s("cloudformation/irsa-roles.yaml"),
                Some(s("AWS::IAM::Role/GreenOnlyRole")),
                s("new_only")
            ),
            (s("iam/karpenter-trust.json"), None, s("old_only")),
        ]
    );
    assert_eq!(v["old_only_count"], 2);
    // The CloudFormation role's provider is `${AWS::AccountId}`: the new
    // provider must exist in the account the stack is deployed to.
    assert_eq!(
        v["provider_accounts_not_literal"],
        serde_json::json!(["cloudformation/irsa-roles.yaml:9"])
    );
    // The role named after the old cluster is a hint, not a finding.
    let notes = v["notes"].to_string();
    assert!(notes.contains("finance-prod-blue-karpenter"), "{notes}");

    // The same from explicit issuers.
    let (code, w) = identity(&[
        "--oidc-from",
        "https://oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
        "--oidc-to",
        "arn:aws:iam::111122223333:oidc-provider/oidc.eks.ap-northeast-2.amazonaws.com/id/0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(coverage(&w), coverage(&v));
}

#[test]
fn the_endpoint_id_is_only_ever_a_labelled_suggestion() {
    let (code, v) = identity(&["--from", OLD]);
    assert_eq!(code, Some(0), "a suggestion is never acted on: {v}");
    assert!(v["old_issuer"].is_null());
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("suggestion (not a documented contract)"),
        "{notes}"
    );
    // A describe file whose endpoint id is not its issuer id is said.
    let (_, v) = identity(&[
        "--describe-from",
        "describe/old.json",
        "--describe-to",
        "describe/mismatch.json",
    ]);
    let notes = v["notes"].to_string();
    assert!(notes.contains("is not its issuer id"), "{notes}");
}

#[test]
fn half_a_pair_or_a_bad_issuer_is_refused() {
    for args in [
        vec!["identity", "--describe-from", "describe/old.json"],
        vec![
            "identity",
            "--oidc-from",
            "https://token.actions.githubusercontent.com",
            "--oidc-to",
            "https://oidc.eks.ap-northeast-2.amazonaws.com/id/0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A",
        ],
        vec![
            "identity",
            "--describe-from",
            "README.md",
            "--describe-to",
            "describe/new.json",
        ],
    ] {
        let o = rebind(&dir(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

const OLD_ISSUER: &str =
    "https://oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";
const OLD_ID: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";
const NEW_ID: &str = "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A";

#[test]
fn trust_add_then_remove_retired_leaves_only_the_new_issuer_byte_exact() {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&dir(), d.path());
    let before = tree(d.path());
    let describe = [
        "--describe-from",
        "describe/old.json",
        "--describe-to",
        "describe/new.json",
    ];
    // Shown, not written, without --yes.
    let mut args = vec!["identity", "--trust", "add"];
    args.extend(describe);
    let o = rebind(d.path(), &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("+++ b/iam/karpenter-trust.json"),
        "{}",
        stdout(&o)
    );
    assert_eq!(tree(d.path()), before);
    // Written with --yes: each old-only role gains the new issuer, and the
    // coverage says every role is ready.
    args.push("--yes");
    let o = rebind(d.path(), &args);
    // Exit 1, not 0: written, but the fixture's literal Terraform trusts
    // (report-only) still lack the new issuer, and are named. (This
    // asserted exit 0 before: work was left while the run said done.)
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("terraform/irsa.tf:7:"),
        "{}",
        stdout(&o)
    );
    let mut cov = vec!["identity", "--format", "json"];
    cov.extend(describe);
    let o = rebind(d.path(), &cov);
    // Still exit 1: the literal Terraform trusts (report-only) name the old
    // issuer with no copy for the new one, so not every grant is covered.
    // (This asserted exit 0 before, a "ready" that ignored Terraform.)
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for t in v["trusts"].as_array().unwrap() {
        assert_ne!(t["coverage"], "old_only", "{t}");
        assert_eq!(t["missing_grants"], serde_json::json!([]), "{t}");
    }
    assert_eq!(v["ready"], false);
    assert_eq!(v["missing_grant_count"], 0);
    let tf: Vec<&str> = v["terraform"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["code"], "identity.terraform_pending");
            t["path"].as_str().unwrap()
        })
        .collect();
    assert!(
        !tf.is_empty() && tf.iter().all(|p| p.starts_with("terraform/")),
        "{tf:?}"
    );
    // A second add is nothing to do.
    let o = rebind(d.path(), &args);
    assert!(
        stdout(&o).contains("Nothing rebind can change here"),
        "{}",
        stdout(&o)
    );
    assert_eq!(o.status.code(), Some(1));
    // After the teardown: remove what trusts only the old issuer.
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--trust",
            "remove-retired",
            "--oidc-retired",
            OLD_ISSUER,
            "--yes",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = tree(d.path());
    let text = |t: &std::collections::BTreeMap<String, Vec<u8>>, p: &str| {
        String::from_utf8(t[p].clone()).unwrap()
    };
    // The JSON policy and the CloudFormation role: the issuer swapped, the
    // statement's Sid suffixed, every other byte as before.
    assert_eq!(
        text(&after, "iam/karpenter-trust.json"),
        text(&before, "iam/karpenter-trust.json")
            .replace(OLD_ID, NEW_ID)
            .replace("\"KarpenterIRSA\"", "\"KarpenterIRSA0D1E2F3A\"")
    );
    assert_eq!(
        text(&after, "cloudformation/irsa-roles.yaml"),
        text(&before, "cloudformation/irsa-roles.yaml").replace(OLD_ID, NEW_ID)
    );
    // The ACK role trusted both: its old statement is gone, with its comma.
    let ack = text(&before, "ack/external-dns-role.yaml");
    let blue_start = ack.find("{\n          \"Sid\": \"Blue\"").unwrap();
    let green_start = ack.find("{\n          \"Sid\": \"Green\"").unwrap();
    let want = format!("{}{}", &ack[..blue_start], &ack[green_start..]);
    assert_eq!(text(&after, "ack/external-dns-role.yaml"), want);
    // Nothing else changed.
    for (p, bytes) in &before {
        if ![
            "iam/karpenter-trust.json",
            "cloudformation/irsa-roles.yaml",
            "ack/external-dns-role.yaml",
        ]
        .contains(&p.as_str())
        {
            assert_eq!(&after[p], bytes, "{p}");
        }
    }
}

#[test]
fn check_flags_a_retired_issuer_and_init_declares_issuers_from_describe_files() {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&dir(), d.path());
    // init: the tree shows the old cluster's endpoint (in prod.tfvars, text)
    // and describe outputs; only an endpoint found as a value is declared,
    // so declare one by hand here and let init's describe reading be tested
    // on its own below.
    let cfg = format!(
        "clusters:\n  finance-prod-green:\n    endpoint: https://{NEW_ID}.gr7.ap-northeast-2.eks.amazonaws.com\n    oidc_issuer: https://oidc.eks.ap-northeast-2.amazonaws.com/id/{NEW_ID}\n    retired_oidc: [{OLD_ISSUER}]\n"
    );
    std::fs::write(d.path().join(".rebind.yaml"), &cfg).unwrap();
    let o = rebind(d.path(), &["check", "--allow-unknown", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let retired: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "retired-oidc-issuer")
        .map(|f| (f["path"].as_str().unwrap(), f["severity"].as_str().unwrap()))
        .collect();
    // Every reference to the old issuer: manifests are errors, text files
    // (Terraform, the README) warnings.
    assert!(
        retired.contains(&("iam/karpenter-trust.json", "error")),
        "{retired:?}"
    );
    assert!(
        retired.contains(&("terraform/prod.tfvars", "warning")),
        "{retired:?}"
    );
    assert!(retired.contains(&("README.md", "warning")), "{retired:?}");
    assert!(
        !retired.iter().any(|(p, _)| p.starts_with("crossplane/")),
        "{retired:?}"
    );
    // After the trust is cleaned, no manifest names it any more.
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--trust",
            "remove-retired",
            "--oidc-retired",
            OLD_ISSUER,
            "--yes",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "a policy with only the old issuer is refused: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("delete the role"), "{}", stderr(&o));

    // The config reader is strict about issuers.
    for (bad, why) in [
        ("    oidc_issuer: https://token.actions.githubusercontent.com\n", "not an EKS OIDC issuer"),
        (&format!("    retired_oidc: [https://oidc.eks.ap-northeast-2.amazonaws.com/id/{NEW_ID}]\n    oidc_issuer: https://oidc.eks.ap-northeast-2.amazonaws.com/id/{NEW_ID}\n") as &str, "current issuer"),
    ] {
        let text = format!(
            "clusters:\n  c:\n    endpoint: https://{NEW_ID}.gr7.ap-northeast-2.eks.amazonaws.com\n{bad}"
        );
        std::fs::write(d.path().join(".rebind.yaml"), &text).unwrap();
        let o = rebind(d.path(), &["check"]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
}

#[test]
fn init_declares_the_issuer_a_describe_output_gives_for_an_endpoint() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("apps")).unwrap();
    std::fs::create_dir_all(d.path().join("describe")).unwrap();
    std::fs::copy(
        dir().join("describe/old.json"),
        d.path().join("describe/old.json"),
    )
    .unwrap();
    std::fs::write(
        d.path().join("apps/app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a}}\nspec:\n  destination:\n    server: https://{OLD_ID}.gr7.ap-northeast-2.eks.amazonaws.com\n"),
    )
    .unwrap();
    let o = rebind(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cfg = std::fs::read_to_string(d.path().join(".rebind.yaml")).unwrap();
    assert!(
        cfg.contains(&format!("    oidc_issuer: {OLD_ISSUER}\n")),
        "{cfg}"
    );
    // And the config it wrote reads back.
    let o = rebind(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_cutover_from_describe_files_shows_the_trust_coverage_in_its_review() {
    let d = tempfile::tempdir().unwrap();
    copy_fixture(d.path());
    copy_dir(&dir().join("iam"), &d.path().join("iam"));
    copy_dir(&dir().join("ack"), &d.path().join("ack"));
    let old = dir().join("describe/old.json");
    let new = dir().join("describe/new.json");
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    // The endpoints come from the describe files; the review names each
    // role with what it means for the new cluster's pods.
    let o = rebind(
        d.path(),
        &[
            "diff",
            "--describe-from",
            old,
            "--describe-to",
            new,
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["from"], OLD);
    assert_eq!(v["to"], NEW);
    // The describe files name two clusters (finance-prod-blue, -green): the
    // name moves with the endpoint at its 5 positions (two registrations'
    // `name`, karpenter's `clusterName` and `interruptionQueue`, a
    // `destination.name`), counted on their own.
    assert_eq!(v["names"]["change_count"], 5, "{}", v["names"]);
    assert_eq!(v["change_count"], 19);
    let id = &v["identity"];
    assert_eq!(id["old_issuer"], OLD_ISSUER);
    assert_eq!(id["old_only_count"], 1);
    assert_eq!(id["ready"], false);
    // The account whose statements name the old provider needs the new one.
    let new_issuer = OLD_ISSUER.replace(OLD_ID, NEW_ID);
    let command = format!(
        "aws iam create-open-id-connect-provider --url {new_issuer} --client-id-list sts.amazonaws.com"
    );
    assert_eq!(id["providers"][0]["account"], "111122223333");
    assert_eq!(id["providers"][0]["code"], "identity.provider_required");
    assert_eq!(id["providers"][0]["command"], command.as_str());
    assert_eq!(id["providers"].as_array().unwrap().len(), 1);
    let cov: Vec<(&str, &str)> = id["trusts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), t["coverage"].as_str().unwrap()))
        .collect();
    assert_eq!(
        cov,
        vec![
            ("ack/external-dns-role.yaml", "old_and_new"),
            ("iam/karpenter-trust.json", "old_only")
        ]
    );
    // In the review Markdown too.
    let review = d.path().join("..").join("review-identity.md");
    let o = rebind(
        d.path(),
        &[
            "apply",
            "--describe-from",
            old,
            "--describe-to",
            new,
            "--no-commit",
            "--yes",
            "--review-out",
            review.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(&review).unwrap();
    std::fs::remove_file(&review).unwrap();
    assert!(md.contains("## The new cluster's identity"), "{md}");
    assert!(md.contains("1 role trusts only the old issuer"), "{md}");
    assert!(md.contains(&command), "{md}");
    assert!(
        md.contains("resource \"aws_iam_openid_connect_provider\""),
        "{md}"
    );
    // Without describe files and without --to: a usage error.
    let o = rebind(d.path(), &["diff", "--from", NEW]);
    assert_eq!(o.status.code(), Some(2));
}

const A: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const B: &str = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

fn issuer_url(id: &str) -> String {
    format!("https://oidc.eks.us-east-1.amazonaws.com/id/{id}")
}

fn arn(id: &str) -> String {
    format!("arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/{id}")
}

/// `identity --trust CHANGE --yes` on one file holding `text`: the exit
/// code, stderr and the file's bytes afterwards.
fn trust_on(name: &str, text: &str, change: &[&str]) -> (Option<i32>, String, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(name), text).unwrap();
    let (a, b) = (issuer_url(A), issuer_url(B));
    let mut args = vec!["identity", "--yes"];
    args.extend_from_slice(change);
    if change.contains(&"add") {
        args.extend(["--oidc-from", &a, "--oidc-to", &b]);
    } else {
        args.extend(["--oidc-retired", &a]);
    }
    let o = rebind(d.path(), &args);
    let after = std::fs::read_to_string(d.path().join(name)).unwrap();
    (o.status.code(), stderr(&o), after)
}

#[test]
fn trust_changes_it_cannot_make_in_place_are_refused_never_reported_done() {
    // The same policy, with `/` escaped as JSON allows: read as identity
    // reads it, and edited in the same escaping. (This was refused before;
    // statements are now chosen from the decoded policy.)
    let escaped = format!(
        "{{\"Statement\": [{{\"Sid\": \"irsa\", \"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}]}}\n",
        arn(A).replace('/', "\\/")
    );
    let (code, err, after) = trust_on("p.json", &escaped, &["--trust", "add"]);
    assert_eq!(code, Some(0), "{err}");
    let copy = format!(
        "{{\"Sid\": \"irsaBBBBBBBB\", \"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}",
        arn(B).replace('/', "\\/")
    );
    assert_eq!(after, escaped.replace("}]}", &format!("}}, {copy}]}}")));
    // A statement as a single object, not a list.
    let single = format!(
        "{{\"Statement\": {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}}}\n",
        arn(A)
    );
    let (code, err, after) = trust_on("s.json", &single, &["--trust", "add"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(after, single);
    let (code, err, _) = trust_on("s.json", &single, &["--trust", "remove-retired"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn trust_add_keeps_sids_unique_and_yaml_comments_where_they_were() {
    let yaml = format!(
        "Resources:\r\n  Role:\r\n    Type: AWS::IAM::Role\r\n    Properties:\r\n      AssumeRolePolicyDocument:\r\n        Statement:\r\n          - Sid: 'irsa'   # the IRSA trust\r\n            Effect: Allow\r\n            Principal:\r\n              Federated: {}\r\n\r\n          # Outputs below: do not remove\r\n  Other: {{}}\r\n",
        arn(A)
    );
    let (code, err, after) = trust_on("cfn.yaml", &yaml, &["--trust", "add"]);
    assert_eq!(code, Some(0), "{err}");
    let item_end = yaml.find("\r\n\r\n          # Outputs").unwrap() + 2;
    let item = &yaml[yaml.find("          - Sid").unwrap()..item_end];
    let copy = item.replace(A, B).replace("'irsa'", "'irsaBBBBBBBB'");
    assert_eq!(
        after,
        format!("{}{copy}{}", &yaml[..item_end], &yaml[item_end..])
    );
    assert!(
        !after.replace("\r\n", "").contains('\n'),
        "line endings stay CRLF"
    );
    // A Sid the copy would take is refused.
    let taken = yaml.replace(
        "  Other: {}",
        "  Taken:\r\n    Statement:\r\n      - Sid: irsaBBBBBBBB\r\n        Principal: {Service: ec2.amazonaws.com}",
    );
    let clash = taken.replace(
        "          # Outputs below: do not remove\r\n",
        "          - Sid: irsaBBBBBBBB\r\n            Principal: {Service: ec2.amazonaws.com}\r\n",
    );
    let (code, err, after) = trust_on("cfn.yaml", &clash, &["--trust", "add"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("Sid"), "{err}");
    assert_eq!(after, clash);
}

#[test]
fn trust_add_on_a_single_crlf_statement_keeps_crlf() {
    let text = format!(
        "{{\r\n  \"Statement\": [\r\n    {{\r\n      \"Effect\": \"Allow\",\r\n      \"Principal\": {{\"Federated\": \"{}\"}}\r\n    }}\r\n  ]\r\n}}\r\n",
        arn(A)
    );
    let (code, err, after) = trust_on("p.json", &text, &["--trust", "add"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!after.replace("\r\n", "").contains('\n'), "{after:?}");
    assert!(after.contains(&arn(B)), "{after}");
}

#[test]
fn remove_retired_never_takes_other_principals_with_it() {
    let text = format!(
        "{{\"Statement\": [\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\", \"AWS\": \"arn:aws:iam::111122223333:role/admin\"}}}},\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}\n]}}\n",
        arn(A),
        arn(B)
    );
    let (code, err, after) = trust_on("m.json", &text, &["--trust", "remove-retired"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("other principals"), "{err}");
    assert_eq!(after, text);
    // A statement for another provider with a stray condition key stays.
    let ci = format!(
        "{{\"Statement\": [\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/token.actions.githubusercontent.com\"}}, \"Condition\": {{\"StringEquals\": {{\"oidc.eks.us-east-1.amazonaws.com/id/{A}:sub\": \"x\"}}}}}},\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}\n]}}\n",
        arn(B)
    );
    let (code, err, after) = trust_on("ci.json", &ci, &["--trust", "remove-retired"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(after, ci);
}

#[test]
fn the_same_issuer_as_old_and_new_is_a_usage_error() {
    let o = rebind(
        &dir(),
        &[
            "identity",
            "--describe-from",
            "describe/old.json",
            "--describe-to",
            "describe/old.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("the same"), "{}", stderr(&o));
}

#[test]
fn unreadable_trust_a_retired_issuer_in_a_comment_and_conflicting_describes() {
    // A policy that does not parse: the identity report refuses, naming it.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("trunc.json"),
        format!(
            "{{\"Statement\": [{{\"Principal\": {{\"Federated\": \"{}\"}}}}]\n",
            arn(A)
        ),
    )
    .unwrap();
    let o = rebind(d.path(), &["identity"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("trunc.json:"), "{}", stderr(&o));

    // check: a retired issuer in a YAML comment is a warning, in a value an
    // error.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join(".rebind.yaml"),
        format!("clusters:\n  c:\n    endpoint: https://{B}.gr7.us-east-1.eks.amazonaws.com\n    retired_oidc: [{}]\n", issuer_url(A)),
    )
    .unwrap();
    std::fs::write(
        d.path().join("t.yaml"),
        format!("# was {}\nissuer: {}\n", issuer_url(A), issuer_url(A)),
    )
    .unwrap();
    let o = rebind(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let by_line: Vec<(u64, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(by_line, vec![(1, "warning"), (2, "error")]);

    // init: two describe outputs giving one endpoint two issuers.
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("apps")).unwrap();
    std::fs::copy(dir().join("describe/old.json"), d.path().join("a.json")).unwrap();
    let other = std::fs::read_to_string(dir().join("describe/old.json"))
        .unwrap()
        .replace(
            &format!("id/{OLD_ID}"),
            "id/9A8B7C6D5E4F30211203F4E5D6C7B8A9",
        );
    std::fs::write(d.path().join("b.json"), other).unwrap();
    std::fs::write(
        d.path().join("apps/app.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a}}\nspec:\n  destination:\n    server: https://{OLD_ID}.gr7.ap-northeast-2.eks.amazonaws.com\n"),
    )
    .unwrap();
    let o = rebind(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a.json and b.json"), "{}", stderr(&o));
    assert!(!d.path().join(".rebind.yaml").exists());
}

#[test]
fn remove_retired_takes_the_retired_issuers_of_the_config() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "{{\"Statement\": [\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}},\n  {{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"{}\"}}}}\n]}}\n",
        arn(A),
        arn(B)
    );
    std::fs::write(d.path().join("p.json"), &text).unwrap();
    std::fs::write(
        d.path().join(".rebind.yaml"),
        format!("clusters:\n  c:\n    endpoint: https://{B}.gr7.us-east-1.eks.amazonaws.com\n    oidc_issuer: {}\n    retired_oidc: [{}]\n", issuer_url(B), issuer_url(A)),
    )
    .unwrap();
    let o = rebind(
        d.path(),
        &["identity", "--trust", "remove-retired", "--yes"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read_to_string(d.path().join("p.json")).unwrap();
    assert!(!after.contains(A), "{after}");
    assert!(after.contains(&arn(B)), "{after}");
    // And the Terraform mention says what to do there.
    let o = rebind(&dir(), &["identity"]);
    assert!(
        stdout(&o).contains("add the new provider to oidc_providers"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn yaml_flow_sequences_of_statements_are_edited_in_place() {
    let text = format!(
        "AssumeRolePolicyDocument:\n  Statement: [{{Sid: 'irsa', Effect: Allow, Principal: {{Federated: '{}'}}, Action: 'sts:AssumeRoleWithWebIdentity'}}]\n",
        arn(A)
    );
    let (code, err, after) = trust_on("flow.yaml", &text, &["--trust", "add"]);
    assert_eq!(code, Some(0), "{err}");
    let item_start = text.find("{Sid").unwrap();
    let item_end = text.rfind('}').unwrap() + 1;
    let item = &text[item_start..item_end];
    let copy = item.replace(A, B).replace("'irsa'", "'irsaBBBBBBBB'");
    assert_eq!(
        after,
        format!("{}, {copy}{}", &text[..item_end], &text[item_end..])
    );
    let (code, err, back) = trust_on("flow.yaml", &after, &["--trust", "remove-retired"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        back,
        format!("{}{copy}{}", &text[..item_start], &text[item_end..])
    );
}

#[test]
fn the_old_issuer_may_come_from_the_config() {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&dir(), d.path());
    std::fs::write(
        d.path().join(".rebind.yaml"),
        format!("clusters:\n  finance-prod-blue:\n    endpoint: https://{OLD_ID}.gr7.ap-northeast-2.eks.amazonaws.com\n    oidc_issuer: {OLD_ISSUER}\n"),
    )
    .unwrap();
    let o = rebind(
        d.path(),
        &[
            "identity",
            "--format",
            "json",
            "--cluster",
            "finance-prod-blue",
            "--describe-to",
            "describe/new.json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["old_issuer"], OLD_ISSUER);
    assert_eq!(v["old_only_count"], 2);
}
