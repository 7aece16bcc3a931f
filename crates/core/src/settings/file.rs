//! The settings file: read (bounded, regular files only), parsed into the model with errors
//! that name the line, and the text to write back (written by the caller: core writes no
//! file). A file that does not parse is an error that
//! names the line, never a silent reset. The file is read only if it is a regular file of at
//! most [`MAX_SETTINGS_BYTES`], so a FIFO or a huge file cannot wedge a reload.

use std::io::Read;
use std::path::Path;

use super::error::line_column;
use super::{MAX_SETTINGS_BYTES, Settings, SettingsError, edit};

/// The comment header of a file written whole: what each key means, for a person editing it.
const HEADER: &str = "\
# Tidings settings. Edited by the Tidings menu; changes apply while Tidings runs.
# [mail] is mail.received, [messages] is messages.received.
#   enabled = true|false      off until you turn it on
#   allow = [\"example.com\", \"ana@example.org\", \"+12025550143\", \"+120255501*\"]
#            senders that may ever reach an agent: addresses, phone numbers, domains (with
#            subdomains), or prefixes ending in *. Empty: each client must name its senders.
# [http] is the loopback Streamable HTTP endpoint (docs/http.md).
#   enabled = true|false      off until you turn it on
#   listen = \"127.0.0.1:3917\" a loopback address and port
#   allowed_origins = []      browser origins allowed to call it; empty refuses them all
# backfill_days = 7 (in [mail] or [messages]): a row dated more than this many days before
#   it appeared (an iCloud sync, an added account) is not delivered; 0 delivers everything.
# contact_names = true|false (in [mail] or [messages]): add the sender's name from Contacts
#   to what agents get; off until you turn it on.
# categories = [\"primary\"] (in [mail] or [messages]): only these categories may reach an
#   agent: primary, transactions, updates (Mail only), promotions. Absent or []: every one.
# [notifications] enabled = true|false   whether Tidings may notify you at all, and one
#   switch per kind: first_subscription, full_disk_access, store_rebuilt, settings_rejected,
#   agent_asks
# [agents] new = \"ask\"|\"allow\"|\"deny\"   what a program never seen before gets (ask: the
#   app asks you; with no app to ask, it is refused). [agents.known.ID] is one program's
#   grant: identity (what it is, found by Tidings), access = \"allow\"|\"deny\", and per type
#   mail = true|false|[\"example.com\"] (a list keeps only those entries of [mail] allow).
#   `tidings agents` lists them.
# [webhooks] allow = [\"https://hooks.example.com\", \"http://127.0.0.1:8787\"]   the only
#   origins webhook subscriptions may post events to; http:// only for this Mac (loopback).
# [updates] check = true|false   whether the app checks once a day for a newer version (the
#   check fetches the release feed and sends nothing about you); on by default.
";

impl Settings {
    /// Parse settings from TOML text; `path` is only used in the error. The error keeps the
    /// parser's diagnostic whole, lines included (it points at the column).
    pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|span| line_column(text, span.start));
            SettingsError::Invalid {
                path: path.to_owned(),
                message: e.to_string().trim_end().to_owned(),
                line: at.map(|(line, _)| line),
                column: at.map(|(_, column)| column),
                reason: e.message().trim_end().replace('\n', "; "),
            }
        })
    }

    /// Parse the bytes [`Settings::read`] returned; text that is not UTF-8 is invalid.
    pub fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Settings, SettingsError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Settings::parse(text, path),
            Err(e) => {
                let at = e.valid_up_to();
                // The bytes before `at` are valid UTF-8: that is what `valid_up_to` means.
                let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
                let (line, column) = line_column(valid, at);
                Err(SettingsError::Invalid {
                    path: path.to_owned(),
                    message: format!("byte {at} is not UTF-8; save the file as UTF-8 text"),
                    line: Some(line),
                    column: Some(column),
                    reason: "not UTF-8 text".to_owned(),
                })
            }
        }
    }

    /// The bytes of `path`, `None` when it does not exist. Refuses what is not a regular
    /// file after following symlinks (checked on the opened file, which is opened
    /// non-blocking, so a FIFO can neither block the open nor the read) and anything larger
    /// than [`MAX_SETTINGS_BYTES`].
    pub fn read(path: &Path) -> Result<Option<Vec<u8>>, SettingsError> {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let io = |source| SettingsError::Io {
            path: path.to_owned(),
            source,
        };
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let meta = file.metadata().map_err(io)?;
        let ft = meta.file_type();
        if !ft.is_file() {
            let kind = if ft.is_fifo() {
                "a FIFO"
            } else if ft.is_dir() {
                "a directory"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "a device"
            };
            return Err(SettingsError::NotRegular {
                path: path.to_owned(),
                kind,
            });
        }
        if meta.len() > MAX_SETTINGS_BYTES {
            return Err(SettingsError::TooLarge {
                path: path.to_owned(),
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // Bounded even if the file grows while we read.
        file.take(MAX_SETTINGS_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_SETTINGS_BYTES {
            return Err(SettingsError::TooLarge {
                path: path.to_owned(),
            });
        }
        Ok(Some(bytes))
    }

    /// Read `path`; a missing file gives the defaults (nothing on), any other failure an error.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        match Settings::read(path)? {
            Some(bytes) => Settings::parse_bytes(&bytes, path),
            None => Ok(Settings::default()),
        }
    }

    /// The text to write to the settings file so that it holds `self`, given `old`, the bytes
    /// the file holds now (`None` when there is none). A file that parses is edited in place:
    /// only the keys whose values changed are rewritten, so its comments, order and formatting
    /// survive (`settings/edit.rs`). A new file, or one that does not parse (the settings in
    /// force are then the last good ones), gets the whole text, with the comment header.
    /// `path` only names the file in the error. Core writes no file: the caller writes this
    /// text, atomically (`tidings_platform::files::write_atomic`).
    pub fn file_text(&self, old: Option<&[u8]>, path: &Path) -> Result<String, SettingsError> {
        let in_place = old
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|text| {
                let was = Settings::parse(text, path).ok()?;
                edit::edited(text, &was, self)
            });
        if let Some(text) = in_place {
            return Ok(text);
        }
        let body = toml::to_string_pretty(self).map_err(|e| SettingsError::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
            line: None,
            column: None,
            reason: e.to_string(),
        })?;
        Ok(format!("{HEADER}\n{body}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::SenderPattern;
    use crate::settings::AllowEntry;

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/settings.toml");
        let mut s = Settings::default();
        s.mail.enabled = true;
        s.mail.allow = vec![
            AllowEntry::Sender(SenderPattern::parse_allow("example.com").unwrap()),
            AllowEntry::Sender(SenderPattern::parse_allow("+120255501*").unwrap()),
        ];
        // A new file: the whole text, which reads back as the settings it was made from.
        let text = s.file_text(None, &path).unwrap();
        assert!(text.starts_with("# Tidings settings."), "{text}");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        assert_eq!(Settings::load(&path).unwrap(), s);
    }

    #[test]
    fn a_missing_file_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Settings::load(&dir.path().join("none.toml")).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn a_fifo_or_a_symlink_to_one_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("settings.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // No writer ever opens it: a blocking open or read would hang this test.
        let err = Settings::load(&fifo).unwrap_err();
        assert!(
            matches!(err, SettingsError::NotRegular { kind: "a FIFO", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let err = Settings::load(&link).unwrap_err();
        assert!(matches!(err, SettingsError::NotRegular { .. }), "{err}");
        let err = Settings::load(dir.path()).unwrap_err();
        assert!(matches!(
            err,
            SettingsError::NotRegular {
                kind: "a directory",
                ..
            }
        ));
    }

    #[test]
    fn a_file_over_one_mebibyte_is_refused_naming_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        let mut text = "[mail]\n".to_owned();
        text.push_str(&"#".repeat(usize::try_from(MAX_SETTINGS_BYTES).unwrap()));
        std::fs::write(&path, text).unwrap();
        let err = Settings::load(&path).unwrap_err().to_string();
        assert!(err.contains("1 MiB") && err.contains("1048576"), "{err}");
        // Exactly at the limit is fine.
        std::fs::write(
            &path,
            "#".repeat(usize::try_from(MAX_SETTINGS_BYTES).unwrap()),
        )
        .unwrap();
        assert_eq!(Settings::load(&path).unwrap(), Settings::default());
    }
}
