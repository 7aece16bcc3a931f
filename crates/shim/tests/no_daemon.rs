//! With nothing on the socket the shim exits with `NOT_RUNNING` and exactly one stderr line
//! naming the socket path, and writes nothing to stdout (which carries frames). On Linux
//! there is no launcher, so this happens at once.

use std::path::Path;

use crate::util::{NOT_RUNNING, shim, socket_args, within};

async fn assert_not_running(path: &Path) {
    let child = shim(&socket_args(path)).spawn().unwrap();
    let output = within("the shim to give up", child.wait_with_output())
        .await
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(NOT_RUNNING), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.ends_with('\n'), "{stderr:?}");
    assert!(stderr.contains(path.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("tidings serve"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn missing_socket_is_not_running() {
    let dir = tempfile::tempdir().unwrap();
    assert_not_running(&dir.path().join("tidings.sock")).await;
}

#[tokio::test]
async fn stale_socket_is_not_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tidings.sock");
    // Bound and dropped: the file stays, nobody listens (ECONNREFUSED).
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert_not_running(&path).await;
}

#[tokio::test]
async fn missing_socket_directory_is_not_running() {
    let dir = tempfile::tempdir().unwrap();
    assert_not_running(&dir.path().join("never-made").join("tidings.sock")).await;
}
