//! The [`State`] from the handle: built fresh, rebuilt on each change, and the clients it lists.
//!
//! Built from the stores' last checks, the clients and the board; rebuilt on every change
//! (coalesced) for those who watch it. The clients' activity and their revocation are here too.

use std::sync::Arc;
use std::time::Duration;

use tidings_core::allowlist::{AllowKind, EntryState, entry_state};
use tidings_core::settings::{AllowEntry, ContactsInForce};
use tidings_core::{EventType, Settings};
use tokio::sync::watch;

use super::Daemon;
use crate::clients::Activity;
use crate::home::{home_relative, without_home};
use crate::state::{
    AllowlistSummary, ContactsState, FullDiskAccess, HttpEndpointState, SettingsFileState, State,
    StoreAccess, StoreState, TypeState,
};
use crate::sync::lock;

/// How long the state builder gathers changes before it rebuilds `State` (a burst of
/// deliveries is one rebuild, not one per event).
const STATE_COALESCE: Duration = Duration::from_millis(20);

impl Daemon {
    /// The state now, built fresh; never blocks on a store (the hub's last check is used).
    pub fn state(&self) -> State {
        // The configured settings are shared, not copied: the state is rebuilt on every
        // delivery burst.
        let settings = self.configured();
        let contacts = ContactsInForce(Some(self.contacts()));
        let types = EventType::ALL
            .into_iter()
            .map(|ty| self.type_state(ty, &settings, &contacts))
            .collect();
        State {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            socket: lock(&self.inner.socket).clone(),
            connections: self.inner.clients.connections(),
            streams: self.inner.clients.streams(),
            types,
            http: self.inner.board.http(),
            settings: self.inner.board.settings_file(),
            clients: self.inner.clients.snapshot(),
            agents: self.agent_list(&settings),
            new_agents: settings.agents.new,
            paused_until_ms: self.paused_until_ms(),
            full_disk_access: FullDiskAccess::Unknown,
            contacts: ContactsState::of(&self.contacts()),
            webhooks: self.inner.webhooks.state(&settings.webhooks.allow),
        }
        .with_full_disk_access(self.last_access_version().as_deref(), super::build_id())
    }

    fn type_state(
        &self,
        ty: EventType,
        settings: &Settings,
        contacts: &ContactsInForce,
    ) -> TypeState {
        let hub = &self.inner.hub;
        let scan_error = self.inner.engine.last_scan_error(ty);
        // A stamp can work while every scan fails: the scan's error then tells.
        let (access, problem) = match hub.health(ty) {
            Some(Ok(())) => match &scan_error {
                Some(e) => (StoreAccess::Unreadable, Some(e.clone())),
                None => (StoreAccess::Ok, None),
            },
            Some(Err((kind, message))) => (StoreAccess::from(kind), Some(message)),
            None => (StoreAccess::NotChecked, None),
        };
        let type_settings = settings.for_type(ty);
        TypeState {
            name: ty.name().to_owned(),
            enabled: type_settings.enabled,
            allowlist: allowlist_summary(&type_settings.allow, contacts),
            backfill_days: type_settings.backfill_days,
            store: StoreState {
                // Any socket client (an agent too) may ask: paths are shown home-relative.
                path: home_relative(hub.store_path(ty)),
                access,
                problem: problem.map(|p| without_home(&p)),
                last_scan_error: scan_error.map(|e| without_home(&e)),
                last_change_ms: hub.last_change_ms(ty),
                backfilled: self.inner.engine.backfill_skipped(ty),
                unreadable_rows: self.inner.engine.unreadable_rows(ty),
            },
        }
    }

    /// The state, rebuilt on every change (coalesced): clients, subscriptions, deliveries,
    /// settings, the stores, the HTTP endpoint.
    pub fn watch_state(&self) -> watch::Receiver<State> {
        self.inner.state.subscribe()
    }

    /// The last deliveries (in memory only; they name senders, so never part of `State`).
    pub fn activity(&self) -> &Activity {
        self.inner.clients.activity()
    }

    /// Revoke client `id` (as `State.clients` lists it): its streams end with `terminated`
    /// (Forbidden) and its later requests are refused until it reconnects. False when no such
    /// client is connected.
    pub fn revoke(&self, id: u64) -> bool {
        self.inner.clients.revoke(id)
    }
}

/// Rebuild `State` whenever something it shows changes: the board (clients, streams,
/// deliveries, HTTP, settings file), the settings, or a store's check. A burst is gathered
/// for [`STATE_COALESCE`] into one rebuild; receivers are woken only when it differs.
pub(super) fn spawn_state_builder(daemon: &Daemon) {
    let weak = Arc::downgrade(&daemon.inner);
    let mut board = daemon.inner.board.subscribe();
    let mut settings = daemon.settings_receiver();
    let mut stores = daemon.inner.hub.changes();
    // Ends when the daemon is dropped (its channels close); after a shutdown it still shows
    // the endpoints and connections going away.
    tokio::spawn(async move {
        loop {
            let open = tokio::select! {
                r = board.changed() => r.is_ok(),
                r = settings.changed() => r.is_ok(),
                r = stores.changed() => r.is_ok(),
            };
            if !open {
                return;
            }
            tokio::time::sleep(STATE_COALESCE).await;
            board.borrow_and_update();
            settings.borrow_and_update();
            stores.borrow_and_update();
            let Some(inner) = weak.upgrade() else { return };
            let daemon = Daemon { inner };
            let next = daemon.state();
            if next.types.iter().any(|t| t.store.access == StoreAccess::Ok) {
                daemon.record_access();
            }
            let notices = super::notices::state_notices(&daemon.inner.state.borrow(), &next);
            for notice in notices {
                daemon.notify(notice);
            }
            daemon.inner.state.send_if_modified(|s| {
                let changed = *s != next;
                *s = next;
                changed
            });
        }
    });
}

/// The State before the first build (replaced before `start` returns).
pub(super) fn placeholder_state() -> State {
    State {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        socket: None,
        connections: 0,
        streams: 0,
        types: Vec::new(),
        http: HttpEndpointState::Off,
        settings: SettingsFileState::Ok,
        clients: Vec::new(),
        agents: Vec::new(),
        new_agents: tidings_core::settings::NewAgents::default(),
        webhooks: crate::state::WebhooksState::default(),
        paused_until_ms: None,
        full_disk_access: FullDiskAccess::Unknown,
        contacts: ContactsState::default(),
    }
}

/// Counts per kind, by core's one classification of an entry, and how many person or group
/// entries stand for nobody now (never which ones: any socket client may ask).
fn allowlist_summary(entries: &[AllowEntry], contacts: &ContactsInForce) -> AllowlistSummary {
    let mut s = AllowlistSummary::default();
    for entry in entries {
        match AllowKind::of_entry(entry) {
            AllowKind::Address => s.addresses += 1,
            AllowKind::Phone => s.handles += 1,
            AllowKind::Domain => s.domains += 1,
            AllowKind::PhonePrefix | AllowKind::AddressPrefix => s.prefixes += 1,
            AllowKind::Person => s.people += 1,
            AllowKind::Group => s.groups += 1,
        }
        if entry_state(entry, contacts) != EntryState::Ok {
            s.unresolved += 1;
        }
    }
    s
}
