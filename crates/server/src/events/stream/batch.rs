//! A stream's batch: the events read, how writing them went, and the cursor safe after them.

use std::sync::Arc;

use tidings_core::{Cursor, Occurrence};

use super::End;
use crate::fanout::SharedRead;

/// How writing a batch's events went.
#[derive(Debug)]
pub(super) enum Written {
    /// Every event went out.
    All,
    /// Event `index` could not be encoded; it and those after it were not written.
    Unencodable {
        /// The first event not written.
        index: usize,
        /// What the encoder said.
        error: serde_json::Error,
    },
    /// The connection went while event `index` was written; it and those after it may not
    /// have arrived.
    Closed {
        /// The first event that may not have arrived.
        index: usize,
    },
}

/// Write `events` in order, each encoded by `encode` and sent by `write`; stop at the first
/// that fails, so nothing after an unwritten event goes out (the client would persist its
/// cursor past the gap).
pub(super) async fn write_events<'a, T, P, F>(
    events: &'a [T],
    encode: impl Fn(&T) -> Result<P, serde_json::Error>,
    mut write: impl FnMut(&'a T, P) -> F,
) -> Written
where
    F: Future<Output = Result<(), End>>,
{
    for (index, event) in events.iter().enumerate() {
        let params = match encode(event) {
            Ok(params) => params,
            Err(error) => return Written::Unencodable { index, error },
        };
        if write(event, params).await.is_err() {
            return Written::Closed { index };
        }
    }
    Written::All
}

impl Written {
    /// How many of `len` events went out (a connection lost mid-write counts the event it
    /// was writing as not delivered).
    pub(super) fn count(&self, len: usize) -> usize {
        match self {
            Written::All => len,
            Written::Unencodable { index, .. } | Written::Closed { index } => (*index).min(len),
        }
    }
}

/// The cursor once `events` (read up to `batch_cursor`) were written as `written` says: the
/// batch's own when all went out, else the one after the last event written; `None` when
/// nothing was, so the cursor stays where it was. Never past an event that was not written.
pub(super) fn cursor_after<T: AsRef<Occurrence>>(
    events: &[T],
    batch_cursor: Cursor,
    written: &Written,
) -> Option<Cursor> {
    let index = match written {
        Written::All => return Some(batch_cursor),
        Written::Unencodable { index, .. } | Written::Closed { index } => *index,
    };
    let last = events.get(index.checked_sub(1)?)?.as_ref();
    // Core writes each event's cursor; one it cannot read back holds the stream where it was.
    last.cursor.parse().ok()
}

/// One event a step writes: a shared read's own (encoded once for every stream), or this
/// stream's.
pub(super) enum Item {
    Shared(Arc<SharedRead>, usize),
    Own(Occurrence),
}

impl AsRef<Occurrence> for Item {
    fn as_ref(&self) -> &Occurrence {
        match self {
            Item::Shared(read, index) => read.event(*index),
            Item::Own(event) => event,
        }
    }
}

impl Item {
    /// The event as JSON.
    pub(super) fn encoded(&self) -> Result<Arc<[u8]>, serde_json::Error> {
        match self {
            Item::Shared(read, index) => read.encoded(*index),
            Item::Own(event) => serde_json::to_vec(event).map(Arc::from),
        }
    }
}

/// What a step read: the events to write and where the read ended.
pub(super) struct Ready {
    pub(super) events: Vec<Item>,
    pub(super) cursor: Cursor,
    pub(super) has_more: bool,
    pub(super) truncated: bool,
}

impl From<tidings_core::Batch> for Ready {
    fn from(b: tidings_core::Batch) -> Ready {
        Ready {
            events: b.events.into_iter().map(Item::Own).collect(),
            cursor: b.cursor,
            has_more: b.has_more,
            truncated: b.truncated,
        }
    }
}
