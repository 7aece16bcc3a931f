//! The outside writer: appends rows to the demo stores as Mail and Messages would.

use std::sync::atomic::{AtomicU64, Ordering};

use tidings_fixtures::{
    MacHome, MailFixture, MessagesFixture, NewChat, NewMail, NewMessage, Service,
};

/// Unique ids for rows the tests write.
fn unique(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{}x{nanos}", N.fetch_add(1, Ordering::SeqCst))
}

/// The outside writer: opens the demo stores as Mail and Messages would and appends rows,
/// which stay in `-wal` (the fixtures never checkpoint on their own).
pub struct Writer {
    home: MacHome,
}

impl Writer {
    pub fn new(home: MacHome) -> Writer {
        Writer { home }
    }

    /// Appends a mail from `from` into a plain IMAP INBOX; returns its eventId (Message-ID).
    pub fn mail(&self, from: &str) -> String {
        let mut mail = MailFixture::open(&self.home).unwrap();
        self.mail_with(&mut mail, from)
    }

    /// The same with `subject`, for a test that looks for the mail where only its envelope
    /// shows (a host's request to its model).
    pub fn mail_titled(&self, from: &str, subject: &str) -> String {
        let mut mail = MailFixture::open(&self.home).unwrap();
        self.mail_titled_with(&mut mail, from, subject)
    }

    /// The same on a writer the caller holds (e.g. after a rebuild).
    pub fn mail_with(&self, mail: &mut MailFixture, from: &str) -> String {
        self.mail_titled_with(mail, from, "Test subject")
    }

    #[allow(clippy::unused_self)] // a method so every write goes through the same `Writer`
    fn mail_titled_with(&self, mail: &mut MailFixture, from: &str, subject: &str) -> String {
        let inbox: i64 = mail
            .connection()
            .query_row(
                "SELECT m.ROWID FROM mailboxes m WHERE m.url LIKE '%/INBOX' AND NOT EXISTS \
                 (SELECT 1 FROM mailboxes g WHERE g.url = \
                  substr(m.url, 1, length(m.url) - 5) || '%5BGmail%5D/All%20Mail') \
                 ORDER BY m.ROWID LIMIT 1",
                (),
                |r| r.get(0),
            )
            .unwrap();
        let domain = from.rsplit('@').next().unwrap();
        let id = format!("<{}@{domain}>", unique("test."));
        let now = tidings_fixtures::dates::now_unix();
        let mut new = NewMail::new(
            tidings_fixtures::Addr::new(from, "Test Sender"),
            subject,
            inbox,
            Some(now),
        );
        new.message_id_header = Some(id.clone());
        new.to = vec![tidings_fixtures::Addr::bare("demo@example.com")];
        mail.append(&new).unwrap();
        id
    }

    /// Appends an incoming iMessage from `handle`; returns its eventId (guid).
    pub fn message(&self, handle: &str) -> String {
        let mut db = MessagesFixture::open(&self.home).unwrap();
        let handle_row = db.add_handle(handle, Service::IMessage).unwrap();
        let chat = db
            .add_chat(&NewChat {
                identifier: handle.to_string(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle_row],
            })
            .unwrap();
        let guid = unique("TEST-GUID-");
        let date = tidings_fixtures::apple_ns_from_unix(tidings_fixtures::dates::now_unix());
        let mut new = NewMessage::new(handle_row, chat, "hello from the tests", Some(date));
        new.guid = Some(guid.clone());
        db.append(&new).unwrap();
        guid
    }
}
