//! Planning a rebind: which bytes of which files change from the old endpoint
//! to the new one, the spliced text of each file, and the proof that the
//! spliced file parses to the same events except for the planned scalars.
//!
//! Nothing here touches the disk; `write` does that once every file is verified.

use crate::endpoint::{self, Endpoint};
use crate::locate::{self, Kind, Occurrence};
use crate::Inventory;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use yaml_rust2::parser::Event;

/// A verified rewrite of one file.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub path: PathBuf,
    pub rel: String,
    pub old: Arc<str>,
    pub new: Arc<str>,
    /// The occurrences that are rewritten, in file order.
    pub changes: Vec<Occurrence>,
}

impl FilePlan {
    /// The same file planned back to its old bytes (to undo a write).
    pub fn reversed(&self) -> FilePlan {
        FilePlan {
            old: self.new.clone(),
            new: self.old.clone(),
            ..self.clone()
        }
    }
}

/// An occurrence of the old endpoint that is reported but not rewritten.
#[derive(Debug, Clone)]
pub struct Mention {
    pub rel: String,
    pub occurrence: Occurrence,
}

/// A file that holds the old endpoint but cannot be rewritten safely.
#[derive(Debug, Clone)]
pub struct PlanError {
    pub rel: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.rel, self.line, self.column, self.message
        )
    }
}

/// Everything `diff` shows and `apply` writes.
#[derive(Debug)]
pub struct Plan {
    pub from: Endpoint,
    pub to: Endpoint,
    pub files: Vec<FilePlan>,
    /// Comments, text files and template actions that mention the old endpoint.
    pub mentions: Vec<Mention>,
    pub errors: Vec<PlanError>,
}

impl Plan {
    pub fn change_count(&self) -> usize {
        self.files.iter().map(|f| f.changes.len()).sum()
    }
}

/// Whether an occurrence is the endpoint `from` (see `endpoint::Found::matches`).
pub fn matches(o: &Occurrence, from: &Endpoint) -> bool {
    o.found.matches(from)
}

/// Plans the rebind of every occurrence of `from` to `to` in the inventory.
pub fn plan(inv: &Inventory, from: &Endpoint, to: &Endpoint) -> Plan {
    let mut plan = Plan {
        from: from.clone(),
        to: to.clone(),
        files: Vec::new(),
        mentions: Vec::new(),
        errors: Vec::new(),
    };
    for src in &inv.sources {
        let rel = &src.entry.rel;
        let located = match &src.located {
            Ok(l) => l,
            Err(e) => {
                let n = e.occurrences.iter().filter(|o| matches(o, from)).count();
                if n > 0 {
                    plan.errors.push(PlanError {
                        rel: rel.clone(),
                        line: e.line,
                        column: e.column,
                        message: format!(
                            "not valid YAML ({}); it holds {n} occurrence(s) of {}, so nothing is rewritten until it is fixed or excluded",
                            e.message,
                            from.url()
                        ),
                    });
                }
                continue;
            }
        };
        let mut changes = Vec::new();
        for o in located.occurrences.iter().filter(|o| matches(o, from)) {
            if o.kind == Kind::Value {
                changes.push(o.clone());
            } else {
                plan.mentions.push(Mention {
                    rel: rel.clone(),
                    occurrence: o.clone(),
                });
            }
        }
        if changes.is_empty() {
            continue;
        }
        let new = splice(&src.text, &changes, to);
        match verify(located, &new, &changes, from, to) {
            Ok(()) => plan.files.push(FilePlan {
                path: src.entry.path.clone(),
                rel: rel.clone(),
                old: Arc::clone(&src.text),
                new: new.into(),
                changes,
            }),
            Err(message) => plan.errors.push(PlanError {
                rel: rel.clone(),
                line: changes[0].line,
                column: changes[0].column,
                message,
            }),
        }
    }
    plan
}

/// Replaces each change's scheme-and-authority (or bare host) bytes.
pub fn splice(text: &str, changes: &[Occurrence], to: &Endpoint) -> String {
    let mut out = String::with_capacity(text.len() + changes.len() * 8);
    let mut last = 0;
    for o in changes {
        out.push_str(&text[last..o.found.start]);
        out.push_str(&o.found.replacement(to));
        last = o.found.replace_end;
    }
    out.push_str(&text[last..]);
    out
}

/// Parses the spliced text again and checks that every planned scalar now
/// reads as the old value with `from` rebound to `to`, and that every other
/// event (scalars, styles, anchors, tags, structure) is unchanged.
pub fn verify(
    old: &locate::Located,
    new_text: &str,
    changes: &[Occurrence],
    from: &Endpoint,
    to: &Endpoint,
) -> Result<(), String> {
    let planned: BTreeMap<usize, &Occurrence> = changes
        .iter()
        .filter_map(|o| o.event.map(|e| (e, o)))
        .collect();
    // Every scalar that may hold an endpoint is compared whole; the rest by digest.
    let keep = old.held.keys().copied().collect();
    let (count, digest, new_held) = locate::digest_of(new_text, old.masked, &keep)
        .map_err(|e| format!("the rewritten file no longer parses ({e}); nothing written"))?;
    if count != old.event_count {
        return Err(format!(
            "the rewritten file has {count} parser events instead of {}; nothing written",
            old.event_count
        ));
    }
    if digest != old.digest {
        return Err(
            "verification failed: something besides the planned scalars changed; nothing written"
                .into(),
        );
    }
    for (i, before) in &old.held {
        let expected = match (planned.get(i), before) {
            (Some(_), Event::Scalar(v, style, anchor, tag)) => Event::Scalar(
                endpoint::rewrite_value(v, from, to),
                *style,
                *anchor,
                tag.clone(),
            ),
            _ => before.clone(),
        };
        if new_held.get(i) != Some(&expected) {
            let at = planned
                .get(i)
                .map(|o| format!(" at {}:{}", o.line, o.column))
                .unwrap_or_default();
            return Err(format!(
                "verification failed{at}: expected {expected:?} after the rewrite, found {:?}; nothing written",
                new_held.get(i)
            ));
        }
    }
    Ok(())
}
