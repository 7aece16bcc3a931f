//! `tidings check --consumer NAME`: what is new since that consumer's last call, for hooks
//! (Claude Code `UserPromptSubmit`, Codex, Cursor `sessionStart`). Asks the daemon's
//! `tidings_check` tool over the socket; keeps the consumer's cursor in
//! `<data dir>/consumers/NAME.cursor`, replaced atomically. Prints nothing when nothing is
//! new (and on the first call, which records "now").

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tidings_protocol::{methods, tools};
use tidings_server::events::pull::cursor::ToolCursor;
use tidings_server::events::pull::{self, summary};

use super::args::{CheckArgs, CheckFormat};
use super::client::Client;
use super::exit_code::{Coded, FAILURE, REFUSED, USAGE};
use super::resolve_socket;
use crate::output;

/// The longest consumer name.
pub const MAX_NAME: usize = 64;
/// The most a text digest prints: Claude Code shows a hook's first 10,000 characters.
const MAX_TEXT_CHARS: usize = 10_000;
/// Events read per call, in pages of the tool's maximum.
const MAX_EVENTS: usize = 1_000;

/// Why a check could not run; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The consumer name is not an identifier.
    #[error(
        "--consumer must be 1 to {MAX_NAME} characters of letters, digits, `-` and `_`, got {0}"
    )]
    Name(String),
    /// The consumer's cursor file cannot be read or written.
    #[error("cannot {what} the consumer's cursor at {}: {source}", .path.display())]
    CursorFile {
        /// Read or write.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The daemon's tool refused (a type turned off, a cursor from elsewhere).
    #[error("the daemon refused: {0}")]
    Refused(String),
}

impl Coded for CheckError {
    fn exit_code(&self) -> u8 {
        match self {
            CheckError::Name(_) => USAGE,
            CheckError::Refused(_) => REFUSED,
            CheckError::CursorFile { .. } => FAILURE,
        }
    }
}

/// Runs `check`; returns the exit code.
pub async fn run(args: CheckArgs) -> anyhow::Result<()> {
    let name = valid_name(&args.consumer)?;
    let data = tidings_platform::paths::data_dir()?;
    let file = data.join("consumers").join(format!("{name}.cursor"));
    let saved = read_cursor(&file)?;
    let socket = resolve_socket(args.socket.as_deref())?;
    let mut client = Client::connect(&socket).await?;
    let mut arguments = json!({ "max_events": pull::MAX_EVENTS });
    if !args.types.is_empty() {
        arguments["events"] = json!(args.types);
    }
    for (key, values) in [("from", &args.from), ("domains", &args.domains)] {
        if !values.is_empty() {
            arguments[key] = json!(values);
        }
    }
    // The first call records now and prints nothing, like the tool's own first call.
    arguments["cursor"] = saved.map_or(Value::Null, Value::String);
    let mut events = Vec::new();
    let mut has_more;
    let mut id = 1;
    loop {
        let result = client
            .call(
                id,
                methods::TOOLS_CALL,
                json!({"name": tools::CHECK, "arguments": arguments}),
            )
            .await?;
        if result["isError"] == true {
            let text = result["content"][0]["text"]
                .as_str()
                .unwrap_or("(no message)");
            return Err(CheckError::Refused(text.to_owned()).into());
        }
        let content = &result["structuredContent"];
        events.extend(content["events"].as_array().cloned().unwrap_or_default());
        has_more = content["has_more"] == true;
        arguments["cursor"] = content["cursor"].clone();
        id += 1;
        if !has_more || events.len() >= MAX_EVENTS {
            break;
        }
    }
    let Some(cursor) = arguments["cursor"].as_str() else {
        return Err(CheckError::Refused("the answer carried no cursor".into()).into());
    };
    // Saved before printing: a hook killed mid-print loses a digest, never repeats one.
    write_cursor(&file, cursor)?;
    if events.is_empty() {
        return Ok(());
    }
    let text = match args.format {
        CheckFormat::Text => summary::summary(&events, has_more, MAX_TEXT_CHARS),
        CheckFormat::Json => {
            json!({"events": events, "cursor": cursor, "has_more": has_more}).to_string()
        }
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// `name` if it is an identifier of at most [`MAX_NAME`] characters: it becomes a file name.
fn valid_name(name: &str) -> Result<&str, CheckError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(name)
    } else {
        let shown = tidings_core::text::sanitize(name, MAX_NAME + 1);
        Err(CheckError::Name(
            serde_json::to_string(&shown).unwrap_or_default(),
        ))
    }
}

/// The saved cursor, `None` when the consumer has none yet.
fn read_cursor(file: &Path) -> Result<Option<String>, CheckError> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            // A damaged file must not break the hook for good (nobody can pass `null` from a
            // hook): say so once and start from now, as a first call does.
            if let Err(why) = ToolCursor::parse(text) {
                output::err(format_args!(
                    "tidings: the saved cursor in {} is not a cursor ({why}); starting from now",
                    file.display()
                ));
                return Ok(None);
            }
            Ok(Some(text.to_owned()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CheckError::CursorFile {
            what: "read",
            path: file.to_owned(),
            source,
        }),
    }
}

/// Replace the cursor file atomically: a temporary file in the same directory, renamed over.
fn write_cursor(file: &Path, cursor: &str) -> Result<(), CheckError> {
    let error = |source| CheckError::CursorFile {
        what: "write",
        path: file.to_owned(),
        source,
    };
    tidings_platform::files::write_atomic(file, format!("{cursor}\n").as_bytes(), 0o600)
        .map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consumer_name_is_an_identifier_of_at_most_64_characters() {
        assert!(valid_name("claude-hook_1").is_ok());
        for bad in ["", "../etc", "a b", "naïve", &"x".repeat(65)] {
            let e = valid_name(bad).unwrap_err().to_string();
            assert!(e.contains("--consumer") && e.contains("64"), "{e}");
        }
    }

    #[test]
    fn the_cursor_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("consumers").join("a.cursor");
        assert_eq!(read_cursor(&file).unwrap(), None);
        let (one, two) = ("t1.mail.received=v2.1-2-3.4", "t1.mail.received=v2.1-2-3.5");
        write_cursor(&file, one).unwrap();
        write_cursor(&file, two).unwrap();
        assert_eq!(read_cursor(&file).unwrap().as_deref(), Some(two));
        let names: Vec<_> = std::fs::read_dir(file.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
        // A damaged file reads as "no cursor yet": the next call starts from now.
        write_cursor(&file, "t1.two").unwrap();
        assert_eq!(read_cursor(&file).unwrap(), None);
    }
}
