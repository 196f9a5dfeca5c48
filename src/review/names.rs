//! The name part of a rebind: every walked file that holds the old EKS
//! cluster name, its name positions spliced (on top of the file's endpoint
//! rewrite, when it has one) and verified, its other occurrences listed as
//! mentions, and the Terraform cluster registry (`*.tfvars`) reported with
//! what to add for the new name. Added to the [`Plan`], so the diff, the
//! counts, `--require-deploys` and the all-or-nothing write cover names as
//! they cover endpoints.

use crate::discover::walk::{Found, Role, Walk};
use crate::edit::rewrite::{FilePlan, PlanError};
use crate::edit::verify::{verify, Expect};
use crate::find::names::{self, NameChange, NameMention, NameRebind};
use crate::text::splice;
use std::sync::Arc;

/// A name change in a file.
#[derive(Debug, Clone)]
pub struct NameChangeAt {
    pub rel: String,
    pub change: NameChange,
}

/// A mention of the old name in a file: not rewritten.
#[derive(Debug, Clone)]
pub struct NameMentionAt {
    pub rel: String,
    pub mention: NameMention,
}

/// Where a Terraform variables file names the old cluster (a cluster
/// registry that drives IAM): report only.
#[derive(Debug, Clone)]
pub struct RegistryNote {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    /// The line as written (trimmed).
    pub context: String,
    /// What to add for the new cluster.
    pub add: String,
}

/// The name changes, mentions and registry notes of a rebind.
#[derive(Debug, Clone)]
pub struct NamePlan {
    pub rebind: NameRebind,
    pub changes: Vec<NameChangeAt>,
    pub mentions: Vec<NameMentionAt>,
    pub registry: Vec<RegistryNote>,
}

/// Whether a file is a Terraform variables file (`*.tfvars`,
/// `*.tfvars.json`).
fn is_tfvars(rel: &str) -> bool {
    let l = rel.to_ascii_lowercase();
    l.ends_with(".tfvars") || l.ends_with(".tfvars.json")
}

/// Plans the name rebind `r` into a plan's `files` and `errors`: every
/// file of `walk` that holds the old name (`skip`: the config, updated on
/// its own).
pub fn plan_names(
    files: &mut Vec<FilePlan>,
    errors: &mut Vec<PlanError>,
    walk: &Walk,
    r: &NameRebind,
    skip: Option<&std::path::Path>,
) -> NamePlan {
    let mut np = NamePlan {
        rebind: r.clone(),
        changes: Vec::new(),
        mentions: Vec::new(),
        registry: Vec::new(),
    };
    let charts = walked_charts(walk);
    for item in walk.files() {
        let Found::Entry(e) = item else { continue };
        if skip.is_some_and(|s| same_file(s, &e.path)) {
            continue;
        }
        let Some(text) = read_holding(&e, r, errors) else {
            continue;
        };
        // A describe-cluster output records a cluster as it is: never rebound.
        if crate::model::cluster::parse_describe(&text).is_ok() {
            continue;
        }
        if is_tfvars(&e.rel) {
            np.registry.extend(registry_notes(&e.rel, &text, r));
        }
        let at = files.iter().position(|f| f.rel == e.rel && !f.is_config);
        let base: Arc<str> = at.map_or_else(|| text.as_str().into(), |i| files[i].new.clone());
        let found = locate_in(&e, &base, r, &charts);
        np.mentions
            .extend(found.mentions.into_iter().map(|m| NameMentionAt {
                rel: e.rel.clone(),
                mention: m,
            }));
        if !found.errors.is_empty() {
            errors.extend(found.errors.into_iter().map(|x| PlanError {
                rel: e.rel.clone(),
                line: x.line,
                column: x.column,
                message: x.message,
                code: "cannot-rewrite",
            }));
            continue;
        }
        if found.changes.is_empty() {
            continue;
        }
        let new = rewritten(&base, &found.changes);
        let new = match new {
            Ok(new) => new,
            Err(m) => {
                let c = &found.changes[0];
                errors.push(PlanError {
                    rel: e.rel.clone(),
                    line: c.line,
                    column: c.column,
                    message: format!(
                        "the cluster name rewrite did not verify: {m}; nothing written"
                    ),
                    code: "cannot-rewrite",
                });
                continue;
            }
        };
        match at {
            Some(i) => files[i].new = new.into(),
            None => files.push(FilePlan {
                path: e.path.clone(),
                rel: e.rel.clone(),
                old: text.into(),
                new: new.into(),
                changes: Vec::new(),
                is_config: false,
            }),
        }
        np.changes
            .extend(found.changes.into_iter().map(|c| NameChangeAt {
                rel: e.rel.clone(),
                change: c,
            }));
    }
    // Files in the order shown (the config, added later, stays last).
    files.sort_by(|a, b| a.is_config.cmp(&b.is_config).then(a.rel.cmp(&b.rel)));
    np
}

/// The name in the walked file `e` (its text `base`): a YAML file read
/// with the charts its values may be of, any other file's occurrences all
/// mentions.
fn locate_in(
    e: &crate::discover::walk::Entry,
    base: &str,
    r: &NameRebind,
    charts: &[(String, std::path::PathBuf, names::Subcharts)],
) -> names::NamesFound {
    if e.role != Role::Yaml {
        return names::NamesFound {
            mentions: names::text_mentions(base, r),
            ..names::NamesFound::default()
        };
    }
    let cv = names::ChartValues {
        file: values_of_chart(&e.path, charts),
        dirs: charts
            .iter()
            .map(|(rel, _, s)| (rel.clone(), s.clone()))
            .collect(),
    };
    names::locate_with(base, r, &cv)
}

/// The charts of the walk (each folder holding a `Chart.yaml`) with
/// dependencies on the name table's charts (read from `Chart.yaml`, and
/// from `requirements.yaml` beside it for apiVersion v1): the folder as
/// the walk shows it, on disk, and the dependencies.
fn walked_charts(walk: &Walk) -> Vec<(String, std::path::PathBuf, names::Subcharts)> {
    let mut out = Vec::new();
    for item in walk.files() {
        let Found::Entry(e) = item else { continue };
        let Some(dir) = e.path.parent() else { continue };
        let file = e.path.file_name().and_then(|n| n.to_str());
        if !matches!(file, Some("Chart.yaml" | "Chart.yml")) {
            continue;
        }
        let mut subs = Vec::new();
        for f in [e.path.clone(), dir.join("requirements.yaml")] {
            if let Ok(text) = std::fs::read_to_string(&f) {
                subs.extend(names::subcharts(&text));
            }
        }
        if !subs.is_empty() {
            let rel = e.rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            out.push((rel, dir.to_path_buf(), subs));
        }
    }
    out
}

/// The dependencies whose values the file at `path` holds, when it is a
/// values file of a chart of `charts`: below the chart's folder (the
/// nearest holding a `Chart.yaml`), outside its `templates/` and `charts/`,
/// not its `Chart.yaml` or `requirements.yaml`.
fn values_of_chart(
    path: &std::path::Path,
    charts: &[(String, std::path::PathBuf, names::Subcharts)],
) -> names::Subcharts {
    let Some(chart) = path
        .ancestors()
        .skip(1)
        .find(|d| d.join("Chart.yaml").is_file() || d.join("Chart.yml").is_file())
    else {
        return Vec::new();
    };
    let Ok(below) = path.strip_prefix(chart) else {
        return Vec::new();
    };
    let own = ["Chart.yaml", "Chart.yml", "requirements.yaml"];
    if below.starts_with("templates")
        || below.starts_with("charts")
        || own.iter().any(|o| below == std::path::Path::new(o))
    {
        return Vec::new();
    }
    charts
        .iter()
        .find(|(_, dir, _)| dir == chart)
        .map_or_else(Vec::new, |(_, _, s)| s.clone())
}

/// The text of the walked file `e` when it holds the old name (or the old
/// CA), or is a cluster registration; a YAML file that does so but is not UTF-8 is an error.
fn read_holding(
    e: &crate::discover::walk::Entry,
    r: &NameRebind,
    errors: &mut Vec<PlanError>,
) -> Option<String> {
    // What cannot be read, the endpoint pass reports.
    let bytes = std::fs::read(&e.path).ok()?;
    let holds = |n: &[u8]| !n.is_empty() && bytes.windows(n.len()).any(|w| w == n);
    let ca = r.old_ca.as_deref().map(str::as_bytes).unwrap_or_default();
    let kept = r.argocd_kept.iter().any(|k| holds(k.as_bytes()));
    // A cluster registration may hold the name or the CA only in base64
    // `data` (its `config`): read it, so that is said, never copied silently.
    let registration = holds(crate::model::positions::CLUSTER_SECRET_LABEL.0.as_bytes());
    if !holds(r.old.as_bytes()) && !holds(ca) && !kept && !registration {
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(t) => Some(t),
        Err(_) if e.role == Role::Yaml => {
            errors.push(PlanError {
                rel: e.rel.clone(),
                line: 1,
                column: 1,
                message: format!("holds the cluster name `{}` but is not UTF-8, so its name positions cannot be read; nothing written", r.old),
                code: "unread-file",
            });
            None
        }
        Err(_) => None,
    }
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The lines of a `tfvars` file that name the old cluster as a quoted
/// string (`"prod"`) or a key (`prod = {`), and what to add beside each.
fn registry_notes(rel: &str, text: &str, r: &NameRebind) -> Vec<RegistryNote> {
    let quoted = format!("\"{}\"", r.old);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') || trimmed.starts_with("//") {
            continue;
        }
        let as_key = trimmed
            .strip_prefix(r.old.as_str())
            .is_some_and(|rest| rest.trim_start().starts_with('='));
        let at = line
            .find(&quoted)
            .or_else(|| as_key.then(|| line.len() - trimmed.len()));
        let Some(at) = at else { continue };
        let add = line.replacen(r.old.as_str(), &r.new, 1).trim().to_string();
        out.push(RegistryNote {
            rel: rel.to_string(),
            line: i + 1,
            column: line[..at].chars().count() + 1,
            context: trimmed.trim_end().to_string(),
            add,
        });
    }
    out
}

/// `base` with the name changes made by the edit engine, verified to read
/// back as exactly those changes.
fn rewritten(base: &str, changes: &[NameChange]) -> Result<String, String> {
    let (file_ops, value_ops) = names::ops(changes);
    let expect: Vec<Expect> = value_ops
        .into_iter()
        .map(|(at, ops)| Expect::Scalar {
            at,
            rule: Box::new(move |v| splice::apply(v, &ops).map_err(|e| e.to_string())),
        })
        .collect();
    let new = splice::apply(base, &file_ops).map_err(|e| e.to_string())?;
    verify(base, &new, &expect).map_err(|m| m.to_string())?;
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tfvars_registry_names_the_old_cluster_and_what_to_add() {
        let r = NameRebind {
            old: "prod".into(),
            new: "prod-blue".into(),
            old_arn: None,
            new_arn: None,
            old_ca: None,
            new_ca: None,
            argocd_moves: Vec::new(),
            argocd_known: None,
            argocd_kept: Vec::new(),
            old_server: None,
            new_server: None,
            argocd_foreign: Vec::new(),
        };
        let text = "# prod clusters\nclusters = [\"stage\", \"prod\"]\neks = {\n  prod = { account = \"1\" }\n  production = {}\n}\n";
        let notes = registry_notes("iam/terraform.tfvars", text, &r);
        let got: Vec<(usize, usize, &str)> = notes
            .iter()
            .map(|n| (n.line, n.column, n.add.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (2, 22, "clusters = [\"stage\", \"prod-blue\"]"),
                (4, 3, "prod-blue = { account = \"1\" }")
            ]
        );
    }
}
