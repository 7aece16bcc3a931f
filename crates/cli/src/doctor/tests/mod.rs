//! Tests of the checks and their rendering, on findings made up in place of a machine; the
//! update checks (version, updates, grant) in `updates`.

use std::path::PathBuf;

use tidings_server::state::{FullDiskAccess, SettingsFileState};

use super::checks::{access_check, store_check};
use super::*;

mod updates;

/// "Now" in the findings: 2025-01-01, so a check made an hour earlier reads "1 h ago".
const NOW_MS: u64 = 1_735_689_600_000;

fn findings(daemon: Result<State, String>, local: Vec<Result<(), StoreError>>) -> Findings {
    Findings {
        socket: PathBuf::from("/run/t/tidings.sock"),
        daemon,
        socket_dir: Some(Ok(())),
        settings_path: PathBuf::from("/c/settings.toml"),
        settings: Ok(Settings::default()),
        local_stores: local,
        http_reachable: None,
        login: LoginView {
            state: "enabled",
            text: "Tidings starts at login.".into(),
        },
        clients: Vec::new(),
        contacts: tidings_server::state::ContactsState {
            stores_read: 1,
            problem: None,
        },
        last_check: Ok(None),
        install: InstallSource::Direct,
        own_signing: OwnSigning::NotHere,
        now_ms: NOW_MS,
    }
}

#[test]
fn an_unreadable_contacts_store_warns_only_when_an_entry_needs_it() {
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    assert_eq!(
        named(&checks::checks(&f), "contacts").outcome,
        Outcome::Pass
    );
    f.contacts = tidings_server::state::ContactsState {
        stores_read: 0,
        problem: Some("/h/AddressBook-v22.abcddb: unreadable (permission denied)".into()),
    };
    let c = named(&checks::checks(&f), "contacts").clone();
    assert_eq!(c.outcome, Outcome::Pass, "no entry needs Contacts: {c:?}");
    let mut s = Settings::default();
    s.messages.allow = vec![tidings_core::settings::AllowEntry::parse("group: Family").unwrap()];
    f.settings = Ok(s);
    let c = named(&checks::checks(&f), "contacts").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(
        c.detail.contains("/h/AddressBook-v22.abcddb: unreadable"),
        "{c:?}"
    );
    assert!(c.detail.contains("match nobody"), "{c:?}");
    assert!(
        c.fix.as_deref().unwrap_or("").contains("Full Disk Access"),
        "{c:?}"
    );
}

fn named<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.name == name).expect(name)
}

#[test]
fn a_client_whose_handshake_fails_is_a_failure_with_the_way_to_reconnect() {
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    f.clients = vec![
        (
            "cursor",
            Ok(Verification {
                ok: true,
                message: "Connected ✓".into(),
            }),
        ),
        (
            "claude-code",
            Ok(Verification {
                ok: false,
                message: "tidings-mcp exited with status 69".into(),
            }),
        ),
        ("zed", Err("settings.json line 3 column 1: not JSON".into())),
    ];
    let checks = checks(&f);
    assert_eq!(named(&checks, "client cursor").outcome, Outcome::Pass);
    let failed = named(&checks, "client claude-code");
    assert_eq!(failed.outcome, Outcome::Fail);
    assert!(
        failed
            .fix
            .as_deref()
            .unwrap()
            .contains("tidings connect claude-code")
    );
    assert_eq!(named(&checks, "client zed").outcome, Outcome::Fail);
}

#[test]
fn no_client_and_no_login_item_are_warnings_that_say_what_to_run() {
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    f.login = LoginView {
        state: "disabled",
        text: "Tidings does not start at login.".into(),
    };
    let checks = checks(&f);
    let login = named(&checks, "login item");
    assert_eq!(login.outcome, Outcome::Warn);
    assert!(login.fix.as_deref().unwrap().contains("tidings install"));
    let clients = named(&checks, "clients");
    assert_eq!(clients.outcome, Outcome::Warn);
    assert!(clients.fix.as_deref().unwrap().contains("tidings connect"));
}

fn denied(store: &'static str) -> Result<(), StoreError> {
    Err(StoreError::PermissionDenied {
        store,
        path: PathBuf::from("/h/x"),
    })
}

#[test]
fn eperm_without_a_daemon_fails_with_the_full_disk_access_fix() {
    let f = findings(
        Err("Tidings is not running".into()),
        vec![denied("Mail"), Ok(())],
    );
    let checks = checks(&f);
    let by = |n: &str| checks.iter().find(|c| c.name == n).unwrap().clone();
    assert_eq!(by("daemon").outcome, Outcome::Fail);
    let mail = by("mail store");
    assert_eq!(mail.outcome, Outcome::Fail);
    assert!(mail.detail.contains("checked by this process"), "{mail:?}");
    assert!(mail.fix.unwrap().contains("not to Terminal"));
    assert_eq!(by("messages store").outcome, Outcome::Pass);
    let access = by("full disk access");
    assert_eq!(access.outcome, Outcome::Fail);
    assert!(access.fix.unwrap().contains("Full Disk Access"));
    let text = render(&checks);
    assert!(text.contains("[FAIL] mail store"), "{text}");
    assert!(
        text.contains("       fix: Grant Full Disk Access"),
        "{text}"
    );
    assert!(text.ends_with("3 checks failed.\n"), "{text}");
}

#[test]
fn a_missing_store_fails_only_for_a_type_that_is_on() {
    let missing = || {
        Err(StoreError::Missing {
            store: "Messages",
            path: PathBuf::from("/h/chat.db"),
        })
    };
    let mut f = findings(Err("down".into()), vec![Ok(()), missing()]);
    let c = store_check(&f, EventType::MessagesReceived, 1);
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    let mut s = Settings::default();
    s.messages.enabled = true;
    f.settings = Ok(s);
    let c = store_check(&f, EventType::MessagesReceived, 1);
    assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
}

/// A daemon's state at `version`, everything else quiet.
fn state(version: &str) -> State {
    State {
        version: version.into(),
        socket: None,
        connections: 1,
        streams: 0,
        types: vec![],
        http: HttpEndpointState::Off,
        settings: SettingsFileState::Ok,
        clients: vec![],
        agents: vec![],
        new_agents: tidings_core::settings::NewAgents::Ask,
        paused_until_ms: None,
        full_disk_access: FullDiskAccess::Granted,
        contacts: tidings_server::state::ContactsState::default(),
        webhooks: tidings_server::state::WebhooksState::default(),
    }
}

#[test]
fn a_stale_grant_says_to_re_add_tidings() {
    let mut state = state("2");
    state.full_disk_access = FullDiskAccess::Stale {
        last_granted: "1".into(),
    };
    let c = access_check(&findings(Ok(state), vec![Ok(()), Ok(())]));
    assert_eq!(c.outcome, Outcome::Fail);
    assert!(c.detail.contains("Tidings 1 had it"), "{c:?}");
    assert!(c.fix.unwrap().contains("remove Tidings"));
}
