//! Benchmark: from a committed row to its `notifications/events/event` frame at a client, on
//! the real daemon (`tidings serve --demo --simulate off`) over its Unix socket, against a
//! baseline measured in the same run: a `tidings/status` round trip on the same connection
//! (what the transport alone costs).
//!
//! `cargo bench -p tidings-server --bench latency` (or `make bench`). `TIDINGS_BENCH_ROUNDS`
//! sets the number of rows (default 200). Figures are kept in docs/benchmarks.md.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tidings_fixtures::{Addr, MacHome, MailFixture, NewMail};

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn main() {
    let rounds: usize = std::env::var("TIDINGS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("tempdir");
    // The demo's data dir holds the socket, so it must be private (0700).
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let socket = dir.path().join("tidings.sock");
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_tidings"))
        .args(["serve", "--demo", "--simulate", "off", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the daemon");
    let stream = connect(&socket);
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    let mut send = |v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        writer.write_all(&line).expect("write");
    };
    let mut read = |until: &dyn Fn(&Value) -> bool| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                reader.read_line(&mut line).expect("read") > 0,
                "daemon closed"
            );
            let v: Value = serde_json::from_str(&line).expect("json");
            if until(&v) {
                return v;
            }
        }
    };

    // Baseline: request/response round trips on the same connection.
    let mut baseline = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let started = Instant::now();
        send(
            json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tidings/status", "params": {"_meta": meta()}}),
        );
        read(&|v| v["id"] == json!(1000 + i));
        baseline.push(started.elapsed());
    }

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "events/stream",
        "params": {"name": "mail.received", "arguments": {"domains": ["example.com"]}, "_meta": meta()}}));
    read(&|v| v["method"] == "notifications/events/active");

    let home = MacHome::new(dir.path());
    let mut mail = MailFixture::open(&home).expect("open the demo index");
    let inbox: i64 = mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let mut latency = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let m = NewMail::new(
            Addr::bare("bench@example.com"),
            &format!("bench {i}"),
            inbox,
            Some(1_893_456_000),
        );
        mail.append(&m).expect("append");
        let committed = Instant::now();
        read(&|v| v["method"] == "notifications/events/event");
        latency.push(committed.elapsed());
        // Let the watcher go quiet, so each row is measured on its own, not in a burst.
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();

    let (b50, _) = percentiles(&mut baseline);
    let (l50, l99) = percentiles(&mut latency);
    println!("baseline: tidings/status round trip p50 {}", ms(b50));
    println!(
        "commit to event frame: p50 {} p99 {} over {rounds} rows",
        ms(l50),
        ms(l99)
    );
    println!(
        "ratio p50/baseline: {:.1}",
        l50.as_secs_f64() / b50.as_secs_f64()
    );
    println!(
        "ratio p99/baseline: {:.1}",
        l99.as_secs_f64() / b50.as_secs_f64()
    );
}

fn connect(socket: &Path) -> UnixStream {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match UnixStream::connect(socket) {
            Ok(s) => return s,
            Err(e) if Instant::now() > deadline => panic!("daemon did not start: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn percentiles(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
