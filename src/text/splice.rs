//! The one way rebind changes text: a list of byte operations on the original
//! (replace a range, insert at an offset, remove a range), applied at once.
//! Every format-preserving edit (an endpoint's bytes, a base64 value's decoded
//! text, a trust statement added or removed) is such a list; what is outside
//! the operations is copied byte for byte. Operations that overlap, fall
//! outside the text or split a character are refused, never guessed.

use std::ops::Range;

/// One operation: the bytes of `range` in the original become `text`. An
/// insertion is an empty range; a removal an empty text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub range: Range<usize>,
    pub text: String,
}

impl Op {
    pub fn replace(range: Range<usize>, text: impl Into<String>) -> Op {
        Op {
            range,
            text: text.into(),
        }
    }

    pub fn insert(at: usize, text: impl Into<String>) -> Op {
        Op::replace(at..at, text)
    }

    pub fn remove(range: Range<usize>) -> Op {
        Op::replace(range, String::new())
    }
}

/// Why operations could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A range outside the text, reversed, or not on a character boundary.
    OutOfText(Range<usize>),
    /// Two operations touch the same bytes (two insertions at one offset
    /// included: their order would be a guess).
    Overlap(Range<usize>, Range<usize>),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::OutOfText(r) => write!(f, "edit {r:?} is not within the text"),
            Refused::Overlap(a, b) => write!(f, "edits {a:?} and {b:?} overlap"),
        }
    }
}

/// `text` with every operation of `ops` applied (in any order given).
pub fn apply(text: &str, ops: &[Op]) -> Result<String, Refused> {
    let mut sorted: Vec<&Op> = ops.iter().collect();
    sorted.sort_by_key(|o| (o.range.start, o.range.end));
    for o in &sorted {
        let r = &o.range;
        if r.start > r.end || text.get(r.clone()).is_none() {
            return Err(Refused::OutOfText(r.clone()));
        }
    }
    for pair in sorted.windows(2) {
        let (a, b) = (&pair[0].range, &pair[1].range);
        if b.start < a.end || (a.start == b.start && (a.is_empty() || b.is_empty())) {
            return Err(Refused::Overlap(a.clone(), b.clone()));
        }
    }
    let grows: usize = sorted.iter().map(|o| o.text.len()).sum();
    let mut out = String::with_capacity(text.len() + grows);
    let mut last = 0;
    for o in sorted {
        out.push_str(&text[last..o.range.start]);
        out.push_str(&o.text);
        last = o.range.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_apply_in_any_order_and_keep_every_other_byte() {
        let text = "a: https://old:6443 # é\r\nb: x\n";
        let ops = [
            Op::insert(text.len(), "c: y\n"),
            Op::replace(3..19, "https://new:6443"),
            Op::remove(20..24),
        ];
        assert_eq!(
            apply(text, &ops).unwrap(),
            "a: https://new:6443 \r\nb: x\nc: y\n"
        );
        assert_eq!(apply(text, &[]).unwrap(), text);
    }

    #[test]
    fn overlaps_and_ranges_outside_the_text_are_refused() {
        let text = "héllo";
        assert_eq!(
            apply(text, &[Op::replace(0..3, "x"), Op::replace(1..4, "y")]),
            Err(Refused::Overlap(0..3, 1..4))
        );
        assert_eq!(
            apply(text, &[Op::insert(1, "x"), Op::insert(1, "y")]),
            Err(Refused::Overlap(1..1, 1..1))
        );
        // Inside `é` (bytes 1..3), past the end, reversed.
        assert_eq!(
            apply(text, &[Op::remove(2..3)]),
            Err(Refused::OutOfText(2..3))
        );
        assert!(apply(text, &[Op::insert(99, "x")]).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = Op::replace(3..1, "x");
        assert!(apply(text, &[reversed]).is_err());
        // Adjacent operations are fine.
        assert_eq!(
            apply(text, &[Op::replace(0..1, "H"), Op::replace(1..3, "e")]).unwrap(),
            "Hello"
        );
    }
}
