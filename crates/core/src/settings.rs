//! The user's settings: which event types are on and which senders may ever reach an agent.
//!
//! Saved as TOML (`settings.toml` in the config dir, chosen by the caller). Every default lives
//! in `Default`: both types off, no allowlist, the loopback HTTP endpoint off. A file that does
//! not parse is an error that names the line, never a silent reset. The file is read only if it
//! is a regular file of at most [`MAX_SETTINGS_BYTES`], so a FIFO or a huge file cannot wedge
//! a reload.

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::event::EventType;
use crate::filter::SenderPattern;

mod edit;

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
}

impl Default for NotificationSettings {
    fn default() -> NotificationSettings {
        NotificationSettings {
            enabled: true,
            first_subscription: true,
            full_disk_access: true,
            store_rebuilt: true,
            settings_rejected: true,
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
}

impl NotificationKind {
    /// Every kind, in the order the window lists them.
    pub const ALL: [NotificationKind; 4] = [
        NotificationKind::FirstSubscription,
        NotificationKind::FullDiskAccess,
        NotificationKind::StoreRebuilt,
        NotificationKind::SettingsRejected,
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
        }
    }

    /// The switch of `kind`, to change it.
    pub fn switch_mut(&mut self, kind: NotificationKind) -> &mut bool {
        match kind {
            NotificationKind::FirstSubscription => &mut self.first_subscription,
            NotificationKind::FullDiskAccess => &mut self.full_disk_access,
            NotificationKind::StoreRebuilt => &mut self.store_rebuilt,
            NotificationKind::SettingsRejected => &mut self.settings_rejected,
        }
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
    /// subdomains) or prefixes ending in `*`. Empty means no allowlist: clients must then name
    /// their senders themselves.
    pub allow: Vec<AllowEntry>,
    /// A row dated more than this many days before it appeared is backfill (an iCloud sync,
    /// an added account), not news, and is not delivered. `0` turns the guard off.
    #[serde(deserialize_with = "backfill_days")]
    pub backfill_days: u32,
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

/// One allowlist entry, validated when the file is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AllowEntry(pub SenderPattern);

impl TryFrom<String> for AllowEntry {
    type Error = crate::filter::PatternError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        SenderPattern::parse_allow(&s).map(AllowEntry)
    }
}

impl From<AllowEntry> for String {
    fn from(e: AllowEntry) -> String {
        e.0.to_string()
    }
}

/// Why settings could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file exists but could not be read, or could not be written.
    #[error("settings file {path}: {source}")]
    Io {
        /// The settings file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid settings; the message names the line and column.
    #[error("settings file {path} is invalid: {message}")]
    Invalid {
        /// The settings file.
        path: PathBuf,
        /// The parser's full diagnostic: line and column, the offending line, the reason.
        message: String,
        /// The 1-based line it names, when it names one.
        line: Option<usize>,
        /// The 1-based column (in characters) on that line, when it names one.
        column: Option<usize>,
        /// The reason alone, without the quoted line.
        reason: String,
    },
    /// The path is not a regular file (after following symlinks): a FIFO, a directory, a
    /// device. Reading one could block forever, so it is refused.
    #[error("settings file {path} is {kind}, not a regular file; replace it with a regular file")]
    NotRegular {
        /// The settings file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// The file is larger than [`MAX_SETTINGS_BYTES`].
    #[error(
        "settings file {path} is larger than the 1 MiB limit ({MAX_SETTINGS_BYTES} bytes); \
         settings fit in a few kilobytes, so check that this is the right file"
    )]
    TooLarge {
        /// The settings file.
        path: PathBuf,
    },
}

/// The largest settings file read (1 MiB); settings are a few hundred bytes.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Keys of the settings file: a parser reason quoting only these quotes no user values.
const KEYS: &[&str] = &[
    "mail",
    "messages",
    "http",
    "enabled",
    "allow",
    "backfill_days",
    "listen",
    "allowed_origins",
    "notifications",
    "first_subscription",
    "full_disk_access",
    "store_rebuilt",
    "settings_rejected",
];

impl SettingsError {
    /// One line for `tidings status` and for people: the file's name, the line and the
    /// parser's reason, without any value from the file (the reason is left out when it
    /// quotes one, as an allowlist entry or an address would be).
    pub fn summary(&self) -> String {
        match self {
            SettingsError::Invalid {
                path, line, reason, ..
            } => {
                let name = file_name(path);
                let at = line.map_or_else(|| name.clone(), |l| format!("{name} line {l}"));
                format!("{at}: {}", without_values(reason))
            }
            SettingsError::Io { path, source } => {
                format!("{}: {}", file_name(path), source.kind())
            }
            SettingsError::NotRegular { path, kind } => {
                format!("{} is {kind}, not a regular file", file_name(path))
            }
            SettingsError::TooLarge { path } => {
                format!("{} is larger than the 1 MiB limit", file_name(path))
            }
        }
    }

    /// The 1-based line the error names, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            SettingsError::Invalid { line, .. } => *line,
            _ => None,
        }
    }

    /// The 1-based column (in characters) the error names, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            SettingsError::Invalid { column, .. } => *column,
            _ => None,
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, as an editor shows
/// them; an offset past the end or inside a character counts from the character it falls in.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A parser reason with every value from the file replaced by `…`, so the reason can always be
/// shown (the user needs it to fix the file) and no address or name is. serde quotes values in
/// `"…"` or `'…'` and names in `` `…` ``: our own keys, TOML punctuation and the user's name
/// for an unknown key (never a value) are kept.
fn without_values(reason: &str) -> String {
    let unknown_key = reason.starts_with("unknown field");
    let mut out = String::new();
    for (i, part) in reason.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(&without_quoted(part));
            continue;
        }
        let ours = KEYS.contains(&part)
            || (part.len() == 1 && part.chars().all(|c| c.is_ascii_punctuation()))
            || (unknown_key
                && i == 1
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        out.push('`');
        out.push_str(if ours { part } else { "…" });
        out.push('`');
    }
    out
}

/// `text` with each `"…"` or `'…'` span replaced by `"…"` (an unclosed quote hides the rest).
fn without_quoted(text: &str) -> String {
    let mut out = String::new();
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            Some(q) if c == q => {
                out.push_str("\"…\"");
                open = None;
            }
            Some(_) => {}
            None if c == '"' || c == '\'' => open = Some(c),
            None => out.push(c),
        }
    }
    if open.is_some() {
        out.push_str("\"…");
    }
    out
}

const HEADER: &str = "\
# Tidings settings. Edited by the Tidings menu; changes apply while Tidings runs.
# [mail] is mail.received, [messages] is messages.received.
#   enabled = true|false      off until you turn it on
#   allow = [\"example.com\", \"ana@example.org\", \"+12025550143\", \"+120255501*\"]
#            senders that may ever reach an agent: addresses, phone numbers, domains (with
#            subdomains), or prefixes ending in *. Empty: each client must name its senders.
# [http] is the loopback Streamable HTTP endpoint (docs/http.md).
#   enabled = true|false      off until you turn it on
#   listen = \"127.0.0.1:3917\" a loopback address and port
#   allowed_origins = []      browser origins allowed to call it; empty refuses them all
# backfill_days = 7 (in [mail] or [messages]): a row dated more than this many days before
#   it appeared (an iCloud sync, an added account) is not delivered; 0 delivers everything.
# [notifications] enabled = true|false   whether Tidings may notify you at all, and one
#   switch per kind: first_subscription, full_disk_access, store_rebuilt, settings_rejected
";

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

    /// The allowlist of a type as patterns.
    pub fn allowlist(&self, ty: EventType) -> Vec<SenderPattern> {
        self.for_type(ty)
            .allow
            .iter()
            .map(|e| e.0.clone())
            .collect()
    }

    /// Parse settings from TOML text; `path` is only used in the error. The error keeps the
    /// parser's diagnostic whole, lines included (it points at the column).
    pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|span| line_column(text, span.start));
            SettingsError::Invalid {
                path: path.to_owned(),
                message: e.to_string().trim_end().to_owned(),
                line: at.map(|(line, _)| line),
                column: at.map(|(_, column)| column),
                reason: e.message().trim_end().replace('\n', "; "),
            }
        })
    }

    /// Parse the bytes [`Settings::read`] returned; text that is not UTF-8 is invalid.
    pub fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Settings, SettingsError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Settings::parse(text, path),
            Err(e) => {
                let at = e.valid_up_to();
                // The bytes before `at` are valid UTF-8: that is what `valid_up_to` means.
                let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
                let (line, column) = line_column(valid, at);
                Err(SettingsError::Invalid {
                    path: path.to_owned(),
                    message: format!("byte {at} is not UTF-8; save the file as UTF-8 text"),
                    line: Some(line),
                    column: Some(column),
                    reason: "not UTF-8 text".to_owned(),
                })
            }
        }
    }

    /// The bytes of `path`, `None` when it does not exist. Refuses what is not a regular
    /// file after following symlinks (checked on the opened file, which is opened
    /// non-blocking, so a FIFO can neither block the open nor the read) and anything larger
    /// than [`MAX_SETTINGS_BYTES`].
    pub fn read(path: &Path) -> Result<Option<Vec<u8>>, SettingsError> {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let io = |source| SettingsError::Io {
            path: path.to_owned(),
            source,
        };
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let meta = file.metadata().map_err(io)?;
        let ft = meta.file_type();
        if !ft.is_file() {
            let kind = if ft.is_fifo() {
                "a FIFO"
            } else if ft.is_dir() {
                "a directory"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "a device"
            };
            return Err(SettingsError::NotRegular {
                path: path.to_owned(),
                kind,
            });
        }
        if meta.len() > MAX_SETTINGS_BYTES {
            return Err(SettingsError::TooLarge {
                path: path.to_owned(),
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // Bounded even if the file grows while we read.
        file.take(MAX_SETTINGS_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_SETTINGS_BYTES {
            return Err(SettingsError::TooLarge {
                path: path.to_owned(),
            });
        }
        Ok(Some(bytes))
    }

    /// Read `path`; a missing file gives the defaults (nothing on), any other failure an error.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        match Settings::read(path)? {
            Some(bytes) => Settings::parse_bytes(&bytes, path),
            None => Ok(Settings::default()),
        }
    }

    /// Write the defaults, with the comment header, when `path` does not exist yet; true
    /// when it wrote them (a first run).
    pub fn create_if_missing(path: &Path) -> Result<bool, SettingsError> {
        if Settings::read(path)?.is_some() {
            return Ok(false);
        }
        Settings::default().save(path)?;
        Ok(true)
    }

    /// Write to `path` atomically (a sibling temp file renamed over it), creating the
    /// directory. A file that is there and parses is edited in place: only the keys whose
    /// values changed are rewritten, so its comments, order and formatting survive
    /// (`settings/edit.rs`). A new file, or one that does not parse (the settings in force
    /// are the last good ones), is written whole, with the comment header.
    pub fn save(&self, path: &Path) -> Result<(), SettingsError> {
        let io = |source| SettingsError::Io {
            path: path.to_owned(),
            source,
        };
        let in_place = Settings::read(path)?
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                let old = Settings::parse(&text, path).ok()?;
                edit::edited(&text, &old, self)
            });
        let text = if let Some(text) = in_place {
            text
        } else {
            let body = toml::to_string_pretty(self).map_err(|e| SettingsError::Invalid {
                path: path.to_owned(),
                message: e.to_string(),
                line: None,
                column: None,
                reason: e.to_string(),
            })?;
            format!("{HEADER}\n{body}")
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_everything_off() {
        let s = Settings::parse("", Path::new("s.toml")).unwrap();
        assert!(!s.mail.enabled && !s.messages.enabled);
        assert!(s.mail.allow.is_empty());
    }

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/settings.toml");
        let mut s = Settings::default();
        s.mail.enabled = true;
        s.mail.allow = vec![
            AllowEntry(SenderPattern::parse_allow("example.com").unwrap()),
            AllowEntry(SenderPattern::parse_allow("+120255501*").unwrap()),
        ];
        s.save(&path).unwrap();
        assert_eq!(Settings::load(&path).unwrap(), s);
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
    fn a_missing_file_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Settings::load(&dir.path().join("none.toml")).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let text = "[mail]\nenabled = true\nallow = [\"example.com\"\n";
        let err = Settings::parse(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") || err.contains("line 4"), "{err}");
    }

    #[test]
    fn a_bad_allow_entry_names_its_line() {
        let text = "[mail]\nenabled = true\n\n[messages]\nallow = [\"+1202*\", \"everyone\"]\n";
        let err = Settings::parse(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 5"), "{err}");
        assert!(err.contains("everyone"), "{err}");
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
    fn multi_line_diagnostics_keep_their_lines() {
        let text = "[mail]\nenabled = maybe\n";
        let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("line 2, column 11\n"), "{shown}");
        assert!(shown.contains("\n2 | enabled = maybe\n"), "{shown}");
        assert_eq!(err.line(), Some(2));
    }

    #[test]
    fn the_summary_names_the_line_and_never_a_value() {
        let summary = |text: &str| {
            Settings::parse(text, Path::new("/c/settings.toml"))
                .unwrap_err()
                .summary()
        };
        assert_eq!(
            summary("[mail]\nenabled = maybe\n"),
            "settings.toml line 2: string values must be quoted, expected literal string"
        );
        assert_eq!(
            summary("[mail]\nalow = []\n"),
            "settings.toml line 2: unknown field `alow`, expected one of `enabled`, `allow`, \
             `backfill_days`"
        );
        // A reason that quotes a value keeps its words, not the value.
        let s = summary("[mail]\n\n\nallow = [\"x\", \"secret@example.com\", \"mom\"]\n");
        assert_eq!(
            s,
            "settings.toml line 4: `…` is not an address, a phone number, a domain or a prefix \
             ending in `*`"
        );
        let s = summary("[mail]\nenabled = \"ana@example.com\"\n");
        assert_eq!(
            s,
            "settings.toml line 2: invalid type: string \"…\", expected a boolean"
        );
        let s = summary("[messages]\nallow = [\"+1202*\", \"mom\"]\n");
        assert!(!s.contains("mom"), "{s}");
    }

    #[test]
    fn a_fifo_or_a_symlink_to_one_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("settings.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // No writer ever opens it: a blocking open or read would hang this test.
        let err = Settings::load(&fifo).unwrap_err();
        assert!(
            matches!(err, SettingsError::NotRegular { kind: "a FIFO", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let err = Settings::load(&link).unwrap_err();
        assert!(matches!(err, SettingsError::NotRegular { .. }), "{err}");
        let err = Settings::load(dir.path()).unwrap_err();
        assert!(matches!(
            err,
            SettingsError::NotRegular {
                kind: "a directory",
                ..
            }
        ));
    }

    #[test]
    fn a_file_over_one_mebibyte_is_refused_naming_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        let mut text = "[mail]\n".to_owned();
        text.push_str(&"#".repeat(usize::try_from(MAX_SETTINGS_BYTES).unwrap()));
        std::fs::write(&path, text).unwrap();
        let err = Settings::load(&path).unwrap_err().to_string();
        assert!(err.contains("1 MiB") && err.contains("1048576"), "{err}");
        // Exactly at the limit is fine.
        std::fs::write(
            &path,
            "#".repeat(usize::try_from(MAX_SETTINGS_BYTES).unwrap()),
        )
        .unwrap();
        assert_eq!(Settings::load(&path).unwrap(), Settings::default());
    }

    #[test]
    fn text_that_is_not_utf8_names_its_line() {
        let err =
            Settings::parse_bytes(b"[mail]\nallow = [\"\xff\"]\n", Path::new("s")).unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert_eq!(err.column(), Some(11), "after `allow = [\"`");
        assert_eq!(err.summary(), "s line 2: not UTF-8 text");
        let err = Settings::parse_bytes(b"# \xc3\xa9\n\xc3\xa9\xff", Path::new("s")).unwrap_err();
        assert_eq!(
            (err.line(), err.column()),
            (Some(2), Some(2)),
            "columns count characters"
        );
    }

    #[test]
    fn the_line_and_column_are_data_and_agree_with_the_message() {
        for text in [
            "[mail]\nenabled = maybe\n",
            "[mail]\n# café ☕\nallow = [\"é\", \"not a pattern\"]\n",
            "  [mail]\n  alow = []\n",
            "[mail]\nenabled = true\n[mail]\n",
            "é = 1",
        ] {
            let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
            let SettingsError::Invalid {
                line: Some(line),
                column: Some(column),
                ref message,
                ..
            } = err
            else {
                panic!("no position in {err:?}")
            };
            assert_eq!((err.line(), err.column()), (Some(line), Some(column)));
            assert!(
                message.contains(&format!("line {line}, column {column}\n")),
                "{text:?}: line {line}, column {column} vs {message}"
            );
        }
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
