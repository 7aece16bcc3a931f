//! The user's settings: which event types are on and which senders may ever reach an agent.
//!
//! Saved as TOML (`settings.toml` in the config dir, chosen by the caller). Every default lives
//! in `Default`: both types off, no allowlist, the loopback HTTP endpoint off. A file that does not parse is an error that names
//! the line, never a silent reset.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::event::EventType;
use crate::filter::SenderPattern;

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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventSettings {
    /// Whether clients may see and subscribe to the type at all. Off until the user turns it on.
    pub enabled: bool,
    /// Senders that may ever reach an agent: addresses, phone numbers, domains (with their
    /// subdomains) or prefixes ending in `*`. Empty means no allowlist: clients must then name
    /// their senders themselves.
    pub allow: Vec<AllowEntry>,
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
        /// The parser's message, with line and column.
        message: String,
    },
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

    /// Parse settings from TOML text; `path` is only used in the error.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
        toml::from_str(text).map_err(|e| SettingsError::Invalid {
            path: path.to_owned(),
            message: e.to_string().trim_end().replace('\n', " "),
        })
    }

    /// Read `path`; a missing file gives the defaults (nothing on), any other failure an error.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Settings::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(source) => Err(SettingsError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Write to `path` atomically (a sibling temp file renamed over it), creating the directory.
    pub fn save(&self, path: &Path) -> Result<(), SettingsError> {
        let io = |source| SettingsError::Io {
            path: path.to_owned(),
            source,
        };
        let body = toml::to_string_pretty(self).map_err(|e| SettingsError::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, format!("{HEADER}\n{body}")).map_err(io)?;
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
}
