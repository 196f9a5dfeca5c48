//! The ArgoCD Application table: how an Application or ApplicationSet
//! names its sources, destination, sync policy and generators, read from a
//! decoded document.

use crate::syntax::yaml::{Node, Value};
use yaml_rust2::scanner::TScalarStyle;

/// `spec.source.directory` of a directory source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directory {
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    /// `directory.disableExtensionFilter`: every file of the folder is
    /// read, not only `.yaml`, `.yml`, `.json` and `.jsonnet` ones (argo-cd
    /// `getPotentiallyValidManifestFile`).
    pub disable_extension_filter: bool,
}

/// One source of an Application (or of an ApplicationSet's template).
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub repo_url: String,
    pub path: Option<String>,
    pub target_revision: String,
    pub chart: Option<String>,
    pub ref_name: Option<String>,
    pub directory: Directory,
    pub value_files: Vec<String>,
    pub helm: bool,
    /// Values given in the Application itself (`helm.values`,
    /// `valuesObject`, `parameters`, `fileParameters`): they override the
    /// value files.
    pub helm_inline: bool,
    /// Those values, each node as read ([`InlineHelm`]).
    pub inline: InlineHelm,
    pub kustomize: bool,
    /// A config management plugin renders it (`plugin:`): what it reads is
    /// the plugin's business.
    pub plugin: bool,
    /// `directory:` is given: ArgoCD renders the path as plain manifests
    /// whatever it holds (argo-cd `ApplicationSource.ExplicitType()`).
    pub directory_given: bool,
    /// Declared under `feeders:` in `.rebind.yaml`: this repository by
    /// definition.
    pub this_repo: bool,
    /// `helm.ignoreMissingValueFiles: true`: a value file missing from the
    /// repository is skipped instead of failing `helm template`.
    pub ignore_missing_value_files: bool,
}

/// The values a Helm source gives its chart in the Application itself
/// (argo-cd `ApplicationSourceHelm`), each node as read from the
/// Application's document: discovery finds positions in them, and the
/// after-merge renderer takes them as the chart's values in ArgoCD's
/// precedence (`find::resolve::charts`).
#[derive(Debug, Clone, Default)]
pub struct InlineHelm {
    /// `helm.valuesObject`.
    pub object: Option<Node>,
    /// `helm.values`, a string holding a YAML document.
    pub values: Option<Node>,
    /// `helm.parameters`, the list (each item: [`helm_parameter`]).
    pub parameters: Option<Node>,
    /// `helm.fileParameters` is given (a file's content as a value).
    pub file_parameters: bool,
}

/// One item of `helm.parameters`: its `name` (Helm's `--set` syntax) and
/// `value` nodes, and whether `forceString` is true (`--set-string`).
pub fn helm_parameter(item: &Node) -> (Option<&Node>, Option<&Node>, bool) {
    let force = text(s(V(Some(item)), "forceString")).as_deref() == Some("true");
    (
        item.get(HELM_PARAMETER_NAME),
        item.get(crate::model::positions::HELM_PARAMETER_VALUE),
        force,
    )
}

impl Source {
    /// Whether its path, revision or a value file holds a template action
    /// (an ApplicationSet's generator parameters).
    pub fn templated(&self) -> bool {
        self.path.as_deref().is_some_and(|p| p.contains("{{"))
            || self.target_revision.contains("{{")
            || self.value_files.iter().any(|v| v.contains("{{"))
    }
}

/// An Application or ApplicationSet found in the repository.
#[derive(Debug, Clone)]
pub struct App {
    /// `/`-separated path of its file, relative to the repository root.
    pub file: String,
    pub kind: &'static str,
    pub name: String,
    /// `metadata.namespace` (empty when the manifest names none): with
    /// Applications in any namespace, two Applications may share a name.
    pub namespace: String,
    pub sources: Vec<Source>,
    /// Sync policy automated (and not `enabled: false`).
    pub automated: bool,
    pub wave: i64,
    /// An ApplicationSet's git generators.
    pub git_generators: Vec<GitGenerator>,
    /// An ApplicationSet's generators that are neither git nor list (their
    /// parameters are not known from the repository), by name.
    pub other_generators: Vec<String>,
    /// An ApplicationSet's `spec.generators`, as a tree (matrix and merge
    /// hold their children).
    pub generators: Vec<Generator>,
    /// An ApplicationSet's `spec.syncPolicy.applicationsSync` (`sync`,
    /// `create-only`, `create-update`, `create-delete`), if set.
    pub applications_sync: Option<String>,
    /// Why this Application may not exist as written (it is rendered by a
    /// Helm chart, or held in Helm values), when that is so.
    pub rendered: Option<String>,
    /// Applied outside ArgoCD (declared under `feeders:` with
    /// `applied_by`): who applies its path.
    pub applied_by: Option<String>,
    /// `--live` was given and this Application is not in the dump: it does
    /// not exist on the hub, so it is no parent.
    pub live_absent: bool,
    /// A field it sets that the review does not model, or an annotation
    /// that stops reconciliation ([`unmodeled`]): nothing it feeds is
    /// proven to deploy.
    pub unmodeled: Option<String>,
    /// `spec.project` (an ApplicationSet's template's), [`DEFAULT_PROJECT`]
    /// when it names none; `None` for a root declared under `feeders:`
    /// (the config says nothing of its project).
    pub project: Option<String>,
    /// `spec.destination` (an ApplicationSet's template's).
    pub destination: AppDestination,
    /// An ApplicationSet's `spec.template.metadata.name`, as written: the
    /// name of every Application it makes, parameters put in.
    pub template_name: Option<String>,
}

/// An Application's `spec.destination`: the cluster by `server` or `name`,
/// and the namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppDestination {
    pub server: Option<String>,
    pub name: Option<String>,
    pub namespace: String,
}

impl App {
    /// `Kind/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// One document of a file, read by the shared reader ([`crate::syntax::yaml`]).
pub struct Manifest<'a> {
    pub file: &'a str,
    pub doc: &'a Node,
}

/// A node of the shared reader's tree, or the absence of one (a key that is
/// not there): lookups chain without checks at every step.
#[derive(Clone, Copy)]
pub struct V<'a>(pub Option<&'a Node>);

impl<'a> V<'a> {
    pub fn is_badvalue(self) -> bool {
        self.0.is_none()
    }

    /// A sequence's items.
    pub fn as_vec(self) -> Option<Vec<V<'a>>> {
        match self.0.map(|n| &n.resolved().value) {
            Some(Value::Seq(items)) => Some(items.iter().map(|n| V(Some(n.resolved()))).collect()),
            _ => None,
        }
    }

    pub fn is_map(self) -> bool {
        matches!(self.0.map(|n| &n.resolved().value), Some(Value::Map(_)))
    }
}

/// A source's Helm settings (`helm:`), and the keys under it that give the
/// chart its values inline (argo-cd `ApplicationSourceHelm`).
pub const HELM: &str = "helm";
pub const HELM_VALUES_OBJECT: &str = "valuesObject";
/// A YAML document held in a string.
pub const HELM_VALUES: &str = "values";
/// `[{name, value}]`, each `name` in Helm's `--set` syntax.
pub const HELM_PARAMETERS: &str = "parameters";
/// A `helm.parameters` item's name.
pub const HELM_PARAMETER_NAME: &str = "name";
/// The value files Helm reads, in order (`helm.valueFiles`).
pub const HELM_VALUE_FILES: &str = "valueFiles";

/// Where an Application holds its spec, and where an ApplicationSet holds
/// the spec of the Applications it makes (its `template`; argo-cd
/// `ApplicationSetTemplate`).
pub const APP_SPEC: &[&str] = &["spec"];
pub const APPSET_APP_SPEC: &[&str] = &["spec", APPSET_TEMPLATE, "spec"];
/// An ApplicationSet's template, and its `templatePatch` (a YAML string
/// patched over the rendered template).
pub const APPSET_TEMPLATE: &str = "template";
pub const APPSET_TEMPLATE_PATCH: &str = "templatePatch";
/// A spec's one source, and its list of sources, which replaces `source`
/// when it lists any (`source_nodes`).
pub const SOURCE: &str = "source";
pub const SOURCES: &str = "sources";
/// An Application's Helm settings (the argo-cd Helm chart's values of an
/// Application installing ArgoCD are read there).
pub const APP_SOURCE_HELM: &[&str] = &["spec", SOURCE, HELM];

/// Where an Application's (or an ApplicationSet template's) Helm source is.
pub const HELM_ROOTS: &[&[crate::model::positions::P]] = {
    use crate::model::positions::P::{I, K};
    &[
        &[K("spec"), K(SOURCE), K(HELM)],
        &[K("spec"), K(SOURCES), I, K(HELM)],
        &[K("spec"), K(APPSET_TEMPLATE), K("spec"), K(SOURCE), K(HELM)],
        &[
            K("spec"),
            K(APPSET_TEMPLATE),
            K("spec"),
            K(SOURCES),
            I,
            K(HELM),
        ],
    ]
};

/// ArgoCD's settings ConfigMap, and its key holding the options every
/// `kustomize build` gets (docs/user-guide/kustomize.md).
pub const ARGOCD_CM: &str = "argocd-cm";
pub const KUSTOMIZE_BUILD_OPTIONS: &str = "kustomize.buildOptions";
/// The build option without which kustomize refuses `helmCharts`.
pub const KUSTOMIZE_ENABLE_HELM: &str = "--enable-helm";
/// `argocd-cm` keys of resource health checks: one for Applications
/// (docs/operator-manual/health.md, "Argo CD App"), and the older key
/// holding every resource's customizations as one YAML string.
pub const APP_HEALTH_CHECK: &str = "resource.customizations.health.argoproj.io_Application";
pub const RESOURCE_CUSTOMIZATIONS: &str = "resource.customizations";

/// ArgoCD's command-parameter ConfigMap (docs/operator-manual/argocd-cmd-params-cm.yaml)
/// and its settings the review reads: the ApplicationSet controller's
/// policy, whether an ApplicationSet may override it, the new git file
/// globbing, and the namespaces whose Applications the controller
/// reconciles (docs/operator-manual/app-any-namespace.md).
pub const CMD_PARAMS_CM: &str = "argocd-cmd-params-cm";
pub const APPSET_POLICY: &str = "applicationsetcontroller.policy";
pub const APPSET_POLICY_OVERRIDE: &str = "applicationsetcontroller.enable.policy.override";
pub const APPSET_NEW_GIT_FILE_GLOBBING: &str =
    "applicationsetcontroller.enable.new.git.file.globbing";
pub const APPLICATION_NAMESPACES: &str = "application.namespaces";

/// The kind and the key of the settings of ArgoCD's ConfigMaps, and where
/// the argo-cd Helm chart takes the data of `argocd-cm` and of
/// `argocd-cmd-params-cm` in its values (`configs.cm`, `configs.params`).
pub const CONFIG_MAP: &str = "ConfigMap";
pub const CONFIG_MAP_DATA: &str = "data";
pub const CHART_CM_VALUES: &[&str] = &["configs", "cm"];
pub const CHART_PARAMS_VALUES: &[&str] = &["configs", "params"];

/// A mapping's value at `key` as the API server decodes it (sigs.k8s.io/yaml
/// over go-yaml v2): an alias (`*rev`) is the node its anchor names, and of
/// a duplicate key the last value wins ([`Node::get_decoded`]). Every key of
/// the Application table is read through here.
pub fn s<'a>(y: V<'a>, key: &str) -> V<'a> {
    V(y.0.and_then(|n| n.get_decoded(key)))
}

/// The value at a path of keys ([`s`] step by step).
pub fn at<'a>(y: V<'a>, path: &[&str]) -> V<'a> {
    path.iter().fold(y, |y, k| s(y, k))
}

/// A scalar's value (YAML's null is no value: [`Node::is_null`]).
pub fn text(y: V) -> Option<String> {
    let node = y.0.map(Node::resolved).filter(|n| !n.is_null())?;
    node.as_str().map(str::to_string)
}

/// A boolean field as the API server reads it: YAML 1.1 (go-yaml v2
/// `resolve.go`, under sigs.k8s.io/yaml) makes the plain scalars `y Y yes
/// Yes YES true True TRUE on On ON` true and `n N no No NO false False
/// FALSE off Off OFF` false; a quoted `"true"`/`"false"` reads as the word
/// says. `None` for anything else (absent, null, another word). The one
/// boolean rule of the tables.
pub fn flag(y: V) -> Option<bool> {
    let node = y.0.map(Node::resolved).filter(|n| !n.is_null())?;
    let Value::Scalar(v, style) = &node.value else {
        return None;
    };
    let plain = matches!(style, TScalarStyle::Plain);
    match v.as_str() {
        "true" | "false" => Some(v == "true"),
        "y" | "Y" | "yes" | "Yes" | "YES" | "True" | "TRUE" | "on" | "On" | "ON" if plain => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "False" | "FALSE" | "off" | "Off" | "OFF" if plain => {
            Some(false)
        }
        _ => None,
    }
}

pub fn source_of(y: V) -> Source {
    let dir = s(y, "directory");
    Source {
        repo_url: text(s(y, "repoURL")).unwrap_or_default(),
        path: text(s(y, "path")),
        target_revision: text(s(y, "targetRevision")).unwrap_or_default(),
        chart: text(s(y, "chart")),
        ref_name: text(s(y, "ref")),
        directory: Directory {
            recurse: flag(s(dir, "recurse")) == Some(true),
            include: text(s(dir, "include")).filter(|s| !s.is_empty()),
            exclude: text(s(dir, "exclude")).filter(|s| !s.is_empty()),
            disable_extension_filter: text(s(dir, "disableExtensionFilter")).as_deref()
                == Some("true"),
        },
        value_files: s(s(y, HELM), HELM_VALUE_FILES)
            .as_vec()
            .map(|v| v.into_iter().filter_map(text).collect())
            .unwrap_or_default(),
        helm: !s(y, "helm").is_badvalue(),
        helm_inline: ["values", "valuesObject", "parameters", "fileParameters"]
            .iter()
            .any(|k| !s(s(y, "helm"), k).is_badvalue()),
        inline: inline_helm(s(y, HELM)),
        kustomize: !s(y, "kustomize").is_badvalue(),
        plugin: !s(y, "plugin").is_badvalue(),
        directory_given: !dir.is_badvalue(),
        this_repo: false,
        ignore_missing_value_files: text(s(s(y, "helm"), "ignoreMissingValueFiles")).as_deref()
            == Some("true"),
    }
}

/// The inline values of a source's `helm:` ([`InlineHelm`]): `values` only
/// when it is a string, `parameters` only when it is a list.
fn inline_helm(helm: V) -> InlineHelm {
    let values = s(helm, HELM_VALUES);
    let parameters = s(helm, HELM_PARAMETERS);
    InlineHelm {
        object: s(helm, HELM_VALUES_OBJECT).0.cloned(),
        values: values.0.filter(|_| text(values).is_some()).cloned(),
        parameters: parameters
            .0
            .filter(|_| parameters.as_vec().is_some())
            .cloned(),
        file_parameters: !s(helm, "fileParameters").is_badvalue(),
    }
}

pub fn automated(spec: V) -> bool {
    let a = s(s(spec, "syncPolicy"), "automated");
    a.is_map() && flag(s(a, "enabled")) != Some(false)
}

/// The Application or ApplicationSet a document is, if it is one.
pub fn app_of(m: &Manifest) -> Option<App> {
    let doc = V(Some(m.doc));
    let kind = match text(s(doc, "kind"))?.as_str() {
        "Application" => "Application",
        "ApplicationSet" => "ApplicationSet",
        _ => return None,
    };
    let meta = s(doc, "metadata");
    let name = text(s(meta, "name")).unwrap_or_default();
    let wave = text(s(s(meta, "annotations"), "argocd.argoproj.io/sync-wave"))
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0);
    let spec = spec_of(doc, kind);
    let sources: Vec<Source> = source_nodes(spec).into_iter().map(source_of).collect();
    let mut git_generators = Vec::new();
    let mut other_generators = Vec::new();
    if kind == "ApplicationSet" {
        collect_git_generators(
            s(s(doc, "spec"), "generators"),
            &mut git_generators,
            &mut other_generators,
        );
    }
    Some(App {
        file: m.file.to_string(),
        kind,
        name,
        namespace: text(s(meta, "namespace")).unwrap_or_default(),
        sources,
        automated: automated(spec),
        wave,
        git_generators,
        other_generators,
        generators: if kind == "ApplicationSet" {
            generators(s(s(doc, "spec"), "generators"))
        } else {
            Vec::new()
        },
        applications_sync: (kind == "ApplicationSet")
            .then(|| text(s(s(s(doc, "spec"), "syncPolicy"), "applicationsSync")))
            .flatten(),
        rendered: None,
        applied_by: None,
        live_absent: false,
        unmodeled: refused_by_api(m.doc, kind, m.file).or_else(|| unmodeled(m.doc, kind, m.file)),
        project: Some(
            text(s(spec, PROJECT_KEY))
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| DEFAULT_PROJECT.to_string()),
        ),
        destination: destination_of(s(spec, crate::model::positions::DESTINATION_KEY)),
        template_name: (kind == "ApplicationSet")
            .then(|| text(s(s(s(s(doc, "spec"), "template"), "metadata"), "name")))
            .flatten(),
    })
}

/// An Application's `spec.project`.
pub const PROJECT_KEY: &str = "project";

/// The project of an Application that names none, and the one ArgoCD
/// creates by itself, permitting every source and destination (argo-cd
/// `ApplicationSpec.GetProject()`, `DefaultAppProjectName`;
/// docs/user-guide/projects.md "The Default Project").
pub const DEFAULT_PROJECT: &str = "default";

fn destination_of(y: V) -> AppDestination {
    let field = |k: &str| text(s(y, k)).filter(|v| !v.is_empty());
    AppDestination {
        server: field(crate::model::positions::DESTINATION_SERVER_KEY),
        name: field("name"),
        namespace: text(s(y, "namespace")).unwrap_or_default(),
    }
}

/// The kind of an ArgoCD project.
pub const APP_PROJECT: &str = "AppProject";

/// An AppProject's `spec` keys the review reads (argo-cd
/// `pkg/apis/application/v1alpha1/types.go`, `AppProjectSpec`): the
/// repositories its Applications may read, where they may deploy, the
/// namespaces its Applications may live in (Applications in any
/// namespace), and whether only clusters scoped to the project are
/// permitted.
pub const SOURCE_REPOS: &str = "sourceRepos";
pub const DESTINATIONS: &str = crate::model::positions::PROJECT_DESTINATIONS_KEY;
pub const SOURCE_NAMESPACES: &str = "sourceNamespaces";
pub const PROJECT_SCOPED_CLUSTERS: &str = "permitOnlyProjectScopedClusters";

/// AppProject `spec` fields that may keep a permitted Application from
/// syncing a merged change, with why: the review does not model them, so
/// an Application of such a project is not proven to deploy.
pub const PROJECT_HOLDS: [(&str, &str); 4] = [
    (
        "signatureKeys",
        "only commits signed by its keys sync (docs/user-guide/gpg-verification.md)",
    ),
    (
        "sourceIntegrity",
        "only sources its verification policies accept sync (docs/user-guide/source-integrity-git-gpg.md)",
    ),
    (
        "syncWindows",
        "a sync window may deny syncs when it is active (docs/user-guide/sync_windows.md)",
    ),
    (
        "destinationServiceAccounts",
        "with sync impersonation enabled, a sync needs a service account it maps the destination to (docs/operator-manual/app-sync-using-impersonation.md)",
    ),
];

/// One entry of an AppProject's `spec.destinations` (each a glob, `!` to
/// deny; an absent field is the empty pattern).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectDestination {
    pub server: String,
    pub name: String,
    pub namespace: String,
    pub line: usize,
}

/// An AppProject found in the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    /// `/`-separated path of its file, relative to the repository root.
    pub file: String,
    /// The line of its document.
    pub line: usize,
    pub name: String,
    /// `metadata.namespace` (empty when the manifest names none): ArgoCD
    /// reads AppProjects only in its own (control-plane) namespace.
    pub namespace: String,
    pub source_repos: Vec<String>,
    /// The line of the `spec.sourceRepos` key (the document's when
    /// absent); the same for the other lists.
    pub source_repos_line: usize,
    pub destinations: Vec<ProjectDestination>,
    /// The line of `spec.destinations` (the document's when absent).
    pub destinations_line: usize,
    pub source_namespaces: Vec<String>,
    pub source_namespaces_line: usize,
    /// `permitOnlyProjectScopedClusters: true`.
    pub scoped_clusters: bool,
    /// The first field of [`PROJECT_HOLDS`] it sets (not empty), its line
    /// and why it may hold a sync back.
    pub holds: Option<(&'static str, usize, &'static str)>,
    /// Why its permissions are not known as written (a Helm template).
    pub rendered: Option<String>,
    /// The resource kind lists it sets ([`KindList`]), in table order.
    pub kind_lists: Vec<KindList>,
}

/// The AppProject a document is, if it is one.
pub fn project_of(m: &Manifest) -> Option<Project> {
    let doc = V(Some(m.doc));
    if text(s(doc, "kind")).as_deref() != Some(APP_PROJECT)
        || text(s(doc, "apiVersion")).as_deref() != Some(ARGO_API_VERSION)
    {
        return None;
    }
    let meta = s(doc, "metadata");
    let spec = s(doc, "spec");
    let line_of = |y: V| y.0.map_or(m.doc.line, |n| n.line);
    // The line of a key of the spec (the document's when it is absent).
    let key_line = |key: &str| match spec.0.map(|n| &n.value) {
        Some(Value::Map(pairs)) => pairs
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map_or(m.doc.line, |(k, _)| k.line),
        _ => m.doc.line,
    };
    let list = |key: &str| -> Vec<String> {
        s(spec, key)
            .as_vec()
            .into_iter()
            .flatten()
            .map(|v| text(v).unwrap_or_default())
            .collect()
    };
    Some(Project {
        file: m.file.to_string(),
        line: m.doc.line,
        name: text(s(meta, "name")).unwrap_or_default(),
        namespace: text(s(meta, "namespace")).unwrap_or_default(),
        source_repos: list(SOURCE_REPOS),
        source_repos_line: key_line(SOURCE_REPOS),
        destinations: s(spec, DESTINATIONS)
            .as_vec()
            .into_iter()
            .flatten()
            .map(|d| ProjectDestination {
                server: text(s(d, crate::model::positions::DESTINATION_SERVER_KEY))
                    .unwrap_or_default(),
                name: text(s(d, "name")).unwrap_or_default(),
                namespace: text(s(d, "namespace")).unwrap_or_default(),
                line: line_of(d),
            })
            .collect(),
        destinations_line: key_line(DESTINATIONS),
        source_namespaces: list(SOURCE_NAMESPACES),
        source_namespaces_line: key_line(SOURCE_NAMESPACES),
        scoped_clusters: flag(s(spec, PROJECT_SCOPED_CLUSTERS)) == Some(true),
        holds: PROJECT_HOLDS.iter().find_map(|&(key, why)| {
            let v = s(spec, key);
            let empty = v.0.is_none_or(|n| {
                n.is_null()
                    || matches!(&n.value, Value::Seq(i) if i.is_empty())
                    || matches!(&n.value, Value::Map(p) if p.is_empty())
            });
            (!empty).then(|| (key, key_line(key), why))
        }),
        rendered: None,
        kind_lists: kind_lists(spec, &key_line),
    })
}

/// The Application spec of a document of `kind` (an ApplicationSet's
/// template's).
fn spec_of<'a>(doc: V<'a>, kind: &str) -> V<'a> {
    if kind == "Application" {
        at(doc, APP_SPEC)
    } else {
        at(doc, APPSET_APP_SPEC)
    }
}

/// The sources of a spec: `sources` replaces `source` when it lists any
/// (ArgoCD's `ApplicationSpec.HasMultipleSources`: `len(Sources) > 0`;
/// `source` is then ignored).
pub fn source_nodes(spec: V<'_>) -> Vec<V<'_>> {
    match s(spec, SOURCES).as_vec() {
        Some(list) if !list.is_empty() => list,
        _ if !s(spec, SOURCE).is_badvalue() => vec![s(spec, SOURCE)],
        _ => Vec::new(),
    }
}

/// An Application read from a Helm template whose actions were masked to
/// parse it (`syntax::yaml::mask_templates`, the masked byte `ranges` of
/// `raw`): its name, and each source's path and revision, that a masked
/// action covers are put back as written (`{{ .Values.path }}`), so that
/// they read as templated, not as the mask's filler.
pub fn unmask(app: &mut App, doc: &Node, raw: &str, ranges: &[(usize, usize)]) {
    let back = |y: V| -> Option<String> {
        let n = y.0?;
        let len = n.as_str()?.len();
        let (from, to) = (n.start, n.start + len + 1);
        ranges
            .iter()
            .any(|&(a, _)| a >= from && a < to)
            .then_some(())?;
        let line = raw.get(n.start..)?.lines().next()?;
        Some(line.trim().trim_matches(['"', '\'']).to_string())
    };
    let doc = V(Some(doc));
    if let Some(name) = back(s(s(doc, "metadata"), "name")) {
        app.name = name;
    }
    let nodes = source_nodes(spec_of(doc, app.kind));
    for (src, y) in app.sources.iter_mut().zip(nodes) {
        if let Some(p) = back(s(y, "path")) {
            src.path = Some(p);
        }
        if let Some(r) = back(s(y, "targetRevision")) {
            src.target_revision = r;
        }
    }
}

/// An ApplicationSet's git generator: the files it reads from a
/// repository at a revision of its own (which may differ from the
/// template's `targetRevision`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitGenerator {
    pub repo_url: String,
    pub revision: String,
    /// `files[].path` globs.
    pub files: Vec<String>,
    /// `directories[]`: each `path` glob and whether it is `exclude`d.
    pub directories: Vec<(String, bool)>,
}

/// A `git` generator's body.
fn git_generator(git: V) -> GitGenerator {
    GitGenerator {
        repo_url: text(s(git, "repoURL")).unwrap_or_default(),
        revision: text(s(git, "revision")).unwrap_or_default(),
        files: s(git, "files")
            .as_vec()
            .into_iter()
            .flatten()
            .filter_map(|f| text(s(f, "path")))
            .collect(),
        directories: s(git, "directories")
            .as_vec()
            .into_iter()
            .flatten()
            .filter_map(|d| {
                let exclude = flag(s(d, "exclude")) == Some(true);
                text(s(d, "path")).map(|p| (p, exclude))
            })
            .collect(),
    }
}

/// Git generators, matrix and merge generators' children included; the
/// names of the other generators (`list` aside) go to `others`.
pub fn collect_git_generators(gens: V, out: &mut Vec<GitGenerator>, others: &mut Vec<String>) {
    for g in gens.as_vec().into_iter().flatten() {
        let git = s(g, "git");
        if !git.is_badvalue() {
            out.push(git_generator(git));
        }
        for nested in ["matrix", "merge"] {
            collect_git_generators(s(s(g, nested), "generators"), out, others);
        }
        if let Some(Value::Map(pairs)) = g.0.map(|n| &n.value) {
            for (k, _) in pairs {
                if let Some(name) = k.as_str() {
                    if !matches!(name, "git" | "list" | "matrix" | "merge" | "selector") {
                        others.push(name.to_string());
                    }
                }
            }
        }
    }
}

/// A generator's parameter set: each parameter's name (nested keys
/// dotted, as fasttemplate names them) and value.
pub type Params = Vec<(String, String)>;

/// A Kubernetes label selector (`matchLabels`, `matchExpressions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub match_labels: Vec<(String, String)>,
    /// `(key, operator, values)`.
    pub expressions: Vec<(String, String, Vec<String>)>,
    /// Something the selector holds that is not read (a non-scalar label).
    pub unread: bool,
}

impl Selector {
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.expressions.is_empty() && !self.unread
    }
}

/// What one entry of an ApplicationSet's `generators` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeneratorKind {
    /// `list.elements` of literal elements.
    List(Vec<Params>),
    /// A `git` generator.
    Git(GitGenerator),
    /// The cluster generator: registrations matching `selector`, with
    /// `values` (each may template the cluster's parameters).
    Clusters {
        selector: Selector,
        values: Params,
    },
    Matrix(Vec<Generator>),
    /// `merge`: its `mergeKeys` and generators.
    Merge(Vec<String>, Vec<Generator>),
    /// Any other generator (SCM provider, pull request, plugin, cluster
    /// decision resource, a list with `elementsYaml`...), by name.
    Other(String),
}

/// One entry of an ApplicationSet's `generators`, with its post-selector
/// (`selector`, matched against the parameters it generates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    pub kind: GeneratorKind,
    pub selector: Selector,
}

/// The key of the cluster generator (`generators[].clusters`).
pub const CLUSTERS_GENERATOR: &str = "clusters";

fn selector_of(y: V) -> Selector {
    let mut sel = Selector::default();
    if let Some(Value::Map(pairs)) = s(y, "matchLabels").0.map(|n| &n.value) {
        for (k, v) in pairs {
            match (k.as_str(), v.as_str()) {
                (Some(k), Some(v)) => sel.match_labels.push((k.into(), v.into())),
                _ => sel.unread = true,
            }
        }
    }
    for e in s(y, "matchExpressions").as_vec().into_iter().flatten() {
        let values = s(e, "values").as_vec().into_iter().flatten();
        match (text(s(e, "key")), text(s(e, "operator"))) {
            (Some(k), Some(op)) => sel
                .expressions
                .push((k, op, values.filter_map(text).collect())),
            _ => sel.unread = true,
        }
    }
    sel
}

/// An ApplicationSet's generators (Generators.md): each entry's one
/// generator key, read into [`GeneratorKind`].
pub fn generators(gens: V) -> Vec<Generator> {
    let mut out = Vec::new();
    for g in gens.as_vec().into_iter().flatten() {
        let selector = selector_of(s(g, "selector"));
        let Some(Value::Map(pairs)) = g.0.map(|n| &n.value) else {
            continue;
        };
        for (k, body) in pairs {
            let Some(name) = k.as_str() else { continue };
            let body = V(Some(body));
            let kind = match name {
                "selector" => continue,
                "list" => match list_elements(body) {
                    Some(elements) => GeneratorKind::List(elements),
                    None => {
                        GeneratorKind::Other("list (elementsYaml or non-literal elements)".into())
                    }
                },
                "git" => GeneratorKind::Git(git_generator(body)),
                CLUSTERS_GENERATOR => {
                    let mut values = Vec::new();
                    if let Some(Value::Map(vs)) = s(body, "values").0.map(|n| &n.value) {
                        for (vk, vv) in vs {
                            if let (Some(vk), Some(vv)) = (vk.as_str(), vv.as_str()) {
                                values.push((vk.to_string(), vv.to_string()));
                            }
                        }
                    }
                    // `flatList: true` gives one set whose `clusters`
                    // parameter lists every cluster.
                    if text(s(body, "flatList")).as_deref() == Some("true") {
                        GeneratorKind::Other(format!("{CLUSTERS_GENERATOR} (flatList)"))
                    } else {
                        GeneratorKind::Clusters {
                            selector: selector_of(s(body, "selector")),
                            values,
                        }
                    }
                }
                "matrix" => GeneratorKind::Matrix(generators(s(body, "generators"))),
                "merge" => GeneratorKind::Merge(
                    s(body, "mergeKeys")
                        .as_vec()
                        .into_iter()
                        .flatten()
                        .filter_map(text)
                        .collect(),
                    generators(s(body, "generators")),
                ),
                other => GeneratorKind::Other(other.to_string()),
            };
            out.push(Generator {
                kind,
                selector: selector.clone(),
            });
        }
    }
    out
}

/// A list generator's literal elements (no `elementsYaml`), one parameter
/// set per element.
fn list_elements(list: V) -> Option<Vec<Params>> {
    let Some(Value::Map(pairs)) = list.0.map(|n| &n.value) else {
        return None;
    };
    let [(ekey, elements)] = pairs.as_slice() else {
        return None;
    };
    if ekey.as_str() != Some("elements") {
        return None;
    }
    let mut out = Vec::new();
    for e in V(Some(elements)).as_vec()? {
        let mut params = Vec::new();
        flatten(e.0?, "", &mut params)?;
        out.push(params);
    }
    Some(out)
}

/// A list element's scalars, nested keys joined with `.`.
fn flatten(node: &Node, prefix: &str, out: &mut Vec<(String, String)>) -> Option<()> {
    match &node.value {
        Value::Map(pairs) => {
            for (k, v) in pairs {
                let k = k.as_str()?;
                let key = if prefix.is_empty() {
                    k.to_string()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(v, &key, out)?;
            }
            Some(())
        }
        _ => {
            out.push((prefix.to_string(), node.as_str()?.to_string()));
            Some(())
        }
    }
}

/// An Application's destination, for the tier table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub resource: String,
    pub server: Option<String>,
    pub name: Option<String>,
    /// Where a templated destination's values come from, when the chart's
    /// templates were followed (`templates::Followed::destinations`).
    pub from: Option<String>,
}

/// The fields of an Application's spec the review models, or knows not to
/// change whether a merged change is deployed (argo-cd
/// `pkg/apis/application/v1alpha1/types.go`, `ApplicationSpec`):
/// `project` and `info` only label it, `revisionHistoryLimit` bounds its
/// history, `destination` is where it applies. Not listed, so "not
/// proven": `ignoreDifferences` (a change to an ignored field is never
/// applied, docs `user-guide/diffing.md`), `sourceHydrator` (the
/// Application syncs hydrated manifests from another branch,
/// `user-guide/source-hydrator.md`), and anything newer.
pub const SPEC_FIELDS: [&str; 7] = [
    "source",
    "sources",
    crate::model::positions::DESTINATION_KEY,
    "project",
    "syncPolicy",
    "info",
    "revisionHistoryLimit",
];

/// `spec.syncPolicy` fields: `automated` is modelled; `retry` only retries
/// a failed sync and `managedNamespaceMetadata` labels the namespace
/// (`user-guide/auto_sync.md`, `user-guide/sync-options.md`).
pub const SYNC_POLICY_FIELDS: [&str; 4] = [
    "automated",
    "syncOptions",
    "retry",
    "managedNamespaceMetadata",
];

/// `syncOptions` items (the name before `=`) that change how a sync
/// applies, never whether a changed manifest is applied
/// (`user-guide/sync-options.md`). `RespectIgnoreDifferences` acts only
/// with `ignoreDifferences`, which is not modelled. Not listed, so "not
/// proven": `FailOnSharedResource` (the sync fails when another
/// Application owns the resource) and anything newer.
pub const SYNC_OPTIONS: [&str; 11] = [
    "Validate",
    "CreateNamespace",
    "PruneLast",
    "ApplyOutOfSyncOnly",
    "ServerSideApply",
    "PrunePropagationPolicy",
    "RespectIgnoreDifferences",
    "SkipDryRunOnMissingResource",
    "Prune",
    "Delete",
    "Replace",
];

/// A source's fields (argo-cd `ApplicationSource`); `name` only names it
/// in the UI.
pub const SOURCE_FIELDS: [&str; 10] = [
    "repoURL",
    "path",
    "targetRevision",
    "chart",
    "ref",
    "directory",
    "helm",
    "kustomize",
    "plugin",
    "name",
];

/// The source fields that each name a type of source (argo-cd
/// `ApplicationSource.ExplicitType()`): when one is given, ArgoCD renders
/// the path as that type whatever the path holds.
pub const SOURCE_TYPES: [&str; 4] = ["helm", "kustomize", "directory", "plugin"];

/// An ApplicationSet's spec fields (argo-cd `ApplicationSetSpec`) the
/// review models or knows to be harmless: `goTemplate` and
/// `goTemplateOptions` choose the template engine, `preservedFields` keeps
/// annotations and labels. Not listed, so "not proven": `templatePatch`
/// (it may change any field of the template, `templatePatch` in
/// `operator-manual/applicationset/Template.md`),
/// `ignoreApplicationDifferences` (the controller leaves those fields of
/// its Applications as they are, `Controlling-Resource-Modification.md`),
/// `strategy` (progressive syncs take over syncing), `applyNestedSelectors`.
pub const APPSET_SPEC_FIELDS: [&str; 6] = [
    "generators",
    "template",
    "syncPolicy",
    "goTemplate",
    "goTemplateOptions",
    "preservedFields",
];

/// An ApplicationSet's `spec.syncPolicy` fields: `applicationsSync` is
/// modelled; `preserveResourcesOnDeletion` acts on deletion only.
pub const APPSET_SYNC_POLICY_FIELDS: [&str; 2] =
    ["applicationsSync", "preserveResourcesOnDeletion"];

/// The prefix of ArgoCD's own annotations.
pub const ARGOCD_ANNOTATION: &str = "argocd.argoproj.io/";

/// ArgoCD annotations (after the prefix) that do not stop a change from
/// being applied: the sync wave (modelled), the sync and compare options
/// of the resource, and a refresh request (`user-guide/annotations-and-labels.md`).
pub const ANNOTATIONS: [&str; 4] = ["sync-wave", "sync-options", "compare-options", "refresh"];

/// Helm's hook annotation: ArgoCD maps it onto its own hooks for every
/// source type (gitops-engine `pkg/sync/hook`: `IsHook` asks
/// `helm.IsHook`), so the resource is a hook (created around a sync, on
/// deletion, or never for an unsupported one), not a synced resource.
pub const HELM_HOOK: &str = "helm.sh/hook";

/// ArgoCD's own hook annotation, after [`ARGOCD_ANNOTATION`].
pub const ARGOCD_HOOK: &str = "hook";

/// The one [`HELM_HOOK`] value that is no hook (`helm.IsHook`).
pub const HELM_CRD_INSTALL: &str = "crd-install";

/// An ApplicationSet's `spec.goTemplate`: Go's text/template renders its
/// template when true, fasttemplate when false or absent (argo-cd
/// `applicationset/utils/utils.go`, `Render.RenderTemplateParams`).
pub const GO_TEMPLATE: &str = "goTemplate";

/// The annotation by which the controller skips an Application
/// (`user-guide/skip_reconcile.md`).
pub const SKIP_RECONCILE: &str = "skip-reconcile";

/// The first key of mapping `y` not in `known`, with its line.
fn first_unknown(y: V, known: &[&str]) -> Option<(String, usize)> {
    match y.0.map(|n| &n.value) {
        Some(Value::Map(pairs)) => pairs.iter().find_map(|(k, _)| {
            let name = k.as_str().unwrap_or("?");
            (!known.contains(&name)).then(|| (name.to_string(), k.line))
        }),
        _ => None,
    }
}

/// Why the review cannot prove what an Application or ApplicationSet
/// does with a change: the first field it sets that the review does not
/// model (`spec.X`, with its line), an annotation that stops
/// reconciliation, or more than one explicit source type.
pub fn unmodeled(doc: &Node, kind: &str, file: &str) -> Option<String> {
    let doc = V(Some(doc));
    let spec = s(doc, "spec");
    let (prefix, app_spec, meta) = if kind == "Application" {
        ("spec", spec, s(doc, "metadata"))
    } else {
        let hit = first_unknown(spec, &APPSET_SPEC_FIELDS)
            .map(|(k, l)| (format!("spec.{k}"), l))
            .or_else(|| {
                first_unknown(s(spec, "syncPolicy"), &APPSET_SYNC_POLICY_FIELDS)
                    .map(|(k, l)| (format!("spec.syncPolicy.{k}"), l))
            });
        if let Some((field, line)) = hit {
            return Some(not_modeled(kind, doc, &field, file, line));
        }
        if let Some(why) = annotations(s(doc, "metadata"), kind, doc, file) {
            return Some(why);
        }
        if let Some(why) = template_syntax(doc, file) {
            return Some(why);
        }
        let t = s(spec, "template");
        ("spec.template.spec", s(t, "spec"), s(t, "metadata"))
    };
    if let Some(why) = annotations(meta, kind, doc, file) {
        return Some(why);
    }
    spec_unmodeled(app_spec)
        .map(|(field, line)| not_modeled(kind, doc, &format!("{prefix}.{field}"), file, line))
}

fn not_modeled(kind: &str, doc: V, field: &str, file: &str, line: usize) -> String {
    let name = text(s(s(doc, "metadata"), "name")).unwrap_or_default();
    format!("{kind}/{name} sets `{field}` ({file}:{line}), which the review does not model")
}

/// The boolean fields of `syncPolicy.automated`.
const AUTOMATED_FLAGS: [&str; 4] = ["enabled", "prune", "selfHeal", "allowEmpty"];

/// A boolean field set to what is no boolean to the API server (a quoted
/// `"false"`, another word): the Application CRD's schema (`type:
/// boolean`) refuses the manifest, so nothing it says is applied. The
/// value as written and its line.
fn not_boolean(y: V) -> Option<(String, usize)> {
    let n = y.0.map(Node::resolved).filter(|n| !n.is_null())?;
    let plain = matches!(&n.value, Value::Scalar(_, TScalarStyle::Plain));
    let shown = match &n.value {
        Value::Scalar(v, TScalarStyle::Plain) => v.clone(),
        Value::Scalar(v, _) => format!("\"{v}\""),
        _ => "a collection".to_string(),
    };
    (flag(y).is_none() || !plain).then(|| {
        (
            format!("{shown}, no boolean (the API server refuses the Application)"),
            n.line,
        )
    })
}

/// Why an ApplicationSet's template does not render as the review reads
/// it (argo-cd `applicationset/utils/utils.go`, `Render.Replace`): a
/// `goTemplate` that is no boolean (the CRD schema refuses the
/// ApplicationSet); with `goTemplate: true`, an action that names a
/// parameter without the leading `.` (`{{path}}`: Go's template parser
/// takes it for a function, "function \"path\" not defined", and the
/// controller makes no Application); without it, fasttemplate, an action
/// in Go's syntax (`{{.path.path}}`, `{{ .name | lower }}`: no parameter
/// has that name, so fasttemplate leaves it as written).
fn template_syntax(doc: V, file: &str) -> Option<String> {
    let spec = s(doc, "spec");
    let name = text(s(s(doc, "metadata"), "name")).unwrap_or_default();
    let go = s(spec, GO_TEMPLATE);
    if let Some((v, line)) = not_boolean(go) {
        return Some(format!(
            "ApplicationSet/{name} sets `spec.{GO_TEMPLATE}: {}` ({file}:{line}), so its template is not rendered",
            v.replace("(the API server refuses the Application)", "(the API server refuses the ApplicationSet)")
        ));
    }
    let go = flag(go) == Some(true);
    let mut found = None;
    visit_strings(s(spec, "template").0, &mut |text, line| {
        if found.is_some() {
            return;
        }
        for action in fasttemplate_tags(text) {
            let wrong = if go {
                go_calls_a_parameter(action)
            } else {
                !fast_tag(action)
            };
            if wrong {
                found = Some((action.to_string(), line));
                return;
            }
        }
    });
    let (action, line) = found?;
    Some(if go {
        format!(
            "ApplicationSet/{name} sets `{GO_TEMPLATE}: true` and its template holds `{{{{{action}}}}}` ({file}:{line}), a parameter in fasttemplate's syntax: Go's template reads it as a function that is not defined, so the ApplicationSet makes no Application"
        )
    } else {
        format!(
            "ApplicationSet/{name} does not set `{GO_TEMPLATE}: true` and its template holds `{{{{{action}}}}}` ({file}:{line}), in Go's template syntax: fasttemplate knows no parameter of that name and leaves it as written, so the Application made is not the one the review reads"
        )
    })
}

/// Each string (key or value) below `node`, with its line.
fn visit_strings(node: Option<&Node>, f: &mut dyn FnMut(&str, usize)) {
    let Some(n) = node else { return };
    match &n.value {
        Value::Scalar(v, _) => f(v, n.line),
        Value::Seq(items) => items.iter().for_each(|i| visit_strings(Some(i), f)),
        Value::Map(pairs) => {
            for (k, v) in pairs {
                visit_strings(Some(k), f);
                visit_strings(Some(v), f);
            }
        }
        _ => {}
    }
}

/// The tags fasttemplate reads in `text` (each `{{` to the next `}}`),
/// without the delimiters, white space trimmed.
fn fasttemplate_tags(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find("{{") {
        let after = &rest[a + 2..];
        let Some(b) = after.find("}}") else { break };
        out.push(after[..b].trim());
        rest = &after[b + 2..];
    }
    out
}

/// A fasttemplate parameter tag: a parameter name (`path`, `path[0]`,
/// `metadata.labels.env`, `values.x`), never Go's syntax (a leading `.`
/// or `$`, a pipe, a call with arguments, a string).
fn fast_tag(tag: &str) -> bool {
    !tag.is_empty()
        && !tag.starts_with(['.', '$', '-'])
        && !tag.contains(|c: char| c.is_whitespace() || "|\"`()".contains(c))
}

/// A Go template action that is a bare name in fasttemplate's syntax
/// (`path`, `path.basename`, `name`): Go parses its first word as a
/// function call. Go's keywords and the functions that take no argument
/// aside.
fn go_calls_a_parameter(action: &str) -> bool {
    let action = action
        .strip_prefix('-')
        .filter(|a| a.starts_with(char::is_whitespace))
        .unwrap_or(action);
    let action = action
        .strip_suffix('-')
        .filter(|a| a.ends_with(char::is_whitespace))
        .unwrap_or(action)
        .trim();
    let first = action.split('.').next().unwrap_or_default();
    let word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    word(first)
        && action.split('.').skip(1).all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        && !matches!(
            first,
            "else" | "end" | "break" | "continue" | "nil" | "true" | "false" | "now" | "uuidv4"
        )
}

/// The first field of an Application spec outside the modelled ones.
fn spec_unmodeled(spec: V) -> Option<(String, usize)> {
    if let Some(hit) = first_unknown(spec, &SPEC_FIELDS) {
        return Some(hit);
    }
    let sync = s(spec, "syncPolicy");
    if let Some((k, l)) = first_unknown(sync, &SYNC_POLICY_FIELDS) {
        return Some((format!("syncPolicy.{k}"), l));
    }
    let automated = s(sync, "automated");
    for k in AUTOMATED_FLAGS {
        if let Some(hit) = not_boolean(s(automated, k)) {
            return Some((format!("syncPolicy.automated.{k}: {}", hit.0), hit.1));
        }
    }
    for o in s(sync, "syncOptions").as_vec().into_iter().flatten() {
        let item = text(o).unwrap_or_default();
        let name = item.split('=').next().unwrap_or_default().trim();
        if !SYNC_OPTIONS.contains(&name) {
            let line = o.0.map_or(0, |n| n.line);
            return Some((format!("syncPolicy.syncOptions: {item}"), line));
        }
    }
    let mut sources = vec![("source".to_string(), s(spec, "source"))];
    for (i, y) in s(spec, "sources")
        .as_vec()
        .into_iter()
        .flatten()
        .enumerate()
    {
        sources.push((format!("sources[{i}]"), y));
    }
    for (at, y) in sources {
        if let Some((k, l)) = first_unknown(y, &SOURCE_FIELDS) {
            return Some((format!("{at}.{k}"), l));
        }
        if let Some((v, l)) = not_boolean(s(s(y, "directory"), "recurse")) {
            return Some((format!("{at}.directory.recurse: {v}"), l));
        }
        let types: Vec<&str> = SOURCE_TYPES
            .into_iter()
            .filter(|t| !s(y, t).is_badvalue())
            .collect();
        if types.len() > 1 {
            let line = y.0.map_or(0, |n| n.line);
            return Some((format!("{at}.{{{}}}", types.join(",")), line));
        }
    }
    None
}

/// An ArgoCD annotation of `meta` that stops or changes reconciliation.
fn annotations(meta: V, kind: &str, doc: V, file: &str) -> Option<String> {
    let Some(Value::Map(pairs)) = s(meta, "annotations").0.map(|n| &n.value) else {
        return None;
    };
    for (k, v) in pairs {
        if k.as_str() == Some(HELM_HOOK) && v.as_str().map(str::trim) != Some(HELM_CRD_INSTALL) {
            let app = text(s(s(doc, "metadata"), "name")).unwrap_or_default();
            return Some(format!(
                "{kind}/{app} is annotated `{HELM_HOOK}: {}` ({file}:{}): ArgoCD takes it for a hook (gitops-engine pkg/sync/hook `IsHook`), created only around a sync, on deletion or never, not a resource the sync applies",
                v.as_str().unwrap_or_default(),
                k.line
            ));
        }
        let Some(name) = k.as_str().and_then(|k| k.strip_prefix(ARGOCD_ANNOTATION)) else {
            continue;
        };
        if name == SKIP_RECONCILE {
            if v.as_str() == Some("true") {
                let app = text(s(s(doc, "metadata"), "name")).unwrap_or_default();
                return Some(format!(
                    "{kind}/{app} is annotated `{ARGOCD_ANNOTATION}{SKIP_RECONCILE}: \"true\"` ({file}:{}): the controller does not reconcile it, so nothing it holds deploys",
                    k.line
                ));
            }
        } else if !ANNOTATIONS.contains(&name) {
            return Some(not_modeled(
                kind,
                doc,
                &format!("metadata.annotations.{ARGOCD_ANNOTATION}{name}"),
                file,
                k.line,
            ));
        }
    }
    None
}

/// The one `apiVersion` of ArgoCD's kinds (Application, ApplicationSet,
/// AppProject): argo-cd `pkg/apis/application/v1alpha1/register.go`
/// serves no other version, so a manifest of that kind with any other
/// `apiVersion` is refused by the API server.
pub const ARGO_API_VERSION: &str = "argoproj.io/v1alpha1";

/// The API group of ArgoCD's kinds.
pub const ARGO_GROUP: &str = "argoproj.io";

/// Why a document of an ArgoCD kind is not one as the API server reads it:
/// its `apiVersion` is not [`ARGO_API_VERSION`], or its `metadata.name` is
/// no DNS-1123 subdomain (argo-cd's CRDs are validated as every object
/// name is, `IsDNS1123Subdomain`). `None` when it is fine or templated.
pub fn refused_by_api(doc: &Node, kind: &str, file: &str) -> Option<String> {
    let doc = V(Some(doc));
    let name = text(s(s(doc, "metadata"), "name")).unwrap_or_default();
    let api = text(s(doc, "apiVersion")).unwrap_or_default();
    if api != ARGO_API_VERSION {
        return Some(format!(
            "{kind}/{name} ({file}) has apiVersion `{api}`, not {ARGO_API_VERSION}, the only version ArgoCD serves: the API server refuses it, so it is no {kind} ArgoCD acts on"
        ));
    }
    if !name.contains("{{") && !crate::text::dns::is_dns_subdomain(&name) {
        return Some(format!(
            "{kind}/{name} ({file}): metadata.name `{name}` is no DNS-1123 subdomain (lower-case letters, digits, `-` and `.`): the API server refuses it"
        ));
    }
    if kind != "ApplicationSet" {
        return None;
    }
    let spec = s(doc, "spec");
    if let Some((v, line)) = not_boolean(s(spec, "goTemplate")) {
        return Some(format!(
            "{kind}/{name} sets `spec.goTemplate: {v}` ({file}:{line}): the ApplicationSet CRD's schema wants a boolean"
        ));
    }
    // The template's name: whatever the parameters put in, the text
    // around the actions stays, and must be allowed in a DNS-1123
    // subdomain for any generated name to be.
    let t = s(s(s(spec, "template"), "metadata"), "name");
    if let (Some(written), Some(line)) = (text(t), t.0.map(|n| n.line)) {
        let mut literal = String::new();
        let mut rest = written.as_str();
        while let Some(i) = rest.find("{{") {
            literal.push_str(&rest[..i]);
            rest = rest[i..].find("}}").map_or("", |j| &rest[i + j + 2..]);
        }
        literal.push_str(rest);
        if let Some(c) = literal
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.')))
        {
            return Some(format!(
                "{kind}/{name}'s template names its Applications `{written}` ({file}:{line}), which holds {c:?} whatever its parameters are: no DNS-1123 subdomain, the API server refuses every Application it generates"
            ));
        }
    }
    None
}

/// An AppProject's resource kind lists (argo-cd `AppProjectSpec`): which
/// group/kinds a sync may apply, cluster-scoped and namespaced
/// (`IsGroupKindNamePermitted`, checked by `controller/sync.go`
/// `validateSyncPermissions`).
pub const CLUSTER_RESOURCE_WHITELIST: &str = "clusterResourceWhitelist";
pub const CLUSTER_RESOURCE_BLACKLIST: &str = "clusterResourceBlacklist";
pub const NAMESPACE_RESOURCE_WHITELIST: &str = "namespaceResourceWhitelist";
pub const NAMESPACE_RESOURCE_BLACKLIST: &str = "namespaceResourceBlacklist";
const KIND_LIST_KEYS: [&str; 4] = [
    CLUSTER_RESOURCE_WHITELIST,
    CLUSTER_RESOURCE_BLACKLIST,
    NAMESPACE_RESOURCE_WHITELIST,
    NAMESPACE_RESOURCE_BLACKLIST,
];

/// One entry of a kind list: `group`, `kind` and (cluster lists only)
/// `name`, each a `filepath.Match` pattern; `None` when it is not a plain
/// string (templated, another type).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindEntry {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
}

/// A kind list an AppProject sets (present, even empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindList {
    pub key: &'static str,
    pub entries: Vec<KindEntry>,
    pub line: usize,
    /// Not a list of mappings as written (a template, another type).
    pub unreadable: bool,
}

fn kind_lists(spec: V, key_line: &dyn Fn(&str) -> usize) -> Vec<KindList> {
    let plain = |y: V| {
        y.0.and_then(|n| n.as_str())
            .filter(|v| !v.contains("{{"))
            .map(str::to_string)
    };
    let mut out = Vec::new();
    for key in KIND_LIST_KEYS {
        let y = s(spec, key);
        if y.0.is_none_or(|n| n.is_null()) {
            continue;
        }
        let Some(items) = y.as_vec() else {
            out.push(KindList {
                key,
                entries: Vec::new(),
                line: key_line(key),
                unreadable: true,
            });
            continue;
        };
        let unreadable = items.iter().any(|i| !i.is_map());
        out.push(KindList {
            key,
            entries: items
                .into_iter()
                .map(|i| KindEntry {
                    group: s(i, "group")
                        .0
                        .map_or(Some(String::new()), |_| plain(s(i, "group"))),
                    kind: s(i, "kind")
                        .0
                        .map_or(Some(String::new()), |_| plain(s(i, "kind"))),
                    name: s(i, "name")
                        .0
                        .map_or(Some(String::new()), |_| plain(s(i, "name"))),
                })
                .collect(),
            line: key_line(key),
            unreadable,
        });
    }
    out
}

/// A Kubernetes object of a file, as a sync applies it: its API group
/// (the `apiVersion` before `/`, empty for the core group), kind, name
/// and `metadata.namespace` as written (empty when it names none). A
/// field `None` is not known as written (a template action).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resource {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub name: String,
    pub namespace: Option<String>,
    pub line: usize,
    /// The file it is in, relative to the repository root.
    pub file: String,
    /// The hook annotation that makes it a hook, not a synced resource
    /// ([`hook_of`]), as written.
    pub hook: Option<String>,
}

impl Resource {
    /// `group/Kind/name` as a reason shows it.
    pub fn shown(&self) -> String {
        format!(
            "{}/{}/{}",
            self.group.as_deref().unwrap_or("?"),
            self.kind.as_deref().unwrap_or("?"),
            self.name
        )
    }
}

/// Groups whose files describe a build, not objects a sync applies
/// (a kustomization, a kustomize component or generator config).
const BUILD_GROUPS: [&str; 2] = ["kustomize.config.k8s.io", "builtin"];

/// The objects of a file's documents (each with `apiVersion` and `kind`):
/// what a sync applies when a parent reads the file as manifests. `masked`
/// are the byte ranges a template action covered: a field in one is not
/// known.
pub fn resources_of(docs: &[Node], masked: &[(usize, usize)], file: &str) -> Vec<Resource> {
    let mut out = Vec::new();
    for doc in docs {
        let y = V(Some(doc));
        let field = |y: V| -> Option<String> {
            let n = y.0?;
            let v = n.as_str()?;
            let hidden = masked
                .iter()
                .any(|&(a, b)| a < n.start + v.len() + 2 && b > n.start);
            (!hidden && !v.contains("{{")).then(|| v.to_string())
        };
        let (Some(_), Some(_)) = (s(y, "apiVersion").0, s(y, "kind").0) else {
            continue;
        };
        let api = field(s(y, "apiVersion"));
        let group = api.map(|a| match a.rsplit_once('/') {
            Some((g, _)) => g.to_string(),
            None => String::new(),
        });
        if group.as_deref().is_some_and(|g| BUILD_GROUPS.contains(&g)) {
            continue;
        }
        let meta = s(y, "metadata");
        out.push(Resource {
            group,
            kind: field(s(y, "kind")),
            name: text(s(meta, "name")).unwrap_or_default(),
            namespace: if s(meta, "namespace").0.is_none_or(|n| n.is_null()) {
                Some(String::new())
            } else {
                field(s(meta, "namespace"))
            },
            line: doc.line,
            file: file.to_string(),
            hook: hook_of(meta),
        });
    }
    out
}

/// The annotation that makes an object a hook, as `key: value`: ArgoCD's
/// own (`argocd.argoproj.io/hook`, any phase, `Skip` included: never
/// applied by a sync) or Helm's (`helm.sh/hook`, every value but
/// `crd-install`; gitops-engine `pkg/sync/hook` `IsHook`, which asks
/// `helm.IsHook`).
fn hook_of(meta: V) -> Option<String> {
    let Some(Value::Map(pairs)) = s(meta, "annotations").0.map(|n| &n.value) else {
        return None;
    };
    pairs.iter().find_map(|(k, v)| {
        let key = k.as_str()?;
        let value = v.resolved().as_str().unwrap_or_default().trim().to_string();
        let argocd = key
            .strip_prefix(ARGOCD_ANNOTATION)
            .is_some_and(|h| h == ARGOCD_HOOK);
        let helm = key == HELM_HOOK && value != HELM_CRD_INSTALL;
        (argocd || helm).then(|| format!("{key}: {value}"))
    })
}

/// Kinds the API server serves cluster-scoped (by `group/Kind`), and kinds
/// it serves namespaced: ArgoCD asks the cluster (`res.Namespaced`); a
/// kind in neither list may be either, and the review answers only what
/// both readings agree on.
pub const CLUSTER_SCOPED_KINDS: &[&str] = &[
    "/Namespace",
    "/Node",
    "/PersistentVolume",
    "/ComponentStatus",
    "rbac.authorization.k8s.io/ClusterRole",
    "rbac.authorization.k8s.io/ClusterRoleBinding",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "storage.k8s.io/StorageClass",
    "storage.k8s.io/CSIDriver",
    "storage.k8s.io/CSINode",
    "storage.k8s.io/VolumeAttachment",
    "scheduling.k8s.io/PriorityClass",
    "node.k8s.io/RuntimeClass",
    "admissionregistration.k8s.io/MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
    "apiregistration.k8s.io/APIService",
    "certificates.k8s.io/CertificateSigningRequest",
    "networking.k8s.io/IngressClass",
    "cert-manager.io/ClusterIssuer",
    "external-secrets.io/ClusterSecretStore",
    "external-secrets.io/ClusterExternalSecret",
];
pub const NAMESPACED_KINDS: &[&str] = &[
    "/ConfigMap",
    "/Secret",
    "/Service",
    "/ServiceAccount",
    "/Pod",
    "/PersistentVolumeClaim",
    "/Endpoints",
    "/LimitRange",
    "/ResourceQuota",
    "apps/Deployment",
    "apps/StatefulSet",
    "apps/DaemonSet",
    "apps/ReplicaSet",
    "batch/Job",
    "batch/CronJob",
    "networking.k8s.io/Ingress",
    "networking.k8s.io/NetworkPolicy",
    "rbac.authorization.k8s.io/Role",
    "rbac.authorization.k8s.io/RoleBinding",
    "policy/PodDisruptionBudget",
    "autoscaling/HorizontalPodAutoscaler",
    "argoproj.io/Application",
    "argoproj.io/ApplicationSet",
    "argoproj.io/AppProject",
    "cert-manager.io/Issuer",
    "cert-manager.io/Certificate",
    "external-secrets.io/ExternalSecret",
    "external-secrets.io/SecretStore",
];

/// Whether a kind is namespaced: `None` when the review does not know.
pub fn namespaced(group: &str, kind: &str) -> Option<bool> {
    let gk = format!("{group}/{kind}");
    if CLUSTER_SCOPED_KINDS.contains(&gk.as_str()) {
        Some(false)
    } else if NAMESPACED_KINDS.contains(&gk.as_str()) {
        Some(true)
    } else {
        None
    }
}

/// `argocd-cm` keys of ArgoCD's system-level diffing (docs
/// `user-guide/diffing.md`, "System-Level Configuration"; argo-cd
/// `util/settings/settings.go` `GetResourceOverrides`,
/// `GetResourceCompareOptions`, `GetExcludedResources`): fields of a kind
/// ignored when comparing (so never synced), compare options, and the
/// kinds ArgoCD does not manage at all.
pub const IGNORE_DIFFERENCES_KEY: &str = "resource.customizations.ignoreDifferences.";
pub const IGNORE_DIFFERENCES: &str = "ignoreDifferences";
pub const COMPARE_OPTIONS: &str = "resource.compareoptions";
pub const RESOURCE_EXCLUSIONS: &str = crate::model::positions::RESOURCE_EXCLUSIONS_KEY;
pub const RESOURCE_INCLUSIONS: &str = crate::model::positions::RESOURCE_INCLUSIONS_KEY;
/// `resource.compareoptions` keys: `ignoreAggregatedRoles` ignores the
/// rules of aggregated ClusterRoles; `ignoreResourceStatusField` ignores
/// `/status` only, and `ignoreDifferencesOnResourceUpdates` decides only
/// when a refresh runs.
pub const IGNORE_AGGREGATED_ROLES: &str = "ignoreAggregatedRoles";
pub const COMPARE_OPTIONS_STATUS_ONLY: [&str; 2] = [
    "ignoreResourceStatusField",
    "ignoreDifferencesOnResourceUpdates",
];
/// A `resource.exclusions`/`inclusions` entry's lists (argo-cd
/// `util/settings/filtered_resource.go`, `FilteredResource`).
pub const FILTER_GROUPS: &str = "apiGroups";
pub const FILTER_KINDS: &str = "kinds";
pub const FILTER_CLUSTERS: &str = "clusters";

/// One diffing setting of an `argocd-cm` of the repository: its key, its
/// value (`None`: not readable as written) and where it is (`file:line`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffSetting {
    pub key: String,
    pub value: Option<String>,
    pub at: String,
}

/// Whether `key` is a diffing setting ([`IGNORE_DIFFERENCES_KEY`],
/// [`RESOURCE_CUSTOMIZATIONS`] in its block form, [`COMPARE_OPTIONS`],
/// [`RESOURCE_EXCLUSIONS`], [`RESOURCE_INCLUSIONS`]).
fn is_diff_setting(key: &str) -> bool {
    key.starts_with(IGNORE_DIFFERENCES_KEY)
        || [
            RESOURCE_CUSTOMIZATIONS,
            COMPARE_OPTIONS,
            RESOURCE_EXCLUSIONS,
            RESOURCE_INCLUSIONS,
        ]
        .contains(&key)
}

/// The name of the argo-cd Helm chart (argo-helm `charts/argo-cd`), which
/// renders `argocd-cm` and `argocd-cmd-params-cm` from its values.
pub const ARGO_CD_CHART: &str = "argo-cd";
/// A source's chart, and a local chart's dependencies (`Chart.yaml`).
pub const SOURCE_CHART: &str = "chart";
pub const CHART_DEPENDENCIES: &str = "dependencies";
pub const CHART_DEPENDENCY_NAME: &str = "name";
/// kustomize's fields that make or change a ConfigMap (a generator, a
/// patch): `argocd-cm` made so is not read.
pub const KUSTOMIZE_CM_GENERATOR: &str = "configMapGenerator";
pub const KUSTOMIZE_PATCH_FIELDS: &[&str] =
    &["patches", "patchesStrategicMerge", "patchesJson6902"];

/// Where a document gives ArgoCD's own settings (`argocd-cm`,
/// `argocd-cmd-params-cm`) in a way the review does not read completely:
/// a source of the argo-cd chart with value files or `parameters` (in
/// `source` or any of `sources`), or in an ApplicationSet's template at
/// all, a local chart depending on `argo-cd` (its values set the
/// chart's under `argo-cd:`), a kustomize `configMapGenerator` or patch
/// naming either ConfigMap. `None`: nothing of the kind.
pub fn settings_unread(doc: &Node, file: &str) -> Option<String> {
    let y = V(Some(doc));
    let names_cm = |t: &str| t.contains(ARGOCD_CM);
    for (spec, template) in [(s(y, "spec"), false), (at(y, APPSET_APP_SPEC), true)] {
        for src in source_nodes(spec) {
            if text(s(src, SOURCE_CHART)).as_deref() != Some(ARGO_CD_CHART) {
                continue;
            }
            let helm = s(src, HELM);
            let files = s(helm, HELM_VALUE_FILES)
                .as_vec()
                .is_some_and(|v| !v.is_empty());
            let params = s(helm, HELM_PARAMETERS)
                .as_vec()
                .is_some_and(|v| !v.is_empty());
            if template {
                let line = src.0.map_or(doc.line, |n| n.line);
                return Some(format!(
                    "`{file}:{line}` deploys the argo-cd chart from an ApplicationSet's template, whose values are not read"
                ));
            }
            if files || params {
                let line = src.0.map_or(doc.line, |n| n.line);
                return Some(format!(
                    "`{file}:{line}` deploys the argo-cd chart with value files or parameters, which are not read"
                ));
            }
        }
    }
    if let Some(deps) = s(y, CHART_DEPENDENCIES).as_vec() {
        if let Some(d) = deps
            .iter()
            .find(|d| text(s(**d, CHART_DEPENDENCY_NAME)).as_deref() == Some(ARGO_CD_CHART))
        {
            let line = d.0.map_or(doc.line, |n| n.line);
            return Some(format!(
                "`{file}:{line}` is a chart depending on the argo-cd chart, whose values are not read"
            ));
        }
    }
    if let Some(gens) = s(y, KUSTOMIZE_CM_GENERATOR).as_vec() {
        if let Some(g) = gens
            .iter()
            .find(|g| text(s(**g, "name")).is_some_and(|n| names_cm(&n)))
        {
            let line = g.0.map_or(doc.line, |n| n.line);
            return Some(format!(
                "`{file}:{line}` makes ArgoCD's settings with a kustomize configMapGenerator, which is not read"
            ));
        }
    }
    for field in KUSTOMIZE_PATCH_FIELDS {
        let Some(node) = s(y, field).0 else { continue };
        if mentions(node, ARGOCD_CM) {
            return Some(format!(
                "`{file}:{}` patches ArgoCD's settings with kustomize `{field}`, which is not read",
                node.line
            ));
        }
    }
    None
}

/// Whether a scalar below `node` (a key or a value) holds `word`.
fn mentions(node: &Node, word: &str) -> bool {
    match &node.value {
        Value::Map(pairs) => pairs
            .iter()
            .any(|(k, v)| k.as_str().is_some_and(|k| k.contains(word)) || mentions(v, word)),
        Value::Seq(items) => items.iter().any(|i| mentions(i, word)),
        _ => node.as_str().is_some_and(|t| t.contains(word)),
    }
}

/// The diffing settings a document declares when it is an `argocd-cm`:
/// as a ConfigMap, or as the argo-cd chart's values `configs.cm` given by
/// an Application (`valuesObject`, or the `values` string). `None` when
/// it is no `argocd-cm`.
pub fn diff_settings(doc: &Node, file: &str) -> Option<Vec<DiffSetting>> {
    let y = V(Some(doc));
    let of_data = |data: V| -> Vec<DiffSetting> {
        let Some(Value::Map(pairs)) = data.0.map(|n| &n.value) else {
            return Vec::new();
        };
        pairs
            .iter()
            .filter_map(|(k, v)| {
                let key = k.as_str()?;
                is_diff_setting(key).then(|| DiffSetting {
                    key: key.to_string(),
                    value: v.resolved().as_str().map(str::to_string),
                    at: format!("{file}:{}", k.line),
                })
            })
            .collect()
    };
    let is_cm = text(s(y, "kind")).as_deref() == Some(CONFIG_MAP)
        && text(s(s(y, "metadata"), "name")).as_deref() == Some(ARGOCD_CM);
    if is_cm {
        return Some(of_data(s(y, CONFIG_MAP_DATA)));
    }
    // Each source's Helm settings: the one `source`, or each of `sources`.
    let mut found: Option<Vec<DiffSetting>> = None;
    for src in source_nodes(s(y, "spec")) {
        if let Some(d) = chart_diff_settings(s(src, HELM), file, &of_data) {
            found.get_or_insert_with(Vec::new).extend(d);
        }
    }
    found
}

/// The diffing settings the argo-cd chart's values `configs.cm` of one
/// source's `helm` give inline (`valuesObject`, else the `values` string).
fn chart_diff_settings(
    helm: V<'_>,
    file: &str,
    of_data: &dyn Fn(V) -> Vec<DiffSetting>,
) -> Option<Vec<DiffSetting>> {
    let cm = at(s(helm, HELM_VALUES_OBJECT), CHART_CM_VALUES);
    if cm.0.is_some() {
        return Some(of_data(cm));
    }
    let values = text(s(helm, HELM_VALUES))?;
    // A key is written as it reads or behind an escape: a values string
    // holding neither the first key nor a backslash cannot set it (most
    // Applications' values are not the argo-cd chart's: not parsed).
    if !values.contains(CHART_CM_VALUES[0]) && !values.contains('\\') {
        return None;
    }
    let docs = crate::syntax::yaml::read_yaml_or_json(&values).ok()?;
    let cm = at(V(docs.first()), CHART_CM_VALUES);
    cm.0.is_some().then(|| {
        of_data(cm)
            .into_iter()
            .map(|mut d| {
                d.at = format!("{file} (helm.values)");
                d
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(values: &str) -> Option<Vec<String>> {
        let app = format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: argocd}}\nspec:\n  source:\n    chart: argo-cd\n    helm:\n      values: {}\n",
            serde_json::to_string(values).unwrap()
        );
        let docs = crate::syntax::yaml::read_yaml_or_json(&app).unwrap();
        diff_settings(&docs[0], "a.yaml").map(|v| v.into_iter().map(|d| d.key).collect())
    }

    /// The argo-cd chart's `configs.cm` in a values string is read however
    /// its key is written; a values string that cannot name it is not parsed.
    #[test]
    fn diff_settings_in_a_values_string_are_read_behind_escapes_too() {
        let key = "resource.compareoptions";
        assert_eq!(
            settings(&format!("configs:\n  cm:\n    {key}: x\n")),
            Some(vec![key.to_string()])
        );
        assert_eq!(
            settings(&format!("\"\\x63onfigs\":\n  cm:\n    {key}: x\n")),
            Some(vec![key.to_string()])
        );
        assert_eq!(settings("replicas: 2\n"), None);
    }
}
