//! Benchmark: the hub's reaction time and its cost, on the real daemon (`tidings serve --demo
//! --simulate off`) over its Unix socket.
//!
//! 1. Commit load: this process commits `TIDINGS_BENCH_LOAD_RATE` mails a second (default
//!    1,000) for `TIDINGS_BENCH_LOAD_SECS` (default 10; 0 skips) with no stream open; the
//!    daemon's CPU (`/proc/<pid>/stat` utime + stime) over the load, against its CPU over as
//!    long with no commits (the baseline from the same run).
//! 2. One stream: `TIDINGS_BENCH_ROUNDS` mails (default 100) at each spacing (5, 30 and 50 ms
//!    apart), each timed from the start of its commit to its frame, against a bare reader in
//!    this process polling `PRAGMA data_version` every 0.1 ms (the floor: when the commit
//!    became visible).
//!
//! `cargo bench -p tidings-cli --bench hub`; `TIDINGS_BENCH_BIN` runs another build of
//! `tidings` (the tree before a change) under the same load. Figures are kept in docs/benchmarks.md.

// Statistics over timings and counts: float conversions of small integers are exact enough.
#![allow(clippy::too_many_lines)]
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap
)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use tidings_fixtures::{Addr, MacHome, MailFixture, NewMail, sqlite_uri};

/// Spacings between the commits of the one-stream part, in ms.
const SPACINGS_MS: [u64; 3] = [5, 30, 50];

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let load_secs = env_or("TIDINGS_BENCH_LOAD_SECS", 10);
    let load_rate = env_or("TIDINGS_BENCH_LOAD_RATE", 1000).max(1);
    let rounds = env_or("TIDINGS_BENCH_ROUNDS", 100);
    let dir = tempfile::tempdir().expect("tempdir");
    // The demo's data dir holds the socket, so it must be private (0700).
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let socket = dir.path().join("tidings.sock");
    // `TIDINGS_BENCH_BIN` measures another build (the tree before a change) with this bench.
    let bin = std::env::var_os("TIDINGS_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_tidings").into());
    let mut daemon = Command::new(bin)
        .args(["serve", "--demo", "--simulate", "off", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the daemon");
    let stream = connect(&socket);
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    send(
        &mut writer,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "tidings/status", "params": {"_meta": meta()}}),
    );
    read(&mut reader, |v| v["id"] == json!(0));
    let home = MacHome::new(dir.path());
    let mut mail = MailFixture::open(&home).expect("open the demo index");
    // The load is about the daemon's cost, not the disk's: no sync per commit.
    mail.connection()
        .execute_batch("PRAGMA synchronous = NORMAL")
        .expect("pragma");
    let inbox: i64 = mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let mut n = 0usize;
    let mut next_mail = |mail: &mut MailFixture| {
        n += 1;
        let m = NewMail::new(
            Addr::bare("bench@example.com"),
            &format!("bench {n}"),
            inbox,
            Some(1_893_456_000),
        );
        mail.append(&m).expect("append");
    };

    if load_secs > 0 {
        // Long enough for the start-up checks and follows to be over.
        std::thread::sleep(Duration::from_secs(4));
        let pid = daemon.id();
        let quiet = cpu_ms_during(pid, || {
            std::thread::sleep(Duration::from_secs(load_secs as u64));
        });
        let gap = Duration::from_secs(1) / load_rate as u32;
        let mut commits = 0usize;
        let own_before = cpu_ticks_self();
        let busy = cpu_ms_during(pid, || {
            let started = Instant::now();
            let end = started + Duration::from_secs(load_secs as u64);
            let mut due = started;
            while Instant::now() < end {
                next_mail(&mut mail);
                commits += 1;
                due += gap;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
        });
        let own = ticks_to_ms(cpu_ticks_self() - own_before);
        let secs = load_secs as f64;
        println!(
            "commit load: {commits} commits in {load_secs} s ({:.0}/s), no stream",
            commits as f64 / secs
        );
        println!(
            "daemon CPU, no commits: {:.0} ms over {load_secs} s ({:.2}% of a core)",
            quiet,
            quiet / secs / 10.0
        );
        println!(
            "daemon CPU under load: {:.0} ms over {load_secs} s ({:.2}% of a core, {:.1} us per commit)",
            busy,
            busy / secs / 10.0,
            busy * 1000.0 / commits as f64
        );
        println!(
            "baseline: the writer's own CPU {:.0} ms ({:.1} us per commit); ratio daemon/writer {:.2}",
            own,
            own * 1000.0 / commits as f64,
            busy / own
        );
        // Let the follow schedule end before the latency part.
        std::thread::sleep(Duration::from_secs(4));
    }

    if rounds == 0 {
        let _ = daemon.kill();
        let _ = daemon.wait();
        return;
    }
    send(
        &mut writer,
        &json!({"jsonrpc": "2.0", "id": "one", "method": "events/stream",
            "params": {"name": "mail.received", "arguments": {"domains": ["example.com"]}, "_meta": meta()}}),
    );
    read(&mut reader, |v| {
        v["method"] == "notifications/events/active"
    });
    // The floor: a bare reader polling `PRAGMA data_version` every 0.1 ms.
    let (seen_tx, seen) = mpsc::channel::<Instant>();
    let stop = Arc::new(AtomicBool::new(false));
    let poller = {
        let stop = Arc::clone(&stop);
        let path = home.envelope_index();
        std::thread::spawn(move || {
            let conn = Connection::open_with_flags(
                sqlite_uri(&path, "mode=ro"),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
            )
            .expect("open a bare reader");
            let version = |c: &Connection| -> i64 {
                c.query_row("PRAGMA data_version", [], |r| r.get(0))
                    .unwrap()
            };
            let mut last = version(&conn);
            while !stop.load(Ordering::Relaxed) {
                let v = version(&conn);
                if v != last {
                    last = v;
                    let _ = seen_tx.send(Instant::now());
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };
    println!("one stream, {rounds} mails per spacing, each from the start of its commit");
    println!("| spacing | floor p50 | frame p50 | frame p99 | behind floor p50 | behind p99 |");
    for spacing in SPACINGS_MS {
        std::thread::sleep(Duration::from_millis(200));
        while seen.try_recv().is_ok() {}
        let (mut floor, mut frame, mut behind) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let started = Instant::now();
            next_mail(&mut mail);
            read(&mut reader, |v| v["method"] == "notifications/events/event");
            let framed = started.elapsed();
            let visible = seen
                .recv_timeout(Duration::from_secs(5))
                .expect("the bare reader sees the commit")
                .duration_since(started);
            floor.push(visible);
            frame.push(framed);
            behind.push(framed.saturating_sub(visible));
            std::thread::sleep(Duration::from_millis(spacing));
        }
        let (f50, _) = percentiles(&mut floor);
        let (l50, l99) = percentiles(&mut frame);
        let (b50, b99) = percentiles(&mut behind);
        println!(
            "| {spacing} ms | {} | {} | {} | {} | {} |",
            ms(f50),
            ms(l50),
            ms(l99),
            ms(b50),
            ms(b99)
        );
    }
    stop.store(true, Ordering::Relaxed);
    let _ = poller.join();
    let _ = daemon.kill();
    let _ = daemon.wait();
}

fn send(w: &mut UnixStream, v: &Value) {
    let mut line = serde_json::to_vec(v).unwrap();
    line.push(b'\n');
    w.write_all(&line).expect("write");
}

fn read(r: &mut BufReader<UnixStream>, until: impl Fn(&Value) -> bool) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(r.read_line(&mut line).expect("read") > 0, "daemon closed");
        let v: Value = serde_json::from_str(&line).expect("json");
        if until(&v) {
            return v;
        }
    }
}

/// The daemon's user + system CPU time while `during` runs, in ms (clock-tick resolution).
fn cpu_ms_during(pid: u32, during: impl FnOnce()) -> f64 {
    let before = cpu_ticks(&format!("/proc/{pid}/stat"));
    during();
    ticks_to_ms(cpu_ticks(&format!("/proc/{pid}/stat")) - before)
}

fn cpu_ticks_self() -> u64 {
    cpu_ticks("/proc/self/stat")
}

fn ticks_to_ms(ticks: u64) -> f64 {
    let hz: f64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0);
    ticks as f64 * 1000.0 / hz
}

fn cpu_ticks(stat: &str) -> u64 {
    let stat = std::fs::read_to_string(stat).expect("read /proc stat");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
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
