//! Tables and configuration: which paths are cluster positions, how an
//! ArgoCD Application names its sources and destination, and `.rebind.yaml`.

pub mod application;
pub mod cluster;
pub mod config;
pub mod names;
pub mod positions;
