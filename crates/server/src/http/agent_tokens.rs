//! The agents' own bearer tokens (`tidings token create NAME`): one per agent, each the agent
//! `token:NAME` with its own grant in settings.toml. Kept as SHA-256 hashes in
//! `agent-tokens.json` beside settings.toml (mode 0600, written atomically), so the file
//! never holds a usable token; the token itself is printed once when made.
//!
//! The daemon reads the file again when its size or modification time changes, checked on a
//! request whose token is not the endpoint's own (and on `tidings/token/rotate`, which
//! `tidings token revoke` sends), and compares hashes in constant time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::token::{self, Token, TokenError};
use crate::sync::lock;

/// The name of the agent the endpoint's own (keychain) token stands for; no agent token may
/// take it.
pub const DEFAULT_TOKEN_AGENT: &str = "http";

/// The file's name, beside settings.toml.
pub const FILE_NAME: &str = "agent-tokens.json";

/// The longest agent token name.
pub const MAX_NAME: usize = 32;

/// The most agent tokens the file may hold.
pub const MAX_TOKENS: usize = 128;

/// The file's mode: the user's alone.
const FILE_MODE: u32 = 0o600;

/// One agent's token, as the file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToken {
    /// The agent's name (`token:NAME`).
    pub name: String,
    /// The token's SHA-256, lower-case hex.
    pub sha256: String,
    /// When it was made (ms since the Unix epoch).
    pub created_ms: u64,
}

/// The file: every agent token.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenFile {
    /// The tokens, in the order they were made.
    pub tokens: Vec<StoredToken>,
}

/// Why an agent token could not be made, removed or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentTokenError {
    /// The name is not one an agent token may have.
    #[error(
        "`{name}` cannot name an agent token: {why} (lower-case letters, digits and `-`, at \
         most {MAX_NAME}, not `{DEFAULT_TOKEN_AGENT}`)"
    )]
    BadName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `create` of a name that has a token.
    #[error(
        "agent `{0}` already has a token; revoke it first (`tidings token revoke {0}`), then \
         create a new one"
    )]
    Exists(String),
    /// `revoke` of a name with none.
    #[error("agent `{0}` has no token; `tidings token list` lists the agents that have one")]
    NotFound(String),
    /// The file is full.
    #[error("there are already {MAX_TOKENS} agent tokens; revoke one first (`tidings token list`)")]
    Full,
    /// Reading or writing the file failed.
    #[error("cannot use {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not one Tidings wrote.
    #[error(
        "{} is not a token file Tidings wrote ({message}); remove it and create the agents' \
         tokens again with `tidings token create NAME`",
        .path.display()
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The OS random source failed.
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// Whether `name` may name an agent token.
pub fn validate_name(name: &str) -> Result<(), AgentTokenError> {
    let bad = |why| {
        Err(AgentTokenError::BadName {
            name: name.chars().take(MAX_NAME + 8).collect(),
            why,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME {
        return bad("it is too long");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return bad("it holds a character other than a-z, 0-9 and -");
    }
    if name == DEFAULT_TOKEN_AGENT {
        return bad("that is the endpoint's own token (`tidings token show`)");
    }
    Ok(())
}

/// The token file beside the settings file at `settings`.
pub fn path_beside(settings: &Path) -> PathBuf {
    settings.with_file_name(FILE_NAME)
}

/// The file at `path`; none there is an empty one.
pub fn load(path: &Path) -> Result<TokenFile, AgentTokenError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TokenFile::default()),
        Err(source) => {
            return Err(AgentTokenError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let file: TokenFile = serde_json::from_slice(&bytes).map_err(|e| AgentTokenError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    if file.tokens.len() > MAX_TOKENS {
        return Err(AgentTokenError::Invalid {
            path: path.to_owned(),
            message: format!("more than {MAX_TOKENS} tokens"),
        });
    }
    Ok(file)
}

fn save(path: &Path, file: &TokenFile) -> Result<(), AgentTokenError> {
    let mut text = serde_json::to_string_pretty(file).map_err(|e| AgentTokenError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    text.push('\n');
    tidings_platform::files::write_atomic(path, text.as_bytes(), FILE_MODE).map_err(|source| {
        AgentTokenError::Io {
            path: path.to_owned(),
            source,
        }
    })
}

/// Make agent `name`'s token, keep its hash in the file at `path`, and return it (the only
/// time it is seen).
pub fn create(path: &Path, name: &str) -> Result<Token, AgentTokenError> {
    validate_name(name)?;
    let mut file = load(path)?;
    if file.tokens.iter().any(|t| t.name == name) {
        return Err(AgentTokenError::Exists(name.to_owned()));
    }
    if file.tokens.len() >= MAX_TOKENS {
        return Err(AgentTokenError::Full);
    }
    let token = token::generate()?;
    file.tokens.push(StoredToken {
        name: name.to_owned(),
        sha256: hex(&digest(token.expose().as_bytes())),
        created_ms: crate::state::now_ms(),
    });
    save(path, &file)?;
    Ok(token)
}

/// Remove agent `name`'s token from the file at `path`.
pub fn revoke(path: &Path, name: &str) -> Result<(), AgentTokenError> {
    let mut file = load(path)?;
    let before = file.tokens.len();
    file.tokens.retain(|t| t.name != name);
    if file.tokens.len() == before {
        return Err(AgentTokenError::NotFound(name.to_owned()));
    }
    save(path, &file)
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The daemon's view of the file: the hashes by name, read again when the file changes.
pub struct AgentTokens {
    path: Option<PathBuf>,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// Whether the file was looked at yet.
    read: bool,
    /// The file's size and modification time when read (`None`: not there).
    stamp: Option<(u64, SystemTime)>,
    entries: Vec<(String, [u8; 32])>,
}

impl AgentTokens {
    /// The tokens in the file at `path`; `None`: no agent tokens (no settings file to sit
    /// beside).
    pub fn new(path: Option<PathBuf>) -> AgentTokens {
        AgentTokens {
            path,
            cache: Mutex::default(),
        }
    }

    /// The name of the agent whose token `presented` is, reading the file again first if it
    /// changed. Every stored hash is compared, in constant time.
    pub fn find(&self, presented: &[u8]) -> Option<String> {
        let mut cache = lock(&self.cache);
        self.refresh(&mut cache, false);
        let hash = digest(presented);
        let mut found = None;
        for (name, stored) in &cache.entries {
            if bool::from(stored.ct_eq(&hash)) {
                found = Some(name.clone());
            }
        }
        found
    }

    /// The names with a token now, after reading the file again (`force`: whatever its
    /// stamp says).
    pub fn names(&self, force: bool) -> Vec<String> {
        let mut cache = lock(&self.cache);
        self.refresh(&mut cache, force);
        cache.entries.iter().map(|(n, _)| n.clone()).collect()
    }

    fn refresh(&self, cache: &mut Cache, force: bool) {
        let Some(path) = &self.path else {
            return;
        };
        let stamp = std::fs::metadata(path)
            .ok()
            .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
        if !force && cache.read && cache.stamp == stamp {
            return;
        }
        cache.read = true;
        cache.stamp = stamp;
        cache.entries = match load(path) {
            Ok(file) => file
                .tokens
                .into_iter()
                .filter(|t| validate_name(&t.name).is_ok())
                .filter_map(|t| unhex(&t.sha256).map(|h| (t.name, h)))
                .collect(),
            Err(error) => {
                // Fail closed: no agent token is accepted until the file reads again.
                tracing::warn!(%error, "the agent token file cannot be read; no agent token is accepted");
                Vec::new()
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["cursor", "a", "host-2", &"x".repeat(MAX_NAME)] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Cursor",
            "a b",
            "a_b",
            "http",
            &"x".repeat(MAX_NAME + 1),
        ] {
            let err = validate_name(bad).unwrap_err().to_string();
            assert!(err.contains("at most 32"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_token_is_kept_as_its_hash_found_once_and_gone_after_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let tokens = AgentTokens::new(Some(path.clone()));
        let a = create(&path, "alpha").unwrap();
        let b = create(&path, "beta").unwrap();
        assert!(matches!(
            create(&path, "alpha"),
            Err(AgentTokenError::Exists(_))
        ));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(a.expose()) && !text.contains(b.expose()),
            "{text}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(tokens.find(a.expose().as_bytes()).as_deref(), Some("alpha"));
        assert_eq!(tokens.find(b.expose().as_bytes()).as_deref(), Some("beta"));
        assert_eq!(tokens.find(b"not-a-token"), None);
        revoke(&path, "alpha").unwrap();
        assert!(matches!(
            revoke(&path, "alpha"),
            Err(AgentTokenError::NotFound(_))
        ));
        assert_eq!(tokens.names(true), ["beta"]);
        assert_eq!(tokens.find(a.expose().as_bytes()), None);
    }

    #[test]
    fn a_file_that_is_not_ours_accepts_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let a = create(&path, "alpha").unwrap();
        std::fs::write(&path, "not json").unwrap();
        let tokens = AgentTokens::new(Some(path.clone()));
        assert_eq!(tokens.find(a.expose().as_bytes()), None);
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("tidings token create"), "{err}");
    }
}
