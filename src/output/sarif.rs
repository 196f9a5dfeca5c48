//! SARIF 2.1.0 (`scan`, `diff`, `check` with `--format sarif`): one
//! `result` per [`Finding`], typed structs serialised with serde.
//!
//! Paths become `artifactLocation.uri` values that are URI references per
//! RFC 3986 (every byte outside the unreserved set, `/` and the
//! sub-delimiters percent-encoded, so a space, `#`, `?`, `%` or a non-ASCII
//! name cannot break them), relative to the base id `%SRCROOT%`, which
//! `originalUriBaseIds` maps to the current directory as a `file:` URI. An
//! absolute path is a `file:` URI of its own.

use super::finding::{Finding, Rule};
use serde::Serialize;
use std::collections::BTreeMap;

/// The base id every relative `artifactLocation.uri` is resolved against.
pub const SRCROOT: &str = "%SRCROOT%";

#[derive(Debug, Serialize)]
pub struct Log<'a> {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run<'a> {
    pub tool: Tool,
    pub original_uri_base_ids: BTreeMap<&'static str, BaseLocation>,
    pub column_kind: &'static str,
    /// Only for a run that failed: `executionSuccessful: false` and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub invocations: Vec<Invocation<'a>>,
    pub results: Vec<SarifResult<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invocation<'a> {
    pub execution_successful: bool,
    pub tool_execution_notifications: Vec<Notification<'a>>,
}

#[derive(Debug, Serialize)]
pub struct Notification<'a> {
    pub level: &'static str,
    pub message: Message<'a>,
}

#[derive(Debug, Serialize)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Driver {
    pub name: &'static str,
    pub version: &'static str,
    pub rules: Vec<ReportingDescriptor>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportingDescriptor {
    pub id: &'static str,
    pub short_description: Message<'static>,
}

#[derive(Debug, Serialize)]
pub struct Message<'a> {
    pub text: &'a str,
}

/// An `originalUriBaseIds` entry: where `%SRCROOT%` is.
#[derive(Debug, Serialize)]
pub struct BaseLocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    pub description: OwnedMessage,
}

#[derive(Debug, Serialize)]
pub struct OwnedMessage {
    pub text: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult<'a> {
    pub rule_id: &'static str,
    pub rule_index: usize,
    pub level: &'static str,
    pub message: Message<'a>,
    pub locations: Vec<Location>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactLocation {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri_base_id: Option<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    pub start_column: usize,
}

/// Percent-encodes `path` as the path of a URI reference (RFC 3986 section
/// 3.3): unreserved characters, `/` and the sub-delimiters stay, `:` and
/// `@` too except where a relative reference would read them as a scheme
/// (`:` is always encoded), every other byte of the UTF-8 becomes `%XX`.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where a path is, as SARIF says it: relative to `%SRCROOT%`, or a
/// `file:` URI when the path is absolute.
pub fn artifact(path: &str) -> ArtifactLocation {
    if path.starts_with('/') {
        ArtifactLocation {
            uri: format!("file://{}", encode_path(path)),
            uri_base_id: None,
        }
    } else {
        ArtifactLocation {
            uri: encode_path(path),
            uri_base_id: Some(SRCROOT),
        }
    }
}

/// `%SRCROOT%`: the directory rebind ran in, as an absolute `file:` URI
/// ending in `/` (left out when the current directory cannot be read).
fn srcroot() -> BaseLocation {
    let uri = std::env::current_dir().ok().and_then(|d| {
        let d = d.to_str()?.to_string();
        let mut uri = format!("file://{}", encode_path(&d));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        Some(uri)
    });
    BaseLocation {
        uri,
        description: OwnedMessage {
            text: "The directory rebind ran in; relative paths are shown relative to it.".into(),
        },
    }
}

/// The SARIF log for `findings`; `rules` lists every rule the command can
/// report (each finding's rule must be among them).
pub fn log<'a>(findings: &'a [Finding<'a>], rules: &[Rule]) -> Log<'a> {
    let results = findings
        .iter()
        .map(|f| SarifResult {
            rule_id: f.rule.id,
            rule_index: rules
                .iter()
                .position(|r| r.id == f.rule.id)
                .expect("every finding's rule is listed"),
            level: f.level.as_str(),
            message: Message { text: &f.message },
            locations: vec![Location {
                physical_location: PhysicalLocation {
                    artifact_location: artifact(&f.path),
                    region: Region {
                        start_line: f.line,
                        start_column: f.column,
                    },
                },
            }],
        })
        .collect();
    Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "rebind",
                    version: env!("CARGO_PKG_VERSION"),
                    rules: rules
                        .iter()
                        .map(|r| ReportingDescriptor {
                            id: r.id,
                            short_description: Message {
                                text: r.description,
                            },
                        })
                        .collect(),
                },
            },
            original_uri_base_ids: BTreeMap::from([(SRCROOT, srcroot())]),
            column_kind: "unicodeCodePoints",
            invocations: Vec::new(),
            results,
        }],
    }
}

/// The log of a run that failed: its errors at places in files as results,
/// and the failure as a tool execution notification.
pub fn render_failure(located: &[Finding], message: &str) -> String {
    let mut rules: Vec<Rule> = Vec::new();
    for f in located {
        if !rules.contains(&f.rule) {
            rules.push(f.rule);
        }
    }
    let mut log = log(located, &rules);
    log.runs[0].invocations.push(Invocation {
        execution_successful: false,
        tool_execution_notifications: vec![Notification {
            level: "error",
            message: Message { text: message },
        }],
    });
    super::json::render(&log)
}

/// The log, pretty, with a final newline.
pub fn render(findings: &[Finding], rules: &[Rule]) -> String {
    super::json::render(&log(findings, rules))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        for (path, uri, base) in [
            ("apps/argocd.yaml", "apps/argocd.yaml", Some(SRCROOT)),
            ("my apps/#1.yaml", "my%20apps/%231.yaml", Some(SRCROOT)),
            ("a%b?c.yaml", "a%25b%3Fc.yaml", Some(SRCROOT)),
            ("c:x.yaml", "c%3Ax.yaml", Some(SRCROOT)),
            ("../up/x.yaml", "../up/x.yaml", Some(SRCROOT)),
            (
                "클러스터/x.yaml",
                "%ED%81%B4%EB%9F%AC%EC%8A%A4%ED%84%B0/x.yaml",
                Some(SRCROOT),
            ),
            ("/tmp/a b.yaml", "file:///tmp/a%20b.yaml", None),
            ("a\\b[1].yaml", "a%5Cb%5B1%5D.yaml", Some(SRCROOT)),
        ] {
            assert_eq!(
                artifact(path),
                ArtifactLocation {
                    uri: uri.to_string(),
                    uri_base_id: base
                },
                "{path}"
            );
        }
    }
}
