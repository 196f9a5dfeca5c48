//! Text for people: the scan listing and summary, the plan (diff, summary
//! table, what is not rewritten), skipped files, the commit message and the
//! Markdown review, and `check` findings.

use super::{count, count_as};
use crate::check::{Finding, Severity};
use crate::diff;
use crate::locate::Occurrence;
use crate::rewrite::{FilePlan, Mention, Plan};
use crate::summary::Summary;
use crate::walk::Skipped;
use std::fmt::Write as _;

/// One scan line: `path:line:column: kind endpoint  yaml.path  (Kind/name)`.
pub fn occurrence_line(rel: &str, o: &Occurrence) -> String {
    let mut s = format!(
        "{}:{}:{}: {:<8} {}",
        rel,
        o.line,
        o.column,
        o.kind.as_str(),
        crate::endpoint::redact(&o.endpoint)
    );
    if let Some(p) = &o.yaml_path {
        let _ = write!(s, "  {p}");
    }
    if let Some(r) = &o.resource {
        let _ = write!(s, "  ({r})");
    }
    s.push('\n');
    s
}

/// The scan's closing summary: endpoints with their counts, then the tiers.
pub fn scan_summary(sum: &Summary) -> String {
    let mut s = String::new();
    if sum.is_empty() {
        s.push_str("\nNo Kubernetes API endpoint found.\n");
    } else {
        s.push_str("\nEndpoints:\n");
        let width = sum.tallies().map(|t| t.display.len()).max().unwrap_or(0);
        for tally in sum.tallies() {
            let mut extra = Vec::new();
            if tally.comments > 0 {
                extra.push(count(tally.comments, "comment"));
            }
            if tally.texts > 0 {
                extra.push(count(tally.texts, "text mention"));
            }
            if tally.templates > 0 {
                extra.push(count(tally.templates, "template action"));
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
                tally.role(),
                count(tally.values, "place"),
                count(tally.value_files, "file"),
                extra,
            );
        }
    }
    let tiers = &sum.tiers;
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
        let _ = writeln!(s, "  {tier:<18} {how:<24} {}", count(list.count, "app"));
    }
    s
}

fn mention_line(m: &Mention) -> String {
    let o = &m.occurrence;
    let why = m.why.map(|w| format!(" ({w})")).unwrap_or_default();
    format!(
        "  {}:{}:{}: {} {}{why}\n",
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
    // Each file's diff is worked out on every core, then joined in order.
    let diffs = crate::par_map(plan.files.len(), crate::cores(), |i| {
        let d = diff::unified(&plan.files[i]);
        if color {
            diff::colorize(&d)
        } else {
            d
        }
    });
    for d in diffs {
        s.push_str(&d);
    }
    if !plan.files.is_empty() {
        s.push('\n');
    }
    let config = if plan.manifest_count() < plan.files.len() {
        " (and the repo config)"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "{} in {}{config}: {} -> {}",
        count(plan.change_count(), "change"),
        count(plan.manifest_count(), "file"),
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
            count_as(
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

/// Skipped files as warning lines for stderr.
pub fn skipped_text(skipped: &[Skipped]) -> String {
    skipped
        .iter()
        .map(|s| format!("warning: {}: skipped: {}\n", s.rel, s.reason))
        .collect()
}

/// What every cutover review says, in the commit body and the review.
pub const NOTES: [&str; 3] = [
    "Changing `destination.server` moves each Application to the new cluster and leaves its resources on the old cluster unmanaged: plan the old cluster's teardown.",
    "Hub-pushed Applications can use `destination.name` instead of a hard-coded server, so the next cutover only re-issues the cluster Secret.",
    "karpenter can discover its API endpoint itself (`eks:DescribeCluster`), so `settings.clusterEndpoint` can be dropped from its values.",
];

/// The notes of this plan: the fixed ones, then what the cluster
/// registration needs: the repository's own registration, rebound here,
/// must now read the new cluster's credentials; or, when the repository
/// declares none, a registration for the new server URL must be issued.
pub fn notes(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = NOTES.iter().map(|n| n.to_string()).collect();
    if plan.registrations.is_empty() {
        out.push("ArgoCD keys clusters by server URL: a cluster Secret for the new server URL must be issued before these Applications can sync (`rebind secret`, or `apply --cluster-name NAME --secret-out FILE`).".into());
    }
    for r in &plan.registrations {
        out.push(format!(
            "This change rebinds the repository's own cluster registration {} (`{}:{}:{}`) to {}; no second Secret is needed, but {} must now hold the NEW cluster's token and CA (they still hold the old cluster's) before these Applications can sync.",
            r.resource,
            r.rel,
            r.line,
            r.column,
            plan.to.url(),
            r.reads
        ));
    }
    out
}

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
        count(plan.change_count(), "occurrence"),
        count(plan.manifest_count(), "file"),
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
    for n in notes(plan) {
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
        count(plan.change_count(), "change"),
        count(plan.manifest_count(), "file"),
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
    for n in notes(plan) {
        let _ = writeln!(s, "- {n}");
    }
    s
}

/// `check` findings as lines: `path:line:column: message` (warnings say
/// so), then a count and how to fix what was found.
pub fn check_text(findings: &[Finding]) -> String {
    let mut s: String = findings
        .iter()
        .map(|f| {
            let w = if f.severity == Severity::Warning {
                "warning: "
            } else {
                ""
            };
            format!("{}:{}:{}: {w}{}\n", f.rel, f.line, f.column, f.message)
        })
        .collect();
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    if findings.is_empty() {
        return s; // silent when clean, as a pre-commit hook should be
    }
    let _ = writeln!(
        s,
        "\ncheck: {}, {}.",
        count(errors, "error"),
        count(warnings, "warning")
    );
    let mut fixes: Vec<&str> = findings.iter().filter_map(|f| f.fix.as_deref()).collect();
    fixes.sort_unstable();
    fixes.dedup();
    if !fixes.is_empty() {
        s.push_str("To fix:\n");
        for f in fixes {
            let _ = writeln!(s, "  {f}");
        }
    }
    s
}

/// Escapes a value of a GitHub workflow command (`%`, CR, LF; and in
/// properties also `:` and `,`).
fn gh_escape(s: &str, property: bool) -> String {
    let mut out = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

fn gh_line(level: &str, rel: &str, line: usize, col: usize, msg: &str) -> String {
    format!(
        "::{level} file={},line={line},col={col}::{}\n",
        gh_escape(rel, true),
        gh_escape(msg, false)
    )
}

/// `check --format github`: one workflow command per finding, so each shows
/// as an annotation on the pull request's diff.
pub fn check_github(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            gh_line(level, &f.rel, f.line, f.column, &f.message)
        })
        .collect()
}

/// `diff --format github`: one annotation per pending change and mention.
pub fn plan_github(plan: &Plan) -> String {
    let mut s = String::new();
    for f in &plan.files {
        for o in &f.changes {
            s.push_str(&gh_line(
                "error",
                &f.rel,
                o.line,
                o.column,
                &format!(
                    "{} is still here ({}); rebind it with: rebind apply --from {} --to {}",
                    plan.from.url(),
                    o.yaml_path.as_deref().unwrap_or("value"),
                    plan.from.url(),
                    plan.to.url()
                ),
            ));
        }
    }
    for m in &plan.mentions {
        let o = &m.occurrence;
        s.push_str(&gh_line(
            "warning",
            &m.rel,
            o.line,
            o.column,
            &format!(
                "{} is mentioned in a {} (not rewritten)",
                plan.from.url(),
                o.kind.as_str()
            ),
        ));
    }
    s
}
