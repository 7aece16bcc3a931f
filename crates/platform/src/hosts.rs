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

/// What an entry starts: the shim, in a mode, told which socket to use when the host's
/// environment would not lead it to the daemon's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch<'a> {
    /// The absolute path of `tidings-mcp`.
    pub shim: &'a Path,
    /// What it serves.
    pub mode: Mode,
    /// `--socket PATH` for the entry; `None` when the shim finds the daemon's socket by
    /// itself in the host's environment ([`socket_arg`]).
    pub socket: Option<&'a Path>,
}

impl<'a> Launch<'a> {
    /// The shim in `mode`, finding the socket by itself.
    pub const fn new(shim: &'a Path, mode: Mode) -> Launch<'a> {
        Launch {
            shim,
            mode,
            socket: None,
        }
    }

    /// The same, naming `socket` (or not, for `None`).
    #[must_use]
    pub const fn with_socket(self, socket: Option<&'a Path>) -> Launch<'a> {
        Launch { socket, ..self }
    }

    /// The shim's arguments: `--socket PATH` when needed, then the mode's.
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(socket) = self.socket {
            args.push("--socket".to_owned());
            args.push(socket.display().to_string());
        }
        args.extend(self.mode.args());
        args
    }
}

/// The environment a host gives the stdio servers it starts. A server cannot rely on any
/// variable the host drops: Codex, for one, passes a short fixed list, so `TIDINGS_SOCKET`
/// and `XDG_RUNTIME_DIR` never reach the shim there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerEnv {
    /// The host's own environment, whole (Claude Code).
    Inherit,
    /// Only these variables of the host's environment (plus the entry's `env`).
    Only(&'static [&'static str]),
    /// The host's own environment less the variables whose names look like secrets
    /// (Gemini CLI).
    Redacted(&'static Redaction),
}

/// Which variables a redacting host drops, by name: a variable it keeps by name or prefix
/// passes; one it drops by name, or whose upper-cased name contains a fragment, does not;
/// any other passes. Hosts that also drop variables by value (a value that looks like a key)
/// are not modelled: no variable the shim reads holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redaction {
    /// Kept whatever their names contain.
    pub keep: &'static [&'static str],
    /// Kept by prefix.
    pub keep_prefixes: &'static [&'static str],
    /// Dropped by name.
    pub drop: &'static [&'static str],
    /// Dropped when the upper-cased name contains one of these.
    pub drop_fragments: &'static [&'static str],
}

impl Redaction {
    fn passes(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        if self.keep_prefixes.iter().any(|p| upper.starts_with(p))
            || self.keep.contains(&upper.as_str())
        {
            return true;
        }
        !(self.drop.contains(&upper.as_str())
            || self.drop_fragments.iter().any(|f| upper.contains(f)))
    }
}

/// Gemini CLI 0.61's rule for stdio MCP servers (`sanitizeEnvironment` in its core, with
/// redaction forced on for MCP servers): its own environment less secret-looking names.
/// In GitHub Actions (`GITHUB_SHA` set) it keeps only `keep`; that case is not modelled.
const GEMINI_REDACTION: Redaction = Redaction {
    keep: &[
        "PATH",
        "HOME",
        "LANG",
        "SHELL",
        "TMPDIR",
        "USER",
        "LOGNAME",
        "TERM",
        "COLORTERM",
    ],
    keep_prefixes: &["GEMINI_CLI_", "GIT_CONFIG_"],
    drop: &[
        "CLIENT_ID",
        "DB_URI",
        "CONNECTION_STRING",
        "AWS_DEFAULT_REGION",
        "AZURE_CLIENT_ID",
        "AZURE_TENANT_ID",
        "SLACK_WEBHOOK_URL",
        "TWILIO_ACCOUNT_SID",
        "DATABASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_ACCOUNT",
        "FIREBASE_PROJECT_ID",
    ],
    drop_fragments: &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "KEY",
        "AUTH",
        "CREDENTIAL",
        "CREDS",
        "PRIVATE",
        "CERT",
    ],
};

/// What Codex passes its MCP servers on macOS and Linux, whatever the shell had: its fixed
/// list of variables, plus the CA-bundle ones it forwards for TLS.
const CODEX_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CODEX_CA_CERTIFICATE",
];

/// The narrowest environment a host is known to give: the TypeScript MCP SDK's default for a
/// stdio server, which hosts built on it pass unless the entry adds more. Assumed for every
/// host whose own rule we have not observed.
const NARROW_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

impl ServerEnv {
    /// Whether a variable called `name` reaches the server.
    pub fn passes(self, name: &str) -> bool {
        match self {
            ServerEnv::Inherit => true,
            ServerEnv::Only(names) => names.contains(&name),
            ServerEnv::Redacted(rule) => rule.passes(name),
        }
    }

    /// The variables of `vars` (a process's environment) that reach the server.
    pub fn filter<I>(self, vars: I) -> Vec<(std::ffi::OsString, std::ffi::OsString)>
    where
        I: IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    {
        vars.into_iter()
            .filter(|(name, _)| name.to_str().is_some_and(|n| self.passes(n)))
            .collect()
    }
}

/// `Some(socket)` when the shim, started by `host` from a process whose environment is `env`,
/// would not find `socket` by itself: the entry must then name it. `env` is the environment
/// `tidings connect` (or the app) runs in, which the host is assumed to share, less
/// `TIDINGS_SOCKET`: a variable set for one command is gone when the host starts later, so
/// the entry names any socket but the platform default the host's shim finds on its own.
pub fn socket_arg<'a>(
    host: Host,
    socket: &'a Path,
    env: &impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<&'a Path> {
    let passed = |name: &str| {
        (name != crate::paths::SOCKET_ENV && host.server_env().passes(name))
            .then(|| env(name))
            .flatten()
    };
    match crate::paths::socket_path_in(&passed) {
        Ok(found) if found == socket => None,
        _ => Some(socket),
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
        assert_eq!(Host::from_id("notepad"), None);
    }

    #[test]
    fn the_four_newer_hosts_have_their_paths_keys_and_names() {
        let home = Path::new("/Users/ana");
        let cases = [
            (
                Host::GeminiCli,
                "gemini",
                "Gemini CLI",
                ".gemini/settings.json",
                "mcpServers",
            ),
            (
                Host::Goose,
                "goose",
                "Goose",
                ".config/goose/config.yaml",
                "extensions",
            ),
            (
                Host::Windsurf,
                "windsurf",
                "Windsurf",
                ".codeium/windsurf/mcp_config.json",
                "mcpServers",
            ),
            (
                Host::LmStudio,
                "lm-studio",
                "LM Studio",
                ".lmstudio/mcp.json",
                "mcpServers",
            ),
        ];
        for (host, id, name, path, key) in cases {
            assert_eq!(host.id(), id);
            assert_eq!(host.display_name(), name);
            assert_eq!(host.servers_key(), key, "{host:?}");
            for os in [Os::MacOs, Os::Linux] {
                assert_eq!(
                    host.config_path(home, os),
                    home.join(path),
                    "{host:?} {os:?}"
                );
            }
            assert_eq!(host.modes(), [Mode::Tools, Mode::Events]);
        }
        assert_eq!(Host::GeminiCli.format(), Format::JsonComments);
        assert_eq!(Host::Goose.format(), Format::Yaml);
        assert_eq!(Host::Windsurf.format(), Format::Json);
        assert_eq!(Host::LmStudio.format(), Format::Json);
        assert_eq!(Host::from_id("Gemini-CLI"), Some(Host::GeminiCli));
        assert_eq!(Host::from_id("lmstudio"), Some(Host::LmStudio));
        assert_eq!(Host::ALL.len(), 10);

        assert!(Host::GeminiCli.announced_as("gemini-cli-mcp-client"));
        assert!(Host::Goose.announced_as("goose") && Host::Goose.announced_as("goose-cli"));
        assert!(!Host::Goose.announced_as("gooseberry"));
        assert!(Host::Windsurf.announced_as("windsurf-client"));
        assert!(Host::LmStudio.announced_as("LM Studio"));
        assert!(!Host::Zed.announced_as("gemini-cli-mcp-client"));
        assert_eq!(Host::LmStudio.process_names(Os::MacOs), ["LM Studio"]);
        assert_eq!(Host::Windsurf.process_names(Os::Linux), ["windsurf"]);
        assert!(Host::Goose.process_names(Os::MacOs).contains(&"goosed"));
    }

    #[test]
    fn lm_studio_follows_its_home_pointer_and_its_older_home() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        assert_eq!(
            Host::LmStudio.config_path(home, Os::Linux),
            home.join(".lmstudio/mcp.json")
        );
        // An install older than 0.3.x: only ~/.cache/lm-studio.
        std::fs::create_dir_all(home.join(".cache/lm-studio")).unwrap();
        assert_eq!(lm_studio_home(home), home.join(".cache/lm-studio"));
        // Both: the current one wins.
        std::fs::create_dir_all(home.join(".lmstudio")).unwrap();
        assert_eq!(lm_studio_home(home), home.join(".lmstudio"));
        // The pointer file, when it names a directory, wins over both.
        let moved = home.join("Models Drive/lmstudio");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::write(home.join(".lmstudio-home-pointer"), moved.to_str().unwrap()).unwrap();
        assert_eq!(
            Host::LmStudio.config_path(home, Os::MacOs),
            moved.join("mcp.json")
        );
        // A pointer to nothing, or a relative one, is ignored.
        std::fs::write(home.join(".lmstudio-home-pointer"), "relative/dir\n").unwrap();
        assert_eq!(lm_studio_home(home), home.join(".lmstudio"));
    }

    #[test]
    fn entries_carry_the_mode_arguments_and_the_host_shape() {
        let shim = Path::new("/A/tidings-mcp");
        assert_eq!(
            Host::ClaudeCode.entry(&Launch::new(shim, Mode::Channel)),
            json!({"command": "/A/tidings-mcp", "args": ["--channel"]})
        );
        assert_eq!(
            Host::VsCode.entry(&Launch::new(shim, Mode::Tools)),
            json!({"type": "stdio", "command": "/A/tidings-mcp", "args": []})
        );
        for host in [Host::GeminiCli, Host::Windsurf, Host::LmStudio] {
            assert_eq!(
                host.entry(&Launch::new(shim, Mode::Tools)),
                json!({"command": "/A/tidings-mcp", "args": []}),
                "{host:?}"
            );
        }
        // Goose: `cmd`, `envs`, and its own fields, in its order; the socket lands in `args`.
        let socket = Path::new("/run/t/tidings.sock");
        let goose =
            Host::Goose.entry_fields(&Launch::new(shim, Mode::Tools).with_socket(Some(socket)));
        let names: Vec<&str> = goose.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "enabled",
                "type",
                "name",
                "description",
                "cmd",
                "args",
                "envs",
                "timeout"
            ]
        );
        let goose = Host::Goose.entry(&Launch::new(shim, Mode::Tools).with_socket(Some(socket)));
        assert_eq!(goose["cmd"], "/A/tidings-mcp");
        assert_eq!(goose["args"], json!(["--socket", "/run/t/tidings.sock"]));
        assert_eq!(goose["type"], "stdio");
        assert_eq!(goose["enabled"], true);
        assert_eq!(goose["timeout"], 300);
        assert_eq!(goose["envs"], json!({}));
        let socket = Path::new("/run/t/tidings.sock");
        assert_eq!(
            Host::Codex.entry(&Launch::new(shim, Mode::Channel).with_socket(Some(socket)))["args"],
            json!(["--socket", "/run/t/tidings.sock", "--channel"])
        );
        assert_eq!(Mode::of_args(&Mode::Channel.args()), Mode::Channel);
        assert_eq!(Mode::of_args(&Mode::Events.args()), Mode::Tools);
    }

    #[test]
    fn snippets_parse_back_to_the_entry() {
        let shim = Path::new("/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp");
        for host in Host::ALL {
            let launch = Launch::new(shim, Mode::Tools).with_socket(Some(Path::new("/s/t.sock")));
            let text = host.snippet(&launch);
            let value: Value = if host.format() == Format::Toml {
                let table: toml::Table = text.parse().unwrap();
                serde_json::to_value(&table["mcp_servers"]["tidings"]).unwrap()
            } else if host.format() == Format::Yaml {
                let docs =
                    <saphyr::Yaml as saphyr::LoadableYamlNode>::load_from_str(&text).unwrap();
                yaml_json(&docs[0]["extensions"]["tidings"])
            } else {
                let json = text.rsplit("\n\n").next().unwrap();
                serde_json::from_str::<Value>(json).unwrap()[host.servers_key()]["tidings"].clone()
            };
            assert_eq!(value, host.entry(&launch), "{host:?}: {text}");
        }
        assert_eq!(
            claude_mcp_add(&Launch::new(shim, Mode::Channel)),
            "claude mcp add --scope user tidings -- \
             '/Applications/My Apps/Tidings.app/Contents/MacOS/tidings-mcp' --channel"
        );
    }

    /// A parsed YAML node as JSON (scalars, sequences, string-keyed mappings).
    fn yaml_json(node: &saphyr::Yaml<'_>) -> Value {
        use saphyr::{Scalar, Yaml};
        match node {
            Yaml::Value(Scalar::String(s)) => json!(s.as_ref()),
            Yaml::Value(Scalar::Integer(i)) => json!(i),
            Yaml::Value(Scalar::Boolean(b)) => json!(b),
            Yaml::Sequence(items) => Value::Array(items.iter().map(yaml_json).collect()),
            Yaml::Mapping(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.as_str().unwrap().to_owned(), yaml_json(v)))
                    .collect(),
            ),
            other => panic!("unexpected YAML node {other:?}"),
        }
    }

    #[test]
    fn the_goose_snippet_is_its_config_shape() {
        let launch = Launch::new(Path::new("/A/tidings-mcp"), Mode::Tools);
        assert_eq!(
            Host::Goose.snippet(&launch),
            "extensions:\n  tidings:\n    enabled: true\n    type: \"stdio\"\n    name: \"tidings\"\n    \
             description: \"New mail and messages from Tidings (envelopes only)\"\n    \
             cmd: \"/A/tidings-mcp\"\n    args: []\n    envs: {}\n    timeout: 300"
        );
        assert!(
            Host::GeminiCli
                .snippet(&launch)
                .starts_with("{\n  \"mcpServers\": {\n    \"tidings\": {")
        );
    }

    #[test]
    fn the_entry_names_the_socket_only_when_the_host_would_not_find_it() {
        let runtime = "/run/user/501";
        let default = PathBuf::from(runtime).join("tidings/tidings.sock");
        let custom = Path::new("/tmp/demo/tidings.sock");
        let env = |name: &str| match name {
            "XDG_RUNTIME_DIR" if cfg!(target_os = "linux") => Some(runtime.into()),
            "TIDINGS_SOCKET" => Some(custom.into()),
            "HOME" => Some("/home/ana".into()),
            _ => None,
        };
        // A socket set by TIDINGS_SOCKET is named in every entry: the variable may be gone
        // when the host starts, and Codex and the narrow hosts drop it anyway.
        assert_eq!(socket_arg(Host::ClaudeCode, custom, &env), Some(custom));
        assert_eq!(socket_arg(Host::Codex, custom, &env), Some(custom));
        assert_eq!(socket_arg(Host::Cursor, custom, &env), Some(custom));
        if cfg!(target_os = "linux") {
            // The default under $XDG_RUNTIME_DIR: found by Claude Code, lost by Codex's
            // filtered environment, which falls back to /tmp.
            let no_override = |name: &str| (name != "TIDINGS_SOCKET").then(|| env(name)).flatten();
            assert_eq!(socket_arg(Host::ClaudeCode, &default, &no_override), None);
            assert_eq!(
                socket_arg(Host::Codex, &default, &no_override),
                Some(default.as_path())
            );
        }
    }

    #[test]
    fn a_filtered_environment_keeps_only_the_hosts_variables() {
        let vars = [
            ("HOME", "/h"),
            ("TIDINGS_SOCKET", "/s"),
            ("PATH", "/bin"),
            ("LANG", "C"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let names = |env: ServerEnv| -> Vec<String> {
            env.filter(vars.clone())
                .into_iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(Host::Codex.server_env()), ["HOME", "PATH", "LANG"]);
        assert_eq!(names(Host::Zed.server_env()), ["HOME", "PATH"]);
        assert_eq!(names(Host::ClaudeCode.server_env()).len(), 4);
        assert_eq!(names(Host::Goose.server_env()).len(), 4);
        assert_eq!(names(Host::Windsurf.server_env()), ["HOME", "PATH"]);
        assert_eq!(names(Host::LmStudio.server_env()), ["HOME", "PATH"]);
    }

    #[test]
    fn gemini_drops_secret_looking_names_and_keeps_ours() {
        let gemini = Host::GeminiCli.server_env();
        for kept in [
            "HOME",
            "PATH",
            "TIDINGS_SOCKET",
            "XDG_RUNTIME_DIR",
            "LANG",
            "GEMINI_CLI_HOME",
            "GIT_CONFIG_GLOBAL",
        ] {
            assert!(gemini.passes(kept), "{kept} should pass");
        }
        for dropped in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "my_secret",
            "SSL_CERT_FILE",
            "DATABASE_URL",
            "CLIENT_ID",
            "AWS_SESSION_CREDENTIALS",
        ] {
            assert!(!gemini.passes(dropped), "{dropped} should be dropped");
        }
        // So the socket is found as Claude Code finds it, and only TIDINGS_SOCKET is named.
        if cfg!(target_os = "linux") {
            let runtime = "/run/user/501";
            let default = PathBuf::from(runtime).join("tidings/tidings.sock");
            let env = |name: &str| match name {
                "XDG_RUNTIME_DIR" => Some(runtime.into()),
                "HOME" => Some("/home/ana".into()),
                _ => None,
            };
            assert_eq!(socket_arg(Host::GeminiCli, &default, &env), None);
            assert_eq!(socket_arg(Host::Goose, &default, &env), None);
            assert_eq!(
                socket_arg(Host::Windsurf, &default, &env),
                Some(default.as_path())
            );
        }
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
