//! `tidings serve --http` as a process: `--demo --no-auth` prints the URL and a loud warning,
//! and without a keychain the endpoint refuses to start, naming what is missing. An endpoint
//! asked for by settings that cannot start is logged, and the daemon serves on. A keychain
//! that hangs delays neither the socket nor a SIGTERM.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn tidings() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tidings"));
    c.env_remove("TIDINGS_SOCKET").stdin(Stdio::null());
    c
}

#[test]
fn demo_no_auth_prints_the_url_and_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
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
        .arg("--data-dir")
        .arg(tmp.path().join("demo"))
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
    let url = rx.recv_timeout(WAIT).expect("no URL printed");
    child.kill().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let _ = child.wait();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert!(
        stderr.contains("WARNING: the HTTP endpoint runs WITHOUT AUTHENTICATION"),
        "{stderr}"
    );
    let port: u16 = url["http://127.0.0.1:".len()..url.len() - 4]
        .parse()
        .unwrap();
    assert!(port > 0);
}

#[test]
fn without_a_keychain_the_endpoint_refuses_to_start() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tidings()
        .args([
            "serve",
            "--demo",
            "--simulate",
            "off",
            "--http",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(tmp.path().join("demo"))
        // No session bus: no Secret Service.
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/tidings-test-bus",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot start the HTTP endpoint"),
        "{stderr}"
    );
    assert!(stderr.contains("Secret Service"), "{stderr}");
}

#[test]
fn a_non_loopback_address_fails_before_anything_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tidings()
        .args([
            "serve",
            "--demo",
            "--simulate",
            "off",
            "--http",
            "0.0.0.0:3917",
        ])
        .arg("--data-dir")
        .arg(tmp.path().join("demo"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Refused by the command line parser (exit 2), before any banner or demo layout.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "printed a banner: {out:?}");
    assert!(!tmp.path().join("demo").exists(), "the demo was laid out");
    assert!(
        stderr.contains("`0.0.0.0:3917` is not a loopback address"),
        "{stderr}"
    );
}

#[test]
fn a_bad_http_setting_at_start_is_logged_and_the_daemon_serves_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    // The socket lives here too, and its directory must be private.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // The demo keeps a settings file it finds; this one only asks for a non-loopback endpoint.
    std::fs::write(
        dir.join("settings.toml"),
        "[http]\nenabled = true\nlisten = \"0.0.0.0:3917\"\n",
    )
    .unwrap();
    let mut child = tidings()
        .args(["serve", "--demo", "--simulate", "off", "--data-dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("Tidings demo is serving") {
                let _ = tx.send(());
            }
        }
    });
    // The endpoint starts beside the socket, so its failure is logged after the how-to:
    // wait for that line too (capped), keeping stderr for the messages.
    let (err_tx, err_rx) = channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = err_tx.send(line);
        }
    });
    let serving = rx.recv_timeout(WAIT);
    let mut stderr = String::new();
    let deadline = std::time::Instant::now() + WAIT;
    while !stderr.contains("the HTTP endpoint did not start") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match err_rx.recv_timeout(left) {
            Ok(line) => {
                stderr.push_str(&line);
                stderr.push('\n');
            }
            Err(_) => break,
        }
    }
    let still_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(serving.is_ok(), "the daemon did not start: {stderr}");
    assert!(still_running, "{stderr}");
    assert!(
        stderr.contains("the HTTP endpoint did not start")
            && stderr.contains("refusing to serve HTTP on 0.0.0.0:3917"),
        "{stderr}"
    );
}

#[test]
fn a_keychain_that_hangs_delays_neither_the_socket_nor_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // A "session bus" that accepts and never says a word: the Secret Service call hangs.
    let bus_path = tmp.path().join("bus");
    let bus = std::os::unix::net::UnixListener::bind(&bus_path).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in bus.incoming() {
            held.push(conn);
        }
    });
    let socket = dir.join("tidings.sock");
    let mut child = tidings()
        .args([
            "serve",
            "--demo",
            "--simulate",
            "off",
            "--http",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(&dir)
        .arg("--socket")
        .arg(&socket)
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", bus_path.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("Tidings demo is serving") {
                let _ = tx.send(());
            }
        }
    });
    let serving = rx.recv_timeout(WAIT);
    if serving.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the socket waited for the keychain");
    }
    // The socket answers while the keychain is still being asked.
    let mut conn = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    conn.set_read_timeout(Some(WAIT)).unwrap();
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "events/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}});
    std::io::Write::write_all(&mut conn, format!("{request}\n").as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(&conn).read_line(&mut line).unwrap();
    assert!(line.contains("\"events\""), "{line}");
    // SIGTERM ends it, keychain or not.
    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve did not exit on SIGTERM while the keychain hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}
