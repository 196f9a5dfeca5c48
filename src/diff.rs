//! Rendering planned rewrites as unified diffs (`--- a/path` / `+++ b/path`),
//! optionally coloured for a terminal.

use crate::rewrite::FilePlan;
use similar::TextDiff;

const CONTEXT: usize = 3;

/// The unified diff of one planned file, three lines of context.
///
/// An endpoint swap never adds or removes a line, so only windows around the
/// changed lines are diffed (with `similar`), and their hunk headers are moved
/// to the file's line numbers: the cost follows the change, not the file.
pub fn unified(plan: &FilePlan) -> String {
    let mut lines: Vec<usize> = plan.changes.iter().map(|o| o.line).collect();
    lines.dedup();
    let same_shape = plan.old.matches('\n').count() == plan.new.matches('\n').count();
    if lines.is_empty() || !same_shape {
        return whole(plan);
    }
    let mut out = format!("--- a/{}\n+++ b/{}\n", plan.rel, plan.rel);
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
    TextDiff::from_lines(&*plan.old, &*plan.new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{}", plan.rel), &format!("b/{}", plan.rel))
        .to_string()
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
    let mut out = Vec::with_capacity(windows.len());
    let mut w = windows.iter().peekable();
    let mut start = None;
    let mut line = 1;
    if let Some(&&(1, _)) = w.peek() {
        start = Some(0);
    }
    for (i, b) in text.bytes().enumerate() {
        if b != b'\n' {
            continue;
        }
        line += 1;
        let Some(&&(first, last)) = w.peek() else {
            break;
        };
        if line == first {
            start = Some(i + 1);
        }
        if line == last + 1 {
            out.push(&text[start.take().unwrap_or(i + 1)..=i]);
            w.next();
            if let Some(&&(f, _)) = w.peek() {
                if f == line {
                    start = Some(i + 1);
                }
            }
        }
    }
    if w.peek().is_some() {
        out.push(&text[start.unwrap_or(text.len())..]);
    }
    out
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

/// Adds ANSI colours to a unified diff: removals red, additions green, hunk
/// headers cyan, file headers bold.
pub fn colorize(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + 64);
    for line in diff.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let code = if body.starts_with("---") || body.starts_with("+++") {
            "1"
        } else if body.starts_with('-') {
            "31"
        } else if body.starts_with('+') {
            "32"
        } else if body.starts_with("@@") {
            "36"
        } else {
            out.push_str(line);
            continue;
        };
        out.push_str(&format!("\x1b[{code}m{body}\x1b[0m{nl}"));
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
    fn occurrence_at(line: usize) -> crate::locate::Occurrence {
        let t = "https://0123456789abcdef0123456789abcdef.gr7.us-east-1.eks.amazonaws.com";
        let mut o = crate::locate::locate_text(t, &[]).occurrences.remove(0);
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
    fn colorize_marks_lines() {
        let c = colorize("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n");
        assert!(c.contains("\x1b[31m-old\x1b[0m\n"));
        assert!(c.contains("\x1b[32m+new\x1b[0m\n"));
        assert!(c.contains(" ctx\n"));
        assert!(c.starts_with("\x1b[1m--- a/x\x1b[0m\n"));
    }
}
