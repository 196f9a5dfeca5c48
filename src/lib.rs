//! rebind finds the Kubernetes API endpoints hard-coded in a GitOps repository
//! and swaps one for another, changing nothing but the endpoint's bytes.
//!
//! The library is the pipeline; data flows one way:
//!
//! 1. [`walk`] discovers files (and [`config`] says which, from `.rebind.yaml`);
//! 2. [`locate`] finds occurrences in each, reading YAML through [`yaml`]
//!    (and valid JSON the YAML parser refuses through [`jsonfile`]) and
//!    asking [`positions`] which paths hold a cluster ([`endpoint`] has the
//!    text rules for URLs and hosts); [`inventory`] / [`each_source`] run
//!    this on every core;
//! 3. [`cutover`] resolves a rebind request (which endpoint, which cluster,
//!    the expected counts) and [`rewrite`] plans and verifies the edits;
//! 4. [`diff`], [`summary`] and [`output`] render them;
//! 5. [`write`] puts them on disk atomically, [`git`] commits them on a branch;
//!    [`secret`] renders the cluster registration, [`check`] audits a tree
//!    against the config.
//!
//! The command line (the `rebind` binary's `cli` module) only turns flags
//! into these calls.

pub mod check;
pub mod config;
pub mod cutover;
pub mod diff;
pub mod embedded;
pub mod endpoint;
pub mod git;
pub mod json;
pub mod jsonfile;
pub mod locate;
pub mod output;
pub mod positions;
pub mod rewrite;
pub mod secret;
pub mod summary;
pub mod walk;
pub mod write;
pub mod yaml;

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

/// What one file contributed, as [`each_source`] hands it over.
pub enum Item {
    Source(Box<Source>),
    Skipped(Skipped),
}

/// Reads and locates every discovered file, keeping everything (what a
/// rebind needs: every file is planned and verified before the first write).
///
/// `hosts` are the lower-case `--from` hosts (found anywhere, bare hosts too).
/// With `only_hosts`, files that do not contain one of them are not parsed at
/// all (the fast path of `diff`/`apply`); otherwise YAML files are parsed for
/// the tier table even when they hold no URL.
pub fn inventory(walk: Walk, hosts: &[String], only_hosts: bool) -> Result<Inventory> {
    let mut inv = Inventory::default();
    each_source(walk, hosts, only_hosts, |f| match f {
        Item::Source(s) => inv.sources.push(*s),
        Item::Skipped(s) => inv.skipped.push(s),
    })?;
    inv.skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(inv)
}

/// Reads and locates every discovered file on every core, handing each
/// result to `sink` in the walk's order as soon as it and every file before
/// it are done: a scan streams, and holds only the files in flight.
/// The walk's own skipped files come first.
pub fn each_source(
    walk: Walk,
    hosts: &[String],
    only_hosts: bool,
    mut sink: impl FnMut(Item),
) -> Result<()> {
    let hosts_lower: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    for s in walk.skipped {
        sink(Item::Skipped(s));
    }
    let entries = walk.entries;
    let n = entries.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, n.max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Bounded: workers wait when the consumer falls behind.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<Outcome>)>(threads * 64);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads {
            let tx = tx.clone();
            let (entries, next, hosts) = (&entries, &next, &hosts_lower);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    break;
                }
                if tx
                    .send((i, process(&entries[i], hosts, only_hosts)))
                    .is_err()
                {
                    break;
                }
            });
        }
        drop(tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut want = 0;
        for (i, r) in rx.iter() {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&want) {
                want += 1;
                match r {
                    Ok(Outcome::Source(s)) => sink(Item::Source(s)),
                    Ok(Outcome::Skipped(s)) => sink(Item::Skipped(s)),
                    Ok(Outcome::Nothing) => {}
                    Err(e) => {
                        // Stop the workers; the scope joins them.
                        next.store(n, std::sync::atomic::Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    })
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

/// `text` with the escapes of double-quoted YAML and JSON strings read
/// (`\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\/`, and an escaped line break with the
/// indentation after it dropped), everywhere: a loose prefilter, so that a
/// file hiding an endpoint behind escapes is parsed, where `locate` reads
/// every scalar exactly.
fn unescaped(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            let ch = text[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let hex = |n: usize| {
            text.get(i + 2..i + 2 + n)
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32)
        };
        let (decoded, len) = match b.get(i + 1) {
            Some(b'x') => (hex(2), 4),
            Some(b'u') => (hex(4), 6),
            Some(b'U') => (hex(8), 10),
            Some(b'/') => (Some('/'), 2),
            Some(b'\n' | b'\r') => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                i = j;
                continue;
            }
            _ => (None, 1),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                i += len;
            }
            None => {
                out.push('\\');
                i += 1;
            }
        }
    }
    out
}

/// A YAML-role file the YAML parser refused: valid JSON (a surrogate-pair
/// escape, as Python's `json.dump` writes) is read as JSON; otherwise the
/// YAML error stands, with JSON's reason added for a `.json` file.
fn json_fallback(
    rel: &str,
    text: &str,
    hosts: &[String],
    only_hosts: bool,
    mut yaml_error: ParseError,
) -> Result<Located, ParseError> {
    jsonfile::locate(text, hosts, only_hosts).map_err(|e| {
        if rel.to_ascii_lowercase().ends_with(".json") {
            yaml_error.message = format!(
                "{}; nor valid JSON: {}:{}: {}",
                yaml_error.message, e.line, e.column, e.message
            );
        }
        yaml_error
    })
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
        // "ahr0chm6ly" is base64 "https://" lower-cased: a `data.server` value.
        let base64 = lower.contains("ahr0chm6ly");
        if only_hosts {
            base64 || hosts.iter().any(|h| lower.contains(h.as_str()))
        } else {
            base64 || endpoint::may_hold(lower, hosts)
        }
    };
    let skip = |reason: String, may_hold: bool| {
        Ok(Outcome::Skipped(Skipped {
            rel: entry.rel.clone(),
            reason,
            may_hold,
        }))
    };
    let skipped = |reason: String| skip(reason, false);
    match walk::read(entry) {
        Content::Unreadable(reason) => skip(reason, true),
        Content::Decoded { text, encoding } => {
            if entry.role == Role::Yaml {
                let lower = text.to_ascii_lowercase();
                let holding = holds(&lower) || (lower.contains('\\') && holds(&unescaped(&lower)));
                let what = if holding {
                    ", holding endpoint text"
                } else {
                    ""
                };
                return skip(
                    format!(
                        "{encoding} (byte order mark){what}; YAML is parsed as UTF-8 only: not parsed, not rewritten"
                    ),
                    holding,
                );
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
            let holding = holds(&lower);
            if entry.role == Role::Yaml || holding {
                let what = if holding {
                    ", holding endpoint text"
                } else {
                    ""
                };
                return skip(
                    format!(
                        "not UTF-8 (first invalid byte on line {line}){what}; not parsed, not rewritten"
                    ),
                    holding && entry.role == Role::Yaml,
                );
            }
            Ok(Outcome::Nothing)
        }
        Content::Text(text) => {
            // The lower-case copy is dropped before parsing: big files count.
            let (has, destination) = {
                let lower = text.to_ascii_lowercase();
                // An endpoint behind escapes (`\x2e` in a host) is found by
                // reading the escapes, not by the raw bytes.
                let has = holds(&lower)
                    || (entry.role == Role::Yaml
                        && lower.contains('\\')
                        && holds(&unescaped(&lower)));
                (has, !only_hosts && lower.contains("destination"))
            };
            let located = match entry.role {
                Role::Yaml if has || destination => locate::locate_yaml(&text, hosts, only_hosts)
                    .or_else(|e| json_fallback(&entry.rel, &text, hosts, only_hosts, e)),
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
