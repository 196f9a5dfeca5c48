//! The one YAML quoter: how rebind writes a string into YAML it emits (the
//! cluster Secret, `init`'s `.rebind.yaml`) so that every reader, YAML 1.1 or
//! 1.2, takes it back as exactly that string.
//!
//! [`scalar`] leaves a string plain only when nothing can misread it, and
//! double-quotes it otherwise; [`double_quoted`] is valid both as a YAML
//! double-quoted scalar and as a JSON string.

use std::fmt::Write as _;

/// Words YAML 1.1 readers take as booleans or null, compared without case.
const WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];

/// `s` as a YAML scalar: plain only when it starts with an ASCII letter,
/// holds nothing but ASCII letters, digits and `-_./:`, does not end in `:`,
/// and is not a YAML 1.1 boolean or null word (`yes`, `On`, `null`...);
/// [`double_quoted`] otherwise. A plain `https://host:6443` stays plain;
/// `0123`, `12:30`, `2024-01-01`, `.inf`, `a: b`, `#x`, `@x` and the empty
/// string are quoted.
pub fn scalar(s: &str) -> String {
    let b = s.as_bytes();
    let plain = b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"-_./:".contains(&c))
        && !s.ends_with(':')
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        double_quoted(s)
    }
}

/// `s` double-quoted, valid both as a JSON string and as a YAML double-quoted
/// scalar (escaped as [`escape_into`] says).
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    escape_into(&mut out, s);
    out.push('"');
    out
}

/// Appends `s` escaped for the inside of a double-quoted string, valid both
/// in JSON and in YAML: `"` and `\` escaped, `\n`, `\t`, `\r` as such, and
/// every other control character (C0, DEL, C1 with NEL), the no-break space,
/// the line and paragraph separators, the BOM and the non-characters
/// U+FFFE/U+FFFF as `\uXXXX` (YAML readers fold or refuse them raw).
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{a0}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// `value` as JSON indented by two spaces (serde_json's pretty form), with
/// every string escaped by [`escape_into`]: JSON that can be embedded in a
/// YAML block scalar as it is (no raw line separator or control character).
pub fn json_pretty<T: serde::Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Escaping::default());
    value
        .serialize(&mut ser)
        .expect("a typed value serializes to JSON");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's pretty formatter with [`escape_into`]'s escapes.
#[derive(Default)]
struct Escaping(serde_json::ser::PrettyFormatter<'static>);

impl Escaping {
    fn put<W: ?Sized + std::io::Write>(w: &mut W, s: &str) -> std::io::Result<()> {
        let mut out = String::with_capacity(s.len());
        escape_into(&mut out, s);
        w.write_all(out.as_bytes())
    }
}

/// Delegates layout to `self.0`; only the escapes differ.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> std::io::Result<()> {
            self.0.$name(w $(, $arg)*)
        }
    )*};
}

impl serde_json::ser::Formatter for Escaping {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        Self::put(w, fragment)
    }

    fn write_char_escape<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> std::io::Result<()> {
        use serde_json::ser::CharEscape as E;
        let c = match escape {
            E::Quote => '"',
            E::ReverseSolidus => '\\',
            E::Solidus => '/',
            E::Backspace => '\u{8}',
            E::FormFeed => '\u{c}',
            E::LineFeed => '\n',
            E::CarriageReturn => '\r',
            E::Tab => '\t',
            E::AsciiControl(b) => char::from(b),
        };
        Self::put(w, c.encode_utf8(&mut [0; 4]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yaml_rust2::{Yaml, YamlLoader};

    /// What a YAML reader takes `text` (a scalar in a mapping) to be.
    fn read_back(text: &str) -> Yaml {
        // As a value under `a`, and as the only key of the mapping under
        // `b` (so no string can collide with a key of the test's own).
        let docs = YamlLoader::load_from_str(&format!("a: {text}\nb:\n  {text}: v\n")).unwrap();
        let map = docs[0]["b"].as_hash().unwrap();
        assert_eq!(map.len(), 1, "{text}");
        let key = map.keys().next().unwrap().clone();
        assert_eq!(map.values().next().unwrap().as_str(), Some("v"));
        assert_eq!(&docs[0]["a"], &key, "{text}");
        key
    }

    /// What YAML 1.2 (§5.1) does not allow raw in a stream.
    fn not_printable(c: char) -> bool {
        c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{85}')
            || matches!(c, '\u{fffe}' | '\u{ffff}')
    }

    proptest::proptest! {
        #[test]
        fn any_string_reads_back(s in "\\PC*|[\u{0}-\u{a0}\u{2028}\u{feff}\u{fffe}\u{ffff} :#'\"a-z-]{0,8}") {
            let q = scalar(&s);
            proptest::prop_assert!(!q.contains(not_printable), "{:?}", q);
            let back = read_back(&q);
            proptest::prop_assert_eq!(back.as_str(), Some(s.as_str()));
            let json: String = serde_json::from_str(&double_quoted(&s)).unwrap();
            proptest::prop_assert_eq!(json, s);
        }
    }

    #[test]
    fn json_pretty_escapes_like_double_quoted() {
        #[derive(serde::Serialize)]
        struct T<'a> {
            a: &'a str,
            n: Option<u8>,
            list: [bool; 2],
        }
        let s = "q\"b\\ \u{8}\u{c}\u{1f}\u{7f}\u{85}\u{2028}\u{feff}/é";
        let text = json_pretty(&T {
            a: s,
            n: None,
            list: [true, false],
        });
        assert_eq!(
            text,
            format!(
                "{{\n  \"a\": {},\n  \"n\": null,\n  \"list\": [\n    true,\n    false\n  ]\n}}",
                double_quoted(s)
            )
        );
        assert!(text.contains("\\u0008\\u000c"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["a"], s);
    }

    #[test]
    fn plain_only_where_no_reader_misreads() {
        for s in [
            "cluster-a",
            "https://a.b:6443",
            "prod-blue.v2",
            "e3",
            "a/b",
            "a:b",
        ] {
            assert_eq!(scalar(s), s);
        }
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("0123"), "\"0123\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("#x"), "\"#x\"");
        for s in [
            "0b101",
            "1_000",
            "2024-01-01",
            "12:30",
            "190:20:30",
            "yes",
            "On",
            "Y",
            "~",
            "null",
            ".inf",
            "-.Inf",
            ".NaN",
            "0o17",
            "017",
            "0x1F",
            "+1",
            "-1",
            "1e3",
            "=",
            "<<",
            "a:",
            "",
            "@at",
            "a@b",
            "a+b",
            "a=b",
            "prod #blue",
            "- prod",
            "[x]",
            "{y}",
            "*star",
            "&amp",
            "!tag",
            "%pct",
            "`tick",
            "? q",
            "'q'",
            "ünï",
        ] {
            assert!(scalar(s).starts_with('"'), "{s}");
        }
    }

    #[test]
    fn escapes_what_readers_fold_or_refuse() {
        assert_eq!(scalar("a\u{2028}b"), "\"a\\u2028b\"");
        assert_eq!(scalar("a\u{7f}\"\\"), "\"a\\u007f\\\"\\\\\"");
        assert_eq!(
            double_quoted("\u{85}\u{a0}\u{1}\u{feff}\u{ffff}"),
            "\"\\u0085\\u00a0\\u0001\\ufeff\\uffff\""
        );
        assert_eq!(double_quoted("tab\there\r\n"), "\"tab\\there\\r\\n\"");
    }

    #[test]
    fn every_string_reads_back_as_itself_in_yaml_and_json() {
        let cases = [
            "yes",
            "No",
            "0b101",
            "12:30",
            "1_000",
            "~",
            "null",
            "prod: blue",
            "'q'",
            "\"dq\"",
            "back\\slash",
            "tab\there",
            "line\nbreak",
            "cr\rlf",
            "ünï",
            " lead",
            "trail ",
            "nbsp\u{a0}",
            "nel\u{85}x",
            "ls\u{2028}ps\u{2029}",
            "bom\u{feff}",
            "del\u{7f}",
            "bell\u{7}",
            "https://a.b:6443",
            "a:b",
            "e3",
            ".inf",
            "@at",
            "",
            "c1\u{80}\u{9f}",
            "nc\u{fffe}\u{ffff}",
        ];
        for s in cases {
            assert!(!scalar(s).contains(not_printable), "{s:?}");
            assert_eq!(read_back(&scalar(s)).as_str(), Some(s), "{s:?}");
            let json: String = serde_json::from_str(&double_quoted(s)).unwrap();
            assert_eq!(json, s, "{s:?}");
        }
    }
}
