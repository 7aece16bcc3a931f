//! `tidings webhooks` against a demo daemon and without one: allow written normalised (a
//! comment kept) and applied by the daemon, a subscription to a loopback receiver listed by
//! its destination with `tidings status`'s line, remove ending it with `terminated`, and a
//! bad origin refused naming the rule.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::common::{Daemon, Raw, WAIT, tidings_bin};

/// A webhook secret: `whsec_` and 24 bytes in base64.
const SECRET: &str = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3";

/// `tidings webhooks ARGS --demo-dir DIR`.
fn webhooks(dir: &Path, args: &[&str]) -> Output {
    Command::new(tidings_bin())
        .arg("webhooks")
        .args(args)
        .arg("--demo-dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn listed(dir: &Path) -> Value {
    let out = webhooks(dir, &["--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// Poll `tidings webhooks --json` until `pred` holds.
fn wait_listing(dir: &Path, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let l = listed(dir);
        if pred(&l) {
            return l;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {l:#}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A loopback receiver that answers every POST 200, echoing a verification challenge; the
/// bodies it got, in order.
fn receiver() -> (u16, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let _ = conn.set_read_timeout(Some(WAIT));
            let mut reader = BufReader::new(conn);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let answer = match body["challenge"].as_str() {
                Some(c) => json!({"challenge": c}).to_string(),
                None => "{}".to_owned(),
            };
            seen.lock().unwrap().push(body);
            let mut conn = reader.into_inner();
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (port, bodies)
}

#[test]
fn allow_subscribe_list_and_remove_against_a_running_daemon() {
    let daemon = Daemon::start();
    let (port, bodies) = receiver();
    let origin = format!("http://127.0.0.1:{port}");

    let out = webhooks(
        &daemon.dir,
        &["allow", &format!("HTTP://127.0.0.1:{port}/")],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out.stderr).contains(&format!("allowed {origin}")),
        "{out:?}"
    );
    let file = std::fs::read_to_string(daemon.settings_path()).unwrap();
    assert!(file.contains(&format!("allow = [\"{origin}\"]")), "{file}");
    assert!(
        file.starts_with('#'),
        "the file's comments are kept: {file}"
    );

    // The daemon applies a widening edit once the file has been still for a while.
    let l = wait_listing(&daemon.dir, "the daemon to apply the allow", |l| {
        l["destinations"][0]["applied"] == true
    });
    assert_eq!(l["running"], true, "{l:#}");
    assert_eq!(l["destinations"][0]["origin"], json!(origin), "{l:#}");

    let mut raw = Raw::connect(&daemon.socket, "webhooks-test-client");
    let answer = raw.call(
        1,
        "events/subscribe",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
               "delivery": {"mode": "webhook", "url": format!("{origin}/hook/secret-path"),
                            "secret": SECRET}}),
    );
    let id = answer["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("subscribed: {answer}"))
        .to_owned();

    let l = listed(&daemon.dir);
    let sub = &l["subscriptions"][0];
    assert_eq!(sub["id"], json!(id), "{l:#}");
    assert_eq!(sub["destination"], json!(origin), "{l:#}");
    assert_eq!(sub["eventType"], "mail.received", "{l:#}");
    assert_eq!(sub["active"], true, "{l:#}");
    assert_eq!(sub["filter"], json!({"domains": 1}), "{l:#}");
    assert_eq!(l["destinations"][0]["subscriptions"], 1, "{l:#}");
    assert!(!l.to_string().contains("secret-path"), "no URL path: {l}");
    assert!(!l.to_string().contains(SECRET), "no secret: {l}");

    let out = webhooks(&daemon.dir, &[]);
    let people = text(&out.stdout);
    assert!(
        people.contains(&format!("{id}  mail.received to {origin}")),
        "{people}"
    );
    assert!(people.contains("    active; "), "{people}");
    let status = Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    let status = text(&status.stdout);
    assert!(
        status.contains("  webhooks: 1 destination, 1 subscription (`tidings webhooks`"),
        "{status}"
    );

    let out = webhooks(&daemon.dir, &["remove", &origin]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out.stderr).contains(&format!("removed {origin}")),
        "{out:?}"
    );
    let file = std::fs::read_to_string(daemon.settings_path()).unwrap();
    assert!(!file.contains(&format!("\"{origin}\"")), "{file}");
    wait_listing(&daemon.dir, "the subscription to end", |l| {
        l["subscriptions"] == json!([]) && l["destinations"] == json!([])
    });
    let got = bodies.lock().unwrap().clone();
    assert_eq!(
        got.first().map(|b| &b["type"]),
        Some(&json!("verification")),
        "{got:#?}"
    );
    assert!(
        got.iter().any(|b| b["type"] == "terminated"),
        "the receiver is told: {got:#?}"
    );
}

#[test]
fn without_a_daemon_the_files_destinations_are_listed_and_a_bad_origin_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.toml");
    let before =
        "# kept\n[agents]\nnew = \"ask\"\n\n[webhooks]\nallow = [\"https://hooks.example.com\"]\n";
    std::fs::write(&path, before).unwrap();
    let out = webhooks(tmp.path(), &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out.stdout).contains("  https://hooks.example.com\n"),
        "{out:?}"
    );
    assert!(
        text(&out.stderr).contains("Tidings is not running"),
        "{out:?}"
    );
    let l = listed(tmp.path());
    assert_eq!(l["running"], false, "{l}");
    assert_eq!(l["destinations"][0]["applied"], Value::Null, "{l}");

    let out = webhooks(tmp.path(), &["allow", "http://hooks.example.net"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = text(&out.stderr);
    assert!(
        said.contains("only for this machine") && said.contains("https://hooks.example.net"),
        "{said}"
    );
    let out = webhooks(tmp.path(), &["remove", "https://other.example"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        text(&out.stderr).contains("`tidings webhooks` lists"),
        "{out:?}"
    );
    let file = std::fs::read_to_string(&path).unwrap();
    assert_eq!(file, before, "a refused change writes nothing");

    let out = webhooks(tmp.path(), &["remove", "https://HOOKS.example.com:443"]);
    assert!(out.status.success(), "{out:?}");
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(
        file.starts_with("# kept\n[agents]\nnew = \"ask\"\n"),
        "{file}"
    );
    assert!(!file.contains("hooks.example.com"), "{file}");
}
