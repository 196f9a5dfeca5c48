//! `rebind scan`: the inventory, streamed.

use super::{warn_skipped, ScanArgs};
use anyhow::Result;
use rebind::endpoint::Endpoint;
use rebind::locate::Occurrence;
use rebind::output::{github, json, rules, sarif, text, Exit, Finding, Format, Outcome, Sink};
use rebind::rewrite::{self, PlanError};
use rebind::summary::Summary;
use rebind::{each_source, Item, Source};

/// A YAML file that holds an endpoint but does not parse: an input error.
fn parse_error(src: &Source) -> Option<PlanError> {
    match &src.located {
        Err(e) if !e.occurrences.is_empty() => Some(PlanError {
            rel: src.entry.rel.clone(),
            line: e.line,
            column: e.column,
            message: format!(
                "not valid YAML ({}); its {} are listed as text",
                e.message,
                rebind::output::count(e.occurrences.len(), "endpoint occurrence")
            ),
        }),
        _ => None,
    }
}

/// The scan resolved from its flags: what to look for, where, how to print.
struct ScanRun {
    format: Format,
    from: Vec<Endpoint>,
    hosts: Vec<String>,
    walk: rebind::walk::Walk,
}

fn resolve(a: &ScanArgs) -> Result<ScanRun> {
    let from = a
        .from
        .iter()
        .map(|f| Endpoint::parse("--from", f))
        .collect::<Result<Vec<_>>>()?;
    let hosts = from.iter().map(|e| e.host.to_ascii_lowercase()).collect();
    let req = a.walk.request();
    let cfg = req.config()?;
    let walk = req.discover_with(cfg.as_ref())?;
    Ok(ScanRun {
        format: a.format.get(),
        from,
        hosts,
        walk,
    })
}

/// Walks the tree, calling `each` for every occurrence as its file is
/// read; returns the summary, the skipped files and the parse errors.
fn walk(run: &ScanRun, each: json::Feed) -> Result<json::ScanRest> {
    let json = run.format == Format::Json;
    let mut summary = if json {
        Summary::keeping_tier_names()
    } else {
        Summary::default()
    };
    let mut skipped = Vec::new();
    let mut errors = Vec::new();
    let mut listed = 0usize;
    // Cluster names show only in the JSON report (`cluster_name`).
    let want = rebind::locate::Want {
        only: false,
        names: json,
    };
    each_source(&run.walk, &run.hosts, want, |item| match item {
        Item::Skipped(s) => skipped.push(s),
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
            }
            summary.add(&src);
        }
    })?;
    skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(json::ScanRest {
        listed,
        summary,
        skipped,
        errors,
    })
}

pub fn run(a: ScanArgs, sink: &mut Sink) -> Outcome {
    let run = resolve(&a)?;
    let errors = match run.format {
        Format::Json => {
            let mut errors = Vec::new();
            json::ScanStream::new(|each: json::Feed| {
                let rest = walk(&run, each)?;
                errors = rest.errors.clone();
                Ok(rest)
            })
            .write(sink.writer())?;
            errors
        }
        Format::Text => {
            let rest = walk(&run, &mut |rel, o| sink.say(&text::occurrence_line(rel, o)))?;
            sink.say(&text::scan_summary(&rest.summary));
            warn_skipped(sink, &rest.skipped);
            rest.errors
        }
        Format::Github => {
            let rest = walk(&run, &mut |rel, o| {
                sink.out(&github::line(&Finding::from_occurrence(rel, o)))
            })?;
            let errors: Vec<Finding> = rest.errors.iter().map(unparsed).collect();
            sink.out(&github::render(&errors));
            warn_skipped(sink, &rest.skipped);
            rest.errors
        }
        Format::Sarif => {
            // SARIF is one document with its results inside: collected, then written.
            let mut found: Vec<(String, Occurrence)> = Vec::new();
            let rest = walk(&run, &mut |rel, o| found.push((rel.to_string(), o.clone())))?;
            let mut findings: Vec<Finding> = found
                .iter()
                .map(|(rel, o)| Finding::from_occurrence(rel, o))
                .collect();
            findings.extend(rest.errors.iter().map(unparsed));
            sink.out(&sarif::render(
                &findings,
                &[rules::ENDPOINT, rules::ENDPOINT_MENTION, rules::UNPARSED],
            ));
            warn_skipped(sink, &rest.skipped);
            rest.errors
        }
    };
    for e in &errors {
        sink.error(&e.to_string());
    }
    Ok(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Error
    })
}

/// A file scan could not parse, as a finding.
fn unparsed(e: &PlanError) -> Finding<'_> {
    Finding {
        rule: rules::UNPARSED,
        ..Finding::from_error(e)
    }
}
