//! The one reading of a Helm template action's expression (Go's
//! text/template with Sprig, as Helm runs it): the words of a pipeline,
//! Go string literals and Go's `%q`, the table of keywords and functions,
//! an operand's shape, a `.Values` path, and Go's truth of a YAML value.
//!
//! The actions themselves are cut from the text by the one lexer
//! ([`super::yaml::template_actions`], [`super::yaml::action_expr`]).
//! Discovery's symbolic follower (`find::templates`) and the after-merge
//! renderer (`review::rendered`) both read expressions here: what one
//! follows, the other reads the same way.

use super::yaml::{Node, Value};
use yaml_rust2::scanner::TScalarStyle;

/// Splits an expression into words (Go template tokens): a string literal
/// (`"..."` with Go's escapes, a raw `` `...` ``, a `'c'` character) and a
/// parenthesised group are one word each, `|` outside parentheses is a word
/// of its own, white space separates the rest.
pub fn words(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in expr.chars() {
        if let Some(q) = quote {
            cur.push(c);
            // Go's escapes inside "..." and '...' (a raw `...` has none).
            if escaped {
                escaped = false;
            } else if c == '\\' && q != '`' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' | '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            '(' | ')' => {
                depth += if c == '(' { 1 } else { -1 };
                cur.push(c);
            }
            c if depth == 0 && (c == '|' || c.is_whitespace()) => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                if c == '|' {
                    out.push("|".into());
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The commands of a pipeline: its words cut at each `|`.
pub fn commands(words: &[String]) -> impl Iterator<Item = &[String]> {
    words.split(|w| w == "|")
}

/// The first word of an action.
pub fn head(expr: &str) -> &str {
    expr.split_whitespace().next().unwrap_or("")
}

/// Whether an action is a comment (`{{/* ... */}}`).
pub fn is_comment(expr: &str) -> bool {
    expr.starts_with("/*")
}

/// Go's control keywords (text/template, "Actions") that render nothing
/// where they stand, and those that run a named template there.
const SILENT: &str = "if else range with end define break continue";
const RUNS: &str = "template block";

/// Whether a word is one of Go's control keywords.
pub fn is_keyword(w: &str) -> bool {
    SILENT.split(' ').chain(RUNS.split(' ')).any(|k| k == w)
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
    is_comment(action_body(action))
}

/// Whether the action `action` (`{{ ... }}`) writes text where it stands:
/// not a comment, a keyword that renders nothing (`if`, `end`, `range`,
/// ..., all but `template` and `block`) or a
/// variable's assignment.
pub fn action_renders(action: &str) -> bool {
    let inner = action_body(action);
    if is_comment(inner) {
        return false;
    }
    let word_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(inner.len());
    let (word, rest) = inner.split_at(word_end);
    if SILENT.split(' ').any(|k| k == word) {
        return false;
    }
    let rest = rest.trim_start();
    let assigns = rest.starts_with(":=") || (rest.starts_with('=') && !rest.starts_with("=="));
    !(word.starts_with('$') && assigns)
}

/// Whether an action opens a block that an `end` closes.
pub fn opens(expr: &str) -> bool {
    matches!(head(expr), "if" | "with" | "range" | "define" | "block")
}

/// The variables an action declares and the pipeline after them:
/// `range $i, $e := X` (the words): `["$i", "$e"]` and `X`; `with X`:
/// none and `X`.
pub fn bindings(w: &[String]) -> (Vec<String>, &[String]) {
    match w.iter().position(|x| x == ":=") {
        Some(p) => {
            let vars = w[1..p].join(" ");
            let vars = vars.split(',').map(|v| v.trim().to_string());
            (vars.filter(|v| !v.is_empty()).collect(), &w[p + 1..])
        }
        None => (Vec::new(), w.get(1..).unwrap_or(&[])),
    }
}

/// A string literal's text between its quotes, as written (escapes kept);
/// anything else as it is.
pub fn unquote(w: &str) -> &str {
    let w = w.trim();
    for q in ['"', '`'] {
        if let Some(s) = w.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return s;
        }
    }
    w
}

/// Go's escapes by a letter (the Go spec, "Rune literals"), both ways.
const ESCAPES: [(char, char); 7] = [
    ('a', '\u{7}'),
    ('b', '\u{8}'),
    ('f', '\u{c}'),
    ('n', '\n'),
    ('r', '\r'),
    ('t', '\t'),
    ('v', '\u{b}'),
];

/// The value of a Go string literal: a raw string (`` `...` ``) as
/// written, an interpreted one (`"..."`) with its escapes decoded (the
/// single-character escapes of the Go spec, "String literals"); `None` for
/// anything else, or an escape by code (`\x41`, `\u00e9`, octal).
pub fn go_string(w: &str) -> Option<String> {
    let w = w.trim();
    if let Some(raw) = w.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        return Some(raw.to_string());
    }
    let body = w.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match ESCAPES.iter().find(|(letter, _)| *letter == e) {
            Some((_, c)) => out.push(*c),
            None if matches!(e, '\\' | '"') => out.push(e),
            None => return None,
        }
    }
    Some(out)
}

/// Whether a word is a constant: a string or character literal, a number,
/// `true`, `false`, `nil`.
pub fn is_literal(w: &str) -> bool {
    w.starts_with('"')
        || w.starts_with('`')
        || w.starts_with('\'')
        || w.parse::<f64>().is_ok()
        || matches!(w, "true" | "false" | "nil")
}

/// Go's `%q` of a string (`strconv.Quote`, what Sprig's `quote` writes):
/// `"` and `\` escaped, the control characters Go names (`\n`, `\t`, ...)
/// and the other ASCII ones (`\x01`) escaped, printable ASCII, letters and
/// digits as written. `None` for another character (a mark, a symbol, a
/// space other than ASCII's), whose escaping depends on Go's Unicode tables.
pub fn go_quote(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        let named = ESCAPES.iter().find(|(_, x)| *x == c).map(|(e, _)| *e);
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ if named.is_some() => {
                out.push('\\');
                out.extend(named);
            }
            c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_alphanumeric() => out.push(c),
            _ => return None,
        }
    }
    out.push('"');
    Some(out)
}

/// Go's `fmt.Sprintf` of string arguments, for the verbs `%s`, `%v` and
/// `%%` only (`None` for any other verb, a width, or a count that does not
/// match).
pub fn sprintf(format: &str, args: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '%' => out.push('%'),
            's' | 'v' => out.push_str(args.next()?),
            _ => return None,
        }
    }
    args.next().is_none().then_some(out)
}

/// Functions whose result is their (last) argument's value, as far as a
/// cluster position is concerned.
pub fn keeps_value(f: &str) -> bool {
    const KEEPS: &str = "quote squote default required toString trim trimSuffix trimPrefix \
        trimAll lower upper print toYaml nindent indent";
    KEEPS.split(' ').any(|k| k == f)
}

/// The Sprig functions that pass one of their arguments through (or an
/// element or key of one): `ternary`, `get`, `pluck`, `first`, `last`.
pub fn passes_value(f: &str) -> bool {
    matches!(f, "ternary" | "get" | "pluck" | "first" | "last")
}

/// A command of a pipeline applied to a string, for the functions that
/// write one string from another exactly: `quote` (Go's `%q`,
/// [`go_quote`]), `squote` (Sprig: `'...'`, nothing escaped), `trim` (white
/// space off both ends), `toString`. `None` for any other command, or a
/// string `quote` does not follow.
pub fn string_function(command: &[String], s: String) -> Option<String> {
    match command {
        [f] if f == "quote" => go_quote(&s),
        [f] if f == "squote" => Some(format!("'{s}'")),
        [f] if f == "trim" => Some(s.trim().to_string()),
        [f] if f == "toString" => Some(s),
        _ => None,
    }
}

/// What an operand is, by its shape.
#[derive(Debug, PartialEq, Eq)]
pub enum Operand<'w> {
    /// A field chain of the dot: `.` (no keys), `.a.b`.
    Dot(Vec<&'w str>),
    /// A variable and a field chain of it: `$x.a` (`x`, `[a]`), `$.a`
    /// (the root, `""`).
    Var(&'w str, Vec<&'w str>),
    /// A parenthesised pipeline and a field chain after it: `(f .x).a`.
    Group(&'w str, Vec<&'w str>),
    /// A `(` that is not closed.
    Unclosed,
    /// A constant ([`is_literal`]).
    Literal,
    /// Anything else: a function's name, a word Go would refuse.
    Other,
}

/// The shape of one word of a command.
pub fn operand(w: &str) -> Operand<'_> {
    if let Some(group) = w.strip_prefix('(') {
        return match group.rfind(')') {
            Some(close) => Operand::Group(&group[..close], fields(&group[close + 1..])),
            None => Operand::Unclosed,
        };
    }
    if is_literal(w) {
        return Operand::Literal;
    }
    if w == "." {
        return Operand::Dot(Vec::new());
    }
    if let Some(rest) = w.strip_prefix('.') {
        return Operand::Dot(rest.split('.').collect());
    }
    if let Some(rest) = w.strip_prefix('$') {
        let (name, keys) = rest.split_once('.').unwrap_or((rest, ""));
        return Operand::Var(name, fields(keys));
    }
    Operand::Other
}

/// The keys of a field chain (`a.b`, `.a.b`), empty ones left out.
fn fields(chain: &str) -> Vec<&str> {
    chain.split('.').filter(|k| !k.is_empty()).collect()
}

/// The keys below `.Values` of a `.Values.a.b` (or `$.Values.a.b`)
/// operand read at the chart's root, when each is a Go identifier.
pub fn values_keys(w: &str) -> Option<Vec<&str>> {
    let keys = match operand(w) {
        Operand::Dot(k) | Operand::Var("", k) => k,
        _ => return None,
    };
    let (first, rest) = keys.split_first()?;
    let ident = |k: &&str| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_');
    (*first == "Values" && !rest.is_empty() && rest.iter().all(ident)).then(|| rest.to_vec())
}

/// Go template truth of a value read from YAML (text/template, "if"):
/// an empty mapping, list or string is false, and so are the plain
/// scalars `false`, `0` (any number equal to zero), `null` and `~`; a
/// quoted scalar is a string. `None` when the YAML readings differ on
/// the value (Helm reads values as YAML 1.1: `no`, `off`, `y`, `0x0`,
/// `0o7`, `1_000` may be booleans or numbers there and strings here): not
/// known.
pub fn truthy(node: &Node) -> Option<bool> {
    match &node.value {
        Value::Map(m) => Some(!m.is_empty()),
        Value::Seq(s) => Some(!s.is_empty()),
        Value::Scalar(s, style) => {
            if s.is_empty() {
                return Some(false);
            }
            if !matches!(style, TScalarStyle::Plain) {
                return Some(true);
            }
            let lower = s.to_ascii_lowercase();
            match lower.as_str() {
                "true" => Some(true),
                "false" | "null" | "~" => Some(false),
                "yes" | "no" | "on" | "off" | "y" | "n" => None,
                _ if lower.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
                    && lower.contains(['x', 'o', 'b', '_', ':']) =>
                {
                    None
                }
                _ => Some(lower.parse::<f64>() != Ok(0.0)),
            }
        }
        _ => Some(false),
    }
}
