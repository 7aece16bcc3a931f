//! A row is data written by strangers: invalid UTF-8, a BLOB where text belongs, a date stored
//! as text or as `1e300` is read leniently, and delivery goes on past it (issue 8.2).

use crate::common::*;
use tidings_core::EventType;
use tidings_fixtures::{
    Addr, MailProfile, MessagesProfile, NewChat, NewMail, NewMessage, Service, apple_ns_from_unix,
};

#[test]
fn bad_values_in_chat_db_are_read_leniently_and_later_messages_still_arrive() {
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let head = w.engine.stamp(EventType::MessagesReceived).unwrap();
    let db = &mut v.messages;
    let h = db.add_handle("+12025550177", Service::IMessage).unwrap();
    let chat = db
        .add_chat(&NewChat {
            identifier: "chat000000000000000777".into(),
            display_name: Some("Renamed".into()),
            group: true,
            service: Service::IMessage,
            participants: vec![h],
        })
        .unwrap();
    let date = Some(apple_ns_from_unix(NOW_UNIX));
    let rows: Vec<i64> = (0..6)
        .map(|i| {
            db.append(&NewMessage::new(h, chat, &format!("m{i}"), date))
                .unwrap()
        })
        .collect();
    let set = |sql: &str, rowid: i64| {
        db_conn(&w).execute(sql, [rowid]).unwrap();
    };
    set(
        "UPDATE message SET guid = CAST(X'41FF42' AS TEXT) WHERE ROWID = ?1",
        rows[0],
    );
    set(
        "UPDATE message SET date = 'yesterday' WHERE ROWID = ?1",
        rows[1],
    );
    set("UPDATE message SET date = 1e300 WHERE ROWID = ?1", rows[2]);
    set(
        "UPDATE message SET guid = X'0102' WHERE ROWID = ?1",
        rows[3],
    );
    // `no\xFE@example.com`: a bad byte in an address a subscription can still name (a
    // subscription is bounded by sender, so a handle no pattern matches is never delivered).
    set(
        "UPDATE handle SET id = CAST(X'6E6FFE406578616D706C652E636F6D' AS TEXT) WHERE ROWID = \
         (SELECT handle_id FROM message WHERE ROWID = ?1)",
        rows[4],
    );
    set(
        "UPDATE chat SET display_name = CAST(X'46616DC3' AS TEXT), style = 'x' WHERE ROWID = \
         (SELECT chat_id FROM chat_message_join WHERE message_id = ?1)",
        rows[4],
    );
    // A good row after the bad ones: the one an agent waits for.
    let last = v
        .messages
        .append(&NewMessage::new(h, chat, "later", date))
        .unwrap();

    let sub = everything(EventType::MessagesReceived);
    // Small batches, so that a bad row sits at every position of a page.
    for max in [1, 2, 100] {
        let (events, _, _) = w.drain(&sub, head_cursor(&head), max);
        let ids: Vec<i64> = events.iter().map(rowid_of).collect();
        let mut want = rows.clone();
        want.push(last);
        assert_eq!(ids, want, "maxEvents {max}");
        assert_eq!(events[0].data["guid"], "A\u{FFFD}B");
        assert_eq!(events[0].event_id, "A\u{FFFD}B");
        assert!(events[1].data["date"].is_null(), "a text date is no date");
        assert!(events[2].data["date"].is_null(), "1e300 is no date");
        assert_eq!(events[3].data["guid"], "");
        assert_eq!(events[3].event_id, format!("rowid-{}", rows[3]));
        assert_eq!(events[4].data["from"]["handle"], "no\u{FFFD}@example.com");
        assert_eq!(events[4].data["chat"]["name"], "Fam\u{FFFD}");
        assert_eq!(events[4].data["chat"]["isGroup"], false);
    }
    assert_eq!(
        w.engine.unreadable_rows(EventType::MessagesReceived),
        0,
        "every row above is readable leniently"
    );
}

fn db_conn(w: &World) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(w.home.chat_db()).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

#[test]
fn bad_values_in_the_envelope_index_are_read_leniently_and_later_mail_still_arrives() {
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let head = w.engine.stamp(EventType::MailReceived).unwrap();
    let inbox: i64 = v
        .mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let rows: Vec<i64> = (0..5)
        .map(|i| {
            v.mail
                .append(&NewMail::new(
                    Addr::new(&format!("bad{i}@example.com"), "Name"),
                    &format!("subject {i}"),
                    inbox,
                    Some(NOW_UNIX),
                ))
                .unwrap()
        })
        .collect();
    let conn = v.mail.connection();
    let set = |sql: &str, rowid: i64| {
        conn.execute(sql, [rowid]).unwrap();
    };
    set(
        "UPDATE subjects SET subject = CAST(X'4869FF' AS TEXT) WHERE ROWID = \
         (SELECT subject FROM messages WHERE ROWID = ?1)",
        rows[0],
    );
    set(
        "UPDATE addresses SET comment = X'FFFE' WHERE ROWID = \
         (SELECT sender FROM messages WHERE ROWID = ?1)",
        rows[1],
    );
    set(
        "UPDATE messages SET date_received = 'soon', date_sent = 1e300 WHERE ROWID = ?1",
        rows[2],
    );
    set(
        "UPDATE messages SET subject_prefix = X'C0', read = 'yes', flagged = 2.5 WHERE ROWID = ?1",
        rows[3],
    );
    set(
        "UPDATE recipients SET type = 'to' WHERE message = ?1",
        rows[4],
    );
    let last = v
        .mail
        .append(&NewMail::new(
            Addr::bare("later@example.com"),
            "later",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();

    let sub = everything(EventType::MailReceived);
    for max in [1, 3, 100] {
        let (events, _, _) = w.drain(&sub, head_cursor(&head), max);
        let ids: Vec<i64> = events.iter().map(rowid_of).collect();
        let mut want = rows.clone();
        want.push(last);
        assert_eq!(ids, want, "maxEvents {max}");
        assert_eq!(events[0].data["subject"], "Hi\u{FFFD}");
        assert_eq!(events[1].data["from"]["name"], "\u{FFFD}\u{FFFD}");
        assert!(events[2].data["dateReceived"].is_null());
        assert!(events[2].data["dateSent"].is_null());
        assert_eq!(events[3].data["subject"], "\u{FFFD}subject 3");
        assert_eq!(events[3].data["flagged"], true);
    }
}

fn head_cursor(s: &tidings_core::Stamp) -> tidings_core::Cursor {
    tidings_core::Cursor {
        identity: s.identity,
        rowid: s.head,
    }
}
