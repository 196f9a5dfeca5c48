//! The positions table is the only place that names YAML paths: a string
//! literal equal to a key that names a cluster position (`server`,
//! `destination`, `clusterEndpoint`, `serverName`, `tls-server-name`, ...)
//! may appear in `src/model/positions.rs` only. Every other module asks the table.

use rebind::model::application;
use rebind::model::iam;
use rebind::model::positions::{self, P};
use std::path::{Path, PathBuf};

/// Literals that are the same word but no YAML key, each with its reason.
const ALLOWED: &[(&str, &str, &str)] = &[
    // A raw-text needle of the first look (no YAML read yet).
    (
        "src/text/endpoint.rs",
        "destination",
        "the prefilter's needle",
    ),
    // A file name (`~/.kube/config`), not a key.
    ("src/discover/walk.rs", "config", "a kubeconfig's file name"),
    // An ApplicationSet generator's name (its parameters are in the
    // repository), told from the generators whose parameters are not.
    (
        "src/model/application.rs",
        "list",
        "an ApplicationSet generator's name",
    ),
    (
        "src/model/application.rs",
        "elements",
        "a list generator's elements, its parameters",
    ),
    (
        "src/model/application.rs",
        "clusters",
        "the cluster generator's name",
    ),
    // A label selector's `matchExpressions[].key` (the cluster generator's
    // selector), not an external secret's `remoteRef.key`.
    (
        "src/model/application.rs",
        "key",
        "a label selector expression's key",
    ),
    // The `.rebind.yaml` schema's own key, not a manifest's.
    ("src/model/config.rs", "clusters", "the config's schema"),
    // The workspace file's own key (`change: cluster:`, as `--cluster`).
    (
        "src/model/workspace.rs",
        "cluster",
        "the workspace file's schema",
    ),
    // The value of the secret-type label in the Secret written, the
    // `--cluster` flag, a word of a message.
    (
        "src/review/secret.rs",
        "cluster",
        "the rendered label's value",
    ),
    // The rendered Secret's own keys, written, not read.
    (
        "src/review/secret.rs",
        "labels",
        "the rendered Secret's key",
    ),
    ("src/cli/args.rs", "cluster", "a flag name"),
    ("src/commands/init.rs", "cluster", "a message's noun"),
    // A Helm template function (`list a b`), not a key.
    (
        "src/find/templates.rs",
        "list",
        "a template function's name",
    ),
    // A subcommand of gh and glab (`gh pr list`), not a key.
    ("src/repo/pr.rs", "list", "a client's subcommand"),
];

/// Keys every Kubernetes reader walks through (`spec.source.path`,
/// `metadata.name`, a List's `items`): on a position's path, but naming none.
const STRUCTURAL: &[&str] = &[
    "spec", "template", "data", "status", "sync", "target", "items", "path", "value", "patch",
    "metadata", "name",
];

/// Every key that names a position: the table's, the registration search's,
/// the bare-host keys, the keys of positions inside strings, and the list of
/// an exported `kind: List`, less the [`STRUCTURAL`] ones.
fn position_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    for row in positions::TABLE {
        for step in row.path {
            if let P::K(k) = step {
                keys.push(k);
            }
        }
    }
    // The registration search's paths: where a registration's server,
    // labels, Secret name and credentials are.
    for r in positions::REGISTRATIONS {
        let mut paths: Vec<&[&'static str]> = r.servers.iter().map(|(p, _)| *p).collect();
        paths.push(r.labels);
        paths.extend(r.secret_name);
        match &r.credentials {
            positions::Credentials::Config(c) => paths.extend(c.iter()),
            positions::Credentials::Store {
                store,
                refs,
                key,
                property,
            } => paths.extend([*store, *refs, *key, *property]),
        }
        keys.extend(paths.into_iter().flatten());
    }
    keys.extend(positions::BARE_HOST_KEYS);
    keys.extend(positions::STRING_POSITION_KEYS);
    keys.extend([positions::PATCH_OP_PATH, positions::LIST_ITEMS]);
    keys.retain(|k| !STRUCTURAL.contains(k));
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The string literals of a source text outside its test module and its
/// comments, with their line numbers.
fn literals(src: &str) -> Vec<(usize, String)> {
    let code = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                    // A char literal ('"', '\\'): skip it whole.
                    let end = line[i + 1..].find('\'').map_or(b.len(), |e| i + 2 + e);
                    i = end.max(i + 3);
                }
                b'"' => {
                    let mut j = i + 1;
                    let mut lit = String::new();
                    while j < b.len() && b[j] != b'"' {
                        if b[j] == b'\\' {
                            j += 1;
                        }
                        if let Some(c) = line.get(j..).and_then(|r| r.chars().next()) {
                            lit.push(c);
                            j += c.len_utf8();
                        } else {
                            j += 1;
                        }
                    }
                    out.push((n + 1, lit));
                    i = j + 1;
                }
                _ => i += 1,
            }
        }
    }
    out
}

#[test]
fn no_position_key_is_named_outside_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let keys = position_keys();
    for k in [
        "server",
        "destination",
        "clusterEndpoint",
        "serverName",
        "tls-server-name",
        "stringData",
        "labels",
        "secretStoreRef",
        "remoteRef",
    ] {
        assert!(keys.contains(&k), "{k} is a position key");
    }
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 10);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/model/positions.rs" {
            continue;
        }
        let src = std::fs::read_to_string(f).unwrap();
        for (line, lit) in literals(&src) {
            let allowed = ALLOWED
                .iter()
                .any(|(file, word, _)| *file == rel && *word == lit);
            if keys.contains(&lit.as_str()) && !allowed {
                found.push(format!("{rel}:{line}: \"{lit}\""));
            }
        }
    }
    assert!(
        found.is_empty(),
        "YAML keys that name positions belong in src/model/positions.rs; ask the table instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_literal_scanner_sees_what_it_must() {
    let src = "let a = \"server\"; // \"destination\"\nlet c = '\"'; let b = \"a\\\"b\";\n// \"x\"\n#[cfg(test)]\nmod tests {\n \"serverName\"\n}\n";
    let got: Vec<String> = literals(src).into_iter().map(|(_, l)| l).collect();
    assert_eq!(got, ["server", "destination", "a\"b"]);
}

/// Words the Application table names that are also plain words of other
/// schemas read everywhere (a kustomization's or a generator's `path`, a
/// chart's `name`, a git `ref`): a literal equal to one says nothing by
/// itself. `spec` is checked (the table's `APP_SPEC` paths); the other
/// Kubernetes keys every reader walks (`kind`, `metadata`, `namespace`)
/// are not, their paths being `positions::KIND`, `NAME`, `NAMESPACE`.
const APP_GENERIC: &[&str] = &["name", "path", "ref", "chart"];

/// The keys of an Application, ApplicationSet or AppProject, of ArgoCD's
/// settings ConfigMaps and of an IAM trust policy, as the tables name them
/// (`src/model/application.rs`, `src/model/iam.rs`), less [`APP_GENERIC`].
fn application_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    keys.extend(application::SPEC_FIELDS);
    keys.extend(application::SYNC_POLICY_FIELDS);
    keys.extend(application::SOURCE_FIELDS);
    keys.extend(application::SOURCE_TYPES);
    keys.extend(application::APPSET_SPEC_FIELDS);
    keys.extend(application::APPSET_SYNC_POLICY_FIELDS);
    keys.extend([
        application::HELM,
        application::HELM_VALUES_OBJECT,
        application::HELM_VALUES,
        application::HELM_PARAMETERS,
        application::HELM_VALUE_FILES,
        application::SOURCE,
        application::SOURCES,
        application::PROJECT_KEY,
        application::SOURCE_REPOS,
        application::DESTINATIONS,
        application::SOURCE_NAMESPACES,
        application::PROJECT_SCOPED_CLUSTERS,
        application::ARGOCD_CM,
        application::KUSTOMIZE_BUILD_OPTIONS,
        application::APP_HEALTH_CHECK,
        application::RESOURCE_CUSTOMIZATIONS,
        application::CMD_PARAMS_CM,
        application::APPSET_POLICY,
        application::APPSET_POLICY_OVERRIDE,
        application::APPSET_NEW_GIT_FILE_GLOBBING,
        application::APPLICATION_NAMESPACES,
    ]);
    keys.extend(application::APPSET_APP_SPEC);
    keys.extend(application::CHART_CM_VALUES);
    keys.extend(application::CHART_PARAMS_VALUES);
    keys.extend(application::PROJECT_HOLDS.iter().map(|(k, _)| *k));
    keys.extend([
        iam::STATEMENT,
        iam::PRINCIPAL,
        iam::FEDERATED,
        iam::CONDITION,
    ]);
    keys.retain(|k| !APP_GENERIC.contains(k));
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Literals equal to an Application key that are no key there: the file,
/// the word, a piece of the line it is on (so that the same word read as a
/// key elsewhere in the file is still caught), and the reason.
const APP_ALLOWED: &[(&str, &str, &str, &str)] = &[
    // A raw-text needle of the first look: the text layer is below the
    // tables and cannot import them.
    (
        "src/text/endpoint.rs",
        "destination",
        "Needle::new(\"destination\")",
        "the prefilter's needle",
    ),
    // Helm's own words, not an Application's.
    (
        "src/find/templates.rs",
        "template",
        "\"include\" | \"template\"",
        "a Helm template function's name",
    ),
    (
        "src/find/templates.rs",
        "values",
        "name.starts_with(\"values\")",
        "a chart's values file name",
    ),
    (
        "src/find/templates.rs",
        "values",
        "Some(\"values\") =>",
        "a template's `.Values` chain",
    ),
    (
        "src/review/oidc.rs",
        "values",
        "name.starts_with(\"values\")",
        "a chart's values file name",
    ),
    // A finding's kind as printed.
    (
        "src/find/locate.rs",
        "template",
        "Kind::Template =>",
        "a finding kind's label",
    ),
    // A kustomization's own key (its generator files), not an
    // ApplicationSet's generators.
    (
        "src/review/feeders.rs",
        "generators",
        "\"generators\",",
        "a kustomization's key",
    ),
    // Words of messages: how a parent syncs.
    (
        "src/review/feeders.rs",
        "automated",
        "if b { \"automated\" }",
        "a message's word",
    ),
    (
        "src/output/feeders.rs",
        "automated",
        "=> \"automated\".to_string()",
        "a message's word",
    ),
    (
        "src/output/feeders.rs",
        "automated",
        "Some(true) => \"automated\"",
        "a graph edge's label",
    ),
];

#[test]
fn no_application_key_is_named_outside_the_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let keys = application_keys();
    for k in [
        "source",
        "sources",
        "destination",
        "syncPolicy",
        "helm",
        "valuesObject",
        "valueFiles",
        "parameters",
        "generators",
        "template",
        "targetRevision",
        "repoURL",
        "project",
        "Statement",
        "Principal",
        "Federated",
        "Condition",
        "spec",
        "argocd-cm",
        "argocd-cmd-params-cm",
        "application.namespaces",
    ] {
        assert!(keys.contains(&k), "{k} is a key the tables name");
    }
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 10);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("src/model/") {
            continue;
        }
        let src = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = src.lines().collect();
        for (line, lit) in literals(&src) {
            let allowed = APP_ALLOWED.iter().any(|(file, word, context, _)| {
                *file == rel && *word == lit && lines[line - 1].contains(context)
            });
            if keys.contains(&lit.as_str()) && !allowed {
                found.push(format!("{rel}:{line}: \"{lit}\""));
            }
        }
    }
    // An entry that allows nothing any more is stale: it would let the key
    // back in on a line that happens to hold its context.
    for (file, word, context, _) in APP_ALLOWED {
        let src = std::fs::read_to_string(root.join(file)).unwrap();
        let lines: Vec<&str> = src.lines().collect();
        let used = literals(&src)
            .iter()
            .any(|(line, lit)| lit == word && lines[line - 1].contains(context));
        assert!(
            used,
            "stale entry of APP_ALLOWED: {file} {word} `{context}`"
        );
    }
    assert!(
        found.is_empty(),
        "keys of an Application, ArgoCD's settings or a trust policy belong in src/model/; ask the table instead:\n{}",
        found.join("\n")
    );
}
