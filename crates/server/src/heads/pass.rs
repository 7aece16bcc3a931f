//! One pass of a head's task: every parked stream's frames from the shared read, in one write.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tidings_core::{Cursor, Occurrence, Pick};
use tidings_protocol::event::event_frame;
use tokio::sync::watch;

use super::{Back, Head, Parked};
use crate::fanout::SharedRead;
use crate::hub::LATENCY;
use crate::sync::lock;

impl Head {
    /// One change: each parked stream's events from the shared read, all frames in one write.
    pub(super) async fn pass(&self, wake: &mut watch::Receiver<u64>) {
        let _order = self.order.lock().await;
        let generation = *wake.borrow_and_update();
        if self.revoked.is_cancelled() {
            // Each stream ends with `terminated`, on its own.
            self.hand_back_all(Back::Drain);
            return;
        }
        let streams = lock(&self.parking).streams.clone();
        let mut frames = Vec::new();
        let mut written: Vec<Written> = Vec::new();
        for parked in streams {
            if parked.leaving.load(Ordering::Acquire) || lock(&parked.returned).is_some() {
                continue;
            }
            let at = lock(&parked.stream).cursor;
            let start = frames.len();
            if let Some(w) = self.serve(&parked, at, generation, wake, &mut frames).await {
                written.push(w);
            } else {
                frames.truncate(start);
                parked.hand_back(Back::Drain);
            }
        }
        if !frames.is_empty() && !self.write(frames).await {
            for w in written {
                w.parked.hand_back(Back::Closed);
            }
            return;
        }
        let mut count = 0;
        for w in written {
            let mut stream = lock(&w.parked.stream);
            stream.cursor = w.cursor;
            for pick in &w.picks {
                count += 1;
                (stream.delivered)(pick_event(&w.read, pick));
            }
        }
        if count > 0 {
            (self.signal)();
            tracing::debug!(target: LATENCY, event_type = %self.ty, generation, frames = count, "latency: frames written");
        }
    }

    /// Append `parked`'s frames after `at` to `frames`; `None` when the stream must take this
    /// step itself (see the comment of `crate::heads`).
    async fn serve(
        &self,
        parked: &Arc<Parked>,
        at: Cursor,
        generation: u64,
        wake: &watch::Receiver<u64>,
        frames: &mut Vec<u8>,
    ) -> Option<Written> {
        let kept = {
            let stream = lock(&parked.stream);
            if stream.settings.has_changed().unwrap_or(true) {
                return None;
            }
            self.fanout
                .kept(self.ty, at, generation)
                .and_then(|read| Some((read.picks_for(&stream.sub, at)?, read)))
        };
        let (picks, read) = if let Some(kept) = kept {
            kept
        } else {
            // Not in memory: the fan-out reads it (or finds it behind every read kept).
            let sub = lock(&parked.stream).sub.clone();
            let (read, picks) = self.fanout.next(&sub, at, generation, wake).await?.ok()?;
            (picks, read)
        };
        if picks.has_more || picks.truncated {
            return None;
        }
        let stream = lock(&parked.stream);
        for pick in &picks.picks {
            let json = match pick {
                Pick::Same(index) => read.encoded(*index).ok()?,
                Pick::Own(event) => Arc::from(serde_json::to_vec(event).ok()?),
            };
            if !event_frame(&json, &stream.id_json, frames) {
                return None;
            }
        }
        Some(Written {
            parked: Arc::clone(parked),
            cursor: picks.cursor,
            read,
            picks: picks.picks,
        })
    }

    /// Queue `frames` within the deadline; false when the client is gone or read nothing.
    async fn write(&self, frames: Vec<u8>) -> bool {
        let Some(queue) = self.queue.upgrade() else {
            return false;
        };
        if let Ok(sent) = tokio::time::timeout(self.deadline, queue.send(frames)).await {
            sent.is_ok()
        } else {
            tracing::warn!(
                deadline_s = self.deadline.as_secs(),
                "streams ended: their client has read nothing for the write deadline"
            );
            false
        }
    }
}

/// One stream's part of a pass's write.
struct Written {
    parked: Arc<Parked>,
    cursor: Cursor,
    read: Arc<SharedRead>,
    picks: Vec<Pick>,
}

fn pick_event<'a>(read: &'a SharedRead, pick: &'a Pick) -> &'a Occurrence {
    match pick {
        Pick::Same(index) => read.event(*index),
        Pick::Own(event) => event,
    }
}
