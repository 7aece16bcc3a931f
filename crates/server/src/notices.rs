//! What the engine tells the person at the Mac, as typed [`Notice`]s: a client's first
//! subscription to a type, Full Disk Access missing (or gone stale after an update), a store
//! rebuilt, a settings edit rejected. The daemon emits them (each kind only while its switch
//! in `[notifications]` is on); whoever runs the engine (`tidings serve`, the app) shows them
//! through a [`Notifier`] with [`deliver`].
//!
//! A notice names a client and the senders it asked for: it is shown to the user, never
//! logged at info level (docs/decisions/doctor.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};
use tidings_core::EventType;
use tidings_core::settings::NotificationKind;
use tidings_core::text::sanitize;
use tidings_platform::Notifier;
use tokio::sync::broadcast;

/// How many notices wait for a slow notifier before the oldest are dropped.
pub const NOTICE_BACKLOG: usize = 32;

/// The longest client name a notice shows, in characters (names are untrusted text).
const MAX_CLIENT_CHARS: usize = 40;
/// The longest sender value a notice quotes, in characters.
const MAX_VALUE_CHARS: usize = 40;
/// How many values of a filter a notice lists before "and N more".
const MAX_VALUES: usize = 3;

/// The sentence that says whose grant Full Disk Access is (the window and doctor show it).
pub const FULL_DISK_ACCESS_OWNER: &str = "Full Disk Access belongs to Tidings.app itself, not \
     to Terminal or your MCP client: tidings-mcp only forwards bytes and reads nothing.";

/// How to refresh a grant that went stale after an update.
pub const STALE_GRANT_FIX: &str = "Tidings had Full Disk Access before this update and has \
     lost it: in System Settings > Privacy & Security > Full Disk Access, remove Tidings \
     with the minus button, add it again, then restart Tidings.";

/// One thing to tell the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A client subscribed to a type for the first time since the engine started.
    FirstSubscription {
        /// The client's name, sanitised and cut ("Claude Code").
        client: String,
        /// "mail from acme.com", "all messages".
        scope: String,
    },
    /// Stores of enabled types cannot be read: Full Disk Access is missing.
    FullDiskAccessMissing {
        /// "Mail", "Messages".
        stores: Vec<&'static str>,
        /// The grant worked under an earlier version: it went stale with the update.
        stale: bool,
    },
    /// A store was rebuilt (a new file): clients were told of a gap.
    StoreRebuilt {
        /// "Mail" or "Messages".
        store: &'static str,
    },
    /// An edit of settings.toml was rejected.
    SettingsRejected {
        /// The line at fault, when known.
        line: Option<usize>,
    },
    /// A program with no grant asks to receive events; the window has Allow and Don't Allow.
    AgentAsks {
        /// The agent as the OS tells it ("claude (signed by Anthropic PBC)"), never the name
        /// it announced.
        agent: String,
        /// "new mail from example.com".
        wants: String,
    },
}

impl Notice {
    /// Its switch in `[notifications]`.
    pub fn kind(&self) -> NotificationKind {
        match self {
            Notice::FirstSubscription { .. } => NotificationKind::FirstSubscription,
            Notice::FullDiskAccessMissing { .. } => NotificationKind::FullDiskAccess,
            Notice::StoreRebuilt { .. } => NotificationKind::StoreRebuilt,
            Notice::SettingsRejected { .. } => NotificationKind::SettingsRejected,
            Notice::AgentAsks { .. } => NotificationKind::AgentAsks,
        }
    }

    /// The notification's title.
    pub fn title(&self) -> &'static str {
        match self {
            Notice::FirstSubscription { .. } => "A client is listening",
            Notice::FullDiskAccessMissing { stale: false, .. } => "Tidings needs Full Disk Access",
            Notice::FullDiskAccessMissing { stale: true, .. } => "Full Disk Access stopped working",
            Notice::StoreRebuilt { .. } => "A store was rebuilt",
            Notice::SettingsRejected { .. } => "settings.toml rejected",
            Notice::AgentAsks { .. } => "A program asks for your mail or messages",
        }
    }

    /// The notification's text.
    pub fn body(&self) -> String {
        match self {
            Notice::FirstSubscription { client, scope } => {
                format!("{client} is now notified of {scope}")
            }
            Notice::FullDiskAccessMissing { stores, stale } => {
                if *stale {
                    STALE_GRANT_FIX.to_owned()
                } else {
                    format!(
                        "Tidings cannot read {}. Turn Tidings on in System Settings > Privacy \
                         & Security > Full Disk Access, then restart it.",
                        stores.join(" and ")
                    )
                }
            }
            Notice::StoreRebuilt { store } => format!(
                "{store}'s store was replaced by a new one; clients were told they may have \
                 missed events, and delivery goes on."
            ),
            Notice::SettingsRejected { line } => format!(
                "An edit of settings.toml{} was not applied; the last good settings stay in \
                 force. `tidings doctor` says why.",
                line.map(|l| format!(" (line {l})")).unwrap_or_default()
            ),
            Notice::AgentAsks { agent, wants } => format!(
                "{} wants {wants}. Open Tidings to Allow or Don't Allow.",
                sanitize(agent, MAX_CLIENT_CHARS * 2)
            ),
        }
    }
}

/// The client's name for a notice: sanitised and cut, or "A client" when it gave none.
pub fn client_label(name: Option<&str>) -> String {
    let name = name.map(|n| sanitize(n, MAX_CLIENT_CHARS));
    match name {
        Some(n) if !n.is_empty() => n,
        _ => "A client".to_owned(),
    }
}

/// What a subscription to `ty` with `arguments` covers, in words: "mail from acme.com",
/// "messages from +12025550143 and 2 more", "all mail". Only the sender arguments (`from`,
/// `domains`) are named; other filters read "some mail". Values are sanitised and cut.
pub fn scope(ty: EventType, arguments: &Map<String, Value>) -> String {
    let noun = match ty {
        EventType::MailReceived => "mail",
        EventType::MessagesReceived => "messages",
    };
    let mut values: Vec<String> = ["from", "domains"]
        .iter()
        .filter_map(|k| arguments.get(*k))
        .flat_map(|v| match v {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .filter_map(|v| v.as_str().map(|s| sanitize(s, MAX_VALUE_CHARS)))
        .filter(|s| !s.is_empty())
        .collect();
    if values.is_empty() {
        let filtered = arguments.values().any(|v| !v.is_null());
        return format!("{} {noun}", if filtered { "some" } else { "all" });
    }
    let more = values.len().saturating_sub(MAX_VALUES);
    values.truncate(MAX_VALUES);
    let list = values.join(", ");
    if more > 0 {
        format!("{noun} from {list} and {more} more")
    } else {
        format!("{noun} from {list}")
    }
}

/// What an agent asks for, in words: "new mail from acme.com", "all new messages", "some
/// new mail" ([`scope`] with "new" before the type's noun).
pub fn wants(ty: EventType, arguments: &Map<String, Value>) -> String {
    let noun = match ty {
        EventType::MailReceived => "mail",
        EventType::MessagesReceived => "messages",
    };
    // The noun comes before any sender value in every form `scope` writes.
    scope(ty, arguments).replacen(noun, &format!("new {noun}"), 1)
}

/// Show every notice from `notices` through `notifier` until the engine stops. A notifier
/// that fails (no notification server) is logged once at warn, then at debug: never fatal.
pub fn deliver(mut notices: broadcast::Receiver<Notice>, notifier: Arc<dyn Notifier>) {
    let warned = Arc::new(AtomicBool::new(false));
    tokio::spawn(async move {
        loop {
            let notice = match notices.recv().await {
                Ok(n) => n,
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(dropped = n, "notices dropped behind a slow notifier");
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let (notifier, warned) = (notifier.clone(), warned.clone());
            let kind = notice.kind();
            let shown = tokio::task::spawn_blocking(move || {
                notifier.notify(notice.title(), &notice.body())
            })
            .await;
            match shown {
                Ok(Ok(())) => tracing::debug!(?kind, "notification shown"),
                Ok(Err(e)) if !warned.swap(true, Ordering::Relaxed) => {
                    tracing::warn!(error = %e, "notifications are unavailable; going on without them");
                }
                Ok(Err(e)) => tracing::debug!(error = %e, "notification not shown"),
                Err(e) => tracing::debug!(error = %e, "notifier task failed"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: &Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_scope_names_senders_and_says_all_or_some_otherwise() {
        let ty = EventType::MailReceived;
        assert_eq!(
            scope(ty, &args(&json!({"domains": ["acme.com"]}))),
            "mail from acme.com"
        );
        assert_eq!(scope(ty, &args(&json!({}))), "all mail");
        assert_eq!(
            scope(ty, &args(&json!({"mailboxes": ["INBOX"]}))),
            "some mail"
        );
        let many = json!({"from": ["+12025550143", "a@x.com", "b@x.com", "c@x.com", "d@x.com"]});
        assert_eq!(
            scope(EventType::MessagesReceived, &args(&many)),
            "messages from +12025550143, a@x.com, b@x.com and 2 more"
        );
    }

    #[test]
    fn what_an_agent_wants_says_new() {
        let ty = EventType::MailReceived;
        assert_eq!(
            wants(ty, &args(&json!({"domains": ["mail.acme.com"]}))),
            "new mail from mail.acme.com"
        );
        assert_eq!(wants(ty, &args(&json!({}))), "all new mail");
        assert_eq!(
            wants(EventType::MessagesReceived, &args(&json!({"chats": ["c"]}))),
            "some new messages"
        );
    }

    #[test]
    fn names_are_untrusted_text() {
        let evil = format!("Claude\u{202e}Code\n{}", "x".repeat(100));
        let label = client_label(Some(&evil));
        assert!(
            !label.contains('\u{202e}') && !label.contains('\n'),
            "{label}"
        );
        assert!(label.chars().count() <= MAX_CLIENT_CHARS + 1, "{label}");
        assert_eq!(client_label(Some(" \u{200b}")), "A client");
        assert_eq!(client_label(None), "A client");
        let s = scope(
            EventType::MailReceived,
            &args(&json!({"from": ["a\u{7}b@x.com"]})),
        );
        assert_eq!(s, "mail from ab@x.com");
    }

    #[test]
    fn each_notice_says_what_happened() {
        let n = Notice::FirstSubscription {
            client: "Claude Code".into(),
            scope: "mail from acme.com".into(),
        };
        assert_eq!(
            n.body(),
            "Claude Code is now notified of mail from acme.com"
        );
        assert_eq!(n.kind(), NotificationKind::FirstSubscription);
        let n = Notice::FullDiskAccessMissing {
            stores: vec!["Mail", "Messages"],
            stale: false,
        };
        assert!(
            n.body().contains("cannot read Mail and Messages"),
            "{}",
            n.body()
        );
        let n = Notice::FullDiskAccessMissing {
            stores: vec!["Mail"],
            stale: true,
        };
        assert!(n.body().contains("remove Tidings"), "{}", n.body());
        assert!(
            Notice::SettingsRejected { line: Some(3) }
                .body()
                .contains("(line 3)")
        );
    }
}
