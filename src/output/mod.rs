//! Everything rebind prints goes through here (a test fails on a print
//! anywhere else but `main.rs`): the [`Sink`] for stdout and stderr (a
//! closed pipe or a full disk ends output quietly, never a panic), the
//! output [`Format`] and colour choice, the process [`Exit`] codes, the one
//! error type [`Failure`] (it carries its exit code); what a command
//! returns ([`Done`]: its [`Report`], not yet rendered, and how the run
//! ends, as a [`Reported`]; or a [`Failure`] before any report); `report`,
//! the one place a format is told apart (the returned report rendered, the
//! run concluded into an exit code, a failure rendered); and the
//! renderers it calls: [`text`] for people, [`json`] for machines (typed
//! reports, each with `schema_version`), [`sarif`] (SARIF 2.1.0) and
//! [`github`] (GitHub Actions workflow commands) for CI.
//!
//! Every located thing a run reports (a `check` finding, a pending change, a
//! mention that is not rewritten, a scan occurrence, a file that cannot be
//! rewritten) becomes one [`Finding`]; SARIF ([`sarif`]) and GitHub workflow
//! commands ([`github`]) render only that model, and the JSON reports build
//! their located lists from it.
//!
//! To add an output format: add a [`Format`] variant and a module beside
//! `text`, `json`, `sarif` and `github` (a located report renders
//! `&[Finding]`), say in `report` how a report and a failure look in it, and
//! add it to the `--format` value enum of the commands that write it
//! (`cli/mod.rs`: `FormatArgs` or `ReportFormatArgs`), which is what their
//! `--help` lists.

pub mod check;
pub mod codes;
pub mod feeders;
pub mod finding;
pub mod github;
pub mod identity;
pub mod json;
pub mod names;
pub mod report;
pub mod sarif;
pub mod text;
pub mod workspace;

use crate::discover::walk::Skipped;
pub use finding::{md_code, md_fence, rules, Finding, Level, Rule, SCHEMA_VERSION};
use std::io::{self, Write};

/// How a command prints its report. Not comparable (no `PartialEq`):
/// a format is told apart only by the `match`es of `report`.
#[derive(Debug, Clone, Copy, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    /// SARIF 2.1.0 (`scan`, `diff`, `check`).
    Sarif,
    /// GitHub Actions workflow commands (`::error file=...::`; `scan`, `diff`, `check`).
    Github,
}

/// The process exit code, as documented in `docs/commands.md` (Exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success; nothing pending; clean.
    Ok = 0,
    /// Findings (`check`), changes pending (`diff`), or declined at the prompt.
    Pending = 1,
    /// Usage or input error; nothing was written.
    Error = 2,
    /// Something was written (files rewritten, a commit made) but a later step
    /// (the push, an output file) failed; the message says what exists and
    /// how to finish.
    AfterCommit = 3,
}

/// Why a command failed, and the exit code that says so: the one error
/// type commands return. Any other error converts into it as a usage or
/// input error (exit 2, nothing written); [`Failure::after_write`] marks
/// one that came after the first write (exit 3).
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub error: anyhow::Error,
    /// The errors at places in files, for the JSON error report (the
    /// message already lists them for people).
    pub located: Vec<crate::edit::rewrite::PlanError>,
}

impl Failure {
    /// A failure after something was written: exit 3.
    pub fn after_write(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            exit: Exit::AfterCommit,
            error: error.into(),
            located: Vec::new(),
        }
    }

    /// The same failure, with the file errors it is about.
    pub fn at(mut self, located: &[crate::edit::rewrite::PlanError]) -> Failure {
        self.located = located.to_vec();
        self
    }

    /// What a failure after the commit says it left, if it is one.
    fn after_commit(&self) -> Option<&crate::repo::git::AfterCommit> {
        self.error
            .chain()
            .find_map(|c| c.downcast_ref::<crate::repo::git::AfterCommit>())
    }

    /// A refused mentions-only `--from`, if it is one.
    fn only_mentioned(&self) -> Option<&crate::review::plan::OnlyMentioned> {
        self.error
            .chain()
            .find_map(|c| c.downcast_ref::<crate::review::plan::OnlyMentioned>())
    }

    /// Its stable code ([`codes`]): the one its error carries, else by its
    /// exit code.
    pub fn code(&self) -> &'static str {
        if let Some(a) = self.after_commit() {
            return a.code;
        }
        if self.only_mentioned().is_some() {
            return codes::ONLY_MENTIONED.id;
        }
        if let Some(c) = crate::sys::coded::code_of(&self.error) {
            return c;
        }
        match self.exit {
            Exit::AfterCommit => codes::AFTER_WRITE.id,
            _ => codes::USAGE.id,
        }
    }

    /// What it left, when it came after the first write (exit 3).
    fn left_after_write(&self) -> Option<json::AfterWrite> {
        if self.exit != Exit::AfterCommit {
            return None;
        }
        let a = self.after_commit();
        Some(json::AfterWrite {
            branch: a.map(|a| a.branch.clone()),
            commit: a.map(|a| a.commit.clone()),
            pushed: Some(a.is_some_and(|a| a.pushed)),
            pull_request: None,
            retry: Some(retry_command()),
        })
    }
}

/// The flags that guard a first run against a tree changed since its audit
/// (each takes a value): a retry after exit 3 drops them, as the tree is
/// rebound by then and the branch already holding exactly the change is
/// what is checked.
const GUARDS: [&str; 3] = [
    "--expect-from-audit",
    "--expect-files",
    "--expect-occurrences",
];

/// This run's command line, shell-quoted, without the audit guards: the
/// command that finishes a run that failed after its first write.
fn retry_command() -> String {
    let mut out = Vec::new();
    let mut args = std::env::args();
    if let Some(program) = args.next() {
        out.push(crate::repo::git::sq_quote_if_needed(&program));
    }
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if GUARDS.contains(&a.as_str()) {
            skip_value = true;
            continue;
        }
        if GUARDS.iter().any(|g| a.starts_with(&format!("{g}="))) {
            continue;
        }
        out.push(crate::repo::git::sq_quote_if_needed(&a));
    }
    out.join(" ")
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure {
            exit: Exit::Error,
            error: e.into(),
            located: Vec::new(),
        }
    }
}

/// How a run ended: its exit code, or why it failed.
pub type Outcome = Result<Exit, Failure>;

/// What a command reports, as each format shows it. A part a format does
/// not show is left out: a text-only line writes nothing in JSON.
pub trait Report {
    /// For people: the report on stdout ([`Sink::say`]), its warnings on
    /// stderr.
    fn text(&self, _sink: &mut Sink) {}
    /// For machines: the JSON document on stdout.
    fn json(&self, _sink: &mut Sink) {}
    /// The located findings SARIF and GitHub workflow commands show.
    fn findings(&self) -> Vec<Finding<'_>> {
        Vec::new()
    }
    /// The rules a SARIF log lists (every finding's is among them).
    fn rules(&self) -> &'static [Rule] {
        &[]
    }
    /// The files that were not read: warnings on stderr beside SARIF and
    /// GitHub output (the JSON report lists them, the text says them itself).
    fn skipped(&self) -> &[Skipped] {
        &[]
    }
}

/// A report given as what each format shows: `text` writes it for people
/// (it may say warnings on stderr too), `json` is the JSON document,
/// already written out (empty: the format shows nothing). Owned, so a
/// command can return it.
pub struct Parts {
    text: Box<dyn Fn(&mut Sink)>,
    json: String,
}

impl Parts {
    pub fn new(text: impl Fn(&mut Sink) + 'static, json: String) -> Parts {
        Parts {
            text: Box::new(text),
            json,
        }
    }

    /// The text said on stdout (dropped with `-q`), and the JSON.
    pub fn said(text: String, json: String) -> Parts {
        Parts::new(move |sink| sink.say(&text), json)
    }

    /// A report only JSON shows.
    pub fn json(json: String) -> Parts {
        Parts::new(|_| {}, json)
    }

    /// A report that shows nothing in any text-or-JSON format (a question
    /// declined: stderr said so).
    pub fn empty() -> Parts {
        Parts::json(String::new())
    }
}

impl Report for Parts {
    fn text(&self, sink: &mut Sink) {
        (self.text)(sink)
    }
    fn json(&self, sink: &mut Sink) {
        sink.out(&self.json);
    }
}

/// What a command returns when it has not failed before its report: the
/// report, not yet rendered, and how the run ends. The command's caller
/// renders it ([`report::rendered`]): a command never renders its own report.
pub struct Reported {
    /// `None` when the report went out while the run read its files
    /// ([`report::scan`]).
    report: Option<Box<dyn Report>>,
    /// The exit code, or the failure that follows the report.
    end: Outcome,
}

impl Reported {
    /// A report, and the exit code it ends with.
    pub fn new(report: impl Report + 'static, exit: Exit) -> Reported {
        Reported {
            report: Some(Box::new(report)),
            end: Ok(exit),
        }
    }

    /// A report, then the failure the run ends in (`diff`'s files that
    /// cannot be rewritten, a refused change's JSON): the failure is
    /// concluded after the report is out, so no second JSON document
    /// follows it.
    pub fn failed(report: impl Report + 'static, failure: Failure) -> Reported {
        Reported {
            report: Some(Box::new(report)),
            end: Err(failure),
        }
    }

    /// A run whose report is already out: [`report::scan`]'s, written while the
    /// files are read.
    pub fn streamed(exit: Exit) -> Reported {
        Reported {
            report: None,
            end: Ok(exit),
        }
    }
}

/// What a command returns: its report and exit, or the failure that came
/// before any report.
pub type Done = Result<Reported, Failure>;

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// A usage error the argument parser found (and printed on stderr): when
/// the arguments ask for JSON (`--json`, `--format json`) of a command, its
/// JSON error report goes to stdout too, as for every other refusal. Returns
/// the exit code: 2.
pub fn usage_error(sink: &mut Sink, commands: &[String], args: &[String], message: &str) -> u8 {
    let json = args.iter().enumerate().any(|(i, a)| {
        a == "--json"
            || a == "--format=json"
            || (a == "--format" && args.get(i + 1).is_some_and(|v| v == "json"))
    });
    let command = args.iter().find(|a| commands.contains(a));
    if let (true, Some(command)) = (json, command) {
        sink.out(&json::render(&json::ErrorReport::new(
            command,
            &[],
            message,
            codes::USAGE.id,
        )));
    }
    if let Some(msg) = sink.finish() {
        sink.error(&msg);
    }
    Exit::Error.code()
}

/// Whether to colour: `--color always|never`, or for `auto` what `anstream`
/// decides for stdout (`NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR`,
/// `TERM=dumb`, and whether stdout is a terminal).
pub fn color_enabled(choice: anstream::ColorChoice) -> bool {
    let choice = match choice {
        anstream::ColorChoice::Auto => anstream::AutoStream::choice(&io::stdout()),
        c => c,
    };
    choice != anstream::ColorChoice::Never
}

/// Skipped files as warnings on stderr.
pub fn warn_skipped(sink: &mut Sink, skipped: &[crate::discover::walk::Skipped]) {
    for s in skipped {
        sink.warn(&format!("{}: skipped: {}", s.rel, s.reason));
    }
}

/// What went wrong writing standard output, if anything besides the reader
/// going away.
#[derive(Debug, Default)]
enum State {
    #[default]
    Open,
    /// The reader closed the pipe: later output is dropped, the exit code stays.
    Closed,
    /// Writing failed (a full disk): later output is dropped and the run fails.
    Failed(String),
}

/// Standard output and standard error, both safe to write to whatever the
/// other end does. Standard output is buffered: call [`Sink::finish`].
pub struct Sink {
    out: io::BufWriter<Box<dyn Write>>,
    err: Box<dyn Write>,
    state: State,
    /// Something was written to stdout (the command's report has begun).
    out_written: bool,
    err_closed: bool,
    /// Colour the text output.
    pub color: bool,
    /// Print nothing but errors (`-q`).
    pub quiet: bool,
}

impl Sink {
    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, color: bool, quiet: bool) -> Sink {
        Sink {
            out: io::BufWriter::with_capacity(64 * 1024, out),
            err,
            state: State::Open,
            out_written: false,
            err_closed: false,
            color,
            quiet,
        }
    }

    /// The process's own stdout and stderr.
    pub fn stdio(color: bool, quiet: bool) -> Sink {
        Sink::new(Box::new(io::stdout()), Box::new(io::stderr()), color, quiet)
    }

    fn note_out(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.state = if e.kind() == io::ErrorKind::BrokenPipe {
                State::Closed
            } else {
                State::Failed(e.to_string())
            };
        }
    }

    /// Report output (the listing, the diff, the JSON). Dropped with `-q`
    /// unless it is machine output, which is what was asked for.
    pub fn out(&mut self, s: &str) {
        self.out_bytes(s.as_bytes());
    }

    fn out_bytes(&mut self, b: &[u8]) {
        self.out_written |= !b.is_empty();
        if matches!(self.state, State::Open) {
            let r = self.out.write_all(b);
            self.note_out(r);
        }
    }

    /// Whether anything has been written to stdout.
    pub fn wrote_out(&self) -> bool {
        self.out_written
    }

    /// Stdout as an `io::Write` for a serialiser (machine output; its
    /// failures are the sink's, reported by [`Sink::finish`]).
    pub fn writer(&mut self) -> impl Write + '_ {
        SinkOut(self)
    }

    /// Human report text: dropped with `-q`.
    pub fn say(&mut self, s: &str) {
        if !self.quiet {
            self.out(s);
        }
    }

    /// Writes to stderr, flushing stdout first so the two interleave in order.
    fn write_err(&mut self, s: &str) {
        if matches!(self.state, State::Open) {
            let r = self.out.flush();
            self.note_out(r);
        }
        if self.err_closed {
            return;
        }
        if self
            .err
            .write_all(s.as_bytes())
            .and_then(|()| self.err.flush())
            .is_err()
        {
            self.err_closed = true;
        }
    }

    /// A warning line on stderr (`warning: ...`); dropped with `-q`.
    pub fn warn(&mut self, msg: &str) {
        if !self.quiet {
            self.write_err(&format!("warning: {msg}\n"));
        }
    }

    /// Progress or prompt text on stderr; dropped with `-q`.
    pub fn info(&mut self, s: &str) {
        if !self.quiet {
            self.write_err(s);
        }
    }

    /// An error line on stderr (`error: ...`), always printed.
    pub fn error(&mut self, msg: &str) {
        self.write_err(&format!("error: {msg}\n"));
    }

    /// Flushes stdout. Returns the write failure (other than a closed pipe),
    /// which must fail the run: the report did not reach its reader.
    pub fn finish(&mut self) -> Option<String> {
        if matches!(self.state, State::Open) {
            let r = self.out.flush();
            self.note_out(r);
        }
        match &self.state {
            State::Failed(e) => Some(format!("cannot write standard output: {e}")),
            _ => None,
        }
    }
}

struct SinkOut<'s>(&'s mut Sink);

impl Write for SinkOut<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.out_bytes(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::text::words::count;

    #[test]
    fn markdown_code_that_its_content_cannot_end() {
        assert_eq!(super::md_code("a/b.yaml"), "`a/b.yaml`");
        assert_eq!(super::md_code("a`b"), "``a`b``");
        assert_eq!(super::md_code("`x"), "`` `x ``");
        assert_eq!(super::md_code("k|v"), "`k\\|v`");
        assert_eq!(super::md_fence("diff", "x\n"), "```diff\nx\n```\n");
        let body = "   ```\n  <!--\n-a\n+b\n";
        let fenced = super::md_fence("diff", body);
        assert!(fenced.starts_with("````diff\n") && fenced.ends_with("\n````\n"));
        assert_eq!(super::md_fence("", "````` x"), "``````\n````` x\n``````\n");
    }

    use super::*;

    struct Broken(io::ErrorKind);

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(self.0))
        }
    }

    #[test]
    fn a_closed_pipe_is_quiet_and_a_full_disk_is_an_error() {
        let mut s = Sink::new(
            Box::new(Broken(io::ErrorKind::BrokenPipe)),
            Box::new(Broken(io::ErrorKind::BrokenPipe)),
            false,
            false,
        );
        s.out(&"x".repeat(100_000));
        s.warn("w");
        s.error("e");
        assert_eq!(s.finish(), None);
        let mut s = Sink::new(
            Box::new(Broken(io::ErrorKind::StorageFull)),
            Box::new(Broken(io::ErrorKind::StorageFull)),
            false,
            false,
        );
        s.out("x");
        s.error("e");
        assert!(s.finish().unwrap().contains("cannot write standard output"));
    }

    #[test]
    fn plurals() {
        assert_eq!(count(1, "file"), "1 file");
        assert_eq!(count(0, "change"), "0 changes");
        assert_eq!(count(2, "occurrence"), "2 occurrences");
        assert_eq!(count(3, "mention"), "3 mentions");
    }
}
