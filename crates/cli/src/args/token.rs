//! `tidings token`: the endpoint's token, and one token per agent.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `tidings token`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Print the endpoint's bearer token for `Authorization: Bearer <token>`.
    Show,
    /// Replace the endpoint's token; a running daemon switches at once and ends streams opened
    /// with the old one.
    Rotate(RotateArgs),
    /// Make a bearer token for one agent, NAME, and print it (once: only its hash is kept).
    #[command(after_help = TOKEN_CREATE_HELP)]
    Create(TokenNameArgs),
    /// List the agents' tokens: names and when each was made (never the tokens).
    List(TokenListArgs),
    /// Remove agent NAME's token; a running daemon ends its streams and refuses it at once.
    Revoke(TokenNameArgs),
}

const TOKEN_CREATE_HELP: &str = "\
Each agent's token is its own agent in Tidings, `token:NAME`, with its own grant in
settings.toml ([agents.known.ID]; `tidings agents` lists its id once it has made a request). The
endpoint's own token (`tidings token show`) stays the agent `token:http`. Tokens are kept as
SHA-256 hashes in agent-tokens.json beside settings.toml (mode 0600); a running daemon reads it
again when it changes. NAME: lower-case letters, digits and `-`, at most 32, not `http`.

Examples:
  tidings token create cursor
  tidings token list
  tidings token revoke cursor";

/// `tidings token create|revoke`.
#[derive(Debug, Args)]
pub struct TokenNameArgs {
    /// The agent's name: lower-case letters, digits and `-`, at most 32.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The running daemon's socket, told to read the tokens again [default: `TIDINGS_SOCKET`,
    /// else the platform default; with --demo-dir, <dir>/tidings.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// A demo directory (`tidings serve --demo --data-dir DIR`): its tokens file and socket.
    #[arg(long, value_name = "DIR", alias = "data-dir")]
    pub demo_dir: Option<PathBuf>,
}

/// `tidings token list`.
#[derive(Debug, Args)]
pub struct TokenListArgs {
    /// A demo directory (`tidings serve --demo --data-dir DIR`): its tokens file.
    #[arg(long, value_name = "DIR", alias = "data-dir")]
    pub demo_dir: Option<PathBuf>,
}

/// `tidings token rotate`.
#[derive(Debug, Args)]
pub struct RotateArgs {
    /// The running daemon's socket, told to switch [default: `TIDINGS_SOCKET`, else the
    /// platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}
