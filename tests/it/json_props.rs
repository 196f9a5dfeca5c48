//! Property tests of `rebind::syntax::json` against serde_json: for random documents
//! written by `serde_json::to_string_pretty` (and the same with every
//! non-ASCII character escaped, surrogate pairs included, as Python's
//! `json.dump` writes them), the tokenizer reports exactly serde_json's strings,
//! in order, at their paths; and a rewrite of one string by the edit engine
//! keeps every other byte, verifies (`edit::verify`) and reads as serde_json
//! expects, while a rewrite that disagrees with its plan does not verify.
//!
//! More cases: `PROPTEST_CASES=5000 cargo test --release --test json_props`.

use proptest::prelude::*;
use rebind::edit::verify::{verify, Expect};
use rebind::syntax::json::{self, Kind, Seg};
use rebind::text::splice::{self, Op};
use serde_json::Value;

/// Strings with escapes, control characters, non-BMP characters and quotes.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        any::<String>(),
        "[a\"\\\\/\u{0}\u{1f}\u{7f}\u{e9}\u{2028}\u{fffd}\u{10000}\u{1f600}]{0,6}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// serde_json's strings in document order: (value, is a key).
fn strings_of(v: &Value, out: &mut Vec<(String, bool)>) {
    match v {
        Value::String(s) => out.push((s.clone(), false)),
        Value::Array(a) => a.iter().for_each(|e| strings_of(e, out)),
        Value::Object(o) => {
            for (k, e) in o {
                out.push((k.clone(), true));
                strings_of(e, out);
            }
        }
        _ => {}
    }
}

/// The number of nulls, booleans and numbers.
fn other_scalars(v: &Value) -> usize {
    match v {
        Value::String(_) => 0,
        Value::Array(a) => a.iter().map(other_scalars).sum(),
        Value::Object(o) => o.values().map(other_scalars).sum(),
        _ => 1,
    }
}

fn at<'v>(mut v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    for s in path {
        v = match s {
            Seg::Key(k) => v.get(k)?,
            Seg::Index(i) => v.get(*i)?,
        };
    }
    Some(v)
}

/// Every non-ASCII character as `\uXXXX` (two for a non-BMP one).
fn ascii_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
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

fn check_tokens(v: &Value, text: &str) -> Result<(), TestCaseError> {
    let doc = json::tokenize(text).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let mut want = Vec::new();
    strings_of(v, &mut want);
    let got: Vec<(String, bool)> = doc
        .strings()
        .map(|t| (t.str_value().unwrap().to_string(), t.is_key()))
        .collect();
    prop_assert_eq!(&got, &want);
    prop_assert_eq!(doc.tokens.len() - got.len(), other_scalars(v));
    for t in &doc.tokens {
        let path = doc.path(t);
        let found = at(v, &path);
        prop_assert!(found.is_some(), "no value at {:?}", path);
        let found = found.unwrap();
        let raw = &text[t.range.clone()];
        match &t.kind {
            Kind::Str { value, key: false } => {
                prop_assert_eq!(found.as_str(), Some(value.as_str()))
            }
            Kind::Str { value, key: true } => {
                prop_assert_eq!(path.last(), Some(&Seg::Key(value.clone())))
            }
            // serde_json writes every number the same way, pretty or not.
            Kind::Number => prop_assert_eq!(raw, serde_json::to_string(found).unwrap()),
            Kind::Bool(b) => prop_assert_eq!(found, &Value::Bool(*b)),
            Kind::Null => prop_assert_eq!(found, &Value::Null),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn tokenizer_strings_are_serde_jsons_strings_in_order(v in value()) {
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        check_tokens(&v, &pretty)?;
        check_tokens(&v, &serde_json::to_string(&v).unwrap())?;
        let ascii = ascii_only(&pretty);
        // The same data to serde_json (which reads floats the same lossy way in both).
        prop_assert_eq!(
            serde_json::from_str::<Value>(&ascii).unwrap(),
            serde_json::from_str::<Value>(&pretty).unwrap()
        );
        check_tokens(&v, &ascii)?;
    }

    #[test]
    fn a_rewrite_of_one_string_verifies_and_a_wrong_one_does_not(
        v in value(),
        extra in text(),
        pick in any::<prop::sample::Index>(),
        replacement in text(),
        escaped in any::<bool>(),
    ) {
        // At least one string to change.
        let v = Value::Array(vec![v, Value::String(extra)]);
        let mut old = serde_json::to_string_pretty(&v).unwrap();
        if escaped {
            old = ascii_only(&old);
        }
        let doc = json::tokenize(&old).unwrap();
        let strings: Vec<_> = doc.strings().collect();
        let t = strings[pick.index(strings.len())];
        let replacement = match t.str_value() == Some(replacement.as_str()) {
            true => format!("{replacement}!"),
            false => replacement,
        };
        let mut raw = serde_json::to_string(&replacement).unwrap();
        if escaped {
            raw = ascii_only(&raw);
        }
        let new = splice::apply(&old, &[Op::replace(t.range.clone(), raw.clone())]).unwrap();
        // Every byte outside the string is kept.
        prop_assert_eq!(&new, &format!("{}{raw}{}", &old[..t.range.start], &old[t.range.end..]));
        let plan = |value: String| [Expect::Scalar { at: t.range.start, rule: Box::new(move |_| Ok(value.clone())) }];
        let path = doc.path(t);
        // A key renamed onto its neighbour's name is refused.
        let collides = t.is_key() && {
            at(&v, &path[..path.len() - 1])
                .and_then(Value::as_object)
                .is_some_and(|o| o.contains_key(&replacement))
        };
        match verify(&old, &new, &plan(replacement.clone())) {
            Ok(done) => {
                prop_assert!(!collides);
                prop_assert_eq!(done.len(), 1);
                prop_assert_eq!(&done[0].new, &replacement);
                // serde_json's data: the old data with the one change.
                let mut want: Value = serde_json::from_str(&old).unwrap();
                renamed(&mut want, &path, t.is_key(), &replacement);
                prop_assert_eq!(serde_json::from_str::<Value>(&new).unwrap(), want);
            }
            Err(e) => prop_assert!(collides, "{}", e),
        }
        // The plan says one thing, the text another.
        let wrong = plan(format!("{replacement}x"));
        prop_assert!(verify(&old, &new, &wrong).is_err());
        // The data changed outside the string too (one more top-level item).
        let more = format!("{}, 0]", new.trim_end().strip_suffix(']').unwrap());
        prop_assert!(verify(&old, &more, &plan(replacement.clone())).is_err());
        // Not planned at all.
        prop_assert!(verify(&old, &new, &[]).is_err());
    }
}

/// `v` with the string at `path` (a key, or a value) changed to `to`.
fn renamed(v: &mut Value, path: &[Seg], key: bool, to: &str) {
    let (last, parent) = path.split_last().unwrap();
    let mut slot = v;
    for s in if key { parent } else { path } {
        slot = match s {
            Seg::Key(k) => slot.get_mut(k).unwrap(),
            Seg::Index(i) => slot.get_mut(*i).unwrap(),
        };
    }
    match (key, last) {
        (true, Seg::Key(k)) => {
            let o = slot.as_object_mut().unwrap();
            let moved = o.remove(k).unwrap();
            o.insert(to.to_string(), moved);
        }
        _ => *slot = Value::String(to.to_string()),
    }
}
