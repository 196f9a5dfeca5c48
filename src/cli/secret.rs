//! `rebind secret`: the ArgoCD cluster Secret (or ExternalSecret) for a server.

use super::SecretArgs;
use anyhow::{bail, Context, Result};
use rebind::endpoint::Endpoint;
use rebind::output::{json, Exit, Format, Sink};
use rebind::{git, inventory, secret, walk};
use std::io::Write;
use std::path::PathBuf;

/// Builds the Secret spec from the command line, reading the token and CA.
fn secret_spec(a: &SecretArgs) -> Result<secret::Spec> {
    let mut spec = secret::Spec::new(&a.name, &a.server)?;
    if let Some(n) = &a.secret_name {
        spec.secret_name = n.clone();
    }
    spec.namespace = a.namespace.clone();
    spec.server_name = a.server_name.clone();
    spec.ca_data = match (&a.ca_file, &a.ca_data) {
        (Some(f), _) => Some(secret::ca_from_file(f)?),
        (None, Some(d)) => {
            secret::validate_ca_data(d)?;
            Some(d.clone())
        }
        (None, None) => None,
    };
    spec.auth = if let (Some(c), Some(r)) = (&a.aws_cluster_name, &a.aws_role_arn) {
        secret::Auth::Aws {
            cluster_name: c.clone(),
            role_arn: r.clone(),
            profile: a.aws_profile.clone(),
        }
    } else if a.external_secret {
        secret::Auth::External {
            store: a.store.clone().unwrap_or_default(),
            store_kind: a.store_kind.clone(),
            key: a.key.clone().unwrap_or_default(),
        }
    } else if let Some(var) = &a.token_env {
        let token = std::env::var(var).unwrap_or_default();
        if token.is_empty() {
            bail!("--token-env {var}: the variable is not set or empty");
        }
        secret::Auth::Bearer { token }
    } else {
        secret::Auth::Bearer {
            token: secret::TOKEN_PLACEHOLDER.into(),
        }
    };
    spec.labels = a
        .label
        .iter()
        .map(|l| secret::parse_label(l))
        .collect::<Result<_>>()?;
    spec.annotations = a
        .annotation
        .iter()
        .map(|l| secret::parse_annotation(l))
        .collect::<Result<_>>()?;
    spec.project = a.project.clone();
    if let Some(ns) = &a.namespaces {
        if ns.split(',').any(|n| n.trim().is_empty()) {
            bail!("--namespaces {ns:?}: expected a comma-separated list of namespaces");
        }
        spec.namespaces = Some(ns.clone());
    }
    spec.cluster_resources = a.cluster_resources;
    Ok(spec)
}

/// Refuses to put a real token in a file inside a git work tree.
fn check_token_target(a: &SecretArgs) -> Result<()> {
    let (Some(var), Some(out)) = (&a.token_env, &a.out) else {
        return Ok(());
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if let Some(repo) = git::open(&dir)? {
        bail!(
            "--token-env {var} with --out {}: that path is inside the git work tree {}, and a real token must never land in a repository; write to stdout or to a path outside any repository",
            out.display(),
            repo.workdir().display()
        );
    }
    Ok(())
}

/// Warns on stderr about Secrets under `repo` that already declare `server`.
pub fn warn_existing(sink: &mut Sink, repo: &std::path::Path, server: &str) -> Result<()> {
    let host = Endpoint::parse("--server", server)?
        .host
        .to_ascii_lowercase();
    let inv = inventory(
        walk::discover(&walk::WalkRequest::for_paths(&[repo.to_path_buf()]))?,
        &[host],
        true,
    )?;
    for hit in secret::existing_for(&inv, server) {
        sink.warn(&format!("{hit} already declares server {server}; ArgoCD picks one of two Secrets for the same server at random"));
    }
    Ok(())
}

pub fn run(a: SecretArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a.format.resolve("secret", &[Format::Text, Format::Json])?;
    let spec = secret_spec(&a)?;
    check_token_target(&a)?;
    if a.repo.exists() {
        warn_existing(sink, &a.repo, &spec.server)?;
    }
    let yaml = secret::render(&spec);
    if let Some(path) = &a.out {
        write_file(path, &yaml, a.token_env.is_some())?;
    }
    match format {
        Format::Json => sink.out(&json::render(&json::SecretReport {
            schema_version: rebind::output::SCHEMA_VERSION,
            command: "secret",
            server: spec.server.clone(),
            // A real token is never printed into JSON that may be logged.
            manifest: (a.out.is_none() && a.token_env.is_none()).then(|| yaml.clone()),
            written_to: a.out.as_ref().map(|p| p.display().to_string()),
            existing: Vec::new(),
        })),
        _ if a.out.is_none() => sink.out(&yaml),
        _ => {}
    }
    Ok(Exit::Ok)
}

/// Writes `text` to `path`; owner-only permissions when it holds a real token.
pub fn write_file(path: &std::path::Path, text: &str, private: bool) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut f = opts
        .open(path)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}
