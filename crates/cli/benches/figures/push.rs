//! Push latency per store: each row timed from its commit returning to its event frame,
//! beside the floor (a bare reader polling `PRAGMA data_version` every 0.1 ms: the moment the
//! commit can be seen at all) and a 1 s poller (a reader that checks `max(ROWID)` once a
//! second: what a polling design gets). The floor reader's own 0.1 ms sleeps, timed, show how
//! late this machine wakes a sleeping thread in the same run: a frame's path hands over
//! between sleeping threads several times (the file watcher, the hub, a runtime worker, the
//! client's reader), and on a virtual machine whose host is busy each wake-up can be
//! milliseconds late, which no code in the daemon can take back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::daemon::Daemon;
use crate::report::{Section, Sum};
use crate::stats::{dist, env_or, ms, ratio_d};
use crate::wire::{Frame, Opened};
use crate::writer::{Store, Writer};

/// The floor reader's pause between two looks at `PRAGMA data_version`.
const FLOOR_PAUSE: Duration = Duration::from_micros(100);

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    // 300 rows: the p99 is then the fourth slowest, not the second.
    let rounds = env_or("TIDINGS_BENCH_PUSH_ROWS", 300);
    let gap = Duration::from_millis(env_or("TIDINGS_BENCH_PUSH_GAP_MS", 50));
    let mut section = Section::new(
        "push",
        "Push latency per store, against the floor and a 1 s poller",
        vec![
            "store",
            "rows",
            "floor p50 / p99",
            "daemon p50 / p99",
            "behind floor p50 / p99",
            "daemon p50 / floor p50",
            "1 s poller p50 / p99",
            "poller p50 / daemon p50",
            "a 0.1 ms sleep: late by p50 / p99",
        ],
    );
    section.notes.push(format!(
        "Rows {} ms apart, each timed from its commit returning; one stream per store on one \
         socket connection. The last column is how much longer than asked the floor \
         reader's 0.1 ms sleeps took in the same run: this machine's wake-up of a sleeping \
         thread, which each frame goes through several times.",
        gap.as_millis()
    ));
    for store in [Store::Mail, Store::Messages] {
        let mut daemon = Daemon::fresh(&ctx.log(&format!("push-{}", store.label())))?;
        let mut timings = one_store(&mut daemon, store, rounds, gap)?;
        let rows = timings.framed.len();
        let (Some(f), Some(d), Some(b), Some(p), Some(wake)) = (
            dist(&mut timings.floor),
            dist(&mut timings.framed),
            dist(&mut timings.behind),
            dist(&mut timings.poller),
            dist(&mut timings.wake_late),
        ) else {
            bail!("no row of {} was measured", store.label());
        };
        section.rows.push(vec![
            store.label().to_owned(),
            rows.to_string(),
            format!("{} / {}", ms(f.p50), ms(f.p99)),
            format!("{} / {}", ms(d.p50), ms(d.p99)),
            format!("{} / {}", ms(b.p50), ms(b.p99)),
            ratio_d(d.p50, f.p50),
            format!("{} / {}", ms(p.p50), ms(p.p99)),
            ratio_d(p.p50, d.p50),
            format!("{} / {}", ms(wake.p50), ms(wake.p99)),
        ]);
        let label = store.label();
        section.summary.push(Sum::new(
            format!(
                "{label}: commit to frame, p50 (behind the floor: {})",
                ms(b.p50)
            ),
            ms(d.p50),
            format!("floor: {}", ms(f.p50)),
            ratio_d(d.p50, f.p50),
            "within 0.5 ms of the floor",
        ));
        section.summary.push(Sum::new(
            format!("{label}: commit to frame, p99"),
            ms(d.p99),
            format!("floor: {}", ms(f.p99)),
            ratio_d(d.p99, f.p99),
            "under 3 ms",
        ));
        section.summary.push(Sum::new(
            format!("{label}: a sleeping thread's wake-up, late by (p99; baseline: daemon p99)"),
            ms(wake.p99),
            format!("daemon: {}", ms(d.p99)),
            ratio_d(wake.p99, d.p99),
            "",
        ));
        section.summary.push(Sum::new(
            format!("{label}: 1 s poller p50 (baseline: daemon p50)"),
            ms(p.p50),
            format!("daemon: {}", ms(d.p50)),
            ratio_d(p.p50, d.p50),
            "",
        ));
    }
    Ok(section)
}

/// One store's timings: per row, from its commit returning.
struct Timings {
    /// To the floor reader's sighting.
    floor: Vec<Duration>,
    /// To its event frame.
    framed: Vec<Duration>,
    /// From the floor's sighting to the frame.
    behind: Vec<Duration>,
    /// To the 1 s poller's sighting.
    poller: Vec<Duration>,
    /// Not per row: how much longer than asked each of the floor reader's sleeps took.
    wake_late: Vec<Duration>,
}

fn one_store(daemon: &mut Daemon, store: Store, rounds: u64, gap: Duration) -> Result<Timings> {
    let mut conn = daemon.connect()?;
    let args = if store == Store::Mail {
        json!({"domains": ["example.com"]})
    } else {
        json!({})
    };
    match conn
        .open_streams(&[("push".to_owned(), store.event_type(), args)])?
        .pop()
    {
        Some(Opened::Active) => {}
        other => bail!("the stream was not opened: {other:?}"),
    }
    let (frame_tx, frames) = mpsc::channel::<Frame>();
    let _reading = conn.into_frames(frame_tx)?;
    let mut writer = Writer::open(&daemon.home, store)?;
    let stop = Arc::new(AtomicBool::new(false));

    // The floor: `PRAGMA data_version` every 0.1 ms; each change, timestamped. It returns how
    // late each of its sleeps woke.
    let (seen_tx, seen) = mpsc::channel::<Instant>();
    let floor = {
        let reader = store.reader(&daemon.home)?;
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || -> Result<Vec<Duration>> {
            let version = |c: &rusqlite::Connection| -> rusqlite::Result<i64> {
                c.query_row("PRAGMA data_version", [], |r| r.get(0))
            };
            let mut last = version(&reader)?;
            let mut late = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let v = version(&reader)?;
                if v != last {
                    last = v;
                    let _ = seen_tx.send(Instant::now());
                }
                let asleep = Instant::now();
                std::thread::sleep(FLOOR_PAUSE);
                late.push(asleep.elapsed().saturating_sub(FLOOR_PAUSE));
            }
            Ok(late)
        })
    };
    // The 1 s poller: `max(ROWID)` once a second; what it saw, and when.
    let (poll_tx, polls) = mpsc::channel::<(i64, Instant)>();
    let poller = {
        let reader = store.reader(&daemon.home)?;
        let sql = format!("SELECT coalesce(max(ROWID), 0) FROM {}", store.table());
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || -> Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let head: i64 = reader.query_row(&sql, [], |r| r.get(0))?;
                let _ = poll_tx.send((head, Instant::now()));
                std::thread::sleep(Duration::from_secs(1));
            }
            Ok(())
        })
    };

    let (mut floor_t, mut framed_t, mut behind_t) = (Vec::new(), Vec::new(), Vec::new());
    let mut commits: Vec<(i64, Instant)> = Vec::new();
    let started = Instant::now();
    for i in 0..rounds {
        while seen.try_recv().is_ok() {}
        let key = format!("bench.push.{}.{i}", store.label());
        let id = writer.event_id(&key);
        let rowid = writer.append(&key)?;
        let committed = Instant::now();
        commits.push((rowid, committed));
        let deadline = committed + crate::wire::WAIT;
        let frame_at = loop {
            let f = frames
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .with_context(|| format!("no frame for row {i} within {:?}", crate::wire::WAIT))?;
            if f.event_id == id {
                break f.at;
            }
        };
        let seen_at = seen
            .recv_timeout(Duration::from_secs(5))
            .context("the floor reader never saw the commit")?;
        floor_t.push(seen_at.saturating_duration_since(committed));
        framed_t.push(frame_at.saturating_duration_since(committed));
        behind_t.push(frame_at.saturating_duration_since(seen_at));
        let next = started + gap * u32::try_from(i + 1)?;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    // Let the poller see the last row.
    std::thread::sleep(Duration::from_millis(1100));
    stop.store(true, Ordering::Relaxed);
    let wake_late = floor
        .join()
        .map_err(|_| anyhow::anyhow!("the floor reader panicked"))??;
    poller
        .join()
        .map_err(|_| anyhow::anyhow!("the poller panicked"))??;
    let polls: Vec<(i64, Instant)> = polls.try_iter().collect();
    let poller_t = commits
        .iter()
        .filter_map(|(rowid, at)| {
            polls
                .iter()
                .find(|(head, t)| head >= rowid && t > at)
                .map(|(_, t)| t.saturating_duration_since(*at))
        })
        .collect();
    Ok(Timings {
        floor: floor_t,
        framed: framed_t,
        behind: behind_t,
        poller: poller_t,
        wake_late,
    })
}
