//! Applying a unified diff with `patch -p1` semantics and rebind's line model
//! (`\n`, `\r\n`, a lone `\r`): what `diff` prints must turn the old text into
//! exactly what `apply` writes. Shared by tests/diff_apply.rs and tests/props.rs.
#![allow(dead_code)]

/// Splits text into lines, each with its terminator (`\n`, `\r\n`, lone `\r`).
fn lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let end = match b[i] {
            b'\r' if b.get(i + 1) == Some(&b'\n') => i + 2,
            b'\r' | b'\n' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push(&text[start..end]);
        start = end;
        i = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Reads a `---`/`+++` file name: git's C quoting undone, a trailing tab
/// dropped, and (`-p1`) the first path component stripped.
fn header_path(line: &str, tag: &str) -> String {
    let rest = line
        .strip_prefix(tag)
        .unwrap_or_else(|| panic!("expected {tag:?}, got {line:?}"));
    let rest = rest.trim_end_matches('\n').trim_end_matches('\t');
    let name = if let Some(q) = rest.strip_prefix('"') {
        let q = q.strip_suffix('"').expect("closing quote");
        let mut out = String::new();
        let mut it = q.chars().peekable();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match it.next().expect("escape") {
                'a' => out.push('\x07'),
                'b' => out.push('\x08'),
                't' => out.push('\t'),
                'n' => out.push('\n'),
                'v' => out.push('\x0b'),
                'f' => out.push('\x0c'),
                'r' => out.push('\r'),
                d @ '0'..='7' => {
                    let mut n = d.to_digit(8).unwrap();
                    for _ in 0..2 {
                        n = n * 8 + it.next().and_then(|c| c.to_digit(8)).expect("octal");
                    }
                    out.push(char::from_u32(n).unwrap());
                }
                c => out.push(c),
            }
        }
        out
    } else {
        rest.to_string()
    };
    let (_, stripped) = name.split_once('/').expect("a/ or b/ prefix");
    stripped.to_string()
}

fn range(s: &str) -> (usize, usize) {
    match s.split_once(',') {
        Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
        None => (s.parse().unwrap(), 1),
    }
}

/// Applies a unified diff of one file to `old`; returns the file name and the
/// new text, or an error when a context or removed line does not match.
pub fn apply(patch: &str, old: &str) -> Result<(String, String), String> {
    if patch.is_empty() {
        return Ok((String::new(), old.to_string()));
    }
    let mut pl = lines(patch);
    // "\ No newline at end of file": the line before it has no terminator.
    let mut i = 0;
    while i < pl.len() {
        if pl[i].starts_with("\\ No newline at end of file") {
            let prev = pl[i - 1];
            pl[i - 1] = prev
                .strip_suffix('\n')
                .ok_or("hint after an unterminated line")?;
            pl.remove(i);
        } else {
            i += 1;
        }
    }
    // The file name may hold a line break only inside quotes, so headers are
    // whole lines of the patch.
    let name = header_path(pl[0], "--- ");
    let name_b = header_path(pl[1], "+++ ");
    if name != name_b {
        return Err(format!("names differ: {name:?} {name_b:?}"));
    }
    let src = lines(old);
    let mut out = String::new();
    let mut pos = 0; // next old line (0-based)
    let mut k = 2;
    while k < pl.len() {
        let h = pl[k].trim_end();
        let inner = h
            .strip_prefix("@@ -")
            .and_then(|h| h.strip_suffix(" @@"))
            .ok_or_else(|| format!("expected a hunk header, got {h:?}"))?;
        let (o, n) = inner.split_once(" +").ok_or("bad header")?;
        let ((os, ol), (_, nl)) = (range(o), range(n));
        let first = if ol == 0 { os } else { os - 1 };
        if first < pos {
            return Err("hunks overlap".into());
        }
        for l in &src[pos..first] {
            out.push_str(l);
        }
        pos = first;
        k += 1;
        let (mut seen_old, mut seen_new) = (0, 0);
        while k < pl.len() && (seen_old < ol || seen_new < nl) {
            let l = pl[k];
            let (tag, body) = l.split_at(1);
            match tag {
                " " | "-" => {
                    if src.get(pos) != Some(&body) {
                        return Err(format!(
                            "line {}: expected {body:?}, found {:?}",
                            pos + 1,
                            src.get(pos)
                        ));
                    }
                    pos += 1;
                    seen_old += 1;
                    if tag == " " {
                        out.push_str(body);
                        seen_new += 1;
                    }
                }
                "+" => {
                    out.push_str(body);
                    seen_new += 1;
                }
                _ => return Err(format!("bad hunk line {l:?}")),
            }
            k += 1;
        }
        if (seen_old, seen_new) != (ol, nl) {
            return Err(format!(
                "hunk counts {ol},{nl} but saw {seen_old},{seen_new}"
            ));
        }
    }
    for l in &src[pos..] {
        out.push_str(l);
    }
    Ok((name, out))
}
