//! Renders the identity report: every EKS OIDC issuer reference, the
//! dynamic trusts, and the trust coverage for a cutover's two issuers.

use crate::oidc::{Coverage, Form, Inventory, Issuer};
use serde::Serialize;

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

#[derive(Debug, Serialize)]
pub struct TrustJson {
    pub path: String,
    pub resource: Option<String>,
    pub at: String,
    /// The statements (Sid, else their place) that federate through an
    /// EKS issuer for this account.
    pub statements: Vec<String>,
    pub account: Option<String>,
    pub issuers: Vec<String>,
    pub coverage: Option<&'static str>,
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
        // One row per trust document and account: a role whose statements
        // trust the old and the new issuer between them is ready.
        let mut trusts: Vec<TrustJson> = Vec::new();
        for t in &inv.trusts {
            let mut by_account: Vec<(String, Vec<&crate::oidc::TrustStatement>)> = Vec::new();
            for st in &t.doc.statements {
                let accounts: Vec<String> = if st.accounts.is_empty() {
                    vec![String::new()]
                } else {
                    st.accounts.iter().cloned().collect()
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
                for st in &sts {
                    for i in &st.issuers {
                        if !issuers.iter().any(|x| x.same(i)) {
                            issuers.push(i.clone());
                        }
                    }
                }
                let joined = crate::oidc::TrustStatement {
                    sid: String::new(),
                    accounts: Default::default(),
                    issuers: issuers.clone(),
                };
                trusts.push(TrustJson {
                    path: t.rel.clone(),
                    resource: t.doc.resource.clone(),
                    at: t.doc.at.clone(),
                    statements: sts.iter().map(|s| s.sid.clone()).collect(),
                    account: (!account.is_empty()).then_some(account),
                    issuers: issuers.iter().map(Issuer::url).collect(),
                    coverage: pair.map(|p| joined.coverage(&p.old, &p.new).key()),
                });
            }
        }
        let old_only_count = trusts
            .iter()
            .filter(|t| t.coverage == Some(Coverage::OldOnly.key()))
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
        let mention = if x.kind == "text" {
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
            let res = t
                .resource
                .as_ref()
                .map(|r| format!(" [{r}]"))
                .unwrap_or_default();
            let what = match t.coverage {
                Some(c) => coverage_sentence(c).to_string(),
                None => format!("trusts {}", t.issuers.join(", ")),
            };
            out.push_str(&format!(
                "  {}{res} {} ({}; account {}): {what}\n",
                t.path,
                t.at,
                t.statements.join(", "),
                t.account.as_deref().unwrap_or("not literal")
            ));
        }
    }
    if r.old_only_count > 0 {
        out.push_str(&format!(
            "\n{} (trust documents) trust only the old issuer: add the new issuer to each before the cutover (or its pods are denied AWS credentials), and remove the old one only after the old cluster is torn down.\n",
            super::count_as(r.old_only_count, "role", "roles")
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
