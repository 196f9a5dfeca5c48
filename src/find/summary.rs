//! Counting what was found: per-endpoint tallies (values, comments, text,
//! template actions, the files that hold them, the cluster names written next
//! to them) and the tier table of Applications by destination.
//!
//! A [`Summary`] takes sources one at a time and keeps only counts and names,
//! so a scan streams its occurrences out and its memory stays flat.
//!
//! Cluster names (what `init` declares) come from the manifests, in this
//! order of preference ([`HintSource`]): a name said beside the endpoint
//! (list-generator element `cluster`/`clusterName`/`name`/`env`/`environment`,
//! cluster Secret `name`, kubeconfig cluster name, `name` beside `server` in
//! a values or inventory file, a ConfigMap `data` key); the kustomize overlay
//! folder (`overlays/<name>/`) of the file; an Application aimed at it
//! (`<project>-<overlay>`, or its name without the words naming what it
//! deploys); the host (OpenShift `api.<cluster>.`, a first DNS label).
//! Within one source, the name given most often wins. A URL is never a name.

use crate::find::inventory::Source;
use crate::find::locate::{HintSource, Kind};
use crate::text::endpoint::{self, Shape};
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
    /// Cluster names the manifests give next to this endpoint, with how
    /// each was found and how often.
    pub hints: BTreeMap<(HintSource, String), usize>,
    /// Value occurrences written as a URL (not a bare host).
    pub url_values: usize,
    /// The last source counted in `value_files` (sources come one at a time).
    last_file: Option<usize>,
}

impl Tally {
    /// The name the manifests give this endpoint most often.
    pub fn best_hint(&self) -> Option<&str> {
        let best = self.hints.keys().map(|(s, _)| *s).min()?;
        self.hints
            .iter()
            .filter(|((s, _), _)| *s == best)
            .max_by_key(|((_, name), n)| (**n, std::cmp::Reverse(name.as_str())))
            .map(|((_, name), _)| name.as_str())
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
    ///
    /// A bare host of no managed shape (a `tls-server-name`, a
    /// `tlsClientConfig.serverName`) only ever follows its cluster's URL: it
    /// is rewritten with it, but is no cluster of its own.
    pub fn is_workload(&self) -> bool {
        self.values > 0
            && self.shape != Some(Shape::InCluster)
            && (self.url_values > 0 || self.shape != Some(Shape::Other))
    }
}

/// The kustomize overlay a file is in: `<name>` of `.../overlays/<name>/...`.
fn overlay_name(rel: &str) -> Option<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let i = parts.iter().rposition(|p| *p == "overlays")?;
    // The folder, not the file itself.
    if i + 2 >= parts.len() {
        return None;
    }
    let name = parts[i + 1];
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then(|| name.to_string())
}

/// Where an ApplicationSet's templated destination comes from when its own
/// list generator holds the values: `list generator elements[].url in FILE`.
fn list_elements(src: &Source, resource: &str) -> Option<String> {
    let mut keys: Vec<&str> = src
        .occurrences()
        .iter()
        .filter(|o| {
            o.position == Some(crate::model::positions::Position::ListElement)
                && o.resource.as_deref() == Some(resource)
        })
        .filter_map(|o| o.yaml_path.as_deref()?.rsplit('.').next())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    (!keys.is_empty()).then(|| {
        format!(
            "list generator elements[].{} in {}",
            keys.join(", elements[]."),
            src.entry.rel
        )
    })
}

/// Applications and ApplicationSet templates by destination.
#[derive(Debug, Default, Clone)]
pub struct Tiers {
    /// Tier 1: a hard-coded server URL (hub push).
    pub hub: Tier,
    /// Tier 3: the in-cluster API server.
    pub in_cluster: Tier,
    /// `destination.name` only.
    pub by_name: Tier,
    /// A generator or template parameter (`server: '{{server}}'`, a Helm
    /// value): the endpoints are where the values are.
    pub templated: Tier,
    /// Where each templated destination's values come from (beside
    /// `templated.names`, when names are kept).
    pub templated_from: Vec<Option<String>>,
    /// Every distinct source of templated destinations that was found.
    pub templated_sources: std::collections::BTreeSet<String>,
}

/// One tier: how many Applications, and their names when they are kept
/// ([`Summary::keeping_tier_names`]).
#[derive(Debug, Default, Clone)]
pub struct Tier {
    pub count: usize,
    pub names: Vec<String>,
}

/// Tallies and tiers, fed one source at a time.
#[derive(Debug, Default)]
pub struct Summary {
    tallies: BTreeMap<String, Tally>,
    pub tiers: Tiers,
    sources: usize,
    /// Keep each Application's name in its tier (the JSON report lists them;
    /// text shows counts, and then memory stays flat however many there are).
    tier_names: bool,
}

impl Summary {
    /// A summary that keeps the names of the Applications in each tier.
    pub fn keeping_tier_names() -> Summary {
        Summary {
            tier_names: true,
            ..Summary::default()
        }
    }

    /// Counts one source's occurrences and destinations.
    pub fn add(&mut self, src: &Source) {
        let n = self.sources;
        self.sources += 1;
        self.tally(src, n);
        let Ok(l) = &src.located else { return };
        self.destinations(src, l);
    }

    /// Adds what a second look at a file found (the comment and text
    /// mentions of endpoints found by position): its occurrences only; the
    /// file and its destinations were counted by [`Summary::add`].
    pub fn add_mentions(&mut self, src: &Source) {
        self.tally(src, usize::MAX);
    }

    /// Counts the occurrences of the `n`th file.
    fn tally(&mut self, src: &Source, n: usize) {
        for o in src.occurrences() {
            let e = self.tallies.entry(o.found.key()).or_default();
            if e.display.is_empty() {
                e.display = if o.found.bare {
                    format!("https://{}", o.found.host)
                } else {
                    o.cluster_text()
                };
            }
            e.shape = Some(o.shape());
            match o.kind {
                Kind::Value => {
                    e.values += 1;
                    if !o.found.bare {
                        e.url_values += 1;
                    }
                    if e.last_file != Some(n) {
                        e.last_file = Some(n);
                        e.value_files += 1;
                    }
                    if let Some(h) = &o.cluster_hint {
                        *e.hints.entry((o.hint_source, h.clone())).or_default() += 1;
                    }
                    let weak = o.cluster_hint.is_none() || o.hint_source > HintSource::Overlay;
                    if o.cluster_position && weak {
                        if let Some(name) = overlay_name(&src.entry.rel) {
                            *e.hints.entry((HintSource::Overlay, name)).or_default() += 1;
                        }
                    }
                }
                Kind::Comment => e.comments += 1,
                Kind::Text => e.texts += 1,
                Kind::Template => e.templates += 1,
            }
        }
    }

    /// Counts the tier of each destination of a file.
    fn destinations(&mut self, src: &Source, l: &crate::find::locate::Located) {
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
            let templated = d.server.as_deref().is_some_and(|s| s.contains("{{"));
            let tier = if in_cluster_server || d.name.as_deref() == Some("in-cluster") {
                &mut self.tiers.in_cluster
            } else if templated {
                let from = d.from.clone().or_else(|| list_elements(src, &d.resource));
                if let Some(from) = &from {
                    self.tiers.templated_sources.insert(from.clone());
                }
                if self.tier_names {
                    self.tiers.templated_from.push(from);
                }
                &mut self.tiers.templated
            } else if d.server.is_some() {
                &mut self.tiers.hub
            } else {
                &mut self.tiers.by_name
            };
            tier.count += 1;
            if self.tier_names {
                tier.names.push(d.resource.clone());
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

    /// One cluster per workload endpoint, for `rebind init`: named by its
    /// best hint, else `cluster-N`; a name given twice gets `-2`, `-3`...
    /// suffixes. Each expects its current counts.
    pub fn init_clusters(&self) -> Vec<crate::model::config::InitCluster> {
        let mut used = std::collections::BTreeSet::new();
        let mut clusters = Vec::new();
        for (i, t) in self.workload().into_iter().enumerate() {
            let base = t
                .best_hint()
                .map(str::to_string)
                .unwrap_or_else(|| format!("cluster-{}", i + 1));
            let mut name = base.clone();
            let mut n = 2;
            while !used.insert(name.clone()) {
                name = format!("{base}-{n}");
                n += 1;
            }
            clusters.push(crate::model::config::InitCluster {
                name,
                endpoint: t.display.clone(),
                expect: crate::model::config::Expect {
                    files: Some(t.value_files),
                    occurrences: Some(t.values),
                },
                oidc_issuer: None,
                identity: Default::default(),
            });
        }
        clusters
    }

    /// The summary of a whole inventory.
    pub fn of(inv: &crate::find::inventory::Inventory) -> Summary {
        let mut s = Summary::keeping_tier_names();
        for src in &inv.sources {
            s.add(src);
        }
        s
    }
}
