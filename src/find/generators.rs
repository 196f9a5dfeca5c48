//! Values that an ApplicationSet's git files generator reads from files in
//! the repository into a cluster position: the template's
//! `destination.server` is `{{.api}}` (or `{{api}}`, `{{index . "api"}}`),
//! and every file the generator's `files[].path` glob matches holds the
//! server under that key (argo-cd `applicationset/generators/git.go`,
//! `generateParamsFromGitFile`: the file's keys flattened into
//! parameters). Each such scalar is a position of its file, found the way a
//! chart's values are ([`templates::Flow`]), with the generator as its road.
//! What the parameters are is [`resolve`]'s reading.

use crate::discover::walk::{Role, Walk};
use crate::find::templates::{Flow, Step, ValuesPath};
use crate::find::{params, resolve};
use crate::model::application::{self, Manifest};
use crate::model::positions::{self, Position};
use crate::syntax::yaml::{self, Seg};
use std::collections::HashMap;
use std::path::PathBuf;

/// One git files generator whose template puts a parameter in a cluster
/// position: its globs, the parameter, and where it is declared.
struct Reads {
    globs: Vec<String>,
    param: String,
    /// `ApplicationSet/name (file:line)`.
    by: String,
}

/// The positions git files generators give files of the walk: each file
/// (its path to open) with its flows.
pub fn follow(walk: &Walk) -> HashMap<PathBuf, Vec<Flow>> {
    let yaml = |p: &std::path::Path| {
        p.extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
    };
    // Walked twice, lazily, rather than listed: what this keeps never grows
    // with the files (the second walk runs only when a generator reads files).
    let entries = || walk.entries_where(&yaml).filter(|e| e.role == Role::Yaml);
    let mut reads = Vec::new();
    let read = |e: &crate::discover::walk::Entry| {
        let Ok(text) = std::fs::read_to_string(&e.path) else {
            return Vec::new();
        };
        if text.contains("ApplicationSet") && text.contains("files") {
            generators_of(&e.rel, &text)
        } else {
            Vec::new()
        }
    };
    crate::sys::par::par_each(entries(), read, |r| reads.extend(r));
    let mut out: HashMap<PathBuf, Vec<Flow>> = HashMap::new();
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
        let params = resolve::file_params(rel, &docs);
        for r in wanted {
            let Some(from) = params.get(&r.param).and_then(|p| p.from.as_ref()) else {
                continue;
            };
            let steps = from
                .0
                .iter()
                .map(|s| match s {
                    Seg::Key(k) => Step::Key(k.clone()),
                    Seg::Index(_) => Step::Each,
                })
                .collect();
            out.entry(e.path.clone()).or_default().push(Flow {
                path: ValuesPath(steps),
                position: Position::DestinationServer,
                template: r.by.clone(),
                generator: true,
                inline: None,
                app: None,
            });
        }
    }
    out
}

/// The git files generators of the ApplicationSets in `text` whose
/// template's `destination.server` is one parameter.
fn generators_of(rel: &str, text: &str) -> Vec<Reads> {
    let masked = yaml::mask_templates(text).map(|(m, _)| m);
    let Ok(docs) = yaml::read_yaml_or_json(masked.as_deref().unwrap_or(text)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in &docs {
        let m = Manifest { file: rel, doc };
        let Some(app) = application::app_of(&m).filter(|a| a.kind == "ApplicationSet") else {
            continue;
        };
        let globs: Vec<String> = app
            .git_generators
            .iter()
            .flat_map(|g| g.files.iter().cloned())
            .collect();
        if globs.is_empty() {
            continue;
        }
        let Some(node) = doc.at(&positions::template_server_path()) else {
            continue;
        };
        // The template as written (the masked reading blanks its actions).
        let written = &text[node.start..];
        let written = written.lines().next().unwrap_or("");
        let Some(param) = params::one_param(written) else {
            continue;
        };
        out.push(Reads {
            globs,
            param,
            by: format!(
                "git files generator of ApplicationSet/{} ({rel}:{})",
                app.name, node.line
            ),
        });
    }
    out
}
