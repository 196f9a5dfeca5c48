//! The second decoded-data oracle (`tests/it/common/libyaml.rs`): rebind's
//! result decoded by libyaml, not by yaml-rust2, the parser rebind uses.
//! Same grammar and checks as the `decoded_oracle` fuzz target and its
//! replay; inputs the two YAML implementations read differently are skipped
//! and counted (the oracle judges rebind, not the parsers).
//!
//! - every found fuzz input (`tests/fuzz-regressions/decoded_oracle/` and
//!   `libyaml_oracle/`) replayed through it;
//! - a property test over two generators: the extent grammar of
//!   `fuzz_regressions::extent_oracle` and generated documents of every
//!   shape (block and flow collections, every scalar style, anchors and
//!   aliases, comments, several documents, CRLF);
//! - `LIBYAML_ORACLE_CORPUS=DIR cargo test --test it -- --ignored
//!   libyaml_oracle::corpus` counts a fuzz corpus's checked, skipped and
//!   failed inputs.

use crate::common::libyaml::{
    libyaml_oracle, load_libyaml, parsers_agree, same_but_swapped, Node, Verdict,
};
use crate::common::{NEW, OLD};
use crate::fuzz_regressions::{dir, extent_oracle, replay};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rebind::text::endpoint::Endpoint;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn found_inputs_pass_the_libyaml_oracle() {
    let mut n = 0;
    let mut failed = Vec::new();
    for sub in ["decoded_oracle", "libyaml_oracle"] {
        let d = dir(sub);
        if !d.is_dir() {
            continue;
        }
        let (k, f) = replay(&d, libyaml_oracle);
        n += k;
        failed.extend(f);
    }
    assert!(n >= 9, "only {n} inputs replayed");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// The oracle catches what it is there for, and skips only what the two
/// implementations read differently.
#[test]
fn the_libyaml_oracle_can_fail() {
    let (from, to) = (
        Endpoint::parse("--from", OLD).unwrap(),
        Endpoint::parse("--to", NEW).unwrap(),
    );
    let doc = |s: &str| load_libyaml(s).unwrap().remove(0);
    let old = doc(&format!("a: [see {OLD}]\nb: !x 1\n"));
    let new = doc(&format!("a: [see {NEW}]\nb: !x 1\n"));
    assert!(same_but_swapped(&old, &new, &from, &to));
    // The endpoint left, a change beside it, a tag changed: each caught.
    assert!(!same_but_swapped(&old, &old, &from, &to));
    let beside = doc(&format!("a: [saw {NEW}]\nb: !x 1\n"));
    assert!(!same_but_swapped(&old, &beside, &from, &to));
    let retagged = doc(&format!("a: [see {NEW}]\nb: !y 1\n"));
    assert!(!same_but_swapped(&old, &retagged, &from, &to));
    // Aliases are resolved: the alias holds the anchored data.
    let aliased = doc("a: &x [1, {b: c}]\nd: *x\n");
    let Node::Map { entries, .. } = &aliased else {
        panic!("{aliased:?}")
    };
    assert_eq!(entries[0].1, entries[1].1);
    // A real case end to end: checked, not skipped; a tab after the colon
    // too (rebind reads it as libyaml does).
    assert_eq!(libyaml_oracle("a: \"@u\"\nb: @@\n"), Ok(Verdict::Checked));
    assert_eq!(
        libyaml_oracle("a:\t\"@u\"\nb:\t@@\nc: {d:\t@@}\n"),
        Ok(Verdict::Checked)
    );
    // Both refuse, or both read the same: they agree. U+2028 is a line
    // break to libyaml (YAML 1.1), text to yaml-rust2 (YAML 1.2): they read
    // other data, and the case is skipped.
    assert!(parsers_agree("a: [\n"));
    assert!(parsers_agree("a: b\n"));
    assert!(!parsers_agree(DISAGREE));
    assert_eq!(
        libyaml_oracle(&format!("{DISAGREE}b: @@\n")),
        Ok(Verdict::Skipped)
    );
}

/// An input yaml-rust2 and libyaml read differently.
const DISAGREE: &str = "a: x\u{2028}y\n";

/// Generated documents of every shape, made of the fuzz grammar's tokens.
mod shapes {
    use super::extent_oracle::{scalar, token};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    pub enum G {
        Scalar(String),
        Flow(Vec<String>, bool),
        Map(Vec<(String, G)>),
        Seq(Vec<G>),
    }

    fn leaf() -> impl Strategy<Value = G> {
        prop_oneof![
            4 => scalar().prop_map(G::Scalar),
            1 => (proptest::collection::vec(token(), 1..3), 0u8..2)
                .prop_map(|(t, s)| G::Scalar(if s == 0 { format!(">\n  {}", t.concat()) } else { format!("\"{}\"", t.concat()) })),
            1 => (proptest::collection::vec(token(), 0..4), any::<bool>())
                .prop_map(|(t, map)| G::Flow(t.into_iter().map(String::from).collect(), map)),
        ]
    }

    pub fn tree() -> impl Strategy<Value = G> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec((key(), inner.clone()), 1..4).prop_map(G::Map),
                proptest::collection::vec(inner, 1..4).prop_map(G::Seq),
            ]
        })
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => Just("server".to_string()),
            3 => "[a-z]{1,6}",
            1 => Just("\"@@\"".to_string()),
            1 => Just("##".to_string()),
        ]
    }

    /// Indents every line of a block scalar's body below its indicator.
    fn scalar_at(s: &str, indent: usize) -> String {
        s.replace('\n', &format!("\n{}", " ".repeat(indent + 2)))
    }

    pub fn render(g: &G, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match g {
            G::Scalar(s) => out.push_str(&format!(" {}\n", scalar_at(s, indent))),
            G::Flow(items, map) => {
                let body: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if *map {
                            format!("k{i}: \"{t}\"")
                        } else {
                            format!("'{t}'")
                        }
                    })
                    .collect();
                let (o, c) = if *map { ('{', '}') } else { ('[', ']') };
                out.push_str(&format!(" {o}{}{c}\n", body.join(", ")));
            }
            G::Map(entries) => {
                out.push('\n');
                for (k, v) in entries {
                    out.push_str(&format!("{pad}{k}:"));
                    render(v, indent + 2, out);
                }
            }
            G::Seq(items) => {
                out.push('\n');
                for v in items {
                    out.push_str(&format!("{pad}-"));
                    render(v, indent + 2, out);
                }
            }
        }
    }

    /// One or more documents, an anchor and its alias, a comment holding
    /// the endpoint, optionally CRLF, tabs after the colons and the IPv6
    /// pair.
    pub fn documents() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec(tree(), 1..3),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(docs, v6, crlf, anchor, tabs)| {
                let mut raw = String::from(if v6 { "6" } else { "" });
                for (i, g) in docs.iter().enumerate() {
                    if i > 0 {
                        raw.push_str("--- # @@\n");
                    }
                    raw.push_str("kind: Application\nspec:");
                    render(g, 2, &mut raw);
                    if anchor {
                        raw.push_str("a: &e \"@@/x\"\nb: [*e, ##]\n");
                    }
                }
                if tabs {
                    // No token holds ": ": only separations change.
                    raw = raw.replace(": ", ":\t");
                }
                if crlf {
                    // The IPv6 prefix byte stays first.
                    raw = raw.replace('\n', "\r\n");
                }
                raw
            })
    }
}

/// Runs the oracle on `cases` inputs of `strategy`, and fails on any
/// failure or when most inputs were skipped (the oracle would judge nothing).
fn run_oracle(name: &str, strategy: impl Strategy<Value = String>, cases: u32) {
    let (checked, skipped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // PROPTEST_CASES overrides the count, as for the other property tests.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let mut runner = TestRunner::new(Config::with_cases(cases));
    let result = runner.run(&strategy, |raw| match libyaml_oracle(&raw) {
        Ok(Verdict::Checked) => {
            checked.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Ok(Verdict::Skipped) => {
            skipped.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(TestCaseError::fail(e)),
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    let (c, s) = (checked.into_inner(), skipped.into_inner());
    println!("libyaml oracle, {name}: {c} checked, {s} skipped (the YAML implementations disagree on the input)");
    assert!(c >= 2 * s, "{name}: {s} of {} inputs skipped", c + s);
}

#[test]
fn the_libyaml_oracle_agrees_on_the_extent_grammar() {
    run_oracle("extent grammar", extent_oracle::document(), 300);
}

#[test]
fn the_libyaml_oracle_agrees_on_documents_of_every_shape() {
    run_oracle("every shape", shapes::documents(), 300);
}

/// Counts a fuzz corpus's inputs by verdict (set `LIBYAML_ORACLE_CORPUS`).
#[test]
#[ignore = "reads a fuzz corpus named by LIBYAML_ORACLE_CORPUS"]
fn corpus() {
    let Some(dir) = std::env::var_os("LIBYAML_ORACLE_CORPUS") else {
        return;
    };
    let (mut checked, mut skipped, mut failed) = (0, 0, Vec::new());
    for e in std::fs::read_dir(Path::new(&dir)).unwrap() {
        let path = e.unwrap().path();
        let Ok(raw) = String::from_utf8(std::fs::read(&path).unwrap()) else {
            continue;
        };
        if raw.len() > 16 * 1024 {
            continue;
        }
        match libyaml_oracle(&raw) {
            Ok(Verdict::Checked) => checked += 1,
            Ok(Verdict::Skipped) => skipped += 1,
            Err(e) => failed.push(format!("{}: {e}", path.display())),
        }
    }
    println!(
        "corpus: {checked} checked, {skipped} skipped, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
