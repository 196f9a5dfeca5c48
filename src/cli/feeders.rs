//! `rebind feeders`: the after-merge model of a tree, without a rebind.

use super::FeedersArgs;
use anyhow::{bail, Result};
use rebind::feeders;
use rebind::output::{self, Exit, Format, Sink};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub fn run(a: FeedersArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve("feeders", &[Format::Text, Format::Json])?;
    let path = a.path.unwrap_or_else(|| PathBuf::from("."));
    if !path.exists() {
        bail!("{}: no such file or directory", path.display());
    }
    let (root, model) = feeders::build(&path, a.base.as_deref(), None);
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for app in &model.apps {
        files.entry(app.file.clone()).or_default().push(app.id());
    }
    let files: Vec<(String, Vec<String>)> = files.into_iter().collect();
    let report = feeders::report(&model, &root, &files);
    match format {
        Format::Json => sink.out(&output::json::render(&output::feeders::FeedersReport::new(
            &root, &report,
        ))),
        _ => sink.say(&output::feeders::text(&report)),
    }
    Ok(Exit::Ok)
}
