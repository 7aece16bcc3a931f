//! A `tidings serve --demo` child on its own data dir, with its stderr kept for messages.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;
use tidings_fixtures::MacHome;

use super::{Client, HEARTBEAT_MS, WAIT, tidings_bin};

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

    /// A fresh daemon with `extra` flags after `serve --demo --simulate off`, ready.
    pub fn start_with(extra: &[&str]) -> Daemon {
        let daemon = Daemon::spawn_with(Arc::new(tempfile::tempdir().unwrap()), extra);
        daemon.wait_ready();
        daemon
    }

    /// Spawns without waiting for readiness (for tests that expect it to fail).
    pub fn spawn_in(tmp: Arc<TempDir>) -> Daemon {
        Daemon::spawn_with(tmp, &[])
    }

    fn spawn_with(tmp: Arc<TempDir>, extra: &[&str]) -> Daemon {
        let dir = tmp.path().join("demo");
        // The tests' short heartbeat, unless `extra` sets one of its own.
        let heartbeat = if extra.contains(&"--heartbeat-ms") {
            vec![]
        } else {
            vec!["--heartbeat-ms".to_owned(), HEARTBEAT_MS.to_string()]
        };
        let mut child = Command::new(tidings_bin())
            .args(["serve", "--demo", "--simulate", "off"])
            .args(extra)
            .arg("--data-dir")
            .arg(&dir)
            .args(heartbeat)
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
