//! The batch's tests: an event not encoded or not written holds the cursor before it.

use std::cell::RefCell;
use std::future::ready;

use serde::ser::Error as _;

use serde_json::{Value, json};
use tidings_core::{Cursor, EventType, Occurrence};

use super::End;
use super::batch::{Item, Written, cursor_after, write_events};

fn cursor(rowid: i64) -> Cursor {
    format!("v2.1-2-3.{rowid}").parse().unwrap()
}

fn own(events: &[Occurrence]) -> Vec<Item> {
    events.iter().cloned().map(Item::Own).collect()
}

/// Events at rows 10, 11, 12; the batch read up to row 15 (13 to 15 did not match).
fn batch() -> (Vec<Occurrence>, Cursor) {
    let events = (10..13)
        .map(|rowid| Occurrence {
            event_id: format!("e{rowid}"),
            name: EventType::MailReceived.name(),
            timestamp: "2026-01-01T00:00:00Z".into(),
            data: json!({}),
            cursor: cursor(rowid).to_string(),
        })
        .collect();
    (events, cursor(15))
}

/// Write `events`, failing to encode `bad_encode` and to write `bad_write`; returns what
/// `write_events` said and the ids that went out.
async fn write(
    events: &[Occurrence],
    bad_encode: Option<&str>,
    bad_write: Option<&str>,
) -> (Written, Vec<String>) {
    let sent = RefCell::new(Vec::new());
    let written = write_events(
        events,
        |e| match bad_encode {
            Some(id) if e.event_id == id => Err(serde_json::Error::custom("cannot encode")),
            _ => serde_json::to_value(e),
        },
        |_, params: Value| {
            let id = params["eventId"].as_str().unwrap_or_default().to_owned();
            if bad_write == Some(id.as_str()) {
                return ready(Err(End::Closed));
            }
            sent.borrow_mut().push(id);
            ready(Ok(()))
        },
    )
    .await;
    (written, sent.into_inner())
}

#[tokio::test]
async fn an_event_that_cannot_be_encoded_is_held_not_skipped() {
    let (events, read_to) = batch();
    let (written, sent) = write(&events, Some("e11"), None).await;
    assert!(
        matches!(written, Written::Unencodable { index: 1, .. }),
        "{written:?}"
    );
    assert_eq!(
        sent,
        ["e10"],
        "nothing after the unencodable event goes out"
    );
    assert_eq!(
        cursor_after(&own(&events), read_to, &written),
        Some(cursor(10))
    );
}

#[tokio::test]
async fn a_connection_lost_mid_batch_holds_the_cursor_before_the_lost_event() {
    let (events, read_to) = batch();
    let (written, sent) = write(&events, None, Some("e11")).await;
    assert!(
        matches!(written, Written::Closed { index: 1 }),
        "{written:?}"
    );
    assert_eq!(sent, ["e10"]);
    assert_eq!(
        cursor_after(&own(&events), read_to, &written),
        Some(cursor(10))
    );
}

#[tokio::test]
async fn a_first_event_that_fails_leaves_the_cursor_where_it_was() {
    let (events, read_to) = batch();
    let (written, sent) = write(&events, Some("e10"), None).await;
    assert!(sent.is_empty());
    assert_eq!(cursor_after(&own(&events), read_to, &written), None);
}

#[tokio::test]
async fn a_batch_written_whole_moves_past_the_rows_that_did_not_match() {
    let (events, read_to) = batch();
    let (written, sent) = write(&events, None, None).await;
    assert!(matches!(written, Written::All), "{written:?}");
    assert_eq!(sent, ["e10", "e11", "e12"]);
    assert_eq!(
        cursor_after(&own(&events), read_to, &written),
        Some(cursor(15))
    );
}
