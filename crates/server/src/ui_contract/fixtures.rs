//! The browser tests' fixtures (`ui/tests/fixtures/`), captured from the engine the app
//! embeds, on fresh demo stores: `state.json` (`get_state`), `settings.json`
//! (`get_settings`) and `activity.json` (`get_activity`). The run is the one the tests read
//! it as: `tidings status` asked twice, then three clients on the socket (ids 3 to 5), a push
//! stream of Mail (one sender, one domain) and one of Messages, and five deliveries. What
//! differs from run to run (times, pids, the temporary directory, the login item, the shim
//! found, the build's version) is pinned afterwards, so the files are the same every run.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tidings_fixtures::{AccountKind, Addr, MailFixture, MessagesFixture, NewChat, NewMail};
use tidings_fixtures::{NewMessage, Service, apple_ns_from_unix, dates::now_unix};
use tidings_platform::KeyringKeychain;
use tidings_platform::keychain::{HTTP_TOKEN_ACCOUNT, Keychain, SERVICE};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::check_or_bless;
use crate::app::{self, LoginView};
use crate::clients::Delivery;
use crate::engine::{Config, DemoConfig, HttpConfig};
use crate::http::auth::AuthMode;
use crate::state::State;
use crate::{Handle, Tidings};

/// The cap on every wait.
const WAIT: Duration = Duration::from_secs(20);

/// Where the demo directory shows in the fixtures.
const ROOT: &str = "/tmp/ui-d";

/// The shim the installed app offers in its snippet.
const APP_SHIM: &str = "/Applications/Tidings.app/Contents/MacOS/tidings-mcp";

/// The clients' announced name and version, as `tidings tail` announces itself.
const CLIENT: (&str, &str) = ("tidings", "0.1.0");

/// The program the fixtures' clients are, as the agent behind them.
const AGENT_PROGRAM: &str = "/usr/local/bin/claude";

/// Its name.
const AGENT_NAME: &str = "claude";

/// The engine's version in the fixtures: a release would otherwise change them.
const VERSION: &str = "0.1.0";

/// The first client's connection: 2026-11-30 14:36:27.711 UTC.
const T0: u64 = 1_796_049_387_711;

/// Each client's pid, in the order they connected (all three are this process).
const PIDS: [i32; 3] = [15_439, 15_450, 15_996];

/// The HTTP token in the keychain: 32 fixed bytes, as a token is made.
fn token() -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b"tidings-ui-fixture-token-32bytes")
}

/// A raw NDJSON client on the socket, announcing itself as [`CLIENT`] on every request.
struct Client {
    writer: OwnedWriteHalf,
    lines: Lines<BufReader<OwnedReadHalf>>,
}

impl Client {
    async fn connect(socket: &Path) -> Client {
        let (read, writer) = UnixStream::connect(socket)
            .await
            .expect("the demo engine's socket accepts")
            .into_split();
        Client {
            writer,
            lines: BufReader::new(read).lines(),
        }
    }

    async fn request(&mut self, id: u64, method: &str, mut params: Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": CLIENT.0, "version": CLIENT.1},
        });
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next frame matching `pred`, dropping the others.
    async fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let read = async {
            loop {
                let line = self.lines.next_line().await.unwrap().expect("open");
                let frame: Value = serde_json::from_str(&line).unwrap();
                if pred(&frame) {
                    return frame;
                }
            }
        };
        tokio::time::timeout(WAIT, read)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
    }

    /// Request `method` and wait for its answer.
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params).await;
        self.until(method, |f| f["id"] == json!(id)).await
    }

    /// Open a push stream of `name` and wait until it is active.
    async fn stream(&mut self, name: &str, arguments: Value) {
        self.request(
            1,
            "events/stream",
            json!({"name": name, "arguments": arguments}),
        )
        .await;
        self.until("the stream active", |f| {
            f["method"] == "notifications/events/active"
        })
        .await;
    }

    /// Keep reading (events, heartbeats) until the engine closes the connection.
    fn drain(mut self) {
        tokio::spawn(async move { while let Ok(Some(_)) = self.lines.next_line().await {} });
    }
}

/// Wait until the engine's state satisfies `cond`.
async fn state_until(handle: &Handle, what: &str, cond: impl Fn(&State) -> bool) -> State {
    let mut state = handle.state();
    let found = tokio::time::timeout(WAIT, state.wait_for(|s| cond(s)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    found.expect("the engine runs").clone()
}

/// Wait until the activity log holds `n` deliveries.
async fn delivered(handle: &Handle, n: usize) {
    let mut changes = handle.activity().subscribe();
    let log = handle.activity();
    tokio::time::timeout(WAIT, changes.wait_for(|_| log.snapshot().len() == n))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for delivery {n}: {:?}", log.snapshot()))
        .expect("the engine runs");
}

/// New mail and messages, dated now, written as Mail and Messages write them.
struct Stores {
    mail: MailFixture,
    inbox: i64,
    messages: MessagesFixture,
}

impl Stores {
    fn open(root: &Path) -> Stores {
        let home = tidings_fixtures::MacHome::new(root);
        let mut mail = MailFixture::open(&home).unwrap();
        let account = mail
            .add_account("demo@example.com", AccountKind::Imap)
            .unwrap();
        let inbox = mail.add_mailbox(&account, "INBOX").unwrap();
        let messages = MessagesFixture::open(&home).unwrap();
        Stores {
            mail,
            inbox,
            messages,
        }
    }

    fn mail(&mut self, from: &str, subject: &str) {
        let new = NewMail::new(Addr::new(from, ""), subject, self.inbox, Some(now_unix()));
        self.mail.append(&new).unwrap();
    }

    fn message(&mut self, from: &str, text: &str) {
        let handle = self.messages.add_handle(from, Service::IMessage).unwrap();
        let chat = self
            .messages
            .add_chat(&NewChat {
                identifier: from.into(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle],
            })
            .unwrap();
        let date = Some(apple_ns_from_unix(now_unix()));
        let new = NewMessage::new(handle, chat, text, date);
        self.messages.append(&new).unwrap();
    }
}

/// The fixtures' values for what differs from run to run; `activity` newest first, all of it.
fn pin(state: &mut State, activity: &mut [Delivery], settings: &mut app::SettingsView, root: &str) {
    let place = |text: &str| text.replace(root, ROOT);
    let n = activity.len() as u64;
    for (newer, d) in activity.iter_mut().enumerate() {
        d.at_ms = T0 + 4_400 + 700 * (n - 1 - newer as u64);
    }
    let newest =
        |pred: &dyn Fn(&Delivery) -> bool| activity.iter().find(|d| pred(d)).map(|d| d.at_ms);
    state.version = VERSION.to_owned();
    state.socket = state.socket.as_deref().map(place);
    for t in &mut state.types {
        t.store.path = place(&t.store.path);
        t.store.problem = t.store.problem.as_deref().map(place);
        t.store.last_scan_error = t.store.last_scan_error.as_deref().map(place);
        // The change is seen a few ms before it is delivered.
        let seen = newest(&|d| d.event_type == t.name).map(|ms| ms - 3);
        t.store.last_change_ms = t.store.last_change_ms.and(seen);
    }
    for (i, c) in state.clients.iter_mut().enumerate() {
        c.connected_since_ms = T0 + 19 * i as u64;
        c.pid = c.pid.map(|_| PIDS[i]);
        let id = c.id;
        for s in &mut c.subscriptions {
            let last = newest(&|d| d.client_id == id && d.event_type == s.event_type);
            s.last_delivery_ms = s.last_delivery_ms.and(last);
        }
    }
    // The clients are this test binary, whose name and path change with every build: pinned
    // as the program a Mac would show (the id as its identity would give it).
    for a in &mut state.agents {
        let identity = format!("exe:{AGENT_PROGRAM}");
        a.id = tidings_platform::identity::agent_id(AGENT_NAME, &identity);
        a.identity = identity;
        a.name = AGENT_NAME.to_owned();
        a.program = Some(AGENT_PROGRAM.to_owned());
        a.last_seen_ms = a.last_seen_ms.map(|_| T0 + 4_400 + 700 * 4);
    }
    for c in &mut state.clients {
        if let Some(a) = state.agents.first() {
            c.agent.clone_from(&a.id);
        }
    }
    settings.connect_snippet = place(&settings.connect_snippet);
    let shim = tidings_platform::hosts::current_shim()
        .unwrap_or_else(|| tidings_platform::hosts::SHIM.into());
    settings.connect_snippet = settings.connect_snippet.replace(
        &format!("\"{}\"", shim.display()),
        &format!("\"{APP_SHIM}\""),
    );
    // The build's version, as the engine's is.
    settings.updates.current = VERSION.to_owned();
    // The login item as a Mac without it has it (this machine's may be on).
    settings.start_at_login = LoginView {
        state: "disabled",
        text: "Tidings does not start at login.".to_owned(),
    };
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixtures_are_a_demo_engines() {
    let dir = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .unwrap();
    let root = dir.path().join("d");
    let keychain = Arc::new(KeyringKeychain::mock(SERVICE));
    keychain.set(HTTP_TOKEN_ACCOUNT, &token()).unwrap();
    let mut config = Config::demo(DemoConfig {
        data_dir: Some(root.clone()),
        simulate: None,
        conformance_controls: false,
    });
    config.http = HttpConfig {
        forced: None,
        auth: Arc::new(move || Ok(AuthMode::Token(keychain.clone()))),
    };
    let handle = Tidings::start(config).expect("the engine starts on demo stores");
    let socket = handle.socket_path().to_owned();
    state_until(&handle, "both stores read", |s| {
        s.types
            .iter()
            .all(|t| t.store.access == crate::state::StoreAccess::Ok)
    })
    .await;

    // `tidings status`, twice: connections 1 and 2, gone again.
    for _ in 0..2 {
        Client::connect(&socket)
            .await
            .call(1, "tidings/status", json!({}))
            .await;
    }
    state_until(&handle, "the status runs gone", |s| s.connections == 0).await;
    let mut mail = Client::connect(&socket).await;
    mail.stream(
        "mail.received",
        json!({"from": ["alice@example.com"], "domains": ["eu.example.com"]}),
    )
    .await;
    let mut messages = Client::connect(&socket).await;
    messages.stream("messages.received", json!({})).await;
    let mut idle = Client::connect(&socket).await;
    idle.call(1, "events/list", json!({})).await;
    mail.drain();
    messages.drain();

    // One at a time, so the activity's order is the order written.
    let mut stores = Stores::open(&root);
    let writes: [&dyn Fn(&mut Stores); 5] = [
        &|s| s.message("+12025550101", "On my way"),
        &|s| s.message("+12025550143", "Did you see this?"),
        &|s| s.mail("bob@eu.example.com", "Notes from today"),
        &|s| s.mail("alice@example.com", "Quick question"),
        &|s| s.message("+12025550177", "Call me when you can"),
    ];
    for (n, write) in writes.iter().enumerate() {
        write(&mut stores);
        delivered(&handle, n + 1).await;
    }
    app::finish_first_run(&handle);
    let mut state = state_until(&handle, "every delivery counted", |s| {
        let counts: Vec<u64> = s
            .clients
            .iter()
            .flat_map(|c| c.subscriptions.iter().map(|s| s.delivered))
            .collect();
        s.connections == 3 && s.streams == 2 && counts == [2, 3]
    })
    .await;
    let mut activity = app::activity(&handle);
    let mut settings = app::settings_view(&handle).await;
    handle.shutdown();
    drop(idle);

    pin(
        &mut state,
        &mut activity,
        &mut settings,
        &root.to_string_lossy(),
    );
    let mut state = serde_json::to_value(&state).unwrap();
    // The app's own field beside the engine's (src-tauri's `WindowState`): the icon is shown.
    state["menuBar"] = json!({"state": "shown"});
    // The window's list, as the tests read it: the three newest.
    activity.truncate(3);
    check_or_bless("tests/fixtures/state.json", &pretty(&state));
    check_or_bless("tests/fixtures/settings.json", &pretty(&settings));
    check_or_bless("tests/fixtures/activity.json", &pretty(&activity));
}
