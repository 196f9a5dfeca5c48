//! `rebind scan`, resolved once and run: the inventory, streamed in the
//! format asked for. [`ScanOptions`] (plain data) is resolved into one run
//! (the `--from` endpoints, the config, the walk) before any file is read;
//! [`run`] walks, lists each occurrence as its file is read, then looks up
//! the mentions of endpoints found only by their position (a second pass,
//! as `--from` would find them), and reports the files that do not parse.
//!
//! Unlike every other command, `scan` does not return its report to be
//! rendered once it is done: the report is written while the files are
//! read ([`crate::output::report::scan`], the one format dispatch that
//! streams), so that memory stays flat however large the tree
//! (docs/performance.md). What [`run`] returns says only that the report
//! is out ([`Reported::streamed`]) and how the run ends.

use crate::commands::cutover::Scope;
use crate::commands::pipeline::each_source;
use crate::edit::rewrite::{self, PlanError};
use crate::find::inventory::{Item, Source};
use crate::find::locate::Occurrence;
use crate::find::summary::Summary;
use crate::output::{json, report, Done, Exit, Format, Reported, Sink};
use crate::text::endpoint::Endpoint;
use anyhow::Result;

/// `rebind scan`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Only these endpoints (empty: every one).
    pub from: Vec<String>,
    pub scope: Scope,
    pub format: Format,
}

/// A YAML file that holds an endpoint but does not parse: an input error.
fn parse_error(src: &Source) -> Option<PlanError> {
    match &src.located {
        Err(e) if !e.occurrences.is_empty() => Some(PlanError {
            rel: src.entry.rel.clone(),
            line: e.line,
            column: e.column,
            message: format!(
                "not valid YAML ({}); its {} are listed as text{}",
                e.message,
                crate::text::words::count(e.occurrences.len(), "endpoint occurrence"),
                if e.occurrences
                    .iter()
                    .any(|o| o.kind == crate::find::locate::Kind::Template)
                {
                    " (inside a template action: as template)"
                } else {
                    ""
                }
            ),
            code: "invalid-yaml",
        }),
        _ => None,
    }
}

/// Records a workload endpoint in a value that was found only by where it
/// sits (its host has no managed shape), once.
fn note_position_endpoint(o: &Occurrence, out: &mut Vec<Endpoint>) {
    use crate::text::endpoint::Shape;
    if o.kind != crate::find::locate::Kind::Value
        || !o.cluster_position
        || o.shape() != Shape::Other
    {
        return;
    }
    let Ok(e) = Endpoint::parse("scan", &o.endpoint) else {
        return;
    };
    if !out.iter().any(|x| x.key() == e.key()) {
        out.push(e);
    }
}

/// Whether the second pass could list `o` (a first-pass occurrence) again:
/// only a mention (not a value) of a host of no managed shape can match an
/// endpoint found by its position. Only these are remembered, so what the
/// scan keeps grows with such mentions (each one a line of its output),
/// never with the files.
fn may_be_listed_again(o: &Occurrence) -> bool {
    o.kind != crate::find::locate::Kind::Value
        && crate::text::endpoint::shape(&o.found.host) == crate::text::endpoint::Shape::Other
}

/// The scan resolved from its flags: what to look for, where.
struct ScanRun {
    from: Vec<Endpoint>,
    hosts: Vec<String>,
    walk: crate::discover::walk::Walk,
}

fn resolve(a: &ScanOptions) -> Result<ScanRun> {
    let from = a
        .from
        .iter()
        .map(|f| Endpoint::parse("--from", f))
        .collect::<Result<Vec<_>>>()?;
    let hosts = from.iter().map(|e| e.host.to_ascii_lowercase()).collect();
    let cfg = a.scope.config()?;
    let walk = a.scope.discover_with(cfg.as_ref())?;
    Ok(ScanRun { from, hosts, walk })
}

/// Walks the tree, calling `each` for every occurrence as its file is
/// read; returns the summary, the skipped files and the parse errors.
/// `names`: the report shows cluster and tier names.
fn walk(run: &ScanRun, names: bool, each: json::Feed) -> Result<json::ScanRest> {
    let mut summary = if names {
        Summary::keeping_tier_names()
    } else {
        Summary::default()
    };
    let mut skipped = Vec::new();
    let mut errors = Vec::new();
    let mut listed = 0usize;
    let want = crate::find::locate::Want {
        only: false,
        names,
        arns: true,
    };
    // Endpoints found only by their position (no managed host shape): their
    // comment and text mentions are looked up in a second pass, as `--from`
    // would find them.
    let mut by_position: Vec<Endpoint> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut notes = Vec::new();
    let mut arn_clusters = Vec::new();
    each_source(&run.walk, &run.hosts, want, |item| match item {
        Item::Skipped(s) => skipped.push(s),
        Item::Note(n) => notes.push(n),
        Item::Arns(rel, arns) => arn_clusters.extend(arns.into_iter().map(|a| (rel.clone(), a))),
        Item::Source(mut src) => {
            if !run.from.is_empty() {
                let keep = |o: &Occurrence| run.from.iter().any(|f| rewrite::matches(o, f));
                match &mut src.located {
                    Ok(l) => l.occurrences.retain(keep),
                    Err(e) => e.occurrences.retain(keep),
                }
            }
            errors.extend(parse_error(&src));
            for o in src.occurrences() {
                each(&src.entry.rel, o);
                listed += 1;
                if run.from.is_empty() {
                    if may_be_listed_again(o) {
                        seen.insert((src.entry.rel.clone(), o.line, o.column));
                    }
                    note_position_endpoint(o, &mut by_position);
                }
            }
            summary.add(&src);
        }
    })?;
    if !by_position.is_empty() {
        let hosts: Vec<String> = by_position
            .iter()
            .map(|e| e.host.to_ascii_lowercase())
            .collect();
        let want = crate::find::locate::Want {
            only: true,
            names: false,
            arns: false,
        };
        each_source(&run.walk, &hosts, want, |item| {
            let Item::Source(mut src) = item else { return };
            let rel = src.entry.rel.clone();
            let keep = |o: &Occurrence| {
                o.kind != crate::find::locate::Kind::Value
                    && by_position.iter().any(|e| rewrite::matches(o, e))
                    && !seen.contains(&(rel.clone(), o.line, o.column))
            };
            match &mut src.located {
                Ok(l) => l.occurrences.retain(keep),
                Err(e) => e.occurrences.retain(keep),
            }
            for o in src.occurrences() {
                each(&src.entry.rel, o);
                listed += 1;
            }
            if !src.occurrences().is_empty() {
                summary.add_mentions(&src);
            }
        })?;
    }
    skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(json::ScanRest {
        listed,
        summary,
        skipped,
        errors,
        notes,
        arn_clusters,
    })
}

/// `rebind scan`: every occurrence in the format asked for; exit 2 when a
/// file that holds an endpoint does not parse.
pub fn run(a: &ScanOptions, sink: &mut Sink) -> Done {
    let run = resolve(a)?;
    let errors = report::scan(sink, a.format, |names, each| walk(&run, names, each))?;
    for e in &errors {
        sink.error(&e.to_string());
    }
    Ok(Reported::streamed(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Error
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::locate::Kind;

    /// What the first pass remembers for the second is bounded by the
    /// mentions that could be listed twice, not by the files or values.
    #[test]
    fn only_mentions_of_hosts_of_no_managed_shape_are_remembered() {
        let text = "kind: Application\nmetadata: {name: a}\nspec:\n  destination:\n    server: https://10.20.30.40:6443  # was https://kubernetes.default.svc\n  # see https://10.20.30.40:6443\n";
        let l = crate::find::locate::locate_yaml(text, &["10.20.30.40".into()], false).unwrap();
        let kept: Vec<(Kind, &str, bool)> = l
            .occurrences
            .iter()
            .map(|o| (o.kind, o.endpoint.as_str(), may_be_listed_again(o)))
            .collect();
        assert_eq!(
            kept,
            [
                (Kind::Value, "https://10.20.30.40:6443", false),
                (Kind::Comment, "https://kubernetes.default.svc", false),
                (Kind::Comment, "https://10.20.30.40:6443", true),
            ]
        );
    }
}
