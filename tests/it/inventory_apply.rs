//! Byte-exact rebinds of every endpoint the discovery corpus holds, category
//! by category (`testdata/discovery/<category>`, sites from `truth.tsv`).
//!
//! For each URL in a category, on a fresh copy of that folder:
//! `rebind apply --no-commit --yes --from URL --to NEW` must change exactly
//! the truth sites of that endpoint (a bare host where its host is the URL's,
//! base64 `data.server` re-encoded whole) and nothing else, compared with a
//! plain replacement of those sites; and `scan --from NEW` afterwards must
//! find NEW where the old endpoint was, and `scan --from OLD` no value.

use crate::common::{base64, copy_dir, rebind, stderr, stdout, tree};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const NEW: &str = "https://rebound-cp.example.org:7443";
const NEW_HOST: &str = "rebound-cp.example.org";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/discovery")
}

#[derive(Debug, Clone)]
struct Site {
    path: String,
    line: usize,
    column: usize,
    endpoint: String,
    base64: bool,
}

fn truth(category: &str) -> Vec<Site> {
    let text = std::fs::read_to_string(corpus().join("truth.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[4] == category)
        .map(|f| Site {
            path: f[0].strip_prefix(&format!("{category}/")).unwrap().into(),
            line: f[1].parse().unwrap(),
            column: f[2].parse().unwrap(),
            endpoint: f[3].into(),
            base64: f.get(6) == Some(&"base64"),
        })
        .collect()
}

/// `host[:port][/k8s/clusters/id]` lower-cased, `:443` dropped.
fn identity(url: &str) -> String {
    let rest = url.strip_prefix("https://").unwrap_or(url);
    let (auth, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let auth = auth.strip_suffix(":443").unwrap_or(auth);
    format!("{}{path}", auth.to_ascii_lowercase())
}

/// The sites a rebind of `from` must change, with their text before and after.
fn sites_of(from: &str, sites: &[Site]) -> Vec<(Site, String, String)> {
    let id = identity(from);
    let host_port = id.split('/').next().unwrap().to_string();
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.to_string()),
        None => (host_port.clone(), "443".into()),
    };
    let mut out = Vec::new();
    for s in sites {
        if s.endpoint.starts_with("https://") {
            if identity(&s.endpoint) != id {
                continue;
            }
            let (old, new) = if s.base64 {
                (base64(&s.endpoint), base64(NEW))
            } else {
                (s.endpoint.clone(), NEW.to_string())
            };
            out.push((s.clone(), old, new));
        } else {
            let (h, p) = match s.endpoint.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p.to_string())),
                None => (s.endpoint.to_ascii_lowercase(), None),
            };
            if h != host || id.contains('/') || p.as_ref().is_some_and(|p| *p != port) {
                continue;
            }
            let new = match p {
                Some(_) => format!("{NEW_HOST}:7443"),
                None => NEW_HOST.to_string(),
            };
            out.push((s.clone(), s.endpoint.clone(), new));
        }
    }
    out
}

/// Byte offset of a 1-based line and character column (YAML line breaks).
fn offset(text: &str, line: usize, column: usize) -> usize {
    let b = text.as_bytes();
    let mut starts = vec![0];
    for i in 0..b.len() {
        if b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            starts.push(i + 1);
        }
    }
    let start = starts[line - 1];
    text[start..]
        .char_indices()
        .nth(column - 1)
        .map(|(i, _)| start + i)
        .unwrap()
}

/// Rebinds every URL of `category` in turn (each on a fresh copy) and checks
/// the bytes and the scan afterwards; returns how many sites were rewritten.
fn rebind_category(category: &str) -> usize {
    let sites = truth(category);
    assert!(!sites.is_empty(), "{category} has no site");
    let mut froms: Vec<String> = Vec::new();
    for s in sites.iter().filter(|s| s.endpoint.starts_with("https://")) {
        if !froms.iter().any(|f| identity(f) == identity(&s.endpoint)) {
            froms.push(s.endpoint.clone());
        }
    }
    let mut rewritten = 0;
    for from in &froms {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&corpus().join(category), dir.path());
        let before = tree(dir.path());
        let changes = sites_of(from, &sites);

        // The expected tree: a plain replacement at each site, last first.
        let mut expected = before.clone();
        let mut by_file: BTreeMap<&str, Vec<&(Site, String, String)>> = BTreeMap::new();
        for c in &changes {
            by_file.entry(c.0.path.as_str()).or_default().push(c);
        }
        for (path, mut cs) in by_file.clone() {
            let mut text = String::from_utf8(expected[path].clone()).unwrap();
            cs.sort_by_key(|c| std::cmp::Reverse((c.0.line, c.0.column)));
            for (s, old, new) in cs {
                let at = offset(&text, s.line, s.column);
                assert_eq!(
                    &text[at..at + old.len()],
                    old,
                    "{path}:{}:{}",
                    s.line,
                    s.column
                );
                text.replace_range(at..at + old.len(), new);
            }
            expected.insert(path.to_string(), text.into_bytes());
        }

        let out = rebind(
            dir.path(),
            &[
                "apply",
                "--no-commit",
                "--yes",
                "--from",
                from,
                "--to",
                NEW,
                ".",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{category}: apply --from {from} failed:\n{}{}",
            stdout(&out),
            stderr(&out)
        );
        let after = tree(dir.path());
        for (path, want) in &expected {
            assert!(
                after.get(path) == Some(want),
                "{category}: after rebinding {from}, {path} is not the plain replacement of its sites:\n--- expected\n{}\n--- got\n{}",
                String::from_utf8_lossy(want),
                String::from_utf8_lossy(after.get(path).map_or(&[][..], |v| &v[..]))
            );
        }
        assert_eq!(
            after.len(),
            expected.len(),
            "{category}: files added or removed"
        );

        // The scan now lists NEW at every site, and the old endpoint in no value.
        // `--from NEW`: a site found by its host's shape alone (an AKS
        // `kube_api` output) holds a host of no shape now.
        let scan = rebind(dir.path(), &["scan", "--json", "--from", NEW, "."]);
        let json: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
        let values: Vec<(String, usize, usize, String)> = json["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "value")
            .map(|o| {
                let p = o["path"].as_str().unwrap();
                (
                    p.strip_prefix("./").unwrap_or(p).to_string(),
                    o["line"].as_u64().unwrap() as usize,
                    o["column"].as_u64().unwrap() as usize,
                    o["endpoint"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        for (path, cs) in &by_file {
            // Columns move right of an earlier site on the same line.
            let mut cs = cs.clone();
            cs.sort_by_key(|c| (c.0.line, c.0.column));
            let mut shift = 0isize;
            let mut last_line = 0;
            for (s, old, new) in cs {
                if s.line != last_line {
                    shift = 0;
                    last_line = s.line;
                }
                let column = (s.column as isize + shift) as usize;
                shift += new.chars().count() as isize - old.chars().count() as isize;
                let want = if s.base64 || s.endpoint.starts_with("https://") {
                    NEW.to_string()
                } else {
                    new.clone()
                };
                assert!(
                    values
                        .iter()
                        .any(|v| v.0 == *path && v.1 == s.line && v.2 == column && v.3 == want),
                    "{category}: scan after rebinding {from} does not list {want} at {path}:{}:{column}; values: {values:?}",
                    s.line
                );
            }
        }
        let old = rebind(dir.path(), &["scan", "--json", "--from", from, "."]);
        let old: serde_json::Value = serde_json::from_slice(&old.stdout).unwrap();
        let left: Vec<&serde_json::Value> = old["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "value")
            .collect();
        assert!(
            left.is_empty(),
            "{category}: {from} is still in a value after the rebind: {left:?}"
        );
        rewritten += changes.len();
    }
    rewritten
}

#[test]
fn appset_list_rebinds_byte_exactly() {
    assert_eq!(rebind_category("appset-list"), 15);
}

#[test]
fn kustomize_patches_rebind_byte_exactly() {
    assert_eq!(rebind_category("kustomize-patches"), 7);
}

#[test]
fn kubeconfigs_rebind_byte_exactly() {
    // Two `tls-server-name`s name another host than their URL: they stay.
    // Five of the ten sites are in kubeconfigs without a YAML extension
    // (`kubeconfig`, `kubeconfig~`, `.kube/config`, `*.kubeconfig`, and
    // kubeadm's `admin.conf`, found by its content).
    assert_eq!(rebind_category("kubeconfig"), 10);
}

#[test]
fn cluster_secrets_rebind_byte_exactly() {
    // `kind-dev-control-plane` follows its URL; two serverNames do not. The
    // AKS Secret's exec-plugin arguments (identity provider, token endpoint,
    // proxy) are not rewritten with its server.
    assert_eq!(rebind_category("cluster-secrets"), 8);
}

#[test]
fn exported_backups_rebind_byte_exactly() {
    assert_eq!(rebind_category("exported-backups"), 16);
}

#[test]
fn platforms_rebind_byte_exactly() {
    assert_eq!(rebind_category("platforms"), 16);
}
