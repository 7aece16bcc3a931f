//! The one observable model of the running engine: [`State`], what `tidings/status` answers,
//! what `tidings status --json` prints and what the menu-bar app shows. A leaf: plain serde
//! types, and the [`Board`] where the parts that are not derived from elsewhere (the HTTP
//! endpoint, the settings file) are reported and every change is signalled.
//!
//! Any local client (an agent too) may read `tidings/status`, so nothing here is personal
//! data: paths are home-relative, allowlists and filters are counts per kind, never values,
//! and deliveries (which name senders) are not part of it (docs/decisions/engine-api.md).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tidings_core::EventType;
use tokio::sync::watch;

use crate::sync::lock;

/// Everything the engine knows that a person or a tool may want to see, as one value.
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
    /// Until when every type is paused (ms since the Unix epoch): clients see every type off
    /// while `types` still says what is configured. `None`: not paused.
    #[serde(default)]
    pub paused_until_ms: Option<u64>,
    /// Whether Tidings has Full Disk Access, from the stores' last checks.
    #[serde(default)]
    pub full_disk_access: FullDiskAccess,
}

/// Full Disk Access, as the stores' checks show it (macOS has no API that tells).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum FullDiskAccess {
    /// No store was read or refused yet (not checked, or no store there).
    #[default]
    Unknown,
    /// A store was read, none refused.
    Granted,
    /// A store was refused (EPERM): Tidings is not in the Full Disk Access list, or is
    /// switched off there.
    Missing,
    /// A store is refused now, but an earlier version of Tidings could read one: the grant
    /// went stale with an update (a new signature); remove Tidings from the list and add it
    /// again.
    Stale {
        /// The version that last had access.
        last_granted: String,
    },
}

impl FullDiskAccess {
    /// What to do, in one sentence, or `None` when nothing is to be done.
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            FullDiskAccess::Missing => Some(
                "Open System Settings > Privacy & Security > Full Disk Access, turn Tidings \
                 on (add it with + if it is not listed), then restart Tidings.",
            ),
            FullDiskAccess::Stale { .. } => Some(crate::notices::STALE_GRANT_FIX),
            FullDiskAccess::Unknown | FullDiskAccess::Granted => None,
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

/// One event type: whether it is on, who may reach agents through it, and its store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeState {
    /// The wire name (`mail.received`).
    pub name: String,
    /// Whether clients may see it.
    pub enabled: bool,
    /// The sender allowlist, as counts per kind.
    pub allowlist: AllowlistSummary,
    /// The backfill window in days (`0`: off).
    pub backfill_days: u32,
    /// The store behind it.
    pub store: StoreState,
}

/// How many allowlist entries of each kind are set; never the entries themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowlistSummary {
    /// Exact email addresses.
    pub addresses: usize,
    /// Exact phone numbers or other handles.
    pub handles: usize,
    /// Domains (with their subdomains).
    pub domains: usize,
    /// Prefixes (`+1202*`).
    pub prefixes: usize,
}

impl AllowlistSummary {
    /// All entries.
    pub fn total(&self) -> usize {
        self.addresses + self.handles + self.domains + self.prefixes
    }

    /// "2 addresses, 1 domain", or "none".
    pub fn describe(&self) -> String {
        let parts = [
            (self.addresses, "address", "addresses"),
            (self.handles, "handle", "handles"),
            (self.domains, "domain", "domains"),
            (self.prefixes, "prefix", "prefixes"),
        ];
        let text: Vec<String> = parts
            .into_iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect();
        if text.is_empty() {
            "none".to_owned()
        } else {
            text.join(", ")
        }
    }
}

/// One store: where it is, whether it can be read, and what the engine saw in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreState {
    /// The store file, home-relative.
    pub path: String,
    /// Whether it can be read, from the last check (else the last scan).
    pub access: StoreAccess,
    /// The last check's or scan's error message (home-relative), when not `ok`.
    pub problem: Option<String>,
    /// The last scan's error (a poll or a stream step), home-relative; `None` when the last
    /// scan worked or none ran yet.
    pub last_scan_error: Option<String>,
    /// When the store last changed (ms since the Unix epoch), as seen since start.
    pub last_change_ms: Option<u64>,
    /// Distinct rows skipped as backfill since start.
    pub backfilled: u64,
    /// Rows skipped because they could not be read, since start.
    pub unreadable_rows: u64,
}

/// Whether a store can be read, in the terms its fix is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreAccess {
    /// Not checked yet (the first check runs at start).
    NotChecked,
    /// Found and readable.
    Ok,
    /// No file at the path (Mail or Messages never ran, or another path).
    Missing,
    /// The OS refused to open it: Full Disk Access is missing.
    PermissionDenied,
    /// Readable, but not the schema we know (a newer macOS).
    SchemaProblem,
    /// Another failure (locked, corrupt, empty, I/O).
    Unreadable,
}

impl StoreAccess {
    /// From a core `StoreError::reason()`.
    pub fn from_reason(reason: &str) -> StoreAccess {
        match reason {
            "store_missing" => StoreAccess::Missing,
            "permission_denied" => StoreAccess::PermissionDenied,
            "store_schema" => StoreAccess::SchemaProblem,
            _ => StoreAccess::Unreadable,
        }
    }
}

/// The loopback HTTP endpoint, as its supervisor reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum HttpEndpointState {
    /// Not serving: off in settings, not supervised, or shut down.
    Off,
    /// The first start has not settled yet (the keychain may be slow).
    Starting,
    /// Serving at `url`.
    Serving {
        /// `http://127.0.0.1:PORT/mcp`.
        url: String,
        /// Whether requests need no token (`--demo --no-auth`).
        no_auth: bool,
    },
    /// Asked for, but could not start; the next settings change retries.
    Failed {
        /// The address asked for.
        listen: String,
        /// Why (names no secret).
        error: String,
    },
}

impl HttpEndpointState {
    /// One line for `tidings status`.
    pub fn describe(&self) -> String {
        match self {
            HttpEndpointState::Off => "off".to_owned(),
            HttpEndpointState::Starting => "starting".to_owned(),
            HttpEndpointState::Serving { url, no_auth } => format!(
                "serving at {url}{}",
                if *no_auth {
                    " (no token: --no-auth)"
                } else {
                    ""
                }
            ),
            HttpEndpointState::Failed { listen, error } => {
                format!("not serving on {listen}: {error}")
            }
        }
    }
}

/// Whether the settings in force are the file's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum SettingsFileState {
    /// The file's content is in force (or there is no file: the defaults).
    Ok,
    /// The file's current content was refused; the last good settings stay in force.
    Rejected {
        /// The line at fault, when known.
        line: Option<usize>,
        /// Why, naming the line and the limit, never a value from the file.
        reason: String,
    },
}

impl SettingsFileState {
    /// `ok`, or why the file is refused and what is used instead.
    pub fn describe(&self) -> String {
        match self {
            SettingsFileState::Ok => "ok".to_owned(),
            SettingsFileState::Rejected { reason, .. } => {
                format!("{reason}; using the last good settings")
            }
        }
    }
}

/// How a client is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The Unix socket (directly or through `tidings-mcp`).
    Socket,
    /// The loopback HTTP endpoint: all requests made with one bearer token.
    Http,
}

/// One connected client and what it listens to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientState {
    /// The engine's id for it (for `Handle::revoke`); never reused while the engine runs.
    pub id: u64,
    /// The name it announced (`clientInfo.name`), cut to 64 characters.
    pub name: Option<String>,
    /// The version it announced.
    pub version: Option<String>,
    /// How it is connected.
    pub transport: Transport,
    /// When it connected (ms since the Unix epoch).
    pub connected_since_ms: u64,
    /// Its process id, where the OS tells (socket connections).
    pub pid: Option<i32>,
    /// Whether it was revoked (it gets Forbidden until it reconnects).
    pub revoked: bool,
    /// Its subscriptions: open streams, and the polls and tool calls it made.
    pub subscriptions: Vec<SubscriptionState>,
}

/// How a client receives events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// An open `events/stream`.
    Push,
    /// `events/poll` calls.
    Poll,
    /// The pull tools (`tidings_check`, `tidings_wait`).
    Tools,
    /// A host channel fed by the shim.
    Channel,
}

/// One subscription of a client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionState {
    /// The event type's wire name.
    pub event_type: String,
    /// The filter, as the number of values per argument (`{"from": 2}`), never the values.
    pub filter: BTreeMap<String, usize>,
    /// How it receives.
    pub mode: Mode,
    /// Events delivered through it.
    pub delivered: u64,
    /// When it last delivered (ms since the Unix epoch).
    pub last_delivery_ms: Option<u64>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where the parts of [`State`] that nothing else holds are reported, and where every change
/// is signalled (the engine rebuilds its `State` on each signal, coalesced).
pub(crate) struct Board {
    changes: watch::Sender<u64>,
    http: Mutex<HttpEndpointState>,
    settings_file: Mutex<SettingsFileState>,
}

impl Default for Board {
    fn default() -> Board {
        Board {
            changes: watch::Sender::new(0),
            http: Mutex::new(HttpEndpointState::Off),
            settings_file: Mutex::new(SettingsFileState::Ok),
        }
    }
}

impl Board {
    /// Something the state shows changed.
    pub(crate) fn changed(&self) {
        self.changes.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// A receiver that changes with every [`changed`](Board::changed).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The HTTP supervisor reports the endpoint's state.
    pub(crate) fn set_http(&self, state: HttpEndpointState) {
        *lock(&self.http) = state;
        self.changed();
    }

    pub(crate) fn http(&self) -> HttpEndpointState {
        lock(&self.http).clone()
    }

    /// The settings watcher (or a save) reports the file's state.
    pub(crate) fn set_settings_file(&self, state: SettingsFileState) {
        *lock(&self.settings_file) = state;
        self.changed();
    }

    pub(crate) fn settings_file(&self) -> SettingsFileState {
        lock(&self.settings_file).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_count_kinds_and_name_no_value() {
        let s = AllowlistSummary {
            addresses: 3,
            domains: 1,
            ..AllowlistSummary::default()
        };
        assert_eq!(s.describe(), "3 addresses, 1 domain");
        assert_eq!(s.total(), 4);
        assert_eq!(AllowlistSummary::default().describe(), "none");
    }

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
            paused_until_ms: None,
            full_disk_access: FullDiskAccess::Unknown,
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
            paused_until_ms: Some(1),
            full_disk_access: FullDiskAccess::Stale {
                last_granted: "0.1.0".into(),
            },
        };
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<State>(&text).unwrap(), state);
    }
}
