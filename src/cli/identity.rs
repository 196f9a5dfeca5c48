//! `rebind identity`: its flags as the library's
//! [`rebind::commands::identity::IdentityOptions`].

use super::args::{IdentityArgs, TrustChange};
use rebind::commands::identity::{self, IdentityOptions};
use rebind::output::Done;

pub fn run(a: IdentityArgs) -> Done {
    let options = IdentityOptions {
        paths: a.paths,
        describe_from: a.describe_from,
        describe_to: a.describe_to,
        oidc_from: a.oidc_from,
        oidc_to: a.oidc_to,
        cluster: a.cluster,
        from: a.from,
        trust: a.trust.map(|t| match t {
            TrustChange::Add => identity::TrustChange::Add,
            TrustChange::RemoveRetired => identity::TrustChange::RemoveRetired,
        }),
        oidc_retired: a.oidc_retired,
        yes: a.yes,
    };
    identity::run(&options)
}
