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
    let hosts_lower: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    let entries = walk.entries;
    // Files are read and located on every core; results keep the walk's order.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results = par_map(entries.len(), cores, |i| {
        process(&entries[i], &hosts_lower, only_hosts)
    });
    let mut inv = Inventory {
        sources: Vec::new(),
        skipped: walk.skipped,
    };
    for r in results {
        match r? {
            Outcome::Source(s) => inv.sources.push(*s),
            Outcome::Skipped(s) => inv.skipped.push(s),
            Outcome::Nothing => {}
        }
    }
    inv.skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(inv)
}

/// Runs `job(0)..job(n - 1)` on up to `threads` threads; results in order.
pub(crate) fn par_map<T: Send>(
    n: usize,
    threads: usize,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break done;
                        }
                        done.push((i, job(i)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

/// What one file contributes to the inventory.
enum Outcome {
    Source(Box<Source>),
    Skipped(Skipped),
    Nothing,
}

/// Reads, classifies and locates one file. The text is kept only with
/// `only_hosts` (a rebind needs it; a scan or check does not).
fn process(entry: &Entry, hosts: &[String], only_hosts: bool) -> Result<Outcome> {
    let holds = |lower: &str| {
        if only_hosts {
            hosts.iter().any(|h| lower.contains(h.as_str()))
        } else {
            endpoint::may_hold(lower, hosts)
        }
    };
    let skipped = |reason: String| {
        Ok(Outcome::Skipped(Skipped {
            rel: entry.rel.clone(),
            reason,
        }))
    };
    match walk::read(entry) {
        Content::Unreadable(reason) => skipped(reason),
        Content::Decoded { text, encoding } => {
            if entry.role == Role::Yaml {
                return skipped(format!(
                    "{encoding} (byte order mark); YAML is parsed as UTF-8 only: not parsed, not rewritten"
                ));
            }
            if !holds(&text.to_ascii_lowercase()) {
                return Ok(Outcome::Nothing);
            }
            Ok(Outcome::Source(Box::new(Source {
                entry: entry.clone(),
                located: Ok(locate::locate_text(&text, hosts)),
                text: if only_hosts { text.into() } else { "".into() },
            })))
        }
        Content::Binary(bytes) => {
            if holds(&String::from_utf8_lossy(&bytes).to_ascii_lowercase()) {
                return skipped(
                    "binary file holding endpoint text; not read, not rewritten".into(),
                );
            }
            Ok(Outcome::Nothing)
        }
        Content::NotUtf8 { bytes, line } => {
            let lower = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
            if entry.role == Role::Yaml || holds(&lower) {
                return skipped(format!(
                    "not UTF-8 (first invalid byte on line {line}); not parsed, not rewritten"
                ));
            }
            Ok(Outcome::Nothing)
        }
        Content::Text(text) => {
            // The lower-case copy is dropped before parsing: big files count.
            let (has, destination) = {
                let lower = text.to_ascii_lowercase();
                (holds(&lower), !only_hosts && lower.contains("destination"))
            };
            let located = match entry.role {
                Role::Yaml if has || destination => locate::locate_yaml(&text, hosts, only_hosts),
                Role::Text if has => Ok(locate::locate_text(&text, hosts)),
                _ => return Ok(Outcome::Nothing),
            };
            let keep = match &located {
                Ok(l) => !l.occurrences.is_empty() || !l.destinations.is_empty(),
                Err(e) => !e.occurrences.is_empty(),
            };
            if !keep {
                return Ok(Outcome::Nothing);
            }
            Ok(Outcome::Source(Box::new(Source {
                entry: entry.clone(),
                text: if only_hosts { text.into() } else { "".into() },
                located,
            })))
        }
    }
}
