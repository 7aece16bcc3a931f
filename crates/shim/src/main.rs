//! `tidings-mcp`: the stdio shim an MCP client starts. It moves bytes between its
//! stdin/stdout and the Tidings daemon's Unix socket, and never opens a store (macOS credits
//! file access to the process that started us, so we must touch nothing). Only with
//! `--channel` does it parse MCP, to serve a Claude Code channel.
//!
//! Module map:
//!
//! - `args`: the flags, read with lexopt, and the `--help` text. `--print-config` prints the
//!   snippet from `tidings_platform::hosts`, the table `tidings connect` writes from.
//! - `channel`: `--channel`, a Claude Code channel fed by `events/stream`.
//! - `connect`: connect to the socket; if nobody answers, ask the OS to start the daemon
//!   and retry briefly; one-line errors that name the path.
//! - `pump`: the two byte copies and their close rules.
//! - `exit_code`: every exit code, named.
//!
//! Stdout carries MCP frames, so everything else goes to stderr.

mod args;
mod channel;
mod connect;
mod exit_code;
mod pump;

use std::path::PathBuf;
use std::process::ExitCode;

use args::Command;

fn main() -> ExitCode {
    let command = match args::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("tidings-mcp: {error}");
            return ExitCode::from(exit_code::USAGE);
        }
    };
    let code = match command {
        Command::Help => {
            print!("{}", args::USAGE);
            exit_code::SUCCESS
        }
        Command::PrintConfig {
            client,
            mode,
            socket,
        } => print_config(client, mode, socket),
        Command::Version => {
            println!("tidings-mcp {}", tidings_platform::version::LONG);
            exit_code::SUCCESS
        }
        Command::Run { socket } => run(socket, None),
        Command::Channel(args) => {
            let socket = args.socket.clone();
            run(socket, Some(args))
        }
    };
    ExitCode::from(code)
}

/// Prints the snippet that starts this very binary (its absolute path) in `mode`, naming the
/// socket (`--socket`, else `TIDINGS_SOCKET`, else the default) when the host's own
/// environment would not lead its shim there.
fn print_config(
    client: Option<tidings_platform::Host>,
    mode: tidings_platform::Mode,
    socket: Option<PathBuf>,
) -> u8 {
    use tidings_platform::{Host, Launch, hosts};
    let shim = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(path) => path,
        Err(error) => {
            eprintln!("tidings-mcp: cannot tell where this tidings-mcp is: {error}");
            return exit_code::FAILURE;
        }
    };
    let socket = match socket.map_or_else(tidings_platform::paths::socket_path, |path| {
        Ok(std::path::absolute(&path).unwrap_or(path))
    }) {
        Ok(path) => path,
        Err(error) => {
            eprintln!("tidings-mcp: {error}; or pass --socket PATH to choose the socket");
            return exit_code::CONFIG;
        }
    };
    // A host we do not know gets the common shape, and the narrowest environment.
    let host = client.unwrap_or(Host::ClaudeDesktop);
    let launch = Launch::reaching(host, &shim, mode, &socket);
    let snippet = match client {
        Some(host) => host.snippet(&launch),
        None => hosts::generic_snippet(&launch),
    };
    println!("{snippet}");
    exit_code::SUCCESS
}

/// Resolves the socket, connects (starting the daemon if we can) and pumps until the daemon
/// closes, or serves a channel when `channel` is given. Returns the exit code.
fn run(socket: Option<PathBuf>, channel: Option<args::ChannelArgs>) -> u8 {
    let path = match socket {
        Some(path) => path,
        None => match tidings_platform::paths::socket_path() {
            Ok(path) => path,
            Err(error) => {
                eprintln!("tidings-mcp: {error}; or pass --socket PATH to choose the socket");
                return exit_code::CONFIG;
            }
        },
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tidings-mcp: cannot start the async runtime: {error}");
            return exit_code::FAILURE;
        }
    };
    let code = match channel {
        Some(args) => runtime.block_on(channel::serve(&path, args)),
        None => runtime.block_on(pump_until_closed(&path)),
    };
    // tokio reads stdin on a blocking thread that stays parked in read(2) until the client
    // closes stdin, and dropping the runtime would wait for it. The daemon has closed, so we
    // are done: leave that thread behind and let returning from `main` end the process.
    runtime.shutdown_background();
    code
}

/// The byte pump: connect (starting the daemon if we can) and copy until the daemon closes.
async fn pump_until_closed(path: &std::path::Path) -> u8 {
    let launcher = tidings_platform::default_launcher();
    {
        let stream =
            match connect::connect_or_start(path, launcher.as_ref(), connect::START_WAIT).await {
                Ok(stream) => stream,
                Err(error) => {
                    eprintln!("tidings-mcp: {error}");
                    return error.exit_code();
                }
            };
        match pump::pump(stream, tokio::io::stdin(), tokio::io::stdout()).await {
            Ok(()) => exit_code::SUCCESS,
            Err(error) => {
                eprintln!(
                    "tidings-mcp: connection to {} broke: {error}",
                    path.display()
                );
                exit_code::FAILURE
            }
        }
    }
}
