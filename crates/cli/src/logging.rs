//! Logging for every `tidings` command: to stderr, at a level per command and `-v`, through
//! the filters the app shares (`tidings_server::logfilter`: rmcp capped, [`ClientGone`]).

use std::io::IsTerminal;

use tidings_server::logfilter::{ClientGone, log_filter};
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::FilterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::args::{Cli, Command};

/// Logs to stderr. `serve` logs at info, `tail` and `status` at warn (their output is the
/// point); `-v` / `TIDINGS_LOG=<level>` raise it (see [`log_filter`] for rmcp's own logs).
pub fn init(cli: &Cli) {
    let base = match cli.command {
        Command::Serve(_) => LevelFilter::INFO,
        Command::Tail(_)
        | Command::Check(_)
        | Command::Status(_)
        | Command::Agents(_)
        | Command::Webhooks(_)
        | Command::Token(_)
        | Command::Connect(_)
        | Command::Disconnect(_)
        | Command::Clients(_)
        | Command::Install(_)
        | Command::Uninstall(_)
        | Command::Doctor(_) => LevelFilter::WARN,
    };
    let from_env = std::env::var("TIDINGS_LOG")
        .ok()
        .and_then(|v| v.parse::<LevelFilter>().ok());
    let level = match (cli.verbose, from_env) {
        (0, Some(level)) => level,
        (0, None) => base,
        (1, _) => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let filter = log_filter(level);
    // A stderr that fails (a closed pipe, /dev/full) loses the line; by default the layer
    // reports that with `eprintln!`, which panics on the same stderr.
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .log_internal_errors(false)
        .with_filter(filter.and(ClientGone));
    // `serve` also keeps a log file, at info at most (see `tidings_server::logfile`).
    let file = match cli.command {
        Command::Serve(_) => match tidings_server::logfile::open_in_log_dir() {
            Ok(appender) => Some(tidings_server::logfile::layer(appender, level)),
            Err(e) => {
                crate::output::err(format_args!("tidings: {e}; logging to stderr only"));
                None
            }
        },
        _ => None,
    };
    let _ = tracing_subscriber::registry()
        .with(layer)
        .with(file)
        .try_init();
}
