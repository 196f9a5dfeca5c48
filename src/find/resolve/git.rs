//! The parameters a git generator makes (argo-cd
//! `applicationset/generators/git.go`): of each file a files generator's
//! glob matches ([`file_params`]) and each folder a directories generator's
//! glob matches ([`dir_params`]); which files and folders its globs read
//! ([`files_match`], [`path_match`]; [`glob_match`], argo-cd's
//! `util/glob.Match`, which directory `include`/`exclude` use too);
//! [`normalized`], argo-cd's `sanitizeName`,
//! which the git and cluster generators both use.

use crate::model::application::{GitGenerator, Params};
use crate::syntax::yaml::{Node, Seg, Value, YamlPath};
use std::collections::BTreeMap;

/// One generator parameter: its value and, for one read from a file, the
/// YAML path of the scalar it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub value: String,
    pub from: Option<YamlPath>,
}

/// The parameter sets a git files generator makes of the file at `path`
/// whose documents are `docs` (argo-cd `applicationset/generators/git.go`,
/// `generateParamsFromGitFile`: the file is first read as an array, each
/// element one set; else as one object, one set): [`file_params`] of each.
/// A set read from an element keeps the element's index at the front of
/// each [`Param::from`].
pub fn file_param_sets(path: &str, docs: &[Node]) -> Vec<BTreeMap<String, Param>> {
    if let [doc] = docs {
        if let Value::Seq(items) = &doc.value {
            return items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let mut set = file_params(path, std::slice::from_ref(item));
                    for p in set.values_mut() {
                        if let Some(from) = &mut p.from {
                            from.0.insert(0, Seg::Index(i));
                        }
                    }
                    set
                })
                .collect();
        }
    }
    vec![file_params(path, docs)]
}

/// The parameters a git files generator makes of the file at `path` whose
/// documents are `docs` (one object): each scalar under its flattened key
/// (`a.b`, as fasttemplate reads it; Go templates read `.a.b` the same),
/// and the `path` parameters.
pub fn file_params(path: &str, docs: &[Node]) -> BTreeMap<String, Param> {
    let mut out = BTreeMap::new();
    for doc in docs {
        doc.walk(&mut |p: &YamlPath, n: &Node| {
            if let Value::Scalar(v, _) = &n.value {
                let keys: Option<Vec<&str>> =
                    p.0.iter()
                        .map(|s| match s {
                            Seg::Key(k) => Some(k.as_str()),
                            Seg::Index(_) => None,
                        })
                        .collect();
                if let Some(keys) = keys.filter(|k| !k.is_empty()) {
                    out.insert(
                        keys.join("."),
                        Param {
                            value: v.clone(),
                            from: Some(p.clone()),
                        },
                    );
                }
            }
        });
    }
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let file = path.rsplit('/').next().unwrap_or(path);
    for (k, v) in path_params(dir) {
        out.insert(
            k,
            Param {
                value: v,
                from: None,
            },
        );
    }
    let plain = |k: &str, v: &str| {
        (
            k.to_string(),
            Param {
                value: v.to_string(),
                from: None,
            },
        )
    };
    out.extend([
        plain("path.filename", file),
        plain("path.filenameNormalized", &normalized(file)),
    ]);
    out
}

/// The parameters a git directories generator makes of the folder `dir`.
pub fn dir_params(dir: &str) -> BTreeMap<String, String> {
    path_params(dir).into_iter().collect()
}

/// `path`, `path.basename`, `path.basenameNormalized`, `path[N]` of a
/// folder (argo-cd `applicationset/generators/git.go`).
fn path_params(dir: &str) -> Vec<(String, String)> {
    let base = dir.rsplit('/').next().unwrap_or(dir);
    let mut out = vec![
        ("path".to_string(), dir.to_string()),
        ("path.path".to_string(), dir.to_string()),
        ("path.basename".to_string(), base.to_string()),
        ("path.basenameNormalized".to_string(), normalized(base)),
    ];
    for (i, seg) in dir.split('/').enumerate() {
        out.push((format!("path[{i}]"), seg.to_string()));
        out.push((format!("path.segments[{i}]"), seg.to_string()));
    }
    out
}

/// argo-cd's `sanitizeName` (`applicationset/utils/template_functions.go`,
/// `SanitizeName`, which the git generator's `path.basenameNormalized` and
/// `path.filenameNormalized` and the cluster generator's `nameNormalized`
/// use): lower-cased, every character but `a-z0-9-.` made `-`, at most 253
/// bytes, `-` and `.` trimmed from both ends.
pub fn normalized(name: &str) -> String {
    let mut out: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(253);
    out.trim_matches(['-', '.']).to_string()
}

/// A generator file's documents by its path: `Ok(None)` skips the file,
/// `Err` says why the generator's sets are not known.
pub type FileDocs<'a> = dyn Fn(&str) -> Result<Option<Vec<Node>>, String> + 'a;

/// A git generator's parameter sets (Generators-Git.md; argo-cd
/// `applicationset/generators/git.go`): each folder among `dirs` that one
/// of its `directories` entries matches and no `exclude` entry does
/// ([`path_match`], [`dir_params`]), then each file among `files` that one
/// of its `files` globs reads (`reads`: [`files_match`] under the
/// controller's setting), its keys flattened ([`file_params`]) from
/// `docs` (`Ok(None)`: the file is skipped). A folder or file is one set
/// however many entries match it.
pub fn sets(
    g: &GitGenerator,
    dirs: &[String],
    files: &[String],
    reads: &dyn Fn(&str, &str) -> bool,
    docs: &FileDocs,
) -> Result<Vec<Params>, String> {
    let mut out: Vec<Params> = Vec::new();
    let hit = |d: &str, exclude: bool| {
        g.directories
            .iter()
            .any(|(p, ex)| *ex == exclude && path_match(p, d))
    };
    for d in dirs {
        if hit(d, false) && !hit(d, true) && !hidden_folder(d) {
            out.push(dir_params(d).into_iter().collect());
        }
    }
    for f in files {
        if !g.files.iter().any(|glob| reads(glob, f)) {
            continue;
        }
        if let Some(docs) = docs(f)? {
            for params in file_param_sets(f, &docs) {
                out.push(params.into_iter().map(|(k, p)| (k, p.value)).collect());
            }
        }
    }
    Ok(out)
}

/// Glob matching as ArgoCD's directory `include`/`exclude` and git
/// generators' `files`/`directories` use it: argo-cd `util/glob.Match`
/// (gobwas/glob compiled with no separators), so `*` crosses `/`; `{a,b}`
/// alternatives, `?`, `[...]` and `[!...]`; case-sensitive. With no
/// separators gobwas's `**` is `*` (`**/x` needs a `/`, it does not match
/// `x` as a path glob's `**` would). A pattern that does not compile
/// matches nothing (as `glob.Match` returns false).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    crate::text::glob::gobwas(pattern, text)
}

/// Go's `path.Match`, as a git directories generator matches its `path`
/// entries (argo-cd `applicationset/generators/git.go`): `*` and `?` do
/// not cross `/` (`**` is `*`), `[...]` classes (`^` negates), no `{a,b}`
/// alternatives; a malformed entry matches nothing (ArgoCD logs it and
/// goes on).
pub fn path_match(pattern: &str, text: &str) -> bool {
    crate::text::glob::go_path(pattern, text).unwrap_or(false)
}

/// Whether a folder is hidden from a git directories generator: one of
/// its names starts with `.` (argo-cd reposerver `GetGitDirectories`
/// returns `filepath.SkipDir` for it, unless the repo server sets
/// `reposerver.include.hidden.directories`, which is not in the
/// repository).
pub fn hidden_folder(dir: &str) -> bool {
    dir.split('/').any(|n| n.starts_with('.'))
}

/// Whether a git files generator's glob reads `file` (argo-cd
/// `util/git/client.go`, `LsFiles`; Generators-Git-File-Globbing.md): by
/// default greedy ([`glob_match`]: `*` crosses `/`); with the controller's
/// `applicationsetcontroller.enable.new.git.file.globbing` (`new_globbing`),
/// doublestar (`*` stays in one folder, `**` is any folders).
pub fn files_match(glob: &str, file: &str, new_globbing: bool) -> bool {
    if !new_globbing {
        return crate::text::glob::git_pathspec(glob, file).unwrap_or(false);
    }
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(file))
}

/// [`files_match`] for discovery, which does not read the controller's
/// setting: a file either globbing reads (a leading `/` is the root).
pub fn files_match_either(glob: &str, file: &str) -> bool {
    let glob = glob.trim_start_matches('/');
    files_match(glob, file, false) || files_match(glob, file, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_params_flatten_keys_and_name_their_scalars() {
        let docs = crate::syntax::yaml::read_yaml_or_json(
            "cluster:\n  api: https://k.example.com\n  name: prod\nlist: [a]\n",
        )
        .unwrap();
        let p = file_params("clusters/prod/config.yaml", &docs);
        assert_eq!(p["cluster.api"].value, "https://k.example.com");
        assert_eq!(
            p["cluster.api"].from.as_ref().unwrap().to_string(),
            "cluster.api"
        );
        assert_eq!(p["path"].value, "clusters/prod");
        assert_eq!(p["path.basename"].value, "prod");
        assert_eq!(p["path[0]"].value, "clusters");
        assert!(!p.contains_key("list"));
        assert_eq!(dir_params("apps/x")["path.basename"], "x");
    }

    /// argo-cd `generateParamsFromGitFile`: an array first, each element
    /// one set (its scalars' paths keep the element's index); else one.
    #[test]
    fn a_file_that_is_a_list_gives_a_set_per_element() {
        let docs = crate::syntax::yaml::read_yaml_or_json(
            "- cluster: {api: https://a}\n- cluster: {api: https://b}\n",
        )
        .unwrap();
        let sets = file_param_sets("lst/all.yaml", &docs);
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[1]["cluster.api"].value, "https://b");
        assert_eq!(
            sets[1]["cluster.api"].from.as_ref().unwrap().to_string(),
            "[1].cluster.api"
        );
        assert_eq!(sets[0]["path"].value, "lst");
        let one = crate::syntax::yaml::read_yaml_or_json("api: x\n").unwrap();
        assert_eq!(file_param_sets("a.yaml", &one).len(), 1);
    }

    #[test]
    fn globs_follow_argocd_directory_patterns() {
        assert!(glob_match("*.yaml", "a.yaml"));
        assert!(glob_match("*.yaml", "sub/a.yaml"));
        assert!(glob_match("{*.yml,*.yaml}", "a.yml"));
        assert!(!glob_match("{*.yml,*.yaml}", "a.json"));
        assert!(glob_match("some-directory/*", "some-directory/x.yaml"));
        assert!(!glob_match("some-directory/*", "other/x.yaml"));
        assert!(glob_match("{config.json,env-usw2/*}", "env-usw2/a.yaml"));
        assert!(glob_match("app-[0-9].yaml", "app-7.yaml"));
        assert!(!glob_match("app-[!0-9].yaml", "app-7.yaml"));
        // argo-cd util/glob.Match compiles with no separators: `*` and `?`
        // cross `/`; it is case-sensitive; a pattern that does not compile
        // matches nothing.
        assert!(glob_match("a?b.yaml", "a/b.yaml"));
        assert!(!glob_match("*.yaml", "a.YAML"));
        assert!(!glob_match("APPS/*", "apps/x.yaml"));
        assert!(glob_match("{prod,stage}/*.json", "stage/x.json"));
        assert!(!glob_match("{prod,stage}/*.json", "dev/x.json"));
        assert!(!glob_match("[", "["));
        assert!(glob_match("**/values.yaml", "a/b/values.yaml"));
        assert!(!glob_match("**/values.yaml", "values.yaml"));
        assert!(glob_match("a/**", "a/b/c"));
        assert!(glob_match("x\\**", "x*y"));
        assert!(!glob_match("x\\**", "xy"));
        // A directories generator matches as Go's path.Match.
        assert!(path_match("addons/*", "addons/keda"));
        assert!(!path_match("addons/*", "addons/keda/sub"));
        assert!(!path_match("{a,b}", "a"));
        assert!(path_match("app-[^0-9]", "app-x"));
    }

    /// Generators-Git-File-Globbing.md: doublestar with the new globbing
    /// (`*` in one folder, `**` any folders, none included); discovery
    /// takes a file either globbing reads.
    #[test]
    fn files_globs_follow_the_controller_setting() {
        let deep = "clusters/a/b/config.json";
        assert!(files_match(
            "clusters/*/config.json",
            "clusters/prod/config.json",
            true
        ));
        assert!(!files_match("clusters/*/config.json", deep, true));
        assert!(files_match("clusters/*/config.json", deep, false));
        assert!(files_match("clusters/**/config.json", deep, true));
        assert!(files_match(
            "clusters/**/config.json",
            "clusters/config.json",
            true
        ));
        assert!(!files_match(
            "clusters/**/config.json",
            "clusters/config.json",
            false
        ));
        assert!(files_match_either(
            "clusters/**/config.json",
            "clusters/config.json"
        ));
        assert!(files_match_either("/envs/*.yaml", "envs/prod.yaml"));
        assert!(!files_match_either("envs/*.yaml", "other/prod.yaml"));
    }

    /// Generators-Git.md: a directories generator gives each folder one
    /// of its paths matches (`path.Match`) and no `exclude` entry does,
    /// once however many entries match it; a files generator each file its
    /// globs read, its keys flattened.
    #[test]
    fn git_sets_give_each_folder_and_file_once() {
        let g = GitGenerator {
            directories: vec![
                ("apps/*".into(), false),
                ("apps/a*".into(), false),
                ("apps/skip".into(), true),
            ],
            files: vec!["cfg/*.json".into()],
            repo_url: String::new(),
            revision: String::new(),
        };
        let dirs: Vec<String> = ["apps", "apps/a1", "apps/skip", "apps/a1/deep"]
            .map(String::from)
            .to_vec();
        let files: Vec<String> = ["cfg/x.json", "cfg/notes.txt"].map(String::from).to_vec();
        let docs = |f: &str| {
            Ok(Some(
                crate::syntax::yaml::read_yaml_or_json(&format!("{{\"name\": \"{f}\"}}")).unwrap(),
            ))
        };
        let reads = |glob: &str, f: &str| files_match(glob, f, false);
        let got = sets(&g, &dirs, &files, &reads, &docs).unwrap();
        let value =
            |set: &Params, k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(value(&got[0], "path").as_deref(), Some("apps/a1"));
        assert_eq!(value(&got[1], "name").as_deref(), Some("cfg/x.json"));
        let refuse =
            |_: &str| -> Result<Option<Vec<Node>>, String> { Err("not one mapping".into()) };
        assert!(sets(&g, &dirs, &files, &reads, &refuse).is_err());
    }

    /// argo-cd `SanitizeName` (applicationset/utils/template_functions.go),
    /// as the git generator's `path.basenameNormalized` and
    /// `path.filenameNormalized` (applicationset/generators/git.go) and the
    /// cluster generator's `nameNormalized` (generators/cluster.go) use it.
    #[test]
    fn names_are_normalized_as_argocd_does() {
        assert_eq!(normalized("My_Cluster.1"), "my-cluster.1");
        assert_eq!(normalized("-prod-"), "prod");
        assert_eq!(normalized("prod"), "prod");
        assert_eq!(normalized(&"a".repeat(300)).len(), 253);
        assert_eq!(normalized(&format!("{}_x", "b".repeat(252))).len(), 252);
        let p = file_params("envs/_Prod_/.Values.yaml", &[]);
        assert_eq!(p["path.basenameNormalized"].value, "prod");
        assert_eq!(p["path.filenameNormalized"].value, "values.yaml");
        assert_eq!(
            dir_params("apps/My App.")["path.basenameNormalized"],
            "my-app"
        );
    }
}
