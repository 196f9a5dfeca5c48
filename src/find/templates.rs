//! Following the data through the templates in the repository: which Helm
//! values a chart's templates render into a cluster position.
//!
//! Before the main walk, every Helm chart in the walked tree (a folder with a
//! `Chart.yaml`) is read: its templates (`templates/**`, helpers included)
//! have their actions masked the way `locate` masks them and are parsed as
//! manifests. A template scalar counts when the positions table
//! ([`positions::classify`]) puts it at a cluster position and its action
//! can be followed back to a values path: directly (`{{ .Values.a.b }}`,
//! `$.Values`), through `range` (`.url` in `range .Values.list`,
//! `$e.url` in `range $i, $e := ...`), through `with`, through variables,
//! and through named templates (`include` / `template` of a `define` with
//! `.`, `.Values.x` or a `dict` as the argument, used in a scalar or as a
//! block of YAML such as a list generator's elements). Pipes that keep the
//! value (`quote`, `default`, `required`, ...), the Sprig functions that
//! pass one through (`ternary`, `coalesce`, `get`, `pluck`, `first`,
//! `last`), Go's `index` (a string key of a map, a number the element of a
//! list: only that element is a position), values built with `dict` and
//! `list`, and `tpl` of a string of the chart's `values.yaml` are
//! followed. A named template that renders a literal (the generator
//! placeholder ``{{ `{{.url}}` }}``, `printf` of string literals, piped
//! through `quote`, `squote`, `trim`, `toString`) is read as that literal
//! where an ApplicationSet names its server. A scalar is read in whatever
//! shape it is written (plain, quoted, in a flow mapping, a block scalar,
//! an item of a `kind: List`); actions that render nothing (`with`, `end`,
//! a variable's binding) do not make it several parts.
//!
//! Each values path found becomes a position ([`Position::ChartValue`]) in
//! every values file of that chart: `values*.yaml` beside `Chart.yaml`, the
//! files that Applications in the tree name in `helm.valueFiles` for the
//! chart's path, and the values those Applications give inline
//! (`helm.valuesObject`, `helm.values`, `helm.parameters`: [`Inline`]). An
//! action the reader cannot follow (`toYaml`, `printf`, a computed key,
//! `index` with a variable, a helper it cannot find, a value built from
//! several parts) at a cluster position is a [`Note`]: "templated, not
//! followed", with its file and line. Nothing is guessed.
//!
//! An action's expression is read by the one reader of Helm template
//! expressions ([`crate::syntax::gotemplate`]: its words, Go string
//! literals and `%q`, the keywords, which functions keep a value or pass
//! one through, an operand's shape), the reader the after-merge renderer
//! (`review::rendered`) uses too; this module follows what it reads back
//! to the values, symbolically.
//!
//! The result ([`Followed`]) is computed once and handed to the locator as
//! the extra paths of each values file; it only ever adds positions.

use crate::discover::walk::{Entry, Walk};
use crate::find::params::{self, Given, Leaf};
use crate::find::resolve::{self, sets::Registered};
use crate::model::application::{self, Destination};
use crate::model::names;
use crate::model::positions::{self, Position, Seg, YamlPath};
use crate::syntax::gotemplate::{
    self as gt, go_string, head, is_comment, is_literal, opens, unquote, words, Operand,
};
use crate::syntax::yaml::{
    action_expr, mask_templates, template_actions, Events, Stack, MAX_DEPTH,
};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use yaml_rust2::parser::Event;

/// One step of a values path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    Key(String),
    /// The element at this index of a list (`index .Values.servers 1`,
    /// `first`).
    Index(usize),
    /// Any element of what `range` walks (a sequence index or a map key).
    Each,
}

/// A path in a values file, as a template reads it (`environments[].server`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValuesPath(pub Vec<Step>);

impl fmt::Display for ValuesPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.0 {
            match s {
                Step::Each => f.write_str("[]")?,
                Step::Index(i) => write!(f, "[{i}]")?,
                Step::Key(k) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
            }
            first = false;
        }
        Ok(())
    }
}

impl ValuesPath {
    /// Whether a scalar at `path` in a values file is at this values path.
    pub fn matches(&self, path: &YamlPath) -> bool {
        self.0.len() == path.0.len()
            && self.0.iter().zip(&path.0).all(|(s, p)| match (s, p) {
                (Step::Key(k), Seg::Key(q)) => k == q,
                (Step::Index(i), Seg::Index(j)) => i == j,
                (Step::Each, _) => true,
                _ => false,
            })
    }

    fn join(&self, more: &[Step]) -> ValuesPath {
        let mut v = self.0.clone();
        v.extend_from_slice(more);
        ValuesPath(v)
    }
}

/// A values path that a chart template renders into a cluster position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    pub path: ValuesPath,
    /// The position the template puts it at.
    pub position: Position,
    /// Where: `templates/appproject.yaml:12` (the template's shown path),
    /// or the generator that reads it.
    pub template: String,
    /// Read by an ApplicationSet generator (see `generators`), not rendered
    /// by a chart.
    pub generator: bool,
    /// The chart's values given inline in an Application of the chart:
    /// how ([`Inline`]); `None` for a values file.
    pub inline: Option<Inline>,
    /// The document giving them inline (`Application/name`): a file may
    /// hold Applications of other charts.
    pub app: Option<String>,
}

/// How an Application gives the chart at its source path its values inline
/// (argo-cd `ApplicationSourceHelm`). Every copy a template renders is a
/// position, whichever wins (ArgoCD: `parameters` over `valuesObject` over
/// `values` over `valueFiles`): a shadowed copy wins as soon as the one
/// above it goes, so a rebind rewrites them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    /// `helm.valuesObject`: the flow's path is the path in the Application.
    Object,
    /// `helm.values`, a YAML document held in the string at this path: the
    /// flow's path is the path inside that document.
    Values(ValuesPath),
    /// `helm.parameters`, whose `value`s are at this path: the flow's path is
    /// the values path a parameter's `name` (Helm's `--set` syntax) names.
    Parameters(ValuesPath),
    /// A list element of the ApplicationSet (the flow's `app`) whose key
    /// its template's inline values use as a generator parameter: the
    /// flow's path is the key's path in the document, its `template` the
    /// whole road.
    Element,
}

impl Inline {
    fn shown(&self) -> &'static str {
        match self {
            Inline::Object => "helm.valuesObject",
            Inline::Values(_) => "helm.values",
            Inline::Parameters(_) => "helm.parameters",
            Inline::Element => "list generator element",
        }
    }
}

/// An action at a cluster position that the reader cannot follow.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    /// The file as shown (walk path).
    pub rel: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: templated, not followed: {}",
            self.rel, self.line, self.message
        )
    }
}

/// What following the templates found.
#[derive(Debug, Default)]
pub struct Followed {
    /// Values file (its path, `.`/`..` resolved) -> the values paths that
    /// are positions there.
    pub values: HashMap<PathBuf, Vec<Flow>>,
    /// Template file (its path, `.`/`..` resolved) -> the Applications and ApplicationSets
    /// it renders, for the tier table, with where a templated destination's
    /// values come from. The chart's reading is the one used for these files:
    /// a raw parse may take `server: {{ include ... }}` for a flow mapping.
    pub destinations: HashMap<PathBuf, Vec<Destination>>,
    pub notes: Vec<Note>,
}

impl Followed {
    /// Adds the positions that something other than a chart gives files (a
    /// generator's parameters), keyed by the path to open.
    pub fn add_flows(&mut self, flows: HashMap<PathBuf, Vec<Flow>>) {
        for (file, list) in flows {
            let have = self.values.entry(normal(&file)).or_default();
            for f in list {
                if !have
                    .iter()
                    .any(|g| g.path == f.path && g.inline == f.inline)
                {
                    have.push(f);
                }
            }
        }
    }

    /// The extra positions of a file (empty for most).
    pub fn of(&self, path: &Path) -> &[Flow] {
        if self.values.is_empty() {
            return &[];
        }
        self.values.get(&normal(path)).map_or(&[], Vec::as_slice)
    }

    /// The Applications a chart template renders, as the chart was read.
    pub fn destinations_of(&self, path: &Path) -> Option<&Vec<Destination>> {
        if self.destinations.is_empty() {
            return None;
        }
        self.destinations.get(&normal(path))
    }
}

/// The hook for the locator: the position a scalar at `path` of a file
/// holds because a chart template renders it into a cluster position, and
/// the road (`chart template templates/app.yaml:12 renders
/// .Values.clusters[].server`). `resource`: the document's `Kind/name`
/// (a values file has no kind; an Application giving inline values is
/// the flow's [`Flow::app`]); `name`: the `name` beside the scalar (a Helm
/// parameter's).
pub fn landing(
    path: &YamlPath,
    resource: Option<&str>,
    name: Option<&str>,
    flows: &[Flow],
) -> Option<(Position, String)> {
    let f = flows.iter().find(|f| match &f.inline {
        None => resource.is_none() && f.path.matches(path),
        Some(_) if f.app.as_deref() != resource => false,
        Some(Inline::Object | Inline::Element) => f.path.matches(path),
        Some(Inline::Values(_)) => false,
        Some(Inline::Parameters(at)) => {
            at.matches(path)
                && name
                    .and_then(params::set_path)
                    .is_some_and(|p| f.path.matches(&p))
        }
    })?;
    Some((Position::ChartValue, road(f)))
}

/// The hook for a document held in a string (`helm.values: |`): the
/// position of its scalar at `inner` when the string at `path` is an
/// Application's (`resource`) inline values that a chart template renders
/// there.
pub fn in_string(
    path: &YamlPath,
    resource: Option<&str>,
    inner: &YamlPath,
    flows: &[Flow],
) -> Option<(Position, String)> {
    let f = flows.iter().find(|f| match &f.inline {
        Some(Inline::Values(at)) => {
            f.app.as_deref() == resource && at.matches(path) && f.path.matches(inner)
        }
        _ => false,
    })?;
    Some((Position::ChartValue, road(f)))
}

fn road(f: &Flow) -> String {
    match &f.inline {
        Some(Inline::Element | Inline::Values(_)) if f.generator => {
            format!("{} {}", f.template, f.position.as_str())
        }
        Some(Inline::Element) => format!("{} ({})", f.template, f.position.as_str()),
        Some(Inline::Object) => format!(
            "chart template {} renders this Application's inline values ({})",
            f.template,
            f.position.as_str()
        ),
        Some(i) => format!(
            "chart template {} renders .Values.{} from this Application's {} ({})",
            f.template,
            f.path,
            i.shown(),
            f.position.as_str()
        ),
        None if f.generator => format!(
            "{} puts parameter {} in {}",
            f.template,
            // A git file that is a list: each element one parameter set.
            ValuesPath(
                f.path
                    .0
                    .iter()
                    .skip_while(|s| **s == Step::Each)
                    .cloned()
                    .collect()
            ),
            f.position.as_str()
        ),
        None => format!(
            "chart template {} renders .Values.{} ({})",
            f.template,
            f.path,
            f.position.as_str()
        ),
    }
}

/// A path in a file as a values path (an index is any element).
pub(crate) fn values_path(p: &YamlPath) -> ValuesPath {
    ValuesPath(
        p.0.iter()
            .map(|s| match s {
                Seg::Key(k) => Step::Key(k.clone()),
                Seg::Index(_) => Step::Each,
            })
            .collect(),
    )
}

/// The cheap test for the locator (before the path is built): `keys` are
/// the mapping keys from the root, the scalar's own key last.
pub fn may_hold(keys: &[&str], flows: &[Flow]) -> bool {
    let last = keys.last().copied();
    flows.iter().any(|f| {
        let own = match &f.inline {
            Some(Inline::Values(at) | Inline::Parameters(at)) => &at.0,
            _ => &f.path.0,
        };
        match own.last() {
            Some(Step::Key(k)) => Some(k.as_str()) == last,
            _ => true,
        }
    })
}

/// Positions whose value is the endpoint itself (not a document or a list
/// inside a string): only these are followed.
fn whole_value(p: Position) -> bool {
    !matches!(
        p,
        Position::RegistrationConfig
            | Position::ResourceFilter
            | Position::InStringKey
            | Position::PatchOp
            | Position::ChartValue
    )
}

/// Reads every chart in the walk. Files that cannot be read are left to the
/// main walk, which names them. `ours`: the identities
/// ([`crate::text::repo_url::repo_identity`]) of the repository's remotes;
/// a source or `ref` of another repository gives no local chart value
/// files (empty: not known, every source is taken by its path).
pub fn follow(walk: &Walk, ours: &BTreeSet<String>) -> Followed {
    let files = ChartFiles::collect(walk);
    let mut out = Followed::default();
    let mut charts: Vec<ChartRead> = files
        .charts()
        .map(|dir| files.read_chart(dir, &mut out.notes))
        .collect();
    if charts.is_empty() {
        return out;
    }
    lift_subcharts(&mut charts);
    let shown: HashMap<&Path, &str> = files
        .normals
        .iter()
        .map(PathBuf::as_path)
        .zip(files.entries.iter().map(|e| e.rel.as_str()))
        .collect();
    // Read only when a chart has positions: a second streamed pass.
    let mut apps: Option<Vec<AppValues>> = None;
    for chart in charts {
        let values = files.values_of(&chart, walk, &mut apps, ours);
        let inline = match &apps {
            Some(apps) => out.add_inline(&chart, apps),
            None => Vec::new(),
        };
        out.add(chart, values, &inline, &shown);
    }
    out.notes.sort();
    out.notes.dedup();
    out
}

/// What one chart's templates give: the values paths they render at
/// cluster positions, and the Applications they render.
struct ChartRead {
    /// The chart's folder (`.`/`..` resolved).
    dir: PathBuf,
    /// The chart's name in its `Chart.yaml` (its folder's name when it
    /// names none).
    name: String,
    /// Its dependencies in `Chart.yaml`.
    deps: Vec<Dependency>,
    flows: Vec<Flow>,
    /// Template file -> the Applications it renders.
    destinations: Vec<(PathBuf, Vec<Rendered>)>,
}

/// The files a chart is made of, from one streamed pass over the walk:
/// `Chart.yaml`, files in a `templates` folder, `values*.yaml` (memory
/// stays flat in the size of the tree).
struct ChartFiles {
    entries: Vec<Entry>,
    /// Each entry's path with `.`/`..` resolved.
    normals: Vec<PathBuf>,
}

impl ChartFiles {
    fn collect(walk: &Walk) -> ChartFiles {
        let mut files = ChartFiles {
            entries: Vec::new(),
            normals: Vec::new(),
        };
        let chart_file = |p: &Path| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            is_chart(name)
                || is_values(name)
                || p.components().any(|c| c.as_os_str() == "templates")
        };
        for e in walk.entries_where(&chart_file) {
            files.normals.push(normal(&e.path));
            files.entries.push(e);
        }
        files
    }

    /// The folder of each chart (each `Chart.yaml`).
    fn charts(&self) -> impl Iterator<Item = &Path> {
        self.entries
            .iter()
            .filter(|e| {
                e.path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_chart)
            })
            .filter_map(|e| e.path.parent())
    }

    /// Reads the templates of the chart in `dir`; what cannot be followed
    /// goes to `notes`.
    fn read_chart(&self, dir: &Path, notes: &mut Vec<Note>) -> ChartRead {
        let (name, deps) = self.chart_file(dir);
        let (texts, renders) = self.templates_of(dir, &deps);
        let mut defines = HashMap::new();
        // The chart's own named templates win over its subcharts'.
        for (i, (_, t)) in texts.iter().enumerate().rev() {
            collect_defines(t, i, &mut defines);
        }
        let values = self.default_values(dir);
        let chart = Chart {
            texts: &texts,
            defines: &defines,
            values: values.first(),
        };
        let mut read = ChartRead {
            dir: normal(dir),
            name,
            deps,
            flows: Vec::new(),
            destinations: Vec::new(),
        };
        for (i, (e, _)) in texts.iter().enumerate() {
            let name = e.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !renders[i]
                || name.starts_with('_')
                || !(name.ends_with(".yaml") || name.ends_with(".yml"))
            {
                continue; // helpers and NOTES.txt render no manifest of their own
            }
            let found = chart.read(i);
            notes.extend(found.notes);
            read.flows.extend(found.flows);
            if !found.destinations.is_empty() {
                read.destinations.push((e.path.clone(), found.destinations));
            }
        }
        read
    }

    /// The chart's name and dependencies, as its `Chart.yaml` gives them
    /// (Helm's `Chart.yaml` of apiVersion v2: `name`, `dependencies` with
    /// `name`, `alias`, `repository`), and those of a `requirements.yaml`
    /// beside it (Helm v2's file, of apiVersion v1 charts, which Helm 3's
    /// loader still reads into the chart's dependencies:
    /// `pkg/chart/loader/load.go`). Discovery over-finds: a dependency
    /// is read whatever its `condition` or `tags` say (a disabled
    /// subchart's values positions are found, and rewritten, as they
    /// render as soon as it is enabled); whether it renders is the
    /// after-merge review's question, which does not prove it.
    fn chart_file(&self, dir: &Path) -> (String, Vec<Dependency>) {
        let dir = normal(dir);
        let fallback = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = self.entries.iter().zip(&self.normals).find(|(_, n)| {
            n.parent() == Some(dir.as_path())
                && n.file_name().and_then(|f| f.to_str()).is_some_and(is_chart)
        });
        let read = |path: &Path| {
            std::fs::read_to_string(path)
                .ok()
                .filter(|t| !too_deep(t))
                .and_then(|t| crate::syntax::yaml::read_yaml_or_json(&t).ok())
                .unwrap_or_default()
        };
        let docs = file.map(|(e, _)| read(&e.path)).unwrap_or_default();
        let requirements = file
            .and_then(|(e, _)| e.path.parent())
            .map(|d| read(&d.join(names::CHART_REQUIREMENTS)))
            .unwrap_or_default();
        let Some(doc) = docs.first() else {
            return (fallback, Vec::new());
        };
        let name = doc
            .str_at(&[names::CHART_NAME])
            .map_or(fallback, str::to_string);
        let mut deps: Vec<Dependency> = Vec::new();
        for from in [doc, requirements.first().unwrap_or(doc)] {
            let Some(crate::syntax::yaml::Value::Seq(list)) =
                from.get(names::CHART_DEPENDENCIES).map(|n| &n.value)
            else {
                continue;
            };
            for d in list {
                let Some(chart) = d.str_at(&[names::DEPENDENCY_NAME]) else {
                    continue;
                };
                let local = d
                    .str_at(&[names::DEPENDENCY_REPOSITORY])
                    .and_then(|r| r.strip_prefix(names::LOCAL_REPOSITORY))
                    .map(|r| normal(&dir.join(r)));
                let dep = Dependency {
                    chart: chart.to_string(),
                    key: d
                        .str_at(&[names::DEPENDENCY_ALIAS])
                        .unwrap_or(chart)
                        .to_string(),
                    local,
                };
                if !deps
                    .iter()
                    .any(|o| o.chart == dep.chart && o.key == dep.key && o.local == dep.local)
                {
                    deps.push(dep);
                }
            }
        }
        (name, deps)
    }

    /// The documents of the `values.yaml` beside the chart's `Chart.yaml`
    /// (none when it does not parse: the main walk names it).
    fn default_values(&self, dir: &Path) -> Vec<crate::syntax::yaml::Node> {
        let dir = normal(dir);
        let file = self.entries.iter().zip(&self.normals).find(|(_, n)| {
            n.parent() == Some(dir.as_path())
                && n.file_name()
                    .is_some_and(|f| f == "values.yaml" || f == "values.yml")
        });
        file.and_then(|(e, _)| std::fs::read_to_string(&e.path).ok())
            .filter(|t| !too_deep(t))
            .and_then(|t| crate::syntax::yaml::read_yaml_or_json(&t).ok())
            .unwrap_or_default()
    }

    /// The texts of the chart in `dir`: its templates, then its subcharts'
    /// helpers (named templates share one namespace in Helm: a library
    /// chart's `common.labels`), those of its `file://` dependencies
    /// (`deps`) too, each with whether it renders here (only the chart's
    /// own templates do).
    fn templates_of(&self, dir: &Path, deps: &[Dependency]) -> (Vec<(&Entry, String)>, Vec<bool>) {
        let templates_dir = normal(&dir.join("templates"));
        let subcharts = normal(&dir.join("charts"));
        let own = |n: &Path| n.starts_with(&templates_dir);
        let helper = |n: &Path| {
            let under = n.starts_with(&subcharts)
                || deps
                    .iter()
                    .filter_map(|d| d.local.as_ref())
                    .any(|l| n.starts_with(l));
            under
                && n.extension().is_some_and(|x| x == "tpl")
                && n.components().any(|c| c.as_os_str() == "templates")
        };
        let mut files: Vec<(&Entry, bool)> = Vec::new();
        for (e, n) in self.entries.iter().zip(&self.normals) {
            if own(n) {
                files.push((e, true));
            } else if helper(n) {
                files.push((e, false));
            }
        }
        files.sort_by_key(|(_, own)| !own);
        let mut texts = Vec::new();
        let mut renders = Vec::new();
        for (e, own) in files {
            if let Ok(t) = std::fs::read_to_string(&e.path) {
                texts.push((e, t));
                renders.push(own);
            }
        }
        (texts, renders)
    }

    /// The values files of a chart: `values*.yaml` beside its `Chart.yaml`,
    /// and the files that Applications in the walk name in
    /// `helm.valueFiles` for the chart's path (`apps`, read once, the first
    /// time a chart has positions).
    fn values_of(
        &self,
        chart: &ChartRead,
        walk: &Walk,
        apps: &mut Option<Vec<AppValues>>,
        ours: &BTreeSet<String>,
    ) -> BTreeSet<PathBuf> {
        let mut values: BTreeSet<PathBuf> = self
            .normals
            .iter()
            .filter(|n| n.parent() == Some(chart.dir.as_path()))
            .filter(|n| {
                n.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(is_values)
            })
            .cloned()
            .collect();
        if chart.flows.is_empty() {
            return values;
        }
        let apps = apps.get_or_insert_with(|| value_files(walk_entries(walk), ours));
        for (source_path, files, _) in apps.iter() {
            if ends_with_path(&chart.dir, source_path) {
                // The repository root, as the source's path climbs to it;
                // keyed by path: a file outside the walk is never looked up.
                let mut root = chart.dir.clone();
                for _ in source_path
                    .split('/')
                    .filter(|s| !s.is_empty() && *s != ".")
                {
                    root.pop();
                }
                values.extend(files.iter().map(|f| normal(&root.join(f))));
            }
        }
        values
    }
}

/// A dependency of a chart: the chart's name, the key of the parent's
/// values it takes its values from (its `alias`, else its name), and for a
/// `file://` repository the chart's folder.
#[derive(Debug, Clone)]
struct Dependency {
    chart: String,
    key: String,
    local: Option<PathBuf>,
}

/// The subcharts of chart `p` with the key of `p`'s values each takes its
/// values from (Helm docs, "Subcharts and Global Values"; "Chart
/// Dependencies": `alias`, `file://` repositories): a chart in `p`'s
/// `charts/` folder under each key the dependencies naming it give (its
/// name when none does: helm pkg/chartutil/dependencies.go,
/// `processDependencyEnabled`), and the chart a `file://` dependency
/// names, under that dependency's key.
fn subcharts_of(charts: &[ChartRead], p: usize) -> Vec<(usize, String)> {
    let parent = &charts[p];
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut push = |c: usize, key: &str| {
        if c != p && !out.iter().any(|(d, k)| *d == c && k == key) {
            out.push((c, key.to_string()));
        }
    };
    let vendored = parent.dir.join("charts");
    for (c, child) in charts.iter().enumerate() {
        if child.dir.parent() != Some(vendored.as_path()) {
            continue;
        }
        let keys: Vec<&str> = parent
            .deps
            .iter()
            .filter(|d| d.chart == child.name)
            .map(|d| d.key.as_str())
            .collect();
        if keys.is_empty() {
            push(c, &child.name);
        }
        for k in keys {
            push(c, k);
        }
    }
    for d in &parent.deps {
        let Some(dir) = &d.local else { continue };
        if let Some(c) = charts.iter().position(|c| &c.dir == dir) {
            push(c, &d.key);
        }
    }
    out
}

/// A subchart's values are the parent's under the key the parent gives it
/// ([`subcharts_of`]), and its `global` values are the parent's `global`
/// too (Helm copies them into every subchart): its flows are lifted into
/// its parent chart's, a subchart's own subcharts first, so they climb
/// every level.
fn lift_subcharts(charts: &mut [ChartRead]) {
    let children: Vec<Vec<(usize, String)>> =
        (0..charts.len()).map(|p| subcharts_of(charts, p)).collect();
    let mut lifted: Vec<Option<Vec<Flow>>> = vec![None; charts.len()];
    let mut visiting = vec![false; charts.len()];
    for i in 0..charts.len() {
        all_flows(i, charts, &children, &mut lifted, &mut visiting);
    }
    for (c, flows) in charts.iter_mut().zip(lifted) {
        if let Some(flows) = flows {
            c.flows = flows;
        }
    }
}

/// Chart `i`'s flows with its subcharts' lifted in (a dependency cycle is
/// read once).
fn all_flows(
    i: usize,
    charts: &[ChartRead],
    children: &[Vec<(usize, String)>],
    lifted: &mut Vec<Option<Vec<Flow>>>,
    visiting: &mut Vec<bool>,
) -> Vec<Flow> {
    if let Some(f) = &lifted[i] {
        return f.clone();
    }
    if visiting[i] {
        return charts[i].flows.clone();
    }
    visiting[i] = true;
    let mut out = charts[i].flows.clone();
    for (c, key) in &children[i] {
        for f in all_flows(*c, charts, children, lifted, visiting) {
            let global =
                matches!(f.path.0.first(), Some(Step::Key(k)) if k == names::GLOBAL_VALUES);
            let mut add = |path: ValuesPath| {
                if !out.iter().any(|g| g.path == path && g.inline == f.inline) {
                    out.push(Flow { path, ..f.clone() });
                }
            };
            add(ValuesPath(vec![Step::Key(key.clone())]).join(&f.path.0));
            if global {
                add(f.path.clone());
            }
        }
    }
    visiting[i] = false;
    lifted[i] = Some(out.clone());
    out
}

impl Followed {
    /// The chart's flows as positions of the Applications that give its
    /// values inline (`helm.valuesObject`, `helm.values`, `helm.parameters`
    /// of a source whose path is the chart's).
    /// Returns the Applications as the tier table names them
    /// (`apps/a.yaml (helm.values)`).
    fn add_inline(&mut self, chart: &ChartRead, apps: &[AppValues]) -> Vec<String> {
        let mut named = Vec::new();
        for (source_path, _, inline) in apps {
            if !ends_with_path(&chart.dir, source_path) {
                continue;
            }
            for i in inline {
                let name = format!("{} ({})", i.rel, i.how.shown());
                if !named.contains(&name) {
                    named.push(name);
                }
                let list = self.values.entry(normal(&i.file)).or_default();
                let app = Some(i.app.clone());
                for f in chart.flows.iter().filter(|f| f.inline.is_none()) {
                    let at = ValuesPath(i.at.clone());
                    let (path, inline) = match i.how {
                        Held::Object => (at.join(&f.path.0), Inline::Object),
                        Held::Values => (f.path.clone(), Inline::Values(at)),
                        Held::Parameters => (f.path.clone(), Inline::Parameters(at)),
                    };
                    let inline = Some(inline);
                    if !list
                        .iter()
                        .any(|g| g.path == path && g.inline == inline && g.app == app)
                    {
                        list.push(Flow {
                            path,
                            inline,
                            app: app.clone(),
                            ..f.clone()
                        });
                    }
                }
                self.add_params(chart, i);
            }
        }
        named
    }

    /// What an Application's inline values give the chart's flows beyond
    /// the values themselves. A value an ApplicationSet's template writes
    /// as one generator parameter (`url: '{{.url}}'`) at a values path the
    /// chart renders at a cluster position: each list element key and git
    /// file key its generators give it is a position; one no generator of
    /// the repository gives is named with its line. A `helm.parameters`
    /// name that is not one plain path cannot be compared with the values
    /// paths the chart renders: named with its line.
    fn add_params(&mut self, chart: &ChartRead, i: &InlineAt) {
        let flows: Vec<&Flow> = chart.flows.iter().filter(|f| f.inline.is_none()).collect();
        let Some(first) = flows.first() else {
            return; // the chart renders no value at a cluster position
        };
        for (line, name) in &i.unread {
            self.notes.push(Note {
                rel: i.rel.clone(),
                line: *line,
                message: format!(
                    "{} name {name:?} of {} is not one values path (Helm --set syntax); the chart renders values at a cluster position ({}, .Values.{})",
                    i.how.shown(), i.app, first.template, first.path
                ),
            });
        }
        for (leaf, given) in &i.leaves {
            for f in flows.iter().filter(|f| f.path.matches(&leaf.values)) {
                let through = format!(
                    "{} {} and chart template {} rendering .Values.{}",
                    i.how.shown(),
                    leaf.values,
                    f.template,
                    f.path
                );
                let why = match &leaf.param {
                    None => Some(format!(
                        "{:?} of {} reaches {} through {through}; it is no one generator parameter",
                        leaf.written, i.app, f.position.as_str()
                    )),
                    Some(p) if given.is_empty() => Some(format!(
                        "generator parameter {p} of {} reaches {} through {through}; no list element or git file in the repository gives it",
                        i.app, f.position.as_str()
                    )),
                    Some(_) => None,
                };
                if let Some(message) = why {
                    self.notes.push(Note {
                        rel: i.rel.clone(),
                        line: leaf.line,
                        message,
                    });
                }
                let param = leaf.param.as_deref().unwrap_or_default();
                for g in given {
                    let flow = Flow {
                        path: values_path(&g.path),
                        position: f.position,
                        template: match g.element {
                            true => format!(
                                "list generator of {} gives parameter {param} to {through}",
                                i.app
                            ),
                            false => {
                                format!("git files generator of {}, through {through},", i.app)
                            }
                        },
                        generator: !g.element,
                        inline: g.element.then_some(Inline::Element),
                        app: g.element.then(|| i.app.clone()),
                    };
                    let list = self.values.entry(normal(&g.file)).or_default();
                    if !list.contains(&flow) {
                        list.push(flow);
                    }
                }
            }
        }
    }

    /// Records what a chart gives once its values files (`values`) are
    /// known: where each destination's values come from (for the tier
    /// table), and each flow as a position of every values file.
    fn add(
        &mut self,
        chart: ChartRead,
        values: BTreeSet<PathBuf>,
        inline: &[String],
        shown: &HashMap<&Path, &str>,
    ) {
        for (path, list) in chart.destinations {
            let list = list
                .into_iter()
                .map(|(mut d, used)| {
                    if !used.is_empty() {
                        d.from = Some(describe(&used, &values, inline, shown));
                    }
                    d
                })
                .collect();
            self.destinations.insert(normal(&path), list);
        }
        for v in values {
            let list = self.values.entry(v).or_default();
            for f in &chart.flows {
                if !list
                    .iter()
                    .any(|g| g.path == f.path && g.inline == f.inline)
                {
                    list.push(f.clone());
                }
            }
        }
    }
}

fn is_chart(name: &str) -> bool {
    name == "Chart.yaml" || name == "Chart.yml"
}

fn is_values(name: &str) -> bool {
    name.starts_with("values") && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

fn walk_entries(walk: &Walk) -> impl Iterator<Item = Entry> + '_ {
    walk.files().filter_map(|f| match f {
        crate::discover::walk::Found::Entry(e) => Some(e),
        crate::discover::walk::Found::Skipped(_) => None,
    })
}

/// `values environments[].server in charts/x/values.yaml, ...`, the
/// Applications that give the values inline (`inline`) last.
fn describe(
    used: &[ValuesPath],
    values: &BTreeSet<PathBuf>,
    inline: &[String],
    shown: &HashMap<&Path, &str>,
) -> String {
    let paths: BTreeSet<String> = used.iter().map(ValuesPath::to_string).collect();
    let mut files: Vec<String> = values
        .iter()
        .map(|v| match shown.get(v.as_path()) {
            Some(rel) => rel.to_string(),
            None => v.display().to_string(),
        })
        .collect();
    files.extend(inline.iter().cloned());
    let paths: Vec<String> = paths.into_iter().collect();
    if files.is_empty() {
        format!("values {} (no values file found)", paths.join(", "))
    } else {
        format!("values {} in {}", paths.join(", "), files.join(", "))
    }
}

/// Whether a text nests collections deeper than rebind reads (or does not
/// parse): it is not loaded whole.
fn too_deep(text: &str) -> bool {
    let mut depth = 0usize;
    for item in Events::new(text) {
        match item {
            Err(_) => return true,
            Ok((Event::MappingStart(..) | Event::SequenceStart(..), _)) => {
                depth += 1;
                if depth >= MAX_DEPTH {
                    return true;
                }
            }
            Ok((Event::MappingEnd | Event::SequenceEnd, _)) => depth = depth.saturating_sub(1),
            Ok(_) => {}
        }
    }
    false
}

/// A path with `.` and `..` resolved lexically.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `dir` ends with the repository path `source` (an Application's
/// `source.path`, relative to its repository root).
fn ends_with_path(dir: &Path, source: &str) -> bool {
    let want: Vec<&str> = source
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if want.is_empty() {
        return false;
    }
    let have: Vec<String> = dir
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    have.len() >= want.len() && have[have.len() - want.len()..].iter().eq(want.iter())
}

/// `(source.path, helm.valueFiles)` of every Application (and ApplicationSet
/// template) in the walk that names value files or gives values inline,
/// each file resolved by ArgoCD's rules ([`resolve::value_file`]) to a path
/// from the repository root: a `ref` source's file is taken for this
/// repository's (only files of the walk are looked up); a URL, a template
/// no known parameter fills and a refused name are no file here.
fn value_files(entries: impl Iterator<Item = Entry>, ours: &BTreeSet<String>) -> Vec<AppValues> {
    let entries: Vec<Entry> = entries.collect();
    let regs = OnceCell::new();
    let mut out = Vec::new();
    for e in &entries {
        if e.role != crate::discover::walk::Role::Yaml {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            continue;
        };
        if !text.contains(application::HELM) {
            continue;
        }
        // As written when it parses (a generator's `{{.env}}` in a quoted
        // name is kept for its parameters), else with its actions masked.
        let masked = mask_templates(&text).map(|(m, _)| m);
        if too_deep(masked.as_deref().unwrap_or(&text)) {
            continue; // the main walk names it
        }
        let read = crate::syntax::yaml::read_yaml_or_json;
        let Ok(docs) = read(&text).or_else(|e| masked.as_deref().map_or(Err(e), read)) else {
            continue;
        };
        for doc in &docs {
            app_values(e, &text, doc, &entries, &regs, ours, &mut out);
        }
    }
    out
}

/// [`value_files`] of one document, if it is an Application or an
/// ApplicationSet (read by the after-merge model's rules, once).
fn app_values(
    e: &Entry,
    text: &str,
    doc: &crate::syntax::yaml::Node,
    all: &[Entry],
    regs: &OnceCell<Vec<Registered>>,
    ours: &BTreeSet<String>,
    out: &mut Vec<AppValues>,
) {
    let m = application::Manifest { file: "", doc };
    let Some(app) = application::app_of(&m) else {
        return;
    };
    // This repository, as its remotes say; a URL that names no one
    // repository (templated) is taken by its path, as with no remote.
    let this_repo = |url: &str| {
        ours.is_empty()
            || crate::text::repo_url::repo_identity(url).is_none_or(|id| ours.contains(&id))
    };
    let inline = inline_values(doc, &app);
    // A name templated by generator parameters is each parameter set's
    // file: read only when a name needs them.
    let mut params: Option<Vec<BTreeMap<String, String>>> = None;
    for (j, src) in app.sources.iter().enumerate() {
        let Some(path) = &src.path else { continue };
        if !src.this_repo && !this_repo(&src.repo_url) {
            continue; // a chart of another repository, not the local one
        }
        let here: Vec<InlineAt> = inline
            .iter()
            .filter(|(k, ..)| *k == j)
            .map(|(_, at, how, node)| {
                let (leaves, unread) = match how {
                    Held::Object => (params::object_leaves(text, node), Vec::new()),
                    Held::Values => (params::values_leaves(node), Vec::new()),
                    Held::Parameters => params::parameter_leaves(text, node),
                };
                // Only an ApplicationSet's generators give parameters.
                let leaves = match app.kind {
                    "ApplicationSet" => leaves
                        .into_iter()
                        .map(|l| {
                            let given = match &l.param {
                                Some(p) => params::given(p, &app, doc, &e.path, all),
                                None => Vec::new(),
                            };
                            (l, given)
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                InlineAt {
                    file: e.path.clone(),
                    rel: e.rel.clone(),
                    app: match app.name.as_str() {
                        "" => app.kind.to_string(),
                        n => format!("{}/{n}", app.kind),
                    },
                    at: at.clone(),
                    how: *how,
                    leaves,
                    unread,
                }
            })
            .collect();
        if src.value_files.is_empty() && here.is_empty() {
            continue;
        }
        let mut files: Vec<String> = Vec::new();
        for f in &src.value_files {
            let sets: &[BTreeMap<String, String>] = if f.contains("{{") {
                params.get_or_insert_with(|| generator_params(&app, doc, all, regs))
            } else {
                &NO_PARAMS
            };
            for p in sets {
                let file = resolve::value_file(&app.sources, src, f, p);
                let Some(p) = file.in_repo(this_repo).map(str::to_string) else {
                    continue;
                };
                if !files.contains(&p) {
                    files.push(p);
                }
            }
        }
        out.push((path.clone(), files, here));
    }
}

/// No generator parameters.
static NO_PARAMS: [BTreeMap<String, String>; 1] = [BTreeMap::new()];

/// The parameter sets an ApplicationSet's generators make from what is in
/// the repository, by the resolution the after-merge review uses
/// ([`resolve::sets::known`]): list elements, the cluster generator over
/// the cluster registrations among `all` (`regs`, read once), git
/// generators over the files of `all` ([`git_sets`]), and matrix and merge
/// generators combining them; plus each top-level list's elements as
/// written when the model does not read them as literal parameters.
fn generator_params(
    app: &application::App,
    doc: &crate::syntax::yaml::Node,
    all: &[Entry],
    regs: &OnceCell<Vec<Registered>>,
) -> Vec<BTreeMap<String, String>> {
    if app.kind != "ApplicationSet" {
        return Vec::new();
    }
    let git = |g: &application::GitGenerator| Ok(git_sets(g, all));
    let inputs = resolve::sets::Inputs {
        registrations: regs.get_or_init(|| registrations(all)),
        git: &git,
    };
    let mut out: Vec<BTreeMap<String, String>> = resolve::sets::known(&app.generators, &inputs)
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect();
    out.extend(positions::list_elements(doc));
    out
}

/// The cluster registrations among `all` (what a cluster generator reads,
/// [`resolve::sets::registration_of`]).
fn registrations(all: &[Entry]) -> Vec<Registered> {
    let mut out = Vec::new();
    for e in all {
        if e.role != crate::discover::walk::Role::Yaml {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            continue;
        };
        if !text.contains(positions::CLUSTER_SECRET_LABEL.0) {
            continue;
        }
        let Ok(docs) = crate::syntax::yaml::read_yaml_or_json(&text) else {
            continue;
        };
        let rel = e.rel.trim_start_matches("./");
        out.extend(
            docs.iter()
                .filter_map(|d| resolve::sets::registration_of(d, rel)),
        );
    }
    out
}

/// A git generator's parameter sets among the files of `all`
/// ([`resolve::git::sets`]): a files glob read as either globbing reads it
/// ([`resolve::files_match_either`]); a file that does not parse is
/// skipped.
fn git_sets(g: &application::GitGenerator, all: &[Entry]) -> Vec<application::Params> {
    let rel = |e: &Entry| e.rel.trim_start_matches("./").to_string();
    let files: Vec<String> = all.iter().map(rel).collect();
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    if !g.directories.is_empty() {
        for r in &files {
            let mut d = r.as_str();
            while let Some((parent, _)) = d.rsplit_once('/') {
                dirs.insert(parent.to_string());
                d = parent;
            }
        }
    }
    let dirs: Vec<String> = dirs.into_iter().collect();
    let docs = |f: &str| -> Result<Option<Vec<crate::syntax::yaml::Node>>, String> {
        let path = all.iter().find(|e| rel(e) == f).map(|e| &e.path);
        Ok(path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| crate::syntax::yaml::read_yaml_or_json(&t).ok()))
    };
    resolve::git::sets(g, &dirs, &files, &resolve::files_match_either, &docs).unwrap_or_default()
}

/// Per Application source: `(source.path, value files from the repository
/// root, where it gives values inline)`.
type AppValues = (String, Vec<String>, Vec<InlineAt>);

/// Where an Application gives a source's chart values inline.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InlineAt {
    /// Its file, to open and as shown.
    file: PathBuf,
    rel: String,
    /// `Application/name` (or the ApplicationSet's).
    app: String,
    /// The path of the inline values in the document.
    at: Vec<Step>,
    how: Held,
    /// An ApplicationSet template's values written as one generator
    /// parameter, and where its generators hold each.
    leaves: Vec<(Leaf, Vec<Given>)>,
    /// Each `helm.parameters` name that is not one plain path: its line
    /// and the name.
    unread: Vec<(usize, String)>,
}

/// How a source holds inline values: what [`Inline`] a flow then gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Object,
    Values,
    Parameters,
}

impl Held {
    fn shown(self) -> &'static str {
        match self {
            Held::Object => "helm.valuesObject",
            Held::Values => "helm.values",
            Held::Parameters => "helm.parameters",
        }
    }
}

/// The sources of an Application (or ApplicationSet template) `app`, read
/// from the document `doc`, that give values inline (the table's
/// [`application::InlineHelm`], which the after-merge renderer reads too):
/// each source's index (in `App::sources` order: `sources` when it lists
/// any, else `source`), the path of its `helm.valuesObject`, of its
/// `helm.values` string, or of its `helm.parameters[].value`s, which, and
/// the node holding them.
fn inline_values<'a>(
    doc: &crate::syntax::yaml::Node,
    app: &'a application::App,
) -> Vec<(usize, Vec<Step>, Held, &'a crate::syntax::yaml::Node)> {
    use application::{s, V};
    let key = |k: &str| Step::Key(k.to_string());
    let spec_path = match app.kind == "ApplicationSet" {
        true => application::APPSET_APP_SPEC,
        false => application::APP_SPEC,
    };
    let mut base: Vec<Step> = spec_path.iter().map(|k| key(k)).collect();
    let spec = application::at(V(Some(doc)), spec_path);
    // `sources` replaces `source` when it lists any, as in `app_of`.
    let listed = s(spec, application::SOURCES)
        .as_vec()
        .is_some_and(|l| !l.is_empty());
    base.extend(match listed {
        true => vec![key(application::SOURCES), Step::Each],
        false => vec![key(application::SOURCE)],
    });
    base.push(key(application::HELM));
    let mut out = Vec::new();
    for (i, src) in app.sources.iter().enumerate() {
        let with = |more: &[Step]| {
            let mut p = base.clone();
            p.extend(more.iter().cloned());
            p
        };
        let inline = &src.inline;
        if let Some(n) = &inline.object {
            out.push((
                i,
                with(&[key(application::HELM_VALUES_OBJECT)]),
                Held::Object,
                n,
            ));
        }
        if let Some(n) = &inline.values {
            out.push((i, with(&[key(application::HELM_VALUES)]), Held::Values, n));
        }
        if let Some(n) = &inline.parameters {
            let p = with(&[
                key(application::HELM_PARAMETERS),
                Step::Each,
                key(positions::HELM_PARAMETER_VALUE),
            ]);
            out.push((i, p, Held::Parameters, n));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Reading one chart's templates.

/// A named template: the file it is in and the byte range of its body.
#[derive(Debug, Clone)]
struct Define {
    file: usize,
    body: std::ops::Range<usize>,
}

/// One template action: its byte range and its words without `{{-`/`-}}`.
#[derive(Debug, Clone)]
struct Action {
    start: usize,
    end: usize,
    expr: String,
}

/// The actions of a chart's text, read by the one template lexer
/// ([`template_actions`], [`action_expr`]): a `}}` inside a string
/// literal (double-quoted with escapes, raw backquoted) or a comment does
/// not end an action.
fn actions(text: &str) -> Vec<Action> {
    template_actions(text)
        .into_iter()
        .map(|(start, end)| Action {
            start,
            end,
            expr: action_expr(text, start, end).0.to_string(),
        })
        .collect()
}

fn collect_defines(text: &str, file: usize, out: &mut HashMap<String, Define>) {
    let acts = actions(text);
    let mut i = 0;
    while i < acts.len() {
        let a = &acts[i];
        if head(&a.expr) == "define" {
            let name = words(&a.expr).get(1).map(|w| unquote(w).to_string());
            let mut depth = 1;
            let mut j = i + 1;
            while j < acts.len() {
                if opens(&acts[j].expr) {
                    depth += 1;
                } else if head(&acts[j].expr) == "end" {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            if let (Some(name), Some(end)) = (name, acts.get(j)) {
                out.insert(
                    name,
                    Define {
                        file,
                        body: a.end..end.start,
                    },
                );
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
}

/// What a template expression may evaluate to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    /// The chart's root context (`$` in a template file, `.` at its top).
    Root,
    /// A part of `.Values`.
    Values(ValuesPath),
    /// Something that is not a values path (a literal, `.Release.Name`).
    Other,
    /// Something the reader cannot follow, and why.
    Unknown(String),
    /// A dictionary built in the template (Sprig's `dict "k" v ...`).
    Dict(Vec<(String, Val)>),
    /// A list built in the template (Sprig's `list a b ...`).
    List(Vec<Val>),
    /// Sprig's `pluck "k" d1 d2 ...`: the list of the `k` of each map that
    /// has it, in order; which map has it depends on the values.
    Plucked(Vec<Val>),
}

impl Val {
    fn field(&self, keys: &[&str]) -> Val {
        let steps: Vec<Step> = keys.iter().map(|k| Step::Key(k.to_string())).collect();
        self.at(&steps)
    }

    /// The value at `steps` below this one: a key of a map, or the element
    /// at an index of a list (Go's `index` with a number).
    fn at(&self, steps: &[Step]) -> Val {
        match self {
            Val::Root => match steps.split_first() {
                None => Val::Root,
                Some((Step::Key(k), rest)) if k == "Values" => {
                    Val::Values(ValuesPath(rest.to_vec()))
                }
                Some(_) => Val::Other,
            },
            Val::Values(p) => Val::Values(p.join(steps)),
            Val::Other => Val::Other,
            Val::Unknown(w) => Val::Unknown(w.clone()),
            Val::Dict(entries) => match steps.split_first() {
                None => self.clone(),
                Some((Step::Key(k), rest)) => entries
                    .iter()
                    .find(|(e, _)| e == k)
                    .map_or(Val::Other, |(_, v)| v.at(rest)),
                Some(_) => Val::Unknown("a `dict` read by a number".into()),
            },
            Val::List(items) => match steps.split_first() {
                None => self.clone(),
                Some((s, rest)) => {
                    let i = match s {
                        Step::Index(i) => Some(*i),
                        Step::Key(k) => k.parse::<usize>().ok(),
                        Step::Each => None,
                    };
                    match i.and_then(|i| items.get(i)) {
                        Some(v) => v.at(rest),
                        None => Val::Unknown(format!(
                            "element {} of a `list`",
                            ValuesPath(vec![s.clone()])
                        )),
                    }
                }
            },
            Val::Plucked(items) => match steps.split_first() {
                None => self.clone(),
                Some(_) => Val::Unknown(format!(
                    "an element of a `pluck` of {} values, which of them depends on the values",
                    items.len()
                )),
            },
        }
    }

    /// What may be at `steps` below this one: for a `pluck`, whose
    /// elements are the values of the maps that have its key (Sprig), the
    /// element at index `i` is any of its values from the `i`-th on (the
    /// earlier ones may be missing from the values); else [`Val::at`].
    fn at_all(&self, steps: &[Step]) -> Vec<Val> {
        match (self, steps.split_first()) {
            (Val::Plucked(items), Some((Step::Index(i), rest))) => {
                if *i >= items.len() {
                    return vec![Val::Unknown(format!(
                        "element {i} of a `pluck` of {} values",
                        items.len()
                    ))];
                }
                items[*i..].iter().map(|v| v.at(rest)).collect()
            }
            _ => vec![self.at(steps)],
        }
    }

    fn each(&self) -> Val {
        match self {
            Val::Values(p) => Val::Values(p.join(&[Step::Each])),
            Val::Root => Val::Unknown("`range` over the root context".into()),
            // One value the elements all are; several are not one dot.
            Val::List(items) | Val::Plucked(items) => match items.as_slice() {
                [] => Val::Other,
                [first, rest @ ..] if rest.iter().all(|v| v == first) => first.clone(),
                _ if matches!(self, Val::List(_)) => {
                    Val::Unknown("`range` over a `list` of several values".into())
                }
                _ => Val::Unknown("`range` over a `pluck` of several values".into()),
            },
            Val::Dict(entries) => match entries.as_slice() {
                [] => Val::Other,
                [(_, first), rest @ ..] if rest.iter().all(|(_, v)| v == first) => first.clone(),
                _ => Val::Unknown("`range` over a `dict` of several values".into()),
            },
            v => v.clone(),
        }
    }
}

/// The scope an action is read in: the dot, `$`, and the variables.
#[derive(Debug, Clone)]
struct Scope {
    dot: Val,
    root: Val,
    vars: BTreeMap<String, Val>,
}

impl Scope {
    /// The scope of a template (or a named template's body) whose dot and
    /// `$` are `root`.
    fn of(root: Val) -> Scope {
        Scope {
            dot: root.clone(),
            root,
            vars: BTreeMap::new(),
        }
    }
}

/// How many levels of named templates are followed.
const MAX_CALLS: usize = 8;
/// How deep parenthesised expressions are read.
const MAX_NESTING: usize = 64;

/// One chart as its templates are read: the texts of its templates (and
/// of its subcharts' helpers), and its named templates.
struct Chart<'c> {
    texts: &'c [(&'c Entry, String)],
    defines: &'c HashMap<String, Define>,
    /// The chart's `values.yaml`, for the strings `tpl` renders.
    values: Option<&'c crate::syntax::yaml::Node>,
}

/// What one template file gives.
#[derive(Default)]
struct Read {
    flows: Vec<Flow>,
    notes: Vec<Note>,
    /// The Applications and ApplicationSets rendered.
    destinations: Vec<Rendered>,
}

/// An Application or ApplicationSet a template renders, with the values
/// paths its destination follows (the values files are not known yet).
type Rendered = (Destination, Vec<ValuesPath>);

/// A template expanded: the text with block includes inlined, and for each
/// line, the file and line it comes from.
struct Expanded {
    text: String,
    origin: Vec<(usize, usize)>,
}

impl Read {
    fn flow(&mut self, path: ValuesPath, position: Position, (rel, line): &(String, usize)) {
        self.flows.push(Flow {
            path,
            position,
            template: format!("{rel}:{line}"),
            generator: false,
            inline: None,
            app: None,
        });
    }

    fn note(&mut self, (rel, line): &(String, usize), message: String) {
        self.notes.push(Note {
            rel: rel.clone(),
            line: *line,
            message,
        });
    }

    /// A value rendered at a cluster position (`shown`) that the reader
    /// cannot follow is noted with why; a literal is not a values path.
    fn unfollowed(&mut self, at: &(String, usize), shown: &str, v: &Val) {
        match v {
            Val::Unknown(why) => self.note(at, format!("{shown}: {why}")),
            Val::Root => self.note(at, format!("{shown}: the whole root context")),
            Val::Dict(_) => self.note(at, format!("{shown}: a whole `dict`")),
            Val::List(_) => self.note(at, format!("{shown}: a whole `list`")),
            Val::Plucked(_) => self.note(at, format!("{shown}: the whole list `pluck` returns")),
            Val::Values(_) | Val::Other => {}
        }
    }
}

/// A template file expanded and evaluated: the text, its actions, and
/// what each output action may render.
struct Template {
    ex: Expanded,
    /// The template file (its index in the chart).
    file: usize,
    /// The byte offsets of the line breaks of `ex.text`.
    breaks: Vec<usize>,
    acts: Vec<Action>,
    /// Per action: what it renders ([`Chart::evaluate`]).
    values: Vec<Option<Vec<Val>>>,
    /// Per action: the literal string it renders, when it renders one
    /// ([`Chart::literal`]).
    literals: Vec<Option<String>>,
}

/// A template's manifest as parsed (actions masked): its documents, and
/// where a block action under a key lands.
struct Manifest {
    docs: Vec<TDoc>,
    /// (0-based line, path of the key on it, document) of every mapping key.
    keys: Vec<(usize, Vec<Seg>, usize)>,
}

impl Template {
    /// The 0-based line of a byte offset (one index for the whole file).
    fn line_at(&self, off: usize) -> usize {
        self.breaks.partition_point(|&b| b < off)
    }

    /// The file and 1-based line a byte offset comes from.
    fn origin(&self, off: usize) -> (usize, usize) {
        let line = self.line_at(off);
        self.ex
            .origin
            .get(line)
            .copied()
            .unwrap_or((self.file, line + 1))
    }

    /// Parses the manifest (`masked`: the text with its actions masked,
    /// offsets unchanged) on the shared path model: each document's naming
    /// facts, its scalars holding actions, and every key's line.
    fn manifest(&self, masked: &str) -> Manifest {
        let mut m = Manifest {
            docs: vec![TDoc::default()],
            keys: Vec::new(),
        };
        let mut stack: Stack = Stack::new();
        for (n, item) in Events::new(masked).enumerate() {
            let Ok((ev, off)) = item else {
                break; // a template that does not parse: nothing more to read
            };
            match ev {
                Event::DocumentStart => {
                    if !m.docs.last().is_some_and(TDoc::is_empty) {
                        m.docs.push(TDoc::default());
                    }
                    stack.clear();
                }
                Event::MappingStart(..) | Event::SequenceStart(..) => {
                    if stack.depth() >= MAX_DEPTH {
                        break; // deeper than rebind reads: the main walk names it
                    }
                    stack.open(matches!(ev, Event::MappingStart(..)), n, ());
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.close();
                }
                Event::Scalar(v, ..) => {
                    let path = stack.path_of(&v);
                    let doc = m.docs.len() - 1;
                    if stack.at_key() {
                        // Where a block action under this key lands.
                        m.keys.push((self.line_at(off), path.0, doc));
                    } else {
                        self.scalar(masked, &v, off, path, &mut m.docs[doc]);
                    }
                    stack.scalar(&v);
                }
                Event::Alias(..) => stack.alias(),
                _ => {}
            }
        }
        m
    }

    /// A value scalar `v` at `path` (`off`: its offset): its document's
    /// naming facts, and the scalar itself when it holds actions.
    fn scalar(&self, masked: &str, v: &str, off: usize, path: YamlPath, doc: &mut TDoc) {
        // The parser's offsets fall on characters of the masked text; the
        // original may differ inside an action.
        if self.ex.text.get(off..).is_none() {
            return;
        }
        let (body, end) = extent(&self.ex.text, masked, v, off);
        let here: Vec<usize> = self
            .acts
            .iter()
            .enumerate()
            .filter(|(_, a)| a.start >= off && a.start < end)
            .map(|(i, _)| i)
            .collect();
        let shown = if masked[off..].starts_with(['|', '>']) {
            body.clone()
        } else {
            off..end
        };
        let rendered =
            (!here.is_empty()).then(|| self.render_literals(shown.start, shown.end, &here));
        doc.learn(&path.0, v, rendered.as_deref());
        if here.is_empty() {
            return;
        }
        let whole = self.one_value(body, &here);
        doc.scalars.push(TScalar {
            path,
            actions: here,
            whole,
            off,
        });
    }

    /// Whether the scalar's text `body` renders one value: whatever it
    /// renders (text, and actions that render something) comes from
    /// branches of which one runs (`{{ if .Values.local }}https://...{{
    /// else }}{{ .Values.hub.url }}{{ end }}`); actions that render nothing
    /// (`with`, `end`, a variable's binding, a comment) do not count, so
    /// `{{ with .Values.hub }}{{ .url }}{{ end }}` is one value.
    fn one_value(&self, body: std::ops::Range<usize>, here: &[usize]) -> bool {
        // The branches open around each part rendered: (block, branch).
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut blocks = 0;
        let mut parts: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut at = body.start;
        for &i in here {
            let a = &self.acts[i];
            if a.start < at || a.end > body.end {
                return false;
            }
            if !self.ex.text[at..a.start].trim().is_empty() {
                parts.push(open.clone());
            }
            match head(&a.expr) {
                "if" | "with" | "range" => {
                    blocks += 1;
                    open.push((blocks, 0));
                }
                "else" => match open.last_mut() {
                    Some(top) => top.1 += 1,
                    None => return false,
                },
                "end" => match open.pop() {
                    Some(_) => {}
                    None => return false,
                },
                _ if self.values[i].is_some() => parts.push(open.clone()),
                _ => {}
            }
            at = a.end;
        }
        if !self.ex.text[at..body.end].trim().is_empty() {
            parts.push(open.clone());
        }
        // Two parts are one value's alternatives when a block both are in
        // holds them in different branches.
        let apart = |x: &[(usize, usize)], y: &[(usize, usize)]| {
            x.iter()
                .any(|(b, n)| y.iter().any(|(c, m)| b == c && n != m))
        };
        !parts.is_empty()
            && parts
                .iter()
                .enumerate()
                .all(|(k, x)| parts[k + 1..].iter().all(|y| apart(x, y)))
    }

    /// The text `off..end` with each action (of `here`) whose output is a
    /// literal string put in its place: `'{{ include "x.server" . }}'`,
    /// whose named template renders ``{{ `{{.url}}` }}``, reads `'{{.url}}'`
    /// (an ApplicationSet's generator placeholder); other actions stay as
    /// written.
    fn render_literals(&self, off: usize, end: usize, here: &[usize]) -> String {
        let mut out = String::new();
        let mut at = off;
        for &i in here {
            let a = &self.acts[i];
            let Some(lit) = self.literals[i].as_deref().filter(|_| a.end <= end) else {
                continue;
            };
            out.push_str(&self.ex.text[at..a.start]);
            out.push_str(lit);
            at = a.end;
        }
        out.push_str(&self.ex.text[at..end]);
        out
    }
}

/// The scope an action is read in, and the scopes around it: each with,
/// for a `with`/`range`, the scope outside it (its `else` branch runs with
/// the outer dot).
struct Scopes(Vec<(Scope, Option<Scope>)>);

impl Scopes {
    /// The scopes of a template whose dot and `$` are `root`.
    fn new(root: Val) -> Scopes {
        Scopes(vec![(Scope::of(root), None)])
    }

    fn current(&self) -> &Scope {
        &self.0.last().expect("the root scope stays").0
    }

    fn open(&mut self, scope: Scope, outer: Option<Scope>) {
        self.0.push((scope, outer));
    }

    /// `end`: the innermost scope closes (the root stays).
    fn end(&mut self) {
        if self.0.len() > 1 {
            self.0.pop();
        }
    }

    /// `else` of a `with`/`range`: the outer dot again.
    fn else_branch(&mut self) {
        if let Some((top, Some(outer))) = self.0.last_mut() {
            *top = outer.clone();
        }
    }

    /// `$x := v` or `$x = v`, in the innermost scope.
    fn bind(&mut self, var: &str, v: Val) {
        if let Some((s, _)) = self.0.last_mut() {
            s.vars.insert(var.to_string(), v);
        }
    }
}

/// `$x := ...` or `$x = ...`.
fn is_assignment(w: &[String]) -> bool {
    w.get(1).is_some_and(|x| x == ":=" || x == "=")
}

/// The 0-based line of the key a block action (`a`, on `line`) renders
/// under: the nearest line above with less indentation than the block
/// (its `nindent`/`indent`, or its own); `None` for an action inside a
/// scalar.
fn block_parent(lines: &[&str], line: usize, a: &Action) -> Option<usize> {
    let text = lines.get(line).copied().unwrap_or("");
    if text.trim().len() != a.end - a.start {
        return None; // inside a scalar: read with the scalars
    }
    let w = words(&a.expr);
    let indent = w
        .iter()
        .position(|x| x == "nindent" || x == "indent")
        .and_then(|p| w.get(p + 1)?.parse().ok())
        .unwrap_or(indentation(text));
    (0..line).rev().find(|&l| {
        let t = lines[l];
        let content = t.trim();
        !content.is_empty() && !content.starts_with("{{") && indentation(t) < indent
    })
}

impl Chart<'_> {
    /// Reads one template file: the values paths it renders at the table's
    /// cluster positions, what it renders there that cannot be followed,
    /// and the Applications it renders.
    fn read(&self, file: usize) -> Read {
        let ex = self.expand(file);
        let acts = actions(&ex.text);
        let values = self.evaluate(&acts, Val::Root, 0);
        let literals = acts.iter().map(|a| self.literal(&a.expr, 0)).collect();
        let breaks = ex.text.match_indices('\n').map(|(i, _)| i).collect();
        let t = Template {
            ex,
            file,
            breaks,
            acts,
            values,
            literals,
        };
        let mut read = Read::default();
        let Some((mut masked, _)) = mask_templates(&t.ex.text) else {
            return read; // no action: nothing to follow
        };
        block_scalar_heads(&t.ex.text, &t.acts, &mut masked);
        let mut manifest = t.manifest(&masked);
        self.read_blocks(&t, &mut manifest, &mut read);
        for doc in &manifest.docs {
            self.read_document(&t, doc, &mut read);
        }
        read
    }

    /// What each output action renders, read in its scope (`None` for the
    /// actions that only open, close or bind): `with` and `range` move the
    /// dot, variables are bound, and a named template's body (inlined by
    /// [`Chart::expand`]) takes its argument as the dot and `$`. `root` is
    /// the dot and `$` at the start; `depth` counts the calls around.
    fn evaluate(&self, acts: &[Action], root: Val, depth: usize) -> Vec<Option<Vec<Val>>> {
        let mut values = vec![None; acts.len()];
        let mut scopes = Scopes::new(root);
        for (i, a) in acts.iter().enumerate() {
            let scope = scopes.current().clone();
            let w = words(&a.expr);
            let first = w.first().map(String::as_str).unwrap_or("");
            match first {
                "" => {}
                _ if is_comment(&a.expr) => {}
                "end" => scopes.end(),
                "if" | "define" | "block" => scopes.open(scope, None),
                "else" => scopes.else_branch(),
                CALL => scopes.open(Scope::of(self.eval_first(&w[1..], &scope, depth)), None),
                "with" | "range" => scopes.open(self.enter(&w, &scope), Some(scope)),
                _ if is_assignment(&w) => {
                    scopes.bind(first, self.eval_first(&w[2..], &scope, depth))
                }
                _ => values[i] = Some(self.eval(&w, &scope, depth)),
            }
        }
        values
    }

    /// The scope inside `with X` or `range X` (`w`, the action's words):
    /// the dot is `X` (an element of it for `range`); `$e := X` binds it to
    /// `$e`, `$i, $e := X` also binds the index or key to `$i`.
    fn enter(&self, w: &[String], scope: &Scope) -> Scope {
        let (vars, expr) = gt::bindings(w);
        let v = self.eval_first(expr, scope, 0);
        let v = if w[0] == "range" { v.each() } else { v };
        let mut next = scope.clone();
        match vars.as_slice() {
            [e] => {
                next.vars.insert(e.to_string(), v.clone());
            }
            [k, e] => {
                next.vars.insert(k.to_string(), Val::Other);
                next.vars.insert(e.to_string(), v.clone());
            }
            _ => {}
        }
        next.dot = v;
        next
    }

    /// Actions alone on their line that render a block of YAML
    /// (`{{- toYaml .Values.destinations | nindent 4 }}`): they land under
    /// the nearest key above with less indentation, and the table's cluster
    /// positions below that key are followed into the values.
    fn read_blocks(&self, t: &Template, m: &mut Manifest, read: &mut Read) {
        let lines: Vec<&str> = t.ex.text.split('\n').collect();
        for (ai, a) in t.acts.iter().enumerate() {
            let Some(vals) = &t.values[ai] else { continue };
            let Some(parent) = block_parent(&lines, t.line_at(a.start), a) else {
                continue;
            };
            let Some((_, at, di)) = m.keys.iter().rev().find(|(l, ..)| *l == parent) else {
                continue;
            };
            let doc = m.docs[*di].item_at_mut(at);
            let Some(kind) = doc.0.kind.clone() else {
                continue;
            };
            let (doc, at) = (doc.0, doc.1);
            let under = positions_under(&kind, at, doc.server.as_deref());
            if under.is_empty() {
                continue;
            }
            let here = self.shown(t.origin(a.start));
            let shown = format!(
                "`{{{{ {} }}}}` renders a block at {} ({kind})",
                a.expr,
                YamlPath(at.to_vec())
            );
            for v in vals {
                let Val::Values(p) = v else {
                    read.unfollowed(&here, &shown, v);
                    continue;
                };
                for (position, rest) in &under {
                    match rest {
                        Some(steps) => {
                            doc.block_flows.push(p.join(steps));
                            read.flow(p.join(steps), *position, &here);
                        }
                        None => read.note(
                            &here,
                            format!(
                                "{shown}: which of its keys is a {} is not known",
                                position.as_str()
                            ),
                        ),
                    }
                }
            }
        }
    }

    /// One document's scalars at the table's cluster positions, followed
    /// into the values; an Application's destination is kept for the tier
    /// table with the values paths it follows.
    fn read_document(&self, t: &Template, doc: &TDoc, read: &mut Read) {
        if doc.kind.is_none() {
            return;
        }
        // The values paths each destination follows: the document's
        // (`None`), or an item's of a `kind: List`.
        let mut used: BTreeMap<Option<usize>, Vec<ValuesPath>> = BTreeMap::new();
        used.insert(None, doc.block_flows.clone());
        for (i, item) in &doc.items {
            used.insert(Some(*i), item.block_flows.clone());
        }
        for s in &doc.scalars {
            let (item, of, path) = doc.item_of(&s.path);
            let Some(kind) = of.kind.as_deref() else {
                continue;
            };
            let cx = positions::Context {
                kind: Some(kind),
                template_server: of.server.as_deref(),
                ..positions::Context::default()
            };
            let Some(position) = positions::classify(&path, &cx).filter(|p| whole_value(*p)) else {
                continue;
            };
            let here = self.shown(t.origin(s.off));
            for &ai in &s.actions {
                let Some(vals) = &t.values[ai] else { continue };
                if t.literals[ai].as_deref().is_some_and(|l| l.contains("{{")) {
                    continue; // a generator placeholder: read as the literal it renders
                }
                let shown = format!("`{{{{ {} }}}}` at {} ({kind})", t.acts[ai].expr, s.path);
                for v in vals {
                    match v {
                        Val::Values(p) if s.whole => {
                            used.entry(item).or_default().push(p.clone());
                            read.flow(p.clone(), position, &here);
                        }
                        Val::Values(_) => read.note(
                            &here,
                            format!("{shown}: the value is built from several parts"),
                        ),
                        v => read.unfollowed(&here, &shown, v),
                    }
                }
            }
        }
        for (item, of) in
            std::iter::once((None, doc)).chain(doc.items.iter().map(|(i, d)| (Some(*i), d)))
        {
            let Some(kind) = of.kind.as_deref() else {
                continue;
            };
            if let Some(d) = of.destination(kind) {
                read.destinations
                    .push((d, used.remove(&item).unwrap_or_default()));
            }
        }
    }

    /// A line of an expanded text as shown: the template file's walk path
    /// and the 1-based line there.
    fn shown(&self, (file, line): (usize, usize)) -> (String, usize) {
        (self.texts[file].0.rel.clone(), line)
    }

    /// The one value a pipeline renders where one is taken (the dot of a
    /// `with`, a variable, a named template's argument): a literal beside
    /// it renders no values path; several values are not one and are
    /// named (`$u := .Values.a | default .Values.b`).
    fn eval_first(&self, w: &[String], scope: &Scope, depth: usize) -> Val {
        let mut all: Vec<Val> = Vec::new();
        for v in self.eval(w, scope, depth) {
            if v != Val::Other && !all.contains(&v) {
                all.push(v);
            }
        }
        match all.len() {
            0 => Val::Other,
            1 => all.remove(0),
            _ => Val::Unknown(format!(
                "`{}` may be one of several values here",
                w.join(" ")
            )),
        }
    }

    /// Evaluates a pipeline (`words`) in `scope`: what it may render.
    fn eval(&self, w: &[String], scope: &Scope, depth: usize) -> Vec<Val> {
        let mut cmds = gt::commands(w).filter(|c| !c.is_empty());
        let Some(first) = cmds.next() else {
            return vec![Val::Other];
        };
        let mut vals = self.command(first, None, scope, depth);
        for c in cmds {
            vals = self.command(c, Some(vals), scope, depth);
        }
        vals
    }

    /// One command, with the previous command's result piped in as its last argument.
    fn command(
        &self,
        c: &[String],
        piped: Option<Vec<Val>>,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Val> {
        let f = c[0].as_str();
        if c.len() == 1 && piped.is_none() {
            return self.operands(f, scope, depth);
        }
        let args = &c[1..];
        let last = |this: &Self| -> Vec<Val> {
            match &piped {
                Some(v) => v.clone(),
                None => args
                    .last()
                    .map(|a| this.operands(a, scope, depth))
                    .unwrap_or_else(|| vec![Val::Other]),
            }
        };
        match f {
            "include" | "template" => {
                let Some(name) = args.first() else {
                    return vec![Val::Other];
                };
                if !is_literal(name) {
                    return vec![Val::Unknown(format!("`{f}` of a computed name"))];
                }
                let arg = match (&piped, args.get(1)) {
                    (Some(v), None) => v.first().cloned().unwrap_or(Val::Other),
                    (_, Some(a)) => self.operand(a, scope, depth),
                    (None, None) => Val::Other,
                };
                self.call(unquote(name), arg, depth)
            }
            "coalesce" => {
                let mut all: Vec<Val> = args
                    .iter()
                    .flat_map(|a| self.operands(a, scope, depth))
                    .collect();
                all.extend(piped.unwrap_or_default());
                all
            }
            "index" => self.index(args, piped, scope, depth),
            f if gt::keeps_value(f) => {
                let mut v = last(self);
                if f == "default" && piped.is_none() {
                    // `default D X`: X, or D when X is empty (a literal).
                    if let Some(d) = args.first().filter(|_| args.len() > 1) {
                        v.extend(self.operands(d, scope, depth));
                    }
                } else if f == "default" {
                    if let Some(d) = args.first() {
                        v.extend(self.operands(d, scope, depth));
                    }
                }
                v
            }
            f if gt::passes_value(f) => self.sprig(f, args, piped, scope, depth),
            "dict" | "list" => self.build(f, args, piped, scope, depth),
            "tpl" => self.tpl(args, piped, scope, depth),
            // A string built in the template: the ApplicationSet reading
            // takes a generator placeholder it renders from literals
            // ([`Chart::literal`]); anything else it builds at a cluster
            // position is named.
            "toJson" | "fromYaml" | "printf" | "cat" | "join" => {
                if all_other(&last(self)) && args.iter().all(|a| is_literal(a)) {
                    vec![Val::Unknown(format!(
                        "`{f}` builds a string in the template"
                    ))]
                } else {
                    vec![Val::Unknown(format!("`{f}` is not followed"))]
                }
            }
            _ => {
                if all_other(&last(self)) {
                    vec![Val::Other]
                } else {
                    vec![Val::Unknown(format!("`{f}` is not followed"))]
                }
            }
        }
    }

    /// Go's `index X k...` (text/template, "Functions"): a string key
    /// reads a map, a number a list's element; a computed key is not
    /// followed.
    fn index(
        &self,
        args: &[String],
        piped: Option<Vec<Val>>,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Val> {
        let mut operands: Vec<&String> = args.iter().collect();
        let base = match &piped {
            Some(v) => v.first().cloned().unwrap_or(Val::Other),
            None if !operands.is_empty() => self.operand(operands.remove(0), scope, depth),
            None => return vec![Val::Other],
        };
        if let Some(k) = operands.iter().find(|k| !is_literal(k)) {
            return vec![Val::Unknown(format!("`index` with a computed key `{k}`"))];
        }
        // Go's `index`: a string reads a map's key, a number a
        // list's element (text/template, "index").
        let mut steps = Vec::new();
        for k in &operands {
            match k.parse::<usize>() {
                Ok(i) => steps.push(Step::Index(i)),
                Err(_) if k.starts_with(['"', '`']) => {
                    steps.push(Step::Key(unquote(k).to_string()))
                }
                Err(_) => return vec![Val::Unknown(format!("`index` with the key `{k}`"))],
            }
        }
        base.at_all(&steps)
    }

    /// The Sprig functions that pass a value through (Sprig's `ternary`,
    /// `get`, `pluck`, `first`, `last`: docs masterminds.github.io/sprig):
    /// `ternary A B cond` may be A or B; `get D "k"` is D's `k`; `pluck "k"
    /// D...` is the list of each D's `k` that the values have ([`Val::Plucked`]);
    /// `first L` is L's element 0 (of a values list too), `last L` the last
    /// element of a `list` built here, any of a `pluck`'s; `last` of a
    /// values list is named (its length depends on each values file). A
    /// computed key is not followed.
    fn sprig(
        &self,
        f: &str,
        args: &[String],
        piped: Option<Vec<Val>>,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Val> {
        let op = |a: &String| self.operand(a, scope, depth);
        let key = |k: Option<&String>| k.filter(|k| is_literal(k)).map(|k| unquote(k).to_string());
        let computed = || vec![Val::Unknown(format!("`{f}` with a computed key"))];
        match f {
            // `ternary A B cond`, or `cond | ternary A B`.
            "ternary" => args
                .iter()
                .take(2)
                .flat_map(|a| self.operands(a, scope, depth))
                .collect(),
            "get" => {
                let (d, k) = match &piped {
                    Some(v) => (v.first().cloned().unwrap_or(Val::Other), key(args.first())),
                    None => (args.first().map(op).unwrap_or(Val::Other), key(args.get(1))),
                };
                match k {
                    Some(k) => vec![d.field(&[&k])],
                    None => computed(),
                }
            }
            "pluck" => {
                let Some(k) = key(args.first()) else {
                    return computed();
                };
                let mut all: Vec<Val> = args.iter().skip(1).map(op).collect();
                all.extend(piped.unwrap_or_default());
                vec![Val::Plucked(all.iter().map(|d| d.field(&[&k])).collect())]
            }
            _ => {
                let l = match &piped {
                    Some(v) => v.first().cloned().unwrap_or(Val::Other),
                    None => args.first().map(op).unwrap_or(Val::Other),
                };
                match (&l, f == "first") {
                    // A `list` built here: its first (last) element.
                    (Val::List(items), true) => vec![items.first().cloned().unwrap_or(Val::Other)],
                    (Val::List(items), false) => vec![items.last().cloned().unwrap_or(Val::Other)],
                    // A `pluck`: any of its values may be the first (last)
                    // that the values have.
                    (Val::Plucked(items), _) if items.is_empty() => vec![Val::Other],
                    (Val::Plucked(items), _) => items.clone(),
                    (Val::Values(p), true) => vec![Val::Values(p.join(&[Step::Index(0)]))],
                    (Val::Values(p), false) => vec![Val::Unknown(format!(
                        "`last` of .Values.{p}: which element is last depends on each values file"
                    ))],
                    _ => vec![l.each()],
                }
            }
        }
    }

    /// Sprig's `dict "k1" v1 "k2" v2 ...` and `list a b ...`, built as
    /// the template builds them (a piped value is the last argument); a
    /// computed `dict` key is not followed.
    fn build(
        &self,
        f: &str,
        args: &[String],
        piped: Option<Vec<Val>>,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Val> {
        let mut items: Vec<Val> = args.iter().map(|a| self.operand(a, scope, depth)).collect();
        items.extend(piped.and_then(|v| v.into_iter().next()));
        if f == "list" {
            return vec![Val::List(items)];
        }
        let mut entries = Vec::new();
        for (i, pair) in items.chunks(2).enumerate() {
            let key = args.get(2 * i).filter(|k| is_literal(k));
            let Some(key) = key else {
                return vec![Val::Unknown("`dict` with a computed key".into())];
            };
            let v = pair.get(1).cloned().unwrap_or(Val::Other);
            entries.push((unquote(key).to_string(), v));
        }
        vec![Val::Dict(entries)]
    }

    /// Helm's `tpl T ctx`: the string `T` rendered as a template with `ctx`
    /// as its dot. `T` is a literal of the template, or a values path whose
    /// string the chart's `values.yaml` holds: what its one action renders
    /// (a string that is no template renders itself, so the values path
    /// is kept too). A string of several parts, or one the chart's values
    /// do not hold, is not followed.
    fn tpl(
        &self,
        args: &[String],
        piped: Option<Vec<Val>>,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Val> {
        let Some(t) = args.first() else {
            return vec![Val::Other];
        };
        let ctx = match (args.get(1), piped) {
            (Some(a), _) => self.operand(a, scope, depth),
            (None, Some(v)) => v.into_iter().next().unwrap_or(Val::Other),
            (None, None) => Val::Other,
        };
        if depth >= MAX_CALLS {
            return vec![Val::Unknown("`tpl` nests too deep".into())];
        }
        if is_literal(t) {
            return match go_string(t) {
                Some(text) => self.tpl_string(&text, ctx, depth),
                None => vec![Val::Unknown(
                    "`tpl` of a literal that is no plain Go string".into(),
                )],
            };
        }
        match self.operand(t, scope, depth) {
            Val::Values(p) => {
                let mut out = vec![Val::Values(p.clone())];
                match self.values_string(&p) {
                    Some(text) => out.extend(self.tpl_string(&text, ctx, depth)),
                    None => out.push(Val::Unknown(format!(
                        "`tpl` of .Values.{p}: the chart's values.yaml holds no string there"
                    ))),
                }
                out
            }
            Val::Other => vec![Val::Other],
            Val::Unknown(why) => vec![Val::Unknown(why)],
            _ => vec![Val::Unknown("`tpl` of a value that is no string".into())],
        }
    }

    /// What a template string renders with `ctx` as its dot: its one
    /// action's value, itself when it has none.
    fn tpl_string(&self, text: &str, ctx: Val, depth: usize) -> Vec<Val> {
        let acts = actions(text);
        match acts.as_slice() {
            // `{{` that Go's lexer reads as no action: Helm refuses it.
            [] if text.contains("{{") => vec![Val::Unknown(
                "`tpl` of a string holding `{{` that is no action".into(),
            )],
            [] => vec![Val::Other],
            [a] if text.trim().len() == a.end - a.start => {
                self.eval(&words(&a.expr), &Scope::of(ctx), depth + 1)
            }
            _ => vec![Val::Unknown(
                "`tpl` of a string built from several parts".into(),
            )],
        }
    }

    /// The string at values path `p` of the chart's `values.yaml`.
    fn values_string(&self, p: &ValuesPath) -> Option<String> {
        let keys: Option<Vec<&str>> =
            p.0.iter()
                .map(|s| match s {
                    Step::Key(k) => Some(k.as_str()),
                    _ => None,
                })
                .collect();
        let node = self.values?.at(&keys?)?;
        node.as_str().map(str::to_string)
    }

    /// A single operand: a field chain, a variable, a literal, `(...)`.
    fn operand(&self, w: &str, scope: &Scope, depth: usize) -> Val {
        match gt::operand(w) {
            Operand::Group(..) | Operand::Unclosed => {
                // One value: a literal beside it renders no values path.
                let mut all = self.operands(w, scope, depth);
                all.retain(|v| *v != Val::Other);
                match all.len() {
                    0 => Val::Other,
                    1 => all.remove(0),
                    _ => Val::Unknown(format!("`{w}` may be one of several values here")),
                }
            }
            Operand::Literal | Operand::Other => Val::Other,
            Operand::Dot(keys) if keys.first() == Some(&"Values") && scope.dot != Val::Root => {
                Val::Unknown("`.Values` where the dot is not the chart's root".into())
            }
            Operand::Dot(keys) => scope.dot.field(&keys),
            Operand::Var("", keys) => scope.root.field(&keys),
            Operand::Var(name, keys) => match scope.vars.get(&format!("${name}")) {
                Some(v) => v.field(&keys),
                None => Val::Unknown(format!("the variable `${name}`")),
            },
        }
    }

    /// Every value an operand may be: each a parenthesised pipeline may
    /// render (`(ternary .Values.a .Values.b c).url`: both), with the field
    /// chain after it; else the one [`Chart::operand`].
    fn operands(&self, w: &str, scope: &Scope, depth: usize) -> Vec<Val> {
        let (group, keys) = match gt::operand(w) {
            Operand::Group(g, k) => (Some(g), k),
            Operand::Unclosed => (None, Vec::new()),
            _ => return vec![self.operand(w, scope, depth)],
        };
        if depth > MAX_NESTING {
            return vec![Val::Unknown("expressions nested too deep".into())];
        }
        // `(expr)` or `(expr).field.chain`.
        let Some(group) = group else {
            return vec![Val::Unknown(format!("`{w}`"))];
        };
        let mut out: Vec<Val> = Vec::new();
        for v in self.eval(&words(group), scope, depth + 1) {
            let v = v.field(&keys);
            if !out.contains(&v) {
                out.push(v);
            }
        }
        if out.is_empty() {
            out.push(Val::Other);
        }
        out
    }

    /// The string an action (`expr`, its words) renders when that is a
    /// literal: a Go string literal (``{{ `{{.url}}` }}``), `printf` of
    /// string literals, or `include`/`template` of a named template whose
    /// body is text and such literals only (trimmed, as a scalar is); each
    /// piped through the functions that keep a string (`quote`, `squote`,
    /// `trim`, `toString`). `None` otherwise.
    fn literal(&self, expr: &str, depth: usize) -> Option<String> {
        let w = words(expr);
        let mut cmds = gt::commands(&w);
        let mut out = self.literal_command(cmds.next()?, depth)?;
        for c in cmds {
            out = gt::string_function(c, out)?;
        }
        Some(out)
    }

    /// One command of [`Chart::literal`]'s pipeline.
    fn literal_command(&self, w: &[String], depth: usize) -> Option<String> {
        match w {
            [one] if one.starts_with(['`', '"']) => go_string(one),
            [f, format, args @ ..] if f == "printf" => {
                let args: Option<Vec<String>> = args.iter().map(|a| go_string(a)).collect();
                gt::sprintf(&go_string(format)?, &args?)
            }
            [f, name, arg @ ..]
                if arg.len() <= 1 && matches!(f.as_str(), "include" | "template") =>
            {
                if !is_literal(name) {
                    return None;
                }
                let d = self.defines.get(unquote(name))?;
                if depth >= MAX_CALLS {
                    return None;
                }
                let body = &self.texts[d.file].1[d.body.clone()];
                let mut out = String::new();
                let mut at = 0;
                for a in actions(body) {
                    out.push_str(&body[at..a.start]);
                    if !is_comment(&a.expr) {
                        out.push_str(&self.literal(&a.expr, depth + 1)?);
                    }
                    at = a.end;
                }
                out.push_str(&body[at..]);
                Some(out.trim().to_string())
            }
            _ => None,
        }
    }

    /// A named template used inside a scalar: what its output actions render.
    fn call(&self, name: &str, arg: Val, depth: usize) -> Vec<Val> {
        let Some(d) = self.defines.get(name) else {
            return vec![Val::Unknown(format!(
                "the named template {name:?} is not in the chart"
            ))];
        };
        if depth >= MAX_CALLS {
            return vec![Val::Unknown(format!("{name:?} nests too deep"))];
        }
        let body = &self.texts[d.file].1[d.body.clone()];
        let acts = actions(body);
        let blocks = ["with", "range", "define", "block"];
        if let Some(h) = acts
            .iter()
            .map(|a| head(&a.expr))
            .find(|h| blocks.contains(h))
        {
            return vec![Val::Unknown(format!(
                "the named template {name:?} uses `{h}`"
            ))];
        }
        let mut out: Vec<Val> = self
            .evaluate(&acts, arg, depth + 1)
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        if out.is_empty() {
            out.push(Val::Other);
        }
        out
    }

    /// The file with each include that stands alone on its line (a block
    /// of YAML, `{{- include "x" . | nindent 8 }}`) replaced by the named
    /// template's body, re-indented, between a scope marker and an `end`.
    fn expand(&self, file: usize) -> Expanded {
        let mut ex = Expanded {
            text: String::new(),
            origin: Vec::new(),
        };
        self.expand_into(file, 0..self.texts[file].1.len(), None, &mut ex, 0);
        ex
    }

    /// Appends `range` of template `file` to `ex`, re-indented to
    /// `indent` when it is a named template's body inlined as a block;
    /// `depth` counts the includes being expanded.
    fn expand_into(
        &self,
        file: usize,
        range: std::ops::Range<usize>,
        indent: Option<usize>,
        ex: &mut Expanded,
        depth: usize,
    ) {
        let text = &self.texts[file].1;
        let part = &text[range.clone()];
        let base_line = text[..range.start].matches('\n').count() + 1;
        let lines: Vec<&str> = part.split('\n').collect();
        // Re-indentation of a block body: strip its least indentation.
        let strip = indent.map(|_| {
            lines
                .iter()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("{{"))
                .map(|l| indentation(l))
                .min()
                .unwrap_or(0)
        });
        let mut defining = 0usize;
        for (n, line) in lines.iter().enumerate() {
            let origin = (file, base_line + n);
            let acts = actions(line);
            // Inside a `define` of this file: blank lines (it renders nothing here).
            let mut blank = defining > 0;
            for a in &acts {
                if head(&a.expr) == "define" {
                    defining += 1;
                    blank = true;
                } else if defining > 0 && opens(&a.expr) {
                    defining += 1;
                } else if defining > 0 && head(&a.expr) == "end" {
                    defining -= 1;
                    blank = true;
                }
            }
            if blank {
                ex.text.push('\n');
                ex.origin.push(origin);
                continue;
            }
            let alone = acts.len() == 1
                && line.trim().len() == acts[0].end - acts[0].start
                && matches!(head(&acts[0].expr), "include" | "template");
            if alone && depth < MAX_CALLS {
                let w = words(&acts[0].expr);
                let name = w.get(1).map(|n| unquote(n).to_string());
                let pipe = w.iter().position(|x| x == "|");
                let from = 2.min(w.len());
                let arg: Vec<String> = w[from..pipe.unwrap_or(w.len()).max(from)].to_vec();
                let ind = pipe.and_then(|p| match w.get(p + 1).map(String::as_str) {
                    Some("nindent" | "indent") => w.get(p + 2).and_then(|n| n.parse().ok()),
                    _ => None,
                });
                let ind = ind.unwrap_or(indentation(line));
                if let Some(d) = name.as_ref().and_then(|n| self.defines.get(n)) {
                    ex.text
                        .push_str(&format!("{{{{ {CALL} {} }}}}\n", arg.join(" ")));
                    ex.origin.push(origin);
                    self.expand_into(d.file, d.body.clone(), Some(ind), ex, depth + 1);
                    ex.text.push_str("{{ end }}\n");
                    ex.origin.push(origin);
                    continue;
                }
            }
            let line = match (indent, strip) {
                (Some(ind), Some(s)) if !line.trim().is_empty() => {
                    let cut = indentation(line).min(s);
                    format!("{}{}", " ".repeat(ind), &line[cut..])
                }
                _ => line.to_string(),
            };
            ex.text.push_str(&line);
            if n + 1 < lines.len() || indent.is_some() {
                ex.text.push('\n');
                ex.origin.push(origin);
            } else {
                ex.origin.push(origin);
            }
        }
    }
}

/// The marker that opens a named template's scope in an expanded text.
const CALL: &str = "__rebind_call";

fn all_other(v: &[Val]) -> bool {
    v.iter().all(|v| *v == Val::Other)
}

/// An action alone on the first line of a block scalar (`server: >-`, then
/// `{{ .Values.hub.url }}`) is the scalar's text, not a block of YAML: it is
/// masked as text (a line of blanks there would leave the block scalar
/// empty, and a YAML parser refuses its too-deep blank line).
fn block_scalar_heads(text: &str, acts: &[Action], masked: &mut String) {
    let mut bytes = std::mem::take(masked).into_bytes();
    for a in acts {
        let line_start = text[..a.start].rfind('\n').map_or(0, |p| p + 1);
        if !text[line_start..a.start].trim().is_empty() || line_start == 0 {
            continue;
        }
        let prev = &text[..line_start - 1];
        let prev = &prev[prev.rfind('\n').map_or(0, |p| p + 1)..];
        let head = prev.trim_end().rsplit([' ', '\t']).next().unwrap_or("");
        let block = head.starts_with(['|', '>'])
            && head[1..]
                .chars()
                .all(|c| c == '-' || c == '+' || c.is_ascii_digit())
            && prev.trim_end().len() > head.len();
        if block {
            for b in &mut bytes[a.start..a.end] {
                if *b != b'\n' && *b != b'\r' {
                    *b = b'x';
                }
            }
        }
    }
    *masked = String::from_utf8(bytes).unwrap_or_default();
}

/// Where a value scalar starting at `off` of the masked text `masked`
/// (`v`, its value as parsed) lies: the bytes of its value (quotes and a
/// block scalar's header left out) and the end of its text. A plain scalar
/// on one line is its value's length (in a flow mapping it ends before the
/// `,`); a quoted one ends at its closing quote; a block scalar (`|`, `>`)
/// is the lines below its header indented more than the header's line
/// (read in the original `text`: an action alone on its line is masked
/// with blanks).
fn extent(text: &str, masked: &str, v: &str, off: usize) -> (std::ops::Range<usize>, usize) {
    let b = masked.as_bytes();
    let line_end = |from: usize| {
        masked[from..]
            .find(['\n', '\r'])
            .map_or(masked.len(), |p| from + p)
    };
    match b.get(off) {
        Some(b'|' | b'>') => {
            let line_start = masked[..off].rfind('\n').map_or(0, |p| p + 1);
            let own = indentation(&masked[line_start..]);
            let header_end = line_end(off);
            let mut end = header_end;
            let mut at = header_end;
            while at < masked.len() {
                let start = (at
                    + if masked[at..].starts_with("\r\n") {
                        2
                    } else {
                        1
                    })
                .min(masked.len());
                let stop = line_end(start);
                let content = text.get(start..stop).unwrap_or("");
                if !content.trim().is_empty() {
                    if indentation(content) <= own {
                        break;
                    }
                    end = stop;
                }
                at = stop;
            }
            (header_end..end, end)
        }
        Some(&q @ (b'"' | b'\'')) => {
            let mut i = off + 1;
            while i < b.len() {
                match b[i] {
                    b'\\' if q == b'"' => i += 1,
                    b'\'' if q == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 1,
                    c if c == q => return (off + 1..i, i + 1),
                    _ => {}
                }
                i += 1;
            }
            let end = line_end(off);
            (off..end, end)
        }
        _ if !v.is_empty() && masked.get(off..off + v.len()) == Some(v) => {
            (off..off + v.len(), off + v.len())
        }
        _ => {
            // A plain scalar over several lines: to its line's end, a
            // comment left out.
            let end = line_end(off);
            let text = &masked[off..end];
            let cut = text.find(" #").map_or(end, |p| off + p);
            (off..cut, end)
        }
    }
}

fn keys_of(segs: &[Seg]) -> Vec<&str> {
    segs.iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
        .collect()
}

/// Leading spaces (YAML indents with spaces only).
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The table's cluster positions (whole values) of a document of `kind`
/// that lie below `at`, each with the values steps that lead there from
/// `at` (`None` when the table does not name them: any key). A position
/// anywhere below (`Deep`) says nothing about this block and is left out;
/// a list-generator element key is the one the template's
/// `destination.server` (`template_server`) uses, as the table decides.
fn positions_under(
    kind: &str,
    at: &[Seg],
    template_server: Option<&str>,
) -> Vec<(Position, Option<Vec<Step>>)> {
    use positions::P;
    let mut out: Vec<(Position, Option<Vec<Step>>)> = Vec::new();
    for row in positions::TABLE {
        let ok = match row.kinds {
            positions::Kinds::Is(k) => k == kind,
            positions::Kinds::Any => true,
            positions::Kinds::None => false,
        };
        if !ok || !whole_value(row.position) {
            continue;
        }
        for rest in rest_after(row.path, at) {
            if rest.is_empty() || rest.iter().any(|p| matches!(p, P::Deep)) {
                continue;
            }
            let steps: Option<Vec<Step>> = rest
                .iter()
                .enumerate()
                .map(|(n, p)| match p {
                    P::K(k) => Some(Step::Key(k.to_string())),
                    P::I => Some(Step::Each),
                    P::AnyKey if n + 1 == rest.len() && row.position == Position::ListElement => {
                        template_server.and_then(element_key).map(Step::Key)
                    }
                    _ => None,
                })
                .collect();
            if !out.iter().any(|(p, r)| *p == row.position && *r == steps) {
                out.push((row.position, steps));
            }
        }
    }
    out
}

/// The generator parameter a template's `destination.server` uses: a
/// field (`.url`, `.values.url`), a whole fasttemplate action (`{{url}}`)
/// or `index . "url"`, as [`positions::template_uses`] confirms.
fn element_key(template: &str) -> Option<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut candidates = Vec::new();
    // Fields: `.url`, `.values.url`; not the dots of a quoted URL.
    let mut quoted = false;
    let b = template.as_bytes();
    for (i, c) in template.char_indices() {
        if c == '"' {
            quoted = !quoted;
        }
        let starts = c == '.' && !quoted && (i == 0 || !ident(b[i - 1] as char));
        if !starts {
            continue;
        }
        let chain: String = template[i + 1..]
            .chars()
            .take_while(|c| ident(*c) || *c == '.')
            .collect();
        let mut parts = chain.split('.');
        let w = match parts.next() {
            Some("values") => parts.next().unwrap_or(""),
            Some(w) => w,
            None => "",
        };
        candidates.push(w.to_string());
    }
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let inner = after[..close].rsplit("{{").next().unwrap_or("");
        let inner = inner.trim().trim_matches('-').trim();
        if !inner.is_empty() && inner.chars().all(ident) {
            candidates.push(inner.to_string());
        }
        if let Some(p) = inner.find("index . ") {
            candidates
                .push(unquote(inner[p + 8..].split_whitespace().next().unwrap_or("")).to_string());
        }
        rest = &after[close + 2..];
    }
    candidates
        .into_iter()
        .find(|w| !w.is_empty() && positions::template_uses(template, w))
}

/// What is left of `pattern` once `path` is matched as its beginning.
fn rest_after(pattern: &[positions::P], path: &[Seg]) -> Vec<Vec<positions::P>> {
    use positions::P;
    let Some(first) = path.first() else {
        return vec![pattern.to_vec()];
    };
    match (pattern.first(), first) {
        (None, _) => Vec::new(),
        (Some(P::Deep), _) => {
            let mut v = rest_after(&pattern[1..], path);
            v.extend(rest_after(pattern, &path[1..]));
            v
        }
        (Some(P::K(k)), Seg::Key(s)) if k == s => rest_after(&pattern[1..], &path[1..]),
        (Some(P::I), Seg::Index(_)) | (Some(P::AnyKey), Seg::Key(_)) => {
            rest_after(&pattern[1..], &path[1..])
        }
        _ => Vec::new(),
    }
}

/// The kind of an exported list of resources (its `items` are read by
/// their own kinds, as the locator reads them).
const LIST_KIND: &str = "List";

/// One document of a template.
#[derive(Default)]
struct TDoc {
    kind: Option<String>,
    /// Values paths a block action renders at a cluster position here.
    block_flows: Vec<ValuesPath>,
    name: Option<String>,
    dest_name: Option<String>,
    /// `destination.server` as written.
    server: Option<String>,
    scalars: Vec<TScalar>,
    /// The items of a `kind: List`, each read by its own kind (only their
    /// facts and block flows: the scalars stay with the document).
    items: BTreeMap<usize, TDoc>,
}

impl TDoc {
    fn is_empty(&self) -> bool {
        self.kind.is_none() && self.scalars.is_empty()
    }

    /// Keeps what the value scalar `value` at `path` says of the document:
    /// its kind, name or destination. `templated`: the scalar's text when
    /// it holds actions (a templated name is not a name).
    fn learn(&mut self, path: &[Seg], value: &str, templated: Option<&str>) {
        if let [Seg::Key(k), Seg::Index(i), rest @ ..] = path {
            if k == positions::LIST_ITEMS && !rest.is_empty() {
                self.items
                    .entry(*i)
                    .or_default()
                    .learn(rest, value, templated);
            }
        }
        match positions::fact(&keys_of(path)) {
            Some(positions::Fact::Kind) if path.len() == 1 => self.kind = Some(value.to_string()),
            Some(positions::Fact::Name) => {
                self.name = Some(match templated {
                    Some(_) => "{{template}}".into(),
                    None => value.to_string(),
                })
            }
            Some(positions::Fact::DestinationServer) => {
                self.server = Some(templated.unwrap_or(value).to_string())
            }
            Some(positions::Fact::DestinationName) => self.dest_name = Some(value.to_string()),
            _ => {}
        }
    }

    /// A scalar's item (for a path under `items[n]` of a `kind: List`:
    /// `n`, the item and the path inside it), else the document and path.
    fn item_of(&self, path: &YamlPath) -> (Option<usize>, &TDoc, YamlPath) {
        if let (Some(LIST_KIND), [Seg::Key(k), Seg::Index(i), rest @ ..]) =
            (self.kind.as_deref(), path.0.as_slice())
        {
            if let Some(item) = self.items.get(i).filter(|_| k == positions::LIST_ITEMS) {
                return (Some(*i), item, YamlPath(rest.to_vec()));
            }
        }
        (None, self, path.clone())
    }

    /// [`TDoc::item_of`] for a key's path, to record a block's flows.
    fn item_at_mut<'s, 'p>(&'s mut self, at: &'p [Seg]) -> (&'s mut TDoc, &'p [Seg]) {
        if let (Some(LIST_KIND), [Seg::Key(k), Seg::Index(i), rest @ ..]) =
            (self.kind.as_deref(), at)
        {
            if k == positions::LIST_ITEMS && self.items.contains_key(i) {
                return (self.items.get_mut(i).expect("checked"), rest);
            }
        }
        (self, at)
    }

    /// The destination of an Application or ApplicationSet (of `kind`)
    /// that names one, for the tier table.
    fn destination(&self, kind: &str) -> Option<Destination> {
        let named = self.server.is_some() || self.dest_name.is_some();
        if !matches!(kind, "Application" | "ApplicationSet") || !named {
            return None;
        }
        Some(Destination {
            resource: match &self.name {
                Some(n) => format!("{kind}/{n}"),
                None => kind.to_string(),
            },
            server: self.server.clone(),
            name: self.dest_name.clone(),
            from: None,
        })
    }
}

/// A scalar holding template actions.
struct TScalar {
    path: YamlPath,
    actions: Vec<usize>,
    /// The scalar is exactly one action (quotes aside).
    whole: bool,
    off: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(rel: &str) -> Entry {
        Entry {
            path: PathBuf::from(rel),
            rel: rel.to_string(),
            role: crate::discover::walk::Role::Yaml,
        }
    }

    /// Reads `files[0]` of a chart made of `files` (name, text).
    fn read(files: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
        let entries: Vec<Entry> = files.iter().map(|(n, _)| entry(n)).collect();
        let texts: Vec<(&Entry, String)> = entries
            .iter()
            .zip(files)
            .map(|(e, (_, t))| (e, t.to_string()))
            .collect();
        let mut defines = HashMap::new();
        for (i, (_, t)) in texts.iter().enumerate() {
            collect_defines(t, i, &mut defines);
        }
        let values = files
            .iter()
            .find(|(n, _)| *n == "values.yaml")
            .and_then(|(_, t)| crate::syntax::yaml::read_yaml_or_json(t).ok())
            .unwrap_or_default();
        let chart = Chart {
            texts: &texts,
            defines: &defines,
            values: values.first(),
        };
        let r = chart.read(0);
        let mut flows: Vec<String> = r
            .flows
            .iter()
            .map(|f| format!("{} {}", f.path, f.position.as_str()))
            .collect();
        flows.sort();
        flows.dedup();
        let notes = r.notes.iter().map(|n| n.to_string()).collect();
        (flows, notes)
    }

    const PROJECT_HEAD: &str =
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: p\nspec:\n  destinations:\n";

    /// Each way a template reaches a values path, alone in an AppProject's
    /// destinations, then all in one template (each `end` gives the outer
    /// scope back).
    #[test]
    fn direct_root_range_with_and_variables() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "a pipe that keeps the value",
                "    - server: {{ .Values.hub.server | quote }}\n",
                &["hub.server"],
            ),
            (
                "`$` is the root",
                "    - server: '{{ $.Values.dr.server }}'\n",
                &["dr.server"],
            ),
            (
                "`range` moves the dot",
                "  {{- range .Values.environments }}\n    - server: {{ .server }}\n  {{- end }}\n",
                &["environments[].server"],
            ),
            (
                "`range` binds the element",
                "  {{- range $i, $e := .Values.regions }}\n    - server: {{ $e.api.url | default \"https://kubernetes.default.svc\" }}\n  {{- end }}\n",
                &["regions[].api.url"],
            ),
            (
                "`with` moves the dot",
                "  {{- with .Values.edge }}\n    - server: {{ required \"edge.url\" .url }}\n  {{- end }}\n",
                &["edge.url"],
            ),
            (
                "a variable",
                "  {{- $ops := .Values.ops }}\n    - server: {{ $ops.server }}\n",
                &["ops.server"],
            ),
            (
                "`index` with literal keys",
                "    - server: {{ index .Values \"mgmt\" \"server\" }}\n",
                &["mgmt.server"],
            ),
            (
                "`else` of a `with` has the outer dot",
                "  {{- with .Values.spoke }}\n    - server: {{ .server }}\n  {{- else }}\n    - server: {{ .Values.fallback.server }}\n  {{- end }}\n",
                &["fallback.server", "spoke.server"],
            ),
            (
                "`range` over a list of URLs",
                "  {{- range .Values.urls }}\n    - server: {{ . }}\n  {{- end }}\n",
                &["urls[]"],
            ),
        ];
        let flows_of = |body: &str| {
            let (flows, notes) =
                read(&[("templates/project.yaml", &format!("{PROJECT_HEAD}{body}"))]);
            assert!(notes.is_empty(), "{body}: {notes:?}");
            flows
        };
        let project = |paths: &mut dyn Iterator<Item = &&str>| {
            let mut v: Vec<String> = paths.map(|p| format!("{p} project destination")).collect();
            v.sort();
            v
        };
        for (what, body, want) in cases {
            assert_eq!(flows_of(body), project(&mut want.iter()), "{what}");
        }
        let all: String = cases.iter().map(|(_, body, _)| *body).collect();
        let want = project(&mut cases.iter().flat_map(|(.., want)| want.iter()));
        assert_eq!(flows_of(&all), want);
    }

    #[test]
    fn named_templates_inline_and_as_blocks() {
        let helpers = "{{- define \"c.server\" -}}\n{{ .server | default \"https://kubernetes.default.svc\" }}\n{{- end }}\n\
            {{- define \"c.elements\" -}}\n{{- range .Values.clusters }}\n- cluster: {{ .name }}\n  api: {{ .api | quote }}\n{{- end }}\n{{- end }}\n";
        let t = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: a\nspec:\n  generators:\n    - list:\n        elements:\n          {{- include \"c.elements\" . | nindent 10 }}\n  template:\n    spec:\n      destination:\n        server: '{{`{{api}}`}}'\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: b\nspec:\n  destination:\n    server: {{ include \"c.server\" .Values.hub }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: c\nspec:\n  destination:\n    server: {{ template \"c.server\" .Values.spoke }}\n";
        let (flows, notes) = read(&[
            ("templates/appset.yaml", t),
            ("templates/_helpers.tpl", helpers),
        ]);
        assert_eq!(
            flows,
            [
                "clusters[].api list-generator element",
                "hub.server destination server",
                "spoke.server destination server",
            ],
            "{notes:?}"
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// A list generator built from `.Values.clusters` whose template's
    /// `destination.server` is a named template rendering the generator
    /// placeholder (``{{ `{{.url}}` }}``): the elements' `url` is what the
    /// placeholder reads, so `clusters[].url` is a position; `name` is not,
    /// nor is `url` when the named template renders a literal URL.
    #[test]
    fn a_named_template_rendering_a_generator_placeholder_is_read_as_it() {
        let set = |server: &str| {
            format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: a\nspec:\n  generators:\n    - list:\n        elements:\n        {{{{- range .Values.clusters }}}}\n          - name: {{{{ .name }}}}\n            url: {{{{ .url | quote }}}}\n        {{{{- end }}}}\n  template:\n    spec:\n      destination:\n        server: '{server}'\n")
        };
        let helpers = "{{- define \"a.server\" -}}\n{{ `{{.url}}` }}\n{{- end }}\n{{- define \"a.local\" -}}\n{{ \"https://kubernetes.default.svc\" }}\n{{- end }}\n{{- define \"a.nested\" -}}\n{{- /* the placeholder */ -}}\n{{ include \"a.server\" . }}\n{{- end }}\n";
        for (server, want) in [
            (
                "{{ include \"a.server\" . }}",
                &["clusters[].url list-generator element"][..],
            ),
            (
                "{{ template \"a.nested\" . }}",
                &["clusters[].url list-generator element"],
            ),
            ("{{`{{.url}}`}}", &["clusters[].url list-generator element"]),
            ("{{ include \"a.local\" . }}", &[]),
        ] {
            let (flows, notes) = read(&[
                ("templates/appset.yaml", &set(server)),
                ("templates/_helpers.tpl", helpers),
            ]);
            assert_eq!(flows, want, "{server}: {notes:?}");
            assert!(notes.is_empty(), "{server}: {notes:?}");
        }
    }

    /// Sprig's `dict` and `list` build values the follower reads through
    /// (a named template's `.cluster.url` of `(dict "cluster" .Values.hub)`,
    /// `first`/`index` of a `list`), and Helm's `tpl` renders a string of
    /// the chart's `values.yaml` with its context; what cannot be read that
    /// way is noted, with its line.
    /// Helm's `tpl` of a string literal written in the template: the one
    /// template lexer reads the action whole however many `}}` its string
    /// holds (Go's `text/template/parse/lex.go`: a `}}` inside a quoted or
    /// raw string does not close; the Go spec's "String literals" give the
    /// escapes decoded), and the literal's one action is followed. A literal
    /// of several parts, one with an escape by code, or one whose `{{` is no
    /// action is named with its line; one without `{{` renders itself.
    #[test]
    fn tpl_of_a_string_literal_in_the_template_is_followed() {
        let lines = [
            r#"{{ tpl "{{ .Values.lit.url }}" . }}"#,
            "{{ tpl `{{ .Values.raw.url }}` . }}",
            r#"{{ tpl "{{ .Values.esc.url | default \"}}\" }}" . }}"#,
            r#"{{- tpl "{{- .Values.trim.url -}}" $ -}}"#,
            // Not followed, each named:
            r#"{{ tpl "{{ .Values.a.url }}:{{ .Values.b.url }}" . }}"#,
            r#"{{ tpl "\x7b{ .Values.hex.url }}" . }}"#,
            r#"{{ tpl "{{ .Values.c.url: }}" . }}"#,
            // No action: renders itself, nothing to follow.
            r#"{{ tpl "}}" . }}"#,
        ];
        let mut t = PROJECT_HEAD.to_string();
        for l in lines {
            t.push_str(&format!("    - server: {l}\n"));
        }
        let (flows, notes) = read(&[("templates/p.yaml", &t)]);
        let want: Vec<String> = ["esc.url", "lit.url", "raw.url", "trim.url"]
            .iter()
            .map(|p| format!("{p} project destination"))
            .collect();
        assert_eq!(flows, want, "{notes:#?}");
        let at: Vec<(&str, &str)> = notes
            .iter()
            .map(|n| n.split_once(": templated, not followed: ").unwrap())
            .collect();
        let expect = [
            ("templates/p.yaml:11", "several parts"),
            ("templates/p.yaml:12", "no plain Go string"),
            ("templates/p.yaml:13", "`{{` that is no action"),
        ];
        assert_eq!(at.len(), expect.len(), "{notes:#?}");
        for ((place, why), (want_place, want_why)) in at.iter().zip(expect) {
            assert_eq!(*place, want_place, "{notes:#?}");
            assert!(why.contains(want_why), "{why} lacks {want_why}");
        }
    }

    #[test]
    fn dict_list_and_tpl_are_evaluated() {
        let helpers = "{{- define \"c.server\" -}}\n{{ .cluster.url }}\n{{- end }}\n{{- define \"c.root\" -}}\n{{ .ctx.Values.dr.url }}\n{{- end }}\n";
        let lines = [
            "{{ include \"c.server\" (dict \"cluster\" .Values.hub \"root\" $) }}",
            "{{ include \"c.root\" (dict \"ctx\" $) }}",
            "{{ first (list .Values.a.url \"https://kubernetes.default.svc\") }}",
            "{{ index (list .Values.b.url) 0 }}",
            "{{ tpl .Values.tmpl . }}",
            // Not followed, each named:
            "{{ include \"c.server\" (dict .Values.k .Values.hub) }}",
            "{{ tpl .Values.multi . }}",
            "{{ tpl .Values.absent $ }}",
            "{{ list .Values.whole }}",
        ];
        let mut t = PROJECT_HEAD.to_string();
        for l in lines {
            t.push_str(&format!("    - server: {l}\n"));
        }
        t.push_str(
            "  {{- range (list .Values.c .Values.c) }}\n    - server: {{ .url }}\n  {{- end }}\n",
        );
        t.push_str(
            "  {{- range (list .Values.d .Values.e) }}\n    - server: {{ .url }}\n  {{- end }}\n",
        );
        let values = "tmpl: '{{ .Values.hub2.url }}'\nmulti: 'https://{{ .Values.host }}:6443'\n";
        let (flows, notes) = read(&[
            ("templates/p.yaml", &t),
            ("templates/_helpers.tpl", helpers),
            ("values.yaml", values),
        ]);
        let want: Vec<String> = [
            "a.url", "absent", "b.url", "c.url", "dr.url", "hub.url", "hub2.url", "multi", "tmpl",
        ]
        .iter()
        .map(|p| format!("{p} project destination"))
        .collect();
        assert_eq!(flows, want, "{notes:#?}");
        let at: Vec<(&str, &str)> = notes
            .iter()
            .map(|n| {
                let (place, why) = n.split_once(": templated, not followed: ").unwrap();
                (place, why)
            })
            .collect();
        let expect = [
            ("templates/p.yaml:12", "`dict` with a computed key"),
            ("templates/p.yaml:13", "several parts"),
            ("templates/p.yaml:14", "holds no string there"),
            ("templates/p.yaml:15", "a whole `list`"),
            (
                "templates/p.yaml:20",
                "`range` over a `list` of several values",
            ),
        ];
        assert_eq!(at.len(), expect.len(), "{notes:#?}");
        for ((place, why), (want_place, want_why)) in at.iter().zip(expect) {
            assert_eq!(*place, want_place, "{notes:#?}");
            assert!(why.contains(want_why), "{why} lacks {want_why}");
        }
    }

    #[test]
    fn blocks_follow_the_table_below_them() {
        let t = format!(
            "{PROJECT_HEAD}    {{{{- toYaml .Values.destinations | nindent 4 }}}}\n---\n\
             apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: a\nspec:\n  generators:\n    - list:\n        elements:\n          {{{{- toYaml .Values.fleet | nindent 10 }}}}\n  template:\n    spec:\n      destination:\n        server: '{{{{`{{{{ default \"https://kubernetes.default.svc\" .endpoint }}}}`}}}}'\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  {{{{- toYaml .Values.settings | nindent 2 }}}}\n"
        );
        let (flows, notes) = read(&[("templates/t.yaml", &t)]);
        assert_eq!(
            flows,
            [
                "destinations[].server project destination",
                "fleet[].endpoint list-generator element",
            ],
            "{notes:?}"
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// What cannot be followed is named with its line, never guessed.
    #[test]
    fn what_is_not_followed_is_noted() {
        let t = format!(
            "{PROJECT_HEAD}    - server: {{{{ tpl .Values.serverTemplate . }}}}\n\
             \x20   - server: {{{{ index .Values.byEnv .Values.env }}}}\n\
             \x20   - server: https://{{{{ .Values.host }}}}:6443\n\
             \x20   - server: {{{{ include \"missing\" . }}}}\n\
             \x20 {{{{- range .Values.list }}}}\n\
             \x20   - server: {{{{ .Values.hub }}}}\n\
             \x20 {{{{- end }}}}\n\
             \x20   - server: {{{{ printf \"https://%s\" .Values.host }}}}\n\
             \x20   - server: {{{{ $undefined.url }}}}\n"
        );
        let (flows, notes) = read(&[("templates/p.yaml", &t)]);
        // A string `tpl` renders may be the server itself.
        assert_eq!(flows, ["serverTemplate project destination"]);
        let lines: Vec<&str> = notes
            .iter()
            .map(|n| n.split(": templated").next().unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                "templates/p.yaml:7",
                "templates/p.yaml:8",
                "templates/p.yaml:9",
                "templates/p.yaml:10",
                "templates/p.yaml:12",
                "templates/p.yaml:14",
                "templates/p.yaml:15",
            ],
            "{notes:#?}"
        );
        for (n, why) in notes.iter().zip([
            "`tpl`",
            "`index` with a computed key",
            "several parts",
            "\"missing\" is not in the chart",
            "`.Values` where the dot",
            "`printf`",
            "`$undefined`",
        ]) {
            assert!(n.contains(why), "{n} lacks {why}");
        }
    }

    /// The value of a complex key (`? [x]`) or of an alias used as a key is
    /// at its own path, never at the key read before it: the locator's
    /// paths (`?`, `*`), so both readers agree on what is a position.
    #[test]
    fn a_value_after_a_complex_or_alias_key_is_not_the_previous_keys() {
        let t = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {{ .Values.hub.server }}\n    ? [x]\n    : {{ .Values.complex }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: &k b\nspec:\n  destination:\n    server: {{ .Values.spoke.server }}\n    *k : {{ .Values.aliased }}\n";
        let (flows, notes) = read(&[("templates/apps.yaml", t)]);
        assert_eq!(
            flows,
            [
                "hub.server destination server",
                "spoke.server destination server"
            ],
            "{notes:?}"
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// A value that is not at a cluster position is no position, however
    /// it is templated.
    #[test]
    fn only_cluster_positions_count() {
        let t = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  server: {{ .Values.docs.server }}\n  url: {{ tpl .Values.x . }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  source:\n    repoURL: {{ .Values.repo.url }}\n";
        let (flows, notes) = read(&[("templates/c.yaml", t)]);
        assert!(flows.is_empty() && notes.is_empty(), "{flows:?} {notes:?}");
    }

    /// Odd templates are read without a panic: unclosed or stray actions,
    /// multi-byte text inside actions across lines, deep nesting, and every
    /// case of the YAML test suite with actions put in.
    #[test]
    fn odd_templates_never_panic() {
        let deep = format!(
            "kind: AppProject\nspec:\n  destinations:\n    - server: {{{{ {}.Values.x{} }}}}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        );
        let odd = [
            "{{ end }}\n{{ end }}\nkind: Application\n",
            "kind: Application\nspec:\n  destination:\n    server: {{ include | x }}\n{{ include | x }}\n  {{ template }}\n",
            "kind: Application\nspec:\n  destination:\n    server: {{ \"한\n국어\" }}\n한: {{ \"\n語\" }}\n",
            "kind: Application\nspec:\n  destination:\n    server: {{ .Values.x\n",
            "{{- include \"self\" . | nindent 2 }}\n{{- define \"self\" }}\n{{- include \"self\" . | nindent 2 }}\n{{- end }}\n",
            "{{- range $i, := .Values.x }}\n{{ $ }}{{ $. }}{{ (. }}{{ ) }}{{ index }}{{ default }}\n",
            &deep,
        ];
        for t in odd {
            let _ = read(&[("templates/odd.yaml", t)]);
        }
        let block: String = (0..20_000)
            .map(|i| format!("{}- \n", " ".repeat(i % 2)))
            .collect();
        let nested = [
            format!(
                "kind: AppProject\nspec:\n  destinations: {}{{{{ .Values.x }}}}{}\n",
                "[".repeat(20_000),
                "]".repeat(20_000)
            ),
            format!(
                "kind: AppProject\nspec:\n  destinations:\n{}",
                "  - ".repeat(20_000) + "{{ .Values.x }}\n"
            ),
            format!("kind: Application\n{block}"),
        ];
        for t in &nested {
            let _ = read(&[("templates/deep.yaml", t)]);
        }
        // Applications naming value files are loaded only when they nest
        // no deeper than rebind reads.
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("deep.yaml");
        std::fs::write(
            &deep,
            format!("kind: Application\nspec:\n  source:\n    path: x\n    helm:\n      valueFiles: [v.yaml]\n  x: {}{}\n", "[".repeat(20_000), "]".repeat(20_000)),
        )
        .unwrap();
        let ok = dir.path().join("ok.yaml");
        std::fs::write(
            &ok,
            "kind: Application\nspec:\n  source:\n    path: charts/a\n    helm:\n      valueFiles: [v.yaml, $values/x.yaml]\n",
        )
        .unwrap();
        let entries: Vec<Entry> = [deep, ok]
            .into_iter()
            .map(|path| Entry {
                rel: path.to_string_lossy().into_owned(),
                path,
                role: crate::discover::walk::Role::Yaml,
            })
            .collect();
        assert_eq!(
            value_files(entries.into_iter(), &BTreeSet::new()),
            [(
                "charts/a".to_string(),
                vec!["charts/a/v.yaml".to_string()],
                Vec::new()
            )]
        );
        let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/yaml-test-suite");
        for case in std::fs::read_dir(suite).unwrap() {
            let Ok(text) = std::fs::read_to_string(case.unwrap().path().join("in.yaml")) else {
                continue;
            };
            let templated = text.replacen(':', ": {{ .Values.a.server }}", 1);
            let _ = read(&[
                ("templates/t.yaml", &templated),
                ("templates/_h.tpl", &text),
            ]);
        }
    }

    #[test]
    fn element_keys_as_the_table_reads_them() {
        for (t, k) in [
            ("'{{.url}}'", "url"),
            ("{{`'{{.server}}'`}}", "server"),
            (
                "'{{ default \"https://kubernetes.default.svc\" .endpoint }}'",
                "endpoint",
            ),
            ("'{{kube-api}}'", "kube-api"),
            ("'{{ index . \"api-url\" }}'", "api-url"),
            ("'{{ .values.apiServer }}'", "apiServer"),
        ] {
            assert_eq!(element_key(t).as_deref(), Some(k), "{t}");
        }
        assert_eq!(element_key("https://k8s.example.org"), None);
    }

    #[test]
    fn values_paths_match_indexes_and_map_keys() {
        let p = ValuesPath(vec![
            Step::Key("envs".into()),
            Step::Each,
            Step::Key("server".into()),
        ]);
        let at = |segs: Vec<Seg>| YamlPath(segs);
        assert!(p.matches(&at(vec![
            Seg::Key("envs".into()),
            Seg::Index(3),
            Seg::Key("server".into())
        ])));
        assert!(p.matches(&at(vec![
            Seg::Key("envs".into()),
            Seg::Key("prod".into()),
            Seg::Key("server".into())
        ])));
        assert!(!p.matches(&at(vec![
            Seg::Key("envs".into()),
            Seg::Index(0),
            Seg::Key("url".into())
        ])));
        assert!(!p.matches(&at(vec![Seg::Key("server".into())])));
        assert_eq!(p.to_string(), "envs[].server");
    }
}
