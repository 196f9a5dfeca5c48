//! YAML input: the line index (byte offsets from the parser's line and
//! character column), Helm template masking, BOM handling, the parser's
//! event stream with byte offsets, and the one model every reader builds on:
//!
//! - streaming: [`Events`] (each event with its byte offset; [`Events::positioned`]
//!   adds line and column) and a [`Stack`] of open collections, which gives
//!   each scalar its [`YamlPath`], says whether it is a key or inside a
//!   complex key, and keeps what the reader wants per collection (the
//!   locator, embedded documents);
//! - whole documents: [`read_documents`] / [`TreeBuilder`] give [`Node`]s
//!   with line, column and byte range (the config, the registration search).
//!
//! Everything that reads YAML text goes through here; nothing here knows
//! what an endpoint is.
//!
//! yaml-rust2's markers give line and column in characters; byte offsets are
//! derived from [`LineIndex`], never from `Marker::index()`.

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

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

/// The byte ranges of a text's Helm (Go template) actions, in order: each
/// from its `{{` to the `}}` that closes it, as Go's template lexer reads an
/// action. A `}}` inside a quoted or raw string, a character constant or a
/// `/* */` comment does not close it; an action may span lines; the trim
/// markers `{{-` and `-}}` are part of it; a backslash outside a string is
/// an escape of the YAML string the action is written in (`\"`). A `{{`
/// that Go's template grammar cannot read as an action is no action (Helm
/// refuses such a template), and its text is read as written: one that no
/// `}}` follows, one with a string broken by a line end, or one holding,
/// outside its strings and comments, a character no action may hold (`:`
/// other than in `:=`, `#`, `;`, `[`, a lone `{` or `}`, a backslash ...:
/// a YAML comment or value that merely holds `{{`). What is not an action is never hidden as one: a value it
/// would have swallowed stays a value.
///
/// The one rule for what is template text: the locator reads every endpoint
/// inside these ranges as a template mention, masks them when a file does
/// not parse as it is ([`mask_templates`]), and the rewrite's verifier
/// requires them unchanged.
pub fn template_actions(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    // Past the last `}}`, no `{{` is closed: nothing more to read.
    let Some(last_close) = text.rfind("}}") else {
        return ranges;
    };
    let mut i = 0;
    while let Some(rel) = text.get(i..last_close).and_then(|s| s.find("{{")) {
        let start = i + rel;
        match action_end(text.as_bytes(), start + 2) {
            Some(end) => {
                ranges.push((start, end));
                i = end;
            }
            None => i = start + 2,
        }
    }
    ranges
}

/// The action `text[start..end]` (a range of [`template_actions`]) without
/// its delimiters and trim markers, white space trimmed, and whether it
/// trims the text before it (`{{- `) and after it (` -}}`). A marker is a
/// `-` with white space beside it (Go's lexer: `{{-1}}` is the number -1).
pub fn action_expr(text: &str, start: usize, end: usize) -> (&str, bool, bool) {
    let inner = &text[start + 2..end - 2];
    let ltrim =
        inner.len() > 1 && inner.starts_with('-') && inner[1..].starts_with(char::is_whitespace);
    let rtrim = inner.len() > 1
        && inner.ends_with('-')
        && inner[..inner.len() - 1].ends_with(char::is_whitespace);
    let mut expr = inner;
    if ltrim {
        expr = &expr[1..];
    }
    if rtrim {
        expr = &expr[..expr.len() - 1];
    }
    (expr.trim(), ltrim, rtrim)
}

/// Where the action whose `{{` ends at `from` ends (after its `}}`), read by
/// Go's template lexer; `None` when Go would refuse it.
fn action_end(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    // A left trim marker is `-` and a space; then a comment may open.
    if b.get(i) == Some(&b'-') && b.get(i + 1).is_some_and(u8::is_ascii_whitespace) {
        i += 2;
    }
    if b[i..].starts_with(b"/*") {
        let close = i + 2 + find(&b[i + 2..], b"*/")? + 2;
        let rest = &b[close..];
        return if rest.starts_with(b"}}") {
            Some(close + 2)
        } else if rest.len() > 1 && rest[0].is_ascii_whitespace() && rest[1..].starts_with(b"-}}") {
            Some(close + 4)
        } else {
            None
        };
    }
    while i < b.len() {
        match b[i] {
            b'}' if b.get(i + 1) == Some(&b'}') => return Some(i + 2),
            // Written inside a double-quoted YAML string: `\"` quotes.
            b'\\' if b.get(i + 1) == Some(&b'"') => i = escaped_quoted_end(b, i + 2)?,
            // `:` only in `:=`.
            b':' if b.get(i + 1) != Some(&b'=') => return None,
            c if c >= 0x80 => i += letter_or_digit_len(&b[i..])?,
            q @ (b'"' | b'\'') => i = quoted_end(b, i + 1, q)?,
            b'`' => i = i + 1 + memchr::memchr(b'`', &b[i + 1..])? + 1,
            c if in_action(c) => i += 1,
            _ => return None,
        }
    }
    None
}

/// The length of the non-ASCII letter or digit `b` starts with (Go's
/// names may hold them); `None` for any other character, which Go's lexer
/// refuses in an action.
fn letter_or_digit_len(b: &[u8]) -> Option<usize> {
    let len = match b[0] {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(b.get(..len)?).ok()?.chars().next()?;
    c.is_alphanumeric().then_some(len)
}

/// Whether Go's template grammar may hold the ASCII byte `c` in an action
/// outside its strings and comments: names, fields and variables (`.`,
/// `$`, `_`), numbers (`+`, `-`), pipes, parentheses, declarations (`:=`,
/// `=`, `,`) and white space. A backslash is not one (outside a string Go
/// refuses it; `\"` inside a double-quoted YAML string is read above).
fn in_action(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || c.is_ascii_whitespace()
        || matches!(
            c,
            b'.' | b'$' | b'_' | b'+' | b'-' | b'|' | b'(' | b')' | b':' | b'=' | b','
        )
}

/// An action's text after its `{{` (and a trim marker `- `).
fn action_body(action: &str) -> &str {
    let inner = action.strip_prefix("{{").unwrap_or(action);
    inner
        .strip_prefix('-')
        .filter(|r| r.starts_with(|c: char| c.is_ascii_whitespace()))
        .unwrap_or(inner)
        .trim_start()
}

/// Whether the action `action` (`{{ ... }}`) is a template comment
/// (`{{/* ... */}}`, `{{- /* ... */ -}}`): it neither renders nor decides.
pub fn action_is_comment(action: &str) -> bool {
    action_body(action).starts_with("/*")
}

/// Whether the action `action` (`{{ ... }}`) writes text where it stands:
/// not a comment, a control keyword (`if`, `else`, `end`, `range`, `with`,
/// `define`, `break`, `continue`) or a variable's assignment.
pub fn action_renders(action: &str) -> bool {
    if action_is_comment(action) {
        return false;
    }
    let inner = action_body(action);
    let word_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(inner.len());
    let (word, rest) = inner.split_at(word_end);
    const CONTROL: [&str; 8] = [
        "if", "else", "end", "range", "with", "define", "break", "continue",
    ];
    if CONTROL.contains(&word) {
        return false;
    }
    let rest = rest.trim_start();
    let assigns = rest.starts_with(":=") || (rest.starts_with('=') && !rest.starts_with("=="));
    !(word.starts_with('$') && assigns)
}

/// After the interpreted string or character constant whose body starts at
/// `i` and which `quote` closes; `None` at a line end or the end of the text.
fn quoted_end(b: &[u8], mut i: usize, quote: u8) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1).is_some_and(|&c| c != b'\n') => i += 2,
            b'\n' | b'\r' | b'\\' => return None,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// After the Go string whose body starts at `i`, written inside a
/// double-quoted YAML string (`\"https://h\"`, where Go's own escapes are
/// `\\` and a YAML escape); `None` at a line end or the end of the text.
fn escaped_quoted_end(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'\n' | b'\r', _) | (b'\\', None) => return None,
            (b'\\', Some(b'"')) => return Some(i + 2),
            // Go's escape, then the character it escapes (a YAML escape too).
            (b'\\', Some(b'\\')) => i += if b.get(i + 2) == Some(&b'\\') { 4 } else { 3 },
            (b'\\', Some(_)) => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// The first offset of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Replaces each `{{ ... }}` action ([`template_actions`]) with same-length
/// filler so a Helm template parses and byte offsets hold: spaces when the
/// action is alone on its line, `x` otherwise; line breaks inside an action
/// are kept. Returns the masked text and the masked byte ranges, or `None`
/// when there is no action.
pub fn mask_templates(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let ranges = template_actions(text);
    if ranges.is_empty() {
        return None;
    }
    Some((mask(text, &ranges), ranges))
}

/// The text the parser reads for a file: as it is, or with its template
/// actions masked when `masked` (the file parsed only so). The locator and
/// the rewrite's verifier both read through this.
pub fn parsed_text(text: &str, masked: bool) -> std::borrow::Cow<'_, str> {
    match mask_templates(text).filter(|_| masked) {
        Some((m, _)) => m.into(),
        None => text.into(),
    }
}

/// `text` with the byte ranges `ranges` (sorted, apart) masked as
/// [`mask_templates`] does.
pub fn mask(text: &str, ranges: &[(usize, usize)]) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    for &(s, e) in ranges {
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
    // Only ASCII bytes were written over whole actions, which start and
    // end on ASCII bytes, so this stays UTF-8 (and the same length).
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Deepest nesting of collections accepted; deeper input is an error, not a
/// risk to the stack of whoever reads the file next.
pub const MAX_DEPTH: usize = 1000;

/// A parse failure: 1-based line and column, and the parser's message.
pub type ParseFailure = (usize, usize, String);

/// Streams the parser's events with their byte offsets in the whole text.
/// A leading BOM is skipped (and counted in the offsets).
pub struct Events<'a> {
    parser: Parser<Separated<'a>>,
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
        let index = LineIndex::new(body);
        Events {
            parser: Parser::new(Separated::new(body, separating_tabs(body, &index))),
            body,
            index: std::borrow::Cow::Owned(index),
            base,
            done: false,
        }
    }

    /// [`Events::new`] with the line index of `text` already built (a text
    /// without a BOM, or its masked copy: same line starts).
    pub fn with_index(text: &'a str, index: &'a LineIndex) -> Events<'a> {
        debug_assert_eq!(bom_len(text), 0);
        Events {
            parser: Parser::new(Separated::new(text, separating_tabs(text, index))),
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

/// yaml-rust2's refusal of a tab as the separation after a mapping's `:`
/// (`key:<TAB>value`), which YAML 1.2 allows (`s-separate-in-line` is spaces
/// or tabs).
const TAB_AFTER_COLON: &str = "':' must be followed by a valid YAML whitespace";

/// Re-parses allowed per text to find such tabs (each finds one); past it,
/// the parser's error stands, with its line and column.
const MAX_TAB_RETRIES: usize = 100;

/// The byte offsets of the tabs that separate a mapping's `:` from its
/// value where yaml-rust2 refuses them: each time the parse fails with
/// exactly [`TAB_AFTER_COLON`] and the text before the failure is `:` and
/// tabs, the first tab is read as a space (a same-length reading, so every
/// offset, line and column holds; the text itself is never changed) and the
/// parse is tried again. A tab only ever separates there: no scalar's value
/// holds it, so reading it as a space changes no event. Any other failure
/// (a tab in indentation included) stands.
pub fn separating_tabs(text: &str, index: &LineIndex) -> Vec<usize> {
    let mut tabs = Vec::new();
    if !text.contains(":\t") {
        return tabs;
    }
    while tabs.len() < MAX_TAB_RETRIES {
        let mut parser = Parser::new(Separated::new(text, tabs.clone()));
        let err = loop {
            match parser.next_token() {
                Ok((Event::StreamEnd, _)) => return tabs,
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        if err.info() != TAB_AFTER_COLON {
            return tabs;
        }
        let m = err.marker();
        let Some(at) = index.offset(text, m.line(), m.col()) else {
            return tabs;
        };
        let before = text[..at].trim_end_matches('\t');
        let tab = before.len();
        if tab == at || !before.ends_with(':') || tabs.contains(&tab) {
            return tabs;
        }
        tabs.push(tab);
        tabs.sort_unstable();
    }
    tabs
}

/// The characters of a text as the parser reads them: the tabs at the given
/// byte offsets (sorted; see [`separating_tabs`]) read as spaces.
#[derive(Debug, Clone)]
pub struct Separated<'a> {
    chars: std::str::CharIndices<'a>,
    tabs: Vec<usize>,
    next: usize,
}

impl<'a> Separated<'a> {
    pub fn new(text: &'a str, tabs: Vec<usize>) -> Separated<'a> {
        Separated {
            chars: text.char_indices(),
            tabs,
            next: 0,
        }
    }
}

impl Iterator for Separated<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let (i, c) = self.chars.next()?;
        if self.tabs.get(self.next) == Some(&i) {
            self.next += 1;
            return Some(' ');
        }
        Some(c)
    }
}

fn marker_offset(text: &str, index: &LineIndex, m: &Marker) -> usize {
    index
        .offset(text, m.line(), m.col())
        .unwrap_or(text.len())
        .min(text.len())
}

// ---------------------------------------------------------------------------
// Documents read whole, every node with where it is
// ---------------------------------------------------------------------------

/// Where an event is: byte offset in the whole text (a BOM counted), 1-based
/// line, 1-based column in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub offset: usize,
    pub line: usize,
    pub col: usize,
}

impl<'a> Events<'a> {
    /// The events with their line and column as well as their byte offset.
    pub fn positioned(self) -> impl Iterator<Item = Result<(Event, At), ParseFailure>> + 'a {
        let (body, base) = (self.body, self.base);
        let index = self.index.clone().into_owned();
        self.map(move |item| {
            item.map(|(ev, offset)| {
                let (line, col) = index.position(body, offset - base);
                (ev, At { offset, line, col })
            })
        })
    }
}

/// A YAML node read whole, with its position: what a reader that needs a
/// document's structure (the config, the registration search, Application
/// sources) looks things up in.
#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    /// 1-based line of the node's first byte.
    pub line: usize,
    /// 1-based column (in characters) of the node's first byte.
    pub col: usize,
    /// Byte offset where the node starts (a quote or bracket included).
    pub start: usize,
    /// Byte offset of the closing bracket of a flow collection, or where the
    /// parser ended a block collection.
    pub end: usize,
}

#[derive(Debug, Clone)]
pub enum Value {
    Scalar(String, TScalarStyle),
    Map(Vec<(Node, Node)>),
    Seq(Vec<Node>),
    /// An alias (`*name`): the node its anchor names, when the anchor
    /// came before it in the document (as YAML requires). Readers that
    /// locate bytes do not follow it; [`Node::resolved`] does.
    Alias(Option<Box<Node>>),
}

impl Node {
    /// Whether the node is YAML's null: a plain scalar that is empty, `~`,
    /// `null`, `Null` or `NULL` (the core schema; JSON's `null` reads the
    /// same). A quoted `"null"` is the string. The one null rule.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(s, TScalarStyle::Plain)
            if matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// The scalar's decoded value.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s, _) => Some(s),
            _ => None,
        }
    }

    /// The node an alias names (the node itself when it is no alias).
    pub fn resolved(&self) -> &Node {
        match &self.value {
            Value::Alias(Some(target)) => target,
            _ => self,
        }
    }

    /// The value of a mapping's last entry whose key is `key`, aliases
    /// followed: a duplicate key as go-yaml v2 (under sigs.k8s.io/yaml, the
    /// reader of the Kubernetes API clients and of ArgoCD) decodes it into a
    /// map, the last value replacing the earlier ones.
    pub fn get_decoded(&self, key: &str) -> Option<&Node> {
        match &self.resolved().value {
            Value::Map(pairs) => pairs
                .iter()
                .rev()
                .find(|(k, _)| k.resolved().as_str() == Some(key))
                .map(|(_, v)| v.resolved()),
            _ => None,
        }
    }

    /// The value of a mapping's (first) entry whose key is `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The node at a path of mapping keys.
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    /// The scalar at a path of mapping keys.
    pub fn str_at(&self, path: &[&str]) -> Option<&str> {
        self.at(path)?.as_str()
    }
}

impl Node {
    /// The decoded data of this node with the positions dropped, as
    /// yaml-rust2's value type (every scalar as a string, an alias as
    /// `BadValue`): for readers that compare or index data, such as trust
    /// policies, without their own parse.
    pub fn data(&self) -> yaml_rust2::Yaml {
        use yaml_rust2::Yaml;
        match &self.value {
            Value::Scalar(s, _) => Yaml::String(s.clone()),
            Value::Seq(items) => Yaml::Array(items.iter().map(Node::data).collect()),
            Value::Map(pairs) => {
                Yaml::Hash(pairs.iter().map(|(k, v)| (k.data(), v.data())).collect())
            }
            Value::Alias(_) => Yaml::BadValue,
        }
    }

    /// Visits this node and every node below it, each with its path from
    /// this node (mapping keys are visited as the keys of their entries, not
    /// as nodes of their own): every scalar and collection with its decoded
    /// value, byte offset, line and column.
    pub fn walk(&self, visit: &mut dyn FnMut(&YamlPath, &Node)) {
        let mut path = YamlPath::default();
        self.walk_at(&mut path, visit);
    }

    fn walk_at(&self, path: &mut YamlPath, visit: &mut dyn FnMut(&YamlPath, &Node)) {
        visit(path, self);
        match &self.value {
            Value::Map(pairs) => {
                for (k, v) in pairs {
                    path.0.push(Seg::Key(k.as_str().unwrap_or("?").to_string()));
                    v.walk_at(path, visit);
                    path.0.pop();
                }
            }
            Value::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.0.push(Seg::Index(i));
                    v.walk_at(path, visit);
                    path.0.pop();
                }
            }
            Value::Scalar(..) | Value::Alias(_) => {}
        }
    }
}

/// Builds [`Node`]s from positioned events, one document after another.
#[derive(Default)]
pub struct TreeBuilder {
    stack: Vec<Node>,
    pending_keys: Vec<Option<Node>>,
    docs: Vec<Node>,
    /// Aliases are replaced by the nodes their anchors name, and merge keys
    /// applied ([`TreeBuilder::resolving`]).
    resolve: bool,
    /// The anchor id of each open collection (0: none).
    open_anchors: Vec<usize>,
    /// The nodes anchored so far in this document, by anchor id.
    anchors: std::collections::HashMap<usize, Node>,
}

impl TreeBuilder {
    /// A builder that reads data as go-yaml decodes it (what ArgoCD reads a
    /// generator's files with): an alias is the node its anchor names (its
    /// bytes are the anchor's: line, column and span point there), and a
    /// merge key `<<` brings the merged mappings' entries that the mapping
    /// does not write itself (the first merged mapping wins among several).
    pub fn resolving() -> TreeBuilder {
        TreeBuilder {
            resolve: true,
            ..TreeBuilder::default()
        }
    }

    /// Takes one event; collections are closed at `at`.
    pub fn event(&mut self, ev: Event, at: At) {
        let node = |value| Node {
            value,
            line: at.line,
            col: at.col,
            start: at.offset,
            end: at.offset,
        };
        let done = match ev {
            Event::Scalar(v, style, anchor, _) => {
                let n = node(Value::Scalar(v, style));
                if anchor != 0 {
                    self.anchors.insert(anchor, n.clone());
                }
                Some(n)
            }
            Event::Alias(id) => {
                let target = self.anchors.get(&id).cloned();
                Some(match target {
                    // A resolving reading puts the anchored node in its place.
                    Some(t) if self.resolve => t,
                    t => node(Value::Alias(t.map(Box::new))),
                })
            }
            Event::MappingStart(anchor, _) | Event::SequenceStart(anchor, _) => {
                let value = if matches!(ev, Event::MappingStart(..)) {
                    Value::Map(Vec::new())
                } else {
                    Value::Seq(Vec::new())
                };
                self.stack.push(node(value));
                self.pending_keys.push(None);
                self.open_anchors.push(anchor);
                None
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.pending_keys.pop();
                let anchor = self.open_anchors.pop().unwrap_or(0);
                let resolve = self.resolve;
                let n = self.stack.pop().map(|mut n| {
                    n.end = at.offset;
                    if resolve {
                        apply_merges(&mut n);
                    }
                    n
                });
                if let Some(n) = n.as_ref().filter(|_| anchor > 0) {
                    self.anchors.insert(anchor, n.clone());
                }
                n
            }
            Event::DocumentStart | Event::DocumentEnd => {
                self.anchors.clear();
                None
            }
            _ => None,
        };
        let Some(done) = done else { return };
        match self.stack.last_mut() {
            None => self.docs.push(done),
            Some(parent) => match &mut parent.value {
                Value::Seq(items) => items.push(done),
                Value::Map(pairs) => {
                    // The parser marks a block mapping one character into
                    // its first key: it starts where that key does.
                    if pairs.is_empty() && done.start < parent.start {
                        (parent.start, parent.line, parent.col) = (done.start, done.line, done.col);
                    }
                    let slot = self
                        .pending_keys
                        .last_mut()
                        .expect("one per open collection");
                    match slot.take() {
                        None => *slot = Some(done),
                        Some(k) => pairs.push((k, done)),
                    }
                }
                _ => {}
            },
        }
    }

    /// The root node of each document read.
    pub fn finish(self) -> Vec<Node> {
        self.docs
    }
}

/// Applies a mapping's merge keys (`<<: *a`, `<<: [*a, *b]`): each merged
/// mapping's entries that the mapping does not write itself (nor an
/// earlier merged mapping) are added; the `<<` entries themselves go.
fn apply_merges(n: &mut Node) {
    let Value::Map(pairs) = &mut n.value else {
        return;
    };
    if !pairs.iter().any(|(k, _)| k.as_str() == Some(MERGE_KEY)) {
        return;
    }
    let (merges, mut own): (Vec<_>, Vec<_>) = std::mem::take(pairs)
        .into_iter()
        .partition(|(k, _)| k.as_str() == Some(MERGE_KEY));
    let mut sources = Vec::new();
    for (_, v) in merges {
        match v.value {
            Value::Seq(items) => sources.extend(items),
            _ => sources.push(v),
        }
    }
    for src in sources {
        let Value::Map(entries) = src.value else {
            continue; // only a mapping merges
        };
        for (k, v) in entries {
            if !own.iter().any(|(o, _)| o.as_str() == k.as_str()) {
                own.push((k, v));
            }
        }
    }
    *pairs = own;
}

/// [`read_yaml_or_json`] read as go-yaml decodes data: aliases and merge
/// keys applied ([`TreeBuilder::resolving`]).
pub fn read_resolved(text: &str) -> Result<Vec<Node>, ParseFailure> {
    let mut b = TreeBuilder::resolving();
    for item in Events::new(text).positioned() {
        match item {
            Ok((ev, at)) => b.event(ev, at),
            Err(_) => return read_yaml_or_json(text), // JSON has no aliases
        }
    }
    Ok(b.finish())
}

/// [`read_documents`], or, for JSON the YAML parser refuses (a surrogate-pair
/// escape, as Python's `json.dump` writes), the JSON reader's one document
/// built by the same [`TreeBuilder`]. The YAML error stands when the text
/// is not JSON either.
pub fn read_yaml_or_json(text: &str) -> Result<Vec<Node>, ParseFailure> {
    let yaml_error = match read_documents(text) {
        Ok(docs) => return Ok(docs),
        Err(e) => e,
    };
    let Ok(doc) = crate::syntax::json::tokenize(text) else {
        return Err(yaml_error);
    };
    let index = LineIndex::new(text);
    let mut b = TreeBuilder::default();
    for (ev, offset) in doc.events(text) {
        let (line, col) = index.position(text, offset);
        b.event(ev, At { offset, line, col });
    }
    Ok(b.finish())
}

/// The byte ranges of the template actions a text was read with masked.
pub type Masked = Vec<(usize, usize)>;

/// [`read_yaml_or_json`] as the locator reads a file: as written, or with
/// its template actions masked when only that parses. Returns the
/// documents and the masked byte ranges (none when read as written).
pub fn read_maybe_masked(text: &str) -> Result<(Vec<Node>, Masked), ParseFailure> {
    let first = match read_yaml_or_json(text) {
        Ok(docs) => return Ok((docs, Vec::new())),
        Err(e) => e,
    };
    match mask_templates(text) {
        Some((m, r)) => read_yaml_or_json(&m).map(|d| (d, r)).map_err(|_| first),
        None => Err(first),
    }
}

/// Reads every document of `text` whole (a leading BOM skipped).
pub fn read_documents(text: &str) -> Result<Vec<Node>, ParseFailure> {
    let mut b = TreeBuilder::default();
    for item in Events::new(text).positioned() {
        let (ev, at) = item?;
        b.event(ev, at);
    }
    Ok(b.finish())
}

// ---------------------------------------------------------------------------
// The path-and-frame model every reader uses
// ---------------------------------------------------------------------------

/// One step of a YAML path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Where a scalar sits in its document, from the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct YamlPath(pub Vec<Seg>);

impl YamlPath {
    /// The last mapping key on the path, if the path ends in one.
    pub fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Seg::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// The mapping keys on the path, in order (sequence steps left out).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
    }
}

impl std::fmt::Display for YamlPath {
    /// `spec.destination.server`, `spec.generators[0].list.elements[1].url`,
    /// `data["resource.exclusions"]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for s in &self.0 {
            match s {
                Seg::Index(i) => write!(f, "[{i}]")?,
                Seg::Key(k) => {
                    let plain = !k.is_empty()
                        && k.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                    if plain {
                        if !first {
                            f.write_str(".")?;
                        }
                        f.write_str(k)?;
                    } else {
                        write!(f, "[{k:?}]")?;
                    }
                }
            }
            first = false;
        }
        Ok(())
    }
}

/// One open collection on the way down to the current node.
#[derive(Debug)]
pub struct Frame<T> {
    pub is_map: bool,
    /// In a mapping: the next node is a key.
    pub expect_key: bool,
    /// In a mapping: the key of the current entry (`?` after a complex key,
    /// `*` after an alias key).
    pub key: Option<String>,
    /// In a sequence: the index of the current item.
    pub index: usize,
    /// The collection is (inside) a complex mapping key.
    pub in_key: bool,
    /// The index of the event that opened it: identifies the collection.
    pub id: usize,
    /// What the reader keeps per collection (its naming scalars, ...).
    pub data: T,
}

impl<T> Frame<T> {
    /// The path step to the current node of this collection.
    pub fn seg(&self) -> Seg {
        if self.is_map {
            Seg::Key(self.key.clone().unwrap_or_else(|| "?".into()))
        } else {
            Seg::Index(self.index)
        }
    }

    /// A child node has been completed.
    fn advance(&mut self) {
        if self.is_map {
            self.expect_key = !self.expect_key;
        } else {
            self.index += 1;
        }
    }
}

/// The open collections from the root down to the current node: where a
/// reader is in a document. Feed it the events (`open`, `close`, `alias`,
/// `scalar`) after looking at each; it knows each node's path, whether a
/// scalar is a key, and keeps `T` per collection for the reader.
#[derive(Debug)]
pub struct Stack<T = ()> {
    frames: Vec<Frame<T>>,
}

impl<T> Default for Stack<T> {
    fn default() -> Self {
        Stack { frames: Vec::new() }
    }
}

impl<T> Stack<T> {
    pub fn new() -> Stack<T> {
        Stack::default()
    }

    #[inline]
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    #[inline]
    pub fn frames(&self) -> &[Frame<T>] {
        &self.frames
    }

    /// The innermost open collection.
    #[inline]
    pub fn top(&self) -> Option<&Frame<T>> {
        self.frames.last()
    }

    #[inline]
    pub fn top_mut(&mut self) -> Option<&mut Frame<T>> {
        self.frames.last_mut()
    }

    /// The collection holding the innermost one.
    #[inline]
    pub fn parent(&self) -> Option<&Frame<T>> {
        self.frames.len().checked_sub(2).map(|i| &self.frames[i])
    }

    /// A new document: nothing is open.
    pub fn clear(&mut self) {
        self.frames.clear();
    }

    /// The next scalar is a mapping key.
    #[inline]
    pub fn at_key(&self) -> bool {
        self.top().is_some_and(|f| f.is_map && f.expect_key)
    }

    /// The current node is (inside) a complex mapping key.
    #[inline]
    pub fn in_key(&self) -> bool {
        self.top().is_some_and(|f| f.in_key)
    }

    /// The key of the mapping entry whose value comes next (`None` in a
    /// sequence, at the top, or where a key comes next).
    #[inline]
    pub fn value_key(&self) -> Option<&str> {
        self.top()
            .filter(|f| f.is_map && !f.expect_key)
            .and_then(|f| f.key.as_deref())
    }

    /// A collection opens (`id`: its event's index).
    #[inline]
    pub fn open(&mut self, is_map: bool, id: usize, data: T) {
        let in_key = self.at_key() || self.in_key();
        self.frames.push(Frame {
            is_map,
            expect_key: true,
            key: None,
            index: 0,
            in_key,
            id,
            data,
        });
    }

    /// The innermost collection closes: it is returned, and its parent moves on.
    #[inline]
    pub fn close(&mut self) -> Option<Frame<T>> {
        let done = self.frames.pop();
        self.completed("?");
        done
    }

    /// An alias takes the current node's place.
    pub fn alias(&mut self) {
        self.completed("*");
    }

    /// A scalar has been read: a key becomes its mapping's current key.
    #[inline]
    pub fn scalar(&mut self, value: &str) {
        if let Some(f) = self.frames.last_mut() {
            if f.is_map && f.expect_key {
                set_key(&mut f.key, value);
            }
            f.advance();
        }
    }

    fn completed(&mut self, key: &str) {
        if let Some(f) = self.frames.last_mut() {
            if f.is_map && f.expect_key {
                set_key(&mut f.key, key);
            }
            f.advance();
        }
    }

    /// The mapping keys from the root down to the current node.
    pub fn keys(&self) -> Vec<&str> {
        self.frames
            .iter()
            .filter(|f| f.is_map)
            .map(|f| f.key.as_deref().unwrap_or("?"))
            .collect()
    }

    /// The last mapping key on the path to the current node.
    pub fn last_key(&self) -> Option<&str> {
        self.frames
            .iter()
            .rev()
            .find(|f| f.is_map)
            .map(|f| f.key.as_deref().unwrap_or("?"))
    }

    /// Every step of the path is a mapping key (no sequence on the way).
    pub fn only_keys(&self) -> bool {
        self.frames.iter().all(|f| f.is_map)
    }

    /// The path of the scalar `value` about to be read (a key's path ends in
    /// the key itself).
    pub fn path_of(&self, value: &str) -> YamlPath {
        let at_key = self.at_key();
        let depth = self.frames.len();
        YamlPath(
            self.frames
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if at_key && i + 1 == depth {
                        Seg::Key(value.to_string())
                    } else {
                        f.seg()
                    }
                })
                .collect(),
        )
    }

    /// The path of the current node (a collection's, or a value's).
    pub fn path(&self) -> YamlPath {
        YamlPath(self.frames.iter().map(Frame::seg).collect())
    }
}

/// Sets a mapping's current key, reusing the buffer of its previous key (a
/// mapping's keys come one after another: one allocation per mapping).
fn set_key(slot: &mut Option<String>, key: &str) {
    match slot {
        Some(k) => {
            k.clear();
            k.push_str(key);
        }
        None => *slot = Some(key.to_string()),
    }
}

// ---------------------------------------------------------------------------
// Aliases and merge keys, resolved as the events go by
// ---------------------------------------------------------------------------

/// The merge key (`<<: *anchor`): the YAML 1.1 merge type, which the
/// decoders of Kubernetes (sigs.k8s.io/yaml over go-yaml) and ArgoCD apply.
pub const MERGE_KEY: &str = "<<";

/// Where an alias puts an anchored node (YAML 1.2 section 3.2.2.2: an alias
/// node is the anchored node; `<<` merges a mapping's entries, the merge-key
/// type of YAML 1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    /// The path the node is read at through the alias.
    pub path: YamlPath,
    /// The alias's offset in the text (`*name`).
    pub at: usize,
    /// Through a merge key: the mapping holding `<<` and the key the merged
    /// entry brings (a key that mapping writes itself overrides it).
    pub merged: Option<(usize, String)>,
}

/// The one alias resolver every streaming reader uses (the locator, the
/// documents held in strings): fed the events beside a [`Stack`], it keeps
/// the nodes a reader records under each anchor (`T`: the reader's handle
/// for it) and says where each alias lands them.
#[derive(Debug)]
pub struct Aliases<T> {
    /// Recorded nodes by anchor id: (their path below the anchored node, the handle).
    anchors: std::collections::HashMap<usize, Vec<(Vec<Seg>, T)>>,
    /// The open anchored collections: (anchor id, stack depth).
    anchored: Vec<(usize, usize)>,
    /// The keys each mapping writes itself (by frame id), where merges may be.
    explicit: std::collections::HashMap<usize, Vec<String>>,
}

impl<T> Default for Aliases<T> {
    fn default() -> Self {
        Aliases {
            anchors: std::collections::HashMap::new(),
            anchored: Vec::new(),
            explicit: std::collections::HashMap::new(),
        }
    }
}

impl<T: Clone> Aliases<T> {
    pub fn new() -> Aliases<T> {
        Aliases::default()
    }

    /// A collection has opened (after [`Stack::open`]; `depth`: the stack's).
    pub fn open(&mut self, anchor: usize, depth: usize) {
        if anchor > 0 {
            self.anchored.push((anchor, depth));
        }
    }

    /// A collection closes (before [`Stack::close`]; `depth`: the stack's).
    pub fn close(&mut self, depth: usize) {
        while self.anchored.last().is_some_and(|&(_, d)| d >= depth) {
            self.anchored.pop();
        }
    }

    /// Whether a node read now, with its own `anchor` (0: none), is anchored
    /// or inside an anchored collection.
    pub fn anchoring(&self, anchor: usize) -> bool {
        anchor > 0 || !self.anchored.is_empty()
    }

    /// Records the node at `path` (its own `anchor`, 0: none) under its
    /// anchor and each open anchored collection's, for their aliases.
    pub fn record(&mut self, anchor: usize, path: &[Seg], item: T) {
        if anchor > 0 {
            self.anchors
                .entry(anchor)
                .or_default()
                .push((Vec::new(), item.clone()));
        }
        for &(aid, depth) in &self.anchored {
            let rel = path.get(depth - 1..).unwrap_or_default().to_vec();
            self.anchors
                .entry(aid)
                .or_default()
                .push((rel, item.clone()));
        }
    }

    /// A key the mapping `frame` writes itself (it overrides a merged one).
    pub fn key(&mut self, frame: usize, key: &str) {
        self.explicit
            .entry(frame)
            .or_default()
            .push(key.to_string());
    }

    /// An alias of `anchor` at `off`, read where `stack` stands (before
    /// [`Stack::alias`], for a value, not a key): each recorded node lands at
    /// the alias's path, or, through a merge key (`<<: *a`, `<<: [*a, *b]`),
    /// as an entry of the mapping holding it.
    pub fn land<D>(&self, anchor: usize, off: usize, stack: &Stack<D>) -> Vec<(T, Landing)> {
        let Some(nodes) = self.anchors.get(&anchor) else {
            return Vec::new();
        };
        let mut base = stack.path().0;
        let merge_key = |f: &Frame<D>| f.is_map && f.key.as_deref() == Some(MERGE_KEY);
        let merged_in = match stack.frames() {
            [.., m, s] if !s.is_map && merge_key(m) => {
                base.truncate(base.len() - 2);
                Some(m.id)
            }
            [.., m] if merge_key(m) => {
                base.pop();
                Some(m.id)
            }
            _ => None,
        };
        let mut out = Vec::new();
        for (rel, item) in nodes {
            let merged = match (merged_in, rel.first()) {
                (Some(id), Some(Seg::Key(k))) => Some((id, k.clone())),
                (Some(_), _) => continue, // a merge brings a mapping's entries only
                (None, _) => None,
            };
            let mut path = base.clone();
            path.extend(rel.iter().cloned());
            out.push((
                item.clone(),
                Landing {
                    path: YamlPath(path),
                    at: off,
                    merged,
                },
            ));
        }
        out
    }

    /// Whether a merged landing is overridden: its mapping writes the key
    /// itself (anywhere in it, before or after `<<`).
    pub fn overridden(&self, l: &Landing) -> bool {
        l.merged
            .as_ref()
            .is_some_and(|(frame, key)| self.explicit.get(frame).is_some_and(|ks| ks.contains(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go-yaml applies aliases and merge keys (YAML 1.2 section 3.2.2.2; the
    /// YAML 1.1 merge type): an alias is the anchored node, its bytes the
    /// anchor's; a merged entry gives way to the mapping's own key, and the
    /// first of several merged mappings wins.
    #[test]
    fn a_resolving_reading_applies_aliases_and_merge_keys() {
        let t = "x: &a https://h:6443
c:
  api: *a
b: &b {u: 1, v: 2}
b2: &b2 {u: 3, w: 4}
m:
  <<: [*b, *b2]
  v: own
";
        let docs = read_resolved(t).unwrap();
        let api = docs[0].at(&["c", "api"]).unwrap();
        assert_eq!(api.as_str(), Some("https://h:6443"));
        assert_eq!((api.line, api.col, api.start), (1, 7, 6));
        let m = docs[0].get("m").unwrap();
        let get = |k: &str| m.str_at(&[k]);
        assert_eq!(
            (get("u"), get("v"), get("w")),
            (Some("1"), Some("own"), Some("4"))
        );
        assert!(m.get(MERGE_KEY).is_none());
        // The plain reading keeps aliases as they are written.
        let plain = read_documents(t).unwrap();
        assert!(matches!(
            plain[0].at(&["c", "api"]).unwrap().value,
            Value::Alias(_)
        ));
    }

    /// Go's `text/template` lexer (`lex.go`, `trimMarker`): a trim marker
    /// is a `-` with white space beside it, so `{{-1}}` is the number -1.
    #[test]
    fn an_action_s_expression_drops_only_real_trim_markers() {
        fn e(t: &str) -> (&str, bool, bool) {
            let (s, e) = template_actions(t)[0];
            action_expr(t, s, e)
        }
        assert_eq!(e("{{- .Values.a -}}"), (".Values.a", true, true));
        assert_eq!(e("{{ .Values.a }}"), (".Values.a", false, false));
        assert_eq!(e("{{-\t.a\n-}}"), (".a", true, true));
        assert_eq!(e("{{-1}}"), ("-1", false, false));
        assert_eq!(e("{{ 3 -1 }}"), ("3 -1", false, false));
    }

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

    /// Helm's `tpl` of a string literal holding an action: Go's lexer
    /// (`text/template/parse/lex.go`, `lexQuote`, `lexRawQuote`) reads the
    /// string whole, escapes and all, so the outer action ends at its own
    /// `}}` and is masked whole; the masked text parses with the value a
    /// plain scalar. A `}}` after an escaped quote is still inside the
    /// string; a backslash in a raw string escapes nothing.
    #[test]
    fn a_tpl_string_literal_is_one_action_masked_whole() {
        for (action, rest) in [
            (r#"{{ tpl "{{ .Values.x }}" . }}"#, ""),
            (r#"{{ tpl "{{ .Values.x | default \"}}\" }}" . }}"#, ""),
            ("{{ tpl `{{ .Values.x }}` . }}", ""),
            (r"{{ `a\` }}", "}}"),
            (r#"{{- tpl "\"}}\\" $ -}}"#, " }}"),
        ] {
            let t = format!("server: {action}{rest}\nnamespace: n\n");
            let ranges = template_actions(&t);
            assert_eq!(ranges, vec![(8, 8 + action.len())], "{t}");
            let (m, _) = mask_templates(&t).unwrap();
            assert_eq!(m.len(), t.len());
            let docs = read_yaml_or_json(&m).unwrap();
            let server = docs[0].at(&["server"]).and_then(Node::as_str).unwrap();
            assert_eq!(server, format!("{}{rest}", "x".repeat(action.len())), "{t}");
        }
    }

    #[test]
    fn actions_are_read_as_go_lexes_them() {
        fn spans(t: &str) -> Vec<&str> {
            template_actions(t)
                .into_iter()
                .map(|(s, e)| &t[s..e])
                .collect()
        }
        // A `}}` inside a string, a raw string or a comment does not close.
        let t = r#"a: {{ printf "%s}}" .x }} b: {{ `}}` }} {{/* }} */}} {{- /* x */ -}}"#;
        assert_eq!(
            spans(t),
            vec![
                r#"{{ printf "%s}}" .x }}"#,
                "{{ `}}` }}",
                "{{/* }} */}}",
                "{{- /* x */ -}}"
            ]
        );
        // Spanning lines; inside a double-quoted YAML string (`\"`).
        let t = "s: {{ .a\n  | default \"h\" }}\nq: \"{{ default \\\"}}\\\" .b }}\"\n";
        assert_eq!(
            spans(t),
            vec!["{{ .a\n  | default \"h\" }}", "{{ default \\\"}}\\\" .b }}"]
        );
        // A string broken by a line end: no action, however many `}}`
        // follow; a later action still counts.
        assert!(spans("{{ \"a\n }} x }}").is_empty());
        assert_eq!(
            spans("n: \"open {{\"\np: \"}}\" {{ .v }}"),
            vec!["{{ .v }}"]
        );
        // Never closed: no action; a later one still counts.
        assert!(spans("a: {{ x\nb: y\n").is_empty());
        assert_eq!(spans("a: }} {{ x\nb: {{ y }}"), vec!["{{ y }}"]);
        assert!(spans("a: {{ x }").is_empty());
        // A character no action holds: a comment that merely holds `{{`.
        for t in [
            "# from {{ .Values.server\n# (see the chart); done\nx: '{{u}}'}}",
            "# {{ see #2 }}",
            "a: [{{ x ]}}",
            "a: {{ x; y }}",
            "a: {{ {x} }}",
            "a: {{ x @ y }}",
        ] {
            assert_eq!(spans(t).len(), usize::from(t.contains("'{{u}}'")), "{t}");
        }
        // Go refuses a `:` not in `:=`, a backslash outside a string, and a
        // non-ASCII character that is no letter or digit: YAML text between
        // a stray `{{` and a later `}}` is no action.
        for t in [
            "n: from {{ .Values.p\nspec:\n  server: \"h\"\n  info: docs }}",
            "a: {{ x \\ y }}",
            "a: {{ x — y }}",
            "a: {{ x : y }}",
        ] {
            assert!(spans(t).is_empty(), "{t}");
        }
        assert_eq!(spans("{{ $x := 1 }}{{ $x = 2 }}").len(), 2);
        // What an action may hold: pipes, parentheses, declarations,
        // numbers, non-ASCII names, lines.
        let t = "{{- range $k, $v := (index .Values \"a-b\") | default 1.5e3 }}{{ 이름 }}{{ -1 }}";
        assert_eq!(spans(t).len(), 3);
    }

    #[test]
    fn actions_that_write_nothing() {
        for a in [
            "{{ end }}",
            "{{- else if .x }}",
            "{{ if .a }}",
            "{{- range $k, $v := .x }}",
            "{{/* c */}}",
            "{{- /* c */ -}}",
            "{{ $x := .a }}",
            "{{ $x = 1 }}",
        ] {
            assert!(!action_renders(a), "{a}");
        }
        for a in [
            "{{ .Values.x }}",
            "{{ $x }}",
            "{{ $x | quote }}",
            "{{ include \"a\" . }}",
            "{{ ending }}",
            "{{ eq $x 1 }}",
        ] {
            assert!(action_renders(a), "{a}");
        }
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

    /// Every scalar with its path, as a reader built on [`Stack`] sees it.
    fn paths(text: &str) -> Vec<(String, bool, bool)> {
        let mut stack: Stack = Stack::new();
        let mut out = Vec::new();
        for (i, item) in Events::new(text).enumerate() {
            match item.unwrap().0 {
                Event::MappingStart(..) => stack.open(true, i, ()),
                Event::SequenceStart(..) => stack.open(false, i, ()),
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.close();
                }
                Event::Alias(..) => stack.alias(),
                Event::Scalar(v, ..) => {
                    out.push((
                        stack.path_of(&v).to_string(),
                        stack.at_key(),
                        stack.in_key(),
                    ));
                    stack.scalar(&v);
                }
                Event::DocumentStart => stack.clear(),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn the_stack_gives_paths_keys_and_complex_keys() {
        let t = "a:\n  b: [&r x, {c: y}]\n  *r : z\n  ? [k]\n  : w\n\"d.e\": v\n";
        let got = paths(t);
        let want = [
            ("a", true, false),
            ("a.b", true, false),
            ("a.b[0]", false, false),
            ("a.b[1].c", true, false),
            ("a.b[1].c", false, false),
            ("a[\"*\"]", false, false),
            // Inside a complex key the mapping's slot still holds the
            // previous key: readers mark such scalars `in_key`.
            ("a[\"*\"][0]", false, true),
            ("a[\"?\"]", false, false),
            ("[\"d.e\"]", true, false),
            ("[\"d.e\"]", false, false),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(p, k, i)| (p.to_string(), *k, *i))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn documents_read_whole_with_positions() {
        let t = "\u{feff}kind: Secret\nmeta: {name: &a 'x'}\n---\n- *a\n";
        let docs = read_documents(t).unwrap();
        assert_eq!(docs.len(), 2);
        let name = docs[0].at(&["meta", "name"]).unwrap();
        assert_eq!(
            (name.as_str(), name.line, name.col, name.start),
            (Some("x"), 2, 17, t.find("'x'").unwrap())
        );
        assert_eq!(docs[0].str_at(&["kind"]), Some("Secret"));
        assert!(
            matches!(&docs[1].value, Value::Seq(items) if matches!(items[0].value, Value::Alias(_)))
        );
        assert!(read_documents("a: [\n").is_err());
    }

    #[test]
    fn every_node_is_visited_with_its_path_and_json_reads_into_the_same_tree() {
        let yaml = "a:\n  b: [x, {c: y}]\n";
        let json = "{\"a\": {\"b\": [\"x\", {\"c\": \"\\ud83d\\ude00\"}]}}";
        let seen = |docs: Vec<Node>| {
            let mut out = Vec::new();
            docs[0].walk(&mut |p, n| {
                out.push(format!(
                    "{p}={}@{}:{}",
                    n.as_str().unwrap_or("-"),
                    n.line,
                    n.col
                ))
            });
            out
        };
        assert_eq!(
            seen(read_documents(yaml).unwrap()),
            [
                "=-@1:1",
                "a=-@2:3",
                "a.b=-@2:6",
                "a.b[0]=x@2:7",
                "a.b[1]=-@2:10",
                "a.b[1].c=y@2:14"
            ]
        );
        assert!(read_documents(json).is_err());
        assert_eq!(
            seen(read_yaml_or_json(json).unwrap()),
            [
                "=-@1:1",
                "a=-@1:7",
                "a.b=-@1:13",
                "a.b[0]=x@1:14",
                "a.b[1]=-@1:19",
                "a.b[1].c=\u{1f600}@1:25"
            ]
        );
        assert!(read_yaml_or_json("{\"a\": \"\\ud83d\"}").is_err());
    }
}
