//! The MCP hosts Tidings can connect (spec/hosts.md): where each keeps its config, the key
//! its servers sit under, which modes apply, and the entry and snippet for each mode, shared
//! by `tidings-mcp --print-config`, `tidings connect` and the app (docs/decisions/connect.md).

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::command::shell_quote;
use crate::paths::Os;

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
}

/// How a config file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON: no comments, no trailing commas.
    Json,
    /// JSON with comments and trailing commas (VS Code, Zed).
    Jsonc,
    /// TOML.
    Toml,
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
    pub const ALL: [Host; 6] = [
        Host::ClaudeCode,
        Host::ClaudeDesktop,
        Host::Cursor,
        Host::VsCode,
        Host::Codex,
        Host::Zed,
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
        }
    }

    /// The host called `id` (case-insensitive; `vs-code` and `code` also name VS Code).
    pub fn from_id(id: &str) -> Option<Host> {
        let id = id.to_ascii_lowercase();
        let id = match id.as_str() {
            "vs-code" | "code" => "vscode",
            "claude" => "claude-code",
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
        }
    }

    /// How its config file is written.
    pub const fn format(self) -> Format {
        match self {
            Host::ClaudeCode | Host::ClaudeDesktop | Host::Cursor => Format::Json,
            Host::VsCode | Host::Zed => Format::Jsonc,
            Host::Codex => Format::Toml,
        }
    }

    /// The top-level key its servers sit under.
    pub const fn servers_key(self) -> &'static str {
        match self {
            Host::ClaudeCode | Host::ClaudeDesktop | Host::Cursor => "mcpServers",
            Host::VsCode => "servers",
            Host::Codex => "mcp_servers",
            Host::Zed => "context_servers",
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
        }
    }

    /// The entry for `shim` in `mode`, field by field in the order written (JSON; Codex's
    /// TOML table has the same fields).
    pub fn entry_fields(self, shim: &Path, mode: Mode) -> Vec<(&'static str, Value)> {
        let mut fields = Vec::new();
        if self == Host::VsCode {
            fields.push(("type", json!("stdio")));
        }
        fields.push(("command", json!(shim.display().to_string())));
        fields.push(("args", json!(mode.args())));
        if self == Host::Codex {
            fields.push(("startup_timeout_sec", json!(10)));
            fields.push(("tool_timeout_sec", json!(60)));
        }
        fields
    }

    /// [`entry_fields`](Host::entry_fields) as one JSON object.
    pub fn entry(self, shim: &Path, mode: Mode) -> Value {
        Value::Object(
            self.entry_fields(shim, mode)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The snippet to paste into the host's config file: the whole file's shape with only
    /// Tidings' entry, and for Claude Code the `claude mcp add` line first.
    pub fn snippet(self, shim: &Path, mode: Mode) -> String {
        let fields = self.entry_fields(shim, mode);
        let body = if self.format() == Format::Toml {
            let mut out = format!("[{}.{SERVER_NAME}]", self.servers_key());
            for (key, value) in &fields {
                // JSON strings, numbers and string arrays are valid TOML values.
                let _ = write!(out, "\n{key} = {value}");
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
            Host::ClaudeCode => format!("{}\n\n{body}", claude_mcp_add(shim, mode)),
            _ => body,
        }
    }
}

/// `claude mcp add --scope user tidings -- PATH ARGS…`, quoted for a POSIX shell.
pub fn claude_mcp_add(shim: &Path, mode: Mode) -> String {
    let mut line = format!(
        "claude mcp add --scope user {SERVER_NAME} -- {}",
        shell_quote(&shim.display().to_string())
    );
    for arg in mode.args() {
        line.push(' ');
        line.push_str(&shell_quote(&arg));
    }
    line
}

/// The snippet for a host we do not know: the common `mcpServers` shape.
pub fn generic_snippet(shim: &Path, mode: Mode) -> String {
    Host::ClaudeDesktop.snippet(shim, mode)
}

/// Where the shim is, for an entry: beside the running executable (the app bundle's
/// `Contents/MacOS`, or a build's `target/…`), else in the installed app on macOS, else the
/// first on `path` (`PATH`). Absolute, or `None` when there is none.
pub fn find_shim(exe: Option<&Path>, os: Os, path: Option<&OsStr>) -> Option<PathBuf> {
    let beside = exe
        .and_then(Path::parent)
        .map(|dir| dir.join(SHIM))
        .filter(|p| p.is_file());
    let app = (os == Os::MacOs)
        .then(|| PathBuf::from(MACOS_APP_SHIM))
        .filter(|p| p.is_file());
    let on_path = || {
        std::env::split_paths(path?)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(SHIM))
            .find(|p| p.is_file())
    };
    beside.or(app).or_else(on_path)
}

/// [`find_shim`] for this process.
pub fn current_shim() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let path = std::env::var_os("PATH");
    find_shim(exe.as_deref(), Os::CURRENT, path.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_a_config_path_and_its_key() {
        let home = Path::new("/Users/ana");
        assert_eq!(
            Host::ClaudeDesktop.config_path(home, Os::MacOs),
            Path::new("/Users/ana/Library/Application Support/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            Host::ClaudeDesktop.config_path(home, Os::Linux),
            Path::new("/Users/ana/.config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            Host::VsCode.config_path(home, Os::MacOs),
            Path::new("/Users/ana/Library/Application Support/Code/User/mcp.json")
        );
        assert_eq!(
            Host::Codex.config_path(home, Os::Linux),
            Path::new("/Users/ana/.codex/config.toml")
        );
        for host in Host::ALL {
            assert_eq!(Host::from_id(host.id()), Some(host));
            assert!(host.modes().contains(&Mode::Tools));
            assert_eq!(
                host.modes().contains(&Mode::Channel),
                host == Host::ClaudeCode
            );
        }
        assert_eq!(Host::from_id("VS-Code"), Some(Host::VsCode));
        assert_eq!(Host::from_id("goose"), None);
    }

    #[test]
    fn entries_carry_the_mode_arguments_and_the_host_shape() {
        let shim = Path::new("/A/tidings-mcp");
        assert_eq!(
            Host::ClaudeCode.entry(shim, Mode::Channel),
            json!({"command": "/A/tidings-mcp", "args": ["--channel"]})
        );
        assert_eq!(
            Host::VsCode.entry(shim, Mode::Tools),
            json!({"type": "stdio", "command": "/A/tidings-mcp", "args": []})
        );
        assert_eq!(Mode::of_args(&Mode::Channel.args()), Mode::Channel);
        assert_eq!(Mode::of_args(&Mode::Events.args()), Mode::Tools);
    }

    #[test]
    fn snippets_parse_back_to_the_entry() {
        let shim = Path::new("/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp");
        for host in Host::ALL {
            let text = host.snippet(shim, Mode::Tools);
            let value: Value = if host.format() == Format::Toml {
                let table: toml::Table = text.parse().unwrap();
                serde_json::to_value(&table["mcp_servers"]["tidings"]).unwrap()
            } else {
                let json = text.rsplit("\n\n").next().unwrap();
                serde_json::from_str::<Value>(json).unwrap()[host.servers_key()]["tidings"].clone()
            };
            assert_eq!(value, host.entry(shim, Mode::Tools), "{host:?}: {text}");
        }
        assert_eq!(
            claude_mcp_add(shim, Mode::Channel),
            "claude mcp add --scope user tidings -- \
             '/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp' --channel"
        );
    }

    #[test]
    fn the_shim_beside_the_executable_comes_first() {
        let beside = tempfile::tempdir().unwrap();
        let on_path = tempfile::tempdir().unwrap();
        std::fs::write(on_path.path().join(SHIM), "").unwrap();
        let path = std::env::join_paths([on_path.path()]).unwrap();
        let exe = beside.path().join("tidings");
        assert_eq!(
            find_shim(Some(&exe), Os::Linux, Some(&path)),
            Some(on_path.path().join(SHIM))
        );
        std::fs::write(beside.path().join(SHIM), "").unwrap();
        assert_eq!(
            find_shim(Some(&exe), Os::Linux, Some(&path)),
            Some(beside.path().join(SHIM))
        );
        assert_eq!(find_shim(None, Os::Linux, None), None);
    }
}
