//! Text for people: the scan listing and summary, the plan (diff, summary
//! table, what is not rewritten), skipped files, the commit message and the
//! Markdown review, and `check` findings.

use super::finding::{Finding, Level};
use crate::discover::walk::Skipped;
use crate::edit::diff;
use crate::edit::rewrite::{FilePlan, Mention};
use crate::find::locate::Occurrence;
use crate::find::summary::Summary;
use crate::review::plan::Plan;
use crate::text::words::{count, count_as};
use std::fmt::Write as _;

/// One scan line: `path:line:column: kind endpoint  yaml.path  (Kind/name)`.
pub fn occurrence_line(rel: &str, o: &Occurrence) -> String {
    let mut s = format!(
        "{}:{}:{}: {:<8} {}",
        rel,
        o.line,
        o.column,
        o.kind.as_str(),
        crate::text::endpoint::redact(&o.endpoint)
    );
    if let Some(p) = &o.yaml_path {
        let _ = write!(s, "  {p}");
    }
    if let Some(v) = &o.via {
        let _ = write!(s, "  via {v}");
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
        ("templated", "from generator/values", &tiers.templated),
    ] {
        let _ = writeln!(s, "  {tier:<18} {how:<24} {}", count(list.count, "app"));
    }
    for from in &tiers.templated_sources {
        let _ = writeln!(s, "    from {from}");
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
        let names = super::names::in_file(plan, &f.rel);
        if f.changes.is_empty() && !names.is_empty() {
            let _ = writeln!(
                s,
                "  {:<width$}  {:>5}  cluster name at {}",
                f.rel,
                names.len(),
                names
                    .iter()
                    .map(|c| c.change.yaml_path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            continue;
        }
        if f.changes.is_empty() {
            let _ = writeln!(
                s,
                "  {:<width$}  {:>5}  cluster endpoint updated, old one retired",
                f.rel, "-"
            );
            continue;
        }
        let (mut paths, resources) = paths_and_resources(f);
        paths.extend(names.iter().map(|c| c.change.yaml_path.as_str()));
        let _ = writeln!(
            s,
            "  {:<width$}  {:>5}  {} [{}]",
            f.rel,
            f.changes.len() + names.len(),
            paths.join(", "),
            resources.join(", ")
        );
    }
    s
}

/// What a plan changes, counted: "19 changes in 8 files"; with a cluster
/// name moving too, the endpoint and the name changes each counted over
/// the files either touches ("1 endpoint change and 2 name changes in 2
/// files"), so a file holding only a name change is never counted as an
/// endpoint's.
pub fn scope(plan: &Plan) -> String {
    let files = count(plan.manifest_count(), "file");
    match plan.name_change_count() {
        0 => format!("{} in {files}", count(plan.change_count(), "change")),
        names => format!(
            "{} and {} in {files}",
            count(plan.change_count(), "endpoint change"),
            count(names, "name change")
        ),
    }
}

/// The diff audit (also shown by `apply` before it writes) as text.
pub fn plan_text(plan: &Plan, color: bool) -> String {
    let mut s = String::new();
    // Each file's diff is worked out on every core, then joined in order.
    let diffs = crate::sys::par::par_map(plan.files.len(), crate::sys::par::cores(), |i| {
        let f = &plan.files[i];
        let d = diff::unified(f)
            + &crate::edit::diff::decoded_changes(&f.rel, &f.old, &f.changes, &plan.to);
        if color {
            colorize(&d)
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
        "{}{config}: {} -> {}",
        scope(plan),
        plan.from.url(),
        plan.to.url()
    );
    if !plan.files.is_empty() {
        s.push_str(&summary_table(plan));
    }
    s.push_str(&super::names::text(plan));
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
    if let Some(r) = &plan.after_merge {
        s.push('\n');
        s.push_str(&super::feeders::text(r));
    }
    if let Some(c) = &plan.identity {
        s.push('\n');
        s.push_str(&super::identity::review_text(c));
    }
    s
}

/// A unified diff with colour for a terminal: headers bold, removed lines
/// red, added lines green, hunk headers cyan. Each line's end (LF or CRLF)
/// stays outside the colour; a line ends at LF, CRLF or a lone CR, as in
/// the diff itself.
pub fn colorize(diff: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let mut out = String::with_capacity(diff.len() + 64);
    let b = diff.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            lines.push(&diff[start..=i]);
            start = i + 1;
        }
    }
    if start < diff.len() {
        lines.push(&diff[start..]);
    }
    for line in lines {
        let body = line.trim_end_matches(['\n', '\r']);
        let nl = &line[body.len()..];
        let style = if body.starts_with("---") || body.starts_with("+++") {
            Style::new().bold()
        } else if body.starts_with('-') {
            AnsiColor::Red.on_default()
        } else if body.starts_with('+') {
            AnsiColor::Green.on_default()
        } else if body.starts_with("@@") {
            AnsiColor::Cyan.on_default()
        } else {
            out.push_str(line);
            continue;
        };
        let _ = write!(out, "{style}{body}{style:#}{nl}");
    }
    out
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
    coded_notes(plan).into_iter().map(|(_, n)| n).collect()
}

/// `notes`, each with its stable code (`output::codes`).
pub fn coded_notes(plan: &Plan) -> Vec<(super::codes::Code, String)> {
    use super::codes;
    let mut out: Vec<_> = NOTES
        .iter()
        .map(|n| (codes::REVIEW_NOTE, n.to_string()))
        .collect();
    if plan.registrations.is_empty() {
        out.push((codes::CLUSTER_SECRET_NEEDED, "ArgoCD keys clusters by server URL: a cluster Secret for the new server URL must be issued before these Applications can sync (`rebind secret`, or `apply --cluster-name NAME --secret-out FILE`).".into()));
    }
    for a in &plan.added_registrations {
        let reads = plan
            .registrations
            .iter()
            .find(|r| r.rel == a.rel)
            .map(|r| format!(" It reads what the kept one reads, {}: where that is a token or a CA, the added one's must be the NEW cluster's.", r.reads))
            .unwrap_or_default();
        out.push((codes::REGISTRATION_CREDENTIALS, format!(
            "This change keeps the old cluster's registration {} (the rollback target) and adds the new cluster's beside it, {} ({}:{}:{}); the Applications move to it.{reads} Delete the old one only once the old cluster is torn down.",
            a.kept, a.resource, a.rel, a.line, a.column
        )));
    }
    for r in plan
        .registrations
        .iter()
        .filter(|_| plan.added_registrations.is_empty())
    {
        out.push((codes::REGISTRATION_CREDENTIALS, format!(
            "This change rebinds {}; no second Secret is needed, but {} must now hold the NEW cluster's token and CA (they still hold the old cluster's) before these Applications can sync.",
            own_registration(r, &plan.to, "`"),
            r.reads
        )));
    }
    out
}

/// "the repository's own cluster registration NAME (`path:line:col`) to
/// URL", the place quoted with `quote` (a backtick in Markdown).
pub fn own_registration(
    r: &crate::review::plan::RegistrationNote,
    to: &crate::text::endpoint::Endpoint,
    quote: &str,
) -> String {
    format!(
        "the repository's own cluster registration {} ({quote}{}:{}:{}{quote}) to {}",
        r.resource,
        r.rel,
        r.line,
        r.column,
        to.url()
    )
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
        "# rebind: {} -> {}\n\n{}: `{}` -> `{}`",
        short_host(&plan.from.host),
        short_host(&plan.to.host),
        scope(plan),
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
                .map(|p| super::finding::md_code(p))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            super::finding::md_code(&f.rel),
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
                "- {} ({})",
                super::finding::md_code(&format!("{}:{}:{}", m.rel, o.line, o.column)),
                o.kind.as_str()
            );
        }
    }
    s.push_str("\n## Diff\n\n");
    let mut body = String::new();
    for f in &plan.files {
        body.push_str(&diff::unified(f));
        body.push_str(&crate::edit::diff::decoded_changes(
            &f.rel, &f.old, &f.changes, &plan.to,
        ));
    }
    s.push_str(&super::finding::md_fence("diff", &body));
    s.push_str("\n## Notes\n\n");
    for n in notes(plan) {
        let _ = writeln!(s, "- {n}");
    }
    if let Some(r) = &plan.after_merge {
        s.push('\n');
        s.push_str(&super::feeders::markdown(
            r,
            &plan.from.url(),
            &plan.to.url(),
        ));
    }
    if let Some(c) = &plan.identity {
        s.push('\n');
        s.push_str(&super::identity::review_markdown(c));
    }
    s
}

/// `check` findings as lines: `path:line:column: message` (warnings say
/// so), then a count and how to fix what was found (the command or step
/// of each finding that has one).
pub fn check_text(findings: &[Finding]) -> String {
    let mut s: String = findings
        .iter()
        .map(|f| {
            let w = if f.level == Level::Warning {
                "warning: "
            } else {
                ""
            };
            format!("{}:{}:{}: {w}{}\n", f.path, f.line, f.column, f.message)
        })
        .collect();
    if findings.is_empty() {
        return s; // silent when clean, as a pre-commit hook should be
    }
    let errors = findings.iter().filter(|f| f.level == Level::Error).count();
    let _ = writeln!(
        s,
        "\ncheck: {}, {}.",
        count(errors, "error"),
        count(findings.len() - errors, "warning")
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

/// The line naming the pull request `apply --pr` opened or updated:
/// `Pull request #7 opened: URL` (GitLab: `Merge request !7 updated: URL`).
pub fn pull_request_line(pr: &crate::repo::pr::Opened) -> String {
    let (noun, sigil) = match pr.client {
        crate::repo::pr::Client::Gh => ("Pull request", '#'),
        crate::repo::pr::Client::Glab => ("Merge request", '!'),
    };
    let number = pr
        .number
        .map(|n| format!(" {sigil}{n}"))
        .unwrap_or_default();
    format!("{noun}{number} {}: {}\n", pr.action, pr.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorize_marks_lines_and_keeps_line_ends_outside() {
        let c = colorize(
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\r\n+new\n ctx\n\\ No newline at end of file\n",
        );
        assert_eq!(
            c,
            "\x1b[1m--- a/x\x1b[0m\n\x1b[1m+++ b/x\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\r\n\x1b[32m+new\x1b[0m\n ctx\n\\ No newline at end of file\n"
        );
        assert_eq!(colorize(""), "");
        assert_eq!(colorize("-no end"), "\x1b[31m-no end\x1b[0m");
        assert_eq!(
            colorize("-a\r+b\r"),
            "\x1b[31m-a\x1b[0m\r\x1b[32m+b\x1b[0m\r"
        );
    }
}
