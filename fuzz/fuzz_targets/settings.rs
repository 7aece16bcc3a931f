//! Settings parsing (`Settings::parse`) on arbitrary text: never panics, and settings that parse survive a save: printed as `Settings::file_text` prints a new file, they
//! parse back to the same settings (an allowlist entry must not change meaning on the way).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidings_core::Settings;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = std::path::Path::new("settings.toml");
    match Settings::parse(text, path) {
        Ok(settings) => {
            let saved = toml::to_string_pretty(&settings).expect("parsed settings serialise");
            let again = Settings::parse(&saved, path)
                .unwrap_or_else(|e| panic!("saved settings do not parse: {e}\n{saved}"));
            assert_eq!(
                again, settings,
                "changed on the way through a save:\n{saved}"
            );
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
