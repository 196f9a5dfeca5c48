//! Edits: splicing new bytes into a file, verifying that nothing else
//! changed, diffs, and the one writer (all or nothing).

pub mod diff;
pub mod rewrite;
pub mod verify;
pub mod write;
