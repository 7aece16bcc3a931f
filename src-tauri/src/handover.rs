//! One app per socket: a second launch, whose engine finds the socket's lock held, hands
//! over to the running app, which opens Settings, and exits 0. The running app listens on a
//! small socket beside the engine's (`tidings.sock.app`), bound and served by the engine's
//! own `SocketListener` (private directory, 0600, its own lock, a stale socket cleared, other
//! users refused, removed when it stops); the one message is `show`, so a process that
//! reaches it can open the window and nothing more.

use std::io::Write;
use std::path::{Path, PathBuf};

use tidings_server::socket::{SocketError, SocketListener};
use tokio::io::AsyncReadExt;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::{AppEvent, Proxy};

/// What a second launch says.
const SHOW: &[u8] = b"show\n";
/// The longest message read (anything longer is not ours).
const MAX_MESSAGE: u64 = 64;

/// The hand-over socket beside `engine_socket`.
pub fn path(engine_socket: &Path) -> PathBuf {
    let mut name = engine_socket.as_os_str().to_owned();
    name.push(".app");
    PathBuf::from(name)
}

/// Asks a running app to open Settings. True when one answered: this launch is done.
pub fn hand_over(path: &Path) -> bool {
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(path) else {
        return false;
    };
    stream.write_all(SHOW).is_ok()
}

/// The hand-over socket being served; [`close`](Handover::close) it at Quit.
pub struct Handover {
    stop: oneshot::Sender<()>,
    served: JoinHandle<()>,
}

/// Listens for later launches until [`Handover::close`]; each `show` opens Settings. Must run
/// inside a tokio runtime.
pub fn listen(path: &Path, main: Proxy) -> Result<Handover, SocketError> {
    let listener = SocketListener::bind(path)?;
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        let stopped = async {
            let _ = stopped.await;
        };
        listener
            .serve_with(stopped, move |stream, _pid| {
                let main = main.clone();
                async move {
                    let mut message = Vec::new();
                    let read = stream.take(MAX_MESSAGE).read_to_end(&mut message).await;
                    if read.is_ok() && asks_for_settings(&message) {
                        tracing::info!("a second launch asked for Settings");
                        main.send(AppEvent::ShowSettings);
                    }
                }
            })
            .await;
        // The listener drops here, which removes the socket file.
    });
    Ok(Handover { stop, served })
}

impl Handover {
    /// Stops listening and removes the socket file.
    pub async fn close(self) {
        let _ = self.stop.send(());
        let _ = self.served.await;
    }
}

/// Whether a message is a second launch's: exactly `show` and its newline.
fn asks_for_settings(message: &[u8]) -> bool {
    message == SHOW
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn the_socket_sits_beside_the_engines() {
        assert_eq!(
            path(Path::new("/d/tidings.sock")),
            PathBuf::from("/d/tidings.sock.app")
        );
    }

    #[test]
    fn only_a_second_launchs_message_opens_settings() {
        assert!(asks_for_settings(SHOW));
        for other in [&b"show"[..], b"show\nshow\n", b"enable mail\n", b""] {
            assert!(!asks_for_settings(other), "{other:?}");
        }
    }

    /// A second launch reaches the first; with no app listening, a launch goes on to start
    /// its own.
    #[tokio::test]
    async fn a_second_launch_asks_the_first_for_settings() {
        // Private, as the engine's socket directory is.
        let dir = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .unwrap();
        let socket = path(&dir.path().join("tidings.sock"));
        assert!(!hand_over(&socket), "nobody listens yet");

        let (tx, rx) = mpsc::channel();
        let main = Proxy::new(move |event| {
            let _ = tx.send(event);
        });
        // A socket file left by a crashed app is replaced.
        drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
        let handover = listen(&socket, main).unwrap();

        let second = socket.clone();
        assert!(
            tokio::task::spawn_blocking(move || hand_over(&second))
                .await
                .unwrap()
        );
        let event = tokio::task::spawn_blocking(move || rx.recv().unwrap())
            .await
            .unwrap();
        assert!(matches!(event, AppEvent::ShowSettings));

        handover.close().await;
        assert!(!socket.exists());
    }
}
