//! The event type names: `events/list`'s `name`s, each occurrence's `name`.

/// A new message in Apple Mail.
pub const MAIL_RECEIVED: &str = "mail.received";
/// A new message in Messages.
pub const MESSAGES_RECEIVED: &str = "messages.received";

/// Every event type, in the order they are listed.
pub const ALL: [&str; 2] = [MAIL_RECEIVED, MESSAGES_RECEIVED];
