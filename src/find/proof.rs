//! How a file was read (masked, JSON-only), recorded while it is located:
//! what its rewrite is spliced and verified by.

/// How a file was read: what its rewrite is spliced and verified by.
#[derive(Debug, Default, Clone)]
pub struct Proof {
    /// Helm template actions had to be masked for the file to parse.
    pub masked: bool,
    /// The file reads only as JSON (see `jsonfile`): a rewrite is spliced by
    /// JSON's escape rules.
    pub json: bool,
}

impl Proof {
    pub fn new(masked: bool) -> Proof {
        Proof {
            masked,
            ..Proof::default()
        }
    }
}
