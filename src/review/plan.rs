//! The whole plan of a rebind: every file's edits and mentions, the
//! registrations it rebinds, and the after-merge and identity reviews.

use crate::edit::rewrite::{plan_source, FilePlan, Mention, PlanError, INNER_ESCAPES};
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
    /// The new cluster's registrations added beside the old one's, which
    /// are kept (the review's `beside` module plans them).
    pub added_registrations: Vec<AddedRegistration>,
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

/// A registration of the new cluster the plan adds beside the old one's.
#[derive(Debug, Clone)]
pub struct AddedRegistration {
    /// Where the added document starts.
    pub rel: String,
    pub line: usize,
    pub column: usize,
    /// `Secret/name` or `ExternalSecret/name`.
    pub resource: String,
    /// The old cluster's, kept: `Secret/name (path:line:column)`.
    pub kept: String,
    /// The server the kept one registers (a URL or an ARN), and the added.
    pub old_server: String,
    pub new_server: String,
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
            added_registrations: Vec::new(),
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

/// A refused mentions-only `--from` (see [`only_mentioned`]): the message,
/// and each mention as a place a script can read (JSON `mentions`).
#[derive(Debug, Clone)]
pub struct OnlyMentioned {
    pub message: String,
    pub mentions: Vec<MentionPlace>,
}

/// One mention of a refused `--from`.
#[derive(Debug, Clone)]
pub struct MentionPlace {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    /// `comment`, `text` or `template`.
    pub kind: &'static str,
    /// As written, a password in it hidden.
    pub endpoint: String,
    pub why: Option<&'static str>,
}

impl std::fmt::Display for OnlyMentioned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OnlyMentioned {}

impl OnlyMentioned {
    pub fn of(plan: &Plan) -> OnlyMentioned {
        OnlyMentioned {
            message: only_mentioned(plan),
            mentions: plan
                .mentions
                .iter()
                .map(|m| MentionPlace {
                    rel: m.rel.clone(),
                    line: m.occurrence.line,
                    column: m.occurrence.column,
                    kind: m.occurrence.kind.as_str(),
                    endpoint: endpoint::redact(&m.occurrence.endpoint),
                    why: m.why,
                })
                .collect(),
        }
    }
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
    refuse_unrewritable(&mut plan);
    plan
}

/// An endpoint written with escapes inside a document held in a string
/// (`\u0068ttps:`, `\u002e`) is the old endpoint all the same, and rebind
/// cannot rewrite it in place: rebinding the rest would leave it behind (a
/// half cutover). Each is a refusal at its `path:line:column`, never only
/// a mention.
fn refuse_unrewritable(plan: &mut Plan) {
    let (escaped, kept): (Vec<Mention>, Vec<Mention>) = std::mem::take(&mut plan.mentions)
        .into_iter()
        .partition(|m| m.why == Some(INNER_ESCAPES));
    plan.mentions = kept;
    for m in escaped {
        let o = &m.occurrence;
        plan.errors.push(PlanError {
            rel: m.rel.clone(),
            line: o.line,
            column: o.column,
            message: format!(
                "{} is written with escapes inside a document held in a string ({}), which rebind cannot rewrite in place; rebinding the rest would leave it on the old endpoint: write it without escapes (`\\/` for a slash is fine) or change it by hand, then run rebind again; nothing written",
                endpoint::redact(&o.endpoint),
                o.yaml_path.as_deref().unwrap_or("?")
            ),
            code: "escaped-in-document",
        });
    }
    plan.errors
        .sort_by(|a, b| (&a.rel, a.line, a.column).cmp(&(&b.rel, b.line, b.column)));
}
