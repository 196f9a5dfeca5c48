//! The positions table: every place in a manifest where a Kubernetes API
//! endpoint names a cluster, keyed on a typed YAML path and the resource kind.
//!
//! This is the one module that knows YAML paths. `locate` asks it whether a
//! scalar may hold a cluster ([`may_hold`]) and which position it is at
//! ([`classify`]); cluster naming (`init`), `check`'s undeclared rule, the
//! duplicate-Secret search and the tier table ask the [`Position`] they get
//! back. To teach rebind a new position, add a row to [`TABLE`] with a
//! positive and a negative example: the table's tests check both, and check
//! that [`may_hold`] lets every positive example through.

pub use crate::syntax::yaml::{Seg, YamlPath};

/// One step of a pattern in the table.
#[derive(Debug, Clone, Copy)]
pub enum P {
    /// This mapping key.
    K(&'static str),
    /// Any sequence index.
    I,
    /// Any mapping key.
    AnyKey,
    /// Any number (zero included) of any steps.
    Deep,
}

/// What a cluster position is, as its consumers need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Position {
    /// `spec.destination.server` of an Application or an ApplicationSet template.
    DestinationServer,
    /// An AppProject's allowed destination.
    ProjectDestination,
    /// The server of an ArgoCD cluster registration (Secret or ExternalSecret template).
    Registration,
    /// The `config` JSON of a cluster registration (`tlsClientConfig.serverName`).
    RegistrationConfig,
    /// A key of an ApplicationSet list-generator element that the template
    /// puts in `destination.server` (or that holds a managed-cluster host).
    ListElement,
    /// argocd-cm `resource.exclusions` / `resource.inclusions` cluster lists.
    ResourceFilter,
    /// Helm value `clusterEndpoint` (karpenter), as a key anywhere.
    HelmClusterEndpoint,
    /// A Helm `parameters` entry whose `name` ends in `clusterEndpoint`.
    HelmParameter,
    /// A `server:` or `clusterEndpoint:` line inside a string (Helm `values: |`).
    InStringKey,
    /// `server` in a file with no `kind` (a Helm values file), at the top
    /// level or under a key naming clusters (`clusters[].server`,
    /// `cluster.server`, `destination.server`); `vault.server` is no cluster.
    ValuesServer,
    /// A kubeconfig (`kind: Config`) `clusters[].cluster.server` or
    /// `tls-server-name`.
    Kubeconfig,
    /// A copy of the destination in an exported object's `status`
    /// (`status.sync.comparedTo.destination.server`): rewritten with the rest
    /// so a backup does not keep the old cluster.
    StatusCopy,
    /// A JSON 6902 patch op whose `path` (plus the path inside its `value`)
    /// lands on a cluster position: a kustomize `patches[].patch` string or
    /// a `patchesJson6902` file.
    PatchOp,
    /// A values-file path that a chart template in the repository renders
    /// into a cluster position (found by `templates`, not by this table).
    ChartValue,
}

impl Position {
    /// A sibling `name` key names the cluster (not, say, a Helm parameter).
    pub fn sibling_name_is_cluster(self) -> bool {
        matches!(
            self,
            Position::Registration
                | Position::ListElement
                | Position::ValuesServer
                | Position::ChartValue
        )
    }

    /// A sibling `env` or `environment` key names the cluster (list-generator
    /// elements such as `{env: sandbox, server: ...}`).
    pub fn sibling_env_is_cluster(self) -> bool {
        matches!(self, Position::ListElement | Position::ChartValue)
    }

    /// The position registers a cluster with ArgoCD (one per server URL).
    pub fn is_registration(self) -> bool {
        self == Position::Registration
    }

    /// A bare host or IP (no scheme) here still names the API server.
    pub fn accepts_bare_host(self) -> bool {
        matches!(
            self,
            Position::RegistrationConfig | Position::HelmClusterEndpoint | Position::Kubeconfig
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Position::DestinationServer => "destination server",
            Position::ProjectDestination => "project destination",
            Position::Registration => "cluster registration",
            Position::RegistrationConfig => "cluster registration config",
            Position::ListElement => "list-generator element",
            Position::ResourceFilter => "resource filter",
            Position::HelmClusterEndpoint => "Helm clusterEndpoint",
            Position::HelmParameter => "Helm parameter",
            Position::InStringKey => "server line in a string",
            Position::ValuesServer => "values server",
            Position::Kubeconfig => "kubeconfig cluster",
            Position::StatusCopy => "status copy",
            Position::PatchOp => "kustomize patch op",
            Position::ChartValue => "chart value in a cluster position",
        }
    }
}

/// Which documents a row applies to.
#[derive(Debug, Clone, Copy)]
pub enum Kinds {
    /// Documents with this `kind`.
    Is(&'static str),
    /// Documents without a `kind` (values files).
    None,
    /// Every document.
    Any,
}

/// Which endpoints in a row's value are at its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// Every endpoint in the value (a URL, or a bare host where the position
    /// [accepts one](Position::accepts_bare_host)).
    Whole,
    /// The value is a document of its own (a registration's `config`): a
    /// URL in it is at a position only where that document's own kind and
    /// path put one (an exec plugin's argument, a proxy or an identity
    /// provider is no cluster), and one that does not parse stays at the
    /// row's position, to be safe; a bare host (`serverName`) is at the
    /// row's position.
    Document,
}

/// One row of the table.
pub struct Row {
    pub kinds: Kinds,
    pub path: &'static [P],
    pub position: Position,
    pub within: Within,
    /// A (kind, path) that this row matches, and one that it must not.
    pub positive: (Option<&'static str>, &'static str),
    pub negative: (Option<&'static str>, &'static str),
}

use P::{AnyKey, Deep, I, K};

/// Every structural cluster position. Rows are tried in order.
pub const TABLE: &[Row] = &[
    Row {
        kinds: Kinds::Is("Application"),
        path: &[K("spec"), K("destination"), K("server")],
        position: Position::DestinationServer,
        within: Within::Whole,
        positive: (Some("Application"), "spec.destination.server"),
        negative: (Some("Application"), "spec.source.repoURL"),
    },
    Row {
        kinds: Kinds::Is("ApplicationSet"),
        path: &[
            K("spec"),
            K("template"),
            K("spec"),
            K("destination"),
            K("server"),
        ],
        position: Position::DestinationServer,
        within: Within::Whole,
        positive: (
            Some("ApplicationSet"),
            "spec.template.spec.destination.server",
        ),
        negative: (Some("ApplicationSet"), "spec.template.spec.source.repoURL"),
    },
    Row {
        kinds: Kinds::Is("ApplicationSet"),
        path: &[Deep, K("list"), K("elements"), I, AnyKey],
        position: Position::ListElement,
        within: Within::Whole,
        positive: (
            Some("ApplicationSet"),
            "spec.generators[0].list.elements[1].url",
        ),
        negative: (
            Some("Application"),
            "spec.generators[0].list.elements[1].url",
        ),
    },
    Row {
        kinds: Kinds::Is("AppProject"),
        path: &[K("spec"), K("destinations"), I, K("server")],
        position: Position::ProjectDestination,
        within: Within::Whole,
        positive: (Some("AppProject"), "spec.destinations[0].server"),
        negative: (Some("AppProject"), "spec.sourceRepos[0]"),
    },
    Row {
        kinds: Kinds::Is("Secret"),
        path: &[K("stringData"), K("server")],
        position: Position::Registration,
        within: Within::Whole,
        positive: (Some("Secret"), "stringData.server"),
        negative: (Some("Secret"), "stringData.url"),
    },
    Row {
        kinds: Kinds::Is("Secret"),
        path: &[K("data"), K("server")],
        position: Position::Registration,
        within: Within::Whole,
        positive: (Some("Secret"), "data.server"),
        negative: (Some("Secret"), "data.url"),
    },
    Row {
        kinds: Kinds::Is("Secret"),
        path: &[K("stringData"), K("config")],
        position: Position::RegistrationConfig,
        within: Within::Document,
        positive: (Some("Secret"), "stringData.config"),
        negative: (Some("ConfigMap"), "stringData.config"),
    },
    Row {
        kinds: Kinds::Is("Secret"),
        path: &[K("data"), K("config")],
        position: Position::RegistrationConfig,
        within: Within::Document,
        positive: (Some("Secret"), "data.config"),
        negative: (Some("ConfigMap"), "data.config"),
    },
    Row {
        kinds: Kinds::Is("ExternalSecret"),
        path: &[
            K("spec"),
            K("target"),
            K("template"),
            K("data"),
            K("server"),
        ],
        position: Position::Registration,
        within: Within::Whole,
        positive: (Some("ExternalSecret"), "spec.target.template.data.server"),
        negative: (Some("ExternalSecret"), "spec.target.template.data.name"),
    },
    Row {
        kinds: Kinds::Is("ExternalSecret"),
        path: &[
            K("spec"),
            K("target"),
            K("template"),
            K("data"),
            K("config"),
        ],
        position: Position::RegistrationConfig,
        within: Within::Document,
        positive: (Some("ExternalSecret"), "spec.target.template.data.config"),
        negative: (Some("ExternalSecret"), "spec.target.name"),
    },
    Row {
        kinds: Kinds::Is("ConfigMap"),
        path: &[K("data"), K("resource.exclusions"), Deep],
        position: Position::ResourceFilter,
        within: Within::Whole,
        positive: (Some("ConfigMap"), "data[\"resource.exclusions\"]"),
        negative: (Some("ConfigMap"), "data[\"url\"]"),
    },
    Row {
        kinds: Kinds::Is("ConfigMap"),
        path: &[K("data"), K("resource.inclusions"), Deep],
        position: Position::ResourceFilter,
        within: Within::Whole,
        positive: (Some("ConfigMap"), "data[\"resource.inclusions\"]"),
        negative: (Some("Secret"), "data[\"resource.inclusions\"]"),
    },
    Row {
        kinds: Kinds::Any,
        path: &[Deep, K("clusterEndpoint")],
        position: Position::HelmClusterEndpoint,
        within: Within::Whole,
        positive: (
            Some("Application"),
            "spec.source.helm.valuesObject.settings.clusterEndpoint",
        ),
        negative: (
            Some("Application"),
            "spec.source.helm.valuesObject.settings.endpoint",
        ),
    },
    Row {
        kinds: Kinds::Is("Application"),
        path: &[
            K("status"),
            K("sync"),
            K("comparedTo"),
            K("destination"),
            K("server"),
        ],
        position: Position::StatusCopy,
        within: Within::Whole,
        positive: (
            Some("Application"),
            "status.sync.comparedTo.destination.server",
        ),
        negative: (Some("Application"), "status.sync.comparedTo.source.repoURL"),
    },
    Row {
        kinds: Kinds::Is("Config"),
        path: &[K("clusters"), I, K("cluster"), K("server")],
        position: Position::Kubeconfig,
        within: Within::Whole,
        positive: (Some("Config"), "clusters[0].cluster.server"),
        negative: (Some("Config"), "clusters[0].cluster.proxy-url"),
    },
    Row {
        kinds: Kinds::Is("Config"),
        path: &[K("clusters"), I, K("cluster"), K("tls-server-name")],
        position: Position::Kubeconfig,
        within: Within::Whole,
        positive: (Some("Config"), "clusters[0].cluster.tls-server-name"),
        negative: (Some("ConfigMap"), "clusters[0].cluster.tls-server-name"),
    },
    Row {
        kinds: Kinds::None,
        path: &[Deep, K("server")],
        position: Position::ValuesServer,
        within: Within::Whole,
        positive: (None, "clusters[0].server"),
        negative: (None, "vault.server"),
    },
];

/// Whether `path` is matched by `pattern` (also the name positions' table's matcher).
pub fn matches(pattern: &[P], path: &[Seg]) -> bool {
    match (pattern.first(), path.first()) {
        (None, None) => true,
        (Some(Deep), _) => {
            matches(&pattern[1..], path) || (!path.is_empty() && matches(pattern, &path[1..]))
        }
        (Some(K(k)), Some(Seg::Key(s))) if k == s => matches(&pattern[1..], &path[1..]),
        (Some(I), Some(Seg::Index(_))) | (Some(AnyKey), Some(Seg::Key(_))) => {
            matches(&pattern[1..], &path[1..])
        }
        _ => false,
    }
}

fn kind_ok(k: Kinds, kind: Option<&str>) -> bool {
    match k {
        Kinds::Is(want) => kind == Some(want),
        Kinds::None => kind.is_none(),
        Kinds::Any => true,
    }
}

/// What [`classify`] needs to know about a scalar besides its path.
#[derive(Debug, Default, Clone, Copy)]
pub struct Context<'a> {
    /// The document's `kind`.
    pub kind: Option<&'a str>,
    /// The `name` sibling of the scalar's mapping, if any (Helm parameters).
    pub sibling_name: Option<&'a str>,
    /// The text of the scalar's line before the occurrence (a line of a
    /// block string such as Helm `values: |`).
    pub line_prefix: &'a str,
    /// The ApplicationSet template's `destination.server`, as written.
    pub template_server: Option<&'a str>,
    /// The occurrence's host has a recognised managed-cluster shape.
    pub managed_host: bool,
}

/// The cluster position of a scalar at `path`, if it is at one.
pub fn classify(path: &YamlPath, cx: &Context) -> Option<Position> {
    rule(path, cx).map(|(p, _)| p)
}

/// The cluster position of a scalar at `path`, if it is at one, and which
/// endpoints in its value are at it ([`Within`]).
pub fn rule(path: &YamlPath, cx: &Context) -> Option<(Position, Within)> {
    if path.last_key() == Some(HELM_PARAMETER_VALUE)
        && cx
            .sibling_name
            .is_some_and(|n| n.ends_with("clusterEndpoint"))
    {
        return Some((Position::HelmParameter, Within::Whole));
    }
    let prefix = cx
        .line_prefix
        .trim_end()
        .trim_end_matches(['"', '\''])
        .trim_end();
    if prefix.ends_with("clusterEndpoint:") || prefix.ends_with("server:") {
        return Some((Position::InStringKey, Within::Whole));
    }
    let row = TABLE
        .iter()
        .find(|r| kind_ok(r.kinds, cx.kind) && matches(r.path, &path.0))?;
    if row.position == Position::ValuesServer && !values_server_names_a_cluster(path) {
        return None;
    }
    if row.position == Position::ListElement {
        let key = path.last_key().unwrap_or("");
        let used = cx.template_server.is_some_and(|t| template_uses(t, key));
        if !used && !cx.managed_host {
            return None;
        }
    }
    Some((row.position, row.within))
}

/// A values-file `server` names a cluster at the top level, or when the key
/// above it (skipping list indexes) names clusters: `cluster`, `clusters`,
/// `clusterList`, `destination`, `targetCluster`... Anything else
/// (`vault.server`, `grafana.server`) is some other service.
fn values_server_names_a_cluster(path: &YamlPath) -> bool {
    let parent = path.0[..path.0.len().saturating_sub(1)]
        .iter()
        .rev()
        .find_map(|s| match s {
            Seg::Key(k) => Some(k.to_ascii_lowercase()),
            Seg::Index(_) => None,
        });
    match parent {
        None => true,
        Some(k) => k.contains("cluster") || k == "destination",
    }
}

/// Whether a generator template's `destination.server` puts the element key
/// `key` there: `'{{url}}'`, `'{{.server}}'`, `{{ .url }}`,
/// `{{ index . "url" }}`, with or without goTemplate.
pub fn template_uses(template: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            return false;
        };
        // A Helm chart escapes the generator's action: {{`'{{.server}}'`}}
        // (the innermost action is the generator's).
        let action = &after[..close];
        let action = action.rsplit("{{").next().unwrap_or(action);
        // `-` is a trim marker only beside the braces: a fasttemplate key
        // may hold one (`{{kube-api}}`).
        let action = action.strip_prefix('-').unwrap_or(action);
        let action = action.strip_suffix('-').unwrap_or(action);
        let words = action
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '|'))
            .map(|w| w.trim_matches(['"', '\'', '`']).trim_start_matches('.'))
            .map(|w| w.strip_prefix("values.").unwrap_or(w));
        if words.into_iter().any(|w| w == key) {
            return true;
        }
        rest = &after[close + 2..];
    }
    false
}

/// A cheap test, made while the document streams by (its `kind` may not be
/// known yet), of whether a scalar at `keys` (the mapping keys from the root;
/// the last is the scalar's own key) may be at a cluster position. It must let
/// through every path [`classify`] can accept; the table's tests check that.
/// The keys it looks for are derived from [`TABLE`] (see [`prefilter_keys`]).
pub fn may_hold(keys: &[&str], value_lower: &str) -> bool {
    let p = prefilter_keys();
    keys.last().is_some_and(|k| p.last.contains(k))
        || value_lower.contains("server:")
        || value_lower.contains("clusterendpoint:")
        || keys.iter().any(|k| p.anywhere.contains(k))
}

/// [`may_hold`] for a scalar holding a URL, `depth` collections deep: a
/// value at the top of a document (a values file's `server:`, an item of a
/// top-level list) always may.
pub fn may_hold_url(depth: usize, is_key: bool, keys: &[&str], value_lower: &str) -> bool {
    top_level_url(depth, is_key) || may_hold(keys, value_lower)
}

/// A URL value at the top of a document (see [`may_hold_url`]): known
/// before the path's keys are gathered.
#[inline]
pub fn top_level_url(depth: usize, is_key: bool) -> bool {
    depth == 1 && !is_key
}

/// A string without a URL that may still name the API server: a cluster
/// registration's `config` JSON giving a bare `serverName`. `last_key` is the
/// last mapping key on the scalar's path.
pub fn may_hold_bare_in_string(last_key: Option<&str>, value_lower: &str) -> bool {
    SERVER_NAME_LOWER.is_in(value_lower)
        && last_key.is_some_and(|k| prefilter_keys().config.contains(&k))
}

/// `serverName` ([`BARE_HOST_KEYS`]) as [`may_hold_bare_in_string`] looks for it.
static SERVER_NAME_LOWER: crate::text::endpoint::Needle =
    crate::text::endpoint::Needle::new("servername");

/// The keys [`may_hold`] looks for.
pub struct PrefilterKeys {
    /// A scalar's own key: the last key of every row that ends in one, and
    /// the keys of positions inside strings or beside the table.
    pub last: Vec<&'static str>,
    /// A key anywhere on the path: the last key of every row that ends in
    /// any key or any depth (list elements, resource filters).
    pub anywhere: Vec<&'static str>,
    /// The last key of a registration's `config` (see [`may_hold_bare_in_string`]).
    pub config: Vec<&'static str>,
}

/// Keys of positions that are not rows of [`TABLE`]: a Helm parameter's and
/// a patch op's `value`, a kustomize `patch` string, the last-applied
/// annotation (both read as embedded documents).
pub const STRING_POSITION_KEYS: [&str; 4] = [
    HELM_PARAMETER_VALUE,
    PATCH_OP_VALUE,
    KUSTOMIZE_PATCH,
    LAST_APPLIED,
];

/// A Helm `parameters` entry's value key (see [`Position::HelmParameter`]).
pub const HELM_PARAMETER_VALUE: &str = "value";

/// A kustomize `patches[]` entry's inline patch (a document in a string).
pub const KUSTOMIZE_PATCH: &str = "patch";

/// The keys [`may_hold`] looks for, derived from [`TABLE`] once.
pub fn prefilter_keys() -> &'static PrefilterKeys {
    static KEYS: std::sync::OnceLock<PrefilterKeys> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut p = PrefilterKeys {
            last: STRING_POSITION_KEYS.to_vec(),
            anywhere: Vec::new(),
            config: Vec::new(),
        };
        for row in TABLE {
            let last_key = row.path.iter().rev().find_map(|s| match s {
                K(k) => Some(*k),
                _ => None,
            });
            let Some(k) = last_key else { continue };
            if row.position == Position::RegistrationConfig && !p.config.contains(&k) {
                p.config.push(k);
            }
            let list = match row.path.last() {
                Some(K(_)) => &mut p.last,
                _ => &mut p.anywhere,
            };
            if !list.contains(&k) {
                list.push(k);
            }
        }
        p
    })
}

/// The annotation `kubectl apply` keeps the applied object in (JSON in a
/// string): located inside, by the inner object's own kind and path.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Keys whose value is a bare host naming the API server (no scheme):
/// `tlsClientConfig.serverName` (cluster Secret `config` JSON) and kubeconfig
/// `tls-server-name`. Their values are located by key; the table decides.
pub const BARE_HOST_KEYS: [&str; 2] = ["serverName", "tls-server-name"];

/// The keys of a JSON 6902 patch op (`{op, path, value}`).
pub const PATCH_OP_PATH: &str = "path";
pub const PATCH_OP_VALUE: &str = "value";

/// The position of a scalar at `path` in a document that is a JSON 6902 op
/// list (a `patchesJson6902` file, a kustomize `patches[].patch` string),
/// `pointer` being its op's `path`: a cluster position when the op's
/// `value` (or a scalar inside it) lands on one.
pub fn patch_op(path: &[Seg], pointer: Option<&str>, managed_host: bool) -> Option<Position> {
    match path {
        [Seg::Index(_), Seg::Key(v), rest @ ..] if v == PATCH_OP_VALUE => pointer
            .and_then(|p| op_position(p, rest, managed_host))
            .map(|_| Position::PatchOp),
        _ => None,
    }
}

/// A JSON pointer (`/spec/destination/server`, RFC 6901) as path steps:
/// `~1` is `/` and `~0` is `~` (in that order, section 4), numeric steps are
/// list indexes, and `-` (the element after the last, where JSON Patch's
/// `add` appends: RFC 6902 section 4.1) is a list index too.
pub fn pointer_path(pointer: &str) -> Option<Vec<Seg>> {
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| {
                if s == "-" {
                    return Seg::Index(usize::MAX);
                }
                let s = s.replace("~1", "/").replace("~0", "~");
                match s.parse::<usize>() {
                    Ok(i) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                        Seg::Index(i)
                    }
                    _ => Seg::Key(s),
                }
            })
            .collect(),
    )
}

/// The cluster position a JSON 6902 op's value lands on: the op's `path`
/// pointer plus the path inside its `value`, tried against every kind a patch
/// may target ([`PATCH_KINDS`]).
fn op_position(pointer: &str, inside_value: &[Seg], managed_host: bool) -> Option<Position> {
    let mut segs = pointer_path(pointer)?;
    segs.extend_from_slice(inside_value);
    let path = YamlPath(segs);
    PATCH_KINDS.iter().find_map(|k| {
        classify(
            &path,
            &Context {
                kind: Some(k),
                managed_host,
                ..Context::default()
            },
        )
    })
}

/// Kinds a JSON 6902 patch op may target when its target kind is not known.
pub const PATCH_KINDS: [&str; 5] = [
    "Application",
    "ApplicationSet",
    "AppProject",
    "Secret",
    "ExternalSecret",
];

/// Facts about a document that are read as its scalars go by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    Kind,
    Name,
    DestinationServer,
    DestinationName,
    /// `spec.project`, `spec.source.path` / `.chart` / `.repoURL`: what an
    /// Application deploys, so its name can be told from its cluster's.
    Project,
    SourcePath,
    SourceWords,
}

/// Facts read at fixed paths; the destination's are the table's
/// [`Position::DestinationServer`] rows ([`fact`]).
pub const FACTS: &[(&[&str], Fact)] = &[
    (KIND, Fact::Kind),
    (NAME, Fact::Name),
    (&["spec", "project"], Fact::Project),
    (&["spec", "source", "path"], Fact::SourcePath),
    (&["spec", "source", "chart"], Fact::SourceWords),
    (&["spec", "source", "repoURL"], Fact::SourceWords),
];

/// The key beside a destination's `server` that names it instead.
pub const DESTINATION_NAME_KEY: &str = NAME_KEY;

/// An Application spec's `destination`.
pub const DESTINATION_KEY: &str = "destination";

/// A destination's cluster URL (an Application's `destination`, an
/// AppProject's `destinations[]` entry).
pub const DESTINATION_SERVER_KEY: &str = "server";

/// An AppProject spec's `destinations`.
/// `argocd-cm` keys of the kinds ArgoCD leaves unmanaged, or manages
/// only (their `clusters` entries are positions, rows below).
pub const RESOURCE_EXCLUSIONS_KEY: &str = "resource.exclusions";
pub const RESOURCE_INCLUSIONS_KEY: &str = "resource.inclusions";
pub const PROJECT_DESTINATIONS_KEY: &str = "destinations";

/// Which document fact (if any) a non-key scalar at `keys` gives: one of
/// [`FACTS`], or a destination's server (the path of a
/// [`Position::DestinationServer`] row of [`TABLE`]) or name (its sibling
/// [`DESTINATION_NAME_KEY`]).
pub fn fact(keys: &[&str]) -> Option<Fact> {
    if let Some((_, f)) = FACTS.iter().find(|(p, _)| *p == keys) {
        return Some(*f);
    }
    let (last, parent) = keys.split_last()?;
    let destination = |r: &&Row| {
        r.position == Position::DestinationServer
            && r.path.len() == keys.len()
            && r.path
                .iter()
                .zip(parent)
                .all(|(s, k)| matches!(s, K(x) if x == k))
    };
    let row = TABLE.iter().find(destination)?;
    match row.path.last() {
        Some(K(server)) if server == last => Some(Fact::DestinationServer),
        Some(K(_)) if *last == DESTINATION_NAME_KEY => Some(Fact::DestinationName),
        _ => None,
    }
}

/// Whether a scalar under `key` can give a fact at all (a cheap test before
/// [`fact`]): the last key of every fact path.
pub fn may_be_fact(key: &str) -> bool {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys: Vec<&'static str> = FACTS
            .iter()
            .filter_map(|(p, _)| p.last().copied())
            .collect();
        keys.push(DESTINATION_NAME_KEY);
        for r in TABLE
            .iter()
            .filter(|r| r.position == Position::DestinationServer)
        {
            if let Some(K(k)) = r.path.last() {
                keys.push(k);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    })
    .contains(&key)
}

/// The deepest path [`fact`] looks at: deeper scalars need not be asked.
pub const FACT_DEPTH: usize = 5;

/// How a cluster registration is declared in a resource of one kind: where
/// its server is (and whether the value is base64, as under a Secret's
/// `data`), where its labels are, and which field names the Secret it makes.
/// The duplicate-registration search (`secret`) reads documents through this.
pub struct Registration {
    pub kind: &'static str,
    pub servers: &'static [(&'static [&'static str], bool)],
    pub labels: &'static [&'static str],
    /// Tried in order.
    pub secret_name: &'static [&'static [&'static str]],
    /// Where the registration's token and CA come from.
    pub credentials: Credentials,
}

/// Where a registration's token and CA come from.
pub enum Credentials {
    /// The Secret's own `config` JSON (the first path present).
    Config(&'static [&'static [&'static str]]),
    /// An external secret store: its name, and the sequence of
    /// `remoteRef: {key, property}` entries read from it.
    Store {
        store: &'static [&'static str],
        refs: &'static [&'static str],
        /// Within each entry of `refs`.
        key: &'static [&'static str],
        property: &'static [&'static str],
    },
}

/// The label (key and value) that makes a Secret a cluster registration.
pub const CLUSTER_SECRET_LABEL: (&str, &str) = ("argocd.argoproj.io/secret-type", "cluster");

/// Every kind that registers a cluster with ArgoCD.
pub const REGISTRATIONS: &[Registration] = &[
    Registration {
        kind: "Secret",
        servers: &[
            (&["stringData", "server"], false),
            (&["data", "server"], true),
        ],
        labels: &["metadata", "labels"],
        secret_name: &[&["metadata", "name"]],
        credentials: Credentials::Config(&[&["stringData", "config"], &["data", "config"]]),
    },
    Registration {
        kind: "ExternalSecret",
        servers: &[(&["spec", "target", "template", "data", "server"], false)],
        labels: &["spec", "target", "template", "metadata", "labels"],
        secret_name: &[&["spec", "target", "name"], &["metadata", "name"]],
        credentials: Credentials::Store {
            store: &["spec", "secretStoreRef", "name"],
            refs: &["spec", "data"],
            key: &["remoteRef", "key"],
            property: &["remoteRef", "property"],
        },
    },
];

/// The kinds that make a Secret, and where its name is (tried in order;
/// its namespace is the document's [`NAMESPACE`]): a Secret itself, an
/// ExternalSecret's target (`spec.target.name`, by default its own name;
/// external-secrets docs, "ExternalSecret" spec), a SealedSecret (the
/// Secret it unseals takes its name; sealed-secrets README).
pub const SECRET_MAKERS: &[(&str, &[&[&str]])] = &[
    ("Secret", &[&["metadata", "name"]]),
    (
        "ExternalSecret",
        &[&["spec", "target", "name"], &["metadata", "name"]],
    ),
    ("SealedSecret", &[&["metadata", "name"]]),
];

/// The key holding the items of an exported `kind: List` (each item is read
/// by its own kind).
pub const LIST_ITEMS: &str = "items";

/// The kind whose `data` values are base64, and that key: a Secret's
/// `data.server`, `data.config`, `data.kubeconfig`... are decoded and then
/// located like any value whose text is the decoded one.
pub const BASE64_DATA: (&str, &str) = ("Secret", "data");

/// Whether a scalar at `keys` (mapping keys from the root; for an item of a
/// `kind: List`, `items` then the item's own keys) is a `data` value, base64
/// in a Secret ([`is_base64_kind`] says, once the kind is known).
pub fn base64_data(keys: &[&str]) -> bool {
    let keys = match keys.split_first() {
        Some((&LIST_ITEMS, rest)) => rest,
        _ => keys,
    };
    matches!(keys, [d, _] if *d == BASE64_DATA.1)
}

/// Whether a document of `kind` holds base64 in `data` (see [`BASE64_DATA`]).
pub fn is_base64_kind(kind: Option<&str>) -> bool {
    kind == Some(BASE64_DATA.0)
}

/// The key of a ConfigMap `data` entry holding a scalar (it often names the
/// cluster whose endpoint the entry holds).
pub fn data_entry_key<'p>(kind: Option<&str>, path: &'p YamlPath) -> Option<&'p str> {
    match (kind, path.0.as_slice()) {
        (Some("ConfigMap"), [Seg::Key(d), Seg::Key(k)]) if d == "data" => Some(k),
        _ => None,
    }
}

/// A document's kind, name and namespace.
pub const KIND: &[&str] = &["kind"];
pub const NAME: &[&str] = &["metadata", "name"];
pub const NAMESPACE: &[&str] = &["metadata", "namespace"];

/// Words of a ConfigMap `data` key that says what its value is (`api-url`,
/// `prod-server`), not which cluster it belongs to.
pub const GENERIC_ENDPOINT_KEY_WORDS: [&str; 7] =
    ["url", "server", "endpoint", "api", "host", "address", "uri"];

/// Keys whose scalar value may name a cluster next to its endpoint.
/// Sibling keys that name the cluster beside its endpoint, best first
/// (`name` and `env` only where the position says so).
pub const CLUSTER_NAME_KEYS: [&str; 2] = ["cluster", "clusterName"];
/// `name`: the cluster's name beside a registration or list element.
pub const NAME_KEY: &str = "name";
/// A registration's project (argo-cd `Cluster.Project`), which the cluster
/// generator gives as the parameter of the same name
/// (`applicationset/generators/cluster.go`, `getClusterParameters`).
pub const REGISTRATION_PROJECT_KEY: &str = "project";

/// The path of an ApplicationSet template's `destination.server`, as the
/// table's [`Position::DestinationServer`] row for `ApplicationSet` says it.
pub fn template_server_path() -> Vec<&'static str> {
    TABLE
        .iter()
        .find(|r| {
            matches!(r.kinds, Kinds::Is("ApplicationSet"))
                && r.position == Position::DestinationServer
        })
        .map(|r| {
            r.path
                .iter()
                .filter_map(|p| match p {
                    P::K(k) => Some(*k),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// An ApplicationSet's generators.
pub const GENERATORS: [&str; 2] = ["spec", "generators"];
/// A cluster generator's `values` (argo-cd
/// `applicationset/generators/cluster.go`: parameters `values.<key>`).
pub const CLUSTER_VALUES: [&str; 2] = ["clusters", "values"];
/// A list generator's elements.
pub const LIST_ELEMENTS: [&str; 2] = ["list", "elements"];
/// A list generator's elements as a YAML string (argo-cd
/// `ListGenerator.ElementsYaml`).
pub const LIST_ELEMENTS_YAML: [&str; 2] = ["list", "elementsYaml"];

/// Where an ApplicationSet's `templatePatch` (a YAML string patched over
/// its rendered template, argo-cd `applicationset/utils/utils.go`) is.
pub fn template_patch_path() -> Vec<&'static str> {
    vec!["spec", "templatePatch"]
}

/// The elements of an ApplicationSet document's list generators
/// (`spec.generators[].list.elements[]`): each element's scalars by key,
/// the parameters the generator gives its template.
pub fn list_elements(
    doc: &crate::syntax::yaml::Node,
) -> Vec<std::collections::BTreeMap<String, String>> {
    use crate::syntax::yaml::Value;
    let mut out = Vec::new();
    for (_, e) in list_element_nodes(doc) {
        if let Value::Map(pairs) = &e.value {
            out.push(
                pairs
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
                    .collect(),
            );
        }
    }
    out
}

/// The element nodes of an ApplicationSet document's list generators
/// (`spec.generators[].list.elements[]`), each with its path in the
/// document.
pub fn list_element_nodes(
    doc: &crate::syntax::yaml::Node,
) -> Vec<(YamlPath, &crate::syntax::yaml::Node)> {
    use crate::syntax::yaml::Value;
    fn items(n: Option<&crate::syntax::yaml::Node>) -> Vec<(usize, &crate::syntax::yaml::Node)> {
        match n.map(|n| &n.value) {
            Some(Value::Seq(v)) => v.iter().enumerate().collect(),
            _ => Vec::new(),
        }
    }
    let key = |k: &str| Seg::Key(k.to_string());
    let mut out = Vec::new();
    for (gi, g) in items(doc.at(&["spec", "generators"])) {
        for (ei, e) in items(g.at(&["list", "elements"])) {
            let path = vec![
                key("spec"),
                key("generators"),
                Seg::Index(gi),
                key("list"),
                key("elements"),
                Seg::Index(ei),
            ];
            out.push((YamlPath(path), e));
        }
    }
    out
}

/// The merge key (`<<: *anchor`), as [`crate::syntax::yaml::MERGE_KEY`].
pub const MERGE_KEY: &str = crate::syntax::yaml::MERGE_KEY;
/// `env`/`environment`: beside a list element's URL.
pub const ENV_KEYS: [&str; 2] = ["env", "environment"];
/// A line of a block string that names the cluster (karpenter values).
pub const NAME_LINE_KEY: &str = "clusterName:";

pub fn is_name_key(key: &str) -> bool {
    matches!(
        key,
        "name" | "cluster" | "clusterName" | "env" | "environment"
    )
}

/// The kustomization fields that change nothing the review reads of an
/// object it lists: its resources and generated ones, labels
/// (`labels`, `commonLabels`), container images, replica counts, build
/// metadata, sort order, schemas. Any other field transforms (or is not
/// known to kustomize, which then fails).
pub const KUSTOMIZE_HARMLESS: [&str; 19] = [
    "apiVersion",
    "kind",
    "metadata",
    "resources",
    "bases",
    "components",
    "labels",
    "commonLabels",
    "images",
    "replicas",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
    "helmCharts",
    "helmGlobals",
    "buildMetadata",
    "sortOptions",
    "openapi",
    "crds",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses the display form back (enough for the table's examples).
    fn path(s: &str) -> YamlPath {
        let mut segs = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("[\"") {
                let end = r.find("\"]").unwrap();
                segs.push(Seg::Key(r[..end].to_string()));
                rest = &r[end + 2..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').unwrap();
                segs.push(Seg::Index(r[..end].parse().unwrap()));
                rest = &r[end + 1..];
            } else {
                let r = rest.strip_prefix('.').unwrap_or(rest);
                let end = r.find(['.', '[']).unwrap_or(r.len());
                segs.push(Seg::Key(r[..end].to_string()));
                rest = &r[end..];
            }
        }
        YamlPath(segs)
    }

    fn cx(kind: Option<&str>) -> Context<'_> {
        Context {
            kind,
            template_server: Some("{{url}}"),
            ..Context::default()
        }
    }

    #[test]
    fn every_row_has_a_positive_and_a_negative_example() {
        for row in TABLE {
            let (kind, p) = row.positive;
            let at = path(p);
            assert_eq!(at.to_string(), p, "display round-trip");
            assert_eq!(classify(&at, &cx(kind)), Some(row.position), "{p}");
            let keys: Vec<&str> = at.keys().collect();
            assert!(may_hold(&keys, "https://x"), "prefilter drops {p}");
            let (kind, n) = row.negative;
            assert_eq!(classify(&path(n), &cx(kind)), None, "{kind:?} {n}");
        }
    }

    #[test]
    fn list_elements_count_only_when_the_template_uses_them() {
        let at = path("spec.generators[0].list.elements[0].repoURL");
        let mut c = Context {
            kind: Some("ApplicationSet"),
            template_server: Some("'{{url}}'"),
            ..Context::default()
        };
        assert_eq!(classify(&at, &c), None, "a chart repository is no cluster");
        c.managed_host = true;
        assert_eq!(classify(&at, &c), Some(Position::ListElement));
        let url = path("spec.generators[0].matrix.generators[1].list.elements[2].url");
        c.managed_host = false;
        assert_eq!(classify(&url, &c), Some(Position::ListElement));
    }

    #[test]
    fn template_references() {
        for t in [
            "{{url}}",
            "'{{.url}}'",
            "{{ .url }}",
            "{{ index . \"url\" }}",
            "{{values.url}}",
            "{{- .url -}}",
            "{{`'{{.url}}'`}}",
            "{{ .url | default \"https://kubernetes.default.svc\" }}",
            "{{ default \"https://kubernetes.default.svc\" .url }}",
            "{{ .url | quote }}",
        ] {
            assert!(template_uses(t, "url"), "{t}");
        }
        for t in ["{{server}}", "https://kubernetes.default.svc", "{{urls}}"] {
            assert!(!template_uses(t, "url"), "{t}");
        }
        // A fasttemplate key may hold a dash; trim markers are no part of a key.
        assert!(template_uses("'{{kube-api}}'", "kube-api"));
        assert!(template_uses("{{- kube-api -}}", "kube-api"));
        assert!(!template_uses("'{{kube-api}}'", "api"));
        assert!(!template_uses("'{{kube-api}}'", "kube"));
    }

    #[test]
    fn helm_parameter_and_string_lines() {
        let c = Context {
            kind: Some("Application"),
            sibling_name: Some("settings.clusterEndpoint"),
            ..Context::default()
        };
        assert_eq!(
            classify(&path("spec.source.helm.parameters[0].value"), &c),
            Some(Position::HelmParameter)
        );
        let c = Context {
            kind: Some("Application"),
            sibling_name: Some("image.tag"),
            ..Context::default()
        };
        assert_eq!(
            classify(&path("spec.source.helm.parameters[0].value"), &c),
            None
        );
        let c = Context {
            kind: Some("Application"),
            line_prefix: "  clusterEndpoint: \"",
            ..Context::default()
        };
        assert_eq!(
            classify(&path("spec.source.helm.values"), &c),
            Some(Position::InStringKey)
        );
    }

    /// Host shapes never make a cluster of what merely looks like one.
    #[test]
    fn no_host_shape_for_charts_git_oidc_registries_webhooks_or_ingress() {
        let not_clusters = [
            // Helm chart repositories
            "https://charts.bitnami.com/bitnami",
            "https://prometheus-community.github.io/helm-charts",
            "https://istio-release.storage.googleapis.com/charts",
            // git
            "https://github.com/acme-platform/platform-apps.git",
            "https://gitlab.example.org/payments/deploy.git",
            "https://git-codecommit.ap-northeast-2.amazonaws.com/v1/repos/gitops",
            // OIDC issuers
            "https://oidc.eks.ap-northeast-2.amazonaws.com/id/378892E9ECC387AB8B4585023A0286CC",
            "https://koreacentral.oic.prod-aks.azure.com/a2603207-1f6e-4c5b-9d3a-8e7f6a5b4c3d/5c16941a-7d2e-4b8f-a1c3-d4e5f6a7b8c9/",
            "https://container.googleapis.com/v1/projects/acme/locations/asia-northeast3/clusters/analytics",
            // registries
            "https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com",
            "https://acmestage.azurecr.io",
            "https://asia-northeast3-docker.pkg.dev/acme/images",
            // webhooks and APIs
            "https://hooks.slack.com/services/T000/B000/XXXX",
            "https://api.github.com",
            "https://rancher.example.com/v3",
            "https://aps-workspaces.ap-northeast-2.amazonaws.com/workspaces/ws-1/api/v1/remote_write",
            // ingress hosts and routes
            "https://argocd.example.com",
            "https://console-openshift-console.apps.ocp4-prod.corp.example.com",
            "https://oauth-openshift.apps.ocp4-prod.corp.example.com/oauth/authorize",
        ];
        for url in not_clusters {
            let found = crate::text::endpoint::find_all(url, &url.to_ascii_lowercase(), &[]);
            assert_eq!(found.len(), 1, "{url}");
            assert_eq!(
                found[0].shape(),
                crate::text::endpoint::Shape::Other,
                "{url}"
            );
        }
        let clusters = [
            "https://api.ocp4-prod.corp.example.com:6443",
            "https://rancher.example.com/k8s/clusters/c-m-abc12345",
            "https://aks-prod-krc-dns-5c16941a.a2603207-1f6e-4c5b-9d3a-8e7f6a5b4c3d.privatelink.koreacentral.azmk8s.io:443",
        ];
        for url in clusters {
            let found = crate::text::endpoint::find_all(url, &url.to_ascii_lowercase(), &[]);
            assert_ne!(
                found[0].shape(),
                crate::text::endpoint::Shape::Other,
                "{url}"
            );
        }
    }

    #[test]
    fn values_server_only_where_a_cluster_is_named() {
        let c = Context::default();
        for p in [
            "server",
            "clusters[0].server",
            "cluster.server",
            "destination.server",
        ] {
            assert_eq!(classify(&path(p), &c), Some(Position::ValuesServer), "{p}");
        }
        for p in [
            "vault.server",
            "grafana[\"grafana.ini\"].server",
            "proxy.server",
        ] {
            assert_eq!(classify(&path(p), &c), None, "{p}");
        }
    }

    #[test]
    fn kubeconfig_and_status_copies() {
        let c = Context {
            kind: Some("Config"),
            ..Context::default()
        };
        assert_eq!(
            classify(&path("clusters[1].cluster.tls-server-name"), &c),
            Some(Position::Kubeconfig)
        );
        assert!(Position::Kubeconfig.accepts_bare_host());
        assert_eq!(classify(&path("users[0].user.exec.args[3]"), &c), None);
        let c = Context {
            kind: Some("Application"),
            ..Context::default()
        };
        assert_eq!(
            classify(&path("status.sync.comparedTo.destination.server"), &c),
            Some(Position::StatusCopy)
        );
        assert!(may_hold(&["metadata", "annotations", LAST_APPLIED], "{}"));
        assert!(may_hold(&["patches", "patch"], "- op: replace"));
    }

    #[test]
    fn base64_servers_and_data_keys() {
        assert!(base64_data(&["data", "server"]));
        assert!(base64_data(&["items", "data", "config"]));
        assert!(base64_data(&["data", "kubeconfig"]));
        assert!(!base64_data(&["stringData", "server"]));
        assert!(!base64_data(&["data"]));
        assert!(!base64_data(&["data", "a", "b"]));
        assert!(is_base64_kind(Some("Secret")));
        assert!(!is_base64_kind(Some("ConfigMap")));
        assert_eq!(
            data_entry_key(Some("ConfigMap"), &path("data.prod")),
            Some("prod")
        );
        assert_eq!(data_entry_key(Some("Secret"), &path("data.prod")), None);
    }

    #[test]
    fn every_fact_passes_the_cheap_test() {
        for keys in [
            &["kind"][..],
            &["metadata", "name"],
            &["spec", "destination", "server"],
            &["spec", "template", "spec", "destination", "name"],
            &["spec", "project"],
            &["spec", "source", "path"],
            &["spec", "source", "chart"],
            &["spec", "source", "repoURL"],
        ] {
            assert!(fact(keys).is_some(), "{keys:?}");
            assert!(may_be_fact(keys.last().unwrap()), "{keys:?}");
        }
    }

    /// The destination facts are the table's destination rows, and only those.
    #[test]
    fn destination_facts_come_from_the_table() {
        let rows: Vec<&Row> = TABLE
            .iter()
            .filter(|r| r.position == Position::DestinationServer)
            .collect();
        assert_eq!(rows.len(), 2);
        for r in rows {
            let mut keys: Vec<&str> = r
                .path
                .iter()
                .map(|s| match s {
                    K(k) => *k,
                    _ => panic!("a destination row is keys only"),
                })
                .collect();
            assert_eq!(fact(&keys), Some(Fact::DestinationServer), "{keys:?}");
            assert!(keys.len() <= FACT_DEPTH);
            *keys.last_mut().unwrap() = DESTINATION_NAME_KEY;
            assert_eq!(fact(&keys), Some(Fact::DestinationName), "{keys:?}");
            assert!(may_be_fact(DESTINATION_NAME_KEY));
            *keys.last_mut().unwrap() = "namespace";
            assert_eq!(fact(&keys), None, "{keys:?}");
        }
        // A project destination's server is a position, not the document's destination.
        assert_eq!(fact(&["spec", "destinations", "server"]), None);
        assert_eq!(
            fact(&["status", "sync", "comparedTo", "destination", "server"]),
            None
        );
        for (p, f) in FACTS {
            assert_eq!(fact(p), Some(*f));
            assert!(p.len() <= FACT_DEPTH && may_be_fact(p.last().unwrap()));
        }
    }

    /// Where the value's own document decides (a registration's `config`,
    /// in any form) is a column of the table, not a rule of the locator.
    #[test]
    fn registration_configs_let_their_document_decide() {
        for r in TABLE {
            let document = r.position == Position::RegistrationConfig;
            assert_eq!(r.within == Within::Document, document, "{:?}", r.positive);
            let (kind, p) = r.positive;
            let want = if document {
                Within::Document
            } else {
                Within::Whole
            };
            assert_eq!(rule(&path(p), &cx(kind)).map(|(_, w)| w), Some(want), "{p}");
        }
        assert_eq!(
            rule(&path("data.config"), &cx(Some("Secret"))),
            Some((Position::RegistrationConfig, Within::Document))
        );
        assert!(Position::RegistrationConfig.accepts_bare_host());
    }

    #[test]
    fn facts() {
        assert_eq!(fact(&["kind"]), Some(Fact::Kind));
        assert_eq!(
            fact(&["spec", "template", "spec", "destination", "name"]),
            Some(Fact::DestinationName)
        );
        assert_eq!(fact(&["spec", "kind"]), None);
    }

    #[test]
    fn the_prefilter_keys_come_from_the_table() {
        let p = prefilter_keys();
        let mut last = p.last.clone();
        last.sort_unstable();
        last.dedup();
        assert_eq!(
            last,
            [
                "clusterEndpoint",
                "config",
                LAST_APPLIED,
                "patch",
                "server",
                "tls-server-name",
                "value"
            ]
        );
        assert_eq!(
            p.anywhere,
            ["elements", "resource.exclusions", "resource.inclusions"]
        );
        assert!(BARE_HOST_KEYS[0].eq_ignore_ascii_case("servername"));
        assert!(may_hold_bare_in_string(
            Some("config"),
            "{\"servername\": \"cp\"}"
        ));
        assert!(!may_hold_bare_in_string(
            Some("other"),
            "{\"servername\": \"cp\"}"
        ));
        assert!(may_hold_url(1, false, &[], "https://x"));
        assert!(!may_hold_url(1, true, &[], "https://x"));
    }
}
