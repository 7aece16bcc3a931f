//! `[webhooks]`: the destinations events may be posted to. A webhook subscription's callback
//! URL is accepted only if its origin is on this list: where events may leave the Mac is the
//! user's decision, never an agent's (docs/decisions/webhooks.md).

use serde::{Deserialize, Deserializer, Serialize};
use tidings_webhook::Origin;

/// The most destinations the list holds; a longer list is refused naming the limit.
pub const MAX_DESTINATIONS: usize = 64;

/// The user's list of webhook destinations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    /// Origins (`https://hooks.example.com`, `http://127.0.0.1:8787`), each normalised as
    /// [`Origin`] writes it: lower-case host, default port left out. `http://` only for a
    /// loopback host.
    #[serde(deserialize_with = "origins")]
    pub allow: Vec<String>,
}

impl WebhookSettings {
    /// No destination: the table is left out of a saved file.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
    }

    /// Whether `origin` is on the list.
    pub fn allows(&self, origin: &Origin) -> bool {
        let origin = origin.to_string();
        self.allow.contains(&origin)
    }

    /// Add `text` to the list (normalised); `Ok(false)` when it was already there.
    pub fn add(&mut self, text: &str) -> Result<bool, String> {
        let origin = Origin::parse_entry(text)
            .map_err(|e| e.to_string())?
            .to_string();
        if self.allow.contains(&origin) {
            return Ok(false);
        }
        if self.allow.len() >= MAX_DESTINATIONS {
            return Err(format!(
                "[webhooks] allow already lists {MAX_DESTINATIONS} destinations, the most \
                 allowed; remove one first"
            ));
        }
        self.allow.push(origin);
        Ok(true)
    }

    /// Take `text` off the list; whether it was there. `text` is normalised first, so
    /// `https://Hooks.example.com:443` removes `https://hooks.example.com`.
    pub fn remove(&mut self, text: &str) -> bool {
        let key = Origin::parse_entry(text).map_or_else(|_| text.to_owned(), |o| o.to_string());
        let before = self.allow.len();
        self.allow.retain(|o| *o != key);
        self.allow.len() != before
    }
}

/// Each entry parsed as an origin and written back normalised; a bad one names itself and the
/// rule (the parser adds the line).
fn origins<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let raw = Vec::<String>::deserialize(d)?;
    if raw.len() > MAX_DESTINATIONS {
        return Err(serde::de::Error::custom(format!(
            "[webhooks] allow lists {} destinations, more than the {MAX_DESTINATIONS} allowed",
            raw.len()
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for text in raw {
        let origin = Origin::parse_entry(&text).map_err(|e| {
            serde::de::Error::custom(format!(
                "[webhooks] allow: `{}`: {e}",
                crate::text::sanitize(&text, 120)
            ))
        })?;
        let origin = origin.to_string();
        if !out.contains(&origin) {
            out.push(origin);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::Settings;

    fn parse(text: &str) -> Result<Settings, String> {
        Settings::parse(text, Path::new("settings.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn entries_are_normalised_and_duplicates_dropped() {
        let s = parse(
            "[webhooks]\nallow = [\"https://Hooks.Example.com:443/\", \"http://127.0.0.1:8787\", \
             \"https://hooks.example.com\"]\n",
        )
        .unwrap();
        assert_eq!(
            s.webhooks.allow,
            vec!["https://hooks.example.com", "http://127.0.0.1:8787"]
        );
    }

    #[test]
    fn plain_http_to_another_machine_is_refused_naming_the_entry() {
        let e = parse("[webhooks]\nallow = [\"http://hooks.example.com\"]\n").unwrap_err();
        assert!(e.contains("http://hooks.example.com"), "{e}");
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn a_path_is_not_an_origin() {
        let e = parse("[webhooks]\nallow = [\"https://hooks.example.com/x\"]\n").unwrap_err();
        assert!(e.contains("hooks.example.com/x"), "{e}");
    }

    #[test]
    fn add_and_remove_normalise() {
        let mut w = super::WebhookSettings::default();
        assert_eq!(w.add("HTTPS://hooks.example.com:443"), Ok(true));
        assert_eq!(w.add("https://hooks.example.com"), Ok(false));
        assert!(w.add("http://hooks.example.com").is_err());
        assert!(w.remove("https://HOOKS.example.com/"));
        assert!(w.is_empty());
    }
}
