//! Every input the fuzzer (`fuzz/`) found a failure with, run through the
//! same check: locate, plan and diff must not panic, and a planned rewrite
//! changes only the endpoint's bytes. `@@` stands for the old endpoint and
//! `##` for its bare host, as in the fuzz target.

mod common;

use common::*;
use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};

#[test]
fn fuzz_findings_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let raw = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let text = raw.replace("@@", OLD).replace("##", OLD_HOST);
        let from = Endpoint::parse("--from", OLD).unwrap();
        let to = Endpoint::parse("--to", NEW).unwrap();
        let hosts = vec![OLD_HOST.to_ascii_lowercase()];
        for only in [false, true] {
            let inv = Inventory {
                sources: vec![Source {
                    entry: Entry {
                        path: path.clone(),
                        rel: "in.yaml".into(),
                        role: Role::Yaml,
                    },
                    text: text.as_str().into(),
                    located: locate::locate_yaml(&text, &hosts, only),
                }],
                skipped: vec![],
            };
            for f in rewrite::plan(&inv, &from, &to).files {
                endpoint_swaps(f.old.as_bytes(), f.new.as_bytes())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let _ = rebind::diff::unified(&f);
            }
        }
        n += 1;
    }
    assert!(n >= 1, "no regression inputs in {}", dir.display());
}
