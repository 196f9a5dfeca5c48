//! The command line: argument definitions and one function per subcommand,
//! each running the pipeline and returning the process exit code.
//!
//! Exit codes: 0 success or nothing to change, 1 changes pending (`diff`) or
//! declined at the prompt, 2 usage or input error (returned as `Err`).

use crate::config::{self, Config};
use crate::endpoint::Endpoint;
use crate::report::{self, Out};
use crate::rewrite::{self, Plan};
use crate::{git, inventory, secret, walk, Inventory};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// Rebind hard-coded Kubernetes API endpoints in a GitOps repository, byte-exact.
#[derive(Debug, Parser)]
#[command(name = "rebind", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every Kubernetes API endpoint occurrence, with per-endpoint and tier summaries.
    Scan(ScanArgs),
    /// Show exactly what `apply` would write, as a unified diff; writes nothing.
    /// Exit 1 when there are changes pending, 0 when there is nothing to change.
    Diff(RebindArgs),
    /// Rewrite the old endpoint to the new one: on a new git branch, or in place with --no-commit.
    Apply(ApplyArgs),
    /// Print the ArgoCD cluster Secret (or ExternalSecret) for a server URL.
    Secret(Box<SecretArgs>),
    /// Write .rebind.yaml from a scan: one cluster per workload endpoint, with current counts.
    Init(InitArgs),
    /// Fail (exit 1) on retired or undeclared endpoints; for pre-commit and CI.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Repository root to scan and write .rebind.yaml into (default: .).
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files to check (as pre-commit passes them); default: the whole repository.
    pub files: Vec<PathBuf>,
    /// Config file (default: .rebind.yaml found by walking up from the current directory).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Report undeclared endpoints at cluster positions as warnings, not failures.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// Which files to look at.
#[derive(Debug, Args)]
pub struct WalkArgs {
    /// Files or directories (default: `.`). Directories are walked honouring .gitignore.
    pub paths: Vec<PathBuf>,
    /// Glob of files parsed as YAML (repeatable; default **/*.yaml, **/*.yml, **/*.json).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Glob of files to leave out entirely (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Config file (default: .rebind.yaml found by walking up from the first PATH).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl WalkArgs {
    fn paths(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            self.paths.clone()
        }
    }

    /// The config named by `--config`, or found above the first PATH.
    fn config(&self) -> Result<Option<Config>> {
        let path = match &self.config {
            Some(p) => Some(p.clone()),
            None => config::find(&self.paths()[0]),
        };
        path.map(|p| config::load(&p)).transpose()
    }

    /// Discovers files; globs from the command line, else from the config.
    fn discover(&self) -> Result<walk::Walk> {
        self.discover_with(self.config()?.as_ref())
    }

    /// [`WalkArgs::discover`] with the config already loaded.
    fn discover_with(&self, cfg: Option<&Config>) -> Result<walk::Walk> {
        let pick = |cli: &Vec<String>, from_cfg: fn(&Config) -> &Vec<String>| match (
            cfg,
            cli.is_empty(),
        ) {
            (Some(c), true) => from_cfg(c).clone(),
            _ => cli.clone(),
        };
        let include = pick(&self.include, |c| &c.include);
        let exclude = pick(&self.exclude, |c| &c.exclude);
        walk::discover(&self.paths(), &include, &exclude)
    }
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Only list these endpoints (repeatable); their bare hosts are found too.
    #[arg(long, value_name = "URL")]
    pub from: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RebindArgs {
    /// The new endpoint: an absolute https:// URL.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The endpoint to replace; may be omitted when the tree holds exactly one workload endpoint.
    #[arg(long, value_name = "URL", conflicts_with = "cluster")]
    pub from: Option<String>,
    /// Take --from from this cluster in .rebind.yaml, and update the config in the same run.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// Refuse unless exactly N files hold the old endpoint.
    #[arg(long, value_name = "N", requires = "expect_occurrences")]
    pub expect_files: Option<usize>,
    /// Refuse unless exactly M occurrences of the old endpoint are found.
    #[arg(long, value_name = "M", requires = "expect_files")]
    pub expect_occurrences: Option<usize>,
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub rebind: RebindArgs,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Rewrite the working tree in place: no git branch, no commit.
    #[arg(long)]
    pub no_commit: bool,
    /// Branch to create (default: rebind/<first label of the new host>).
    #[arg(long, value_name = "NAME", conflicts_with = "no_commit")]
    pub branch: Option<String>,
    /// Push the new branch to this remote after committing.
    #[arg(long, value_name = "REMOTE", conflicts_with = "no_commit")]
    pub push: Option<String>,
    /// Also write the review (summary, diff, notes) as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub review_out: Option<PathBuf>,
    /// ArgoCD cluster name for the Secret written by --secret-out.
    #[arg(long, value_name = "NAME", requires = "secret_out")]
    pub cluster_name: Option<String>,
    /// Also write the cluster Secret for the new endpoint (token placeholder) to FILE.
    #[arg(long, value_name = "FILE", requires = "cluster_name")]
    pub secret_out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SecretArgs {
    /// ArgoCD's name for the cluster (stringData.name).
    #[arg(long)]
    pub name: String,
    /// The cluster's API server URL (absolute https://).
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// Write the manifest to FILE instead of stdout (created fresh, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Repository to search for Secrets that already register this server
    /// (default: the git work tree around the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub opts: secret::SecretOptions,
}

/// Runs a parsed command line; `Ok` holds the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut out = Out::new(Box::new(stdout), color);
    match cli.command {
        Command::Scan(a) => scan(a, &mut out),
        Command::Diff(a) => diff(a, &mut out),
        Command::Apply(a) => apply(a, &mut out),
        Command::Secret(a) => secret_cmd(*a, &mut out),
        Command::Init(a) => init(a, &mut out),
        Command::Check(a) => check_cmd(a, &mut out),
    }
}

fn warn_skipped(inv: &Inventory) {
    eprint!("{}", report::skipped_text(&inv.skipped));
}

fn scan(a: ScanArgs, out: &mut Out) -> Result<i32> {
    let from = a
        .from
        .iter()
        .map(|f| Endpoint::parse("--from", f))
        .collect::<Result<Vec<_>>>()?;
    let hosts: Vec<String> = from.iter().map(|e| e.host.to_ascii_lowercase()).collect();
    let mut inv = inventory(a.walk.discover()?, &hosts, false)?;
    if !from.is_empty() {
        for src in &mut inv.sources {
            let keep = |o: &crate::locate::Occurrence| from.iter().any(|f| rewrite::matches(o, f));
            match &mut src.located {
                Ok(l) => l.occurrences.retain(keep),
                Err(e) => e.occurrences.retain(keep),
            }
        }
    }
    // A YAML file that holds an endpoint but does not parse is an input error.
    let errors: Vec<rewrite::PlanError> = inv
        .sources
        .iter()
        .filter_map(|s| match &s.located {
            Err(e) if !e.occurrences.is_empty() => Some(rewrite::PlanError {
                rel: s.entry.rel.clone(),
                line: e.line,
                column: e.column,
                message: format!(
                    "not valid YAML ({}); its {} endpoint occurrence(s) are listed as text",
                    e.message,
                    e.occurrences.len()
                ),
            }),
            _ => None,
        })
        .collect();
    if a.json {
        out.put(&format!("{:#}\n", report::scan_json(&inv, &errors)))?;
    } else {
        out.put(&report::scan_text(&inv))?;
        warn_skipped(&inv);
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    Ok(if errors.is_empty() { 0 } else { 2 })
}

/// Parses `--from`/`--to`, resolves an omitted `--from` (or takes it from
/// `--cluster`), plans the rebind, checks the expected counts, and adds the
/// config update when a cluster was named.
fn plan(a: &RebindArgs) -> Result<(Plan, Inventory)> {
    let to = Endpoint::parse("--to", &a.to)?;
    if to.is_in_cluster() {
        bail!(
            "--to {}: the in-cluster endpoint is never a rebind target",
            a.to
        );
    }
    // The config is read once and the tree walked once, whatever is resolved.
    let cfg = a.walk.config()?;
    let walk = a.walk.discover_with(cfg.as_ref())?;
    let cluster = match &a.cluster {
        Some(name) => {
            let Some(cfg) = &cfg else {
                bail!(
                    "--cluster {name}: no {} found above {} (run `rebind init`, or pass --config)",
                    config::FILE_NAME,
                    a.walk.paths()[0].display()
                );
            };
            Some(cfg.cluster(name)?)
        }
        None => None,
    };
    let from = match (&a.from, cluster) {
        (_, Some(c)) => c.endpoint.clone(),
        (Some(f), None) => Endpoint::parse("--from", f)?,
        (None, None) => {
            let inv = inventory(walk.clone(), &[], false)?;
            let found = report::workload_endpoints(&inv);
            match found.as_slice() {
                [one] => Endpoint::parse("--from", one)?,
                [] => bail!("no workload endpoint found under the given paths; pass --from URL"),
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
    let hosts = vec![from.host.to_ascii_lowercase()];
    let inv = inventory(walk, &hosts, true)?;
    if from.key() == to.key() {
        let plan = Plan {
            from,
            to,
            files: Vec::new(),
            mentions: Vec::new(),
            errors: Vec::new(),
        };
        return Ok((plan, inv));
    }
    let mut plan = rewrite::plan(&inv, &from, &to);
    let expect = match (a.expect_files, a.expect_occurrences) {
        (Some(files), Some(occurrences)) => Some(config::Expect { files, occurrences }),
        _ => cluster.and_then(|c| c.expect),
    };
    if let Some(e) = expect {
        let found = config::Expect {
            files: plan.files.len(),
            occurrences: plan.change_count(),
        };
        if found != e && plan.errors.is_empty() {
            let per_file: Vec<String> = plan
                .files
                .iter()
                .map(|f| format!("  {:>3}  {}", f.changes.len(), f.rel))
                .collect();
            bail!(
                "expected {} occurrences in {} files of {}, found {} in {}; nothing written. Found per file:\n{}",
                e.occurrences,
                e.files,
                from.url(),
                found.occurrences,
                found.files,
                per_file.join("\n")
            );
        }
    }
    if let (Some(c), Some(cfg)) = (cluster, &cfg) {
        let new = config::rebound(cfg, &c.name, &to)?;
        plan.files.push(rewrite::FilePlan {
            path: cfg.path.clone(),
            rel: config_rel(cfg, &a.walk.paths()[0]),
            old: cfg.text.as_str().into(),
            new: new.into(),
            changes: Vec::new(),
        });
    }
    Ok((plan, inv))
}

/// The config's path as shown: relative to the walked root when inside it.
fn config_rel(cfg: &Config, root: &std::path::Path) -> String {
    let (Ok(c), Ok(r)) = (cfg.path.canonicalize(), root.canonicalize()) else {
        return cfg.path.display().to_string();
    };
    c.strip_prefix(&r)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| cfg.path.display().to_string())
}

fn fail_on_errors(plan: &Plan) -> Result<()> {
    if plan.errors.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = plan.errors.iter().map(|e| e.to_string()).collect();
    bail!(
        "{} cannot be rewritten safely; nothing written:\n{}",
        if list.len() == 1 {
            "1 file".to_string()
        } else {
            format!("{} files", list.len())
        },
        list.join("\n")
    )
}

fn diff(a: RebindArgs, out: &mut Out) -> Result<i32> {
    let (plan, inv) = plan(&a)?;
    if a.json {
        out.put(&format!("{:#}\n", report::plan_json(&plan, &inv.skipped)))?;
    } else {
        out.put(&report::plan_text(&plan, out.color))?;
        warn_skipped(&inv);
    }
    fail_on_errors(&plan)?;
    Ok(if plan.files.is_empty() { 0 } else { 1 })
}

/// Asks on the terminal; true only for an explicit yes.
fn confirm(question: &str) -> Result<bool> {
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Where the git flow starts looking for a repository: the first PATH (its
/// directory when it is a file), or `.`.
fn repo_start(a: &RebindArgs) -> PathBuf {
    let first = a
        .walk
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    if first.is_file() {
        match first.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    } else {
        first
    }
}

fn files_phrase(n: usize) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}

fn apply(a: ApplyArgs, out: &mut Out) -> Result<i32> {
    let (plan, inv) = plan(&a.rebind)?;
    fail_on_errors(&plan)?;
    let json = a.rebind.json;
    let secret_spec = match &a.cluster_name {
        Some(name) => Some(secret::Spec::new(name, &plan.to.url())?),
        None => None,
    };
    if plan.files.is_empty() {
        if json {
            out.put(&format!("{:#}\n", report::plan_json(&plan, &inv.skipped)))?;
        } else {
            out.put(&report::plan_text(&plan, false))?;
            out.put("Nothing to change.\n")?;
            warn_skipped(&inv);
        }
        return Ok(0);
    }
    // The git flow's checks all run before anything is shown or written.
    let git = if a.no_commit {
        None
    } else {
        let start = repo_start(&a.rebind);
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
        let prep = repo.prepare(&plan.files, a.branch.as_deref(), &default)?;
        if prep.already_done.is_some() {
            let msg = format!(
                "Branch {} already holds exactly this change; nothing to do.\n",
                prep.branch
            );
            if json {
                let mut v = report::plan_json(&plan, &inv.skipped);
                v["branch"] = prep.branch.clone().into();
                v["written"] = false.into();
                out.put(&format!("{v:#}\n"))?;
            } else {
                out.put(&msg)?;
            }
            return Ok(0);
        }
        Some((repo, prep))
    };
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            bail!("refusing to write without confirmation: stdin is not a terminal; review with `rebind diff` and pass --yes");
        }
        out.put(&report::plan_text(&plan, out.color))?;
        warn_skipped(&inv);
        let q = match &git {
            Some((_, prep)) => format!(
                "Create branch {} with {} changes in {}?",
                prep.branch,
                plan.change_count(),
                files_phrase(plan.files.len())
            ),
            None => format!(
                "Rewrite {} occurrence(s) in {} in place?",
                plan.change_count(),
                files_phrase(plan.files.len())
            ),
        };
        if !confirm(&q)? {
            eprintln!("Nothing written.");
            return Ok(1);
        }
    } else if !json {
        out.put(&report::plan_text(&plan, out.color))?;
        warn_skipped(&inv);
    }
    let committed = match &git {
        Some((repo, prep)) => Some(git::commit_flow(
            repo,
            prep,
            &plan.files,
            &report::commit_message(&plan),
            a.push.as_deref(),
        )?),
        None => {
            crate::write::write_all(&plan.files)?;
            None
        }
    };
    if let (Some(spec), Some(path)) = (&secret_spec, &a.secret_out) {
        write_private(path, &secret::render(spec), false)?;
        warn_existing(&repo_start(&a.rebind), &spec.server)?;
    }
    if let Some(path) = &a.review_out {
        let md = report::review_markdown(&plan, committed.as_ref().map(|c| c.branch.as_str()));
        std::fs::write(path, md)
            .with_context(|| format!("--review-out {}: cannot write", path.display()))?;
    }
    if json {
        let mut v = report::plan_json(&plan, &inv.skipped);
        v["written"] = true.into();
        if let Some(c) = &committed {
            v["branch"] = c.branch.clone().into();
            v["commit"] = c.commit.clone().into();
            v["pushed_to"] = c.pushed_to.clone().into();
        }
        out.put(&format!("{v:#}\n"))?;
    } else {
        let mut msg = format!(
            "Rewrote {} occurrence(s) in {}",
            plan.change_count(),
            files_phrase(plan.files.len())
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
        out.put(&msg)?;
    }
    Ok(0)
}

/// Builds the Secret spec from the command line, reading the token and CA.
fn secret_spec(a: &SecretArgs) -> Result<secret::Spec> {
    secret::spec(&a.opts, &a.name, &a.server)
}

/// Refuses, before anything is searched or written, an `--out` that may not
/// take this manifest (a real token never goes inside a git work tree).
fn check_token_target(a: &SecretArgs, spec: &secret::Spec) -> Result<()> {
    if let Some(out) = &a.out {
        secret::check_target(out, spec.holds_token())?;
    }
    Ok(())
}

/// Warns on stderr, once, when Secrets in the git work tree around `repo`
/// (or under `repo` itself outside any) already register `server`.
fn warn_existing(repo: &std::path::Path, server: &str) -> Result<()> {
    let root = secret::search_root(repo).unwrap_or_else(|| repo.to_path_buf());
    let found = secret::find_registrations(&root, server)?;
    eprint!("{}", found.notes(server));
    if let Some(w) = found.duplicate_warning(server, None) {
        eprint!("{w}");
    }
    Ok(())
}

fn secret_cmd(a: SecretArgs, out: &mut Out) -> Result<i32> {
    let spec = secret_spec(&a)?;
    check_token_target(&a, &spec)?;
    eprint!(
        "{}",
        secret::existing_warnings(a.repo.as_deref(), std::path::Path::new("."), &spec)?
    );
    let yaml = secret::render(&spec);
    match &a.out {
        None => out.put(&yaml)?,
        Some(path) => write_private(path, &yaml, spec.holds_token())?,
    }
    Ok(0)
}

/// Writes a manifest to `path`: created fresh (mode 0600), never through a
/// link, and never inside a git work tree when it holds a real token.
fn write_private(path: &std::path::Path, text: &str, private: bool) -> Result<()> {
    secret::write_manifest(path, text, private)
}

fn init(a: InitArgs, out: &mut Out) -> Result<i32> {
    let root = a.path.unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        bail!("{}: not a directory", root.display());
    }
    let target = root.join(config::FILE_NAME);
    if target.exists() {
        bail!(
            "{}: already exists; refusing to overwrite it",
            target.display()
        );
    }
    let inv = inventory(
        walk::discover(std::slice::from_ref(&root), &[], &[])?,
        &[],
        false,
    )?;
    let mut used = std::collections::BTreeSet::new();
    let mut clusters = Vec::new();
    for (i, t) in report::workload_tallies(&inv).into_iter().enumerate() {
        let mut name = t
            .best_hint()
            .map(str::to_string)
            .unwrap_or_else(|| format!("cluster-{}", i + 1));
        let base = name.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        clusters.push(config::InitCluster {
            name,
            endpoint: t.display.clone(),
            expect: config::Expect {
                files: t.value_files.len(),
                occurrences: t.values,
            },
        });
    }
    let text = config::render_init(&clusters);
    config::parse(&target, &text)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("{}: cannot write", target.display()))?;
    let mut msg = format!(
        "Wrote {} with {} cluster(s):\n",
        target.display(),
        clusters.len()
    );
    for c in &clusters {
        msg.push_str(&format!(
            "  {}: {} ({} occurrences in {} files)\n",
            c.name, c.endpoint, c.expect.occurrences, c.expect.files
        ));
    }
    out.put(&msg)?;
    Ok(0)
}

fn check_cmd(a: CheckArgs, out: &mut Out) -> Result<i32> {
    let start = a
        .files
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let path = match &a.config {
        Some(p) => p.clone(),
        None => config::find(&start).ok_or_else(|| {
            anyhow::anyhow!(
                "no {} found above {}; run `rebind init` first",
                config::FILE_NAME,
                start.display()
            )
        })?,
    };
    let cfg = config::load(&path)?;
    let paths = if a.files.is_empty() {
        vec![cfg.root()]
    } else {
        a.files.clone()
    };
    let walk = walk::discover(&paths, &cfg.include, &cfg.exclude)?;
    let hosts: Vec<String> = cfg
        .clusters
        .iter()
        .flat_map(|c| c.retired.iter().map(|r| r.host.to_ascii_lowercase()))
        .collect();
    let inv = inventory(walk, &hosts, false)?;
    let findings = crate::check::check(&inv, &cfg, a.allow_unknown);
    let failed = findings
        .iter()
        .any(|f| f.severity == crate::check::Severity::Error);
    match a.format {
        Format::Text => out.put(&report::check_text(&findings))?,
        Format::Json => out.put(&format!("{:#}\n", report::check_json(&findings)))?,
        Format::Sarif => out.put(&format!("{:#}\n", report::check_sarif(&findings)))?,
    }
    eprint!("{}", report::skipped_text(&inv.skipped));
    Ok(if failed { 1 } else { 0 })
}
