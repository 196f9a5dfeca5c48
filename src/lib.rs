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
//! Each command is resolved once and run by one entry point taking plain
//! options: [`apply::run`] and [`apply::diff`], [`scan::run`],
//! [`check::run`], [`identity::run`], [`init::run`],
//! [`feeders::command::run`], [`secret::command::run`]. The command line
//! (the `rebind` binary's `cli` module) only maps flags to those options.

pub mod apply;
pub mod base64;
pub mod check;
pub mod config;
pub mod cutover;
pub mod diff;
pub mod embedded;
pub mod endpoint;
pub mod feeders;
pub mod git;
pub mod identity;
pub mod init;
pub mod json;
pub mod jsonfile;
pub mod locate;
pub mod oidc;
pub mod output;
pub mod positions;
pub mod pr;
pub mod quote;
pub mod rewrite;
pub mod scan;
pub mod secret;
pub mod signals;
pub mod summary;
pub mod templates;
pub mod trust;
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
    /// How many files were read.
    pub files: usize,
}

/// What one file contributed, as [`each_source`] hands it over.
pub enum Item {
    Source(Box<Source>),
    Skipped(Skipped),
    /// A chart template action at a cluster position that was not followed
    /// (handed over first, before any file).
    Note(templates::Note),
}

/// Reads and locates every discovered file, keeping everything (what a
/// rebind needs: every file is planned and verified before the first write).
///
/// `hosts` are the lower-case `--from` hosts (found anywhere, bare hosts too).
/// With `only_hosts`, files that do not contain one of them are not parsed at
/// all (the fast path of `diff`/`apply`); otherwise YAML files are parsed for
/// the tier table even when they hold no URL.
pub fn inventory(walk: &Walk, hosts: &[String], only_hosts: bool) -> Result<Inventory> {
    let mut inv = Inventory::default();
    let want = locate::Want {
        only: only_hosts,
        names: false,
    };
    inv.files = each_source(walk, hosts, want, |f| match f {
        Item::Source(s) => inv.sources.push(*s),
        Item::Skipped(s) => inv.skipped.push(s),
        Item::Note(_) => {}
    })?;
    // The walk's order is the tree's; a rebind's and an audit's reports list
    // files by the names shown, byte-wise (as `git diff` does).
    inv.sources.sort_by(|a, b| a.entry.rel.cmp(&b.entry.rel));
    inv.skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(inv)
}

/// Walks, reads and locates every file on every core, handing each result
/// to `sink` in the walk's order as soon as it and everything before it are
/// done. Nothing is listed up front and a result is dropped once `sink` has
/// it: memory holds the files in flight, whatever the size of the tree.
/// Returns how many files were read.
pub fn each_source(
    walk: &Walk,
    hosts: &[String],
    want: locate::Want,
    mut sink: impl FnMut(Item),
) -> Result<usize> {
    let only_hosts = want.only;
    // Chart templates are followed before the walk (a rebind, which looks
    // for its hosts anywhere, needs no extra positions).
    let followed = if only_hosts {
        templates::Followed::default()
    } else {
        templates::follow(walk)
    };
    for n in &followed.notes {
        sink(Item::Note(n.clone()));
    }
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// Items taken from the walk at once: one message per batch keeps the
    /// hand-over cost (a wake-up per message) off the per-file path.
    const BATCH: usize = 64;
    let hosts_lower: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    let prefilter = endpoint::Prefilter::new(&hosts_lower, only_hosts);
    let threads = cores();
    // The walk is pulled under a lock, a batch at a time, by whichever
    // worker is free; batches are numbered so results keep the walk's order.
    // No batch is taken more than `WINDOW` ahead of the oldest one not yet
    // handed to the sink: a slow file (a big one first) holds the others
    // back instead of letting finished results pile up behind it.
    let window = threads * 4;
    let feed = std::sync::Mutex::new(Feed {
        files: walk.files(),
        next: 0,
        released: 0,
    });
    let moved = std::sync::Condvar::new();
    let (files, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    // Bounded: workers wait when the consumer falls behind.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<Result<Outcome>>)>(threads * 4);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads {
            let tx = tx.clone();
            let (feed, moved, files, stop, hosts) = (&feed, &moved, &files, &stop, &hosts_lower);
            let (prefilter, followed) = (&prefilter, &followed);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let (n, batch) = {
                    let mut f = feed.lock().unwrap_or_else(|p| p.into_inner());
                    while f.next >= f.released + window && !stop.load(Ordering::Relaxed) {
                        f = moved.wait(f).unwrap_or_else(|p| p.into_inner());
                    }
                    let batch: Vec<walk::Found> = f.files.by_ref().take(BATCH).collect();
                    f.next += 1;
                    (f.next - 1, batch)
                };
                if batch.is_empty() {
                    break;
                }
                let mut done = Vec::new();
                for found in batch {
                    let outcome = match found {
                        walk::Found::Skipped(s) => Ok(Outcome::Skipped(s)),
                        walk::Found::Entry(e) => {
                            files.fetch_add(1, Ordering::Relaxed);
                            process(e, hosts, want, prefilter, followed)
                        }
                    };
                    let failed = outcome.is_err();
                    if !matches!(outcome, Ok(Outcome::Nothing)) {
                        done.push(outcome);
                    }
                    if failed {
                        break;
                    }
                }
                if tx.send((n, done)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut want = 0;
        while let Ok((n, batch)) = rx.recv() {
            waiting.insert(n, batch);
            while let Some(batch) = waiting.remove(&want) {
                want += 1;
                feed.lock().unwrap_or_else(|p| p.into_inner()).released = want;
                moved.notify_all();
                for r in batch {
                    match r {
                        Ok(Outcome::Source(s)) => sink(Item::Source(s)),
                        Ok(Outcome::Skipped(s)) => sink(Item::Skipped(s)),
                        Ok(Outcome::Nothing) => {}
                        Err(e) => {
                            // Stop the workers (the receiver goes with this
                            // closure, so none waits on a full channel); the
                            // scope joins them.
                            stop.store(true, Ordering::Relaxed);
                            moved.notify_all();
                            drop(rx);
                            return Err(e);
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(files.into_inner())
}

/// The walk as [`each_source`]'s workers share it.
struct Feed<'w> {
    files: walk::Files<'w>,
    /// The number of the next batch to take.
    next: usize,
    /// Batches before this one have been handed to the sink.
    released: usize,
}

/// How many threads CPU-bound work runs on: one per core.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
    want: locate::Want,
    mut yaml_error: ParseError,
) -> Result<Located, ParseError> {
    jsonfile::locate_for(text, hosts, want).map_err(|e| {
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
fn process(
    mut entry: Entry,
    hosts: &[String],
    want: locate::Want,
    prefilter: &endpoint::Prefilter,
    followed: &templates::Followed,
) -> Result<Outcome> {
    let only_hosts = want.only;
    // A kubeconfig without a YAML extension is a manifest all the same.
    let kubeconfig_by_name = entry.role == Role::Text && walk::kubeconfig_name(&entry.path);
    if kubeconfig_by_name {
        entry.role = Role::Yaml;
    }
    let holds = |bytes: &[u8]| prefilter.scan(bytes).0;
    // An endpoint behind escapes (`\x2e` in a host) is found by reading the
    // escapes, not by the raw bytes.
    let holds_escaped = |text: &str| {
        memchr::memchr(b'\\', text.as_bytes()).is_some() && holds(unescaped(text).as_bytes())
    };
    // ... or behind base64 (a Secret's `data`), by reading it decoded.
    let holds_encoded = |text: &str| crate::embedded::holds_encoded(text, holds);
    let yaml = entry.role == Role::Yaml;
    // The first look at a text: (holds endpoint text, names a destination).
    let look = |text: &str| {
        let (has, destination) = prefilter.scan(text.as_bytes());
        let hidden = yaml && (holds_escaped(text) || holds_encoded(text));
        (has || hidden, destination)
    };
    let skip = |reason: String, may_hold: bool| {
        Ok(Outcome::Skipped(Skipped {
            rel: entry.rel.clone(),
            reason,
            may_hold,
        }))
    };
    let skipped = |reason: String| skip(reason, false);
    // Most files are plain text holding nothing of interest: they are
    // judged in a reused buffer and never copied.
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let read = BUF.with_borrow_mut(|buf| {
        walk::read_into(&entry.path, buf)?;
        let read = match walk::as_text(buf) {
            Some(text) => {
                let (has, destination) = look(text);
                (has || (yaml && destination))
                    .then(|| (Content::Text(text.to_owned()), Some((has, destination))))
            }
            None => Some((walk::classify(buf.to_vec()), None)),
        };
        // A big file's buffer is not kept for the rest of the run.
        if buf.capacity() > 1 << 20 {
            *buf = Vec::new();
        }
        Ok(read)
    });
    let (content, first_look) = match read {
        Err(reason) => return skip(reason, true),
        Ok(None) => return Ok(Outcome::Nothing),
        Ok(Some(read)) => read,
    };
    match content {
        Content::Unreadable(reason) => skip(reason, true),
        Content::Decoded { text, encoding } => {
            if entry.role == Role::Yaml {
                let holding = holds(text.as_bytes()) || holds_escaped(&text);
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
            if !holds(text.as_bytes()) {
                return Ok(Outcome::Nothing);
            }
            Ok(Outcome::Source(Box::new(Source {
                located: Ok(locate::locate_text(&text, hosts)),
                text: if only_hosts { text.into() } else { "".into() },
                entry,
            })))
        }
        Content::Binary(bytes) => {
            if let Some(kind) = walk::archive_kind(&bytes) {
                return skipped(format!(
                    "{kind}-compressed file; its contents are not searched, not rewritten"
                ));
            }
            // The prefilter's needles may meet by chance in binary bytes: the
            // file holds endpoint text only if the endpoint rules find one.
            if holds(&bytes)
                && !locate::locate_text(&String::from_utf8_lossy(&bytes), hosts)
                    .occurrences
                    .is_empty()
            {
                return skipped(
                    "binary file holding endpoint text; not read, not rewritten".into(),
                );
            }
            Ok(Outcome::Nothing)
        }
        Content::NotUtf8 { bytes, line } => {
            let holding = holds(&bytes);
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
            let (has, destination) = first_look.unwrap_or_else(|| look(&text));
            // A file that is not `--include`d but reads as a kubeconfig is
            // located as YAML; if it does not parse, it stays a text file.
            let kubeconfig = kubeconfig_by_name
                || (entry.role == Role::Text && has && walk::looks_like_kubeconfig(&text));
            if kubeconfig {
                entry.role = Role::Yaml;
            }
            let located = match entry.role {
                Role::Yaml if kubeconfig && has => {
                    match locate::locate_yaml_for(&text, hosts, want) {
                        Ok(l) => Ok(l),
                        Err(_) => {
                            entry.role = Role::Text;
                            Ok(locate::locate_text(&text, hosts))
                        }
                    }
                }
                Role::Yaml if has || destination => {
                    locate::locate_yaml_following(&text, hosts, want, followed.of(&entry.path))
                        .or_else(|e| json_fallback(&entry.rel, &text, hosts, want, e))
                }
                Role::Text if has => Ok(locate::locate_text(&text, hosts)),
                _ => return Ok(Outcome::Nothing),
            };
            let mut located = located;
            // A chart template's Applications, as the chart was read.
            if let (Ok(l), Some(d)) = (&mut located, followed.destinations_of(&entry.path)) {
                l.destinations.clone_from(d);
            }
            let keep = match &located {
                Ok(l) => !l.occurrences.is_empty() || !l.destinations.is_empty(),
                Err(e) => !e.occurrences.is_empty(),
            };
            if !keep {
                return Ok(Outcome::Nothing);
            }
            Ok(Outcome::Source(Box::new(Source {
                entry,
                text: if only_hosts { text.into() } else { "".into() },
                located,
            })))
        }
    }
}
