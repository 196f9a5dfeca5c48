//! The one place an output [`Format`] is told apart (a test fails on a
//! `Format::` variant named anywhere else in `src/` but the `--format`
//! flag's definition). A command returns its [`Report`] ([`Done`]) and
//! never renders it (`tests/it/one_report.rs`): the binary's entry hands
//! what the command returned to [`conclude`], which renders it through
//! [`rendered`] (the one caller of [`render`], which writes the parts the
//! format shows), then decides the exit code, signals included, and
//! renders a failure. Besides: what a command shows while it runs is
//! [`progress`]; `scan`'s report, written while the files are read so
//! that memory stays flat, is [`scan`]'s (the command returns
//! [`crate::output::Reported::streamed`]); `workspace` reads each
//! repository's `apply` report back through [`rendered`] in [`MACHINE`].

use super::json::{Feed, ScanRest};
use super::{github, json, rules, sarif, text, warn_skipped, Exit, Finding, Format};
use super::{Done, Outcome, Report, Sink};
use crate::edit::rewrite::PlanError;
use crate::find::locate::Occurrence;

/// The format one command reads another's report back in (`workspace`
/// reads each repository's `apply`).
pub const MACHINE: Format = Format::Json;

/// Writes `report` in `format`.
pub fn render(sink: &mut Sink, format: Format, report: &dyn Report) {
    match format {
        Format::Text => report.text(sink),
        Format::Json => report.json(sink),
        Format::Sarif => {
            sink.out(&sarif::render(&report.findings(), report.rules()));
            warn_skipped(sink, report.skipped());
        }
        Format::Github => {
            sink.out(&github::render(&report.findings()));
            warn_skipped(sink, report.skipped());
        }
    }
}

/// The one place a command's returned report is rendered: writes it in
/// `format`, and returns how the run ended, for [`conclude`] (the binary's
/// entry) or for the caller that reads it back (`workspace` reads each
/// repository's `apply` in [`MACHINE`]).
pub fn rendered(sink: &mut Sink, format: Format, done: Done) -> Outcome {
    let reported = done?;
    if let Some(report) = &reported.report {
        render(sink, format, &**report);
    }
    reported.end
}

/// Progress a command shows while it runs, before its report (the plan
/// shown before the question or the write): `show` writes it, told
/// whether stdout holds a machine document (then progress, if shown at
/// all, goes to stderr).
pub fn progress(sink: &mut Sink, format: Format, show: impl FnOnce(&mut Sink, bool)) {
    match format {
        Format::Text => show(sink, false),
        Format::Json | Format::Sarif | Format::Github => show(sink, true),
    }
}

/// `scan`'s report, written while the files are read so that memory stays
/// flat: `walk` runs once, told whether the report shows cluster and tier
/// names (JSON does), and feeds each occurrence to the format's writer as
/// its file is read; it returns the rest of the report. Returns the files
/// that did not parse.
pub fn scan(
    sink: &mut Sink,
    format: Format,
    walk: impl FnOnce(bool, Feed) -> anyhow::Result<ScanRest>,
) -> anyhow::Result<Vec<PlanError>> {
    let rest = match format {
        Format::Json => return Ok(json::scan(&mut sink.writer(), |each| walk(true, each))?.errors),
        Format::Text => {
            let rest = walk(false, &mut |rel, o| {
                sink.say(&text::occurrence_line(rel, o))
            })?;
            sink.say(&text::scan_summary(&rest.summary));
            sink.say(&super::names::arn_text(&rest.arn_clusters));
            if !rest.notes.is_empty() {
                sink.say(
                    "\nTemplated, not followed (chart template actions at cluster positions):\n",
                );
                for n in &rest.notes {
                    sink.say(&format!("  {n}\n"));
                }
            }
            warn_skipped(sink, &rest.skipped);
            return Ok(rest.errors);
        }
        Format::Github => {
            let rest = walk(false, &mut |rel, o| {
                sink.out(&github::line(&Finding::from_occurrence(rel, o)))
            })?;
            let errors: Vec<Finding> = rest.errors.iter().map(Finding::unparsed).collect();
            sink.out(&github::render(&errors));
            rest
        }
        Format::Sarif => {
            // SARIF is one document with its results inside: collected, then written.
            let mut found: Vec<(String, Occurrence)> = Vec::new();
            let rest = walk(false, &mut |rel, o| {
                found.push((rel.to_string(), o.clone()))
            })?;
            let mut findings: Vec<Finding> = found
                .iter()
                .map(|(rel, o)| Finding::from_occurrence(rel, o))
                .collect();
            findings.extend(rest.errors.iter().map(Finding::unparsed));
            let rules = [rules::ENDPOINT, rules::ENDPOINT_MENTION, rules::UNPARSED];
            sink.out(&sarif::render(&findings, &rules));
            rest
        }
    };
    // Chart template actions not followed: warnings, as these formats have
    // no place for them.
    warn_skipped(sink, &rest.skipped);
    for n in &rest.notes {
        sink.warn(&n.to_string());
    }
    Ok(rest.errors)
}

/// The one place a command's end becomes the process's exit code: its
/// returned report rendered ([`rendered`]), then, on failure, an error:
/// `error: ...` on stderr, and with `--format json` a JSON error report on
/// stdout unless the command's own report is already there.
/// Then stdout is flushed; a failure to write it fails the run. A run a
/// signal stopped is rendered as any failure, but exits `128 + signal`, as
/// shells expect.
pub fn conclude(sink: &mut Sink, command: &str, format: Format, done: Done) -> u8 {
    let outcome = rendered(sink, format, done);
    let interrupted = outcome.as_ref().err().and_then(|f| {
        f.error
            .chain()
            .find_map(|c| c.downcast_ref::<crate::sys::signals::Interrupted>())
            .copied()
    });
    let exit = concluded_exit(sink, command, format, outcome);
    interrupted.map_or(exit.code(), |i| i.exit_code())
}

fn concluded_exit(sink: &mut Sink, command: &str, format: Format, outcome: Outcome) -> Exit {
    let exit = match outcome {
        Ok(exit) => exit,
        Err(f) => {
            let message = format!("{:#}", f.error);
            sink.error(&message);
            // A machine format gets its own account of the failure, unless
            // the command's report is already out.
            if !sink.wrote_out() {
                let located: Vec<Finding> = f.located.iter().map(Finding::from_error).collect();
                match format {
                    Format::Json => {
                        let mut r = json::ErrorReport::new(command, &f.located, &message, f.code());
                        if let Some(a) = f.left_after_write() {
                            r = r.after_write(a);
                        }
                        if let Some(m) = f.only_mentioned() {
                            r = r.mentions(m);
                        }
                        sink.out(&json::render(&r))
                    }
                    Format::Sarif => sink.out(&sarif::render_failure(&located, &message)),
                    Format::Github => sink.out(&github::failure(&located, &message)),
                    Format::Text => {}
                }
            }
            f.exit
        }
    };
    match sink.finish() {
        Some(msg) => {
            sink.error(&msg);
            Exit::Error
        }
        None => exit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Failure, Reported};
    use std::io::{self, Write};

    /// A buffer both the sink and the test can see.
    #[derive(Clone, Default)]
    struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.borrow().clone()).unwrap()
        }
    }

    /// Concludes `outcome` in `format`, after `before` went to stdout:
    /// the exit and what reached stdout and stderr.
    fn concluded(format: Format, before: &str, outcome: Outcome) -> (Exit, String, String) {
        let (out, err) = (Shared::default(), Shared::default());
        let mut sink = Sink::new(Box::new(out.clone()), Box::new(err.clone()), false, false);
        sink.out(before);
        let exit = concluded_exit(&mut sink, "diff", format, outcome);
        (exit, out.text(), err.text())
    }

    #[test]
    fn a_signal_exits_128_plus_its_number_after_the_error_is_said() {
        let (out, err) = (Shared::default(), Shared::default());
        let mut sink = Sink::new(Box::new(out.clone()), Box::new(err.clone()), false, false);
        let stopped =
            anyhow::Error::new(crate::sys::signals::Interrupted(15)).context("nothing written");
        let code = conclude(&mut sink, "apply", Format::Text, Err(stopped.into()));
        assert_eq!(code, 143);
        assert!(
            err.text().starts_with("error: nothing written"),
            "{}",
            err.text()
        );
        let mut sink = Sink::new(Box::new(out.clone()), Box::new(err.clone()), false, false);
        assert_eq!(
            conclude(
                &mut sink,
                "diff",
                Format::Text,
                Ok(Reported::streamed(Exit::Pending))
            ),
            1
        );
    }

    #[test]
    fn the_failure_carries_its_exit_code() {
        assert_eq!(
            concluded(Format::Text, "", Ok(Exit::Pending)).0,
            Exit::Pending
        );
        let (exit, out, err) = concluded(Format::Text, "", Err(anyhow::anyhow!("bad --to").into()));
        assert_eq!(
            (exit, out.as_str(), err.as_str()),
            (Exit::Error, "", "error: bad --to\n")
        );
        let after = Failure::after_write(anyhow::anyhow!("push failed"));
        let (exit, _, err) = concluded(Format::Text, "", Err(after));
        assert_eq!((exit.code(), err.as_str()), (3, "error: push failed\n"));
    }

    /// Concludes what a command returned, in `format`: the exit code and
    /// what reached stdout and stderr.
    fn concluded_done(format: Format, done: Done) -> (u8, String, String) {
        let (out, err) = (Shared::default(), Shared::default());
        let mut sink = Sink::new(Box::new(out.clone()), Box::new(err.clone()), false, false);
        let code = conclude(&mut sink, "diff", format, done);
        (code, out.text(), err.text())
    }

    #[test]
    fn the_returned_report_is_rendered_once_then_its_end_concluded() {
        let report = || crate::output::Parts::said("plan\n".into(), "{\"a\":1}\n".into());
        let ok = |format| concluded_done(format, Ok(Reported::new(report(), Exit::Pending)));
        assert_eq!(ok(Format::Text), (1, "plan\n".into(), String::new()));
        assert_eq!(ok(Format::Json), (1, "{\"a\":1}\n".into(), String::new()));
        // A report, then the failure it ends in: the report is the one JSON
        // document; the error follows on stderr.
        let failed = |format| {
            let f = Failure::from(anyhow::anyhow!("1 file cannot be rewritten"));
            concluded_done(format, Ok(Reported::failed(report(), f)))
        };
        let (code, out, err) = failed(Format::Json);
        assert_eq!((code, out.as_str()), (2, "{\"a\":1}\n"));
        assert_eq!(err, "error: 1 file cannot be rewritten\n");
        assert_eq!(failed(Format::Text).1, "plan\n");
        // A report that shows nothing in JSON leaves room for the error's.
        let f = Failure::from(anyhow::anyhow!("no"));
        let only_text = crate::output::Parts::said("x\n".into(), String::new());
        let (_, out, _) = concluded_done(Format::Json, Ok(Reported::failed(only_text, f)));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&out).unwrap()["errors"][0]["message"],
            "no"
        );
        // A streamed report is already out: nothing more is written.
        let (code, out, _) = concluded_done(Format::Sarif, Ok(Reported::streamed(Exit::Ok)));
        assert_eq!((code, out.as_str()), (0, ""));
    }

    #[test]
    fn a_failure_is_reported_in_the_machine_format_once() {
        let (exit, out, _) = concluded(Format::Json, "", Err(anyhow::anyhow!("bad --to").into()));
        assert_eq!(exit, Exit::Error);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["command"], "diff");
        assert_eq!(v["errors"][0]["message"], "bad --to");
        assert!(v["errors"][0]["path"].is_null());
        // The command's own report is out: no second document.
        let (_, out, _) = concluded(Format::Json, "{}\n", Err(anyhow::anyhow!("x").into()));
        assert_eq!(out, "{}\n");
        let located = crate::edit::rewrite::PlanError {
            rel: "a b.yaml".into(),
            line: 2,
            column: 3,
            message: "not valid YAML".into(),
            code: "invalid-yaml",
        };
        let f = Failure::from(anyhow::anyhow!("1 file cannot be rewritten")).at(&[located]);
        let (_, out, _) = concluded(Format::Github, "", Err(f));
        assert_eq!(out, "::error file=a b.yaml,line=2,col=3::not valid YAML\n");
        let (_, out, _) = concluded(Format::Github, "", Err(anyhow::anyhow!("50%").into()));
        assert_eq!(out, "::error::50%25\n");
        let (_, out, _) = concluded(Format::Sarif, "", Err(anyhow::anyhow!("no config").into()));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["runs"][0]["invocations"][0]["executionSuccessful"], false);
        let (_, out, _) = concluded(Format::Text, "", Err(anyhow::anyhow!("x").into()));
        assert_eq!(out, "");
    }
}
