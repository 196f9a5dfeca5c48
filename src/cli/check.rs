//! `rebind check`: fails on retired or undeclared endpoints (pre-commit, CI).

use super::CheckArgs;
use anyhow::Result;
use rebind::output::warn_skipped;
use rebind::output::{github, json, rules, sarif, text, Exit, Finding, Format, Outcome, Sink};
use rebind::{check, config, inventory, walk};
use std::path::PathBuf;

/// The config and the walk `check` runs on, from its flags.
fn resolve(a: &CheckArgs) -> Result<(config::Config, walk::Walk)> {
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
    Ok((cfg, walk))
}

pub fn run(a: CheckArgs, sink: &mut Sink) -> Outcome {
    let format = a.format.get();
    let (cfg, walk) = resolve(&a)?;
    let hosts: Vec<String> = cfg
        .clusters
        .iter()
        .flat_map(|c| c.retired.iter().map(|r| r.host.to_ascii_lowercase()))
        .collect();
    let inv = inventory(&walk, &hosts, false)?;
    let mut found = check::check(&inv, &cfg, a.allow_unknown);
    if cfg.clusters.iter().any(|c| !c.retired_oidc.is_empty()) {
        found.extend(check::retired_issuers(
            &rebind::oidc::inventory(&walk),
            &cfg,
        ));
    }
    let failed = found.iter().any(|f| f.severity == check::Severity::Error);
    let findings: Vec<Finding> = found.iter().map(Finding::from_check).collect();
    match format {
        Format::Json => sink.out(&json::render(&json::CheckReport::new(
            &findings,
            &inv.skipped,
        ))),
        Format::Sarif => sink.out(&sarif::render(
            &findings,
            &[
                rules::RETIRED,
                rules::UNKNOWN,
                rules::UNREAD,
                rules::RETIRED_ISSUER,
            ],
        )),
        Format::Github => sink.out(&github::render(&findings)),
        Format::Text => {
            let fixes: Vec<&str> = found.iter().filter_map(|f| f.fix.as_deref()).collect();
            sink.say(&text::check_text(&findings, &fixes))
        }
    }
    if format != Format::Json {
        warn_skipped(sink, &inv.skipped);
    }
    Ok(if failed { Exit::Pending } else { Exit::Ok })
}
