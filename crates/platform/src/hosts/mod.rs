//! The MCP hosts Tidings can connect (docs/clients.md): where each keeps its config, the key
//! its servers sit under, which modes apply, and the entry and snippet for each mode, shared
//! by `tidings-mcp --print-config`, `tidings connect` and the app (docs/decisions/connect.md).
//!
//! - `env`: the environment each host gives its servers, and when an entry names the socket.
//! - `launch`: what an entry starts ([`Launch`]) and where the shim is found.

mod env;
mod launch;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::command::shell_quote;
use crate::paths::Os;
use env::{CODEX_ENV, GEMINI_REDACTION, NARROW_ENV};
pub use env::{Redaction, ServerEnv, socket_arg};
pub use launch::{Launch, current_shim, find_shim};

/// The name of Tidings' entry in every host's config.
pub const SERVER_NAME: &str = "tidings";

/// The shim's file name.
pub const SHIM: &str = "tidings-mcp";

/// Where the app installs the shim on macOS, when nothing nearer is found.
pub const MACOS_APP_SHIM: &str = "/Applications/Tidings.app/Contents/MacOS/tidings-mcp";

/// A host with a config file we know how to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// Claude Code (terminal CLI), user scope.
    ClaudeCode,
    /// The Claude desktop app.
    ClaudeDesktop,
    /// Cursor.
    Cursor,
    /// VS Code (Copilot agent mode), user `mcp.json`.
    VsCode,
    /// Codex CLI.
    Codex,
    /// Zed.
    Zed,
    /// Gemini CLI (terminal), user `settings.json`.
    GeminiCli,
    /// Goose, CLI and desktop app (one `config.yaml` for both).
    Goose,
    /// Windsurf (Cascade).
    Windsurf,
    /// LM Studio.
    LmStudio,
}

/// How a config file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON: no comments, no trailing commas.
    Json,
    /// JSON with comments and trailing commas (VS Code, Zed).
    Jsonc,
    /// JSON with comments but no trailing commas (Gemini CLI, which strips comments and then
    /// hands the text to `JSON.parse`).
    JsonComments,
    /// TOML.
    Toml,
    /// YAML (Goose).
    Yaml,
}

/// What the entry makes the shim serve. `Events` and `Tools` write the same entry (the
/// daemon serves both on every connection; the host's protocol era decides which it gets)
/// and differ only in what the check after writing asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// MCP Events (`events/*`) on 2026-07-28, for SDK-built agents.
    Events,
    /// The pull tools `tidings_check` / `tidings_wait`, for today's hosts.
    Tools,
    /// A Claude Code channel: `tidings-mcp --channel`.
    Channel,
}

impl Mode {
    /// Every mode, in the order shown.
    pub const ALL: [Mode; 3] = [Mode::Tools, Mode::Events, Mode::Channel];

    /// Its name on command lines and in the app.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Events => "events",
            Mode::Tools => "tools",
            Mode::Channel => "channel",
        }
    }

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The shim's arguments for this mode.
    pub fn args(self) -> Vec<String> {
        match self {
            Mode::Events | Mode::Tools => Vec::new(),
            Mode::Channel => vec!["--channel".to_owned()],
        }
    }

    /// The mode an entry's arguments say: channel with `--channel`, else tools (which
    /// cannot be told from events: the entries are the same).
    pub fn of_args(args: &[String]) -> Mode {
        if args.iter().any(|a| a == "--channel") {
            Mode::Channel
        } else {
            Mode::Tools
        }
    }
}

impl Host {
    /// Every host, in the order shown.
    pub const ALL: [Host; 10] = [
        Host::ClaudeCode,
        Host::ClaudeDesktop,
        Host::Cursor,
        Host::VsCode,
        Host::Codex,
        Host::Zed,
        Host::GeminiCli,
        Host::Goose,
        Host::Windsurf,
        Host::LmStudio,
    ];

    /// Its name on command lines (`tidings connect claude-code`).
    pub const fn id(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::ClaudeDesktop => "claude-desktop",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Codex => "codex",
            Host::Zed => "zed",
            Host::GeminiCli => "gemini",
            Host::Goose => "goose",
            Host::Windsurf => "windsurf",
            Host::LmStudio => "lm-studio",
        }
    }

    /// The host called `id` (case-insensitive; `vs-code` and `code` also name VS Code,
    /// `gemini-cli` Gemini CLI, `lmstudio` LM Studio).
    pub fn from_id(id: &str) -> Option<Host> {
        let id = id.to_ascii_lowercase();
        let id = match id.as_str() {
            "vs-code" | "code" => "vscode",
            "claude" => "claude-code",
            "gemini-cli" => "gemini",
            "lmstudio" => "lm-studio",
            other => other,
        };
        Host::ALL.into_iter().find(|h| h.id() == id)
    }

    /// Its name for people.
    pub const fn display_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::ClaudeDesktop => "Claude Desktop",
            Host::Cursor => "Cursor",
            Host::VsCode => "VS Code",
            Host::Codex => "Codex",
            Host::Zed => "Zed",
            Host::GeminiCli => "Gemini CLI",
            Host::Goose => "Goose",
            Host::Windsurf => "Windsurf",
            Host::LmStudio => "LM Studio",
        }
    }

    /// How its config file is written.
    pub const fn format(self) -> Format {
        match self {
            // Windsurf and LM Studio do not say whether they read comments: strict JSON, so
            // what we accept they read.
            Host::ClaudeCode
            | Host::ClaudeDesktop
            | Host::Cursor
            | Host::Windsurf
            | Host::LmStudio => Format::Json,
            Host::VsCode | Host::Zed => Format::Jsonc,
            Host::GeminiCli => Format::JsonComments,
            Host::Codex => Format::Toml,
            Host::Goose => Format::Yaml,
        }
    }

    /// The top-level key its servers sit under.
    pub const fn servers_key(self) -> &'static str {
        match self {
            Host::ClaudeCode
            | Host::ClaudeDesktop
            | Host::Cursor
            | Host::GeminiCli
            | Host::Windsurf
            | Host::LmStudio => "mcpServers",
            Host::VsCode => "servers",
            Host::Codex => "mcp_servers",
            Host::Zed => "context_servers",
            Host::Goose => "extensions",
        }
    }

    /// The modes that apply: channels only on Claude Code.
    pub fn modes(self) -> &'static [Mode] {
        match self {
            Host::ClaudeCode => &[Mode::Tools, Mode::Channel, Mode::Events],
            _ => &[Mode::Tools, Mode::Events],
        }
    }

    /// Its user config file under `home` on `os`. On Linux, Claude Desktop is taken to live
    /// where the community builds keep it (`~/.config/Claude`), VS Code in `~/.config/Code`.
    /// LM Studio's is in its home folder ([`lm_studio_home`]), which this reads the disk for.
    pub fn config_path(self, home: &Path, os: Os) -> PathBuf {
        let app_support = |rest: &str| match os {
            Os::MacOs => home.join("Library/Application Support").join(rest),
            Os::Linux => home.join(".config").join(rest),
        };
        match self {
            Host::ClaudeCode => home.join(".claude.json"),
            Host::ClaudeDesktop => app_support("Claude/claude_desktop_config.json"),
            Host::Cursor => home.join(".cursor/mcp.json"),
            Host::VsCode => app_support("Code/User/mcp.json"),
            Host::Codex => home.join(".codex/config.toml"),
            Host::Zed => home.join(".config/zed/settings.json"),
            Host::GeminiCli => home.join(".gemini/settings.json"),
            // Goose keeps XDG paths on macOS too.
            Host::Goose => home.join(".config/goose/config.yaml"),
            Host::Windsurf => home.join(".codeium/windsurf/mcp_config.json"),
            Host::LmStudio => lm_studio_home(home).join("mcp.json"),
        }
    }

    /// The process names that mean the host is running on `os` (it reads its config at
    /// start, so a running one must be restarted).
    pub const fn process_names(self, os: Os) -> &'static [&'static str] {
        match (self, os) {
            (Host::ClaudeCode, _) => &["claude"],
            (Host::ClaudeDesktop, Os::MacOs) => &["Claude"],
            (Host::ClaudeDesktop, Os::Linux) => &["claude-desktop"],
            (Host::Cursor, Os::MacOs) => &["Cursor"],
            (Host::Cursor, Os::Linux) => &["cursor"],
            (Host::VsCode, Os::MacOs) => &["Code", "Electron"],
            (Host::VsCode, Os::Linux) => &["code"],
            (Host::Codex, _) => &["codex"],
            (Host::Zed, Os::MacOs) => &["zed"],
            (Host::Zed, Os::Linux) => &["zed", "zed-editor"],
            // A node CLI: `gemini` in `cmdline` on Linux; on macOS `pgrep -x` sees `node`
            // unless it runs as Google's single binary, so the warning may not come there.
            (Host::GeminiCli, _) => &["gemini"],
            // The CLI, the desktop app's server (which starts the extensions), and the app.
            (Host::Goose, Os::MacOs) => &["goose", "goosed", "Goose"],
            (Host::Goose, Os::Linux) => &["goose", "goosed", "Goose", "goose-desktop"],
            (Host::Windsurf, Os::MacOs) => &["Windsurf"],
            (Host::Windsurf, Os::Linux) => &["windsurf"],
            (Host::LmStudio, Os::MacOs) => &["LM Studio"],
            (Host::LmStudio, Os::Linux) => &["lm-studio", "lmstudio"],
        }
    }

    /// The environment it gives the stdio servers it starts: Claude Code and Goose pass
    /// their own whole; Codex a fixed list; Gemini CLI its own less secret-looking names;
    /// for the others we assume the narrowest known.
    pub const fn server_env(self) -> ServerEnv {
        match self {
            Host::ClaudeCode | Host::Goose => ServerEnv::Inherit,
            Host::Codex => ServerEnv::Only(CODEX_ENV),
            Host::GeminiCli => ServerEnv::Redacted(&GEMINI_REDACTION),
            Host::ClaudeDesktop
            | Host::Cursor
            | Host::VsCode
            | Host::Zed
            | Host::Windsurf
            | Host::LmStudio => ServerEnv::Only(NARROW_ENV),
        }
    }

    /// Whether `client_name` (the `clientInfo.name` a connection announced) is this host.
    pub fn announced_as(self, client_name: &str) -> bool {
        let name = client_name.to_ascii_lowercase();
        match self {
            Host::ClaudeCode => name == "claude-code",
            Host::ClaudeDesktop => name == "claude-ai" || name == "claude desktop",
            Host::Cursor => name.starts_with("cursor"),
            Host::VsCode => name == "visual studio code" || name == "vscode",
            Host::Codex => name.starts_with("codex"),
            Host::Zed => name == "zed",
            Host::GeminiCli => name.starts_with("gemini-cli"),
            // `goose` in older releases; today the front end's name (`goose-cli`, …).
            Host::Goose => name == "goose" || name.starts_with("goose-"),
            Host::Windsurf => name.starts_with("windsurf"),
            Host::LmStudio => ["lm studio", "lm-studio", "lmstudio"]
                .iter()
                .any(|p| name.starts_with(p)),
        }
    }

    /// The entry for `launch`, field by field in the order written (JSON; Codex's TOML
    /// table and Goose's YAML mapping have the same fields).
    pub fn entry_fields(self, launch: &Launch<'_>) -> Vec<(&'static str, Value)> {
        if self == Host::Goose {
            // Goose's own field names and order (`ExtensionEntry`: `enabled`, then the
            // stdio config); `name` is what it shows, `timeout` its per-call limit in seconds.
            return vec![
                ("enabled", json!(true)),
                ("type", json!("stdio")),
                ("name", json!(SERVER_NAME)),
                ("description", json!(GOOSE_DESCRIPTION)),
                ("cmd", json!(launch.shim.display().to_string())),
                ("args", json!(launch.args())),
                ("envs", json!({})),
                ("timeout", json!(GOOSE_TIMEOUT_S)),
            ];
        }
        let mut fields = Vec::new();
        if self == Host::VsCode {
            fields.push(("type", json!("stdio")));
        }
        fields.push(("command", json!(launch.shim.display().to_string())));
        fields.push(("args", json!(launch.args())));
        if self == Host::Codex {
            fields.push(("startup_timeout_sec", json!(10)));
            fields.push(("tool_timeout_sec", json!(60)));
        }
        fields
    }

    /// [`entry_fields`](Host::entry_fields) as one JSON object.
    pub fn entry(self, launch: &Launch<'_>) -> Value {
        Value::Object(
            self.entry_fields(launch)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The snippet to paste into the host's config file: the whole file's shape with only
    /// Tidings' entry, and for Claude Code the `claude mcp add` line first.
    pub fn snippet(self, launch: &Launch<'_>) -> String {
        let fields = self.entry_fields(launch);
        let body = if self.format() == Format::Toml {
            let mut out = format!("[{}.{SERVER_NAME}]", self.servers_key());
            for (key, value) in &fields {
                // JSON strings, numbers and string arrays are valid TOML values.
                let _ = write!(out, "\n{key} = {value}");
            }
            out
        } else if self.format() == Format::Yaml {
            let mut out = format!("{}:\n  {SERVER_NAME}:", self.servers_key());
            for (key, value) in &fields {
                // JSON is YAML's flow style: quoted strings, `[...]` and `{}` parse as written.
                let _ = write!(out, "\n    {key}: {value}");
            }
            out
        } else {
            let lines: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("      \"{k}\": {v}"))
                .collect();
            format!(
                "{{\n  \"{}\": {{\n    \"{SERVER_NAME}\": {{\n{}\n    }}\n  }}\n}}",
                self.servers_key(),
                lines.join(",\n")
            )
        };
        match self {
            Host::ClaudeCode => format!("{}\n\n{body}", claude_mcp_add(launch)),
            _ => body,
        }
    }
}

/// Goose's per-call limit written in its entry, seconds: its default, stated so the clamp
/// in the pull tools (280 s) stays below it.
pub const GOOSE_TIMEOUT_S: u64 = 300;

/// What Goose shows beside the extension's name.
const GOOSE_DESCRIPTION: &str = "New mail and messages from Tidings (envelopes only)";

/// LM Studio's home folder under `home`: the folder named in `~/.lmstudio-home-pointer`
/// when that file names an absolute directory (the app writes it; it moves the home), else
/// `~/.cache/lm-studio` when only that one exists (installs older than 0.3.x keep it there),
/// else `~/.lmstudio`.
pub fn lm_studio_home(home: &Path) -> PathBuf {
    let pointed = std::fs::read_to_string(home.join(".lmstudio-home-pointer"))
        .ok()
        .map(|text| PathBuf::from(text.trim()))
        .filter(|p| p.is_absolute() && p.is_dir());
    if let Some(dir) = pointed {
        return dir;
    }
    let current = home.join(".lmstudio");
    let legacy = home.join(".cache/lm-studio");
    if !current.is_dir() && legacy.is_dir() {
        legacy
    } else {
        current
    }
}

/// `claude mcp add --scope user tidings -- PATH ARGS…`, quoted for a POSIX shell.
pub fn claude_mcp_add(launch: &Launch<'_>) -> String {
    let mut line = format!(
        "claude mcp add --scope user {SERVER_NAME} -- {}",
        shell_quote(&launch.shim.display().to_string())
    );
    for arg in launch.args() {
        line.push(' ');
        line.push_str(&shell_quote(&arg));
    }
    line
}

/// The snippet for a host we do not know: the common `mcpServers` shape.
pub fn generic_snippet(launch: &Launch<'_>) -> String {
    Host::ClaudeDesktop.snippet(launch)
}

#[cfg(test)]
mod tests;
