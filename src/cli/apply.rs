//! `rebind diff` and `rebind apply`: their flags as the library's
//! [`rebind::commands::apply`] options; the run itself is [`rebind::commands::apply::run`].

use super::args::{ApplyArgs, DiffArgs, RebindArgs};
use anyhow::Result;
use rebind::commands::apply::{self, ApplyOptions, DiffOptions, PrOptions, Prompt};
use rebind::commands::cutover::{Named, Request};
use rebind::output::{Done, Sink};
use std::io::{BufRead, IsTerminal};

impl RebindArgs {
    /// The library's rebind request; a describe-cluster file gives the
    /// endpoint not given, and the issuers of the review's trust coverage.
    fn request(&self) -> Result<Request> {
        Request {
            cluster: self.cluster.clone(),
            expect_files: self.expect_files,
            expect_occurrences: self.expect_occurrences,
            allow_merge: self.allow_merge,
            expect_from_audit: self.expect_from_audit.clone(),
            walk: self.walk.request(),
            base: self.base.clone(),
            live: self.live.clone(),
            require_deploys: self.require_deploys,
            applied_by: applied_by(&self.applied_by)?,
            ..Request::default()
        }
        .from_describe(&Named {
            to: self.to.clone(),
            from: self.from.clone(),
            describe_from: self.describe_from.clone(),
            describe_to: self.describe_to.clone(),
            name_from: self.eks_name_from.clone(),
            name_to: self.eks_name_to.clone(),
        })
    }
}

/// `--applied-by PATH=WHO` values as (path, who); a value without both is a
/// usage error.
fn applied_by(values: &[String]) -> Result<Vec<(String, String)>> {
    values
        .iter()
        .map(|v| match v.split_once('=') {
            Some((path, who)) if !path.trim().is_empty() && !who.trim().is_empty() => {
                Ok((path.trim().to_string(), who.trim().to_string()))
            }
            _ => Err(anyhow::anyhow!(
                "--applied-by {v:?}: expected PATH=WHO (a path of this repository and who applies it, e.g. manifests/crds=terraform)"
            )),
        })
        .collect()
}

pub fn diff(a: DiffArgs) -> Done {
    let options = DiffOptions {
        request: a.rebind.request()?,
    };
    apply::diff(&options)
}

pub fn apply(a: ApplyArgs, sink: &mut Sink) -> Done {
    let options = ApplyOptions {
        request: a.rebind.request()?,
        format: a.format.get(),
        yes: a.yes,
        no_commit: a.no_commit,
        branch: a.branch,
        push: a.push,
        pr: a.pr.then_some(PrOptions {
            client: a.pr_client,
            draft: a.pr_draft,
            labels: a.pr_label,
            reviewers: a.pr_reviewer,
        }),
        review_out: a.review_out,
        cluster_name: a.cluster_name,
        secret_out: a.secret_out,
        secret: a.secret.options(),
    };
    apply::run(&options, sink, &mut Terminal)
}

/// The question before writing, asked on standard input.
pub(super) struct Terminal;

impl Prompt for Terminal {
    fn is_terminal(&self) -> bool {
        std::io::stdin().is_terminal()
    }

    fn read_line(&mut self) -> Result<String> {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok(line)
    }
}
