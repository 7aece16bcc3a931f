//! Pausing: every type off for clients until a deadline or a resume, still configured in the file.
//!
//! The deadline is wall-clock time, checked across a Mac's sleep.

use std::sync::Arc;
use std::time::Duration;

use super::Daemon;
use crate::sync::lock;

/// How often a pause's timer compares the wall clock with its deadline (a sleeping Mac
/// stops the monotonic clock its sleep is measured on).
const PAUSE_RECHECK: Duration = Duration::from_secs(30);

impl Daemon {
    /// Until when every type is paused (ms since the Unix epoch), if paused.
    pub fn paused_until_ms(&self) -> Option<u64> {
        *lock(&self.inner.paused_until)
    }

    /// Pause every type until `until_ms` (ms since the Unix epoch): clients see every type
    /// off, exactly as if each were turned off (streams end `NotFound`, `events/list` empties,
    /// `list_changed`), while settings.toml keeps them configured. At `until_ms`, or at
    /// [`resume`](Daemon::resume), it is as if they were turned back on. Not saved: a
    /// restart resumes (docs/decisions/app.md).
    pub fn pause_until(&self, until_ms: u64) {
        {
            let _guard = lock(&self.inner.settings_lock);
            *lock(&self.inner.paused_until) = Some(until_ms);
            self.publish_locked();
        }
        self.inner.board.changed();
        tracing::info!("paused every event type");
        let weak = Arc::downgrade(&self.inner);
        let shutdown = self.inner.shutdown.clone();
        self.inner.runtime.spawn(async move {
            // The deadline is wall-clock time ("Paused until 15:30"), and the monotonic clock
            // stops while a Mac sleeps: wake at least every PAUSE_RECHECK to compare.
            loop {
                let left = until_ms.saturating_sub(crate::state::now_ms());
                if left == 0 {
                    break;
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_millis(left).min(PAUSE_RECHECK)) => {}
                }
            }
            if let Some(inner) = weak.upgrade() {
                Daemon { inner }.resume_if(Some(until_ms));
            }
        });
    }

    /// End a pause now (a no-op when not paused).
    pub fn resume(&self) {
        let paused = self.paused_until_ms();
        self.resume_if(paused);
    }

    /// End the pause if it is still the one that ends at `until`: a later pause (a new
    /// deadline) is left alone by the earlier one's timer.
    fn resume_if(&self, until: Option<u64>) {
        {
            let _guard = lock(&self.inner.settings_lock);
            let mut paused = lock(&self.inner.paused_until);
            if until.is_none() || *paused != until {
                return;
            }
            *paused = None;
            drop(paused);
            self.publish_locked();
        }
        self.inner.board.changed();
        tracing::info!("resumed every event type");
    }
}
