//! The settings window's side of the bridge, kept from drifting (tests only): the TypeScript
//! types in `ui/src/generated/engine.ts`, rendered with ts-rs from the Rust types the bridge
//! carries, and the browser tests' fixtures in `ui/tests/fixtures/` (`fixtures`), captured
//! from a demo engine. Each test compares its rendering with the committed file and fails
//! naming [`BLESS`], the command that rewrites them all (docs/decisions/settings-window.md).

mod fixtures;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ts_rs::{Config, TS};

/// Rewrites every file this module checks; commit what it writes.
pub(crate) const BLESS: &str = "TIDINGS_BLESS=1 cargo test -p tidings-server --lib ui_contract";

/// The generated types, relative to `ui/`.
const TYPES_FILE: &str = "src/generated/engine.ts";

/// `ui/`, from this crate's directory.
fn ui_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui")
}

/// Whether this run rewrites the files instead of checking them (`TIDINGS_BLESS=1`).
fn blessing() -> bool {
    std::env::var_os("TIDINGS_BLESS").is_some_and(|v| v == "1")
}

/// Compare `rendered` with the committed `ui/<relative>`, or write it under `TIDINGS_BLESS=1`.
/// A difference fails with its first differing line and the command that refreshes the file.
pub(crate) fn check_or_bless(relative: &str, rendered: &str) {
    let path = ui_dir().join(relative);
    if blessing() {
        let dir = path.parent().expect("a file under ui/ has a directory");
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
        std::fs::write(&path, rendered).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == rendered {
        return;
    }
    let was: Vec<&str> = committed.lines().collect();
    let now: Vec<&str> = rendered.lines().collect();
    let line = (0..was.len().max(now.len()))
        .find(|&i| was.get(i) != now.get(i))
        .unwrap_or_default();
    let end = "<end of file>";
    let (was, now) = (was.get(line).unwrap_or(&end), now.get(line).unwrap_or(&end));
    let line = line + 1;
    panic!(
        "ui/{relative} is not what the engine makes of it now (line {line}: committed \
         {was:?}, now {now:?}); run `{BLESS}` and commit the result"
    );
}

/// How the types are rendered: `u64` as `number`, not ts-rs's `bigint`. The window gets them
/// through JSON, and every one it gets (ms since the epoch, counts, ids) is far below 2^53.
fn config() -> Config {
    Config::new().with_large_int("number")
}

/// The declarations rendered so far, and the names they declare.
struct Declarations {
    config: Config,
    text: String,
    declared: Vec<String>,
    used: Vec<(String, String)>,
}

impl Declarations {
    /// Declare `T` (its doc comment, then `export type …`), and note the types it names.
    fn add<T: TS + 'static>(&mut self) -> &mut Self {
        let name = T::ident(&self.config);
        self.text.push('\n');
        if let Some(docs) = T::docs() {
            self.text.push_str(&docs);
        }
        self.text.push_str("export ");
        self.text.push_str(&T::decl(&self.config));
        self.text.push('\n');
        for dependency in T::dependencies(&self.config) {
            self.used.push((name.clone(), dependency.ts_name));
        }
        self.declared.push(name);
        self
    }
}

/// `ui/src/generated/engine.ts`: every type the bridge carries to the window, in one file.
fn render_types() -> String {
    use crate::app::{
        AgentGrantView, AgentTokenView, AgentTypeView, AllowCheck, AllowEntryView, AskView,
        ContactsView, CreatedToken, GroupHit, HttpView, LoginView, NotificationSwitch, PersonHit,
        RecentSenderView, SettingsView, TypeGrantView, TypeView, UpdatesView,
    };
    use crate::clients::Delivery;
    use crate::state::{
        AgentAccess, AgentKind, AgentState, AllowlistSummary, ClientState, ContactsState,
        DestinationAskState, FullDiskAccess, HttpEndpointState, Mode, SettingsFileState, State,
        StoreAccess, StoreState, SubscriptionState, Transport, TypeGrantState, TypeState,
        WebhookState, WebhooksState,
    };
    use tidings_connect::app::{HostView, Outcome};
    use tidings_connect::verify::Verification;
    use tidings_core::allowlist::{AllowKind, EntryState};
    use tidings_core::settings::{NewAgents, NotificationKind};

    let mut d = Declarations {
        config: config(),
        text: format!(
            "// Generated from the engine's Rust types by crates/server/src/ui_contract/ (ts-rs):\n\
             // do not edit. After changing a type the bridge carries, run\n\
             // `{BLESS}`.\n"
        ),
        declared: Vec::new(),
        used: Vec::new(),
    };
    // `get_state` (the engine's part; the app adds `menuBar`) and `state-changed`.
    d.add::<State>()
        .add::<TypeState>()
        .add::<AllowlistSummary>()
        .add::<StoreState>()
        .add::<StoreAccess>()
        .add::<HttpEndpointState>()
        .add::<SettingsFileState>()
        .add::<ClientState>()
        .add::<Transport>()
        .add::<SubscriptionState>()
        .add::<Mode>()
        .add::<FullDiskAccess>()
        .add::<ContactsState>()
        .add::<AgentState>()
        .add::<WebhooksState>()
        .add::<WebhookState>()
        .add::<DestinationAskState>()
        .add::<AgentKind>()
        .add::<AgentAccess>()
        .add::<TypeGrantState>()
        .add::<NewAgents>();
    // `get_settings`, every settings change and `settings-changed`.
    d.add::<SettingsView>()
        .add::<TypeView>()
        .add::<HttpView>()
        .add::<NotificationSwitch>()
        .add::<NotificationKind>()
        .add::<LoginView>()
        .add::<AllowEntryView>()
        .add::<EntryState>()
        .add::<ContactsView>()
        .add::<AskView>()
        .add::<AgentGrantView>()
        .add::<AgentTokenView>()
        .add::<CreatedToken>()
        .add::<AgentTypeView>()
        .add::<TypeGrantView>()
        .add::<UpdatesView>();
    // The sender picker: `search_people`, `list_groups`, `recent_senders`.
    d.add::<PersonHit>()
        .add::<GroupHit>()
        .add::<RecentSenderView>();
    // `check_allow_entry`, `get_activity` and `activity-changed`.
    d.add::<AllowCheck>().add::<AllowKind>().add::<Delivery>();
    // `list_hosts`, `connect_host` and `disconnect_host`.
    d.add::<HostView>().add::<Outcome>().add::<Verification>();
    // The limit the window checks a backfill window against before sending it.
    writeln!(
        d.text,
        "\n/** The longest backfill window the app offers, in days (`app::MAX_APP_BACKFILL_DAYS`). */\n\
         export const MAX_APP_BACKFILL_DAYS = {};",
        crate::app::MAX_APP_BACKFILL_DAYS
    )
    .expect("writing to a String cannot fail");
    let missing: Vec<String> = d
        .used
        .iter()
        .filter(|(_, used)| !d.declared.contains(used))
        .map(|(by, used)| format!("{used} (named by {by})"))
        .collect();
    assert!(
        missing.is_empty(),
        "add these types to render_types in ui_contract/mod.rs (derive ts_rs::TS on them as their \
         neighbours do): {missing:?}"
    );
    // ts-rs leaves a space at the end of a line that opens an object: not kept.
    let mut text: String = d
        .text
        .lines()
        .map(|l| l.trim_end().to_owned() + "\n")
        .collect();
    text.truncate(text.trim_end().len() + 1);
    text
}

#[test]
fn the_windows_types_are_the_engines() {
    check_or_bless(TYPES_FILE, &render_types());
}
