//! The one verification of every edit (an endpoint rewritten, a base64 value
//! re-encoded, a cluster name changed, a trust statement added or removed):
//! the old and the new text are both read by the one reader
//! ([`crate::syntax::yaml::read_yaml_or_json`], template actions masked when
//! the old text needs it), and the decoded documents must differ by exactly
//! the planned operations: a scalar that reads its expected value, an item
//! inserted after another (or into an empty sequence), an item removed, a
//! mapping entry inserted after another, a string that holds a document of
//! its own changed by operations of its own. Every other scalar reads
//! as it did, in the same style; every collection keeps its shape; no two
//! keys of one mapping become equal (a reader would keep only one).

use crate::syntax::yaml::{self, Node, ParseFailure, Value};
use std::collections::{HashMap, HashSet};
use yaml_rust2::scanner::TScalarStyle::{DoubleQuoted, SingleQuoted};
use yaml_rust2::Yaml;

/// What a scalar must read after the edit, from what it read before.
pub type ScalarRule<'a> = Box<dyn Fn(&str) -> Result<String, String> + 'a>;

/// What an inserted item must read, from the item it follows.
pub type ItemRule<'a> = Box<dyn Fn(&Yaml) -> Yaml + 'a>;

/// One planned operation, as the decoded documents see it. Offsets are
/// byte offsets of the old text (of the decoded string, inside a
/// [`Expect::Document`]).
pub enum Expect<'a> {
    /// The scalar (a value or a key) that holds offset `at` (the last one
    /// starting at or before it) reads `rule(old value)` after the edit.
    Scalar { at: usize, rule: ScalarRule<'a> },
    /// The string scalar holding `at` is a document of its own whose
    /// difference is exactly `inner` (offsets in its decoded value).
    Document { at: usize, inner: Vec<Expect<'a>> },
    /// After the sequence item starting at `after`, one new item reading
    /// `rule(that item)`; in an empty sequence starting at `after`, its one
    /// item, reading `rule(the empty sequence)`. An item both removed and
    /// followed by an insertion is replaced (in any style).
    Insert { after: usize, rule: ItemRule<'a> },
    /// The sequence item starting at `at` is gone.
    Remove { at: usize },
    /// After the mapping entry whose key starts at `after`, one new entry
    /// reading `key: value`, a key no other entry of the mapping reads.
    Entry {
        after: usize,
        key: Yaml,
        value: Yaml,
    },
}

/// A planned scalar as it read before and after the edit.
#[derive(Debug, Clone)]
pub struct Changed {
    /// Where the scalar starts in the old text.
    pub start: usize,
    pub old: String,
    pub new: String,
}

/// Two keys of one mapping that the edit makes equal: each as written
/// before, with its line and column, and what both read after.
#[derive(Debug, Clone)]
pub struct Collision {
    pub first: (String, usize, usize),
    pub second: (String, usize, usize),
    pub both: String,
}

/// Why an edit is refused.
#[derive(Debug, Clone)]
pub enum Mismatch {
    /// The new text no longer parses.
    Unparsable(ParseFailure),
    /// Two keys of one mapping read the same after the edit.
    Keys(Collision),
    /// Something differs from the plan, at this line and column of the old text.
    At(usize, usize, String),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Unparsable((l, c, m)) => {
                write!(f, "the edited text does not parse ({l}:{c}: {m})")
            }
            Mismatch::Keys(c) => write!(
                f,
                "{:?} ({}:{}) and {:?} ({}:{}) would both read {:?}",
                c.first.0, c.first.1, c.first.2, c.second.0, c.second.1, c.second.2, c.both
            ),
            Mismatch::At(l, c, m) => write!(f, "{l}:{c}: {m}"),
        }
    }
}

/// Checks that `new` is `old` changed by exactly `expect`; returns each
/// planned scalar as it read before and after.
pub fn verify(old: &str, new: &str, expect: &[Expect]) -> Result<Vec<Changed>, Mismatch> {
    let (before, masked) = yaml::read_maybe_masked(old).map_err(|(l, c, m)| {
        Mismatch::At(
            l,
            c,
            format!("the text before the edit does not parse: {m}"),
        )
    })?;
    verify_read(&before, !masked.is_empty(), new, expect)
}

/// [`verify`] for an old text already read (`masked` as
/// [`yaml::read_maybe_masked`] said).
pub fn verify_read(
    before: &[Node],
    masked: bool,
    new: &str,
    expect: &[Expect],
) -> Result<Vec<Changed>, Mismatch> {
    let after =
        yaml::read_yaml_or_json(&yaml::parsed_text(new, masked)).map_err(Mismatch::Unparsable)?;
    let mut w = Walk::new(before, expect);
    if before.len() != after.len() {
        return Err(Mismatch::At(1, 1, "the number of documents changed".into()));
    }
    for (a, b) in before.iter().zip(&after) {
        w.run(a, b)?;
    }
    if w.seen != expect.len() {
        return Err(Mismatch::At(
            1,
            1,
            "a planned change was not read back".into(),
        ));
    }
    Ok(w.changed)
}

/// One step of the parallel walk: a node before and after, or the keys
/// of a mapping to check once its entries are.
enum Task<'n> {
    Pair(&'n Node, &'n Node),
    Keys(Vec<&'n Node>, Vec<&'n Node>),
}

/// The parallel walk of the old and the new documents (with a stack of its
/// own: a document may nest as deep as the reader allows).
struct Walk<'p, 'a> {
    /// Scalar and document expectations by the old scalar node they name.
    scalars: HashMap<*const Node, &'p Expect<'a>>,
    /// Insertions, each taken when read (never by two collections).
    inserts: HashMap<usize, &'p ItemRule<'a>>,
    entries: HashMap<usize, (&'p Yaml, &'p Yaml)>,
    removes: HashSet<usize>,
    seen: usize,
    changed: Vec<Changed>,
}

impl<'p, 'a> Walk<'p, 'a> {
    fn new(before: &[Node], expect: &'p [Expect<'a>]) -> Walk<'p, 'a> {
        let starts = scalars(before);
        let mut w = Walk {
            scalars: HashMap::new(),
            inserts: HashMap::new(),
            entries: HashMap::new(),
            removes: HashSet::new(),
            seen: 0,
            changed: Vec::new(),
        };
        for e in expect {
            match e {
                Expect::Scalar { at, .. } | Expect::Document { at, .. } => {
                    if let Some(n) = holding(&starts, *at) {
                        w.scalars.insert(n, e);
                    }
                }
                Expect::Insert { after, rule } => {
                    w.inserts.insert(*after, rule);
                }
                Expect::Remove { at } => {
                    w.removes.insert(*at);
                }
                Expect::Entry { after, key, value } => {
                    w.entries.insert(*after, (key, value));
                }
            }
        }
        w
    }

    fn run<'n>(&mut self, a: &'n Node, b: &'n Node) -> Result<(), Mismatch> {
        let mut stack = vec![Task::Pair(a, b)];
        while let Some(t) = stack.pop() {
            match t {
                Task::Pair(a, b) => self.pair(a, b, &mut stack)?,
                Task::Keys(p, q) => {
                    if let Some(c) = same_keys(&p, &q) {
                        return Err(Mismatch::Keys(c));
                    }
                }
            }
        }
        Ok(())
    }

    fn pair<'n>(
        &mut self,
        a: &'n Node,
        b: &'n Node,
        stack: &mut Vec<Task<'n>>,
    ) -> Result<(), Mismatch> {
        let differs =
            |what: &str| Mismatch::At(a.line, a.col, format!("the {what} differs after the edit"));
        match (&a.value, &b.value) {
            (Value::Scalar(x, sa), Value::Scalar(y, sb)) => {
                let want = match self.scalars.get(&(a as *const Node)) {
                    None => None,
                    Some(e) => {
                        self.seen += 1;
                        self.changed.push(Changed {
                            start: a.start,
                            old: x.clone(),
                            new: y.clone(),
                        });
                        Some(expected(e, x, y).map_err(|m| Mismatch::At(a.line, a.col, m))?)
                    }
                };
                let want = want.as_deref().unwrap_or(x);
                if y != want {
                    return Err(Mismatch::At(
                        a.line,
                        a.col,
                        format!("expected {want:?} after the edit, found {y:?}"),
                    ));
                }
                if sa != sb {
                    return Err(differs("scalar's style"));
                }
            }
            (Value::Map(p), Value::Map(q)) => self.entries(a, p, q, stack)?,
            (Value::Seq(p), Value::Seq(q)) => self.items(a, p, q, stack)?,
            (Value::Alias(_), Value::Alias(_)) => {}
            _ => return Err(differs("structure")),
        }
        Ok(())
    }

    /// A sequence: every old item but the removed ones, in order, each
    /// followed by the items inserted after it.
    fn items<'n>(
        &mut self,
        a: &Node,
        p: &'n [Node],
        q: &'n [Node],
        stack: &mut Vec<Task<'n>>,
    ) -> Result<(), Mismatch> {
        let mut next = q.iter();
        let missing = || Mismatch::At(a.line, a.col, "the sequence differs after the edit".into());
        let mut pairs = Vec::with_capacity(p.len());
        if let Some(rule) = p
            .is_empty()
            .then(|| self.inserts.remove(&a.start))
            .flatten()
        {
            self.seen += 1;
            if next.next().ok_or_else(missing)?.data() != rule(&a.data()) {
                return Err(missing());
            }
        }
        for item in p {
            if self.removes.contains(&item.start) {
                self.seen += 1;
            } else {
                pairs.push(Task::Pair(item, next.next().ok_or_else(missing)?));
            }
            if let Some(rule) = self.inserts.remove(&item.start) {
                self.seen += 1;
                let (want, got) = (rule(&item.data()), next.next().ok_or_else(missing)?.data());
                if got != want {
                    return Err(Mismatch::At(
                        item.line,
                        item.col,
                        format!(
                            "the item inserted after this one reads {got:?}, expected {want:?}"
                        ),
                    ));
                }
            }
        }
        if next.next().is_some() {
            return Err(missing());
        }
        stack.extend(pairs.into_iter().rev());
        Ok(())
    }

    /// A mapping: every old entry, in order, each followed by the entry
    /// inserted after it; its keys checked once its entries are, when one
    /// of them is planned.
    fn entries<'n>(
        &mut self,
        a: &Node,
        p: &'n [(Node, Node)],
        q: &'n [(Node, Node)],
        stack: &mut Vec<Task<'n>>,
    ) -> Result<(), Mismatch> {
        let differs = || Mismatch::At(a.line, a.col, "the structure differs after the edit".into());
        let planned_key = p
            .iter()
            .any(|(k, _)| self.scalars.contains_key(&(k as *const Node)));
        let mut keys = (Vec::new(), Vec::new());
        let (mut next, base) = (q.iter(), stack.len());
        for (k1, v1) in p {
            let (k2, v2) = next.next().ok_or_else(differs)?;
            stack.extend([Task::Pair(k1, k2), Task::Pair(v1, v2)]);
            if planned_key {
                keys.0.push(k1);
                keys.1.push(k2);
            }
            let Some((key, value)) = self.entries.remove(&k1.start) else {
                continue;
            };
            self.seen += 1;
            let new = next
                .next()
                .filter(|(k, v)| (&k.data(), &v.data()) == (key, value));
            if new.is_none() || q.iter().filter(|(k, _)| k.data() == *key).count() != 1 {
                let m = format!("the entry inserted after this one does not read {key:?}: {value:?} under a key of its own");
                return Err(Mismatch::At(k1.line, k1.col, m));
            }
        }
        if next.next().is_some() {
            return Err(differs());
        }
        stack[base..].reverse();
        if planned_key {
            stack.insert(base, Task::Keys(keys.0, keys.1));
        }
        Ok(())
    }
}

/// Every scalar of `docs` that holds a value or is quoted, by where it
/// starts (an empty scalar not quoted may start where the next one does:
/// it holds no change).
pub fn scalars(docs: &[Node]) -> Vec<&Node> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = docs.iter().collect();
    while let Some(n) = stack.pop() {
        match &n.value {
            Value::Scalar(v, s) if !v.is_empty() || matches!(s, SingleQuoted | DoubleQuoted) => {
                out.push(n)
            }
            Value::Map(pairs) => pairs.iter().for_each(|(k, v)| stack.extend([k, v])),
            Value::Seq(items) => stack.extend(items),
            _ => {}
        }
    }
    out.sort_unstable_by_key(|n| n.start);
    out
}

/// The scalar of [`scalars`] that holds offset `at`: the last one starting
/// at or before it.
pub fn holding<'n>(scalars: &[&'n Node], at: usize) -> Option<&'n Node> {
    let i = scalars.partition_point(|n| n.start <= at);
    i.checked_sub(1).map(|i| scalars[i])
}

/// What a planned scalar must read, from its old value `x` (its new one
/// `y`, when it holds a document verified by its own operations).
fn expected(e: &Expect, x: &str, y: &str) -> Result<String, String> {
    match e {
        Expect::Scalar { rule, .. } => rule(x),
        Expect::Document { inner, .. } => verify(x, y, inner)
            .map(|_| y.to_string())
            .map_err(|m| format!("in the document held in this string: {m}")),
        _ => unreachable!("only scalars are planned by their scalar"),
    }
}

/// Two keys of one mapping (`p` before, `q` after, in the same order) that
/// read the same after the edit but did not before.
fn same_keys(p: &[&Node], q: &[&Node]) -> Option<Collision> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (j, k) in q.iter().enumerate() {
        let Some(v) = k.as_str() else { continue };
        match seen.get(v) {
            Some(&i) if p[i].as_str() != p[j].as_str() => {
                let key = |n: &Node| (n.as_str().unwrap_or_default().to_string(), n.line, n.col);
                return Some(Collision {
                    first: key(p[i]),
                    second: key(p[j]),
                    both: v.to_string(),
                });
            }
            Some(_) => {}
            None => {
                seen.insert(v, j);
            }
        }
    }
    None
}

/// Two readings of one document differ in shape.
#[derive(Debug)]
pub struct ShapeChanged;

/// For two readings of one document whose values changed freely: the first
/// two keys of one mapping that the change makes equal; `Err` when the
/// shapes differ (another kind of node, another number of entries).
pub fn collision(before: &[Node], after: &[Node]) -> Result<Option<Collision>, ShapeChanged> {
    if before.len() != after.len() {
        return Err(ShapeChanged);
    }
    let mut stack: Vec<(&Node, &Node)> = before.iter().zip(after).collect();
    let mut found = None;
    while let Some((a, b)) = stack.pop() {
        match (&a.value, &b.value) {
            (Value::Map(p), Value::Map(q)) if p.len() == q.len() => {
                fn keys(m: &[(Node, Node)]) -> Vec<&Node> {
                    m.iter().map(|(k, _)| k).collect()
                }
                found = found.or_else(|| same_keys(&keys(p), &keys(q)));
                for ((k1, v1), (k2, v2)) in p.iter().zip(q) {
                    stack.extend([(k1, k2), (v1, v2)]);
                }
            }
            (Value::Seq(p), Value::Seq(q)) if p.len() == q.len() => stack.extend(p.iter().zip(q)),
            (Value::Scalar(..), Value::Scalar(..)) | (Value::Alias(_), Value::Alias(_)) => {}
            _ => return Err(ShapeChanged),
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is(value: &'static str) -> ScalarRule<'static> {
        Box::new(move |_| Ok(value.to_string()))
    }

    #[test]
    fn a_scalar_replaced_as_planned_verifies_and_a_neighbour_changed_is_refused() {
        let old = "a: https://old:6443\nb: keep\n";
        let plan = [Expect::Scalar {
            at: 3,
            rule: is("https://new:6443"),
        }];
        let right = "a: https://new:6443\nb: keep\n";
        let changed = verify(old, right, &plan).unwrap();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].old, "https://old:6443");
        // The neighbouring scalar changed too: not planned.
        let e = verify(old, "a: https://new:6443\nb: kept\n", &plan).unwrap_err();
        assert!(e.to_string().starts_with("2:4: expected \"keep\""), "{e}");
        // The planned scalar not changed, or changed otherwise.
        assert!(verify(old, old, &plan).is_err());
        assert!(verify(old, "a: https://other:6443\nb: keep\n", &plan).is_err());
        // Its style changed (the same value, quoted).
        assert!(verify(old, "a: 'https://new:6443'\nb: keep\n", &plan).is_err());
    }

    #[test]
    fn an_insertion_verifies_only_as_planned() {
        let old = "s:\n- x: 1\n- x: 2\n";
        let copy = |y: &Yaml| {
            let mut y = y.clone();
            if let Yaml::Hash(h) = &mut y {
                h.insert(Yaml::String("x".into()), Yaml::String("9".into()));
            }
            y
        };
        let plan = [Expect::Insert {
            after: 5,
            rule: Box::new(copy),
        }];
        verify(old, "s:\n- x: 1\n- x: 9\n- x: 2\n", &plan).unwrap();
        // The copy reads otherwise, sits elsewhere, or a neighbour changed.
        assert!(verify(old, "s:\n- x: 1\n- x: 8\n- x: 2\n", &plan).is_err());
        assert!(verify(old, "s:\n- x: 1\n- x: 2\n- x: 9\n", &plan).is_err());
        assert!(verify(old, "s:\n- x: 1\n- x: 9\n- x: 3\n", &plan).is_err());
        // Two items inserted where one was planned.
        assert!(verify(old, "s:\n- x: 1\n- x: 9\n- x: 9\n- x: 2\n", &plan).is_err());
    }

    /// A mapping entry inserted after another, an empty sequence given an
    /// item, an item replaced (removed, and an item inserted after it).
    #[test]
    fn entries_first_items_and_replaced_items_verify_only_as_planned() {
        let old = "m:\n  a: 1  # c\n  b: []\n  s: [x, 'y']\n";
        let s = |v: &str| Yaml::String(v.into());
        let plan = || {
            let at = |f: &str| old.find(f).unwrap();
            [
                Expect::Entry {
                    after: at("a:"),
                    key: s("k"),
                    value: s("v"),
                },
                Expect::Insert {
                    after: at("[]"),
                    rule: Box::new(move |_| s("i")),
                },
                Expect::Remove { at: at("'y'") },
                Expect::Insert {
                    after: at("'y'"),
                    rule: Box::new(move |_| s("z")),
                },
            ]
        };
        let right = "m:\n  a: 1  # c\n  k: v\n  b: [i]\n  s: [x, z]\n";
        verify(old, right, &plan()).unwrap();
        for wrong in [
            "m:\n  k: v\n  a: 1  # c\n  b: [i]\n  s: [x, z]\n",
            "m:\n  a: 1  # c\n  b: [i]\n  k: v\n  s: [x, z]\n",
            "m:\n  a: 1  # c\n  k: w\n  b: [i]\n  s: [x, z]\n",
            "m:\n  a: 1# c\n  k: v\n  b: [i]\n  s: [x, z]\n",
            "m:\n  a: 1  # c\n  k: v\n  b: [i, i]\n  s: [x, z]\n",
            "m:\n  a: 1  # c\n  k: v\n  b: []\n  s: [x, z]\n",
            "m:\n  a: 1  # c\n  k: v\n  b: [i]\n  s: [z]\n",
            "m:\n  a: 1  # c\n  k: v\n  b: [i]\n  s: [x, 'y', z]\n",
        ] {
            assert!(verify(old, wrong, &plan()).is_err(), "{wrong}");
        }
        // A key the mapping has already.
        let plan = [Expect::Entry {
            after: 5,
            key: s("b"),
            value: s("v"),
        }];
        let e = verify(
            old,
            "m:\n  a: 1  # c\n  b: v\n  b: []\n  s: [x, 'y']\n",
            &plan,
        );
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("under a key of its own"));
    }

    #[test]
    fn a_removal_verifies_only_as_planned() {
        let old = "[\"a\", \"b\", \"c\"]";
        let plan = [Expect::Remove { at: 6 }];
        verify(old, "[\"a\", \"c\"]", &plan).unwrap();
        assert!(verify(old, "[\"b\", \"c\"]", &plan).is_err());
        assert!(verify(old, "[\"a\"]", &plan).is_err());
        assert!(verify(old, "[\"a\", \"x\"]", &plan).is_err());
        assert!(verify(old, old, &plan).is_err());
    }

    #[test]
    fn a_document_in_a_string_is_held_to_its_own_operations() {
        let old = "p: |\n  [\"a\", \"b\"]\nq: 1\n";
        let plan = || {
            [Expect::Document {
                at: 8,
                inner: vec![Expect::Remove { at: 6 }],
            }]
        };
        verify(old, "p: |\n  [\"a\"]\nq: 1\n", &plan()).unwrap();
        assert!(verify(old, "p: |\n  [\"b\"]\nq: 1\n", &plan()).is_err());
        assert!(verify(old, "p: |\n  [\"a\"]\nq: 2\n", &plan()).is_err());
    }

    #[test]
    fn keys_made_equal_are_refused_and_keys_kept_apart_are_fine() {
        let old = "https://H:6443: 1\nhttps://h:6443: 2\n";
        let plan = [Expect::Scalar {
            at: 0,
            rule: is("https://h:6443"),
        }];
        let new = "https://h:6443: 1\nhttps://h:6443: 2\n";
        match verify(old, new, &plan) {
            Err(Mismatch::Keys(c)) => {
                assert_eq!(c.first, ("https://H:6443".into(), 1, 1));
                assert_eq!(c.second, ("https://h:6443".into(), 2, 1));
            }
            other => panic!("{other:?}"),
        }
        let plan = [Expect::Scalar {
            at: 0,
            rule: is("https://x:6443"),
        }];
        verify(old, "https://x:6443: 1\nhttps://h:6443: 2\n", &plan).unwrap();
    }

    /// JSON, read by the one reader (by the JSON tokenizer where the YAML
    /// parser refuses a surrogate-pair escape): strings and keys changed as
    /// planned verify, escapes included; any other change of the data, a
    /// change left out of the plan or planned twice, a key renamed onto its
    /// neighbour, a key moved to a value are refused; duplicate keys and deep
    /// nesting are read as they are.
    #[test]
    fn json_rewrites_verify_only_as_planned() {
        const NEW: &str = "https://new.example";
        let plan = |old: &str, raw: &str| -> Vec<Expect<'static>> {
            let at = old.match_indices(raw).map(|(at, _)| at);
            at.map(|at| Expect::Scalar { at, rule: is(NEW) }).collect()
        };
        let renamed = |old: &str| old.replace("old.example", "new.example");
        let old = "\u{feff}{\r\n  \"emoji\": \"\\ud83d\\ude00\",\r\n  \"server\": \"https:\\/\\/old.example\",\r\n  \"https://old.example\": {\"server\": \"https://old.example\"},\r\n  \"n\": [1e400, -0.0]\r\n}";
        let mut p = plan(old, "\"https:\\/\\/old.example\"");
        p.extend(plan(old, "\"https://old.example\""));
        assert_eq!(verify(old, &renamed(old), &p).unwrap().len(), 3);
        let old = r#"{"https://old.example": {"https://old.example": ["https://old.example", {"k": "https://old.example"}]}}"#;
        let p = plan(old, "\"https://old.example\"");
        assert_eq!(verify(old, &renamed(old), &p).unwrap().len(), 4);
        let e = verify(old, &renamed(old), &p[1..]).unwrap_err().to_string();
        assert!(
            e.starts_with("1:2: expected \"https://old.example\""),
            "{e}"
        );
        let old = r#"{"server": "https://old.example", "name": "a"}"#;
        let p = || plan(old, "\"https://old.example\"");
        verify(
            old,
            r#"{"server": "https:\/\/new\u002eexample", "name": "a"}"#,
            &p(),
        )
        .unwrap();
        for (new, want) in [
            (
                r#"{"server": "https://new.example", "name": "b"}"#,
                "1:43: expected \"a\"",
            ),
            (
                r#"{"server": "https://new.example", "name": "a", "x": 1}"#,
                "1:1: the structure differs",
            ),
            (
                r#"{"server": "https://new.example"}"#,
                "1:1: the structure differs",
            ),
            (
                r#"{"server": "https://new.example\ud83d", "name": "a"}"#,
                "the edited text does not parse",
            ),
            (
                r#"{"server": "https://other.example", "name": "a"}"#,
                "1:12: expected \"https://new.example\"",
            ),
            (old, "1:12: expected \"https://new.example\""),
            (
                r#"["https://new.example", "a"]"#,
                "1:1: the structure differs",
            ),
        ] {
            let e = verify(old, new, &p()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{new}: {e}");
        }
        let twice: Vec<_> = p().into_iter().chain(p()).collect();
        let e = verify(old, &renamed(old), &twice).unwrap_err().to_string();
        assert!(e.contains("a planned change was not read back"), "{e}");
        // A number is not a string: planned as one, its style is refused.
        let e = verify(
            r#"{"n": 1}"#,
            r#"{"n": "https://new.example"}"#,
            &plan(r#"{"n": 1}"#, "1"),
        );
        assert!(e.unwrap_err().to_string().contains("style"));
        let e = verify("{\"a\": [1}", "{\"a\": [1]}", &[]).unwrap_err();
        assert!(
            e.to_string().contains("before the edit does not parse"),
            "{e}"
        );
        let old = r#"{"https://old.example": 1, "https://new.example": 2}"#;
        let p = plan(old, "\"https://old.example\"");
        assert!(matches!(
            verify(old, &renamed(old), &p),
            Err(Mismatch::Keys(_))
        ));
        let old = r#"{"s": "https://old.example", "s": "https://old.example"}"#;
        let p = plan(old, "\"https://old.example\"");
        assert_eq!(verify(old, &renamed(old), &p).unwrap().len(), 2);
        let old = format!(
            "{}\"https://old.example\"{}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let p = plan(&old, "\"https://old.example\"");
        assert_eq!(verify(&old, &renamed(&old), &p).unwrap().len(), 1);
        assert!(verify(&old, &renamed(&old).replacen("]", ", 1]", 1), &p).is_err());
    }

    /// A cluster name change: the engine's operations of the name locator
    /// verify, in a literal block's JSON too; the same name changed once
    /// more where no change was planned (a neighbouring scalar) is refused.
    #[test]
    fn a_name_change_verifies_only_as_planned() {
        use crate::find::names::{self, NameRebind};
        let rebind = NameRebind {
            old: "prod".into(),
            new: "prod-blue".into(),
            old_arn: None,
            new_arn: None,
            old_ca: None,
            new_ca: None,
            argocd_moves: Vec::new(),
            argocd_known: None,
            argocd_kept: Vec::new(),
            old_server: Some("https://old.example.com".into()),
            new_server: None,
            argocd_foreign: Vec::new(),
        };
        let expect = |changes: &[names::NameChange]| -> Vec<Expect<'static>> {
            names::ops(changes)
                .1
                .into_iter()
                .map(|(at, ops)| Expect::Scalar {
                    at,
                    rule: Box::new(move |v: &str| {
                        crate::text::splice::apply(v, &ops).map_err(|e| e.to_string())
                    }),
                })
                .collect()
        };
        let text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n  labels:\n    argocd.argoproj.io/secret-type: cluster\nstringData:\n  server: https://old.example.com\n  config: |\r\n    {\"awsAuthConfig\": {\"clusterName\": \"prod\"}}\r\nother: prod\n";
        let f = names::locate(text, &rebind);
        assert_eq!(f.changes.len(), 1, "{f:?}");
        let new = crate::text::splice::apply(text, &names::ops(&f.changes).0).unwrap();
        verify(text, &new, &expect(&f.changes)).unwrap();
        let bad = new.replace("other: prod", "other: prod-blue");
        let e = verify(text, &bad, &expect(&f.changes)).unwrap_err();
        assert!(e.to_string().starts_with("11:8: expected \"prod\""), "{e}");
        let text = "clusterName: prod\nother: prod\n";
        let f = names::locate(text, &rebind);
        let bad = "clusterName: prod-blue\nother: prod-blue\n";
        assert!(verify(text, bad, &expect(&f.changes)).is_err());
        verify(
            text,
            "clusterName: prod-blue\nother: prod\n",
            &expect(&f.changes),
        )
        .unwrap();
    }

    /// Hostile shapes read by the one reader: a BOM, CRLF line ends, no
    /// final newline, flow and quoted scalars with escapes. The planned
    /// scalar changed verifies; its neighbour changed too is refused.
    #[test]
    fn hostile_shapes_verify_only_as_planned() {
        let cases = [
            (
                "\u{feff}a: {s: \"https://o\\x2eexample\", t: 'x'}\r\nb: [1, 2]",
                "\"https://o\\x2eexample\"",
                "\"https://n.example\"",
                "'x'",
                "'y'",
            ),
            (
                "a:\r\n  - 'https://o.example'\r\n  - \"z\\t\"",
                "'https://o.example'",
                "'https://n.example'",
                "\"z\\t\"",
                "\"z\\n\"",
            ),
        ];
        for (old, from, to, keep, other) in cases {
            let at = old.find(from).unwrap() + 1;
            let plan = [Expect::Scalar {
                at,
                rule: Box::new(|v: &str| Ok(v.replace("o.example", "n.example"))),
            }];
            let right = old.replace(from, to);
            verify(old, &right, &plan).unwrap();
            assert!(
                verify(old, &right.replace(keep, other), &plan).is_err(),
                "{old}"
            );
            // The style changed: refused even where the value is the same.
            let unquoted = right.replace(to, to.trim_matches(['"', '\'']));
            assert!(verify(old, &unquoted, &plan).is_err(), "{unquoted}");
        }
    }
}
