//! Applications addressed by `destination.name`. ArgoCD sends an
//! Application whose `spec.destination.name` is set to the cluster
//! registration of that name (the `name` field of the cluster Secret; see
//! ArgoCD's docs, "Declarative Setup", Clusters: `name` is the cluster's
//! name, used by `destination.name`). A cutover that moves the cluster's
//! name keeps the old registration (the rollback target) and adds the new
//! one beside it under its own ArgoCD name, so a destination naming the old
//! registration moves to the new one's name, or the cutover is refused with
//! the place: never left on the old cluster silently.

use crate::common::{self, rebind, stderr, stdout, NEW, OLD};
use std::path::Path;

fn describe(part: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/eks-cutover")
        .join(part)
        .display()
        .to_string()
}

fn run(dir: &Path, cmd: &[&str]) -> std::process::Output {
    let (from, to) = (describe("old.json"), describe("new.json"));
    let mut args = cmd.to_vec();
    args.extend(["--describe-from", &from, "--describe-to", &to, "."]);
    rebind(dir, &args)
}

/// The stage cluster's endpoint: another cluster's registration.
const STAGE: &str = "https://A1B2C3D4E5F60718293A4B5C6D7E8F90.yl4.ap-northeast-2.eks.amazonaws.com";

fn registration(secret: &str, name: &str, server: &str) -> String {
    format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {secret}\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ntype: Opaque\nstringData:\n  name: {name}\n  server: {server}\n")
}

fn app(name: &str, dest: &str) -> String {
    format!("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  project: default\n  destination:\n    name: {dest}\n    namespace: web\n")
}

const PROJECT: &str = "---\napiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: platform\nspec:\n  destinations:\n    - name: prod-arn\n      namespace: '*'\n    - name: in-cluster\n      namespace: '*'\n";

const SET: &str = "---\napiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: web-set\nspec:\n  generators:\n    - list:\n        elements:\n          - team: a\n  template:\n    metadata:\n      name: 'web-{{team}}'\n    spec:\n      project: default\n      destination:\n        name: prod-arn\n        namespace: web\n";

/// A repository whose old cluster is registered as `prod-arn` (derived from
/// the EKS name `prod`), another cluster as `prod-eks`, and Applications,
/// an AppProject and an ApplicationSet sending to both, to `prod`, and to
/// `in-cluster`; an Application sent to the old endpoint, the rebind's own.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("clusters")).unwrap();
    std::fs::create_dir(root.join("apps")).unwrap();
    std::fs::write(
        root.join("clusters/prod.yaml"),
        registration("cluster-prod", "prod-arn", OLD),
    )
    .unwrap();
    std::fs::write(
        root.join("clusters/other.yaml"),
        registration("cluster-other", "prod-eks", STAGE),
    )
    .unwrap();
    let apps = [
        app("moves", "prod-arn"),
        app("by-eks-name", "prod"),
        app("local", "in-cluster"),
        app("other", "prod-eks"),
        app("stage", "stage"),
    ]
    .concat();
    std::fs::write(root.join("apps/apps.yaml"), &apps[4..]).unwrap();
    std::fs::write(root.join("apps/project.yaml"), &PROJECT[4..]).unwrap();
    std::fs::write(root.join("apps/set.yaml"), &SET[4..]).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "The prod-arn cluster runs web.\n").unwrap();
    dir
}

#[test]
fn destinations_naming_the_old_registration_move_to_the_new_ones_name() {
    let dir = repo();
    let diff = run(dir.path(), &["diff", "--format", "json"]);
    assert_eq!(diff.status.code(), Some(1), "{}", stderr(&diff));
    let v: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    let changes: Vec<(String, u64, String, String, String)> = v["names"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["position"].as_str().unwrap().starts_with("destination"))
        .map(|c| {
            assert_eq!(c["kind"], "name");
            (
                c["path"].as_str().unwrap().to_string(),
                c["line"].as_u64().unwrap(),
                c["position"].as_str().unwrap().to_string(),
                c["old"].as_str().unwrap().to_string(),
                c["new"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let c = |p: &str, l: u64, pos: &str, o: &str, n: &str| {
        (p.into(), l, pos.into(), o.into(), n.into())
    };
    assert_eq!(
        changes,
        vec![
            c(
                "apps/apps.yaml",
                8,
                "destination registration name",
                "prod-arn",
                "prod-blue-arn"
            ),
            c(
                "apps/apps.yaml",
                18,
                "destination name",
                "prod",
                "prod-blue"
            ),
            c(
                "apps/project.yaml",
                7,
                "destination registration name",
                "prod-arn",
                "prod-blue-arn"
            ),
            c(
                "apps/set.yaml",
                16,
                "destination registration name",
                "prod-arn",
                "prod-blue-arn"
            ),
        ]
    );
    // The review says which Applications move from which registration.
    let moves = v["names"]["moves"].as_array().unwrap();
    assert!(
        moves.iter().any(|m| m["resource"] == "Application/moves"
            && m["from_registration"]
                .as_str()
                .unwrap()
                .contains("\"prod-arn\"")
            && m["to_registration"]
                .as_str()
                .unwrap()
                .contains("\"prod-blue-arn\"")),
        "{moves:?}"
    );

    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    // Byte for byte: only the names moved.
    let apps = [
        app("moves", "prod-blue-arn"),
        app("by-eks-name", "prod-blue"),
        app("local", "in-cluster"),
        app("other", "prod-eks"),
        app("stage", "stage"),
    ]
    .concat();
    assert_eq!(read("apps/apps.yaml"), apps[4..]);
    assert_eq!(
        read("apps/project.yaml"),
        PROJECT[4..].replace("- name: prod-arn", "- name: prod-blue-arn")
    );
    assert_eq!(
        read("apps/set.yaml"),
        SET[4..].replace("name: prod-arn", "name: prod-blue-arn")
    );
    // The registration they now name is the one added beside the old one.
    let regs = read("clusters/prod.yaml");
    let old = registration("cluster-prod", "prod-arn", OLD);
    assert!(regs.starts_with(&old), "{regs}");
    assert!(regs.contains("  name: prod-blue-arn\n"), "{regs}");
    assert!(regs.contains(&format!("  server: {NEW}\n")), "{regs}");
    // Another cluster's registration and the prose are untouched.
    assert_eq!(
        read("clusters/other.yaml"),
        registration("cluster-other", "prod-eks", STAGE)
    );
    assert_eq!(read("README.md"), "The prod-arn cluster runs web.\n");
    // Nothing left: a second run changes nothing.
    let again = run(dir.path(), &["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["status"], "nothing_to_change", "{v}");
}

#[test]
fn a_generator_value_feeding_a_templated_destination_name_is_refused() {
    let dir = repo();
    let set = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\nspec:\n  generators:\n    - list:\n        elements:\n          - cluster: prod-arn\n          - cluster: prod-eks\n  template:\n    metadata:\n      name: 'web-{{cluster}}'\n    spec:\n      project: default\n      destination:\n        name: '{{cluster}}'\n        namespace: web\n";
    std::fs::write(dir.path().join("apps/fleet.yaml"), set).unwrap();
    let before = common::tree(dir.path());
    let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("apps/fleet.yaml:9:22"), "{err}");
    assert!(err.contains("spec.template.spec.destination.name"), "{err}");
    assert!(err.contains("\"prod-blue-arn\""), "{err}");
    // `prod-eks` (line 10) is another cluster's: not refused.
    assert!(!err.contains("apps/fleet.yaml:10:"), "{err}");
    assert!(common::tree(dir.path()) == before, "nothing written");
}

#[test]
fn without_a_registration_in_the_repository_a_derived_destination_name_is_not_proven() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let apps = [
        app("moves", "prod"),
        app("derived", "prod-arn"),
        app("local", "in-cluster"),
    ]
    .concat();
    std::fs::write(root.join("apps.yaml"), &apps[4..]).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let before = common::tree(root);
    let out = run(root, &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("apps.yaml:18:11"), "{err}");
    assert!(err.contains("not proven"), "{err}");
    assert!(common::tree(root) == before, "nothing written");

    // The hub's registrations (a live dump) say it is the old cluster's:
    // it moves, and the EKS name moves to the new EKS name.
    let live_dir = tempfile::tempdir().unwrap();
    let live = live_dir.path().join("live.yaml");
    let dump = format!(
        "{}{}",
        registration("cluster-prod", "prod-arn", OLD),
        app("derived", "prod-arn")
    );
    std::fs::write(&live, dump).unwrap();
    let live = live.display().to_string();
    let out = run(root, &["apply", "--live", &live, "--no-commit", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let want = [
        app("moves", "prod-blue"),
        app("derived", "prod-blue-arn"),
        app("local", "in-cluster"),
    ]
    .concat();
    assert_eq!(
        std::fs::read_to_string(root.join("apps.yaml")).unwrap(),
        want[4..]
    );
}

#[test]
fn the_registration_secret_out_writes_must_bear_the_name_destinations_move_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("apps.yaml"), &app("moves", "prod")[4..]).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let secret = out_dir.path().join("s.yaml").display().to_string();
    let before = common::tree(root);
    let out = run(
        root,
        &[
            "apply",
            "--cluster-name",
            "prod-green",
            "--secret-out",
            &secret,
            "--no-commit",
            "--yes",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("apps.yaml:8:11"), "{}", stderr(&out));
    assert!(common::tree(root) == before);
    // The default name (the new EKS name) is the one they move to.
    let out = run(
        root,
        &["apply", "--secret-out", &secret, "--no-commit", "--yes"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let s = std::fs::read_to_string(&secret).unwrap();
    assert!(s.contains("name: prod-blue\n"), "{s}");
    assert_eq!(
        std::fs::read_to_string(root.join("apps.yaml")).unwrap(),
        app("moves", "prod-blue")[4..]
    );
}

#[test]
fn an_old_registration_name_that_gets_no_new_one_is_refused_at_its_destinations() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `hub-east` neither is nor derives from the EKS name `prod`.
    std::fs::write(
        root.join("c.yaml"),
        registration("cluster-prod", "hub-east", OLD),
    )
    .unwrap();
    let apps = [app("east", "hub-east"), app("local", "in-cluster")].concat();
    std::fs::write(root.join("apps.yaml"), &apps[4..]).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let before = common::tree(root);
    let out = run(root, &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("apps.yaml:8:11"), "{err}");
    assert!(err.contains("would stay on the old cluster"), "{err}");
    assert!(common::tree(root) == before, "nothing written");
}

/// Another server's registration named as the old EKS cluster (`prod`),
/// by URL or by an ARN of another account, and no registration of the old
/// cluster: that registration is never touched, and an Application sent
/// to it by `destination.name: prod` is not moved but refused, naming both
/// places (the name is ambiguous: EKS name and another cluster's ArgoCD
/// name).
#[test]
fn another_servers_registration_under_the_old_name_is_never_touched() {
    let other_arn = "arn:aws:eks:us-east-1:999999999999:cluster/prod";
    for server in [STAGE, other_arn] {
        let reg = format!(
            "{}  config: |\n    {{\"awsAuthConfig\": {{\"clusterName\": \"prod\"}}}}\n",
            registration("cluster-other", "prod", server)
        );
        let write = |root: &Path, dest: &str| {
            std::fs::write(root.join("other.yaml"), &reg).unwrap();
            std::fs::write(root.join("apps.yaml"), &app("web", dest)[4..]).unwrap();
            std::fs::write(
                root.join("a.yaml"),
                format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ep\nspec:\n  destination:\n    server: {OLD}\n"),
            )
            .unwrap();
        };
        // Sent to it by name: refused, nothing written.
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "prod");
        let before = common::tree(dir.path());
        let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
        assert_eq!(out.status.code(), Some(2), "{server}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains("apps.yaml:8:11"), "{err}");
        assert!(err.contains("other.yaml:11:11"), "{err}");
        assert!(err.contains("another server's registration"), "{err}");
        assert!(common::tree(dir.path()) == before, "nothing written");
        // Not sent to by name: applied, the registration byte for byte.
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "in-cluster");
        let out = run(dir.path(), &["apply", "--no-commit", "--yes"]);
        assert_eq!(out.status.code(), Some(0), "{server}: {}", stderr(&out));
        let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert_eq!(read("other.yaml"), reg, "{server}");
        assert!(read("a.yaml").contains(NEW), "{}", read("a.yaml"));
    }
}

/// The same from the hub: another server's registration named `prod` only
/// in the `--live` dump. A destination `prod` is refused naming it; without
/// the dump, the EKS name moves (no registration says otherwise).
#[test]
fn another_servers_registration_under_the_old_name_in_live_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("apps.yaml"), &app("web", "prod")[4..]).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ep\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let live_dir = tempfile::tempdir().unwrap();
    let live = live_dir.path().join("live.yaml");
    let dump = format!(
        "{}{}",
        registration("cluster-other", "prod", STAGE),
        app("there", "in-cluster")
    );
    std::fs::write(&live, dump).unwrap();
    let live = live.display().to_string();
    let before = common::tree(root);
    let out = run(root, &["apply", "--live", &live, "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("apps.yaml:8:11"), "{err}");
    assert!(err.contains("another server's registration"), "{err}");
    assert!(err.contains(STAGE), "{err}");
    assert!(common::tree(root) == before, "nothing written");
    let out = run(root, &["apply", "--no-commit", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let apps = std::fs::read_to_string(root.join("apps.yaml")).unwrap();
    assert!(apps.contains("    name: prod-blue\n"), "{apps}");
}
