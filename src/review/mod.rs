//! What a rebind means beyond its bytes: the whole plan, which
//! Application deploys each file after the merge, the new cluster's IAM
//! identity and trust, and the cluster registration.

pub mod beside;
pub mod feeders;
pub mod fences;
pub mod names;
pub mod oidc;
pub mod plan;
pub mod render_checks;
pub mod rendered;
pub mod secret;
pub mod trust;
