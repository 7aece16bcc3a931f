//! `tidings`: the command-line tool. `serve` runs the daemon (real stores, or `--demo`),
//! `tail` prints events from a running daemon, `status` reports on it, `token` shows or
//! rotates the HTTP endpoint's token. See `cli/`.
//!
//! Logs go to stderr (stdout carries `tail`'s events and `serve --demo`'s how-to-connect);
//! `main` maps every error to a named exit code (`cli/exit_code.rs`) and prints it once.

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use cli::args::{Cli, Command};
use cli::client::ClientError;
use cli::exit_code;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version come through here too, and are not failures.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            });
        }
    };
    init_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tidings: cannot start the async runtime: {error}");
            return ExitCode::from(exit_code::FAILURE);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => cli::serve::run(args).await,
            Command::Tail(args) => cli::tail::run(args).await,
            Command::Status(args) => cli::status::run(args).await,
            Command::Token(command) => cli::token::run(command).await,
        }
    });
    // Do not wait for tasks still parked on a socket or stdin: we are done.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("tidings: {}", chain(&error));
            ExitCode::from(code_for(&error))
        }
    }
}

/// The error and its causes on one line, each cause once.
fn chain(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !line.contains(&cause) {
            line.push_str(": ");
            line.push_str(&cause);
        }
    }
    line
}

/// The exit code for an error that ended a command.
fn code_for(error: &anyhow::Error) -> u8 {
    use tidings_server::socket::SocketError;
    if let Some(e) = error.downcast_ref::<ClientError>() {
        return e.exit_code();
    }
    if let Some(e) = error.downcast_ref::<std::io::Error>()
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        return exit_code::SUCCESS;
    }
    match error.downcast_ref::<SocketError>() {
        Some(SocketError::AlreadyRunning { .. }) => exit_code::ALREADY_RUNNING,
        Some(SocketError::PathTooLong { .. } | SocketError::Directory { .. }) => exit_code::CONFIG,
        Some(_) => exit_code::FAILURE,
        None if error
            .downcast_ref::<tidings_platform::PathError>()
            .is_some() =>
        {
            exit_code::CONFIG
        }
        None if error
            .downcast_ref::<tidings_server::http::HttpError>()
            .is_some() =>
        {
            exit_code::CONFIG
        }
        None if error
            .downcast_ref::<tidings_server::daemon::DaemonError>()
            .is_some() =>
        {
            exit_code::CONFIG
        }
        None => exit_code::FAILURE,
    }
}

/// Logs to stderr. `serve` logs at info, `tail` and `status` at warn (their output is the
/// point); `-v` / `TIDINGS_LOG=<level>` raise it (see [`log_filter`] for rmcp's own logs).
fn init_logging(cli: &Cli) {
    let base = match cli.command {
        Command::Serve(_) => LevelFilter::INFO,
        Command::Tail(_) | Command::Status(_) | Command::Token(_) => LevelFilter::WARN,
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
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .with_filter(filter);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Our targets at `level`; rmcp at error, and never above warn whatever the verbosity. rmcp
/// logs whole requests and results at debug and trace, and those carry envelopes (senders,
/// addresses, subjects) that must not reach a log file. It logs every JSON-RPC error it sends
/// at warn, so that level is left to `-v` and up: a refused request is the client's business.
fn log_filter(level: LevelFilter) -> Targets {
    let rmcp = if level >= LevelFilter::DEBUG {
        LevelFilter::WARN
    } else {
        LevelFilter::ERROR
    };
    Targets::new().with_default(level).with_target("rmcp", rmcp)
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing::level_filters::LevelFilter;

    use super::log_filter;

    #[test]
    fn rmcp_never_logs_above_warn_whatever_the_verbosity() {
        for level in [
            LevelFilter::ERROR,
            LevelFilter::WARN,
            LevelFilter::INFO,
            LevelFilter::DEBUG,
            LevelFilter::TRACE,
        ] {
            let filter = log_filter(level);
            for target in ["rmcp", "rmcp::service", "rmcp::transport::async_rw"] {
                assert!(
                    !filter.would_enable(target, &Level::INFO),
                    "{target} at {level}"
                );
                assert!(
                    !filter.would_enable(target, &Level::DEBUG),
                    "{target} at {level}"
                );
                assert!(
                    !filter.would_enable(target, &Level::TRACE),
                    "{target} at {level}"
                );
                assert!(
                    filter.would_enable(target, &Level::ERROR),
                    "{target} at {level}"
                );
            }
        }
        // Our own targets follow the verbosity.
        assert!(log_filter(LevelFilter::TRACE).would_enable("tidings_server::hub", &Level::TRACE));
        assert!(log_filter(LevelFilter::DEBUG).would_enable("rmcp", &Level::WARN));
        assert!(!log_filter(LevelFilter::INFO).would_enable("rmcp", &Level::WARN));
    }
}
