//! The Applications an ApplicationSet makes, when every parameter of its
//! generators is known from the repository: `list` elements, the cluster
//! generator over the cluster registrations (Secrets labelled
//! `argocd.argoproj.io/secret-type: cluster`) the repository holds, git
//! generators (their sets given by the review, which reads the tree), and
//! `matrix`/`merge` generators combining them. A git generator at the top
//! whose parameters make the source path is the review's own road. SCM
//! provider, pull request, plugin and cluster decision resource
//! generators read a service or the hub: "not known", with the reason
//! naming them.

use super::git::normalized;
use crate::find::names::registration_fields;
use crate::model::application::{App, Generator, GeneratorKind, GitGenerator, Params, Selector};
use crate::model::positions;
use crate::syntax::yaml::{Node, Value};

/// A cluster registration held in the repository: the parameters the
/// cluster generator gives it (argo-cd `applicationset/generators/cluster.go`:
/// `name`, `nameNormalized`, `server`, `project`, `metadata.labels.<key>`,
/// `metadata.annotations.<key>`) and its labels (what selectors match).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub file: String,
    pub labels: Vec<(String, String)>,
    pub params: Params,
}

/// The name ArgoCD gives the cluster it runs in when no Secret registers
/// it, and that cluster's server (argo-cd `util/db`: `in-cluster`,
/// `KubernetesInternalAPIServerAddr`).
pub const IN_CLUSTER: (&str, &str) = ("in-cluster", "https://kubernetes.default.svc");

/// Whether a destination (its `server` and `name`, `None` when not set) is
/// the cluster ArgoCD runs in: exactly the server
/// `https://kubernetes.default.svc` or the name `in-cluster`, as argo-cd
/// `util/db/cluster.go` (`GetCluster`) compares them: a trailing `/`, a
/// port or another case is another server, which no registration names.
/// Both set is no destination (argo-cd `util/argo/argo.go`: "application
/// destination can't have both name and server defined").
pub fn is_in_cluster(server: Option<&str>, name: Option<&str>) -> bool {
    match (server, name) {
        (Some(s), None) => s == IN_CLUSTER.1,
        (None, Some(n)) => n == IN_CLUSTER.0,
        _ => false,
    }
}

/// The cluster registration a document is, if it is one (a Secret with
/// the cluster label, its fields in `stringData` or base64 in `data`, or
/// an ExternalSecret's template).
pub fn registration_of(doc: &Node, file: &str) -> Option<Registered> {
    let kind = doc.str_at(positions::KIND)?;
    let reg = positions::REGISTRATIONS.iter().find(|r| r.kind == kind)?;
    let labels_node = doc.at(reg.labels)?;
    let (label, want) = positions::CLUSTER_SECRET_LABEL;
    if labels_node.str_at(&[label]) != Some(want) {
        return None;
    }
    let field = |key: &str| -> Option<String> {
        if let Some(v) = registration_fields(doc).and_then(|f| f.str_at(&[key])) {
            return Some(v.to_string());
        }
        reg.servers
            .iter()
            .filter(|(_, b64)| *b64)
            .find_map(|(p, _)| {
                let raw = doc.at(&p[..p.len() - 1])?.str_at(&[key])?;
                crate::text::base64::decode_text(raw.trim())
            })
    };
    let name = field("name")?;
    let mut params: Params = vec![
        ("name".into(), name.clone()),
        ("nameNormalized".into(), normalized(&name)),
        (server_key().into(), field(server_key()).unwrap_or_default()),
    ];
    // `project`: the registration's, and empty when it sets none (argo-cd
    // `applicationset/generators/cluster.go` `getClusterParameters`:
    // `params["project"] = ""` when the Secret has no `project`), so
    // `{{project}}` renders empty rather than not at all.
    let project = positions::REGISTRATION_PROJECT_KEY;
    params.push((project.into(), field(project).unwrap_or_default()));
    let labels = scalars(labels_node);
    for (k, v) in &labels {
        params.push((format!("metadata.labels.{k}"), v.clone()));
    }
    let meta = &reg.labels[..reg.labels.len() - 1];
    if let Some(ann) = doc.at(meta).and_then(|m| m.get("annotations")) {
        for (k, v) in scalars(ann) {
            params.push((format!("metadata.annotations.{k}"), v));
        }
    }
    Some(Registered {
        file: file.to_string(),
        labels,
        params,
    })
}

/// The key a registration's server is under (the table's last step), which
/// is also the cluster generator's parameter name for it
/// (`params["server"] = cluster.Data["server"]`).
pub fn server_key() -> &'static str {
    positions::REGISTRATIONS
        .first()
        .and_then(|r| r.servers.first())
        .and_then(|(p, _)| p.last().copied())
        .unwrap_or_default()
}

fn scalars(map: &Node) -> Vec<(String, String)> {
    match &map.value {
        Value::Map(pairs) => pairs
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
            .collect(),
        _ => Vec::new(),
    }
}

/// What an ApplicationSet's generators give, when known: every parameter
/// set, and whether that is all of them (`false` when the hub may hold
/// more: a cluster generator sees every cluster registered on the hub,
/// and only those in the repository are known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub sets: Vec<Params>,
    pub complete: bool,
}

/// Whether a selector matches a set of labels (Kubernetes label selector
/// rules: every `matchLabels` pair, every expression; `In`, `NotIn`,
/// `Exists`, `DoesNotExist`). `None` when it holds what is not read.
fn selects(sel: &Selector, labels: &[(String, String)]) -> Option<bool> {
    if sel.unread {
        return None;
    }
    let get = |k: &str| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v);
    let mut all = sel.match_labels.iter().all(|(k, v)| get(k) == Some(v));
    for (k, op, values) in &sel.expressions {
        all &= match op.as_str() {
            "In" => get(k).is_some_and(|v| values.contains(v)),
            "NotIn" => get(k).is_none_or(|v| !values.contains(v)),
            "Exists" => get(k).is_some(),
            "DoesNotExist" => get(k).is_none(),
            _ => return None,
        };
    }
    Some(all)
}

/// What the review knows of the repository for the generators: the
/// cluster registrations it holds, and the parameter sets of a git
/// generator (each folder or file it matches at its revision, when that
/// revision is the base branch and the repository is this one).
pub struct Inputs<'a> {
    pub registrations: &'a [Registered],
    pub git: &'a dyn Fn(&GitGenerator) -> Result<Vec<Params>, String>,
}

/// The parameter sets of one generator, or why they are not known.
fn sets_of(g: &Generator, regs: &Inputs) -> Result<Known, String> {
    let known = match &g.kind {
        GeneratorKind::List(elements) => Known {
            sets: elements.clone(),
            complete: true,
        },
        GeneratorKind::Clusters { selector, values } => {
            clusters(selector, values, regs.registrations)?
        }
        GeneratorKind::Matrix(children) => {
            let [a, b] = children.as_slice() else {
                return Err(
                    "a matrix generator that does not combine exactly two generators".into(),
                );
            };
            let (a, b) = (sets_of(a, regs)?, sets_of(b, regs)?);
            let mut sets = Vec::new();
            for x in &a.sets {
                for y in &b.sets {
                    let mut one = x.clone();
                    put_all(&mut one, y);
                    sets.push(one);
                }
            }
            Known {
                sets,
                complete: a.complete && b.complete,
            }
        }
        GeneratorKind::Merge(keys, children) => merge(keys, children, regs)?,
        GeneratorKind::Git(git) => Known {
            sets: (regs.git)(git)?,
            complete: true,
        },
        GeneratorKind::Other(name) => {
            return Err(format!(
                "the `{name}` generator's parameters come from outside the repository"
            ))
        }
    };
    if g.selector.is_empty() {
        return Ok(known);
    }
    let mut sets = Vec::new();
    for set in known.sets {
        match selects(&g.selector, &set) {
            Some(true) => sets.push(set),
            Some(false) => {}
            None => return Err("a generator's selector that is not read".into()),
        }
    }
    Ok(Known { sets, ..known })
}

/// `one`'s parameters, each of `other`'s put over it.
fn put_all(one: &mut Params, other: &Params) {
    for (k, v) in other {
        match one.iter_mut().find(|(o, _)| o == k) {
            Some(slot) => slot.1 = v.clone(),
            None => one.push((k.clone(), v.clone())),
        }
    }
}

/// The cluster generator (Generators-Cluster.md, argo-cd
/// `ClusterGenerator.GenerateParams`): each registration its selector
/// matches; the local cluster (`in-cluster`, last, with `nameNormalized`
/// and an empty `project`) too when the selector is empty and no
/// registration is its; `values.<key>` with the cluster's parameters put
/// in. (`flatList`, one set listing every cluster, is not read: the
/// table makes it an unknown generator.) The hub may
/// register clusters the repository does not hold: never complete.
fn clusters(selector: &Selector, values: &Params, regs: &[Registered]) -> Result<Known, String> {
    let mut sets = Vec::new();
    for r in regs {
        match selects(selector, &r.labels) {
            Some(true) => sets.push(r.params.clone()),
            Some(false) => {}
            None => return Err("the cluster generator's selector is not read".into()),
        }
    }
    // The local cluster last, when no registration is its (argo-cd
    // `SecretsContainInClusterCredentials`) and the selector is empty.
    if selector.is_empty()
        && !regs
            .iter()
            .any(|r| has(&r.params, server_key(), IN_CLUSTER.1))
    {
        sets.push(vec![
            ("name".to_string(), IN_CLUSTER.0.to_string()),
            ("nameNormalized".to_string(), IN_CLUSTER.0.to_string()),
            (server_key().to_string(), IN_CLUSTER.1.to_string()),
            (
                positions::REGISTRATION_PROJECT_KEY.to_string(),
                String::new(),
            ),
        ]);
    }
    for set in &mut sets {
        let with: Params = values
            .iter()
            .map(|(k, v)| {
                let v = render(v, set).unwrap_or_else(|| v.clone());
                (format!("values.{k}"), v)
            })
            .collect();
        put_all(set, &with);
    }
    if regs.is_empty() && !selector.is_empty() {
        return Err(
            "the cluster generator reads the clusters registered on the hub, and the repository holds no cluster registration (Secret labelled argocd.argoproj.io/secret-type: cluster)".into(),
        );
    }
    Ok(Known {
        sets,
        complete: false,
    })
}

fn has(params: &Params, key: &str, value: &str) -> bool {
    params.iter().any(|(k, v)| k == key && v == value)
}

/// The merge generator (Generators-Merge.md): the first generator's sets,
/// each updated by every set of a later generator that has the same
/// values for all `mergeKeys`; later sets that match none are dropped.
fn merge(keys: &[String], children: &[Generator], regs: &Inputs) -> Result<Known, String> {
    let Some((first, rest)) = children.split_first() else {
        return Err("a merge generator with no generators".into());
    };
    if keys.is_empty() {
        return Err("a merge generator with no mergeKeys".into());
    }
    let base = sets_of(first, regs)?;
    let mut sets = base.sets;
    let mut complete = base.complete;
    for g in rest {
        let other = sets_of(g, regs)?;
        // A later generator the hub may extend may update any base set.
        complete &= other.complete;
        for o in &other.sets {
            let key_of = |p: &Params| -> Option<Vec<String>> {
                keys.iter()
                    .map(|k| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
                    .collect()
            };
            let Some(ok) = key_of(o) else { continue };
            for set in sets.iter_mut().filter(|s| key_of(s) == Some(ok.clone())) {
                put_all(set, o);
            }
        }
    }
    Ok(Known { sets, complete })
}

/// Every parameter set generators are known to make from the repository,
/// for discovery (which files a templated `valueFiles` name may be): each
/// generator's sets (`sets_of`) when known; of a matrix or merge whose
/// sets are not (a child reads a service), the sets of its children that
/// are known, each alone, so a name that needs only their parameters is
/// still found. Not what the hub makes: the review asks [`made`].
pub fn known(generators: &[Generator], inputs: &Inputs) -> Vec<Params> {
    let mut out = Vec::new();
    for g in generators {
        match (sets_of(g, inputs), &g.kind) {
            (Ok(k), _) => out.extend(k.sets),
            (Err(_), GeneratorKind::Matrix(c) | GeneratorKind::Merge(_, c)) => {
                out.extend(known(c, inputs))
            }
            (Err(_), _) => {}
        }
    }
    out
}

/// Every parameter set an ApplicationSet's generators make, from the
/// repository (git generators too, through `inputs.git`): `Err` when one
/// is not known.
pub fn all(app: &App, inputs: &Inputs) -> Result<Vec<Params>, String> {
    let mut sets = Vec::new();
    for g in &app.generators {
        sets.extend(sets_of(g, inputs)?.sets);
    }
    Ok(sets)
}

/// The Applications an ApplicationSet makes from parameters known in the
/// repository: its template with each set put in. `None` when it has a
/// git generator at its top (the review follows git generators itself);
/// `Err` with the reason when a parameter is not known.
pub fn made(app: &App, regs: &Inputs) -> Option<Result<(Vec<App>, bool), String>> {
    // A git generator at the top whose parameters make the path is the
    // review's own road (`feeders`); one that names only value files or a
    // revision is followed here.
    let top_git = app
        .generators
        .iter()
        .any(|g| matches!(g.kind, GeneratorKind::Git(_)));
    let path_templated = app
        .sources
        .iter()
        .any(|s| s.path.as_deref().is_some_and(|p| p.contains("{{")));
    if app.generators.is_empty() || top_git && path_templated {
        return None;
    }
    let mut sets = Vec::new();
    let mut complete = true;
    for g in &app.generators {
        match sets_of(g, regs) {
            Ok(k) => {
                sets.extend(k.sets);
                complete &= k.complete;
            }
            Err(why) => return Some(Err(why)),
        }
    }
    let mut apps = Vec::new();
    for params in &sets {
        match put_in(app, params) {
            Some(one) => apps.push(one),
            None => {
                return Some(Err(
                    "the template uses a parameter or template action the generators do not give"
                        .into(),
                ))
            }
        }
    }
    Some(Ok((apps, complete)))
}

/// `app` with `params` put into its sources' paths, revisions and value
/// files.
fn put_in(app: &App, params: &Params) -> Option<App> {
    let mut one = app.clone();
    for src in &mut one.sources {
        src.path = match src.path.as_deref() {
            Some(p) => Some(render(p, params)?),
            None => None,
        };
        src.target_revision = render(&src.target_revision, params)?;
        src.value_files = src
            .value_files
            .iter()
            .map(|v| render(v, params))
            .collect::<Option<Vec<_>>>()?;
    }
    Some(one)
}

/// `text` with each parameter action (`{{name}}`, `{{ .name }}`,
/// `{{index . "name"}}`) filled from `params` ([`super::fill`]); `None`
/// when an action is anything else or names no parameter.
pub fn render(text: &str, params: &[(String, String)]) -> Option<String> {
    if !text.contains("{{") {
        return Some(text.to_string());
    }
    let map: std::collections::BTreeMap<String, String> = params.iter().cloned().collect();
    super::fill(text, &map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Kubernetes label selectors: every `matchLabels` pair and expression.
    #[test]
    fn selectors_match_labels_and_expressions() {
        let env = |e: &str| labels(&[("env", e), ("tier", "gold")]);
        let mut sel = Selector {
            match_labels: labels(&[("tier", "gold")]),
            ..Selector::default()
        };
        assert_eq!(selects(&sel, &env("prod")), Some(true));
        sel.expressions
            .push(("env".into(), "In".into(), vec!["prod".into()]));
        assert_eq!(selects(&sel, &env("prod")), Some(true));
        assert_eq!(selects(&sel, &env("stage")), Some(false));
        sel.expressions
            .push(("team".into(), "DoesNotExist".into(), vec![]));
        assert_eq!(selects(&sel, &env("prod")), Some(true));
        sel.expressions.push(("env".into(), "Gt".into(), vec![]));
        assert_eq!(selects(&sel, &env("prod")), None);
    }

    /// Generators-Merge.md: later sets update the base sets with the same
    /// merge keys; a later set matching none is dropped.
    #[test]
    fn merge_updates_base_sets_by_their_keys() {
        let list = |sets: &[&[(&str, &str)]]| Generator {
            kind: GeneratorKind::List(sets.iter().map(|s| labels(s)).collect()),
            selector: Selector::default(),
        };
        let base = list(&[&[("name", "a"), ("x", "1")], &[("name", "b"), ("x", "1")]]);
        let over = list(&[&[("name", "b"), ("x", "2")], &[("name", "c"), ("x", "3")]]);
        let none = |_: &GitGenerator| -> Result<Vec<Params>, String> { Err("none".into()) };
        let inputs = Inputs {
            registrations: &[],
            git: &none,
        };
        let got = merge(&["name".into()], &[base, over], &inputs).unwrap();
        assert!(got.complete);
        assert_eq!(
            got.sets,
            vec![
                labels(&[("name", "a"), ("x", "1")]),
                labels(&[("name", "b"), ("x", "2")])
            ]
        );
    }

    /// The cluster generator: the local cluster only with an empty
    /// selector, `values.<key>` templated by the cluster's parameters, and
    /// never complete (the hub may register more).
    #[test]
    fn cluster_parameters_come_from_registrations() {
        let reg = Registered {
            file: "c.yaml".into(),
            labels: labels(&[("env", "prod")]),
            params: labels(&[("name", "prod"), ("metadata.labels.env", "prod")]),
        };
        let values = labels(&[("dir", "envs/{{name}}")]);
        let all = clusters(&Selector::default(), &values, std::slice::from_ref(&reg)).unwrap();
        assert!(!all.complete);
        assert_eq!(all.sets.len(), 2);
        assert!(has(&all.sets[0], "values.dir", "envs/prod"));
        assert!(has(&all.sets[1], "name", IN_CLUSTER.0));
        assert!(has(&all.sets[1], "nameNormalized", IN_CLUSTER.0));
        assert!(has(&all.sets[1], "values.dir", "envs/in-cluster"));
        let prod = Selector {
            match_labels: labels(&[("env", "prod")]),
            ..Selector::default()
        };
        assert_eq!(
            clusters(&prod, &Vec::new(), std::slice::from_ref(&reg))
                .unwrap()
                .sets
                .len(),
            1
        );
        assert!(clusters(&prod, &Vec::new(), &[]).is_err());
    }

    /// argo-cd `getClusterParameters`: `project` is the Secret's, or empty
    /// when it has none (never missing), as for the local cluster.
    #[test]
    fn a_registration_without_a_project_gives_an_empty_project() {
        let secret = |extra: &str| {
            let text = format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  name: prod\n  server: https://k8s.example.org:6443\n{extra}"
            );
            let doc = crate::syntax::yaml::read_yaml_or_json(&text)
                .unwrap()
                .remove(0);
            registration_of(&doc, "c.yaml").unwrap()
        };
        let none = secret("");
        assert!(has(&none.params, "project", ""), "{:?}", none.params);
        assert_eq!(render("p-{{project}}", &none.params).as_deref(), Some("p-"));
        let team = secret("  project: team-a\n");
        assert!(has(&team.params, "project", "team-a"), "{:?}", team.params);
        assert_eq!(
            team.params.iter().filter(|(k, _)| k == "project").count(),
            1
        );
    }

    /// What discovery reads of generators: a matrix whose sets are known
    /// is every pair (Generators-Matrix.md); one with a child whose
    /// parameters come from a service gives its known child's sets alone.
    #[test]
    fn known_sets_combine_or_fall_back_to_the_known_children() {
        let list = |k: &str, v: &str| Generator {
            kind: GeneratorKind::List(vec![labels(&[(k, v)])]),
            selector: Selector::default(),
        };
        let matrix = |b: Generator| Generator {
            kind: GeneratorKind::Matrix(vec![list("env", "prod"), b]),
            selector: Selector::default(),
        };
        let none = |_: &GitGenerator| -> Result<Vec<Params>, String> { Err("none".into()) };
        let inputs = Inputs {
            registrations: &[],
            git: &none,
        };
        assert_eq!(
            known(&[matrix(list("region", "eu"))], &inputs),
            vec![labels(&[("env", "prod"), ("region", "eu")])]
        );
        let scm = Generator {
            kind: GeneratorKind::Other("scmProvider".into()),
            selector: Selector::default(),
        };
        assert_eq!(
            known(&[matrix(scm)], &inputs),
            vec![labels(&[("env", "prod")])]
        );
    }

    /// Generators-Cluster.md, argo-cd `applicationset/generators/cluster.go`:
    /// `flatList: true` makes one set whose `clusters` parameter lists every
    /// cluster, so a template's `{{name}}` is no cluster's: not known.
    #[test]
    fn a_flat_list_cluster_generator_is_not_known() {
        let doc = |flat: &str| {
            crate::syntax::yaml::read_yaml_or_json(&format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: s}}\nspec:\n  generators:\n    - clusters: {{flatList: {flat}}}\n  template:\n    spec:\n      source: {{repoURL: r, path: 'envs/{{{{name}}}}'}}\n"
            ))
            .unwrap()
            .remove(0)
        };
        let none = |_: &GitGenerator| -> Result<Vec<Params>, String> { Err("none".into()) };
        let inputs = Inputs {
            registrations: &[],
            git: &none,
        };
        let made_of = |flat: &str| {
            let d = doc(flat);
            let app = crate::model::application::app_of(&crate::model::application::Manifest {
                file: "s.yaml",
                doc: &d,
            })
            .unwrap();
            made(&app, &inputs).unwrap()
        };
        let (apps, complete) = made_of("false").unwrap();
        assert_eq!(apps[0].sources[0].path.as_deref(), Some("envs/in-cluster"));
        assert!(!complete);
        assert!(made_of("true").unwrap_err().contains("flatList"));
    }
}
