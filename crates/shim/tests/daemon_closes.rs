//! The shim exits when the daemon closes, even though its stdin is still open (tokio's stdin
//! reader must not keep the process alive).

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{bind, shim, socket_args, within};

#[tokio::test]
async fn daemon_close_ends_the_shim_with_stdin_open() {
    let socket = bind();
    let mut child = shim(&socket_args(&socket.path)).spawn().unwrap();
    let (mut conn, _) = within("the shim to connect", socket.listener.accept())
        .await
        .unwrap();
    // Held open for the whole test: the client is still "there".
    let _stdin = child.stdin.take().unwrap();

    conn.write_all(b"{\"method\":\"bye\"}\n").await.unwrap();
    drop(conn);

    let mut stdout = Vec::new();
    within(
        "stdout to close",
        child.stdout.take().unwrap().read_to_end(&mut stdout),
    )
    .await
    .unwrap();
    assert_eq!(stdout, b"{\"method\":\"bye\"}\n");
    let status = within("the shim to exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}
