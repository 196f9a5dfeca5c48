//! The config audit's findings (`check`), before they join the shared
//! [`super::finding::Finding`] model.

use crate::find::locate::Occurrence;

/// Whether a finding fails the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// Which rule a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A retired endpoint of a declared cluster.
    Retired,
    /// A workload endpoint at a cluster position that no cluster declares.
    Unknown,
    /// A file that may hold an endpoint could not be read (no access,
    /// vanished, or YAML in an encoding other than UTF-8).
    Unread,
    /// A retired OIDC issuer of a declared cluster (a trust the old,
    /// torn-down cluster needed).
    RetiredIssuer,
}

impl Rule {
    pub fn id(self) -> &'static str {
        match self {
            Rule::Retired => "retired-endpoint",
            Rule::Unknown => "unknown-endpoint",
            Rule::Unread => "unread-file",
            Rule::RetiredIssuer => "retired-oidc-issuer",
        }
    }
}

/// One finding, at a place in a file.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    pub severity: Severity,
    pub rule: Rule,
    pub message: String,
    /// The command (or step) that fixes it.
    pub fix: Option<String>,
}

pub fn finding(
    rel: &str,
    o: &Occurrence,
    severity: Severity,
    rule: Rule,
    message: String,
) -> Finding {
    Finding {
        rel: rel.to_string(),
        line: o.line,
        column: o.column,
        severity,
        rule,
        message,
        fix: None,
    }
}
