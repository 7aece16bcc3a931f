//! A bare socket client: newline-delimited JSON-RPC straight on the daemon's socket, as any
//! host speaks it, with a client name of the test's choice (no shim to build).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use serde_json::{Value, json};

use super::WAIT;

/// One connection announcing `name` in every request's `_meta`.
pub struct Raw {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    name: String,
}

impl Raw {
    pub fn connect(socket: &Path, name: &str) -> Raw {
        let writer = UnixStream::connect(socket).expect("connect to the socket");
        writer.set_read_timeout(Some(WAIT)).unwrap();
        let reader = BufReader::new(writer.try_clone().unwrap());
        Raw {
            writer,
            reader,
            name: name.to_owned(),
        }
    }

    /// Send a request with `_meta` (this client's name) added to `params`.
    pub fn request(&mut self, id: u64, method: &str, mut params: Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": self.name, "version": "1"}
        });
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.writer, "{frame}").unwrap();
    }

    /// A request and its response frame (result or error).
    pub fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        self.wait_for(&format!("the answer to {method}"), |f| {
            f["id"] == json!(id) && f.get("method").is_none()
        })
    }

    /// Open a stream and wait for its `active`.
    pub fn stream(&mut self, id: u64, event_type: &str, arguments: Value) {
        let mut params = json!({"name": event_type});
        params["arguments"] = arguments;
        self.request(id, "events/stream", params);
        self.wait_for("the stream's active", |f| {
            assert!(f.get("error").is_none(), "refused: {f}");
            f["method"] == "notifications/events/active"
                && f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(id)
        });
    }

    /// Read frames until one satisfies `pred`; returns it.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}; saw {seen:#?}"
            );
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("waiting for {what}: {e}; saw {seen:#?}"));
            assert!(n > 0, "the daemon closed the connection before {what}");
            let f: Value = serde_json::from_str(&line).unwrap();
            if pred(&f) {
                return f;
            }
            if f["method"] != "notifications/events/heartbeat" {
                seen.push(f);
            }
        }
    }
}
