//! Benchmark: from a committed row to its `notifications/events/event` frame at a client, on
//! the real daemon (`tidings serve --demo --simulate off`) over its Unix socket.
//!
//! 1. Idle CPU: the daemon's CPU time over `TIDINGS_BENCH_IDLE_SECS` (default 60; 0 skips)
//!    with no stream, then with 20 idle streams.
//! 2. Commit to frame on the fast path: `TIDINGS_BENCH_ROUNDS` mails (default 200) appended
//!    by this process, against a `tidings/status` round trip on the same connection.
//! 3. Slow flush: a held writer (this binary re-run with `--held-writer`, the way Mail holds
//!    its connection) whose `fsync` is made 0 to 1,000 ms slower by the slow-flush shim,
//!    `TIDINGS_BENCH_SLOW_ROWS` steps per delay (default 8; 0 skips). Each row is timed
//!    against a bare reader in this process polling `PRAGMA data_version`: the moment it sees
//!    the commit is when the row became visible.
//!
//! `cargo bench -p tidings-cli --bench latency` (or `make bench`). Figures are kept in
//! docs/benchmarks.md. `TIDINGS_BENCH_BIN=PATH` measures another build of `tidings`.

// Statistics over timings and counts: float conversions of small integers are exact enough.
#![allow(clippy::too_many_lines, clippy::needless_pass_by_value)]
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use tidings_fixtures::held::{HeldWriter, SlowFlush};
use tidings_fixtures::{Addr, MacHome, MailFixture, NewMail, sqlite_uri};

/// The added flush times of the slow-flush part. The hub's first check after a file event
/// re-stamps every 50 µs for 2 ms, then every 250 µs to 20 ms (`hub/schedule.rs`): 5 and 10 ms
/// land in the slower re-checks, 50 ms and more in the follow schedule after them.
const DELAYS_MS: [u64; 8] = [0, 5, 10, 50, 100, 250, 500, 1000];

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One NDJSON connection to the daemon.
struct Conn {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Conn {
    fn open(socket: &Path) -> Conn {
        let stream = connect(socket);
        Conn {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        }
    }

    fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).expect("write");
    }

    fn read(&mut self, until: impl Fn(&Value) -> bool) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.reader.read_line(&mut line).expect("read") > 0,
                "daemon closed"
            );
            let v: Value = serde_json::from_str(&line).expect("json");
            if until(&v) {
                return v;
            }
        }
    }

    /// Opens a stream with request id `id` and waits for its `active`.
    fn stream(&mut self, id: &str, name: &str, arguments: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "events/stream",
            "params": {"name": name, "arguments": arguments, "_meta": meta()}}),
        );
        self.read(|v| {
            v["method"] == "notifications/events/active"
                && v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
        });
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--held-writer") {
        let home = MacHome::new(&args[i + 1]);
        let stdin = std::io::stdin().lock();
        tidings_fixtures::held::serve(&home, 5, stdin, std::io::stdout()).expect("held writer");
        return;
    }
    let rounds = env_or("TIDINGS_BENCH_ROUNDS", 200);
    let idle_secs = env_or("TIDINGS_BENCH_IDLE_SECS", 60);
    let slow_rows = env_or("TIDINGS_BENCH_SLOW_ROWS", 8);
    let dir = tempfile::tempdir().expect("tempdir");
    // The demo's data dir holds the socket, so it must be private (0700).
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let socket = dir.path().join("tidings.sock");
    // `TIDINGS_BENCH_LIVE_CHECK_MS` overrides the hub's live check, to see what it costs.
    let live_check: Vec<String> = std::env::var("TIDINGS_BENCH_LIVE_CHECK_MS")
        .map(|ms| vec!["--live-check-ms".to_owned(), ms])
        .unwrap_or_default();
    // `TIDINGS_BENCH_BIN` runs another build (the tree before a change), as the figures bench.
    let bin = std::env::var_os("TIDINGS_BENCH_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_tidings").into(),
        std::path::PathBuf::from,
    );
    let mut daemon = Command::new(bin)
        .args(["serve", "--demo", "--simulate", "off", "--data-dir"])
        .arg(dir.path())
        .args(&live_check)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the daemon");
    let mut conn = Conn::open(&socket);
    conn.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "tidings/status", "params": {"_meta": meta()}}),
    );
    conn.read(|v| v["id"] == json!(0));

    if idle_secs > 0 {
        idle(daemon.id(), &socket, idle_secs);
    }
    fast_path(&mut conn, dir.path(), rounds);
    if slow_rows > 0 {
        slow_flush(&socket, dir.path(), slow_rows);
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// Idle CPU with no stream, then with 20 (two connections of 10, the per-connection cap).
fn idle(pid: u32, socket: &Path, secs: usize) {
    // Long enough for the start-up checks and follows to be over.
    let settle = Duration::from_secs(5);
    std::thread::sleep(settle);
    let none = cpu_ms_during(pid, secs);
    let mut conns: Vec<Conn> = (0..2).map(|_| Conn::open(socket)).collect();
    for (c, conn) in conns.iter_mut().enumerate() {
        for n in 0..10 {
            let id = format!("idle-{c}-{n}");
            if n % 2 == 0 {
                conn.stream(&id, "mail.received", json!({"domains": ["example.com"]}));
            } else {
                conn.stream(&id, "messages.received", json!({}));
            }
        }
    }
    std::thread::sleep(settle);
    let live = cpu_ms_during(pid, secs);
    drop(conns);
    let per_minute = |ms: f64| ms * 60.0 / secs as f64;
    println!(
        "idle CPU, no stream: {:.0} ms per minute (over {secs} s)",
        per_minute(none)
    );
    println!(
        "idle CPU, 20 streams: {:.0} ms per minute (over {secs} s)",
        per_minute(live)
    );
}

/// The daemon's user + system CPU time over `secs`, in ms (clock-tick resolution).
fn cpu_ms_during(pid: u32, secs: usize) -> f64 {
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs as u64));
    let ticks = cpu_ticks(pid) - before;
    let hz: f64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0);
    ticks as f64 * 1000.0 / hz
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Mails appended by this process, each timed from its commit returning to its frame, against
/// `tidings/status` round trips on the same connection.
fn fast_path(conn: &mut Conn, home: &Path, rounds: usize) {
    let mut baseline = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let started = Instant::now();
        conn.send(json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tidings/status", "params": {"_meta": meta()}}));
        conn.read(|v| v["id"] == json!(1000 + i));
        baseline.push(started.elapsed());
    }
    conn.stream("fast", "mail.received", json!({"domains": ["example.com"]}));

    let mut mail = MailFixture::open(&MacHome::new(home)).expect("open the demo index");
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
        conn.read(|v| v["method"] == "notifications/events/event");
        latency.push(committed.elapsed());
        // Let the watcher go quiet, so each row is measured on its own, not in a burst.
        std::thread::sleep(Duration::from_millis(5));
    }
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

/// Rows from a held writer with a slowed flush, each timed against a bare `data_version`
/// reader: when the reader saw the commit, and when the daemon's frame came.
fn slow_flush(socket: &Path, home: &Path, rows: usize) {
    let slow = SlowFlush::build(home).expect("build the slow-flush shim (needs cc)");
    let mut command = Command::new(std::env::current_exe().expect("own path"));
    command.arg("--held-writer").arg(home);
    let mut writer = HeldWriter::spawn(command, Some(&slow)).expect("start the held writer");

    let mut conn = Conn::open(socket);
    conn.stream("mail", "mail.received", json!({}));
    conn.stream("messages", "messages.received", json!({}));
    // Frames, timestamped as they are read.
    let (frame_tx, frames) = mpsc::channel::<(String, Instant)>();
    let mut reader = conn.reader;
    std::thread::spawn(move || {
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            let at = Instant::now();
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["method"] == "notifications/events/event"
                && let Some(id) = v["params"]["eventId"].as_str()
                && frame_tx.send((id.to_owned(), at)).is_err()
            {
                return;
            }
            line.clear();
        }
    });
    // The bare reader: `PRAGMA data_version` on each store as fast as it can.
    let mac = MacHome::new(home);
    let (seen_tx, seen) = mpsc::channel::<(usize, Instant)>();
    let stop = Arc::new(AtomicBool::new(false));
    let poller = {
        let stop = Arc::clone(&stop);
        let stores = [mac.envelope_index(), mac.chat_db()];
        std::thread::spawn(move || {
            let conns: Vec<Connection> = stores
                .iter()
                .map(|p| {
                    Connection::open_with_flags(
                        sqlite_uri(p, "mode=ro"),
                        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
                    )
                    .expect("open a bare reader")
                })
                .collect();
            let version = |c: &Connection| -> i64 {
                c.query_row("PRAGMA data_version", [], |r| r.get(0))
                    .unwrap()
            };
            let mut last: Vec<i64> = conns.iter().map(version).collect();
            while !stop.load(Ordering::Relaxed) {
                for (i, c) in conns.iter().enumerate() {
                    let v = version(c);
                    if v != last[i] {
                        last[i] = v;
                        let _ = seen_tx.send((i, Instant::now()));
                    }
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };

    println!("slow flush: {rows} steps per delay, one mail and one message each");
    println!(
        "| added flush | rows | reader: start to visible, mail p50 | daemon: start to frame, mail p50 | daemon behind reader p50 | max |"
    );
    for delay in DELAYS_MS {
        slow.set_delay(Duration::from_millis(delay)).unwrap();
        // Nothing from the previous delay may be taken for this one.
        std::thread::sleep(Duration::from_millis(50));
        while seen.try_recv().is_ok() {}
        while frames.try_recv().is_ok() {}
        let (mut visible, mut framed, mut behind) = (Vec::new(), Vec::new(), Vec::new());
        let mut count = 0;
        for _ in 0..rows {
            let start = Instant::now();
            let step = writer.step().expect("step");
            // The reader's first sight of each store after the start: one commit each.
            let mut at = [None, None];
            while at.iter().any(Option::is_none) {
                let (i, t) = seen
                    .recv_timeout(Duration::from_secs(60))
                    .expect("the bare reader saw the commit");
                at[i].get_or_insert(t);
            }
            let wanted = [
                (
                    inside(&step.mail_from),
                    step.mail_id.clone(),
                    at[0].unwrap(),
                ),
                (
                    inside(&step.message_from),
                    step.message_guid.clone(),
                    at[1].unwrap(),
                ),
            ];
            // Frames of the two stores may come in either order.
            let mut got: HashMap<String, Instant> = HashMap::new();
            for (n, (deliver, id, seen_at)) in wanted.into_iter().enumerate() {
                if !deliver {
                    continue;
                }
                while !got.contains_key(&id) {
                    let (frame, t) = frames
                        .recv_timeout(Duration::from_secs(60))
                        .unwrap_or_else(|_| panic!("no frame for row {n} of {step:?} in 60 s"));
                    got.insert(frame, t);
                }
                let frame_at = got[&id];
                count += 1;
                behind.push(frame_at.saturating_duration_since(seen_at));
                if n == 0 {
                    visible.push(seen_at - start);
                    framed.push(frame_at - start);
                }
            }
        }
        let p50 = |v: &mut Vec<Duration>| {
            if v.is_empty() {
                "-".to_owned()
            } else {
                ms(percentiles(v).0)
            }
        };
        let max = behind.iter().max().copied().map_or("-".to_owned(), ms);
        println!(
            "| +{delay} ms | {count} | {} | {} | {} | {max} |",
            p50(&mut visible),
            p50(&mut framed),
            p50(&mut behind)
        );
    }
    stop.store(true, Ordering::Relaxed);
    let _ = poller.join();
}

/// Whether the demo allowlist lets `sender` through (its domains and phone range).
fn inside(sender: &str) -> bool {
    match sender.rsplit_once('@') {
        Some((_, d)) => ["example.com", "example.org", "example.net"]
            .iter()
            .any(|a| d == *a || d.ends_with(&format!(".{a}"))),
        None => sender.starts_with("+120255501"),
    }
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
