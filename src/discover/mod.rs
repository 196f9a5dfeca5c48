//! Which files a run reads: the walk (gitignore-aware, in canonical-path
//! order), the tracked files git's ignore rules would hide from it, and the
//! roles of files by name.

pub mod ignored;
pub mod walk;
