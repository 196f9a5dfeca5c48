//! The commands: each resolved once from plain options (no argument-parser
//! types) and run by one entry point, on the shared read pipeline.
//!
//! An entry point (`run`, `diff`) returns its report, not yet rendered
//! ([`crate::output::Done`]: the report and the exit code, a report then
//! the failure it ends in, or a failure before any report); its caller
//! renders it, once ([`crate::output::report::rendered`], from the
//! binary's `conclude`). A command takes the [`crate::output::Sink`] only
//! for what it shows while it runs: warnings, what a push says, the plan
//! before the question ([`crate::output::report::progress`]). Two
//! exceptions, each said in its module: `scan` writes its report while it
//! reads the files (flat memory), and `workspace` renders each
//! repository's `apply` report into its own sink to read it back as JSON.
//! `tests/it/one_report.rs` fails on a command that renders its own
//! report.

pub mod apply;
pub mod check;
pub mod cutover;
pub mod feeders;
pub mod identity;
pub mod init;
pub mod pipeline;
pub mod scan;
pub mod secret;
pub mod unseen;
pub mod workspace;
