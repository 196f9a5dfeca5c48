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
}

impl NamesJson {
    pub fn new(n: &NamePlan) -> NamesJson {
        NamesJson {
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
