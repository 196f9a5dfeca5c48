//! The commands: each resolved once from plain options (no argument-parser
//! types) and run by one entry point, on the shared read pipeline.

pub mod apply;
pub mod check;
pub mod cutover;
pub mod feeders;
pub mod identity;
pub mod init;
pub mod pipeline;
pub mod scan;
pub mod secret;
pub mod workspace;
