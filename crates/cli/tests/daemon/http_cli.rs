//! `tidings serve --http` as a process: `--demo --no-auth` prints the URL and a loud warning,
//! and without a keychain the endpoint refuses to start, naming what is missing. An endpoint
//! asked for by settings that cannot start is logged, and the daemon serves on. A keychain
//! that hangs delays neither the socket nor a SIGTERM.

use crate::common::Daemon;

#[test]
fn demo_no_auth_prints_the_url_and_a_warning() {
    let mut daemon = Daemon::builder().http().no_auth().spawn();
    let url = daemon
        .wait_stdout("HTTP (no auth): ")
        .strip_prefix("HTTP (no auth): ")
        .unwrap()
        .to_owned();
    daemon.wait_stderr("WARNING: the HTTP endpoint runs WITHOUT AUTHENTICATION");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let port: u16 = url["http://127.0.0.1:".len()..url.len() - 4]
        .parse()
        .unwrap();
    assert!(port > 0);
}

#[test]
fn without_a_keychain_the_endpoint_refuses_to_start() {
    let mut daemon = Daemon::builder()
        .http()
        // No session bus: no Secret Service.
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/tidings-test-bus",
        )
        .spawn();
    let status = daemon.wait_exit();
    let stderr = daemon.stderr();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot start the HTTP endpoint"),
        "{stderr}"
    );
    assert!(stderr.contains("Secret Service"), "{stderr}");
}

#[test]
fn a_non_loopback_address_fails_before_anything_serves() {
    let mut daemon = Daemon::builder().http_on("0.0.0.0:3917").spawn();
    let status = daemon.wait_exit();
    let stderr = daemon.stderr();
    // Refused by the command line parser (exit 2), before any banner or demo layout.
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        daemon.stdout().is_empty(),
        "printed a banner: {}",
        daemon.stdout()
    );
    assert!(!daemon.dir.exists(), "the demo was laid out");
    assert!(
        stderr.contains("`0.0.0.0:3917` is not a loopback address"),
        "{stderr}"
    );
}

#[test]
fn a_bad_http_setting_at_start_is_logged_and_the_daemon_serves_on() {
    // The demo keeps a settings file it finds; this one only asks for a non-loopback endpoint.
    let mut daemon = Daemon::builder()
        .settings("[http]\nenabled = true\nlisten = \"0.0.0.0:3917\"\n")
        .start();
    // The endpoint starts beside the socket, so its failure is logged after the socket
    // answers: wait for that line (capped).
    daemon.wait_stderr("the HTTP endpoint did not start");
    assert!(daemon.running(), "{}", daemon.stderr());
    let stderr = daemon.stderr();
    assert!(
        stderr.contains("the HTTP endpoint did not start")
            && stderr.contains("refusing to serve HTTP on 0.0.0.0:3917"),
        "{stderr}"
    );
}

#[test]
fn a_keychain_that_hangs_delays_neither_the_socket_nor_sigterm() {
    let tmp = std::sync::Arc::new(tempfile::tempdir().unwrap());
    // A "session bus" that accepts and never says a word: the Secret Service call hangs.
    let bus_path = tmp.path().join("bus");
    let bus = std::os::unix::net::UnixListener::bind(&bus_path).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in bus.incoming() {
            held.push(conn);
        }
    });
    // Ready means the socket answered while the keychain is still being asked.
    let mut daemon = Daemon::builder()
        .tmp(tmp)
        .http()
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", bus_path.display()),
        )
        .start();
    let list = daemon
        .socket_call("events/list")
        .expect("the socket did not answer");
    assert!(list["result"]["events"].is_array(), "{list}");
    // SIGTERM ends it, keychain or not.
    let status = daemon.terminate();
    assert!(status.success(), "{status:?}");
}
