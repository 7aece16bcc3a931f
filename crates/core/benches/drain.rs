//! Benchmark: drain a 1,000,000-message Envelope Index through the poll engine with a 1%
//! domain filter, against a baseline measured in the same run: one raw SQL count of the same
//! rows on a plain connection (the least work `SQLite` can do to find them).
//!
//! Then `maxAgeMs` with a cursor at the start of the store, for a floor after every row (1 h),
//! one inside the newest 1% and one before every row, against the same poll with
//! `cursor: null`.
//!
//! `cargo bench -p tidings-core --bench drain` (or `make bench`). `TIDINGS_BENCH_MESSAGES`
//! overrides the size. Prints one line per figure and the ratios that docs/benchmarks.md keeps.

// Statistics over timings and counts: float conversions of small integers are exact enough.
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap
)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tidings_core::{
    Cursor, EventType, Limits, Settings, StorePaths, Subscription, SubscriptionParams,
};
use tidings_fixtures::{BulkSpec, MacHome, MailProfile, bulk_mail};

const DOMAIN: &str = "bench.example.com";

fn main() {
    let messages: u64 = std::env::var("TIDINGS_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let home = MacHome::new(dir.path());
    let spec = BulkSpec {
        messages,
        target_domain: DOMAIN.into(),
        target_fraction: 0.01,
        seed: 1,
    };
    let report = bulk_mail(&home, MailProfile::V10Macos26, &spec).expect("bulk build");
    println!(
        "build: {} messages ({} from {DOMAIN}) in {:.2} s",
        report.messages, report.target_messages, report.seconds
    );

    // Baseline: a raw count of the matching rows, on its own read-only connection.
    let raw = rusqlite::Connection::open_with_flags(
        home.envelope_index(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open");
    let started = Instant::now();
    let counted: i64 = raw
        .query_row(
            "SELECT count(*) FROM messages m WHERE m.deleted = 0 AND m.sender IN \
             (SELECT ROWID FROM addresses WHERE address LIKE '%@' || ?1 OR address LIKE '%.' || ?1)",
            [DOMAIN],
            |r| r.get(0),
        )
        .expect("count");
    let baseline = started.elapsed();
    println!(
        "baseline: raw SQL count of {counted} matching rows in {}",
        ms(baseline)
    );

    let engine = tidings_core::Engine::new(&StorePaths::for_home(&home.root), Limits::default());
    let mut settings = Settings::default();
    settings.mail.enabled = true;
    let params = SubscriptionParams::parse(
        &json!({"name": "mail.received", "arguments": {"domains": [DOMAIN]}}),
    )
    .unwrap();
    let sub = Subscription::new(&params.name, &params.arguments, &settings).unwrap();
    let identity = engine
        .stamp(EventType::MailReceived)
        .expect("stamp")
        .identity;

    let head = engine.stamp(EventType::MailReceived).expect("stamp").head;
    let started = Instant::now();
    let mut cursor = Cursor { identity, rowid: 0 };
    let (mut events, mut calls, mut slowest) = (0usize, 0usize, Duration::ZERO);
    loop {
        let call = Instant::now();
        let batch = engine.next(&sub, cursor, 1000).expect("next");
        slowest = slowest.max(call.elapsed());
        calls += 1;
        events += batch.events.len();
        cursor = batch.cursor;
        if !batch.has_more {
            break;
        }
    }
    let drain = started.elapsed();
    assert_eq!(
        events as i64, counted,
        "the drain delivers exactly the matching rows"
    );
    println!(
        "drain: {events} events in {calls} polls in {} (slowest call {})",
        ms(drain),
        ms(slowest)
    );
    let rate = |d: Duration| head as f64 / d.as_secs_f64() / 1e6;
    println!(
        "rows examined per second: drain {:.2} M/s, bare SELECT {:.2} M/s, ratio {:.2}",
        rate(drain),
        rate(baseline),
        rate(drain) / rate(baseline)
    );

    // A quiet poll at the head: the common case, which must stay cheap.
    let started = Instant::now();
    let rounds = 1000;
    for _ in 0..rounds {
        let b = engine.next(&sub, cursor, 100).expect("quiet");
        assert!(b.events.is_empty());
    }
    let quiet = started.elapsed() / rounds;
    println!("quiet poll at head: {} each", ms(quiet));

    max_age(&engine, identity);

    println!(
        "ratio drain/baseline: {:.1}",
        drain.as_secs_f64() / baseline.as_secs_f64()
    );
    println!(
        "ratio quiet/baseline: {:.5}",
        quiet.as_secs_f64() / baseline.as_secs_f64()
    );
}

/// `events/poll` with `maxAgeMs` and a cursor at the start of the store, against the same
/// poll with `cursor: null` (which ignores `maxAgeMs`).
fn max_age(engine: &tidings_core::Engine, identity: tidings_core::FileIdentity) {
    let mut settings = Settings::default();
    settings.mail.enabled = true;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // The bulk store's dates run evenly over two years up to 2025-06-01 (1,748,736,000).
    let newest_week_ms = (now - 1_748_736_000 + 7 * 86_400) * 1000;
    let start = Cursor { identity, rowid: 0 }.to_string();
    let time_poll = |cursor: Value, max_age_ms: i64| -> Duration {
        let params = SubscriptionParams::parse(&json!({
            "name": "mail.received",
            "arguments": {"domains": [DOMAIN]},
            "cursor": cursor,
            "maxAgeMs": max_age_ms,
        }))
        .unwrap();
        let sub = Subscription::new(&params.name, &params.arguments, &settings).unwrap();
        let started = Instant::now();
        let rounds = 20;
        for _ in 0..rounds {
            engine.poll(&sub, &params).expect("poll");
        }
        started.elapsed() / rounds
    };
    let null = time_poll(Value::Null, 3_600_000);
    println!("maxAgeMs, cursor: null: {}", ms(null));
    for (label, age) in [
        ("1 h (after every row)", 3_600_000),
        ("the newest 1%", newest_week_ms),
        ("before every row", newest_week_ms * 10),
    ] {
        let t = time_poll(Value::String(start.clone()), age);
        println!(
            "maxAgeMs {label}, cursor at the start: {} (ratio to cursor: null {:.1})",
            ms(t),
            t.as_secs_f64() / null.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
