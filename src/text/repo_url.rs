//! Repository URLs as identities: the parts of a remote URL, and the one
//! spelling two URLs of the same repository share.
//!
//! argo-cd compares repository URLs with `util/git.SameURL`, which compares
//! `NormalizeGitURL` of each: the URL lower-cased and trimmed, an
//! scp-like `git@host:org/repo` read as `ssh://git@host/org/repo`, a `.git`
//! suffix removed. [`repo_identity`] does that and also drops what names the
//! transport rather than the repository (scheme, user, port, a trailing
//! `/`), so a clone over SSH and a source over HTTPS are the same
//! repository.

/// A repository URL as identity: lower-case `host/path`, without scheme,
/// user, port, a trailing `/` or `.git`. `git@host:org/repo`,
/// `ssh://git@host:22/org/repo.git` and `https://host/org/repo` are the same
/// repository (the transport differs, the repository does not). `None` for
/// what names no repository on a host (a local path, an empty string).
pub fn repo_identity(url: &str) -> Option<String> {
    let RemoteParts { host, path, .. } = remote_parts(url)?;
    Some(format!("{host}/{path}").to_ascii_lowercase())
}

/// A remote URL taken apart, as written.
pub struct RemoteParts {
    /// The host, without user and port.
    pub host: String,
    /// The port of an `https://` URL that names one (the web server's).
    pub https_port: Option<u16>,
    /// The repository path, without a `/` at either end or a `.git` suffix.
    pub path: String,
}

/// The parts of a remote URL in the spellings [`repo_identity`] takes.
pub fn remote_parts(url: &str) -> Option<RemoteParts> {
    let url = url.trim();
    let (rest, scp, https) = match url.split_once("://") {
        Some((scheme, rest)) => (
            rest.to_string(),
            false,
            scheme.eq_ignore_ascii_case("https"),
        ),
        None => (url.to_string(), true, false),
    };
    // `user@host:org/repo` (scp-like) has no scheme and a `:` before any `/`.
    let (authority, path) = if scp {
        let colon = rest.find(':')?;
        if rest[..colon].contains('/') {
            return None;
        }
        (rest[..colon].to_string(), rest[colon + 1..].to_string())
    } else {
        match rest.split_once('/') {
            Some((a, p)) => (a.to_string(), p.to_string()),
            None => return None,
        }
    };
    let host = authority.rsplit('@').next().unwrap_or("");
    let (host, port) = match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.ends_with(']') => {
            (h, port.parse().ok())
        }
        _ => (host, None),
    };
    let path = path.trim_matches('/');
    let path = match path.len().checked_sub(4) {
        Some(at) if path.is_char_boundary(at) && path[at..].eq_ignore_ascii_case(".git") => {
            &path[..at]
        }
        _ => path,
    }
    .trim_end_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(RemoteParts {
        host: host.to_string(),
        https_port: port.filter(|_| https),
        path: path.to_string(),
    })
}
