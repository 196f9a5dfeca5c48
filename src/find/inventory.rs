//! What the read pipeline hands over: each file read, with what was located in
//! it, and the whole inventory a rebind plans from.

use crate::discover::walk::{Entry, Skipped};
use crate::find::locate::{self, Located, ParseError};
use crate::find::templates;

/// One file that holds endpoint text (or, for YAML, destinations for the tier table).
#[derive(Debug)]
pub struct Source {
    pub entry: Entry,
    /// Shared with the plans made from it, so a big file is held once.
    pub text: std::sync::Arc<str>,
    pub located: Result<Located, ParseError>,
}

impl Source {
    /// The occurrences found, whether or not the file parsed.
    pub fn occurrences(&self) -> &[locate::Occurrence] {
        match &self.located {
            Ok(l) => &l.occurrences,
            Err(e) => &e.occurrences,
        }
    }
}

/// Everything found under the walked paths.
#[derive(Debug, Default)]
pub struct Inventory {
    pub sources: Vec<Source>,
    pub skipped: Vec<Skipped>,
    /// How many files were read.
    pub files: usize,
}

/// What one file contributed, as [`each_source`] hands it over.
pub enum Item {
    Source(Box<Source>),
    Skipped(Skipped),
    /// A chart template action at a cluster position that was not followed
    /// (handed over first, before any file).
    Note(templates::Note),
    /// The EKS cluster ARNs a YAML file names (only when asked:
    /// [`crate::find::locate::Want::arns`]), with the file's shown path.
    Arns(String, Vec<crate::find::names::ArnRef>),
}
