//! A tab as the separation after a mapping's `:` (YAML 1.2 allows spaces or
//! tabs there; yaml-rust2 refuses `key:<TAB>value`): such files are read,
//! the endpoint found and rewritten byte-exact, the tab kept. A tab in
//! indentation is still refused (YAML forbids it), with file:line:column.

use crate::common::*;
use std::path::Path;

fn apply(dir: &Path) -> std::process::Output {
    rebind(
        dir,
        &["apply", "--from", OLD, "--to", NEW, "--yes", "--no-commit"],
    )
}

/// Writes `text` (`OLD` for the endpoint) as `app.yaml`, applies, and
/// requires exactly the endpoint swapped in `count` places, the rest kept.
fn rewritten(text: &str, count: usize) {
    let dir = tempfile::tempdir().unwrap();
    let old = text.replace("OLD", OLD);
    std::fs::write(dir.path().join("app.yaml"), &old).unwrap();
    let out = apply(dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text:?}\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    let new = std::fs::read_to_string(dir.path().join("app.yaml")).unwrap();
    assert_eq!(new, text.replace("OLD", NEW), "{text:?}");
    assert_eq!(
        endpoint_swaps(old.as_bytes(), new.as_bytes()),
        Ok(count),
        "{text:?}"
    );
}

const APP: &str =
    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name:\tguestbook\nspec:\n";

#[test]
fn a_tab_after_the_colon_of_a_block_mapping() {
    rewritten(
        &format!("{APP}  destination:\n    server:\tOLD\n    namespace:\tdefault\n"),
        1,
    );
}

#[test]
fn a_tab_after_the_colon_of_a_flow_mapping() {
    rewritten(
        &format!("{APP}  destination: {{server:\tOLD, namespace:\tx}}\n"),
        1,
    );
}

#[test]
fn several_tabs_and_a_tab_before_a_comment() {
    rewritten(
        &format!("{APP}  destination:\n    server:\t\t\tOLD\t# prod\n    name:\t\t# none\n"),
        1,
    );
    rewritten(
        &format!("{APP}  destination:\n    server:\t \tOLD\t\t#\tprod\n"),
        1,
    );
}

#[test]
fn a_tab_after_the_colon_with_crlf_and_in_sequences() {
    rewritten(
        &format!("{APP}  destination:\n    server:\tOLD\n").replace('\n', "\r\n"),
        1,
    );
    rewritten(
        "kind: ConfigMap\ndata:\n  servers:\n  - url:\tOLD\n  - url:\tOLD/x\n  - {url:\tOLD}\n",
        3,
    );
}

/// A `:` and tab inside a quoted scalar, a block scalar or a comment is
/// content, not separation: it stays in the value as written.
#[test]
fn a_colon_and_tab_inside_a_value_stays_content() {
    rewritten(
        &format!(
            "{APP}  info: \"a:\tb\"\n  note: |\n    c:\td\n  # e:\tf\n  destination:\n    server:\tOLD\n"
        ),
        1,
    );
}

/// YAML forbids a tab in indentation: still refused, named, nothing written.
#[test]
fn a_tab_in_indentation_is_still_refused_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{APP}  destination:\n\tserver:\t{OLD}\n");
    std::fs::write(dir.path().join("app.yaml"), &text).unwrap();
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("app.yaml:7:"), "{err}");
    assert!(err.contains("not valid YAML"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.yaml")).unwrap(),
        text
    );
}

/// `scan` reads such a file as YAML: the endpoint is a value at its path,
/// not a text mention.
#[test]
fn scan_finds_the_endpoint_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{APP}  destination:\n    server:\t{OLD}\n");
    std::fs::write(dir.path().join("app.yaml"), text).unwrap();
    let out = rebind(dir.path(), &["scan"]);
    let s = stdout(&out);
    assert!(
        s.contains("app.yaml:7:13: value") && s.contains("spec.destination.server"),
        "{s}\n{}",
        stderr(&out)
    );
}
