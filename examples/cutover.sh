#!/usr/bin/env bash
# Cut an ArgoCD GitOps repository over from one Kubernetes API endpoint to
# another: audit, apply exactly what was audited on a new branch, push it,
# open its pull request (when gh or glab is here), and print what is left to
# do on the hub.
#
#   examples/cutover.sh OLD_URL NEW_URL CLUSTER_NAME REMOTE [REPO]
#
#   OLD_URL       the API server the manifests point at today
#   NEW_URL       the API server they should point at
#   CLUSTER_NAME  ArgoCD's name for the NEW cluster (its cluster Secret's
#                 `name`); refused when the repository already registers
#                 another server under that name
#   REMOTE        the git remote the branch is pushed to (e.g. origin)
#   REPO          the repository (default: .)
#
# Environment:
#   CONFIG_CLUSTER         the cluster's key in .rebind.yaml, when the
#                          repository has one (default: the cluster declared
#                          at OLD_URL); the config is updated in the same
#                          commit, so `rebind check` stays clean
#   EKS_CLUSTER            the new cluster's EKS name, for the printed
#                          `aws eks describe-cluster` (default: CLUSTER_NAME)
#   LIVE                   a live dump of the hub, `kubectl get
#                          applications.argoproj.io,secrets -n argocd -o json`:
#                          passed to rebind (--live); its Applications win over
#                          git's in the after-merge review, and a Secret named
#                          like one of its cluster Secrets for another server
#                          is refused
#   APPLIED_BY             paths of the repository applied outside ArgoCD
#                          (by hand, by Terraform, by a pipeline), as
#                          `path=who[,path=who...]` (paths relative to the
#                          repository root): passed to rebind
#                          (--applied-by PATH=WHO); the after-merge review says
#                          who applies each instead of refusing it, with no
#                          edit to .rebind.yaml
#   BRANCH                 branch to create (default: rebind/<first label of NEW's host>)
#   ARGOCD_CLUSTER_TOKEN   when set, the cluster Secret is written with this
#                          bearer token instead of the ${ARGOCD_CLUSTER_TOKEN}
#                          placeholder (it never enters the repository)
#   REBIND                 the rebind binary (default: rebind on PATH)
#   PR                     0: do not open the pull request. Otherwise, when
#                          REMOTE is on GitHub (gh) or GitLab (glab), as its
#                          host's name says, and that client is on PATH, the
#                          branch's pull request is opened with the review as
#                          its body (rebind apply --pr; the client runs with
#                          your login), or its body updated on a re-run
#   DESCRIBE_FROM, DESCRIBE_TO
#                          `aws eks describe-cluster --output json` of the old
#                          and the new cluster: the cutover is refused while an
#                          IAM role in the repository trusts only the old
#                          cluster's OIDC issuer (its pods on the new cluster
#                          would be denied AWS credentials); add the new issuer
#                          first (`rebind identity ... --trust add --yes`)
#
# The cutover is refused (exit 2, nothing written) when merging it would not
# deploy a rewritten file: its parent Application is pinned, tracks another
# branch, does not include it, or is not in the repository (rebind
# --require-deploys; declare a root kept elsewhere under feeders: in
# .rebind.yaml, and a path applied outside ArgoCD with APPLIED_BY). The sync order printed at the end comes from rebind's
# after-merge model.
#
# The audit, the review and the Secret are written to a new directory under
# ${TMPDIR:-/tmp}, never into the repository; the script prints where.
#
# Rollback is the same script with the endpoints swapped, run on the pushed
# branch (or on main after the merge):
#   examples/cutover.sh NEW_URL OLD_URL OLD_CLUSTER_NAME REMOTE [REPO]
#
# Exit codes: 0 done (or nothing to do: already rebound); 2 the audit or the
# apply refused, nothing written; 3 committed but the push or the pull
# request failed: run the same command again to finish (from the new branch
# or the original one).
# The branch and the commit named are the ones rebind reports, never the
# branch checked out. The output directory is kept when the apply wrote
# something (exit 0 after an apply, or 3) and removed on every other exit.
set -euo pipefail
# Everything this script creates (audit, review, Secret) is private to you.
umask 077

usage() {
    sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
say() { printf '%s\n' "$*"; }
die() {
    printf 'cutover: %s\n' "$*" >&2
    exit 2
}

[[ $# -ge 4 && $# -le 5 ]] || usage
old=$1 new=$2 cluster=$3 remote=$4 repo=${5:-.}
eks=${EKS_CLUSTER:-$cluster}
rebind=${REBIND:-rebind}
command -v "$rebind" >/dev/null || die "$rebind not found on PATH (cargo install --locked --path . in a rebind clone)"

cd "$repo"
root=$(git rev-parse --show-toplevel) || die "$repo is not in a git repository"
git remote get-url "$remote" >/dev/null 2>&1 || die "no git remote named $remote in $root"

out=$(mktemp -d "${TMPDIR:-/tmp}/rebind-cutover.XXXXXX")
# Removed on every exit unless the apply wrote what it holds (keep=true).
keep=false
cleanup() {
    if ! $keep; then
        rm -rf -- "$out"
    fi
}
trap cleanup EXIT
case "$out/" in
"$root"/*) die "$out is inside the repository; set TMPDIR to a directory outside it" ;;
esac
audit=$out/audit.json
review=$out/review.md
secret=$out/cluster-secret.yaml
report=$out/apply.json

# The sync order of rebind's after-merge model in $report: one line per
# step, `resource<TAB>wave<TAB>automated` (wave `null` for a parent).
sync_steps() {
    awk '
        /^  "sync_order": \[/ { on = 1; next }
        on && /^  \]/ { exit }
        on && /"resource":/ { r = $0; sub(/.*"resource": "/, "", r); sub(/",?$/, "", r) }
        on && /"wave":/ { w = $0; sub(/.*"wave": /, "", w); sub(/,$/, "", w) }
        on && /"automated":/ { a = $0; sub(/.*"automated": /, "", a); sub(/,$/, "", a); print r "\t" w "\t" a }
    ' "$report"
}

# A top-level string field of rebind's JSON report ($report), or nothing.
field() {
    sed -n "s/^  \"$1\": \"\(.*\)\",\{0,1\}\$/\1/p" "$report" | head -n 1
}

# The URL of the pull request rebind opened or updated ($report), or nothing.
pr_url() {
    sed -n '/^  "pull_request": {/,/^  }/s/^    "url": "\(.*\)",\{0,1\}$/\1/p' "$report" | head -n 1
}

# --pr when REMOTE is on GitHub or GitLab and that host's client is on
# PATH, unless PR=0. As rebind chooses: the first of the push URL and the
# URL with insteadOf applied, then both as configured, whose host's name
# says github or gitlab.
pr_args=()
if [[ ${PR:-} != 0 ]]; then
    client=""
    while IFS= read -r url; do
        host=${url#*://}
        host=${host#*@}
        host=$(printf '%s' "${host%%[:/]*}" | tr '[:upper:]' '[:lower:]')
        case $host in
        *github*gitlab* | *gitlab*github*) ;;
        *github*) client=gh ;;
        *gitlab*) client=glab ;;
        esac
        [[ -z $client ]] || break
    done < <(
        # (errexit holds in here too: a URL not set must not end the list)
        git remote get-url --push "$remote" 2>/dev/null || true
        git remote get-url "$remote" 2>/dev/null || true
        git config --get "remote.$remote.pushurl" || true
        git config --get "remote.$remote.url" || true
    )
    if [[ -n $client ]] && command -v "$client" >/dev/null; then
        pr_args=(--pr)
    fi
fi

# What the audit and the apply read besides the tree: the clusters'
# describe files (the review then has the identity section) and the live
# Applications.
review_args=()
if [[ -n ${LIVE:-} ]]; then
    [[ -f $LIVE ]] || die "LIVE=$LIVE: no such file"
    review_args+=(--live "$LIVE")
fi
if [[ -n ${APPLIED_BY:-} ]]; then
    IFS=, read -r -a applied <<<"$APPLIED_BY"
    for pair in "${applied[@]}"; do
        [[ $pair == ?*=?* ]] || die "APPLIED_BY: $pair: expected path=who"
        review_args+=(--applied-by "$pair")
    done
fi

# 0. The new cluster's identity: no role may trust only the old issuer.
if [[ -n ${DESCRIBE_FROM:-} || -n ${DESCRIBE_TO:-} ]]; then
    [[ -n ${DESCRIBE_FROM:-} && -n ${DESCRIBE_TO:-} ]] || die "set both DESCRIBE_FROM and DESCRIBE_TO"
    review_args+=(--describe-from "$DESCRIBE_FROM" --describe-to "$DESCRIBE_TO")
    rc=0
    "$rebind" identity --describe-from "$DESCRIBE_FROM" --describe-to "$DESCRIBE_TO" >"$out/identity.txt" || rc=$?
    case $rc in
    0) say "Identity: every role that trusts the old issuer trusts the new one too" ;;
    1)
        cat "$out/identity.txt" >&2
        die "IAM roles trust only the old cluster's OIDC issuer: first run  $rebind identity --describe-from $DESCRIBE_FROM --describe-to $DESCRIBE_TO --trust add --yes  merge it and let the IAM change apply, then run this again; nothing written"
        ;;
    *) die "the identity check failed (rebind identity exit $rc); nothing written" ;;
    esac
fi

# 1. Audit: exactly what would change. diff exits 1 when changes are pending,
#    which is the expected case here, not a failure. A rebind whose merge
#    would not deploy a rewritten file is refused here.
rc=0
"$rebind" diff --from "$old" --to "$new" --require-deploys "${review_args[@]}" --format json >"$audit" 2>"$out/audit.log" || rc=$?
cat "$out/audit.log" >&2
case $rc in
0) ;;
1) say "Outputs: $out"; say "Audit: $audit" ;;
*) die "the audit failed (rebind diff exit $rc); nothing written" ;;
esac

# 2. Apply exactly what was audited, on a new branch, and push it. The audit
#    is the guard: if the tree changed since, nothing is written. With a
#    .rebind.yaml the cluster is named (its endpoint must be OLD, which the
#    audit checks) and the config is rebound with the manifests.
target=(--from "$old")
dir=$PWD
while :; do
    if [[ -f $dir/.rebind.yaml ]]; then
        if [[ -n ${CONFIG_CLUSTER:-} ]]; then
            target=(--cluster "$CONFIG_CLUSTER")
            say "Config: $dir/.rebind.yaml (cluster $CONFIG_CLUSTER)"
        else
            say "Config: $dir/.rebind.yaml (the cluster declared at $old)"
        fi
        break
    fi
    [[ $dir == "$root" || $dir == / ]] && break
    dir=$(dirname "$dir")
done
# One registration per server: when the repository declares the old
# cluster's registration itself (the audit lists it), this commit rebinds it
# and no second Secret is written.
own_registration=true
if grep -q '"registrations": \[\]' "$audit"; then
    own_registration=false
fi
secret_args=(--cluster-name "$cluster" --secret-out "$secret")
if $own_registration || [[ -n ${ARGOCD_CLUSTER_TOKEN:-} ]]; then
    secret_args=() # none, or written below with the token by `rebind secret`
fi
rc=0
retry=false
if [[ -s $audit ]] && ! grep -q '"status": "pending"' "$audit"; then
    # Nothing left to rewrite here. When HEAD is the commit an earlier run
    # made (its push failed), rebind reports it and pushes it; otherwise
    # there is nothing to do.
    "$rebind" apply "${target[@]}" --to "$new" --yes --format json "${review_args[@]}" \
        ${BRANCH:+--branch "$BRANCH"} --push "$remote" "${pr_args[@]}" >"$report" 2>"$out/apply.log" || rc=$?
    if [[ $rc -eq 0 && $(field status) != already_done ]]; then
        say "Nothing to change: $root holds no $old value (already rebound?)"
        exit 0
    fi
    # The review and the Secret are the first run's; none is written now.
    retry=true
else
    "$rebind" apply "${target[@]}" --to "$new" --expect-from-audit "$audit" --yes --require-deploys \
        "${review_args[@]}" --review-out "$review" "${secret_args[@]}" --format json \
        ${BRANCH:+--branch "$BRANCH"} --push "$remote" "${pr_args[@]}" >"$report" 2>"$out/apply.log" || rc=$?
fi
cat "$out/apply.log" >&2
case $rc in
0) keep=true ;;
3)
    keep=true
    printf 'cutover: committed, but the push or the pull request failed (rebind says what is left, above); run this same command again to finish (from any branch), or the command it printed. Outputs: %s\n' "$out" >&2
    # rebind's JSON names what exists and the exact command that finishes.
    if [[ -n $(field retry) ]]; then
        printf 'cutover: rebind: branch %s, commit %s, pushed: %s; its retry: %s\n' \
            "$(field branch)" "$(field commit)" \
            "$(sed -n 's/^  "pushed": \(true\|false\),\{0,1\}$/\1/p' "$report" | head -n 1)" \
            "$(field retry)" >&2
    fi
    exit 3
    ;;
*) die "rebind apply refused (exit $rc); nothing written" ;;
esac
# The branch and the commit are the ones rebind made (or found done), never
# whatever is checked out.
branch=$(field branch)
commit=$(field commit)
[[ -n $branch && -n $commit ]] || die "rebind's report names no branch or commit: $report"
[[ $(field pushed_to) == "$remote" ]] || die "rebind's report says $branch was not pushed to $remote: $report"
pr=$(pr_url)
if [[ ${#pr_args[@]} -gt 0 && -z $pr ]]; then
    die "rebind's report names no pull request for $branch: $report"
fi
if ! $retry && ! $own_registration && [[ -n ${ARGOCD_CLUSTER_TOKEN:-} ]]; then
    rc=0
    "$rebind" secret --name "$cluster" --server "$new" \
        --token-env ARGOCD_CLUSTER_TOKEN --out "$secret" --repo "$root" 2>"$out/secret.log" || rc=$?
    cat "$out/secret.log" >&2
    [[ $rc -eq 0 ]] || die "pushed $branch, but the Secret was not written (rebind secret exit $rc)"
fi

# 3. Look (read-only) at the hub, when the tools are here.
context="" apps=""
if command -v kubectl >/dev/null; then
    context=$(kubectl config current-context 2>/dev/null) || context=""
fi
if command -v argocd >/dev/null; then
    apps=$(argocd app list --cluster "$old" -o name 2>/dev/null) || apps=""
fi

# 4. What is left: the hub and the clusters are changed by people.
ctx=${context:+ --context $context}
say ""
if $retry; then
    say "Pushed $branch ($commit) to $remote: the earlier run's commit, its push retried."
    [[ -z $pr ]] || say "Pull request: $pr"
    if $own_registration || [[ -n ${ARGOCD_CLUSTER_TOKEN:-} ]]; then
        say "The review is in the earlier run's output directory."
    else
        say "The review and the cluster Secret are in the earlier run's output directory."
    fi
    exit 0
fi
say "Pushed $branch ($commit) to $remote. Review: $review"
[[ -z $pr ]] || say "Pull request: $pr"
if $own_registration; then
    say "Secret for $cluster: the repository's own (rebound in this commit)"
else
    say "Secret for $cluster: $secret"
fi
say ""
say "Next steps:"
if $own_registration; then
    # The repository holds the cluster's registration itself: it was rebound
    # in this commit and reaches the hub with the merge.
    if [[ -n ${DESCRIBE_TO:-} ]]; then
        say "  1. The repository declares the cluster's Secret itself; this commit keeps"
        say "     the old cluster's (the rollback target) and adds the new cluster's beside"
        say "     it, and the merge registers it. No other Secret is written. Before the"
        say "     merge, put the new cluster's token and CA where the added one reads them"
        say "     (see the review's notes: $review)."
    else
        say "  1. The repository declares the new cluster's Secret itself; this commit"
        say "     rebinds it and the merge registers it. No second Secret is written:"
        say "     ArgoCD picks one of two Secrets for a server at random. Before the merge,"
        say "     put the new cluster's token and CA where it reads them (see the review's"
        say "     notes: $review)."
    fi
elif [[ -n ${ARGOCD_CLUSTER_TOKEN:-} ]]; then
    say "  1. Register $cluster on the hub before the merge:"
    say "       kubectl$ctx apply -f $secret"
else
    say "  1. Register $cluster on the hub before the merge:"
    say "       export ARGOCD_CLUSTER_TOKEN=... ARGOCD_CLUSTER_CA=...   # fill the placeholders"
    say "       envsubst < $secret | kubectl$ctx apply -f -"
fi
say "       argocd cluster list    # after the merge at the latest: $new is listed"
if [[ -n $pr ]]; then
    say "  2. Review and merge the pull request $pr (its description is the review)."
else
    say "  2. Open a pull request for $branch (its description: $review) and merge it."
fi
steps=$(sync_steps)
if [[ -n $steps ]]; then
    say "  3. After the merge, sync in this order (rebind's after-merge model; the"
    say "     review says which parent carries each file and from which revision):"
    n=0
    while IFS=$'\t' read -r res wave auto; do
        n=$((n + 1))
        name=${res#*/}
        at=""
        [[ $wave == null ]] || at="wave $wave: "
        if [[ $res == ApplicationSet/* ]]; then
            if [[ $auto == true ]]; then
                how="its generated Applications sync automatically; watch them"
            else
                how="sync each Application it generates (no automated policy in its template)"
            fi
        elif [[ $auto == true ]]; then
            how="automated: argocd app wait $name --sync --health --timeout 900"
        else
            how="argocd app sync $name && argocd app wait $name --health --timeout 900"
        fi
        say "       $n. $at$res: $how"
    done <<<"$steps"
elif [[ -n $apps ]]; then
    say "  3. Watch the Applications that move from $old sync:"
    say "       argocd app wait $(tr '\n' ' ' <<<"$apps")--sync --health --timeout 900"
else
    say "  3. Watch the Applications sync:"
    say "       argocd app list --cluster $old    # the ones still on the old cluster"
    say "       argocd app wait APP... --sync --health --timeout 900"
fi
say "       argocd app list --cluster $new    # Synced and Healthy"
say "  4. Plan the old cluster's teardown once argocd app list --cluster $old is empty:"
say "     drain its traffic, remove its cluster Secret from the hub (argocd cluster rm $old),"
say "     then delete the cluster. Then remove the old cluster's OIDC issuer from the IAM"
say "     trust policies (its pods are gone; nothing may assume roles as them):"
old_issuer=OLD_ISSUER
if [[ -n ${DESCRIBE_FROM:-} ]]; then
    # The old cluster's issuer, from its describe-cluster output.
    found=$(sed -n 's/.*"issuer": *"\([^"]*\)".*/\1/p' "$DESCRIBE_FROM" | head -n 1)
    old_issuer=${found:-OLD_ISSUER}
fi
say "       $rebind identity --trust remove-retired --oidc-retired $old_issuer --yes"
if [[ -z ${DESCRIBE_FROM:-} ]]; then
    say "     (Before the cutover, the new issuer must be trusted: set DESCRIBE_FROM and"
    say "     DESCRIBE_TO to the clusters' describe-cluster outputs and the script checks it:"
    say "       aws eks describe-cluster --name $eks --output json > new.json)"
fi
say ""
say "Rollback (before the teardown), either:"
say "  - git revert $commit   # (or the commit it was merged as): the exact original bytes"
say "  - ${CONFIG_CLUSTER:+CONFIG_CLUSTER=$CONFIG_CLUSTER }$0 $new $old OLD_CLUSTER_NAME $remote $root"
say "      # also rebinds manifests added since; an old host spelt in lower case"
say "      # or with :443 comes back spelt as $old"
