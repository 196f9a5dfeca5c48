//! Machine output: one typed report per command, serialised with serde.
//! Every report starts with `schema_version` and `command` and always has the
//! same fields (`null`/`false` where a field does not apply). Counts are
//! numbers named `*_count`; lists are named for what they hold.
//! `docs/json.md` documents these shapes.
//!
//! The plan report is also read back (`apply --expect-from-audit` reads a
//! `diff --format json` audit through [`PlanReport`]), so its strings are
//! `Cow`s: borrowed when written, owned when read.

use super::finding::{Finding, SCHEMA_VERSION};
use crate::discover::walk::Skipped;
use crate::edit::rewrite::PlanError;
use crate::find::locate::Occurrence;
use crate::find::summary::{Summary, Tally};
use crate::review::plan::Plan;
use crate::text::endpoint::Shape;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A string of a report: borrowed when written, owned when read back.
pub type Str<'a> = Cow<'a, str>;

/// One endpoint occurrence.
#[derive(Debug, Serialize, Deserialize)]
pub struct OccurrenceJson<'a> {
    pub path: Str<'a>,
    pub line: usize,
    pub column: usize,
    /// As written, with any password in user info hidden.
    pub endpoint: String,
    /// `value`, `comment`, `text` or `template`.
    pub kind: Str<'a>,
    pub yaml_path: Option<Str<'a>>,
    pub resource: Option<Str<'a>>,
    pub cluster_position: bool,
    /// The cluster position's name (see `docs/endpoint-rules.md`).
    pub position: Option<Str<'a>>,
    pub shape: Str<'a>,
    /// The road by which the value reaches its cluster position when it is
    /// not written at the position's own key (an alias, a merge key, a chart
    /// template, a generator); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Str<'a>>,
}

impl<'a> OccurrenceJson<'a> {
    pub fn new(path: &'a str, o: &'a Occurrence) -> OccurrenceJson<'a> {
        OccurrenceJson {
            path: path.into(),
            line: o.line,
            column: o.column,
            endpoint: crate::text::endpoint::redact(&o.endpoint),
            kind: o.kind.as_str().into(),
            yaml_path: o.yaml_path.as_deref().map(Cow::from),
            resource: o.resource.as_deref().map(Cow::from),
            cluster_position: o.cluster_position,
            position: o.position.map(|p| p.as_str().into()),
            shape: shape_name(o.shape()).into(),
            via: o.via.as_deref().map(Cow::from),
        }
    }
}

pub fn shape_name(s: Shape) -> &'static str {
    s.name()
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SkippedJson<'a> {
    pub path: Str<'a>,
    pub reason: Str<'a>,
    /// `skipped` (see `output::codes`).
    #[serde(default)]
    pub code: Str<'a>,
}

pub fn skipped(s: &[Skipped]) -> Vec<SkippedJson<'_>> {
    s.iter()
        .map(|s| SkippedJson {
            path: s.rel.as_str().into(),
            reason: s.reason.as_str().into(),
            code: super::codes::SKIPPED.id.into(),
        })
        .collect()
}

/// An error: where (`null` when it is not at a place in a file), what, and
/// its stable `code` (see `output::codes`; docs/errors.md).
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorJson<'a> {
    pub path: Option<Str<'a>>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: Str<'a>,
    #[serde(default)]
    pub code: Str<'a>,
}

impl<'a> ErrorJson<'a> {
    /// A located error, from the one finding model.
    pub fn at(f: &Finding<'a>, code: &'static str) -> ErrorJson<'a> {
        ErrorJson {
            path: Some(f.path.clone()),
            line: Some(f.line),
            column: Some(f.column),
            message: f.message.clone(),
            code: code.into(),
        }
    }
}

pub fn errors(e: &[PlanError]) -> Vec<ErrorJson<'_>> {
    e.iter()
        .map(|e| ErrorJson::at(&Finding::from_error(e), e.code))
        .collect()
}

/// One mention of a refused mentions-only `--from`.
#[derive(Debug, Serialize, Deserialize)]
pub struct MentionJson<'a> {
    pub path: Str<'a>,
    pub line: usize,
    pub column: usize,
    /// `comment`, `text` or `template`.
    pub kind: Str<'a>,
    pub endpoint: Str<'a>,
    /// Why it is not rewritten, where its kind does not say it.
    pub why: Option<Str<'a>>,
}

/// What a failure after the first write (exit 3) leaves, for a script:
/// the branch and commit made, whether it is pushed, the pull request,
/// and the exact command that finishes the run.
#[derive(Debug, Default)]
pub struct AfterWrite {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub pushed: Option<bool>,
    pub pull_request: Option<String>,
    pub retry: Option<String>,
}

/// What every command prints with `--format json` when it refuses or
/// fails before its own report: the command and its errors (each with its
/// `code`), on stdout. After the first write (exit 3): `branch`, `commit`,
/// `pushed`, `pull_request` and `retry`; for a `--from` only mentioned,
/// `mentions`. Fields that do not apply are `null` (`[]` for `mentions`).
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorReport<'a> {
    pub schema_version: u32,
    pub command: Str<'a>,
    pub errors: Vec<ErrorJson<'a>>,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub pushed: Option<bool>,
    #[serde(default)]
    pub pull_request: Option<String>,
    #[serde(default)]
    pub retry: Option<String>,
    #[serde(default)]
    pub mentions: Vec<MentionJson<'a>>,
}

impl<'a> ErrorReport<'a> {
    /// The errors at places in files, or else the one message with `code`.
    pub fn new(
        command: &'a str,
        located: &'a [PlanError],
        message: &'a str,
        code: &'static str,
    ) -> ErrorReport<'a> {
        let mut errors = errors(located);
        if errors.is_empty() {
            errors.push(ErrorJson {
                path: None,
                line: None,
                column: None,
                message: message.into(),
                code: code.into(),
            });
        }
        ErrorReport {
            schema_version: SCHEMA_VERSION,
            command: command.into(),
            errors,
            branch: None,
            commit: None,
            pushed: None,
            pull_request: None,
            retry: None,
            mentions: Vec::new(),
        }
    }

    /// With what a failure after the first write leaves.
    pub fn after_write(mut self, a: AfterWrite) -> ErrorReport<'a> {
        self.branch = a.branch;
        self.commit = a.commit;
        self.pushed = a.pushed;
        self.pull_request = a.pull_request;
        self.retry = a.retry;
        self
    }

    /// With the mentions of a refused mentions-only `--from`.
    pub fn mentions(mut self, m: &'a crate::review::plan::OnlyMentioned) -> ErrorReport<'a> {
        self.mentions = m
            .mentions
            .iter()
            .map(|p| MentionJson {
                path: p.rel.as_str().into(),
                line: p.line,
                column: p.column,
                kind: p.kind.into(),
                endpoint: p.endpoint.as_str().into(),
                why: p.why.map(Cow::from),
            })
            .collect();
        self
    }
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
    /// Destinations that are generator or template parameters, with where
    /// their values come from when the chart's templates were followed.
    pub templated: Vec<TemplatedJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct TemplatedJson<'a> {
    pub resource: &'a str,
    pub from: Option<&'a str>,
}

/// A chart template action at a cluster position that was not followed.
#[derive(Debug, Serialize)]
pub struct NoteJson<'a> {
    pub path: &'a str,
    pub line: usize,
    /// `templated, not followed: ...`
    pub message: String,
    /// `not-followed` (see `output::codes`).
    pub code: &'static str,
}

/// The part of `scan --format json` that follows the streamed `occurrences`
/// list.
#[derive(Debug, Serialize)]
pub struct ScanTail<'a> {
    pub occurrence_count: usize,
    pub endpoints: Vec<EndpointJson<'a>>,
    pub tiers: TiersJson<'a>,
    pub skipped: Vec<SkippedJson<'a>>,
    pub errors: Vec<ErrorJson<'a>>,
    /// "templated, not followed": chart template actions at cluster positions.
    pub notes: Vec<NoteJson<'a>>,
    pub arn_clusters: Vec<ArnJson>,
}

impl<'a> ScanTail<'a> {
    pub fn new(rest: &'a ScanRest) -> ScanTail<'a> {
        let sum = &rest.summary;
        ScanTail {
            occurrence_count: rest.listed,
            endpoints: sum.tallies().map(EndpointJson::new).collect(),
            tiers: TiersJson {
                hub_push: &sum.tiers.hub.names,
                in_cluster: &sum.tiers.in_cluster.names,
                by_name: &sum.tiers.by_name.names,
                templated: sum
                    .tiers
                    .templated
                    .names
                    .iter()
                    .enumerate()
                    .map(|(i, r)| TemplatedJson {
                        resource: r,
                        from: sum.tiers.templated_from.get(i).and_then(|f| f.as_deref()),
                    })
                    .collect(),
            },
            skipped: skipped(&rest.skipped),
            errors: errors(&rest.errors),
            notes: rest
                .notes
                .iter()
                .map(|n| NoteJson {
                    path: &n.rel,
                    line: n.line,
                    message: format!("templated, not followed: {}", n.message),
                    code: super::codes::NOT_FOLLOWED.id,
                })
                .collect(),
            arn_clusters: rest
                .arn_clusters
                .iter()
                .map(|(rel, a)| ArnJson::new(rel, a))
                .collect(),
        }
    }
}

/// What the scan's walk hands back once every file is read.
pub struct ScanRest {
    pub listed: usize,
    pub summary: Summary,
    pub skipped: Vec<Skipped>,
    pub errors: Vec<PlanError>,
    /// Chart template actions at cluster positions that were not followed.
    pub notes: Vec<crate::find::templates::Note>,
    /// Clusters named by their EKS ARN (a registration's `server`, a
    /// destination): not endpoints, listed beside them.
    pub arn_clusters: Vec<(String, crate::find::names::ArnRef)>,
}

/// A cluster named by its EKS ARN in a scan.
#[derive(Debug, Serialize, Deserialize)]
pub struct ArnJson {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub arn: String,
    pub cluster_name: String,
    pub yaml_path: String,
    pub resource: Option<String>,
    pub registration: bool,
}

impl ArnJson {
    pub fn new(rel: &str, a: &crate::find::names::ArnRef) -> ArnJson {
        ArnJson {
            path: rel.to_string(),
            line: a.line,
            column: a.column,
            arn: a.arn.clone(),
            cluster_name: a.name.clone(),
            yaml_path: a.yaml_path.clone(),
            resource: a.resource.clone(),
            registration: a.registration,
        }
    }
}

/// The walk of a streamed scan: it calls its argument once per occurrence,
/// as files are read, and returns the rest of the report.
pub type Feed<'f> = &'f mut dyn FnMut(&str, &Occurrence);

/// `scan --format json`, written to `out` while the files are read: the
/// head, each occurrence as soon as `walk` feeds it, then the summary that
/// needs every file (compact, with a final newline). Returns the rest of
/// the report, or the walk's error (what was written stays written).
pub fn scan(
    out: &mut dyn std::io::Write,
    walk: impl FnOnce(Feed) -> anyhow::Result<ScanRest>,
) -> anyhow::Result<ScanRest> {
    let head =
        format!("{{\"schema_version\":{SCHEMA_VERSION},\"command\":\"scan\",\"occurrences\":[");
    out.write_all(head.as_bytes())?;
    let mut failed = None;
    let mut sep = "";
    let rest = walk(&mut |rel, o| {
        let written = out.write_all(sep.as_bytes()).map_err(serde_json::Error::io);
        if let Err(e) =
            written.and_then(|()| serde_json::to_writer(&mut *out, &OccurrenceJson::new(rel, o)))
        {
            failed.get_or_insert(e);
        }
        sep = ",";
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let tail = serde_json::to_string(&ScanTail::new(&rest))?;
    // The tail's fields continue the report's map: its own `{` is dropped.
    writeln!(out, "],{}", &tail[1..])?;
    Ok(rest)
}

#[derive(Debug, Serialize, Deserialize)]
pub struct FileJson<'a> {
    pub path: Str<'a>,
    pub change_count: usize,
    pub changes: Vec<OccurrenceJson<'a>>,
    /// The cluster name changes in the file (`kind: name`).
    #[serde(default)]
    pub name_changes: Vec<super::names::NameChangeJson>,
    /// The file's unified diff.
    pub diff: String,
}

/// A cluster registration the repository declares and the plan rebinds.
#[derive(Debug, Serialize, Deserialize)]
pub struct RegistrationJson<'a> {
    pub path: Str<'a>,
    pub line: usize,
    pub column: usize,
    pub resource: Str<'a>,
    /// What it reads the token and CA from.
    pub reads: Str<'a>,
}

/// `diff` and `apply`: the plan and what was done with it. Also read back:
/// `apply --expect-from-audit` reads a `diff` report through this type.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlanReport<'a> {
    pub schema_version: u32,
    pub command: Str<'a>,
    pub from: String,
    pub to: String,
    /// `pending` (diff), `applied`, `nothing_to_change`, `already_done`
    /// (the branch holds this change), `declined`.
    pub status: Str<'a>,
    pub file_count: usize,
    pub change_count: usize,
    pub files: Vec<FileJson<'a>>,
    /// Comments, text and template actions naming the old endpoint: not rewritten.
    pub mentions: Vec<OccurrenceJson<'a>>,
    /// Other files the run writes (the repo config), by path.
    pub also_written: Vec<Str<'a>>,
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
    /// After the merge: one row per resource of each rewritten file (which
    /// parent feeds it, from which revision, whether it deploys on merge).
    #[serde(default)]
    pub feeders: Vec<super::feeders::FeederJson>,
    /// The sync order a person follows after the merge.
    #[serde(default)]
    pub sync_order: Vec<super::feeders::StepJson>,
    /// Notes on the after-merge model (assumptions, waves without health,
    /// live differences).
    #[serde(default)]
    pub after_merge_notes: Vec<String>,
    /// `notes` and `after_merge_notes`, entry for entry, each with its
    /// stable `code` (docs/errors.md).
    #[serde(default)]
    pub warnings: Vec<super::codes::WarningJson>,
    /// The new cluster's identity, when the cutover's issuers are known
    /// (`--describe-from`/`--describe-to`): each role's trust coverage.
    #[serde(default)]
    pub identity: Option<super::identity::ReviewJson>,
    /// The pull request `apply --pr` opened or updated (`null` when not
    /// asked).
    #[serde(default)]
    pub pull_request: Option<PullRequestJson>,
    /// The cluster's name moved with its endpoint (`null` when the names
    /// are not known or are the same): changes, mentions, registry notes.
    #[serde(default)]
    pub names: Option<super::names::NamesJson>,
}

/// A pull (merge) request: its URL, its number, the client that made it
/// (`gh`, `glab`) and what was done (`opened`, `updated`).
#[derive(Debug, Serialize, Deserialize)]
pub struct PullRequestJson {
    pub url: String,
    pub number: Option<u64>,
    pub client: String,
    pub action: String,
}

impl PullRequestJson {
    pub fn new(pr: &crate::repo::pr::Opened) -> PullRequestJson {
        PullRequestJson {
            url: pr.url.clone(),
            number: pr.number,
            client: pr.client.program().to_string(),
            action: pr.action.to_string(),
        }
    }
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
            command: command.into(),
            from: plan.from.url(),
            to: plan.to.url(),
            status: status.into(),
            file_count: plan.endpoint_file_count(),
            change_count: plan.change_count(),
            files: manifests
                .iter()
                .map(|f| FileJson {
                    path: f.rel.as_str().into(),
                    change_count: f.changes.len(),
                    name_changes: super::names::in_file(plan, &f.rel)
                        .into_iter()
                        .map(super::names::NameChangeJson::new)
                        .collect(),
                    changes: f
                        .changes
                        .iter()
                        .map(|o| OccurrenceJson::new(&f.rel, o))
                        .collect(),
                    diff: crate::edit::diff::unified(f),
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
                .map(|f| f.rel.as_str().into())
                .collect(),
            registrations: plan
                .registrations
                .iter()
                .map(|r| RegistrationJson {
                    path: r.rel.as_str().into(),
                    line: r.line,
                    column: r.column,
                    resource: r.resource.as_str().into(),
                    reads: r.reads.as_str().into(),
                })
                .collect(),
            notes: super::text::notes(plan),
            warnings: plan_warnings(plan),
            skipped: skipped(skip),
            errors: errors(&plan.errors),
            written: false,
            branch: None,
            commit: None,
            pushed_to: None,
            feeders: plan
                .after_merge
                .as_ref()
                .map(super::feeders::json_rows)
                .unwrap_or_default(),
            sync_order: plan
                .after_merge
                .as_ref()
                .map(super::feeders::json_order)
                .unwrap_or_default(),
            after_merge_notes: plan
                .after_merge
                .as_ref()
                .map(|r| r.notes.iter().chain(&r.live).cloned().collect())
                .unwrap_or_default(),
            identity: plan.identity.as_ref().map(super::identity::ReviewJson::new),
            pull_request: None,
            names: plan
                .names
                .as_ref()
                .map(|n| super::names::NamesJson::new(plan, n)),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct FindingJson<'a> {
    pub path: Str<'a>,
    pub line: usize,
    pub column: usize,
    pub severity: &'static str,
    pub rule: &'static str,
    /// The rule's id: every finding's stable code.
    pub code: &'static str,
    pub message: Str<'a>,
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

impl<'a> CheckReport<'a> {
    pub fn new(findings: &[Finding<'a>], skip: &'a [Skipped]) -> CheckReport<'a> {
        let errors = findings
            .iter()
            .filter(|f| f.level == super::finding::Level::Error)
            .count();
        CheckReport {
            schema_version: SCHEMA_VERSION,
            command: "check",
            error_count: errors,
            warning_count: findings.len() - errors,
            findings: findings
                .iter()
                .map(|f| FindingJson {
                    path: f.path.clone(),
                    line: f.line,
                    column: f.column,
                    severity: f.level.as_str(),
                    rule: f.rule.id,
                    code: f.rule.id,
                    message: f.message.clone(),
                })
                .collect(),
            skipped: skipped(skip),
        }
    }
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
    /// `existing`, entry for entry, with its stable `code`.
    pub warnings: Vec<super::codes::WarningJson>,
}

/// The plan report's `notes` and `after_merge_notes`, coded.
fn plan_warnings(plan: &Plan) -> Vec<super::codes::WarningJson> {
    use super::codes::{self, coded, WarningJson};
    let mut out: Vec<WarningJson> = super::text::coded_notes(plan)
        .into_iter()
        .map(|(code, message)| WarningJson {
            code: code.id.to_string(),
            field: "notes".into(),
            message,
        })
        .collect();
    if let Some(r) = &plan.after_merge {
        out.extend(coded(
            codes::AFTER_MERGE_NOTE,
            "after_merge_notes",
            &r.notes,
        ));
        out.extend(coded(codes::LIVE_DIFFERENCE, "after_merge_notes", &r.live));
    }
    out
}

/// Serialises a report, pretty, with a final newline.
pub fn render<T: Serialize>(report: &T) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("reports serialise");
    s.push('\n');
    s
}
