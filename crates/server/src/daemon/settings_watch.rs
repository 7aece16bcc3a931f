//! Watches `settings.toml` (through its directory, as editors and our own atomic save replace
//! the file) and applies each good edit live; a malformed edit is logged, without its
//! contents, and the last good settings stay in force.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tidings_core::Settings;
use tidings_core::settings::SettingsError;
use tokio::sync::Notify;

use super::{Daemon, DaemonError};

/// A fixed window (never restarted) that gathers an editor's truncate-then-write into one
/// reload; settings are edited by people, so 50 ms costs nothing.
const SETTLE: Duration = Duration::from_millis(50);

/// Install the watcher and spawn the reload task; the task ends at shutdown.
pub(super) fn start(daemon: &Daemon) -> Result<notify::RecommendedWatcher, DaemonError> {
    let path = daemon.settings_path().to_owned();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => Path::new(".").to_owned(),
    };
    let watch_error = |message: String| DaemonError::SettingsWatch {
        path: dir.clone(),
        message,
    };
    // The directory must exist to be watched; `update_settings` would create it anyway.
    std::fs::create_dir_all(&dir).map_err(|e| watch_error(e.to_string()))?;
    let kick = Arc::new(Notify::new());
    let name = path.file_name().map(|n| n.to_owned());
    let handler = {
        let kick = kick.clone();
        move |res: notify::Result<notify::Event>| {
            let Ok(event) = res else { return };
            if event
                .paths
                .iter()
                .any(|p| p.file_name().is_some() && p.file_name() == name.as_deref())
            {
                kick.notify_one();
            }
        }
    };
    let mut watcher =
        notify::recommended_watcher(handler).map_err(|e| watch_error(e.to_string()))?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| watch_error(e.to_string()))?;
    let daemon = daemon.clone();
    tokio::spawn(async move {
        let shutdown = daemon.shutdown_token().clone();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = kick.notified() => {
                    tokio::time::sleep(SETTLE).await;
                    reload(&daemon).await;
                }
            }
        }
    });
    Ok(watcher)
}

async fn reload(daemon: &Daemon) {
    let path = daemon.settings_path().to_owned();
    let loaded = tokio::task::spawn_blocking(move || Settings::load(&path)).await;
    match loaded {
        Ok(Ok(settings)) => daemon.apply_settings(settings),
        Ok(Err(e)) => {
            daemon.note_rejected_edit();
            // The parser's message quotes the offending line, which may hold addresses: log
            // only where it is.
            tracing::warn!(
                settings = %daemon.settings_path().display(),
                line = line_of(&e).unwrap_or(0),
                "settings file is invalid; keeping the last good settings"
            );
        }
        Err(e) => tracing::warn!(error = %e, "settings reload task failed"),
    }
}

/// The line number a settings error names, if any.
pub(super) fn line_of(e: &SettingsError) -> Option<u32> {
    let text = e.to_string();
    let at = text.find("line ")?;
    let digits: String = text[at + 5..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_found_without_the_contents() {
        let e = Settings::parse("[mail]\nenabled = \"secret@example.com\"\n", Path::new("s"))
            .unwrap_err();
        assert_eq!(line_of(&e), Some(2));
    }
}
