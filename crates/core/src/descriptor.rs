//! The event descriptors served by `events/list`: name, description, delivery modes and the
//! argument and payload schemas.
//!
//! The input schema depends on the user's allowlist: without one, a client must name its
//! senders, and the schema says so with `anyOf`; with one, an empty filter is valid.

use serde_json::{Value, json};

use crate::event::{Category, EventType};
use crate::filter::Service;
use crate::settings::Settings;

/// How many entries an argument array may hold. Lists reach SQL as one bound JSON parameter,
/// so this bounds the work of one request, not `SQLite`'s expression depth; the 1 MiB frame
/// limit bounds it too.
pub const MAX_ARGUMENT_ITEMS: usize = 10_000;

/// At most this many To and this many Cc recipients go into a `mail.received` payload (the
/// schema's `maxItems`); a message to a large list names only the first ones.
pub const MAX_RECIPIENTS: usize = 50;

fn string_array(description: &str) -> Value {
    json!({
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": crate::filter::MAX_PATTERN_LEN},
        "minItems": 1,
        "maxItems": MAX_ARGUMENT_ITEMS,
        "description": description,
    })
}

/// The `categories` argument of `ty`: the categories its store files messages under.
fn categories_argument(ty: EventType) -> Value {
    let names: Vec<&str> = Category::offered(ty).iter().map(|c| c.name()).collect();
    let description = match ty {
        EventType::MailReceived => {
            "Only mail Mail files under these categories (its Primary, Transactions, Updates and Promotions views; the events' `category`). Mail stores before macOS 15, and mail not classified yet, carry no category: they count as `primary`. Tidings may allow fewer; asking only for categories it does not allow is an error that names the ones it does. Narrows, never widens, the senders."
        }
        EventType::MessagesReceived => {
            "Only messages Messages files under these categories: `transactions` and `promotions` are the SMS filter's lists (the events' `category`); every other message, and every message on a Mac whose chat.db has no such lists, counts as `primary`. Tidings may allow fewer; asking only for categories it does not allow is an error that names the ones it does. Narrows, never widens, the senders."
        }
    };
    json!({
        "type": "array",
        "items": {"type": "string", "enum": names},
        "minItems": 1,
        "uniqueItems": true,
        "description": description,
    })
}

/// The argument names each type accepts, in schema order.
pub fn argument_names(ty: EventType) -> &'static [&'static str] {
    match ty {
        EventType::MailReceived => &["from", "domains", "mailboxes", "account", "categories"],
        EventType::MessagesReceived => &["from", "domains", "chats", "service", "categories"],
    }
}

/// The arguments that bound a subscription by sender when no allowlist is set.
pub fn sender_arguments(ty: EventType) -> &'static [&'static str] {
    match ty {
        EventType::MailReceived | EventType::MessagesReceived => &["from", "domains"],
    }
}

/// The `inputSchema` of `ty` under `settings`, without examples drawn from the stores.
pub fn input_schema(ty: EventType, settings: &Settings) -> Value {
    input_schema_with(ty, settings, &[])
}

/// The `inputSchema` of `ty` under `settings`; `accounts` (Mail's account addresses, when
/// known) become examples of `account`.
pub fn input_schema_with(ty: EventType, settings: &Settings, accounts: &[String]) -> Value {
    let mut schema = match ty {
        EventType::MailReceived => {
            let mut account = json!({
                "type": "string",
                "minLength": 1,
                "maxLength": crate::filter::MAX_PATTERN_LEN,
                "description": "One account, by its address as Mail shows it (the events' `account`) or its UUID. Narrows, never widens, the senders.",
            });
            if !accounts.is_empty() {
                account["examples"] = json!(accounts);
            }
            json!({
                "type": "object",
                "properties": {
                    "from": string_array("Sender addresses, matched case-insensitively."),
                    "domains": string_array("Sender domains; `example.com` also matches `eu.example.com`."),
                    "mailboxes": string_array(
                        "Mailbox paths such as `INBOX` or `Clients/Acme`, optionally qualified by account as `account:path` (the account's address or UUID). Narrows, never widens, the senders."),
                    "account": account,
                    "categories": categories_argument(ty),
                },
                "additionalProperties": false,
                "examples": [
                    {"domains": ["example.com"]},
                    {"from": ["ana@example.com"], "mailboxes": ["INBOX"]},
                ],
            })
        }
        EventType::MessagesReceived => json!({
            "type": "object",
            "properties": {
                "from": string_array("Sender handles: E.164 phone numbers (`+12025550143`) or email addresses."),
                "domains": string_array("Domains of email handles; `example.com` also matches `eu.example.com`."),
                "chats": string_array("Chats by their stable identifier, as events report it in `chat.identifier` (`chat123…` for a group, `+1202…` or an address one-to-one), or by guid; never by display name, which whoever made the group chose. Narrows, never widens, the senders."),
                "service": {
                    "type": "string",
                    "enum": Service::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                    "description": "Only messages sent over this service (the events' `from.service`).",
                },
                "categories": categories_argument(ty),
            },
            "additionalProperties": false,
            "examples": [
                {"from": ["+12025550143"]},
                {"from": ["+12025550143", "+12025550101"], "chats": ["chat123456789012345678"]},
                {"domains": ["example.com"], "service": "iMessage"},
            ],
        }),
    };
    if settings.for_type(ty).allow.is_empty() {
        let any_of: Vec<Value> = sender_arguments(ty)
            .iter()
            .map(|a| json!({"required": [a]}))
            .collect();
        schema["anyOf"] = Value::Array(any_of);
    }
    schema
}

fn person(kind: &str) -> Value {
    json!({
        "type": "object",
        "description": kind,
        "properties": {
            "address": {"type": "string"},
            "name": {"type": ["string", "null"]},
        },
        "required": ["address", "name"],
    })
}

/// `from.contact`'s schema: only the sender is named, never a recipient.
fn contact() -> Value {
    json!({
        "type": "string",
        "description": "The name on the user's Contacts card for this sender, present only when the user turned on names from Contacts for this type and a card holds the sender's handle; absent otherwise. The user's own label, cleaned and capped like any name.",
    })
}

/// The `payloadSchema` of `ty`: the envelope only, never a body.
pub fn payload_schema(ty: EventType) -> Value {
    let date =
        |d: &str| json!({"type": ["string", "null"], "format": "date-time", "description": d});
    // Only the sender is named from Contacts.
    let mut sender = person("The sender.");
    sender["properties"]["contact"] = contact();
    match ty {
        EventType::MailReceived => json!({
            "type": "object",
            "properties": {
                "messageId": {"type": ["string", "null"], "description": "The Message-ID header, when the index has it."},
                "from": sender,
                "to": {"type": "array", "items": person("A To recipient."), "maxItems": MAX_RECIPIENTS},
                "cc": {"type": "array", "items": person("A Cc recipient."), "maxItems": MAX_RECIPIENTS},
                "subject": {"type": "string", "description": "Untrusted text written by the sender."},
                "mailbox": {"type": ["string", "null"], "description": "Mailbox path, e.g. `INBOX`."},
                "account": {"type": ["string", "null"], "description": "The account's name (usually its address)."},
                "dateReceived": date("When Mail received it; null when the index has no date."),
                "dateSent": date("The Date header; null when absent."),
                "read": {"type": "boolean"},
                "flagged": {"type": "boolean"},
                "attachmentCount": {"type": "integer", "minimum": 0},
                "category": {
                    "type": "string",
                    "enum": Category::ALL.iter().map(|c| c.name()).collect::<Vec<_>>(),
                    "description": "Where Mail files it: its own category, Primary for what it calls high impact, or the category you chose for the sender. Absent when Mail has not classified it (yet) or the store predates categories (before macOS 15).",
                },
                "priority": {
                    "type": "string",
                    "enum": ["urgent", "high"],
                    "description": "`urgent` when Mail marks it urgent, else `high` when Mail calls it high impact; absent otherwise.",
                },
            },
            "required": ["messageId", "from", "to", "cc", "subject", "mailbox", "account",
                         "dateReceived", "dateSent", "read", "flagged", "attachmentCount"],
        }),
        EventType::MessagesReceived => json!({
            "type": "object",
            "properties": {
                "guid": {"type": "string"},
                "from": {
                    "type": "object",
                    "properties": {
                        "handle": {"type": ["string", "null"], "description": "E.164 number or email."},
                        "service": {"type": ["string", "null"], "description": "`iMessage`, `SMS`, `RCS`…"},
                        "contact": contact(),
                    },
                    "required": ["handle", "service"],
                },
                "chat": {
                    "type": "object",
                    "properties": {
                        "identifier": {"type": ["string", "null"]},
                        "name": {"type": ["string", "null"], "description": "Untrusted text: a group's name."},
                        "isGroup": {"type": "boolean"},
                    },
                    "required": ["identifier", "name", "isGroup"],
                },
                "date": date("When it was sent; null when the row has no date."),
                "attachmentCount": {"type": "integer", "minimum": 0},
                "isReply": {"type": "boolean", "description": "An inline reply in a thread."},
                "category": {
                    "type": "string",
                    "enum": [Category::Transactions.name(), Category::Promotions.name()],
                    "description": "The SMS filter's list it is in (macOS 27, or a chat Messages files there); absent otherwise.",
                },
            },
            "required": ["guid", "from", "chat", "date", "attachmentCount", "isReply"],
        }),
    }
}

/// The `EventDescriptor` of `ty` under `settings`.
pub fn descriptor(ty: EventType, settings: &Settings) -> Value {
    descriptor_with(ty, settings, &[])
}

/// The `EventDescriptor` of `ty` under `settings`, with Mail's known `accounts` as examples.
pub fn descriptor_with(ty: EventType, settings: &Settings, accounts: &[String]) -> Value {
    let description = match ty {
        EventType::MailReceived => {
            "A new message arrived in Apple Mail (any account). Envelope only: sender, recipients, subject, mailbox, dates and flags; never the body. One event per message, even when labels put it in several mailboxes."
        }
        EventType::MessagesReceived => {
            "A new incoming message arrived in Messages (iMessage, SMS, RCS). Envelope only: sender handle, service, chat and date; never the text. Tapbacks, edits, unsends, group events and your own messages are not events."
        }
    };
    json!({
        "name": ty.name(),
        "description": description,
        "delivery": ["poll", "push", "webhook"],
        "inputSchema": input_schema_with(ty, settings, accounts),
        "payloadSchema": payload_schema(ty),
    })
}

/// The descriptors of the enabled types, in list order.
pub fn enabled_descriptors(settings: &Settings) -> Vec<Value> {
    enabled_descriptors_with(settings, &[])
}

/// The descriptors of the enabled types, with Mail's known `accounts` as examples of
/// `account` ([`crate::Engine::mail_accounts`]).
pub fn enabled_descriptors_with(settings: &Settings, accounts: &[String]) -> Vec<Value> {
    EventType::ALL
        .into_iter()
        .filter(|t| settings.for_type(*t).enabled)
        .map(|t| descriptor_with(t, settings, accounts))
        .collect()
}
