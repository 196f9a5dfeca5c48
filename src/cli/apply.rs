//! `rebind diff` and `rebind apply`: plan a rebind, show it, and (apply)
//! write it on a new git branch or in place.

use super::{warn_skipped, ApplyArgs, DiffArgs, RebindArgs};
use anyhow::{anyhow, bail, Context, Result};
use rebind::cutover::{self, Request};
use rebind::output::{
    count, github, json, rules, sarif, text, Exit, Failure, Finding, Format, Outcome, Sink,
};
use rebind::rewrite::Plan;
use rebind::{git, pr, secret, Inventory};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

impl RebindArgs {
    /// The library's rebind request; a describe-cluster file gives the
    /// endpoint not given, and the issuers of the review's trust coverage.
    fn request(&self) -> Result<Request> {
        let describe = |flag: &str, p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| rebind::oidc::read_describe(flag, p))
                .transpose()
        };
        let old = describe("--describe-from", &self.describe_from)?;
        let new = describe("--describe-to", &self.describe_to)?;
        let from = self.from.clone().or_else(|| {
            (self.cluster.is_none())
                .then(|| old.as_ref().map(|d| d.endpoint.clone()))
                .flatten()
        });
        let to = match (&self.to, &new) {
            (Some(t), _) => t.clone(),
            (None, Some(d)) => d.endpoint.clone(),
            (None, None) => bail!("--to URL (or --describe-to FILE) is required"),
        };
        let issuers = match (&old, &new) {
            (Some(o), Some(n)) if o.issuer.same(&n.issuer) => bail!(
                "--describe-from and --describe-to name the same OIDC issuer ({}): give the old cluster's and the new cluster's",
                o.issuer.url()
            ),
            (Some(o), Some(n)) => Some((o.issuer.clone(), n.issuer.clone())),
            _ => None,
        };
        Ok(Request {
            to,
            from,
            cluster: self.cluster.clone(),
            expect_files: self.expect_files,
            expect_occurrences: self.expect_occurrences,
            allow_merge: self.allow_merge,
            expect_from_audit: self.expect_from_audit.clone(),
            walk: self.walk.request(),
            base: self.base.clone(),
            branch: None,
            live: self.live.clone(),
            require_deploys: self.require_deploys,
            issuers,
        })
    }
}

/// The plan as text: the diff, the counts, the summary, the mentions.
fn show_plan(sink: &mut Sink, plan: &Plan, inv: &Inventory, to_stderr: bool) {
    let t = text::plan_text(plan, sink.color && !to_stderr);
    if to_stderr {
        sink.info(&t);
    } else {
        sink.say(&t);
    }
    warn_skipped(sink, &inv.skipped);
    if plan.already_rebound {
        sink.say(&format!(
            "Already rebound: {} holds no value, {} does.\n",
            plan.from.url(),
            plan.to.url()
        ));
    } else if plan.files.is_empty() && !plan.mentions.is_empty() {
        sink.warn(&format!(
            "{} is only mentioned (comments, text, template actions): no value holds it",
            plan.from.url()
        ));
    }
}

pub fn diff(a: DiffArgs, sink: &mut Sink) -> Outcome {
    let format = a.format.get();
    let (plan, inv) = cutover::plan(&a.rebind.request()?)?;
    let status = if plan.files.is_empty() {
        "nothing_to_change"
    } else {
        "pending"
    };
    match format {
        Format::Json => sink.out(&json::render(&json::PlanReport::new(
            "diff",
            status,
            &plan,
            &inv.skipped,
        ))),
        Format::Github => {
            sink.out(&github::render(&Finding::from_plan(&plan)));
            warn_skipped(sink, &inv.skipped);
        }
        Format::Sarif => {
            sink.out(&sarif::render(
                &Finding::from_plan(&plan),
                &[rules::PENDING, rules::MENTION, rules::UNSAFE],
            ));
            warn_skipped(sink, &inv.skipped);
        }
        Format::Text => show_plan(sink, &plan, &inv, false),
    }
    fail_on_errors(&plan)?;
    Ok(if plan.files.is_empty() {
        Exit::Ok
    } else {
        Exit::Pending
    })
}

/// Refuses a plan with files that cannot be rewritten, naming each.
fn fail_on_errors(plan: &Plan) -> Result<(), Failure> {
    cutover::fail_on_errors(plan).map_err(|e| Failure::from(e).at(&plan.errors))
}

/// Asks on the terminal; true only for an explicit yes.
fn confirm(sink: &mut Sink, question: &str) -> Result<bool> {
    sink.info(&format!("{question} [y/N] "));
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// An `apply` resolved from its flags before anything is shown or
/// written: the plan, the Secret to write, where the repository search
/// starts.
struct ApplyRun {
    json: bool,
    plan: Plan,
    inv: Inventory,
    secret_spec: Option<secret::Spec>,
    start: PathBuf,
}

impl ApplyRun {
    fn report(&self, status: &'static str) -> json::PlanReport<'_> {
        json::PlanReport::new("apply", status, &self.plan, &self.inv.skipped)
    }
}

fn resolve(a: &ApplyArgs) -> Result<ApplyRun, Failure> {
    let mut request = a.rebind.request()?;
    request.branch = a.branch.clone();
    let (plan, inv) = cutover::plan(&request)?;
    rebind::signals::pause_point("planned");
    fail_on_errors(&plan)?;
    let secret_options = a.secret.options();
    if a.secret_out.is_none() && !secret_options.is_empty() {
        return Err(anyhow!("the cluster Secret flags (--secret-name, --aws-role-arn, --external-secret, ...) shape the Secret --secret-out writes: pass --cluster-name NAME --secret-out FILE too").into());
    }
    // An output that is one of the files this run rewrites (or the other
    // output) is refused before anything else about it is checked.
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(p) = &a.review_out {
        outputs.push(("--review-out", p));
    }
    if let Some(p) = &a.secret_out {
        outputs.push(("--secret-out", p));
    }
    rebind::write::check_outputs(&outputs, &plan.files)?;
    let secret_spec = match &a.cluster_name {
        Some(name) => Some(secret::spec(&secret_options, name, &plan.to.url())?),
        None => None,
    };
    if let (Some(spec), Some(path)) = (&secret_spec, &a.secret_out) {
        secret::check_target(path, spec.holds_token()).with_context(|| {
            format!(
                "--secret-out {}: cannot take the cluster Secret; nothing written",
                path.display()
            )
        })?;
    }
    Ok(ApplyRun {
        json: a.format.get() == Format::Json,
        plan,
        inv,
        secret_spec,
        start: a.rebind.walk.request().repo_start(),
    })
}

pub fn apply(a: ApplyArgs, sink: &mut Sink) -> Outcome {
    let run = resolve(&a)?;
    let plan = &run.plan;
    if plan.files.is_empty() && !a.no_commit {
        // A re-run on the branch an earlier run made (its push failed, say):
        // HEAD is that run's commit, so the change is done; finish the rest.
        if let Some(repo) = git::open(&run.start).ok().flatten() {
            if let Some((branch, commit)) = repo.head_cutover(&plan.from.url(), &plan.to.url()) {
                return already_done(&a, &run, sink, &repo, None, &branch, &commit.to_string());
            }
        }
    }
    if plan.files.is_empty() {
        if run.json {
            sink.out(&json::render(&run.report("nothing_to_change")));
        } else {
            show_plan(sink, plan, &run.inv, false);
            sink.say("Nothing to change.\n");
        }
        return Ok(Exit::Ok);
    }
    // The git flow's checks all run before anything is shown or written.
    let git = match prepare_git(&a, &run)? {
        Git::AlreadyDone(repo, prep, commit) => {
            let commit = commit.to_string();
            return already_done(&a, &run, sink, &repo, Some(&prep), &prep.branch, &commit);
        }
        Git::Flow(repo, prep) => Some((repo, prep)),
        Git::NoCommit => None,
    };
    if !a.yes {
        let branch = git.as_ref().map(|(_, prep)| prep.branch.as_str());
        if !confirmed(&run, sink, branch)? {
            return Ok(Exit::Pending);
        }
    } else if !run.json {
        show_plan(sink, plan, &run.inv, false);
    }
    let (committed, pr) = write_and_commit(&a, &run, sink, git.as_ref())?;
    finish(&run, sink, committed.as_ref(), pr.as_ref());
    Ok(Exit::Ok)
}

/// What the git flow found before anything is written.
enum Git {
    /// `--no-commit`: the files are rewritten in place.
    NoCommit,
    /// A repository ready to take the commit.
    Flow(git::Repo, git::Prepared),
    /// The branch already holds exactly this change, as this commit (a
    /// re-run); the index lock is taken again while the outputs are written.
    AlreadyDone(git::Repo, git::Prepared, git2::Oid),
}

fn prepare_git(a: &ApplyArgs, run: &ApplyRun) -> Result<Git, Failure> {
    let plan = &run.plan;
    let start = &run.start;
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(p) = &a.review_out {
        outputs.push(("--review-out", p));
    }
    if let (Some(_), Some(p)) = (&run.secret_spec, &a.secret_out) {
        outputs.push(("--secret-out", p));
    }
    if a.no_commit {
        for (flag, path) in &outputs {
            rebind::write::check_creatable(flag, path)?;
        }
        return Ok(Git::NoCommit);
    }
    let Some(repo) = git::open(start)? else {
        return Err(anyhow!(
            "{} is not in a git repository: pass --no-commit to rewrite the files in place; nothing written",
            start.display()
        )
        .into());
    };
    let default = git::default_branch(&plan.to.host);
    for p in a.rebind.walk.paths.iter().skip(1) {
        let other = git::open(if p.is_file() {
            p.parent().unwrap_or(p)
        } else {
            p
        })?;
        if other.is_none_or(|r| r.workdir() != repo.workdir()) {
            return Err(anyhow!(
                "{}: not in the same git repository as {}; nothing written",
                p.display(),
                start.display()
            )
            .into());
        }
    }
    // Before the blobs go into the object database.
    pr_target(a, run, &repo, a.branch.as_deref().unwrap_or(&default))?;
    let prep = repo.prepare(
        &plan.files,
        a.branch.as_deref(),
        &default,
        a.push.as_deref(),
        &outputs,
    )?;
    Ok(match prep.already_done {
        Some(commit) => Git::AlreadyDone(repo, prep, commit),
        None => Git::Flow(repo, prep),
    })
}

/// A re-run whose change is already committed, as `commit` on `branch`:
/// the outputs are written again (the retry of a failed one; under the
/// index lock when `prep` is the repository's state, checked again), the
/// branch is pushed when `--push` asks (the retry of a failed push), and
/// the report names the branch and the commit.
fn already_done(
    a: &ApplyArgs,
    run: &ApplyRun,
    sink: &mut Sink,
    repo: &git::Repo,
    prep: Option<&git::Prepared>,
    branch: &str,
    commit: &str,
) -> Outcome {
    pr_target(a, run, repo, branch)?;
    if let Some(prep) = prep {
        repo.lock_and_recheck(prep, &run.plan.files)?;
    }
    write_outputs(a, sink, run, Some(branch))?;
    if let Some(prep) = prep {
        // Released before the push: its hooks may run git.
        prep.release();
    }
    let mut c = git::Committed {
        branch: branch.to_string(),
        commit: commit.to_string(),
        pushed_to: None,
    };
    if let Some(remote) = &a.push {
        let said = git::push(repo, remote, &mut c).map_err(Failure::after_write)?;
        sink.info(&said);
    }
    let pr = open_pr(a, run, repo, &c)?;
    if run.json {
        let mut r = run.report("already_done");
        r.branch = Some(c.branch.clone());
        r.commit = Some(c.commit.clone());
        r.pushed_to = c.pushed_to.clone();
        r.pull_request = pr.as_ref().map(json::PullRequestJson::new);
        sink.out(&json::render(&r));
    } else {
        let mut msg = format!(
            "Branch {branch} already holds exactly this change (commit {})",
            &commit[..12.min(commit.len())]
        );
        match &c.pushed_to {
            Some(r) => msg.push_str(&format!("; pushed to {r}.\n")),
            None => msg.push_str("; nothing to do.\n"),
        }
        if let Some(pr) = &pr {
            msg.push_str(&text::pull_request_line(pr));
        }
        sink.say(&msg);
    }
    Ok(Exit::Ok)
}

/// Shows the plan and asks; false when declined (nothing written). Refuses
/// when there is no terminal to ask on.
fn confirmed(run: &ApplyRun, sink: &mut Sink, branch: Option<&str>) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("refusing to write without confirmation: stdin is not a terminal; review with `rebind diff` and pass --yes");
    }
    let plan = &run.plan;
    // With JSON on stdout, the plan and the prompt go to stderr.
    show_plan(sink, plan, &run.inv, run.json);
    let what = format!(
        "{} in {}",
        count(plan.change_count(), "change"),
        count(plan.manifest_count(), "file")
    );
    let q = match branch {
        Some(b) => format!("Create branch {b} with {what}?"),
        None => format!("Rewrite {what} in place?"),
    };
    if confirm(sink, &q)? {
        return Ok(true);
    }
    sink.info("Nothing written.\n");
    if run.json {
        sink.out(&json::render(&run.report("declined")));
    }
    Ok(false)
}

/// Writes the files (and commits them in the git flow), then the outputs,
/// then pushes and opens the pull request. A failure once the files are
/// written is exit 3, saying what exists.
fn write_and_commit(
    a: &ApplyArgs,
    run: &ApplyRun,
    sink: &mut Sink,
    git: Option<&(git::Repo, git::Prepared)>,
) -> Result<(Option<git::Committed>, Option<pr::Opened>), Failure> {
    let plan = &run.plan;
    let mut committed = match git {
        Some((repo, prep)) => Some(git::commit_flow(
            repo,
            prep,
            &plan.files,
            &text::commit_message(plan),
            None,
        )?),
        None => {
            write_in_place(&run.start, plan)?;
            None
        }
    };
    // The files are written (and committed) now: a failure from here on is
    // not "nothing written" (exit 2) but exit 3, saying what exists.
    let branch = committed.as_ref().map(|c| c.branch.clone());
    if let Err(e) = write_outputs(a, sink, run, branch.as_deref()) {
        let cause = format!("{e:#}");
        return Err(Failure::after_write(match &committed {
            Some(c) => anyhow::Error::new(git::AfterCommit {
                branch: c.branch.clone(),
                commit: c.commit.clone(),
                retry: "the same rebind apply command again: the branch already holds the change, so it only writes the review and the Secret".into(),
                cause,
            }),
            None => anyhow!(
                "{cause}; the files ARE rewritten in place (nothing else was written)"
            ),
        }));
    }
    // Last, so that a failed push (exit 3) leaves every output written.
    let mut pr = None;
    if let (Some((repo, _)), Some(c), Some(remote)) = (git, committed.as_mut(), &a.push) {
        let said = git::push(repo, remote, c).map_err(Failure::after_write)?;
        sink.info(&said);
        pr = open_pr(a, run, repo, c)?;
    }
    Ok((committed, pr))
}

/// What `--pr` opens, checked before anything is written: the client (from
/// `--pr-client`, else the push remote's host), the repository, the base
/// (the after-merge model's, else found the same way), the title (the
/// commit's subject). `None` without `--pr`.
fn pr_target(
    a: &ApplyArgs,
    run: &ApplyRun,
    repo: &git::Repo,
    branch: &str,
) -> Result<Option<pr::Target>> {
    let (true, Some(remote)) = (a.pr, &a.push) else {
        return Ok(None);
    };
    let urls = repo.push_urls(remote);
    if urls.is_empty() {
        bail!("--push {remote}: no such remote, or it has no URL, so --pr cannot tell where to open the pull request; nothing written");
    }
    let Some((client, parsed)) = pr::choose(&urls, a.pr_client) else {
        bail!(
            "--pr: cannot tell whether the remote {remote} ({}) is on GitHub or GitLab: pass --pr-client gh or --pr-client glab (the host must be named in its URL, and the URL must name the repository as OWNER/REPO or GROUP/.../REPO); nothing written",
            urls.join(", ")
        );
    };
    let base = match &run.plan.after_merge {
        Some(report) => report.base.clone(),
        None => git::repo_facts(&run.start, a.rebind.base.as_deref(), Some(branch))
            .and_then(|(_, facts)| facts.base),
    };
    let message = text::commit_message(&run.plan);
    Ok(Some(pr::Target {
        client,
        remote: parsed,
        head: branch.to_string(),
        base: base.map(|(b, _)| b),
        title: message.lines().next().unwrap_or_default().to_string(),
        draft: a.pr_draft,
        labels: a.pr_label.clone(),
        reviewers: a.pr_reviewer.clone(),
    }))
}

/// `--pr`, after the push: opens the pull request of the committed branch
/// or updates the body of its open one. The body, the review Markdown, is
/// kept in the git directory as `rebind-pr-<commit>.md`, which the command
/// to finish by hand reads, and which a re-run on the branch itself (where
/// the review cannot be rendered again: the files are rebound) sends again.
/// A failure is exit 3 naming the branch, the commit and that command.
fn open_pr(
    a: &ApplyArgs,
    run: &ApplyRun,
    repo: &git::Repo,
    c: &git::Committed,
) -> Result<Option<pr::Opened>, Failure> {
    let after = |retry: String, cause: String| {
        Failure::after_write(git::AfterCommit {
            branch: c.branch.clone(),
            commit: c.commit.clone(),
            retry,
            cause: format!("the branch is pushed, but its pull request is not opened: {cause}"),
        })
    };
    let again = "the same rebind apply command again".to_string();
    // Checked before the first write, so only a remote changed since fails
    // here: its "nothing written" is no longer true.
    let checked = pr_target(a, run, repo, &c.branch).map_err(|e| {
        let e = format!("{e:#}");
        after(
            again.clone(),
            e.trim_end_matches("; nothing written").to_string(),
        )
    });
    let Some(target) = checked? else {
        return Ok(None);
    };
    let file = repo.git_dir().join(format!("rebind-pr-{}.md", c.commit));
    let body = if run.plan.files.is_empty() {
        std::fs::read_to_string(&file).map_err(|e| {
            after(
                format!("the same rebind apply command, from the branch {} was made from (there it renders the review again)", c.branch),
                format!("the review of {} is rendered from the files before the change, and {} cannot be read ({e})", c.commit, file.display()),
            )
        })?
    } else {
        let md = text::review_markdown(&run.plan, Some(&c.branch));
        rebind::write::write_file(
            &file,
            md.as_bytes(),
            rebind::write::Mode::Keep,
            rebind::write::Existing::Replace,
            &|_| Ok(()),
        )
        .map_err(|e| after(again.clone(), format!("{e:#}")))?;
        md
    };
    pr::open_or_update(&target, &body, &file, repo.workdir())
        .map(Some)
        .map_err(|u| after(u.by_hand, format!("{:#}", u.cause)))
}

/// `apply --no-commit`: writes the files under the tree's lock (the git
/// index lock where there is a repository), so that a concurrent run cannot
/// write between this run's last check and its renames. A signal during the
/// write puts every file back.
fn write_in_place(start: &std::path::Path, plan: &Plan) -> Result<()> {
    let _lock = git::lock_tree(start)?;
    rebind::signals::pause_point("locked");
    rebind::signals::enter_critical();
    let paused = |n: usize| {
        if n == 0 {
            rebind::signals::pause_point("writing");
        }
    };
    let hooks = rebind::write::Hooks {
        after_rename: Some(&paused),
        ..Default::default()
    };
    rebind::write::write_all_with(&plan.files, &hooks)?;
    if let Err(stop) = rebind::signals::check() {
        let back: Vec<_> = plan.files.iter().map(|f| f.reversed()).collect();
        let what = match rebind::write::write_all(&back) {
            Ok(()) => "every file was put back as it was; nothing written".to_string(),
            Err(e) => {
                format!("putting the files back failed: {e:#}; the files ARE rewritten in place")
            }
        };
        return Err(anyhow::Error::new(stop).context(what));
    }
    Ok(())
}

/// The report of a finished apply.
fn finish(
    run: &ApplyRun,
    sink: &mut Sink,
    committed: Option<&git::Committed>,
    pr: Option<&pr::Opened>,
) {
    let plan = &run.plan;
    if run.json {
        let mut r = run.report("applied");
        r.written = true;
        if let Some(c) = committed {
            r.branch = Some(c.branch.clone());
            r.commit = Some(c.commit.clone());
            r.pushed_to = c.pushed_to.clone();
        }
        r.pull_request = pr.map(json::PullRequestJson::new);
        sink.out(&json::render(&r));
        return;
    }
    let mut msg = format!(
        "Rewrote {} in {}",
        count(plan.change_count(), "occurrence"),
        count(plan.manifest_count(), "file")
    );
    if let Some(c) = committed {
        msg.push_str(&format!(
            " and committed them as {} on branch {} (now checked out)",
            &c.commit[..12],
            c.branch
        ));
        if let Some(r) = &c.pushed_to {
            msg.push_str(&format!("; pushed to {r}"));
        }
    }
    msg.push_str(".\n");
    if let Some(pr) = pr {
        msg.push_str(&text::pull_request_line(pr));
    }
    sink.say(&msg);
}

/// Writes `--secret-out` (unless the repository's own registration is
/// rebound) and `--review-out`. Called once the files are written, and
/// again by a re-run whose branch already holds the change: that re-run is
/// how a failed output is retried.
fn write_outputs(
    a: &ApplyArgs,
    sink: &mut Sink,
    run: &ApplyRun,
    branch: Option<&str>,
) -> Result<()> {
    let (plan, secret_spec, start) = (&run.plan, run.secret_spec.as_ref(), &run.start);
    if let (Some(_), Some(path), Some(r)) = (secret_spec, &a.secret_out, plan.registrations.first())
    {
        // One registration per server: the repository's own is rebound.
        sink.info(&format!(
            "--secret-out {}: not written: this change rebinds the repository's own registration {} ({}:{}:{}) to {}; a second Secret for the same server would make ArgoCD pick one at random. Put the new cluster's token and CA in {} instead.\n",
            path.display(),
            r.resource,
            r.rel,
            r.line,
            r.column,
            plan.to.url(),
            r.reads
        ));
    } else if let (Some(spec), Some(path)) = (secret_spec, &a.secret_out) {
        secret::write_manifest(path, &secret::render(spec), spec.holds_token())?;
        let warnings = secret::existing_warnings(None, start, spec)?;
        if !warnings.is_empty() {
            sink.info(&warnings);
        }
    }
    if let Some(path) = &a.review_out {
        let md = text::review_markdown(plan, branch);
        rebind::write::write_file(
            path,
            md.as_bytes(),
            rebind::write::Mode::Keep,
            rebind::write::Existing::Replace,
            &|_| Ok(()),
        )
        .with_context(|| format!("--review-out {}: cannot write", path.display()))?;
    }
    Ok(())
}
