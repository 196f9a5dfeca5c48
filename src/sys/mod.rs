//! The process: signals and threads.

pub mod par;
pub mod signals;
