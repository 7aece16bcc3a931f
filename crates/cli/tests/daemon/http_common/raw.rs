//! HTTP/1.1 by hand on a TCP stream: a request's head without its body, a body sent in
//! pieces, duplicate headers, `Expect: 100-continue` (hyper sends `100 Continue` when the
//! server first reads the body, which tells a test the headers were admitted), and reading
//! one response or the server's close. Every read is capped by [`WAIT`](super::WAIT).

use std::fmt::Write as _;
use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Call, within};

impl Call {
    /// The request's head (request line and headers, then the blank line) declaring
    /// `content_length`, with `extra` header lines (`Name: value`) added.
    pub fn head(&self, content_length: usize, extra: &[&str]) -> Vec<u8> {
        let mut head = String::from("POST /mcp HTTP/1.1\r\n");
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        for line in extra {
            head.push_str(line);
            head.push_str("\r\n");
        }
        let _ = write!(head, "content-length: {content_length}\r\n\r\n");
        head.into_bytes()
    }
}

/// A hand-driven connection.
pub struct Raw {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

/// One parsed response.
pub struct RawResponse {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// A header's value (names compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

impl Raw {
    pub async fn connect(addr: SocketAddr) -> Raw {
        Raw {
            stream: within(TcpStream::connect(addr)).await.unwrap(),
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        within(self.stream.write_all(bytes)).await.unwrap();
    }

    /// Send, where the server may already have closed the connection: whether it went.
    pub async fn try_send(&mut self, bytes: &[u8]) -> bool {
        within(self.stream.write_all(bytes)).await.is_ok()
    }

    /// Read more; `false` at the end of the stream (or a reset).
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match within(self.stream.read(&mut chunk)).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// Wait until the server closes the connection, discarding anything it sends.
    pub async fn closed(&mut self) {
        while self.fill().await {}
    }

    /// The next response (an interim `100 Continue` included); `None` if the server closed
    /// the connection first.
    pub async fn response(&mut self) -> Option<RawResponse> {
        let end = loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                break end;
            }
            if !self.fill().await {
                return None;
            }
        };
        let head = String::from_utf8(self.buf.drain(..end + 4).collect()).unwrap();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {head:?}"));
        let length = head
            .lines()
            .find_map(|line| {
                let (n, v) = line.split_once(':')?;
                n.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().unwrap())
            })
            .unwrap_or(0);
        while self.buf.len() < length {
            if !self.fill().await {
                break;
            }
        }
        let take = length.min(self.buf.len());
        let body = self.buf.drain(..take).collect();
        Some(RawResponse { status, head, body })
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
