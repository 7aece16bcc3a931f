//! Which settings changes widen what agents can see: the daemon's settings watcher holds a
//! hand edit that widens for longer than one that only narrows (docs/security.md, "Hand-edited
//! or half-written settings"), so a write cut off halfway does not open anything.
//!
//! The rule is conservative: anything not known to narrow counts as widening, and each field
//! is named below, so a new field does not compile until someone decides which way it goes.

use super::{
    Access, AgentGrant, AgentsSettings, EventSettings, HttpSettings, NewAgents, Settings,
    TypeGrant, WebhookSettings,
};

impl Settings {
    /// Whether `self` lets agents see anything `applied` does not. A type or the HTTP
    /// endpoint that is off in `self` shows agents nothing, so it never widens. One that is
    /// on widens when it was off, and, when it was on, when: its allowlist is emptied, or
    /// gains an entry it did not hold (unless it was empty, which is no allowlist at all); its
    /// `categories` likewise (emptied is every category); its `backfill_days` is raised or set
    /// to 0 (the guard off); names from Contacts are turned on (`contact_names`); the endpoint
    /// moves (`listen`)
    /// or allows a browser origin it did not; a webhook destination is added. Channel presets,
    /// notification switches and the update check never widen through the daemon: the
    /// channel reads its preset from the file when it starts, notifications reach the user
    /// only, and the update check sends no agent anything.
    pub fn widens(&self, applied: &Settings) -> bool {
        let Settings {
            mail,
            messages,
            http,
            channel: _,
            notifications: _,
            // The update check sends nothing about the user (one GET of the release feed).
            updates: _,
            // Loaded by the daemon, not edited by hand: a people entry that gains a handle
            // widens by the user's own edit in Contacts.
            contacts: _,
            agents,
            webhooks,
        } = self;
        type_widens(mail, &applied.mail)
            || type_widens(messages, &applied.messages)
            || http_widens(http, &applied.http)
            || agents_widen(agents, &applied.agents)
            || webhooks_widen(webhooks, &applied.webhooks)
    }
}

/// A destination added widens: events may leave for somewhere they could not before.
fn webhooks_widen(new: &WebhookSettings, old: &WebhookSettings) -> bool {
    let WebhookSettings { allow } = new;
    allow.iter().any(|o| !old.allow.contains(o))
}

/// Agents widen when new ones get more than before (deny < ask < allow), or a known agent's
/// grant is anything but the same or narrower; forgetting an agent hands it to `new`, which
/// widens unless `new` denies.
fn agents_widen(new: &AgentsSettings, old: &AgentsSettings) -> bool {
    let AgentsSettings {
        new: new_default,
        known,
    } = new;
    let rank = |n: NewAgents| match n {
        NewAgents::Deny => 0,
        NewAgents::Ask => 1,
        NewAgents::Allow => 2,
    };
    if rank(*new_default) > rank(old.new) {
        return true;
    }
    let forgotten = old.known.values().any(|g| new.find(&g.identity).is_none());
    if forgotten && *new_default != NewAgents::Deny {
        return true;
    }
    known.values().any(|grant| match old.find(&grant.identity) {
        None => grant.access == Access::Allow && *new_default != NewAgents::Allow,
        Some((_, was)) => grant_widens(grant, was),
    })
}

fn grant_widens(new: &AgentGrant, old: &AgentGrant) -> bool {
    let AgentGrant {
        identity: _,
        name: _,
        access,
        mail,
        messages,
    } = new;
    if *access == Access::Deny {
        return false;
    }
    old.access == Access::Deny
        || type_grant_widens(mail, &old.mail)
        || type_grant_widens(messages, &old.messages)
}

fn type_grant_widens(new: &TypeGrant, old: &TypeGrant) -> bool {
    match (new, old) {
        (TypeGrant::Every(false), _) | (_, TypeGrant::Every(true)) => false,
        (TypeGrant::Every(true), _) | (TypeGrant::Senders(_), TypeGrant::Every(false)) => true,
        (TypeGrant::Senders(now), TypeGrant::Senders(was)) => now.iter().any(|e| !was.contains(e)),
    }
}

fn type_widens(new: &EventSettings, old: &EventSettings) -> bool {
    let EventSettings {
        enabled,
        allow,
        backfill_days,
        contact_names,
        categories,
    } = new;
    if !enabled {
        return false;
    }
    if !old.enabled {
        return true;
    }
    // An empty allowlist is no allowlist: whatever sender a client names passes.
    let allow_widens = if allow.is_empty() {
        !old.allow.is_empty()
    } else {
        !old.allow.is_empty() && allow.iter().any(|e| !old.allow.contains(e))
    };
    // An empty list is every category.
    let categories_widen = if categories.is_empty() {
        !old.categories.is_empty()
    } else {
        !old.categories.is_empty() && categories.iter().any(|c| !old.categories.contains(c))
    };
    allow_widens
        || categories_widen
        || window(*backfill_days) > window(old.backfill_days)
        || (*contact_names && !old.contact_names)
}

/// The backfill window in days, 0 (the guard off) as wider than any.
fn window(days: u32) -> u64 {
    if days == 0 { u64::MAX } else { u64::from(days) }
}

fn http_widens(new: &HttpSettings, old: &HttpSettings) -> bool {
    let HttpSettings {
        enabled,
        listen,
        allowed_origins,
    } = new;
    *enabled
        && (!old.enabled
            || *listen != old.listen
            || allowed_origins
                .iter()
                .any(|o| !old.allowed_origins.contains(o)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::Category;
    use crate::settings::{ChannelPreset, NotificationKind};

    fn parse(text: &str) -> Settings {
        Settings::parse(text, Path::new("settings.toml")).unwrap()
    }

    /// Mail on for two senders, messages on without an allowlist, the endpoint on.
    const APPLIED: &str = "\
[mail]
enabled = true
allow = [\"acme.com\", \"ana@example.org\"]

[messages]
enabled = true
backfill_days = 7

[http]
enabled = true
listen = \"127.0.0.1:3917\"
allowed_origins = [\"http://localhost:5173\"]
";

    /// `APPLIED` with `change` made.
    fn changed(change: impl FnOnce(&mut Settings)) -> Settings {
        let mut s = parse(APPLIED);
        change(&mut s);
        s
    }

    fn entry(text: &str) -> crate::settings::AllowEntry {
        crate::settings::AllowEntry::parse(text).unwrap()
    }

    #[test]
    fn what_opens_anything_widens() {
        let applied = parse(APPLIED);
        // (what, the settings in force, the candidate)
        let wider: Vec<(&str, Settings, Settings)> = vec![
            (
                "a type turned on",
                changed(|s| s.mail.enabled = false),
                applied.clone(),
            ),
            (
                "http turned on",
                changed(|s| s.http.enabled = false),
                applied.clone(),
            ),
            (
                "names from Contacts turned on",
                applied.clone(),
                changed(|s| s.messages.contact_names = true),
            ),
            (
                "an allowlist emptied",
                applied.clone(),
                changed(|s| s.mail.allow.clear()),
            ),
            (
                "an entry added",
                applied.clone(),
                changed(|s| s.mail.allow.push(entry("bob@example.net"))),
            ),
            (
                "an entry swapped for another",
                applied.clone(),
                changed(|s| s.mail.allow[1] = entry("example.org")),
            ),
            (
                "backfill longer",
                applied.clone(),
                changed(|s| s.messages.backfill_days = 30),
            ),
            (
                "backfill off",
                applied.clone(),
                changed(|s| s.messages.backfill_days = 0),
            ),
            (
                "http moved",
                applied.clone(),
                changed(|s| s.http.listen.set_port(4000)),
            ),
            (
                "an origin added",
                applied.clone(),
                changed(|s| s.http.allowed_origins.push("http://evil.test".into())),
            ),
            (
                "categories emptied (every one)",
                changed(|s| s.mail.categories = vec![Category::Primary]),
                applied.clone(),
            ),
            (
                "a category added",
                changed(|s| s.mail.categories = vec![Category::Primary]),
                changed(|s| s.mail.categories = vec![Category::Primary, Category::Updates]),
            ),
            (
                "a half-written file: the allowlist not yet there",
                applied.clone(),
                parse("[mail]\nenabled = true\n"),
            ),
        ];
        for (what, before, after) in wider {
            assert!(after.widens(&before), "{what}");
        }
    }

    #[test]
    fn what_only_closes_or_reaches_no_agent_does_not() {
        let applied = parse(APPLIED);
        let narrower: Vec<(&str, Settings)> = vec![
            ("nothing changed", applied.clone()),
            ("a type turned off", changed(|s| s.mail.enabled = false)),
            (
                "a type turned off, its allowlist emptied",
                changed(|s| {
                    s.mail.enabled = false;
                    s.mail.allow.clear();
                }),
            ),
            ("an entry removed", changed(|s| s.mail.allow.truncate(1))),
            (
                "an allowlist where there was none",
                changed(|s| s.messages.allow.push(entry("+120255501*"))),
            ),
            (
                "categories where there were none",
                changed(|s| s.mail.categories = vec![Category::Primary]),
            ),
            (
                "backfill shorter",
                changed(|s| s.messages.backfill_days = 1),
            ),
            (
                "names from Contacts turned off",
                changed(|s| s.messages.contact_names = false),
            ),
            ("http off", changed(|s| s.http.enabled = false)),
            (
                "http off, moved, an origin added",
                changed(|s| {
                    s.http.enabled = false;
                    s.http.listen.set_port(4000);
                    s.http.allowed_origins.push("http://evil.test".into());
                }),
            ),
            (
                "an origin removed",
                changed(|s| s.http.allowed_origins.clear()),
            ),
            (
                "notifications",
                changed(|s| {
                    s.notifications.enabled = false;
                    *s.notifications.switch_mut(NotificationKind::StoreRebuilt) = false;
                }),
            ),
            ("update checks off", changed(|s| s.updates.check = false)),
            (
                "a channel preset",
                changed(|s| {
                    s.channel
                        .presets
                        .insert("work".into(), ChannelPreset::default());
                }),
            ),
            // The defaults (an empty file, the moment a truncating writer starts) turn
            // everything off.
            ("everything off", Settings::default()),
        ];
        for (what, candidate) in narrower {
            assert!(!candidate.widens(&applied), "{what}");
        }
        // From the backfill guard off, any window narrows.
        let off = changed(|s| s.messages.backfill_days = 0);
        assert!(!applied.widens(&off));
    }

    #[test]
    fn a_webhook_destination_added_widens_and_one_removed_does_not() {
        let one = changed(|s| s.webhooks.allow = vec!["https://hooks.example.com".into()]);
        let two = changed(|s| {
            s.webhooks.allow = vec![
                "https://hooks.example.com".into(),
                "http://127.0.0.1:8787".into(),
            ];
        });
        assert!(two.widens(&one), "a destination added");
        assert!(!one.widens(&two), "a destination removed");
        assert!(!one.widens(&one), "the same list");
    }

    #[test]
    fn agents_widen_when_one_gets_more() {
        let grant = |access, mail: TypeGrant| AgentGrant {
            identity: "exe:/usr/bin/work".into(),
            name: "work".into(),
            access,
            mail,
            messages: TypeGrant::Every(false),
        };
        let with = |new: NewAgents, g: Option<AgentGrant>| {
            changed(|s| {
                s.agents.new = new;
                if let Some(g) = g {
                    s.agents.known.insert("work-1a2b3c".into(), g);
                }
            })
        };
        let acme = || TypeGrant::Senders(vec![entry("acme.com")]);
        let both = || TypeGrant::Senders(vec![entry("acme.com"), entry("ana@example.org")]);
        let (ask, deny, allow) = (NewAgents::Ask, NewAgents::Deny, NewAgents::Allow);
        // (what, before, after, widens)
        let cases = [
            (
                "new agents allowed",
                with(ask, None),
                with(allow, None),
                true,
            ),
            (
                "new agents asked, not denied",
                with(deny, None),
                with(ask, None),
                true,
            ),
            (
                "new agents denied",
                with(allow, None),
                with(deny, None),
                false,
            ),
            (
                "an agent allowed",
                with(ask, None),
                with(ask, Some(grant(Access::Allow, acme()))),
                true,
            ),
            (
                "an agent recorded as new agents are",
                with(allow, None),
                with(allow, Some(grant(Access::Allow, TypeGrant::Every(true)))),
                false,
            ),
            (
                "an agent denied",
                with(ask, Some(grant(Access::Allow, acme()))),
                with(ask, Some(grant(Access::Deny, acme()))),
                false,
            ),
            (
                "a denied agent allowed again",
                with(ask, Some(grant(Access::Deny, acme()))),
                with(ask, Some(grant(Access::Allow, acme()))),
                true,
            ),
            (
                "a sender added to a grant",
                with(ask, Some(grant(Access::Allow, acme()))),
                with(ask, Some(grant(Access::Allow, both()))),
                true,
            ),
            (
                "a sender removed from a grant",
                with(ask, Some(grant(Access::Allow, both()))),
                with(ask, Some(grant(Access::Allow, acme()))),
                false,
            ),
            (
                "a type's grant widened to every sender",
                with(ask, Some(grant(Access::Allow, acme()))),
                with(ask, Some(grant(Access::Allow, TypeGrant::Every(true)))),
                true,
            ),
            (
                "a denied agent forgotten, new ones asked",
                with(ask, Some(grant(Access::Deny, acme()))),
                with(ask, None),
                true,
            ),
            (
                "an agent forgotten, new ones denied",
                with(deny, Some(grant(Access::Allow, acme()))),
                with(deny, None),
                false,
            ),
        ];
        for (what, before, after, widens) in cases {
            assert_eq!(after.widens(&before), widens, "{what}");
        }
    }
}
