//! Who may call the endpoint: the bearer token in force, the per-token state its requests
//! share (stream count, revocation), and rotation.
//!
//! Rotation, as decided for issue #4: `tidings token rotate` writes a fresh token to the
//! keychain itself, then sends `tidings/token/rotate` (no params) over the Unix socket. The
//! daemon re-reads the keychain (`HttpAuth::reload_blocking`, reached through the daemon's
//! `TokenReload` slot); if the token changed it swaps it in and cancels
//! the old token's `revoked`, so every stream opened with it ends with
//! `notifications/events/terminated` Forbidden `{reason: "token_rotated"}`. The secret never
//! crosses the socket, and the keychain stays the one place it is kept. If the daemon cannot
//! read the keychain it fails closed: the old token is dropped and every request gets 401.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tidings_platform::Keychain;
use tidings_protocol::payloads::{Rotation, rotation};
use tokio_util::sync::CancellationToken;

use super::token::{self, Token, TokenError};
use crate::agents::Agent;
use crate::clients::{ConnectionState, Revocation};
use crate::daemon::{Daemon, TokenReload};
use crate::sync::lock;
use tidings_platform::identity::AgentIdentity;

/// How requests prove who they are.
pub enum AuthMode {
    /// A bearer token from this keychain (the default, and the only mode outside `--demo`).
    Token(Arc<dyn Keychain>),
    /// No token (`--demo --no-auth`, for tools that cannot send headers).
    NoAuth,
}

/// The token in force and its principal's state.
pub struct HttpAuth {
    keychain: Option<Arc<dyn Keychain>>,
    current: Mutex<Current>,
    daemon: Daemon,
    /// The endpoint's own stop token: every principal's `closed` is a child of it.
    stop: CancellationToken,
}

struct Current {
    /// `None` with `--no-auth`, or after a failed reload (then nothing is accepted).
    token: Option<Token>,
    principal: Arc<ConnectionState>,
}

/// Why a request was not let in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization: Bearer …` header.
    Missing,
    /// A token that is not the one in force.
    Invalid,
}

impl HttpAuth {
    /// The token state for `mode`; with a keychain, the token is read (or made, on first
    /// enable). `stop` is the endpoint's stop token. Blocks on the keychain.
    pub(crate) fn start(
        daemon: &Daemon,
        mode: AuthMode,
        stop: CancellationToken,
    ) -> Result<HttpAuth, TokenError> {
        let (keychain, token) = match mode {
            AuthMode::NoAuth => (None, None),
            AuthMode::Token(keychain) => {
                let token = token::load_or_create(keychain.as_ref())?;
                (Some(keychain), Some(token))
            }
        };
        Ok(HttpAuth {
            keychain,
            current: Mutex::new(Current {
                token,
                principal: ConnectionState::http_token(
                    daemon.clients(),
                    &stop,
                    token_agent(daemon),
                ),
            }),
            daemon: daemon.clone(),
            stop,
        })
    }

    /// Whether requests need no token.
    pub fn is_no_auth(&self) -> bool {
        self.keychain.is_none()
    }

    /// The principal of a request with this `Authorization` header value.
    pub(crate) fn authorize(
        &self,
        header: Option<&[u8]>,
    ) -> Result<Arc<ConnectionState>, AuthFailure> {
        let current = lock(&self.current);
        if self.keychain.is_none() {
            return Ok(current.principal.clone());
        }
        let presented = header.and_then(bearer).ok_or(AuthFailure::Missing)?;
        match &current.token {
            Some(token) if token.matches(presented) => Ok(current.principal.clone()),
            _ => Err(AuthFailure::Invalid),
        }
    }

    /// Streams open under the token in force.
    pub fn open_streams(&self) -> usize {
        lock(&self.current).principal.open_streams()
    }

    /// Re-read the token from the keychain; see the module docs. Blocks on the keychain.
    fn reload_blocking(&self) -> Result<Value, TokenError> {
        let Some(keychain) = &self.keychain else {
            return Ok(Rotation::declined(rotation::NO_AUTH).into());
        };
        let loaded = token::load(keychain.as_ref());
        let mut current = lock(&self.current);
        let next = match loaded {
            Ok(next) => next,
            Err(e) => {
                // Fail closed: a token we can no longer confirm is not accepted either.
                current.token = None;
                self.revoke(&mut current);
                return Err(e);
            }
        };
        if next.is_some() && next == current.token {
            return Ok(Rotation::declined(rotation::UNCHANGED).into());
        }
        let ended = current.principal.open_streams();
        current.token = next;
        self.revoke(&mut current);
        tracing::info!(streams_ended = ended, "HTTP token rotated");
        Ok(Rotation::done(u64::try_from(ended).unwrap_or(u64::MAX)).into())
    }

    /// End the old principal's streams and start a fresh one.
    fn revoke(&self, current: &mut MutexGuard<'_, Current>) {
        current.principal.revoke(Revocation::TokenRotated);
        current.principal = ConnectionState::http_token(
            self.daemon.clients(),
            &self.stop,
            token_agent(&self.daemon),
        );
    }
}

impl TokenReload for HttpAuth {
    fn reload_blocking(&self) -> Result<Value, String> {
        HttpAuth::reload_blocking(self).map_err(|e| e.to_string())
    }
}

/// The agent of the endpoint's one token: every client that holds it.
fn token_agent(daemon: &Daemon) -> Arc<Agent> {
    Agent::known_as(
        AgentIdentity::token(DEFAULT_TOKEN_AGENT),
        &daemon.settings_arc().agents,
    )
}

/// The name of the agent the endpoint's token stands for.
pub const DEFAULT_TOKEN_AGENT: &str = "http";

/// The scheme of the `Authorization` header, with its space.
const BEARER: &[u8] = b"bearer ";

/// The token of `Bearer <token>` (the scheme is case-insensitive, RFC 9110 11.1).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(BEARER.len())?;
    if !scheme.eq_ignore_ascii_case(BEARER) {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_takes_the_scheme_case_insensitively() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer  abc "), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b"Bear"), None);
    }
}
