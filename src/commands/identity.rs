//! `rebind identity`, resolved once and run: every EKS OIDC issuer
//! reference, and which trust statements the new cluster's pods will be
//! denied by. [`IdentityOptions`] (plain data) names the issuers; [`run`]
//! reads the tree, resolves the cutover's two issuers in the documented
//! order of sources (describe-cluster files, the issuer flags, the
//! cluster's `oidc_issuer` in `.rebind.yaml`), reports, and with `trust`
//! shows (and with `yes` writes) the safe trust change.

use crate::discover::walk;
use crate::output::identity::{codes, IdentityReport, Pair};
use crate::output::{self, Done, Exit, Failure, Parts, Reported};
use crate::review::oidc;
use crate::text::issuer::Issuer;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;

/// `rebind identity`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct IdentityOptions {
    /// Files or directories (empty: `.`).
    pub paths: Vec<PathBuf>,
    /// `aws eks describe-cluster` JSON of the old cluster, and of the new.
    pub describe_from: Option<PathBuf>,
    pub describe_to: Option<PathBuf>,
    /// The old and the new issuer's URL (when no describe file is given).
    pub oidc_from: Option<String>,
    pub oidc_to: Option<String>,
    /// The cluster of `.rebind.yaml` whose `oidc_issuer` is the old issuer
    /// when nothing else names it.
    pub cluster: Option<String>,
    /// The old API endpoint: only to suggest which issuer is its.
    pub from: Option<String>,
    /// The trust change to show (and with `yes`, write).
    pub trust: Option<TrustChange>,
    /// Retired issuers, for [`TrustChange::RemoveRetired`].
    pub oidc_retired: Vec<String>,
    pub yes: bool,
}

/// The safe trust change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustChange {
    /// Copy each statement that trusts the old issuer into one that trusts
    /// the new (before the cutover).
    Add,
    /// Remove the statements that trust only a retired issuer (after the
    /// old cluster is torn down).
    RemoveRetired,
}

fn issuer(flag: &str, s: &str) -> Result<Issuer> {
    Issuer::parse(s).ok_or_else(|| {
        anyhow!(
            "{flag} {s}: not an EKS OIDC issuer (https://oidc.eks.<region>.amazonaws.com/id/<ID>)"
        )
    })
}

/// The cutover's two issuers, in the documented order of sources, with
/// the notes on the endpoint-id heuristic.
fn pair(a: &IdentityOptions, inv: &oidc::Inventory) -> Result<(Option<Pair>, Vec<String>)> {
    let mut notes = Vec::new();
    let from = match &a.describe_from {
        Some(p) => Some(crate::model::cluster::read_describe("--describe-from", p)?),
        None => None,
    };
    let to = match &a.describe_to {
        Some(p) => Some(crate::model::cluster::read_describe("--describe-to", p)?),
        None => None,
    };
    for d in from.iter().chain(to.iter()) {
        if let Some(id) = oidc::endpoint_id(&d.endpoint) {
            if !id.eq_ignore_ascii_case(&d.issuer.id) {
                notes.push(format!(
                    "cluster {}: its endpoint id {id} is not its issuer id {}; rebind never takes one for the other",
                    d.name, d.issuer.id
                ));
            }
        }
    }
    // A hint only: a role named after the old cluster probably trusts it.
    if let Some(d) = &from {
        for (rel, line, arn) in &inv.role_arns {
            let role = arn.rsplit('/').next().unwrap_or(arn);
            if role.contains(&d.name) {
                notes.push(format!(
                    "hint: {rel}:{line}: role {role} carries the old cluster's name {}: check that its trust policy (it may live outside this repository) trusts the new issuer",
                    d.name
                ));
            }
        }
    }
    let old = match (from, &a.oidc_from) {
        (Some(d), _) => Some(d.issuer),
        (None, Some(s)) => Some(issuer("--oidc-from", s)?),
        (None, None) => match &a.cluster {
            // Last, `.rebind.yaml`: the cluster's current issuer is the old one.
            Some(name) => {
                let start = a
                    .paths
                    .first()
                    .cloned()
                    .unwrap_or_else(|| PathBuf::from("."));
                let path = crate::model::config::find(&start).ok_or_else(|| {
                    anyhow!(
                        "--cluster {name}: no .rebind.yaml found above {}",
                        start.display()
                    )
                })?;
                let cfg = crate::model::config::load(&path)?;
                let c = cfg.cluster(name)?;
                Some(c.oidc_issuer.clone().ok_or_else(|| {
                    anyhow!("--cluster {name}: {} declares no oidc_issuer for it; give --describe-from or --oidc-from", path.display())
                })?)
            }
            None => None,
        },
    };
    let new = match (to, &a.oidc_to) {
        (Some(d), _) => Some(d.issuer),
        (None, Some(s)) => Some(issuer("--oidc-to", s)?),
        (None, None) => None,
    };
    // A labelled suggestion only: the EKS endpoint id has matched the issuer
    // id in every public sample, but nothing documents it.
    if old.is_none() {
        if let Some(id) = a.from.as_deref().and_then(oidc::endpoint_id) {
            let mut seen = Vec::new();
            for r in &inv.references {
                if r.found.issuer.id.eq_ignore_ascii_case(&id) && !seen.contains(&r.found.issuer) {
                    seen.push(r.found.issuer.clone());
                    notes.push(format!(
                        "suggestion (not a documented contract): {} carries the id of --from's endpoint; confirm with `aws eks describe-cluster` and pass --describe-from or --oidc-from",
                        r.found.issuer.url()
                    ));
                }
            }
        }
    }
    match (old, new) {
        (Some(old), Some(new)) if old.same(&new) => bail!(
            "the old and the new issuer are the same ({}): give the old cluster's and the new cluster's",
            old.url()
        ),
        (Some(old), Some(new)) => Ok((Some(Pair { old, new }), notes)),
        (None, None) => Ok((None, notes)),
        _ => bail!("give both issuers: --describe-from/--oidc-from and --describe-to/--oidc-to"),
    }
}

/// `rebind identity`: the report, or the trust change; exit 1 when a
/// statement trusts only the old issuer, or a change is shown, not written.
pub fn run(a: &IdentityOptions) -> Done {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    let walk = walk::discover(&crate::repo::git::walk_request(&paths))?;
    let inv = oidc::inventory(&walk);
    if !inv.unread.is_empty() {
        let list: Vec<String> = inv
            .unread
            .iter()
            .map(|(rel, line, col, why)| format!("  {rel}:{line}:{col}: {why}"))
            .collect();
        return Err(anyhow!(
            "{} issuer references that could not be read; nothing can be said of their trust:\n{}",
            crate::text::words::count_as(inv.unread.len(), "file holds", "files hold"),
            list.join("\n")
        )
        .into());
    }
    let (pair, notes) = pair(a, &inv)?;
    if let Some(change) = a.trust {
        return trust(a, change, &inv, pair.as_ref());
    }
    let report = IdentityReport::new(&inv, pair.as_ref(), notes);
    // Exit 0 only when every grant of the old issuer is proven covered.
    let exit = if report.ready == Some(false) {
        Exit::Pending
    } else {
        Exit::Ok
    };
    let text = output::identity::text(&report);
    let json = output::json::render(&report);
    Ok(Reported::new(Parts::said(text, json), exit))
}

/// The `.rebind.yaml` above the first path, if any.
fn config(a: &IdentityOptions) -> Result<Option<(PathBuf, crate::model::config::Config)>> {
    let start = a
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    match crate::model::config::find(&start) {
        Some(path) => {
            let cfg = crate::model::config::load(&path)?;
            Ok(Some((path, cfg)))
        }
        None => Ok(None),
    }
}

fn change_name(change: TrustChange) -> &'static str {
    match change {
        TrustChange::Add => "add",
        TrustChange::RemoveRetired => "remove-retired",
    }
}

/// A refused trust change: exit 2, nothing written; in JSON a report whose
/// `error` carries the stable `code` (in text the error says it all).
fn refuse(change: TrustChange, code: &'static str, message: String) -> Done {
    let json = output::json::render(&serde_json::json!({
        "schema_version": output::SCHEMA_VERSION,
        "command": "identity",
        "trust": change_name(change),
        "error": {"code": code, "message": message},
        "written": false,
    }));
    Ok(Reported::failed(
        Parts::json(json),
        anyhow!("{message}").into(),
    ))
}

/// Why one of the issuers to retire is current: one that `.rebind.yaml`
/// declares as a cluster's `oidc_issuer`, or that `--oidc-to` /
/// `--describe-to` names. Removing it would cut the live cluster off.
fn current_among(
    a: &IdentityOptions,
    retired: &[Issuer],
    pair: Option<&Pair>,
) -> Result<Option<String>> {
    let mut current: Vec<(Issuer, String)> = Vec::new();
    if let Some(p) = pair {
        current.push((
            p.new.clone(),
            "the new issuer of --oidc-to/--describe-to".into(),
        ));
    } else {
        if let Some(s) = &a.oidc_to {
            current.push((issuer("--oidc-to", s)?, "--oidc-to".into()));
        }
        if let Some(p) = &a.describe_to {
            current.push((
                crate::model::cluster::read_describe("--describe-to", p)?.issuer,
                "--describe-to".into(),
            ));
        }
    }
    if let Some((path, cfg)) = config(a)? {
        for c in &cfg.clusters {
            if let Some(i) = &c.oidc_issuer {
                current.push((
                    i.clone(),
                    format!(
                        "the oidc_issuer of cluster {} in {}",
                        c.name,
                        path.display()
                    ),
                ));
            }
        }
    }
    Ok(retired.iter().find_map(|r| {
        current.iter().find(|(c, _)| c.same(r)).map(|(c, why)| {
            format!(
                "{} is current ({why}), not retired: removing its statements would cut that cluster's pods off; nothing written",
                c.url()
            )
        })
    }))
}

/// The issuers to retire: `--oidc-retired`, else the `retired_oidc` of
/// `.rebind.yaml`.
fn retired_issuers(a: &IdentityOptions) -> Result<Vec<Issuer>> {
    let mut retired = a
        .oidc_retired
        .iter()
        .map(|s| issuer("--oidc-retired", s))
        .collect::<Result<Vec<_>>>()?;
    if retired.is_empty() {
        if let Some((_, cfg)) = config(a)? {
            retired = cfg
                .clusters
                .iter()
                .flat_map(|c| c.retired_oidc.iter().cloned())
                .collect();
        }
    }
    if retired.is_empty() {
        bail!("--trust remove-retired needs the retired issuers: --oidc-retired URL (repeatable), or retired_oidc in .rebind.yaml");
    }
    Ok(retired)
}

/// What `--trust add` leaves to do by hand: literal Terraform trusts that
/// lack the new issuer, chart values not followed. Terraform stays
/// report-only: what it still lacks is work left, never "nothing to
/// change".
fn work_left(
    inv: &oidc::Inventory,
    action: &crate::review::trust::Action,
    pair: Option<&Pair>,
) -> (Vec<oidc::TerraformPending>, Vec<oidc::TerraformPending>) {
    match (action, pair) {
        (crate::review::trust::Action::Add { .. }, Some(p)) => {
            let c = oidc::CoverageReport::of(inv, &p.old, &p.new);
            (c.terraform, c.not_followed)
        }
        _ => (Vec::new(), Vec::new()),
    }
}

/// The change `--trust` asks for, its issuers resolved; an issuer to
/// retire that is current is refused (the refusal is what the run returns).
fn action(
    a: &IdentityOptions,
    change: TrustChange,
    pair: Option<&Pair>,
) -> Result<crate::review::trust::Action, Done> {
    let failed = |e: anyhow::Error| Err(Failure::from(e));
    Ok(match change {
        TrustChange::Add => {
            let Some(p) = pair else {
                return Err(failed(anyhow!("--trust add needs both issuers: --describe-from/--oidc-from and --describe-to/--oidc-to")));
            };
            crate::review::trust::Action::Add {
                old: p.old.clone(),
                new: p.new.clone(),
            }
        }
        TrustChange::RemoveRetired => {
            let retired = retired_issuers(a).map_err(failed)?;
            if let Some(why) = current_among(a, &retired, pair).map_err(failed)? {
                return Err(refuse(change, codes::RETIRED_IS_CURRENT, why));
            }
            crate::review::trust::Action::RemoveRetired(retired)
        }
    })
}

/// `--trust add` / `--trust remove-retired`: the diff, and with --yes the
/// write (all or nothing, each file verified before).
fn trust(
    a: &IdentityOptions,
    change: TrustChange,
    inv: &oidc::Inventory,
    pair: Option<&Pair>,
) -> Done {
    let action = match action(a, change, pair) {
        Ok(action) => action,
        Err(refused) => return refused,
    };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for t in &inv.trusts {
        if !files.iter().any(|(_, r)| *r == t.rel) {
            files.push((t.path.clone(), t.rel.clone()));
        }
    }
    let (plans, edits) = match crate::review::trust::plan(&files, &action) {
        Ok(p) => p,
        Err(r) => return refuse(change, r.code, r.message),
    };
    let mut text = String::new();
    for p in &plans {
        text.push_str(&crate::edit::diff::unified(p));
    }
    for (rel, e) in &edits {
        text.push_str(&format!("{rel}:{}: {}\n", e.line, e.what));
    }
    let (terraform, not_followed) = work_left(inv, &action, pair);
    let sentence = |t: &oidc::TerraformPending| {
        if not_followed.iter().any(|n| std::ptr::eq(n, t)) {
            output::identity::NOT_FOLLOWED_SENTENCE
        } else {
            output::identity::TERRAFORM_SENTENCE
        }
    };
    for t in terraform.iter().chain(&not_followed) {
        text.push_str(&format!(
            "{}:{}:{}: {}: {}\n",
            t.rel,
            t.line,
            t.column,
            t.form,
            sentence(t)
        ));
    }
    let by_hand = terraform.len() + not_followed.len();
    if plans.is_empty() && by_hand == 0 {
        text.push_str("Nothing to change.\n");
    } else if plans.is_empty() {
        text.push_str(
            "Nothing rebind can change here; what is listed above needs the new issuer by hand.\n",
        );
    }
    let json = output::json::render(&serde_json::json!({
            "schema_version": output::SCHEMA_VERSION,
            "command": "identity",
            "trust": change_name(change),
            "files": plans.iter().map(|p| serde_json::json!({"path": p.rel, "diff": crate::edit::diff::unified(p)})).collect::<Vec<_>>(),
            "edits": edits.iter().map(|(rel, e)| serde_json::json!({"path": rel, "line": e.line, "what": e.what})).collect::<Vec<_>>(),
            "terraform": terraform.iter().map(|t| serde_json::json!({"code": codes::TERRAFORM_PENDING, "path": t.rel, "line": t.line, "column": t.column, "form": t.form, "message": sentence(t)})).collect::<Vec<_>>(),
            "not_followed": not_followed.iter().map(|t| serde_json::json!({"code": codes::NOT_PROVEN, "path": t.rel, "line": t.line, "column": t.column, "form": t.form, "message": sentence(t)})).collect::<Vec<_>>(),
            "written": a.yes && !plans.is_empty(),
    }));
    let left = if by_hand == 0 {
        Exit::Ok
    } else {
        Exit::Pending
    };
    if plans.is_empty() {
        return Ok(Reported::new(Parts::said(text, json), left));
    }
    if !a.yes {
        return Ok(Reported::new(Parts::said(text, json), Exit::Pending));
    }
    if let Err(e) = crate::edit::write::write_all(&plans) {
        // The change is shown, then the failure to write it.
        let shown = Parts::said(text, json);
        return Ok(Reported::failed(shown, e.into()));
    }
    text.push_str(&format!(
        "Wrote {}.\n",
        crate::text::words::count(plans.len(), "file")
    ));
    Ok(Reported::new(Parts::said(text, json), left))
}
