//! `rebind workspace`: one row per repository (its place in the order, what
//! it waits for, its branch, commit, pull request and state) rendered as the
//! text table, the JSON report, and the Markdown table every pull request's
//! body carries (the same table in each, the reader's own row marked).

use serde::Serialize;

/// The Markdown table's first line: how a body's table is recognised.
pub const TABLE_MARK: &str = "<!-- rebind-workspace: the cutover across repositories -->";

/// A pull request as the table shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PullRequestRow {
    pub url: String,
    pub number: Option<u64>,
    /// `gh` or `glab`.
    pub client: String,
    /// `open`, `merged`, `closed`, or `unknown` (the client was not asked
    /// or did not answer).
    pub state: String,
}

/// The plan of one repository, counted.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub file_count: usize,
    pub change_count: usize,
    /// Each file the rebind writes (the repository's `.rebind.yaml`
    /// included) and its number of changes.
    pub files: Vec<FileRow>,
    /// Rewritten files whose merge is not proven to deploy them.
    pub not_proven_to_deploy: Vec<String>,
}

/// One file of a repository's plan.
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    pub path: String,
    pub change_count: usize,
}

/// One repository of the workspace.
#[derive(Debug, Clone, Serialize)]
pub struct RepoRow {
    pub name: String,
    pub role: Option<String>,
    /// 1-based, in the run's order.
    pub place: usize,
    pub path: String,
    pub base: String,
    /// The repositories whose merge this one waits for.
    pub waits_for: Vec<String>,
    pub plan: Option<PlanRow>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub pushed_to: Option<String>,
    pub pull_request: Option<PullRequestRow>,
    /// `pending`, `nothing_to_change`, `committed`, `pushed`, `pr_opened`
    /// (its state now not asked or not answered), `pr_open`, `merged`,
    /// `pr_closed`, `waiting`, `failed`.
    pub state: String,
    /// Why, for `waiting`, `failed` and `pr_closed`.
    pub detail: Option<String>,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub command: &'static str,
    /// `plan`, `apply`, `status`, `rollback`.
    pub action: String,
    pub workspace: String,
    pub ledger: String,
    pub from: String,
    pub to: String,
    /// The repositories' names, in the run's order.
    pub order: Vec<String>,
    /// `done`, `waiting`, `pending`, `failed_before_write`, `failed_after_write`.
    pub status: String,
    pub written: bool,
    pub repos: Vec<RepoRow>,
    /// What is left, one line per repository not done.
    pub left: Vec<String>,
}

/// What the state column says.
fn state_words(r: &RepoRow) -> String {
    let base = match r.state.as_str() {
        "pending" => "not started".to_string(),
        "nothing_to_change" => "nothing to change".to_string(),
        "committed" => "committed".to_string(),
        "pushed" => "pushed".to_string(),
        "pr_open" => "open".to_string(),
        "pr_opened" => "opened (its state now not asked)".to_string(),
        "merged" => "merged".to_string(),
        "pr_closed" => "closed without merge".to_string(),
        "waiting" => "waiting".to_string(),
        "failed" => "failed".to_string(),
        other => other.to_string(),
    };
    match &r.detail {
        Some(d) => format!("{base}: {d}"),
        None => base,
    }
}

fn pr_label(p: &PullRequestRow) -> String {
    let sigil = if p.client == "glab" { '!' } else { '#' };
    match p.number {
        Some(n) => format!("{sigil}{n}"),
        None => p.url.clone(),
    }
}

/// The table every pull request body starts with; `this` is the name of
/// the repository whose body it is.
pub fn markdown_table(report: &Report, this: &str) -> String {
    let mut s = format!(
        "{TABLE_MARK}\n**Cutover across {} repositories** (`rebind workspace`): {} -> {}, merged in this order.\n\n| # | repository | role | waits for | pull request | state |\n| --- | --- | --- | --- | --- | --- |\n",
        report.repos.len(),
        super::finding::md_code(&report.from),
        super::finding::md_code(&report.to)
    );
    for r in &report.repos {
        let name = if r.name == this {
            format!("**{}** (this one)", r.name)
        } else {
            r.name.clone()
        };
        let pr = match &r.pull_request {
            Some(p) => format!("[{}]({})", pr_label(p), p.url),
            None => "-".to_string(),
        };
        let waits = if r.waits_for.is_empty() {
            "-".to_string()
        } else {
            r.waits_for.join(", ")
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.place,
            name.replace('|', "\\|"),
            r.role.as_deref().unwrap_or("-").replace('|', "\\|"),
            waits,
            pr,
            state_words(r).replace('|', "\\|")
        ));
    }
    s.push_str("\n---\n\n");
    s
}

/// The table for people.
pub fn text_table(report: &Report) -> String {
    let mut s = format!(
        "Workspace {} ({}): {} -> {}\n",
        report.workspace, report.action, report.from, report.to
    );
    for r in &report.repos {
        let mut line = format!("  {}. {}", r.place, r.name);
        if let Some(role) = &r.role {
            line.push_str(&format!(" ({role})"));
        }
        if !r.waits_for.is_empty() {
            line.push_str(&format!(" [after {}]", r.waits_for.join(", ")));
        }
        line.push_str(&format!(": {}", state_words(r)));
        if let Some(p) = &r.plan {
            line.push_str(&format!(
                "; {} in {}",
                crate::text::words::count(p.change_count, "change"),
                crate::text::words::count(p.file_count, "file")
            ));
        }
        if let Some(b) = &r.branch {
            line.push_str(&format!("; branch {b}"));
        }
        if let Some(c) = &r.commit {
            line.push_str(&format!(" at {}", &c[..12.min(c.len())]));
        }
        if let Some(p) = &r.pull_request {
            line.push_str(&format!("; {} {}", pr_label(p), p.url));
        }
        s.push_str(&line);
        s.push('\n');
        if let Some(p) = &r.plan {
            for f in &p.not_proven_to_deploy {
                s.push_str(&format!(
                    "       after the merge: {f}: not proven to deploy\n"
                ));
            }
        }
    }
    if !report.left.is_empty() {
        s.push_str("Left to do:\n");
        for l in &report.left {
            s.push_str(&format!("  - {l}\n"));
        }
    }
    s.push_str(&format!("Ledger: {}\n", report.ledger));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, place: usize, state: &str) -> RepoRow {
        RepoRow {
            name: name.into(),
            role: None,
            place,
            path: name.into(),
            base: "main".into(),
            waits_for: Vec::new(),
            plan: None,
            branch: None,
            commit: None,
            pushed_to: None,
            pull_request: None,
            state: state.into(),
            detail: None,
        }
    }

    #[test]
    fn the_table_marks_the_reader_and_escapes_cells() {
        let mut a = row("tf", 1, "merged");
        a.pull_request = Some(PullRequestRow {
            url: "https://github.com/o/tf/pull/3".into(),
            number: Some(3),
            client: "gh".into(),
            state: "merged".into(),
        });
        let mut b = row("gitops", 2, "waiting");
        b.role = Some("app|of|apps".into());
        b.waits_for = vec!["tf".into()];
        b.detail = Some("tf is not merged".into());
        let r = Report {
            schema_version: crate::output::SCHEMA_VERSION,
            command: "workspace",
            action: "apply".into(),
            workspace: "w.yaml".into(),
            ledger: "w.ledger.json".into(),
            from: "https://a".into(),
            to: "https://b".into(),
            order: vec!["tf".into(), "gitops".into()],
            status: "waiting".into(),
            written: true,
            repos: vec![a, b],
            left: Vec::new(),
        };
        let md = markdown_table(&r, "gitops");
        assert!(
            md.contains("| 1 | tf | - | - | [#3](https://github.com/o/tf/pull/3) | merged |\n"),
            "{md}"
        );
        assert!(md.contains("| 2 | **gitops** (this one) | app\\|of\\|apps | tf | - | waiting: tf is not merged |\n"), "{md}");
    }
}
