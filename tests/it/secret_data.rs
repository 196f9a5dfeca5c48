//! A Secret's base64 `data`, decoded all the way down: `data.config` (the
//! cluster Secret's JSON), `data.server` wrapped over lines, a kubeconfig in
//! `data.kubeconfig`, values that are no document, and base64 that is not
//! canonical. The expected bytes are built here with an encoder of this
//! test's own (and checked against the `base64` program where there is one).

use crate::common::{base64, rebind, skip, stderr, stdout};
use std::path::Path;

const OLD: &str = "https://old.example.com:6443";
const NEW: &str = "https://new.example.com";

/// Standard base64 with padding, written independently of rebind's codec.
fn enc(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `s` in lines of `width` characters joined by `sep` (`width` 0: one line).
fn wrap(s: &str, width: usize, sep: &str) -> String {
    if width == 0 {
        return s.to_string();
    }
    let chunks: Vec<&str> = (0..s.len())
        .step_by(width)
        .map(|i| &s[i..(i + width).min(s.len())])
        .collect();
    chunks.join(sep)
}

fn config(server_name: &str) -> String {
    // A CA long enough that the JSON wraps over many lines.
    let ca = enc(&(0..=255u8).cycle().take(600).collect::<Vec<u8>>());
    format!(
        "{{\"bearerToken\":\"${{ARGOCD_CLUSTER_TOKEN}}\",\"tlsClientConfig\":{{\"serverName\":\"{server_name}\",\"caData\":\"{ca}\"}}}}"
    )
}

fn secret(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-prod\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ntype: Opaque\ndata:\n  name: {}\n{data}",
        enc(b"prod")
    )
}

/// A cluster Secret whose `data.server` and `data.config` are `server`
/// and a config naming `server_name`, each base64 on one line.
fn registration(server: &str, server_name: &str) -> String {
    secret(&format!(
        "  server: {}\n  config: {}\n",
        enc(server.as_bytes()),
        enc(config(server_name).as_bytes())
    ))
}

/// An Application aimed at the old endpoint: the run has something else to
/// rewrite, so a value it missed would pass silently.
fn application() -> String {
    format!("kind: Application\nmetadata:\n  name: a\nspec:\n  destination:\n    server: {OLD}\n")
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn apply(dir: &Path) -> std::process::Output {
    rebind(
        dir,
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--from",
            OLD,
            "--to",
            NEW,
            ".",
        ],
    )
}

#[test]
fn data_config_server_name_is_rewritten_by_re_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let old = registration(OLD, "old.example.com");
    write(dir.path(), "secret.yaml", &old);
    let scan = rebind(dir.path(), &["scan", "."]);
    let listed = stdout(&scan);
    assert!(
        listed.contains(
            "secret.yaml:11:11: value    old.example.com  data.config (base64, whole value)"
        ),
        "{listed}"
    );
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = registration(NEW, "new.example.com");
    assert_eq!(read(dir.path(), "secret.yaml"), want);
    // Run again: nothing left to do.
    let again = apply(dir.path());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(read(dir.path(), "secret.yaml"), want);
}

/// Only `data.config` holds the old host (no `data.server` beside it): the
/// first look at the file must still read it.
#[test]
fn a_file_whose_only_endpoint_is_encoded_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let old = secret(&format!(
        "  config: {}\n",
        enc(config("old.example.com").as_bytes())
    ));
    write(dir.path(), "secret.yaml", &old);
    write(dir.path(), "app.yaml", &application());
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = secret(&format!(
        "  config: {}\n",
        enc(config("new.example.com").as_bytes())
    ));
    assert_eq!(read(dir.path(), "secret.yaml"), want);
}

/// Wrapped as `base64` prints it (76 columns) in each way YAML can hold
/// lines, and unwrapped (`base64 -w 0`): the same wrapping after the rewrite.
#[test]
fn wrapped_values_keep_their_wrapping() {
    let long = format!("{OLD}/k8s/some/long/path/that/makes/the/url/longer/than/one/line");
    let long_new = long.replacen(OLD, NEW, 1);
    // (YAML text for an encoded value, given the base64 text.)
    type Style = fn(&str) -> String;
    let styles: [(&str, Style); 6] = [
        ("literal", |b| format!("|\n    {}\n", wrap(b, 76, "\n    "))),
        ("literal strip", |b| {
            format!("|-\n    {}\n", wrap(b, 76, "\n    "))
        }),
        ("folded", |b| format!(">\n    {}\n", wrap(b, 76, "\n    "))),
        ("plain", |b| format!("{}\n", wrap(b, 76, "\n    "))),
        ("double-quoted", |b| {
            format!("\"{}\"\n", wrap(b, 76, "\n    "))
        }),
        ("unwrapped", |b| format!("{b}\n")),
    ];
    for (name, style) in styles {
        let dir = tempfile::tempdir().unwrap();
        let body = |server: &str, name: &str| {
            format!(
                "  server: {}  config: {}",
                style(&enc(server.as_bytes())),
                style(&enc(config(name).as_bytes()))
            )
        };
        write(
            dir.path(),
            "s.yaml",
            &secret(&body(&long, "old.example.com")),
        );
        let out = apply(dir.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(
            read(dir.path(), "s.yaml"),
            secret(&body(&long_new, "new.example.com")),
            "{name}"
        );
    }
}

/// The fixture's wrapping is what the `base64` program prints.
#[test]
fn the_wrapping_is_base64s() {
    let run = std::process::Command::new("base64")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = run else {
        return skip("the_wrapping_is_base64s", "no `base64` program");
    };
    use std::io::Write;
    let text = config("old.example.com");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let printed = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(
        printed,
        format!("{}\n", wrap(&enc(text.as_bytes()), 76, "\n"))
    );
}

#[test]
fn a_kubeconfig_in_data_is_read_as_one() {
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: {OLD}\n    tls-server-name: old.example.com\n    proxy-url: https://proxy.example.com:3128\ncontexts: []\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = |k: &str| {
        format!(
            "  kubeconfig: |\n    {}\n",
            wrap(&enc(k.as_bytes()), 76, "\n    ")
        )
    };
    write(dir.path(), "s.yaml", &secret(&data(&kubeconfig)));
    let scan = stdout(&rebind(dir.path(), &["scan", "."]));
    assert!(
        scan.contains("data.kubeconfig (base64, whole value) > clusters[0].cluster.server"),
        "{scan}"
    );
    assert!(!scan.contains("proxy.example.com"), "{scan}");
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = kubeconfig.replace(OLD, NEW).replace(
        "tls-server-name: old.example.com",
        "tls-server-name: new.example.com",
    );
    assert_eq!(read(dir.path(), "s.yaml"), secret(&data(&want)));
}

/// Random bytes, a certificate, a document without an endpoint: untouched
/// and not reported, beside the registration's values that are rewritten.
#[test]
fn base64_that_is_no_endpoint_is_left_alone() {
    let pem =
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZ3Jvb3Q=\n-----END CERTIFICATE-----\n";
    let random: Vec<u8> = (0..200u32).map(|i| (i * 7919 % 251) as u8).collect();
    let others = format!(
        "  ca.crt: {}\n  blob: {}\n  values: {}\n",
        enc(pem.as_bytes()),
        wrap(&enc(&random), 76, "\n    "),
        enc(b"replicas: 3\nimage: nginx\n"),
    );
    let old = registration(OLD, "old.example.com") + &others;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.yaml", &old);
    let scan = stdout(&rebind(dir.path(), &["scan", "."]));
    let lines: Vec<&str> = scan.lines().filter(|l| l.starts_with("s.yaml:")).collect();
    assert_eq!(lines.len(), 2, "{scan}");
    assert!(lines[0].contains("data.server"), "{scan}");
    assert!(lines[1].contains("data.config"), "{scan}");
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = registration(NEW, "new.example.com") + &others;
    assert_eq!(read(dir.path(), "s.yaml"), want);
}

/// A ConfigMap's `data` is no base64: a value that happens to decode is not
/// read as one.
#[test]
fn a_config_map_data_value_is_not_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "kind: ConfigMap\nmetadata:\n  name: c\ndata:\n  server: {}\n",
        enc(OLD.as_bytes())
    );
    write(dir.path(), "cm.yaml", &text);
    let scan = stdout(&rebind(dir.path(), &["scan", "."]));
    assert!(!scan.contains("cm.yaml:"), "{scan}");
}

/// Base64 that is not canonical (padding missing, wrapped irregularly)
/// around the endpoint: found (read laxly), reported, and a rebind refuses
/// it naming file:line:column, writing nothing.
#[test]
fn non_canonical_base64_at_the_endpoint_is_refused() {
    let full = enc(config("old.example.com").as_bytes());
    let irregular = format!("{}\n    {}", &full[..60], wrap(&full[60..], 76, "\n    "));
    let url_safe = enc(b"https://old.example.com:6443/?a>")
        .replace('+', "-")
        .replace('/', "_");
    let cases = [
        (
            "no padding",
            format!("  server: {}\n", enc(OLD.as_bytes()).trim_end_matches('=')),
            "s.yaml:10:11:",
        ),
        (
            "irregular",
            format!("  config: |\n    {irregular}\n"),
            "s.yaml:11:5:",
        ),
        (
            "url-safe",
            format!("  server: {url_safe}\n"),
            "s.yaml:10:11:",
        ),
    ];
    for (name, data, at) in cases {
        let dir = tempfile::tempdir().unwrap();
        let text = secret(&data);
        write(dir.path(), "s.yaml", &text);
        let app = application();
        write(dir.path(), "app.yaml", &app);
        let diff = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW, "."]);
        assert_eq!(diff.status.code(), Some(2), "{name}: {}", stderr(&diff));
        assert!(stderr(&diff).contains(at), "{name}: {}", stderr(&diff));
        // `scan` lists a URL (a bare `serverName` alone it does not look for).
        if data.contains("server:") {
            let listed = stdout(&rebind(dir.path(), &["scan", "."]));
            let line = listed.lines().find(|l| l.starts_with(at)).unwrap_or("");
            assert!(
                line.contains(&format!("value    {OLD}")),
                "{name}: {listed}"
            );
            let how = "data.server (base64, not canonical: a rebind refuses it)";
            assert!(line.contains(how), "{name}: {listed}");
        }
        let out = apply(dir.path());
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(at), "{name}: {err}");
        assert!(err.contains("not canonical base64"), "{name}: {err}");
        assert_eq!(read(dir.path(), "s.yaml"), text, "{name}");
        assert_eq!(read(dir.path(), "app.yaml"), app, "{name}");
    }
}

/// A reviewer cannot read base64: `diff` shows each decoded endpoint,
/// before and after, alone: a token, a password or control characters
/// beside it in the decoded text never reach the review.
#[test]
fn diff_shows_the_decoded_change() {
    let dir = tempfile::tempdir().unwrap();
    let old = registration(OLD, "old.example.com");
    write(dir.path(), "s.yaml", &old);
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let d = stdout(&out);
    assert!(d.contains(&format!("#   - {OLD}\n#   + {NEW}\n")), "{d}");
    assert!(
        d.contains("#   - old.example.com\n#   + new.example.com\n"),
        "{d}"
    );
    assert!(
        !d.contains("ARGOCD_CLUSTER_TOKEN"),
        "the token is not shown: {d}"
    );
    // Secrets and control characters beside the endpoint in decoded text.
    let host = OLD.trim_start_matches("https://");
    let config = format!(
        "{{\"tlsClientConfig\":{{\"serverName\":\"{host}\"}},\"bearerToken\":\"eyJhbGciOiJSUzI1NiJ9\"}}"
    );
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: {}\n  config: {}\n  note: {}\n",
        base64(&format!("https://admin:S3cretPassw0rd@{host}")),
        base64(&config),
        base64(&format!("{OLD} \u{1b}[2K\u{1b}[1Gnothing to see"))
    );
    write(dir.path(), "s.yaml", &text);
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW, "."]);
    let d = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}\n{d}", stderr(&out));
    assert!(
        d.contains(&format!("#   - https://admin:***@{host}\n")),
        "{d}"
    );
    for secret in ["S3cret", "eyJhbG", "\u{1b}"] {
        assert!(!d.contains(secret), "{secret:?} shown: {d}");
    }
}

/// A JSON file the YAML parser refuses (a surrogate pair, as Python's
/// `json.dump` writes it) is read by the JSON reader: its base64 data the
/// same way, verified by the JSON check.
#[test]
fn a_json_only_secret_is_re_encoded_too() {
    let json = |server: &str, name: &str| {
        format!(
            "{{\"kind\": \"Secret\", \"metadata\": {{\"name\": \"\\ud83d\\ude00\"}}, \"data\": {{\"server\": \"{}\", \"config\": \"{}\"}}}}\n",
            enc(server.as_bytes()),
            enc(config(name).as_bytes())
        )
    };
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.json", &json(OLD, "old.example.com"));
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(dir.path(), "s.json"), json(NEW, "new.example.com"));
}

/// `rebind secret`'s search for a Secret registering the same server reads
/// a wrapped `data.server` as the locator does.
#[test]
fn the_duplicate_search_reads_a_wrapped_server() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    let server = format!("{NEW}/k8s/clusters/c-m-0123456789abcdef0123456789abcdef0123");
    std::fs::write(
        root.join("dup.yaml"),
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: legacy\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\ndata:\n  server: |\n    {}\n",
            wrap(&enc(server.as_bytes()), 76, "\n    ")
        ),
    )
    .unwrap();
    crate::common::git_init_commit(root);
    let out = rebind(root, &["secret", "--name", "green", "--server", &server]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("  Secret argocd/legacy, declared at\n    dup.yaml:"),
        "{err}"
    );
}

/// `data.config` is read by the same embedded-document rule as
/// `stringData.config`: its bare `serverName` follows the cluster, a URL of
/// an exec plugin's argument inside it is no cluster.
#[test]
fn data_config_is_read_like_string_data_config() {
    let config = "{\"execProviderConfig\":{\"command\":\"argocd-k8s-auth\",\"args\":[\"--issuer\",\"https://login.example.org/tenant\"]},\"tlsClientConfig\":{\"serverName\":\"old.example.com\"}}";
    let scan = |data: &str| {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "s.yaml",
            &secret(&format!("  server: {}\n{data}", enc(OLD.as_bytes()))),
        );
        let out = stdout(&rebind(dir.path(), &["scan", "."]));
        out.lines()
            .filter(|l| l.starts_with("s.yaml:"))
            .map(|l| {
                l.split_once(": ")
                    .unwrap()
                    .1
                    .replace("stringData", "data")
                    .replace(" (base64, whole value)", "")
            })
            .collect::<Vec<String>>()
    };
    let plain = scan(&format!("stringData:\n  config: '{config}'\n"));
    let encoded = scan(&format!("  config: {}\n", enc(config.as_bytes())));
    assert_eq!(encoded, plain);
    assert_eq!(encoded.len(), 2, "{encoded:?}");
    assert!(
        encoded[1].contains("old.example.com  data.config"),
        "{encoded:?}"
    );
    assert!(
        !encoded.iter().any(|l| l.contains("login.example.org")),
        "{encoded:?}"
    );
}

/// The diff of a base64 value wrapped over many lines covers every line it
/// spans (the change may be deep inside), and applied as a patch (the
/// decoded lines after the hunks are no part of it) gives what `apply` writes.
#[test]
fn the_diff_of_a_long_wrapped_value_is_a_patch() {
    let mut kubeconfig = String::from("apiVersion: v1\nkind: Config\nusers:\n");
    for i in 0..30 {
        kubeconfig.push_str(&format!("- name: user-{i}\n  user:\n    token: t{i}\n"));
    }
    kubeconfig.push_str(&format!(
        "clusters:\n- name: prod\n  cluster:\n    server: {OLD}\n"
    ));
    let data = format!(
        "  kubeconfig: |\n    {}\n",
        wrap(&enc(kubeconfig.as_bytes()), 76, "\n    ")
    );
    let dir = tempfile::tempdir().unwrap();
    let old = secret(&data);
    write(dir.path(), "s.yaml", &old);
    let out = rebind(dir.path(), &["diff", "--from", OLD, "--to", NEW, "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let patch: String = text
        .split_inclusive('\n')
        .take_while(|l| *l != "\n")
        .filter(|l| !l.starts_with("# "))
        .collect();
    assert!(
        text.contains(&format!("#   - {OLD}\n#   + {NEW}\n")),
        "{text}"
    );
    let (_, patched) = crate::common::patch::apply(&patch, &old).unwrap();
    let applied = apply(dir.path());
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    assert_eq!(patched, read(dir.path(), "s.yaml"));
    let want = kubeconfig.replace(OLD, NEW);
    let want = secret(&format!(
        "  kubeconfig: |\n    {}\n",
        wrap(&enc(want.as_bytes()), 76, "\n    ")
    ));
    assert_eq!(patched, want);
}

/// A rewrite that would make two keys of a decoded document equal is
/// refused, as in a plain string's document.
#[test]
fn keys_colliding_inside_decoded_data_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let doc = format!("{OLD}: a\n{NEW}: b\n");
    let text = secret(&format!("  clusters: {}\n", enc(doc.as_bytes())));
    write(dir.path(), "s.yaml", &text);
    let app = application();
    write(dir.path(), "app.yaml", &app);
    let out = rebind(
        dir.path(),
        &[
            "apply",
            "--no-commit",
            "--yes",
            "--allow-merge",
            "--from",
            OLD,
            "--to",
            NEW,
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("s.yaml:10:13: the rewrite would make two keys of one mapping equal"),
        "{err}"
    );
    assert_eq!(read(dir.path(), "s.yaml"), text);
    assert_eq!(read(dir.path(), "app.yaml"), app);
}

/// A comment of a decoded document (a kubeconfig in `data`) is a comment:
/// listed, never rewritten; the value beside it is, and the base64 is
/// re-encoded with the comment as it was.
#[test]
fn a_comment_inside_decoded_data_is_never_rewritten() {
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: p\n  cluster:\n    server: {OLD} # was {OLD}\n"
    );
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  kubeconfig: {}\n",
        base64(&kubeconfig)
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.yaml", &text);
    let out = apply(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  kubeconfig: {}\n",
        base64(&kubeconfig.replacen(OLD, NEW, 1))
    );
    assert_eq!(read(dir.path(), "s.yaml"), want);
    assert!(
        stdout(&out).contains("s.yaml:6:15: comment"),
        "{}",
        stdout(&out)
    );
}
