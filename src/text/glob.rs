//! The three glob dialects ArgoCD matches repository paths with, each as
//! its library reads a pattern:
//!
//! - [`gobwas`]: `github.com/gobwas/glob` compiled with no separators
//!   (argo-cd `util/glob.Match`), a directory source's `include` and
//!   `exclude`: `*` and `**` are any characters, `/` included; `?` is one
//!   character; a class is either a list `[abc]` or one range `[a-z]`, and
//!   only `!` negates it (`^` is a literal character); `{a,b}`
//!   alternatives; `\` escapes. A pattern that does not compile (`[]a]`,
//!   `[a-z0-9]`, an unclosed class) matches nothing, as `glob.Match`
//!   returns false.
//! - [`go_path`]: Go's `path.Match`, a git directories generator's `path`
//!   entries (argo-cd `applicationset/generators/git.go` `filterApps`): `*`
//!   and `?` stay in one folder (`**` is `*`), `^` negates a class, no
//!   alternatives; a malformed pattern is an error (the entry matches
//!   nothing).
//! - [`git_pathspec`]: `git ls-files -- <pattern>`, a git files
//!   generator's `path` with the default globbing (argo-cd
//!   `util/git/client.go` `LsFiles`): a literal pattern names a file or a
//!   folder holding it; else git's wildmatch without `WM_PATHNAME` (`*`
//!   and `?` cross `/`, `!` and `^` negate a class, no alternatives).

/// A pattern its matcher refuses (malformed), or one outside what is
/// modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadPattern;

/// One node of a gobwas pattern.
#[derive(Debug, Clone)]
enum Node {
    Text(Vec<char>),
    /// `*`: any characters but a separator.
    Any,
    /// `**`: any characters, separators included.
    Super,
    /// `?`: one character, not a separator.
    Single,
    List(Vec<char>, bool),
    Range(char, char, bool),
    AnyOf(Vec<Vec<Node>>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Text(String),
    Any,
    Super,
    Single,
    RangeOpen,
    Not,
    Lo(char),
    Hi(char),
    RangeClose,
    TermsOpen,
    Sep,
    TermsClose,
}

/// gobwas/glob's lexer (`syntax/lexer/lexer.go`), all at once; `Err` when
/// it reports an error.
fn gobwas_tokens(pattern: &str) -> Result<Vec<Tok>, BadPattern> {
    let d: Vec<char> = pattern.chars().collect();
    let mut pos = 0usize;
    let mut out = Vec::new();
    let mut terms = 0usize;
    let fetch_text = |pos: &mut usize, breakers: &[char]| -> Option<String> {
        let mut data = String::new();
        let mut escaped = false;
        while *pos < d.len() {
            let r = d[*pos];
            *pos += 1;
            if !escaped {
                if r == '\\' {
                    escaped = true;
                    continue;
                }
                if breakers.contains(&r) {
                    *pos -= 1;
                    break;
                }
            }
            escaped = false;
            data.push(r);
        }
        (!data.is_empty()).then_some(data)
    };
    while pos < d.len() {
        let r = d[pos];
        pos += 1;
        match r {
            '{' => {
                terms += 1;
                out.push(Tok::TermsOpen);
            }
            ',' if terms > 0 => out.push(Tok::Sep),
            '}' if terms > 0 => {
                out.push(Tok::TermsClose);
                terms -= 1;
            }
            '[' => {
                out.push(Tok::RangeOpen);
                // fetchRange
                let (mut want_hi, mut want_close, mut seen_not) = (false, false, false);
                loop {
                    let Some(&r) = d.get(pos) else {
                        return Err(BadPattern);
                    };
                    pos += 1;
                    if want_close {
                        if r != ']' {
                            return Err(BadPattern);
                        }
                        out.push(Tok::RangeClose);
                        break;
                    }
                    if want_hi {
                        out.push(Tok::Hi(r));
                        want_close = true;
                        continue;
                    }
                    if !seen_not && r == '!' {
                        out.push(Tok::Not);
                        seen_not = true;
                        continue;
                    }
                    if d.get(pos) == Some(&'-') {
                        pos += 1;
                        out.push(Tok::Lo(r));
                        want_hi = true;
                        continue;
                    }
                    pos -= 1;
                    if let Some(t) = fetch_text(&mut pos, &[']']) {
                        out.push(Tok::Text(t));
                    }
                    want_close = true;
                }
            }
            '?' => out.push(Tok::Single),
            '*' if d.get(pos) == Some(&'*') => {
                pos += 1;
                out.push(Tok::Super);
            }
            '*' => out.push(Tok::Any),
            _ => {
                pos -= 1;
                let breakers: &[char] = if terms > 0 {
                    &['?', '*', '[', '{', '}', ',']
                } else {
                    &['?', '*', '[', '{']
                };
                if let Some(t) = fetch_text(&mut pos, breakers) {
                    out.push(Tok::Text(t));
                }
            }
        }
    }
    Ok(out)
}

/// gobwas/glob's parser (`syntax/ast/parser.go`).
fn gobwas_parse(toks: Vec<Tok>) -> Result<Vec<Node>, BadPattern> {
    // A stack of open alternatives: each the finished alternatives and
    // the one being read.
    let mut stack: Vec<(Vec<Vec<Node>>, Vec<Node>)> = vec![(Vec::new(), Vec::new())];
    let mut it = toks.into_iter();
    while let Some(t) = it.next() {
        match t {
            Tok::Text(s) => stack
                .last_mut()
                .unwrap()
                .1
                .push(Node::Text(s.chars().collect())),
            Tok::Any => stack.last_mut().unwrap().1.push(Node::Any),
            Tok::Super => stack.last_mut().unwrap().1.push(Node::Super),
            Tok::Single => stack.last_mut().unwrap().1.push(Node::Single),
            Tok::TermsOpen => stack.push((Vec::new(), Vec::new())),
            Tok::Sep => {
                let top = stack.last_mut().unwrap();
                let cur = std::mem::take(&mut top.1);
                top.0.push(cur);
            }
            Tok::TermsClose => {
                let (mut alts, cur) = stack.pop().unwrap();
                alts.push(cur);
                stack.last_mut().unwrap().1.push(Node::AnyOf(alts));
            }
            Tok::RangeOpen => {
                let (mut not, mut lo, mut hi, mut chars) = (false, None, None, String::new());
                loop {
                    match it.next().ok_or(BadPattern)? {
                        Tok::Not => not = true,
                        Tok::Lo(c) => lo = Some(c),
                        Tok::Hi(c) => {
                            if lo.is_some_and(|l| c < l) {
                                return Err(BadPattern);
                            }
                            hi = Some(c);
                        }
                        Tok::Text(s) => chars = s,
                        Tok::RangeClose => break,
                        _ => return Err(BadPattern),
                    }
                }
                let node = match (lo, hi, chars.is_empty()) {
                    (Some(l), Some(h), true) if l != '\0' && h != '\0' => Node::Range(l, h, not),
                    (None, None, false) => Node::List(chars.chars().collect(), not),
                    _ => return Err(BadPattern),
                };
                stack.last_mut().unwrap().1.push(node);
            }
            Tok::Lo(_) | Tok::Hi(_) | Tok::Not | Tok::RangeClose => return Err(BadPattern),
        }
    }
    // An alternative left open at the end is closed by the end (the
    // parser returns at EOF whatever is open).
    while stack.len() > 1 {
        let (mut alts, cur) = stack.pop().unwrap();
        alts.push(cur);
        stack.last_mut().unwrap().1.push(Node::AnyOf(alts));
    }
    Ok(stack.pop().unwrap().1)
}

fn gobwas_seq(nodes: &[Node], text: &[char], seps: &[char], k: &dyn Fn(&[char]) -> bool) -> bool {
    let Some((first, rest)) = nodes.split_first() else {
        return k(text);
    };
    match first {
        Node::Text(t) => text.starts_with(t) && gobwas_seq(rest, &text[t.len()..], seps, k),
        Node::Any => {
            // Up to the first separator.
            let end = text
                .iter()
                .position(|c| seps.contains(c))
                .unwrap_or(text.len());
            (0..=end).any(|i| gobwas_seq(rest, &text[i..], seps, k))
        }
        Node::Super => (0..=text.len()).any(|i| gobwas_seq(rest, &text[i..], seps, k)),
        Node::Single => {
            !text.is_empty() && !seps.contains(&text[0]) && gobwas_seq(rest, &text[1..], seps, k)
        }
        // A class matches a separator too (gobwas `match.List`,
        // `match.Range` know no separators).
        Node::List(cs, not) => {
            !text.is_empty()
                && cs.contains(&text[0]) != *not
                && gobwas_seq(rest, &text[1..], seps, k)
        }
        Node::Range(lo, hi, not) => {
            !text.is_empty()
                && (*lo <= text[0] && text[0] <= *hi) != *not
                && gobwas_seq(rest, &text[1..], seps, k)
        }
        Node::AnyOf(alts) => alts
            .iter()
            .any(|a| gobwas_seq(a, text, seps, &|t: &[char]| gobwas_seq(rest, t, seps, k))),
    }
}

/// argo-cd `util/glob.Match(pattern, text)`: gobwas/glob with no
/// separators (see the module's notes); false when it does not compile.
pub fn gobwas(pattern: &str, text: &str) -> bool {
    gobwas_with(pattern, text, &[]).unwrap_or(false)
}

/// argo-cd `util/glob.Match(pattern, text, separators...)`: gobwas/glob
/// compiled with `seps` (`glob.Compile(pattern, separators...)`): `*` and
/// `?` do not match a separator, `**` does, and so does a class (`[!x]`
/// matches `/`); `{a,b}` alternatives. `Err` when the pattern does not
/// compile (`glob.Match` then returns false).
pub fn gobwas_with(pattern: &str, text: &str, seps: &[char]) -> Result<bool, BadPattern> {
    let nodes = gobwas_tokens(pattern).and_then(gobwas_parse)?;
    let text: Vec<char> = text.chars().collect();
    Ok(gobwas_seq(&nodes, &text, seps, &|t: &[char]| t.is_empty()))
}

/// Go `path.Match` (scanChunk, matchChunk, getEsc): `Err` for a malformed
/// pattern.
pub fn go_path(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let mut pattern: Vec<char> = pattern.chars().collect();
    let mut name: Vec<char> = name.chars().collect();
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(&pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            return Ok(!name.contains(&'/'));
        }
        let (t, ok) = match_chunk(&chunk, &name)?;
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if star {
            let mut i = 0;
            while i < name.len() && name[i] != '/' {
                let (t, ok) = match_chunk(&chunk, &name[i + 1..])?;
                if ok {
                    if pattern.is_empty() && !t.is_empty() {
                        i += 1;
                        continue;
                    }
                    name = t;
                    continue 'pattern;
                }
                i += 1;
            }
        }
        while !pattern.is_empty() {
            let (_, chunk, rest) = scan_chunk(&pattern);
            pattern = rest;
            match_chunk(&chunk, &[])?;
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

fn scan_chunk(p: &[char]) -> (bool, Vec<char>, Vec<char>) {
    let mut p = p;
    let mut star = false;
    while p.first() == Some(&'*') {
        p = &p[1..];
        star = true;
    }
    let mut inrange = false;
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' if i + 1 < p.len() => i += 1,
            '[' => inrange = true,
            ']' => inrange = false,
            '*' if !inrange => break,
            _ => {}
        }
        i += 1;
    }
    (star, p[..i].to_vec(), p[i..].to_vec())
}

fn get_esc(chunk: &[char]) -> Result<(char, &[char]), BadPattern> {
    let mut chunk = chunk;
    match chunk.first() {
        None | Some('-') | Some(']') => return Err(BadPattern),
        Some('\\') => {
            chunk = &chunk[1..];
            if chunk.is_empty() {
                return Err(BadPattern);
            }
        }
        _ => {}
    }
    let r = chunk[0];
    let rest = &chunk[1..];
    if rest.is_empty() {
        return Err(BadPattern);
    }
    Ok((r, rest))
}

fn match_chunk(chunk: &[char], s: &[char]) -> Result<(Vec<char>, bool), BadPattern> {
    let mut chunk = chunk;
    let mut s = s;
    let mut failed = false;
    while !chunk.is_empty() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match chunk[0] {
            '[' => {
                let mut r = '\0';
                if !failed {
                    r = s[0];
                    s = &s[1..];
                }
                chunk = &chunk[1..];
                let mut negated = false;
                if chunk.first() == Some(&'^') {
                    negated = true;
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut nrange = 0;
                loop {
                    if chunk.first() == Some(&']') && nrange > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let (lo, rest) = get_esc(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if chunk[0] == '-' {
                        let (h, rest) = get_esc(&chunk[1..])?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    nrange += 1;
                }
                if matched == negated {
                    failed = true;
                }
            }
            '?' => {
                if !failed {
                    if s[0] == '/' {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
            c => {
                let c = if c == '\\' {
                    chunk = &chunk[1..];
                    *chunk.first().ok_or(BadPattern)?
                } else {
                    c
                };
                if !failed {
                    if c != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    if failed {
        return Ok((Vec::new(), false));
    }
    Ok((s.to_vec(), true))
}

/// `git ls-files -- <pattern>` (git's `match_pathspec_item` without
/// magic): the pattern names the file, or a folder holding it, or matches
/// it by wildmatch without `WM_PATHNAME`. `Err` for what is not modelled
/// (pathspec magic `:(...)`, a POSIX class `[:alpha:]`).
pub fn git_pathspec(pattern: &str, file: &str) -> Result<bool, BadPattern> {
    if pattern.starts_with(':') {
        return Err(BadPattern);
    }
    let literal = pattern.trim_end_matches('/');
    if file == literal || (file.starts_with(literal) && file[literal.len()..].starts_with('/')) {
        return Ok(true);
    }
    if !pattern.contains(['*', '?', '[', '\\']) {
        return Ok(false);
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = file.chars().collect();
    wildmatch(&p, &t)
}

/// git's `dowild` with no flags: `*` (and `**`) any characters, `/`
/// included; `?` one character; `[...]` negated by `!` or `^`, `]` first
/// is literal, ranges; `\` escapes.
fn wildmatch(p: &[char], t: &[char]) -> Result<bool, BadPattern> {
    let Some((&c, rest)) = p.split_first() else {
        return Ok(t.is_empty());
    };
    match c {
        '*' => {
            let mut rest = rest;
            while rest.first() == Some(&'*') {
                rest = &rest[1..];
            }
            if rest.is_empty() {
                return Ok(true);
            }
            for i in 0..=t.len() {
                if wildmatch(rest, &t[i..])? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        '?' => Ok(!t.is_empty() && wildmatch(rest, &t[1..])?),
        '\\' => {
            let (&e, rest) = rest.split_first().ok_or(BadPattern)?;
            Ok(t.first() == Some(&e) && wildmatch(rest, &t[1..])?)
        }
        '[' => {
            let mut q = rest;
            let negated = matches!(q.first(), Some('!') | Some('^'));
            if negated {
                q = &q[1..];
            }
            let ch = t.first().copied();
            let mut matched = false;
            let mut first = true;
            let mut prev: Option<char> = None;
            loop {
                let (&pc, after) = q.split_first().ok_or(BadPattern)?;
                if pc == ']' && !first {
                    q = after;
                    break;
                }
                first = false;
                if pc == '[' && after.first() == Some(&':') {
                    return Err(BadPattern);
                }
                let (pc, after) = if pc == '\\' {
                    let (&e, a) = after.split_first().ok_or(BadPattern)?;
                    (e, a)
                } else {
                    (pc, after)
                };
                if pc == '-' && prev.is_some() && after.first().is_some_and(|&n| n != ']') {
                    let (&hi, a) = after.split_first().ok_or(BadPattern)?;
                    let (hi, a) = if hi == '\\' {
                        let (&e, a2) = a.split_first().ok_or(BadPattern)?;
                        (e, a2)
                    } else {
                        (hi, a)
                    };
                    if ch.is_some_and(|c| prev.unwrap() <= c && c <= hi) {
                        matched = true;
                    }
                    prev = None;
                    q = a;
                    continue;
                }
                if ch == Some(pc) {
                    matched = true;
                }
                prev = Some(pc);
                q = after;
            }
            Ok(ch.is_some() && matched != negated && wildmatch(q, &t[1..])?)
        }
        c => Ok(t.first() == Some(&c) && wildmatch(rest, &t[1..])?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gobwas_reads_patterns_as_its_lexer_does() {
        assert!(gobwas("*.yaml", "a.yaml"));
        assert!(gobwas("*.yaml", "sub/a.yaml"));
        assert!(gobwas("{*.yml,*.yaml}", "a.yml"));
        assert!(!gobwas("{*.yml,*.yaml}", "a.json"));
        assert!(gobwas("app-[0-9].yaml", "app-7.yaml"));
        assert!(!gobwas("app-[!0-9].yaml", "app-7.yaml"));
        // `^` is a literal character of a list, not a negation.
        assert!(gobwas("[^a]*.yaml", "a.yaml"));
        assert!(gobwas("[^a]*.yaml", "^x.yaml"));
        assert!(!gobwas("[^b]*.yaml", "a.yaml"));
        // `**` is any characters: `**/*.yaml` needs a `/`.
        assert!(!gobwas("**/*.yaml", "a.yaml"));
        assert!(gobwas("**/*.yaml", "sub/a.yaml"));
        // Patterns that do not compile match nothing.
        assert!(!gobwas("[]a]*.yaml", "a.yaml"));
        assert!(!gobwas("[]a]*.yaml", "]a.yaml"));
        assert!(!gobwas("[a-z0-9].yaml", "a.yaml"));
        assert!(!gobwas("[", "["));
        assert!(!gobwas("[!]", "!"));
        // `]` and `}` outside a class or alternatives are themselves.
        assert!(gobwas("a]}.yaml", "a]}.yaml"));
        assert!(gobwas("a\\*.yaml", "a*.yaml"));
        assert!(!gobwas("a\\*.yaml", "ab.yaml"));
        assert!(gobwas("{a,{b,c}}.yaml", "c.yaml"));
        assert!(gobwas("a?b", "a/b"));
    }

    /// With a separator (`glob.Compile(pattern, '/')`): `*` and `?` stop
    /// at it, `**` and a class do not; `***` is `**` then `*`.
    #[test]
    fn gobwas_with_a_separator() {
        let m = |p: &str, t: &str| gobwas_with(p, t, &['/']).unwrap();
        assert!(m("a/*", "a/b"));
        assert!(!m("a/*", "a/b/c"));
        assert!(m("a/**", "a/b/c"));
        assert!(m("a**", "a/b/c"));
        assert!(!m("a?b", "a/b"));
        assert!(m("a[!x]b", "a/b"));
        assert!(m("a[-/]b", "a/b"));
        assert!(m("{a,b/c}/*", "b/c/d"));
        assert!(!m("{a,b}*", "a/d"));
        assert!(m("a***", "a/b/c"));
        assert!(gobwas_with("[a-z0-9]", "a", &['/']).is_err());
        // Without one, `*` crosses it.
        assert!(gobwas_with("a/*", "a/b/c", &[]).unwrap());
    }

    #[test]
    fn go_path_match_keeps_stars_in_one_folder() {
        assert_eq!(go_path("apps/*", "apps/team1"), Ok(true));
        assert_eq!(go_path("apps/**", "apps/team1"), Ok(true));
        assert_eq!(go_path("apps/**", "apps/team1/sub"), Ok(false));
        assert_eq!(go_path("apps/*/*", "apps/team1/sub"), Ok(true));
        assert_eq!(go_path("app-[^0-9]", "app-x"), Ok(true));
        assert_eq!(go_path("app-[^0-9]", "app-1"), Ok(false));
        assert_eq!(go_path("{a,b}", "a"), Ok(false));
        assert_eq!(go_path("{a,b}", "{a,b}"), Ok(true));
        assert_eq!(go_path("[]a]", "a"), Err(BadPattern));
        assert_eq!(go_path("a?c", "a/c"), Ok(false));
        assert_eq!(go_path("x[", "y"), Err(BadPattern));
    }

    #[test]
    fn git_pathspec_is_literal_prefix_or_wildmatch() {
        assert_eq!(git_pathspec("apps", "apps/a.json"), Ok(true));
        assert_eq!(git_pathspec("apps/a.json", "apps/a.json"), Ok(true));
        assert_eq!(git_pathspec("app", "apps/a.json"), Ok(false));
        assert_eq!(git_pathspec("apps/*.json", "apps/x/a.json"), Ok(true));
        assert_eq!(git_pathspec("apps/**/c.json", "apps/c.json"), Ok(false));
        assert_eq!(git_pathspec("[^b]*.json", "a.json"), Ok(true));
        assert_eq!(git_pathspec("[^a]*.json", "a.json"), Ok(false));
        assert_eq!(git_pathspec("{a,b}.json", "a.json"), Ok(false));
        assert_eq!(git_pathspec("[]a]*.json", "]x.json"), Ok(true));
        assert_eq!(git_pathspec("[[:alpha:]].json", "a.json"), Err(BadPattern));
    }
}
