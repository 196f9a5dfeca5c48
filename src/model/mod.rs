//! Tables and configuration: which paths are cluster positions, how an
//! ArgoCD Application names its sources and destination, `.rebind.yaml`,
//! and the workspace file of a cutover across repositories.

pub mod application;
pub mod cluster;
pub mod config;
pub mod iam;
pub mod names;
pub mod positions;
pub mod workspace;
