//! The whole plan of a rebind: every file's edits and mentions, the
//! registrations it rebinds, and the after-merge and identity reviews.

use crate::edit::rewrite::{plan_source, FilePlan, Mention, PlanError};
use crate::find::inventory::Inventory;
use crate::text::endpoint::{self, Endpoint};

/// Everything `diff` shows and `apply` writes.
#[derive(Debug)]
pub struct Plan {
    pub from: Endpoint,
    pub to: Endpoint,
    pub files: Vec<FilePlan>,
    /// Comments, text files and template actions that mention the old endpoint.
    pub mentions: Vec<Mention>,
    pub errors: Vec<PlanError>,
    /// `from` holds no value but `to` does: the tree is already rebound.
    pub already_rebound: bool,
    /// The repository's own cluster registrations for `from` that this plan
    /// rebinds: no second Secret is needed, but their credentials must change.
    pub registrations: Vec<RegistrationNote>,
    /// After the merge: which Application carries each rewritten file to
    /// the hub, from which revision, in which order ([`crate::review::feeders`]).
    pub after_merge: Option<crate::review::feeders::Report>,
    /// The new cluster's identity: per role, which cluster issuers it
    /// trusts (when the cutover's issuers are known).
    pub identity: Option<crate::review::oidc::CoverageReport>,
    /// The cluster's name moved with its endpoint (when both clusters'
    /// names are known and differ): the name changes (also in `files`),
    /// the mentions and the Terraform registry notes.
    pub names: Option<crate::review::names::NamePlan>,
}

/// A cluster registration (Secret or ExternalSecret) the repository declares,
/// rebound by the plan.
#[derive(Debug, Clone)]
pub struct RegistrationNote {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    /// `Secret/name` or `ExternalSecret/name`.
    pub resource: String,
    /// What it reads the token and CA from.
    pub reads: String,
}

impl Plan {
    /// A plan with nothing to do.
    pub fn empty(from: Endpoint, to: Endpoint) -> Plan {
        Plan {
            from,
            to,
            files: Vec::new(),
            mentions: Vec::new(),
            errors: Vec::new(),
            already_rebound: false,
            registrations: Vec::new(),
            after_merge: None,
            identity: None,
            names: None,
        }
    }

    /// The manifests rewritten (the config not counted).
    pub fn manifest_count(&self) -> usize {
        self.files.iter().filter(|f| !f.is_config).count()
    }

    /// The endpoint changes (name changes are counted on their own:
    /// [`Plan::name_change_count`]).
    pub fn change_count(&self) -> usize {
        self.files.iter().map(|f| f.changes.len()).sum()
    }

    /// The manifests with endpoint changes.
    pub fn endpoint_file_count(&self) -> usize {
        self.files
            .iter()
            .filter(|f| !f.is_config && !f.changes.is_empty())
            .count()
    }

    /// The name changes alone.
    pub fn name_change_count(&self) -> usize {
        self.names.as_ref().map_or(0, |n| n.changes.len())
    }
}

/// The refusal of a rebind whose `--from` no value holds, only comments,
/// text files, template actions or other mentions: nothing would be
/// rewritten, and a gate must not read that as done.
pub fn only_mentioned(plan: &Plan) -> String {
    let mut msg = format!(
        "{} is in no value, only in {}, which rebind never rewrites; fix them by hand if they matter (or pass the --from a value holds); nothing written:",
        plan.from.url(),
        crate::text::words::count(plan.mentions.len(), "mention")
    );
    for m in &plan.mentions {
        let o = &m.occurrence;
        msg.push_str(&format!(
            "\n  {}:{}:{}: {} {}",
            m.rel,
            o.line,
            o.column,
            o.kind.as_str(),
            endpoint::redact(&o.endpoint)
        ));
        if let Some(why) = m.why {
            msg.push_str(&format!(" ({why})"));
        }
    }
    msg
}

/// Plans the rebind of every occurrence of `from` to `to` in the inventory.
pub fn plan(inv: &Inventory, from: &Endpoint, to: &Endpoint) -> Plan {
    let mut plan = Plan::empty(from.clone(), to.clone());
    // Each file is spliced and verified on its own: on every core.
    let planned = crate::sys::par::par_map(inv.sources.len(), crate::sys::par::cores(), |i| {
        plan_source(&inv.sources[i], from, to)
    });
    for (mentions, outcome) in planned {
        plan.mentions.extend(mentions);
        match outcome {
            Some(Ok(file)) => plan.files.push(file),
            Some(Err(error)) => plan.errors.push(error),
            None => {}
        }
    }
    plan
}
