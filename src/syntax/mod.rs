//! The readers: YAML (with Helm template actions masked) and JSON, each
//! node with its byte span, line and column and decoded value; the
//! expressions of Helm template actions.

pub mod gotemplate;
pub mod json;
pub mod yaml;
