//! The user's region (`US`, `GB`), which turns a national number on a Contacts card into E.164.
//!
//! macOS keeps it in the global preferences (`AppleLocale`, `en_US` or `en_GB@rg=…`); the Linux
//! twin reads the POSIX locale variables. Both hand a locale string to the same parser, so the
//! only per-OS step is where the string comes from.

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

/// The region of the user whose home is `home`, as an upper-case ISO 3166 alpha-2 code, or
/// `None` when the locale names none (`C`, `POSIX`, unset).
pub fn current(home: &Path, source: LocaleSource) -> Option<String> {
    let locale = match source {
        LocaleSource::GlobalPreferences => apple_locale(home),
        LocaleSource::Environment => ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .find(|v| !v.is_empty()),
    }?;
    region_of_locale(&locale)
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

/// The region a locale string names: `en_US.UTF-8` → `US`, `en-GB` → `GB`, and macOS's region
/// override `en_US@rg=gbzzzz` → `GB` (the override is the region the user picked in System
/// Settings when it differs from the language's).
pub fn region_of_locale(locale: &str) -> Option<String> {
    let (base, modifiers) = locale.split_once('@').unwrap_or((locale, ""));
    let from_override = modifiers
        .split(';')
        .find_map(|m| m.strip_prefix("rg="))
        .and_then(|rg| rg.get(..2));
    let base = base.split('.').next().unwrap_or(base);
    let from_base = base.split(['_', '-']).skip(1).find(|part| part.len() == 2);
    let code = from_override.or(from_base)?;
    code.bytes()
        .all(|b| b.is_ascii_alphabetic())
        .then(|| code.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_name_their_region() {
        for (locale, region) in [
            ("en_US.UTF-8", Some("US")),
            ("en_GB", Some("GB")),
            ("de-DE", Some("DE")),
            ("zh_Hans_CN", Some("CN")),
            ("en_US@rg=gbzzzz", Some("GB")),
            ("C", None),
            ("POSIX", None),
            ("C.UTF-8", None),
            ("", None),
        ] {
            assert_eq!(region_of_locale(locale).as_deref(), region, "{locale}");
        }
    }

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
            Some("FR")
        );
    }
}
