//! The update a check kept until the user's word: the feed's release (`update.json`, what
//! the plugin restores the update from) and the archive whose signature was checked
//! (`update.tar.gz`), both 0600 in the updates folder. Install checks the archive again:
//! what sits on disk between the check and the click is not trusted.

use std::io;
use std::path::Path;

use serde_json::Value;
use tauri_plugin_updater::Update;
use tidings_platform::files::write_atomic;

/// The feed's release, as the feed gave it.
const RELEASE_FILE: &str = "update.json";

/// The downloaded archive.
const ARCHIVE_FILE: &str = "update.tar.gz";

/// What a check kept.
pub struct Kept {
    pub release: Value,
    pub archive: Vec<u8>,
}

/// Keeps `update` and its checked `archive` in `dir`, replacing what an earlier check kept.
/// The archive goes first: a release file names only an archive that is already whole.
pub fn keep(dir: &Path, update: &Update, archive: &[u8]) -> io::Result<()> {
    tidings_server::app::updates::create_private_dir(dir)?;
    let _ = std::fs::remove_file(dir.join(RELEASE_FILE));
    write_atomic(&dir.join(ARCHIVE_FILE), archive, 0o600)?;
    let release = serde_json::to_vec_pretty(&update.raw_json).map_err(io::Error::other)?;
    write_atomic(&dir.join(RELEASE_FILE), &release, 0o600)
}

/// What a check kept in `dir`, or why there is nothing to install.
pub fn read(dir: &Path) -> Result<Kept, String> {
    let missing = || "no update is ready: check for updates first".to_owned();
    let release = match std::fs::read(dir.join(RELEASE_FILE)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("{RELEASE_FILE} is damaged ({e}); check for updates again"))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => {
            return Err(format!(
                "cannot read {}: {e}",
                dir.join(RELEASE_FILE).display()
            ));
        }
    };
    let archive = match std::fs::read(dir.join(ARCHIVE_FILE)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => {
            return Err(format!(
                "cannot read {}: {e}",
                dir.join(ARCHIVE_FILE).display()
            ));
        }
    };
    Ok(Kept { release, archive })
}

/// Forgets what a check kept (installed, or no longer an update).
pub fn clear(dir: &Path) {
    for file in [RELEASE_FILE, ARCHIVE_FILE] {
        let _ = std::fs::remove_file(dir.join(file));
    }
}
