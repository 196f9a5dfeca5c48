//! The repository: git (branches, commits, remotes), repository URLs as
//! identities, pull requests, and what a workspace run asks of and records
//! about each repository.

pub mod checkout;
pub mod git;
pub mod ledger;
pub mod pr;
pub mod remote;
