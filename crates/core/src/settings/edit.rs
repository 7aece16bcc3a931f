//! Saving settings into the file as the user left it: only the keys whose values changed are
//! rewritten, so comments (the first run's and the user's own), order and formatting survive
//! a toggle in the app.

use toml_edit::{DocumentMut, Item, Table};

use super::Settings;

/// `new` written into `text`, the file that parsed as `old`: a key whose value differs
/// between the two models is replaced in place (keeping the comments around it) or added to
/// its table, a key `new` no longer has is removed, and everything else is left byte for
/// byte. `None` when `text` is not a TOML document this can edit; the caller then writes the
/// whole file.
pub(super) fn edited(text: &str, old: &Settings, new: &Settings) -> Option<String> {
    let mut doc: DocumentMut = text.parse().ok()?;
    let now: DocumentMut = toml::to_string(new).ok()?.parse().ok()?;
    let was: DocumentMut = toml::to_string(old).ok()?.parse().ok()?;
    merge(doc.as_table_mut(), now.as_table(), was.as_table());
    let mut out = doc.to_string();
    // An emptied last table ends at its header's bracket; a text file ends with a newline.
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// Applies to `target` (the file's table) what changed from `was` to `now` (the same table
/// of the two models, freshly serialized, so equal values print alike).
fn merge(target: &mut Table, now: &Table, was: &Table) {
    for (key, item) in now {
        match (item, was.get(key)) {
            (Item::Table(now_table), Some(Item::Table(was_table))) => {
                match target.get_mut(key) {
                    Some(Item::Table(file_table)) => merge(file_table, now_table, was_table),
                    // Absent (every value its default), or written another way (an inline
                    // table): the whole table, as the model has it.
                    _ => {
                        if now_table.to_string() != was_table.to_string() {
                            target.insert(key, Item::Table(now_table.clone()));
                        }
                    }
                }
            }
            (Item::Value(now_value), Some(Item::Value(was_value)))
                if now_value.to_string().trim() == was_value.to_string().trim() => {}
            (Item::Value(now_value), _) => match target.get_mut(key) {
                Some(Item::Value(file_value)) => {
                    // The comment before the key and after the value stay where they were.
                    let decor = file_value.decor().clone();
                    *file_value = now_value.clone();
                    *file_value.decor_mut() = decor;
                }
                _ => {
                    target.insert(key, item.clone());
                }
            },
            _ => {
                target.insert(key, item.clone());
            }
        }
    }
    let gone: Vec<String> = was
        .iter()
        .filter(|(key, _)| !now.contains_key(key))
        .map(|(key, _)| key.to_owned())
        .collect();
    for key in gone {
        // A table the model no longer writes (emptied, such as `[webhooks]` with its last
        // destination removed) keeps its header and the comments above it, emptied, rather
        // than taking the user's notes with it; an empty table reads as its defaults.
        match target.get_mut(&key) {
            Some(Item::Table(table))
                if table
                    .decor()
                    .prefix()
                    .is_some_and(|p| p.as_str().is_some_and(|p| p.contains('#'))) =>
            {
                table.clear();
            }
            _ => {
                target.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::filter::SenderPattern;
    use crate::settings::{AllowEntry, ChannelPreset, NotificationKind};

    #[test]
    fn an_emptied_table_keeps_the_comments_above_it() {
        for text in [
            "# My notes about webhooks.\n[webhooks]\nallow = [\"https://hooks.example.com\"]\n",
            "[mail]\nenabled = true\n\n# My notes about webhooks.\n[webhooks]\nallow = [\"https://hooks.example.com\"]\n",
        ] {
            let old = Settings::parse(text, Path::new("s.toml")).unwrap();
            let mut new = old.clone();
            new.webhooks.allow.clear();
            let out = edited(text, &old, &new).unwrap();
            assert!(out.contains("# My notes about webhooks."), "{out}");
            assert!(!out.contains("hooks.example.com"), "{out}");
            assert_eq!(
                Settings::parse(&out, Path::new("s.toml")).unwrap(),
                new,
                "{out}"
            );
        }
    }

    /// A file as a user might leave it: the first run's header, their own notes, defaults
    /// left out, keys in their own order.
    const COMMENTED: &str = "\
# My Tidings settings.
# Work mail only, for now.

[mail]
# Acme and my accountant.
allow = [\"acme.com\", \"ana@example.org\"]  # keep this short
enabled = true   # on since March

[messages]
enabled = false
# backfill_days stays at its default.

# The endpoint, for my scripts.
[http]
listen = \"127.0.0.1:3917\"
";

    fn comments(text: &str) -> Vec<&str> {
        text.lines()
            .filter_map(|line| line.find('#').map(|at| line[at..].trim()))
            .collect()
    }

    fn parse(text: &str) -> Settings {
        Settings::parse(text, Path::new("settings.toml")).unwrap()
    }

    /// A named change to the settings.
    type Change = (&'static str, Box<dyn Fn(&mut Settings)>);

    /// Each change the app can make, one after the other, as the app makes them.
    fn app_changes() -> Vec<Change> {
        vec![
            ("mail off", Box::new(|s| s.mail.enabled = false)),
            ("messages on", Box::new(|s| s.messages.enabled = true)),
            (
                "an allowlist entry added",
                Box::new(|s| {
                    let bob = SenderPattern::parse_allow("bob@acme.com").unwrap();
                    s.mail.allow.push(AllowEntry::Sender(bob));
                }),
            ),
            ("an allowlist emptied", Box::new(|s| s.mail.allow.clear())),
            ("backfill days", Box::new(|s| s.messages.backfill_days = 30)),
            ("http on", Box::new(|s| s.http.enabled = true)),
            ("http port", Box::new(|s| s.http.listen.set_port(4000))),
            (
                "a notification switch",
                Box::new(|s| *s.notifications.switch_mut(NotificationKind::StoreRebuilt) = false),
            ),
            (
                "notifications off",
                Box::new(|s| s.notifications.enabled = false),
            ),
            ("update checks off", Box::new(|s| s.updates.check = false)),
            (
                "update checks on again",
                Box::new(|s| s.updates.check = true),
            ),
            (
                "a channel preset",
                Box::new(|s| {
                    s.channel.presets.insert(
                        "work".into(),
                        ChannelPreset {
                            types: vec!["mail.received".into()],
                            from: Vec::new(),
                            domains: vec!["acme.com".into()],
                        },
                    );
                }),
            ),
            (
                "the preset removed",
                Box::new(|s| s.channel.presets.clear()),
            ),
        ]
    }

    #[test]
    fn every_app_change_keeps_every_comment() {
        let mut text = COMMENTED.to_owned();
        let mut model = parse(&text);
        for (what, change) in app_changes() {
            let mut next = model.clone();
            change(&mut next);
            text = edited(&text, &model, &next).unwrap_or_else(|| panic!("{what}: not edited"));
            assert_eq!(
                parse(&text),
                next,
                "{what}: the file says what the model says:\n{text}"
            );
            for comment in comments(COMMENTED) {
                assert!(text.contains(comment), "{what} lost {comment:?}:\n{text}");
            }
            model = next;
        }
    }

    #[test]
    fn the_file_text_edits_a_file_that_parses_and_rewrites_one_that_does_not() {
        let path = Path::new("settings.toml");
        let mut settings = parse(COMMENTED);
        settings.messages.enabled = true;
        let text = settings
            .file_text(Some(COMMENTED.as_bytes()), path)
            .unwrap();
        for comment in comments(COMMENTED) {
            assert!(text.contains(comment), "lost {comment:?}:\n{text}");
        }
        assert_eq!(parse(&text), settings);
        // A file that does not parse holds nothing to keep: written whole, with the header.
        let text = settings.file_text(Some(b"[mail\n"), path).unwrap();
        assert!(text.starts_with("# Tidings settings."), "{text}");
        assert_eq!(parse(&text), settings);
        // Nor does one that is not UTF-8.
        let text = settings.file_text(Some(b"[mail]\xff\n"), path).unwrap();
        assert!(text.starts_with("# Tidings settings."), "{text}");
        assert_eq!(parse(&text), settings);
    }

    #[test]
    fn only_the_changed_key_moves() {
        let old = parse(COMMENTED);
        let mut new = old.clone();
        new.mail.enabled = false;
        let text = edited(COMMENTED, &old, &new).unwrap();
        // One line differs, and only in its value.
        let changed: Vec<(&str, &str)> = COMMENTED
            .lines()
            .zip(text.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(
            changed,
            [(
                "enabled = true   # on since March",
                "enabled = false   # on since March"
            )]
        );
        assert_eq!(COMMENTED.lines().count(), text.lines().count());
        // Nothing changed, nothing written differently.
        assert_eq!(edited(COMMENTED, &old, &old).unwrap(), COMMENTED);
    }

    #[test]
    fn a_default_left_out_is_added_only_when_it_changes() {
        let old = parse(COMMENTED);
        let mut new = old.clone();
        new.notifications.first_subscription = false;
        let text = edited(COMMENTED, &old, &new).unwrap();
        assert!(text.contains("first_subscription = false"), "{text}");
        // The defaults the user left out of [mail] and [messages] stay out.
        assert!(!text.contains("backfill_days ="), "{text}");
        assert_eq!(parse(&text), new);
    }
}
