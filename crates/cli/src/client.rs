//! A small newline-delimited JSON-RPC client on the daemon's socket, speaking the 2026-07-28
//! era (every request carries the required `_meta`), for `tail` and `status`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tidings_protocol::payloads::Cancelled;
use tidings_protocol::{jsonrpc, meta, notifications};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::exit_code::{self, Coded};

/// Why talking to the daemon failed. Messages name the socket.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens on the socket.
    #[error(
        "Tidings is not running (no daemon at {}); {START_HINT}",
        .path.display()
    )]
    NotRunning {
        /// The socket path.
        path: PathBuf,
    },
    /// The socket or its directory is not ours.
    #[error("permission denied connecting to {}; it belongs to another user", .path.display())]
    PermissionDenied {
        /// The socket path.
        path: PathBuf,
    },
    /// Connecting, reading or writing failed otherwise.
    #[error("connection to {} failed: {source}", .path.display())]
    Io {
        /// The socket path.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// The daemon closed the connection before answering.
    #[error("the daemon at {} closed the connection", .path.display())]
    Closed {
        /// The socket path.
        path: PathBuf,
    },
    /// The daemon answered, but not with what the request calls for.
    #[error("the daemon's answer to {method} is not what Tidings expects: {message}")]
    Unexpected {
        /// The request's method.
        method: String,
        /// What was missing or wrong.
        message: String,
    },
    /// The daemon answered with a JSON-RPC error.
    #[error("{method} refused: {message} ({code}){}", data_suffix(.data.as_ref()))]
    Rpc {
        /// The request's method.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The error message.
        message: String,
        /// The error's `data`, if any.
        data: Option<Value>,
    },
}

/// How to start the daemon on this platform, named in [`ClientError::NotRunning`].
#[cfg(target_os = "macos")]
const START_HINT: &str = "open the Tidings app (`open -a Tidings`), or run `tidings serve`";
/// How to start the daemon on this platform, named in [`ClientError::NotRunning`].
#[cfg(not(target_os = "macos"))]
const START_HINT: &str = "start it with `tidings serve` (real stores) or `tidings serve --demo` \
                          (fake ones), with the same --socket if you gave one";

fn data_suffix(data: Option<&Value>) -> String {
    match data {
        Some(data) => format!(" {data}"),
        None => String::new(),
    }
}

impl Coded for ClientError {
    fn exit_code(&self) -> u8 {
        match self {
            ClientError::NotRunning { .. } => exit_code::NOT_RUNNING,
            ClientError::PermissionDenied { .. } => exit_code::PERMISSION_DENIED,
            ClientError::Rpc { .. } => exit_code::REFUSED,
            ClientError::Io { .. }
            | ClientError::Closed { .. }
            | ClientError::Unexpected { .. } => exit_code::FAILURE,
        }
    }
}

/// An open connection to the daemon.
pub struct Client {
    path: PathBuf,
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
}

impl Client {
    /// Connects to the daemon at `path`.
    pub async fn connect(path: &Path) -> Result<Client, ClientError> {
        let path = path.to_path_buf();
        let stream = match UnixStream::connect(&path).await {
            Ok(stream) => stream,
            Err(e) => {
                return Err(match e.kind() {
                    io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
                        ClientError::NotRunning { path }
                    }
                    io::ErrorKind::PermissionDenied => ClientError::PermissionDenied { path },
                    _ => ClientError::Io { path, source: e },
                });
            }
        };
        let (read, writer) = stream.into_split();
        Ok(Client {
            path,
            lines: BufReader::new(read).lines(),
            writer,
        })
    }

    /// Sends a request; `params` must be an object and gets the 2026-07-28 `_meta`.
    pub async fn send_request(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> Result<(), ClientError> {
        let mut params = params;
        if let Some(object) = params.as_object_mut() {
            object.insert(meta::KEY.into(), request_meta());
        }
        self.send(&jsonrpc::request(id, method, params)).await
    }

    /// Sends `notifications/cancelled` for request `id`.
    pub async fn cancel(&mut self, id: u64, reason: &str) -> Result<(), ClientError> {
        let params = Cancelled {
            request_id: id.into(),
            reason: Some(reason.to_owned()),
        };
        let frame = jsonrpc::notification(notifications::CANCELLED, params);
        self.send(&frame).await
    }

    async fn send(&mut self, frame: &Value) -> Result<(), ClientError> {
        let mut line = frame.to_string();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .await
            .map_err(|source| self.io_error(source))
    }

    /// The next frame, or `None` when the daemon closed the connection. Lines that are not
    /// JSON are skipped with a warning rather than ending the session.
    pub async fn next_frame(&mut self) -> Result<Option<Value>, ClientError> {
        loop {
            let line = match self.lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(None),
                Err(source) => return Err(self.io_error(source)),
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(&line) {
                Ok(value) => return Ok(Some(value)),
                Err(error) => tracing::warn!(%error, "skipping a frame that is not JSON"),
            }
        }
    }

    /// Sends a request and waits for its response, skipping anything else; a JSON-RPC error
    /// becomes [`ClientError::Rpc`].
    pub async fn call(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> Result<Value, ClientError> {
        self.send_request(id, method, params).await?;
        loop {
            let Some(frame) = self.next_frame().await? else {
                return Err(ClientError::Closed {
                    path: self.path.clone(),
                });
            };
            if frame.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            return response_result(method, frame);
        }
    }

    fn io_error(&self, source: io::Error) -> ClientError {
        ClientError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// The `result` of a response, or its `error` as [`ClientError::Rpc`].
pub fn response_result(method: &str, mut frame: Value) -> Result<Value, ClientError> {
    if let Some(error) = frame.get_mut("error").map(Value::take) {
        return Err(ClientError::Rpc {
            method: method.to_owned(),
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .to_owned(),
            data: error.get("data").cloned(),
        });
    }
    Ok(frame.get_mut("result").map_or(Value::Null, Value::take))
}

/// The `_meta` every 2026-07-28 request must carry.
pub fn request_meta() -> Value {
    let info = meta::implementation("tidings", env!("CARGO_PKG_VERSION"));
    Value::Object(meta::request(info))
}
