//! The parameters a git generator makes (argo-cd
//! `applicationset/generators/git.go`): of each file a files generator's
//! glob matches ([`file_params`]) and each folder a directories generator's
//! glob matches ([`dir_params`]); [`glob_match`], a generator's `path` glob
//! against a repository path; [`normalized`], argo-cd's `sanitizeName`,
//! which the git and cluster generators both use.

use crate::syntax::yaml::{Node, Seg, Value, YamlPath};
use std::collections::BTreeMap;

/// One generator parameter: its value and, for one read from a file, the
/// YAML path of the scalar it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub value: String,
    pub from: Option<YamlPath>,
}

/// The parameters a git files generator makes of the file at `path` whose
/// documents are `docs`: each scalar under its flattened key (`a.b`, as
/// fasttemplate reads it; Go templates read `.a.b` the same), and the
/// `path` parameters.
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

/// Whether the repository path `path` matches a git generator's glob
/// (`clusters/*/config.json`, `**` for any folders): `*` and `?` stay in
/// one folder, as Go's `path.Match` (and doublestar's `**`) read them.
pub fn glob_match(glob: &str, path: &str) -> bool {
    let g: Vec<&str> = glob.trim_start_matches('/').split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    segments_match(&g, &p)
}

fn segments_match(g: &[&str], p: &[&str]) -> bool {
    match (g.first(), p.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            segments_match(&g[1..], p) || (!p.is_empty() && segments_match(g, &p[1..]))
        }
        (Some(gs), Some(ps)) => {
            segment_match(gs.as_bytes(), ps.as_bytes()) && segments_match(&g[1..], &p[1..])
        }
        _ => false,
    }
}

fn segment_match(g: &[u8], s: &[u8]) -> bool {
    match (g.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            segment_match(&g[1..], s) || (!s.is_empty() && segment_match(g, &s[1..]))
        }
        (Some(b'?'), Some(_)) => segment_match(&g[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => segment_match(&g[1..], &s[1..]),
        _ => false,
    }
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

    #[test]
    fn globs_stay_in_one_folder_unless_double_star() {
        assert!(glob_match(
            "clusters/*/config.json",
            "clusters/prod/config.json"
        ));
        assert!(!glob_match(
            "clusters/*/config.json",
            "clusters/a/b/config.json"
        ));
        assert!(glob_match(
            "clusters/**/config.json",
            "clusters/a/b/config.json"
        ));
        assert!(glob_match("/envs/*.yaml", "envs/prod.yaml"));
        assert!(!glob_match("envs/*.yaml", "other/prod.yaml"));
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
