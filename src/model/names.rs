//! The name positions table: every place in a manifest where an EKS
//! cluster's *name* (not its endpoint) identifies the cluster, keyed on a
//! scope, a typed YAML path and how the value holds the name.
//!
//! Cluster names are short and common words ("prod"), so a name is
//! rewritten only at a row of [`TABLE`]; anywhere else it is a mention,
//! reported and never rewritten. Each row has a positive and a negative
//! example, checked by this module's tests. `find::names` walks documents
//! and asks [`classify`]; nothing else here reads YAML.

use crate::model::positions::{self, Seg, P};
use P::{AnyKey, Deep, I, K};

/// What a name position is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamePosition {
    /// A cluster registration's `config.awsAuthConfig.clusterName`: the
    /// name ArgoCD asks a token for.
    RegistrationAuthName,
    /// A registration's `config.awsAuthConfig.roleARN` whose role name is
    /// derived from the cluster name.
    RegistrationRoleArn,
    /// A registration's `config.tlsClientConfig.caData` when it is the old
    /// cluster's CA (from its describe file): the new cluster's replaces it.
    RegistrationCaData,
    /// A kubeconfig cluster's `certificate-authority-data` when it is the
    /// old cluster's CA.
    KubeconfigCaData,
    /// A registration's `name` when it is the EKS cluster's name.
    RegistrationName,
    /// A registration's `server` written as the EKS cluster ARN.
    RegistrationArn,
    /// Karpenter `settings.clusterName` (`settings.aws.clusterName` before v0.33).
    KarpenterClusterName,
    /// Karpenter `settings.interruptionQueue` derived from the name.
    KarpenterInterruptionQueue,
    /// `karpenter.sh/discovery` in an `EC2NodeClass`/`AWSNodeTemplate`
    /// selector term or tag.
    KarpenterDiscovery,
    /// AWS Load Balancer Controller `clusterName`.
    LoadBalancerClusterName,
    /// cluster-autoscaler `autoDiscovery.clusterName`.
    AutoscalerClusterName,
    /// external-dns `txtOwnerId` equal to the name.
    ExternalDnsOwner,
    /// A `kubernetes.io/cluster/<name>` tag key.
    ClusterTagKey,
    /// An Application's (or ApplicationSet template's) `destination.name`
    /// that is the EKS name: ArgoCD's name of the registration, which moves
    /// with it (the new registration is named after the new cluster).
    DestinationName,
    /// An Application's (or ApplicationSet template's, or an AppProject
    /// destination's) `destination.name` that is the ArgoCD name of a
    /// registration of the old cluster which is not the EKS name
    /// (`prod-arn`): it moves to the name of the registration added beside
    /// it (`prod-blue-arn`), or the Application would stay on the old
    /// cluster, whose registration the cutover keeps.
    DestinationArgocdName,
    /// An EKS cluster ARN of the name anywhere else (an Application's
    /// `destination.server` on a hub that registers clusters by ARN).
    ClusterArn,
    /// A kubeconfig exec argument after `--cluster-name` (`aws eks
    /// get-token`) or `--cluster-id`/`-i` (aws-iam-authenticator).
    KubeconfigExecArg,
}

impl NamePosition {
    pub fn as_str(self) -> &'static str {
        match self {
            NamePosition::RegistrationAuthName => "registration awsAuthConfig.clusterName",
            NamePosition::RegistrationRoleArn => "registration awsAuthConfig.roleARN",
            NamePosition::RegistrationCaData => "registration tlsClientConfig.caData",
            NamePosition::KubeconfigCaData => "kubeconfig certificate-authority-data",
            NamePosition::RegistrationName => "registration name",
            NamePosition::RegistrationArn => "registration server ARN",
            NamePosition::KarpenterClusterName => "karpenter settings.clusterName",
            NamePosition::KarpenterInterruptionQueue => "karpenter settings.interruptionQueue",
            NamePosition::KarpenterDiscovery => "karpenter.sh/discovery selector",
            NamePosition::LoadBalancerClusterName => "aws-load-balancer-controller clusterName",
            NamePosition::AutoscalerClusterName => "cluster-autoscaler autoDiscovery.clusterName",
            NamePosition::ExternalDnsOwner => "external-dns txtOwnerId",
            NamePosition::ClusterTagKey => "kubernetes.io/cluster tag key",
            NamePosition::ClusterArn => "cluster ARN",
            NamePosition::DestinationName => "destination name",
            NamePosition::DestinationArgocdName => "destination registration name",
            NamePosition::KubeconfigExecArg => "kubeconfig exec argument",
        }
    }
}

/// Which documents (or parts of documents) a row's path is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A Helm values root: a values file (a document with no `kind`), an
    /// Application's `helm.valuesObject`, the document in its `helm.values`
    /// string, or a `helm.parameters` entry's dotted `name`.
    Values,
    /// Documents of this kind, from their root.
    Kind(&'static str),
    /// A cluster registration (a labelled Secret, an ExternalSecret's
    /// template data), from the registration's own fields (`name`, `server`).
    Registration,
    /// The JSON document in a registration's `config`.
    RegistrationConfig,
    /// An Application's destination name (the value itself: the reader
    /// asks `positions::fact` which scalar that is), or an AppProject
    /// destination's ([`is_project_destination_name`]).
    Destination,
    /// The values of a parent (umbrella) chart held for its dependency on
    /// this chart (the chart's `name` in the parent's `dependencies`): the
    /// path's first step is the dependency's key (its `alias`, else its
    /// name), and the rest is read as [`Scope::Values`] by the rows of this
    /// chart only ([`chart_of`]).
    Subchart(&'static str),
    /// Every document.
    Any,
}

/// The key of a parent chart's dependencies (`Chart.yaml` of apiVersion
/// v2, `requirements.yaml` of v1), and a dependency's chart name and alias
/// (Helm: a parent's values for a dependency sit under its alias, else its
/// name).
pub const CHART_DEPENDENCIES: &str = "dependencies";
/// Helm v2's dependencies file beside `Chart.yaml` (apiVersion v1 charts;
/// Helm 3 still reads it).
pub const CHART_REQUIREMENTS: &str = "requirements.yaml";
pub const DEPENDENCY_NAME: &str = "name";
pub const DEPENDENCY_ALIAS: &str = "alias";
/// A dependency's repository; `file://<path>` is a chart folder relative
/// to the parent's (Helm `dependency build` copies it into `charts/`).
pub const DEPENDENCY_REPOSITORY: &str = "repository";
pub const LOCAL_REPOSITORY: &str = "file://";
/// A chart's own name in its `Chart.yaml`.
pub const CHART_NAME: &str = "name";
/// The values key Helm copies from a parent chart into every subchart's
/// values (Helm docs, "Subcharts and Global Values").
pub const GLOBAL_VALUES: &str = "global";

/// The chart whose values a [`Scope::Values`] position is of, when it is
/// one chart's: its rows then also match under a parent chart's key for a
/// dependency on that chart ([`Scope::Subchart`]).
pub const fn chart_of(position: NamePosition) -> Option<&'static str> {
    match position {
        NamePosition::KarpenterClusterName | NamePosition::KarpenterInterruptionQueue => {
            Some("karpenter")
        }
        NamePosition::LoadBalancerClusterName => Some("aws-load-balancer-controller"),
        NamePosition::AutoscalerClusterName => Some("cluster-autoscaler"),
        NamePosition::ExternalDnsOwner => Some("external-dns"),
        _ => None,
    }
}

/// The key of an Application source's `path` (a folder of its repository).
pub fn source_path_key() -> &'static str {
    positions::FACTS
        .iter()
        .find(|(_, f)| *f == positions::Fact::SourcePath)
        .and_then(|(p, _)| p.last().copied())
        .unwrap_or_default()
}

/// The chart name `name` as the table spells it, when a row is of it.
pub fn table_chart(name: &str) -> Option<&'static str> {
    TABLE
        .iter()
        .filter_map(|r| chart_of(r.position))
        .find(|c| *c == name)
}

/// How a value at a row's path holds the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The whole value is the name.
    Equal,
    /// The value's last `/`- or `:`-separated part is the name, or the name
    /// joined by `-` or `_` to a prefix or a suffix (`Karpenter-prod`,
    /// `prod-argocd`): the name part is rewritten.
    Derived,
    /// The whole value is the EKS cluster ARN of the name: rewritten to the
    /// new cluster's ARN.
    Arn,
    /// A mapping key `kubernetes.io/cluster/<name>`.
    TagKey,
    /// The whole value is the old cluster's CA data.
    CaData,
    /// A sequence item equal to the name after a flag naming the cluster,
    /// or `--cluster-name=<name>`.
    ExecArg,
    /// The whole value is the ArgoCD name of a registration of the old
    /// cluster that gets a new name ([`NameContext::argocd_moves`]).
    ArgocdName,
}

/// One row of the table.
pub struct NameRow {
    pub scope: Scope,
    pub path: &'static [P],
    pub position: NamePosition,
    pub matching: Match,
    /// A (path, value) this row rewrites for the old name `prod`, and one
    /// that it must not.
    pub positive: (&'static str, &'static str),
    pub negative: (&'static str, &'static str),
}

/// The old name the examples are written for.
pub const EXAMPLE_NAME: &str = "prod";

/// The old CA data the examples are written for.
pub const EXAMPLE_CA: &str = "T0xEQ0E=";

/// The tag key prefix that names a cluster (`kubernetes.io/cluster/<name>`).
pub const CLUSTER_TAG_PREFIX: &str = "kubernetes.io/cluster/";

/// Karpenter's discovery tag key.
pub const DISCOVERY_KEY: &str = "karpenter.sh/discovery";

/// Whether `path` is an AppProject destination's `name` (the sibling of
/// the table's project destination `server`): read as a
/// [`Scope::Destination`].
pub fn is_project_destination_name(path: &[Seg]) -> bool {
    positions::TABLE
        .iter()
        .filter(|r| r.position == positions::Position::ProjectDestination)
        .any(|r| {
            let Some((_, parent)) = r.path.split_last() else {
                return false;
            };
            path.len() == r.path.len()
                && positions::matches(parent, &path[..parent.len()])
                && path.last() == Some(&Seg::Key(positions::NAME_KEY.to_string()))
        })
}

/// Where an ApplicationSet holds its generators.
pub const GENERATORS: &[&str] = &["spec", "generators"];

/// The ArgoCD name of the old cluster's registration the examples are
/// written for, and the name of the one added beside it.
pub const EXAMPLE_ARGOCD_MOVE: (&str, &str) = ("prod-arn", "prod-blue-arn");

/// Exec arguments whose next argument is the cluster's name.
pub const EXEC_NAME_FLAGS: [&str; 3] = ["--cluster-name", "--cluster-id", "-i"];

/// Every name position. Rows are tried in order.
pub const TABLE: &[NameRow] = &[
    NameRow {
        scope: Scope::RegistrationConfig,
        path: &[K("awsAuthConfig"), K("clusterName")],
        position: NamePosition::RegistrationAuthName,
        matching: Match::Equal,
        positive: ("awsAuthConfig.clusterName", "prod"),
        negative: ("awsAuthConfig.profile", "prod"),
    },
    NameRow {
        scope: Scope::RegistrationConfig,
        path: &[K("awsAuthConfig"), K("roleARN")],
        position: NamePosition::RegistrationRoleArn,
        matching: Match::Derived,
        positive: (
            "awsAuthConfig.roleARN",
            "arn:aws:iam::111122223333:role/prod-argocd",
        ),
        negative: (
            "awsAuthConfig.roleARN",
            "arn:aws:iam::111122223333:role/production-argocd",
        ),
    },
    NameRow {
        scope: Scope::RegistrationConfig,
        path: &[K("tlsClientConfig"), K("caData")],
        position: NamePosition::RegistrationCaData,
        matching: Match::CaData,
        positive: ("tlsClientConfig.caData", EXAMPLE_CA),
        negative: ("tlsClientConfig.caData", "T1RIRVI="),
    },
    NameRow {
        scope: Scope::Registration,
        path: &[K(positions::NAME_KEY)],
        position: NamePosition::RegistrationName,
        matching: Match::Equal,
        positive: ("name", "prod"),
        negative: ("name", "prod-eks"),
    },
    NameRow {
        scope: Scope::Registration,
        path: &[K(REGISTRATION_SERVER)],
        position: NamePosition::RegistrationArn,
        matching: Match::Arn,
        positive: (
            REGISTRATION_SERVER,
            "arn:aws:eks:eu-west-1:111122223333:cluster/prod",
        ),
        negative: (
            REGISTRATION_SERVER,
            "arn:aws:eks:eu-west-1:111122223333:cluster/stage",
        ),
    },
    NameRow {
        scope: Scope::Destination,
        path: &[],
        position: NamePosition::DestinationName,
        matching: Match::Equal,
        positive: ("", "prod"),
        negative: ("", "prod-eks"),
    },
    NameRow {
        scope: Scope::Destination,
        path: &[],
        position: NamePosition::DestinationArgocdName,
        matching: Match::ArgocdName,
        positive: ("", EXAMPLE_ARGOCD_MOVE.0),
        negative: ("", "prod-eks"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("settings"), K("clusterName")],
        position: NamePosition::KarpenterClusterName,
        matching: Match::Equal,
        positive: ("settings.clusterName", "prod"),
        negative: ("settings.featureGates.clusterName", "prod"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("settings"), K("aws"), K("clusterName")],
        position: NamePosition::KarpenterClusterName,
        matching: Match::Equal,
        positive: ("settings.aws.clusterName", "prod"),
        negative: ("settings.aws.clusterName", "stage"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("settings"), K("interruptionQueue")],
        position: NamePosition::KarpenterInterruptionQueue,
        matching: Match::Derived,
        positive: ("settings.interruptionQueue", "Karpenter-prod"),
        negative: ("settings.interruptionQueue", "shared-interruptions"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("settings"), K("aws"), K("interruptionQueueName")],
        position: NamePosition::KarpenterInterruptionQueue,
        matching: Match::Derived,
        positive: ("settings.aws.interruptionQueueName", "prod"),
        negative: ("settings.aws.interruptionQueueName", "products"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("clusterName")],
        position: NamePosition::LoadBalancerClusterName,
        matching: Match::Equal,
        positive: ("clusterName", "prod"),
        negative: ("ingressClass", "prod"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("autoDiscovery"), K("clusterName")],
        position: NamePosition::AutoscalerClusterName,
        matching: Match::Equal,
        positive: ("autoDiscovery.clusterName", "prod"),
        negative: ("autoDiscovery.tags[0]", "prod"),
    },
    NameRow {
        scope: Scope::Values,
        path: &[K("txtOwnerId")],
        position: NamePosition::ExternalDnsOwner,
        matching: Match::Equal,
        positive: ("txtOwnerId", "prod"),
        negative: ("txtOwnerId", "prod-dns-owner"),
    },
    NameRow {
        scope: Scope::Kind("EC2NodeClass"),
        path: &[K("spec"), AnyKey, I, K("tags"), K(DISCOVERY_KEY)],
        position: NamePosition::KarpenterDiscovery,
        matching: Match::Equal,
        positive: (
            "spec.subnetSelectorTerms[0].tags[\"karpenter.sh/discovery\"]",
            "prod",
        ),
        negative: ("spec.subnetSelectorTerms[0].tags.Name", "prod"),
    },
    NameRow {
        scope: Scope::Kind("EC2NodeClass"),
        path: &[K("spec"), K("tags"), K(DISCOVERY_KEY)],
        position: NamePosition::KarpenterDiscovery,
        matching: Match::Equal,
        positive: ("spec.tags[\"karpenter.sh/discovery\"]", "prod"),
        negative: ("spec.role", "prod"),
    },
    NameRow {
        scope: Scope::Kind("AWSNodeTemplate"),
        path: &[K("spec"), AnyKey, K(DISCOVERY_KEY)],
        position: NamePosition::KarpenterDiscovery,
        matching: Match::Equal,
        positive: ("spec.subnetSelector[\"karpenter.sh/discovery\"]", "prod"),
        negative: ("spec.subnetSelector.Name", "prod"),
    },
    NameRow {
        scope: Scope::Kind("Config"),
        path: &[AnyKey, I, AnyKey, K("certificate-authority-data")],
        position: NamePosition::KubeconfigCaData,
        matching: Match::CaData,
        positive: (
            "clusters[0].cluster[\"certificate-authority-data\"]",
            EXAMPLE_CA,
        ),
        negative: (
            "clusters[0].cluster[\"certificate-authority-data\"]",
            "T1RIRVI=",
        ),
    },
    NameRow {
        scope: Scope::Kind("Config"),
        path: &[K("users"), I, K("user"), K("exec"), K("args"), I],
        position: NamePosition::KubeconfigExecArg,
        matching: Match::ExecArg,
        positive: ("users[0].user.exec.args[3]", "--cluster-name=prod"),
        negative: ("users[0].user.exec.args[3]", "--profile=prod"),
    },
    NameRow {
        scope: Scope::Any,
        path: &[Deep, AnyKey],
        position: NamePosition::ClusterTagKey,
        matching: Match::TagKey,
        positive: ("spec.tags[\"kubernetes.io/cluster/prod\"]", "owned"),
        negative: ("spec.tags[\"kubernetes.io/cluster/prod-b\"]", "owned"),
    },
    NameRow {
        scope: Scope::Any,
        path: &[Deep],
        position: NamePosition::ClusterArn,
        matching: Match::Arn,
        positive: (
            "spec.destination.server",
            "arn:aws:eks:eu-west-1:111122223333:cluster/prod",
        ),
        negative: (
            "spec.destination.server",
            "arn:aws:eks:eu-west-1:111122223333:cluster/prod-b",
        ),
    },
];

/// The registration's server key (its last path step in
/// [`positions::REGISTRATIONS`]).
pub const REGISTRATION_SERVER: &str = registration_server();

const fn registration_server() -> &'static str {
    let path = positions::REGISTRATIONS[0].servers[0].0;
    path[path.len() - 1]
}

/// The registration `config` key (the last step of the Secret's
/// credentials path in [`positions::REGISTRATIONS`]).
pub fn registration_config_key() -> &'static str {
    match positions::REGISTRATIONS[0].credentials {
        positions::Credentials::Config(paths) => paths[0][paths[0].len() - 1],
        positions::Credentials::Store { .. } => unreachable!("the Secret row reads its config"),
    }
}

/// What the locator knows about a value besides its path.
#[derive(Debug, Default, Clone, Copy)]
pub struct NameContext<'a> {
    /// The previous item of the value's sequence (exec arguments).
    pub previous: Option<&'a str>,
    /// The value is a mapping key (tag keys).
    pub is_key: bool,
    /// The old cluster's CA data, when known.
    pub old_ca: Option<&'a str>,
    /// The new name: a name part that is inside an occurrence of it
    /// (`prod` in `prod-blue`, when `prod-blue` is the new name) is
    /// already rebound, not derived from the old name.
    pub new: Option<&'a str>,
    /// The ArgoCD names of the old cluster's registrations that get a new
    /// name, each with it (`prod-arn` → `prod-blue-arn`).
    pub argocd_moves: &'a [(String, String)],
}

/// The row that `path` (in `scope`) and `value` are at for the old name
/// `old`, and the byte range of `value` that is the name (for
/// [`Match::Arn`] and [`Match::CaData`], the whole value).
pub fn classify(
    scope: Scope,
    path: &[Seg],
    value: &str,
    old: &str,
    cx: &NameContext,
) -> Option<(&'static NameRow, std::ops::Range<usize>)> {
    TABLE.iter().find_map(|row| {
        let (in_scope, path) = match scope {
            Scope::Subchart(chart) => (
                row.scope == Scope::Values && chart_of(row.position) == Some(chart),
                path.get(1..)?,
            ),
            _ => (row.scope == scope || row.scope == Scope::Any, path),
        };
        if !in_scope || (row.matching == Match::TagKey) != cx.is_key {
            return None;
        }
        if !positions::matches(row.path, path) {
            return None;
        }
        let range = name_range(row.matching, value, old, cx)?;
        let rebound = cx.new.is_some_and(|new| within_new(value, &range, new));
        (!rebound).then_some((row, range))
    })
}

/// Where in `value` the name is, as `m` reads it.
fn name_range(
    m: Match,
    value: &str,
    old: &str,
    cx: &NameContext,
) -> Option<std::ops::Range<usize>> {
    let whole = || Some(0..value.len());
    match m {
        Match::Equal => (value == old).then(whole)?,
        Match::Arn => {
            let arn = crate::model::cluster::parse_arn(value)?;
            (arn.name == old).then(whole)?
        }
        Match::TagKey => {
            let name = value.strip_prefix(CLUSTER_TAG_PREFIX)?;
            let at = CLUSTER_TAG_PREFIX.len();
            (name == old).then_some(at..at + old.len())
        }
        Match::ExecArg => {
            if value == old && cx.previous.is_some_and(|p| EXEC_NAME_FLAGS.contains(&p)) {
                return whole();
            }
            let (flag, name) = value.split_once('=')?;
            (EXEC_NAME_FLAGS.contains(&flag) && name == old).then_some(flag.len() + 1..value.len())
        }
        Match::Derived => derived(value, old),
        Match::CaData => (cx.old_ca == Some(value)).then(whole)?,
        Match::ArgocdName => cx
            .argocd_moves
            .iter()
            .any(|(o, _)| o == value)
            .then(whole)?,
    }
}

/// Whether the range `r` of `value` lies inside an occurrence of `new`.
pub fn within_new(value: &str, r: &std::ops::Range<usize>, new: &str) -> bool {
    value
        .match_indices(new)
        .any(|(i, m)| i <= r.start && r.end <= i + m.len())
}

/// [`derived`], for a name derived from the cluster's outside the table
/// (the Secret name of the registration added beside the old one).
pub fn derived_part(value: &str, old: &str) -> Option<std::ops::Range<usize>> {
    derived(value, old)
}

/// The name of the registration added beside the old cluster's, from the
/// old one's (`value`, a Secret name or an ArgoCD name): the old EKS name
/// part replaced by the new (`cluster-prod` → `cluster-prod-blue`), else
/// `-<new name>` added; in the characters a Secret name takes.
pub fn renamed(value: &str, old: &str, new: &str) -> String {
    let new = new.to_ascii_lowercase().replace('_', "-");
    match derived(value, old) {
        Some(r) => format!("{}{new}{}", &value[..r.start], &value[r.end..]),
        None => format!("{value}-{new}"),
    }
}

/// Where the name sits in a value derived from it: its last `/`/`:` part
/// is the name, or the name with a `-`/`_`-joined prefix or suffix.
fn derived(value: &str, old: &str) -> Option<std::ops::Range<usize>> {
    let start = value.rfind(['/', ':']).map_or(0, |i| i + 1);
    let part = &value[start..];
    let joined = |c: char| c == '-' || c == '_';
    if part == old {
        return Some(start..value.len());
    }
    if let Some(head) = part.strip_suffix(old) {
        if head.ends_with(joined) {
            return Some(value.len() - old.len()..value.len());
        }
    }
    let tail = part.strip_prefix(old)?;
    tail.starts_with(joined).then_some(start..start + old.len())
}

/// A Helm `parameters` entry's `name` as a values path
/// (`settings.clusterName`, `a\.b` for a dot inside a key).
pub fn parameter_path(name: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                cur.push('.');
                chars.next();
            }
            '.' => out.push(Seg::Key(std::mem::take(&mut cur))),
            _ => cur.push(c),
        }
    }
    out.push(Seg::Key(cur));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a.b[0]["k.x"]` as path steps.
    fn path(s: &str) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            // (the empty path: the value itself)
            if let Some(r) = rest.strip_prefix("[\"") {
                let end = r.find("\"]").unwrap();
                out.push(Seg::Key(r[..end].to_string()));
                rest = &r[end + 2..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').unwrap();
                out.push(Seg::Index(r[..end].parse().unwrap()));
                rest = &r[end + 1..];
            } else {
                let r = rest.strip_prefix('.').unwrap_or(rest);
                let end = r.find(['.', '[']).unwrap_or(r.len());
                out.push(Seg::Key(r[..end].to_string()));
                rest = &r[end..];
            }
        }
        out
    }

    /// A tag key's example names its key as the path's last step.
    fn try_row(row: &NameRow, (p, v): (&str, &str)) -> bool {
        let segs = path(p);
        let (value, is_key) = match row.matching {
            Match::TagKey => match segs.last() {
                Some(Seg::Key(k)) => (k.clone(), true),
                _ => return false,
            },
            _ => (v.to_string(), false),
        };
        let moves = [(
            EXAMPLE_ARGOCD_MOVE.0.to_string(),
            EXAMPLE_ARGOCD_MOVE.1.to_string(),
        )];
        let cx = NameContext {
            previous: None,
            is_key,
            old_ca: Some(EXAMPLE_CA),
            new: Some("prod-blue"),
            argocd_moves: &moves,
        };
        classify(row.scope, &segs, &value, EXAMPLE_NAME, &cx)
            .is_some_and(|(r, _)| r.position == row.position)
    }

    #[test]
    fn every_row_has_a_positive_and_a_negative_example() {
        for row in TABLE {
            assert!(try_row(row, row.positive), "{:?} positive", row.position);
            assert!(!try_row(row, row.negative), "{:?} negative", row.position);
        }
    }

    /// An umbrella chart's values for its dependency on a chart: the
    /// chart's rows under the dependency's key, no other chart's.
    #[test]
    fn a_subchart_reads_its_own_charts_rows_under_its_key() {
        let cx = NameContext::default();
        let at = |chart, p: &str| {
            classify(Scope::Subchart(chart), &path(p), "prod", "prod", &cx).map(|(r, _)| r.position)
        };
        use NamePosition as N;
        assert_eq!(
            at("karpenter", "karpenter.settings.clusterName"),
            Some(N::KarpenterClusterName)
        );
        assert_eq!(
            at("karpenter", "k.settings.interruptionQueue"),
            Some(N::KarpenterInterruptionQueue)
        );
        assert_eq!(
            at("aws-load-balancer-controller", "lbc.clusterName"),
            Some(N::LoadBalancerClusterName)
        );
        assert_eq!(
            at("cluster-autoscaler", "ca.autoDiscovery.clusterName"),
            Some(N::AutoscalerClusterName)
        );
        assert_eq!(
            at("external-dns", "dns.txtOwnerId"),
            Some(N::ExternalDnsOwner)
        );
        // Another chart's row, the key itself, the parent's own values.
        assert_eq!(at("karpenter", "karpenter.clusterName"), None);
        assert_eq!(
            at("aws-load-balancer-controller", "lbc.settings.clusterName"),
            None
        );
        assert_eq!(at("karpenter", "settings"), None);
        assert_eq!(at("karpenter", ""), None);
        assert_eq!(table_chart("karpenter"), Some("karpenter"));
        assert_eq!(table_chart("karp"), None);
    }

    #[test]
    fn derived_values_rewrite_the_name_part_only() {
        let r = |v: &str| derived(v, "prod").map(|r| v[r].to_string());
        assert_eq!(r("Karpenter-prod").as_deref(), Some("prod"));
        assert_eq!(r("prod_karpenter").as_deref(), Some("prod"));
        assert_eq!(r("arn:aws:iam::1:role/prod").as_deref(), Some("prod"));
        assert_eq!(derived("Karpenter-prod", "prod"), Some(10..14));
        for not in ["production", "reprod", "preprod", "prod.example", "x/prodq"] {
            assert_eq!(r(not), None, "{not}");
        }
        // Already rebound to a new name that extends the old one.
        let row = TABLE
            .iter()
            .find(|r| r.position == NamePosition::KarpenterInterruptionQueue)
            .unwrap();
        let cx = |new| NameContext {
            new,
            ..NameContext::default()
        };
        let at = |v: &str, new| {
            classify(
                row.scope,
                &path("settings.interruptionQueue"),
                v,
                "prod",
                &cx(new),
            )
        };
        assert!(at("Karpenter-prod-blue", Some("prod-blue")).is_none());
        assert!(at("Karpenter-blue-prod", Some("blue-prod")).is_none());
        assert!(at("Karpenter-prod", Some("prod-blue")).is_some());
    }

    #[test]
    fn exec_arguments_after_a_cluster_flag() {
        let args = path("users[0].user.exec.args[4]");
        let cx = |previous| NameContext {
            previous,
            ..NameContext::default()
        };
        let at = |v: &str, prev| classify(Scope::Kind("Config"), &args, v, "prod", &cx(prev));
        assert!(at("prod", Some("--cluster-name")).is_some());
        assert!(at("prod", Some("-i")).is_some());
        assert!(at("prod", Some("--profile")).is_none());
        assert!(at("prod", None).is_none());
        let (_, r) = at("--cluster-name=prod", None).unwrap();
        assert_eq!(r, 15..19);
    }

    #[test]
    fn a_destination_is_moved_by_the_registration_names_it_was_given() {
        let moves = [("prod-arn".to_string(), "prod-blue-arn".to_string())];
        let cx = NameContext {
            new: Some("prod-blue"),
            argocd_moves: &moves,
            ..NameContext::default()
        };
        let at = |v: &str| {
            classify(Scope::Destination, &[], v, "prod", &cx).map(|(row, r)| (row.position, r))
        };
        assert_eq!(at("prod"), Some((NamePosition::DestinationName, 0..4)));
        assert_eq!(
            at("prod-arn"),
            Some((NamePosition::DestinationArgocdName, 0..8))
        );
        // Another cluster's name, in-cluster, a name the moves do not hold.
        for not in [
            "prod-eks",
            "in-cluster",
            "stage",
            "prod-blue-arn",
            "production",
        ] {
            assert_eq!(at(not), None, "{not}");
        }
        // Without the registrations' names, only the EKS name moves.
        let bare = NameContext::default();
        assert!(classify(Scope::Destination, &[], "prod-arn", "prod", &bare).is_none());
        assert_eq!(renamed("prod-arn", "prod", "prod-blue"), "prod-blue-arn");
        assert_eq!(
            renamed("cluster-prod", "prod", "Prod_Blue"),
            "cluster-prod-blue"
        );
        assert_eq!(
            renamed("hub-east", "prod", "prod-blue"),
            "hub-east-prod-blue"
        );
    }

    #[test]
    fn parameter_names_are_values_paths() {
        assert_eq!(
            parameter_path("settings.clusterName"),
            path("settings.clusterName")
        );
        assert_eq!(
            parameter_path("podAnnotations.a\\.b"),
            vec![Seg::Key("podAnnotations".into()), Seg::Key("a.b".into())]
        );
        assert_eq!(registration_config_key(), "config");
    }
}
