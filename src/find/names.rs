//! Locating an EKS cluster's name in one file: the occurrences at a name
//! position ([`crate::model::names`]: rewritten), the rest (mentions:
//! reported, never rewritten), and the positions that cannot be rewritten
//! in place (errors). Documents are read with the shared reader, and the
//! documents held in strings (a Helm `values: |`, a registration's
//! `config` JSON) are read by the same rules, their offsets mapped back to
//! the file's bytes and checked there. [`ops`] are the changes as the edit
//! engine's operations.

use crate::model::application;
use crate::model::names::{self, NameContext, NamePosition, Scope};
use crate::model::positions::{self, Seg};
use crate::syntax::yaml::{self, LineIndex, Node, Value, YamlPath};
use crate::text::splice::Op;
use std::collections::BTreeMap;
use std::ops::Range;
use yaml_rust2::scanner::TScalarStyle;

/// The old and the new cluster's names (and ARNs, for a `server` written
/// as one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameRebind {
    pub old: String,
    pub new: String,
    pub old_arn: Option<String>,
    pub new_arn: Option<String>,
    /// The clusters' CA data (`certificateAuthority.data`): a
    /// registration's `caData` that is the old one becomes the new one.
    pub old_ca: Option<String>,
    pub new_ca: Option<String>,
    /// The ArgoCD names of the old cluster's registrations (in the
    /// repository, or in a live dump of the hub) that are not the EKS name
    /// and get a new one in the registration added beside them
    /// (`prod-arn` → `prod-blue-arn`): a destination naming one moves.
    pub argocd_moves: Vec<(String, String)>,
    /// Every ArgoCD name the registrations read give (any server), when
    /// they were read: a destination name derived from the old EKS name
    /// that none of them is cannot be told to stay or to move (refused).
    pub argocd_known: Option<Vec<String>>,
    /// ArgoCD names of the old cluster's registrations that get no new name
    /// (neither the EKS name nor derived from it): a destination naming one
    /// would stay on the old cluster (refused).
    pub argocd_kept: Vec<String>,
    /// The old cluster's endpoint URL: a registration's name positions
    /// apply only when it registers this server (or the old ARN).
    pub old_server: Option<String>,
    /// The new cluster's endpoint URL: the name pass reads a file after its
    /// endpoint rewrite, where the old registration already names it.
    pub new_server: Option<String>,
    /// ArgoCD names that registrations of other servers bear, each with
    /// where it is declared: such a name is not the old cluster's.
    pub argocd_foreign: Vec<(String, String)>,
}

/// Whether two registered servers are the same cluster: endpoint URLs
/// compared as the endpoint rules compare them (scheme, case, default port,
/// trailing slash), anything else (an ARN) compared as written.
pub fn same_server(a: &str, b: &str) -> bool {
    let n = |s: &str| {
        let s = s.trim().trim_end_matches('/');
        match crate::text::endpoint::Endpoint::parse("", s) {
            Ok(e) => format!("https://{}", e.key()),
            Err(_) => s.to_string(),
        }
    };
    n(a) == n(b)
}

impl NameRebind {
    /// Whether `server` (a registration's, decoded) is the old cluster's:
    /// its endpoint URL or its ARN.
    pub fn is_old_server(&self, server: &str) -> bool {
        self.old_server
            .as_deref()
            .is_some_and(|o| same_server(o, server))
            || self.old_arn.as_deref() == Some(server.trim())
    }

    /// Whether a registration read after the endpoint rewrite registers
    /// the old cluster (its server already rewritten to the new one) or
    /// the new: the ones whose names this rebind moves.
    pub fn is_rebound_server(&self, server: &str) -> bool {
        self.is_old_server(server)
            || self
                .new_server
                .as_deref()
                .is_some_and(|o| same_server(o, server))
            || self.new_arn.as_deref() == Some(server.trim())
    }
}

/// One name occurrence at a name position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameChange {
    pub line: usize,
    pub column: usize,
    /// The bytes replaced in the file.
    pub range: Range<usize>,
    pub old_text: String,
    pub new_text: String,
    pub position: NamePosition,
    pub yaml_path: String,
    pub resource: Option<String>,
    /// The start of the scalar (or key) of the file that holds it, and the
    /// range of that scalar's decoded value replaced: what the edit
    /// layer's verification expects to read back (see [`ops`]).
    pub scalar: usize,
    pub in_value: Range<usize>,
}

/// A name occurrence that is at no name position: reported, never rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMention {
    pub line: usize,
    pub column: usize,
    /// The line it is on (trimmed, shortened).
    pub context: String,
}

/// A name position that cannot be rewritten in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Everything found of the name in one file.
#[derive(Debug, Default, Clone)]
pub struct NamesFound {
    pub changes: Vec<NameChange>,
    pub mentions: Vec<NameMention>,
    pub errors: Vec<NameError>,
}

/// A source `path` as a repository folder (`./charts/karp/` → `charts/karp`).
fn chart_dir(path: &str) -> String {
    let p = path.trim_start_matches("./").trim_end_matches('/');
    p.to_string()
}

/// A parent chart's dependencies on a chart the table has rows for: the
/// key its values hold each under (the `alias`, else the name) and the
/// chart's name.
pub type Subcharts = Vec<(String, &'static str)>;

/// The charts a file's values may be of: the file's own chart's
/// dependencies (when it is a values file of a chart), and the
/// dependencies of each chart of the repository by its folder (for an
/// Application whose source `path` is that folder).
#[derive(Debug, Default, Clone)]
pub struct ChartValues {
    pub file: Subcharts,
    pub dirs: Vec<(String, Subcharts)>,
}

/// The dependencies of a `Chart.yaml` (apiVersion v2) or a
/// `requirements.yaml` (v1) on the charts the name table has rows for,
/// recognised by the dependency's `name` (the chart's), held under its
/// `alias` when it has one. A text that does not read gives none.
pub fn subcharts(text: &str) -> Subcharts {
    let Ok(docs) = yaml::read_yaml_or_json(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in &docs {
        let Some(Value::Seq(deps)) = d.get(names::CHART_DEPENDENCIES).map(|n| &n.value) else {
            continue;
        };
        for dep in deps {
            let chart = dep
                .str_at(&[names::DEPENDENCY_NAME])
                .and_then(names::table_chart);
            let Some(chart) = chart else { continue };
            let key = dep.str_at(&[names::DEPENDENCY_ALIAS]).unwrap_or(chart);
            out.push((key.to_string(), chart));
        }
    }
    out
}

/// Locates the name `r.old` in `text` (a file that may be YAML or JSON;
/// anything else is read as text, every occurrence a mention).
pub fn locate(text: &str, r: &NameRebind) -> NamesFound {
    locate_with(text, r, &ChartValues::default())
}

/// [`locate`], with the charts the file's values may be of: a values
/// document's (or an Application's Helm values') key for a dependency on
/// a chart of the table holds that chart's values.
pub fn locate_with(text: &str, r: &NameRebind, charts: &ChartValues) -> NamesFound {
    let mut found = NamesFound::default();
    let ca = r.old_ca.as_deref().is_some_and(|c| text.contains(c));
    let kept = r.argocd_kept.iter().any(|k| text.contains(k.as_str()));
    if !text.contains(r.old.as_str()) && !ca && !kept {
        return found;
    }
    let masked = yaml::mask_templates(text);
    let parsed = yaml::read_yaml_or_json(text).or_else(|e| match &masked {
        Some((m, _)) => yaml::read_yaml_or_json(m),
        None => Err(e),
    });
    if let Ok(docs) = parsed {
        let mut l = Locator {
            text,
            r,
            charts,
            index: LineIndex::new(text),
            found: &mut found,
        };
        for d in &docs {
            l.document(d);
        }
    }
    found.mentions = mentions(text, r, &found.changes);
    found
}

/// The occurrences of `old` as a word in a text that is not read as YAML:
/// every one a mention.
pub fn text_mentions(text: &str, r: &NameRebind) -> Vec<NameMention> {
    mentions(text, r, &[])
}

/// The occurrences of `old` as a word (not inside a longer run of letters
/// and digits) that no change covers and that are not inside an
/// occurrence of the new name (already rebound).
fn mentions(text: &str, r: &NameRebind, changes: &[NameChange]) -> Vec<NameMention> {
    let old = r.old.as_str();
    let index = LineIndex::new(text);
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    text.match_indices(old)
        .map(|(i, _)| i)
        .filter(|&i| {
            !alnum(text[..i].chars().next_back()) && !alnum(text[i + old.len()..].chars().next())
        })
        .filter(|&i| !changes.iter().any(|c| c.range.contains(&i)))
        .filter(|&i| !names::within_new(text, &(i..i + old.len()), &r.new))
        .map(|i| {
            let (line, column) = index.position(text, i);
            let start = text[..i].rfind('\n').map_or(0, |p| p + 1);
            let end = text[i..].find('\n').map_or(text.len(), |p| i + p);
            let context: String = text[start..end].trim().chars().take(120).collect();
            NameMention {
                line,
                column,
                context,
            }
        })
        .collect()
}

/// The scalar of the file an embedded document is held in.
#[derive(Clone, Copy)]
struct Outer<'n> {
    node: &'n Node,
    value: &'n str,
}

struct Locator<'a> {
    text: &'a str,
    r: &'a NameRebind,
    charts: &'a ChartValues,
    index: LineIndex,
    found: &'a mut NamesFound,
}

impl<'a> Locator<'a> {
    fn document(&mut self, doc: &Node) {
        let kind = doc.str_at(positions::KIND);
        let resource = resource(doc);
        let res = resource.as_deref();
        let before = (self.found.changes.len(), self.found.errors.len());
        let server = match is_registration(doc) {
            true => Some(registration_server(doc).filter(|_| !self.templated_server(doc))),
            false => None,
        };
        // A registration of another server is never touched.
        if let Some(Some(s)) = &server {
            if !self.r.is_rebound_server(s) {
                return;
            }
        }
        self.document_positions(doc, kind, res);
        // A registration whose server cannot be read: not proven to be the
        // old cluster's, so its name positions are refused, not rewritten.
        if server == Some(None) && self.found.changes.len() > before.0 {
            let (line, column) = self.index.position(self.text, doc.start);
            self.found.changes.truncate(before.0);
            self.found.errors.truncate(before.1);
            self.found.errors.push(NameError {
                line,
                column,
                message: format!(
                    "a cluster registration holding the cluster name `{}` whose server cannot be read (templated or missing): not proven to be the old cluster's registration, so its names are not rewritten; write its server plainly or change it by hand; nothing written",
                    self.r.old
                ),
            });
        }
    }

    /// Whether a registration's server is written with a template action
    /// (Helm's, masked to parse, or an ExternalSecret template's): which
    /// server it registers is not known from the file.
    fn templated_server(&self, doc: &Node) -> bool {
        let Some(reg) = doc
            .str_at(positions::KIND)
            .and_then(|k| positions::REGISTRATIONS.iter().find(|r| r.kind == k))
        else {
            return false;
        };
        reg.servers.iter().filter_map(|(p, _)| doc.at(p)).any(|n| {
            let rest = self.text.get(n.start..).unwrap_or_default();
            rest.split('\n').next().unwrap_or_default().contains("{{")
        })
    }

    fn document_positions(&mut self, doc: &Node, kind: Option<&str>, res: Option<&str>) {
        // The most specific scope first: a change is recorded once, at the
        // first row that finds it.
        if let Some(fields) = registration_fields(doc) {
            self.registration(fields, res);
        }
        if kind.is_some_and(|k| k == "Application" || k == "ApplicationSet") {
            self.helm_sources(doc, res);
        }
        if kind.is_some_and(|k| k == "Application" || k == "ApplicationSet" || k == "AppProject") {
            self.destination_names(doc, kind == Some("ApplicationSet"), res);
        }
        let scope = kind.map_or(Scope::Values, |k| Scope::Kind(kind_name(k)));
        self.visit(doc, scope, &mut Vec::new(), None, None, res);
        if kind.is_none() {
            let charts = self.charts;
            self.subchart_values(doc, &charts.file, None, res);
        }
        // Tag keys and cluster ARNs, anywhere.
        self.visit(doc, Scope::Any, &mut Vec::new(), None, None, res);
        self.encoded(doc);
    }

    /// A registration's `name`, `server` and `config` document.
    fn registration(&mut self, fields: &Node, res: Option<&str>) {
        self.visit(
            fields,
            Scope::Registration,
            &mut Vec::new(),
            None,
            None,
            res,
        );
        let Some(config) = fields.get(names::registration_config_key()) else {
            return;
        };
        if let Some(v) = config.as_str() {
            self.embedded(config, v, Scope::RegistrationConfig, &Subcharts::new(), res);
        }
    }

    /// An Application's Helm values: `valuesObject`, the `values` string
    /// and the `parameters`; for a source whose `path` is a chart of the
    /// repository with dependencies on the table's charts, their keys too.
    fn helm_sources(&mut self, doc: &Node, res: Option<&str>) {
        let mut helms = Vec::new();
        let path_key = names::source_path_key();
        doc.walk(&mut |path, n| {
            let source = |p: &&[positions::P]| positions::matches(&p[..p.len() - 1], &path.0);
            if application::HELM_ROOTS.iter().any(source) {
                if let Some(helm) = n.get(application::HELM) {
                    helms.push((helm.clone(), n.str_at(&[path_key]).map(chart_dir)));
                }
            }
        });
        let charts = self.charts;
        let none = Subcharts::new();
        for (helm, dir) in &helms {
            let subs = dir
                .as_deref()
                .and_then(|d| charts.dirs.iter().find(|(c, _)| c == d))
                .map_or(&none, |(_, s)| s);
            if let Some(obj) = helm.get(application::HELM_VALUES_OBJECT) {
                self.visit(obj, Scope::Values, &mut Vec::new(), None, None, res);
                self.subchart_values(obj, subs, None, res);
            }
            if let Some(s) = helm.get(application::HELM_VALUES) {
                match s.as_str() {
                    Some(v) => self.embedded(s, v, Scope::Values, subs, res),
                    None => {
                        self.visit(s, Scope::Values, &mut Vec::new(), None, None, res);
                        self.subchart_values(s, subs, None, res);
                    }
                }
            }
            if let Some(Value::Seq(params)) =
                helm.get(application::HELM_PARAMETERS).map(|p| &p.value)
            {
                for p in params {
                    let name = p.str_at(&[positions::NAME_KEY]);
                    let value = p.get(positions::HELM_PARAMETER_VALUE);
                    if let (Some(name), Some(value)) = (name, value) {
                        let path = names::parameter_path(name);
                        self.scalar(value, Scope::Values, &path, None, None, res);
                        let sub = subs
                            .iter()
                            .find(|(k, _)| path.first() == Some(&Seg::Key(k.clone())));
                        if let Some((_, chart)) = sub {
                            self.scalar(value, Scope::Subchart(chart), &path, None, None, res);
                        }
                    }
                }
            }
        }
    }

    /// A parent chart's values (`values`, from its root) for its
    /// dependencies `subs`: each dependency's key read by its chart's rows.
    fn subchart_values(
        &mut self,
        values: &Node,
        subs: &Subcharts,
        outer: Option<Outer>,
        res: Option<&str>,
    ) {
        for (key, chart) in subs {
            if let Some(sub) = values.get(key) {
                let mut path = vec![Seg::Key(key.clone())];
                self.visit(sub, Scope::Subchart(chart), &mut path, outer, None, res);
            }
        }
    }

    /// The document's destination names (`positions::fact` says which; an
    /// AppProject's destinations too). One that is the old EKS name or an
    /// old registration's ArgoCD name moves; one templated from a generator
    /// that gives such a name, or one derived from the old EKS name that no
    /// registration read names, is refused (not proven), naming its line.
    fn destination_names(&mut self, doc: &Node, is_set: bool, res: Option<&str>) {
        let mut found = Vec::new();
        doc.walk(&mut |path, n| {
            let keys: Vec<&str> = path.keys().collect();
            let at = positions::fact(&keys) == Some(positions::Fact::DestinationName)
                || names::is_project_destination_name(&path.0);
            if n.as_str().is_some() && at {
                found.push((path.0.clone(), n.clone()));
            }
        });
        for (path, n) in found {
            let Some(value) = n.as_str() else { continue };
            if is_set && value.contains("{{") {
                self.generator_fed(doc, value, &path);
                continue;
            }
            let cx = NameContext {
                new: Some(&self.r.new),
                argocd_moves: &self.r.argocd_moves,
                ..NameContext::default()
            };
            let classified = names::classify(Scope::Destination, &[], value, &self.r.old, &cx);
            let foreign = self.r.argocd_foreign.iter().find(|(f, _)| f == value);
            if let (Some(_), Some((_, at))) = (&classified, foreign) {
                let (line, column) = self.index.position(self.text, n.start);
                self.found.errors.push(NameError {
                    line,
                    column,
                    message: format!(
                        "{} {value:?} is the old cluster's name, and also the ArgoCD name of another server's registration ({at}): not proven which cluster this Application is sent to, so it is not moved; rename one of them by hand; nothing written",
                        YamlPath(path.clone()),
                    ),
                });
                continue;
            }
            if foreign.is_some() {
                continue;
            }
            if let Some((row, range)) = classified {
                self.record(&n, value, row.position, range, &path, None, res);
                continue;
            }
            if self.r.argocd_kept.iter().any(|k| k == value) {
                let (line, column) = self.index.position(self.text, n.start);
                self.found.errors.push(NameError {
                    line,
                    column,
                    message: format!(
                        "{} {value:?} is the ArgoCD name of the old cluster's registration, which is neither the EKS name `{}` nor derived from it, so the new cluster's registration gets another name: the Application would stay on the old cluster; rename the registration (or the destination) by hand; nothing written",
                        YamlPath(path.clone()),
                        self.r.old
                    ),
                });
                continue;
            }
            let derived = names::derived_part(value, &self.r.old)
                .filter(|r| !names::within_new(value, r, &self.r.new));
            let unknown = self
                .r
                .argocd_known
                .as_ref()
                .is_some_and(|k| !k.iter().any(|x| x == value));
            if derived.is_some() && unknown {
                let (line, column) = self.index.position(self.text, n.start);
                self.found.errors.push(NameError {
                    line,
                    column,
                    message: format!(
                        "{} {value:?} derives from the old cluster's name `{}`, and no cluster registration in the repository (or in --live) is named so: not proven whether it is the old cluster's registration, which the cutover keeps (the Application would stay there) or another cluster's; register it in the repository, give the hub's registrations with --live, or change it by hand; nothing written",
                        YamlPath(path.clone()),
                        self.r.old
                    ),
                });
            }
        }
    }

    /// An ApplicationSet's templated destination name (`value`, at `path`):
    /// a generator value that is the old EKS name or an old registration's
    /// ArgoCD name may feed it, and rebind cannot move that value alone
    /// (it may feed other fields too): refused at the value, naming the
    /// destination.
    fn generator_fed(&mut self, doc: &Node, value: &str, path: &[Seg]) {
        let r = self.r;
        let old_name = |v: &str| {
            v == r.old
                || r.argocd_moves.iter().any(|(o, _)| o == v)
                || r.argocd_kept.iter().any(|k| k == v)
        };
        let mut fed = Vec::new();
        if let Some(generators) = doc.at(names::GENERATORS) {
            generators.walk(&mut |_, n| {
                if n.as_str().is_some_and(old_name) {
                    fed.push(n.clone());
                }
            });
        }
        for n in fed {
            let (line, column) = self.index.position(self.text, n.start);
            self.found.errors.push(NameError {
                line,
                column,
                message: format!(
                    "{:?} is the old cluster's ArgoCD name and a generator value of this ApplicationSet, whose {} {value:?} is templated: rebind cannot move it to the new cluster's registration without moving every other field it feeds; change it by hand (the new registration's name is {:?}); nothing written",
                    n.as_str().unwrap_or_default(),
                    YamlPath(path.to_vec()),
                    r.argocd_moves
                        .iter()
                        .find(|(o, _)| Some(o.as_str()) == n.as_str())
                        .map_or(r.new.as_str(), |(_, m)| m.as_str()),
                ),
            });
        }
    }

    /// A document held in the string `value` of `node`.
    fn embedded(
        &mut self,
        node: &Node,
        value: &str,
        scope: Scope,
        subs: &Subcharts,
        res: Option<&str>,
    ) {
        let ca = self.r.old_ca.as_deref().is_some_and(|c| value.contains(c));
        if !value.contains(self.r.old.as_str()) && !ca {
            return;
        }
        let Ok(docs) = yaml::read_yaml_or_json(value) else {
            return;
        };
        let outer = Outer { node, value };
        for d in &docs {
            self.visit(d, scope, &mut Vec::new(), Some(outer), None, res);
            self.subchart_values(d, subs, Some(outer), res);
        }
    }

    /// Every scalar and key at and below `n` (`path` from the scope's root).
    fn visit(
        &mut self,
        n: &Node,
        scope: Scope,
        path: &mut Vec<Seg>,
        outer: Option<Outer>,
        previous: Option<&str>,
        res: Option<&str>,
    ) {
        match &n.value {
            Value::Scalar(..) => self.scalar(n, scope, path, outer, previous, res),
            Value::Map(pairs) => {
                for (k, v) in pairs {
                    let key = k.as_str().unwrap_or("?");
                    path.push(Seg::Key(key.to_string()));
                    if scope == Scope::Any {
                        self.key(k, path, outer, res);
                    }
                    self.visit(v, scope, path, outer, None, res);
                    path.pop();
                }
            }
            Value::Seq(items) => {
                let mut prev: Option<&str> = None;
                for (i, v) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    self.visit(v, scope, path, outer, prev, res);
                    path.pop();
                    prev = v.as_str();
                }
            }
            Value::Alias(_) => {}
        }
    }

    fn key(&mut self, k: &Node, path: &[Seg], outer: Option<Outer>, res: Option<&str>) {
        let Some(value) = k.as_str() else { return };
        let cx = NameContext {
            previous: None,
            is_key: true,
            new: Some(&self.r.new),
            ..NameContext::default()
        };
        if let Some((row, range)) = names::classify(Scope::Any, path, value, &self.r.old, &cx) {
            self.record(k, value, row.position, range, path, outer, res);
        }
    }

    fn scalar(
        &mut self,
        n: &Node,
        scope: Scope,
        path: &[Seg],
        outer: Option<Outer>,
        previous: Option<&str>,
        res: Option<&str>,
    ) {
        let Some(value) = n.as_str() else { return };
        let old_ca = self.r.old_ca.as_deref();
        if !value.contains(self.r.old.as_str()) && old_ca != Some(value) {
            return;
        }
        let cx = NameContext {
            previous,
            is_key: false,
            old_ca,
            new: Some(&self.r.new),
            argocd_moves: &self.r.argocd_moves,
        };
        if let Some((row, range)) = names::classify(scope, path, value, &self.r.old, &cx) {
            self.record(n, value, row.position, range, path, outer, res);
        }
    }

    /// A name at a position: its bytes in the file, or an error saying why
    /// it cannot be rewritten in place.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        n: &Node,
        value: &str,
        position: NamePosition,
        r: Range<usize>,
        path: &[Seg],
        outer: Option<Outer>,
        res: Option<&str>,
    ) {
        let yaml_path = YamlPath(path.to_vec()).to_string();
        let at = outer.map_or(n.start, |o| o.node.start);
        let (line, column) = self.index.position(self.text, at);
        let fail = |found: &mut NamesFound, message: String| {
            found.errors.push(NameError {
                line,
                column,
                message,
            })
        };
        let new_text = match position {
            NamePosition::RegistrationArn | NamePosition::ClusterArn
                if self.r.old_arn.as_deref().is_some_and(|a| a != value) =>
            {
                // Another cluster's ARN under the same name (another
                // account or region): not the old cluster; a mention.
                return;
            }
            NamePosition::RegistrationArn | NamePosition::ClusterArn => match &self.r.new_arn {
                Some(a) => a.clone(),
                None => {
                    fail(self.found, format!("{yaml_path} registers the cluster by its ARN, and the new cluster's ARN is not known (give --describe-to with `cluster.arn`); nothing written"));
                    return;
                }
            },
            NamePosition::RegistrationCaData | NamePosition::KubeconfigCaData => {
                match &self.r.new_ca {
                    Some(a) => a.clone(),
                    None => {
                        fail(self.found, format!("{yaml_path} holds the old cluster's CA, and the new cluster's CA is not known (give --describe-to with `cluster.certificateAuthority.data`); nothing written"));
                        return;
                    }
                }
            }
            NamePosition::DestinationArgocdName => {
                match self.r.argocd_moves.iter().find(|(o, _)| o == value) {
                    Some((_, m)) => m.clone(),
                    None => return,
                }
            }
            _ => self.r.new.clone(),
        };
        let placed = match outer {
            None => value_at(self.text, n, value).map(|v| (v + r.start, n.start, r.clone())),
            Some(o) => value_at(o.value, n, value).and_then(|v| {
                let d = v + r.start;
                raw_offset(self.text, o.node, o.value, d, r.len())
                    .map(|raw| (raw, o.node.start, d..d + r.len()))
            }),
        };
        let Some((raw, scalar, in_value)) = placed else {
            fail(self.found, format!("{} at {yaml_path} is written with escapes, across lines or folded, so rebind cannot rewrite it in place; write it plainly (or change it by hand); nothing written", position.as_str()));
            return;
        };
        let (line, column) = self.index.position(self.text, raw);
        if self.found.changes.iter().any(|c| c.range.start == raw) {
            return;
        }
        self.found.changes.push(NameChange {
            line,
            column,
            range: raw..raw + r.len(),
            old_text: value[r].to_string(),
            new_text,
            position,
            yaml_path: yaml_path.clone(),
            resource: res.map(str::to_string),
            scalar,
            in_value,
        });
    }

    /// A cluster Secret's base64 `data` that holds the name: not rewritten
    /// in place; said so, never skipped.
    fn encoded(&mut self, doc: &Node) {
        let kind = doc.str_at(positions::KIND);
        if !positions::is_base64_kind(kind) || !is_registration(doc) {
            return;
        }
        // Another server's registration is never this rebind's to judge.
        if registration_server(doc).is_some_and(|s| !self.r.is_rebound_server(&s)) {
            return;
        }
        let Some(Value::Map(pairs)) = doc.get(positions::BASE64_DATA.1).map(|d| &d.value) else {
            return;
        };
        for (k, v) in pairs {
            let decoded = v.as_str().and_then(crate::find::embedded::decode_data);
            let Some(d) = decoded else { continue };
            let what = if d.contains(self.r.old.as_str()) {
                format!("the cluster name `{}`", self.r.old)
            } else if self.r.old_ca.as_deref().is_some_and(|ca| d.contains(ca)) {
                "the old cluster's CA data".to_string()
            } else {
                continue;
            };
            let (line, column) = self.index.position(self.text, v.start);
            self.found.errors.push(NameError {
                line,
                column,
                message: format!(
                    "data.{} holds {what} in base64, which rebind does not rewrite for names; write it under stringData (or change it by hand); nothing written",
                    k.as_str().unwrap_or("?"),
                ),
            });
        }
    }
}

/// A value that is an EKS cluster ARN (`arn:aws:eks:REGION:ACCOUNT:cluster/NAME`):
/// a cluster named by its ARN, not its endpoint (the EKS capability for
/// Argo CD registers clusters so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArnRef {
    pub line: usize,
    pub column: usize,
    pub arn: String,
    /// The cluster's name in the ARN.
    pub name: String,
    pub yaml_path: String,
    pub resource: Option<String>,
    /// The value is a cluster registration's `server`.
    pub registration: bool,
}

/// Every value of `text` (YAML or JSON) that is an EKS cluster ARN.
pub fn cluster_arns(text: &str) -> Vec<ArnRef> {
    let Ok((docs, _)) = yaml::read_maybe_masked(text) else {
        return Vec::new();
    };
    let index = LineIndex::new(text);
    let mut out = Vec::new();
    for doc in &docs {
        let server = registration_fields(doc)
            .and_then(|f| f.get(names::REGISTRATION_SERVER))
            .map(|n| n.start);
        let res = resource(doc);
        doc.walk(&mut |path, n| {
            let Some(v) = n.as_str() else { return };
            let Some(arn) = crate::model::cluster::parse_arn(v) else {
                return;
            };
            let (line, column) = index.position(text, n.start);
            out.push(ArnRef {
                line,
                column,
                arn: v.to_string(),
                name: arn.name.to_string(),
                yaml_path: path.to_string(),
                resource: res.clone(),
                registration: server == Some(n.start),
            });
        });
    }
    out
}

/// A kind as a `&'static str` the table may name (others never match).
fn kind_name(kind: &str) -> &'static str {
    names::TABLE
        .iter()
        .find_map(|r| match r.scope {
            Scope::Kind(k) if k == kind => Some(k),
            _ => None,
        })
        .unwrap_or("")
}

/// `Kind/name` of a document.
fn resource(doc: &Node) -> Option<String> {
    let kind = doc.str_at(positions::KIND)?;
    let name = doc.str_at(positions::NAME).unwrap_or("?");
    Some(format!("{kind}/{name}"))
}

/// The mapping holding a cluster registration's own fields (`name`,
/// `server`, `config`): a Secret's `stringData` with the cluster label,
/// an ExternalSecret template's `data`.
pub fn registration_fields(doc: &Node) -> Option<&Node> {
    let kind = doc.str_at(positions::KIND)?;
    let reg = positions::REGISTRATIONS.iter().find(|r| r.kind == kind)?;
    let labels = doc.at(reg.labels)?;
    let (label, want) = positions::CLUSTER_SECRET_LABEL;
    if labels.str_at(&[label]) != Some(want) {
        return None;
    }
    reg.servers
        .iter()
        .filter(|(_, base64)| !base64)
        .find_map(|(p, _)| doc.at(&p[..p.len() - 1]))
}

/// Whether `doc` is a cluster registration (its kind's row, the cluster
/// label).
fn is_registration(doc: &Node) -> bool {
    let Some(reg) = doc
        .str_at(positions::KIND)
        .and_then(|k| positions::REGISTRATIONS.iter().find(|r| r.kind == k))
    else {
        return false;
    };
    let (label, want) = positions::CLUSTER_SECRET_LABEL;
    doc.at(reg.labels).and_then(|l| l.str_at(&[label])) == Some(want)
}

/// The server a registration registers (decoded), when written as a value.
pub fn registration_server(doc: &Node) -> Option<String> {
    let kind = doc.str_at(positions::KIND)?;
    let reg = positions::REGISTRATIONS.iter().find(|r| r.kind == kind)?;
    reg.servers.iter().find_map(|(p, base64)| {
        let v = doc.str_at(p)?;
        match base64 {
            true => crate::find::embedded::decoded_value(v),
            false => Some(v.to_string()),
        }
    })
}

/// Where `value` (the decoded value of `n`) is written verbatim in
/// `container`: a plain or quoted scalar on one line, with no escape.
fn value_at(container: &str, n: &Node, value: &str) -> Option<usize> {
    let Value::Scalar(_, style) = &n.value else {
        return None;
    };
    let base = match style {
        TScalarStyle::Plain => n.start,
        TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted => n.start + 1,
        _ => return None,
    };
    (!value.contains('\n') && container.get(base..base + value.len()) == Some(value))
        .then_some(base)
}

/// Where byte `d` of the decoded value `value` of the scalar `n` is in
/// `text`, checked: the `len` bytes there must read as they do in the
/// value. A plain or quoted scalar on one line, or a literal block (`|`).
fn raw_offset(text: &str, n: &Node, value: &str, d: usize, len: usize) -> Option<usize> {
    let want = value.get(d..d + len)?;
    let Value::Scalar(_, style) = &n.value else {
        return None;
    };
    let raw = match style {
        TScalarStyle::Literal => literal_offset(text, n.start, value, d)?,
        _ => value_at(text, n, value)? + d,
    };
    (text.get(raw..raw + len) == Some(want)).then_some(raw)
}

/// [`raw_offset`] in a literal block scalar whose first content byte is
/// at `start` (after its indentation): line `k` of the value is the `k`-th
/// line from there, indented as the first, and must read as that line does.
fn literal_offset(text: &str, start: usize, value: &str, d: usize) -> Option<usize> {
    let body = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let indent = start - body;
    if !text[body..start].bytes().all(|b| b == b' ') {
        return None;
    }
    let k = value[..d].matches('\n').count();
    let line_start_in_value = value[..d].rfind('\n').map_or(0, |p| p + 1);
    let col = d - line_start_in_value;
    let value_line = value[line_start_in_value..].split('\n').next()?;
    let (line_at, line) = text[body..]
        .split_inclusive('\n')
        .scan(body, |at, l| {
            let s = *at;
            *at += l.len();
            Some((s, l))
        })
        .nth(k)?;
    let content = line.trim_end_matches('\n').trim_end_matches('\r');
    (content.get(indent..) == Some(value_line)).then_some(line_at + indent + col)
}

/// The edit engine's operations of `changes`: the bytes of the file, and
/// for each scalar (by its start) the ranges of its decoded value, which the
/// verification expects to read back rebound.
pub fn ops(changes: &[NameChange]) -> (Vec<Op>, BTreeMap<usize, Vec<Op>>) {
    let mut in_values: BTreeMap<usize, Vec<Op>> = BTreeMap::new();
    for c in changes {
        let op = Op::replace(c.in_value.clone(), c.new_text.as_str());
        in_values.entry(c.scalar).or_default().push(op);
    }
    let file = changes
        .iter()
        .map(|c| Op::replace(c.range.clone(), c.new_text.as_str()))
        .collect();
    (file, in_values)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn rebind() -> NameRebind {
        NameRebind {
            old: "prod".into(),
            new: "prod-blue".into(),
            old_arn: Some("arn:aws:eks:eu-west-1:111122223333:cluster/prod".into()),
            new_arn: Some("arn:aws:eks:eu-west-1:111122223333:cluster/prod-blue".into()),
            old_ca: None,
            new_ca: None,
            argocd_moves: Vec::new(),
            argocd_known: None,
            argocd_kept: Vec::new(),
            old_server: None,
            new_server: None,
            argocd_foreign: Vec::new(),
        }
    }

    fn rewritten(text: &str) -> (String, NamesFound) {
        let f = locate(text, &rebind());
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        let new = crate::text::splice::apply(text, &ops(&f.changes).0).unwrap();
        (new, f)
    }

    #[test]
    fn a_values_file_and_its_mentions() {
        let text = "# prod values\nsettings:\n  clusterName: prod   # the prod cluster\n  interruptionQueue: \"Karpenter-prod\"\nenv: prod\n";
        let (new, f) = rewritten(text);
        assert_eq!(new, "# prod values\nsettings:\n  clusterName: prod-blue   # the prod cluster\n  interruptionQueue: \"Karpenter-prod-blue\"\nenv: prod\n");
        assert_eq!(f.changes.len(), 2);
        let lines: Vec<usize> = f.mentions.iter().map(|m| m.line).collect();
        assert_eq!(lines, [1, 3, 5]);
    }

    #[test]
    fn the_registration_config_in_a_literal_block() {
        let text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: arn:aws:eks:eu-west-1:111122223333:cluster/prod\n  config: |\r\n    {\"awsAuthConfig\": {\"clusterName\": \"prod\",\r\n      \"roleARN\": \"arn:aws:iam::111122223333:role/prod-argocd\"}}\r\n";
        let (new, f) = rewritten(text);
        assert!(new.contains("  name: prod-blue\n  server: arn:aws:eks:eu-west-1:111122223333:cluster/prod-blue\n"), "{new}");
        assert!(new.contains("{\"awsAuthConfig\": {\"clusterName\": \"prod-blue\",\r\n      \"roleARN\": \"arn:aws:iam::111122223333:role/prod-blue-argocd\"}}\r\n"), "{new}");
        // metadata.name is the Secret's own name: a mention.
        assert_eq!(f.changes.len(), 4, "{:?}", f.changes);
        assert_eq!(f.mentions.len(), 1);
        assert_eq!(f.mentions[0].line, 4);
    }

    #[test]
    fn a_folded_or_escaped_position_is_an_error_not_a_guess() {
        let text = "settings:\n  clusterName: >-\n    prod\n";
        let f = locate(text, &rebind());
        assert_eq!(f.changes.len(), 0);
        assert_eq!(f.errors.len(), 1, "{f:?}");
        assert_eq!(f.errors[0].line, 3);
    }
}

#[cfg(test)]
mod more_tests {
    use super::tests::rebind;
    use super::*;

    /// A dependency is the table's chart by its `name`; its values sit
    /// under its `alias` only when it has one (Helm), and an alias that
    /// spells a table chart's name gives another chart no rows.
    #[test]
    fn subcharts_are_recognised_by_the_dependency_name() {
        let chart = "apiVersion: v2\nname: p\ndependencies:\n  - name: karpenter\n  - {name: aws-load-balancer-controller, alias: lbc}\n  - {name: common, alias: karpenter-extra}\n  - {name: common, alias: external-dns}\n  - {alias: cluster-autoscaler}\n";
        assert_eq!(
            subcharts(chart),
            [
                ("karpenter".to_string(), "karpenter"),
                ("lbc".to_string(), "aws-load-balancer-controller")
            ]
        );
        let requirements = "dependencies:\n- name: cluster-autoscaler\n  version: 9.0.0\n";
        assert_eq!(
            subcharts(requirements),
            [("cluster-autoscaler".to_string(), "cluster-autoscaler")]
        );
        assert!(subcharts("apiVersion: v2\nname: p\n").is_empty());
        assert!(subcharts("dependencies: [").is_empty());
        let r = NameRebind {
            old_arn: None,
            new_arn: None,
            ..rebind()
        };
        let cv = ChartValues {
            file: subcharts(chart),
            dirs: Vec::new(),
        };
        let text = "karpenter: {settings: {clusterName: prod}}\nexternal-dns: {txtOwnerId: prod}\nlbc: {clusterName: prod}\n";
        let got: Vec<String> = locate_with(text, &r, &cv)
            .changes
            .into_iter()
            .map(|c| c.yaml_path)
            .collect();
        assert_eq!(got, ["karpenter.settings.clusterName", "lbc.clusterName"]);
        assert!(locate(text, &r).changes.is_empty());
    }

    #[test]
    fn cluster_arns_are_found_and_registrations_told_apart() {
        let text = "kind: Secret\nmetadata:\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: arn:aws:eks:eu-west-1:111122223333:cluster/prod\n---\nkind: Application\nspec:\n  destination:\n    server: 'arn:aws:eks:eu-west-1:111122223333:cluster/prod'\n  note: arn:aws:iam::111122223333:role/prod\n";
        let got: Vec<(usize, bool, String)> = cluster_arns(text)
            .into_iter()
            .map(|a| (a.line, a.registration, a.name))
            .collect();
        assert_eq!(got, [(6, true, "prod".into()), (11, false, "prod".into())]);
    }

    #[test]
    fn arn_destinations_and_ca_data() {
        let r = NameRebind {
            old: "prod".into(),
            new: "prod-blue".into(),
            old_arn: None,
            new_arn: Some("arn:aws:eks:eu-west-1:111122223333:cluster/prod-blue".into()),
            old_ca: Some("T0xEQ0E=".into()),
            new_ca: Some("TkVXQ0E=".into()),
            argocd_moves: Vec::new(),
            argocd_known: None,
            argocd_kept: Vec::new(),
            old_server: Some("https://old.example.com".into()),
            new_server: None,
            argocd_foreign: Vec::new(),
        };
        let text = "kind: Application\nspec:\n  destination:\n    server: arn:aws:eks:eu-west-1:111122223333:cluster/prod\n";
        let f = locate(text, &r);
        assert_eq!(f.changes.len(), 1, "{f:?}");
        let text = "kind: Secret\nmetadata:\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: https://OLD.example.com:443/\n  config: |\n    {\"tlsClientConfig\": {\"caData\": \"T0xEQ0E=\"}}\n";
        let f = locate(text, &r);
        assert_eq!(f.changes.len(), 2, "{f:?}");
    }

    /// A registration of another server (by URL or ARN) is never touched,
    /// even under the old cluster's name; one of the old server (its URL
    /// as the endpoint rules compare it, or its ARN) is.
    #[test]
    fn only_the_old_servers_registrations_are_renamed() {
        let mut r = rebind();
        r.old_server = Some("https://old.example.com".into());
        r.new_server = Some("https://new.example.com".into());
        let reg = |server: &str| {
            format!("kind: Secret\nmetadata:\n  name: cluster-prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: {server}\n  config: |\n    {{\"awsAuthConfig\": {{\"clusterName\": \"prod\"}}}}\n")
        };
        for other in [
            "https://other.example.com",
            "arn:aws:eks:us-east-1:999999999999:cluster/prod",
            "arn:aws:eks:eu-west-1:111122223333:cluster/other",
        ] {
            let f = locate(&reg(other), &r);
            assert!(
                f.changes.is_empty() && f.errors.is_empty(),
                "{other}: {f:?}"
            );
            let at: Vec<(usize, usize)> = f.mentions.iter().map(|m| (m.line, m.column)).collect();
            assert!(
                at.contains(&(7, 9)) && at.contains(&(10, 40)),
                "{other}: {f:?}"
            );
        }
        for old in [
            "https://old.example.com",
            "HTTPS://Old.Example.com:443/",
            "https://new.example.com",
            "arn:aws:eks:eu-west-1:111122223333:cluster/prod",
        ] {
            let f = locate(&reg(old), &r);
            let at: Vec<(usize, usize)> = f.changes.iter().map(|c| (c.line, c.column)).collect();
            assert!(
                at.contains(&(7, 9)) && at.contains(&(10, 40)),
                "{old}: {f:?}"
            );
        }
        // A templated server (an ExternalSecret template's, a Helm
        // action): refused, not guessed.
        for templated in ["\"{{ .server }}\"", "{{ .Values.server }}"] {
            let f = locate(&reg(templated), &r);
            assert!(
                f.changes.is_empty() && f.errors.len() == 1,
                "{templated}: {f:?}"
            );
            assert_eq!((f.errors[0].line, f.errors[0].column), (1, 1), "{f:?}");
        }
        // Without a readable server: refused, not guessed.
        let f = locate(&reg("\"\"").replace("  server: \"\"\n", ""), &r);
        assert!(f.changes.is_empty() && f.errors.len() == 1, "{f:?}");
    }

    /// Another cluster's ARN under the same name (another account) in a
    /// destination is a mention, the old ARN a change.
    #[test]
    fn another_accounts_arn_of_the_same_name_is_left() {
        let app =
            |arn: &str| format!("kind: Application\nspec:\n  destination:\n    server: {arn}\n");
        let f = locate(
            &app("arn:aws:eks:us-east-1:999999999999:cluster/prod"),
            &rebind(),
        );
        assert!(f.changes.is_empty() && f.mentions.len() == 1, "{f:?}");
        let f = locate(
            &app("arn:aws:eks:eu-west-1:111122223333:cluster/prod"),
            &rebind(),
        );
        assert_eq!(f.changes.len(), 1, "{f:?}");
    }

    /// A destination name another server's registration bears is not the
    /// old cluster's: left when it is not the EKS name, refused (naming
    /// both places) when it is.
    #[test]
    fn a_destination_named_as_another_servers_registration() {
        let mut r = rebind();
        r.argocd_foreign = vec![
            (
                "prod".into(),
                "clusters/other.yaml:1:1: Secret/x registers https://other.example.com".into(),
            ),
            (
                "prod-eu".into(),
                "clusters/eu.yaml:1:1: Secret/y registers https://eu.example.com".into(),
            ),
        ];
        r.argocd_moves = vec![("prod-eu".into(), "prod-blue-eu".into())];
        let app = |n: &str| format!("kind: Application\nspec:\n  destination:\n    name: {n}\n");
        let f = locate(&app("prod"), &r);
        assert!(f.changes.is_empty(), "{f:?}");
        assert_eq!(f.errors.len(), 1, "{f:?}");
        assert_eq!((f.errors[0].line, f.errors[0].column), (4, 11));
        assert!(
            f.errors[0].message.contains("clusters/other.yaml:1:1"),
            "{f:?}"
        );
        let f = locate(&app("prod-eu"), &r);
        assert!(f.changes.is_empty() && !f.errors.is_empty(), "{f:?}");
        // Without the foreign registration, the EKS name moves.
        let f = locate(&app("prod"), &rebind());
        assert_eq!(f.changes.len(), 1, "{f:?}");
    }
}
