//! The backfill guard through the daemon: a burst of old rows among new ones reaches no
//! stream, and `tidings status` counts it; `backfill_days` applies live.

use serde_json::json;
use tidings_fixtures::{NewMessage, apple_ns_from_unix, dates::now_unix};

use super::support::{Harness, both_on};

fn with_guard(s: &mut tidings_core::Settings) {
    both_on(s);
    s.messages.backfill_days = 7;
}

/// A message dated now: news.
fn news(h: &mut Harness) -> i64 {
    let date = apple_ns_from_unix(now_unix());
    h.messages
        .append(&NewMessage::new(h.handle, h.chat, "hi", Some(date)))
        .unwrap()
}

fn backfilled(h: &Harness) -> u64 {
    h.daemon.state().types[1].store.backfilled
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_history_reaches_no_stream_and_is_counted() {
    let mut h = Harness::new(with_guard).await;
    let mut c = h.connect();
    let args = json!({"name": "messages.received", "arguments": {"from": ["+12025550143"]}});
    let a = c.request("events/stream", args.clone()).await;
    let b = c.request("events/stream", args).await;
    c.note_of(a, "notifications/events/active").await;
    c.note_of(b, "notifications/events/active").await;
    let first = news(&mut h);
    // An iCloud sync: 150 messages dated 2001.
    for _ in 0..150 {
        h.append_message();
    }
    let last = news(&mut h);
    for id in [a, b] {
        for want in [first, last] {
            let e = c.note_of(id, "notifications/events/event").await;
            let cursor: tidings_core::Cursor =
                e["params"]["cursor"].as_str().unwrap().parse().unwrap();
            assert_eq!(cursor.rowid, want, "{e}");
        }
    }
    h.until("the skipped rows to be counted", |s| {
        s.types[1].store.backfilled > 0
    })
    .await;
    assert_eq!(backfilled(&h), 150, "distinct rows, not once per stream");
    // The guard off (live): old rows are delivered again.
    let mut s = h.daemon.settings();
    s.messages.backfill_days = 0;
    h.daemon.update_settings(|now| *now = s).unwrap();
    let old = h.append_message();
    let e = c.note_of(a, "notifications/events/event").await;
    let cursor: tidings_core::Cursor = e["params"]["cursor"].as_str().unwrap().parse().unwrap();
    assert_eq!(cursor.rowid, old);
}
