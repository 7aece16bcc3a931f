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
//! becomes the alias `events/listen.rs` serves, because rmcp's typed listen filter drops the
//! events extension's `eventsListChanged` field), and the requests answered here because rmcp
//! would answer them without their id or mishandle them: non-object `params`, and a second
//! `events/stream` under a live stream's id. [`split`] cuts the stream into lines.

mod inbound;
mod split;

use std::time::Duration;

use std::sync::Arc;

use rmcp::model::RequestId;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::daemon::ConnectionState;
#[doc(hidden)]
pub use inbound::Inbound;
use inbound::{classify, oversized};
use split::{Piece, Splitter};

/// Bytes buffered between the framer and rmcp in each direction.
const DUPLEX_BYTES: usize = 64 * 1024;
/// Whole frames waiting for the client; beyond this rmcp waits.
const OUTBOUND_FRAMES: usize = 16;
/// How much the reader asks the socket for at a time.
const READ_CHUNK: usize = 16 * 1024;

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
pub(crate) fn start<T>(
    io: T,
    max_frame_bytes: usize,
    conn: Arc<ConnectionState>,
) -> (tokio::io::DuplexStream, Pump)
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (client_r, client_w) = tokio::io::split(io);
    let (rmcp_io, pump_io) = tokio::io::duplex(DUPLEX_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(pump_io);
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(OUTBOUND_FRAMES);
    let closed = conn.closed.clone();
    let reader = tokio::spawn(read_client(
        client_r,
        to_rmcp,
        out_tx.clone(),
        max_frame_bytes,
        conn,
    ));
    let output = tokio::spawn(read_rmcp(from_rmcp, out_tx));
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
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut splitter = Splitter::new(max);
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut pieces = Vec::new();
    loop {
        let n = match client.read(&mut chunk).await {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        if n == 0 {
            splitter.finish(&mut pieces);
        } else {
            splitter.feed(&chunk[..n], &mut pieces);
        }
        for piece in pieces.drain(..) {
            let inbound = answer(piece, max, |id| conn.has_live_stream(id));
            let ok = match inbound {
                Inbound::Skip => true,
                Inbound::Reply(frame) => replies.send(frame).await.is_ok(),
                Inbound::Forward(mut line) => {
                    line.push(b'\n');
                    to_rmcp.write_all(&line).await.is_ok()
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

/// What one piece of the inbound stream becomes.
fn answer(piece: Piece, max: usize, live: impl Fn(&RequestId) -> bool) -> Inbound {
    match piece {
        Piece::Line(line) => classify(&line, live),
        Piece::Oversized { len, head } => Inbound::Reply(oversized(len, max, &head)),
    }
}

/// The reader's pure half, for the fuzz targets in `fuzz/` only: split `chunks` with the frame
/// limit `max` and decide each line as the reader does (every id a live stream's when `live`).
#[doc(hidden)]
pub fn inbound_for_fuzzing(chunks: &[&[u8]], max: usize, live: bool) -> Vec<Inbound> {
    let mut splitter = Splitter::new(max);
    let mut pieces = Vec::new();
    for chunk in chunks {
        splitter.feed(chunk, &mut pieces);
    }
    splitter.finish(&mut pieces);
    pieces
        .into_iter()
        .map(|piece| answer(piece, max, |_| live))
        .collect()
}

async fn read_rmcp<R: AsyncRead + Unpin>(from_rmcp: R, out: mpsc::Sender<Vec<u8>>) {
    let mut lines = BufReader::new(from_rmcp);
    loop {
        let mut line = Vec::new();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if out.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn write_client<W: AsyncWrite + Unpin>(
    mut client: W,
    mut frames: mpsc::Receiver<Vec<u8>>,
    closed: CancellationToken,
) {
    while let Some(frame) = frames.recv().await {
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
