//! `tidings webhooks`: list the destinations and the webhook subscriptions, allow or remove a
//! destination.

use std::path::PathBuf;

use clap::{Args, Subcommand};

pub(super) const WEBHOOKS_HELP: &str = "\
A webhook subscription has the daemon POST each event to an agent's URL. Its URL is accepted
only if its origin (scheme, host and port) is on your list of destinations, `[webhooks] allow`
in settings.toml: https:// for any host, http:// only for this Mac (localhost, 127.0.0.1,
[::1]). allow and remove edit settings.toml in place (comments kept); a running daemon applies
a remove within about a second, ending that destination's subscriptions, and an allow once the
file has been unchanged for 5 seconds. Subscriptions are shown by destination only, never by
their URL's path or secret.

Examples:
  tidings webhooks
  tidings webhooks --json
  tidings webhooks allow https://hooks.example.com
  tidings webhooks allow http://127.0.0.1:8787
  tidings webhooks --demo-dir ./demo remove https://hooks.example.com";

/// `tidings webhooks`.
#[derive(Debug, Args)]
pub struct WebhooksArgs {
    /// What to do; without one, list the destinations and subscriptions.
    #[command(subcommand)]
    pub command: Option<WebhooksCommand>,

    /// Print the list as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// The daemon's socket, asked for its subscriptions [default: `TIDINGS_SOCKET`, else the
    /// platform default; with --demo-dir, <dir>/tidings.sock].
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,

    /// A demo directory (`tidings serve --demo --data-dir DIR`): its settings.toml and its
    /// socket. `--data-dir` is taken too.
    #[arg(long, value_name = "DIR", alias = "data-dir", global = true)]
    pub demo_dir: Option<PathBuf>,
}

/// `tidings webhooks allow|remove`.
#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Add a destination: webhook subscriptions may then post events to it.
    Allow(OriginArg),
    /// Take a destination off the list: its subscriptions end (their receivers are told).
    Remove(OriginArg),
}

/// The destination a decision is about.
#[derive(Debug, Args)]
pub struct OriginArg {
    /// An origin: `https://host[:port]`, or `http://127.0.0.1:PORT` for this Mac.
    #[arg(value_name = "ORIGIN")]
    pub origin: String,
}
