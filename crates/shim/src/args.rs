//! The command line, read with lexopt (clap would outweigh the rest of a binary that should
//! stay tiny), and the `--help` text (`usage.txt`).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use lexopt::{Arg, Parser};

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

/// The event types `--type` accepts: every type the daemon serves.
pub use tidings_protocol::event_types::ALL as TYPES;

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

/// The flags that take a text value, with an example value for the error message.
const VALUE_FLAGS: [(&str, &str); 6] = [
    ("--client", "claude-code"),
    ("--mode", "tools"),
    ("--type", "mail.received"),
    ("--from", "ana@example.com"),
    ("--domains", "example.com"),
    ("--preset", "work"),
];

/// The command line read so far; the checks between flags wait until it is all read.
#[derive(Default)]
struct Line {
    channel: bool,
    print_config: bool,
    client: Option<String>,
    mode: Option<String>,
    parsed: ChannelArgs,
    /// The first channel flag given, named by "only applies with --channel".
    channel_flag: Option<&'static str>,
    /// `--type`, `--from` or `--domains` was given, which `--preset` excludes.
    filter: bool,
    /// The first mistake, reported once the line is read so that a later `--help` still wins.
    error: Option<ArgsError>,
}

impl Line {
    fn fail(&mut self, error: ArgsError) {
        self.error.get_or_insert(error);
    }

    /// Records `value`, non-blank, of `flag`, one of [`VALUE_FLAGS`].
    fn add(&mut self, flag: &'static str, value: String) {
        match flag {
            "--client" => self.client = Some(value),
            "--mode" => self.mode = Some(value),
            _ => {
                if let Err(error) = add_value(&mut self.parsed, flag, &value) {
                    self.fail(error);
                }
                self.channel_flag.get_or_insert(flag);
                self.filter |= flag != "--preset";
            }
        }
    }
}

/// Parses the arguments after the program name. `--help` and `--version` win over
/// everything else, so `tidings-mcp --bogus --help` still shows the help.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, ArgsError> {
    let mut parser = Parser::from_args(args);
    // `-x=1` is one unknown flag, named whole, not `-x` given `1`.
    parser.set_short_equals(false);
    let mut line = Line::default();
    loop {
        // lexopt reads `--` as the end of the flags; the shim takes no arguments, so `--` is
        // an unknown flag like any other and the flags after it still count.
        let dashes = parser
            .try_raw_args()
            .and_then(|mut raw| raw.next_if(|arg| arg == "--"));
        if dashes.is_some() {
            line.fail(ArgsError::UnknownFlag("--".into()));
            continue;
        }
        let arg = match parser.next() {
            Ok(Some(arg)) => arg,
            Ok(None) => break,
            // `next` refuses only a value on a flag that takes none, as in `--channel=yes`.
            Err(error) => {
                line.fail(ArgsError::UnknownFlag(match error {
                    lexopt::Error::UnexpectedValue { option, value } => {
                        format!("{option}={}", text(&value))
                    }
                    other => other.to_string(),
                }));
                continue;
            }
        };
        match arg {
            Arg::Long("help") => return Ok(Command::Help),
            Arg::Long("version") => return Ok(Command::Version),
            Arg::Long("channel") => line.channel = true,
            Arg::Long("print-config") => line.print_config = true,
            // `value` takes the next argument even if it starts with `-`, and keeps a path's
            // bytes as they are, UTF-8 or not.
            Arg::Long("socket") => match parser.value() {
                Ok(path) if !path.is_empty() => line.parsed.socket = Some(path.into()),
                _ => line.fail(ArgsError::MissingSocketPath),
            },
            Arg::Long(name) => {
                let name = format!("--{name}");
                if let Some(&(flag, example)) = VALUE_FLAGS.iter().find(|(f, _)| *f == name) {
                    let value = parser.value().map(|value| text(&value));
                    match value.ok().filter(|v| !v.trim().is_empty()) {
                        Some(value) => line.add(flag, value),
                        None => line.fail(ArgsError::MissingValue(flag, example)),
                    }
                } else {
                    let value = parser.optional_value();
                    let value =
                        value.map_or_else(String::new, |value| format!("={}", text(&value)));
                    line.fail(ArgsError::UnknownFlag(name + &value));
                }
            }
            // lexopt splits `-ab` into `-a` and `-b`; we know only `-h`, so name the rest whole.
            Arg::Short(letter) => {
                let rest = parser.optional_value();
                if letter == 'h' && rest.is_none() {
                    return Ok(Command::Help);
                }
                let rest = rest.map_or_else(String::new, |rest| text(&rest));
                line.fail(ArgsError::UnknownFlag(format!("-{letter}{rest}")));
            }
            // lexopt reads a lone `-` as an argument (stdin, by custom); to us it is a flag.
            Arg::Value(value) if value == "-" => line.fail(ArgsError::UnknownFlag("-".into())),
            Arg::Value(value) => line.fail(ArgsError::UnexpectedArgument(text(&value))),
        }
    }
    finish(line)
}

/// An argument as text for a message or a value; bytes that are not UTF-8 become U+FFFD.
fn text(arg: &OsStr) -> String {
    arg.to_string_lossy().into_owned()
}

/// Checks the flags against each other once the whole line is read.
fn finish(line: Line) -> Result<Command, ArgsError> {
    if let Some(error) = line.error {
        return Err(error);
    }
    if line.print_config {
        return print_config_command(
            line.client.as_deref(),
            line.mode.as_deref(),
            line.parsed.socket,
        );
    }
    if line.client.is_some() {
        return Err(ArgsError::NeedsPrintConfig("--client"));
    }
    if line.mode.is_some() {
        return Err(ArgsError::NeedsPrintConfig("--mode"));
    }
    if !line.channel {
        return match line.channel_flag {
            Some(flag) => Err(ArgsError::NeedsChannel(flag)),
            None => Ok(Command::Run {
                socket: line.parsed.socket,
            }),
        };
    }
    if line.parsed.preset.is_some() && line.filter {
        return Err(ArgsError::PresetWithFilters);
    }
    Ok(Command::Channel(line.parsed))
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
pub const USAGE: &str = include_str!("usage.txt");

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
    fn odd_flags_are_named_whole_and_the_flags_after_them_count() {
        for arg in ["--", "-", "-hx", "-xh", "-x=1", "-h=", "--bogus=1", "--=x"] {
            let expected = Err(ArgsError::UnknownFlag(arg.into()));
            assert_eq!(parse_strs(&[arg]), expected, "{arg}");
        }
        assert_eq!(parse_strs(&["--", "--help"]), Ok(Command::Help));
        assert_eq!(parse_strs(&["--help=x"]), Ok(Command::Help));
        // A value is the next argument whatever it looks like.
        assert_eq!(
            parse_strs(&["--socket", "--"]),
            Ok(Command::Run {
                socket: Some(PathBuf::from("--"))
            })
        );
        assert_eq!(
            parse_strs(&["--channel", "--type", "-h"]),
            Err(ArgsError::UnknownType("-h".into()))
        );
    }

    #[test]
    fn socket_path_keeps_bytes_that_are_not_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let path = OsString::from_vec(b"/tmp/\xff.sock".to_vec());
        let mut inline = OsString::from("--socket=");
        inline.push(&path);
        for args in [vec!["--socket".into(), path.clone()], vec![inline]] {
            assert_eq!(
                parse(args),
                Ok(Command::Run {
                    socket: Some(PathBuf::from(&path))
                })
            );
        }
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
