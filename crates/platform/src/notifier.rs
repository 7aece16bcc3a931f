//! [`Notifier`]: desktop notifications behind a trait, with the real [`DesktopNotifier`]
//! (notify-rust: `org.freedesktop.Notifications` over D-Bus on Linux, the Notification Center
//! on macOS) and a [`RecordingNotifier`] for tests.
//!
//! What to say and when is the engine's business (its notices); this only shows a title and
//! a body. A missing notification server is an `Err` here, never a panic: the caller logs it
//! once and goes on.

use std::sync::Mutex;

/// Why a notification could not be shown.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot show a desktop notification: {message}; on Linux a notification server \
     (org.freedesktop.Notifications, e.g. dunst or your desktop's) must be running"
)]
pub struct NotifyError {
    /// What the notification backend said.
    pub message: String,
}

/// Shows one desktop notification.
pub trait Notifier: Send + Sync {
    /// Show `title` with `body`. Blocking (D-Bus round trip): call off the async runtime.
    fn notify(&self, title: &str, body: &str) -> Result<(), NotifyError>;
}

/// The OS's notifications, through notify-rust (feature `desktop-notifications`).
#[cfg(feature = "desktop-notifications")]
#[derive(Debug, Clone, Copy, Default)]
pub struct DesktopNotifier;

#[cfg(feature = "desktop-notifications")]
impl Notifier for DesktopNotifier {
    fn notify(&self, title: &str, body: &str) -> Result<(), NotifyError> {
        notify_rust::Notification::new()
            .appname("Tidings")
            .summary(title)
            .body(body)
            .show()
            .map(drop)
            .map_err(|e| NotifyError {
                message: e.to_string(),
            })
    }
}

/// The notifier a daemon or the app shows notices with: [`DesktopNotifier`] when this build
/// has the `desktop-notifications` feature (the default of `tidings-server` and `tidings-cli`), else one that
/// says the build has none. The macOS type-check on Linux turns the feature off: its macOS
/// backend compiles Objective-C, which needs Apple's SDK.
pub fn desktop_notifier() -> std::sync::Arc<dyn Notifier> {
    #[cfg(feature = "desktop-notifications")]
    {
        std::sync::Arc::new(DesktopNotifier)
    }
    #[cfg(not(feature = "desktop-notifications"))]
    {
        std::sync::Arc::new(NoNotifier)
    }
}

/// A build without desktop notifications: every call says so.
#[cfg(not(feature = "desktop-notifications"))]
struct NoNotifier;

#[cfg(not(feature = "desktop-notifications"))]
impl Notifier for NoNotifier {
    fn notify(&self, _title: &str, _body: &str) -> Result<(), NotifyError> {
        Err(NotifyError {
            message: "this build of Tidings has no desktop notifications (cargo feature \
                      `desktop-notifications` off)"
                .to_owned(),
        })
    }
}

/// A test double: records every notification, and fails each call while `failing` is set (a
/// missing notification server).
#[derive(Debug, Default)]
pub struct RecordingNotifier {
    shown: Mutex<Vec<(String, String)>>,
    failing: Mutex<bool>,
}

impl RecordingNotifier {
    /// Records, never fails.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every call fails from now on (or succeeds again with `false`); failed calls are
    /// recorded too.
    pub fn set_failing(&self, failing: bool) {
        *self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = failing;
    }

    /// `(title, body)` of every call so far, oldest first.
    pub fn shown(&self) -> Vec<(String, String)> {
        self.shown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Notifier for RecordingNotifier {
    fn notify(&self, title: &str, body: &str) -> Result<(), NotifyError> {
        self.shown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((title.to_owned(), body.to_owned()));
        if *self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            return Err(NotifyError {
                message: "no notification server (recording notifier set to fail)".to_owned(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_records_and_fails_on_request() {
        let n = RecordingNotifier::new();
        n.notify("a", "b").unwrap();
        n.set_failing(true);
        let e = n.notify("c", "d").unwrap_err();
        assert!(e.to_string().contains("notification server"), "{e}");
        assert_eq!(n.shown().len(), 2);
        assert_eq!(n.shown()[0], ("a".to_owned(), "b".to_owned()));
    }
}
