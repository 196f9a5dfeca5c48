//! rebind finds the Kubernetes API endpoints hard-coded in a GitOps repository
//! and swaps one for another, changing nothing but the endpoint's bytes.
//!
//! The library is layers, one folder each, lowest first. A module imports
//! only from its own layer or from layers below it, and no two modules import
//! each other, even through others (`tests/it/layers.rs` holds that):
//!
//! 1. [`sys`]: the process (signals, threads);
//! 2. [`text`]: text rules (URL and host shapes, EKS issuers, escapes,
//!    quoting, base64, words);
//! 3. [`syntax`]: the readers (YAML, JSON, Helm template actions);
//! 4. [`discover`]: which files (the walk);
//! 5. [`model`]: tables and configuration (the positions table, the
//!    ArgoCD Application table, `.rebind.yaml`);
//! 6. [`find`]: locating endpoints in each file (and in documents held in
//!    strings, and in what chart templates render);
//! 7. [`edit`]: splicing and verifying edits, diffs, the writer;
//! 8. [`repo`]: git, remotes, pull requests;
//! 9. [`review`]: what a rebind means beyond its bytes (the whole plan,
//!    after the merge, identity, the cluster registration);
//! 10. [`output`]: the report model and its renderings, exit codes;
//! 11. [`commands`]: each command resolved once from plain options and run
//!     by one entry point, on the shared read pipeline.
//!
//! Data flows one way: discover → read → locate → plan → verify →
//! write/commit → report. The command line (the `rebind` binary's `cli`
//! module) only maps flags to the commands' options.

pub mod commands;
pub mod discover;
pub mod edit;
pub mod find;
pub mod model;
pub mod output;
pub mod repo;
pub mod review;
pub mod syntax;
pub mod sys;
pub mod text;
