//! The process: signals, threads, and the errors it ends with (their codes).

pub mod coded;
pub mod par;
pub mod signals;
