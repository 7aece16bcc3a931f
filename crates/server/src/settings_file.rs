//! Writing `settings.toml`: core gives the file's new text (edited in place, comments kept),
//! and the platform's one atomic write puts it there, keeping the file's mode.

use std::path::Path;

use tidings_core::Settings;
use tidings_core::settings::SettingsError;

/// The mode of a settings file Tidings creates: the user's alone (it names who may reach an
/// agent).
pub const NEW_FILE_MODE: u32 = 0o600;

/// Save `settings` to `path`: a file that is there and parses is edited in place (only the
/// keys whose values changed; comments, order and formatting stay), any other is written
/// whole with the comment header ([`Settings::file_text`]). Atomic, with the file's mode kept.
pub fn save(settings: &Settings, path: &Path) -> Result<(), SettingsError> {
    let old = Settings::read(path)?;
    let text = settings.file_text(old.as_deref(), path)?;
    write(path, &text)
}

/// Write the defaults, with the comment header, when `path` does not exist yet; true when it
/// wrote them (a first run).
pub fn create_if_missing(path: &Path) -> Result<bool, SettingsError> {
    if Settings::read(path)?.is_some() {
        return Ok(false);
    }
    save(&Settings::default(), path)?;
    Ok(true)
}

/// Replace `path` with `text` through the platform's atomic write (a synced temporary file
/// renamed over it, parent directories created), keeping the file's permission bits; a new
/// file gets [`NEW_FILE_MODE`].
pub fn write(path: &Path, text: &str) -> Result<(), SettingsError> {
    tidings_platform::files::replace_keeping_mode(path, text.as_bytes(), NEW_FILE_MODE).map_err(
        |source| SettingsError::Io {
            path: path.to_owned(),
            source,
        },
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use tidings_core::filter::SenderPattern;
    use tidings_core::settings::AllowEntry;

    use super::*;

    /// A file as a user might leave it: their own comments, defaults left out.
    const COMMENTED: &str = "\
# My Tidings settings.

[mail]
# Acme only, for now.
allow = [\"acme.com\"]  # keep this short
enabled = true   # on since March
";

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn save_edits_a_file_that_parses_and_rewrites_one_that_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, COMMENTED).unwrap();
        let mut settings = Settings::load(&path).unwrap();
        settings.messages.enabled = true;
        save(&settings, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        for comment in COMMENTED
            .lines()
            .filter_map(|l| l.find('#').map(|at| &l[at..]))
        {
            assert!(text.contains(comment), "lost {comment:?}:\n{text}");
        }
        assert_eq!(Settings::load(&path).unwrap(), settings);
        // A file that does not parse holds nothing to keep: written whole, with the header.
        std::fs::write(&path, "[mail\n").unwrap();
        save(&settings, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Tidings settings."), "{text}");
        assert_eq!(Settings::load(&path).unwrap(), settings);
    }

    #[test]
    fn a_new_file_is_the_users_alone_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config/settings.toml");
        assert!(
            create_if_missing(&path).unwrap(),
            "a first run writes the defaults"
        );
        assert_eq!(mode(&path), NEW_FILE_MODE);
        assert_eq!(Settings::load(&path).unwrap(), Settings::default());
        assert!(!create_if_missing(&path).unwrap(), "and only once");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut settings = Settings::default();
        settings.mail.enabled = true;
        settings.mail.allow = vec![AllowEntry::Sender(
            SenderPattern::parse_allow("acme.com").unwrap(),
        )];
        save(&settings, &path).unwrap();
        assert_eq!(mode(&path), 0o640, "the user's own choice of mode stays");
        assert_eq!(Settings::load(&path).unwrap(), settings);
        // Nothing but the file in its directory: no temporary file left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_not_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::create_dir(&path).unwrap();
        let err = save(&Settings::default(), &path).unwrap_err();
        assert!(matches!(err, SettingsError::NotRegular { .. }), "{err}");
        assert!(path.is_dir());
    }
}
