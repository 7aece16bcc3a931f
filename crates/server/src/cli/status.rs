//! `tidings status`: asks a running daemon for `tidings/status` and prints it for people
//! (or as JSON with `--json`).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::args::StatusArgs;
use super::client::Client;
use super::resolve_socket;

/// Runs `status`. No daemon is an error (non-zero exit).
pub async fn run(args: StatusArgs) -> anyhow::Result<()> {
    let socket = resolve_socket(args.socket.as_deref())?;
    let mut client = Client::connect(&socket).await?;
    let status = client.call(1, "tidings/status", json!({})).await?;
    if args.json {
        crate::output::out(format_args!("{status}"));
    } else {
        crate::output::out(render(&status, &socket).trim_end());
    }
    Ok(())
}

/// The human-readable report. It reads fields by name and shows what it finds, so a newer
/// daemon with more fields still prints.
fn render(status: &Value, socket: &Path) -> String {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
    let count = |key: &str| status.get(key).and_then(Value::as_u64).unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Tidings {} is serving on {}",
        text(status, "version"),
        socket.display()
    );
    let _ = writeln!(
        out,
        "  clients: {} (this one included), push streams: {}",
        count("connections"),
        count("streams")
    );
    let types = status
        .get("types")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for ty in &types {
        let enabled = ty.get("enabled").and_then(Value::as_bool).unwrap_or(false);
        let allow = ty.get("allowlist").and_then(Value::as_u64).unwrap_or(0);
        // An error state already names the store; "ok" gets the path beside it.
        let state = text(ty, "state");
        let mut store = if state == "ok" {
            format!("ok ({})", text(ty, "store"))
        } else {
            state
        };
        match ty.get("unreadable_rows").and_then(Value::as_u64) {
            Some(1) => store.push_str("; skipped 1 unreadable row"),
            Some(n) if n > 1 => {
                let _ = write!(store, "; skipped {n} unreadable rows");
            }
            _ => {}
        }
        let _ = writeln!(
            out,
            "  {:<18} {:<3}  store: {}  allowlist: {}",
            text(ty, "name"),
            if enabled { "on" } else { "off" },
            store,
            match allow {
                0 => "none (clients must name senders)".to_owned(),
                1 => "1 entry".to_owned(),
                n => format!("{n} entries"),
            }
        );
    }
    for ty in &types {
        let skipped = ty.get("backfilled").and_then(Value::as_u64).unwrap_or(0);
        if skipped > 0 {
            let _ = writeln!(
                out,
                "  {:<18} skipped {} backfilled row{} (dated long before they appeared)",
                text(ty, "name"),
                thousands(skipped),
                if skipped == 1 { "" } else { "s" }
            );
        }
    }
    if types.is_empty() {
        let _ = writeln!(out, "  (the daemon reported no event types)");
    }
    if let Some(http) = status.get("http").and_then(Value::as_str) {
        let _ = writeln!(out, "  http endpoint: {http}");
    }
    // "ok", or the refused edit's line until the file is fixed.
    if let Some(settings) = status.get("settings").and_then(Value::as_str) {
        let _ = writeln!(out, "  settings: {settings}");
    }
    out
}

/// `6512` as `6,512`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_types_and_counts() {
        let status = json!({"version": "0.1.0", "connections": 2, "streams": 3, "types": [
            {"name": "mail.received", "enabled": true, "store": "/h/Envelope Index",
             "state": "ok", "allowlist": 4, "unreadable_rows": 2},
            {"name": "messages.received", "enabled": false, "store": "/h/chat.db",
             "state": "Messages store not found at /h/chat.db", "allowlist": 0,
             "backfilled": 6512}
        ], "http": "serving at http://127.0.0.1:3917/mcp",
           "settings": "settings.toml line 12 is invalid; using the last good settings"});
        let text = render(&status, Path::new("/run/t.sock"));
        assert!(
            text.contains("Tidings 0.1.0 is serving on /run/t.sock"),
            "{text}"
        );
        assert!(text.contains("clients: 2"), "{text}");
        assert!(text.contains("mail.received      on"), "{text}");
        assert!(text.contains("4 entries"), "{text}");
        assert!(text.contains("messages.received  off"), "{text}");
        assert!(text.contains("none (clients must name senders)"), "{text}");
        assert!(
            text.contains("store: ok (/h/Envelope Index); skipped 2 unreadable rows"),
            "{text}"
        );
        assert!(
            text.contains("http endpoint: serving at http://127.0.0.1:3917/mcp"),
            "{text}"
        );
        assert!(
            text.contains("store: Messages store not found at /h/chat.db  allowlist"),
            "{text}"
        );
        assert!(
            text.contains("  messages.received  skipped 6,512 backfilled rows (dated long"),
            "{text}"
        );
        assert!(!text.contains("mail.received      skipped"), "{text}");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert!(
            text.contains(
                "\n  settings: settings.toml line 12 is invalid; using the last good settings\n"
            ),
            "{text}"
        );
    }
}
