//! The IAM policy table: the key names of an IAM trust policy (and of the
//! CloudFormation functions that build its principals), and the reading of
//! one statement into the grants it gives through EKS OIDC issuers. No
//! other module names these keys (`tests/it/iam_table.rs` holds it).
//!
//! A grant is what IAM lets one issuer's tokens do through a statement:
//! (account, issuer, subject pattern, audience, other conditions). IAM
//! evaluates a web-identity request against a statement only when its
//! `Effect` is `Allow`, its `Action` takes `sts:AssumeRoleWithWebIdentity`,
//! its `Principal.Federated` names the token's provider and every key of
//! its `Condition` is present in the token's context and matches; the keys
//! of one issuer (`<issuer>:sub`, `:aud`) are in no other issuer's context
//! (IAM User Guide, "Available keys for AWS web identity federation" and
//! "Condition operators": keys of one block are ANDed). So a statement
//! whose principal names one issuer and whose condition keys name another
//! grants nobody.

use crate::syntax::yaml::{Node, Value};
use crate::text::issuer::{find, Form, Issuer};

/// A policy's list of statements (a list, or one statement object).
pub const STATEMENT: &str = "Statement";
pub const SID: &str = "Sid";
pub const EFFECT: &str = "Effect";
pub const ALLOW: &str = "Allow";
pub const ACTION: &str = "Action";
pub const PRINCIPAL: &str = "Principal";
pub const FEDERATED: &str = "Federated";
pub const CONDITION: &str = "Condition";
/// The operators whose `:sub` / `:aud` values say who is granted.
pub const STRING_EQUALS: &str = "StringEquals";
pub const STRING_LIKE: &str = "StringLike";
/// A set operator prefix; on the single-valued `sub` and `aud` keys it
/// means its operator.
pub const FOR_ANY_VALUE: &str = "ForAnyValue:";
/// The web-identity action, and the wildcards that take it.
pub const WEB_IDENTITY_ACTIONS: [&str; 3] = ["sts:AssumeRoleWithWebIdentity", "sts:*", "*"];
/// An explicit deny: it overrides any `Allow` ("Policy evaluation logic").
pub const DENY: &str = "Deny";
/// The elements that name what a statement does *not* apply to: every
/// action, principal or resource but those listed.
pub const NOT_ACTION: &str = "NotAction";
pub const NOT_PRINCIPAL: &str = "NotPrincipal";
pub const NOT_RESOURCE: &str = "NotResource";
/// The principal type whose `*` means every principal, and the wildcard.
pub const AWS_PRINCIPAL: &str = "AWS";
pub const ANY: &str = "*";
/// The negated string operators, read as conditions a twin must repeat.
pub const STRING_NOT_EQUALS: &str = "StringNotEquals";
pub const STRING_NOT_LIKE: &str = "StringNotLike";
/// Operators and modifiers the model does not evaluate: a statement using
/// one on a web-identity grant is not proven.
pub const NULL: &str = "Null";
pub const FOR_ALL_VALUES: &str = "ForAllValues:";
pub const IF_EXISTS: &str = "IfExists";
/// The condition-key suffixes of an EKS issuer that say who is granted.
pub const SUBJECT: &str = "sub";
pub const AUDIENCE: &str = "aud";
/// The audience `aws iam create-open-id-connect-provider` registers for
/// IRSA.
pub const STS_AUDIENCE: &str = "sts.amazonaws.com";

/// What marks a Terraform statement (read as text): a JSON or
/// `jsonencode` statement's `Principal`, an `aws_iam_policy_document`
/// statement's `principals` block.
pub const TF_PRINCIPAL_MARKERS: [&str; 2] = [PRINCIPAL, "principals"];

/// CloudFormation: a template's parameters, a parameter's default, the
/// functions that build a principal's ARN, and the role resource type.
pub const CFN_PARAMETERS: &str = "Parameters";
pub const CFN_DEFAULT: &str = "Default";
pub const CFN_REF: &str = "Ref";
pub const CFN_TYPE: &str = "Type";
pub const CFN_ROLE: &str = "AWS::IAM::Role";

/// A value pattern of a condition: literal (`StringEquals`, or a
/// `StringLike` without wildcard) or a `StringLike` pattern.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pattern {
    pub like: bool,
    pub value: String,
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.value)
    }
}

/// One grant of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The provider's account, when its ARN is literal.
    pub account: Option<String>,
    pub issuer: Issuer,
    /// `None`: any subject of the issuer.
    pub subject: Option<Pattern>,
    /// `None`: any audience.
    pub audience: Option<Pattern>,
    /// Every other condition, with the issuer's host path written `<issuer>`.
    pub rest: Vec<String>,
}

impl Grant {
    /// Whether this grant (of another issuer) lets the same subjects in as
    /// `other` does: its twin, or broader in subject or audience.
    pub fn covers(&self, other: &Grant) -> bool {
        self.account == other.account
            && self.rest == other.rest
            && (self.subject.is_none() || self.subject == other.subject)
            && (self.audience.is_none() || self.audience == other.audience)
    }

    /// `subject X, audience Y` in words.
    pub fn describe(&self) -> String {
        format!(
            "subject {}, audience {}",
            self.subject
                .as_ref()
                .map_or("any".to_string(), |p| p.to_string()),
            self.audience
                .as_ref()
                .map_or("any".to_string(), |p| p.to_string())
        )
    }
}

/// One statement read: what it grants and what keeps it from proof.
#[derive(Debug, Clone)]
pub struct Statement {
    /// `Sid`, if any.
    pub sid: Option<String>,
    /// 0-based index in its list.
    pub index: usize,
    /// `Effect: Allow` (or no `Effect`) and an action that takes web
    /// identity (or no `Action`): a `Deny` never counts as trust.
    pub allows: bool,
    /// The EKS issuers its `Principal.Federated` names, each with its
    /// account when literal.
    pub principals: Vec<(Issuer, Option<String>)>,
    /// A principal that is neither an EKS issuer nor another literal
    /// provider (a template, an unresolved `Ref`, `${...}`).
    pub unresolved: bool,
    /// Principals besides EKS issuers (another provider, `AWS`, `Service`).
    pub others: bool,
    /// The EKS issuers its condition keys name.
    pub key_issuers: Vec<Issuer>,
    /// Its principal and its condition keys name different issuers: it
    /// grants nobody.
    pub mismatched: bool,
    pub grants: Vec<Grant>,
    /// An `Allow` that may let web-identity tokens in through something the
    /// model does not evaluate (`NotAction`, `NotPrincipal`, `NotResource`,
    /// a wildcard principal, an unknown operator or key, `Null`, a policy
    /// variable): why. What it grants is not known: not proven.
    pub unknown: Option<String>,
    /// An explicit `Deny` that may apply to `sts:AssumeRoleWithWebIdentity`:
    /// whom it may deny.
    pub deny: Option<Deny>,
}

/// Whom an explicit `Deny` may apply to, as far as it is proven: a token it
/// is not proven disjoint from counts as denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deny {
    /// The EKS issuers its principal names; `None`: any (a wildcard,
    /// `NotPrincipal`, an unresolved or missing principal).
    pub issuers: Option<Vec<Issuer>>,
    /// Its positive string conditions on an issuer's key (`StringEquals`,
    /// `StringLike`, `ForAnyValue:` on them): the issuer, the key's suffix,
    /// whether its values are patterns, the values. A token lacking the key
    /// (another issuer's) or with a value none matches is not denied.
    pub requires: Vec<(Issuer, String, bool, Vec<String>)>,
}

impl Deny {
    /// Whether this deny may apply to a token `g` lets in: not proven
    /// disjoint from it.
    pub fn may_deny(&self, g: &Grant) -> bool {
        if let Some(is) = &self.issuers {
            if !is.iter().any(|i| i.same(&g.issuer)) {
                return false;
            }
        }
        for (issuer, suffix, like, values) in &self.requires {
            if !issuer.same(&g.issuer) {
                // Another issuer's key is in no token of this one.
                return false;
            }
            let granted = match suffix.as_str() {
                SUBJECT => &g.subject,
                AUDIENCE => &g.audience,
                _ => continue,
            };
            // Only a literal granted value can be shown to miss them all.
            if let Some(p) = granted.as_ref().filter(|p| !p.like) {
                let hit = values.iter().any(|v| {
                    if *like {
                        wildcard_match(v, &p.value, false)
                    } else {
                        *v == p.value
                    }
                });
                if !hit {
                    return false;
                }
            }
        }
        true
    }
}

/// IAM's wildcard matching: `*` any run of characters, `?` any one
/// (action names compare case-insensitively, `ci`).
pub fn wildcard_match(pattern: &str, s: &str, ci: bool) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = if ci {
        (
            pattern.to_ascii_lowercase().chars().collect(),
            s.to_ascii_lowercase().chars().collect(),
        )
    } else {
        (pattern.chars().collect(), s.chars().collect())
    };
    let (mut i, mut j) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(st) = star {
            i = st + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}

impl Statement {
    /// Whether it concerns an EKS issuer at all.
    pub fn federates(&self) -> bool {
        !self.principals.is_empty() || !self.key_issuers.is_empty()
    }

    /// Its issuer names, principals and keys.
    pub fn issuers(&self) -> Vec<Issuer> {
        let mut out: Vec<Issuer> = Vec::new();
        for i in self
            .principals
            .iter()
            .map(|(i, _)| i)
            .chain(&self.key_issuers)
        {
            if !out.iter().any(|x| x.same(i)) {
                out.push(i.clone());
            }
        }
        out
    }
}

/// The statements of a policy node (a mapping with `Statement`): the list's
/// items, or the one statement object; `None` when it is no policy.
pub fn statements(policy: &Node) -> Option<(Vec<&Node>, bool)> {
    let s = policy.get(STATEMENT)?;
    match &s.value {
        Value::Seq(items) => Some((items.iter().collect(), true)),
        Value::Map(_) => Some((vec![s], false)),
        _ => None,
    }
}

/// Whether `node` is a policy (a mapping with `Statement`).
pub fn is_policy(node: &Node) -> bool {
    node.get(STATEMENT).is_some()
}

/// Whether a string may hold a JSON policy.
pub fn may_hold_policy(s: &str) -> bool {
    s.contains(STATEMENT) && s.trim_start().starts_with('{')
}

/// The logical id of a CloudFormation role resource, if `node` is one.
pub fn is_cfn_role(node: &Node) -> bool {
    node.str_at(&[CFN_TYPE]) == Some(CFN_ROLE)
}

fn scalars<'a>(n: &'a Node, out: &mut Vec<&'a str>) {
    match &n.value {
        Value::Scalar(s, _) => out.push(s),
        Value::Seq(items) => items.iter().for_each(|v| scalars(v, out)),
        Value::Map(pairs) => {
            for (k, v) in pairs {
                scalars(k, out);
                scalars(v, out);
            }
        }
        Value::Alias(_) => out.push(""),
    }
}

/// A CloudFormation `Ref` (or `!Ref`, read as its parameter's name) to a
/// parameter with a `Default`: that default.
fn resolve_ref<'a>(n: &'a Node, root: Option<&'a Node>) -> Option<&'a str> {
    let name = match &n.value {
        Value::Scalar(s, _) => s.as_str(),
        Value::Map(_) => n.str_at(&[CFN_REF])?,
        _ => return None,
    };
    root?.at(&[CFN_PARAMETERS, name, CFN_DEFAULT])?.as_str()
}

/// A `Fn::Sub` string with each `${Name}` of a parameter with a `Default`
/// replaced by that default (pseudo parameters such as `AWS::AccountId`
/// stay as they are).
fn substitute(s: &str, root: Option<&Node>) -> String {
    let Some(root) = root.filter(|_| s.contains("${")) else {
        return s.to_string();
    };
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let Some(j) = rest[i..].find('}').map(|j| i + j) else {
            break;
        };
        let name = &rest[i + 2..j];
        out.push_str(&rest[..i]);
        match root
            .at(&[CFN_PARAMETERS, name, CFN_DEFAULT])
            .and_then(Node::as_str)
        {
            Some(d) => out.push_str(d),
            None => out.push_str(&rest[i..=j]),
        }
        rest = &rest[j + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether a principal string is a literal that names some provider (an
/// ARN, a host, a URL), as opposed to an unfilled template or reference: its
/// provider host has dots and no part of it is a masked template action.
fn is_literal(s: &str) -> bool {
    let t = s.trim();
    let host = t.rsplit(":oidc-provider/").next().unwrap_or(t);
    !t.is_empty()
        && !t.contains("${")
        && !t.contains("{{")
        && host.contains('.')
        && !host
            .split(['.', '/'])
            .any(|p| p.len() >= 3 && p.bytes().all(|b| b == b'x'))
}

/// Whether a text holds a masked template action (`xxxx` filler) or an
/// unfilled `${...}` / `{{ ... }}`.
fn looks_unfilled(s: &str) -> bool {
    s.contains("${")
        || s.contains("{{")
        || s.split(['.', '/', ':'])
            .any(|p| p.len() >= 3 && p.bytes().all(|b| b == b'x'))
}

/// How a statement's action elements meet `sts:AssumeRoleWithWebIdentity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// They do not take it (`Action` naming others, `NotAction` naming it).
    No,
    /// `Action` names it (or a wildcard that matches it), or there is no
    /// action element (a copy keeps what it says).
    Yes,
    /// They may take it, in a way the model does not read as a grant.
    Unknown(&'static str),
}

fn values(n: &Node) -> Vec<&str> {
    let mut v = Vec::new();
    scalars(n, &mut v);
    v
}

fn action_reach(st: &Node) -> Reach {
    let names = |v: &[&str]| {
        v.iter()
            .any(|s| wildcard_match(s.trim(), WEB_IDENTITY_ACTIONS[0], true))
    };
    let unfilled = |v: &[&str]| v.iter().any(|s| s.trim().is_empty() || looks_unfilled(s));
    match (st.get(ACTION), st.get(NOT_ACTION)) {
        (None, None) => Reach::Yes,
        (Some(a), None) => {
            let v = values(a);
            if names(&v) {
                Reach::Yes
            } else if unfilled(&v) {
                Reach::Unknown("its Action is not literal")
            } else {
                Reach::No
            }
        }
        (None, Some(n)) => {
            let v = values(n);
            if names(&v) {
                Reach::No
            } else if unfilled(&v) {
                Reach::Unknown("its NotAction is not literal")
            } else {
                Reach::Unknown("NotAction: it takes every action but those listed, web identity included, and the model reads grants from Action only")
            }
        }
        (Some(_), Some(_)) => Reach::Unknown("both Action and NotAction"),
    }
}

/// What a statement's `Principal` names.
#[derive(Default)]
struct Principals {
    issuers: Vec<(Issuer, Option<String>)>,
    unresolved: bool,
    others: bool,
    /// It may name every principal: why (a wildcard, `NotPrincipal`).
    any: Option<&'static str>,
}

/// The items of a `Federated` value: one, a list, or (`!Join [delimiter,
/// [parts]]`, its tag dropped) one ARN built from parts.
fn federated_items(v: &Node) -> Vec<&Node> {
    match &v.value {
        Value::Seq(items)
            if matches!(
                items.as_slice(),
                [d, p] if matches!(d.value, Value::Scalar(..)) && matches!(p.value, Value::Seq(_))
            ) =>
        {
            vec![v]
        }
        Value::Seq(items) => items.iter().collect(),
        _ => vec![v],
    }
}

fn principals(st: &Node, root: Option<&Node>, masked: &[(usize, usize)]) -> Principals {
    let mut out = Principals::default();
    if st.get(NOT_PRINCIPAL).is_some() {
        out.any = Some("NotPrincipal: it names every principal but those listed");
    }
    let Some(principal) = st.get(PRINCIPAL) else {
        return out;
    };
    let Value::Map(pairs) = &principal.value else {
        match principal.as_str().map(str::trim) {
            Some(ANY) => out.any = Some("a wildcard principal (*)"),
            Some(s) if !looks_unfilled(s) => {}
            _ => out.unresolved = true,
        }
        out.others = true;
        return out;
    };
    for (k, v) in pairs {
        let mut wild = Vec::new();
        scalars(v, &mut wild);
        if wild.iter().any(|w| w.trim() == ANY)
            && matches!(k.as_str(), Some(AWS_PRINCIPAL | FEDERATED))
        {
            out.any = Some("a wildcard principal (*)");
        }
        if k.as_str() != Some(FEDERATED) {
            out.others = true;
            continue;
        }
        for item in federated_items(v) {
            let in_template = masked
                .iter()
                .any(|&(a, b)| item.start < b && a <= item.start.max(item.end));
            let mut texts: Vec<String> = Vec::new();
            let mut raw = Vec::new();
            scalars(item, &mut raw);
            texts.extend(raw.iter().map(|t| substitute(t, root)));
            if let Some(d) = resolve_ref(item, root) {
                texts = vec![d.to_string()];
            }
            let mut found = false;
            for f in texts.iter().flat_map(|t| find(t)) {
                found = true;
                let account = match &f.form {
                    Form::ProviderArn { account, .. } => Some(account.clone()),
                    _ => None,
                };
                if !out
                    .issuers
                    .iter()
                    .any(|(i, a)| i.same(&f.issuer) && *a == account)
                {
                    out.issuers.push((f.issuer, account));
                }
            }
            let literal = !in_template
                && matches!(item.value, Value::Scalar(..))
                && texts.iter().all(|t| is_literal(t));
            match (found, literal) {
                (true, _) => {}
                (false, true) => out.others = true,
                (false, false) => out.unresolved = true,
            }
        }
    }
    out
}

/// What a statement's `Condition` says.
#[derive(Default)]
struct Conditions {
    key_issuers: Vec<Issuer>,
    key_unresolved: bool,
    subjects: Option<Vec<Pattern>>,
    audiences: Option<Vec<Pattern>>,
    rest: Vec<String>,
    /// An operator, key or value the model does not evaluate: why.
    unknown: Option<String>,
    /// The positive string conditions on one issuer's key (see [`Deny`]).
    requires: Vec<(Issuer, String, bool, Vec<String>)>,
}

impl Conditions {
    fn unknown(&mut self, why: String) {
        self.unknown.get_or_insert(why);
    }

    fn key(&mut self, op: &str, key: &str, v: &Node) {
        let base = op.strip_prefix(FOR_ANY_VALUE).unwrap_or(op);
        let mut values: Vec<&str> = Vec::new();
        scalars(v, &mut values);
        let known_op = matches!(
            base,
            STRING_EQUALS | STRING_LIKE | STRING_NOT_EQUALS | STRING_NOT_LIKE
        );
        if !known_op {
            self.unknown(format!(
                "condition operator {op}, which the model does not evaluate"
            ));
        }
        let variable = values.iter().any(|v| v.contains("${") || v.contains("{{"));
        if variable {
            self.unknown(format!(
                "a policy variable or template in the values of {key}"
            ));
        }
        let found = find(key);
        let mut normal = key.to_string();
        let mut suffix = None;
        for f in &found {
            if !self.key_issuers.iter().any(|i| i.same(&f.issuer)) {
                self.key_issuers.push(f.issuer.clone());
            }
            if let Form::HostPath { key: Some(s) } = &f.form {
                suffix = Some(s.clone());
            }
            normal = normal.replacen(&key[f.start..f.end], "<issuer>", 1);
        }
        if found.is_empty() && looks_unfilled(key) {
            self.key_unresolved = true;
        } else if found.len() != 1 || !matches!(suffix.as_deref(), Some(SUBJECT | AUDIENCE)) {
            self.unknown(format!(
                "condition key {key}, which the model does not evaluate"
            ));
        }
        if let (1, Some(sfx), STRING_EQUALS | STRING_LIKE, false) = (
            found.len(),
            suffix.as_deref(),
            base,
            variable || values.is_empty(),
        ) {
            self.requires.push((
                found[0].issuer.clone(),
                sfx.to_string(),
                base == STRING_LIKE,
                values.iter().map(|v| v.to_string()).collect(),
            ));
        }
        let like = base == STRING_LIKE;
        let pats: Vec<Pattern> = values
            .iter()
            .map(|v| Pattern {
                like: like && (v.contains('*') || v.contains('?')),
                value: v.to_string(),
            })
            .collect();
        let slot = match (base, suffix.as_deref(), found.len()) {
            (STRING_EQUALS | STRING_LIKE, Some(SUBJECT), 1) => Some(&mut self.subjects),
            (STRING_EQUALS | STRING_LIKE, Some(AUDIENCE), 1) => Some(&mut self.audiences),
            _ => None,
        };
        match slot {
            Some(s) if s.is_none() => *s = Some(pats),
            _ => {
                let mut vs: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                vs.sort();
                self.rest.push(format!("{op} {normal} {}", vs.join(",")));
            }
        }
    }
}

fn conditions(st: &Node) -> Conditions {
    let mut c = Conditions::default();
    match st.get(CONDITION).map(|c| &c.value) {
        Some(Value::Map(ops)) => {
            for (op, keys) in ops {
                let op = op.as_str().unwrap_or("");
                match &keys.value {
                    Value::Map(keys) => {
                        for (k, v) in keys {
                            c.key(op, k.as_str().unwrap_or(""), v);
                        }
                    }
                    _ => {
                        c.rest.push(format!("{op} ?"));
                        c.unknown(format!("condition operator {op} without keys"));
                    }
                }
            }
        }
        Some(_) => {
            c.rest.push("?".into());
            c.unknown("a Condition that is not a mapping of operators".into());
        }
        None => {}
    }
    c.rest.sort();
    c
}

/// Every alternative of an optional list (`None`: one, any).
fn alternatives(v: &Option<Vec<Pattern>>) -> Vec<Option<Pattern>> {
    match v {
        Some(v) => v.iter().cloned().map(Some).collect(),
        None => vec![None],
    }
}

/// Reads one statement. `root`: the document, for CloudFormation
/// parameters; `masked`: byte ranges of template actions (a value there is
/// rendered by a chart, not read).
pub fn read_statement(
    st: &Node,
    index: usize,
    root: Option<&Node>,
    masked: &[(usize, usize)],
) -> Statement {
    let p = principals(st, root, masked);
    let c = conditions(st);
    let unresolved = p.unresolved || (c.key_unresolved && (!p.issuers.is_empty() || !p.others));
    let mismatched = !p.issuers.is_empty()
        && c.key_issuers
            .iter()
            .any(|k| !p.issuers.iter().all(|(i, _)| i.same(k)));
    let effect = st.get(EFFECT).map(|e| e.as_str().map(str::trim));
    let is_allow = effect.is_none() || effect == Some(Some(ALLOW));
    let is_deny = effect == Some(Some(DENY));
    let reach = action_reach(st);
    let allows = is_allow && reach == Reach::Yes;
    let may_federate =
        !p.issuers.is_empty() || !c.key_issuers.is_empty() || p.any.is_some() || p.unresolved;
    let unknown = if is_deny || reach == Reach::No || !may_federate {
        None
    } else if !is_allow {
        Some("an Effect that is neither Allow nor Deny".to_string())
    } else if let Reach::Unknown(why) = reach {
        Some(why.to_string())
    } else if let Some(why) = p.any {
        Some(why.to_string())
    } else if st.get(NOT_RESOURCE).is_some() {
        Some("NotResource: it applies to every resource but those listed".to_string())
    } else {
        c.unknown.clone()
    };
    let deny = (is_deny && reach != Reach::No).then(|| Deny {
        issuers: (p.any.is_none() && !p.unresolved && st.get(PRINCIPAL).is_some())
            .then(|| p.issuers.iter().map(|(i, _)| i.clone()).collect()),
        requires: c.requires.clone(),
    });
    let mut grants = Vec::new();
    // Every key must name the principal's issuer (IAM ANDs them).
    for (issuer, account) in p.issuers.iter().filter(|_| allows) {
        if c.key_issuers.iter().any(|k| !k.same(issuer)) {
            continue;
        }
        for s in alternatives(&c.subjects) {
            for a in alternatives(&c.audiences) {
                grants.push(Grant {
                    account: account.clone(),
                    issuer: issuer.clone(),
                    subject: s.clone(),
                    audience: a,
                    rest: c.rest.clone(),
                });
            }
        }
    }
    Statement {
        sid: st.str_at(&[SID]).map(str::to_string),
        index,
        allows,
        principals: p.issuers,
        unresolved,
        others: p.others,
        key_issuers: c.key_issuers,
        mismatched,
        grants,
        unknown,
        deny,
    }
}

/// The grants of `old` that no grant of `new` covers, in order.
pub fn missing<'a>(grants: &'a [Grant], old: &Issuer, new: &Issuer) -> Vec<&'a Grant> {
    grants
        .iter()
        .filter(|g| g.issuer.same(old))
        .filter(|g| {
            !grants.iter().any(|n| {
                n.issuer.same(new)
                    && n.covers(&Grant {
                        issuer: n.issuer.clone(),
                        ..(*g).clone()
                    })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F";
    const B: &str = "0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A";

    fn read(text: &str) -> Vec<Statement> {
        let docs = crate::syntax::yaml::read_yaml_or_json(text).unwrap();
        let (items, _) = statements(&docs[0]).unwrap();
        items
            .iter()
            .enumerate()
            .map(|(i, n)| read_statement(n, i, Some(&docs[0]), &[]))
            .collect()
    }

    fn iss(id: &str) -> Issuer {
        Issuer::parse(&format!("https://oidc.eks.us-east-1.amazonaws.com/id/{id}")).unwrap()
    }

    fn st(principal: &str, key_id: &str, op: &str, sub: &str, effect: &str) -> String {
        format!(
            r#"{{"Effect":"{effect}","Action":"sts:AssumeRoleWithWebIdentity","Principal":{{"Federated":{principal}}},"Condition":{{"{op}":{{"oidc.eks.us-east-1.amazonaws.com/id/{key_id}:sub":{sub}}}}}}}"#
        )
    }

    fn arn(id: &str) -> String {
        format!(
            "\"arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/{id}\""
        )
    }

    #[test]
    fn grants_per_subject_and_deny_never_counts() {
        let p = format!(
            r#"{{"Statement":[{},{},{}]}}"#,
            st(
                &arn(A),
                A,
                "StringEquals",
                r#"["system:serviceaccount:a:a","system:serviceaccount:b:b"]"#,
                "Allow"
            ),
            st(
                &arn(B),
                B,
                "ForAnyValue:StringLike",
                r#""system:serviceaccount:a:a""#,
                "Allow"
            ),
            st(
                &arn(B),
                B,
                "StringEquals",
                r#""system:serviceaccount:b:b""#,
                "Deny"
            ),
        );
        let s = read(&p);
        assert_eq!(s[0].grants.len(), 2);
        assert!(s[2].grants.is_empty());
        let all: Vec<Grant> = s.iter().flat_map(|s| s.grants.clone()).collect();
        let m = missing(&all, &iss(A), &iss(B));
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0].subject.as_ref().unwrap().value,
            "system:serviceaccount:b:b"
        );
    }

    #[test]
    fn a_principal_and_keys_of_different_issuers_grant_nobody() {
        let p = format!(
            r#"{{"Statement":{}}}"#,
            st(
                &format!("[{}]", arn(B)),
                A,
                "StringEquals",
                r#""x""#,
                "Allow"
            )
        );
        let s = read(&p);
        assert!(s[0].mismatched);
        assert!(s[0].grants.is_empty());
    }

    #[test]
    fn a_ref_to_a_parameter_reads_its_default_and_an_unfilled_one_is_unresolved() {
        let t = format!("Parameters:\n  P:\n    Default: {}\nStatement:\n  - Effect: Allow\n    Principal:\n      Federated: !Ref P\n  - Effect: Allow\n    Principal:\n      Federated: !Ref Q\n    Condition:\n      StringEquals:\n        oidc.eks.us-east-1.amazonaws.com/id/{A}:sub: x\n", arn(A));
        let s = read(&t);
        assert_eq!(s[0].principals.len(), 1);
        assert_eq!(s[0].principals[0].1.as_deref(), Some("111122223333"));
        assert!(s[1].unresolved);
    }

    #[test]
    fn iam_wildcards_match_any_run_and_one_character() {
        for (p, t, ci, want) in [
            ("sts:*", "sts:AssumeRoleWithWebIdentity", true, true),
            ("*", "sts:AssumeRoleWithWebIdentity", true, true),
            (
                "STS:assumerolewith*",
                "sts:AssumeRoleWithWebIdentity",
                true,
                true,
            ),
            (
                "sts:AssumeRole?ithWebIdentity",
                "sts:AssumeRoleWithWebIdentity",
                true,
                true,
            ),
            (
                "sts:AssumeRole",
                "sts:AssumeRoleWithWebIdentity",
                true,
                false,
            ),
            (
                "sts:AssumeRole*Saml",
                "sts:AssumeRoleWithWebIdentity",
                true,
                false,
            ),
            (
                "system:serviceaccount:*",
                "system:serviceaccount:a:b",
                false,
                true,
            ),
            (
                "system:serviceaccount:A:*",
                "system:serviceaccount:a:b",
                false,
                false,
            ),
        ] {
            assert_eq!(wildcard_match(p, t, ci), want, "{p} {t}");
        }
    }

    #[test]
    fn a_deny_applies_unless_proven_disjoint_and_notaction_never_grants() {
        let allow = st(
            &arn(B),
            B,
            "StringEquals",
            r#""system:serviceaccount:a:a""#,
            "Allow",
        );
        let deny = |s: &str| format!(r#"{{"Statement":[{allow},{s}]}}"#);
        let grant = read(&deny(&allow))[0].grants[0].clone();
        let may = |s: String| {
            read(&deny(&s))[1]
                .deny
                .as_ref()
                .is_some_and(|d| d.may_deny(&grant))
        };
        let same = st(
            &arn(B),
            B,
            "StringEquals",
            r#""system:serviceaccount:a:a""#,
            "Deny",
        );
        assert!(may(same.clone()));
        assert!(may(same.replace("\"StringEquals\"", "\"StringNotEquals\"")));
        assert!(may(same.replace("sts:AssumeRoleWithWebIdentity", "sts:*")));
        assert!(may(same
            .replace(&arn(B), "\"*\"")
            .replace("{\"Federated\":\"*\"}", "\"*\"")));
        assert!(!may(same.replace("a:a", "b:b")));
        assert!(!may(
            same.replace("sts:AssumeRoleWithWebIdentity", "sts:TagSession")
        ));
        assert!(!may(same.replace("\"Action\"", "\"NotAction\"")));
        // The old issuer's keys are in no token of the new one.
        assert!(!may(st(&arn(B), A, "StringLike", r#""*""#, "Deny")));
        // NotAction naming web identity grants nothing and is no unknown;
        // NotAction of another action may grant: unknown.
        let not = read(&deny(&allow.replace("\"Action\"", "\"NotAction\"")));
        assert!(not[1].grants.is_empty() && not[1].unknown.is_none());
        let other = allow
            .replace("\"Action\"", "\"NotAction\"")
            .replace("sts:AssumeRoleWithWebIdentity", "s3:*");
        let other = read(&deny(&other));
        assert!(other[1].grants.is_empty());
        assert!(other[1]
            .unknown
            .as_deref()
            .unwrap()
            .starts_with("NotAction"));
        // An unknown operator keeps its grant (a copy says the same) but is
        // not proven.
        let null = read(&deny(&allow.replace("StringEquals", "Null")));
        assert!(null[1].unknown.as_deref().unwrap().contains("Null"));
    }
}
