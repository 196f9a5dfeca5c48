//! The command line: clap definitions, and one module per command that
//! turns its flags into a library request once, runs the pipeline and
//! renders the outcome through the output layer.
//!
//! To add a command: a variant of [`Command`] with its `Args`, a module
//! here with `run(args, &mut Sink) -> Result<Exit>`, and a line in [`run`].

mod apply;
mod check;
mod completions;
mod feeders;
mod help;
mod init;
mod scan;
mod secret;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand};
use rebind::cutover::Scope;
use rebind::output::{ColorChoice, Exit, Format, Sink};
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
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorArg,
    /// Print nothing but errors (the exit code still tells the outcome).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for ColorChoice {
    fn from(c: ColorArg) -> ColorChoice {
        match c {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        }
    }
}

/// `--format` and its `--json` alias.
#[derive(Debug, Args)]
pub struct FormatArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: FormatArg,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl FormatArgs {
    /// The format asked for, if the command supports it.
    pub fn resolve(&self, command: &str, allowed: &[Format]) -> Result<Format> {
        let f = if self.json {
            Format::Json
        } else {
            self.format.into()
        };
        if !allowed.contains(&f) {
            let name = |f: Format| format!("{f:?}").to_ascii_lowercase();
            let names: Vec<String> = allowed.iter().map(|&a| name(a)).collect();
            bail!(
                "{command} --format {}: not supported by {command} (it writes {})",
                name(f),
                names.join(", ")
            );
        }
        Ok(f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Sarif,
    Github,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Github => Format::Github,
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
    Diff(RebindArgs),
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
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = help::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the man page (roff) for rebind, or for one command.
    #[command(after_help = help::MAN)]
    Man(ManArgs),
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
    pub format: FormatArgs,
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
    pub format: FormatArgs,
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
    #[command(flatten)]
    pub walk: WalkArgs,
    #[command(flatten)]
    pub format: FormatArgs,
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
    /// Also write the cluster Secret for the new endpoint to FILE, in any form
    /// `rebind secret` supports (the flags below); outside any git work tree
    /// when it holds a real token.
    #[arg(long, value_name = "FILE", requires = "cluster_name")]
    pub secret_out: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Cluster Secret (with --secret-out)")]
    pub secret: secret::SecretFlags,
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
    pub opts: secret::SecretFlags,
    #[command(flatten)]
    pub format: FormatArgs,
}

/// Runs a parsed command line with its output going to `sink`.
pub fn run(cli: Cli, sink: &mut Sink) -> Result<Exit> {
    match cli.command {
        Command::Scan(a) => scan::run(a, sink),
        Command::Diff(a) => apply::diff(a, sink),
        Command::Apply(a) => apply::apply(*a, sink),
        Command::Secret(a) => secret::run(*a, sink),
        Command::Init(a) => init::run(a, sink),
        Command::Check(a) => check::run(a, sink),
        Command::Feeders(a) => feeders::run(a, sink),
        Command::Completions(a) => completions::completions(a, sink),
        Command::Man(a) => completions::man(a, sink),
    }
}

/// Skipped files as warnings on stderr.
pub fn warn_skipped(sink: &mut Sink, skipped: &[rebind::walk::Skipped]) {
    for s in skipped {
        sink.warn(&format!("{}: skipped: {}", s.rel, s.reason));
    }
}
