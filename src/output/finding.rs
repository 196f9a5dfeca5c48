//! The report model every format renders: one [`Finding`] (a place, a
//! level, a rule, a message), the rules, the JSON schema version, and the
//! Markdown helpers the text renderings share. A leaf: the renderings
//! (`text`, `json`, `sarif`, `github`, ...) import it, and `output`'s root
//! re-exports it.

use std::borrow::Cow;

/// The JSON reports' schema version; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// How much a [`Finding`] matters: SARIF's `level`, GitHub's command name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Fails the run (`check`), or a change the cutover will make (`diff`).
    Error,
    /// Worth a look; does not fail the run.
    Warning,
    /// Information (a `scan` occurrence).
    Note,
}

impl Level {
    /// SARIF's `level` value; also JSON's `severity`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// A rule a [`Finding`] reports under: its id and a one-line description
/// (SARIF's `reportingDescriptor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub description: &'static str,
}

/// One reported thing at a place in a file, as every format shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<'a> {
    /// The file, as rebind shows paths (relative to the current directory
    /// where that reads better).
    pub path: Cow<'a, str>,
    pub line: usize,
    pub column: usize,
    pub level: Level,
    pub rule: Rule,
    pub message: Cow<'a, str>,
    /// The command (or step) that fixes it, when one does.
    pub fix: Option<String>,
}

pub mod rules {
    //! Every rule a [`super::Finding`] can carry.
    use super::Rule;

    pub const RETIRED: Rule = Rule {
        id: crate::output::codes::RETIRED.id,
        description: "A retired endpoint of a cluster declared in .rebind.yaml is committed.",
    };
    pub const ROLLBACK_REGISTRATION: Rule = Rule {
        id: crate::output::codes::ROLLBACK_REGISTRATION.id,
        description: "A cluster registration of a retired endpoint (the rollback target a cutover keeps) is committed; an error once the endpoint is declared torn down.",
    };
    pub const RETIRED_ISSUER: Rule = Rule {
        id: crate::output::codes::RETIRED_ISSUER.id,
        description:
            "A retired OIDC issuer of a cluster declared in .rebind.yaml is still trusted or named.",
    };
    pub const UNKNOWN: Rule = Rule {
        id: crate::output::codes::UNKNOWN.id,
        description: "A workload endpoint at a cluster position is not declared by any cluster in .rebind.yaml.",
    };
    pub const UNREAD: Rule = Rule {
        id: crate::output::codes::UNREAD_FILE.id,
        description: "A file that may hold an endpoint could not be read (no access, vanished, or not UTF-8).",
    };
    pub const UNCOMMITTED: Rule = Rule {
        id: crate::output::codes::UNCOMMITTED.id,
        description: "A tracked file's committed content holds a retired endpoint that its work-tree copy (deleted or edited without a commit) does not.",
    };
    pub const PENDING: Rule = Rule {
        id: crate::output::codes::PENDING.id,
        description: "A value holds the old endpoint: the rebind rewrites it.",
    };
    pub const MENTION: Rule = Rule {
        id: crate::output::codes::MENTION.id,
        description: "A comment, text file or template action names the old endpoint: reported, never rewritten.",
    };
    pub const UNSAFE: Rule = Rule {
        id: crate::output::codes::CANNOT_REWRITE.id,
        description: "A file holds the old endpoint but cannot be rewritten safely (it does not parse, or the rewrite would change its meaning).",
    };
    pub const UNPARSED: Rule = Rule {
        id: crate::output::codes::UNPARSED.id,
        description:
            "A YAML file holds an endpoint but does not parse: its endpoints are listed as text.",
    };
    pub const ENDPOINT: Rule = Rule {
        id: "endpoint",
        description: "A Kubernetes API endpoint in a YAML or JSON value.",
    };
    pub const ENDPOINT_MENTION: Rule = Rule {
        id: "endpoint-mention",
        description: "A Kubernetes API endpoint in a comment, text file or template action.",
    };
}

impl<'a> Finding<'a> {
    /// A file that cannot be rewritten (or, in `scan`, parsed).
    pub fn from_error(e: &'a crate::edit::rewrite::PlanError) -> Finding<'a> {
        Finding {
            path: Cow::Borrowed(&e.rel),
            line: e.line,
            column: e.column,
            level: Level::Error,
            rule: rules::UNSAFE,
            message: Cow::Borrowed(&e.message),
            fix: None,
        }
    }

    /// A file `scan` could not parse (its endpoints are listed as text).
    pub fn unparsed(e: &'a crate::edit::rewrite::PlanError) -> Finding<'a> {
        Finding {
            rule: rules::UNPARSED,
            ..Finding::from_error(e)
        }
    }

    /// A `scan` occurrence: a note, since scan only lists.
    pub fn from_occurrence(path: &'a str, o: &crate::find::locate::Occurrence) -> Finding<'a> {
        let mut message = format!(
            "{} {}",
            o.kind.as_str(),
            crate::text::endpoint::redact(&o.endpoint)
        );
        if let Some(p) = &o.yaml_path {
            message.push_str(&format!(" at {p}"));
        }
        if let Some(v) = &o.via {
            message.push_str(&format!(" via {v}"));
        }
        if let Some(r) = &o.resource {
            message.push_str(&format!(" ({r})"));
        }
        Finding {
            path: Cow::Borrowed(path),
            line: o.line,
            column: o.column,
            level: Level::Note,
            rule: if o.kind == crate::find::locate::Kind::Value {
                rules::ENDPOINT
            } else {
                rules::ENDPOINT_MENTION
            },
            message: Cow::Owned(message),
            fix: None,
        }
    }

    /// Every line a plan touches (its changes, as errors: each is a line the
    /// cutover will rewrite), then its mentions (warnings), then the files it
    /// cannot rewrite.
    pub fn from_plan(plan: &'a crate::review::plan::Plan) -> Vec<Finding<'a>> {
        let from = plan.from.url();
        let to = plan.to.url();
        let mut out = Vec::new();
        for f in &plan.files {
            for o in &f.changes {
                out.push(Finding {
                    path: Cow::Borrowed(&f.rel),
                    line: o.line,
                    column: o.column,
                    level: Level::Error,
                    rule: rules::PENDING,
                    message: Cow::Owned(format!(
                        "{from} is still here ({}); rebind it with: rebind apply --from {from} --to {to}",
                        o.yaml_path.as_deref().unwrap_or("value"),
                    )),
                    fix: None,
                });
            }
        }
        for m in &plan.mentions {
            let o = &m.occurrence;
            out.push(Finding {
                path: Cow::Borrowed(&m.rel),
                line: o.line,
                column: o.column,
                level: Level::Warning,
                rule: rules::MENTION,
                message: Cow::Owned(format!(
                    "{from} is mentioned in a {} (not rewritten)",
                    o.kind.as_str()
                )),
                fix: None,
            });
        }
        for c in plan.names.iter().flat_map(|n| &n.changes) {
            out.push(Finding {
                path: Cow::Borrowed(&c.rel),
                line: c.change.line,
                column: c.change.column,
                level: Level::Error,
                rule: rules::PENDING,
                message: Cow::Owned(format!(
                    "cluster name {} is still here ({}, {}); rebind it with --describe-from/--describe-to",
                    c.change.old_text,
                    c.change.position.as_str(),
                    c.change.yaml_path
                )),
                fix: None,
            });
        }
        out.extend(plan.errors.iter().map(Finding::from_error));
        out
    }
}

/// The longest run of backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `s` as a Markdown code span that nothing in it can end early: delimited
/// by more backticks than any run in it (padded with a space where it
/// starts or ends with one), with `|` escaped so a table cell holds it.
pub fn md_code(s: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", s.replace('|', "\\|"))
}

/// `body` as a fenced Markdown code block (`info`: its language) that no
/// line of the body can close: the fence is longer than any backtick run
/// in it.
pub fn md_fence(info: &str, body: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(body) + 1).max(3));
    let nl = if body.is_empty() || body.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{fence}{info}\n{body}{nl}{fence}\n")
}
