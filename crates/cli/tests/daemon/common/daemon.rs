//! The one way the tests run `tidings serve`: a child on its own temp dir (the demo by
//! default), its stdout and stderr kept for waits and messages, killed when dropped.
//!
//! `Daemon::start()` is a demo ready to answer; [`Daemon::builder`] sets the rest (`--http`,
//! environment, data dir, settings, output) and then [`start`](Builder::start)s it (waits until
//! the socket answers) or [`spawn`](Builder::spawn)s it (no wait, for a daemon meant to fail).

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use tidings_fixtures::MacHome;

use super::{Client, HEARTBEAT_MS, WAIT, tidings_bin};

/// A `tidings serve` child on its own temp dir, killed when dropped.
pub struct Daemon {
    pub tmp: Arc<TempDir>,
    /// The data dir (the demo's fake home, settings.toml and the socket); the temp dir for a
    /// daemon run [`without_demo`](Builder::without_demo).
    pub dir: PathBuf,
    pub socket: PathBuf,
    child: Child,
    stdout: Output,
    stderr: Output,
    readers: Vec<JoinHandle<()>>,
}

/// How to run one daemon; from [`Daemon::builder`].
pub struct Builder {
    tmp: Option<Arc<TempDir>>,
    demo: bool,
    data_dir: Option<PathBuf>,
    socket: Option<PathBuf>,
    simulate: String,
    heartbeat_ms: u64,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    settings: Option<String>,
    stdio: Option<Box<dyn Fn() -> Stdio>>,
}

impl Daemon {
    /// A fresh demo in a new temp dir, ready to answer.
    pub fn start() -> Daemon {
        Daemon::builder().start()
    }

    /// A demo on `<tmp>/demo` (reused if it exists), ready to answer.
    pub fn start_in(tmp: Arc<TempDir>) -> Daemon {
        Daemon::builder().tmp(tmp).start()
    }

    /// A fresh demo with `extra` flags after `serve --demo`, ready to answer.
    pub fn start_with(extra: &[&str]) -> Daemon {
        Daemon::builder().args(extra).start()
    }

    /// A demo on `<tmp>/demo`, not waited for (for tests that expect it to fail).
    pub fn spawn_in(tmp: Arc<TempDir>) -> Daemon {
        Daemon::builder().tmp(tmp).spawn()
    }

    /// `tidings serve --demo --simulate off --data-dir <tmp>/demo --heartbeat-ms` the tests'
    /// [`HEARTBEAT_MS`], logging at debug, in a new temp dir, which is also its working dir.
    pub fn builder() -> Builder {
        Builder {
            tmp: None,
            demo: true,
            data_dir: None,
            socket: None,
            simulate: "off".to_owned(),
            heartbeat_ms: HEARTBEAT_MS,
            args: Vec::new(),
            env: Vec::new(),
            settings: None,
            stdio: None,
        }
    }

    /// Waits until the daemon answers a request. The socket is bound (and so accepts
    /// connections into its backlog) before the demo stores are laid out, so a connect alone
    /// does not mean the stores are ready for the test's writer; an answer does.
    pub fn wait_ready(&mut self) {
        let deadline = Instant::now() + WAIT;
        while UnixStream::connect(&self.socket).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "daemon exited ({status}) before serving; stderr:\n{}",
                    self.stderr()
                );
            }
            assert!(
                Instant::now() < deadline,
                "daemon did not come up at {}; stderr:\n{}",
                self.socket.display(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Straight on the socket: readiness is the daemon's, and needs no shim built.
        let answer = super::Raw::connect(&self.socket, "tidings-tests").call(
            0,
            "server/discover",
            json!({}),
        );
        assert!(answer.get("result").is_some(), "not ready: {answer}");
    }

    pub fn home(&self) -> MacHome {
        MacHome::new(&self.dir)
    }

    pub fn settings_path(&self) -> PathBuf {
        self.dir.join("settings.toml")
    }

    /// Replaces settings.toml atomically (a temp file renamed over it), as editors and the
    /// daemon's own saves (`settings_file::save`) do.
    pub fn write_settings(&self, text: &str) {
        let tmp = self.dir.join("settings.toml.edit");
        std::fs::write(&tmp, with_agents_allowed(text)).unwrap();
        std::fs::rename(&tmp, self.settings_path()).unwrap();
    }

    /// What the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// What the daemon wrote to stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.text()
    }

    /// The first whole stderr line containing `needle`, waiting for it within [`WAIT`].
    pub fn wait_stderr(&mut self, needle: &str) -> String {
        let stderr = self.stderr.clone();
        self.wait_line(&stderr, "stderr", needle)
    }

    /// The first whole stdout line containing `needle`, waiting for it within [`WAIT`].
    pub fn wait_stdout(&mut self, needle: &str) -> String {
        let stdout = self.stdout.clone();
        self.wait_line(&stdout, "stdout", needle)
    }

    fn wait_line(&mut self, output: &Output, name: &str, needle: &str) -> String {
        assert!(output.captured, "the daemon's {name} is not captured");
        let deadline = Instant::now() + WAIT;
        loop {
            // Whether all output is in: checked before the search, so none can come after it.
            let exited = self.child.try_wait().unwrap().is_some();
            let drained = exited && self.readers.iter().all(JoinHandle::is_finished);
            if let Some(line) = output.line_containing(needle) {
                return line;
            }
            assert!(
                !drained && Instant::now() < deadline,
                "no {name} line with {needle:?} ({}); stdout:\n{}\nstderr:\n{}",
                if drained {
                    "the daemon exited"
                } else {
                    "timed out"
                },
                self.stdout(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The HTTP endpoint's address, from the URL the daemon prints, once it accepts.
    pub fn http_addr(&mut self) -> SocketAddr {
        let line = self.wait_stdout("HTTP");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let addr: SocketAddr = url["http://".len()..]
            .trim_end_matches("/mcp")
            .parse()
            .unwrap_or_else(|e| panic!("no address in {url:?}: {e}"));
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "{addr} does not accept");
            std::thread::sleep(Duration::from_millis(20));
        }
        addr
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
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

    /// Waits for the process to exit, then for the rest of its output, within [`WAIT`].
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "daemon did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        while !self.readers.iter().all(JoinHandle::is_finished) {
            assert!(Instant::now() < deadline, "the daemon's output never ended");
            std::thread::sleep(Duration::from_millis(20));
        }
        status
    }

    /// A client connected through the shim.
    pub fn client(&self) -> Client {
        Client::connect(&self.socket)
    }

    /// One request straight on a fresh socket connection (no shim); its answer, or `None` if
    /// none came within [`WAIT`].
    pub fn socket_call(&self, method: &str) -> Option<Value> {
        let mut stream = UnixStream::connect(&self.socket).ok()?;
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        stream.write_all(format!("{request}\n").as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).ok()?;
        serde_json::from_str(&line).ok()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Builder {
    /// Runs in `tmp` (shared with another daemon, or one run after another) instead of a new
    /// temp dir.
    pub fn tmp(mut self, tmp: Arc<TempDir>) -> Builder {
        self.tmp = Some(tmp);
        self
    }

    /// `--data-dir` as given; a relative path is taken from the temp dir (the working dir).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.data_dir = Some(dir.into());
        self
    }

    /// `--socket`.
    pub fn socket(mut self, socket: impl Into<PathBuf>) -> Builder {
        self.socket = Some(socket.into());
        self
    }

    /// `--simulate` (`off` unless set).
    pub fn simulate(mut self, every: &str) -> Builder {
        every.clone_into(&mut self.simulate);
        self
    }

    /// `--heartbeat-ms`.
    pub fn heartbeat_ms(mut self, ms: u64) -> Builder {
        self.heartbeat_ms = ms;
        self
    }

    /// `--http 127.0.0.1:0`: an endpoint on a free port ([`Daemon::http_addr`] finds it).
    pub fn http(self) -> Builder {
        self.http_on("127.0.0.1:0")
    }

    /// `--http <listen>`.
    pub fn http_on(self, listen: &str) -> Builder {
        self.args(&["--http", listen])
    }

    /// `--no-auth`.
    pub fn no_auth(self) -> Builder {
        self.args(&["--no-auth"])
    }

    /// More flags, after the others.
    pub fn args(mut self, args: &[&str]) -> Builder {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Builder {
        self.env.push((key.into(), value.as_ref().to_owned()));
        self
    }

    /// A settings.toml in the data dir before the start (the dir made private, as the
    /// socket's must be).
    pub fn settings(mut self, text: &str) -> Builder {
        self.settings = Some(text.to_owned());
        self
    }

    /// Stdout and stderr each on what `make` returns, not captured.
    pub fn stdio(mut self, make: impl Fn() -> Stdio + 'static) -> Builder {
        self.stdio = Some(Box::new(make));
        self
    }

    /// `tidings serve` itself, not the demo: no `--demo`, `--simulate`, `--data-dir` or
    /// `--heartbeat-ms`; set `socket` and the environment it reads.
    pub fn without_demo(mut self) -> Builder {
        self.demo = false;
        self
    }

    /// Spawns it and waits until it answers a request.
    pub fn start(self) -> Daemon {
        let mut daemon = self.spawn();
        daemon.wait_ready();
        daemon
    }

    /// Spawns it without waiting.
    pub fn spawn(self) -> Daemon {
        let tmp = self
            .tmp
            .unwrap_or_else(|| Arc::new(tempfile::tempdir().unwrap()));
        let dir = match (&self.data_dir, self.demo) {
            (Some(dir), _) => tmp.path().join(dir),
            (None, true) => tmp.path().join("demo"),
            (None, false) => tmp.path().to_path_buf(),
        };
        if let Some(text) = &self.settings {
            std::fs::create_dir_all(&dir).unwrap();
            private(&dir);
            std::fs::write(dir.join("settings.toml"), with_agents_allowed(text)).unwrap();
        }
        let mut command = Command::new(tidings_bin());
        command.arg("serve");
        if self.demo {
            command
                .args(["--demo", "--simulate", &self.simulate])
                .arg("--data-dir")
                .arg(self.data_dir.as_deref().unwrap_or(&dir));
            // A test that sets its own heartbeat through `args` keeps it.
            if !self.args.iter().any(|a| a == "--heartbeat-ms") {
                command.args(["--heartbeat-ms", &self.heartbeat_ms.to_string()]);
            }
        }
        if let Some(socket) = &self.socket {
            command.arg("--socket").arg(socket);
        }
        command
            .args(&self.args)
            .current_dir(tmp.path())
            .env_remove("TIDINGS_SOCKET")
            // Debug, for the latency trace and the messages a failing test prints.
            .env("TIDINGS_LOG", "debug")
            // The log file goes to the temp dir, never the user's log directory.
            .env("TIDINGS_LOG_DIR", tmp.path().join("logs"))
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        let (out, err) = match &self.stdio {
            Some(make) => (make(), make()),
            None => (Stdio::piped(), Stdio::piped()),
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn tidings serve");
        let stdout = Output::new(self.stdio.is_none());
        let stderr = Output::new(self.stdio.is_none());
        let mut readers = Vec::new();
        if let Some(pipe) = child.stdout.take() {
            readers.push(stdout.collect(pipe));
        }
        if let Some(pipe) = child.stderr.take() {
            readers.push(stderr.collect(pipe));
        }
        Daemon {
            socket: self.socket.unwrap_or_else(|| dir.join("tidings.sock")),
            dir,
            tmp,
            child,
            stdout,
            stderr,
            readers,
        }
    }
}

/// One output stream of the daemon, read to the end on a thread so a chatty daemon never
/// blocks on a full pipe.
#[derive(Clone)]
struct Output {
    text: Arc<Mutex<String>>,
    captured: bool,
}

impl Output {
    fn new(captured: bool) -> Output {
        Output {
            text: Arc::default(),
            captured,
        }
    }

    fn collect(&self, mut pipe: impl Read + Send + 'static) -> JoinHandle<()> {
        let sink = Arc::clone(&self.text);
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
        })
    }

    fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// The first whole line (one that has its newline) containing `needle`.
    fn line_containing(&self, needle: &str) -> Option<String> {
        let text = self.text.lock().unwrap();
        let whole = &text[..text.rfind('\n')?];
        whole
            .lines()
            .find(|line| line.contains(needle))
            .map(str::to_owned)
    }
}

/// Makes `dir` 0700, as the socket's directory must be.
fn private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
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

/// `text` with `[agents] new = "allow"` added when it says nothing of agents: the suite's
/// programs connect as they did before grants existed, unless a test is about agents.
pub fn with_agents_allowed(text: &str) -> String {
    if text.contains("[agents") {
        text.to_owned()
    } else {
        format!("{text}\n[agents]\nnew = \"allow\"\n")
    }
}
