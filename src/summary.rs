//! Counting what was found: per-endpoint tallies (values, comments, text,
//! template actions, the files that hold them, the cluster names written next
//! to them) and the tier table of Applications by destination.
//!
//! A [`Summary`] takes sources one at a time and keeps only counts and names,
//! so a scan streams its occurrences out and its memory stays flat.

use crate::endpoint::{self, Shape};
use crate::locate::Kind;
use crate::Source;
use std::collections::BTreeMap;

/// Per-endpoint counts for the scan summary and `init`.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// `https://host[:port]` as first written.
    pub display: String,
    pub shape: Option<Shape>,
    /// Files holding the endpoint in a value.
    pub value_files: usize,
    pub values: usize,
    pub comments: usize,
    pub texts: usize,
    pub templates: usize,
    /// Cluster names the manifests give next to this endpoint, with counts.
    pub hints: BTreeMap<String, usize>,
    /// The last source counted in `value_files` (sources come one at a time).
    last_file: Option<usize>,
}

impl Tally {
    /// The name the manifests give this endpoint most often.
    pub fn best_hint(&self) -> Option<&str> {
        self.hints
            .iter()
            .max_by_key(|(name, n)| (**n, std::cmp::Reverse(name.as_str())))
            .map(|(name, _)| name.as_str())
    }

    /// What the endpoint is to the repository.
    pub fn role(&self) -> &'static str {
        match self.shape {
            Some(Shape::InCluster) => "in-cluster",
            _ if self.values > 0 => "workload",
            _ => "mentioned only",
        }
    }

    /// Written in a value somewhere and not in-cluster: a `--from` candidate.
    pub fn is_workload(&self) -> bool {
        self.values > 0 && self.shape != Some(Shape::InCluster)
    }
}

/// Applications and ApplicationSet templates by destination.
#[derive(Debug, Default, Clone)]
pub struct Tiers {
    /// Tier 1: a hard-coded server URL (hub push).
    pub hub: Vec<String>,
    /// Tier 3: the in-cluster API server.
    pub in_cluster: Vec<String>,
    /// `destination.name` only.
    pub by_name: Vec<String>,
}

/// Tallies and tiers, fed one source at a time.
#[derive(Debug, Default)]
pub struct Summary {
    tallies: BTreeMap<String, Tally>,
    pub tiers: Tiers,
    sources: usize,
}

impl Summary {
    /// Counts one source's occurrences and destinations.
    pub fn add(&mut self, src: &Source) {
        let n = self.sources;
        self.sources += 1;
        for o in src.occurrences() {
            let e = self.tallies.entry(o.found.key()).or_default();
            if e.display.is_empty() {
                e.display = if o.found.bare {
                    format!("https://{}", o.found.host)
                } else {
                    o.endpoint_url().to_string()
                };
            }
            e.shape = Some(o.shape());
            match o.kind {
                Kind::Value => {
                    e.values += 1;
                    if e.last_file != Some(n) {
                        e.last_file = Some(n);
                        e.value_files += 1;
                    }
                    if let Some(h) = &o.cluster_hint {
                        *e.hints.entry(h.clone()).or_default() += 1;
                    }
                }
                Kind::Comment => e.comments += 1,
                Kind::Text => e.texts += 1,
                Kind::Template => e.templates += 1,
            }
        }
        let Ok(l) = &src.located else { return };
        for d in &l.destinations {
            let in_cluster_server = d
                .server
                .as_deref()
                .and_then(|s| {
                    s.get(..8)
                        .filter(|p| p.eq_ignore_ascii_case("https://"))
                        .map(|_| &s[8..])
                })
                .is_some_and(|rest| {
                    let host = rest.split(['/', ':', '?']).next().unwrap_or("");
                    endpoint::shape(host) == Shape::InCluster
                });
            if in_cluster_server || d.name.as_deref() == Some("in-cluster") {
                self.tiers.in_cluster.push(d.resource.clone());
            } else if d.server.is_some() {
                self.tiers.hub.push(d.resource.clone());
            } else {
                self.tiers.by_name.push(d.resource.clone());
            }
        }
    }

    /// Every endpoint, by key.
    pub fn tallies(&self) -> impl Iterator<Item = &Tally> {
        self.tallies.values()
    }

    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// The workload endpoints (see [`Tally::is_workload`]).
    pub fn workload(&self) -> Vec<&Tally> {
        self.tallies().filter(|t| t.is_workload()).collect()
    }

    /// The summary of a whole inventory.
    pub fn of(inv: &crate::Inventory) -> Summary {
        let mut s = Summary::default();
        for src in &inv.sources {
            s.add(src);
        }
        s
    }
}
