//! Sustained load: mails committed at a steady rate (default 1,000 a second for 30 s, one
//! row per commit) with 1 and then 10 streams; lag from each commit to each stream's frame,
//! and what no stream got (lost) or got twice (repeated).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;
use tidings_server::limits::ServerLimits;

use crate::daemon::Daemon;
use crate::procfs;
use crate::report::{Section, Sum};
use crate::stats::{Dist, dist, env_or, ms, ratio_d};
use crate::wire::{Frame, Opened};
use crate::writer::{Store, Writer};

struct Run {
    streams: usize,
    rows: usize,
    commits: usize,
    rate: f64,
    lag: Dist,
    lost: usize,
    repeated: usize,
    cpu_per_s: f64,
    /// How late the writer woke from its sleeps until each row was due: this machine's
    /// wake-up of a sleeping thread in the same run (each frame goes through several);
    /// `None` when the writer was always behind and never slept.
    wake_late: Option<Dist>,
}

pub fn run(ctx: &crate::Ctx) -> Result<Section> {
    let rate = env_or("TIDINGS_BENCH_RATE", 1000);
    let secs = env_or("TIDINGS_BENCH_SUSTAIN_SECS", 30);
    let mut section = Section::new(
        "sustained",
        "Sustained load: 1,000 mails a second for 30 s",
        vec![
            "streams",
            "rows written",
            "achieved rate",
            "lag p50 / p99 / max",
            "lost",
            "repeated",
            "p99 / 1 stream",
            "daemon CPU",
            "writer's wake-up: late by p50 / p99",
        ],
    );
    section.notes.push(format!(
        "Target {rate} mails a second for {secs} s, one per commit while the writer keeps up \
         (a writer behind schedule commits every mail then due in one commit, so the load \
         offered stays at the rate), from one held writer (`synchronous=NORMAL`, SQLite's \
         default autocheckpoint at 1,000 pages, as a long-running writer keeps its WAL \
         bounded). Lag: each stream's frame against its row's commit. The last column is how \
         late the writer woke from its sleeps until a row was due: how late this machine \
         wakes a sleeping thread in the same run, which each frame goes through several \
         times (the file watcher, the hub, a runtime worker, the client's reader)."
    ));
    let mut runs = Vec::new();
    for streams in [1usize, 10] {
        let daemon = Daemon::fresh(&ctx.log(&format!("sustained-{streams}")))?;
        let r = one_run(&daemon, streams, rate, secs)?;
        println!(
            "  {streams} streams: {} rows at {:.0}/s, lag p50 {} p99 {} max {}, lost {}, repeated {}",
            r.rows,
            r.rate,
            ms(r.lag.p50),
            ms(r.lag.p99),
            ms(r.lag.max),
            r.lost,
            r.repeated
        );
        runs.push(r);
    }
    let base = runs.first().map(|r| r.lag);
    for r in &runs {
        let vs = base.map_or("-".to_owned(), |b| ratio_d(r.lag.p99, b.p99));
        section.rows.push(vec![
            r.streams.to_string(),
            format!("{} in {} commits", r.rows, r.commits),
            format!("{:.0}/s", r.rate),
            format!("{} / {} / {}", ms(r.lag.p50), ms(r.lag.p99), ms(r.lag.max)),
            r.lost.to_string(),
            r.repeated.to_string(),
            vs.clone(),
            format!("{:.0} ms/s", r.cpu_per_s),
            r.wake_late
                .map_or("-".to_owned(), |w| format!("{} / {}", ms(w.p50), ms(w.p99))),
        ]);
        section.summary.push(Sum::new(
            format!(
                "{} rows/s, {} stream{}: lag p99 / max; lost, repeated",
                crate::stats::count(rate),
                r.streams,
                if r.streams == 1 { "" } else { "s" }
            ),
            format!(
                "{} / {}; {}, {}",
                ms(r.lag.p99),
                ms(r.lag.max),
                r.lost,
                r.repeated
            ),
            base.map_or("-".to_owned(), |b| {
                format!("1 stream: {} / {}", ms(b.p99), ms(b.max))
            }),
            vs,
            if r.streams == 10 {
                "p99 under 10 ms, 0 lost, 0 repeated"
            } else {
                ""
            },
        ));
    }
    Ok(section)
}

fn one_run(daemon: &Daemon, streams: usize, rate: u64, secs: u64) -> Result<Run> {
    let per = ServerLimits::default().streams_per_connection.max(1);
    let (tx, frames) = mpsc::channel::<Frame>();
    let mut readers = Vec::new();
    for chunk in (0..streams).collect::<Vec<_>>().chunks(per) {
        let mut conn = daemon.connect()?;
        let batch: Vec<_> = chunk
            .iter()
            .map(|i| {
                (
                    format!("s{i}"),
                    "mail.received",
                    json!({"domains": ["example.com"]}),
                )
            })
            .collect();
        for o in conn.open_streams(&batch)? {
            if !matches!(o, Opened::Active) {
                bail!("a stream was not opened: {o:?}");
            }
        }
        readers.push(conn.into_frames(tx.clone())?);
    }
    drop(tx);
    let total = usize::try_from(rate * secs)?;
    let commits: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; total]));
    let mut writer = Writer::open(&daemon.home, Store::Mail)?;
    writer
        .connection()
        .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 1000;")?;
    std::thread::sleep(Duration::from_millis(300));
    while frames.try_recv().is_ok() {}
    let cpu_before = procfs::cpu_ms(daemon.pid)?;
    let rows_written = Arc::new(AtomicUsize::new(0));
    let written = {
        let commits = Arc::clone(&commits);
        let counted = Arc::clone(&rows_written);
        std::thread::spawn(move || -> Result<(usize, usize, Duration, Vec<Duration>)> {
            let period = Duration::from_secs(1) / u32::try_from(rate)?;
            let started = Instant::now();
            // For `secs`: row i is due at `i * period`. A writer that falls behind (a busy
            // machine: a commit costs more than the period) commits every row due by then in
            // one commit, so the rows offered stay at the rate; the table says how many
            // commits it took.
            let window = Duration::from_secs(secs);
            let mut i = 0;
            let mut commits_made = 0usize;
            let mut late = Vec::with_capacity(total);
            while i < total && started.elapsed() < window {
                let due = started + period * u32::try_from(i)?;
                let asleep = due.saturating_duration_since(Instant::now());
                if !asleep.is_zero() {
                    std::thread::sleep(asleep);
                    late.push(Instant::now().saturating_duration_since(due));
                }
                let elapsed = started.elapsed().as_nanos();
                let upto = usize::try_from(elapsed / period.as_nanos().max(1))?
                    .saturating_add(1)
                    .clamp(i + 1, total);
                let keys: Vec<String> = (i..upto).map(|k| format!("bench.sus.{k}")).collect();
                writer.append_mails(&keys)?;
                commits_made += 1;
                let at = Instant::now();
                commits.lock().expect("commit times")[i..upto].fill(Some(at));
                i = upto;
                counted.store(i, Ordering::Release);
            }
            Ok((
                counted.load(Ordering::Acquire),
                commits_made,
                started.elapsed(),
                late,
            ))
        })
    };
    // Every frame, as it comes; the wait ends 15 s after the writer when frames are missing.
    let mut got: Vec<(usize, usize, Instant)> = Vec::with_capacity(total * streams);
    let mut writer_done: Option<Instant> = None;
    let mut writer_result = None;
    loop {
        match frames.recv_timeout(Duration::from_millis(100)) {
            Ok(f) => {
                let (Some(sub), Some(row)) = (
                    f.sub.strip_prefix('s').and_then(|s| s.parse().ok()),
                    f.event_id
                        .strip_prefix("<bench.sus.")
                        .and_then(|s| s.strip_suffix("@example.com>"))
                        .and_then(|s| s.parse().ok()),
                ) else {
                    continue;
                };
                got.push((sub, row, f.at));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if writer_done.is_none() && written.is_finished() {
            writer_done = Some(Instant::now());
        }
        if let Some(done) = writer_done
            && (got.len() >= rows_written.load(Ordering::Acquire) * streams
                || done.elapsed() > Duration::from_secs(15))
        {
            break;
        }
    }
    let cpu = procfs::cpu_ms(daemon.pid)? - cpu_before;
    if let Ok(r) = written.join() {
        writer_result = Some(r.context("the writer failed")?);
    }
    let (rows, commits_made, took, mut wake_late) = writer_result.context("the writer panicked")?;
    drop(readers);
    let commits = commits.lock().expect("commit times");
    let mut lag = Vec::with_capacity(got.len());
    let mut seen: HashMap<(usize, usize), u32> = HashMap::new();
    for (sub, row, at) in &got {
        *seen.entry((*sub, *row)).or_default() += 1;
        if let Some(Some(c)) = commits.get(*row) {
            lag.push(at.saturating_duration_since(*c));
        }
    }
    let distinct = seen.len();
    let repeated = got.len() - distinct;
    let lost = rows * streams - distinct.min(rows * streams);
    Ok(Run {
        streams,
        rows,
        commits: commits_made,
        rate: rows as f64 / took.as_secs_f64(),
        lag: dist(&mut lag).context("no frame came")?,
        lost,
        repeated,
        cpu_per_s: cpu / took.as_secs_f64(),
        wake_late: dist(&mut wake_late),
    })
}
