//! Newline framing in front of rmcp: the frame size limit, parse errors a client can see, and
//! one writer per connection so every frame leaves whole.
//!
//! rmcp's newline transport accepts lines up to 16 MiB and drops non-JSON lines silently. So
//! the socket is pumped through a `tokio::io::duplex` pair: the reader splits lines itself,
//! discards a line over the limit as it streams past (it is never buffered whole) and answers
//! it with -32600, answers a line that is not JSON with -32700, and forwards the rest. rmcp's
//! output and those answers meet in one bounded channel and one writer, so a slow reader
//! backs up into rmcp (which awaits its writes) instead of growing a queue.
//!
//! What each line becomes is decided in [`inbound`]: one rewrite (`subscriptions/listen`
//! becomes the alias `events/listen.rs` serves, in `listen_alias.rs`, shared with the HTTP
//! guard, because rmcp's typed listen filter drops the events extension's
//! `eventsListChanged` field), and the lines answered (or dropped) here
//! because rmcp would answer them without their id or mishandle them. [`split`] cuts the
//! stream into lines. The reader itself keeps two things in order, which only it can:
//!
//! - **Stream ids.** A stream's request id must name one live stream (rmcp keeps one
//!   cancellation entry per id). The reader reserves the id as it forwards `events/stream` or
//!   `subscriptions/listen`, so of two sent back to back the second is refused before rmcp sees
//!   it; the id is released when the stream's handler is done with it (its slot, or the
//!   handler's hold when it never took one) or when rmcp's answer to it goes out
//!   (`read_rmcp`: rmcp answered it without the handler). Not on a cancel: rmcp forgets a
//!   cancelled request at once, but its handler's late answer would cancel a new request
//!   under the same id, so the id stays taken until the handler is done.
//! - **The lifecycle.** Until rmcp has begun a lifecycle (a first request other than
//!   `server/discover` or `ping`), it ends the connection on any notification or response. So
//!   the reader holds those back (a bounded few) and forwards them, in order, once
//!   `serve_with_ct` has returned (`started`).

pub(crate) mod inbound;
mod split;

use std::time::Duration;

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clients::ConnectionState;
#[doc(hidden)]
pub use inbound::{Inbound, Kind};
use inbound::{classify, duplicate, oversized};
use rmcp::model::RequestId;
use split::{Piece, Splitter};

/// Bytes buffered between the framer and rmcp in each direction.
const DUPLEX_BYTES: usize = 64 * 1024;
/// Whole frames waiting for the client; beyond this rmcp (and each stream) waits.
const OUTBOUND_FRAMES: usize = 32;
/// The writer joins waiting frames into one write up to about this many bytes.
const WRITE_BATCH_BYTES: usize = 64 * 1024;
/// Yields the writer gives, at most, while frames keep arriving, before it writes.
const GATHER_YIELDS: usize = 16;
/// Yields in a row with no new frame after which the writer stops gathering.
const GATHER_QUIET: usize = 2;
/// How much the reader asks the socket for at a time.
const READ_CHUNK: usize = 16 * 1024;
/// Notifications and responses held before the lifecycle begins; more are dropped (none of
/// them can matter yet: there is no request to cancel and we asked nothing).
const HELD_FRAMES: usize = 32;
/// And at most this many bytes of them.
const HELD_BYTES: usize = 1024 * 1024;

/// The tasks that move one connection's bytes.
pub(crate) struct Pump {
    reader: JoinHandle<()>,
    output: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Pump {
    /// Stop reading from the client and let the writer flush what rmcp wrote, for at most
    /// `grace` (a client that stopped reading must not hold the task forever).
    pub(crate) async fn finish(self, grace: Duration) {
        self.reader.abort();
        let output = self.output;
        let mut writer = self.writer;
        if tokio::time::timeout(grace, &mut writer).await.is_err() {
            writer.abort();
        }
        output.abort();
    }
}

/// Start pumping `io` for the connection `conn`; returns rmcp's end of the pipe.
/// `conn.closed` is cancelled when a write to the client fails, so the connection's streams
/// end at once; `conn`'s live stream ids let the reader refuse a duplicate before rmcp.
/// Cancel `started` once rmcp's lifecycle has begun (`serve_with_ct` returned).
pub(crate) fn start<T>(
    io: T,
    max_frame_bytes: usize,
    conn: Arc<ConnectionState>,
    started: CancellationToken,
) -> (tokio::io::DuplexStream, Pump)
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (client_r, client_w) = tokio::io::split(io);
    let (rmcp_io, pump_io) = tokio::io::duplex(DUPLEX_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(pump_io);
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(OUTBOUND_FRAMES);
    // Streams write their own frames here, behind what they sent before (docs in
    // events/stream/mod.rs).
    conn.set_direct(&out_tx);
    let closed = conn.closed.clone();
    let reader = tokio::spawn(read_client(
        client_r,
        to_rmcp,
        out_tx.clone(),
        max_frame_bytes,
        conn.clone(),
        started,
    ));
    let output = tokio::spawn(read_rmcp(from_rmcp, out_tx, conn));
    let writer = tokio::spawn(write_client(client_w, out_rx, closed));
    (
        rmcp_io,
        Pump {
            reader,
            output,
            writer,
        },
    )
}

async fn read_client<R, W>(
    mut client: R,
    mut to_rmcp: W,
    replies: mpsc::Sender<Vec<u8>>,
    max: usize,
    conn: Arc<ConnectionState>,
    started: CancellationToken,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut splitter = Splitter::new(max);
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut pieces = Vec::new();
    let mut held = Held::default();
    loop {
        let n = tokio::select! {
            () = started.cancelled(), if !held.frames.is_empty() => {
                if !held.flush(&mut to_rmcp).await {
                    return;
                }
                continue;
            }
            read = client.read(&mut chunk) => match read {
                Ok(0) | Err(_) => 0,
                Ok(n) => n,
            },
        };
        if n == 0 {
            splitter.finish(&mut pieces);
        } else {
            splitter.feed(&chunk[..n], &mut pieces);
        }
        if !pieces.is_empty() {
            conn.touch();
        }
        for piece in pieces.drain(..) {
            let inbound = answer(piece, max);
            let ok = match inbound {
                Inbound::Skip => true,
                Inbound::Reply(frame) => replies.send(frame).await.is_ok(),
                Inbound::Forward { line, kind } => {
                    // A request id names one live stream: neither a second stream nor a
                    // plain request may reuse it while the stream lives (rmcp keys its
                    // cancellation by id, and would lose one of the two).
                    let taken = match &kind {
                        Kind::Request {
                            id,
                            opens_stream: true,
                        } => (!conn.reserve_stream_id(id)).then_some(id),
                        Kind::Request { id, .. } => conn.is_stream_id(id).then_some(id),
                        _ => None,
                    };
                    if let Some(id) = taken {
                        replies.send(duplicate(id)).await.is_ok()
                    } else if kind.is_one_way() && !started.is_cancelled() {
                        held.push(line);
                        true
                    } else {
                        // Once the lifecycle has begun, what was held goes first.
                        let flushed = !started.is_cancelled() || held.flush(&mut to_rmcp).await;
                        flushed && forward(&mut to_rmcp, line).await
                    }
                }
            };
            if !ok {
                return;
            }
        }
        if n == 0 {
            // EOF: rmcp sees it and winds the service down.
            let _ = to_rmcp.shutdown().await;
            return;
        }
    }
}

/// What one piece of the inbound stream becomes (before the reader's stateful checks: stream
/// ids, one-way messages held until the lifecycle begins).
fn answer(piece: Piece, max: usize) -> Inbound {
    match piece {
        Piece::Line(line) => classify(&line),
        Piece::Oversized { len, head } => Inbound::Reply(oversized(len, max, &head)),
    }
}

/// The reader's pure half, for the fuzz targets in `fuzz/` only: split `chunks` with the frame
/// limit `max` and decide each line as the reader does.
#[doc(hidden)]
pub fn inbound_for_fuzzing(chunks: &[&[u8]], max: usize) -> Vec<Inbound> {
    let mut splitter = Splitter::new(max);
    let mut pieces = Vec::new();
    for chunk in chunks {
        splitter.feed(chunk, &mut pieces);
    }
    splitter.finish(&mut pieces);
    pieces.into_iter().map(|piece| answer(piece, max)).collect()
}

async fn forward<W: AsyncWrite + Unpin>(to_rmcp: &mut W, mut line: Vec<u8>) -> bool {
    line.push(b'\n');
    to_rmcp.write_all(&line).await.is_ok()
}

/// Notifications and responses that arrived before rmcp's lifecycle began.
#[derive(Default)]
struct Held {
    frames: Vec<Vec<u8>>,
    bytes: usize,
}

impl Held {
    fn push(&mut self, line: Vec<u8>) {
        if self.frames.len() >= HELD_FRAMES || self.bytes + line.len() > HELD_BYTES {
            tracing::debug!("dropped a notification sent before any request");
            return;
        }
        self.bytes += line.len();
        self.frames.push(line);
    }

    /// Forward what is held, in order.
    async fn flush<W: AsyncWrite + Unpin>(&mut self, to_rmcp: &mut W) -> bool {
        self.bytes = 0;
        for line in std::mem::take(&mut self.frames) {
            if !forward(to_rmcp, line).await {
                return false;
            }
        }
        true
    }
}

/// rmcp's output, line by line, to the writer; an answer (a response or an error) frees the
/// stream id it answers, and `server/discover`'s answer gets `capabilities.events`
/// ([`crate::events_key`]).
async fn read_rmcp<R: AsyncRead + Unpin>(
    from_rmcp: R,
    out: mpsc::Sender<Vec<u8>>,
    conn: Arc<ConnectionState>,
) {
    let mut lines = BufReader::new(from_rmcp);
    loop {
        let mut line = Vec::new();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if conn.has_stream_ids()
                    && let Some(id) = answered_id(&line)
                {
                    conn.release_stream_id(&id);
                }
                let line = crate::events_key::rewrite(&line).unwrap_or(line);
                if out.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The id a line of rmcp's answers, if it is a response or an error (not a request of ours,
/// which has a `method`).
fn answered_id(line: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let head: Head = serde_json::from_slice(line).ok()?;
    head.method.is_none().then_some(head.id).flatten()
}

async fn write_client<W: AsyncWrite + Unpin>(
    mut client: W,
    mut frames: mpsc::Receiver<Vec<u8>>,
    closed: CancellationToken,
) {
    let mut batch = Vec::new();
    while let Some(mut frame) = frames.recv().await {
        // The frames already waiting go out with this one, in one write: a fan-out wakes each
        // of the connection's streams at once, and each queues its frame when its task runs.
        // Yield while more keep arriving, so they join this write rather than each waking
        // the client with its own (a send and a wake-up of the reader each).
        let mut still = 0;
        for _ in 0..GATHER_YIELDS {
            let waiting = frames.len();
            tokio::task::yield_now().await;
            still = if frames.len() == waiting {
                still + 1
            } else {
                0
            };
            if still == GATHER_QUIET {
                break;
            }
        }
        if !frames.is_empty() {
            batch.clear();
            batch.append(&mut frame);
            while batch.len() < WRITE_BATCH_BYTES
                && let Ok(mut next) = frames.try_recv()
            {
                batch.append(&mut next);
            }
            std::mem::swap(&mut frame, &mut batch);
        }
        if client.write_all(&frame).await.is_err() || client.flush().await.is_err() {
            tracing::debug!("client stopped reading; closing the connection");
            closed.cancel();
            return;
        }
    }
    let _ = client.shutdown().await;
}

/// `1 MiB`, `64 KiB`, or `1000 bytes`.
pub(crate) fn human(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
