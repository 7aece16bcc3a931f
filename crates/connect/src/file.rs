//! A host's config file on disk: read it whole, back it up beside itself, and replace it
//! atomically (a temp file in the same directory, the old mode kept, then rename), so a
//! crash or a full disk never leaves it half-written.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The file's text, `None` when it does not exist. Not UTF-8 is an `InvalidData` error.
pub fn read(path: &Path) -> io::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The file to write for `path`: its target when it is a symlink (a dotfiles manager's
/// link stays a link), else `path` itself.
pub fn target(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Copies `path` to `<name>.tidings-backup-<UTC time>` beside it (a new name each time, so
/// an earlier backup is never overwritten) with the same mode; returns the backup's path.
pub fn backup(path: &Path) -> io::Result<PathBuf> {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .map_err(io::Error::other)?;
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let mut candidate = path.with_file_name(format!("{name}.tidings-backup-{stamp}"));
    let mut n = 1;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{name}.tidings-backup-{stamp}-{n}"));
        n += 1;
    }
    fs::copy(path, &candidate)?;
    Ok(candidate)
}

/// Replaces `path` with `text`: written and synced to a temp file in the same directory,
/// given the old file's mode (0600 for a new file: configs can hold tokens), then renamed
/// over it. Creates missing parent directories.
pub fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    tidings_platform::files::replace_keeping_mode(path, text.as_bytes(), 0o600)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_write_keeps_the_mode_and_a_backup_keeps_the_old_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let saved = backup(&path).unwrap();
        let second = backup(&path).unwrap();
        assert_ne!(
            saved, second,
            "a second backup must not overwrite the first"
        );
        write_atomic(&path, "new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_to_string(&saved).unwrap(), "old");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let fresh = dir.path().join("a/b/new.json");
        write_atomic(&fresh, "{}").unwrap();
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read(&dir.path().join("none")).unwrap(), None);
    }
}
