//! Renders the identity report: every EKS OIDC issuer reference, the
//! dynamic trusts, and the trust coverage for a cutover's two issuers.

use crate::review::oidc::{Coverage, Inventory};
use crate::text::issuer::{Form, Issuer};
use serde::{Deserialize, Serialize};

/// The old and new issuers of a cutover, and where they came from.
#[derive(Debug, Clone)]
pub struct Pair {
    pub old: Issuer,
    pub new: Issuer,
}

#[derive(Debug, Serialize)]
pub struct ReferenceJson {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub form: &'static str,
    pub issuer: String,
    pub condition_key: Option<String>,
    pub partition: Option<String>,
    pub account: Option<String>,
    /// `manifest` (a YAML/JSON value or key) or `text` (a mention).
    pub kind: &'static str,
    /// `old`, `new` or `other` when a cutover's issuers are known.
    pub cluster: Option<&'static str>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TrustJson {
    pub path: String,
    pub resource: Option<String>,
    pub at: String,
    /// The statements (Sid, else their place) that federate through an
    /// EKS issuer for this account.
    pub statements: Vec<String>,
    pub account: Option<String>,
    pub issuers: Vec<String>,
    pub coverage: Option<String>,
}

impl TrustJson {
    pub fn new(r: &crate::review::oidc::RoleTrust, coverage: Option<Coverage>) -> TrustJson {
        TrustJson {
            path: r.rel.clone(),
            resource: r.resource.clone(),
            at: r.at.clone(),
            statements: r.statements.clone(),
            account: r.account.clone(),
            issuers: r.issuers.iter().map(Issuer::url).collect(),
            coverage: coverage.map(|c| c.key().to_string()),
        }
    }
}

/// The identity section of a `diff`/`apply` review's JSON: the issuers and
/// each role's coverage.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReviewJson {
    pub old_issuer: String,
    pub new_issuer: String,
    pub old_only_count: usize,
    pub trusts: Vec<TrustJson>,
}

impl ReviewJson {
    pub fn new(c: &crate::review::oidc::CoverageReport) -> ReviewJson {
        ReviewJson {
            old_issuer: c.old.url(),
            new_issuer: c.new.url(),
            old_only_count: c.old_only(),
            trusts: c
                .roles
                .iter()
                .map(|(r, cov)| TrustJson::new(r, Some(*cov)))
                .collect(),
        }
    }
}

fn role_line(t: &TrustJson) -> String {
    let res = t
        .resource
        .as_ref()
        .map(|r| format!(" [{r}]"))
        .unwrap_or_default();
    format!(
        "{}{res} {} ({}; account {})",
        t.path,
        t.at,
        t.statements.join(", "),
        t.account.as_deref().unwrap_or("not literal")
    )
}

/// The identity section of the text review.
pub fn review_text(c: &crate::review::oidc::CoverageReport) -> String {
    let j = ReviewJson::new(c);
    let mut out = format!(
        "The new cluster's identity (old issuer {}, new issuer {}):\n",
        j.old_issuer, j.new_issuer
    );
    if j.trusts.is_empty() {
        out.push_str("  no IAM trust policy in the tree federates through an EKS issuer\n");
    }
    for t in &j.trusts {
        let what = t.coverage.as_deref().map(coverage_sentence).unwrap_or("");
        out.push_str(&format!("  {}: {what}\n", role_line(t)));
    }
    if j.old_only_count > 0 {
        out.push_str(&format!(
            "warning: {} only the old issuer: run `rebind identity --describe-from OLD.json --describe-to NEW.json --trust add --yes` and let the IAM change apply before the cutover\n",
            crate::text::words::count_as(j.old_only_count, "role trusts", "roles trust")
        ));
    }
    out
}

/// The identity section of the review Markdown.
pub fn review_markdown(c: &crate::review::oidc::CoverageReport) -> String {
    let j = ReviewJson::new(c);
    let mut out = format!(
        "## The new cluster's identity\n\nOld issuer `{}`, new issuer `{}`.\n\n| role | trust | coverage |\n| --- | --- | --- |\n",
        j.old_issuer, j.new_issuer
    );
    for t in &j.trusts {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            super::md_code(&t.path),
            role_line(t).replace('|', "\\|"),
            t.coverage.as_deref().map(coverage_sentence).unwrap_or("")
        ));
    }
    if j.old_only_count > 0 {
        out.push_str(&format!(
            "\n> {} only the old issuer: add the new issuer (`rebind identity ... --trust add`) before the cutover.\n",
            crate::text::words::count_as(j.old_only_count, "role trusts", "roles trust")
        ));
    }
    out
}

#[derive(Debug, Serialize)]
pub struct DynamicJson {
    pub path: String,
    pub line: usize,
    pub what: &'static str,
}

/// `rebind identity --format json`.
#[derive(Debug, Serialize)]
pub struct IdentityReport {
    pub schema_version: u32,
    pub command: &'static str,
    pub old_issuer: Option<String>,
    pub new_issuer: Option<String>,
    pub reference_count: usize,
    pub references: Vec<ReferenceJson>,
    pub dynamic: Vec<DynamicJson>,
    pub trusts: Vec<TrustJson>,
    pub old_only_count: usize,
    pub notes: Vec<String>,
}

fn which(i: &Issuer, pair: Option<&Pair>) -> Option<&'static str> {
    let p = pair?;
    Some(if i.same(&p.old) {
        "old"
    } else if i.same(&p.new) {
        "new"
    } else {
        "other"
    })
}

impl IdentityReport {
    /// `notes`: labelled suggestions, and contradictions between an
    /// endpoint id and an issuer id.
    pub fn new(inv: &Inventory, pair: Option<&Pair>, notes: Vec<String>) -> IdentityReport {
        let references = inv
            .references
            .iter()
            .map(|r| {
                let (key, partition, account) = match &r.found.form {
                    Form::HostPath { key } => (key.clone(), None, None),
                    Form::ProviderArn { partition, account } => {
                        (None, Some(partition.clone()), Some(account.clone()))
                    }
                    Form::Url => (None, None, None),
                };
                ReferenceJson {
                    path: r.rel.clone(),
                    line: r.line,
                    column: r.column,
                    form: r.found.form.name(),
                    issuer: r.found.issuer.url(),
                    condition_key: key,
                    partition,
                    account,
                    kind: if r.in_manifest { "manifest" } else { "text" },
                    cluster: which(&r.found.issuer, pair),
                }
            })
            .collect();
        let trusts: Vec<TrustJson> = crate::review::oidc::roles(inv)
            .iter()
            .map(|r| TrustJson::new(r, pair.map(|p| r.coverage(&p.old, &p.new))))
            .collect();
        let old_only_count = trusts
            .iter()
            .filter(|t| t.coverage.as_deref() == Some(Coverage::OldOnly.key()))
            .count();
        IdentityReport {
            schema_version: 1,
            command: "identity",
            old_issuer: pair.map(|p| p.old.url()),
            new_issuer: pair.map(|p| p.new.url()),
            reference_count: inv.references.len(),
            references,
            dynamic: inv
                .dynamic
                .iter()
                .map(|(p, l, w)| DynamicJson {
                    path: p.clone(),
                    line: *l,
                    what: w,
                })
                .collect(),
            trusts,
            old_only_count,
            notes,
        }
    }
}

fn coverage_sentence(key: &str) -> &'static str {
    [
        Coverage::OldOnly,
        Coverage::Both,
        Coverage::NewOnly,
        Coverage::Neither,
    ]
    .into_iter()
    .find(|c| c.key() == key)
    .map(Coverage::sentence)
    .unwrap_or("")
}

/// The text report.
pub fn text(r: &IdentityReport) -> String {
    let mut out = String::new();
    if r.references.is_empty() {
        out.push_str("No EKS OIDC issuer reference found.\n");
    }
    for x in &r.references {
        let key = x
            .condition_key
            .as_ref()
            .map(|k| format!(" (:{k})"))
            .unwrap_or_default();
        let acct = x
            .account
            .as_ref()
            .map(|a| format!(" account {a}"))
            .unwrap_or_default();
        let cluster = x.cluster.map(|c| format!(" [{c}]")).unwrap_or_default();
        let tf = [".tf", ".tfvars", ".hcl"]
            .iter()
            .any(|e| x.path.to_ascii_lowercase().ends_with(e));
        let mention = if tf {
            " (Terraform: change it in the code, adding the new issuer before the cutover; for the IAM module, add the new provider to oidc_providers)"
        } else if x.kind == "text" {
            " (text: change by hand)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{}:{}:{}: {}{key}{acct} {}{cluster}{mention}\n",
            x.path, x.line, x.column, x.form, x.issuer
        ));
    }
    if !r.dynamic.is_empty() {
        out.push_str("\nDynamic trusts (follow the cluster; nothing to change):\n");
        for d in &r.dynamic {
            out.push_str(&format!("  {}:{}: {}\n", d.path, d.line, d.what));
        }
    }
    if !r.trusts.is_empty() {
        match (&r.old_issuer, &r.new_issuer) {
            (Some(o), Some(n)) => out.push_str(&format!(
                "\nTrust coverage (old issuer {o}, new issuer {n}):\n"
            )),
            _ => out.push_str(
                "\nTrust statements (give --describe-from/--describe-to or --oidc-from/--oidc-to for coverage):\n",
            ),
        }
        for t in &r.trusts {
            let what = match t.coverage.as_deref() {
                Some(c) => coverage_sentence(c).to_string(),
                None => format!("trusts {}", t.issuers.join(", ")),
            };
            out.push_str(&format!("  {}: {what}\n", role_line(t)));
        }
    }
    if r.old_only_count > 0 {
        out.push_str(&format!(
            "\n{} only the old issuer: add the new issuer to each before the cutover (or its pods are denied AWS credentials), and remove the old one only after the old cluster is torn down.\n",
            crate::text::words::count_as(r.old_only_count, "role (trust document) trusts", "roles (trust documents) trust")
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
