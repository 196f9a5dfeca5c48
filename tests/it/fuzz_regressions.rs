//! Every input the fuzzers (`fuzz/`) found a failure with, replayed through
//! the same check as the target that found it:
//!
//! - `tests/fuzz-regressions/*` (target `locate_splice`): locate, plan and
//!   diff must not panic, and a planned rewrite changes only the endpoint's
//!   bytes. `@@` stands for the old endpoint and `##` for its bare host.
//! - `tests/fuzz-regressions/decoded_oracle/*` (target `decoded_oracle`): the
//!   decoded data after a planned rebind must be the decoded data before it
//!   with the endpoint swapped in every string, and nothing may be missed in
//!   silence. Tokens and checks as in the target: one grammar and one
//!   oracle, `tests/it/common/oracle.rs`.
//! - every decoded_oracle input, and `tests/fuzz-regressions/libyaml_oracle/*`
//!   (target `libyaml_oracle`), through the same checks with the documents
//!   decoded by libyaml (`tests/it/common/libyaml.rs`).
//! - (a finding not fixed yet goes under `decoded_oracle/open/` with an
//!   ignored test replaying it; there are none now).

use crate::common::*;
use rebind::text::endpoint::Endpoint;
use std::path::{Path, PathBuf};
use yaml_rust2::Yaml;

use crate::common::oracle::{decoded_oracle, inventory, same_but_swapped};

pub(crate) fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(sub)
}

/// The regular files directly in `dir`, sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn fuzz_findings_stay_fixed() {
    let dir = dir("");
    let mut n = 0;
    for path in inputs(&dir) {
        let raw = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let text = raw.replace("@@", OLD).replace("##", OLD_HOST);
        let from = Endpoint::parse("--from", OLD).unwrap();
        let to = Endpoint::parse("--to", NEW).unwrap();
        let hosts = vec![OLD_HOST.to_ascii_lowercase()];
        for only in [false, true] {
            for f in rebind::review::plan::plan(&inventory(&text, &hosts, only), &from, &to).files {
                endpoint_swaps(f.old.as_bytes(), f.new.as_bytes())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let _ = rebind::edit::diff::unified(&f);
            }
        }
        n += 1;
    }
    assert!(n >= 1, "no regression inputs in {}", dir.display());
}

/// Every input in `dir` through `oracle`: how many, and the failures.
pub(crate) fn replay<T>(
    dir: &Path,
    oracle: impl Fn(&str) -> Result<T, String>,
) -> (usize, Vec<String>) {
    let mut failed = Vec::new();
    let all = inputs(dir);
    for path in &all {
        let raw = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        if let Err(e) = oracle(&raw) {
            failed.push(format!("{}: {e}", path.display()));
        }
    }
    (all.len(), failed)
}

#[test]
fn decoded_oracle_findings_stay_fixed() {
    let (n, failed) = replay(&dir("decoded_oracle"), decoded_oracle);
    assert!(n >= 1, "no decoded_oracle regression inputs");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// The oracle itself catches what it is there for: an endpoint left in a
/// decoded string, and a change that is not the endpoint.
#[test]
fn the_decoded_oracle_can_fail() {
    assert!(decoded_oracle("a: \"@u\"\nb: @@\n").is_ok());
    let (from, to) = (
        Endpoint::parse("--from", OLD).unwrap(),
        Endpoint::parse("--to", NEW).unwrap(),
    );
    let old = Yaml::String(format!("see {OLD}"));
    assert!(same_but_swapped(
        &old,
        &Yaml::String(format!("see {NEW}")),
        &from,
        &to
    ));
    assert!(!same_but_swapped(&old, &old, &from, &to));
    assert!(!same_but_swapped(
        &old,
        &Yaml::String(format!("saw {NEW}")),
        &from,
        &to
    ));
    // In a template action the endpoint may stay.
    let tpl = Yaml::String(format!("{{{{ default \"{OLD}\" .x }}}}"));
    assert!(same_but_swapped(&tpl, &tpl, &from, &to));
}

/// A short structured fuzz of the decoded-data oracle over the extent and
/// key rules: absolute names, ports, other schemes, Unicode white space,
/// prose around bare hosts, endpoints as keys; every scalar style.
pub(crate) mod extent_oracle {
    use super::decoded_oracle;
    use proptest::prelude::*;

    pub(crate) fn token() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("@@"),
            Just("##"),
            Just("##."),
            Just("##.:6443"),
            Just("##:6443"),
            Just("@@/x"),
            Just("@@."),
            Just("http://##"),
            Just("wss://##:443/s"),
            Just("grpc://##."),
            Just("@u"),
            Just("@/"),
            Just("see"),
            Just("\u{a0}"),
            Just("\u{3000}"),
            Just("\u{2028}"),
            Just(" "),
            Just(","),
            Just("%i"),
            Just("%a"),
            Just("%k"),
        ]
    }

    pub(crate) fn scalar() -> impl Strategy<Value = String> {
        (proptest::collection::vec(token(), 1..5), 0u8..4).prop_map(|(t, style)| {
            let body: String = t.concat();
            match style {
                0 => format!("\"{}\"", body.replace('\u{2028}', "\\L")),
                1 => format!("'{body}'"),
                2 => format!("|\n    {body}"),
                _ => body,
            }
        })
    }

    /// A generated Application (the fuzz grammar's tokens): entries whose
    /// keys and values are made of the tokens above, then a destination and
    /// a TLS server name.
    pub(crate) fn document() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            proptest::collection::vec((scalar(), scalar(), any::<bool>()), 1..5),
        )
            .prop_map(|(v6, entries)| {
                let mut raw = String::from(if v6 { "6" } else { "" });
                raw.push_str("kind: Application\nspec:\n");
                for (i, (k, v, keyed)) in entries.iter().enumerate() {
                    let key = if *keyed && !k.starts_with('|') {
                        k.clone()
                    } else {
                        format!("k{i}")
                    };
                    raw.push_str(&format!("  {key}: {v}\n"));
                }
                raw.push_str("  destination:\n    server: @@\n  tls:\n    serverName: ##\n");
                raw
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn the_decoded_data_agrees(raw in document()) {
            if let Err(e) = decoded_oracle(&raw) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
