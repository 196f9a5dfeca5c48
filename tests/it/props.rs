//! Property tests: random YAML documents (nested maps and sequences, block and
//! flow style, every quoting and block-scalar style, comments with Korean text,
//! anchors and aliases, LF, CRLF and lone-CR line breaks, a BOM) with endpoints
//! placed at random: EKS and IPv6 (`https://[fd00::1]:6443`) endpoints as
//! `--from` and `--to`, written plainly or behind double-quoted escapes
//! (`\u0068ttps://`, `\x2e` in the host, `\/`), with malformed URLs
//! (`https://[fd00::1 (x`, `"see https://[cluster-endpoint ..."`) before them
//! in comments, in other scalars and in the same scalar. Each document is
//! written to a file and run through the library as `apply` runs it
//! (`inventory`, then `rewrite::plan`):
//!
//! - the file planned is exactly the document written with the new endpoint,
//!   one change per endpoint placed;
//! - its decoded data is the old decoded data with the endpoint swapped in
//!   every string;
//! - `diff`'s unified diff applied to the old text gives apply's bytes;
//! - a second run over apply's output plans nothing;
//! - a UTF-16 file is never rewritten, and is named as a file that may hold
//!   the endpoint when it holds it (so `diff`/`apply` refuse).
//!
//! More cases: `PROPTEST_CASES=20000 cargo test --release --test props`.

use proptest::prelude::*;
use rebind::discover::walk::{Entry, Role, Walk};
use rebind::edit::diff;
use rebind::find::inventory::Inventory;
use rebind::review::plan::Plan;
use rebind::text::endpoint::{find_all, Endpoint};
use yaml_rust2::{Yaml, YamlLoader};

use crate::common::patch::*;

const EKS_OLD: &str =
    "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const EKS_NEW: &str =
    "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
const V6_OLD: &str = "https://[fd00::1]:6443";
const V6_NEW: &str = "https://[fd00::2]:6443";

/// `--from` and `--to` of each run.
const PAIRS: [(&str, &str); 4] = [
    (EKS_OLD, EKS_NEW),
    (V6_OLD, V6_NEW),
    (EKS_OLD, V6_NEW),
    (V6_OLD, EKS_NEW),
];

/// Malformed URLs: each is one bad token, never a reason to stop looking.
const JUNK: [&str; 5] = [
    "see https://[cluster-endpoint for the format",
    "https://[fd00::1 (IPv6 clusters need brackets)",
    "https://[fd00::1",
    "https://[not an ip]",
    "https://host.example.com:443:443y",
];

/// How an endpoint is written in the old document and in the new one.
struct Form {
    old: String,
    new: String,
    /// Written with escapes: only a double-quoted scalar reads them.
    escaped: bool,
}

/// The ways of writing `PAIRS[pair]`'s old endpoint (index = `Text::Endpoint`).
fn forms(pair: usize) -> Vec<Form> {
    let (o, n) = PAIRS[pair];
    let rest = &o["https://".len()..];
    let form = |old: String, new: String, escaped| Form { old, new, escaped };
    let (spelled, spelled_new) = if o.ends_with(":6443") {
        // Case-insensitive host with the port as written.
        (
            format!("https://{}", rest.to_ascii_uppercase()),
            n.to_string(),
        )
    } else {
        (format!("{o}:443"), n.to_string())
    };
    let sep = rest.find(['.', ':']).expect("a dot or a colon in the host");
    let esc = if rest.as_bytes()[sep] == b'.' {
        "\\x2e"
    } else {
        "\\x3a"
    };
    vec![
        form(o.into(), n.into(), false),
        form(format!("{o}/"), format!("{n}/"), false),
        form(spelled, spelled_new, false),
        form(
            format!("{}?__uid=7", o.to_ascii_lowercase()),
            format!("{n}?__uid=7"),
            false,
        ),
        form(format!("\\u0068ttps://{rest}"), n.into(), true),
        form(
            format!("https://{}{esc}{}", &rest[..sep], &rest[sep + 1..]),
            n.into(),
            true,
        ),
        // Escaped slashes stay escaped (the rest is written without escapes).
        form(
            format!("https:\\/\\/{rest}/x"),
            format!("https:\\/\\/{}/x", &n["https://".len()..]),
            true,
        ),
    ]
}

const FORMS: usize = 7;

#[derive(Debug, Clone)]
enum Text {
    Word(String),
    /// Index into [`forms`].
    Endpoint(usize),
    /// Index into [`JUNK`].
    Junk(usize),
    /// A malformed URL and then an endpoint, in one scalar.
    JunkThen(usize, usize),
}

#[derive(Debug, Clone, Copy)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

#[derive(Debug, Clone)]
enum Node {
    Scalar {
        text: Text,
        style: Style,
        anchor: bool,
    },
    Map {
        entries: Vec<(String, Node)>,
        flow: bool,
    },
    Seq {
        items: Vec<Node>,
        flow: bool,
    },
    Alias,
}

#[derive(Debug, Clone)]
enum Comment {
    Korean,
    /// Mentions the old endpoint.
    WasOld,
    Junk(usize),
    Words(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Break {
    Lf,
    CrLf,
    Cr,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

#[derive(Debug, Clone)]
struct Doc {
    root: Node,
    comments: Vec<Comment>,
    line_break: Break,
    bom: bool,
    encoding: Encoding,
    pair: usize,
}

fn text() -> impl Strategy<Value = Text> {
    prop_oneof![
        4 => "[a-z]{1,8}".prop_map(Text::Word),
        4 => (0..FORMS).prop_map(Text::Endpoint),
        1 => (0..JUNK.len()).prop_map(Text::Junk),
        1 => (0..JUNK.len(), 0..FORMS).prop_map(|(j, e)| Text::JunkThen(j, e)),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        1 => Just(Style::Plain),
        1 => Just(Style::Single),
        2 => Just(Style::Double),
        1 => Just(Style::Literal),
        1 => Just(Style::Folded)
    ]
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        8 => (text(), style(), prop::bool::weighted(0.15)).prop_map(|(text, style, anchor)| Node::Scalar { text, style, anchor }),
        1 => Just(Node::Alias),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-z]{1,6}", inner.clone(), 1..5),
                any::<bool>()
            )
                .prop_map(|(m, flow)| Node::Map {
                    entries: m.into_iter().collect(),
                    flow
                }),
            (prop::collection::vec(inner, 1..5), any::<bool>())
                .prop_map(|(items, flow)| Node::Seq { items, flow }),
        ]
    })
}

fn doc() -> impl Strategy<Value = Doc> {
    let comment = prop_oneof![
        Just(Comment::Korean),
        Just(Comment::WasOld),
        (0..JUNK.len()).prop_map(Comment::Junk),
        "[a-z ]{0,12}".prop_map(Comment::Words),
    ];
    let line_break = prop_oneof![
        3 => Just(Break::Lf),
        1 => Just(Break::CrLf),
        1 => Just(Break::Cr)
    ];
    let encoding = prop_oneof![
        6 => Just(Encoding::Utf8),
        1 => Just(Encoding::Utf16Le),
        1 => Just(Encoding::Utf16Be)
    ];
    (
        (prop::collection::btree_map("[a-z]{1,6}", node(), 1..5)).prop_map(|m| Node::Map {
            entries: m.into_iter().collect(),
            flow: false,
        }),
        prop::collection::vec(comment, 0..4),
        line_break,
        any::<bool>(),
        encoding,
        0..PAIRS.len(),
    )
        .prop_map(|(root, comments, line_break, bom, encoding, pair)| Doc {
            root,
            comments,
            line_break,
            bom,
            encoding,
            pair,
        })
}

/// Renders documents; `new` picks the new endpoint forms. Counts endpoint scalars.
struct Render<'a> {
    new: bool,
    with_known_bugs: bool,
    pair: usize,
    forms: Vec<Form>,
    old_url: &'static str,
    out: String,
    anchors: usize,
    endpoints: usize,
    comments: &'a [Comment],
    next_comment: usize,
}

impl Render<'_> {
    /// The text of a scalar; `double`: it is written in double quotes (so an
    /// escaped form reads as the endpoint; elsewhere the plain form is used).
    fn word(&mut self, t: &Text, double: bool) -> String {
        match t {
            Text::Word(w) => w.clone(),
            Text::Junk(j) => JUNK[*j].to_string(),
            Text::JunkThen(j, e) => {
                // Known bug (see `an_ipv6_literal_before_the_endpoint_in_one_scalar`):
                // a bare `fd00::1` in the scalar holding `https://[fd00::1]:6443`
                // fails verification. Left out unless `with_known_bugs`.
                let j = if !self.with_known_bugs
                    && PAIRS[self.pair].0 == V6_OLD
                    && JUNK[*j].contains("fd00::1")
                {
                    0
                } else {
                    *j
                };
                format!("{} {}", JUNK[j], self.endpoint(*e, double))
            }
            Text::Endpoint(e) => self.endpoint(*e, double),
        }
    }

    fn endpoint(&mut self, i: usize, double: bool) -> String {
        self.endpoints += 1;
        let f = &self.forms[if self.forms[i].escaped && !double {
            0
        } else {
            i
        }];
        if self.new {
            f.new.clone()
        } else {
            f.old.clone()
        }
    }

    fn comment_text(&self, c: &Comment) -> String {
        match c {
            Comment::Korean => "주석: 클러스터 엔드포인트".into(),
            Comment::WasOld => format!("was {}", self.old_url),
            Comment::Junk(j) => format!("example: {}", JUNK[*j]),
            Comment::Words(w) => w.clone(),
        }
    }

    fn comment(&mut self) -> String {
        if self.comments.is_empty() {
            return String::new();
        }
        let c = &self.comments[self.next_comment % self.comments.len()];
        self.next_comment += 1;
        format!(" # {}", self.comment_text(c))
    }

    fn anchor(&mut self, anchor: bool) -> String {
        if anchor {
            self.anchors += 1;
            format!("&a{} ", self.anchors)
        } else {
            String::new()
        }
    }

    /// A scalar in flow or inline position (block styles fall back to double
    /// quotes; a plain scalar in a flow collection that holds a flow
    /// indicator, as an IPv6 literal does, to single quotes).
    fn inline(&mut self, text: &Text, style: Style, anchor: bool, in_flow: bool) -> String {
        let a = self.anchor(anchor);
        let double = !matches!(style, Style::Plain | Style::Single);
        let w = self.word(text, double);
        // Both renderings must choose alike: a plain endpoint in a flow
        // collection is quoted when either endpoint is an IPv6 literal (a
        // rewrite that would break the flow collection is refused instead).
        let (o, n) = PAIRS[self.pair];
        let brackets = (o.contains('[') || n.contains('[')) && !matches!(text, Text::Word(_));
        match style {
            Style::Plain if in_flow && (brackets || w.contains(['[', ']', '{', '}', ','])) => {
                format!("{a}'{w}'")
            }
            Style::Plain => format!("{a}{w}"),
            Style::Single => format!("{a}'{w}'"),
            _ => format!("{a}\"{w}\""),
        }
    }

    fn alias(&self) -> String {
        if self.anchors == 0 {
            "~".into()
        } else {
            format!("*a{}", self.anchors)
        }
    }

    fn flow(&mut self, n: &Node, in_flow: bool) -> String {
        match n {
            Node::Scalar {
                text,
                style,
                anchor,
            } => self.inline(text, *style, *anchor, in_flow),
            Node::Alias => self.alias(),
            Node::Map { entries, .. } => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", self.flow(v, true)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Node::Seq { items, .. } => {
                let parts: Vec<String> = items.iter().map(|v| self.flow(v, true)).collect();
                format!("[{}]", parts.join(", "))
            }
        }
    }

    /// Writes `n` as the value after `prefix` (`key:` or `-`) at `indent`.
    fn block(&mut self, prefix: &str, n: &Node, indent: usize) {
        let pad = " ".repeat(indent);
        match n {
            Node::Scalar {
                text,
                style: style @ (Style::Literal | Style::Folded),
                anchor,
            } => {
                let a = self.anchor(*anchor);
                let ind = if matches!(style, Style::Literal) {
                    "|"
                } else {
                    ">-"
                };
                let w = self.word(text, false);
                let c = self.comment();
                self.out.push_str(&format!(
                    "{pad}{prefix} {a}{ind}{c}\n{pad}  first line\n{pad}  {w} and more\n"
                ));
            }
            Node::Scalar { .. } | Node::Alias => {
                let v = self.flow(n, false);
                let c = self.comment();
                self.out.push_str(&format!("{pad}{prefix} {v}{c}\n"));
            }
            Node::Map { flow: true, .. } | Node::Seq { flow: true, .. } => {
                let v = self.flow(n, false);
                self.out.push_str(&format!("{pad}{prefix} {v}\n"));
            }
            Node::Map { entries, .. } => {
                let c = self.comment();
                self.out.push_str(&format!("{pad}{prefix}{c}\n"));
                for (k, v) in entries {
                    self.block(&format!("{k}:"), v, indent + 2);
                }
            }
            Node::Seq { items, .. } => {
                self.out.push_str(&format!("{pad}{prefix}\n"));
                for v in items {
                    self.block("-", v, indent + 2);
                }
            }
        }
    }

    /// The document as text (before encoding) and the number of endpoints placed.
    fn document(doc: &Doc, new: bool) -> (String, usize) {
        Render::document_with(doc, new, false)
    }

    fn document_with(doc: &Doc, new: bool, with_known_bugs: bool) -> (String, usize) {
        let mut r = Render {
            new,
            with_known_bugs,
            pair: doc.pair,
            forms: forms(doc.pair),
            old_url: PAIRS[doc.pair].0,
            out: String::new(),
            anchors: 0,
            endpoints: 0,
            comments: &doc.comments,
            next_comment: 0,
        };
        if let Some(c) = doc.comments.first() {
            let c = r.comment_text(c);
            r.out.push_str(&format!("# {c}\n"));
        }
        if let Node::Map { entries, .. } = &doc.root {
            for (k, v) in entries {
                r.block(&format!("{k}:"), v, 0);
            }
        }
        let mut out = r.out;
        match doc.line_break {
            Break::Lf => {}
            Break::CrLf => out = out.replace('\n', "\r\n"),
            Break::Cr => out = out.replace('\n', "\r"),
        }
        if doc.bom && doc.encoding == Encoding::Utf8 {
            out.insert(0, '\u{feff}');
        }
        (out, r.endpoints)
    }
}

/// The file's bytes: UTF-8 as is, UTF-16 with its byte order mark.
fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    let units = std::iter::once(0xfeff).chain(text.encode_utf16());
    match encoding {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf16Le => units.flat_map(u16::to_le_bytes).collect(),
        Encoding::Utf16Be => units.flat_map(u16::to_be_bytes).collect(),
    }
}

fn endpoints(pair: usize) -> (Endpoint, Endpoint) {
    let (o, n) = PAIRS[pair];
    (
        Endpoint::parse("--from", o).unwrap(),
        Endpoint::parse("--to", n).unwrap(),
    )
}

/// Runs a file with these bytes through the library the way `apply` does:
/// read and locate it (both endpoints' hosts, only files holding them), then
/// plan the rebind.
fn run(bytes: &[u8], pair: usize) -> (Inventory, Plan) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.yaml");
    std::fs::write(&path, bytes).unwrap();
    let (from, to) = endpoints(pair);
    let hosts = vec![from.host.to_ascii_lowercase(), to.host.to_ascii_lowercase()];
    let walk = Walk::of_entries(vec![Entry {
        path,
        rel: "p.yaml".into(),
        role: Role::Yaml,
    }]);
    let inv = rebind::commands::pipeline::inventory(&walk, &hosts, true).unwrap();
    let plan = rebind::review::plan::plan(&inv, &from, &to);
    (inv, plan)
}

/// The decoded documents (yaml-rust2's loader does not skip a byte order mark).
fn load(text: &str) -> Result<Vec<Yaml>, yaml_rust2::ScanError> {
    YamlLoader::load_from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// What `diff`/`apply` say when they refuse a tree holding one file with
/// these bytes (empty when they do not refuse).
fn refusal(bytes: &[u8], pair: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.yaml"), bytes).unwrap();
    let (o, n) = PAIRS[pair];
    let req = rebind::commands::cutover::Request {
        to: n.into(),
        from: Some(o.into()),
        cluster: None,
        expect_files: None,
        expect_occurrences: None,
        allow_merge: false,
        expect_from_audit: None,
        walk: rebind::commands::cutover::Scope {
            paths: vec![dir.path().to_path_buf()],
            ..Default::default()
        },
        ..Default::default()
    };
    match rebind::commands::cutover::plan(&req) {
        Ok(_) => String::new(),
        Err(e) => format!("{e:#}"),
    }
}

/// `s` with every URL of `from` (as `find_all` reads `s` alone) swapped
/// for `to`.
fn swap(s: &str, from: &Endpoint, to: &Endpoint) -> String {
    let hosts = [from.host.to_ascii_lowercase()];
    let mut out = String::new();
    let mut last = 0;
    for f in find_all(s, &s.to_ascii_lowercase(), &hosts) {
        // A bare IP is the endpoint only at a cluster position; the
        // generator writes none (an IPv6 literal inside a malformed URL reads
        // as one).
        if f.matches(from) && !f.is_bare_ip() {
            out.push_str(&s[last..f.start]);
            out.push_str(&f.replacement(to));
            last = f.replace_end;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// `y` with the endpoint swapped in every string, keys included.
fn swapped(y: &Yaml, from: &Endpoint, to: &Endpoint) -> Yaml {
    match y {
        Yaml::String(s) => Yaml::String(swap(s, from, to)),
        Yaml::Array(a) => Yaml::Array(a.iter().map(|v| swapped(v, from, to)).collect()),
        Yaml::Hash(h) => Yaml::Hash(
            h.iter()
                .map(|(k, v)| (swapped(k, from, to), swapped(v, from, to)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn check(d: &Doc, with_known_bugs: bool) -> Result<(), TestCaseError> {
    let (old, placed) = Render::document_with(d, false, with_known_bugs);
    let (new, _) = Render::document_with(d, true, with_known_bugs);
    let (from, to) = endpoints(d.pair);
    let (inv, plan) = run(&encode(&old, d.encoding), d.pair);
    if d.encoding != Encoding::Utf8 {
        // Never read as YAML, never rewritten; named, and as a file that
        // may hold the endpoint when it does (diff and apply then refuse).
        prop_assert!(
            plan.files.is_empty() && inv.sources.is_empty(),
            "{:?}",
            plan.files
        );
        prop_assert_eq!(inv.skipped.len(), 1);
        let s = &inv.skipped[0];
        prop_assert_eq!(&s.rel, "p.yaml");
        prop_assert!(s.reason.contains("UTF-16"), "{}", s.reason);
        let holds = placed > 0 || d.comments.iter().any(|c| matches!(c, Comment::WasOld));
        // Known bug (see `a_utf16_file_holding_an_escaped_endpoint_is_refused`):
        // an endpoint written only behind a `\x2e`/`\x3a` escape is not seen.
        let raw_host = {
            let host = &from.host.to_ascii_lowercase();
            old.to_ascii_lowercase().contains(host.as_str())
        };
        if with_known_bugs || raw_host {
            prop_assert_eq!(s.may_hold, holds, "{}\n{}", s.reason, old);
            if holds {
                // So diff and apply refuse, naming it.
                let e = refusal(&encode(&old, d.encoding), d.pair);
                prop_assert!(e.contains("p.yaml") && e.contains("UTF-16"), "{}", e);
            }
        }
        return Ok(());
    }
    // The generator only writes valid YAML; make sure of it first.
    let old_data = load(&old)
        .map_err(|e| TestCaseError::fail(format!("generated invalid YAML: {e}\n{old:?}")))?;
    prop_assert!(plan.errors.is_empty(), "{:?}\n{:?}", plan.errors, old);
    prop_assert!(inv.skipped.is_empty(), "{:?}", inv.skipped);
    let got = plan
        .files
        .first()
        .map_or(old.clone(), |f| f.new.to_string());
    prop_assert_eq!(plan.change_count(), placed, "\n{:?}", old);
    prop_assert_eq!(&got, &new, "\nold: {:?}", old);
    // Only the endpoint changed in the data any YAML reader sees.
    let new_data = load(&got)
        .map_err(|e| TestCaseError::fail(format!("rewritten text does not load: {e}\n{got:?}")))?;
    let want: Vec<Yaml> = old_data.iter().map(|y| swapped(y, &from, &to)).collect();
    prop_assert_eq!(&new_data, &want, "\n{:?}", old);
    // diff's patch gives apply's bytes.
    if let Some(f) = plan.files.first() {
        let patch = diff::unified(f);
        let (name, patched) =
            apply(&patch, &old).map_err(|e| TestCaseError::fail(format!("{e}\n{patch:?}")))?;
        prop_assert_eq!(name, "p.yaml");
        prop_assert_eq!(&patched, &got, "\n{:?}", patch);
    }
    // A second run has nothing to do.
    let (_, again) = run(got.as_bytes(), d.pair);
    prop_assert!(
        again.files.is_empty() && again.errors.is_empty(),
        "second run: {:?} {:?}\n{:?}",
        again.files.first().map(|f| &f.new),
        again.errors,
        got
    );
    Ok(())
}

proptest! {
    #[test]
    fn rebinding_the_old_document_gives_the_new_one(d in doc()) {
        check(&d, false)?;
    }
}

/// `--from https://[fd00::1]:6443 --to https://[fd00::2]:6443` on a scalar
/// holding the malformed `https://[fd00::1 (...` and then the endpoint:
/// the endpoint is spliced, but verification expects the bare `fd00::1`
/// inside the malformed URL swapped too, so the rebind is refused (exit 2,
/// "verification failed at 2:53"). Expected: the endpoint rewritten, the
/// malformed text left alone, as when it sits in another scalar.
#[test]
fn an_ipv6_literal_before_the_endpoint_in_one_scalar() {
    for text in [
        "a:\n  a: https://[fd00::1 (IPv6 clusters need brackets) https://[fd00::1]:6443\n",
        "b: \"fd00::1 x https://[fd00::1]:6443\"\n",
    ] {
        let (_, plan) = run(text.as_bytes(), 1);
        assert!(plan.errors.is_empty(), "{:?}", plan.errors);
        let new = text.replace("https://[fd00::1]:6443", V6_NEW);
        assert_eq!(plan.files.first().map(|f| &*f.new), Some(new.as_str()));
    }
}

/// A UTF-16 YAML file whose only endpoint is written with a `\x2e` escape
/// (`"https://<id>\x2egr7.ap-northeast-2.eks.amazonaws.com"`, the endpoint to
/// any YAML reader) is skipped without `may_hold`: with another file holding
/// the endpoint, `diff` plans that one and exits 1 with only a warning for
/// the UTF-16 file; alone, `diff` says the endpoint "is not in the 1 file".
/// Expected: named as a file that may hold the endpoint, and refused (exit 2),
/// as when the host is written without escapes.
#[test]
fn a_utf16_file_holding_an_escaped_endpoint_is_refused() {
    let text = format!(
        "a: \"https://{}\"\n",
        EKS_OLD["https://".len()..].replacen('.', "\\x2e", 1)
    );
    let (inv, plan) = run(&encode(&text, Encoding::Utf16Le), 0);
    assert!(plan.files.is_empty());
    assert!(inv.skipped[0].may_hold, "{:?}", inv.skipped);
}

/// The same text in two scalars is rebound (what the bug above should match).
#[test]
fn an_ipv6_literal_before_the_endpoint_in_another_scalar() {
    let text = "a: \"https://[fd00::1 (x\"\nb: https://[fd00::1]:6443\n";
    let (_, plan) = run(text.as_bytes(), 1);
    assert!(plan.errors.is_empty(), "{:?}", plan.errors);
    let new = text.replace("https://[fd00::1]:6443", V6_NEW);
    assert_eq!(plan.files.first().map(|f| &*f.new), Some(new.as_str()));
}

/// The generator really produces what the property claims to cover.
#[test]
fn generator_covers_what_the_property_claims() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..400 {
        let d = doc().new_tree(&mut runner).unwrap().current();
        let (text, n) = Render::document(&d, false);
        let lower = text.to_ascii_lowercase();
        let junk_at = JUNK.iter().filter_map(|j| text.find(j)).min();
        let old_at = [
            EKS_OLD,
            V6_OLD,
            "\\u0068ttps://",
            "\\x2e",
            "\\x3a",
            "https:\\/\\/",
        ]
        .iter()
        .filter_map(|e| text.find(e))
        .max();
        let utf8 = d.encoding == Encoding::Utf8;
        for (what, yes) in [
            ("endpoints", n > 0),
            ("CRLF", text.contains("\r\n")),
            ("lone CR", text.contains('\r') && !text.contains("\r\n")),
            ("BOM", text.starts_with('\u{feff}')),
            ("Korean comments", text.contains("주석")),
            ("anchors", text.contains(" &a")),
            ("block scalars", text.contains("|") || text.contains(">-")),
            ("UTF-16", !utf8 && n > 0),
            ("IPv6 --from", d.pair % 2 == 1 && n > 0),
            ("IPv6 --to", matches!(d.pair, 1 | 2) && n > 0),
            ("\\u escape", utf8 && text.contains("\"\\u0068ttps://")),
            (
                "\\x escape",
                utf8 && (text.contains("\\x2e") || text.contains("\\x3a")),
            ),
            ("\\/ escape", utf8 && text.contains("https:\\/\\/")),
            (
                "IPv6 in a file",
                utf8 && lower.contains("https://[fd00::1]:6443"),
            ),
            (
                "malformed URL before an endpoint",
                utf8 && junk_at.zip(old_at).is_some_and(|(j, o)| j < o),
            ),
            (
                "malformed URL in the first comment",
                text.starts_with("# example: https://"),
            ),
        ] {
            *seen.entry(what).or_default() += usize::from(yes);
        }
    }
    for (what, n) in seen {
        assert!(n >= 20, "only {n} of 400 generated documents have {what}");
    }
}

#[test]
fn the_patch_applier_rejects_a_wrong_context_line() {
    let patch = "--- a/p.yaml\n+++ b/p.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n";
    assert_eq!(apply(patch, "a: 1\nb: 2\n").unwrap().1, "a: 1\nb: 3\n");
    assert!(apply(patch, "a: 9\nb: 2\n").is_err());
}
