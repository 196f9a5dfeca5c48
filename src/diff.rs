//! Rendering planned rewrites as unified diffs (`--- a/path` / `+++ b/path`),
//! optionally coloured for a terminal.

use crate::rewrite::FilePlan;
use similar::TextDiff;

/// The unified diff of one planned file, three lines of context.
pub fn unified(plan: &FilePlan) -> String {
    TextDiff::from_lines(&plan.old, &plan.new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", plan.rel), &format!("b/{}", plan.rel))
        .to_string()
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

    #[test]
    fn colorize_marks_lines() {
        let c = colorize("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n");
        assert!(c.contains("\x1b[31m-old\x1b[0m\n"));
        assert!(c.contains("\x1b[32m+new\x1b[0m\n"));
        assert!(c.contains(" ctx\n"));
        assert!(c.starts_with("\x1b[1m--- a/x\x1b[0m\n"));
    }
}
