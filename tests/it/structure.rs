//! The shape of the source: no function in `src/` is longer than a reader
//! takes in at once (about 100 lines). Tables are `const`/`static` items,
//! not functions, so they are never counted; a function that must stay
//! longer is named in [`ALLOWED`] with its reason.

use std::path::{Path, PathBuf};

/// The longest function body, in lines (from the `fn` line to its closing
/// brace, both included).
const MAX_LINES: usize = 100;

/// Functions allowed over [`MAX_LINES`]: (file, function, why).
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    name: String,
    /// 1-based line of the `fn` keyword.
    line: usize,
    /// Lines from the `fn` keyword to the closing brace, both included.
    lines: usize,
}

#[test]
fn no_function_in_src_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 10, "the source tree was not found: {files:?}");
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for f in functions(&text) {
            let excused = ALLOWED
                .iter()
                .map(|(file, name, _)| (file, name))
                .any(|(file, name)| *file == shown && *name == f.name);
            if f.lines > MAX_LINES && !excused {
                long.push(format!(
                    "{shown}:{}: fn {} is {} lines (at most {MAX_LINES})",
                    f.line, f.name, f.lines
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines; split them along what they do:\n{}",
        long.join("\n")
    );
}

/// Every entry of the allow-lists names a function that exists and is
/// still over the limit: a stale entry would hide the next long function
/// of that name.
#[test]
fn the_allow_lists_name_long_functions_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = ALLOWED.iter().map(|(file, name, why)| {
        assert!(!why.trim().is_empty(), "{file} {name}: no reason given");
        (file, name)
    });
    for (file, name) in entries {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let found = functions(&text)
            .into_iter()
            .any(|f| f.name == *name && f.lines > MAX_LINES);
        assert!(
            found,
            "{file}: fn {name} is listed but not over {MAX_LINES} lines"
        );
    }
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every `fn` with a body in `text`, nested ones included (a `fn $name`
/// inside `macro_rules!` is a template, not a function, and is left out).
fn functions(text: &str) -> Vec<Function> {
    let code = mask(text);
    let line_of = |i: usize| code[..i].iter().filter(|&&c| c == '\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = find_word(&code, i, "fn") {
        i = at + 2;
        let Some((name, after)) = name_after(&code, i) else {
            continue; // a function pointer type: `fn(usize) -> bool`
        };
        let Some(open) = body_start(&code, after) else {
            continue; // a declaration without a body
        };
        let Some(close) = matching_brace(&code, open) else {
            continue;
        };
        out.push(Function {
            name,
            line: line_of(at),
            lines: line_of(close) - line_of(at) + 1,
        });
    }
    out
}

/// The source with the contents of comments, strings and character
/// literals blanked (newlines kept), so that only code's braces remain.
pub fn mask(text: &str) -> Vec<char> {
    let src: Vec<char> = text.chars().collect();
    let mut out = src.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(src.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < src.len() {
        let end = match src[i] {
            '/' if src.get(i + 1) == Some(&'/') => line_comment_end(&src, i),
            '/' if src.get(i + 1) == Some(&'*') => block_comment_end(&src, i),
            '"' => string_end(&src, i),
            'r' if starts_raw_string(&src, i) => raw_string_end(&src, i),
            '\'' => match char_literal_end(&src, i) {
                Some(end) => end,
                None => i + 1, // a lifetime or a label
            },
            c if is_ident(c) => {
                // Skip the whole word, so that `r` inside `for"` or a `b`
                // prefix is never read as the start of a raw string.
                let mut j = i;
                while j < src.len() && is_ident(src[j]) && !starts_raw_string(&src, j) {
                    j += 1;
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        blank(&mut out, i, end);
        i = end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn line_comment_end(src: &[char], i: usize) -> usize {
    src[i..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(src.len(), |p| i + p)
}

/// Block comments nest in Rust.
fn block_comment_end(src: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < src.len() {
        match (src[i], src.get(i + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    src.len()
}

/// `"..."` with backslash escapes (a `b`/`c` prefix stays outside).
fn string_end(src: &[char], mut i: usize) -> usize {
    i += 1;
    while i < src.len() {
        match src[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    src.len()
}

/// `r"`, `r#"`, `br##"`, ...: an `r` that starts a word (or follows the
/// `b`/`c` prefix that starts one), then hashes, then a quote.
fn starts_raw_string(src: &[char], i: usize) -> bool {
    if src[i] != 'r' {
        return false;
    }
    let word_start = match i.checked_sub(1).map(|p| src[p]) {
        None => true,
        Some('b' | 'c') => i < 2 || !is_ident(src[i - 2]),
        Some(c) => !is_ident(c),
    };
    let hashes = src[i + 1..].iter().take_while(|&&c| c == '#').count();
    word_start && src.get(i + 1 + hashes) == Some(&'"')
}

fn raw_string_end(src: &[char], i: usize) -> usize {
    let hashes = src[i + 1..].iter().take_while(|&&c| c == '#').count();
    let mut j = i + 1 + hashes + 1;
    while j < src.len() {
        if src[j] == '"'
            && src[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return j + 1 + hashes;
        }
        j += 1;
    }
    src.len()
}

/// The end of a character literal at `i` (`'x'`, `'\n'`, `'\u{1F600}'`),
/// or `None` for a lifetime or a loop label (`'a`, `'outer:`).
fn char_literal_end(src: &[char], i: usize) -> Option<usize> {
    match src.get(i + 1)? {
        '\\' => {
            // The escaped character, then the closing quote.
            let close = src.get(i + 3..)?.iter().position(|&c| c == '\'')?;
            Some(i + 3 + close + 1)
        }
        _ if src.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// The next occurrence of the keyword `word` at or after `from`.
fn find_word(code: &[char], from: usize, word: &str) -> Option<usize> {
    let w: Vec<char> = word.chars().collect();
    (from..code.len().saturating_sub(w.len() - 1)).find(|&i| {
        code[i..i + w.len()] == w[..]
            && (i == 0 || !is_ident(code[i - 1]))
            && code.get(i + w.len()).is_none_or(|&c| !is_ident(c))
    })
}

/// The function's name after the `fn` keyword, and where it ends.
fn name_after(code: &[char], mut i: usize) -> Option<(String, usize)> {
    while code.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    if code.get(i..i + 2) == Some(&['r', '#'][..]) {
        i += 2; // a raw identifier: `fn r#match`
    }
    let start = i;
    while code.get(i).is_some_and(|&c| is_ident(c)) {
        i += 1;
    }
    (i > start).then(|| (code[start..i].iter().collect(), i))
}

/// The opening brace of the body: the first `{` outside the signature's
/// parentheses and brackets, unless a `;` ends the declaration first.
fn body_start(code: &[char], mut i: usize) -> Option<usize> {
    let mut depth = 0i32;
    while i < code.len() {
        match code[i] {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' if depth == 0 => return Some(i),
            ';' if depth == 0 => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

fn matching_brace(code: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

// The counter itself: braces in strings, characters and comments are not
// code, and a function over the limit is found.

fn lengths(text: &str) -> Vec<(String, usize)> {
    functions(text)
        .into_iter()
        .map(|f| (f.name, f.lines))
        .collect()
}

#[test]
fn braces_in_strings_chars_and_comments_are_not_counted() {
    let text = r####"
fn a() {
    let s = "}}} \" }";
    let r = r#"}" }"#;
    let b = br##"}"# }"##;
    let c = '}';
    let e = '\'';
    let u = '\u{7D}';
    // }
    /* } /* nested } */ } */
    let t = format!("{{{{ .x }}}}\n\
        }}}} {{");
}
fn b<'a>(x: &'a str) -> &'a str {
    'outer: loop { break 'outer; }
    x
}
"####;
    assert_eq!(lengths(text), [("a".to_string(), 12), ("b".to_string(), 4)]);
}

#[test]
fn signatures_pointers_and_declarations() {
    let text = "
trait T {
    fn declared(&self, x: [u8; 4]) -> usize;
    fn provided(&self) -> [u8; 2] {
        [0; 2]
    }
}
fn takes(f: fn(usize) -> bool, g: impl Fn(&str) -> Option<u8>) -> bool
where
    usize: Copy,
{
    let _ = g;
    f(1)
}
fn r#match() {}
fn bar() { let for_r = 1; let _ = for_r; }
";
    assert_eq!(
        lengths(text),
        [
            ("provided".to_string(), 3),
            ("takes".to_string(), 7),
            ("match".to_string(), 1),
            ("bar".to_string(), 1),
        ]
    );
}

#[test]
fn a_function_over_the_limit_is_found() {
    let body: String = (0..MAX_LINES - 1)
        .map(|n| format!("    let _{n} = {n};\n"))
        .collect();
    let text = format!("fn long() {{\n{body}}}\nfn fits() {{\n}}\n");
    let found = lengths(&text);
    assert_eq!(
        found,
        [("long".to_string(), MAX_LINES + 1), ("fits".to_string(), 2)]
    );
}

#[test]
fn tests_start_the_binary_only_through_the_common_builder() {
    // One builder (`common::command`, `common::rebind`, `common::binary`)
    // knows how a test runs rebind; a test that builds its own command
    // drifts from it (colour, stdin).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let needle = concat!("CARGO_BIN_EXE", "_rebind");
    let found: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("common/mod.rs"))
        .filter(|f| std::fs::read_to_string(f).unwrap().contains(needle))
        .map(|f| f.display().to_string())
        .collect();
    assert!(found.is_empty(), "use common::command() instead: {found:?}");
}
