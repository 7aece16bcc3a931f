//! The command line, parsed by hand (a handful of flags do not justify clap in a binary
//! that should stay tiny), and the `--help` text.

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
    /// `--channel`: serve a Claude Code channel.
    Channel(ChannelArgs),
    /// `--print-config [--client NAME] [--mode MODE] [--socket PATH]`: print the config
    /// snippet.
    PrintConfig {
        /// The host, from `--client`; `None`: the common `mcpServers` shape.
        client: Option<tidings_platform::Host>,
        /// From `--mode` [default: tools].
        mode: tidings_platform::Mode,
        /// The daemon's socket from `--socket` [default: `TIDINGS_SOCKET`, else the
        /// platform default]; the snippet names it unless the host's shim finds it anyway.
        socket: Option<PathBuf>,
    },
    /// `--version`.
    Version,
    /// `--help` or `-h`.
    Help,
}

/// `--channel` and the filters that choose what it delivers.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChannelArgs {
    /// The socket path from `--socket`, overriding the default lookup.
    pub socket: Option<PathBuf>,
    /// `--type`, in order, without repeats; empty means both types.
    pub types: Vec<String>,
    /// `--from`, comma-separated values of every occurrence.
    pub from: Vec<String>,
    /// `--domains`, comma-separated values of every occurrence.
    pub domains: Vec<String>,
    /// `--preset NAME`: the filters come from settings.toml instead.
    pub preset: Option<String>,
}

/// The event types `--type` accepts.
pub const TYPES: [&str; 2] = ["mail.received", "messages.received"];

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
    /// A channel flag with no value after it.
    #[error("{0} needs a value, as in `{0} {1}`; try `tidings-mcp --help`")]
    MissingValue(&'static str, &'static str),
    /// A channel flag without `--channel`.
    #[error("{0} only applies with --channel; try `tidings-mcp --help`")]
    NeedsChannel(&'static str),
    /// `--type` with a name we do not serve.
    #[error("--type `{0}` is not an event type; use mail.received or messages.received")]
    UnknownType(String),
    /// `--client` with a name we have no snippet for.
    #[error(
        "--client `{0}` is not one we know; use claude-code, claude-desktop, cursor, vscode, \
         codex, zed, gemini, goose, windsurf or lm-studio, or leave it out for the common shape"
    )]
    UnknownClient(String),
    /// `--mode` with a name we do not know.
    #[error("--mode `{0}` is not a mode; use tools, events or channel")]
    UnknownMode(String),
    /// `--mode channel` for a host without channels.
    #[error("--mode channel is for Claude Code only; use --client claude-code or another mode")]
    ChannelNeedsClaudeCode,
    /// `--client` or `--mode` without `--print-config`.
    #[error("{0} only applies with --print-config; try `tidings-mcp --help`")]
    NeedsPrintConfig(&'static str),
    /// `--preset` together with filter flags.
    #[error(
        "--preset takes its types and senders from settings.toml; drop --type, --from and \
         --domains, or drop --preset"
    )]
    PresetWithFilters,
}

/// The channel flags that take a value, with an example value for the error message.
const VALUE_FLAGS: [(&str, &str); 4] = [
    ("--type", "mail.received"),
    ("--from", "ana@example.com"),
    ("--domains", "example.com"),
    ("--preset", "work"),
];

/// Parses the arguments after the program name. `--help` and `--version` win over
/// everything else, so `tidings-mcp --bogus --help` still shows the help.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, ArgsError> {
    let mut channel = false;
    let mut parsed = ChannelArgs::default();
    let mut seen_filter: Option<&'static str> = None;
    let mut channel_flag: Option<&'static str> = None;
    let mut first_error = None;
    let mut print_config = false;
    let mut client: Option<String> = None;
    let mut mode: Option<String> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value)),
            _ => (text.clone(), None),
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            "--channel" if inline.is_none() => channel = true,
            "--print-config" if inline.is_none() => print_config = true,
            "--client" | "--mode" => {
                let value = match inline {
                    Some(value) => Some(value.to_owned()),
                    None => args.next().map(|v| v.to_string_lossy().into_owned()),
                };
                let (name, example) = if flag == "--client" {
                    ("--client", "claude-code")
                } else {
                    ("--mode", "tools")
                };
                match value.filter(|v| !v.trim().is_empty()) {
                    Some(value) if name == "--client" => client = Some(value),
                    Some(value) => mode = Some(value),
                    None => {
                        first_error.get_or_insert(ArgsError::MissingValue(name, example));
                    }
                }
            }
            "--socket" => {
                let path = match inline {
                    // Slice the OsString, not the lossy text, so non-UTF-8 paths survive.
                    Some(_) => Some(OsStr::from_bytes(&arg.as_bytes()["--socket=".len()..]).into()),
                    None => args.next(),
                };
                match path {
                    Some(path) if !path.is_empty() => parsed.socket = Some(PathBuf::from(path)),
                    _ => {
                        first_error.get_or_insert(ArgsError::MissingSocketPath);
                    }
                }
            }
            _ => {
                if let Some(&(name, example)) = VALUE_FLAGS.iter().find(|(f, _)| *f == flag) {
                    let value = match inline {
                        Some(value) => Some(value.to_owned()),
                        None => args.next().map(|v| v.to_string_lossy().into_owned()),
                    };
                    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
                        first_error.get_or_insert(ArgsError::MissingValue(name, example));
                        continue;
                    };
                    if let Err(error) = add_value(&mut parsed, name, &value) {
                        first_error.get_or_insert(error);
                    }
                    channel_flag.get_or_insert(name);
                    if name != "--preset" {
                        seen_filter = Some(name);
                    }
                } else if text.starts_with('-') {
                    first_error.get_or_insert(ArgsError::UnknownFlag(text));
                } else {
                    first_error.get_or_insert(ArgsError::UnexpectedArgument(text));
                }
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    if print_config {
        return print_config_command(client.as_deref(), mode.as_deref(), parsed.socket);
    }
    if client.is_some() {
        return Err(ArgsError::NeedsPrintConfig("--client"));
    }
    if mode.is_some() {
        return Err(ArgsError::NeedsPrintConfig("--mode"));
    }
    if !channel {
        return match channel_flag {
            Some(flag) => Err(ArgsError::NeedsChannel(flag)),
            None => Ok(Command::Run {
                socket: parsed.socket,
            }),
        };
    }
    if parsed.preset.is_some() && seen_filter.is_some() {
        return Err(ArgsError::PresetWithFilters);
    }
    Ok(Command::Channel(parsed))
}

/// `--print-config` with its `--client`, `--mode` and `--socket`, checked.
fn print_config_command(
    client: Option<&str>,
    mode: Option<&str>,
    socket: Option<PathBuf>,
) -> Result<Command, ArgsError> {
    use tidings_platform::{Host, Mode};
    let client = client
        .map(|name| Host::from_id(name).ok_or_else(|| ArgsError::UnknownClient(name.to_owned())))
        .transpose()?;
    let mode = match mode {
        Some(name) => {
            Mode::from_name(name).ok_or_else(|| ArgsError::UnknownMode(name.to_owned()))?
        }
        None => Mode::Tools,
    };
    if mode == Mode::Channel && client != Some(Host::ClaudeCode) {
        return Err(ArgsError::ChannelNeedsClaudeCode);
    }
    Ok(Command::PrintConfig {
        client,
        mode,
        socket,
    })
}

/// Records one value of a channel flag.
fn add_value(parsed: &mut ChannelArgs, flag: &'static str, value: &str) -> Result<(), ArgsError> {
    let list = || value.split(',').map(str::trim).filter(|v| !v.is_empty());
    match flag {
        "--type" => {
            for name in list() {
                if !TYPES.contains(&name) {
                    return Err(ArgsError::UnknownType(name.to_owned()));
                }
                if !parsed.types.iter().any(|t| t == name) {
                    parsed.types.push(name.to_owned());
                }
            }
        }
        "--from" => parsed.from.extend(list().map(str::to_owned)),
        "--domains" => parsed.domains.extend(list().map(str::to_owned)),
        _ => parsed.preset = Some(value.to_owned()),
    }
    Ok(())
}

/// The `--help` text.
pub const USAGE: &str = r#"tidings-mcp: connects an MCP client to Tidings.

By default it moves bytes between its stdin/stdout and the Tidings daemon's Unix socket, and
nothing else; with --channel it serves a Claude Code channel fed by the daemon. It never
reads a store itself. Point your MCP client at it; the Tidings app (or `tidings serve`) must
be running.

Usage: tidings-mcp [--socket PATH]
       tidings-mcp --channel [--type TYPE] [--from LIST] [--domains LIST] [--socket PATH]
       tidings-mcp --channel --preset NAME [--socket PATH]
       tidings-mcp --print-config [--client NAME] [--mode MODE] [--socket PATH]

Options:
  --socket PATH   connect to PATH instead of the default socket
  --channel       serve a Claude Code channel: push each new event into the session as
                  one notifications/claude/channel (see docs/clients.md)
  --type TYPE     with --channel: mail.received or messages.received; repeat for both
                  [default: both]
  --from LIST     with --channel: senders (addresses, phone numbers), comma-separated
  --domains LIST  with --channel: sender domains, comma-separated
  --preset NAME   with --channel: the types and senders of [channel.presets.NAME] in
                  settings.toml, instead of --type, --from and --domains
  --print-config  print the config entry that starts this tidings-mcp, and exit; with
                  --socket (or TIDINGS_SOCKET) the entry names that socket unless the
                  host's tidings-mcp would find it on its own
  --client NAME   with --print-config: the file shape of claude-code, claude-desktop,
                  cursor, vscode, codex, zed, gemini, goose (YAML), windsurf or
                  lm-studio [default: the common mcpServers shape]
  --mode MODE     with --print-config: tools, events or channel (claude-code only)
                  [default: tools]
  --version       print the version and exit
  -h, --help      print this help and exit

Environment:
  TIDINGS_SOCKET  the socket path when --socket is not given. Default: tidings.sock in
                  ~/Library/Application Support/dev.tidings.Tidings/run/ on macOS,
                  $XDG_RUNTIME_DIR/tidings/ on Linux, /tmp/tidings-<uid>/ if that is too long.
                  Many MCP hosts (Codex, for one) start servers with a few variables only,
                  so in a host's config put the socket in args (--socket PATH) instead
  TIDINGS_CONFIG_DIR  where settings.toml is, for --preset

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
    fn channel_flags_collect_lists_and_types() {
        let parsed = parse_strs(&[
            "--channel",
            "--type",
            "mail.received",
            "--type=mail.received,messages.received",
            "--from",
            "ana@example.com, +12025550111",
            "--domains=acme.com",
        ]);
        assert_eq!(
            parsed,
            Ok(Command::Channel(ChannelArgs {
                socket: None,
                types: vec!["mail.received".into(), "messages.received".into()],
                from: vec!["ana@example.com".into(), "+12025550111".into()],
                domains: vec!["acme.com".into()],
                preset: None,
            }))
        );
    }

    #[test]
    fn channel_flags_are_checked() {
        assert_eq!(
            parse_strs(&["--from", "a@b.c"]),
            Err(ArgsError::NeedsChannel("--from"))
        );
        assert_eq!(
            parse_strs(&["--channel", "--type", "mail"]),
            Err(ArgsError::UnknownType("mail".into()))
        );
        assert_eq!(
            parse_strs(&["--channel", "--preset", "work", "--domains", "x.com"]),
            Err(ArgsError::PresetWithFilters)
        );
        assert_eq!(
            parse_strs(&["--channel", "--preset"]),
            Err(ArgsError::MissingValue("--preset", "work"))
        );
        assert_eq!(
            parse_strs(&["--channel=yes"]),
            Err(ArgsError::UnknownFlag("--channel=yes".into()))
        );
    }

    #[test]
    fn print_config_takes_a_client_and_a_mode() {
        use tidings_platform::{Host, Mode};
        assert_eq!(
            parse_strs(&["--print-config"]),
            Ok(Command::PrintConfig {
                client: None,
                mode: Mode::Tools,
                socket: None
            })
        );
        assert_eq!(
            parse_strs(&[
                "--print-config",
                "--client",
                "claude-code",
                "--mode=channel",
                "--socket",
                "/tmp/d/tidings.sock"
            ]),
            Ok(Command::PrintConfig {
                client: Some(Host::ClaudeCode),
                mode: Mode::Channel,
                socket: Some(PathBuf::from("/tmp/d/tidings.sock"))
            })
        );
        assert_eq!(
            parse_strs(&["--print-config", "--client", "cursor", "--mode", "channel"]),
            Err(ArgsError::ChannelNeedsClaudeCode)
        );
        assert_eq!(
            parse_strs(&["--print-config", "--client", "notepad"]),
            Err(ArgsError::UnknownClient("notepad".into()))
        );
        for (name, host) in [
            ("gemini", Host::GeminiCli),
            ("gemini-cli", Host::GeminiCli),
            ("goose", Host::Goose),
            ("windsurf", Host::Windsurf),
            ("lm-studio", Host::LmStudio),
            ("lmstudio", Host::LmStudio),
        ] {
            assert_eq!(
                parse_strs(&["--print-config", "--client", name]),
                Ok(Command::PrintConfig {
                    client: Some(host),
                    mode: Mode::Tools,
                    socket: None
                }),
                "{name}"
            );
        }
        assert_eq!(
            parse_strs(&["--print-config", "--client", "goose", "--mode", "channel"]),
            Err(ArgsError::ChannelNeedsClaudeCode)
        );
        assert_eq!(
            parse_strs(&["--mode", "tools"]),
            Err(ArgsError::NeedsPrintConfig("--mode"))
        );
    }

    #[test]
    fn usage_mentions_every_flag_and_the_env_var() {
        for needle in [
            "--socket",
            "--channel",
            "--type",
            "--from",
            "--domains",
            "--preset",
            "--version",
            "--help",
            "TIDINGS_SOCKET",
            "mcpServers",
            "--print-config",
            "--client",
            "--mode",
        ] {
            assert!(USAGE.contains(needle), "{needle}");
        }
        for host in tidings_platform::Host::ALL {
            assert!(USAGE.contains(host.id()), "{}", host.id());
            assert!(
                ArgsError::UnknownClient(String::new())
                    .to_string()
                    .contains(host.id()),
                "{}",
                host.id()
            );
        }
    }
}
