//! The repository: git (branches, commits, remotes), repository URLs as
//! identities, and pull requests.

pub mod git;
pub mod pr;
pub mod remote;
