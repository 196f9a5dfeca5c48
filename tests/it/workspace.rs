//! `rebind workspace`: one cutover across three local repositories (tf,
//! gitops, values), each pushing to its own bare remote through
//! `url.<bare>.insteadOf` a GitHub URL, with a stub `gh` first on PATH
//! that records every call and answers like the real client (one pull
//! request number per create, `pr view` says MERGED once the test merged
//! it). The preflight over all before any write, the order, the waiting
//! exit code, the ledger's resume, the shared table in every body, and the
//! rollback's reverse order.
#![cfg(unix)]

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

const FORWARD: &str = "rebind/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a";
const BACK: &str = "rebind/5f2c8a1e9b3d4c7a8e6f1b2d3c4a5e6f";
const NAMES: [&str; 3] = ["tf", "gitops", "values"];

/// The stub client: `$4`/`$5` is `--repo`'s value, `github.com/acme/NAME`.
const STUB: &str = r#"#!/bin/sh
log=__LOG__
n=$(($(cat "$log/count" 2>/dev/null || echo 0) + 1))
echo "$n" > "$log/count"
printf '%s\0' "${0##*/}" "$@" > "$log/$n.args"
cat > "$log/$n.stdin"
case "$1 $2" in
"pr list") name=${4##*/}; cat "$log/list-$name.json" 2>/dev/null || echo '[]' ;;
"pr create")
    name=${4##*/}
    pr=$(($(cat "$log/prs" 2>/dev/null || echo 0) + 1))
    echo "$pr" > "$log/prs"
    echo "https://github.com/acme/$name/pull/$pr"
    echo "[{\"number\":$pr,\"url\":\"https://github.com/acme/$name/pull/$pr\",\"isCrossRepository\":false}]" > "$log/list-$name.json"
    ;;
"pr edit") name=${5##*/}; echo "https://github.com/acme/$name/pull/$3" ;;
"pr view")
    name=${5##*/}
    if [ -e "$log/merged-$name" ]; then echo '{"state":"MERGED"}'; else echo '{"state":"OPEN"}'; fi
    ;;
*) echo "unknown command: $*" >&2; exit 1 ;;
esac
"#;

struct Team {
    root: tempfile::TempDir,
    path: String,
}

fn app(server: &str) -> String {
    format!("kind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {server}\n  project: default\n")
}

impl Team {
    /// Three repositories on `main`, each with one manifest on OLD and a
    /// bare remote, the stub `gh`, and the workspace file with `change`
    /// and the `after:` lines given per repository.
    fn new(change: &str, after: [&str; 3]) -> Team {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for name in NAMES {
            let d = r.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("app.yaml"), app(OLD)).unwrap();
            git_init_commit(&d);
            let bare = r.join("remotes").join(format!("{name}.git"));
            std::fs::create_dir_all(&bare).unwrap();
            git(&bare, &["init", "-q", "--bare"]);
            let url = format!("https://github.com/acme/{name}.git");
            git(
                &d,
                &["config", &format!("url.{}.insteadOf", bare.display()), &url],
            );
            git(&d, &["remote", "add", "origin", &url]);
            git(&d, &["push", "-q", "origin", "main"]);
            git(&d, &["remote", "set-head", "origin", "main"]);
        }
        let log = r.join("log");
        let bin = r.join("bin");
        let tools = r.join("tools");
        for d in [&log, &bin, &tools] {
            std::fs::create_dir_all(d).unwrap();
        }
        script(
            &bin.join("gh"),
            &STUB.replace("__LOG__", &log.display().to_string()),
        );
        for t in ["git", "cat", "sh"] {
            std::os::unix::fs::symlink(which(t), tools.join(t)).unwrap();
        }
        let mut ws = format!("change:\n  from: {OLD}\n  to: {NEW}\n{change}repos:\n");
        for (name, after) in NAMES.iter().zip(after) {
            ws.push_str(&format!(
                "  - name: {name}\n    path: {name}\n    base: main\n    role: the {name} repository\n{after}"
            ));
        }
        std::fs::write(r.join("rebind-workspace.yaml"), ws).unwrap();
        let path = format!("{}:{}", bin.display(), tools.display());
        Team { root, path }
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn bare(&self, name: &str) -> PathBuf {
        self.root.path().join("remotes").join(format!("{name}.git"))
    }

    fn workspace(&self, args: &[&str]) -> Output {
        let mut all = vec!["workspace"];
        all.extend_from_slice(args);
        crate::common::command()
            .args(&all)
            .current_dir(self.root.path())
            .env("NO_COLOR", "1")
            .env("PATH", &self.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // The clone of a `url:` repository has no identity of its own.
            .env("GIT_AUTHOR_NAME", "Rebind Test")
            .env("GIT_AUTHOR_EMAIL", "test@rebind.invalid")
            .env("GIT_COMMITTER_NAME", "Rebind Test")
            .env("GIT_COMMITTER_EMAIL", "test@rebind.invalid")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `apply --yes --format json`: the exit code and the report.
    fn apply(&self, action: &str) -> (i32, serde_json::Value, String) {
        let out = self.workspace(&[action, "--yes", "--format", "json"]);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (out.status.code().unwrap(), v, stderr(&out))
    }

    /// Every stub call: its argv and standard input.
    fn calls(&self) -> Vec<(Vec<String>, String)> {
        stub_calls(&self.root.path().join("log"))
    }

    /// The repositories whose pull request was created, in call order.
    fn created(&self) -> Vec<String> {
        self.calls()
            .iter()
            .filter(|(a, _)| a[1] == "pr" && a[2] == "create")
            .map(|(a, _)| a[4].rsplit('/').next().unwrap().to_string())
            .collect()
    }

    /// The last body each repository's pull request was given.
    fn body(&self, name: &str) -> String {
        let repo = format!("github.com/acme/{name}");
        self.calls()
            .into_iter()
            .rev()
            .find(|(a, _)| a[2] == "edit" && a.contains(&repo))
            .map(|(_, stdin)| stdin)
            .unwrap_or_default()
    }

    /// The host merged `name`'s pull request (the client says MERGED, the
    /// remote's main holds the branch).
    fn merge(&self, name: &str, branch: &str) {
        std::fs::write(
            self.root.path().join("log").join(format!("merged-{name}")),
            "",
        )
        .unwrap();
        git(
            &self.bare(name),
            &[
                "update-ref",
                "refs/heads/main",
                &format!("refs/heads/{branch}"),
            ],
        );
    }

    /// The merge in the local repository (no remote): main fast-forwards
    /// to the branch, which is checked out.
    fn merge_locally(&self, name: &str, branch: &str) {
        let d = self.dir(name);
        git(&d, &["switch", "-q", "main"]);
        git(&d, &["merge", "-q", "--ff-only", branch]);
    }

    fn server(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir(name).join("app.yaml")).unwrap()
    }
}

/// The table row of `name` in a body: `| place | name... | ... | state |`.
fn table_row(body: &str, name: &str) -> String {
    body.lines()
        .find(|l| {
            l.starts_with("| ")
                && (l.contains(&format!("| {name} |")) || l.contains(&format!("**{name}**")))
        })
        .unwrap_or_else(|| panic!("no row {name} in\n{body}"))
        .to_string()
}

fn states(v: &serde_json::Value) -> Vec<String> {
    v["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                r["name"].as_str().unwrap(),
                r["state"].as_str().unwrap()
            )
        })
        .collect()
}

const PUSH_PR: &str = "  push: origin\n  pr: true\n";
const CHAIN: [&str; 3] = ["", "    after: [tf]\n", "    after: [gitops]\n"];

#[test]
fn a_clean_run_goes_in_order_waits_for_each_merge_and_keeps_the_table() {
    let t = Team::new(PUSH_PR, CHAIN);
    // The dry run: every diff and the order, nothing written.
    let out = t.workspace(&["apply", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("== 1. tf") && text.contains("== 3. values"),
        "{text}"
    );
    assert!(text.contains(&format!("+    server: {NEW}")), "{text}");
    assert!(t.calls().is_empty() && !t.root.path().join("rebind-workspace.ledger.json").exists());

    // Run 1: tf's pull request; gitops waits for tf's merge (exit 1).
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 1, "{err}");
    assert_eq!(v["status"], "waiting");
    assert_eq!(v["order"], serde_json::json!(["tf", "gitops", "values"]));
    assert_eq!(
        states(&v),
        ["tf:pr_open", "gitops:waiting", "values:pending"]
    );
    assert_eq!(t.created(), ["tf"]);
    assert!(t.server("gitops").contains(OLD));
    let row = table_row(&t.body("tf"), "tf");
    assert_eq!(row, "| 1 | **tf** (this one) | the tf repository | - | [#1](https://github.com/acme/tf/pull/1) | open |");
    assert!(table_row(&t.body("tf"), "gitops").ends_with("| tf | - | waiting: waits for tf to be merged into its base; merge it, then run this again |"));
    assert!(table_row(&t.body("tf"), "values").ends_with("| gitops | - | not started |"));
    assert!(
        t.body("tf").contains("# rebind: "),
        "the review follows the table"
    );

    // Run 2 after tf's merge: gitops; values waits for it.
    t.merge("tf", FORWARD);
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        states(&v),
        ["tf:merged", "gitops:pr_open", "values:waiting"]
    );
    assert_eq!(t.created(), ["tf", "gitops"]);
    for body in [t.body("tf"), t.body("gitops")] {
        assert!(
            table_row(&body, "tf")
                .ends_with("| [#1](https://github.com/acme/tf/pull/1) | merged |"),
            "{body}"
        );
        assert!(
            table_row(&body, "gitops")
                .ends_with("| tf | [#2](https://github.com/acme/gitops/pull/2) | open |"),
            "{body}"
        );
        assert!(
            table_row(&body, "values").contains("| waiting: waits for gitops"),
            "{body}"
        );
    }

    // Run 3 after gitops's merge: values; all done (exit 0).
    t.merge("gitops", FORWARD);
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["status"], "done");
    assert_eq!(states(&v), ["tf:merged", "gitops:merged", "values:pr_open"]);
    assert_eq!(t.created(), ["tf", "gitops", "values"]);
    for name in NAMES {
        let body = t.body(name);
        assert!(
            table_row(&body, "values")
                .ends_with("| gitops | [#3](https://github.com/acme/values/pull/3) | open |"),
            "{body}"
        );
        assert!(
            table_row(&body, name).contains(&format!("**{name}** (this one)")),
            "{body}"
        );
        let pushed = git(&t.bare(name), &["rev-parse", FORWARD]);
        assert_eq!(pushed, git(&t.dir(name), &["rev-parse", FORWARD]));
    }
    // Status prints the same table from the ledger, asking nobody.
    let before = t.calls().len();
    let out = t.workspace(&["status"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "3. values (the values repository) [after gitops]: opened (its state now not asked)"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(t.calls().len(), before);
}

#[test]
fn a_preflight_failure_in_the_third_repository_leaves_all_three_untouched() {
    let t = Team::new(PUSH_PR, ["", "", ""]);
    std::fs::write(t.dir("values").join("app.yaml"), app(STAGE)).unwrap();
    let heads: Vec<String> = NAMES
        .iter()
        .map(|n| git(&t.dir(n), &["rev-parse", "HEAD"]))
        .collect();
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("repository values:") && err.contains("not clean (app.yaml)"),
        "{err}"
    );
    assert!(
        err.contains("nothing was written in any repository"),
        "{err}"
    );
    assert_eq!(v["status"], "failed_before_write");
    for (name, head) in NAMES.iter().zip(heads) {
        let d = t.dir(name);
        assert_eq!(git(&d, &["rev-parse", "HEAD"]), head, "{name}");
        assert_eq!(
            git(&d, &["branch", "--show-current"]).trim(),
            "main",
            "{name}"
        );
        assert!(git(&d, &["branch", "--list", FORWARD]).is_empty(), "{name}");
        assert!(
            git(&t.bare(name), &["branch", "--list", FORWARD]).is_empty(),
            "{name}"
        );
    }
    assert!(t.server("tf").contains(OLD) && t.server("gitops").contains(OLD));
    assert!(t.created().is_empty());
    assert!(!t.root.path().join("rebind-workspace.ledger.json").exists());
    // A workspace file inside one of the repositories: its ledger would
    // be written there.
    let inside = t.dir("tf").join("w.yaml");
    std::fs::write(
        &inside,
        format!(
            "change:\n  from: {OLD}\n  to: {NEW}\nrepos:\n  - {{name: tf, path: ., base: main}}\n"
        ),
    )
    .unwrap();
    let out = t.workspace(&["plan", inside.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("repository tf: the workspace file"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&inside).unwrap();
    // A remote that does not answer is the preflight's too.
    std::fs::write(t.dir("values").join("app.yaml"), app(OLD)).unwrap();
    std::fs::rename(t.bare("gitops"), t.root.path().join("gone.git")).unwrap();
    let (code, _, err) = t.apply("apply");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("repository gitops: --push origin: the remote does not answer"),
        "{err}"
    );
    assert!(git(&t.dir("tf"), &["branch", "--list", FORWARD]).is_empty());
}

#[test]
fn a_push_failure_in_the_second_then_a_rerun_finishes_without_repeating_the_first() {
    let t = Team::new(PUSH_PR, ["", "", ""]);
    let marker = t.root.path().join("reject");
    std::fs::write(&marker, "").unwrap();
    script(
        &t.bare("gitops").join("hooks").join("pre-receive"),
        &format!(
            "#!/bin/sh\nif [ -e '{}' ]; then echo rejected by policy >&2; exit 1; fi\n",
            marker.display()
        ),
    );
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("repository gitops"), "{err}");
    assert!(err.contains("\ndone: tf\nleft:\n  gitops: "), "{err}");
    assert!(err.contains("\n  values: pending\n"), "{err}");
    assert_eq!(v["status"], "failed_after_write");
    assert_eq!(
        states(&v)[..2],
        ["tf:pr_open".to_string(), "gitops:failed".to_string()]
    );
    assert_eq!(states(&v)[2], "values:pending");
    let ledger: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(t.root.path().join("rebind-workspace.ledger.json")).unwrap(),
    )
    .unwrap();
    let section = ledger["changes"][format!("{OLD} -> {NEW}")].clone();
    assert!(section["gitops"]["commit"].is_string(), "{ledger}");
    assert!(
        section["gitops"]["pushed_to"].is_null(),
        "never claims the failed push: {ledger}"
    );
    assert!(section["gitops"]["pull_request"].is_null(), "{ledger}");
    assert!(section.get("values").is_none(), "{ledger}");
    let tf_commit = git(&t.dir("tf"), &["rev-parse", FORWARD]);
    let calls_tf = |t: &Team| {
        t.calls()
            .iter()
            .filter(|(a, _)| {
                a.contains(&"github.com/acme/tf".to_string()) && a[2] != "edit" && a[2] != "view"
            })
            .count()
    };
    let tf_before = calls_tf(&t);

    std::fs::remove_file(&marker).unwrap();
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        states(&v),
        ["tf:pr_open", "gitops:pr_open", "values:pr_open"]
    );
    assert_eq!(
        t.created(),
        ["tf", "gitops", "values"],
        "tf's pull request is not opened twice"
    );
    assert_eq!(
        calls_tf(&t),
        tf_before,
        "nothing but the body and state of tf is asked again"
    );
    assert_eq!(git(&t.dir("tf"), &["rev-parse", FORWARD]), tf_commit);
    assert_eq!(
        git(&t.dir("tf"), &["rev-list", "--count", FORWARD]).trim(),
        "2"
    );
    assert_eq!(
        git(&t.bare("gitops"), &["rev-parse", FORWARD]),
        git(&t.dir("gitops"), &["rev-parse", FORWARD])
    );
    for name in NAMES {
        let body = t.body(name);
        for (i, other) in NAMES.iter().enumerate() {
            let row = table_row(&body, other);
            assert!(
                row.ends_with(&format!(
                    "[#{}](https://github.com/acme/{other}/pull/{}) | open |",
                    i + 1,
                    i + 1
                )),
                "{row}"
            );
        }
    }
}

#[test]
fn rollback_runs_the_plan_backwards_in_the_reverse_order() {
    let t = Team::new("", CHAIN);
    for name in NAMES {
        let (code, _, err) = t.apply("apply");
        assert!(code == 0 || code == 1, "{err}");
        t.merge_locally(name, FORWARD);
        assert!(t.server(name).contains(NEW), "{name}");
    }
    let (code, v, err) = t.apply("apply");
    assert_eq!((code, v["status"].as_str()), (0, Some("done")), "{err}");

    let (code, v, err) = t.apply("rollback");
    assert_eq!(code, 1, "{err}");
    assert_eq!(v["order"], serde_json::json!(["values", "gitops", "tf"]));
    assert_eq!(v["from"], NEW);
    assert_eq!(v["to"], OLD);
    assert_eq!(
        states(&v),
        ["values:committed", "gitops:waiting", "tf:pending"]
    );
    assert!(git(&t.dir("values"), &["show", &format!("{BACK}:app.yaml")]).contains(OLD));
    assert!(git(&t.dir("gitops"), &["branch", "--list", BACK]).is_empty());
    t.merge_locally("values", BACK);
    let (code, v, err) = t.apply("rollback");
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        states(&v),
        ["values:merged", "gitops:committed", "tf:waiting"]
    );
    t.merge_locally("gitops", BACK);
    let (code, v, err) = t.apply("rollback");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        states(&v),
        ["values:merged", "gitops:merged", "tf:committed"]
    );
    t.merge_locally("tf", BACK);
    for name in NAMES {
        assert!(t.server(name).contains(OLD), "{name}");
    }
}

#[test]
fn the_workspace_file_is_strict_and_a_cycle_is_named() {
    let t = Team::new(
        "",
        [
            "    after: [values]\n",
            "    after: [tf]\n",
            "    after: [gitops]\n",
        ],
    );
    let out = t.workspace(&["plan"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`after:` has a cycle: tf -> values -> gitops -> tf"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        t.root.path().join("w.yaml"),
        format!("change:\n  from: {OLD}\n  to: {NEW}\n  colour: red\nrepos: []\n"),
    )
    .unwrap();
    let out = t.workspace(&["plan", "w.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("w.yaml:4:3: unknown key \"colour\" in change"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_identity_coverage_is_checked_across_every_repository() {
    // The trust lives in tf, the endpoints in all three: the preflight
    // reads every repository's roles against the two clusters' issuers.
    let identity = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/identity");
    let describe = |f: &str| identity.join("describe").join(f).display().to_string();
    let change = format!(
        "  describe_from: {}\n  describe_to: {}\n",
        describe("old.json"),
        describe("new.json")
    );
    let t = Team::new(&change, ["", "", ""]);
    let tf = t.dir("tf");
    std::fs::create_dir_all(tf.join("iam")).unwrap();
    std::fs::copy(
        identity.join("iam/karpenter-trust.json"),
        tf.join("iam/trust.json"),
    )
    .unwrap();
    git(&tf, &["add", "-A"]);
    git(&tf, &["commit", "-qm", "irsa"]);
    let out = t.workspace(&["plan"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("repository tf: tf/iam/trust.json (statement KarpenterIRSA)")
            && err.contains("trusts only the old issuer"),
        "{err}"
    );
    // Once tf's role trusts the new issuer too, the plan is clean.
    let o = rebind(
        &tf,
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
    git(&tf, &["commit", "-qam", "trust the new issuer"]);
    let out = t.workspace(&["plan", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "pending");
    assert_eq!(v["repos"][0]["plan"]["change_count"], 1);
    assert_eq!(
        v["repos"][2]["plan"]["files"],
        serde_json::json!([{"path": "values/app.yaml", "change_count": 1}])
    );
}

#[test]
fn a_ledger_claim_the_repository_does_not_show_is_refused() {
    let t = Team::new("", ["", "", ""]);
    let out = t.workspace(&["status"]);
    assert_eq!(out.status.code(), Some(1), "nothing done yet");
    assert!(
        stdout(&out).contains("1. tf (the tf repository): not started"),
        "{}",
        stdout(&out)
    );
    // Without --yes and without a terminal to ask on: nothing written.
    let out = t.workspace(&["apply"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("refusing to write without confirmation"),
        "{}",
        stderr(&out)
    );
    assert!(git(&t.dir("tf"), &["branch", "--list", FORWARD]).is_empty());
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        states(&v),
        ["tf:committed", "gitops:committed", "values:committed"]
    );
    // Planned again once done: nothing left, exit 0.
    let out = t.workspace(&["plan"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A second run while one holds the ledger's lock is refused.
    let lock = t.root.path().join("rebind-workspace.ledger.json.lock");
    std::fs::write(&lock, "").unwrap();
    let (code, _, err) = t.apply("apply");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("rebind-workspace.ledger.json.lock: exists"),
        "{err}"
    );
    std::fs::remove_file(&lock).unwrap();
    // Someone rewrites gitops's cutover branch: the ledger's commit is
    // no longer what the repository shows.
    git(
        &t.dir("gitops"),
        &["commit", "-q", "--amend", "-m", "rebind: edited by hand"],
    );
    let (code, _, err) = t.apply("apply");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("repository gitops: the ledger records commit"),
        "{err}"
    );
    assert!(
        err.contains("rebind will not claim a step it cannot see"),
        "{err}"
    );
}

#[test]
fn a_repository_given_by_url_is_cloned_into_the_cache_and_pushed() {
    let t = Team::new("  push: origin\n", ["", "", ""]);
    let ws = t.root.path().join("rebind-workspace.yaml");
    let text = std::fs::read_to_string(&ws).unwrap().replace(
        "    path: values\n",
        &format!("    url: {}\n", t.bare("values").display()),
    );
    std::fs::write(&ws, text).unwrap();
    let (code, v, err) = t.apply("apply");
    assert_eq!(code, 0, "{err}");
    assert_eq!(states(&v), ["tf:pushed", "gitops:pushed", "values:pushed"]);
    assert_eq!(v["repos"][2]["path"], "./.rebind-workspace/values");
    let clone = t.root.path().join(".rebind-workspace").join("values");
    assert!(git(&clone, &["show", &format!("{FORWARD}:app.yaml")]).contains(NEW));
    assert!(git(&t.bare("values"), &["show", &format!("{FORWARD}:app.yaml")]).contains(NEW));
    // The local clone of values was never the one written.
    assert!(t.server("values").contains(OLD));
}
