//! The ArgoCD cluster Secret for an endpoint: the bearer-token form, the EKS
//! `awsAuthConfig` form and an external-secrets.io `ExternalSecret` that
//! renders it. Rendering only; `cli` decides where the text goes.
//!
//! The token is never invented: it is the `${ARGOCD_CLUSTER_TOKEN}`
//! placeholder unless the caller passes a value read from the environment.

use crate::endpoint::Endpoint;
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::Path;

/// Placeholder for the bearer token, ready for `envsubst`.
pub const TOKEN_PLACEHOLDER: &str = "${ARGOCD_CLUSTER_TOKEN}";
/// Placeholder for the CA bundle, ready for `envsubst`.
pub const CA_PLACEHOLDER: &str = "${ARGOCD_CLUSTER_CA}";
/// Label that makes a Secret an ArgoCD cluster.
pub const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// How ArgoCD authenticates to the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// A static service-account token (placeholder or value).
    Bearer { token: String },
    /// EKS: ArgoCD assumes the role; the Secret holds no secret.
    Aws {
        cluster_name: String,
        role_arn: String,
        profile: Option<String>,
    },
    /// An ExternalSecret whose template renders the Secret from a store.
    External {
        store: String,
        store_kind: String,
        key: String,
    },
}

/// Everything that goes into the manifest.
#[derive(Debug, Clone)]
pub struct Spec {
    /// ArgoCD's cluster name (`stringData.name`).
    pub name: String,
    /// The server URL as given.
    pub server: String,
    pub secret_name: String,
    pub namespace: String,
    pub server_name: Option<String>,
    /// Base64 CA bundle, or `None` for the placeholder.
    pub ca_data: Option<String>,
    pub auth: Auth,
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<(String, String)>,
    pub project: Option<String>,
    pub namespaces: Option<String>,
    pub cluster_resources: Option<bool>,
}

impl Spec {
    /// The default bearer-token spec for `name` and `server`.
    pub fn new(name: &str, server: &str) -> Result<Spec> {
        validate_name(name)?;
        validate_server(server)?;
        Ok(Spec {
            name: name.to_string(),
            server: server.to_string(),
            secret_name: format!("cluster-{name}"),
            namespace: "argocd".into(),
            server_name: None,
            ca_data: None,
            auth: Auth::Bearer {
                token: TOKEN_PLACEHOLDER.into(),
            },
            labels: Vec::new(),
            annotations: Vec::new(),
            project: None,
            namespaces: None,
            cluster_resources: None,
        })
    }
}

fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        bail!("--name: the cluster name must not be empty");
    }
    Ok(())
}

/// The server must be an absolute `https://` URL and not the in-cluster one.
pub fn validate_server(server: &str) -> Result<()> {
    let e = Endpoint::parse("--server", server)?;
    if e.is_in_cluster() {
        bail!("--server {server}: the in-cluster API server needs no cluster Secret (ArgoCD has it built in)");
    }
    Ok(())
}

fn valid_label_part(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.as_bytes()[s.len() - 1].is_ascii_alphanumeric()
}

fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    prefix.is_none_or(|p| {
        p.len() <= 253
            && p.split('.')
                .all(|l| valid_label_part(l, 63) && !l.contains('_'))
    }) && valid_label_part(name, 63)
}

/// Parses a `--label k=v` (Kubernetes label syntax).
pub fn parse_label(s: &str) -> Result<(String, String)> {
    let Some((k, v)) = s.split_once('=') else {
        bail!("--label {s:?}: expected KEY=VALUE");
    };
    if !valid_key(k) {
        bail!("--label {s:?}: {k:?} is not a valid label key");
    }
    if !(v.is_empty() || valid_label_part(v, 63)) {
        bail!("--label {s:?}: {v:?} is not a valid label value (at most 63 of A-Z a-z 0-9 - _ ., starting and ending alphanumeric)");
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parses an `--annotation k=v` (any value).
pub fn parse_annotation(s: &str) -> Result<(String, String)> {
    let Some((k, v)) = s.split_once('=') else {
        bail!("--annotation {s:?}: expected KEY=VALUE");
    };
    if !valid_key(k) {
        bail!("--annotation {s:?}: {k:?} is not a valid annotation key");
    }
    Ok((k.to_string(), v.to_string()))
}

/// Reads a PEM CA bundle and returns it base64-encoded, as `caData` wants it.
pub fn ca_from_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("--ca-file {}: cannot read", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    if !text.contains("-----BEGIN CERTIFICATE-----") || !text.contains("-----END CERTIFICATE-----")
    {
        bail!(
            "--ca-file {}: not a PEM certificate bundle (no BEGIN/END CERTIFICATE block)",
            path.display()
        );
    }
    Ok(base64(&bytes))
}

/// Checks a `--ca-data` value is base64.
pub fn validate_ca_data(s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.len().is_multiple_of(4)
        && s.trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if !ok {
        bail!("--ca-data: not base64 (the PEM bundle base64-encoded, as in a kubeconfig's certificate-authority-data)");
    }
    Ok(())
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A YAML scalar for `s`: plain when unambiguous, else double-quoted (JSON escaping).
fn scalar(s: &str) -> String {
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "" | "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    let numeric = s.parse::<f64>().is_ok() || s.starts_with("0x") || s.starts_with("0o");
    let plain = !reserved
        && !numeric
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@+=".contains(&b))
        && !s.ends_with(':')
        && !s.contains("${");
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string always serialises")
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serialises")
}

/// The `config` JSON: fixed key order as in ArgoCD's examples, two-space indent.
fn config_json(spec: &Spec, token: Option<&str>, ca: &str) -> String {
    let mut j = String::from("{\n");
    match &spec.auth {
        Auth::Aws {
            cluster_name,
            role_arn,
            profile,
        } => {
            let _ = write!(
                j,
                "  \"awsAuthConfig\": {{\n    \"clusterName\": {},\n    \"roleARN\": {}",
                json_str(cluster_name),
                json_str(role_arn)
            );
            if let Some(p) = profile {
                let _ = write!(j, ",\n    \"profile\": {}", json_str(p));
            }
            j.push_str("\n  },\n");
        }
        _ => {
            let _ = writeln!(
                j,
                "  \"bearerToken\": {},",
                json_str(token.unwrap_or(TOKEN_PLACEHOLDER))
            );
        }
    }
    let _ = write!(
        j,
        "  \"tlsClientConfig\": {{\n    \"insecure\": false,\n    \"caData\": {}",
        json_str(ca)
    );
    if let Some(sni) = &spec.server_name {
        let _ = write!(j, ",\n    \"serverName\": {}", json_str(sni));
    }
    j.push_str("\n  }\n}");
    j
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

fn map_block(out: &mut String, key: &str, pairs: &[(String, String)], at: usize) {
    if pairs.is_empty() {
        return;
    }
    let pad = " ".repeat(at);
    let _ = writeln!(out, "{pad}{key}:");
    for (k, v) in pairs {
        let _ = writeln!(out, "{pad}  {}: {}", scalar(k), scalar(v));
    }
}

/// The cluster's `name`, `server` and optional fields, at indentation `at`.
fn cluster_fields(out: &mut String, spec: &Spec, at: usize) {
    let pad = " ".repeat(at);
    let _ = writeln!(out, "{pad}name: {}", scalar(&spec.name));
    let _ = writeln!(out, "{pad}server: {}", scalar(&spec.server));
    if let Some(p) = &spec.project {
        let _ = writeln!(out, "{pad}project: {}", scalar(p));
    }
    if let Some(n) = &spec.namespaces {
        let _ = writeln!(out, "{pad}namespaces: {}", scalar(n));
    }
    if let Some(c) = spec.cluster_resources {
        let _ = writeln!(out, "{pad}clusterResources: \"{c}\"");
    }
}

/// Renders the manifest.
pub fn render(spec: &Spec) -> String {
    let ca = spec.ca_data.as_deref().unwrap_or(CA_PLACEHOLDER);
    let mut labels = vec![(SECRET_TYPE_LABEL.to_string(), "cluster".to_string())];
    labels.extend(
        spec.labels
            .iter()
            .filter(|(k, _)| k != SECRET_TYPE_LABEL)
            .cloned(),
    );
    let mut y = String::new();
    match &spec.auth {
        Auth::External {
            store,
            store_kind,
            key,
        } => {
            let token = "{{ .token }}";
            let ca_ref = if spec.ca_data.is_some() {
                ca
            } else {
                "{{ .caData }}"
            };
            let _ = writeln!(
                y,
                "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:"
            );
            let _ = writeln!(
                y,
                "  name: {}\n  namespace: {}",
                scalar(&spec.secret_name),
                scalar(&spec.namespace)
            );
            let _ = writeln!(y, "spec:\n  refreshInterval: 1h\n  secretStoreRef:");
            let _ = writeln!(
                y,
                "    kind: {}\n    name: {}",
                scalar(store_kind),
                scalar(store)
            );
            let _ = writeln!(
                y,
                "  target:\n    name: {}\n    creationPolicy: Owner",
                scalar(&spec.secret_name)
            );
            let _ = writeln!(
                y,
                "    template:\n      engineVersion: v2\n      type: Opaque\n      metadata:"
            );
            map_block(&mut y, "labels", &labels, 8);
            map_block(&mut y, "annotations", &spec.annotations, 8);
            y.push_str("      data:\n");
            cluster_fields(&mut y, spec, 8);
            y.push_str("        config: |\n");
            y.push_str(&indent(&config_json(spec, Some(token), ca_ref), 10));
            y.push_str("  data:\n");
            let mut refs = vec![("token", "token")];
            if spec.ca_data.is_none() {
                refs.push(("caData", "caData"));
            }
            for (secret_key, property) in refs {
                let _ = writeln!(
                    y,
                    "    - secretKey: {secret_key}\n      remoteRef:\n        key: {}\n        property: {property}",
                    scalar(key)
                );
            }
        }
        auth => {
            let token = match auth {
                Auth::Bearer { token } => Some(token.as_str()),
                _ => None,
            };
            let _ = writeln!(y, "apiVersion: v1\nkind: Secret\nmetadata:");
            let _ = writeln!(
                y,
                "  name: {}\n  namespace: {}",
                scalar(&spec.secret_name),
                scalar(&spec.namespace)
            );
            map_block(&mut y, "labels", &labels, 2);
            map_block(&mut y, "annotations", &spec.annotations, 2);
            y.push_str("type: Opaque\nstringData:\n");
            cluster_fields(&mut y, spec, 2);
            y.push_str("  config: |\n");
            y.push_str(&indent(&config_json(spec, token, ca), 4));
        }
    }
    y
}

/// Cluster Secrets and ExternalSecret templates in `inv` whose server equals
/// `server` (host case-insensitive, trailing `/` ignored, as ArgoCD compares),
/// as `path:line:column: Kind/name` lines.
pub fn existing_for(inv: &crate::Inventory, server: &str) -> Vec<String> {
    let norm = |s: &str| {
        let s = s.trim_end_matches('/');
        match Endpoint::parse("", s) {
            Ok(e) => format!("https://{}", e.key()),
            Err(_) => s.to_ascii_lowercase(),
        }
    };
    let want = norm(server);
    let mut out = Vec::new();
    for src in &inv.sources {
        for o in src.occurrences() {
            let at_server = o.position.is_some_and(|p| p.is_registration());
            if at_server && !o.found.bare && norm(&o.endpoint) == want {
                out.push(format!(
                    "{}:{}:{}: {}",
                    src.entry.rel,
                    o.line,
                    o.column,
                    o.resource.as_deref().unwrap_or("?")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn scalars_quote_what_yaml_would_misread() {
        assert_eq!(scalar("cluster-a"), "cluster-a");
        assert_eq!(scalar("https://a.b:6443"), "https://a.b:6443");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("0123"), "\"0123\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("#x"), "\"#x\"");
    }

    #[test]
    fn labels_are_validated() {
        assert!(parse_label("team=platform").is_ok());
        assert!(parse_label("example.com/env=prod").is_ok());
        for bad in ["noequals", "=v", "k=-bad", "k=a b", "bad key=v", "/x=v"] {
            assert!(parse_label(bad).is_err(), "{bad}");
        }
    }
}
