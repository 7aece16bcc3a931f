//! `webhooks.json` beside settings.toml: every subscription, its secret and its cursor, and
//! the verified (principal, url) pairs, so delivery resumes where it stopped after a restart.
//! Written whole, atomically and owner-only (it holds the secrets), after every change.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tidings_core::{Cursor, EventType};
use tidings_webhook::{CallbackUrl, Category, Secret};

use super::hook::{Hook, HookState, Owner};

/// The file's name, beside settings.toml.
pub const FILE_NAME: &str = "webhooks.json";

/// The most bytes read back: a thousand subscriptions per agent of a few agents fit easily.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The file as written.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct File {
    pub version: u32,
    pub subscriptions: Vec<Record>,
    /// (principal, url) pairs whose endpoint answered the verification challenge.
    pub verified: Vec<(String, String)>,
}

/// One subscription as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub id: String,
    pub principal: String,
    pub agent_id: String,
    pub agent_name: String,
    pub name: String,
    pub arguments: Map<String, Value>,
    pub url: String,
    pub secret: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_secret: Option<(String, u64)>,
    pub refresh_before_ms: Option<u64>,
    pub cursor: Option<String>,
    #[serde(default)]
    pub requested_cursor: Option<String>,
    #[serde(default)]
    pub max_age_ms: Option<u64>,
    pub active: bool,
    pub last_delivery_ms: Option<u64>,
    pub last_error: Option<Category>,
    pub failed_since_ms: Option<u64>,
    pub delivered: u64,
    #[serde(default)]
    pub gap: bool,
}

/// Where the file lives for `settings_path`.
pub fn path_beside(settings_path: &Path) -> PathBuf {
    settings_path.with_file_name(FILE_NAME)
}

impl Record {
    /// `hook` as written.
    pub fn of(hook: &Hook) -> Record {
        let s = hook.state();
        Record {
            id: hook.id.clone(),
            principal: hook.owner.key.clone(),
            agent_id: hook.owner.id.clone(),
            agent_name: hook.owner.name.clone(),
            name: hook.event_type.name().to_owned(),
            arguments: hook.arguments.clone(),
            url: hook.url.as_str().to_owned(),
            secret: s.secret.to_text(),
            previous_secret: s.previous.as_ref().map(|(k, t)| (k.to_text(), *t)),
            refresh_before_ms: s.refresh_before_ms,
            cursor: s.cursor.map(|c| c.to_string()),
            requested_cursor: s.requested.0.map(|c| c.to_string()),
            max_age_ms: s.requested.1,
            active: s.active,
            last_delivery_ms: s.last_delivery_ms,
            last_error: s.last_error,
            failed_since_ms: s.failed_since_ms,
            delivered: s.delivered,
            gap: s.gap,
        }
    }

    /// The subscription it records; `None` for a record this version cannot read (a type or
    /// URL no longer valid, a damaged secret), which is then dropped with a log line.
    pub fn hook(self) -> Option<Arc<Hook>> {
        let event_type = EventType::from_name(&self.name)?;
        let url = CallbackUrl::parse(&self.url).ok()?;
        let secret = Secret::parse(&self.secret).ok()?;
        let previous = self
            .previous_secret
            .and_then(|(k, t)| Secret::parse(&k).ok().map(|k| (k, t)));
        let cursor = |c: Option<String>| c.and_then(|c| c.parse::<Cursor>().ok());
        let state = HookState {
            secret,
            previous,
            refresh_before_ms: self.refresh_before_ms,
            cursor: cursor(self.cursor),
            requested: (cursor(self.requested_cursor), self.max_age_ms),
            active: self.active,
            last_delivery_ms: self.last_delivery_ms,
            last_error: self.last_error,
            failed_since_ms: self.failed_since_ms,
            delivered: self.delivered,
            gap: self.gap,
        };
        let owner = Owner {
            key: self.principal,
            id: self.agent_id,
            name: self.agent_name,
        };
        Some(Hook::new(
            self.id,
            owner,
            event_type,
            self.arguments,
            url,
            state,
        ))
    }
}

/// Read the file; a missing one is empty. A file that cannot be read or parsed is an error
/// naming it (the daemon then starts with no subscriptions and keeps the file as it was).
pub fn read(path: &Path) -> Result<File, String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes; it was left as it is",
            path.display()
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{} does not parse: {e}", path.display()))
}

/// Write `file` whole, atomically, owner-only.
pub fn write(path: &Path, file: &File) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
    tidings_platform::files::write_atomic(path, &bytes, 0o600)
}
