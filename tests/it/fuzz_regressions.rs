//! Every input the fuzzers (`fuzz/`) found a failure with, replayed through
//! the same check as the target that found it:
//!
//! - `tests/fuzz-regressions/*` (target `locate_splice`): locate, plan and
//!   diff must not panic, and a planned rewrite changes only the endpoint's
//!   bytes. `@@` stands for the old endpoint and `##` for its bare host.
//! - `tests/fuzz-regressions/decoded_oracle/*` (target `decoded_oracle`): the
//!   decoded data after a planned rebind must be the decoded data before it
//!   with the endpoint swapped in every string, and nothing may be missed in
//!   silence. Tokens as in `fuzz/fuzz_targets/decoded_oracle.rs`; unlike
//!   the target, the replay tolerates none of the known bugs.
//! - (a finding not fixed yet goes under `decoded_oracle/open/` with an
//!   ignored test replaying it; there are none now).

use crate::common::*;
use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

use crate::common::oracle::same_but_swapped;

fn dir(sub: &str) -> PathBuf {
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

fn source(text: &str, hosts: &[String], only: bool) -> Inventory {
    Inventory {
        sources: vec![Source {
            entry: Entry {
                path: "in.yaml".into(),
                rel: "in.yaml".into(),
                role: Role::Yaml,
            },
            text: text.into(),
            located: locate::locate_yaml(text, hosts, only),
        }],
        skipped: vec![],
        files: 1,
    }
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
            for f in rewrite::plan(&source(&text, &hosts, only), &from, &to).files {
                endpoint_swaps(f.old.as_bytes(), f.new.as_bytes())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let _ = rebind::diff::unified(&f);
            }
        }
        n += 1;
    }
    assert!(n >= 1, "no regression inputs in {}", dir.display());
}

// The decoded-data oracle, as in fuzz/fuzz_targets/decoded_oracle.rs.

/// The EKS pair's old cluster's issuer (host path), with its endpoint's id.
const ISSUER: &str = "oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";
const V6_OLD: &str = "https://[fd00::1]:6443";
const V6_NEW: &str = "https://[fd00::2]:6443";

/// The input with its tokens expanded, and the `--from`/`--to` it picks.
fn expand(raw: &str) -> (String, &'static str, &'static str) {
    let (old, new, raw) = match raw.strip_prefix('6') {
        Some(rest) => (V6_OLD, V6_NEW, rest),
        None => (OLD, NEW, raw),
    };
    let rest = &old["https://".len()..];
    let host_end = if rest.starts_with('[') {
        rest.find(']').map_or(rest.len(), |i| i + 1)
    } else {
        rest.find(':').unwrap_or(rest.len())
    };
    let host = &rest[..host_end];
    let x = match rest.find(['.', ':']) {
        Some(i) if rest.as_bytes()[i] == b'.' => {
            format!("https://{}\\x2e{}", &rest[..i], &rest[i + 1..])
        }
        Some(i) => format!("https://{}\\x3a{}", &rest[..i], &rest[i + 1..]),
        None => old.to_string(),
    };
    let text = raw
        .replace("@@", old)
        .replace("##", host)
        .replace("@u", &format!("\\u0068ttps://{rest}"))
        .replace("@x", &x)
        .replace("@/", &format!("https:\\/\\/{rest}"))
        // The old cluster's OIDC issuer shares its endpoint's id: as a URL,
        // a provider ARN and a condition key it is no endpoint, and a rebind
        // leaves it as it is.
        .replace("%i", &format!("https://{ISSUER}"))
        .replace(
            "%a",
            &format!("arn:aws:iam::111122223333:oidc-provider/{ISSUER}"),
        )
        .replace("%k", &format!("{ISSUER}:sub"));
    (text, old, new)
}

fn load(text: &str) -> Result<Vec<Yaml>, yaml_rust2::ScanError> {
    YamlLoader::load_from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// The decoded-data oracle on one input: `Err` says what went wrong.
fn decoded_oracle(raw: &str) -> Result<(), String> {
    let (text, old, new) = expand(raw);
    let from = Endpoint::parse("--from", old).unwrap();
    let to = Endpoint::parse("--to", new).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase(), to.host.to_ascii_lowercase()];
    let inv = source(&text, &hosts, true);
    let parsed = inv.sources[0].located.is_ok();
    let plan = rewrite::plan(&inv, &from, &to);
    for f in &plan.files {
        let _ = rebind::diff::unified(f);
    }
    let Ok(old_docs) = load(&text) else {
        return Ok(());
    };
    if !parsed {
        return Ok(());
    }
    // A refusal is fine where the endpoint sits behind escapes that cannot be
    // rewritten in place, or where it is one by design (as in the target);
    // any other (a failed verification) means locate, splice and verify
    // disagree.
    let by_design = [
        "escapes",
        "two keys of one mapping equal",
        "is followed by a dot",
        "quote that value",
    ];
    if let Some(e) = plan
        .errors
        .iter()
        .find(|e| !by_design.iter().any(|d| e.message.contains(d)))
    {
        return Err(format!(
            "refused: {e}
--- input
{text}"
        ));
    }
    if !plan.errors.is_empty() {
        return Ok(());
    }
    let new_text = plan.files.first().map_or(text.as_str(), |f| &f.new);
    let new_docs = load(new_text).map_err(|e| format!("the rewritten text does not load: {e}"))?;
    let same = old_docs.len() == new_docs.len()
        && old_docs
            .iter()
            .zip(&new_docs)
            .all(|(a, b)| same_but_swapped(a, b, &from, &to));
    if !same {
        return Err(format!(
            "decoded data differs beyond the endpoint swap ({} planned):\n--- old\n{text}\n--- new\n{new_text}",
            plan.change_count()
        ));
    }
    Ok(())
}

fn replay(dir: &Path) -> (usize, Vec<String>) {
    let mut failed = Vec::new();
    let all = inputs(dir);
    for path in &all {
        let raw = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        if let Err(e) = decoded_oracle(&raw) {
            failed.push(format!("{}: {e}", path.display()));
        }
    }
    (all.len(), failed)
}

#[test]
fn decoded_oracle_findings_stay_fixed() {
    let (n, failed) = replay(&dir("decoded_oracle"));
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
mod extent_oracle {
    use super::decoded_oracle;
    use proptest::prelude::*;

    fn token() -> impl Strategy<Value = &'static str> {
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

    fn scalar() -> impl Strategy<Value = String> {
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn the_decoded_data_agrees(
            v6 in any::<bool>(),
            entries in proptest::collection::vec((scalar(), scalar(), any::<bool>()), 1..5),
        ) {
            let mut raw = String::from(if v6 { "6" } else { "" });
            raw.push_str("kind: Application\nspec:\n");
            for (i, (k, v, keyed)) in entries.iter().enumerate() {
                let key = if *keyed && !k.starts_with('|') { k.clone() } else { format!("k{i}") };
                raw.push_str(&format!("  {key}: {v}\n"));
            }
            raw.push_str("  destination:\n    server: @@\n  tls:\n    serverName: ##\n");
            if let Err(e) = decoded_oracle(&raw) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
