//! What ArgoCD's repo server does with a source's folder before any file
//! of it reaches the hub: where manifest generation fails for the whole
//! Application (then nothing of it deploys: "not proven", naming the file
//! and the rule), and where it renders nothing from a file it reads
//! ("not included").
//!
//! The rules are argo-cd's `reposerver/repository/repository.go`
//! (`GenerateManifests`, `mergeSourceParameters`, `findManifests`,
//! `getPotentiallyValidManifestFile`, `getObjsFromYAMLOrJSON`),
//! `util/app/path/path.go` (`Path`: "app path is absolute"),
//! `util/app/discovery/discovery.go` (a file whose name ends in
//! `Chart.yaml` makes a Helm chart), kustomize's own build (its default
//! load restrictor, one kustomization per folder, one resource per id;
//! `helmCharts` only with `--enable-helm`, docs/user-guide/kustomize.md)
//! and Helm's (templates named `_*` are partials, `.helmignore`, library
//! charts, value files: docs/user-guide/helm.md).

use crate::model::application::{
    App, Source, ARGOCD_ANNOTATION, ARGOCD_CM, CONFIG_MAP, CONFIG_MAP_DATA, HELM_HOOK,
    KUSTOMIZE_BUILD_OPTIONS, KUSTOMIZE_ENABLE_HELM,
};
use crate::model::positions;
use crate::syntax::yaml::{self, Node, Value};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

/// argo-cd `kustomize.KustomizationNames`, in the order kustomize looks
/// for them.
pub const KUSTOMIZATION_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// What the checks read of the repository (paths `/`-separated from its
/// root).
pub trait Files {
    fn exists(&self, rel: &str) -> bool;
    fn read(&self, rel: &str) -> Option<String>;
    /// The names of the files directly in a folder.
    fn list(&self, dir: &str) -> Vec<String>;
    /// The names of the folders directly in a folder (hidden ones aside).
    fn dirs(&self, dir: &str) -> Vec<String>;
    /// The decoded kustomization in a folder, if there is one.
    fn kustomization(&self, dir: &str) -> Option<Node>;
}

/// What the render does to a file the source's listing rules include
/// (or may).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The render fails, or what it does is not followed: the reason.
    NotProven(String),
    /// The render reads the file but applies nothing of it: the reason.
    NotIncluded(String),
}

/// `dir` and `rel` joined, `.` and `..` resolved, `/`-separated.
pub(crate) fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// `file` relative to folder `dir`, when it is below it.
pub(crate) fn under<'a>(file: &'a str, dir: &str) -> Option<&'a str> {
    let dir = join(dir, "");
    if dir.is_empty() {
        return Some(file);
    }
    file.strip_prefix(&dir)?.strip_prefix('/')
}

/// The marker that makes the repo server skip a file of a directory
/// source (argo-cd v3.1+, docs/user-guide/directory.md "Skipping File
/// Rendering").
const SKIP_MARKER: &str = "+argocd:skip-file-rendering";

/// What is asked once per report: per directory source, the first file
/// that fails the whole render; the argocd-cm's kustomize build options.
#[derive(Default)]
pub struct Cache {
    directories: RefCell<HashMap<String, Option<String>>>,
    build_options: RefCell<Option<BuildOptions>>,
}

/// `kustomize.buildOptions` of the repository's `argocd-cm`.
#[derive(Clone)]
enum BuildOptions {
    /// Where, and the value.
    Found(String, String),
    NotFound,
}

/// Whether a file name makes its folder a Helm chart for ArgoCD (argo-cd
/// `util/app/discovery`: `strings.HasSuffix(base, "Chart.yaml")`).
pub fn marks_chart(name: &str) -> bool {
    name.ends_with("Chart.yaml")
}

/// The files directly in `dir` whose name ends in `Chart.yaml`, sorted:
/// argo-cd `discovery.Discover` takes such a folder for a Helm chart
/// (`strings.HasSuffix(base, "Chart.yaml")`). The one rule the review
/// decides "is a chart" by.
pub fn chart_markers(tree: &dyn Files, dir: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .list(dir)
        .into_iter()
        .filter(|n| marks_chart(n))
        .collect();
    // A listing may leave out a symbolic link; the walk does not.
    if !found.iter().any(|n| n == "Chart.yaml") && tree.exists(&join(dir, "Chart.yaml")) {
        found.push("Chart.yaml".into());
    }
    found.sort();
    found
}

/// Whether ArgoCD takes folder `dir` for a Helm chart ([`chart_markers`]).
pub fn is_chart(tree: &dyn Files, dir: &str) -> bool {
    !chart_markers(tree, dir).is_empty()
}

/// [`is_chart`] for a folder on disk.
pub fn is_chart_dir(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_type().is_ok_and(|t| t.is_file())
                && e.file_name().to_str().is_some_and(marks_chart)
        })
    })
}

/// The kustomization files directly in `dir` (argo-cd
/// `kustomize.IsKustomization`).
fn kustomization_files(tree: &dyn Files, dir: &str) -> Vec<String> {
    let names = tree.list(dir);
    KUSTOMIZATION_NAMES
        .iter()
        .filter(|n| names.iter().any(|m| m == *n))
        .map(|n| n.to_string())
        .collect()
}

/// The type ArgoCD renders a source as.
#[derive(PartialEq, Eq)]
enum Kind {
    Helm,
    Kustomize,
    Directory,
    Plugin,
}

/// What the repo server does with `file` when it renders `src` of `app`:
/// `included` is what the source's listing rules say (`Some(true)`: it
/// reads the file, `Some(false)`: it does not, `None`: not known);
/// `reads` tells, for any file, whether the source reads it as a manifest
/// by those rules. `None`: the listing rules stand; else the render fails
/// for the whole Application or is not followed (not proven), or applies
/// nothing of the file (not included).
pub fn check(
    app: &App,
    src: &Source,
    file: &str,
    included: Option<bool>,
    tree: &dyn Files,
    reads: &dyn Fn(&str) -> bool,
    cache: &Cache,
) -> Option<Outcome> {
    let path = src.path.as_deref()?;
    if src.chart.is_some() || path.contains("{{") {
        return None;
    }
    let dir = join(path, "");
    let inside = under(file, &dir).is_some();
    // What fails the render of the folder itself counts for the files in
    // it, included or not.
    let folder = inside || included != Some(false);
    let fails = |why: String| Outcome::NotProven(format!("{} cannot render: {why}", app.id()));
    let kind = match folder_check(app, src, &dir, tree) {
        Err(why) if folder => return Some(why),
        Err(_) => return None,
        Ok(kind) => kind,
    };
    let reached = kind == Kind::Kustomize && kustomize_reaches(tree, &dir, file);
    if included == Some(false) && !reached {
        return None;
    }
    match kind {
        Kind::Plugin => None,
        Kind::Kustomize => match kustomize_check(tree, &dir, cache) {
            Err(why) => Some(fails(why)),
            Ok(_) if included != Some(false) && transformed(tree, &dir, file, 0).is_some() => {
                let why = transformed(tree, &dir, file, 0).unwrap_or_default();
                Some(Outcome::NotProven(format!(
                    "{} renders `{file}` through {why}, which the review does not apply: what reaches the hub may be another object (kustomize's transformers run over every resource the kustomization lists)",
                    app.id()
                )))
            }
            Ok(data) => match (included, data.get(file)) {
                (Some(true), Some(held)) => Some(Outcome::NotIncluded(format!(
                    "held as generator data: {held} turns it into the data of a ConfigMap or Secret, so the manifest it holds is not applied"
                ))),
                _ => None,
            },
        },
        Kind::Helm => {
            if !tree.exists(&join(&dir, "Chart.yaml")) {
                return None;
            }
            if let Err(why) = helm_chart_check(src, &dir, tree) {
                return Some(fails(why));
            }
            match (included, inside) {
                (Some(true), true) => helm_file_check(tree, &dir, file),
                _ => None,
            }
        }
        Kind::Directory => {
            if !inside {
                return None;
            }
            if let Err(why) = directory_check(src, &dir, tree, reads, cache) {
                return Some(fails(why));
            }
            if included == Some(true) && tree.read(file).is_some_and(|t| t.contains(SKIP_MARKER)) {
                return Some(Outcome::NotIncluded(format!(
                    "it holds `{SKIP_MARKER}`: the repo server skips the file (ArgoCD v3.1+)"
                )));
            }
            None
        }
    }
}

/// The type ArgoCD renders the folder `dir` of `src` as, or why its render
/// fails before any file is read: an absolute path, a parameter override
/// file, a file name ending in `Chart.yaml` without a `Chart.yaml`, a
/// chart marker and a kustomization where the chart decides.
fn folder_check(app: &App, src: &Source, dir: &str, tree: &dyn Files) -> Result<Kind, Outcome> {
    let id = app.id();
    let path = src.path.as_deref().unwrap_or_default();
    let fails = |why: String| Outcome::NotProven(format!("{id} cannot render: {why}"));
    // util/app/path.Path: "app path is absolute".
    if path.starts_with('/') {
        return Err(fails(format!(
            "its source path `{path}` is absolute, which ArgoCD refuses (\"{path}: app path is absolute\")"
        )));
    }
    // mergeSourceParameters: these files override the source's
    // parameters (all but chart, path, repoURL and targetRevision); the
    // Application's name, or `namespace_name` out of the control plane's
    // namespace.
    let overrides = tree.list(dir).into_iter().find(|n| {
        n.as_str() == ".argocd-source.yaml"
            || n.strip_prefix(".argocd-source-")
                .and_then(|r| r.strip_suffix(".yaml"))
                .is_some_and(|who| who == app.name || who.ends_with(&format!("_{}", app.name)))
    });
    if let Some(o) = overrides {
        return Err(Outcome::NotProven(format!(
            "`{}` overrides {id}'s source parameters (the repo server merges it into the source before it renders: directory, helm, kustomize options), which is not followed",
            join(dir, &o)
        )));
    }
    let kustomizations = kustomization_files(tree, dir);
    let markers = chart_markers(tree, dir);
    let kind = if src.plugin {
        Kind::Plugin
    } else if src.helm {
        Kind::Helm
    } else if src.kustomize {
        Kind::Kustomize
    } else if src.directory_given {
        Kind::Directory
    } else {
        // discovery.Discover walks the folder's files in name order; the
        // last that marks a type decides.
        match (markers.last(), kustomizations.iter().max()) {
            (Some(c), Some(k)) if c > k => {
                return Err(fails(format!(
                    "`{}` and `{}` are both in `{}`: ArgoCD takes the folder for a Helm chart (the file that sorts last decides)",
                    join(dir, k),
                    join(dir, c),
                    show(dir)
                )))
            }
            (_, Some(_)) => Kind::Kustomize,
            (Some(_), None) => Kind::Helm,
            (None, None) => Kind::Directory,
        }
    };
    if kind == Kind::Helm && !tree.exists(&join(dir, "Chart.yaml")) {
        if let Some(m) = markers.first() {
            return Err(fails(format!(
                "`{}` makes ArgoCD take `{}` for a Helm chart (a file name ending in Chart.yaml, util/app/discovery), and `helm template` fails without a Chart.yaml",
                join(dir, m),
                show(dir)
            )));
        }
    }
    Ok(kind)
}

fn show(dir: &str) -> &str {
    if dir.is_empty() {
        "."
    } else {
        dir
    }
}

/// Whether the kustomization in `dir` names `file` or a folder above it
/// (a listed folder that fails the build fails it for the files there).
fn kustomize_reaches(tree: &dyn Files, dir: &str, file: &str) -> bool {
    let Some(k) = tree.kustomization(dir) else {
        return false;
    };
    entries(&k, &["resources", "bases", "components"])
        .iter()
        .any(|(e, _)| {
            let rel = join(dir, e);
            !rel.is_empty() && (file == rel || under(file, &rel).is_some())
        })
}

/// What a kustomization on the way from `dir` to `file` (the one in
/// `dir`, each it lists that reaches the file, and the components of
/// each) does to the objects of `file` that the review does not apply:
/// `namespace`, `namePrefix` or `nameSuffix` over an object whose
/// namespace or name ArgoCD reads (an `argoproj.io` object, a Secret, a
/// ConfigMap), `commonAnnotations` setting an ArgoCD or Helm hook
/// annotation, a patch that may target a kind of the file (`patches`,
/// `patchesStrategicMerge`, `patchesJson6902`), and every other
/// transformer (`replacements`, `transformers`, `generators`, `vars`,
/// ...). The field, named with its `file:line`.
fn transformed(tree: &dyn Files, dir: &str, file: &str, depth: usize) -> Option<String> {
    if depth > 32 {
        return None;
    }
    let k = tree.kustomization(dir)?;
    let mut reached = false;
    for (e, _) in entries(&k, &["resources", "bases", "components"]) {
        if remote(&e) {
            continue;
        }
        let rel = join(dir, &e);
        if rel == file {
            reached = true;
        } else if !rel.is_empty() && under(file, &rel).is_some() {
            reached = true;
            if let Some(why) = transformed(tree, &rel, file, depth + 1) {
                return Some(why);
            }
        }
    }
    if !reached {
        return None;
    }
    let docs: Vec<Node> = tree
        .read(file)
        .and_then(|t| yaml::read_yaml_or_json(&t).ok())
        .unwrap_or_default();
    // The components listed here act on this kustomization's resources.
    let mut ks = vec![(dir.to_string(), k.clone())];
    let mut i = 0;
    while i < ks.len() && i < 32 {
        let (d, node) = ks[i].clone();
        for (c, _) in entries(&node, &["components"]) {
            let rel = join(&d, &c);
            if let (false, Some(ck)) = (remote(&c), tree.kustomization(&rel)) {
                ks.push((rel, ck));
            }
        }
        i += 1;
    }
    for (d, node) in &ks {
        let name = kustomization_files(tree, d)
            .first()
            .map_or_else(|| join(d, "kustomization.yaml"), |n| join(d, n));
        if let Some(why) = transforms(node, &name, d, &docs, tree) {
            return Some(why);
        }
    }
    None
}

/// [`transformed`] for one kustomization `k` (file `name`, in `dir`) over
/// the documents of the file it reaches.
fn transforms(k: &Node, name: &str, dir: &str, docs: &[Node], tree: &dyn Files) -> Option<String> {
    let Value::Map(pairs) = &k.value else {
        return None;
    };
    let kinds: Vec<&str> = docs
        .iter()
        .filter_map(|d| d.str_at(positions::KIND))
        .collect();
    // An object whose name or namespace ArgoCD reads.
    let named = |d: &Node| {
        d.str_at(&["apiVersion"])
            .is_some_and(|a| a.starts_with("argoproj.io/"))
            || matches!(d.str_at(positions::KIND), Some("Secret" | "ConfigMap"))
    };
    for (key, v) in pairs {
        let Some(field) = key.as_str() else { continue };
        if positions::KUSTOMIZE_HARMLESS.contains(&field) {
            continue;
        }
        let at = format!("`{field}` of `{name}:{}`", key.line);
        let hit = match field {
            "namespace" => {
                let ns = v.as_str().unwrap_or_default();
                !ns.is_empty()
                    && docs
                        .iter()
                        .any(|d| named(d) && d.str_at(positions::NAMESPACE) != Some(ns))
            }
            "namePrefix" | "nameSuffix" => {
                v.as_str().is_some_and(|s| !s.is_empty()) && docs.iter().any(named)
            }
            "commonAnnotations" => match &v.value {
                Value::Map(anns) => anns.iter().any(|(a, _)| {
                    a.as_str().is_some_and(|a| {
                        a.starts_with(ARGOCD_ANNOTATION) || a.starts_with(HELM_HOOK)
                    })
                }),
                _ => false,
            },
            "patches" | "patchesJson6902" | "patchesStrategicMerge" => patch_kinds(v, dir, tree)
                .is_none_or(|targets| targets.iter().any(|t| kinds.contains(&t.as_str()))),
            _ => true,
        };
        if hit {
            return Some(at);
        }
    }
    None
}

/// The kinds the patches under a `patches`, `patchesJson6902` or
/// `patchesStrategicMerge` list target (a `target.kind`, else the kinds
/// the patch itself names); `None` when one is not known (a target
/// without a plain kind, a patch file that is not read).
fn patch_kinds(list: &Node, dir: &str, tree: &dyn Files) -> Option<Vec<String>> {
    let Value::Seq(items) = &list.value else {
        return Some(Vec::new());
    };
    let plain = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric());
    let own = |text: &str| -> Option<Vec<String>> {
        let docs = yaml::read_yaml_or_json(text).ok()?;
        docs.iter()
            .filter(|d| !d.is_null())
            .map(|d| {
                d.str_at(positions::KIND)
                    .filter(|k| plain(k))
                    .map(str::to_string)
            })
            .collect()
    };
    let mut out = Vec::new();
    for p in items {
        if let Some(target) = p.get("target") {
            out.push(target.str_at(&["kind"]).filter(|k| plain(k))?.to_string());
            continue;
        }
        let text = match (p.as_str(), p.get("path"), p.get("patch")) {
            (Some(s), _, _) if s.contains('\n') || s.contains(':') => s.to_string(),
            (Some(s), _, _) => tree.read(&join(dir, s))?,
            (None, Some(path), _) => tree.read(&join(dir, path.as_str()?))?,
            (None, None, Some(inline)) => inline.as_str()?.to_string(),
            _ => return None,
        };
        out.extend(own(&text)?);
    }
    Some(out)
}

/// The string entries of the lists under `keys`, with their line.
fn entries(k: &Node, keys: &[&str]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for key in keys {
        if let Some(Value::Seq(items)) = k.get(key).map(|n| &n.value) {
            for item in items {
                if let Some(t) = item.as_str() {
                    out.push((t.to_string(), item.line));
                }
            }
        }
    }
    out
}

fn remote(entry: &str) -> bool {
    entry.contains("://") || entry.starts_with("github.com/") || entry.contains("?ref=")
}

/// The kustomize build of `dir`, as far as the repository shows it:
/// `Err` with the reason it fails; `Ok` with the files it holds only as
/// generator data (each with the generator that holds it).
fn kustomize_check(
    tree: &dyn Files,
    dir: &str,
    cache: &Cache,
) -> Result<HashMap<String, String>, String> {
    let mut data: HashMap<String, String> = HashMap::new();
    let mut applied: BTreeSet<String> = BTreeSet::new();
    let mut seen = BTreeSet::new();
    walk_kustomization(tree, dir, cache, &mut data, &mut applied, &mut seen, 0)?;
    data.retain(|f, _| !applied.contains(f));
    Ok(data)
}

#[allow(clippy::too_many_arguments)]
fn walk_kustomization(
    tree: &dyn Files,
    dir: &str,
    cache: &Cache,
    data: &mut HashMap<String, String>,
    applied: &mut BTreeSet<String>,
    seen: &mut BTreeSet<String>,
    depth: usize,
) -> Result<(), String> {
    if depth > 32 || !seen.insert(dir.to_string()) {
        return Ok(());
    }
    let files = kustomization_files(tree, dir);
    let at = show(dir);
    let name = match files.as_slice() {
        [] => {
            return Err(format!(
                "`{at}` is listed as a kustomize resource folder but holds no kustomization (kustomize: \"unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization'\")"
            ))
        }
        [one] => join(dir, one),
        [a, b, ..] => {
            return Err(format!(
                "`{}` and `{}` are both in `{at}` (kustomize: \"Found multiple kustomization files\")",
                join(dir, a),
                join(dir, b)
            ))
        }
    };
    let text = tree.read(&name).unwrap_or_default();
    let k = match yaml::read_yaml_or_json(&text) {
        Err((line, col, why)) => {
            return Err(format!("`{name}:{line}:{col}` does not parse: {why}"))
        }
        Ok(docs) => match docs.into_iter().next() {
            Some(k) if matches!(k.value, Value::Map(_)) => k,
            _ => return Err(format!("`{name}` is not a kustomization (no mapping)")),
        },
    };
    // The default load restrictor (LoadRestrictionsRootOnly): a file a
    // kustomization loads must be in or below its folder; a folder with
    // its own kustomization is a root of its own.
    let inside = |rel: &str| dir.is_empty() || rel == dir || under(rel, dir).is_some();
    let mut resources: BTreeSet<String> = BTreeSet::new();
    for (entry, line) in entries(&k, &["resources", "bases", "components"]) {
        if remote(&entry) {
            continue;
        }
        let rel = join(dir, &entry);
        if !resources.insert(rel.clone()) {
            return Err(format!(
                "`{name}:{line}` lists `{entry}` twice (kustomize: \"may not add resource with an already registered id\")"
            ));
        }
        let is_file = tree.read(&rel).is_some();
        if !is_file && (tree.exists(&rel) || tree.kustomization(&rel).is_some()) {
            walk_kustomization(tree, &rel, cache, data, applied, seen, depth + 1)?;
            continue;
        }
        if !tree.exists(&rel) {
            return Err(format!(
                "`{name}:{line}` lists `{entry}`, which is not in the repository"
            ));
        }
        if !inside(&rel) {
            return Err(format!(
                "`{name}:{line}` lists the file `{entry}`, outside `{at}` (kustomize's default load restrictor: \"security; file ... is not in or below ...\")"
            ));
        }
        resource_parses(tree, &rel)?;
        applied.insert(rel);
    }
    let mut loaded: Vec<(String, usize)> = entries(&k, &["patchesStrategicMerge"]);
    for key in ["patches", "patchesJson6902"] {
        if let Some(Value::Seq(items)) = k.get(key).map(|n| &n.value) {
            for p in items {
                if let Some(path) = p.get("path").and_then(Node::as_str) {
                    loaded.push((path.to_string(), p.line));
                }
            }
        }
    }
    for (entry, line) in &loaded {
        let rel = join(dir, entry);
        if !remote(entry) && !inside(&rel) {
            return Err(format!(
                "`{name}:{line}` loads `{entry}`, outside `{at}` (kustomize's default load restrictor)"
            ));
        }
        applied.insert(rel);
    }
    generator_data(&k, &name, dir, data)?;
    helm_charts(&k, &name, tree, cache)
}

/// A resource file kustomize reads must parse as YAML (or JSON).
fn resource_parses(tree: &dyn Files, rel: &str) -> Result<(), String> {
    let text = tree.read(rel).unwrap_or_default();
    match yaml::read_yaml_or_json(&text) {
        Ok(_) => Ok(()),
        Err((line, col, why)) => Err(format!(
            "its kustomize resource `{rel}:{line}:{col}` does not parse ({why}), which fails `kustomize build`"
        )),
    }
}

/// The files `configMapGenerator` and `secretGenerator` entries of the
/// kustomization `k` (file `name`, in `dir`) load as data, into `data`.
fn generator_data(
    k: &Node,
    name: &str,
    dir: &str,
    data: &mut HashMap<String, String>,
) -> Result<(), String> {
    let at = show(dir);
    let inside = |rel: &str| dir.is_empty() || rel == dir || under(rel, dir).is_some();
    for key in ["configMapGenerator", "secretGenerator"] {
        let Some(Value::Seq(gens)) = k.get(key).map(|n| &n.value) else {
            continue;
        };
        for g in gens {
            let mut held: Vec<String> = entries(g, &["files", "envs"])
                .into_iter()
                .map(|(f, _)| f.rsplit('=').next().unwrap_or(&f).to_string())
                .collect();
            held.extend(g.get("env").and_then(Node::as_str).map(str::to_string));
            for f in held {
                let rel = join(dir, &f);
                if !inside(&rel) {
                    return Err(format!(
                        "`{name}:{}` loads `{f}` into a {key}, outside `{at}` (kustomize's default load restrictor)",
                        g.line
                    ));
                }
                data.entry(rel)
                    .or_insert_with(|| format!("`{key}` of `{name}:{}`", g.line));
            }
        }
    }
    Ok(())
}

/// A kustomization's `helmCharts` inflate only with `--enable-helm` in
/// the argocd-cm's build options.
fn helm_charts(k: &Node, name: &str, tree: &dyn Files, cache: &Cache) -> Result<(), String> {
    if let Some(charts) = k.get("helmCharts") {
        // The key's line.
        let line = match &k.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(key, _)| key.as_str() == Some("helmCharts"))
                .map_or(charts.line, |(key, _)| key.line),
            _ => charts.line,
        };
        let listed = matches!(&charts.value, Value::Seq(v) if !v.is_empty());
        if listed {
            match build_options(tree, cache) {
                BuildOptions::Found(_, v) if v.split_whitespace().any(|o| o == KUSTOMIZE_ENABLE_HELM) => {}
                BuildOptions::Found(at_cm, v) => {
                    return Err(format!(
                        "`{name}:{}` inflates `helmCharts`, but the argocd-cm's {KUSTOMIZE_BUILD_OPTIONS} (`{at_cm}`: `{v}`) lacks {KUSTOMIZE_ENABLE_HELM} (docs/user-guide/kustomize.md \"Kustomizing Helm charts\")",
                        line
                    ))
                }
                BuildOptions::NotFound => {
                    return Err(format!(
                        "`{name}:{}` inflates `helmCharts`, which kustomize does only with {KUSTOMIZE_ENABLE_HELM} in the argocd-cm's {KUSTOMIZE_BUILD_OPTIONS}; the repository holds no argocd-cm setting it, so the flag is not known",
                        line
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The `kustomize.buildOptions` of an `argocd-cm` ConfigMap in the
/// repository (searched once, only when a kustomization needs it).
fn build_options(tree: &dyn Files, cache: &Cache) -> BuildOptions {
    if let Some(found) = cache.build_options.borrow().clone() {
        return found;
    }
    let mut found = BuildOptions::NotFound;
    let mut level = vec![String::new()];
    'walk: for _ in 0..12 {
        let mut next = Vec::new();
        for d in &level {
            for f in tree.list(d) {
                if !(f.ends_with(".yaml") || f.ends_with(".yml")) {
                    continue;
                }
                let rel = join(d, &f);
                let Some(text) = tree.read(&rel) else {
                    continue;
                };
                if !(text.contains(ARGOCD_CM) && text.contains(KUSTOMIZE_BUILD_OPTIONS)) {
                    continue;
                }
                let Ok(docs) = yaml::read_yaml_or_json(&text) else {
                    continue;
                };
                for doc in &docs {
                    let named = doc.str_at(positions::NAME) == Some(ARGOCD_CM);
                    let kind = doc.str_at(positions::KIND) == Some(CONFIG_MAP);
                    if let (true, true, Some(v)) = (
                        named,
                        kind,
                        doc.at(&[CONFIG_MAP_DATA, KUSTOMIZE_BUILD_OPTIONS]),
                    ) {
                        found = BuildOptions::Found(
                            format!("{rel}:{}", v.line),
                            v.as_str().unwrap_or_default().to_string(),
                        );
                        break 'walk;
                    }
                }
            }
            next.extend(tree.dirs(d).into_iter().map(|c| join(d, &c)));
        }
        level = next;
        if level.is_empty() {
            break;
        }
    }
    *cache.build_options.borrow_mut() = Some(found.clone());
    found
}

/// What fails `helm template` for the chart in `dir` whatever file is
/// asked: a library chart, a value file the repository does not hold
/// (without `ignoreMissingValueFiles`).
fn helm_chart_check(src: &Source, dir: &str, tree: &dyn Files) -> Result<(), String> {
    let chart = join(dir, "Chart.yaml");
    let text = tree.read(&chart).unwrap_or_default();
    if let Ok(docs) = yaml::read_yaml_or_json(&text) {
        if let Some(t) = docs.first().and_then(|d| d.get("type")) {
            if t.as_str() == Some("library") {
                return Err(format!(
                    "`{chart}:{}` sets `type: library`: Helm does not install a library chart (\"library charts are not installable\")",
                    t.line
                ));
            }
        }
    }
    chart_renders(dir, tree)?;
    if src.ignore_missing_value_files {
        return Ok(());
    }
    for v in &src.value_files {
        if v.starts_with('$') || v.contains("://") || v.contains("{{") {
            continue;
        }
        let resolved = match v.strip_prefix('/') {
            Some(abs) => join("", abs),
            None => join(dir, v),
        };
        if !tree.exists(&resolved) {
            return Err(format!(
                "its value file `{v}` (`{resolved}`) is not in the repository and `helm.ignoreMissingValueFiles` is not set, so `helm template` fails"
            ));
        }
    }
    Ok(())
}

/// What fails `helm template` for the chart in `dir` before any value of
/// an Application matters, or what it checks that the review does not
/// follow: a `Chart.yaml` without `apiVersion` (v1 or v2), `name` or
/// `version` (Helm's `chart.Metadata.Validate`); `kubeVersion` (checked
/// against the cluster); a `values.schema.json` (values validated against
/// it); a `values.yaml` that does not parse; a `file://` dependency
/// (`Chart.yaml` or `requirements.yaml`) whose folder is not in the
/// repository; a template (any file below `templates/`, partials
/// included: Helm parses them all) whose actions do not parse (a `{{` that
/// opens no action, an `end` without its `if`/`range`/`with`/`define`/
/// `block`, or one missing), that calls `fail`, or `required` of a value
/// `values.yaml` does not set. Actions read with the one lexer
/// ([`yaml::template_actions`]).
fn chart_renders(dir: &str, tree: &dyn Files) -> Result<(), String> {
    let chart = join(dir, "Chart.yaml");
    let meta = tree
        .read(&chart)
        .and_then(|t| yaml::read_yaml_or_json(&t).ok())
        .and_then(|d| d.into_iter().next());
    for key in ["apiVersion", "name", "version"] {
        let v = meta
            .as_ref()
            .and_then(|m| m.str_at(&[key]))
            .unwrap_or_default();
        if v.trim().is_empty() {
            return Err(format!(
                "`{chart}` sets no `{key}`, which Helm requires (\"validation: chart.metadata.{} is required\"), so `helm template` fails",
                if key == "apiVersion" { "apiVersion" } else { key }
            ));
        }
        if key == "apiVersion" && !matches!(v, "v1" | "v2") {
            return Err(format!(
                "`{chart}` sets `apiVersion: {v}`, which Helm refuses (\"apiVersion '{v}' is not valid\"), so `helm template` fails"
            ));
        }
    }
    if let Some(k) = meta.as_ref().and_then(|m| m.get("kubeVersion")) {
        return Err(format!(
            "`{chart}:{}` sets `kubeVersion`, which Helm checks against the cluster's version: not followed",
            k.line
        ));
    }
    let schema = join(dir, "values.schema.json");
    if tree.exists(&schema) {
        return Err(format!(
            "`{schema}` makes Helm validate the values against it, which is not followed"
        ));
    }
    let values_file = join(dir, "values.yaml");
    let values = match tree.read(&values_file) {
        Some(text) => match yaml::read_yaml_or_json(&text) {
            Ok(docs) => docs.into_iter().next(),
            Err((line, col, why)) => {
                return Err(format!(
                    "`{values_file}:{line}:{col}` does not parse ({why}), so `helm template` fails"
                ))
            }
        },
        None => None,
    };
    let req = join(dir, "requirements.yaml");
    for (file, doc) in [
        (chart.clone(), meta.clone()),
        (
            req.clone(),
            tree.read(&req)
                .and_then(|t| yaml::read_yaml_or_json(&t).ok())
                .and_then(|d| d.into_iter().next()),
        ),
    ] {
        if let Some(Value::Seq(items)) = doc
            .as_ref()
            .and_then(|d| d.get("dependencies"))
            .map(|n| &n.value)
        {
            for d in items {
                if let Some(path) = d
                    .str_at(&["repository"])
                    .and_then(|r| r.strip_prefix("file://"))
                {
                    let rel = join(dir, path);
                    if !tree.exists(&join(&rel, "Chart.yaml")) {
                        return Err(format!(
                            "`{file}:{}` depends on `file://{path}`, which holds no chart in the repository, so `helm dependency build` fails",
                            d.line
                        ));
                    }
                }
            }
        }
    }
    first_failure(tree, &join(dir, "templates"), true, &mut |file| {
        let text = tree.read(file)?;
        template_parses(file, &text, values.as_ref()).err()
    })
    .map_or(Ok(()), Err)
}

/// The first file below `dir` (its subfolders too with `recurse`, 16
/// deep; each folder's names in order, folder by folder) that `fails`
/// says why of.
fn first_failure(
    tree: &dyn Files,
    dir: &str,
    recurse: bool,
    fails: &mut dyn FnMut(&str) -> Option<String>,
) -> Option<String> {
    let mut level = vec![dir.to_string()];
    for _ in 0..16 {
        let mut next = Vec::new();
        for folder in &level {
            let mut names = tree.list(folder);
            names.sort();
            for n in names {
                if let Some(why) = fails(&join(folder, &n)) {
                    return Some(why);
                }
            }
            if recurse {
                next.extend(tree.dirs(folder).into_iter().map(|c| join(folder, &c)));
            }
        }
        level = next;
        if level.is_empty() {
            break;
        }
    }
    None
}

/// [`chart_renders`] for one template.
fn template_parses(file: &str, text: &str, values: Option<&Node>) -> Result<(), String> {
    let actions = yaml::template_actions(text);
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    // A `{{` no action holds.
    let mut k = 0;
    while let Some(rel) = text[k..].find("{{") {
        let at = k + rel;
        if !actions.iter().any(|(s, e)| *s <= at && at < *e) {
            return Err(format!(
                "`{file}:{}` holds a `{{{{` that opens no action Go's template parser reads, so `helm template` fails (a parse error)",
                line_of(at)
            ));
        }
        k = at + 2;
    }
    let mut open: Vec<usize> = Vec::new();
    for (s, e) in &actions {
        let (expr, _, _) = yaml::action_expr(text, *s, *e);
        if expr.starts_with("/*") {
            continue;
        }
        let first = expr
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or_default();
        match first {
            "if" | "range" | "with" | "define" | "block" => open.push(*s),
            "end" if open.pop().is_none() => {
                return Err(format!(
                    "`{file}:{}` holds an `end` that closes nothing, so `helm template` fails (a parse error: \"unexpected {{{{end}}}}\")",
                    line_of(*s)
                ));
            }
            _ => {}
        }
        let words: Vec<&str> = expr
            .split(|c: char| c.is_whitespace() || "()|".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        if words.contains(&"fail") {
            return Err(format!(
                "`{file}:{}` calls `fail`, which stops `helm template` when it runs: not followed",
                line_of(*s)
            ));
        }
        if let Some(i) = words.iter().position(|w| *w == "required") {
            // Of `.Values.a.b` only: another argument is what a `range`
            // or `with` gives, read where the template is followed.
            let unset = words
                .iter()
                .skip(i + 1)
                .find_map(|w| {
                    w.strip_prefix(".Values.")
                        .or_else(|| w.strip_prefix("$.Values."))
                })
                .is_some_and(|path| {
                    let keys: Vec<&str> = path.split('.').collect();
                    values.and_then(|v| v.at(&keys)).is_none_or(Node::is_null)
                });
            if unset {
                return Err(format!(
                    "`{file}:{}` asks `required` of a value the chart's values.yaml does not set, so `helm template` fails unless the Application gives it: not followed",
                    line_of(*s)
                ));
            }
        }
    }
    if let Some(s) = open.last() {
        return Err(format!(
            "`{file}:{}` opens a block no `end` closes, so `helm template` fails (a parse error: \"unexpected EOF\")",
            line_of(*s)
        ));
    }
    Ok(())
}

/// Whether Helm renders nothing from `file` of the chart in `dir`: a
/// template whose name starts with `_` (a partial), or a file the chart's
/// `.helmignore` leaves out. `None`: it renders as the listing says.
fn helm_file_check(tree: &dyn Files, dir: &str, file: &str) -> Option<Outcome> {
    let rel = under(file, dir)?;
    let base = rel.rsplit('/').next().unwrap_or(rel);
    if (rel.starts_with("templates/") || rel.contains("/templates/")) && base.starts_with('_') {
        return Some(Outcome::NotIncluded(format!(
            "`{base}` starts with `_`: Helm renders no template whose name starts with `_` (a partial)"
        )));
    }
    let ignore = join(dir, ".helmignore");
    let text = tree.read(&ignore)?;
    let mut unsure = None;
    for (n, line) in text.lines().enumerate() {
        let rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') {
            continue;
        }
        if rule.starts_with('!') || rule.contains("**") {
            unsure.get_or_insert((n + 1, rule.to_string()));
            continue;
        }
        if helmignore_matches(rule, rel) {
            if let Some((m, r)) = unsure.or_else(|| later_negation(&text, n)) {
                return Some(Outcome::NotProven(format!(
                    "`{ignore}:{}` leaves it out, but `{ignore}:{m}` (`{r}`) is a rule that is not followed",
                    n + 1
                )));
            }
            return Some(Outcome::NotIncluded(format!(
                "`{ignore}:{}` (`{rule}`) leaves it out of the chart",
                n + 1
            )));
        }
    }
    unsure.map(|(m, r)| {
        Outcome::NotProven(format!(
            "`{ignore}:{m}` (`{r}`) is a rule that is not followed: whether Helm reads the file is not known"
        ))
    })
}

fn later_negation(text: &str, after: usize) -> Option<(usize, String)> {
    text.lines()
        .enumerate()
        .skip(after + 1)
        .map(|(n, l)| (n + 1, l.trim().to_string()))
        .find(|(_, l)| l.starts_with('!') || l.contains("**"))
}

/// Helm's `ignore.Rules`: a rule ending in `/` matches folders; a rule
/// with a `/` matches the path from the chart's folder (a leading `/`
/// dropped); one without, each name on the way. `filepath.Match` syntax.
fn helmignore_matches(rule: &str, rel: &str) -> bool {
    let (rule, dirs_only) = match rule.strip_suffix('/') {
        Some(r) => (r, true),
        None => (rule, false),
    };
    let parts: Vec<&str> = rel.split('/').collect();
    (0..parts.len()).any(|k| {
        let is_dir = k + 1 < parts.len();
        if dirs_only && !is_dir {
            return false;
        }
        let sub = parts[..=k].join("/");
        let m = |p: &str, t: &str| {
            globset::GlobBuilder::new(p)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(t))
        };
        if let Some(r) = rule.strip_prefix('/') {
            m(r, &sub)
        } else if rule.contains('/') {
            m(rule, &sub)
        } else {
            m(rule, parts[k])
        }
    })
}

/// The first file of a directory source that fails the whole render
/// (`findManifests`): each file it reads (`reads`: the extension filter
/// unless `disableExtensionFilter`, `recurse`, `include` and `exclude`;
/// not one holding the skip marker), read as `getObjsFromYAMLOrJSON`
/// reads it.
fn directory_check(
    src: &Source,
    dir: &str,
    tree: &dyn Files,
    reads: &dyn Fn(&str) -> bool,
    cache: &Cache,
) -> Result<(), String> {
    let d = &src.directory;
    let key = format!(
        "{dir}\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{}",
        d.recurse, d.include, d.exclude, d.disable_extension_filter
    );
    if let Some(found) = cache.directories.borrow().get(&key) {
        return found.clone().map_or(Ok(()), Err);
    }
    let found = first_failure(tree, dir, d.recurse, &mut |file| {
        reads(file).then(|| file_fails(file, tree)).flatten()
    });
    cache.directories.borrow_mut().insert(key, found.clone());
    found.map_or(Ok(()), Err)
}

/// Why one file a directory source reads fails the render, if it does.
fn file_fails(file: &str, tree: &dyn Files) -> Option<String> {
    let text = tree.read(file)?;
    if text.contains(SKIP_MARKER) {
        return None;
    }
    // findManifests evaluates every `.jsonnet` file it reads, and fails the
    // whole source on an evaluation error or an output that is no object
    // ("Failed to evaluate jsonnet"); the review evaluates no jsonnet.
    if file.ends_with(".jsonnet") {
        return Some(format!(
            "`{file}` is a jsonnet file the directory source evaluates (argo-cd reposerver/repository/repository.go `findManifests`), which the review does not evaluate: whether it renders, and what, is not known"
        ));
    }
    if file.ends_with(".json") {
        // A single JSON object: json.Decoder, then "Found multiple
        // objects ... Only single objects are allowed in JSON files".
        let single = text.trim_start().starts_with('{')
            && yaml::read_yaml_or_json(&text)
                .is_ok_and(|docs| docs.len() == 1 && matches!(docs[0].value, Value::Map(_)));
        if !single {
            return Some(format!(
                "`{file}:1:1` is not a single JSON object, which the repo server requires of a .json file (\"Failed to unmarshal\" / \"Only single objects are allowed in JSON files\")"
            ));
        }
        let docs = yaml::read_yaml_or_json(&text).unwrap_or_default();
        return docs.first().and_then(served).map(|why| {
            format!(
                "`{file}:1:1` is {why}: the repo server hands it to the sync as a resource, whose dry run fails for the whole Application"
            )
        });
    }
    // splitYAMLOrJSON, then: objects read before the error, or a file
    // that looks like a resource (apiVersion:, kind: and metadata:),
    // fail the render; else the file is ignored.
    let looks =
        text.contains("apiVersion:") && text.contains("kind:") && text.contains("metadata:");
    match yaml::read_yaml_or_json(&text) {
        Err((line, col, why)) => {
            let earlier = text
                .lines()
                .take(line.saturating_sub(1))
                .any(|l| l.starts_with("---"));
            (looks || earlier).then(|| {
                format!("`{file}:{line}:{col}` does not parse ({why}), and the repo server fails the whole source on it (\"Failed to unmarshal\")")
            })
        }
        Ok(docs) => {
            let mut objects = 0;
            for doc in &docs {
                if doc.is_null() {
                    continue;
                }
                let kind = doc.str_at(positions::KIND).is_some_and(|k| !k.is_empty());
                if matches!(doc.value, Value::Map(_)) && kind {
                    if let Some(why) = served(doc) {
                        return Some(format!(
                            "`{file}:{}:{}` is {why}: the repo server hands it to the sync as a resource, whose dry run fails for the whole Application",
                            doc.line, doc.col
                        ));
                    }
                    objects += 1;
                    continue;
                }
                return (objects > 0 || looks).then(|| {
                    format!(
                        "`{file}:{}:{}` is a document that is not a Kubernetes object (no `kind`), and the repo server fails the whole source on it (\"Failed to unmarshal\")",
                        doc.line, doc.col
                    )
                });
            }
            None
        }
    }
}

/// The API groups of files that configure a tool and that no cluster
/// serves: a kustomization (`kustomize.config.k8s.io`), a kustomize
/// function or plugin config (`config.kubernetes.io`,
/// `builtin`), Helm's `Chart.yaml`-like files have no `kind`.
const CLIENT_SIDE_GROUPS: [&str; 3] =
    ["kustomize.config.k8s.io", "config.kubernetes.io", "builtin"];

/// Why an object a directory source reads is no resource the API server
/// takes, if it is not: no `apiVersion` ("Object 'apiVersion' is
/// missing"), or a group only a client tool reads (a `Kustomization`
/// beside manifests: "could not find the requested resource").
fn served(doc: &Node) -> Option<String> {
    // A `.json` object without `kind` is read as an OCI manifest, not a
    // resource (getObjsFromYAMLOrJSON).
    let kind = doc.str_at(positions::KIND).filter(|k| !k.is_empty())?;
    let Some(api) = doc.str_at(&["apiVersion"]).filter(|a| !a.is_empty()) else {
        return Some(format!("a `{kind}` without `apiVersion`"));
    };
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    CLIENT_SIDE_GROUPS
        .contains(&group)
        .then(|| format!("a `{kind}` of `{api}`, a kind no cluster serves"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files held in memory.
    struct Mem(Vec<(&'static str, &'static str)>);

    impl Files for Mem {
        fn exists(&self, rel: &str) -> bool {
            self.0
                .iter()
                .any(|(p, _)| *p == rel || p.starts_with(&format!("{rel}/")))
        }
        fn read(&self, rel: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, t)| t.to_string())
        }
        fn list(&self, dir: &str) -> Vec<String> {
            self.0
                .iter()
                .filter_map(|(p, _)| under(p, dir))
                .filter(|r| !r.contains('/'))
                .map(str::to_string)
                .collect()
        }
        fn dirs(&self, _dir: &str) -> Vec<String> {
            Vec::new()
        }
        fn kustomization(&self, _dir: &str) -> Option<Node> {
            None
        }
    }

    /// getObjsFromYAMLOrJSON (argo-cd reposerver/repository/repository.go):
    /// an error with objects read before it, or in a file that looks like
    /// a resource, fails; otherwise the file is ignored. A `.json` file is
    /// one object.
    #[test]
    fn what_fails_a_directory_render() {
        let m = Mem(vec![
            (
                "a.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            ),
            ("cfg.yaml", "foo: [1, 2]\nbar: baz\n"),
            ("broken-plain.yaml", "foo: [unclosed\n"),
            (
                "broken-res.yaml",
                "apiVersion: v1\nkind: X\nmetadata: {}\nspec: [\n",
            ),
            ("later.yaml", "apiVersion: v1\nkind: A\n---\nfoo: bar\n"),
            ("empty.yaml", "---\n---\napiVersion: v1\nkind: A\n"),
            ("one.json", "{\"apiVersion\": \"v1\", \"kind\": \"A\"}"),
            ("array.json", "[{\"kind\": \"A\"}]"),
            ("two.json", "{\"kind\": \"A\"}\n{\"kind\": \"B\"}"),
            ("yaml.json", "kind: A\n"),
            ("x.jsonnet", "{"),
            (
                "kust.yaml",
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
            ),
            ("noapi.yaml", "kind: ConfigMap\nmetadata: {name: a}\n"),
        ]);
        for ok in [
            "a.yaml",
            "cfg.yaml",
            "broken-plain.yaml",
            "empty.yaml",
            "one.json",
        ] {
            assert_eq!(file_fails(ok, &m), None, "{ok}");
        }
        for bad in [
            "broken-res.yaml",
            "later.yaml",
            "array.json",
            "two.json",
            "yaml.json",
            "x.jsonnet",
            "kust.yaml",
            "noapi.yaml",
        ] {
            let why = file_fails(bad, &m).unwrap_or_else(|| panic!("{bad} passes"));
            assert!(why.contains(bad), "{why}");
        }
        assert!(file_fails("later.yaml", &m)
            .unwrap()
            .contains("later.yaml:4:1"));
    }

    /// Helm's `.helmignore` rules (`pkg/ignore`): a rule without `/`
    /// matches each name on the way, one with `/` the path from the
    /// chart, a trailing `/` folders only.
    #[test]
    fn helmignore_rules() {
        assert!(helmignore_matches("templates/a.yaml", "templates/a.yaml"));
        assert!(helmignore_matches("a.yaml", "templates/a.yaml"));
        assert!(helmignore_matches("*.yaml", "templates/a.yaml"));
        assert!(helmignore_matches("templates/", "templates/a.yaml"));
        assert!(helmignore_matches("/templates/*", "templates/a.yaml"));
        assert!(!helmignore_matches("a.yaml/", "templates/a.yaml"));
        assert!(!helmignore_matches("*.md", "templates/a.yaml"));
        assert!(!helmignore_matches("other/a.yaml", "templates/a.yaml"));
    }

    /// util/app/discovery `Discover`: a name ending in `Chart.yaml`.
    #[test]
    fn a_chart_is_a_name_ending_in_chart_yaml() {
        let m = Mem(vec![
            ("c/myChart.yaml", ""),
            ("d/Chart.yml", ""),
            ("e/Chart.yaml", ""),
        ]);
        assert!(is_chart(&m, "c"));
        assert!(!is_chart(&m, "d"));
        assert!(is_chart(&m, "e"));
    }
}
