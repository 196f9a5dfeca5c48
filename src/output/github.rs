//! GitHub Actions workflow commands: one `::error`/`::warning`/`::notice`
//! line per [`Finding`], so each shows as an annotation on the lines of a
//! pull request's diff (`scan`, `diff`, `check` with `--format github`).

use super::finding::{Finding, Level};

/// Escapes a value of a workflow command (`%`, CR, LF; in properties also
/// `:` and `,`), as the runner's own toolkit does.
fn escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// The command name for a level (`note` is GitHub's `notice`).
fn command(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Note => "notice",
    }
}

/// One finding as one workflow command line.
pub fn line(f: &Finding) -> String {
    format!(
        "::{} file={},line={},col={}::{}\n",
        command(f.level),
        escape(&f.path, true),
        f.line,
        f.column,
        escape(&f.message, false)
    )
}

/// Every finding, one line each.
pub fn render(findings: &[Finding]) -> String {
    findings.iter().map(line).collect()
}

/// A failed run: its errors at places in files, or else the one message as
/// an annotation of the run.
pub fn failure(located: &[Finding], message: &str) -> String {
    if located.is_empty() {
        format!("::error::{}\n", escape(message, false))
    } else {
        render(located)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::finding::rules;
    use std::borrow::Cow;

    #[test]
    fn properties_and_messages_are_escaped() {
        let f = Finding {
            path: Cow::Borrowed("a,b:c%.yaml"),
            line: 3,
            column: 7,
            level: Level::Note,
            rule: rules::ENDPOINT,
            message: Cow::Borrowed("50% done\r\nnext: a,b"),
            fix: None,
        };
        assert_eq!(
            line(&f),
            "::notice file=a%2Cb%3Ac%25.yaml,line=3,col=7::50%25 done%0D%0Anext: a,b\n"
        );
    }
}
