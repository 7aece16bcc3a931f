//! Moving bytes: stdin to the socket and the socket to stdout, unchanged, until the daemon
//! closes its side.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;

/// Copies `input` to the daemon and the daemon to `output` until the daemon closes.
///
/// Two plain copies rather than `copy_bidirectional`, to make the close rules explicit:
/// - At `input` EOF the socket's write half is shut down, so the daemon reads EOF (a
///   half-close) while its answers can still come back.
/// - When the daemon closes, we are done, whatever `input` is doing: an MCP client may keep
///   its end open forever.
/// - A broken pipe on `output` means the client went away; that is a normal end, `Ok`.
///
/// `tokio::io::copy` flushes `output` whenever the socket has nothing more to read, so each
/// frame reaches the client as soon as it arrives, not when a buffer fills.
pub async fn pump<I, O>(stream: UnixStream, mut input: I, mut output: O) -> io::Result<()>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin,
{
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    tokio::spawn(async move {
        // Errors here (stdin unreadable, daemon gone mid-write) are not reported: the daemon
        // side decides when the session ends, and its copy below sees the same failure.
        let _ = tokio::io::copy(&mut input, &mut to_daemon).await;
        let _ = to_daemon.shutdown().await;
    });
    let copied = tokio::io::copy(&mut from_daemon, &mut output).await;
    let flushed = match copied {
        Ok(_) => output.flush().await,
        Err(e) => Err(e),
    };
    match flushed {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::AsyncReadExt;

    const CAP: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn input_eof_half_closes_and_daemon_close_ends_the_pump() {
        let (shim_side, mut daemon) = UnixStream::pair().unwrap();
        let (mut client_in, input) = tokio::io::duplex(64);
        let (output, mut client_out) = tokio::io::duplex(1 << 20);

        let pump = tokio::spawn(pump(shim_side, input, output));
        client_in.write_all(b"request\n").await.unwrap();
        drop(client_in);

        let mut received = Vec::new();
        tokio::time::timeout(CAP, daemon.read_to_end(&mut received))
            .await
            .expect("daemon never saw EOF")
            .unwrap();
        assert_eq!(received, b"request\n");

        daemon.write_all(b"answer\n").await.unwrap();
        drop(daemon);
        tokio::time::timeout(CAP, pump)
            .await
            .expect("pump did not end after the daemon closed")
            .unwrap()
            .unwrap();
        let mut sent = Vec::new();
        client_out.read_to_end(&mut sent).await.unwrap();
        assert_eq!(sent, b"answer\n");
    }

    #[tokio::test]
    async fn client_gone_is_a_normal_end() {
        let (shim_side, mut daemon) = UnixStream::pair().unwrap();
        let (_client_in, input) = tokio::io::duplex(64);
        let (output, client_out) = tokio::io::duplex(64);
        drop(client_out);

        let pump = tokio::spawn(pump(shim_side, input, output));
        daemon.write_all(b"frame\n").await.unwrap();
        let result = tokio::time::timeout(CAP, pump)
            .await
            .expect("pump hung")
            .unwrap();
        assert!(result.is_ok(), "{result:?}");
    }
}
