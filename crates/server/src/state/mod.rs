//! The one observable model of the running engine: [`State`], what `tidings/status` answers.
//!
//! It is what `tidings status --json` prints and what the menu-bar app shows. A leaf: plain
//! serde types, and the [`Board`] where the parts that are not derived from elsewhere (the HTTP
//! endpoint, the settings file) are reported and every change is signalled.
//!
//! Any local client (an agent too) may read `tidings/status`, so nothing here is personal
//! data: paths are home-relative, allowlists and filters are counts per kind, never values,
//! and deliveries (which name senders) are not part of it (docs/decisions/engine-api.md).
//!
//! The parts of the model, one file each: `stores` (an event type, its store and allowlist,
//! Full Disk Access), `clients` (who is connected and what it listens to), `agents` (the
//! programs behind them and their grants), `webhooks` (the destinations and each webhook
//! subscription's deliveries) and `board` (the HTTP endpoint's and the settings file's state,
//! and the change signal).

mod agents;
mod board;
mod clients;
mod stores;
mod webhooks;

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tidings_core::EventType;

pub use agents::{AgentAccess, AgentKind, AgentState, TypeGrantState};
pub(crate) use board::Board;
pub use board::{HttpEndpointState, SettingsFileState};
pub use clients::{ClientState, Mode, SubscriptionState, Transport};
pub use stores::{AllowlistSummary, FullDiskAccess, StoreAccess, StoreState, TypeState};
pub use webhooks::{DestinationAskState, WebhookState, WebhooksState};

/// Everything the engine knows that a person or a tool may want to see, as one value.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// The engine's version.
    pub version: String,
    /// The Unix socket, home-relative; `None` when the engine serves no socket (tests).
    pub socket: Option<String>,
    /// Open socket connections.
    pub connections: usize,
    /// Open long-lived requests (push streams and listens) across all clients.
    pub streams: usize,
    /// One entry per event type, in `EventType::ALL` order.
    pub types: Vec<TypeState>,
    /// The loopback HTTP endpoint.
    pub http: HttpEndpointState,
    /// Whether `settings.toml` holds the settings in force.
    pub settings: SettingsFileState,
    /// The clients connected now, oldest first.
    pub clients: Vec<ClientState>,
    /// The agents: each with a grant in settings.toml, seen since start, or asking.
    #[serde(default)]
    pub agents: Vec<AgentState>,
    /// What a never-seen agent gets (`[agents] new`).
    #[serde(default)]
    pub new_agents: tidings_core::settings::NewAgents,
    /// Until when every type is paused (ms since the Unix epoch): clients see every type off
    /// while `types` still says what is configured. `None`: not paused.
    #[serde(default)]
    pub paused_until_ms: Option<u64>,
    /// Whether Tidings has Full Disk Access, from the stores' last checks.
    #[serde(default)]
    pub full_disk_access: FullDiskAccess,
    /// Whether the Contacts stores could be read: counts and files only, never a card.
    #[serde(default)]
    pub contacts: ContactsState,
    /// Webhook delivery: the destinations, the subscriptions and how they deliver.
    #[serde(default)]
    pub webhooks: WebhooksState,
}

/// The Contacts stores as last read. Person and group allowlist entries need them; when none
/// can be read those entries match nobody.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContactsState {
    /// Stores read without a problem.
    pub stores_read: usize,
    /// The first store that could not be read and why (home-relative), if any.
    pub problem: Option<String>,
}

impl ContactsState {
    /// What `contacts` say of their stores, the problem's file home-relative and its detail
    /// without the home (any socket client may read `State`).
    pub fn of(contacts: &tidings_core::contacts::Contacts) -> ContactsState {
        ContactsState {
            stores_read: contacts.stores_read(),
            problem: contacts.problems().first().map(|p| {
                format!(
                    "{}: {} ({})",
                    crate::home::home_relative(&p.path),
                    p.kind.name(),
                    crate::home::without_home(&p.detail)
                )
            }),
        }
    }
}

impl State {
    /// This state with [`full_disk_access`](State::full_disk_access) worked out from the
    /// stores: any store refused is Missing (Stale when `last_granted`, the version that last
    /// read a store, is another than `current`); else any store read is Granted.
    #[must_use]
    pub fn with_full_disk_access(mut self, last_granted: Option<&str>, current: &str) -> State {
        let any = |access| self.types.iter().any(|t| t.store.access == access);
        self.full_disk_access = if any(StoreAccess::PermissionDenied) {
            match last_granted {
                Some(last) if last != current => FullDiskAccess::Stale {
                    last_granted: last.to_owned(),
                },
                _ => FullDiskAccess::Missing,
            }
        } else if any(StoreAccess::Ok) {
            FullDiskAccess::Granted
        } else {
            FullDiskAccess::Unknown
        };
        self
    }

    /// The `clientInfo.name`s of the connections, which say which hosts are connected now.
    pub fn client_names(&self) -> Vec<String> {
        self.clients.iter().filter_map(|c| c.name.clone()).collect()
    }

    /// The tray's status line: what is wrong first (a rejected settings file, a store an
    /// enabled type cannot read, an HTTP endpoint that failed), then a pause, then how many
    /// clients listen (those with a subscription: `tidings status` itself does not count).
    /// Times are local ("Paused until 15:30").
    pub fn headline(&self) -> String {
        self.headline_with(local_time_of_day)
    }

    /// [`headline`](State::headline) with `clock` turning ms since the epoch into a time.
    pub fn headline_with(&self, clock: impl Fn(u64) -> String) -> String {
        if let SettingsFileState::Rejected { line, .. } = &self.settings {
            return match line {
                Some(line) => format!("settings.toml rejected (line {line})"),
                None => "settings.toml rejected".to_owned(),
            };
        }
        let enabled = || self.types.iter().filter(|t| t.enabled);
        for (access, say) in [
            (StoreAccess::PermissionDenied, "{} needs Full Disk Access"),
            (StoreAccess::Missing, "No {} store found"),
            (StoreAccess::SchemaProblem, "{} store has an unknown schema"),
            (StoreAccess::Unreadable, "{} store cannot be read"),
        ] {
            if let Some(ty) = enabled().find(|t| t.store.access == access) {
                if access == StoreAccess::PermissionDenied
                    && matches!(self.full_disk_access, FullDiskAccess::Stale { .. })
                {
                    return "Full Disk Access lost in the update: re-add Tidings".to_owned();
                }
                let app = match EventType::from_name(&ty.name) {
                    Some(known) => known.app_name(),
                    None => ty.name.as_str(),
                };
                return say.replace("{}", app);
            }
        }
        if let HttpEndpointState::Failed { .. } = self.http {
            return "HTTP endpoint failed to start".to_owned();
        }
        if let Some(until) = self.paused_until_ms {
            return format!("Paused until {}", clock(until));
        }
        match self
            .agents
            .iter()
            .filter(|a| a.access == AgentAccess::Asking)
            .count()
        {
            0 => {}
            1 => return "A program asks for events: open Settings".to_owned(),
            n => return format!("{n} programs ask for events: open Settings"),
        }
        match self
            .clients
            .iter()
            .filter(|c| !c.revoked && !c.subscriptions.is_empty())
            .count()
        {
            0 => "No clients listening".to_owned(),
            1 => "1 client listening".to_owned(),
            n => format!("{n} clients listening"),
        }
    }
}

/// `15:30` in the local time zone (ms since the Unix epoch).
pub fn local_time_of_day(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.with_timezone(&chrono::Local).format("%H:%M").to_string())
        .unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn store(access: StoreAccess) -> StoreState {
        StoreState {
            path: "~/x".into(),
            access,
            problem: None,
            last_scan_error: None,
            last_change_ms: None,
            backfilled: 0,
            unreadable_rows: 0,
        }
    }

    fn type_state(name: &str, enabled: bool, access: StoreAccess) -> TypeState {
        TypeState {
            name: name.into(),
            enabled,
            allowlist: AllowlistSummary::default(),
            backfill_days: 7,
            store: store(access),
        }
    }

    fn client(id: u64, subscribed: bool) -> ClientState {
        ClientState {
            id,
            name: None,
            version: None,
            transport: Transport::Socket,
            connected_since_ms: 0,
            pid: None,
            agent: "unidentified".into(),
            revoked: false,
            subscriptions: if subscribed {
                vec![SubscriptionState {
                    event_type: "mail.received".into(),
                    filter: BTreeMap::new(),
                    mode: Mode::Push,
                    delivered: 0,
                    last_delivery_ms: None,
                }]
            } else {
                vec![]
            },
        }
    }

    fn healthy() -> State {
        State {
            version: "1".into(),
            socket: None,
            connections: 0,
            streams: 0,
            types: vec![
                type_state("mail.received", true, StoreAccess::Ok),
                type_state("messages.received", false, StoreAccess::Ok),
            ],
            http: HttpEndpointState::Off,
            settings: SettingsFileState::Ok,
            clients: vec![],
            agents: vec![],
            new_agents: tidings_core::settings::NewAgents::Ask,
            webhooks: WebhooksState::default(),
            paused_until_ms: None,
            full_disk_access: FullDiskAccess::Unknown,
            contacts: ContactsState::default(),
        }
    }

    #[test]
    fn the_headline_counts_listening_clients() {
        let mut s = healthy();
        assert_eq!(s.headline(), "No clients listening");
        s.clients = vec![client(1, true), client(2, false)];
        assert_eq!(
            s.headline(),
            "1 client listening",
            "a client without a subscription"
        );
        s.clients.push(client(3, true));
        assert_eq!(s.headline(), "2 clients listening");
        s.clients[0].revoked = true;
        assert_eq!(s.headline(), "1 client listening", "a revoked client");
        // A program waiting for the user's answer comes before who listens.
        let asking = AgentState {
            id: "claude-1a2b3c".into(),
            identity: "exe:/usr/bin/claude".into(),
            name: "claude".into(),
            signer: None,
            program: None,
            kind: AgentKind::Program,
            announced: vec![],
            access: AgentAccess::Asking,
            grants: vec![],
            asking: Some("mail.received".into()),
            connections: 1,
            streams: 0,
            delivered: 0,
            last_seen_ms: None,
        };
        s.agents = vec![asking.clone()];
        assert_eq!(s.headline(), "A program asks for events: open Settings");
        s.agents.push(AgentState {
            id: "x-1".into(),
            ..asking
        });
        assert_eq!(s.headline(), "2 programs ask for events: open Settings");
    }

    #[test]
    fn the_headline_says_what_is_wrong_first() {
        let mut s = healthy();
        s.clients = vec![client(1, true)];
        s.paused_until_ms = Some(1);
        assert_eq!(s.headline_with(|_| "15:30".into()), "Paused until 15:30");
        s.types[0].store.access = StoreAccess::Missing;
        assert_eq!(s.headline(), "No Mail store found");
        s.types[1] = type_state("messages.received", true, StoreAccess::PermissionDenied);
        assert_eq!(
            s.headline(),
            "Messages needs Full Disk Access",
            "before a missing one"
        );
        s.types[1].enabled = false;
        s.types[0].store.access = StoreAccess::PermissionDenied;
        assert_eq!(s.headline(), "Mail needs Full Disk Access");
        s.settings = SettingsFileState::Rejected {
            line: Some(3),
            reason: "settings.toml line 3 is invalid".into(),
        };
        assert_eq!(s.headline(), "settings.toml rejected (line 3)");
    }

    #[test]
    fn full_disk_access_is_missing_or_stale_by_the_last_version_that_had_it() {
        let mut s = healthy();
        assert_eq!(
            s.clone().with_full_disk_access(None, "2").full_disk_access,
            FullDiskAccess::Granted
        );
        s.types[0].store.access = StoreAccess::PermissionDenied;
        let missing = s.clone().with_full_disk_access(None, "2");
        assert_eq!(missing.full_disk_access, FullDiskAccess::Missing);
        assert_eq!(missing.headline(), "Mail needs Full Disk Access");
        let same = s.clone().with_full_disk_access(Some("2"), "2");
        assert_eq!(
            same.full_disk_access,
            FullDiskAccess::Missing,
            "revoked, not stale"
        );
        let stale = s.clone().with_full_disk_access(Some("1"), "2");
        assert_eq!(
            stale.full_disk_access,
            FullDiskAccess::Stale {
                last_granted: "1".into()
            }
        );
        assert_eq!(
            stale.headline(),
            "Full Disk Access lost in the update: re-add Tidings"
        );
        assert!(
            stale
                .full_disk_access
                .fix()
                .unwrap()
                .contains("remove Tidings")
        );
        s.types[0].store.access = StoreAccess::Missing;
        s.types[1].store.access = StoreAccess::NotChecked;
        assert_eq!(
            s.with_full_disk_access(Some("1"), "2").full_disk_access,
            FullDiskAccess::Unknown
        );
    }

    #[test]
    fn a_disabled_type_store_problem_is_not_the_headline() {
        let mut s = healthy();
        s.types[1].store.access = StoreAccess::PermissionDenied;
        assert_eq!(s.headline(), "No clients listening");
        s.http = HttpEndpointState::Failed {
            listen: "127.0.0.1:1".into(),
            error: "taken".into(),
        };
        assert_eq!(s.headline(), "HTTP endpoint failed to start");
    }

    #[test]
    fn the_state_round_trips_through_json() {
        let state = State {
            version: "1".into(),
            socket: Some("~/x.sock".into()),
            connections: 1,
            streams: 0,
            types: vec![],
            http: HttpEndpointState::Failed {
                listen: "127.0.0.1:1".into(),
                error: "taken".into(),
            },
            settings: SettingsFileState::Rejected {
                line: Some(3),
                reason: "line 3: bad".into(),
            },
            clients: vec![],
            agents: vec![],
            new_agents: tidings_core::settings::NewAgents::Ask,
            webhooks: WebhooksState::default(),
            paused_until_ms: Some(1),
            full_disk_access: FullDiskAccess::Stale {
                last_granted: "0.1.0".into(),
            },
            contacts: ContactsState {
                stores_read: 1,
                problem: Some("x.abcddb: locked".into()),
            },
        };
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<State>(&text).unwrap(), state);
    }
}
