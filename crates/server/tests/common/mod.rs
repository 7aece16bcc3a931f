//! Shared helpers for the integration tests: a demo daemon in a temp dir, an MCP client that
//! talks to it only through the real `tidings-mcp` shim, frame waits capped by a deadline,
//! and an outside writer that appends rows to the demo stores' `-wal`.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use tidings_fixtures::{
    MacHome, MailFixture, MessagesFixture, NewChat, NewMail, NewMessage, Service,
};

/// The longest any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// The heartbeat period the test daemons run with.
pub const HEARTBEAT_MS: u64 = 300;

/// Exit codes the binaries promise (mirrors `src/cli/exit_code.rs` and the shim's).
pub const NOT_RUNNING: i32 = 69;
pub const ALREADY_RUNNING: i32 = 75;
pub const REFUSED: i32 = 65;

/// The `tidings` binary cargo built for this test run.
pub fn tidings_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tidings"))
}

/// The `tidings-mcp` shim. A binary-only crate cannot be a dev-dependency (cargo ignores it:
/// "missing a lib target"), so it is built here once per test binary, into a subdirectory of
/// this run's target dir: a separate dir means no wait on the lock `cargo test` holds.
pub fn shim_bin() -> PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let profile_dir = tidings_bin().parent().expect("bin dir").to_path_buf();
        let target = profile_dir.join("shim-for-tests");
        let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "-p",
                "tidings-shim",
                "--bin",
                "tidings-mcp",
            ])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build for the shim");
        assert!(status.success(), "building tidings-mcp failed");
        target.join("debug").join("tidings-mcp")
    })
    .clone()
}

/// A `tidings serve --demo` child on its own data dir, killed when dropped.
pub struct Daemon {
    pub tmp: Arc<TempDir>,
    /// The demo dir: the fake home, settings.toml and the socket.
    pub dir: PathBuf,
    pub socket: PathBuf,
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Daemon {
    /// A fresh daemon in a new temp dir, ready to accept.
    pub fn start() -> Daemon {
        let tmp = Arc::new(tempfile::tempdir().unwrap());
        Daemon::start_in(tmp)
    }

    /// A daemon on `<tmp>/demo` (reused if it exists), ready to accept.
    pub fn start_in(tmp: Arc<TempDir>) -> Daemon {
        let daemon = Daemon::spawn_in(tmp);
        daemon.wait_ready();
        daemon
    }

    /// Spawns without waiting for readiness (for tests that expect it to fail).
    pub fn spawn_in(tmp: Arc<TempDir>) -> Daemon {
        let dir = tmp.path().join("demo");
        let mut child = Command::new(tidings_bin())
            .args(["serve", "--demo", "--simulate", "off"])
            .arg("--data-dir")
            .arg(&dir)
            .args(["--heartbeat-ms", &HEARTBEAT_MS.to_string()])
            .env_remove("TIDINGS_SOCKET")
            .env("TIDINGS_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tidings serve");
        // Drain stderr so a chatty daemon never blocks on a full pipe; keep it for messages.
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Daemon {
            socket: dir.join("tidings.sock"),
            dir,
            tmp,
            child,
            stderr,
        }
    }

    /// Waits until the daemon answers a request. The socket is bound (and so accepts
    /// connections into its backlog) before the demo stores are laid out, so a connect alone
    /// does not mean the stores are ready for the test's writer; an answer does.
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + WAIT;
        while std::os::unix::net::UnixStream::connect(&self.socket).is_err() {
            assert!(
                Instant::now() < deadline,
                "daemon did not come up at {}; stderr:\n{}",
                self.socket.display(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut probe = self.client();
        probe.result("ready?", "server/discover", json!({}));
    }

    pub fn home(&self) -> MacHome {
        MacHome::new(&self.dir)
    }

    pub fn settings_path(&self) -> PathBuf {
        self.dir.join("settings.toml")
    }

    /// Replaces settings.toml atomically (a temp file renamed over it), as editors and
    /// `Settings::save` do.
    pub fn write_settings(&self, text: &str) {
        let tmp = self.dir.join("settings.toml.edit");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, self.settings_path()).unwrap();
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGKILL: no cleanup runs, the socket file stays behind.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        signal(self.child.id(), libc::SIGTERM);
        self.wait_exit()
    }

    /// Waits for the process to exit, within [`WAIT`].
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "daemon did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A client connected through the shim.
    pub fn client(&self) -> Client {
        Client::connect(&self.socket)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `sig` to `pid`.
pub fn signal(pid: u32, sig: i32) {
    let pid = i32::try_from(pid).unwrap();
    // No libc wrapper without unsafe in tests; `kill` the command does the same.
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// The 2026-07-28 `_meta` every request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tidings-tests", "version": "0"}
    })
}

/// An MCP client on a `tidings-mcp` child: newline-delimited JSON-RPC on its stdio.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Every frame received, in order; waits search it from a mark.
    pub frames: Vec<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Client {
    pub fn connect(socket: &Path) -> Client {
        Client::spawn(Command::new(shim_bin()).arg("--socket").arg(socket))
    }

    /// Runs `command` (a shim invocation) with piped stdio and a reader thread.
    pub fn spawn(command: &mut Command) -> Client {
        let mut child = command
            .env_remove("TIDINGS_SOCKET")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tidings-mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("shim wrote a non-JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            frames: Vec::new(),
            stderr,
        }
    }

    pub fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request with the required `_meta` added to `params`.
    pub fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        let mut params = params;
        params["_meta"] = meta();
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}));
    }

    /// Sends a request and returns its response frame (result or error).
    pub fn call(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        let mark = self.mark();
        self.request(id.clone(), method, params);
        self.wait_for(&format!("the response to {method}"), mark, |f| {
            is_response(f, &id)
        })
    }

    /// `call` that insists on a result and returns it.
    pub fn result(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let response = self.call(id, method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// `call` that insists on an error and returns it.
    pub fn error(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let response = self.call(id, method, params);
        assert!(
            response.get("result").is_none(),
            "{method} should fail: {response}"
        );
        response["error"].clone()
    }

    pub fn cancel(&mut self, id: impl Into<Value>) {
        self.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id.into(), "reason": "test done"}}),
        );
    }

    /// The index the next frame will get.
    pub fn mark(&self) -> usize {
        self.frames.len()
    }

    /// Reads one frame into `frames`; false if none came before `deadline` or the shim closed.
    fn pump(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(frame) => {
                self.frames.push(frame);
                true
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => false,
        }
    }

    /// The first frame at or after `from` that matches, reading more for up to [`WAIT`].
    pub fn wait_for(&mut self, what: &str, from: usize, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_within(what, from, WAIT, pred)
    }

    /// [`wait_for`](Self::wait_for) with its own cap.
    pub fn wait_for_within(
        &mut self,
        what: &str,
        from: usize,
        within: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        let mut next = from;
        loop {
            while next < self.frames.len() {
                if pred(&self.frames[next]) {
                    return self.frames[next].clone();
                }
                next += 1;
            }
            if !self.pump(deadline) {
                let tail: Vec<String> = self
                    .frames
                    .iter()
                    .rev()
                    .take(8)
                    .map(Value::to_string)
                    .collect();
                panic!(
                    "timed out after {within:?} waiting for {what}; last frames (newest first):\n{}\nshim stderr: {}",
                    tail.join("\n"),
                    self.stderr.lock().unwrap()
                );
            }
        }
    }

    /// The exit status if the shim has ended, after collecting what it wrote.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().unwrap()?;
        while self.pump(Instant::now() + Duration::from_millis(200)) {}
        Some(status)
    }

    /// Closes stdin and waits for the shim to exit, within [`WAIT`].
    pub fn close(&mut self) -> ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Collect whatever was still in the pipe.
                while self.pump(Instant::now() + Duration::from_millis(200)) {}
                return status;
            }
            assert!(Instant::now() < deadline, "shim did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn is_response(frame: &Value, id: &Value) -> bool {
    frame.get("id") == Some(id) && frame.get("method").is_none()
}

/// A notification `method` on stream `id` (by `_meta` subscription id).
pub fn is_note(frame: &Value, method: &str, id: &Value) -> bool {
    frame["method"] == method
        && frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == *id
}

/// Any notification on stream `id`.
pub fn on_stream(frame: &Value, id: &Value) -> bool {
    frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == *id
}

/// An event on stream `id` with `eventId`.
pub fn is_event(frame: &Value, id: &Value, event_id: &str) -> bool {
    is_note(frame, "notifications/events/event", id) && frame["params"]["eventId"] == event_id
}

/// Unique ids for rows the tests write.
fn unique(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{}x{nanos}", N.fetch_add(1, Ordering::SeqCst))
}

/// The outside writer: opens the demo stores as Mail and Messages would and appends rows,
/// which stay in `-wal` (the fixtures never checkpoint on their own).
pub struct Writer {
    home: MacHome,
}

impl Writer {
    pub fn new(home: MacHome) -> Writer {
        Writer { home }
    }

    /// Appends a mail from `from` into a plain IMAP INBOX; returns its eventId (Message-ID).
    pub fn mail(&self, from: &str) -> String {
        let mut mail = MailFixture::open(&self.home).unwrap();
        self.mail_with(&mut mail, from)
    }

    /// The same on a writer the caller holds (e.g. after a rebuild).
    pub fn mail_with(&self, mail: &mut MailFixture, from: &str) -> String {
        let inbox: i64 = mail
            .connection()
            .query_row(
                "SELECT m.ROWID FROM mailboxes m WHERE m.url LIKE '%/INBOX' AND NOT EXISTS \
                 (SELECT 1 FROM mailboxes g WHERE g.url = \
                  substr(m.url, 1, length(m.url) - 5) || '%5BGmail%5D/All%20Mail') \
                 ORDER BY m.ROWID LIMIT 1",
                (),
                |r| r.get(0),
            )
            .unwrap();
        let domain = from.rsplit('@').next().unwrap();
        let id = format!("<{}@{domain}>", unique("test."));
        let now = tidings_fixtures::dates::now_unix();
        let mut new = NewMail::new(
            tidings_fixtures::Addr::new(from, "Test Sender"),
            "Test subject",
            inbox,
            Some(now),
        );
        new.message_id_header = Some(id.clone());
        new.to = vec![tidings_fixtures::Addr::bare("demo@example.com")];
        mail.append(&new).unwrap();
        id
    }

    /// Appends an incoming iMessage from `handle`; returns its eventId (guid).
    pub fn message(&self, handle: &str) -> String {
        let mut db = MessagesFixture::open(&self.home).unwrap();
        let handle_row = db.add_handle(handle, Service::IMessage).unwrap();
        let chat = db
            .add_chat(&NewChat {
                identifier: handle.to_string(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle_row],
            })
            .unwrap();
        let guid = unique("TEST-GUID-");
        let date = tidings_fixtures::apple_ns_from_unix(tidings_fixtures::dates::now_unix());
        let mut new = NewMessage::new(handle_row, chat, "hello from the tests", Some(date));
        new.guid = Some(guid.clone());
        db.append(&new).unwrap();
        guid
    }
}

/// A copy of the shim in a world-readable directory, for running it as another user.
pub fn shim_for_everyone(tmp: &Path) -> PathBuf {
    let dir = tmp.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.join("tidings-mcp");
    std::fs::copy(shim_bin(), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}
