//! An error that carries its stable code: what a JSON report's `code`
//! says, whatever the message's wording (the table of codes and what to do
//! about each is `output::codes`, documented in docs/errors.md).

use std::fmt;

/// An error with its code (one of `output::codes::ALL`).
#[derive(Debug, Clone)]
pub struct Coded {
    pub code: &'static str,
    pub message: String,
}

impl fmt::Display for Coded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

/// `message` as an error with `code`.
pub fn err(code: &'static str, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Coded {
        code,
        message: message.into(),
    })
}

/// The code of the first coded error in `e`'s chain, if any.
pub fn code_of(e: &anyhow::Error) -> Option<&'static str> {
    e.chain()
        .find_map(|c| c.downcast_ref::<Coded>())
        .map(|c| c.code)
}
