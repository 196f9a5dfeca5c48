//! The discovery corpus: how much of the plain inventory (`rebind scan`
//! without `--from`) can be trusted.
//!
//! `testdata/discovery/` holds small repositories in the styles platform teams
//! use, one folder per category of endpoint (`appset-list`, `appset-keys`,
//! `helm-charts`, `kustomize-patches`, `kubeconfig`, `cluster-secrets`,
//! `exported-backups`, `platforms`) and one of
//! things that must not be found (`noise`). `testdata/discovery/truth.tsv`
//! lists every workload endpoint value site (its header documents the format).
//!
//! What counts as "listed by the inventory": a scan occurrence of kind `value`
//! whose shape is not `in-cluster`. Those are exactly the occurrences that make
//! an endpoint a "workload" endpoint in `src/report.rs` (`workload_tallies`),
//! and so what feeds `init`, `check`'s undeclared-endpoint rule and `apply`
//! without `--from`. Comments, text files and template actions are mentions
//! (reported, never rewritten) and do not count either way; the in-cluster
//! server is listed but is never a workload endpoint. An occurrence matches a
//! truth site when path, line, column and endpoint text are all equal; for a
//! base64 site (`data.server`) the endpoint is the decoded value and the
//! position is that of the base64 text.
//!
//! Recall = matched sites / truth sites; precision = matched / listed. Both
//! are printed per category (a false hit counts against the folder it is in)
//! and overall; `inventory_finds_every_site_and_nothing_else` requires 100% of both.

use crate::common::{base64, copy_dir};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Corpus folders holding sites, then the folder that must hold none.
const CATEGORIES: [&str; 8] = [
    "appset-list",
    "appset-keys",
    "helm-charts",
    "kustomize-patches",
    "kubeconfig",
    "cluster-secrets",
    "exported-backups",
    "platforms",
];
const NOISE: &str = "noise";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/discovery")
}

/// A place the inventory reports or must report: path, line, column, endpoint.
type Site = (String, usize, usize, String);

/// One line of `truth.tsv`.
#[derive(Debug, Clone)]
struct Truth {
    /// 1-based line in truth.tsv, for messages.
    at: usize,
    path: String,
    line: usize,
    column: usize,
    endpoint: String,
    category: String,
    cluster: String,
    base64: bool,
}

impl Truth {
    fn site(&self) -> Site {
        (
            self.path.clone(),
            self.line,
            self.column,
            self.endpoint.clone(),
        )
    }
}

fn truth() -> Vec<Truth> {
    let file = corpus().join("truth.tsv");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let at = i + 1;
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        assert!(
            f.len() == 6 || f.len() == 7,
            "truth.tsv:{at}: expected 6 or 7 tab-separated fields, found {}",
            f.len()
        );
        let num = |s: &str, what: &str| -> usize {
            let n: usize = s
                .parse()
                .unwrap_or_else(|_| panic!("truth.tsv:{at}: {what} {s:?} is not a number"));
            assert!(n > 0, "truth.tsv:{at}: {what} is 1-based");
            n
        };
        let encoding = f.get(6).copied().unwrap_or("");
        assert!(
            encoding.is_empty() || encoding == "base64",
            "truth.tsv:{at}: unknown encoding {encoding:?}"
        );
        out.push(Truth {
            at,
            path: f[0].to_string(),
            line: num(f[1], "line"),
            column: num(f[2], "column"),
            endpoint: f[3].to_string(),
            category: f[4].to_string(),
            cluster: f[5].to_string(),
            base64: encoding == "base64",
        });
    }
    out
}

// ---------------------------------------------------------------------------
// The scan's output shape lives here and nowhere else.

/// The scan command line, relative to the crate root.
const SCAN_ARGS: [&str; 3] = ["scan", "--json", "testdata/discovery"];

/// Maps the scan JSON to the sites the plain inventory lists: occurrences of
/// kind `value` that are not in-cluster, as (path, line, column, endpoint).
fn inventory_sites(scan: &Value) -> Vec<Site> {
    scan["occurrences"]
        .as_array()
        .expect("scan JSON has an `occurrences` array")
        .iter()
        .filter(|o| o["kind"] == "value" && o["shape"] != "in-cluster")
        .map(|o| {
            let n = |k: &str| o[k].as_u64().unwrap_or_else(|| panic!("{k} in {o}")) as usize;
            let path = o["path"].as_str().expect("path");
            (
                path.strip_prefix("testdata/discovery/")
                    .unwrap_or(path)
                    .to_string(),
                n("line"),
                n("column"),
                o["endpoint"].as_str().expect("endpoint").to_string(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------

fn scan() -> Value {
    let out = crate::common::command()
        .args(SCAN_ARGS)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 1),
        "rebind {SCAN_ARGS:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("scan prints one JSON object")
}

#[derive(Default)]
struct Score {
    truth: usize,
    listed: usize,
    matched: usize,
    missed: Vec<Truth>,
    false_hits: Vec<Site>,
}

fn pct(num: usize, den: usize) -> String {
    if den == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * num as f64 / den as f64)
    }
}

/// Scores the inventory against the truth: per folder (categories, noise,
/// anything else found), and overall under the key `"all"`.
fn score(truth: &[Truth], listed: &[Site]) -> BTreeMap<String, Score> {
    let want: BTreeSet<Site> = truth.iter().map(Truth::site).collect();
    let got: BTreeSet<Site> = listed.iter().cloned().collect();
    let folder = |p: &str| p.split('/').next().unwrap_or("").to_string();
    let mut s: BTreeMap<String, Score> = BTreeMap::new();
    for c in CATEGORIES.iter().chain([&NOISE]) {
        s.entry(c.to_string()).or_default();
    }
    for t in truth {
        for key in [t.category.clone(), "all".into()] {
            let e = s.entry(key).or_default();
            e.truth += 1;
            if got.contains(&t.site()) {
                e.matched += 1;
            } else {
                e.missed.push(t.clone());
            }
        }
    }
    for g in &got {
        for key in [folder(&g.0), "all".into()] {
            let e = s.entry(key).or_default();
            e.listed += 1;
            if !want.contains(g) {
                e.false_hits.push(g.clone());
            }
        }
    }
    s
}

/// The table: one row per folder and the total; then every miss and false hit.
fn report(scores: &BTreeMap<String, Score>) -> String {
    let mut out = String::from(
        "discovery corpus (testdata/discovery): plain inventory vs truth.tsv\n  \
         category            sites  listed  matched  recall   precision\n",
    );
    let order = CATEGORIES
        .iter()
        .map(|c| c.to_string())
        .chain([NOISE.to_string()])
        .chain(
            scores
                .keys()
                .filter(|k| {
                    k.as_str() != "all" && k.as_str() != NOISE && !CATEGORIES.contains(&k.as_str())
                })
                .cloned(),
        )
        .chain(["all".to_string()]);
    for k in order {
        let s = &scores[&k];
        out.push_str(&format!(
            "  {:<18} {:>6} {:>7} {:>8}  {:<8} {}\n",
            k,
            s.truth,
            s.listed,
            s.matched,
            pct(s.matched, s.truth),
            pct(s.matched, s.listed),
        ));
    }
    let all = &scores["all"];
    if !all.missed.is_empty() {
        out.push_str(&format!("missed ({}):\n", all.missed.len()));
        for t in &all.missed {
            out.push_str(&format!(
                "    {}:{}:{}: {}{}\n",
                t.path,
                t.line,
                t.column,
                t.endpoint,
                if t.base64 { " (base64)" } else { "" }
            ));
        }
    }
    if !all.false_hits.is_empty() {
        out.push_str(&format!(
            "listed but not a workload endpoint site ({}):\n",
            all.false_hits.len()
        ));
        for (p, l, c, e) in &all.false_hits {
            out.push_str(&format!("    {p}:{l}:{c}: {e}\n"));
        }
    }
    out
}

/// Lines as YAML counts them: `\n`, `\r\n` and a lone `\r` end a line.
fn yaml_lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&text[start..]);
    lines
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// Checks one site against the file it names; returns what is wrong, if anything.
fn check_site(t: &Truth, files: &mut BTreeMap<String, String>) -> Option<String> {
    let file = corpus().join(&t.path);
    if !files.contains_key(&t.path) {
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                files.insert(t.path.clone(), text);
            }
            Err(e) => return Some(format!("cannot read {}: {e}", file.display())),
        }
    }
    let text = &files[&t.path];
    let lines = yaml_lines(text);
    let Some(line) = lines.get(t.line - 1) else {
        return Some(format!("the file has only {} lines", lines.len()));
    };
    let chars: Vec<char> = line.chars().collect();
    let written = if t.base64 {
        base64(&t.endpoint)
    } else {
        t.endpoint.clone()
    };
    let want: Vec<char> = written.chars().collect();
    let at = t.column - 1;
    if chars.get(at..at + want.len()) != Some(&want[..]) {
        return Some(format!(
            "expected {written:?} at column {}, the line reads {line:?}",
            t.column
        ));
    }
    // The whole endpoint, not a piece of a longer host or URL.
    let before = at.checked_sub(1).and_then(|i| chars.get(i)).copied();
    let after = chars.get(at + want.len()).copied();
    let url = t.endpoint.starts_with("https://");
    let longer_after = after.is_some_and(|c| {
        if t.base64 {
            c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')
        } else {
            is_host_char(c) || c == '/' || c == ':' || (url && c == '?')
        }
    });
    let longer_before =
        before.is_some_and(|c| is_host_char(c) || c == '/' || (t.base64 && matches!(c, '+' | '=')));
    if longer_after || longer_before {
        return Some(format!("{written:?} is part of a longer text in {line:?}"));
    }
    None
}

/// `host[:port][/path]` of a URL, host lower-cased: one cluster per identity.
fn identity(endpoint: &str) -> String {
    let rest = endpoint.strip_prefix("https://").unwrap_or(endpoint);
    let (auth, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let auth = auth.strip_suffix(":443").unwrap_or(auth);
    format!("{}{path}", auth.to_ascii_lowercase())
}

/// Everything wrong with the truth file; empty when it is well-formed.
fn truth_problems(truth: &[Truth]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut files = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for t in truth {
        let mut bad = |m: String| problems.push(format!("truth.tsv:{}: {}: {m}", t.at, t.path));
        if !seen.insert((t.path.clone(), t.line, t.column)) {
            bad("listed twice".into());
        }
        if !CATEGORIES.contains(&t.category.as_str()) {
            bad(format!("unknown category {:?}", t.category));
        }
        if t.path.split('/').next() != Some(t.category.as_str()) {
            bad(format!("the file is not in the {} folder", t.category));
        }
        if t.cluster.is_empty() || t.cluster.contains("://") || t.cluster.contains('.') {
            bad(format!("{:?} is not a cluster name", t.cluster));
        }
        if t.endpoint.contains(char::is_whitespace) || t.endpoint.is_empty() {
            bad(format!("{:?} is not an endpoint", t.endpoint));
        }
        if let Some(m) = check_site(t, &mut files) {
            bad(m);
        }
    }
    for c in CATEGORIES {
        if !truth.iter().any(|t| t.category == c) {
            problems.push(format!("category {c} has no site"));
        }
    }
    // Across the corpus (`init` may run on all of it), a URL names one
    // cluster and two URLs name two clusters; a bare host belongs to a
    // cluster that has a URL.
    {
        let sites: Vec<&Truth> = truth.iter().collect();
        let mut name_of: BTreeMap<String, &str> = BTreeMap::new();
        let mut url_of: BTreeMap<&str, String> = BTreeMap::new();
        for t in sites.iter().filter(|t| t.endpoint.starts_with("https://")) {
            let id = identity(&t.endpoint);
            if let Some(n) = name_of.insert(id.clone(), &t.cluster) {
                if n != t.cluster {
                    problems.push(format!(
                        "truth.tsv:{}: {} is named both {n} and {}",
                        t.at, t.endpoint, t.cluster
                    ));
                }
            }
            if let Some(u) = url_of.insert(&t.cluster, id.clone()) {
                if u != id {
                    problems.push(format!(
                        "truth.tsv:{}: cluster {} has two endpoints, {u} and {id}",
                        t.at, t.cluster
                    ));
                }
            }
        }
        for t in sites.iter().filter(|t| !t.endpoint.starts_with("https://")) {
            if !url_of.contains_key(t.cluster.as_str()) {
                problems.push(format!(
                    "truth.tsv:{}: bare host {} belongs to {}, which has no URL site",
                    t.at, t.endpoint, t.cluster
                ));
            }
        }
    }
    if !corpus().join(NOISE).is_dir() {
        problems.push(format!("the {NOISE} folder is missing"));
    }
    problems
}

/// Always runs: the truth file must be well-formed (every site holds exactly
/// that endpoint text at that line and column). The inventory's numbers on
/// today's scan are printed, not asserted.
#[test]
fn truth_is_well_formed_and_numbers_are_printed() {
    let truth = truth();
    let problems = truth_problems(&truth);
    assert!(
        problems.is_empty(),
        "truth.tsv is not well-formed:\n{}",
        problems.join("\n")
    );
    let scores = score(&truth, &inventory_sites(&scan()));
    println!("{}", report(&scores));
}

/// The goal of the discovery work: every real endpoint found, nothing else.
#[test]
fn inventory_finds_every_site_and_nothing_else() {
    let truth = truth();
    let scores = score(&truth, &inventory_sites(&scan()));
    let table = report(&scores);
    println!("{table}");
    let all = &scores["all"];
    assert!(
        all.missed.is_empty() && all.false_hits.is_empty(),
        "recall {} and precision {} on the discovery corpus, both must be 100%:\n{table}",
        pct(all.matched, all.truth),
        pct(all.matched, all.listed)
    );
}

/// `init` on the corpus declares exactly the truth's clusters, each under the
/// name a person would use (the truth's `cluster` column), and `check` then
/// passes.
#[test]
fn init_declares_the_real_clusters_by_their_names() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), dir.path());
    let run = |args: &[&str]| {
        crate::common::command()
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let init = run(&["init", "."]);
    assert_eq!(
        init.status.code(),
        Some(0),
        "init failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join(".rebind.yaml")).unwrap();
    let doc = &yaml_rust2::YamlLoader::load_from_str(&text).unwrap()[0];
    let declared: BTreeSet<(String, String)> = doc["clusters"]
        .as_hash()
        .expect("clusters")
        .iter()
        .map(|(k, v)| {
            (
                identity(v["endpoint"].as_str().expect("endpoint")),
                k.as_str().expect("name").to_string(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = truth()
        .iter()
        .filter(|t| t.endpoint.starts_with("https://"))
        .map(|t| (identity(&t.endpoint), t.cluster.clone()))
        .collect();
    let lines = |v: Vec<&(String, String)>| -> String {
        v.iter().map(|(id, n)| format!("    {n}: {id}\n")).collect()
    };
    let missing = lines(expected.difference(&declared).collect());
    let extra = lines(declared.difference(&expected).collect());
    let right = expected.intersection(&declared).count();
    let numbered = declared
        .iter()
        .filter(|(_, n)| {
            n.strip_prefix("cluster-")
                .is_some_and(|d| d.parse::<usize>().is_ok())
        })
        .count();
    let not_clusters = declared
        .iter()
        .filter(|(id, _)| !expected.iter().any(|(e, _)| e == id))
        .count();
    println!(
        "init: {right} of {} clusters declared under the expected name; {} entries declared, \
         {not_clusters} of them not clusters, {numbered} named cluster-N",
        expected.len(),
        declared.len()
    );
    assert!(
        missing.is_empty() && extra.is_empty(),
        "init declared the wrong clusters\nexpected but not declared:\n{missing}declared but not expected:\n{extra}"
    );
    let check = run(&["check"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "check fails right after init:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn base64_matches_the_standard_alphabet() {
    assert_eq!(base64(""), "");
    assert_eq!(base64("f"), "Zg==");
    assert_eq!(base64("fo"), "Zm8=");
    assert_eq!(base64("foo"), "Zm9v");
    assert_eq!(
        base64("https://10.8.0.21:6443"),
        "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw=="
    );
}

#[test]
fn a_wrong_column_or_a_piece_of_a_longer_host_is_reported() {
    let mut t = truth()
        .into_iter()
        .find(|t| !t.base64 && t.endpoint.starts_with("https://"))
        .expect("a URL site");
    let mut files = BTreeMap::new();
    assert_eq!(check_site(&t, &mut files), None);
    t.column += 1;
    assert!(check_site(&t, &mut files).is_some());
    t.column -= 1;
    t.endpoint.pop();
    assert!(check_site(&t, &mut files).is_some(), "a prefix passed");
    let lines = ["a\r\nb\rc\nd", "x"];
    assert_eq!(yaml_lines(lines[0]), vec!["a", "b", "c", "d"]);
    assert_eq!(yaml_lines(lines[1]), vec!["x"]);
}
