//! The outside writer: appends rows to a demo home's stores as Mail and Messages do, on one
//! connection held across commits.

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::Connection;
use tidings_fixtures::{
    Addr, MacHome, MailFixture, MessagesFixture, NewChat, NewMail, NewMessage, Service,
    apple_ns_from_unix, dates::now_unix, sqlite_uri,
};

/// Which store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    Mail,
    Messages,
}

impl Store {
    pub fn event_type(self) -> &'static str {
        match self {
            Store::Mail => "mail.received",
            Store::Messages => "messages.received",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Store::Mail => "mail",
            Store::Messages => "messages",
        }
    }

    /// A read-only connection on the store, as a bare reader would open it.
    pub fn reader(self, home: &Path) -> Result<Connection> {
        let mac = MacHome::new(home);
        let path = match self {
            Store::Mail => mac.envelope_index(),
            Store::Messages => mac.chat_db(),
        };
        Connection::open_with_flags(
            sqlite_uri(&path, "mode=ro"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .with_context(|| format!("open {} read-only", path.display()))
    }

    /// The store's table of messages.
    pub fn table(self) -> &'static str {
        match self {
            Store::Mail => "messages",
            Store::Messages => "message",
        }
    }
}

/// A held writer on one store.
pub enum Writer {
    Mail {
        fixture: MailFixture,
        inbox: i64,
    },
    Messages {
        fixture: MessagesFixture,
        handle: i64,
        chat: i64,
    },
}

/// The sender every bench row comes from: inside the demo allowlist.
pub const MAIL_FROM: &str = "bench@example.com";
const HANDLE: &str = "+12025550142";

impl Writer {
    pub fn open(home: &Path, store: Store) -> Result<Writer> {
        let mac = MacHome::new(home);
        Ok(match store {
            Store::Mail => {
                let fixture = MailFixture::open(&mac)?;
                // A plain IMAP INBOX (not one a Gmail account keeps only as a label).
                let inbox = fixture.connection().query_row(
                    "SELECT m.ROWID FROM mailboxes m WHERE m.url LIKE '%/INBOX' AND NOT EXISTS \
                     (SELECT 1 FROM mailboxes g WHERE g.url = \
                      substr(m.url, 1, length(m.url) - 5) || '%5BGmail%5D/All%20Mail') \
                     ORDER BY m.ROWID LIMIT 1",
                    (),
                    |r| r.get(0),
                )?;
                Writer::Mail { fixture, inbox }
            }
            Store::Messages => {
                let mut fixture = MessagesFixture::open(&mac)?;
                let handle = fixture.add_handle(HANDLE, Service::IMessage)?;
                let chat = fixture.add_chat(&NewChat {
                    identifier: HANDLE.to_owned(),
                    display_name: None,
                    group: false,
                    service: Service::IMessage,
                    participants: vec![handle],
                })?;
                Writer::Messages {
                    fixture,
                    handle,
                    chat,
                }
            }
        })
    }

    /// The event id a row appended as `key` gets: its Message-ID or its guid.
    pub fn event_id(&self, key: &str) -> String {
        match self {
            Writer::Mail { .. } => format!("<{key}@example.com>"),
            Writer::Messages { .. } => key.to_owned(),
        }
    }

    /// Appends one row (one commit); returns its ROWID.
    pub fn append(&mut self, key: &str) -> Result<i64> {
        let event_id = self.event_id(key);
        Ok(match self {
            Writer::Mail { fixture, inbox } => {
                let mut m = NewMail::new(
                    Addr::new(MAIL_FROM, "Bench"),
                    "bench",
                    *inbox,
                    Some(now_unix()),
                );
                m.message_id_header = Some(event_id);
                fixture.append(&m)?
            }
            Writer::Messages {
                fixture,
                handle,
                chat,
            } => {
                let mut m = NewMessage::new(
                    *handle,
                    *chat,
                    "bench",
                    Some(apple_ns_from_unix(now_unix())),
                );
                m.guid = Some(event_id);
                fixture.append(&m)?
            }
        })
    }

    /// Appends one mail per key in one commit (mail only).
    pub fn append_mails(&mut self, keys: &[String]) -> Result<()> {
        let Writer::Mail { fixture, inbox } = self else {
            anyhow::bail!("append_mails writes mail only");
        };
        let mails: Vec<NewMail> = keys
            .iter()
            .map(|key| {
                let mut m = NewMail::new(
                    Addr::new(MAIL_FROM, "Bench"),
                    "bench",
                    *inbox,
                    Some(now_unix()),
                );
                m.message_id_header = Some(format!("<{key}@example.com>"));
                m
            })
            .collect();
        fixture.append_all(&mails)?;
        Ok(())
    }

    pub fn connection(&self) -> &Connection {
        match self {
            Writer::Mail { fixture, .. } => fixture.connection(),
            Writer::Messages { fixture, .. } => fixture.connection(),
        }
    }
}
