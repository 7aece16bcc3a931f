//! The window's agent tokens: one HTTP bearer token per agent, made (shown once), listed and
//! revoked, as `tidings token create|list|revoke` do (`http/agent_tokens.rs` keeps them as
//! hashes beside settings.toml).

use serde::Serialize;

use super::{AppError, SettingsView, settings_view};
use crate::engine::Handle;
use crate::http::agent_tokens;

/// One agent token, as the window lists it (never the token).
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTokenView {
    /// The agent's name: requests with the token are the agent `token:NAME`.
    pub name: String,
    /// When it was made (ms since the Unix epoch).
    pub created_ms: u64,
}

/// A token just made: shown once, with the settings as they are now.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    /// The agent's name.
    pub name: String,
    /// The bearer token: shown now, never again (only its hash is kept).
    pub token: String,
    /// The settings, with the new token listed.
    pub settings: SettingsView,
}

/// The agent tokens beside the settings file, oldest first; an unreadable file lists none
/// (the daemon then accepts none either: `tidings doctor` and `tidings token list` say why).
pub(super) fn token_views(handle: &Handle) -> Vec<AgentTokenView> {
    let path = agent_tokens::path_beside(handle.settings_path());
    agent_tokens::load(&path)
        .map(|file| {
            file.tokens
                .into_iter()
                .map(|t| AgentTokenView {
                    name: t.name,
                    created_ms: t.created_ms,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Make agent `name`'s token.
pub async fn create_agent_token(handle: &Handle, name: &str) -> Result<CreatedToken, AppError> {
    let path = agent_tokens::path_beside(handle.settings_path());
    let owned = name.to_owned();
    let token = tokio::task::spawn_blocking(move || agent_tokens::create(&path, &owned))
        .await
        .map_err(|e| AppError::AgentToken(format!("the token task failed: {e}")))?
        .map_err(|e| AppError::AgentToken(e.to_string()))?;
    Ok(CreatedToken {
        name: name.to_owned(),
        token: token.expose().to_owned(),
        settings: settings_view(handle).await,
    })
}

/// Revoke agent `name`'s token: out of the file, and a serving endpoint ends its streams.
pub async fn revoke_agent_token(handle: &Handle, name: &str) -> Result<SettingsView, AppError> {
    let path = agent_tokens::path_beside(handle.settings_path());
    let owned = name.to_owned();
    tokio::task::spawn_blocking(move || agent_tokens::revoke(&path, &owned))
        .await
        .map_err(|e| AppError::AgentToken(format!("the token task failed: {e}")))?
        .map_err(|e| AppError::AgentToken(e.to_string()))?;
    // The endpoint reads the file again now, so the token's open streams end at once.
    if let Some(reload) = handle.daemon().token_reload() {
        tokio::task::spawn_blocking(move || reload.reload_blocking())
            .await
            .map_err(|e| AppError::AgentToken(format!("the token task failed: {e}")))?
            .map_err(AppError::AgentToken)?;
    }
    Ok(settings_view(handle).await)
}
