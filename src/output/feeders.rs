//! Renders the after-merge report ([`crate::review::feeders::Report`]): a text
//! section of the review, the JSON `feeders[]` list, and the review
//! Markdown's table with a Mermaid diagram of the app-of-apps tree.

use crate::review::feeders::{Report, Row, Step, Verdict};
use serde::{Deserialize, Serialize};

/// One JSON row: one resource of one rewritten file, through one feeder.
#[derive(Debug, Serialize, Deserialize)]
pub struct FeederJson {
    pub file: String,
    pub resource: Option<String>,
    pub feeder: Option<String>,
    pub feeder_file: Option<String>,
    /// The feeder's `metadata.namespace` (absent when it names none): two
    /// feeders in different namespaces may share a name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeder_namespace: Option<String>,
    pub revision: Option<String>,
    /// `base`, `head` (taken as the base), `branch`, `tag`, `commit`,
    /// `semver range`, `unknown`.
    pub revision_kind: Option<String>,
    pub tracks_base: bool,
    pub hop1_automated: Option<bool>,
    pub hop2_automated: Option<bool>,
    pub wave: i64,
    /// `deploys_on_merge`, `manual_sync`, `applied_outside_argocd`,
    /// `tracks_other_branch`, `pinned`, `unknown_revision`, `not_included`,
    /// `no_feeder`, `not_proven`.
    pub verdict: String,
    /// Proven from what was read (what `--require-deploys` accepts):
    /// `deploys_on_merge`, `manual_sync`, `applied_outside_argocd`.
    pub proven: bool,
    /// `--require-deploys` refuses this row.
    pub blocks: bool,
    pub reason: String,
    /// What a proven verdict takes as given (the built-in AppProject
    /// `default` when the repository holds none); absent when nothing is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
}

/// The JSON rows of a report, one per resource (a file with no resource
/// named gets one row with `resource: null`).
pub fn json_rows(report: &Report) -> Vec<FeederJson> {
    let mut out = Vec::new();
    for r in &report.rows {
        let resources: Vec<Option<String>> = if r.resources.is_empty() {
            vec![None]
        } else {
            r.resources.iter().cloned().map(Some).collect()
        };
        let blocks = report.blocking().any(|b| std::ptr::eq(b, r));
        for res in resources {
            // Hop 2 is an Application's own sync (the same the sync order
            // says of it); other resources have none.
            let hop2 = match res.as_deref() {
                None => r.hop2_automated,
                Some(x) => r
                    .children
                    .iter()
                    .find(|(id, _)| id == x)
                    .map(|(_, auto)| *auto)
                    .or_else(|| {
                        x.starts_with("Application")
                            .then_some(r.hop2_automated)
                            .flatten()
                    }),
            };
            out.push(FeederJson {
                file: r.file.clone(),
                resource: res.clone(),
                feeder: r.feeder.as_ref().map(|f| f.0.clone()),
                feeder_file: r.feeder.as_ref().map(|f| f.1.clone()),
                feeder_namespace: r.feeder_namespace.clone(),
                revision: r.revision.clone(),
                revision_kind: r.revision_kind.map(str::to_string),
                tracks_base: r.tracks_base,
                hop1_automated: r.hop1_automated,
                hop2_automated: hop2,
                wave: r.wave,
                verdict: r.verdict.key().to_string(),
                proven: r.verdict.proven(),
                blocks,
                reason: r.verdict.sentence(r.feeder.as_ref().map(|f| f.0.as_str())),
                assumptions: if r.verdict.proven() {
                    r.assumptions.clone()
                } else {
                    Vec::new()
                },
            });
        }
    }
    out
}

fn base_line(report: &Report) -> String {
    match &report.base {
        Some((b, from)) => format!("After the merge into {b} (base branch, from {from}):"),
        None => "After the merge (base branch unknown; give --base BRANCH):".to_string(),
    }
}

fn step_line(i: usize, s: &Step) -> String {
    let name = s.what.split_once('/').map(|(_, n)| n).unwrap_or(&s.what);
    let appset = s.what.starts_with("ApplicationSet/");
    let how = match (s.automated, appset, s.updates) {
        (_, true, Some(false)) => "its applicationsSync policy keeps its controller from updating the Applications it made: they keep their old spec".to_string(),
        (true, false, _) => "automated".to_string(),
        (false, false, _) => format!("manual: argocd app sync {name}"),
        (true, true, _) => "its controller regenerates the Applications; they sync automatically".to_string(),
        (false, true, _) => "its controller regenerates the Applications; sync each by hand (no automated policy in its template)".to_string(),
    };
    match s.wave {
        None => format!("  {}. {}  ({how})", i + 1, s.what),
        Some(w) => format!("  {}. wave {w}: {}  ({how})", i + 1, s.what),
    }
}

fn revision_cell(r: &Row) -> String {
    match (&r.revision, r.revision_kind) {
        (Some(rev), Some("head")) => format!("{rev} (taken as the base branch)"),
        (Some(rev), Some("base")) => format!("{rev} (the base branch)"),
        (Some(rev), Some(kind)) => format!("{rev} ({kind})"),
        _ => "-".to_string(),
    }
}

/// The review's text section.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&base_line(report));
    out.push('\n');
    let rows: Vec<[String; 4]> = report
        .rows
        .iter()
        .map(|r| {
            [
                r.file.clone(),
                r.feeder.as_ref().map(|f| f.0.clone()).unwrap_or("-".into()),
                revision_cell(r),
                r.verdict.sentence(r.feeder.as_ref().map(|f| f.0.as_str())),
            ]
        })
        .collect();
    let head = ["file", "fed by", "revision", "after the merge"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    out.push_str(&format!(
        "  {:w0$}  {:w1$}  {:w2$}  {}\n",
        head[0], head[1], head[2], head[3]
    ));
    for r in &rows {
        out.push_str(&format!(
            "  {:w0$}  {:w1$}  {:w2$}  {}\n",
            r[0], r[1], r[2], r[3]
        ));
    }
    if !report.order.is_empty() {
        out.push_str("Sync order after the merge (parents first, then waves ascending):\n");
        for (i, s) in report.order.iter().enumerate() {
            out.push_str(&step_line(i, s));
            out.push('\n');
        }
    }
    for n in &report.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for l in &report.live {
        out.push_str(&format!("live: {l}\n"));
    }
    out
}

fn mermaid_id(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The review Markdown's section: the table, the order, and a Mermaid
/// diagram of parents, children (with their waves) and the old and new
/// cluster.
pub fn markdown(report: &Report, from: &str, to: &str) -> String {
    let mut out = String::from("## After the merge\n\n");
    out.push_str(&base_line(report));
    out.push_str("\n\n| file | fed by | revision | after the merge |\n| --- | --- | --- | --- |\n");
    for r in &report.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            super::finding::md_code(&r.file),
            r.feeder
                .as_ref()
                .map(|f| f.0.as_str())
                .unwrap_or("-")
                .replace('|', "\\|"),
            revision_cell(r),
            r.verdict
                .sentence(r.feeder.as_ref().map(|f| f.0.as_str()))
                .replace('|', "\\|")
        ));
    }
    if !report.order.is_empty() {
        out.push_str("\nSync order after the merge:\n\n");
        for (i, s) in report.order.iter().enumerate() {
            out.push_str(&format!("{}\n", step_line(i, s).trim_start()));
        }
    }
    for n in &report.notes {
        out.push_str(&format!("\n> note: {n}\n"));
    }
    for l in &report.live {
        out.push_str(&format!("\n> live: {l}\n"));
    }
    out.push_str("\n```mermaid\nflowchart TD\n");
    out.push_str(&format!(
        "  old((\"old cluster<br/>{}\")) -. cutover .-> new((\"new cluster<br/>{}\"))\n",
        from.replace('"', "'"),
        to.replace('"', "'")
    ));
    // parent -> file (labelled with the revision and hop 1) -> child
    // Application (with its wave) -> new cluster.
    let mut seen = std::collections::BTreeSet::new();
    let child_wave = |res: &str| {
        report
            .order
            .iter()
            .find(|s| s.what == res && s.wave.is_some())
            .and_then(|s| s.wave)
    };
    for r in &report.rows {
        let file_id = mermaid_id(&format!("file {}", r.file));
        if seen.insert(file_id.clone()) {
            out.push_str(&format!("  {file_id}[\"{}\"]\n", r.file));
            let mut to_new = true;
            for res in &r.resources {
                if let Some(w) = child_wave(res) {
                    let id = mermaid_id(&format!("child {res}"));
                    out.push_str(&format!(
                        "  {file_id} --> {id}([\"{res} · wave {w}\"]) --> new\n"
                    ));
                    to_new = false;
                }
            }
            if to_new {
                out.push_str(&format!("  {file_id} --> new\n"));
            }
        }
        match &r.feeder {
            Some((p, _)) => {
                let pid = mermaid_id(p);
                let label = match r.hop1_automated {
                    Some(true) => "automated",
                    _ => "manual sync",
                };
                if seen.insert(pid.clone()) {
                    out.push_str(&format!("  {pid}[\"{p}\"]\n"));
                }
                let style = if r.verdict.deploys_on_merge() {
                    "-->"
                } else {
                    "-.-x"
                };
                out.push_str(&format!(
                    "  {pid} {style}|\"{} · {label}\"| {file_id}\n",
                    revision_cell(r)
                ));
            }
            None => {
                out.push_str(&format!(
                    "  nofeeder[\"no feeder in this repository\"] -.-x {file_id}\n"
                ));
            }
        }
    }
    out.push_str("```\n");
    out
}

/// A one-line reason per blocking row, for `--require-deploys`' refusal.
pub fn refusal(report: &Report) -> String {
    let mut out = String::from(
        "--require-deploys: that merging the cutover branch deploys every rewritten file is not proven; nothing written:\n",
    );
    for r in report.blocking() {
        let feeder = r.feeder.as_ref().map(|f| f.0.as_str());
        let fix = match &r.verdict {
            Verdict::TracksBranch(_) | Verdict::Pinned(..) | Verdict::UnknownRevision(_) => {
                format!(
                    "; point {}'s targetRevision at the base branch, or merge there",
                    feeder.unwrap_or("the parent")
                )
            }
            Verdict::NotIncluded(_) => "; include the file in its parent's source".to_string(),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {}: {}{fix}\n",
            r.file,
            r.verdict.sentence(feeder)
        ));
    }
    out
}

/// `rebind feeders --format json`.
#[derive(Debug, Serialize)]
pub struct FeedersReport {
    pub schema_version: u32,
    pub command: &'static str,
    pub root: String,
    pub base: Option<String>,
    pub base_from: Option<&'static str>,
    pub feeders: Vec<FeederJson>,
    pub order: Vec<StepJson>,
    pub notes: Vec<String>,
    /// Where the live state (`--live`) differs from git.
    pub live_differences: Vec<String>,
    /// `notes` and `live_differences`, entry for entry, each with its
    /// stable `code`.
    pub warnings: Vec<super::codes::WarningJson>,
}

/// One step of the sync order.
#[derive(Debug, Serialize, Deserialize)]
pub struct StepJson {
    pub resource: String,
    pub wave: Option<i64>,
    pub automated: bool,
    /// An ApplicationSet: whether its controller updates the Applications
    /// it made (`null` for an Application).
    pub updates_applications: Option<bool>,
}

/// The order as JSON.
pub fn json_order(report: &Report) -> Vec<StepJson> {
    report
        .order
        .iter()
        .map(|s| StepJson {
            resource: s.what.clone(),
            wave: s.wave,
            automated: s.automated,
            updates_applications: s.updates,
        })
        .collect()
}

impl FeedersReport {
    pub fn new(root: &std::path::Path, report: &Report) -> FeedersReport {
        FeedersReport {
            schema_version: super::finding::SCHEMA_VERSION,
            command: "feeders",
            root: root.display().to_string(),
            base: report.base.as_ref().map(|b| b.0.clone()),
            base_from: report.base.as_ref().map(|b| b.1),
            feeders: json_rows(report),
            order: json_order(report),
            notes: report.notes.clone(),
            live_differences: report.live.clone(),
            warnings: super::codes::coded(super::codes::AFTER_MERGE_NOTE, "notes", &report.notes)
                .chain(super::codes::coded(
                    super::codes::LIVE_DIFFERENCE,
                    "live_differences",
                    &report.live,
                ))
                .collect(),
        }
    }
}
