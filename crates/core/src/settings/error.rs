//! Why settings could not be read: the error, with the line and column it names, and its
//! one-line summary that never quotes a value from the file.

use std::path::{Path, PathBuf};

use super::MAX_SETTINGS_BYTES;

/// Why settings could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file exists but could not be read, or could not be written.
    #[error("settings file {path}: {source}")]
    Io {
        /// The settings file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid settings; the message names the line and column.
    #[error("settings file {path} is invalid: {message}")]
    Invalid {
        /// The settings file.
        path: PathBuf,
        /// The parser's full diagnostic: line and column, the offending line, the reason.
        message: String,
        /// The 1-based line it names, when it names one.
        line: Option<usize>,
        /// The 1-based column (in characters) on that line, when it names one.
        column: Option<usize>,
        /// The reason alone, without the quoted line.
        reason: String,
    },
    /// The path is not a regular file (after following symlinks): a FIFO, a directory, a
    /// device. Reading one could block forever, so it is refused.
    #[error("settings file {path} is {kind}, not a regular file; replace it with a regular file")]
    NotRegular {
        /// The settings file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// The file is larger than [`MAX_SETTINGS_BYTES`].
    #[error(
        "settings file {path} is larger than the 1 MiB limit ({MAX_SETTINGS_BYTES} bytes); \
         settings fit in a few kilobytes, so check that this is the right file"
    )]
    TooLarge {
        /// The settings file.
        path: PathBuf,
    },
}

/// Keys of the settings file: a parser reason quoting only these quotes no user values.
const KEYS: &[&str] = &[
    "mail",
    "messages",
    "http",
    "enabled",
    "allow",
    "backfill_days",
    "contact_names",
    "categories",
    "listen",
    "allowed_origins",
    "notifications",
    "first_subscription",
    "full_disk_access",
    "store_rebuilt",
    "settings_rejected",
    "updates",
    "check",
];

impl SettingsError {
    /// One line for `tidings status` and for people: the file's name, the line and the
    /// parser's reason, without any value from the file (the reason is left out when it
    /// quotes one, as an allowlist entry or an address would be).
    pub fn summary(&self) -> String {
        match self {
            SettingsError::Invalid {
                path, line, reason, ..
            } => {
                let name = file_name(path);
                let at = line.map_or_else(|| name.clone(), |l| format!("{name} line {l}"));
                format!("{at}: {}", without_values(reason))
            }
            SettingsError::Io { path, source } => {
                format!("{}: {}", file_name(path), source.kind())
            }
            SettingsError::NotRegular { path, kind } => {
                format!("{} is {kind}, not a regular file", file_name(path))
            }
            SettingsError::TooLarge { path } => {
                format!("{} is larger than the 1 MiB limit", file_name(path))
            }
        }
    }

    /// The 1-based line the error names, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            SettingsError::Invalid { line, .. } => *line,
            _ => None,
        }
    }

    /// The 1-based column (in characters) the error names, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            SettingsError::Invalid { column, .. } => *column,
            _ => None,
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, as an editor shows
/// them; an offset past the end or inside a character counts from the character it falls in.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A parser reason with every value from the file replaced by `…`, so the reason can always be
/// shown (the user needs it to fix the file) and no address or name is. serde quotes values in
/// `"…"` or `'…'` and names in `` `…` ``: our own keys, TOML punctuation and the user's name
/// for an unknown key (never a value) are kept.
fn without_values(reason: &str) -> String {
    let unknown_key = reason.starts_with("unknown field");
    let mut out = String::new();
    for (i, part) in reason.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(&without_quoted(part));
            continue;
        }
        let ours = KEYS.contains(&part)
            || (part.len() == 1 && part.chars().all(|c| c.is_ascii_punctuation()))
            || (unknown_key
                && i == 1
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        out.push('`');
        out.push_str(if ours { part } else { "…" });
        out.push('`');
    }
    out
}

/// `text` with each `"…"` or `'…'` span replaced by `"…"` (an unclosed quote hides the rest).
fn without_quoted(text: &str) -> String {
    let mut out = String::new();
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            Some(q) if c == q => {
                out.push_str("\"…\"");
                open = None;
            }
            Some(_) => {}
            None if c == '"' || c == '\'' => open = Some(c),
            None => out.push(c),
        }
    }
    if open.is_some() {
        out.push_str("\"…");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::settings::Settings;

    #[test]
    fn malformed_toml_names_the_line() {
        let text = "[mail]\nenabled = true\nallow = [\"example.com\"\n";
        let err = Settings::parse(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") || err.contains("line 4"), "{err}");
    }

    #[test]
    fn a_bad_allow_entry_names_its_line() {
        let text = "[mail]\nenabled = true\n\n[messages]\nallow = [\"+1202*\", \"everyone\"]\n";
        let err = Settings::parse(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 5"), "{err}");
        assert!(err.contains("everyone"), "{err}");
    }

    #[test]
    fn multi_line_diagnostics_keep_their_lines() {
        let text = "[mail]\nenabled = maybe\n";
        let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("line 2, column 11\n"), "{shown}");
        assert!(shown.contains("\n2 | enabled = maybe\n"), "{shown}");
        assert_eq!(err.line(), Some(2));
    }

    #[test]
    fn the_summary_names_the_line_and_never_a_value() {
        let summary = |text: &str| {
            Settings::parse(text, Path::new("/c/settings.toml"))
                .unwrap_err()
                .summary()
        };
        assert_eq!(
            summary("[mail]\nenabled = maybe\n"),
            "settings.toml line 2: string values must be quoted, expected literal string"
        );
        assert_eq!(
            summary("[mail]\nalow = []\n"),
            "settings.toml line 2: unknown field `alow`, expected one of `enabled`, `allow`, \
             `backfill_days`, `contact_names`, `categories`"
        );
        // A reason that quotes a value keeps its words, not the value.
        let s = summary("[mail]\n\n\nallow = [\"x\", \"secret@example.com\", \"mom\"]\n");
        assert_eq!(
            s,
            "settings.toml line 4: `…` is not an address, a phone number, a domain or a prefix \
             ending in `*`"
        );
        let s = summary("[mail]\nenabled = \"ana@example.com\"\n");
        assert_eq!(
            s,
            "settings.toml line 2: invalid type: string \"…\", expected a boolean"
        );
        let s = summary("[messages]\nallow = [\"+1202*\", \"mom\"]\n");
        assert!(!s.contains("mom"), "{s}");
    }

    #[test]
    fn text_that_is_not_utf8_names_its_line() {
        let err =
            Settings::parse_bytes(b"[mail]\nallow = [\"\xff\"]\n", Path::new("s")).unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert_eq!(err.column(), Some(11), "after `allow = [\"`");
        assert_eq!(err.summary(), "s line 2: not UTF-8 text");
        let err = Settings::parse_bytes(b"# \xc3\xa9\n\xc3\xa9\xff", Path::new("s")).unwrap_err();
        assert_eq!(
            (err.line(), err.column()),
            (Some(2), Some(2)),
            "columns count characters"
        );
    }

    #[test]
    fn the_line_and_column_are_data_and_agree_with_the_message() {
        for text in [
            "[mail]\nenabled = maybe\n",
            "[mail]\n# café ☕\nallow = [\"é\", \"not a pattern\"]\n",
            "  [mail]\n  alow = []\n",
            "[mail]\nenabled = true\n[mail]\n",
            "é = 1",
        ] {
            let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
            let SettingsError::Invalid {
                line: Some(line),
                column: Some(column),
                ref message,
                ..
            } = err
            else {
                panic!("no position in {err:?}")
            };
            assert_eq!((err.line(), err.column()), (Some(line), Some(column)));
            assert!(
                message.contains(&format!("line {line}, column {column}\n")),
                "{text:?}: line {line}, column {column} vs {message}"
            );
        }
    }
}
