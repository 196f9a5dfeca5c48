//! `rebind init`: writes `.rebind.yaml` from a scan, one cluster per
//! workload endpoint, with its current counts.
//!
//! Each cluster is named the way the manifests name it, in the order of
//! preference documented in `rebind::summary` (a name beside the endpoint,
//! the overlay folder, an Application aimed at it, the host); `cluster-N`
//! only when nothing names it, and never a URL. Two clusters given the same
//! name get `-2`, `-3`... suffixes.

use super::InitArgs;
use anyhow::{bail, Result};
use rebind::output::{count, json, Exit, Format, Sink};
use rebind::summary::Summary;
use rebind::{config, each_source, walk, Item};
use std::path::PathBuf;

pub fn run(a: InitArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve("init", &[Format::Text, Format::Json])?;
    let root = a.path.unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        bail!("{}: not a directory", root.display());
    }
    let target = root.join(config::FILE_NAME);
    if target.exists() {
        bail!(
            "{}: already exists; refusing to overwrite it",
            target.display()
        );
    }
    let walk = walk::discover(&walk::WalkRequest::for_paths(std::slice::from_ref(&root)))?;
    let mut summary = Summary::default();
    let want = rebind::locate::Want {
        only: false,
        names: true,
    };
    each_source(&walk, &[], want, |item| {
        if let Item::Source(s) = item {
            summary.add(&s);
        }
    })?;
    let mut used = std::collections::BTreeSet::new();
    let mut clusters = Vec::new();
    for (i, t) in summary.workload().into_iter().enumerate() {
        let mut name = t
            .best_hint()
            .map(str::to_string)
            .unwrap_or_else(|| format!("cluster-{}", i + 1));
        let base = name.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        clusters.push(config::InitCluster {
            name,
            endpoint: t.display.clone(),
            expect: config::Expect {
                files: Some(t.value_files),
                occurrences: Some(t.values),
            },
        });
    }
    let text = config::render_init(&clusters);
    config::parse(&target, &text)?;
    rebind::write::write_file(
        &target,
        text.as_bytes(),
        rebind::write::Mode::Keep,
        rebind::write::Existing::Refuse,
        &|_| Ok(()),
    )?;
    if format == Format::Json {
        sink.out(&json::render(&json::InitReport {
            schema_version: rebind::output::SCHEMA_VERSION,
            command: "init",
            config: target.display().to_string(),
            clusters: clusters
                .iter()
                .map(|c| json::InitClusterJson {
                    name: c.name.clone(),
                    endpoint: c.endpoint.clone(),
                    file_count: c.expect.files.unwrap_or(0),
                    occurrence_count: c.expect.occurrences.unwrap_or(0),
                })
                .collect(),
            written: true,
        }));
        return Ok(Exit::Ok);
    }
    let mut msg = format!(
        "Wrote {} with {}:\n",
        target.display(),
        count(clusters.len(), "cluster")
    );
    for c in &clusters {
        msg.push_str(&format!(
            "  {}: {} ({} in {})\n",
            c.name,
            c.endpoint,
            count(c.expect.occurrences.unwrap_or(0), "occurrence"),
            count(c.expect.files.unwrap_or(0), "file")
        ));
    }
    sink.say(&msg);
    Ok(Exit::Ok)
}
