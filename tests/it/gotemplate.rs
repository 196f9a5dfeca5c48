//! The one reader of Helm template expressions
//! (`rebind::syntax::gotemplate`), which discovery's template follower and
//! the after-merge renderer share: its words (string literals with Go's
//! escapes, raw strings, nested parentheses, pipes), Go's `%q`, the
//! keyword and function tables, operands, Go's truth.

use rebind::syntax::gotemplate::*;

fn w(expr: &str) -> Vec<String> {
    words(expr)
}

/// A string literal is one word whatever it holds: white space, `|`,
/// parentheses, an escaped quote; a raw string has no escapes.
#[test]
fn string_literals_are_one_word() {
    assert_eq!(
        w(r#"default "a b|c (d" .Values.x"#),
        ["default", r#""a b|c (d""#, ".Values.x"]
    );
    assert_eq!(
        w(r#"quote "say \"hi\" | x""#),
        ["quote", r#""say \"hi\" | x""#]
    );
    assert_eq!(w(r"printf `a\` .x"), ["printf", r"`a\`", ".x"]);
    assert_eq!(w("eq 'a' ' '"), ["eq", "'a'", "' '"]);
    assert_eq!(
        go_string(r#""say \"hi\"\n""#).as_deref(),
        Some("say \"hi\"\n")
    );
    assert_eq!(go_string(r"`a\n`").as_deref(), Some(r"a\n"));
    assert_eq!(go_string(r#""\x41""#), None);
    assert_eq!(go_string("x"), None);
    assert_eq!(unquote(r#""a\"b""#), r#"a\"b"#);
}

/// A parenthesised group, nested or not, is one word with what
/// follows its `)`; a `|` inside it does not cut the pipeline.
#[test]
fn groups_and_pipes() {
    let got = w("(index (get .Values \"a\") 0).url | default (.b | quote) | nindent 4");
    assert_eq!(
        got,
        [
            "(index (get .Values \"a\") 0).url",
            "|",
            "default",
            "(.b | quote)",
            "|",
            "nindent",
            "4"
        ]
    );
    let cmds: Vec<&[String]> = commands(&got).collect();
    assert_eq!(cmds.len(), 3);
    assert_eq!(cmds[1], ["default", "(.b | quote)"]);
    assert_eq!(w(".a|quote"), [".a", "|", "quote"]);
    assert_eq!(
        operand("(index (get .Values \"a\") 0).url"),
        Operand::Group("index (get .Values \"a\") 0", vec!["url"])
    );
    assert_eq!(operand("(a"), Operand::Unclosed);
}

/// Operands by shape, and the `.Values` paths read at the root.
#[test]
fn operands_and_values_paths() {
    assert_eq!(operand("."), Operand::Dot(vec![]));
    assert_eq!(operand(".a.b"), Operand::Dot(vec!["a", "b"]));
    assert_eq!(operand("$"), Operand::Var("", vec![]));
    assert_eq!(operand("$x.a"), Operand::Var("x", vec!["a"]));
    assert_eq!(operand("\"s\""), Operand::Literal);
    assert_eq!(operand("-1.5"), Operand::Literal);
    assert_eq!(operand("nil"), Operand::Literal);
    assert_eq!(operand("upper"), Operand::Other);
    assert_eq!(values_keys(".Values.a.b"), Some(vec!["a", "b"]));
    assert_eq!(values_keys("$.Values.a_1"), Some(vec!["a_1"]));
    assert_eq!(values_keys(".Values"), None);
    assert_eq!(values_keys(".Values.a-b"), None);
    assert_eq!(values_keys("$x.Values.a"), None);
    assert_eq!(values_keys(".Release.Name"), None);
}

/// Go's `%q`: the escapes Go writes, printable text as written; a
/// character whose escape needs Go's Unicode tables is not quoted.
#[test]
fn quoting_is_gos() {
    assert_eq!(go_quote("main").as_deref(), Some("\"main\""));
    assert_eq!(
        go_quote("a\"b\\c\n\t\u{7}\u{1}").as_deref(),
        Some(r#""a\"b\\c\n\t\a\x01""#)
    );
    assert_eq!(go_quote("héllo").as_deref(), Some("\"héllo\""));
    assert_eq!(go_quote("a\u{a0}b"), None);
    let c = |f: &str| vec![f.to_string()];
    assert_eq!(
        string_function(&c("squote"), "a\"b".into()).as_deref(),
        Some("'a\"b'")
    );
    assert_eq!(
        string_function(&c("trim"), " a ".into()).as_deref(),
        Some("a")
    );
    assert_eq!(string_function(&c("upper"), "a".into()), None);
    assert_eq!(
        sprintf("%s-%v%%", &["a".into(), "b".into()]).as_deref(),
        Some("a-b%")
    );
    assert_eq!(sprintf("%d", &["1".into()]), None);
}

/// The keyword and function tables.
#[test]
fn tables() {
    let keywords = "if else range with end define template block break continue";
    assert!(keywords.split(' ').all(is_keyword));
    assert!(!is_keyword("include") && !is_keyword("quote"));
    assert!(opens("range $i, $e := .Values.x") && !opens("end") && !opens("template \"x\""));
    assert!(keeps_value("default") && keeps_value("quote") && !keeps_value("printf"));
    assert!(passes_value("ternary") && !passes_value("quote"));
    assert!(is_comment("/* x */") && head("  if .a ") == "if");
}

/// Go's truth of YAML values: false, 0, null, empty are false; a
/// quoted "false" is a non-empty string.
#[test]
fn truth() {
    let doc = rebind::syntax::yaml::read_yaml_or_json(
        "a: false\nb: 'false'\nc: 0\nd: {}\ne: [1]\nf: ~\ng: ''\nh: x\n",
    )
    .unwrap()
    .remove(0);
    let t = |k: &str| truthy(doc.at(&[k]).unwrap()).unwrap();
    assert!(!t("a") && t("b") && !t("c") && !t("d") && t("e") && !t("f") && !t("g") && t("h"));
    // Helm reads values as YAML 1.1: zero in any spelling is false, and a
    // scalar that reading takes for a boolean or a number where YAML 1.2
    // reads a string (`no`, `Off`, `0x0`, `1_0`) has no known truth.
    let doc = rebind::syntax::yaml::read_yaml_or_json(
        "a: 0.0\nb: -0\nc: no\nd: Off\ne: 0x0\nf: 1_0\ng: 'no'\nh: False\n",
    )
    .unwrap()
    .remove(0);
    let t = |k: &str| truthy(doc.at(&[k]).unwrap());
    assert_eq!(
        ["a", "b", "c", "d", "e", "f", "g", "h"].map(t),
        [
            Some(false),
            Some(false),
            None,
            None,
            None,
            None,
            Some(true),
            Some(false)
        ]
    );
}

/// Which actions write text where they stand (the locator's question
/// about an action beside an endpoint).
#[test]
fn actions_that_write_nothing() {
    for a in [
        "{{ end }}",
        "{{- else if .x }}",
        "{{ if .a }}",
        "{{- range $k, $v := .x }}",
        "{{/* c */}}",
        "{{- /* c */ -}}",
        "{{ $x := .a }}",
        "{{ $x = 1 }}",
    ] {
        assert!(!action_renders(a), "{a}");
    }
    for a in [
        "{{ .Values.x }}",
        "{{ $x }}",
        "{{ $x | quote }}",
        "{{ include \"a\" . }}",
        "{{ ending }}",
        "{{ eq $x 1 }}",
    ] {
        assert!(action_renders(a), "{a}");
    }
}
