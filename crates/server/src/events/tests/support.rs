//! Test support: fixture stores in a tempdir, a daemon over them, and a raw NDJSON client
//! joined to `Daemon::serve_connection` with `tokio::io::duplex`. Every wait is capped.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tidings_core::filter::SenderPattern;
use tidings_core::settings::AllowEntry;
use tidings_core::{Limits, Settings, StorePaths};
use tidings_fixtures::{
    AccountKind, Addr, MacHome, MailFixture, MailProfile, MessagesFixture, MessagesProfile,
    NewChat, NewMail, NewMessage, Service,
};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

use crate::daemon::{Daemon, DaemonConfig};
use crate::limits::ServerLimits;

/// The cap on every single wait in these tests.
pub const WAIT: Duration = Duration::from_secs(10);

/// Both types on, mail with an allowlist of `example.com` only when asked.
pub fn both_on(s: &mut Settings) {
    s.mail.enabled = true;
    s.messages.enabled = true;
}

pub fn allow(s: &mut Settings, pattern: &str) {
    s.mail.allow.push(AllowEntry::Sender(
        SenderPattern::parse_allow(pattern).unwrap(),
    ));
}

/// Fixture stores, settings and a running daemon in one tempdir.
pub struct Harness {
    pub home: MacHome,
    pub mail: Option<MailFixture>,
    pub inbox: i64,
    pub messages: MessagesFixture,
    pub handle: i64,
    pub chat: i64,
    pub daemon: Daemon,
    pub settings_path: PathBuf,
    appended: u32,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub async fn new(settings: impl FnOnce(&mut Settings)) -> Harness {
        Harness::with_demo(settings, test_limits(), None).await
    }

    #[allow(clippy::unused_async)] // the same call shape as `new`, which callers await
    pub async fn with_demo(
        settings: impl FnOnce(&mut Settings),
        limits: ServerLimits,
        demo: Option<std::sync::Arc<dyn crate::daemon::DemoControl>>,
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let home = MacHome::new(dir.path().join("home"));
        let mut mail = MailFixture::create(&home, MailProfile::V10Macos26).unwrap();
        let account = mail
            .add_account("me@example.net", AccountKind::Imap)
            .unwrap();
        let inbox = mail.add_mailbox(&account, "INBOX").unwrap();
        let mut messages = MessagesFixture::create(&home, MessagesProfile::Tahoe).unwrap();
        let handle = messages
            .add_handle("+12025550143", Service::IMessage)
            .unwrap();
        let chat = messages
            .add_chat(&NewChat {
                identifier: "+12025550143".into(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle],
            })
            .unwrap();
        let settings_path = dir.path().join("config/settings.toml");
        let mut s = Settings::default();
        // The rows these tests append carry fixed dates from long ago: no backfill guard,
        // unless a test turns it on.
        s.mail.backfill_days = 0;
        s.messages.backfill_days = 0;
        // Every program may connect, as before grants existed, unless a test says otherwise.
        s.agents.new = tidings_core::settings::NewAgents::Allow;
        settings(&mut s);
        crate::settings_file::save(&s, &settings_path).unwrap();
        let daemon = Daemon::start(DaemonConfig {
            store_paths: StorePaths::for_home(&home.root),
            contacts: crate::daemon::ContactsSource::for_home(
                &home.root,
                tidings_core::contacts::Region::parse("US").unwrap(),
            ),
            settings_path: settings_path.clone(),
            engine_limits: Limits::default(),
            limits,
            demo,
        })
        .unwrap();
        Harness {
            home,
            mail: Some(mail),
            inbox,
            messages,
            handle,
            chat,
            daemon,
            settings_path,
            appended: 0,
            _dir: dir,
        }
    }

    /// Append a mail from `from`; each call has a distinct subject (and so Message-ID).
    pub fn append_mail(&mut self, from: &str) -> i64 {
        self.appended += 1;
        let subject = format!("note {}", self.appended);
        let mail = self.mail.as_mut().unwrap();
        mail.append(&NewMail::new(
            Addr::new(from, "Sender"),
            &subject,
            self.inbox,
            Some(1_760_000_000 + i64::from(self.appended)),
        ))
        .unwrap()
    }

    pub fn append_message(&mut self) -> i64 {
        self.messages
            .append(&NewMessage::new(self.handle, self.chat, "hi", Some(1)))
            .unwrap()
    }

    /// Rebuild the Envelope Index as Mail does (a new file identity).
    pub fn rebuild_mail(&mut self) {
        let mail = self.mail.take().unwrap();
        self.mail = Some(mail.rebuild(&self.home).unwrap());
    }

    /// A client on a fresh connection.
    pub fn connect(&self) -> Client {
        let (client, server) = tokio::io::duplex(4 << 20);
        let daemon = self.daemon.clone();
        tokio::spawn(async move { daemon.serve_connection(server).await });
        let (r, w) = tokio::io::split(client);
        Client {
            writer: w,
            lines: BufReader::new(r).lines(),
            pending: VecDeque::new(),
            next_id: 1,
        }
    }

    /// Wait (capped) until `cond` holds on the daemon's status.
    pub async fn until(&self, what: &str, cond: impl Fn(&crate::state::State) -> bool) {
        self.until_daemon(what, |d| cond(&d.state())).await;
    }

    /// Wait (capped) until `cond` holds on the daemon.
    pub async fn until_daemon(&self, what: &str, cond: impl Fn(&Daemon) -> bool) {
        let wait = async {
            while !cond(&self.daemon) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(WAIT, wait)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}: {:?}", self.daemon.state()));
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.daemon.shutdown();
    }
}

/// Short heartbeats so the tests see them quickly.
pub fn test_limits() -> ServerLimits {
    ServerLimits {
        heartbeat: Duration::from_millis(200),
        ..ServerLimits::default()
    }
}

/// The `_meta` every 2026-07-28 request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tidings-tests", "version": "0"},
    })
}

/// A raw NDJSON client that keeps frames it was not waiting for.
pub struct Client {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pending: VecDeque<Value>,
    next_id: i64,
}

impl Client {
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn send(&mut self, frame: Value) {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Send a 2026-07-28 request (with `_meta`); returns its numeric id.
    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = params;
        params["_meta"] = meta();
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Request and wait for its response frame.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        self.response(id).await
    }

    /// The result of a call that must succeed.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let frame = self.call(method, params).await;
        assert!(frame.get("error").is_none(), "{method} failed: {frame}");
        frame["result"].clone()
    }

    /// The error of a call that must fail.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let frame = self.call(method, params).await;
        assert!(frame.get("result").is_none(), "{method} succeeded: {frame}");
        frame["error"].clone()
    }

    pub async fn response(&mut self, id: i64) -> Value {
        self.take(|f| f.get("method").is_none() && f["id"] == json!(id))
            .await
    }

    /// The next notification of subscription `id`.
    pub async fn note(&mut self, id: i64) -> Value {
        self.take(|f| {
            f.get("method").is_some()
                && f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(id)
        })
        .await
    }

    /// The next notification of subscription `id` with `method`, skipping heartbeats.
    pub async fn note_of(&mut self, id: i64, method: &str) -> Value {
        loop {
            let n = self.note(id).await;
            if n["method"] == method {
                return n;
            }
            assert_eq!(
                n["method"], "notifications/events/heartbeat",
                "expected {method}, got {n}"
            );
        }
    }

    /// Any frame for subscription `id` already received (notification or response).
    pub fn buffered_for(&self, id: i64) -> Vec<Value> {
        self.pending
            .iter()
            .filter(|f| {
                f["id"] == json!(id)
                    || f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(id)
            })
            .cloned()
            .collect()
    }

    /// The next frame matching `pred`, keeping others for later.
    pub async fn take(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let frame = self.read().await;
            if pred(&frame) {
                return frame;
            }
            self.pending.push_back(frame);
        }
    }

    /// The next frame off the wire.
    pub async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("timed out waiting for a frame")
            .expect("read failed")
            .expect("connection closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Close our side entirely (a client that goes away).
    pub fn close(self) {
        drop(self);
    }
}
