//! Values that an ApplicationSet's generators put into a cluster position
//! through its template's `destination.server` (or a `templatePatch`
//! setting it), when that is one parameter (`{{.api}}`, `{{api}}`,
//! `{{index . "api"}}`, `{{ .api | default "..." }}`):
//! - a git files generator: every file its `files[].path` glob matches
//!   holds the server under that key (argo-cd
//!   `applicationset/generators/git.go`, `generateParamsFromGitFile`: the
//!   file read first as an array, each element one parameter set, else as
//!   one object; keys flattened);
//! - a cluster generator's `values.<key>` (argo-cd
//!   `applicationset/generators/cluster.go`: `values.<key>` parameters);
//! - a list generator's `elementsYaml` (argo-cd
//!   `applicationset/generators/list.go`: a YAML string of elements), the
//!   value spliced inside the string;
//! - a list element reached only through `templatePatch` (argo-cd
//!   `applicationset/utils/utils.go`, the patch rendered with the same
//!   parameters and merged over the template).
//!
//! Each such scalar is a position of its file, found the way a chart's
//! values are ([`templates::Flow`]), with the generator as its road. A
//! templated server that is not one parameter (built from parts, an
//! `index` into a list, any other function) is named with its file:line
//! ([`templates::Note`]), never silently dropped. What the parameters are
//! is [`resolve`]'s reading.

use crate::discover::walk::{Role, Walk};
use crate::find::templates::{Flow, Inline, Note, Step, ValuesPath};
use crate::find::{params, resolve};
use crate::model::application::{self, Manifest};
use crate::model::positions::{self, Position};
use crate::syntax::yaml::{self, Node, Seg, Value, YamlPath};
use std::collections::HashMap;
use std::path::PathBuf;
use yaml_rust2::scanner::TScalarStyle;

/// One git files generator whose template puts a parameter in a cluster
/// position: its globs, the parameter, and where it is declared.
struct Reads {
    globs: Vec<String>,
    param: String,
    /// `ApplicationSet/name (file:line)`.
    by: String,
}

/// What the generators of the walk's ApplicationSets give: each file (its
/// path to open) with its flows, and the templated servers not followed.
#[derive(Debug, Default)]
pub struct Roads {
    pub flows: HashMap<PathBuf, Vec<Flow>>,
    pub notes: Vec<Note>,
}

/// The positions generators give files of the walk, and what they do not
/// follow.
pub fn follow(walk: &Walk) -> Roads {
    let yaml = |p: &std::path::Path| {
        p.extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
    };
    // Walked twice, lazily, rather than listed: what this keeps never grows
    // with the files (the second walk runs only when a generator reads files).
    let entries = || walk.entries_where(&yaml).filter(|e| e.role == Role::Yaml);
    let mut reads = Vec::new();
    let mut out = Roads::default();
    let read = |e: &crate::discover::walk::Entry| {
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            return None;
        };
        if text.contains("ApplicationSet") {
            Some((e.path.clone(), generators_of(&e.rel, &text)))
        } else {
            None
        }
    };
    crate::sys::par::par_each(entries(), read, |r| {
        if let Some((path, found)) = r {
            reads.extend(found.reads);
            out.notes.extend(found.notes);
            if !found.own.is_empty() {
                out.flows.entry(path).or_default().extend(found.own);
            }
        }
    });
    out.notes.sort();
    out.notes.dedup();
    if reads.is_empty() {
        return out;
    }
    for e in entries() {
        let rel = e.rel.trim_start_matches("./");
        let wanted: Vec<&Reads> = reads
            .iter()
            .filter(|r| r.globs.iter().any(|g| resolve::files_match_either(g, rel)))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let Some(docs) = std::fs::read_to_string(&e.path)
            .ok()
            .and_then(|t| yaml::read_resolved(&t).ok())
        else {
            continue; // the main walk names a file it cannot read
        };
        for params in resolve::file_param_sets(rel, &docs) {
            for r in &wanted {
                let Some(from) = params.get(&r.param).and_then(|p| p.from.as_ref()) else {
                    continue;
                };
                let flow = Flow {
                    path: crate::find::templates::values_path(from),
                    position: Position::DestinationServer,
                    template: r.by.clone(),
                    generator: true,
                    inline: None,
                    app: None,
                };
                let have = out.flows.entry(e.path.clone()).or_default();
                if !have.contains(&flow) {
                    have.push(flow);
                }
            }
        }
    }
    out
}

/// What one file's ApplicationSets give: git files generators to follow
/// into other files, positions of the file itself, and notes.
#[derive(Default)]
struct Found {
    reads: Vec<Reads>,
    own: Vec<Flow>,
    notes: Vec<Note>,
}

/// The parameter a templated `destination.server` is made of: one
/// parameter, alone or with a `default` (`{{ .api | default "..." }}`,
/// `{{ default "..." .api }}`, Go `text/template` and sprig's `default`:
/// the parameter when it is set); else why it is not followed.
pub fn server_param(written: &str) -> Result<String, String> {
    let v = written.trim().trim_matches(['"', '\'']);
    if let Some(p) = params::one_param(v) {
        return Ok(p);
    }
    let Some(inner) = v
        .strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .filter(|i| !i.contains("{{") && !i.contains("}}"))
    else {
        return Err(format!("`{v}` is built from parts"));
    };
    let inner = inner.trim_matches('-').trim();
    let piped: Vec<&str> = inner.split('|').map(str::trim).collect();
    if let [x, d] = piped.as_slice() {
        if d.starts_with("default ") && !d[8..].trim().starts_with('.') {
            if let Some(p) = resolve::param_name(x) {
                return Ok(p);
            }
        }
    }
    if let Some(rest) = inner.strip_prefix("default ") {
        let rest = rest.trim_start();
        if let Some(lit) = rest.strip_prefix('"') {
            if let Some(end) = lit.find('"') {
                if let Some(p) = resolve::param_name(lit[end + 1..].trim()) {
                    return Ok(p);
                }
            }
        }
    }
    Err(format!("`{v}` reads no one parameter"))
}

/// The ApplicationSets in `text` (the file `rel`) whose template's
/// `destination.server` (or its `templatePatch`'s) is templated: what their
/// generators give for it.
fn generators_of(rel: &str, text: &str) -> Found {
    let mut out = Found::default();
    let masked = yaml::mask_templates(text).map(|(m, _)| m);
    let Ok(docs) = yaml::read_yaml_or_json(masked.as_deref().unwrap_or(text)) else {
        return out;
    };
    // A chart template's server is the chart's to follow (or name).
    let in_chart = rel.split('/').any(|c| c == "templates");
    // The masked reading blanks the actions inside strings too (a
    // `templatePatch`): those are read from the file as written when it
    // parses so.
    let raw = match masked {
        Some(_) => yaml::read_yaml_or_json(text)
            .ok()
            .filter(|r| r.len() == docs.len()),
        None => None,
    };
    for (i, doc) in docs.iter().enumerate() {
        let m = Manifest { file: rel, doc };
        let Some(app) = application::app_of(&m).filter(|a| a.kind == "ApplicationSet") else {
            continue;
        };
        let as_written = raw.as_ref().map_or(doc, |r| &r[i]);
        let Some((written, line, patch)) = server_of(text, doc, as_written) else {
            continue;
        };
        if !written.contains("{{") || in_chart {
            continue;
        }
        let what = match patch {
            true => application::APPSET_TEMPLATE_PATCH,
            false => application::APPSET_TEMPLATE,
        };
        let param = match server_param(&written) {
            Ok(p) => p,
            Err(why) => {
                out.notes.push(Note {
                    rel: rel.to_string(),
                    line,
                    message: format!(
                        "ApplicationSet/{}'s {what} destination server {why}",
                        app.name
                    ),
                });
                continue;
            }
        };
        let globs: Vec<String> = app
            .git_generators
            .iter()
            .flat_map(|g| g.files.iter().cloned())
            .collect();
        let at = format!("ApplicationSet/{} ({rel}:{line})", app.name);
        if !globs.is_empty() {
            out.reads.push(Reads {
                globs,
                param: param.clone(),
                by: format!("git files generator of {at}"),
            });
        }
        let resource = format!("ApplicationSet/{}", app.name);
        let own = |path: ValuesPath, road: String, inline: Inline| Flow {
            path,
            position: Position::DestinationServer,
            template: format!("{road} of {at} puts parameter {param} in"),
            generator: true,
            inline: Some(inline),
            app: Some(resource.clone()),
        };
        let here = Here {
            rel,
            app: &app.name,
            param: &param,
            patch,
        };
        here.generators(doc, &own, &mut out);
    }
    out
}

/// One ApplicationSet's templated server: where it is, and the parameter.
struct Here<'a> {
    rel: &'a str,
    app: &'a str,
    param: &'a str,
    /// Set by a `templatePatch` (the positions table does not read it).
    patch: bool,
}

impl Here<'_> {
    /// The positions the ApplicationSet's generators (`doc`'s) give the
    /// parameter in its own file, made by `own`; what is not read goes to
    /// `out`'s notes.
    fn generators(
        &self,
        doc: &Node,
        own: &dyn Fn(ValuesPath, String, Inline) -> Flow,
        out: &mut Found,
    ) {
        let (rel, param, patch) = (self.rel, self.param, self.patch);
        let keys: Vec<&str> = param.split('.').collect();
        let mut generators = Vec::new();
        if let Some(g) = doc.at(&positions::GENERATORS) {
            g.walk(&mut |p: &YamlPath, n: &Node| generators.push((p.clone(), n.clone())));
        }
        let under = |p: &YamlPath| {
            let mut full: Vec<Seg> = positions::GENERATORS
                .iter()
                .map(|k| Seg::Key(k.to_string()))
                .collect();
            full.extend(p.0.iter().cloned());
            YamlPath(full)
        };
        for (p, n) in &generators {
            let tail: Vec<&str> = p.keys().collect();
            // A cluster generator's `values.<key>`.
            if let Some(k) = param.strip_prefix("values.") {
                let ends = tail.len() >= 3
                    && tail[tail.len() - 3..tail.len() - 1] == positions::CLUSTER_VALUES
                    && tail[tail.len() - 1] == k;
                if ends && n.as_str().is_some() {
                    out.own.push(own(
                        crate::find::templates::values_path(&under(p)),
                        "cluster generator values".into(),
                        Inline::Element,
                    ));
                }
            }
            // A list element, when the template's own server does not
            // make it one already (the positions table reads that).
            if patch && tail.len() >= 2 && tail[tail.len() - 2..] == positions::LIST_ELEMENTS {
                if let Value::Seq(items) = &n.value {
                    for (i, e) in items.iter().enumerate() {
                        if e.at(&keys).and_then(Node::as_str).is_some() {
                            let mut path = under(p);
                            path.0.push(Seg::Index(i));
                            path.0.extend(keys.iter().map(|k| Seg::Key(k.to_string())));
                            out.own.push(own(
                                crate::find::templates::values_path(&path),
                                "list generator element".into(),
                                Inline::Element,
                            ));
                        }
                    }
                }
            }
            // `elementsYaml`: a YAML string of elements.
            if tail.len() >= 2 && tail[tail.len() - 2..] == positions::LIST_ELEMENTS_YAML {
                let Some(s) = n.as_str() else { continue };
                let Ok(inner) = yaml::read_yaml_or_json(s) else {
                    out.notes.push(Note {
                        rel: rel.to_string(),
                        line: n.line,
                        message: format!(
                            "ApplicationSet/{}'s list generator elementsYaml is not read",
                            self.app
                        ),
                    });
                    continue;
                };
                if let Some(Value::Seq(items)) = inner.first().map(|d| &d.value) {
                    if items
                        .iter()
                        .any(|e| e.at(&keys).and_then(Node::as_str).is_some())
                    {
                        let mut path = vec![Step::Each];
                        path.extend(keys.iter().map(|k| Step::Key(k.to_string())));
                        out.own.push(own(
                            ValuesPath(path),
                            "list generator elementsYaml".into(),
                            Inline::Values(crate::find::templates::values_path(&under(p))),
                        ));
                    }
                }
            }
        }
    }
}

/// The template's `destination.server` as written (the masked reading
/// blanks its actions), its line, and whether a `templatePatch` sets it
/// (the patch, a YAML string, read only when the template sets none).
fn server_of(text: &str, doc: &Node, as_written: &Node) -> Option<(String, usize, bool)> {
    if let Some(node) = doc.at(&positions::template_server_path()) {
        let written = text.get(node.start..)?.lines().next().unwrap_or("");
        return Some((written.to_string(), node.line, false));
    }
    let patch = as_written.at(&positions::template_patch_path())?;
    let Value::Scalar(s, style) = &patch.value else {
        return None;
    };
    let masked = yaml::mask_templates(s).map(|(m, _)| m);
    let inner = yaml::read_yaml_or_json(masked.as_deref().unwrap_or(s)).ok()?;
    let path = positions::template_server_path();
    // The patch is the template's `spec`-level document: `spec.destination.server`.
    let node = inner.iter().find_map(|d| d.at(&path[2..]))?;
    let written = s.get(node.start..)?.lines().next().unwrap_or("");
    let block = matches!(style, TScalarStyle::Literal | TScalarStyle::Folded);
    let line = match block {
        true => patch.line + node.line - 1,
        false => patch.line,
    };
    Some((written.to_string(), line, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One parameter, alone or with sprig's `default` either way round, is
    /// followed; anything else says why not.
    #[test]
    fn server_params_and_why_not() {
        for (w, p) in [
            ("'{{.api}}'", "api"),
            (
                "'{{ .cluster.api | default \"https://k\" }}'",
                "cluster.api",
            ),
            ("'{{ default \"https://k\" .api }}'", "api"),
            ("'{{api}}'", "api"),
        ] {
            assert_eq!(server_param(w).as_deref(), Ok(p), "{w}");
        }
        assert!(server_param("'https://{{ .host }}:6443'")
            .unwrap_err()
            .contains("built from parts"));
        assert!(server_param("'{{ (index .clusters 0).api }}'")
            .unwrap_err()
            .contains("no one parameter"));
        assert!(server_param("'{{ .a | default .b }}'").is_err());
    }
}
