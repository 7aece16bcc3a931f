//! A connection from a process of another uid is closed without an answer. Needs root to
//! run a client as uid 65534 (nobody); elsewhere it says so and skips.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Client, Daemon, WAIT, meta};
use serde_json::json;

const NOBODY: u32 = 65534;

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

#[test]
fn a_client_of_another_uid_is_refused() {
    if !running_as_root() {
        eprintln!("skipped: switching to uid {NOBODY} needs root, and this test is not root");
        return;
    }
    let daemon = Daemon::start();
    // Loosen the modes after start so nobody *can* reach the socket: the uid check alone
    // must stop it.
    let open = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    open(daemon.tmp.path(), 0o755);
    open(&daemon.dir, 0o711);
    open(&daemon.socket, 0o666);
    let shim = common::shim_for_everyone(daemon.tmp.path());

    let mut stranger = Client::spawn(
        Command::new(&shim)
            .arg("--socket")
            .arg(&daemon.socket)
            .uid(NOBODY)
            .gid(NOBODY),
    );
    // The daemon may close the connection before this is written: the shim has then ended
    // and the write meets a broken pipe. Either way nothing may come back.
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "events/list", "params": {"_meta": meta()}});
    match stranger.try_send(&list) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("cannot write to the stranger's shim: {e}"),
    }
    // The daemon closes the connection, so the shim ends on its own, having written nothing.
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = stranger.try_exit() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the stranger's connection was not closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        stranger.frames.is_empty(),
        "the daemon answered another uid: {:?}",
        stranger.frames
    );
    assert!(
        !stranger.stderr().contains("permission denied"),
        "the socket modes stopped it, not the uid check: {}",
        stranger.stderr()
    );
    let log_deadline = Instant::now() + WAIT;
    while !daemon.stderr().contains("another user") {
        assert!(
            Instant::now() < log_deadline,
            "no refusal logged:\n{}",
            daemon.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = status;

    // Our own uid is still served.
    let mut client = daemon.client();
    assert!(client.result(1, "events/list", json!({}))["events"].is_array());
}
