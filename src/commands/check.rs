//! `rebind check`: findings for endpoints that must not be committed: a
//! retired endpoint of a cluster in `.rebind.yaml`, or a workload endpoint at
//! a cluster position that no cluster in the config declares; and the
//! command itself ([`CheckOptions`] resolved into the config and the walk,
//! then [`run`]).

use crate::discover::walk;
use crate::edit::rewrite::matches;
use crate::find::inventory::Inventory;
use crate::find::locate::Kind;
use crate::find::locate::Occurrence;
use crate::model::config::{self, Config};
use crate::output::check::CheckReport;
use crate::output::{rules, Done, Exit, Level, Reported, Rule};
use crate::text::endpoint::Shape;
use anyhow::Result;
use std::borrow::Cow;
use std::path::PathBuf;

/// A `check` finding: owned, as it outlives the inventory it was read from.
pub type Finding = crate::output::Finding<'static>;

/// A finding at occurrence `o` of file `rel`.
fn finding(rel: &str, o: &Occurrence, level: Level, rule: Rule, message: String) -> Finding {
    Finding {
        path: Cow::Owned(rel.to_string()),
        line: o.line,
        column: o.column,
        level,
        rule,
        message: Cow::Owned(message),
        fix: None,
    }
}

/// The finding for a file holding endpoint text that does not parse: where
/// its values sit cannot be read, so it cannot be shown clean.
fn unparsed(src: &crate::find::inventory::Source) -> Option<Finding> {
    let e = src
        .located
        .as_ref()
        .err()
        .filter(|e| !e.occurrences.is_empty())?;
    Some(Finding {
        path: Cow::Owned(src.entry.rel.clone()),
        line: e.line,
        column: e.column,
        level: Level::Error,
        rule: rules::UNPARSED,
        message: Cow::Owned(format!(
            "not valid YAML ({}); it holds {}, which cannot be checked",
            e.message,
            crate::text::words::count(e.occurrences.len(), "endpoint occurrence")
        )),
        fix: Some(format!(
            "fix the file, or list it under exclude: in {}",
            crate::model::config::FILE_NAME
        )),
    })
}

/// Whether the template mention `o` of `src` sits in a template comment
/// (`{{/* ... */}}`), not in an action that renders or decides. The
/// inventory may not keep the file's text: it is read again (once per
/// file), and a file that cannot be read again proves nothing.
fn in_template_comment(
    src: &crate::find::inventory::Source,
    o: &Occurrence,
    text: &mut Option<String>,
) -> bool {
    if text.is_none() {
        *text = Some(if src.text.is_empty() {
            std::fs::read_to_string(&src.entry.path).unwrap_or_default()
        } else {
            src.text.to_string()
        });
    }
    let text = text.as_deref().unwrap_or_default();
    let at = o.found.start;
    crate::syntax::yaml::template_actions(text)
        .iter()
        .any(|&(s, e)| {
            s <= at && at < e && crate::syntax::gotemplate::action_is_comment(&text[s..e])
        })
}

/// The finding of a retired endpoint `r` of cluster `c` at `o` (not a
/// rollback registration). `text`: the file's text, once read.
fn retired_finding(
    src: &crate::find::inventory::Source,
    o: &Occurrence,
    c: &config::Cluster,
    r: &crate::text::endpoint::Endpoint,
    text: &mut Option<String>,
) -> Finding {
    // A file that does not parse cannot prove the mention harmless; a
    // literal in a template action (a `default`, a comparison) is committed
    // and renders or decides when the value is unset: only a template
    // comment is a mention. A text file that is not prose (Terraform, an
    // `.env`, a script, a `.tpl`) may be configuration something applies,
    // and its comments cannot be told from its values.
    let level = if o.kind == Kind::Value
        || src.located.is_err()
        || (o.kind == Kind::Text && !crate::discover::walk::is_prose(&src.entry.path))
        || (o.kind == Kind::Template && !in_template_comment(src, o, text))
    {
        Level::Error
    } else {
        Level::Warning
    };
    let place = match o.kind {
        Kind::Value => "",
        Kind::Comment => " (in a comment)",
        Kind::Text => " (in a text file)",
        Kind::Template => " (in a template action)",
    };
    let mut f = finding(
        &src.entry.rel,
        o,
        level,
        rules::RETIRED,
        format!(
            "retired endpoint {} of cluster {}; current is {}{place}",
            r.url(),
            c.name,
            c.endpoint.url()
        ),
    );
    if o.kind == Kind::Value {
        f.fix = Some(format!(
            "rebind apply --from {} --to {}",
            r.url(),
            c.endpoint.url()
        ));
    } else if o.kind == Kind::Template && f.level == Level::Error {
        f.fix = Some(format!(
                "change the literal in the template action to {} by hand (rebind never rewrites template actions)",
                c.endpoint.url()
            ));
    }
    f
}

/// Checks every occurrence in `inv` against the config. Retired endpoints in
/// values and template actions (a literal `default`, a comparison) are
/// errors, in comments, template comments and text warnings;
/// unknown endpoints at cluster positions are errors unless `allow_unknown`.
pub fn check(inv: &Inventory, cfg: &Config, allow_unknown: bool) -> Vec<Finding> {
    // What could not be read or parsed cannot be shown clean.
    let mut out: Vec<Finding> = inv.sources.iter().filter_map(unparsed).collect();
    for s in inv.skipped.iter().filter(|s| s.may_hold) {
        out.push(Finding {
            path: Cow::Owned(s.rel.clone()),
            line: 1,
            column: 1,
            level: Level::Error,
            rule: rules::UNREAD,
            message: Cow::Owned(format!(
                "may hold an endpoint but was not read: {}",
                s.reason
            )),
            fix: Some(format!(
                "make the files rebind could not read readable (UTF-8 for YAML), or list them under exclude: in {}",
                crate::model::config::FILE_NAME
            )),
        });
    }
    for src in &inv.sources {
        let rel = &src.entry.rel;
        // Read once per file, only when a retired endpoint sits at a
        // registration's server.
        let mut registrations = None;
        let mut text = None;
        for o in src.occurrences() {
            let retired = cfg
                .clusters
                .iter()
                .find_map(|c| c.retired.iter().find(|r| matches(o, r)).map(|r| (c, r)));
            if let Some((c, r)) = retired {
                if let Some(f) = rollback_registration(rel, src, o, c, r, &mut registrations) {
                    out.push(f);
                    continue;
                }
                out.push(retired_finding(src, o, c, r, &mut text));
                continue;
            }
            let declared = cfg.clusters.iter().any(|c| matches(o, &c.endpoint));
            let workload =
                o.kind == Kind::Value && o.cluster_position && o.shape() != Shape::InCluster;
            if workload && !declared {
                let level = if allow_unknown {
                    Level::Warning
                } else {
                    Level::Error
                };
                let mut f = finding(
                    rel,
                    o,
                    level,
                    rules::UNKNOWN,
                    format!(
                        "endpoint {} at {} is not declared by any cluster in {}",
                        o.endpoint,
                        o.yaml_path.as_deref().unwrap_or("a cluster position"),
                        crate::model::config::FILE_NAME
                    ),
                );
                f.fix = Some(format!(
                    "declare it as a cluster's endpoint in {} (or rebind it to a declared one with rebind apply --from URL --to URL)",
                    crate::model::config::FILE_NAME
                ));
                out.push(f);
            }
        }
    }
    out
}

/// The finding for a retired endpoint `r` of cluster `c` that is the
/// `server` of a whole cluster registration document (a labelled Secret, or
/// an ExternalSecret whose template is one, written at the key itself): the
/// old cluster's registration a cutover keeps beside the new one as the
/// rollback target. A warning while the cluster may roll back; an error
/// once `torn_down` lists the endpoint. Anything else holding the retired
/// endpoint (an Application's destination, a registration's `config`, a
/// value a chart renders into a registration, a file that does not parse)
/// stays a `retired-endpoint` finding. `registrations`: the file's, read on
/// first use.
fn rollback_registration(
    rel: &str,
    src: &crate::find::inventory::Source,
    o: &Occurrence,
    c: &config::Cluster,
    r: &crate::text::endpoint::Endpoint,
    registrations: &mut Option<Vec<(usize, String, String)>>,
) -> Option<Finding> {
    let at_server = o.kind == Kind::Value
        && o.position == Some(crate::model::positions::Position::Registration)
        && o.via.is_none()
        && src.located.is_ok();
    if !at_server {
        return None;
    }
    // The inventory `check` reads keeps no text: the file is read again
    // (one that cannot be is no registration, and stays a failure).
    let regs = registrations.get_or_insert_with(|| {
        std::fs::read_to_string(&src.entry.path)
            .map(|t| crate::review::secret::registration_servers(&t))
            .unwrap_or_default()
    });
    let same = |server: &str| {
        crate::text::endpoint::Endpoint::parse("", server.trim().trim_end_matches('/'))
            .is_ok_and(|e| e.key() == r.key())
    };
    let (_, _, resource) = regs
        .iter()
        .find(|(line, server, _)| *line == o.line && same(server))?;
    let torn = c.torn_down.iter().any(|t| t.key() == r.key());
    let (level, message, fix) = if torn {
        (
            Level::Error,
            format!(
                "{resource} registers {} of cluster {}, which {} declares torn down: delete this registration (current is {})",
                r.url(),
                c.name,
                config::FILE_NAME,
                c.endpoint.url()
            ),
            format!("delete {resource}: its cluster is torn down"),
        )
    } else {
        (
            Level::Warning,
            format!(
                "rollback registration {resource} of retired endpoint {} of cluster {} (current is {}): kept as the rollback target; delete it at teardown",
                r.url(),
                c.name,
                c.endpoint.url()
            ),
            format!(
                "at teardown, list {} under {}'s torn_down in {} and delete {resource}",
                r.url(),
                c.name,
                config::FILE_NAME
            ),
        )
    };
    let mut f = finding(rel, o, level, rules::ROLLBACK_REGISTRATION, message);
    f.fix = Some(fix);
    Some(f)
}

/// Findings for every reference to a retired OIDC issuer (`retired_oidc` of
/// a cluster): in a manifest an error, in a text file (Terraform, a runbook)
/// a warning, like retired endpoints.
pub fn retired_issuers(inv: &crate::review::oidc::Inventory, cfg: &Config) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in &inv.references {
        let Some((c, retired)) = cfg.clusters.iter().find_map(|c| {
            c.retired_oidc
                .iter()
                .find(|i| i.same(&r.found.issuer))
                .map(|i| (c, i))
        }) else {
            continue;
        };
        let current = c
            .oidc_issuer
            .as_ref()
            .map(|i| format!("; current is {}", i.url()))
            .unwrap_or_default();
        let place = if r.in_comment {
            " (in a comment)"
        } else if r.in_manifest {
            ""
        } else {
            " (in a text file)"
        };
        out.push(Finding {
            path: Cow::Owned(r.rel.clone()),
            line: r.line,
            column: r.column,
            level: if r.in_manifest && !r.in_comment {
                Level::Error
            } else {
                Level::Warning
            },
            rule: rules::RETIRED_ISSUER,
            message: Cow::Owned(format!(
                "retired OIDC issuer {} of cluster {} ({}){current}{place}",
                retired.url(),
                c.name,
                r.found.form.name()
            )),
            fix: Some(format!(
                "rebind identity --trust remove-retired --oidc-retired {} --yes",
                retired.url()
            )),
        });
    }
    out
}

/// `rebind check`, resolved from its flags.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The files to check (empty: the whole repository the config is in).
    pub files: Vec<PathBuf>,
    /// The config (default: `.rebind.yaml` found above the first file).
    pub config: Option<PathBuf>,
    /// Undeclared endpoints are warnings, not failures.
    pub allow_unknown: bool,
}

/// The config and the walk `check` runs on, from its flags.
fn resolve(a: &CheckOptions) -> Result<(config::Config, walk::Walk)> {
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
    let walk = walk::discover(&walk::WalkRequest {
        tracked_hidden: crate::repo::git::tracked_hidden(&paths),
        paths,
        root: Some(cfg.root()),
        include: cfg.include.clone(),
        exclude: cfg.exclude.clone(),
        config_path: Some(cfg.path.clone()),
    })?;
    Ok((cfg, walk))
}

/// Makes each command a fix suggests work where `check` ran: on the tree
/// it checked (its paths, when that is not the current directory), without
/// a question (`--yes`: a hint is run as given, from a script too), and
/// with `--no-commit` outside a git repository (where `apply` cannot make
/// its branch), and with a `--branch` that does not exist yet when the
/// default one does (the cutover's own branch, still there).
fn runnable_fixes(found: &mut [Finding], a: &CheckOptions, cfg: &Config) {
    let cwd = std::env::current_dir().ok();
    let paths: Vec<PathBuf> = if a.files.is_empty() {
        vec![cfg.root()]
    } else {
        a.files.clone()
    };
    let mut scope = String::new();
    for p in &paths {
        let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if cwd
            .as_ref()
            .is_some_and(|c| std::fs::canonicalize(c).ok().as_ref() == Some(&abs))
        {
            continue;
        }
        let shown = cwd
            .as_ref()
            .and_then(|c| abs.strip_prefix(std::fs::canonicalize(c).ok()?).ok())
            .map(|r| r.to_path_buf())
            .unwrap_or(abs);
        scope.push(' ');
        scope.push_str(&crate::repo::git::sq_quote_if_needed(
            &shown.display().to_string(),
        ));
    }
    let repo = crate::repo::git::open(&cfg.root()).ok().flatten();
    for f in found.iter_mut() {
        let Some(fix) = f.fix.as_mut() else {
            continue;
        };
        if fix.starts_with("rebind apply ") {
            match &repo {
                None => fix.push_str(" --no-commit"),
                Some(repo) => {
                    if let Some(branch) = free_branch(repo, fix) {
                        fix.push_str(&format!(" --branch {branch}"));
                    }
                }
            }
            if !fix.contains(" --yes") {
                fix.push_str(" --yes");
            }
            fix.push_str(&scope);
        } else if fix.starts_with("rebind identity ") {
            fix.push_str(&scope);
        }
    }
}

/// The branch an `apply` hint must name: `None` when its default branch
/// (from its `--to`) is free, else the first free `<default>-N`.
fn free_branch(repo: &crate::repo::git::Repo, fix: &str) -> Option<String> {
    let mut words = fix.split_whitespace();
    words.find(|w| *w == "--to")?;
    let to = crate::text::endpoint::Endpoint::parse("--to", words.next()?).ok()?;
    let default = crate::repo::git::default_branch(&to.host);
    if !repo.has_branch(&default) {
        return None;
    }
    (2..)
        .map(|n| format!("{default}-{n}"))
        .find(|b| !repo.has_branch(b))
}

/// On the whole repository: each tracked file whose staged content (the
/// index: what the commit being made holds) has a retired endpoint that its
/// work-tree copy (deleted, or edited and not staged) does not: the walk of
/// the work tree does not see it, a commit of the branch still deploys it.
/// An error when the walk could not read the file at all (deleted, type
/// changed); a warning when it read an edited copy not staged yet (the next
/// `git add` commits what was checked; a pre-commit run sees the staged
/// content anyway).
fn uncommitted(cfg: &Config, hosts: &[String]) -> Result<Vec<Finding>> {
    let found = crate::commands::unseen::uncommitted_holding(
        &[cfg.root()],
        hosts,
        crate::commands::unseen::Committed::Index,
    )?;
    Ok(found
        .into_iter()
        .map(|u| Finding {
            level: if u.state == "modified" {
                Level::Warning
            } else {
                Level::Error
            },
            path: Cow::Owned(u.rel),
            line: 1,
            column: 1,
            rule: rules::UNCOMMITTED,
            message: Cow::Owned(format!(
                "{} in the work tree, but its committed content holds the retired endpoint's host {}",
                u.state, u.host
            )),
            fix: Some("commit the change (or `git restore` the file), then check again".into()),
        })
        .collect())
}

/// Each file the config's `exclude` leaves out that still holds a retired
/// endpoint's host (as text, any case), as `diff`/`apply` name it: a
/// warning, as leaving it out is the user's choice; an error when the file
/// is named on the command line (the user asked to check it).
fn excluded(walk: &walk::Walk, hosts: &[String], named: &[PathBuf]) -> Vec<Finding> {
    if hosts.is_empty() {
        return Vec::new();
    }
    let named: Vec<PathBuf> = named
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    crate::commands::unseen::excluded_counts(walk, hosts)
        .into_iter()
        .map(|(e, n)| {
            let asked = std::fs::canonicalize(&e.path).is_ok_and(|p| named.contains(&p));
            Finding {
                path: Cow::Owned(e.rel),
                line: 1,
                column: 1,
                level: if asked { Level::Error } else { Level::Warning },
                rule: rules::RETIRED,
                message: Cow::Owned(format!(
                    "left out by the config's `exclude`, but holds a retired endpoint's host ({}): not checked",
                    crate::text::words::count(n, "time")
                )),
                fix: Some(format!(
                    "rebind it by hand (or take it out of exclude: in {})",
                    crate::model::config::FILE_NAME
                )),
            }
        })
        .collect()
}

/// `rebind check`: the findings in the format asked for; exit 1 when one
/// fails the check.
pub fn run(a: &CheckOptions) -> Done {
    let (cfg, walk) = resolve(a)?;
    let hosts: Vec<String> = cfg
        .clusters
        .iter()
        .flat_map(|c| c.retired.iter().map(|r| r.host.to_ascii_lowercase()))
        .collect();
    let inv = crate::commands::pipeline::inventory(&walk, &hosts, false)?;
    let mut found = check(&inv, &cfg, a.allow_unknown);
    if a.files.is_empty() {
        found.extend(uncommitted(&cfg, &hosts)?);
    }
    found.extend(excluded(&walk, &hosts, &a.files));
    if cfg.clusters.iter().any(|c| !c.retired_oidc.is_empty()) {
        found.extend(retired_issuers(
            &crate::review::oidc::inventory(&walk),
            &cfg,
        ));
    }
    runnable_fixes(&mut found, a, &cfg);
    let failed = found.iter().any(|f| f.level == Level::Error);
    let report = CheckReport {
        findings: found,
        skipped: inv.skipped,
    };
    let exit = if failed { Exit::Pending } else { Exit::Ok };
    Ok(Reported::new(report, exit))
}
