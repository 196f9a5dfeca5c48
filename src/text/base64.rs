//! Standard base64 (RFC 4648 §4, with padding), strict both ways.
//!
//! [`encode`] writes the canonical form. [`decode`] takes only that form:
//! the standard alphabet, no white space, a length that is a multiple of 4,
//! at most two `=` and only at the end, and zero unused bits, so a decoded
//! value always encodes back to exactly the text it came from. A cluster
//! Secret's `data` values, `caData` and `--ca-data` go through here.
//!
//! A value wrapped over lines (as `base64` prints it, 76 columns) is read by
//! [`decode_wrapped`], which is as strict about the layout: every line but
//! the last of one width, the last no longer, one separator; the [`Wrap`] it
//! returns writes a new text in exactly that layout. [`decode_lenient`]
//! reads what a lax decoder would (white space anywhere, no padding, the
//! URL-safe alphabet), only so that such a value is reported, never rewritten.

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

/// How a base64 text is laid out in a value: lines of `width` characters
/// (the last no longer) joined by `sep` (`\n` in a literal block scalar, a
/// space where YAML folds the lines), or one line (`width` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrap {
    pub width: Option<usize>,
    pub sep: &'static str,
}

impl Wrap {
    /// The lines `encoded` is written in, in this layout.
    pub fn lines<'a>(&self, encoded: &'a str) -> Vec<&'a str> {
        match self.width {
            // Base64 text is ASCII: any byte offset is a character boundary.
            Some(w) => (0..encoded.len())
                .step_by(w)
                .map(|i| &encoded[i..(i + w).min(encoded.len())])
                .collect(),
            None => vec![encoded],
        }
    }

    /// `encoded` written in this layout, lines joined by `sep`.
    pub fn apply(&self, encoded: &str, sep: &str) -> String {
        self.lines(encoded).join(sep)
    }
}

/// Decodes a value holding canonical base64 on one line or wrapped in a
/// regular layout (see the module), ignoring trailing white space (a block
/// scalar's final line break); `None` for anything else.
pub fn decode_wrapped(value: &str) -> Option<(Vec<u8>, Wrap)> {
    let body = value.trim_end_matches([' ', '\t', '\n', '\r']);
    let sep = if body.contains('\n') { "\n" } else { " " };
    let lines: Vec<&str> = body.split(sep).collect();
    let width = lines[0].len();
    let (last, full) = lines.split_last()?;
    let regular = full.iter().all(|l| l.len() == width) && (1..=width).contains(&last.len());
    if !regular {
        return None;
    }
    let wrap = Wrap {
        width: (lines.len() > 1).then_some(width),
        sep,
    };
    let bytes = decode(&lines.concat())?;
    Some((bytes, wrap))
}

/// What a lax decoder reads (white space anywhere, missing padding, the
/// URL-safe `-` and `_`, unused bits set); `None` when a character is outside
/// both alphabets or the length cannot be base64. Only for reporting a value
/// that [`decode_wrapped`] refuses.
pub fn decode_lenient(value: &str) -> Option<Vec<u8>> {
    // Most text fails at its first character outside both alphabets.
    let mut s: Vec<u8> = Vec::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'-' => s.push(b'+'),
            b'_' => s.push(b'/'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' => s.push(b),
            b if b.is_ascii_whitespace() => {}
            _ => return None,
        }
    }
    while s.last() == Some(&b'=') {
        s.pop();
    }
    if s.is_empty() || s.len() % 4 == 1 {
        return None;
    }
    let keep = s.len() / 4 * 4;
    let tail = s.len() - keep;
    let mut text = String::from_utf8(s).ok()?;
    if tail > 0 {
        // Zero the unused bits of the last character, then pad.
        let last = text.pop()?;
        let v = ALPHABET.iter().position(|&a| a as char == last)?;
        let mask = if tail == 2 { 0b110000 } else { 0b111100 };
        text.push(ALPHABET[v & mask] as char);
        text.push_str(if tail == 2 { "==" } else { "=" });
    }
    decode(&text)
}

/// Whether `text` holds a run of base64 (at least [`MIN_RUN`] characters,
/// lines of it included) that decodes, laxly, to bytes `holds` accepts: the
/// first look at a file whose endpoints may all be encoded (a Secret's
/// `data`).
pub fn any_run(text: &str, holds: impl Fn(&[u8]) -> bool) -> bool {
    let mut any = false;
    each_run(text, |_, decoded| {
        any = holds(decoded);
        any
    });
    any
}

/// Calls `visit` with each run of base64 in `text` (at least [`MIN_RUN`]
/// characters; lines of it, and a double-quoted scalar's escaped line
/// breaks, included) that decodes laxly: its byte range and its decoded
/// bytes (in the run's best alignment), until `visit` returns `true`.
pub fn each_run(text: &str, mut visit: impl FnMut(std::ops::Range<usize>, &[u8]) -> bool) {
    let b = text.as_bytes();
    let in_alphabet = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=');
    let mut i = 0;
    while i < b.len() {
        if !in_alphabet(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        let mut count = 0;
        // A run goes on across white space that holds a line break.
        while i < b.len() {
            if b[i] == b'=' {
                // Padding ends the run.
                i += b[i..].iter().take_while(|&&c| c == b'=').count();
                end = i;
                break;
            }
            if in_alphabet(b[i]) {
                count += 1;
                i += 1;
                end = i;
                continue;
            }
            // (`\` then a line break: an escaped line break, which a
            // double-quoted scalar reads as nothing.)
            let escaped = usize::from(b[i] == b'\\' && matches!(b.get(i + 1), Some(b'\n' | b'\r')));
            let gap = escaped
                + b[i + escaped..]
                    .iter()
                    .take_while(|c| c.is_ascii_whitespace())
                    .count();
            let broken = b[i..i + gap].iter().any(|&c| c == b'\n' || c == b'\r');
            if gap == 0 || !broken || !b.get(i + gap).is_some_and(|&c| in_alphabet(c)) {
                break;
            }
            i += gap;
        }
        if count >= MIN_RUN {
            let run = &text[start..end];
            // A word before the run (`key` in `key: ...` is cut by the colon,
            // but a line above is not): try the run's last three alignments.
            for skip in 0..4 {
                let Some(d) = run
                    .get(skip..)
                    .and_then(|r| decode_lenient(&trim_to_quads(r)))
                else {
                    continue;
                };
                if visit(start + skip..end, &d) {
                    return;
                }
            }
        }
        i = i.max(start + 1);
    }
}

/// The shortest run of base64 characters [`any_run`] decodes: "https://"
/// takes 11.
pub const MIN_RUN: usize = 11;

/// `run` without white space, cut to whole groups of four (padding kept).
fn trim_to_quads(run: &str) -> String {
    let mut s: String = run
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && *c != '\\')
        .collect();
    if s.ends_with('=') {
        return s;
    }
    s.truncate(s.len() / 4 * 4);
    s
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

    #[test]
    fn wrapped_values_decode_in_a_regular_layout_only() {
        let text = "https://old.example.com:6443/k8s/clusters/c-m-0123456789abcdef";
        let one = encode_text(text);
        let lines76: Vec<&str> = Wrap {
            width: Some(76),
            sep: "\n",
        }
        .lines(&one);
        assert_eq!(lines76.len(), 2);
        for (value, width, sep) in [
            (one.clone(), None, " "),
            (format!("{one}\n"), None, " "),
            (lines76.join("\n") + "\n", Some(76), "\n"),
            (lines76.join(" "), Some(76), " "),
            (format!("{}\n{}", &one[..10], &one[10..20]), Some(10), "\n"),
        ] {
            let (bytes, wrap) = decode_wrapped(&value).expect(&value);
            if value.len() > 30 {
                assert_eq!(bytes, text.as_bytes(), "{value:?}");
            }
            assert_eq!(wrap, Wrap { width, sep }, "{value:?}");
        }
        for bad in [
            // irregular: lines of two widths, a last line longer than the rest
            format!("{}\n{}\n{}", &one[..30], &one[30..70], &one[70..]),
            format!("{}\n{}", &one[..40], &one[40..]),
            // two separators, a blank line, white space first, no padding
            format!("{}\n{} {}", &one[..30], &one[30..60], &one[60..]),
            format!("{}\n\n{}", &one[..44], &one[44..]),
            format!(" {one}"),
            one.trim_end_matches('=').to_string(),
            String::new(),
        ] {
            assert_eq!(decode_wrapped(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_wrap_writes_its_own_layout() {
        let w = Wrap {
            width: Some(4),
            sep: "\n",
        };
        assert_eq!(w.apply("abcdefghij", "\n  "), "abcd\n  efgh\n  ij");
        let one = Wrap {
            width: None,
            sep: " ",
        };
        assert_eq!(one.apply("abcdefghij", "\n"), "abcdefghij");
    }

    #[test]
    fn lax_decoding_reads_what_a_lax_decoder_would() {
        let e = encode_text("https://old.example.com:6443");
        assert_eq!(decode(&e).map(|_| ()), Some(()));
        let unpadded = e.trim_end_matches('=');
        assert_eq!(decode(unpadded), None);
        assert_eq!(
            decode_lenient(unpadded).as_deref(),
            Some(&b"https://old.example.com:6443"[..])
        );
        let wrapped = format!("{}\n   {}", &e[..7], &e[7..]);
        assert_eq!(decode_lenient(&wrapped), decode(&e));
        assert_eq!(decode_lenient("+/8"), decode("+/8="));
        assert_eq!(decode_lenient("-_8"), decode("+/8="));
        // Unused bits set: read as if clear.
        assert_eq!(decode_lenient("Zh=="), decode("Zg=="));
        for bad in ["", "=", "a", "a!bc", "ab:c"] {
            assert_eq!(decode_lenient(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn runs_of_base64_are_found_in_text() {
        let holds = |b: &[u8]| memchr::memmem::find(b, b"https://").is_some();
        let e = encode_text("{\"server\":\"https://x.example\"}");
        for text in [
            format!("data:\n  config: {e}\n"),
            format!(
                "data:\n  config: |\n    {}\n    {}\n  other: x\n",
                &e[..20],
                &e[20..]
            ),
            format!("data:\n  config: \"{e}\"\n  name: abc\n"),
        ] {
            assert!(any_run(&text, holds), "{text}");
        }
        // A word run into the base64 from the line above is skipped over.
        assert!(any_run(&format!("abcdefg\n{e}"), holds));
        assert!(!any_run("kind: Secret\ndata:\n  name: cHJvZA==\n", holds));
        assert!(!any_run("server: https://x.example\n", holds));
    }

    proptest! {
        /// Whatever decodes wrapped is written back exactly by its layout.
        #[test]
        fn wrapped_decoding_round_trips(
            bytes in proptest::collection::vec(any::<u8>(), 1..200),
            width in 1usize..90,
            literal in any::<bool>(),
        ) {
            let sep = if literal { "\n" } else { " " };
            let w = Wrap { width: Some(width), sep };
            let value = w.apply(&encode(&bytes), sep);
            let (back, wrap) = decode_wrapped(&value).unwrap();
            prop_assert_eq!(&back, &bytes);
            prop_assert_eq!(wrap.apply(&encode(&back), wrap.sep), value);
        }

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
