//! What one POST may take and what came back: the limits and the reply, without the client
//! (so a crate that only reads settings or classifies replies needs no network stack).

use std::time::Duration;

/// How long an attempt may take and how much of the reply is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostLimits {
    /// Resolving the host and opening the TCP connection.
    pub connect: Duration,
    /// The whole exchange, from resolving to the last byte of the reply read.
    pub total: Duration,
    /// Bytes of the reply's body kept; the rest is not read.
    pub max_reply: usize,
}

impl Default for PostLimits {
    fn default() -> Self {
        PostLimits {
            connect: Duration::from_secs(5),
            total: Duration::from_secs(10),
            max_reply: 64 * 1024,
        }
    }
}

/// The receiver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// At most [`PostLimits::max_reply`] bytes of the body.
    pub body: Vec<u8>,
    /// A `Retry-After` given in seconds (the HTTP-date form is not read).
    pub retry_after: Option<Duration>,
}
