//! `tidings webhooks`: the destinations on `[webhooks] allow` merged with what a running
//! daemon reports (`tidings/status`'s `webhooks`: its list in force, each subscription, the
//! questions the app has open), for people or as JSON; and `allow` / `remove`, which edit
//! settings.toml in place (`tidings_server::settings_file::save`, comments kept). The daemon
//! applies the file on its own (a remove within about a second, an allow after five seconds
//! unchanged), so this never asks it to.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tidings_core::Settings;
use tidings_server::settings_file;
use tidings_server::state::{DestinationAskState, WebhookState, WebhooksState};

use super::agents::{Live, live};
use super::args::{WebhooksArgs, WebhooksCommand};
use super::exit_code::{Coded, FAILURE, USAGE};
use super::output::count;
use super::resolve_config;

/// A change to the list that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WebhooksError {
    /// Not an origin the list takes; `why` names the rule (http only for this Mac, no path).
    #[error("`{origin}` cannot be a webhook destination: {why}")]
    BadOrigin {
        /// What was given, shortened.
        origin: String,
        /// The rule it breaks, from the list itself.
        why: String,
    },
    /// `remove` of an origin the list does not hold.
    #[error(
        "`{origin}` is not on [webhooks] allow in {}; `tidings webhooks` lists the destinations",
        .settings.display()
    )]
    NotListed {
        /// The origin asked for, shortened.
        origin: String,
        /// The settings file looked in.
        settings: PathBuf,
    },
}

impl Coded for WebhooksError {
    fn exit_code(&self) -> u8 {
        match self {
            WebhooksError::BadOrigin { .. } => USAGE,
            WebhooksError::NotListed { .. } => FAILURE,
        }
    }
}

/// Runs `tidings webhooks …`.
pub async fn run(args: WebhooksArgs) -> anyhow::Result<()> {
    let (config, socket) = resolve_config(args.demo_dir.as_deref(), args.socket.as_deref())?;
    let path = config.join("settings.toml");
    match args.command {
        None => list(&path, &socket, args.json).await,
        Some(WebhooksCommand::Allow(a)) => allow(&path, &a.origin),
        Some(WebhooksCommand::Remove(a)) => remove(&path, &a.origin),
    }
}

/// One destination as `--json` prints it.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Destination {
    /// The origin, normalised.
    origin: String,
    /// On the list in settings.toml.
    saved: bool,
    /// On the list the running daemon applies; `None` when no daemon answered. Differs from
    /// `saved` while the daemon has not applied an edit yet.
    applied: Option<bool>,
    /// The running daemon's subscriptions to it.
    subscriptions: usize,
}

/// `tidings webhooks --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listing {
    /// Whether a daemon answered: without one, only the file's destinations are known.
    running: bool,
    destinations: Vec<Destination>,
    subscriptions: Vec<WebhookState>,
    asks: Vec<DestinationAskState>,
}

/// The file's destinations, then those only the daemon still applies.
fn merge(settings: &Settings, live: Option<&WebhooksState>) -> Listing {
    let mut origins: Vec<String> = settings.webhooks.allow.clone();
    if let Some(w) = live {
        for o in &w.destinations {
            if !origins.contains(o) {
                origins.push(o.clone());
            }
        }
    }
    let destinations = origins
        .into_iter()
        .map(|origin| Destination {
            saved: settings.webhooks.allow.contains(&origin),
            applied: live.map(|w| w.destinations.contains(&origin)),
            subscriptions: live.map_or(0, |w| {
                w.subscriptions
                    .iter()
                    .filter(|s| s.destination == origin)
                    .count()
            }),
            origin,
        })
        .collect();
    Listing {
        running: live.is_some(),
        destinations,
        subscriptions: live.map(|w| w.subscriptions.clone()).unwrap_or_default(),
        asks: live.map(|w| w.asks.clone()).unwrap_or_default(),
    }
}

async fn list(path: &Path, socket: &Path, json_out: bool) -> anyhow::Result<()> {
    let settings = Settings::load(path)?;
    let live = live(socket).await?;
    let state = match &live {
        Live::Running(state) => Some(&state.webhooks),
        _ => None,
    };
    let listing = merge(&settings, state);
    if json_out {
        crate::output::out(serde_json::to_string(&listing)?);
    } else {
        crate::output::out(render(&listing, path).trim_end());
    }
    live.note_if_file_only("destinations", socket, path);
    Ok(())
}

/// The list for people.
fn render(l: &Listing, path: &Path) -> String {
    let mut out = String::new();
    if l.destinations.is_empty() {
        let _ = writeln!(
            out,
            "No webhook destinations in {}: `tidings webhooks allow ORIGIN` adds one.",
            path.display()
        );
    } else {
        let _ = writeln!(
            out,
            "Destinations ([webhooks] allow in {}):",
            path.display()
        );
    }
    for d in &l.destinations {
        let pending = match (d.saved, d.applied) {
            (true, Some(false)) => "; added in settings.toml, the daemon applies it shortly",
            (false, Some(true)) => "; removed from settings.toml, the daemon applies it shortly",
            _ => "",
        };
        let subs = if l.running {
            format!(" ({}{pending})", count(d.subscriptions, "subscription"))
        } else {
            String::new()
        };
        let _ = writeln!(out, "  {}{subs}", d.origin);
    }
    if l.running {
        if l.subscriptions.is_empty() {
            out.push_str("No webhook subscriptions.\n");
        } else {
            out.push_str("Subscriptions:\n");
        }
    }
    for s in &l.subscriptions {
        let _ = writeln!(
            out,
            "  {}  {} to {}, agent {} ({})",
            s.id, s.event_type, s.destination, s.agent_name, s.agent
        );
        let status = if s.active {
            "active".to_owned()
        } else {
            format!(
                "suspended{}",
                s.failed_since_ms
                    .map(|ms| format!(" (failing since {})", crate::output::utc(ms)))
                    .unwrap_or_default()
            )
        };
        let last = s
            .last_delivery_ms
            .map_or_else(|| "none yet".to_owned(), crate::output::utc);
        let error = s
            .last_error
            .as_ref()
            .map(|e| format!("; last error {e}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {status}; {} delivered; last delivery {last}{error}",
            count(usize::try_from(s.delivered).unwrap_or(usize::MAX), "event")
        );
    }
    for a in &l.asks {
        let _ = writeln!(
            out,
            "Asked: {} wants to post events to {} (since {}): `tidings webhooks allow {}`, or \
             answer in the app",
            a.agent,
            a.origin,
            crate::output::utc(a.since_ms),
            a.origin
        );
    }
    out
}

/// What was typed, cut short for an error line.
fn shown(text: &str) -> String {
    tidings_core::text::sanitize(text, 120)
}

/// `allow ORIGIN`: add it to the file's list (normalised).
fn allow(path: &Path, origin: &str) -> anyhow::Result<()> {
    let mut settings = Settings::load(path)?;
    let added = settings
        .webhooks
        .add(origin)
        .map_err(|why| WebhooksError::BadOrigin {
            origin: shown(origin),
            why,
        })?;
    if !added {
        crate::output::err(format_args!(
            "tidings: {} is already on [webhooks] allow in {}",
            shown(origin),
            path.display()
        ));
        return Ok(());
    }
    // `add` pushed it, normalised, at the end.
    let normal = settings.webhooks.allow.last().cloned().unwrap_or_default();
    settings_file::save(&settings, path)?;
    crate::output::err(format_args!(
        "tidings: allowed {normal} in {}: webhook subscriptions may post events to it. A running \
         daemon applies it once the file has been unchanged for 5 seconds",
        path.display()
    ));
    Ok(())
}

/// `remove ORIGIN`: take it off the file's list.
fn remove(path: &Path, origin: &str) -> anyhow::Result<()> {
    let mut settings = Settings::load(path)?;
    let before = settings.webhooks.allow.clone();
    if !settings.webhooks.remove(origin) {
        return Err(WebhooksError::NotListed {
            origin: shown(origin),
            settings: path.to_owned(),
        }
        .into());
    }
    settings_file::save(&settings, path)?;
    // As the list held it (normalised), not as typed.
    let gone = before
        .into_iter()
        .find(|o| !settings.webhooks.allow.contains(o))
        .unwrap_or_default();
    crate::output::err(format_args!(
        "tidings: removed {gone} from [webhooks] allow in {}; a running daemon applies it \
         within about a second: that destination's subscriptions end and their receivers are \
         told",
        path.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
[webhooks]
allow = [\"https://hooks.example.com\", \"http://127.0.0.1:8787\"]
";

    fn settings() -> Settings {
        Settings::parse(FILE, Path::new("settings.toml")).unwrap()
    }

    fn hook(id: &str, active: bool) -> WebhookState {
        WebhookState {
            id: id.into(),
            event_type: "mail.received".into(),
            destination: "https://hooks.example.com".into(),
            agent: "claude-4f0e21".into(),
            agent_name: "claude".into(),
            filter: [("domains".to_owned(), 1)].into(),
            active,
            refresh_before_ms: None,
            last_delivery_ms: Some(0),
            last_error: (!active).then(|| "http_5xx".to_owned()),
            failed_since_ms: (!active).then_some(0),
            delivered: 3,
        }
    }

    #[test]
    fn the_file_alone_lists_its_destinations_and_no_subscriptions() {
        let l = merge(&settings(), None);
        assert!(!l.running);
        let text = render(&l, Path::new("/c/settings.toml"));
        assert_eq!(
            text,
            "Destinations ([webhooks] allow in /c/settings.toml):\n  https://hooks.example.com\n  \
             http://127.0.0.1:8787\n"
        );
        let json = serde_json::to_value(&l).unwrap();
        assert_eq!(json["destinations"][1]["origin"], "http://127.0.0.1:8787");
        assert_eq!(json["destinations"][1]["applied"], serde_json::Value::Null);
        assert_eq!(json["subscriptions"], serde_json::json!([]));
    }

    #[test]
    fn the_daemons_subscriptions_and_an_edit_it_has_not_applied_are_shown() {
        let live = WebhooksState {
            destinations: vec![
                "https://hooks.example.com".into(),
                "https://old.example".into(),
            ],
            subscriptions: vec![hook("sub_0123456789abcdef", true), hook("sub_fedc", false)],
            asks: vec![DestinationAskState {
                origin: "https://x.example".into(),
                agent: "python3 <b>".into(),
                since_ms: 0,
            }],
        };
        let l = merge(&settings(), Some(&live));
        let text = render(&l, Path::new("/c/settings.toml"));
        assert!(
            text.contains("  https://hooks.example.com (2 subscriptions)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  http://127.0.0.1:8787 (0 subscriptions; added in settings.toml, the daemon \
                 applies it shortly)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  https://old.example (0 subscriptions; removed from settings.toml"),
            "{text}"
        );
        assert!(
            text.contains(
                "  sub_0123456789abcdef  mail.received to https://hooks.example.com, agent claude \
                 (claude-4f0e21)\n    active; 3 events delivered; last delivery 1970-01-01 \
                 00:00:00 UTC\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "    suspended (failing since 1970-01-01 00:00:00 UTC); 3 events delivered; last \
                 delivery 1970-01-01 00:00:00 UTC; last error http_5xx\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "Asked: python3 <b> wants to post events to https://x.example (since 1970-01-01 \
                 00:00:00 UTC): `tidings webhooks allow https://x.example`"
            ),
            "{text}"
        );
        let json = serde_json::to_value(&l).unwrap();
        assert_eq!(json["running"], true);
        assert_eq!(json["destinations"][0]["subscriptions"], 2);
        assert_eq!(json["destinations"][1]["applied"], false);
        assert_eq!(json["destinations"][2]["saved"], false);
        assert_eq!(json["subscriptions"][1]["lastError"], "http_5xx");
        assert_eq!(json["subscriptions"][1]["active"], false);
        assert_eq!(json["asks"][0]["origin"], "https://x.example");
    }

    #[test]
    fn allow_writes_the_normalised_origin_and_remove_takes_it_off_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "# mine, kept\n[agents]\nnew = \"ask\"\n").unwrap();
        allow(&path, "HTTPS://Hooks.Example.com:443").unwrap();
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(file.starts_with("# mine, kept\n"), "{file}");
        assert!(
            file.contains("allow = [\"https://hooks.example.com\"]"),
            "{file}"
        );
        let e = allow(&path, "http://hooks.example.com").unwrap_err();
        let e = e.downcast::<WebhooksError>().unwrap();
        assert_eq!(e.exit_code(), USAGE);
        assert!(
            e.to_string().contains("write https://hooks.example.com"),
            "{e}"
        );
        let e = remove(&path, "https://nope.example").unwrap_err();
        assert!(e.to_string().contains("not on [webhooks] allow"), "{e}");
        remove(&path, "https://hooks.EXAMPLE.com/").unwrap();
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(!file.contains("hooks.example.com\""), "{file}");
        assert!(file.starts_with("# mine, kept\n"), "{file}");
    }
}
