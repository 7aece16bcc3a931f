//! Replacing a file whole: the one atomic write the CLI, the app and the daemon use for the
//! files they own or edit (login items, MCP hosts' configs, cursor files, records).

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Replaces `path` with `bytes`: written and synced to a temporary file in the same directory,
/// given `mode`, then renamed over it, so a reader (launchd, systemd, a host, another
/// `tidings`) sees the old file or the new one, never half of one. Creates missing parent
/// directories; on failure the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tidings-")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Replaces `path` with `bytes` through [`write_atomic`], keeping the file's permission bits;
/// a file that is not there yet gets `new_mode`. For files the user owns and may have
/// narrowed or widened by hand (a host's config, `settings.toml`).
pub fn replace_keeping_mode(path: &Path, bytes: &[u8], new_mode: u32) -> io::Result<()> {
    let mode = fs::metadata(path).map_or(new_mode, |m| m.permissions().mode() & 0o7777);
    write_atomic(path, bytes, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_with_the_mode_given_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/file");
        write_atomic(&path, b"one", 0o644).unwrap();
        write_atomic(&path, b"two", 0o600).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600);
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the file itself: {names:?}");
    }

    #[test]
    fn a_replace_keeps_the_mode_and_a_new_file_gets_the_one_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        replace_keeping_mode(&path, b"one", 0o600).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path), 0o600);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        replace_keeping_mode(&path, b"two", 0o600).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(mode(&path), 0o640);
    }
}
