//! rebind's integration tests, one binary (linking the library and libgit2
//! once instead of once per file). Each module is one topic; `common` holds
//! the shared command builder, fixtures and oracles.

mod badinput;
mod cli;
mod cli_help;
mod common;
mod config;
mod config_strict;
mod corpus;
mod cutover;
mod diff_apply;
mod diff_cli;
mod discovery;
mod embedded_escapes;
mod emitted_manifests;
mod endpoint_cli;
mod endpoint_props;
mod extent_gates;
mod extent_rules;
mod feeders;
mod file_kinds;
mod fuzz_regressions;
mod git;
mod git_faults;
mod git_flow;
#[cfg(unix)]
mod git_signals;
mod git_state;
mod identity;
mod inventory_apply;
mod json_files;
mod json_props;
mod key_collisions;
mod libyaml_oracle;
mod nothing_silent;
mod output;
mod output_formats;
mod props;
mod reader_keys;
mod reader_model;
mod reader_parity;
mod registration;
mod secret;
mod secret_inputs;
mod secret_out;
mod secret_search;
mod secret_tokens;
mod snapshots;
mod symlinked_manifests;
mod templates;
mod walk_order;
mod walk_paths;
mod writer_outputs;
mod yaml_tabs;
