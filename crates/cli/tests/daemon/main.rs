//! Integration tests for the daemon: the real `tidings` binary (through the real `tidings-mcp`
//! shim), and the engine in-process behind its real HTTP endpoint. Built as one test binary
//! (link time matters on a small machine); one module per behaviour.
//!
//! A new module starts its file with `use crate::common::{Daemon, …};` (no `mod common;`) and
//! runs every daemon through [`common::Daemon`]: `Daemon::start()`, or
//! `Daemon::builder().http().env(…).start()`.

// `tidings serve` as a child ([`common::Daemon`]), the shim client, the outside writer.
mod common;
// The engine in-process with its HTTP endpoint, a hyper client and hand-written HTTP/1.1.
mod http_common;

// `tidings agents` and `tidings token create|list|revoke` against a demo daemon and without.
mod agents_cli;
// `tidings webhooks` allow, list and remove, with a loopback receiver and without a daemon.
mod webhooks_cli;
// The app's commands: pause all, checked settings changes, the token.
mod app;
// Each agent (the program that started the shim) gets only its grant, on every path.
mod agents;
// A row whose values break their column's promise is delivered leniently.
mod bad_rows;
// `tidings-mcp --channel` as Claude Code drives it: capabilities, one note per event, restarts.
mod channel;
// `tidings status` and `tidings tail` against a demo daemon, and without one.
mod cli;
// The command line at its edges: relative socket, garbage cursor, no keychain, the banner.
mod cli_edges;
// Exit codes: the first error in the chain that has one; the chain printed once.
mod cli_exit_codes;
// Every `tidings tail` and `tidings status` line the README and `--help` show, as written.
mod documented_commands;
// The embedding API as the menu-bar app drives it: start, watch, settings, revoke, stop.
mod embedding;
// Fan-out: many filtered streams, a slow reader, a settings change, the write deadline.
mod fanout;
// A first run of the real daemon writes commented settings and says all is off.
mod first_run;
// `tidings install` / `uninstall`: dry runs for both platforms, a real run in a temporary home.
mod install;
// `tidings serve --http` as a process: no-auth URL, no keychain, bad settings, a hung keychain.
mod http_cli;
// One HTTP token per agent: its own agent and grant, revoked alone.
mod http_agent_tokens;
// The loopback HTTP endpoint: routing headers, who may connect, limits, poll and stream.
mod http_endpoint;
// The endpoint against clients that misbehave.
mod http_hardening;
// Revoking an HTTP client: Forbidden until the token is rotated.
mod http_revoke;
// `[http] enabled` and `listen` apply live.
mod http_live;
// Over HTTP, a request without a name and a legacy `initialize` client.
mod http_names;
// A legacy HTTP client gets the pull tools; an events request with no version is told so.
mod http_pull_tools;
// Webhook subscriptions over HTTP: a token's agent is their principal; --no-auth has none.
mod http_webhooks;
// A client of another uid is closed without an answer (needs root).
mod peer_uid;
// Names from Contacts on every path only under the switch; none through any method when off.
mod names;
// Notices: a first subscription notified once, switches, a failing notifier.
mod notices;
// `tidings doctor`: a healthy demo, a broken store, the bug report without personal data.
mod doctor;
// The log file: written at info, no subject, address or handle in it.
mod log_file;
// Discover, list, a poll bootstrap, then a poll that returns new rows.
mod poll_roundtrip;
// The serve process's output: a cancel is not an error; a failing stdout or stderr is survived.
mod process_output;
// The pull tools on a legacy session and on 2026-07-28, the clamp, `tidings check --consumer`.
mod pull_tools;
// Requests the daemon refuses, each with its code and `data`.
mod request_errors;
// Claude Code, Codex and Gemini CLI, set up by `tidings connect`, against a scripted model API.
mod real_hosts;
// Killed and restarted on the same data dir: a client resumes without loss or duplicates.
mod restart_resume;
// `tidings connect|disconnect|clients` on temporary homes, checked through the real shim.
mod connect;
// The official Python and TypeScript MCP SDKs through the shim: events/stream and the pull
// tools.
mod sdk_clients;
// The shim with no daemon behind the socket.
mod shim_no_daemon;
// Commits that become visible late (a held writer with a slow flush) are delivered promptly.
mod slow_flush;
// The socket on disk: modes, one daemon per socket, a stale socket, a clean shutdown.
mod socket_files;
// A store rebuilt under a live stream.
mod store_rebuild;
// chat.db deleted and created again while the daemon is down.
mod store_recreated;
// A store wiped in place under a live stream.
mod store_wiped;
// A push stream: `active`, events for new rows, heartbeats, cancel.
mod stream_delivery;
// Ten streams on one connection work; the eleventh is refused.
mod stream_limits;
// A type turned off in settings.toml under a live stream.
mod type_turned_off;
// Wire faults over the real socket and shim.
mod wire_faults;
// Webhook delivery to real receivers (plain and TLS), checked by the reference verifier.
mod webhooks;
// `tidings --version`: the workspace version and the git commit.
mod version;
