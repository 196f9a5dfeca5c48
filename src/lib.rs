//! rebind finds the Kubernetes API endpoints hard-coded in a GitOps repository
//! and swaps one for another, changing nothing but the endpoint's bytes.
//!
//! Data flows one way:
//! [`walk`] discovers files → [`locate`] finds occurrences (with [`endpoint`]'s
//! text rules) → [`rewrite`] plans and verifies the edits → [`diff`] and
//! [`report`] render them → [`write`] puts them on disk atomically.
//! [`cli`] ties the steps to the command line.

pub mod check;
pub mod cli;
pub mod config;
pub mod diff;
pub mod endpoint;
pub mod git;
pub mod locate;
pub mod report;
pub mod rewrite;
pub mod secret;
pub mod walk;
pub mod write;

use anyhow::Result;
use locate::{Located, ParseError};
use walk::{Content, Entry, Role, Skipped, Walk};

/// One file that holds endpoint text (or, for YAML, destinations for the tier table).
#[derive(Debug)]
pub struct Source {
    pub entry: Entry,
    /// Shared with the plans made from it, so a big file is held once.
    pub text: std::sync::Arc<str>,
    pub located: Result<Located, ParseError>,
}

impl Source {
    /// The occurrences found, whether or not the file parsed.
    pub fn occurrences(&self) -> &[locate::Occurrence] {
        match &self.located {
            Ok(l) => &l.occurrences,
            Err(e) => &e.occurrences,
        }
    }
}

/// Everything found under the walked paths.
#[derive(Debug, Default)]
pub struct Inventory {
    pub sources: Vec<Source>,
    pub skipped: Vec<Skipped>,
}

/// Reads and locates every discovered file.
///
/// `hosts` are the lower-case `--from` hosts (found anywhere, bare hosts too).
/// With `only_hosts`, files that do not contain one of them are not parsed at
/// all (the fast path of `diff`/`apply`); otherwise YAML files are parsed for
/// the tier table even when they hold no URL.
pub fn inventory(walk: Walk, hosts: &[String], only_hosts: bool) -> Result<Inventory> {
    let mut inv = Inventory {
        sources: Vec::new(),
        skipped: walk.skipped,
    };
    let hosts_lower: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    let holds = |lower: &str| {
        if only_hosts {
            hosts_lower.iter().any(|h| lower.contains(h.as_str()))
        } else {
            endpoint::may_hold(lower, &hosts_lower)
        }
    };
    for entry in walk.entries {
        match walk::read(&entry)? {
            Content::Binary(bytes) => {
                if holds(&String::from_utf8_lossy(&bytes).to_ascii_lowercase()) {
                    inv.skipped.push(Skipped {
                        rel: entry.rel,
                        reason: "binary file holding endpoint text; not read, not rewritten".into(),
                    });
                }
            }
            Content::NotUtf8 { bytes, line } => {
                let lower = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
                if entry.role == Role::Yaml || holds(&lower) {
                    inv.skipped.push(Skipped {
                        rel: entry.rel,
                        reason: format!(
                            "not UTF-8 (first invalid byte on line {line}); not parsed, not rewritten"
                        ),
                    });
                }
            }
            Content::Text(text) => {
                // The lower-case copy is dropped before parsing: big files count.
                let (has, destination) = {
                    let lower = text.to_ascii_lowercase();
                    (holds(&lower), !only_hosts && lower.contains("destination"))
                };
                let located = match entry.role {
                    Role::Yaml if has || destination => {
                        locate::locate_yaml(&text, hosts, only_hosts)
                    }
                    Role::Text if has => Ok(locate::locate_text(&text, hosts)),
                    _ => continue,
                };
                let keep = match &located {
                    Ok(l) => !l.occurrences.is_empty() || !l.destinations.is_empty(),
                    Err(e) => !e.occurrences.is_empty(),
                };
                if keep {
                    inv.sources.push(Source {
                        entry,
                        text: text.into(),
                        located,
                    });
                }
            }
        }
    }
    Ok(inv)
}
