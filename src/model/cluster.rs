//! A cluster's identity as one record: endpoint, EKS name, ARN, OIDC
//! issuer, CA data, region, account and platform version, read from
//! `aws eks describe-cluster --output json` (or declared in `.rebind.yaml`).
//! What a rebind moves besides the endpoint (the name positions, the
//! registration) is taken from here.

use crate::text::issuer::Issuer;
use serde::Deserialize;

/// `aws eks describe-cluster` output: the cluster's name, ARN, endpoint,
/// issuer, CA and where it runs, together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub name: String,
    pub arn: Option<String>,
    pub endpoint: String,
    pub issuer: Issuer,
    /// `certificateAuthority.data`: the base64 PEM of the cluster's CA.
    pub ca_data: Option<String>,
    /// From the ARN (else the issuer's region).
    pub region: Option<String>,
    /// The AWS account id, from the ARN.
    pub account: Option<String>,
    /// `platformVersion` (`eks.5`).
    pub platform_version: Option<String>,
    /// The Kubernetes `version` (`1.30`).
    pub version: Option<String>,
}

/// What `.rebind.yaml` declares of a cluster's identity besides its
/// endpoint and issuer (`name`, `arn`, `ca_data`, or a `describe` file that
/// gives them): the old side of a name rebind with `--cluster`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// The EKS cluster name.
    pub name: Option<String>,
    pub arn: Option<String>,
    pub ca_data: Option<String>,
}

impl Declared {
    /// The declared fields of a describe-cluster record.
    pub fn of(d: &Described) -> Declared {
        Declared {
            name: Some(d.name.clone()),
            arn: d.arn.clone(),
            ca_data: d.ca_data.clone(),
        }
    }
}

/// Every `aws eks describe-cluster` output among the walked `.json` files,
/// with its shown path (what `init` declares a cluster's identity from).
pub fn described_in(walk: &crate::discover::walk::Walk) -> Vec<(Described, String)> {
    let mut out = Vec::new();
    for item in walk.files() {
        let crate::discover::walk::Found::Entry(e) = item else {
            continue;
        };
        if !e.rel.to_ascii_lowercase().ends_with(".json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            continue;
        };
        if !text.contains("\"identity\"") {
            continue;
        }
        if let Ok(d) = parse_describe(&text) {
            out.push((d, e.rel.clone()));
        }
    }
    out
}

#[derive(Deserialize)]
struct DescribeFile {
    cluster: DescribeCluster,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DescribeCluster {
    name: String,
    arn: Option<String>,
    endpoint: String,
    identity: DescribeIdentity,
    certificate_authority: Option<DescribeCa>,
    platform_version: Option<String>,
    version: Option<String>,
}

#[derive(Deserialize)]
struct DescribeIdentity {
    oidc: DescribeOidc,
}

#[derive(Deserialize)]
struct DescribeOidc {
    issuer: String,
}

#[derive(Deserialize)]
struct DescribeCa {
    data: Option<String>,
}

/// An EKS cluster ARN's parts: `arn:PARTITION:eks:REGION:ACCOUNT:cluster/NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterArn<'a> {
    pub partition: &'a str,
    pub region: &'a str,
    pub account: &'a str,
    pub name: &'a str,
}

/// Reads an EKS cluster ARN (the whole text, nothing around it); `None`
/// for any other text, another service's ARN included.
pub fn parse_arn(text: &str) -> Option<ClusterArn<'_>> {
    let mut parts = text.splitn(6, ':');
    let (arn, partition, service, region, account, resource) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    let name = resource.strip_prefix("cluster/")?;
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let ok = arn == "arn"
        && partition.starts_with("aws")
        && service == "eks"
        && word(region)
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && word(name);
    ok.then_some(ClusterArn {
        partition,
        region,
        account,
        name,
    })
}

/// Whether `name` can be an EKS cluster name: 1 to 100 characters,
/// letters, digits, `-` and `_`, starting with a letter or digit
/// (EKS `CreateCluster`: `^[0-9A-Za-z][A-Za-z0-9\-_]*`).
pub fn is_cluster_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Reads `aws eks describe-cluster --output json`.
pub fn parse_describe(text: &str) -> Result<Described, String> {
    let f: DescribeFile = serde_json::from_str(text).map_err(|e| {
        format!("not `aws eks describe-cluster` JSON (cluster.name, .endpoint, .identity.oidc.issuer): {e}")
    })?;
    let c = f.cluster;
    let issuer = Issuer::parse(&c.identity.oidc.issuer).ok_or_else(|| {
        format!(
            "cluster.identity.oidc.issuer `{}` is not an EKS issuer URL",
            c.identity.oidc.issuer
        )
    })?;
    if !is_cluster_name(&c.name) {
        return Err(format!(
            "cluster.name `{}` is not an EKS cluster name",
            c.name
        ));
    }
    let parsed = match c.arn.as_deref() {
        None => None,
        Some(a) => match parse_arn(a) {
            Some(p) if p.name == c.name => Some(p),
            Some(p) => {
                return Err(format!(
                    "cluster.arn `{a}` names cluster `{}`, cluster.name is `{}`",
                    p.name, c.name
                ))
            }
            None => return Err(format!("cluster.arn `{a}` is not an EKS cluster ARN")),
        },
    };
    Ok(Described {
        region: Some(
            parsed
                .as_ref()
                .map_or_else(|| issuer.region.clone(), |p| p.region.to_string()),
        ),
        account: parsed.as_ref().map(|p| p.account.to_string()),
        name: c.name,
        arn: c.arn,
        endpoint: c.endpoint,
        issuer,
        ca_data: c.certificate_authority.and_then(|ca| ca.data),
        platform_version: c.platform_version,
        version: c.version,
    })
}

/// Reads `aws eks describe-cluster` output from `path`, given by `flag`;
/// errors name both.
pub fn read_describe(flag: &str, path: &std::path::Path) -> anyhow::Result<Described> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot read: {e}", path.display()))?;
    parse_describe(&text).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";

    #[test]
    fn every_field_of_describe_cluster_is_read() {
        let d = parse_describe(&format!(
            r#"{{"cluster": {{"name": "prod-blue", "arn": "arn:aws:eks:eu-west-1:111122223333:cluster/prod-blue", "endpoint": "https://{ID}.gr7.eu-west-1.eks.amazonaws.com", "certificateAuthority": {{"data": "LS0tQ0E="}}, "platformVersion": "eks.5", "version": "1.30", "identity": {{"oidc": {{"issuer": "https://oidc.eks.eu-west-1.amazonaws.com/id/{ID}"}}}}}}}}"#
        ))
        .unwrap();
        assert_eq!(d.name, "prod-blue");
        assert_eq!(d.issuer.id, ID);
        assert_eq!(d.ca_data.as_deref(), Some("LS0tQ0E="));
        assert_eq!(d.region.as_deref(), Some("eu-west-1"));
        assert_eq!(d.account.as_deref(), Some("111122223333"));
        assert_eq!(d.platform_version.as_deref(), Some("eks.5"));
        assert_eq!(d.version.as_deref(), Some("1.30"));
        assert!(parse_describe("{}").is_err());
    }

    #[test]
    fn an_arn_that_names_another_cluster_is_refused() {
        let e = parse_describe(&format!(
            r#"{{"cluster": {{"name": "prod", "arn": "arn:aws:eks:eu-west-1:111122223333:cluster/stage", "endpoint": "https://{ID}.gr7.eu-west-1.eks.amazonaws.com", "identity": {{"oidc": {{"issuer": "https://oidc.eks.eu-west-1.amazonaws.com/id/{ID}"}}}}}}}}"#
        ))
        .unwrap_err();
        assert!(e.contains("names cluster `stage`"), "{e}");
    }

    #[test]
    fn cluster_arns_and_names() {
        let a = parse_arn("arn:aws:eks:ap-northeast-2:111122223333:cluster/finance-prod").unwrap();
        assert_eq!(
            (a.partition, a.region, a.account, a.name),
            ("aws", "ap-northeast-2", "111122223333", "finance-prod")
        );
        assert!(parse_arn("arn:aws-cn:eks:cn-north-1:111122223333:cluster/x").is_some());
        // Another service, another resource, a short account, text around.
        for not in [
            "arn:aws:iam::111122223333:role/prod",
            "arn:aws:eks:eu-west-1:111122223333:nodegroup/prod/ng/1",
            "arn:aws:eks:eu-west-1:1111:cluster/prod",
            "see arn:aws:eks:eu-west-1:111122223333:cluster/prod",
            "arn:aws:eks:eu-west-1:111122223333:cluster/prod/x",
        ] {
            assert!(parse_arn(not).is_none(), "{not}");
        }
        assert!(is_cluster_name("prod_blue-2"));
        assert!(
            !is_cluster_name("-prod") && !is_cluster_name("prod.example") && !is_cluster_name("")
        );
    }
}
