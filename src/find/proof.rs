//! What a file's parse is checked against after a rewrite, recorded while
//! it is located.

use crate::syntax::yaml::{parsed_text, Events};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use yaml_rust2::parser::Event;

/// What a file's parse is checked against after a rewrite: the number of
/// parser events, a digest of every event but the held ones, and the held
/// scalars (those that may hold the endpoint) whole, by event index.
#[derive(Debug, Default, Clone)]
pub struct Proof {
    pub event_count: usize,
    pub digest: u64,
    pub held: BTreeMap<usize, Event>,
    /// Helm template actions had to be masked for the file to parse.
    pub masked: bool,
    /// The file reads only as JSON (see `jsonfile`): a rewrite is spliced by
    /// JSON's escape rules and verified byte for byte by
    /// `json::verify_same_except`; the events above are empty.
    pub json: bool,
}

impl Proof {
    pub fn new(masked: bool) -> Proof {
        Proof {
            masked,
            ..Proof::default()
        }
    }

    /// Records event number `index`: whole when `hold`, else in the digest.
    pub fn observe(&mut self, index: usize, ev: Event, hold: bool) {
        self.event_count = self.event_count.max(index + 1);
        if hold {
            self.held.insert(index, ev);
        } else {
            self.digest = self.digest.wrapping_add(fingerprint(index, &ev));
        }
    }

    /// Moves every held event not in `keep` into the digest.
    pub fn release_except(&mut self, keep: &BTreeSet<usize>) {
        let mut digest = self.digest;
        self.held.retain(|k, ev| {
            let kept = keep.contains(k);
            if !kept {
                digest = digest.wrapping_add(fingerprint(*k, ev));
            }
            kept
        });
        self.digest = digest;
        if self.held.is_empty() {
            self.held = BTreeMap::new(); // an emptied map still holds a node; many files add up
        }
    }

    /// The proof of `text` (parsed masked if `masked`), holding the events in `keep`.
    pub fn of(text: &str, masked: bool, keep: &BTreeSet<usize>) -> Result<Proof, String> {
        let src = parsed_text(text, masked);
        let mut proof = Proof::new(masked);
        for (i, item) in Events::new(&src).enumerate() {
            let (ev, _) = item.map_err(|(l, c, m)| format!("{l}:{c}: {m}"))?;
            let hold = keep.contains(&i);
            proof.observe(i, ev, hold);
        }
        Ok(proof)
    }
}

/// A stable hash of one event (value, style, anchor, tag, kind) at position
/// `index` in the stream. Digests add these up, so events can join in any order.
fn fingerprint(index: usize, ev: &Event) -> u64 {
    let mut h = Fx(0);
    index.hash(&mut h);
    match ev {
        Event::Scalar(v, style, anchor, tag) => {
            (1u8, v, *style as u8, anchor).hash(&mut h);
            tag.as_ref().map(|t| (&t.handle, &t.suffix)).hash(&mut h);
        }
        Event::Alias(a) => (2u8, a).hash(&mut h),
        Event::MappingStart(a, tag) | Event::SequenceStart(a, tag) => {
            (matches!(ev, Event::MappingStart(..)), 3u8, a).hash(&mut h);
            tag.as_ref().map(|t| (&t.handle, &t.suffix)).hash(&mut h);
        }
        Event::Nothing => 4u8.hash(&mut h),
        Event::StreamStart => 5u8.hash(&mut h),
        Event::StreamEnd => 6u8.hash(&mut h),
        Event::DocumentStart => 7u8.hash(&mut h),
        Event::DocumentEnd => 8u8.hash(&mut h),
        Event::MappingEnd => 9u8.hash(&mut h),
        Event::SequenceEnd => 10u8.hash(&mut h),
    }
    // Spread the bits: digests add fingerprints up.
    let x = h.0 ^ (h.0 >> 33);
    x.wrapping_mul(0xff51_afd7_ed55_8ccd) ^ (x >> 29)
}

/// A small fast hasher (the multiply-rotate scheme of rustc's FxHasher):
/// fingerprints guard against accidents, not adversaries.
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
