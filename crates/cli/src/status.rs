//! `tidings status`: asks a running daemon for `tidings/status` (the engine's `State`) and
//! prints it for people, or as JSON with `--json`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use tidings_protocol::{fields, meta, methods};
use tidings_server::state::{
    ClientState, Mode, State, StoreAccess, Transport, TypeState, WebhookState, WebhooksState,
};

use super::args::StatusArgs;
use super::client::Client;
use super::resolve_socket;

/// Runs `status`. No daemon is an error (non-zero exit).
pub async fn run(args: StatusArgs) -> anyhow::Result<()> {
    let socket = resolve_socket(args.socket.as_deref())?;
    let mut client = Client::connect(&socket).await?;
    let mut status = client.call(1, methods::STATUS, json!({})).await?;
    if let Value::Object(m) = &mut status {
        // The result's envelope, not the State.
        m.remove(fields::RESULT_TYPE);
        m.remove(meta::KEY);
    }
    let state: State = serde_json::from_value(status.clone()).map_err(|e| {
        anyhow::anyhow!(
            "the daemon's status is not one this tidings reads: {e}; is it another version?"
        )
    })?;
    if args.json {
        crate::output::out(format_args!("{status}"));
    } else {
        crate::output::out(render(&state, &socket).trim_end());
    }
    Ok(())
}

/// How the Contacts stores read, and what that means for person and group entries.
fn contacts_line(state: &State) -> String {
    let c = &state.contacts;
    let stores = match c.stores_read {
        1 => "1 store read".to_owned(),
        n => format!("{n} stores read"),
    };
    match &c.problem {
        Some(problem) if c.stores_read == 0 => {
            format!("cannot read {problem}; person and group entries match nobody")
        }
        Some(problem) => {
            format!("{stores}; cannot read {problem} (entries for its cards match nobody)")
        }
        None => stores,
    }
}

/// The human-readable report.
fn render(state: &State, socket: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Tidings {} is serving on {}",
        state.version,
        socket.display()
    );
    let _ = writeln!(
        out,
        "  clients: {} (this one included), push streams: {}",
        state.connections, state.streams
    );
    for ty in &state.types {
        let _ = writeln!(out, "{}", type_line(ty));
    }
    for ty in &state.types {
        let skipped = ty.store.backfilled;
        if skipped > 0 {
            let _ = writeln!(
                out,
                "  {:<18} skipped {} backfilled row{} (dated long before they appeared)",
                ty.name,
                thousands(skipped),
                if skipped == 1 { "" } else { "s" }
            );
        }
    }
    if state.types.is_empty() {
        let _ = writeln!(out, "  (the daemon reported no event types)");
    }
    let _ = writeln!(out, "  contacts: {}", contacts_line(state));
    let _ = writeln!(out, "  http endpoint: {}", state.http.describe());
    // "ok", or the refused edit's line until the file is fixed.
    let _ = writeln!(out, "  settings: {}", state.settings.describe());
    let _ = writeln!(out, "  agents: {}", agents_line(state));
    let _ = writeln!(out, "  webhooks: {}", webhooks_line(&state.webhooks));
    if let Some(until) = state.paused_until_ms {
        let _ = writeln!(
            out,
            "  paused: every type is off for clients until {} (resume in the menu bar)",
            tidings_server::state::local_time_of_day(until)
        );
    }
    for client in &state.clients {
        let _ = writeln!(out, "{}", client_line(client));
        for sub in &client.subscriptions {
            let filter = if sub.filter.is_empty() {
                "no filter".to_owned()
            } else {
                sub.filter
                    .iter()
                    .map(|(k, n)| format!("{k}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                out,
                "      {} {} ({filter}), {} delivered",
                sub.event_type,
                mode_name(sub.mode),
                sub.delivered
            );
        }
    }
    out
}

/// `  mail.received      on   store: ok (~/…)  allowlist: 2 addresses`.
fn type_line(ty: &TypeState) -> String {
    // An error state already names the store; "ok" gets the path beside it.
    let mut store = match (&ty.store.access, &ty.store.problem) {
        (StoreAccess::Ok, _) => format!("ok ({})", ty.store.path),
        (StoreAccess::NotChecked, _) => format!("not checked yet ({})", ty.store.path),
        (_, Some(problem)) => problem.clone(),
        (access, None) => format!("{access:?} ({})", ty.store.path),
    };
    match ty.store.unreadable_rows {
        0 => {}
        1 => store.push_str("; skipped 1 unreadable row"),
        n => {
            let _ = write!(store, "; skipped {n} unreadable rows");
        }
    }
    let allowlist = match ty.allowlist.total() {
        0 => "none (clients must name senders)".to_owned(),
        _ => ty.allowlist.describe(),
    };
    format!(
        "  {:<18} {:<3}  store: {}  allowlist: {}",
        ty.name,
        if ty.enabled { "on" } else { "off" },
        store,
        allowlist
    )
}

/// `  client 3: claude-code 1.2 (socket, pid 812), connected 14:02:11 UTC`.
/// `3 known (1 asking, 1 denied); new ones: ask (`tidings agents` lists them)`.
fn agents_line(state: &State) -> String {
    use tidings_server::state::AgentAccess;
    let count = |access| state.agents.iter().filter(|a| a.access == access).count();
    let mut parts = Vec::new();
    for (access, word) in [
        (AgentAccess::Asking, "asking"),
        (AgentAccess::Denied, "denied"),
        (AgentAccess::New, "not yet decided"),
    ] {
        let n = count(access);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    let new = match state.new_agents {
        tidings_core::settings::NewAgents::Ask => "ask",
        tidings_core::settings::NewAgents::Allow => "allow",
        tidings_core::settings::NewAgents::Deny => "deny",
    };
    format!(
        "{}{detail}; new ones: {new} (`tidings agents` lists them)",
        state.agents.len()
    )
}

/// `2 destinations, 3 subscriptions (1 suspended: http_5xx); 1 destination asked for` and
/// where to look; `none (…)` with nothing at all.
fn webhooks_line(w: &WebhooksState) -> String {
    let plural = |n: usize, noun: &str| {
        if n == 1 {
            format!("1 {noun}")
        } else {
            format!("{n} {noun}s")
        }
    };
    if w.destinations.is_empty() && w.subscriptions.is_empty() && w.asks.is_empty() {
        return "none (`tidings webhooks allow ORIGIN` adds a destination)".to_owned();
    }
    let mut line = format!(
        "{}, {}",
        plural(w.destinations.len(), "destination"),
        plural(w.subscriptions.len(), "subscription")
    );
    let suspended: Vec<&WebhookState> = w.subscriptions.iter().filter(|s| !s.active).collect();
    if !suspended.is_empty() {
        let mut why: Vec<&str> = suspended
            .iter()
            .filter_map(|s| s.last_error.as_deref())
            .collect();
        why.sort_unstable();
        why.dedup();
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(": {}", why.join(", "))
        };
        let _ = write!(line, " ({} suspended{why})", suspended.len());
    }
    if !w.asks.is_empty() {
        let _ = write!(
            line,
            "; {} asked for, waiting for your answer",
            plural(w.asks.len(), "destination")
        );
    }
    line.push_str(" (`tidings webhooks` lists them)");
    line
}

fn client_line(c: &ClientState) -> String {
    let name = match (&c.name, &c.version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.clone(),
        _ => "(unnamed)".to_owned(),
    };
    let transport = match (c.transport, c.pid) {
        (Transport::Socket, Some(pid)) => format!("socket, pid {pid}"),
        (Transport::Socket, None) => "socket".to_owned(),
        (Transport::Http, _) => "http".to_owned(),
    };
    let since = time::OffsetDateTime::from_unix_timestamp_nanos(
        i128::from(c.connected_since_ms) * 1_000_000,
    )
    .ok()
    .and_then(|t| {
        t.format(time::macros::format_description!(
            "[year]-[month]-[day] [hour]:[minute]:[second] UTC"
        ))
        .ok()
    })
    .unwrap_or_else(|| "?".to_owned());
    format!(
        "  client {}: {name} ({transport}, agent {}), connected {since}{}",
        c.id,
        c.agent,
        if c.revoked { ", revoked" } else { "" }
    )
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Push => "push",
        Mode::Poll => "poll",
        Mode::Tools => "tools",
        Mode::Channel => "channel",
    }
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
    use tidings_server::state::{
        AllowlistSummary, HttpEndpointState, SettingsFileState, StoreState, SubscriptionState,
    };

    fn ty(name: &str, enabled: bool, store: StoreState, allowlist: AllowlistSummary) -> TypeState {
        TypeState {
            name: name.into(),
            enabled,
            allowlist,
            backfill_days: 7,
            store,
        }
    }

    fn store(path: &str, access: StoreAccess, problem: Option<&str>) -> StoreState {
        StoreState {
            path: path.into(),
            access,
            problem: problem.map(str::to_owned),
            last_scan_error: None,
            last_change_ms: None,
            backfilled: 0,
            unreadable_rows: 0,
        }
    }

    /// Two types (one store missing), a rejected settings file, one client with a stream.
    fn sample() -> State {
        let mut mail = store("/h/Envelope Index", StoreAccess::Ok, None);
        mail.unreadable_rows = 2;
        let mut messages = store(
            "/h/chat.db",
            StoreAccess::Missing,
            Some("Messages store not found at /h/chat.db"),
        );
        messages.backfilled = 6512;
        State {
            version: "0.1.0".into(),
            socket: Some("/run/t.sock".into()),
            connections: 2,
            streams: 3,
            types: vec![
                ty(
                    "mail.received",
                    true,
                    mail,
                    AllowlistSummary {
                        addresses: 3,
                        domains: 1,
                        ..AllowlistSummary::default()
                    },
                ),
                ty(
                    "messages.received",
                    false,
                    messages,
                    AllowlistSummary::default(),
                ),
            ],
            http: HttpEndpointState::Serving {
                url: "http://127.0.0.1:3917/mcp".into(),
                no_auth: false,
            },
            settings: SettingsFileState::Rejected {
                line: Some(12),
                reason: "settings.toml line 12 is invalid".into(),
            },
            clients: vec![ClientState {
                id: 4,
                name: Some("claude-code".into()),
                version: Some("1.2".into()),
                transport: Transport::Socket,
                connected_since_ms: 0,
                pid: Some(812),
                agent: "claude-1a2b3c".into(),
                revoked: false,
                subscriptions: vec![SubscriptionState {
                    event_type: "mail.received".into(),
                    filter: [("from".to_owned(), 2)].into(),
                    mode: Mode::Push,
                    delivered: 5,
                    last_delivery_ms: Some(1),
                }],
            }],
            agents: vec![],
            new_agents: tidings_core::settings::NewAgents::Ask,
            paused_until_ms: Some(0),
            full_disk_access: tidings_server::state::FullDiskAccess::Unknown,
            contacts: tidings_server::state::ContactsState {
                stores_read: 2,
                problem: None,
            },
            webhooks: WebhooksState::default(),
        }
    }

    fn hook(active: bool, error: Option<&str>) -> WebhookState {
        WebhookState {
            id: "sub_0123456789abcdef".into(),
            event_type: "mail.received".into(),
            destination: "https://hooks.example.com".into(),
            agent: "claude-4f0e21".into(),
            agent_name: "claude".into(),
            filter: std::collections::BTreeMap::default(),
            active,
            refresh_before_ms: None,
            last_delivery_ms: None,
            last_error: error.map(str::to_owned),
            failed_since_ms: None,
            delivered: 0,
        }
    }

    #[test]
    fn the_webhooks_line_counts_and_names_why_deliveries_are_suspended() {
        let mut state = sample();
        let text = render(&state, Path::new("/run/t.sock"));
        assert!(
            text.contains(
                "\n  webhooks: none (`tidings webhooks allow ORIGIN` adds a destination)\n"
            ),
            "{text}"
        );
        state.webhooks = WebhooksState {
            destinations: vec!["https://a.example".into(), "https://b.example".into()],
            subscriptions: vec![
                hook(true, Some("timeout")),
                hook(false, Some("http_5xx")),
                hook(false, Some("http_5xx")),
            ],
            asks: vec![tidings_server::state::DestinationAskState {
                origin: "https://x.example".into(),
                agent: "python3".into(),
                since_ms: 0,
            }],
        };
        let text = render(&state, Path::new("/run/t.sock"));
        assert!(
            text.contains(
                "\n  webhooks: 2 destinations, 3 subscriptions (2 suspended: http_5xx); 1 \
                 destination asked for, waiting for your answer (`tidings webhooks` lists them)\n"
            ),
            "{text}"
        );
        state.webhooks.subscriptions.truncate(1);
        state.webhooks.destinations.truncate(1);
        state.webhooks.asks.clear();
        assert_eq!(
            webhooks_line(&state.webhooks),
            "1 destination, 1 subscription (`tidings webhooks` lists them)"
        );
    }

    #[test]
    fn people_entries_and_the_contacts_stores_are_reported_without_names() {
        let mut state = sample();
        state.types[0].allowlist = AllowlistSummary {
            people: 2,
            groups: 1,
            unresolved: 1,
            ..AllowlistSummary::default()
        };
        let text = render(&state, Path::new("/run/t.sock"));
        assert!(
            text.contains(
                "allowlist: 2 people, 1 group (1 not found in Contacts: it matches nobody)"
            ),
            "{text}"
        );
        assert!(text.contains("  contacts: 2 stores read\n"), "{text}");
        state.contacts = tidings_server::state::ContactsState {
            stores_read: 0,
            problem: Some("~/Library/Application Support/AddressBook/AddressBook-v22.abcddb: locked (database is locked)".into()),
        };
        let text = render(&state, Path::new("/run/t.sock"));
        assert!(
            text.contains("contacts: cannot read ~/Library/Application Support/AddressBook/AddressBook-v22.abcddb: locked (database is locked); person and group entries match nobody"),
            "{text}"
        );
    }

    #[test]
    fn renders_types_counts_and_clients() {
        let text = render(&sample(), Path::new("/run/t.sock"));
        assert!(
            text.contains("Tidings 0.1.0 is serving on /run/t.sock"),
            "{text}"
        );
        assert!(text.contains("clients: 2"), "{text}");
        assert!(
            text.contains("  agents: 0; new ones: ask (`tidings agents` lists them)\n"),
            "{text}"
        );
        assert!(
            text.contains("(socket, pid 812, agent claude-1a2b3c)"),
            "{text}"
        );
        assert!(
            text.contains("  paused: every type is off for clients until "),
            "{text}"
        );
        assert!(text.contains("mail.received      on"), "{text}");
        assert!(text.contains("allowlist: 3 addresses, 1 domain"), "{text}");
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
        assert!(
            text.contains(
                "  client 4: claude-code 1.2 (socket, pid 812, agent claude-1a2b3c), connected 1970-01-01 00:00:00 UTC"
            ),
            "{text}"
        );
        assert!(
            text.contains("      mail.received push (from: 2), 5 delivered"),
            "{text}"
        );
    }
}
