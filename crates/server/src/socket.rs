//! The Unix socket listener: its directory and modes, one daemon per socket (a lock file),
//! stale-socket recovery, the peer uid check, and removal on shutdown.
//!
//! # Path
//!
//! The caller picks it: `tidings serve --socket PATH`, else `<data-dir>/tidings.sock` in demo
//! mode, else [`tidings_platform::paths::socket_path`] (which documents `TIDINGS_SOCKET` and
//! the per-OS defaults). Whatever the path, it must fit in `sun_path` less its NUL: 103 bytes
//! on macOS, 107 on Linux ([`tidings_platform::paths::MAX_SOCKET_PATH_BYTES`]).
//!
//! # What [`SocketListener::bind`] does, in order
//!
//! 1. Makes sure the socket's directory is private (0700, ours, not a symlink) with
//!    [`tidings_platform::paths::ensure_private_dir`]; an existing directory that fails the
//!    check is refused, never repaired.
//! 2. Takes an exclusive lock on `<socket>.lock` beside the socket. A second daemon fails
//!    here with [`SocketError::AlreadyRunning`], before it touches the socket, so two starts
//!    racing each other cannot both decide the socket is stale.
//! 3. If something exists at the path: a socket that refuses connections (ECONNREFUSED) is
//!    stale and removed; a socket that accepts means another daemon serves without our lock
//!    (an older build), so we refuse; anything that is not a socket is left alone and refused.
//! 4. Binds, then sets the socket to 0600 before the first `accept`. We chmod rather than
//!    wrap `bind` in `umask(0o177)` because the umask is process-wide: the app and the demo
//!    have other threads (tokio workers, watchers, the simulator) creating files at the same
//!    moment, and they would get 0600 directories. The window between bind and chmod is
//!    closed anyway: the directory is 0700 and every peer's uid is checked.
//!
//! While the listener lives, the socket, its lock file and its directory are touched every
//! hour ([`KEEPALIVE`]): the `/tmp` fallback is shared ground, and macOS's daily `periodic`
//! run and systemd-tmpfiles delete what has not been touched for days, which would leave a
//! daemon running with no socket anyone can find.
//!
//! The lock file is left in place on shutdown: deleting it would let a third process lock a
//! fresh inode while a second still waits on the old one. The socket is removed (`NotFound`
//! ignored), but only if it is still the one we bound.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tidings_platform::paths::{MAX_SOCKET_PATH_BYTES, current_uid, ensure_private_dir};
use tokio::net::{UnixListener, UnixStream};

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::clients::{ConnectionCount, ConnectionState};
use crate::daemon::{Daemon, FLUSH_GRACE};
use crate::events::EventsHandler;

/// Mode of the socket file: read and write for us only (connecting needs write permission).
pub const SOCKET_MODE: u32 = 0o600;

/// Pause after an `accept` error (EMFILE, ENFILE, ECONNABORTED) before trying again, so a
/// full file table does not turn the loop into a busy spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How often the socket, its lock file and its directory are touched so that a `/tmp`
/// cleaner (macOS `periodic`: 3 days unaccessed; systemd-tmpfiles: 10 days) leaves them be.
pub const KEEPALIVE: Duration = Duration::from_secs(3600);

/// Why the listener could not start. Every message names the path involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SocketError {
    /// The path does not fit in `sun_path`.
    #[error(
        "socket path {} is {len} bytes, longer than the {max}-byte limit for Unix sockets; \
         choose a shorter one with --socket or TIDINGS_SOCKET",
        .path.display()
    )]
    PathTooLong {
        /// The socket path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The path has no parent directory (it is `/` or empty).
    #[error("socket path {} has no directory", .path.display())]
    NoDirectory {
        /// The socket path.
        path: PathBuf,
    },
    /// The socket's directory is missing and cannot be created, or is not private.
    #[error("socket directory for {}: {source}", .path.display())]
    Directory {
        /// The socket path.
        path: PathBuf,
        /// What the private-directory check found.
        #[source]
        source: tidings_platform::PathError,
    },
    /// Another daemon holds the lock, or answers on the socket.
    #[error(
        "another Tidings daemon is already serving on {} (lock {} is held); stop it first, \
         or pick another socket with --socket",
        .path.display(), .lock.display()
    )]
    AlreadyRunning {
        /// The socket path.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// Something other than a socket sits at the path; we do not delete files we did not make.
    #[error("{} exists and is not a socket; remove it or pick another path with --socket", .path.display())]
    NotASocket {
        /// The socket path.
        path: PathBuf,
    },
    /// An I/O step failed; `what` says which.
    #[error("cannot {what} {}: {source}", .path.display())]
    Io {
        /// What we were doing ("bind", "lock", "remove the stale socket", ...).
        what: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
}

/// A bound, locked, 0600 socket, ready to accept. Dropping it removes the socket file.
#[derive(Debug)]
pub struct SocketListener {
    path: PathBuf,
    listener: UnixListener,
    /// `(dev, ino)` of the socket we bound, so Drop never removes someone else's.
    identity: (u64, u64),
    /// Held for the daemon's lifetime; the OS releases the lock when the process dies, which
    /// is what makes a `SIGKILLed` daemon's socket recoverable.
    _lock: File,
    /// Touches the files every [`KEEPALIVE`]; aborted when the listener drops.
    keepalive: tokio::task::JoinHandle<()>,
}

impl SocketListener {
    /// Prepares the directory, takes the single-instance lock, clears a stale socket and
    /// binds `path` (see the module docs). Must run inside a tokio runtime.
    pub fn bind(path: &Path) -> Result<SocketListener, SocketError> {
        Self::bind_with_keepalive(path, KEEPALIVE)
    }

    /// [`bind`](Self::bind) with the files touched every `keepalive` (tests use a short one).
    pub(crate) fn bind_with_keepalive(
        path: &Path,
        keepalive: Duration,
    ) -> Result<SocketListener, SocketError> {
        let path = path.to_path_buf();
        let len = path.as_os_str().as_bytes().len();
        if len > MAX_SOCKET_PATH_BYTES {
            return Err(SocketError::PathTooLong {
                path,
                len,
                max: MAX_SOCKET_PATH_BYTES,
            });
        }
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => return Err(SocketError::NoDirectory { path }),
        };
        ensure_private_dir(&dir).map_err(|source| SocketError::Directory {
            path: path.clone(),
            source,
        })?;

        let lock_path = lock_path_for(&path);
        let lock = take_lock(&path, &lock_path)?;
        clear_stale(&path, &lock_path)?;

        let io_err = |what, source| SocketError::Io {
            what,
            path: path.clone(),
            source,
        };
        let std_listener =
            std::os::unix::net::UnixListener::bind(&path).map_err(|e| io_err("bind", e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(SOCKET_MODE))
            .map_err(|e| io_err("set mode 0600 on", e))?;
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io_err("inspect", e))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| io_err("configure", e))?;
        let listener = UnixListener::from_std(std_listener).map_err(|e| io_err("listen on", e))?;
        let keepalive = tokio::spawn(keep_fresh([path.clone(), lock_path, dir], keepalive));
        Ok(SocketListener {
            identity: (meta.dev(), meta.ino()),
            path,
            listener,
            _lock: lock,
            keepalive,
        })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts until `shutdown` completes, handing each connection from our own uid to
    /// `handle` in its own task. Connections from any other uid are logged and closed
    /// without a byte read or written.
    pub async fn serve_with<F, Fut>(&self, shutdown: impl Future<Output = ()>, handle: F)
    where
        F: Fn(UnixStream, Option<i32>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let ours = current_uid();
        tokio::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        tracing::warn!(socket = %self.path.display(), %error, "accept failed; retrying");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
            };
            match stream.peer_cred() {
                Ok(cred) if cred.uid() == ours => {
                    tracing::debug!(pid = ?cred.pid(), "client connected");
                    tokio::spawn(handle(stream, cred.pid()));
                }
                Ok(cred) => {
                    tracing::warn!(
                        peer_uid = cred.uid(),
                        peer_pid = ?cred.pid(),
                        our_uid = ours,
                        "refused a connection from another user"
                    );
                    drop(stream);
                }
                Err(error) => {
                    tracing::warn!(%error, "refused a connection whose peer credentials could not be read");
                    drop(stream);
                }
            }
        }
    }

    /// [`serve_with`](Self::serve_with) with each connection served by `daemon`.
    pub async fn serve(&self, daemon: &Daemon, shutdown: impl Future<Output = ()>) {
        self.serve_with(shutdown, |stream, pid| {
            let daemon = daemon.clone();
            async move { daemon.serve_peer(stream, pid).await }
        })
        .await;
    }
}

impl Daemon {
    /// Serve one connection until it closes: a newline framer with the frame limit in front of
    /// one rmcp service. Streams of this connection end when it does.
    pub async fn serve_connection<T>(&self, io: T)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_peer(io, None).await;
    }

    /// [`serve_connection`](Daemon::serve_connection) for a peer whose process id is known.
    pub(crate) async fn serve_peer<T>(&self, io: T, pid: Option<i32>)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // Who is behind the peer: read before a byte is served, off the runtime's threads
        // (the walk reads the process table; on macOS it runs `codesign`).
        let known = self.settings_arc().agents.clone();
        let clients = self.clients().clone();
        let agent = match tokio::task::spawn_blocking(move || {
            clients.agents().identify(pid, &known)
        })
        .await
        {
            Ok(agent) => agent,
            Err(error) => {
                tracing::warn!(%error, "refused a connection whose program could not be looked up");
                return;
            }
        };
        let conn = ConnectionState::socket(self.clients(), self.shutdown_token(), pid, agent);
        let Some(_count) = ConnectionCount::admit(self.clients(), &conn) else {
            tracing::debug!("turned a connection away: every one holds a stream");
            return;
        };
        let started = CancellationToken::new();
        let (rmcp_io, pump) = crate::frames::start(
            io,
            self.limits().max_frame_bytes,
            conn.clone(),
            started.clone(),
        );
        let handler = EventsHandler::new(self.clone(), conn.clone());
        match handler.serve_with_ct(rmcp_io, conn.closed.clone()).await {
            Ok(running) => {
                // rmcp's lifecycle has begun: notifications the framer held may go in now.
                started.cancel();
                let reason = running.waiting().await;
                tracing::debug!(?reason, "connection closed");
            }
            Err(e) => tracing::debug!(error = %e, "connection ended before a lifecycle began"),
        }
        conn.closed.cancel();
        pump.finish(FLUSH_GRACE).await;
    }
}

impl Drop for SocketListener {
    fn drop(&mut self) {
        self.keepalive.abort();
        // Only remove the file if it is still the socket we bound.
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| (m.dev(), m.ino()) == self.identity);
        if !ours {
            return;
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(socket = %self.path.display(), %error, "could not remove the socket");
            }
        }
    }
}

/// Set the access and modification times of `paths` to now, every `every`. A failure is
/// logged once per path: the daemon serves on regardless.
async fn keep_fresh(paths: [PathBuf; 3], every: Duration) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut warned = [false; 3];
    loop {
        tick.tick().await;
        for (path, warned) in paths.iter().zip(warned.iter_mut()) {
            let now = filetime::FileTime::now();
            // The `symlink` variant sets times by path (utimensat); the plain one opens the
            // file first, which a socket refuses (ENXIO). None of these paths is a symlink.
            if let Err(error) = filetime::set_symlink_file_times(path, now, now)
                && !std::mem::replace(warned, true)
            {
                tracing::warn!(path = %path.display(), %error, "cannot touch a socket file; a /tmp cleaner may remove it");
            }
        }
    }
}

/// `<socket>.lock`, beside the socket.
pub fn lock_path_for(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Opens (creating, 0600) and exclusively locks the lock file, without waiting.
fn take_lock(socket: &Path, lock_path: &Path) -> Result<File, SocketError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(lock_path)
        .map_err(|source| SocketError::Io {
            what: "open the lock file",
            path: lock_path.to_path_buf(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(SocketError::AlreadyRunning {
            path: socket.to_path_buf(),
            lock: lock_path.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(source)) => Err(SocketError::Io {
            what: "lock",
            path: lock_path.to_path_buf(),
            source,
        }),
    }
}

/// Removes a socket at `path` only when a connect to it is refused (nobody listens).
fn clear_stale(path: &Path, lock_path: &Path) -> Result<(), SocketError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(SocketError::Io {
                what: "inspect",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if !meta.file_type().is_socket() {
        return Err(SocketError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(SocketError::AlreadyRunning {
            path: path.to_path_buf(),
            lock: lock_path.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            tracing::info!(socket = %path.display(), "removing a stale socket left by a daemon that is gone");
            match std::fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(source) => Err(SocketError::Io {
                    what: "remove the stale socket",
                    path: path.to_path_buf(),
                    source,
                }),
            }
        }
        Err(source) => Err(SocketError::Io {
            what: "probe the existing socket",
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A temp dir at 0700: tempfile leaves the mode to the umask, and `bind` refuses a
    /// directory others can read.
    fn private_tmp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .unwrap()
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    #[tokio::test]
    async fn binds_0600_in_a_new_0700_dir_and_removes_the_socket_on_drop() {
        let tmp = private_tmp();
        let path = tmp.path().join("run/tidings.sock");
        let listener = SocketListener::bind(&path).unwrap();
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&path), 0o600);
        drop(listener);
        assert!(!path.exists());
        // The lock file stays (see the module docs) and a new bind succeeds.
        assert!(lock_path_for(&path).exists());
        let _again = SocketListener::bind(&path).unwrap();
    }

    #[tokio::test]
    async fn a_second_bind_is_refused_naming_the_path() {
        let tmp = private_tmp();
        let path = tmp.path().join("tidings.sock");
        let _first = SocketListener::bind(&path).unwrap();
        let err = SocketListener::bind(&path).unwrap_err();
        assert!(matches!(err, SocketError::AlreadyRunning { .. }), "{err:?}");
        assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
    }

    #[tokio::test]
    async fn a_stale_socket_is_replaced() {
        let tmp = private_tmp();
        let path = tmp.path().join("tidings.sock");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let _listener = SocketListener::bind(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }

    #[tokio::test]
    async fn a_live_socket_without_our_lock_is_not_removed() {
        let tmp = private_tmp();
        let path = tmp.path().join("tidings.sock");
        let _other = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = SocketListener::bind(&path).unwrap_err();
        assert!(matches!(err, SocketError::AlreadyRunning { .. }), "{err:?}");
        assert!(path.exists());
    }

    #[tokio::test]
    async fn a_regular_file_is_left_alone() {
        let tmp = private_tmp();
        let path = tmp.path().join("tidings.sock");
        std::fs::write(&path, b"mine").unwrap();
        let err = SocketListener::bind(&path).unwrap_err();
        assert!(matches!(err, SocketError::NotASocket { .. }), "{err:?}");
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
    }

    #[tokio::test]
    async fn an_open_directory_is_refused() {
        let tmp = private_tmp();
        let dir = tmp.path().join("open");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = SocketListener::bind(&dir.join("tidings.sock")).unwrap_err();
        assert!(matches!(err, SocketError::Directory { .. }), "{err:?}");
    }

    #[tokio::test]
    async fn a_too_long_path_is_refused() {
        let path = PathBuf::from(format!("/tmp/{}/tidings.sock", "x".repeat(100)));
        let err = SocketListener::bind(&path).unwrap_err();
        assert!(
            matches!(err, SocketError::PathTooLong { max, .. } if max == MAX_SOCKET_PATH_BYTES),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn the_socket_its_lock_and_its_directory_are_kept_fresh() {
        let tmp = private_tmp();
        let path = tmp.path().join("run/tidings.sock");
        let _listener =
            SocketListener::bind_with_keepalive(&path, Duration::from_millis(20)).unwrap();
        let old = filetime::FileTime::from_unix_time(86_400, 0);
        let files = [
            path.clone(),
            lock_path_for(&path),
            path.parent().unwrap().into(),
        ];
        for f in &files {
            filetime::set_symlink_file_times(f, old, old).unwrap();
        }
        let mtime = |f: &Path| {
            filetime::FileTime::from_last_modification_time(&std::fs::symlink_metadata(f).unwrap())
        };
        tokio::time::timeout(Duration::from_secs(10), async {
            while files.iter().any(|f| mtime(f) == old) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("every file is touched again");
    }

    #[tokio::test]
    async fn connections_from_our_uid_reach_the_handler() {
        let tmp = private_tmp();
        let path = tmp.path().join("tidings.sock");
        let listener = SocketListener::bind(&path).unwrap();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = async {
            listener
                .serve_with(
                    async {
                        let _ = stop_rx.await;
                    },
                    |mut stream, _| async move {
                        let mut buf = [0u8; 4];
                        if stream.read_exact(&mut buf).await.is_ok() {
                            let _ = stream.write_all(&buf).await;
                        }
                    },
                )
                .await;
        };
        let client = async {
            let mut stream = UnixStream::connect(&path).await.unwrap();
            stream.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            stream.read_exact(&mut buf).await.unwrap();
            let _ = stop_tx.send(());
            buf
        };
        let ((), echoed) = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::join!(server, client)
        })
        .await
        .unwrap();
        assert_eq!(&echoed, b"ping");
    }
}
