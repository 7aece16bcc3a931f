//! `tidings`: the command-line tool. `serve` runs the daemon (real stores, or `--demo`),
//! `tail` prints events from a running daemon, `status` reports on it, `token` shows or
//! rotates the HTTP endpoint's token. See `cli/`.
//!
//! Logs go to stderr (`logging.rs`; stdout carries `tail`'s events and `serve --demo`'s
//! how-to-connect); lines for the user go through `output.rs`, which never panics on a
//! failed stream. `main` maps every error to a named exit code (`cli/exit_code.rs`) and
//! prints it once.

mod cli;
mod logging;
mod output;

use std::process::ExitCode;

use clap::Parser;

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
    logging::init(&cli);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            output::err(format_args!(
                "tidings: cannot start the async runtime: {error}"
            ));
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
            output::err(format_args!("tidings: {}", chain(&error)));
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
#[allow(clippy::match_same_arms)] // one arm per error type: a table, read top to bottom
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
