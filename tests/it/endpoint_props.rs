//! Properties: whatever malformed URL-like text comes before a real endpoint, on
//! the same line or above it, the endpoint is found at its exact position; and
//! the extent of every endpoint (host, an absolute name's trailing dot, port,
//! path, what ends it, Unicode white space included) is what an independent
//! oracle says.

use proptest::prelude::*;
use rebind::text::endpoint::{find_all, Endpoint};

const EKS: &str = "https://0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("https://[".to_string()),
        Just("https://[fd00::1".to_string()),
        Just("https://[fd00::1 (IPv6 clusters need brackets)".to_string()),
        Just("https://[cluster-endpoint".to_string()),
        Just("https://[not an ip]".to_string()),
        Just("https://host.example.com:443:443y".to_string()),
        Just("https://host.example.com:99999".to_string()),
        Just("https://:6443".to_string()),
        Just("https://a..b".to_string()),
        Just("https://user@".to_string()),
        Just("\"".to_string()),
        Just("[".to_string()),
        Just("# ".to_string()),
        "[a-z:/\\[\\]\\. ]{0,12}".prop_map(|s| s),
    ]
}

fn sep() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(" "),
        Just("\n"),
        Just("\r\n"),
        Just("\r"),
        Just("\t"),
        Just(", ")
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn junk_never_hides_a_later_endpoint(
        parts in proptest::collection::vec((junk(), sep()), 0..8),
        suffix in prop_oneof![Just(""), Just("/"), Just(":443"), Just("\n"), Just("\"")],
    ) {
        let mut t: String = parts.iter().map(|(j, s)| format!("{j}{s}")).collect();
        t.push_str("server: ");
        let at = t.len();
        t.push_str(EKS);
        t.push_str(suffix);
        let found = find_all(&t, &t.to_ascii_lowercase(), &[]);
        let from = Endpoint::parse("--from", EKS).unwrap();
        let last = found.last().expect("the endpoint is found");
        prop_assert_eq!(last.start, at);
        prop_assert!(last.matches(&from));
        prop_assert!(found.iter().all(|f| !f.host.is_empty() && !f.host.contains('@')));
    }
}

// ---- the extent of a URL or bare host, against an independent oracle ----

use rebind::text::endpoint::find_in_decoded;

/// A DNS name of 1-4 labels (letters, digits, `-` inside).
fn host() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?", 1..5).prop_map(|l| l.join("."))
}

/// What ends an endpoint: ASCII and Unicode white space, YAML/JSON
/// punctuation, or the end of the text.
fn terminator() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(" "),
        Just("\t"),
        Just("\n"),
        Just("\r\n"),
        Just("\u{85}"),
        Just("\u{a0}"),
        Just("\u{1680}"),
        Just("\u{2003}"),
        Just("\u{2028}"),
        Just("\u{2029}"),
        Just("\u{202f}"),
        Just("\u{205f}"),
        Just("\u{3000}"),
        Just("\""),
        Just("'"),
        Just(", "),
        Just("]"),
        Just("}"),
        Just(""),
    ]
}

/// One endpoint as written, with what the oracle says of it: the text of
/// its extent, its host (the name, without an absolute name's dot), its port.
#[derive(Debug, Clone)]
struct Piece {
    written: String,
    extent: String,
    host: String,
    port: Option<u16>,
    bare: bool,
}

/// The oracle, written from the rule and nothing else: the extent is
/// `https://` + host + the trailing dot when a port or a path follows it +
/// `:port` + the path; a trailing dot with nothing after it is punctuation.
fn piece() -> impl Strategy<Value = Piece> {
    (
        any::<bool>(),
        host(),
        any::<bool>(),
        proptest::option::of(1u16..=65535),
        proptest::option::of("(/[a-z0-9_~-]{0,5}){1,3}(\\?[a-z]=[0-9])?"),
    )
        .prop_map(|(bare, host, dot, port, path)| {
            let path = if bare { None } else { path };
            let port_text = port.map(|p| format!(":{p}")).unwrap_or_default();
            let path_text = path.unwrap_or_default();
            let scheme = if bare { "" } else { "https://" };
            let dot_text = if dot { "." } else { "" };
            let written = format!("{scheme}{host}{dot_text}{port_text}{path_text}");
            let absolute = dot && (port.is_some() || !path_text.is_empty());
            let extent = if dot && !absolute {
                format!("{scheme}{host}")
            } else {
                written.clone()
            };
            Piece {
                written,
                extent,
                host,
                port,
                bare,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn the_extent_of_each_endpoint_matches_the_oracle(
        pieces in proptest::collection::vec((piece(), terminator()), 1..5),
        lead in prop_oneof![Just(""), Just("server: "), Just("see "), Just("\u{3000}")],
    ) {
        let mut text = lead.to_string();
        let mut want = Vec::new();
        let mut hosts = Vec::new();
        for (i, (p, term)) in pieces.iter().enumerate() {
            // Two pieces must be apart, and an empty terminator only ends the text.
            let term = if term.is_empty() && i + 1 < pieces.len() { " " } else { term };
            want.push((text.len(), p.clone()));
            text.push_str(&p.written);
            text.push_str(term);
            hosts.push(p.host.clone());
        }
        let found = find_in_decoded(&text, &hosts);
        let got: Vec<(usize, String, String, Option<u16>, bool)> = found
            .iter()
            .map(|f| (f.start, text[f.start..f.end].to_string(), f.host.clone(), f.port, f.bare))
            .collect();
        let expected: Vec<(usize, String, String, Option<u16>, bool)> = want
            .iter()
            .map(|(at, p)| (*at, p.extent.clone(), p.host.clone(), p.port, p.bare))
            .collect();
        prop_assert_eq!(got, expected, "{:?}", text);
    }
}
