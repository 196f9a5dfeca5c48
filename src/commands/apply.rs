//! `diff` and `apply`, resolved once and run: the whole rebind flow after
//! the command line. [`ApplyOptions`] (plain data, no argument-parser
//! types) is resolved into one run before anything is shown or written
//! (the plan, its file errors, the output checks, the Secret to write);
//! then [`run`] drives the git flow: prepare (every check before the first
//! write), a re-run whose branch already holds the change, the question,
//! the write and the commit, the outputs (`--review-out`, `--secret-out`),
//! the push and the pull request, and the reports. [`diff`] plans and
//! renders the same rebind in any report format.
//!
//! The question before writing is asked through a [`Prompt`] the caller
//! passes in (the command line's terminal); the plan shown before it, and
//! what the push says, are progress on the [`Sink`]; the final report
//! (`applied`, `already_done`, `nothing_to_change`, `declined`, `diff`'s
//! plan) is what [`run`] and [`diff`] return, rendered by their caller.

use crate::commands::cutover::{self, Request};
use crate::discover::walk::Skipped;
use crate::edit::write;
use crate::find::inventory::Inventory;
use crate::output::report;
use crate::output::{
    json, rules, text, warn_skipped, Done, Exit, Failure, Finding, Format, Parts, Report, Reported,
    Rule, Sink,
};
use crate::repo::{git, pr};
use crate::review::plan::Plan;
use crate::review::secret;
use crate::review::secret::SecretOptions;
use crate::sys::signals;
use crate::text::words::count;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// `rebind diff`, resolved: the rebind (the format is its report's,
/// rendered by the caller).
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub request: Request,
}

/// `rebind apply`, resolved from its flags.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// The rebind (its `branch` is set from [`ApplyOptions::branch`]).
    pub request: Request,
    /// Text, or JSON on stdout (the plan and the prompt then go to stderr).
    pub format: Format,
    /// Do not ask.
    pub yes: bool,
    /// Rewrite in place: no branch, no commit.
    pub no_commit: bool,
    /// The branch to create (default: `rebind/<first label of the new host>`).
    pub branch: Option<String>,
    /// Push the branch to this remote after the commit.
    pub push: Option<String>,
    /// Open (or update) the pull request after the push.
    pub pr: Option<PrOptions>,
    /// Also write the review Markdown here.
    pub review_out: Option<PathBuf>,
    /// ArgoCD's name for the cluster, for `secret_out`.
    pub cluster_name: Option<String>,
    /// Also write the new cluster's Secret here.
    pub secret_out: Option<PathBuf>,
    /// The Secret's shape.
    pub secret: SecretOptions,
}

/// `--pr`: how the pull request is opened.
#[derive(Debug, Clone, Default)]
pub struct PrOptions {
    /// The client, for a host whose name says neither github nor gitlab.
    pub client: Option<pr::Client>,
    pub draft: bool,
    pub labels: Vec<String>,
    pub reviewers: Vec<String>,
}

/// Where the question before writing is asked (the command line passes
/// its terminal).
pub trait Prompt {
    /// Whether anyone can answer (standard input is a terminal).
    fn is_terminal(&self) -> bool;
    /// The answer, one line (the question is already on the sink).
    fn read_line(&mut self) -> Result<String>;
}

/// `rebind diff`: the plan in the format asked for; exit 1 when changes
/// are pending.
pub fn diff(o: &DiffOptions) -> Done {
    let (plan, inv) = cutover::plan(&o.request)?;
    let (status, exit) = if plan.files.is_empty() {
        ("nothing_to_change", Exit::Ok)
    } else {
        ("pending", Exit::Pending)
    };
    // The plan is reported, then its files that cannot be rewritten fail the run.
    let failed = fail_on_errors(&plan).err();
    let diff = DiffReport { plan, inv, status };
    Ok(match failed {
        Some(f) => Reported::failed(diff, f),
        None => Reported::new(diff, exit),
    })
}

/// `diff`'s report: the plan, and what could not be read.
struct DiffReport {
    plan: Plan,
    inv: Inventory,
    status: &'static str,
}

impl Report for DiffReport {
    fn text(&self, sink: &mut Sink) {
        show_plan(sink, &self.plan, &self.inv, false);
    }
    fn json(&self, sink: &mut Sink) {
        let r = json::PlanReport::new("diff", self.status, &self.plan, &self.inv.skipped);
        sink.out(&json::render(&r));
    }
    fn findings(&self) -> Vec<Finding<'_>> {
        Finding::from_plan(&self.plan)
    }
    fn rules(&self) -> &'static [Rule] {
        &[rules::PENDING, rules::MENTION, rules::UNSAFE]
    }
    fn skipped(&self) -> &[Skipped] {
        &self.inv.skipped
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

/// Refuses a plan with files that cannot be rewritten, naming each.
fn fail_on_errors(plan: &Plan) -> Result<(), Failure> {
    cutover::fail_on_errors(plan).map_err(|e| Failure::from(e).at(&plan.errors))
}

/// An `apply` resolved before anything is shown or written: the options,
/// the plan, the Secret to write, where the repository search starts.
struct Run<'o> {
    o: &'o ApplyOptions,
    plan: Plan,
    inv: Inventory,
    secret_spec: Option<secret::Spec>,
    start: PathBuf,
    /// `--pr`'s base when no base branch is known: the branch checked out
    /// when the review was made (what the review takes as the base),
    /// decided once, before the cutover branch is checked out.
    pr_base: std::cell::OnceCell<Option<String>>,
}

impl Run<'_> {
    fn report(&self, status: &'static str) -> json::PlanReport<'_> {
        json::PlanReport::new("apply", status, &self.plan, &self.inv.skipped)
    }

    /// The JSON report of a run whose change is written (`applied`), or
    /// was already (`already_done`): with its commit and pull request.
    fn written(
        &self,
        status: &'static str,
        c: Option<&git::Committed>,
        pr: Option<&pr::Opened>,
    ) -> String {
        let mut r = self.report(status);
        r.written = status == "applied";
        if let Some(c) = c {
            r.branch = Some(c.branch.clone());
            r.commit = Some(c.commit.clone());
            r.pushed_to = c.pushed_to.clone();
        }
        r.pull_request = pr.map(json::PullRequestJson::new);
        json::render(&r)
    }

    /// The output files this run writes, with their flags (`--secret-out`
    /// only when a Secret is rendered).
    fn outputs(&self) -> Vec<(&'static str, &Path)> {
        outputs(self.o, self.secret_spec.is_some())
    }
}

/// The output files `o` names, with their flags; `--secret-out` only with
/// `secret`.
fn outputs(o: &ApplyOptions, secret: bool) -> Vec<(&'static str, &Path)> {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = &o.review_out {
        outputs.push(("--review-out", p));
    }
    if let (true, Some(p)) = (secret, &o.secret_out) {
        outputs.push(("--secret-out", p));
    }
    outputs
}

/// The new cluster's registration for `--secret-out`: named by
/// `--cluster-name`, else (with `--describe-to`) by the new EKS name, so it
/// sits beside the old cluster's (the rollback target); its CA and
/// `awsAuthConfig.clusterName` from the describe file; its server the new
/// endpoint, or the new ARN where the repository registers by ARN.
fn new_registration(
    o: &ApplyOptions,
    request: &Request,
    plan: &Plan,
) -> Result<Option<secret::Spec>> {
    let mut opts = o.secret.clone();
    if opts.describe.is_none() && opts.described.is_none() {
        opts.described = request.new_cluster.clone();
    }
    let described_name = opts.described.as_ref().map(|d| d.name.clone());
    let name = match (&o.cluster_name, &o.secret_out, described_name) {
        (Some(n), _, _) => n.clone(),
        (None, Some(_), Some(d)) => d,
        (None, Some(_), None) => {
            bail!("--secret-out needs --cluster-name NAME (or --describe-to FILE, whose EKS name it takes)")
        }
        (None, None, _) => return Ok(None),
    };
    // Applications sent by `destination.name` move to the new EKS name (or
    // the name derived from it): the registration written must be that name.
    let named = plan.names.iter().flat_map(|n| &n.changes).find(|c| {
        use crate::model::names::NamePosition::{DestinationArgocdName, DestinationName};
        matches!(c.change.position, DestinationName | DestinationArgocdName)
            && c.change.new_text != name
    });
    if let (Some(c), None) = (named, plan.added_registrations.first()) {
        bail!(
            "{}:{}:{}: {} moves to the cluster name {:?}, but the registration --secret-out writes is named {name:?}: the Application would point at no registration; give --cluster-name {:?} (or none); nothing written",
            c.rel,
            c.change.line,
            c.change.column,
            c.change.yaml_path,
            c.change.new_text,
            c.change.new_text
        );
    }
    let by_arn = plan.names.iter().flat_map(|n| &n.changes).any(|c| {
        use crate::model::names::NamePosition::{ClusterArn, RegistrationArn};
        matches!(c.change.position, RegistrationArn | ClusterArn)
    });
    let server = match (by_arn, opts.described.as_ref().and_then(|d| d.arn.clone())) {
        (true, Some(arn)) => arn,
        _ => plan.to.url(),
    };
    secret::spec(&opts, &name, &server).map(Some)
}

fn resolve(o: &ApplyOptions) -> Result<Run<'_>, Failure> {
    let mut request = o.request.clone();
    request.branch = o.branch.clone();
    let (plan, inv) = cutover::plan(&request)?;
    signals::pause_point("planned");
    fail_on_errors(&plan)?;
    if o.secret_out.is_none() && !o.secret.is_empty() {
        return Err(anyhow!("the cluster Secret flags (--secret-name, --aws-role-arn, --external-secret, ...) shape the Secret --secret-out writes: pass --cluster-name NAME --secret-out FILE too").into());
    }
    // An output that is one of the files this run rewrites (or the other
    // output) is refused before anything else about it is checked.
    write::check_outputs(&outputs(o, true), &plan.files)?;
    let secret_spec = new_registration(o, &request, &plan)?;
    if let Some(spec) = &secret_spec {
        let root = secret::search_root(&o.request.walk.repo_start());
        secret::refuse_name_collisions(root.as_deref(), spec, o.request.live.as_deref())?;
    }
    if let (Some(spec), Some(path)) = (&secret_spec, &o.secret_out) {
        secret::check_target(path, spec.holds_token()).with_context(|| {
            format!(
                "--secret-out {}: cannot take the cluster Secret; nothing written",
                path.display()
            )
        })?;
    }
    Ok(Run {
        o,
        plan,
        inv,
        secret_spec,
        start: o.request.walk.repo_start(),
        pr_base: std::cell::OnceCell::new(),
    })
}

/// `rebind apply`: resolves the run, then writes the rebind (on a new
/// branch, or in place), its outputs, the push and the pull request.
pub fn run(o: &ApplyOptions, sink: &mut Sink, prompt: &mut dyn Prompt) -> Done {
    let mut run = resolve(o)?;
    if run.plan.files.is_empty() && !o.no_commit {
        // A re-run on the branch an earlier run made (its push failed, say):
        // HEAD is that run's commit, so the change is done; finish the rest.
        // With `--cluster`, the config there already names the new
        // endpoint (`from` is `to`): the commit says what it rebound.
        if let Some(repo) = git::open(&run.start).ok().flatten() {
            let (from, to) = (run.plan.from.url(), run.plan.to.url());
            let known = (run.plan.from.key() != run.plan.to.key()).then_some(from.as_str());
            // Without `--from` known, only when something is left to do
            // (the push, the outputs); else "nothing to change" is true.
            let left = o.push.is_some() || !run.outputs().is_empty();
            let found = match known {
                Some(_) => repo.head_cutover(known, &to),
                None if left => repo.head_cutover(None, &to),
                None => None,
            };
            if let Some((branch, commit, said)) = found {
                if known.is_none() {
                    if let Ok(f) = crate::text::endpoint::Endpoint::parse("--from", &said) {
                        run.plan.from = f;
                    }
                }
                return already_done(&run, sink, &repo, None, &branch, &commit.to_string());
            }
        }
    }
    if run.plan.files.is_empty() {
        let json = json::render(&run.report("nothing_to_change"));
        let Run { plan, inv, .. } = run;
        let text = move |sink: &mut Sink| {
            show_plan(sink, &plan, &inv, false);
            sink.say("Nothing to change.\n");
        };
        return Ok(Reported::new(Parts::new(text, json), Exit::Ok));
    }
    let run = run;
    let plan = &run.plan;
    // The git flow's checks all run before anything is shown or written.
    let git = match prepare_git(&run)? {
        Git::AlreadyDone(repo, prep, commit) => {
            let commit = commit.to_string();
            return already_done(&run, sink, &repo, Some(&prep), &prep.branch, &commit);
        }
        Git::Flow(repo, prep) => Some((repo, prep)),
        Git::NoCommit => None,
    };
    if !o.yes {
        let branch = git.as_ref().map(|(_, prep)| prep.branch.as_str());
        if !confirmed(&run, sink, prompt, branch)? {
            let declined = json::render(&run.report("declined"));
            return Ok(Reported::new(Parts::json(declined), Exit::Pending));
        }
    } else {
        // The plan, before it is written (with text on stdout only).
        report::progress(sink, o.format, |sink, aside| {
            if !aside {
                show_plan(sink, plan, &run.inv, false)
            }
        });
    }
    let (committed, pr) = write_and_commit(&run, sink, git.as_ref())?;
    Ok(Reported::new(
        applied(&run, committed.as_ref(), pr.as_ref()),
        Exit::Ok,
    ))
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

fn prepare_git(run: &Run) -> Result<Git, Failure> {
    let (o, plan, start) = (run.o, &run.plan, &run.start);
    let outputs = run.outputs();
    if o.no_commit {
        for (flag, path) in &outputs {
            write::check_creatable(flag, path)?;
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
    for p in o.request.walk.paths.iter().skip(1) {
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
    let target = pr_target(run, &repo, o.branch.as_deref().unwrap_or(&default))?;
    let review = full_review(run, target.as_ref());
    let prep = repo.prepare_adding(
        &plan.files,
        review.as_ref().map(|(p, md)| (Path::new(p), md.as_str())),
        o.branch.as_deref(),
        &default,
        o.push.as_deref(),
        &outputs,
    )?;
    Ok(match prep.already_done {
        Some(commit) => Git::AlreadyDone(repo, prep, commit),
        None => Git::Flow(repo, prep),
    })
}

/// The full review to commit beside the rewrite (its path and bytes):
/// only with `--pr`, and only when it is longer than the host takes in a
/// pull-request body, which then points to it.
fn full_review(run: &Run, target: Option<&pr::Target>) -> Option<(String, String)> {
    let target = target?;
    let md = text::review_markdown(&run.plan, Some(&target.head));
    (md.chars().count() > target.client.body_limit()).then(|| (pr::review_path(&target.head), md))
}

/// A re-run whose change is already committed, as `commit` on `branch`:
/// the outputs are written again (the retry of a failed one; under the
/// index lock when `prep` is the repository's state, checked again), the
/// branch is pushed when `--push` asks (the retry of a failed push), and
/// the report names the branch and the commit.
fn already_done(
    run: &Run,
    sink: &mut Sink,
    repo: &git::Repo,
    prep: Option<&git::Prepared>,
    branch: &str,
    commit: &str,
) -> Done {
    // Checked before anything is written, as the first run does.
    if let Some(remote) = &run.o.push {
        repo.check_remote(remote)?;
    }
    pr_target(run, repo, branch)?;
    if let Some(prep) = prep {
        repo.lock_and_recheck(prep, &run.plan.files)?;
    }
    write_outputs(run, sink, Some(branch))?;
    if let Some(prep) = prep {
        // Released before the push: its hooks may run git.
        prep.release();
    }
    let mut c = git::Committed {
        branch: branch.to_string(),
        commit: commit.to_string(),
        pushed_to: None,
    };
    if let Some(remote) = &run.o.push {
        let said = git::push(repo, remote, &mut c).map_err(Failure::after_write)?;
        sink.info(&said);
    }
    let pr = open_pr(run, repo, &c)?;
    let json = run.written("already_done", Some(&c), pr.as_ref());
    let text = {
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
        msg
    };
    Ok(Reported::new(Parts::said(text, json), Exit::Ok))
}

/// Shows the plan and asks; false when declined (nothing written; the
/// caller reports it). Refuses when there is no terminal to ask on.
fn confirmed(
    run: &Run,
    sink: &mut Sink,
    prompt: &mut dyn Prompt,
    branch: Option<&str>,
) -> Result<bool> {
    if !prompt.is_terminal() {
        bail!("refusing to write without confirmation: stdin is not a terminal; review with `rebind diff` and pass --yes");
    }
    let plan = &run.plan;
    // With JSON on stdout, the plan and the prompt go to stderr.
    report::progress(sink, run.o.format, |sink, aside| {
        show_plan(sink, plan, &run.inv, aside)
    });
    let what = crate::output::text::scope(plan);
    let q = match branch {
        Some(b) => format!("Create branch {b} with {what}?"),
        None => format!("Rewrite {what} in place?"),
    };
    sink.info(&format!("{q} [y/N] "));
    let line = prompt.read_line()?;
    if matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return Ok(true);
    }
    sink.info("Nothing written.\n");
    Ok(false)
}

/// Writes the files (and commits them in the git flow), then the outputs,
/// then pushes and opens the pull request. A failure once the files are
/// written is exit 3, saying what exists.
fn write_and_commit(
    run: &Run,
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
    if let Err(e) = write_outputs(run, sink, branch.as_deref()) {
        let cause = format!("{e:#}");
        return Err(Failure::after_write(match &committed {
            Some(c) => anyhow::Error::new(git::AfterCommit {
                branch: c.branch.clone(),
                commit: c.commit.clone(),
                retry: "the same rebind apply command again: the branch already holds the change, so it only writes the review and the Secret".into(),
                cause,
                pushed: false,
                code: "output-failed",
            }),
            None => anyhow!(
                "{cause}; the files ARE rewritten in place (nothing else was written)"
            ),
        }));
    }
    // Last, so that a failed push (exit 3) leaves every output written.
    let mut pr = None;
    if let (Some((repo, _)), Some(c), Some(remote)) = (git, committed.as_mut(), &run.o.push) {
        let said = git::push(repo, remote, c).map_err(Failure::after_write)?;
        sink.info(&said);
        pr = open_pr(run, repo, c)?;
    }
    Ok((committed, pr))
}

/// What `--pr` opens, checked before anything is written: the client (from
/// `--pr-client`, else the push remote's host), the repository, the base
/// (the after-merge model's, else found the same way), the title (the
/// commit's subject). `None` without `--pr`.
fn pr_target(run: &Run, repo: &git::Repo, branch: &str) -> Result<Option<pr::Target>> {
    let (Some(options), Some(remote)) = (&run.o.pr, &run.o.push) else {
        return Ok(None);
    };
    let urls = repo.push_urls(remote);
    if urls.is_empty() {
        bail!("--push {remote}: no such remote, or it has no URL, so --pr cannot tell where to open the pull request; nothing written");
    }
    let Some((client, parsed)) = pr::choose(&urls, options.client) else {
        bail!(
            "--pr: cannot tell whether the remote {remote} ({}) is on GitHub or GitLab: pass --pr-client gh or --pr-client glab (the host must be named in its URL, and the URL must name the repository as OWNER/REPO or GROUP/.../REPO); nothing written",
            urls.join(", ")
        );
    };
    for (flag, values) in [
        ("--pr-label", &options.labels),
        ("--pr-reviewer", &options.reviewers),
    ] {
        if values.iter().any(|v| v.trim().is_empty()) {
            bail!("{flag}: an empty value names nothing; nothing written");
        }
    }
    let message = text::commit_message(&run.plan);
    Ok(Some(pr::Target {
        client,
        remote: parsed,
        head: branch.to_string(),
        base: Some(pr_base(run, repo, branch)?),
        title: message.lines().next().unwrap_or_default().to_string(),
        draft: options.draft,
        labels: options.labels.clone(),
        reviewers: options.reviewers.clone(),
    }))
}

/// The branch the pull request merges into: the base the review was
/// computed against (`--base`, else the remote's HEAD, else the upstream),
/// else the branch checked out when the review was made, which the review
/// names as its base. Refused when there is none (a detached HEAD, or a
/// re-run on the cutover branch itself): the pull request would target a
/// branch the review did not look at.
fn pr_base(run: &Run, repo: &git::Repo, branch: &str) -> Result<String> {
    let known = match &run.plan.after_merge {
        Some(report) => report.base.clone(),
        None => git::repo_facts(&run.start, run.o.request.base.as_deref(), Some(branch))
            .and_then(|(_, facts)| facts.base),
    };
    if let Some((base, _)) = known {
        return Ok(base);
    }
    let head = run
        .pr_base
        .get_or_init(|| repo.head_branch().filter(|h| h != branch));
    head.clone().ok_or_else(|| {
        anyhow!("--pr: the base branch is unknown (no --base, no remote HEAD, no upstream) and no other branch is checked out to take as it: pass --base BRANCH, the branch the pull request merges into; nothing written")
    })
}

/// `--pr`, after the push: opens the pull request of the committed branch
/// or updates the body of its open one. The body, the review Markdown, is
/// kept in the git directory as `rebind-pr-<commit>.md`, which the command
/// to finish by hand reads, and which a re-run on the branch itself (where
/// the review cannot be rendered again: the files are rebound) sends again.
/// A failure is exit 3 naming the branch, the commit and that command.
fn open_pr(run: &Run, repo: &git::Repo, c: &git::Committed) -> Result<Option<pr::Opened>, Failure> {
    let after = |retry: String, cause: String| {
        Failure::after_write(git::AfterCommit {
            branch: c.branch.clone(),
            commit: c.commit.clone(),
            retry,
            cause: format!("the branch is pushed, but its pull request is not opened: {cause}"),
            pushed: true,
            code: "pull-request-failed",
        })
    };
    let again = "the same rebind apply command again".to_string();
    // Checked before the first write, so only a remote changed since fails
    // here: its "nothing written" is no longer true.
    let checked = pr_target(run, repo, &c.branch).map_err(|e| {
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
        // Longer than the host takes: cut at a section, pointing to the
        // rest, the full review committed on the branch (or, where an
        // earlier run made the commit without it, the commit's message,
        // which lists every change).
        let path = pr::review_path(&c.branch);
        let mut pointer = format!(
            "The full review is committed on branch `{}` as `{path}`: {} (`git show {}:{path}`)",
            c.branch,
            target.blob_url(&path),
            c.branch
        );
        if !repo.commit_holds(&c.commit, Path::new(&path)) {
            pointer = format!(
                "Every change is listed in the message of commit {} on branch `{}` (`git show {}`)",
                c.commit, c.branch, c.commit
            );
        }
        if let Some(p) = &run.o.review_out {
            pointer.push_str(&format!(
                "; the full review was written to `{}` by the run that opened this",
                p.display()
            ));
        }
        pointer.push('.');
        let md = pr::fit_body(&md, target.client.body_limit(), &pointer);
        write_output(&file, &md).map_err(|e| after(again.clone(), format!("{e:#}")))?;
        md
    };
    pr::open_or_update(&target, &body, &file, repo.workdir())
        .map(Some)
        .map_err(|u| {
            let stopped = u
                .cause
                .chain()
                .find_map(|c| c.downcast_ref::<signals::Interrupted>())
                .copied();
            match stopped {
                // Exit 128 + the signal, saying what is left.
                Some(stop) => {
                    Failure::after_write(anyhow::Error::new(stop).context(git::AfterCommit {
                        branch: c.branch.clone(),
                        commit: c.commit.clone(),
                        retry: u.by_hand,
                        cause: "the branch is pushed, but its pull request is not opened".into(),
                        pushed: true,
                        code: "pull-request-failed",
                    }))
                }
                None => after(u.by_hand, format!("{:#}", u.cause)),
            }
        })
}

/// One output file (the review), through the one writer: replaced
/// atomically, its mode kept.
fn write_output(path: &Path, text: &str) -> Result<()> {
    write::write_file(
        path,
        text.as_bytes(),
        write::Mode::Keep,
        write::Existing::Replace,
        &|_| Ok(()),
    )
}

/// `apply --no-commit`: writes the files under the tree's lock (the git
/// index lock where there is a repository), so that a concurrent run cannot
/// write between this run's last check and its renames. A signal during the
/// write puts every file back.
fn write_in_place(start: &Path, plan: &Plan) -> Result<()> {
    let _lock = git::lock_tree(start)?;
    signals::pause_point("locked");
    signals::enter_critical();
    let paused = |n: usize| {
        if n == 0 {
            signals::pause_point("writing");
        }
    };
    let hooks = write::Hooks {
        after_rename: Some(&paused),
        ..Default::default()
    };
    write::write_all_with(&plan.files, &hooks)?;
    if let Err(stop) = signals::check() {
        let back: Vec<_> = plan.files.iter().map(|f| f.reversed()).collect();
        let what = match write::write_all(&back) {
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
fn applied(run: &Run, committed: Option<&git::Committed>, pr: Option<&pr::Opened>) -> Parts {
    let plan = &run.plan;
    let json = run.written("applied", committed, pr);
    let text = {
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
        msg
    };
    Parts::said(text, json)
}

/// The repository's own registration by ARN that the plan rebinds, if any.
fn own_arn_registration(plan: &Plan) -> Option<&crate::review::names::NameChangeAt> {
    plan.names
        .iter()
        .flat_map(|n| &n.changes)
        .find(|c| c.change.position == crate::model::names::NamePosition::RegistrationArn)
}

/// Writes `--secret-out` (unless the repository's own registration is
/// rebound) and `--review-out`. Called once the files are written, and
/// again by a re-run whose branch already holds the change: that re-run is
/// how a failed output is retried.
fn write_outputs(run: &Run, sink: &mut Sink, branch: Option<&str>) -> Result<()> {
    let (o, plan, secret_spec) = (run.o, &run.plan, run.secret_spec.as_ref());
    if let (Some(_), Some(path), Some(a)) =
        (secret_spec, &o.secret_out, plan.added_registrations.first())
    {
        // The repository holds the new registration itself, beside the old.
        sink.info(&format!(
            "--secret-out {}: not written: this change adds the new cluster's registration {} ({}:{}:{}) beside the old cluster's, {}, which it keeps; a second Secret for the same server would make ArgoCD pick one at random.\n",
            path.display(),
            a.resource,
            a.rel,
            a.line,
            a.column,
            a.kept
        ));
    } else if let (Some(_), Some(path), Some(r)) =
        (secret_spec, &o.secret_out, plan.registrations.first())
    {
        // One registration per server: the repository's own is rebound.
        sink.info(&format!(
            "--secret-out {}: not written: this change rebinds {}; a second Secret for the same server would make ArgoCD pick one at random. Put the new cluster's token and CA in {} instead.\n",
            path.display(),
            text::own_registration(r, &plan.to, ""),
            r.reads
        ));
    } else if let (Some(_), Some(path), Some(c)) =
        (secret_spec, &o.secret_out, own_arn_registration(plan))
    {
        sink.info(&format!(
            "--secret-out {}: not written: this change rebinds the repository's own registration {} ({}:{}:{}) to the new cluster's ARN; a second Secret for the same server would make ArgoCD pick one at random.\n",
            path.display(),
            c.change.resource.as_deref().unwrap_or("?"),
            c.rel,
            c.change.line,
            c.change.column
        ));
    } else if let (Some(spec), Some(path)) = (secret_spec, &o.secret_out) {
        secret::write_manifest(path, &secret::render(spec), spec.holds_token())?;
        let warnings = secret::existing_warnings(None, &run.start, spec)?;
        if !warnings.is_empty() {
            sink.info(&warnings);
        }
    }
    if let Some(path) = &o.review_out {
        let md = text::review_markdown(plan, branch);
        write_output(path, &md)
            .with_context(|| format!("--review-out {}: cannot write", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const OLD: &str = "https://old.example.com";
    const NEW: &str = "https://new.example.com";

    /// A prompt that answers `answer`, or has no terminal.
    struct Answer(Option<&'static str>);

    impl Prompt for Answer {
        fn is_terminal(&self) -> bool {
            self.0.is_some()
        }
        fn read_line(&mut self) -> Result<String> {
            Ok(self.0.unwrap_or_default().to_string())
        }
    }

    /// A buffer both the sink and the test can see.
    #[derive(Clone, Default)]
    struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// `apply --no-commit` on one manifest, answering `answer`: the outcome
    /// (exit code, or the error), the manifest after it, and stderr.
    fn applied(answer: Option<&'static str>) -> (Result<Exit, String>, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("app.yaml");
        std::fs::write(&app, format!("spec:\n  destination:\n    server: {OLD}\n")).unwrap();
        let o = ApplyOptions {
            request: Request {
                to: NEW.into(),
                from: Some(OLD.into()),
                walk: cutover::Scope {
                    paths: vec![dir.path().to_path_buf()],
                    ..Default::default()
                },
                ..Default::default()
            },
            no_commit: true,
            ..Default::default()
        };
        let err = Shared::default();
        let mut sink = Sink::new(
            Box::new(std::io::sink()),
            Box::new(err.clone()),
            false,
            false,
        );
        let done = run(&o, &mut sink, &mut Answer(answer));
        let outcome =
            report::rendered(&mut sink, o.format, done).map_err(|f| format!("{:#}", f.error));
        let stderr = String::from_utf8(err.0.borrow().clone()).unwrap();
        (outcome, std::fs::read_to_string(&app).unwrap(), stderr)
    }

    #[test]
    fn only_an_explicit_yes_writes() {
        for yes in ["y\n", "Y\n", "yes\n", " YES \n"] {
            let (outcome, text, stderr) = applied(Some(yes));
            assert_eq!(outcome, Ok(Exit::Ok), "{yes:?}");
            assert!(text.contains(NEW) && !text.contains(OLD), "{yes:?}: {text}");
            assert!(
                stderr.contains("Rewrite 1 change in 1 file in place? [y/N] "),
                "{stderr}"
            );
        }
        for no in ["", "\n", "n\n", "no\n", "yep\n", "y es\n"] {
            let (outcome, text, stderr) = applied(Some(no));
            assert_eq!(outcome, Ok(Exit::Pending), "{no:?}");
            assert!(text.contains(OLD) && !text.contains(NEW), "{no:?}: {text}");
            assert!(stderr.contains("Nothing written."), "{no:?}: {stderr}");
        }
    }

    #[test]
    fn without_a_terminal_nothing_is_asked_or_written() {
        let (outcome, text, stderr) = applied(None);
        let e = outcome.unwrap_err();
        assert!(e.contains("stdin is not a terminal"), "{e}");
        assert!(text.contains(OLD) && !text.contains(NEW), "{text}");
        assert!(!stderr.contains("[y/N]"), "{stderr}");
    }
}
