//! Text rules: what a URL, a host and an EKS issuer look like, escapes,
//! quoting, base64 and the words of messages. No file, no YAML.

pub mod base64;
pub mod dns;
pub mod endpoint;
pub mod glob;
pub mod issuer;
pub mod quote;
pub mod repo_url;
pub mod splice;
pub mod words;
