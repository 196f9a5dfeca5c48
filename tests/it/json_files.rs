//! Valid JSON never blocks a rebind: a file the YAML parser refuses
//! (surrogate-pair escapes as Python's `json.dump` writes them, nesting at
//! the limit) is read as JSON, listed, diffed and rewritten byte for byte;
//! a file that is neither valid YAML nor valid JSON is still named with its
//! line and column.

use crate::common::*;
use std::path::Path;

fn write(d: &Path, rel: &str, text: &str) {
    std::fs::write(d.join(rel), text).unwrap();
}

/// 1-based line and character column of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {text}"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, text[line_start..at].chars().count() + 1)
}

fn yaml_refuses(text: &str) -> bool {
    yaml_rust2::YamlLoader::load_from_str(text).is_err()
}

fn apply(d: &Path) -> std::process::Output {
    rebind(
        d,
        &["apply", "--from", OLD, "--to", NEW, "--no-commit", "--yes"],
    )
}

/// An Application as Python's `json.dump(indent=2)` writes it: the emoji in
/// an annotation is a surrogate pair; a second endpoint sits in a string
/// written with `\/` escapes (as PHP and some Java writers do).
fn python_app() -> String {
    format!(
        r#"{{
  "apiVersion": "argoproj.io/v1alpha1",
  "kind": "Application",
  "metadata": {{
    "name": "keda",
    "annotations": {{
      "note": "\ud83d\ude00 deployed by the platform team"
    }}
  }},
  "spec": {{
    "destination": {{
      "server": "{OLD}",
      "namespace": "keda"
    }},
    "info": [
      {{
        "name": "api",
        "value": "\ud83d\udd17 https:\/\/{OLD_HOST}\/version"
      }}
    ]
  }}
}}
"#
    )
}

#[test]
fn a_python_style_json_file_is_scanned_diffed_and_rewritten_byte_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = python_app();
    assert!(
        yaml_refuses(&text),
        "the YAML parser must refuse the fixture"
    );
    write(d, "app.json", &text);
    write(d, "other.yaml", "kind: ConfigMap\ndata: {a: b}\n");

    // scan lists both, at the raw bytes' line and column.
    let out = rebind(d, &["scan"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = stdout(&out);
    let (l1, c1) = position(&text, OLD);
    let (l2, c2) = position(&text, "https:\\/\\/");
    assert_eq!((l1, c1), (12, 18));
    assert!(
        s.contains(&format!(
            "app.json:{l1}:{c1}: value    {OLD}  spec.destination.server  (Application/keda)"
        )),
        "{s}"
    );
    assert!(
        s.contains(&format!(
            "app.json:{l2}:{c2}: value    https://{OLD_HOST}/version  spec.info[0].value"
        )),
        "{s}"
    );
    assert!(s.contains("2 places in 1 file"), "{s}");
    assert!(!s.contains("not valid YAML"), "{s}");

    // diff shows both changes, and exits 1. Escaped slashes stay escaped.
    let new_escaped = NEW.replace('/', "\\/");
    let expected = text
        .replace(OLD, NEW)
        .replace(&format!("https:\\/\\/{OLD_HOST}"), &new_escaped);
    assert_ne!(expected, text);
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let s = stdout(&out);
    assert!(
        s.contains(&format!(
            "-      \"server\": \"{OLD}\",\n+      \"server\": \"{NEW}\",\n"
        )),
        "{s}"
    );
    assert!(
        s.contains(&format!(
            "+        \"value\": \"\\ud83d\\udd17 {new_escaped}\\/version\"\n"
        )),
        "{s}"
    );
    assert!(s.contains("2 changes in 1 file"), "{s}");

    // apply rewrites only the endpoint bytes.
    let before = tree(d);
    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = tree(d);
    assert_eq!(
        String::from_utf8(after["app.json"].clone()).unwrap(),
        expected
    );
    assert_eq!(after["other.yaml"], before["other.yaml"]);
    assert_eq!(after.len(), before.len());
    // The rewritten file decodes to the old data with the endpoint rebound.
    let old: serde_json::Value = serde_json::from_str(&text).unwrap();
    let new: serde_json::Value = serde_json::from_str(&expected).unwrap();
    let rebound = serde_json::to_string(&old)
        .unwrap()
        .replace(OLD_HOST, NEW_HOST);
    assert_eq!(serde_json::to_string(&new).unwrap(), rebound);

    // Running again is a no-op.
    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tree(d), after);
    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn an_endpoint_written_with_unicode_escapes_in_json_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `\u0068ttps`, and `\u002e` in the host of a Helm parameter (its
    // sibling `name` makes it a cluster position), next to a surrogate pair.
    let dotted = OLD_HOST.replacen('.', "\\u002e", 1);
    let text = format!(
        "{{\"kind\": \"Application\", \"metadata\": {{\"name\": \"karpenter\", \"labels\": {{\"team\": \"\\ud83d\\ude80\"}}}},\r\n \"spec\": {{\"destination\": {{\"server\": \"\\u0068ttps://{OLD_HOST}\"}},\r\n  \"source\": {{\"helm\": {{\"parameters\": [{{\"name\": \"settings.clusterEndpoint\", \"value\": \"https://{dotted}\"}}]}}}}}}}}"
    );
    assert!(yaml_refuses(&text));
    write(d, "karpenter.json", &text);

    let out = rebind(d, &["scan", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = stdout(&out);
    for path in [
        "spec.destination.server",
        "spec.source.helm.parameters[0].value",
    ] {
        assert!(s.contains(path), "{path}: {s}");
    }

    let out = rebind(d, &["diff", "--from", OLD, "--to", NEW, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["change_count"], 2, "{v}");

    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Each escaped endpoint is written out plainly; every other byte (CRLF,
    // the surrogate pair, the unescaped rest) stays.
    let expected = text
        .replace(&format!("\\u0068ttps://{OLD_HOST}"), NEW)
        .replace(&format!("https://{dotted}"), NEW);
    assert_eq!(
        std::fs::read_to_string(d.join("karpenter.json")).unwrap(),
        expected
    );
    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("karpenter.json")).unwrap(),
        expected
    );
}

/// JSON lets a writer spell `/` as `\/` or `\u002F` (RFC 8259 section 7):
/// a rewrite keeps each slash as written, in JSON and in a YAML
/// double-quoted string (YAML 1.2 section 5.7) alike; only the host changes.
#[test]
fn escaped_slashes_keep_their_spelling_when_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old_json = format!(
        "{{\"kind\": \"Application\", \"metadata\": {{\"name\": \"a\"}}, \"spec\": {{\"destination\": {{\"server\": \"https:\\u002F\\u002F{OLD_HOST}\"}}}}}}\n"
    );
    let old_yaml = format!(
        "kind: Application\nmetadata: {{name: b}}\nspec:\n  destination:\n    server: \"https:\\u002f/{OLD_HOST}\"\n"
    );
    write(d, "a.json", &old_json);
    write(d, "b.yaml", &old_yaml);
    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("a.json")).unwrap(),
        old_json.replace(OLD_HOST, NEW_HOST)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("b.yaml")).unwrap(),
        old_yaml.replace(OLD_HOST, NEW_HOST)
    );
}

#[test]
fn json_nested_to_the_limit_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1000 levels: the JSON limit, one more than the YAML locator takes.
    let n = 1000;
    let text = format!("{}\"{OLD}\"{}\n", "[".repeat(n), "]".repeat(n));
    write(d, "deep.json", &text);
    let out = apply(d);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("deep.json")).unwrap(),
        text.replace(OLD, NEW)
    );
}

#[test]
fn a_file_neither_yaml_nor_json_is_an_error_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A lone surrogate: no JSON or YAML reader decodes it.
    let text = format!("{{\"server\": \"{OLD}\",\n \"note\": \"\\ud83d\"}}\n");
    write(d, "bad.json", &text);
    write(
        d,
        "good.json",
        &format!("{{\"note\": \"\\ud83d\\ude00\", \"server\": \"{OLD}\"}}\n"),
    );
    let before = tree(d);
    for args in [
        &["diff", "--from", OLD, "--to", NEW][..],
        &["apply", "--from", OLD, "--to", NEW, "--no-commit", "--yes"][..],
    ] {
        let out = rebind(d, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains("bad.json:2:"), "{err}");
        assert!(
            err.contains("nor valid JSON: 2:11: lone surrogate `\\ud83d`"),
            "{err}"
        );
        assert!(!err.contains("good.json"), "{err}");
        assert_eq!(tree(d), before, "nothing written");
    }
}
