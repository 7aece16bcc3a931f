//! What environment each host gives the stdio servers it starts, and from it whether an
//! entry must name the daemon's socket (docs/decisions/connect.md, "The socket").

use std::path::Path;

use super::Host;

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
pub(super) const GEMINI_REDACTION: Redaction = Redaction {
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
pub(super) const CODEX_ENV: &[&str] = &[
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
pub(super) const NARROW_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

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
}
