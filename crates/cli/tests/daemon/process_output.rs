//! The `tidings serve` process and its output: a cancel over HTTP is not an error in the log
//! (issue 7 item 12), and a stdout or stderr that fails never takes the daemon down (issue 8
//! item 11).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Daemon, WAIT};

/// An `events/stream` POST for `mail.received` with every header right (no token: --no-auth).
fn stream_request(port: u16, id: u64) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "events/stream",
        "params": {"name": "mail.received", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: events/stream\r\nMcp-Name: mail.received\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads from `stream` until `needle` has arrived (capped by [`WAIT`]).
fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + WAIT;
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "no {needle:?} in {:?}",
            String::from_utf8_lossy(&seen)
        );
        let n = stream.read(&mut buf).expect("read");
        assert!(
            n > 0,
            "closed before {needle:?}: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// Waits (within [`WAIT`]) until `needle` is on `count` lines of the daemon's stderr.
fn wait_for_count(daemon: &Daemon, needle: &str, count: usize) {
    let deadline = Instant::now() + WAIT;
    while daemon.stderr().matches(needle).count() < count {
        assert!(
            Instant::now() < deadline,
            "fewer than {count} {needle:?} lines:\n{}",
            daemon.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_cancel_over_http_logs_no_error() {
    let mut served = Daemon::builder().http().no_auth().heartbeat_ms(200).start();
    let port = served.http_addr().port();
    for id in 0..6 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(&stream_request(port, id)).unwrap();
        read_until(&mut stream, "notifications/events/active");
        if id % 2 == 1 {
            // Wait for a heartbeat too, so the cancel lands mid-stream.
            read_until(&mut stream, "notifications/events/heartbeat");
        }
        drop(stream);
    }
    // One more, cancelled after two heartbeats.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(&stream_request(port, 99)).unwrap();
    read_until(&mut stream, "notifications/events/heartbeat");
    read_until(&mut stream, "notifications/events/heartbeat");
    drop(stream);
    // Each cancel is handled once its stream logs that it ended (at debug); rmcp's error for
    // the answer nobody takes comes after that line. Stopping the daemon then flushes
    // whatever was still to be logged, so the whole log is in before we look.
    wait_for_count(&served, "stream ended", 6 + 1);
    served.terminate();
    let log = served.stderr();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(
        errors.is_empty(),
        "errors logged for client cancels:\n{}",
        errors.join("\n")
    );
}

/// `serve --demo` with stdout and stderr on what `output` makes, logging at debug (a line per
/// connection): it must answer, keep answering, and stop cleanly on SIGTERM.
fn serves_despite(output: impl Fn() -> Stdio + 'static) {
    let mut daemon = Daemon::builder().stdio(output).start();
    let answer = daemon
        .socket_call("server/discover")
        .expect("the daemon answered once");
    assert!(answer.get("result").is_some(), "{answer}");
    for _ in 0..20 {
        let list = daemon
            .socket_call("events/list")
            .expect("the daemon stopped answering");
        assert!(list["result"]["events"].is_array(), "{list}");
    }
    assert!(daemon.running(), "serve exited");
    let status = daemon.terminate();
    assert!(status.success(), "serve stopped with {status}");
}

#[test]
fn serve_survives_stdout_and_stderr_on_dev_full() {
    serves_despite(|| {
        Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    });
}

#[test]
fn serve_survives_stdout_and_stderr_on_a_closed_pipe() {
    serves_despite(|| {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        Stdio::from(writer)
    });
}
