//! Recent senders for the app's allowlist picker: who wrote lately, how often, and when last.
//! For the app only: nothing here is reachable over MCP (no request names it), and no sender
//! is ever logged.

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use crate::dates::{from_apple, from_unix_secs, iso8601, to_apple_nanos};
use crate::error::StoreError;
use crate::event::EventType;
use crate::poll::Engine;
use crate::text::{MAX_NAME_CHARS, sanitize};

/// The longest look back, in days: a year.
pub const MAX_RECENT_DAYS: u32 = 366;

/// The most senders one call returns.
pub const MAX_RECENT_SENDERS: usize = 500;

/// One sender heard from lately.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecentSender {
    /// The store's handle: an address (Mail, and e-mail handles in Messages), an E.164 number
    /// or a short code; sanitised.
    pub handle: String,
    /// Mail's display name for the sender, when its newest message has one; sanitised.
    /// Messages keeps none.
    pub name: Option<String>,
    /// Messages from them in the window (one per message, whatever its copies).
    pub count: u64,
    /// When the newest arrived (RFC 3339 UTC).
    pub last: String,
}

impl Engine {
    /// The senders of `ty`'s incoming messages in the last `days` days (at most
    /// [`MAX_RECENT_DAYS`]; 0 is treated as 1), newest first, at most `limit` (at most
    /// [`MAX_RECENT_SENDERS`]). Incoming only: Mail leaves out Sent, Drafts and Outbox and the
    /// user's own addresses; Messages applies the event path's skip rules, so blocked and junk
    /// chats offer no one. Read through the engine's own read-only handles.
    pub fn recent_senders(
        &self,
        ty: EventType,
        days: u32,
        limit: usize,
    ) -> Result<Vec<RecentSender>, StoreError> {
        let days = days.clamp(1, MAX_RECENT_DAYS);
        let limit = limit.min(MAX_RECENT_SENDERS);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let since = self.clock_now() - Duration::days(i64::from(days));
        let rows = self.on_store(
            ty,
            |s| s.recent_senders(since.unix_timestamp(), limit),
            |s| s.recent_senders(to_apple_nanos(since), limit),
        )?;
        let date: fn(Option<i64>) -> Option<OffsetDateTime> = match ty {
            EventType::MailReceived => from_unix_secs,
            EventType::MessagesReceived => from_apple,
        };
        Ok(rows
            .into_iter()
            .filter_map(|(handle, name, count, last)| {
                let handle = sanitize(&handle, MAX_NAME_CHARS);
                (!handle.is_empty()).then(|| RecentSender {
                    handle,
                    name: name
                        .map(|n| sanitize(&n, MAX_NAME_CHARS))
                        .filter(|n| !n.is_empty()),
                    count,
                    last: date(last).map(iso8601).unwrap_or_default(),
                })
            })
            .collect())
    }
}
