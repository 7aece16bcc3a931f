//! The shim with no daemon behind the socket: one clear line on stderr naming the socket,
//! and a non-zero exit.

use std::process::Command;

use crate::common;
use crate::common::{NOT_RUNNING, shim_bin};

#[test]
fn the_shim_without_a_daemon_says_so_and_exits_non_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = tmp.path().join("tidings.sock");
    let output = Command::new(shim_bin())
        .arg("--socket")
        .arg(&socket)
        .env_remove("TIDINGS_SOCKET")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(NOT_RUNNING), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(socket.to_str().unwrap()),
        "names the socket: {stderr}"
    );
    assert!(
        stderr.contains("not running") && stderr.contains("tidings serve"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn the_shim_after_the_daemon_stopped_says_so_too() {
    let mut daemon = common::Daemon::start();
    assert!(daemon.terminate().success());
    let output = Command::new(shim_bin())
        .arg("--socket")
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(NOT_RUNNING), "{output:?}");
}
