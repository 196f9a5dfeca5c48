//! Files judged by what they are, not only by their extension: kubeconfigs
//! without a YAML extension are manifests; compressed archives are named,
//! never searched; a binary file is said to hold endpoint text only when the
//! endpoint rules find an endpoint in its bytes.

use crate::common::*;
use std::path::Path;

const EDGE: &str = "https://10.40.0.12:6443";
const EDGE_NEW: &str = "https://10.40.0.99:6443";

fn kubeconfig(server: &str) -> String {
    format!(
        "# no extension\napiVersion: v1\nclusters:\r\n- cluster:\n    server: {server}  # edge\n  name: edge-west\ncontexts: []\ncurrent-context: edge-west\nkind: Config\nusers: []"
    )
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Every name family, and a file found by its content alone.
const KUBECONFIG_NAMES: [&str; 5] = [
    "kubeconfig",
    "backup/kubeconfig~",
    "ops/.kube/config",
    "clusters/edge.kubeconfig",
    "kubeadm/admin.conf",
];

#[test]
fn kubeconfigs_without_a_yaml_extension_are_located_and_rewritten_byte_exact() {
    let d = tempfile::tempdir().unwrap();
    for rel in KUBECONFIG_NAMES {
        write(d.path(), rel, &kubeconfig(EDGE));
    }
    // Not kubeconfigs: prose that names the endpoint, and a `config` file
    // outside a `.kube` folder that is no kubeconfig.
    write(
        d.path(),
        "docs/edge.md",
        &format!("Edge answers at {EDGE}.\n"),
    );
    write(d.path(), "app/config", &format!("endpoint={EDGE}\n"));

    let scan = rebind(d.path(), &["scan", "--format", "json"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));
    let v: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
    let kinds: Vec<(String, String, String)> = v["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["kind"].as_str().unwrap().to_string(),
                o["yaml_path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for rel in KUBECONFIG_NAMES {
        assert!(
            kinds.contains(&(
                rel.to_string(),
                "value".to_string(),
                "clusters[0].cluster.server".to_string()
            )),
            "{rel} not located as a kubeconfig: {kinds:?}"
        );
    }
    for rel in ["docs/edge.md", "app/config"] {
        assert!(
            kinds.iter().all(|(p, k, _)| p != rel || k == "text"),
            "{rel} must stay a text file: {kinds:?}"
        );
    }

    let before = tree(d.path());
    let o = rebind(
        d.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            EDGE,
            "--to",
            EDGE_NEW,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = tree(d.path());
    for (rel, old) in &before {
        let new = &after[rel];
        let is_kubeconfig = KUBECONFIG_NAMES.contains(&rel.as_str());
        if is_kubeconfig {
            let want = String::from_utf8(old.clone())
                .unwrap()
                .replacen(EDGE, EDGE_NEW, 1);
            assert_eq!(String::from_utf8_lossy(new), want, "{rel}");
        } else {
            assert_eq!(new, old, "{rel} must not change");
        }
    }
}

#[test]
fn a_file_named_like_a_kubeconfig_that_is_not_yaml_stays_a_text_mention() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "kubeconfig",
        &format!("server: [{OLD}\n  broken: {{\n"),
    );
    let o = rebind(d.path(), &["scan", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let occ = v["occurrences"].as_array().unwrap();
    assert_eq!(occ.len(), 1, "{occ:?}");
    assert_eq!(occ[0]["kind"], "text");
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v}");
}

fn gzip_of(bytes: &[u8]) -> Vec<u8> {
    // A stored (uncompressed) deflate block: the endpoint's bytes stand in the
    // archive as they are, the worst case for a byte search.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.push(1);
    let n = bytes.len() as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(!n).to_le_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(&[0; 8]);
    out
}

#[test]
fn compressed_archives_are_named_once_and_never_searched() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "apps/a.yaml", &format!("server: {OLD}\n"));
    let chart = gzip_of(format!("values.yaml\0server: {OLD}\n").as_bytes());
    std::fs::create_dir_all(d.path().join("charts")).unwrap();
    std::fs::write(d.path().join("charts/dep-1.0.0.tgz"), &chart).unwrap();
    for args in [
        vec!["scan"],
        vec!["diff", "--from", OLD, "--to", NEW],
        vec!["scan", "--from", STAGE],
    ] {
        let o = rebind(d.path(), &args);
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(
            all.matches("charts/dep-1.0.0.tgz").count(),
            1,
            "{args:?}: {all}"
        );
        assert!(all.contains("gzip-compressed"), "{args:?}: {all}");
        assert!(!all.contains("holding endpoint text"), "{args:?}: {all}");
    }
}

#[test]
fn a_binary_file_holds_endpoint_text_only_when_an_endpoint_is_in_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "apps/a.yaml", &format!("server: {OLD}\n"));
    // The prefilter's needles (base64 of `https://`, the host in other
    // case) without an endpoint the rules accept.
    let mut chance = b"\0\x01aHR0cHM6Ly\xff".to_vec();
    chance.extend_from_slice(format!("{OLD_HOST}-mirror.example").as_bytes());
    std::fs::write(d.path().join("chance.bin"), &chance).unwrap();
    let mut real = b"\0\x01\x02".to_vec();
    real.extend_from_slice(format!(" {OLD} ").as_bytes());
    std::fs::write(d.path().join("real.bin"), &real).unwrap();

    let o = rebind(d.path(), &["diff", "--from", OLD, "--to", NEW]);
    let err = stderr(&o);
    assert!(
        err.contains("real.bin: skipped: binary file holding endpoint text"),
        "{err}"
    );
    assert!(!err.contains("chance.bin"), "{err}");
}

/// Every mention (comment, text file, template action) of an endpoint as a
/// `(path, line, column, kind)` set, from `scan --format json`.
fn mentions_of(dir: &Path, args: &[&str], endpoint_host: &str) -> Vec<(String, u64, u64, String)> {
    let mut all = vec!["scan", "--format", "json"];
    all.extend_from_slice(args);
    let o = rebind(dir, &all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut out: Vec<(String, u64, u64, String)> = v["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] != "value")
        .filter(|o| o["endpoint"].as_str().unwrap().contains(endpoint_host))
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["column"].as_u64().unwrap(),
                o["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_plain_scan_reports_the_mentions_that_from_would() {
    let d = tempfile::tempdir().unwrap();
    let url = "https://k8s-api.dc1.corp.example.net:6443";
    write(
        d.path(),
        "apps/a.yaml",
        &format!("# moved to {url} last spring\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a}}\nspec:\n  destination:\n    server: {url}\n"),
    );
    write(
        d.path(),
        "docs/runbook.md",
        &format!("Drain {url} first.\n"),
    );
    write(
        d.path(),
        "infra/main.tf",
        &format!("endpoint = \"{url}\"\n"),
    );
    let plain = mentions_of(d.path(), &[], "k8s-api.dc1");
    let from = mentions_of(d.path(), &["--from", url], "k8s-api.dc1");
    assert_eq!(plain.len(), 3, "{plain:?}");
    assert_eq!(plain, from);
    // And the text summary counts them with the endpoint.
    let o = rebind(d.path(), &["scan"]);
    assert!(
        stdout(&o).contains("(+ 1 comment, 2 text mentions"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_kubeconfig_with_a_byte_order_mark_is_found_by_its_content() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "admin.conf",
        &format!("\u{feff}{}", kubeconfig(EDGE)),
    );
    let before = std::fs::read(d.path().join("admin.conf")).unwrap();
    let o = rebind(
        d.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            EDGE,
            "--to",
            EDGE_NEW,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read(d.path().join("admin.conf")).unwrap();
    let want = String::from_utf8(before)
        .unwrap()
        .replacen(EDGE, EDGE_NEW, 1);
    assert_eq!(String::from_utf8(after).unwrap(), want);
}

/// URLs that are arguments, identity providers, token endpoints or proxies
/// inside a cluster registration's `config`: never workload endpoints, never
/// declared by `init`.
#[test]
fn exec_plugin_arguments_and_identity_providers_are_not_clusters() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/discovery/cluster-secrets/exec/aks-weu-prod.yaml");
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(&src, d.path().join("aks.yaml")).unwrap();
    let o = rebind(d.path(), &["scan", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let workloads: Vec<&str> = v["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "workload")
        .map(|e| e["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(
        workloads,
        vec!["https://aks-weu-prod-dns-7c1e9a2b.hcp.westeurope.azmk8s.io:443"]
    );
    let o = rebind(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cfg = std::fs::read_to_string(d.path().join(".rebind.yaml")).unwrap();
    for not_a_cluster in [
        "login.microsoftonline.com",
        "keycloak",
        "sts.corp",
        "proxy.corp",
    ] {
        assert!(!cfg.contains(not_a_cluster), "{cfg}");
    }
    assert!(cfg.contains("aks-weu-prod:"), "{cfg}");
}
