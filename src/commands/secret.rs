//! `rebind secret`, resolved and run: the cluster Secret (or
//! ExternalSecret) for a server, printed or written, with a warning when
//! the repository already registers that server.

use crate::output::{json, Done, Exit, Parts, Reported, Sink};
use crate::review::secret::{self, SecretOptions};
use std::path::{Path, PathBuf};

/// `rebind secret`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct SecretCommand {
    /// ArgoCD's name for the cluster.
    pub name: String,
    /// The cluster's API server URL.
    pub server: String,
    /// Write the manifest here instead of stdout.
    pub out: Option<PathBuf>,
    /// The repository to search for registrations of the server (default:
    /// the work tree around `.`).
    pub repo: Option<PathBuf>,
    pub options: SecretOptions,
}

/// `rebind secret`: validates the Secret, checks `out` before anything is
/// searched or written, warns of a registration the repository already
/// holds for the server, and prints or writes the manifest.
pub fn run(a: &SecretCommand, sink: &mut Sink) -> Done {
    let spec = secret::spec(&a.options, &a.name, &a.server)?;
    // Before anything is searched or written: may --out take this manifest?
    if let Some(out) = &a.out {
        secret::check_target(out, spec.holds_token())?;
    }
    let root = a
        .repo
        .clone()
        .or_else(|| secret::search_root(Path::new(".")));
    secret::refuse_name_collisions(root.as_deref(), &spec, None)?;
    let warnings = secret::existing_warnings(a.repo.as_deref(), Path::new("."), &spec)?;
    if !warnings.is_empty() {
        sink.info(&warnings);
    }
    let yaml = secret::render(&spec);
    if let Some(path) = &a.out {
        secret::write_manifest(path, &yaml, spec.holds_token())?;
    }
    let existing: Vec<String> = warnings.lines().map(str::to_string).collect();
    let json = json::render(&json::SecretReport {
        schema_version: crate::output::SCHEMA_VERSION,
        command: "secret",
        server: spec.server.clone(),
        // A real token is never printed into JSON that may be logged.
        manifest: (a.out.is_none() && !spec.holds_token()).then(|| yaml.clone()),
        written_to: a.out.as_ref().map(|p| p.display().to_string()),
        warnings: crate::output::codes::coded(
            crate::output::codes::EXISTING_REGISTRATION,
            "existing",
            &existing,
        )
        .collect(),
        existing,
    });
    // The manifest itself, unless it went to a file.
    let to_stdout = a.out.is_none();
    let text = move |sink: &mut Sink| {
        if to_stdout {
            sink.out(&yaml)
        }
    };
    Ok(Reported::new(Parts::new(text, json), Exit::Ok))
}
