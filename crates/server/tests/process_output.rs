//! The `tidings serve` process and its output: a cancel over HTTP is not an error in the log
//! (issue 7 item 12), and a stdout or stderr that fails never takes the daemon down (issue 8
//! item 11).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

fn tidings() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tidings"));
    c.env_remove("TIDINGS_SOCKET").stdin(Stdio::null());
    c
}

/// Reads `pipe` to the end on a thread; the text so far is in the returned buffer.
fn collect(mut pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&text);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

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

struct Served {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http(data_dir: &std::path::Path) -> Served {
    let mut child = tidings()
        .args([
            "serve",
            "--demo",
            "--simulate",
            "off",
            "--http",
            "127.0.0.1:0",
            "--no-auth",
        ])
        .args(["--heartbeat-ms", "200"])
        .arg("--data-dir")
        .arg(data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("HTTP (no auth): ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let stderr = collect(child.stderr.take().unwrap());
    let url = rx.recv_timeout(WAIT).expect("no URL printed");
    let port = url["http://127.0.0.1:".len()..url.len() - 4]
        .parse()
        .unwrap();
    Served {
        child,
        port,
        stderr,
    }
}

#[test]
fn a_client_cancel_over_http_logs_no_error() {
    let tmp = tempfile::tempdir().unwrap();
    let served = serve_http(&tmp.path().join("demo"));
    for id in 0..6 {
        let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
        stream.write_all(&stream_request(served.port, id)).unwrap();
        read_until(&mut stream, "notifications/events/active");
        if id % 2 == 1 {
            // Wait for a heartbeat too, so the cancel lands mid-stream.
            read_until(&mut stream, "notifications/events/heartbeat");
        }
        drop(stream);
    }
    // One more stream that runs, so the cancels above have been handled before we look.
    let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    stream.write_all(&stream_request(served.port, 99)).unwrap();
    read_until(&mut stream, "notifications/events/heartbeat");
    read_until(&mut stream, "notifications/events/heartbeat");
    drop(stream);
    std::thread::sleep(Duration::from_millis(500));
    let log = served.stderr.lock().unwrap().clone();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(
        errors.is_empty(),
        "errors logged for client cancels:\n{}",
        errors.join("\n")
    );
}

/// One request on a fresh socket connection; its answer, or None if the daemon is not there.
fn socket_call(socket: &std::path::Path, method: &str) -> Option<serde_json::Value> {
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    stream.write_all(format!("{request}\n").as_bytes()).ok()?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).ok()?;
    serde_json::from_str(&line).ok()
}

/// `serve --demo` with stdout and stderr on what `output` makes, logging at debug (a line per
/// connection): it must answer, keep answering, and stop cleanly on SIGTERM.
fn serves_despite(output: impl Fn() -> Stdio) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let mut child = tidings()
        .args(["serve", "--demo", "--simulate", "off"])
        .arg("--data-dir")
        .arg(&dir)
        .env("TIDINGS_LOG", "debug")
        .stdout(output())
        .stderr(output())
        .spawn()
        .unwrap();
    let socket = dir.join("tidings.sock");
    let deadline = Instant::now() + WAIT;
    let answer = loop {
        if let Some(answer) = socket_call(&socket, "server/discover") {
            break answer;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("serve died before answering: {status}");
        }
        assert!(Instant::now() < deadline, "serve never answered");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(answer.get("result").is_some(), "{answer}");
    for _ in 0..20 {
        let list = socket_call(&socket, "events/list").expect("the daemon stopped answering");
        assert!(list["result"]["events"].is_array(), "{list}");
    }
    assert!(child.try_wait().unwrap().is_none(), "serve exited");
    let pid = i32::try_from(child.id()).unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
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
