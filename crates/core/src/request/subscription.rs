//! The checked subscription: an enabled type, the client's arguments checked against its
//! schema, and the user's allowlist on top. A subscription no sender bounds is refused.

use serde_json::{Map, Value};

use super::json_kind;
use crate::descriptor::{MAX_ARGUMENT_ITEMS, argument_names, sender_arguments};
use crate::error::RequestError;
use crate::event::{Category, EventType};
use crate::filter::{
    MAX_PATTERN_LEN, MailFilter, MailboxRef, MessagesFilter, PatternError, SenderPattern, Service,
};
use crate::settings::Settings;
use crate::text::{MAX_ECHO_CHARS, sanitize};

/// What a subscription lets through, per type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// A `mail.received` filter.
    Mail(MailFilter),
    /// A `messages.received` filter.
    Messages(MessagesFilter),
}

/// A checked subscription: an enabled type and a filter bounded by sender.
///
/// Built only by [`Subscription::new`], which checks the arguments against the type's schema
/// and refuses a subscription no sender bounds; the fields are private so that no caller can
/// skip that check. The type is the filter's own, so the two cannot disagree.
///
/// ```compile_fail
/// use tidings_core::{EventType, Filter, Subscription, filter::MailFilter};
/// // Unbounded (no sender, no allowlist): refused by `new`, so not buildable by hand either.
/// let _ = Subscription { event_type: EventType::MailReceived, filter: Filter::Mail(MailFilter::default()) };
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    /// Client filter and user allowlist together.
    filter: Filter,
}

/// The enabled event type called `name`: `NotFound` (with the name sanitised for echoing) when
/// no type has that name, Disabled when the user turned it off.
pub fn enabled_type(name: &str, settings: &Settings) -> Result<EventType, RequestError> {
    match EventType::from_name(name) {
        Some(ty) if settings.for_type(ty).enabled => Ok(ty),
        Some(ty) => Err(RequestError::Disabled { event_type: ty }),
        None => Err(RequestError::NotFound {
            name: sanitize(name, MAX_ECHO_CHARS),
        }),
    }
}

impl Subscription {
    /// Resolve `name` among the enabled types and check `arguments` against its schema. The
    /// user's allowlist is put on top of the client's filter.
    pub fn new(
        name: &str,
        arguments: &Map<String, Value>,
        settings: &Settings,
    ) -> Result<Subscription, RequestError> {
        let ty = enabled_type(name, settings)?;
        let allowed = argument_names(ty);
        if let Some(key) = arguments.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(RequestError::invalid(
                format!("arguments.{}", sanitize(key, MAX_ECHO_CHARS)),
                format!(
                    "unknown argument `{}`; {} takes {}",
                    sanitize(key, MAX_ECHO_CHARS),
                    ty.name(),
                    allowed.join(", ")
                ),
            ));
        }
        let allow = settings.allowlist(ty);
        let list = |key: &str| string_list(arguments, key);
        let mut senders = Vec::new();
        for s in list("from")? {
            senders.push(SenderPattern::parse_exact(&s).map_err(|e| pattern_error("from", &e))?);
        }
        for s in list("domains")? {
            senders
                .push(SenderPattern::parse_domain(&s).map_err(|e| pattern_error("domains", &e))?);
        }
        let filter = match ty {
            EventType::MailReceived => {
                let mut mailboxes = Vec::new();
                for s in list("mailboxes")? {
                    mailboxes
                        .push(MailboxRef::parse(&s).map_err(|e| pattern_error("mailboxes", &e))?);
                }
                Filter::Mail(MailFilter {
                    senders,
                    allow,
                    mailboxes,
                    account: string_scalar(arguments, "account")?,
                    categories: categories(ty, arguments, settings)?,
                })
            }
            EventType::MessagesReceived => {
                let chats = list("chats")?;
                let service = match string_scalar(arguments, "service")? {
                    None => None,
                    Some(name) => Some(Service::parse(&name).ok_or_else(|| {
                        let known: Vec<String> = Service::ALL
                            .iter()
                            .map(|s| format!("`{}`", s.as_str()))
                            .collect();
                        RequestError::invalid(
                            "arguments.service",
                            format!(
                                "arguments.service must be one of {}, got `{}`",
                                known.join(", "),
                                sanitize(&name, MAX_ECHO_CHARS)
                            ),
                        )
                    })?),
                };
                Filter::Messages(MessagesFilter {
                    senders,
                    allow,
                    chats,
                    service,
                    categories: categories(ty, arguments, settings)?,
                })
            }
        };
        // Only senders bound a subscription: a chat's members and name are chosen by whoever
        // made it, so `chats` (like `mailboxes`) narrows but never bounds.
        let (senders, allow) = match &filter {
            Filter::Mail(f) => (&f.senders, &f.allow),
            Filter::Messages(f) => (&f.senders, &f.allow),
        };
        if senders.is_empty() && allow.is_empty() {
            let narrows_only = match &filter {
                Filter::Messages(f) if !f.chats.is_empty() => {
                    " (`chats` narrows but does not bound: anyone can add you to a chat or name one)"
                }
                _ => "",
            };
            return Err(RequestError::invalid(
                "arguments",
                format!(
                    "a subscription needs a sender: name {} in arguments, or set an allowlist for {} in Tidings{narrows_only}",
                    sender_arguments(ty).join(" or "),
                    ty.name()
                ),
            ));
        }
        Ok(Subscription { filter })
    }

    /// The event type.
    pub fn event_type(&self) -> EventType {
        match self.filter {
            Filter::Mail(_) => EventType::MailReceived,
            Filter::Messages(_) => EventType::MessagesReceived,
        }
    }

    /// What it lets through: the client's filter with the user's allowlist on top.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }
}

/// The categories a subscription delivers: the client's `categories` (default: every one the
/// store offers) within the user's setting (default: every one). Empty means every category,
/// so no test at all. An intersection with nothing in it is an error naming what the user
/// allows, never a subscription that silently delivers nothing.
fn categories(
    ty: EventType,
    arguments: &Map<String, Value>,
    settings: &Settings,
) -> Result<Vec<Category>, RequestError> {
    let offered = Category::offered(ty);
    let names = |list: &[Category]| {
        list.iter()
            .map(|c| format!("`{}`", c.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut asked = Vec::new();
    for name in string_list(arguments, "categories")? {
        let c = Category::parse(&name)
            .filter(|c| offered.contains(c))
            .ok_or_else(|| {
                RequestError::invalid(
                    "arguments.categories",
                    format!(
                        "arguments.categories: `{}` is not a category of {}; it takes {}",
                        sanitize(&name, MAX_ECHO_CHARS),
                        ty.name(),
                        names(offered)
                    ),
                )
            })?;
        if !asked.contains(&c) {
            asked.push(c);
        }
    }
    let user = &settings.for_type(ty).categories;
    if asked.is_empty() && user.is_empty() {
        return Ok(Vec::new());
    }
    let base: &[Category] = if asked.is_empty() { offered } else { &asked };
    let wanted: Vec<Category> = base
        .iter()
        .copied()
        .filter(|c| user.is_empty() || user.contains(c))
        .collect();
    if wanted.is_empty() {
        let allowed: Vec<Category> = offered
            .iter()
            .copied()
            .filter(|c| user.contains(c))
            .collect();
        let allows = if allowed.is_empty() {
            format!("none of the categories {} has", ty.app_name())
        } else {
            names(&allowed)
        };
        return Err(RequestError::invalid(
            "arguments.categories",
            format!(
                "arguments.categories: Tidings lets only {allows} reach agents for {}; ask for those, or change the categories in Tidings",
                ty.name()
            ),
        ));
    }
    // Every category the store offers is no bound at all: no test in the scan.
    if offered.iter().all(|c| wanted.contains(c)) {
        return Ok(Vec::new());
    }
    Ok(wanted)
}

fn pattern_error(field: &str, e: &PatternError) -> RequestError {
    RequestError::invalid(
        format!("arguments.{field}"),
        format!("arguments.{field}: {e}"),
    )
}

/// The string `arguments[key]`: absent or null is `None`; anything but a non-empty, printable
/// string of at most [`MAX_PATTERN_LEN`] characters is an error naming the field.
fn string_scalar(
    arguments: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, RequestError> {
    let field = format!("arguments.{key}");
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Err(RequestError::invalid(
                    field.clone(),
                    format!("{field} must not be empty; omit it instead"),
                ))
            } else if s.chars().count() > MAX_PATTERN_LEN || s.chars().any(char::is_control) {
                Err(RequestError::invalid(
                    field.clone(),
                    format!("{field} must be at most {MAX_PATTERN_LEN} printable characters"),
                ))
            } else {
                Ok(Some(s.to_owned()))
            }
        }
        Some(other) => Err(RequestError::invalid(
            field.clone(),
            format!("{field} must be a string, got {}", json_kind(other)),
        )),
    }
}

/// The strings of `arguments[key]`: absent is empty; anything but a non-empty array of
/// non-empty strings (at most [`MAX_ARGUMENT_ITEMS`]) is an error naming the field.
fn string_list(arguments: &Map<String, Value>, key: &str) -> Result<Vec<String>, RequestError> {
    let field = format!("arguments.{key}");
    let items = match arguments.get(key) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(RequestError::invalid(
                field.clone(),
                format!(
                    "{field} must be an array of strings, got {}",
                    json_kind(other)
                ),
            ));
        }
    };
    if items.is_empty() {
        return Err(RequestError::invalid(
            field.clone(),
            format!("{field} must not be empty; omit it instead"),
        ));
    }
    if items.len() > MAX_ARGUMENT_ITEMS {
        return Err(RequestError::invalid(
            field.clone(),
            format!(
                "{field} has {} entries; the limit is {MAX_ARGUMENT_ITEMS}",
                items.len()
            ),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            Value::String(_) => Err(RequestError::invalid(
                field.clone(),
                format!("{field}[{i}] must not be empty"),
            )),
            other => Err(RequestError::invalid(
                field.clone(),
                format!("{field}[{i}] must be a string, got {}", json_kind(other)),
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(mail_allow: &[&str]) -> Settings {
        let mut s = Settings::default();
        s.mail.enabled = true;
        s.messages.enabled = true;
        s.mail.allow = mail_allow
            .iter()
            .map(|a| crate::settings::AllowEntry::Sender(SenderPattern::parse_allow(a).unwrap()))
            .collect();
        s
    }

    fn field_of(e: RequestError) -> String {
        match e {
            RequestError::InvalidParams { field, .. } => field,
            other => panic!("expected InvalidParams, got {other:?}"),
        }
    }

    #[test]
    fn unknown_types_are_not_found_and_turned_off_ones_say_so() {
        let mut s = settings(&[]);
        assert!(matches!(
            Subscription::new("nope", &Map::new(), &s),
            Err(RequestError::NotFound { .. })
        ));
        s.mail.enabled = false;
        let args = json!({"domains": ["example.com"]});
        let e = Subscription::new("mail.received", args.as_object().unwrap(), &s).unwrap_err();
        assert!(
            matches!(
                e,
                RequestError::Disabled {
                    event_type: EventType::MailReceived
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "`mail.received` is turned off in Tidings");
    }

    #[test]
    fn a_long_name_or_argument_is_echoed_at_most_max_echo_chars() {
        let s = settings(&["example.com"]);
        let long = "x".repeat(1000);
        let Err(RequestError::NotFound { name }) = Subscription::new(&long, &Map::new(), &s) else {
            panic!("expected NotFound")
        };
        assert_eq!(name.chars().count(), MAX_ECHO_CHARS);
        let args = json!({ long.clone(): ["a@example.com"] });
        let e = Subscription::new("mail.received", args.as_object().unwrap(), &s).unwrap_err();
        let RequestError::InvalidParams { field, message } = e else {
            panic!("expected InvalidParams")
        };
        assert_eq!(field.chars().count(), "arguments.".len() + MAX_ECHO_CHARS);
        assert!(!message.contains(&"x".repeat(MAX_ECHO_CHARS)), "{message}");
    }

    #[test]
    fn a_wrongly_typed_argument_names_the_argument() {
        let s = settings(&[]);
        for (args, field) in [
            (json!({"from": "ana@example.com"}), "arguments.from"),
            (json!({"from": [12345]}), "arguments.from"),
            (json!({"domains": ["not a domain"]}), "arguments.domains"),
            (json!({"domains": []}), "arguments.domains"),
            (
                json!({"from": ["a@example.com"], "colour": ["red"]}),
                "arguments.colour",
            ),
        ] {
            let e = Subscription::new("mail.received", args.as_object().unwrap(), &s).unwrap_err();
            assert_eq!(field_of(e), field, "{args}");
        }
    }

    #[test]
    fn an_empty_filter_without_an_allowlist_is_refused() {
        let s = settings(&[]);
        let e = Subscription::new("mail.received", &Map::new(), &s).unwrap_err();
        assert_eq!(field_of(e), "arguments");
        let mailbox_only = json!({"mailboxes": ["INBOX"]});
        assert!(Subscription::new("mail.received", mailbox_only.as_object().unwrap(), &s).is_err());
    }

    #[test]
    fn an_allowlist_makes_an_empty_filter_valid_and_sits_on_top() {
        let s = settings(&["example.com"]);
        let sub = Subscription::new("mail.received", &Map::new(), &s).unwrap();
        let Filter::Mail(f) = sub.filter() else {
            panic!()
        };
        assert!(f.senders.is_empty());
        assert_eq!(f.allow, vec![SenderPattern::Domain("example.com".into())]);
        let args = json!({"from": ["ana@other.test"]});
        let sub = Subscription::new("mail.received", args.as_object().unwrap(), &s).unwrap();
        let Filter::Mail(f) = sub.filter() else {
            panic!()
        };
        assert_eq!(f.senders.len(), 1);
        assert_eq!(f.allow.len(), 1, "the allowlist still applies");
    }

    #[allow(clippy::needless_pass_by_value)] // tests pass `json!` literals
    fn categories_of(name: &str, args: Value, s: &Settings) -> Result<Vec<Category>, RequestError> {
        let sub = Subscription::new(name, args.as_object().unwrap(), s)?;
        Ok(match sub.filter() {
            Filter::Mail(f) => f.categories.clone(),
            Filter::Messages(f) => f.categories.clone(),
        })
    }

    #[test]
    fn categories_are_the_clients_within_the_users() {
        use Category::*;
        let mut s = settings(&["example.com"]);
        s.messages.allow = s.mail.allow.clone();
        let mail = "mail.received";
        assert_eq!(categories_of(mail, json!({}), &s).unwrap(), []);
        assert_eq!(
            categories_of(
                mail,
                json!({"categories": ["Primary", "updates", "primary"]}),
                &s
            )
            .unwrap(),
            [Primary, Updates]
        );
        let every = json!({"categories": ["primary", "transactions", "updates", "promotions"]});
        assert_eq!(
            categories_of(mail, every, &s).unwrap(),
            [],
            "every one is no bound"
        );
        for bad in [
            json!({"categories": ["social"]}),
            json!({"categories": "primary"}),
        ] {
            let e = categories_of(mail, bad.clone(), &s).unwrap_err();
            let RequestError::InvalidParams { field, message } = e else {
                panic!()
            };
            assert_eq!(field, "arguments.categories", "{bad}");
            if bad["categories"].is_array() {
                assert!(message.contains("`promotions`"), "{message}");
            }
        }
        let e =
            categories_of("messages.received", json!({"categories": ["updates"]}), &s).unwrap_err();
        assert_eq!(
            field_of(e),
            "arguments.categories",
            "Messages has no Updates"
        );

        s.mail.categories = vec![Primary, Transactions];
        assert_eq!(
            categories_of(mail, json!({}), &s).unwrap(),
            [Primary, Transactions]
        );
        assert_eq!(
            categories_of(
                mail,
                json!({"categories": ["transactions", "promotions"]}),
                &s
            )
            .unwrap(),
            [Transactions]
        );
        let e = categories_of(mail, json!({"categories": ["promotions"]}), &s).unwrap_err();
        let RequestError::InvalidParams { field, message } = e else {
            panic!()
        };
        assert_eq!(field, "arguments.categories");
        assert!(message.contains("`primary`, `transactions`"), "{message}");
        s.messages.categories = vec![Updates];
        let e = categories_of("messages.received", json!({}), &s).unwrap_err();
        assert_eq!(
            field_of(e),
            "arguments.categories",
            "a setting Messages cannot meet"
        );
    }

    #[test]
    fn chats_alone_do_not_bound_a_messages_subscription() {
        let s = settings(&[]);
        let args = json!({"chats": ["chat123456789012345678"]});
        let e = Subscription::new("messages.received", args.as_object().unwrap(), &s).unwrap_err();
        let RequestError::InvalidParams { field, message } = e else {
            panic!("expected InvalidParams")
        };
        assert_eq!(field, "arguments");
        assert!(message.contains("`chats` narrows"), "{message}");
        let args = json!({"chats": ["chat123456789012345678"], "from": ["+12025550143"]});
        assert!(Subscription::new("messages.received", args.as_object().unwrap(), &s).is_ok());
    }

    #[test]
    fn service_and_account_are_checked_scalars() {
        let s = settings(&["example.com"]);
        let mut m = s.clone();
        m.messages.allow = s.mail.allow.clone();
        for (name, args, field) in [
            (
                "messages.received",
                json!({"service": ["SMS"]}),
                "arguments.service",
            ),
            (
                "messages.received",
                json!({"service": 3}),
                "arguments.service",
            ),
            (
                "messages.received",
                json!({"service": "Fax"}),
                "arguments.service",
            ),
            (
                "messages.received",
                json!({"service": ""}),
                "arguments.service",
            ),
            (
                "mail.received",
                json!({"account": ["a@example.com"]}),
                "arguments.account",
            ),
            (
                "mail.received",
                json!({"account": true}),
                "arguments.account",
            ),
            (
                "messages.received",
                json!({"account": "a@example.com"}),
                "arguments.account",
            ),
            (
                "mail.received",
                json!({"service": "SMS"}),
                "arguments.service",
            ),
        ] {
            let e = Subscription::new(name, args.as_object().unwrap(), &m).unwrap_err();
            assert_eq!(field_of(e), field, "{name} {args}");
        }
        let args = json!({"service": "sms"});
        let sub = Subscription::new("messages.received", args.as_object().unwrap(), &m).unwrap();
        let Filter::Messages(f) = sub.filter() else {
            panic!()
        };
        assert_eq!(f.service, Some(Service::Sms));
        let args = json!({"account": "ana@example.com"});
        let sub = Subscription::new("mail.received", args.as_object().unwrap(), &m).unwrap();
        let Filter::Mail(f) = sub.filter() else {
            panic!()
        };
        assert_eq!(f.account.as_deref(), Some("ana@example.com"));
    }
}
