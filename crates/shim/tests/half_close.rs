//! Stdin EOF reaches the daemon as EOF (the shim half-closes), the daemon's answer after
//! that still reaches stdout, and the shim exits 0 once the daemon closes.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{bind, shim, socket_args, within};

#[tokio::test]
async fn stdin_eof_is_a_half_close() {
    let socket = bind();
    let mut child = shim(&socket_args(&socket.path)).spawn().unwrap();
    let (mut conn, _) = within("the shim to connect", socket.listener.accept())
        .await
        .unwrap();

    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"id\":1}\n{\"id\":2}\n").await.unwrap();
    drop(stdin);

    // read_to_end returns only at EOF, so returning proves the half-close arrived.
    let mut from_shim = Vec::new();
    within("EOF from the shim", conn.read_to_end(&mut from_shim))
        .await
        .unwrap();
    assert_eq!(from_shim, b"{\"id\":1}\n{\"id\":2}\n");

    // The shim is still there to carry the answer.
    conn.write_all(b"{\"id\":2,\"result\":{}}\n").await.unwrap();
    drop(conn);

    let output = within("the shim to exit", child.wait_with_output())
        .await
        .unwrap();
    assert_eq!(output.stdout, b"{\"id\":2,\"result\":{}}\n");
    assert!(output.status.success(), "{}", output.status);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
