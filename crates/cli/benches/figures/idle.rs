//! Idle cost and start-up. Idle: the daemon's CPU time (`/proc/<pid>/stat`) and resident
//! memory over a window with no stream (the baseline), then with 20 idle streams. Start-up:
//! from spawning `tidings serve` to its socket accepting, and to its first answer, on an
//! empty store (the baseline) and on the 1,000,000-row store.

use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::json;
use tidings_server::limits::ServerLimits;

use crate::daemon::{Daemon, private_tmp};
use crate::procfs;
use crate::report::{Section, Sum};
use crate::stats::{dist, env_or, ms, ratio, ratio_d};
use crate::store;
use crate::wire::{Conn, Opened};

/// CPU ms a minute, RSS MiB and threads of `pid` over `secs`.
pub fn window(pid: u32, secs: u64) -> Result<(f64, f64, u64)> {
    let before = procfs::cpu_ms(pid)?;
    std::thread::sleep(Duration::from_secs(secs));
    let cpu = procfs::cpu_ms(pid)? - before;
    Ok((
        cpu * 60.0 / secs as f64,
        procfs::rss_mib(pid)?,
        procfs::threads(pid)?,
    ))
}

pub fn idle(ctx: &crate::Ctx) -> Result<Section> {
    let secs = env_or("TIDINGS_BENCH_IDLE_SECS", 60);
    let settle = Duration::from_secs(5);
    let daemon = Daemon::fresh(&ctx.log("idle"))?;
    std::thread::sleep(settle);
    let none = window(daemon.pid, secs)?;
    let per = ServerLimits::default().streams_per_connection.max(1);
    let mut conns: Vec<Conn> = Vec::new();
    for c in 0..20usize.div_ceil(per) {
        let mut conn = daemon.connect()?;
        let batch: Vec<_> = (c * per..(c * per + per).min(20))
            .map(|i| {
                if i % 2 == 0 {
                    (
                        format!("i{i}"),
                        "mail.received",
                        json!({"domains": ["example.com"]}),
                    )
                } else {
                    (format!("i{i}"), "messages.received", json!({}))
                }
            })
            .collect();
        for o in conn.open_streams(&batch)? {
            if !matches!(o, Opened::Active) {
                bail!("an idle stream was not opened: {o:?}");
            }
        }
        conns.push(conn);
    }
    std::thread::sleep(settle);
    let live = window(daemon.pid, secs)?;
    drop(conns);
    let mut section = Section::new(
        "idle",
        "Idle CPU and memory, 20 streams",
        vec!["daemon", "CPU ms per minute", "RSS", "threads"],
    );
    section.rows = vec![
        vec![
            "no stream (baseline)".into(),
            format!("{:.0}", none.0),
            format!("{:.1} MiB", none.1),
            none.2.to_string(),
        ],
        vec![
            "20 idle streams (10 mail, 10 messages)".into(),
            format!("{:.0}", live.0),
            format!("{:.1} MiB", live.1),
            live.2.to_string(),
        ],
    ];
    section.notes.push(format!(
        "Each over {secs} s after {} s to settle. CPU comes in 10 ms clock ticks: read the figures \
         as a few ticks a minute, give or take one.",
        settle.as_secs()
    ));
    section.summary.push(Sum::new(
        "idle, 20 streams: CPU per minute",
        format!("{:.0} ms", live.0),
        format!("no stream: {:.0} ms", none.0),
        ratio(live.0, none.0),
        "under 50 ms",
    ));
    section.summary.push(Sum::new(
        "idle, 20 streams: resident memory",
        format!("{:.1} MiB", live.1),
        format!("no stream: {:.1} MiB", none.1),
        ratio(live.1, none.1),
        "under 30 MB",
    ));
    Ok(section)
}

pub fn startup(ctx: &crate::Ctx) -> Result<Section> {
    let runs = env_or("TIDINGS_BENCH_STARTUP_RUNS", 7);
    let empty_dir = private_tmp("tidings-bench-empty.")?;
    let empty = empty_dir.path().join("demo");
    store::empty(&empty)?;
    let (million, messages) = store::million()?;
    let mut section = Section::new(
        "startup",
        "Start-up: spawn to socket accepting",
        vec![
            "store",
            "spawn to accepting, p50 / max",
            "spawn to first answer, p50",
            "p50 / empty",
        ],
    );
    let mut base = None;
    for (label, home) in [
        ("empty (baseline)".to_owned(), &empty),
        (
            format!("{} messages", crate::stats::count(messages)),
            &million,
        ),
    ] {
        let (mut accept, mut answer) = (Vec::new(), Vec::new());
        for i in 0..runs {
            let mut daemon = Daemon::spawn(home, &ctx.log(&format!("startup-{i}")), Vec::new())?;
            let spawned = daemon.spawned;
            daemon.wait_accepting()?;
            accept.push(spawned.elapsed());
            let mut conn = daemon.connect()?;
            conn.call("status", "tidings/status", json!({}))?;
            answer.push(spawned.elapsed());
        }
        let (Some(a), Some(b)) = (dist(&mut accept), dist(&mut answer)) else {
            bail!("no start-up was timed");
        };
        let base_a = *base.get_or_insert(a.p50);
        section.rows.push(vec![
            label.clone(),
            format!("{} / {}", ms(a.p50), ms(a.max)),
            ms(b.p50),
            ratio_d(a.p50, base_a),
        ]);
        if label.starts_with("empty") {
            continue;
        }
        section.summary.push(Sum::new(
            format!("start-up on {label}: spawn to accepting, p50"),
            ms(a.p50),
            format!("empty store: {}", ms(base_a)),
            ratio_d(a.p50, base_a),
            "",
        ));
    }
    section.notes.push(format!(
        "{runs} starts each, release build, `tidings serve --demo --simulate off` on a demo \
         directory that already holds both stores (reused as it is). \"First answer\" is a \
         `tidings/status` round trip on a new connection."
    ));
    Ok(section)
}
