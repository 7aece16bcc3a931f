//! The user's notices from the handle: each sent while its switch is on, and what raises them.
//!
//! A first subscription, a store newly refused, an edit newly rejected, a store rebuilt.

use std::sync::Arc;

use serde_json::Value;
use tidings_core::EventType;
use tokio::sync::broadcast;

use super::Daemon;
use crate::clients::ConnectionState;
use crate::notices::Notice;
use crate::state::{FullDiskAccess, SettingsFileState, State, StoreAccess};
use crate::sync::lock;

impl Daemon {
    /// The user's notices (see `notices`): each kind is sent only while its switch is on.
    pub fn notices(&self) -> broadcast::Receiver<Notice> {
        self.inner.notices.subscribe()
    }

    /// Send `notice` if its switch (and the master switch) is on.
    pub(crate) fn notify(&self, notice: Notice) {
        if self.configured().notifications.allows(notice.kind()) {
            tracing::debug!(kind = ?notice.kind(), "notice");
            let _ = self.inner.notices.send(notice);
        }
    }

    /// A subscription to `ty` was accepted for `conn`: the first one of this client (by
    /// name, else by connection) to this type since start is a notice.
    pub(crate) fn subscribed(
        &self,
        conn: &ConnectionState,
        ty: EventType,
        arguments: &serde_json::Map<String, Value>,
    ) {
        let name = conn.name();
        let key = name
            .clone()
            .unwrap_or_else(|| format!("connection {}", conn.id()));
        if !lock(&self.inner.announced).insert((key, ty)) {
            return;
        }
        self.notify(Notice::FirstSubscription {
            client: crate::notices::client_label(name.as_deref()),
            scope: crate::notices::scope(ty, arguments),
        });
    }
}

/// What changed between two States that the user is told of: stores of enabled types newly
/// refused (Full Disk Access), a settings edit newly rejected.
pub(super) fn state_notices(previous: &State, next: &State) -> Vec<Notice> {
    let denied = |s: &State, name: &str| {
        s.types
            .iter()
            .any(|t| t.name == name && t.enabled && t.store.access == StoreAccess::PermissionDenied)
    };
    let mut notices = Vec::new();
    let newly: Vec<&'static str> = EventType::ALL
        .into_iter()
        .filter(|ty| denied(next, ty.name()) && !denied(previous, ty.name()))
        .map(EventType::app_name)
        .collect();
    if !newly.is_empty() {
        notices.push(Notice::FullDiskAccessMissing {
            stores: newly,
            stale: matches!(next.full_disk_access, FullDiskAccess::Stale { .. }),
        });
    }
    if let SettingsFileState::Rejected { line, .. } = &next.settings
        && previous.settings != next.settings
    {
        notices.push(Notice::SettingsRejected { line: *line });
    }
    notices
}

/// A store rebuilt (the hub saw a new file between two good reads) is a notice.
pub(super) fn spawn_rebuild_notices(daemon: &Daemon) {
    let weak = Arc::downgrade(&daemon.inner);
    let mut rebuilds = daemon.inner.hub.rebuilds();
    let shutdown = daemon.inner.shutdown.clone();
    tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                () = shutdown.cancelled() => return,
                r = rebuilds.recv() => r,
            };
            let ty = match received {
                Ok(ty) => ty,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let Some(inner) = weak.upgrade() else { return };
            Daemon { inner }.notify(Notice::StoreRebuilt {
                store: ty.app_name(),
            });
        }
    });
}
