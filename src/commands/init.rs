//! `rebind init`, resolved and run: writes `.rebind.yaml` from a scan, one
//! cluster per workload endpoint, with its current counts.
//!
//! Each cluster is named the way the manifests name it, in the order of
//! preference documented in [`crate::find::summary`] (a name beside the endpoint,
//! the overlay folder, an Application aimed at it, the host); `cluster-N`
//! only when nothing names it, and never a URL. Two clusters given the same
//! name get `-2`, `-3`... suffixes.

use crate::commands::pipeline::each_source;
use crate::discover::walk;
use crate::find::inventory::Item;
use crate::find::summary::Summary;
use crate::model::config;
use crate::output::{json, Done, Exit, Parts, Reported};
use crate::text::words::count;
use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// `rebind init`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The repository root to scan and write `.rebind.yaml` into (default: `.`).
    pub path: Option<PathBuf>,
}

/// `rebind init`: scans the tree and writes `.rebind.yaml` (never over an
/// existing one), then reports what it declared.
pub fn run(a: &InitOptions) -> Done {
    let root = a.path.clone().unwrap_or_else(|| PathBuf::from("."));
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
    let walk = walk::discover(&crate::repo::git::walk_request(std::slice::from_ref(&root)))?;
    let mut summary = Summary::default();
    let want = crate::find::locate::Want {
        only: false,
        names: true,
        arns: false,
    };
    // A file holding endpoint text that does not parse: its counts cannot
    // be known, so nothing is written until it is fixed.
    let mut unparsed = Vec::new();
    each_source(&walk, &[], want, |item| {
        if let Item::Source(s) = item {
            if let Err(e) = &s.located {
                if !e.occurrences.is_empty() {
                    unparsed.push(format!(
                        "{}:{}:{}: not valid YAML ({}); it holds {}",
                        s.entry.rel,
                        e.line,
                        e.column,
                        e.message,
                        count(e.occurrences.len(), "endpoint occurrence")
                    ));
                }
            }
            summary.add(&s);
        }
    })?;
    if !unparsed.is_empty() {
        unparsed.sort();
        return Err(anyhow!(
            "{}\nthe counts a rebind must find cannot be known from files that do not parse: fix them (or take them out of the tree) and run init again; nothing written",
            unparsed.join("\n")
        )
        .into());
    }
    let mut clusters = summary.init_clusters();
    // A cluster's issuer where the tree shows both (a describe-cluster output).
    let described = crate::review::oidc::described(&walk);
    for c in &mut clusters {
        let Ok(ep) = crate::text::endpoint::Endpoint::parse("endpoint", &c.endpoint) else {
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
    // The EKS name, ARN and CA from the same describe-cluster outputs.
    let records = crate::model::cluster::described_in(&walk);
    for c in &mut clusters {
        let Ok(ep) = crate::text::endpoint::Endpoint::parse("endpoint", &c.endpoint) else {
            continue;
        };
        let of_it = records.iter().find(|(d, _)| {
            crate::text::endpoint::Endpoint::parse("endpoint", &d.endpoint)
                .is_ok_and(|e| e.key() == ep.key())
        });
        if let Some((d, _)) = of_it {
            c.identity = crate::model::cluster::Declared::of(d);
        }
    }
    let text = config::render_init(&clusters);
    config::parse(&target, &text)?;
    crate::edit::write::write_file(
        &target,
        text.as_bytes(),
        crate::edit::write::Mode::Keep,
        crate::edit::write::Existing::Refuse,
        &|_| Ok(()),
    )?;
    Ok(Reported::new(report(&target, &clusters), Exit::Ok))
}

/// What `init` wrote.
fn report(target: &Path, clusters: &[config::InitCluster]) -> Parts {
    let json = json::render(&json::InitReport {
        schema_version: crate::output::SCHEMA_VERSION,
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
    });
    let text = {
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
        msg
    };
    Parts::said(text, json)
}
