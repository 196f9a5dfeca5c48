//! Property tests: random YAML documents (nested maps and sequences, block and
//! flow style, every quoting and block-scalar style, comments with Korean text,
//! anchors and aliases, CRLF, a BOM) with endpoints placed at random. Rebinding
//! the document written with the old endpoint must give exactly the document
//! written with the new one.
//!
//! More cases: `PROPTEST_CASES=20000 cargo test --release --test props`.

use proptest::prelude::*;
use rebind::endpoint::Endpoint;
use rebind::walk::{Entry, Role};
use rebind::{locate, rewrite, Inventory, Source};

const OLD: &str = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW: &str = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

/// How an endpoint is written: (old form, new form).
fn endpoint_forms() -> Vec<(String, String)> {
    vec![
        (OLD.to_string(), NEW.to_string()),
        (format!("{OLD}/"), format!("{NEW}/")),
        (format!("{OLD}:443"), NEW.to_string()),
        (
            format!("{}?__uid=7", OLD.to_ascii_lowercase()),
            format!("{NEW}?__uid=7"),
        ),
    ]
}

#[derive(Debug, Clone)]
enum Text {
    Word(String),
    /// Index into [`endpoint_forms`].
    Endpoint(usize),
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
struct Doc {
    root: Node,
    comments: Vec<String>,
    crlf: bool,
    bom: bool,
}

fn text() -> impl Strategy<Value = Text> {
    prop_oneof![
        "[a-z]{1,8}".prop_map(Text::Word),
        (0..4usize).prop_map(Text::Endpoint),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        Just(Style::Plain),
        Just(Style::Single),
        Just(Style::Double),
        Just(Style::Literal),
        Just(Style::Folded)
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
        Just("주석: 클러스터 엔드포인트".to_string()),
        Just(format!("was {OLD}")),
        "[a-z ]{0,12}",
    ];
    (
        (prop::collection::btree_map("[a-z]{1,6}", node(), 1..5)).prop_map(|m| Node::Map {
            entries: m.into_iter().collect(),
            flow: false,
        }),
        prop::collection::vec(comment, 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(root, comments, crlf, bom)| Doc {
            root,
            comments,
            crlf,
            bom,
        })
}

/// Renders documents; `new` picks the new endpoint forms. Counts endpoint scalars.
struct Render<'a> {
    new: bool,
    out: String,
    anchors: usize,
    endpoints: usize,
    comments: &'a [String],
    next_comment: usize,
}

impl Render<'_> {
    fn word(&mut self, t: &Text) -> String {
        match t {
            Text::Word(w) => w.clone(),
            Text::Endpoint(i) => {
                self.endpoints += 1;
                let (o, n) = &endpoint_forms()[*i];
                if self.new {
                    n.clone()
                } else {
                    o.clone()
                }
            }
        }
    }

    fn comment(&mut self) -> String {
        if self.comments.is_empty() {
            return String::new();
        }
        let c = &self.comments[self.next_comment % self.comments.len()];
        self.next_comment += 1;
        format!(" # {c}")
    }

    fn anchor(&mut self, anchor: bool) -> String {
        if anchor {
            self.anchors += 1;
            format!("&a{} ", self.anchors)
        } else {
            String::new()
        }
    }

    /// A scalar in flow or inline position (block styles fall back to double quotes).
    fn inline(&mut self, text: &Text, style: Style, anchor: bool) -> String {
        let a = self.anchor(anchor);
        let w = self.word(text);
        match style {
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

    fn flow(&mut self, n: &Node) -> String {
        match n {
            Node::Scalar {
                text,
                style,
                anchor,
            } => self.inline(text, *style, *anchor),
            Node::Alias => self.alias(),
            Node::Map { entries, .. } => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", self.flow(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Node::Seq { items, .. } => {
                let parts: Vec<String> = items.iter().map(|v| self.flow(v)).collect();
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
                let w = self.word(text);
                let c = self.comment();
                self.out.push_str(&format!(
                    "{pad}{prefix} {a}{ind}{c}\n{pad}  first line\n{pad}  {w} and more\n"
                ));
            }
            Node::Scalar { .. } | Node::Alias => {
                let v = self.flow(n);
                let c = self.comment();
                self.out.push_str(&format!("{pad}{prefix} {v}{c}\n"));
            }
            Node::Map { flow: true, .. } | Node::Seq { flow: true, .. } => {
                let v = self.flow(n);
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

    fn document(doc: &Doc, new: bool) -> (String, usize) {
        let mut r = Render {
            new,
            out: String::new(),
            anchors: 0,
            endpoints: 0,
            comments: &doc.comments,
            next_comment: 0,
        };
        if let Some(c) = doc.comments.first() {
            r.out.push_str(&format!("# {c}\n"));
        }
        if let Node::Map { entries, .. } = &doc.root {
            for (k, v) in entries {
                r.block(&format!("{k}:"), v, 0);
            }
        }
        let mut out = r.out;
        if doc.crlf {
            out = out.replace('\n', "\r\n");
        }
        if doc.bom {
            out.insert(0, '\u{feff}');
        }
        (out, r.endpoints)
    }
}

fn rebind_text(text: &str) -> Result<(String, usize), String> {
    let from = Endpoint::parse("--from", OLD).unwrap();
    let to = Endpoint::parse("--to", NEW).unwrap();
    let hosts = vec![from.host.to_ascii_lowercase()];
    let inv = Inventory {
        sources: vec![Source {
            entry: Entry {
                path: "p.yaml".into(),
                rel: "p.yaml".into(),
                role: Role::Yaml,
            },
            text: text.into(),
            located: locate::locate_yaml(text, &hosts, true),
        }],
        skipped: vec![],
    };
    let plan = rewrite::plan(&inv, &from, &to);
    if let Some(e) = plan.errors.first() {
        return Err(e.to_string());
    }
    Ok(match plan.files.first() {
        Some(f) => (f.new.to_string(), f.changes.len()),
        None => (text.to_string(), 0),
    })
}

proptest! {
    #[test]
    fn rebinding_the_old_document_gives_the_new_one(d in doc()) {
        let (old, placed) = Render::document(&d, false);
        let (new, _) = Render::document(&d, true);
        // The generator only writes valid YAML; make sure of it first.
        prop_assert!(locate::locate_yaml(&old, &[], false).is_ok(), "generated invalid YAML:\n{}", old);
        let (got, changed) = rebind_text(&old).map_err(|e| TestCaseError::fail(format!("{e}\n{old}")))?;
        prop_assert_eq!(changed, placed, "\n{}", old);
        prop_assert_eq!(got, new);
    }
}

/// The generator really produces what the property claims to cover.
#[test]
fn generator_covers_endpoints_styles_crlf_and_bom() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut with_endpoints, mut crlf, mut bom, mut korean, mut anchors, mut block_scalars) =
        (0, 0, 0, 0, 0, 0);
    for _ in 0..300 {
        let d = doc().new_tree(&mut runner).unwrap().current();
        let (text, n) = Render::document(&d, false);
        with_endpoints += usize::from(n > 0);
        crlf += usize::from(text.contains("\r\n"));
        bom += usize::from(text.starts_with('\u{feff}'));
        korean += usize::from(text.contains("주석"));
        anchors += usize::from(text.contains(" &a"));
        block_scalars += usize::from(text.contains("|") || text.contains(">-"));
    }
    for (what, n) in [
        ("endpoints", with_endpoints),
        ("CRLF", crlf),
        ("BOM", bom),
        ("Korean comments", korean),
        ("anchors", anchors),
        ("block scalars", block_scalars),
    ] {
        assert!(n >= 30, "only {n} of 300 generated documents have {what}");
    }
}
