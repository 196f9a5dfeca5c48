//! `rebind feeders`, resolved and run: the after-merge model of a tree,
//! without a rebind. What a rebind could rewrite (every Application
//! manifest, and every file holding a workload endpoint in a value) is
//! given to the [`report`](super::report), which [`run`] returns.

use crate::commands::pipeline::inventory;
use crate::discover::walk;
use crate::find::locate::Kind;
use crate::output::{self, Done, Exit, Parts, Reported};
use crate::review::feeders;
use crate::text::endpoint::Shape;
use anyhow::anyhow;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `rebind feeders`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct FeedersOptions {
    /// The tree to read (default: `.`).
    pub path: Option<PathBuf>,
    /// The branch a cutover merges into.
    pub base: Option<String>,
    /// The live Applications and ApplicationSets.
    pub live: Option<PathBuf>,
}

/// `rebind feeders`: the report; exit 0.
pub fn run(a: &FeedersOptions) -> Done {
    let path = a.path.clone().unwrap_or_else(|| PathBuf::from("."));
    if !path.exists() {
        return Err(anyhow!("{}: no such file or directory", path.display()).into());
    }
    let cfg = match crate::model::config::find(&path) {
        Some(found) => Some(crate::model::config::load(&found)?),
        None => None,
    };
    let (root, mut model) = feeders::build(&path, a.base.as_deref(), None, cfg.as_ref());
    feeders::declare_all(&mut model, &root, cfg.as_ref());
    let live = feeders::read_live(&mut model, a.live.as_deref())?;
    // What a rebind could rewrite: every Application manifest, and every
    // file holding a workload endpoint in a value (or, not parsed, in text).
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for app in model.apps.iter().filter(|a| root.join(&a.file).is_file()) {
        files.entry(app.file.clone()).or_default().push(app.id());
    }
    // The files a rebind reads: the config's include/exclude when there is
    // one, as `diff` and `apply` read them.
    let request = match &cfg {
        Some(c) => walk::WalkRequest {
            paths: vec![root.clone()],
            root: Some(c.root()),
            include: c.include.clone(),
            exclude: c.exclude.clone(),
            config_path: Some(c.path.clone()),
            tracked_hidden: crate::repo::git::tracked_hidden(std::slice::from_ref(&root)),
        },
        None => crate::repo::git::walk_request(std::slice::from_ref(&root)),
    };
    let walk = walk::discover(&request)?;
    let inv = inventory(&walk, &[], false)?;
    for src in &inv.sources {
        let Ok(rel) = src.entry.path.canonicalize().map(|p| {
            p.strip_prefix(&root)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default()
        }) else {
            continue;
        };
        // A file that does not parse but holds a workload endpoint is one
        // a rebind refuses: it gets its row too (never left out silently).
        let unread = src.located.is_err();
        for o in src.occurrences() {
            if unread && o.shape() != Shape::InCluster {
                files.entry(rel.clone()).or_default();
            }
            if o.kind == Kind::Value && o.cluster_position && o.shape() != Shape::InCluster {
                let resources = files.entry(rel.clone()).or_default();
                if let Some(r) = &o.resource {
                    if !resources.contains(r) {
                        resources.push(r.clone());
                    }
                }
            }
        }
    }
    let files: Vec<(String, Vec<String>)> = files.into_iter().collect();
    let mut report = feeders::report(&model, &root, &files);
    report.live = live;
    let text = output::feeders::text(&report);
    let json = output::json::render(&output::feeders::FeedersReport::new(&root, &report));
    Ok(Reported::new(Parts::said(text, json), Exit::Ok))
}
