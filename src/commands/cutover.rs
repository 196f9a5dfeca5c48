//! A rebind request, resolved once from the command line's words: which
//! files ([`Scope`]), which endpoint is replaced (`--from`, a declared
//! `--cluster`, or the one workload endpoint in the tree), the expected
//! counts, and the config update. [`plan`] turns it into a verified
//! [`Plan`]: the domain decisions live here, not in the command layer.

use crate::commands::pipeline::rebind_inventory;
use crate::discover::walk::{self, Walk};
use crate::edit::rewrite;
use crate::find::inventory::Inventory;
use crate::find::summary::Summary;
use crate::model::config::{self, Cluster, Config};
use crate::review::plan::{self, Plan};
use crate::text::endpoint::Endpoint;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// Which files to look at.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Files or directories (empty: `.`).
    pub paths: Vec<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `--config`; else `.rebind.yaml` is looked for above the first path.
    pub config: Option<PathBuf>,
}

impl Scope {
    pub fn paths(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            self.paths.clone()
        }
    }

    /// The config named by `--config`, or found above the first path.
    pub fn config(&self) -> Result<Option<Config>> {
        let path = match &self.config {
            Some(p) => Some(p.clone()),
            None => config::find(&self.paths()[0]),
        };
        path.map(|p| config::load(&p)).transpose()
    }

    /// Discovers files: globs from the command line, else from the config.
    pub fn discover_with(&self, cfg: Option<&Config>) -> Result<Walk> {
        let pick = |cli: &Vec<String>, from_cfg: fn(&Config) -> &Vec<String>| match (
            cfg,
            cli.is_empty(),
        ) {
            (Some(c), true) => from_cfg(c).clone(),
            _ => cli.clone(),
        };
        let include = pick(&self.include, |c| &c.include);
        let exclude = pick(&self.exclude, |c| &c.exclude);
        let paths = self.paths();
        walk::discover(&walk::WalkRequest {
            tracked_hidden: crate::repo::git::tracked_hidden(&paths),
            paths,
            root: cfg.map(Config::root),
            include,
            exclude,
            config_path: cfg.map(|c| c.path.clone()),
        })
    }

    /// Where the git flow starts looking for a repository: the first path
    /// (its directory when it is a file), or `.`.
    pub fn repo_start(&self) -> PathBuf {
        let first = self.paths()[0].clone();
        if first.is_file() {
            match first.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            }
        } else {
            first
        }
    }
}

/// A rebind as asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub to: String,
    pub from: Option<String>,
    /// Take `from` from this declared cluster, and update the config.
    pub cluster: Option<String>,
    /// Refuse unless exactly this many manifests hold the old endpoint.
    pub expect_files: Option<usize>,
    /// Refuse unless exactly this many occurrences are rewritten.
    pub expect_occurrences: Option<usize>,
    /// Without a config: allow `to` to be an endpoint the tree already uses
    /// for workloads (merging two clusters' apps onto one).
    pub allow_merge: bool,
    /// Take the expected counts from this audit (`diff --format json`
    /// output), and `from` too when it is not given; see [`Audit`].
    pub expect_from_audit: Option<PathBuf>,
    pub walk: Scope,
    /// The branch the cutover merges into (default: the remote's HEAD,
    /// else the upstream): what "deploys on merge" is measured against.
    pub base: Option<String>,
    /// The cutover branch (never the base).
    pub branch: Option<String>,
    /// The live Applications (`kubectl get applications.argoproj.io -A -o json`).
    pub live: Option<PathBuf>,
    /// Refuse (exit 2, nothing written) when a rewritten file would not
    /// deploy on merge.
    pub require_deploys: bool,
    /// Paths applied outside ArgoCD (`--applied-by PATH=WHO`), relative to
    /// the repository root: (path, who applies it). The after-merge review
    /// takes them as it takes `applied_by` under `feeders:` in the config.
    pub applied_by: Vec<(String, String)>,
    /// The old and the new cluster's OIDC issuers: the review then shows
    /// which IAM roles in the tree the new cluster's pods will be denied by.
    pub issuers: Option<(crate::text::issuer::Issuer, crate::text::issuer::Issuer)>,
    /// The old and the new cluster's EKS names (and ARNs), when both are
    /// known and differ: the name positions move with the endpoint.
    pub names: Option<crate::find::names::NameRebind>,
    /// The new cluster's identity record (`--describe-to`): what its
    /// registration is written from.
    pub new_cluster: Option<crate::model::cluster::Described>,
}

/// The endpoints as named on the command line: `--to`/`--from`, and the
/// `aws eks describe-cluster` files that stand in for them.
#[derive(Debug, Clone, Default)]
pub struct Named {
    pub to: Option<String>,
    pub from: Option<String>,
    pub describe_from: Option<PathBuf>,
    pub describe_to: Option<PathBuf>,
    /// The clusters' EKS names, given as flags (they win over the files').
    pub name_from: Option<String>,
    pub name_to: Option<String>,
}

impl Request {
    /// This request with `to`, `from` and `issuers` taken from `named`: a
    /// describe-cluster file gives the endpoint not given (the old one only
    /// without `--cluster`), and the two files' issuers are the review's
    /// trust coverage; they must differ.
    pub fn from_describe(mut self, named: &Named) -> Result<Request> {
        let describe = |flag: &str, p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| crate::model::cluster::read_describe(flag, p))
                .transpose()
        };
        let old = describe("--describe-from", &named.describe_from)?;
        let new = describe("--describe-to", &named.describe_to)?;
        self.from = named.from.clone().or_else(|| {
            (self.cluster.is_none())
                .then(|| old.as_ref().map(|d| d.endpoint.clone()))
                .flatten()
        });
        self.to = match (&named.to, &new) {
            (Some(t), _) => t.clone(),
            (None, Some(d)) => d.endpoint.clone(),
            (None, None) => bail!("--to URL (or --describe-to FILE) is required"),
        };
        self.names = names_of(named, old.as_ref(), new.as_ref())?;
        self.new_cluster = new.clone();
        self.issuers = match (old, new) {
            (Some(o), Some(n)) if o.issuer.same(&n.issuer) => bail!(
                "--describe-from and --describe-to name the same OIDC issuer ({}): give the old cluster's and the new cluster's",
                o.issuer.url()
            ),
            (Some(o), Some(n)) => Some((o.issuer, n.issuer)),
            _ => None,
        };
        Ok(self)
    }
}

/// The name rebind: both clusters' EKS names (flags win over the files),
/// when they differ; with the files' ARNs and CA data. A flag that is no
/// EKS cluster name is refused.
fn names_of(
    named: &Named,
    old: Option<&crate::model::cluster::Described>,
    new: Option<&crate::model::cluster::Described>,
) -> Result<Option<crate::find::names::NameRebind>> {
    for (flag, n) in [
        ("--eks-name-from", &named.name_from),
        ("--eks-name-to", &named.name_to),
    ] {
        if let Some(n) = n
            .as_deref()
            .filter(|n| !crate::model::cluster::is_cluster_name(n))
        {
            bail!("{flag} {n:?}: not an EKS cluster name (1 to 100 letters, digits, '-' and '_', starting with a letter or digit)");
        }
    }
    let old_name = named
        .name_from
        .clone()
        .or_else(|| old.map(|d| d.name.clone()));
    let new_name = named
        .name_to
        .clone()
        .or_else(|| new.map(|d| d.name.clone()));
    Ok(match (old_name, new_name) {
        (Some(o), Some(n)) if o != n => Some(crate::find::names::NameRebind {
            old: o,
            new: n,
            old_arn: old.and_then(|d| d.arn.clone()),
            new_arn: new.and_then(|d| d.arn.clone()),
            old_ca: old.and_then(|d| d.ca_data.clone()),
            new_ca: new.and_then(|d| d.ca_data.clone()),
            argocd_moves: Vec::new(),
            argocd_known: None,
            argocd_kept: Vec::new(),
            old_server: None,
            new_server: None,
            argocd_foreign: Vec::new(),
        }),
        _ => None,
    })
}

/// The name rebind from the config: the moving cluster's declared EKS name
/// (and ARN, CA) as the old side, the `--describe-to` record as the new.
fn declared_names(
    c: Option<&Cluster>,
    new: Option<&crate::model::cluster::Described>,
) -> Option<crate::find::names::NameRebind> {
    let (old, new) = (&c?.identity, new?);
    let old_name = old.name.clone()?;
    (old_name != new.name).then(|| crate::find::names::NameRebind {
        old: old_name,
        new: new.name.clone(),
        old_arn: old.arn.clone(),
        new_arn: new.arn.clone(),
        old_ca: old.ca_data.clone(),
        new_ca: new.ca_data.clone(),
        argocd_moves: Vec::new(),
        argocd_known: None,
        argocd_kept: Vec::new(),
        old_server: None,
        new_server: None,
        argocd_foreign: Vec::new(),
    })
}

/// What an audit (`rebind diff --format json`, schema version 1) recorded:
/// the rebind it planned and its counts. Used as the expected counts, so
/// the apply writes exactly what was reviewed or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    pub path: PathBuf,
    pub from: String,
    pub to: String,
    pub file_count: usize,
    pub change_count: usize,
    /// The audit's name changes (`names.change_count`), when it moved names.
    pub name_change_count: Option<usize>,
}

impl Audit {
    /// Reads and validates an audit file: JSON from `rebind diff` with
    /// `schema_version` 1, a `from` and a `to`, both counts, and no errors.
    pub fn load(path: &Path) -> Result<Audit> {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--expect-from-audit {shown}: cannot read"))?;
        Audit::parse(path, &text)
    }

    /// [`Audit::load`] on text already read. The audit is read through the
    /// type `diff --format json` writes it with
    /// ([`crate::output::json::PlanReport`]), after the checks that name
    /// what is wrong with a file that is not one.
    pub fn parse(path: &Path, text: &str) -> Result<Audit> {
        use crate::output::json::PlanReport;
        let shown = path.display();
        let not_audit = |e: serde_json::Error| {
            anyhow!(
                "{shown}:{}:{}: not a `rebind diff --format json` audit: {e}",
                e.line(),
                e.column()
            )
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(not_audit)?;
        match value.get("schema_version") {
            Some(v) if v.as_u64() == Some(u64::from(crate::output::SCHEMA_VERSION)) => {}
            Some(v) => bail!(
                "{shown}: schema_version {v}; this rebind reads audits of schema_version {}",
                crate::output::SCHEMA_VERSION
            ),
            None => bail!("{shown}: no schema_version: not a `rebind diff --format json` audit"),
        }
        let command = value.get("command").and_then(|c| c.as_str());
        if command != Some("diff") {
            bail!(
                "{shown}: written by `rebind {}`, not `rebind diff --format json`",
                command.unwrap_or("?")
            );
        }
        for name in ["from", "to", "file_count", "change_count"] {
            if value.get(name).is_none_or(|v| v.is_null()) {
                bail!("{shown}: no `{name}`: not a `rebind diff --format json` audit");
            }
        }
        let report: PlanReport = serde_json::from_value(value)
            .map_err(|e| anyhow!("{shown}: not a `rebind diff --format json` audit: {e}"))?;
        if !report.errors.is_empty() {
            bail!(
                "{shown}: the audit found {} that cannot be rewritten safely; fix them and audit again",
                crate::text::words::count(report.errors.len(), "file")
            );
        }
        Ok(Audit {
            path: path.to_path_buf(),
            from: report.from,
            to: report.to,
            file_count: report.file_count,
            change_count: report.change_count,
            name_change_count: report.names.as_ref().map(|n| n.change_count),
        })
    }

    /// Refuses unless the audit planned the same rebind.
    fn check_same(&self, from: &Endpoint, to: &Endpoint) -> Result<()> {
        let shown = self.path.display();
        for (flag, ours, theirs) in [("--from", from, &self.from), ("--to", to, &self.to)] {
            let same = Endpoint::parse(flag, theirs).is_ok_and(|t| t.key() == ours.key());
            if !same {
                bail!(
                    "--expect-from-audit {shown}: the audit is of {flag} {theirs}, this run's is {}; audit this rebind again; nothing written",
                    ours.url()
                );
            }
        }
        Ok(())
    }
}

/// Parses `--from`/`--to`, resolves an omitted `--from` (or takes it from
/// `--cluster`), plans the rebind, checks the expected counts, adds the
/// config update when a cluster was named, and refuses a `--from` that
/// matches nothing (unless the tree is already rebound to `--to`).
pub fn plan(req: &Request) -> Result<(Plan, Inventory)> {
    let to = Endpoint::parse("--to", &req.to)?;
    if to.is_in_cluster() {
        bail!(
            "--to {}: the in-cluster endpoint is never a rebind target",
            req.to
        );
    }
    let audit = req
        .expect_from_audit
        .as_deref()
        .map(Audit::load)
        .transpose()?;
    // The config is read once and the tree walked once, whatever is resolved.
    let cfg = req.walk.config()?;
    let walk = req.walk.discover_with(cfg.as_ref())?;
    let named = named_cluster(req, cfg.as_ref())?;
    let from = source(req, audit.as_ref(), named, &walk)?;
    if let Some(a) = &audit {
        a.check_same(&from, &to)?;
    }
    let cluster = updated_cluster(cfg.as_ref(), named, &from, &to)?;
    // One pass finds both: `from` to rewrite, `to` to tell an already
    // rebound tree (or a merge of two clusters) from a mistake.
    let hosts = vec![from.host.to_ascii_lowercase(), to.host.to_ascii_lowercase()];
    let (mut inv, candidates) = rebind_inventory(&walk, &hosts)?;
    refuse_unread(&inv)?;
    crate::commands::unseen::refuse_uncommitted(&req.walk.paths(), &hosts[0])?;
    inv.skipped
        .extend(crate::commands::unseen::excluded_holding(&walk, &hosts[0]));
    if from.key() == to.key() {
        return Ok((Plan::empty(from, to), inv));
    }
    let mut plan = plan::plan(&inv, &from, &to);
    settle_what_was_found(req, &mut plan, &inv, &walk, cfg.is_some())?;
    let names = req
        .names
        .clone()
        .or_else(|| declared_names(cluster.or(named), req.new_cluster.as_ref()));
    let start = req.walk.repo_start();
    let root = crate::review::secret::search_root(&start).unwrap_or(start);
    let mut names = names;
    if let Some(r) = names.as_mut() {
        // The ArgoCD names of the old cluster's registrations, read from
        // the repository and the hub: a destination naming one moves too.
        let mut regs = crate::review::secret::all_registrations(&root)?.registrations;
        if let Some(live) = &req.live {
            regs.extend(crate::review::secret::live_registrations(live)?);
        }
        crate::review::beside::argocd_names(r, &regs, (&from.url(), &to.url()));
    }
    if let Some(r) = &names {
        plan.names = Some(crate::review::names::plan_names(
            &mut plan.files,
            &mut plan.errors,
            &walk,
            r,
            cfg.as_ref().map(|c| c.path.as_path()),
        ));
    }
    if let Some(a) = &audit {
        let found = plan.names.as_ref().map(|n| n.changes.len());
        if a.name_change_count.is_some() && found != a.name_change_count {
            bail!(
                "--expect-from-audit {}: the tree no longer matches the audit: it moved {} cluster name positions, this run finds {}; nothing written",
                a.path.display(),
                a.name_change_count.unwrap_or(0),
                found.unwrap_or(0)
            );
        }
    }
    // The old cluster's registration stays (the rollback target); the new
    // one is added beside it.
    crate::review::beside::keep_and_add(&mut plan, Some(&root))?;
    plan.registrations = registrations(&plan, &req.walk)?;
    check_counts(req, &plan, audit.as_ref(), cluster)?;
    if !plan.files.is_empty() {
        plan.after_merge = Some(after_merge(
            req,
            &plan,
            cfg.as_ref(),
            &to,
            candidates.as_ref(),
        )?);
    }
    if let Some((old, new)) = &req.issuers {
        let inv = crate::review::oidc::inventory(&walk);
        plan.identity = Some(crate::review::oidc::CoverageReport::of(&inv, old, new));
    }
    if let (Some(c), Some(cfg)) = (cluster, &cfg) {
        plan.files.push(rewrite::config_plan(cfg, &c.name, &to)?);
    }
    Ok((plan, inv))
}

/// The cluster `--cluster` names, which the config must declare.
fn named_cluster<'c>(req: &Request, cfg: Option<&'c Config>) -> Result<Option<&'c Cluster>> {
    let Some(name) = &req.cluster else {
        return Ok(None);
    };
    let Some(cfg) = cfg else {
        bail!(
            "--cluster {name}: no {} found above {} (run `rebind init`, or pass --config)",
            config::FILE_NAME,
            req.walk.paths()[0].display()
        );
    };
    cfg.cluster(name).map(Some)
}

/// The endpoint replaced: the named cluster's, else `--from`, else the
/// audit's, else the one workload endpoint in the tree. Never the
/// in-cluster endpoint.
fn source(
    req: &Request,
    audit: Option<&Audit>,
    named: Option<&Cluster>,
    walk: &Walk,
) -> Result<Endpoint> {
    let from_arg = req.from.clone().or_else(|| audit.map(|a| a.from.clone()));
    let from = match (&from_arg, named) {
        (_, Some(c)) => c.endpoint.clone(),
        (Some(f), None) => Endpoint::parse("--from", f)?,
        (None, None) => {
            let (found, unread) = workload_endpoints_and_unread(walk)?;
            match found.as_slice() {
                [one] => Endpoint::parse("--from", one)?,
                [] => bail!(
                    "no workload endpoint found under the given paths; pass --from URL{unread}"
                ),
                many => bail!(
                    "--from is needed: the tree holds {} workload endpoints:\n  {}",
                    many.len(),
                    many.join("\n  ")
                ),
            }
        }
    };
    if from.is_in_cluster() {
        bail!(
            "--from {}: the in-cluster endpoint is never rewritten",
            from.url()
        );
    }
    Ok(from)
}

/// The declared cluster whose endpoint this rebind updates in the config
/// (the named one, or the one `--from` is the endpoint of), after refusing
/// a `--to` that is another cluster's endpoint.
fn updated_cluster<'c>(
    cfg: Option<&'c Config>,
    named: Option<&'c Cluster>,
    from: &Endpoint,
    to: &Endpoint,
) -> Result<Option<&'c Cluster>> {
    let Some(cfg) = cfg else {
        return Ok(named);
    };
    // `--from` a declared cluster's endpoint updates that cluster exactly as
    // `--cluster` does; and no rebind may point at another cluster's endpoint.
    let cluster = named.or_else(|| config::cluster_for_endpoint(cfg, from));
    // `--from` a retired endpoint to its cluster's current one finishes a
    // move the config already records (a manifest merged with the old URL
    // since): that cluster is the one moving, and the config stays as it is.
    let finishing = match cluster {
        None => config::owner_of(cfg, from).filter(|c| c.endpoint.key() == to.key()),
        Some(_) => None,
    };
    config::check_target(cfg, cluster.or(finishing).map(|c| c.name.as_str()), to)?;
    Ok(cluster)
}

/// A plan that rewrites nothing: the tree is already rebound to `--to`,
/// or `--from` is only mentioned, or a mistake (refused, naming what is
/// there). A plan that rewrites into a tree that already uses `--to` for
/// workloads, without a config, is a merge of two clusters: refused
/// unless `--allow-merge`.
fn settle_what_was_found(
    req: &Request,
    plan: &mut Plan,
    inv: &Inventory,
    walk: &Walk,
    has_config: bool,
) -> Result<()> {
    let to_present = inv
        .sources
        .iter()
        .any(|s| s.occurrences().iter().any(|o| rewrite::holds(o, &plan.to)));
    if plan.files.is_empty() && plan.errors.is_empty() {
        if to_present {
            plan.already_rebound = true;
        } else {
            resolve_nothing_found(plan, walk, inv, &req.walk)?;
        }
    } else if to_in_use(req, inv, &plan.to, to_present)
        && !has_config
        && !req.allow_merge
        && !only_kept_registrations(req, plan)
    {
        bail!(
            "--to {} is already a workload endpoint in this tree: rebinding {} to it would move those applications onto a cluster other Applications already use (merging two clusters). If that is what you want, pass --allow-merge; nothing written",
            plan.to.url(),
            plan.from.url()
        );
    }
    Ok(())
}

/// Whether `to` (`present` in the tree) is in use already. In a rebind
/// that moves the name, only outside a cluster registration's server: a
/// registration (the old cluster's, kept beside the new one's, which a
/// rollback returns to) sends no Application there, and a registration of
/// `to` is never rewritten in place but kept. Without the names, a
/// registration of `to` counts: rewriting the old one in place would make
/// two registrations of one server.
fn to_in_use(req: &Request, inv: &Inventory, to: &Endpoint, present: bool) -> bool {
    if req.names.is_none() && req.new_cluster.is_none() {
        return present;
    }
    inv.sources.iter().any(|s| {
        s.occurrences()
            .iter()
            .any(|o| rewrite::holds(o, to) && !o.position.is_some_and(|p| p.is_registration()))
    })
}

/// Whether what is left of `from` is only cluster registrations, in a
/// rebind that moves the name too: the old cluster's registration, kept
/// beside the new one's as the rollback target
/// ([`crate::review::beside`]), not a workload to merge.
fn only_kept_registrations(req: &Request, plan: &Plan) -> bool {
    (req.names.is_some() || req.new_cluster.is_some())
        && plan
            .files
            .iter()
            .flat_map(|f| &f.changes)
            .all(|o| o.position.is_some_and(|p| p.is_registration()))
}

/// Refuses a plan whose counts differ from those expected: the audit's,
/// and the explicit `--expect-*` ones, else the cluster's in the config
/// (the audit's and the others must all hold).
fn check_counts(
    req: &Request,
    plan: &Plan,
    audit: Option<&Audit>,
    cluster: Option<&Cluster>,
) -> Result<()> {
    if let Some(a) = audit {
        expect_guard(plan, Some(a.file_count), Some(a.change_count)).map_err(|e| {
            anyhow!(
                "--expect-from-audit {}: the tree no longer matches the audit: {e}",
                a.path.display()
            )
        })?;
    }
    let explicit = match (req.expect_files, req.expect_occurrences) {
        (None, None) => None,
        (f, o) => Some((f, o)),
    };
    let expect = explicit.or_else(|| {
        cluster
            .and_then(|c| c.expect)
            .map(|e| (e.files, e.occurrences))
    });
    match expect {
        Some((files, occurrences)) => expect_guard(plan, files, occurrences),
        None => Ok(()),
    }
}

/// What deploys on merge of the rewritten files; with `--require-deploys`,
/// refuses a plan of which something would not.
fn after_merge(
    req: &Request,
    plan: &Plan,
    cfg: Option<&Config>,
    to: &Endpoint,
    known: Option<&crate::review::feeders::Candidates>,
) -> Result<crate::review::feeders::Report> {
    let branch = req
        .branch
        .clone()
        .unwrap_or_else(|| crate::repo::git::default_branch(&to.host));
    let report = crate::review::feeders::for_plans(
        &plan.files,
        &req.walk.repo_start(),
        req.base.as_deref(),
        Some(&branch),
        req.live.as_deref(),
        crate::review::feeders::Declared {
            cfg,
            applied_by: &req.applied_by,
        },
        known,
    )?;
    if req.require_deploys && report.base_unknown {
        bail!(
            "--require-deploys: --base {} is no branch of this clone, so nothing can be said to deploy on merge; nothing written",
            req.base.as_deref().unwrap_or("")
        );
    }
    if req.require_deploys && report.blocking().next().is_some() {
        bail!("{}", crate::output::feeders::refusal(&report).trim_end());
    }
    Ok(report)
}

/// The workload endpoints under `walk` (a full scan).
fn workload_endpoints(walk: &Walk) -> Result<Vec<String>> {
    Ok(workload_endpoints_and_unread(walk)?.0)
}

/// [`workload_endpoints`], and a line for each file the walk did not read
/// (a symbolic link is never followed).
fn workload_endpoints_and_unread(walk: &Walk) -> Result<(Vec<String>, String)> {
    let mut summary = Summary::default();
    let mut unread = String::new();
    let want = crate::find::locate::Want {
        only: false,
        names: false,
        arns: false,
    };
    crate::commands::pipeline::each_source(walk, &[], want, |item| match item {
        crate::find::inventory::Item::Source(s) => summary.add(&s),
        crate::find::inventory::Item::Skipped(s) => {
            unread.push_str(&format!("\nnot read: {}: {}", s.rel, s.reason))
        }
        crate::find::inventory::Item::Note(_) | crate::find::inventory::Item::Arns(..) => {}
    })?;
    let found = summary
        .workload()
        .into_iter()
        .map(|t| t.display.clone())
        .collect();
    Ok((found, unread))
}

/// The cluster registrations the repository declares for `from` that this
/// plan rebinds (a cluster Secret or an ExternalSecret template at a
/// registration position), with what each reads its credentials from.
fn registrations(plan: &Plan, scope: &Scope) -> Result<Vec<plan::RegistrationNote>> {
    let rebinds_one = plan
        .files
        .iter()
        .flat_map(|f| &f.changes)
        .any(|o| o.position.is_some_and(|p| p.is_registration()));
    if !rebinds_one {
        return Ok(Vec::new());
    }
    let start = scope.repo_start();
    let root = crate::review::secret::search_root(&start).unwrap_or(start);
    let found = crate::review::secret::find_registrations(&root, &plan.from.url())?;
    Ok(found
        .registrations
        .into_iter()
        .flat_map(|r| r.declared_at)
        .map(|d| plan::RegistrationNote {
            rel: d.rel,
            line: d.line,
            column: d.column,
            resource: d.resource,
            reads: d.reads,
        })
        .collect())
}

/// `--from` matched no value and `--to` is not there either: it is only
/// mentioned (fine, said so) or a mistake (an error naming what is there,
/// and what was not read: a symbolic link is never followed).
fn resolve_nothing_found(plan: &Plan, walk: &Walk, inv: &Inventory, req: &Scope) -> Result<()> {
    let files = inv.files;
    if !plan.mentions.is_empty() {
        return Err(plan::OnlyMentioned::of(plan).into());
    }
    let there = workload_endpoints(walk)?;
    let mut msg = format!(
        "endpoint {} is not in the {} under {}; nothing written",
        plan.from.url(),
        crate::text::words::count(files, "file"),
        req.paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if there.is_empty() {
        msg.push_str("\nno workload endpoint is there at all");
    } else {
        msg.push_str("\nworkload endpoints there:\n  ");
        msg.push_str(&there.join("\n  "));
        if let Some(c) = crate::text::endpoint::closest(&plan.from, &there) {
            msg.push_str(&format!("\ndid you mean {c}?"));
        }
    }
    for s in &inv.skipped {
        msg.push_str(&format!("\nnot read: {}: {}", s.rel, s.reason));
    }
    Err(crate::sys::coded::err("endpoint-not-found", msg))
}

/// Refuses unless the plan has the expected numbers of manifests and
/// occurrences (each checked alone when only one is given).
fn expect_guard(plan: &Plan, files: Option<usize>, occurrences: Option<usize>) -> Result<()> {
    if !plan.errors.is_empty() {
        return Ok(()); // the errors are the answer
    }
    let found_files = plan.endpoint_file_count();
    let found_occ = plan.change_count();
    let bad_files = files.is_some_and(|f| f != found_files);
    let bad_occ = occurrences.is_some_and(|o| o != found_occ);
    if !bad_files && !bad_occ {
        return Ok(());
    }
    let per_file: Vec<String> = plan
        .files
        .iter()
        .filter(|f| !f.is_config && !f.changes.is_empty())
        .map(|f| format!("  {:>3}  {}", f.changes.len(), f.rel))
        .collect();
    let want = |n: Option<usize>, noun| n.map(|n| crate::text::words::count(n, noun));
    let expected: Vec<String> = [want(occurrences, "occurrence"), want(files, "file")]
        .into_iter()
        .flatten()
        .collect();
    Err(crate::sys::coded::err(
        "expected-counts",
        format!(
            "expected {} of {}, found {found_occ} in {found_files}; nothing written. Found per file:\n{}",
            expected.join(" in "),
            plan.from.url(),
            per_file.join("\n")
        ),
    ))
}

/// Refuses when a file that may hold the endpoint could not be read (no
/// access, vanished, or YAML in an encoding rebind does not parse): a rebind
/// cannot promise it found everything.
fn refuse_unread(inv: &Inventory) -> Result<()> {
    let unread: Vec<String> = inv
        .skipped
        .iter()
        .filter(|s| s.may_hold)
        .map(|s| format!("  {}: {}", s.rel, s.reason))
        .collect();
    let message = crate::commands::unseen::listed(&unread, |files| {
        format!("{files} may hold the endpoint but could not be read, so this rebind cannot promise it found everything; make them readable (UTF-8 for YAML), or leave them out with --exclude; nothing written")
    });
    message.map_or(Ok(()), |m| Err(crate::sys::coded::err("unread-file", m)))
}

/// Refuses a plan that holds files which cannot be rewritten safely.
pub fn fail_on_errors(plan: &Plan) -> Result<()> {
    if plan.errors.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = plan.errors.iter().map(|e| e.to_string()).collect();
    bail!(
        "{} cannot be rewritten safely; nothing written:\n{}",
        crate::text::words::count(list.len(), "file"),
        list.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(name: &str) -> Option<PathBuf> {
        Some(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/identity/describe")
                .join(name),
        )
    }

    const OLD_EP: &str =
        "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";

    const NEW_EP: &str =
        "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";

    #[test]
    fn the_describe_files_give_the_endpoints_not_given_and_the_issuers() {
        let both = Named {
            describe_from: describe("old.json"),
            describe_to: describe("new.json"),
            ..Named::default()
        };
        let r = Request::default().from_describe(&both).unwrap();
        assert_eq!((r.from.as_deref(), r.to.as_str()), (Some(OLD_EP), NEW_EP));
        let (old, new) = r.issuers.expect("both files: the issuers");
        assert!(
            old.url().ends_with("/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F"),
            "{}",
            old.url()
        );
        assert!(!old.same(&new));
        // The flags win over the files.
        let flags = Named {
            to: Some("https://to.example.com".into()),
            from: Some("https://from.example.com".into()),
            ..both.clone()
        };
        let r = Request::default().from_describe(&flags).unwrap();
        assert_eq!(
            (r.from.as_deref(), r.to.as_str()),
            (Some("https://from.example.com"), "https://to.example.com")
        );
        // With --cluster, the old endpoint is the config's, not the file's.
        let cluster = Request {
            cluster: Some("prod".into()),
            ..Request::default()
        };
        assert_eq!(cluster.from_describe(&both).unwrap().from, None);
    }

    #[test]
    fn the_same_issuer_twice_or_no_new_endpoint_is_refused() {
        let same = Named {
            describe_from: describe("old.json"),
            describe_to: describe("old.json"),
            ..Named::default()
        };
        let e = format!("{:#}", Request::default().from_describe(&same).unwrap_err());
        assert!(e.contains("name the same OIDC issuer (https://oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F)"), "{e}");
        let none = Named::default();
        let e = format!("{:#}", Request::default().from_describe(&none).unwrap_err());
        assert_eq!(e, "--to URL (or --describe-to FILE) is required");
        let unread = Named {
            to: Some("https://to.example.com".into()),
            describe_from: describe("absent.json"),
            describe_to: describe("new.json"),
            ..Named::default()
        };
        let e = format!(
            "{:#}",
            Request::default().from_describe(&unread).unwrap_err()
        );
        assert!(
            e.starts_with("--describe-from ") && e.contains("absent.json: cannot read"),
            "{e}"
        );
    }
}
