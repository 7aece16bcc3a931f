//! The user's locale (`en_US`), whose region turns a national number on a Contacts card into E.164.
//!
//! macOS keeps it in the global preferences (`AppleLocale`, `en_US` or `en_US@rg=gbzzzz`); the
//! Linux twin reads the POSIX locale variables. Both give the caller a locale string, which
//! core's `contacts::Region::from_locale` reads, so the only per-OS step is where it comes from.

use std::path::Path;

/// Where the locale string is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocaleSource {
    /// `~/Library/Preferences/.GlobalPreferences.plist`, key `AppleLocale` (macOS).
    GlobalPreferences,
    /// `LC_ALL`, then `LC_MESSAGES`, then `LANG` (Linux, and a macOS shell).
    Environment,
}

impl LocaleSource {
    /// The source this OS uses.
    pub const CURRENT: LocaleSource = if cfg!(target_os = "macos") {
        LocaleSource::GlobalPreferences
    } else {
        LocaleSource::Environment
    };
}

/// The locale of the user whose home is `home`, or `None` when it is unset.
pub fn current(home: &Path, source: LocaleSource) -> Option<String> {
    match source {
        LocaleSource::GlobalPreferences => apple_locale(home),
        LocaleSource::Environment => ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .find(|v| !v.is_empty()),
    }
}

fn apple_locale(home: &Path) -> Option<String> {
    let path = home.join("Library/Preferences/.GlobalPreferences.plist");
    let value = plist::Value::from_file(path).ok()?;
    value
        .as_dictionary()?
        .get("AppleLocale")?
        .as_string()
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_preferences_are_read_from_the_home() {
        let home = tempfile::tempdir().unwrap();
        let prefs = home.path().join("Library/Preferences");
        std::fs::create_dir_all(&prefs).unwrap();
        assert_eq!(current(home.path(), LocaleSource::GlobalPreferences), None);
        let mut dict = plist::Dictionary::new();
        dict.insert("AppleLocale".into(), "fr_FR".into());
        plist::Value::Dictionary(dict)
            .to_file_binary(prefs.join(".GlobalPreferences.plist"))
            .unwrap();
        assert_eq!(
            current(home.path(), LocaleSource::GlobalPreferences).as_deref(),
            Some("fr_FR")
        );
    }
}
