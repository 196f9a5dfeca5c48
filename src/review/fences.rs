//! What stops ArgoCD from syncing an Application whatever its revision:
//! its AppProject's permissions (source repositories, destinations, the
//! namespaces its Applications may live in) and a symbolic link of the
//! repository that points outside it.
//!
//! The project rules are argo-cd's
//! `pkg/apis/application/v1alpha1/app_project_types.go`
//! (`IsSourcePermitted`, `IsDestinationPermitted`, `isDestinationMatched`,
//! `IsAppNamespacePermitted`) and docs/user-guide/projects.md; the symbolic
//! link rule is `util/app/path.CheckOutOfBoundsSymlinks`, which the repo
//! server runs over the whole checkout (`.git` aside) before it renders
//! any Application of the repository (`reposerver/repository`:
//! "repository contains out-of-bounds symlinks").

use crate::find::resolve::sets::{is_in_cluster, server_key, Registered, IN_CLUSTER};
use crate::model::application::{
    namespaced, App, DiffSetting, KindList, Project, Resource, DEFAULT_PROJECT,
};
use crate::syntax::yaml::{self, Node, Value};
use crate::text::glob::go_path;
use std::path::{Component, Path};

/// ArgoCD's `util/glob.Match` (argo-cd `util/glob/glob.go`): gobwas/glob
/// ([`crate::text::glob::gobwas_with`]), with `/` a separator when `sep`
/// (`IsSourcePermitted` passes `'/'`: `*` and `?` stay inside one
/// segment, `**` and a class cross it); `isDestinationMatched` and the
/// namespace lists pass none (`*` is any characters). `{a,b}` are
/// alternatives, a class is negated by `!` only. `Err`: the pattern does
/// not compile (`glob.Match` is then false).
fn glob(pattern: &str, text: &str, sep: bool) -> Result<bool, crate::text::glob::BadPattern> {
    crate::text::glob::gobwas_with(pattern, text, if sep { &['/'] } else { &[] })
}

/// argo-cd's `globMatch(pattern, val, allowNegation=true)`: `!p` matches
/// what `p` does not; `*` matches anything. `val` `None`: a value that is
/// not known (a cluster's name or server the repository does not give, a
/// templated field): only `*` is known to match it; `None` when the
/// answer depends on it. A pattern that does not compile matches nothing
/// (as `glob.Match`); behind `!`, where ArgoCD would then let everything
/// through, it is `None`: what the entry was meant to deny is not known,
/// so nothing it guards is proven.
fn glob_match(pattern: &str, val: Option<&str>, sep: bool) -> Option<bool> {
    match val {
        Some(v) => match pattern.strip_prefix('!') {
            Some(p) => glob(p, v, sep).ok().map(|m| !m),
            None => Some(pattern == "*" || glob(pattern, v, sep).unwrap_or(false)),
        },
        None if pattern == "*" => Some(true),
        None => None,
    }
}

fn is_deny(pattern: &str) -> bool {
    pattern.starts_with('!')
}

/// argo-cd `util/git.NormalizeGitURL`: lower-cased and trimmed, an
/// scp-style SSH URL (`git@host:org/repo`) written as `host/org/repo`, no
/// `.git` suffix, no `ssh://`.
pub fn normalize_git_url(repo: &str) -> String {
    let mut repo = repo.trim().to_lowercase();
    let ssh = {
        let rest = repo.strip_prefix("ssh://").unwrap_or(&repo);
        matches!(rest.split_once('@'), Some((user, host)) if !user.contains(['/', ':']) && !host.contains('@'))
    };
    if ssh && !repo.starts_with("ssh://") {
        repo = format!("ssh://{}", repo.replacen(':', "/", 1));
    }
    let repo = repo.strip_suffix(".git").unwrap_or(&repo);
    repo.strip_prefix("ssh://").unwrap_or(repo).to_string()
}

/// An answer of the project rules.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Permit {
    Yes,
    /// Denied: the rule that denies it.
    No(String),
    /// It depends on what the repository does not say: what.
    Unknown(String),
}

/// `IsSourcePermitted`: some `sourceRepos` pattern matches the normalized
/// repoURL (`globMatch(normalized, srcNormalized, true, '/')`: `*` inside
/// one `/` segment, `**` across), and no `!` pattern fails to.
fn source_permitted(p: &Project, repo_url: &str) -> Permit {
    let templated = repo_url.contains("{{");
    let src = normalize_git_url(repo_url);
    let src = (!templated).then_some(src.as_str());
    let (mut any, mut unknown_match, mut unknown_deny) = (false, false, false);
    for pattern in &p.source_repos {
        let normalized = match pattern.strip_prefix('!') {
            Some(rest) => format!("!{}", normalize_git_url(rest)),
            None => normalize_git_url(pattern),
        };
        match glob_match(&normalized, src, true) {
            Some(true) => any = true,
            Some(false) if is_deny(&normalized) => {
                return Permit::No(format!(
                    "its sourceRepos entry `{pattern}` ({}:{}) denies {repo_url}",
                    p.file, p.source_repos_line
                ))
            }
            Some(false) => {}
            None if is_deny(&normalized) => unknown_deny = true,
            None => unknown_match = true,
        }
    }
    if unknown_deny || (!any && unknown_match) {
        let why = if templated {
            format!("the repoURL {repo_url} is templated")
        } else {
            "a `!` entry is no glob ArgoCD's matcher (gobwas/glob) compiles, so what it denies is not known".to_string()
        };
        return Permit::Unknown(format!(
            "{why}: whether AppProject {}'s sourceRepos ({}:{}) permit it is not known",
            p.name, p.file, p.source_repos_line
        ));
    }
    if any {
        Permit::Yes
    } else {
        Permit::No(format!(
            "no sourceRepos entry of it ({}:{}) permits {repo_url}",
            p.file, p.source_repos_line
        ))
    }
}

/// An Application's destination as ArgoCD matches it: the cluster's server
/// and name (`None`: not known), the namespace (`None`: templated).
struct Dest<'a> {
    server: Option<&'a str>,
    name: Option<&'a str>,
    namespace: Option<&'a str>,
    shown: String,
}

fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn not3(a: Option<bool>) -> Option<bool> {
    a.map(|b| !b)
}

/// `isDestinationMatched`: an entry matches when its server or name
/// matches and its namespace does; the first `!` entry that the
/// destination fails (server or name with the namespace matched, or the
/// namespace with the server matched) denies it.
fn destination_permitted(p: &Project, d: &Dest) -> Permit {
    let (mut any, mut unknown) = (false, false);
    for item in &p.destinations {
        // `dst.Name != "" && globMatch(...)`: a cluster always has a
        // server; a name the repository does not give is some name.
        let name_m = match d.name {
            Some("") => Some(false),
            Some(n) => glob_match(&item.name, Some(n), false),
            None if item.name.is_empty() => Some(false),
            None => glob_match(&item.name, None, false),
        };
        let server_m = match d.server {
            Some("") => Some(false),
            other => glob_match(&item.server, other, false),
        };
        let ns_m = glob_match(&item.namespace, d.namespace, false);
        let matched = and3(or3(server_m, name_m), ns_m);
        let denied_cluster = or3(
            and3(not3(name_m), Some(is_deny(&item.name))),
            and3(and3(not3(server_m), Some(is_deny(&item.server))), ns_m),
        );
        let denied_ns = and3(and3(not3(ns_m), Some(is_deny(&item.namespace))), server_m);
        match matched {
            Some(true) => any = true,
            Some(false) => match or3(denied_cluster, denied_ns) {
                Some(true) => {
                    return Permit::No(format!(
                        "its destinations entry {{server: `{}`, name: `{}`, namespace: `{}`}} ({}:{}) denies {}",
                        item.server, item.name, item.namespace, p.file, item.line, d.shown
                    ))
                }
                Some(false) => {}
                None => unknown = true,
            },
            None => unknown = true,
        }
    }
    if unknown {
        let bad_deny = p.destinations.iter().any(|i| {
            [&i.server, &i.name, &i.namespace].iter().any(|f| {
                f.strip_prefix('!')
                    .is_some_and(|g| glob(g, "", false).is_err())
            })
        });
        let also = if bad_deny {
            ", or a `!` entry that is no glob ArgoCD's matcher (gobwas/glob) compiles"
        } else {
            ""
        };
        return Permit::Unknown(format!(
            "whether AppProject {}'s destinations ({}:{}) permit {} depends on what the repository does not give (a templated field, or the cluster's {} registered on the hub{also})",
            p.name,
            p.file,
            p.destinations_line,
            d.shown,
            if d.server.is_none() { "URL" } else { "name" }
        ));
    }
    if any {
        Permit::Yes
    } else {
        Permit::No(format!(
            "no destinations entry of it ({}:{}) permits {}",
            p.file, p.destinations_line, d.shown
        ))
    }
}

/// `IsAppNamespacePermitted`'s `sourceNamespaces` lookup
/// (`glob.MatchStringInList`, REGEXP mode: `/.../` is a regular
/// expression, which is not evaluated here).
fn namespace_listed(p: &Project, ns: &str) -> Permit {
    let mut regex = false;
    for item in &p.source_namespaces {
        if item.len() > 1 && item.starts_with('/') && item.ends_with('/') {
            regex = true;
        } else if glob(item, ns, false).unwrap_or(false) {
            return Permit::Yes;
        }
    }
    if regex {
        Permit::Unknown(format!(
            "AppProject {}'s sourceNamespaces ({}:{}) hold a regular expression, which the review does not evaluate",
            p.name, p.file, p.source_namespaces_line
        ))
    } else {
        Permit::No(format!(
            "its sourceNamespaces ({}:{}) do not list it",
            p.file, p.source_namespaces_line
        ))
    }
}

/// The control-plane namespace ArgoCD assumed when the repository does not
/// say (the namespace of its install manifests).
pub const CONTROL_PLANE: &str = "argocd";

/// Whether `app`'s project lets ArgoCD sync it, from the AppProjects the
/// repository holds (`projects`, as they are after the rewrite) and its
/// cluster registrations (a destination's server from its name, or its
/// name from its server): `Ok(None)` proven, `Ok(Some(assumption))` proven
/// under an assumption that is named, `Err(why)` not proven.
pub fn project_permits(
    app: &App,
    projects: &[Project],
    registrations: &[Registered],
    watched: Option<&str>,
) -> Result<Option<String>, String> {
    let Some(name) = &app.project else {
        return Ok(None);
    };
    let id = format!("{} ({})", app.id(), app.file);
    // A chart template's fields are masked to read it.
    if let Some(why) = &app.rendered {
        return Err(format!("{id} {why}: its AppProject is not known"));
    }
    if name.contains("{{") {
        return Err(format!(
            "{id} names its project through a template (`{name}`): which AppProject permits it is not known"
        ));
    }
    let found: Vec<&Project> = projects.iter().filter(|p| p.name == *name).collect();
    // AppProjects live in the control-plane namespace.
    let declared_ns = || shared_namespace(projects);
    let project = match found.as_slice() {
        [one] => Some(*one),
        [] if name == DEFAULT_PROJECT => None,
        [] => {
            return Err(format!(
                "{id} is in AppProject {name}, which is not in the repository: whether it permits {} is not known",
                shown(app)
            ))
        }
        many => {
            let at: Vec<String> = many.iter().map(|p| format!("{}:{}", p.file, p.line)).collect();
            return Err(format!(
                "{id} is in AppProject {name}, and the repository holds {} AppProjects of that name ({}): which one the hub holds is not known",
                many.len(),
                at.join(", ")
            ));
        }
    };
    let mut assumed = Vec::new();
    let Some(p) = project else {
        assumed.push(format!(
            "AppProject {DEFAULT_PROJECT} is not in the repository: taken as the one ArgoCD creates, which permits every source and destination"
        ));
        if let Err(why) = app_namespace(app, None, declared_ns(), watched, &mut assumed) {
            return Err(format!("{id}: {why}"));
        }
        return Ok(Some(assumed.join("; ")));
    };
    let at = format!("AppProject {} ({}:{})", p.name, p.file, p.line);
    if let Some(why) = &p.rendered {
        return Err(format!("{id} is in {at}, which {why}"));
    }
    if let Some((field, line, why)) = p.holds {
        return Err(format!(
            "{id} is in {at}, which sets `{field}` ({}:{line}), which the review does not model: {why}",
            p.file
        ));
    }
    if p.scoped_clusters {
        return Err(format!(
            "{id} is in {at}, which sets permitOnlyProjectScopedClusters: the clusters scoped to it are registered on the hub, not known"
        ));
    }
    for src in &app.sources {
        match source_permitted(p, &src.repo_url) {
            Permit::Yes => {}
            Permit::No(why) => return Err(format!("{id}: {at} does not permit its source: {why}")),
            Permit::Unknown(why) => return Err(format!("{id}: {why}")),
        }
    }
    let dest = dest_of(app, registrations);
    match destination_permitted(p, &dest) {
        Permit::Yes => {}
        Permit::No(why) => {
            return Err(format!("{id}: {at} does not permit its destination: {why}"))
        }
        Permit::Unknown(why) => return Err(format!("{id}: {why}")),
    }
    let ns = (!p.namespace.is_empty())
        .then(|| p.namespace.clone())
        .or_else(declared_ns);
    if let Err(why) = app_namespace(app, Some(p), ns, watched, &mut assumed) {
        return Err(format!("{id}: {why}"));
    }
    Ok((!assumed.is_empty()).then(|| assumed.join("; ")))
}

/// The control-plane namespace: the one namespace the repository's
/// AppProjects are in, else [`CONTROL_PLANE`] (`true`: assumed).
pub fn control_plane(projects: &[Project]) -> (String, bool) {
    match shared_namespace(projects) {
        Some(one) => (one, false),
        None => (CONTROL_PLANE.to_string(), true),
    }
}

/// The one namespace the repository's AppProjects name, if they agree.
fn shared_namespace(projects: &[Project]) -> Option<String> {
    let mut all: Vec<&str> = projects
        .iter()
        .map(|p| p.namespace.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    all.sort_unstable();
    all.dedup();
    match all.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// Whether the Application `child` that `applier` applies lands where the
/// ArgoCD that reconciles it runs: `applier`'s destination must be the
/// cluster ArgoCD runs in (server `https://kubernetes.default.svc` or name
/// `in-cluster`, argo-cd `pkg/apis/application/v1alpha1/application_defaults.go`),
/// and a child with no `metadata.namespace` takes `applier`'s destination
/// namespace (argo-cd `controller/state.go`, `NormalizeTargetObjects`),
/// which must then be the control-plane namespace. `Ok(Some(assumption))`
/// when the control-plane namespace is assumed; `Err(why)` when it does
/// not land there or that is not known. A root declared under `feeders:`
/// (no project read) or applied outside ArgoCD is not checked.
pub fn lands_in_control_plane(
    applier: &App,
    child: &App,
    projects: &[Project],
) -> Result<Option<String>, String> {
    if applier.project.is_none() || applier.applied_by.is_some() {
        return Ok(None);
    }
    let id = format!("{} ({})", applier.id(), applier.file);
    let d = &applier.destination;
    if d.server.is_some() && d.name.is_some() {
        return Err(format!(
            "{id} sets both destination.server and destination.name: ArgoCD refuses such a destination (util/argo/argo.go), so {} is not proven to reach the hub's controller",
            child.id()
        ));
    }
    if !is_in_cluster(d.server.as_deref(), d.name.as_deref()) {
        return Err(format!(
            "{id} applies its Applications to {}, not to the cluster ArgoCD runs in (server {} or name {}): {} is not proven to reach the hub's controller",
            shown(applier),
            IN_CLUSTER.1,
            IN_CLUSTER.0,
            child.id()
        ));
    }
    if !child.namespace.is_empty() {
        return Ok(None);
    }
    let (control, guessed) = control_plane(projects);
    if d.namespace == control {
        return Ok(guessed.then(|| format!(
            "the control-plane namespace is taken as {CONTROL_PLANE} (no AppProject of the repository names it)"
        )));
    }
    let lands = if d.namespace.is_empty() {
        "no namespace".to_string()
    } else {
        format!("namespace `{}`", d.namespace)
    };
    Err(format!(
        "{} ({}) names no metadata.namespace, so it lands in the destination namespace of {id}, {lands}, not the control-plane namespace {control}{}: the controller does not reconcile it there",
        child.id(),
        child.file,
        if guessed { " (assumed)" } else { "" }
    ))
}

/// `IsAppNamespacePermitted`: an Application with no namespace, or in the
/// control-plane namespace (`control`, else [`CONTROL_PLANE`] assumed and
/// said), is permitted; one elsewhere only when the controller watches its
/// namespace (`watched`: `application.namespaces` of the repository's
/// `argocd-cmd-params-cm`, comma-separated globs; `None`: no such
/// ConfigMap in the repository, so not known) and its project's
/// `sourceNamespaces` list it (the built-in default project lists none).
fn app_namespace(
    app: &App,
    p: Option<&Project>,
    control: Option<String>,
    watched: Option<&str>,
    assumed: &mut Vec<String>,
) -> Result<(), String> {
    if app.namespace.is_empty() {
        return Ok(());
    }
    let (control, guessed) = match control {
        Some(c) => (c, false),
        None => (CONTROL_PLANE.to_string(), true),
    };
    if app.namespace == control {
        if guessed {
            assumed.push(format!(
                "the control-plane namespace is taken as {CONTROL_PLANE} (no AppProject of the repository names it)"
            ));
        }
        return Ok(());
    }
    let outside = format!(
        "it is in namespace {}, not the control-plane namespace {control}{}",
        app.namespace,
        if guessed { " (assumed)" } else { "" }
    );
    watches(watched, &app.namespace).map_err(|why| format!("{outside}: {why}"))?;
    match p.map(|p| namespace_listed(p, &app.namespace)) {
        Some(Permit::Yes) => Ok(()),
        Some(Permit::No(why)) => Err(format!(
            "{outside}, and AppProject {} does not permit it: {why}",
            p.map_or("", |p| p.name.as_str())
        )),
        Some(Permit::Unknown(why)) => Err(format!("{outside}: {why}")),
        None => Err(format!(
            "{outside}, and the built-in AppProject {DEFAULT_PROJECT} lists no sourceNamespaces"
        )),
    }
}

/// Whether the application controller reconciles Applications in `ns`
/// besides its own namespace: only those `application.namespaces` lists
/// (docs/operator-manual/app-any-namespace.md; argo-cd
/// `glob.MatchStringInList(..., glob.REGEXP)`: each comma-separated entry
/// a glob, or a `/regular expression/`, which is not evaluated here).
fn watches(watched: Option<&str>, ns: &str) -> Result<(), String> {
    let Some(list) = watched else {
        return Err(format!(
            "no argocd-cmd-params-cm of the repository sets application.namespaces, so whether the controller reconciles Applications in {ns} is not known (by default it reconciles only its own namespace)"
        ));
    };
    let entries: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    if entries
        .iter()
        .any(|e| e.len() > 1 && e.starts_with('/') && e.ends_with('/'))
    {
        return Err(format!(
            "argocd-cmd-params-cm's application.namespaces (`{list}`) holds a regular expression, which the review does not evaluate"
        ));
    }
    if entries.iter().any(|e| glob(e, ns, false).unwrap_or(false)) {
        return Ok(());
    }
    Err(format!(
        "argocd-cmd-params-cm's application.namespaces (`{list}`) does not list {ns}: the controller does not reconcile Applications there"
    ))
}

/// How a destination reads in a reason.
fn shown(app: &App) -> String {
    format!(
        "{}, namespace `{}`",
        cluster_shown(app),
        app.destination.namespace
    )
}

/// How a destination's cluster reads in a reason.
fn cluster_shown(app: &App) -> String {
    let d = &app.destination;
    match (&d.server, &d.name) {
        (Some(s), _) => format!("server {s}"),
        (None, Some(n)) => format!("cluster {n}"),
        (None, None) => "no cluster".to_string(),
    }
}

/// argo-cd `isResourceInList`/`isNamedResourceInList`: an entry matches
/// when its kind, group (and for cluster lists its name, empty for any)
/// `filepath.Match` the resource's; a malformed pattern matches nothing.
/// `None` when an entry or the resource is not known as written.
fn in_kind_list(list: &KindList, res: &Resource, named: bool) -> Option<bool> {
    if list.unreadable {
        return None;
    }
    let m = |pattern: &Option<String>, val: &Option<String>| -> Option<bool> {
        match (pattern, val) {
            (Some(p), Some(v)) => Some(go_path(p, v).unwrap_or(false)),
            (Some(p), None) if p == "*" => Some(true),
            _ => None,
        }
    };
    let name = Some(res.name.clone());
    let mut unknown = false;
    for e in &list.entries {
        let mut hit = and3(m(&e.kind, &res.kind), m(&e.group, &res.group));
        if named && e.name.as_deref() != Some("") {
            hit = and3(hit, m(&e.name, &name));
        }
        match hit {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown {
        None
    } else {
        Some(false)
    }
}

/// `IsGroupKindNamePermitted`, for a namespaced kind or a cluster-scoped
/// one: `Ok(true)`/`Ok(false)` with the list that decides, `Err` when it
/// is not known. A namespaced whitelist set but empty permits nothing in
/// argo-cd's current code (`len(namespaceWhitelist) != 0 && ...`) and
/// everything in older releases: not known.
fn kind_permitted(p: &Project, res: &Resource, ns: bool) -> Result<Option<String>, String> {
    use crate::model::application::{
        CLUSTER_RESOURCE_BLACKLIST as CB, CLUSTER_RESOURCE_WHITELIST as CW,
        NAMESPACE_RESOURCE_BLACKLIST as NB, NAMESPACE_RESOURCE_WHITELIST as NW,
    };
    let list = |k: &str| p.kind_lists.iter().find(|l| l.key == k);
    let (white, black) = if ns { (NW, NB) } else { (CW, CB) };
    let at = |l: &KindList| format!("`{}` ({}:{})", l.key, p.file, l.line);
    let unknown = |l: &KindList| {
        format!(
            "whether AppProject {}'s {} permits {} is not known (an entry or the resource is templated, or the list is not a list of group/kind entries)",
            p.name,
            at(l),
            res.shown()
        )
    };
    match list(white) {
        None if ns => {}
        None => {
            return Ok(Some(format!(
                "AppProject {} ({}:{}) sets no {CW}, which permits no cluster-scoped kind",
                p.name, p.file, p.line
            )))
        }
        Some(l) if ns && l.entries.is_empty() && !l.unreadable => {
            return Err(format!(
                "AppProject {}'s {} is set but empty: argo-cd's current releases permit no namespaced kind then, older ones every kind, so whether it permits {} is not known",
                p.name,
                at(l),
                res.shown()
            ))
        }
        Some(l) => match in_kind_list(l, res, !ns) {
            Some(true) => {}
            Some(false) => return Ok(Some(format!("{} does not list it", at(l)))),
            None => return Err(unknown(l)),
        },
    }
    if let Some(l) = list(black) {
        match in_kind_list(l, res, !ns) {
            Some(true) => return Ok(Some(format!("{} lists it", at(l)))),
            Some(false) => {}
            None => return Err(unknown(l)),
        }
    }
    Ok(None)
}

/// argo-cd `controller/sync.go` `validateSyncPermissions`, for a resource
/// `applier` syncs (a child Application of a file it reads, each object
/// of a changed file): `applier`'s AppProject must permit its group and
/// kind (`IsGroupKindNamePermitted`: the resource kind lists) and, for a
/// namespaced kind, its namespace (`metadata.namespace`, else the
/// applier's destination namespace) at the applier's destination
/// (`IsDestinationPermitted`): otherwise the sync fails ("resource ... is
/// not permitted in project", "namespace ... is not permitted in
/// project"). A kind the review does not know the scope of is answered
/// only when both scopes agree. The project itself is checked by
/// [`project_permits`]: one not found here is passed over.
pub fn resource_permitted(
    applier: &App,
    res: &Resource,
    projects: &[Project],
    registrations: &[Registered],
) -> Result<(), String> {
    let Some(name) = &applier.project else {
        return Ok(());
    };
    if applier.applied_by.is_some() || applier.rendered.is_some() || name.contains("{{") {
        return Ok(());
    }
    let found: Vec<&Project> = projects.iter().filter(|p| p.name == *name).collect();
    let [p] = found.as_slice() else {
        return Ok(());
    };
    if p.rendered.is_some() {
        return Ok(());
    }
    let id = format!("{} ({})", applier.id(), applier.file);
    let what = if res.line == 0 {
        format!("{} ({})", res.shown(), res.file)
    } else {
        format!("{} ({}:{})", res.shown(), res.file, res.line)
    };
    let at = format!("AppProject {} ({}:{})", p.name, p.file, p.line);
    let scope = match (&res.group, &res.kind) {
        (Some(g), Some(k)) => namespaced(g, k),
        _ => None,
    };
    let scopes: Vec<bool> = match scope {
        Some(one) => vec![one],
        None => vec![true, false],
    };
    let mut answers = Vec::new();
    for ns in &scopes {
        let kind =
            kind_permitted(p, res, *ns).map_err(|why| format!("{id} syncs {what}: {why}"))?;
        let namespace = match (kind, *ns) {
            (Some(denied), _) => Some(denied),
            (None, false) => None,
            (None, true) => {
                let namespace = match res.namespace.as_deref() {
                    Some("") => Some(applier.destination.namespace.as_str()),
                    other => other,
                };
                let mut dest = dest_of(applier, registrations);
                dest.namespace = namespace.filter(|n| !n.contains("{{"));
                dest.shown = format!(
                    "namespace `{}` on {}",
                    namespace.unwrap_or("?"),
                    cluster_shown(applier)
                );
                match destination_permitted(p, &dest) {
                    Permit::Yes => None,
                    Permit::No(why) => Some(format!("its namespace is not permitted: {why}")),
                    Permit::Unknown(why) => return Err(format!("{id} syncs {what}: {why}")),
                }
            }
        };
        answers.push(namespace);
    }
    match answers.as_slice() {
        [None] | [None, None] => Ok(()),
        [Some(why)] | [Some(why), Some(_)] => Err(format!(
            "{id} syncs {what}, which {at} does not permit: {why} (argo-cd `controller/sync.go` `validateSyncPermissions` fails the sync)"
        )),
        _ => Err(format!(
            "{id} syncs {what}, whose kind the review does not know to be namespaced or cluster-scoped, and {at} permits it under one reading only ({}): not known",
            answers.iter().flatten().next().map_or("", String::as_str)
        )),
    }
}

/// The destination of `app` as ArgoCD matches it: the cluster's other
/// field from the local cluster or the one registration of the repository
/// that names it.
fn dest_of<'a>(app: &'a App, registrations: &'a [Registered]) -> Dest<'a> {
    let d = &app.destination;
    let known = |v: &'a Option<String>| v.as_deref().filter(|v| !v.contains("{{"));
    let param = |r: &'a Registered, k: &str| {
        r.params
            .iter()
            .find(|(pk, _)| pk == k)
            .map(|(_, v)| v.as_str())
    };
    let other = |given: &str, by: &str, want: &str, local: (&'static str, &'static str)| {
        if given == local.0 {
            return Some(local.1);
        }
        let mut hits = registrations
            .iter()
            .filter(|r| param(r, by) == Some(given))
            .filter_map(|r| param(r, want));
        match (hits.next(), hits.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    };
    let server = known(&d.server);
    let name = known(&d.name);
    let templated = [&d.server, &d.name]
        .iter()
        .any(|v| v.as_deref().is_some_and(|v| v.contains("{{")));
    let (server, name) = match (server, name) {
        _ if templated => (server, name),
        (Some(s), None) => (
            Some(s),
            other(s, server_key(), "name", (IN_CLUSTER.1, IN_CLUSTER.0)),
        ),
        (None, Some(n)) => (other(n, "name", server_key(), IN_CLUSTER), Some(n)),
        both => both,
    };
    Dest {
        server,
        name,
        namespace: Some(d.namespace.as_str()).filter(|n| !n.contains("{{")),
        shown: shown(app),
    }
}

/// Whether an override key of `argocd-cm` (`group/Kind`, `Kind` for the
/// core group, `*/*` for `all`; globs, argo-cd `util/glob.Match`) names a
/// resource's kind: `true` when the resource's kind is not known, or the
/// key is no glob that compiles (what it was meant to name is not known).
fn override_names(key: &str, res: &Resource) -> bool {
    let (group, kind) = match key.split_once('/') {
        Some((g, k)) => (g, k),
        None => ("", key),
    };
    let m = |p: &str, v: &Option<String>| {
        v.as_deref()
            .is_none_or(|v| p == "*" || glob(p, v, false).unwrap_or(true))
    };
    m(group, &res.group) && m(kind, &res.kind)
}

/// argo-cd `FilteredResource.Match` without the cluster (any cluster may
/// be the destination's: taken as matching): `None` when the entry is
/// not readable as written (a group glob that does not compile included).
fn filter_matches(entry: &Node, res: &Resource) -> Option<bool> {
    use crate::model::application::{FILTER_GROUPS, FILTER_KINDS};
    let list = |k: &str| -> Option<Vec<String>> {
        match entry.at(&[k]).map(|n| &n.value) {
            None => Some(Vec::new()),
            Some(Value::Seq(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect(),
            Some(_) => None,
        }
    };
    let (groups, kinds) = (list(FILTER_GROUPS)?, list(FILTER_KINDS)?);
    let group_matches = |g: &str| -> Option<bool> {
        let mut any = false;
        for p in &groups {
            any |= glob(p, g, false).ok()?;
        }
        Some(any)
    };
    let group = groups.is_empty() || res.group.as_deref().map_or(Some(true), group_matches)?;
    let kind = kinds.is_empty()
        || res
            .kind
            .as_deref()
            .is_none_or(|k| kinds.iter().any(|p| p == "*" || p == k));
    Some(group && kind)
}

/// ArgoCD's system-level diffing settings of the repository's `argocd-cm`
/// (`settings`) against the objects a sync applies: an
/// `ignoreDifferences` override of their kind (split key
/// `resource.customizations.ignoreDifferences.<group_kind>` or `.all`, or
/// the `resource.customizations` block), `resource.compareoptions` that
/// may ignore their fields, or `resource.exclusions`/`inclusions` that
/// leave their kind unmanaged: the change may never be synced, so not
/// proven (argo-cd `util/settings/settings.go` `GetResourceOverrides`,
/// `util/settings/filtered_resource.go`; docs `user-guide/diffing.md`).
pub fn diff_settings_permit(settings: &[DiffSetting], objects: &[Resource]) -> Result<(), String> {
    use crate::model::application::{
        COMPARE_OPTIONS, COMPARE_OPTIONS_STATUS_ONLY, IGNORE_AGGREGATED_ROLES, IGNORE_DIFFERENCES,
        IGNORE_DIFFERENCES_KEY, RESOURCE_CUSTOMIZATIONS, RESOURCE_EXCLUSIONS, RESOURCE_INCLUSIONS,
    };
    let parsed = |d: &DiffSetting| -> Option<Node> {
        yaml::read_yaml_or_json(d.value.as_deref()?)
            .ok()?
            .into_iter()
            .next()
    };
    let unreadable = |d: &DiffSetting| {
        format!(
            "argocd-cm sets `{}` ({}), which the review cannot read as written: whether ArgoCD's diffing ignores the change is not known",
            d.key, d.at
        )
    };
    for d in settings {
        for res in objects {
            let touches = |why: &str| {
                let what = if res.line == 0 {
                    format!("{} ({}: its kinds are not read)", res.shown(), res.file)
                } else {
                    format!("{} ({}:{})", res.shown(), res.file, res.line)
                };
                format!(
                    "argocd-cm sets `{}` ({}), which {why} {what}: ArgoCD may never see, so never sync, the change (docs/user-guide/diffing.md, \"System-Level Configuration\")",
                    d.key,
                    d.at,
                )
            };
            if let Some(gk) = d.key.strip_prefix(IGNORE_DIFFERENCES_KEY) {
                let key = if gk == "all" {
                    "*/*".to_string()
                } else {
                    gk.replacen('_', "/", 1)
                };
                if override_names(&key, res) {
                    return Err(touches("ignores differences of"));
                }
            } else if d.key == RESOURCE_CUSTOMIZATIONS {
                let Some(Value::Map(pairs)) = parsed(d).map(|n| n.value) else {
                    return Err(unreadable(d));
                };
                for (k, v) in &pairs {
                    let ignores = v.at(&[IGNORE_DIFFERENCES]).is_some_and(|n| !n.is_null());
                    if ignores && k.as_str().is_none_or(|k| override_names(k, res)) {
                        return Err(touches("ignores differences (its `ignoreDifferences`) of"));
                    }
                }
            } else if d.key == COMPARE_OPTIONS {
                let node = parsed(d);
                let Some(Value::Map(pairs)) = node.as_ref().map(|n| &n.value) else {
                    return Err(unreadable(d));
                };
                for (k, v) in pairs {
                    let k = k.as_str().unwrap_or("?");
                    if COMPARE_OPTIONS_STATUS_ONLY.contains(&k) {
                        continue;
                    }
                    let cluster_role = override_names("rbac.authorization.k8s.io/ClusterRole", res);
                    if k == IGNORE_AGGREGATED_ROLES {
                        if v.as_str() != Some("false") && cluster_role {
                            return Err(touches(
                                "ignores the rules of an aggregated ClusterRole such as",
                            ));
                        }
                        continue;
                    }
                    return Err(touches(&format!(
                        "(its `{k}`, not modelled) may ignore fields of"
                    )));
                }
            } else if d.key == RESOURCE_EXCLUSIONS || d.key == RESOURCE_INCLUSIONS {
                let node = parsed(d);
                let items = match node.as_ref().map(|n| &n.value) {
                    Some(Value::Seq(items)) => items,
                    None if d.value.as_deref().is_some_and(|v| v.trim().is_empty()) => continue,
                    _ => return Err(unreadable(d)),
                };
                let mut hits = Vec::new();
                for i in items {
                    hits.push(filter_matches(i, res).ok_or_else(|| unreadable(d))?);
                }
                let any = hits.iter().any(|h| *h);
                if d.key == RESOURCE_EXCLUSIONS && any {
                    return Err(touches("excludes (ArgoCD does not manage it)"));
                }
                if d.key == RESOURCE_INCLUSIONS && !items.is_empty() && !any {
                    return Err(touches("does not include (ArgoCD does not manage it)"));
                }
            }
        }
    }
    Ok(())
}

/// The symbolic links below `root` (its `.git` aside) that point outside
/// it, `/`-separated and relative to it, as argo-cd's
/// `CheckOutOfBoundsSymlinks` finds them: an absolute target, or a
/// relative one any step of which (from the link's folder, lexically)
/// leaves the root. Files ignored by git are not in the checkout ArgoCD
/// reads, so they are not looked at.
pub fn out_of_bounds_symlinks(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !(e.depth() == 1 && e.file_name() == ".git"))
        .build();
    for entry in walk.flatten() {
        if !entry.path_is_symlink() {
            continue;
        }
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if leaves_root(rel, &target) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
    out
}

/// Whether a link at `rel` (relative to the root) to `target` steps out of
/// the root: absolute, or a `..` that climbs above it at any step.
fn leaves_root(rel: &Path, target: &Path) -> bool {
    if target.is_absolute() || target.has_root() {
        return true;
    }
    let mut depth: usize = rel.parent().map_or(0, |p| p.components().count());
    for c in target.components() {
        match c {
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            },
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::application::ProjectDestination;

    fn project(repos: &[&str], dests: &[(&str, &str, &str)]) -> Project {
        Project {
            file: "p.yaml".into(),
            line: 1,
            name: "p".into(),
            source_repos: repos.iter().map(|s| s.to_string()).collect(),
            destinations: dests
                .iter()
                .map(|(s, n, ns)| ProjectDestination {
                    server: s.to_string(),
                    name: n.to_string(),
                    namespace: ns.to_string(),
                    line: 2,
                })
                .collect(),
            ..Project::default()
        }
    }

    fn dest<'a>(server: Option<&'a str>, name: Option<&'a str>, ns: &'a str) -> Dest<'a> {
        Dest {
            server,
            name,
            namespace: Some(ns),
            shown: String::new(),
        }
    }

    /// argo-cd `app_project_types.go` `IsSourcePermitted` and its tests
    /// (`TestAppProject_IsSourcePermitted`, `..._IsNegatedSourcePermitted`):
    /// normalized URLs, `*` in one segment, `!` denies.
    #[test]
    fn sources_are_permitted_as_argocd_permits_them() {
        let yes =
            |repos: &[&str], url: &str| source_permitted(&project(repos, &[]), url) == Permit::Yes;
        assert!(yes(&["*"], "https://github.com/a/b.git"));
        assert!(yes(
            &["https://github.com/a/b"],
            "https://GitHub.com/a/b.git"
        ));
        assert!(yes(&["https://github.com/a/*"], "https://github.com/a/b"));
        assert!(!yes(
            &["https://github.com/a/*"],
            "https://github.com/a/b/c"
        ));
        assert!(yes(&["git@github.com:a/*"], "git@github.com:a/b.git"));
        assert!(!yes(&["https://github.com/x/*"], "https://github.com/a/b"));
        assert!(!yes(
            &["*", "!https://github.com/a/b"],
            "https://github.com/a/b"
        ));
        assert!(yes(
            &["*", "!https://github.com/a/b"],
            "https://github.com/a/c"
        ));
        assert!(!yes(&[], "https://github.com/a/b"));
        assert!(matches!(
            source_permitted(&project(&["https://github.com/a/b"], &[]), "{{repo}}"),
            Permit::Unknown(_)
        ));
    }

    /// The patterns are gobwas/glob's (argo-cd `util/glob/glob.go`), with
    /// `/` a separator for `sourceRepos` and none for destinations, where
    /// the globset reading differed: `**` inside a segment crosses `/`, a
    /// class matches `/`, `[^x]` is the class of `^` and `x`, `[a-z0-9]`
    /// and an unclosed class do not compile (match nothing), `*` crosses
    /// `/` in a destination. A `!` entry that does not compile is not
    /// known (ArgoCD would let everything through it).
    #[test]
    fn project_globs_are_read_as_gobwas_reads_them() {
        let src = |repos: &[&str], url: &str| source_permitted(&project(repos, &[]), url);
        let yes = |repos: &[&str], url: &str| src(repos, url) == Permit::Yes;
        // `**` not a whole segment: globset kept it in one segment.
        assert!(yes(
            &["https://github.com/org**"],
            "https://github.com/org/a/b"
        ));
        assert!(!yes(
            &["https://github.com/org*"],
            "https://github.com/org/a"
        ));
        // `?` and `*` stop at `/`; a class does not.
        assert!(!yes(&["https://github.com/a?b"], "https://github.com/a/b"));
        assert!(yes(
            &["https://github.com/a[!x]b"],
            "https://github.com/a/b"
        ));
        // Alternatives.
        assert!(yes(
            &["https://github.com/{a,b}/*"],
            "https://github.com/b/repo"
        ));
        assert!(!yes(
            &["https://github.com/{a,b}/*"],
            "https://github.com/c/repo"
        ));
        // `^` negates nothing: `[^x]` is `^` or `x`.
        assert!(!yes(
            &["https://github.com/[^x]/r"],
            "https://github.com/a/r"
        ));
        assert!(yes(
            &["https://github.com/[^x]/r"],
            "https://github.com/x/r"
        ));
        // Not compiled by gobwas: matches nothing (globset matched).
        assert!(!yes(
            &["https://github.com/[a-z0-9]/r"],
            "https://github.com/a/r"
        ));
        // A `!` entry that does not compile: not known, never permitted.
        assert!(matches!(
            src(
                &["*", "!https://github.com/[a-z0-9]/r"],
                "https://github.com/a/r"
            ),
            Permit::Unknown(_)
        ));
        // Destinations: no separator, `*` crosses `/`.
        let dyes = |dests: &[(&str, &str, &str)], d: Dest| {
            destination_permitted(&project(&[], dests), &d) == Permit::Yes
        };
        let s = Some("https://a.example/k8s/clusters/c1");
        assert!(dyes(
            &[("https://a.example/*", "", "*")],
            dest(s, None, "x")
        ));
        assert!(dyes(&[("*", "", "team-{a,b}")], dest(s, None, "team-b")));
        assert!(!dyes(&[("*", "", "team-[!a]")], dest(s, None, "team-a")));
        assert!(!dyes(
            &[("*", "", "team-[a-z0-9]")],
            dest(s, None, "team-a")
        ));
        assert!(matches!(
            destination_permitted(
                &project(&[], &[("*", "", "*"), ("!https://[a-z0-9]", "", "*")]),
                &dest(s, None, "x")
            ),
            Permit::Unknown(_)
        ));
    }

    /// `isDestinationMatched` and its tests (`TestAppProject_IsDestinationPermitted`,
    /// `TestAppProject_IsNegatedDestinationPermitted`).
    #[test]
    fn destinations_are_permitted_as_argocd_permits_them() {
        let yes = |dests: &[(&str, &str, &str)], d: Dest| {
            destination_permitted(&project(&[], dests), &d) == Permit::Yes
        };
        let s = Some("https://a.example");
        assert!(yes(&[("*", "", "*")], dest(s, None, "x")));
        assert!(yes(
            &[("https://a.example", "", "kube-*")],
            dest(s, None, "kube-system")
        ));
        assert!(!yes(
            &[("https://a.example", "", "kube-*")],
            dest(s, None, "default")
        ));
        assert!(!yes(&[("https://b.example", "", "*")], dest(s, None, "x")));
        assert!(!yes(
            &[("*", "", "*"), ("!https://a.example", "", "*")],
            dest(s, None, "x")
        ));
        assert!(yes(
            &[("*", "", "*"), ("!https://b.example", "", "*")],
            dest(s, None, "x")
        ));
        assert!(!yes(
            &[("*", "", "*"), ("*", "", "!kube-system")],
            dest(s, None, "kube-system")
        ));
        assert!(yes(&[("", "prod", "*")], dest(None, Some("prod"), "x")));
        // By name, with its server not known: an entry by server is not
        // decided.
        assert!(matches!(
            destination_permitted(
                &project(&[], &[("https://a.example", "", "*")]),
                &dest(None, Some("prod"), "x")
            ),
            Permit::Unknown(_)
        ));
        assert!(!yes(&[], dest(s, None, "x")));
    }

    /// `CheckOutOfBoundsSymlinks`: absolute targets, and any step above the
    /// root.
    /// argo-cd `IsGroupKindNamePermitted`: `filepath.Match` on group and
    /// kind; a namespaced kind is permitted when no whitelist is set; a
    /// cluster-scoped kind only through `clusterResourceWhitelist`; a
    /// blacklist entry denies; an empty namespaced whitelist is not known.
    #[test]
    fn kinds_are_permitted_as_argocd_permits_them() {
        use crate::model::application::{KindEntry, KindList};
        let entry = |g: &str, k: &str| KindEntry {
            group: Some(g.into()),
            kind: Some(k.into()),
            name: Some(String::new()),
        };
        let list = |key: &'static str, entries: Vec<KindEntry>| KindList {
            key,
            entries,
            line: 9,
            unreadable: false,
        };
        let res = |g: &str, k: &str| Resource {
            group: Some(g.into()),
            kind: Some(k.into()),
            name: "x".into(),
            ..Resource::default()
        };
        let mut p = project(&["*"], &[("*", "", "*")]);
        assert_eq!(kind_permitted(&p, &res("", "ConfigMap"), true), Ok(None));
        assert!(kind_permitted(&p, &res("", "Namespace"), false)
            .unwrap()
            .is_some());
        p.kind_lists = vec![
            list(
                "namespaceResourceWhitelist",
                vec![entry("apps", "*"), entry("", "Config?ap")],
            ),
            list(
                "namespaceResourceBlacklist",
                vec![entry("apps", "DaemonSet")],
            ),
            list(
                "clusterResourceWhitelist",
                vec![entry("rbac.*", "Cluster[R]ole")],
            ),
        ];
        assert_eq!(kind_permitted(&p, &res("", "ConfigMap"), true), Ok(None));
        assert_eq!(
            kind_permitted(&p, &res("apps", "Deployment"), true),
            Ok(None)
        );
        assert!(kind_permitted(&p, &res("apps", "DaemonSet"), true)
            .unwrap()
            .is_some());
        assert!(kind_permitted(&p, &res("", "Secret"), true)
            .unwrap()
            .is_some());
        assert_eq!(
            kind_permitted(&p, &res("rbac.authorization.k8s.io", "ClusterRole"), false),
            Ok(None)
        );
        assert!(kind_permitted(&p, &res("", "Namespace"), false)
            .unwrap()
            .is_some());
        // A malformed pattern matches nothing.
        p.kind_lists = vec![list("namespaceResourceWhitelist", vec![entry("[", "*")])];
        assert!(kind_permitted(&p, &res("", "ConfigMap"), true)
            .unwrap()
            .is_some());
        p.kind_lists = vec![list("namespaceResourceWhitelist", Vec::new())];
        assert!(kind_permitted(&p, &res("", "ConfigMap"), true).is_err());
    }

    #[test]
    fn symlinks_leave_the_root_as_argocd_checks_them() {
        let leaves = |rel: &str, t: &str| leaves_root(Path::new(rel), Path::new(t));
        assert!(leaves("a/link", "/etc/passwd"));
        assert!(leaves("link", "../x"));
        assert!(leaves("a/link", "../../x"));
        assert!(leaves("a/link", "../../repo/a/x"));
        assert!(!leaves("a/link", "../b/x"));
        assert!(!leaves("a/b/link", "../../c"));
        assert!(!leaves("a/link", "./b/../c"));
    }

    #[test]
    fn git_urls_normalize_as_argocd_normalizes_them() {
        assert_eq!(
            normalize_git_url("https://GitHub.com/a/B.git"),
            "https://github.com/a/b"
        );
        assert_eq!(
            normalize_git_url("git@github.com:a/b.git"),
            "git@github.com/a/b"
        );
        assert_eq!(
            normalize_git_url("ssh://git@github.com/a/b"),
            "git@github.com/a/b"
        );
    }
}
