//! `diff` output is a patch: applying it (with `patch -p1` semantics, written
//! here in Rust with rebind's line model) to the old text gives exactly the new
//! text, for LF, CRLF and lone-CR files, with or without a final line break or
//! a BOM, and for odd file names.

use proptest::prelude::*;
use rebind::edit::diff;
use rebind::edit::rewrite::FilePlan;
use rebind::find::locate;
use std::sync::Arc;

use crate::common::patch::*;

const OLD: &str = "https://old.example.com";
const NEW: &str = "https://new-cluster.example.org:6443";

/// The plan `apply` would make: every `https://old.example.com` swapped.
fn plan(rel: &str, old: &str) -> FilePlan {
    let located = locate::locate_text(old, &["old.example.com".to_string()]);
    let mut new = String::new();
    let mut last = 0;
    for o in &located.occurrences {
        new.push_str(&old[last..o.found.start]);
        new.push_str(NEW);
        last = o.found.replace_end;
    }
    new.push_str(&old[last..]);
    FilePlan {
        path: rel.into(),
        rel: rel.into(),
        old: Arc::from(old),
        new: Arc::from(new.as_str()),
        changes: located.occurrences,
        is_config: false,
    }
}

fn check(p: &FilePlan) {
    let d = diff::unified(p);
    if p.old == p.new {
        return;
    }
    let (name, got) = apply(&d, &p.old).unwrap_or_else(|e| panic!("{e}\n{d:?}"));
    assert_eq!(name, p.rel, "{d:?}");
    assert_eq!(got, &*p.new, "{d:?}");
}

#[test]
fn a_lone_cr_file_change_applies() {
    let old = format!("a: 1\rserver: {OLD}\rc: 3\r");
    let p = plan("apps/cr.yaml", &old);
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.changes[0].line, 2);
    let d = diff::unified(&p);
    assert!(d.contains("@@ -1,3 +1,3 @@"), "{d:?}");
    check(&p);
}

#[test]
fn a_file_name_with_a_newline_keeps_the_header_intact() {
    let p = plan("apps/na\nme.yaml", &format!("server: {OLD}\n"));
    let d = diff::unified(&p);
    assert!(
        d.starts_with("--- \"a/apps/na\\nme.yaml\"\n+++ \"b/apps/na\\nme.yaml\"\n@@ "),
        "{d:?}"
    );
    check(&p);
    let p = plan("apps/with space/a\"b\\c.yaml", &format!("server: {OLD}\n"));
    check(&p);
}

fn line_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(format!("server: {OLD}")),
        Just(format!("  - {OLD}:443/x # {OLD}")),
        Just("# 한국어 주석 コメント".to_string()),
        Just(String::new()),
        Just("key: value".to_string()),
        Just("  nested:".to_string()),
        Just(format!("url: \"{OLD}\"")),
    ]
}

fn break_strategy() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn applying_the_diff_gives_the_new_text(
        body in proptest::collection::vec((line_strategy(), break_strategy()), 0..40),
        bom in any::<bool>(),
        final_break in any::<bool>(),
    ) {
        let mut old = String::new();
        if bom {
            old.push('\u{feff}');
        }
        let n = body.len();
        for (i, (line, br)) in body.iter().enumerate() {
            old.push_str(line);
            if i + 1 < n || final_break {
                old.push_str(br);
            }
        }
        check(&plan("apps/x.yaml", &old));
    }

    #[test]
    fn applying_a_whole_file_diff_gives_the_new_text(
        a in proptest::collection::vec((line_strategy(), break_strategy()), 0..15),
        b in proptest::collection::vec((line_strategy(), break_strategy()), 0..15),
    ) {
        let old: String = a.iter().map(|(l, br)| format!("{l}{br}")).collect();
        let mut new: String = b.iter().map(|(l, br)| format!("{l}{br}")).collect();
        new.pop();
        let p = FilePlan {
            path: "x".into(),
            rel: "x.yaml".into(),
            old: Arc::from(old.as_str()),
            new: Arc::from(new.as_str()),
            changes: vec![],
            is_config: false,
        };
        check(&p);
    }
}
