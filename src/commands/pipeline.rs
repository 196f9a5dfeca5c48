//! The read pipeline every command shares: discover → read → locate on
//! every core, each file's result handed over in the walk's order.

use crate::discover::walk::{self, Content, Entry, Role, Skipped, Walk};
use crate::find::inventory::{Inventory, Item, Source};
use crate::find::jsonfile;
use crate::find::locate::{self, Located, ParseError};
use crate::find::templates;
use crate::review::feeders;
use crate::sys::par::cores;
use crate::text::endpoint;
use anyhow::Result;

/// Reads and locates every discovered file, keeping everything (what a
/// rebind needs: every file is planned and verified before the first write).
///
/// `hosts` are the lower-case `--from` hosts (found anywhere, bare hosts too).
/// With `only_hosts`, files that do not contain one of them are not parsed at
/// all (the fast path of `diff`/`apply`); otherwise YAML files are parsed for
/// the tier table even when they hold no URL.
pub fn inventory(walk: &Walk, hosts: &[String], only_hosts: bool) -> Result<Inventory> {
    let want = locate::Want {
        only: only_hosts,
        names: false,
        arns: false,
    };
    Ok(gather(walk, hosts, want, false)?.0)
}

/// [`inventory`] for a rebind (only the files holding `hosts` are parsed),
/// with what the after-merge review needs of the tree's Applications, kept
/// during the same walk ([`feeders::Candidates`]): `None` when this walk's
/// files are not the ones the review would walk (several PATHs, `include`
/// or `exclude` globs of the config's own, a config that may itself be read
/// as an Application), and the review walks for itself.
pub fn rebind_inventory(
    walk: &Walk,
    hosts: &[String],
) -> Result<(Inventory, Option<feeders::Candidates>)> {
    let want = locate::Want {
        only: true,
        names: false,
        arns: false,
    };
    gather(walk, hosts, want, true)
}

fn gather(
    walk: &Walk,
    hosts: &[String],
    want: locate::Want,
    candidates: bool,
) -> Result<(Inventory, Option<feeders::Candidates>)> {
    let sole = walk
        .sole_dir()
        .filter(|sole| candidates && !config_may_feed(sole));
    let mut inv = Inventory::default();
    let mut kept = feeders::Candidates::new(
        sole.as_ref()
            .map(|s| s.canonical.clone())
            .unwrap_or_default(),
    );
    inv.files = run(
        walk,
        hosts,
        want,
        sole.as_ref(),
        |f| match f {
            Item::Source(s) => inv.sources.push(*s),
            Item::Skipped(s) => inv.skipped.push(s),
            Item::Note(_) | Item::Arns(..) => {}
        },
        |c| kept.push(c),
    )?;
    // The walk's order is the tree's; a rebind's and an audit's reports list
    // files by the names shown, byte-wise (as `git diff` does).
    inv.sources.sort_by(|a, b| a.entry.rel.cmp(&b.entry.rel));
    inv.skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((inv, sole.map(|_| kept)))
}

/// Whether the config in use (which the walk never yields) lies in the
/// walked directory and may be read as an Application by the after-merge
/// review's own walk.
fn config_may_feed(sole: &walk::SoleDir) -> bool {
    let Some(config) = &sole.config else {
        return false;
    };
    config.starts_with(&sole.canonical)
        && std::fs::read_to_string(config)
            .is_ok_and(|t| feeders::Candidate::of(&t, || Some(String::new())).is_some())
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
    sink: impl FnMut(Item),
) -> Result<usize> {
    run(walk, hosts, want, None, sink, |_| {})
}

/// [`each_source`], handing the after-merge review's candidates to `keep`
/// (in the walk's order) when `sole` is the walk's one directory.
fn run(
    walk: &Walk,
    hosts: &[String],
    want: locate::Want,
    sole: Option<&walk::SoleDir>,
    mut sink: impl FnMut(Item),
    mut keep: impl FnMut(feeders::Candidate),
) -> Result<usize> {
    // Chart templates are followed before the walk (a rebind, which looks
    // for its hosts anywhere, needs no extra positions).
    let followed = if want.only {
        templates::Followed::default()
    } else {
        // The clone's remotes: a value file of another repository is no
        // local chart's.
        let ours = walk
            .first_path()
            .map(crate::repo::git::remote_identities)
            .unwrap_or_default();
        let mut followed = templates::follow(walk, &ours);
        let roads = crate::find::generators::follow(walk);
        followed.add_flows(roads.flows);
        followed.notes.extend(roads.notes);
        followed.notes.sort();
        followed.notes.dedup();
        followed
    };
    for n in &followed.notes {
        sink(Item::Note(n.clone()));
    }
    let hosts: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
    let job = Job {
        prefilter: endpoint::Prefilter::new(&hosts, want.only),
        hosts: &hosts,
        want,
        followed: &followed,
        sole,
    };
    let threads = cores();
    let shared = Shared {
        feed: std::sync::Mutex::new(Feed {
            files: walk.files(),
            next: 0,
            released: 0,
        }),
        moved: std::sync::Condvar::new(),
        files: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        window: threads * 4,
    };
    // Bounded: workers wait when the consumer falls behind.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(threads * 4);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads {
            let tx = tx.clone();
            let (shared, job) = (&shared, &job);
            scope.spawn(move || shared.work(job, tx));
        }
        drop(tx);
        shared.deliver(rx, &mut sink, &mut keep)
    })?;
    Ok(shared.files.into_inner())
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Items taken from the walk at once: one message per batch keeps the
/// hand-over cost (a wake-up per message) off the per-file path.
const BATCH: usize = 64;

/// A numbered batch of results, as a worker hands it over.
type Batch = (usize, Vec<Result<Done>>);

/// The walk as [`each_source`]'s workers share it.
struct Feed<'w> {
    files: walk::Files<'w>,
    /// The number of the next batch to take.
    next: usize,
    /// Batches before this one have been handed to the sink.
    released: usize,
}

/// What the workers and the consumer share. The walk is pulled under a
/// lock, a batch at a time, by whichever worker is free; batches are
/// numbered so results keep the walk's order. No batch is taken more than
/// `window` ahead of the oldest one not yet handed to the sink: a slow file
/// (a big one first) holds the others back instead of letting finished
/// results pile up behind it.
struct Shared<'w> {
    feed: std::sync::Mutex<Feed<'w>>,
    moved: std::sync::Condvar,
    files: AtomicUsize,
    stop: AtomicBool,
    window: usize,
}

impl Shared<'_> {
    /// One worker: takes batches until the walk or the run ends.
    fn work(&self, job: &Job, tx: std::sync::mpsc::SyncSender<Batch>) {
        while !self.stop.load(Ordering::Relaxed) {
            let (n, batch) = {
                let mut f = self.feed.lock().unwrap_or_else(|p| p.into_inner());
                while f.next >= f.released + self.window && !self.stop.load(Ordering::Relaxed) {
                    f = self.moved.wait(f).unwrap_or_else(|p| p.into_inner());
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
                let result = match found {
                    walk::Found::Skipped(s) => Ok(Done::from(Outcome::Skipped(s))),
                    walk::Found::Entry(e) => {
                        self.files.fetch_add(1, Ordering::Relaxed);
                        job.process(e)
                    }
                };
                let failed = result.is_err();
                if !matches!(&result, Ok(d) if d.is_empty()) {
                    done.push(result);
                }
                if failed {
                    break;
                }
            }
            if tx.send((n, done)).is_err() {
                break;
            }
        }
    }

    /// Hands the results to `sink` (and candidates to `keep`) in the walk's
    /// order; the first error stops the workers and is returned.
    fn deliver(
        &self,
        rx: std::sync::mpsc::Receiver<Batch>,
        sink: &mut impl FnMut(Item),
        keep: &mut impl FnMut(feeders::Candidate),
    ) -> Result<()> {
        let mut waiting = std::collections::BTreeMap::new();
        let mut want = 0;
        while let Ok((n, batch)) = rx.recv() {
            waiting.insert(n, batch);
            while let Some(batch) = waiting.remove(&want) {
                want += 1;
                self.feed.lock().unwrap_or_else(|p| p.into_inner()).released = want;
                self.moved.notify_all();
                for r in batch {
                    let done = match r {
                        Ok(done) => done,
                        Err(e) => {
                            // Stop the workers (the receiver goes with this
                            // call, so none waits on a full channel); the
                            // scope joins them.
                            self.stop.store(true, Ordering::Relaxed);
                            self.moved.notify_all();
                            drop(rx);
                            return Err(e);
                        }
                    };
                    if let Some(c) = done.candidate {
                        keep(c);
                    }
                    if let Some((rel, arns)) = done.arns {
                        sink(Item::Arns(rel, arns));
                    }
                    match done.outcome {
                        Outcome::Source(s) => sink(Item::Source(s)),
                        Outcome::Skipped(s) => sink(Item::Skipped(s)),
                        Outcome::Nothing => {}
                    }
                }
            }
        }
        Ok(())
    }
}

/// `text` with every escape of a double-quoted string read, wherever it
/// stands, by the YAML reader's decoder ([`endpoint::escape_map`], whose
/// escapes include JSON's): a loose prefilter, so that a file hiding an
/// endpoint behind escapes (`\x2e`, `\u002e`, `\/`, an escaped line break)
/// is parsed, where `locate` reads every scalar exactly. A backslash that
/// starts no escape is kept as it is.
fn unescaped(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for i in memchr::memchr_iter(b'\\', b) {
        if i < from {
            continue; // the second backslash of `\\`
        }
        out.push_str(&text[from..i]);
        // One escape at most: up to the next quote or backslash, within the
        // longest escape (`\UXXXXXXXX`); an escaped line break takes the
        // white space after it.
        let mut end = if b.get(i + 1).is_some_and(|c| matches!(c, b'\n' | b'\r')) {
            i + 1
                + b[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_whitespace())
                    .count()
        } else {
            let cut = b[(i + 2).min(b.len())..]
                .iter()
                .position(|c| matches!(c, b'"' | b'\\'))
                .map_or(b.len(), |p| i + 2 + p);
            cut.min(i + 10)
        };
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let first = endpoint::escape_map(&text[i..end]).and_then(|d| {
            d.spans
                .first()
                .map(|(raw, dec)| (raw.end, d.text[dec.clone()].to_string()))
        });
        match first {
            Some((len, decoded)) => {
                out.push_str(&decoded);
                from = i + len;
            }
            None => {
                out.push('\\');
                from = i + 1;
            }
        }
    }
    out.push_str(&text[from..]);
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

/// What one file contributes: to the inventory, and to the after-merge
/// review.
struct Done {
    outcome: Outcome,
    candidate: Option<feeders::Candidate>,
    /// The EKS cluster ARNs the file names ([`locate::Want::arns`]).
    arns: Option<(String, Vec<crate::find::names::ArnRef>)>,
}

impl From<Outcome> for Done {
    fn from(outcome: Outcome) -> Done {
        Done {
            outcome,
            candidate: None,
            arns: None,
        }
    }
}

impl Done {
    fn is_empty(&self) -> bool {
        matches!(self.outcome, Outcome::Nothing) && self.candidate.is_none() && self.arns.is_none()
    }
}

/// The first look at a text: (holds endpoint text, names a destination).
type Look = (bool, bool);

/// What a file read holds: its content when it is worth a closer look
/// (with the first look at a text), the after-merge review's candidate, and
/// the EKS cluster ARNs it names (when asked).
type Read = (
    Result<Option<(Content, Option<Look>)>, String>,
    Option<feeders::Candidate>,
    Vec<crate::find::names::ArnRef>,
);

/// What every file of one run is read and located with.
struct Job<'a> {
    hosts: &'a [String],
    want: locate::Want,
    prefilter: endpoint::Prefilter,
    followed: &'a templates::Followed,
    sole: Option<&'a walk::SoleDir>,
}

fn skip(entry: &Entry, reason: String, may_hold: bool) -> Result<Outcome> {
    Ok(Outcome::Skipped(Skipped {
        rel: entry.rel.clone(),
        reason,
        may_hold,
    }))
}

/// `, holding endpoint text` when it does.
fn holding(holds: bool) -> &'static str {
    if holds {
        ", holding endpoint text"
    } else {
        ""
    }
}

impl Job<'_> {
    fn holds(&self, bytes: &[u8]) -> bool {
        self.prefilter.scan(bytes).0
    }

    /// An endpoint behind escapes (`\x2e` in a host) is found by reading
    /// the escapes, not by the raw bytes; escapes of escapes too (JSON held
    /// in a double-quoted YAML string writes `\\u002e`), a few layers deep.
    fn holds_escaped(&self, text: &str) -> bool {
        let mut text = std::borrow::Cow::Borrowed(text);
        for _ in 0..3 {
            if memchr::memchr(b'\\', text.as_bytes()).is_none() {
                return false;
            }
            text = std::borrow::Cow::Owned(unescaped(&text));
            if self.holds(text.as_bytes()) {
                return true;
            }
        }
        false
    }

    /// ... or behind base64 (a Secret's `data`), by reading it decoded.
    fn holds_encoded(&self, text: &str) -> bool {
        crate::find::embedded::holds_encoded(text, |b| self.holds(b))
    }

    /// The first look at a text: (holds endpoint text, names a destination).
    fn look(&self, text: &str, yaml: bool) -> Look {
        let (has, destination) = self.prefilter.scan(text.as_bytes());
        let hidden = yaml && (self.holds_escaped(text) || self.holds_encoded(text));
        (has || hidden, destination)
    }

    /// Reads, classifies and locates one file. The text is kept only for a
    /// rebind (`want.only`: it is planned from it; a scan or check does not).
    fn process(&self, mut entry: Entry) -> Result<Done> {
        // The after-merge review reads the files the default globs call YAML.
        let candidate_of = (entry.role == Role::Yaml).then_some(self.sole).flatten();
        // A kubeconfig without a YAML extension is a manifest all the same.
        let kubeconfig_by_name = entry.role == Role::Text && walk::kubeconfig_name(&entry.path);
        if kubeconfig_by_name {
            entry.role = Role::Yaml;
        }
        let (read, candidate, arns) = self.read(&entry, candidate_of);
        let arns = (!arns.is_empty()).then(|| (entry.rel.clone(), arns));
        let outcome = match read {
            Err(reason) => skip(&entry, reason, true)?,
            Ok(None) => Outcome::Nothing,
            Ok(Some((content, first))) => {
                self.content(entry, content, first, kubeconfig_by_name)?
            }
        };
        Ok(Done {
            outcome,
            candidate,
            arns,
        })
    }

    /// Reads a file into a reused buffer: most files are plain text holding
    /// nothing of interest, judged there and never copied.
    fn read(&self, entry: &Entry, candidate_of: Option<&walk::SoleDir>) -> Read {
        thread_local! {
            static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let yaml = entry.role == Role::Yaml;
        BUF.with_borrow_mut(|buf| {
            if let Err(reason) = walk::read_into(&entry.path, buf) {
                return (Err(reason), None, Vec::new());
            }
            let text = walk::as_text(buf);
            let arns = match text {
                Some(t)
                    if self.want.arns && yaml && t.contains(":eks:") && t.contains(":cluster/") =>
                {
                    crate::find::names::cluster_arns(t)
                }
                _ => Vec::new(),
            };
            // The review reads any UTF-8 file as text.
            let candidate = candidate_of.and_then(|sole| {
                let raw = text.or_else(|| std::str::from_utf8(buf).ok())?;
                feeders::Candidate::of(raw, || sole.rel(&entry.path))
            });
            let read = match text {
                Some(text) => {
                    let (has, destination) = self.look(text, yaml);
                    (has || (yaml && destination))
                        .then(|| (Content::Text(text.to_owned()), Some((has, destination))))
                }
                None => Some((walk::classify(buf.to_vec()), None)),
            };
            // A big file's buffer is not kept for the rest of the run.
            if buf.capacity() > 1 << 20 {
                *buf = Vec::new();
            }
            (Ok(read), candidate, arns)
        })
    }

    /// What a file's content contributes.
    fn content(
        &self,
        entry: Entry,
        content: Content,
        first: Option<Look>,
        kubeconfig_by_name: bool,
    ) -> Result<Outcome> {
        let yaml = entry.role == Role::Yaml;
        match content {
            Content::Text(text) => self.text(entry, text, first, kubeconfig_by_name),
            Content::Unreadable(reason) => skip(&entry, reason, true),
            Content::Decoded { text, encoding } => self.decoded(entry, text, encoding),
            Content::Binary(bytes) => self.binary(&entry, &bytes),
            Content::NotUtf8 { bytes, line } => {
                let holds = self.holds(&bytes);
                if !yaml && !holds {
                    return Ok(Outcome::Nothing);
                }
                let what = holding(holds);
                skip(
                    &entry,
                    format!("not UTF-8 (first invalid byte on line {line}){what}; not parsed, not rewritten"),
                    holds && yaml,
                )
            }
        }
    }

    /// A UTF-16 or UTF-32 text: YAML is not parsed, other text is searched.
    fn decoded(&self, entry: Entry, text: String, encoding: &str) -> Result<Outcome> {
        if entry.role == Role::Yaml {
            let holds = self.holds(text.as_bytes()) || self.holds_escaped(&text);
            let what = holding(holds);
            return skip(
                &entry,
                format!(
                    "{encoding} (byte order mark){what}; YAML is parsed as UTF-8 only: not parsed, not rewritten"
                ),
                holds,
            );
        }
        if !self.holds(text.as_bytes()) {
            return Ok(Outcome::Nothing);
        }
        Ok(Outcome::Source(Box::new(Source {
            located: Ok(locate::locate_text(&text, self.hosts)),
            text: if self.want.only {
                text.into()
            } else {
                "".into()
            },
            entry,
        })))
    }

    /// A binary file: named when it is an archive or holds endpoint text.
    fn binary(&self, entry: &Entry, bytes: &[u8]) -> Result<Outcome> {
        if let Some(kind) = walk::archive_kind(bytes) {
            let why =
                format!("{kind}-compressed file; its contents are not searched, not rewritten");
            return skip(entry, why, false);
        }
        // The prefilter's needles may meet by chance in binary bytes: the
        // file holds endpoint text only if the endpoint rules find one.
        if self.holds(bytes)
            && !locate::locate_text(&String::from_utf8_lossy(bytes), self.hosts)
                .occurrences
                .is_empty()
        {
            let why = "binary file holding endpoint text; not read, not rewritten";
            return skip(entry, why.into(), false);
        }
        Ok(Outcome::Nothing)
    }

    /// A UTF-8 text, located as YAML or as text.
    fn text(
        &self,
        mut entry: Entry,
        text: String,
        first: Option<Look>,
        kubeconfig_by_name: bool,
    ) -> Result<Outcome> {
        let (hosts, want) = (self.hosts, self.want);
        let (has, destination) =
            first.unwrap_or_else(|| self.look(&text, entry.role == Role::Yaml));
        // A file that is not `--include`d but reads as a kubeconfig is
        // located as YAML; if it does not parse, it stays a text file.
        let kubeconfig = kubeconfig_by_name
            || (entry.role == Role::Text && has && walk::looks_like_kubeconfig(&text));
        if kubeconfig {
            entry.role = Role::Yaml;
        }
        let mut located = match entry.role {
            Role::Yaml if kubeconfig && has => match locate::locate_yaml_for(&text, hosts, want) {
                Ok(l) => Ok(l),
                Err(_) => {
                    entry.role = Role::Text;
                    Ok(locate::locate_text(&text, hosts))
                }
            },
            Role::Yaml if has || destination => {
                locate::locate_yaml_following(&text, hosts, want, self.followed.of(&entry.path))
                    .or_else(|e| json_fallback(&entry.rel, &text, hosts, want, e))
            }
            Role::Text if has => Ok(locate::locate_text(&text, hosts)),
            _ => return Ok(Outcome::Nothing),
        };
        // A chart template's Applications, as the chart was read.
        if let (Ok(l), Some(d)) = (&mut located, self.followed.destinations_of(&entry.path)) {
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
            text: if want.only { text.into() } else { "".into() },
            located,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    const OLD: &str = "old.example.com";

    fn app(name: &str, path: &str, extra: &str) -> String {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: {path}\n{extra}  destination:\n    server: https://kubernetes.default.svc\n"
        )
    }

    /// A tree with every kind of file the after-merge review reads or
    /// passes over; the two files holding [`OLD`] are the rewritten ones.
    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let prod = format!(
            "{}  syncPolicy: {{automated: {{}}}}\n# https://{OLD}\n",
            app("prod", "charts/prod", "")
        );
        let multi = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: multi}\nspec:\n  sources:\n  - repoURL: https://git.example.com/gitops.git\n    ref: values\n  - chart: x\n    repoURL: https://charts.example.com\n    helm: {valueFiles: [$values/envs/prod.yaml]}\n";
        let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: set}\nspec:\n  generators:\n  - git: {repoURL: https://git.example.com/gitops.git, directories: [{path: 'apps/*'}]}\n  template:\n    metadata: {name: '{{path.basename}}'}\n    spec:\n      source: {repoURL: https://git.example.com/gitops.git, path: '{{path}}'}\n";
        let files: Vec<(&str, String)> = vec![
            ("apps/root.yaml", app("root", "apps/children", "")),
            ("apps/children/prod.yaml", prod),
            ("apps/children/multi.yaml", multi.to_string()),
            ("envs/prod.yaml", format!("server: https://{OLD}\n")),
            ("sets/set.yaml", set.to_string()),
            ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.customizations.health.argoproj.io_Application: x\n".into()),
            ("other/app.yaml", app("other", "other/stuff", "")),
            ("climb/app.yaml", app("climb", "../apps/children", "")),
            ("bom.yaml", format!("\u{feff}{}", app("bom", "apps/children", ""))),
            ("README.md", "argoproj.io Applications live in apps/\n".into()),
            (".gitignore", "ignored/\n".into()),
            ("ignored/app.yaml", app("ignored", "apps/children", "")),
            ("plain.yaml", "kind: ConfigMap\ndata: {path: apps/children}\n".into()),
        ];
        for (rel, text) in files {
            let p = d.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    fn walk_of(req: &walk::WalkRequest) -> Walk {
        walk::discover(req).unwrap()
    }

    fn targets(root: &Path) -> Vec<PathBuf> {
        ["apps/children/prod.yaml", "envs/prod.yaml"]
            .iter()
            .map(|r| root.join(r).canonicalize().unwrap())
            .collect()
    }

    /// The model as the review builds it: its apps and health, printed.
    fn model(root: &Path, known: Option<&feeders::Candidates>) -> String {
        let (at, m) = feeders::build_for(root, None, None, Some(&targets(root)), known, None);
        format!("{at:?} {:?} {}", m.apps, m.app_health)
    }

    #[test]
    fn the_rebind_walk_keeps_what_the_review_reads_and_nothing_else() {
        let d = tree();
        let root = d.path();
        let walk = walk_of(&walk::WalkRequest::for_paths(&[root.to_path_buf()]));
        let (inv, known) = rebind_inventory(&walk, &[OLD.to_string()]).unwrap();
        let rels: Vec<&str> = inv.sources.iter().map(|s| s.entry.rel.as_str()).collect();
        assert_eq!(rels.len(), 2, "{rels:?}");
        let known = known.expect("one directory, default globs: the walk is reused");
        assert_eq!(known.root, root.canonicalize().unwrap());
        let kept: Vec<&str> = known.rels().collect();
        assert_eq!(
            kept,
            [
                "apps/children/multi.yaml",
                "apps/children/prod.yaml",
                "apps/root.yaml",
                "bom.yaml",
                "climb/app.yaml",
                "cm.yaml",
                "other/app.yaml",
                "sets/set.yaml",
            ]
        );
        // The same model as a walk of its own gives, and it comes from the
        // candidates: none kept, no Application found.
        let walked = model(root, None);
        assert!(
            walked.contains("\"root\"") && walked.contains("\"bom\""),
            "{walked}"
        );
        assert!(!walked.contains("\"ignored\""), "{walked}");
        assert_eq!(model(root, Some(&known)), walked);
        let none = feeders::Candidates::new(known.root.clone());
        assert!(!model(root, Some(&none)).contains("\"root\""));
    }

    #[test]
    fn a_walk_the_review_would_not_make_is_not_reused() {
        let d = tree();
        let root = d.path().to_path_buf();
        let hosts = [OLD.to_string()];
        let known = |req: walk::WalkRequest| rebind_inventory(&walk_of(&req), &hosts).unwrap().1;
        let base = walk::WalkRequest::for_paths(std::slice::from_ref(&root));
        assert!(known(base.clone()).is_some());
        let default_spelt = walk::WalkRequest {
            include: walk::DEFAULT_INCLUDE
                .iter()
                .rev()
                .map(|g| g.to_string())
                .collect(),
            ..base.clone()
        };
        assert!(known(default_spelt).is_some());
        let excluded = walk::WalkRequest {
            exclude: vec!["other/**".into()],
            ..base.clone()
        };
        assert!(known(excluded).is_none());
        let included = walk::WalkRequest {
            include: vec!["**/*.yaml".into()],
            ..base.clone()
        };
        assert!(known(included).is_none());
        let two = walk::WalkRequest::for_paths(&[root.join("apps"), root.join("envs")]);
        assert!(known(two).is_none());
        // The config is never walked: one the review would read as an
        // Application makes the review walk for itself.
        let config = root.join(".rebind.yaml");
        std::fs::write(&config, "clusters: {}\n").unwrap();
        let with_config = walk::WalkRequest {
            config_path: Some(config.clone()),
            ..base.clone()
        };
        assert!(known(with_config.clone()).is_some());
        std::fs::write(&config, "# argoproj.io\nclusters: {}\n").unwrap();
        assert!(known(with_config).is_none());
        // Only a rebind keeps them.
        let want = locate::Want {
            only: true,
            names: false,
            arns: false,
        };
        assert!(gather(&walk_of(&base), &hosts, want, false)
            .unwrap()
            .1
            .is_none());
    }

    #[test]
    fn escapes_are_read_by_the_one_decoder() {
        for (raw, read) in [
            (r"a\x2eb", "a.b"),
            (r"\u0068ttps:\/\/h", "https://h"),
            (r"\U0001F600", "\u{1F600}"),
            ("exa\\\n    mple", "example"),
            (r"\\x2e", r"\x2e"),
            (r#"\"q\" \d \x2"#, r#""q" \d \x2"#),
            (r"é\x2eé\", r"é.é\"),
        ] {
            assert_eq!(unescaped(raw), read, "{raw:?}");
        }
    }
}
