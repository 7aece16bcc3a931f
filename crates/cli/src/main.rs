//! `tidings`: the command-line tool. `serve` runs the daemon (real stores, or `--demo`),
//! `tail` prints events from a running daemon, `check` prints hook digests, `status` reports
//! on it, `agents` lists and decides the agents, `webhooks` lists the webhook destinations
//! and subscriptions and edits the destinations, `token` shows, rotates and makes the HTTP
//! tokens, `install` / `uninstall` manage the login item, `connect` / `disconnect` /
//! `clients` write hosts' configs, `doctor` checks everything and writes bug reports. The
//! commands are the `tidings_cli` library (its `lib.rs` has the module map); this file only
//! dispatches.
//!
//! Logs go to stderr (`logging.rs`; stdout carries `tail`'s events and `serve --demo`'s
//! how-to-connect); lines for the user go through `output.rs`, which never panics on a
//! failed stream. A command returns `Ok` or one error; `main` prints its chain once and exits
//! with the code of the first error in the chain that has one (`failure.rs`).

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use tidings_cli::args::{Cli, Command};
use tidings_cli::{self as cli, exit_code, failure, logging, output};

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
    match run(cli.command) {
        Ok(()) => ExitCode::from(exit_code::SUCCESS),
        Err(error) => {
            let code = failure::exit_code(&error);
            // A reader that closed our stdout is not worth a line.
            if code != exit_code::SUCCESS {
                output::err(format_args!("tidings: {}", chain(&error)));
            }
            ExitCode::from(code)
        }
    }
}

/// Runs the command on a fresh runtime; every way it can fail is the error.
fn run(command: Command) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        match command {
            Command::Serve(args) => cli::serve::run(args).await,
            Command::Tail(args) => cli::tail::run(args).await,
            Command::Check(args) => cli::check::run(args).await,
            Command::Status(args) => cli::status::run(args).await,
            Command::Agents(args) => cli::agents::run(args).await,
            Command::Webhooks(args) => cli::webhooks::run(args).await,
            Command::Token(command) => cli::token::run(command).await,
            Command::Install(args) => cli::login::install(&args),
            Command::Uninstall(args) => cli::login::uninstall(&args),
            Command::Connect(args) => cli::connect::run_connect(args).await,
            Command::Disconnect(args) => cli::connect::run_disconnect(&args),
            Command::Clients(args) => cli::connect::run_clients(args).await,
            Command::Doctor(args) => cli::doctor::run(args).await,
        }
    });
    // Do not wait for tasks still parked on a socket or stdin: we are done.
    runtime.shutdown_background();
    result
}

/// The error and its causes on one line, each cause once (a cause whose text the line
/// already holds, as `{source}` in a message puts it there, is not repeated).
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
