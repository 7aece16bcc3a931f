//! The login item's files parsed back: the `LaunchAgent` plists (the one written, the one the
//! bundle ships) and the systemd user unit.

use std::path::Path;

use super::*;

fn parse_plist(text: &str) -> plist::Dictionary {
    plist::Value::from_reader_xml(text.as_bytes())
        .expect("valid XML plist")
        .into_dictionary()
        .expect("a dictionary at the top")
}

#[test]
fn the_agent_plist_has_every_key_launchd_needs() {
    let dict = parse_plist(&launchd::agent_plist(&[APP.to_owned()]));
    assert_eq!(dict["Label"].as_string(), Some("dev.tidings.Tidings"));
    let args: Vec<_> = dict["ProgramArguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_string().unwrap())
        .collect();
    assert_eq!(args, [APP]);
    assert_eq!(dict["RunAtLoad"].as_boolean(), Some(true));
    let keep_alive = dict["KeepAlive"].as_dictionary().unwrap();
    assert_eq!(keep_alive["SuccessfulExit"].as_boolean(), Some(false));
    assert_eq!(keep_alive.len(), 1);
    assert_eq!(dict["ThrottleInterval"].as_unsigned_integer(), Some(10));
    assert_eq!(dict["ProcessType"].as_string(), Some("Interactive"));
    assert_eq!(dict["LimitLoadToSessionType"].as_string(), Some("Aqua"));
    let ids = dict["AssociatedBundleIdentifiers"].as_array().unwrap();
    assert_eq!(ids, &[plist::Value::from("dev.tidings.Tidings")]);
    assert!(!dict.contains_key("BundleProgram"));
}

#[test]
fn the_bundled_plist_uses_bundle_program_and_matches_the_committed_file() {
    let text = launchd::bundled_plist();
    let dict = parse_plist(&text);
    assert_eq!(
        dict["BundleProgram"].as_string(),
        Some("Contents/MacOS/tidings-app")
    );
    assert!(!dict.contains_key("ProgramArguments"));
    assert_eq!(
        dict["KeepAlive"].as_dictionary().unwrap()["SuccessfulExit"].as_boolean(),
        Some(false)
    );
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../src-tauri/macos/LaunchAgents")
        .join(PLIST_NAME);
    if std::env::var_os("TIDINGS_BLESS").is_some() {
        std::fs::create_dir_all(committed.parent().unwrap()).unwrap();
        std::fs::write(&committed, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
    assert_eq!(
        on_disk,
        text,
        "{} differs from the generator; run `TIDINGS_BLESS=1 cargo test -p tidings-platform \
         bundled_plist` and commit it",
        committed.display()
    );
}

#[test]
fn the_plist_name_is_the_label() {
    assert_eq!(PLIST_NAME, format!("{LABEL}.plist"));
}

/// `[section]` → key → values (a key may repeat), ignoring comments and blank lines.
fn parse_ini(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            continue;
        }
        let (key, value) = line.split_once('=').expect("key=value");
        out.push((section.clone(), key.to_owned(), value.to_owned()));
    }
    out
}

fn ini_get<'a>(ini: &'a [(String, String, String)], section: &str, key: &str) -> Vec<&'a str> {
    ini.iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v.as_str())
        .collect()
}
#[test]
fn the_unit_restarts_on_failure_and_runs_the_app_in_the_graphical_session() {
    let home = tempfile::tempdir().unwrap();
    let ini = parse_ini(&systemd::unit(&plan(
        Os::Linux,
        home.path(),
        "/opt/tidings/tidings-app",
    )));
    assert_eq!(
        ini_get(&ini, "Service", "ExecStart"),
        ["\"/opt/tidings/tidings-app\""]
    );
    assert_eq!(ini_get(&ini, "Service", "Restart"), ["on-failure"]);
    assert_eq!(ini_get(&ini, "Service", "RestartSec"), ["10"]);
    assert_eq!(ini_get(&ini, "Unit", "After"), ["graphical-session.target"]);
    assert_eq!(
        ini_get(&ini, "Install", "WantedBy"),
        ["graphical-session.target"]
    );
    assert_eq!(ini_get(&ini, "Unit", "Description").len(), 1);
}

#[test]
fn the_unit_for_the_cli_serves_headless_and_quotes_odd_paths() {
    let home = tempfile::tempdir().unwrap();
    let ini = parse_ini(&systemd::unit(&plan(
        Os::Linux,
        home.path(),
        "/my dir/100%/$x/tidings",
    )));
    assert_eq!(
        ini_get(&ini, "Service", "ExecStart"),
        ["\"/my dir/100%%/$$x/tidings\" \"serve\""]
    );
    assert_eq!(ini_get(&ini, "Install", "WantedBy"), ["default.target"]);
    assert!(ini_get(&ini, "Unit", "After").is_empty());
}
