//! EKS OIDC issuers: the rules that say what text names a cluster's issuer
//! (as a URL, as the scheme-less host path of IAM condition keys, or inside
//! an `oidc-provider` ARN), and the reading of IAM trust policies that
//! trust one.
//!
//! A rebuilt EKS cluster gets a new issuer. Every IAM role its pods assume
//! through IRSA trusts an issuer by name, so a role that trusts only the old
//! one denies the new cluster's pods their AWS credentials, with no error at
//! deploy time. This module finds every reference and tells, per trust
//! statement, which cluster issuers it trusts.

use crate::text::issuer::{dynamic_trusts, find, Form, Found, Issuer};
use std::collections::BTreeSet;
use yaml_rust2::Yaml;

/// One statement of a trust policy that federates through an EKS issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStatement {
    /// `Sid`, else the statement's index.
    pub sid: String,
    /// The accounts of its `oidc-provider` principals.
    pub accounts: BTreeSet<String>,
    /// The issuers it trusts (principals and condition keys together).
    pub issuers: Vec<Issuer>,
}

/// What a trust statement means for a cutover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Trusts the old issuer and not the new: the new cluster's pods will
    /// be denied; add the new issuer before the cutover.
    OldOnly,
    /// Trusts both: ready; remove the old issuer after the teardown.
    Both,
    /// Trusts the new issuer only.
    NewOnly,
    /// Trusts neither: another cluster's role.
    Neither,
}

impl Coverage {
    pub fn key(self) -> &'static str {
        match self {
            Coverage::OldOnly => "old_only",
            Coverage::Both => "old_and_new",
            Coverage::NewOnly => "new_only",
            Coverage::Neither => "neither",
        }
    }

    pub fn sentence(self) -> &'static str {
        match self {
            Coverage::OldOnly => {
                "trusts only the old issuer: the new cluster's pods will be denied; add the new issuer before the cutover"
            }
            Coverage::Both => "trusts both: ready; remove the old issuer after the old cluster is torn down",
            Coverage::NewOnly => "trusts only the new issuer",
            Coverage::Neither => "trusts neither issuer (another cluster's role)",
        }
    }
}

impl TrustStatement {
    pub fn coverage(&self, old: &Issuer, new: &Issuer) -> Coverage {
        let has = |i: &Issuer| self.issuers.iter().any(|x| x.same(i));
        match (has(old), has(new)) {
            (true, false) => Coverage::OldOnly,
            (true, true) => Coverage::Both,
            (false, true) => Coverage::NewOnly,
            (false, false) => Coverage::Neither,
        }
    }
}

fn yaml_text(y: &Yaml) -> Option<&str> {
    match y {
        Yaml::String(s) => Some(s),
        _ => None,
    }
}

fn each(y: &Yaml) -> Vec<&Yaml> {
    match y {
        Yaml::Array(a) => a.iter().collect(),
        Yaml::BadValue | Yaml::Null => Vec::new(),
        other => vec![other],
    }
}

/// Every string of a value, keys included (condition keys are keys).
fn strings<'a>(y: &'a Yaml, out: &mut Vec<&'a str>) {
    match y {
        Yaml::String(s) => out.push(s),
        Yaml::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Yaml::Hash(h) => {
            for (k, v) in h {
                strings(k, out);
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// The federated trust statements of one policy document (a mapping with
/// `Statement`).
fn statements_of(policy: &Yaml) -> Vec<TrustStatement> {
    let mut out = Vec::new();
    for (n, st) in each(&policy["Statement"]).into_iter().enumerate() {
        let principals = each(&st["Principal"]["Federated"]);
        let mut accounts = BTreeSet::new();
        let mut issuers: Vec<Issuer> = Vec::new();
        for p in principals {
            let mut texts = Vec::new();
            strings(p, &mut texts);
            for t in texts {
                for f in find(t) {
                    if let Form::ProviderArn { account, .. } = &f.form {
                        accounts.insert(account.clone());
                    }
                    if !issuers.iter().any(|i| i.same(&f.issuer)) {
                        issuers.push(f.issuer);
                    }
                }
            }
        }
        if issuers.is_empty() {
            continue;
        }
        let mut texts = Vec::new();
        strings(&st["Condition"], &mut texts);
        for t in texts {
            for f in find(t) {
                if !issuers.iter().any(|i| i.same(&f.issuer)) {
                    issuers.push(f.issuer);
                }
            }
        }
        let sid = yaml_text(&st["Sid"])
            .map(str::to_string)
            .unwrap_or_else(|| format!("statement {}", n + 1));
        out.push(TrustStatement {
            sid,
            accounts,
            issuers,
        });
    }
    out
}

/// A trust document found in a file: where (the path of keys to it) and
/// its federated statements.
#[derive(Debug, Clone)]
pub struct TrustDoc {
    /// `Kind/name` of the manifest, or the CloudFormation resource, if any.
    pub resource: Option<String>,
    /// The path to the policy (`spec.assumeRolePolicyDocument (JSON string)`).
    pub at: String,
    pub statements: Vec<TrustStatement>,
}

/// Every trust document in one decoded YAML/JSON document: mappings with a
/// `Statement`, and strings that are JSON policies (ACK's
/// `assumeRolePolicyDocument`, Crossplane's `assumeRolePolicy`).
pub fn trust_docs(doc: &Yaml) -> Vec<TrustDoc> {
    let resource = match (yaml_text(&doc["kind"]), yaml_text(&doc["metadata"]["name"])) {
        (Some(k), Some(n)) => Some(format!("{k}/{n}")),
        _ => None,
    };
    let mut out = Vec::new();
    walk(doc, &mut String::new(), &resource, &mut out, 0);
    out
}

fn walk(
    y: &Yaml,
    path: &mut String,
    resource: &Option<String>,
    out: &mut Vec<TrustDoc>,
    depth: usize,
) {
    if depth > 64 {
        return;
    }
    match y {
        Yaml::Hash(h) => {
            if !y["Statement"].is_badvalue() {
                let statements = statements_of(y);
                if !statements.is_empty() {
                    out.push(TrustDoc {
                        resource: resource.clone(),
                        at: if path.is_empty() {
                            ".".into()
                        } else {
                            path.clone()
                        },
                        statements,
                    });
                }
                return;
            }
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) => s.clone(),
                    _ => continue,
                };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key);
                // A CloudFormation role is named by its logical id.
                let res = if matches!(&v["Type"], Yaml::String(t) if t == "AWS::IAM::Role") {
                    Some(format!("AWS::IAM::Role/{key}"))
                } else {
                    resource.clone()
                };
                walk(v, path, &res, out, depth + 1);
                path.truncate(len);
            }
        }
        Yaml::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(v, path, resource, out, depth + 1);
                path.truncate(len);
            }
        }
        Yaml::String(s) if s.contains("Statement") && s.trim_start().starts_with('{') => {
            if let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(s) {
                for d in &docs {
                    let mut inner = Vec::new();
                    walk(
                        &d.data(),
                        &mut String::new(),
                        resource,
                        &mut inner,
                        depth + 1,
                    );
                    for mut t in inner {
                        t.at = format!("{path} (JSON string)");
                        out.push(t);
                    }
                }
            }
        }
        _ => {}
    }
}

/// The trust one role gives through EKS issuers, for one account: its
/// federated statements taken together (a role whose statements trust the
/// old and the new issuer between them is ready).
#[derive(Debug, Clone)]
pub struct RoleTrust {
    pub rel: String,
    pub resource: Option<String>,
    /// The path to the policy in its file.
    pub at: String,
    /// The statements (Sid, else their place).
    pub statements: Vec<String>,
    /// `None` when the principal's account is not literal.
    pub account: Option<String>,
    pub issuers: Vec<Issuer>,
}

impl RoleTrust {
    pub fn coverage(&self, old: &Issuer, new: &Issuer) -> Coverage {
        TrustStatement {
            sid: String::new(),
            accounts: BTreeSet::new(),
            issuers: self.issuers.clone(),
        }
        .coverage(old, new)
    }
}

/// Every role's trust, one per trust document and account.
pub fn roles(inv: &Inventory) -> Vec<RoleTrust> {
    let mut out = Vec::new();
    for t in &inv.trusts {
        let mut by_account: Vec<(Option<String>, Vec<&TrustStatement>)> = Vec::new();
        for st in &t.doc.statements {
            let accounts: Vec<Option<String>> = if st.accounts.is_empty() {
                vec![None]
            } else {
                st.accounts.iter().cloned().map(Some).collect()
            };
            for a in accounts {
                match by_account.iter_mut().find(|(x, _)| *x == a) {
                    Some((_, v)) => v.push(st),
                    None => by_account.push((a, vec![st])),
                }
            }
        }
        for (account, sts) in by_account {
            let mut issuers: Vec<Issuer> = Vec::new();
            for i in sts.iter().flat_map(|s| &s.issuers) {
                if !issuers.iter().any(|x| x.same(i)) {
                    issuers.push(i.clone());
                }
            }
            out.push(RoleTrust {
                rel: t.rel.clone(),
                resource: t.doc.resource.clone(),
                at: t.doc.at.clone(),
                statements: sts.iter().map(|s| s.sid.clone()).collect(),
                account,
                issuers,
            });
        }
    }
    out
}

/// A cutover's trust coverage: each role with what it means for the new
/// cluster's pods.
#[derive(Debug, Clone)]
pub struct CoverageReport {
    pub old: Issuer,
    pub new: Issuer,
    pub roles: Vec<(RoleTrust, Coverage)>,
}

impl CoverageReport {
    pub fn of(inv: &Inventory, old: &Issuer, new: &Issuer) -> CoverageReport {
        CoverageReport {
            old: old.clone(),
            new: new.clone(),
            roles: roles(inv)
                .into_iter()
                .map(|r| {
                    let c = r.coverage(old, new);
                    (r, c)
                })
                .collect(),
        }
    }

    /// Roles the new cluster's pods will be denied by.
    pub fn old_only(&self) -> usize {
        self.roles
            .iter()
            .filter(|(_, c)| *c == Coverage::OldOnly)
            .count()
    }
}

pub use crate::model::cluster::{parse_describe, read_describe, Described};

/// The EKS endpoint host's 32-hex id, when the endpoint is an EKS one. In
/// every public sample it equals the cluster's issuer id; that is not a
/// documented contract, so it is only ever offered as a labelled
/// suggestion.
pub fn endpoint_id(endpoint: &str) -> Option<String> {
    let host = endpoint.strip_prefix("https://").unwrap_or(endpoint);
    let first = host.split(['.', '/', ':']).next()?;
    (first.len() == 32 && first.bytes().all(|b| b.is_ascii_hexdigit()) && host.contains(".eks."))
        .then(|| first.to_ascii_uppercase())
}

/// The issuers that `aws eks describe-cluster` outputs in the walk give
/// for their endpoints: `(endpoint, issuer URL)`. What `init` declares as a
/// cluster's `oidc_issuer`; the tree shows both, nothing is guessed.
pub fn described(
    walk: &crate::discover::walk::Walk,
) -> Vec<(crate::text::endpoint::Endpoint, String, String)> {
    crate::model::cluster::described_in(walk)
        .into_iter()
        .filter_map(|(d, rel)| {
            let ep = crate::text::endpoint::Endpoint::parse("endpoint", &d.endpoint).ok()?;
            Some((ep, d.issuer.url(), rel))
        })
        .collect()
}

/// One issuer reference in a file of the tree.
#[derive(Debug, Clone)]
pub struct Reference {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    pub found: Found,
    /// Read as YAML/JSON (a value or a key) or as text (HCL, tfvars,
    /// shell: a mention to act on by hand).
    pub in_manifest: bool,
    /// In a YAML comment (a mention, like a text file's).
    pub in_comment: bool,
}

/// A trust document with the file it is in.
#[derive(Debug, Clone)]
pub struct FileTrust {
    pub rel: String,
    /// The path to open.
    pub path: std::path::PathBuf,
    pub doc: TrustDoc,
}

/// Everything the identity inventory found below the walked paths.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub references: Vec<Reference>,
    /// Dynamic trusts (file, line, what): nothing to change.
    pub dynamic: Vec<(String, usize, &'static str)>,
    pub trusts: Vec<FileTrust>,
    /// Files holding issuer references that could not be read or parsed
    /// (file, line, column, why): nothing can be said of their trust.
    pub unread: Vec<(String, usize, usize, String)>,
    /// `eks.amazonaws.com/role-arn` annotations (file, line, role ARN): a
    /// hint only, when a role's name carries the old cluster's name.
    pub role_arns: Vec<(String, usize, String)>,
}

/// Reads every file of the walk for issuer references, dynamic trusts and
/// trust documents.
pub fn inventory(walk: &crate::discover::walk::Walk) -> Inventory {
    use crate::discover::walk::{Found as W, Role};
    let mut inv = Inventory::default();
    for item in walk.files() {
        let W::Entry(e) = item else { continue };
        let Ok(bytes) = std::fs::read(&e.path) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes.clone()) else {
            if memchr::memmem::find(&bytes.to_ascii_lowercase(), b"oidc.eks.").is_some() {
                inv.unread.push((
                    e.rel.clone(),
                    1,
                    1,
                    "not UTF-8: its issuer references were not read".into(),
                ));
            }
            continue;
        };
        let index = crate::syntax::yaml::LineIndex::new(&text);
        // JSON may write `/` as `\/`; the same line, read with it undone.
        let unescaped = text.replace("\\/", "/");
        let view = if unescaped.len() != text.len() {
            &unescaped
        } else {
            &text
        };
        let view_index = crate::syntax::yaml::LineIndex::new(view);
        let is_json = e.rel.to_ascii_lowercase().ends_with(".json");
        for f in find(view) {
            let (line, column) = view_index.position(view, f.start);
            let line_start = view[..f.start].rfind('\n').map_or(0, |i| i + 1);
            let prefix = &view[line_start..f.start];
            let in_comment = e.role == Role::Yaml
                && !is_json
                && (prefix.trim_start().starts_with('#') || prefix.contains(" #"));
            inv.references.push(Reference {
                rel: e.rel.clone(),
                line,
                column,
                found: f,
                in_manifest: e.role == Role::Yaml,
                in_comment,
            });
        }
        const ROLE_ARN: &str = "eks.amazonaws.com/role-arn";
        let mut from = 0;
        while let Some(i) = text[from..].find(ROLE_ARN).map(|i| i + from) {
            from = i + ROLE_ARN.len();
            let rest = text[from..].trim_start_matches(['"', '\'', ':', ' ', '=']);
            let arn: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | ',' | '}'))
                .collect();
            if arn.starts_with("arn:") && arn.contains(":role/") {
                inv.role_arns
                    .push((e.rel.clone(), index.position(&text, i).0, arn));
            }
        }
        for (at, what) in dynamic_trusts(&text) {
            inv.dynamic
                .push((e.rel.clone(), index.position(&text, at).0, what));
        }
        if e.role == Role::Yaml && text.contains("Statement") {
            let masked = crate::syntax::yaml::mask_templates(&text).map(|(m, _)| m);
            let body = masked.as_deref().unwrap_or(&text);
            match crate::syntax::yaml::read_yaml_or_json(body) {
                Ok(docs) => {
                    for d in &docs {
                        for doc in trust_docs(&d.data()) {
                            inv.trusts.push(FileTrust {
                                rel: e.rel.clone(),
                                path: e.path.clone(),
                                doc,
                            });
                        }
                    }
                }
                // A policy that does not parse cannot be shown safe.
                Err((line, col, why)) if !find(&text).is_empty() => {
                    inv.unread.push((
                        e.rel.clone(),
                        line,
                        col,
                        format!("not valid YAML or JSON ({why}): its trust was not evaluated"),
                    ));
                }
                Err(_) => {}
            }
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";

    #[test]
    fn every_form_is_found_with_its_extent() {
        let url = format!("https://oidc.eks.ap-northeast-2.amazonaws.com/id/{ID}");
        let f = find(&format!("issuer: {url}\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].form, Form::Url);
        assert_eq!(&format!("issuer: {url}\n")[f[0].start..f[0].end], url);

        let key = format!("\"oidc.eks.us-gov-west-1.amazonaws.com/id/{ID}:sub\": \"system:serviceaccount:kube-system:karpenter\"");
        let f = find(&key);
        assert_eq!(
            f[0].form,
            Form::HostPath {
                key: Some("sub".into())
            }
        );
        assert_eq!(f[0].issuer.region, "us-gov-west-1");
        assert!(key[f[0].start..f[0].end].ends_with(":sub"));

        for (partition, host) in [
            ("aws", "oidc.eks.us-east-1.amazonaws.com"),
            ("aws-cn", "oidc.eks.cn-northwest-1.amazonaws.com.cn"),
            ("aws-us-gov", "oidc.eks.us-gov-east-1.amazonaws.com"),
        ] {
            let arn = format!("arn:{partition}:iam::123456789012:oidc-provider/{host}/id/{ID}");
            let f = find(&format!("Federated: {arn}"));
            assert_eq!(f.len(), 1, "{arn}");
            assert_eq!(
                f[0].form,
                Form::ProviderArn {
                    partition: partition.into(),
                    account: "123456789012".into()
                }
            );
            assert_eq!(&format!("Federated: {arn}")[f[0].start..f[0].end], arn);
            assert_eq!(f[0].issuer.china, partition == "aws-cn");
        }
    }

    #[test]
    fn an_issuer_url_may_name_the_default_port() {
        let f = find(&format!(
            "issuer: https://oidc.eks.us-east-1.amazonaws.com:443/id/{ID}"
        ));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].form, Form::Url);
        assert_eq!(f[0].issuer.region, "us-east-1");
    }

    #[test]
    fn other_oidc_providers_and_bare_ids_are_never_cluster_issuers() {
        let negatives = [
            "https://token.actions.githubusercontent.com",
            "token.actions.githubusercontent.com:sub",
            "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com",
            "https://gitlab.com",
            "https://accounts.google.com",
            "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
            "https://oidc.circleci.com/org/5f2c8a1e-9b3d-4c7a-8e6f-1b2d3c4a5e6f",
            "https://app.terraform.io",
            "https://sts.windows.net/9188040d-6c67-4c5b-b112-36a304b66dad/",
            "https://oidc.eks.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
            "https://oidc.eks.ap-northeast-2.amazonaws.com/id/",
            "oidc.eks.ap-northeast-2.amazonaws.com.evil.example/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
            "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
            "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com",
            "https://oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6FXYZ",
            "https://evil.example/oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
            "xoidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F",
            "a.oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F:sub",
        ];
        for n in negatives {
            assert!(find(n).is_empty(), "{n}: {:?}", find(n));
        }
    }

    #[test]
    fn statements_report_their_issuers_and_coverage() {
        let policy = format!(
            r#"{{"Version":"2012-10-17","Statement":[
              {{"Sid":"Old","Effect":"Allow","Principal":{{"Federated":"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{ID}"}},
               "Action":"sts:AssumeRoleWithWebIdentity",
               "Condition":{{"StringEquals":{{"oidc.eks.eu-west-1.amazonaws.com/id/{ID}:sub":"system:serviceaccount:a:b"}}}}}},
              {{"Effect":"Allow","Principal":{{"Service":"ec2.amazonaws.com"}},"Action":"sts:AssumeRole"}}]}}"#
        );
        let docs = yaml_rust2::YamlLoader::load_from_str(&policy).unwrap();
        let t = trust_docs(&docs[0]);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].statements.len(), 1);
        let st = &t[0].statements[0];
        assert_eq!(st.sid, "Old");
        assert_eq!(st.accounts, ["111122223333".to_string()].into());
        let old =
            Issuer::parse(&format!("https://oidc.eks.eu-west-1.amazonaws.com/id/{ID}")).unwrap();
        let new = Issuer::parse(
            "https://oidc.eks.eu-west-1.amazonaws.com/id/0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A",
        )
        .unwrap();
        assert_eq!(st.coverage(&old, &new), Coverage::OldOnly);
        assert_eq!(st.coverage(&new, &old), Coverage::NewOnly);
    }

    #[test]
    fn embedded_json_policies_are_read() {
        let ack = format!(
            "apiVersion: iam.services.k8s.aws/v1alpha1\nkind: Role\nmetadata: {{name: karpenter}}\nspec:\n  assumeRolePolicyDocument: |\n    {{\"Statement\": [{{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{ID}\"}}}}]}}\n"
        );
        let docs = yaml_rust2::YamlLoader::load_from_str(&ack).unwrap();
        let t = trust_docs(&docs[0]);
        assert_eq!(t.len(), 1, "{t:?}");
        assert_eq!(t[0].resource.as_deref(), Some("Role/karpenter"));
        assert_eq!(t[0].at, "spec.assumeRolePolicyDocument (JSON string)");
    }

    #[test]
    fn describe_cluster_output_is_read() {
        let d = parse_describe(&format!(
            r#"{{"cluster": {{"name": "prod-blue", "arn": "arn:aws:eks:eu-west-1:111122223333:cluster/prod-blue", "endpoint": "https://{ID}.gr7.eu-west-1.eks.amazonaws.com", "identity": {{"oidc": {{"issuer": "https://oidc.eks.eu-west-1.amazonaws.com/id/{ID}"}}}}}}}}"#
        ))
        .unwrap();
        assert_eq!(d.name, "prod-blue");
        assert_eq!(d.issuer.id, ID);
        assert_eq!(endpoint_id(&d.endpoint).as_deref(), Some(ID));
        assert!(parse_describe("{}").is_err());
    }
}
