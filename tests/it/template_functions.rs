//! The Helm template follower's functions and shapes: each Go template /
//! Sprig function that passes a value through, and each YAML shape a
//! template writes a cluster position in, has a positive fixture (the
//! values it reads are positions, a rebind rewrites them byte for byte)
//! and a negative one (a value it does not read is no position); what it
//! does not evaluate at a cluster position is named with file and line.

use crate::common::{rebind, stderr, stdout};
use serde_json::Value;
use std::path::Path;

const OLD: &str = "https://old-api.example.org:6443";
const NEW: &str = "https://new-api.example.org:6443";
/// The endpoint of the values no template reads.
const OTHER: &str = "https://other-api.example.org:6443";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn scan(root: &Path) -> Value {
    let out = rebind(root, &["scan", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `(path, line, via)` of every occurrence of OLD.
fn found(s: &Value) -> Vec<(String, u64, String)> {
    s["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["endpoint"] == OLD)
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["line"].as_u64().unwrap(),
                o["via"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Whether no occurrence is of OTHER.
fn no_other(s: &Value) -> bool {
    s["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["endpoint"] != OTHER)
}

/// `(path, line)` of every occurrence of OLD.
fn places(s: &Value) -> Vec<(String, u64)> {
    found(s).into_iter().map(|o| (o.0, o.1)).collect()
}

/// `(path, line, message)` of every note.
fn notes(s: &Value) -> Vec<(String, u64, String)> {
    s["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["path"].as_str().unwrap().to_string(),
                n["line"].as_u64().unwrap(),
                n["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `apply --no-commit` to NEW without `--from`.
fn apply_found(root: &Path) -> (Option<i32>, String) {
    let out = rebind(root, &["apply", "--no-commit", "--yes", "--to", NEW]);
    (
        out.status.code(),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

/// A chart `dir` whose one template is an Application with `server:` then
/// `server` (the rest of the line and any lines after it), and its values.
fn chart(root: &Path, dir: &str, server: &str, values: &str) {
    write(
        root,
        &format!("{dir}/Chart.yaml"),
        &format!("apiVersion: v2\nname: {dir}\nversion: 0.1.0\n"),
    );
    write(
        root,
        &format!("{dir}/templates/app.yaml"),
        &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: child\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: manifests\n  destination:\n    server: {server}\n    namespace: x\n"),
    );
    write(root, &format!("{dir}/values.yaml"), values);
}

fn owned(v: &[(&str, u64)]) -> Vec<(String, u64)> {
    v.iter().map(|(p, l)| (p.to_string(), *l)).collect()
}

/// Go's text/template `index` (pkg.go.dev/text/template, "Functions":
/// `index x 1 2 3` is `x[1][2][3]`): a number reads the element at that
/// index of a list, a string a map's key; Sprig's `first`
/// (masterminds.github.io/sprig/lists.html) is element 0. Only the element
/// read is a position: the other elements of the same list are not.
#[test]
fn index_with_a_number_and_first_read_that_element_only() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    // OLD on the line the template reads (2: clusters[0].url, 3:
    // clusters[1].url, 5: servers[0], 6: servers[1]), OTHER elsewhere.
    let values = |read: usize| {
        let at = |line: usize| if line == read { OLD } else { OTHER };
        format!(
            "clusters:\n  - url: {}\n  - url: {}\nservers:\n  - {}\n  - {}\n",
            at(2),
            at(3),
            at(5),
            at(6)
        )
    };
    for (dir, server, read) in [
        ("a", "{{ index .Values \"clusters\" 0 \"url\" }}", 2),
        ("b", "{{ (index .Values.clusters 0).url }}", 2),
        ("c", "{{ index .Values.clusters 1 \"url\" }}", 3),
        ("d", "{{ index .Values.servers 1 }}", 6),
        ("e", "{{ first .Values.servers }}", 5),
        ("f", "{{ .Values.servers | first | quote }}", 5),
        ("g", "{{ (first .Values.clusters).url }}", 2),
    ] {
        chart(root, dir, server, &values(read));
    }
    let s = scan(root);
    assert_eq!(
        places(&s),
        owned(&[
            ("a/values.yaml", 2),
            ("b/values.yaml", 2),
            ("c/values.yaml", 3),
            ("d/values.yaml", 6),
            ("e/values.yaml", 5),
            ("f/values.yaml", 5),
            ("g/values.yaml", 2),
        ])
    );
    let via = &found(&s)[0].2;
    assert_eq!(
        via,
        "chart template a/templates/app.yaml:11 renders .Values.clusters[0].url (destination server)"
    );
    assert!(no_other(&s), "{s}");
    assert!(notes(&s).is_empty(), "{:?}", notes(&s));
    // A rebind rewrites the element read, byte for byte.
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    for (dir, read) in [("a", 2), ("c", 3), ("d", 6), ("e", 5)] {
        let after = std::fs::read_to_string(root.join(format!("{dir}/values.yaml"))).unwrap();
        assert_eq!(after, values(read).replace(OLD, NEW), "{dir}");
    }
}

/// Sprig's `pluck "k" d1 d2 ...` (masterminds.github.io/sprig/dicts.html)
/// is the list of `k` of each map that has it; `first`, `last` and `index`
/// of it take one element, which one depends on which maps have the key in
/// the values: each value that may be that element is a position, a map
/// `pluck` does not read is not, and the whole list at a cluster position
/// is named.
#[test]
fn pluck_with_first_last_and_index_is_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    // OLD at the maps the template may read (hub, hub2, hub3), OTHER at
    // the others.
    let values = |read: &[&str]| {
        let at = |m: &str| if read.contains(&m) { OLD } else { OTHER };
        format!(
            "hub:\n  url: {}\nhub2:\n  url: {}\nhub3:\n  url: {}\n",
            at("hub"),
            at("hub2"),
            at("hub3")
        )
    };
    for (dir, server, read) in [
        (
            "p1",
            "{{ pluck \"url\" .Values.hub .Values.hub2 | first }}",
            &["hub", "hub2"][..],
        ),
        ("p2", "{{ first (pluck \"url\" .Values.hub) }}", &["hub"]),
        (
            "p3",
            "{{ index (pluck \"url\" .Values.hub .Values.hub2) 1 }}",
            &["hub2"],
        ),
        (
            "p4",
            "{{ last (pluck \"url\" .Values.hub .Values.hub2) }}",
            &["hub", "hub2"],
        ),
        (
            "p5",
            "{{ index (pluck \"url\" .Values.hub3) 0 }}",
            &["hub3"],
        ),
        ("p6", "{{ pluck \"url\" .Values.hub }}", &["hub"]),
        // Each value a parenthesised pipeline may be is followed.
        (
            "p7",
            "{{ default \"https://kubernetes.default.svc\" (first (pluck \"url\" .Values.hub .Values.hub2)) }}",
            &["hub", "hub2"],
        ),
        ("p8", "{{ (ternary .Values.hub .Values.hub3 .Values.c).url }}", &["hub", "hub3"]),
        // Where one value is taken, several are named.
        ("p9", "{{ get (ternary .Values.hub .Values.hub3 .Values.c) \"url\" }}", &["hub"]),
    ] {
        chart(root, dir, server, &values(read));
    }
    let s = scan(root);
    assert_eq!(
        places(&s),
        owned(&[
            ("p1/values.yaml", 2),
            ("p1/values.yaml", 4),
            ("p2/values.yaml", 2),
            ("p3/values.yaml", 4),
            ("p4/values.yaml", 2),
            ("p4/values.yaml", 4),
            ("p5/values.yaml", 6),
            ("p7/values.yaml", 2),
            ("p7/values.yaml", 4),
            ("p8/values.yaml", 2),
            ("p8/values.yaml", 6),
        ])
    );
    assert_eq!(
        notes(&s),
        vec![
            (
                "p6/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ pluck \"url\" .Values.hub }}` at spec.destination.server (Application): the whole list `pluck` returns".to_string()
            ),
            (
                "p9/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ get (ternary .Values.hub .Values.hub3 .Values.c) \"url\" }}` at spec.destination.server (Application): `(ternary .Values.hub .Values.hub3 .Values.c)` may be one of several values here".to_string()
            ),
        ]
    );
    assert!(no_other(&s), "{s}");
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("p3/values.yaml")).unwrap();
    assert_eq!(after, values(&["hub2"]).replace(OLD, NEW));
}

/// The YAML shapes a template may write a cluster position in (YAML 1.2:
/// block scalars 8.1, flow mappings 7.4; a `kind: List` is read item by
/// item, each by its own kind, as `kubectl` exports it) and the actions
/// that render one value (text/template: `with` moves the dot, `$u :=`
/// binds a variable; neither renders anything; one branch of an `if` runs):
/// each is followed. A value
/// written with literal text around it is named as built from several
/// parts; a List item that is no Application gives no position.
#[test]
fn template_shapes_and_one_value_actions_are_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let values =
        format!("hub:\n  url: {OLD}\nother:\n  url: {OTHER}\nhost: other-api.example.org\n");
    for (dir, server) in [
        ("s1", ">-\n      {{ .Values.hub.url }}"),
        ("s2", "|-\n      {{ .Values.hub.url }}\n    # a comment"),
        ("s3", "{{ with .Values.hub }}{{ .url }}{{ end }}"),
        ("s4", "{{ $u := .Values.hub.url }}{{ $u }}"),
        ("s5", "\"{{- /* the hub */ -}}{{ .Values.hub.url }}\""),
        // Branches of which one runs: one value either way.
        (
            "s8",
            "{{ if .Values.local }}https://kubernetes.default.svc{{ else }}{{ .Values.hub.url }}{{ end }}",
        ),
        // Several parts: named, with the reason.
        ("n1", "https://{{ .Values.host }}:6443"),
        ("n2", "{{ .Values.hub.url }}{{ .Values.other.url }}"),
        (
            "n3",
            "{{ if .Values.local }}{{ .Values.other.url }}{{ end }}{{ .Values.hub.url }}",
        ),
    ] {
        chart(root, dir, server, &values);
    }
    // A flow mapping: the scalar ends before its `,`.
    write(
        root,
        "s6/Chart.yaml",
        "apiVersion: v2\nname: s6\nversion: 0.1.0\n",
    );
    write(
        root,
        "s6/templates/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: child}\nspec:\n  project: default\n  destination: {server: {{ .Values.hub.url }}, namespace: x}\n",
    );
    write(root, "s6/values.yaml", &values);
    // A `kind: List` whose item is an Application; a second item is a
    // Service whose externalName is no cluster position.
    write(
        root,
        "s7/Chart.yaml",
        "apiVersion: v2\nname: s7\nversion: 0.1.0\n",
    );
    write(
        root,
        "s7/templates/list.yaml",
        "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Service\n    metadata:\n      name: s\n    spec:\n      type: ExternalName\n      externalName: {{ .Values.other.url }}\n  - apiVersion: argoproj.io/v1alpha1\n    kind: Application\n    metadata:\n      name: child\n    spec:\n      project: default\n      destination:\n        server: {{ .Values.hub.url }}\n        namespace: x\n",
    );
    write(root, "s7/values.yaml", &values);
    let s = scan(root);
    let mut expected = Vec::new();
    for dir in ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"] {
        expected.push((format!("{dir}/values.yaml"), 2));
    }
    assert_eq!(places(&s), expected, "{:?}", notes(&s));
    let list = found(&s)
        .into_iter()
        .find(|o| o.0 == "s7/values.yaml")
        .unwrap();
    assert_eq!(
        list.2,
        "chart template s7/templates/list.yaml:18 renders .Values.hub.url (destination server)"
    );
    let several: Vec<(String, u64)> = notes(&s)
        .into_iter()
        .filter(|n| n.2.ends_with("the value is built from several parts"))
        .map(|n| (n.0, n.1))
        .collect();
    assert_eq!(
        several,
        owned(&[
            ("n1/templates/app.yaml", 11),
            ("n2/templates/app.yaml", 11),
            ("n2/templates/app.yaml", 11),
            ("n3/templates/app.yaml", 11),
            ("n3/templates/app.yaml", 11),
        ])
    );
    assert_eq!(notes(&s).len(), 5, "{:?}", notes(&s));
    assert!(no_other(&s), "{s}");
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    for dir in ["s1", "s2", "s6", "s7"] {
        let after = std::fs::read_to_string(root.join(format!("{dir}/values.yaml"))).unwrap();
        assert_eq!(after, values.replace(OLD, NEW), "{dir}");
    }
}

/// A named template that renders an ApplicationSet's generator
/// placeholder (ArgoCD ApplicationSet docs, "Go Template": `{{.url}}`),
/// piped through functions that keep a string (Sprig `quote`, `squote`,
/// `trim`, `toString`) or built by `printf` of string literals, is read as
/// that placeholder: the list elements the chart's values give are
/// positions. A `printf` it cannot evaluate is named at the server's line.
#[test]
fn a_placeholder_from_a_named_template_through_a_pipe_or_printf_is_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let values = format!("clusters:\n  - name: prod\n    url: {OLD}\n");
    for (chart, server, helper) in [
        (
            "q1",
            "{{ include \"fleet.server\" . | quote }}",
            "{{`{{.url}}`}}",
        ),
        (
            "q2",
            "'{{ include \"fleet.server\" . }}'",
            "{{ printf \"{{.%s}}\" \"url\" }}",
        ),
        (
            "q3",
            "{{ include \"fleet.server\" . | trim | squote }}",
            "{{ printf \"{{.%s}}\" \"url\" }}",
        ),
        (
            "q4",
            "{{ template \"fleet.server\" . }}",
            "{{ \"{{.url}}\" | toString }}",
        ),
        // Negative: `%d` is not evaluated; the server is named.
        (
            "n1",
            "'{{ include \"fleet.server\" . }}'",
            "{{ printf \"{{.%d}}\" 1 }}",
        ),
    ] {
        write(
            root,
            &format!("{chart}/Chart.yaml"),
            &format!("apiVersion: v2\nname: {chart}\nversion: 0.1.0\n"),
        );
        write(
            root,
            &format!("{chart}/templates/appset.yaml"),
            &format!("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\nspec:\n  goTemplate: true\n  generators:\n    - list:\n        elements:\n        {{{{- range .Values.clusters }}}}\n          - name: {{{{ .name }}}}\n            url: {{{{ .url | quote }}}}\n        {{{{- end }}}}\n  template:\n    metadata:\n      name: 'app-{{{{`{{{{.name}}}}`}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: app\n      destination:\n        server: {server}\n        namespace: x\n"),
        );
        write(
            root,
            &format!("{chart}/templates/_helpers.tpl"),
            &format!("{{{{- define \"fleet.server\" -}}}}\n{helper}\n{{{{- end }}}}\n"),
        );
        write(root, &format!("{chart}/values.yaml"), &values);
    }
    let s = scan(root);
    assert_eq!(
        places(&s),
        owned(&[
            ("q1/values.yaml", 3),
            ("q2/values.yaml", 3),
            ("q3/values.yaml", 3),
            ("q4/values.yaml", 3),
        ]),
        "{:?}",
        notes(&s)
    );
    let n1: Vec<_> = notes(&s)
        .into_iter()
        .filter(|n| n.0 == "n1/templates/appset.yaml")
        .collect();
    assert!(
        n1.iter()
            .any(|n| n.1 == 23 && n.2.contains("`printf` builds a string in the template")),
        "{:?}",
        notes(&s)
    );
    assert!(
        notes(&s).iter().all(|n| n.0.starts_with("n1/")),
        "{:?}",
        notes(&s)
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("q3/values.yaml")).unwrap();
    assert_eq!(after, values.replace(OLD, NEW));
}

/// What the follower does not evaluate at a cluster position is named with
/// the template's file and line, never left silent: a function it does
/// not know, `last` of a values list (which element is last depends on
/// each values file), and a variable bound to one of several values. The
/// same functions elsewhere are not named.
#[test]
fn functions_not_evaluated_at_a_cluster_position_are_named() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let values = format!("hub:\n  url: {OLD}\nservers:\n  - {OLD}\n");
    chart(root, "u1", "{{ .Values.hub.url | sha256sum }}", &values);
    chart(root, "u2", "{{ last .Values.servers }}", &values);
    chart(root, "u3", "{{ .Values.hub.url | urlquery }}", &values);
    // A variable holds one value: one of several is not guessed.
    chart(
        root,
        "u5",
        "{{ $u := .Values.hub.url | default .Values.servers }}{{ $u }}",
        &values,
    );
    // Negative: the same function outside a cluster position.
    write(
        root,
        "u4/Chart.yaml",
        "apiVersion: v2\nname: u4\nversion: 0.1.0\n",
    );
    write(
        root,
        "u4/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    sum: {{ .Values.hub.url | sha256sum }}\n",
    );
    write(root, "u4/values.yaml", &values);
    let s = scan(root);
    let n: Vec<(String, u64, String)> = notes(&s);
    assert_eq!(
        n,
        vec![
            (
                "u1/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ .Values.hub.url | sha256sum }}` at spec.destination.server (Application): `sha256sum` is not followed".to_string()
            ),
            (
                "u2/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ last .Values.servers }}` at spec.destination.server (Application): `last` of .Values.servers: which element is last depends on each values file".to_string()
            ),
            (
                "u3/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ .Values.hub.url | urlquery }}` at spec.destination.server (Application): `urlquery` is not followed".to_string()
            ),
            (
                "u5/templates/app.yaml".to_string(),
                11,
                "templated, not followed: `{{ $u }}` at spec.destination.server (Application): `.Values.hub.url | default .Values.servers` may be one of several values here".to_string()
            ),
        ]
    );
    let text = stdout(&rebind(root, &["scan"]));
    assert!(
        text.contains(
            "u2/templates/app.yaml:11: templated, not followed: `{{ last .Values.servers }}`"
        ),
        "{text}"
    );
}

/// Subchart values (Helm docs, "Subcharts and Global Values" and "Chart
/// Dependencies"): a parent gives a dependency its values under the
/// dependency's `alias` (else its name), copies its `global` values into
/// every subchart, and a `file://` dependency is the chart in that folder
/// (ArgoCD runs `helm dependency build` before rendering: argo-cd
/// reposerver/repository/repository.go, `runHelmBuild`). Each key such a
/// subchart's template renders at a cluster position is a position of the
/// parent's values; a key no dependency takes is not, nor the name of a
/// chart its dependencies give only under an alias (helm
/// pkg/chartutil/dependencies.go, `processDependencyEnabled`).
#[test]
fn subchart_values_under_an_alias_global_and_a_file_dependency_are_positions() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "umb/Chart.yaml",
        "apiVersion: v2\nname: umb\nversion: 0.1.0\ndependencies:\n  - name: sub\n    version: 0.1.0\n  - name: sub\n    alias: sub2\n    version: 0.1.0\n  - name: child\n    version: 0.1.0\n    repository: file://../child\n  - name: only\n    alias: onlyalias\n    version: 0.1.0\n",
    );
    write(
        root,
        "umb/charts/sub/Chart.yaml",
        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    );
    let app = |name: &str, server: &str| {
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  project: default\n  destination:\n    server: {server}\n    namespace: x\n")
    };
    write(
        root,
        "umb/charts/sub/templates/app.yaml",
        &format!(
            "{}---\n{}",
            app("a", "{{ .Values.hub.url }}"),
            app("b", "{{ .Values.global.api }}")
        ),
    );
    // Only under its alias: Helm renders no copy under its name.
    write(
        root,
        "umb/charts/only/Chart.yaml",
        "apiVersion: v2\nname: only\nversion: 0.1.0\n",
    );
    write(
        root,
        "umb/charts/only/templates/app.yaml",
        &app("o", "{{ .Values.hub.url }}"),
    );
    write(
        root,
        "child/Chart.yaml",
        "apiVersion: v2\nname: child\nversion: 0.1.0\n",
    );
    write(
        root,
        "child/templates/app.yaml",
        &app("c", "{{ .Values.hub.url }}"),
    );
    let values = format!("sub:\n  hub:\n    url: {OLD}\nsub2:\n  hub:\n    url: {OLD}\nglobal:\n  api: {OLD}\nchild:\n  hub:\n    url: {OLD}\nsub3:\n  hub:\n    url: {OTHER}\nonlyalias:\n  hub:\n    url: {OLD}\nonly:\n  hub:\n    url: {OTHER}\n");
    write(root, "umb/values.yaml", &values);
    let s = scan(root);
    assert_eq!(
        places(&s),
        owned(&[
            ("umb/values.yaml", 3),
            ("umb/values.yaml", 6),
            ("umb/values.yaml", 8),
            ("umb/values.yaml", 11),
            ("umb/values.yaml", 17),
        ]),
        "{:?}",
        notes(&s)
    );
    assert!(no_other(&s), "{s}");
    let vias: Vec<String> = found(&s).into_iter().map(|o| o.2).collect();
    assert_eq!(
        vias[1],
        "chart template umb/charts/sub/templates/app.yaml:8 renders .Values.sub2.hub.url (destination server)"
    );
    assert_eq!(
        vias[3],
        "chart template child/templates/app.yaml:8 renders .Values.child.hub.url (destination server)"
    );
    let (code, out) = apply_found(root);
    assert_eq!(code, Some(0), "{out}");
    let after = std::fs::read_to_string(root.join("umb/values.yaml")).unwrap();
    assert_eq!(after, values.replace(OLD, NEW));
}

/// `init` and `check` see the positions these roads lead to: `init`
/// declares the endpoint an `index` by number renders; `check` fails on an
/// undeclared endpoint a `pluck` renders, naming its values line, and not
/// on one at a list element no template reads.
#[test]
fn init_and_check_see_the_template_function_roads() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    chart(
        root,
        "a",
        "{{ index .Values \"clusters\" 0 \"url\" }}",
        &format!("clusters:\n  - url: {OLD}\n"),
    );
    let out = rebind(root, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(root.join(".rebind.yaml")).unwrap();
    assert!(config.contains(OLD), "{config}");
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // An element no template reads: still declared enough.
    chart(
        root,
        "b",
        "{{ index .Values.servers 1 }}",
        &format!("servers:\n  - {OTHER}\n  - {OLD}\n"),
    );
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // An undeclared endpoint `pluck | first` renders.
    chart(
        root,
        "c",
        "{{ pluck \"url\" .Values.hub | first }}",
        &format!("hub:\n  url: {OTHER}\n"),
    );
    let out = rebind(root, &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("c/values.yaml:2:8"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("b/values.yaml"), "{}", stdout(&out));
}

/// A chart of apiVersion v1 gives its dependencies in `requirements.yaml`
/// (Helm v2's file; Helm 3's loader reads it into the chart's
/// dependencies, `pkg/chart/loader/load.go`): a subchart's values sit
/// under the alias it gives there. Discovery over-finds: a dependency
/// whose `condition` is false (or that `tags` leave out) is read all the
/// same, so its values positions are found and rewritten, ready for when
/// it is enabled.
#[test]
fn requirements_yaml_dependencies_are_read_whatever_their_condition() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "umb/Chart.yaml",
        "apiVersion: v1\nname: umb\nversion: 0.1.0\n",
    );
    write(
        root,
        "umb/requirements.yaml",
        "dependencies:\n  - name: sub\n    alias: hub\n    version: 0.1.0\n    condition: hub.enabled\n  - name: sub\n    alias: spoke\n    version: 0.1.0\n    tags: [edge]\n",
    );
    write(
        root,
        "umb/charts/sub/Chart.yaml",
        "apiVersion: v1\nname: sub\nversion: 0.1.0\n",
    );
    write(
        root,
        "umb/charts/sub/templates/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  project: default\n  destination:\n    server: {{ .Values.url }}\n    namespace: x\n",
    );
    let values = format!(
        "tags:\n  edge: false\nhub:\n  enabled: false\n  url: {OLD}\nspoke:\n  url: {OLD}\nsub:\n  url: {OTHER}\n"
    );
    write(root, "umb/values.yaml", &values);
    let s = scan(root);
    assert_eq!(
        places(&s),
        owned(&[("umb/values.yaml", 5), ("umb/values.yaml", 7)]),
        "{:?}",
        notes(&s)
    );
    assert!(no_other(&s), "{s}");
}
