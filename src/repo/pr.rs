//! The pull request of `apply --pr`: which host client opens it (`gh` for
//! GitHub, `glab` for GitLab, chosen from the push remote's URL or named by
//! `--pr-client`), the exact argv of each call rebind makes to it, and how
//! its answers are read. The client runs with the user's environment, the
//! way the push runs the system git: rebind reads and stores no token.
//!
//! The calls, in order (`REPO` is `HOST/OWNER/REPO` for gh and
//! `https://HOST/PATH` for glab, from the push remote's URL):
//! - find an open one for the branch: `gh pr list --repo REPO --head BRANCH
//!   --state open --json number,url`, `glab mr list --repo REPO
//!   --source-branch BRANCH --output json` (glab lists open ones only);
//! - none: `gh pr create --repo REPO --head BRANCH [--base BASE] --title
//!   TITLE --body-file - [--draft] [--label L]... [--reviewer R]...` (the
//!   body on standard input), `glab mr create --repo REPO --source-branch
//!   BRANCH [--target-branch BASE] --title TITLE --description BODY
//!   [--draft] [--label L]... [--reviewer R]... --yes` (glab reads a
//!   description from no file and no standard input: it is one argument);
//! - one: its body is replaced, `gh pr edit N --repo REPO --body-file -`,
//!   `glab mr update N --repo REPO --description BODY`.
//!
//! A workspace run also asks a pull request's state (`gh pr view N --repo
//! REPO --json state`, `glab mr view N --repo REPO --output json`) and
//! replaces the body of one it opened earlier (the same edit call).

use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// The host's command-line client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// GitHub's `gh`.
    Gh,
    /// GitLab's `glab`.
    Glab,
}

impl Client {
    pub fn program(self) -> &'static str {
        match self {
            Client::Gh => "gh",
            Client::Glab => "glab",
        }
    }

    /// What the host calls it.
    pub fn noun(self) -> &'static str {
        match self {
            Client::Gh => "pull request",
            Client::Glab => "merge request",
        }
    }

    /// The longest body that reaches the host, in characters. GitHub
    /// takes 65 536. GitLab takes 1 048 576, but glab takes the description
    /// only as one command-line argument, which Linux caps at 131 072 bytes
    /// (`MAX_ARG_STRLEN`): 32 768 characters of up to 4 bytes each always
    /// fit.
    pub fn body_limit(self) -> usize {
        match self {
            Client::Gh => 65_536,
            Client::Glab => 32_768,
        }
    }

    /// The client for a host: github.com and hosts whose name contains
    /// `github` are GitHub's, the same for GitLab; `None` for any other
    /// host (or one whose name contains both).
    pub fn for_host(host: &str) -> Option<Client> {
        let h = host.to_ascii_lowercase();
        match (h.contains("github"), h.contains("gitlab")) {
            (true, false) => Some(Client::Gh),
            (false, true) => Some(Client::Glab),
            _ => None,
        }
    }
}

/// Where a git remote's URL points: the host (no user; with the port of an
/// https URL that names one other than 443, the web server the client
/// talks to) and the repository's path (`owner/repo`,
/// `group/subgroup/repo`; no `.git`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub host: String,
    pub path: String,
}

impl Remote {
    /// A remote URL in any spelling [`crate::text::repo_url::repo_identity`]
    /// reads (https, ssh, scp-like `user@host:path`); the host in lower
    /// case. `None` for a local path, and for a URL that names no
    /// repository a client could address: fewer than two path segments, an
    /// empty one, a query or fragment, or characters no owner, group or
    /// repository name holds.
    pub fn parse(url: &str) -> Option<Remote> {
        let crate::text::repo_url::RemoteParts {
            host,
            https_port,
            path,
        } = crate::text::repo_url::remote_parts(url)?;
        let segment = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        let segments: Vec<&str> = path.split('/').collect();
        if segments.len() < 2 || !segments.iter().all(|s| segment(s)) {
            return None;
        }
        let host = host.to_ascii_lowercase();
        let host = match https_port {
            Some(port) if port != 443 => format!("{host}:{port}"),
            _ => host,
        };
        Some(Remote { host, path })
    }
}

/// The client and the repository from a remote's URLs (most telling first,
/// as [`crate::repo::git::Repo::push_urls`] lists them): the first whose host
/// names GitHub or GitLab, or with `client` given, the first that names a
/// host and a repository.
pub fn choose(urls: &[String], client: Option<Client>) -> Option<(Client, Remote)> {
    let remotes = || urls.iter().filter_map(|u| Remote::parse(u));
    match client {
        Some(c) => remotes().next().map(|r| (c, r)),
        None => remotes().find_map(|r| Some((Client::for_host(&r.host)?, r))),
    }
}

/// The pull request to open or update: where, from which branch, into
/// which, and how it is presented.
#[derive(Debug, Clone)]
pub struct Target {
    pub client: Client,
    pub remote: Remote,
    /// The cutover branch.
    pub head: String,
    /// The branch it merges into; `None`: the host's default branch.
    pub base: Option<String>,
    pub title: String,
    pub draft: bool,
    pub labels: Vec<String>,
    pub reviewers: Vec<String>,
}

/// Where `apply --pr` commits the full review when it is longer than the
/// host takes in a body: `.rebind/reviews/<branch>.md` on the cutover
/// branch (a branch name is a valid relative path: git refuses `..`,
/// components starting with `.` and a leading `/`).
pub fn review_path(branch: &str) -> String {
    format!("{}/reviews/{branch}.md", crate::discover::walk::REBIND_DIR)
}

impl Target {
    /// The web address of `path` on the cutover branch: GitHub's
    /// `https://HOST/OWNER/REPO/blob/BRANCH/PATH`, GitLab's
    /// `https://HOST/PATH/-/blob/BRANCH/PATH` (each segment
    /// percent-encoded, `/` kept).
    pub fn blob_url(&self, path: &str) -> String {
        let blob = match self.client {
            Client::Gh => "blob",
            Client::Glab => "-/blob",
        };
        format!(
            "https://{}/{}/{blob}/{}/{}",
            self.remote.host,
            self.remote.path,
            url_path(&self.head),
            url_path(path)
        )
    }
}

/// `s` percent-encoded for a URL path: every byte but the unreserved ones
/// and `/`.
fn url_path(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A pull request found or made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub url: String,
    pub number: Option<u64>,
    pub client: Client,
    /// `opened` or `updated`.
    pub action: &'static str,
}

/// One run of the client: its argv, what goes to its standard input, and
/// the equivalent shell line (with the body read from the file that holds
/// it), for messages and for finishing by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub program: &'static str,
    pub args: Vec<String>,
    pub stdin: String,
    pub shell: String,
}

impl Call {
    fn new(client: Client) -> Call {
        Call {
            program: client.program(),
            args: Vec::new(),
            stdin: String::new(),
            shell: client.program().to_string(),
        }
    }

    fn arg(mut self, a: &str) -> Call {
        self.shell.push(' ');
        self.shell
            .push_str(&crate::repo::git::sq_quote_if_needed(a));
        self.args.push(a.to_string());
        self
    }

    fn args<'a>(self, flag: &str, values: impl IntoIterator<Item = &'a String>) -> Call {
        values.into_iter().fold(self, |c, v| c.arg(flag).arg(v))
    }

    /// The body: on standard input for gh (`--body-file -`), as the
    /// argument of `--description` for glab; the shell line reads `file`.
    fn body(mut self, client: Client, body: &str, file: &Path) -> Call {
        let shown = crate::repo::git::sq_quote_if_needed(&file.to_string_lossy());
        match client {
            Client::Gh => {
                self.args
                    .extend(["--body-file".to_string(), "-".to_string()]);
                self.shell.push_str(&format!(" --body-file {shown}"));
                self.stdin = body.to_string();
            }
            Client::Glab => {
                self.args
                    .extend(["--description".to_string(), body.to_string()]);
                self.shell
                    .push_str(&format!(" --description \"$(cat {shown})\""));
            }
        }
        self
    }
}

impl Target {
    /// `--repo` as the client reads it.
    fn repo(&self) -> String {
        let Remote { host, path } = &self.remote;
        match self.client {
            Client::Gh => format!("{host}/{path}"),
            Client::Glab => format!("https://{host}/{path}"),
        }
    }

    /// `gh pr VERB` or `glab mr VERB`.
    fn call(&self, verb: &str) -> Call {
        let noun = match self.client {
            Client::Gh => "pr",
            Client::Glab => "mr",
        };
        Call::new(self.client).arg(noun).arg(verb)
    }

    /// The call that lists the open pull requests of the branch.
    pub fn list(&self) -> Call {
        let (head, tail): (&str, &[&str]) = match self.client {
            Client::Gh => (
                "--head",
                &["--state", "open", "--json", "number,url,isCrossRepository"],
            ),
            Client::Glab => ("--source-branch", &["--output", "json"]),
        };
        let c = self
            .call("list")
            .arg("--repo")
            .arg(&self.repo())
            .arg(head)
            .arg(&self.head);
        tail.iter().fold(c, |c, a| c.arg(a))
    }

    /// The call that opens the pull request with `body` (kept in `file`).
    pub fn create(&self, body: &str, file: &Path) -> Call {
        let (head, base) = match self.client {
            Client::Gh => ("--head", "--base"),
            Client::Glab => ("--source-branch", "--target-branch"),
        };
        let mut c = self
            .call("create")
            .arg("--repo")
            .arg(&self.repo())
            .arg(head)
            .arg(&self.head);
        if let Some(b) = &self.base {
            c = c.arg(base).arg(b);
        }
        c = c
            .arg("--title")
            .arg(&self.title)
            .body(self.client, body, file);
        if self.draft {
            c = c.arg("--draft");
        }
        c = c
            .args("--label", &self.labels)
            .args("--reviewer", &self.reviewers);
        match self.client {
            Client::Gh => c,
            Client::Glab => c.arg("--yes"),
        }
    }

    /// The call that replaces the body of pull request `number`.
    pub fn update(&self, number: u64, body: &str, file: &Path) -> Call {
        let verb = match self.client {
            Client::Gh => "edit",
            Client::Glab => "update",
        };
        self.call(verb)
            .arg(&number.to_string())
            .arg("--repo")
            .arg(&self.repo())
            .body(self.client, body, file)
    }

    /// The call that asks for pull request `number`'s state.
    pub fn view(&self, number: u64) -> Call {
        let c = self
            .call("view")
            .arg(&number.to_string())
            .arg("--repo")
            .arg(&self.repo());
        match self.client {
            Client::Gh => c.arg("--json").arg("state"),
            Client::Glab => c.arg("--output").arg("json"),
        }
    }

    /// The state in the view call's answer: gh says `OPEN`, `CLOSED` or
    /// `MERGED`; glab `opened`, `closed`, `locked` or `merged`. Anything
    /// else is an error, never "open" or "merged".
    pub fn parse_state(&self, answer: &str) -> Result<State> {
        let v: serde_json::Value = serde_json::from_str(answer.trim()).map_err(|e| {
            anyhow!(
                "{} answered something that is not JSON ({e}): {}",
                self.client.program(),
                answer.trim()
            )
        })?;
        match v.get("state").and_then(serde_json::Value::as_str) {
            Some("MERGED" | "merged") => Ok(State::Merged),
            Some("OPEN" | "opened" | "locked") => Ok(State::Open),
            Some("CLOSED" | "closed") => Ok(State::Closed),
            other => bail!(
                "{} gave no {} state rebind knows: {}",
                self.client.program(),
                self.client.noun(),
                other.unwrap_or("none")
            ),
        }
    }

    /// The open pull request in the list call's answer: the first one whose
    /// branch is in this repository (one from a fork with a branch of the
    /// same name is not the cutover's, and is never edited). An entry
    /// without a number and a URL is an error, never "none": a second pull
    /// request would be opened.
    pub fn parse_list(&self, answer: &str) -> Result<Option<(u64, String)>> {
        let (number, url) = match self.client {
            Client::Gh => ("number", "url"),
            Client::Glab => ("iid", "web_url"),
        };
        let same_repository = |pr: &serde_json::Value| match self.client {
            Client::Gh => pr.get("isCrossRepository") == Some(&serde_json::Value::Bool(false)),
            Client::Glab => {
                let id = |k: &str| pr.get(k).and_then(serde_json::Value::as_u64);
                id("source_project_id").is_some()
                    && id("source_project_id") == id("target_project_id")
            }
        };
        let v: serde_json::Value = serde_json::from_str(answer.trim()).map_err(|e| {
            anyhow!(
                "{} answered something that is not a JSON list ({e}): {}",
                self.client.program(),
                answer.trim()
            )
        })?;
        let Some(list) = v.as_array() else {
            bail!(
                "{} answered something that is not a JSON list: {}",
                self.client.program(),
                answer.trim()
            );
        };
        let Some(pr) = list.iter().find(|pr| same_repository(pr)) else {
            return Ok(None);
        };
        match (
            pr.get(number).and_then(serde_json::Value::as_u64),
            pr.get(url).and_then(serde_json::Value::as_str),
        ) {
            (Some(n), Some(u)) => Ok(Some((n, u.to_string()))),
            _ => bail!(
                "{} listed an open {} of the branch without a {number} and a {url}: {pr}",
                self.client.program(),
                self.client.noun()
            ),
        }
    }
}

/// The pull request's URL in what `create` printed: the first
/// `http(s)://` word that ends in `/pull/N` or `/merge_requests/N` (a help
/// link printed beside it is not it), and that number.
pub fn parse_created(answer: &str) -> Option<(String, Option<u64>)> {
    answer
        .split_whitespace()
        .filter(|w| w.starts_with("https://") || w.starts_with("http://"))
        .find_map(|url| {
            let mut tail = url.trim_end_matches('/').rsplit('/');
            let number = tail.next()?.parse().ok()?;
            matches!(tail.next(), Some("pull" | "merge_requests"))
                .then(|| (url.to_string(), Some(number)))
        })
}

/// Why the pull request is not opened or updated, and the shell line that
/// does it by hand.
#[derive(Debug)]
pub struct Unfinished {
    pub by_hand: String,
    pub cause: anyhow::Error,
}

/// `body` as the host takes it: whole when it fits in `limit` characters;
/// else cut at the last section boundary (a Markdown heading line) before
/// the limit, with `pointer` (where the full review is) after the cut, so
/// the pull request still opens and says where the rest is.
pub fn fit_body(body: &str, limit: usize, pointer: &str) -> String {
    if body.chars().count() <= limit {
        return body.to_string();
    }
    let note = format!(
        "\n---\n\n**The review is cut here**: it is longer than the {limit} characters a body may hold. {pointer}\n"
    );
    let room = limit.saturating_sub(note.chars().count());
    // The byte offset of the `room`-th character: nothing after it fits.
    let end = body.char_indices().nth(room).map_or(body.len(), |(i, _)| i);
    let cut = body[..end]
        .rfind("\n#")
        .map(|i| i + 1)
        .unwrap_or_else(|| body[..end].rfind('\n').map_or(0, |i| i + 1));
    format!("{}{note}", &body[..cut])
}

/// Finds the open pull request of the branch and replaces its body, or
/// opens one, running the client in `cwd`. `file` holds `body` (the shell
/// lines read it). A missing, logged-out or failing client is an error
/// naming the call, with the line that finishes by hand (the create when
/// the list failed).
pub fn open_or_update(
    target: &Target,
    body: &str,
    file: &Path,
    cwd: &Path,
) -> std::result::Result<Opened, Unfinished> {
    let create = target.create(body, file);
    let unfinished = |call: &Call| {
        let by_hand = call.shell.clone();
        move |cause| Unfinished { by_hand, cause }
    };
    let found = run(&target.list(), cwd)
        .and_then(|listed| target.parse_list(&listed))
        .map_err(unfinished(&create))?;
    let (call, action) = match &found {
        Some((n, _)) => (target.update(*n, body, file), "updated"),
        None => (create, "opened"),
    };
    let answer = run(&call, cwd).map_err(unfinished(&call))?;
    let (url, number) = match found {
        Some((n, url)) => (url, Some(n)),
        None => parse_created(&answer).ok_or_else(|| {
            // It may exist now: a re-run finds it and updates its body.
            unfinished(&target.list())(anyhow!(
                "`{}` printed no {} URL: {}",
                call.shell,
                target.client.noun(),
                answer.trim()
            ))
        })?,
    };
    Ok(Opened {
        url,
        number,
        client: target.client,
        action,
    })
}

/// A pull request's state, as its host reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Open,
    Merged,
    /// Closed without being merged.
    Closed,
}

/// Asks the client for pull request `number`'s state.
pub fn state(target: &Target, number: u64, cwd: &Path) -> Result<State> {
    let answer = run(&target.view(number), cwd)?;
    target.parse_state(&answer)
}

/// Replaces the body of pull request `number` (open or not) with `body`,
/// kept in `file`; the error carries the line that does it by hand.
pub fn update_body(
    target: &Target,
    number: u64,
    body: &str,
    file: &Path,
    cwd: &Path,
) -> std::result::Result<(), Unfinished> {
    let call = target.update(number, body, file);
    run(&call, cwd).map(|_| ()).map_err(|cause| Unfinished {
        by_hand: call.shell.clone(),
        cause,
    })
}

/// Runs `call` in `cwd`; its standard output, or an error naming it. A
/// signal before or while it runs stops it: the error is then the
/// [`crate::sys::signals::Interrupted`] (the run's exit code is 128 + the
/// signal), never "the client failed".
fn run(call: &Call, cwd: &Path) -> Result<String> {
    crate::sys::signals::check()?;
    let mut cmd = std::process::Command::new(call.program);
    cmd.args(&call.args).current_dir(cwd);
    match crate::repo::git::run_process(cmd, call.stdin.as_bytes(), true) {
        Ok((out, _)) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(crate::repo::git::Ran::Interrupted(stop)) => {
            Err(anyhow::Error::new(stop).context(format!("`{}` was stopped", call.shell)))
        }
        Err(crate::repo::git::Ran::Failed(e)) => bail!(
            "`{}` failed: {e} ({} must be installed, on PATH and logged in: `{} auth status`)",
            call.shell,
            call.program,
            call.program
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body over the limit is cut at a heading, ends with the pointer,
    /// and fits; one under it is kept whole.
    #[test]
    fn a_long_body_is_cut_at_a_section_and_points_to_the_rest() {
        let section = |n: usize| format!("## Section {n}\n\n{}\n\n", "x".repeat(1000));
        let body: String = (0..100).map(section).collect();
        assert_eq!(fit_body(&body, 200_000, "see it"), body);
        let cut = fit_body(
            &body,
            65_536 / 10,
            "The full review: `review.md` on the branch.",
        );
        assert!(cut.chars().count() <= 6553, "{}", cut.len());
        assert!(cut.starts_with("## Section 0\n"));
        let kept = cut.split("\n---\n").next().unwrap();
        assert!(kept.ends_with("x\n\n"), "cut inside a section: {kept:?}");
        assert!(cut.ends_with("The full review: `review.md` on the branch.\n"));
        // Multi-byte text is cut on a character boundary.
        let wide: String = (0..50)
            .map(|n| format!("## 절 {n}\n{}\n", "가".repeat(500)))
            .collect();
        let cut = fit_body(&wide, 3000, "p");
        assert!(cut.chars().count() <= 3000);
    }

    /// The committed review's address on each host, its branch and path
    /// percent-encoded where a URL needs it.
    #[test]
    fn blob_urls_on_github_and_gitlab() {
        let target = |client, url: &str| Target {
            client,
            remote: Remote::parse(url).unwrap(),
            head: "rebind/new#1".into(),
            base: None,
            title: String::new(),
            draft: false,
            labels: vec![],
            reviewers: vec![],
        };
        let path = review_path("rebind/new#1");
        assert_eq!(path, ".rebind/reviews/rebind/new#1.md");
        assert_eq!(
            target(Client::Gh, "git@github.com:acme/gitops.git").blob_url(&path),
            "https://github.com/acme/gitops/blob/rebind/new%231/.rebind/reviews/rebind/new%231.md"
        );
        assert_eq!(
            target(Client::Glab, "https://gitlab.example:8443/g/s/gitops.git").blob_url(&path),
            "https://gitlab.example:8443/g/s/gitops/-/blob/rebind/new%231/.rebind/reviews/rebind/new%231.md"
        );
    }

    fn remote(url: &str) -> Option<(String, String)> {
        Remote::parse(url).map(|r| (r.host, r.path))
    }

    #[test]
    fn remote_urls_in_every_spelling() {
        let want = Some(("github.com".to_string(), "acme/gitops".to_string()));
        for url in [
            "https://github.com/acme/gitops.git",
            "https://github.com/acme/gitops",
            "https://user@GitHub.com:443/acme/gitops/",
            "git@github.com:acme/gitops.git",
            "github.com:acme/gitops",
            "ssh://git@github.com/acme/gitops.git",
            "ssh://git@github.com:22/acme/gitops",
        ] {
            assert_eq!(remote(url), want, "{url}");
        }
        assert_eq!(
            remote("ssh://git@gitlab.corp.example:2222/infra/platform/gitops.git"),
            Some((
                "gitlab.corp.example".to_string(),
                "infra/platform/gitops".to_string()
            ))
        );
        assert_eq!(
            remote("https://GitHub.com/Acme/GitOps.GIT"),
            Some(("github.com".to_string(), "Acme/GitOps".to_string()))
        );
        for local in ["/srv/git/gitops.git", "../gitops", "file:///srv/gitops.git"] {
            assert_eq!(remote(local), None, "{local}");
        }
        // No repository a client could address.
        for odd in [
            "https://github.com/acme",
            "https://github.com/acme/gitops?x=1",
            "https://github.com/acme/gitops#frag",
            "https://github.com//acme//gitops",
            "https://github.com/acme/git ops",
            "https://github.com/acme/../gitops",
        ] {
            assert_eq!(remote(odd), None, "{odd}");
        }
        // An https port other than 443 is the web server's: kept.
        assert_eq!(
            remote("https://gitlab.example.com:8443/a/b/c.git"),
            Some(("gitlab.example.com:8443".to_string(), "a/b/c".to_string()))
        );
    }

    #[test]
    fn client_by_host() {
        assert_eq!(Client::for_host("github.com"), Some(Client::Gh));
        assert_eq!(Client::for_host("github.acme.corp"), Some(Client::Gh));
        assert_eq!(Client::for_host("GitLab.com"), Some(Client::Glab));
        assert_eq!(
            Client::for_host("code-gitlab.acme.corp"),
            Some(Client::Glab)
        );
        assert_eq!(Client::for_host("git.acme.corp"), None);
        assert_eq!(Client::for_host("github-to-gitlab.acme.corp"), None);
    }

    #[test]
    fn the_first_url_naming_a_known_host_chooses() {
        let urls = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let gh = |path: &str| Remote {
            host: "github.com".into(),
            path: path.into(),
        };
        // A rewrite to a local path or an unknown host: the configured URL.
        let u = urls(&[
            "/srv/mirror.git",
            "https://git.corp/x/y",
            "git@github.com:a/b",
        ]);
        assert_eq!(choose(&u, None), Some((Client::Gh, gh("a/b"))));
        // Named, the first URL with a host and a repository.
        assert_eq!(
            choose(&u, Some(Client::Glab)),
            Some((
                Client::Glab,
                Remote {
                    host: "git.corp".into(),
                    path: "x/y".into()
                }
            ))
        );
        assert_eq!(choose(&urls(&["/srv/a.git"]), Some(Client::Gh)), None);
        assert_eq!(choose(&urls(&["https://git.corp/x/y"]), None), None);
    }

    fn target(client: Client) -> Target {
        Target {
            client,
            remote: Remote::parse("git@example.com:acme/gitops.git").unwrap(),
            head: "rebind/new".into(),
            base: Some("main".into()),
            title: "rebind: old -> new".into(),
            draft: true,
            labels: vec!["cutover".into(), "two words".into()],
            reviewers: vec!["alice".into()],
        }
    }

    #[test]
    fn create_argv_and_shell_line() {
        let f = Path::new("/tmp/body file.md");
        let gh = target(Client::Gh).create("BODY\n", f);
        assert_eq!(gh.program, "gh");
        // The argv, each argument ended by `|`.
        let argv = |c: &Call| c.args.iter().map(|a| format!("{a}|")).collect::<String>();
        assert_eq!(
            argv(&gh),
            "pr|create|--repo|example.com/acme/gitops|--head|rebind/new|--base|main|--title|rebind: old -> new|--body-file|-|--draft|--label|cutover|--label|two words|--reviewer|alice|"
        );
        assert_eq!(gh.stdin, "BODY\n");
        assert_eq!(
            gh.shell,
            "gh pr create --repo example.com/acme/gitops --head rebind/new --base main --title 'rebind: old -> new' --body-file '/tmp/body file.md' --draft --label cutover --label 'two words' --reviewer alice"
        );
        let glab = target(Client::Glab).create("BODY\n", f);
        assert_eq!(
            argv(&glab),
            "mr|create|--repo|https://example.com/acme/gitops|--source-branch|rebind/new|--target-branch|main|--title|rebind: old -> new|--description|BODY\n|--draft|--label|cutover|--label|two words|--reviewer|alice|--yes|"
        );
        assert_eq!(glab.stdin, "");
        assert!(glab
            .shell
            .contains(" --description \"$(cat '/tmp/body file.md')\" --draft"));
    }

    #[test]
    fn answers() {
        let gh = target(Client::Gh);
        assert_eq!(gh.parse_list("[]\n").unwrap(), None);
        assert_eq!(
            gh.parse_list(
                r#"[{"number":42,"url":"https://h/a/b/pull/42","isCrossRepository":false}]"#
            )
            .unwrap(),
            Some((42, "https://h/a/b/pull/42".to_string()))
        );
        // A fork's branch of the same name is not the cutover's.
        assert_eq!(
            gh.parse_list(r#"[{"number":9,"url":"https://h/a/b/pull/9","isCrossRepository":true},{"number":42,"url":"https://h/a/b/pull/42","isCrossRepository":false}]"#)
                .unwrap(),
            Some((42, "https://h/a/b/pull/42".to_string()))
        );
        assert_eq!(
            gh.parse_list(
                r#"[{"number":9,"url":"https://h/a/b/pull/9","isCrossRepository":true}]"#
            )
            .unwrap(),
            None
        );
        // An entry of this repository without a number: an error, not none.
        assert!(gh
            .parse_list(
                r#"[{"number":"x","url":"https://h/a/b/pull/9","isCrossRepository":false}]"#
            )
            .is_err());
        let glab = target(Client::Glab);
        assert_eq!(
            glab.parse_list(r#"[{"iid":7,"web_url":"https://h/a/-/merge_requests/7","id":99,"source_project_id":5,"target_project_id":5}]"#)
                .unwrap(),
            Some((7, "https://h/a/-/merge_requests/7".to_string()))
        );
        assert_eq!(
            glab.parse_list(r#"[{"iid":7,"web_url":"https://h/a/-/merge_requests/7","source_project_id":6,"target_project_id":5}]"#)
                .unwrap(),
            None
        );
        assert!(gh.parse_list("not logged in").is_err());
        assert!(gh.parse_list("{}").is_err());
        assert_eq!(
            parse_created("Creating merge request\n!7 title\n https://h/a/-/merge_requests/7\n"),
            Some(("https://h/a/-/merge_requests/7".to_string(), Some(7)))
        );
        // A help link printed after the URL is not it.
        assert_eq!(
            parse_created("https://github.com/o/r/pull/7\nsee https://docs.github.com/help\n"),
            Some(("https://github.com/o/r/pull/7".to_string(), Some(7)))
        );
        assert_eq!(
            gh.parse_state(r#"{"state":"MERGED"}"#).unwrap(),
            State::Merged
        );
        assert_eq!(
            glab.parse_state(r#"{"iid":7,"state":"opened"}"#).unwrap(),
            State::Open
        );
        assert_eq!(
            gh.parse_state(r#"{"state":"CLOSED"}"#).unwrap(),
            State::Closed
        );
        assert!(gh.parse_state(r#"{"state":"DRAFTY"}"#).is_err());
        assert!(gh.parse_state("not logged in").is_err());
        let argv = gh.view(7).args.join(" ");
        assert_eq!(
            argv,
            "pr view 7 --repo example.com/acme/gitops --json state"
        );
        let argv = glab.view(7).args.join(" ");
        assert_eq!(
            argv,
            "mr view 7 --repo https://example.com/acme/gitops --output json"
        );
        assert_eq!(parse_created("done\n"), None);
        assert_eq!(parse_created("see https://docs.github.com/help\n"), None);
    }
}
