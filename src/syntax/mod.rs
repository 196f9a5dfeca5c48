//! The readers: YAML (with Helm template actions masked) and JSON, each
//! node with its byte span, line and column and decoded value.

pub mod json;
pub mod yaml;
