//! Benchmark: fan-out. N streams (10 per connection) on the real daemon (`tidings serve --demo
//! --simulate off`), one matching row per commit: the time from the commit to the last
//! stream's frame (p50, p99 over `TIDINGS_BENCH_FANOUT_ROUNDS` commits, default 30), the
//! daemon's CPU per commit (from /proc, clock-tick resolution), its threads and resident size
//! after the rounds. Each N runs twice in the same run: with shared reads, and with
//! `--no-shared-reads` (every stream reads on its own, as before), the baseline.
//!
//! `TIDINGS_BENCH_FANOUT` lists the Ns (default `1,10,100,1000`).
//! `cargo bench -p tidings-cli --bench fanout`.

#![allow(
    clippy::too_many_lines,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tidings_fixtures::{Addr, MacHome, MailFixture, NewMail};

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn main() {
    let rounds: usize = std::env::var("TIDINGS_BENCH_FANOUT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let ns: Vec<usize> = std::env::var("TIDINGS_BENCH_FANOUT")
        .unwrap_or_else(|_| "1,10,100,1000".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    println!("fan-out, one matching row per commit, {rounds} commits each");
    println!(
        "| streams | mode | p50 to last frame | p99 to last frame | CPU per commit | threads | RSS |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &n in &ns {
        for shared in [true, false] {
            run(n, shared, rounds);
        }
    }
}

fn run(n: usize, shared: bool, rounds: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let socket = dir.path().join("tidings.sock");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tidings"));
    cmd.args(["serve", "--demo", "--simulate", "off", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if !shared {
        cmd.arg("--no-shared-reads");
    }
    let mut daemon: Child = cmd.spawn().expect("start the daemon");
    let pid = daemon.id();
    // One reader thread per connection reports (round, time) when each stream's frame lands.
    let (tx, rx) = mpsc::channel::<(usize, Instant)>();
    let conns = n.div_ceil(10);
    let mut writers = Vec::new();
    for c in 0..conns {
        let mut stream = connect(&socket);
        let per = (n - c * 10).min(10);
        for s in 0..per {
            let request = json!({"jsonrpc": "2.0", "id": format!("s{c}-{s}"), "method": "events/stream",
                "params": {"name": "mail.received", "arguments": {"domains": ["example.com"]}, "_meta": meta()}});
            writeln!(stream, "{request}").expect("write");
        }
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut actives = 0;
            for line in reader.lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                match v["method"].as_str() {
                    Some("notifications/events/active") => {
                        actives += 1;
                        if actives == per {
                            let _ = tx.send((usize::MAX, Instant::now()));
                        }
                    }
                    Some("notifications/events/event") => {
                        let subject = v["params"]["data"]["subject"].as_str().unwrap_or("");
                        if let Some(round) =
                            subject.strip_prefix("fanout ").and_then(|r| r.parse().ok())
                        {
                            let _ = tx.send((round, Instant::now()));
                        }
                    }
                    _ => {}
                }
            }
        });
        writers.push(stream);
    }
    for _ in 0..conns {
        rx.recv_timeout(Duration::from_secs(120))
            .expect("every stream opened");
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut mail = MailFixture::open(&MacHome::new(dir.path())).expect("open the demo index");
    let inbox: i64 = mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let mut last = Vec::with_capacity(rounds);
    let cpu_before = cpu_ticks(pid);
    for round in 0..rounds {
        let m = NewMail::new(
            Addr::bare("bench@example.com"),
            &format!("fanout {round}"),
            inbox,
            Some(1_893_456_000),
        );
        mail.append(&m).expect("append");
        let committed = Instant::now();
        let mut got = 0;
        let mut at = committed;
        while got < n {
            let (r, t) = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("every frame");
            if r == round {
                got += 1;
                at = at.max(t);
            }
        }
        last.push(at.saturating_duration_since(committed));
        // Let the hub's follow-up checks finish, so each commit is measured on its own.
        std::thread::sleep(Duration::from_millis(200));
    }
    let ticks = cpu_ticks(pid) - cpu_before;
    let hz = clock_ticks();
    // The 200 ms pauses cost the daemon a few re-checks each; they are counted too.
    let cpu_ms = ticks as f64 * 1000.0 / hz / rounds as f64;
    let (threads, rss_kb) = status(pid);
    last.sort();
    let pct = |p: f64| last[((last.len() - 1) as f64 * p).round() as usize];
    println!(
        "| {n} | {} | {:.1} ms | {:.1} ms | {cpu_ms:.1} ms | {threads} | {:.0} MB |",
        if shared {
            "shared reads"
        } else {
            "own reads (before)"
        },
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        rss_kb as f64 / 1024.0,
    );
    drop(writers);
    let _ = daemon.kill();
    let _ = daemon.wait();
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

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Threads and resident KB from /proc/<pid>/status.
fn status(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:"))
}
