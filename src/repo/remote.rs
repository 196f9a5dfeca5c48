//! Repository URLs as identities: the parts of a remote URL, and the
//! facts of a repository (remotes, base and default branch, branches, tags).

use std::collections::BTreeSet;

/// What the repository says about its branches: the base branch a cutover
/// merges into, the remote's default branch (what `HEAD` means to ArgoCD),
/// and the branch and tag names a `targetRevision` may be.
#[derive(Debug, Clone, Default)]
pub struct RepoFacts {
    /// Identities ([`repo_identity`]) of this repository: the git remote
    /// the base branch belongs to (`origin/HEAD` → `origin`), or every git
    /// remote when the base branch belongs to none.
    pub identities: BTreeSet<String>,
    /// The other git remotes' identities, each with the remote's name: a
    /// fork's `upstream` is another repository.
    pub other_remotes: std::collections::BTreeMap<String, String>,
    /// The remote the base branch belongs to, when one does.
    pub base_remote: Option<String>,
    /// The branch a merge lands on, and where that came from.
    pub base: Option<(String, &'static str)>,
    /// Why `--base` names no branch of the clone (nothing resolves, or a
    /// tag or commit): nothing is then proven to deploy on merge.
    pub base_refused: Option<String>,
    /// The remote's default branch (`refs/remotes/<remote>/HEAD`).
    pub default_branch: Option<String>,
    /// Branch names (remote-tracking without the remote, and local).
    pub branches: BTreeSet<String>,
    pub tags: BTreeSet<String>,
}
