//! `rebind scan`: the inventory, streamed.

use super::{warn_skipped, ScanArgs};
use anyhow::Result;
use rebind::endpoint::Endpoint;
use rebind::output::{json, text, Exit, Format, Sink};
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

pub fn run(a: ScanArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve("scan", &[Format::Text, Format::Json])?;
    let from = a
        .from
        .iter()
        .map(|f| Endpoint::parse("--from", f))
        .collect::<Result<Vec<_>>>()?;
    let hosts: Vec<String> = from.iter().map(|e| e.host.to_ascii_lowercase()).collect();
    let req = a.walk.request();
    let cfg = req.config()?;
    let walk = req.discover_with(cfg.as_ref())?;
    let mut summary = if format == Format::Json {
        Summary::keeping_tier_names()
    } else {
        Summary::default()
    };
    let mut skipped = Vec::new();
    let mut errors = Vec::new();
    let mut listed = 0usize;
    if format == Format::Json {
        sink.out(&json::scan_head());
    }
    // Cluster names show only in the JSON report (`cluster_name`).
    let want = rebind::locate::Want {
        only: false,
        names: format == Format::Json,
    };
    each_source(&walk, &hosts, want, |item| match item {
        Item::Skipped(s) => skipped.push(s),
        Item::Source(mut src) => {
            if !from.is_empty() {
                let keep =
                    |o: &rebind::locate::Occurrence| from.iter().any(|f| rewrite::matches(o, f));
                match &mut src.located {
                    Ok(l) => l.occurrences.retain(keep),
                    Err(e) => e.occurrences.retain(keep),
                }
            }
            errors.extend(parse_error(&src));
            for o in src.occurrences() {
                match format {
                    Format::Json => {
                        let sep = if listed == 0 { "\n" } else { ",\n" };
                        let one =
                            serde_json::to_string(&json::OccurrenceJson::new(&src.entry.rel, o))
                                .expect("an occurrence serialises");
                        sink.out(sep);
                        sink.out(&one);
                    }
                    _ => sink.say(&text::occurrence_line(&src.entry.rel, o)),
                }
                listed += 1;
            }
            summary.add(&src);
        }
    })?;
    skipped.sort_by(|a, b| a.rel.cmp(&b.rel));
    match format {
        Format::Json => sink.out(&json::scan_tail(&json::ScanTail::new(
            listed, &summary, &skipped, &errors,
        ))),
        _ => {
            sink.say(&text::scan_summary(&summary));
            warn_skipped(sink, &skipped);
        }
    }
    for e in &errors {
        sink.error(&e.to_string());
    }
    Ok(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Error
    })
}
