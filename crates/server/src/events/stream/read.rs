//! A stream's reads: the fan-out's shared reads at the head, else core on the blocking pool.

use std::sync::Arc;

use rmcp::ErrorData;
use tidings_core::{Cursor, Pick, RequestError, Start, StoreError};

use super::Stream;
use super::batch::{Item, Ready};
use crate::events::wire::blocking;
use crate::fanout::read_permit;

/// Events per engine call: bounded work between checks for cancellation.
const BATCH: u32 = tidings_core::poll::DEFAULT_MAX_EVENTS;

/// A core call on the blocking pool, its two ways of failing told apart.
pub(super) enum Read<T, E> {
    /// Core answered.
    Done(T),
    /// Core refused or the store failed.
    Failed(E),
    /// The blocking task itself failed (a panic in core): logged, tried again later.
    Lost(ErrorData),
}

/// Run `f` on the blocking pool.
async fn read<T, E, F>(f: F) -> Read<T, E>
where
    F: FnOnce() -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: Send + 'static,
{
    let _permit = read_permit().await;
    match blocking(f).await {
        Ok(Ok(value)) => Read::Done(value),
        Ok(Err(error)) => Read::Failed(error),
        Err(lost) => Read::Lost(lost),
    }
}

impl Stream {
    /// `engine.start` from the client's cursor, on the blocking pool.
    pub(super) async fn start(&self) -> Read<Start, RequestError> {
        let (engine, sub) = (self.engine.clone(), self.sub.clone());
        let (cursor, max_age) = self.requested;
        read(move || engine.start(&sub, cursor, max_age)).await
    }

    /// The next batch after `after`: from the shared reads while at the head, else (and when
    /// they no longer cover the cursor) from an own read, which the stream drains with until
    /// it is back at the head.
    pub(super) async fn read_next(&mut self, after: Cursor) -> Read<Ready, StoreError> {
        if self.at_head {
            match self
                .fanout
                .next(&self.sub, after, self.generation, &self.wake)
                .await
            {
                Some(Ok((read, picks))) => {
                    let events = picks
                        .picks
                        .into_iter()
                        .map(|pick| match pick {
                            Pick::Same(index) => Item::Shared(Arc::clone(&read), index),
                            Pick::Own(event) => Item::Own(event),
                        })
                        .collect();
                    return Read::Done(Ready {
                        events,
                        cursor: picks.cursor,
                        has_more: picks.has_more,
                        truncated: picks.truncated,
                    });
                }
                Some(Err(e)) => return Read::Failed(e),
                None => self.at_head = false,
            }
        }
        let (engine, sub) = (self.engine.clone(), self.sub.clone());
        match read(move || engine.next(&sub, after, BATCH)).await {
            Read::Done(batch) => Read::Done(batch.into()),
            Read::Failed(e) => Read::Failed(e),
            Read::Lost(e) => Read::Lost(e),
        }
    }
}
