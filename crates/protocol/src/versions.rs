//! The MCP revisions Tidings speaks. Revisions are dates, so they compare in order as strings.

/// The revision the events extension (SEP-3415) is defined on: the daemon serves `events/*`
/// and `subscriptions/listen` on it, and every request of it declares it in `_meta`.
pub const CURRENT: &str = "2026-07-28";

/// The last revision of the `initialize` handshake: what a Claude Code channel is served on
/// (Claude Code registers no channel on a server that negotiated a later one) and what
/// `tidings connect`'s check of the tools entries sends.
pub const LEGACY: &str = "2025-11-25";

/// Whether `version` is one the events extension is served on: [`CURRENT`] or later.
pub fn serves_events(version: &str) -> bool {
    version >= CURRENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_revision_and_later_serve_events() {
        assert!(serves_events(CURRENT));
        assert!(serves_events("2027-01-01"));
        assert!(!serves_events(LEGACY));
        assert!(!serves_events("2025-03-26"));
    }
}
