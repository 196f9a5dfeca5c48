//! The ArgoCD cluster Secret for an endpoint: the bearer-token form, the EKS
//! `awsAuthConfig` form and an external-secrets.io `ExternalSecret` that
//! renders it.
//!
//! - [`SecretOptions`] are the flags `rebind secret` and `apply --secret-out`
//!   share; [`spec`] validates them against Kubernetes' own rules and builds
//!   the [`Spec`]; [`render`] turns it into YAML.
//! - [`write_manifest`] / [`write_private`] put a manifest on disk: created
//!   fresh (mode 0600) through the one writer ([`crate::edit::write`]), never
//!   through a symbolic link or into a hard-linked file, and, when it holds a
//!   real token, never inside a git work tree.
//! - [`find_registrations`] looks through a repository for the cluster Secrets
//!   (and ExternalSecret templates) that already register a server, and
//!   [`Search::duplicate_warning`] says when a new Secret would be a second one.
//!
//! The token is never invented: it is the `${ARGOCD_CLUSTER_TOKEN}`
//! placeholder unless the caller passes a value read from the environment.

use crate::edit::write;
use crate::model::positions;
use crate::syntax::yaml::{Node, Value};
use crate::text::base64::decode as decode_base64;
use crate::text::dns::{
    is_dns_label, is_dns_subdomain, is_hostname, is_label_value, is_qualified_name,
};
use crate::text::endpoint::Endpoint;
use crate::text::quote::scalar;
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Environment variable `envsubst` fills the token placeholder from.
pub const TOKEN_VAR: &str = "ARGOCD_CLUSTER_TOKEN";
/// Environment variable `envsubst` fills the CA placeholder from.
pub const CA_VAR: &str = "ARGOCD_CLUSTER_CA";
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
        /// `roleARN`: left out where the hub's own identity (a single-role
        /// Pod Identity association) reaches the cluster.
        role_arn: Option<String>,
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
    /// The ExternalSecret's apiVersion (`external-secrets.io/v1`, or
    /// `v1beta1` for installs before external-secrets 0.17).
    pub external_api: &'static str,
}

/// The ExternalSecret API version emitted by default: external-secrets
/// 0.17 and later no longer serve `v1beta1`.
pub const EXTERNAL_API_V1: &str = "external-secrets.io/v1";
/// The ExternalSecret API version for installs before 0.17 (`--external-secrets-v1beta1`).
pub const EXTERNAL_API_V1BETA1: &str = "external-secrets.io/v1beta1";

impl Spec {
    /// The default bearer-token spec for `name` and `server`.
    pub fn new(name: &str, server: &str) -> Result<Spec> {
        spec(&SecretOptions::default(), name, server)
    }

    /// The manifest carries a real bearer token (not a placeholder).
    pub fn holds_token(&self) -> bool {
        matches!(&self.auth, Auth::Bearer { token } if token != TOKEN_PLACEHOLDER)
    }
}

/// What shapes the cluster Secret (the command line's `rebind secret` and
/// `apply --secret-out` flags). Every field is optional: the default is the
/// bearer-token form with placeholders, named `cluster-<name>` in namespace
/// `argocd`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretOptions {
    /// metadata.name of the Secret (default: cluster-<cluster name>).
    pub secret_name: Option<String>,
    /// Namespace ArgoCD runs in (default: argocd).
    pub namespace: Option<String>,
    /// tlsClientConfig.serverName (SNI) to verify the server certificate against.
    pub server_name: Option<String>,
    /// Put the value of environment variable VAR in as the bearer token
    /// (only to stdout or a path outside any git work tree).
    pub token_env: Option<String>,
    /// PEM CA bundle to embed (base64) as caData.
    pub ca_file: Option<PathBuf>,
    /// caData as base64 (default: the ${ARGOCD_CLUSTER_CA} placeholder).
    pub ca_data: Option<String>,
    /// EKS cluster name for the awsAuthConfig form (no secret in the manifest).
    pub aws_cluster_name: Option<String>,
    /// IAM role ArgoCD assumes for the awsAuthConfig form.
    pub aws_role_arn: Option<String>,
    /// AWS profile for the awsAuthConfig form.
    pub aws_profile: Option<String>,
    /// Emit an external-secrets.io ExternalSecret that renders the cluster Secret.
    pub external_secret: bool,
    /// Secret store the ExternalSecret reads from.
    pub store: Option<String>,
    /// Kind of that store: ClusterSecretStore (default) or SecretStore.
    pub store_kind: Option<String>,
    /// Key in the store holding `token` (and `caData`) properties.
    pub key: Option<String>,
    /// Label KEY=VALUE on the Secret (repeatable); cluster generators select on these.
    pub label: Vec<String>,
    /// Annotation KEY=VALUE on the Secret (repeatable).
    pub annotation: Vec<String>,
    /// AppProject the cluster is scoped to.
    pub project: Option<String>,
    /// Namespaces ArgoCD may manage on the cluster, comma-separated.
    pub namespaces: Option<String>,
    /// With --namespaces: whether cluster-scoped resources may be managed too.
    pub cluster_resources: Option<bool>,
    /// Fail unless every ${VAR} placeholder left in the manifest
    /// (ARGOCD_CLUSTER_TOKEN, ARGOCD_CLUSTER_CA) is set and well-formed in the
    /// environment, so a following `envsubst` cannot blank it.
    pub require_env: bool,
    /// The new cluster's `aws eks describe-cluster --output json`: the
    /// name, the server (its endpoint, or with `server_arn` its ARN), the
    /// CA and `awsAuthConfig.clusterName` come from it unless given.
    pub describe: Option<PathBuf>,
    /// The new cluster's record itself, when the caller has read it
    /// (`apply --describe-to`); `describe` wins.
    pub described: Option<crate::model::cluster::Described>,
    /// Register the cluster by its ARN (`server: arn:aws:eks:...`), as a
    /// repository whose registrations are by ARN does.
    pub server_arn: bool,
    /// Emit the ExternalSecret at `external-secrets.io/v1beta1` (external-secrets
    /// before 0.17) instead of `v1`.
    pub external_secrets_v1beta1: bool,
}

impl SecretOptions {
    /// No flag was given (for `apply`, where they only make sense with `--secret-out`).
    pub fn is_empty(&self) -> bool {
        *self == SecretOptions::default()
    }
}

/// Builds the [`Spec`] for cluster `name` at `server` from the flags, reading
/// `--token-env`, `--ca-file` and (with `--require-env`) the placeholders'
/// variables from the process environment. Every value is checked against
/// the rules Kubernetes, ArgoCD and AWS apply to it.
pub fn spec(opts: &SecretOptions, name: &str, server: &str) -> Result<Spec> {
    spec_with_env(opts, name, server, &|var| std::env::var(var).ok())
}

/// [`spec`] with the environment given as a lookup function.
pub fn spec_with_env(
    opts: &SecretOptions,
    name: &str,
    server: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Spec> {
    let described = match &opts.describe {
        Some(p) => Some(crate::model::cluster::read_describe("--describe", p)?),
        None => opts.described.clone(),
    };
    let (name, server) = &described_identity(opts, described.as_ref(), name, server)?;
    let (name, server) = (name.as_str(), server.as_str());
    validate_name(name)?;
    validate_server(server)?;
    let secret_name = secret_name(opts, name)?;
    let namespace = opts.namespace.clone().unwrap_or_else(|| "argocd".into());
    if !is_dns_label(&namespace) {
        bail!("--namespace {namespace:?}: {LABEL_RULE}");
    }
    let server_name = match &opts.server_name {
        Some(h) if !is_hostname(h) => {
            bail!(
                "--server-name {h:?}: not a host name (letters, digits, '-' and '.', at most 253)"
            )
        }
        other => other.clone(),
    };
    let ca_data = ca_data(opts, described.as_ref())?;
    let auth = auth(opts, env, described.as_ref().map(|d| d.name.as_str()))?;
    let mut labels: Vec<(String, String)> = Vec::new();
    for l in &opts.label {
        let (k, v) = parse_label(l)?;
        if k == SECRET_TYPE_LABEL {
            if v != "cluster" {
                bail!("--label {l:?}: {SECRET_TYPE_LABEL} is always \"cluster\" on an ArgoCD cluster Secret");
            }
            continue;
        }
        if labels.iter().any(|(have, _)| *have == k) {
            bail!("--label {l:?}: label {k:?} is given twice");
        }
        labels.push((k, v));
    }
    let mut annotations: Vec<(String, String)> = Vec::new();
    for a in &opts.annotation {
        let (k, v) = parse_annotation(a)?;
        if annotations.iter().any(|(have, _)| *have == k) {
            bail!("--annotation {a:?}: annotation {k:?} is given twice");
        }
        annotations.push((k, v));
    }
    if let Some(p) = &opts.project {
        if !is_dns_subdomain(p) {
            bail!("--project {p:?}: not a valid AppProject name (it {SUBDOMAIN_RULE})");
        }
    }
    if let Some(ns) = &opts.namespaces {
        if let Some(bad) = ns.split(',').find(|n| !is_dns_label(n)) {
            bail!("--namespaces {ns:?}: {bad:?} is not a namespace name (each {LABEL_RULE}); expected a comma-separated list such as keda,karpenter");
        }
    } else if opts.cluster_resources.is_some() {
        bail!("--cluster-resources only applies with --namespaces");
    }
    let spec = Spec {
        name: name.to_string(),
        server: server.to_string(),
        secret_name,
        namespace,
        server_name,
        ca_data,
        auth,
        labels,
        annotations,
        project: opts.project.clone(),
        namespaces: opts.namespaces.clone(),
        cluster_resources: opts.cluster_resources,
        external_api: if opts.external_secrets_v1beta1 {
            EXTERNAL_API_V1BETA1
        } else {
            EXTERNAL_API_V1
        },
    };
    if opts.require_env {
        require_env(&spec, env)?;
    }
    Ok(spec)
}

/// metadata.name: `--secret-name`, else `cluster-<name>`, a valid object name.
fn secret_name(opts: &SecretOptions, name: &str) -> Result<String> {
    Ok(match &opts.secret_name {
        Some(n) => {
            if !is_dns_subdomain(n) {
                bail!("--secret-name {n:?}: {SUBDOMAIN_RULE}");
            }
            n.clone()
        }
        None => {
            let n = format!("cluster-{name}");
            if !is_dns_subdomain(&n) {
                bail!(
                    "--name {name:?}: the Secret would be named {n:?}, not a valid Kubernetes object name (it {SUBDOMAIN_RULE}); pass a lower-case --name, or --secret-name"
                );
            }
            n
        }
    })
}

/// `caData`: `--ca-file` or `--ca-data`, else the describe file's CA (each
/// checked as base64), else `None` (the placeholder).
fn ca_data(
    opts: &SecretOptions,
    described: Option<&crate::model::cluster::Described>,
) -> Result<Option<String>> {
    Ok(match (&opts.ca_file, &opts.ca_data) {
        (Some(_), Some(_)) => bail!("--ca-file and --ca-data both give the CA; pass one"),
        (Some(f), None) => Some(ca_from_file(f)?),
        (None, Some(d)) => {
            validate_ca_data(d)?;
            Some(d.clone())
        }
        (None, None) => match described.and_then(|d| d.ca_data.clone()) {
            Some(d) => {
                validate_ca_data(&d).map_err(|e| {
                    anyhow::anyhow!("--describe: cluster.certificateAuthority.data: {e:#}")
                })?;
                Some(d)
            }
            None => None,
        },
    })
}

/// ArgoCD's name and the server: as given, else from the describe file
/// (the EKS name; the endpoint, or the ARN with `--server-arn`).
fn described_identity(
    opts: &SecretOptions,
    d: Option<&crate::model::cluster::Described>,
    name: &str,
    server: &str,
) -> Result<(String, String)> {
    let name = match (name.is_empty(), d) {
        (false, _) => name.to_string(),
        (true, Some(d)) => d.name.clone(),
        (true, None) => name.to_string(),
    };
    let server = match (server.is_empty(), d) {
        (false, _) => server.to_string(),
        (true, Some(d)) if opts.server_arn => d.arn.clone().ok_or_else(|| {
            anyhow::anyhow!("--server-arn: the --describe file has no cluster.arn")
        })?,
        (true, Some(d)) => d.endpoint.clone(),
        (true, None) => server.to_string(),
    };
    if opts.server_arn && crate::model::cluster::parse_arn(&server).is_none() {
        bail!("--server-arn: --server {server} is not an EKS cluster ARN");
    }
    Ok((name, server))
}

/// The authentication form the flags choose; forms are mutually exclusive.
/// With a describe file (`described`: the EKS name) and no other form, the
/// awsAuthConfig form for that cluster.
fn auth(
    opts: &SecretOptions,
    env: &dyn Fn(&str) -> Option<String>,
    described: Option<&str>,
) -> Result<Auth> {
    let given = |flags: &[(&'static str, bool)]| -> Vec<&'static str> {
        flags
            .iter()
            .filter(|(_, on)| *on)
            .map(|(f, _)| *f)
            .collect()
    };
    let aws = given(&[
        ("--aws-role-arn", opts.aws_role_arn.is_some()),
        ("--aws-cluster-name", opts.aws_cluster_name.is_some()),
        ("--aws-profile", opts.aws_profile.is_some()),
    ]);
    let external = given(&[
        ("--external-secret", opts.external_secret),
        ("--store", opts.store.is_some()),
        ("--store-kind", opts.store_kind.is_some()),
        ("--key", opts.key.is_some()),
    ]);
    let token = given(&[("--token-env", opts.token_env.is_some())]);
    let forms: Vec<&Vec<&str>> = [&aws, &external, &token]
        .into_iter()
        .filter(|f| !f.is_empty())
        .collect();
    if let [a, b, ..] = forms.as_slice() {
        bail!(
            "{} and {} choose different ways for ArgoCD to authenticate (IAM role, ExternalSecret, token from the environment); pass the flags of one form only",
            a[0],
            b[0]
        );
    }
    let by_describe = described.is_some() && external.is_empty() && token.is_empty();
    if !aws.is_empty() || by_describe {
        return aws_auth(opts, described);
    }
    if !external.is_empty() {
        if !opts.external_secret {
            bail!(
                "{} belongs to the ExternalSecret form: add --external-secret",
                external[0]
            );
        }
        let (Some(store), Some(key)) = (&opts.store, &opts.key) else {
            bail!("--external-secret needs --store NAME and --key KEY");
        };
        if !is_dns_subdomain(store) {
            bail!("--store {store:?}: not a valid store name (it {SUBDOMAIN_RULE})");
        }
        if key.is_empty() || key.chars().any(char::is_control) {
            bail!("--key {key:?}: expected the store's key for the cluster's token and caData");
        }
        let store_kind = opts
            .store_kind
            .clone()
            .unwrap_or_else(|| "ClusterSecretStore".into());
        if !matches!(store_kind.as_str(), "ClusterSecretStore" | "SecretStore") {
            bail!("--store-kind {store_kind:?}: expected ClusterSecretStore or SecretStore");
        }
        return Ok(Auth::External {
            store: store.clone(),
            store_kind,
            key: key.clone(),
        });
    }
    if let Some(var) = &opts.token_env {
        let token = env(var).unwrap_or_default();
        if token.is_empty() {
            bail!("--token-env {var}: the variable is not set or empty");
        }
        if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            bail!("--token-env {var}: the token holds white space or a control character (a trailing newline?)");
        }
        return Ok(Auth::Bearer { token });
    }
    Ok(Auth::Bearer {
        token: TOKEN_PLACEHOLDER.into(),
    })
}

/// The awsAuthConfig form: `--aws-cluster-name` (else the describe file's
/// EKS name), `roleARN` only when given, the profile.
fn aws_auth(opts: &SecretOptions, described: Option<&str>) -> Result<Auth> {
    let Some(cluster_name) = opts.aws_cluster_name.as_deref().or(described) else {
        bail!(
            "the awsAuthConfig form needs --aws-cluster-name NAME (or --describe FILE); --aws-role-arn ARN is optional"
        );
    };
    if !is_eks_cluster_name(cluster_name) {
        bail!("--aws-cluster-name {cluster_name:?}: not an EKS cluster name (1 to 100 letters, digits, '-' and '_', starting with a letter or digit)");
    }
    if let Some(role_arn) = opts.aws_role_arn.as_deref().filter(|r| !is_role_arn(r)) {
        bail!("--aws-role-arn {role_arn:?}: not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<path/>name)");
    }
    if let Some(p) = &opts.aws_profile {
        if p.is_empty() || p.chars().any(|c| c.is_whitespace() || c.is_control()) {
            bail!("--aws-profile {p:?}: not a profile name (no spaces)");
        }
    }
    Ok(Auth::Aws {
        cluster_name: cluster_name.to_string(),
        role_arn: opts.aws_role_arn.clone(),
        profile: opts.aws_profile.clone(),
    })
}

/// The `${VAR}` placeholders left in the rendered manifest, by variable name.
pub fn placeholders(spec: &Spec) -> Vec<&'static str> {
    let text = render(spec);
    [(TOKEN_VAR, TOKEN_PLACEHOLDER), (CA_VAR, CA_PLACEHOLDER)]
        .into_iter()
        .filter(|(_, p)| text.contains(p))
        .map(|(v, _)| v)
        .collect()
}

/// `--require-env`: every placeholder's variable is set, non-empty and well-formed.
pub fn require_env(spec: &Spec, env: &dyn Fn(&str) -> Option<String>) -> Result<()> {
    let vars = placeholders(spec);
    let missing: Vec<&str> = vars
        .iter()
        .copied()
        .filter(|v| env(v).is_none_or(|s| s.is_empty()))
        .collect();
    if !missing.is_empty() {
        bail!(
            "--require-env: {} not set or empty; `envsubst` would write an empty value into the manifest. Export {} first",
            missing.join(" and "),
            if missing.len() == 1 { "it" } else { "them" }
        );
    }
    if let Some(t) = vars.contains(&TOKEN_VAR).then(|| env(TOKEN_VAR)).flatten() {
        if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
            bail!("--require-env: {TOKEN_VAR} holds white space or a control character (a trailing newline?)");
        }
    }
    if let Some(ca) = vars.contains(&CA_VAR).then(|| env(CA_VAR)).flatten() {
        if decode_base64(&ca).is_none() {
            bail!("--require-env: {CA_VAR} is not base64 (the PEM bundle base64-encoded, as in a kubeconfig's certificate-authority-data)");
        }
    }
    Ok(())
}

const SUBDOMAIN_RULE: &str = "must be a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit";
const LABEL_RULE: &str =
    "must be a DNS-1123 label: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit";

fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        bail!("--name: the cluster name must not be empty");
    }
    if name.trim() != name || name.chars().any(char::is_control) {
        bail!("--name {name:?}: no leading or trailing white space or control characters");
    }
    Ok(())
}

/// The server must be an absolute `https://` URL and not the in-cluster one.
pub fn validate_server(server: &str) -> Result<()> {
    // The EKS capability for Argo CD registers a cluster by its ARN.
    if crate::model::cluster::parse_arn(server).is_some() {
        return Ok(());
    }
    let e = Endpoint::parse("--server", server)?;
    if e.is_in_cluster() {
        bail!("--server {server}: the in-cluster API server needs no cluster Secret (ArgoCD has it built in)");
    }
    Ok(())
}

/// EKS: `^[0-9A-Za-z][A-Za-z0-9\-_]*$`, 1 to 100.
fn is_eks_cluster_name(s: &str) -> bool {
    crate::model::cluster::is_cluster_name(s)
}

/// `arn:aws[-a-z]*:iam::<12 digits>:role/[path/]name`.
pub fn is_role_arn(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("arn:aws") else {
        return false;
    };
    let Some((partition_tail, rest)) = rest.split_once(':') else {
        return false;
    };
    if !partition_tail
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c == b'-')
        || (!partition_tail.is_empty() && !partition_tail.starts_with('-'))
    {
        return false;
    }
    let Some(rest) = rest.strip_prefix("iam::") else {
        return false;
    };
    let Some((account, rest)) = rest.split_once(':') else {
        return false;
    };
    if account.len() != 12 || !account.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let Some(path) = rest.strip_prefix("role/") else {
        return false;
    };
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts[parts.len() - 1];
    path.len() <= 576
        && name.len() <= 64
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"+=,.@_-".contains(&c))
        })
}

/// Parses a `--label k=v` (Kubernetes label syntax).
pub fn parse_label(s: &str) -> Result<(String, String)> {
    let Some((k, v)) = s.split_once('=') else {
        bail!("--label {s:?}: expected KEY=VALUE");
    };
    if !is_qualified_name(k) {
        bail!("--label {s:?}: {k:?} is not a valid label key ([prefix/]name: name at most 63 of A-Z a-z 0-9 - _ ., starting and ending alphanumeric; prefix a DNS-1123 subdomain)");
    }
    if !is_label_value(v) {
        bail!("--label {s:?}: {v:?} is not a valid label value (at most 63 of A-Z a-z 0-9 - _ ., starting and ending alphanumeric)");
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parses an `--annotation k=v` (any value).
pub fn parse_annotation(s: &str) -> Result<(String, String)> {
    let Some((k, v)) = s.split_once('=') else {
        bail!("--annotation {s:?}: expected KEY=VALUE");
    };
    if !is_qualified_name(k) {
        bail!("--annotation {s:?}: {k:?} is not a valid annotation key ([prefix/]name, as for labels)");
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
    Ok(crate::text::base64::encode(&bytes))
}

/// Checks a `--ca-data` value is strict, canonical base64 of something.
pub fn validate_ca_data(s: &str) -> Result<()> {
    if decode_base64(s).is_none_or(|b| b.is_empty()) {
        bail!("--ca-data: not base64 (the PEM bundle base64-encoded, as in a kubeconfig's certificate-authority-data)");
    }
    Ok(())
}

/// The `config` JSON ArgoCD reads from a cluster Secret, in the key order of
/// ArgoCD's examples.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ClusterConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    aws_auth_config: Option<AwsAuthConfig<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bearer_token: Option<&'a str>,
    tls_client_config: TlsClientConfig<'a>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct AwsAuthConfig<'a> {
    cluster_name: &'a str,
    #[serde(rename = "roleARN", skip_serializing_if = "Option::is_none")]
    role_arn: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<&'a str>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TlsClientConfig<'a> {
    insecure: bool,
    ca_data: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_name: Option<&'a str>,
}

/// The `config` JSON, two-space indent, strings escaped by
/// [`crate::text::quote::escape_into`] (it is embedded in a YAML block scalar).
fn config_json(spec: &Spec, token: Option<&str>, ca: &str) -> String {
    let aws = match &spec.auth {
        Auth::Aws {
            cluster_name,
            role_arn,
            profile,
        } => Some(AwsAuthConfig {
            cluster_name,
            role_arn: role_arn.as_deref(),
            profile: profile.as_deref(),
        }),
        _ => None,
    };
    let config = ClusterConfig {
        bearer_token: aws.is_none().then(|| token.unwrap_or(TOKEN_PLACEHOLDER)),
        aws_auth_config: aws,
        tls_client_config: TlsClientConfig {
            insecure: false,
            ca_data: ca,
            server_name: spec.server_name.as_deref(),
        },
    };
    crate::text::quote::json_pretty(&config)
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
    let mut labels = vec![(SECRET_TYPE_LABEL.to_string(), "cluster".to_string())];
    labels.extend(
        spec.labels
            .iter()
            .filter(|(k, _)| k != SECRET_TYPE_LABEL)
            .cloned(),
    );
    match &spec.auth {
        Auth::External {
            store,
            store_kind,
            key,
        } => render_external(spec, &labels, store, store_kind, key),
        Auth::Bearer { token } => render_secret(spec, &labels, Some(token)),
        Auth::Aws { .. } => render_secret(spec, &labels, None),
    }
}

/// The cluster Secret itself, with `token` (or the placeholder) in `config`.
fn render_secret(spec: &Spec, labels: &[(String, String)], token: Option<&str>) -> String {
    let ca = spec.ca_data.as_deref().unwrap_or(CA_PLACEHOLDER);
    let mut y = String::new();
    let _ = writeln!(y, "apiVersion: v1\nkind: Secret\nmetadata:");
    let _ = writeln!(
        y,
        "  name: {}\n  namespace: {}",
        scalar(&spec.secret_name),
        scalar(&spec.namespace)
    );
    map_block(&mut y, "labels", labels, 2);
    map_block(&mut y, "annotations", &spec.annotations, 2);
    y.push_str("type: Opaque\nstringData:\n");
    cluster_fields(&mut y, spec, 2);
    y.push_str("  config: |\n");
    y.push_str(&indent(&config_json(spec, token, ca), 4));
    y
}

/// The ExternalSecret whose template renders the cluster Secret from the
/// store's `token` (and `caData`, unless given).
fn render_external(
    spec: &Spec,
    labels: &[(String, String)],
    store: &str,
    store_kind: &str,
    key: &str,
) -> String {
    let ca_ref = spec.ca_data.as_deref().unwrap_or("{{ .caData }}");
    let mut y = String::new();
    let _ = writeln!(
        y,
        "apiVersion: {}\nkind: ExternalSecret\nmetadata:",
        spec.external_api
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
    map_block(&mut y, "labels", labels, 8);
    map_block(&mut y, "annotations", &spec.annotations, 8);
    y.push_str("      data:\n");
    cluster_fields(&mut y, spec, 8);
    y.push_str("        config: |\n");
    y.push_str(&indent(
        &config_json(spec, Some("{{ .token }}"), ca_ref),
        10,
    ));
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
    y
}

// ---------------------------------------------------------------------------
// Writing a manifest to a file
// ---------------------------------------------------------------------------

/// The git work tree (or git directory) `dir` (a resolved directory) lies in.
pub fn enclosing_repository(dir: &Path) -> Option<PathBuf> {
    for a in dir.ancestors() {
        if a.file_name().is_some_and(|n| n == ".git")
            || fs::symlink_metadata(a.join(".git")).is_ok()
        {
            return Some(a.to_path_buf());
        }
    }
    // A bare repository, or one git finds some other way.
    crate::repo::git::enclosing(dir)
}

/// Checks that a manifest may be written at `path` ([`write::check_output`]:
/// a final component that is a symbolic link, not a regular file, or a file
/// with more than one hard link is refused), and returns the path it resolves
/// to. When the manifest `holds_token`, any path that resolves inside a git
/// work tree is refused too.
pub fn check_target(path: &Path, holds_token: bool) -> Result<PathBuf> {
    let target = write::check_output(path)?;
    outside_repositories(path, &target, holds_token)?;
    Ok(target)
}

/// Refuses, for a manifest that `holds_token`, a `target` (resolved from
/// `path`) inside a git work tree.
fn outside_repositories(path: &Path, target: &Path, holds_token: bool) -> Result<()> {
    if !holds_token {
        return Ok(());
    }
    let dir = target.parent().unwrap_or(Path::new("."));
    if let Some(repo) = enclosing_repository(dir) {
        bail!(
            "{}: resolves to {}, inside the git work tree {}; a real token must never land in a repository: write to stdout or to a path outside any repository",
            path.display(),
            target.display(),
            repo.display()
        );
    }
    Ok(())
}

/// Writes a manifest to `path` through the one writer ([`write::write_file`]):
/// checked with [`check_target`] before and after, mode 0600, replacing an
/// existing file whole (it never keeps its old permissions).
pub fn write_manifest(path: &Path, text: &str, holds_token: bool) -> Result<()> {
    write::write_file(
        path,
        text.as_bytes(),
        write::Mode::Private,
        write::Existing::Replace,
        &|target| outside_repositories(path, target, holds_token),
    )
}

/// [`write_manifest`] for a manifest holding a real token: never inside a git work tree.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    write_manifest(path, text, true)
}

// ---------------------------------------------------------------------------
// Secrets already registering a server
// ---------------------------------------------------------------------------

/// One manifest that declares a cluster Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// Path relative to the searched root, `/`-separated.
    pub rel: String,
    pub line: usize,
    pub column: usize,
    /// `Secret/name` or `ExternalSecret/name`.
    pub resource: String,
    /// The credentials this registration reads: what must hold the new
    /// cluster's token and CA after a rebind.
    pub reads: String,
    /// The server it registers, as written (decoded from base64).
    pub server: String,
    /// ArgoCD's name for the cluster (`name` beside `server`), if given.
    pub cluster_name: Option<String>,
}

/// A Secret ArgoCD holds for the server, with every manifest declaring it
/// (a Secret and the ExternalSecret that renders it are one registration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// `None` when the manifest leaves it to `kubectl`/ArgoCD.
    pub namespace: Option<String>,
    pub name: String,
    pub declared_at: Vec<Declaration>,
}

/// The outcome of [`find_registrations`].
#[derive(Debug, Default)]
pub struct Search {
    pub root: PathBuf,
    pub registrations: Vec<Registration>,
    /// Files that might declare the server but could not be read or parsed, with why.
    pub unchecked: Vec<(String, String)>,
}

/// Where the duplicate search walks from `start` by default: the enclosing
/// git work tree, or `None` outside any.
pub fn search_root(start: &Path) -> Option<PathBuf> {
    crate::repo::git::enclosing_work_tree(start)
}

/// What to print on stderr before emitting `spec`: notes on files that
/// could not be checked and the duplicate warning, from a search of `repo`
/// when given, else of the git work tree around `start` (a note saying no
/// search was made outside any work tree).
pub fn existing_warnings(repo: Option<&Path>, start: &Path, spec: &Spec) -> Result<String> {
    let root = match repo {
        Some(r) => r.to_path_buf(),
        None => match search_root(start) {
            Some(r) => r,
            None => {
                return Ok(format!(
                    "note: not inside a git work tree; pass --repo PATH to look for Secrets that already register {}\n",
                    spec.server
                ))
            }
        },
    };
    let found = find_registrations(&root, &spec.server)?;
    let mut text = found.notes(&spec.server);
    let ours = (spec.namespace.as_str(), spec.secret_name.as_str());
    if let Some(w) = found.duplicate_warning(&spec.server, Some(ours)) {
        text.push_str(&w);
    }
    Ok(text)
}

/// Walks `root` (gitignore-aware, `.git` and symbolic links skipped) for
/// cluster Secrets and ExternalSecret templates whose server equals `server`
/// (host case-insensitive, trailing `/` ignored, as ArgoCD compares). Files
/// that vanish during the walk are passed over.
pub fn find_registrations(root: &Path, server: &str) -> Result<Search> {
    find_registrations_with(root, server, &|p| fs::read(p))
}

/// [`find_registrations`] with the file reader given.
pub fn find_registrations_with(
    root: &Path,
    server: &str,
    read: &dyn Fn(&Path) -> io::Result<Vec<u8>>,
) -> Result<Search> {
    let want = normalise_server(server);
    let host = Endpoint::parse("--server", server)?
        .host
        .to_ascii_lowercase();
    search_with(root, &|s| normalise_server(s) == want, &host, read)
}

/// Refuses a cluster Secret whose name is already another server's
/// registration in the repository `root`: applying it would
/// replace that registration (the old cluster's is the rollback target) or
/// give two servers one ArgoCD name. `root`: the repository searched
/// (`None` outside any); `live`: a live dump of the hub's registrations.
pub fn refuse_name_collisions(root: Option<&Path>, spec: &Spec, live: Option<&Path>) -> Result<()> {
    let clashes = name_collisions(root, spec, live)?;
    if clashes.is_empty() {
        return Ok(());
    }
    Err(crate::sys::coded::err(
        "registration-name-taken",
        format!(
            "the cluster Secret for {} (name {:?}, Secret {}/{}) would take the name of another server's registration, which applying it replaces or shadows: pick another cluster name (or Secret name); nothing written:\n  {}",
            spec.server,
            spec.name,
            spec.namespace,
            spec.secret_name,
            clashes.join("\n  ")
        ),
    ))
}

/// The cluster registrations in a live dump (`kubectl get secrets -n argocd
/// -l argocd.argoproj.io/secret-type=cluster -o json`, or a dump that holds
/// them among the Applications), whatever their server; each shown at
/// `(live) FILE:line:column`.
pub fn live_registrations(path: &Path) -> Result<Vec<Registration>> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("--live {}: cannot read", path.display()))?;
    let found = declarations(&text, &|_| true, "")
        .map_err(|e| anyhow::anyhow!("--live {}: not JSON or YAML: {e}", path.display()))?;
    Ok(found
        .into_iter()
        .map(|(namespace, name, mut d)| {
            d.rel = format!("(live) {}", path.display());
            Registration {
                namespace,
                name,
                declared_at: vec![d],
            }
        })
        .collect())
}

/// Every cluster registration under `root`, whatever its server.
pub fn all_registrations(root: &Path) -> Result<Search> {
    search_with(root, &|_| true, "", &|p| fs::read(p))
}

/// The registrations under `root` that applying `spec` would clash with:
/// a Secret of the same name in the same namespace (applying it replaces
/// that one), or the same ArgoCD cluster name, registering another server.
/// Each as `path:line:column: what` (the registration of the old cluster,
/// the rollback target, is the usual one). A registration of the old
/// endpoint that the same commit rebinds counts too: the Secret is applied
/// before the merge, while that one still registers the old cluster.
/// `live`: the hub's registrations too (a live dump).
pub fn name_collisions(
    root: Option<&Path>,
    spec: &Spec,
    live: Option<&Path>,
) -> Result<Vec<String>> {
    let mut registrations = match root {
        Some(root) => all_registrations(root)?.registrations,
        None => Vec::new(),
    };
    if let Some(live) = live {
        registrations.extend(live_registrations(live)?);
    }
    let ours = normalise_server(&spec.server);
    let mut out = Vec::new();
    for r in &registrations {
        let same_secret = r.name == spec.secret_name
            && r.namespace.as_deref().is_none_or(|ns| ns == spec.namespace);
        for d in &r.declared_at {
            if normalise_server(&d.server) == ours {
                continue;
            }
            let same_name = d.cluster_name.as_deref() == Some(spec.name.as_str());
            let mut why = Vec::new();
            if same_secret {
                why.push(format!(
                    "Secret {} (applying this one replaces it)",
                    r.shown()
                ));
            }
            if same_name {
                why.push(format!("ArgoCD cluster name {:?}", spec.name));
            }
            if why.is_empty() {
                continue;
            }
            let why = why.join(" and the same ");
            out.push(format!(
                "{}:{}:{}: {} registers {} under the same {why}",
                d.rel, d.line, d.column, d.resource, d.server
            ));
        }
    }
    Ok(out)
}

/// The registrations under `root` whose server `keep` accepts (`host`: the
/// server's host, lower-case, to point at it; empty for any).
fn search_with(
    root: &Path,
    keep: &dyn Fn(&str) -> bool,
    host: &str,
    read: &dyn Fn(&Path) -> io::Result<Vec<u8>>,
) -> Result<Search> {
    let meta =
        fs::metadata(root).with_context(|| format!("--repo {}: cannot read", root.display()))?;
    if !meta.is_dir() {
        bail!("--repo {}: not a directory", root.display());
    }
    let mut search = Search {
        root: root.to_path_buf(),
        ..Search::default()
    };
    let mut found: Vec<(Option<String>, String, Declaration)> = Vec::new();
    // The walk every command uses: gitignore-aware, `.git` and symbolic
    // links skipped, the files parsed as YAML by default.
    let walk =
        crate::discover::walk::discover(&crate::repo::git::walk_request(&[root.to_path_buf()]))?;
    for item in walk.files() {
        let entry = match item {
            crate::discover::walk::Found::Entry(e) => e,
            crate::discover::walk::Found::Skipped(s) => {
                // What could not be read may register the server.
                if s.may_hold {
                    search.unchecked.push((s.rel, s.reason));
                }
                continue;
            }
        };
        if entry.role != crate::discover::walk::Role::Yaml {
            continue;
        }
        let path = entry.path.as_path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let bytes = match read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                search.unchecked.push((rel, format!("cannot read: {e}")));
                continue;
            }
        };
        // Read the way every command reads (UTF-16/32 by their byte order mark).
        let text = match crate::discover::walk::classify(bytes) {
            crate::discover::walk::Content::Text(t)
            | crate::discover::walk::Content::Decoded { text: t, .. } => t,
            crate::discover::walk::Content::NotUtf8 { bytes: b, .. }
            | crate::discover::walk::Content::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            crate::discover::walk::Content::Unreadable(why) => {
                search.unchecked.push((rel, why));
                continue;
            }
        };
        if !text.contains(SECRET_TYPE_LABEL) {
            continue;
        }
        match declarations(&text, keep, host) {
            Ok(ds) => found.extend(ds.into_iter().map(|(ns, name, mut d)| {
                d.rel = rel.clone();
                (ns, name, d)
            })),
            Err(msg) => {
                if text.to_ascii_lowercase().contains(host) {
                    search
                        .unchecked
                        .push((rel, format!("not valid YAML ({msg})")));
                }
            }
        }
    }
    for (namespace, name, d) in found {
        match search
            .registrations
            .iter_mut()
            .find(|r| r.namespace == namespace && r.name == name)
        {
            Some(r) => r.declared_at.push(d),
            None => search.registrations.push(Registration {
                namespace,
                name,
                declared_at: vec![d],
            }),
        }
    }
    Ok(search)
}

fn normalise_server(s: &str) -> String {
    let s = s.trim().trim_end_matches('/');
    match Endpoint::parse("", s) {
        Ok(e) => format!("https://{}", e.key()),
        Err(_) => s.to_ascii_lowercase(),
    }
}

impl Registration {
    fn shown(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

impl Search {
    /// The one warning to give before emitting a Secret for `server`: `None`
    /// unless a Secret other than `ours` (namespace, name) already registers
    /// it. With `ours` unknown, every registration found counts.
    pub fn duplicate_warning(&self, server: &str, ours: Option<(&str, &str)>) -> Option<String> {
        let others: Vec<&Registration> = self
            .registrations
            .iter()
            .filter(|r| {
                ours.is_none_or(|(ns, name)| {
                    r.name != name || r.namespace.as_deref().is_some_and(|n| n != ns)
                })
            })
            .collect();
        if others.is_empty() {
            return None;
        }
        let root = self.root.display().to_string();
        let mut w = if root == "." || root.is_empty() {
            format!("warning: server {server} is already registered with ArgoCD by:\n")
        } else {
            format!("warning: {root} already registers server {server} with ArgoCD:\n")
        };
        for r in &others {
            let _ = writeln!(w, "  Secret {}, declared at", r.shown());
            for d in &r.declared_at {
                let _ = writeln!(w, "    {}:{}:{}: {}", d.rel, d.line, d.column, d.resource);
            }
        }
        let this = match ours {
            Some((ns, name)) => format!("this manifest (Secret {ns}/{name})"),
            None => "this manifest".to_string(),
        };
        let _ = write!(
            w,
            "ArgoCD picks one of two Secrets for the same server at random: delete {} before applying {this}",
            if others.iter().map(|r| r.declared_at.len()).sum::<usize>() == 1 {
                "that declaration"
            } else {
                "those declarations"
            }
        );
        if let [only] = others.as_slice() {
            let _ = write!(
                w,
                ", or update the registration instead (--secret-name {}{})",
                only.name,
                match &only.namespace {
                    Some(ns) if ours.is_none_or(|(o, _)| o != ns) => format!(" --namespace {ns}"),
                    _ => String::new(),
                }
            );
        }
        w.push_str(".\n");
        Some(w)
    }

    /// One `note:` line per file that could not be checked.
    pub fn notes(&self, server: &str) -> String {
        self.unchecked
            .iter()
            .map(|(rel, why)| {
                format!("note: {rel}: {why}; not checked for a Secret registering {server}\n")
            })
            .collect()
    }
}

/// The cluster Secrets in `text` whose server normalises to `want`, as
/// (namespace, Secret name, declaration without `rel`). `Err` when the file
/// does not parse as YAML, even with Helm template actions masked.
type Found = (Option<String>, String, Declaration);

fn declarations(text: &str, keep: &dyn Fn(&str) -> bool, host: &str) -> Result<Vec<Found>, String> {
    let failure = |(line, column, info): crate::syntax::yaml::ParseFailure| {
        format!("{info} at line {line} column {column}")
    };
    let docs = match crate::syntax::yaml::read_documents(text) {
        Ok(d) => d,
        Err(e) => match crate::syntax::yaml::mask_templates(text) {
            Some((masked, _)) => {
                crate::syntax::yaml::read_documents(&masked).map_err(|_| failure(e))?
            }
            None => return Err(failure(e)),
        },
    };
    let index = crate::syntax::yaml::LineIndex::new(text);
    let hosts = [host.to_string()];
    let mut out = Vec::new();
    for doc in docs.iter().flat_map(list_items) {
        let Some(reg) = doc
            .str_at(positions::KIND)
            .and_then(|k| positions::REGISTRATIONS.iter().find(|r| r.kind == k))
        else {
            continue;
        };
        let resource_kind = reg.kind;
        let labels = doc.at(reg.labels);
        let server_node = reg
            .servers
            .iter()
            .find_map(|(path, encoded)| doc.at(path).map(|n| (n, *encoded, *path)));
        let secret_name = reg.secret_name.iter().find_map(|p| doc.str_at(p));
        let (label, cluster) = positions::CLUSTER_SECRET_LABEL;
        if labels.and_then(|l| l.str_at(&[label])) != Some(cluster) {
            continue;
        }
        let Some((node, encoded, path)) = server_node else {
            continue;
        };
        let cluster_name = name_beside(doc, path, encoded);
        let Some(value) = node.as_str() else {
            continue;
        };
        let value = if encoded {
            // Wrapped over lines too, as `base64` prints it: the locator's decoding.
            match crate::find::embedded::decoded_value(value) {
                Some(v) => v,
                None => continue,
            }
        } else {
            value.to_string()
        };
        if !keep(&value) {
            continue;
        }
        // Point at the URL itself when it is written out from the scalar on.
        let line_start = text[..node.start].rfind('\n').map_or(0, |p| p + 1);
        let rest = &text[line_start..];
        let finds = if encoded {
            Vec::new()
        } else {
            crate::text::endpoint::find_all(rest, &rest.to_ascii_lowercase(), &hosts)
        };
        let url = finds
            .into_iter()
            .find(|f| crate::text::endpoint::same_host(&f.host, host));
        let (line, column) = match url {
            Some(f) => index.position(text, line_start + f.start),
            None => (node.line, node.col),
        };
        let object = doc.str_at(positions::NAME).unwrap_or("?");
        out.push((
            doc.str_at(positions::NAMESPACE).map(str::to_string),
            secret_name.unwrap_or("?").to_string(),
            Declaration {
                rel: String::new(),
                line,
                column,
                resource: format!("{resource_kind}/{object}"),
                reads: credentials(doc, reg),
                server: value.trim().to_string(),
                cluster_name,
            },
        ));
    }
    Ok(out)
}

/// The cluster registrations of one file (labelled Secrets, ExternalSecrets
/// whose template is one), each as the line of its `server` scalar, the
/// server it registers (decoded) and its `Kind/name`: what `check` asks
/// whether a retired endpoint is the `server` of a whole registration
/// document (the rollback target a cutover keeps). A file that does not
/// read as YAML has none.
pub fn registration_servers(text: &str) -> Vec<(usize, String, String)> {
    declarations(text, &|_| true, "")
        .unwrap_or_default()
        .into_iter()
        .map(|(_, _, d)| (d.line, d.server, d.resource))
        .collect()
}

/// A document, or the items of a `kind: List` (an export, `kubectl get -o
/// json`), each read by its own kind.
fn list_items(d: &Node) -> Vec<&Node> {
    match d.get(positions::LIST_ITEMS).map(|n| &n.value) {
        Some(Value::Seq(items)) => items.iter().collect(),
        _ => vec![d],
    }
}

/// ArgoCD's name for the cluster: `name` beside the `server` at `path`
/// (base64 when `encoded`).
fn name_beside(doc: &Node, path: &[&str], encoded: bool) -> Option<String> {
    let mut name_path = path.to_vec();
    name_path.pop();
    name_path.push(positions::NAME_KEY);
    let n = doc.str_at(&name_path)?;
    if encoded {
        crate::find::embedded::decoded_value(n)
    } else {
        Some(n.to_string())
    }
}

/// What a registration reads its token and CA from, in words.
fn credentials(doc: &Node, reg: &positions::Registration) -> String {
    match reg.credentials {
        positions::Credentials::Config(paths) => {
            let at = paths
                .iter()
                .find(|p| doc.at(p).is_some())
                .copied()
                .unwrap_or(paths[0]);
            format!("the bearer token and CA in `{}`", at.join("."))
        }
        positions::Credentials::Store {
            store,
            refs,
            key,
            property,
        } => {
            let store = doc.str_at(store).unwrap_or("?");
            let mut keys: Vec<String> = match doc.at(refs) {
                Some(Node {
                    value: Value::Seq(items),
                    ..
                }) => items
                    .iter()
                    .filter_map(|i| {
                        let key = i.str_at(key)?;
                        Some(match i.str_at(property) {
                            Some(p) => format!("{key} ({p})"),
                            None => key.to_string(),
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            keys.dedup();
            if keys.is_empty() {
                format!("the entries it reads from secret store `{store}`")
            } else {
                format!(
                    "secret store `{store}`, keys {}",
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_validated() {
        assert!(parse_label("team=platform").is_ok());
        assert!(parse_label("example.com/env=prod").is_ok());
        assert!(parse_label("example.com/env=").is_ok());
        for bad in [
            "noequals",
            "=v",
            "k=-bad",
            "k=a b",
            "bad key=v",
            "/x=v",
            "Example.com/x=v",
            "a/b/c=v",
            "a..b/x=v",
            "x=a23456789012345678901234567890123456789012345678901234567890abcd",
        ] {
            assert!(parse_label(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_follow_kubernetes() {
        assert!(is_dns_subdomain("cluster-a.b"));
        for bad in ["", "A", "a..b", "-a", "a-", "a.-b", "a_b", "a b"] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
        assert!(!is_dns_subdomain(&"a".repeat(254)));
        assert!(is_dns_label("argocd"));
        assert!(!is_dns_label("a.b"));
        assert!(!is_dns_label(&"a".repeat(64)));
    }

    #[test]
    fn role_arns() {
        for ok in [
            "arn:aws:iam::123456789012:role/argocd-manager",
            "arn:aws-cn:iam::123456789012:role/path/to/r+=,.@_-",
            "arn:aws-us-gov:iam::123456789012:role/r",
        ] {
            assert!(is_role_arn(ok), "{ok}");
        }
        for bad in [
            "not-an-arn",
            "arn:aws:iam::12345678901:role/r",
            "arn:aws:iam::123456789012:user/r",
            "arn:aws:iam::123456789012:role/",
            "arn:aws:iam::123456789012:role//r",
            "arn:awsx:iam::123456789012:role/r",
            "arn:aws:sts::123456789012:role/r",
            "arn:aws:iam:us-east-1:123456789012:role/r",
        ] {
            assert!(!is_role_arn(bad), "{bad}");
        }
    }

    #[test]
    fn require_env_checks_each_placeholder() {
        let spec = Spec::new("c", "https://a.example.com").unwrap();
        assert_eq!(placeholders(&spec), vec![TOKEN_VAR, CA_VAR]);
        let none = |_: &str| None;
        assert!(require_env(&spec, &none).is_err());
        let good = |v: &str| Some(if v == CA_VAR { "Zm9v" } else { "tok" }.to_string());
        assert!(require_env(&spec, &good).is_ok());
        let bad_ca = |v: &str| Some(if v == CA_VAR { "====" } else { "tok" }.to_string());
        assert!(require_env(&spec, &bad_ca).is_err());
    }
}
