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

use crate::model::iam::{self, Grant};
use crate::model::positions;
use crate::syntax::yaml::{Node, Value};
use crate::text::issuer::{dynamic_trusts, find, Form, Found, Issuer};
use std::collections::BTreeSet;

/// The stable codes of the identity report's warnings and refusals (listed
/// in `docs/identity.md`).
pub mod codes {
    /// A grant of the old issuer (issuer, subject, audience) has no twin
    /// for the new issuer.
    pub const GRANT_MISSING: &str = "identity.grant_missing";
    /// A statement's principal and condition keys name different issuers:
    /// it grants nobody.
    pub const STATEMENT_MISMATCHED: &str = "identity.statement_mismatched";
    /// A statement's principal or keys are rendered by a chart or an
    /// unresolved reference, or it uses what the model does not evaluate:
    /// not proven.
    pub const NOT_PROVEN: &str = "identity.not_proven";
    /// An explicit `Deny` may apply to a web-identity token of the old or
    /// the new issuer (an explicit deny overrides any allow): not proven.
    pub const DENIED: &str = "identity.denied";
    /// A literal Terraform trust names the old issuer with no copy for the
    /// new one.
    pub const TERRAFORM_PENDING: &str = "identity.terraform_pending";
    /// The new issuer's OIDC provider must exist in an account.
    pub const PROVIDER_REQUIRED: &str = "identity.provider_required";
    /// `remove-retired` was given an issuer that is current.
    pub const RETIRED_IS_CURRENT: &str = "identity.retired_is_current";
    /// A trust edit rebind cannot make in place (or whose result does not
    /// check out grant by grant).
    pub const EDIT_REFUSED: &str = "identity.edit_refused";
}

/// One statement of a trust policy that federates through an EKS issuer.
#[derive(Debug, Clone)]
pub struct TrustStatement {
    /// `Sid`, else the statement's place (`statement 2`).
    pub sid: String,
    /// 1-based line of the statement in its file.
    pub line: usize,
    /// The accounts of its `oidc-provider` principals.
    pub accounts: BTreeSet<String>,
    /// The issuers it names (principals and condition keys together).
    pub issuers: Vec<Issuer>,
    /// What IAM makes of it: its grants, a mismatch, an unresolved
    /// principal.
    pub read: iam::Statement,
    /// Its lines hold a chart's template action: rendered from values,
    /// not read.
    pub templated: bool,
}

impl TrustStatement {
    /// Not proven: its principal or keys are not literal (a template, an
    /// unresolved reference) where an EKS trust may be, or it may let
    /// web-identity tokens in through what the model does not evaluate.
    pub fn not_proven(&self) -> bool {
        self.literal_unproven() || self.read.unknown.is_some()
    }

    /// Not literal where an EKS trust may be: what makes a policy a trust
    /// document to report at all.
    fn literal_unproven(&self) -> bool {
        self.read.unresolved || (self.templated && self.read.federates())
    }

    /// Why it is not proven, in words.
    pub fn why_not_proven(&self) -> String {
        match &self.read.unknown {
            Some(why) if !self.literal_unproven() => {
                format!("it may let web-identity tokens in through {why}")
            }
            _ => {
                "its principal or condition keys are rendered by a chart or not literal".to_string()
            }
        }
    }
}

/// What a role's trust means for a cutover, grant by grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Grants the old issuer and none of the new: the new cluster's pods
    /// will be denied; add the new issuer before the cutover.
    OldOnly,
    /// Some grant of the old issuer has its twin for the new one, some has
    /// not: the pods of the others will be denied.
    Partial,
    /// Every grant of the old issuer has its twin: ready; remove the old
    /// issuer after the teardown.
    Both,
    /// Grants the new issuer only.
    NewOnly,
    /// Grants neither and names neither issuer: another cluster's role.
    Neither,
    /// A statement that may federate through an EKS issuer is not literal
    /// (rendered by a chart, an unresolved reference), uses what the model
    /// does not evaluate, or an explicit `Deny` may apply; or it names the
    /// old or new issuer but grants neither: not proven.
    NotProven,
}

impl Coverage {
    pub const ALL: [Coverage; 6] = [
        Coverage::OldOnly,
        Coverage::Partial,
        Coverage::Both,
        Coverage::NewOnly,
        Coverage::Neither,
        Coverage::NotProven,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Coverage::OldOnly => "old_only",
            Coverage::Partial => "partial",
            Coverage::Both => "old_and_new",
            Coverage::NewOnly => "new_only",
            Coverage::Neither => "neither",
            Coverage::NotProven => "not_proven",
        }
    }

    pub fn sentence(self) -> &'static str {
        match self {
            Coverage::OldOnly => {
                "trusts only the old issuer: the new cluster's pods will be denied; add the new issuer before the cutover"
            }
            Coverage::Partial => {
                "some grants of the old issuer have no twin for the new one: those pods will be denied; add the missing grants before the cutover"
            }
            Coverage::Both => "every grant of the old issuer has its twin for the new one: ready; remove the old issuer after the old cluster is torn down",
            Coverage::NewOnly => "trusts only the new issuer",
            Coverage::Neither => "trusts neither issuer (another cluster's role)",
            Coverage::NotProven => {
                "not proven: a statement's principal or condition keys are not literal here (rendered by a chart from values, or an unresolved reference), a statement uses what rebind does not evaluate, an explicit Deny may apply, or it names this cluster's issuer but grants it nothing; check the policy by hand"
            }
        }
    }

    /// Whether the new cluster's pods are proven to get what the old
    /// cluster's got.
    pub fn ready(self) -> bool {
        !matches!(
            self,
            Coverage::OldOnly | Coverage::Partial | Coverage::NotProven
        )
    }
}

/// The nearest line span of a node (its first and last line).
fn lines_of(n: &Node) -> (usize, usize) {
    let (mut lo, mut hi) = (n.line, n.line);
    n.walk(&mut |_, x| {
        lo = lo.min(x.line);
        hi = hi.max(x.line);
    });
    (lo, hi)
}

/// Where a trust document sits, while walking a file.
struct Ctx<'a> {
    /// The file's lines (unmasked), to see template actions.
    lines: Vec<&'a str>,
    masked: &'a [(usize, usize)],
}

/// Every trust document in one document `doc` of a file: mappings with a
/// `Statement`, and strings that are JSON policies (ACK's
/// `assumeRolePolicyDocument`, Crossplane's `assumeRolePolicy`). `text`:
/// the file as written (for template actions), `masked`: the ranges masked.
pub fn trust_docs_in(doc: &Node, text: &str, masked: &[(usize, usize)]) -> Vec<TrustDoc> {
    let resource = match (doc.str_at(positions::KIND), doc.str_at(positions::NAME)) {
        (Some(k), Some(n)) => Some(format!("{k}/{n}")),
        _ => None,
    };
    let ctx = Ctx {
        lines: text.lines().collect(),
        masked,
    };
    let mut out = Vec::new();
    walk(
        doc,
        doc,
        &mut String::new(),
        &resource,
        &mut out,
        0,
        0,
        &ctx,
    );
    out
}

/// [`trust_docs_in`] for a document read alone.
pub fn trust_docs(doc: &Node) -> Vec<TrustDoc> {
    trust_docs_in(doc, "", &[])
}

/// The trust document of a policy node, if one of its statements
/// federates through an EKS issuer (or may: not proven).
fn policy_doc(
    y: &Node,
    root: &Node,
    path: &str,
    resource: &Option<String>,
    line_base: usize,
    ctx: &Ctx,
) -> Option<TrustDoc> {
    let (items, _) = iam::statements(y)?;
    let mut statements = Vec::new();
    let mut trusts = false;
    for (n, st) in items.iter().enumerate() {
        let masked = if line_base == 0 { ctx.masked } else { &[] };
        let read = iam::read_statement(st, n, Some(root), masked);
        let (lo, hi) = lines_of(st);
        let (lo, hi) = (lo + line_base, hi + line_base);
        let templated = (lo..=hi).any(|l| {
            ctx.lines
                .get(l.saturating_sub(1))
                .is_some_and(|t| t.contains("{{"))
        });
        let st = TrustStatement {
            sid: read
                .sid
                .clone()
                .unwrap_or_else(|| format!("statement {}", n + 1)),
            line: lo,
            accounts: read
                .principals
                .iter()
                .filter_map(|(_, a)| a.clone())
                .collect(),
            issuers: read.issuers(),
            templated,
            read,
        };
        // A policy is a trust document when a statement federates (or may);
        // its explicit denies and what the model does not evaluate count
        // with it.
        trusts |= st.read.federates() || st.literal_unproven();
        if st.read.federates() || st.not_proven() || st.read.deny.is_some() {
            statements.push(st);
        }
    }
    (trusts && !statements.is_empty()).then(|| TrustDoc {
        resource: resource.clone(),
        at: if path.is_empty() {
            ".".into()
        } else {
            path.to_string()
        },
        line: y.line + line_base,
        statements,
    })
}

#[allow(clippy::too_many_arguments)]
fn walk(
    y: &Node,
    root: &Node,
    path: &mut String,
    resource: &Option<String>,
    out: &mut Vec<TrustDoc>,
    depth: usize,
    line_base: usize,
    ctx: &Ctx,
) {
    if depth > 64 {
        return;
    }
    match &y.value {
        Value::Map(pairs) => {
            if iam::is_policy(y) {
                out.extend(policy_doc(y, root, path, resource, line_base, ctx));
                return;
            }
            for (k, v) in pairs {
                let Some(key) = k.as_str() else { continue };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                // A CloudFormation role is named by its logical id.
                let res = if iam::is_cfn_role(v) {
                    Some(format!("{}/{key}", iam::CFN_ROLE))
                } else {
                    resource.clone()
                };
                walk(v, root, path, &res, out, depth + 1, line_base, ctx);
                path.truncate(len);
            }
        }
        Value::Seq(a) => {
            for (i, v) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(v, root, path, resource, out, depth + 1, line_base, ctx);
                path.truncate(len);
            }
        }
        Value::Scalar(s, _) if iam::may_hold_policy(s) => {
            if let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(s) {
                // A block scalar's content starts on the line after its
                // indicator; a quoted string's on its own line.
                // The node starts on the string's first line of content.
                let base = y.line + line_base - 1;
                for d in &docs {
                    let mut inner = Vec::new();
                    walk(
                        d,
                        d,
                        &mut String::new(),
                        resource,
                        &mut inner,
                        depth + 1,
                        base,
                        ctx,
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

/// A trust document found in a file: where (the path of keys to it) and
/// its federated statements.
#[derive(Debug, Clone)]
pub struct TrustDoc {
    /// `Kind/name` of the manifest, or the CloudFormation resource, if any.
    pub resource: Option<String>,
    /// The path to the policy (`spec.assumeRolePolicyDocument (JSON string)`).
    pub at: String,
    /// 1-based line of the policy.
    pub line: usize,
    pub statements: Vec<TrustStatement>,
}

/// The trust one role gives through EKS issuers: its federated statements
/// taken together, grant by grant.
#[derive(Debug, Clone)]
pub struct RoleTrust {
    pub rel: String,
    pub resource: Option<String>,
    /// The path to the policy in its file.
    pub at: String,
    pub line: usize,
    /// The statements (Sid, else their place).
    pub statements: Vec<String>,
    /// The accounts of its providers, when literal.
    pub accounts: Vec<String>,
    pub issuers: Vec<Issuer>,
    pub grants: Vec<Grant>,
    /// Statements whose principal and condition keys name different
    /// issuers (they grant nobody), with their line.
    pub mismatched: Vec<(String, usize)>,
    /// Statements not proven (templated, unresolved, what the model does
    /// not evaluate), with their line and why.
    pub not_proven: Vec<(String, usize, String)>,
    /// Its explicit denies that may apply to web identity: the statement,
    /// its line, its 1-based place, whom it may deny.
    pub denies: Vec<(String, usize, usize, iam::Deny)>,
}

/// A grant of the old issuer with no twin for the new one.
#[derive(Debug, Clone)]
pub struct MissingGrant {
    pub grant: Grant,
    /// The statement that gives it (Sid, else its place) and its line.
    pub statement: String,
    pub line: usize,
}

impl RoleTrust {
    pub fn of(rel: &str, doc: &TrustDoc) -> RoleTrust {
        let mut issuers: Vec<Issuer> = Vec::new();
        let mut accounts: Vec<String> = Vec::new();
        for st in &doc.statements {
            for i in &st.issuers {
                if !issuers.iter().any(|x| x.same(i)) {
                    issuers.push(i.clone());
                }
            }
            for a in &st.accounts {
                if !accounts.contains(a) {
                    accounts.push(a.clone());
                }
            }
        }
        RoleTrust {
            rel: rel.to_string(),
            resource: doc.resource.clone(),
            at: doc.at.clone(),
            line: doc.line,
            statements: doc.statements.iter().map(|s| s.sid.clone()).collect(),
            accounts,
            issuers,
            grants: doc
                .statements
                .iter()
                .flat_map(|s| s.read.grants.iter().cloned())
                .collect(),
            mismatched: doc
                .statements
                .iter()
                .filter(|s| s.read.mismatched)
                .map(|s| (s.sid.clone(), s.line))
                .collect(),
            not_proven: doc
                .statements
                .iter()
                .filter(|s| s.not_proven())
                .map(|s| (s.sid.clone(), s.line, s.why_not_proven()))
                .collect(),
            denies: doc
                .statements
                .iter()
                .filter_map(|s| {
                    let d = s.read.deny.clone()?;
                    Some((s.sid.clone(), s.line, s.read.index + 1, d))
                })
                .collect(),
        }
    }

    /// Its explicit denies that may apply to a token of `old` or `new` it
    /// lets in, or to the twin for `new` of a grant of `old` (the grant
    /// `--trust add` would make): each statement, its line and place.
    pub fn denied(&self, old: &Issuer, new: &Issuer) -> Vec<(String, usize, usize)> {
        let mut tokens: Vec<Grant> = Vec::new();
        for g in &self.grants {
            if g.issuer.same(old) {
                tokens.push(Grant {
                    issuer: new.clone(),
                    ..g.clone()
                });
            }
            if g.issuer.same(old) || g.issuer.same(new) {
                tokens.push(g.clone());
            }
        }
        self.denies
            .iter()
            .filter(|(_, _, _, d)| tokens.iter().any(|g| d.may_deny(g)))
            .map(|(s, l, i, _)| (s.clone(), *l, *i))
            .collect()
    }

    /// The one account of its providers, if exactly one.
    pub fn account(&self) -> Option<&str> {
        match self.accounts.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    pub fn coverage(&self, old: &Issuer, new: &Issuer) -> Coverage {
        if !self.not_proven.is_empty() || !self.denied(old, new).is_empty() {
            return Coverage::NotProven;
        }
        let has = |i: &Issuer| self.grants.iter().any(|g| g.issuer.same(i));
        match (has(old), has(new)) {
            (true, _) if iam::missing(&self.grants, old, new).is_empty() => Coverage::Both,
            (true, false) => Coverage::OldOnly,
            (true, true) => Coverage::Partial,
            (false, true) => Coverage::NewOnly,
            // It names this cluster's issuers yet grants neither: what it
            // was meant to grant is not known (another cluster's role names
            // neither).
            (false, false) if self.issuers.iter().any(|i| i.same(old) || i.same(new)) => {
                Coverage::NotProven
            }
            (false, false) => Coverage::Neither,
        }
    }
}

/// The grants of `old` in `doc` with no twin for `new`, each with its
/// statement.
pub fn missing_grants(doc: &TrustDoc, old: &Issuer, new: &Issuer) -> Vec<MissingGrant> {
    let all: Vec<Grant> = doc
        .statements
        .iter()
        .flat_map(|s| s.read.grants.iter().cloned())
        .collect();
    let missing = iam::missing(&all, old, new);
    let mut out = Vec::new();
    for st in &doc.statements {
        for g in &st.read.grants {
            if missing.contains(&g) && !out.iter().any(|x: &MissingGrant| x.grant == *g) {
                out.push(MissingGrant {
                    grant: g.clone(),
                    statement: st.sid.clone(),
                    line: st.line,
                });
            }
        }
    }
    out
}

/// Every role's trust, one per trust document.
pub fn roles(inv: &Inventory) -> Vec<RoleTrust> {
    inv.trusts
        .iter()
        .map(|t| RoleTrust::of(&t.rel, &t.doc))
        .collect()
}

/// A place that names the old issuer outside a proven trust: a literal
/// Terraform trust whose statement has no copy for the new issuer in the
/// same file, or a chart value a template may render into a trust.
#[derive(Debug, Clone)]
pub struct TerraformPending {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    pub form: &'static str,
}

/// An account whose trust statements name the old issuer's provider: the
/// new issuer's provider must exist there before the cutover.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ProviderAccount {
    pub partition: String,
    pub account: String,
    /// Where the old provider's ARN is named (file:line).
    pub places: Vec<String>,
}

/// A cutover's trust coverage: each role with what it means for the new
/// cluster's pods.
#[derive(Debug, Clone)]
pub struct CoverageReport {
    pub old: Issuer,
    pub new: Issuer,
    pub roles: Vec<(RoleTrust, Coverage, Vec<MissingGrant>)>,
    pub terraform: Vec<TerraformPending>,
    pub accounts: Vec<ProviderAccount>,
    /// Roles (file:line) whose grants of the old issuer name its provider
    /// with no literal account (CloudFormation's `${AWS::AccountId}`): the
    /// new provider must exist in the account each is deployed to.
    pub accounts_not_literal: Vec<String>,
    /// Old-issuer values of a chart that a template may render into a
    /// trust: not followed, so not proven.
    pub not_followed: Vec<TerraformPending>,
}

impl CoverageReport {
    pub fn of(inv: &Inventory, old: &Issuer, new: &Issuer) -> CoverageReport {
        let roles: Vec<(RoleTrust, Coverage, Vec<MissingGrant>)> = inv
            .trusts
            .iter()
            .map(|t| {
                let r = RoleTrust::of(&t.rel, &t.doc);
                let c = r.coverage(old, new);
                let m = missing_grants(&t.doc, old, new);
                (r, c, m)
            })
            .collect();
        let accounts_not_literal = roles
            .iter()
            .filter(|(r, _, _)| {
                r.grants
                    .iter()
                    .any(|g| g.issuer.same(old) && g.account.is_none())
            })
            .map(|(r, _, _)| format!("{}:{}", r.rel, r.line))
            .collect();
        CoverageReport {
            old: old.clone(),
            new: new.clone(),
            roles,
            terraform: terraform_pending(inv, old, new),
            accounts: provider_accounts(inv, old),
            accounts_not_literal,
            not_followed: inv
                .chart_values
                .iter()
                .filter(|(_, _, _, i)| i.same(old))
                .map(|(rel, line, column, _)| TerraformPending {
                    rel: rel.clone(),
                    line: *line,
                    column: *column,
                    form: "chart value",
                })
                .collect(),
        }
    }

    /// Roles whose old grants lack a twin.
    pub fn old_only(&self) -> usize {
        self.roles
            .iter()
            .filter(|(_, c, _)| matches!(c, Coverage::OldOnly | Coverage::Partial))
            .count()
    }

    /// Roles not proven.
    pub fn not_proven(&self) -> usize {
        self.roles
            .iter()
            .filter(|(_, c, _)| *c == Coverage::NotProven)
            .count()
    }

    /// Every grant of the old issuer, everywhere, proven to have its twin.
    pub fn ready(&self) -> bool {
        self.roles.iter().all(|(_, c, _)| c.ready())
            && self.terraform.is_empty()
            && self.not_followed.is_empty()
    }
}

/// The accounts whose statements (or Terraform) name the old issuer's
/// provider ARN.
pub fn provider_accounts(inv: &Inventory, old: &Issuer) -> Vec<ProviderAccount> {
    let mut out: Vec<ProviderAccount> = Vec::new();
    for r in &inv.references {
        let Form::ProviderArn { partition, account } = &r.found.form else {
            continue;
        };
        if !r.found.issuer.same(old) || r.in_comment {
            continue;
        }
        let place = format!("{}:{}", r.rel, r.line);
        match out
            .iter_mut()
            .find(|a| a.account == *account && a.partition == *partition)
        {
            Some(a) => {
                if !a.places.contains(&place) {
                    a.places.push(place)
                }
            }
            None => out.push(ProviderAccount {
                partition: partition.clone(),
                account: account.clone(),
                places: vec![place],
            }),
        }
    }
    out.sort();
    out
}

/// Each literal Terraform reference to `old` whose statement has no copy
/// naming `new` in the same file.
pub fn terraform_pending(inv: &Inventory, old: &Issuer, new: &Issuer) -> Vec<TerraformPending> {
    let mut out = Vec::new();
    for f in &inv.terraform {
        for r in &f.refs {
            if !r.found.issuer.same(old) {
                continue;
            }
            let covered = r.statement.as_ref().is_some_and(|st| {
                let twin = st.replace(&old.host_path(), &new.host_path());
                f.statements.contains(&twin)
            });
            if !covered {
                out.push(TerraformPending {
                    rel: f.rel.clone(),
                    line: r.line,
                    column: r.column,
                    form: r.found.form.name(),
                });
            }
        }
    }
    out
}

/// The EKS endpoint host's 32-hex id, when the endpoint is an EKS one. In
/// every public sample it equals the cluster's issuer id; that is not a
/// documented contract, so it is only ever offered as a labelled
/// suggestion.
pub fn endpoint_id(endpoint: &str) -> Option<String> {
    let host = endpoint.strip_prefix("https://").unwrap_or(endpoint);
    let first = host.split(['.', '/', ':']).next()?;
    (crate::text::endpoint::is_eks_id(first) && host.contains(".eks."))
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

/// One literal issuer reference in a Terraform file, with the statement
/// around it (normalised: no whitespace, no `Sid`, canonical issuers).
#[derive(Debug, Clone)]
pub struct TerraformRef {
    pub line: usize,
    pub column: usize,
    pub found: Found,
    pub statement: Option<String>,
}

/// A Terraform file's literal trusts: each reference, and every statement
/// of the file (normalised), to find a reference's twin among.
#[derive(Debug, Clone, Default)]
pub struct TerraformFile {
    pub rel: String,
    pub refs: Vec<TerraformRef>,
    pub statements: BTreeSet<String>,
}

/// Whether a file is Terraform (read as text).
pub fn is_terraform(rel: &str) -> bool {
    let l = rel.to_ascii_lowercase();
    [".tf", ".tfvars", ".hcl"].iter().any(|e| l.ends_with(e))
}

/// The byte ranges of every balanced `{ ... }` of a Terraform text
/// (strings, their `${...}` interpolations and comments skipped).
fn brace_regions(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = skip_hcl_string(b, i),
            b'#' => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = memchr::memmem::find(&b[i + 2..], b"*/").map_or(b.len(), |e| i + 2 + e + 2)
            }
            b'{' => {
                open.push(i);
                i += 1;
            }
            b'}' => {
                if let Some(s) = open.pop() {
                    out.push((s, i + 1));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |e| i + e)
}

/// The index after the HCL string opening at `i`, interpolations (which may
/// hold strings) included.
fn skip_hcl_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' => return i,
            b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                let mut depth = 0usize;
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        b'"' => {
                            i = skip_hcl_string(b, i);
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// An issuer's host path with its id in upper case (EKS writes it so).
fn canonical(i: &Issuer) -> String {
    Issuer {
        id: i.id.to_ascii_uppercase(),
        ..i.clone()
    }
    .host_path()
}

/// `text` without its `Sid` entries (`"Sid": "x",`, `sid = "x"`): a copy
/// of a statement differs from it there.
fn without_sids(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut from = 0;
    let sid = iam::SID.to_ascii_lowercase();
    while let Some(i) = lower[from..].find(&sid).map(|i| i + from) {
        from = i + sid.len();
        if i > 0 && b[i - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut j = i + sid.len();
        if b.get(j) == Some(&b'"') {
            j += 1;
        }
        let skip_ws = |mut j: usize| {
            while b.get(j).is_some_and(|c| c.is_ascii_whitespace()) {
                j += 1;
            }
            j
        };
        j = skip_ws(j);
        if !matches!(b.get(j), Some(b':' | b'=')) {
            continue;
        }
        j = skip_ws(j + 1);
        if b.get(j) != Some(&b'"') {
            continue;
        }
        let end = skip_hcl_string(b, j);
        let mut k = skip_ws(end);
        if b.get(k) == Some(&b',') {
            k += 1;
        }
        let start = if i > 0 && b[i - 1] == b'"' { i - 1 } else { i };
        out.push_str(&text[last..start]);
        last = k;
        from = k;
    }
    out.push_str(&text[last..]);
    out
}

/// A statement's text normalised: without `Sid` entries and whitespace,
/// every issuer's host path canonical.
fn normalise(text: &str) -> String {
    let kept = without_sids(text);
    let mut out = String::with_capacity(kept.len());
    let mut last = 0;
    for f in find(&kept) {
        let host = kept[f.start..f.end]
            .to_ascii_lowercase()
            .find("oidc.eks.")
            .map_or(f.start, |h| f.start + h);
        out.push_str(&kept[last..host]);
        out.push_str(&canonical(&f.issuer));
        last = host + f.issuer.host_path().len();
    }
    out.push_str(&kept[last..]);
    out.retain(|c| !c.is_ascii_whitespace());
    out
}

/// Reads a Terraform text: every literal issuer reference (not in a
/// comment) and the statement around it (`jsonencode` objects, heredoc
/// JSON, `aws_iam_policy_document` `statement` blocks: the innermost
/// braces around the reference that hold a principal).
pub fn terraform_file(rel: &str, text: &str) -> TerraformFile {
    let index = crate::syntax::yaml::LineIndex::new(text);
    let regions = brace_regions(text);
    let holds_principal = |(s, e): (usize, usize)| {
        iam::TF_PRINCIPAL_MARKERS
            .iter()
            .any(|m| text[s + 1..e].contains(m))
    };
    let mut statements = BTreeSet::new();
    for &r in &regions {
        if holds_principal(r) {
            statements.insert(normalise(&text[r.0..r.1]));
        }
    }
    let mut refs = Vec::new();
    for f in find(text) {
        let line_start = text[..f.start].rfind('\n').map_or(0, |i| i + 1);
        let lead = text[line_start..f.start].trim_start();
        if lead.starts_with('#') || lead.starts_with("//") {
            continue;
        }
        let statement = regions
            .iter()
            .filter(|&&(s, e)| s < f.start && f.end <= e && holds_principal((s, e)))
            .min_by_key(|&&(s, e)| e - s)
            .map(|&(s, e)| normalise(&text[s..e]));
        let (line, column) = index.position(text, f.start);
        refs.push(TerraformRef {
            line,
            column,
            found: f,
            statement,
        });
    }
    TerraformFile {
        rel: rel.to_string(),
        refs,
        statements,
    }
}

/// Everything the identity inventory found below the walked paths.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub references: Vec<Reference>,
    /// Dynamic trusts (file, line, what): nothing to change.
    pub dynamic: Vec<(String, usize, &'static str)>,
    pub trusts: Vec<FileTrust>,
    /// Terraform files naming an issuer literally.
    pub terraform: Vec<TerraformFile>,
    /// Issuer references in a chart's values file outside any trust
    /// document (file, line, column, issuer): a template may render a trust
    /// from them, which rebind does not follow.
    pub chart_values: Vec<(String, usize, usize, Issuer)>,
    /// Files holding issuer references that could not be read or parsed
    /// (file, line, column, why): nothing can be said of their trust.
    pub unread: Vec<(String, usize, usize, String)>,
    /// `eks.amazonaws.com/role-arn` annotations (file, line, role ARN): a
    /// hint only, when a role's name carries the old cluster's name.
    pub role_arns: Vec<(String, usize, String)>,
}

/// The trust documents of a YAML/JSON text (template actions masked).
pub fn file_trusts(text: &str) -> Result<Vec<TrustDoc>, crate::syntax::yaml::ParseFailure> {
    let masked = crate::syntax::yaml::mask_templates(text);
    let (body, ranges) = match &masked {
        Some((m, r)) => (m.as_str(), r.as_slice()),
        None => (text, &[][..]),
    };
    let docs = crate::syntax::yaml::read_yaml_or_json(body)?;
    Ok(docs
        .iter()
        .flat_map(|d| trust_docs_in(d, text, ranges))
        .collect())
}

/// Every issuer reference of one file (JSON's `\/` read as `/`).
fn references(e: &crate::discover::walk::Entry, text: &str, out: &mut Vec<Reference>) {
    use crate::discover::walk::Role;
    let unescaped = text.replace("\\/", "/");
    let view = if unescaped.len() != text.len() {
        &unescaped
    } else {
        text
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
        out.push(Reference {
            rel: e.rel.clone(),
            line,
            column,
            found: f,
            in_manifest: e.role == Role::Yaml,
            in_comment,
        });
    }
}

/// Every `eks.amazonaws.com/role-arn` annotation of one file.
fn role_arns(
    rel: &str,
    text: &str,
    index: &crate::syntax::yaml::LineIndex,
    out: &mut Vec<(String, usize, String)>,
) {
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
            out.push((rel.to_string(), index.position(text, i).0, arn));
        }
    }
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
        references(&e, &text, &mut inv.references);
        role_arns(&e.rel, &text, &index, &mut inv.role_arns);
        // Only Terraform can follow the cluster; what a page says of it
        // does not.
        if is_terraform(&e.rel) {
            for (at, what) in dynamic_trusts(&text) {
                inv.dynamic
                    .push((e.rel.clone(), index.position(&text, at).0, what));
            }
            let tf = terraform_file(&e.rel, &text);
            if !tf.refs.is_empty() {
                inv.terraform.push(tf);
            }
        }
        let before = inv.trusts.len();
        if e.role == Role::Yaml && text.contains(iam::STATEMENT) {
            match file_trusts(&text) {
                Ok(docs) => {
                    for doc in docs {
                        inv.trusts.push(FileTrust {
                            rel: e.rel.clone(),
                            path: e.path.clone(),
                            doc,
                        });
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
        if e.role == Role::Yaml && inv.trusts.len() == before && is_chart_values(&e.path) {
            for r in inv
                .references
                .iter()
                .filter(|r| r.rel == e.rel && !r.in_comment)
            {
                inv.chart_values
                    .push((r.rel.clone(), r.line, r.column, r.found.issuer.clone()));
            }
        }
    }
    inv
}

/// A chart's values file: `values*.yaml` (or `.yml`) in a directory with a
/// `Chart.yaml`.
fn is_chart_values(path: &std::path::Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.starts_with("values")
        && (name.ends_with(".yaml") || name.ends_with(".yml"))
        && path
            .parent()
            .is_some_and(|d| d.join("Chart.yaml").is_file() || d.join("Chart.yml").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster::parse_describe;

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
        let t = file_trusts(&policy).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].statements.len(), 1);
        let st = &t[0].statements[0];
        assert_eq!(st.sid, "Old");
        assert_eq!(st.accounts, ["111122223333".to_string()].into());
        let role = RoleTrust::of("p.json", &t[0]);
        let old =
            Issuer::parse(&format!("https://oidc.eks.eu-west-1.amazonaws.com/id/{ID}")).unwrap();
        let new = Issuer::parse(
            "https://oidc.eks.eu-west-1.amazonaws.com/id/0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A",
        )
        .unwrap();
        assert_eq!(role.coverage(&old, &new), Coverage::OldOnly);
        assert_eq!(role.coverage(&new, &old), Coverage::NewOnly);
    }

    #[test]
    fn embedded_json_policies_are_read() {
        let ack = format!(
            "apiVersion: iam.services.k8s.aws/v1alpha1\nkind: Role\nmetadata: {{name: karpenter}}\nspec:\n  assumeRolePolicyDocument: |\n    {{\"Statement\": [{{\"Effect\": \"Allow\", \"Principal\": {{\"Federated\": \"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/{ID}\"}}}}]}}\n"
        );
        let t = file_trusts(&ack).unwrap();
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
