//! The cluster name part of a plan as text and as JSON: the name changes
//! (`kind: name`) beside the endpoint changes, the mentions of the old
//! name (never rewritten) and the Terraform registry notes.

use crate::review::names::{NameChangeAt, NamePlan};
use crate::review::plan::Plan;
use crate::text::words::count;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One name change.
#[derive(Debug, Serialize, Deserialize)]
pub struct NameChangeJson {
    pub path: String,
    pub line: usize,
    pub column: usize,
    /// Always `name` (an endpoint change's kind is `value`).
    pub kind: String,
    /// The name position (see `docs/name-positions.md`).
    pub position: String,
    pub yaml_path: String,
    pub resource: Option<String>,
    pub old: String,
    pub new: String,
}

impl NameChangeJson {
    pub fn new(c: &NameChangeAt) -> NameChangeJson {
        let x = &c.change;
        NameChangeJson {
            path: c.rel.clone(),
            line: x.line,
            column: x.column,
            kind: "name".into(),
            position: x.position.as_str().into(),
            yaml_path: x.yaml_path.clone(),
            resource: x.resource.clone(),
            old: x.old_text.clone(),
            new: x.new_text.clone(),
        }
    }
}

/// A mention of the old name (not rewritten).
#[derive(Debug, Serialize, Deserialize)]
pub struct NameMentionJson {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub context: String,
}

/// A Terraform registry line naming the old cluster, and what to add.
#[derive(Debug, Serialize, Deserialize)]
pub struct RegistryJson {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub context: String,
    pub add: String,
}

/// The name rebind of a plan.
#[derive(Debug, Serialize, Deserialize)]
pub struct NamesJson {
    pub from: String,
    pub to: String,
    pub change_count: usize,
    pub changes: Vec<NameChangeJson>,
    pub mentions: Vec<NameMentionJson>,
    pub registry: Vec<RegistryJson>,
    /// Which Applications move from which registration to which.
    #[serde(default)]
    pub moves: Vec<MoveJson>,
}

impl NamesJson {
    pub fn new(plan: &Plan, n: &NamePlan) -> NamesJson {
        NamesJson {
            moves: moves(plan),
            from: n.rebind.old.clone(),
            to: n.rebind.new.clone(),
            change_count: n.changes.len(),
            changes: n.changes.iter().map(NameChangeJson::new).collect(),
            mentions: n
                .mentions
                .iter()
                .map(|m| NameMentionJson {
                    path: m.rel.clone(),
                    line: m.mention.line,
                    column: m.mention.column,
                    context: m.mention.context.clone(),
                })
                .collect(),
            registry: n
                .registry
                .iter()
                .map(|r| RegistryJson {
                    path: r.rel.clone(),
                    line: r.line,
                    column: r.column,
                    context: r.context.clone(),
                    add: r.add.clone(),
                })
                .collect(),
        }
    }
}

/// An Application whose destination moves from the old cluster's
/// registration to the new one's.
#[derive(Debug, Serialize, Deserialize)]
pub struct MoveJson {
    pub resource: String,
    pub path: String,
    pub line: usize,
    pub from_registration: String,
    pub to_registration: String,
}

/// Which Applications move from which registration to which: each
/// rewritten destination (an endpoint, or an EKS ARN), the registration
/// that served the old one (the repository's own, or one kept elsewhere:
/// the rollback target) and the one that serves the new.
pub fn moves(plan: &Plan) -> Vec<MoveJson> {
    use crate::model::names::NamePosition;
    use crate::model::positions::Position;
    let own = (!plan.registrations.is_empty()).then(|| {
        plan.registrations
            .iter()
            .map(|r| format!("{} ({}:{}:{})", r.resource, r.rel, r.line, r.column))
            .collect::<Vec<_>>()
            .join(" and ")
    });
    let kept_and_added = |old: &str, new: &str| kept_and_added(plan, old, new);
    let (from_ep, to_ep) = match (&own, kept_and_added(&plan.from.url(), &plan.to.url())) {
        (_, Some(both)) => both,
        (Some(r), None) => (
            format!("{r}, registering {}", plan.from.url()),
            format!("{r}, rewritten to {}", plan.to.url()),
        ),
        (None, None) => (
            format!("the registration of {} (not in this repository; keep it: it is the rollback target)", plan.from.url()),
            format!("a new registration of {} under its own name (`apply --secret-out`, or `rebind secret --describe`)", plan.to.url()),
        ),
    };
    let mut out = Vec::new();
    for f in &plan.files {
        for o in &f.changes {
            let app = o
                .resource
                .as_deref()
                .filter(|r| r.starts_with("Application"));
            if let (Some(Position::DestinationServer), Some(app)) = (o.position, app) {
                out.push(MoveJson {
                    resource: app.to_string(),
                    path: f.rel.clone(),
                    line: o.line,
                    from_registration: from_ep.clone(),
                    to_registration: to_ep.clone(),
                });
            }
        }
    }
    let Some(n) = &plan.names else { return out };
    let own_arn = n
        .changes
        .iter()
        .find(|c| c.change.position == NamePosition::RegistrationArn)
        .map(|c| {
            format!(
                "{} ({}:{}:{})",
                c.change.resource.as_deref().unwrap_or("?"),
                c.rel,
                c.change.line,
                c.change.column
            )
        });
    for c in &n.changes {
        let app = c
            .change
            .resource
            .as_deref()
            .filter(|r| r.starts_with("Application"));
        out.extend(name_move(plan, c));
        if let (NamePosition::ClusterArn, Some(app)) = (c.change.position, app) {
            let both = kept_and_added(&c.change.old_text, &c.change.new_text);
            let (from, to) = match (&own_arn, both) {
                (_, Some(both)) => both,
                (Some(r), None) => (
                    format!("{r}, registering {}", c.change.old_text),
                    format!("{r}, rewritten to {}", c.change.new_text),
                ),
                (None, None) => (
                    format!("the registration of {} (not in this repository; keep it: it is the rollback target)", c.change.old_text),
                    format!("a new registration of {} under its own name (`rebind secret --describe --server-arn`)", c.change.new_text),
                ),
            };
            out.push(MoveJson {
                resource: app.to_string(),
                path: c.rel.clone(),
                line: c.change.line,
                from_registration: from,
                to_registration: to,
            });
        }
    }
    out
}

/// The move of an Application whose `destination.name` (the old
/// registration's ArgoCD name) moves to the new registration's.
fn name_move(plan: &Plan, c: &crate::review::names::NameChangeAt) -> Option<MoveJson> {
    use crate::model::names::NamePosition;
    let app = c.change.resource.as_deref()?;
    let by_name = matches!(
        c.change.position,
        NamePosition::DestinationName | NamePosition::DestinationArgocdName
    );
    if !by_name || !app.starts_with("Application") {
        return None;
    }
    let added = if plan.added_registrations.is_empty() {
        "not in this repository: register the new cluster under this name"
    } else {
        "added beside it"
    };
    Some(MoveJson {
        resource: app.to_string(),
        path: c.rel.clone(),
        line: c.change.line,
        from_registration: format!(
            "the registration ArgoCD names {:?} (kept: the rollback target)",
            c.change.old_text
        ),
        to_registration: format!("the registration named {:?} ({added})", c.change.new_text),
    })
}

/// The registrations `plan` keeps (for the server `old`, a URL or an ARN)
/// and adds beside them (for `new`), as the move's from and to.
fn kept_and_added(plan: &Plan, old: &str, new: &str) -> Option<(String, String)> {
    let of: Vec<_> = plan
        .added_registrations
        .iter()
        .filter(|a| a.old_server == old || same_url(&a.old_server, old))
        .collect();
    (!of.is_empty()).then(|| {
        let kept = of.iter().map(|a| a.kept.as_str()).collect::<Vec<_>>();
        let added = of
            .iter()
            .map(|a| format!("{} ({}:{}:{})", a.resource, a.rel, a.line, a.column))
            .collect::<Vec<_>>();
        (
            format!(
                "{}, registering {old} (kept: the rollback target)",
                kept.join(" and ")
            ),
            format!(
                "{}, added beside it, registering {new}",
                added.join(" and ")
            ),
        )
    })
}

/// Whether two server URLs are the same endpoint (host case-insensitive,
/// a trailing `/` ignored).
fn same_url(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        crate::text::endpoint::Endpoint::parse("", s.trim().trim_end_matches('/'))
            .ok()
            .map(|e| e.key())
    };
    key(a).is_some() && key(a) == key(b)
}

/// The moves as text.
fn moves_text(plan: &Plan, s: &mut String) {
    let m = moves(plan);
    if m.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "Applications moving from the old cluster's registration to the new one's:"
    );
    for x in &m {
        let _ = writeln!(
            s,
            "  {} ({}:{}): from {}\n    to {}",
            x.resource, x.path, x.line, x.from_registration, x.to_registration
        );
    }
}

/// The name changes of one file.
pub fn in_file<'p>(plan: &'p Plan, rel: &str) -> Vec<&'p NameChangeAt> {
    plan.names
        .iter()
        .flat_map(|n| &n.changes)
        .filter(|c| c.rel == rel)
        .collect()
}

/// The name part of the plan as text (empty without one).
pub fn text(plan: &Plan) -> String {
    let Some(n) = &plan.names else {
        return String::new();
    };
    let mut s = String::new();
    moves_text(plan, &mut s);
    let _ = writeln!(
        s,
        "Cluster name {} -> {}: {} at name positions",
        n.rebind.old,
        n.rebind.new,
        count(n.changes.len(), "change")
    );
    for c in &n.changes {
        let x = &c.change;
        let _ = writeln!(
            s,
            "  {}:{}:{}: {} ({}{}) {} -> {}",
            c.rel,
            x.line,
            x.column,
            x.position.as_str(),
            x.yaml_path,
            x.resource
                .as_deref()
                .map(|r| format!(" in {r}"))
                .unwrap_or_default(),
            x.old_text,
            x.new_text
        );
    }
    if !n.mentions.is_empty() {
        let _ = writeln!(
            s,
            "Not rewritten ({} of `{}` at no name position; fix by hand if they matter):",
            count(n.mentions.len(), "mention"),
            n.rebind.old
        );
        for m in &n.mentions {
            let _ = writeln!(
                s,
                "  {}:{}:{}: {}",
                m.rel, m.mention.line, m.mention.column, m.mention.context
            );
        }
    }
    if !n.registry.is_empty() {
        let _ = writeln!(
            s,
            "Terraform cluster registry (report only; add the new cluster, keep the old one until it is torn down):"
        );
        for r in &n.registry {
            let _ = writeln!(
                s,
                "  {}:{}:{}: {}\n    add: {}",
                r.rel, r.line, r.column, r.context, r.add
            );
        }
    }
    s
}

/// The clusters a scan found named by their EKS ARN, as text (empty
/// without any).
pub fn arn_text(arns: &[(String, crate::find::names::ArnRef)]) -> String {
    if arns.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nClusters named by their EKS ARN ({}; `apply --describe-from/--describe-to` moves them with the name):\n",
        count(arns.len(), "value")
    );
    for (rel, a) in arns {
        let what = if a.registration {
            "registration server"
        } else {
            a.yaml_path.as_str()
        };
        let _ = writeln!(
            s,
            "  {rel}:{}:{}: {} ({what}{})",
            a.line,
            a.column,
            a.arn,
            a.resource
                .as_deref()
                .map(|r| format!(" in {r}"))
                .unwrap_or_default()
        );
    }
    s
}
