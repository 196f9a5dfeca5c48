//! The flags that shape the cluster Secret, shared by `rebind secret` and
//! `rebind apply --secret-out`.

use rebind::review::secret::SecretOptions;
use std::path::PathBuf;

/// The flags that shape the cluster Secret, shared by `rebind secret` and
/// `rebind apply --secret-out` (flattened into both argument structs);
/// [`SecretFlags::options`] hands them to the library.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SecretFlags {
    /// metadata.name of the Secret (default: cluster-<cluster name>).
    #[arg(long, value_name = "NAME")]
    pub secret_name: Option<String>,
    /// Namespace ArgoCD runs in (default: argocd).
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// tlsClientConfig.serverName (SNI) to verify the server certificate against.
    #[arg(long, value_name = "HOST")]
    pub server_name: Option<String>,
    /// Put the value of environment variable VAR in as the bearer token
    /// (only to stdout or a path outside any git work tree).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// PEM CA bundle to embed (base64) as caData.
    #[arg(long, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// caData as base64 (default: the ${ARGOCD_CLUSTER_CA} placeholder).
    #[arg(long, value_name = "BASE64")]
    pub ca_data: Option<String>,
    /// EKS cluster name for the awsAuthConfig form (no secret in the manifest).
    #[arg(long, value_name = "NAME")]
    pub aws_cluster_name: Option<String>,
    /// IAM role ArgoCD assumes for the awsAuthConfig form.
    #[arg(long, value_name = "ARN")]
    pub aws_role_arn: Option<String>,
    /// AWS profile for the awsAuthConfig form.
    #[arg(long, value_name = "PROFILE")]
    pub aws_profile: Option<String>,
    /// Emit an external-secrets.io ExternalSecret that renders the cluster Secret.
    #[arg(long)]
    pub external_secret: bool,
    /// Secret store the ExternalSecret reads from.
    #[arg(long, value_name = "NAME")]
    pub store: Option<String>,
    /// Kind of that store: ClusterSecretStore (default) or SecretStore.
    #[arg(long, value_name = "KIND")]
    pub store_kind: Option<String>,
    /// Key in the store holding `token` (and `caData`) properties.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Label KEY=VALUE on the Secret (repeatable); cluster generators select on these.
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Annotation KEY=VALUE on the Secret (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub annotation: Vec<String>,
    /// AppProject the cluster is scoped to.
    #[arg(long)]
    pub project: Option<String>,
    /// Namespaces ArgoCD may manage on the cluster, comma-separated.
    #[arg(long, value_name = "A,B")]
    pub namespaces: Option<String>,
    /// With --namespaces: whether cluster-scoped resources may be managed too.
    #[arg(long, value_name = "BOOL")]
    pub cluster_resources: Option<bool>,
    /// Fail unless every ${VAR} placeholder left in the manifest
    /// (ARGOCD_CLUSTER_TOKEN, ARGOCD_CLUSTER_CA) is set and well-formed in the
    /// environment, so a following `envsubst` cannot blank it.
    #[arg(long)]
    pub require_env: bool,
    /// The new cluster's `aws eks describe-cluster --output json`: name,
    /// server, caData and awsAuthConfig.clusterName come from it unless given.
    #[arg(long, value_name = "FILE")]
    pub describe: Option<PathBuf>,
    /// Register the cluster by its ARN (server: arn:aws:eks:...), as a
    /// repository that registers by ARN does.
    #[arg(long)]
    pub server_arn: bool,
    /// Emit the ExternalSecret at external-secrets.io/v1beta1 (external-secrets
    /// before 0.17) instead of v1.
    #[arg(long)]
    pub external_secrets_v1beta1: bool,
}

impl SecretFlags {
    /// The library's options, as the flags give them. The flags are taken
    /// apart field by field: a flag added here and not passed on does not
    /// compile.
    pub fn options(&self) -> SecretOptions {
        let SecretFlags {
            secret_name,
            namespace,
            server_name,
            token_env,
            ca_file,
            ca_data,
            aws_cluster_name,
            aws_role_arn,
            aws_profile,
            external_secret,
            store,
            store_kind,
            key,
            label,
            annotation,
            project,
            namespaces,
            cluster_resources,
            require_env,
            describe,
            server_arn,
            external_secrets_v1beta1,
        } = self.clone();
        SecretOptions {
            secret_name,
            namespace,
            server_name,
            token_env,
            ca_file,
            ca_data,
            aws_cluster_name,
            aws_role_arn,
            aws_profile,
            external_secret,
            store,
            store_kind,
            key,
            label,
            annotation,
            project,
            namespaces,
            cluster_resources,
            require_env,
            describe,
            described: None,
            server_arn,
            external_secrets_v1beta1,
        }
    }
}
