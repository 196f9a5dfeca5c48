//! `rebind check`: fails on retired or undeclared endpoints (pre-commit, CI).

use super::{warn_skipped, CheckArgs};
use anyhow::Result;
use rebind::output::{json, text, Exit, Format, Sink};
use rebind::{check, config, inventory, walk};
use std::path::PathBuf;

pub fn run(a: CheckArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve(
        "check",
        &[Format::Text, Format::Json, Format::Sarif, Format::Github],
    )?;
    let start = a
        .files
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let path = match &a.config {
        Some(p) => p.clone(),
        None => config::find(&start).ok_or_else(|| {
            anyhow::anyhow!(
                "no {} found above {}; run `rebind init` first",
                config::FILE_NAME,
                start.display()
            )
        })?,
    };
    let cfg = config::load(&path)?;
    let paths = if a.files.is_empty() {
        vec![cfg.root()]
    } else {
        a.files.clone()
    };
    let walk = walk::discover(&walk::WalkRequest {
        paths,
        root: Some(cfg.root()),
        include: cfg.include.clone(),
        exclude: cfg.exclude.clone(),
        config_path: Some(cfg.path.clone()),
    })?;
    let hosts: Vec<String> = cfg
        .clusters
        .iter()
        .flat_map(|c| c.retired.iter().map(|r| r.host.to_ascii_lowercase()))
        .collect();
    let inv = inventory(&walk, &hosts, false)?;
    let findings = check::check(&inv, &cfg, a.allow_unknown);
    let failed = findings
        .iter()
        .any(|f| f.severity == check::Severity::Error);
    match format {
        Format::Json => sink.out(&json::render(&json::CheckReport::new(
            &findings,
            &inv.skipped,
        ))),
        Format::Sarif => sink.out(&format!("{:#}\n", json::check_sarif(&findings))),
        Format::Github => sink.out(&text::check_github(&findings)),
        Format::Text => sink.say(&text::check_text(&findings)),
    }
    if format != Format::Json {
        warn_skipped(sink, &inv.skipped);
    }
    Ok(if failed { Exit::Pending } else { Exit::Ok })
}
