//! Helm (Go template) actions: text inside `{{ }}` is always a template
//! mention, never a value, whether or not the file parses as YAML as it is.
//! An endpoint outside every action stays a value, unless an action right
//! after its host or port continues it (then it renders another endpoint).

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

const HEAD: &str =
    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n";

/// Appended to a template, it keeps the masked text valid YAML but breaks
/// the file as it is (a flow mapping after a block mapping).
const BREAKER: &str = "{{- if .Values.extra }}\n{{- end }}\n";

fn parses(text: &str) -> bool {
    yaml_rust2::YamlLoader::load_from_str(text).is_ok()
}

/// 1-based line and character column of the first `needle` in `text`.
fn line_col(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("the needle in the text");
    let line = text[..at].matches('\n').count() + 1;
    let col = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
    (line, col)
}

fn old_at(text: &str) -> (usize, usize) {
    line_col(text, OLD)
}

fn scan(dir: &Path) -> Vec<Value> {
    let out = rebind(dir, &["scan", "--json"]);
    // (Exit 2 names a file that does not parse, masked or not.)
    assert!(matches!(out.status.code(), Some(0 | 2)), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["occurrences"].as_array().unwrap().clone()
}

/// (kind, line, column) of every occurrence scan reports in `a.yaml`.
fn scan_a(dir: &Path) -> Vec<(String, u64, u64)> {
    scan_in(dir, "a.yaml")
}

/// (kind, line, column) of every occurrence scan reports in `path`.
fn scan_in(dir: &Path, path: &str) -> Vec<(String, u64, u64)> {
    scan(dir)
        .iter()
        .filter(|o| o["path"] == path)
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn run(dir: &Path, cmd: &str) -> (Option<i32>, String) {
    let mut args = vec![cmd, "--from", OLD, "--to", NEW];
    if cmd == "apply" {
        args.extend(["--no-commit", "--yes"]);
    }
    let out = rebind(dir, &args);
    (out.status.code(), stdout(&out) + &stderr(&out))
}

fn dir_with(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    dir
}

/// Scan reports one template mention in `file`, at `line:col`, and diff
/// lists it and exits 2 (the `--from` is only mentioned).
fn assert_one_template(dir: &Path, file: &str, (line, col): (usize, usize), what: &str) {
    assert_eq!(
        scan_in(dir, file),
        vec![("template".to_string(), line as u64, col as u64)],
        "{what}"
    );
    let (code, out) = run(dir, "diff");
    assert_eq!(code, Some(2), "{what}: {out}");
    assert!(
        out.contains(&format!("{file}:{line}:{col}: template")),
        "{what}: {out}"
    );
}

/// `text` holds `OLD` once, inside an action: scan, diff and apply see a
/// template mention at its line:column, nothing is rewritten, and diff and
/// apply exit 2 (the `--from` is only mentioned).
fn assert_only_a_mention(text: &str, what: &str) {
    let dir = dir_with(text);
    let (line, col) = old_at(text);
    assert_eq!(
        scan_a(dir.path()),
        vec![("template".to_string(), line as u64, col as u64)],
        "{what}:\n{text}"
    );
    let before = tree(dir.path());
    for cmd in ["diff", "apply"] {
        let (code, out) = run(dir.path(), cmd);
        assert_eq!(code, Some(2), "{what}: {cmd}\n{text}\n{out}");
        assert!(
            out.contains("is in no value, only in 1 mention"),
            "{what}: {cmd}\n{out}"
        );
        assert!(
            out.contains(&format!("a.yaml:{line}:{col}: template {OLD}")),
            "{what}: {cmd}\n{out}"
        );
        assert_eq!(tree(dir.path()), before, "{what}: {cmd}");
    }
}

#[test]
fn an_action_holding_the_endpoint_is_a_mention_whether_or_not_the_file_parses() {
    let text = format!(
        "{HEAD}  destination:\n    server: {{{{ .Values.server | default \"{OLD}\" }}}}\n    namespace: x\n"
    );
    // As YAML this is a flow mapping holding the endpoint: it parses.
    assert!(parses(&text));
    assert_only_a_mention(&text, "parses");
    // An unrelated line that breaks the YAML changes nothing.
    let broken = format!("{text}{BREAKER}");
    assert!(!parses(&broken));
    assert_only_a_mention(&broken, "does not parse");
}

#[test]
fn every_shape_of_action_is_a_mention_parsed_or_masked() {
    let shapes = [
        (
            "key",
            format!("  destination:\n    {{{{ .Values.k | default \"{OLD}\" }}}}: x\n"),
        ),
        (
            "flow sequence",
            format!("  destination:\n    servers: [{{{{ default \"{OLD}\" .Values.a }}}}]\n"),
        ),
        (
            "flow mapping",
            format!("  destination: {{server: {{{{ default \"{OLD}\" .Values.s }}}}, namespace: x}}\n"),
        ),
        (
            "block scalar",
            format!("  source:\n    helm:\n      values: |\n        server: {{{{ .Values.server | default \"{OLD}\" }}}}\n"),
        ),
        (
            "spanning lines",
            format!("  destination:\n    server: {{{{ .Values.server\n      | default \"{OLD}\" }}}}\n"),
        ),
        (
            "trim markers",
            format!("  destination:\n    server: {{{{- default \"{OLD}\" .Values.server -}}}}\n"),
        ),
        (
            "a quoted string holding }}",
            format!("  destination:\n    server: {{{{ printf \"%s}}}}\" \"{OLD}\" }}}}\n"),
        ),
        (
            "a raw string holding }}",
            format!("  destination:\n    server: {{{{ printf `}}}}%s` \"{OLD}\" }}}}\n"),
        ),
        (
            "a comment holding }}",
            format!("  destination:\n    {{{{/* was }}}} {OLD} */}}}}\n    server: x\n"),
        ),
        (
            "a trimmed comment",
            format!("  destination:\n    {{{{- /* was {OLD} */ -}}}}\n    server: x\n"),
        ),
        (
            "a double-quoted YAML value",
            format!("  destination:\n    server: \"{{{{ default \\\"{OLD}\\\" .Values.s }}}}\"\n"),
        ),
        (
            "escapes in a double-quoted YAML value",
            format!(
                "  destination:\n    server: \"{{{{ default \\\"{}\\\" .Values.s }}}}\"\n",
                OLD.replace('/', "\\/")
            ),
        ),
        (
            "a single-quoted YAML value",
            format!("  destination:\n    server: '{{{{ default \"{OLD}\" .Values.s }}}}'\n"),
        ),
    ];
    for (what, body) in shapes {
        let text = format!("{HEAD}{body}");
        let broken = format!("{text}{BREAKER}");
        assert!(!parses(&broken), "{what}");
        if what.starts_with("escapes") {
            // The endpoint is written `https:\/\/...`: that URL (escaped
            // slashes read as slashes) is the endpoint text found in the
            // file, parsed or masked.
            let dir = dir_with(&text);
            let (line, col) = line_col(&text, &OLD.replace('/', "\\/"));
            for t in [&text, &broken] {
                fs::write(dir.path().join("a.yaml"), t).unwrap();
                assert_one_template(dir.path(), "a.yaml", (line, col), what);
            }
            continue;
        }
        assert_only_a_mention(&text, what);
        assert_only_a_mention(&broken, &format!("{what}, file broken"));
    }
}

#[test]
fn an_endpoint_outside_the_action_on_the_same_line_stays_a_value() {
    let cases = [
        format!("    server: {OLD} # {{{{ .Values.note }}}}\n"),
        format!("    server: \"{OLD}/{{{{ .Values.path }}}}\"\n"),
        format!("    server: '{{{{ if .Values.on }}}}{OLD}{{{{ end }}}}'\n"),
        format!("    server: {OLD}/{{{{ .Values.path }}}}\n"),
        format!("    server: {OLD}{{{{/* the hub */}}}}\n"),
        format!("    server: \"{{{{- if .Values.on }}}}{OLD}{{{{ else }}}}x{{{{ end -}}}}\"\n"),
    ];
    for case in cases {
        for breaker in ["", BREAKER] {
            let text = format!("{HEAD}  destination:\n{case}    namespace: x\n{breaker}");
            let dir = dir_with(&text);
            let (code, out) = run(dir.path(), "apply");
            assert_eq!(code, Some(0), "{text}\n{out}");
            assert_eq!(
                fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
                text.replace(OLD, NEW),
                "{text}"
            );
        }
    }
}

#[test]
fn an_action_right_after_the_host_or_port_makes_a_mention() {
    // What the action renders continues the authority: another host or port.
    for case in [
        format!("    server: {OLD}{{{{ .Values.suffix }}}}\n"),
        format!("    server: {OLD}.{{{{ .Values.domain }}}}\n"),
        format!("    server: \"{OLD}{{{{ .Values.suffix }}}}\"\n"),
        // A port the action continues: found, and a mention, never unseen.
        format!("    server: {OLD}:443{{{{ .Values.port_suffix }}}}\n"),
        format!("    server: '{OLD}:443{{{{- .Values.port_suffix -}}}}'\n"),
    ] {
        let text = format!("{HEAD}  destination:\n{case}    namespace: x\n");
        assert_only_a_mention(&text, &case);
        assert_only_a_mention(&format!("{text}{BREAKER}"), &case);
    }
}

#[test]
fn values_beside_actions_are_rewritten_and_the_actions_kept() {
    let mention = format!(
        "{HEAD}  destination:\n    server: {{{{ .Values.server | default \"{OLD}\" }}}}\n    namespace: x\n"
    );
    let value = format!(
        "---\n{HEAD}  source:\n    helm:\n      values: |\n        server: {OLD}\n        fallback: {{{{ default \"{OLD}\" .Values.f }}}}\n  destination:\n    server: {OLD}\n"
    );
    for breaker in ["", BREAKER] {
        let text = format!("{mention}{value}{breaker}");
        let dir = dir_with(&text);
        let (code, out) = run(dir.path(), "diff");
        assert_eq!(code, Some(1), "{out}");
        let (code, out) = run(dir.path(), "apply");
        assert_eq!(code, Some(0), "{out}");
        // Exactly the two values change; both actions keep the old endpoint.
        let expected = format!(
            "{mention}{}{breaker}",
            value.replace(&format!("server: {OLD}"), &format!("server: {NEW}"))
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            expected
        );
        assert_eq!(expected.matches(OLD).count(), 2);
        let (l1, c1) = old_at(&text);
        assert!(out.contains(&format!("a.yaml:{l1}:{c1}")), "{out}");
        assert!(out.contains("template"), "{out}");
    }
}

#[test]
fn a_list_generator_template_beside_a_helm_action_is_rewritten_and_verified() {
    // An ApplicationSet that parses as it is, with generator actions and a
    // Helm action holding the endpoint: the elements are rewritten, the
    // verifier reads the file as the locator did.
    let text = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: s\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n          - cluster: a\n            url: {OLD}\n          - cluster: b\n            url: \"{OLD}\"\n  template:\n    metadata:\n      name: 'x-{{{{.cluster}}}}'\n      annotations:\n        fallback: '{{{{ default \"{OLD}\" .fallback }}}}'\n    spec:\n      destination:\n        server: '{{{{.url}}}}'\n"
    );
    assert!(parses(&text));
    let dir = dir_with(&text);
    let (code, out) = run(dir.path(), "apply");
    assert_eq!(code, Some(0), "{out}");
    let after = fs::read_to_string(dir.path().join("a.yaml")).unwrap();
    let expected = text
        .replacen(&format!("url: {OLD}"), &format!("url: {NEW}"), 1)
        .replacen(&format!("url: \"{OLD}\""), &format!("url: \"{NEW}\""), 1);
    assert_eq!(after, expected);
    assert!(after.contains(&format!("default \"{OLD}\"")));
}

#[test]
fn a_file_that_never_parses_reports_its_actions_as_mentions() {
    // Broken whether masked or not: an endpoint inside an action is still a
    // mention; one outside it stops the run, naming the file.
    let text = format!(
        "{HEAD}  destination:\n    server: {{{{ default \"{OLD}\" .Values.s }}}}\n    bad: [unclosed\n"
    );
    assert_only_a_mention(&text, "broken");
    let outside = format!("{text}# {OLD}\n");
    let dir = dir_with(&outside);
    let (code, out) = run(dir.path(), "diff");
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("not valid YAML"), "{out}");
    assert!(out.contains("it holds 1 occurrence(s)"), "{out}");
    // Beside a file with a value, the mention no longer stops the run.
    let dir = dir_with(&text);
    let value = format!("{HEAD}  destination:\n    server: {OLD}\n");
    fs::write(dir.path().join("b.yaml"), &value).unwrap();
    let (code, out) = run(dir.path(), "apply");
    assert_eq!(code, Some(0), "{out}");
    let (line, col) = old_at(&text);
    assert!(out.contains(&format!("a.yaml:{line}:{col}")), "{out}");
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), text);
    assert_eq!(
        fs::read_to_string(dir.path().join("b.yaml")).unwrap(),
        value.replace(OLD, NEW)
    );
    // `check` keeps its rule: a file that does not parse cannot prove a
    // mention harmless, so the retired endpoint in it fails the check.
    let config = format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n");
    fs::write(dir.path().join(".rebind.yaml"), &config).unwrap();
    let out = rebind(dir.path(), &["check"]);
    let all = stdout(&out) + &stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("(in a template action)"), "{all}");
}

/// A literal retired endpoint inside a template action (`default "OLD"` in
/// either order, a comparison) is committed and renders (or decides) when
/// the value is unset: `check` fails on it as on a value, whether or not
/// the file parses. Only a template comment (`{{/* ... */}}`) is a mention,
/// a warning like a YAML comment.
#[test]
fn check_fails_on_a_retired_endpoint_literal_in_an_action_and_warns_in_a_template_comment() {
    let config = format!("clusters:\n  prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n");
    let actions = [
        format!("{{{{ .Values.server | default \"{OLD}\" }}}}"),
        format!("{{{{ default \"{OLD}\" .Values.server }}}}"),
        format!("{{{{ if eq .Values.server \"{OLD}\" }}}}x{{{{ end }}}}"),
    ];
    for action in &actions {
        let text = format!("{HEAD}  destination:\n    server: {action}\n    namespace: x\n");
        for t in [text.clone(), format!("{text}{BREAKER}")] {
            let dir = dir_with(&t);
            fs::write(dir.path().join(".rebind.yaml"), &config).unwrap();
            let out = rebind(dir.path(), &["check"]);
            let all = stdout(&out) + &stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{t}\n{all}");
            let (line, col) = old_at(&t);
            assert!(
                all.contains(&format!("a.yaml:{line}:{col}: retired endpoint {OLD}")),
                "{all}"
            );
            assert!(all.contains("(in a template action)"), "{all}");
            assert!(
                all.contains("by hand (rebind never rewrites template actions)"),
                "{all}"
            );
        }
    }
    // In a template comment, it is a mention: a warning, exit 0.
    let text = format!(
        "{HEAD}  destination:\n    server: {NEW}\n    namespace: x {{{{/* was {OLD} */}}}}\n"
    );
    let dir = dir_with(&text);
    fs::write(dir.path().join(".rebind.yaml"), &config).unwrap();
    let out = rebind(dir.path(), &["check"]);
    let all = stdout(&out) + &stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let (line, col) = old_at(&text);
    assert!(
        all.contains(&format!(
            "a.yaml:{line}:{col}: warning: retired endpoint {OLD}"
        )),
        "{all}"
    );
    // The same endpoint in a value fails the check.
    let value = format!("{HEAD}  destination:\n    server: {OLD}\n");
    let dir = dir_with(&value);
    fs::write(dir.path().join(".rebind.yaml"), &config).unwrap();
    assert_eq!(rebind(dir.path(), &["check"]).status.code(), Some(1));
}

#[test]
fn json_read_by_either_reader_sees_the_same_action_mention() {
    // `"\ud83d\ude00"` makes the YAML parser refuse the file: it is read as JSON.
    for extra in ["", ", \"emoji\": \"\\ud83d\\ude00\""] {
        let text = format!(
            "{{\"kind\": \"Application\", \"metadata\": {{\"name\": \"a\"}}, \"spec\": {{\"destination\": {{\"server\": \"{{{{ default \\\"{OLD}\\\" .s }}}}\"}}}}{extra}}}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.json"), &text).unwrap();
        assert_one_template(dir.path(), "a.json", old_at(&text), &text);
    }
}

#[test]
fn a_brace_pair_that_is_no_action_hides_no_value() {
    // `{{` that Go's grammar cannot read as an action (a comment holding
    // it, a string broken by a line end) is text: the values after it, up
    // to a later `}}`, are values and are rewritten.
    for lead in [
        "# NOTE: once rendered from {{ .Values.cluster.server\n# (see the old chart); now hard-coded below.\n",
        "metadata:\n  annotations:\n    note: \"open {{\"\n",
        "# {{ a; b\n",
    ] {
        let text = format!(
            "{lead}{HEAD}  destination:\n    server: {OLD}\n  project: \"}}}}\"\n  info: '{{{{u}}}}'\n"
        );
        let dir = dir_with(&text);
        let (code, out) = run(dir.path(), "apply");
        assert_eq!(code, Some(0), "{text}\n{out}");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            text.replace(OLD, NEW),
            "{text}\n{out}"
        );
    }
}

#[test]
fn an_action_inside_the_authority_is_a_mention_of_a_from_with_a_port() {
    // The action renders part of the host; the port written after it is
    // not the endpoint's port as the file is read: the host names it.
    let from = format!("{OLD}:6443");
    for case in [
        format!("    server: {OLD}{{{{ .x }}}}:6443\n"),
        format!("    server: {OLD}.{{{{ .domain }}}}:6443\n"),
        format!("    server: \"{OLD}{{{{ .x }}}}/api\"\n"),
    ] {
        let text = format!("{HEAD}  destination:\n{case}    namespace: x\n");
        for body in [text.clone(), format!("{text}{BREAKER}")] {
            let dir = dir_with(&body);
            let before = tree(dir.path());
            let out = rebind(dir.path(), &["diff", "--from", &from, "--to", NEW]);
            let said = stdout(&out) + &stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{body}\n{said}");
            let (line, col) = old_at(&body);
            assert!(
                said.contains(&format!("a.yaml:{line}:{col}: template")),
                "{body}\n{said}"
            );
            assert_eq!(tree(dir.path()), before);
        }
    }
}

#[test]
fn yaml_between_a_stray_brace_pair_is_never_read_as_an_action() {
    // A `{{` in an annotation and a `}}` in a later plain value, with YAML
    // between them that holds no `/`, `#` or `;` outside quotes: Go's
    // grammar refuses the `:` of every key, so it is no action, and the
    // destination between them is rewritten.
    let text = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: payments\n  annotations:\n    note: values come from {{{{ .Values.payments\nspec:\n  project: default\n  destination:\n    server: \"{OLD}\"\n    namespace: payments\n  info: see docs }}}}\n"
    );
    let dir = dir_with(&text);
    let (code, out) = run(dir.path(), "apply");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        text.replace(OLD, NEW)
    );
}
