//! The clap definitions: every command, its arguments and the flags they
//! share, and how the run is resolved before it starts ([`Cli::resolve`]).

use super::help;
use super::secret_flags::SecretFlags;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use rebind::commands::cutover::Scope;
use rebind::output::Format;
use std::path::PathBuf;

/// Rebind hard-coded Kubernetes API endpoints in a GitOps repository, byte-exact.
#[derive(Debug, Parser)]
#[command(name = "rebind", version, about, after_help = help::REBIND)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour output: auto (a terminal, unless NO_COLOR is set;
    /// CLICOLOR_FORCE forces it), always, never.
    #[arg(
        long,
        global = true,
        default_value = "auto",
        value_name = "WHEN",
        value_parser = PossibleValuesParser::new(["auto", "always", "never"]).map(|s| match s.as_str() {
            "always" => anstream::ColorChoice::Always,
            "never" => anstream::ColorChoice::Never,
            _ => anstream::ColorChoice::Auto,
        })
    )]
    pub color: anstream::ColorChoice,
    /// Print nothing but errors (the exit code still tells the outcome).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

/// A command line resolved before any work: the command, the output format
/// it writes, colour and `-q`.
pub struct Resolved {
    pub command: Command,
    pub name: &'static str,
    pub format: Format,
    pub color: bool,
    pub quiet: bool,
}

impl Cli {
    pub fn resolve(self) -> Resolved {
        Resolved {
            name: self.command.name(),
            format: self.command.format(),
            color: rebind::output::color_enabled(self.color),
            quiet: self.quiet,
            command: self.command,
        }
    }
}

/// `--format` (text or json) and its `--json` alias: for the commands that
/// write one report (`apply`, `secret`, `init`).
#[derive(Debug, Args)]
pub struct FormatArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: PlainFormat,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlainFormat {
    Text,
    Json,
}

impl FormatArgs {
    pub fn get(&self) -> Format {
        match (self.json, self.format) {
            (true, _) | (_, PlainFormat::Json) => Format::Json,
            (false, PlainFormat::Text) => Format::Text,
        }
    }
}

/// `--format` with the CI formats too (SARIF, GitHub annotations), and
/// `--json`: for the commands that report places in files (`scan`, `diff`,
/// `check`).
#[derive(Debug, Args)]
pub struct ReportFormatArgs {
    /// Output format: text, json, sarif (SARIF 2.1.0), github (GitHub
    /// Actions annotations).
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: ReportFormat,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
    Sarif,
    Github,
}

impl ReportFormatArgs {
    pub fn get(&self) -> Format {
        if self.json {
            return Format::Json;
        }
        match self.format {
            ReportFormat::Text => Format::Text,
            ReportFormat::Json => Format::Json,
            ReportFormat::Sarif => Format::Sarif,
            ReportFormat::Github => Format::Github,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every Kubernetes API endpoint occurrence, with per-endpoint and tier summaries.
    #[command(after_help = help::SCAN)]
    Scan(ScanArgs),
    /// Show exactly what `apply` would write, as a unified diff; writes nothing.
    /// Exit 1 when there are changes pending, 0 when there is nothing to change.
    #[command(after_help = help::DIFF)]
    Diff(Box<DiffArgs>),
    /// Rewrite the old endpoint to the new one: on a new git branch, or in place with --no-commit.
    #[command(after_help = help::APPLY)]
    Apply(Box<ApplyArgs>),
    /// Print the ArgoCD cluster Secret (or ExternalSecret) for a server URL.
    #[command(after_help = help::SECRET)]
    Secret(Box<SecretArgs>),
    /// Write .rebind.yaml from a scan: one cluster per workload endpoint, with current counts.
    #[command(after_help = help::INIT)]
    Init(InitArgs),
    /// Fail (exit 1) on retired or undeclared endpoints; for pre-commit and CI.
    #[command(after_help = help::CHECK)]
    Check(CheckArgs),
    /// After the merge: which Application or ApplicationSet syncs each
    /// Application manifest, from which revision, and in which order.
    #[command(after_help = help::FEEDERS)]
    Feeders(FeedersArgs),
    /// EKS OIDC issuers: every reference, and the trust statements the new
    /// cluster's pods would be denied by (exit 1 when one trusts only the old issuer).
    #[command(after_help = help::IDENTITY)]
    Identity(IdentityArgs),
    /// One cutover across several repositories (rebind-workspace.yaml):
    /// preflight all, then change each in order, with linked pull requests
    /// and a ledger to resume.
    #[command(after_help = help::WORKSPACE)]
    Workspace(WorkspaceArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = help::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the man page (roff) for rebind, or for one command.
    #[command(after_help = help::MAN)]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    pub command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Preflight every repository, print each one's diff and the order; writes nothing.
    Plan(WorkspaceFlags),
    /// Preflight every repository, then change each in order (branch,
    /// commit, push, pull request), stopping where one waits for a merge.
    Apply(WorkspaceFlags),
    /// Print the table of every repository from the ledger.
    Status(WorkspaceFlags),
    /// The change backwards (to -> from), in the reverse order.
    Rollback(WorkspaceFlags),
}

impl WorkspaceCommand {
    pub fn flags(&self) -> &WorkspaceFlags {
        match self {
            WorkspaceCommand::Plan(f)
            | WorkspaceCommand::Apply(f)
            | WorkspaceCommand::Status(f)
            | WorkspaceCommand::Rollback(f) => f,
        }
    }
}

#[derive(Debug, Args)]
pub struct WorkspaceFlags {
    /// The workspace file (default: rebind-workspace.yaml in the current folder).
    pub file: Option<PathBuf>,
    /// Print every repository's diff and the order; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command's own page (rebind-COMMAND(1)); default: rebind(1).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Repository root to scan and write .rebind.yaml into (default: .).
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

impl Command {
    /// The command's name, as the JSON reports' `command` says it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Scan(_) => "scan",
            Command::Diff(_) => "diff",
            Command::Apply(_) => "apply",
            Command::Secret(_) => "secret",
            Command::Init(_) => "init",
            Command::Check(_) => "check",
            Command::Feeders(_) => "feeders",
            Command::Identity(_) => "identity",
            Command::Workspace(_) => "workspace",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
        }
    }

    /// The output format asked for (text for the commands without one).
    pub fn format(&self) -> Format {
        match self {
            Command::Scan(a) => a.format.get(),
            Command::Diff(a) => a.format.get(),
            Command::Apply(a) => a.format.get(),
            Command::Secret(a) => a.format.get(),
            Command::Init(a) => a.format.get(),
            Command::Check(a) => a.format.get(),
            Command::Feeders(a) => a.format.get(),
            Command::Identity(a) => a.format.get(),
            Command::Workspace(a) => a.command.flags().format.get(),
            Command::Completions(_) | Command::Man(_) => Format::Text,
        }
    }
}

#[derive(Debug, Args)]
pub struct FeedersArgs {
    /// The tree to read (default: .); the git work tree around it when one
    /// of its remotes is the repository the Applications name.
    pub path: Option<PathBuf>,
    /// The branch a cutover merges into (default: the remote's HEAD, else
    /// the current branch's upstream).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// The live Applications and ApplicationSets (`kubectl get
    /// applications.argoproj.io -A -o json`): their specs win over git's,
    /// and every difference is reported.
    #[arg(long, value_name = "FILE")]
    pub live: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Debug, Args)]
pub struct IdentityArgs {
    /// Files or directories (default: `.`).
    pub paths: Vec<PathBuf>,
    /// `aws eks describe-cluster` JSON of the old cluster (its issuer).
    #[arg(long, value_name = "FILE")]
    pub describe_from: Option<PathBuf>,
    /// `aws eks describe-cluster` JSON of the new cluster.
    #[arg(long, value_name = "FILE")]
    pub describe_to: Option<PathBuf>,
    /// The old cluster's issuer URL (when no describe file is given).
    #[arg(long, value_name = "URL")]
    pub oidc_from: Option<String>,
    /// The cluster of `.rebind.yaml` being replaced: its `oidc_issuer` is
    /// the old issuer when neither --describe-from nor --oidc-from is given.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// The new cluster's issuer URL.
    #[arg(long, value_name = "URL")]
    pub oidc_to: Option<String>,
    /// The old cluster's API endpoint: only to suggest which issuer in the
    /// tree is probably its (never acted on).
    #[arg(long, value_name = "URL")]
    pub from: Option<String>,
    /// The safe change: `add` copies each statement that trusts the old
    /// issuer into one that trusts the new (before the cutover);
    /// `remove-retired` removes the statements that trust only a retired
    /// issuer (after the old cluster is torn down). Shown as a diff;
    /// written with --yes.
    #[arg(long, value_enum, value_name = "CHANGE")]
    pub trust: Option<TrustChange>,
    /// A retired issuer, for --trust remove-retired (repeatable).
    #[arg(long, value_name = "URL")]
    pub oidc_retired: Vec<String>,
    /// Write the --trust change (all or nothing, verified); without it the
    /// change is only shown and the exit code is 1.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TrustChange {
    Add,
    RemoveRetired,
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
    #[command(flatten)]
    pub format: ReportFormatArgs,
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
    /// The library's walk request.
    pub fn request(&self) -> Scope {
        Scope {
            paths: self.paths.clone(),
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            config: self.config.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Only list these endpoints (repeatable); their bare hosts are found too.
    #[arg(long, value_name = "URL")]
    pub from: Vec<String>,
    #[command(flatten)]
    pub format: ReportFormatArgs,
}

#[derive(Debug, Args)]
pub struct RebindArgs {
    /// The new endpoint: an absolute https:// URL (default: the endpoint
    /// of --describe-to).
    #[arg(long, value_name = "URL", required_unless_present = "describe_to")]
    pub to: Option<String>,
    /// `aws eks describe-cluster` JSON of the old cluster: its endpoint is
    /// --from (unless given) and its OIDC issuer the old issuer of the
    /// review's trust coverage.
    #[arg(long, value_name = "FILE", requires = "describe_to")]
    pub describe_from: Option<PathBuf>,
    /// `aws eks describe-cluster` JSON of the new cluster: its endpoint is
    /// --to (unless given), its issuer the new one.
    #[arg(long, value_name = "FILE")]
    pub describe_to: Option<PathBuf>,
    /// The old cluster's EKS name (default: the --describe-from file's):
    /// with the new one, the name positions move with the endpoint.
    #[arg(long, value_name = "NAME", requires = "eks_name_to")]
    pub eks_name_from: Option<String>,
    /// The new cluster's EKS name (default: the --describe-to file's).
    #[arg(long, value_name = "NAME", requires = "eks_name_from")]
    pub eks_name_to: Option<String>,
    /// The endpoint to replace; may be omitted when the tree holds exactly one workload endpoint.
    #[arg(long, value_name = "URL", conflicts_with = "cluster")]
    pub from: Option<String>,
    /// Take --from from this cluster in .rebind.yaml, and update the config in the same run.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// Refuse unless exactly N manifests hold the old endpoint.
    #[arg(long, value_name = "N")]
    pub expect_files: Option<usize>,
    /// Refuse unless exactly M occurrences of the old endpoint are found.
    #[arg(long, value_name = "M")]
    pub expect_occurrences: Option<usize>,
    /// Allow --to to be an endpoint the tree already uses for workloads
    /// (merging two clusters' apps onto one; without a config only).
    #[arg(long)]
    pub allow_merge: bool,
    /// Take the expected counts from an audit (`rebind diff --format json`
    /// output); refuse unless it audited the same --from and --to.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["expect_files", "expect_occurrences"]
    )]
    pub expect_from_audit: Option<PathBuf>,
    /// The branch the cutover merges into, for the after-merge review
    /// (default: the remote's HEAD, else the current branch's upstream).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// The live Applications (`kubectl get applications.argoproj.io -A -o
    /// json`): their specs win over git's in the after-merge review.
    #[arg(long, value_name = "FILE")]
    pub live: Option<PathBuf>,
    /// Refuse (exit 2, nothing written) unless every rewritten file is
    /// proven to deploy on merge (or declared as applied outside ArgoCD):
    /// its parent is pinned, tracks another branch, does not include it, is
    /// not in this repository, or the model cannot prove it (the reason is
    /// named).
    #[arg(long)]
    pub require_deploys: bool,
    /// A path of this repository (a folder, or one file; relative to the
    /// repository root) applied outside ArgoCD, and who applies it
    /// (`manifests/crds=terraform`): the after-merge review says who
    /// applies it instead of refusing it, as `applied_by` under `feeders:`
    /// in .rebind.yaml does (repeatable).
    #[arg(long, value_name = "PATH=WHO")]
    pub applied_by: Vec<String>,
    #[command(flatten)]
    pub walk: WalkArgs,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub rebind: RebindArgs,
    #[command(flatten)]
    pub format: ReportFormatArgs,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub rebind: RebindArgs,
    #[command(flatten)]
    pub format: FormatArgs,
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
    /// After the push, open the pull request (GitHub, with gh) or merge
    /// request (GitLab, with glab) from the branch, or update the body of
    /// the open one: title the commit subject, body the review Markdown,
    /// base the branch the review was computed against. The client is
    /// chosen from the push remote's URL and runs with your login.
    #[arg(long, requires = "push")]
    pub pr: bool,
    /// The client for --pr, for a host whose name says neither github nor
    /// gitlab.
    #[arg(long, value_enum, value_name = "CLIENT", requires = "pr")]
    pub pr_client: Option<rebind::repo::pr::Client>,
    /// Open the pull request as a draft.
    #[arg(long, requires = "pr")]
    pub pr_draft: bool,
    /// Add this label to the pull request (repeatable).
    #[arg(long, value_name = "LABEL", requires = "pr")]
    pub pr_label: Vec<String>,
    /// Ask this reviewer (repeatable).
    #[arg(long, value_name = "USER", requires = "pr")]
    pub pr_reviewer: Vec<String>,
    /// Also write the review (summary, diff, notes) as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub review_out: Option<PathBuf>,
    /// ArgoCD cluster name for the Secret written by --secret-out (default,
    /// with --describe-to: the new cluster's EKS name).
    #[arg(long, value_name = "NAME", requires = "secret_out")]
    pub cluster_name: Option<String>,
    /// Also write the cluster Secret for the new endpoint to FILE, in any form
    /// `rebind secret` supports (the flags below); outside any git work tree
    /// when it holds a real token.
    #[arg(long, value_name = "FILE")]
    pub secret_out: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Cluster Secret (with --secret-out)")]
    pub secret: SecretFlags,
}

#[derive(Debug, Args)]
pub struct SecretArgs {
    /// ArgoCD's name for the cluster (stringData.name; default: the
    /// --describe file's EKS name).
    #[arg(long)]
    pub name: Option<String>,
    /// The cluster's API server URL (absolute https://), or its EKS ARN
    /// (default: the --describe file's endpoint, or ARN with --server-arn).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Write the manifest to FILE instead of stdout (created fresh, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Repository to search for Secrets that already register this server
    /// (default: the git work tree around the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub opts: SecretFlags,
    #[command(flatten)]
    pub format: FormatArgs,
}
