//! `examples/cutover.sh` end to end, forward and rollback, on a git copy of
//! the example repo with a local bare remote and stub `kubectl` / `argocd`
//! that record what they were asked; and `apply --expect-from-audit`.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A work area: `repo` (the fixture, committed on main, remote `origin`),
/// `remote.git` (bare), `stubs` (kubectl, argocd), `tmp` (the script's TMPDIR).
struct Area {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Area {
    fn new() -> Area {
        Area::build(&[], false)
    }

    /// The example repo without the files `drop`.
    fn without(drop: &[&str]) -> Area {
        Area::build(drop, false)
    }

    /// The example repo with the `.rebind.yaml` that `rebind init` writes
    /// (clusters finance-prod-blue at OLD and finance-stage-blue at STAGE).
    fn with_config() -> Area {
        Area::build(&[], true)
    }

    fn build(drop: &[&str], init: bool) -> Area {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("repo");
        copy_fixture(&repo);
        for f in drop {
            std::fs::remove_file(repo.join(f)).unwrap();
        }
        if init {
            let o = rebind(&repo, &["init"]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        }
        git_init_commit(&repo);
        git(&root, &["init", "-q", "--bare", "remote.git"]);
        git(&repo, &["remote", "add", "origin", "../remote.git"]);
        // The remote's default branch is known (as after a clone): the
        // example's `HEAD` revisions are then proven to be the base.
        git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
        git(
            &repo,
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/main",
            ],
        );
        // The repository the example's Applications name: a local path
        // names no repository, so without this remote nothing would be
        // proven to deploy (the after-merge review fails closed).
        git(
            &repo,
            &[
                "remote",
                "add",
                "upstream",
                "https://github.com/example/platform-gitops.git",
            ],
        );
        for d in ["stubs", "tmp", "calls"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        // The stubs answer like the real tools would and log their arguments.
        stub(
            &root,
            "kubectl",
            r#"case "$*" in "config current-context") echo hub-admin ;; esac"#,
        );
        stub(
            &root,
            "argocd",
            r#"case "$*" in "app list "*) printf 'argocd/istio\nargocd/keda\n' ;; esac"#,
        );
        Area { _dir: dir, root }
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    /// Runs the cutover script with the built rebind and the stubs on PATH.
    fn cutover(&self, args: &[&str], token: Option<&str>) -> Output {
        self.cutover_in(args, token, &self.root.join("tmp"))
    }

    /// [`Area::cutover`] with `TMPDIR` set to `tmp`.
    fn cutover_in(&self, args: &[&str], token: Option<&str>, tmp: &Path) -> Output {
        self.command(args, token, tmp).output().unwrap()
    }

    /// [`Area::cutover`] with more environment (`CONFIG_CLUSTER`, ...).
    fn cutover_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args, None, &self.root.join("tmp"));
        cmd.envs(env.iter().copied());
        cmd.output().unwrap()
    }

    /// The script's command line, with the built rebind and the stubs on PATH.
    fn command(&self, args: &[&str], token: Option<&str>, tmp: &Path) -> Command {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cutover.sh");
        let bin = crate::common::binary().parent().unwrap();
        let path = format!(
            "{}:{}:{}",
            self.root.join("stubs").display(),
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        cmd.arg(script)
            .args(args)
            .current_dir(&self.root)
            .env("PATH", path)
            .env("TMPDIR", tmp)
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("BRANCH")
            .env_remove("REBIND")
            .stdin(Stdio::null());
        match token {
            Some(t) => cmd.env("ARGOCD_CLUSTER_TOKEN", t),
            None => cmd.env_remove("ARGOCD_CLUSTER_TOKEN"),
        };
        cmd.env_remove("CONFIG_CLUSTER")
            .env_remove("EKS_CLUSTER")
            .env_remove("LIVE")
            .env_remove("APPLIED_BY");
        cmd
    }

    /// Makes the remote reject every push (a pre-receive hook); remove the
    /// file it returns to accept them again.
    fn reject_pushes(&self) -> PathBuf {
        let hook = self.root.join("remote.git/hooks/pre-receive");
        std::fs::write(&hook, "#!/bin/sh\necho rejected by policy >&2\nexit 1\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        hook
    }

    /// What a stub was asked, one line per call.
    fn calls(&self, tool: &str) -> String {
        std::fs::read_to_string(self.root.join("calls").join(tool)).unwrap_or_default()
    }

    /// The output directory each run made under TMPDIR, oldest first.
    fn out_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<(std::time::SystemTime, PathBuf)> =
            std::fs::read_dir(self.root.join("tmp"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .map(|p| (p.metadata().unwrap().modified().unwrap(), p))
                .collect();
        dirs.sort();
        dirs.into_iter().map(|(_, p)| p).collect()
    }
}

fn stub(root: &Path, name: &str, answer: &str) {
    let path = root.join("stubs").join(name);
    let log = root.join("calls").join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n{answer}\nexit 0\n",
            log.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Every file under `root` except `.git/`.
fn worktree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    tree(root)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".git/"))
        .collect()
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn json_file(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn assert_pushed_with_upstream(area: &Area, branch: &str) {
    let repo = area.repo();
    let upstream = git(
        &repo,
        &[
            "rev-parse",
            "--abbrev-ref",
            &format!("{branch}@{{upstream}}"),
        ],
    );
    assert_eq!(upstream.trim(), format!("origin/{branch}"));
    let local = git(&repo, &["rev-parse", branch]);
    let remote = git(
        &area.root.join("remote.git"),
        &["rev-parse", &format!("refs/heads/{branch}")],
    );
    assert_eq!(local, remote, "the remote holds the branch's commit");
}

/// `bytes` with every spelling of the old host (any case, `:443` after it)
/// written as `OLD_HOST`.
fn canonical_old(bytes: &[u8]) -> Vec<u8> {
    let host = OLD_HOST.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].len() >= host.len() && bytes[i..i + host.len()].eq_ignore_ascii_case(host) {
            out.extend_from_slice(host);
            i += host.len();
            if bytes[i..].starts_with(b":443") {
                i += 4;
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn cutover_forward_then_rollback_restores_the_manifests() {
    let area = Area::new();
    let repo = area.repo();
    let original = worktree(&repo);
    let repo_arg = repo.to_str().unwrap();

    // Forward, with a token: the Secret is rendered with it, outside the repo.
    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], Some("tok-123"));
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    assert!(branch.starts_with("rebind/"), "{branch}");
    assert_pushed_with_upstream(&area, &branch);
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "a clean tree");

    // Nothing of the old endpoint is left to rebind on the branch (the
    // fixture has no .rebind.yaml for `check`).
    let d = rebind(&repo, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(d.status.code(), Some(0), "{}{}", stdout(&d), stderr(&d));

    // The audit's counts are what the commit changed.
    let dirs = area.out_dirs();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let outdir = &dirs[0];
    assert!(!outdir.starts_with(&repo));
    let audit = json_file(&outdir.join("audit.json"));
    assert_eq!(audit["command"], "diff");
    assert_eq!(audit["status"], "pending");
    let changed = git(&repo, &["diff", "--name-only", "main", &branch]);
    assert_eq!(
        audit["file_count"].as_u64().unwrap() as usize,
        changed.lines().count(),
        "{changed}"
    );
    assert_eq!(audit["file_count"], 8);
    assert_eq!(audit["change_count"], 19);

    let review = std::fs::read_to_string(outdir.join("review.md")).unwrap();
    assert!(review.contains(&branch), "{review}");
    assert!(review.contains(NEW_HOST), "{review}");

    // The repository declares the cluster's registration itself: it is
    // rebound in the commit, and no second Secret is written (not even with
    // a token at hand); the review says which credentials to change.
    let secret = outdir.join("cluster-secret.yaml");
    assert!(!secret.exists(), "one registration per server");
    assert!(review.contains("NEW cluster's token and CA"), "{review}");
    #[cfg(unix)]
    assert_eq!(mode(outdir), 0o700);

    // The hub was only looked at: the current context, the apps to move.
    assert_eq!(area.calls("kubectl"), "config current-context\n");
    assert_eq!(
        area.calls("argocd"),
        format!("app list --cluster {OLD} -o name\n")
    );
    // The repository declares the cluster's Secret itself (rebound in the
    // commit): a second one must not be applied.
    assert!(
        out.contains("The repository declares the new cluster's Secret itself"),
        "{out}"
    );
    assert!(!out.contains("kubectl --context hub-admin apply"), "{out}");
    // The sync order comes from the after-merge model: app-root has no
    // automated sync, so it is synced by hand first, then its children.
    assert!(
        out.contains("1. Application/app-root: argocd app sync app-root"),
        "{out}"
    );
    assert!(
        out.contains("wave 0: Application/karpenter: automated: argocd app wait karpenter"),
        "{out}"
    );
    assert!(out.contains("--trust remove-retired"), "{out}");
    assert!(out.contains("teardown"), "{out}");
    let tip = git(&repo, &["rev-parse", &branch]);
    assert!(
        out.contains(&format!("Pushed {branch} ({}) to origin", tip.trim())),
        "{out}"
    );

    // Rollback: the same script, endpoints swapped, on the pushed branch;
    // no token, so the Secret is the placeholder form from `apply`.
    let o = area.cutover(&[NEW, OLD, "prod-old", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let back = git(&repo, &["branch", "--show-current"]).trim().to_string();
    assert_ne!(back, branch);
    assert_pushed_with_upstream(&area, &back);
    assert_eq!(
        git(&repo, &["rev-parse", &format!("{back}~1")]),
        git(&repo, &["rev-parse", &branch]),
        "the rollback is one commit on top of the cutover"
    );
    let now = worktree(&repo);
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        original.keys().collect::<Vec<_>>()
    );
    // A rollback rewrites the new endpoint back to the old one as the old
    // URL is spelt: a host the fixture writes in lower case, or with the
    // default port, comes back in the canonical spelling. Every other byte
    // of every file is the original's.
    let mut respelt = Vec::new();
    for (path, bytes) in &original {
        if now[path] != *bytes {
            assert_eq!(
                String::from_utf8_lossy(&now[path]),
                String::from_utf8_lossy(&canonical_old(bytes)),
                "{path}: differs after the rollback by more than the old host's spelling"
            );
            respelt.push(path.as_str());
        }
    }
    assert_eq!(respelt, ["apps/argocd.yaml", "apps/cluster-bootstrap.yaml"]);
    // The forward commit's revert is the byte-exact rollback; the script
    // names it.
    let forward = git(&repo, &["rev-parse", &branch]);
    assert!(
        out.contains(&format!("git revert {}", forward.trim())),
        "{out}"
    );
    let dirs = area.out_dirs();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    // The rollback rebinds the repository's own registration back too: no
    // second Secret then either.
    assert!(!dirs[1].join("cluster-secret.yaml").exists());

    // The other rollback the script offers: the revert is byte-exact.
    git(&repo, &["checkout", "-q", "-b", "revert-check", &branch]);
    git(&repo, &["revert", "--no-edit", &branch]);
    assert!(
        worktree(&repo) == original,
        "git revert restores every byte"
    );
}

#[test]
fn cutover_says_how_to_register_the_cluster_when_the_repo_does_not() {
    // Without the repository's own cluster Secrets.
    let drop = [
        "apps/cluster-bootstrap.yaml",
        "apps/argocd-external-secrets.yaml",
    ];
    for token in [Some("tok-123"), None] {
        let area = Area::without(&drop);
        let repo = area.repo();
        let o = area.cutover(
            &[OLD, NEW, "prod-new", "origin", repo.to_str().unwrap()],
            token,
        );
        assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
        let out = stdout(&o);
        let secret = area.out_dirs()[0].join("cluster-secret.yaml");
        let s = secret.display();
        let step = match token {
            Some(_) => format!("kubectl --context hub-admin apply -f {s}"),
            None => format!("envsubst < {s} | kubectl --context hub-admin apply -f -"),
        };
        assert!(out.contains(&step), "{step}\n{out}");
        assert!(
            !out.contains("declares the new cluster's Secret itself"),
            "{out}"
        );
        let text = std::fs::read_to_string(&secret).unwrap();
        assert_eq!(text.contains("tok-123"), token.is_some(), "{text}");
        // Outside the repository, private to its owner.
        assert!(!secret.starts_with(&repo));
        #[cfg(unix)]
        assert_eq!(mode(&secret), 0o600);
        assert!(
            text.contains("name: prod-new") || text.contains("prod-new"),
            "{text}"
        );
    }
}

#[test]
fn cutover_with_a_config_rebinds_it_and_check_stays_clean() {
    let area = Area::with_config();
    let repo = area.repo();
    assert_eq!(rebind(&repo, &["check"]).status.code(), Some(0));
    let o = area.cutover(
        &[
            OLD,
            NEW,
            "finance-prod-blue",
            "origin",
            repo.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    assert_pushed_with_upstream(&area, &branch);
    let changed = git(&repo, &["diff", "--name-only", "main", &branch]);
    assert!(changed.lines().any(|l| l == ".rebind.yaml"), "{changed}");
    let c = rebind(&repo, &["check"]);
    assert_eq!(c.status.code(), Some(0), "{}{}", stdout(&c), stderr(&c));
    let cfg = std::fs::read_to_string(repo.join(".rebind.yaml")).unwrap();
    assert!(cfg.contains(&format!("endpoint: {NEW}")), "{cfg}");
    assert!(cfg.contains(&format!("retired: [{OLD}]")), "{cfg}");
}

#[test]
fn cutover_rollback_with_a_config_keeps_check_clean() {
    let area = Area::with_config();
    let repo = area.repo();
    let r = repo.to_str().unwrap();
    let o = area.cutover(&[OLD, NEW, "finance-prod-blue", "origin", r], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = area.cutover(&[NEW, OLD, "finance-prod-blue", "origin", r], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = rebind(&repo, &["check"]);
    assert_eq!(c.status.code(), Some(0), "{}{}", stdout(&c), stderr(&c));
}

#[test]
fn cutover_refuses_a_config_cluster_at_another_endpoint() {
    let area = Area::with_config();
    let repo = area.repo();
    let before = worktree(&repo);
    // finance-stage-blue is declared at STAGE, not at OLD: the audit of
    // OLD -> NEW does not match what --cluster finance-stage-blue would do.
    // (The config's key is CONFIG_CLUSTER; CLUSTER_NAME is ArgoCD's name
    // for the new cluster.)
    let o = area.cutover_env(
        &[
            OLD,
            NEW,
            "finance-prod-green",
            "origin",
            repo.to_str().unwrap(),
        ],
        &[("CONFIG_CLUSTER", "finance-stage-blue")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("the audit is of --from {OLD}")),
        "{err}"
    );
    assert_eq!(git(&repo, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(worktree(&repo), before);
    assert_eq!(area.calls("kubectl"), "", "no step after a refusal");
}

#[test]
fn cutover_of_a_rebound_tree_is_nothing_to_do() {
    let area = Area::new();
    let repo = area.repo();
    let repo_arg = repo.to_str().unwrap();
    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let head = git(&repo, &["rev-parse", "HEAD"]);
    // Again on the branch it made: its commit is reported (and pushed
    // again, which changes nothing), no new commit.
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!(
            "Pushed {branch} ({}) to origin: the earlier run's commit",
            head.trim()
        )),
        "{}",
        stdout(&o)
    );
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head, "no new commit");
    // Merged: nothing to change, and the run leaves no output directory.
    git(&repo, &["switch", "-q", "main"]);
    git(&repo, &["merge", "-q", "--no-ff", "-m", "merge", &branch]);
    let dirs = area.out_dirs().len();
    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Nothing to change"), "{}", stdout(&o));
    assert_eq!(
        area.out_dirs().len(),
        dirs,
        "the output directory is removed"
    );
}

#[test]
fn cutover_run_again_after_a_rejected_push_pushes_the_cutover_commit() {
    // From the original branch (checked out again) and from the new one.
    for back_to_main in [true, false] {
        let area = Area::new();
        let repo = area.repo();
        let repo_arg = repo.to_str().unwrap();
        let hook = area.root.join("remote.git/hooks/pre-receive");
        std::fs::write(&hook, "#!/bin/sh\necho rejected by policy >&2\nexit 1\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
        assert_eq!(o.status.code(), Some(3), "{}\n{}", stdout(&o), stderr(&o));
        let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
        let commit = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
        let main = git(&repo, &["rev-parse", "main"]).trim().to_string();
        if back_to_main {
            git(&repo, &["switch", "-q", "main"]);
        }
        std::fs::remove_file(&hook).unwrap();
        let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
        let out = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{back_to_main}: {out}\n{}",
            stderr(&o)
        );
        assert_pushed_with_upstream(&area, &branch);
        assert!(
            out.contains(&format!("Pushed {branch} ({commit}) to origin")),
            "{back_to_main}: {out}"
        );
        assert!(
            !out.contains(&main),
            "{back_to_main}: names main's commit: {out}"
        );
        if back_to_main {
            // The rollback offered is the cutover commit's revert.
            assert!(out.contains(&format!("git revert {commit}")), "{out}");
        }
    }
}

/// The same retry with a `.rebind.yaml`, on the cutover branch: there the
/// config already names the new endpoint, so the cluster's endpoint is the
/// new one. The retry still pushes the earlier commit and says so; it never
/// exits 0 saying "nothing to change" with the branch unpushed.
#[test]
fn cutover_with_a_config_run_again_on_its_branch_after_a_rejected_push_pushes_it() {
    let area = Area::with_config();
    let repo = area.repo();
    let repo_arg = repo.to_str().unwrap();
    let hook = area.reject_pushes();
    // Three names: the config's key, ArgoCD's name for the new cluster,
    // its EKS name.
    let args = [OLD, NEW, "finance-prod-green", "origin", repo_arg];
    let env = [
        ("CONFIG_CLUSTER", "finance-prod-blue"),
        ("EKS_CLUSTER", "prod-green-eks"),
    ];
    let o = area.cutover_env(&args, &env);
    assert_eq!(o.status.code(), Some(3), "{}\n{}", stdout(&o), stderr(&o));
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    let commit = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_ne!(branch, "main");
    // What exists and the retry, from rebind's JSON fields.
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "rebind: branch {branch}, commit {commit}, pushed: false; its retry: "
        )),
        "{err}"
    );
    std::fs::remove_file(&hook).unwrap();
    let o = area.cutover_env(&args, &env);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(!out.contains("Nothing to change"), "{out}");
    assert_pushed_with_upstream(&area, &branch);
    assert!(
        out.contains(&format!("Pushed {branch} ({commit}) to origin")),
        "{out}"
    );
    // And `apply --push --format json` run again there reports it, with
    // the endpoint the commit rebound (not the config's new one twice).
    let a = rebind(
        &repo,
        &[
            "apply",
            "--cluster",
            "finance-prod-blue",
            "--to",
            NEW,
            "--yes",
            "--push",
            "origin",
            "--format",
            "json",
        ],
    );
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let r: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(r["status"], "already_done", "{r}");
    assert_eq!(r["commit"], commit.as_str(), "{r}");
    assert_eq!(r["from"], OLD, "{r}");
}

/// The config's key, ArgoCD's name for the new cluster and its EKS name
/// are three inputs: the config's cluster (by CONFIG_CLUSTER) is rebound,
/// the Secret is named for the new cluster, the describe command names the
/// EKS cluster.
#[test]
fn cutover_takes_the_config_key_the_argocd_name_and_the_eks_name_apart() {
    let area = Area::with_config();
    let repo = area.repo();
    let o = area.cutover_env(
        &[
            OLD,
            NEW,
            "finance-prod-green",
            "origin",
            repo.to_str().unwrap(),
        ],
        &[
            ("CONFIG_CLUSTER", "finance-prod-blue"),
            ("EKS_CLUSTER", "prod-green-eks"),
        ],
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(out.contains("Config: "), "{out}");
    assert!(out.contains("(cluster finance-prod-blue)"), "{out}");
    assert!(out.contains("Secret for finance-prod-green"), "{out}");
    assert!(
        out.contains("aws eks describe-cluster --name prod-green-eks"),
        "{out}"
    );
    let cfg = std::fs::read_to_string(repo.join(".rebind.yaml")).unwrap();
    assert!(cfg.contains(&format!("endpoint: {NEW}")), "{cfg}");
    assert!(!cfg.contains("finance-prod-green"), "{cfg}");
}

#[test]
fn cutover_removes_its_directory_when_it_refuses_tmpdir_in_the_repo() {
    let area = Area::new();
    let repo = area.repo();
    let inside = repo.join("scratch");
    std::fs::create_dir(&inside).unwrap();
    let o = area.cutover_in(
        &[OLD, NEW, "prod-new", "origin", repo.to_str().unwrap()],
        None,
        &inside,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is inside the repository"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_dir(&inside).unwrap().count(),
        0,
        "nothing left under TMPDIR"
    );
}

#[test]
fn cutover_with_a_rejected_push_exits_3_with_the_retry() {
    let area = Area::new();
    let repo = area.repo();
    let hook = area.root.join("remote.git/hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho rejected by policy >&2\nexit 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = area.cutover(
        &[OLD, NEW, "prod-new", "origin", repo.to_str().unwrap()],
        None,
    );
    assert_eq!(o.status.code(), Some(3), "{}\n{}", stdout(&o), stderr(&o));
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    let err = stderr(&o);
    assert!(
        err.contains(&format!("push --set-upstream origin {branch}")),
        "{err}"
    );
    // The commit is there; the printed retry works once the remote accepts.
    std::fs::remove_file(&hook).unwrap();
    git(&repo, &["push", "-q", "--set-upstream", "origin", &branch]);
    assert_pushed_with_upstream(&area, &branch);
}

#[test]
fn cutover_refuses_a_failed_audit_and_writes_nothing() {
    let area = Area::new();
    let repo = area.repo();
    let before = worktree(&repo);
    let o = area.cutover(
        &[
            OLD,
            "http://not-https",
            "x",
            "origin",
            repo.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("the audit failed"), "{}", stderr(&o));
    assert_eq!(git(&repo, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(worktree(&repo), before);
    assert_eq!(area.calls("kubectl"), "");
    assert_eq!(
        area.out_dirs(),
        Vec::<PathBuf>::new(),
        "nothing left under TMPDIR"
    );
}

// --- apply --expect-from-audit ---------------------------------------------

/// `rebind diff --format json` of OLD -> `to` in `dir`, saved outside it.
/// `apply ARGS --expect-from-audit AUDIT --no-commit --yes` in `dir`.
fn apply_audited(dir: &Path, args: &[&str], audit: &Path) -> std::process::Output {
    let mut all = vec!["apply"];
    all.extend_from_slice(args);
    all.extend([
        "--expect-from-audit",
        audit.to_str().unwrap(),
        "--no-commit",
        "--yes",
    ]);
    rebind(dir, &all)
}

fn audit(dir: &Path, to: &str, save: &Path) {
    // --allow-merge: some audits here are of a rebind onto the stage cluster.
    let o = rebind(
        dir,
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            to,
            "--format",
            "json",
            "--allow-merge",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::write(save, &o.stdout).unwrap();
}

#[test]
fn apply_with_the_audit_writes_what_was_audited() {
    let dir = temp_fixture();
    let save = tempfile::tempdir().unwrap();
    let a = save.path().join("audit.json");
    audit(dir.path(), NEW, &a);
    // --from comes from the audit when it is not given.
    let o = apply_audited(dir.path(), &["--to", NEW], &a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Rewrote 19 occurrences in 8 files"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn apply_refuses_when_the_tree_changed_since_the_audit() {
    let dir = temp_fixture();
    let save = tempfile::tempdir().unwrap();
    let a = save.path().join("audit.json");
    audit(dir.path(), NEW, &a);
    // One more Application on the old cluster after the audit.
    std::fs::write(
        dir.path().join("apps/late.yaml"),
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: late\nspec:\n  destination:\n    server: {OLD}\n"
        ),
    )
    .unwrap();
    let before = tree(dir.path());
    let o = apply_audited(dir.path(), &["--from", OLD, "--to", NEW], &a);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("no longer matches the audit"), "{err}");
    assert!(err.contains("expected 19 occurrences in 8 files"), "{err}");
    assert!(err.contains("found 20 in 9"), "{err}");
    assert_eq!(tree(dir.path()), before, "nothing written");
}

#[test]
fn apply_refuses_an_audit_of_another_rebind() {
    let dir = temp_fixture();
    let save = tempfile::tempdir().unwrap();
    let a = save.path().join("audit.json");
    audit(dir.path(), STAGE, &a);
    let before = tree(dir.path());
    let o = apply_audited(dir.path(), &["--from", OLD, "--to", NEW], &a);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("the audit is of --to {STAGE}")),
        "{err}"
    );
    assert_eq!(tree(dir.path()), before, "nothing written");
}

#[test]
fn apply_refuses_an_audit_it_cannot_read() {
    let dir = temp_fixture();
    let save = tempfile::tempdir().unwrap();
    let a = save.path().join("audit.json");
    audit(dir.path(), NEW, &a);
    let good: serde_json::Value = json_file(&a);
    let cases: Vec<(String, &str)> = vec![
        (
            {
                let mut v = good.clone();
                v["schema_version"] = 2.into();
                v.to_string()
            },
            "schema_version 2",
        ),
        (
            {
                let mut v = good.clone();
                v["command"] = "apply".into();
                v.to_string()
            },
            "written by `rebind apply`",
        ),
        (
            {
                let mut v = good.clone();
                v.as_object_mut().unwrap().remove("change_count");
                v.to_string()
            },
            "no `change_count`",
        ),
        (
            "{\n  \"schema_version\": 1,\n  oops".to_string(),
            ":3:3: not a",
        ),
    ];
    let before = tree(dir.path());
    for (text, want) in cases {
        std::fs::write(&a, &text).unwrap();
        let o = apply_audited(dir.path(), &["--from", OLD, "--to", NEW], &a);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = stderr(&o);
        assert!(err.contains(want), "{want}: {err}");
        assert!(err.contains("audit.json"), "names the file: {err}");
    }
    assert_eq!(tree(dir.path()), before, "nothing written");
}

#[test]
fn expect_from_audit_conflicts_with_the_explicit_counts() {
    let dir = temp_fixture();
    let o = rebind(
        dir.path(),
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--expect-from-audit",
            "audit.json",
            "--expect-files",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn an_audit_does_not_silence_the_configs_expected_counts() {
    let dir = temp_fixture();
    assert_eq!(rebind(dir.path(), &["init"]).status.code(), Some(0));
    let cfg = dir.path().join(".rebind.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let stale = text.replacen(
        "expect: {files: 8, occurrences: 19}",
        "expect: {files: 7, occurrences: 18}",
        1,
    );
    assert_ne!(text, stale);
    // Audited first (the config's counts then held), then the config goes stale.
    let save = tempfile::tempdir().unwrap();
    let a = save.path().join("audit.json");
    audit(dir.path(), NEW, &a);
    std::fs::write(&cfg, stale).unwrap();
    let before = tree(dir.path());
    let o = apply_audited(
        dir.path(),
        &["--cluster", "finance-prod-blue", "--to", NEW],
        &a,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("expected 18 occurrences in 7 files"), "{err}");
    assert_eq!(tree(dir.path()), before, "nothing written");
}

#[test]
fn cutover_refuses_a_merge_that_would_not_deploy() {
    let area = Area::new();
    let repo = area.repo();
    let repo_arg = repo.to_str().unwrap();
    // Pin the root to a tag: merging the cutover branch would deploy nothing.
    let root = repo.join("apps/app-root.yaml");
    let text = std::fs::read_to_string(&root).unwrap();
    std::fs::write(
        &root,
        text.replace(
            "      path: apps\n",
            "      path: apps\n      targetRevision: v2.3.0\n",
        ),
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "pin the root"]);
    let before = worktree(&repo);
    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(2), "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--require-deploys"), "{err}");
    assert!(err.contains("pinned to tag v2.3.0"), "{err}");
    assert_eq!(git(&repo, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(worktree(&repo), before);
    assert!(
        area.out_dirs().is_empty(),
        "the output directory is removed"
    );
}

#[test]
fn cutover_refuses_while_a_role_trusts_only_the_old_issuer() {
    let area = Area::new();
    let repo = area.repo();
    let repo_arg = repo.to_str().unwrap();
    let identity = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/identity");
    std::fs::create_dir_all(repo.join("iam")).unwrap();
    std::fs::copy(
        identity.join("iam/karpenter-trust.json"),
        repo.join("iam/karpenter-trust.json"),
    )
    .unwrap();
    // The describe files name two clusters, so the by-name Application
    // (`destination.name` is the EKS name) moves too; no Application of the
    // repository feeds `by-name/`, so `--require-deploys` would refuse it
    // (tested elsewhere). This test is about the identity gate.
    std::fs::remove_dir_all(repo.join("by-name")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "irsa"]);
    let before = worktree(&repo);
    let describe = |f: &str| identity.join("describe").join(f).display().to_string();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cutover.sh");
    let bin = crate::common::binary().parent().unwrap();
    let run = || {
        Command::new("bash")
            .arg(&script)
            .args([OLD, NEW, "prod-new", "origin", repo_arg])
            .current_dir(&area.root)
            .env(
                "PATH",
                format!(
                    "{}:{}:{}",
                    area.root.join("stubs").display(),
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("TMPDIR", area.root.join("tmp"))
            .env("DESCRIBE_FROM", describe("old.json"))
            .env("DESCRIBE_TO", describe("new.json"))
            .env_remove("ARGOCD_CLUSTER_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), Some(2), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("--trust add --yes"), "{}", stderr(&o));
    assert_eq!(worktree(&repo), before, "nothing written");
    // Once the role trusts the new issuer too, the cutover goes ahead.
    let o = rebind(
        &repo,
        &[
            "identity",
            "--describe-from",
            &describe("old.json"),
            "--describe-to",
            &describe("new.json"),
            "--trust",
            "add",
            "--yes",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    git(&repo, &["commit", "-qam", "trust the new issuer"]);
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("Identity: every role"),
        "{}",
        stdout(&o)
    );
    // The describe files reach the apply: the review has the identity
    // section; the clean-up step names the old issuer, not a placeholder.
    let out = stdout(&o);
    let review = out
        .lines()
        .find_map(|l| l.split_once("Review: ").map(|(_, r)| r.trim().to_string()))
        .unwrap_or_else(|| panic!("{out}"));
    let review = std::fs::read_to_string(review).unwrap();
    assert!(review.contains("## The new cluster's identity"), "{review}");
    assert!(
        out.contains("--oidc-retired https://oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F --yes"),
        "{out}"
    );
    assert!(!out.contains("OLD_ISSUER"), "{out}");
}

/// A rewritten file under a folder no Application feeds (applied by
/// Terraform): without APPLIED_BY the script refuses it under
/// --require-deploys (nothing written); with `APPLIED_BY=path=who` the run
/// goes on, with no edit to .rebind.yaml, and the audit and the review say
/// who applies it.
#[test]
fn cutover_takes_hand_applied_paths_from_applied_by() {
    let area = Area::new();
    let repo = area.repo();
    let repo_arg = repo.to_str().unwrap();
    std::fs::create_dir_all(repo.join("manual")).unwrap();
    std::fs::write(
        repo.join("manual/kubeconfig.yaml"),
        format!("apiVersion: v1\nkind: Config\nclusters:\n  - name: prod\n    cluster:\n      server: {OLD}\n"),
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a kubeconfig terraform applies"]);
    let before = worktree(&repo);

    let o = area.cutover(&[OLD, NEW, "prod-new", "origin", repo_arg], None);
    assert_eq!(o.status.code(), Some(2), "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--require-deploys"), "{err}");
    assert!(err.contains("manual/kubeconfig.yaml"), "{err}");
    assert_eq!(git(&repo, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(worktree(&repo), before, "nothing written");

    // A value that is not path=who is refused before anything runs.
    let o = area.cutover_env(
        &[OLD, NEW, "prod-new", "origin", repo_arg],
        &[("APPLIED_BY", "manual")],
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("APPLIED_BY"), "{}", stderr(&o));
    assert_eq!(worktree(&repo), before, "nothing written");

    let o = area.cutover_env(
        &[OLD, NEW, "prod-new", "origin", repo_arg],
        &[("APPLIED_BY", "docs=nobody,manual=terraform")],
    );
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let branch = git(&repo, &["branch", "--show-current"]).trim().to_string();
    assert!(branch.starts_with("rebind/"), "{branch}");
    assert_pushed_with_upstream(&area, &branch);
    let rewritten = std::fs::read_to_string(repo.join("manual/kubeconfig.yaml")).unwrap();
    assert!(rewritten.contains(NEW_HOST), "{rewritten}");
    assert!(
        !std::path::Path::new(&repo.join(".rebind.yaml")).exists(),
        "no config written"
    );
    let dirs = area.out_dirs();
    let outdir = dirs.last().unwrap();
    let audit = json_file(&outdir.join("audit.json"));
    let row = audit["feeders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["file"] == "manual/kubeconfig.yaml")
        .unwrap_or_else(|| panic!("{}", audit["feeders"]))
        .clone();
    assert_eq!(row["verdict"], "applied_outside_argocd", "{row}");
    assert_eq!(row["feeder_file"], "--applied-by", "{row}");
    assert_eq!(row["blocks"], false, "{row}");
    assert!(
        row["feeder"].as_str().unwrap().contains("terraform"),
        "{row}"
    );
    let review = std::fs::read_to_string(outdir.join("review.md")).unwrap();
    assert!(
        review.lines().any(|l| l.contains("manual/kubeconfig.yaml")
            && l.contains("applied outside ArgoCD by terraform")),
        "{review}"
    );
}
