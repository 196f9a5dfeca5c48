//! What stops ArgoCD from syncing an Application whatever its revision,
//! on repositories built here: its AppProject's permissions (argo-cd
//! `pkg/apis/application/v1alpha1/app_project_types.go`:
//! `IsSourcePermitted`, `IsDestinationPermitted`, `isDestinationMatched`,
//! `IsAppNamespacePermitted`; docs/user-guide/projects.md), a symbolic
//! link pointing outside the repository (`util/app/path/path.go`
//! `CheckOutOfBoundsSymlinks`, run by `reposerver/repository/repository.go`
//! over the whole checkout: "repository contains out-of-bounds
//! symlinks"), and a field the review does not model on any Application
//! above the parent. Each verdict is the one a person who knows ArgoCD
//! would give; `--require-deploys` refuses exactly the rows not proven,
//! and the text says what the JSON says.

use crate::common::*;
use crate::feeders::{child, feeders, repo, row, write, REPO_HTTPS};
use serde_json::Value;
use std::path::Path;

const AUTO: &str = "  syncPolicy:\n    automated: {}\n";

/// An Application `name` in namespace `ns` of project `project` reading
/// `path` of this repository, automated, sending to the hub itself.
fn root_in(name: &str, ns: &str, project: &str, path: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  project: {project}\n  source:\n    repoURL: {REPO_HTTPS}\n    path: {path}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n{AUTO}"
    )
}

/// An AppProject `name` in `argocd` whose spec is `spec` (indented for
/// `spec:`).
fn project(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n{spec}"
    )
}

const OPEN: &str = "  sourceRepos: ['*']\n  destinations:\n    - {server: '*', namespace: '*'}\n";

/// `root` (project `platform`) reads `apps`, which holds the child the
/// rebind rewrites; `projects` are the repository's AppProjects.
fn fx_project(projects: &[(&str, String)]) -> tempfile::TempDir {
    let mut files = vec![
        ("root.yaml", root_in("root", "argocd", "platform", "apps")),
        ("apps/a.yaml", child("a", 0, true)),
    ];
    files.extend(projects.iter().map(|(f, t)| (*f, t.clone())));
    repo(REPO_HTTPS, &files)
}

/// The row of `apps/a.yaml` in `feeders --format json`, the text output's
/// line for it, and the notes.
pub(crate) fn judged(dir: &Path, file: &str) -> (Value, String, Value) {
    let (rows, v) = feeders(dir, &[]);
    let r = row(&rows, file).clone();
    let o = rebind(dir, &["feeders"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(file))
        .unwrap_or_else(|| panic!("no line for {file}: {text}"))
        .to_string();
    (r, line, v["notes"].clone())
}

/// The row is not proven, its reason holds each of `words`, and the text
/// says the same.
pub(crate) fn not_proven(dir: &Path, file: &str, words: &[&str]) {
    let (r, line, _) = judged(dir, file);
    assert_eq!(r["verdict"], "not_proven", "{r}");
    assert_eq!(r["proven"], false, "{r}");
    let reason = r["reason"].as_str().unwrap();
    for w in words {
        assert!(reason.contains(w), "{w:?} not in {reason}");
    }
    assert!(line.contains(reason), "text {line:?} != JSON {reason:?}");
    assert!(r.get("assumptions").is_none(), "{r}");
}

/// `diff --require-deploys` and `apply --require-deploys` refuse (exit 2,
/// nothing written), naming the file and `word`.
pub(crate) fn refused(dir: &Path, file: &str, word: &str) {
    for cmd in [
        vec!["diff", "--require-deploys", "--from", OLD, "--to", NEW],
        vec![
            "apply",
            "--require-deploys",
            "--yes",
            "--no-commit",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    ] {
        let before = std::fs::read(dir.join(file)).unwrap();
        let o = rebind(dir, &cmd);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains(file) && err.contains(word), "{err}");
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            before,
            "{cmd:?} wrote"
        );
    }
}

/// `apply --require-deploys` runs (exit 0) and rewrites `file`.
pub(crate) fn applied(dir: &Path, file: &str) {
    let o = rebind(
        dir,
        &[
            "apply",
            "--require-deploys",
            "--yes",
            "--no-commit",
            "--from",
            OLD,
            "--to",
            NEW,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read_to_string(dir.join(file)).unwrap();
    assert!(after.contains(NEW) && !after.contains(OLD), "{after}");
}

/// A project of the repository that permits the parent's source and
/// destination: deploys, with no assumption. One that does not
/// (`sourceRepos` without this repository, a `!` source, no destination
/// entry for the hub, a `!` destination, a namespace glob that misses):
/// ArgoCD refuses to sync the parent ("application repo ... is not
/// permitted in project", "application destination ... is not permitted
/// in project": docs/user-guide/projects.md), so not proven, naming the
/// project's file:line and the rule.
#[test]
fn the_parents_project_permits_or_denies_its_source_and_destination() {
    // Empty lists hold nothing back.
    let d = fx_project(&[(
        "projects/platform.yaml",
        project(
            "platform",
            &format!("{OPEN}  syncWindows: []\n  signatureKeys: []\n"),
        ),
    )]);
    let (r, line, notes) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    assert!(line.contains("deploys on merge"), "{line}");
    // The child names no project: ArgoCD's `default`
    // (`ApplicationSpec.GetProject()`), which the repository does not
    // hold: the built-in one is assumed, and said.
    let assumed = r["assumptions"].as_array().expect("assumptions").clone();
    assert!(
        assumed[0]
            .as_str()
            .unwrap()
            .contains("AppProject default is not in the repository"),
        "{r}"
    );
    assert!(notes.as_array().unwrap().contains(&assumed[0]), "{notes}");
    applied(d.path(), "apps/a.yaml");

    let other = "https://git.example.com/platform/other.git";
    for (spec, words) in [
        (
            format!("  sourceRepos: ['{other}']\n  destinations:\n    - {{server: '*', namespace: '*'}}\n"),
            vec!["AppProject platform (projects/platform.yaml:1)", "does not permit its source", "no sourceRepos entry", "projects/platform.yaml:7"],
        ),
        (
            "  sourceRepos: ['*', '!https://git.example.com/platform/*']\n  destinations:\n    - {server: '*', namespace: '*'}\n".to_string(),
            vec!["does not permit its source", "`!https://git.example.com/platform/*`"],
        ),
        (
            format!("  sourceRepos: ['*']\n  destinations:\n    - {{server: '{OLD}', namespace: '*'}}\n"),
            vec!["does not permit its destination", "no destinations entry", "server https://kubernetes.default.svc, namespace `argocd`"],
        ),
        (
            "  sourceRepos: ['*']\n  destinations:\n    - {server: '*', namespace: '*'}\n    - {server: '!https://kubernetes.default.svc', namespace: '*'}\n".to_string(),
            vec!["does not permit its destination", "`!https://kubernetes.default.svc`", "projects/platform.yaml:10"],
        ),
        (
            "  sourceRepos: ['*']\n  destinations:\n    - {server: '*', namespace: 'team-*'}\n".to_string(),
            vec!["does not permit its destination", "no destinations entry"],
        ),
        (
            "  sourceRepos: ['*']\n  destinations:\n    - {server: '*', namespace: '*'}\n    - {server: '*', namespace: '!argocd'}\n".to_string(),
            vec!["does not permit its destination", "`!argocd`"],
        ),
        // Fields that may hold a permitted sync back, which the review
        // does not model: signed commits only
        // (docs/user-guide/gpg-verification.md), sync windows
        // (docs/user-guide/sync_windows.md).
        (
            format!("{OPEN}  signatureKeys:\n    - keyID: 4AEE18F83AFDEB23\n"),
            vec!["sets `signatureKeys` (projects/platform.yaml:10)", "only commits signed"],
        ),
        (
            format!("{OPEN}  syncWindows:\n    - {{kind: deny, schedule: '0 22 * * *', duration: 1h, applications: ['*']}}\n"),
            vec!["sets `syncWindows` (projects/platform.yaml:10)", "sync window"],
        ),
    ] {
        let d = fx_project(&[("projects/platform.yaml", project("platform", &spec))]);
        not_proven(d.path(), "apps/a.yaml", &words);
        refused(d.path(), "apps/a.yaml", "AppProject platform");
    }
}

/// The project is looked up by name: one not in the repository is not
/// known (other than `default`, which ArgoCD creates itself:
/// `DefaultAppProjectName`, docs/user-guide/projects.md "The Default
/// Project"); two of the same name leave which one the hub holds
/// unknown.
#[test]
fn a_project_not_in_the_repository_or_held_twice_is_not_known() {
    let d = fx_project(&[]);
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "AppProject platform, which is not in the repository",
            "whether it permits server https://kubernetes.default.svc",
        ],
    );
    refused(d.path(), "apps/a.yaml", "not in the repository");
    let d = fx_project(&[
        ("projects/a.yaml", project("platform", OPEN)),
        ("projects/b.yaml", project("platform", OPEN)),
    ]);
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "2 AppProjects of that name",
            "projects/a.yaml:1",
            "projects/b.yaml:1",
        ],
    );
    // `default` held in the repository is read, not assumed: one that
    // denies the hub denies.
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_in("root", "argocd", "default", "apps")),
            ("apps/a.yaml", child("a", 0, true)),
            (
                "projects/default.yaml",
                project("default", &format!("  sourceRepos: ['*']\n  destinations:\n    - {{server: '{STAGE}', namespace: '*'}}\n")),
            ),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "AppProject default (projects/default.yaml:1)",
            "does not permit its destination",
        ],
    );
}

/// The changed child's own project judges its destination as the rebind
/// leaves it: a project whose destination glob matches only the old
/// cluster denies the rewritten child; a project entry naming the old
/// server is rewritten in the same change, so it permits the new one
/// (read after the rewrite, as ArgoCD reads it after the merge). Without
/// a rebind (`feeders`), the same repository is judged as it is.
#[test]
fn the_changed_childs_project_is_read_after_the_rewrite() {
    let child_in = |project: &str| {
        child("a", 0, true).replace("spec:\n", &format!("spec:\n  project: {project}\n"))
    };
    let old_prefix = &OLD[..12];
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_in("root", "argocd", "default", "apps")),
            ("apps/a.yaml", child_in("team")),
            (
                "apps/team-project.yaml",
                project("team", &format!("  sourceRepos: ['*']\n  destinations:\n    - {{server: '{old_prefix}*', namespace: '*'}}\n")),
            ),
        ],
    );
    // As it is: the child sends to the old cluster, which the glob permits.
    let (r, _, _) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    // After the rewrite it sends to the new one, which it does not.
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = row(v["feeders"].as_array().unwrap(), "apps/a.yaml");
    assert_eq!(r["verdict"], "not_proven", "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("Application/a (apps/a.yaml): AppProject team (apps/team-project.yaml:1) does not permit its destination"), "{reason}");
    assert!(reason.contains(&format!("server {NEW}")), "{reason}");
    refused(d.path(), "apps/a.yaml", "AppProject team");

    // The project names the old server: the rebind rewrites it too.
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_in("root", "argocd", "default", "apps")),
            ("apps/a.yaml", child_in("team")),
            (
                "apps/team-project.yaml",
                project("team", &format!("  sourceRepos: ['*']\n  destinations:\n    - server: {OLD}\n      namespace: '*'\n")),
            ),
        ],
    );
    let o = rebind(
        d.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "json"],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["feeders"].as_array().unwrap();
    assert_eq!(
        row(rows, "apps/a.yaml")["verdict"],
        "deploys_on_merge",
        "{rows:#?}"
    );
    applied(d.path(), "apps/a.yaml");
    let project = std::fs::read_to_string(d.path().join("apps/team-project.yaml")).unwrap();
    assert!(project.contains(NEW), "{project}");
}

/// Applications in any namespace (docs/operator-manual/app-any-namespace.md,
/// `IsAppNamespacePermitted`): an Application outside the control-plane
/// namespace (the AppProjects' own) syncs only when the controller watches
/// that namespace (`application.namespaces` of `argocd-cmd-params-cm`,
/// comma-separated globs; not set: only its own) and its project's
/// `sourceNamespaces` list it; the built-in `default` lists none.
#[test]
fn an_application_outside_the_control_plane_needs_its_projects_source_namespaces() {
    let params = |namespaces: Option<&str>| {
        let data = namespaces.map_or(String::new(), |n| {
            format!("data:\n  application.namespaces: \"{n}\"\n")
        });
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\n{data}")
    };
    let fx_with = |root_project: &str, spec: &str, watched: Option<Option<&str>>| {
        let mut files = vec![
            ("root.yaml", root_in("root", "team-a", root_project, "apps")),
            ("apps/a.yaml", child("a", 0, true)),
            ("projects/platform.yaml", project("platform", spec)),
        ];
        if let Some(w) = watched {
            files.push(("argocd/cmd-params.yaml", params(w)));
        }
        repo(REPO_HTTPS, &files)
    };
    let fx = |root_project: &str, spec: &str| fx_with(root_project, spec, Some(Some("team-*")));
    // The controller's namespaces: not in the repository, not set, not
    // listing team-a, a regular expression (not evaluated), listing it.
    let listed = format!("{OPEN}  sourceNamespaces: [team-*]\n");
    let d = fx_with("platform", &listed, None);
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "in namespace team-a",
            "no argocd-cmd-params-cm of the repository sets application.namespaces",
        ],
    );
    refused(d.path(), "apps/a.yaml", "application.namespaces");
    let d = fx_with("platform", &listed, Some(None));
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["application.namespaces (``) does not list team-a"],
    );
    let d = fx_with("platform", &listed, Some(Some("team-b, ops")));
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["application.namespaces (`team-b, ops`) does not list team-a"],
    );
    let d = fx_with("platform", &listed, Some(Some("/team-.*/")));
    not_proven(d.path(), "apps/a.yaml", &["holds a regular expression"]);
    let d = fx_with("platform", &listed, Some(Some("ops, team-a")));
    let (r, _, _) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    let d = fx("platform", OPEN);
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "in namespace team-a, not the control-plane namespace argocd",
            "sourceNamespaces (projects/platform.yaml:1) do not list it",
        ],
    );
    refused(d.path(), "apps/a.yaml", "sourceNamespaces");
    let d = fx("platform", &format!("{OPEN}  sourceNamespaces: [team-*]\n"));
    let (r, _, _) = judged(d.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    let d = fx("default", OPEN);
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "in namespace team-a",
            "the built-in AppProject default lists no sourceNamespaces",
        ],
    );
}

/// The repo server checks the whole checkout (its `.git` aside) before it
/// renders any Application of the repository, and refuses on a symbolic
/// link that is absolute or climbs out of it (`CheckOutOfBoundsSymlinks`;
/// docs/operator-manual/upgrading/2.4-2.5.md): every row fed from this
/// repository is not proven, naming the link, wherever it is. A link that
/// stays inside does not matter.
#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_repository_stops_every_application_of_it() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.yaml"), "a: 1\n").unwrap();
    let fx = |link: &dyn Fn(&Path)| {
        let d = fx_project(&[("projects/platform.yaml", project("platform", OPEN))]);
        link(d.path());
        git(d.path(), &["add", "-A"]);
        git(d.path(), &["commit", "-qm", "link"]);
        d
    };
    let inside = fx(&|p: &Path| {
        write(p, "docs/readme.md", "x\n");
        std::os::unix::fs::symlink("../docs/readme.md", p.join("apps/readme.md")).unwrap();
    });
    let (r, _, _) = judged(inside.path(), "apps/a.yaml");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    let target = outside.path().join("x.yaml");
    let absolute = fx(&|p: &Path| {
        write(p, "vendor/keep", "x\n");
        std::os::unix::fs::symlink(&target, p.join("vendor/x.yaml")).unwrap();
    });
    not_proven(
        absolute.path(),
        "apps/a.yaml",
        &[
            "symbolic link pointing outside it (vendor/x.yaml)",
            "repository contains out-of-bounds symlinks",
            "Application/root deploys nothing",
        ],
    );
    refused(absolute.path(), "apps/a.yaml", "vendor/x.yaml");
    let climbing = fx(&|p: &Path| {
        std::os::unix::fs::symlink("../../elsewhere/x.yaml", p.join("apps/up.yaml")).unwrap();
    });
    not_proven(climbing.path(), "apps/a.yaml", &["(apps/up.yaml)"]);
}

/// Every Application of the app-of-apps chain counts, not only the parent:
/// a root above the parent that sets a field the review does not model
/// (`spec.ignoreDifferences`: docs/user-guide/diffing.md) or whose project
/// denies it leaves what the parent applies not proven, naming the root's
/// field and file:line.
#[test]
fn every_application_above_the_parent_is_judged() {
    let fx = |root_extra: &str, projects: &[(&str, String)]| {
        let root = root_in("root", "argocd", "platform", "apps")
            .replace("  destination:", &format!("{root_extra}  destination:"));
        let mut files = vec![
            ("root.yaml", root),
            ("apps/mid.yaml", root_in("mid", "argocd", "default", "team")),
            ("team/a.yaml", child("a", 0, true)),
        ];
        files.extend(projects.iter().map(|(f, t)| (*f, t.clone())));
        repo(REPO_HTTPS, &files)
    };
    let open = [("projects/platform.yaml", project("platform", OPEN))];
    let d = fx("", &open);
    let (r, _, _) = judged(d.path(), "team/a.yaml");
    assert_eq!(r["feeder"], "Application/mid", "{r}");
    assert_eq!(r["verdict"], "deploys_on_merge", "{r}");
    let d = fx(
        "  ignoreDifferences:\n    - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n",
        &open,
    );
    not_proven(
        d.path(),
        "team/a.yaml",
        &[
            "Application/root sets `spec.ignoreDifferences` (root.yaml:11)",
            "above Application/mid",
        ],
    );
    refused(d.path(), "team/a.yaml", "spec.ignoreDifferences");
    // The root's project is not in the repository.
    let d = fx("", &[]);
    not_proven(
        d.path(),
        "team/a.yaml",
        &["Application/root (root.yaml) is in AppProject platform, which is not in the repository"],
    );
}
