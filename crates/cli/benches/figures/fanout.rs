//! Fan-out: N streams on one store (10 per connection, the per-connection cap), one matching
//! row per commit; time to every stream's frame and to the last one, daemon CPU per commit,
//! threads after. Streams past the process cap are refused today and counted: the same run
//! shows the gain once the cap is raised.
//!
//! The socket floor, beside each size: one thread in this process writes the same number of
//! frames of the same size straight to as many socket pairs (10 frames joined per write, as
//! the daemon joins a connection's frames), read by the same reader threads. It is what the
//! frames and the wake-ups of their readers cost on this machine with no Tidings at all.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::json;
use tidings_server::limits::ServerLimits;

use crate::daemon::Daemon;
use crate::procfs;
use crate::report::{Section, Sum};
use crate::stats::{Dist, dist, env_or, ms, ms_f, ratio, ratio_d};
use crate::wire::{Frame, Opened, Reading};
use crate::writer::{Store, Writer};

struct Size {
    asked: usize,
    opened: usize,
    refused: usize,
    cap: Option<u64>,
    last: Dist,
    every: Dist,
    missed: usize,
    cpu_per_commit: f64,
    threads: u64,
    rss: f64,
    floor: Floor,
}

/// The socket floor for one size: to the last frame, and the writing thread's CPU per commit.
struct Floor {
    last: Dist,
    cpu_per_commit: f64,
}

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    let sizes: Vec<usize> = std::env::var("TIDINGS_BENCH_FANOUT").ok().map_or_else(
        || vec![1, 10, 100, 1000],
        |v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
    );
    // 60, not 20: the daemon's CPU is read in 10 ms ticks, so 20 commits measured it in steps
    // of 0.5 ms a commit, and their p99 was the slowest commit or two.
    let commits = env_or("TIDINGS_BENCH_FANOUT_COMMITS", 60);
    let limits = ServerLimits::default();
    let mut section = Section::new(
        "fanout",
        "Fan-out: one matching row to N streams",
        vec![
            "streams asked",
            "open",
            "refused (cap)",
            "to last frame p50 / p99",
            "every frame p50 / p99",
            "p99 / 1 stream",
            "daemon CPU per commit",
            "threads after",
            "RSS after",
            "socket floor: to last frame p50 / p99; CPU per commit",
        ],
    );
    section.notes.push(format!(
        "{commits} commits per size, each one mail that every stream matches; streams on \
         `mail.received` with `{{\"domains\": [\"example.com\"]}}`, {} per socket connection. \
         Caps read from `ServerLimits::default()`: {} streams per connection, {} per process, \
         {} socket connections.",
        limits.streams_per_connection,
        limits.streams_per_connection,
        limits.streams_total,
        limits.max_socket_connections
    ));
    let mut results: Vec<Size> = Vec::new();
    for &n in &sizes {
        let daemon = Daemon::fresh(&ctx.log(&format!("fanout-{n}")))?;
        let r = one_size(&daemon, n, commits, &limits)?;
        drop(daemon);
        println!(
            "  {n} streams: {} open, {} refused; last frame p50 {} p99 {}",
            r.opened,
            r.refused,
            ms(r.last.p50),
            ms(r.last.p99)
        );
        results.push(r);
    }
    let base = results.iter().find(|r| r.opened == 1).map(|r| r.last);
    for r in &results {
        section.rows.push(vec![
            r.asked.to_string(),
            r.opened.to_string(),
            if r.refused == 0 {
                "0".to_owned()
            } else {
                format!(
                    "{} (max {})",
                    r.refused,
                    r.cap.map_or("?".to_owned(), |c| c.to_string())
                )
            },
            format!("{} / {}", ms(r.last.p50), ms(r.last.p99)),
            format!("{} / {}", ms(r.every.p50), ms(r.every.p99)),
            base.map_or("-".to_owned(), |b| ratio_d(r.last.p99, b.p99)),
            ms_f(r.cpu_per_commit),
            r.threads.to_string(),
            format!("{:.1} MiB", r.rss),
            format!(
                "{} / {}; {}",
                ms(r.floor.last.p50),
                ms(r.floor.last.p99),
                ms_f(r.floor.cpu_per_commit)
            ),
        ]);
        if r.missed > 0 {
            section.notes.push(format!(
                "{} streams: {} frames never came (within 60 s).",
                r.asked, r.missed
            ));
        }
        section.summary.push(Sum::new(
            format!(
                "fan-out {} ({} open, {} refused): p99 to last frame",
                streams(r.asked),
                r.opened,
                r.refused
            ),
            ms(r.last.p99),
            base.map_or("-".to_owned(), |b| format!("1 stream: {}", ms(b.p99))),
            base.map_or("-".to_owned(), |b| ratio_d(r.last.p99, b.p99)),
            if r.asked >= 1000 {
                "under 20 ms at 1,000"
            } else {
                ""
            },
        ));
        let base_cpu = results
            .iter()
            .find(|r| r.opened == 1)
            .map(|r| r.cpu_per_commit);
        section.summary.push(Sum::new(
            format!(
                "fan-out {}: daemon CPU per commit; threads after",
                streams(r.asked)
            ),
            format!("{}; {} threads", ms_f(r.cpu_per_commit), r.threads),
            base_cpu.map_or("-".to_owned(), |b| format!("1 stream: {}", ms_f(b))),
            base_cpu.map_or("-".to_owned(), |b| ratio(r.cpu_per_commit, b)),
            if r.asked >= 1000 {
                "under 10 ms at 1,000"
            } else {
                ""
            },
        ));
        if r.asked >= 1000 {
            section.summary.push(Sum::new(
                format!(
                    "fan-out {}: p99 to last frame against the socket floor",
                    streams(r.asked)
                ),
                ms(r.last.p99),
                format!("floor: {}", ms(r.floor.last.p99)),
                ratio_d(r.last.p99, r.floor.last.p99),
                "",
            ));
            section.summary.push(Sum::new(
                format!(
                    "fan-out {}: CPU per commit against the socket floor",
                    streams(r.asked)
                ),
                ms_f(r.cpu_per_commit),
                format!("floor: {}", ms_f(r.floor.cpu_per_commit)),
                ratio(r.cpu_per_commit, r.floor.cpu_per_commit),
                "",
            ));
        }
    }
    Ok(section)
}

fn one_size(daemon: &Daemon, n: usize, commits: u64, limits: &ServerLimits) -> Result<Size> {
    let per = limits.streams_per_connection.max(1);
    let (tx, frames) = mpsc::channel::<Frame>();
    let mut readers: Vec<Reading> = Vec::new();
    let (mut opened, mut refused, mut cap) = (0, 0, None);
    let mut asked = 0;
    while asked < n {
        let batch: Vec<(String, &str, serde_json::Value)> = (asked..n.min(asked + per))
            .map(|i| {
                (
                    format!("f{i}"),
                    "mail.received",
                    json!({"domains": ["example.com"]}),
                )
            })
            .collect();
        asked += batch.len();
        // A connection past the socket cap is closed by the daemon: its streams are refused.
        let outcome = daemon
            .connect()
            .and_then(|mut c| c.open_streams(&batch).map(|o| (c, o)));
        let Ok((conn, outcome)) = outcome else {
            refused += batch.len();
            continue;
        };
        let mut any = false;
        for o in outcome {
            match o {
                Opened::Active => {
                    opened += 1;
                    any = true;
                }
                Opened::Refused { max, .. } => {
                    refused += 1;
                    cap = cap.or(max);
                }
            }
        }
        if any {
            readers.push(conn.into_frames(tx.clone())?);
        }
    }
    if opened == 0 {
        bail!("no stream of {n} was opened");
    }
    let mut writer = Writer::open(&daemon.home, Store::Mail)?;
    // Let the start-up follows of the open settle.
    std::thread::sleep(Duration::from_millis(500));
    while frames.try_recv().is_ok() {}
    let cpu_before = procfs::cpu_ms(daemon.pid)?;
    let (mut last, mut every) = (Vec::new(), Vec::new());
    let mut missed = 0;
    for k in 0..commits {
        let key = format!("bench.fan.{n}.{k}");
        let id = writer.event_id(&key);
        writer.append(&key)?;
        let committed = Instant::now();
        let deadline = committed + crate::wire::WAIT;
        let mut got = 0;
        let mut latest = committed;
        while got < opened {
            let Ok(f) = frames.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            else {
                missed += opened - got;
                break;
            };
            if f.event_id == id {
                got += 1;
                every.push(f.at.saturating_duration_since(committed));
                latest = latest.max(f.at);
            }
        }
        last.push(latest.saturating_duration_since(committed));
        std::thread::sleep(Duration::from_millis(50));
    }
    let cpu = procfs::cpu_ms(daemon.pid)? - cpu_before;
    let threads = procfs::threads(daemon.pid)?;
    let rss = procfs::rss_mib(daemon.pid)?;
    drop(readers);
    let floor = socket_floor(opened, per, commits)?;
    Ok(Size {
        asked: n,
        opened,
        refused,
        cap,
        last: dist(&mut last).expect("one commit at least"),
        every: dist(&mut every).unwrap_or(Dist {
            p50: Duration::ZERO,
            p99: Duration::ZERO,
            max: Duration::ZERO,
        }),
        missed,
        cpu_per_commit: cpu / commits as f64,
        threads,
        rss,
        floor,
    })
}

/// One event frame as the daemon writes it for stream `sub` (the same fields and about the
/// same size).
fn frame(sub: &str, id: &str, rowid: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/events/event\",\"params\":{{\"_meta\":\
         {{\"io.modelcontextprotocol/subscriptionId\":\"{sub}\"}},\"eventId\":\"{id}\",\
         \"name\":\"mail.received\",\"timestamp\":\"2026-12-01T04:00:00Z\",\"data\":{{\
         \"messageId\":\"{id}\",\"from\":{{\"address\":\"bench@example.com\",\"name\":\"Bench\"}},\
         \"to\":[],\"cc\":[],\"subject\":\"bench\",\"mailbox\":\"INBOX\",\"account\":\
         \"bench@example.com\",\"dateReceived\":\"2026-12-01T04:00:00Z\",\"dateSent\":null,\
         \"read\":false,\"flagged\":false,\"attachmentCount\":0}},\"cursor\":\
         \"v2.0123456789abcdef0123456789abcdef.{rowid}\"}}}}\n"
    )
}

/// The socket floor for `streams` streams, `per` to a socket pair: one thread writes each
/// commit's frames, each socket's joined into one write; CPU from the thread's own
/// `/proc/thread-self/schedstat` (ns on CPU).
fn socket_floor(streams: usize, per: usize, commits: u64) -> Result<Floor> {
    let (tx, frames) = mpsc::channel::<Frame>();
    let mut readers = Vec::new();
    let mut servers = Vec::new();
    for first in (0..streams).step_by(per) {
        let (server, client) = std::os::unix::net::UnixStream::pair()?;
        readers.push(crate::wire::Conn::from_stream(client)?.into_frames(tx.clone())?);
        servers.push((
            server,
            (first..streams.min(first + per)).collect::<Vec<_>>(),
        ));
    }
    drop(tx);
    let (go, orders) = mpsc::channel::<(u64, String)>();
    let writer = std::thread::spawn(move || -> Result<f64> {
        let mut on_cpu = 0u64;
        for (rowid, id) in orders {
            let before = run_ns()?;
            for (socket, subs) in &mut servers {
                let joined: String = subs
                    .iter()
                    .map(|i| frame(&format!("f{i}"), &id, rowid))
                    .collect();
                std::io::Write::write_all(socket, joined.as_bytes())?;
            }
            on_cpu += run_ns()? - before;
        }
        Ok(on_cpu as f64 / 1e6)
    });
    let mut last = Vec::new();
    for k in 0..commits {
        let id = format!("<bench.floor.{k}@example.com>");
        let sent = Instant::now();
        go.send((k, id.clone()))?;
        let mut got = 0;
        let mut latest = sent;
        while got < streams {
            let f = frames.recv_timeout(crate::wire::WAIT)?;
            if f.event_id == id {
                got += 1;
                latest = latest.max(f.at);
            }
        }
        last.push(latest.saturating_duration_since(sent));
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(go);
    let cpu = writer
        .join()
        .map_err(|_| anyhow::anyhow!("the floor's writer panicked"))??;
    drop(readers);
    Ok(Floor {
        last: dist(&mut last).expect("one commit at least"),
        cpu_per_commit: cpu / commits as f64,
    })
}

/// This thread's time on CPU so far (ns), from `/proc/thread-self/schedstat`.
fn run_ns() -> Result<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")?;
    Ok(stat.split_whitespace().next().unwrap_or("0").parse()?)
}

/// "1 stream", "10 streams".
fn streams(n: usize) -> String {
    if n == 1 {
        "1 stream".to_owned()
    } else {
        format!("{} streams", crate::stats::count(n as u64))
    }
}
