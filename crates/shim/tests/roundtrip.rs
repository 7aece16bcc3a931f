//! Bytes cross the shim in both directions unchanged, including a line over 64 KiB and
//! bytes that are not UTF-8.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{bind, shim, socket_args, within};

/// NDJSON-ish input: a short frame, a 200 KiB line holding every byte value but `\n`, and
/// a last frame.
fn payload() -> Vec<u8> {
    let mut bytes = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}\n".to_vec();
    bytes.extend(
        (0..200 * 1024).map(|i| match u8::try_from(i % 256).unwrap() {
            b'\n' => b'.',
            other => other,
        }),
    );
    bytes.push(b'\n');
    bytes.extend_from_slice(b"{\"last\":true}\n");
    bytes
}

#[tokio::test]
async fn echo_round_trip_is_byte_exact() {
    let socket = bind();
    let mut child = shim(&socket_args(&socket.path)).spawn().unwrap();
    let (conn, _) = within("the shim to connect", socket.listener.accept())
        .await
        .unwrap();

    // The daemon echoes everything back and closes when the shim half-closes.
    let daemon = tokio::spawn(async move {
        let (mut from_shim, mut to_shim) = conn.into_split();
        let echoed = tokio::io::copy(&mut from_shim, &mut to_shim).await.unwrap();
        to_shim.shutdown().await.unwrap();
        echoed
    });

    // Write and read at the same time: 200 KiB does not fit in the pipe buffers.
    let sent = payload();
    let mut stdin = child.stdin.take().unwrap();
    let to_write = sent.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&to_write).await.unwrap();
        // Dropping stdin closes it: the shim's EOF.
    });
    let mut received = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    within("the echo", stdout.read_to_end(&mut received))
        .await
        .unwrap();
    within("the writer", writer).await.unwrap();

    assert_eq!(received.len(), sent.len());
    assert!(received == sent, "bytes changed on the way through");
    assert_eq!(
        within("the daemon", daemon).await.unwrap(),
        sent.len() as u64
    );
    let status = within("the shim to exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}
