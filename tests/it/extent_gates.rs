//! What a gate reads from a rebind's exit code: a refusal says what to do
//! (an IPv6 `--to` into a plain value of a flow collection), the same run
//! again is done (a bare host rebound to an IP), and a `--from` that only
//! mentions hold is refused, not passed.

use crate::common::*;
use std::fs;

fn apply(dir: &std::path::Path, from: &str, to: &str) -> (Option<i32>, String) {
    let out = rebind(
        dir,
        &["apply", "--no-commit", "--yes", "--from", from, "--to", to],
    );
    (out.status.code(), stdout(&out) + &stderr(&out))
}

#[test]
fn an_ipv6_to_into_a_plain_flow_value_is_refused_saying_to_quote_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind: Application\nmetadata: {name: a}\nspec:\n  destination: {server: https://old.example.com, namespace: x}\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com",
        "https://[fd00::2]:6443",
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("a.yaml:4:25: the rewritten file would no longer parse"),
        "{out}"
    );
    assert!(
        out.contains("quote that value in the file (\"https://old.example.com\")"),
        "{out}"
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), text);
    // Quoted as told, it is rewritten.
    let quoted = text.replace(
        "server: https://old.example.com,",
        "server: \"https://old.example.com\",",
    );
    fs::write(dir.path().join("a.yaml"), &quoted).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com",
        "https://[fd00::2]:6443",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        quoted.replace("https://old.example.com", "https://[fd00::2]:6443")
    );
}

#[test]
fn a_bare_host_rebound_to_an_ip_is_already_rebound_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind: ConfigMap\nmetadata: {name: a}\ndata:\n  host: old.example.com\n  list: [old.example.com]\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    for to in ["https://10.0.0.2", "https://[fd00::2]"] {
        fs::write(dir.path().join("a.yaml"), text).unwrap();
        let (code, out) = apply(dir.path(), "https://old.example.com", to);
        assert_eq!(code, Some(0), "{to}: {out}");
        let after = fs::read_to_string(dir.path().join("a.yaml")).unwrap();
        assert!(!after.contains("old.example.com"), "{to}: {after}");
        let (code, out) = apply(dir.path(), "https://old.example.com", to);
        assert_eq!(code, Some(0), "{to}: {out}");
        assert!(out.contains("Already rebound"), "{to}: {out}");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            after
        );
    }
}

#[test]
fn a_from_only_mentions_hold_is_refused_listing_them() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind: ConfigMap\nmetadata: {name: a}\n# was https://old.example.com\ndata:\n  b: http://old.example.com:80\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    fs::write(
        dir.path().join("README.md"),
        "see https://old.example.com\n",
    )
    .unwrap();
    let before = tree(dir.path());
    for cmd in ["diff", "apply"] {
        let mut args = vec![
            cmd,
            "--from",
            "https://old.example.com",
            "--to",
            "https://new.example.com",
        ];
        if cmd == "apply" {
            args.extend(["--no-commit", "--yes"]);
        }
        let out = rebind(dir.path(), &args);
        let all = stdout(&out) + &stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {all}");
        assert!(
            all.contains("https://old.example.com is in no value, only in 3 mentions"),
            "{cmd}: {all}"
        );
        for line in [
            "README.md:1:5: text https://old.example.com",
            "a.yaml:3:7: comment https://old.example.com",
            "a.yaml:5:6: text http://old.example.com:80 (another scheme than https",
        ] {
            assert!(all.contains(line), "{cmd}: {line}\n{all}");
        }
        assert_eq!(tree(dir.path()), before, "{cmd}");
    }
}

#[test]
fn a_dot_after_the_endpoint_is_refused_before_an_ip_to() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind: Application\nmetadata: {name: a}\nspec:\n  destination:\n    server: https://old.example.com.\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    let (code, out) = apply(dir.path(), "https://old.example.com", "https://10.0.0.2");
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("a.yaml:5:13: \"https://old.example.com\" is followed by a dot"),
        "{out}"
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), text);
    // To a DNS name the dot stays where it was.
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com",
        "https://new.example.com",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        text.replace("old.example.com", "new.example.com")
    );
}

#[test]
fn a_dot_after_the_host_is_refused_before_a_port_and_kept_after_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = "kind: Application\nmetadata: {name: a}\nspec:\n  destination:\n    server: https://old.example.com.\n  tls:\n    serverName: old.example.com.\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com",
        "https://new.example.com:6443",
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("a.yaml:5:13: \"https://old.example.com\" is followed by a dot"),
        "{out}"
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), text);
    // A bare host keeps no port: its dot stays behind the new name.
    let bare = "kind: Secret\nmetadata: {name: a}\nstringData:\n  config: |\n    {\"tlsClientConfig\": {\"serverName\": \"old.example.com.\"}}\n";
    fs::write(dir.path().join("a.yaml"), bare).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com",
        "https://new.example.com:6443",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        bare.replace("old.example.com.", "new.example.com.")
    );
    // A dot that already followed a port stays after the new port.
    let text = "kind: Application\nmetadata: {name: a}\nspec:\n  destination:\n    server: https://old.example.com:6443.\n";
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com:6443",
        "https://10.0.0.2:7443",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        text.replace("https://old.example.com:6443.", "https://10.0.0.2:7443.")
    );
    // But never after an IP address.
    fs::write(dir.path().join("a.yaml"), text).unwrap();
    let (code, out) = apply(
        dir.path(),
        "https://old.example.com:6443",
        "https://10.0.0.2",
    );
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(fs::read_to_string(dir.path().join("a.yaml")).unwrap(), text);
}

/// The same gate inside a document held in a string: a Secret's `stringData`
/// YAML, its base64 `data.kubeconfig`, a kustomize patch. A rewrite that
/// would leave the inner document unparsable is refused, saying to quote
/// the value there; written in block style, the same documents are rewritten
/// and still parse.
#[test]
fn an_ipv6_to_that_would_break_a_document_held_in_a_string_is_refused() {
    let old = "https://old.example.com";
    let to = "https://[fd00::1]:6443";
    let flow_kc = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: p, cluster: {{server: {old}}}}}]\n"
    );
    let block_kc = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: p\n  cluster:\n    server: {old}\n"
    );
    let secret = |kc: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: a}}\nstringData:\n  kc: |\n{}",
            kc.lines().map(|l| format!("    {l}\n")).collect::<String>()
        )
    };
    let data = |kc: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: a}}\ndata:\n  kubeconfig: {}\n",
            base64(kc)
        )
    };
    let patch = |inner: &str| {
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n- target: {{kind: Application}}\n  patch: |\n{}",
            inner.lines().map(|l| format!("    {l}\n")).collect::<String>()
        )
    };
    let flow_patch = format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: x}}\nspec: {{destination: {{server: {old}}}}}\n");
    let block_patch = format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: x\nspec:\n  destination:\n    server: {old}\n");
    for (broken, fine) in [
        (secret(&flow_kc), secret(&block_kc)),
        (data(&flow_kc), data(&block_kc)),
        (patch(&flow_patch), patch(&block_patch)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.yaml"), &broken).unwrap();
        let (code, out) = apply(dir.path(), old, to);
        assert_eq!(code, Some(2), "{broken}\n{out}");
        assert!(
            out.contains("the document held in this string would no longer parse"),
            "{out}"
        );
        assert!(out.contains("quote that value"), "{out}");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            broken
        );

        fs::write(dir.path().join("a.yaml"), &fine).unwrap();
        let (code, out) = apply(dir.path(), old, to);
        assert_eq!(code, Some(0), "{fine}\n{out}");
        let after = fs::read_to_string(dir.path().join("a.yaml")).unwrap();
        assert_ne!(after, fine);
    }
}
