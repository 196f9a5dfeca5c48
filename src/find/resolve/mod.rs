//! What ArgoCD renders from where: the one reading of an Application's
//! sources that discovery (which files a chart's values come from, which
//! generator files hold a cluster) and the after-merge review (which
//! Application a rewritten file feeds) share.
//!
//! - [`value_file`]: a Helm source's `valueFiles` entry, by ArgoCD's rules
//!   (argo-cd `reposerver/repository/repository.go`,
//!   `getResolvedValueFiles`, and `util/io/path/resolved.go`,
//!   `ResolveValueFilePathOrUrl`): relative to the source's `path`; from the
//!   repository root when it starts with `/`; `$ref/...` through the `ref`
//!   source of a multi-source Application (its repository's root); a URL is
//!   fetched, not read from a repository; a path that climbs above the root
//!   is refused. A name holding a template (an ApplicationSet's
//!   `{{.cluster}}`) is filled from the generator parameters when they are
//!   known ([`fill`]), and is [`ValueFile::Templated`] otherwise.
//! - [`fill`]: an ApplicationSet template string with a generator's
//!   parameters (fasttemplate `{{name}}` and Go template `{{.name}}`,
//!   `{{ .path.basename }}`, `{{index . "name"}}`).
//! - [`file_params`]: the parameters a git files generator makes of one
//!   file (argo-cd `applicationset/generators/git.go`,
//!   `generateParamsFromGitFile`: the file's keys flattened, plus `path`,
//!   `path.basename`, `path.filename`, `path.basenameNormalized`,
//!   `path.filenameNormalized`, `path[N]`), each with the YAML path of the
//!   scalar it comes from.
//! - [`dir_params`]: the same for a git directories generator (a folder).
//! - [`files_match_either`], [`path_match`]: which files and folders a git
//!   generator's globs read.
//! - [`sets`]: the parameter sets of an ApplicationSet's generators known
//!   from the repository (list, the cluster generator over the
//!   registrations it holds, git, matrix and merge of them, selectors) and
//!   the Applications they make ([`sets::made`]).
//! - [`charts`]: an Application's inline Helm values as its chart's values,
//!   in ArgoCD's precedence.
//!
//! Paths are `/`-separated and relative to the repository root.

pub mod charts;
pub mod git;
pub mod sets;

pub use git::{dir_params, file_param_sets, file_params, files_match_either, path_match, Param};

use crate::model::application::Source;
use std::collections::BTreeMap;

/// Where a `valueFiles` entry of a Helm source is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueFile {
    /// A file of the source's own repository, from its root.
    Repo(String),
    /// A file of the repository of the `ref` source named (`$values/...`),
    /// from that repository's root: this repository when `repo_url` is
    /// this one's (the caller knows its remotes).
    Ref {
        name: String,
        repo_url: String,
        path: String,
    },
    /// A URL the repo server fetches (`https://.../values.yaml`).
    Remote(String),
    /// A name with a template the known parameters do not fill.
    Templated(String),
    /// Refused by ArgoCD: above the repository root, or `$name` naming no
    /// `ref` source of the Application.
    Refused { file: String, why: String },
}

impl ValueFile {
    /// The repository path when it is in the source's repository, or in a
    /// `ref` source's repository that `this_repo` says is this one.
    pub fn in_repo(&self, this_repo: impl Fn(&str) -> bool) -> Option<&str> {
        match self {
            ValueFile::Repo(p) => Some(p),
            ValueFile::Ref { repo_url, path, .. } if this_repo(repo_url) => Some(path),
            _ => None,
        }
    }
}

/// Resolves the `valueFiles` entry `file` of `source` (one of `sources`,
/// the Application's sources, where its `ref` sources are), filling
/// templates from `params` (empty: none known).
pub fn value_file(
    sources: &[Source],
    source: &Source,
    file: &str,
    params: &BTreeMap<String, String>,
) -> ValueFile {
    let filled;
    let file = if file.contains("{{") {
        match fill(file, params) {
            Some(f) => {
                filled = f;
                filled.as_str()
            }
            None => return ValueFile::Templated(file.to_string()),
        }
    } else {
        file
    };
    if file.contains("://") {
        return ValueFile::Remote(file.to_string());
    }
    if let Some(rest) = file.strip_prefix('$') {
        let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(r) = sources.iter().find(|s| s.ref_name.as_deref() == Some(name)) else {
            return ValueFile::Refused {
                file: file.to_string(),
                why: format!("no source of the Application has `ref: {name}`"),
            };
        };
        return match normalize("", path) {
            Some(path) => ValueFile::Ref {
                name: name.to_string(),
                repo_url: r.repo_url.clone(),
                path,
            },
            None => above_root(file),
        };
    }
    let base = if file.starts_with('/') {
        ""
    } else {
        source.path.as_deref().unwrap_or("")
    };
    match normalize(base, file) {
        Some(p) => ValueFile::Repo(p),
        None => above_root(file),
    }
}

fn above_root(file: &str) -> ValueFile {
    ValueFile::Refused {
        file: file.to_string(),
        why: "outside the repository root".into(),
    }
}

/// `rel` joined to the folder `base`, `.` and `..` resolved; `None` above
/// the root.
pub fn normalize(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in base.split('/').chain(rel.split('/')) {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Fills an ApplicationSet template string with a generator's parameters:
/// `None` when an action names a parameter not in `params`, or is not a
/// plain parameter reference (a function, a pipe).
pub fn fill(template: &str, params: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find("}}")?;
        let name = param_name(&after[..close])?;
        out.push_str(params.get(&name)?);
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// The parameter an action reads: `{{name}}`, `{{ .name }}`,
/// `{{.path.basename}}`, `{{index . "name"}}`, `{{- .name -}}`; `None`
/// for anything else.
pub fn param_name(action: &str) -> Option<String> {
    let a = action.strip_prefix('-').unwrap_or(action);
    let a = a.strip_suffix('-').unwrap_or(a).trim();
    if let Some(key) = a.strip_prefix("index . ") {
        return crate::syntax::gotemplate::go_string(key);
    }
    let name = a.strip_prefix('.').unwrap_or(a);
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'));
    plain.then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(path: Option<&str>, r: Option<&str>, repo: &str) -> Source {
        Source {
            repo_url: repo.into(),
            path: path.map(String::from),
            ref_name: r.map(String::from),
            ..Source::default()
        }
    }

    #[test]
    fn value_files_by_argocd_rules() {
        let chart = src(
            Some("charts/app"),
            None,
            "https://git.example.com/gitops.git",
        );
        let values = src(None, Some("values"), "https://git.example.com/config.git");
        let all = [chart.clone(), values];
        let none = BTreeMap::new();
        let r = |f: &str| value_file(&all, &chart, f, &none);
        assert_eq!(
            r("values-prod.yaml"),
            ValueFile::Repo("charts/app/values-prod.yaml".into())
        );
        assert_eq!(
            r("../../envs/prod.yaml"),
            ValueFile::Repo("envs/prod.yaml".into())
        );
        assert_eq!(
            r("/envs/prod.yaml"),
            ValueFile::Repo("envs/prod.yaml".into())
        );
        assert_eq!(
            r("$values/envs/prod.yaml"),
            ValueFile::Ref {
                name: "values".into(),
                repo_url: "https://git.example.com/config.git".into(),
                path: "envs/prod.yaml".into()
            }
        );
        assert!(matches!(r("$other/x.yaml"), ValueFile::Refused { .. }));
        assert!(matches!(r("../../../x.yaml"), ValueFile::Refused { .. }));
        assert_eq!(
            r("https://example.com/v.yaml"),
            ValueFile::Remote("https://example.com/v.yaml".into())
        );
        assert_eq!(
            r("envs/{{.cluster}}.yaml"),
            ValueFile::Templated("envs/{{.cluster}}.yaml".into())
        );
        let params = BTreeMap::from([("cluster".to_string(), "prod".to_string())]);
        assert_eq!(
            value_file(&all, &chart, "/envs/{{.cluster}}.yaml", &params),
            ValueFile::Repo("envs/prod.yaml".into())
        );
        assert_eq!(
            value_file(&all, &chart, "/envs/{{cluster}}.yaml", &params),
            ValueFile::Repo("envs/prod.yaml".into())
        );
    }

    #[test]
    fn fill_reads_plain_parameters_only() {
        let p = BTreeMap::from([
            ("path.basename".to_string(), "prod".to_string()),
            ("api".to_string(), "https://k.example.com".to_string()),
        ]);
        assert_eq!(
            fill("{{ .path.basename }}-x", &p).as_deref(),
            Some("prod-x")
        );
        assert_eq!(
            fill("{{index . \"api\"}}", &p).as_deref(),
            Some("https://k.example.com")
        );
        assert_eq!(fill("{{ upper .api }}", &p), None);
        assert_eq!(fill("{{.missing}}", &p), None);
    }
}
