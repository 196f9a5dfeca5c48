//! Everything rebind prints goes through here: the [`Sink`] for stdout and
//! stderr (a closed pipe or a full disk ends output quietly, never a panic),
//! the output [`Format`] and colour choice, the process [`Exit`] codes, and
//! the renderers: [`text`] for people, [`json`] for machines (typed reports,
//! each with `schema_version`), SARIF and GitHub workflow commands for CI.
//!
//! To add an output format: add a [`Format`] variant, render each report in
//! it next to the others (see `text` and `json`), and let the commands that
//! support it accept it (`cli`).

pub mod feeders;
pub mod json;
pub mod text;

use std::io::{self, Write};

/// The JSON reports' schema version; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// How a command prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// SARIF 2.1.0 (`check`).
    Sarif,
    /// GitHub Actions workflow commands (`::error file=...::`; `diff`, `check`).
    Github,
}

/// The process exit code, as documented in the README.
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

/// A run that wrote something (files rewritten in place) and then failed:
/// exit [`Exit::AfterCommit`], never "nothing written".
#[derive(Debug)]
pub struct Partial(pub String);

impl std::fmt::Display for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Partial {}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// `1 file`, `2 files`; `1 change`, `0 changes`: the one pluraliser.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// [`count`] for a phrase whose plural is not regular.
pub fn count_as(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The noun for `n` of it (English regular plurals, and `-ss`/`-x` nouns).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else if noun.ends_with("ss") || noun.ends_with('x') || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// Whether to colour output: `--color`, then `NO_COLOR`/`CLICOLOR_FORCE`, then
/// whether stdout is a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Resolves `auto` the way `anstream` does (`NO_COLOR`, `CLICOLOR_FORCE`,
    /// `CLICOLOR`, `TERM=dumb`, and whether stdout is a terminal).
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !matches!(
                anstream::AutoStream::choice(&io::stdout()),
                anstream::ColorChoice::Never
            ),
        }
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
        if matches!(self.state, State::Open) {
            let r = self.out.write_all(s.as_bytes());
            self.note_out(r);
        }
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

#[cfg(test)]
mod tests {
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
