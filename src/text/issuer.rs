//! What text names an EKS OIDC issuer: as a URL, as the scheme-less host
//! path of IAM condition keys, or inside an `oidc-provider` ARN.

/// An EKS cluster's OIDC issuer: `oidc.eks.<region>.amazonaws.com[.cn]/id/<ID>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Issuer {
    pub region: String,
    /// The issuer id as written (EKS writes 32 upper-case hex digits).
    pub id: String,
    /// Under `amazonaws.com.cn` (the China partition).
    pub china: bool,
}

impl Issuer {
    /// The scheme-less form IAM uses in condition keys and provider ARNs.
    pub fn host_path(&self) -> String {
        let suffix = if self.china { ".cn" } else { "" };
        format!(
            "oidc.eks.{}.amazonaws.com{suffix}/id/{}",
            self.region, self.id
        )
    }

    /// The issuer URL, as `aws eks describe-cluster` gives it.
    pub fn url(&self) -> String {
        format!("https://{}", self.host_path())
    }

    /// Parses an issuer in any of its forms (URL, host path, provider ARN).
    pub fn parse(s: &str) -> Option<Issuer> {
        let found = find(s.trim());
        match found.as_slice() {
            [one] if one.start == 0 || s.trim().starts_with("arn:") => Some(one.issuer.clone()),
            _ => None,
        }
    }

    /// Ids compare case-insensitively (IAM compares the host path as
    /// written; EKS always writes upper case).
    pub fn same(&self, other: &Issuer) -> bool {
        self.region == other.region
            && self.china == other.china
            && self.id.eq_ignore_ascii_case(&other.id)
    }
}

/// How a reference spells the issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// `https://oidc.eks.../id/ID`.
    Url,
    /// `oidc.eks.../id/ID`, with the condition key's suffix (`sub`, `aud`,
    /// `amr`) when one follows.
    HostPath { key: Option<String> },
    /// `arn:<partition>:iam::<account>:oidc-provider/oidc.eks.../id/ID`.
    ProviderArn { partition: String, account: String },
}

impl Form {
    pub fn name(&self) -> &'static str {
        match self {
            Form::Url => "issuer URL",
            Form::HostPath { key: Some(_) } => "condition key",
            Form::HostPath { key: None } => "issuer host path",
            Form::ProviderArn { .. } => "provider ARN",
        }
    }
}

/// One reference found in a text: the byte range of the whole reference
/// (ARN prefix, scheme and condition suffix included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub issuer: Issuer,
    pub form: Form,
    pub start: usize,
    pub end: usize,
}

const PARTITIONS: [&str; 3] = ["aws", "aws-cn", "aws-us-gov"];

fn is_region(r: &str) -> bool {
    // `us-east-1`, `us-gov-west-1`, `cn-northwest-1`, `ap-southeast-5`, `eu-isoe-west-1`.
    let parts: Vec<&str> = r.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts[0].bytes().all(|b| b.is_ascii_lowercase())
        && parts[1..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts[parts.len() - 1].bytes().all(|b| b.is_ascii_digit())
        && !parts[parts.len() - 1].is_empty()
}

fn is_id(id: &str) -> bool {
    (16..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every issuer reference in `text`, in order. Another OIDC provider (a CI
/// token issuer, an identity provider) is never one, and neither is an id
/// alone: the `oidc.eks.<region>.amazonaws.com/id/` host path is required.
pub fn find(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("oidc.eks.").map(|i| i + from) {
        from = i + 1;
        if let Some(f) = at(text, &lower, i) {
            from = f.end;
            out.push(f);
        }
    }
    out
}

/// The reference whose host starts at byte `i` (`oidc.eks.`), if it is one.
fn at(text: &str, lower: &str, i: usize) -> Option<Found> {
    let rest = &lower[i + "oidc.eks.".len()..];
    let dot = rest.find('.')?;
    let region = &rest[..dot];
    if !is_region(region) {
        return None;
    }
    let after = &rest[dot..];
    // An issuer URL may name the default port (`:443`).
    let (china, after) = if let Some(t) = after.strip_prefix(".amazonaws.com.cn") {
        (true, t)
    } else if let Some(t) = after.strip_prefix(".amazonaws.com") {
        (false, t)
    } else {
        return None;
    };
    let port = after.starts_with(":443/id/");
    let tail = after
        .strip_prefix(":443")
        .unwrap_or(after)
        .strip_prefix("/id/")?;
    let id_len = tail.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
    let id_start = lower.len() - tail.len();
    let id = &text[id_start..id_start + id_len];
    if !is_id(id) {
        return None;
    }
    // A hex digit or letter glued on means a longer word, not this id.
    if lower[id_start + id_len..]
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
    {
        return None;
    }
    let issuer = Issuer {
        region: region.to_string(),
        id: id.to_string(),
        china,
    };
    let mut end = id_start + id_len;
    // Before the host: a scheme, an ARN prefix, or nothing.
    let before = &lower[..i];
    let (start, form) = if before.ends_with("https://") {
        (i - "https://".len(), Form::Url)
    } else if port {
        // `host:443/id/...` is only an issuer as a URL.
        return None;
    } else if let Some((start, partition, account)) = arn_prefix(before) {
        (start, Form::ProviderArn { partition, account })
    } else if !before.ends_with(":oidc-provider/")
        && before
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'/' | b'_'))
    {
        // Part of a longer host or of another URL's path
        // (`xoidc.eks...`, `https://evil.example/oidc.eks...`).
        return None;
    } else {
        let key = ["sub", "aud", "amr"].iter().find_map(|k| {
            lower[end..]
                .strip_prefix(':')
                .and_then(|r| r.strip_prefix(k))
                .filter(|r| !r.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric()))
                .map(|_| k.to_string())
        });
        if let Some(k) = &key {
            end += 1 + k.len();
        }
        (i, Form::HostPath { key })
    };
    Some(Found {
        issuer,
        form,
        start,
        end,
    })
}

/// `arn:<partition>:iam::<12 digits>:oidc-provider/` ending `before`.
fn arn_prefix(before: &str) -> Option<(usize, String, String)> {
    let b = before.strip_suffix(":oidc-provider/")?;
    let account_start = b.len() - b.bytes().rev().take_while(|c| c.is_ascii_digit()).count();
    let account = &b[account_start..];
    if account.len() != 12 {
        return None;
    }
    let b = b[..account_start].strip_suffix(":iam::")?;
    let partition = PARTITIONS
        .iter()
        .find(|p| b.ends_with(&format!("arn:{p}")))?;
    let start = b.len() - format!("arn:{partition}").len();
    Some((start, partition.to_string(), account.to_string()))
}

/// Terraform expressions that read a cluster's issuer at apply time.
const FOLLOWS_THE_CLUSTER: [&str; 3] = [
    ".identity[0].oidc[0].issuer",
    "module.eks.oidc_provider",
    "module.eks.cluster_oidc_issuer_url",
];

/// The body of `resource "aws_iam_openid_connect_provider" "<name>"` in
/// `text` (to its closing brace at the start of a line), if there.
fn provider_resource<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let head = format!("resource \"aws_iam_openid_connect_provider\" \"{name}\"");
    let start = text.find(&head)?;
    let body = &text[start..];
    let end = body.find("\n}").map_or(body.len(), |e| e + 2);
    Some(&body[..end])
}

/// A dynamic trust of a Terraform text: the issuer is read from the
/// cluster at apply time (`data.aws_eks_cluster.X.identity[0].oidc[0].issuer`,
/// the EKS module's `oidc_provider_arn`, a provider resource of the same
/// configuration whose `url` is one of those), so a rebuild needs nothing
/// there. A provider resource for another OIDC provider (GitHub Actions,
/// GitLab, any non-EKS URL), or one not in the text, is never one.
pub fn dynamic_trusts(text: &str) -> Vec<(usize, &'static str)> {
    const SIGNS: [(&str, &str); 3] = [
        (
            ".identity[0].oidc[0].issuer",
            "the cluster's issuer, read at apply time",
        ),
        (
            "module.eks.oidc_provider_arn",
            "the EKS module's provider ARN output",
        ),
        ("module.eks.oidc_provider", "the EKS module's issuer output"),
    ];
    const PROVIDER: &str = "aws_iam_openid_connect_provider.";
    let mut out = Vec::new();
    for (sign, what) in SIGNS {
        let mut from = 0;
        while let Some(i) = text[from..].find(sign).map(|i| i + from) {
            out.push((i, what));
            from = i + sign.len();
        }
    }
    let mut from = 0;
    while let Some(i) = text[from..].find(PROVIDER).map(|i| i + from) {
        from = i + PROVIDER.len();
        let name: String = text[from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        let follows = provider_resource(text, &name)
            .is_some_and(|body| FOLLOWS_THE_CLUSTER.iter().any(|s| body.contains(s)));
        if follows {
            out.push((
                i,
                "a provider resource of the same configuration, for the cluster's issuer",
            ));
        }
    }
    out.sort();
    out.dedup_by_key(|(i, _)| *i);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_for_another_oidc_issuer_never_follows_the_cluster() {
        let tf = "resource \"aws_iam_openid_connect_provider\" \"github\" {\n  url = \"https://token.actions.githubusercontent.com\"\n}\n\nresource \"aws_iam_openid_connect_provider\" \"eks\" {\n  url = data.aws_eks_cluster.this.identity[0].oidc[0].issuer\n}\n\nresource \"aws_iam_openid_connect_provider\" \"gitlab\" {\n  url = \"https://gitlab.com\"\n}\n\nlocals {\n  gl  = aws_iam_openid_connect_provider.gitlab.arn\n  gh  = aws_iam_openid_connect_provider.github.arn\n  eks = aws_iam_openid_connect_provider.eks.arn\n  far = aws_iam_openid_connect_provider.elsewhere.arn\n}\n";
        let d = dynamic_trusts(tf);
        let names: Vec<&str> = d.iter().map(|(i, _)| &tf[*i..*i + 40]).collect();
        assert_eq!(d.len(), 2, "{names:?}");
        assert!(names.iter().any(|n| n.starts_with(".identity")));
        assert!(names
            .iter()
            .any(|n| n.starts_with("aws_iam_openid_connect_provider.eks")));
        for partition in ["amazonaws.com", "amazonaws.com.cn"] {
            for region in ["us-gov-west-1", "us-gov-east-1", "cn-north-1", "eu-west-1"] {
                let url = format!(
                    "https://oidc.eks.{region}.{partition}/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F"
                );
                assert!(Issuer::parse(&url).is_some(), "{url}");
            }
        }
    }
}
