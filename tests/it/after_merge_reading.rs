//! How ArgoCD reads, matches and identifies what the after-merge review
//! models, on repositories built here: the glob dialects of a directory
//! source and of git generators, the folders a git directories generator
//! lists, YAML as the API server decodes an Application, one definition
//! per Application, and where a parent puts the Applications it applies.
//! Each family has a case that deploys and one that does not; the text
//! says what the JSON says, and `--require-deploys` refuses the second.

use crate::after_merge_fences::{applied, judged, not_proven, refused};
use crate::common::*;
use crate::feeders::{child, repo, root_app, REPO_HTTPS};
use std::path::Path;

const AUTO: &str = "  syncPolicy:\n    automated: {}\n";

/// `root` reads `apps` of this repository with `directory` (indented for
/// `spec.source`), automated, onto the hub in `argocd`.
fn fx_dir(directory: &str, files: &[(&str, String)]) -> tempfile::TempDir {
    let mut all = vec![(
        "root.yaml",
        root_app("root", REPO_HTTPS, "apps", &format!("{directory}{AUTO}")),
    )];
    all.extend(files.iter().cloned());
    repo(REPO_HTTPS, &all)
}

fn verdict(dir: &Path, file: &str) -> String {
    let (r, line, _) = judged(dir, file);
    let v = r["verdict"].as_str().unwrap().to_string();
    let reason = r["reason"].as_str().unwrap_or("");
    assert!(line.contains(reason), "text {line:?} != JSON {reason:?}");
    v
}

/// A directory source's `include`/`exclude` go through argo-cd
/// `util/glob.Match` (`reposerver/repository/repository.go`,
/// `findManifests`), which compiles gobwas/glob with no separators: only
/// `!` negates a class (`^` is a literal character), `**` is any
/// characters (so `**/*.yaml` needs a `/`), and a pattern that does not
/// compile (`[]a]`) matches nothing.
#[test]
fn directory_globs_match_as_gobwas_reads_them() {
    let a = || vec![("apps/a.yaml", child("a", 0, true))];
    for (directory, expected) in [
        // `^` is literal: `[^a]` is the class {^, a}, so a.yaml is excluded.
        ("    directory: {exclude: '[^a]*.yaml'}\n", "not_included"),
        (
            "    directory: {exclude: '[^b]*.yaml'}\n",
            "deploys_on_merge",
        ),
        ("    directory: {include: '[^b]*.yaml'}\n", "not_included"),
        (
            "    directory: {include: '[!b]*.yaml'}\n",
            "deploys_on_merge",
        ),
        (
            "    directory: {exclude: '[!a]*.yaml'}\n",
            "deploys_on_merge",
        ),
        // A class that does not compile matches nothing.
        ("    directory: {include: '[]a]*.yaml'}\n", "not_included"),
        (
            "    directory: {exclude: '[]a]*.yaml'}\n",
            "deploys_on_merge",
        ),
        // `**/` needs a `/`: a file at the top of the path is left out.
        (
            "    directory: {recurse: true, include: '**/*.yaml'}\n",
            "not_included",
        ),
        (
            "    directory: {recurse: true, include: '*.yaml'}\n",
            "deploys_on_merge",
        ),
    ] {
        let d = fx_dir(directory, &a());
        assert_eq!(verdict(d.path(), "apps/a.yaml"), expected, "{directory}");
        if expected == "not_included" {
            let (r, _, _) = judged(d.path(), "apps/a.yaml");
            let reason = r["reason"].as_str().unwrap();
            assert!(reason.contains("leaves it out"), "{reason}");
            let o = rebind(
                d.path(),
                &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
            );
            assert_eq!(o.status.code(), Some(2), "{directory}: {}", stderr(&o));
        }
    }
    // `**/*.yaml` reaches a file one folder down.
    let d = fx_dir(
        "    directory: {recurse: true, include: '**/*.yaml'}\n",
        &[("apps/sub/a.yaml", child("a", 0, true))],
    );
    assert_eq!(verdict(d.path(), "apps/sub/a.yaml"), "deploys_on_merge");
}

/// An ApplicationSet with a git directories generator whose template's
/// path is `{{.path.path}}`, automated, onto the hub.
fn dirs_appset(entries: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: roots, namespace: argocd}}\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        repoURL: {REPO_HTTPS}\n        revision: main\n        directories:\n{entries}  template:\n    metadata: {{name: '{{{{.path.basenameNormalized}}}}'}}\n    spec:\n      project: default\n      source:\n        repoURL: {REPO_HTTPS}\n        targetRevision: main\n        path: '{{{{.path.path}}}}'\n      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n      syncPolicy: {{automated: {{}}}}\n"
    )
}

/// A git directories generator matches each folder with Go's
/// `path.Match` (argo-cd `applicationset/generators/git.go`,
/// `filterApps`): `**` is `*` and does not cross `/`. It lists folders
/// with `filepath.WalkDir`, skipping every folder whose name starts with
/// `.` (`reposerver/repository/repository.go`, `GetGitDirectories`,
/// unless the repo server sets `reposerver.include.hidden.directories`).
#[test]
fn git_directories_generators_match_as_go_path_match_and_skip_hidden_folders() {
    let d = repo(
        REPO_HTTPS,
        &[
            (
                "appset.yaml",
                dirs_appset("          - path: 'apps/**/prod'\n"),
            ),
            ("apps/team1/prod/a.yaml", child("a", 0, true)),
            ("apps/team1/x/prod/b.yaml", child("b", 0, true)),
        ],
    );
    assert_eq!(
        verdict(d.path(), "apps/team1/prod/a.yaml"),
        "deploys_on_merge"
    );
    // `apps/**/prod` is `apps/*/prod`: no Application for apps/team1/x/prod.
    assert_ne!(
        verdict(d.path(), "apps/team1/x/prod/b.yaml"),
        "deploys_on_merge"
    );
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("apps/team1/x/prod/b.yaml"),
        "{}",
        stderr(&o)
    );

    let d = repo(
        REPO_HTTPS,
        &[
            ("appset.yaml", dirs_appset("          - path: 'apps/*'\n")),
            ("apps/team1/a.yaml", child("a", 0, true)),
            ("apps/.hidden/b.yaml", child("b", 0, true)),
        ],
    );
    assert_eq!(verdict(d.path(), "apps/team1/a.yaml"), "deploys_on_merge");
    assert_ne!(verdict(d.path(), "apps/.hidden/b.yaml"), "deploys_on_merge");
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("apps/.hidden/b.yaml"), "{}", stderr(&o));
}

/// A mid-level parent `mid` in `apps/` (read by the automated root),
/// reading `apps2` of this repository with `source` lines (indented for
/// `spec.source`, after `repoURL`/`path`).
fn fx_mid(mid_source: &str, meta: &str) -> tempfile::TempDir {
    let mid = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: mid\n  namespace: argocd\n{meta}spec:\n  project: default\n  source:\n    repoURL: {REPO_HTTPS}\n    path: apps2\n{mid_source}  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n{AUTO}"
    );
    repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            ("apps/mid.yaml", mid),
            ("apps2/a.yaml", child("a", 0, true)),
        ],
    )
}

/// The API server reads an Application's YAML with sigs.k8s.io/yaml, over
/// go-yaml v2 (YAML 1.1; ArgoCD's `kube.SplitYAML` reads a parent's
/// manifests the same way): an alias is the value its anchor names, of a
/// duplicate key the last value wins, and `True`, `yes`, `on`, `False`,
/// `no`, `off` (plain) are booleans.
#[test]
fn the_application_table_reads_yaml_as_the_api_server_does() {
    // An alias: `targetRevision: *rev` is the tag v1.4.0.
    let d = fx_mid(
        "    targetRevision: *rev\n",
        "  annotations: {rev: &rev v1.4.0}\n",
    );
    assert_eq!(verdict(d.path(), "apps2/a.yaml"), "pinned");
    let d = fx_mid(
        "    targetRevision: *rev\n",
        "  annotations: {rev: &rev main}\n",
    );
    assert_eq!(verdict(d.path(), "apps2/a.yaml"), "deploys_on_merge");
    // A duplicate key: the last value wins.
    let d = fx_mid("    targetRevision: main\n    targetRevision: v1.4.0\n", "");
    assert_eq!(verdict(d.path(), "apps2/a.yaml"), "pinned");
    refused(d.path(), "apps2/a.yaml", "v1.4.0");
    let d = fx_mid("    targetRevision: v1.4.0\n    targetRevision: main\n", "");
    assert_eq!(verdict(d.path(), "apps2/a.yaml"), "deploys_on_merge");
    applied(d.path(), "apps2/a.yaml");

    // YAML 1.1 booleans for `automated.enabled`; a quoted value or another
    // word is no boolean: the CRD's schema (`type: boolean`) refuses the
    // Application, so nothing is proven.
    for (enabled, expected) in [
        ("False", "manual_sync"),
        ("no", "manual_sync"),
        ("off", "manual_sync"),
        ("\"false\"", "not_proven"),
        ("True", "deploys_on_merge"),
        ("yes", "deploys_on_merge"),
        ("'no'", "not_proven"),
        ("maybe", "not_proven"),
    ] {
        let root = root_app(
            "root",
            REPO_HTTPS,
            "apps",
            &format!("  syncPolicy:\n    automated: {{enabled: {enabled}}}\n"),
        );
        let d = repo(
            REPO_HTTPS,
            &[("root.yaml", root), ("apps/a.yaml", child("a", 0, true))],
        );
        assert_eq!(
            verdict(d.path(), "apps/a.yaml"),
            expected,
            "enabled: {enabled}"
        );
    }
    // ... and for `directory.recurse`.
    for (recurse, expected) in [
        ("True", "deploys_on_merge"),
        ("on", "deploys_on_merge"),
        ("Off", "not_included"),
        ("\"true\"", "not_proven"),
    ] {
        let d = fx_dir(
            &format!("    directory: {{recurse: {recurse}}}\n"),
            &[("apps/sub/a.yaml", child("a", 0, true))],
        );
        assert_eq!(
            verdict(d.path(), "apps/sub/a.yaml"),
            expected,
            "recurse: {recurse}"
        );
    }
}

/// The same Application (kind, namespace, name) defined twice in what
/// ArgoCD applies: within one parent's output argo-cd `controller/state.go`
/// keeps only the last object of a duplicate; across two parents they
/// overwrite each other. Not proven, naming both files. A second
/// definition nothing applies, or one in another namespace, changes
/// nothing.
#[test]
fn an_application_defined_twice_is_not_proven() {
    let legacy = child("a", 0, true).replace(OLD, "https://legacy.example.com");
    let d = fx_dir(
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("apps/z-legacy.yaml", legacy.clone()),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["Application/a is defined in apps/a.yaml and in apps/z-legacy.yaml"],
    );
    refused(d.path(), "apps/a.yaml", "apps/z-legacy.yaml");

    // A second automated parent reading another folder.
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            (
                "root2.yaml",
                root_app("legacy-root", REPO_HTTPS, "legacy", AUTO),
            ),
            ("apps/a.yaml", child("a", 0, true)),
            ("legacy/a.yaml", legacy.clone()),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["in apps/a.yaml and in legacy/a.yaml"],
    );

    // Nothing applies `legacy/`: one definition in what ArgoCD applies.
    let d = fx_dir(
        "",
        &[
            ("apps/a.yaml", child("a", 0, true)),
            ("legacy/a.yaml", legacy),
        ],
    );
    assert_eq!(verdict(d.path(), "apps/a.yaml"), "deploys_on_merge");
    applied(d.path(), "apps/a.yaml");
}

/// A parent's Applications are reconciled only where the controller
/// watches: its destination must be the cluster ArgoCD runs in
/// (`https://kubernetes.default.svc` or `in-cluster`, argo-cd
/// `pkg/apis/application/v1alpha1/application_defaults.go`), and a child
/// with no `metadata.namespace` takes the parent's destination namespace
/// (`controller/state.go`, `NormalizeTargetObjects`), which must be the
/// control-plane namespace (docs/operator-manual/app-any-namespace.md).
#[test]
fn child_applications_land_in_the_control_plane() {
    let with_dest = |dest: &str| {
        root_app("root", REPO_HTTPS, "apps", AUTO).replace(
            "  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n",
            dest,
        )
    };
    let spoke = with_dest(
        "  destination:\n    server: https://spoke.example.org:6443\n    namespace: argocd\n",
    );
    let d = repo(
        REPO_HTTPS,
        &[("root.yaml", spoke), ("apps/a.yaml", child("a", 0, true))],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &["Application/root (root.yaml) applies its Applications to server https://spoke.example.org:6443", "not to the cluster ArgoCD runs in"],
    );
    refused(d.path(), "apps/a.yaml", "spoke.example.org");

    let by_name = with_dest("  destination:\n    name: in-cluster\n    namespace: argocd\n");
    let d = repo(
        REPO_HTTPS,
        &[("root.yaml", by_name), ("apps/a.yaml", child("a", 0, true))],
    );
    assert_eq!(verdict(d.path(), "apps/a.yaml"), "deploys_on_merge");

    let team = with_dest(
        "  destination:\n    server: https://kubernetes.default.svc\n    namespace: team-x\n",
    );
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", team.clone()),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    not_proven(
        d.path(),
        "apps/a.yaml",
        &[
            "Application/a (apps/a.yaml) names no metadata.namespace",
            "namespace `team-x`",
            "not the control-plane namespace argocd",
        ],
    );
    refused(d.path(), "apps/a.yaml", "team-x");

    // The child names the control-plane namespace itself.
    let placed = child("a", 0, true).replace(
        "metadata:\n  name: a\n",
        "metadata:\n  name: a\n  namespace: argocd\n",
    );
    let d = repo(REPO_HTTPS, &[("root.yaml", team), ("apps/a.yaml", placed)]);
    assert_eq!(verdict(d.path(), "apps/a.yaml"), "deploys_on_merge");
    applied(d.path(), "apps/a.yaml");
}

/// A fork: `origin` is the fork, `upstream` the repository it was forked
/// from, and the base branch is `origin`'s (`origin/HEAD`). A merge lands
/// in the fork only: a source reading `upstream`'s URL is another
/// repository (argo-cd fetches the repoURL it names), so not proven,
/// naming the remote; one reading the fork deploys.
#[test]
fn in_a_fork_only_the_base_branchs_remote_is_this_repository() {
    const FORK: &str = "https://git.example.com/me/gitops.git";
    for (reads, expected) in [(REPO_HTTPS, "not_proven"), (FORK, "deploys_on_merge")] {
        let d = repo(
            FORK,
            &[
                ("root.yaml", root_app("root", reads, "apps", AUTO)),
                ("apps/a.yaml", child("a", 0, true)),
            ],
        );
        git(d.path(), &["remote", "add", "upstream", REPO_HTTPS]);
        if expected == "not_proven" {
            not_proven(
                d.path(),
                "apps/a.yaml",
                &[
                    "is the git remote `upstream`",
                    "another repository than `origin`",
                ],
            );
            refused(d.path(), "apps/a.yaml", "upstream");
        } else {
            assert_eq!(verdict(d.path(), "apps/a.yaml"), expected);
            applied(d.path(), "apps/a.yaml");
        }
    }
}

/// The model reads what the commit holds, as ArgoCD's repo server checks
/// the commit out: a tracked file a `.gitignore` rule matches is still a
/// parent (here a second root pinned to a tag, so the parents disagree);
/// an ignored file git does not track is not in the repository.
#[test]
fn a_tracked_file_counts_even_when_gitignore_matches_it() {
    let pinned = root_app(
        "legacy-root",
        REPO_HTTPS,
        "apps",
        &format!("    targetRevision: v1.4.0\n{AUTO}"),
    );
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            ("apps/a.yaml", child("a", 0, true)),
            (".gitignore", "legacy/\n".to_string()),
        ],
    );
    crate::feeders::write(d.path(), "legacy/root2.yaml", &pinned);
    // Ignored and untracked: not in the repository.
    assert_eq!(verdict(d.path(), "apps/a.yaml"), "deploys_on_merge");
    git(d.path(), &["add", "-f", "legacy/root2.yaml"]);
    git(d.path(), &["commit", "-q", "-m", "legacy root"]);
    git(
        d.path(),
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
    );
    let (rows, _) = crate::feeders::feeders(d.path(), &[]);
    let pinned_row = rows
        .iter()
        .find(|r| r["file"] == "apps/a.yaml" && r["feeder"] == "Application/legacy-root")
        .unwrap_or_else(|| panic!("no legacy-root row: {rows:#?}"));
    assert_eq!(pinned_row["verdict"], "pinned", "{pinned_row}");
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("legacy-root"), "{}", stderr(&o));
}

/// Two parents may share a name in different namespaces (Applications in
/// any namespace, docs/operator-manual/app-any-namespace.md): the row that
/// the other one blocks names it with its file, not as itself, and JSON
/// `feeder_namespace` tells the two apart.
#[test]
fn same_name_parents_in_two_namespaces_are_told_apart() {
    let in_ns = |ns: &str, rev: &str| {
        root_app(
            "root",
            REPO_HTTPS,
            "apps",
            &format!("    targetRevision: {rev}\n{AUTO}"),
        )
        .replace(
            "  namespace: argocd\nspec:",
            &format!("  namespace: {ns}\nspec:"),
        )
    };
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", in_ns("argocd", "main")),
            ("team-a/root.yaml", in_ns("team-a", "v1.4.0")),
            (
                "argocd/default-project.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: default\n  namespace: argocd\nspec:\n  sourceRepos: ['*']\n  destinations: [{server: '*', namespace: '*'}]\n  sourceNamespaces: [team-a]\n".to_string(),
            ),
            ("apps/a.yaml", child("a", 0, true)),
        ],
    );
    let (rows, _) = crate::feeders::feeders(d.path(), &[]);
    let of = |ns: &str| {
        rows.iter()
            .find(|r| r["file"] == "apps/a.yaml" && r["feeder_namespace"] == ns)
            .unwrap_or_else(|| panic!("no row through {ns}: {rows:#?}"))
            .clone()
    };
    let (hub, team) = (of("argocd"), of("team-a"));
    assert_eq!(hub["feeder"], "Application/root");
    assert_eq!(hub["feeder_file"], "root.yaml");
    assert_eq!(team["verdict"], "pinned", "{team}");
    assert_eq!(hub["verdict"], "not_proven", "{hub}");
    let reason = hub["reason"].as_str().unwrap();
    assert!(
        reason.contains("another parent also includes it: Application/root in team-a/root.yaml"),
        "{reason}"
    );
}

/// One model per repository whatever PATH names: every `.rebind.yaml` git
/// tracks declares its `feeders:` (paths relative to its own folder), so
/// a root declared in `apps/.rebind.yaml` that tracks another branch
/// blocks `apps/a.yaml` from `feeders .`, `feeders apps` and `feeders
/// apps/a.yaml` alike.
#[test]
fn every_tracked_config_declares_its_feeders_whatever_path_is_given() {
    let d = repo(
        REPO_HTTPS,
        &[
            ("root.yaml", root_app("root", REPO_HTTPS, "apps", AUTO)),
            ("apps/a.yaml", child("a", 0, true)),
            (
                "apps/.rebind.yaml",
                "feeders:\n  - {name: legacy-root, path: ., revision: release, automated: true}\n"
                    .to_string(),
            ),
        ],
    );
    for path in [".", "apps", "apps/a.yaml"] {
        let (rows, _) = crate::feeders::feeders(d.path(), &[path]);
        let through = |feeder: &str| {
            rows.iter()
                .find(|r| r["file"] == "apps/a.yaml" && r["feeder"] == feeder)
                .unwrap_or_else(|| panic!("{path}: no row through {feeder}: {rows:#?}"))
                .clone()
        };
        assert_eq!(
            through("Application/legacy-root")["verdict"],
            "tracks_other_branch",
            "{path}"
        );
        let r = through("Application/root");
        assert_eq!(r["verdict"], "not_proven", "{path}: {r}");
        assert!(
            r["reason"].as_str().unwrap().contains("legacy-root"),
            "{path}: {r}"
        );
    }
    let o = rebind(
        d.path(),
        &["diff", "--require-deploys", "--from", OLD, "--to", NEW, "."],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
