//! `TIDINGS_SOCKET` picks the socket when --socket is absent, and --socket=PATH works too.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{bind, shim, within};

/// Connects via `cmd`, sends one frame from the daemon and checks it arrives.
async fn one_frame_through(mut cmd: tokio::process::Command, socket: crate::util::TestSocket) {
    let mut child = cmd.spawn().unwrap();
    let (mut conn, _) = within("the shim to connect", socket.listener.accept())
        .await
        .unwrap();
    conn.write_all(b"{}\n").await.unwrap();
    drop(conn);
    let mut stdout = Vec::new();
    within(
        "stdout",
        child.stdout.take().unwrap().read_to_end(&mut stdout),
    )
    .await
    .unwrap();
    assert_eq!(stdout, b"{}\n");
    assert!(within("exit", child.wait()).await.unwrap().success());
}

#[tokio::test]
async fn env_var_names_the_socket() {
    let socket = bind();
    let mut cmd = shim::<&str>(&[]);
    cmd.env("TIDINGS_SOCKET", &socket.path);
    one_frame_through(cmd, socket).await;
}

#[tokio::test]
async fn socket_flag_with_equals_beats_the_env_var() {
    let socket = bind();
    let arg = format!("--socket={}", socket.path.display());
    let mut cmd = shim(&[arg]);
    cmd.env("TIDINGS_SOCKET", "/nonexistent/elsewhere.sock");
    one_frame_through(cmd, socket).await;
}
