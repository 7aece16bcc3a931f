//! The window's webhook commands: a destination added to `[webhooks] allow` or removed (its
//! subscriptions then end with `terminated`), an agent's question about a destination
//! answered, and one subscription ended. What the window lists is `State.webhooks`; each
//! command answers with the new [`SettingsView`] as the others do.

use tidings_core::text::{MAX_ECHO_CHARS, sanitize};

use super::{AppError, SettingsView, settings_view};
use crate::engine::Handle;

/// Add `origin` to the destinations webhook subscriptions may post to. Refused naming the
/// rule (https:// for any host, http:// only for this Mac; an origin, no path).
pub async fn allow_destination(handle: &Handle, origin: &str) -> Result<SettingsView, AppError> {
    handle.daemon().allow_destination(origin)?;
    Ok(settings_view(handle).await)
}

/// Take `origin` off the list: its subscriptions end, their receivers told. Refused when the
/// list does not hold it.
pub async fn remove_destination(handle: &Handle, origin: &str) -> Result<SettingsView, AppError> {
    if !handle.daemon().remove_destination(origin)? {
        return Err(AppError::NotADestination {
            origin: sanitize(origin, MAX_ECHO_CHARS),
        });
    }
    Ok(settings_view(handle).await)
}

/// The user's answer to an agent's question about `origin` (Allow, Don't Allow).
pub async fn answer_destination(
    handle: &Handle,
    origin: &str,
    allow: bool,
) -> Result<SettingsView, AppError> {
    handle.daemon().answer_destination(origin, allow)?;
    Ok(settings_view(handle).await)
}

/// End webhook subscription `id`: its receiver gets `terminated`, and it is gone.
pub async fn end_webhook(handle: &Handle, id: &str) -> Result<SettingsView, AppError> {
    handle.daemon().end_webhook(id).await?;
    Ok(settings_view(handle).await)
}
