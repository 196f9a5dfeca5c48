//! Property: whatever malformed URL-like text comes before a real endpoint, on
//! the same line or above it, the endpoint is found at its exact position.

use proptest::prelude::*;
use rebind::endpoint::{find_all, Endpoint};

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
