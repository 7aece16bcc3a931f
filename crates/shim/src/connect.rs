//! Connecting to the daemon's socket, and asking the OS to start the daemon (then retrying
//! for a few seconds) when nothing answers.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tidings_platform::{Launcher, LauncherError, StartRequest};
use tokio::net::UnixStream;
use tokio::time::Instant;

use crate::exit_code;

/// How long to keep retrying after the OS accepted a start request. A cold app start with
/// both stores to open takes a second or two; five leaves room without making an MCP client
/// wait long on a daemon that will never come.
pub const START_WAIT: Duration = Duration::from_secs(5);

/// First pause between retries; doubled each time up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// Longest pause between retries, so a daemon that comes up is found within half a second.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// What happened when we tried to get the daemon started.
#[derive(Debug)]
pub enum StartAttempt {
    /// This platform cannot start it for us (Linux).
    NotAvailable,
    /// The OS accepted the request but nothing answered within the wait.
    TimedOut(Duration),
    /// Asking failed.
    Failed(LauncherError),
}

impl StartAttempt {
    /// The clause this adds to the "not running" line; empty when there is nothing to add.
    fn clause(&self) -> String {
        match self {
            StartAttempt::NotAvailable => String::new(),
            StartAttempt::TimedOut(wait) => format!(
                "; asked the OS to start it, but nothing answered within {} s",
                wait.as_secs_f32()
            ),
            StartAttempt::Failed(error) => format!("; asking the OS to start it failed: {error}"),
        }
    }
}

/// Why we have no connection. Each message is one line that names the socket path.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No daemon at the path (no socket file, or a stale one) and it could not be started.
    #[error(
        "Tidings is not running (no daemon at {}){}; start the Tidings app, or run `tidings \
         serve`; if Tidings serves another socket, put `--socket PATH` in this server's args \
         (`tidings connect` does), since hosts may not pass TIDINGS_SOCKET on",
        .path.display(),
        .start.clause()
    )]
    NotRunning {
        /// The socket path.
        path: PathBuf,
        /// What came of asking the OS to start it.
        start: StartAttempt,
    },

    /// The socket or its directory is not ours to use.
    #[error(
        "permission denied connecting to {}; the socket or its directory belongs to another \
         user, and Tidings only serves the user it runs as",
        .path.display()
    )]
    PermissionDenied {
        /// The socket path.
        path: PathBuf,
    },

    /// Any other connect failure.
    #[error("cannot connect to {}: {source}", .path.display())]
    Io {
        /// The socket path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl ConnectError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            ConnectError::NotRunning { .. } => exit_code::NOT_RUNNING,
            ConnectError::PermissionDenied { .. } => exit_code::PERMISSION_DENIED,
            ConnectError::Io { .. } => exit_code::FAILURE,
        }
    }
}

/// Connects to `path`; if no daemon is there, asks `launcher` to start one and, when the OS
/// accepted, retries with backoff for up to `wait`.
///
/// A missing socket file (ENOENT) and a stale one (ECONNREFUSED) both mean "not running";
/// any other error is returned at once, since waiting would not fix it.
pub async fn connect_or_start(
    path: &Path,
    launcher: &dyn Launcher,
    wait: Duration,
) -> Result<UnixStream, ConnectError> {
    if let Some(stream) = try_connect(path).await? {
        return Ok(stream);
    }
    let not_running = |start| ConnectError::NotRunning {
        path: path.to_path_buf(),
        start,
    };
    match launcher.request_start() {
        Ok(StartRequest::Requested) => {}
        Ok(StartRequest::NotAvailable) => return Err(not_running(StartAttempt::NotAvailable)),
        Err(error) => return Err(not_running(StartAttempt::Failed(error))),
    }

    let deadline = Instant::now() + wait;
    let mut backoff = FIRST_BACKOFF;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(not_running(StartAttempt::TimedOut(wait)));
        }
        tokio::time::sleep(backoff.min(left)).await;
        if let Some(stream) = try_connect(path).await? {
            return Ok(stream);
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One attempt: `Ok(None)` when no daemon is there, an error for anything else.
async fn try_connect(path: &Path) -> Result<Option<UnixStream>, ConnectError> {
    match UnixStream::connect(path).await {
        Ok(stream) => Ok(Some(stream)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            Err(ConnectError::PermissionDenied {
                path: path.to_path_buf(),
            })
        }
        Err(source) => Err(ConnectError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Caps every test's wait; far above what any of them needs.
    const CAP: Duration = Duration::from_secs(10);

    /// A launcher that answers from a closure and counts calls.
    struct FakeLauncher<F> {
        answer: F,
        calls: AtomicUsize,
    }

    impl<F> FakeLauncher<F>
    where
        F: Fn() -> Result<StartRequest, LauncherError> + Send + Sync,
    {
        fn new(answer: F) -> Self {
            Self {
                answer,
                calls: AtomicUsize::new(0),
            }
        }
        fn calls(&self) -> usize {
            self.calls.load(Ordering::SeqCst)
        }
    }

    impl<F> Launcher for FakeLauncher<F>
    where
        F: Fn() -> Result<StartRequest, LauncherError> + Send + Sync,
    {
        fn request_start(&self) -> Result<StartRequest, LauncherError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            (self.answer)()
        }
    }

    fn socket_in(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().join("tidings.sock")
    }

    async fn capped<T>(fut: impl Future<Output = T>) -> T {
        tokio::time::timeout(CAP, fut)
            .await
            .expect("connect flow did not finish in time")
    }

    #[tokio::test]
    async fn running_daemon_is_used_without_asking_the_launcher() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        let _listener = UnixListener::bind(&path).unwrap();
        let launcher = FakeLauncher::new(|| panic!("launcher must not be asked"));
        capped(connect_or_start(&path, &launcher, START_WAIT))
            .await
            .unwrap();
        assert_eq!(launcher.calls(), 0);
    }

    #[tokio::test]
    async fn not_available_gives_up_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        let launcher = FakeLauncher::new(|| Ok(StartRequest::NotAvailable));
        // A wait far beyond the cap shows no retrying happens.
        let err = capped(connect_or_start(
            &path,
            &launcher,
            Duration::from_secs(3600),
        ))
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                ConnectError::NotRunning {
                    start: StartAttempt::NotAvailable,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(launcher.calls(), 1);
        assert_eq!(err.exit_code(), exit_code::NOT_RUNNING);
    }

    #[tokio::test]
    async fn requested_start_is_awaited_until_the_daemon_binds() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        let bind_path = path.clone();
        // The "daemon" comes up a little after the request, as launchd's would, so the
        // connect has to go through at least one retry.
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let launcher = FakeLauncher::new(move || {
            let bind_path = bind_path.clone();
            let bound_tx = bound_tx.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                bound_tx
                    .send(UnixListener::bind(&bind_path).unwrap())
                    .unwrap();
            });
            Ok(StartRequest::Requested)
        });
        let stream = capped(connect_or_start(&path, &launcher, CAP))
            .await
            .unwrap();
        // The listener was parked in the channel, which kept it (and the socket) alive.
        let _listener = bound_rx.recv_timeout(CAP).unwrap();
        assert_eq!(launcher.calls(), 1);
        assert!(stream.peer_addr().is_ok());
    }

    #[tokio::test]
    async fn requested_start_that_never_binds_times_out_naming_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        let launcher = FakeLauncher::new(|| Ok(StartRequest::Requested));
        let wait = Duration::from_millis(300);
        let err = capped(connect_or_start(&path, &launcher, wait))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ConnectError::NotRunning { start: StartAttempt::TimedOut(w), .. } if w == wait),
            "{err:?}"
        );
        assert!(err.to_string().contains("within 0.3 s"), "{err}");
    }

    #[tokio::test]
    async fn launcher_failure_is_reported_in_the_same_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        let launcher = FakeLauncher::new(|| {
            Err(LauncherError::Spawn {
                program: "launchctl".into(),
                source: io::Error::from(io::ErrorKind::NotFound),
            })
        });
        let err = capped(connect_or_start(&path, &launcher, START_WAIT))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("launchctl"), "{text}");
        assert!(text.contains(path.to_str().unwrap()), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }

    #[tokio::test]
    async fn stale_socket_file_counts_as_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_in(&dir);
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists(), "the stale socket file stays behind");
        let launcher = FakeLauncher::new(|| Ok(StartRequest::NotAvailable));
        let err = capped(connect_or_start(&path, &launcher, START_WAIT))
            .await
            .unwrap_err();
        assert!(matches!(err, ConnectError::NotRunning { .. }), "{err:?}");
        assert_eq!(launcher.calls(), 1);
    }

    #[tokio::test]
    async fn other_errors_are_returned_without_asking_the_launcher() {
        let dir = tempfile::tempdir().unwrap();
        // A regular file where the socket should be: ECONNREFUSED on Linux would hide it, so
        // use a directory component that is a file, which gives ENOTDIR.
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let path = file.join("tidings.sock");
        let launcher = FakeLauncher::new(|| panic!("launcher must not be asked"));
        let err = capped(connect_or_start(&path, &launcher, START_WAIT))
            .await
            .unwrap_err();
        assert!(matches!(err, ConnectError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
        assert_eq!(err.exit_code(), exit_code::FAILURE);
    }

    #[test]
    fn not_running_message_is_one_line_naming_path_and_remedy() {
        let err = ConnectError::NotRunning {
            path: PathBuf::from("/run/user/1000/tidings/tidings.sock"),
            start: StartAttempt::NotAvailable,
        };
        assert_eq!(
            err.to_string(),
            "Tidings is not running (no daemon at /run/user/1000/tidings/tidings.sock); \
             start the Tidings app, or run `tidings serve`; if Tidings serves another socket, \
             put `--socket PATH` in this server's args (`tidings connect` does), since hosts \
             may not pass TIDINGS_SOCKET on"
        );
    }
}
