//! Machine output: one typed report per command, serialised with serde.
//! Every report starts with `schema_version` and `command` and always has the
//! same fields (`null`/`false` where a field does not apply). Counts are
//! numbers named `*_count`; lists are named for what they hold.
//! The README's "JSON output" section documents these shapes.

use super::SCHEMA_VERSION;
use crate::check::{Finding, Severity};
use crate::endpoint::Shape;
use crate::locate::Occurrence;
use crate::rewrite::{Plan, PlanError};
use crate::summary::{Summary, Tally};
use crate::walk::Skipped;
use serde::Serialize;

/// One endpoint occurrence.
#[derive(Debug, Serialize)]
pub struct OccurrenceJson<'a> {
    pub path: &'a str,
    pub line: usize,
    pub column: usize,
    /// As written, with any password in user info hidden.
    pub endpoint: String,
    /// `value`, `comment`, `text` or `template`.
    pub kind: &'static str,
    pub yaml_path: Option<&'a str>,
    pub resource: Option<&'a str>,
    pub cluster_position: bool,
    /// The cluster position's name (see the README's "Endpoint rules").
    pub position: Option<&'static str>,
    pub shape: &'static str,
}

impl<'a> OccurrenceJson<'a> {
    pub fn new(path: &'a str, o: &'a Occurrence) -> OccurrenceJson<'a> {
        OccurrenceJson {
            path,
            line: o.line,
            column: o.column,
            endpoint: crate::endpoint::redact(&o.endpoint),
            kind: o.kind.as_str(),
            yaml_path: o.yaml_path.as_deref(),
            resource: o.resource.as_deref(),
            cluster_position: o.cluster_position,
            position: o.position.map(|p| p.as_str()),
            shape: shape_name(o.shape()),
        }
    }
}

pub fn shape_name(s: Shape) -> &'static str {
    s.name()
}

#[derive(Debug, Serialize)]
pub struct SkippedJson<'a> {
    pub path: &'a str,
    pub reason: &'a str,
}

pub fn skipped(s: &[Skipped]) -> Vec<SkippedJson<'_>> {
    s.iter()
        .map(|s| SkippedJson {
            path: &s.rel,
            reason: &s.reason,
        })
        .collect()
}

#[derive(Debug, Serialize)]
pub struct ErrorJson<'a> {
    pub path: &'a str,
    pub line: usize,
    pub column: usize,
    pub message: &'a str,
}

pub fn errors(e: &[PlanError]) -> Vec<ErrorJson<'_>> {
    e.iter()
        .map(|e| ErrorJson {
            path: &e.rel,
            line: e.line,
            column: e.column,
            message: &e.message,
        })
        .collect()
}

#[derive(Debug, Serialize)]
pub struct EndpointJson<'a> {
    pub endpoint: &'a str,
    pub shape: Option<&'static str>,
    /// `workload`, `in-cluster` or `mentioned only`.
    pub role: &'static str,
    pub cluster_name: Option<&'a str>,
    pub file_count: usize,
    pub value_count: usize,
    pub comment_count: usize,
    pub text_count: usize,
    pub template_count: usize,
}

impl<'a> EndpointJson<'a> {
    pub fn new(t: &'a Tally) -> EndpointJson<'a> {
        EndpointJson {
            endpoint: &t.display,
            shape: t.shape.map(shape_name),
            role: t.role(),
            cluster_name: t.best_hint(),
            file_count: t.value_files,
            value_count: t.values,
            comment_count: t.comments,
            text_count: t.texts,
            template_count: t.templates,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct TiersJson<'a> {
    pub hub_push: &'a [String],
    pub in_cluster: &'a [String],
    pub by_name: &'a [String],
}

/// The part of `scan --format json` that follows the streamed `occurrences`
/// list: the streamed head is `{"schema_version":1,"command":"scan","occurrences":[`.
#[derive(Debug, Serialize)]
pub struct ScanTail<'a> {
    pub occurrence_count: usize,
    pub endpoints: Vec<EndpointJson<'a>>,
    pub tiers: TiersJson<'a>,
    pub skipped: Vec<SkippedJson<'a>>,
    pub errors: Vec<ErrorJson<'a>>,
}

impl<'a> ScanTail<'a> {
    pub fn new(
        occurrence_count: usize,
        sum: &'a Summary,
        skip: &'a [Skipped],
        errs: &'a [PlanError],
    ) -> ScanTail<'a> {
        ScanTail {
            occurrence_count,
            endpoints: sum.tallies().map(EndpointJson::new).collect(),
            tiers: TiersJson {
                hub_push: &sum.tiers.hub.names,
                in_cluster: &sum.tiers.in_cluster.names,
                by_name: &sum.tiers.by_name.names,
            },
            skipped: skipped(skip),
            errors: errors(errs),
        }
    }
}

/// The opening of the streamed scan report.
pub fn scan_head() -> String {
    format!("{{\"schema_version\":{SCHEMA_VERSION},\"command\":\"scan\",\"occurrences\":[")
}

/// The streamed scan report's closing part (after the last occurrence).
pub fn scan_tail(tail: &ScanTail) -> String {
    let v = serde_json::to_value(tail).expect("the scan summary serialises");
    let body = serde_json::to_string(&v).expect("a JSON value serialises");
    // `{"a":..}` -> `],"a":..}`
    format!("],{}\n", &body[1..])
}

#[derive(Debug, Serialize)]
pub struct FileJson<'a> {
    pub path: &'a str,
    pub change_count: usize,
    pub changes: Vec<OccurrenceJson<'a>>,
    /// The file's unified diff.
    pub diff: String,
}

/// A cluster registration the repository declares and the plan rebinds.
#[derive(Debug, Serialize)]
pub struct RegistrationJson<'a> {
    pub path: &'a str,
    pub line: usize,
    pub column: usize,
    pub resource: &'a str,
    /// What it reads the token and CA from.
    pub reads: &'a str,
}

/// `diff` and `apply`: the plan and what was done with it.
#[derive(Debug, Serialize)]
pub struct PlanReport<'a> {
    pub schema_version: u32,
    pub command: &'static str,
    pub from: String,
    pub to: String,
    /// `pending` (diff), `applied`, `nothing_to_change`, `already_done`
    /// (the branch holds this change), `declined`.
    pub status: &'static str,
    pub file_count: usize,
    pub change_count: usize,
    pub files: Vec<FileJson<'a>>,
    /// Comments, text and template actions naming the old endpoint: not rewritten.
    pub mentions: Vec<OccurrenceJson<'a>>,
    /// Other files the run writes (the repo config), by path.
    pub also_written: Vec<&'a str>,
    /// The repository's own cluster registrations this plan rebinds.
    pub registrations: Vec<RegistrationJson<'a>>,
    /// The review notes (what is left to do after the rebind).
    pub notes: Vec<String>,
    pub skipped: Vec<SkippedJson<'a>>,
    pub errors: Vec<ErrorJson<'a>>,
    pub written: bool,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub pushed_to: Option<String>,
}

impl<'a> PlanReport<'a> {
    pub fn new(
        command: &'static str,
        status: &'static str,
        plan: &'a Plan,
        skip: &'a [Skipped],
    ) -> PlanReport<'a> {
        let manifests: Vec<_> = plan.files.iter().filter(|f| !f.is_config).collect();
        PlanReport {
            schema_version: SCHEMA_VERSION,
            command,
            from: plan.from.url(),
            to: plan.to.url(),
            status,
            file_count: manifests.len(),
            change_count: plan.change_count(),
            files: manifests
                .iter()
                .map(|f| FileJson {
                    path: &f.rel,
                    change_count: f.changes.len(),
                    changes: f
                        .changes
                        .iter()
                        .map(|o| OccurrenceJson::new(&f.rel, o))
                        .collect(),
                    diff: crate::diff::unified(f),
                })
                .collect(),
            mentions: plan
                .mentions
                .iter()
                .map(|m| OccurrenceJson::new(&m.rel, &m.occurrence))
                .collect(),
            also_written: plan
                .files
                .iter()
                .filter(|f| f.is_config)
                .map(|f| f.rel.as_str())
                .collect(),
            registrations: plan
                .registrations
                .iter()
                .map(|r| RegistrationJson {
                    path: &r.rel,
                    line: r.line,
                    column: r.column,
                    resource: &r.resource,
                    reads: &r.reads,
                })
                .collect(),
            notes: super::text::notes(plan),
            skipped: skipped(skip),
            errors: errors(&plan.errors),
            written: false,
            branch: None,
            commit: None,
            pushed_to: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct FindingJson<'a> {
    pub path: &'a str,
    pub line: usize,
    pub column: usize,
    pub severity: &'static str,
    pub rule: &'static str,
    pub message: &'a str,
}

/// `check --format json`.
#[derive(Debug, Serialize)]
pub struct CheckReport<'a> {
    pub schema_version: u32,
    pub command: &'static str,
    pub error_count: usize,
    pub warning_count: usize,
    pub findings: Vec<FindingJson<'a>>,
    pub skipped: Vec<SkippedJson<'a>>,
}

pub fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

impl<'a> CheckReport<'a> {
    pub fn new(findings: &'a [Finding], skip: &'a [Skipped]) -> CheckReport<'a> {
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        CheckReport {
            schema_version: SCHEMA_VERSION,
            command: "check",
            error_count: errors,
            warning_count: findings.len() - errors,
            findings: findings
                .iter()
                .map(|f| FindingJson {
                    path: &f.rel,
                    line: f.line,
                    column: f.column,
                    severity: severity_name(f.severity),
                    rule: f.rule.id(),
                    message: &f.message,
                })
                .collect(),
            skipped: skipped(skip),
        }
    }
}

/// `check --format sarif`: SARIF 2.1.0, one result per finding.
pub fn check_sarif(findings: &[Finding]) -> serde_json::Value {
    use crate::check::Rule;
    use serde_json::json;
    let rules: Vec<serde_json::Value> = [
        (Rule::Retired, "A retired endpoint of a cluster declared in .rebind.yaml is committed."),
        (Rule::Unknown, "A workload endpoint at a cluster position is not declared by any cluster in .rebind.yaml."),
        (Rule::Unread, "A file that may hold an endpoint could not be read (no access, vanished, or not UTF-8)."),
    ]
    .iter()
    .map(|(r, text)| json!({"id": r.id(), "shortDescription": {"text": text}}))
    .collect();
    let results: Vec<serde_json::Value> = findings
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

/// `init --format json`.
#[derive(Debug, Serialize)]
pub struct InitReport {
    pub schema_version: u32,
    pub command: &'static str,
    pub config: String,
    pub clusters: Vec<InitClusterJson>,
    pub written: bool,
}

#[derive(Debug, Serialize)]
pub struct InitClusterJson {
    pub name: String,
    pub endpoint: String,
    pub file_count: usize,
    pub occurrence_count: usize,
}

/// `secret --format json`: the manifest and where it went.
#[derive(Debug, Serialize)]
pub struct SecretReport {
    pub schema_version: u32,
    pub command: &'static str,
    pub server: String,
    pub manifest: Option<String>,
    pub written_to: Option<String>,
    pub existing: Vec<String>,
}

/// Serialises a report, pretty, with a final newline.
pub fn render<T: Serialize>(report: &T) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("reports serialise");
    s.push('\n');
    s
}
