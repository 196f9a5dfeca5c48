//! Applications a Helm chart of the repository renders: an Application or
//! ApplicationSet in a chart's `templates/` exists on the hub only as the
//! chart renders it, with the values the Application deploying the chart
//! gives (docs/operator-manual/cluster-bootstrapping.md, the Helm
//! app-of-apps). When exactly one Application of this repository deploys
//! the chart and every action of the template is one this module follows,
//! the template is rendered with those values (the chart's `values.yaml`,
//! then the Application's value files in order, then what it gives
//! inline, as ArgoCD hands them to Helm) and
//! the Applications it renders replace the template's. Anything else stays
//! "not proven", naming the chart and the file:line that is not followed.
//!
//! Each action's expression is read by the one reader of Helm template
//! expressions discovery also reads them with ([`gt`]: words, Go string
//! literals, Go's `%q`, the keyword table, Go's truth); the actions are cut
//! by the one lexer ([`yaml::template_actions`], [`yaml::action_expr`]).
//! Followed: `{{ .Values.a.b }}` and `{{ $.Values.a.b }}`, piped through
//! `quote` (Go's `%q`), `squote`, `trim`, `toString`, `default` of a Go
//! string literal, `toYaml`, `indent`/`nindent`; `if`/`else`/`end` over
//! such a value (Go's truth: false, 0, null, empty are false), `range`
//! over a list or a mapping's values (`.`, `.a.b`, `$x` inside),
//! comments, and the `{{-`/`-}}` trim markers. Not followed: `with`,
//! `include`, `tpl`, other functions, `.Values` where a `range` moved the
//! dot, `.Release`, `.Chart`, a
//! value the values files do not set, a mapping several values documents
//! set (Helm merges them), a `$ref` value file. The deploying
//! Application's inline values (`helm.values`, `valuesObject`,
//! `parameters`) come after its value files, in ArgoCD's precedence
//! ([`crate::find::resolve::charts`]).

use crate::find::resolve::charts::{inline_values, ValuesDoc};
use crate::find::resolve::{value_file, ValueFile};
use crate::model::application::{app_of, App, Manifest, Source};
use crate::syntax::gotemplate::{self as gt, Operand};
use crate::syntax::yaml::{self, Node, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The repository root and its files as the merge carries them (inside a
/// git work tree, only what git tracks and the rebind rewrites).
pub struct Carried<'a> {
    pub root: &'a Path,
    pub files: &'a dyn super::render_checks::Files,
}

/// Where a template's rendering stops: the 1-based line and why.
type Stop = (usize, String);

/// Replaces each Application the model read from a chart template by what
/// the chart renders, when that is followed; else names, in the
/// Application's `rendered` reason, the chart and the file:line not
/// followed.
pub fn follow(apps: &mut Vec<App>, tree: &Carried, this_repo: &dyn Fn(&Source) -> bool) {
    let files: Vec<String> = apps
        .iter()
        .filter(|a| a.rendered.is_some() && chart_of(tree, &a.file).is_some())
        .map(|a| a.file.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for file in files {
        let Some(chart) = chart_of(tree, &file) else {
            continue;
        };
        match render_file(apps, tree, this_repo, &chart, &file) {
            Ok(made) => {
                apps.retain(|a| a.file != file);
                apps.extend(made);
            }
            Err(why) => {
                for a in apps.iter_mut().filter(|a| a.file == file) {
                    a.rendered = Some(format!(
                        "is rendered by the chart `{chart}` (`{file}`), not followed: {why}"
                    ));
                }
            }
        }
    }
}

/// How the reason of an Application held in Helm values starts (see
/// `feeders::read_apps`): such an Application exists only if a chart
/// renders it.
pub const HELD_IN_VALUES: &str = "is held in Helm values";

/// Clears the reason of each Application held in a values file of a chart
/// of the repository when the chart, with the values of the Application
/// deploying it, renders that Application as written (`range` over the
/// list and `toYaml` of each element, as `extraObjects` templates do);
/// else names the charts tried and why they are not followed.
pub fn follow_values(apps: &mut [App], tree: &Carried, this_repo: &dyn Fn(&Source) -> bool) {
    for k in 0..apps.len() {
        let held = apps[k].rendered.as_deref();
        let Some(reason) = held.filter(|r| r.starts_with(HELD_IN_VALUES)) else {
            continue;
        };
        let reason = reason.to_string();
        let file = apps[k].file.clone();
        let mut why = Vec::new();
        let mut found = false;
        for chart in charts_reading(apps, tree, this_repo, &file) {
            match values_of(apps, tree, this_repo, &chart) {
                Ok(values) => {
                    let made: Vec<App> = templates_of(tree, &chart)
                        .iter()
                        .filter_map(|t| render_text(tree, t, &values).ok())
                        .flatten()
                        .collect();
                    found |= made.iter().any(|m| same(m, &apps[k]));
                    if !found {
                        why.push(format!("the chart `{chart}` does not render it as written"));
                    }
                }
                Err(w) => why.push(format!("the chart `{chart}`: {w}")),
            }
        }
        apps[k].rendered = if found {
            None
        } else if why.is_empty() {
            Some(format!(
                "{reason} (no chart of the repository reads that file)"
            ))
        } else {
            Some(format!("{reason}: {}", why.join("; ")))
        };
    }
}

/// Whether two Applications say the same: kind, name, sources, policy.
fn same(a: &App, b: &App) -> bool {
    let key = |x: &App| {
        let srcs: Vec<_> = x
            .sources
            .iter()
            .map(|s| {
                (
                    s.repo_url.clone(),
                    s.path.clone(),
                    s.target_revision.clone(),
                )
            })
            .collect();
        (x.kind, x.name.clone(), srcs, x.automated)
    };
    key(a) == key(b)
}

/// The charts of the repository that read the values file `file`: the
/// chart beside it (`values.yaml` next to `Chart.yaml`), and each chart
/// an Application of this repository deploys with it as a value file.
fn charts_reading(
    apps: &[App],
    tree: &Carried,
    this_repo: &dyn Fn(&Source) -> bool,
    file: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
    if file.ends_with("/values.yaml") && super::render_checks::is_chart_dir(&tree.root.join(dir)) {
        out.push(dir.to_string());
    }
    for a in apps.iter().filter(|a| a.rendered.is_none()) {
        for s in a.sources.iter().filter(|s| this_repo(s)) {
            let Some(p) = s.path.as_deref().map(|p| p.trim_matches('/')) else {
                continue;
            };
            let named = s.value_files.iter().any(|v| {
                value_file(&a.sources, s, v, &BTreeMap::new()) == ValueFile::Repo(file.into())
            });
            if named
                && super::render_checks::is_chart_dir(&tree.root.join(p))
                && !out.iter().any(|c| c == p)
            {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// The template files of a chart (`templates/*.yaml`, `*.yml`), sorted.
fn templates_of(tree: &Carried, chart: &str) -> Vec<String> {
    let mut out: Vec<String> = tree
        .files
        .list(&format!("{chart}/templates"))
        .into_iter()
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .map(|n| format!("{chart}/templates/{n}"))
        .collect();
    out.sort();
    out
}

/// The chart folder whose `templates/` holds `rel`, if any.
fn chart_of(tree: &Carried, rel: &str) -> Option<String> {
    rel.match_indices("templates/")
        .filter(|(k, _)| *k == 0 || rel.as_bytes()[k - 1] == b'/')
        .map(|(k, _)| rel[..k].trim_end_matches('/').to_string())
        .find(|dir| super::render_checks::is_chart_dir(&tree.root.join(dir)))
}

/// The Applications `file` renders, or why that is not followed.
fn render_file(
    apps: &[App],
    tree: &Carried,
    this_repo: &dyn Fn(&Source) -> bool,
    chart: &str,
    file: &str,
) -> Result<Vec<App>, String> {
    let values = values_of(apps, tree, this_repo, chart)?;
    render_text(tree, file, &values)
}

/// The Applications the template `file` renders with `values`.
fn render_text(tree: &Carried, file: &str, values: &Values) -> Result<Vec<App>, String> {
    let text = tree.files.read(file).ok_or_else(|| {
        format!("{file}: not read (the repository does not hold it, or git does not track it)")
    })?;
    let out = render(&text, values).map_err(|(line, why)| format!("{file}:{line}: {why}"))?;
    let docs = yaml::read_yaml_or_json(&out).map_err(|(line, _, why)| {
        format!("{file}: what it renders does not parse (line {line} of the rendering: {why})")
    })?;
    Ok(docs
        .iter()
        .filter_map(|doc| app_of(&Manifest { file, doc }))
        .collect())
}

/// The values the one Application of this repository that deploys
/// `chart` gives it: the chart's `values.yaml`, then its value files, in
/// Helm's order (a later file wins), then what it gives inline
/// (`valuesObject` or `values`, then `parameters`:
/// [`crate::find::resolve::charts::inline_values`]).
fn values_of(
    apps: &[App],
    tree: &Carried,
    this_repo: &dyn Fn(&Source) -> bool,
    chart: &str,
) -> Result<Values, String> {
    let mut deploying = apps.iter().flat_map(|a| {
        a.sources
            .iter()
            .filter(|s| {
                a.rendered.is_none()
                    && !a.live_absent
                    && this_repo(s)
                    && s.path.as_deref().map(|p| p.trim_matches('/')) == Some(chart)
            })
            .map(move |s| (a, s))
    });
    let Some((app, src)) = deploying.next() else {
        return Err(format!(
            "no Application of this repository deploys `{chart}` (installed by hand, or from elsewhere: its values are not known)"
        ));
    };
    if let Some((other, _)) = deploying.next() {
        return Err(format!(
            "{} and {} both deploy it, each with its own values",
            app.id(),
            other.id()
        ));
    }
    let mut files = vec![format!("{chart}/values.yaml")];
    for v in &src.value_files {
        match value_file(&app.sources, src, v, &BTreeMap::new()) {
            ValueFile::Repo(p) => files.push(p),
            ValueFile::Refused { why, .. } => {
                return Err(format!("the value file `{v}` is refused: {why}"))
            }
            _ => return Err(format!("{}'s value file `{v}` is not followed", app.id())),
        }
    }
    let mut docs = Vec::new();
    for (k, f) in files.into_iter().enumerate() {
        let Some(text) = tree.files.read(&f) else {
            // A chart without `values.yaml` renders with none; a value file
            // the Application names and the merge does not carry fails
            // Helm's rendering (or, ignored, leaves values out).
            if k == 0 || src.ignore_missing_value_files {
                continue;
            }
            return Err(format!(
                "the value file `{f}` is not read (the repository does not hold it, or git does not track it)"
            ));
        };
        let read =
            yaml::read_yaml_or_json(&text).map_err(|(l, c, why)| format!("{f}:{l}:{c}: {why}"))?;
        if let Some(doc) = read.into_iter().next() {
            docs.push((doc, text));
        }
    }
    // What the Application gives inline comes last, in ArgoCD's order.
    let text = tree.files.read(&app.file).unwrap_or_default();
    let inline = inline_values(&src.inline, &text)
        .map_err(|why| format!("{}'s inline values: {why}", app.id()))?;
    docs.extend(inline);
    Ok(Values { docs })
}

/// The values a chart renders with: each file's first document (and each
/// inline one) and its text (for `toYaml`, which splices the bytes of a
/// node), lowest precedence first.
pub struct Values {
    docs: Vec<ValuesDoc>,
}

impl Values {
    /// The node at `.Values.a.b`: the last document that sets it wins. A
    /// mapping that two documents set is merged key by key by Helm, which
    /// is not followed (`Err`).
    fn lookup(&self, keys: &[&str]) -> Result<Option<(&Node, &str)>, String> {
        let mut set = self
            .docs
            .iter()
            .rev()
            .filter_map(|(doc, text)| Some((doc.at(keys)?, text.as_str())));
        let Some(last) = set.next() else {
            return Ok(None);
        };
        let is_map = |n: &Node| matches!(n.value, Value::Map(_));
        if is_map(last.0) && set.any(|(n, _)| is_map(n)) {
            return Err(format!(
                "`.Values.{}` is a mapping several values files (or inline values) set, which Helm merges: not followed",
                keys.join(".")
            ));
        }
        Ok(Some(last))
    }
}

/// A value an operand gives: a node (and the text it was read from), a
/// string literal's value, or nothing (a key not set).
#[derive(Clone)]
enum Got<'v> {
    Node(&'v Node, &'v str),
    Lit(String),
    Missing,
}

/// One piece of a template: text (trim markers applied) or an action.
enum Piece<'t> {
    Text(&'t str),
    Act(&'t str, usize),
}

/// The template cut into text and actions, Go's trim markers applied
/// (`{{- ` trims white space before, ` -}}` after).
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let line_of = |off: usize| text[..off].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut pos = 0;
    for (start, end) in yaml::template_actions(text) {
        let (expr, ltrim, rtrim) = yaml::action_expr(text, start, end);
        let mut chunk = &text[pos.min(start)..start];
        if ltrim {
            chunk = chunk.trim_end();
        }
        out.push(Piece::Text(chunk));
        out.push(Piece::Act(expr, line_of(start)));
        pos = end;
        if rtrim {
            pos += text[end..].len() - text[end..].trim_start().len();
        }
    }
    out.push(Piece::Text(&text[pos.min(text.len())..]));
    out
}

/// Where a block ends: `end`, `else`, or the text's end.
#[derive(PartialEq, Eq)]
enum Ending {
    End,
    Else,
    Eof,
}

/// The scope of an action: `.` (the values root outside a `range`) and
/// the variables a `range` binds.
#[derive(Clone)]
struct Scope<'v> {
    dot: Option<Got<'v>>,
    vars: Vec<(String, Got<'v>)>,
}

struct Renderer<'t, 'v> {
    pieces: Vec<Piece<'t>>,
    values: &'v Values,
}

/// `text` rendered with `values`, or the line and the action not followed.
fn render(text: &str, values: &Values) -> Result<String, Stop> {
    let r = Renderer {
        pieces: pieces(text),
        values,
    };
    let mut out = String::new();
    let mut i = 0;
    let scope = Scope {
        dot: None,
        vars: Vec::new(),
    };
    match r.run(&mut i, &scope, true, &mut out)? {
        Ending::Eof => Ok(out),
        _ => Err((
            text.matches('\n').count() + 1,
            "an `end` or `else` closes nothing".into(),
        )),
    }
}

impl<'t, 'v> Renderer<'t, 'v> {
    /// Renders from piece `i` to the end of the block (`live`: the output
    /// is kept), leaving `i` after the piece that ends it.
    fn run(
        &self,
        i: &mut usize,
        scope: &Scope<'v>,
        live: bool,
        out: &mut String,
    ) -> Result<Ending, Stop> {
        while *i < self.pieces.len() {
            let piece = &self.pieces[*i];
            *i += 1;
            let (expr, line) = match piece {
                Piece::Text(t) => {
                    if live {
                        out.push_str(t);
                    }
                    continue;
                }
                Piece::Act(e, l) => (*e, *l),
            };
            let stop = |why: String| (line, why);
            if gt::is_comment(expr) {
                continue;
            }
            let all = gt::words(expr);
            let words: Vec<&str> = all.iter().map(String::as_str).collect();
            match words.as_slice() {
                ["end"] => return Ok(Ending::End),
                ["else"] => return Ok(Ending::Else),
                ["if", operand] => {
                    // What does not render is not evaluated.
                    let on = live && {
                        let got = self.operand(operand, scope).map_err(stop)?;
                        truthy(&got).map_err(stop)?
                    };
                    let mut ending = self.run(i, scope, on, out)?;
                    if ending == Ending::Else {
                        ending = self.run(i, scope, live && !on, out)?;
                    }
                    if ending != Ending::End {
                        return Err(stop("an `if` is not closed".into()));
                    }
                }
                ["range", ..] => self.range(&all, line, i, scope, live, out)?,
                [k, ..] if gt::is_keyword(k) => {
                    return Err(stop(format!("`{{{{ {expr} }}}}` is not followed")))
                }
                _ if !live => {}
                _ => {
                    let text = self.pipeline(expr, scope).map_err(stop)?;
                    out.push_str(&text);
                }
            }
        }
        Ok(Ending::Eof)
    }

    /// `range OPERAND`, `range $x := OPERAND`, `range $i, $x := OPERAND`
    /// over a sequence (or a map's values): the body once per element,
    /// `.` (and `$x`) the element.
    #[allow(clippy::too_many_arguments)]
    fn range(
        &self,
        w: &[String],
        line: usize,
        i: &mut usize,
        scope: &Scope<'v>,
        live: bool,
        out: &mut String,
    ) -> Result<(), Stop> {
        let (vars, expr) = gt::bindings(w);
        let [operand] = expr else {
            return Err((line, format!("`{}` is not followed", w.join(" "))));
        };
        let got = if live {
            self.operand(operand, scope).map_err(|e| (line, e))?
        } else {
            Got::Missing
        };
        let items: Vec<Got<'v>> = match got {
            Got::Node(n, text) => match &n.value {
                Value::Seq(items) => items.iter().map(|n| Got::Node(n, text)).collect(),
                Value::Map(pairs) => pairs.iter().map(|(_, n)| Got::Node(n, text)).collect(),
                _ => return Err((line, format!("`range {operand}` is over a scalar"))),
            },
            _ => Vec::new(),
        };
        let start = *i;
        for item in &items {
            *i = start;
            let mut inner = scope.clone();
            inner.dot = Some(item.clone());
            if let Some(v) = vars.last() {
                inner.vars.push((v.clone(), item.clone()));
            }
            if self.run(i, &inner, true, out)? != Ending::End {
                return Err((line, "a `range` is not closed".into()));
            }
        }
        // Past the body once more without output (no element, or not live).
        *i = start;
        match self.run(i, scope, false, out)? {
            Ending::End => Ok(()),
            _ => Err((
                line,
                "a `range` with `else`, or not closed, is not followed".into(),
            )),
        }
    }

    /// What an operand reads: `.Values.a.b`, `$.Values.a.b`, and in a
    /// `range` `.`, `.a.b`, `$x`, `$x.a.b`.
    fn operand(&self, w: &str, scope: &Scope<'v>) -> Result<Got<'v>, String> {
        let at_root = scope.dot.is_none() || w.starts_with('$');
        if let Some(keys) = gt::values_keys(w).filter(|_| at_root) {
            return Ok(match self.values.lookup(&keys)? {
                Some((n, t)) => Got::Node(n, t),
                None => Got::Missing,
            });
        }
        let (base, keys) = match gt::operand(w) {
            Operand::Dot(k) if k.first() == Some(&"Values") && !at_root => {
                return Err(format!(
                    "`{w}` where the dot is not the chart's root (inside a `range`) is not followed"
                ))
            }
            Operand::Var(name, keys) if !name.is_empty() => {
                let mut vars = scope.vars.iter().rev();
                let var = vars.find(|(v, _)| v.strip_prefix('$') == Some(name));
                (var.map(|(_, g)| g.clone()), keys)
            }
            Operand::Dot(keys) => (scope.dot.clone(), keys),
            _ => return Err(format!("`{w}` is not followed")),
        };
        match base {
            None => Err(format!("`{w}` is not followed (no `range` gives it)")),
            Some(Got::Node(n, t)) => Ok(n.at(&keys).map_or(Got::Missing, |n| Got::Node(n, t))),
            Some(other) if keys.is_empty() => Ok(other),
            Some(_) => Ok(Got::Missing),
        }
    }

    /// A pipeline that writes text: an operand (or a function of one),
    /// then `| quote` (Go's `%q`), `| squote`, `| trim`, `| toString`,
    /// `| default "x"` (a Go string literal), `| toYaml`, `| nindent N`,
    /// `| indent N`.
    fn pipeline(&self, expr: &str, scope: &Scope<'v>) -> Result<String, String> {
        let words = gt::words(expr);
        let mut stages = gt::commands(&words);
        let (mut fns, operand): (Vec<&[String]>, &str) = match stages.next().unwrap_or(&[]) {
            [op] => (Vec::new(), op),
            [f, op] => (vec![std::slice::from_ref(f)], op),
            _ => return Err(format!("`{{{{ {expr} }}}}` is not followed")),
        };
        let mut got = self.operand(operand, scope)?;
        fns.extend(stages);
        let mut text: Option<String> = None;
        for f in fns {
            let shown = f.join(" ");
            let w: Vec<&str> = f.iter().map(String::as_str).collect();
            match w.as_slice() {
                ["default", lit] if gt::go_string(lit).is_some() => {
                    if !truthy(&got)? {
                        got = Got::Lit(gt::go_string(lit).unwrap_or_default());
                    }
                }
                ["quote" | "squote" | "trim" | "toString"] => {
                    let s = scalar(&got, text.take())?;
                    let done = gt::string_function(f, s).ok_or_else(|| {
                        format!("`{shown}` of a string Go escapes by its code is not followed")
                    })?;
                    text = Some(done);
                }
                ["toYaml"] => text = Some(to_yaml(&got)?),
                ["nindent" | "indent", n] => {
                    let n: usize = n
                        .parse()
                        .map_err(|_| format!("`{shown}` is not followed"))?;
                    let body = text
                        .take()
                        .ok_or_else(|| format!("`{shown}` of a value is not followed"))?;
                    let pad = " ".repeat(n);
                    let lines: Vec<String> = body.lines().map(|l| format!("{pad}{l}")).collect();
                    let joined = lines.join("\n");
                    text = Some(if w[0] == "nindent" {
                        format!("\n{joined}")
                    } else {
                        joined
                    });
                }
                _ => return Err(format!("`{shown}` in `{{{{ {expr} }}}}` is not followed")),
            }
        }
        match text {
            Some(t) => Ok(t),
            None => scalar(&got, None),
        }
    }
}

/// A value written as text: a scalar's.
fn scalar(got: &Got, done: Option<String>) -> Result<String, String> {
    if let Some(t) = done {
        return Ok(t);
    }
    match got {
        Got::Lit(s) => Ok(s.clone()),
        Got::Node(n, _) => n
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "a map or list written as a scalar is not followed".into()),
        Got::Missing => Err("a value the values files do not set".into()),
    }
}

/// `toYaml` of a mapping or sequence: its bytes as written in the values
/// file, moved to column 0 (no YAML is emitted from the tree).
fn to_yaml(got: &Got) -> Result<String, String> {
    let &Got::Node(n, text) = got else {
        return Err("`toYaml` of a value the values files do not set".into());
    };
    if !matches!(n.value, Value::Map(_) | Value::Seq(_))
        || text.get(n.start..n.start + 1) == Some("{")
    {
        return Err("`toYaml` of a scalar or a flow collection is not followed".into());
    }
    let raw = text
        .get(n.start..n.end)
        .ok_or("`toYaml` of a node not read")?;
    let mut out = Vec::new();
    for (k, line) in raw.trim_end().lines().enumerate() {
        if k == 0 {
            out.push(line.to_string());
            continue;
        }
        // `col` is 1-based: the node's lines are indented `col - 1`.
        let (lead, indent) = (line.len() - line.trim_start().len(), n.col - 1);
        if !line.trim().is_empty() && lead < indent {
            return Err("`toYaml` of a node whose lines are not indented under it".into());
        }
        out.push(line.get(indent.min(lead)..).unwrap_or("").to_string());
    }
    Ok(out.join("\n"))
}

/// Go template truth of a value (missing is `nil`, false):
/// [`gt::truthy`]; a value whose truth the YAML readings differ on is
/// not followed.
fn truthy(got: &Got) -> Result<bool, String> {
    match got {
        Got::Missing => Ok(false),
        Got::Lit(s) => Ok(!s.is_empty()),
        Got::Node(n, _) => gt::truthy(n).ok_or_else(|| {
            format!(
                "`{}` is a boolean or a number in Helm's YAML 1.1 and a string in YAML 1.2: its truth is not known",
                n.as_str().unwrap_or_default()
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Values {
        let doc = yaml::read_yaml_or_json(text).unwrap().remove(0);
        Values {
            docs: vec![(doc, text.to_string())],
        }
    }

    /// Helm's rendering of the followed actions: values, `if`/`else`,
    /// trim markers, `quote`, `default`; the rest stops with its line.
    #[test]
    fn templates_render_with_values_or_stop_at_a_line() {
        let v = values("enabled: true\noff: false\nrev: main\npath: apps\n");
        let t = "{{- if .Values.enabled }}\nrev: {{ .Values.rev | quote }}\npath: {{ $.Values.path }}\n{{- end }}\n";
        assert_eq!(render(t, &v).unwrap(), "\nrev: \"main\"\npath: apps\n");
        let t = "{{ if .Values.off }}a: 1{{ else }}a: 2{{ end }}";
        assert_eq!(render(t, &v).unwrap(), "a: 2");
        let t = "a: {{ .Values.nope | default \"x\" }}";
        assert_eq!(render(t, &v).unwrap(), "a: x");
        let t = "a: 1\n{{ include \"x\" . }}\n";
        assert_eq!(render(t, &v).unwrap_err().0, 2);
        let t = "a: {{ .Values.missing }}\n";
        assert!(render(t, &v).unwrap_err().1.contains("do not set"));
        assert!(render("{{ if .Values.enabled }}a", &v).is_err());
    }

    /// `range` over a list: `.field` and `$.Values` inside; `toYaml .`
    /// splices the element's bytes at column 0.
    #[test]
    fn range_and_to_yaml_render_each_element() {
        let v = values("repo: r\napps:\n  - name: a\n    path: x\n  - name: b\n    path: y\nobjs:\n  - kind: K\n    spec:\n      n: 1\n");
        let t = "{{- range .Values.apps }}\n---\nname: {{ .name }}\npath: {{ .path }}\nrepo: {{ $.Values.repo }}\n{{- end }}\n";
        assert_eq!(
            render(t, &v).unwrap(),
            "\n---\nname: a\npath: x\nrepo: r\n---\nname: b\npath: y\nrepo: r\n"
        );
        let t = "{{- range $o := .Values.objs }}\n---\n{{ toYaml $o }}\n{{- end }}\n";
        assert_eq!(render(t, &v).unwrap(), "\n---\nkind: K\nspec:\n  n: 1\n");
        let w = values("apps: [{name: a, on: true}, {name: b}]\n");
        let t = "{{ range .Values.apps }}{{ if .on }}{{ .name }}{{ end }}{{ end }}.";
        assert_eq!(render(t, &w).unwrap(), "a.");
        let t = "{{ range .Values.none }}x{{ end }}y";
        assert_eq!(render(t, &v).unwrap(), "y");
        assert!(render("{{ range .Values.apps }}{{ .name | upper }}{{ end }}", &v).is_err());
    }

    /// The expression is read as Helm reads it (one reader with
    /// discovery, [`gt`]): a string literal is one word whatever it holds
    /// (white space, `|`, Go's escapes, a raw string), `quote` writes Go's
    /// `%q`, and `squote`, `trim`, `toString` are Sprig's.
    #[test]
    fn literals_and_quoting_are_gos() {
        let v = values("s: \"say \\\"hi\\\"\\x01\"\nt: '  x '\n");
        let r = |t: &str| render(t, &v).unwrap();
        assert_eq!(r("{{ .Values.nope | default \"a b|c\" }}"), "a b|c");
        assert_eq!(r("{{ .Values.nope | default \"a\\\"b\\tc\" }}"), "a\"b\tc");
        assert_eq!(r("{{ .Values.nope | default `a\\n` }}"), "a\\n");
        assert_eq!(r("{{ .Values.s | quote }}"), r#""say \"hi\"\x01""#);
        assert_eq!(r("{{ .Values.t | trim | squote }}"), "'x'");
        assert_eq!(r("{{ .Values.t | toString | quote }}"), "\"  x \"");
        // An escape by code in a literal, a character Go's tables escape:
        // not followed.
        assert!(render("{{ .Values.nope | default \"\\x41\" }}", &v).is_err());
        let w = values("u: \"a\\u00a0b\"\n");
        assert!(render("{{ .Values.u | quote }}", &w)
            .unwrap_err()
            .1
            .contains("quote"));
    }

    /// Inside a `range` the dot is the element: `.Values` there is the
    /// element's key (Helm stops on it), not followed; `$.Values` is the
    /// root's. A keyword the renderer does not follow stops, even where
    /// its branch does not render.
    #[test]
    fn values_under_a_moved_dot_and_keywords_are_not_followed() {
        let v = values("rev: main\napps: [{name: a}]\noff: false\n");
        let t = "{{ range .Values.apps }}{{ $.Values.rev }}{{ end }}";
        assert_eq!(render(t, &v).unwrap(), "main");
        let t = "{{ range .Values.apps }}\n{{ .Values.rev }}{{ end }}";
        let (line, why) = render(t, &v).unwrap_err();
        assert!(line == 2 && why.contains("not the chart's root"), "{why}");
        let t = "{{ if .Values.off }}\n{{ with .Values.apps }}x{{ end }}\n{{ end }}";
        let (line, why) = render(t, &v).unwrap_err();
        assert!(
            line == 2 && why.contains("`{{ with .Values.apps }}`"),
            "{why}"
        );
    }

    /// Go's truth: a quoted "false" is a non-empty string.
    #[test]
    fn truth_is_go_templates() {
        let v =
            values("a: false\nb: 'false'\nc: 0\nd: {}\ne: [1]\nf: 0.0\ng: no\nh: 0x0\ni: 'no'\n");
        let t = |k: &str| {
            truthy(
                &v.lookup(&[k])
                    .unwrap()
                    .map_or(Got::Missing, |(n, t)| Got::Node(n, t)),
            )
        };
        let yes = |k: &str| t(k).unwrap();
        assert!(!yes("a") && yes("b") && !yes("c") && !yes("d") && yes("e") && !yes("z"));
        // Zero in any spelling is false; what YAML 1.1 reads as a boolean
        // or a number and YAML 1.2 as a string is not known.
        assert!(!yes("f") && yes("i"));
        assert!(t("g").is_err() && t("h").is_err());
    }

    /// Helm merges mappings of several values files key by key
    /// (docs/user-guide/helm.md, "Values Files": a later file wins per
    /// key): a scalar is the last document's, a mapping two documents set
    /// is not followed.
    #[test]
    fn a_mapping_several_documents_set_is_not_followed() {
        let doc = |t: &str| (yaml::read_yaml_or_json(t).unwrap().remove(0), t.to_string());
        let v = Values {
            docs: vec![doc("a: {x: 1, y: 2}\nb: 1\n"), doc("a: {x: 3}\nb: 2\n")],
        };
        assert_eq!(
            render("{{ .Values.a.x }} {{ .Values.a.y }} {{ .Values.b }}", &v).unwrap(),
            "3 2 2"
        );
        let t = "{{ range .Values.a }}{{ . }}{{ end }}";
        assert!(render(t, &v)
            .unwrap_err()
            .1
            .contains("`.Values.a` is a mapping"));
    }
}
