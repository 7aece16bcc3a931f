//! The real daemon, `tidings serve --demo --simulate off` (release build), on a demo
//! directory the bench lays out or reuses, killed when dropped.

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;
use tempfile::TempDir;

use crate::wire::{self, Conn};

/// The `tidings` binary cargo built for this bench (release), or `TIDINGS_BENCH_BIN` (another
/// build, such as the tree before a change, measured by the same bench).
pub fn tidings_bin() -> PathBuf {
    std::env::var_os("TIDINGS_BENCH_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_tidings")),
        PathBuf::from,
    )
}

/// A private temporary directory (0700: the demo keeps its socket there), short enough for a
/// socket path.
pub fn private_tmp(prefix: &str) -> Result<TempDir> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// One running daemon.
pub struct Daemon {
    child: Child,
    pub pid: u32,
    pub socket: PathBuf,
    /// The demo directory (the fake home).
    pub home: PathBuf,
    pub log: PathBuf,
    /// When the child was spawned.
    pub spawned: Instant,
    /// The fresh demo directory and socket directory, removed after the child is gone.
    _dirs: Vec<TempDir>,
}

impl Daemon {
    /// A daemon on a fresh demo (the variety seeded by the daemon itself), ready to answer.
    pub fn fresh(log: &Path) -> Result<Daemon> {
        let dir = private_tmp("tidings-bench.")?;
        let home = dir.path().join("demo");
        let mut d = Daemon::spawn(&home, log, vec![dir])?;
        d.wait_ready()?;
        Ok(d)
    }

    /// A daemon on the demo directory `home` (reused as it is when it holds both stores), not
    /// yet waited for. The socket lives in a temporary directory of its own.
    pub fn spawn(home: &Path, log: &Path, mut dirs: Vec<TempDir>) -> Result<Daemon> {
        let sock_dir = private_tmp("tidings-bench-sock.")?;
        let socket = sock_dir.path().join("tidings.sock");
        dirs.push(sock_dir);
        let stderr = File::create(log).with_context(|| format!("create {}", log.display()))?;
        let mut command = Command::new(tidings_bin());
        command
            .args(["serve", "--demo", "--simulate", "off", "--data-dir"])
            .arg(home)
            .arg("--socket")
            .arg(&socket);
        if let Ok(ms) = std::env::var("TIDINGS_BENCH_LIVE_CHECK_MS") {
            command.args(["--live-check-ms", &ms]);
        }
        let spawned = Instant::now();
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("start {}", tidings_bin().display()))?;
        Ok(Daemon {
            pid: child.id(),
            child,
            socket,
            home: home.to_path_buf(),
            log: log.to_path_buf(),
            spawned,
            _dirs: dirs,
        })
    }

    /// Waits until the socket accepts; how long that took from now.
    pub fn wait_accepting(&mut self) -> Result<Duration> {
        let started = Instant::now();
        let deadline = started + wire::WAIT;
        loop {
            if std::os::unix::net::UnixStream::connect(&self.socket).is_ok() {
                return Ok(started.elapsed());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("the daemon exited ({status}); see {}", self.log.display());
            }
            if Instant::now() > deadline {
                bail!(
                    "the daemon did not accept within {:?}; see {}",
                    wire::WAIT,
                    self.log.display()
                );
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Waits until the daemon answers `server/discover` (the demo stores are laid out).
    pub fn wait_ready(&mut self) -> Result<()> {
        self.wait_accepting()?;
        let mut probe = Conn::open(&self.socket)?;
        probe
            .call("ready", "server/discover", json!({}))
            .with_context(|| format!("the daemon did not answer; see {}", self.log.display()))?;
        Ok(())
    }

    pub fn connect(&self) -> Result<Conn> {
        Conn::open(&self.socket)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
