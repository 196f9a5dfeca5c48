//! The output layer's promises through the binary: one finding model in
//! every format (`scan` and `diff` speak SARIF and GitHub annotations too),
//! SARIF URIs that are real URI references, a JSON error report for every
//! refusal under `--format json`, `--help` listing only the formats a
//! command writes, the audit read back through the type that writes it, and
//! nothing printed outside the output layer (`-q` silences the push too).
//!
//! With `REBIND_SARIF_DIR` set, every SARIF log these tests produce is also
//! written there, for `.ci/run` to validate against the SARIF 2.1.0 schema.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(o)))
}

/// Parses a SARIF log and keeps a copy for the schema validation in CI.
fn sarif(o: &std::process::Output, name: &str) -> Value {
    let v = json(o);
    if let Some(dir) = std::env::var_os("REBIND_SARIF_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.sarif")), &o.stdout).unwrap();
    }
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for r in run["results"].as_array().unwrap() {
        let id = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index], id, "ruleIndex points at the result's rule");
        assert!(r["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
        assert!(region["startColumn"].as_u64().unwrap() >= 1);
    }
    v
}

fn results(v: &Value) -> &Vec<Value> {
    v["runs"][0]["results"].as_array().unwrap()
}

fn count_where(v: &Value, key: &str, want: &str) -> usize {
    results(v).iter().filter(|r| r[key] == want).count()
}

#[test]
fn diff_speaks_sarif_and_github_for_the_lines_a_cutover_touches() {
    let dir = temp_fixture();
    let d = dir.path();
    let audit = json(&rebind(d, &["diff", "--from", OLD, "--to", NEW, "--json"]));
    let changes = audit["change_count"].as_u64().unwrap() as usize;
    let mentions = audit["mentions"].as_array().unwrap().len();
    assert!(changes > 0 && mentions > 0);

    let o = rebind(
        d,
        &["diff", "--from", OLD, "--to", NEW, "--format", "sarif"],
    );
    assert_eq!(o.status.code(), Some(1), "changes pending: {}", stderr(&o));
    let v = sarif(&o, "diff");
    assert_eq!(count_where(&v, "ruleId", "pending-change"), changes);
    assert_eq!(count_where(&v, "level", "error"), changes);
    assert_eq!(count_where(&v, "ruleId", "mention"), mentions);
    assert_eq!(results(&v).len(), changes + mentions);
    // Each change is where the JSON audit says it is.
    let first = &audit["files"][0]["changes"][0];
    let loc = &results(&v)[0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], first["path"]);
    assert_eq!(loc["region"]["startLine"], first["line"]);
    assert_eq!(loc["region"]["startColumn"], first["column"]);

    let o = rebind(
        d,
        &["diff", "--from", OLD, "--to", NEW, "--format", "github"],
    );
    assert_eq!(o.status.code(), Some(1));
    let gh = stdout(&o);
    assert_eq!(
        gh.lines()
            .filter(|l| l.starts_with("::error file="))
            .count(),
        changes
    );
    assert_eq!(
        gh.lines()
            .filter(|l| l.starts_with("::warning file="))
            .count(),
        mentions
    );
    assert_eq!(gh.lines().count(), changes + mentions, "{gh}");
}

#[test]
fn scan_speaks_sarif_and_github_one_result_per_occurrence() {
    let dir = temp_fixture();
    let d = dir.path();
    let inv = json(&rebind(d, &["scan", "--json"]));
    let n = inv["occurrence_count"].as_u64().unwrap() as usize;
    let values = inv["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "value")
        .count();
    assert!(n > values && values > 0);

    let o = rebind(d, &["scan", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = sarif(&o, "scan");
    assert_eq!(results(&v).len(), n);
    assert_eq!(count_where(&v, "level", "note"), n);
    assert_eq!(count_where(&v, "ruleId", "endpoint"), values);
    assert_eq!(count_where(&v, "ruleId", "endpoint-mention"), n - values);

    let o = rebind(d, &["scan", "--format", "github"]);
    assert_eq!(o.status.code(), Some(0));
    let gh = stdout(&o);
    assert_eq!(gh.lines().count(), n, "{gh}");
    assert!(gh.lines().all(|l| l.starts_with("::notice file=")), "{gh}");
}

/// A scan of a file that does not parse: an error result in SARIF and an
/// `::error` annotation, and exit 2 as in every format.
#[test]
fn scan_reports_an_unparsable_file_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("broken.yaml"),
        format!("server: {OLD}\nbad: [unclosed\n"),
    )
    .unwrap();
    let o = rebind(d, &["scan", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(2));
    let v = sarif(&o, "scan-unparsed");
    assert_eq!(count_where(&v, "ruleId", "unparsed-file"), 1, "{v}");
    let o = rebind(d, &["scan", "--format", "github"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("::error file=broken.yaml,line="),
        "{}",
        stdout(&o)
    );
}

/// SARIF `artifactLocation.uri` is an RFC 3986 URI reference relative to
/// `%SRCROOT%`: a space, `#`, `%` or a non-ASCII name is percent-encoded.
#[test]
fn sarif_uris_are_percent_encoded_relative_to_srcroot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("my apps")).unwrap();
    let app = format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n");
    std::fs::write(d.join("my apps/#1 100%.yaml"), &app).unwrap();
    std::fs::write(d.join("my apps/클러스터.yaml"), &app).unwrap();
    for (args, name) in [
        (vec!["scan", "--format", "sarif"], "uri-scan"),
        (
            vec!["diff", "--from", OLD, "--to", NEW, "--format", "sarif"],
            "uri-diff",
        ),
    ] {
        let v = sarif(&rebind(d, &args), name);
        let mut uris: Vec<&str> = results(&v)
            .iter()
            .map(|r| {
                let a = &r["locations"][0]["physicalLocation"]["artifactLocation"];
                assert_eq!(a["uriBaseId"], "%SRCROOT%");
                a["uri"].as_str().unwrap()
            })
            .collect();
        uris.sort_unstable();
        assert_eq!(
            uris,
            [
                "my%20apps/%231%20100%25.yaml",
                "my%20apps/%ED%81%B4%EB%9F%AC%EC%8A%A4%ED%84%B0.yaml"
            ],
            "{args:?}"
        );
        let root = v["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            root.starts_with("file:///") && root.ends_with('/'),
            "{root}"
        );
    }
}

/// `check --format sarif` with findings, kept for the schema validation.
#[test]
fn check_sarif_has_the_same_uris() {
    let dir = temp_fixture();
    let d = dir.path();
    let init = json(&rebind(d, &["init", "--json"]));
    let name = init["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["endpoint"] == OLD)
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    let o = rebind(
        d,
        &[
            "apply",
            "--cluster",
            &name,
            "--to",
            NEW,
            "--no-commit",
            "--yes",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(
        d.join("stale #2.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    let o = rebind(d, &["check", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = sarif(&o, "check");
    let stale: Vec<&Value> = results(&v)
        .iter()
        .filter(|r| r["ruleId"] == "retired-endpoint")
        .collect();
    assert!(!stale.is_empty(), "{v}");
    assert!(stale.iter().any(|r| {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stale%20%232.yaml"
    }));
}

/// Every refusal under `--format json` prints a JSON error report on stdout
/// (and the error on stderr); under text, stdout stays empty.
#[test]
fn refusals_with_format_json_print_a_json_error_report() {
    let dir = temp_fixture();
    let d = dir.path();
    std::fs::write(d.join(".rebind.yaml"), "clusters: {}\n").unwrap();
    let empty = tempfile::tempdir().unwrap();
    let runs: Vec<(&Path, Vec<&str>, &str)> = vec![
        (d, vec!["scan", "--from", "ftp://x"], "--from"),
        (d, vec!["diff", "--from", OLD, "--to", "not a url"], "--to"),
        (
            d,
            vec!["apply", "--from", OLD, "--to", NEW, "--no-commit"],
            "stdin is not a terminal",
        ),
        (d, vec!["init"], "already exists"),
        (empty.path(), vec!["check"], "run `rebind init` first"),
        (
            d,
            vec!["secret", "--name", "Not_Valid", "--server", NEW],
            "Not_Valid",
        ),
    ];
    for (cwd, args, needle) in runs {
        let text = rebind(cwd, &args);
        assert_eq!(text.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&text), "", "{args:?}");
        let mut with = args.clone();
        with.extend(["--format", "json"]);
        let o = rebind(cwd, &with);
        assert_eq!(o.status.code(), Some(2), "{with:?}");
        assert!(stderr(&o).contains("error: "), "{with:?}");
        let v = json(&o);
        assert_eq!(v["schema_version"], 1, "{with:?}");
        assert_eq!(v["command"], args[0], "{with:?}");
        let errors = v["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{with:?}: {v}");
        let message = errors[0]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{with:?}: {message}");
        assert!(errors[0]["path"].is_null() && errors[0]["line"].is_null());
    }
}

/// A plan refused because files cannot be rewritten: the JSON error report
/// names each file at its line and column.
#[test]
fn a_refused_plan_names_each_file_in_the_json_error_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("good.yaml"),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
    )
    .unwrap();
    std::fs::write(d.join("broken.yaml"), format!("server: {OLD}\nbad: [x\n")).unwrap();
    let o = rebind(
        d,
        &[
            "apply",
            "--from",
            OLD,
            "--to",
            NEW,
            "--no-commit",
            "--yes",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["command"], "apply");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v}");
    assert_eq!(errors[0]["path"], "broken.yaml");
    assert!(errors[0]["line"].as_u64().unwrap() >= 1);
    assert!(errors[0]["column"].as_u64().unwrap() >= 1);
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("not valid YAML"));
    assert_eq!(
        std::fs::read_to_string(d.join("good.yaml")).unwrap(),
        format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
        "nothing written"
    );
}

/// `--help` lists exactly the output formats each command accepts.
#[test]
fn help_lists_only_the_formats_each_command_writes() {
    for (cmd, formats) in [
        ("scan", "text, json, sarif, github"),
        ("diff", "text, json, sarif, github"),
        ("check", "text, json, sarif, github"),
        ("apply", "text, json"),
        ("secret", "text, json"),
        ("init", "text, json"),
    ] {
        let o = rebind(Path::new("."), &[cmd, "--help"]);
        let help = stdout(&o);
        let line = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("--format <FORMAT>"))
            .take_while(|l| !l.trim_start().starts_with("--json"))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            line.contains(&format!("[possible values: {formats}]")),
            "{cmd}: {line}"
        );
        // And each one it lists is accepted (not a usage error).
        for f in formats.split(", ") {
            let o = rebind(Path::new("."), &[cmd, "--format", f, "--help"]);
            assert_eq!(o.status.code(), Some(0), "{cmd} --format {f}");
        }
    }
}

/// The audit is read back through the type that writes it: reading a
/// `diff --format json` report into `PlanReport` and writing it again gives
/// the same bytes (no field is lost or renamed on the way).
#[test]
fn the_audit_reads_back_through_the_type_that_writes_it() {
    let dir = temp_fixture();
    let d = dir.path();
    for args in [
        &["diff", "--from", OLD, "--to", NEW, "--json"][..],
        &["diff", "--from", NEW, "--to", STAGE, "--json"][..],
    ] {
        let o = rebind(d, args);
        let text = stdout(&o);
        let report: rebind::output::json::PlanReport =
            serde_json::from_str(&text).expect("the audit reads back");
        assert_eq!(rebind::output::json::render(&report), text, "{args:?}");
    }
}

/// Nothing but `src/output/` and `src/main.rs` writes to stdout or stderr:
/// no print macros, no direct handles, no child process inheriting them.
#[test]
fn nothing_prints_outside_the_output_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let needles = [
        "println!",
        "print!",
        "eprintln!",
        "eprint!",
        "dbg!",
        "io::stdout",
        "io::stderr",
        "Stdio::inherit",
    ];
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if p.extension().is_none_or(|x| x != "rs")
                || rel.starts_with("output/")
                || rel == "main.rs"
            {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            // Unit tests may print; the code they test may not.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (i, line) in code.lines().enumerate() {
                let line = line.split("//").next().unwrap();
                if needles.iter().any(|n| line.contains(n)) {
                    found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(files > 10, "the walk found the sources");
    assert!(
        found.is_empty(),
        "printing outside src/output/:\n{}",
        found.join("\n")
    );
}

/// `git push`'s own output goes through the output layer: shown normally,
/// silenced by `-q`.
#[test]
fn the_push_output_obeys_quiet() {
    let remotes = tempfile::tempdir().unwrap();
    git(remotes.path(), &["init", "-q", "--bare", "gitops.git"]);
    let bare = remotes.path().join("gitops.git");
    let mut outs = Vec::new();
    for quiet in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("app.yaml"),
            format!("kind: Application\nspec:\n  destination:\n    server: {OLD}\n"),
        )
        .unwrap();
        git_init_commit(d);
        git(d, &["remote", "add", "origin", bare.to_str().unwrap()]);
        let branch = if quiet { "quiet" } else { "loud" };
        let mut args = vec![
            "apply", "--from", OLD, "--to", NEW, "--yes", "--push", "origin", "--branch", branch,
        ];
        if quiet {
            args.push("-q");
        }
        let o = rebind(d, &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        git(&bare, &["rev-parse", branch]);
        outs.push((stdout(&o), stderr(&o)));
    }
    assert!(
        outs[0].1.contains(" -> loud"),
        "git's report shown: {:?}",
        outs[0]
    );
    assert_eq!(
        outs[1],
        (String::new(), String::new()),
        "-q: nothing at all"
    );
}

/// A usage error the argument parser finds (a missing `--to`, a format the
/// command does not write) is a refusal too: with JSON asked for, the JSON
/// error report; without, nothing on stdout.
#[test]
fn usage_errors_with_format_json_print_a_json_error_report() {
    let d = Path::new(".");
    for (args, needle) in [
        (vec!["diff", "--format", "json"], "--to <URL>"),
        (
            vec!["--color", "never", "apply", "--json", "--bogus"],
            "--bogus",
        ),
        (vec!["scan", "--format=json", "--include"], "--include"),
    ] {
        let o = rebind(d, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("error: "), "{args:?}");
        let v = json(&o);
        let command = args.iter().find(|a| !a.starts_with('-') && **a != "never");
        assert_eq!(v["command"], *command.unwrap(), "{args:?}");
        let message = v["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{args:?}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }
    let o = rebind(d, &["diff"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
}

/// A run that fails before its report, asked for SARIF or GitHub
/// annotations, says so in that format: a SARIF log whose invocation failed
/// (valid against the schema), or an `::error::` workflow command.
#[test]
fn failures_in_the_ci_formats_say_so_in_that_format() {
    let empty = tempfile::tempdir().unwrap();
    let o = rebind(empty.path(), &["check", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(2));
    let v = sarif(&o, "check-failed");
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false, "{v}");
    let note = &inv["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert!(note["message"]["text"]
        .as_str()
        .unwrap()
        .contains("rebind init"));
    assert!(results(&v).is_empty());

    let o = rebind(empty.path(), &["check", "--format", "github"]);
    assert_eq!(o.status.code(), Some(2));
    let gh = stdout(&o);
    assert!(gh.starts_with("::error::no .rebind.yaml found"), "{gh}");
    assert_eq!(gh.lines().count(), 1, "{gh}");

    // A plan refused for a file it cannot rewrite: that file, at its place.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.yaml"),
        format!("server: {OLD}\nbad: [x\n"),
    )
    .unwrap();
    let o = rebind(
        dir.path(),
        &["diff", "--from", OLD, "--to", NEW, "--format", "sarif"],
    );
    assert_eq!(o.status.code(), Some(2));
    let v = sarif(&o, "diff-refused");
    assert_eq!(count_where(&v, "ruleId", "cannot-rewrite"), 1, "{v}");
}

#[test]
fn the_review_markdown_cannot_be_closed_or_split_by_file_content() {
    // A file whose context lines hold a code fence and a comment opener,
    // and a path holding a backtick and a pipe: the review's diff fence and
    // table cells must hold them, so every -/+ line stays inside the block.
    let dir = tempfile::tempdir().unwrap();
    let name = "we`ird|name.yaml";
    std::fs::write(
        dir.path().join(name),
        "doc: |\n  ```\n  <!--\nserver: https://old.example.com:6443\nmore: |\n  -->\n  ```\n",
    )
    .unwrap();
    let review = dir.path().join("..").join(format!(
        "review-{}.md",
        dir.path().file_name().unwrap().to_string_lossy()
    ));
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            "https://old.example.com:6443",
            "--to",
            "https://new.example.com:6443",
            "--review-out",
            review.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = std::fs::read_to_string(&review).unwrap();
    std::fs::remove_file(&review).unwrap();
    // The fence opening the diff is longer than any backtick run inside.
    let open = md.find("````diff\n").expect("a four-backtick fence");
    let body_start = open + "````diff\n".len();
    let close = body_start + md[body_start..].find("\n````\n").expect("its close") + 1;
    let body = &md[body_start..close];
    assert!(!body.contains("````"), "{md}");
    // The whole review: every -/+ line inside the block; the table cell a
    // code span longer than the backtick, the pipe escaped.
    check(
        "output_formats__the_review_markdown_cannot_be_closed_or_split_by_file_content",
        &normalise(&md, dir.path()),
    );
}

#[test]
fn no_password_in_a_url_reaches_any_scan_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "kind: Application\nmetadata: {name: a}\nspec:\n  destination:\n    server: https://bob:Hunter2Pass@old.example.com:6443\n",
    )
    .unwrap();
    for format in ["text", "json", "sarif", "github"] {
        let out = rebind(dir.path(), &["scan", "--format", format]);
        let all = stdout(&out) + &stderr(&out);
        assert!(all.contains("old.example.com"), "{format}: {all}");
        assert!(!all.contains("Hunter2Pass"), "{format}: {all}");
    }
}
