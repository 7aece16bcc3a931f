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
//! One rewrite happens here: `subscriptions/listen` becomes [`LISTEN_ALIAS`], because rmcp's
//! typed listen filter drops the events extension's `eventsListChanged` field (see
//! `events/listen.rs`).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::events::listen::LISTEN_ALIAS;

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

/// Start pumping `io`; returns rmcp's end of the pipe. `closed` is cancelled when a write to
/// the client fails, so the connection's streams end at once.
pub(crate) fn start<T>(
    io: T,
    max_frame_bytes: usize,
    closed: CancellationToken,
) -> (tokio::io::DuplexStream, Pump)
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (client_r, client_w) = tokio::io::split(io);
    let (rmcp_io, pump_io) = tokio::io::duplex(DUPLEX_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(pump_io);
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(OUTBOUND_FRAMES);
    let reader = tokio::spawn(read_client(
        client_r,
        to_rmcp,
        out_tx.clone(),
        max_frame_bytes,
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
            let inbound = match piece {
                Piece::Line(line) => classify(&line),
                Piece::Oversized(len) => Inbound::Reply(oversized(len, max)),
            };
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

/// One piece of the inbound byte stream.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// A complete line, without its newline.
    Line(Vec<u8>),
    /// A line over the limit, discarded; its length in bytes.
    Oversized(usize),
}

/// Splits a byte stream into lines, holding at most `max` bytes of a partial line.
struct Splitter {
    buf: Vec<u8>,
    /// Bytes of an oversized line seen so far, while it is being skipped.
    skipping: Option<usize>,
    max: usize,
}

impl Splitter {
    fn new(max: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            skipping: None,
            max,
        }
    }

    fn feed(&mut self, mut data: &[u8], out: &mut Vec<Piece>) {
        while !data.is_empty() {
            match data.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    let head = &data[..i];
                    if let Some(seen) = self.skipping.take() {
                        out.push(Piece::Oversized(seen + i));
                    } else if self.buf.len() + i > self.max {
                        out.push(Piece::Oversized(self.buf.len() + i));
                        self.buf = Vec::new();
                    } else {
                        self.buf.extend_from_slice(head);
                        out.push(Piece::Line(std::mem::take(&mut self.buf)));
                    }
                    data = &data[i + 1..];
                }
                None => {
                    if let Some(seen) = &mut self.skipping {
                        *seen += data.len();
                    } else if self.buf.len() + data.len() > self.max {
                        self.skipping = Some(self.buf.len() + data.len());
                        self.buf = Vec::new();
                    } else {
                        self.buf.extend_from_slice(data);
                    }
                    data = &[];
                }
            }
        }
    }

    /// The stream ended: a last line without a newline still counts.
    fn finish(&mut self, out: &mut Vec<Piece>) {
        if let Some(seen) = self.skipping.take() {
            out.push(Piece::Oversized(seen));
        } else if !self.buf.is_empty() {
            out.push(Piece::Line(std::mem::take(&mut self.buf)));
        }
    }
}

/// What to do with one inbound line.
#[derive(Debug, PartialEq)]
enum Inbound {
    /// Pass it to rmcp (possibly rewritten).
    Forward(Vec<u8>),
    /// Answer the client directly; rmcp never sees the line.
    Reply(Vec<u8>),
    /// A blank line: ignore it.
    Skip,
}

fn classify(line: &[u8]) -> Inbound {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Skip;
    }
    match serde_json::from_slice::<Value>(line) {
        // serde_json's message gives a position, never the text.
        Err(e) => Inbound::Reply(error_frame(-32700, &format!("parse error: {e}"))),
        Ok(Value::Object(mut m))
            if m.get("method").and_then(Value::as_str) == Some("subscriptions/listen") =>
        {
            m.insert("method".into(), Value::String(LISTEN_ALIAS.into()));
            match serde_json::to_vec(&m) {
                Ok(bytes) => Inbound::Forward(bytes),
                Err(e) => Inbound::Reply(error_frame(-32603, &format!("internal error: {e}"))),
            }
        }
        Ok(_) => Inbound::Forward(line.to_vec()),
    }
}

fn oversized(len: usize, max: usize) -> Vec<u8> {
    error_frame(
        -32600,
        &format!(
            "frame of {len} bytes exceeds the {} limit ({max} bytes)",
            human(max)
        ),
    )
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

/// A JSON-RPC error with `id: null`, as a line.
fn error_frame(code: i64, message: &str) -> Vec<u8> {
    let mut frame = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    frame.push(b'\n');
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(max: usize, chunks: &[&[u8]]) -> Vec<Piece> {
        let mut s = Splitter::new(max);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        s.finish(&mut out);
        out
    }

    #[test]
    fn lines_split_across_chunks_come_out_whole() {
        assert_eq!(
            split(100, &[b"ab", b"c\nde", b"f\n", b"g"]),
            vec![
                Piece::Line(b"abc".to_vec()),
                Piece::Line(b"def".to_vec()),
                Piece::Line(b"g".to_vec()),
            ]
        );
    }

    #[test]
    fn an_oversized_line_is_measured_and_skipped_and_the_next_survives() {
        let big = [b'x'; 25];
        assert_eq!(
            split(10, &[&big[..12], &big[12..], b"\nok\n"]),
            vec![Piece::Oversized(25), Piece::Line(b"ok".to_vec())]
        );
        // Exactly at the limit is fine.
        assert_eq!(split(3, &[b"abc\n"]), vec![Piece::Line(b"abc".to_vec())]);
        assert_eq!(split(3, &[b"abcd\n"]), vec![Piece::Oversized(4)]);
    }

    #[test]
    fn the_oversize_answer_names_size_and_limit() {
        let frame: Value = serde_json::from_slice(&oversized(1_048_577, 1_048_576)).unwrap();
        assert_eq!(frame["id"], Value::Null);
        assert_eq!(frame["error"]["code"], -32600);
        assert_eq!(
            frame["error"]["message"],
            "frame of 1048577 bytes exceeds the 1 MiB limit (1048576 bytes)"
        );
    }

    #[test]
    fn garbage_gets_a_parse_error_and_blank_lines_are_ignored() {
        let Inbound::Reply(frame) = classify(b"{not json") else {
            panic!("expected a reply")
        };
        let v: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(classify(b"  \r"), Inbound::Skip);
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#),
            Inbound::Forward(br#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#.to_vec())
        );
    }

    #[test]
    fn listen_is_renamed_to_the_alias() {
        let Inbound::Forward(bytes) =
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}"#)
        else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["method"], LISTEN_ALIAS);
        assert_eq!(v["id"], 1);
    }
}
