//! `rebind diff` and `rebind apply`: plan a rebind, show it, and (apply)
//! write it on a new git branch or in place.

use super::{warn_skipped, ApplyArgs, RebindArgs};
use anyhow::{bail, Context, Result};
use rebind::cutover::{self, Request};
use rebind::output::{count, json, text, Exit, Format, Sink};
use rebind::rewrite::Plan;
use rebind::{git, secret, Inventory};
use std::io::{BufRead, IsTerminal};

impl RebindArgs {
    /// The library's rebind request.
    fn request(&self) -> Request {
        Request {
            to: self.to.clone(),
            from: self.from.clone(),
            cluster: self.cluster.clone(),
            expect_files: self.expect_files,
            expect_occurrences: self.expect_occurrences,
            allow_merge: self.allow_merge,
            expect_from_audit: self.expect_from_audit.clone(),
            walk: self.walk.request(),
        }
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

pub fn diff(a: RebindArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a
        .format
        .resolve("diff", &[Format::Text, Format::Json, Format::Github])?;
    let (plan, inv) = cutover::plan(&a.request())?;
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
            sink.out(&text::plan_github(&plan));
            warn_skipped(sink, &inv.skipped);
        }
        _ => show_plan(sink, &plan, &inv, false),
    }
    cutover::fail_on_errors(&plan)?;
    Ok(if plan.files.is_empty() {
        Exit::Ok
    } else {
        Exit::Pending
    })
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

pub fn apply(a: ApplyArgs, sink: &mut Sink) -> Result<Exit> {
    let format = a
        .rebind
        .format
        .resolve("apply", &[Format::Text, Format::Json])?;
    let json_out = format == Format::Json;
    let (plan, inv) = cutover::plan(&a.rebind.request())?;
    rebind::signals::pause_point("planned");
    cutover::fail_on_errors(&plan)?;
    let secret_options = a.secret.options();
    if a.secret_out.is_none() && !secret_options.is_empty() {
        bail!("the cluster Secret flags (--secret-name, --aws-role-arn, --external-secret, ...) shape the Secret --secret-out writes: pass --cluster-name NAME --secret-out FILE too");
    }
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
    let skipped = &inv.skipped;
    let report = |status, plan| json::PlanReport::new("apply", status, plan, skipped);
    let start = a.rebind.walk.request().repo_start();
    if plan.files.is_empty() && !a.no_commit {
        // A re-run on the branch an earlier run made (its push failed, say):
        // HEAD is that run's commit, so the change is done; finish the rest.
        if let Some(repo) = git::open(&start).ok().flatten() {
            if let Some((branch, commit)) = repo.head_cutover(&plan.from.url(), &plan.to.url()) {
                let done = Done {
                    repo: &repo,
                    branch,
                    commit: commit.to_string(),
                };
                return finish_done(
                    &a,
                    sink,
                    &plan,
                    secret_spec.as_ref(),
                    &start,
                    done,
                    json_out,
                    skipped,
                );
            }
        }
    }
    if plan.files.is_empty() {
        if json_out {
            sink.out(&json::render(&report("nothing_to_change", &plan)));
        } else {
            show_plan(sink, &plan, &inv, false);
            sink.say("Nothing to change.\n");
        }
        return Ok(Exit::Ok);
    }
    // The git flow's checks all run before anything is shown or written.
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(p) = &a.review_out {
        outputs.push(("--review-out", p));
    }
    if let (Some(_), Some(p)) = (&secret_spec, &a.secret_out) {
        outputs.push(("--secret-out", p));
    }
    let git = if a.no_commit {
        for (flag, path) in &outputs {
            rebind::write::check_creatable(flag, path)?;
        }
        None
    } else {
        let Some(repo) = git::open(&start)? else {
            bail!(
                "{} is not in a git repository: pass --no-commit to rewrite the files in place; nothing written",
                start.display()
            );
        };
        let default = git::default_branch(&plan.to.host);
        for p in a.rebind.walk.paths.iter().skip(1) {
            let other = git::open(if p.is_file() {
                p.parent().unwrap_or(p)
            } else {
                p
            })?;
            if other.is_none_or(|r| r.workdir() != repo.workdir()) {
                bail!(
                    "{}: not in the same git repository as {}; nothing written",
                    p.display(),
                    start.display()
                );
            }
        }
        let prep = repo.prepare(
            &plan.files,
            a.branch.as_deref(),
            &default,
            a.push.as_deref(),
            &outputs,
        )?;
        if let Some(commit) = prep.already_done {
            let done = Done {
                repo: &repo,
                branch: prep.branch.clone(),
                commit: commit.to_string(),
            };
            return finish_done(
                &a,
                sink,
                &plan,
                secret_spec.as_ref(),
                &start,
                done,
                json_out,
                skipped,
            );
        }
        Some((repo, prep))
    };
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            bail!("refusing to write without confirmation: stdin is not a terminal; review with `rebind diff` and pass --yes");
        }
        // With JSON on stdout, the plan and the prompt go to stderr.
        show_plan(sink, &plan, &inv, json_out);
        let what = format!(
            "{} in {}",
            count(plan.change_count(), "change"),
            count(plan.manifest_count(), "file")
        );
        let q = match &git {
            Some((_, prep)) => format!("Create branch {} with {what}?", prep.branch),
            None => format!("Rewrite {what} in place?"),
        };
        if !confirm(sink, &q)? {
            sink.info("Nothing written.\n");
            if json_out {
                sink.out(&json::render(&report("declined", &plan)));
            }
            return Ok(Exit::Pending);
        }
    } else if !json_out {
        show_plan(sink, &plan, &inv, false);
    }
    let mut committed = match &git {
        Some((repo, prep)) => Some(git::commit_flow(
            repo,
            prep,
            &plan.files,
            &text::commit_message(&plan),
            None,
        )?),
        None => {
            write_in_place(&start, &plan)?;
            None
        }
    };
    // The files are written (and committed) now: a failure from here on is
    // not "nothing written" (exit 2) but exit 3, saying what exists.
    let outputs = write_outputs(
        &a,
        sink,
        &plan,
        secret_spec.as_ref(),
        &start,
        committed.as_ref().map(|c| c.branch.as_str()),
    );
    if let Err(e) = outputs {
        let cause = format!("{e:#}");
        return Err(match &committed {
            Some(c) => anyhow::Error::new(git::AfterCommit {
                branch: c.branch.clone(),
                commit: c.commit.clone(),
                retry: "the same rebind apply command again: the branch already holds the change, so it only writes the review and the Secret".into(),
                cause,
            }),
            None => anyhow::Error::new(rebind::output::Partial(format!(
                "{cause}; the files ARE rewritten in place (nothing else was written)"
            ))),
        });
    }
    // Last, so that a failed push (exit 3) leaves every output written.
    if let (Some((repo, _)), Some(c), Some(remote)) = (&git, committed.as_mut(), &a.push) {
        git::push(repo, remote, c)?;
    }
    if json_out {
        let mut r = report("applied", &plan);
        r.written = true;
        if let Some(c) = &committed {
            r.branch = Some(c.branch.clone());
            r.commit = Some(c.commit.clone());
            r.pushed_to = c.pushed_to.clone();
        }
        sink.out(&json::render(&r));
    } else {
        let mut msg = format!(
            "Rewrote {} in {}",
            count(plan.change_count(), "occurrence"),
            count(plan.manifest_count(), "file")
        );
        if let Some(c) = &committed {
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
        sink.say(&msg);
    }
    Ok(Exit::Ok)
}

/// A change an earlier run already committed: `commit` on `branch`.
struct Done<'r> {
    repo: &'r git::Repo,
    branch: String,
    commit: String,
}

/// A re-run whose change is already committed: the outputs are written
/// again (the retry of a failed one), the branch is pushed when `--push`
/// asks (the retry of a failed push), and the report names the branch and
/// the commit.
#[allow(clippy::too_many_arguments)]
fn finish_done(
    a: &ApplyArgs,
    sink: &mut Sink,
    plan: &Plan,
    secret_spec: Option<&secret::Spec>,
    start: &std::path::Path,
    done: Done,
    json_out: bool,
    skipped: &[rebind::walk::Skipped],
) -> Result<Exit> {
    write_outputs(a, sink, plan, secret_spec, start, Some(&done.branch))?;
    let mut c = git::Committed {
        branch: done.branch,
        commit: done.commit,
        pushed_to: None,
    };
    if let Some(remote) = &a.push {
        git::push(done.repo, remote, &mut c)?;
    }
    if json_out {
        let mut r = json::PlanReport::new("apply", "already_done", plan, skipped);
        r.branch = Some(c.branch.clone());
        r.commit = Some(c.commit.clone());
        r.pushed_to = c.pushed_to.clone();
        sink.out(&json::render(&r));
    } else {
        let mut msg = format!(
            "Branch {} already holds exactly this change (commit {})",
            c.branch,
            &c.commit[..12.min(c.commit.len())]
        );
        match &c.pushed_to {
            Some(r) => msg.push_str(&format!("; pushed to {r}.\n")),
            None => msg.push_str("; nothing to do.\n"),
        }
        sink.say(&msg);
    }
    Ok(Exit::Ok)
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

/// Writes `--secret-out` (unless the repository's own registration is
/// rebound) and `--review-out`. Called once the files are written, and
/// again by a re-run whose branch already holds the change: that re-run is
/// how a failed output is retried.
fn write_outputs(
    a: &ApplyArgs,
    sink: &mut Sink,
    plan: &Plan,
    secret_spec: Option<&secret::Spec>,
    start: &std::path::Path,
    branch: Option<&str>,
) -> Result<()> {
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
        std::fs::write(path, md)
            .with_context(|| format!("--review-out {}: cannot write", path.display()))?;
    }
    Ok(())
}
