//! Applications a Helm chart of the repository renders: an Application or
//! ApplicationSet in a chart's `templates/` exists on the hub only as the
//! chart renders it, with the values the Application deploying the chart
//! gives (docs/operator-manual/cluster-bootstrapping.md, the Helm
//! app-of-apps). When exactly one Application of this repository deploys
//! the chart and every action of the template is one this module follows,
//! the template is rendered with those values (the chart's `values.yaml`,
//! then the Application's value files in order, as Helm merges them) and
//! the Applications it renders replace the template's. Anything else stays
//! "not proven", naming the chart and the file:line that is not followed.
//!
//! Followed: `{{ .Values.a.b }}` and `{{ $.Values.a.b }}` (with `| quote`),
//! `if`/`else`/`end` over such a value (Go's truth: false, 0, null, empty
//! are false), comments, and the `{{-`/`-}}` trim markers. Not followed:
//! `range`, `with`, `include`, `tpl`, functions, `.Release`, `.Chart`, a
//! value the values files do not set, inline values of the deploying
//! Application (`helm.values`, `valuesObject`, `parameters`), a `$ref`
//! value file.

use crate::model::application::{app_of, App, Manifest, Source};
use crate::syntax::yaml::{self, Node, Value};
use std::path::Path;

/// Where a template's rendering stops: the 1-based line and why.
type Stop = (usize, String);

/// Replaces each Application the model read from a chart template by what
/// the chart renders, when that is followed; else names, in the
/// Application's `rendered` reason, the chart and the file:line not
/// followed.
pub fn follow(apps: &mut Vec<App>, root: &Path, this_repo: &dyn Fn(&Source) -> bool) {
    let files: Vec<String> = apps
        .iter()
        .filter(|a| a.rendered.is_some() && chart_of(root, &a.file).is_some())
        .map(|a| a.file.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for file in files {
        let Some(chart) = chart_of(root, &file) else {
            continue;
        };
        match render_file(apps, root, this_repo, &chart, &file) {
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

/// The chart folder whose `templates/` holds `rel`, if any.
fn chart_of(root: &Path, rel: &str) -> Option<String> {
    rel.match_indices("templates/")
        .filter(|(k, _)| *k == 0 || rel.as_bytes()[k - 1] == b'/')
        .map(|(k, _)| rel[..k].trim_end_matches('/').to_string())
        .find(|dir| root.join(dir).join("Chart.yaml").is_file())
}

/// The Applications `file` renders, or why that is not followed.
fn render_file(
    apps: &[App],
    root: &Path,
    this_repo: &dyn Fn(&Source) -> bool,
    chart: &str,
    file: &str,
) -> Result<Vec<App>, String> {
    let values = values_of(apps, root, this_repo, chart)?;
    let text = std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let out = render(&text, &values).map_err(|(line, why)| format!("{file}:{line}: {why}"))?;
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
/// Helm's order (a later file wins).
fn values_of(
    apps: &[App],
    root: &Path,
    this_repo: &dyn Fn(&Source) -> bool,
    chart: &str,
) -> Result<Vec<Node>, String> {
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
    if src.helm_inline {
        return Err(format!(
            "{} gives it values inline (helm.values, valuesObject or parameters), which are not followed",
            app.id()
        ));
    }
    let mut files = vec![format!("{chart}/values.yaml")];
    for v in &src.value_files {
        if v.starts_with('$') || v.contains("://") || v.contains("{{") {
            return Err(format!("{}'s value file `{v}` is not followed", app.id()));
        }
        let resolved = match v.strip_prefix('/') {
            Some(abs) => crate::find::resolve::normalize("", abs),
            None => crate::find::resolve::normalize(chart, v),
        };
        files.push(resolved.ok_or_else(|| format!("the value file `{v}` climbs above the root"))?);
    }
    let mut docs = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(root.join(&f)) else {
            continue;
        };
        let mut read =
            yaml::read_yaml_or_json(&text).map_err(|(l, c, why)| format!("{f}:{l}:{c}: {why}"))?;
        docs.extend(read.drain(..1.min(read.len())));
    }
    Ok(docs)
}

/// The node at `.Values.a.b` in the merged values: the last file that sets
/// it wins.
fn lookup<'v>(values: &'v [Node], keys: &[&str]) -> Option<&'v Node> {
    values.iter().rev().find_map(|doc| doc.at(keys))
}

/// The keys of a `.Values.a.b` (or `$.Values.a.b`) operand.
fn values_keys(operand: &str) -> Option<Vec<&str>> {
    let rest = operand
        .strip_prefix("$.Values.")
        .or_else(|| operand.strip_prefix(".Values."))?;
    let keys: Vec<&str> = rest.split('.').collect();
    keys.iter()
        .all(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then_some(keys)
}

/// Go template truth of a value (missing is `nil`, false).
fn truthy(n: Option<&Node>) -> bool {
    match n.map(|n| &n.value) {
        None => false,
        Some(Value::Map(m)) => !m.is_empty(),
        Some(Value::Seq(s)) => !s.is_empty(),
        Some(Value::Scalar(s, style)) => {
            let plain = matches!(style, yaml_rust2::scanner::TScalarStyle::Plain);
            !(s.is_empty() || plain && matches!(s.as_str(), "false" | "0" | "null" | "~"))
        }
        Some(_) => false,
    }
}

/// `text` rendered with `values`, or the line and the action not followed.
fn render(text: &str, values: &[Node]) -> Result<String, Stop> {
    let line_of = |off: usize| text[..off].matches('\n').count() + 1;
    let mut out = String::new();
    let mut pos = 0;
    // Each open `if`: whether its branch renders, whether one did.
    let mut open: Vec<(bool, bool)> = Vec::new();
    for (start, end) in yaml::template_actions(text) {
        // Go's trim markers: `{{- ` and ` -}}` (a `-` beside white space).
        let inner = &text[start + 2..end - 2];
        let ltrim = inner.len() > 1
            && inner.starts_with('-')
            && inner[1..].starts_with(char::is_whitespace);
        let rtrim = inner.len() > 1
            && inner.ends_with('-')
            && inner[..inner.len() - 1].ends_with(char::is_whitespace);
        let mut expr = inner;
        if ltrim {
            expr = &expr[1..];
        }
        if rtrim {
            expr = &expr[..expr.len() - 1];
        }
        let expr = expr.trim();
        let mut chunk = &text[pos.min(start)..start];
        if ltrim {
            chunk = chunk.trim_end();
        }
        let live = open.iter().all(|(on, _)| *on);
        if live {
            out.push_str(chunk);
        }
        pos = end;
        if rtrim {
            pos += text[end..].len() - text[end..].trim_start().len();
        }
        let stop = |why: String| (line_of(start), why);
        let words: Vec<&str> = expr.split_whitespace().collect();
        match words.as_slice() {
            [c, ..] if c.starts_with("/*") => {}
            ["if", operand] => {
                let keys = values_keys(operand)
                    .ok_or_else(|| stop(format!("`{{{{ {expr} }}}}` is not followed")))?;
                let on = truthy(lookup(values, &keys));
                open.push((on, on));
            }
            ["else"] => {
                let top = open
                    .last_mut()
                    .ok_or_else(|| stop("`else` outside `if`".into()))?;
                *top = (!top.1, true);
            }
            ["end"] => {
                open.pop()
                    .ok_or_else(|| stop("`end` closes nothing followed".into()))?;
            }
            [operand] | [operand, "|", "quote"] => {
                let keys = values_keys(operand)
                    .ok_or_else(|| stop(format!("`{{{{ {expr} }}}}` is not followed")))?;
                if !live {
                    continue;
                }
                let value = lookup(values, &keys)
                    .and_then(Node::as_str)
                    .ok_or_else(|| {
                        stop(format!("{operand} is not a value the values files set"))
                    })?;
                if words.len() == 3 {
                    out.push_str(&format!("{value:?}"));
                } else {
                    out.push_str(value);
                }
            }
            _ => return Err(stop(format!("`{{{{ {expr} }}}}` is not followed"))),
        }
    }
    if !open.is_empty() {
        return Err((line_of(text.len()), "an `if` is not closed".into()));
    }
    out.push_str(&text[pos.min(text.len())..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<Node> {
        yaml::read_yaml_or_json(text).unwrap()
    }

    /// Helm's rendering of the followed actions: values, `if`/`else`,
    /// trim markers, `quote`; the rest stops with its line.
    #[test]
    fn templates_render_with_values_or_stop_at_a_line() {
        let v = values("enabled: true\noff: false\nrev: main\npath: apps\n");
        let t = "{{- if .Values.enabled }}\nrev: {{ .Values.rev | quote }}\npath: {{ $.Values.path }}\n{{- end }}\n";
        assert_eq!(render(t, &v).unwrap(), "\nrev: \"main\"\npath: apps\n");
        let t = "{{ if .Values.off }}a: 1{{ else }}a: 2{{ end }}";
        assert_eq!(render(t, &v).unwrap(), "a: 2");
        let t = "a: 1\n{{ include \"x\" . }}\n";
        assert_eq!(render(t, &v).unwrap_err().0, 2);
        let t = "a: {{ .Values.missing }}\n";
        assert!(render(t, &v).unwrap_err().1.contains("not a value"));
        assert!(render("{{ if .Values.enabled }}a", &v).is_err());
    }

    /// Go's truth: a quoted "false" is a non-empty string.
    #[test]
    fn truth_is_go_templates() {
        let v = values("a: false\nb: 'false'\nc: 0\nd: {}\ne: [1]\n");
        let t = |k: &str| truthy(lookup(&v, &[k]));
        assert!(!t("a") && t("b") && !t("c") && !t("d") && t("e") && !t("z"));
    }
}
