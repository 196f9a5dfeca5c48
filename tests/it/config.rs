//! `.rebind.yaml`, `init`, `apply --cluster` with the expect guard, `check`
//! (text, JSON, SARIF) and the pre-commit hook.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const CONFIG: &str = ".rebind.yaml";

fn expected_init() -> String {
    format!(
        "# rebind: the endpoint each workload cluster has now (endpoint), the ones it had\n# before (retired: `rebind check` fails on them), and the counts a rebind must find.\nclusters:\n  finance-prod-blue:\n    endpoint: {OLD}\n    retired: []\n    expect: {{files: 8, occurrences: 19}}\n  finance-stage-blue:\n    endpoint: {STAGE}\n    retired: []\n    expect: {{files: 3, occurrences: 3}}\ninclude: [\"**/*.yaml\", \"**/*.yml\", \"**/*.json\"]\nexclude: []\n"
    )
}

/// `apply --cluster finance-prod-blue --to NEW --yes --no-commit` in `d`.
fn apply_cluster(d: &Path) -> std::process::Output {
    let args = [
        "apply",
        "--cluster",
        "finance-prod-blue",
        "--to",
        NEW,
        "--yes",
        "--no-commit",
    ];
    rebind(d, &args)
}

fn with_init() -> tempfile::TempDir {
    let dir = temp_fixture();
    let out = rebind(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

#[test]
fn init_names_clusters_from_the_manifests_and_refuses_to_overwrite() {
    let dir = with_init();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(CONFIG)).unwrap(),
        expected_init()
    );
    let out = rebind(dir.path(), &["init"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("already exists"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(CONFIG)).unwrap(),
        expected_init()
    );
}

#[test]
fn config_errors_name_the_line() {
    let dir = temp_fixture();
    let cases = [
        (
            format!("clusters:\n  prod:\n    endpoint: {OLD}\n    retierd: []\n"),
            ".rebind.yaml:4: unknown key \"retierd\"",
        ),
        (
            "clusters:\n  prod:\n    expect: {files: 1, occurrences: 1}\n".to_string(),
            ".rebind.yaml:2: cluster prod has no endpoint",
        ),
        (
            "clusters:\n  prod:\n    endpoint: http://10.0.0.1:6443\n".to_string(),
            ".rebind.yaml:3: cluster prod: endpoint",
        ),
        (
            format!(
                "clusters:\n  prod:\n    endpoint: {OLD}\n  copy:\n    endpoint: {}\n",
                OLD.to_lowercase()
            ),
            ".rebind.yaml:5: endpoint",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(dir.path().join(CONFIG), &text).unwrap();
        for args in [&["check"][..], &["diff", "--cluster", "prod", "--to", NEW]] {
            let out = rebind(dir.path(), args);
            assert_eq!(out.status.code(), Some(2), "{args:?} {text}");
            assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        }
    }
}

#[test]
fn apply_cluster_updates_config_and_manifests_in_one_commit() {
    let dir = with_init();
    let d = dir.path();
    git_init_commit(d);
    let before = tree(d);
    let out = crate::common::command()
        .args([
            "apply",
            "--cluster",
            "finance-prod-blue",
            "--to",
            NEW,
            "--yes",
        ])
        .current_dir(d)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@rebind.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@rebind.invalid")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = tree(d);
    let want = expected_init().replacen(
        &format!("    endpoint: {OLD}\n    retired: []\n"),
        &format!("    endpoint: {NEW}\n    retired: [{OLD}]\n"),
        1,
    );
    assert_eq!(String::from_utf8(after[CONFIG].clone()).unwrap(), want);
    let swaps: usize = before
        .iter()
        .filter(|(p, _)| p.as_str() != CONFIG && !p.starts_with(".git/"))
        .map(|(p, old)| endpoint_swaps(old, &after[p]).unwrap_or_else(|e| panic!("{p}: {e}")))
        .sum();
    assert_eq!(swaps, 19);
    // GIT_AUTHOR_*/GIT_COMMITTER_* win over the repository's user.name.
    assert_eq!(git(d, &["log", "-1", "--format=%an %cn"]).trim(), "T T");
    let committed = git(d, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(committed.lines().any(|l| l == CONFIG), "{committed}");
    assert_eq!(committed.lines().count(), 9);
    // The same command again has nothing to do; check is clean but warns on the mentions.
    let again = rebind(
        d,
        &[
            "apply",
            "--cluster",
            "finance-prod-blue",
            "--to",
            NEW,
            "--yes",
        ],
    );
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout(&again).contains("Nothing to change."));
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Findings, then the count and the fixes (which warnings have none).
    assert!(
        stdout(&out)
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with("check: "))
            .all(|l| l.contains(": warning: retired endpoint")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn expect_guard_refuses_with_nothing_written() {
    // A file added since the counts were taken.
    let dir = with_init();
    let d = dir.path();
    std::fs::write(
        d.join("apps/extra.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let before = tree(d);
    let out = apply_cluster(d);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("expected 19 occurrences in 8 files"), "{err}");
    assert!(err.contains("found 20 in 9"), "{err}");
    assert!(err.contains("apps/extra.yaml"), "{err}");
    assert_eq!(tree(d), before);
    // A file removed.
    std::fs::remove_file(d.join("apps/extra.yaml")).unwrap();
    std::fs::remove_file(d.join("apps/keda.yaml")).unwrap();
    let before = tree(d);
    let out = apply_cluster(d);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("found 17 in 7"), "{}", stderr(&out));
    assert_eq!(tree(d), before);
    // The same guard from the command line, without a config.
    let dir = temp_fixture();
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "--expect-files",
            "8",
            "--expect-occurrences",
            "18",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected 18 occurrences in 8 files"),
        "{}",
        stderr(&out)
    );
    let out = rebind(
        dir.path(),
        &[
            "diff",
            "--from",
            OLD,
            "--to",
            NEW,
            "--expect-files",
            "8",
            "--expect-occurrences",
            "19",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
}

/// A fixture repo whose config says prod moved from OLD to NEW, manifests rebound.
fn after_cutover() -> tempfile::TempDir {
    let dir = with_init();
    let out = apply_cluster(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

#[test]
fn check_clean_dirty_and_file_lists() {
    let dir = after_cutover();
    let d = dir.path();
    // Only comment/text mentions are left: warnings, exit 0.
    let out = rebind(d, &["check", "apps/keda.yaml", "stage/keda.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "", "silent when clean");
    std::fs::write(
        d.join("apps/stale.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: '{OLD}'\n"),
    )
    .unwrap();
    let want = format!(
        "apps/stale.yaml:4:14: retired endpoint {OLD} of cluster finance-prod-blue; current is {NEW}\n"
    );
    let out = rebind(d, &["check", "apps/stale.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    // The finding, then the count and the command that fixes it, as it
    // runs on this input: no git repository here (--no-commit), no
    // question (--yes), the file checked.
    assert_eq!(
        stdout(&out),
        format!("{want}\ncheck: 1 error, 0 warnings.\nTo fix:\n  rebind apply --from {OLD} --to {NEW} --no-commit --yes apps/stale.yaml\n")
    );
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains(&want), "{}", stdout(&out));
    // Only the files named are checked.
    let out = rebind(d, &["check", "apps/keda.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    // An endpoint no cluster declares, at a cluster position.
    std::fs::remove_file(d.join("apps/stale.yaml")).unwrap();
    std::fs::write(
        d.join("apps/rogue.yaml"),
        "kind: Application\nspec:\n  destination:\n    server: https://10.9.9.9:6443\n",
    )
    .unwrap();
    let out = rebind(d, &["check", "apps/rogue.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("apps/rogue.yaml:4:13: endpoint https://10.9.9.9:6443 at spec.destination.server is not declared"), "{}", stdout(&out));
    let out = rebind(d, &["check", "--allow-unknown", "apps/rogue.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains(": warning: endpoint https://10.9.9.9:6443"));
    // In-cluster URLs are fine.
    let out = rebind(d, &["check", "in-cluster/datadog.yaml"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
}

#[test]
fn check_json_and_sarif() {
    let dir = after_cutover();
    let d = dir.path();
    std::fs::write(
        d.join("apps/stale.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let out = rebind(d, &["check", "--format", "json", "apps/stale.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["findings"][0]["rule"], "retired-endpoint");
    assert_eq!(v["findings"][0]["severity"], "error");
    assert_eq!(
        (
            v["findings"][0]["line"].as_u64(),
            v["findings"][0]["column"].as_u64()
        ),
        (Some(4), Some(13))
    );

    let out = rebind(d, &["check", "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(1));
    let s: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // SARIF 2.1.0 required properties: version, runs, tool.driver.name, result message.
    assert_eq!(s["version"], "2.1.0");
    let run = &s["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "rebind");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        3,
        "the stale value plus the README and comment mentions"
    );
    for r in results {
        assert!(rules.contains(&r["ruleId"].as_str().unwrap()));
        assert!(r["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(["error", "warning"].contains(&r["level"].as_str().unwrap()));
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(loc["artifactLocation"]["uri"].as_str().is_some());
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
    let stale = results
        .iter()
        .find(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "apps/stale.yaml"
        })
        .unwrap();
    assert_eq!(stale["level"], "error");
}

/// Runs the real pre-commit framework with this repository as the hook repo:
/// the `language: rust` hook, built from source. Slow (pre-commit builds
/// rebind with `cargo install`, a release build), so `.ci/run` does not run
/// it; the release checklist does (docs/release.md).
#[test]
#[ignore = "needs pre-commit and a release build from source; run by the release checklist"]
fn pre_commit_hook_blocks_a_retired_endpoint() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rev = git(project, &["rev-parse", "HEAD"]).trim().to_string();
    pre_commit_blocks_a_retired_endpoint(project, &rev, &[]);
}

/// The toolchain-free hook: `pre-commit-mirror/` published as a hook
/// repository (`language: python`, depends on the kube-rebind wheel), run by
/// the real pre-commit framework with no cargo, rustc or rustup on PATH and
/// pip offline: it finds the wheel in the folders of `REBIND_WHEEL_LINKS`
/// (space-separated; the built wheel and a setuptools wheel for the mirror's
/// empty package). `.ci/wheel-check` runs it; prints the hook's install time.
#[test]
#[ignore = "needs pre-commit and the built wheel; run by .ci/wheel-check"]
fn pre_commit_python_hook_blocks_a_retired_endpoint() {
    let links = std::env::var("REBIND_WHEEL_LINKS")
        .expect("REBIND_WHEEL_LINKS: the folders holding the kube-rebind wheel (.ci/wheel-check)");
    let version = env!("CARGO_PKG_VERSION");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("pre-commit-mirror");
    let pyproject = std::fs::read_to_string(source.join("pyproject.toml")).unwrap();
    assert!(
        pyproject.contains(&format!("\"kube-rebind=={version}\"")),
        "pre-commit-mirror/pyproject.toml must pin kube-rebind=={version}"
    );
    // The mirror as its own repository, tagged like a release of it.
    let mirror = tempfile::tempdir().unwrap();
    for name in [".pre-commit-hooks.yaml", "pyproject.toml", "README.md"] {
        std::fs::copy(source.join(name), mirror.path().join(name)).unwrap();
    }
    git_init_commit(mirror.path());
    let tag = format!("v{version}");
    git(mirror.path(), &["tag", &tag]);
    // PATH without any folder that has a Rust toolchain command in it.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).filter(|d| {
        !["cargo", "rustc", "rustup"]
            .iter()
            .any(|tool| d.join(tool).exists())
    });
    let path = std::env::join_paths(dirs).unwrap();
    let cargo = Command::new("cargo")
        .arg("--version")
        .env("PATH", &path)
        .output();
    assert!(cargo.is_err(), "cargo is still on the hook's PATH");
    let env = [
        ("PATH", path),
        ("PIP_NO_INDEX", "1".into()),
        ("PIP_FIND_LINKS", links.into()),
        // No pip configuration file may add an index or other links.
        ("PIP_CONFIG_FILE", "/dev/null".into()),
    ];
    pre_commit_blocks_a_retired_endpoint(mirror.path(), &tag, &env);
}

/// The real pre-commit framework in a GitOps repository after the cutover,
/// with the `rebind-check` hook of `hook_repo` at `rev`: a staged retired
/// endpoint fails the commit with its finding, the fixed file commits. `env`
/// is set for every command. Prints how long `pre-commit install-hooks` (the
/// hook's installation) took.
fn pre_commit_blocks_a_retired_endpoint(
    hook_repo: &Path,
    rev: &str,
    env: &[(&str, std::ffi::OsString)],
) {
    let dir = after_cutover();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        d.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: rebind-check\n",
            hook_repo.display()
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .current_dir(d)
            .env("PRE_COMMIT_HOME", home.path())
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@rebind.invalid")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@rebind.invalid")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap()
    };
    let text = |out: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert!(run(&["git", "init", "-q", "-b", "main"]).status.success());
    assert!(run(&["git", "add", "-A"]).status.success());
    assert!(run(&["git", "commit", "-q", "-m", "after cutover"])
        .status
        .success());
    let install = run(&["pre-commit", "install"]);
    assert!(install.status.success(), "{}", text(&install));
    let started = std::time::Instant::now();
    let hooks = run(&["pre-commit", "install-hooks"]);
    assert!(hooks.status.success(), "{}", text(&hooks));
    println!(
        "pre-commit install-hooks ({}): {:.1} s",
        hook_repo.display(),
        started.elapsed().as_secs_f64()
    );
    let stale = format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n");
    std::fs::write(d.join("apps/stale.yaml"), &stale).unwrap();
    assert!(run(&["git", "add", "apps/stale.yaml"]).status.success());
    let commit = run(&["git", "commit", "-m", "copy-paste from an old branch"]);
    assert!(
        !commit.status.success(),
        "the commit must fail: {}",
        text(&commit)
    );
    assert!(
        text(&commit).contains("apps/stale.yaml:4:13: retired endpoint"),
        "{}",
        text(&commit)
    );
    std::fs::write(d.join("apps/stale.yaml"), stale.replace(OLD, NEW)).unwrap();
    assert!(run(&["git", "add", "apps/stale.yaml"]).status.success());
    let commit = run(&["git", "commit", "-m", "fixed"]);
    assert!(commit.status.success(), "{}", text(&commit));
}

/// A retired endpoint in a text file that is not prose (Terraform, an
/// `.env`, a script, a `.tpl`) fails `check`: something may apply it, and
/// its comments cannot be told from its values. In prose (a README, a
/// runbook) it is a warning.
#[test]
fn check_fails_on_a_retired_endpoint_in_configuration_text_and_warns_in_prose() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join(".rebind.yaml"),
        format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n"),
    )
    .unwrap();
    let files = [
        (
            "infra/main.tf",
            format!("locals {{ api = \"{OLD}\" }}\n"),
            true,
        ),
        ("apps/cluster.env", format!("K8S_API={OLD}\n"), true),
        ("apps/app.yaml.tpl", format!("server: {OLD}\n"), true),
        (
            "docs/runbook.md",
            format!("The old API was {OLD}.\n"),
            false,
        ),
        ("README", format!("Moved from {OLD}.\n"), false),
    ];
    for (rel, text, _) in &files {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = rebind(d, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = stdout(&out);
    for (rel, _, fails) in &files {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("{rel}:")))
            .unwrap_or_else(|| panic!("{rel} not reported:\n{report}"));
        assert_eq!(!line.contains(": warning: "), *fails, "{line}");
    }
    // Each file alone, as the pre-commit hook passes them.
    for (rel, _, fails) in &files {
        let out = rebind(d, &["check", rel]);
        assert_eq!(
            out.status.code(),
            Some(if *fails { 1 } else { 0 }),
            "{rel}: {}",
            stdout(&out)
        );
    }
}
