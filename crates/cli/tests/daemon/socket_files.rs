//! The socket on disk: directory 0700, socket 0600, one daemon per socket, a stale socket
//! replaced, and the socket removed on a clean shutdown.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use crate::common::{ALREADY_RUNNING, Daemon};
use serde_json::json;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn the_socket_is_0600_in_a_0700_directory() {
    let daemon = Daemon::start();
    assert_eq!(mode(&daemon.dir), 0o700, "directory");
    assert_eq!(mode(&daemon.socket), 0o600, "socket");
}

#[test]
fn a_second_daemon_on_the_same_socket_refuses_to_start() {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let first = Daemon::start_in(Arc::clone(&tmp));
    let mut second = Daemon::spawn_in(Arc::clone(&tmp));
    let status = second.wait_exit();
    assert_eq!(
        status.code(),
        Some(ALREADY_RUNNING),
        "stderr:\n{}",
        second.stderr()
    );
    let stderr = second.stderr();
    assert!(stderr.contains("already serving"), "{stderr}");
    assert!(
        stderr.contains(first.socket.to_str().unwrap()),
        "names the socket: {stderr}"
    );
    // The first is untouched.
    let mut client = first.client();
    assert!(client.result(1, "events/list", json!({}))["events"].is_array());
}

#[test]
fn a_stale_socket_is_replaced() {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A socket nobody listens on, as a crashed daemon leaves behind.
    drop(std::os::unix::net::UnixListener::bind(dir.join("tidings.sock")).unwrap());
    let daemon = Daemon::start_in(tmp);
    let mut client = daemon.client();
    assert!(client.result(1, "events/list", json!({}))["events"].is_array());
}

#[test]
fn a_clean_shutdown_removes_the_socket() {
    let mut daemon = Daemon::start();
    let status = daemon.terminate();
    assert!(
        status.success(),
        "SIGTERM is a clean exit: {status:?}\n{}",
        daemon.stderr()
    );
    assert!(!daemon.socket.exists());
}
