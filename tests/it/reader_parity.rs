//! One locator core for YAML and JSON: a document that both parsers read
//! yields the same occurrences (byte ranges, lines, kinds, paths, positions,
//! resources, naming hints, escapes, embedded findings) whichever reads it,
//! and JSON that only the JSON reader takes (a surrogate-pair escape, as
//! Python's `json.dump` writes) is located by the same rules.
//!
//! More cases: `PROPTEST_CASES=5000 cargo test --release --test reader_parity`.

use proptest::prelude::*;
use rebind::find::locate::{self, Located};
use serde_json::{json, Value};

const EKS: &str = "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";
const EKS_HOST: &str = "0123456789abcdef0123456789abcdef.gr7.ap-northeast-2.eks.amazonaws.com";

/// What a consumer sees of an occurrence (the event index differs by design).
fn seen(l: &Located) -> Vec<String> {
    let mut out: Vec<String> = l
        .occurrences
        .iter()
        .map(|o| {
            format!(
                "{:?} {}:{} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?} {:?} {:?} {:?}",
                o.found,
                o.line,
                o.column,
                o.endpoint,
                o.kind,
                o.yaml_path,
                o.position,
                o.resource,
                o.cluster_position,
                o.cluster_hint,
                o.hint_source,
                o.encoding,
                o.value_range,
                o.escaped.as_ref().map(|e| (&e.inner, &e.found)),
            )
        })
        .collect();
    out.extend(l.destinations.iter().map(|d| format!("{d:?}")));
    out
}

/// The decoded view: what stays the same when the bytes that write it differ.
fn decoded(l: &Located) -> Vec<String> {
    let mut out: Vec<String> = l
        .occurrences
        .iter()
        .map(|o| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {} {:?} {:?}",
                o.endpoint,
                o.kind,
                o.yaml_path,
                o.position,
                o.resource,
                o.cluster_position,
                o.cluster_hint,
                o.encoding,
            )
        })
        .collect();
    out.extend(l.destinations.iter().map(|d| format!("{d:?}")));
    out
}

/// Every non-ASCII character as a `\u` escape (surrogate pairs beyond the
/// BMP), as Python's `json.dump` writes: the YAML parser refuses the pairs.
fn ascii_json(v: &Value) -> String {
    let mut out = String::new();
    for c in serde_json::to_string(v).unwrap().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// Both readers on the same text (when the YAML parser takes it), with and
/// without the hosts a rebind asks for.
fn same_either_way(text: &str) -> Result<(), TestCaseError> {
    let Ok(via_yaml) = locate::locate_yaml(text, &[], false) else {
        return Ok(());
    };
    let via_json = rebind::find::jsonfile::locate(text, &[], false).unwrap();
    prop_assert_eq!(seen(&via_json), seen(&via_yaml), "{}", text);
    let hosts: Vec<String> = via_yaml
        .occurrences
        .iter()
        .map(|o| o.found.host.to_ascii_lowercase())
        .collect();
    if !hosts.is_empty() {
        let via_yaml = locate::locate_yaml(text, &hosts, true).unwrap();
        let via_json = rebind::find::jsonfile::locate(text, &hosts, true).unwrap();
        prop_assert_eq!(seen(&via_json), seen(&via_yaml), "{}", text);
    }
    Ok(())
}

/// A document only the JSON reader takes is located like the same data
/// written so that the YAML parser takes it.
fn same_decoded(v: &Value) -> Result<(), TestCaseError> {
    let mut with_pair = v.clone();
    if let Value::Object(m) = &mut with_pair {
        m.insert("note".into(), Value::String("\u{1f600}".into()));
    }
    let plain = serde_json::to_string(&with_pair).unwrap();
    let Ok(via_yaml) = locate::locate_yaml(&plain, &[], false) else {
        return Ok(());
    };
    let escaped = ascii_json(&with_pair);
    prop_assert!(locate::locate_yaml(&escaped, &[], false).is_err());
    let via_json = rebind::find::jsonfile::locate(&escaped, &[], false).unwrap();
    prop_assert_eq!(decoded(&via_json), decoded(&via_yaml), "{}", escaped);
    Ok(())
}

// ---------------------------------------------------------------------------
// Where the two locators used to disagree: the YAML locator's rule now holds
// for a file that only the JSON reader takes.
// ---------------------------------------------------------------------------

fn only_json(v: &Value) -> (Located, Located) {
    let mut v = v.clone();
    v["note"] = Value::String("\u{1f600}".into());
    let plain = serde_json::to_string_pretty(&v).unwrap();
    let via_yaml = locate::locate_yaml(&plain, &[], false).unwrap();
    let escaped = ascii_json(&v);
    assert!(locate::locate_yaml(&escaped, &[], false).is_err());
    let via_json = rebind::find::jsonfile::locate(&escaped, &[], false).unwrap();
    assert_eq!(decoded(&via_json), decoded(&via_yaml), "{escaped}");
    (via_json, via_yaml)
}

#[test]
fn a_bare_server_name_in_a_secrets_config_is_found_and_follows_its_url() {
    let v = json!({
        "kind": "Secret",
        "metadata": {"name": "prod", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {
            "name": "prod",
            "server": "https://10.1.2.3:6443",
            "config": "{\"tlsClientConfig\":{\"serverName\":\"kind-prod-control-plane\"}}"
        }
    });
    let (l, _) = only_json(&v);
    let bare = l
        .occurrences
        .iter()
        .find(|o| o.endpoint == "kind-prod-control-plane")
        .expect("the bare TLS name is found");
    assert!(
        !bare.cluster_position,
        "a bare TLS name is no cluster of its own"
    );
}

#[test]
fn embedded_documents_are_read_in_a_json_only_file() {
    let applied = serde_json::to_string(&json!({
        "kind": "Application",
        "spec": {"destination": {"server": "https://k.example.com:6443"}}
    }))
    .unwrap();
    let v = json!({
        "kind": "Application",
        "metadata": {"name": "api", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": applied
        }},
        "spec": {"destination": {"server": "https://k.example.com:6443"}}
    });
    let (l, _) = only_json(&v);
    let paths: Vec<_> = l
        .occurrences
        .iter()
        .map(|o| o.yaml_path.clone().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"] > spec.destination.server",
            "spec.destination.server"
        ]
    );
    let v = json!({
        "kind": "Kustomization",
        "patches": [{"patch": "- op: replace\n  path: /spec/destination/server\n  value: https://10.9.8.7:6443\n"}]
    });
    let (l, _) = only_json(&v);
    assert_eq!(l.occurrences.len(), 1);
    assert_eq!(
        l.occurrences[0].position,
        Some(rebind::model::positions::Position::PatchOp)
    );
}

#[test]
fn exported_lists_and_names_follow_the_yaml_rules() {
    let v = json!({
        "kind": "List",
        "items": [
            {"kind": "Secret", "metadata": {"name": "s"}, "data": {"server": "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw=="}},
            {"kind": "Application", "metadata": {"name": "a"}, "spec": {"destination": {"server": EKS}}}
        ]
    });
    let (l, _) = only_json(&v);
    let got: Vec<_> = l
        .occurrences
        .iter()
        .map(|o| (o.endpoint.clone(), o.resource.clone(), o.encoding.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "https://10.8.0.21:6443".to_string(),
                Some("Secret/s".to_string()),
                true
            ),
            (EKS.to_string(), Some("Application/a".to_string()), false),
        ]
    );
}

// ---------------------------------------------------------------------------
// The property: any document both parsers read.
// ---------------------------------------------------------------------------

const KEYS: &[&str] = &[
    "kind",
    "metadata",
    "name",
    "spec",
    "destination",
    "server",
    "stringData",
    "data",
    "config",
    "tlsClientConfig",
    "serverName",
    "tls-server-name",
    "clusters",
    "cluster",
    "clusterName",
    "generators",
    "list",
    "elements",
    "template",
    "url",
    "env",
    "items",
    "patch",
    "path",
    "op",
    "value",
    "annotations",
    "kubectl.kubernetes.io/last-applied-configuration",
    "clusterEndpoint",
    "helm",
    "values",
    "parameters",
    "status",
    "namespace",
    "repoURL",
    "project",
];
const KINDS: &[&str] = &[
    "Application",
    "ApplicationSet",
    "AppProject",
    "Secret",
    "ExternalSecret",
    "ConfigMap",
    "Config",
    "List",
    "Kustomization",
];

fn leaf() -> impl Strategy<Value = Value> {
    let urls = prop_oneof![
        Just(EKS.to_string()),
        Just(format!("https://{EKS_HOST}:443/")),
        Just(EKS_HOST.to_string()),
        Just("https://api.ocp4.example.com:6443".to_string()),
        Just("https://10.0.0.1:6443".to_string()),
        Just("10.0.0.1".to_string()),
        Just("https://[fd00::1]:6443".to_string()),
        Just("https://kubernetes.default.svc".to_string()),
        Just("https://charts.example.com/x".to_string()),
        Just("kind-dev-control-plane".to_string()),
        Just("{{url}}".to_string()),
        Just("aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw==".to_string()),
        Just(format!("a: 1\nserver: {EKS}\nclusterName: blue\n")),
        Just(format!(
            "- op: replace\n  path: /spec/destination/server\n  value: {EKS}\n"
        )),
        Just(format!(
            "{{\"tlsClientConfig\":{{\"serverName\":\"{EKS_HOST}\"}}}}"
        )),
        Just(format!("see {EKS} and https://10.0.0.1:6443")),
        "[a-z .:/-]{0,10}",
        "\\PC{0,6}",
    ];
    prop_oneof![
        4 => urls.prop_map(Value::String),
        1 => prop::sample::select(KINDS).prop_map(|k| Value::String(k.to_string())),
        1 => any::<i32>().prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ]
}

fn document() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(KEYS).prop_map(str::to_string);
    let value = leaf().prop_recursive(5, 48, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner.clone(), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            // A document inside a string (JSON text).
            inner.prop_map(|v| Value::String(serde_json::to_string(&v).unwrap())),
        ]
    });
    (
        prop::sample::select(KINDS),
        prop::collection::btree_map(
            prop::sample::select(KEYS).prop_map(str::to_string),
            value,
            0..6,
        ),
    )
        .prop_map(|(kind, mut m)| {
            m.insert("kind".into(), Value::String(kind.to_string()));
            Value::Object(m.into_iter().collect())
        })
}

proptest! {
    #[test]
    fn any_document_both_parsers_read_is_located_the_same(
        v in document(),
        pretty in any::<bool>(),
        slash in any::<bool>(),
        uh in any::<bool>(),
    ) {
        let mut text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        // `/` and `h` appear only inside strings: escaping them keeps the data.
        if slash {
            text = text.replace('/', "\\/");
        }
        if uh {
            text = text.replace('h', "\\u0068");
        }
        same_either_way(&text)?;
        same_decoded(&v)?;
    }
}
