//! Both registrations during the cutover: where a rebind that moves the
//! cluster's name rewrites a cluster registration of the old cluster (a
//! Secret, or an ExternalSecret whose template is one, labelled
//! `argocd.argoproj.io/secret-type: cluster`, registering the old server
//! URL or ARN), that document is put back byte for byte (the rollback
//! target) and its rewritten copy follows it in the same file, after
//! `---`, under its own Secret name. The copy's ArgoCD name and Secret name
//! may be no other server's registration (refused, naming it). A
//! repository that already registers the new server gets no copy, and the
//! old registration's changes are dropped: a second run adds nothing.
//!
//! Without a name rebind the new registration would have the old one's
//! names, so the registration is rewritten in place, as the endpoint is.

use crate::edit::rewrite::PlanError;
use crate::model::positions;
use crate::review::plan::{AddedRegistration, Plan};
use crate::syntax::yaml::{self, LineIndex, Node, Value};
use std::path::Path;

/// A registration document of a file: its kind's row, the server it
/// registers (decoded), its ArgoCD name (decoded), its namespace.
struct Reg {
    row: &'static positions::Registration,
    server: String,
    name: Option<String>,
}

/// The registration `doc` is, if it is one.
fn registration(doc: &Node) -> Option<Reg> {
    let kind = doc.str_at(positions::KIND)?;
    let row = positions::REGISTRATIONS.iter().find(|r| r.kind == kind)?;
    let (label, cluster) = positions::CLUSTER_SECRET_LABEL;
    if doc.at(row.labels).and_then(|l| l.str_at(&[label])) != Some(cluster) {
        return None;
    }
    let decoded = |path: &[&str], encoded: bool| {
        let v = doc.str_at(path)?;
        if encoded {
            crate::find::embedded::decoded_value(v)
        } else {
            Some(v.to_string())
        }
    };
    let (path, encoded) = row.servers.iter().find(|(p, _)| doc.at(p).is_some())?;
    let mut name_path = path.to_vec();
    name_path.pop();
    name_path.push(positions::NAME_KEY);
    Some(Reg {
        row,
        server: decoded(path, *encoded)?,
        name: decoded(&name_path, *encoded),
    })
}

fn same_server(a: &str, b: &str) -> bool {
    crate::find::names::same_server(a, b)
}

/// The documents of `text`, read as the locator reads them (Helm template
/// actions masked when only so it parses).
fn documents(text: &str) -> Option<Vec<Node>> {
    yaml::read_documents(text).ok().or_else(|| {
        let (masked, _) = yaml::mask_templates(text)?;
        yaml::read_documents(&masked).ok()
    })
}

/// The new registration's Secret name (or ArgoCD name), from the old one's.
fn copy_name(old: &str, from: &str, to: &str) -> String {
    crate::model::names::renamed(old, from, to)
}

/// The byte range of the scalar `n`'s value in `text`, when written plain
/// or quoted without escapes on one line.
fn scalar_range(text: &str, n: &Node) -> Option<std::ops::Range<usize>> {
    let Value::Scalar(v, _) = &n.value else {
        return None;
    };
    let rest = text.get(n.start..)?;
    let start = match rest.as_bytes().first()? {
        b'"' | b'\'' => n.start + 1,
        _ => n.start,
    };
    let end = start + v.len();
    (text.get(start..end) == Some(v.as_str())).then_some(start..end)
}

/// What one file's registration documents become.
enum Edit {
    /// The old document back, and after it the copy (with its Secret name).
    Add {
        range: std::ops::Range<usize>,
        kept: String,
        copy: String,
        secret_name: String,
        resource_kind: &'static str,
        namespace: Option<String>,
        argocd_name: Option<String>,
        kept_at: String,
        /// The old server and the new.
        servers: (String, String),
        /// The kept document's lines (in the file as read).
        lines: std::ops::RangeInclusive<usize>,
    },
    /// The old document back, its lines' changes dropped.
    Revert {
        range: std::ops::Range<usize>,
        kept: String,
        lines: std::ops::RangeInclusive<usize>,
    },
}

/// Keeps the old cluster's registrations the plan rewrites and adds the
/// new ones beside them (see the module's comment). `root`: the
/// repository, searched for registrations the copies' names may collide
/// with and for one of the new server already.
pub fn keep_and_add(plan: &mut Plan, root: Option<&Path>) -> anyhow::Result<()> {
    let Some(names) = plan.names.as_ref().map(|n| n.rebind.clone()) else {
        return Ok(());
    };
    let (from, to) = (plan.from.url(), plan.to.url());
    let is_old = |s: &str| same_server(s, &from) || names.old_arn.as_deref() == Some(s);
    let is_new = |s: &str| same_server(s, &to) || names.new_arn.as_deref() == Some(s);
    let (existing, secrets) = match root {
        Some(r) => (
            crate::review::secret::all_registrations(r)?.registrations,
            secrets_made(r)?,
        ),
        None => (Vec::new(), Vec::new()),
    };
    // The new counterpart of an old server: the new ARN for the old ARN,
    // else the new endpoint.
    let counterpart = |old: &str| match (&names.old_arn, &names.new_arn) {
        (Some(a), Some(n)) if a == old => n.clone(),
        _ => to.clone(),
    };
    let registered = |server: &str| {
        existing
            .iter()
            .flat_map(|r| &r.declared_at)
            .any(|d| same_server(&d.server, server))
    };
    for i in 0..plan.files.len() {
        let f = &plan.files[i];
        if f.is_config || !f.old.contains(positions::CLUSTER_SECRET_LABEL.0) {
            continue;
        }
        let (Some(old_docs), Some(new_docs)) = (documents(&f.old), documents(&f.new)) else {
            continue;
        };
        if old_docs.len() != new_docs.len() {
            continue;
        }
        let old_index = LineIndex::new(&f.old);
        let mut edits = Vec::new();
        for (od, nd) in old_docs.iter().zip(&new_docs) {
            let (kept, mine) = (&f.old[od.start..od.end], &f.new[nd.start..nd.end]);
            let Some(reg) = registration(od) else {
                // One that cannot be kept and copied is refused, never
                // rewritten in place: an item of a `kind: List`.
                if kept != mine && holds_old_registration(od, &is_old) {
                    plan.errors
                        .push(refusal(&f.rel, od, "is an item of a `kind: List`"));
                }
                continue;
            };
            if kept == mine || !is_old(&reg.server) {
                continue;
            }
            if f.rel.to_ascii_lowercase().ends_with(".json") || f.old.trim_start().starts_with('{')
            {
                plan.errors.push(refusal(
                    &f.rel,
                    od,
                    "is in a JSON file, which holds one document",
                ));
                continue;
            }
            let range = nd.start..nd.end;
            let new_server = counterpart(&reg.server);
            if registered(&new_server) {
                let last = old_index.position(&f.old, od.end.max(od.start + 1) - 1).0;
                edits.push(Edit::Revert {
                    range,
                    kept: kept.to_string(),
                    lines: od.line..=last,
                });
                continue;
            }
            let last = old_index.position(&f.old, od.end.max(od.start + 1) - 1).0;
            let reg_at = (&reg, od.line..=last);
            match add_edit(&f.rel, &f.new, (od, kept), nd, reg_at, &names, new_server) {
                Ok(e) => edits.push(e),
                Err(e) => plan.errors.push(e),
            }
        }
        apply_edits(plan, i, edits, (&existing, &secrets), &is_new);
    }
    refuse_rendered_registrations(plan);
    plan.files
        .retain(|f| f.is_config || f.old != f.new || !f.changes.is_empty());
    Ok(())
}

/// Fills in `r`'s ArgoCD names from `registrations` (the repository's
/// and the hub's): the names of the registrations of the old server `from`
/// (or the old ARN) that move to the name of the registration added beside
/// them (derived from the EKS name: `prod-arn` → `prod-blue-arn`), those
/// that get no new name, and every name read.
pub fn argocd_names(
    r: &mut crate::find::names::NameRebind,
    registrations: &[crate::review::secret::Registration],
    (from, to): (&str, &str),
) {
    let mut known = Vec::new();
    r.old_server = Some(from.to_string());
    r.new_server = Some(to.to_string());
    for d in registrations.iter().flat_map(|x| &x.declared_at) {
        let Some(name) = d.cluster_name.clone() else {
            continue;
        };
        let old = r.is_old_server(&d.server);
        if !old && !r.argocd_foreign.iter().any(|(n, _)| *n == name) {
            let at = format!(
                "{}:{}:{}: {} registers {}",
                d.rel, d.line, d.column, d.resource, d.server
            );
            r.argocd_foreign.push((name.clone(), at));
        }
        if old && name != r.old {
            let derived = crate::model::names::derived_part(&name, &r.old)
                .filter(|p| !crate::model::names::within_new(&name, p, &r.new));
            match derived {
                Some(_) => {
                    let moved = crate::model::names::renamed(&name, &r.old, &r.new);
                    if !r.argocd_moves.iter().any(|(o, _)| *o == name) {
                        r.argocd_moves.push((name.clone(), moved));
                    }
                }
                None if !name.contains(r.new.as_str()) => r.argocd_kept.push(name.clone()),
                None => {}
            }
        }
        known.push(name);
    }
    r.argocd_known = Some(known);
}

/// A chart whose values this plan rewrites (a rewritten file below a
/// directory holding `Chart.yaml`, outside its `templates/`) and whose
/// templates render a cluster registration with its server from a template
/// action: the rendered registration would move in place, the old
/// cluster's lost. Refused at the template; rebind cannot add a second one
/// beside it.
fn refuse_rendered_registrations(plan: &mut Plan) {
    let mut charts: Vec<std::path::PathBuf> = plan
        .files
        .iter()
        .filter(|f| !f.is_config)
        .filter_map(|f| {
            let chart = f
                .path
                .ancestors()
                .skip(1)
                .find(|d| d.join("Chart.yaml").is_file())?;
            let below = f.path.strip_prefix(chart).ok()?;
            (!below.starts_with("templates")).then(|| chart.to_path_buf())
        })
        .collect();
    charts.sort();
    charts.dedup();
    for chart in charts {
        let mut stack = vec![chart.join("templates")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                } else if let Some(err) = rendered_registration(&path) {
                    plan.errors.push(err);
                }
            }
        }
    }
}

/// The refusal of the chart template at `path` when it renders a cluster
/// registration whose server is a template action.
fn rendered_registration(path: &Path) -> Option<PlanError> {
    let text = std::fs::read_to_string(path).ok()?;
    if !text.contains(positions::CLUSTER_SECRET_LABEL.0) {
        return None;
    }
    let (masked, actions) = yaml::mask_templates(&text)?;
    let docs = yaml::read_documents(&masked).ok()?;
    for doc in &docs {
        let Some(kind) = doc.str_at(positions::KIND) else {
            continue;
        };
        let Some(row) = positions::REGISTRATIONS.iter().find(|r| r.kind == kind) else {
            continue;
        };
        let Some(server) = row.servers.iter().find_map(|(p, _)| doc.at(p)) else {
            continue;
        };
        // An action in the server's value, from its start to its line's end.
        let end = masked[server.start..]
            .find('\n')
            .map_or(masked.len(), |n| server.start + n);
        let templated = actions
            .iter()
            .any(|&(a, _)| (server.start..end).contains(&a));
        if templated {
            return Some(PlanError {
                rel: path.display().to_string().trim_start_matches("./").to_string(),
                line: server.line,
                column: server.col,
                message: "a cluster registration this chart renders with its server from its values, which this rebind rewrites: the old cluster's registration would move in place instead of being kept (the rollback target) with the new one beside it. Render the new cluster's registration on its own (a second values entry, or `rebind secret --describe`) and keep the old one's values, then run rebind again; nothing written".into(),
                code: "cannot-rewrite",
            });
        }
    }
    None
}

/// Whether `doc` holds, as an item of a `kind: List`, a registration of
/// a server `is_old` accepts.
fn holds_old_registration(doc: &Node, is_old: &dyn Fn(&str) -> bool) -> bool {
    match doc.get(positions::LIST_ITEMS).map(|n| &n.value) {
        Some(Value::Seq(items)) => items
            .iter()
            .filter_map(registration)
            .any(|r| is_old(&r.server)),
        _ => false,
    }
}

/// The refusal of a registration of the old cluster that `why` keeps from
/// being kept with the new one added beside it.
fn refusal(rel: &str, doc: &Node, why: &str) -> PlanError {
    PlanError {
        rel: rel.to_string(),
        line: doc.line,
        column: doc.col,
        message: format!("the old cluster's registration here {why}: rebind keeps it (the rollback target) and adds the new cluster's beside it as a document of its own, which it cannot do here; move it to a YAML file of its own, or add the new registration by hand (`rebind secret --describe`); nothing written"),
        code: "cannot-rewrite",
    }
}

/// The edit that keeps the old registration `od` (its bytes `kept`) and adds the copy of
/// its rewritten `nd` (in `new`) beside it, registering `new_server`.
fn add_edit(
    rel: &str,
    new: &str,
    (od, kept): (&Node, &str),
    nd: &Node,
    (reg, lines): (&Reg, std::ops::RangeInclusive<usize>),
    names: &crate::find::names::NameRebind,
    new_server: String,
) -> Result<Edit, PlanError> {
    let (copy, secret_name) = copy_of(new, nd, reg, names).map_err(|message| PlanError {
        rel: rel.to_string(),
        line: od.line,
        column: od.col,
        message,
        code: "cannot-rewrite",
    })?;
    let copy_reg = documents(&copy).and_then(|d| d.first().and_then(registration));
    let old_name = reg.row.secret_name.iter().find_map(|p| od.str_at(p));
    Ok(Edit::Add {
        range: nd.start..nd.end,
        kept: kept.to_string(),
        copy,
        secret_name,
        resource_kind: reg.row.kind,
        namespace: od.str_at(positions::NAMESPACE).map(str::to_string),
        argocd_name: copy_reg.and_then(|r| r.name),
        servers: (reg.server.clone(), new_server),
        lines,
        kept_at: format!(
            "{}/{} ({rel}:{}:{})",
            reg.row.kind,
            old_name.unwrap_or("?"),
            od.line,
            od.col
        ),
    })
}

/// The copy of the rewritten registration `nd` (in `text`) under its own
/// Secret name, and that name.
fn copy_of(
    text: &str,
    nd: &Node,
    reg: &Reg,
    names: &crate::find::names::NameRebind,
) -> Result<(String, String), String> {
    let mut spots: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut secret_name = None;
    for path in reg.row.secret_name {
        let Some(n) = nd.at(path) else { continue };
        let Some(old) = n.as_str() else { continue };
        let new = copy_name(old, &names.old, &names.new);
        let Some(r) = scalar_range(text, n) else {
            return Err(format!(
                "the old cluster's registration is kept (the rollback target) and the new one added beside it, but its {} is written with escapes or across lines, which rebind cannot rename in the copy: write it plainly; nothing written",
                path.join(".")
            ));
        };
        secret_name.get_or_insert_with(|| new.clone());
        spots.push((r, new));
    }
    // ArgoCD's name, when the name positions left it (it is not the EKS
    // name) but it is derived from it (`prod-arn`): the copy's own.
    let (server_path, encoded) = reg
        .row
        .servers
        .iter()
        .find(|(p, _)| nd.at(p).is_some())
        .ok_or("the registration has no server")?;
    let mut name_path = server_path.to_vec();
    name_path.pop();
    name_path.push(positions::NAME_KEY);
    if let Some(n) = nd.at(&name_path).filter(|_| !encoded) {
        let value = n.as_str().unwrap_or_default();
        if let (Some(_), Some(r)) = (
            crate::model::names::derived_part(value, &names.old)
                .filter(|_| !value.contains(names.new.as_str())),
            scalar_range(text, n),
        ) {
            spots.push((r, copy_name(value, &names.old, &names.new)));
        }
    }
    let Some(secret_name) = secret_name else {
        return Err("the old cluster's registration has no Secret name to give the new one beside it its own; nothing written".into());
    };
    if !crate::text::dns::is_dns_subdomain(&secret_name) {
        return Err(format!("the new registration's Secret name {secret_name:?} (from the old one's and the new cluster name) is not a valid Kubernetes name; nothing written"));
    }
    spots.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut copy = text[nd.start..nd.end].to_string();
    for (r, new) in spots {
        copy.replace_range(r.start - nd.start..r.end - nd.start, &new);
    }
    Ok((copy, secret_name))
}

/// Applies one file's edits (last first), records the added registrations,
/// drops the reverted documents' changes, and refuses a copy whose name is
/// another server's registration.
fn apply_edits(
    plan: &mut Plan,
    i: usize,
    edits: Vec<Edit>,
    (existing, secrets): (&[crate::review::secret::Registration], &[MadeSecret]),
    is_new: &dyn Fn(&str) -> bool,
) {
    if edits.is_empty() {
        return;
    }
    let mut text = plan.files[i].new.to_string();
    let rel = plan.files[i].rel.clone();
    let mut added = Vec::new();
    let mut reverted = Vec::new();
    for e in edits.into_iter().rev() {
        match e {
            Edit::Revert { range, kept, lines } => {
                text.replace_range(range, &kept);
                reverted.push(lines);
            }
            Edit::Add {
                range,
                kept,
                mut copy,
                secret_name,
                resource_kind,
                namespace,
                argocd_name,
                kept_at,
                servers,
                lines,
            } => {
                // The kept document's line ending (CRLF stays CRLF).
                let nl = if kept.contains("\r\n") { "\r\n" } else { "\n" };
                let sep = if kept.ends_with('\n') {
                    format!("---{nl}")
                } else {
                    format!("{nl}---{nl}")
                };
                if !copy.ends_with('\n') && range.end < text.len() {
                    copy.push_str(nl);
                }
                let at = range.start + kept.len() + sep.len();
                let mut taken = clashes(
                    existing,
                    &secret_name,
                    namespace.as_deref(),
                    argocd_name.as_deref(),
                    is_new,
                );
                taken.extend(secret_clashes(
                    secrets,
                    resource_kind,
                    &secret_name,
                    namespace.as_deref(),
                ));
                for clash in taken {
                    plan.errors.push(PlanError {
                        rel: rel.clone(),
                        line: 0,
                        column: 0,
                        message: format!("the new cluster's registration, added beside the old one as {resource_kind}/{secret_name}, would take a name already taken: {clash}; nothing written"),
                        code: "registration-name-taken",
                    });
                }
                let inserted = format!("{sep}{copy}").matches('\n').count()
                    - usize::from(!copy.ends_with('\n'));
                text.replace_range(range, &format!("{kept}{sep}{copy}"));
                // Later edits are applied first: earlier offsets hold.
                added.push((
                    at,
                    format!("{resource_kind}/{secret_name}"),
                    kept_at,
                    servers,
                    (lines, inserted),
                ));
            }
        }
    }
    finish_file(plan, i, text, added, &reverted);
}

/// One added registration: where its document starts in the file's new
/// text, its resource, the kept one, the old and the new server, the kept
/// document's lines (as read) and the number of lines added after it.
type Added = (
    usize,
    String,
    String,
    (String, String),
    (std::ops::RangeInclusive<usize>, usize),
);

/// Records the added registrations of file `i` (whose new text is `text`),
/// places the errors without one at the first, drops the reverted
/// documents' changes, and reads the text back.
fn finish_file(
    plan: &mut Plan,
    i: usize,
    text: String,
    added: Vec<Added>,
    reverted: &[std::ops::RangeInclusive<usize>],
) {
    let rel = plan.files[i].rel.clone();
    let index = LineIndex::new(&text);
    let mut moves = Vec::new();
    for (at, resource, kept, (old_server, new_server), (lines, inserted)) in added.into_iter().rev()
    {
        let (line, column) = index.position(&text, at);
        moves.push(Relocation {
            kept: lines,
            inserted,
            copy_line: line,
            resource: resource.clone(),
        });
        plan.added_registrations.push(AddedRegistration {
            rel: rel.clone(),
            line,
            column,
            resource,
            kept,
            old_server,
            new_server,
        });
    }
    // Errors without a place get the added document's.
    for e in plan
        .errors
        .iter_mut()
        .filter(|e| e.rel == rel && e.line == 0)
    {
        if let Some(a) = plan.added_registrations.iter().find(|a| a.rel == rel) {
            e.line = a.line;
            e.column = a.column;
        }
    }
    let dropped = |line: usize| reverted.iter().any(|r| r.contains(&line));
    plan.files[i].changes.retain(|o| !dropped(o.line));
    if let Some(n) = plan.names.as_mut() {
        n.changes
            .retain(|c| c.rel != rel || !dropped(c.change.line));
    }
    relocate(plan, &rel, &moves);
    // Read back: every document there was, and one more per copy.
    let want = documents(&plan.files[i].new).map(|d| {
        d.len()
            + plan
                .added_registrations
                .iter()
                .filter(|a| a.rel == rel)
                .count()
    });
    if documents(&text).map(|d| d.len()) != want {
        plan.errors.push(PlanError {
            rel: rel.clone(),
            line: 1,
            column: 1,
            message: "the registration added beside the old one did not read back as one more document; nothing written".into(),
            code: "cannot-rewrite",
        });
    }
    plan.files[i].new = text.into();
}

/// A Secret the repository makes that is no cluster registration (a
/// Secret, an ExternalSecret's target, a SealedSecret): the added
/// registration may not take its name.
pub struct MadeSecret {
    /// The Secret's name; or, with `object`, the object's own name.
    name: String,
    /// The kind of an object that makes a Secret under another name (an
    /// ExternalSecret's target): a copy of that kind may not take the
    /// object's own name either.
    object: Option<String>,
    namespace: Option<String>,
    /// `path:line:column: Kind/name`.
    at: String,
}

/// The Secrets the repository under `root` makes that are no cluster
/// registration ([`positions::SECRET_MAKERS`]).
fn secrets_made(root: &Path) -> anyhow::Result<Vec<MadeSecret>> {
    use crate::discover::walk::{self, Content, Found, Role};
    let found = walk::discover(&crate::repo::git::walk_request(&[root.to_path_buf()]))?;
    let mut out = Vec::new();
    for item in found.files() {
        let Found::Entry(e) = item else { continue };
        if e.role != Role::Yaml {
            continue;
        }
        let Ok(bytes) = std::fs::read(&e.path) else {
            continue;
        };
        let text = match walk::classify(bytes) {
            Content::Text(t) | Content::Decoded { text: t, .. } => t,
            _ => continue,
        };
        if !text.contains("Secret") {
            continue;
        }
        let rel = e
            .path
            .strip_prefix(root)
            .unwrap_or(&e.path)
            .to_string_lossy()
            .replace('\\', "/");
        for doc in documents(&text).unwrap_or_default() {
            // An exported `kind: List`: each item by its own kind.
            match doc.get(positions::LIST_ITEMS).map(|n| &n.value) {
                Some(Value::Seq(items)) => {
                    for item in items {
                        out.extend(made_secret(item, &rel));
                    }
                }
                _ => out.extend(made_secret(&doc, &rel)),
            }
        }
    }
    Ok(out)
}

/// The Secret `doc` makes, if it makes one and is no cluster
/// registration, and the object itself when its own name is another.
fn made_secret(doc: &Node, rel: &str) -> Vec<MadeSecret> {
    let Some(kind) = doc.str_at(positions::KIND) else {
        return Vec::new();
    };
    let Some((_, paths)) = positions::SECRET_MAKERS.iter().find(|(k, _)| *k == kind) else {
        return Vec::new();
    };
    if registration(doc).is_some() || crate::find::names::registration_fields(doc).is_some() {
        return Vec::new();
    }
    let namespace = doc.str_at(positions::NAMESPACE).map(str::to_string);
    let entry = |n: &Node, object: Option<String>| {
        let name = n.as_str()?.to_string();
        Some(MadeSecret {
            at: format!("{rel}:{}:{}: {kind}/{name}", n.line, n.col),
            namespace: namespace.clone(),
            name,
            object,
        })
    };
    let made = paths
        .iter()
        .find_map(|p| doc.at(p).filter(|n| n.as_str().is_some()))
        .and_then(|n| entry(n, None));
    let own = (kind != "Secret")
        .then(|| doc.at(positions::NAME))
        .flatten()
        .and_then(|n| entry(n, Some(kind.to_string())));
    made.into_iter().chain(own).collect()
}

/// The Secrets of `secrets` a registration named `secret` (in
/// `namespace`) would replace or be replaced by.
fn secret_clashes(
    secrets: &[MadeSecret],
    kind: &str,
    secret: &str,
    namespace: Option<&str>,
) -> Vec<String> {
    secrets
        .iter()
        .filter(|s| s.name == secret)
        .filter(|s| s.object.as_deref().is_none_or(|k| k == kind))
        .filter(|s| match (namespace, s.namespace.as_deref()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
        .map(|s| match &s.object {
            None => format!(
                "{} makes a Secret of that name, which is no cluster registration",
                s.at
            ),
            Some(_) => format!("{} is an object of that kind and name", s.at),
        })
        .collect()
}

/// A kept document and the copy added after it: the changes read in the
/// kept document's lines are the copy's (the kept bytes are unchanged),
/// and those after it move down by the lines added.
struct Relocation {
    kept: std::ops::RangeInclusive<usize>,
    inserted: usize,
    /// The copy's first line in the file written.
    copy_line: usize,
    resource: String,
}

/// Where a change read at `line` (and its resource) is in the file
/// written, after the copies `moves` were added.
fn relocated(line: usize, moves: &[Relocation]) -> (usize, Option<&str>) {
    let below: usize = moves
        .iter()
        .filter(|m| *m.kept.end() < line)
        .map(|m| m.inserted)
        .sum();
    match moves.iter().find(|m| m.kept.contains(&line)) {
        Some(m) => (m.copy_line + line - m.kept.start(), Some(&m.resource)),
        None => (line + below, None),
    }
}

/// Moves the endpoint and name changes of file `rel` to the lines they are
/// at in the file written (see [`Relocation`]).
fn relocate(plan: &mut Plan, rel: &str, moves: &[Relocation]) {
    if moves.is_empty() {
        return;
    }
    if let Some(f) = plan.files.iter_mut().find(|f| f.rel == rel) {
        for o in &mut f.changes {
            let (line, res) = relocated(o.line, moves);
            o.line = line;
            if let Some(r) = res {
                o.resource = Some(r.to_string());
            }
        }
    }
    let Some(n) = plan.names.as_mut() else { return };
    for c in n.changes.iter_mut().filter(|c| c.rel == rel) {
        let (line, res) = relocated(c.change.line, moves);
        c.change.line = line;
        if let Some(r) = res {
            c.change.resource = Some(r.to_string());
        }
    }
}

/// The registrations of `existing` that a new one named `secret` (in
/// `namespace`) with ArgoCD name `name` would clash with: another
/// server's, under the same Secret name or the same ArgoCD name.
fn clashes(
    existing: &[crate::review::secret::Registration],
    secret: &str,
    namespace: Option<&str>,
    name: Option<&str>,
    is_new: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in existing {
        let same_ns = match (namespace, r.namespace.as_deref()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        for d in &r.declared_at {
            if is_new(&d.server) {
                continue;
            }
            let same_secret = same_ns && r.name == secret;
            let same_name = name.is_some() && d.cluster_name.as_deref() == name;
            if same_secret || same_name {
                out.push(format!(
                    "{}:{}:{}: {}, another server's registration, registers {}{}",
                    d.rel,
                    d.line,
                    d.column,
                    d.resource,
                    d.server,
                    if same_name {
                        format!(" under the same ArgoCD name {:?}", name.unwrap_or_default())
                    } else {
                        " under the same Secret name".to_string()
                    }
                ));
            }
        }
    }
    out
}
