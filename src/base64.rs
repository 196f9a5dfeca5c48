//! Standard base64 (RFC 4648 §4, with padding), strict both ways.
//!
//! [`encode`] writes the canonical form. [`decode`] takes only that form:
//! the standard alphabet, no white space, a length that is a multiple of 4,
//! at most two `=` and only at the end, and zero unused bits, so a decoded
//! value always encodes back to exactly the text it came from. A cluster
//! Secret's `data` values, `caData` and `--ca-data` go through here.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes canonical standard base64 (see the module); `None` for anything
/// else, the empty string included.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return None;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in &b[..b.len() - pad] {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (acc == 0).then_some(out)
}

/// Standard base64 of a text.
pub fn encode_text(s: &str) -> String {
    encode(s.as_bytes())
}

/// [`decode`], for a value that must be UTF-8 text.
pub fn decode_text(s: &str) -> Option<String> {
    String::from_utf8(decode(s)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_vectors() {
        // RFC 4648 §10.
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(i.as_bytes()), o);
            if !i.is_empty() {
                assert_eq!(decode(o).as_deref(), Some(i.as_bytes()));
            }
        }
        assert_eq!(
            encode_text("https://10.8.0.21:6443"),
            "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw=="
        );
        assert_eq!(encode(&[0xfb, 0xff]), "+/8=");
        assert_eq!(decode_text("+/8="), None, "not UTF-8");
        assert_eq!(decode_text("7ZWc6rWt").as_deref(), Some("한국"));
    }

    #[test]
    fn decoding_is_strict() {
        for bad in [
            "",
            "====",
            "A===",
            "Zg=",
            "Zg",
            "Zm9v=",
            "Zh==",
            "Zm9=",
            "Zm 9v",
            "Zm9v\n",
            "Z=g=",
            "Zm-_",
            "aHR0cHM6Ly8xMC44LjAuMjE6NjQ0Mw",
            "a b=",
            "Zm9v\r\nYmFy",
        ] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn round_trips(bytes in proptest::collection::vec(any::<u8>(), 1..64)) {
            prop_assert_eq!(decode(&encode(&bytes)), Some(bytes));
        }

        /// Only the canonical form decodes: whatever decodes encodes back
        /// to exactly the same text.
        #[test]
        fn only_canonical_text_decodes(s in "[A-Za-z0-9+/=\\- _\n]{0,12}") {
            if let Some(b) = decode(&s) {
                prop_assert_eq!(encode(&b), s);
            }
        }
    }
}
