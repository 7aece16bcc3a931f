//! The stale-grant record: the last build that could read a store, kept in the data directory.
//!
//! It tells a Full Disk Access grant lost with an update from one never given.

use std::path::PathBuf;

use super::Daemon;
use crate::sync::lock;

/// This build as the stale-grant record and the bug report name it: the version and the git
/// commit, as `--version` prints them.
pub fn build_id() -> &'static str {
    tidings_platform::version::LONG
}

impl Daemon {
    /// The version that last read a store, as remembered in the data directory.
    pub(super) fn last_access_version(&self) -> Option<String> {
        lock(&self.inner.access_record)
            .as_ref()
            .and_then(|(_, v)| v.clone())
    }

    /// Remember the last version that could read a store in `path` (the data directory's
    /// `access-granted`), so a grant lost with an update is told from one never given.
    /// Read now; written whenever a store is readable under a build not yet recorded.
    pub fn set_access_record(&self, path: PathBuf) {
        let version = std::fs::read_to_string(&path)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        *lock(&self.inner.access_record) = Some((path, version));
        self.inner.board.changed();
    }

    /// A store was readable: record this build, if it is not the one recorded. Atomic
    /// (temp file and rename); a failure is logged, never fatal.
    pub(super) fn record_access(&self) {
        let build = build_id();
        let mut record = lock(&self.inner.access_record);
        let Some((path, version)) = record.as_mut() else {
            return;
        };
        if version.as_deref() == Some(build) {
            return;
        }
        match tidings_platform::files::write_atomic(path, format!("{build}\n").as_bytes(), 0o644) {
            Ok(()) => *version = Some(build.to_owned()),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot record Full Disk Access");
            }
        }
    }
}
