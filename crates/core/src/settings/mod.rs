//! The user's settings: which event types are on and which senders may ever reach an agent.
//!
//! The model (this file: every default lives in `Default`: both types off, no allowlist, the
//! loopback HTTP endpoint off), its errors (`settings/error.rs`), the file it is saved in
//! (`settings/file.rs`: read, parse, the text to write), the in-place edit that keeps the
//! file's comments (`settings/edit.rs`), which changes widen what agents see
//! (`settings/widen.rs`), each agent's grant (`settings/agents.rs`), and the destinations
//! webhooks may post to (`settings/webhooks.rs`). Core never writes the
//! file: the caller writes the text [`Settings::file_text`] gives it.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::event::{Category, EventType};
use crate::filter::SenderPattern;

mod agents;
mod allow;
mod edit;
mod error;
mod file;
mod webhooks;
mod widen;

pub use agents::{
    Access, AgentDecision, AgentGrant, AgentsSettings, MAX_AGENT_ID, MAX_KNOWN_AGENTS, NewAgents,
    TypeGrant, valid_id,
};
pub use allow::{AllowEntry, AllowEntryError, ContactsInForce};
pub use error::SettingsError;
pub use webhooks::{MAX_DESTINATIONS, WebhookSettings};

/// Everything the user decides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// `mail.received`.
    pub mail: EventSettings,
    /// `messages.received`.
    pub messages: EventSettings,
    /// The loopback Streamable HTTP endpoint (`[http]`).
    pub http: HttpSettings,
    /// Named filters for `tidings-mcp --channel --preset NAME` (`[channel.presets.NAME]`).
    #[serde(skip_serializing_if = "ChannelSettings::is_empty")]
    pub channel: ChannelSettings,
    /// The app's notifications (`[notifications]`).
    pub notifications: NotificationSettings,
    /// Each agent's grant, and what a new one gets (`[agents]`).
    pub agents: AgentsSettings,
    /// The app's daily check for a newer version (`[updates]`).
    pub updates: UpdateSettings,
    /// Where webhooks may post events (`[webhooks]`): the user's list of destinations.
    #[serde(skip_serializing_if = "WebhookSettings::is_empty")]
    pub webhooks: WebhookSettings,
    /// The Contacts that person and group entries resolve against: loaded by the daemon,
    /// never saved.
    #[serde(skip)]
    pub contacts: ContactsInForce,
}

/// The desktop notifications: a master switch and one per kind, all on by default. The
/// engine decides what to notify (docs/decisions/doctor.md, "Notifications").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[allow(clippy::struct_excessive_bools)] // one switch per kind of notification
pub struct NotificationSettings {
    /// Whether Tidings may show notifications at all. On by default: they say what Tidings
    /// itself needs or does (Full Disk Access, a rejected settings file), never a message.
    pub enabled: bool,
    /// "Claude Code is now notified of mail from acme.com": a client's first subscription
    /// to a type.
    pub first_subscription: bool,
    /// A store an enabled type reads needs Full Disk Access.
    pub full_disk_access: bool,
    /// A store was rebuilt (Mail re-indexed): clients got a gap.
    pub store_rebuilt: bool,
    /// An edit of settings.toml was rejected; the last good settings stay in force.
    pub settings_rejected: bool,
    /// A program with no grant asks to receive events (the window shows the question
    /// whatever this says).
    pub agent_asks: bool,
}

impl Default for NotificationSettings {
    fn default() -> NotificationSettings {
        NotificationSettings {
            enabled: true,
            first_subscription: true,
            full_disk_access: true,
            store_rebuilt: true,
            settings_rejected: true,
            agent_asks: true,
        }
    }
}

/// The kinds of notification, each with its own switch in [`NotificationSettings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// A client's first subscription to a type.
    FirstSubscription,
    /// Full Disk Access is missing.
    FullDiskAccess,
    /// A store was rebuilt.
    StoreRebuilt,
    /// A settings edit was rejected.
    SettingsRejected,
    /// A program with no grant asks to receive events.
    AgentAsks,
}

impl NotificationKind {
    /// Every kind, in the order the window lists them.
    pub const ALL: [NotificationKind; 5] = [
        NotificationKind::FirstSubscription,
        NotificationKind::FullDiskAccess,
        NotificationKind::StoreRebuilt,
        NotificationKind::SettingsRejected,
        NotificationKind::AgentAsks,
    ];
}

impl NotificationSettings {
    /// Whether a notification of `kind` may be shown: the master switch and its own.
    pub fn allows(&self, kind: NotificationKind) -> bool {
        self.enabled && *self.switch(kind)
    }

    /// The switch of `kind` (not the master switch).
    pub fn switch(&self, kind: NotificationKind) -> &bool {
        match kind {
            NotificationKind::FirstSubscription => &self.first_subscription,
            NotificationKind::FullDiskAccess => &self.full_disk_access,
            NotificationKind::StoreRebuilt => &self.store_rebuilt,
            NotificationKind::SettingsRejected => &self.settings_rejected,
            NotificationKind::AgentAsks => &self.agent_asks,
        }
    }

    /// The switch of `kind`, to change it.
    pub fn switch_mut(&mut self, kind: NotificationKind) -> &mut bool {
        match kind {
            NotificationKind::FirstSubscription => &mut self.first_subscription,
            NotificationKind::FullDiskAccess => &mut self.full_disk_access,
            NotificationKind::StoreRebuilt => &mut self.store_rebuilt,
            NotificationKind::SettingsRejected => &mut self.settings_rejected,
            NotificationKind::AgentAsks => &mut self.agent_asks,
        }
    }
}

/// The app's update check (docs/decisions/updates.md). On by default: the check sends only
/// this copy's version and the Mac's architecture, so it is not a widening edit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateSettings {
    /// Whether the app asks the release feed once a day for a newer version (the menu's
    /// "Check for Updates…" asks whatever this says).
    pub check: bool,
}

impl Default for UpdateSettings {
    fn default() -> UpdateSettings {
        UpdateSettings { check: true }
    }
}

/// The Claude Code channel's presets. Only `tidings-mcp --channel` reads them (it parses the
/// same table itself, see docs/decisions/channel.md); the daemon validates them so a typo is
/// reported by `tidings status` rather than at the channel's start.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelSettings {
    /// Preset name to the filters it stands for.
    pub presets: std::collections::BTreeMap<String, ChannelPreset>,
}

impl ChannelSettings {
    /// No presets: the table is left out of a saved file.
    pub fn is_empty(&self) -> bool {
        self.presets.is_empty()
    }
}

/// What one channel preset delivers: the same choices as `tidings-mcp --channel`'s flags.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelPreset {
    /// Event type names (`mail.received`, `messages.received`); empty means both.
    #[serde(deserialize_with = "type_names")]
    pub types: Vec<String>,
    /// Sender addresses or phone numbers (the `from` argument).
    pub from: Vec<String>,
    /// Sender domains (the `domains` argument).
    pub domains: Vec<String>,
}

fn type_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    match names.iter().find(|n| EventType::from_name(n).is_none()) {
        Some(bad) => Err(serde::de::Error::custom(format!(
            "unknown event type `{bad}` in a channel preset; use mail.received or \
             messages.received"
        ))),
        None => Ok(names),
    }
}

/// The optional Streamable HTTP endpoint on the loopback interface. Every field applies live
/// (the endpoint starts, stops or moves), unless `tidings serve --http ADDR` holds it on for
/// the run. See docs/http.md.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Serve `POST /mcp` on `listen`, with a bearer token from the OS keychain. Off until
    /// the user turns it on (`tidings serve --http ADDR` turns it on for one run).
    pub enabled: bool,
    /// Where to listen: a loopback address and port. Anything else is refused (the endpoint
    /// then stays off, and the daemon says why).
    pub listen: SocketAddr,
    /// Browser origins (`scheme://host:port`) whose pages may call the endpoint. Empty: a
    /// request carrying any `Origin` header is refused, so no web page can reach it.
    pub allowed_origins: Vec<String>,
}

impl Default for HttpSettings {
    fn default() -> HttpSettings {
        HttpSettings {
            enabled: false,
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 3917)),
            allowed_origins: Vec::new(),
        }
    }
}

/// The settings of one event type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventSettings {
    /// Whether clients may see and subscribe to the type at all. Off until the user turns it on.
    pub enabled: bool,
    /// Senders that may ever reach an agent: addresses, phone numbers, domains (with their
    /// subdomains), prefixes ending in `*`, or people and groups from Contacts. Empty means
    /// no allowlist: clients must then name their senders themselves.
    pub allow: Vec<AllowEntry>,
    /// A row dated more than this many days before it appeared is backfill (an iCloud sync,
    /// an added account), not news, and is not delivered. `0` turns the guard off.
    #[serde(deserialize_with = "backfill_days")]
    pub backfill_days: u32,
    /// Add the sender's name from Contacts to events (`from.contact`), the pull tools, the
    /// channel and hook digests. Off until the user turns it on: the name is the user's own
    /// label for a person.
    pub contact_names: bool,
    /// The categories that may reach an agent, on top of the allowlist (a client's
    /// `categories` is narrowed to these); empty = every category. A message with no
    /// category counts as `primary`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
}

/// The backfill window when the file does not say.
pub const DEFAULT_BACKFILL_DAYS: u32 = 7;

/// The longest backfill window accepted (ten years).
pub const MAX_BACKFILL_DAYS: u32 = 3650;

impl Default for EventSettings {
    fn default() -> EventSettings {
        EventSettings {
            enabled: false,
            allow: Vec::new(),
            backfill_days: DEFAULT_BACKFILL_DAYS,
            contact_names: false,
            categories: Vec::new(),
        }
    }
}

impl EventSettings {
    /// The backfill window, `None` when the guard is off.
    pub fn backfill_window(&self) -> Option<Duration> {
        (self.backfill_days > 0)
            .then(|| Duration::from_secs(u64::from(self.backfill_days) * 86_400))
    }
}

fn backfill_days<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let days = i64::deserialize(d)?;
    u32::try_from(days)
        .ok()
        .filter(|&n| n <= MAX_BACKFILL_DAYS)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "backfill_days must be 0 (off) to {MAX_BACKFILL_DAYS} days"
            ))
        })
}

/// The largest settings file read (1 MiB); settings are a few hundred bytes.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

impl Settings {
    /// The settings of one event type.
    pub fn for_type(&self, ty: EventType) -> &EventSettings {
        match ty {
            EventType::MailReceived => &self.mail,
            EventType::MessagesReceived => &self.messages,
        }
    }

    /// Mutable access to the settings of one event type.
    pub fn for_type_mut(&mut self, ty: EventType) -> &mut EventSettings {
        match ty {
            EventType::MailReceived => &mut self.mail,
            EventType::MessagesReceived => &mut self.messages,
        }
    }

    /// The allowlist of a type as patterns, people entries expanded through the Contacts in
    /// force ([`AllowEntry::expand`]: an entry that resolves to nobody is
    /// [`SenderPattern::Nobody`], so the list stays a bound).
    pub fn allowlist(&self, ty: EventType) -> Vec<SenderPattern> {
        let mut out = Vec::new();
        for e in &self.for_type(ty).allow {
            e.expand(&self.contacts, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn defaults_are_everything_off() {
        let s = Settings::parse("", Path::new("s.toml")).unwrap();
        assert!(!s.mail.enabled && !s.messages.enabled);
        assert!(s.mail.allow.is_empty());
    }

    #[test]
    fn channel_presets_are_read_and_checked() {
        let text =
            "[channel.presets.work]\ntypes = [\"mail.received\"]\ndomains = [\"acme.com\"]\n";
        let s = Settings::parse(text, Path::new("s.toml")).unwrap();
        let work = &s.channel.presets["work"];
        assert_eq!(work.types, ["mail.received"]);
        assert_eq!(work.domains, ["acme.com"]);
        assert!(work.from.is_empty());

        let bad = "[channel.presets.work]\ntypes = [\"mail\"]\n";
        let err = Settings::parse(bad, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("`mail`"), "{err}");
        // Saved settings without presets keep their old shape.
        assert!(
            !toml::to_string(&Settings::default())
                .unwrap()
                .contains("channel")
        );
    }

    #[test]
    fn notifications_default_on_and_round_trip() {
        let s = Settings::parse("", Path::new("s")).unwrap();
        assert!(s.notifications.enabled);
        let s = Settings::parse("[notifications]\nenabled = false\n", Path::new("s")).unwrap();
        assert!(!s.notifications.enabled);
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("[notifications]\nenabled = false"), "{text}");
        assert!(Settings::parse("[notifications]\nsound = 1\n", Path::new("s")).is_err());
        // Each kind has its own switch, on by default, under the master switch.
        let s =
            Settings::parse("[notifications]\nstore_rebuilt = false\n", Path::new("s")).unwrap();
        assert!(s.notifications.allows(NotificationKind::FirstSubscription));
        assert!(!s.notifications.allows(NotificationKind::StoreRebuilt));
        let s = Settings::parse("[notifications]\nenabled = false\n", Path::new("s")).unwrap();
        assert!(
            NotificationKind::ALL
                .iter()
                .all(|k| !s.notifications.allows(*k))
        );
    }

    #[test]
    fn update_checks_default_on_and_round_trip() {
        let s = Settings::parse("", Path::new("s")).unwrap();
        assert!(s.updates.check);
        let s = Settings::parse("[updates]\ncheck = false\n", Path::new("s")).unwrap();
        assert!(!s.updates.check);
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("[updates]\ncheck = false"), "{text}");
        let err = Settings::parse("[updates]\nchannel = \"beta\"\n", Path::new("s"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `channel`"), "{err}");
        assert!(Settings::parse("[updates]\ncheck = \"daily\"\n", Path::new("s")).is_err());
    }

    #[test]
    fn http_is_off_on_loopback_3917_with_no_origins_by_default() {
        let s = Settings::parse("", Path::new("s.toml")).unwrap();
        assert!(!s.http.enabled);
        assert_eq!(s.http.listen, "127.0.0.1:3917".parse().unwrap());
        assert!(s.http.allowed_origins.is_empty());
        let text = "[http]\nenabled = true\nlisten = \"[::1]:4000\"\n\
                    allowed_origins = [\"http://localhost:5173\"]\n";
        let s = Settings::parse(text, Path::new("s.toml")).unwrap();
        assert!(s.http.enabled);
        assert_eq!(s.http.listen, "[::1]:4000".parse().unwrap());
        assert_eq!(s.http.allowed_origins, ["http://localhost:5173"]);
        let err = Settings::parse("[http]\nlisten = \"localhost\"\n", Path::new("s"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn a_wrong_type_or_unknown_key_is_an_error() {
        assert!(Settings::parse("[mail]\nenabled = \"yes\"\n", Path::new("s")).is_err());
        assert!(Settings::parse("[mail]\nalow = []\n", Path::new("s")).is_err());
    }

    #[test]
    fn categories_default_to_every_one_and_read_and_write_by_name() {
        let s = Settings::parse("[mail]\nenabled = true\n", Path::new("s")).unwrap();
        assert!(s.mail.categories.is_empty());
        assert!(!toml::to_string(&s).unwrap().contains("categories"));
        let text = "[mail]\ncategories = [\"primary\", \"transactions\"]\n";
        let s = Settings::parse(text, Path::new("s")).unwrap();
        assert_eq!(
            s.mail.categories,
            [Category::Primary, Category::Transactions]
        );
        let back = Settings::parse(&toml::to_string(&s).unwrap(), Path::new("s")).unwrap();
        assert_eq!(back, s);
        let err =
            Settings::parse("[messages]\ncategories = [\"social\"]\n", Path::new("s")).unwrap_err();
        assert!(err.to_string().contains("primary"), "{err}");
    }

    #[test]
    fn backfill_days_defaults_to_seven_and_is_bounded() {
        let s = Settings::parse("", Path::new("s")).unwrap();
        assert_eq!(s.mail.backfill_days, 7);
        assert_eq!(
            s.messages.backfill_window(),
            Some(Duration::from_secs(7 * 86_400))
        );
        let s = Settings::parse("[messages]\nbackfill_days = 0\n", Path::new("s")).unwrap();
        assert_eq!(s.messages.backfill_window(), None);
        for bad in ["-1", "3651", "99999999999"] {
            let err = Settings::parse(&format!("[mail]\nbackfill_days = {bad}\n"), Path::new("s"))
                .unwrap_err();
            assert!(
                err.to_string()
                    .contains("backfill_days must be 0 (off) to 3650"),
                "{err}"
            );
            assert_eq!(err.line(), Some(2));
        }
    }
}
