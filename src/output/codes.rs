//! The one table of the stable codes every error and warning carries in
//! the JSON reports (`code`): a script reads the code, never the wording.
//! docs/errors.md lists each with what it means and what to do
//! (`tests/it/error_codes.rs` holds the two together, and holds every code
//! the sources use to this table).

use serde::{Deserialize, Serialize};

/// One code: its id, what it means, what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub id: &'static str,
    pub meaning: &'static str,
    pub action: &'static str,
}

macro_rules! codes {
    ($($name:ident = $id:literal, $meaning:literal, $action:literal;)*) => {
        $(pub const $name: Code = Code { id: $id, meaning: $meaning, action: $action };)*
        /// Every code, in the order docs/errors.md lists them.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

codes! {
    USAGE = "usage",
        "The command line or an input file is wrong (a flag, a URL, a config); nothing was written.",
        "Fix what the message names and run again.";
    ENDPOINT_NOT_FOUND = "endpoint-not-found",
        "No value in the tree holds --from (and --to is not there either); nothing was written.",
        "Check --from against the workload endpoints the message lists (or `rebind scan`).";
    ONLY_MENTIONED = "only-mentioned",
        "--from is only in comments, text files, template actions or URLs of other schemes; nothing was written. The report lists them in `mentions`.",
        "Fix those places by hand if they matter, or pass the --from a value holds.";
    UNREAD_FILE = "unread-file",
        "A file that may hold the endpoint could not be read; nothing was written.",
        "Make it readable (UTF-8 for YAML) or leave it out with --exclude.";
    UNCOMMITTED = "uncommitted-endpoint",
        "A tracked file's committed content (HEAD, or the index when staged) holds the endpoint, but its work-tree copy, deleted or edited without a commit, does not: a commit of the branch still deploys it. `diff`/`apply` refuse (nothing written); `check` names it as an error.",
        "Commit the change (or `git restore` the file) and run again.";
    EXPECTED_COUNTS = "expected-counts",
        "The rebind found other numbers of files or occurrences than expected (--expect-*, an audit, the config's `expect`); nothing was written.",
        "Audit again (`rebind diff --format json`) and review what changed.";
    CANNOT_REWRITE = "cannot-rewrite",
        "A file holds the endpoint but cannot be rewritten safely (the rewrite would not verify); nothing was written.",
        "Read the message at its path:line:column; fix that place by hand, or leave the file out.";
    INVALID_YAML = "invalid-yaml",
        "A file holding the endpoint is not valid YAML; nothing was written.",
        "Fix the file at path:line:column, or leave it out with --exclude.";
    ESCAPED_IN_DOCUMENT = "escaped-in-document",
        "The endpoint is written with escapes (\\u0068ttps:, \\u002e) inside a document held in a string, which rebind cannot rewrite in place; rewriting the rest would be a half cutover; nothing was written.",
        "Write that string without escapes (an escaped slash \\/ is fine) or change it by hand, then run again.";
    NOT_IN_PLACE = "escapes-not-rewritable",
        "The endpoint is written with escapes (or base64) that cannot be rewritten in place exactly; nothing was written.",
        "Rewrite or re-encode that value by hand (the message says how), then run again.";
    DOT_AFTER_ENDPOINT = "dot-after-endpoint",
        "A dot follows the old endpoint where, after --to, it would follow an IP address or a port; nothing was written.",
        "Remove the dot by hand, then run again.";
    KEY_COLLISION = "key-collision",
        "The rewrite would make two keys of one mapping equal; nothing was written.",
        "Merge or rename the two keys the message names, then run again.";
    NAME_COLLISION = "registration-name-taken",
        "The cluster Secret to emit, or the new cluster's registration a rebind adds beside the old one's, has the name (Secret or ArgoCD name) of another server's registration in the repository; applying it would replace or shadow that one; nothing was written.",
        "Pick another cluster name (or Secret name).";
    AFTER_WRITE = "after-write",
        "Something was written (files, a commit) before a later step failed (exit 3). The report's `branch`, `commit`, `pushed`, `pull_request` and `retry` say what exists.",
        "Run `retry`.";
    PUSH_FAILED = "push-failed",
        "The cutover is committed on `branch` but the push failed (exit 3).",
        "Run `retry` (the same command: it pushes the commit and opens the pull request), or push by hand.";
    PULL_REQUEST_FAILED = "pull-request-failed",
        "The branch is pushed but its pull request is not opened (exit 3).",
        "Run `retry`, or open it by hand with the command the message prints.";
    OUTPUT_FAILED = "output-failed",
        "The files are rewritten (and committed) but an output file (--review-out, --secret-out) could not be written (exit 3).",
        "Fix the output's path and run `retry`.";
    RETIRED = "retired-endpoint",
        "`check`: a retired endpoint of a cluster declared in .rebind.yaml is committed (an error).",
        "Rebind it: rebind apply --from RETIRED --to CURRENT (the finding's message gives the command).";
    ROLLBACK_REGISTRATION = "rollback-registration",
        "`check`: the `server` of a whole cluster registration (a labelled Secret, or an ExternalSecret whose template is one) is a retired endpoint: the old cluster's registration a cutover keeps as the rollback target. A warning until the cluster's `torn_down` in .rebind.yaml lists the endpoint, then an error.",
        "Keep it while a rollback may be needed; at teardown list the endpoint under the cluster's `torn_down` in .rebind.yaml and delete the registration.";
    RETIRED_ISSUER = "retired-oidc-issuer",
        "`check`: a retired OIDC issuer of a cluster declared in .rebind.yaml is still trusted or named (an error).",
        "Remove it from the trust policies: rebind identity --trust remove-retired --oidc-retired ISSUER.";
    UNKNOWN = "unknown-endpoint",
        "`check`: a workload endpoint at a cluster position is declared by no cluster in .rebind.yaml (a warning).",
        "Declare it (rebind init, or add it to .rebind.yaml) or rebind it.";
    PENDING = "pending-change",
        "`diff` in SARIF or GitHub format: a value holds the old endpoint; the rebind rewrites it.",
        "Review, then rebind apply.";
    MENTION = "mention",
        "`diff` in SARIF or GitHub format: a comment, text file or template action names the old endpoint; never rewritten (a warning).",
        "Change it by hand if it matters.";
    UNPARSED = "unparsed-file",
        "`scan`: a YAML file holds an endpoint but does not parse; its endpoints are listed as text.",
        "Fix the file at path:line:column.";
    SKIPPED = "skipped",
        "A file was not read (binary, an archive, unreadable, excluded by its kind): a warning.",
        "Look at the reason; a skipped file that may hold the endpoint refuses a rebind (unread-file).";
    REVIEW_NOTE = "review-note",
        "`diff`/`apply`: a fixed reminder of the review (`notes[]`; the teardown of the old cluster, `destination.name`, karpenter's endpoint discovery): a warning.",
        "Read it once per cutover; nothing in the run depends on it.";
    CLUSTER_SECRET_NEEDED = "cluster-secret-needed",
        "`diff`/`apply`: the repository declares no registration for the new server URL; ArgoCD cannot sync these Applications until one is issued (a warning in `notes[]`).",
        "Issue it: `rebind secret`, or `apply --cluster-name NAME --secret-out FILE`.";
    REGISTRATION_CREDENTIALS = "registration-credentials",
        "`diff`/`apply`: the repository's own cluster registration is rebound, but its token and CA still read the old cluster's (a warning in `notes[]`).",
        "Put the new cluster's token and CA where the registration reads them before the merge syncs.";
    AFTER_MERGE_NOTE = "after-merge-note",
        "`diff`/`apply`/`feeders`: a note on the after-merge model (an assumption, a wave without health, a path nothing proven feeds): a warning in `after_merge_notes[]` / `notes[]`.",
        "Read it with the sync order; declare who applies a hand-applied path (`feeders:` in .rebind.yaml or `--applied-by PATH=WHO`).";
    LIVE_DIFFERENCE = "live-difference",
        "`diff`/`apply`/`feeders` with `--live`: the live state differs from git for an Application (a warning in `after_merge_notes[]` / `live_differences[]`).",
        "Find out why the live object differs before trusting the sync order.";
    IDENTITY_NOTE = "identity-note",
        "`identity`: a note of the inventory (what was not read or not followed, how to read the answer): a warning in `notes[]`.",
        "Read it; a trust it names as not read is not counted as proven.";
    EXISTING_REGISTRATION = "existing-registration",
        "`secret`: the repository already holds a registration for this server or this name (a warning in `existing[]`).",
        "Check that the Secret you emit does not duplicate or replace it.";
    NOT_FOLLOWED = "not-followed",
        "A chart template action at a cluster position that rebind cannot follow to a values file: a warning.",
        "Check the rendered value by hand (`helm template`).";
}

/// One warning of a list of plain strings, with its stable `code`
/// (`output::codes`): `field` names the list that holds `message`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarningJson {
    pub code: String,
    pub field: String,
    pub message: String,
}

/// Each string of `field`, with `code`.
pub fn coded(code: Code, field: &str, messages: &[String]) -> impl Iterator<Item = WarningJson> {
    let field = field.to_string();
    messages
        .iter()
        .map(move |m| WarningJson {
            code: code.id.to_string(),
            field: field.clone(),
            message: m.clone(),
        })
        .collect::<Vec<_>>()
        .into_iter()
}
