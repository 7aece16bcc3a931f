//! Catch-up and `maxAgeMs` on the cached 1,000,000-message store, through the daemon.
//!
//! Catch-up: `events/poll` from a cursor at ROWID 0 with a 1% domain filter, following
//! `hasMore`, against a bare `SELECT` stepping every row of `messages` on a plain read-only
//! connection (the least a reader can do to look at each row). `maxAgeMs` (1 h; every bulk row
//! is older): a poll with `cursor: null`, then with a cursor at the start. The catch-up runs
//! again with the backfill guard off, to show what reading the dates between found rows costs,
//! and, 100 events a call, with no filter at all (the allowlist alone, which matches most
//! rows) and with a broad one.
//! Each figure is the best of `TIDINGS_BENCH_CATCHUP_ROUNDS` (5) runs, baseline and drain
//! taking turns.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::daemon::Daemon;
use crate::report::{Section, Sum};
use crate::stats::{count, dist, env_or, ms, ratio, ratio_d};
use crate::store::{self, BULK_DOMAIN};
use crate::wire::Conn;
use crate::writer::Store;

/// A daemon on the cached store, and its cursor at ROWID 0.
fn start_daemon(ctx: &crate::Ctx, part: &str) -> Result<(Daemon, u64, String)> {
    let (home, messages) = store::million()?;
    let mut daemon = Daemon::spawn(&home, &ctx.log(part), Vec::new())?;
    daemon.wait_ready()?;
    let mut conn = daemon.connect()?;
    let head = poll(&mut conn, "head", &Value::Null, None)?;
    let cursor = head["cursor"].as_str().context("a cursor")?.to_owned();
    // `v2.<identity>.<rowid>`: the same store, at its start.
    let (identity, _) = cursor.rsplit_once('.').context("cursor format")?;
    Ok((daemon, messages, format!("{identity}.0")))
}

fn poll(conn: &mut Conn, id: &str, cursor: &Value, max_age_ms: Option<u64>) -> Result<Value> {
    let arguments = json!({"domains": [BULK_DOMAIN]});
    poll_with(conn, id, &arguments, cursor, max_age_ms)
}

fn poll_with(
    conn: &mut Conn,
    id: &str,
    arguments: &Value,
    cursor: &Value,
    max_age_ms: Option<u64>,
) -> Result<Value> {
    let mut params = json!({"name": "mail.received", "arguments": arguments,
        "cursor": cursor, "maxEvents": 1000});
    if let Some(age) = max_age_ms {
        params["maxAgeMs"] = json!(age);
    }
    let mut v = conn.call(id, "events/poll", params)?;
    if let Some(e) = v.get("error") {
        bail!("events/poll failed: {e}");
    }
    // Taken, not cloned: the client's own work is part of every drain's time.
    Ok(v["result"].take())
}

/// One drain: `events/poll` from `start`, following `hasMore`.
struct Drain {
    calls: u64,
    events: u64,
    took: Duration,
    slowest: Duration,
}

fn drain(daemon: &Daemon, start: &str) -> Result<Drain> {
    let mut conn = daemon.connect()?;
    let mut cursor = json!(start);
    let (mut calls, mut events) = (0u64, 0u64);
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    loop {
        let t = Instant::now();
        let r = poll(&mut conn, &format!("c{calls}"), &cursor, None)?;
        slowest = slowest.max(t.elapsed());
        calls += 1;
        events += r["events"].as_array().map_or(0, |e| e.len() as u64);
        cursor = r["cursor"].clone();
        if r["hasMore"] != json!(true) {
            break;
        }
    }
    Ok(Drain {
        calls,
        events,
        took: started.elapsed(),
        slowest,
    })
}

/// The fastest of `rounds` drains, `between` run before each (the baseline's turn).
fn best_drain(
    daemon: &Daemon,
    start: &str,
    rounds: u64,
    mut between: impl FnMut() -> Result<()>,
) -> Result<Drain> {
    between()?;
    let mut best = drain(daemon, start)?;
    for _ in 1..rounds {
        between()?;
        let next = drain(daemon, start)?;
        if next.took < best.took {
            best = next;
        }
    }
    Ok(best)
}

/// Calls of each catch-up at 100 events a call.
const HUNDREDS: usize = 50;

/// A domain most of the bench store's senders are at (or under).
const BROAD_DOMAIN: &str = "example.com";

/// A client catching up from ROWID 0 with `arguments`, 100 events a call (the default). With
/// no filter the demo allowlist alone picks the senders, and it matches most rows; a filter
/// for [`BROAD_DOMAIN`] matches many. Either way each call's batch fills within a few hundred
/// ROWIDs of its 20,000. Each call's time.
fn hundred_a_call(daemon: &Daemon, start: &str, arguments: &Value) -> Result<Vec<Duration>> {
    let mut conn = daemon.connect()?;
    let mut cursor = start.to_owned();
    let mut calls = Vec::with_capacity(HUNDREDS);
    for i in 0..HUNDREDS {
        let params = json!({"name": "mail.received", "arguments": arguments, "cursor": cursor,
            "maxEvents": 100});
        let t = Instant::now();
        let v = conn.call(&format!("hundred{i}"), "events/poll", params)?;
        calls.push(t.elapsed());
        if let Some(e) = v.get("error") {
            bail!("events/poll failed: {e}");
        }
        v["result"]["cursor"]
            .as_str()
            .context("a cursor")?
            .clone_into(&mut cursor);
    }
    Ok(calls)
}

/// One bare `SELECT` stepping every row of `messages`: the rows and the time.
fn bare_select(bare: &rusqlite::Connection) -> Result<(u64, Duration)> {
    let started = Instant::now();
    let mut stmt = bare.prepare(
        "SELECT ROWID, sender, subject, date_received, mailbox, deleted FROM messages ORDER BY ROWID",
    )?;
    let mut it = stmt.query([])?;
    let mut rows = 0;
    let mut sum = 0i64;
    while let Some(r) = it.next()? {
        sum = sum.wrapping_add(r.get::<_, i64>(0)? ^ r.get::<_, Option<i64>>(1)?.unwrap_or(0));
        rows += 1;
    }
    std::hint::black_box(sum);
    Ok((rows, started.elapsed()))
}

/// The cached store's demo settings, with the mail backfill guard on (the default, as
/// [`store::settings`] writes them) or off.
fn guard(on: bool) -> Result<()> {
    let (home, _) = store::million()?;
    if on {
        return store::settings(&home);
    }
    let demo = tidings_server::demo::DEMO_SETTINGS;
    let off = demo.replacen("[mail]\n", "[mail]\nbackfill_days = 0\n", 1);
    if off == demo {
        bail!("the demo settings have no [mail] table to turn the backfill guard off in");
    }
    std::fs::write(home.join("settings.toml"), off).context("write the bench settings")
}

pub fn catchup(ctx: &crate::Ctx) -> Result<Section> {
    let (daemon, messages, start) = start_daemon(ctx, "catchup")?;
    // Each figure is the best of its rounds, the baseline and the drain taking turns, so a
    // busy spell on a shared machine weighs on both alike (single runs here move by ±30%).
    let rounds = env_or("TIDINGS_BENCH_CATCHUP_ROUNDS", 5).max(1);
    let bare = Store::Mail.reader(&daemon.home)?;
    // The first bare pass warms the page cache for both.
    let (mut rows, mut best) = bare_select(&bare)?;
    let on = best_drain(&daemon, &start, rounds, || {
        let (n, took) = bare_select(&bare)?;
        (rows, best) = (n, best.min(took));
        Ok(())
    })?;
    let examined: i64 =
        bare.query_row("SELECT coalesce(max(ROWID), 0) FROM messages", [], |r| {
            r.get(0)
        })?;
    let examined = u64::try_from(examined)?;

    let mut wide = hundred_a_call(&daemon, &start, &json!({}))?;
    let mut broad = hundred_a_call(&daemon, &start, &json!({"domains": [BROAD_DOMAIN]}))?;
    drop(daemon);
    // The same drain with the backfill guard off: the guard reads the date of every row
    // between the found ones (`max(date)` over each gap), which this shows apart from the scan.
    guard(false)?;
    let off = start_daemon(ctx, "catchup-unguarded")
        .and_then(|(d, _, s)| best_drain(&d, &s, rounds, || Ok(())));
    guard(true)?;
    let off = off?;
    let (calls, events, drain, slowest) = (on.calls, on.events, on.took, on.slowest);
    let bare_rate = rows as f64 / best.as_secs_f64();
    let drain_rate = examined as f64 / drain.as_secs_f64();
    let off_rate = examined as f64 / off.took.as_secs_f64();
    let mut section = Section::new(
        "catchup",
        "Catch-up on 1,000,000 rows, against a bare SELECT",
        vec!["figure", "value"],
    );
    section.rows = vec![
        vec![
            "store".into(),
            format!("{} messages, 1% from {BULK_DOMAIN}", count(messages)),
        ],
        vec![
            format!("baseline: bare `SELECT` of every row (best of {rounds})"),
            format!(
                "{} rows in {} ({:.2} M rows/s)",
                count(rows),
                ms(best),
                bare_rate / 1e6
            ),
        ],
        vec![
            format!("catch-up: `events/poll` from ROWID 0, following `hasMore` (best of {rounds})"),
            format!("{} events in {calls} calls, {}", count(events), ms(drain)),
        ],
        vec![
            "rows examined per second".into(),
            format!("{:.2} M/s", drain_rate / 1e6),
        ],
        vec![
            "**catch-up rate / bare rate**".into(),
            format!("**{}**", ratio(drain_rate, bare_rate)),
        ],
        vec!["slowest call".into(), ms(slowest)],
        vec![
            "the same with the backfill guard off (`backfill_days = 0`)".into(),
            format!(
                "{} events in {} calls, {} ({:.2} M rows/s, **{}**; slowest call {})",
                count(off.events),
                off.calls,
                ms(off.took),
                off_rate / 1e6,
                ratio(off_rate, bare_rate),
                ms(off.slowest)
            ),
        ],
    ];
    let wide_dist = dist(&mut wide).context("calls")?;
    let broad_dist = dist(&mut broad).context("calls")?;
    section.rows.push(vec![
        format!("no filter (the demo allowlist alone, most of the store's senders): {HUNDREDS} calls of 100 events from ROWID 0"),
        format!("p50 {}, slowest {}", ms(wide_dist.p50), ms(wide_dist.max)),
    ]);
    section.rows.push(vec![
        format!("a filter for `{BROAD_DOMAIN}` (a broad one): the same"),
        format!("p50 {}, slowest {}", ms(broad_dist.p50), ms(broad_dist.max)),
    ]);
    let label = format!("catch-up, {} rows", count(examined));
    section.summary.push(Sum::new(
        format!("{label}: rows examined per second"),
        format!("{:.2} M/s", drain_rate / 1e6),
        format!("bare SELECT: {:.2} M/s", bare_rate / 1e6),
        ratio(drain_rate, bare_rate),
        "at least 0.5",
    ));
    section.summary.push(Sum::new(
        format!("{label}: slowest call"),
        ms(slowest),
        format!("whole drain: {}", ms(drain)),
        ratio_d(slowest, drain),
        "under 50 ms",
    ));
    section.summary.push(Sum::new(
        "catch-up with no filter or a broad one, 100 a call: slowest call",
        ms(wide_dist.max.max(broad_dist.max)),
        format!("the 1% filter's slowest: {}", ms(slowest)),
        ratio_d(wide_dist.max.max(broad_dist.max), slowest),
        "under 50 ms",
    ));
    Ok(section)
}

pub fn maxage(ctx: &crate::Ctx) -> Result<Section> {
    let (daemon, messages, start) = start_daemon(ctx, "maxage")?;
    let rounds = env_or("TIDINGS_BENCH_MAXAGE_ROUNDS", 20);
    let mut conn = daemon.connect()?;
    let hour = 3_600_000;
    let mut time = |label: &str, cursor: Value| -> Result<Vec<Duration>> {
        let mut v = Vec::new();
        for i in 0..rounds {
            let t = Instant::now();
            let r = poll(&mut conn, &format!("{label}{i}"), &cursor, Some(hour))?;
            v.push(t.elapsed());
            if !r["events"].as_array().is_some_and(Vec::is_empty) {
                bail!("a `maxAgeMs` poll on the bulk store returned events");
            }
        }
        Ok(v)
    };
    let mut null = time("n", Value::Null)?;
    let mut at_start = time("s", json!(start))?;
    // A client polling at the head with no filter of its own: the allowlist alone picks the
    // senders, and the demo one (three example domains) lists most of the store's handles.
    let head = poll(&mut conn, "h", &Value::Null, None)?;
    let head = head["cursor"].as_str().context("a cursor")?;
    let (identity, rowid) = head.rsplit_once('.').context("cursor format")?;
    let before_head = json!(format!("{identity}.{}", rowid.parse::<i64>()? - 1));
    let mut at_head = Vec::new();
    for i in 0..rounds {
        let t = Instant::now();
        poll_with(&mut conn, &format!("h{i}"), &json!({}), &before_head, None)?;
        at_head.push(t.elapsed());
    }
    let handles: i64 =
        Store::Mail
            .reader(&daemon.home)?
            .query_row("SELECT count(*) FROM addresses", [], |r| r.get(0))?;
    let (Some(n), Some(s), Some(h)) = (dist(&mut null), dist(&mut at_start), dist(&mut at_head))
    else {
        bail!("no poll was timed");
    };
    let mut section = Section::new(
        "maxage",
        "`maxAgeMs` with and without a cursor",
        vec![
            "`events/poll`, `maxAgeMs` 1 h",
            "p50",
            "max",
            "p50 / `cursor: null` p50",
        ],
    );
    section.rows = vec![
        vec![
            "`cursor: null` (baseline)".into(),
            ms(n.p50),
            ms(n.max),
            "1×".into(),
        ],
        vec![
            "cursor at the start (ROWID 0)".into(),
            ms(s.p50),
            ms(s.max),
            ratio_d(s.p50, n.p50),
        ],
        vec![
            "no `maxAgeMs`, no filter: the newest row, under the demo allowlist".into(),
            ms(h.p50),
            ms(h.max),
            ratio_d(h.p50, n.p50),
        ],
    ];
    section.notes.push(format!(
        "{rounds} polls each on {} messages, none of them that young, over the socket (a \
         round trip included). The last row polls from one ROWID before the head with no \
         filter, so the demo allowlist (three example domains; the store has {} sender \
         handles, most of them in those domains) alone picks the senders.",
        count(messages),
        count(u64::try_from(handles)?)
    ));
    section.summary.push(Sum::new(
        "`maxAgeMs` 1 h with a cursor at the start: p50",
        ms(s.p50),
        format!("`cursor: null`: {}", ms(n.p50)),
        ratio_d(s.p50, n.p50),
        "under 5 ms with any cursor",
    ));
    Ok(section)
}
