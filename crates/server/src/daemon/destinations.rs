//! The user's decisions about webhooks: a destination added to `[webhooks] allow` or taken
//! off it (its subscriptions then end with `terminated`), an agent's question answered, and
//! one subscription ended by hand. Each list change is a settings edit saved to the file.

use super::{Daemon, DaemonError};

/// Why a decision about webhooks could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// Not an origin the list accepts.
    #[error("{0}")]
    Destination(String),
    /// No subscription has this id.
    #[error("no webhook subscription `{0}`: `tidings webhooks` lists them")]
    Unknown(String),
    /// The change could not be saved.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

impl Daemon {
    /// Add `origin` to the destinations webhooks may post to; whether it was new. A question
    /// about it is closed.
    pub fn allow_destination(&self, origin: &str) -> Result<bool, WebhookError> {
        let mut added = Ok(false);
        self.update_settings(|s| added = s.webhooks.add(origin))?;
        added.map_err(WebhookError::Destination)
    }

    /// Take `origin` off the list; whether it was there. Its subscriptions end with a
    /// `terminated` envelope, as their delivery tasks see the new settings.
    pub fn remove_destination(&self, origin: &str) -> Result<bool, WebhookError> {
        let mut removed = false;
        self.update_settings(|s| removed = s.webhooks.remove(origin))?;
        Ok(removed)
    }

    /// The user answered the window's question about `origin`: allowed, it joins the list;
    /// refused, the question closes and the list stays as it was.
    pub fn answer_destination(&self, origin: &str, allow: bool) -> Result<(), WebhookError> {
        if allow {
            self.allow_destination(origin)?;
        } else {
            self.webhooks().answered(origin);
            self.board_changed();
        }
        Ok(())
    }

    /// End subscription `id` (the window's End): its receiver gets `terminated`.
    pub async fn end_webhook(&self, id: &str) -> Result<(), WebhookError> {
        let hook = self
            .webhooks()
            .get(id)
            .ok_or_else(|| WebhookError::Unknown(id.to_owned()))?;
        let error = crate::webhooks::ended_by_user(&hook);
        crate::webhooks::terminate(self, &hook, &error).await;
        self.board_changed();
        Ok(())
    }

    /// After a publish: questions whose origin is now on the list are closed.
    pub(crate) fn close_destination_asks(&self) {
        let settings = self.settings_arc();
        for ask in self.webhooks().asks() {
            if settings.webhooks.allow.contains(&ask.origin) {
                self.webhooks().answered(&ask.origin);
            }
        }
        self.board_changed();
    }
}
