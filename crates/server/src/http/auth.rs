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
//!
//! Beside that token, each agent may have its own (`tidings token create NAME`, kept as hashes
//! in `agent_tokens`): a request with one is the agent `token:NAME`, with a principal of its
//! own, so that agent's grant applies to it alone. `tidings token revoke NAME` removes it from
//! the file and sends the same `tidings/token/rotate`; the daemon reads both again, and the
//! principal of a token no longer in the file is revoked (`token_revoked`): its streams end
//! and its next request gets 401.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tidings_platform::Keychain;
use tidings_protocol::payloads::{Rotation, rotation};
use tokio_util::sync::CancellationToken;

pub use super::agent_tokens::DEFAULT_TOKEN_AGENT;
use super::agent_tokens::{self, AgentTokens};
use super::token::{self, Token, TokenError};
use crate::agents::Agent;
use crate::clients::{ConnectionState, Revocation};
use crate::daemon::{Daemon, TokenReload};
use crate::events::errors::revoked;
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
    /// The agents' own tokens (none with `--no-auth`).
    agent_tokens: AgentTokens,
}

struct Current {
    /// `None` with `--no-auth`, or after a failed reload (then nothing is accepted).
    token: Option<Token>,
    principal: Arc<ConnectionState>,
    /// The principal of each agent token that made a request, by the agent's name.
    agents: BTreeMap<String, Arc<ConnectionState>>,
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
        let agent_tokens = AgentTokens::new(
            keychain
                .is_some()
                .then(|| agent_tokens::path_beside(daemon.settings_path())),
        );
        let principal = ConnectionState::http_token(
            daemon.clients(),
            &stop,
            token_agent(daemon, DEFAULT_TOKEN_AGENT),
        );
        if keychain.is_none() {
            principal.mark_unauthenticated();
        }
        Ok(HttpAuth {
            keychain,
            current: Mutex::new(Current {
                token,
                principal,
                agents: BTreeMap::new(),
            }),
            daemon: daemon.clone(),
            stop,
            agent_tokens,
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
        if let Some(token) = &current.token
            && token.matches(presented)
        {
            return Ok(current.principal.clone());
        }
        drop(current);
        // Read outside the lock: the file may be re-read.
        let name = self
            .agent_tokens
            .find(presented)
            .ok_or(AuthFailure::Invalid)?;
        let mut current = lock(&self.current);
        let principal = current.agents.entry(name).or_insert_with_key(|name| {
            ConnectionState::http_token(
                self.daemon.clients(),
                &self.stop,
                token_agent(&self.daemon, name),
            )
        });
        Ok(principal.clone())
    }

    /// Streams open under the token in force and the agents' tokens.
    pub fn open_streams(&self) -> usize {
        let current = lock(&self.current);
        current.principal.open_streams()
            + current
                .agents
                .values()
                .map(|p| p.open_streams())
                .sum::<usize>()
    }

    /// Read the agents' tokens again; revoke the principal of each token no longer there.
    /// The number of streams that ended.
    fn reload_agent_tokens(&self) -> usize {
        let names = self.agent_tokens.names(true);
        let mut current = lock(&self.current);
        let gone: Vec<String> = current
            .agents
            .keys()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        let mut ended = 0;
        for name in gone {
            if let Some(principal) = current.agents.remove(&name) {
                ended += principal.open_streams();
                principal.revoke(Revocation::TokenRevoked);
                tracing::info!(agent = %name, "agent token revoked");
            }
        }
        // A revoked token's webhook subscriptions end too, whether or not it made a request
        // since Tidings started (they outlive restarts).
        self.end_webhooks(Revocation::TokenRevoked, |key| {
            key.strip_prefix("token:")
                .is_some_and(|name| name != DEFAULT_TOKEN_AGENT && !names.iter().any(|n| n == name))
        });
        ended
    }

    /// End, with `terminated`, the webhook subscriptions of the token agents `owned` picks
    /// (by identity key): a credential revoked or rotated takes what it set up with it.
    fn end_webhooks(&self, why: Revocation, owned: impl Fn(&str) -> bool) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for hook in self.daemon.webhooks().all() {
            if owned(&hook.owner.key) {
                let daemon = self.daemon.clone();
                runtime.spawn(async move {
                    daemon.webhooks().terminate(&hook, &revoked(why)).await;
                });
            }
        }
    }

    /// Re-read the token from the keychain; see the module docs. Blocks on the keychain.
    fn reload_blocking(&self) -> Result<Value, TokenError> {
        let Some(keychain) = &self.keychain else {
            return Ok(Rotation::declined(rotation::NO_AUTH).into());
        };
        let revoked = self.reload_agent_tokens();
        if revoked > 0 {
            tracing::info!(streams_ended = revoked, "agent token streams ended");
        }
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
        let own = format!("token:{DEFAULT_TOKEN_AGENT}");
        self.end_webhooks(Revocation::TokenRotated, |key| key == own);
        current.principal = ConnectionState::http_token(
            self.daemon.clients(),
            &self.stop,
            token_agent(&self.daemon, DEFAULT_TOKEN_AGENT),
        );
    }
}

impl TokenReload for HttpAuth {
    fn reload_blocking(&self) -> Result<Value, String> {
        HttpAuth::reload_blocking(self).map_err(|e| e.to_string())
    }
}

/// The agent of a token: `token:NAME` ([`DEFAULT_TOKEN_AGENT`] for the endpoint's own, whose
/// every holder is that one agent).
fn token_agent(daemon: &Daemon, name: &str) -> Arc<Agent> {
    Agent::known_as(AgentIdentity::token(name), &daemon.settings_arc().agents)
}

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
