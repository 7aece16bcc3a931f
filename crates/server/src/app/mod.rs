//! What the menu-bar app calls: one function per bridge command on a [`Handle`]
//! (docs/decisions/app.md; the contract is the app's `commands.json`). Each change goes
//! through `Handle::update_settings` (saved, then applied live, the path a file edit takes)
//! and answers with the new [`SettingsView`].
//!
//! The view carries the allowlists in full and the HTTP token: it is the app's, never sent
//! to a client (clients see `State`, which holds neither).

use serde::Serialize;
use tidings_core::EventType;
use tidings_core::allowlist::{self, AllowKind};
use tidings_core::settings::{MAX_BACKFILL_DAYS, NotificationKind};

use crate::clients::Delivery;
use crate::daemon::DaemonError;
use crate::engine::{Handle, RevokeError};
use crate::http::auth::AuthMode;
use crate::http::token::{self, TokenError};
use crate::state::now_ms;
pub use agents::{
    AgentGrantView, AgentTypeView, AskView, TypeGrantView, answer_agent, forget_agent,
    set_agent_access, set_agent_type, set_new_agents,
};
pub use people::{
    AllowEntryView, ContactsView, GroupHit, MAX_QUERY_CHARS, MAX_RECENT, MAX_SEARCH_HITS,
    PersonHit, RECENT_DAYS, RecentSenderView, list_groups, recent_senders, search_people,
    set_categories, set_names,
};
pub use tokens::{AgentTokenView, CreatedToken, create_agent_token, revoke_agent_token};
pub use webhooks::{allow_destination, answer_destination, end_webhook, remove_destination};

/// The longest backfill window the app offers (the file accepts up to ten years).
pub const MAX_APP_BACKFILL_DAYS: u32 = 365;

/// The longest pause (a week): a pause is for "not now", the type switches are for "never".
pub const MAX_PAUSE_MINUTES: u32 = 7 * 24 * 60;

/// The settings window's whole view of the settings.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// One entry per event type, in `EventType::ALL` order.
    pub types: Vec<TypeView>,
    /// The loopback HTTP endpoint.
    pub http: HttpView,
    /// Whether the app may show notifications (the master switch).
    pub notifications: bool,
    /// Each kind's own switch, in `NotificationKind::ALL` order.
    pub notification_kinds: Vec<NotificationSwitch>,
    /// Until when every type is paused (ms since the Unix epoch), if paused.
    pub paused_until_ms: Option<u64>,
    /// Whether the first-run walk-through is still to be shown.
    pub first_run: bool,
    /// The JSON to paste into a client's MCP configuration.
    pub connect_snippet: String,
    /// Whether the app starts at login.
    pub start_at_login: LoginView,
    /// Whether the Contacts stores can be read.
    pub contacts: ContactsView,
    /// The questions open about programs with no grant, oldest first (their words are for
    /// the window only: `State` says only which agents ask).
    pub asks: Vec<AskView>,
    /// What a never-seen program gets (`[agents] new`).
    pub new_agents: tidings_core::settings::NewAgents,
    /// The grant of each agent in settings.toml, with its sender entries.
    pub agent_grants: Vec<AgentGrantView>,
    /// The agents' own HTTP tokens (names and dates, never the tokens).
    pub agent_tokens: Vec<AgentTokenView>,
    /// The update check: its switch, this copy's version, the last check.
    pub updates: UpdatesView,
}

/// Start at login, as the window and the menu show it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginView {
    /// `enabled`, `requiresApproval` (macOS waits for the user in Login Items) or `disabled`.
    #[cfg_attr(test, ts(type = r#""enabled" | "requiresApproval" | "disabled""#))]
    pub state: &'static str,
    /// One sentence: what it means, and what to do when it needs something.
    pub text: String,
}

/// One kind of notification's switch (`[notifications]` in settings.toml).
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationSwitch {
    /// Its key in `[notifications]`, the name `set_notification_kind` takes
    /// (`first_subscription`).
    pub kind: NotificationKind,
    /// Whether its switch is on (shown only while the master switch is on too).
    pub enabled: bool,
}

/// One event type's settings, with its allowlist in words.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeView {
    /// The wire name (`mail.received`).
    pub name: String,
    /// Whether it is configured on (a pause does not change this).
    pub enabled: bool,
    /// The allowlist entries, as settings.toml holds them.
    pub allow: Vec<String>,
    /// The backfill window in days (`0`: off).
    pub backfill_days: u32,
    /// What an agent can see, in a sentence.
    pub reach: String,
    /// The menu's line under the type: "from acme.com and 2 more".
    pub summary: String,
    /// Each entry of `allow`, in the same order, with its kind, label and state.
    pub entries: Vec<AllowEntryView>,
    /// Whether events carry the sender's name from Contacts (`contact_names`).
    pub names: bool,
    /// The categories the type is restricted to; empty: all.
    pub categories: Vec<String>,
    /// The categories this type's store files messages under, in the window's order.
    pub offered_categories: Vec<String>,
}

/// The HTTP endpoint as configured.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpView {
    /// Whether it is on in settings.
    pub enabled: bool,
    /// The port it listens on.
    pub port: u16,
    /// The bearer token, when one is stored; `None` without a token (not made yet, no
    /// keychain, or `--no-auth`).
    pub token: Option<String>,
}

/// The answer to `check_allow_entry`.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowCheck {
    /// Whether the entry would be accepted.
    pub ok: bool,
    /// What it names, when accepted.
    pub kind: Option<AllowKind>,
    /// Why not, when refused.
    pub reason: Option<String>,
}

/// Why an app command did nothing. Each message names the field and the limit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// No event type has this name.
    #[error("unknown event type `{name}`; use mail.received or messages.received")]
    UnknownType {
        /// The name given (cut).
        name: String,
    },
    /// An allowlist entry (or the list) was refused.
    #[error("the {event_type} allowlist was not saved: {reason}")]
    Allowlist {
        /// The type's wire name.
        event_type: &'static str,
        /// The first bad entry and why.
        reason: String,
    },
    /// `days` is out of range.
    #[error("backfill days must be 0 (off) to {MAX_APP_BACKFILL_DAYS}, got {days}")]
    BackfillDays {
        /// The value given.
        days: u32,
    },
    /// Port 0 was asked for.
    #[error("the HTTP port must be 1 to 65535, got 0")]
    Port,
    /// `minutes` is out of range.
    #[error("a pause must last 1 to {MAX_PAUSE_MINUTES} minutes (a week), got {minutes}")]
    PauseMinutes {
        /// The value given.
        minutes: u32,
    },
    /// The endpoint runs without a token (`--demo --no-auth`).
    #[error("the HTTP endpoint runs without a token (--no-auth), so there is none to rotate")]
    NoAuth,
    /// The keychain could not be used.
    #[error("the HTTP token could not be rotated: {0}")]
    Token(String),
    /// The settings could not be saved.
    #[error(transparent)]
    Settings(#[from] DaemonError),
    /// The client to revoke is not connected.
    #[error(transparent)]
    Revoke(#[from] RevokeError),
    /// Start at login could not be changed.
    #[error("start at login was not changed: {0}")]
    Login(String),
    /// No kind of notification has this name.
    #[error(
        "unknown notification `{kind}`; use first_subscription, full_disk_access, \
         store_rebuilt, settings_rejected or agent_asks"
    )]
    UnknownNotification {
        /// The name given (cut).
        kind: String,
    },
    /// A Contacts search text was too long.
    #[error("a search is at most {MAX_QUERY_CHARS} characters, got {chars}")]
    Query {
        /// Its length in characters.
        chars: usize,
    },
    /// Recent senders could not be read from the store.
    #[error("recent senders could not be read: {0}")]
    Recent(String),
    /// A category the type's store does not file messages under.
    #[error("`{name}` is not a category of {event_type}; use {offered}")]
    Category {
        /// The type's wire name.
        event_type: &'static str,
        /// The name given (cut).
        name: String,
        /// The categories the type offers.
        offered: String,
    },
    /// A decision about an agent could not be made (unknown id, or not saved).
    #[error(transparent)]
    Agent(#[from] crate::daemon::AgentError),
    /// A decision about webhooks could not be made (a bad origin, an unknown subscription,
    /// or not saved).
    #[error(transparent)]
    Webhook(#[from] crate::daemon::WebhookError),
    /// `remove_destination` of an origin the list does not hold.
    #[error("`{origin}` is not on the list of webhook destinations; nothing was removed")]
    NotADestination {
        /// The origin given (cut).
        origin: String,
    },
    /// A sender grant with no sender.
    #[error(
        "pick at least one sender for {event_type}, or grant none (an empty list is no \
         sender at all)"
    )]
    NoSenders {
        /// The type's wire name.
        event_type: &'static str,
    },
    /// A sender grant naming an entry the type's allowlist does not hold.
    #[error(
        "`{entry}` is not on the {event_type} allowlist; an agent can be granted only senders \
         the allowlist lets through, so add it to the allowlist first"
    )]
    NotOnAllowlist {
        /// The type's wire name.
        event_type: &'static str,
        /// The entry given (cut).
        entry: String,
    },
    /// Not one of the choices for new programs.
    #[error("new programs get `ask`, `allow` or `deny`, not `{value}`")]
    NewAgents {
        /// The value given (cut).
        value: String,
    },
    /// An agent token could not be made or revoked (the message names the fix).
    #[error("{0}")]
    AgentToken(String),
    /// System Settings could not be opened at the pane.
    #[error(transparent)]
    Pane(#[from] tidings_platform::panes::PaneError),
}

fn event_type(name: &str) -> Result<EventType, AppError> {
    EventType::from_name(name).ok_or_else(|| AppError::UnknownType {
        name: tidings_core::text::sanitize(name, tidings_core::text::MAX_ECHO_CHARS),
    })
}

/// The settings as the window shows them. Reads the token from the keychain and asks the OS
/// about the login item (`launchctl print`, `systemctl is-enabled`), each on a blocking
/// thread, so it is async.
pub async fn settings_view(handle: &Handle) -> SettingsView {
    let (token, login) = tokio::join!(current_token(handle), login_view_blocking());
    settings_view_with(handle, token, login)
}

fn settings_view_with(handle: &Handle, token: Option<String>, login: LoginView) -> SettingsView {
    let settings = handle.daemon().settings_with_contacts();
    let types = EventType::ALL
        .into_iter()
        .map(|ty| {
            let t = settings.for_type(ty);
            TypeView {
                name: ty.name().to_owned(),
                enabled: t.enabled,
                allow: t.allow.iter().map(ToString::to_string).collect(),
                backfill_days: t.backfill_days,
                reach: allowlist::reach_sentence(ty, t, &settings.contacts),
                summary: allowlist::allow_summary(t),
                entries: people::entry_views(&settings, ty),
                names: t.contact_names,
                categories: t.categories.iter().map(|c| c.name().to_owned()).collect(),
                offered_categories: tidings_core::event::Category::offered(ty)
                    .iter()
                    .map(|c| c.name().to_owned())
                    .collect(),
            }
        })
        .collect();
    SettingsView {
        types,
        http: HttpView {
            enabled: settings.http.enabled,
            port: settings.http.listen.port(),
            token,
        },
        notifications: settings.notifications.enabled,
        notification_kinds: NotificationKind::ALL
            .into_iter()
            .map(|kind| NotificationSwitch {
                kind,
                enabled: *settings.notifications.switch(kind),
            })
            .collect(),
        paused_until_ms: handle.paused_until_ms(),
        first_run: handle.first_run(),
        connect_snippet: connect_snippet(handle.socket_path()),
        start_at_login: login,
        contacts: people::contacts_view(&handle.daemon().contacts()),
        asks: agents::ask_views(handle),
        new_agents: settings.agents.new,
        agent_grants: agents::grant_views(&settings.agents),
        agent_tokens: tokens::token_views(handle),
        updates: update_view::updates_view(handle, settings.updates.check),
    }
}

/// The stored token (never made here), `None` when there is none or no keychain.
async fn current_token(handle: &Handle) -> Option<String> {
    let source = handle.auth_source().clone();
    tokio::task::spawn_blocking(move || match source() {
        Ok(AuthMode::Token(keychain)) => token::load(keychain.as_ref())
            .ok()
            .flatten()
            .map(|t| t.expose().to_owned()),
        _ => None,
    })
    .await
    .ok()
    .flatten()
}

/// Turn `event_type` on or off (saved and applied live).
pub async fn set_type_enabled(
    handle: &Handle,
    event_type_name: &str,
    enabled: bool,
) -> Result<SettingsView, AppError> {
    let ty = event_type(event_type_name)?;
    handle.update_settings(|s| s.for_type_mut(ty).enabled = enabled)?;
    Ok(settings_view(handle).await)
}

/// Check one allowlist entry as it is typed.
pub fn check_allow_entry(event_type_name: &str, entry: &str) -> AllowCheck {
    let checked = event_type(event_type_name)
        .map_err(|e| e.to_string())
        .and_then(|ty| allowlist::check_allow_entry(ty, entry));
    match checked {
        Ok(kind) => AllowCheck {
            ok: true,
            kind: Some(kind),
            reason: None,
        },
        Err(reason) => AllowCheck {
            ok: false,
            kind: None,
            reason: Some(reason),
        },
    }
}

/// Replace `event_type`'s allowlist; refused whole, naming the first bad entry, when any
/// entry is bad.
pub async fn set_allowlist(
    handle: &Handle,
    event_type_name: &str,
    entries: &[String],
) -> Result<SettingsView, AppError> {
    let ty = event_type(event_type_name)?;
    let allow = allowlist::check_allowlist(ty, entries).map_err(|reason| AppError::Allowlist {
        event_type: ty.name(),
        reason,
    })?;
    handle.update_settings(|s| s.for_type_mut(ty).allow = allow)?;
    Ok(settings_view(handle).await)
}

/// Set `event_type`'s backfill window, 0 (off) to [`MAX_APP_BACKFILL_DAYS`].
pub async fn set_backfill_days(
    handle: &Handle,
    event_type_name: &str,
    days: u32,
) -> Result<SettingsView, AppError> {
    const _: () = assert!(MAX_APP_BACKFILL_DAYS <= MAX_BACKFILL_DAYS);
    let ty = event_type(event_type_name)?;
    if days > MAX_APP_BACKFILL_DAYS {
        return Err(AppError::BackfillDays { days });
    }
    handle.update_settings(|s| s.for_type_mut(ty).backfill_days = days)?;
    Ok(settings_view(handle).await)
}

/// Turn the HTTP endpoint on or off and set its port (the address stays loopback as set).
pub async fn set_http(handle: &Handle, enabled: bool, port: u16) -> Result<SettingsView, AppError> {
    if port == 0 {
        return Err(AppError::Port);
    }
    handle.update_settings(|s| {
        s.http.enabled = enabled;
        s.http.listen.set_port(port);
    })?;
    Ok(settings_view(handle).await)
}

/// Let the app notify, or not.
pub async fn set_notifications(handle: &Handle, enabled: bool) -> Result<SettingsView, AppError> {
    handle.update_settings(|s| s.notifications.enabled = enabled)?;
    Ok(settings_view(handle).await)
}

/// Turn one kind of notification on or off (`first_subscription`, `full_disk_access`,
/// `store_rebuilt`, `settings_rejected`, `agent_asks`: the keys of `[notifications]`); the
/// master switch is
/// [`set_notifications`].
pub async fn set_notification_kind(
    handle: &Handle,
    kind: &str,
    enabled: bool,
) -> Result<SettingsView, AppError> {
    // The names are the kinds' serde names, the keys of `[notifications]`.
    let kind = serde_json::from_value::<NotificationKind>(serde_json::Value::from(kind)).map_err(
        |_| AppError::UnknownNotification {
            kind: tidings_core::text::sanitize(kind, tidings_core::text::MAX_ECHO_CHARS),
        },
    )?;
    handle.update_settings(|s| *s.notifications.switch_mut(kind) = enabled)?;
    Ok(settings_view(handle).await)
}

/// Open System Settings at the Full Disk Access pane (`open` on macOS; `xdg-open` on Linux,
/// where there is no such pane and it fails harmlessly).
pub fn open_full_disk_access(runner: &dyn tidings_platform::CommandRunner) -> Result<(), AppError> {
    Ok(tidings_platform::panes::open_full_disk_access(
        runner,
        tidings_platform::paths::Os::CURRENT,
    )?)
}

/// Open System Settings at Login Items, where a login item that requires approval is allowed
/// (`open` on macOS; `xdg-open` on Linux, where there is nothing to approve).
pub fn open_login_items(runner: &dyn tidings_platform::CommandRunner) -> Result<(), AppError> {
    Ok(tidings_platform::panes::open_login_items(
        runner,
        tidings_platform::paths::Os::CURRENT,
    )?)
}

/// A fresh HTTP token, as `tidings token rotate` makes it: written to the keychain the
/// endpoint uses, then the running endpoint re-reads it and ends the streams opened with the
/// old one. Refused under `--no-auth`.
pub async fn rotate_http_token(handle: &Handle) -> Result<SettingsView, AppError> {
    let source = handle.auth_source().clone();
    let fresh = tokio::task::spawn_blocking(move || match source() {
        Ok(AuthMode::Token(keychain)) => {
            token::rotate(keychain.as_ref()).map_err(|e: TokenError| AppError::Token(e.to_string()))
        }
        Ok(AuthMode::NoAuth) => Err(AppError::NoAuth),
        Err(e) => Err(AppError::Token(e.to_string())),
    })
    .await
    .map_err(|e| AppError::Token(format!("the keychain task failed: {e}")))??;
    if let Some(reload) = handle.daemon().token_reload() {
        tokio::task::spawn_blocking(move || reload.reload_blocking())
            .await
            .map_err(|e| AppError::Token(format!("the keychain task failed: {e}")))?
            .map_err(AppError::Token)?;
    }
    let login = login_view_blocking().await;
    Ok(settings_view_with(
        handle,
        Some(fresh.expose().to_owned()),
        login,
    ))
}

/// Pause every type for `minutes` (1 to [`MAX_PAUSE_MINUTES`]); a new pause replaces one
/// running.
pub async fn pause_all(handle: &Handle, minutes: u32) -> Result<SettingsView, AppError> {
    if minutes == 0 || minutes > MAX_PAUSE_MINUTES {
        return Err(AppError::PauseMinutes { minutes });
    }
    handle.pause_until(now_ms() + u64::from(minutes) * 60_000);
    Ok(settings_view(handle).await)
}

/// End a pause now.
pub async fn resume_all(handle: &Handle) -> SettingsView {
    handle.resume_all();
    settings_view(handle).await
}

/// The last deliveries, newest first (the window's Activity list; in memory only).
pub fn activity(handle: &Handle) -> Vec<Delivery> {
    let mut deliveries = handle.activity().snapshot();
    deliveries.reverse();
    deliveries
}

/// Forget every delivery shown.
pub fn clear_activity(handle: &Handle) {
    handle.activity().clear();
}

/// Revoke client `id` (from `State.clients`); refused, naming the id, when it left.
pub fn revoke_client(handle: &Handle, id: u64) -> Result<(), AppError> {
    Ok(handle.revoke(id)?)
}

/// The walk-through is done.
pub fn finish_first_run(handle: &Handle) {
    handle.finish_first_run();
}

#[cfg(test)]
mod agent_tests;
mod agents;
mod login_item;
mod people;
mod snippet;
#[cfg(test)]
mod tests;
mod tokens;
mod update_view;
pub mod updates;
#[cfg(test)]
mod webhook_tests;
mod webhooks;

pub use login_item::{
    login_view, login_view_blocking, restart_through_login_item, set_start_at_login,
};
pub use snippet::connect_snippet;
pub use update_view::{CURRENT_VERSION, UpdatesView, set_update_check};
