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
//! `.` or `.Values.x` as the argument, used in a scalar or as a block of
//! YAML such as a list generator's elements). Pipes that keep the value
//! (`quote`, `default`, `required`, ...) are followed.
//!
//! Each values path found becomes a position ([`Position::ChartValue`]) in
//! every values file of that chart: `values*.yaml` beside `Chart.yaml`, and
//! the files that Applications in the tree name in `helm.valueFiles` for the
//! chart's path. An action the reader cannot follow (`tpl`, `toYaml`, a
//! computed key, `index` with a variable, a helper it cannot find, a value
//! built from several parts) at a cluster position is a [`Note`]:
//! "templated, not followed", with its file and line. Nothing is guessed.
//!
//! The result ([`Followed`]) is computed once and handed to the locator as
//! the extra paths of each values file; it only ever adds positions.

use crate::locate::Destination;
use crate::positions::{self, Position, Seg, YamlPath};
use crate::walk::{Entry, Walk};
use crate::yaml::{mask_templates, Events, MAX_DEPTH};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use yaml_rust2::parser::Event;

/// One step of a values path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    Key(String),
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
    /// Where: `templates/appproject.yaml:12` (the template's shown path).
    pub template: String,
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

/// The hook for the locator: the position a scalar of a values file holds
/// because a chart template renders it into a cluster position.
pub fn position(path: &YamlPath, kind: Option<&str>, flows: &[Flow]) -> Option<Position> {
    if kind.is_some() {
        return None;
    }
    flows
        .iter()
        .any(|f| f.path.matches(path))
        .then_some(Position::ChartValue)
}

/// The cheap test for the locator (before the path is built): `keys` are
/// the mapping keys from the root, the scalar's own key last.
pub fn may_hold(keys: &[&str], flows: &[Flow]) -> bool {
    let last = keys.last().copied();
    flows.iter().any(|f| match f.path.0.last() {
        Some(Step::Key(k)) => Some(k.as_str()) == last,
        _ => true,
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
/// main walk, which names them.
pub fn follow(walk: &Walk) -> Followed {
    // One streamed pass keeps only what a chart is made of: `Chart.yaml`,
    // files in a `templates` folder, `values*.yaml` (memory stays flat in
    // the size of the tree), each with its path with `.`/`..` resolved.
    let mut entries = Vec::new();
    let mut normals = Vec::new();
    for found in walk.files() {
        let crate::walk::Found::Entry(e) = found else {
            continue;
        };
        let name = e.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let keep = is_chart(name)
            || is_values(name)
            || e.path.components().any(|c| c.as_os_str() == "templates");
        if keep {
            normals.push(normal(&e.path));
            entries.push(e);
        }
    }
    let charts: Vec<&Entry> = entries
        .iter()
        .filter(|e| {
            e.path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_chart)
        })
        .collect();
    let mut out = Followed::default();
    if charts.is_empty() {
        return out;
    }
    let shown: HashMap<&Path, &str> = normals
        .iter()
        .map(PathBuf::as_path)
        .zip(entries.iter().map(|e| e.rel.as_str()))
        .collect();
    let mut app_values: Option<Vec<(String, Vec<String>)>> = None;
    // Per chart: its folder, the values paths its templates render into
    // cluster positions, and its Applications (for the tier table).
    #[allow(clippy::type_complexity)]
    let mut read: Vec<(
        PathBuf,
        Vec<Flow>,
        Vec<(PathBuf, Vec<(Destination, Vec<ValuesPath>)>)>,
    )> = Vec::new();
    for chart in charts {
        let Some(dir) = chart.path.parent() else {
            continue;
        };
        let templates_dir = normal(&dir.join("templates"));
        let subcharts = normal(&dir.join("charts"));
        // The chart's templates, then its subcharts' helpers: named
        // templates share one namespace in Helm (a library chart's
        // `common.labels`), but only the chart's own templates render here.
        let own = |n: &Path| n.starts_with(&templates_dir);
        let helper = |n: &Path| {
            n.starts_with(&subcharts)
                && n.extension().is_some_and(|x| x == "tpl")
                && n.components().any(|c| c.as_os_str() == "templates")
        };
        let mut files: Vec<(&Entry, bool)> = Vec::new();
        for (e, n) in entries.iter().zip(&normals) {
            if own(n) {
                files.push((e, true));
            } else if helper(n) {
                files.push((e, false));
            }
        }
        files.sort_by_key(|(_, own)| !own);
        let mut texts = Vec::new();
        let mut renders = Vec::new();
        for (e, own) in &files {
            if let Ok(t) = std::fs::read_to_string(&e.path) {
                texts.push((*e, t));
                renders.push(*own);
            }
        }
        let mut defines = HashMap::new();
        // The chart's own named templates win over its subcharts'.
        for (i, (_, t)) in texts.iter().enumerate().rev() {
            collect_defines(t, i, &mut defines);
        }
        let chart_reader = Chart {
            texts: &texts,
            defines: &defines,
        };
        let mut flows = Vec::new();
        let mut pending = Vec::new();
        for (i, (e, _)) in texts.iter().enumerate() {
            let name = e.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !renders[i]
                || name.starts_with('_')
                || !(name.ends_with(".yaml") || name.ends_with(".yml"))
            {
                continue; // helpers and NOTES.txt render no manifest of their own
            }
            let found = chart_reader.read(i);
            out.notes.extend(found.notes);
            if !found.flows.is_empty() {
                flows.extend(found.flows.iter().cloned());
            }
            if !found.destinations.is_empty() {
                pending.push((e.path.clone(), found.destinations));
            }
        }
        read.push((normal(dir), flows, pending));
    }
    // A subchart's values are the parent's under the subchart's name
    // (`charts/<name>/`): deepest first, so they climb every level.
    read.sort_by_key(|(dir, ..)| std::cmp::Reverse(dir.components().count()));
    for i in 0..read.len() {
        let dir = read[i].0.clone();
        let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let parent = dir
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "charts"))
            .and_then(Path::parent);
        let Some(j) = parent.and_then(|p| read.iter().position(|(d, ..)| d == p)) else {
            continue;
        };
        let lifted: Vec<Flow> = read[i]
            .1
            .iter()
            .map(|f| Flow {
                path: ValuesPath(vec![Step::Key(name.clone())]).join(&f.path.0),
                ..f.clone()
            })
            .collect();
        read[j].1.extend(lifted);
    }
    for (chart_dir, flows, pending) in read {
        // The chart's values files.
        let mut values: BTreeSet<PathBuf> = normals
            .iter()
            .filter(|n| n.parent() == Some(chart_dir.as_path()))
            .filter(|n| {
                n.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(is_values)
            })
            .cloned()
            .collect();
        let apps = if flows.is_empty() {
            &[][..]
        } else {
            // A second streamed pass, only when a chart has positions.
            app_values.get_or_insert_with(|| value_files(walk_entries(walk)))
        };
        for (source_path, files) in apps.iter() {
            if ends_with_path(&chart_dir, source_path) {
                // Keyed by path: a file outside the walk is never looked up.
                values.extend(files.iter().map(|f| normal(&chart_dir.join(f))));
            }
        }
        // Where each destination's values come from, for the tier table.
        for (path, list) in pending {
            let list = list
                .into_iter()
                .map(|(mut d, used)| {
                    if !used.is_empty() {
                        d.from = Some(describe(&used, &values, &shown));
                    }
                    d
                })
                .collect();
            out.destinations.insert(normal(&path), list);
        }
        for v in values {
            let list = out.values.entry(v).or_default();
            for f in &flows {
                if !list.iter().any(|g| g.path == f.path) {
                    list.push(f.clone());
                }
            }
        }
    }
    out.notes.sort();
    out.notes.dedup();
    out
}

fn is_chart(name: &str) -> bool {
    name == "Chart.yaml" || name == "Chart.yml"
}

fn is_values(name: &str) -> bool {
    name.starts_with("values") && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

fn walk_entries(walk: &Walk) -> impl Iterator<Item = Entry> + '_ {
    walk.files().filter_map(|f| match f {
        crate::walk::Found::Entry(e) => Some(e),
        crate::walk::Found::Skipped(_) => None,
    })
}

/// `values environments[].server in charts/x/values.yaml, ...`.
fn describe(
    used: &[ValuesPath],
    values: &BTreeSet<PathBuf>,
    shown: &HashMap<&Path, &str>,
) -> String {
    let paths: BTreeSet<String> = used.iter().map(ValuesPath::to_string).collect();
    let files: Vec<String> = values
        .iter()
        .map(|v| match shown.get(v.as_path()) {
            Some(rel) => rel.to_string(),
            None => v.display().to_string(),
        })
        .collect();
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
/// template) in the walk that names value files.
fn value_files(entries: impl Iterator<Item = Entry>) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for e in entries {
        if e.role != crate::walk::Role::Yaml {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            continue;
        };
        if !text.contains("valueFiles") {
            continue;
        }
        let masked = mask_templates(&text).map(|(m, _)| m);
        let text = masked.as_deref().unwrap_or(&text);
        if too_deep(text) {
            continue; // the main walk names it
        }
        let Ok(docs) = crate::yaml::read_yaml_or_json(text) else {
            continue;
        };
        // Applications are read by the after-merge model's rules, once.
        for doc in &docs {
            let m = crate::feeders::Manifest { file: "", doc };
            let Some(app) = crate::feeders::app_of(&m) else {
                continue;
            };
            for src in &app.sources {
                let Some(path) = &src.path else { continue };
                if src.value_files.is_empty() {
                    continue;
                }
                let files = src
                    .value_files
                    .iter()
                    .filter(|f| !f.starts_with('$'))
                    .cloned()
                    .collect();
                out.push((path.clone(), files));
            }
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

fn actions(text: &str) -> Vec<Action> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(rel) = text.get(i..).and_then(|s| s.find("{{")) {
        let start = i + rel;
        let Some(close) = text[start + 2..].find("}}") else {
            break;
        };
        let end = start + 2 + close + 2;
        let inner = &text[start + 2..end - 2];
        let inner = inner.strip_prefix('-').unwrap_or(inner);
        let inner = inner.strip_suffix('-').unwrap_or(inner);
        out.push(Action {
            start,
            end,
            expr: inner.trim().to_string(),
        });
        i = end;
    }
    out
}

/// The first word of an action.
fn head(expr: &str) -> &str {
    expr.split_whitespace().next().unwrap_or("")
}

fn opens(expr: &str) -> bool {
    matches!(head(expr), "if" | "with" | "range" | "define" | "block")
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
}

impl Val {
    fn field(&self, keys: &[&str]) -> Val {
        match self {
            Val::Root => match keys.split_first() {
                None => Val::Root,
                Some((&"Values", rest)) => Val::Values(ValuesPath(
                    rest.iter().map(|k| Step::Key(k.to_string())).collect(),
                )),
                Some(_) => Val::Other,
            },
            Val::Values(p) => {
                let more: Vec<Step> = keys.iter().map(|k| Step::Key(k.to_string())).collect();
                Val::Values(p.join(&more))
            }
            Val::Other => Val::Other,
            Val::Unknown(w) => Val::Unknown(w.clone()),
        }
    }

    fn each(&self) -> Val {
        match self {
            Val::Values(p) => Val::Values(p.join(&[Step::Each])),
            Val::Root => Val::Unknown("`range` over the root context".into()),
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

/// Splits an expression into words, keeping quoted strings and
/// parenthesised groups whole, and `|` as a word of its own.
fn words(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for c in expr.chars() {
        if let Some(q) = quote {
            cur.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' | '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            '|' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push("|".into());
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn unquote(w: &str) -> &str {
    let w = w.trim();
    for q in ['"', '`'] {
        if let Some(s) = w.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return s;
        }
    }
    w
}

fn is_literal(w: &str) -> bool {
    w.starts_with('"')
        || w.starts_with('`')
        || w.starts_with('\'')
        || w.parse::<f64>().is_ok()
        || matches!(w, "true" | "false" | "nil")
}

/// Functions whose result is their (last) argument's value, as far as a
/// cluster position is concerned.
fn keeps_value(f: &str) -> bool {
    matches!(
        f,
        "quote"
            | "squote"
            | "default"
            | "required"
            | "toString"
            | "trim"
            | "trimSuffix"
            | "trimPrefix"
            | "trimAll"
            | "lower"
            | "upper"
            | "print"
            | "toYaml"
            | "nindent"
            | "indent"
    )
}

/// How many levels of named templates are followed.
const MAX_CALLS: usize = 8;
/// How deep parenthesised expressions are read.
const MAX_NESTING: usize = 64;

struct Chart<'c> {
    texts: &'c [(&'c Entry, String)],
    defines: &'c HashMap<String, Define>,
}

/// What one template file gives.
#[derive(Default)]
struct Read {
    flows: Vec<Flow>,
    notes: Vec<Note>,
    /// The Applications and ApplicationSets rendered, with the values paths
    /// their destination follows (the values files are not known yet).
    destinations: Vec<(Destination, Vec<ValuesPath>)>,
}

/// A template expanded: the text with block includes inlined, and for each
/// line, the file and line it comes from.
struct Expanded {
    text: String,
    origin: Vec<(usize, usize)>,
}

impl Chart<'_> {
    fn read(&self, file: usize) -> Read {
        let mut read = Read::default();
        let ex = self.expand(file);
        let rel = |o: (usize, usize)| (self.texts[o.0].0.rel.clone(), o.1);
        // 0-based line of a byte offset (one index for the whole file).
        let breaks: Vec<usize> = ex.text.match_indices('\n').map(|(i, _)| i).collect();
        let line_at = |off: usize| breaks.partition_point(|&b| b < off);
        let line_of = |off: usize| {
            let line = line_at(off);
            ex.origin.get(line).copied().unwrap_or((file, line + 1))
        };
        // Scopes of every action, in order.
        let acts = actions(&ex.text);
        let mut values: Vec<Option<Vec<Val>>> = vec![None; acts.len()];
        let root = Scope {
            dot: Val::Root,
            root: Val::Root,
            vars: BTreeMap::new(),
        };
        let mut stack = vec![root];
        // For a `with`/`range` frame, the scope outside it: its `else`
        // branch runs with the outer dot.
        let mut outer: Vec<Option<Scope>> = vec![None];
        for (i, a) in acts.iter().enumerate() {
            let scope = stack.last().cloned().expect("the root scope stays");
            let w = words(&a.expr);
            let first = w.first().map(String::as_str).unwrap_or("");
            match first {
                "" => {}
                _ if a.expr.starts_with("/*") => {}
                "end" => {
                    if stack.len() > 1 {
                        stack.pop();
                        outer.pop();
                    }
                }
                "if" | "define" | "block" => {
                    stack.push(scope);
                    outer.push(None);
                }
                "else" => {
                    if let (Some(Some(o)), Some(top)) = (outer.last(), stack.last_mut()) {
                        *top = o.clone();
                    }
                }
                CALL => {
                    outer.push(None);
                    let arg = self.eval(&w[1..], &scope, 0);
                    let arg = arg.into_iter().next().unwrap_or(Val::Other);
                    stack.push(Scope {
                        dot: arg.clone(),
                        root: arg,
                        vars: BTreeMap::new(),
                    });
                }
                "with" | "range" => {
                    let mut next = scope.clone();
                    let (vars, expr): (Vec<String>, &[String]) =
                        match w.iter().position(|x| x == ":=") {
                            Some(p) => (
                                w[1..p]
                                    .join(" ")
                                    .split(',')
                                    .map(|v| v.trim().to_string())
                                    .filter(|v| !v.is_empty())
                                    .collect(),
                                &w[p + 1..],
                            ),
                            None => (Vec::new(), &w[1..]),
                        };
                    let v = self
                        .eval(expr, &scope, 0)
                        .into_iter()
                        .next()
                        .unwrap_or(Val::Other);
                    let v = if first == "range" { v.each() } else { v };
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
                    stack.push(next);
                    outer.push(Some(scope));
                }
                _ if w.get(1).is_some_and(|x| x == ":=" || x == "=") => {
                    let v = self
                        .eval(&w[2..], &scope, 0)
                        .into_iter()
                        .next()
                        .unwrap_or(Val::Other);
                    if let Some(s) = stack.last_mut() {
                        s.vars.insert(first.to_string(), v);
                    }
                }
                _ => values[i] = Some(self.eval(&w, &scope, 0)),
            }
        }

        // The manifest: actions masked, parsed, scalars classified.
        let Some((masked, _)) = mask_templates(&ex.text) else {
            return read; // no action: nothing to follow
        };
        let mut docs: Vec<TDoc> = vec![TDoc::default()];
        // (0-based line, path of the key on it, document) of every mapping key.
        let mut key_lines: Vec<(usize, Vec<Seg>, usize)> = Vec::new();
        let mut path: Vec<(bool, Option<String>, usize, bool)> = Vec::new(); // (is_map, key, index, expect_key)
        for item in Events::new(&masked) {
            let Ok((ev, off)) = item else {
                break; // a template that does not parse: nothing more to read
            };
            match ev {
                Event::DocumentStart => {
                    if !docs.last().is_some_and(TDoc::is_empty) {
                        docs.push(TDoc::default());
                    }
                    path.clear();
                }
                Event::MappingStart(..) | Event::SequenceStart(..) => {
                    if path.len() >= MAX_DEPTH {
                        break; // deeper than rebind reads: the main walk names it
                    }
                    let is_map = matches!(ev, Event::MappingStart(..));
                    path.push((is_map, None, 0, true));
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    path.pop();
                    advance(&mut path);
                }
                Event::Scalar(v, ..) => {
                    let is_key = path.last().is_some_and(|f| f.0 && f.3);
                    if is_key {
                        if let Some(f) = path.last_mut() {
                            f.1 = Some(v.clone());
                        }
                        // Where a block action under this key lands.
                        let segs = path_segs(&path);
                        key_lines.push((line_at(off), segs, docs.len() - 1));
                    } else {
                        let segs = path_segs(&path);
                        let doc = docs.last_mut().expect("one doc at least");
                        // The parser's offsets fall on characters of the
                        // masked text; the original may differ inside an action.
                        let Some(rest) = ex.text.get(off..) else {
                            advance(&mut path);
                            continue;
                        };
                        let line_end = rest.find(['\n', '\r']).map_or(ex.text.len(), |p| off + p);
                        let here: Vec<usize> = acts
                            .iter()
                            .enumerate()
                            .filter(|(_, a)| a.start >= off && a.start < line_end)
                            .map(|(i, _)| i)
                            .collect();
                        let written = if here.is_empty() {
                            v.clone()
                        } else {
                            ex.text[off..line_end].to_string()
                        };
                        match positions::fact(&keys_of(&segs)) {
                            Some(positions::Fact::Kind) if segs.len() == 1 => {
                                doc.kind = Some(v.clone())
                            }
                            Some(positions::Fact::Name) => {
                                doc.name = Some(if here.is_empty() {
                                    v.clone()
                                } else {
                                    "{{template}}".into()
                                })
                            }
                            Some(positions::Fact::DestinationServer) => doc.server = Some(written),
                            Some(positions::Fact::DestinationName) => {
                                doc.dest_name = Some(v.clone())
                            }
                            _ => {}
                        }
                        if !here.is_empty() {
                            let raw = ex.text[off..line_end].trim_end();
                            let raw = raw
                                .split(" #")
                                .next()
                                .unwrap_or(raw)
                                .trim_matches(['"', '\''])
                                .trim();
                            let whole = here.len() == 1 && {
                                let a = &acts[here[0]];
                                raw.len() == a.end - a.start
                            };
                            doc.scalars.push(TScalar {
                                path: YamlPath(segs),
                                actions: here,
                                whole,
                                off,
                            });
                        }
                    }
                    advance(&mut path);
                }
                Event::Alias(..) => advance(&mut path),
                _ => {}
            }
        }

        // Actions alone on their line that render a block of YAML
        // (`{{- toYaml .Values.destinations | nindent 4 }}`): they land
        // under the nearest key above with less indentation.
        let lines: Vec<&str> = ex.text.split('\n').collect();
        for (ai, a) in acts.iter().enumerate() {
            let Some(vals) = &values[ai] else { continue };
            let line = line_at(a.start);
            let text = lines.get(line).copied().unwrap_or("");
            if text.trim().len() != a.end - a.start {
                continue; // inside a scalar: read with the scalars below
            }
            let w = words(&a.expr);
            let indent = w
                .iter()
                .position(|x| x == "nindent" || x == "indent")
                .and_then(|p| w.get(p + 1)?.parse().ok())
                .unwrap_or(indentation(text));
            let Some(parent) = (0..line).rev().find(|&l| {
                let t = lines[l];
                let content = t.trim();
                !content.is_empty() && !content.starts_with("{{") && indentation(t) < indent
            }) else {
                continue;
            };
            let Some((_, at, di)) = key_lines.iter().rev().find(|(l, ..)| *l == parent) else {
                continue;
            };
            let Some(kind) = docs[*di].kind.as_deref() else {
                continue;
            };
            let under = positions_under(kind, at, docs[*di].server.as_deref());
            if under.is_empty() {
                continue;
            }
            let (file_rel, line_no) = rel(line_of(a.start));
            let shown = format!(
                "`{{{{ {} }}}}` renders a block at {} ({kind})",
                a.expr,
                YamlPath(at.clone())
            );
            for v in vals {
                match v {
                    Val::Values(p) => {
                        for (position, rest) in &under {
                            match rest.clone() {
                                Some(steps) => {
                                    docs[*di].block_flows.push(p.join(&steps));
                                    read.flows.push(Flow {
                                        path: p.join(&steps),
                                        position: *position,
                                        template: format!("{file_rel}:{line_no}"),
                                    });
                                }
                                None => read.notes.push(Note {
                                    rel: file_rel.clone(),
                                    line: line_no,
                                    message: format!(
                                        "{shown}: which of its keys is a {} is not known",
                                        position.as_str()
                                    ),
                                }),
                            }
                        }
                    }
                    Val::Unknown(why) => read.notes.push(Note {
                        rel: file_rel.clone(),
                        line: line_no,
                        message: format!("{shown}: {why}"),
                    }),
                    Val::Root => read.notes.push(Note {
                        rel: file_rel.clone(),
                        line: line_no,
                        message: format!("{shown}: the whole root context"),
                    }),
                    Val::Other => {}
                }
            }
        }

        for doc in &docs {
            let Some(kind) = doc.kind.as_deref() else {
                continue;
            };
            let cx = positions::Context {
                kind: Some(kind),
                template_server: doc.server.as_deref(),
                ..positions::Context::default()
            };
            let mut used = doc.block_flows.clone();
            for s in &doc.scalars {
                let Some(position) = positions::classify(&s.path, &cx).filter(|p| whole_value(*p))
                else {
                    continue;
                };
                let (file_rel, line) = rel(line_of(s.off));
                for &ai in &s.actions {
                    let a = &acts[ai];
                    let Some(vals) = &values[ai] else { continue };
                    let shown = format!("`{{{{ {} }}}}` at {} ({kind})", a.expr, s.path);
                    for v in vals {
                        match v {
                            Val::Values(p) if s.whole => {
                                used.push(p.clone());
                                read.flows.push(Flow {
                                    path: p.clone(),
                                    position,
                                    template: format!("{file_rel}:{line}"),
                                });
                            }
                            Val::Values(_) => read.notes.push(Note {
                                rel: file_rel.clone(),
                                line,
                                message: format!("{shown}: the value is built from several parts"),
                            }),
                            Val::Unknown(why) => read.notes.push(Note {
                                rel: file_rel.clone(),
                                line,
                                message: format!("{shown}: {why}"),
                            }),
                            Val::Root => read.notes.push(Note {
                                rel: file_rel.clone(),
                                line,
                                message: format!("{shown}: the whole root context"),
                            }),
                            Val::Other => {}
                        }
                    }
                }
            }
            if matches!(kind, "Application" | "ApplicationSet")
                && (doc.server.is_some() || doc.dest_name.is_some())
            {
                let d = Destination {
                    resource: match &doc.name {
                        Some(n) => format!("{kind}/{n}"),
                        None => kind.to_string(),
                    },
                    server: doc.server.clone(),
                    name: doc.dest_name.clone(),
                    from: None,
                };
                read.destinations.push((d, used));
            }
        }
        read
    }

    /// Evaluates a pipeline (`words`) in `scope`: what it may render.
    fn eval(&self, w: &[String], scope: &Scope, depth: usize) -> Vec<Val> {
        let mut cmds = w.split(|x| x == "|").filter(|c| !c.is_empty());
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
            return vec![self.operand(f, scope, depth)];
        }
        let args = &c[1..];
        let last = |this: &Self| -> Vec<Val> {
            match &piped {
                Some(v) => v.clone(),
                None => args
                    .last()
                    .map(|a| vec![this.operand(a, scope, depth)])
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
                let mut all: Vec<Val> =
                    args.iter().map(|a| self.operand(a, scope, depth)).collect();
                all.extend(piped.unwrap_or_default());
                all
            }
            "index" => {
                let mut operands: Vec<&String> = args.iter().collect();
                let base = match &piped {
                    Some(v) => v.first().cloned().unwrap_or(Val::Other),
                    None if !operands.is_empty() => self.operand(operands.remove(0), scope, depth),
                    None => return vec![Val::Other],
                };
                if let Some(k) = operands.iter().find(|k| !is_literal(k)) {
                    return vec![Val::Unknown(format!("`index` with a computed key `{k}`"))];
                }
                let keys: Vec<&str> = operands.iter().map(|k| unquote(k)).collect();
                vec![base.field(&keys)]
            }
            f if keeps_value(f) => {
                let mut v = last(self);
                if f == "default" && piped.is_none() {
                    // `default D X`: X, or D when X is empty (a literal).
                    if let Some(d) = args.first().filter(|_| args.len() > 1) {
                        v.push(self.operand(d, scope, depth));
                    }
                } else if f == "default" {
                    if let Some(d) = args.first() {
                        v.push(self.operand(d, scope, depth));
                    }
                }
                v
            }
            "tpl" | "toJson" | "fromYaml" | "printf" | "cat" | "list" | "dict" | "get"
            | "pluck" | "first" | "last" | "join" => {
                if all_other(&last(self)) && args.iter().all(|a| is_literal(a)) {
                    vec![Val::Other]
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

    /// A single operand: a field chain, a variable, a literal, `(...)`.
    fn operand(&self, w: &str, scope: &Scope, depth: usize) -> Val {
        if let Some(group) = w.strip_prefix('(') {
            if depth > MAX_NESTING {
                return Val::Unknown("expressions nested too deep".into());
            }
            // `(expr)` or `(expr).field.chain`.
            let Some(close) = group.rfind(')') else {
                return Val::Unknown(format!("`{w}`"));
            };
            let v = self
                .eval(&words(&group[..close]), scope, depth + 1)
                .into_iter()
                .next()
                .unwrap_or(Val::Other);
            let keys: Vec<&str> = group[close + 1..]
                .split('.')
                .filter(|k| !k.is_empty())
                .collect();
            return v.field(&keys);
        }
        if is_literal(w) {
            return Val::Other;
        }
        if w == "." {
            return scope.dot.clone();
        }
        if let Some(rest) = w.strip_prefix('.') {
            let keys: Vec<&str> = rest.split('.').collect();
            if keys.first() == Some(&"Values") && scope.dot != Val::Root {
                return Val::Unknown("`.Values` where the dot is not the chart's root".into());
            }
            return scope.dot.field(&keys);
        }
        if let Some(rest) = w.strip_prefix('$') {
            let (name, keys) = match rest.find('.') {
                Some(p) => (&rest[..p], &rest[p + 1..]),
                None => (rest, ""),
            };
            let keys: Vec<&str> = keys.split('.').filter(|k| !k.is_empty()).collect();
            let base = if name.is_empty() {
                scope.root.clone()
            } else {
                match scope.vars.get(&format!("${name}")) {
                    Some(v) => v.clone(),
                    None => return Val::Unknown(format!("the variable `${name}`")),
                }
            };
            return base.field(&keys);
        }
        Val::Other
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
        let scope = Scope {
            dot: arg.clone(),
            root: arg,
            vars: BTreeMap::new(),
        };
        let mut scopes = vec![scope];
        let mut out = Vec::new();
        for a in actions(body) {
            let w = words(&a.expr);
            let cur = scopes.last().cloned().expect("one scope");
            match head(&a.expr) {
                "" | "else" => {}
                _ if a.expr.starts_with("/*") => {}
                "end" => {
                    if scopes.len() > 1 {
                        scopes.pop();
                    }
                }
                "if" => scopes.push(cur),
                "with" | "range" | "define" | "block" => {
                    return vec![Val::Unknown(format!(
                        "the named template {name:?} uses `{}`",
                        head(&a.expr)
                    ))]
                }
                _ if w.get(1).is_some_and(|x| x == ":=" || x == "=") => {
                    let v = self
                        .eval(&w[2..], &cur, depth + 1)
                        .into_iter()
                        .next()
                        .unwrap_or(Val::Other);
                    if let Some(s) = scopes.last_mut() {
                        s.vars.insert(w[0].clone(), v);
                    }
                }
                _ => out.extend(self.eval(&w, &cur, depth + 1)),
            }
        }
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

fn path_segs(path: &[(bool, Option<String>, usize, bool)]) -> Vec<Seg> {
    path.iter()
        .map(|f| {
            if f.0 {
                Seg::Key(f.1.clone().unwrap_or_default())
            } else {
                Seg::Index(f.2)
            }
        })
        .collect()
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

/// A frame has finished one child: the next is a key (or the next index).
fn advance(path: &mut [(bool, Option<String>, usize, bool)]) {
    if let Some(f) = path.last_mut() {
        if f.0 {
            f.3 = !f.3;
        } else {
            f.2 += 1;
        }
    }
}

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
}

impl TDoc {
    fn is_empty(&self) -> bool {
        self.kind.is_none() && self.scalars.is_empty()
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
            role: crate::walk::Role::Yaml,
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
        let chart = Chart {
            texts: &texts,
            defines: &defines,
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

    #[test]
    fn direct_root_range_with_and_variables() {
        let t = format!(
            "{PROJECT_HEAD}    - server: {{{{ .Values.hub.server | quote }}}}\n\
             \x20   - server: '{{{{ $.Values.dr.server }}}}'\n\
             \x20 {{{{- range .Values.environments }}}}\n\
             \x20   - server: {{{{ .server }}}}\n\
             \x20 {{{{- end }}}}\n\
             \x20 {{{{- range $i, $e := .Values.regions }}}}\n\
             \x20   - server: {{{{ $e.api.url | default \"https://kubernetes.default.svc\" }}}}\n\
             \x20 {{{{- end }}}}\n\
             \x20 {{{{- with .Values.edge }}}}\n\
             \x20   - server: {{{{ required \"edge.url\" .url }}}}\n\
             \x20 {{{{- end }}}}\n\
             \x20 {{{{- $ops := .Values.ops }}}}\n\
             \x20   - server: {{{{ $ops.server }}}}\n\
             \x20   - server: {{{{ index .Values \"mgmt\" \"server\" }}}}\n\
             \x20 {{{{- with .Values.spoke }}}}\n\
             \x20   - server: {{{{ .server }}}}\n\
             \x20 {{{{- else }}}}\n\
             \x20   - server: {{{{ .Values.fallback.server }}}}\n\
             \x20 {{{{- end }}}}\n\
             \x20 {{{{- range .Values.urls }}}}\n\
             \x20   - server: {{{{ . }}}}\n\
             \x20 {{{{- end }}}}\n"
        );
        let (flows, notes) = read(&[("templates/project.yaml", &t)]);
        assert_eq!(
            flows,
            [
                "dr.server project destination",
                "edge.url project destination",
                "environments[].server project destination",
                "fallback.server project destination",
                "hub.server project destination",
                "mgmt.server project destination",
                "ops.server project destination",
                "regions[].api.url project destination",
                "spoke.server project destination",
                "urls[] project destination",
            ],
            "{notes:?}"
        );
        assert!(notes.is_empty(), "{notes:?}");
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
        assert!(flows.is_empty(), "{flows:?}");
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
                role: crate::walk::Role::Yaml,
            })
            .collect();
        assert_eq!(
            value_files(entries.into_iter()),
            [("charts/a".to_string(), vec!["v.yaml".to_string()])]
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
