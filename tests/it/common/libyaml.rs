//! The second decoded-data oracle: the same checks as `oracle::check`, with
//! the documents decoded by libyaml (through `libyaml-safer`, a line-by-line
//! port of libyaml to safe Rust) instead of yaml-rust2, the parser rebind
//! itself uses. Shared by the `libyaml_oracle` fuzz target and
//! tests/it/libyaml_oracle.rs.
//!
//! Each implementation's events are built into one neutral tree ([`Node`]:
//! every scalar is its decoded text and tag, aliases resolved). Where the two
//! implementations read the *input* differently (one refuses it, or they
//! decode other data), the case is skipped: the oracle judges rebind, not the
//! parsers.
#![allow(dead_code)] // each includer uses a part

use super::oracle::{check, expand, swapped, Case};
use rebind::text::endpoint::Endpoint;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the fuzz target, whose panic hook aborts the process: a panic of
/// the libyaml port itself (it has a few on truncated input) is then caught
/// with a silent hook in place. Either way such a panic reads as libyaml
/// refusing the input: a defect of the port, not of rebind.
pub static QUIET_PORT_PANICS: AtomicBool = AtomicBool::new(false);

/// `f`, a panic caught as `None`.
fn guarded<T>(f: impl FnOnce() -> Option<T> + std::panic::UnwindSafe) -> Option<T> {
    if !QUIET_PORT_PANICS.load(Ordering::Relaxed) {
        return std::panic::catch_unwind(f).ok().flatten();
    }
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(f);
    std::panic::set_hook(hook);
    r.ok().flatten()
}

/// A decoded node: no type resolution, so every scalar is compared as text.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Scalar {
        tag: Option<String>,
        value: String,
    },
    Seq {
        tag: Option<String>,
        items: Vec<Node>,
    },
    Map {
        tag: Option<String>,
        entries: Vec<(Node, Node)>,
    },
}

/// One parser event, as both implementations report it.
pub enum Ev {
    DocumentStart,
    DocumentEnd,
    Scalar {
        anchor: Option<String>,
        tag: Option<String>,
        value: String,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    End,
    Alias(String),
}

/// Aliases can multiply a small input; past this many nodes a document is
/// not decoded (treated as not loading).
const MAX_NODES: usize = 100_000;

/// Builds the documents of an event stream; `None` on an alias to no anchor,
/// an unbalanced stream or past [`MAX_NODES`].
pub fn build(events: impl IntoIterator<Item = Ev>) -> Option<Vec<Node>> {
    let mut docs = Vec::new();
    let mut anchors: HashMap<String, Node> = HashMap::new();
    // Open collections: the node being filled, its anchor, a pending key.
    let mut open: Vec<(Node, Option<String>, Option<Node>)> = Vec::new();
    let mut nodes = 0usize;
    for ev in events {
        let (node, anchor) = match ev {
            Ev::DocumentStart | Ev::DocumentEnd => continue,
            Ev::Scalar { anchor, tag, value } => (Node::Scalar { tag, value }, anchor),
            Ev::Alias(a) => {
                let node = anchors.get(&a)?;
                // An alias copies its whole tree: counted whole.
                nodes += size(node) - 1;
                (node.clone(), None)
            }
            Ev::SequenceStart { anchor, tag } => {
                let seq = Node::Seq { tag, items: vec![] };
                open.push((seq, anchor, None));
                continue;
            }
            Ev::MappingStart { anchor, tag } => {
                let map = Node::Map {
                    tag,
                    entries: vec![],
                };
                open.push((map, anchor, None));
                continue;
            }
            Ev::End => {
                let (node, anchor, key) = open.pop()?;
                if key.is_some() {
                    return None;
                }
                (node, anchor)
            }
        };
        nodes += 1;
        if nodes > MAX_NODES {
            return None;
        }
        if let Some(a) = anchor {
            anchors.insert(a, node.clone());
        }
        match open.last_mut() {
            None => docs.push(node),
            Some((Node::Seq { items, .. }, _, _)) => items.push(node),
            Some((Node::Map { entries, .. }, _, key)) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
            Some((Node::Scalar { .. }, _, _)) => return None,
        }
    }
    open.is_empty().then_some(docs)
}

/// How many nodes a tree holds.
fn size(node: &Node) -> usize {
    match node {
        Node::Scalar { .. } => 1,
        Node::Seq { items, .. } => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map { entries, .. } => {
            1 + entries
                .iter()
                .map(|(k, v)| size(k) + size(v))
                .sum::<usize>()
        }
    }
}

/// The documents libyaml decodes in `text`; `None` when it refuses it (or
/// the port panics on it).
pub fn load_libyaml(text: &str) -> Option<Vec<Node>> {
    guarded(|| libyaml_events(text)).and_then(build)
}

fn libyaml_events(text: &str) -> Option<Vec<Ev>> {
    use libyaml_safer::{EventData, Parser};
    let mut input = text.as_bytes();
    let mut parser = Parser::new();
    parser.set_input_string(&mut input);
    let mut events = Vec::new();
    loop {
        let ev = match parser.parse().ok()?.data {
            EventData::StreamStart { .. } => continue,
            EventData::StreamEnd => break,
            EventData::DocumentStart { .. } => Ev::DocumentStart,
            EventData::DocumentEnd { .. } => Ev::DocumentEnd,
            EventData::Alias { anchor } => Ev::Alias(anchor),
            EventData::Scalar {
                anchor, tag, value, ..
            } => Ev::Scalar { anchor, tag, value },
            EventData::SequenceStart { anchor, tag, .. } => Ev::SequenceStart { anchor, tag },
            EventData::MappingStart { anchor, tag, .. } => Ev::MappingStart { anchor, tag },
            EventData::SequenceEnd | EventData::MappingEnd => Ev::End,
        };
        events.push(ev);
    }
    Some(events)
}

/// The documents rebind's reader (yaml-rust2's events through
/// `rebind::syntax::yaml::Events`: a byte order mark skipped, a tab after a
/// mapping's colon read as separation) reads in `text`, in the same tree
/// (tags as `handle` + `suffix`); `None` when it refuses it.
pub fn load_yaml_rust2_events(text: &str) -> Option<Vec<Node>> {
    use yaml_rust2::parser::Event;
    let mut parser = rebind::syntax::yaml::Events::new(text);
    let anchor = |id: usize| (id != 0).then(|| id.to_string());
    let mut events = Vec::new();
    loop {
        let tag =
            |t: Option<yaml_rust2::parser::Tag>| t.map(|t| format!("{}{}", t.handle, t.suffix));
        let ev = match parser.next()?.ok()?.0 {
            Event::StreamStart | Event::Nothing => continue,
            Event::StreamEnd => break,
            Event::DocumentStart => Ev::DocumentStart,
            Event::DocumentEnd => Ev::DocumentEnd,
            Event::Alias(id) => Ev::Alias(id.to_string()),
            Event::Scalar(value, _, id, t) => Ev::Scalar {
                anchor: anchor(id),
                tag: tag(t),
                value,
            },
            Event::SequenceStart(id, t) => Ev::SequenceStart {
                anchor: anchor(id),
                tag: tag(t),
            },
            Event::MappingStart(id, t) => Ev::MappingStart {
                anchor: anchor(id),
                tag: tag(t),
            },
            Event::SequenceEnd | Event::MappingEnd => Ev::End,
        };
        events.push(ev);
    }
    build(events)
}

/// Whether two trees hold the same data, tags aside (the two
/// implementations spell resolved tags differently).
fn same_data(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Scalar { value: x, .. }, Node::Scalar { value: y, .. }) => x == y,
        (Node::Seq { items: x, .. }, Node::Seq { items: y, .. }) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_data(p, q))
        }
        (Node::Map { entries: x, .. }, Node::Map { entries: y, .. }) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, v), (l, w))| same_data(k, l) && same_data(v, w))
        }
        _ => false,
    }
}

/// Whether yaml-rust2 and libyaml read `text` alike: both refuse it, or both
/// decode the same data.
pub fn parsers_agree(text: &str) -> bool {
    match (load_yaml_rust2_events(text), load_libyaml(text)) {
        (None, None) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same_data(x, y)),
        _ => false,
    }
}

/// Whether the decoded tree `new` is `old` with the endpoint swapped in every
/// scalar (tags, structure and every other text unchanged).
pub fn same_but_swapped(old: &Node, new: &Node, from: &Endpoint, to: &Endpoint) -> bool {
    match (old, new) {
        (Node::Scalar { tag: s, value: a }, Node::Scalar { tag: t, value: b }) => {
            s == t && swapped(a, b, from, to)
        }
        (Node::Seq { tag: s, items: a }, Node::Seq { tag: t, items: b }) => {
            s == t
                && a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| same_but_swapped(x, y, from, to))
        }
        (Node::Map { tag: s, entries: a }, Node::Map { tag: t, entries: b }) => {
            s == t
                && a.len() == b.len()
                && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
                    same_but_swapped(ka, kb, from, to) && same_but_swapped(va, vb, from, to)
                })
        }
        _ => false,
    }
}

/// What the second oracle made of one input.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Checked: rebind's result decodes (with libyaml) as it must.
    Checked,
    /// The two YAML implementations read the input differently: no verdict.
    Skipped,
}

/// The libyaml oracle on one case; `Err` says what rebind got wrong.
pub fn libyaml_check(case: &Case) -> Result<Verdict, String> {
    if !parsers_agree(&case.text) {
        return Ok(Verdict::Skipped);
    }
    check(case, load_libyaml, same_but_swapped).map(|()| Verdict::Checked)
}

/// The libyaml oracle on one input of the fuzz grammar.
pub fn libyaml_oracle(raw: &str) -> Result<Verdict, String> {
    libyaml_check(&expand(raw))
}
