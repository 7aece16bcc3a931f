//! The command line, parsed by hand (three flags do not justify clap in a binary that
//! should stay tiny), and the `--help` text.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Connect and move bytes; `socket` is `--socket`, if given.
    Run {
        /// The socket path from `--socket`, overriding the default lookup.
        socket: Option<PathBuf>,
    },
    /// `--version`.
    Version,
    /// `--help` or `-h`.
    Help,
}

/// A command line we cannot act on.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// A flag we do not know.
    #[error("unknown flag `{0}`; try `tidings-mcp --help`")]
    UnknownFlag(String),
    /// An argument that is not a flag; the shim takes none.
    #[error("unexpected argument `{0}`; try `tidings-mcp --help`")]
    UnexpectedArgument(String),
    /// `--socket` with no path after it.
    #[error(
        "--socket needs a path, as in `--socket /path/to/tidings.sock`; try `tidings-mcp --help`"
    )]
    MissingSocketPath,
}

/// Parses the arguments after the program name. `--help` and `--version` win over
/// everything else, so `tidings-mcp --bogus --help` still shows the help.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, ArgsError> {
    let mut socket = None;
    let mut first_error = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "-h" | "--help" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            "--socket" => match args.next() {
                Some(path) if !path.is_empty() => socket = Some(PathBuf::from(path)),
                _ => {
                    first_error.get_or_insert(ArgsError::MissingSocketPath);
                }
            },
            _ => {
                if let Some(path) = text.strip_prefix("--socket=") {
                    if path.is_empty() {
                        first_error.get_or_insert(ArgsError::MissingSocketPath);
                    } else {
                        // Slice the OsString, not the lossy text, so non-UTF-8 paths survive.
                        let path = &arg.as_bytes()["--socket=".len()..];
                        socket = Some(PathBuf::from(OsStr::from_bytes(path)));
                    }
                } else if text.starts_with('-') {
                    first_error.get_or_insert(ArgsError::UnknownFlag(text.into_owned()));
                } else {
                    first_error.get_or_insert(ArgsError::UnexpectedArgument(text.into_owned()));
                }
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(Command::Run { socket }),
    }
}

/// The `--help` text.
pub const USAGE: &str = r#"tidings-mcp: connects an MCP client to Tidings.

It moves bytes between its stdin/stdout and the Tidings daemon's Unix socket, and nothing
else. Point your MCP client at it; the Tidings app (or `tidings serve`) must be running.

Usage: tidings-mcp [--socket PATH]

Options:
  --socket PATH   connect to PATH instead of the default socket
  --version       print the version and exit
  -h, --help      print this help and exit

Environment:
  TIDINGS_SOCKET  the socket path when --socket is not given. Default: tidings.sock in
                  ~/Library/Application Support/dev.tidings.Tidings/run/ on macOS,
                  $XDG_RUNTIME_DIR/tidings/ on Linux, /tmp/tidings-<uid>/ if that is too long

Example MCP client config (Claude Desktop, Cursor, ...):
  {
    "mcpServers": {
      "tidings": {
        "command": "/Applications/Tidings.app/Contents/MacOS/tidings-mcp"
      }
    }
  }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, ArgsError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn no_arguments_runs_with_the_default_socket() {
        assert_eq!(parse_strs(&[]), Ok(Command::Run { socket: None }));
    }

    #[test]
    fn socket_flag_takes_the_next_argument_or_an_equals_value() {
        let expected = Ok(Command::Run {
            socket: Some(PathBuf::from("/tmp/t.sock")),
        });
        assert_eq!(parse_strs(&["--socket", "/tmp/t.sock"]), expected);
        assert_eq!(parse_strs(&["--socket=/tmp/t.sock"]), expected);
    }

    #[test]
    fn socket_flag_without_a_path_is_an_error() {
        assert_eq!(parse_strs(&["--socket"]), Err(ArgsError::MissingSocketPath));
        assert_eq!(
            parse_strs(&["--socket="]),
            Err(ArgsError::MissingSocketPath)
        );
    }

    #[test]
    fn help_and_version_win_over_errors() {
        assert_eq!(parse_strs(&["--bogus", "-h"]), Ok(Command::Help));
        assert_eq!(
            parse_strs(&["--socket", "/x", "--version"]),
            Ok(Command::Version)
        );
    }

    #[test]
    fn unknown_flag_and_positional_are_named() {
        let err = parse_strs(&["--bogus"]).unwrap_err();
        assert_eq!(err, ArgsError::UnknownFlag("--bogus".into()));
        assert!(err.to_string().contains("--bogus"));
        assert_eq!(
            parse_strs(&["serve"]),
            Err(ArgsError::UnexpectedArgument("serve".into()))
        );
    }

    #[test]
    fn usage_mentions_every_flag_and_the_env_var() {
        for needle in [
            "--socket",
            "--version",
            "--help",
            "TIDINGS_SOCKET",
            "mcpServers",
        ] {
            assert!(USAGE.contains(needle), "{needle}");
        }
    }
}
