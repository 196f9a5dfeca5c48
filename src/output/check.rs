//! `check`'s report: its findings (the shared [`Finding`] model) and the
//! files it could not read, in every format.

use super::finding::{rules, Finding, Rule};
use super::Report;
use super::{json, text, warn_skipped, Sink};
use crate::discover::walk::Skipped;

/// What `check` found.
pub struct CheckReport {
    pub findings: Vec<Finding<'static>>,
    pub skipped: Vec<Skipped>,
}

impl Report for CheckReport {
    fn text(&self, sink: &mut Sink) {
        sink.say(&text::check_text(&self.findings));
        warn_skipped(sink, &self.skipped);
    }
    fn json(&self, sink: &mut Sink) {
        sink.out(&json::render(&json::CheckReport::new(
            &self.findings,
            &self.skipped,
        )));
    }
    fn findings(&self) -> Vec<Finding<'_>> {
        self.findings.clone()
    }
    fn rules(&self) -> &'static [Rule] {
        &[
            rules::RETIRED,
            rules::UNKNOWN,
            rules::UNREAD,
            rules::UNCOMMITTED,
            rules::RETIRED_ISSUER,
            rules::ROLLBACK_REGISTRATION,
        ]
    }
    fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }
}
