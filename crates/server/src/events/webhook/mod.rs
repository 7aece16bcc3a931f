//! Webhook delivery's requests and tasks, over the registry the daemon holds
//! (`crate::webhooks`): `subscribe` (`events/subscribe` and `events/unsubscribe`), `deliver`
//! (each subscription's delivery task) and `controls` (the conformance suite's webhook
//! controls, demo mode only).

pub mod controls;
mod deliver;
mod subscribe;

pub(crate) use subscribe::{subscribe, unsubscribe};

use crate::daemon::Daemon;

/// Start the delivery task of every subscription the registry holds (after the daemon
/// starts, and after the restart control reloads it).
pub fn start(daemon: &Daemon) {
    for hook in daemon.webhooks().all() {
        tokio::spawn(deliver::run(daemon.clone(), hook));
    }
}

/// Start the delivery task of one new subscription.
pub(crate) fn spawn(daemon: &Daemon, hook: std::sync::Arc<crate::webhooks::Hook>) {
    tokio::spawn(deliver::run(daemon.clone(), hook));
}
