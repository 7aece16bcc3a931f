//! The command line: `tidings serve`, `tidings tail`, `tidings check`, `tidings status`,
//! `tidings agents`, `tidings webhooks`, `tidings token`, `tidings connect|disconnect|clients`,
//! `tidings install` / `uninstall`, `tidings doctor`, parsed with clap.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

mod agents;
mod token;
mod webhooks;

pub use agents::{AgentIdArg, AgentsArgs, AgentsCommand};
pub use token::{RotateArgs, TokenCommand, TokenListArgs, TokenNameArgs};
pub use webhooks::{OriginArg, WebhooksArgs, WebhooksCommand};

/// Tidings: tells local AI clients when new mail or a new message arrives.
#[derive(Debug, Parser)]
#[command(name = "tidings", version = tidings_platform::version::LONG, propagate_version = true)]
#[command(after_help = "Logs go to stderr; set TIDINGS_LOG=debug (or pass -v) for more.")]
pub struct Cli {
    /// More log output on stderr (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon without a window: the engine the app hosts, on the Unix socket.
    #[command(after_help = SERVE_HELP)]
    Serve(ServeArgs),
    /// Print one JSON line per event from a running daemon, and the cursor to resume from.
    #[command(after_help = TAIL_HELP)]
    Tail(TailArgs),
    /// Print what arrived since this consumer's last call, for hooks (silent when nothing did).
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Show whether a daemon is serving, its stores, which types are on, clients and streams.
    Status(StatusArgs),
    /// List the agents (the programs that connect) and their grants; allow, deny or forget one.
    #[command(after_help = agents::AGENTS_HELP)]
    Agents(AgentsArgs),
    /// List where webhooks may post events and the webhook subscriptions; allow or remove one.
    #[command(after_help = webhooks::WEBHOOKS_HELP)]
    Webhooks(WebhooksArgs),
    /// Show or rotate the HTTP endpoint's bearer token; create, list or revoke a token per agent.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Point an MCP client (Claude Code, Cursor, …) at Tidings, then check it connects.
    #[command(after_help = CONNECT_HELP)]
    Connect(ConnectArgs),
    /// Remove Tidings from an MCP client's config (nothing else in it changes).
    Disconnect(DisconnectArgs),
    /// List the MCP clients Tidings can connect: config file, configured, connected now.
    Clients(ClientsArgs),
    /// Start Tidings at login, and again after a crash (a launchd agent or a systemd user unit).
    #[command(after_help = INSTALL_HELP)]
    Install(InstallArgs),
    /// Stop starting Tidings at login, stop it, and remove its socket; --purge also removes
    /// settings, consumer positions and the HTTP token.
    #[command(after_help = INSTALL_HELP)]
    Uninstall(UninstallArgs),
    /// Check the daemon, socket, stores, Full Disk Access, settings and HTTP endpoint, with a
    /// fix for each failure; non-zero exit when any fails.
    #[command(after_help = DOCTOR_HELP)]
    Doctor(DoctorArgs),
}

const DOCTOR_HELP: &str = "\
The store checks use the running daemon's view (on macOS the Full Disk Access that counts is
Tidings.app's, not your terminal's); without a daemon this process probes the stores itself.
--report adds what a bug report needs: versions, OS, each store's schema profile (tables,
columns, user_version, rounded row counts), access states and the settings in counts. It holds
no address, subject, handle or allowlist entry.

Examples:
  tidings doctor
  tidings doctor --report > report.txt
  tidings doctor --demo-dir ./demo --json";

/// `tidings doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The daemon's socket [default: `TIDINGS_SOCKET`, else the platform default; with
    /// --demo-dir, <dir>/tidings.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Check a demo directory (`tidings serve --demo --data-dir DIR`): its fake home, its
    /// settings.toml and its socket. `--data-dir`, serve's name for the same directory, is
    /// taken too.
    #[arg(long, value_name = "DIR", alias = "data-dir")]
    pub demo_dir: Option<PathBuf>,

    /// Also print what a bug report needs (no personal data).
    #[arg(long)]
    pub report: bool,

    /// Print the checks (and the report) as one JSON object.
    #[arg(long)]
    pub json: bool,
}

const INSTALL_HELP: &str = "\
On macOS 13+, from the app bundle, the login item is the bundled LaunchAgent registered
through SMAppService (System Settings > General > Login Items may ask you to allow it);
otherwise a LaunchAgent plist in ~/Library/LaunchAgents loaded with launchctl. On Linux, a
systemd user unit (~/.config/systemd/user/tidings.service). A crash restarts Tidings; Quit
does not. The app's \"Start at Login\" menu item does the same.

Examples:
  tidings install --dry-run --platform macos --exe /Applications/Tidings.app/Contents/MacOS/tidings-app
  tidings install --exe /usr/local/bin/tidings      # headless: runs `tidings serve` at login
  tidings uninstall --dry-run";

/// `--platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlatformArg {
    /// launchd: the app's bundled agent, or a plist in ~/Library/LaunchAgents.
    Macos,
    /// A systemd user unit.
    Linux,
}

/// `tidings install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Print the files (in full) and the commands it would write and run; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Whose rules to follow; the other platform's only with --dry-run [default: this one].
    #[arg(long, value_enum, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,

    /// The executable to start at login: the app, or `tidings` to run `tidings serve`
    /// headless [default: the tidings-app beside this tidings].
    #[arg(long, value_name = "PATH")]
    pub exe: Option<PathBuf>,
}

/// `tidings uninstall`.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Print what it would remove and run; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Whose rules to follow; the other platform's only with --dry-run [default: this one].
    #[arg(long, value_enum, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,

    /// Also remove the settings, the consumer positions (`tidings check`) and the HTTP
    /// token from the keychain.
    #[arg(long)]
    pub purge: bool,

    /// The daemon's socket, removed when nothing serves on it [default: `TIDINGS_SOCKET`,
    /// else the platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// The mode of a `tidings connect` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// The pull tools `tidings_check` and `tidings_wait` (every host).
    Tools,
    /// MCP Events on protocol 2026-07-28 (the same entry; the check lists events).
    Events,
    /// A Claude Code channel (`tidings-mcp --channel`): events pushed into the session.
    Channel,
}

impl From<ModeArg> for tidings_platform::Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Tools => tidings_platform::Mode::Tools,
            ModeArg::Events => tidings_platform::Mode::Events,
            ModeArg::Channel => tidings_platform::Mode::Channel,
        }
    }
}

/// `tidings connect`.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// claude-code, claude-desktop, cursor, vscode, codex, zed, gemini, goose, windsurf or
    /// lm-studio.
    #[arg(required_unless_present = "list")]
    pub client: Option<String>,
    /// What the entry serves [default: tools].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Print the change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The tidings-mcp to point at [default: beside this tidings, else the app's, else on
    /// PATH].
    #[arg(long, value_name = "PATH")]
    pub shim: Option<PathBuf>,
    /// Write the entry without running it afterwards.
    #[arg(long)]
    pub no_check: bool,
    /// Same as `tidings clients`.
    #[arg(long, conflicts_with_all = ["client", "mode", "dry_run", "shim", "no_check"])]
    pub list: bool,
    /// The daemon's socket [default: `TIDINGS_SOCKET`, else the platform default]. The
    /// entry names it (`--socket PATH`) unless it is the default the host's tidings-mcp
    /// finds on its own, in the environment that host gives its servers.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `tidings disconnect`.
#[derive(Debug, Args)]
pub struct DisconnectArgs {
    /// claude-code, claude-desktop, cursor, vscode, codex, zed, gemini, goose, windsurf or
    /// lm-studio.
    pub client: String,
    /// Print the change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `tidings clients`.
#[derive(Debug, Args)]
pub struct ClientsArgs {
    /// The daemon's socket, asked who is connected [default: `TIDINGS_SOCKET`, else the
    /// platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

const CONNECT_HELP: &str = "\
Writes Tidings' entry into the client's user config (only that entry: everything else in
the file is kept as written, comments included), after copying the old file beside it as
<file>.tidings-backup-<time>. A file that is not valid JSON (or TOML, or YAML) is refused
and left untouched. Then runs the entry as the client would and completes an MCP handshake: it
prints \"Connected ✓\" or what failed. A running client must be restarted to see the change.

Examples:
  tidings connect claude-code
  tidings connect claude-code --mode channel
  tidings connect cursor --dry-run
  tidings connect goose
  tidings disconnect cursor
  tidings clients";

const SERVE_HELP: &str = "\
Without --demo, reads the stores in your home (~/Library/Mail, ~/Library/Messages) and the
settings in the config dir (TIDINGS_CONFIG_DIR overrides it). With --demo, builds a fake home
with both stores under --data-dir (or a temporary directory), turns both types on for the
example.com/org/net domains and +1 202 555 01xx, and appends a new mail and message every
--simulate seconds. Stops cleanly on Ctrl-C or SIGTERM.

With --http ADDR (or [http] enabled = true in settings.toml), also serves MCP over Streamable
HTTP at http://ADDR/mcp, loopback only, with a bearer token from the OS keychain (see
`tidings token show`). [http] applies live: turning it on or off or changing listen starts,
stops or moves the endpoint. --http holds it on at ADDR for the whole run, whatever the
settings say. Only --demo may add --no-auth.

Examples:
  tidings serve --demo
  tidings serve --http 127.0.0.1:3917
  tidings serve --demo --http 127.0.0.1:3917 --no-auth --conformance-controls
                                        # for an outside conformance suite
  tidings serve --demo --data-dir ./demo --simulate 5
  tidings serve --demo --data-dir ./demo --simulate off   # write to the stores yourself";

const TAIL_HELP: &str = "\
Filters are repeatable; the daemon's allowlist applies on top of them.
On exit (Ctrl-C, or the stream ending) it prints `resume with --cursor ...` on stderr.

Examples:
  tidings tail mail.received --domains example.com
  tidings tail messages.received --from +12025550143 --cursor v1.2049-1234.87
  tidings tail mail.received --domains example.com --mailboxes INBOX --max-age 2h";

/// `tidings serve`.
#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)] // command-line switches, each its own flag
pub struct ServeArgs {
    /// The socket to serve on [default: `TIDINGS_SOCKET`, else the platform default; with
    /// --demo, <data-dir>/tidings.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Serve fake stores built from the fixtures, with a demo allowlist and a simulator.
    #[arg(long)]
    pub demo: bool,

    /// The demo's directory (the fake home, settings.toml, the socket). An existing one is
    /// reused, so a restart resumes where it stopped [default: a temporary directory].
    #[arg(long, value_name = "DIR", requires = "demo")]
    pub data_dir: Option<PathBuf>,

    /// Seconds between simulated new mails and messages, or `off` to let another writer
    /// drive the stores.
    #[arg(long, value_name = "SECS|off", default_value = "2", value_parser = parse_simulate)]
    pub simulate: Simulate,

    /// Also serve Streamable HTTP on this loopback address and port, e.g. 127.0.0.1:3917, for
    /// the whole run [default: [http] in settings.toml, live, which is off].
    #[arg(long, value_name = "ADDR", value_parser = parse_loopback)]
    pub http: Option<SocketAddr>,

    /// With --demo and --http: no bearer token, for tools that cannot send headers. Any
    /// process on this machine can then read the demo's events.
    #[arg(long, requires_all = ["demo", "http"])]
    pub no_auth: bool,

    /// With --demo: also offer the three tools an outside conformance suite drives a server
    /// with (`events_conformance_yield_error`, _`yield_gap`, _terminate). They rebuild the demo
    /// stores and turn types off, so they are never offered unless asked for.
    #[arg(long, requires = "demo")]
    pub conformance_controls: bool,

    /// Heartbeat period of push streams in milliseconds (tests only).
    #[arg(long, value_name = "N", hide = true)]
    pub heartbeat_ms: Option<u64>,

    /// How long a stream's frame may wait to be written before the stream ends, in
    /// milliseconds (tests only).
    #[arg(long, value_name = "N", hide = true)]
    pub write_deadline_ms: Option<u64>,

    /// Every stream reads on its own instead of sharing one read per change (benchmarks only).
    #[arg(long, hide = true)]
    pub no_shared_reads: bool,

    /// Period of the hub's store check while a stream is live, in milliseconds (tests only).
    #[arg(long, value_name = "N", hide = true)]
    pub live_check_ms: Option<u64>,

    /// Period of `tidings_wait`'s progress notifications in milliseconds (tests only).
    #[arg(long, value_name = "N", hide = true)]
    pub tool_progress_ms: Option<u64>,
}

/// `--http`: a loopback address and port, refused before anything starts otherwise (the
/// endpoint's own check stays, for `[http] listen` in settings).
fn parse_loopback(text: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = text
        .parse()
        .map_err(|_| format!("`{text}` is not an address and port such as 127.0.0.1:3917"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "`{text}` is not a loopback address; the HTTP endpoint serves only this machine \
             (127.0.0.1 or [::1])"
        ));
    }
    Ok(addr)
}

/// `--simulate`: a period, or off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simulate(pub Option<Duration>);

fn parse_simulate(text: &str) -> Result<Simulate, String> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(Simulate(None));
    }
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is neither a number of seconds nor `off`"))?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "`{text}` must be between 0 and 86400 seconds, or `off`"
        ));
    }
    Ok(Simulate(Some(Duration::from_secs_f64(secs))))
}

/// `tidings tail`.
#[derive(Debug, Args)]
pub struct TailArgs {
    /// The event type: mail.received or messages.received.
    #[arg(value_name = "TYPE")]
    pub event_type: String,

    /// A sender: an address, or a phone number in E.164 (repeatable).
    #[arg(long = "from", value_name = "SENDER")]
    pub from: Vec<String>,

    /// A sender domain; example.com also matches eu.example.com (repeatable).
    #[arg(long = "domains", value_name = "DOMAIN")]
    pub domains: Vec<String>,

    /// A mailbox path such as INBOX or Clients/Acme (mail.received; repeatable).
    #[arg(long = "mailboxes", value_name = "MAILBOX")]
    pub mailboxes: Vec<String>,

    /// A chat's identifier, as events show it in chat.identifier (messages.received;
    /// repeatable; narrows --from, never a display name).
    #[arg(long = "chats", value_name = "CHAT")]
    pub chats: Vec<String>,

    /// One service: iMessage, SMS or RCS (messages.received).
    #[arg(long, value_name = "SERVICE")]
    pub service: Option<String>,

    /// One account, by its address as events show it in `account` (mail.received).
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,

    /// Resume after this cursor (as printed when a previous tail ended).
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,

    /// Replay at most this far back, e.g. 30s, 10m, 2h, 1d: with --cursor, from the cursor
    /// but no further back; without, the events of that last stretch, then new ones.
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    pub max_age: Option<Duration>,

    /// The daemon's socket [default: `TIDINGS_SOCKET`, else the platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

const CHECK_HELP: &str = "\
Each consumer's position is kept in the data directory (TIDINGS_DATA_DIR overrides it), in
consumers/NAME.cursor. The first call records now and prints nothing; later calls print what
arrived since, and nothing (exit 0) when nothing did. Text output stays under 10,000
characters, what Claude Code shows of a hook.

Examples:
  tidings check --consumer claude-code
  tidings check --consumer codex --format json --type mail.received --domains example.com";

/// `tidings check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Whose position to continue from: letters, digits, `-` and `_`, at most 64.
    #[arg(long, value_name = "NAME")]
    pub consumer: String,

    /// `text` (one line per event, for a model) or `json` (one object).
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,

    /// An event type to read (repeatable) [default: every type turned on].
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,

    /// A sender: an address, or a phone number in E.164 (repeatable).
    #[arg(long = "from", value_name = "SENDER")]
    pub from: Vec<String>,

    /// A sender domain; example.com also matches eu.example.com (repeatable).
    #[arg(long = "domains", value_name = "DOMAIN")]
    pub domains: Vec<String>,

    /// The daemon's socket [default: `TIDINGS_SOCKET`, else the platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `tidings check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// One line per event, quoted and capped, with a count.
    Text,
    /// `{"events": […], "cursor": …, "has_more": …}` on one line.
    Json,
}

/// `tidings status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The daemon's socket [default: `TIDINGS_SOCKET`, else the platform default].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Print the daemon's status as JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests;
