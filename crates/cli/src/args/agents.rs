//! `tidings agents`: list the agents, allow, deny or forget one.

use std::path::PathBuf;

use clap::{Args, Subcommand};

pub(super) const AGENTS_HELP: &str = "\
An agent is a program, known by what the OS says it is (its executable, its script, or on macOS
its code signature), never by the name it announces; an HTTP token made with `tidings token
create NAME` is the agent `token:NAME`. Its id is the key of its grant in settings.toml
([agents.known.ID]). allow, deny and forget edit settings.toml in place (comments kept); a
running daemon applies a deny within about a second, ending the agent's streams, and an allow
once the file has been unchanged for 5 seconds. `[agents] new` says what agents not listed get.

Examples:
  tidings agents
  tidings agents --json
  tidings agents deny python3-host-a-1a2b3c
  tidings agents allow claude-4f0e21
  tidings agents --demo-dir ./demo forget python3-host-a-1a2b3c";

/// `tidings agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// What to do; without one, list the agents.
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,

    /// Print the list as a JSON array.
    #[arg(long)]
    pub json: bool,

    /// The daemon's socket, asked for the agents it has seen [default: `TIDINGS_SOCKET`, else
    /// the platform default; with --demo-dir, <dir>/tidings.sock].
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,

    /// A demo directory (`tidings serve --demo --data-dir DIR`): its settings.toml and its
    /// socket. `--data-dir` is taken too.
    #[arg(long, value_name = "DIR", alias = "data-dir", global = true)]
    pub demo_dir: Option<PathBuf>,
}

/// `tidings agents allow|deny|forget`.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Let the agent receive what its grant allows (every type you turned on, for one new to
    /// settings.toml).
    Allow(AgentIdArg),
    /// Refuse the agent everything: its streams end and its requests are refused.
    Deny(AgentIdArg),
    /// Remove the agent's grant from settings.toml: `[agents] new` applies to it again.
    Forget(AgentIdArg),
}

/// The agent a decision is about.
#[derive(Debug, Args)]
pub struct AgentIdArg {
    /// The agent's id, as `tidings agents` lists it.
    #[arg(value_name = "ID")]
    pub id: String,
}
