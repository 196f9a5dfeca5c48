//! Restoration of the git flow: a fault injected after each step that
//! follows the first write leaves HEAD, every ref, the index and the working
//! tree exactly as they were.

use crate::common::*;
use rebind::edit::rewrite::FilePlan;
use rebind::repo::git::{self, Faults, Step};
use std::collections::BTreeMap;
use std::path::Path;

const TARGETS: [&str; 3] = [
    "apps/argocd.yaml",
    "apps/keda.yaml",
    "apps/node-local-dns.json",
];

fn plans(root: &Path) -> Vec<FilePlan> {
    TARGETS
        .iter()
        .map(|rel| {
            let old = std::fs::read_to_string(root.join(rel)).unwrap();
            assert!(old.contains(OLD), "{rel}");
            FilePlan {
                path: root.join(rel),
                rel: rel.to_string(),
                new: old.replace(OLD, NEW).into(),
                old: old.into(),
                changes: Vec::new(),
                is_config: false,
            }
        })
        .collect()
}

/// Work tree files (not `.git`), HEAD, refs, index bytes, `.git` entries
/// other than objects and logs.
type State = (
    BTreeMap<String, Vec<u8>>,
    String,
    String,
    Vec<u8>,
    Vec<String>,
);

fn state(d: &Path) -> State {
    let mut files = tree(d);
    files.retain(|k, _| !k.starts_with(".git/"));
    let mut git_dir: Vec<String> = std::fs::read_dir(d.join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    git_dir.sort();
    (
        files,
        std::fs::read_to_string(d.join(".git/HEAD")).unwrap(),
        git(d, &["for-each-ref"]),
        std::fs::read(d.join(".git/index")).unwrap(),
        git_dir,
    )
}

fn repo() -> tempfile::TempDir {
    let dir = temp_fixture();
    git_init_commit(dir.path());
    // Staged and unstaged work elsewhere must survive a restore too.
    let stage = dir.path().join("stage/keda.yaml");
    let mut b = std::fs::read(&stage).unwrap();
    b.extend_from_slice(b"# staged\n");
    std::fs::write(&stage, &b).unwrap();
    git(dir.path(), &["add", "stage/keda.yaml"]);
    b.extend_from_slice(b"# unstaged\n");
    std::fs::write(&stage, &b).unwrap();
    dir
}

/// The full review a cut pull-request body points to, the file the
/// commit adds.
const ADDED: &str = ".rebind/reviews/rebind/faults.md";

#[test]
fn a_fault_after_any_step_restores_everything() {
    for (step, added) in Step::ALL
        .into_iter()
        .flat_map(|s| [(s, None), (s, Some((Path::new(ADDED), "# review\n")))])
    {
        let dir = repo();
        let d = dir.path();
        let before = state(d);
        let status_before = git(d, &["status", "--porcelain"]);
        let r = git::open(d).unwrap().unwrap();
        let plans = plans(d);
        let prep = r
            .prepare_adding(&plans, added, None, "rebind/faults", None, &[])
            .unwrap();
        let err = git::commit_flow_with(
            &r,
            &prep,
            &plans,
            "rebind test\n",
            None,
            Faults {
                fail_after: Some(step),
            },
        )
        .err()
        .unwrap_or_else(|| panic!("{step:?}: no error"));
        let msg = format!("{err:#}");
        assert!(
            msg.contains(&format!("injected fault after step {step:?}"))
                && msg.contains("were restored"),
            "{step:?}: {msg}"
        );
        drop(prep);
        let after = state(d);
        assert_eq!(after.0, before.0, "{step:?}: work tree");
        assert_eq!(after.1, before.1, "{step:?}: HEAD");
        assert_eq!(after.2, before.2, "{step:?}: refs");
        assert!(after.3 == before.3, "{step:?}: index bytes");
        assert_eq!(
            after.4, before.4,
            "{step:?}: no lock or temporary file left"
        );
        assert_eq!(
            git(d, &["status", "--porcelain"]),
            status_before,
            "{step:?}"
        );
        assert!(
            !d.join(".rebind").exists(),
            "{step:?}: the added file's directories"
        );
    }
}

/// The added file is committed with the rewrite, in the working tree and
/// the index as committed; a path that exists already is refused before
/// anything is written.
#[test]
fn an_added_file_is_committed_with_the_rewrite_and_never_replaces_one() {
    let dir = repo();
    let d = dir.path();
    let r = git::open(d).unwrap().unwrap();
    let plans = plans(d);
    let added = Some((Path::new(ADDED), "# review\n"));
    let prep = r
        .prepare_adding(&plans, added, None, "rebind/faults", None, &[])
        .unwrap();
    let done =
        git::commit_flow_with(&r, &prep, &plans, "rebind test\n", None, Faults::default()).unwrap();
    drop(prep);
    assert_eq!(
        git(d, &["diff", "--name-only", "HEAD~1", "HEAD"]),
        format!("{ADDED}\napps/argocd.yaml\napps/keda.yaml\napps/node-local-dns.json\n")
    );
    assert_eq!(
        git(d, &["show", &format!("{}:{ADDED}", done.commit)]),
        "# review\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.join(ADDED)).unwrap(),
        "# review\n"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "MM stage/keda.yaml\n");
    // The same path again, from another branch: in HEAD now, so refused.
    let plans = vec![];
    let err = r
        .prepare_adding(&plans, added, Some("other"), "other", None, &[])
        .err()
        .unwrap();
    assert!(format!("{err:#}").contains("already exists"), "{err:#}");
    // Only in the working tree (untracked): refused too.
    git(d, &["checkout", "-q", "main"]);
    std::fs::create_dir_all(d.join(".rebind/reviews/rebind")).unwrap();
    std::fs::write(d.join(ADDED), "mine\n").unwrap();
    let err = r
        .prepare_adding(&plans, added, Some("third"), "third", None, &[])
        .err()
        .unwrap();
    assert!(format!("{err:#}").contains("already exists"), "{err:#}");
    assert_eq!(std::fs::read_to_string(d.join(ADDED)).unwrap(), "mine\n");
}

#[test]
fn without_a_fault_the_same_flow_commits() {
    let dir = repo();
    let d = dir.path();
    let r = git::open(d).unwrap().unwrap();
    let plans = plans(d);
    let prep = r.prepare(&plans, None, "rebind/faults", None, &[]).unwrap();
    let done =
        git::commit_flow_with(&r, &prep, &plans, "rebind test\n", None, Faults::default()).unwrap();
    drop(prep);
    assert_eq!(done.branch, "rebind/faults");
    assert_eq!(git(d, &["rev-parse", "HEAD"]).trim(), done.commit);
    assert_eq!(
        git(d, &["diff", "--name-only", "HEAD~1", "HEAD"]),
        "apps/argocd.yaml\napps/keda.yaml\napps/node-local-dns.json\n"
    );
    // The staged and unstaged work elsewhere is as it was.
    assert_eq!(git(d, &["status", "--porcelain"]), "MM stage/keda.yaml\n");
    assert!(!d.join(".git/index.lock").exists());
}
