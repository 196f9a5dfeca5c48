//! Where what an Application (or an ApplicationSet's template) writes in
//! its inline Helm values leads: a value written as one generator
//! parameter (`url: '{{.url}}'`) is the list element key or the git file
//! key the ApplicationSet's generators give it (argo-cd
//! `applicationset/generators/list.go`, `git.go`:
//! `generateParamsFromGitFile`, keys flattened); a parameter's `name` is
//! read in Helm's `--set` syntax (Helm `pkg/strvals`), or named when it is
//! not one plain path.

use crate::discover::walk::Entry;
use crate::find::resolve;
use crate::model::application::App;
use crate::model::positions::{self, Seg, YamlPath};
use crate::syntax::yaml::{self, Node, Value};
use std::path::{Path, PathBuf};
use yaml_rust2::scanner::TScalarStyle;

/// A scalar of inline values that holds a generator parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Its path in the chart's values.
    pub values: YamlPath,
    /// The parameter (`url`, `cluster.api`) when the value is exactly one;
    /// `None` for anything else (`https://{{.host}}:6443`, a function).
    pub param: Option<String>,
    /// The value as written.
    pub written: String,
    /// Its line in the file.
    pub line: usize,
}

/// Where an ApplicationSet's generators hold a parameter: a scalar of a
/// file of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// The file to open.
    pub file: PathBuf,
    /// The scalar's path in that file.
    pub path: YamlPath,
    /// A list element of the ApplicationSet's own document (else a file a
    /// git files generator reads).
    pub element: bool,
}

/// A Helm `--set` name as a path (Helm `pkg/strvals`: `.` between keys,
/// `\.` a dot inside a key, `[N]` a list index); `None` when it is not one
/// plain path (a `{a,b}` list value, several `a=b,c` settings, an empty
/// key).
pub fn set_path(name: &str) -> Option<YamlPath> {
    let mut segs = Vec::new();
    let mut key = String::new();
    let mut chars = name.chars().peekable();
    let mut after_index = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => key.push(chars.next()?),
            '.' => {
                if key.is_empty() && !after_index {
                    return None;
                }
                if !key.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                }
                after_index = false;
            }
            '[' => {
                if !key.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                }
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    n.push(d);
                }
                segs.push(Seg::Index(n.parse().ok()?));
                after_index = true;
            }
            '{' | '}' | ',' | '=' => return None,
            c => key.push(c),
        }
    }
    if !key.is_empty() {
        segs.push(Seg::Key(key));
    } else if !after_index {
        return None;
    }
    Some(YamlPath(segs))
}

/// The parameter a template value is made of, when it is exactly one
/// action (quotes around it allowed): `'{{.api}}'`, `{{ cluster.api }}`.
pub fn one_param(written: &str) -> Option<String> {
    let v = written.trim().trim_matches(['"', '\'']);
    let inner = v.strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.contains("{{") || inner.contains("}}") {
        return None;
    }
    resolve::param_name(inner)
}

/// The first line of `text` from where `node` starts: the value as
/// written (a masked reading blanks actions; an unquoted `{{.url}}` reads
/// as a flow mapping).
fn written<'t>(text: &'t str, node: &Node) -> &'t str {
    let rest = text.get(node.start..).unwrap_or("");
    rest.lines().next().unwrap_or("")
}

/// The value of `n` (read from `text`) as written when it holds a
/// template action: its decoded string, or, read with its actions masked
/// (`xx...`) or taken for a flow mapping (`{{.url}}` unquoted), its text.
fn templated<'t>(text: &'t str, n: &'t Node) -> Option<&'t str> {
    let w = written(text, n);
    let v = match &n.value {
        Value::Scalar(v, _) if v.contains("{{") => v.as_str(),
        Value::Scalar(v, _) if v.contains("xx") => w,
        Value::Map(_) if w.trim_start().starts_with("{{") => w,
        _ => return None,
    };
    v.contains("{{").then_some(v)
}

/// The leaves of inline values (`node`, read from `text`) that hold a
/// template action, their line `line(node)`.
fn leaves_in(text: &str, node: &Node, line: &dyn Fn(&Node) -> usize) -> Vec<Leaf> {
    let mut out: Vec<Leaf> = Vec::new();
    node.walk(&mut |p: &YamlPath, n: &Node| {
        if out.iter().any(|l| p.0.starts_with(&l.values.0)) {
            return; // inside a parameter read as a flow mapping
        }
        if let Some(w) = templated(text, n) {
            out.push(Leaf {
                values: p.clone(),
                param: one_param(w),
                written: w.trim().to_string(),
                line: line(n),
            });
        }
    });
    out
}

/// `helm.valuesObject` (`node`, in the file's `text`).
pub fn object_leaves(text: &str, node: &Node) -> Vec<Leaf> {
    leaves_in(text, node, &|n| n.line)
}

/// `helm.values`, the YAML document held in the string `node`: its lines
/// are the file's from the string's content on when it is a block scalar
/// (`values: |`), else the string's own.
pub fn values_leaves(node: &Node) -> Vec<Leaf> {
    let Value::Scalar(s, style) = &node.value else {
        return Vec::new();
    };
    let masked = yaml::mask_templates(s).map(|(m, _)| m);
    let read = yaml::read_yaml_or_json;
    let Ok(docs) = read(s).or_else(|e| masked.as_deref().map_or(Err(e), read)) else {
        return Vec::new();
    };
    let block = matches!(style, TScalarStyle::Literal | TScalarStyle::Folded);
    // A block scalar's node starts at its content's first line.
    let line = |n: &Node| match block {
        true => node.line + n.line - 1,
        false => node.line,
    };
    docs.iter().flat_map(|d| leaves_in(s, d, &line)).collect()
}

/// `helm.parameters` (the list `node`, in the file's `text`): the values
/// that hold a template action, and each `name` that is not one
/// plain path (its line and the name).
pub fn parameter_leaves(text: &str, node: &Node) -> (Vec<Leaf>, Vec<(usize, String)>) {
    let (mut leaves, mut unread) = (Vec::new(), Vec::new());
    let Value::Seq(items) = &node.value else {
        return (leaves, unread);
    };
    for item in items {
        let Some(name) = item.get(positions::NAME_KEY) else {
            continue;
        };
        let Some(values) = name.as_str().and_then(set_path) else {
            let shown = name.as_str().unwrap_or(written(text, name));
            unread.push((name.line, shown.to_string()));
            continue;
        };
        let Some(value) = item.get(positions::HELM_PARAMETER_VALUE) else {
            continue;
        };
        if let Some(w) = templated(text, value) {
            leaves.push(Leaf {
                values,
                param: one_param(w),
                written: w.trim().to_string(),
                line: value.line,
            });
        }
    }
    (leaves, unread)
}

/// Where the generators of the ApplicationSet `app` (its document `doc`,
/// in `file`) hold `param`: each list element of the document with that
/// key, each file among `all` a git files generator's glob matches with
/// that (flattened) key.
pub fn given(param: &str, app: &App, doc: &Node, file: &Path, all: &[Entry]) -> Vec<Given> {
    let keys: Vec<&str> = param.split('.').collect();
    let mut out = Vec::new();
    for (at, e) in positions::list_element_nodes(doc) {
        if e.at(&keys).and_then(Node::as_str).is_some() {
            let mut path = at;
            path.0.extend(keys.iter().map(|k| Seg::Key(k.to_string())));
            out.push(Given {
                file: file.to_path_buf(),
                path,
                element: true,
            });
        }
    }
    for g in &app.git_generators {
        for e in all {
            let rel = e.rel.trim_start_matches("./");
            if !g
                .files
                .iter()
                .any(|glob| resolve::files_match_either(glob, rel))
            {
                continue;
            }
            let Some(docs) = std::fs::read_to_string(&e.path)
                .ok()
                .and_then(|t| yaml::read_yaml_or_json(&t).ok())
            else {
                continue;
            };
            if let Some(from) = resolve::file_params(rel, &docs)
                .remove(param)
                .and_then(|p| p.from)
            {
                out.push(Given {
                    file: e.path.clone(),
                    path: from,
                    element: false,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_value_of_one_parameter() {
        assert_eq!(one_param("'{{.api}}'").as_deref(), Some("api"));
        assert_eq!(
            one_param("\"{{ cluster.api }}\"").as_deref(),
            Some("cluster.api")
        );
        assert_eq!(one_param("https://{{.host}}:6443"), None);
        assert_eq!(one_param("'{{ upper .api }}'"), None);
        assert_eq!(one_param("'{{.a}}{{.b}}'"), None);
    }

    /// A value written as one parameter, quoted or not (unquoted, the
    /// YAML reader takes `{{.url}}` for a flow mapping), in a mapping, a
    /// `values: |` string (its lines the file's) and a parameter list; a
    /// value of several parts or with a function is a leaf of no one
    /// parameter; a value without an action is no leaf.
    #[test]
    fn leaves_of_inline_values() {
        let text = "o:\n  a: '{{.url}}'\n  b:\n    c: {{ .api }}\n  d: 'https://{{.h}}'\n  e: '{{ upper .x }}'\nv: |\n  t:\n    u: {{.url}}\np:\n  - name: t.u\n    value: '{{.url}}'\n  - name: '{a,b}'\n    value: '{{.url}}'\n  - name: t.w\n    value: https://h\n";
        let doc = &yaml::read_yaml_or_json(text).unwrap()[0];
        let shown = |l: Vec<Leaf>| -> Vec<(String, String, usize)> {
            l.into_iter()
                .map(|l| (l.values.to_string(), l.param.unwrap_or(l.written), l.line))
                .collect()
        };
        let s = |a: &str, p: &str, l: usize| (a.to_string(), p.to_string(), l);
        assert_eq!(
            shown(object_leaves(text, doc.get("o").unwrap())),
            vec![
                s("a", "url", 2),
                s("b.c", "api", 4),
                s("d", "https://{{.h}}", 5),
                s("e", "{{ upper .x }}", 6)
            ]
        );
        assert_eq!(
            shown(values_leaves(doc.get("v").unwrap())),
            vec![s("t.u", "url", 9)]
        );
        let (leaves, unread) = parameter_leaves(text, doc.get("p").unwrap());
        assert_eq!(shown(leaves), vec![s("t.u", "url", 12)]);
        assert_eq!(unread, vec![(13, "{a,b}".to_string())]);
    }

    /// Helm `pkg/strvals` names: `.` between keys, `\\.` inside one, `[N]`
    /// an index; a list value or an empty key is no plain path.
    #[test]
    fn set_names_as_paths() {
        let p = |n: &str| set_path(n).map(|p| p.to_string());
        assert_eq!(p("target.url").as_deref(), Some("target.url"));
        assert_eq!(
            p("clusters[1].server").as_deref(),
            Some("clusters[1].server")
        );
        let dotted = set_path("labels.a\\.b").unwrap();
        assert_eq!(
            dotted.0,
            [Seg::Key("labels".into()), Seg::Key("a.b".into())]
        );
        for bad in ["", "a..b", "a.", "{a,b}", "a,b", "a=b", "a[x]"] {
            assert_eq!(set_path(bad), None, "{bad}");
        }
    }
}
