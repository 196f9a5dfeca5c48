//! Renders the identity report: every EKS OIDC issuer reference, the
//! dynamic trusts, and the trust coverage for a cutover's two issuers.

use crate::review::oidc::{Coverage, CoverageReport, Inventory};
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

/// A grant of the old issuer with no twin for the new one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrantJson {
    pub code: String,
    pub statement: String,
    pub line: usize,
    pub account: Option<String>,
    pub issuer: String,
    /// `None`: any subject.
    pub subject: Option<String>,
    pub audience: Option<String>,
    /// Other conditions of the statement, the issuer written `<issuer>`.
    pub conditions: Vec<String>,
}

impl GrantJson {
    fn new(m: &crate::review::oidc::MissingGrant) -> GrantJson {
        GrantJson {
            code: codes::GRANT_MISSING.into(),
            statement: m.statement.clone(),
            line: m.line,
            account: m.grant.account.clone(),
            issuer: m.grant.issuer.url(),
            subject: m.grant.subject.as_ref().map(|p| p.value.clone()),
            audience: m.grant.audience.as_ref().map(|p| p.value.clone()),
            conditions: m.grant.rest.clone(),
        }
    }
}

/// A statement named for what it lacks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatementJson {
    pub code: String,
    pub statement: String,
    pub line: usize,
    /// Why, in words.
    pub reason: String,
}

pub use crate::review::oidc::codes;

#[derive(Debug, Serialize, Deserialize)]
pub struct TrustJson {
    pub path: String,
    pub resource: Option<String>,
    pub at: String,
    pub line: usize,
    /// The statements (Sid, else their place) that federate through an
    /// EKS issuer.
    pub statements: Vec<String>,
    /// The account of its providers, when exactly one is literal.
    pub account: Option<String>,
    pub accounts: Vec<String>,
    pub issuers: Vec<String>,
    pub coverage: Option<String>,
    /// Each grant of the old issuer with no twin for the new one.
    pub missing_grants: Vec<GrantJson>,
    /// Statements that grant nobody (principal and keys of different
    /// issuers).
    pub mismatched: Vec<StatementJson>,
    /// Statements not proven (rendered by a chart, unresolved, what rebind
    /// does not evaluate).
    pub not_proven: Vec<StatementJson>,
    /// Explicit denies that may apply to a web-identity token of the old or
    /// the new issuer (an explicit deny overrides any allow).
    pub denied: Vec<StatementJson>,
}

impl TrustJson {
    pub fn new(
        r: &crate::review::oidc::RoleTrust,
        coverage: Option<Coverage>,
        missing: &[crate::review::oidc::MissingGrant],
        denied: &[(String, usize, usize)],
    ) -> TrustJson {
        let st = |code: &str, v: &[(String, usize)], reason: &str| -> Vec<StatementJson> {
            v.iter()
                .map(|(s, l)| StatementJson {
                    code: code.into(),
                    statement: s.clone(),
                    line: *l,
                    reason: reason.into(),
                })
                .collect()
        };
        TrustJson {
            path: r.rel.clone(),
            resource: r.resource.clone(),
            at: r.at.clone(),
            line: r.line,
            statements: r.statements.clone(),
            account: r.account().map(str::to_string),
            accounts: r.accounts.clone(),
            issuers: r.issuers.iter().map(Issuer::url).collect(),
            coverage: coverage.map(|c| c.key().to_string()),
            missing_grants: missing.iter().map(GrantJson::new).collect(),
            mismatched: st(
                codes::STATEMENT_MISMATCHED,
                &r.mismatched,
                "its principal and its condition keys name different issuers",
            ),
            not_proven: r
                .not_proven
                .iter()
                .map(|(s, l, why)| StatementJson {
                    code: codes::NOT_PROVEN.into(),
                    statement: s.clone(),
                    line: *l,
                    reason: why.clone(),
                })
                .collect(),
            denied: denied
                .iter()
                .map(|(s, l, place)| StatementJson {
                    code: codes::DENIED.into(),
                    statement: s.clone(),
                    line: *l,
                    reason: format!("statement {place} of the policy is an explicit Deny that may apply to sts:AssumeRoleWithWebIdentity for the old or the new issuer's tokens (its conditions are not proven disjoint from a grant): an explicit deny overrides any Allow"),
                })
                .collect(),
        }
    }
}

/// A literal Terraform trust that lacks the new issuer (or a chart value
/// not followed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TerraformJson {
    pub code: String,
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub form: String,
    pub message: String,
}

/// The sentence to act on for a Terraform trust.
pub const TERRAFORM_SENTENCE: &str = "a literal Terraform trust names the old issuer and its statement has no copy for the new issuer in this file: add one (same statement, the new issuer's provider ARN and condition keys; for the IAM module, add the new provider to oidc_providers) and apply it before the cutover";

/// The sentence to act on for a chart value that may render a trust.
pub const NOT_FOLLOWED_SENTENCE: &str = "a chart value names the old issuer and rebind does not follow it into the trust a template renders from it: not proven; add the new issuer's trust in the chart (or its values) before the cutover, and check the rendered policy";

/// An account that needs the new issuer's provider.
#[derive(Debug, Serialize, Deserialize)]
pub struct ProviderJson {
    pub code: String,
    pub partition: String,
    pub account: String,
    /// The new provider's ARN in that account.
    pub provider_arn: String,
    /// Where the old provider is named.
    pub places: Vec<String>,
    /// The command to run with that account's credentials.
    pub command: String,
    /// The Terraform resource that does the same.
    pub terraform: String,
}

impl ProviderJson {
    fn new(a: &crate::review::oidc::ProviderAccount, new: &Issuer) -> ProviderJson {
        let name = format!(
            "eks_{}",
            new.id
                .to_ascii_lowercase()
                .chars()
                .take(8)
                .collect::<String>()
        );
        ProviderJson {
            code: codes::PROVIDER_REQUIRED.into(),
            partition: a.partition.clone(),
            account: a.account.clone(),
            provider_arn: format!(
                "arn:{}:iam::{}:oidc-provider/{}",
                a.partition,
                a.account,
                new.host_path()
            ),
            places: a.places.clone(),
            command: format!(
                "aws iam create-open-id-connect-provider --url {} --client-id-list {}",
                new.url(),
                crate::model::iam::STS_AUDIENCE
            ),
            terraform: format!(
                "resource \"aws_iam_openid_connect_provider\" \"{name}\" {{\n  url            = \"{}\"\n  client_id_list = [\"{}\"]\n}}",
                new.url(),
                crate::model::iam::STS_AUDIENCE
            ),
        }
    }
}

/// The identity section of a `diff`/`apply` review's JSON: the issuers and
/// each role's coverage.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReviewJson {
    pub old_issuer: String,
    pub new_issuer: String,
    /// Every grant of the old issuer is proven to have its twin.
    pub ready: bool,
    pub old_only_count: usize,
    pub not_proven_count: usize,
    pub missing_grant_count: usize,
    pub trusts: Vec<TrustJson>,
    pub terraform: Vec<TerraformJson>,
    pub providers: Vec<ProviderJson>,
    /// Roles (file:line) naming the old provider with no literal account:
    /// the new provider must exist in the account each is deployed to.
    pub provider_accounts_not_literal: Vec<String>,
    /// Chart values naming the old issuer that a template may render into a
    /// trust: not followed (code `identity.not_proven`).
    pub not_followed: Vec<TerraformJson>,
}

impl ReviewJson {
    pub fn new(c: &crate::review::oidc::CoverageReport) -> ReviewJson {
        let trusts: Vec<TrustJson> = c
            .roles
            .iter()
            .map(|(r, cov, m)| TrustJson::new(r, Some(*cov), m, &r.denied(&c.old, &c.new)))
            .collect();
        ReviewJson {
            old_issuer: c.old.url(),
            new_issuer: c.new.url(),
            ready: c.ready(),
            old_only_count: c.old_only(),
            not_proven_count: c.not_proven(),
            missing_grant_count: trusts.iter().map(|t| t.missing_grants.len()).sum(),
            trusts,
            terraform: c
                .terraform
                .iter()
                .map(|t| TerraformJson {
                    code: codes::TERRAFORM_PENDING.into(),
                    path: t.rel.clone(),
                    line: t.line,
                    column: t.column,
                    form: t.form.to_string(),
                    message: TERRAFORM_SENTENCE.into(),
                })
                .collect(),
            providers: c
                .accounts
                .iter()
                .map(|a| ProviderJson::new(a, &c.new))
                .collect(),
            provider_accounts_not_literal: c.accounts_not_literal.clone(),
            not_followed: c
                .not_followed
                .iter()
                .map(|t| TerraformJson {
                    code: codes::NOT_PROVEN.into(),
                    path: t.rel.clone(),
                    line: t.line,
                    column: t.column,
                    form: t.form.to_string(),
                    message: NOT_FOLLOWED_SENTENCE.into(),
                })
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
        "{}:{}{res} {} ({}; account {})",
        t.path,
        t.line,
        t.at,
        t.statements.join(", "),
        if t.accounts.is_empty() {
            "not literal".to_string()
        } else {
            t.accounts.join(", ")
        }
    )
}

/// The lines under a role: each missing grant, each statement that grants
/// nobody or is not proven.
fn role_details(t: &TrustJson, indent: &str) -> String {
    let mut out = String::new();
    for g in &t.missing_grants {
        out.push_str(&format!(
            "{indent}missing for the new issuer: subject {}, audience {} (from {}, line {}{})\n",
            g.subject.as_deref().unwrap_or("any"),
            g.audience.as_deref().unwrap_or("any"),
            g.statement,
            g.line,
            if g.conditions.is_empty() {
                String::new()
            } else {
                format!("; with {}", g.conditions.join("; "))
            }
        ));
    }
    for s in &t.mismatched {
        out.push_str(&format!(
            "{indent}statement {} (line {}) grants nobody: {}\n",
            s.statement, s.line, s.reason
        ));
    }
    for s in &t.not_proven {
        out.push_str(&format!(
            "{indent}statement {} (line {}) is not followed: {}\n",
            s.statement, s.line, s.reason
        ));
    }
    for s in &t.denied {
        out.push_str(&format!(
            "{indent}statement {} (line {}) denies: {}\n",
            s.statement, s.line, s.reason
        ));
    }
    out
}

/// The text of the provider accounts and the Terraform trusts.
fn providers_and_terraform(
    providers: &[ProviderJson],
    not_literal: &[String],
    terraform: &[TerraformJson],
    new: &str,
) -> String {
    let mut out = String::new();
    if !providers.is_empty() {
        out.push_str(&format!(
            "The new issuer's OIDC provider must exist in {} before the cutover ({new}):\n",
            crate::text::words::count(providers.len(), "account")
        ));
        for p in providers {
            out.push_str(&format!(
                "  account {} (old provider named at {}): {}\n    or in Terraform: {}\n",
                p.account,
                p.places.join(", "),
                p.command,
                p.terraform.replace('\n', " ")
            ));
        }
    }
    if !not_literal.is_empty() {
        out.push_str(&format!(
            "The new issuer's OIDC provider must also exist in the account each of these roles is deployed to (its provider's account is not literal: {}): aws iam create-open-id-connect-provider --url {new} --client-id-list {}\n",
            not_literal.join(", "),
            crate::model::iam::STS_AUDIENCE
        ));
    }
    for t in terraform {
        out.push_str(&format!(
            "{}:{}:{}: {}: {}\n",
            t.path, t.line, t.column, t.form, t.message
        ));
    }
    out
}

/// The closing lines: how many roles are not ready and why. `counts`:
/// roles with a missing grant, grants missing, roles not proven, Terraform
/// references pending.
fn not_ready(counts: [usize; 4], lead: &str, act: &str) -> String {
    let [old_only, missing, not_proven, terraform] = counts;
    let mut out = String::new();
    if old_only > 0 {
        out.push_str(&format!(
            "{lead}{} only the old issuer for some grants ({} missing): {act}\n",
            crate::text::words::count_as(old_only, "role trusts", "roles trust"),
            crate::text::words::count(missing, "grant")
        ));
    }
    if not_proven > 0 {
        out.push_str(&format!(
            "{lead}{} not proven (a trust rendered by a chart, or not literal): check the rendered policy by hand before the cutover\n",
            crate::text::words::count_as(not_proven, "role is", "roles are")
        ));
    }
    if terraform > 0 {
        out.push_str(&format!(
            "{lead}{} the old issuer literally with no copy for the new one: add it in the code before the cutover\n",
            crate::text::words::count_as(terraform, "Terraform reference names", "Terraform references name")
        ));
    }
    out
}

impl ReviewJson {
    fn counts(&self) -> [usize; 4] {
        [
            self.old_only_count,
            self.missing_grant_count,
            self.not_proven_count + self.not_followed.len(),
            self.terraform.len(),
        ]
    }
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
        out.push_str(&role_details(t, "    "));
    }
    out.push_str(&providers_and_terraform(
        &j.providers,
        &j.provider_accounts_not_literal,
        &[j.terraform.clone(), j.not_followed.clone()].concat(),
        &j.new_issuer,
    ));
    out.push_str(&not_ready(j.counts(), "warning: ", "run `rebind identity --describe-from OLD.json --describe-to NEW.json --trust add --yes` and let the IAM change apply before the cutover"));
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
        let details = role_details(t, "");
        out.push_str(&format!(
            "| {} | {} | {}{} |\n",
            super::finding::md_code(&t.path),
            role_line(t).replace('|', "\\|"),
            t.coverage.as_deref().map(coverage_sentence).unwrap_or(""),
            details
                .lines()
                .map(|l| format!("<br>{}", l.replace('|', "\\|")))
                .collect::<String>()
        ));
    }
    if !j.providers.is_empty() || !j.provider_accounts_not_literal.is_empty() {
        out.push_str("\n### The new issuer's OIDC provider, per account\n\n");
        if !j.provider_accounts_not_literal.is_empty() {
            out.push_str(&format!(
                "- the account each of these roles is deployed to (its provider's account is not literal): {}\n",
                j.provider_accounts_not_literal
                    .iter()
                    .map(|p| super::finding::md_code(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for p in &j.providers {
            out.push_str(&format!(
                "- account `{}` (old provider named at {}): `{}`, or in Terraform:\n\n```hcl\n{}\n```\n",
                p.account,
                p.places.join(", "),
                p.command,
                p.terraform
            ));
        }
    }
    for t in &j.terraform {
        out.push_str(&format!(
            "\n> {}:{}:{}: {}\n",
            super::finding::md_code(&t.path),
            t.line,
            t.column,
            t.message
        ));
    }
    let more = not_ready(
        j.counts(),
        "> ",
        "add the new issuer (`rebind identity ... --trust add`) before the cutover.",
    );
    if !more.is_empty() {
        out.push('\n');
        out.push_str(more.replace('\n', "\n\n").trim_end());
        out.push('\n');
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
    /// With both issuers: every grant of the old issuer is proven to have
    /// its twin, and no Terraform trust lacks the new issuer.
    pub ready: Option<bool>,
    pub not_proven_count: usize,
    pub missing_grant_count: usize,
    pub terraform: Vec<TerraformJson>,
    pub providers: Vec<ProviderJson>,
    pub provider_accounts_not_literal: Vec<String>,
    pub not_followed: Vec<TerraformJson>,
    pub notes: Vec<String>,
    /// `notes`, entry for entry, each with its stable `code`.
    pub warnings: Vec<super::codes::WarningJson>,
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
        let trusts = crate::review::oidc::roles(inv)
            .iter()
            .map(|r| TrustJson::new(r, None, &[], &[]))
            .collect();
        let mut report = IdentityReport {
            schema_version: super::finding::SCHEMA_VERSION,
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
            old_only_count: 0,
            ready: None,
            not_proven_count: 0,
            missing_grant_count: 0,
            terraform: Vec::new(),
            providers: Vec::new(),
            provider_accounts_not_literal: Vec::new(),
            not_followed: Vec::new(),
            warnings: super::codes::coded(super::codes::IDENTITY_NOTE, "notes", &notes).collect(),
            notes,
        };
        // With both issuers, the coverage grant by grant.
        if let Some(p) = pair {
            let r = ReviewJson::new(&CoverageReport::of(inv, &p.old, &p.new));
            report.ready = Some(r.ready);
            report.old_only_count = r.old_only_count;
            report.not_proven_count = r.not_proven_count;
            report.missing_grant_count = r.missing_grant_count;
            report.trusts = r.trusts;
            report.terraform = r.terraform;
            report.providers = r.providers;
            report.provider_accounts_not_literal = r.provider_accounts_not_literal;
            report.not_followed = r.not_followed;
        }
        report
    }
}

fn coverage_sentence(key: &str) -> &'static str {
    Coverage::ALL
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
            out.push_str(&role_details(t, "    "));
        }
    }
    if let Some(n) = &r.new_issuer {
        let more = providers_and_terraform(
            &r.providers,
            &r.provider_accounts_not_literal,
            &r.terraform,
            n,
        );
        if !more.is_empty() {
            out.push('\n');
            out.push_str(&more);
        }
    }
    out.push_str(&not_ready(
        [
            r.old_only_count,
            r.missing_grant_count,
            r.not_proven_count + r.not_followed.len(),
            r.terraform.len(),
        ],
        "\n",
        "add the new issuer to each before the cutover (or those pods are denied AWS credentials), and remove the old one only after the old cluster is torn down",
    ));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
