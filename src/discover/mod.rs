//! Which files a run reads: the walk (gitignore-aware, in canonical-path
//! order) and the roles of files by name.

pub mod walk;
