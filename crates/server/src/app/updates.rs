//! What the app's update checks leave behind for the menu and `tidings doctor`: the last
//! check's outcome (`updates/last-check.json` beside settings.toml) in words a person reads.
//! The check itself (Tauri's updater plugin) runs in the app's window program, which writes
//! this file; the menu and the doctor only read it (docs/decisions/updates.md).

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The folder beside settings.toml that holds the last check and a staged update.
pub const UPDATES_DIR: &str = "updates";

/// The last check's outcome, in [`UPDATES_DIR`].
pub const LAST_CHECK_FILE: &str = "last-check.json";

/// The updates folder for the settings file at `settings_path`.
pub fn updates_dir(settings_path: &Path) -> PathBuf {
    settings_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(UPDATES_DIR)
}

/// One check: when, from which version, and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastCheck {
    /// When it ended (ms since the Unix epoch).
    pub checked_at_ms: u64,
    /// The version that checked (this copy's).
    pub current: String,
    /// What came of it.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What a check came to. Only [`Outcome::Ready`] leaves anything to install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Outcome {
    /// Nothing newer: the feed's newest is this version (`None`: the feed answered 204).
    UpToDate { newest: Option<String> },
    /// A newer version, downloaded and its signature checked, waiting for the user's word.
    Ready(Staged),
    /// The feed offers an older version than this one: never installed.
    Older { offered: String },
    /// The check failed; nothing was downloaded or installed.
    Failed { reason: FailReason, message: String },
}

/// An update downloaded, checked and kept until the user installs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Staged {
    /// Its version.
    pub version: String,
    /// Its release notes as the feed gives them (untrusted text: shown, never run).
    pub notes: Option<String>,
    /// Who signed the app inside (macOS: `codesign`), `None` where nothing is code-signed.
    pub signed_by: Option<String>,
}

/// Why a check failed, one word each (the log and `tidings doctor --json` carry it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FailReason {
    /// No connection to the feed or the archive.
    Unreachable,
    /// The feed or the archive took longer than the bound.
    Timeout,
    /// An HTTP status other than 2xx.
    Http,
    /// The feed is not an update manifest (or has no entry for this Mac).
    Malformed,
    /// The feed's entry carries no signature.
    Unsigned,
    /// The archive's signature is not ours (another key, or altered bytes).
    Signature,
    /// The archive is larger than the bound.
    TooLarge,
    /// The app inside is signed by someone else: installing it would lose Full Disk Access.
    Identity,
    /// The updates folder could not be written.
    Io,
    /// The updater itself did not run or answer (the app's own fault, not the feed's).
    Updater,
}

impl Outcome {
    /// The newest version the feed named, when it named one.
    pub fn newest(&self) -> Option<&str> {
        match self {
            Outcome::UpToDate { newest } => newest.as_deref(),
            Outcome::Ready(staged) => Some(&staged.version),
            Outcome::Older { offered } => Some(offered),
            Outcome::Failed { .. } => None,
        }
    }
}

impl LastCheck {
    /// The check in one line, for the menu, the window and the doctor ("Tidings 0.2.0 is
    /// ready to install.").
    pub fn describe(&self) -> String {
        let current = &self.current;
        match &self.outcome {
            Outcome::UpToDate { .. } => format!("Tidings {current} is up to date."),
            Outcome::Ready(staged) => format!("Tidings {} is ready to install.", staged.version),
            Outcome::Older { offered } => format!(
                "The update feed offers {offered}, older than this {current}: nothing installed."
            ),
            Outcome::Failed { message, .. } => format!("Could not check for updates: {message}"),
        }
    }
}

/// The last check recorded in `dir`; `Ok(None)` when none has run.
pub fn read_last_check(dir: &Path) -> io::Result<Option<LastCheck>> {
    let path = dir.join(LAST_CHECK_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Records `check` in `dir` (created 0700; the file 0600, replaced whole).
pub fn write_last_check(dir: &Path, check: &LastCheck) -> io::Result<()> {
    create_private_dir(dir)?;
    let bytes = serde_json::to_vec_pretty(check).map_err(io::Error::other)?;
    tidings_platform::files::write_atomic(&dir.join(LAST_CHECK_FILE), &bytes, 0o600)
}

/// `dir`, created readable by this user only.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let updates = dir.path().join(UPDATES_DIR);
        assert_eq!(read_last_check(&updates).unwrap(), None);
        let check = LastCheck {
            checked_at_ms: 1,
            current: "0.1.0".into(),
            outcome: Outcome::Ready(Staged {
                version: "0.2.0".into(),
                notes: Some("Fixes.".into()),
                signed_by: None,
            }),
        };
        write_last_check(&updates, &check).unwrap();
        assert_eq!(read_last_check(&updates).unwrap().as_ref(), Some(&check));
        let text = std::fs::read_to_string(updates.join(LAST_CHECK_FILE)).unwrap();
        assert!(text.contains(r#""outcome": "ready""#), "{text}");
        assert_eq!(check.describe(), "Tidings 0.2.0 is ready to install.");
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LAST_CHECK_FILE), "{").unwrap();
        let error = read_last_check(dir.path()).unwrap_err();
        assert!(error.to_string().contains(LAST_CHECK_FILE), "{error}");
    }
}
