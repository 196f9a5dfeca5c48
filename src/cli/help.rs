//! The text at the end of each command's `--help`: real examples, then the
//! exit codes that command can return. A test (`tests/cli_help.rs`) checks
//! every command has both. `OLD` and `NEW` stand for https:// API server URLs.

pub const REBIND: &str = "\
Examples:
  rebind scan                                  # which endpoints, where
  rebind diff --from \"$OLD\" --to \"$NEW\"        # what a rebind would change
  rebind apply --from \"$OLD\" --to \"$NEW\"       # do it, on a new git branch

Exit codes:
  0  success, or nothing to change
  1  findings (check), changes pending (diff), or declined at the prompt (apply)
  2  usage or input error; nothing written
  3  files written (committed), then a later step (push, --pr, --review-out, --secret-out) failed";

pub const SCAN: &str = "\
Examples:
  rebind scan                                  # every endpoint under ., with summaries
  rebind scan apps/ --from \"$OLD\"              # only the old endpoint (and its bare host)
  rebind scan --format json | jq '.endpoints[] | {endpoint, file_count}'
  rebind scan --from \"$OLD\" --format sarif > endpoints.sarif   # for code scanning

Exit codes:
  0  listed (also when nothing was found)
  2  usage or input error (a file that cannot be read or parsed is named)";

pub const DIFF: &str = "\
Examples:
  rebind diff --from \"$OLD\" --to \"$NEW\"        # the unified diff apply would write
  rebind diff --cluster prod --to \"$NEW\"       # --from taken from .rebind.yaml
  rebind diff --from \"$OLD\" --to \"$NEW\" --format json > audit.json || rc=$?
                                               # the audit: rebind apply --expect-from-audit audit.json
  rebind diff --from \"$OLD\" --to \"$NEW\" --format github   # CI: annotate the lines it would change

Exit codes:
  0  nothing to change (or already rebound)
  1  changes pending
  2  usage or input error; nothing written";

pub const APPLY: &str = "\
Examples:
  rebind apply --from \"$OLD\" --to \"$NEW\"       # review, confirm, commit on rebind/<new host>
  rebind apply --from \"$OLD\" --to \"$NEW\" --expect-from-audit audit.json --yes --push origin
  rebind apply --from \"$OLD\" --to \"$NEW\" --yes --push origin --pr --pr-label cutover
                                               # and open the pull request (gh or glab)
  rebind apply --cluster prod --to \"$NEW\" --no-commit --yes
  (examples/cutover.sh is the whole cutover: audit, guarded apply, push, pull request, next steps)

Exit codes:
  0  rewritten (or nothing to change, or the branch already holds this change)
  1  declined at the prompt; nothing written
  2  usage or input error, or a guard refused; nothing written
  3  files written (committed), then a later step (push, --pr, --review-out, --secret-out) failed; the message says how to finish";

pub const SECRET: &str = "\
Examples:
  rebind secret --name prod --server \"$NEW\" --out /tmp/prod-cluster.yaml
  rebind secret --name prod --server \"$NEW\" --token-env ARGOCD_TOKEN | kubectl apply -f -
  rebind secret --name prod --server \"$NEW\" --external-secret --store vault --key clusters/prod

Exit codes:
  0  printed or written
  2  usage or input error; nothing written";

pub const INIT: &str = "\
Examples:
  rebind init                                  # .rebind.yaml for the repository here
  rebind init ../platform-gitops --format json

Exit codes:
  0  .rebind.yaml written
  2  usage or input error; nothing written";

pub const CHECK: &str = "\
Examples:
  rebind check                                 # the whole repository, as CI runs it
  rebind check apps/argocd.yaml apps/keda.yaml # the files pre-commit passes
  rebind check --format github                 # annotations on a GitHub pull request

Exit codes:
  0  clean (warnings allowed)
  1  findings: a retired or undeclared endpoint
  2  usage or input error (no .rebind.yaml, a bad config)";

pub const FEEDERS: &str = "\
Examples:
  rebind feeders                               # every Application manifest: who syncs it, from where
  rebind feeders --base main --format json     # the model as JSON, against the branch you merge into

Exit codes:
  0  printed
  2  usage or input error";

pub const IDENTITY: &str = "\
Examples:
  rebind identity                                             # every EKS OIDC issuer reference
  rebind identity --describe-from old.json --describe-to new.json
                                  # coverage: which trust statements the new cluster lacks

Exit codes:
  0  nothing trusts only the old issuer (or no issuers given)
  1  a trust statement trusts only the old issuer: add the new one before the cutover
  2  usage or input error";

pub const WORKSPACE: &str = "\
Examples:
  rebind workspace plan                        # preflight all, every diff and the order (rebind-workspace.yaml)
  rebind workspace apply --yes                 # each repository in order; stops where one waits for a merge
  rebind workspace status                      # the table, from the ledger
  rebind workspace rollback --yes cutover.yaml # to -> from, in the reverse order

Exit codes:
  0  every repository done (plan: nothing to change)
  1  waiting on a merge, or changes pending (plan, --dry-run), or declined at the prompt
  2  usage or input error, or the preflight failed in a repository; nothing written
  3  written in a repository, then a later step failed; the message and the ledger say what is left";

pub const COMPLETIONS: &str = "\
Examples:
  rebind completions bash > ~/.local/share/bash-completion/completions/rebind
  rebind completions zsh > \"${fpath[1]}/_rebind\"
  rebind completions fish > ~/.config/fish/completions/rebind.fish

Exit codes:
  0  printed
  2  usage error";

pub const MAN: &str = "\
Examples:
  rebind man > rebind.1 && man -l rebind.1
  rebind man apply | man -l -                  # one command's page
  for c in scan diff apply secret init check; do rebind man $c > rebind-$c.1; done

Exit codes:
  0  printed
  2  usage error (an unknown command)";
