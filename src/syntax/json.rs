//! A strict JSON (RFC 8259) tokenizer.
//!
//! It exists so that valid JSON never blocks a rebind: the YAML parser rejects
//! some valid JSON (surrogate-pair escapes such as `"\ud83d\ude00"`, which
//! Python's `json.dump` writes by default). [`tokenize`] reports every scalar
//! with its raw byte range, and every string with its decoded value, whether
//! it is an object key, and its path; the one reader reads a document the
//! YAML parser refuses from these tokens.
//!
//! What is accepted is exactly RFC 8259's grammar, with these choices:
//! - one leading byte order mark (U+FEFF) is skipped (RFC 8259 §8.1 allows a
//!   parser to ignore it; `serde_json` does not, so it is stripped before
//!   `serde_json` sees the text);
//! - a `\u` escape of a lone surrogate (a high one not followed by a low one,
//!   or a low one on its own) is refused: the grammar allows it, but it decodes
//!   to no Unicode string (RFC 8259 §8.2 says the behaviour is unpredictable),
//!   and `serde_json` refuses it too;
//! - nesting deeper than [`MAX_DEPTH`] arrays and objects is refused (the
//!   tokenizer does not recurse, so no input can overflow the stack);
//! - duplicate object keys are accepted (RFC 8259 says names SHOULD be unique)
//!   and reported in [`Document::duplicate_key`].
//!
//! Line and column in errors are 1-based; columns count characters; `\n`,
//! `\r\n` and a lone `\r` each end a line.

use crate::text::endpoint::{escape_body, splice_with, Decoded};
use std::fmt;
use std::ops::Range;
use yaml_rust2::parser::Event;
use yaml_rust2::scanner::TScalarStyle;

/// The deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 1000;

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    /// A member of an object, by its decoded name.
    Key(String),
    /// An element of an array, 0-based.
    Index(usize),
}

impl fmt::Display for Seg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seg::Key(k) => write!(f, "{}", serde_json::Value::from(k.as_str())),
            Seg::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path rendered for messages: `.` for the top level, else `."a"[0]."b"`.
pub fn path_string(path: &[Seg]) -> String {
    if path.is_empty() {
        return ".".into();
    }
    path.iter()
        .map(|s| match s {
            Seg::Key(_) => format!(".{s}"),
            Seg::Index(_) => s.to_string(),
        })
        .collect()
}

/// What a scalar token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A string; `key` when it names an object member.
    Str {
        value: String,
        key: bool,
    },
    Number,
    Bool(bool),
    Null,
}

/// One scalar of a document, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The raw bytes in the text (a string's quotes included).
    pub range: Range<usize>,
    pub kind: Kind,
    /// The last step of its path (`None` for a top-level scalar). A key has
    /// the same path as the member value it names.
    pub seg: Option<Seg>,
    /// The container holding it (an index into the document's containers).
    container: Option<usize>,
}

impl Token {
    /// The decoded value of a string (key or not).
    pub fn str_value(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether this is an object key.
    pub fn is_key(&self) -> bool {
        matches!(self.kind, Kind::Str { key: true, .. })
    }
}

/// An array or object: the step that leads to it from its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Container {
    parent: Option<usize>,
    seg: Option<Seg>,
    object: bool,
    /// Byte offsets of its opening bracket and just past its closing one.
    start: usize,
    end: usize,
}

/// The scalars of a JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Every scalar, in document order (keys before their values).
    pub tokens: Vec<Token>,
    /// The raw range of the first key that repeats an earlier key of its
    /// object, if any.
    pub duplicate_key: Option<Range<usize>>,
    /// Paths are stored as links to containers, so that memory stays linear
    /// in the input however deep it nests.
    containers: Vec<Container>,
}

impl Document {
    /// The full path of a token of this document.
    pub fn path(&self, token: &Token) -> Vec<Seg> {
        let mut out: Vec<Seg> = token.seg.iter().cloned().collect();
        let mut c = token.container;
        while let Some(i) = c {
            let container = &self.containers[i];
            out.extend(container.seg.iter().cloned());
            c = container.parent;
        }
        out.reverse();
        out
    }

    /// The strings (keys and values) in document order.
    pub fn strings(&self) -> impl Iterator<Item = &Token> {
        self.tokens
            .iter()
            .filter(|t| matches!(t.kind, Kind::Str { .. }))
    }

    /// The document as the YAML parser's event stream, each event with its
    /// byte offset (a string's opening quote, a container's bracket): what
    /// the locator reads, so that JSON the YAML parser refuses is located by
    /// the same rules as the JSON it reads.
    pub fn events<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (Event, usize)> + 'a {
        enum Next {
            Open(usize),
            Token(usize),
        }
        let mut open: Vec<usize> = Vec::new();
        let (mut c, mut t) = (0, 0);
        let mut pending: std::collections::VecDeque<(Event, usize)> = Default::default();
        let mut started = false;
        let mut done = false;
        std::iter::from_fn(move || loop {
            if let Some(e) = pending.pop_front() {
                return Some(e);
            }
            if done {
                return None;
            }
            if !started {
                started = true;
                pending.push_back((Event::StreamStart, 0));
                pending.push_back((Event::DocumentStart, 0));
                continue;
            }
            let next = match (self.containers.get(c), self.tokens.get(t)) {
                (Some(k), Some(tok)) if k.start < tok.range.start => Some(Next::Open(c)),
                (Some(_), None) => Some(Next::Open(c)),
                (_, Some(_)) => Some(Next::Token(t)),
                (None, None) => None,
            };
            let at = match &next {
                Some(Next::Open(i)) => self.containers[*i].start,
                Some(Next::Token(i)) => self.tokens[*i].range.start,
                None => usize::MAX,
            };
            // Close what ended before the next item.
            while let Some(&top) = open.last() {
                let k = &self.containers[top];
                if k.end > at {
                    break;
                }
                open.pop();
                let ev = if k.object {
                    Event::MappingEnd
                } else {
                    Event::SequenceEnd
                };
                pending.push_back((ev, k.end.saturating_sub(1)));
            }
            match next {
                Some(Next::Open(i)) => {
                    let k = &self.containers[i];
                    let ev = if k.object {
                        Event::MappingStart(0, None)
                    } else {
                        Event::SequenceStart(0, None)
                    };
                    pending.push_back((ev, k.start));
                    open.push(i);
                    c += 1;
                }
                Some(Next::Token(i)) => {
                    let tok = &self.tokens[i];
                    let (value, style) = match &tok.kind {
                        Kind::Str { value, .. } => (value.clone(), TScalarStyle::DoubleQuoted),
                        _ => (text[tok.range.clone()].to_string(), TScalarStyle::Plain),
                    };
                    pending.push_back((Event::Scalar(value, style, 0, None), tok.range.start));
                    t += 1;
                }
                None => {
                    let end = text.len();
                    pending.push_back((Event::DocumentEnd, end));
                    pending.push_back((Event::StreamEnd, end));
                    done = true;
                }
            }
        })
    }
}

/// Invalid JSON: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Byte offset in the text the position refers to.
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn at(text: &str, offset: usize, message: impl Into<String>) -> Error {
        let (line, column) = position(text, offset);
        Error {
            offset,
            line,
            column,
            message: message.into(),
        }
    }
}

/// 1-based line and character column of a byte offset (`\n`, `\r\n` and a
/// lone `\r` end a line).
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let b = text.as_bytes();
    let mut line = 1;
    let mut start = 0;
    for (i, &c) in b[..offset].iter().enumerate() {
        if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            line += 1;
            start = i + 1;
        }
    }
    (line, text[start..offset].chars().count() + 1)
}

/// An open array or object while tokenizing.
struct Frame {
    container: usize,
    object: bool,
    /// Next index (arrays) or the member being read (objects).
    next: usize,
    keys: std::collections::HashSet<String>,
}

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn err(&self, offset: usize, message: impl Into<String>) -> Error {
        Error::at(self.text, offset, message)
    }

    fn found(&self) -> String {
        match self.text[self.pos..].chars().next() {
            None => "the end of the text".into(),
            Some(c) if c.is_control() || c.is_whitespace() => format!("{:?}", c),
            Some(c) => format!("`{c}`"),
        }
    }

    /// A string starting at `self.pos` (a `"`): its decoded value.
    fn string(&mut self) -> Result<String, Error> {
        self.string_in(true, None)
    }

    /// JSON's one string decoder. `quoted`: a string starting at `self.pos`
    /// with its `"`, ending at the closing one; else a string's body, from
    /// `self.pos` to the end of the text (a `"` in it is an error). With
    /// `spans`, records each character's (raw, decoded) byte ranges, an
    /// escape (a surrogate pair too) being one character.
    fn string_in(&mut self, quoted: bool, mut spans: Option<&mut Spans>) -> Result<String, Error> {
        let start = self.pos;
        self.pos += usize::from(quoted);
        let mut out = String::new();
        loop {
            let run = self.pos;
            while let Some(&c) = self.b.get(self.pos) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            if let Some(spans) = spans.as_deref_mut() {
                for (i, ch) in self.text[run..self.pos].char_indices() {
                    let d = out.len() + i;
                    spans.push((run + i..run + i + ch.len_utf8(), d..d + ch.len_utf8()));
                }
            }
            out.push_str(&self.text[run..self.pos]);
            match self.peek() {
                None if !quoted => return Ok(out),
                None => return Err(self.err(start, "unterminated string")),
                Some(b'"') if quoted => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'"') => return Err(self.err(self.pos, "an unescaped `\"` inside a string")),
                Some(b'\\') => {
                    let esc = self.pos;
                    let d = out.len();
                    let c = self.escape(esc)?;
                    out.push(c);
                    if let Some(spans) = spans.as_deref_mut() {
                        spans.push((esc..self.pos, d..out.len()));
                    }
                }
                Some(c) => {
                    return Err(self.err(
                        self.pos,
                        format!("control character U+{c:04X} in a string must be escaped"),
                    ))
                }
            }
        }
    }

    /// The escape at `esc` (a `\`), consumed: the character it writes.
    fn escape(&mut self, esc: usize) -> Result<char, Error> {
        let c = match self.b.get(esc + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos = esc + 2;
                let hi = self.hex4(esc)?;
                return self.unicode(esc, hi);
            }
            _ => {
                self.pos = esc + 1;
                let found = self.found();
                return Err(self.err(esc, format!("invalid escape: `\\` followed by {found}")));
            }
        };
        self.pos = esc + 2;
        Ok(c)
    }

    /// Four hex digits at `self.pos`, consumed.
    fn hex4(&mut self, esc: usize) -> Result<u32, Error> {
        let digits = self
            .b
            .get(self.pos..self.pos + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| self.err(esc, "`\\u` must be followed by four hex digits"))?;
        let v = u32::from_str_radix(std::str::from_utf8(digits).unwrap_or("0"), 16)
            .map_err(|_| self.err(esc, "`\\u` must be followed by four hex digits"))?;
        self.pos += 4;
        Ok(v)
    }

    /// The character of a `\u` escape whose first code unit is `hi`; reads
    /// the second half of a surrogate pair.
    fn unicode(&mut self, esc: usize, hi: u32) -> Result<char, Error> {
        match hi {
            0xD800..=0xDBFF => {
                if self.b.get(self.pos..self.pos + 2) != Some(b"\\u") {
                    return Err(self.err(
                        esc,
                        format!("lone surrogate `\\u{hi:04x}`: a high surrogate must be followed by a `\\u` escape of a low one"),
                    ));
                }
                let second = self.pos;
                self.pos += 2;
                let lo = self.hex4(second)?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return Err(self.err(
                        esc,
                        format!("lone surrogate `\\u{hi:04x}`: followed by `\\u{lo:04x}`, not a low surrogate"),
                    ));
                }
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                char::from_u32(c).ok_or_else(|| self.err(esc, "invalid surrogate pair"))
            }
            0xDC00..=0xDFFF => Err(self.err(
                esc,
                format!("lone surrogate `\\u{hi:04x}`: a low surrogate without a high one"),
            )),
            _ => char::from_u32(hi).ok_or_else(|| self.err(esc, "invalid `\\u` escape")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A number starting at `self.pos` (`-` or a digit).
    fn number(&mut self) -> Result<(), Error> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(self.err(start, "a number must not have a leading zero"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err(start, "`-` must be followed by a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err(start, "a decimal point must be followed by a digit"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err(start, "an exponent must have a digit"));
            }
        }
        Ok(())
    }
}

/// `(raw, decoded)` byte ranges of each character of a decoded string.
type Spans = Vec<(Range<usize>, Range<usize>)>;

/// The body of a JSON string (the bytes between the quotes), decoded by the
/// tokenizer's own decoder, with the raw and decoded byte range of each
/// character (an escape, a surrogate pair included, is one). `None` for what
/// JSON does not allow: an invalid escape, a lone surrogate, an unescaped `"`
/// or control character.
pub fn escape_map(raw_inner: &str) -> Option<Decoded> {
    let mut lx = Lexer {
        text: raw_inner,
        b: raw_inner.as_bytes(),
        pos: 0,
    };
    let mut spans = Spans::new();
    let text = lx.string_in(false, Some(&mut spans)).ok()?;
    Some(Decoded { text, spans })
}

/// Reads a whole JSON text (RFC 8259, see the module notes) into its scalars.
pub fn tokenize(text: &str) -> Result<Document, Error> {
    let mut t = Tokenizer {
        lx: Lexer {
            text,
            b: text.as_bytes(),
            pos: 0,
        },
        doc: Document {
            tokens: Vec::new(),
            duplicate_key: None,
            containers: Vec::new(),
        },
        stack: Vec::new(),
        seg: None,
    };
    if text.starts_with('\u{feff}') {
        t.lx.pos = '\u{feff}'.len_utf8();
    }
    loop {
        if t.value()? == Read::Opened {
            continue; // its first member or element comes next
        }
        if t.after_value()? {
            return Ok(t.doc);
        }
    }
}

/// What [`Tokenizer::value`] read.
#[derive(PartialEq, Eq)]
enum Read {
    /// A whole value (a scalar, or an empty array or object).
    Whole,
    /// The start of a non-empty array or object.
    Opened,
}

/// The tokenizer's state between values.
struct Tokenizer<'a> {
    lx: Lexer<'a>,
    doc: Document,
    stack: Vec<Frame>,
    /// The step from the innermost container to the value about to be read.
    seg: Option<Seg>,
}

impl Tokenizer<'_> {
    /// Reads one value, or opens the array or object it starts.
    fn value(&mut self) -> Result<Read, Error> {
        let lx = &mut self.lx;
        lx.ws();
        let start = lx.pos;
        let text = lx.text;
        let kind = match lx.peek() {
            Some(open @ (b'{' | b'[')) => return self.open(open == b'{'),
            Some(b'"') => Kind::Str {
                value: lx.string()?,
                key: false,
            },
            Some(b'-' | b'0'..=b'9') => {
                lx.number()?;
                Kind::Number
            }
            Some(b't' | b'f' | b'n') => {
                let (word, kind) = match lx.peek() {
                    Some(b't') => ("true", Kind::Bool(true)),
                    Some(b'f') => ("false", Kind::Bool(false)),
                    _ => ("null", Kind::Null),
                };
                if !text[start..].starts_with(word) {
                    return Err(lx.err(start, format!("expected `{word}`")));
                }
                lx.pos += word.len();
                kind
            }
            Some(b']') if matches!(self.seg, Some(Seg::Index(1..))) => {
                return Err(lx.err(start, "trailing comma before the end of an array"))
            }
            _ if self.stack.is_empty() && self.doc.tokens.is_empty() && lx.pos >= text.len() => {
                return Err(lx.err(start, "no JSON value in the text"))
            }
            _ => return Err(lx.err(start, format!("expected a value, found {}", lx.found()))),
        };
        self.doc.tokens.push(Token {
            range: start..lx.pos,
            kind,
            seg: self.seg.take(),
            container: self.stack.last().map(|f| f.container),
        });
        Ok(Read::Whole)
    }

    /// An array or object starts at the current position.
    fn open(&mut self, object: bool) -> Result<Read, Error> {
        let lx = &mut self.lx;
        let start = lx.pos;
        if self.stack.len() == MAX_DEPTH {
            return Err(lx.err(
                start,
                format!("arrays and objects nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        lx.pos += 1;
        self.doc.containers.push(Container {
            parent: self.stack.last().map(|f| f.container),
            seg: self.seg.take(),
            object,
            start,
            end: lx.text.len(),
        });
        self.stack.push(Frame {
            container: self.doc.containers.len() - 1,
            object,
            next: 0,
            keys: Default::default(),
        });
        lx.ws();
        let close = if object { b'}' } else { b']' };
        if lx.peek() == Some(close) {
            lx.pos += 1;
            self.close();
            return Ok(Read::Whole);
        }
        self.seg = Some(if object {
            member_key(&mut self.lx, &mut self.doc, &mut self.stack)?
        } else {
            Seg::Index(0)
        });
        Ok(Read::Opened)
    }

    /// The innermost container has just been closed (its bracket consumed).
    fn close(&mut self) {
        if let Some(done) = self.stack.pop() {
            self.doc.containers[done.container].end = self.lx.pos;
        }
    }

    /// After a value: a separator (then `false`: another value comes), or
    /// the end of containers; `true` at the end of the text.
    fn after_value(&mut self) -> Result<bool, Error> {
        loop {
            let lx = &mut self.lx;
            lx.ws();
            let Some(top) = self.stack.last_mut() else {
                if lx.pos < lx.text.len() {
                    return Err(lx.err(
                        lx.pos,
                        format!("unexpected {} after the JSON value", lx.found()),
                    ));
                }
                return Ok(true);
            };
            let close = if top.object { b'}' } else { b']' };
            match lx.peek() {
                Some(b',') => {
                    lx.pos += 1;
                    top.next += 1;
                    self.seg = Some(if top.object {
                        member_key(&mut self.lx, &mut self.doc, &mut self.stack)?
                    } else {
                        Seg::Index(top.next)
                    });
                    return Ok(false);
                }
                Some(c) if c == close => {
                    lx.pos += 1;
                    self.close();
                }
                _ => {
                    let what = if top.object {
                        "`,` or `}` after an object member"
                    } else {
                        "`,` or `]` after an array element"
                    };
                    return Err(lx.err(lx.pos, format!("expected {what}, found {}", lx.found())));
                }
            }
        }
    }
}

/// Reads `"name" :` of an object member (the innermost frame), records the key
/// token, and returns the step to the member's value.
fn member_key(lx: &mut Lexer, doc: &mut Document, stack: &mut [Frame]) -> Result<Seg, Error> {
    lx.ws();
    let start = lx.pos;
    match lx.peek() {
        Some(b'"') => {}
        Some(b'}') => {
            return Err(lx.err(start, "trailing comma before the end of an object"));
        }
        _ => {
            return Err(lx.err(
                start,
                format!(
                    "expected a member name in double quotes, found {}",
                    lx.found()
                ),
            ))
        }
    }
    let name = lx.string()?;
    let frame = stack
        .last_mut()
        .expect("member_key is called inside an object");
    if !frame.keys.insert(name.clone()) && doc.duplicate_key.is_none() {
        doc.duplicate_key = Some(start..lx.pos);
    }
    doc.tokens.push(Token {
        range: start..lx.pos,
        kind: Kind::Str {
            value: name.clone(),
            key: true,
        },
        seg: Some(Seg::Key(name.clone())),
        container: Some(frame.container),
    });
    lx.ws();
    if lx.peek() != Some(b':') {
        return Err(lx.err(
            lx.pos,
            format!("expected `:` after a member name, found {}", lx.found()),
        ));
    }
    lx.pos += 1;
    Ok(Seg::Key(name))
}

/// [`splice_decoded`] for the body of a JSON string ([`escape_map`]).
pub fn splice_decoded_json(
    raw_inner: &str,
    decoded_range: Range<usize>,
    replacement: &str,
) -> Option<String> {
    splice_with(
        raw_inner,
        decoded_range,
        replacement,
        escape_map,
        escape_body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::endpoint::find_in_decoded;

    const EKS: &str = "0123456789ABCDEF0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com";

    fn json_reads(raw_inner: &str) -> Option<String> {
        serde_json::from_str::<String>(&format!("\"{raw_inner}\"")).ok()
    }

    #[test]
    fn json_strings_decode_with_surrogate_pairs_and_splice() {
        for raw in [
            r"\ud83d\ude00 https:\/\/a\u002eb",
            r#"\u0068ttps://x \\ \" \b\f\n\r\t"#,
            "plain é",
        ] {
            assert_eq!(escape_map(raw).map(|d| d.text), json_reads(raw), "{raw}");
        }
        for bad in [
            r"\ud83d", r"\ude00", r"\ud83dx", r"\x2e", "a\"b", "a\nb", r"\u12",
        ] {
            assert!(escape_map(bad).is_none(), "{bad:?}");
            assert_eq!(json_reads(bad), None, "{bad:?}");
        }
        let raw = format!(
            "\\ud83d\\ude00 https:\\/\\/{}\\/x",
            EKS.replacen('.', "\\u002e", 1)
        );
        let d = escape_map(&raw).unwrap();
        assert_eq!(d.text, format!("😀 https://{EKS}/x"));
        let f = &find_in_decoded(&d.text, &[])[0];
        let new =
            splice_decoded_json(&raw, f.start..f.replace_end, "https://new.example.com").unwrap();
        // Its slashes were escaped: the new ones are too.
        assert_eq!(new, "\\ud83d\\ude00 https:\\/\\/new.example.com\\/x");
        assert_eq!(json_reads(&new).unwrap(), "😀 https://new.example.com/x");
        // Control characters in a replacement use JSON's \u form.
        assert_eq!(
            splice_decoded_json("ab", 0..1, "\x01\"").unwrap(),
            "\\u0001\\\"b"
        );
    }

    fn strings(text: &str) -> Vec<(String, bool, String, &str)> {
        let doc = tokenize(text).unwrap();
        doc.strings()
            .map(|t| {
                (
                    t.str_value().unwrap().to_string(),
                    t.is_key(),
                    path_string(&doc.path(t)),
                    &text[t.range.clone()],
                )
            })
            .collect()
    }

    fn err(text: &str) -> String {
        tokenize(text).unwrap_err().to_string()
    }

    #[test]
    fn nested_objects_and_arrays_give_paths_keys_and_raw_ranges() {
        let text = r#"{"a": [1, {"b": "x"}, "y", []], "c": {"d": null, "e": true, "f": -2.5e3}}"#;
        assert_eq!(
            strings(text),
            vec![
                ("a".into(), true, r#"."a""#.into(), r#""a""#),
                ("b".into(), true, r#"."a"[1]."b""#.into(), r#""b""#),
                ("x".into(), false, r#"."a"[1]."b""#.into(), r#""x""#),
                ("y".into(), false, r#"."a"[2]"#.into(), r#""y""#),
                ("c".into(), true, r#"."c""#.into(), r#""c""#),
                ("d".into(), true, r#"."c"."d""#.into(), r#""d""#),
                ("e".into(), true, r#"."c"."e""#.into(), r#""e""#),
                ("f".into(), true, r#"."c"."f""#.into(), r#""f""#),
            ]
        );
        let doc = tokenize(text).unwrap();
        let others: Vec<_> = doc
            .tokens
            .iter()
            .filter(|t| t.str_value().is_none())
            .map(|t| (t.kind.clone(), &text[t.range.clone()], doc.path(t)))
            .collect();
        assert_eq!(
            others,
            vec![
                (Kind::Number, "1", vec![Seg::Key("a".into()), Seg::Index(0)]),
                (
                    Kind::Null,
                    "null",
                    vec![Seg::Key("c".into()), Seg::Key("d".into())]
                ),
                (
                    Kind::Bool(true),
                    "true",
                    vec![Seg::Key("c".into()), Seg::Key("e".into())]
                ),
                (
                    Kind::Number,
                    "-2.5e3",
                    vec![Seg::Key("c".into()), Seg::Key("f".into())]
                ),
            ]
        );
        assert_eq!(doc.duplicate_key, None);
    }

    #[test]
    fn top_level_scalars_have_the_empty_path() {
        for text in [r#""s""#, "0", " true ", "null\n"] {
            let doc = tokenize(text).unwrap();
            assert_eq!(doc.tokens.len(), 1, "{text}");
            assert_eq!(doc.path(&doc.tokens[0]), vec![], "{text}");
            assert_eq!(text[doc.tokens[0].range.clone()], *text.trim(), "{text}");
        }
        assert!(tokenize("{}").unwrap().tokens.is_empty());
        assert!(tokenize(" [ ] ").unwrap().tokens.is_empty());
    }

    #[test]
    fn escapes_decode_and_ranges_keep_the_raw_bytes() {
        let text = r#"["https:\/\/h", "\u0041\u00e9\u4e2d", "\ud83d\ude00", "say \"hi\"", "\\ \b\f\n\r\t", "é😀"]"#;
        let got: Vec<_> = strings(text).into_iter().map(|s| (s.0, s.3)).collect();
        assert_eq!(
            got,
            vec![
                ("https://h".into(), r#""https:\/\/h""#),
                ("Aé中".into(), r#""\u0041\u00e9\u4e2d""#),
                ("😀".into(), r#""\ud83d\ude00""#),
                ("say \"hi\"".into(), r#""say \"hi\"""#),
                ("\\ \u{8}\u{c}\n\r\t".into(), r#""\\ \b\f\n\r\t""#),
                ("é😀".into(), r#""é😀""#),
            ]
        );
        // Upper-case hex digits too, and serde_json agrees on every value.
        let text = r#"{"\uD83D\uDE00": "\u002F"}"#;
        assert_eq!(strings(text)[0].0, "😀");
        assert_eq!(strings(text)[1].0, "/");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["😀"], "/");
    }

    #[test]
    fn surrogate_pairs_the_yaml_parser_refuses_are_read() {
        // What Python's json.dump writes for an emoji.
        let text = "{\"name\": \"\\ud83d\\ude00\", \"server\": \"https://h\"}\n";
        assert!(yaml_rust2::YamlLoader::load_from_str(text).is_err());
        let got = strings(text);
        assert_eq!(got[1].0, "😀");
        assert_eq!(got[3].0, "https://h");
    }

    #[test]
    fn a_leading_bom_is_skipped_and_counted_in_ranges() {
        let text = "\u{feff}{\"a\": \"b\"}";
        let doc = tokenize(text).unwrap();
        assert_eq!(doc.tokens[0].range, 4..7);
        assert_eq!(doc.tokens[1].str_value(), Some("b"));
        // serde_json refuses the BOM: verification strips it first.
        assert!(serde_json::from_str::<serde_json::Value>(text).is_err());
        // Only at the start, and only one.
        assert_eq!(
            err("\u{feff}\u{feff}{}"),
            "1:2: expected a value, found `\u{feff}`"
        );
        assert_eq!(
            err("{} \u{feff}"),
            "1:4: unexpected `\u{feff}` after the JSON value"
        );
    }

    #[test]
    fn crlf_and_lone_cr_are_whitespace_and_line_breaks() {
        let text = "{\r\n  \"a\": \"x\",\r\n  \"b\": [1,\r2]\r\n}\r\n";
        assert_eq!(strings(text).len(), 3);
        assert_eq!(
            err("{\r\n  \"a\": 1,\r\n  \"b\": x\r\n}"),
            "3:8: expected a value, found `x`"
        );
        assert_eq!(err("[1,\r2,\r,]"), "3:1: expected a value, found `,`");
        assert_eq!(err("[1,\n\"é\", é]"), "2:6: expected a value, found `é`");
    }

    #[test]
    fn invalid_json_is_refused_with_line_and_column() {
        for (text, want) in [
            ("", "1:1: no JSON value in the text"),
            ("  \n", "2:1: no JSON value in the text"),
            ("{\"a\": 1,}", "1:9: trailing comma before the end of an object"),
            ("[1, 2,]", "1:7: trailing comma before the end of an array"),
            ("[,1]", "1:2: expected a value, found `,`"),
            ("{\"a\" 1}", "1:6: expected `:` after a member name, found `1`"),
            ("{'a': 1}", "1:2: expected a member name in double quotes, found `'`"),
            ("{a: 1}", "1:2: expected a member name in double quotes, found `a`"),
            ("[1 2]", "1:4: expected `,` or `]` after an array element, found `2`"),
            ("{\"a\": 1 \"b\": 2}", "1:9: expected `,` or `}` after an object member, found `\"`"),
            ("[1]]", "1:4: unexpected `]` after the JSON value"),
            ("[1] // c", "1:5: unexpected `/` after the JSON value"),
            ("{} {}", "1:4: unexpected `{` after the JSON value"),
            ("[1", "1:3: expected `,` or `]` after an array element, found the end of the text"),
            ("[\"ab", "1:2: unterminated string"),
            ("[\"a\tb\"]", "1:4: control character U+0009 in a string must be escaped"),
            ("[\"a\nb\"]", "1:4: control character U+000A in a string must be escaped"),
            ("[\"\\x41\"]", "1:3: invalid escape: `\\` followed by `x`"),
            ("[\"\\u41\"]", "1:3: `\\u` must be followed by four hex digits"),
            ("[\"\\ud83d\"]", "1:3: lone surrogate `\\ud83d`: a high surrogate must be followed by a `\\u` escape of a low one"),
            ("[\"\\ude00\\ud83d\"]", "1:3: lone surrogate `\\ude00`: a low surrogate without a high one"),
            ("[\"\\ud83d\\u0041\"]", "1:3: lone surrogate `\\ud83d`: followed by `\\u0041`, not a low surrogate"),
            ("[01]", "1:2: a number must not have a leading zero"),
            ("[-01]", "1:2: a number must not have a leading zero"),
            ("[1.]", "1:2: a decimal point must be followed by a digit"),
            ("[.5]", "1:2: expected a value, found `.`"),
            ("[-]", "1:2: `-` must be followed by a digit"),
            ("[+1]", "1:2: expected a value, found `+`"),
            ("[1e]", "1:2: an exponent must have a digit"),
            ("[1e+]", "1:2: an exponent must have a digit"),
            ("[0x10]", "1:3: expected `,` or `]` after an array element, found `x`"),
            ("[NaN]", "1:2: expected a value, found `N`"),
            ("[tru]", "1:2: expected `true`"),
            ("[truex]", "1:6: expected `,` or `]` after an array element, found `x`"),
            ("[True]", "1:2: expected a value, found `T`"),
        ] {
            assert_eq!(err(text), want, "{text:?}");
        }
    }

    #[test]
    fn serde_json_also_refuses_lone_surrogates() {
        // The grammar allows them; neither reader decodes them to a string.
        for text in [r#"["\ud83d"]"#, r#"["\ude00"]"#, r#"["\ud83d\u0041"]"#] {
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_err(),
                "{text}"
            );
            assert!(tokenize(text).is_err(), "{text}");
        }
    }

    #[test]
    fn numbers_are_scalars_with_their_raw_bytes() {
        let text = "[0, -0, 12, -3.25, 1e5, 1E+2, 2.5e-10, 123456789012345678901234567890, 1e400]";
        let doc = tokenize(text).unwrap();
        let raw: Vec<_> = doc.tokens.iter().map(|t| &text[t.range.clone()]).collect();
        assert_eq!(
            raw,
            [
                "0",
                "-0",
                "12",
                "-3.25",
                "1e5",
                "1E+2",
                "2.5e-10",
                "123456789012345678901234567890",
                "1e400"
            ]
        );
        assert!(doc.tokens.iter().all(|t| t.kind == Kind::Number));
    }

    #[test]
    fn nesting_is_limited_without_recursion() {
        let deep = |n: usize| format!("{}\"x\"{}", "[".repeat(n), "]".repeat(n));
        let doc = tokenize(&deep(MAX_DEPTH)).unwrap();
        assert_eq!(doc.path(&doc.tokens[0]), vec![Seg::Index(0); MAX_DEPTH]);
        assert_eq!(
            err(&deep(MAX_DEPTH + 1)),
            "1:1001: arrays and objects nested deeper than 1000 levels"
        );
        // Far deeper than any stack would take, objects too: a clean error.
        let e = tokenize(&"{\"a\":[".repeat(1_000_000)).unwrap_err();
        assert_eq!((e.line, e.column), (1, 3001));
        let e = tokenize(&"[".repeat(1_000_000)).unwrap_err();
        assert_eq!((e.line, e.column), (1, 1001));
    }

    #[test]
    fn duplicate_keys_are_accepted_and_reported() {
        let doc = tokenize(r#"{"a": 1, "b": {"a": 2}, "a": 3}"#).unwrap();
        assert_eq!(doc.duplicate_key, Some(24..27));
        let doc = tokenize(r#"{"a": 1, "b": {"a": 2}}"#).unwrap();
        assert_eq!(doc.duplicate_key, None);
    }

    #[test]
    fn a_body_decodes_with_the_tokenizers_rules_and_maps_each_character() {
        let d = escape_map("a\\u00e9\\ud83d\\ude00\\/\u{e9}").unwrap();
        assert_eq!(d.text, "a\u{e9}\u{1f600}/\u{e9}");
        let raw: Vec<_> = d.spans.iter().map(|(r, _)| r.clone()).collect();
        assert_eq!(raw, [0..1, 1..7, 7..19, 19..21, 21..23]);
        let dec: Vec<_> = d.spans.iter().map(|(_, r)| r.clone()).collect();
        assert_eq!(dec, [0..1, 1..3, 3..7, 7..8, 8..10]);
        for bad in ["\\x41", "\\ud83d", "a\"b", "\t", "\\"] {
            assert!(escape_map(bad).is_none(), "{bad:?}");
        }
        for s in ["", "plain", "q\"uote\\ \n\u{1}\u{1f600}"] {
            let quoted = serde_json::to_string(s).unwrap();
            let body = &quoted[1..quoted.len() - 1];
            assert_eq!(escape_map(body).unwrap().text, s);
            assert_eq!(tokenize(&quoted).unwrap().tokens[0].str_value(), Some(s));
        }
    }
}
