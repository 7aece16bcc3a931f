//! Fan-out: N streams on one store (10 per connection, the per-connection cap), one matching
//! row per commit; time to every stream's frame and to the last one, daemon CPU per commit,
//! threads after. Streams past the process cap are refused today and counted: the same run
//! shows the gain once the cap is raised.

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
}

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    let sizes: Vec<usize> = std::env::var("TIDINGS_BENCH_FANOUT").ok().map_or_else(
        || vec![1, 10, 100, 1000],
        |v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
    );
    let commits = env_or("TIDINGS_BENCH_FANOUT_COMMITS", 20);
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
    })
}

/// "1 stream", "10 streams".
fn streams(n: usize) -> String {
    if n == 1 {
        "1 stream".to_owned()
    } else {
        format!("{} streams", crate::stats::count(n as u64))
    }
}
