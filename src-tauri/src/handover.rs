//! One app per socket: a second launch, whose engine finds the socket's lock held, hands
//! over to the running app, which opens Settings, and exits 0. The running app listens on a
//! small socket beside the engine's (`tidings.sock.app`), in the same private directory;
//! the one message is `show`, so a process that reaches it can open the window and nothing
//! more.

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio::io::AsyncReadExt;
use tokio::net::UnixListener;

use crate::{AppEvent, Proxy};

/// What a second launch says.
const SHOW: &[u8] = b"show\n";
/// The longest message read (anything longer is not ours).
const MAX_MESSAGE: u64 = 64;
/// The pause after a failed accept.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

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

/// Listens for later launches until the app quits; each `show` opens Settings. A socket
/// file left by an app that crashed is replaced (this app holds the engine's lock, so no
/// other app listens there). Removed at Quit ([`remove`]).
pub fn listen(path: &Path, main: Proxy) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| is_socket(&m)) {
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                // Out of descriptors, most likely: wait rather than spin.
                Err(error) => {
                    tracing::debug!(%error, "the hand-over socket cannot accept");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            let main = main.clone();
            tokio::spawn(async move {
                let mut message = Vec::new();
                let read = stream.take(MAX_MESSAGE).read_to_end(&mut message).await;
                if read.is_ok() && asks_for_settings(&message) {
                    tracing::info!("a second launch asked for Settings");
                    main.send(AppEvent::ShowSettings);
                }
            });
        }
    });
    Ok(())
}

/// Whether a message is a second launch's: exactly `show` and its newline.
fn asks_for_settings(message: &[u8]) -> bool {
    message == SHOW
}

/// Removes the hand-over socket (at Quit).
pub fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

fn is_socket(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    metadata.file_type().is_socket()
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
        let dir = tempfile::tempdir().unwrap();
        let socket = path(&dir.path().join("tidings.sock"));
        assert!(!hand_over(&socket), "nobody listens yet");

        let (tx, rx) = mpsc::channel();
        let main = Proxy::new(move |event| {
            let _ = tx.send(event);
        });
        // A socket file left by a crashed app is replaced.
        drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
        listen(&socket, main).unwrap();

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

        remove(&socket);
        assert!(!socket.exists());
    }
}
