//! How long `tidings_wait` may block, by the host that calls it: below the host's own tool
//! timeout, chosen by the `clientInfo.name` it announced. The one table of it; the reasons
//! are in docs/decisions/pull-tools.md.

use std::time::Duration;

/// One host's ceiling on a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostLimit {
    /// The host, as the docs name it.
    pub host: &'static str,
    /// The longest wait, in seconds: the host's tool timeout minus a margin for the round
    /// trip and the final batch.
    pub max_wait_s: u64,
}

/// `clientInfo.name` values (lower-cased) and their ceilings. Names not listed get
/// [`UNKNOWN`]. Claude Code resets its idle timer on progress but moves a call that runs past
/// 2 minutes to a background task; 110 s keeps the result inline. Claude Desktop, Codex
/// (`tool_timeout_sec` default) and Zed allow 60 s; Goose 300 s (the `timeout` our entry
/// writes). Gemini CLI allows 10 minutes unless the entry's `timeout` says less; it gets
/// Goose's 280 s, so a wait that names no `timeout_s` does not hold a turn for ten.
const HOSTS: &[(&[&str], HostLimit)] = &[
    (
        &["claude-code"],
        HostLimit {
            host: "Claude Code",
            max_wait_s: 110,
        },
    ),
    (
        &["claude-ai", "claude-desktop", "claude desktop"],
        HostLimit {
            host: "Claude Desktop",
            max_wait_s: 50,
        },
    ),
    (
        &["codex", "codex-mcp-client", "codex-cli"],
        HostLimit {
            host: "Codex",
            max_wait_s: 50,
        },
    ),
    (
        &["zed"],
        HostLimit {
            host: "Zed",
            max_wait_s: 50,
        },
    ),
    (
        // `goose` in older releases; the CLI's front end announces `goose-cli`.
        &["goose", "goose-cli"],
        HostLimit {
            host: "Goose",
            max_wait_s: 280,
        },
    ),
    (
        &["gemini-cli-mcp-client"],
        HostLimit {
            host: "Gemini CLI",
            max_wait_s: 280,
        },
    ),
];

/// Every host we do not know, VS Code, Cursor, Windsurf and LM Studio included (their tool
/// timeouts are not documented).
pub const UNKNOWN: HostLimit = HostLimit {
    host: "an unknown host",
    max_wait_s: 45,
};

/// The ceiling for the client that announced `name` (`None`: it announced nothing).
pub fn limit_for(name: Option<&str>) -> HostLimit {
    let Some(name) = name else { return UNKNOWN };
    let name = name.trim().to_lowercase();
    HOSTS
        .iter()
        .find(|(names, _)| names.contains(&name.as_str()))
        .map_or(UNKNOWN, |(_, limit)| *limit)
}

/// The wait a call gets: what it asked for (the ceiling when it asked for nothing), never
/// more than the ceiling.
pub fn clamp(requested_s: Option<f64>, limit: HostLimit) -> Duration {
    let max = Duration::from_secs(limit.max_wait_s);
    match requested_s {
        Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s.min(max.as_secs_f64())),
        _ => max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hosts_get_their_ceiling_and_others_45_s() {
        assert_eq!(limit_for(Some("claude-code")).max_wait_s, 110);
        assert_eq!(limit_for(Some("Zed")).max_wait_s, 50);
        assert_eq!(limit_for(Some("codex-mcp-client")).max_wait_s, 50);
        assert_eq!(limit_for(Some("goose")).max_wait_s, 280);
        assert_eq!(limit_for(Some("goose-cli")).max_wait_s, 280);
        assert_eq!(limit_for(Some("gemini-cli-mcp-client")).host, "Gemini CLI");
        assert_eq!(limit_for(Some("windsurf-client")), UNKNOWN);
        assert_eq!(limit_for(Some("Visual Studio Code")), UNKNOWN);
        assert_eq!(limit_for(None), UNKNOWN);
        assert_eq!(UNKNOWN.max_wait_s, 45);
    }

    #[test]
    fn a_wait_is_clamped_below_the_ceiling() {
        let zed = limit_for(Some("zed"));
        assert_eq!(clamp(Some(1000.0), zed), Duration::from_secs(50));
        assert_eq!(clamp(Some(2.5), zed), Duration::from_millis(2500));
        assert_eq!(clamp(None, zed), Duration::from_secs(50));
        assert_eq!(clamp(Some(0.0), zed), Duration::ZERO);
    }
}
