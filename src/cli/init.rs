//! `rebind init`: writes `.rebind.yaml` from a scan, one cluster per
//! workload endpoint, with its current counts.
//!
//! Each cluster is named the way the manifests name it, in the order of
//! preference documented in `rebind::summary` (a name beside the endpoint,
//! the overlay folder, an Application aimed at it, the host); `cluster-N`
//! only when nothing names it, and never a URL. Two clusters given the same
//! name get `-2`, `-3`... suffixes.

use super::InitArgs;
use anyhow::anyhow;
use rebind::output::{count, json, Exit, Format, Outcome, Sink};
use rebind::summary::Summary;
use rebind::{config, each_source, walk, Item};
use std::path::{Path, PathBuf};

pub fn run(a: InitArgs, sink: &mut Sink) -> Outcome {
    let format = a.format.get();
    let root = a.path.unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        return Err(anyhow!("{}: not a directory", root.display()).into());
    }
    let target = root.join(config::FILE_NAME);
    if target.exists() {
        return Err(anyhow!(
            "{}: already exists; refusing to overwrite it",
            target.display()
        )
        .into());
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
    let mut clusters = summary.init_clusters();
    // A cluster's issuer where the tree shows both (a describe-cluster output).
    let described = rebind::oidc::described(&walk);
    for c in &mut clusters {
        let Ok(ep) = rebind::endpoint::Endpoint::parse("endpoint", &c.endpoint) else {
            continue;
        };
        let mut found = described.iter().filter(|(e, _, _)| e.key() == ep.key());
        let Some((_, issuer, first)) = found.next() else {
            continue;
        };
        if let Some((_, other, second)) = found.find(|(_, i, _)| i != issuer) {
            return Err(anyhow!(
                "{first} and {second} are describe-cluster outputs for {} with different OIDC issuers ({issuer}, {other}): remove the stale one; nothing written",
                c.endpoint
            )
            .into());
        }
        c.oidc_issuer = Some(issuer.clone());
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
    report(sink, format, &target, &clusters);
    Ok(Exit::Ok)
}

/// What `init` wrote, in the format asked for.
fn report(sink: &mut Sink, format: Format, target: &Path, clusters: &[config::InitCluster]) {
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
        return;
    }
    let mut msg = format!(
        "Wrote {} with {}:\n",
        target.display(),
        count(clusters.len(), "cluster")
    );
    for c in clusters {
        msg.push_str(&format!(
            "  {}: {} ({} in {})\n",
            c.name,
            c.endpoint,
            count(c.expect.occurrences.unwrap_or(0), "occurrence"),
            count(c.expect.files.unwrap_or(0), "file")
        ));
    }
    sink.say(&msg);
}
