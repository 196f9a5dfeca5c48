//! YAML input: the line index (byte offsets from the parser's line and
//! character column), Helm template masking, BOM handling, and the parser's
//! event stream with byte offsets. Everything that reads YAML text goes
//! through here; nothing here knows what an endpoint is.
//!
//! yaml-rust2's markers give line and column in characters; byte offsets are
//! derived from [`LineIndex`], never from `Marker::index()`.

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

/// Length in bytes of a leading UTF-8 byte order mark (0 when there is none).
/// A BOM is not content: the parser would fold it into the first key.
pub fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        3
    } else {
        0
    }
}

/// Byte offsets of line starts, and conversion from the parser's (line, char column).
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Line breaks as YAML counts them: `\n`, `\r\n`, and a lone `\r`.
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = Vec::with_capacity(b.len() / 32 + 1);
        starts.push(0);
        for i in memchr::memchr2_iter(b'\n', b'\r', b) {
            if b[i] == b'\n' || b.get(i + 1) != Some(&b'\n') {
                starts.push(i + 1);
            }
        }
        LineIndex { starts }
    }

    /// Byte offset of a 1-based line and 0-based character column, if it exists.
    pub fn offset(&self, text: &str, line: usize, col: usize) -> Option<usize> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let rest = text.get(start..)?;
        if col == 0 {
            return Some(start);
        }
        // Most lines are ASCII up to the column: then characters are bytes.
        if rest.len() >= col && rest.as_bytes()[..col].is_ascii() {
            return Some(start + col);
        }
        rest.char_indices()
            .nth(col)
            .map(|(i, _)| start + i)
            .or_else(|| (rest.chars().count() == col).then_some(text.len()))
    }

    /// 1-based line and 1-based character column of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let col = text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, col + 1)
    }
}

/// Replaces each `{{ ... }}` action with same-length filler so a Helm template
/// parses and byte offsets hold: spaces when the action is alone on its line,
/// `x` otherwise; line breaks inside an action are kept. Returns the masked text
/// and the masked byte ranges, or `None` when there is no action.
pub fn mask_templates(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut i = 0;
    while let Some(rel) = text.get(i..).and_then(|s| s.find("{{")) {
        let start = i + rel;
        let Some(close) = text[start + 2..].find("}}") else {
            ranges.push((start, b.len()));
            break;
        };
        let end = start + 2 + close + 2;
        ranges.push((start, end));
        i = end;
    }
    if ranges.is_empty() {
        return None;
    }
    let mut out = b.to_vec();
    for &(s, e) in &ranges {
        let line_start = b[..s]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line_end = b[e..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| e + p);
        let alone = b[line_start..s].iter().all(|c| c.is_ascii_whitespace())
            && b[e..line_end].iter().all(|c| c.is_ascii_whitespace());
        let fill = if alone { b' ' } else { b'x' };
        for c in &mut out[s..e] {
            if *c != b'\n' && *c != b'\r' {
                *c = fill;
            }
        }
    }
    // Only ASCII bytes were written over whole actions, so this stays UTF-8.
    String::from_utf8(out).ok().map(|s| (s, ranges))
}

/// Deepest nesting of collections accepted; deeper input is an error, not a
/// risk to the stack of whoever reads the file next.
pub const MAX_DEPTH: usize = 1000;

/// A parse failure: 1-based line and column, and the parser's message.
pub type ParseFailure = (usize, usize, String);

/// Streams the parser's events with their byte offsets in the whole text.
/// A leading BOM is skipped (and counted in the offsets).
pub struct Events<'a> {
    parser: Parser<std::str::Chars<'a>>,
    body: &'a str,
    /// Line index of `body` (a masked text has the same line starts).
    index: std::borrow::Cow<'a, LineIndex>,
    base: usize,
    done: bool,
}

impl<'a> Events<'a> {
    /// The events of `text` (the original, or its masked copy).
    pub fn new(text: &'a str) -> Events<'a> {
        let base = bom_len(text);
        let body = &text[base..];
        Events {
            parser: Parser::new_from_str(body),
            body,
            index: std::borrow::Cow::Owned(LineIndex::new(body)),
            base,
            done: false,
        }
    }

    /// [`Events::new`] with the line index of `text` already built (a text
    /// without a BOM, or its masked copy: same line starts).
    pub fn with_index(text: &'a str, index: &'a LineIndex) -> Events<'a> {
        debug_assert_eq!(bom_len(text), 0);
        Events {
            parser: Parser::new_from_str(text),
            body: text,
            index: std::borrow::Cow::Borrowed(index),
            base: 0,
            done: false,
        }
    }
}

impl Iterator for Events<'_> {
    type Item = Result<(Event, usize), ParseFailure>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.parser.next_token() {
            Ok((ev, mark)) => {
                self.done = ev == Event::StreamEnd;
                let off = marker_offset(self.body, &self.index, &mark);
                Some(Ok((ev, self.base + off)))
            }
            Err(e) => {
                self.done = true;
                let m = e.marker();
                Some(Err((m.line().max(1), m.col() + 1, e.info().to_string())))
            }
        }
    }
}

fn marker_offset(text: &str, index: &LineIndex, m: &Marker) -> usize {
    index
        .offset(text, m.line(), m.col())
        .unwrap_or(text.len())
        .min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_handles_crlf_and_multibyte() {
        let t = "# 한국어\r\nkey: v\rz: 1\n";
        let ix = LineIndex::new(t);
        let key = t.find("key").unwrap();
        assert_eq!(ix.offset(t, 2, 0), Some(key));
        assert_eq!(ix.position(t, key + 5), (2, 6));
        assert_eq!(ix.offset(t, 3, 0), Some(t.find('z').unwrap()));
        assert_eq!(ix.position(t, t.find('어').unwrap()), (1, 5));
    }

    #[test]
    fn mask_keeps_length_and_lines() {
        let t = "{{- if .Values.x }}\nname: app-{{ .Values.env }}\n{{- end }}\n";
        let (m, r) = mask_templates(t).unwrap();
        assert_eq!(m.len(), t.len());
        assert_eq!(r.len(), 3);
        assert_eq!(
            m,
            "                   \nname: app-xxxxxxxxxxxxxxxxx\n          \n"
        );
    }

    #[test]
    fn events_skip_a_bom_and_count_it_in_offsets() {
        let t = "\u{feff}a: b\n";
        let offs: Vec<usize> = Events::new(t)
            .filter_map(|r| match r.unwrap() {
                (Event::Scalar(..), off) => Some(off),
                _ => None,
            })
            .collect();
        assert_eq!(offs, vec![3, 6]);
    }
}
