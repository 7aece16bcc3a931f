//! chat.db deleted and created again while the daemon is down, on the very inode the old file
//! had (Linux hands a freed inode straight back): an old cursor is a gap after the restart,
//! not a position in the new file (issue 8.1).

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use crate::common;
use crate::common::{Daemon, Writer};
use serde_json::json;
use tidings_fixtures::{MessagesFixture, MessagesProfile, NewChat, NewMessage, Service};

#[test]
fn a_store_recreated_while_down_is_a_gap_after_the_restart() {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let mut daemon = Daemon::start_in(Arc::clone(&tmp));
    let home = daemon.home();
    let mut client = daemon.client();
    let boot = client.result(
        1,
        "events/poll",
        json!({"name": "messages.received", "arguments": {}}),
    );
    let old_cursor = boot["cursor"].as_str().unwrap().to_owned();
    let old_rowid: i64 = old_cursor.rsplit('.').next().unwrap().parse().unwrap();
    drop(client);
    daemon.kill();

    let db = home.chat_db();
    let old_ino = std::fs::metadata(&db).unwrap().ino();
    let mut fresh = None;
    for _ in 0..20 {
        // `create` removes the db, -wal and -shm first.
        let f = MessagesFixture::create(&home, MessagesProfile::Tahoe).unwrap();
        let reused = std::fs::metadata(&db).unwrap().ino() == old_ino;
        fresh = Some(f);
        if reused {
            break;
        }
    }
    let mut fresh = fresh.unwrap();
    eprintln!(
        "inode reused: {}",
        std::fs::metadata(&db).unwrap().ino() == old_ino
    );
    let h = fresh.add_handle("+12025550142", Service::IMessage).unwrap();
    let chat = fresh
        .add_chat(&NewChat {
            identifier: "+12025550142".into(),
            display_name: None,
            group: false,
            service: Service::IMessage,
            participants: vec![h],
        })
        .unwrap();
    // Fresh ROWIDs past the old cursor: without the birth time these would be skipped.
    for i in 0..=old_rowid + 2 {
        fresh
            .append(&NewMessage::new(h, chat, &format!("new {i}"), None))
            .unwrap();
    }
    drop(fresh);

    let daemon = Daemon::start_in(Arc::clone(&tmp));
    let mut client = daemon.client();
    let r = client.result(
        2,
        "events/poll",
        json!({"name": "messages.received", "arguments": {}, "cursor": old_cursor}),
    );
    assert_eq!(r["truncated"], true, "a recreated store is a gap: {r}");
    assert_eq!(r["events"], json!([]), "{r}");
    assert_ne!(r["cursor"], old_cursor.as_str());
    // The fresh cursor is a position in the new file: what comes next is delivered.
    let next = Writer::new(home).message("+12025550142");
    let deadline = std::time::Instant::now() + common::WAIT;
    let mut cursor = r["cursor"].as_str().unwrap().to_owned();
    let mut id = 3;
    loop {
        id += 1;
        let r = client.result(
            id,
            "events/poll",
            json!({"name": "messages.received", "arguments": {}, "cursor": cursor}),
        );
        assert_eq!(r["truncated"], false, "{r}");
        if r["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["eventId"] == next.as_str())
        {
            break;
        }
        cursor = r["cursor"].as_str().unwrap().to_owned();
        assert!(
            std::time::Instant::now() < deadline,
            "never delivered {next}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
