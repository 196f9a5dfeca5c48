//! Everything rebind prints: the scan inventory with its per-endpoint and tier
//! summaries, the diff audit and apply summaries, as text or JSON; and the
//! output sink that survives a closed pipe.

use crate::endpoint::{self, Shape};
use crate::locate::{Kind, Occurrence};
use crate::rewrite::{FilePlan, Mention, Plan, PlanError};
use crate::walk::Skipped;
use crate::{diff, Inventory};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Standard output that stops quietly when the reader goes away
/// (`rebind scan | head -1`): later writes are dropped, the exit code stays.
pub struct Out {
    inner: Box<dyn Write>,
    closed: bool,
    /// Colour diffs (stdout is a terminal and `NO_COLOR` is unset).
    pub color: bool,
}

impl Out {
    pub fn new(inner: Box<dyn Write>, color: bool) -> Out {
        Out {
            inner,
            closed: false,
            color,
        }
    }

    /// Writes `s`; a broken pipe is remembered and swallowed, other errors returned.
    pub fn put(&mut self, s: &str) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self
            .inner
            .write_all(s.as_bytes())
            .and_then(|()| self.inner.flush())
        {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

fn occurrence_json(path: &str, o: &Occurrence) -> Value {
    json!({
        "path": path,
        "line": o.line,
        "column": o.column,
        "endpoint": o.endpoint,
        "kind": o.kind.as_str(),
        "yaml_path": o.yaml_path,
        "resource": o.resource,
        "cluster_position": o.cluster_position,
        "shape": shape_name(o.shape()),
    })
}

fn shape_name(s: Shape) -> &'static str {
    match s {
        Shape::Eks => "eks",
        Shape::Aks => "aks",
        Shape::Gke => "gke",
        Shape::OpenShift => "openshift",
        Shape::Rancher => "rancher",
        Shape::InCluster => "in-cluster",
        Shape::Other => "other",
    }
}

fn skipped_json(s: &[Skipped]) -> Value {
    Value::Array(
        s.iter()
            .map(|s| json!({"path": s.rel, "reason": s.reason}))
            .collect(),
    )
}

/// Per-endpoint counts for the scan summary and `init`.
#[derive(Default)]
pub struct Tally {
    /// `https://host[:port]` as first written.
    pub display: String,
    pub shape: Option<Shape>,
    pub value_files: std::collections::BTreeSet<String>,
    pub values: usize,
    pub comments: usize,
    pub texts: usize,
    pub templates: usize,
    /// Cluster names the manifests give next to this endpoint, with counts.
    pub hints: BTreeMap<String, usize>,
}

impl Tally {
    /// The name the manifests give this endpoint most often.
    pub fn best_hint(&self) -> Option<&str> {
        self.hints
            .iter()
            .max_by_key(|(name, n)| (**n, std::cmp::Reverse(name.as_str())))
            .map(|(name, _)| name.as_str())
    }
}

fn tallies(inv: &Inventory) -> BTreeMap<String, Tally> {
    let mut t: BTreeMap<String, Tally> = BTreeMap::new();
    for src in &inv.sources {
        for o in src.occurrences() {
            let e = t.entry(o.found.key()).or_default();
            if e.display.is_empty() {
                e.display = if o.found.bare {
                    format!("https://{}", o.found.host)
                } else {
                    o.endpoint[..o.found.replace_end - o.found.start].to_string()
                };
            }
            e.shape = Some(o.shape());
            match o.kind {
                Kind::Value => {
                    e.values += 1;
                    e.value_files.insert(src.entry.rel.clone());
                    if let Some(h) = &o.cluster_hint {
                        *e.hints.entry(h.clone()).or_default() += 1;
                    }
                }
                Kind::Comment => e.comments += 1,
                Kind::Text => e.texts += 1,
                Kind::Template => e.templates += 1,
            }
        }
    }
    t
}

/// Endpoints written in a YAML value somewhere that are not in-cluster: the
/// candidates for `--from`.
pub fn workload_endpoints(inv: &Inventory) -> Vec<String> {
    workload_tallies(inv)
        .into_iter()
        .map(|t| t.display)
        .collect()
}

/// The tallies of [`workload_endpoints`].
pub fn workload_tallies(inv: &Inventory) -> Vec<Tally> {
    tallies(inv)
        .into_values()
        .filter(|t| t.values > 0 && t.shape != Some(Shape::InCluster))
        .collect()
}

#[derive(Default)]
struct Tiers {
    hub: Vec<String>,
    in_cluster: Vec<String>,
    by_name: Vec<String>,
}

fn tiers(inv: &Inventory) -> Tiers {
    let mut t = Tiers::default();
    for src in &inv.sources {
        let Ok(l) = &src.located else { continue };
        for d in &l.destinations {
            let in_cluster_server = d
                .server
                .as_deref()
                .and_then(|s| {
                    s.get(..8)
                        .filter(|p| p.eq_ignore_ascii_case("https://"))
                        .map(|_| &s[8..])
                })
                .is_some_and(|rest| {
                    let host = rest.split(['/', ':', '?']).next().unwrap_or("");
                    endpoint::shape(host) == Shape::InCluster
                });
            if in_cluster_server || d.name.as_deref() == Some("in-cluster") {
                t.in_cluster.push(d.resource.clone());
            } else if d.server.is_some() {
                t.hub.push(d.resource.clone());
            } else {
                t.by_name.push(d.resource.clone());
            }
        }
    }
    t
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The scan listing and summary as text.
pub fn scan_text(inv: &Inventory) -> String {
    let mut s = String::new();
    for src in &inv.sources {
        for o in src.occurrences() {
            let _ = write!(
                s,
                "{}:{}:{}: {:<8} {}",
                src.entry.rel,
                o.line,
                o.column,
                o.kind.as_str(),
                o.endpoint
            );
            if let Some(p) = &o.yaml_path {
                let _ = write!(s, "  {p}");
            }
            if let Some(r) = &o.resource {
                let _ = write!(s, "  ({r})");
            }
            s.push('\n');
        }
    }
    let t = tallies(inv);
    if t.is_empty() {
        s.push_str("\nNo Kubernetes API endpoint found.\n");
    } else {
        s.push_str("\nEndpoints:\n");
        let width = t.values().map(|t| t.display.len()).max().unwrap_or(0);
        for tally in t.values() {
            let role = match tally.shape {
                Some(Shape::InCluster) => "in-cluster",
                _ if tally.values > 0 => "workload",
                _ => "mentioned only",
            };
            let mut extra = Vec::new();
            if tally.comments > 0 {
                extra.push(plural(tally.comments, "comment", "comments"));
            }
            if tally.texts > 0 {
                extra.push(plural(tally.texts, "text mention", "text mentions"));
            }
            if tally.templates > 0 {
                extra.push(plural(
                    tally.templates,
                    "template action",
                    "template actions",
                ));
            }
            let extra = if extra.is_empty() {
                String::new()
            } else {
                format!(" (+ {}, not rewritable)", extra.join(", "))
            };
            let _ = writeln!(
                s,
                "  {:<width$}  {:<10}  {} in {}{}",
                tally.display,
                role,
                plural(tally.values, "place", "places"),
                plural(tally.value_files.len(), "file", "files"),
                extra,
            );
        }
    }
    let tiers = tiers(inv);
    s.push_str("\nTiers (Applications and ApplicationSet templates by destination):\n");
    for (tier, how, list) in [
        ("tier-1 hub push", "hard-coded endpoint", &tiers.hub),
        (
            "tier-3 in-cluster",
            "kubernetes.default.svc",
            &tiers.in_cluster,
        ),
        ("by name", "destination.name", &tiers.by_name),
    ] {
        let _ = writeln!(
            s,
            "  {tier:<18} {how:<24} {}",
            plural(list.len(), "app", "apps")
        );
    }
    s
}

/// The scan as one JSON object.
pub fn scan_json(inv: &Inventory, errors: &[PlanError]) -> Value {
    let occurrences: Vec<Value> = inv
        .sources
        .iter()
        .flat_map(|src| {
            src.occurrences()
                .iter()
                .map(|o| occurrence_json(&src.entry.rel, o))
        })
        .collect();
    let endpoints: Vec<Value> = tallies(inv)
        .into_values()
        .map(|t| {
            json!({
                "endpoint": t.display,
                "shape": t.shape.map(shape_name),
                "files": t.value_files.len(),
                "places": t.values,
                "comments": t.comments,
                "text": t.texts,
                "template": t.templates,
            })
        })
        .collect();
    let tiers = tiers(inv);
    json!({
        "occurrences": occurrences,
        "endpoints": endpoints,
        "tiers": {
            "hub_push": tiers.hub,
            "in_cluster": tiers.in_cluster,
            "by_name": tiers.by_name,
        },
        "skipped": skipped_json(&inv.skipped),
        "errors": errors_json(errors),
    })
}

fn errors_json(errors: &[PlanError]) -> Value {
    Value::Array(
        errors
            .iter()
            .map(|e| json!({"path": e.rel, "line": e.line, "column": e.column, "message": e.message}))
            .collect(),
    )
}

fn mention_line(m: &Mention) -> String {
    let o = &m.occurrence;
    format!(
        "  {}:{}:{}: {} {}\n",
        m.rel,
        o.line,
        o.column,
        o.kind.as_str(),
        o.endpoint
    )
}

/// The YAML paths and resources a file's changes sit at, repeats next to each other dropped.
fn paths_and_resources(f: &FilePlan) -> (Vec<&str>, Vec<&str>) {
    let mut paths: Vec<&str> = f
        .changes
        .iter()
        .filter_map(|o| o.yaml_path.as_deref())
        .collect();
    paths.dedup();
    let mut resources: Vec<&str> = f
        .changes
        .iter()
        .filter_map(|o| o.resource.as_deref())
        .collect();
    resources.dedup();
    (paths, resources)
}

/// The per-file summary table: file, occurrences, YAML paths, resources.
pub fn summary_table(plan: &Plan) -> String {
    let mut s = String::new();
    let width = plan
        .files
        .iter()
        .map(|f| f.rel.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        s,
        "  {:<width$}  {:>5}  YAML paths / resources",
        "file", "count"
    );
    for f in &plan.files {
        if f.changes.is_empty() {
            let _ = writeln!(
                s,
                "  {:<width$}  {:>5}  cluster endpoint updated, old one retired",
                f.rel, "-"
            );
            continue;
        }
        let (paths, resources) = paths_and_resources(f);
        let _ = writeln!(
            s,
            "  {:<width$}  {:>5}  {} [{}]",
            f.rel,
            f.changes.len(),
            paths.join(", "),
            resources.join(", ")
        );
    }
    s
}

/// The diff audit (also shown by `apply` before it writes) as text.
pub fn plan_text(plan: &Plan, color: bool) -> String {
    let mut s = String::new();
    for f in &plan.files {
        let d = diff::unified(f);
        s.push_str(&if color { diff::colorize(&d) } else { d });
    }
    if !plan.files.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{} in {}: {} -> {}",
        plural(plan.change_count(), "change", "changes"),
        plural(plan.files.len(), "file", "files"),
        plan.from.url(),
        plan.to.url()
    );
    if !plan.files.is_empty() {
        s.push_str(&summary_table(plan));
    }
    if !plan.mentions.is_empty() {
        let _ = writeln!(
            s,
            "Not rewritten ({}; fix by hand if they matter):",
            plural(
                plan.mentions.len(),
                "mention in a comment, text file or template action",
                "mentions in comments, text files or template actions"
            )
        );
        for m in &plan.mentions {
            s.push_str(&mention_line(m));
        }
    }
    s
}

/// The plan as one JSON object (`diff --json`, and the base of `apply --json`).
pub fn plan_json(plan: &Plan, skipped: &[Skipped]) -> Value {
    let files: Vec<Value> = plan
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.rel,
                "changes": f.changes.iter().map(|o| occurrence_json(&f.rel, o)).collect::<Vec<_>>(),
                "diff": diff::unified(f),
            })
        })
        .collect();
    json!({
        "from": plan.from.url(),
        "to": plan.to.url(),
        "files_changed": plan.files.len(),
        "changes": plan.change_count(),
        "files": files,
        "not_rewritten": plan.mentions.iter().map(|m| occurrence_json(&m.rel, &m.occurrence)).collect::<Vec<_>>(),
        "skipped": skipped_json(skipped),
        "errors": errors_json(&plan.errors),
    })
}

/// Skipped files as warning lines for stderr.
pub fn skipped_text(skipped: &[Skipped]) -> String {
    skipped
        .iter()
        .map(|s| format!("warning: {}: skipped: {}\n", s.rel, s.reason))
        .collect()
}

/// What every cutover review should say, in the commit body and the review.
pub const NOTES: [&str; 4] = [
    "Changing `destination.server` moves each Application to the new cluster and leaves its resources on the old cluster unmanaged: plan the old cluster's teardown.",
    "Hub-pushed Applications can use `destination.name` instead of a hard-coded server, so the next cutover only re-issues the cluster Secret.",
    "karpenter can discover its API endpoint itself (`eks:DescribeCluster`), so `settings.clusterEndpoint` can be dropped from its values.",
    "ArgoCD keys clusters by server URL: a cluster Secret for the new server URL must be issued before these Applications can sync.",
];

/// The first label of a host: enough to tell two EKS clusters apart in a subject line.
fn short_host(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}

/// The commit message of the git flow: subject, counts, files, notes.
pub fn commit_message(plan: &Plan) -> String {
    let mut s = format!(
        "rebind: {} -> {}\n\nRebind {} in {} from\n  {}\nto\n  {}\n\n",
        short_host(&plan.from.host),
        short_host(&plan.to.host),
        plural(plan.change_count(), "occurrence", "occurrences"),
        plural(plan.files.len(), "file", "files"),
        plan.from.url(),
        plan.to.url(),
    );
    for f in &plan.files {
        let _ = writeln!(s, "{} ({}):", f.rel, f.changes.len());
        for o in &f.changes {
            let _ = writeln!(
                s,
                "  {}:{} {}{}",
                o.line,
                o.column,
                o.yaml_path.as_deref().unwrap_or("-"),
                o.resource
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            );
        }
    }
    s.push_str("\nNotes:\n");
    for n in NOTES {
        let _ = writeln!(s, "- {n}");
    }
    s
}

/// The review as Markdown, ready to paste as a pull-request body.
pub fn review_markdown(plan: &Plan, branch: Option<&str>) -> String {
    let mut s = format!(
        "# rebind: {} -> {}\n\n{} in {}: `{}` -> `{}`",
        short_host(&plan.from.host),
        short_host(&plan.to.host),
        plural(plan.change_count(), "change", "changes"),
        plural(plan.files.len(), "file", "files"),
        plan.from.url(),
        plan.to.url(),
    );
    if let Some(b) = branch {
        let _ = write!(s, " on branch `{b}`");
    }
    s.push_str(".\n\n## Summary\n\n| file | occurrences | YAML paths | resources |\n| --- | ---: | --- | --- |\n");
    for f in &plan.files {
        let (paths, res) = paths_and_resources(f);
        let code = |v: Vec<&str>| {
            v.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            f.rel,
            f.changes.len(),
            code(paths),
            code(res)
        );
    }
    if !plan.mentions.is_empty() {
        s.push_str("\n## Not rewritten\n\n");
        for m in &plan.mentions {
            let o = &m.occurrence;
            let _ = writeln!(
                s,
                "- `{}:{}:{}` ({})",
                m.rel,
                o.line,
                o.column,
                o.kind.as_str()
            );
        }
    }
    s.push_str("\n## Diff\n\n```diff\n");
    for f in &plan.files {
        s.push_str(&diff::unified(f));
    }
    s.push_str("```\n\n## Notes\n\n");
    for n in NOTES {
        let _ = writeln!(s, "- {n}");
    }
    s
}

/// `check` findings as lines: `path:line:column: message` (warnings say so).
pub fn check_text(findings: &[crate::check::Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            let w = if f.severity == crate::check::Severity::Warning {
                "warning: "
            } else {
                ""
            };
            format!("{}:{}:{}: {w}{}\n", f.rel, f.line, f.column, f.message)
        })
        .collect()
}

fn severity_name(s: crate::check::Severity) -> &'static str {
    match s {
        crate::check::Severity::Error => "error",
        crate::check::Severity::Warning => "warning",
    }
}

/// `check --format json`.
pub fn check_json(findings: &[crate::check::Finding]) -> Value {
    json!({
        "findings": findings.iter().map(|f| json!({
            "path": f.rel,
            "line": f.line,
            "column": f.column,
            "severity": severity_name(f.severity),
            "rule": f.rule.id(),
            "message": f.message,
        })).collect::<Vec<_>>(),
    })
}

/// `check --format sarif`: SARIF 2.1.0, one result per finding.
pub fn check_sarif(findings: &[crate::check::Finding]) -> Value {
    use crate::check::Rule;
    let rules: Vec<Value> = [
        (Rule::Retired, "A retired endpoint of a cluster declared in .rebind.yaml is committed."),
        (Rule::Unknown, "A workload endpoint at a cluster position is not declared by any cluster in .rebind.yaml."),
    ]
    .iter()
    .map(|(r, text)| json!({"id": r.id(), "shortDescription": {"text": text}}))
    .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            json!({
                "ruleId": f.rule.id(),
                "level": severity_name(f.severity),
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.rel},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rebind",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
