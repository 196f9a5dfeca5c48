//! `rebind workspace plan|apply|status|rollback [FILE]`: one cutover across
//! several repositories. The workspace file ([`crate::model::workspace`])
//! gives the change once and the repositories in order; the run checks
//! every repository before it writes to any (the preflight: the tree clean
//! and on its base, the remote answering, the plan computed, the identity
//! coverage across all of them), then runs the single-repository flow
//! ([`crate::commands::apply::run`], unchanged) in each, in order, stopping
//! where a repository waits for an earlier one's merge. The ledger
//! ([`crate::repo::ledger`]) beside the workspace file records each step
//! once the repository shows it; every run updates the shared table in
//! each pull request's body. The rollback is the same plan backwards.

use crate::commands::apply::{self, ApplyOptions, PrOptions, Prompt};
use crate::commands::cutover::{self, Named, Request, Scope};
use crate::model::workspace::{self as model, Location, Workspace};
use crate::output::workspace::{self as render, FileRow, PlanRow, PullRequestRow, RepoRow, Report};
use crate::output::{self, json, Done, Exit, Failure, Format, Parts, Reported, Sink};
use crate::repo::ledger::{self, Ledger, Record};
use crate::repo::{checkout, git, pr};
use crate::review::plan::Plan;
use anyhow::{anyhow, Result};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

/// Which subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Preflight and every repository's diff and the order; writes nothing.
    Plan,
    /// Preflight, then each repository in order.
    Apply,
    /// The table from the ledger.
    Status,
    /// The change backwards (to -> from), in the reverse order.
    Rollback,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Plan => "plan",
            Action::Apply => "apply",
            Action::Status => "status",
            Action::Rollback => "rollback",
        }
    }
}

/// `rebind workspace`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct WorkspaceOptions {
    pub action: Action,
    /// The workspace file (default: `rebind-workspace.yaml` here).
    pub file: Option<PathBuf>,
    /// Print every repository's diff and the order; write nothing.
    pub dry_run: bool,
    /// Do not ask.
    pub yes: bool,
    pub format: Format,
}

/// One repository as this run knows it.
struct Entry {
    idx: usize,
    dir: PathBuf,
    record: Record,
    plan: Option<Plan>,
    branch: Option<String>,
    /// `waiting`, `failed`: set by this run.
    state: Option<(&'static str, String)>,
    pr_state: Option<pr::State>,
}

/// Everything resolved before a repository is touched.
struct Ctx<'w> {
    ws: &'w Workspace,
    action: Action,
    request: Request,
    key: String,
    ledger_path: PathBuf,
    ledger: Ledger,
    entries: Vec<Entry>,
    /// Something was written in a repository (this run or an earlier one).
    written: bool,
}

impl Ctx<'_> {
    fn rollback(&self) -> bool {
        self.action == Action::Rollback
    }

    fn name(&self, e: &Entry) -> &str {
        &self.ws.repos[e.idx].name
    }

    fn change(&self) -> &model::Change {
        &self.ws.change
    }
}

/// `rebind workspace ...`.
pub fn run(o: &WorkspaceOptions, sink: &mut Sink, prompt: &mut dyn Prompt) -> Done {
    let file = o
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from(model::FILE_NAME));
    let ws = model::load(&file)?;
    let mut ctx = resolve(&ws, o.action)?;
    if o.action == Action::Status {
        return finish(&ctx, Ok(()));
    }
    // One run at a time writes the ledger (removed when the run ends).
    let _lock = match o.action {
        Action::Apply | Action::Rollback if !o.dry_run => Some(git::lock_file(
            ctx.ledger_path.with_extension("json.lock"),
            "the workspace ledger",
        )?),
        _ => None,
    };
    if let Err(f) = preflight(&mut ctx) {
        return finish(&ctx, Err(f));
    }
    if o.action == Action::Plan || o.dry_run {
        // Beside a JSON report, every plan goes to stderr as the run's
        // progress; in text it opens the report.
        output::report::progress(sink, o.format, |sink, aside| {
            if aside {
                sink.info(&plans_text(&ctx, false));
            }
        });
        let report = report(&ctx);
        let exit = if report.status == "done" {
            Exit::Ok
        } else {
            Exit::Pending
        };
        let text = format!(
            "{}{}",
            plans_text(&ctx, sink.color),
            render::text_table(&report)
        );
        let json = json::render(&report);
        return Ok(Reported::new(Parts::said(text, json), exit));
    }
    if !o.yes && !confirmed(&ctx, sink, prompt)? {
        return Ok(Reported::new(Parts::empty(), Exit::Pending));
    }
    let stopped = each_in_order(&mut ctx, sink);
    let updated = update_bodies(&mut ctx);
    finish(&ctx, stopped.and(updated))
}

/// The change in this run's direction, the ledger, and each repository's
/// folder (a URL cloned into the cache), in the run's order.
fn resolve(ws: &Workspace, action: Action) -> Result<Ctx<'_>, Failure> {
    let c = &ws.change;
    let back = action == Action::Rollback;
    if back && c.from.is_none() && c.describe_from.is_none() {
        return Err(anyhow!("{}: a rollback rebinds `to` back to `from`: give `from` (or `describe_from`) in `change:`, not only `cluster`", ws.path.display()).into());
    }
    let (from, to, dfrom, dto) = if back {
        (&c.to, &c.from, &c.describe_to, &c.describe_from)
    } else {
        (&c.from, &c.to, &c.describe_from, &c.describe_to)
    };
    let request = Request {
        cluster: if back { None } else { c.cluster.clone() },
        require_deploys: c.require_deploys,
        ..Request::default()
    }
    .from_describe(&Named {
        to: to.clone(),
        from: from.clone(),
        describe_from: dfrom.clone(),
        describe_to: dto.clone(),
        name_from: None,
        name_to: None,
    })?;
    let shown_from = match (&request.from, &request.cluster) {
        (Some(f), _) => f.clone(),
        (None, Some(n)) => format!("cluster {n}"),
        (None, None) => String::new(),
    };
    let key = ledger::key(&shown_from, &request.to);
    let ledger_path = ledger::path_for(&ws.path);
    let ledger = Ledger::load(&ledger_path)?;
    let records = ledger.records(&key);
    let order = if back {
        ws.rollback_order()
    } else {
        ws.order()
    };
    let mut entries = Vec::new();
    for idx in order {
        let r = &ws.repos[idx];
        let dir = match &r.location {
            Location::Path(p) => p.clone(),
            Location::Url(u) => {
                let dir = ws.dir().join(".rebind-workspace").join(&r.name);
                if action != Action::Status {
                    checkout::clone_into(u, &dir, &r.base)
                        .map_err(|e| anyhow!("repository {}: {e:#}; nothing written", r.name))?;
                }
                dir
            }
        };
        entries.push(Entry {
            idx,
            dir,
            record: records.get(&r.name).cloned().unwrap_or_default(),
            plan: None,
            branch: None,
            state: None,
            pr_state: None,
        });
    }
    let written = records
        .values()
        .any(|r| r.commit.is_some() || r.pull_request.is_some());
    Ok(Ctx {
        ws,
        action,
        request,
        key,
        ledger_path,
        ledger,
        entries,
        written,
    })
}

/// Whether a record's change is complete: the pull request opened (with
/// `pr`), else pushed (with `push`), else committed; or nothing to change.
fn complete(change: &model::Change, r: &Record) -> bool {
    r.nothing_to_change
        || match (change.pr, &change.push) {
            (true, _) => r.pull_request.is_some(),
            (false, Some(_)) => r.pushed_to.is_some(),
            (false, None) => r.commit.is_some(),
        }
}

/// The single-repository request for repository `e`.
fn repo_request(ctx: &Ctx, e: &Entry) -> Request {
    Request {
        walk: Scope {
            paths: vec![e.dir.clone()],
            ..Scope::default()
        },
        base: Some(ctx.ws.repos[e.idx].base.clone()),
        branch: ctx.change().branch.clone(),
        ..ctx.request.clone()
    }
}

/// Every check before the first write, over every repository; one failing
/// repository fails the run (exit 2), naming each that failed.
fn preflight(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut problems = Vec::new();
    for i in 0..ctx.entries.len() {
        if let Err(e) = preflight_one(ctx, i) {
            let name = ctx.name(&ctx.entries[i]).to_string();
            ctx.entries[i].state = Some(("failed", format!("{e:#}")));
            problems.push(format!("repository {name}: {e:#}"));
        }
    }
    problems.extend(ledger_inside(ctx));
    problems.extend(identity_gaps(ctx));
    if problems.is_empty() {
        return Ok(());
    }
    let what = if ctx.written {
        "nothing more was written in any repository"
    } else {
        "nothing was written in any repository"
    };
    Err(anyhow!("the preflight failed; {what}:\n  {}", problems.join("\n  ")).into())
}

/// The preflight of one repository: a done one's ledger claims checked
/// against the repository; an unfinished one's tree, remote and plan.
fn preflight_one(ctx: &mut Ctx, i: usize) -> Result<()> {
    let e = &ctx.entries[i];
    let repo = &ctx.ws.repos[e.idx];
    let change = ctx.change();
    if let (Some(branch), Some(commit)) = (&e.record.branch, &e.record.commit) {
        match checkout::branch_tip(&e.dir, branch)? {
            Some((tip, _)) if &tip == commit => {}
            Some((tip, _)) => {
                return Err(anyhow!("the ledger records commit {commit} on branch {branch}, but the branch is at {tip}; rebind will not claim a step it cannot see: restore the branch or remove the repository's record from {}", ctx.ledger_path.display()))
            }
            None if e.record.pushed_to.is_some() || e.record.merged => {}
            None => {
                return Err(anyhow!("the ledger records commit {commit} on branch {branch}, but there is no such branch and it was never pushed; restore it or remove the repository's record from {}", ctx.ledger_path.display()))
            }
        }
    }
    if complete(change, &e.record) {
        return Ok(());
    }
    let co = checkout::checkout(&e.dir)?;
    let on_recorded =
        e.record.commit.is_some() && co.branch == e.record.branch && co.head == e.record.commit;
    if co.branch.as_deref() != Some(repo.base.as_str()) && !on_recorded {
        return Err(anyhow!(
            "{}: on {}, not on its base {}: `git -C {} switch {}` (and pull) first",
            co.workdir.display(),
            co.branch
                .as_deref()
                .map_or("a detached HEAD".to_string(), |b| format!("branch {b}")),
            repo.base,
            co.workdir.display(),
            repo.base
        ));
    }
    if !co.dirty.is_empty() {
        return Err(anyhow!(
            "{}: the work tree is not clean ({}); commit or stash first",
            co.workdir.display(),
            co.dirty.join(", ")
        ));
    }
    if let Some(remote) = &change.push {
        pr_target(ctx, &ctx.entries[i], "")?;
        checkout::reachable(&co.workdir, remote)
            .map_err(|err| anyhow!("--push {remote}: the remote does not answer: {err:#}"))?;
    }
    if on_recorded {
        // Its files are rebound on this branch: the flow plans again from
        // the base, where it finds the branch holding the change.
        return Ok(());
    }
    let request = repo_request(ctx, &ctx.entries[i]);
    let (plan, _) = cutover::plan(&request)?;
    cutover::fail_on_errors(&plan)?;
    let branch = request
        .branch
        .clone()
        .unwrap_or_else(|| git::default_branch(&plan.to.host));
    if e.record.commit.is_none() {
        if let Some((tip, msg)) = checkout::branch_tip(&e.dir, &branch)? {
            if !checkout::is_cutover_message(&msg, &plan.from.url(), &plan.to.url()) {
                return Err(anyhow!("branch {branch} already exists (at {tip}) and is not this cutover's commit; delete it or set `branch:` in `change:`"));
            }
        }
    }
    let e = &mut ctx.entries[i];
    e.branch = Some(branch);
    e.plan = Some(plan);
    Ok(())
}

/// A workspace file inside one of its repositories: the ledger (and the
/// cache) would be written into that repository's work tree, which the
/// preflight wants clean and the commit must not carry.
fn ledger_inside(ctx: &Ctx) -> Vec<String> {
    let folder = ctx.ws.dir().canonicalize().ok();
    let mut out = Vec::new();
    for e in &ctx.entries {
        let workdir = checkout::checkout(&e.dir).ok().map(|c| c.workdir);
        let inside = match (&folder, workdir.and_then(|w| w.canonicalize().ok())) {
            (Some(f), Some(w)) => f.starts_with(&w),
            _ => false,
        };
        if inside {
            out.push(format!(
                "repository {}: the workspace file {} is inside it, so its ledger would be written into the repository; keep the workspace file in a folder outside every repository",
                ctx.name(e),
                ctx.ws.path.display()
            ));
        }
    }
    out
}

/// The identity coverage across every repository: a role in any of them
/// that trusts only the old issuer denies the new cluster's pods, whichever
/// repository holds the endpoints. Each one is named.
fn identity_gaps(ctx: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for e in &ctx.entries {
        let Some(report) = e.plan.as_ref().and_then(|p| p.identity.as_ref()) else {
            continue;
        };
        for (role, coverage, _) in &report.roles {
            if !coverage.ready() {
                out.push(format!(
                    "repository {}: {} ({}) {} (old OIDC issuer {}); run `rebind identity --describe-from OLD.json --describe-to NEW.json` there, act on it and merge it first",
                    ctx.name(e),
                    role.rel,
                    role.resource
                        .clone()
                        .unwrap_or_else(|| format!("statement {}", role.statements.join(", "))),
                    coverage.sentence(),
                    report.old.url()
                ));
            }
        }
        for t in &report.terraform {
            out.push(format!(
                "repository {}: {}:{}:{}: a Terraform trust ({}) of the old OIDC issuer {} has no twin for the new one; change it and merge it first",
                ctx.name(e),
                t.rel,
                t.line,
                t.column,
                t.form,
                report.old.url()
            ));
        }
        if !report.not_followed.is_empty() {
            out.push(format!(
                "repository {}: {} trust value(s) rendered by a chart are not followed: the identity is not proven; check the rendered policies",
                ctx.name(e),
                report.not_followed.len()
            ));
        }
    }
    out
}

/// Every repository's diff, in the run's order (on stderr beside a JSON
/// report on stdout, or before the question; coloured with `color`).
fn plans_text(ctx: &Ctx, color: bool) -> String {
    let mut out = String::new();
    for (place, e) in ctx.entries.iter().enumerate() {
        let Some(plan) = &e.plan else { continue };
        let head = format!(
            "== {}. {} ({}) ==\n",
            place + 1,
            ctx.name(e),
            e.dir.display()
        );
        out.push_str(&head);
        out.push_str(&crate::output::text::plan_text(plan, color));
    }
    out
}

/// Asks once for the whole workspace, after showing every plan.
fn confirmed(ctx: &Ctx, sink: &mut Sink, prompt: &mut dyn Prompt) -> Result<bool> {
    if !prompt.is_terminal() {
        return Err(anyhow!("refusing to write without confirmation: stdin is not a terminal; review with `rebind workspace plan` and pass --yes"));
    }
    sink.info(&plans_text(ctx, false));
    sink.info(&format!(
        "Change {} repositories in this order: {}? [y/N] ",
        ctx.entries.len(),
        ctx.entries
            .iter()
            .map(|e| ctx.name(e))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let line = prompt.read_line()?;
    let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if !yes {
        sink.info("Nothing written.\n");
    }
    Ok(yes)
}

/// Each repository in order: a done one is left alone; one that waits for
/// an earlier merge stops the run (waiting); the others get the single
/// flow. Stops at the first failure.
fn each_in_order(ctx: &mut Ctx, sink: &mut Sink) -> Result<(), Failure> {
    for i in 0..ctx.entries.len() {
        if complete(ctx.change(), &ctx.entries[i].record) {
            continue;
        }
        if let Some(waiting) = waiting_for(ctx, i)? {
            ctx.entries[i].state = Some(("waiting", waiting));
            return Ok(());
        }
        apply_one(ctx, sink, i)?;
    }
    Ok(())
}

/// What repository `i` still waits for (`None`: nothing): each repository
/// it runs after must be complete and its change merged, proven by the
/// client (the pull request's state) or by git (the commit on the base).
fn waiting_for(ctx: &mut Ctx, i: usize) -> Result<Option<String>, Failure> {
    let name = ctx.name(&ctx.entries[i]).to_string();
    let mut not_merged = Vec::new();
    for dep in ctx.ws.waits_for(&name, ctx.rollback()) {
        let Some(j) = ctx.entries.iter().position(|e| ctx.name(e) == dep) else {
            continue;
        };
        if !merged(ctx, j)? {
            not_merged.push(dep);
        }
    }
    Ok((!not_merged.is_empty()).then(|| {
        format!(
            "waits for {} to be merged into {}; merge it, then run this again",
            not_merged.join(", "),
            if not_merged.len() == 1 {
                "its base"
            } else {
                "their bases"
            }
        )
    }))
}

/// Whether repository `j`'s change is merged (recorded once proven).
fn merged(ctx: &mut Ctx, j: usize) -> Result<bool, Failure> {
    let r = ctx.entries[j].record.clone();
    if r.nothing_to_change || r.merged {
        return Ok(true);
    }
    if !complete(ctx.change(), &r) {
        return Ok(false);
    }
    let proven = match pull_state(ctx, j) {
        Some(pr::State::Merged) => true,
        _ => match &r.commit {
            Some(c) => {
                let base = &ctx.ws.repos[ctx.entries[j].idx].base;
                let remote = r.pushed_to.as_deref();
                checkout::merged(&ctx.entries[j].dir, remote, base, c).unwrap_or(false)
            }
            None => false,
        },
    };
    if proven {
        ctx.entries[j].record.merged = true;
        save(ctx, j).map_err(Failure::after_write)?;
    }
    Ok(proven)
}

/// The state the client reports for repository `j`'s pull request (asked
/// once a run); `None` without one, or when the client cannot tell.
fn pull_state(ctx: &mut Ctx, j: usize) -> Option<pr::State> {
    if ctx.entries[j].pr_state.is_none() {
        let e = &ctx.entries[j];
        let number = e.record.pull_request.as_ref()?.number?;
        let target = pr_target(ctx, e, "").ok()??;
        ctx.entries[j].pr_state = pr::state(&target, number, &e.dir).ok();
    }
    ctx.entries[j].pr_state
}

/// The pull request target of repository `e` (its head from the record),
/// `None` without `pr`; an error when the client cannot be told.
fn pr_target(ctx: &Ctx, e: &Entry, title: &str) -> Result<Option<pr::Target>> {
    let change = ctx.change();
    let (true, Some(remote)) = (change.pr, &change.push) else {
        return Ok(None);
    };
    let repo =
        git::open(&e.dir)?.ok_or_else(|| anyhow!("{}: not a git repository", e.dir.display()))?;
    let urls = repo.push_urls(remote);
    let client = match change.pr_client.as_deref() {
        Some("glab") => Some(pr::Client::Glab),
        Some(_) => Some(pr::Client::Gh),
        None => None,
    };
    let (client, parsed) = pr::choose(&urls, client).ok_or_else(|| {
        anyhow!(
            "pr: cannot tell whether the remote {remote} ({}) is on GitHub or GitLab: set `pr_client: gh` or `pr_client: glab` in `change:`",
            urls.join(", ")
        )
    })?;
    Ok(Some(pr::Target {
        client,
        remote: parsed,
        head: e.record.branch.clone().unwrap_or_default(),
        base: Some(ctx.ws.repos[e.idx].base.clone()),
        title: title.to_string(),
        draft: change.pr_draft,
        labels: change.pr_labels.clone(),
        reviewers: change.pr_reviewers.clone(),
    }))
}

/// Writes repository `i`'s record to the ledger.
fn save(ctx: &mut Ctx, i: usize) -> Result<()> {
    let name = ctx.name(&ctx.entries[i]).to_string();
    let record = ctx.entries[i].record.clone();
    ctx.ledger.set(&ctx.key, &name, record);
    ctx.ledger.save(&ctx.ledger_path)
}

/// A buffer both a sink and this module can read.
#[derive(Clone, Default)]
struct Captured(Rc<RefCell<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

/// A prompt nobody answers: the workspace asked once, and runs each
/// repository's flow with `yes`.
struct Asked;

impl Prompt for Asked {
    fn is_terminal(&self) -> bool {
        false
    }
    fn read_line(&mut self) -> Result<String> {
        Ok(String::new())
    }
}

/// Runs the single-repository flow in repository `i`, then records what
/// the repository shows was done (the branch at the commit, the remote
/// holding it, the pull request the flow reported).
fn apply_one(ctx: &mut Ctx, sink: &mut Sink, i: usize) -> Result<(), Failure> {
    let change = ctx.change().clone();
    let e = &ctx.entries[i];
    // An earlier run left its branch checked out: the single flow is run
    // again from the base (the preflight saw the tree clean, at the
    // recorded commit), where it renders the review and finds its branch.
    if e.record.commit.is_some() {
        let co = checkout::checkout(&e.dir)?;
        let base = &ctx.ws.repos[e.idx].base;
        if co.branch.as_ref() != Some(base) {
            checkout::switch(&e.dir, base).map_err(Failure::after_write)?;
        }
    }
    let options = ApplyOptions {
        request: repo_request(ctx, e),
        format: crate::output::report::MACHINE,
        yes: true,
        branch: change.branch.clone(),
        push: change.push.clone(),
        pr: change.pr.then(|| PrOptions {
            client: match change.pr_client.as_deref() {
                Some("glab") => Some(pr::Client::Glab),
                Some(_) => Some(pr::Client::Gh),
                None => None,
            },
            draft: change.pr_draft,
            labels: change.pr_labels.clone(),
            reviewers: change.pr_reviewers.clone(),
        }),
        ..ApplyOptions::default()
    };
    let (out, err) = (Captured::default(), Captured::default());
    let mut inner = Sink::new(
        Box::new(out.clone()),
        Box::new(err.clone()),
        false,
        sink.quiet,
    );
    // Its report, read back in the machine format.
    let done = apply::run(&options, &mut inner, &mut Asked);
    let outcome = output::report::rendered(&mut inner, output::report::MACHINE, done);
    inner.finish();
    let name = ctx.name(&ctx.entries[i]).to_string();
    let said = err.text();
    if !said.trim().is_empty() {
        sink.info(&format!(
            "[{name}] {}",
            said.trim_end().replace('\n', &format!("\n[{name}] "))
        ));
        sink.info("\n");
    }
    let report: Option<json::PlanReport> = serde_json::from_str(&out.text()).ok();
    let failure = match (outcome, &report) {
        (Err(f), _) => Some(f),
        // Never guessed: what the flow did is read from the repository.
        (Ok(_), None) => Some(Failure::after_write(anyhow!(
            "the apply flow's report did not read; what it did is recorded only as far as the repository shows it"
        ))),
        (Ok(_), Some(_)) => None,
    };
    record_outcome(ctx, i, report.as_ref(), failure.as_ref())?;
    save(ctx, i).map_err(Failure::after_write)?;
    if ctx.entries[i].record.commit.is_some() {
        ctx.written = true;
    }
    match failure {
        None => Ok(()),
        Some(f) => {
            ctx.entries[i].state = Some(("failed", format!("{:#}", f.error)));
            let exit = if ctx.written {
                Exit::AfterCommit
            } else {
                f.exit
            };
            Err(Failure {
                exit,
                error: f.error.context(format!("repository {name}")),
                located: f.located,
            })
        }
    }
}

/// Fills repository `i`'s record from the flow's report or failure, each
/// step checked against the repository before it is claimed.
fn record_outcome(
    ctx: &mut Ctx,
    i: usize,
    report: Option<&json::PlanReport>,
    failure: Option<&Failure>,
) -> Result<(), Failure> {
    let e = &ctx.entries[i];
    let after = failure.and_then(|f| {
        f.error
            .chain()
            .find_map(|c| c.downcast_ref::<git::AfterCommit>())
            .cloned()
    });
    let (branch, commit) = match (report, &after) {
        (Some(r), _) => (r.branch.clone(), r.commit.clone()),
        (None, Some(a)) => (Some(a.branch.clone()), Some(a.commit.clone())),
        (None, None) => head_cutover(e),
    };
    let mut rec = e.record.clone();
    if report.is_some_and(|r| r.status == "nothing_to_change") {
        rec.nothing_to_change = true;
    }
    if let (Some(b), Some(c)) = (&branch, &commit) {
        let shown = checkout::branch_tip(&e.dir, b).ok().flatten();
        if shown.is_some_and(|(tip, _)| &tip == c) {
            rec.branch = Some(b.clone());
            rec.commit = Some(c.clone());
        }
    }
    if let (Some(remote), Some(b), Some(c)) = (&ctx.change().push, &rec.branch, &rec.commit) {
        if checkout::remote_has(&e.dir, remote, b, c) {
            rec.pushed_to = Some(remote.clone());
        }
    }
    if let Some(p) = report.and_then(|r| r.pull_request.as_ref()) {
        if rec.pushed_to.is_some() {
            rec.pull_request = Some(ledger::PullRequest {
                url: p.url.clone(),
                number: p.number,
                client: p.client.clone(),
            });
        }
    }
    ctx.entries[i].record = rec;
    Ok(())
}

/// The branch and commit HEAD is at when its commit is this cutover's
/// (what a flow that stopped without a report left checked out).
fn head_cutover(e: &Entry) -> (Option<String>, Option<String>) {
    let (Some(plan), Ok(co)) = (&e.plan, checkout::checkout(&e.dir)) else {
        return (None, None);
    };
    let (Some(branch), Some(_)) = (co.branch, co.head) else {
        return (None, None);
    };
    match checkout::branch_tip(&e.dir, &branch) {
        Ok(Some((tip, msg)))
            if checkout::is_cutover_message(&msg, &plan.from.url(), &plan.to.url()) =>
        {
            (Some(branch), Some(tip))
        }
        _ => (None, None),
    }
}

/// Replaces every pull request's body with the shared table and that
/// repository's review (the flow keeps it in the git directory). A
/// failure is exit 3, naming the repository and the call to finish.
fn update_bodies(ctx: &mut Ctx) -> Result<(), Failure> {
    for j in 0..ctx.entries.len() {
        if ctx.entries[j].record.pull_request.is_some() {
            pull_state(ctx, j);
        }
    }
    let report = report(ctx);
    for e in &ctx.entries {
        let (Some(p), Some(commit)) = (&e.record.pull_request, &e.record.commit) else {
            continue;
        };
        let Some(number) = p.number else { continue };
        let name = ctx.name(e);
        let not_updated = |err: anyhow::Error| {
            Failure::after_write(anyhow!(
                "repository {name}: the shared table is not in its pull request's body: {err:#}"
            ))
        };
        let Some(target) = pr_target(ctx, e, "").map_err(not_updated)? else {
            continue;
        };
        let git_dir = match git::open(&e.dir) {
            Ok(Some(r)) => r.git_dir().to_path_buf(),
            Ok(None) => {
                return Err(not_updated(anyhow!(
                    "{}: not a git repository",
                    e.dir.display()
                )))
            }
            Err(err) => return Err(not_updated(err)),
        };
        let review = std::fs::read_to_string(git_dir.join(format!("rebind-pr-{commit}.md")))
            .unwrap_or_else(|_| {
                format!("The review of commit {commit} is in the branch's history.\n")
            });
        let body = format!("{}{review}", render::markdown_table(&report, name));
        let file = git_dir.join(format!("rebind-workspace-pr-{commit}.md"));
        std::fs::write(&file, &body).map_err(|err| {
            Failure::after_write(anyhow!("{}: cannot keep the body: {err}", file.display()))
        })?;
        pr::update_body(&target, number, &body, &file, &e.dir).map_err(|u| {
            Failure::after_write(anyhow!(
                "repository {name}: the shared table is not in its pull request's body: {:#}; to finish, run:\n  {}",
                u.cause,
                u.by_hand
            ))
        })?;
    }
    Ok(())
}

/// Repository `e`'s row.
fn row(ctx: &Ctx, place: usize, e: &Entry) -> RepoRow {
    let repo = &ctx.ws.repos[e.idx];
    let r = &e.record;
    let pr_state = match e.pr_state {
        Some(pr::State::Open) => "open",
        Some(pr::State::Merged) => "merged",
        Some(pr::State::Closed) => "closed",
        None => "unknown",
    };
    let (state, detail) = match &e.state {
        Some((s, d)) => (s.to_string(), Some(d.clone())),
        None if r.nothing_to_change => ("nothing_to_change".to_string(), None),
        None if r.commit.is_none() && e.plan.as_ref().is_some_and(|p| p.files.is_empty()) => {
            ("nothing_to_change".to_string(), None)
        }
        None if r.merged || e.pr_state == Some(pr::State::Merged) => ("merged".to_string(), None),
        None if e.pr_state == Some(pr::State::Closed) => (
            "pr_closed".to_string(),
            Some(
                "reopen it, or remove the repository's record from the ledger to open a new one"
                    .to_string(),
            ),
        ),
        None if e.pr_state == Some(pr::State::Open) => ("pr_open".to_string(), None),
        // Opened by a run; its state now is not known (not asked, or the
        // client did not answer): never said to be open.
        None if r.pull_request.is_some() => ("pr_opened".to_string(), None),
        None if r.pushed_to.is_some() => ("pushed".to_string(), None),
        None if r.commit.is_some() => ("committed".to_string(), None),
        None => ("pending".to_string(), None),
    };
    RepoRow {
        name: repo.name.clone(),
        role: repo.role.clone(),
        place: place + 1,
        path: e.dir.display().to_string(),
        base: repo.base.clone(),
        waits_for: ctx.ws.waits_for(&repo.name, ctx.rollback()),
        plan: e.plan.as_ref().map(plan_row),
        branch: r.branch.clone().or_else(|| e.branch.clone()),
        commit: r.commit.clone(),
        pushed_to: r.pushed_to.clone(),
        pull_request: r.pull_request.as_ref().map(|p| PullRequestRow {
            url: p.url.clone(),
            number: p.number,
            client: p.client.clone(),
            state: pr_state.to_string(),
        }),
        state,
        detail,
    }
}

fn plan_row(plan: &Plan) -> PlanRow {
    PlanRow {
        file_count: plan.manifest_count(),
        change_count: plan.change_count(),
        files: plan
            .files
            .iter()
            .map(|f| FileRow {
                path: f.rel.clone(),
                change_count: f.changes.len(),
            })
            .collect(),
        not_proven_to_deploy: plan
            .after_merge
            .as_ref()
            .map(|r| r.blocking().map(|row| row.file.clone()).collect())
            .unwrap_or_default(),
    }
}

/// The report of this run.
fn report(ctx: &Ctx) -> Report {
    let repos: Vec<RepoRow> = ctx
        .entries
        .iter()
        .enumerate()
        .map(|(place, e)| row(ctx, place, e))
        .collect();
    let done = |r: &RepoRow| {
        r.state == "nothing_to_change"
            || (complete(ctx.change(), &ctx.entries[r.place - 1].record) && r.state != "failed")
    };
    let left: Vec<String> = repos
        .iter()
        .filter(|r| !done(r))
        .map(|r| format!("{}: {}", r.name, r.detail.as_deref().unwrap_or(&r.state)))
        .collect();
    let status = if repos.iter().any(|r| r.state == "failed") {
        if ctx.written {
            "failed_after_write"
        } else {
            "failed_before_write"
        }
    } else if left.is_empty() {
        "done"
    } else if repos.iter().any(|r| r.state == "waiting") {
        "waiting"
    } else {
        "pending"
    };
    Report {
        schema_version: crate::output::SCHEMA_VERSION,
        command: "workspace",
        action: ctx.action.name().to_string(),
        workspace: ctx.ws.path.display().to_string(),
        ledger: ctx.ledger_path.display().to_string(),
        from: ctx.request.from.clone().unwrap_or_default(),
        to: ctx.request.to.clone(),
        order: ctx
            .entries
            .iter()
            .map(|e| ctx.name(e).to_string())
            .collect(),
        status: status.to_string(),
        written: ctx.written,
        repos,
        left,
    }
}

/// The report, and the exit: 0 every repository done, 1 waiting on a
/// merge (or not started), the failure's own code otherwise (3 once
/// anything was written), concluded after the report.
fn finish(ctx: &Ctx, stopped: Result<(), Failure>) -> Done {
    let report = report(ctx);
    let text = render::text_table(&report);
    let json = json::render(&report);
    let shown = Parts::said(text, json);
    if let Err(mut f) = stopped {
        if f.exit == Exit::AfterCommit {
            f.error = anyhow!("{}", left_message(ctx, &report, &f));
        }
        return Ok(Reported::failed(shown, f));
    }
    let exit = if report.status == "done" {
        Exit::Ok
    } else {
        Exit::Pending
    };
    Ok(Reported::new(shown, exit))
}

/// A failure after writes, with what is done and what is left, and how
/// to go on.
fn left_message(ctx: &Ctx, report: &Report, f: &Failure) -> String {
    let done: Vec<&str> = report
        .repos
        .iter()
        .filter(|r| {
            !report
                .left
                .iter()
                .any(|l| l.starts_with(&format!("{}: ", r.name)))
        })
        .map(|r| r.name.as_str())
        .collect();
    let again = match ctx.action {
        Action::Rollback => "rollback",
        _ => "apply",
    };
    format!(
        "{:#}\ndone: {}\nleft:\n  {}\nthe ledger {} records what was done: fix the cause and run `rebind workspace {again} {}` again; it resumes there and repeats nothing",
        f.error,
        if done.is_empty() { "none".to_string() } else { done.join(", ") },
        report.left.join("\n  "),
        ctx.ledger_path.display(),
        ctx.ws.path.display()
    )
}
