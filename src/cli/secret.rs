//! `rebind secret`: the ArgoCD cluster Secret (or ExternalSecret) for a server.

use super::SecretArgs;
use anyhow::Result;
use rebind::output::{json, Exit, Format, Sink};
use rebind::secret;
use std::path::Path;

pub fn run(a: SecretArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve("secret", &[Format::Text, Format::Json])?;
    let spec = secret::spec(&a.opts, &a.name, &a.server)?;
    // Before anything is searched or written: may --out take this manifest?
    if let Some(out) = &a.out {
        secret::check_target(out, spec.holds_token())?;
    }
    let warnings = secret::existing_warnings(a.repo.as_deref(), Path::new("."), &spec)?;
    if !warnings.is_empty() {
        sink.info(&warnings);
    }
    let yaml = secret::render(&spec);
    if let Some(path) = &a.out {
        secret::write_manifest(path, &yaml, spec.holds_token())?;
    }
    match format {
        Format::Json => sink.out(&json::render(&json::SecretReport {
            schema_version: rebind::output::SCHEMA_VERSION,
            command: "secret",
            server: spec.server.clone(),
            // A real token is never printed into JSON that may be logged.
            manifest: (a.out.is_none() && !spec.holds_token()).then(|| yaml.clone()),
            written_to: a.out.as_ref().map(|p| p.display().to_string()),
            existing: warnings.lines().map(str::to_string).collect(),
        })),
        _ if a.out.is_none() => sink.out(&yaml),
        _ => {}
    }
    Ok(Exit::Ok)
}
