//! `tidings tail`: opens one `events/stream`, prints each occurrence as a JSON line on stdout
//! and, when it stops, the cursor to resume from on stderr.

use std::io::{IsTerminal, Write};

use serde_json::{Map, Value, json};
use tidings_core::Cursor;
use tidings_protocol::{meta, methods, notifications};

use super::args::TailArgs;
use super::client::{Client, ClientError, response_result};
use super::exit_code::{Coded, FAILURE};
use super::resolve_socket;

/// The id of our one `events/stream` request.
const STREAM_ID: u64 = 1;

/// How the stream ended.
enum End {
    /// Ctrl-C or SIGTERM: the user is done.
    Interrupted,
    /// Whoever reads our stdout went away.
    BrokenPipe,
    /// The daemon ended the stream with its final result.
    Completed,
    /// The daemon closed the connection.
    Disconnected,
    /// The daemon ended the subscription with `terminated`.
    Terminated(Value),
    /// Events could not be written to stdout (a full disk, say).
    OutputFailed(std::io::Error),
}

/// Why a stream ended badly once it was running (each exits with [`FAILURE`]).
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    /// The daemon closed the connection without a final result.
    #[error("the daemon at {} closed the connection", .0.display())]
    Disconnected(std::path::PathBuf),
    /// Events could not be written to stdout (a full disk, say).
    #[error("cannot write events to stdout: {0}")]
    Output(#[source] std::io::Error),
    /// The daemon ended the subscription with `terminated`; its error in words.
    #[error("the daemon ended the stream: {0}")]
    Terminated(String),
}

impl Coded for TailError {
    fn exit_code(&self) -> u8 {
        FAILURE
    }
}

/// Runs `tail` until the user stops it or the stream ends.
pub async fn run(args: TailArgs) -> anyhow::Result<()> {
    let socket = resolve_socket(args.socket.as_deref())?;
    let interrupted = super::interrupted();
    let mut client = Client::connect(&socket).await?;
    let mut params = stream_params(&args);
    // Started from the store's first row, the maxAgeMs floor is bound to skip rows: the
    // first `active` says `truncated`, and that is the stretch asked for, not a gap.
    let mut floor_asked = args.cursor.is_none() && args.max_age.is_some();
    if floor_asked {
        // The protocol replays nothing for a fresh start, even with maxAgeMs; so start from
        // the store's first row and let the maxAgeMs floor skip to the stretch asked for.
        params["cursor"] = json!(start_of_store(&mut client, &params).await?);
    }
    client
        .send_request(STREAM_ID, methods::EVENTS_STREAM, params)
        .await?;
    if std::io::stderr().is_terminal() {
        crate::output::err(format_args!(
            "tidings: watching {} on {}; Ctrl-C to stop",
            args.event_type,
            socket.display()
        ));
    }

    // Only a cursor the daemon vouched for is printed at the end: echoing the one we were
    // given would repeat a garbage cursor as if it were good.
    let mut cursor = None;
    let end = stream(
        &mut client,
        &args.event_type,
        &mut cursor,
        &mut floor_asked,
        interrupted,
    )
    .await;
    if matches!(end, Ok(End::Interrupted)) {
        // Tell the daemon, so it frees the stream at once; it may already be gone.
        let _ = client.cancel(STREAM_ID, "tidings tail interrupted").await;
    }
    if let Some(cursor) = &cursor {
        crate::output::err(format_args!("tidings: resume with --cursor {cursor}"));
    }
    match end? {
        End::Interrupted | End::BrokenPipe | End::Completed => Ok(()),
        End::Disconnected => Err(TailError::Disconnected(socket).into()),
        End::OutputFailed(error) => Err(TailError::Output(error).into()),
        End::Terminated(error) => Err(TailError::Terminated(describe(&error)).into()),
    }
}

/// `events/stream` params from the flags; empty filters are left out.
fn stream_params(args: &TailArgs) -> Value {
    let mut arguments = Map::new();
    for (key, values) in [
        ("from", &args.from),
        ("domains", &args.domains),
        ("mailboxes", &args.mailboxes),
        ("chats", &args.chats),
    ] {
        if !values.is_empty() {
            arguments.insert(key.into(), json!(values));
        }
    }
    for (key, value) in [("service", &args.service), ("account", &args.account)] {
        if let Some(value) = value {
            arguments.insert(key.into(), json!(value));
        }
    }
    let mut params = json!({"name": args.event_type, "arguments": arguments});
    if let Some(cursor) = &args.cursor {
        params["cursor"] = json!(cursor);
    }
    if let Some(max_age) = args.max_age {
        params["maxAgeMs"] = json!(u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX));
    }
    params
}

/// A cursor before the first row of the store `params` names: a bootstrap poll gives the
/// head cursor, whose file identity we keep with row 0.
async fn start_of_store(client: &mut Client, params: &Value) -> Result<String, ClientError> {
    let mut poll = params.clone();
    poll["cursor"] = Value::Null;
    if let Some(object) = poll.as_object_mut() {
        object.remove("maxAgeMs");
    }
    let head = client.call(0, methods::EVENTS_POLL, poll).await?;
    let head = head["cursor"]
        .as_str()
        .and_then(|c| c.parse::<Cursor>().ok())
        .ok_or_else(|| ClientError::Unexpected {
            method: methods::EVENTS_POLL.into(),
            message: "a bootstrap poll gave no cursor".into(),
        })?;
    Ok(Cursor { rowid: 0, ..head }.to_string())
}

/// Reads frames until the stream ends or a signal arrives, keeping `cursor` at the last
/// position the daemon vouched for (from `active`, `event` and `heartbeat`).
async fn stream(
    client: &mut Client,
    event_type: &str,
    cursor: &mut Option<String>,
    floor_asked: &mut bool,
    interrupted: impl Future<Output = ()>,
) -> Result<End, ClientError> {
    tokio::pin!(interrupted);
    let mut stdout = std::io::stdout().lock();
    loop {
        let frame = tokio::select! {
            () = &mut interrupted => return Ok(End::Interrupted),
            frame = client.next_frame() => frame?,
        };
        let Some(mut frame) = frame else {
            return Ok(End::Disconnected);
        };
        if frame.get("id").and_then(Value::as_u64) == Some(STREAM_ID) {
            // The response to our request: an error before the stream opened, or the final
            // result of a stream the daemon closed.
            response_result(methods::EVENTS_STREAM, frame)?;
            return Ok(End::Completed);
        }
        let method = frame
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut params = frame.get_mut("params").map_or(Value::Null, Value::take);
        let new_cursor = params
            .get("cursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match method.as_str() {
            notifications::ACTIVE => {
                let truncated = params.get("truncated").and_then(Value::as_bool) == Some(true);
                // Only the first `active` can be the floor's; a later one is a real gap.
                let expected = std::mem::take(floor_asked);
                if truncated && !expected {
                    crate::output::err(format_args!(
                        "tidings: gap in {event_type}: some events were skipped (the store was \
                         rebuilt, or the cursor was too old); continuing from a fresh cursor"
                    ));
                }
                tracing::info!(cursor = ?new_cursor, "stream active");
            }
            notifications::EVENT => {
                if let Some(object) = params.as_object_mut() {
                    object.remove(meta::KEY);
                }
                let written = writeln!(stdout, "{params}").and_then(|()| stdout.flush());
                if let Err(error) = written {
                    if error.kind() == std::io::ErrorKind::BrokenPipe {
                        return Ok(End::BrokenPipe);
                    }
                    return Ok(End::OutputFailed(error));
                }
            }
            notifications::HEARTBEAT => tracing::debug!(cursor = ?new_cursor, "heartbeat"),
            notifications::ERROR => {
                crate::output::err(format_args!(
                    "tidings: store error (the stream stays open): {}",
                    describe(&params["error"])
                ));
            }
            notifications::TERMINATED => {
                return Ok(End::Terminated(params["error"].take()));
            }
            other => tracing::debug!(method = other, "ignoring a frame"),
        }
        // Only the three stream notifications carry a position; keep the last one.
        if new_cursor.is_some() && notifications::is_events(&method) {
            *cursor = new_cursor;
        }
    }
}

/// `message (code) data` for a JSON-RPC error object.
fn describe(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let code = error.get("code").map(Value::to_string).unwrap_or_default();
    match error.get("data") {
        Some(data) => format!("{message} ({code}) {data}"),
        None => format!("{message} ({code})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn args() -> TailArgs {
        TailArgs {
            event_type: "mail.received".into(),
            from: vec![],
            domains: vec!["example.com".into()],
            mailboxes: vec![],
            chats: vec![],
            service: None,
            account: None,
            cursor: Some("v1.1-2.3".into()),
            max_age: Some(Duration::from_secs(600)),
            socket: None,
        }
    }

    #[test]
    fn params_carry_only_the_filters_given() {
        let params = stream_params(&args());
        assert_eq!(
            params,
            json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
                   "cursor": "v1.1-2.3", "maxAgeMs": 600_000})
        );
    }

    #[test]
    fn service_and_account_are_scalars() {
        let mut a = args();
        a.service = Some("SMS".into());
        a.account = Some("me@example.com".into());
        let params = stream_params(&a);
        assert_eq!(params["arguments"]["service"], "SMS");
        assert_eq!(params["arguments"]["account"], "me@example.com");
    }

    #[test]
    fn errors_are_described_with_code_and_data() {
        let e = json!({"code": -32023, "message": "NotFound", "data": {"kind": "event"}});
        assert_eq!(describe(&e), r#"NotFound (-32023) {"kind":"event"}"#);
    }
}
