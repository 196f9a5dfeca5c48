//! Rendering planned rewrites as unified diffs (`--- a/path` / `+++ b/path`),
//! optionally coloured for a terminal.

use crate::edit::rewrite::FilePlan;
use similar::TextDiff;

const CONTEXT: usize = 3;

/// The unified diff of one planned file, three lines of context.
///
/// Lines are what YAML counts as lines (and what every `line:column` rebind
/// prints refers to): a line ends after `\n`, `\r\n` or a lone `\r`, and each
/// diff line carries its own terminator as written, so a lone-CR file gets one
/// diff line per line too.
///
/// An endpoint swap never adds or removes a line, so only windows around the
/// changed lines are diffed (with `similar`), and their hunk headers are moved
/// to the file's line numbers: the cost follows the change, not the file.
pub fn unified(plan: &FilePlan) -> String {
    // Every line a change spans (a base64 value re-encoded whole may span many).
    let mut lines: Vec<usize> = plan
        .changes
        .iter()
        .flat_map(|o| {
            let spans = plan
                .old
                .get(o.found.start..o.found.end)
                .map_or(0, |t| line_ends(t).count());
            o.line..=o.line + spans
        })
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let same_shape = line_ends(&plan.old).count() == line_ends(&plan.new).count();
    if lines.is_empty() || !same_shape {
        return whole(plan);
    }
    let mut out = header(&name_bytes(plan));
    let windows = windows(&lines);
    let olds = line_spans(&plan.old, &windows);
    let news = line_spans(&plan.new, &windows);
    for (((first, _), old), new) in windows.iter().zip(olds).zip(news) {
        let diff = TextDiff::from_lines(old, new);
        let mut udiff = diff.unified_diff();
        udiff.context_radius(CONTEXT);
        for hunk in udiff.iter_hunks() {
            let text = hunk.to_string();
            let (header, body) = text.split_once('\n').unwrap_or((&text, ""));
            out.push_str(&shift_header(header, first - 1));
            out.push('\n');
            out.push_str(body);
        }
    }
    out
}

fn whole(plan: &FilePlan) -> String {
    let diff = TextDiff::from_lines(&*plan.old, &*plan.new);
    let mut udiff = diff.unified_diff();
    udiff.context_radius(CONTEXT);
    let mut out = String::new();
    for hunk in udiff.iter_hunks() {
        if out.is_empty() {
            out = header(&name_bytes(plan));
        }
        out.push_str(&hunk.to_string());
    }
    out
}

/// The bytes of the file's name as shown (`plan.rel`): the name the file
/// system holds when it is not UTF-8 (`rel` then holds U+FFFD in its place),
/// so that the header names the file `git apply` will find.
fn name_bytes(plan: &FilePlan) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    if !plan.rel.contains('\u{FFFD}') || plan.path.to_str().is_some() {
        return plan.rel.as_bytes().to_vec();
    }
    // `rel` ends with the last components of the path (its first ones may
    // be spelt otherwise: `../`, a PATH as typed).
    let shown: Vec<&str> = plan.rel.split('/').collect();
    let raw: Vec<&[u8]> = plan
        .path
        .components()
        .map(|c| c.as_os_str().as_bytes())
        .collect();
    let n = shown.len().min(raw.len());
    let mut out: Vec<u8> = shown[..shown.len() - n].join("/").into_bytes();
    for part in &raw[raw.len() - n..] {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(part);
    }
    out
}

/// The `---`/`+++` lines for a file, with its name written the way git writes
/// it: `a/<name>`, C-quoted (`"a/na\nme"`) when the name holds a control
/// character, `"`, `\\` or bytes that are not UTF-8 (as octal escapes, which
/// `git apply` reads back), and followed by a tab when it holds a space (so
/// the name's end is unambiguous). Non-ASCII characters of a UTF-8 name are
/// kept as they are (git with `core.quotePath=false`).
fn header(name: &[u8]) -> String {
    format!(
        "--- {}\n+++ {}\n",
        header_name(b"a/", name),
        header_name(b"b/", name)
    )
}

fn header_name(prefix: &[u8], rel: &[u8]) -> String {
    let name = [prefix, rel].concat();
    let utf8 = std::str::from_utf8(&name).is_ok();
    let needs_quotes = !utf8
        || name
            .iter()
            .any(|&c| c == b'"' || c == b'\\' || c < 0x20 || c == 0x7f);
    let mut out = if needs_quotes {
        let mut q = String::with_capacity(name.len() + 8);
        q.push('"');
        for chunk in name.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '\x07' => q.push_str("\\a"),
                    '\x08' => q.push_str("\\b"),
                    '\t' => q.push_str("\\t"),
                    '\n' => q.push_str("\\n"),
                    '\x0b' => q.push_str("\\v"),
                    '\x0c' => q.push_str("\\f"),
                    '\r' => q.push_str("\\r"),
                    '"' => q.push_str("\\\""),
                    '\\' => q.push_str("\\\\"),
                    c if (c as u32) < 0x20 || c == '\x7f' => {
                        q.push_str(&format!("\\{:03o}", c as u32));
                    }
                    c => q.push(c),
                }
            }
            for b in chunk.invalid() {
                q.push_str(&format!("\\{b:03o}"));
            }
        }
        q.push('"');
        q
    } else {
        String::from_utf8_lossy(&name).into_owned()
    };
    if out.contains(' ') {
        out.push('\t');
    }
    out
}

/// Byte offsets just after each line break of `text`: `\n`, `\r\n`, lone `\r`
/// (the line model of `locate::LineIndex`).
fn line_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    b.iter().enumerate().filter_map(move |(i, &c)| match c {
        b'\n' => Some(i + 1),
        b'\r' if b.get(i + 1) != Some(&b'\n') => Some(i + 1),
        _ => None,
    })
}

/// Merged 1-based line windows of `CONTEXT` lines around each changed line.
fn windows(lines: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &l in lines {
        let (a, b) = (l.saturating_sub(CONTEXT).max(1), l + CONTEXT);
        match out.last_mut() {
            Some(w) if a <= w.1 + 1 => w.1 = w.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The text of each window of lines `(first, last)` (1-based, sorted, not
/// overlapping; clipped at the end of the text), in one pass over `text`.
fn line_spans<'a>(text: &'a str, windows: &[(usize, usize)]) -> Vec<&'a str> {
    // Line n (1-based) spans starts[n-1]..starts[n] (or the end of the text).
    let mut starts = vec![0];
    let last_wanted = windows.last().map_or(0, |w| w.1);
    for e in line_ends(text) {
        if starts.len() > last_wanted {
            break;
        }
        starts.push(e);
    }
    let at = |n: usize| starts.get(n).copied().unwrap_or(text.len());
    windows
        .iter()
        .map(|&(first, last)| &text[at(first - 1).min(text.len())..at(last)])
        .collect()
}

/// Moves a hunk header `@@ -a[,b] +c[,d] @@` down by `by` lines.
fn shift_header(header: &str, by: usize) -> String {
    let shift = |range: &str| -> String {
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (range, None),
        };
        let start = start
            .parse::<usize>()
            .map_or(start.to_string(), |n| (n + by).to_string());
        match len {
            Some(l) => format!("{start},{l}"),
            None => start,
        }
    };
    let inner = header.trim_start_matches("@@ ").trim_end_matches(" @@");
    match inner.split_once(' ') {
        Some((old, new)) => format!(
            "@@ -{} +{} @@",
            shift(old.trim_start_matches('-')),
            shift(new.trim_start_matches('+'))
        ),
        None => header.to_string(),
    }
}

/// What a reviewer reads of the base64 values among `changes` (a file's
/// planned changes, `old` its text), since nobody reads base64: for each
/// value rewritten by re-encoding, where it is, then each decoded endpoint
/// before (`-`) and after (`+`), alone and with any password hidden: the
/// decoded text around it may hold a token or control characters, and this
/// text reaches reviews and pull requests. Every line starts with `#`,
/// after a diff's hunks, where `patch` and `git apply` skip it. Empty
/// without base64.
pub fn decoded_changes(
    rel: &str,
    old: &str,
    changes: &[crate::find::locate::Occurrence],
    to: &crate::text::endpoint::Endpoint,
) -> String {
    let mut out = String::new();
    let encoded = changes
        .iter()
        .filter(|c| c.encoding == Some(crate::find::locate::Encoding::Base64));
    let mut groups: Vec<Vec<&crate::find::locate::Occurrence>> = Vec::new();
    for c in encoded {
        match groups.last_mut() {
            Some(g)
                if g[0].escaped.as_ref().map(|e| &e.inner)
                    == c.escaped.as_ref().map(|e| &e.inner) =>
            {
                g.push(c)
            }
            _ => groups.push(vec![c]),
        }
    }
    for group in groups {
        let first = group[0];
        let Some(inner) = first.escaped.as_ref().map(|e| e.inner.clone()) else {
            continue;
        };
        let body: Vec<&str> = old[inner].split_ascii_whitespace().collect();
        let Some(decoded) = crate::find::embedded::decoded_value(&body.join("\n")) else {
            continue;
        };
        let path = first.yaml_path.as_deref().unwrap_or("");
        let path = path.split(" > ").next().unwrap_or(path);
        out.push_str(&format!(
            "# {rel}:{}:{}: {path}, decoded:\n",
            first.line, first.column
        ));
        for c in group {
            let Some(f) = c.escaped.as_ref().map(|e| &e.found) else {
                continue;
            };
            // The endpoint alone, its password hidden: the decoded text
            // around it may hold a token, and control characters.
            let Some(old_text) = decoded.get(f.start..f.replace_end) else {
                continue;
            };
            let new = f.replacement(to);
            out.push_str(&format!(
                "#   - {}\n",
                crate::text::endpoint::redact(old_text)
            ));
            out.push_str(&format!("#   + {}\n", crate::text::endpoint::redact(&new)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(old: &str, new: &str) -> FilePlan {
        FilePlan {
            path: "x.yaml".into(),
            rel: "apps/x.yaml".into(),
            old: old.into(),
            new: new.into(),
            changes: vec![],
            is_config: false,
        }
    }

    #[test]
    fn unified_has_headers_and_no_newline_hint() {
        let d = unified(&plan("a: 1\nb: old", "a: 1\nb: new"));
        assert_eq!(
            d,
            "--- a/apps/x.yaml\n+++ b/apps/x.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: old\n\\ No newline at end of file\n+b: new\n\\ No newline at end of file\n"
        );
    }

    /// An occurrence placed on `line` (only the line matters to the diff).
    fn occurrence_at(line: usize) -> crate::find::locate::Occurrence {
        let t = "https://0123456789abcdef0123456789abcdef.gr7.us-east-1.eks.amazonaws.com";
        let mut o = crate::find::locate::locate_text(t, &[])
            .occurrences
            .remove(0);
        o.line = line;
        o
    }

    #[test]
    fn windowed_diff_equals_whole_file_diff() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        for changed in [
            vec![1],
            vec![2, 9],
            vec![5, 12, 13],
            vec![20, 40],
            vec![38, 39, 40],
        ] {
            let mut new = old.clone();
            for l in &changed {
                new = new.replace(&format!("line {l}\n"), &format!("LINE {l}\n"));
            }
            for missing_final_newline in [false, true] {
                let (o, n) = if missing_final_newline {
                    (old.trim_end().to_string(), new.trim_end().to_string())
                } else {
                    (old.clone(), new.clone())
                };
                let mut p = plan(&o, &n);
                p.changes = changed.iter().map(|&l| occurrence_at(l)).collect();
                assert_eq!(unified(&p), whole(&p), "lines {changed:?}");
            }
        }
    }

    #[test]
    fn lone_cr_file_gets_a_hunk_at_its_line() {
        let old = "a: 1\rb: old\rc: 3\rd: 4\re: 5\rf: 6\rg: 7\r";
        let new = old.replace("old", "new");
        let mut p = plan(old, &new);
        p.changes = vec![occurrence_at(2)];
        let d = unified(&p);
        assert_eq!(
            d,
            "--- a/apps/x.yaml\n+++ b/apps/x.yaml\n@@ -1,5 +1,5 @@\n a: 1\r-b: old\r+b: new\r c: 3\r d: 4\r e: 5\r"
        );
        assert_eq!(d, whole(&p));
    }

    #[test]
    fn windowed_diff_equals_whole_file_diff_for_every_line_break() {
        for br in ["\n", "\r\n", "\r"] {
            let old: String = (1..=30).map(|i| format!("line {i}{br}")).collect();
            let new = old
                .replace(&format!("line 7{br}"), &format!("LINE 7{br}"))
                .replace(&format!("line 30{br}"), &format!("LINE 30{br}"));
            let mut p = plan(&old, &new);
            p.changes = vec![occurrence_at(7), occurrence_at(30)];
            let d = unified(&p);
            assert_eq!(d, whole(&p), "{br:?}");
            assert_eq!(d.matches("@@ -").count(), 2, "{br:?}");
        }
    }

    #[test]
    fn odd_file_names_are_quoted_like_git() {
        let mut p = plan("a\n", "b\n");
        p.rel = "apps/na\nme \"q\"\\x\x01.yaml".into();
        let d = unified(&p);
        assert!(
            d.starts_with(
                "--- \"a/apps/na\\nme \\\"q\\\"\\\\x\\001.yaml\"\t\n+++ \"b/apps/na\\nme "
            ),
            "{d}"
        );
        assert_eq!(d.lines().filter(|l| l.starts_with("---")).count(), 1);
        let h = |rel: &str| header_name(b"a/", rel.as_bytes());
        assert_eq!(h("plain/한글.yaml"), "a/plain/한글.yaml");
        assert_eq!(h("with space.yaml"), "a/with space.yaml\t");
        assert_eq!(h("tab\t.yaml"), "\"a/tab\\t.yaml\"");
        // Bytes that are not UTF-8: octal, as git writes them.
        assert_eq!(
            header_name(b"a/", b"apps/bad\xffname-\xed\x95\x9c.yaml"),
            "\"a/apps/bad\\377name-한.yaml\""
        );
    }
}
